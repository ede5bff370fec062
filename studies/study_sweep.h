/* study_sweep.h: parameter sweeps over config keys (`wisp sweep`).
 *
 * Output of a sweep named NAME into directory DIR (see doc/studies.md):
 *   DIR/NAME.csv    header + one row per point, in point order
 *   DIR/NAME.jsonl  one JSON object per point, in point order
 *   DIR/NAME.svg    step time over the first axis, one line per combination
 *                   of the other axes
 *   DIR/NAME.points/PNNNNNN.row  one file per finished point (its CSV row
 *                   and JSON line), written atomically: the resume state
 * A shard K of N writes DIR/NAME.shard-K-of-N.{csv,jsonl} with the points
 * p where p % N == K - 1; `wisp sweep-merge` joins shards into files equal
 * byte for byte to the unsharded run's.
 */
#ifndef WISP_STUDY_SWEEP_H
#define WISP_STUDY_SWEEP_H

#include "studies/study.h"

G_BEGIN_DECLS

#define STUDY_MAX_POINTS 1000000

typedef struct {
  char *key;
  GPtrArray *values;           /* char*, as written (with units) */
  int line;
} study_axis;

typedef struct {
  char *path, *name, *workload, *cluster;
  char *digest;                /* SHA-256 of the spec file's bytes */
  GPtrArray *set_keys, *set_values;
  GPtrArray *base_keys, *base_values;
  gboolean base_first;
  gboolean zip;
  GPtrArray *labels;           /* empty or one per point */
  int n_axes;
  study_axis *axes;
  int n_points;
} study_spec;

/* Reads and checks a sweep spec (doc/studies.md): errors name the file and
 * line.  Time O(size of the file + points). */
study_spec *study_spec_load(const char *path, GError **error);
void study_spec_free(study_spec *s);
/* Checks the whole spec before any point runs: opens its cluster (fitted
 * to n_ranks when > 0, as the run does) and applies every set: and base:
 * pair and every axis value, each alone, to a copy.  Every problem is
 * listed in one error, one line each with the file, the line of the axis,
 * the key, the value and the reason.  O(values x cluster copy). */
gboolean study_spec_check(const study_spec *s, int n_ranks, GError **error);
/* Value of axis `axis` at point `point` (grid: last axis fastest). */
const char *study_spec_value(const study_spec *s, int point, int axis);
/* Applies one key (a run option: algo, compute_slots; else a topology key). */
gboolean study_spec_apply(const char *key, const char *value, topo_variant *v, sim_replay_options *opt,
                          GError **error);

typedef struct {
  const char *out_dir;         /* created when missing */
  int jobs;                    /* worker processes; <= 1 runs in-process */
  int shard_k, shard_n;        /* 1-based shard; shard_n 0 or 1 = no sharding */
  gboolean resume;             /* keep finished points' rows */
  gboolean progress;           /* progress bar on stderr */
  gboolean has_tier;           /* --network-model: replay every point on this tier */
  net_tier tier;
  sim_levers levers;           /* --slow-rank / --slow-ranks: applied to every point before `set` */
  gboolean has_algo;           /* --algo: every point's collective algorithm before `set` */
  coll_algo algo;
  unsigned compute_slots;      /* --compute-slots (0: each rank's measured concurrency) before `set` */
  gboolean measured_starts;    /* --starts measured: ranks start at their measured window starts */
  /* Called in the process that finished a point, after its row file is
   * committed (tests use it to kill a run at a known place). */
  void (*on_point)(void *ctx, int point);
  void *on_point_ctx;
} study_sweep_options;

typedef struct {
  int total;                   /* points of this shard */
  int run, skipped, failed;    /* simulated now, kept from a previous run, in error */
  int orphans_removed;         /* --resume: temporary point files of a killed run removed */
  sim_time_ps base_step;       /* simulated step time of the base (utility reference) point */
  double wall_seconds;
  char *csv_path, *jsonl_path, *svg_path;  /* g_free; svg_path NULL when no chart was drawn */
  GPtrArray *errors;           /* NULL or one line per point in error, "point P (key=value ...): error: ..." */
} study_sweep_stats;

/* Runs the sweep on workload w (loaded once by the caller; workers share
 * it).  Points that fail (e.g. an impossible config) get a row with status
 * "error: ..." and count in stats->failed; only I/O and spec problems make
 * the call fail. */
gboolean study_sweep_run(const study_spec *s, const et_workload *w, const study_sweep_options *o,
                         study_sweep_stats *stats, GError **error);
void study_sweep_stats_clear(study_sweep_stats *st);

/* The parallel runner under sweep and search (study_points.c): fn(ctx, p)
 * simulates point p and commits its own result file (the caller reads
 * them back, so points survive a kill).  The points run in worker
 * processes, at least one even for jobs <= 1: worker w of `jobs` takes the
 * pending points w, w + jobs, ... (a deterministic split; the workers
 * share the parent's memory copy-on-write).  A point whose worker runs out
 * of memory (the `wisp` command's handler, common/wisp_memory.h) is passed
 * with the message to on_memory(ctx, p, message) in this process, which
 * records it (the sweep's error row), and that worker's unfinished points
 * run again; with on_memory NULL its message is the run's error.  on_point (may be NULL)
 * is called in the worker that finished a point; `who` prefixes the
 * runner's own errors.  FALSE with fn's message when fn failed, or when a
 * worker died without reporting (a signal); finished points are kept. */
typedef struct {
  gboolean (*fn)(void *ctx, int point, GError **error);
  gboolean (*on_memory)(void *ctx, int point, const char *message, GError **error);
  void *ctx;
  int jobs;
  gboolean progress;
  void (*on_point)(void *ctx, int point);
  void *on_point_ctx;
  const char *who;
} study_points_runner;
gboolean study_points_run(const study_points_runner *r, const int *pending, int n_pending, int total, int already,
                          GError **error);

/* Merges shard outputs: inputs are PREFIX paths (PREFIX.csv and
 * PREFIX.jsonl must exist) or the .csv/.jsonl files themselves; writes
 * out_prefix.csv/.jsonl (and .svg).  Every point must appear exactly once
 * and all shards must come from the same spec. */
gboolean study_sweep_merge(const char *out_prefix, char **inputs, int n_inputs, GError **error);
/* The same; *svg_written tells whether out_prefix.svg was drawn (not when
 * no point finished). */
gboolean study_sweep_merge_full(const char *out_prefix, char **inputs, int n_inputs, gboolean *svg_written,
                                GError **error);

G_END_DECLS
#endif
