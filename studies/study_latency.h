/* study_latency.h: TTFT and TPOT of an inference trace and what doubling a
 * resource does to them (`wisp utility --latency`, doc/metrics.md).
 *
 * CCL-Bench (tools/inference_latency) takes a server's model executions
 * (vLLM execute_context_*, SGLang run_batch markers) in start order: TTFT =
 * the first one's duration, TPOT = the mean of the later ones, the last
 * dropped when there are more than two (a cool-down execution).  wisp
 * replays each execution as its own step window (the Kineto frontend
 * numbers the markers 0, 1, ... as steps) under the baseline and under each
 * doubled resource, and applies the same rule to the simulated durations:
 *   TTFT(r) = T_0(r),  TPOT(r) = mean over k in D of T_k(r),
 *   D = 1..n-2 (n > 2) or 1..n-1 (n = 2),
 *   utility_TTFT(r) = (TTFT - TTFT(r)) / TTFT x 100 %, likewise TPOT.
 * The measured figures follow CCL-Bench's per-rank rule exactly
 * (study_latency_rule: each rank's own TTFT and TPOT, then the mean over
 * ranks); the simulated ones apply it to the replay's step (the slowest
 * rank: the replay keeps no per-rank marker), which equals the per-rank
 * mean when the ranks finish together, as tensor-parallel ranks do.
 */
#ifndef WISP_STUDY_LATENCY_H
#define WISP_STUDY_LATENCY_H

#include "studies/study.h"

G_BEGIN_DECLS

typedef struct {
  char *resource;              /* as the utility rows name it */
  gboolean applicable;
  double ttft_2x_ns, tpot_2x_ns;
  double ttft_utility_pct, tpot_utility_pct;
} study_latency_row;

typedef struct {
  int n_steps;                 /* model executions */
  int decode_first, decode_last; /* the executions TPOT averages */
  double ttft_ns, tpot_ns;     /* simulated baseline */
  double measured_ttft_ns, measured_tpot_ns; /* the same rule on the measured windows; NAN when unknown */
  GArray *rows;                /* study_latency_row */
} study_latency;

/* CCL-Bench's rule (tools/inference_latency/inference_latency.py,
 * _summarize_rank_sequences) over d[k x n_ranks + r], the duration of
 * execution k on rank r (NAN: the rank has no such marker, skipped): per
 * rank, TTFT_r = its first duration and TPOT_r = the mean of its decode
 * durations (the 2nd to the second-to-last when it has more than two, else
 * the 2nd on); TTFT, TPOT = the means over the ranks that have one (NAN
 * when none).  The one implementation `wisp metrics` and `wisp utility
 * --latency` share.  O(n_exec x n_ranks). */
void study_latency_rule(const double *d, int n_exec, int n_ranks, double *ttft, double *tpot);

/* From the utility study of each execution in start order (steps[k], n of
 * them, n >= 2, every one with the same resource rows) and each one's
 * measured window per rank in ns, measured_ns[k x n_ranks + r] (NAN when
 * unknown).  NULL with the error when n < 2 or the rows differ.
 * O(n x (rows + n_ranks)). */
study_latency *study_latency_new(study_utility_result *const *steps, const double *measured_ns, int n_ranks, int n,
                                 GError **error);
void study_latency_free(study_latency *l);
void study_latency_print(const study_latency *l, FILE *out);
/* The result as JSON ("ttft_ns", "tpot_ns", "measured_*", "resources"
 * [{resource, ttft_2x_ns, tpot_2x_ns, ttft_utility_pct, tpot_utility_pct}]),
 * written atomically. */
gboolean study_latency_write_json(const study_latency *l, const char *path, GError **error);

G_END_DECLS
#endif
