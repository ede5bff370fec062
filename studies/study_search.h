/* study_search.h: `wisp search`, the parallel configurations of a traced
 * job ranked by their simulated step time (issue 32; doc/repartition.md).
 *
 * The points: every (dp, tp, pp, mb) with tp dividing the heads, hidden,
 * ffn and vocabulary sizes and at most max_tp (the scale-up domain), pp
 * dividing the layers, dp x mb dividing the global batch, and dp x tp x pp
 * at most max_gpus; ep (MoE cards: dividing dp and the experts); cp = 1; each
 * schedule of o->scheds (default the card's, else 1F1B; interleaved 1F1B
 * with the card's vpp, else 2, where pp >= 2 divides mb).  A point over the GPU's HBM is listed as refused
 * with its memory, never simulated.  Each other point is built from the
 * model read out of the trace (chakra/et_repart.h) and replayed on the
 * cluster fitted to its GPU count.
 *
 * Objectives: the step time T (smaller first), or CCL-Bench's composite
 * w T0/T + (1 - w) N0/N over the step time and the GPU count N (larger
 * first), T0 and N0 the traced configuration's (simulated).  The Pareto
 * front: the points no other point beats on both T and N.
 * Cost: one replay per valid point; O(points^2) for the front.
 *
 * Running (the sweep's runner, study_sweep.h's study_points_run): the
 * points that fit are simulated by `jobs` worker processes, each point's
 * result committed atomically as DIR/P<7 digits>.point (a few text
 * lines: the inputs' digest, the configuration, the status, the step
 * time or the reason) and read back for the ranking; DIR is points_dir,
 * or a temporary directory removed afterwards.  With resume, a point
 * whose file exists with the same digest and configuration is not run
 * again; with a shard K of N, only the points p (in enumeration order)
 * with p % N == K - 1 are run: shards writing to one shared DIR, then one
 * run with resume, rank everything without simulating anything again.
 */
#ifndef WISP_STUDY_SEARCH_H
#define WISP_STUDY_SEARCH_H

#include "chakra/et_repart.h"
#include "replay/sim_replay.h"

G_BEGIN_DECLS

typedef struct {
  const char *cluster;         /* preset name or config path */
  int max_gpus, max_tp;
  int max_cp;                  /* largest context-parallel degree enumerated (dense cards; <= 1: cp 1 only) */
  double weight;               /* composite's w in [0, 1]; < 0: rank by step time */
  int jobs;                    /* worker processes (<= 1: in-process) */
  const char *points_dir;      /* NULL: a temporary directory */
  gboolean resume, progress;
  int shard_k, shard_n;        /* 1-based; shard_n <= 1: every point */
  const char *digest;          /* the inputs' digest (workload, card, cluster, options) the point files carry */
  int n_scheds;                /* schedules to enumerate (et_sched); 0: the card's (else 1F1B) */
  int scheds[3];
} study_search_opts;

typedef enum { STUDY_PT_SIMULATED = 0, STUDY_PT_NO_MEMORY, STUDY_PT_FAILED } study_point_status;

typedef struct {
  et_repart_request rq;
  int gpus;
  study_point_status status;
  char *why;                   /* refused or failed: the reason */
  double mem_bytes;            /* per GPU, the most loaded */
  sim_time_ps step;
  double score;                /* the objective (ms, or the composite) */
  gboolean pareto, baseline;
  int rank;                    /* 1.. among simulated points, 0 otherwise */
} study_search_point;

typedef struct {
  GArray *points;              /* study_search_point, in rank order then refused */
  int baseline;                /* index of the traced configuration, -1 when not among the points */
  double weight;
  int simulated, refused, failed;
  int run_now, kept;           /* points simulated by this call, and reused from points_dir (resume) */
  int missing;                 /* points of other shards without a result yet: nothing is ranked */
  double seconds;
  net_tier tier;               /* the tier every point ran on (--network-model, else the cluster's) */
  int close_to_best;           /* ranks 2..close_to_best+1 are within STUDY_SEARCH_CLOSE_PCT of rank 1's
                                  score on the analytical tier (0: none, or the flow tier) */
} study_search_result;

/* How close two configurations' scores may be before the analytical
 * tier's order between them is not to be trusted, in percent of the
 * better one's.  Measured (doc/repartition.md section 3): replaying the
 * ground truth's own interleaved traces, the analytical tier's
 * first-come-first-served links are off by -0.25 .. +1.69 % against the
 * truth's fair sharing, so two configurations up to 1.94 % apart can come
 * out in the wrong order (two 0.34 % apart did); the flow tier's band is
 * -0.29 .. +0.16 % in the same table. */
#define STUDY_SEARCH_CLOSE_PCT 2.0

/* Enumerates, simulates and ranks (see above).  NULL with an error only
 * when nothing could run (the cluster cannot be opened). */
study_search_result *study_search_run(const et_model *m, const et_model_card *c, const sim_replay_options *opt,
                                      const study_search_opts *o, GError **error);
void study_search_result_free(study_search_result *r);
/* The ranked table, then the refused points with their reasons. */
void study_search_print(const study_search_result *r, const et_model_card *c, FILE *out);
gboolean study_search_write_json(const study_search_result *r, const et_model_card *c, const char *path,
                                 GError **error);
/* Step time against GPU count: the best point per GPU count and the
 * Pareto front. */
gboolean study_search_svg(const study_search_result *r, const char *path, GError **error);

G_END_DECLS
#endif
