/* coll_run.h: the collective runtime's shared state (not installed): the
 * runtime object, one run (a collective in flight: its plan, its members'
 * slots, its library figures), the transfer records, and the hooks a
 * communication-library family gives the run (coll_lib_ops).  Shared by
 * the plan (coll_plan.c), the run (coll_run.c), the ring recurrence
 * (coll_ring.c), the buffer lifecycle (coll_buffer.c), the runtime's
 * front (coll_rt.c) and the library families under libraries/ (nccl/,
 * supernode/), which use the run through it.  Calls go down: the front
 * calls the families' hooks and the fast path, the families call the
 * plan and the run, the fast path calls the run; the plan and the run
 * never name a library, they read the run's flags (engine, stream) and
 * call the hooks.
 */
#ifndef WISP_COLL_RUN_H
#define WISP_COLL_RUN_H

#include "collectives/coll_internal.h"
#include "collectives/libraries/coll_library.h"

G_BEGIN_DECLS

typedef struct coll_run coll_run;
typedef struct coll_lib_ops coll_lib_ops;
/* The supernode family's state on the runtime (opaque here). */
typedef struct coll_library_reg coll_library_reg;
typedef struct coll_library_fabric coll_library_fabric;
/* The symmetric mode's verdicts per plan (coll_symcache.c; opaque). */
typedef struct coll_symcache coll_symcache;

typedef struct {
  coll_prim prim;
  coll_algo algo;
  int g;              /* grid dimension, or -1 for the whole group */
  uint64_t div;       /* phase bytes = chunk bytes / div */
  uint32_t step0, n_steps;
} coll_phase;

enum { SLOT_IDLE = 0, SLOT_RUNNING, SLOT_REDUCING, SLOT_REDUCED };

/* 8 bytes: a tree run of NCCL's plan has members x chunks of them (2 M
 * for 2,048 members); what only some runs need is in coll_run's
 * per-slot side arrays (slot_local_done, slot_red).  A plan has fewer
 * than 2^24 steps (at most 2 x COLL_MAX_DIMS phases of at most 2(q - 1)
 * steps, q <= 65,536), and a step sends and receives at most q - 1 <=
 * 65,535 transfers per slot (the counters are 16-bit too);
 * coll_slot_step_begin asserts both. */
typedef struct {
  uint32_t cur : 24;  /* current global step */
  uint32_t state : 4;
  uint32_t moved : 1; /* the current step sends or receives something */
  uint16_t pend;      /* sends of the current step still in flight (runs whose steps wait for them) */
  uint16_t need;      /* receives the current step waits for */
} coll_slot;

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
  sim_time_ps *slot_local_done; /* engine runs, per slot: its engine has sent its writes of the step; else NULL */
  uint64_t *slot_red; /* with a reduction cost (policy reduce_bw), per slot: bytes reduced in the step; else NULL */
  uint16_t *recv;     /* dense receive counters, n_slots * n_steps (short plans, conversions), else NULL */
  /* Dense counters of half a byte (coll_count.c: short plans that go
   * per transfer from their start): per slot and step one byte, the
   * receives in its low nibble and the sends in flight (step pipeline)
   * in its high one; widened into recv8/sent8 when a count would pass
   * 15.  Else NULL. */
  uint8_t *cnt4;
  /* Dense counters of one byte (cnt4 widened; widened into recv/sent
   * when a count would pass 255), else NULL. */
  uint8_t *recv8, *sent8;
  /* Windowed counters (coll_count.c; when recv is NULL): per slot
   * COLL_COUNT_WIN receive counters ahead of its step and, with the step
   * pipeline, send counters behind it; counts outside go to the spill. */
  uint16_t *recv_win, *sent_win;
  GHashTable *count_spill[2]; /* receives, sends */
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
  /* Engine-driven steps (a library with an engine, coll_lib_ops.step:
   * the supernode family): a step ends when its receives are in and the
   * member's engine has sent its writes; sigma per step that moved data
   * (step_sync, times sync_mult). */
  gboolean engine;
  sim_time_ps step_sync;
  gboolean p2p;       /* a library point-to-point (coll_p2p_start): flat, direct, one transfer */
  wisp_bw_Bps beta_ring_min; /* slowest hop of the ring in communicator order */
  int sync_mult;      /* sigma_sig per step, once per staging round */
  /* Interference (coll_rt_set_slowdown_hook; NULL when off): per member
   * 0 before its flight, 1 while counted on its rank, 2 after; and what
   * one member adds on its rank. */
  uint8_t *ovl_on;
  int ovl_cores, ovl_sdma;
  uint64_t ovl_rate;  /* staging bytes/s through HBM */
  /* Streamed steps (set by the NCCL family's plan; FALSE for every other
   * library): a step does not wait for its own sends; the tuner's choice, the byte inflation of the protocol's
   * efficiency per tier (the tuner's latency is in t_base, before the
   * first step) and, for multi-node rings, one member order per lane
   * (rail). */
  gboolean stream;
  int nalgo, proto;
  double inv_eff_intra, inv_eff_inter;
  uint8_t inter_kind; /* coll_run_pair_inter's cache: 0 not known yet, COLL_INTER_* */
  coll_algo force_flat, force_dim0, force_outer; /* forced algorithms: flat plan, dimension 0, outer dimensions */
  gboolean nvls_paired; /* NVLS-tree: its NVLS RS and AG share the load (coll_sched.nvls_paired) */
  int *lperm, *linv;  /* lanes * n: position -> member and member -> position, or NULL */
  sim_time_ps t_base; /* base latency and kernel launch before the first step */
  sim_time_ps t_host; /* nccl: the host thread's launches (in t_base), the host stage of nccl-tests' loop */
  double hop_us;      /* the tuner's per-hop latency, spread over the plan's steps */
  /* The wire latency the library's per-hop figures hold per route, ps
   * (NCCL's reference wire, coll_nccl_plan.h): a transfer within a node
   * (intra) or across nodes (inter) of the pipeline's first piece pays
   * only its route's latency above it (net_send_less; coll_run_wire_less).
   * 0: the whole route. */
  sim_time_ps wire_ref_intra, wire_ref_inter;
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
  /* Symmetric-phase fast path (coll_fast.c; NULL when the run is not on
   * it): per step its start s(k), the links it uses with their byte
   * counters before it (fast_link), the transfers it has charged. */
  sim_time_ps *step_t;
  GArray *fast_links;
  uint64_t fast_charged;
};

/* A link a fast path's run uses and its byte counter before the run
 * (coll_run.fast_links). */
typedef struct {
  uint32_t link;
  uint64_t bytes0;
} fast_link;

/* A transfer in flight, 32 bytes (a 2,048-member tree run of NCCL's plan
 * has up to 768 k of them at once): the run, or while the record is on
 * the free list the next free record. */
typedef struct {
  union {
    coll_run *run;
    uint32_t next_free;
  };
  uint32_t src_slot, dst_slot, dst_step;
  uint32_t src_step;      /* nccl step pipeline: the sender's step */
  sim_time_ps deliver_at; /* library: not before the engine has sent it (+ route latency) */
} coll_xrec;

struct coll_rt {
  sim_engine *sim;
  net *n;
  const topo *t;
  coll_policy pol;
  coll_run *runs;       /* unfinished collectives */
  GHashTable *twohop;   /* unfinished two-hop all-to-alls (coll_twohop.c), freed with the runtime */
  const coll_lib_ops *ops; /* the library family's hooks (coll_lib_ops_for) */
  coll_xrec *xr;        /* transfer records; index = net cookie */
  uint32_t n_xr, cap_xr, free_xr;
  uint32_t *work;       /* slots to advance (coll_run_kick's stack): work_len of work_cap */
  uint32_t work_len, work_cap;
  gboolean kicking;
  /* Library state, made and freed by the family's rt_init/rt_free hooks
   * (the supernode family's; NULL for the others): */
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
  coll_symcache *symcache; /* the symmetric mode's verdicts (coll_symcache.c), NULL until the first */
  /* The tree replay's table of the rank pairs seen (coll_tree_hops.c,
   * made at its first run, freed with the runtime), else NULL. */
  struct tree_hops *tree_hops;

};

#define XR_NONE UINT32_MAX

typedef struct {
  const coll_run *r;
  const coll_phase *ph;
  int c;
  int base;           /* grid index of position 0 of the sub-group */
} coll_a2av_ctx;

/* A library family's hooks (the engine's callbacks, for collectives).
 * Every hook may be NULL (nothing to do: the ideal library has none).
 * The front (coll_rt.c) picks the table by the policy's library kind
 * (coll_lib_ops_for, libraries/coll_lib_ops.h) and calls them in this
 * order: rt_init once; per collective plan (after the grid, before the
 * phases), plan_chunks (after the generic chunking), start (after the
 * run's state is allocated); per step of an engine run, step (before
 * the transfers go to the network); per member, post_delay (when its
 * transfers are over); rt_free once.  default_algo and tier_free enter
 * the planner's algorithm resolution, describe the run's description,
 * interferes whether the slowdown hook applies (coll_rt_set_slowdown_hook)
 * and interference a rank's delta. */
struct coll_lib_ops {
  const char *family;      /* "nccl", "supernode", "ideal" */
  gboolean tier_free;      /* the algorithm choice does not depend on the net tier */
  void (*rt_init)(coll_rt *c);
  void (*rt_free)(coll_rt *c);
  coll_algo (*default_algo)(const coll_library_params *lib, coll_prim p, int q);
  void (*plan)(coll_rt *c, coll_run *r, const coll_desc *d, coll_prim prim, gboolean p2p);
  void (*plan_chunks)(coll_rt *c, coll_run *r, const coll_desc *d);
  void (*describe)(const coll_run *r, GString *s);
  void (*start)(coll_rt *c, coll_run *r, const coll_desc *d, coll_info *info);
  void (*step)(coll_run *r, int m, const uint32_t *xi, uint32_t nx, const int *dst_rank);
  sim_time_ps (*post_delay)(coll_run *r, int m);
  gboolean (*interferes)(const coll_library_params *p);
  double (*interference)(const coll_library_params *p, int cores, uint64_t stage_Bps, int n_sdma);
};

/* ---- the plan (coll_plan.c) ---------------------------------------------- */

/* Compresses the members' coordinates into a grid over the dimensions in
 * which they differ, or one flat dimension in communicator order.  O(n dims). */
void coll_plan_grid(coll_run *r, const topo *t);
/* One flat dimension over the whole group in communicator order.  O(n). */
void coll_plan_flat(coll_run *r);
/* Slowest hop bandwidth of the ring over ranks in communicator order.  O(n). */
wisp_bw_Bps coll_ring_beta_min(const topo *t, const int *ranks, int n);
/* The phases of the run (per grid dimension, or one flat phase). */
void coll_plan_phases(coll_run *r, const coll_policy *pol, const topo *t);
/* The lanes and chunks each member moves (the family's plan_chunks hook
 * refines them). */
void coll_plan_chunks(coll_rt *c, coll_run *r, const coll_desc *d, coll_prim prim);
/* The run's algorithm and its one-line description into info. */
void coll_plan_describe(const coll_run *r, const topo *t, coll_info *info);

/* ---- the run (coll_run.c) ------------------------------------------------ */

/* The member at position j of the sub-group of phase ph whose position 0
 * has grid index base, for chunk ch (rails: the lane's order).  O(1). */
static inline int coll_pos_member(const coll_run *r, const coll_phase *ph, int base, int j, int ch)
{
  if (ph->g < 0 && r->lperm != NULL)
    return r->lperm[(size_t)(ch % r->lanes) * (size_t)r->n + (size_t)j];
  if (ph->g < 0)
    return r->gmember[j];
  return r->gmember[base + j * r->gstride[ph->g]];
}

/* The schedule of member m, chunk ch at global step k (fills *x and *sc);
 * returns the phase and the member's position in *pos_out.  O(1). */
const coll_phase *coll_member_sched(const coll_run *r, int m, int ch, uint32_t k, coll_a2av_ctx *x, coll_sched *sc,
                                    int *pos_out);
/* Begins slot s's current step: its schedule (member, chunk, step), the
 * step's transfers into r->scratch (*nx of them, x filled as
 * coll_member_sched does), and the slot's running state (moved, receives
 * needed, reduction bytes).  The per-transfer path and the tree replay
 * (coll_fast_tree.c) start a step through it.  Returns the phase.  O(1)
 * plus the step's transfers. */
const coll_phase *coll_slot_step_begin(coll_run *r, uint32_t s, coll_a2av_ctx *x, uint32_t *nx);
/* The step pipeline's gate (NCCL, r->step_pipe): slot s may start step k
 * once the previous chunk of its lane has passed k and at most
 * fifo_chunks chunks of the lane are in flight at k (NCCL's connection
 * FIFO).  O(1). */
gboolean coll_pipe_gate_open(const coll_run *r, uint32_t s, uint32_t k);
/* Whether two ranks differ in a dimension other than 0.  O(dims). */
gboolean coll_pair_is_inter(const topo *t, int a, int b);
/* What run r takes off the latency of chunk ch's transfer src -> dst
 * (ranks): for the first piece of each lane (ch < lanes: the pipeline's
 * fill, the traversal a library's per-hop latency stands for) the run's
 * reference wire for the pair's class (wire_ref_intra or wire_ref_inter;
 * the network caps it at the route's latency); 0 for the pieces behind
 * it.  O(dims). */
sim_time_ps coll_run_wire_less(const coll_run *r, int ch, int src_rank, int dst_rank);
/* net_hop_init for a transfer src -> dst of run r's first chunk, with the
 * route's latency less coll_run_wire_less (never below 0): for the paths
 * that run one chunk (coll_ring.c, coll_fast.c).  O(route length). */
void coll_run_hop_init(const coll_run *r, int src_rank, int dst_rank, net_hop *h);
/* coll_pair_is_inter for members m and dm of r: from the run's kind
 * (every pair of members crosses tiers, or none does; found at the first
 * call in O(members x dims x log members)) in O(1), else per pair. */
enum { COLL_INTER_MIXED = 1, COLL_INTER_ALL, COLL_INTER_NONE };
gboolean coll_run_pair_inter(const topo *t, coll_run *r, int m, int dm);
/* A transfer record (index = net cookie), from the free list.  O(1) amortised. */
uint32_t coll_xr_alloc(coll_rt *c);
/* A transfer's arrival event at `at` (from src_slot at its step src_step
 * to dst_slot, the same chunk, for its step dst_step), as the
 * per-transfer path posts it: packed in the event when the run fits and
 * has no library engine, else a coll_xrec.  The tree path's conversion
 * hands its queued arrivals over through it.  O(1) amortized. */
void coll_xfer_post_at(coll_rt *c, coll_run *r, sim_time_ps at, uint32_t src_slot, uint32_t dst_slot,
                       uint32_t dst_step, uint32_t src_step);
/* Advances slot s and what it wakes; TRUE when the run finished. */
gboolean coll_run_kick(coll_rt *c, coll_run *r, uint32_t slot);
/* Unlinks and frees a finished run. */
void coll_run_finish(coll_rt *c, coll_run *r);
void coll_run_free(coll_run *r);
/* Engine callbacks: a transfer landed (ctx the runtime, cookie its
 * record); a slot's local wait is over (ctx the run, arg the slot);
 * member arg passed its library pre-delay (ctx the run). */
void coll_xfer_done(sim_engine *sim, void *ctx, uint64_t cookie);
void coll_reduce_done(sim_engine *sim, void *ctx, uint64_t arg);
void coll_member_release(sim_engine *sim, void *ctx, uint64_t arg);
/* Member arg of run ctx is done (a fast path's done event): as
 * slot_advance's end of a member without a library post-delay. */
void coll_member_done_ev(sim_engine *sim, void *ctx, uint64_t arg);
/* Interference: member m enters its rank's in-flight set (also as an
 * event, arg = m) or leaves it before its done().  O(1) plus the hook. */
void coll_ovl_begin(coll_run *r, int m);
void coll_ovl_begin_ev(sim_engine *sim, void *ctx, uint64_t arg);
void coll_ovl_end(coll_run *r, int m);

/* ---- the step counters (coll_count.c) ------------------------------------ */

/* Counters per slot kept in the window (a power of two). */
#define COLL_COUNT_WIN 8u

/* The dense receive (and step-pipeline send) counters, which the fast
 * paths' conversions write.  O(members chunks steps). */
void coll_run_alloc_counters(coll_run *r);
/* The counters of a run that goes per transfer from its start: windowed
 * for plans of more than 2 x COLL_COUNT_WIN steps, else dense of one byte
 * (replacing the zeroed two-byte ones a fast path that declined left).
 * O(slots x steps). */
void coll_count_alloc(coll_run *r);
/* Slot s leaves step k (its cur becomes k + 1): its windows move on.
 * O(1) expected. */
void coll_count_pass(coll_run *r, uint32_t s, uint32_t k);
/* Slot s leaves the steps k .. k2 - 1 at once (none of them moved
 * data).  O(COLL_COUNT_WIN) expected. */
void coll_count_jump(coll_run *r, uint32_t s, uint32_t k, uint32_t k2);
void coll_count_free(coll_run *r);
/* The one-byte counters become the two-byte ones (a count would pass 255).
 * O(members chunks steps), once per run at most. */
void coll_count_widen(coll_run *r);
/* The half-byte counters become the one-byte ones (a count would pass
 * 15).  O(members chunks steps), once per run at most. */
void coll_count_widen4(coll_run *r);
/* After a conversion (which writes the dense two-byte counters): the
 * counters of a plan of at most 2 x COLL_COUNT_WIN steps become
 * half-byte ones when every count fits (else they stay).
 * O(members chunks steps). */
void coll_count_narrow(coll_run *r);
/* coll_recv_inc and coll_sent_add past the half-byte counters (which
 * they widen first when a count would pass 15): the one- and two-byte,
 * windowed and spilled counters.  O(1) expected. */
void coll_recv_inc_wide(coll_run *r, uint32_t s, uint32_t k);
uint32_t coll_sent_add_wide(coll_run *r, uint32_t s, uint32_t k, int delta);
/* The spill (kind 0 receives, 1 sends): the count of (s, k), and adding
 * delta to it (returns the new count).  O(1) expected. */
uint32_t coll_count_spill_get(const coll_run *r, int kind, uint32_t s, uint32_t k);
uint32_t coll_count_spill_add(coll_run *r, int kind, uint32_t s, uint32_t k, int delta);

/* The local reduction of `bytes` at the policy's reduce_bw (0 without
 * one): the wait a step ends with once its transfers are in, on every
 * path (per transfer, the ring recurrence, the fast paths).  O(1). */
static inline sim_time_ps coll_reduce_ps(const coll_rt *c, uint64_t bytes)
{
  return c->pol.reduce_bw > 0 && bytes > 0 ? wisp_transfer_ps(bytes, c->pol.reduce_bw) : 0;
}

/* The receives slot s has counted for its step k (k >= its cur).  O(1). */
static inline uint32_t coll_recv_get(const coll_run *r, uint32_t s, uint32_t k)
{
  if (r->cnt4 != NULL)
    return r->cnt4[(size_t)s * r->n_steps + k] & 15u;
  if (r->recv != NULL)
    return r->recv[(size_t)s * r->n_steps + k];
  if (r->recv8 != NULL)
    return r->recv8[(size_t)s * r->n_steps + k];
  if (k - r->slot[s].cur < COLL_COUNT_WIN)
    return r->recv_win[(size_t)s * COLL_COUNT_WIN + (k & (COLL_COUNT_WIN - 1))];
  return coll_count_spill_get(r, 0, s, k);
}

/* Counts a receive of slot s for its step k (k >= its cur).  O(1). */
static inline void coll_recv_inc(coll_run *r, uint32_t s, uint32_t k)
{
  if (r->cnt4 != NULL && (r->cnt4[(size_t)s * r->n_steps + k] & 15u) < 15u) {
    r->cnt4[(size_t)s * r->n_steps + k]++;
    return;
  }
  if (r->recv != NULL && r->recv[(size_t)s * r->n_steps + k] < UINT16_MAX) {
    r->recv[(size_t)s * r->n_steps + k]++; /* a conversion's dense counters */
    return;
  }
  coll_recv_inc_wide(r, s, k);
}

/* The sends of slot s's step k still in flight (step pipeline; k <= its
 * cur).  O(1). */
static inline uint32_t coll_sent_get(const coll_run *r, uint32_t s, uint32_t k)
{
  if (r->cnt4 != NULL)
    return r->cnt4[(size_t)s * r->n_steps + k] >> 4;
  if (r->sent != NULL)
    return r->sent[(size_t)s * r->n_steps + k];
  if (r->sent8 != NULL)
    return r->sent8[(size_t)s * r->n_steps + k];
  if (r->slot[s].cur - k < COLL_COUNT_WIN)
    return r->sent_win[(size_t)s * COLL_COUNT_WIN + (k & (COLL_COUNT_WIN - 1))];
  return coll_count_spill_get(r, 1, s, k);
}

/* Adds delta (+1: issued, -1: landed) to the sends of slot s's step k
 * (k <= its cur) and returns the new count.  O(1). */
static inline uint32_t coll_sent_add(coll_run *r, uint32_t s, uint32_t k, int delta)
{
  if (r->cnt4 != NULL) {
    uint8_t *c4 = &r->cnt4[(size_t)s * r->n_steps + k];
    if (delta < 0 || *c4 >> 4 < 15u) {
      g_assert(delta > 0 || *c4 >> 4 > 0);
      *c4 = (uint8_t)(*c4 + delta * 16);
      return *c4 >> 4;
    }
  }
  if (r->sent != NULL) { /* a conversion's dense counters */
    uint16_t *cnt = &r->sent[(size_t)s * r->n_steps + k];
    g_assert(delta > 0 ? *cnt < UINT16_MAX : *cnt > 0);
    *cnt = (uint16_t)(*cnt + delta);
    return *cnt;
  }
  return coll_sent_add_wide(r, s, k, delta);
}

/* ---- the ring recurrence (coll_ring.c) ----------------------------------- */

/* Whether run r has the shape the recurrence covers.  O(1). */
gboolean coll_ring_candidate(const coll_rt *c, const coll_run *r);
/* Takes the recurrence for r when its links allow; FALSE: run per transfer. */
gboolean coll_ring_begin(coll_rt *c, coll_run *r);

/* ---- the symmetric-phase fast path (coll_fast.c) ------------------------ */

/* Takes the fast path for r when its schedule and links allow (charging
 * the net and scheduling the members' done events); FALSE: nothing
 * changed, run per transfer.  O(transfers x route length). */
gboolean coll_fast_begin(coll_rt *c, coll_run *r);
/* The pieces a fast path shares (coll_fast.c; the tree path,
 * coll_fast_tree.c, uses them).  open: the run starts a pass at now
 * (r->t0, the link records, r->fin).  link_use: records link l for the
 * rewind and the claim; FALSE when it was not idle and unclaimed at t0
 * (the path does not apply).  rewind: every recorded link idle as of t0
 * with its old byte counter, the charged transfers off the counter.
 * decline: rewinds and frees what open made (phase_declined).  take:
 * claims the recorded links with `convert` as the claim's callback and
 * schedules every member's done event at r->fin (phase_runs).  O(1)
 * each, O(links recorded) for rewind, decline and take. */
void coll_fast_open(coll_rt *c, coll_run *r);
gboolean coll_fast_link_use(coll_rt *c, coll_run *r, uint32_t l);
void coll_fast_rewind(coll_rt *c, coll_run *r);
/* The start of a conversion (a claim's callback): releases the run's
 * claim, counts the conversion and rewinds the net (coll_fast_rewind).
 * O(transfers issued). */
void coll_fast_convert_begin(coll_rt *c, coll_run *r);
void coll_fast_decline(coll_rt *c, coll_run *r);
void coll_fast_take(coll_rt *c, coll_run *r, net_claim_fn convert);

/* ---- the tree path (coll_fast_tree.c) ------------------------------------ */

/* Takes the tree path for r (a plan with a double binary tree: the
 * ideal library's flat one with one chunk per tree, or NCCL's streamed
 * pipeline) when its links allow: replays the per-transfer path's state
 * machine on a private engine and schedules the members' done events;
 * FALSE: nothing changed.  O(transfers x route length). */
gboolean coll_fast_tree_begin(coll_rt *c, coll_run *r);
/* Frees the tree replay's table of rank pairs (coll_tree_hops.c; NULL:
 * nothing). */
void coll_tree_hops_free(struct tree_hops *t);

/* ---- the symmetric mode's verdict cache (coll_symcache.c) -------------- */

/* The verdict the symmetric mode reached for a run of the same plan as r
 * (same primitive, bytes, phases, grid and ranks): TRUE with *verdict
 * and, for a TRUE verdict, r->n_steps shapes of shape_size bytes copied
 * into shapes; FALSE when none is kept.  O(n). */
gboolean coll_symcache_lookup(coll_rt *c, const coll_run *r, void *shapes, size_t shape_size, gboolean *verdict);
/* Keeps the verdict (and, when TRUE, the r->n_steps shapes) for r's plan.
 * O(n); memory bounded (the cache empties itself). */
void coll_symcache_store(coll_rt *c, const coll_run *r, const void *shapes, size_t shape_size, gboolean verdict);
void coll_symcache_free(coll_symcache *sc);
/* The kinds of results kept per plan, and the generic pair under the
 * lookup above: get gives the result of `kind` kept for r's plan (valid
 * until the next put), put keeps a copy of `size` bytes.  O(n). */
typedef enum { COLL_MEMO_SYMMETRIC = 0, COLL_MEMO_TREE } coll_memo_kind;
gboolean coll_memo_get(coll_rt *c, const coll_run *r, int kind, const void **data, size_t *size);
void coll_memo_put(coll_rt *c, const coll_run *r, int kind, const void *data, size_t size);

/* ---- the buffer lifecycle (coll_buffer.c) -------------------------------- */

/* Identity of a buffer the replay did not name: (type, bytes, group).  O(n). */
uint64_t coll_buffer_derived(const coll_desc *d);
/* Identity of a point-to-point buffer the caller did not name.  O(1). */
uint64_t coll_buffer_p2p(int src, int dst, uint64_t bytes);

G_END_DECLS
#endif
