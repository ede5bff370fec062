/* cal.h: calibration of network parameters from measured communication
 * kernels, and the baseline fidelity report (prefix cal_).
 *
 * Calibration fits the alpha-beta (Hockney) model
 *
 *     T = steps(op, n) * alpha + bus_bytes(op, S, n) / beta
 *
 * by least squares, separately for each communicator class: collectives
 * whose ranks all sit in one scale-up domain (CAL_CLASS_INTRA) and those
 * that span domains (CAL_CLASS_INTER).  steps() and bus_bytes() are the
 * ring algorithm's step count and per-rank bytes on the wire (bus_bytes =
 * nccl-tests busbw factor x algbw bytes), stated per collective in
 * doc/calibration.md.  Each point is one collective instance (matched
 * across ranks by group and per-group order); its duration is the shortest
 * usable member kernel, because the member that arrived last waited least.
 * Kernels overlapped with other communication on the same rank, zero-byte
 * and point-to-point operations and kernels without a measured duration
 * are excluded, counted and listed with the reason.
 *
 * The baseline fidelity report compares a replay (sim_result) with the
 * trace it came from: simulated step time against the measured step, and
 * each collective's simulated duration (end - start) against the measured
 * kernel duration, by collective type and size class (powers of 4).
 *
 * Cost: fitting is O(C log C) for C communication nodes (sorting each
 * rank's kernels by start), memory O(C); the baseline report is O(R) for
 * R communication records.
 */
#ifndef WISP_CAL_H
#define WISP_CAL_H

#include <math.h>

#include "chakra/et_graph.h"
#include "collectives/coll.h"
#include "replay/sim_replay.h"
#include "common/wisp_json.h"
#include "topologies/topo_variant.h"

G_BEGIN_DECLS

typedef enum {
  CAL_CLASS_INTRA = 0,     /* every member in one scale-up domain */
  CAL_CLASS_INTER = 1,     /* members in two or more domains */
  CAL_N_CLASSES
} cal_class;

const char *cal_class_name(cal_class c);   /* "intra-node", "inter-node" */

/* Why a communication node or instance was not used.  CAL_USED = 0. */
typedef enum {
  CAL_USED = 0,
  CAL_EX_P2P,              /* send/recv: duration includes the peer's wait */
  CAL_EX_CPU_OP,           /* CPU-side (replayed) op, not a GPU kernel */
  CAL_EX_UNSUPPORTED,      /* barrier or unknown type: no bytes model */
  CAL_EX_ZERO_BYTES,
  CAL_EX_NO_DURATION,      /* measured duration 0 (unknown) */
  CAL_EX_SINGLE_RANK,      /* group of one rank: nothing moves */
  CAL_EX_MISMATCH,         /* members disagree on type or size */
  CAL_EX_OVERLAP,          /* every traced member overlapped other communication */
  CAL_EX_COUNT
} cal_exclusion;

const char *cal_exclusion_text(cal_exclusion e);

typedef enum {
  CAL_LOSS_RELATIVE = 0,   /* minimise sum ((pred - T) / T)^2 (default) */
  CAL_LOSS_ABSOLUTE = 1,   /* minimise sum (pred - T)^2 */
} cal_loss;

typedef struct {
  /* Scale-up domain of each rank (n_ranks entries, any integer ids), or
   * NULL: rank / domain_size (domain_size <= 0: one domain for all). */
  const int *rank_domain;
  int domain_size;
  /* Priors used when a class cannot separate alpha and beta or has no
   * points: alpha in ps per step, beta in bytes/s (> 0). */
  double prior_alpha_ps[CAL_N_CLASSES];
  double prior_beta_Bps[CAL_N_CLASSES];
  cal_loss loss;
} cal_options;

void cal_options_init(cal_options *opt);   /* 8-rank domains, 1 us / 25 GB/s priors */

/* One collective instance (a fit point) or one excluded node. */
typedef struct {
  int rank;                /* member whose kernel was used (or the excluded node's rank) */
  uint64_t node_id;        /* Chakra id of that node */
  uint32_t group;          /* group index or ET_GROUP_WORLD */
  uint32_t seq;            /* per-group order on the rank */
  uint8_t op;              /* et_coll_type; ET_COLL_NONE for send/recv */
  uint8_t cls;             /* cal_class */
  uint8_t excluded;        /* cal_exclusion */
  int n;                   /* group size */
  int members_seen;        /* traced members of the instance */
  int members_overlapped;  /* of those, overlapped with other communication */
  uint64_t bytes;          /* Chakra comm_size */
  double steps;            /* design row: alpha coefficient */
  double bus_bytes;        /* design row: 1/beta coefficient (bytes) */
  sim_time_ps measured;    /* duration used (ps) */
  double predicted_ps;     /* fitted model; NAN when not fitted */
  double residual_pct;     /* (predicted - measured) / measured x 100 */
} cal_point;

typedef struct {
  int n_points;            /* used instances */
  int n_sizes;             /* distinct bytes values among them */
  gboolean fitted;         /* FALSE: no points, prior kept */
  gboolean alpha_from_prior, beta_from_prior, alpha_clamped;
  double alpha_ps;         /* per step */
  double beta_Bps;
  double rms_rel_pct, max_rel_pct, rms_abs_ps;
  char *note;              /* fallbacks taken, in words; NULL when none */
} cal_class_fit;

/* Refit of one tier's link values against the simulator itself
 * (cal_refit_to_simulator). */
typedef struct {
  gboolean done;
  int dim;                 /* topology dimension written */
  int points;              /* distinct (op, group, bytes) simulated */
  double latency_ps, bw_Bps;       /* link values to write (bw_Bps: the effective rate) */
  double line_Bps;         /* > 0: bw_Bps is written as the share bw_Bps / line_Bps (CAL_SHARE_KEY) */
  double rms_before_pct, rms_after_pct; /* simulated vs measured, before and after */
} cal_tier_refit;

typedef struct {
  GArray *points;          /* cal_point: used instances, then exclusions */
  cal_class_fit cls[CAL_N_CLASSES];
  cal_tier_refit refit[CAL_N_CLASSES];
  uint64_t comm_nodes;     /* communication nodes read */
  uint64_t instances;      /* collective instances formed */
  uint64_t excluded[CAL_EX_COUNT]; /* per reason: nodes (P2P, CPU_OP) or instances */
  uint64_t unchecked_overlap;      /* nodes without a measured start: overlap not checked */
  cal_loss loss;
  /* TRUE (cal_fit_workload's default; `calibrate --library ideal`): the
   * written config and the refit run the textbook schedules the model
   * assumes (library ideal, ring / pairwise / direct); FALSE (`calibrate`
   * on a cluster with another library): the cluster's own library and
   * collective choices are kept and the refit fits the link values under
   * them. */
  gboolean textbook;
  /* Set by cal_refit_library (library nccl kept): the library's free
   * parameters fitted with the tiers' link values against the simulator. */
  gboolean lib_refit;
  double launch_ps;            /* library.launch */
  double step_scale;           /* library.step_latency_scale */
  double lib_rms_before_pct, lib_rms_after_pct;
} cal_fit;

/* Fits w's measured communication.  Fails (WISP_ERROR_INVALID) when no
 * instance is usable, naming the counts by reason.  Time O(nodes +
 * instances x group size + points log points). */
cal_fit *cal_fit_workload(const et_workload *w, const cal_options *opt, GError **error);
void cal_fit_free(cal_fit *f);
/* Prints the fit per class, the exclusions by reason and (per_point) one
 * line per instance with its residual. */
void cal_fit_print(const cal_fit *f, gboolean per_point, FILE *out);
void cal_fit_json(const cal_fit *f, wisp_json *j, const char *key);

/* ---- cluster mapping and the calibrated config ---- */

/* The key of the scale-out tier's measured share of its line rate
 * (collectives' library.net_efficiency), the parameter both `wisp
 * calibrate` paths fit for that tier's effective bandwidth under library
 * nccl (cal_rate_is_share). */
#define CAL_SHARE_KEY "library.net_efficiency"
/* TRUE when tier dim of v is fitted as the share CAL_SHARE_KEY of its line
 * rate rather than as its bandwidth: library nccl and dim the scale-out
 * tier.  NCCL's topology search, channels and choice keep seeing the line
 * rate (the NIC's nominal speed), and the share scales the simulated rate
 * continuously after NCCL's view, where a fitted line rate moves a ring
 * on more than two nodes only by a step of the search's speed array (a
 * 50 GB/s NIC's ring runs alike at any line rate from 48 to 96 GB/s). */
gboolean cal_rate_is_share(const topo_variant *v, int dim, const coll_library_params *lib);
/* Link traversals per ring step inside a dimension of this kind (switch
 * and fat tree 2, ring, torus and fully connected 1). */
int cal_hops_per_step(topo_kind k);
/* Fills opt's priors and rank_domain (g_free *rank_domain_out) from a
 * cluster: the intra class is the scale-up domain dimension, the inter class
 * the scale-out dimension; alpha prior = hops x latency, beta = bandwidth. */
gboolean cal_options_from_cluster(cal_options *opt, const topo_variant *v, int n_ranks, int **rank_domain_out,
                                  GError **error);
/* Writes the cluster with the fitted classes mapped onto its tiers
 * (latency = alpha / hops, bandwidth = beta, each rounded to 4 significant
 * digits; collectives forced to the ring algorithms the model assumes) to
 * path, atomically, after checking that it loads.  Values are written in
 * human units ("35.41GB/s", "571.8ns"), and the cluster is renamed
 * "<name>-calibrated" ("calibrated" when it had none).  header: comment lines placed at the top (each line gets "# "). */
/* x rounded to 4 significant digits (x <= 0 or not finite: unchanged); the
 * written link values are rounded so (35.41GB/s, 571.8ns). */
double cal_round_sig4(double x);
/* The YAML of a calibrated config v: link values in human units, the
 * name "<name>-calibrated" (or "calibrated"), and, as_preset,
 * "preset_version: 1" first and no ranks line, so every command fits it
 * to its workload (--scale included).  g_free. */
char *cal_config_yaml(const topo_variant *v, gboolean as_preset);
gboolean cal_write_config(const cal_fit *f, const topo_variant *v, const char *header, const char *path,
                          GError **error);
/* The same onto `shape`, the cluster as given before it was fitted to the
 * workload (a preset, or a config with preset_version: 1): its tiers keep
 * their sizes and the file is written with preset_version: 1 and no ranks
 * line, so every command fits it to its workload again (--scale dp=64
 * included).  v (the fitted cluster) names the tiers of each class.  The
 * changes, one line each ("tier 'nvlink' bandwidth: 300GB/s -> 35.41GB/s"),
 * are appended to *changes when given (g_free). */
gboolean cal_write_config_shaped(const cal_fit *f, const topo_variant *v, const topo_variant *shape,
                                 const char *header, const char *path, char **changes, GError **error);
/* Adjusts the link latency and bandwidth of each fitted class's tier so
 * that the simulator (tier `tier`, the forced algorithms, the real routes
 * and hierarchical plans) reproduces the class's used instances in the
 * least-squares sense: on the analytical tier a collective's simulated time
 * is affine in (latency, 1/bandwidth) of one tier while the bottleneck
 * links stay the same, so a few Gauss-Newton steps with finite-difference
 * slopes converge; the best iterate is kept and it is kept only if it
 * beats the direct mapping.  All-to-allv instances are skipped (their
 * matrix is not kept).  Cost: up to 4 x 3 topology builds and simulations
 * of each distinct (op, group, bytes) per class.  cal_write_config() then
 * writes the refitted values.  With the cluster's library nccl kept
 * (!f->textbook), the scale-out tier's bandwidth is its effective rate,
 * at most the line rate, written as the share CAL_SHARE_KEY with the line
 * rate kept (cal_rate_is_share); so in cal_refit_library. */
gboolean cal_refit_to_simulator(cal_fit *f, const et_workload *w, const topo_variant *v, net_tier tier,
                                GError **error);
/* With the cluster's NCCL library kept (!f->textbook), fits the NCCL
 * model's own free parameters to the used instances against the
 * simulator: each fitted class's link latency and bandwidth (starting
 * from cal_refit_to_simulator's values), the launch cost (library.launch)
 * and the per-step overhead (library.step_latency_scale, a factor on
 * NCCL's per-hop latencies), nothing else, so the written config keeps
 * NCCL's algorithms, protocols and choices.  Minimises the rms relative
 * error of the distinct (op, group, bytes) points, weighted by their
 * multiplicity (all-to-allv skipped), by coordinate descent in log space
 * (steps x2, x1.25, x1.07, x1.02; x1/50..x50 of the start).  Kept only if
 * it beats the start.  No-op for other libraries.  Cost: up to
 * CAL_LIB_MAX_EVALS topology builds, each simulating every point. */
#define CAL_LIB_MAX_EVALS 240
gboolean cal_refit_library(cal_fit *f, const et_workload *w, const topo_variant *v, net_tier tier, GError **error);
/* Simulates one fit point alone on t (coll_measure): a collective of type
 * op and Chakra comm_size bytes over group `group` of w (ET_GROUP_WORLD:
 * ranks 0..n-1), rooted types rooted at the group's first member.  Used by
 * the refit and by `wisp calibrate`'s check.  The time is the one a
 * replay gives the collective: with library nccl the launch cost is part
 * of it (coll_measure alone would hide it behind the previous iteration,
 * as nccl-tests' loop does).  coll_measure's cost. */
gboolean cal_simulate_point(const et_workload *w, const topo *t, net_tier tier, const coll_policy *pol,
                            et_coll_type op, uint32_t group, int n, uint64_t bytes, sim_time_ps *time_ps,
                            GError **error);
/* SHA-256 of the sorted list "name<TAB>size<NL>" of the trace's files (a
 * directory's regular files, or the one file); g_free the result. */
char *cal_trace_digest(const char *path, int *n_files, GError **error);

/* ---- baseline fidelity ---- */

#define CAL_SIZE_BINS 12   /* < 1 KiB, [1 KiB, 4 KiB), ... [256 MiB, 1 GiB), >= 1 GiB */
/* Size class of a byte count and its label ("4KiB-16KiB"). */
int cal_size_bin(uint64_t bytes);
const char *cal_size_bin_label(int bin);

/* One row per (op, size class).  Instance figures compare one collective
 * instance's simulated duration (last member's end - start) with its
 * shortest measured member kernel (the member that waited least for its
 * peers); record figures compare every member's record with that member's
 * own kernel, whose duration includes waiting for late peers. */
typedef struct {
  char op[24];             /* et_coll_short_name or "send"/"recv" */
  int bin;
  uint64_t count;          /* instances */
  double mean_abs_pct;     /* mean |sim - meas| / meas x 100 over instances */
  double mean_pct;         /* signed mean */
  double worst_pct;        /* signed error of largest magnitude */
  sim_time_ps sim_total, meas_total; /* sums over instances */
  uint64_t records;
  double rec_mean_abs_pct; /* mean |error| over member records */
} cal_baseline_row;

typedef struct {
  sim_time_ps sim_step;
  sim_time_ps meas_step;   /* -1 when unknown; with measured starts, the latest end from the earliest start */
  int meas_step_rank;      /* rank of the max, -1 when unknown */
  gboolean measured_starts; /* the replay started the ranks at their measured starts */
  /* The measured windows on the common clock (et_workload.measured_start_ps;
   * -1 when unknown): how far apart they start and end, which rank starts
   * first and last, and the time from the last start to the last end. */
  sim_time_ps start_skew, end_skew, span_from_last_start;
  int first_start_rank, last_start_rank;
  double step_err_pct;     /* NAN when unknown */
  uint64_t comms, comms_measured;
  double mean_abs_pct, worst_pct; /* over records with a measurement; NAN when none */
  uint64_t instances;      /* instances with a measurement: (group, start, op, bytes) */
  double inst_mean_abs_pct, inst_worst_pct; /* NAN when none */
  GArray *rows;            /* cal_baseline_row, by op name then bin */
} cal_baseline;

/* Fills out from r (and w's measured step and clock, when w is not NULL):
 * the step error, each record against its kernel, instances and rows by
 * (op, size class).  out->rows is the caller's (cal_baseline_clear).  Time
 * O(records + instances log instances). */
void cal_baseline_compute(const sim_result *r, const et_workload *w, cal_baseline *out);
void cal_baseline_clear(cal_baseline *b);
void cal_print_baseline(const sim_result *r, const et_workload *w, FILE *out);
/* Writes the report as an object under key into an open JSON writer, or
 * as a standalone file (atomically). */
void cal_baseline_json(const sim_result *r, const et_workload *w, wisp_json *j, const char *key);
gboolean cal_write_baseline_json(const sim_result *r, const et_workload *w, const char *path, GError **error);
/* `--check-baseline MAX_PCT`: FALSE with an error when the measured step is
 * unknown or |step error| > max_pct. */
gboolean cal_check_baseline(const sim_result *r, const et_workload *w, double max_pct, GError **error);


G_END_DECLS
#endif
