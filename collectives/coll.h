/* coll.h: collective algorithms, decomposed into point-to-point transfers
 * on the network (net_send), so that topology and contention shape them.
 *
 * A collective starts when every member has issued it (the replay calls
 * coll_start once, at the time the last member issued).  It then runs as a
 * set of per-member state machines; each member's completion is reported
 * separately through done(), because members finish at different times
 * (e.g. the last receive of a ring differs per rank).
 */
#ifndef WISP_COLL_H
#define WISP_COLL_H

#include "chakra/et_graph.h"
#include "collectives/coll_facts.h" /* nccl-tests conventions: coll_algbw_bytes, coll_busbw_factor */
#include "collectives/libraries/coll_library.h"
#include "net/net.h"

G_BEGIN_DECLS

typedef enum {
  COLL_ALGO_AUTO = 0,
  COLL_ALGO_RING,          /* unidirectional ring */
  COLL_ALGO_RING_BIDIR,    /* bidirectional ring: half the data each way */
  COLL_ALGO_DIRECT,        /* direct / full mesh */
  COLL_ALGO_HALVING_DOUBLING,
  COLL_ALGO_DOUBLE_BINARY_TREE,
  COLL_ALGO_PAIRWISE,      /* pairwise exchange (all-to-all) */
  COLL_ALGO_NVLS,          /* in-switch reduction */
  COLL_ALGO_HIERARCHICAL,  /* per-dimension composition */
  COLL_ALGO_COUNT
} coll_algo;

const char *coll_algo_name(coll_algo a);
gboolean coll_algo_from_name(const char *s, coll_algo *out);

/* How collectives are run: algorithm per collective type (and, for
 * hierarchical runs, per dimension), chunk count, optional reduction cost. */
typedef struct coll_policy coll_policy;

/* Builds the policy from the collectives and library sections of a config
 * document (config/cfg.h keys "collectives.*", "library.*") for the
 * topology t built from it; defaults: auto everywhere.  doc NULL gives
 * the defaults.  Errors name the file, line and key. */
coll_policy *coll_policy_from_config(const cfg_doc *doc, const topo *t, GError **error);
/* coll_policy_from_config(topo_config(t), t, error). */
coll_policy *coll_policy_new_from_topo(const topo *t, GError **error);
coll_policy *coll_policy_new_default(void);
void coll_policy_free(coll_policy *p);
/* Forces one algorithm for every type (e.g. `--algo ring`). */
void coll_policy_force(coll_policy *p, coll_algo a);
/* Chunks each collective is cut into for pipelining (1..1024; default 1,
 * or the config's collectives.chunks). */
void coll_policy_set_chunks(coll_policy *p, int chunks);
/* Local reduction bandwidth; 0 (default) makes reductions free. */
void coll_policy_set_reduce_bw(coll_policy *p, wisp_bw_Bps bw);
/* Lets the tuner use in-switch reduction (NVLS) on switch dimensions. */
void coll_policy_set_in_switch_reduction(coll_policy *p, gboolean on);
/* The communication-library model (doc/libraries.md): read from the
 * config's `library:` mapping by coll_policy_from_config (default nccl,
 * NCCL's tuner, for wisp configs; ideal, wisp's textbook algorithms, for
 * ASTRA-sim network.yml; coll_policy_new_default() gives ideal).  The
 * policy keeps a copy. */
void coll_policy_set_library(coll_policy *p, const coll_library_params *lib);
const coll_library_params *coll_policy_library(const coll_policy *p);

/* How an ALL_TO_ALLV crosses the tiers (coll_desc.two_hop; the values of
 * et_comm.two_hop, chakra/et_graph.h): flat (every pair on its own route),
 * or DeepEP's internode pattern (collectives/coll_twohop.c): dispatch =
 * scale-out to the same local index on the destination node, then
 * scale-up forwarding; combine = scale-up gather at the owner's local
 * index, then scale-out.  Without node structure the flat run is used. */
typedef enum {
  COLL_TWO_HOP_NONE = 0,
  COLL_TWO_HOP_DISPATCH = 1,
  COLL_TWO_HOP_COMBINE = 2,
} coll_two_hop;

typedef struct {
  et_coll_type type;
  uint64_t bytes;          /* Chakra comm_size semantics (AG: per-rank shard; RS: full input) */
  const int *ranks;        /* global ranks, communicator order */
  int n_ranks;
  int root;                /* global root rank for rooted collectives, else -1 */
  const uint64_t *splits;  /* ALL_TO_ALLV: n_ranks*n_ranks bytes, row = sender; else NULL */
  /* ALL_TO_ALLV only: coll_two_hop (0 = flat), and the scale-out bytes of
   * one (source, destination node) as millionths of the splits' sum to that
   * node (per-node deduplication of a token's copies; 1000000 = none). */
  int two_hop;
  uint32_t two_hop_ppm;
  /* Buffer lifecycle for the library model (optional; zero = unknown).
   * buffer: identity of the communication buffer (e.g. a storage id);
   * 0 derives one from (type, bytes, group).  alloc_known: alloc_time is
   * when the buffer was (last) physically allocated or remapped (from
   * memory events); otherwise the synthetic lifecycle of the library
   * config applies. */
  uint64_t buffer;
  gboolean alloc_known;
  sim_time_ps alloc_time;
} coll_desc;

/* What was run, for reports. */
typedef struct {
  coll_algo algo;          /* algorithm actually used (never AUTO) */
  uint64_t algbw_bytes;    /* S of nccl-tests' algbw for this collective */
  double busbw_factor;     /* nccl-tests' busbw factor for (type, n) */
  char detail[160];        /* the plan, e.g. "reduce_scatter:ring@x > all_reduce:direct@y > all_gather:ring@x";
                              library nccl: prefixed with "ALGO/PROTO: " */
  int nccl_algo;           /* library nccl: NCCL's algorithm (coll_nccl_algo), else -1 */
  int proto;               /* library nccl: NCCL's protocol (coll_proto), else -1 */
  sim_time_ps host_ps;     /* library nccl/rccl: the host thread's launches for this collective, else 0 */
  /* Library model (zero for nccl), known when coll_start returns: */
  sim_time_ps reg_max_ps;  /* largest registration wait of a member (JIT miss or ROA barrier) */
  int barrier_hits;        /* members blocked by the ROA readiness barrier */
  int jit_misses;          /* members that registered just in time */
  uint64_t staging_bytes;  /* copy-in + copy-out bytes, all members */
  /* Core partitioning of the fan-out steps (library model, MTE; computed
   * whether or not the makespan is part of the op's time, see the
   * library parameters fm_core_term / a2a_core_term): */
  sim_time_ps core_makespan_ps; /* largest makespan of one member's step partition */
  double core_spread;      /* that partition's spread: (max - min) / max over active cores */
  uint64_t core_units;     /* that partition's units */
  int core_member;         /* its member (index into ranks) */
  double core_spread_mean; /* mean spread over the op's partitions */
  sim_time_ps policy_gen_ps; /* largest LPT policy generation time of a partition (k_pol formula) */
  sim_time_ps policy_ps;   /* largest policy time put on a member's critical path (first use of a shape) */
} coll_info;

typedef void (*coll_done_fn)(sim_engine *sim, void *ctx, uint64_t cookie, int member);

/* The collective runtime (coll_rt_): runs collectives as per-member state
 * machines on one engine and network; not to be confused with the
 * communication-library models (coll_library_, collectives/libraries/),
 * whose parameters it applies.  ("engine" would collide with sim_engine
 * and with the library model's per-member DMA engine.) */
typedef struct coll_rt coll_rt;
coll_rt *coll_rt_new(sim_engine *sim, net *n, const coll_policy *policy);
/* Frees the runtime and drops its unfinished collectives; free it after
 * the last sim_run, before its net and the engine (sim.h, teardown): its
 * queued events point into it and are dropped with the engine. */
void coll_rt_free(coll_rt *c);

/* Starts the collective now; done(ctx, cookie, i) is called once for each
 * member i (index into desc->ranks) when that member has finished.  The
 * desc arrays are copied.  info (optional) receives the algorithm chosen. */
void coll_start(coll_rt *c, const coll_desc *desc, coll_done_fn done, void *ctx, uint64_t cookie,
                coll_info *info);

/* Point-to-point through the communication library (doc/libraries.md §2;
 * reference §5.1: "Broadcast, P2P: single-peer loads, 1 sync point"): a
 * send of `bytes` from global rank src to dst runs as the library's
 * two-member operator with one transfer: the library's registration of
 * the buffer (JIT / ROA: one map job per side; `buffer` 0 derives an id
 * from (src, dst, bytes); alloc_known/alloc_time as in coll_desc),
 * staging copies, SDMA submission, the engine's single-peer service and
 * sigma_sig once.  done(ctx, cookie, 0) when the sender has finished
 * (its write has left its engine, plus sigma_sig), done(ctx, cookie, 1)
 * when the receiver has.  Returns FALSE and does nothing when the library
 * is nccl: the caller then sends on the network itself (net_send), as
 * before, so nccl replays do not change.  info (optional) as for
 * coll_start.  O(1) plus coll_start's work for two members. */
gboolean coll_p2p_start(coll_rt *c, int src, int dst, uint64_t bytes, uint64_t buffer, gboolean alloc_known,
                        sim_time_ps alloc_time, coll_done_fn done, void *ctx, uint64_t cookie, coll_info *info);

/* ---- Buffer lifecycle from the members' nodes (issue 16: the replay
 * asks, the collective layer computes) ----
 * The library model keys registration by one buffer id and one allocation
 * time per operation (coll_desc.buffer / alloc_known / alloc_time); the
 * replay knows each member's et_comm (buffer, has_alloc, alloc_ps: from
 * memory events).  These two functions turn the members' attributes into
 * the descriptor's lifecycle, so that the hash the library model sees is
 * defined here, beside the model, and nowhere else. */
typedef enum {
  COLL_LIFECYCLE_NONE,     /* no member carries an allocation: the synthetic lifecycle applies */
  COLL_LIFECYCLE_PARTIAL,  /* some members do, not all: synthetic too (the replay counts these) */
  COLL_LIFECYCLE_KNOWN,    /* every member does: d's buffer, alloc_known and alloc_time are set */
} coll_lifecycle;
/* member(ctx, k) returns member k's communication attributes (k indexes
 * d->ranks), or NULL when it has none.  Known: d->buffer is a splitmix64
 * hash of the members' buffer ids in member order (never 0), and
 * d->alloc_time the latest member's allocation (the group's registration
 * can start only when every member's buffer exists), clamped to `now` (an
 * allocation cannot follow its use).  Otherwise d is left as it was.
 * O(members). */
typedef const et_comm *(*coll_member_comm_fn)(void *ctx, int member);
coll_lifecycle coll_desc_set_lifecycle(coll_desc *d, coll_member_comm_fn member, void *ctx, sim_time_ps now);
/* The same for a point-to-point operation (coll_p2p_start's buffer,
 * alloc_known, alloc_time): TRUE when both sides carry a buffer and an
 * allocation time; *buffer is then a hash of the two ids (odd, so never
 * 0) and *alloc_time the later allocation clamped to `now`.  FALSE sets
 * both to 0.  O(1). */
gboolean coll_p2p_lifecycle(const et_comm *send, const et_comm *recv, sim_time_ps now, uint64_t *buffer,
                            sim_time_ps *alloc_time);

/* Interference with compute (doc/libraries.md §9, reference §7): while a
 * library collective is in flight on a rank (from the start of the
 * collective plus that member's registration wait, through its staging
 * copies and transfers, to its completion), compute on that rank runs
 * slower by coll_library_interference() of everything in flight there.
 * The library does not know about compute: it calls fn(sim, ctx, rank,
 * delta) synchronously, at the current time, whenever a rank's delta
 * changes (before the member's done() callback when a member finishes,
 * so compute started by that callback sees the new delta); the replay
 * re-times its running compute nodes.  Call before the first coll_start.
 * Returns FALSE, and never calls fn, when the library does not interfere
 * (nccl, or kappa_core, kappa_hbm and delta_sdma all 0): the caller then
 * needs no per-node bookkeeping at all.  Cost when active: O(1) per
 * member start and finish plus the callback. */
typedef void (*coll_slowdown_fn)(sim_engine *sim, void *ctx, int rank, double delta);
gboolean coll_rt_set_slowdown_hook(coll_rt *c, coll_slowdown_fn fn, void *ctx);

/* The fast paths of tier A.  The ring recurrence (coll_ring.c): flat unidirectional
 * ring all-reduce, reduce-scatter and all-gather of one chunk on tier A,
 * ideal or NCCL model, are charged by a step recurrence instead of per
 * transfer when their hops are link-disjoint and their links idle at the
 * start, with the same per-member completion times; another transfer
 * over their links turns them back to per transfer at that instant.
 * The symmetric-phase fast path (coll_fast.c) charges the other
 * one-chunk schedules of the ideal library whose members stay in step
 * (halving-doubling, direct, per-dimension plans) the same way, with the
 * same conversion.
 * Groups of at least min_members members take them (default
 * COLL_RING_RECURRENCE_MIN; 0 turns it off, for comparisons).  Smaller
 * rings cost little per transfer, and there the per-transfer path also
 * fixes the order of events within one picosecond, which the recurrence
 * does not reproduce (members finishing at the same instant are reported
 * in member order; a tie between a ring step and other traffic on a link,
 * see coll_ring.c), so the outputs of small jobs do not depend on it.
 * Counters: runs that took it, those of them whose members were all
 * alike (equal pieces, alike hops: the closed form, O(steps)), candidates
 * that did not take it (links busy or shared at the start), runs turned
 * back by other traffic. */
typedef struct {
  uint64_t runs;
  uint64_t symmetric;
  uint64_t shared;
  uint64_t conversions;
  /* The symmetric-phase fast path (coll_fast.c; same minimum members and
   * switch as the recurrence): runs on it, candidates it declined (a
   * condition failed while charging: the run went per transfer), runs
   * turned back by other traffic. */
  uint64_t phase_runs;
  uint64_t phase_declined;
  uint64_t phase_conversions;
  /* Runs of the symmetric-phase path charged in its symmetric mode (one
   * switch dimension, every member's step alike: one representative
   * route per step, the other links mirrored). */
  uint64_t phase_symmetric;
  /* Runs of the phase path charged by the tree replay (coll_fast_tree.c:
   * plans with a double binary tree, the ideal library's or NCCL's, no
   * shared-engine event per transfer); counted in phase_runs too. */
  uint64_t phase_tree;
  /* Of those, runs that took the kept result of an earlier identical run
   * on idle links instead of a replay (coll_fast_tree.c). */
  uint64_t phase_tree_reused;
} coll_ring_stats;
#define COLL_RING_RECURRENCE_MIN 64
void coll_rt_set_ring_recurrence(coll_rt *c, int min_members);
const coll_ring_stats *coll_rt_ring_stats(const coll_rt *c);

/* Library statistics accumulated over every collective started so far
 * (registration on the critical path, barrier hits and blocked-time
 * distribution, staging bytes, core occupancy); all zero for nccl. */
const coll_library_stats *coll_rt_library_stats(const coll_rt *c);

/* Validates a descriptor against the topology (members in range and
 * distinct, root a member for rooted types, splits for ALL_TO_ALLV, known
 * type); coll_start() asserts what this checks. */
gboolean coll_desc_check(const topo *t, const coll_desc *desc, GError **error);

/* Runs one collective alone on a fresh engine, network and library and
 * returns its completion time (collbench, tests).  Under library nccl the
 * time is that of one iteration of nccl-tests' back-to-back timing loop:
 * max(host launch cost, GPU time) (see coll_measure_lib in coll_rt.c). */
gboolean coll_measure(const topo *t, net_tier tier, const coll_policy *policy, const coll_desc *desc,
                      sim_time_ps *time_ps, coll_info *info, GError **error);

/* Like coll_measure with the library model's statistics (may be NULL). */
gboolean coll_measure_lib(const topo *t, net_tier tier, const coll_policy *policy, const coll_desc *desc,
                          sim_time_ps *time_ps, coll_info *info, coll_library_stats *stats, GError **error);

G_END_DECLS
#endif
