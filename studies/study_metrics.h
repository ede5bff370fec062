/* study_metrics.h: the CCL-Bench metric catalog (doc/metrics.md) computed
 * from an activity timeline, for a measured trace and for a replay alike.
 *
 * One implementation, two feeds: a study_activity holds, per rank, the GPU
 * intervals of a step window (compute kernels, memory copies, communication
 * kernels, each with its collective facts) and the window itself on the
 * ranks' common clock.  study_activity_add_measured() fills it from the
 * measured start times a trace's graph carries (ET_FLAG_HAS_START);
 * study_activity_observer() fills it from a replay's observer and
 * study_activity_set_replay_windows() sets the simulated windows.
 * study_metrics_compute() then reads only the timeline, so a metric means
 * the same on both sides and a what-if reads "MFU 38 % -> 44 %".
 *
 * Cost: O(nodes) to collect; computing sorts each rank's intervals,
 * O(n log n) per rank, and sorts the bandwidth samples per collective type
 * for their medians.  Memory: 32 bytes per kept interval.
 */
#ifndef WISP_STUDY_METRICS_H
#define WISP_STUDY_METRICS_H

#include "replay/sim_replay.h"
#include "common/wisp_json.h"
#include "config/cfg_card.h"

G_BEGIN_DECLS

/* schema_version of `wisp metrics --json` and of the metrics object of
 * `wisp simulate --json`. */
#define STUDY_METRICS_SCHEMA_VERSION 1

/* What an interval of the timeline is. */
typedef enum {
  STUDY_ACT_COMPUTE = 0,  /* a GPU kernel that is neither communication nor a copy */
  STUDY_ACT_MEMCPY,       /* a memory copy (Kineto "Memcpy ...", XLA copy-start / copy-done) */
  STUDY_ACT_COMM,         /* a communication kernel (collective, send, recv) */
} study_act_kind;

/* Kernel classes of compute intervals, by name (study_kernel_class). */
typedef enum {
  STUDY_KERNEL_COMPUTE_BOUND = 0, /* GEMM, convolution, attention */
  STUDY_KERNEL_MEMORY_BOUND,      /* elementwise, normalisation, reductions, copies, ... */
  STUDY_KERNEL_UNCLASSIFIED,      /* a name that matches no rule (sim_kernel_named), e.g. a layer-level node */
} study_kernel_class;

/* The class of a compute kernel from its name: compute bound when the
 * levers' rules (sim_kernel_classify, replay/sim_levers.h; doc/studies.md
 * "Kernel classes") put it in the gemm class (GEMM, convolution,
 * attention, XLA dot), memory bound when it matches one of the other
 * classes' rules or the elementwise names, unclassified when its name
 * matches no rule (sim_kernel_named): the bundled example's
 * "fwd_mb0_layer3" is a layer, neither.  O(length of name x rules). */
study_kernel_class study_kernel_class_of(const char *name);
/* Whether a COMP node name is a memory copy: contains "memcpy" (any case),
 * or starts with "copy-start" / "copy-done".  O(length). */
gboolean study_is_memcpy_name(const char *name);

/* Whether a kernel is MoE work (moe_fraction, doc/metrics.md): one the
 * communication-kernel registry (frontends/kineto_commreg.h) sizes as an
 * MoE dispatch or combine (DeepEP), or whose name contains moe, expert,
 * routing, gating, topk, grouped_gemm (expert compute and routing) or
 * dispatchkernel, combinekernel (pplx-kernels), any case.
 * O(registry x length of name). */
gboolean study_is_moe_kernel(const char *name);

typedef struct study_activity study_activity;

/* An empty timeline for w's ranks (every window empty, origins 0).  It
 * holds up to 262,144 intervals (10 MiB) in memory; past that, intervals
 * go in per-rank blocks to an unlinked temporary file in $TMPDIR and are
 * read back rank by rank by study_metrics_compute, so memory stays
 * bounded (about 8 MiB of blocks in filling) and the metrics are the same
 * as from memory.  When no file can be written, everything stays in
 * memory. */
study_activity *study_activity_new(const et_workload *w);
void study_activity_free(study_activity *a);
/* Spill past `held` intervals in blocks of `block` (> 0) per rank; for
 * tests.  O(1). */
void study_activity_set_spill(study_activity *a, uint64_t held, guint block);
/* FALSE with an error when study_metrics_compute could not read the
 * spilled timeline back; its result must then be discarded.  O(1). */
gboolean study_activity_check(const study_activity *a, GError **error);
/* Adds node of rank's graph g, run over [start, end) on the common clock.
 * CPU nodes, idle gaps (ET_FLAG_DELAY), metadata and empty intervals are
 * not GPU activity and are left out.  O(1) amortized. */
void study_activity_add(study_activity *a, int rank, const et_graph *g, uint32_t node, sim_time_ps start,
                        sim_time_ps end);
/* The measured feed: every node with a measured start, at start +
 * (w->measured_start_ps[r] or 0), and each rank's window [origin, origin +
 * measured_step_ps).  FALSE with an error naming the input when the
 * workload carries no measured window (a synthetic Chakra set).  O(nodes). */
gboolean study_activity_add_measured(study_activity *a, const et_workload *w, GError **error);
/* The replay feed: an observer that adds every finished node and then
 * calls next (may be NULL), so a timeline writer can watch the same run.
 * The returned pointer lives as long as a. */
const sim_replay_observer *study_activity_observer(study_activity *a, const sim_replay_observer *next);
/* After the replay: rank r's window is [origin, end of the step) with
 * origin its measured start when r->measured_starts, else 0, and the step
 * ending when the last rank finishes (a rank that finishes early is idle
 * until then, as its measured step would show).  A rank that ran nothing
 * keeps an empty window.  O(ranks). */
void study_activity_set_replay_windows(study_activity *a, const sim_result *r, const et_workload *w);
/* Device facts the graphs do not keep (an Nsight export's, fe_nsys_facts),
 * on rank's graph clock (the measured feed shifts them by the rank's
 * measured start like the nodes): a kernel's launch grid of `blocks`
 * blocks on a device of sm_count SMs over [start, end) (ignored when
 * sm_count <= 0), and an NVLink throughput sample (%) at t.  O(1)
 * amortized. */
void study_activity_add_grid(study_activity *a, int rank, sim_time_ps start, sim_time_ps end, double blocks,
                             int sm_count);
void study_activity_add_p2p_sample(study_activity *a, int rank, sim_time_ps t, double value);
/* Why the grids or samples are absent (static strings; NULL keeps the
 * default, which says the input kind carries none). */
void study_activity_set_facts_why(study_activity *a, const char *grid_why, const char *p2p_why);
/* Every fact of an Nsight export (frontends/nsys.h, read over the paths
 * the workload came from) through the two calls above, and the reasons a
 * metric is n/a on it.  O(kernels + samples). */
struct fe_nsys_facts;
void study_activity_add_nsys_facts(study_activity *a, const struct fe_nsys_facts *f);
/* Steps the windows span (default 1); every per-step figure divides by it. */
void study_activity_set_steps(study_activity *a, int steps);

/* Model FLOPs of one step for MFU, from a CCL-Bench workload card
 * (doc/metrics.md "MFU"). */
typedef struct {
  gboolean training;           /* workload.model.phase: training (default) or inference */
  double num_params, num_params_active, num_params_embedding; /* model_arch */
  double num_layers, head_dim, num_heads;
  double batch_size, seq_len;  /* workload.data */
  int total_count;             /* hardware.xpu_spec.total_count, 0 when absent */
  char *hw_model;              /* hardware.xpu_spec.model, NULL when absent */
  double peak_tflops;          /* per device, from hw_model (A100 312, H100 989, TPU v6e 918); 0 unknown */
  gboolean no_model;           /* the card has no workload.model.model_arch (a card written for the
                                  layout or for kernel sizes): MFU is n/a with that reason */
} study_card;

/* The studies' keys of a card parsed by cfg_card_load (config/cfg_card.h):
 * those named above under workload.  A card without workload.model.
 * model_arch is read with no_model set (the one --card also serves --scale
 * and kernel sizes); a model_arch that lacks a key MFU needs, or a bad
 * value, is an error naming the file, the line and the key (counts -
 * num_layers, head_dim, num_heads, batch_size, seq_len, total_count - are
 * whole numbers >= 1, the parameter counts numbers >= 0).  O(1) lookups. */
gboolean study_card_from_doc(const cfg_card *doc, study_card *out, GError **error);
void study_card_clear(study_card *c);
/* FLOPs per token of the seed: 6 (N_act - N_emb) + 12 L H Q S (training) or
 * 2 (N_act - N_emb) + 4 L H Q S (inference); N_act = num_params_active when
 * given, else num_params. */
double study_card_flop_per_token(const study_card *c);
/* Peak dense TFLOPS of a device model name as CCL-Bench spells it
 * ("nvidia_a100" 312, "nvidia_h100" 989, "tpu_v6e" 918), 0 when unknown. */
double study_peak_tflops_of(const char *hw_model);

/* What MFU is computed from: a card, or the model FLOPs of an XLA profile
 * (with a peak), or nothing (MFU is null). */
typedef struct {
  const study_card *card;      /* may be NULL */
  uint64_t model_flops;        /* XLA: sum of model_flops over the window's ops, all chips; 0 unknown */
  double peak_tflops;          /* overrides the card's peak when > 0 */
} study_mfu_input;

/* One row per communication type seen. */
typedef struct {
  char op[24];                 /* "all_reduce", ..., "send", "recv" */
  uint64_t count;              /* intervals, all ranks */
  uint64_t sized;              /* of those, with a size (> 0 bytes) and a duration */
  double median_algbw_GBps, median_busbw_GBps; /* over the sized ones; NAN when none */
  double message_bytes_per_step; /* per rank and step: sum of Chakra comm_size / (ranks x steps) */
  double bus_bytes_per_step;   /* the same of nccl-tests S x busbw factor */
} study_metric_coll;

typedef struct {
  sim_time_ps window;          /* length of the rank's window */
  sim_time_ps active;          /* |U_c u U_k u U_m| */
  sim_time_ps compute, memcpy, comm; /* |U_k|, |U_m|, |U_c| */
  sim_time_ps exposed_comm;    /* |U_c \ (U_k u U_m)| */
  sim_time_ps overlapped_comm; /* |U_c n (U_k u U_m)| */
  sim_time_ps idle;            /* window - active */
} study_metric_rank;

typedef struct {
  int n_ranks, steps;
  sim_time_ps avg_step_time;   /* mean over ranks of window / steps */
  sim_time_ps step_min, step_max; /* spread over ranks of window / steps */
  double mfu_pct;              /* NAN when unknown */
  const char *mfu_source;      /* "card", "model_flops" or the reason it is unknown */
  double compute_bound_pct, memory_bound_pct; /* of compute kernel time, all ranks; NAN without compute */
  double unclassified_pct;     /* the rest: kernels whose names match no class rule; NAN without compute */
  const char *unclassified_kernel; /* the longest such kernel's name (the graphs' pool), NULL when none */
  double memory_transfer_overhead_pct; /* mean over ranks of |U_m \ U_k| / window */
  double communication_fraction_pct;   /* mean over ranks of |U_c| / active */
  sim_time_ps total_communication_time; /* mean over ranks of exposed comm per step */
  /* total_communication_time split as the replay accounts it (sim_rank_stats;
   * means over ranks per step): transfer, straggler wait, dependency wait.
   * comm_split FALSE (all 0) for a measured trace: its communication kernels
   * include the time they waited for peers, which no trace separates. */
  gboolean comm_split;
  sim_time_ps comm_transfer, straggler_wait, dependency_wait;
  double compute_comm_overlap_pct;     /* mean over ranks with comm of overlapped / |U_c|; NAN when none */
  double load_imbalance_ratio;         /* max / min active over ranks with activity; NAN when none */
  double straggler;                    /* (last comm end - first comm end) / (last comm end - first comm
                                          start) over ranks' comm windows, common clock; 0 with < 2 ranks */
  int straggler_rank;                  /* the rank whose communication ended last, -1 when none */
  double dominant_kernel_concentration_pct; /* the compute kernel name with the most time: its share of
                                          all compute-kernel time, every rank; NAN without compute */
  char *dominant_kernel;               /* its name, NULL without compute */
  double average_memory_bandwidth_GBps;  /* sum of sized memcpy/memset bytes / their time; NAN when none */
  const char *average_memory_bandwidth_source; /* how, or why it is unknown */
  double moe_fraction_pct;             /* MoE kernel time / kernel time (compute + communication, memcpy and
                                          memset left out), every rank; NAN without kernels */
  double mean_sm_coverage_pct;         /* duration-weighted mean of min(blocks / SMs, 1) over the kernels
                                          with a launch grid; NAN without grids */
  double mean_sm_coverage_unweighted_pct; /* the plain mean over those kernels (CCL-Bench's Nsight code) */
  const char *mean_sm_coverage_source; /* how, or why it is unknown */
  double bw_peertopeer_pct;            /* mean NVLink TX throughput sample (%) in the windows; NAN without */
  const char *bw_peertopeer_source;    /* how, or why it is unknown */
  /* TTFT and TPOT (CCL-Bench's inference_latency, study_latency_rule) in
   * ns, NAN with the reason when unknown; set by study_metrics_set_latency
   * (the catalog's one window cannot give them: `wisp metrics` loads each
   * model execution). */
  double ttft_ns, tpot_ns;
  char *ttft_why, *tpot_why;   /* how, or why it is unknown (owned) */
  study_metric_rank *ranks;            /* n_ranks */
  GArray *colls;                       /* study_metric_coll, ordered by op name */
  /* Non-NULL (owned) when the input carries no measured times (a PyTorch
   * execution trace alone, a generated or converted-without-times Chakra
   * set): every metric is unknown for this reason (study_metrics_unmeasured). */
  char *unmeasured_why;
} study_metrics;

/* Computes the catalog from a.  O(n log n) in the intervals. */
study_metrics *study_metrics_compute(const study_activity *a, const study_mfu_input *mfu);
void study_metrics_free(study_metrics *m);
/* The catalog of an input without measured times: every metric unknown
 * (NAN, null in JSON, n/a in the table) with why as each key's reason
 * (copied), the per-rank figures 0 and no collective rows.  O(n_ranks). */
study_metrics *study_metrics_unmeasured(int n_ranks, const char *why);
/* Sets TTFT and TPOT (NAN when unknown) and the sentence saying how or
 * why not (copied). */
void study_metrics_set_latency(study_metrics *m, double ttft_ns, double tpot_ns, const char *ttft_why,
                               const char *tpot_why);

/* The JSON object (under key; NULL m writes null): every metric with its
 * unit in the key, per rank figures and the per-type table. */
void study_metrics_json(wisp_json *j, const char *key, const study_metrics *m);
/* The terminal table: one line per metric, with a column per run given
 * (measured and/or simulated, either may be NULL), then the per-type
 * table of each. */
void study_metrics_print(const study_metrics *measured, const study_metrics *simulated, FILE *out);

G_END_DECLS
#endif
