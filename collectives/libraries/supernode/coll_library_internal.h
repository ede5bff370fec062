/* coll_library_internal.h: the library models' internals (not installed),
 * for the family's hooks on the run (supernode_run.c), collbench --compare
 * (collectives/coll_library_report.c) and the tests: the fabric view of a
 * group, mode A's closed forms, registration state, core partitioning and
 * the deterministic draws.  The public part, for every other layer, is
 * coll_library.h; see its head for the model.  Prefix coll_library_.
 */
#ifndef WISP_COLL_LIBRARY_INTERNAL_H
#define WISP_COLL_LIBRARY_INTERNAL_H

#include "collectives/libraries/coll_library.h"

G_BEGIN_DECLS

/* Operator families of mode A. */
typedef enum {
  COLL_LIBOP_RING = 0,     /* ring, lockstep with the bottleneck hop */
  COLL_LIBOP_RHD,          /* recursive halving/doubling (AllReduce baseline) */
  COLL_LIBOP_FULL_MESH,    /* remote-slice loads from every peer at once */
} coll_libop;

/* ---- fabric view of a group (mode A) ----------------------------------- */

typedef struct coll_library_fabric coll_library_fabric;
/* The view: per member its coordinates, per tier alpha and beta. */
struct coll_library_fabric {
  int n, nd;
  int *coord;          /* n * nd */
  sim_time_ps alpha[COLL_TIER_COUNT];
  wisp_bw_Bps beta[COLL_TIER_COUNT];
};

/* ranks: global ranks in communicator order.  Tier of a pair = outermost
 * topology dimension in which their coordinates differ (dimension 0 = D2D,
 * 1 = INTRA, 2 = INTER, 3+ = SCALEOUT); alpha/beta per tier from the
 * params, or where 0 from the topology's route cost between rank 0 and
 * the first rank that differs from it only in that dimension.  O(n) memory. */
coll_library_fabric *coll_library_fabric_new(const topo *t, const coll_library_params *p, const int *ranks,
                                             int n);
void coll_library_fabric_free(coll_library_fabric *f);
coll_tier coll_library_fabric_tier(const coll_library_fabric *f, int a, int b); /* member indices */
sim_time_ps coll_library_fabric_alpha(const coll_library_fabric *f, coll_tier t);
wisp_bw_Bps coll_library_fabric_beta(const coll_library_fabric *f, coll_tier t);

/* ---- mode A: one operation --------------------------------------------- */

typedef struct {
  coll_libop op;               /* operator that ran */
  sim_time_ps time_ps;         /* total latency incl. library costs below */
  sim_time_ps alg_ps;          /* operator on the fabric */
  sim_time_ps sync_ps;         /* synchronisation part of alg_ps */
  sim_time_ps staging_ps;      /* copy time on the critical path */
  uint64_t staging_bytes;      /* per rank */
  int staging_rounds;
  sim_time_ps reg_ps;          /* registration on the critical path */
  sim_time_ps core_makespan_ps;/* partitioned per-core work (full mesh) */
  double core_spread;          /* (max - min) / max over active cores */
  sim_time_ps sdma_submit_ps;
  double core_occupancy_us;    /* core-microseconds the op keeps NPU cores busy */
  double busbw_GBps;           /* nccl-tests convention */
} coll_library_cost;

/* Cost of one op of type `type` with per-rank payload M (AllGather: the
 * shard; AllReduce/ReduceScatter/AllToAll: the buffer), for library p on
 * fabric f.  op: the operator (use coll_library_default_op()).  reg_ps:
 * registration time to put on the critical path (0: mapped; see
 * coll_library_jit_ps).  Supported types: all-gather, reduce-scatter,
 * all-reduce, all-to-all, broadcast; others return FALSE. */
gboolean coll_library_op_cost(const coll_library_params *p, const coll_library_fabric *f, et_coll_type type,
                              uint64_t m, coll_libop op, sim_time_ps reg_ps, coll_library_cost *out);
/* Large-message full-mesh deficit g_inf(N) = g_inf0 + slope * log2(N/32),
 * clamped to [0, 0.99] (§5.2). */
double coll_library_g_inf(const coll_library_params *p, int n);
/* Fan-out throughput of a full-mesh step (§5.2, [FIT]): the UB bytes a
 * member moves to n_ub UB peers (of `fanout` peers in the step) are served
 * at B_fm(m) = B_inf + (b_port - B_inf) exp(-m / s_c), with B_inf =
 * (1 - g_inf(n)) beta_ring_min n_ub / fanout and m the per-peer message;
 * n is the group size.  Rounded to integer bytes/s, at least 1.  Used by
 * mode A and by the event model's per-member engine (supernode_run.c). */
wisp_bw_Bps coll_library_fm_bw(const coll_library_params *p, int n, wisp_bw_Bps beta_ring_min, int n_ub, int fanout,
                               uint64_t m);
coll_libop coll_library_default_op(const coll_library_params *p, et_coll_type type);

/* ---- interference and data volumes ------------------------------------- */

/* Whether library p slows compute at all: not nccl, and kappa_core,
 * kappa_hbm or delta_sdma positive.  When FALSE the replay runs exactly
 * as without the interference model. */
gboolean coll_library_interferes(const coll_library_params *p);
const char *coll_libop_name(coll_libop op);
/* Per-rank user input and output bytes of one op (staging copies) and the
 * bytes each member moves per peer, for Chakra comm_size m over n ranks.
 * Returns FALSE for types without data (barrier) or unknown ones. */
gboolean coll_library_io_bytes(et_coll_type type, uint64_t m, int n, uint64_t *in_b, uint64_t *out_b,
                               uint64_t *per_peer);

/* ---- registration (reference §4) --------------------------------------- */

/* One mapper job: t_imp + t_map0 + ceil(S / page) * t_pte. */
sim_time_ps coll_library_job_ps(const coll_library_params *p, uint64_t bytes);
/* JIT critical path for one rank of an n-rank group:
 * t_exp + t_meta + (n - 1) * job(S). */
sim_time_ps coll_library_jit_ps(const coll_library_params *p, uint64_t bytes, int n);
/* Export + import part of it: t_exp + (n - 1) * t_imp. */
sim_time_ps coll_library_jit_handle_ps(const coll_library_params *p, int n);
/* RDMA-style registration: k_rdma * jit (t_meta excluded). */
sim_time_ps coll_library_rdma_ps(const coll_library_params *p, uint64_t bytes, int n);

/* Adds one blocked time to the distribution. */
void coll_library_stats_add_blocked(coll_library_stats *s, sim_time_ps blocked);

/* Registration state of a run: per rank one FIFO mapper (page-table lock),
 * per (buffer, rank) the time its mappings are ready.  Buffers are opaque
 * 64-bit keys.  Memory: O(ranks + buffers * members). */
typedef struct coll_library_reg coll_library_reg;
coll_library_reg *coll_library_reg_new(const coll_library_params *p, int n_ranks_total);
void coll_library_reg_free(coll_library_reg *r);
/* The buffer is (re)allocated or remapped at time t on every member of
 * its group (ROA enqueues the n-1 map jobs per member at t + t_exp +
 * t_meta; other modes just invalidate the mappings).  ranks: global. */
void coll_library_reg_alloc(coll_library_reg *r, uint64_t buffer, uint64_t bytes, const int *ranks, int n,
                            sim_time_ps t);
/* Communicational use of the buffer by member `member` (global rank
 * `rank`) of an n-member group at time t: returns the time the op may
 * start on that rank (>= t).  JIT: a cache miss (unmapped, or another
 * size) queues the n - 1 map jobs now, t_exp + t_meta later; ROA: the
 * Phase-2 barrier waits for the queued jobs, plus t_chk.  Updates stats. */
sim_time_ps coll_library_reg_use(coll_library_reg *r, uint64_t buffer, uint64_t bytes, int member, int rank,
                                 int n, sim_time_ps t, coll_library_stats *stats);
/* Allocation known from memory events: (re)allocates the buffer at t
 * unless it was already allocated at that time.  Returns TRUE when an
 * allocation was recorded. */
gboolean coll_library_reg_known(coll_library_reg *r, uint64_t buffer, uint64_t bytes, const int *ranks, int n,
                                sim_time_ps t, coll_library_stats *stats);
/* Synthetic lifecycle (reference §4.1): before a use at time t of a
 * buffer: on its first use it is allocated gap_min earlier (possibly
 * before time 0: the buffer predates the trace);
 * on later uses it is remapped with probability p_remap, gap ~
 * U[gap_remap_lo, gap_remap_hi] earlier (or at the previous use, if later).
 * The draw depends only on (seed, buffer, use index), so it does not
 * depend on event order.  Returns TRUE when an (re)allocation happened. */
gboolean coll_library_reg_synthetic(coll_library_reg *r, uint64_t buffer, uint64_t bytes, const int *ranks,
                                    int n, sim_time_ps t, coll_library_stats *stats);

/* ---- core partitioning (reference §6) ---------------------------------- */

typedef struct {
  int peer;              /* member index of the peer */
  coll_tier tier;
  uint64_t bytes;
} coll_library_peer_load;

typedef struct {
  sim_time_ps makespan_ps;   /* max core load */
  sim_time_ps min_ps;        /* min load over active cores */
  double spread;             /* (max - min) / max over active cores */
  int active;                /* cores with work */
  uint64_t units;
  sim_time_ps policy_ps;     /* k_pol * (U log2 U + U log2 C) */
} coll_library_partition;

/* Assigns the per-peer loads to `cores` cores: LPT with fan-out cap
 * (balanced) or the naive fixed core group per peer.  Cost O(U * C) time,
 * O(U + C) memory for U units. */
void coll_library_partition_run(const coll_library_params *p, const coll_library_fabric *f,
                                const coll_library_peer_load *loads, int n_loads, int cores, gboolean balanced,
                                coll_library_partition *out);
/* The same, and finish[i] (optional, n_loads entries): when the last unit
 * of load i completes, counted from the partition's start (each core
 * serves its units back to back in assignment order: LPT's sorted order,
 * naive peer order).  Used by the event model (supernode_run.c): a peer's data is
 * delivered no earlier than its last unit. */
void coll_library_partition_finish(const coll_library_params *p, const coll_library_fabric *f,
                                   const coll_library_peer_load *loads, int n_loads, int cores, gboolean balanced,
                                   coll_library_partition *out, sim_time_ps *finish);
/* Unit cost: alpha_t + s / (beta_t / c_sat). */
sim_time_ps coll_library_unit_ps(const coll_library_params *p, const coll_library_fabric *f, coll_tier t,
                                 uint64_t bytes);

/* MoE dispatch from member `src` (reference §6 R-PART-1): T tokens, top-k
 * of E experts placed contiguously on the n members, Zipf popularity s
 * over a random permutation, one copy per distinct destination member
 * (self excluded); token_bytes each.  Writes n - 1 loads.  Deterministic
 * in seed.  O(T * k * log E). */
void coll_library_moe_dispatch(const coll_library_fabric *f, int src, int tokens, int top_k, int experts,
                               double zipf_s, uint64_t token_bytes, uint64_t seed, coll_library_peer_load *out);

/* ---- deterministic draws ------------------------------------------------ */

/* Uniform double in [0, 1) from the splitmix64 stream *state
 * (wisp_mix64).  O(1). */
double coll_library_uniform(uint64_t *state);

/* Microseconds to picoseconds for the closed forms (the value is always
 * in range: asserted).  O(1). */
static inline sim_time_ps coll_library_ps_from_us(double us)
{
  sim_time_ps v = 0;
  gboolean ok = wisp_ps_from_us(us, &v);
  g_assert(ok);
  return v;
}

G_END_DECLS
#endif
