/* coll_library.h: models of the communication library itself (not the
 * wires): buffer registration, staging copies, full-mesh remote-slice
 * operators with per-step synchronisation, NPU-core partitioning and DMA
 * offload, after ../shared/reference/supernode-model.md (StrataCL on
 * CloudMatrix384).  Prefix coll_library_.
 *
 * Libraries (config `library: {name: ...}` or `collbench --library`):
 *   nccl           NCCL's tuner (coll_nccl.h): algorithm and protocol per
 *                  size, protocol efficiency and latencies on the
 *                  simulated transfers; the default for wisp configs;
 *   rccl           RCCL (AMD Instinct): NCCL's plan with RCCL's tuner,
 *                  tuning model 5 of MI300X (rccl/coll_rccl.h);
 *   ideal          wisp's textbook algorithms (collectives/coll_run.c), no
 *                  library cost; the default for ASTRA-sim network.yml;
 *   hccl           ring / halving-doubling through a bounded, pre-registered
 *                  staging buffer: copy-in and copy-out traffic and time;
 *   hccl-zerocopy  ring / halving-doubling on user buffers after
 *                  just-in-time (JIT) registration at first use, or a
 *                  pre-registered pool (`registration: pool`);
 *   stratacl       registration on allocation (ROA) with a readiness
 *                  barrier at first use, full-mesh operators, LPT core
 *                  partitioning with a per-tier fan-out cap, optional SDMA;
 *   cann-ep-zerocopy  MoE dispatch/combine of CANN EP on user buffers
 *                  (reference §8): full-mesh all-to-all(v) with naive core
 *                  groups; other collectives as hccl-zerocopy;
 *   cann-ep        the same through HCCL's staging buffer: copies with a
 *                  fixed cost t_copy0 each, overlap omega (§8).
 *
 * Two uses:
 *  - the event model (coll_run.c with supernode/supernode_run.c, what simulate / utility / sweep run): the
 *    library's flat operators, a per-member engine (one peer per step at
 *    the route's bottleneck, a fan-out at coll_library_fm_bw, SDMA
 *    1 + eps slower), the core partition of every fan-out step
 *    (coll_library_partition_finish; its makespan bounds the step where
 *    fm_core_term / a2a_core_term say so), notify-driven steps with
 *    sigma_sig, and the registration barrier, staging copies, SDMA
 *    submission and policy generation around the transfers;
 *    coll_library_stats accumulates (coll_rt_library_stats); the
 *    reproduction targets, MoE dispatch/combine included
 *    (coll_library_moe_splits), are checked on it (test_library_sim); in
 *    the replay, collectives in flight slow compute on their ranks by
 *    coll_library_interference (coll_rt_set_slowdown_hook, test_overlap);
 *  - mode A (analytic, this header's coll_library_op_cost): closed forms
 *    per operation (reference §5-§7), kept as test oracles and printed by
 *    collbench --compare beside the simulation.
 * The flow tier stands in for the reference's mode B (per-die max-min
 * sharing), with one event per transfer rather than per unit.
 *
 * Every time is integer picoseconds; closed forms that need a real-valued
 * factor (exp, log2, 1 + epsilon) compute it in double and round once
 * through wisp_ps_from_us() / wisp_transfer_ps().
 */
/* This header is what the other layers use (libraries and their names,
 * parameters, statistics, MoE routing, the interference delta); the
 * models' internals (fabric view, mode A closed forms, registration state,
 * core partitioning, deterministic draws) are in supernode/coll_library_internal.h,
 * for the family's hooks on the run (supernode_run.c), collbench --compare and the tests.
 */
#ifndef WISP_COLL_LIBRARY_H
#define WISP_COLL_LIBRARY_H

#include "chakra/et_graph.h"
#include "topologies/topo.h"

G_BEGIN_DECLS

typedef enum {
  COLL_LIBRARY_NCCL = 0,
  COLL_LIBRARY_HCCL,
  COLL_LIBRARY_HCCL_ZEROCOPY,
  COLL_LIBRARY_STRATACL,
  COLL_LIBRARY_CANN_EP,
  COLL_LIBRARY_CANN_EP_ZEROCOPY,
  COLL_LIBRARY_IDEAL,
  COLL_LIBRARY_RCCL,
  COLL_LIBRARY_COUNT
} coll_library_kind;

const char *coll_library_name(coll_library_kind k);
/* Whether kind k is one of the supernode libraries with an engine,
 * registration and staging model (hccl ... cann-ep-zerocopy); FALSE for
 * nccl, rccl and ideal, which run on the network alone. */
gboolean coll_library_has_engine(coll_library_kind k);
/* The library a config without `library: name` gets: nccl for wisp
 * configs, ideal for ASTRA-sim network.yml (ASTRA-sim's semantics). */
coll_library_kind coll_library_default_for(const topo *t);
gboolean coll_library_from_name(const char *s, coll_library_kind *out);

/* Registration modes (reference §4.1). */
typedef enum {
  COLL_REG_NONE = 0, /* nccl: not modelled */
  COLL_REG_STAGING,  /* hccl: internal pre-registered buffer, copies */
  COLL_REG_JIT,      /* map at first use, on the critical path */
  COLL_REG_POOL,     /* whole pool registered at init: no per-op cost */
  COLL_REG_ROA,      /* registration on allocation + readiness barrier */
} coll_reg_mode;

const char *coll_reg_mode_name(coll_reg_mode m);

/* Fabric tiers of the supernode (rank = die). */
typedef enum {
  COLL_TIER_D2D = 0,   /* sibling die of the same NPU */
  COLL_TIER_INTRA,     /* other NPU, same node */
  COLL_TIER_INTER,     /* other node of the supernode */
  COLL_TIER_SCALEOUT,  /* other supernode (RDMA plane) */
  COLL_TIER_COUNT
} coll_tier;

/* Every parameter of the library model.  Defaults and provenance tags:
 * coll_library_param_at() (also printed by `wisp collbench
 * --library-params` and listed in doc/libraries.md). */
typedef struct {
  coll_library_kind kind;
  coll_reg_mode reg;                 /* derived from kind; hccl-zerocopy: jit or pool */
  /* Fabric (reference Table 1; 0 = take the topology's route cost). */
  sim_time_ps alpha[COLL_TIER_COUNT];
  wisp_bw_Bps beta[COLL_TIER_COUNT];
  wisp_bw_Bps b_port, b_sio;
  int c_aiv, c_sat, cores;           /* AIV cores per die, cores that saturate, cores used */
  sim_time_ps sigma_sig;             /* per-step synchronisation */
  double g_inf0, g_inf_slope;        /* g_inf(N) = g_inf0 + slope * log2(N / 32) */
  uint64_t s_c;                      /* fan-out contention scale */
  gboolean fm_core_term;             /* add the core makespan to full-mesh AG/RS/AR (§5.3 omits it) */
  gboolean a2a_core_term;            /* add it to full-mesh all-to-all(v): MoE dispatch/combine (§8) */
  /* Staging (hccl). */
  wisp_bw_Bps b_copy;
  uint64_t buffsize;
  double overlap;                    /* omega: share of copies hidden */
  sim_time_ps t_copy0;               /* fixed cost of each staging copy (cann-ep, §8) */
  /* Registration. */
  sim_time_ps t_exp, t_imp, t_map0, t_pte, t_meta, t_chk;
  uint64_t page;
  double k_rdma;
  /* Synthetic buffer lifecycle. */
  sim_time_ps gap_min;               /* allocation before first use */
  double p_remap;                    /* per use after the first */
  sim_time_ps gap_remap_lo, gap_remap_hi;
  uint64_t seed;
  /* Partitioning. */
  gboolean balanced;                 /* LPT (TRUE) or naive core groups */
  uint64_t unit_bytes;               /* S_t, all tiers */
  int fanout_cap[COLL_TIER_COUNT];   /* H_t; 0 = unlimited */
  double k_pol_ns;
  /* Engine. */
  gboolean sdma;
  gboolean sdma_poll;                /* completion mode I (poll) vs II (notify) */
  double eps_sdma;
  sim_time_ps t_desc, t_db, t_notify;
  int c_poll;
  uint64_t desc_bytes;
  /* Interference with compute on the same rank (§7; coll_library_interference). */
  double kappa_core;                 /* delta per share of the AIV cores the op uses */
  double kappa_hbm;                  /* delta per share of HBM bandwidth taken by staging copies */
  wisp_bw_Bps b_hbm;                 /* HBM bandwidth per die */
  double delta_sdma;                 /* residual delta of an SDMA op (cores released) */
  /* NCCL model (library nccl; coll_nccl.h, doc/collectives.md). */
  int sm;                            /* GPU compute capability x 10 (70, 80, 90, 100) */
  wisp_bw_Bps nvlink_link_bw;        /* raw rate of one NVLink link; 0 = from sm (25 GB/s, 50 GB/s on sm 100) */
  int nccl_algo;                     /* forced algorithm (coll_nccl_algo) or COLL_NALGO_AUTO */
  int nccl_proto;                    /* forced protocol (coll_proto) or COLL_PROTO_AUTO */
  int channels;                      /* ring/tree channels; 0 = derived */
  sim_time_ps launch;                /* host cost of launching one collective kernel */
  int gpus_per_thread;               /* GPUs one host thread launches for (nccl-tests -g) */
  int nccl_version;                  /* NCCL_VERSION_CODE (20909 = 2.9.9); 0 = the version the tuner follows */
  sim_time_ps net_overhead;          /* host cost of a network post (NCCL_NET_OVERHEAD) */
  sim_time_ps net_latency;           /* the NIC's own latency (NCCL graph latencyInter) */
  double step_latency_scale;         /* x NCCL's per-step (per-hop) latencies in the simulated time; 1 = NCCL's */
  double net_efficiency;             /* measured share of the scale-out line rate (calibrated); 0 = not measured */
} coll_library_params;

/* Defaults of library k (reference §9). */
void coll_library_params_default(coll_library_kind k, coll_library_params *p);

/* Reads the library section of a config document (config/cfg.h keys
 * "library.*") for the topology t built from it: name (default
 * coll_library_default_for(t)) then any parameter of
 * coll_library_param_at().  Unknown keys and bad values are errors naming
 * file, line and key.  doc NULL gives the defaults. */
gboolean coll_library_params_from_config(const cfg_doc *doc, const topo *t, coll_library_params *p, GError **error);
/* coll_library_params_from_config(topo_config(t), t, p, error). */
gboolean coll_library_params_from_topo(const topo *t, coll_library_params *p, GError **error);
/* Sets one parameter by name ("t_exp", "registration", ...) from text;
 * used by the config reader and by `collbench --library-set KEY=VALUE`. */
gboolean coll_library_params_set(coll_library_params *p, const char *key, const char *value, GError **error);

/* Parameter table: name, default as text for library k, unit, tag. */
typedef struct {
  const char *name;
  const char *unit;
  const char *tag;     /* [paper], [sw], [DERIVED], [ASSUMPTION], [FIT], [pub] ... */
  const char *meaning;
} coll_library_param_info;
size_t coll_library_param_count(void);
const coll_library_param_info *coll_library_param_at(size_t i); /* i < count */
/* The current value of a parameter as text (g_free). */
char *coll_library_param_value(const coll_library_params *p, const char *name);

/* ---- interference with compute (reference §7) -------------------------- */

/* The compute slowdown delta of a rank whose in-flight library collectives
 * together use `cores` AIV cores, move `stage_Bps` bytes/s of staging
 * copies through HBM and include `n_sdma` SDMA-driven ops (cores released):
 *   delta = kappa_core * min(cores, c_aiv) / c_aiv
 *         + kappa_hbm * min(stage_Bps, b_hbm) / b_hbm + n_sdma * delta_sdma.
 * Compute on that rank progresses at rate 1 / (1 + delta) (the reference's
 * "duration x (1 + delta)").  0 for nccl.  O(1). */
double coll_library_interference(const coll_library_params *p, int cores, uint64_t stage_Bps, int n_sdma);

/* ---- statistics of a run ------------------------------------------------ */

/* Blocked-time distribution: count, sum, max and a log2 histogram of
 * blocked nanoseconds (bucket i: [2^i, 2^(i+1)) ns; bucket 0 also < 1 ns). */
#define COLL_LIBRARY_HIST 48
typedef struct {
  uint64_t ops;                 /* member-ops that went through registration */
  uint64_t hits;                /* readiness-barrier hits (blocked > 0) */
  sim_time_ps blocked_sum_ps, blocked_max_ps;
  uint64_t hist[COLL_LIBRARY_HIST];
  uint64_t jit_misses;          /* JIT cache misses (registration on the path) */
  sim_time_ps reg_critical_ps;  /* registration time on the critical path, summed */
  uint64_t jobs;                /* mapper jobs served */
  uint64_t remaps;              /* synthetic remaps drawn */
  uint64_t staging_bytes;       /* copy traffic, all ranks */
  sim_time_ps staging_ps;       /* copy time on the critical path, summed over members */
  double core_occupancy_us;     /* summed over ops (mode A estimate per op) */
  uint64_t ops_total;           /* collectives seen */
  /* Core partitioning of the simulated fan-out steps (one partition per
   * member, chunk and full-mesh step that moves data; supernode_run.c). */
  uint64_t partitions;
  double core_spread_sum;       /* sum of the partitions' spreads */
  double core_spread_max;
  sim_time_ps core_makespan_max_ps;
  sim_time_ps policy_ps;        /* policy generation put on members' critical paths, summed */
} coll_library_stats;

/* Percentile q (0..1) of the blocked times of hits, from the histogram:
 * the upper edge of the bucket holding it (an upper bound within 2x). */
sim_time_ps coll_library_stats_blocked_pct(const coll_library_stats *s, double q);

/* MoE routing of a whole expert-parallel group (reference §8): every one
 * of the n members routes `tokens` tokens to top_k distinct experts of
 * `experts` (placed contiguously, experts / n per member), popularity
 * w_e ~ 1 / rank(e)^zipf_s over one random permutation of the experts
 * (shared by all members: popularity is a property of the experts), one
 * copy per distinct destination member other than the sender.  Writes the
 * n x n all-to-allv sizes (row = sender, diagonal 0): dispatch (combine
 * FALSE) splits[a][b] = token_bytes x the tokens of a routed to b; combine
 * (TRUE) the transpose (b returns a's tokens).  The permutation draws from
 * the stream seeded with `seed` (as coll_library_moe_dispatch), member
 * a's tokens from the stream seeded with seed ^ mix(a + 1); deterministic
 * in seed.  Needs experts a multiple of n, experts >= n and 1 <= top_k <=
 * experts.  O(n T k (k + log E)) time, O(n + E) memory besides splits. */
void coll_library_moe_splits(int n, int tokens, int top_k, int experts, double zipf_s, uint64_t token_bytes,
                             uint64_t seed, gboolean combine, uint64_t *splits);

G_END_DECLS
#endif
