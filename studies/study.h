/* study.h: what-if studies on a replayed workload (prefix study_).
 *
 *  - Cluster presets: `--cluster NAME` resolves NAME to a shipped wisp YAML
 *    preset (presets/NAME.yaml) or takes a config path; presets are fitted
 *    to the workload's rank count (the scale-out tier is resized).
 *  - Utility of doubling a resource (CCL-Bench's definition,
 *    Utility(r) = (T - T_2x(r)) / T x 100 %), computed from one loaded
 *    workload at full precision, with the measured step time beside it.
 *  - Sweeps over config keys (grid or zip), parallel, resumable, shardable.
 *  - Chrome/Perfetto timelines streamed from the replay observer.
 *  - SVG charts and report diffs.
 * See doc/studies.md for the commands and file formats.
 */
#ifndef WISP_STUDY_H
#define WISP_STUDY_H

#include "replay/sim_replay.h"
#include "topologies/topo_variant.h"

G_BEGIN_DECLS

#define STUDY_SCHEMA_VERSION 1

/* ---- clusters ---- */

/* Path of a cluster given by name or path.  Lookup order (first hit wins):
 *  1. NAME itself when it names an existing file;
 *  2. every directory of $WISP_PRESET_PATH (colon-separated): DIR/NAME.yaml;
 *  3. the source tree's presets/ when the running program is not the
 *     installed one (so an uninstalled build uses its own presets);
 *  4. $(pkgdatadir)/presets/NAME.yaml (installed presets).
 * *is_preset tells whether a preset directory supplied it.  The error lists
 * the places tried and the presets found. */
char *study_cluster_find(const char *name, gboolean *is_preset, GError **error);
/* Loads the cluster as an editable variant; presets are fitted to n_ranks
 * (n_ranks <= 0: no fitting).  Notes about fitting go to *notes (g_free). */
topo_variant *study_cluster_open(const char *name, int n_ranks, char **resolved_path, char **notes,
                                 GError **error);

/* SHA-256 (hex, g_free) of everything in w that a replay reads: groups,
 * and per rank every node's id, type, flags, duration, parents and
 * communication attributes.  O(nodes + edges).  Independent of file paths,
 * so the same workload gives the same digest on every machine. */
char *study_workload_digest(const et_workload *w);

/* ---- one simulated point ---- */

typedef struct {
  sim_time_ps step_time;       /* max finish over ranks */
  sim_time_ps compute;         /* means over ranks */
  sim_time_ps exposed_comm;
  sim_time_ps overlapped_comm;
  sim_time_ps idle;
  /* exposed_comm split as sim_rank_stats splits it (means over ranks, each
   * truncated to the picosecond, so their sum can miss exposed_comm by 2 ps
   * at most), and the rank with the most exposed communication. */
  sim_time_ps comm_transfer, straggler_wait, dependency_wait;
  int most_exposed_rank;       /* -1 when no rank has exposed communication */
  sim_rank_stats most_exposed; /* that rank's figures */
  /* The rank that issued last in the most collectives (the one the others
   * wait for, as the simulate report's "collective wait" line names it);
   * -1 when none did.  Its figures are last_issuer_stats. */
  int last_issuer;
  sim_rank_stats last_issuer_stats;
  uint64_t events;
} study_summary;

void study_summarize(const sim_result *r, study_summary *out);
/* Builds the variant's topology and replays w on it (quietly). */
gboolean study_run_point(const et_workload *w, const topo_variant *v, const sim_replay_options *opt,
                         study_summary *out, GError **error);
/* The same; when critical is not NULL the run also records its critical
 * path (replay/sim_critical.h) and hands it over in *critical (free with
 * sim_crit_path_free; NULL on failure). */
gboolean study_run_point_critical(const et_workload *w, const topo_variant *v, const sim_replay_options *opt,
                                  study_summary *out, sim_critical_path **critical, GError **error);

/* Sensitivity to the network: the step times of w on variant v with every
 * bandwidth x0.9 (step[0]) and x1.1 (step[1]).  Used by `wisp utility`
 * (bw_minus10, bw_plus10) and `wisp calibrate`.  Two replays. */
gboolean study_bw_sensitivity(const et_workload *w, const topo_variant *v, const sim_replay_options *opt,
                              sim_time_ps step[2], GError **error);

/* ---- utility ---- */

typedef struct {
  char *resource;              /* "scale_out_bw", "bw:TIER", ... */
  char *change;                /* "scale_out: 25 GB/s -> 50 GB/s" */
  gboolean applicable;
  char *note;                  /* why not applicable, or capping notes; may be NULL */
  study_summary variant;
  double utility_pct;          /* (T - T_2x) / T x 100 */
} study_utility_row;

typedef struct {
  study_summary baseline;
  sim_critical_path *baseline_critical; /* critical path of the baseline run (the variants record none) */
  sim_time_ps measured_step;   /* -1 when the workload has none; with measured starts the latest end
                                  from the earliest start (sim_report_measured_end) */
  gboolean measured_starts;    /* the runs started the ranks at their measured starts */
  double calibration_error_pct;/* (T - measured) / measured x 100, NAN when unknown */
  GArray *rows;                /* study_utility_row */
  sim_time_ps bw_minus10, bw_plus10; /* sensitivity: all bandwidths x0.9 and x1.1 */
} study_utility_result;

/* resources: comma-separated list of scale_out_bw, scale_up_bw,
 * scale_up_domain, ici_bw, latency (halved), all (the five network
 * resources before), bw:TIER, lat:TIER (halved), size:TIER (doubled), and
 * the levers compute (every GPU kernel 2x faster), compute:CLASS (gemm,
 * elementwise, comm_adjacent) and host (CPU nodes 2x faster), which
 * replay the workload with those nodes' durations halved on top of the
 * options' own levers (replay/sim_levers.h). */
study_utility_result *study_utility_run(const et_workload *w, const topo_variant *base, const char *resources,
                                        const sim_replay_options *opt, GError **error);
void study_utility_result_free(study_utility_result *u);
/* One screen by default: the critical path as its first line, its
 * largest straggler and dependency waits and its bound sentence; verbose
 * adds its categories, communications, ranks and every wait
 * (sim_crit_print_summary). */
void study_utility_print(const study_utility_result *u, const et_workload *w, const topo_variant *base,
                         const char *cluster_path, gboolean verbose, FILE *out);
/* One why-line per row of u (studies/study_why.c): the bound that limits
 * that resource, from the baseline's critical path (the path time its
 * tier carries, the share of compute or host work, whether latency beats
 * every bandwidth); NULL entries for rows that do not apply.  g_ptr_array_unref. */
GPtrArray *study_utility_why(const study_utility_result *u, const et_workload *w, const topo_variant *base);
/* The baseline's communication in the one accounting every output uses
 * (sim_rank_stats): exposed = transfer + straggler wait + dependency wait
 * (means over ranks, the simulate table's columns), the rank with the
 * most and how much of it is waiting, and the transfer on the critical
 * path, the part a faster network can shorten.  Two lines (nothing when
 * the baseline has no communication).  g_free. */
char *study_utility_comm_lines(const study_utility_result *u);
gboolean study_utility_write_json(const study_utility_result *u, const et_workload *w, const topo_variant *base,
                                  const char *cluster_path, const char *path, GError **error);

/* ---- several jobs on one fabric ---- */

/* One job of a multi-job study: a workload and where its ranks sit on the
 * cluster (place[r] = the cluster rank of the job's rank r). */
typedef struct {
  char *name;                  /* "A", or the workload's source */
  et_workload *w;              /* owned by the caller */
  int *place;                  /* cluster ranks, distinct across jobs */
  int n_place;                 /* entries in place; must equal w->n_ranks */
} study_job;

/* Parses a placement: comma-separated items "R", "A-B" or "A-B:STEP"
 * (ranks A, A+STEP, ... <= B), in the order given (the job's rank r sits on
 * the r-th listed rank).  *out (g_free) gets the ranks, *n their number.
 * The error names the item and the accepted forms. */
gboolean study_jobs_parse_place(const char *spec, int **out, int *n, GError **error);

/* The cluster workload of n_ranks ranks that runs every job at once
 * (only < 0) or job `only` alone on its own ranks: each job's graphs are
 * copied to its cluster ranks with every rank it names (send/recv peers,
 * roots, groups) mapped through its placement; its groups become
 * "NAME/GROUP" and its world communicator "NAME/world"; ranks no job
 * uses get empty graphs.  Checks that placements fit in n_ranks, match
 * each job's rank count and do not overlap.  O(nodes of the jobs). */
et_workload *study_jobs_merge(const study_job *jobs, int n_jobs, int n_ranks, int only, GError **error);

typedef struct {
  sim_time_ps alone;           /* the job's step (latest finish of its ranks) with the fabric to itself */
  sim_time_ps together;        /* the same with every job running at once */
  double slowdown_pct;         /* (together - alone) / alone x 100 */
} study_job_result;

/* Replays every job alone and all together on topology t (n_jobs + 1
 * replays, the same placement each time) and fills out[n_jobs].  When
 * together is not NULL it gets the shared run's result and *merged its
 * workload (free both).  The replay options apply to every run (slow
 * ranks name cluster ranks). */
gboolean study_jobs_run(const study_job *jobs, int n_jobs, const topo *t, const sim_replay_options *opt,
                        study_job_result *out, sim_result **together, et_workload **merged, GError **error);

/* ---- timeline (Chrome trace event JSON, Perfetto-compatible) ---- */

typedef struct study_timeline study_timeline;
/* ranks: "0-3,8" or NULL for all; window [from, to) in ps (to < 0: open). */
study_timeline *study_timeline_open(const char *path, const et_workload *w, const char *ranks, sim_time_ps from,
                                    sim_time_ps to, GError **error);
const sim_replay_observer *study_timeline_observer(study_timeline *tl);
/* Parses a --timeline-ranks list ("0-3,8") of ranks 0..n-1 and sets on[r]
 * for each named rank (on holds n flags, cleared by the caller).  FALSE
 * with an error naming the bad part and the valid range.  O(n + length). */
gboolean study_timeline_parse_ranks(const char *spec, int n, gboolean *on, GError **error);
/* Writes metadata and commits the file atomically; frees tl. */
gboolean study_timeline_finish(study_timeline *tl, const sim_result *r, GError **error);
void study_timeline_abort(study_timeline *tl);
uint64_t study_timeline_events(const study_timeline *tl);

/* ---- SVG charts ---- */

typedef struct {
  const char *label;           /* series name (legend) */
  const double *x, *y;
  int n;
} study_svg_series;

/* Line chart with labelled axes (labels carry the units).  x_ticks, when
 * given, label series 0's points.  Each series has its own colour, dash
 * pattern and marker shape, so lines that coincide stay distinguishable. */
gboolean study_svg_line_chart(const char *path, const char *title, const char *x_label, const char *y_label,
                              const study_svg_series *series, int n_series, const char *const *x_ticks,
                              GError **error);

typedef struct {
  const double *tick_x;             /* n_ticks x positions to label (else x_ticks / numeric ticks) */
  const char *const *tick_labels;   /* their labels */
  int n_ticks;
  gboolean log_x;                   /* x values are > 0 and spaced by log10 */
  const char *y_ms_quantity;        /* y values are milliseconds: the axis shows them in us, ms or s,
                                       whichever fits, labelled "<quantity> (<unit>)" instead of y_label */
} study_svg_line_opts;
gboolean study_svg_line_chart_opts(const char *path, const char *title, const char *x_label, const char *y_label,
                                   const study_svg_series *series, int n_series, const char *const *x_ticks,
                                   const study_svg_line_opts *opts, GError **error);

/* The unit that fits a time axis whose largest value is max_ms
 * milliseconds: "s" from 1000 ms, "us" below 1 ms, else "ms"; *per_ms is
 * the factor from ms to that unit. */
const char *study_svg_time_unit(double max_ms, double *per_ms);

/* Bar chart, one bar per label.  A NAN value is drawn as "n/a" (not
 * applicable) in place of its bar, never dropped.  When every drawn bar is
 * 0, zero_note (or a generic sentence when NULL) says so in the plot area. */
gboolean study_svg_bar_chart(const char *path, const char *title, const char *y_label, const char *const *labels,
                             const double *values, int n, const char *zero_note, GError **error);
/* Per-rank stacked bars of compute, overlapped comm, exposed comm, idle. */
gboolean study_svg_rank_breakdown(const char *path, const char *title, const sim_result *r, GError **error);

/* ---- report diff ---- */

/* Prints per-rank, per-group and per-collective-type deltas between two
 * simulate reports (B - A) to out (max_rows ranks, -1 all) and optionally
 * writes them as JSON to json_path (atomically). */
gboolean study_diff_reports(const char *a_path, const char *b_path, FILE *out, int max_rows, const char *json_path,
                            GError **error);

G_END_DECLS
#endif
