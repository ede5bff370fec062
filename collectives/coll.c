/* coll.c: planning collectives onto a group's topology dimensions and
 * running them as per-member state machines over net_send().
 *
 * Planning (coll_start): the members' coordinates (topo_rank_coord) are
 * compressed per dimension; when the group is a full Cartesian sub-grid of
 * the topology (every combination of the used coordinates present exactly
 * once), all-reduce, reduce-scatter and all-gather are composed per grid
 * dimension (hierarchical plan); every other case runs one flat phase over
 * the whole group, in grid order (or communicator order when the group is
 * not a sub-grid), on the real routes.
 *
 * Running: the collective's bytes are cut into chunks; each (member,
 * chunk) pair is a slot that walks the plan's steps in order.  Chunks
 * pipeline across dimensions with one active chunk per dimension and
 * member (see phase_gate_open); under the NCCL model they pipeline step by
 * step instead, one behind the other with NCCL's FIFO window
 * (coll_run.step_pipe); a slot finishes step k once its own sends
 * of step k have arrived and it has received every transfer addressed to
 * its step k (plus, optionally, the local reduction time).  Memory:
 * O(members * chunks * steps) 16-bit receive counters per collective
 * (about 1 MiB for a 512-member ring all-reduce).  Work: O(1) amortised per
 * transfer plus O(q) per step start for algorithms that emit q transfers.
 * Flat rings on tier A take the ring recurrence instead ("Ring
 * recurrence" below: the same times, O(q) events per collective, no
 * counters).
 */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#include "collectives/coll_internal.h"
#include "collectives/libraries/coll_library_internal.h"
#include "collectives/libraries/coll_nccl.h"

typedef struct {
  coll_prim prim;
  coll_algo algo;
  int g;              /* grid dimension, or -1 for the whole group */
  uint64_t div;       /* phase bytes = chunk bytes / div */
  uint32_t step0, n_steps;
} coll_phase;

enum { SLOT_IDLE = 0, SLOT_RUNNING, SLOT_REDUCING, SLOT_REDUCED };

typedef struct {
  sim_time_ps local_done; /* library: the member's engine has sent its writes of the step */
  uint32_t cur;       /* current global step */
  uint32_t pend;      /* sends of the current step still in flight */
  uint32_t need;      /* receives the current step waits for */
  uint8_t state;
  uint8_t moved;      /* the current step sends or receives something */
  uint64_t red;       /* bytes reduced locally in the current step */
} coll_slot;

typedef struct coll_run coll_run;
struct coll_run {
  coll_rt *lib;
  coll_run *prev, *next;
  coll_prim prim;
  int n;
  int *ranks;
  uint64_t *splits;
  int root_member;
  uint64_t bytes;     /* D of the whole collective (see coll_sched.bytes) */
  coll_done_fn done;
  void *ctx;
  uint64_t cookie;
  int n_g;
  int gsize[COLL_MAX_DIMS], gstride[COLL_MAX_DIMS], gtopo[COLL_MAX_DIMS];
  int *gidx, *gmember;
  topo_kind flat_kind;
  int n_phases;
  coll_phase ph[2 * COLL_MAX_DIMS];
  uint32_t n_steps;
  int n_chunks, lanes;
  coll_slot *slot;
  uint16_t *recv;     /* n_slots * n_steps */
  int *chunks_left;
  int members_left;
  coll_xfer *scratch; /* 2 * n */
  /* Library model (NULL for nccl): per member, held until its
   * registration/staging/SDMA pre-delay is over; start time. */
  uint8_t *held;
  sim_time_ps *t_begin;
  uint64_t copy_out;  /* staging copy-out bytes per member */
  uint64_t *copy_out_m; /* all-to-allv: each member's own copy-out bytes (its receives), else NULL */
  gboolean core_term; /* the core makespan is part of fan-out steps (doc/libraries.md §2) */
  /* Library operator semantics (lib kind != nccl, see library_step): */
  gboolean libmode;
  gboolean p2p;       /* a library point-to-point (coll_p2p_start): flat, direct, one transfer */
  wisp_bw_Bps beta_ring_min; /* slowest hop of the ring in communicator order */
  int sync_mult;      /* sigma_sig per step, once per staging round */
  /* Interference (coll_rt_set_slowdown_hook; NULL when off): per member
   * 0 before its flight, 1 while counted on its rank, 2 after; and what
   * one member adds on its rank. */
  uint8_t *ovl_on;
  int ovl_cores, ovl_sdma;
  uint64_t ovl_rate;  /* staging bytes/s through HBM */
  /* NCCL model (library nccl, coll_nccl.h; FALSE for every other
   * library): the tuner's choice, the byte inflation of the protocol's
   * efficiency per tier, the per-step latency of each phase (paid by the
   * first chunk of every lane: the pipeline head) and, for multi-node
   * rings, one member order per lane (rail). */
  gboolean nccl;
  int nalgo, proto;
  double inv_eff_intra, inv_eff_inter;
  sim_time_ps step_extra[2 * COLL_MAX_DIMS];
  coll_algo force_flat, force_dim0, force_outer; /* forced algorithms: flat plan, dimension 0, outer dimensions */
  gboolean nvls_paired; /* NVLS-tree: its NVLS RS and AG share the load (coll_sched.nvls_paired) */
  int *lperm, *linv;  /* lanes * n: position -> member and member -> position, or NULL */
  sim_time_ps t_base; /* base latency and kernel launch before the first step */
  double hop_us;      /* the tuner's per-hop latency, spread over the plan's steps */
  /* Step pipeline (nccl): chunk c runs step k once chunk c-lanes of the
   * same member has finished step k and the sends of step k of chunk
   * c - COLL_NCCL_FIFO_SLOTS * lanes have landed (NCCL's connections are
   * FIFOs of NCCL_STEPS slices), so chunks flow through a phase behind
   * each other; sent: n_slots * n_steps sends in flight per (slot, step).
   * pipe_bytes: the pipelined unit of a flat plan (NCCL's slice times its
   * channels), 0 = one piece per lane. */
  gboolean step_pipe;
  uint16_t *sent;
  uint64_t pipe_bytes;
  int fifo_chunks;    /* chunks of a lane in flight per step: NCCL_STEPS slices' worth */
  /* Ring recurrence (ring_fast_begin; NULL / 0 when the run is not on
   * it): its start, its claim on the links, per member the done time and
   * event, and per ring position the hop to the next position. */
  sim_time_ps t0;
  uint32_t claim;
  sim_time_ps *fin;
  sim_event_id *done_ev;
  struct ring_hop *hop;
};

typedef struct {
  coll_run *run;
  uint32_t src_slot, dst_slot, dst_step;
  uint32_t src_step;      /* nccl step pipeline: the sender's step */
  uint32_t next_free;
  sim_time_ps deliver_at; /* library: not before the engine has sent it (+ route latency) */
} coll_xrec;

struct coll_rt {
  sim_engine *sim;
  net *n;
  const topo *t;
  coll_policy pol;
  coll_run *runs;       /* unfinished collectives */
  GHashTable *twohop;   /* unfinished two-hop all-to-alls (coll_twohop.c), freed with the runtime */
  coll_xrec *xr;        /* transfer records; index = net cookie */
  uint32_t n_xr, cap_xr, free_xr;
  GArray *work;         /* slots to advance */
  gboolean kicking;
  coll_library_reg *reg;      /* registration state (JIT/ROA), else NULL */
  coll_library_stats lstats;  /* library statistics */
  /* Library engines: per rank two FIFO lanes (UB, SIO), the time each has
   * served everything queued on it; NULL for nccl. */
  sim_time_ps *eng_free;
  /* Core partitioning (reference §6, doc/libraries.md §2): the tiers of
   * every rank pair (created at the first library collective), the
   * partitions computed so far by shape (the library's policy cache), the
   * time each rank's communication cores are busy until, and the number
   * of collectives started (a cache entry's birth). */
  coll_library_fabric *fab;
  GHashTable *parts;
  sim_time_ps *cores_free;
  uint64_t op_seq;
  /* Interference with compute (coll_rt_set_slowdown_hook): per rank the
   * cores, staging rate and SDMA ops of the members in flight there and
   * the delta last reported; NULL when off. */
  coll_slowdown_fn ovl_fn;
  void *ovl_ctx;
  int *ovl_cores, *ovl_sdma;
  uint64_t *ovl_rate;
  double *ovl_delta;
  /* Ring recurrence (coll_rt_set_ring_recurrence): the smallest ring
   * that takes it minus COLL_RING_RECURRENCE_MIN (so that 0, the
   * zeroed default, is that constant; above 65,536 members: off); per link
   * the last run that checked it (disjointness); counters. */
  int ring_min_delta;
  uint32_t *link_stamp;
  uint32_t stamp;
  coll_ring_stats ring;
};

#define XR_NONE UINT32_MAX

coll_rt *coll_rt_new(sim_engine *sim, net *n, const coll_policy *policy)
{
  coll_rt *c = g_new0(coll_rt, 1);
  c->sim = sim;
  c->n = n;
  c->t = net_get_topo(n);
  c->twohop = g_hash_table_new_full(g_direct_hash, g_direct_equal, (GDestroyNotify)coll_twohop_free, NULL);
  if (policy != NULL) {
    c->pol = *policy;
  } else {
    c->pol.chunks = 1; /* as coll_policy_new_default(): library ideal */
    coll_library_params_default(COLL_LIBRARY_IDEAL, &c->pol.lib);
  }
  c->free_xr = XR_NONE;
  c->work = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  if (c->pol.lib.reg == COLL_REG_JIT || c->pol.lib.reg == COLL_REG_ROA)
    c->reg = coll_library_reg_new(&c->pol.lib, topo_n_ranks(c->t));
  if (coll_library_has_engine(c->pol.lib.kind))
    c->eng_free = g_new0(sim_time_ps, 2 * (size_t)topo_n_ranks(c->t));
  return c;
}

static void run_free(coll_run *r)
{
  if (r->claim != 0)
    net_claim_release(r->lib->n, r->claim);
  g_free(r->fin);
  g_free(r->done_ev);
  g_free(r->hop);
  g_free(r->ranks);
  g_free(r->splits);
  g_free(r->gidx);
  g_free(r->gmember);
  g_free(r->slot);
  g_free(r->recv);
  g_free(r->sent);
  g_free(r->chunks_left);
  g_free(r->scratch);
  g_free(r->held);
  g_free(r->t_begin);
  g_free(r->copy_out_m);
  g_free(r->ovl_on);
  g_free(r->lperm);
  g_free(r->linv);
  g_free(r);
}

/* Unfinished collectives are dropped.  Queued events point into the
 * runtime, so this follows sim.h's teardown rule: after the last sim_run,
 * before the net and the engine. */
void coll_rt_free(coll_rt *c)
{
  if (c == NULL)
    return;
  while (c->runs != NULL) {
    coll_run *r = c->runs;
    c->runs = r->next;
    run_free(r);
  }
  g_hash_table_destroy(c->twohop);
  g_free(c->xr);
  g_array_free(c->work, TRUE);
  coll_library_reg_free(c->reg);
  g_free(c->eng_free);
  coll_library_fabric_free(c->fab);
  if (c->parts != NULL)
    g_hash_table_destroy(c->parts);
  g_free(c->cores_free);
  g_free(c->ovl_cores);
  g_free(c->ovl_sdma);
  g_free(c->ovl_rate);
  g_free(c->ovl_delta);
  g_free(c->link_stamp);
  g_free(c);
}

gboolean coll_rt_set_slowdown_hook(coll_rt *c, coll_slowdown_fn fn, void *ctx)
{
  if (fn == NULL || !coll_library_interferes(&c->pol.lib))
    return FALSE;
  size_t nr = (size_t)topo_n_ranks(c->t);
  c->ovl_fn = fn;
  c->ovl_ctx = ctx;
  c->ovl_cores = g_new0(int, nr ? nr : 1);
  c->ovl_sdma = g_new0(int, nr ? nr : 1);
  c->ovl_rate = g_new0(uint64_t, nr ? nr : 1);
  c->ovl_delta = g_new0(double, nr ? nr : 1);
  return TRUE;
}

/* Member m of r enters (sign 1) or leaves (-1) its rank's in-flight set;
 * reports the rank's new delta when it changed.  The sums are integers,
 * so a rank with nothing in flight is back at exactly delta 0.  O(1) plus
 * the callback. */
static void ovl_apply(coll_run *r, int m, int sign)
{
  coll_rt *c = r->lib;
  int rank = r->ranks[m];
  c->ovl_cores[rank] += sign * r->ovl_cores;
  c->ovl_sdma[rank] += sign * r->ovl_sdma;
  if (sign > 0)
    c->ovl_rate[rank] += r->ovl_rate;
  else
    c->ovl_rate[rank] -= r->ovl_rate;
  double d = coll_library_interference(&c->pol.lib, c->ovl_cores[rank], c->ovl_rate[rank], c->ovl_sdma[rank]);
  if (d != c->ovl_delta[rank]) {
    c->ovl_delta[rank] = d;
    c->ovl_fn(c->sim, c->ovl_ctx, rank, d);
  }
}

static void ovl_begin(coll_run *r, int m)
{
  if (r->ovl_on == NULL || r->ovl_on[m] != 0)
    return;
  r->ovl_on[m] = 1;
  ovl_apply(r, m, 1);
}

static void ovl_begin_ev(sim_engine *sim, void *ctx, uint64_t arg)
{
  (void)sim;
  ovl_begin(ctx, (int)arg);
}

/* Before member m's done(): its rank's compute speeds up again. */
static void ovl_end(coll_run *r, int m)
{
  if (r->ovl_on == NULL)
    return;
  if (r->ovl_on[m] == 1)
    ovl_apply(r, m, -1);
  r->ovl_on[m] = 2;
}

static uint32_t xr_alloc(coll_rt *c)
{
  if (c->free_xr != XR_NONE) {
    uint32_t i = c->free_xr;
    c->free_xr = c->xr[i].next_free;
    return i;
  }
  if (c->n_xr == c->cap_xr) {
    c->cap_xr = c->cap_xr ? 2 * c->cap_xr : 1024;
    c->xr = g_renew(coll_xrec, c->xr, c->cap_xr);
  }
  return c->n_xr++;
}

/* ---- planning ---------------------------------------------------------- */

/* Compresses the members' coordinates; sets up a grid over the dimensions
 * in which they differ, or a single flat dimension in communicator order
 * when they do not form a full sub-grid. */
static void plan_grid(coll_run *r, const topo *t)
{
  int n = r->n;
  int nd = topo_n_dims(t);
  r->gidx = g_new(int, n);
  r->gmember = g_new(int, n);
  r->n_g = 0;
  r->flat_kind = TOPO_KIND_GRAPH;
  gboolean grid = nd <= COLL_MAX_DIMS && n > 1;
  int *index[COLL_MAX_DIMS] = { 0 };
  if (grid) {
    for (int m = 0; m < n; m++)
      r->gidx[m] = 0;
    int stride = 1;
    for (int d = 0; d < nd && grid; d++) {
      int size = topo_dim_size(t, d);
      int *idx = g_new(int, size > 0 ? size : 1);
      index[d] = idx;
      for (int i = 0; i < size; i++)
        idx[i] = -1;
      for (int m = 0; m < n; m++) {
        int c = topo_rank_coord(t, r->ranks[m], d);
        g_assert(c >= 0 && c < size);
        idx[c] = 0;
      }
      int distinct = 0;
      for (int i = 0; i < size; i++)
        if (idx[i] == 0)
          idx[i] = distinct++;
      if (distinct <= 1)
        continue;
      if ((int64_t)stride * distinct > n) {
        grid = FALSE;
        break;
      }
      r->gsize[r->n_g] = distinct;
      r->gstride[r->n_g] = stride;
      r->gtopo[r->n_g] = d;
      r->n_g++;
      for (int m = 0; m < n; m++)
        r->gidx[m] += stride * idx[topo_rank_coord(t, r->ranks[m], d)];
      stride *= distinct;
    }
    if (grid && stride != n)
      grid = FALSE;
    if (grid) {
      for (int i = 0; i < n; i++)
        r->gmember[i] = -1;
      for (int m = 0; m < n && grid; m++) {
        if (r->gmember[r->gidx[m]] >= 0)
          grid = FALSE;   /* two members on one coordinate tuple */
        else
          r->gmember[r->gidx[m]] = m;
      }
    }
  }
  for (int d = 0; d < COLL_MAX_DIMS; d++)
    g_free(index[d]);
  if (!grid || r->n_g == 0) {
    r->n_g = 1;
    r->gsize[0] = n;
    r->gstride[0] = 1;
    r->gtopo[0] = -1;
    for (int m = 0; m < n; m++) {
      r->gidx[m] = m;
      r->gmember[m] = m;
    }
  }
  if (r->n_g == 1 && r->gtopo[0] >= 0)
    r->flat_kind = topo_dim_kind(t, r->gtopo[0]);
}

/* One flat dimension over the whole group in communicator order.  O(n). */
static void plan_flat(coll_run *r)
{
  r->n_g = 1;
  r->gsize[0] = r->n;
  r->gstride[0] = 1;
  r->gtopo[0] = -1;   /* flat_kind stays: the tuner's view of a one-dimension group */
  for (int m = 0; m < r->n; m++) {
    r->gidx[m] = m;
    r->gmember[m] = m;
  }
}

/* Slowest hop bandwidth of the ring over the members in communicator
 * order (the reference's beta_min).  O(n) cached route lookups. */
static wisp_bw_Bps ring_beta_min(const topo *t, const int *ranks, int n)
{
  wisp_bw_Bps bmin = 0;
  for (int i = 0; i < n && n > 1; i++) {
    wisp_bw_Bps bw = 0;
    topo_route_cost(t, ranks[i], ranks[(i + 1) % n], NULL, &bw);
    if (bw > 0 && (bmin == 0 || bw < bmin))
      bmin = bw;
  }
  return bmin > 0 ? bmin : 1;
}

static coll_algo policy_algo(const coll_policy *pol, coll_prim prim, int tdim)
{
  int n = pol->n_algo[prim];
  if (n == 0)
    return COLL_ALGO_AUTO;
  int i = tdim < 0 ? 0 : MIN(tdim, n - 1);
  return pol->algo[prim][i];
}

/* The operator a library uses where the config names none (reference
 * §5.1): stratacl full-mesh remote-slice loads (`direct`); hccl and
 * hccl-zerocopy ring for all-gather/reduce-scatter, halving-doubling
 * for all-reduce on powers of two [ASSUMPTION], ring otherwise, pairwise
 * exchange for all-to-all(v) [ASSUMPTION]; cann-ep and cann-ep-zerocopy
 * the full mesh for all-to-all(v) (MoE dispatch/combine, §8), hccl's
 * operators otherwise; nccl the tuner. */
static coll_algo library_algo(const coll_library_params *lib, coll_prim p, int q)
{
  switch (lib->kind) {
  case COLL_LIBRARY_STRATACL:
    if (p == COLL_PRIM_ALL_REDUCE || p == COLL_PRIM_REDUCE_SCATTER || p == COLL_PRIM_ALL_GATHER ||
        p == COLL_PRIM_ALL_TO_ALL || p == COLL_PRIM_ALL_TO_ALLV)
      return COLL_ALGO_DIRECT;
    return COLL_ALGO_AUTO;
  case COLL_LIBRARY_CANN_EP:
  case COLL_LIBRARY_CANN_EP_ZEROCOPY:
  case COLL_LIBRARY_HCCL:
  case COLL_LIBRARY_HCCL_ZEROCOPY:
    if ((lib->kind == COLL_LIBRARY_CANN_EP || lib->kind == COLL_LIBRARY_CANN_EP_ZEROCOPY) &&
        (p == COLL_PRIM_ALL_TO_ALL || p == COLL_PRIM_ALL_TO_ALLV))
      return COLL_ALGO_DIRECT; /* §8: full mesh */
    if (p == COLL_PRIM_ALL_REDUCE)
      return wisp_is_pow2(q) ? COLL_ALGO_HALVING_DOUBLING : COLL_ALGO_RING;
    if (p == COLL_PRIM_REDUCE_SCATTER || p == COLL_PRIM_ALL_GATHER)
      return COLL_ALGO_RING;
    if (p == COLL_PRIM_ALL_TO_ALL || p == COLL_PRIM_ALL_TO_ALLV)
      return COLL_ALGO_PAIRWISE; /* one peer per step [ASSUMPTION] */
    return COLL_ALGO_AUTO;
  default:
    return COLL_ALGO_AUTO;
  }
}

/* An explicit choice that does not apply (wrong primitive, NVLS off a
 * switch dimension, `hierarchical` for a single phase) falls back to the
 * tuner; the report names the algorithm that actually ran. */
static coll_algo resolve(const coll_policy *pol, coll_prim phase_prim, coll_prim req_prim, int tdim,
                         topo_kind kind, int q, uint64_t bytes, gboolean shared)
{
  coll_algo a = policy_algo(pol, req_prim, tdim);
  if (pol->lib.kind == COLL_LIBRARY_NCCL)
    shared = TRUE; /* the library model does not depend on wisp's fidelity tier */
  if (a == COLL_ALGO_AUTO)
    a = library_algo(&pol->lib, phase_prim, q);
  if (a == COLL_ALGO_NVLS && kind != TOPO_KIND_SWITCH)
    a = COLL_ALGO_AUTO;
  if (a != COLL_ALGO_AUTO && a != COLL_ALGO_HIERARCHICAL && coll_algo_supports(a, phase_prim))
    return a;
  return coll_tune(phase_prim, kind, q, bytes, pol->in_switch_reduction, shared);
}

static void add_phase(coll_run *r, const coll_policy *pol, const topo *t, coll_prim phase_prim, int g,
                      uint64_t div)
{
  coll_phase *ph = &r->ph[r->n_phases++];
  int q = g < 0 ? r->n : r->gsize[g];
  int tdim = g < 0 ? (r->n_g == 1 ? r->gtopo[0] : -1) : r->gtopo[g];
  topo_kind kind = tdim < 0 ? TOPO_KIND_GRAPH : topo_dim_kind(t, tdim);
  if (g < 0)
    kind = r->flat_kind;
  ph->prim = phase_prim;
  ph->g = g;
  ph->div = div;
  coll_algo forced = g < 0 ? r->force_flat : tdim == 0 ? r->force_dim0 : r->force_outer;
  if (forced != COLL_ALGO_AUTO && coll_algo_supports(forced, phase_prim) &&
      (forced != COLL_ALGO_NVLS || kind == TOPO_KIND_SWITCH))
    ph->algo = forced;
  else
    ph->algo = r->p2p ? COLL_ALGO_DIRECT
                      : resolve(pol, phase_prim, r->prim, tdim, kind, q, r->bytes / div,
                                net_get_tier(r->lib->n) == NET_TIER_FLOW);
  coll_sched s = { .prim = phase_prim, .algo = ph->algo, .q = q, .root = 0 };
  ph->step0 = r->n_steps;
  ph->n_steps = coll_sched_n_steps(&s);
  r->n_steps += ph->n_steps;
}

static void plan_phases(coll_run *r, const coll_policy *pol, const topo *t)
{
  int k = r->n_g;
  gboolean hier = k >= 2 && (r->prim == COLL_PRIM_ALL_REDUCE || r->prim == COLL_PRIM_REDUCE_SCATTER ||
                             r->prim == COLL_PRIM_ALL_GATHER);
  if (r->n <= 1)
    return;
  if (!hier) {
    add_phase(r, pol, t, r->prim, -1, 1);
    return;
  }
  uint64_t div[COLL_MAX_DIMS];
  div[0] = 1;
  for (int i = 1; i < k; i++)
    div[i] = div[i - 1] * (uint64_t)r->gsize[i - 1];
  switch (r->prim) {
  case COLL_PRIM_ALL_REDUCE:
    for (int i = 0; i < k - 1; i++)
      add_phase(r, pol, t, COLL_PRIM_REDUCE_SCATTER, i, div[i]);
    add_phase(r, pol, t, COLL_PRIM_ALL_REDUCE, k - 1, div[k - 1]);
    for (int i = k - 2; i >= 0; i--)
      add_phase(r, pol, t, COLL_PRIM_ALL_GATHER, i, div[i]);
    break;
  case COLL_PRIM_REDUCE_SCATTER:
    for (int i = 0; i < k; i++)
      add_phase(r, pol, t, COLL_PRIM_REDUCE_SCATTER, i, div[i]);
    break;
  default: /* all-gather: smallest pieces first, on the outer dimension */
    for (int i = k - 1; i >= 0; i--)
      add_phase(r, pol, t, COLL_PRIM_ALL_GATHER, i, div[i]);
    break;
  }
}

static void describe(const coll_run *r, const topo *t, coll_info *info)
{
  GString *s = g_string_new(NULL);
  if (r->nccl && r->n_phases > 0)
    g_string_append_printf(s, "%s/%s: ", coll_nccl_algo_name((coll_nccl_algo)r->nalgo),
                           coll_proto_name((coll_proto)r->proto));
  if (r->n_phases == 0)
    g_string_append(s, "none");
  for (int i = 0; i < r->n_phases; i++) {
    const coll_phase *ph = &r->ph[i];
    if (i > 0)
      g_string_append(s, " > ");
    if (r->n_phases > 1)
      g_string_append_printf(s, "%s:", coll_prim_name(ph->prim));
    g_string_append(s, coll_algo_name(ph->algo));
    if (ph->g >= 0)
      g_string_append_printf(s, "@%s", topo_dim_name(t, r->gtopo[ph->g]));
    else if (r->n_g == 1 && r->gtopo[0] >= 0)
      g_string_append_printf(s, "@%s", topo_dim_name(t, r->gtopo[0]));
    else
      g_string_append(s, "@flat"); /* whole group over its real routes */
  }
  if (r->lperm != NULL)
    g_string_append_printf(s, " x%d rails", r->lanes);
  g_strlcpy(info->detail, s->str, sizeof info->detail);
  g_string_free(s, TRUE);
  if (r->n_phases > 1)
    info->algo = COLL_ALGO_HIERARCHICAL;
  else if (r->n_phases == 1)
    info->algo = r->ph[0].algo;
  else
    info->algo = COLL_ALGO_DIRECT; /* a single member: nothing moves */
}

/* ---- running ----------------------------------------------------------- */

typedef struct {
  const coll_run *r;
  const coll_phase *ph;
  int c;
  int base;           /* grid index of position 0 of the sub-group */
} a2av_ctx;

static inline int pos_member(const coll_run *r, const coll_phase *ph, int base, int j, int ch)
{
  if (ph->g < 0 && r->lperm != NULL)
    return r->lperm[(size_t)(ch % r->lanes) * (size_t)r->n + (size_t)j];
  if (ph->g < 0)
    return r->gmember[j];
  return r->gmember[base + j * r->gstride[ph->g]];
}

static uint64_t a2av_bytes(const void *vctx, int a, int b)
{
  const a2av_ctx *x = vctx;
  int ma = pos_member(x->r, x->ph, x->base, a, x->c);
  int mb = pos_member(x->r, x->ph, x->base, b, x->c);
  return coll_piece(x->r->splits[(size_t)ma * (size_t)x->r->n + (size_t)mb], x->r->n_chunks, x->c);
}

static const coll_phase *phase_of(const coll_run *r, uint32_t k)
{
  for (int i = r->n_phases - 1; i >= 0; i--)
    if (k >= r->ph[i].step0)
      return &r->ph[i];
  g_assert_not_reached();
  return NULL;
}

static void xfer_done(sim_engine *sim, void *ctx, uint64_t cookie);
static void reduce_done(sim_engine *sim, void *ctx, uint64_t arg);
static gboolean kick(coll_rt *c, coll_run *r, uint32_t slot);

/* Whether a transfer between two ranks leaves the scale-up domain: they
 * differ in a dimension other than 0 (the innermost dimension is the
 * node's, doc/collectives.md "The NCCL model").  O(dims). */
static gboolean pair_is_inter(const topo *t, int a, int b)
{
  int nd = topo_n_dims(t);
  for (int d = 1; d < nd; d++)
    if (topo_rank_coord(t, a, d) != topo_rank_coord(t, b, d))
      return TRUE;
  return FALSE;
}

/* Whether two ranks are sibling dies (reference §3: tier D2D): they differ
 * in dimension 0 only, on a topology of two or more dimensions.  O(dims). */
static gboolean pair_is_sio(const topo *t, int a, int b)
{
  int nd = topo_n_dims(t);
  if (nd < 2)
    return FALSE;
  for (int d = 1; d < nd; d++)
    if (topo_rank_coord(t, a, d) != topo_rank_coord(t, b, d))
      return FALSE;
  return TRUE;
}

/* Queues `service` picoseconds of work, ready at time `ready` (>= now), on
 * lane `lane` (0 UB, 1 SIO) of the engine of global rank `rank` and
 * returns when the engine has finished it: a FIFO server, as a link of
 * tier A.  O(1). */
static sim_time_ps engine_queue(coll_rt *c, int rank, int lane, sim_time_ps ready, sim_time_ps service)
{
  sim_time_ps *f = &c->eng_free[2 * (size_t)rank + (size_t)lane];
  if (*f < ready)
    *f = ready;
  *f += service;
  return *f;
}

/* ---- core partitioning of fan-out steps (reference §6) ----------------- */

/* A partition's shape: LPT or naive, the core count and the step's
 * (tier, bytes) loads in canonical order (tier ascending, bytes
 * descending, then the step's peer order).  Peers of one tier and size
 * are interchangeable in the partitioner, so the members whose steps have
 * the same shape share one partition: a uniform all-gather computes one
 * per distinct tier mix, not one per member. */
typedef struct {
  guint hash;
  int n, balanced, cores;
  uint64_t key[];      /* bytes << 2 | tier, canonical order */
} part_key;

typedef struct {
  coll_library_partition res;
  uint64_t born;       /* op_seq of the collective that computed it */
  sim_time_ps fin[];   /* per canonical position: its last unit is done */
} part_val;

typedef struct {
  uint64_t bytes;
  int tier, idx;
} canon_rec;

static int canon_cmp(const void *a, const void *b)
{
  const canon_rec *x = a, *y = b;
  if (x->tier != y->tier)
    return x->tier < y->tier ? -1 : 1;
  if (x->bytes != y->bytes)
    return x->bytes > y->bytes ? -1 : 1;
  return (x->idx > y->idx) - (x->idx < y->idx);
}

static guint part_key_hash(gconstpointer k)
{
  return ((const part_key *)k)->hash;
}

static gboolean part_key_equal(gconstpointer a, gconstpointer b)
{
  const part_key *x = a, *y = b;
  return x->n == y->n && x->balanced == y->balanced && x->cores == y->cores &&
         memcmp(x->key, y->key, sizeof x->key[0] * (size_t)x->n) == 0;
}

/* Partitions kept at most: when a collective starts with more, the cache
 * starts afresh (results do not depend on it, only the policy charge of a
 * shape computed again does).  A collective's own shapes stay while its
 * partitions are charged (library_partitions runs inside coll_start). */
#define PART_CACHE_MAX 4096

/* The partition of the loads of one member's fan-out step: ld[i] for the
 * step's i-th transfer (peer = i).  From the cache, or computed with
 * coll_library_partition_finish (then born = the current collective).
 * order (n entries) receives the canonical permutation: the partition's
 * position k is transfer order[k].  O(n log n) for a hit, plus O(U C)
 * for U units on C cores for a miss.  The result is valid until the next
 * call. */
static const part_val *lib_partition(coll_rt *c, const coll_library_peer_load *ld, int n, int *order)
{
  const coll_library_params *lp = &c->pol.lib;
  canon_rec *cr = g_new(canon_rec, n > 0 ? n : 1);
  for (int i = 0; i < n; i++)
    cr[i] = (canon_rec){ ld[i].bytes, (int)ld[i].tier, i };
  qsort(cr, (size_t)n, sizeof *cr, canon_cmp);
  part_key *k = g_malloc(sizeof *k + sizeof k->key[0] * (size_t)n);
  k->n = n;
  k->balanced = lp->balanced ? 1 : 0;
  k->cores = lp->cores;
  uint64_t h = wisp_mix64((uint64_t)n * 4 + (uint64_t)k->balanced * 2 + (uint64_t)k->cores * 8);
  for (int i = 0; i < n; i++) {
    order[i] = cr[i].idx;
    k->key[i] = cr[i].bytes << 2 | (uint64_t)cr[i].tier;
    h = wisp_mix64(h ^ k->key[i]);
  }
  k->hash = (guint)(h ^ (h >> 32));
  part_val *v = g_hash_table_lookup(c->parts, k);
  if (v != NULL) {
    g_free(k);
    g_free(cr);
    return v;
  }
  coll_library_peer_load *cl = g_new(coll_library_peer_load, n > 0 ? n : 1);
  for (int i = 0; i < n; i++)
    cl[i] = (coll_library_peer_load){ i, (coll_tier)cr[i].tier, cr[i].bytes };
  v = g_malloc0(sizeof *v + sizeof v->fin[0] * (size_t)n);
  v->born = c->op_seq;
  coll_library_partition_finish(lp, c->fab, cl, n, lp->cores, lp->balanced, &v->res, v->fin);
  g_hash_table_insert(c->parts, k, v);
  g_free(cl);
  g_free(cr);
  return v;
}

/* The loads of the nx transfers (bytes in xf) that global rank src sends
 * to dst_rank[] in one step.  O(nx dims). */
static void step_loads(const coll_rt *c, int src, const coll_xfer *xf, const int *dst_rank, uint32_t nx,
                       coll_library_peer_load *ld)
{
  for (uint32_t i = 0; i < nx; i++)
    ld[i] = (coll_library_peer_load){ (int)i, coll_library_fabric_tier(c->fab, src, dst_rank[i]), xf[i].bytes };
}

/* The library's engine for the nx transfers (in r->scratch) that member
 * m issues in one step: sets each record's delivery time and the slot's
 * local completion (doc/libraries.md §2).  A member drives its writes
 * with its communication engine (its AIV cores, or its SDMA queues),
 * modelled as two FIFO lanes per rank: the UB lane and the die-to-die
 * (SIO) lane.
 *  - A step with one peer (ring, halving-doubling, pairwise) is served at
 *    the route's bottleneck bandwidth: the write is locally complete when
 *    its last byte has left, which is when the network has serialised it
 *    if nothing else queues.
 *  - A fan-out step (two or more peers: full mesh) is served at b_sio for
 *    the sibling die and at the fan-out throughput B_fm(m) of the
 *    reference (§5.2, coll_library_fm_bw) for the UB peers, with m each
 *    transfer's size: the many concurrent remote writes of one member
 *    reach B_port for small messages and fall to (1 - g_inf) of the ring's
 *    bandwidth for large ones.
 *  - A fan-out step that writes data first waits for its peers'
 *    readiness notices (a zero-copy write needs the peer's buffer
 *    ready; a zero-byte step such as a barrier does not): the engine and the
 *    cores start alpha_max after the step, alpha_max the latency of the
 *    farthest peer's route (the reference's sigma_fm = sigma_sig +
 *    alpha_max, §5.2; the data's own latency is the second alpha_max).
 *  - With SDMA every service time is (1 + eps_sdma) longer (§7).
 *  - The cores (MTE, a fan-out step, r->core_term): the step's per-peer
 *    loads are cut into units and assigned to the rank's `cores` cores
 *    (LPT with fan-out cap, or naive fixed groups; lib_partition).  The
 *    rank's cores are one FIFO resource: the partition starts when they
 *    have finished earlier partitions and keeps them busy for its
 *    makespan; a peer's data is complete when its last unit is (the unit
 *    cost alpha_t + s / beta_core,t includes the access latency).
 * The receiver counts a transfer at max(network arrival, engine finish +
 * route latency, cores' finish of that peer), so the slowest of network,
 * engine lane and cores decides: they work on the same bytes
 * concurrently (the reference's mode A takes the max of V_UB/B_fm,
 * V_SIO/B_sio and the makespan, §5.2).  O(nx) route lookups (cached by
 * the topology), plus lib_partition for a fan-out step with the core
 * term. */
static void library_step(coll_run *r, int m, const uint32_t *xi, uint32_t nx, const int *dst_rank)
{
  coll_rt *c = r->lib;
  const coll_library_params *lp = &c->pol.lib;
  coll_slot *sl = NULL;
  int src = r->ranks[m];
  int n_ub = 0;
  uint8_t sio_small[64];
  uint8_t *sio = nx <= G_N_ELEMENTS(sio_small) ? sio_small : g_new(uint8_t, nx);
  uint64_t step_bytes = 0;
  sim_time_ps amax = 0; /* the farthest peer's notice: its route back to src */
  for (uint32_t i = 0; i < nx; i++) {
    sio[i] = (uint8_t)pair_is_sio(c->t, src, dst_rank[i]);
    n_ub += !sio[i];
    step_bytes += r->scratch[i].bytes;
    if (nx >= 2) {
      sim_time_ps lat = 0;
      topo_route_cost(c->t, dst_rank[i], src, &lat, NULL);
      amax = MAX(amax, lat);
    }
  }
  /* The readiness notices of a fan-out step that writes. */
  sim_time_ps ready = sim_now(c->sim) + (nx >= 2 && step_bytes > 0 ? amax : 0);
  for (uint32_t i = 0; i < nx; i++) {
    coll_xrec *rec = &c->xr[xi[i]];
    if (sl == NULL)
      sl = &r->slot[rec->src_slot];
    uint64_t bytes = r->scratch[i].bytes;
    sim_time_ps lat = 0;
    wisp_bw_Bps bw = 0;
    topo_route_cost(c->t, src, dst_rank[i], &lat, &bw);
    wisp_bw_Bps rate;
    if (nx == 1 || bw == 0)
      rate = bw;
    else if (sio[i])
      rate = lp->b_sio;
    else
      rate = coll_library_fm_bw(lp, r->n, r->beta_ring_min, n_ub, (int)nx, bytes);
    sim_time_ps svc = bytes == 0 || rate == 0 ? 0 : wisp_transfer_ps(bytes, rate);
    if (lp->sdma)
      svc = (sim_time_ps)llround((double)svc * (1.0 + lp->eps_sdma));
    sim_time_ps fin = engine_queue(c, src, sio[i], ready, svc);
    rec->deliver_at = fin + lat;
    sl->local_done = MAX(sl->local_done, fin);
  }
  if (sio != sio_small)
    g_free(sio);
  if (r->core_term && nx >= 2) {
    coll_library_peer_load *ld = g_new(coll_library_peer_load, nx);
    int *order = g_new(int, nx);
    step_loads(c, src, r->scratch, dst_rank, nx, ld);
    const part_val *v = lib_partition(c, ld, (int)nx, order);
    sim_time_ps t0 = MAX(ready, c->cores_free[src]);
    c->cores_free[src] = t0 + v->res.makespan_ps;
    sl->local_done = MAX(sl->local_done, t0 + v->res.makespan_ps);
    for (uint32_t k = 0; k < nx; k++) {
      coll_xrec *rec = &c->xr[xi[order[k]]];
      rec->deliver_at = MAX(rec->deliver_at, t0 + v->fin[k]);
    }
    g_free(order);
    g_free(ld);
  }
}

/* The schedule of member m, chunk ch at global step k, seen from the
 * step's sub-group: fills *x (which *sc points to) and *sc, returns the
 * phase and the member's position.  O(1). */
static const coll_phase *member_sched(const coll_run *r, int m, int ch, uint32_t k, a2av_ctx *x, coll_sched *sc,
                                      int *pos_out)
{
  const coll_phase *ph = phase_of(r, k);
  int q, pos, base;
  if (ph->g < 0) {
    q = r->n;
    pos = r->lperm != NULL ? r->linv[(size_t)(ch % r->lanes) * (size_t)r->n + (size_t)m] : r->gidx[m];
    base = 0;
  } else {
    q = r->gsize[ph->g];
    pos = (r->gidx[m] / r->gstride[ph->g]) % q;
    base = r->gidx[m] - pos * r->gstride[ph->g];
  }
  *x = (a2av_ctx){ r, ph, ch, base };
  *sc = (coll_sched){
    .prim = ph->prim,
    .algo = ph->algo,
    .q = q,
    .root = r->root_member >= 0 ? r->gidx[r->root_member] : -1,
    .tree = ch % r->lanes,
    .bytes = (coll_piece(r->bytes, r->n_chunks, ch) + ph->div - 1) / ph->div, /* largest piece: ceil */
    .a2av = r->splits ? a2av_bytes : NULL,
    .a2av_ctx = x,
    .nvls_paired = r->nvls_paired,
  };
  *pos_out = pos;
  return ph;
}

/* Issues the transfers of slot s's current step. */
static void slot_start(coll_run *r, uint32_t s)
{
  coll_rt *c = r->lib;
  coll_slot *sl = &r->slot[s];
  int m = (int)(s / (uint32_t)r->n_chunks);
  int ch = (int)(s % (uint32_t)r->n_chunks);
  a2av_ctx x;
  coll_sched sc;
  int pos;
  const coll_phase *ph = member_sched(r, m, ch, sl->cur, &x, &sc, &pos);
  int base = x.base;
  uint32_t n_recv = 0;
  uint64_t red = 0;
  uint32_t nx = coll_sched_step(&sc, pos, sl->cur - ph->step0, r->scratch, &n_recv, &red);
  sl->state = SLOT_RUNNING;
  sl->moved = nx > 0 || n_recv > 0;
  sl->need = n_recv;
  sl->red = red;
  sl->pend += nx; /* library steps do not wait for their sends: earlier ones may be in flight */
  sl->local_done = sim_now(c->sim);
  uint32_t xi_small[32];
  int dst_small[32];
  uint32_t *xis = xi_small;
  int *dsts = dst_small;
  if (nx > G_N_ELEMENTS(xi_small)) {
    xis = g_new(uint32_t, nx);
    dsts = g_new(int, nx);
  }
  for (uint32_t i = 0; i < nx; i++) {
    const coll_xfer *xf = &r->scratch[i];
    int dm = pos_member(r, ph, base, xf->peer, ch);
    uint32_t xi = xr_alloc(c);
    coll_xrec *rec = &c->xr[xi];
    rec->run = r;
    rec->src_slot = s;
    rec->dst_slot = (uint32_t)dm * (uint32_t)r->n_chunks + (uint32_t)ch;
    rec->dst_step = ph->step0 + xf->recv_step;
    rec->src_step = sl->cur;
    rec->deliver_at = 0;
    if (r->sent != NULL) {
      g_assert(r->sent[(size_t)s * r->n_steps + sl->cur] < UINT16_MAX);
      r->sent[(size_t)s * r->n_steps + sl->cur]++;
    }
    xis[i] = xi;
    dsts[i] = r->ranks[dm];
  }
  /* The library's engine first (it sets the delivery times), then the
   * network; no transfer finishes inside net_send. */
  if (r->libmode && nx > 0)
    library_step(r, m, xis, nx, dsts);
  for (uint32_t i = 0; i < nx; i++) {
    uint64_t wire = r->scratch[i].bytes;
    if (r->nccl && wire > 0) {
      /* The protocol's efficiency (coll_nccl_efficiency): the link carries
       * the payload at that share of its rate, i.e. payload / eff bytes. */
      double inv = pair_is_inter(c->t, r->ranks[m], dsts[i]) ? r->inv_eff_inter : r->inv_eff_intra;
      wire = (uint64_t)ceil((double)wire * inv);
    }
    net_send(c->n, r->ranks[m], dsts[i], wire, xfer_done, c, xis[i]);
  }
  if (xis != xi_small) {
    g_free(xis);
    g_free(dsts);
  }
}

/* Chunk pipelining: on every dimension a member runs one (phase, chunk)
 * item at a time, in (phase, chunk) order — the order is the same on
 * every member, so it cannot deadlock.  Chunk c starts phase ph once
 * chunk c-lanes finished ph; the first chunks start ph once the last
 * chunks finished the previous phase on the same dimension.  (Their own
 * previous phase is done, since steps run in order.)  Within a phase a
 * chunk's steps follow each other freely. */
static gboolean phase_gate_open(const coll_run *r, uint32_t s, uint32_t k)
{
  if (r->step_pipe) {
    /* Step pipeline (nccl): behind the previous chunk of this lane, and
     * at most COLL_NCCL_FIFO_SLOTS chunks of this lane in flight per step
     * (NCCL's connection FIFO). */
    int c0 = (int)(s % (uint32_t)r->n_chunks);
    if (c0 < r->lanes)
      return TRUE;
    if (r->slot[s - (uint32_t)r->lanes].cur <= k)
      return FALSE;
    int back = r->fifo_chunks * r->lanes;
    return c0 < back || r->sent[(size_t)(s - (uint32_t)back) * r->n_steps + k] == 0;
  }
  const coll_phase *ph = phase_of(r, k);
  if (k != ph->step0)
    return TRUE;
  int ch = (int)(s % (uint32_t)r->n_chunks);
  if (ch >= r->lanes)
    return r->slot[s - (uint32_t)r->lanes].cur >= ph->step0 + ph->n_steps;
  uint32_t base = s - (uint32_t)ch;
  for (int i = (int)(ph - r->ph) - 1; i >= 0; i--) {
    const coll_phase *q = &r->ph[i];
    if (q->g != ph->g)
      continue;
    for (int l = 0; l < r->lanes; l++)
      if (r->slot[base + (uint32_t)(r->n_chunks - r->lanes + l)].cur < q->step0 + q->n_steps)
        return FALSE;
    break;
  }
  return TRUE;
}

static void run_finish(coll_rt *c, coll_run *r);

/* Library post-delay of member m when its transfers are over: staging
 * copy-out and, with SDMA in completion mode II, the notification (the
 * SDMA slowdown is in the engine, library_step).  Also books core
 * occupancy. */
static sim_time_ps member_post_delay(coll_run *r, int m)
{
  if (r->t_begin == NULL)
    return 0;
  coll_rt *c = r->lib;
  const coll_library_params *lp = &c->pol.lib;
  sim_time_ps post = 0;
  uint64_t copy_out = r->copy_out_m != NULL ? r->copy_out_m[m] : r->copy_out;
  if (copy_out > 0) {
    sim_time_ps cp = wisp_transfer_ps(copy_out, lp->b_copy);
    post += lp->t_copy0 + cp - (sim_time_ps)llround((double)cp * lp->overlap);
  }
  sim_time_ps elapsed = sim_now(c->sim) - r->t_begin[m];
  if (lp->sdma) {
    post += lp->sdma_poll ? 0 : lp->t_notify;
    if (lp->sdma_poll)
      c->lstats.core_occupancy_us += (double)lp->c_poll * (double)(elapsed + post) / 1e6;
  } else {
    c->lstats.core_occupancy_us += (double)lp->cores * (double)elapsed / 1e6;
  }
  c->lstats.staging_ps += post > 0 && copy_out > 0 ? wisp_transfer_ps(copy_out, lp->b_copy) : 0;
  return post;
}

static void member_post_done(sim_engine *sim, void *ctx, uint64_t arg)
{
  (void)sim;
  coll_run *r = ctx;
  coll_rt *c = r->lib;
  r->members_left--;
  ovl_end(r, (int)arg);
  if (r->done != NULL)
    r->done(c->sim, r->ctx, r->cookie, (int)arg);
  if (r->members_left == 0)
    run_finish(c, r);
}

/* Advances slot s as far as it can go; returns TRUE when the whole
 * collective has finished. */
static gboolean slot_advance(coll_run *r, uint32_t s)
{
  coll_rt *c = r->lib;
  coll_slot *sl = &r->slot[s];
  int ch = (int)(s % (uint32_t)r->n_chunks);
  if (r->held != NULL && r->held[s / (uint32_t)r->n_chunks])
    return FALSE;   /* the member has not passed its library pre-delay yet */
  for (;;) {
    uint32_t k = sl->cur;
    if (k >= r->n_steps)
      return FALSE;
    if (sl->state == SLOT_IDLE) {
      if (!phase_gate_open(r, s, k))
        return FALSE;
      slot_start(r, s);
    }
    if (sl->state == SLOT_RUNNING) {
      /* nccl: a step ends when its own sends have arrived and its
       * receives are in.  A library step (notify-driven) ends when its
       * receives are in and its engine has sent its own writes (their
       * arrival is the receiver's business: the receiver's step waits for
       * them). */
      if (r->recv[(size_t)s * r->n_steps + k] < sl->need || (!r->libmode && !r->nccl && sl->pend > 0))
        return FALSE;
      /* Engine, local reduction, then (library model) the per-step
       * synchronisation sigma_sig of steps that moved data, once per
       * staging round. */
      sim_time_ps now = sim_now(c->sim);
      sim_time_ps wait = r->libmode && sl->local_done > now ? sl->local_done - now : 0;
      if (c->pol.reduce_bw > 0 && sl->red > 0)
        wait += wisp_transfer_ps(sl->red, c->pol.reduce_bw);
      if (sl->moved && r->libmode)
        wait += c->pol.lib.sigma_sig * (r->sync_mult > 0 ? r->sync_mult : 1);
      if (sl->moved && r->nccl && ch < r->lanes)
        wait += r->step_extra[phase_of(r, k) - r->ph];
      if (wait > 0) {
        sl->state = SLOT_REDUCING;
        sim_post_after(c->sim, wait, reduce_done, r, s);
        return FALSE;
      }
    } else if (sl->state == SLOT_REDUCING) {
      return FALSE;
    }
    /* Step k finished. */
    sl->cur = k + 1;
    sl->state = SLOT_IDLE;
    const coll_phase *ph = phase_of(r, k);
    if (r->step_pipe) {
      /* The next chunk of this lane may enter step k (if its sends of
       * step k have landed; else xfer_done wakes it). */
      if (ch + r->lanes < r->n_chunks)
        g_array_append_val(c->work, (uint64_t){ s + (uint32_t)r->lanes });
    } else if (sl->cur == ph->step0 + ph->n_steps) {
      /* A phase ended: wake the next chunk of this phase and, after the
       * last chunks, the first chunks waiting for this dimension. */
      uint32_t base = s - (uint32_t)ch;
      if (ch + r->lanes < r->n_chunks)
        g_array_append_val(c->work, (uint64_t){ s + (uint32_t)r->lanes });
      else
        for (int l = 0; l < r->lanes; l++)
          g_array_append_val(c->work, (uint64_t){ base + (uint32_t)l });
    }
    if (sl->cur == r->n_steps) {
      int m = (int)(s / (uint32_t)r->n_chunks);
      if (--r->chunks_left[m] == 0) {
        sim_time_ps post = member_post_delay(r, m);
        if (post > 0) {
          sim_post_after(c->sim, post, member_post_done, r, (uint64_t)m);
          return FALSE;
        }
        r->members_left--;
        ovl_end(r, m);
        if (r->done != NULL)
          r->done(c->sim, r->ctx, r->cookie, m);
      }
      return r->members_left == 0;
    }
  }
}

static void unlink_run(coll_rt *c, coll_run *r)
{
  if (r->prev)
    r->prev->next = r->next;
  else
    c->runs = r->next;
  if (r->next)
    r->next->prev = r->prev;
}

/* Worklist of slots (no recursion, so long chains of empty steps and
 * chunk hand-offs cost no stack).  Returns TRUE when this call finished
 * the collective; the caller then unlinks and frees it. */
static gboolean kick(coll_rt *c, coll_run *r, uint32_t slot)
{
  gboolean finished = FALSE;
  g_array_set_size(c->work, 0);
  g_array_append_val(c->work, (uint64_t){ slot });
  while (c->work->len > 0) {
    uint64_t s = g_array_index(c->work, uint64_t, c->work->len - 1);
    g_array_set_size(c->work, c->work->len - 1);
    if (slot_advance(r, (uint32_t)s))
      finished = TRUE;
  }
  return finished;
}

static void run_finish(coll_rt *c, coll_run *r)
{
  unlink_run(c, r);
  run_free(r);
}

/* Library: the receiver counts a transfer (after its network arrival and
 * its engine delivery time).  The sender does not wait for it, so only the
 * receiver is advanced; that may finish the run. */
static void lib_deliver(coll_run *r, uint32_t dst_slot, uint32_t dst_step)
{
  uint16_t *cnt = &r->recv[(size_t)dst_slot * r->n_steps + dst_step];
  g_assert(*cnt < UINT16_MAX);
  (*cnt)++;
  if (r->slot[dst_slot].cur == dst_step && kick(r->lib, r, dst_slot))
    run_finish(r->lib, r);
}

static void lib_deliver_ev(sim_engine *sim, void *ctx, uint64_t arg)
{
  (void)sim;
  lib_deliver(ctx, (uint32_t)(arg & 0xffffffffu), (uint32_t)(arg >> 32));
}

static void xfer_done(sim_engine *sim, void *ctx, uint64_t cookie)
{
  (void)sim;
  coll_rt *c = ctx;
  coll_xrec rec = c->xr[cookie];
  c->xr[cookie].next_free = c->free_xr;
  c->free_xr = (uint32_t)cookie;
  coll_run *r = rec.run;
  g_assert(r->slot[rec.src_slot].pend > 0);
  r->slot[rec.src_slot].pend--;
  if (r->libmode) {
    if (rec.deliver_at > sim_now(c->sim))
      sim_post_at(c->sim, rec.deliver_at, lib_deliver_ev, r,
                  (uint64_t)rec.dst_slot | ((uint64_t)rec.dst_step << 32));
    else
      lib_deliver(r, rec.dst_slot, rec.dst_step);
    return;
  }
  uint16_t *cnt = &r->recv[(size_t)rec.dst_slot * r->n_steps + rec.dst_step];
  g_assert(*cnt < UINT16_MAX);
  (*cnt)++;
  /* Receiver first, then sender: a fixed order keeps runs deterministic.
   * The receiver's advance cannot finish the run while the sender still
   * waits (its step is incomplete), so r is alive for the second kick. */
  gboolean dst_waits = r->slot[rec.dst_slot].cur == rec.dst_step;
  gboolean fin = FALSE;
  if (r->nccl) {
    /* NCCL's protocols stream: a step does not wait for its own sends to
     * land (the receiver's step does), so only the receiver advances, and
     * that may finish the run.  Step pipeline: the sender's next chunk may
     * be waiting for this step's sends to land. */
    uint32_t next = rec.src_slot + (uint32_t)(r->fifo_chunks * r->lanes);
    gboolean wake_next = FALSE;
    if (r->sent != NULL) {
      uint16_t *sc = &r->sent[(size_t)rec.src_slot * r->n_steps + rec.src_step];
      g_assert(*sc > 0);
      wake_next = --*sc == 0 &&
                  (int)(rec.src_slot % (uint32_t)r->n_chunks) + r->fifo_chunks * r->lanes < r->n_chunks &&
                  r->slot[next].cur == rec.src_step && r->slot[next].state == SLOT_IDLE;
    }
    if (dst_waits && kick(c, r, rec.dst_slot)) {
      run_finish(c, r);
      return;
    }
    if (wake_next && kick(c, r, next))
      run_finish(c, r);
    return;
  }
  if (dst_waits && rec.dst_slot != rec.src_slot)
    fin = kick(c, r, rec.dst_slot);
  g_assert(!fin);
  if (kick(c, r, rec.src_slot))
    run_finish(c, r);
}

static void reduce_done(sim_engine *sim, void *ctx, uint64_t arg)
{
  (void)sim;
  coll_run *r = ctx;
  g_assert(r->slot[arg].state == SLOT_REDUCING);
  r->slot[arg].state = SLOT_REDUCED;
  if (kick(r->lib, r, (uint32_t)arg))
    run_finish(r->lib, r);
}

/* Member m passed its library pre-delay: release its slots. */
static void member_release(sim_engine *sim, void *ctx, uint64_t arg)
{
  (void)sim;
  coll_run *r = ctx;
  coll_rt *c = r->lib;
  int m = (int)arg;
  r->held[m] = 0;
  r->t_begin[m] = sim_now(c->sim);
  gboolean fin = FALSE;
  for (int ch = 0; ch < r->n_chunks; ch++)
    if (kick(c, r, (uint32_t)m * (uint32_t)r->n_chunks + (uint32_t)ch))
      fin = TRUE;
  if (fin)
    run_finish(c, r);
}

/* ---- Ring recurrence (issue 18: collective cost at scale) ------------
 *
 * A flat unidirectional ring all-reduce, reduce-scatter or all-gather of
 * one chunk over q members issues q transfers per step over q-1 steps
 * (2(q-1) for all-reduce):
 * O(q^2) transfers, each an event pair and a net_send.  On tier A the
 * schedule is a recurrence over the steps.  With s_j(k) the time position
 * j starts step k (s_j(0) = the run's start t0), a_j(k) the time its
 * step-k send to j+1 arrives (net_send's tier A time, issued at s_j(k)),
 * j-1 the predecessor and w_j(k) the step's local wait (reduction at
 * reduce_bw; under the NCCL model also the step's share of NCCL's hop
 * latency, coll_run.step_extra):
 *     ideal (a step waits for its own send):
 *         s_j(k+1) = max(a_j(k), a_{j-1}(k)) + w_j(k)
 *     NCCL model (a step waits only for its receive):
 *         s_j(k+1) = max(s_j(k), a_{j-1}(k)) + w_j(k)
 * and member j is done at s_j(K), K the number of steps.  This is exactly
 * what the per-transfer path computes (slot_advance), provided the times
 * a_j(k) are: every transfer of hop j -> j+1 is queued on that hop's
 * links in step order by net_analytic_at, which keeps the links' FIFO
 * state as net_send would.  That holds when nothing else uses the links
 * while the ring runs, so the recurrence is taken only when
 *  - the hops are link-disjoint (no link carries two hops), and every
 *    link is idle and unclaimed when the run starts (the tier A FIFO
 *    state: net_link_idle); otherwise the run goes per transfer
 *    (coll_ring_stats.shared);
 *  - and it claims the links (net_claim_*) until its last member is done:
 *    a transfer of anyone else over a claimed link first calls
 *    ring_convert, which re-runs the recurrence up to that instant,
 *    charging the net only the transfers issued before it (the first
 *    step, issued by run_begin at t0, counts as before; a later ring
 *    transfer due at that very picosecond is issued after the other one,
 *    and one due to arrive then arrives after it: the order of events the
 *    per-transfer path has when the other transfer's event was queued
 *    before the ring's step began; when it was queued later, that path
 *    puts the ring first and a tie on a link can differ), puts the
 *    transfers still in flight, the receive counters and every member's
 *    step into the per-transfer state and continues per transfer
 *    (coll_ring_stats.conversions).
 * So per-member completion times are those of the per-transfer path in
 * every case but that tie (regress/test_coll_ring.c checks them to the
 * picosecond); the order of same-picosecond done() calls may differ.  Cost: O(q K)
 * integer work and O(q) events per run instead of O(q K) transfers, each
 * an event pair through the net; a conversion costs the recurrence once
 * more plus the in-flight transfers. */
typedef struct ring_hop {
  net_hop nh;            /* the route, prepared once (net_hop_init) */
  int src, dst;          /* global ranks of positions j and j+1 */
  double inv;            /* NCCL model: the hop's byte inflation (protocol efficiency), else 1 */
  uint64_t total;        /* wire bytes over all steps */
} ring_hop;

/* The receive (and NCCL send) counters of the per-transfer path;
 * allocated when a run goes per transfer.  O(members x chunks x steps). */
static void run_alloc_counters(coll_run *r)
{
  size_t n = (size_t)r->n * (size_t)r->n_chunks * (r->n_steps ? r->n_steps : 1);
  if (r->recv == NULL)
    r->recv = g_new0(uint16_t, n);
  if (r->step_pipe && r->sent == NULL)
    r->sent = g_new0(uint16_t, n);
}

/* Whether run r has the shape the recurrence covers (the links are
 * checked when it begins).  O(1). */
static gboolean ring_candidate(const coll_rt *c, const coll_run *r)
{
  if (r->n < COLL_RING_RECURRENCE_MIN + c->ring_min_delta || net_get_tier(c->n) != NET_TIER_ANALYTICAL ||
      r->libmode || r->p2p || r->n < 2 ||
      r->n_phases != 1 || r->ph[0].algo != COLL_ALGO_RING || r->ph[0].g >= 0 || r->n_chunks != 1 ||
      r->lanes != 1 || r->lperm != NULL)
    return FALSE;
  return r->ph[0].prim == COLL_PRIM_ALL_REDUCE || r->ph[0].prim == COLL_PRIM_REDUCE_SCATTER ||
         r->ph[0].prim == COLL_PRIM_ALL_GATHER;
}

static inline int ring_mod(int64_t x, int q)
{
  int64_t m = x % q;
  return (int)(m < 0 ? m + q : m);
}

/* One step of the ring for every position: piece j of D is
 * base + (j < extra) (coll_piece); position p sends piece p - off and
 * reduces piece p - off - 1 (mod q), as coll_sched_step's unidirectional
 * ring (sched_ring: ring_rs, ring_ag).  Fills snd[p], red[p].  O(q), no
 * division. */
static void ring_step_all(const coll_run *r, uint32_t k, uint64_t *snd, uint64_t *red)
{
  int q = r->n;
  uint64_t base = r->bytes / (uint64_t)q, extra = r->bytes % (uint64_t)q;
  coll_prim prim = r->ph[0].prim;
  gboolean ag = prim == COLL_PRIM_ALL_GATHER || (prim == COLL_PRIM_ALL_REDUCE && k >= (uint32_t)(q - 1));
  uint32_t ks = prim == COLL_PRIM_ALL_REDUCE && ag ? k - (uint32_t)(q - 1) : k;
  int off = ring_mod(ag ? (int64_t)ks : (int64_t)ks + 1, q);
  int idx = q - off; /* (0 - off) mod q, in 0..q */
  if (idx == q)
    idx = 0;
  for (int p = 0; p < q; p++) {
    snd[p] = base + ((uint64_t)idx < extra);
    int ri = idx == 0 ? q - 1 : idx - 1;
    red[p] = ag ? 0 : base + ((uint64_t)ri < extra);
    if (++idx == q)
      idx = 0;
  }
}

/* A ring transfer issued before t_stop (ring_convert): still in flight at
 * t_stop, it becomes a transfer record whose xfer_done runs at its
 * arrival; arrived, it is counted by its receiver.  O(1). */
static void ring_materialize(coll_run *r, int j, uint32_t k, sim_time_ps arr, sim_time_ps t_stop)
{
  coll_rt *c = r->lib;
  uint32_t src = (uint32_t)r->gmember[j], dst = (uint32_t)r->gmember[(j + 1) % r->n];
  if (arr < t_stop) {
    r->recv[(size_t)dst * r->n_steps + k]++;
    return;
  }
  uint32_t xi = xr_alloc(c);
  c->xr[xi] = (coll_xrec){ .run = r, .src_slot = src, .dst_slot = dst, .dst_step = k, .src_step = k };
  r->slot[src].pend++;
  if (r->sent != NULL)
    r->sent[(size_t)src * r->n_steps + k]++;
  sim_post_at(c->sim, arr, xfer_done, c, xi);
}

#define RING_NEVER SIM_TIME_MAX

/* Whether every member of r is alike (the closed form below applies):
 * pieces of equal size (q divides D) and hops alike for the net
 * (net_hop_alike) with equal byte inflation.  O(q route length). */
static gboolean ring_symmetric(const coll_run *r)
{
  if (r->bytes % (uint64_t)r->n != 0)
    return FALSE;
  for (int j = 1; j < r->n; j++)
    if (r->hop[j].inv != r->hop[0].inv || !net_hop_alike(r->lib->n, &r->hop[0].nh, &r->hop[j].nh))
      return FALSE;
  return TRUE;
}

/* The recurrence of a symmetric ring (ring_symmetric), whose links are
 * idle at t0: every position sends the same bytes at every step over an
 * alike route whose links start in the same state, so by induction every
 * member starts step k at the same time s(k) and every hop's links go
 * through the same states.  Then a_{j-1}(k) = a_j(k) = a(k) and both
 * recurrences become
 *     s(k+1) = a(k) + w(k),   a(k) = net_hop_at(hop 0, D/q, s(k))
 * (a(k) >= s(k)), which is evaluated on hop 0 alone; the other hops get
 * hop 0's link states and counters (net_hop_mirror).  With equal hop
 * times T (links idle at every step) this is the closed form
 * s(K) = t0 + K (T + w): for the ring all-reduce 2(q-1) steps of D/q
 * bytes, 2(q-1)/q D/B + 2(q-1) alpha.  O(K + q route length). */
static void ring_recurrence_symmetric(coll_run *r)
{
  coll_rt *c = r->lib;
  int q = r->n;
  uint32_t K = r->n_steps;
  uint64_t piece = r->bytes / (uint64_t)q, wire = piece;
  if (r->nccl && wire > 0)
    wire = (uint64_t)ceil((double)wire * r->hop[0].inv); /* as slot_start */
  sim_time_ps red_wait = c->pol.reduce_bw > 0 && piece > 0 ? wisp_transfer_ps(piece, c->pol.reduce_bw) : 0;
  sim_time_ps extra = r->nccl ? r->step_extra[0] : 0, s = r->t0;
  for (uint32_t k = 0; k < K; k++) {
    gboolean ag = r->ph[0].prim == COLL_PRIM_ALL_GATHER ||
                  (r->ph[0].prim == COLL_PRIM_ALL_REDUCE && k >= (uint32_t)(q - 1));
    s = net_hop_at(c->n, &r->hop[0].nh, wire, s) + (ag ? 0 : red_wait) + extra;
  }
  r->hop[0].total = wire * K;
  for (int j = 1; j < q; j++) {
    r->hop[j].total = wire * K;
    net_hop_mirror(c->n, &r->hop[0].nh, &r->hop[j].nh, wire * K, K);
  }
  for (int m = 0; m < q; m++)
    r->fin[m] = s;
}

/* Runs the recurrence from r->t0, charging the net (net_hop_at) with
 * every transfer issued before t_stop.  t_stop RING_NEVER: all of
 * them; r->fin receives each member's done time and r->hop the hops'
 * totals.  Otherwise (a conversion) every member's slot is set to its
 * state at t_stop (ring_materialize, the step it is in, waiting for
 * transfers or in its local wait).  O(q K). */
static void ring_recurrence(coll_run *r, sim_time_ps t_stop)
{
  coll_rt *c = r->lib;
  int q = r->n;
  uint32_t K = r->n_steps;
  gboolean conv = t_stop != RING_NEVER;
  sim_time_ps extra = r->nccl ? r->step_extra[0] : 0;
  if (!conv && ring_symmetric(r)) {
    c->ring.symmetric++;
    ring_recurrence_symmetric(r);
    return;
  }
  sim_time_ps *st = g_new(sim_time_ps, (size_t)q);
  sim_time_ps *arr = g_new(sim_time_ps, (size_t)q);
  uint64_t *snd = g_new(uint64_t, (size_t)q), *rb = g_new(uint64_t, (size_t)q);
  sim_time_ps *rwait = g_new0(sim_time_ps, (size_t)q);
  for (int j = 0; j < q; j++) {
    st[j] = r->t0;
    if (!conv)
      r->hop[j].total = 0;
  }
  for (uint32_t k = 0; k < K; k++) {
    ring_step_all(r, k, snd, rb);
    if (c->pol.reduce_bw > 0)
      for (int j = 0; j < q; j++)
        rwait[j] = rb[j] > 0 ? wisp_transfer_ps(rb[j], c->pol.reduce_bw) : 0;
    /* Step 0 is issued at t0 by run_begin, an event before the one
     * converting the run at t_stop >= t0; a later step issued at t_stop
     * counts as after it (see the top comment). */
    sim_time_ps bound = k == 0 && t_stop != RING_NEVER ? t_stop + 1 : t_stop;
    for (int j = 0; j < q; j++) {
      if (st[j] >= bound) {
        arr[j] = RING_NEVER;
        continue;
      }
      uint64_t wire = snd[j];
      if (r->nccl && wire > 0)
        wire = (uint64_t)ceil((double)wire * r->hop[j].inv); /* as slot_start */
      if (!conv)
        r->hop[j].total += wire;
      arr[j] = net_hop_at(c->n, &r->hop[j].nh, wire, st[j]);
      if (conv)
        ring_materialize(r, j, k, arr[j], t_stop);
    }
    for (int j = 0; j < q; j++) {
      if (st[j] >= bound)
        continue;
      sim_time_ps pred = arr[j == 0 ? q - 1 : j - 1];
      sim_time_ps done = MAX(r->nccl ? st[j] : arr[j], pred);
      sim_time_ps next = done == RING_NEVER ? done : done + rwait[j] + extra;
      if (conv && next >= t_stop) { /* member j is in step k at t_stop */
        coll_slot *sl = &r->slot[r->gmember[j]];
        sl->cur = k;
        sl->need = 1;
        sl->moved = 1;
        sl->red = rb[j];
        sl->state = SLOT_RUNNING;
        if (done < t_stop) { /* its transfers are in: in its local wait until next */
          sl->state = SLOT_REDUCING;
          sim_post_at(c->sim, next, reduce_done, r, (uint64_t)r->gmember[j]);
        }
      }
      st[j] = next;
    }
  }
  for (int j = 0; j < q; j++) {
    if (!conv)
      r->fin[r->gmember[j]] = st[j];
    else if (st[j] < t_stop || r->done_ev[r->gmember[j]] == SIM_EVENT_NONE)
      r->slot[r->gmember[j]].cur = K; /* done (its done event has run) */
  }
  g_free(st);
  g_free(arr);
  g_free(snd);
  g_free(rb);
  g_free(rwait);
}

/* Member m's done time under the recurrence: as slot_advance's end of a
 * member (no library post-delay: library runs never take the
 * recurrence). */
static void ring_member_done(sim_engine *sim, void *ctx, uint64_t arg)
{
  (void)sim;
  coll_run *r = ctx;
  coll_rt *c = r->lib;
  int m = (int)arg;
  r->done_ev[m] = SIM_EVENT_NONE;
  r->chunks_left[m] = 0;
  r->members_left--;
  ovl_end(r, m);
  if (r->done != NULL)
    r->done(c->sim, r->ctx, r->cookie, m);
  if (r->members_left == 0)
    run_finish(c, r);
}

/* The claim's callback: another transfer is about to use a link of the
 * ring at `now`.  Takes back the recurrence's charges, replays it up to
 * now and leaves the run in the per-transfer state (see above).
 * O(q K). */
static void ring_convert(void *ctx)
{
  coll_run *r = ctx;
  coll_rt *c = r->lib;
  sim_time_ps now = sim_now(c->sim);
  net_claim_release(c->n, r->claim);
  r->claim = 0;
  c->ring.conversions++;
  for (int j = 0; j < r->n; j++) {
    net_route_reset(c->n, r->hop[j].src, r->hop[j].dst, r->t0);
    net_uncredit(c->n, r->hop[j].src, r->hop[j].dst, r->hop[j].total, r->n_steps);
  }
  run_alloc_counters(r);
  ring_recurrence(r, now);
  for (int m = 0; m < r->n; m++)
    if (r->done_ev[m] != SIM_EVENT_NONE) {
      sim_cancel(c->sim, r->done_ev[m]);
      r->done_ev[m] = SIM_EVENT_NONE;
    }
}

/* Takes the recurrence for run r when its hops are link-disjoint and
 * every link is idle and unclaimed now; schedules the members' done
 * events and claims the links.  Returns FALSE (nothing changed) when the
 * run must go per transfer.  O(q K + route lengths). */
static gboolean ring_begin(coll_rt *c, coll_run *r)
{
  if (!ring_candidate(c, r))
    return FALSE;
  const topo *t = c->t;
  sim_time_ps now = sim_now(c->sim);
  uint32_t nl = topo_n_links(t);
  if (c->link_stamp == NULL)
    c->link_stamp = g_new0(uint32_t, nl ? nl : 1);
  if (++c->stamp == 0) {
    memset(c->link_stamp, 0, sizeof *c->link_stamp * (nl ? nl : 1));
    c->stamp = 1;
  }
  int q = r->n;
  ring_hop *hop = g_new(ring_hop, (size_t)q);
  gboolean ok = TRUE;
  for (int j = 0; j < q && ok; j++) {
    hop[j].src = r->ranks[r->gmember[j]];
    hop[j].dst = r->ranks[r->gmember[(j + 1) % q]];
    hop[j].inv = 1.0;
    if (r->nccl)
      hop[j].inv = pair_is_inter(t, hop[j].src, hop[j].dst) ? r->inv_eff_inter : r->inv_eff_intra;
    net_hop_init(c->n, hop[j].src, hop[j].dst, &hop[j].nh);
    uint32_t n_links = hop[j].nh.n_links;
    const uint32_t *route = hop[j].nh.route;
    ok = n_links > 0;
    for (uint32_t k = 0; k < n_links && ok; k++) {
      ok = c->link_stamp[route[k]] != c->stamp && net_link_idle(c->n, route[k], now);
      c->link_stamp[route[k]] = c->stamp;
    }
  }
  if (!ok) {
    g_free(hop);
    c->ring.shared++;
    return FALSE;
  }
  c->ring.runs++;
  r->hop = hop;
  r->t0 = now;
  r->fin = g_new(sim_time_ps, (size_t)q);
  r->done_ev = g_new(sim_event_id, (size_t)q);
  ring_recurrence(r, RING_NEVER);
  r->claim = net_claim_new(c->n, ring_convert, r);
  for (int j = 0; j < q; j++)
    net_claim_route(c->n, r->claim, hop[j].src, hop[j].dst);
  for (int m = 0; m < q; m++)
    r->done_ev[m] = sim_schedule_at(c->sim, r->fin[m], ring_member_done, r, (uint64_t)m);
  return TRUE;
}

void coll_rt_set_ring_recurrence(coll_rt *c, int min_members)
{
  c->ring_min_delta = (min_members <= 0 ? 65537 : min_members) - COLL_RING_RECURRENCE_MIN;
}

const coll_ring_stats *coll_rt_ring_stats(const coll_rt *c)
{
  return &c->ring;
}

static void run_begin(sim_engine *sim, void *ctx, uint64_t arg)
{
  (void)sim;
  (void)arg;
  coll_run *r = ctx;
  coll_rt *c = r->lib;
  uint32_t n_slots = (uint32_t)r->n * (uint32_t)r->n_chunks;
  /* Slots start in member order; a finished run stays allocated until
   * the loop is over (later kicks of finished slots do nothing). */
  gboolean fin = FALSE;
  if (r->n_steps == 0) {
    /* Nothing to move (one member, or a zero-step plan): all done now. */
    for (int m = 0; m < r->n; m++)
      if (r->done != NULL)
        r->done(c->sim, r->ctx, r->cookie, m);
    run_finish(c, r);
    return;
  }
  if (ring_begin(c, r))
    return;
  run_alloc_counters(r);
  if (r->held != NULL)
    for (int m = 0; m < r->n; m++)
      if (!r->held[m])
        r->t_begin[m] = sim_now(c->sim);
  for (uint32_t s = 0; s < n_slots; s++)
    if (kick(c, r, s))
      fin = TRUE;
  if (fin)
    run_finish(c, r);
}

gboolean coll_desc_check(const topo *t, const coll_desc *d, GError **error)
{
  coll_prim prim;
  int nr = topo_n_ranks(t);
  if (!coll_prim_from_type(d->type, &prim)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED, "collective type %d is not a collective wisp runs",
                (int)d->type);
    return FALSE;
  }
  if (d->n_ranks < 1 || d->n_ranks > 65536) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "a collective needs 1 to 65536 members, this one has %d", d->n_ranks);
    return FALSE;
  }
  gboolean *seen = g_new0(gboolean, nr > 0 ? nr : 1);
  gboolean ok = TRUE;
  for (int i = 0; i < d->n_ranks && ok; i++) {
    int rk = d->ranks[i];
    if (rk < 0 || rk >= nr) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "collective member %d is rank %d, but the network %s has ranks 0..%d", i, rk,
                  topo_source(t), nr - 1);
      ok = FALSE;
    } else if (seen[rk]) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "rank %d appears twice in one collective group", rk);
      ok = FALSE;
    } else {
      seen[rk] = TRUE;
    }
  }
  if (ok && et_coll_rooted(d->type)) {
    if (d->root < 0 || d->root >= nr || !seen[d->root]) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s root %d is not a member of its group; give the root's global rank",
                  coll_prim_name(prim), d->root);
      ok = FALSE;
    }
  }
  if (ok && prim == COLL_PRIM_ALL_TO_ALLV && d->splits == NULL) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "all_to_allv needs per-peer sizes (n_ranks x n_ranks bytes)");
    ok = FALSE;
  }
  g_free(seen);
  return ok;
}

/* Identity of a buffer the replay did not name: (type, bytes, group).
 * O(n). */
static uint64_t derived_buffer(const coll_desc *d)
{
  uint64_t h = wisp_mix64((uint64_t)d->type * 1000003u ^ d->bytes);
  for (int i = 0; i < d->n_ranks; i++)
    h = wisp_mix64(h ^ (uint64_t)(uint32_t)d->ranks[i]);
  return h | 1u; /* never 0 */
}

/* The core partitions of every fan-out step of the run (every member,
 * chunk and step that sends to two or more peers), computed when the
 * collective starts: they depend only on the plan and the sizes.  Fills
 * the partition figures of info and the statistics, and pol[m] with the
 * policy generation time member m pays before its transfers: the sum of
 * its distinct LPT partitions first computed by this collective (the
 * library caches policies per shape, reference §6), when the core term
 * applies.  Nothing with SDMA (the engines, not the cores, move the
 * data).  O(members x chunks x steps x n log n) plus the partitioner on
 * cache misses. */
static void library_partitions(coll_rt *c, coll_run *r, coll_info *info, sim_time_ps *pol)
{
  const coll_library_params *lp = &c->pol.lib;
  if (lp->sdma || !r->libmode)
    return;
  int n = r->n;
  coll_library_peer_load *ld = g_new(coll_library_peer_load, 2 * (size_t)n + 2);
  int *order = g_new(int, 2 * (size_t)n + 2);
  int *dst = g_new(int, 2 * (size_t)n + 2);
  GPtrArray *paid = g_ptr_array_new();
  double spread_sum = 0;
  uint64_t parts = 0;
  for (int m = 0; m < n; m++) {
    g_ptr_array_set_size(paid, 0);
    for (int ch = 0; ch < r->n_chunks; ch++) {
      for (uint32_t k = 0; k < r->n_steps; k++) {
        a2av_ctx x;
        coll_sched sc;
        int pos;
        const coll_phase *ph = member_sched(r, m, ch, k, &x, &sc, &pos);
        uint32_t n_recv = 0;
        uint64_t red = 0;
        uint32_t nx = coll_sched_step(&sc, pos, k - ph->step0, r->scratch, &n_recv, &red);
        if (nx < 2)
          continue;
        for (uint32_t i = 0; i < nx; i++)
          dst[i] = r->ranks[pos_member(r, ph, x.base, r->scratch[i].peer, ch)];
        step_loads(c, r->ranks[m], r->scratch, dst, nx, ld);
        const part_val *v = lib_partition(c, ld, (int)nx, order);
        if (v->res.units == 0)
          continue;
        parts++;
        spread_sum += v->res.spread;
        c->lstats.partitions++;
        c->lstats.core_spread_sum += v->res.spread;
        c->lstats.core_spread_max = MAX(c->lstats.core_spread_max, v->res.spread);
        c->lstats.core_makespan_max_ps = MAX(c->lstats.core_makespan_max_ps, v->res.makespan_ps);
        if (info != NULL && v->res.makespan_ps > info->core_makespan_ps) {
          info->core_makespan_ps = v->res.makespan_ps;
          info->core_spread = v->res.spread;
          info->core_units = v->res.units;
          info->core_member = m;
        }
        if (info != NULL)
          info->policy_gen_ps = MAX(info->policy_gen_ps, v->res.policy_ps);
        gboolean seen = FALSE;
        for (guint i = 0; i < paid->len && !seen; i++)
          seen = g_ptr_array_index(paid, i) == v;
        if (r->core_term && lp->balanced && v->born == c->op_seq && !seen) {
          g_ptr_array_add(paid, (gpointer)v);
          pol[m] += v->res.policy_ps;
        }
      }
    }
    c->lstats.policy_ps += pol[m];
    if (info != NULL)
      info->policy_ps = MAX(info->policy_ps, pol[m]);
  }
  if (info != NULL && parts > 0)
    info->core_spread_mean = spread_sum / (double)parts;
  g_ptr_array_free(paid, TRUE);
  g_free(dst);
  g_free(order);
  g_free(ld);
}

/* Staging traffic of one member through HBM while its collective is in
 * flight, for the interference model (reference §7: "staging B/s"): its
 * copy bytes over the op's time as estimated when it starts, copies
 * (1 - overlap) / b_copy + steps x sigma_sig per staging round + V /
 * beta_min, V = (n - 1) x per-peer bytes sent (twice for all-reduce), the
 * ring's volume at its slowest hop.  The event model lumps copy-in before
 * and copy-out after the transfers; a real staging library pipelines them
 * with the steps, so the traffic is spread over the op.  O(1). */
static uint64_t ovl_stage_rate(const coll_run *r, const coll_library_params *lp, et_coll_type type, uint64_t in_b,
                               uint64_t out_b, uint64_t per_peer)
{
  uint64_t copy = in_b + out_b;
  if (copy == 0 || lp->b_copy == 0)
    return 0;
  double secs = (double)copy * (1.0 - lp->overlap) / (double)lp->b_copy +
                (double)r->n_steps * (double)(r->sync_mult > 0 ? r->sync_mult : 1) * (double)lp->sigma_sig / 1e12 +
                (double)(r->n - 1) * (double)per_peer * (type == ET_COLL_ALL_REDUCE ? 2.0 : 1.0) /
                    (double)(r->beta_ring_min > 0 ? r->beta_ring_min : 1);
  return secs > 0 ? (uint64_t)llround((double)copy / secs) : 0;
}

/* The library's per-member pre-delays (registration, staging copy-in,
 * SDMA submission), decided when the collective starts; members with a
 * delay are held and released by an event.  O(n) plus the registration
 * bookkeeping; nothing for nccl. */
static void library_start(coll_rt *c, coll_run *r, const coll_desc *d, coll_info *info)
{
  const coll_library_params *lp = &c->pol.lib;
  if (!coll_library_has_engine(lp->kind))
    return;
  c->lstats.ops_total++;
  if (r->n_steps == 0 || r->n < 2)
    return;
  sim_time_ps now = sim_now(c->sim);
  uint64_t in_b = 0, out_b = 0, per_peer = 0;
  uint64_t m = r->prim == COLL_PRIM_ALL_TO_ALLV ? r->bytes : d->bytes;
  if (!coll_library_io_bytes(d->type, m, r->n, &in_b, &out_b, &per_peer))
    return; /* no data buffer (barrier): only the per-step sync applies */
  r->held = g_new0(uint8_t, r->n);
  r->t_begin = g_new0(sim_time_ps, r->n);
  sim_time_ps pre_common = 0;
  sim_time_ps *stage_in = NULL; /* all-to-allv staging: per member */
  sim_time_ps *pol = g_new0(sim_time_ps, r->n);
  library_partitions(c, r, info, pol);
  if (lp->reg == COLL_REG_STAGING) {
    /* A buffer larger than buffsize runs in rounds, each paying the
     * algorithm's synchronisation again (§5.4): sigma_sig per step once
     * per round (the rounds' data is the op's data). */
    uint64_t big = MAX(in_b, out_b);
    uint64_t rounds = big == 0 ? 1 : (big - 1) / lp->buffsize + 1;
    r->sync_mult = (int)MIN(rounds, (uint64_t)INT_MAX);
    uint64_t bytes = 0;
    if (r->splits != NULL) {
      /* All-to-allv: each member copies in what it sends and out what it
       * receives (an MoE dispatch's hot expert ranks receive more). */
      stage_in = g_new0(sim_time_ps, r->n);
      r->copy_out_m = g_new0(uint64_t, r->n);
      for (int a = 0; a < r->n; a++) {
        uint64_t snd = 0;
        for (int b = 0; b < r->n; b++) {
          snd += r->splits[(size_t)a * r->n + b];
          r->copy_out_m[b] += r->splits[(size_t)a * r->n + b];
        }
        sim_time_ps cp = wisp_transfer_ps(snd, lp->b_copy);
        stage_in[a] = lp->t_copy0 + cp - (sim_time_ps)llround((double)cp * lp->overlap);
        bytes += 2 * snd;
        c->lstats.staging_ps += cp;
      }
    } else {
      sim_time_ps cp = wisp_transfer_ps(in_b, lp->b_copy);
      pre_common += lp->t_copy0 + cp - (sim_time_ps)llround((double)cp * lp->overlap);
      r->copy_out = out_b;
      bytes = (in_b + out_b) * (uint64_t)r->n;
      c->lstats.staging_ps += (sim_time_ps)r->n * wisp_transfer_ps(in_b, lp->b_copy);
    }
    c->lstats.staging_bytes += bytes;
    if (info)
      info->staging_bytes = bytes;
  }
  if (lp->sdma) {
    uint64_t n_desc = (uint64_t)(r->n - 1) * (per_peer == 0 ? 1 : (per_peer - 1) / lp->desc_bytes + 1);
    uint64_t rounds = (n_desc + (uint64_t)lp->cores - 1) / (uint64_t)lp->cores;
    sim_time_ps sub = (sim_time_ps)rounds * lp->t_desc + lp->t_db;
    pre_common += sub;
    c->lstats.core_occupancy_us += (double)lp->cores * (double)sub / 1e6 * (double)r->n;
  }
  if (c->ovl_fn != NULL) {
    /* What one member in flight adds on its rank (§7): MTE keeps the
     * op's cores busy for the whole op; SDMA releases them (mode I keeps
     * c_poll polling) and leaves a residual; staging copies load HBM. */
    r->ovl_on = g_new0(uint8_t, r->n);
    r->ovl_cores = lp->sdma ? (lp->sdma_poll ? lp->c_poll : 0) : lp->cores;
    r->ovl_sdma = lp->sdma ? 1 : 0;
    r->ovl_rate = lp->reg == COLL_REG_STAGING ? ovl_stage_rate(r, lp, d->type, in_b, out_b, per_peer) : 0;
  }
  uint64_t buf = d->buffer != 0 ? d->buffer : derived_buffer(d);
  if (c->reg != NULL) {
    if (d->alloc_known)
      coll_library_reg_known(c->reg, buf, per_peer, r->ranks, r->n, d->alloc_time, &c->lstats);
    else
      coll_library_reg_synthetic(c->reg, buf, per_peer, r->ranks, r->n, now, &c->lstats);
  }
  for (int i = 0; i < r->n; i++) {
    sim_time_ps pre = pre_common + pol[i] + (stage_in != NULL ? stage_in[i] : 0), w = 0;
    if (c->reg != NULL) {
      uint64_t hits0 = c->lstats.hits, miss0 = c->lstats.jit_misses;
      w = coll_library_reg_use(c->reg, buf, per_peer, i, r->ranks[i], r->n, now, &c->lstats) - now;
      pre += w;
      if (info) {
        info->reg_max_ps = MAX(info->reg_max_ps, w);
        info->barrier_hits += (int)(c->lstats.hits - hits0);
        info->jit_misses += (int)(c->lstats.jit_misses - miss0);
      }
    }
    /* The member's kernel runs after its registration wait (host-side
     * mapping); scheduled before its release, so it counts first at equal
     * times. */
    if (r->ovl_on != NULL) {
      if (w > 0)
        sim_post_after(c->sim, w, ovl_begin_ev, r, (uint64_t)i);
      else
        ovl_begin(r, i);
    }
    if (pre > 0) {
      r->held[i] = 1;
      sim_post_after(c->sim, pre, member_release, r, (uint64_t)i);
    }
  }
  g_free(stage_in);
  g_free(pol);
}

/* ---- NCCL model (library nccl; coll_nccl.h) ---------------------------- */

static coll_nccl_func nccl_func_of(coll_prim p)
{
  switch (p) {
  case COLL_PRIM_ALL_REDUCE: return COLL_NFUNC_ALL_REDUCE;
  case COLL_PRIM_REDUCE_SCATTER: return COLL_NFUNC_REDUCE_SCATTER;
  case COLL_PRIM_ALL_GATHER: return COLL_NFUNC_ALL_GATHER;
  case COLL_PRIM_BROADCAST: return COLL_NFUNC_BROADCAST;
  case COLL_PRIM_REDUCE: return COLL_NFUNC_REDUCE;
  default: return COLL_NFUNC_P2P;
  }
}

/* Per-GPU scale-up bandwidth of dimension 0 in bytes/s, per direction:
 * a switch or ring port, every pair of a fully connected node, both
 * directions of a bidirectional ring or torus axis.  O(1). */
static double dim0_gpu_bw(const topo *t)
{
  double bw = (double)topo_dim_bw(t, 0);
  switch (topo_dim_kind(t, 0)) {
  case TOPO_KIND_FULLY_CONNECTED: return bw * (topo_dim_size(t, 0) - 1);
  case TOPO_KIND_RING: return 2 * bw;
  case TOPO_KIND_TORUS2D: return 4 * bw;
  case TOPO_KIND_TORUS3D: return 6 * bw;
  default: return bw;
  }
}

/* The NCCL model's view of the group (coll_nccl_comm) from the topology:
 * a node is a set of ranks with equal coordinates in every dimension but
 * the innermost; one NIC per GPU on dimension 1 (rail-optimised); then
 * NCCL's choice of algorithm and protocol for the collective's S bytes,
 * the plan that algorithm runs (ring: one member order per rail on
 * several nodes; tree: double binary tree; NVLS: in-switch reduction;
 * NVLS-tree: NVLS inside the node, the network between, pipelined),
 * the efficiencies and the latencies.  O(n) time and memory (the rail
 * orders: O(rails * n)). */
/* The nodes of the run's members, numbered in order of first appearance:
 * members share a node when their coordinates above dimension 0 agree
 * (graphs: one node).  node[m] gets member m's node; returns the count.
 * O(n x dims). */
static int nccl_nodes(const coll_rt *c, const coll_run *r, int *node)
{
  const topo *t = c->t;
  int n = r->n;
  int nd = topo_n_dims(t);
  gboolean dims_ok = !topo_is_graph(t) && nd >= 1;
  int64_t *key = g_new(int64_t, (size_t)n);
  int n_nodes = 0;
  GHashTable *seen = g_hash_table_new(g_int64_hash, g_int64_equal);
  for (int m = 0; m < n; m++) {
    int64_t k = 0;
    for (int dd = nd - 1; dd >= 1 && dims_ok; dd--)
      k = k * (int64_t)topo_dim_size(t, dd) + topo_rank_coord(t, r->ranks[m], dd);
    key[m] = k;
    gpointer v = g_hash_table_lookup(seen, &key[m]);
    if (v == NULL) {
      g_hash_table_insert(seen, &key[m], GINT_TO_POINTER(n_nodes + 1));
      node[m] = n_nodes++;
    } else {
      node[m] = GPOINTER_TO_INT(v) - 1;
    }
  }
  g_hash_table_destroy(seen);
  g_free(key);
  return n_nodes;
}

/* The communicator NCCL's tuner sees: ranks, nodes, SM version, NVLink
 * and NIC bandwidths, network latency and overhead, NVLS, channels. */
static void nccl_comm_of(const coll_rt *c, const coll_run *r, int n_nodes, int ppn, coll_nccl_comm *out)
{
  const topo *t = c->t;
  const coll_library_params *lp = &c->pol.lib;
  int n = r->n;
  int nd = topo_n_dims(t);
  gboolean dims_ok = !topo_is_graph(t) && nd >= 1;
  coll_nccl_comm cm = { 0 };
  cm.n_ranks = n;
  cm.n_nodes = n_nodes;
  cm.sm = lp->sm;
  cm.nvlink = dims_ok;
  if (dims_ok) {
    cm.intra_GBps = dim0_gpu_bw(t) / 1e9;
  } else {
    wisp_bw_Bps bw = ring_beta_min(t, r->ranks, n);
    cm.intra_GBps = (double)bw / 1e9;
  }
  cm.link_GBps = lp->nvlink_link_bw > 0 ? (double)lp->nvlink_link_bw / 1e9 : lp->sm >= 100 ? 50.0 : 25.0;
  cm.nic_GBps = dims_ok && nd >= 2 ? (double)ppn * (double)topo_dim_bw(t, 1) / 1e9 : 0.0;
  cm.net_lat_us = (double)lp->net_latency / 1e6;
  cm.net_overhead_us = (double)lp->net_overhead / 1e6;
  cm.nvls = c->pol.in_switch_reduction && dims_ok && topo_dim_kind(t, 0) == TOPO_KIND_SWITCH && lp->sm >= 90;
  cm.channels = lp->channels;
  *out = cm;
}

/* The algorithm forced on the tuner: the library's (NCCL_ALGO), else the
 * config's or --algo's wisp name where it names an NCCL algorithm. */
static int nccl_forced_algo(const coll_rt *c, const coll_run *r, int n_nodes)
{
  const coll_library_params *lp = &c->pol.lib;
  int fa = lp->nccl_algo;
  if (fa == COLL_NALGO_AUTO && c->pol.n_algo[r->prim] != 0) {
    coll_algo w = c->pol.algo[r->prim][0];
    if (w == COLL_ALGO_RING || w == COLL_ALGO_RING_BIDIR)
      fa = COLL_NALGO_RING;
    else if (w == COLL_ALGO_DOUBLE_BINARY_TREE)
      fa = COLL_NALGO_TREE;
    else if (w == COLL_ALGO_NVLS)
      fa = n_nodes > 1 ? COLL_NALGO_NVLS_TREE : COLL_NALGO_NVLS;
  }
  return fa;
}

/* The pipeline of the chosen algorithm and protocol: slice bytes of a
 * ring broadcast/reduce, chunk bytes of a tree, and the slices a
 * connection holds in flight (LL/LL128: as fine as COLL_NCCL_MAX_CHUNKS
 * allows; flow tier: one). */
static void nccl_pipeline(const coll_rt *c, coll_run *r, const coll_nccl_model *mdl, coll_nccl_func f,
                          coll_nccl_algo a, coll_proto p, uint64_t s)
{
  const coll_library_params *lp = &c->pol.lib;
  int n = r->n;
  if (a == COLL_NALGO_RING && (f == COLL_NFUNC_BROADCAST || f == COLL_NFUNC_REDUCE))
    r->pipe_bytes = coll_nccl_slice_bytes(f, a, p, lp->buffsize) * (uint64_t)MAX(mdl->channels, 1);
  if (a == COLL_NALGO_TREE) {
    /* NCCL's tree pipelines chunks up and down the tree; wisp's tree
     * depth (levels of a binary tree over n) stands for NCCL's. */
    int depth = 1;
    while ((1 << depth) < n + 1)
      depth++;
    r->pipe_bytes = coll_nccl_tree_chunk_bytes(p, lp->buffsize, s, mdl->channels, depth) *
                    (uint64_t)MAX(mdl->channels, 1);
  }
  r->fifo_chunks = COLL_NCCL_FIFO_SLOTS;
  if (r->pipe_bytes > 0 && p != COLL_PROTO_SIMPLE) {
    /* LL and LL128 forward each line (8 of 16 bytes, 120 of 128) as soon
     * as its flag arrives (NCCL's LL primitives poll per line), so their
     * pipeline is as fine as the simulation affords: COLL_NCCL_MAX_CHUNKS
     * pieces of at least one 128-byte line; a connection still holds
     * NCCL_STEPS slices in flight, i.e. that many slices' worth of these
     * pieces. */
    uint64_t slices = r->pipe_bytes * COLL_NCCL_FIFO_SLOTS;
    r->pipe_bytes = MAX((uint64_t)128, (r->bytes + COLL_NCCL_MAX_CHUNKS - 1) / COLL_NCCL_MAX_CHUNKS);
    r->fifo_chunks = (int)MIN((uint64_t)G_MAXINT / 64, MAX(slices / r->pipe_bytes, (uint64_t)COLL_NCCL_FIFO_SLOTS));
  } else if (net_get_tier(c->n) == NET_TIER_FLOW) {
    /* The flow tier shares a link max-min fairly among the transfers on
     * it, so slices in flight together would arrive together and the
     * pipeline would not fill one slice at a time; one slice per lane and
     * step in flight keeps NCCL's FIFO order there, at the price of one
     * route latency per slice (under 10 % for a 512 KiB x 16-channel
     * slice at 720 GB/s and 1 us). */
    r->fifo_chunks = 1;
  }
}

/* One ring per rail when the members fill n_nodes nodes of ppn GPUs each
 * (r->lanes, r->lperm, r->linv); nothing when a node holds more or fewer.
 * O(lanes x n). */
static void nccl_rail_rings(coll_run *r, const int *node, int n_nodes, int ppn)
{
  int n = r->n;
  /* One ring per rail: lane l visits node 0 from local rank l up to
   * l-1, node 1 backwards from l-1 to l, and so on, so that every
   * node-to-node hop joins two GPUs of the same rail (one NIC each). */
  int lanes = MIN(ppn, 32);
  int **loc = g_new(int *, n_nodes);
  int *cnt = g_new0(int, n_nodes);
  for (int k = 0; k < n_nodes; k++)
    loc[k] = g_new(int, ppn);
  gboolean uniform = TRUE;
  for (int m = 0; m < n; m++) {
    if (cnt[node[m]] >= ppn)
      uniform = FALSE;
    else
      loc[node[m]][cnt[node[m]]++] = m;
  }
  if (uniform) {
    r->lanes = lanes;
    r->lperm = g_new(int, (size_t)lanes * (size_t)n);
    r->linv = g_new(int, (size_t)lanes * (size_t)n);
    for (int l = 0; l < lanes; l++)
      for (int k = 0; k < n_nodes; k++)
        for (int j = 0; j < ppn; j++) {
          int li = k % 2 == 0 ? (l + j) % ppn : ((l - 1 - j) % ppn + ppn) % ppn;
          int pos = k * ppn + j;
          int m = loc[k][li];
          r->lperm[(size_t)l * n + pos] = m;
          r->linv[(size_t)l * n + m] = pos;
        }
  }
  for (int k = 0; k < n_nodes; k++)
    g_free(loc[k]);
  g_free(loc);
  g_free(cnt);
}

/* The wisp algorithms that carry out NCCL's choice a (function f) on this
 * run: forced flat, per-dimension or outer algorithms, rail rings. */
static void nccl_apply_algo(coll_run *r, coll_nccl_algo a, coll_nccl_func f, const int *node, int n_nodes, int ppn)
{
  int n = r->n;
  switch (a) {
  case COLL_NALGO_RING:
    r->force_flat = COLL_ALGO_RING;
    if (n_nodes > 1 && ppn > 1 && ppn * n_nodes == n)
      nccl_rail_rings(r, node, n_nodes, ppn);
    if (r->n_g > 1 || r->lperm != NULL)
      plan_flat(r);
    break;
  case COLL_NALGO_TREE:
    if (n_nodes > 1 && ppn > 1 && r->n_g > 1 && f == COLL_NFUNC_ALL_REDUCE) {
      /* NCCL's tree on several nodes: a chain through each node to a head
       * GPU, a double binary tree between the heads over the network,
       * one tree per channel with the heads (and NICs) spread over the
       * node's GPUs (src/graph/trees.cc, connect.cc).  Summed over the
       * channels that is a reduce-scatter inside the node, the tree
       * between the nodes on each rail, and an all-gather inside the
       * node, pipelined chunk by chunk. */
      r->force_dim0 = COLL_ALGO_RING;
      r->force_outer = COLL_ALGO_DOUBLE_BINARY_TREE;
      break;
    }
    r->force_flat = COLL_ALGO_DOUBLE_BINARY_TREE;
    if (r->n_g > 1)
      plan_flat(r);
    break;
  case COLL_NALGO_NVLS:
    r->force_flat = COLL_ALGO_NVLS;
    break;
  case COLL_NALGO_NVLS_TREE:
    /* NCCL's NVLS-tree: NVLS inside the node, a tree between the nodes
     * (src/graph/connect.cc connectNvls / the tree's inter-node part);
     * network switches do no reduction (no SHARP here, that is CollNet). */
    r->force_dim0 = COLL_ALGO_NVLS;
    r->force_outer = COLL_ALGO_DOUBLE_BINARY_TREE;
    r->nvls_paired = TRUE;
    break;
  default:
    break;
  }
}

/* NCCL's plan for run r: the communicator's nodes, the tuner's choice of
 * algorithm and protocol for this size, their efficiencies, base and
 * per-hop latency, pipeline, and the wisp algorithms that carry it out.
 * O(n x dims) plus the tuner's table. */
static void nccl_plan(coll_rt *c, coll_run *r, const coll_desc *d)
{
  const coll_library_params *lp = &c->pol.lib;
  int n = r->n;
  r->nccl = TRUE;
  r->force_flat = r->force_dim0 = r->force_outer = COLL_ALGO_AUTO;
  r->inv_eff_intra = r->inv_eff_inter = 1.0;
  int *node = g_new(int, (size_t)n);
  int n_nodes = nccl_nodes(c, r, node);
  int ppn = n / MAX(n_nodes, 1);
  coll_nccl_comm cm;
  nccl_comm_of(c, r, n_nodes, ppn, &cm);
  coll_nccl_model *mdl = g_new(coll_nccl_model, 1);
  coll_nccl_model_build(&cm, mdl);
  coll_nccl_func f = nccl_func_of(r->prim);
  uint64_t s = r->prim == COLL_PRIM_ALL_TO_ALLV ? r->bytes : coll_algbw_bytes(d->type, d->bytes, n);
  int fa = nccl_forced_algo(c, r, n_nodes);
  coll_nccl_algo a;
  coll_proto p;
  coll_nccl_select(mdl, f, s, fa, lp->nccl_proto, &a, &p);
  r->nalgo = a;
  r->proto = p;
  r->inv_eff_intra = 1.0 / coll_nccl_efficiency(mdl, f, a, p, FALSE, s);
  r->inv_eff_inter = 1.0 / coll_nccl_efficiency(mdl, f, a, p, TRUE, s);
  double base_us = 0, hop_us = 0;
  coll_nccl_latency(mdl, f, a, p, s, &base_us, &hop_us);
  sim_time_ps base_ps = 0;
  wisp_ps_from_us(base_us, &base_ps);
  r->t_base = base_ps + lp->launch * (sim_time_ps)MAX(lp->gpus_per_thread, 1);
  r->hop_us = hop_us;
  nccl_pipeline(c, r, mdl, f, a, p, s);
  nccl_apply_algo(r, a, f, node, n_nodes, ppn);
  g_free(mdl);
  g_free(node);
}

/* Spreads the tuner's per-hop latency over the plan's steps: each step of
 * phase i waits step_extra[i] more, less the route latency the network
 * already charges for that step's hop (NCCL's per-hop figures include the
 * wire).  O(phases). */
static void nccl_latency(coll_rt *c, coll_run *r, const coll_desc *d)
{
  (void)d;
  if (r->n_steps == 0)
    return;
  /* Steps on the critical path: a tree's steps chain through its levels. */
  double crit = 0;
  for (int i = 0; i < r->n_phases; i++) {
    const coll_phase *ph = &r->ph[i];
    int q = ph->g < 0 ? r->n : r->gsize[ph->g];
    int depth = 1;
    while ((1 << depth) < q + 1)
      depth++;
    crit += (double)ph->n_steps * (ph->algo == COLL_ALGO_DOUBLE_BINARY_TREE ? depth : 1);
  }
  double share_us = r->hop_us / crit;
  sim_time_ps share = 0;
  wisp_ps_from_us(share_us, &share);
  for (int i = 0; i < r->n_phases; i++) {
    const coll_phase *ph = &r->ph[i];
    int a, b;
    if (ph->g < 0) {
      a = pos_member(r, ph, 0, 0, 0);
      b = pos_member(r, ph, 0, 1 % r->n, 0);
    } else {
      a = r->gmember[0];
      b = r->gmember[r->gstride[ph->g]];
    }
    sim_time_ps lat = 0;
    topo_route_cost(c->t, r->ranks[a], r->ranks[b], &lat, NULL);
    r->step_extra[i] = share > lat ? share - lat : 0;
  }
}

/* A new run of d for the members d->ranks: the root member, the internal
 * byte count D (coll_sched.bytes) from Chakra's comm_size, and for
 * all-to-allv its split matrix (D: the largest a member sends or
 * receives, in *a2av_max).  O(n), all-to-allv O(n^2). */
static coll_run *new_run(coll_rt *c, const coll_desc *d, coll_prim prim, coll_done_fn done, void *ctx,
                         uint64_t cookie, gboolean p2p, uint64_t *a2av_max_out)
{
  coll_run *r = g_new0(coll_run, 1);
  r->lib = c;
  r->prim = prim;
  r->p2p = p2p;
  r->n = d->n_ranks;
  r->ranks = g_memdup2(d->ranks, sizeof(int) * (size_t)d->n_ranks);
  r->done = done;
  r->ctx = ctx;
  r->cookie = cookie;
  r->root_member = -1;
  for (int i = 0; i < r->n; i++) {
    g_assert(r->ranks[i] >= 0 && r->ranks[i] < topo_n_ranks(c->t));
    if (r->ranks[i] == d->root)
      r->root_member = i;
  }
  switch (prim) {
  case COLL_PRIM_BROADCAST:
  case COLL_PRIM_REDUCE:
  case COLL_PRIM_GATHER:
  case COLL_PRIM_SCATTER:
    g_assert(r->root_member >= 0);
    break;
  default:
    r->root_member = -1;
  }
  /* Internal D (coll_sched.bytes) from Chakra's comm_size. */
  switch (prim) {
  case COLL_PRIM_ALL_GATHER:
  case COLL_PRIM_GATHER:
  case COLL_PRIM_SCATTER:
    r->bytes = d->bytes * (uint64_t)r->n;
    break;
  case COLL_PRIM_BARRIER:
    r->bytes = 0;
    break;
  default:
    r->bytes = d->bytes;
  }
  uint64_t a2av_max = 0;
  if (prim == COLL_PRIM_ALL_TO_ALLV) {
    g_assert(d->splits != NULL);
    size_t nn = (size_t)r->n * (size_t)r->n;
    r->splits = g_memdup2(d->splits, sizeof(uint64_t) * nn);
    for (int a = 0; a < r->n; a++) {
      uint64_t snd = 0, rcv = 0;
      for (int b = 0; b < r->n; b++) {
        snd += r->splits[(size_t)a * r->n + b];
        rcv += r->splits[(size_t)b * r->n + a];
      }
      a2av_max = MAX(a2av_max, MAX(snd, rcv));
    }
    r->bytes = a2av_max;
  }
  *a2av_max_out = a2av_max;
  return r;
}

/* A run under a library engine (hccl, stratacl, ...): flat operators over
 * the whole group in communicator order unless the config names an
 * algorithm, the core term, and the library's fabric and partition cache,
 * made once per runtime. */
static void library_plan(coll_rt *c, coll_run *r, coll_prim prim, gboolean p2p)
{
  /* The libraries run the reference's flat operators over the whole
   * group in communicator order (ring, halving-doubling, full mesh;
   * §5.1), not wisp's per-dimension plans, unless the config names an
   * algorithm for this collective. */
  if (c->pol.n_algo[prim] == 0 || p2p)
    plan_flat(r);
  r->libmode = TRUE;
  r->sync_mult = 1;
  r->beta_ring_min = ring_beta_min(c->t, r->ranks, r->n);
  const coll_library_params *lp = &c->pol.lib;
  r->core_term = !lp->sdma && (prim == COLL_PRIM_ALL_TO_ALL || prim == COLL_PRIM_ALL_TO_ALLV ? lp->a2a_core_term
                                                                                            : lp->fm_core_term);
  if (c->fab == NULL) {
    /* Member index = global rank.  O(ranks x dims) once per library. */
    int nr = topo_n_ranks(c->t);
    int *all = g_new(int, nr);
    for (int i = 0; i < nr; i++)
      all[i] = i;
    c->fab = coll_library_fabric_new(c->t, lp, all, nr);
    g_free(all);
    c->parts = g_hash_table_new_full(part_key_hash, part_key_equal, g_free, g_free);
    c->cores_free = g_new0(sim_time_ps, (size_t)nr);
  }
  if (g_hash_table_size(c->parts) >= PART_CACHE_MAX)
    g_hash_table_remove_all(c->parts);
  c->op_seq++;
}

/* The chunks each member moves (lanes x the policy's chunks; NCCL's
 * buffer-sized or sliced pipeline; one per lane for a barrier) and the
 * run's per-slot state.  O(n x chunks x steps). */
static void plan_chunks(coll_rt *c, coll_run *r, const coll_desc *d, coll_prim prim)
{
  if (r->lperm == NULL) {
    r->lanes = 1;
    for (int i = 0; i < r->n_phases; i++)
      if (r->ph[i].algo == COLL_ALGO_DOUBLE_BINARY_TREE)
        r->lanes = 2;
  }
  r->n_chunks = c->pol.chunks * r->lanes;
  if (r->nccl) {
    /* NCCL pipelines hierarchical plans in buffer-sized chunks (buffsize,
     * NCCL_BUFFSIZE), and a flat plan whose steps forward the whole buffer
     * (ring broadcast and reduce, the tree) in slices (pipe_bytes); other
     * flat plans run one piece per lane (each step already moves 1/n of
     * it; channels add bandwidth, not steps).  Chunks then flow step by
     * step (step_pipe). */
    uint64_t unit = r->n_phases > 1 ? MAX(c->pol.lib.buffsize, (uint64_t)1) : r->pipe_bytes;
    uint64_t ch = unit > 0 ? (r->bytes + unit - 1) / unit : 1;
    r->n_chunks = (int)CLAMP(ch, 1, COLL_NCCL_MAX_CHUNKS) * r->lanes;
    r->step_pipe = TRUE;
    nccl_latency(c, r, d);
  }
  if (prim == COLL_PRIM_BARRIER)
    r->n_chunks = r->lanes;
  uint32_t n_slots = (uint32_t)r->n * (uint32_t)r->n_chunks;
  r->slot = g_new0(coll_slot, n_slots);
  if (!ring_candidate(c, r))
    run_alloc_counters(r); /* else when the run begins and goes per transfer (ring_begin) */
  r->chunks_left = g_new(int, r->n);
  for (int m = 0; m < r->n; m++)
    r->chunks_left[m] = r->n_chunks;
  r->members_left = r->n;
  r->scratch = g_new(coll_xfer, 2 * (size_t)r->n + 2);
}

static void start_run(coll_rt *c, const coll_desc *d, coll_done_fn done, void *ctx, uint64_t cookie,
                      coll_info *info, gboolean p2p)
{
  coll_prim prim;
  gboolean known = coll_prim_from_type(d->type, &prim);
  g_assert(known);
  g_assert(d->n_ranks >= 1 && d->n_ranks <= 65536);
  if (!p2p && d->two_hop != COLL_TWO_HOP_NONE &&
      coll_twohop_start(c->sim, c->n, c->twohop, d, c->pol.chunks, done, ctx, cookie, info)) {
    if (info != NULL) {
      uint64_t mx = 0;
      for (int a = 0; a < d->n_ranks; a++) {
        uint64_t snd = 0, rcv = 0;
        for (int b = 0; b < d->n_ranks; b++) {
          snd += d->splits[(size_t)a * d->n_ranks + b];
          rcv += d->splits[(size_t)b * d->n_ranks + a];
        }
        mx = MAX(mx, MAX(snd, rcv));
      }
      info->algbw_bytes = coll_algbw_bytes(d->type, mx, d->n_ranks);
      info->busbw_factor = coll_busbw_factor(d->type, d->n_ranks);
    }
    return;
  }
  uint64_t a2av_max = 0;
  coll_run *r = new_run(c, d, prim, done, ctx, cookie, p2p, &a2av_max);
  plan_grid(r, c->t);
  if (c->pol.lib.kind == COLL_LIBRARY_NCCL && !p2p)
    nccl_plan(c, r, d);
  if (coll_library_has_engine(c->pol.lib.kind))
    library_plan(c, r, prim, p2p);
  plan_phases(r, &c->pol, c->t);
  plan_chunks(c, r, d, prim);
  if (info != NULL) {
    memset(info, 0, sizeof *info);
    info->nccl_algo = -1;
    info->proto = -1;
    describe(r, c->t, info);
    info->algbw_bytes = coll_algbw_bytes(d->type, prim == COLL_PRIM_ALL_TO_ALLV ? a2av_max : d->bytes, r->n);
    info->busbw_factor = coll_busbw_factor(d->type, r->n);
  }
  if (info != NULL && r->nccl) {
    info->nccl_algo = r->nalgo;
    info->proto = r->proto;
  }
  library_start(c, r, d, info);
  r->next = c->runs;
  if (c->runs)
    c->runs->prev = r;
  c->runs = r;
  sim_post_after(c->sim, r->nccl ? r->t_base : 0, run_begin, r, 0);
}

void coll_start(coll_rt *c, const coll_desc *d, coll_done_fn done, void *ctx, uint64_t cookie,
                coll_info *info)
{
  start_run(c, d, done, ctx, cookie, info, FALSE);
}

/* A send is the library's broadcast from src over the pair {src, dst}
 * with the direct operator: one step, one transfer, the same
 * registration, staging, SDMA, engine and sigma_sig as a collective's
 * single-peer step (reference §5.1).  The buffer id, when the caller has
 * none, hashes (src, dst, bytes) with a tag so that it never equals a
 * derived collective buffer.  O(1) + start_run. */
gboolean coll_p2p_start(coll_rt *c, int src, int dst, uint64_t bytes, uint64_t buffer, gboolean alloc_known,
                        sim_time_ps alloc_time, coll_done_fn done, void *ctx, uint64_t cookie, coll_info *info)
{
  if (!coll_library_has_engine(c->pol.lib.kind))
    return FALSE;
  g_assert(src != dst);
  int ranks[2] = { src, dst };
  if (buffer == 0)
    buffer = wisp_mix64(wisp_mix64(UINT64_C(0x7032702070327032) ^ bytes) ^
                              ((uint64_t)(uint32_t)src << 32 | (uint32_t)dst)) | 1u;
  coll_desc d = { .type = ET_COLL_BROADCAST, .bytes = bytes, .ranks = ranks, .n_ranks = 2, .root = src,
                  .buffer = buffer, .alloc_known = alloc_known, .alloc_time = alloc_time };
  start_run(c, &d, done, ctx, cookie, info, TRUE);
  return TRUE;
}

const coll_library_stats *coll_rt_library_stats(const coll_rt *c)
{
  return &c->lstats;
}

gboolean coll_measure(const topo *t, net_tier tier, const coll_policy *policy, const coll_desc *d,
                      sim_time_ps *time_ps, coll_info *info, GError **error)
{
  return coll_measure_lib(t, tier, policy, d, time_ps, info, NULL, error);
}

gboolean coll_measure_lib(const topo *t, net_tier tier, const coll_policy *policy, const coll_desc *d,
                          sim_time_ps *time_ps, coll_info *info, coll_library_stats *stats, GError **error)
{
  if (!coll_desc_check(t, d, error))
    return FALSE;
  sim_engine *sim = sim_engine_new(FALSE);
  net *n = net_new(sim, t, tier);
  coll_rt *c = coll_rt_new(sim, n, policy);
  coll_start(c, d, NULL, NULL, 0, info);
  sim_run(sim, SIM_TIME_MAX);
  gboolean ok = c->runs == NULL && !sim_time_overflowed(sim);
  if (sim_time_overflowed(sim)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_LIMIT,
                "a collective of %" G_GUINT64_FORMAT " bytes takes past 2^61 ps (about 26.7 days) on this "
                "network, beyond what wisp represents; use a smaller size or faster links", d->bytes);
  } else if (!ok) {
    coll_prim prim = COLL_PRIM_COUNT;
    coll_prim_from_type(d->type, &prim);
    g_set_error(error, WISP_ERROR, WISP_ERROR_DEADLOCK,
                "the %s collective did not finish (internal scheduling error)", coll_prim_name(prim));
  }
  *time_ps = sim_now(sim);
  const coll_library_params *lp = coll_policy_library(policy);
  if (lp->kind == COLL_LIBRARY_NCCL) {
    /* nccl-tests' timing loop: a host thread launches the iterations back
     * to back (gpus_per_thread kernel launches each, nccl-tests -g) and
     * synchronises once at the end, dividing by the iterations
     * (nccl-tests src/common.cu, BenchTime).  The host and the GPUs form
     * a two-stage pipeline, so an iteration costs the slower stage:
     * max(host launches, GPU time), the GPU time being the simulated time
     * after the launches.  (The first iteration's fill, min / iterations,
     * is left out: under 5 % at nccl-tests' 20 iterations.) */
    sim_time_ps host = lp->launch * (sim_time_ps)MAX(lp->gpus_per_thread, 1);
    sim_time_ps gpu = *time_ps > host ? *time_ps - host : 0;
    *time_ps = MAX(host, gpu);
  }
  if (stats != NULL)
    *stats = c->lstats;
  coll_rt_free(c);
  net_free(n);
  sim_engine_free(sim);
  return ok;
}

/* ---- Buffer lifecycle from the members' nodes (coll.h) ----
 * Moved from the replay (issue 16): the hashes are the library model's
 * business.  The collective's hash is splitmix64 stepped over the members'
 * buffer ids; the point-to-point one mixes the two ids with
 * wisp_mix64.  Both must stay as they are: they key the library's
 * registration cache, so changing them changes hit/miss figures. */
coll_lifecycle coll_desc_set_lifecycle(coll_desc *d, coll_member_comm_fn member, void *ctx, sim_time_ps now)
{
  uint64_t h = UINT64_C(0x9e3779b97f4a7c15);
  sim_time_ps latest = INT64_MIN;
  int with = 0;
  for (int k = 0; k < d->n_ranks; k++) {
    const et_comm *c = member(ctx, k);
    if (c == NULL || !c->has_alloc || c->buffer == 0)
      continue;
    with++;
    latest = MAX(latest, c->alloc_ps);
    h = wisp_mix64(h + c->buffer); /* a splitmix64 step over (h, member buffer) */
  }
  if (with == 0)
    return COLL_LIFECYCLE_NONE;
  if (with < d->n_ranks)
    return COLL_LIFECYCLE_PARTIAL;
  d->buffer = h != 0 ? h : 1;
  d->alloc_known = TRUE;
  d->alloc_time = MIN(latest, now);
  return COLL_LIFECYCLE_KNOWN;
}

gboolean coll_p2p_lifecycle(const et_comm *send, const et_comm *recv, sim_time_ps now, uint64_t *buffer,
                            sim_time_ps *alloc_time)
{
  gboolean known = send->has_alloc && recv->has_alloc && send->buffer != 0 && recv->buffer != 0;
  *buffer = known ? wisp_mix64(send->buffer ^ wisp_mix64(recv->buffer)) | 1u : 0;
  *alloc_time = known ? MIN(MAX(send->alloc_ps, recv->alloc_ps), now) : 0;
  return known;
}
