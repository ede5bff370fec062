/* test_system_cli.c: issue 29 item 12/11, ASTRA-sim's system.json read
 * where it maps onto wisp (collectives/coll_system.h), driven through the
 * `wisp` binary ($WISP_BIN, set by `make check`).
 *
 * The system files are shaped like ASTRA-sim's shipped ones (the keys and
 * value kinds of its examples/system/native_collectives files:
 * scheduling-policy, endpoint-delay, active-chunks-per-dimension,
 * preferred-dataset-splits, the four *-implementation lists,
 * collective-optimization, local-mem-bw, boost-mode), written here.
 *   /system/maps: the implementation list sets the algorithm every
 *     collective of the replay uses (the JSON report's `algorithm`), the
 *     dataset splits set collectives.chunks, and every key wisp ignores is
 *     named on one line with its reason;
 *   /system/same-files: ASTRA-sim's own microbenchmark (one 1 MiB
 *     all-reduce per NPU, ../shared/data/astrasim) on a two-dimension
 *     ASTRA-sim network.yml: the per-dimension implementations of the file
 *     are the ones collbench names (ring on dim0, direct on dim1), and the
 *     simulated step is exactly collbench's time for that one collective,
 *     with the file's algorithms and without them;
 *   /system/errors: bad files fail with the file, the byte offset of the
 *     offending value (found here in the text written) and what to write.
 */
#include "config.h"

#include "regress/test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* An ASTRA-sim network.yml: one ring of 8 NPUs, or FullyConnected 4 x
 * Switch 2 (the shape of reference/astra-sim-compat.md vector A8). */
static const char net1[] = "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n";
static const char net2[] = "topology: [ FullyConnected, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 300.0, 25.0 ]\n"
                           "latency: [ 50.0, 5000.0 ]\n";

static char *write_file(const char *dir, const char *name, const char *text)
{
  char *p = g_build_filename(dir, name, NULL);
  g_assert_true(g_file_set_contents(p, text, -1, NULL));
  return p;
}

/* How many collective records of the JSON report ran `algo`, and how many
 * records there are.  O(size of the report). */
static int count_algo(const char *json_path, const char *algo, int *records)
{
  char *text = NULL;
  g_assert_true(g_file_get_contents(json_path, &text, NULL, NULL));
  char *want = g_strdup_printf("\"algorithm\": \"%s\"", algo);
  int n = 0;
  *records = 0;
  for (const char *p = text; (p = strstr(p, "\"algorithm\": ")) != NULL; p++)
    (*records)++;
  for (const char *p = text; (p = strstr(p, want)) != NULL; p++)
    n++;
  g_free(want);
  g_free(text);
  return n;
}

/* The number after `key` in text (a command's output), in ms. */
static double ms_after(const char *text, const char *key)
{
  const char *p = text ? strstr(text, key) : NULL;
  g_assert_nonnull(p);
  return g_ascii_strtod(p + strlen(key), NULL);
}

/* An ASTRA-sim network.yml without a library: setting runs the ideal
 * library in every command: utility's baseline (the file opened as an
 * editable variant, written back as wisp YAML whose default library is
 * NCCL) must be simulate's step on the same files, as it was not before
 * (32.30 ms against 26.10 ms on a ring of 8, found by h29c). */
static void test_astra_library(void)
{
  if (!test_have_bin())
    return;
  char *dir = g_dir_make_tmp("wisp-system-XXXXXX", NULL), *wl = test_make_dp(dir, 8);
  char *net = write_file(dir, "net.yml", net1), *sim = NULL, *util = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){"simulate", wl, "--network", net, NULL}, &sim), ==, 0);
  g_assert_cmpint(test_wisp_run((const char *[]){"utility", wl, "--network", net, "-r", "latency", NULL}, &util), ==,
                  0);
  double a = ms_after(sim, "critical path: "), b = ms_after(util, "simulated baseline step time T: ");
  g_test_message("simulate %.6f ms, utility baseline %.6f ms", a, b);
  g_assert_cmpfloat(a, >, 0);
  g_assert_cmpfloat(a, ==, b); /* both printed with 6 decimals from the same replay */
  g_free(sim), g_free(util), g_free(net), g_free(wl);
  test_rm_rf(dir);
  g_free(dir);
}

static void test_maps(void)
{
  if (!test_have_bin())
    return;
  char *dir = g_dir_make_tmp("wisp-system-XXXXXX", NULL), *wl = test_make_dp(dir, 8);
  char *net = write_file(dir, "net.yml", net1);
  char *sys = write_file(dir, "system.json",
                         "{\n  \"scheduling-policy\": \"LIFO\",\n  \"endpoint-delay\": 10,\n"
                         "  \"active-chunks-per-dimension\": 2,\n  \"preferred-dataset-splits\": 4,\n"
                         "  \"all-reduce-implementation\": [\"doubleBinaryTree\"],\n"
                         "  \"all-gather-implementation\": [\"ring\"],\n  \"reduce-scatter-implementation\": [\"ring\"],\n"
                         "  \"all-to-all-implementation\": [\"direct\"],\n"
                         "  \"collective-optimization\": \"localBWAware\",\n  \"local-mem-bw\": 3350,\n"
                         "  \"boost-mode\": 0\n}\n");
  char *with = g_build_filename(dir, "with.json", NULL), *without = g_build_filename(dir, "without.json", NULL);
  char *out = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){"simulate", wl, "--network", net, "--json", without, NULL}, NULL),
                  ==, 0);
  g_assert_cmpint(test_wisp_run((const char *[]){"simulate", wl, "--network", net, "--system", sys, "--json", with,
                                                 NULL}, &out), ==, 0);
  /* make_dp: 8 ranks x 8 all-reduces = 64 records; every one runs the
   * file's doubleBinaryTree, none without the file (ring topology: the
   * ideal library's ring). */
  int records = 0;
  g_assert_cmpint(count_algo(with, "double_binary_tree", &records), ==, 64);
  g_assert_cmpint(records, ==, 64);
  g_assert_cmpint(count_algo(without, "double_binary_tree", &records), ==, 0);
  g_assert_cmpint(records, ==, 64);
  /* What was set, from which key; the ignored keys on one line. */
  char *line = g_strdup_printf("system %s: collectives.chunks = 4 (preferred-dataset-splits), collectives.all_reduce "
                               "= double_binary_tree (all-reduce-implementation), collectives.all_gather = ring "
                               "(all-gather-implementation), collectives.reduce_scatter = ring "
                               "(reduce-scatter-implementation), collectives.all_to_all = direct "
                               "(all-to-all-implementation)\n", sys);
  test_expect_has(out, line);
  g_free(line);
  line = g_strdup_printf("system %s: ignored: scheduling-policy (", sys);
  test_expect_has(out, line);
  const char *ign = strstr(out, line);
  const char *eol = strchr(ign, '\n');
  char *ignored = g_strndup(ign, (gsize)(eol - ign));
  const char *names[] = {"scheduling-policy (", "endpoint-delay (", "active-chunks-per-dimension (",
                         "local-mem-bw (", "boost-mode ("};
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
    test_expect_has(ignored, names[i]);
  g_assert_null(strstr(ignored, "collective-optimization")); /* localBWAware is wisp's composition */
  g_free(ignored);
  g_free(line);
  /* The ASTRA-sim network keeps its ideal library through the edit. */
  test_expect_has(out, "library.name=ideal");
  g_free(out);
  /* ASTRA-sim's option name is the same option; utility takes it too. */
  g_assert_cmpint(test_wisp_run((const char *[]){"simulate", wl, "--network", net, "--system-configuration", sys,
                                                 "--json", without, NULL}, NULL), ==, 0);
  g_assert_cmpint(count_algo(without, "double_binary_tree", &records), ==, 64);
  g_assert_cmpint(test_wisp_run((const char *[]){"utility", wl, "--network", net, "--system", sys, "-r",
                                                 "scale_up_bw", NULL}, &out), ==, 0);
  test_expect_has(out, "collectives.all_reduce = double_binary_tree (all-reduce-implementation)");
  g_free(out);
  test_rm_rf(dir);
  g_free(dir), g_free(wl), g_free(net), g_free(sys), g_free(with), g_free(without);
}

/* The step time line of simulate, "step time: X ms (N ns)": N. */
static double step_ns(const char *out)
{
  const char *p = strstr(out, "step time: ");
  g_assert_nonnull(p);
  p = strstr(p, " ms (");
  g_assert_nonnull(p);
  return g_ascii_strtod(p + 5, NULL);
}

/* collbench's all_reduce row for 1 MiB: its time (us, the sixth column)
 * and the algorithm text (the rest of the line after the eighth). */
static double collbench_us(const char *out, char **algo)
{
  const char *p = strstr(out, "\n       1048576 ");
  g_assert_nonnull(p);
  p++;
  double us = 0;
  for (int col = 0; col < 8; col++) {
    while (*p == ' ')
      p++;
    if (col == 5)
      us = g_ascii_strtod(p, NULL);
    p += strcspn(p, " \n");
  }
  while (*p == ' ')
    p++;
  *algo = g_strndup(p, strcspn(p, "\n"));
  return us;
}

static void test_same_files(void)
{
  const char *sd = g_getenv("WISP_SHARED_DATA");
  char *probe = sd ? g_build_filename(sd, "astrasim", "all_reduce", "8npus_1MB", "all_reduce.0.et", NULL) : NULL;
  if (!test_have_bin() || probe == NULL || !g_file_test(probe, G_FILE_TEST_EXISTS)) {
    if (g_getenv("WISP_BIN"))
      g_test_skip("WISP_SHARED_DATA/astrasim/all_reduce/8npus_1MB is absent");
    g_free(probe);
    return;
  }
  g_free(probe);
  char *et = g_build_filename(sd, "astrasim", "all_reduce", "8npus_1MB", "all_reduce", NULL);
  char *dir = g_dir_make_tmp("wisp-system-XXXXXX", NULL);
  char *net = write_file(dir, "net.yml", net2);
  char *sys = write_file(dir, "system.json",
                         "{\"scheduling-policy\": \"FIFO\", \"endpoint-delay\": 10, \"active-chunks-per-dimension\": 1,"
                         " \"preferred-dataset-splits\": 1, \"all-reduce-implementation\": [\"ring\", \"direct\"],"
                         " \"all-gather-implementation\": [\"ring\", \"ring\"],"
                         " \"reduce-scatter-implementation\": [\"ring\", \"ring\"],"
                         " \"all-to-all-implementation\": [\"direct\", \"direct\"],"
                         " \"collective-optimization\": \"localBWAware\", \"local-mem-bw\": 50, \"boost-mode\": 0}\n");
  for (int with = 1; with >= 0; with--) {
    char *sim = NULL, *cb = NULL, *algo = NULL;
    const char *sim_args[] = {"simulate", et, "--network", net, "--system", sys, NULL};
    const char *cb_args[] = {"collbench", "--network", net, "--sizes", "1M", "--op", "all_reduce", "--system", sys,
                             NULL};
    if (!with)
      sim_args[4] = NULL, cb_args[7] = NULL;
    g_assert_cmpint(test_wisp_run(sim_args, &sim), ==, 0);
    g_assert_cmpint(test_wisp_run(cb_args, &cb), ==, 0);
    double us = collbench_us(cb, &algo);
    g_test_message("%s the system file: collbench %.3f us (%s), simulate %.3f ns", with ? "with" : "without", us,
                   algo, step_ns(sim));
    if (with) /* the file's per-dimension list: ring on dim0 (reduce-scatter, all-gather), direct on dim1 */
      g_assert_cmpstr(algo, ==, "reduce_scatter:ring@dim0 > all_reduce:direct@dim1 > all_gather:ring@dim0");
    else
      g_assert_cmpstr(strstr(algo, "ring@dim0"), ==, NULL);
    /* One 1 MiB all-reduce per NPU and nothing else: the step is that
     * collective, to collbench's printed precision (3 decimals of us). */
    g_assert_cmpfloat(fabs(step_ns(sim) / 1e3 - us), <=, 0.0005 + 1e-9);
    g_free(sim), g_free(cb), g_free(algo);
  }
  test_rm_rf(dir);
  g_free(dir), g_free(et), g_free(net), g_free(sys);
}

/* Runs simulate with the system text; expects exit 1 and a message
 * "SYS: byte N: <what>" with N the offset of `at` in text (the first
 * occurrence after `after`). */
static void expect_error(const char *wl, const char *dir, const char *net_text, const char *text, const char *after,
                         const char *at, const char *what)
{
  char *net = write_file(dir, "net.yml", net_text), *sys = write_file(dir, "bad.json", text);
  char *err = NULL;
  int code = test_wisp_run_in(NULL, (const char *[]){"simulate", wl, "--network", net, "--system", sys, NULL}, NULL,
                              &err);
  g_assert_cmpint(code, ==, 1);
  const char *base = strstr(text, after);
  g_assert_nonnull(base);
  const char *p = strstr(base, at);
  g_assert_nonnull(p);
  char *want = g_strdup_printf("%s: byte %ld: %s", sys, (long)(p - text), what);
  test_expect_has(err, want);
  g_free(want), g_free(err), g_free(net), g_free(sys);
}

static void test_errors(void)
{
  if (!test_have_bin())
    return;
  char *dir = g_dir_make_tmp("wisp-system-XXXXXX", NULL), *wl = test_make_dp(dir, 8);
  /* An implementation ASTRA-sim and wisp do not know: the offset of its string. */
  expect_error(wl, dir, net1, "{\"all-reduce-implementation\": [\"ring\", \"hierarchicalMesh\"]}", "{",
               "\"hierarchicalMesh\"", "all-reduce-implementation: unknown implementation 'hierarchicalMesh'; use ring");
  /* Two entries for a one-dimension network: the offset of the list. */
  expect_error(wl, dir, net1, "{\"endpoint-delay\": 1, \"all-gather-implementation\": [\"ring\", \"ring\"]}",
               "all-gather", "[", "all-gather-implementation lists 2 implementations but the network");
  /* Splits out of range; a key given twice; an algorithm wisp does not
   * define for the collective (pairwise is all-to-all only). */
  expect_error(wl, dir, net1, "{\"preferred-dataset-splits\": 0}", "{", "0",
               "preferred-dataset-splits must be a whole number from 1 to 1024");
  expect_error(wl, dir, net1, "{\"boost-mode\": 0, \"boost-mode\": 1}", ", ", "\"boost-mode\"",
               "key 'boost-mode' is given twice");
  expect_error(wl, dir, net1, "{\"all-reduce-implementation\": [\"pairwise\"]}", "{", "\"pairwise\"",
               "all-reduce-implementation: 'pairwise' is not defined for all_reduce");
  expect_error(wl, dir, net1, "{\"scheduling-policy\": \"RANDOM\"}", "{", "\"RANDOM\"",
               "scheduling-policy must be one of LIFO, FIFO, EXPLICIT");
  /* Malformed JSON: the tokenizer's offset of the stray '}'. */
  expect_error(wl, dir, net1, "{\"boost-mode\": 0,}", ",", "}", "");
  test_rm_rf(dir);
  g_free(dir), g_free(wl);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/system/maps", test_maps);
  g_test_add_func("/system/astra-library", test_astra_library);
  g_test_add_func("/system/same-files", test_same_files);
  g_test_add_func("/system/errors", test_errors);
  return g_test_run();
}
