/* supernode_run.c: the supernode family (hccl, hccl-zerocopy, stratacl,
 * cann-ep, cann-ep-zerocopy; doc/libraries.md) on the collective run:
 * its default operators, the flat plan and the core term, the per-member
 * pre-delays (registration, staging copy-in, SDMA submission) and
 * post-delays (copy-out, notification), the communication engine of each
 * step (two FIFO lanes per rank, fan-out throughput, core partitioning
 * with the policy cache), and the interference figures.  Given to the
 * runtime as the family's hooks (coll_supernode_ops); it uses the plan
 * and the run (coll_run.h) and the family's models (fabric:
 * supernode_fabric.c, closed forms: supernode_cost.c, registration:
 * supernode_register.c, partitioning: supernode_partition.c).  The
 * runtime never calls it by name.
 */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#include "collectives/coll_run.h"
#include "collectives/libraries/coll_lib_ops.h"
#include "collectives/libraries/supernode/coll_library_internal.h"

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

/* Core partitioning of fan-out steps (reference §6). */

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
  sim_time_ps *local_done = NULL; /* the slot's (coll_run.slot_local_done: allocated for engine runs) */
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
    if (local_done == NULL)
      local_done = &r->slot_local_done[rec->src_slot];
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
    *local_done = MAX(*local_done, fin);
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
    *local_done = MAX(*local_done, t0 + v->res.makespan_ps);
    for (uint32_t k = 0; k < nx; k++) {
      coll_xrec *rec = &c->xr[xi[order[k]]];
      rec->deliver_at = MAX(rec->deliver_at, t0 + v->fin[k]);
    }
    g_free(order);
    g_free(ld);
  }
}

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
  if (lp->sdma || !r->engine)
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
        coll_a2av_ctx x;
        coll_sched sc;
        int pos;
        const coll_phase *ph = coll_member_sched(r, m, ch, k, &x, &sc, &pos);
        uint32_t n_recv = 0;
        uint64_t red = 0;
        uint32_t nx = coll_sched_step(&sc, pos, k - ph->step0, r->scratch, &n_recv, &red);
        if (nx < 2)
          continue;
        for (uint32_t i = 0; i < nx; i++)
          dst[i] = r->ranks[coll_pos_member(r, ph, x.base, r->scratch[i].peer, ch)];
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
  uint64_t buf = d->buffer != 0 ? d->buffer : coll_buffer_derived(d);
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
        sim_post_after(c->sim, w, coll_ovl_begin_ev, r, (uint64_t)i);
      else
        coll_ovl_begin(r, i);
    }
    if (pre > 0) {
      r->held[i] = 1;
      sim_post_after(c->sim, pre, coll_member_release, r, (uint64_t)i);
    }
  }
  g_free(stage_in);
  g_free(pol);
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
    coll_plan_flat(r);
  const coll_library_params *lp = &c->pol.lib;
  r->engine = TRUE;
  r->step_sync = lp->sigma_sig;
  r->sync_mult = 1;
  r->beta_ring_min = coll_ring_beta_min(c->t, r->ranks, r->n);
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

/* The family's state on the runtime: registration (JIT/ROA) and the
 * engines' lanes, made with the runtime; the fabric, partition cache and
 * cores at the first collective (library_plan). */
static void supernode_rt_init(coll_rt *c)
{
  if (c->pol.lib.reg == COLL_REG_JIT || c->pol.lib.reg == COLL_REG_ROA)
    c->reg = coll_library_reg_new(&c->pol.lib, topo_n_ranks(c->t));
  c->eng_free = g_new0(sim_time_ps, 2 * (size_t)topo_n_ranks(c->t));
}

static void supernode_rt_free(coll_rt *c)
{
  coll_library_reg_free(c->reg);
  g_free(c->eng_free);
  coll_library_fabric_free(c->fab);
  if (c->parts != NULL)
    g_hash_table_destroy(c->parts);
  g_free(c->cores_free);
}

static void supernode_plan(coll_rt *c, coll_run *r, const coll_desc *d, coll_prim prim, gboolean p2p)
{
  (void)d;
  library_plan(c, r, prim, p2p);
}

const coll_lib_ops coll_supernode_ops = {
  .family = "supernode",
  .rt_init = supernode_rt_init,
  .rt_free = supernode_rt_free,
  .default_algo = library_algo,
  .plan = supernode_plan,
  .start = library_start,
  .step = library_step,
  .post_delay = member_post_delay,
  .interferes = coll_library_interferes,
  .interference = coll_library_interference,
};
