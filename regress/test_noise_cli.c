/* test_noise_cli.c: issue 29 item 9 (concise by default, each warning
 * once, one unit per quantity), through the `wisp` binary ($WISP_BIN).
 *
 * Workloads: examples/make_dp (8 ranks, 8 all-reduces of 64 MiB; built
 * with the tests) and, where a case needs real data, the TPU profile
 * WISP_SHARED_DATA/xprof/test_xplanes/tpu_inference_2.xplane.pb and
 * ASTRA-sim's 1 MiB all-reduce microbenchmark (skipped without them).
 *   /noise/scale-once: the --scale layout block was printed on stderr by
 *     the loader and on stdout by the report; now on stdout only, once;
 *   /noise/tpu-warning-once: a partial replica group's consequence and
 *     advice (--replicate-missing) were printed twice (the XLA reader's
 *     warning and the loader's count); now once;
 *   /noise/utility-one-screen: one utility resource fits 24 lines by
 *     default; --verbose adds the critical path's categories;
 *   /noise/link-units: the busiest links are in MiB on every run (a 1 MiB
 *     run printed KiB, a 64 MiB run MiB), and their bytes are the ring's
 *     closed form;
 *   /noise/nccl-count: NCCL's choices say "for N collectives", not "xN"
 *     (read as a factor beside other counts).
 */
#include "config.h"

#include "regress/test_util.h"

#include <string.h>

static int count(const char *text, const char *needle)
{
  int n = 0;
  for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle))
    n++;
  return n;
}

static char *shared(const char *rel)
{
  const char *sd = g_getenv("WISP_SHARED_DATA");
  char *p = sd ? g_build_filename(sd, rel, NULL) : NULL;
  if (p == NULL || !g_file_test(p, G_FILE_TEST_EXISTS)) {
    g_test_skip("WISP_SHARED_DATA data set absent");
    g_free(p);
    return NULL;
  }
  return p;
}

static void test_scale_once(void)
{
  if (!test_have_bin())
    return;
  char *dir = g_dir_make_tmp("wisp-noise-XXXXXX", NULL), *wl = test_make_dp(dir, 8);
  char *sout = NULL, *serr = NULL;
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"simulate", wl, "--network", "dgx-a100", "--scale", "dp=16",
                                                          NULL}, &sout, &serr), ==, 0);
  g_assert_cmpint(count(sout, "scaled: dp 8 -> 16: 8 traced ranks -> 16 ranks"), ==, 1);
  g_assert_cmpint(count(serr, "scaled: dp 8 -> 16"), ==, 0);
  /* Nor the layout block (it went to stderr as "wisp: layout: 16 ranks =
   * dp 8 x ...": the traced layout under the scaled rank count). */
  g_assert_cmpint(count(serr, "layout:"), ==, 0);
  g_assert_cmpint(count(sout, "layout: 8 ranks = dp 8"), ==, 1);
  g_free(sout), g_free(serr);
  char *out = NULL, *err = NULL;
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"utility", wl, "--network", "dgx-a100", "--scale", "dp=16",
                                                          "-r", "scale_out_bw", NULL}, &out, &err), ==, 0);
  g_assert_cmpint(count(out, "scaled: dp 8 -> 16: 8 traced ranks -> 16 ranks"), ==, 1);
  g_assert_cmpint(count(err, "scaled: dp 8 -> 16"), ==, 0);
  g_assert_cmpint(count(err, "layout:"), ==, 0);
  g_free(out), g_free(err);
  test_rm_rf(dir);
  g_free(dir), g_free(wl);
}

static void test_tpu_warning_once(void)
{
  if (!test_have_bin())
    return;
  char *x = shared("xprof/test_xplanes/tpu_inference_2.xplane.pb");
  if (x == NULL)
    return;
  char *out = NULL, *err = NULL;
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"simulate", x, "--network", "tpu-v6e", NULL}, &out, &err),
                  ==, 0);
  /* The profile holds 1 of 2 devices of an all-reduce's replica group:
   * the cause is said once, the consequence and advice once. */
  g_assert_cmpint(count(err, "replica group of 2 devices, 1 present in the profile"), ==, 1);
  /* Once over both streams: the loader's stderr WARNING and the report's
   * stdout WARNING named the same 12 ops twice. */
  char *both = g_strconcat(out, err, NULL);
  g_assert_cmpint(count(both, "--replicate-missing"), ==, 1);
  g_assert_cmpint(count(both, "WARNING: 12 communication op"), ==, 1);
  g_assert_cmpint(count(both, "replayed at their measured duration") + count(both, "replayed at its measured duration"),
                  ==, 1);
  g_free(both);
  g_free(out), g_free(err), g_free(x);
}

static int lines(const char *text)
{
  return count(text, "\n");
}

static void test_utility_one_screen(void)
{
  if (!test_have_bin())
    return;
  char *dir = g_dir_make_tmp("wisp-noise-XXXXXX", NULL), *wl = test_make_dp(dir, 8);
  char *brief = NULL, *verbose = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){"utility", wl, "--network", "dgx-a100", "-r", "scale_up_bw", NULL},
                                &brief), ==, 0);
  g_assert_cmpint(test_wisp_run((const char *[]){"utility", wl, "--network", "dgx-a100", "-r", "scale_up_bw", "-v",
                                                 NULL}, &verbose), ==, 0);
  g_test_message("utility -r scale_up_bw: %d lines, %d with --verbose", lines(brief), lines(verbose));
  g_assert_cmpint(lines(brief), <=, 24); /* one terminal screen */
  g_assert_null(strstr(brief, "  category "));
  test_expect_has(brief, "  bound: the step is bound by");
  test_expect_has(brief, "(--verbose: its categories, communications and ranks)");
  test_expect_has(verbose, "  category                          time_ms   share_%\n");
  test_expect_has(verbose, "  bound: the step is bound by");
  g_assert_cmpint(lines(verbose), >, lines(brief));
  g_free(brief), g_free(verbose);
  test_rm_rf(dir);
  g_free(dir), g_free(wl);
}

/* The first busiest-link line's bytes: "...): 448.000 MiB, 12.34 %". */
static void expect_link_mib(const char *out, const char *mib)
{
  test_expect_has(out, "busiest links (MiB moved; utilization = bytes / (bandwidth x step time)):\n");
  const char *l = strstr(out, "\n  link ");
  g_assert_nonnull(l);
  const char *e = strchr(l + 1, '\n');
  char *line = g_strndup(l + 1, (gsize)(e - l - 1));
  char *want = g_strdup_printf("): %s MiB, ", mib);
  test_expect_has(line, want);
  g_assert_null(strstr(line, "KiB"));
  g_free(want), g_free(line);
}

static void test_link_units(void)
{
  if (!test_have_bin())
    return;
  char *dir = g_dir_make_tmp("wisp-noise-XXXXXX", NULL), *wl = test_make_dp(dir, 8);
  char *net = g_build_filename(dir, "ring.yml", NULL);
  g_assert_true(g_file_set_contents(net, "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50.0 ]\n"
                                    "latency: [ 500.0 ]\n", -1, NULL));
  /* A bidirectional ring all-reduce of S bytes over n = 8 puts
   * 2 (n-1)/n x S/2 = 7/8 S on each directed link: make_dp's 8 x 64 MiB
   * give 8 x 56 = 448 MiB; ASTRA-sim's 1 MiB one gives 0.875 MiB (it
   * printed "896 KiB", the other run "448 MiB"). */
  char *out = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){"simulate", wl, "--network", net, NULL}, &out), ==, 0);
  expect_link_mib(out, "448.000");
  g_free(out);
  char *ar = shared("astrasim/all_reduce/8npus_1MB/all_reduce.0.et");
  if (ar != NULL) {
    char *prefix = g_strndup(ar, strlen(ar) - strlen(".0.et"));
    g_assert_cmpint(test_wisp_run((const char *[]){"simulate", prefix, "--network", net, NULL}, &out), ==, 0);
    expect_link_mib(out, "0.875");
    g_free(out), g_free(prefix), g_free(ar);
  }
  test_rm_rf(dir);
  g_free(dir), g_free(wl), g_free(net);
}

static void test_nccl_count(void)
{
  if (!test_have_bin())
    return;
  char *dir = g_dir_make_tmp("wisp-noise-XXXXXX", NULL), *wl = test_make_dp(dir, 8);
  char *out = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){"simulate", wl, "--network", "dgx-a100", NULL}, &out), ==, 0);
  /* make_dp: 8 all-reduces of 64 MiB = 67108864 B, each counted once
   * (64 records: 8 members each). */
  test_expect_has(out, "NCCL algorithm/protocol chosen (library nccl; each collective counted once, not per member):");
  test_expect_has(out, " for 8 collectives of 67108864 B\n");
  g_assert_null(strstr(out, " x8 ("));
  g_free(out);
  test_rm_rf(dir);
  g_free(dir), g_free(wl);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/noise/scale-once", test_scale_once);
  g_test_add_func("/noise/tpu-warning-once", test_tpu_warning_once);
  g_test_add_func("/noise/utility-one-screen", test_utility_one_screen);
  g_test_add_func("/noise/link-units", test_link_units);
  g_test_add_func("/noise/nccl-count", test_nccl_count);
  return g_test_run();
}
