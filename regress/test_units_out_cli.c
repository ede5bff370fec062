/* test_units_out_cli.c: issue 29 items 9 and 11 through the `wisp`
 * binary: one unit per quantity beside the tables (milliseconds, not
 * "14552000.000 ns vs 19901000.000 ns"), units on unitless-looking metric
 * rows, outputs that say where they were written, and a sweep that prints
 * its results as a table.
 *
 * Workloads: DLRM's Kineto traces (../shared/data/param/dlrm_kineto.tar.gz,
 * dgx-a100; skipped without them) and, for the sweep, examples/make_dp's
 * 8-rank data-parallel job on the dgx-a100 preset.
 */
#include "config.h"

#include "regress/test_util.h"

#include <string.h>

static void test_simulate_units(void)
{
  char *dir = NULL, *wl = test_dlrm_kineto("wisp-units-XXXXXX", &dir);
  if (wl == NULL)
    return;
  char *json = g_build_filename(dir, "d.json", NULL);
  char *svg = g_build_filename(dir, "d.svg", NULL), *out = NULL, *err = NULL;
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"simulate", wl, "--network", "dgx-a100", "--json", json,
                                                           "--svg", svg, NULL}, &out, &err), ==, 0);
  /* The measured and simulated steps in ms, as the per-rank table: the
   * measured step of DLRM's slowest rank window is 19.901 ms. */
  test_expect_has(out, "measured step time: 19.901000 ms; simulated baseline error ");
  test_expect_has(out, "baseline: simulated step ");
  test_expect_has(out, " ms vs measured 19.901000 ms (max over ranks, rank 1)");
  test_expect_has(out, "  measured windows start up to 7.513000 ms apart");
  g_assert_null(strstr(out, " ns vs measured"));
  g_assert_null(strstr(out, " ns apart"));
  /* Metric rows say their unit; avg_step_time says why it differs. */
  test_expect_has(out, "\nstraggler (fraction) ");
  test_expect_has(out, "avg_step_time: mean over ranks of each rank's window per step; a simulated window ends with "
                       "the step (the latest rank's finish)");
  /* Where the outputs went. */
  char *want = g_strdup_printf("\nsvg: %s (per-rank step breakdown, 8 ranks)\n", svg);
  test_expect_has(out, want);
  g_free(want);
  want = g_strdup_printf("\njson: %s (the versioned report, schema_version 1)\n", json);
  test_expect_has(out, want);
  g_free(want);
  g_free(out), g_free(err);
  test_rm_rf(dir);
  g_free(dir), g_free(wl), g_free(json), g_free(svg);
}

/* sweep prints one row per point: label, axis value, step time in ms
 * (the CSV's step_time_ns / 10^6), utility and status. */
static void test_sweep_table(void)
{
  if (!test_have_bin())
    return;
  char *dir = g_dir_make_tmp("wisp-units-XXXXXX", NULL), *wl = test_make_dp(dir, 8);
  char *spec = g_build_filename(dir, "s.yaml", NULL), *outdir = g_build_filename(dir, "o", NULL);
  char *text = g_strdup_printf("sweep_version: 1\nname: bw\nworkload: \"%s\"\ncluster: dgx-a100\ncombine: zip\n"
                               "labels: [slow, fast]\naxes:\n  - {key: scale_up_bw, values: [\"100GB/s\", \"400GB/s\"]}\n", wl);
  g_assert_true(g_file_set_contents(spec, text, -1, NULL));
  char *out = NULL, *err = NULL;
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"sweep", spec, "-o", outdir, "--jobs", "1", NULL}, &out,
                                   &err), ==, 0);
  test_expect_has(out, "\n point  label             scale_up_bw       step_time_ms   utility_%  status\n");
  /* Each row from the CSV, recomputed here. */
  char *csv = NULL, *csv_path = g_build_filename(outdir, "bw.csv", NULL);
  g_assert_true(g_file_get_contents(csv_path, &csv, NULL, NULL));
  char **lines = g_strsplit(csv, "\n", -1);
  for (int p = 0; p < 2; p++) {
    char **f = g_strsplit(lines[1 + p], ",", -1);
    char *row = g_strdup_printf("\n%6s  %-16s  %-14s  %14.6f  %10s  %s\n", f[0], f[1], f[2],
                                g_ascii_strtod(f[3], NULL) / 1e6, f[g_strv_length(f) - 2], f[g_strv_length(f) - 1]);
    test_expect_has(out, row);
    g_free(row);
    g_strfreev(f);
  }
  g_strfreev(lines);
  g_free(csv), g_free(csv_path), g_free(out), g_free(err), g_free(text);
  test_rm_rf(dir);
  g_free(dir), g_free(wl), g_free(spec), g_free(outdir);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/units-out/simulate", test_simulate_units);
  g_test_add_func("/units-out/sweep-table", test_sweep_table);
  return g_test_run();
}
