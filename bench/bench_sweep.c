/* bench_sweep.c: a 1,000-point sweep of the bundled example workload
 * (16 ranks, TP4 x PP2 x DP2; examples/make_example.c) on the 2-node
 * cluster (examples/cluster-2node.yaml), with 1 worker and with one worker
 * per core.  Grid: scale-out bandwidth 100..1000 Gb/s (10 values) x
 * scale-up bandwidth 100..1000 GB/s (10) x scale-out latency 1..10 us (10).
 *
 * Usage: bench_sweep [WORKLOAD_PREFIX]
 *   without an argument the example is generated with examples/make_example
 *   (run from the build directory, after `make examples/make_example`).
 * Prints points/s per worker count; the output files go to a temporary
 * directory that is removed afterwards.  Also checks that both runs wrote
 * byte-identical CSV files (-j does not change results).
 */
#include "config.h"
#include "regress/test_util.h"
#include "studies/study_sweep.h"
#include "chakra/et_io.h"

#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

static const char *spec_fmt =
  "sweep_version: 1\n"
  "name: bench\n"
  "cluster: %s\n"
  "axes:\n"
  "  - {key: scale_out_bw, range: {from: 100Gbps, to: 1000Gbps, step: 100Gbps}}\n"
  "  - {key: scale_up_bw, range: {from: 100GB/s, to: 1000GB/s, step: 100GB/s}}\n"
  "  - {key: dims.scale_out.latency, range: {from: 1us, to: 10us, step: 1us}}\n";

int main(int argc, char **argv)
{
  GError *error = NULL;
  char *tmp = g_dir_make_tmp("wisp-bench-sweep-XXXXXX", &error);
  if (tmp == NULL) {
    fprintf(stderr, "bench_sweep: %s\n", error->message);
    return 1;
  }
  char *prefix;
  if (argc > 1) {
    prefix = g_strdup(argv[1]);
  } else {
    char *cmd[] = {"examples/make_example", tmp, "llm", NULL};
    int st = 0;
    if (!g_spawn_sync(NULL, cmd, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, NULL, &st, &error) ||
        !g_spawn_check_wait_status(st, &error)) {
      fprintf(stderr, "bench_sweep: cannot generate the example (run from the build directory after `make "
              "examples/make_example`, or pass a workload prefix): %s\n", error->message);
      return 1;
    }
    prefix = g_build_filename(tmp, "llm", NULL);
  }
  const char *srcdir = g_getenv("G_TEST_SRCDIR") ? g_getenv("G_TEST_SRCDIR") : WISP_BENCH_SRCDIR;
  char *cluster = g_build_filename(srcdir, "examples", "cluster-2node.yaml", NULL);
  char *spec_text = g_strdup_printf(spec_fmt, cluster);
  char *spec_path = g_build_filename(tmp, "bench.yaml", NULL);
  g_file_set_contents(spec_path, spec_text, -1, NULL);
  study_spec *s = study_spec_load(spec_path, &error);
  et_workload *w = s ? et_workload_load(prefix, 0, &error) : NULL;
  if (w == NULL) {
    fprintf(stderr, "bench_sweep: %s\n", error->message);
    return 1;
  }
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int jobs[2] = {1, cores > 1 ? (int)cores : 1};
  char *csv[2] = {NULL, NULL};
  for (int i = 0; i < 2; i++) {
    if (i == 1 && jobs[1] == 1)
      break;
    char *out = g_strdup_printf("%s/j%d", tmp, jobs[i]);
    study_sweep_options o = {.out_dir = out, .jobs = jobs[i]};
    study_sweep_stats st;
    if (!study_sweep_run(s, w, &o, &st, &error)) {
      fprintf(stderr, "bench_sweep: %s\n", error->message);
      return 1;
    }
    printf("sweep of %d points (%d ranks, %s), -j %d: %.2f s, %.1f points/s, %d failed\n", st.total, w->n_ranks,
           prefix, jobs[i], st.wall_seconds, st.total / st.wall_seconds, st.failed);
    g_file_get_contents(st.csv_path, &csv[i], NULL, NULL);
    study_sweep_stats_clear(&st);
    g_free(out);
  }
  if (csv[1])
    printf("-j 1 and -j %d outputs are %s\n", jobs[1], strcmp(csv[0], csv[1]) == 0 ? "byte-identical" : "DIFFERENT");
  gboolean same = csv[1] == NULL || strcmp(csv[0], csv[1]) == 0;
  g_free(csv[0]);
  g_free(csv[1]);
  et_workload_free(w);
  study_spec_free(s);
  test_rm_rf(tmp);
  g_free(tmp);
  g_free(prefix);
  g_free(cluster);
  g_free(spec_text);
  g_free(spec_path);
  return same ? 0 : 1;
}
