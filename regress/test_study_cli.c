/* test_study_cli.c: the study commands end to end through the `wisp`
 * binary ($WISP_BIN, set by `make check`) on the bundled example workload
 * (generated with examples/make_example into a temporary directory) and
 * examples/cluster-2node.yaml.
 *
 * Skips visibly when WISP_BIN is not set, when the example generator is
 * missing, or when the binary does not list the study commands yet.
 */
#include "config.h"
#include <cjson/cJSON.h>

#include "regress/test_util.h"

#include <math.h>
#include <glib/gstdio.h>
#include <string.h>

typedef struct {
  char *dir, *example, *cluster, *spec;
} env;

static gboolean run(char **argv, int *status, char **out, char **err)
{
  GError *error = NULL;
  gboolean ok = g_spawn_sync(NULL, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, out, err, status, &error);
  if (!ok)
    g_error("cannot run %s: %s", argv[0], error->message);
  return ok;
}

static int wisp(const char *const *args, char **out)
{
  return test_wisp_run(args, out);
}

static gboolean setup(env *v)
{
  const char *bin = g_getenv("WISP_BIN"), *src = g_getenv("G_TEST_SRCDIR"), *build = g_getenv("G_TEST_BUILDDIR");
  if (!bin || !src || !build) {
    g_test_skip("WISP_BIN, G_TEST_SRCDIR or G_TEST_BUILDDIR not set (run through make check)");
    return FALSE;
  }
  char *usage = NULL;
  wisp((const char *[]){"help", NULL}, &usage);
  gboolean listed = usage && strstr(usage, "utility") && strstr(usage, "sweep-merge") && strstr(usage, "diff");
  g_free(usage);
  if (!listed) {
    g_test_skip("this wisp binary does not list utility, sweep, sweep-merge and diff yet (cli/wisp.c)");
    return FALSE;
  }
  char *gen = g_build_filename(build, "examples", "make_example", NULL);
  if (!g_file_test(gen, G_FILE_TEST_IS_EXECUTABLE)) {
    g_test_skip("examples/make_example is not built");
    g_free(gen);
    return FALSE;
  }
  v->dir = g_dir_make_tmp("wisp-cli-XXXXXX", NULL);
  int status;
  run((char *[]){gen, v->dir, "llm", NULL}, &status, NULL, NULL);
  g_assert_cmpint(status, ==, 0);
  g_free(gen);
  v->example = g_build_filename(v->dir, "llm", NULL);
  v->cluster = g_build_filename(src, "examples", "cluster-2node.yaml", NULL);
  v->spec = g_build_filename(src, "examples", "ccl-bench-sweep.yaml", NULL);
  return TRUE;
}

static void teardown(env *v)
{
  test_rm_rf(v->dir);
  g_free(v->dir);
  g_free(v->example);
  g_free(v->cluster);
  g_free(v->spec);
}

/* utility: exit 0, five resources in the JSON, scale_out_bw applicable with
 * a utility in (0, 100): the DP all-reduces of the example cross the
 * scale-out tier, so doubling it shortens the step but cannot remove
 * compute. */
static void test_utility(void)
{
  env v;
  if (!setup(&v))
    return;
  char *json = g_build_filename(v.dir, "u.json", NULL);
  char *out = NULL;
  g_assert_cmpint(wisp((const char *[]){"utility", v.example, "--cluster", v.cluster, "--json", json, NULL}, &out), ==, 0);
  g_assert_nonnull(strstr(out, "simulated baseline step time T"));
  g_assert_nonnull(strstr(out, "sensitivity"));
  /* The baseline's critical path is printed with the step's bound (once);
   * each row's own bound follows the table: halving the latency gains
   * little on the example (its all-reduces are large), and its line says
   * bandwidth matters more. */
  g_assert_nonnull(strstr(out, "critical path: "));
  g_assert_nonnull(strstr(out, "  bound: the step is bound by "));
  const char *why = strstr(out, "\nwhy, per row (from the baseline's critical path):\n");
  g_assert_nonnull(why);
  g_assert_nonnull(strstr(why, "  latency "));
  g_assert_nonnull(strstr(why, "bandwidth-bound more than latency-bound"));
  g_free(out);
  cJSON *d = load_json(json);
  const cJSON *res = cJSON_GetObjectItemCaseSensitive(d, "resources");
  g_assert_cmpint(cJSON_GetArraySize(res), ==, 5);
  const cJSON *so = cJSON_GetArrayItem(res, 0);
  g_assert_cmpstr(cJSON_GetObjectItemCaseSensitive(so, "resource")->valuestring, ==, "scale_out_bw");
  double u = cJSON_GetObjectItemCaseSensitive(so, "utility_pct")->valuedouble;
  g_assert_cmpfloat(u, >, 0.0);
  g_assert_cmpfloat(u, <, 100.0);
  const cJSON *lat = cJSON_GetArrayItem(res, 4);
  g_assert_cmpstr(cJSON_GetObjectItemCaseSensitive(lat, "resource")->valuestring, ==, "latency");
  g_assert_cmpfloat(cJSON_GetObjectItemCaseSensitive(lat, "utility_pct")->valuedouble, <, 0.5);
  /* baseline_critical_path: by_category sums to the baseline step (both in
   * decimal ns with picosecond precision), and the sentence is there. */
  const cJSON *cp = cJSON_GetObjectItemCaseSensitive(d, "baseline_critical_path");
  g_assert_true(cJSON_IsObject(cp));
  double sum_ps = 0;
  for (const cJSON *c = cJSON_GetObjectItemCaseSensitive(cp, "by_category")->child; c; c = c->next)
    sum_ps += round(c->valuedouble * 1000.0);
  g_assert_cmpfloat(sum_ps, ==, round(cJSON_GetObjectItemCaseSensitive(d, "baseline_step_ns")->valuedouble * 1000.0));
  g_assert_true(g_str_has_prefix(cJSON_GetObjectItemCaseSensitive(cp, "bound")->valuestring, "the step is bound by "));
  cJSON_Delete(d);
  /* Usage errors exit 2; a bad resource is a user error (1). */
  g_assert_cmpint(wisp((const char *[]){"utility", v.example, NULL}, NULL), ==, 2);
  g_assert_cmpint(wisp((const char *[]){"utility", v.example, "--cluster", v.cluster, "-r", "gpus", NULL}, NULL), ==, 1);
  g_assert_cmpint(wisp((const char *[]){"utility", v.example, "--cluster", "no-such-preset", NULL}, NULL), ==, 1);
  g_free(json);
  teardown(&v);
}

/* The shipped CCL-Bench sweep runs on the example: 3 labelled points;
 * two shards merged equal the unsharded CSV byte for byte. */
static void test_sweep(void)
{
  env v;
  if (!setup(&v))
    return;
  char *d1 = g_build_filename(v.dir, "full", NULL), *d2 = g_build_filename(v.dir, "sh", NULL);
  g_assert_cmpint(wisp((const char *[]){"sweep", v.spec, "--workload", v.example, "-o", d1, "--jobs", "2", NULL}, NULL),
                  ==, 0);
  char *csv = g_build_filename(d1, "ccl-bench-cluster.csv", NULL), *text = NULL;
  g_assert_true(g_file_get_contents(csv, &text, NULL, NULL));
  g_assert_nonnull(strstr(text, "\n0,baseline,4,300GB/s,200Gbps,"));
  g_assert_nonnull(strstr(text, "\n1,balanced,32,1800GB/s,400Gbps,"));
  g_assert_nonnull(strstr(text, "\n2,aggressive,128,3600GB/s,800Gbps,"));
  g_assert_nonnull(strstr(text, ",0.000000,ok\n")); /* the base point is the first */
  for (int k = 1; k <= 2; k++) {
    char shard[8];
    g_snprintf(shard, sizeof shard, "%d/2", k);
    g_assert_cmpint(wisp((const char *[]){"sweep", v.spec, "--workload", v.example, "-o", d2, "--shard", shard, NULL},
                         NULL), ==, 0);
  }
  char *merged = g_build_filename(v.dir, "merged", NULL);
  char *s1 = g_build_filename(d2, "ccl-bench-cluster.shard-1-of-2", NULL);
  char *s2 = g_build_filename(d2, "ccl-bench-cluster.shard-2-of-2.csv", NULL);
  g_assert_cmpint(wisp((const char *[]){"sweep-merge", "-o", merged, s2, s1, NULL}, NULL), ==, 0);
  char *mc = g_strconcat(merged, ".csv", NULL), *mt = NULL;
  g_assert_true(g_file_get_contents(mc, &mt, NULL, NULL));
  g_assert_cmpstr(mt, ==, text);
  g_assert_cmpint(wisp((const char *[]){"sweep", "--shard", "3/2", v.spec, NULL}, NULL), ==, 2);
  g_free(mt), g_free(mc), g_free(s1), g_free(s2), g_free(merged), g_free(text), g_free(csv), g_free(d1), g_free(d2);
  teardown(&v);
}

/* simulate --timeline/--svg/--json, then diff of two reports. */
static void test_simulate_outputs(void)
{
  env v;
  if (!setup(&v))
    return;
  char *tl = g_build_filename(v.dir, "tl.json", NULL), *svg = g_build_filename(v.dir, "r.svg", NULL);
  char *a = g_build_filename(v.dir, "a.json", NULL), *b = g_build_filename(v.dir, "b.json", NULL);
  g_assert_cmpint(wisp((const char *[]){"simulate", v.example, "--network", v.cluster, "--timeline", tl,
                                        "--timeline-ranks", "0-3", "--svg", svg, "--json", a, NULL}, NULL), ==, 0);
  cJSON *d = load_json(tl);
  g_assert_true(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(d, "traceEvents")));
  cJSON_Delete(d);
  g_assert_true(g_file_test(svg, G_FILE_TEST_EXISTS));
  g_assert_cmpint(wisp((const char *[]){"simulate", v.example, "--cluster", "dgx-h100", "--json", b, NULL}, NULL), ==, 0);
  char *out = NULL;
  g_assert_cmpint(wisp((const char *[]){"diff", a, b, NULL}, &out), ==, 0);
  g_assert_nonnull(strstr(out, "per communicator group"));
  g_free(out);
  g_assert_cmpint(wisp((const char *[]){"simulate", v.example, "--network", v.cluster, "--timeline-window", "5ms", NULL},
                       NULL), ==, 2);
  g_free(tl), g_free(svg), g_free(a), g_free(b);
  teardown(&v);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/study-cli/utility", test_utility);
  g_test_add_func("/study-cli/sweep", test_sweep);
  g_test_add_func("/study-cli/simulate-outputs", test_simulate_outputs);
  return g_test_run();
}
