/* test_why_cli.c: issue 29 item 2 through the `wisp` binary: each utility
 * row gets its own why-line stating the bound of that resource, the
 * step's overall bound is printed once, resources that do not change the
 * configuration are "not applicable" with the reason (never 0 %), and a
 * pipeline receive waiting for its sender is a dependency, not a
 * straggler.
 *
 * Workloads: the bundled example (16 ranks, TP4 x PP2 x DP2, scaled to
 * dp=128 on examples/cluster-1024.yaml as in examples/run-scale.sh) and
 * examples/make_dp's pure data-parallel job (one world all-reduce of
 * 64 MiB per layer).
 */
#include "config.h"

#include "regress/test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The line of `text` starting with `prefix` (g_free), or NULL. */
static char *line_with(const char *text, const char *prefix)
{
  for (const char *p = text; p && *p;) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (strncmp(p, prefix, strlen(prefix)) == 0)
      return g_strndup(p, n);
    p = e ? e + 1 : NULL;
  }
  return NULL;
}

static guint count(const char *text, const char *needle)
{
  guint n = 0;
  for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
    n++;
  return n;
}

/* make_dp OUT/PREFIX with n ranks; returns the prefix path (g_free). */
static char *make_dp(const char *dir, int n)
{
  char *sub = g_strdup_printf("%s/dp%d", dir, n);
  g_assert_cmpint(g_mkdir_with_parents(sub, 0755), ==, 0);
  char *prefix = test_make_dp(sub, n);
  g_free(sub);
  return prefix;
}

/* The scaled example: every applicable row has a why-line about its own
 * tier, each agreeing with its row and with the critical path above. */
static void test_per_row(void)
{
  test_example_env v;
  if (!test_example_setup(&v, "wisp-why-XXXXXX"))
    return;
  char *net = g_build_filename(g_getenv("G_TEST_SRCDIR"), "examples", "cluster-1024.yaml", NULL);
  char *out = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){"utility", v.example, "--scale", "dp=128", "--network", net, "--verbose", NULL},
                                &out), ==, 0);
  /* The step's bound is stated once (it was printed twice: in the critical
   * path and again as "why < 0.5 %"). */
  g_assert_cmpuint(count(out, "the step is bound by"), ==, 1);
  test_expect_has(out, "\nwhy, per row (from the baseline's critical path):\n");
  /* Each row's line names its own tier and repeats its own utility. */
  const char *rows[][2] = {{"scale_out_bw", "uses tier 'scale_out'"}, {"scale_up_bw", "uses tier 'scale_up'"},
                           {"scale_up_domain", "crosses beyond tier 'scale_up'"}, {"latency", "halving every latency"}};
  for (guint i = 0; i < G_N_ELEMENTS(rows); i++) {
    char *row = line_with(out, rows[i][0]), *pfx = g_strdup_printf("  %s ", rows[i][0]);
    char *why = line_with(strstr(out, "why, per row"), pfx);
    g_assert_nonnull(row);
    g_assert_nonnull(why);
    test_expect_has(why, rows[i][1]);
    /* The row's utility_% (4th column) appears in its why-line as
     * "removed U % of T" with two decimals. */
    char **f = g_strsplit_set(row, " ", -1);
    GPtrArray *cols = g_ptr_array_new();
    for (char **c = f; *c; c++)
      if (**c)
        g_ptr_array_add(cols, *c);
    char *removed = g_strdup_printf("removed %.2f %% of T", g_ascii_strtod(cols->pdata[3], NULL));
    test_expect_has(why, removed);
    g_free(removed);
    g_ptr_array_free(cols, TRUE);
    g_strfreev(f);
    g_free(row);
    g_free(why);
    g_free(pfx);
  }
  /* With outer placement (8 ranks per node, TP4 and the PP pair 0-4 inside
   * a node, DP across replicas), only the DP all-reduces cross the
   * scale-out tier: the scale_out_bw line's path time is the critical
   * path's "all_reduce on 5 (dp)" line (the only DP pair on the path). */
  char *dp = line_with(out, "    all_reduce on 5 (dp)");
  g_assert_nonnull(dp);
  double dp_ms = g_ascii_strtod(dp + strlen("    all_reduce on 5 (dp)"), NULL);
  char *why = line_with(out, "  scale_out_bw ");
  double why_ms = g_ascii_strtod(why + strlen("  scale_out_bw "), NULL);
  g_test_message("dp all-reduce on the path %.6f ms; scale_out why %.6f ms", dp_ms, why_ms);
  g_assert_cmpfloat(dp_ms, >, 1.0);
  g_assert_cmpfloat(fabs(dp_ms - why_ms), <, 1e-4 * dp_ms);
  g_free(why);
  g_free(dp);
  /* The pipeline receive (rank 0 waiting for stage 2's rank 4) is a
   * dependency, not a straggler. */
  g_assert_null(strstr(out, "straggler waits: rank 4"));
  test_expect_has(out, "for data from rank 4 at 1 send/recv (its input, e.g. a pipeline stage's; not a straggler)");
  g_free(out);
  g_free(net);
  test_example_teardown(&v);
}

/* A scale-out latency of 2 ms makes the data-parallel all-reduce
 * latency-bound: the latency row says so; the compute lever's line speaks
 * of compute, not of the network. */
static void test_latency_and_levers(void)
{
  test_example_env v;
  if (!test_example_setup(&v, "wisp-why-XXXXXX"))
    return;
  char *prefix = make_dp(v.dir, 16), *yaml = g_build_filename(v.dir, "lat.yaml", NULL);
  g_assert_true(g_file_set_contents(yaml,
      "schema_version: 1\nname: slow-latency\nmodel: analytical\ndims:\n"
      "  - {name: scale_up, kind: switch, size: 8, bandwidth: 300GB/s, latency: 500ns}\n"
      "  - {name: scale_out, kind: switch, size: 2, bandwidth: 200Gbps, latency: 2ms}\n", -1, NULL));
  char *out = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){"utility", prefix, "--network", yaml, "-r",
                                                 "compute,scale_out_bw,latency", NULL}, &out), ==, 0);
  const char *block = strstr(out, "why, per row");
  g_assert_nonnull(block);
  char *lat = line_with(block, "  latency ");
  g_assert_nonnull(lat);
  test_expect_has(lat, "latency-bound, halving latency helps more than doubling any bandwidth (best: scale_out_bw");
  char *comp = line_with(block, "  compute ");
  g_assert_nonnull(comp);
  test_expect_has(comp, "GPU compute is ");
  g_assert_null(strstr(comp, "network"));
  g_assert_null(strstr(comp, "tier"));
  g_free(lat);
  g_free(comp);
  g_free(out);
  g_free(yaml);
  g_free(prefix);
  test_example_teardown(&v);
}

/* The number in column col (0-based, blank-separated) of a table row. */
static double column(const char *row, guint col)
{
  char **f = g_strsplit_set(row, " ", -1);
  guint k = 0;
  double v = NAN;
  for (char **c = f; *c; c++)
    if (**c && k++ == col) {
      v = g_ascii_strtod(*c, NULL);
      break;
    }
  g_strfreev(f);
  return v;
}

/* DLRM at dp=256 on dgx-a100 (the dp=1024 case at a quarter of the
 * cost): the step is bound by communication, halving every latency removes
 * about 4 % of T while doubling any bandwidth removes 0.3 %, and the
 * latency row was called "neither latency nor bandwidth bounds the step".
 * Now it is latency-bound, and the line says how much of the path's
 * communication the links explain: 2 x (L + B) % of T (the latency and
 * bandwidth terms when time is linear in each), the rest the library's
 * fixed costs.  Every figure is the table's or the path's. */
static void test_latency_bound_at_scale(void)
{
  char *dir = NULL, *k = test_dlrm_kineto("wisp-why-XXXXXX", &dir);
  if (k == NULL)
    return;
  char *out = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){"utility", k, "--network", "dgx-a100", "--scale", "dp=256", "-r",
                                                 "scale_out_bw,scale_up_bw,latency", NULL}, &out), ==, 0);
  test_expect_has(out, "bound: the step is bound by communication: ");
  char *lat_row = line_with(out, "latency "), *out_row = line_with(out, "scale_out_bw "),
       *up_row = line_with(out, "scale_up_bw ");
  g_assert_nonnull(lat_row);
  g_assert_nonnull(out_row);
  g_assert_nonnull(up_row);
  double L = column(lat_row, 3), B = MAX(column(out_row, 3), column(up_row, 3));
  g_test_message("latency %.4f %%, best bandwidth %.4f %%", L, B);
  g_assert_cmpfloat(L, >, 2.0 * B);
  g_assert_cmpfloat(L, >=, 1.0);
  char *why = line_with(strstr(out, "why, per row"), "  latency ");
  g_assert_nonnull(why);
  test_expect_has(why, "latency-bound, halving latency helps more than doubling any bandwidth (best: scale_out_bw");
  g_assert_null(strstr(why, "neither latency nor bandwidth"));
  /* "(X ms, C % of T)": the path's communication share. */
  const char *c = strstr(why, " ms, ");
  g_assert_nonnull(c);
  double C = g_ascii_strtod(c + strlen(" ms, "), NULL);
  /* "the links explain about 2 x (a + b) = s % of T ...; the other r %":
   * a, b the rows' utilities (two decimals), s = 2 (a + b), r = C - s, each
   * to its printed rounding. */
  const char *x = strstr(why, "the links explain about 2 x (");
  g_assert_nonnull(x);
  char *end = NULL;
  double a = g_ascii_strtod(x + strlen("the links explain about 2 x ("), &end);
  g_assert_true(g_str_has_prefix(end, " + "));
  double b = g_ascii_strtod(end + 3, &end);
  g_assert_true(g_str_has_prefix(end, ") = "));
  double sum = g_ascii_strtod(end + 4, &end);
  g_assert_true(g_str_has_prefix(end, " % of T (latency and bandwidth terms"));
  const char *o = strstr(end, "; the other ");
  g_assert_nonnull(o);
  double rest = g_ascii_strtod(o + strlen("; the other "), &end);
  g_assert_true(g_str_has_prefix(end, " % of the path's communication responds to neither"));
  g_assert_cmpfloat(fabs(a - L), <=, 0.0051);
  g_assert_cmpfloat(fabs(b - B), <=, 0.0051);
  g_assert_cmpfloat(fabs(sum - 2.0 * (L + B)), <=, 0.051);
  g_assert_cmpfloat(fabs(rest - (C - 2.0 * (L + B))), <=, 0.101);
  g_assert_cmpfloat(rest, >, sum); /* the links explain the smaller part */
  g_free(why), g_free(lat_row), g_free(out_row), g_free(up_row);
  g_free(out);
  test_rm_rf(dir);
  g_free(dir), g_free(k);
}

/* The issue's `-r compute:gemm,host` on the scaled example: its kernels
 * are layer nodes no class rule names and it has no CPU nodes, so neither
 * lever changes anything; the rows were 0.0000 % with why-lines about all
 * of GPU compute ("70.2 % ... (every kernel class)").  Now both are not
 * applicable with the reason.  On DLRM (gemm kernels 26.69 % of kernel
 * time) compute:gemm's line gives the gemm kernels' own share of the
 * path, beside all of GPU compute's, which the critical path's table
 * prints (--verbose "compute" row). */
static void test_lever_rows(void)
{
  test_example_env v;
  if (!test_example_setup(&v, "wisp-why-XXXXXX"))
    return;
  char *net = g_build_filename(g_getenv("G_TEST_SRCDIR"), "examples", "cluster-1024.yaml", NULL);
  char *out = NULL, *svg = g_build_filename(v.dir, "levers.svg", NULL), *svg_text = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){"utility", v.example, "--scale", "dp=128", "--network", net, "-r",
                                                 "compute:gemm,host", "--svg", svg, NULL}, &out), ==, 0);
  /* The chart's n/a legend no longer blames the cluster alone. */
  g_assert_true(g_file_get_contents(svg, &svg_text, NULL, NULL));
  test_expect_has(svg_text, "n/a: not applicable to this cluster or workload");
  g_free(svg_text), g_free(svg);
  char *gemm = line_with(out, "compute:gemm "), *host = line_with(out, "host ");
  g_assert_nonnull(gemm);
  g_assert_nonnull(host);
  test_expect_has(gemm, "not applicable: no GPU kernel of the workload is of class gemm");
  test_expect_has(host, "not applicable: the workload has no host/CPU nodes to halve");
  g_assert_null(strstr(gemm, "0.0000"));
  g_assert_null(strstr(host, "0.0000"));
  g_assert_null(strstr(out, "every kernel class"));
  g_free(gemm), g_free(host), g_free(out), g_free(net);
  test_example_teardown(&v);

  char *dir = NULL, *k = test_dlrm_kineto("wisp-why-XXXXXX", &dir);
  if (k == NULL)
    return;
  g_assert_cmpint(test_wisp_run((const char *[]){"utility", k, "--network", "dgx-a100", "--verbose", "-r",
                                                 "compute,compute:gemm", NULL}, &out), ==, 0);
  char *crow = line_with(strstr(out, "  category "), "  compute "), *why = line_with(strstr(out, "why, per row"),
                                                                                  "  compute:gemm ");
  g_assert_nonnull(crow);
  g_assert_nonnull(why);
  double share = column(crow, 2); /* "  compute   time_ms   share_%" */
  char *want = g_strdup_printf("(GPU compute in all: %.2f %%)", share);
  test_expect_has(why, want);
  test_expect_has(why, "gemm kernels are ");
  g_free(want), g_free(crow), g_free(why), g_free(out);
  test_rm_rf(dir);
  g_free(dir), g_free(k);
}

/* DLRM with its measured starts: halving latency and doubling bandwidth
 * both remove 0.00 % of T, and the latency line said "bandwidth-bound more
 * than latency-bound (scale_up_bw removed 0.00 %)".  Neither bounds it. */
static void test_neither(void)
{
  char *dir = NULL, *k = test_dlrm_kineto("wisp-why-XXXXXX", &dir);
  if (k == NULL)
    return;
  char *out = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){"utility", k, "--network", "dgx-a100", "--starts", "measured", "-r",
                                                 "scale_up_bw,latency", NULL}, &out), ==, 0);
  char *lat_row = line_with(out, "latency "), *bw_row = line_with(out, "scale_up_bw ");
  g_assert_nonnull(lat_row);
  g_assert_nonnull(bw_row);
  double L = column(lat_row, 3), B = column(bw_row, 3);
  g_test_message("latency %.4f %%, scale_up_bw %.4f %%", L, B);
  g_assert_cmpfloat(MAX(L, B), <, 1.0);
  char *why = line_with(strstr(out, "why, per row"), "  latency ");
  g_assert_nonnull(why);
  test_expect_has(why, ": neither latency nor bandwidth bounds the step (best bandwidth row: scale_up_bw");
  g_assert_null(strstr(why, "-bound"));
  g_free(why), g_free(lat_row), g_free(bw_row), g_free(out);
  test_rm_rf(dir);
  g_free(dir), g_free(k);
}

/* Rows that change nothing are not applicable, with the reason: 8 ranks
 * on a DGX A100 preset fill one NVLink domain ([8, 1] stays [8, 1]), and
 * on a TPU slice scale_up_bw and ici_bw are one tier. */
static void test_not_applicable(void)
{
  test_example_env v;
  if (!test_example_setup(&v, "wisp-why-XXXXXX"))
    return;
  char *prefix = make_dp(v.dir, 8), *out = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){"utility", prefix, "--network", "dgx-a100", NULL}, &out), ==, 0);
  char *dom = line_with(out, "scale_up_domain ");
  g_assert_nonnull(dom);
  test_expect_has(dom, "not applicable: doubling the scale-up domain leaves the dims [8, 1] unchanged: the workload's 8 "
                  "ranks already fit in one domain of 8");
  g_assert_null(strstr(dom, "0.0000"));
  g_free(dom);
  g_free(out);
  g_assert_cmpint(test_wisp_run((const char *[]){"utility", prefix, "--network", "tpu-v6e", NULL}, &out), ==, 0);
  char *ici = line_with(out, "ici_bw ");
  g_assert_nonnull(ici);
  test_expect_has(ici, "not applicable: the same change as scale_up_bw (one tier)");
  g_free(ici);
  g_free(out);
  g_free(prefix);
  test_example_teardown(&v);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/why/per-row", test_per_row);
  g_test_add_func("/why/latency-and-levers", test_latency_and_levers);
  g_test_add_func("/why/latency-bound-at-scale", test_latency_bound_at_scale);
  g_test_add_func("/why/lever-rows", test_lever_rows);
  g_test_add_func("/why/neither", test_neither);
  g_test_add_func("/why/not-applicable", test_not_applicable);
  return g_test_run();
}
