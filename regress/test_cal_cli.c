/* test_cal_cli.c: `wisp calibrate` end to end on a Chakra ET workload
 * written to a temporary directory (the lead's loader reads Chakra today
 * and Kineto directories once wired), by calling wisp_cmd_calibrate()
 * directly, plus its usage and degenerate-input exits.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "calib/cal.h"
#include "chakra/et_io.h"
#include "cli/wisp_cli.h"
#include "regress/test_cal_workload.h"

/* The program's error printer lives in cli/wisp.c (with main); this test
 * links the command alone, so it carries the same two lines. */
int wisp_cli_fail(GError *error)
{
  fprintf(stderr, "wisp: error: %s\n", error ? error->message : "unknown error");
  g_clear_error(&error);
  return 1;
}

static const char *cluster_yaml =
  "schema_version: 1\nlibrary: {name: ideal}\n"
  "name: one-node\n"
  "dims:\n"
  "  - {name: nvlink, kind: switch, size: 8, bandwidth: 450GB/s, latency: 500ns}\n";

static int run(int n, const char **args)
{
  char **argv = g_new0(char *, n + 2);
  argv[0] = g_strdup("calibrate");
  for (int k = 0; k < n; k++)
    argv[k + 1] = g_strdup(args[k]);
  char **keep = g_memdup2(argv, sizeof(char *) * (n + 2));
  int rc = wisp_cmd_calibrate(n + 1, argv);
  g_strfreev(keep);
  g_free(argv);
  return rc;
}

static void test_cli(void)
{
  GError *error = NULL;
  char *tmp = g_dir_make_tmp("wisp-cal-cli-XXXXXX", &error);
  g_assert_no_error(error);
  char *trace = g_build_filename(tmp, "trace", NULL);
  g_assert_cmpint(g_mkdir(trace, 0755), ==, 0);
  test_write_cal_workload(trace, FALSE);
  char *cluster = g_build_filename(tmp, "cluster.yaml", NULL);
  g_assert_true(g_file_set_contents(cluster, cluster_yaml, -1, NULL));
  char *out = g_build_filename(tmp, "calibrated.yaml", NULL);
  char *json = g_build_filename(tmp, "fit.json", NULL);
  const char *args[] = { trace, "--cluster", cluster, "-o", out, "--json", json };
  g_assert_cmpint(run(7, args), ==, 0);
  char *text = NULL;
  g_assert_true(g_file_get_contents(out, &text, NULL, NULL));
  /* Header: the trace path and its digest (the same function, recomputed). */
  char *digest = cal_trace_digest(trace, NULL, &error);
  g_assert_no_error(error);
  g_assert_true(g_str_has_prefix(text, "# Calibrated by `wisp calibrate` from the trace "));
  g_assert_nonnull(strstr(text, digest));
  g_assert_nonnull(strstr(text, "\"all_reduce\": \"ring\""));
  /* The output is a normal config: it loads, and its link latency is
   * alpha / 2 = 1 us, bandwidth 100 GB/s, within the microsecond rounding
   * of Chakra durations (smallest point 28 us + 18.4 us: < 3 %). */
  topo *t = topo_load(out, &error);
  g_assert_no_error(error);
  const topo_link *l = topo_get_link(t, 0);
  g_test_message("fitted link: %" G_GINT64_FORMAT " ps, %" G_GUINT64_FORMAT " B/s", l->latency, l->bw);
  g_assert_cmpfloat(fabs((double)l->latency - 1e6) / 1e6, <, 0.03);
  g_assert_cmpfloat(fabs((double)l->bw - 100e9) / 100e9, <, 0.03);
  topo_free(t);
  /* Deterministic: a second run writes the same bytes. */
  char *out2 = g_build_filename(tmp, "calibrated2.yaml", NULL);
  const char *args2[] = { trace, "--cluster", cluster, "-o", out2, "--summary", "--no-baseline" };
  g_assert_cmpint(run(7, args2), ==, 0);
  char *text2 = NULL;
  g_assert_true(g_file_get_contents(out2, &text2, NULL, NULL));
  g_assert_cmpstr(text, ==, text2);
  char *jtext = NULL;
  g_assert_true(g_file_get_contents(json, &jtext, NULL, NULL));
  g_assert_nonnull(strstr(jtext, "\"trace_sha256\""));
  g_assert_nonnull(strstr(jtext, "\"baseline\""));
  /* Usage errors exit 2; a trace without usable collectives exits 1 and
   * writes nothing. */
  const char *bad[] = { trace };
  g_assert_cmpint(run(1, bad), ==, 2);
  const char *bad_loss[] = { trace, "-o", out, "--loss", "cubic" };
  g_assert_cmpint(run(5, bad_loss), ==, 2);
  char *zero = g_build_filename(tmp, "zero", NULL);
  g_assert_cmpint(g_mkdir(zero, 0755), ==, 0);
  test_write_cal_workload(zero, TRUE);
  char *out3 = g_build_filename(tmp, "never.yaml", NULL);
  const char *args3[] = { zero, "--cluster", cluster, "-o", out3 };
  g_assert_cmpint(run(5, args3), ==, 1);
  g_assert_false(g_file_test(out3, G_FILE_TEST_EXISTS));
  char *argv_rm[] = { "rm", "-rf", tmp, NULL };
  g_spawn_sync(NULL, argv_rm, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL, NULL);
  g_free(text);
  g_free(text2);
  g_free(jtext);
  g_free(digest);
  g_free(trace);
  g_free(cluster);
  g_free(out);
  g_free(out2);
  g_free(out3);
  g_free(json);
  g_free(zero);
  g_free(tmp);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/cal-cli/calibrate", test_cli);
  return g_test_run();
}
