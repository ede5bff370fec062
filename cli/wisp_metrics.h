/* wisp_metrics.h: the metric catalog of a `wisp simulate` run (cmd_metrics.c;
 * studies/study_metrics.h, doc/metrics.md), as a handful of hooks so that
 * the simulate command only calls them at its stages:
 *
 *   options   --card FILE, --no-metrics
 *   before the workload loads  wisp_run_metrics_new (card read, loader asked
 *                              for the steps in the window and XLA model_flops)
 *   before the replay          wisp_run_metrics_watch (observer chained in front)
 *   after the replay           wisp_run_metrics_finish (computed, printed)
 *   in the JSON report         wisp_run_metrics_json ("metrics" object)
 *
 * Every hook accepts a handle that is off (--no-metrics), so the caller has
 * no branches; off costs nothing.  On, the timeline keeps 32 bytes per GPU
 * node of the run. */
#ifndef WISP_METRICS_CLI_H
#define WISP_METRICS_CLI_H

#include "cli/wisp_load.h"
#include "common/wisp_json.h"

G_BEGIN_DECLS

typedef struct wisp_run_metrics wisp_run_metrics;

/* The option --no-metrics (the last entry is the terminator): fills
 * entries[2].  The card is the common --card (lo->card), the same file
 * that sizes communication kernels without a size. */
#define WISP_RUN_METRICS_ENTRIES 2
void wisp_run_metrics_entries(gboolean *off, GOptionEntry *entries);
/* NULL with the card's error (file, line, key) when lo->card is bad. */
wisp_run_metrics *wisp_run_metrics_new(gboolean off, wisp_load_options *lo, GError **error);
/* Chains the metric observer in front of opt->observer (which it calls). */
void wisp_run_metrics_watch(wisp_run_metrics *m, const et_workload *w, sim_replay_options *opt);
/* Computes the simulated catalog and, when w carries measured times, the
 * measured one; prints both columns on out. */
void wisp_run_metrics_finish(wisp_run_metrics *m, const sim_result *r, const et_workload *w, FILE *out);
/* "metrics": {schema_version, measured (or null), simulated}; nothing when off. */
void wisp_run_metrics_json(const wisp_run_metrics *m, wisp_json *j);
void wisp_run_metrics_free(wisp_run_metrics *m);

G_END_DECLS
#endif
