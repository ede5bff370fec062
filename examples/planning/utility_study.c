/* utility_study.c: a utility study through libwisp's public API, the way a
 * planning tool would embed wisp instead of running the `wisp` command.
 *
 * Build against an installed wisp:
 *   cc utility_study.c $(pkg-config --cflags --libs --static wisp) -o utility_study
 * `make check` builds it against the build tree through the uninstalled
 * pkg-config file (examples/planning/wisp-uninstalled.pc) and runs it on the
 * bundled example workload (examples/planning/test_planning.sh).
 *
 * Usage: utility_study WORKLOAD CLUSTER [RESOURCES]
 *   WORKLOAD  a Chakra ET prefix or directory (e.g. make_example's llm set),
 *             per-rank Kineto traces (a directory of *.json, e.g. DLRM's),
 *             XLA profiles or Nsight Systems exports: open_workload() below
 *             picks the library's reader the way `wisp simulate` does
 *   CLUSTER   a preset name or a wisp YAML config
 *   RESOURCES comma-separated utility resources (default "all")
 * Prints one line per resource: the baseline and doubled step times and
 * Utility(r) = (T - T_2x(r)) / T x 100 %, then checks that identity on
 * every applicable row from the two step times it printed (exit 1 if not).
 *
 * Only installed headers are used (doc/interfaces.md lists them): the
 * Chakra reader (chakra/et_io.h), the trace readers (frontends/fe.h,
 * frontends/xla.h, frontends/nsys.h) and the studies (studies/study.h).
 */
#include <math.h>
#include <stdio.h>

#include "chakra/et_io.h"
#include "frontends/fe.h"
#include "frontends/nsys.h"
#include "frontends/xla.h"
#include "studies/study.h"

/* Any workload through the library's readers, each with its defaults:
 * Nsight export, XLA profile, Kineto traces, else a Chakra set.  */
static et_workload *open_workload(const char *path, GError **error)
{
  const char *paths[1] = {path};
  char *argv[2] = {(char *)"utility_study", (char *)path};
  if (fe_nsys_is_export(path))
    return fe_nsys_load(paths, 1, NULL, error);
  if (fe_xla_wants(2, argv)) {
    fe_xla_options opt;
    fe_xla_options_init(&opt);
    return fe_xla_load_inputs(paths, 1, &opt, NULL, error);
  }
  if (fe_kineto_looks_like_trace(path)) {
    fe_kineto_options opt;
    fe_kineto_options_init(&opt);
    return fe_kineto_load(paths, 1, &opt, NULL, error);
  }
  return et_workload_load(path, 0, error);
}

int main(int argc, char **argv)
{
  if (argc < 3 || argc > 4) {
    fprintf(stderr, "usage: %s WORKLOAD CLUSTER [RESOURCES]\n", argv[0]);
    return 2;
  }
  GError *error = NULL;
  et_workload *w = open_workload(argv[1], &error);
  if (w == NULL) {
    fprintf(stderr, "utility_study: %s\n", error->message);
    g_error_free(error);
    return 1;
  }
  char *resolved = NULL, *notes = NULL;
  topo_variant *v = study_cluster_open(argv[2], w->n_ranks, &resolved, &notes, &error);
  if (v == NULL) {
    fprintf(stderr, "utility_study: %s\n", error->message);
    g_error_free(error);
    et_workload_free(w);
    return 1;
  }
  sim_replay_options opt = {.quiet = TRUE};
  study_utility_result *u = study_utility_run(w, v, argc == 4 ? argv[3] : "all", &opt, &error);
  int status = 0;
  if (u == NULL) {
    fprintf(stderr, "utility_study: %s\n", error->message);
    g_error_free(error);
    status = 1;
  } else {
    double base_ms = (double)u->baseline.step_time / 1e9;
    printf("workload %s (%d ranks) on %s: baseline step %.6f ms\n", argv[1], w->n_ranks, resolved, base_ms);
    printf("%-20s %16s %12s\n", "resource", "T_2x (ms)", "utility (%)");
    for (guint i = 0; i < u->rows->len; i++) {
      const study_utility_row *row = &g_array_index(u->rows, study_utility_row, i);
      if (!row->applicable) {
        printf("%-20s %16s %12s  (%s)\n", row->resource, "n/a", "n/a", row->note ? row->note : "not applicable");
        continue;
      }
      double t2_ms = (double)row->variant.step_time / 1e9;
      printf("%-20s %16.6f %12.4f\n", row->resource, t2_ms, row->utility_pct);
      /* The library's utility must be (T - T_2x) / T x 100 of the step
       * times it reports (relative tolerance 1e-9). */
      double expect = 100.0 * (base_ms - t2_ms) / base_ms;
      if (fabs(expect - row->utility_pct) > 1e-9 * fmax(1.0, fabs(expect))) {
        fprintf(stderr, "utility_study: %s: utility %.9f %% but (T - T_2x) / T = %.9f %%\n", row->resource,
                row->utility_pct, expect);
        status = 1;
      }
    }
    study_utility_result_free(u);
  }
  g_free(resolved);
  g_free(notes);
  topo_variant_free(v);
  et_workload_free(w);
  return status;
}
