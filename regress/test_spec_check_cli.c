/* test_spec_check_cli.c: issue 29 item 6 through the `wisp` binary: a
 * sweep spec is checked completely before the first point runs, every
 * problem listed at once (file, line, key, value, reason), and `--list`
 * checks it too.  Before, a typo in a key or a unit ran every point and
 * failed each with its first error ("2 points (2 simulated ... 2 in
 * error)"), and --list validated nothing.
 */
#include "config.h"

#include "regress/test_util.h"

#include <string.h>

/* A spec with three mistakes: a time unit in set:, a bandwidth unit in
 * one axis value, a misspelt axis key (two values). */
static char *write_bad_spec(const char *dir)
{
  char *cluster = g_build_filename(g_getenv("G_TEST_SRCDIR"), "examples", "cluster-2node.yaml", NULL);
  char *path = g_build_filename(dir, "bad.yaml", NULL);
  char *text = g_strdup_printf("sweep_version: 1\n"
                               "name: bad\n"
                               "cluster: %s\n"
                               "set:\n"
                               "  dims.scale_up.latency: 50nz\n"
                               "axes:\n"
                               "  - {key: scale_up_bw, values: [300GB/s, 1800GBs]}\n"
                               "  - {key: scale_otu_bw, values: [200Gbps, 400Gbps]}\n", cluster);
  g_assert_true(g_file_set_contents(path, text, -1, NULL));
  g_free(text);
  g_free(cluster);
  return path;
}

static void check_problems(const char *err, const char *spec)
{
  char *head = g_strdup_printf("wisp: error: %s: 4 problems in the spec, found before running any point", spec);
  test_expect_has(err, head);
  g_free(head);
  test_expect_has(err, "set: dims.scale_up.latency: 50nz:");
  test_expect_has(err, "unknown time unit");
  char *l7 = g_strdup_printf("%s:7: axis scale_up_bw: 1800GBs:", spec);
  test_expect_has(err, l7);
  g_free(l7);
  test_expect_has(err, "unknown bandwidth unit");
  char *l8 = g_strdup_printf("%s:8: axis scale_otu_bw: 400Gbps: unknown topology key 'scale_otu_bw'", spec);
  test_expect_has(err, l8);
  g_free(l8);
}

static void test_list_checks(void)
{
  test_example_env v;
  if (!test_example_setup(&v, "wisp-spec-XXXXXX"))
    return;
  char *spec = write_bad_spec(v.dir), *out = NULL, *err = NULL;
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"sweep", spec, "--list", NULL}, &out, &err), ==, 1);
  check_problems(err, spec);
  g_assert_cmpstr(out, ==, ""); /* no points listed from a broken spec */
  g_free(out);
  g_free(err);
  /* A good spec still lists its points. */
  char *good = g_build_filename(g_getenv("G_TEST_SRCDIR"), "examples", "ccl-bench-sweep.yaml", NULL);
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"sweep", good, "--list", NULL}, &out, &err), ==, 0);
  test_expect_has(out, "ccl-bench-cluster: 3 points (zip)");
  g_free(out);
  g_free(err);
  g_free(good);
  g_free(spec);
  test_example_teardown(&v);
}

/* With a workload: the same list, and no point runs (no summary, no output
 * directory). */
static void test_run_checks_first(void)
{
  test_example_env v;
  if (!test_example_setup(&v, "wisp-spec-XXXXXX"))
    return;
  char *spec = write_bad_spec(v.dir), *outd = g_build_filename(v.dir, "sw", NULL), *out = NULL, *err = NULL;
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"sweep", spec, "--workload", v.example, "-o", outd,
                                                          "--jobs", "1", "--no-progress", NULL}, &out, &err), ==, 1);
  check_problems(err, spec);
  g_assert_null(strstr(out, "points ("));
  g_assert_false(g_file_test(outd, G_FILE_TEST_EXISTS));
  g_free(out);
  g_free(err);
  g_free(outd);
  g_free(spec);
  test_example_teardown(&v);
}

/* --job specs are read and checked before any fails the run (issue 29
 * item 6): a workload that does not exist, a rank list that does not
 * parse and a name given twice, all in one error; then placements: two
 * jobs of 16 ranks both on ranks 0-15 and a placement outside the network,
 * in one error. */
static void test_job_specs(void)
{
  test_example_env v;
  if (!test_example_setup(&v, "wisp-spec-XXXXXX"))
    return;
  char *missing = g_build_filename(v.dir, "nothing", NULL), *out = NULL, *err = NULL;
  char *j1 = g_strdup_printf("A=%s", v.example), *j2 = g_strdup_printf("A=%s@0-x", v.example);
  char *j3 = g_strdup_printf("C=%s", missing);
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"simulate", "--job", j1, "--job", j2, "--job", j3,
                                                          "--network", "dgx-h100", NULL}, &out, &err), !=, 0);
  test_expect_has(err, "several --job problems:");
  char *want = g_strdup_printf("\n  --job %s: the name A is also job 1's; names label the jobs' rows", j2);
  test_expect_has(err, want);
  g_free(want);
  want = g_strdup_printf("\n  --job %s: ", j3);
  test_expect_has(err, want);
  g_free(want);
  g_free(out), g_free(err);
  /* Placements: B on A's ranks, C partly outside a 32-rank network. */
  char *p1 = g_strdup_printf("A=%s@0-15", v.example), *p2 = g_strdup_printf("B=%s@0-15", v.example);
  char *p3 = g_strdup_printf("C=%s@20-35", v.example);
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"simulate", "--job", p1, "--job", p2, "--job", p3,
                                                          "--network", v.cluster, NULL}, &out, &err), !=, 0);
  test_expect_has(err, "problems with the jobs' placements:");
  test_expect_has(err, "jobs A and B are both placed on cluster rank 0 (16 shared ranks)");
  g_free(out), g_free(err);
  g_free(missing), g_free(j1), g_free(j2), g_free(j3), g_free(p1), g_free(p2), g_free(p3);
  test_example_teardown(&v);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/spec-check/list", test_list_checks);
  g_test_add_func("/spec-check/run", test_run_checks_first);
  g_test_add_func("/spec-check/job-specs", test_job_specs);
  return g_test_run();
}
