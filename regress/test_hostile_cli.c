/* test_hostile_cli.c: issue 28's probes end to end through the `wisp`
 * binary ($WISP_BIN, set by `make check`).  Each test is one probe a
 * hostile user ran against the build of the issue: huge sizes and factors
 * that reached engine assertions, fields of the wrong JSON type, outputs
 * that overwrote one another or an input, options whose out-of-range values
 * silently fell back to defaults.  Every check asserts that the process
 * exited normally (never killed by a signal: an assertion is SIGABRT or
 * SIGTRAP) with the documented status, and the message that names the
 * offending value; no expected figure comes from wisp's own output.
 *
 * Workloads are written by the test (Chakra through chakra/et_io.h, Kineto
 * JSON as text), nothing depends on ../shared/data.
 */
#include "config.h"

#include "chakra/et_io.h"
#include "regress/allreduce_et.h"
#include "regress/test_util.h"

#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <zlib.h>

/* Runs wisp and checks the exit status and that stderr holds `want`. */
static void expect_run(const char *cwd, const char *const *args, int status, const char *want)
{
  char *out = NULL, *err = NULL;
  int rc = test_wisp_run_in(cwd, args, &out, &err);
  if (rc != status)
    g_test_message("wisp %s %s: status %d, expected %d; stderr:\n%s", args[0], args[1] ? args[1] : "", rc, status,
                   err);
  g_assert_cmpint(rc, ==, status);
  if (want)
    test_expect_has(err, want);
  g_free(out);
  g_free(err);
}

static char *src_path(const char *rel)
{
  return g_build_filename(g_getenv("G_TEST_SRCDIR"), rel, NULL);
}

/* One rank's Kineto trace: ProfilerStep#1 over [0, 400) us, a gemm whose
 * "dur" is the JSON text `gemm_dur`, and an all-reduce kernel sized only by
 * its record_param_comms CPU op's Input Dims [[dims]] of float (4 bytes). */
static void write_kineto(const char *path, const char *gemm_dur, const char *dims)
{
  char *text = g_strdup_printf(
    "{\"distributedInfo\": {\"rank\": 0, \"world_size\": 1}, \"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 0, \"tid\": 1, \"ts\": 0, "
    "\"dur\": 400, \"args\": {}},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"pid\": 0, \"tid\": 1, \"ts\": 3, "
    "\"dur\": 3, \"args\": {\"External id\": 10, \"Input Dims\": [[%s]], \"Input type\": [\"float\"]}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 0, \"tid\": 1, \"ts\": 4, "
    "\"dur\": 1, \"args\": {\"correlation\": 4, \"External id\": 10}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned "
    "long, ncclWork*)\", \"pid\": 0, \"tid\": 20, \"ts\": 110, \"dur\": 50, \"args\": {\"stream\": 20, \"device\": 0, "
    "\"correlation\": 4, \"Collective name\": \"allreduce\", \"Process Group Name\": \"0\", "
    "\"Process Group Ranks\": \"[0]\"}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": 0, \"tid\": 7, \"ts\": 10, \"dur\": %s, "
    "\"args\": {\"stream\": 7, \"device\": 0}},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"profiler_stop\", \"pid\": 0, \"tid\": 1, \"ts\": 450, "
    "\"dur\": 10, \"args\": {}}]}\n", dims, gemm_dur);
  GError *error = NULL;
  g_assert_true(g_file_set_contents(path, text, -1, &error));
  g_free(text);
}

/* Items 1 and 2: a Chakra comm_size of 2^63 - 1 and of 2^62 (the issue's
 * build accepted both up to INT64_MAX; the first aborted in net.c
 * analytic_queue, the second simulated in the time of 2^61).  Now the
 * reader's range is the 2^50 bytes the engine represents: both are errors
 * naming the attribute, and 2^50 itself still simulates. */
static void test_chakra_huge_size(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL);
  test_write_allreduce(tmp, "max", 2, (uint64_t)INT64_MAX, 100);
  test_write_allreduce(tmp, "p62", 2, UINT64_C(1) << 62, 100);
  test_write_allreduce(tmp, "p50", 2, UINT64_C(1) << 50, 100);
  char *max = g_build_filename(tmp, "max", NULL), *p62 = g_build_filename(tmp, "p62", NULL);
  char *p50 = g_build_filename(tmp, "p50", NULL);
  expect_run(NULL, (const char *[]){"simulate", max, "--network", "dgx-h100", NULL}, 1,
             "attribute \"comm_size\" = 9223372036854775807 is out of range [0, 1125899906842624]");
  expect_run(NULL, (const char *[]){"simulate", p62, "--network", "dgx-h100", NULL}, 1,
             "attribute \"comm_size\" = 4611686018427387904 is out of range");
  /* 2^50 bytes over 2 ranks: about 2^50 / 450 GB/s ~ 2500 s, far inside the
   * 26.7 days the engine represents. */
  expect_run(NULL, (const char *[]){"simulate", p50, "--network", "dgx-h100", NULL}, 0, NULL);
  test_rm_rf(tmp);
  g_free(max);
  g_free(p62);
  g_free(p50);
  g_free(tmp);
}

/* Items 1, 2 and 4 on Kineto: Input Dims [[2^61]] and [[2^62]] floats
 * (2^63 and 2^64 bytes: the first aborted, the second wrapped to 0 bytes
 * silently), and a gemm whose "dur" is "abc" or whose "ts" is an array
 * (the kernel vanished, rc 0, even under --strict). */
static void test_kineto_sizes_and_types(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL);
  char *a = g_build_filename(tmp, "a.json", NULL);
  write_kineto(a, "100", "2305843009213693952");
  expect_run(NULL, (const char *[]){"simulate", a, "--network", "dgx-h100", NULL}, 1,
             "give 2305843009213693952 elements of float (4 bytes each), above the 2^50 bytes");
  write_kineto(a, "100", "4611686018427387904");
  expect_run(NULL, (const char *[]){"simulate", a, "--network", "dgx-h100", NULL}, 1,
             "give 4611686018427387904 elements of float (4 bytes each), above the 2^50 bytes");
  write_kineto(a, "\"abc\"", "1024");
  expect_run(NULL, (const char *[]){"simulate", a, "--network", "dgx-h100", NULL}, 1,
             "\"dur\" must be a number of microseconds, found a string");
  expect_run(NULL, (const char *[]){"simulate", a, "--network", "dgx-h100", "--strict", NULL}, 1,
             "\"dur\" must be a number of microseconds, found a string");
  /* "ts": [1, 2] on the same event: the "dur" slot is used for the
   * array, as the key order of the probe does not matter. */
  write_kineto(a, "[1, 2]", "1024");
  expect_run(NULL, (const char *[]){"simulate", a, "--network", "dgx-h100", NULL}, 1,
             "\"dur\" must be a number of microseconds, found an array");
  /* The probe as run: "ts": [1, 2] on a kernel; the error is at the
   * event's "ts" (byte 256 of this text). */
  const char *ts = "{\"distributedInfo\": {\"rank\": 0, \"world_size\": 1}, \"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 0, \"tid\": 1, "
    "\"ts\": 0, \"dur\": 400, \"args\": {}},\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", "
    "\"pid\": 0, \"tid\": 7, \"ts\": [1,2], \"dur\": 100, \"args\": {\"stream\": 7, \"device\": 0}}]}\n";
  g_assert_true(g_file_set_contents(a, ts, -1, NULL));
  g_assert_cmpint((int)(strstr(ts, "[1,2]") - ts), ==, 256);
  expect_run(NULL, (const char *[]){"simulate", a, "--network", "dgx-h100", NULL}, 1,
             "a.json: byte 256: \"ts\" must be a number of microseconds, found an array");
  /* The same trace with numbers simulates: 4096 bytes, a 100 us gemm. */
  write_kineto(a, "100", "1024");
  expect_run(NULL, (const char *[]){"simulate", a, "--network", "dgx-h100", NULL}, 0, NULL);
  test_rm_rf(tmp);
  g_free(a);
  g_free(tmp);
}

/* Item 3: slow-down factors that take a time past the engine's range
 * (1e308, 1e9 on a 100 us kernel = 10^5 s... and beyond, a lognormal of
 * sigma 1000) aborted in sim_post_after; now the run ends with an error
 * that names the range and the factors. */
static void test_slow_factors(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL);
  test_write_allreduce(tmp, "w", 2, 1 << 20, 100);
  char *w = g_build_filename(tmp, "w", NULL);
  const char *want = "the simulated time would pass 2^61 ps (about 26.7 days";
  expect_run(NULL, (const char *[]){"simulate", w, "--network", "dgx-h100", "--slow-rank", "0=1e308", NULL}, 1,
             want);
  /* 100 us x 1e13 = 10^9 s, past 2^61 ps = 2.3e6 s. */
  expect_run(NULL, (const char *[]){"simulate", w, "--network", "dgx-h100", "--slow-rank", "0=1e13", NULL}, 1,
             want);
  expect_run(NULL, (const char *[]){"simulate", w, "--network", "dgx-h100", "--slow-ranks",
                                    "lognormal:sigma=1000", NULL}, 1, want);
  /* 100 us x 1e9 = 10^5 s: inside the range, a (slow) answer. */
  expect_run(NULL, (const char *[]){"simulate", w, "--network", "dgx-h100", "--slow-rank", "0=1e9", NULL}, 0, NULL);
  test_rm_rf(tmp);
  g_free(w);
  g_free(tmp);
}

/* Item 3 in a sweep: a point whose compute factor is 1e-300 (every kernel
 * 10^300 times as long) aborted the whole sweep with no CSV.  Now it is an
 * error row; the other points and the CSV are still written, and the sweep
 * exits 1 (a point failed) after naming it. */
static void test_sweep_isolates_failure(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL);
  test_write_allreduce(tmp, "w", 2, 1 << 20, 100);
  char *spec = g_build_filename(tmp, "s.yaml", NULL), *w = g_build_filename(tmp, "w", NULL);
  char *out = g_build_filename(tmp, "out", NULL);
  const char *text = "sweep_version: 1\nname: iso\ncluster: dgx-h100\naxes:\n  - {key: compute, values: [1, 1e-300, 2]}\n";
  g_assert_true(g_file_set_contents(spec, text, -1, NULL));
  char *o = NULL, *e = NULL;
  int rc = test_wisp_run_in(NULL, (const char *[]){"sweep", spec, "--workload", w, "-o", out, "--jobs", "1", "--no-progress",
                                         NULL}, &o, &e);
  g_test_message("sweep stderr:\n%s", e);
  g_assert_cmpint(rc, ==, 1);
  test_expect_has(e, "point 1 (compute=1e-300): error:");
  char *csv_path = g_build_filename(out, "iso.csv", NULL), *csv = NULL;
  g_assert_true(g_file_get_contents(csv_path, &csv, NULL, NULL));
  /* Header + 3 rows; the middle one is the error, the others ok. */
  char **lines = g_strsplit(csv, "\n", -1);
  g_assert_cmpuint(g_strv_length(lines), ==, 5);
  g_assert_true(g_str_has_suffix(lines[1], ",ok"));
  test_expect_has(lines[2], "error");
  test_expect_has(lines[2], "2^61 ps");
  g_assert_true(g_str_has_suffix(lines[3], ",ok"));
  g_strfreev(lines);
  g_free(csv);
  g_free(csv_path);
  g_free(o);
  g_free(e);
  test_rm_rf(tmp);
  g_free(spec);
  g_free(w);
  g_free(out);
  g_free(tmp);
}

/* Item 5: --json X with --timeline X (or --svg ./X) silently let one
 * output overwrite the other; now a usage error before anything runs.
 * Two reports to /dev/null stay allowed. */
static void test_same_output(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL);
  test_write_allreduce(tmp, "w", 2, 1 << 20, 100);
  char *w = g_build_filename(tmp, "w", NULL);
  expect_run(tmp, (const char *[]){"simulate", w, "-n", "dgx-h100", "--json", "x", "--timeline", "x", NULL}, 2,
             "--json x and --timeline x name the same file");
  expect_run(tmp, (const char *[]){"simulate", w, "-n", "dgx-h100", "--json", "x", "--svg", "./x", NULL}, 2,
             "--json x and --svg ./x name the same file");
  char *x = g_build_filename(tmp, "x", NULL);
  g_assert_false(g_file_test(x, G_FILE_TEST_EXISTS));
  g_free(x);
  expect_run(tmp, (const char *[]){"simulate", w, "-n", "dgx-h100", "--json", "/dev/null", "--svg", "/dev/null",
                                   NULL}, 0, NULL);
  test_rm_rf(tmp);
  g_free(w);
  g_free(tmp);
}

/* Items 7 and 10: sweep-merge -o naming one of its shards overwrote it;
 * a shard whose CSV says 1.000 ns where its JSON line says otherwise was
 * merged.  Both are refused now. */
static void test_sweep_merge(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL);
  test_write_allreduce(tmp, "w", 2, 1 << 20, 100);
  char *spec = g_build_filename(tmp, "s.yaml", NULL), *w = g_build_filename(tmp, "w", NULL);
  const char *text = "sweep_version: 1\nname: m\ncluster: dgx-h100\naxes:\n  - {key: compute, values: [1, 2]}\n";
  g_assert_true(g_file_set_contents(spec, text, -1, NULL));
  expect_run(tmp, (const char *[]){"sweep", spec, "-w", w, "-o", "a", "--shard", "1/2", "--jobs", "1", "--no-progress",
                                   NULL}, 0, NULL);
  expect_run(tmp, (const char *[]){"sweep", spec, "-w", w, "-o", "b", "--shard", "2/2", "--jobs", "1", "--no-progress",
                                   NULL}, 0, NULL);
  char *shard_csv = g_build_filename(tmp, "a", "m.shard-1-of-2.csv", NULL), *before = NULL, *after = NULL;
  g_assert_true(g_file_get_contents(shard_csv, &before, NULL, NULL));
  expect_run(tmp, (const char *[]){"sweep-merge", "-o", "a/m.shard-1-of-2", "a/m.shard-1-of-2", "b/m.shard-2-of-2",
                                   NULL}, 1, "one of this run's inputs");
  g_assert_true(g_file_get_contents(shard_csv, &after, NULL, NULL));
  g_assert_cmpstr(before, ==, after);
  expect_run(tmp, (const char *[]){"sweep-merge", "-o", "m", "a/m.shard-1-of-2", "b/m.shard-2-of-2", NULL}, 0, NULL);
  /* Point 0's step_time_ns (column 3 after point, label? no label: point,
   * compute, step_time_ns) replaced by 1.000 in the CSV only. */
  char **lines = g_strsplit(before, "\n", -1);
  char **f = g_strsplit(lines[1], ",", -1);
  g_assert_cmpstr(f[0], ==, "0");
  GString *edited = g_string_new(lines[0]);
  g_string_append_c(edited, '\n');
  char **h = g_strsplit(lines[0], ",", -1);
  for (int i = 0; f[i]; i++) {
    g_string_append_printf(edited, "%s%s", i ? "," : "", strcmp(h[i], "step_time_ns") == 0 ? "1.000" : f[i]);
  }
  g_string_append_c(edited, '\n');
  g_assert_true(g_file_set_contents(shard_csv, edited->str, -1, NULL));
  expect_run(tmp, (const char *[]){"sweep-merge", "-o", "m2", "a/m.shard-1-of-2", "b/m.shard-2-of-2", NULL}, 1,
             "the shard's CSV and JSON lines disagree");
  g_string_free(edited, TRUE);
  g_strfreev(h);
  g_strfreev(f);
  g_strfreev(lines);
  g_free(before);
  g_free(after);
  g_free(shard_csv);
  test_rm_rf(tmp);
  g_free(spec);
  g_free(w);
  g_free(tmp);
}

/* Item 9: convert -p '../../escape' wrote the .et files outside the output
 * directory. */
static void test_convert_prefix(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL);
  char *a = g_build_filename(tmp, "a.json", NULL), *out = g_build_filename(tmp, "d", "e", NULL);
  write_kineto(a, "100", "1024");
  expect_run(NULL, (const char *[]){"convert", a, "-o", out, "-p", "../../escape", NULL}, 1,
             "prefix '../../escape': give a plain file name prefix");
  char *esc = g_build_filename(tmp, "escape.0.et", NULL);
  g_assert_false(g_file_test(esc, G_FILE_TEST_EXISTS));
  test_rm_rf(tmp);
  g_free(esc);
  g_free(a);
  g_free(out);
  g_free(tmp);
}

/* Item 12: out-of-range option values fell back to defaults silently. */
static void test_option_ranges(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL);
  test_write_allreduce(tmp, "w", 2, 1 << 20, 100);
  char *w = g_build_filename(tmp, "w", NULL), *a = g_build_filename(tmp, "a.json", NULL);
  write_kineto(a, "100", "1024");
  expect_run(NULL, (const char *[]){"simulate", w, "-n", "dgx-h100", "--check-baseline", "-5", NULL}, 2,
             "--check-baseline -5: give a percentage of 0 or more");
  expect_run(NULL, (const char *[]){"simulate", w, "-n", "dgx-h100", "--check-baseline", "nan", NULL}, 2,
             "--check-baseline nan: give a percentage of 0 or more");
  expect_run(NULL, (const char *[]){"simulate", w, "-n", "dgx-h100", "--max-rows", "-5", NULL}, 2,
             "--max-rows -5: give -1 (all) or a row count of 0 or more");
  expect_run(NULL, (const char *[]){"simulate", a, "-n", "dgx-h100", "--step", "-1", NULL}, 2,
             "--step -1: give a step number of 0 or more");
  expect_run(NULL, (const char *[]){"simulate", a, "-n", "dgx-h100", "--replicate-from", "99", NULL}, 1,
             "--replicate-from 99: not a list of traced ranks");
  /* dgx-h100: 8 GPUs x 4 nodes = 32 ranks (presets/dgx-h100.yaml). */
  expect_run(NULL, (const char *[]){"collbench", "--network", "dgx-h100", "--sizes", "1M", "--ranks", "0", NULL}, 2,
             "--ranks 0: give 1..32");
  expect_run(NULL, (const char *[]){"collbench", "--network", "dgx-h100", "--sizes", "1M", "--ranks", "-3", NULL}, 2,
             "--ranks -3: give 1..32");
  expect_run(NULL, (const char *[]){"collbench", "--network", "dgx-h100", "--sizes", "1M", "--chunks", "0", NULL}, 2,
             "--chunks 0: give 1..1024");
  char *spec = src_path("examples/ccl-bench-sweep.yaml");
  expect_run(tmp, (const char *[]){"sweep", spec, "-w", w, "--jobs", "-3", NULL}, 2, "--jobs -3: give a worker count");
  g_free(spec);
  test_rm_rf(tmp);
  g_free(w);
  g_free(a);
  g_free(tmp);
}

/* Item 13: a card with num_params 1e300 printed a 290-digit MFU. */
static void test_card_params(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL);
  char *a = g_build_filename(tmp, "a.json", NULL), *card = g_build_filename(tmp, "card.yaml", NULL);
  write_kineto(a, "100", "1024");
  const char *text = "version: 1\nworkload:\n  model:\n    phase: training\n    model_arch:\n      num_params: 1e300\n"
                     "      num_layers: 2\n      head_dim: 64\n      num_heads: 8\n  data:\n    batch_size: 1\n"
                     "    seq_len: 1024\n";
  g_assert_true(g_file_set_contents(card, text, -1, NULL));
  expect_run(NULL, (const char *[]){"simulate", a, "-n", "dgx-h100", "--card", card, NULL}, 1,
             "card.yaml:6: workload.model.model_arch.num_params: 1e+300 is out of range");
  test_rm_rf(tmp);
  g_free(a);
  g_free(card);
  g_free(tmp);
}

/* Item 13, second half: a 7e9-parameter card on a trace whose step is one
 * 100 us gemm inside a 400 us ProfilerStep.  The card's FLOPs per step are
 * about 6 x 7e9 x 4096 = 1.7e14, i.e. 4.3e17 FLOP/s over 400 us against one
 * H100's 989e12 dense peak: ~43,000 %, which the build printed as a
 * number.  Now the figure is withheld and the reason says the card does not
 * describe the trace (text and JSON, mfu_pct null). */
static void test_mfu_above_100(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL);
  char *a = g_build_filename(tmp, "a.json", NULL), *card = g_build_filename(tmp, "card.yaml", NULL);
  write_kineto(a, "100", "1024");
  const char *text = "version: 1\nworkload:\n  model:\n    phase: training\n    model_arch:\n      num_params: 7e9\n"
                     "      num_layers: 32\n      head_dim: 128\n      num_heads: 32\n  data:\n    batch_size: 1\n"
                     "    seq_len: 4096\n  hardware:\n    xpu_spec: {type: GPU, model: nvidia_h100, total_count: 1}\n";
  g_assert_true(g_file_set_contents(card, text, -1, NULL));
  char *out = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){"simulate", a, "-n", "dgx-h100", "--card", card, NULL}, &out), ==, 0);
  test_expect_has(out, "mfu: above 100 %: the card does not describe this trace");
  g_free(out);
  g_assert_cmpint(test_wisp_run((const char *[]){"metrics", a, "--card", card, "--json", "-", NULL}, &out), ==, 0);
  test_expect_has(out, "\"mfu_pct\": null");
  test_expect_has(out, "the card does not describe this trace");
  g_free(out);
  test_rm_rf(tmp);
  g_free(a);
  g_free(card);
  g_free(tmp);
}

/* Whether dir holds a file whose name contains `part`. */
static gboolean dir_has(const char *dir, const char *part)
{
  GDir *d = g_dir_open(dir, 0, NULL);
  gboolean found = FALSE;
  const char *name;
  while (d && !found && (name = g_dir_read_name(d)) != NULL)
    found = strstr(name, part) != NULL;
  if (d)
    g_dir_close(d);
  return found;
}

/* The child's SIGINT back to the default action: a test run in the
 * background of a non-interactive shell inherits SIGINT ignored, and wisp
 * keeps an ignored SIGINT ignored (as nohup expects). */
static void default_sigint(gpointer data)
{
  (void)data;
  signal(SIGINT, SIG_DFL);
}

/* Item 8: SIGINT or SIGTERM while `simulate --timeline` writes its
 * temporary file left a *.tmp.XXXXXX of tens of MB (exit 130 by SIGINT, the
 * temp stayed).  The test polls for the temp file every 0.2 ms, sends the
 * signal the moment it appears, and checks that wisp died of that signal
 * (a shell reports 128 + its number: 130, 143) and that no temp file is
 * left.  When the run finishes before the poll sees the file (a fast
 * machine), it retries with a larger --scale; losing every race leaves the
 * test incomplete, not passed. */
static void test_signal_removes_temp(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL);
  test_write_allreduce(tmp, "w", 8, 1 << 20, 100);
  static const int sigs[] = {SIGTERM, SIGINT};
  for (guint s = 0; s < G_N_ELEMENTS(sigs); s++) {
    gboolean caught = FALSE;
    for (int dp = 32; dp <= 512 && !caught; dp *= 2) {
      char *scale = g_strdup_printf("dp=%d", dp);
      const char *argv[] = {g_getenv("WISP_BIN"), "simulate", "w", "-n", "dgx-h100", "--timeline", "t.json", "--scale",
                            scale, NULL};
      GPid pid;
      GError *error = NULL;
      g_assert_true(g_spawn_async(tmp, (char **)argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL |
                                  G_SPAWN_STDERR_TO_DEV_NULL, default_sigint, NULL, &pid, &error));
      int status = 0;
      for (;;) {
        if (dir_has(tmp, "t.json.tmp.")) {
          kill(pid, sigs[s]);
          caught = TRUE;
          break;
        }
        if (waitpid(pid, &status, WNOHANG) == pid)
          break; /* finished first: retry larger */
        g_usleep(200);
      }
      if (caught) {
        g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
        g_assert_true(WIFSIGNALED(status));
        g_assert_cmpint(WTERMSIG(status), ==, sigs[s]);
        g_assert_false(dir_has(tmp, ".tmp."));
      }
      g_spawn_close_pid(pid);
      g_free(scale);
    }
    if (!caught)
      g_test_incomplete("every run finished before its temporary timeline file was seen");
  }
  test_rm_rf(tmp);
  g_free(tmp);
}

/* Item 8, second half: --resume after a kill -9 left the killed worker's
 * P<point>.row.tmp.XXXXXX in the points directory forever.  --resume now
 * removes the names it recognises (and says so) and keeps anything else. */
static void test_resume_orphans(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL);
  test_write_allreduce(tmp, "w", 2, 1 << 20, 100);
  char *spec = g_build_filename(tmp, "s.yaml", NULL);
  const char *text = "sweep_version: 1\nname: r\ncluster: dgx-h100\naxes:\n  - {key: compute, values: [1, 2]}\n";
  g_assert_true(g_file_set_contents(spec, text, -1, NULL));
  expect_run(tmp, (const char *[]){"sweep", spec, "-w", "w", "-o", "o", "--jobs", "1", "--no-progress", NULL}, 0, NULL);
  char *orphan = g_build_filename(tmp, "o", "r.points", "P0000001.row.tmp.Ab3xYz", NULL);
  char *other = g_build_filename(tmp, "o", "r.points", "notes.txt", NULL);
  g_assert_true(g_file_set_contents(orphan, "{\"point\": 1,", -1, NULL));
  g_assert_true(g_file_set_contents(other, "mine", -1, NULL));
  char *out = NULL, *err = NULL;
  g_assert_cmpint(test_wisp_run_in(tmp, (const char *[]){"sweep", spec, "-w", "w", "-o", "o", "--jobs", "1", "--no-progress",
                                                "--resume", NULL}, &out, &err), ==, 0);
  test_expect_has(out, "removed 1 temporary point file(s) a killed run left behind");
  g_assert_false(g_file_test(orphan, G_FILE_TEST_EXISTS));
  g_assert_true(g_file_test(other, G_FILE_TEST_EXISTS));
  g_free(out);
  g_free(err);
  g_free(orphan);
  g_free(other);
  g_free(spec);
  test_rm_rf(tmp);
  g_free(tmp);
}

/* Item 15: a damaged .json.gz was reported at "byte 0" with zlib's
 * "<fd:3>" for a name.  The test deflates 1.2 MiB of a valid trace, makes a
 * full flush (which ends on a byte boundary), records that compressed
 * offset P and deflates the rest; then byte P, the next block's header, is
 * set to 0x07 (final block of the reserved type 3), which zlib must refuse
 * ("invalid block type").  The text before P is intact, so the reader gets
 * its first 1 MiB buffer and fails on the second: the error names the file,
 * the text offset reached (1048576) and a compressed offset within zlib's
 * 8 KiB input buffer past P. */
static void test_gzip_corrupt(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL);
  char *path = g_build_filename(tmp, "damaged.json.gz", NULL);
  GString *text = g_string_new("{\"distributedInfo\": {\"rank\": 0, \"world_size\": 1}, \"traceEvents\": [\n");
  for (int i = 0; text->len < 1258291; i++) /* 1.2 MiB of instant events */
    g_string_append_printf(text, "{\"ph\": \"i\", \"name\": \"mark%d\", \"pid\": 0, \"tid\": 1, \"ts\": %d},\n", i, i);
  size_t cut = text->len;
  g_string_append(text, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": 0, \"tid\": 7, \"ts\": 1, "
                        "\"dur\": 2, \"args\": {\"stream\": 7}}]}\n");
  z_stream zs = {0};
  g_assert_cmpint(deflateInit2(&zs, 1, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), ==, Z_OK);
  size_t cap = deflateBound(&zs, text->len) + 64;
  guint8 *gz = g_malloc(cap);
  zs.next_out = gz;
  zs.avail_out = (uInt)cap;
  zs.next_in = (Bytef *)text->str;
  zs.avail_in = (uInt)cut;
  g_assert_cmpint(deflate(&zs, Z_FULL_FLUSH), ==, Z_OK);
  size_t flush_at = zs.total_out;
  zs.avail_in = (uInt)(text->len - cut);
  g_assert_cmpint(deflate(&zs, Z_FINISH), ==, Z_STREAM_END);
  size_t total = zs.total_out;
  deflateEnd(&zs);
  gz[flush_at] = 0x07;
  g_assert_true(g_file_set_contents(path, (const char *)gz, (gssize)total, NULL));
  char *err = NULL;
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"simulate", path, "-n", "dgx-h100", NULL}, NULL, &err), ==, 1);
  test_expect_has(err, "damaged.json.gz: byte 1048576: corrupt gzip data after this byte of the text, near compressed "
                       "byte ");
  test_expect_has(err, "(zlib: invalid block type); the file is damaged: re-copy it");
  g_assert_null(strstr(err, "<fd:"));
  long long near = g_ascii_strtoll(strstr(err, "near compressed byte ") + strlen("near compressed byte "), NULL, 10);
  g_assert_cmpint(near, >=, (long long)flush_at);
  g_assert_cmpint(near, <=, (long long)flush_at + 8192 + 1);
  g_free(err);
  g_free(gz);
  g_string_free(text, TRUE);
  test_rm_rf(tmp);
  g_free(path);
  g_free(tmp);
}

/* Item 15: arrays nested past the JSON reader's 1000 levels were called
 * "not valid JSON".  A PyTorch execution trace ("nodes") and a diff report
 * 1500 levels deep now say nesting; a plain syntax error still says
 * "not valid JSON". */
static void test_json_too_deep(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL);
  char *et = g_build_filename(tmp, "deep.json", NULL), *rep = g_build_filename(tmp, "rep.json", NULL);
  char *bad = g_build_filename(tmp, "bad.json", NULL);
  char *open_ = g_strnfill(1500, '['), *close_ = g_strnfill(1500, ']');
  char *t1 = g_strconcat("{\"schema\": \"1.0.1\", \"nodes\": [", open_, close_, "]}", NULL);
  char *t2 = g_strconcat("{\"schema_version\": 1, \"x\": ", open_, close_, "}", NULL);
  g_assert_true(g_file_set_contents(et, t1, -1, NULL));
  g_assert_true(g_file_set_contents(rep, t2, -1, NULL));
  g_assert_true(g_file_set_contents(bad, "{\"schema_version\": 1, \"x\": [}", -1, NULL));
  expect_run(NULL, (const char *[]){"simulate", et, "-n", "dgx-h100", NULL}, 1,
             "arrays and objects nested deeper than 1000 levels, the JSON reader's limit");
  expect_run(NULL, (const char *[]){"diff", rep, rep, NULL}, 1,
             "rep.json: arrays and objects nested deeper than the JSON reader's limit of 1000 levels");
  expect_run(NULL, (const char *[]){"diff", bad, bad, NULL}, 1, "bad.json: not valid JSON (error near byte 28)");
  /* wisp report, and a Chakra workload's group file (--comm-group), 1500
   * levels deep too; the group file's message gives the byte where cJSON
   * stopped, and says what the file should hold. */
  char *html = g_build_filename(tmp, "r.html", NULL), *groups = g_build_filename(tmp, "g.json", NULL);
  char *t3 = g_strconcat("{\"1\": ", open_, close_, "}", NULL);
  g_assert_true(g_file_set_contents(groups, t3, -1, NULL));
  expect_run(NULL, (const char *[]){"report", rep, "-o", html, NULL}, 1,
             "rep.json: arrays and objects nested deeper than the JSON reader's limit of 1000 levels, which no file "
             "of wisp's holds");
  g_assert_false(g_file_test(html, G_FILE_TEST_EXISTS));
  test_write_allreduce(tmp, "w", 2, 1024, 100);
  char *w = g_build_filename(tmp, "w", NULL), *err = NULL;
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"simulate", w, "-n", "dgx-h100", "--comm-group", groups,
                                                          NULL}, NULL, &err), ==, 1);
  test_expect_has(err, "g.json: byte ");
  test_expect_has(err, ": arrays and objects nested deeper than 1000 levels, the JSON reader's limit; a group file is "
                       "one object of flat lists");
  g_assert_null(strstr(err, "not a JSON object"));
  g_free(err);
  g_free(w);
  g_free(t3);
  g_free(html);
  g_free(groups);
  g_free(t1);
  g_free(t2);
  g_free(open_);
  g_free(close_);
  test_rm_rf(tmp);
  g_free(et);
  g_free(rep);
  g_free(bad);
  g_free(tmp);
}

/* Found by fuzz_kineto_num: an all_to_allv whose "In split size" entries
 * sum past 2^63 - 1 overflowed a signed sum (UBSan: signed integer
 * overflow in comm_splits).  The list cannot describe the 8 elements it
 * claims to split, so the collective is taken as a uniform all-to-all and
 * the list is counted as skipped; under the sanitizer build of the suite
 * the old sum fails this test. */
static void test_kineto_split_overflow(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL);
  char *path = g_build_filename(tmp, "r0.json", NULL);
  const char *trace =
    "{\"distributedInfo\":{\"rank\":0,\"world_size\":2},\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\","
    "\"name\":\"ncclDevKernel_SendRecv\",\"pid\":0,\"tid\":7,\"ts\":1,\"dur\":2,\"args\":{\"Collective name\":"
    "\"all_to_allv\",\"In msg nelems\":8,\"dtype\":\"Long\",\"Process Group Ranks\":\"[0, 1]\","
    "\"In split size\":\"[9223372036854775807, 4]\"}}]}";
  g_assert_true(g_file_set_contents(path, trace, -1, NULL));
  char *out = NULL, *err = NULL;
  int rc = test_wisp_run_in(NULL, (const char *[]){"inspect", "--verbose", path, NULL}, &out, &err);
  g_assert_cmpint(rc, ==, 0);
  test_expect_has(out, "all_to_allv split list out of range (uniform split assumed)");
  g_free(out);
  g_free(err);
  test_rm_rf(tmp);
  g_free(path);
  g_free(tmp);
}

/* Found by fuzz_kineto_num: a kernel at ts 2^63 - 2 us made the trace-end
 * bookkeeping add its duration past INT64_MAX (UBSan: signed integer
 * overflow in kineto_classify.c kt_p_finish_event).  An event that is its own
 * origin is representable, so the one-kernel trace loads: 1 kernel,
 * 0.002 ms measured (its 2 us); the sanitizer build of the suite fails on
 * the old addition. */
static void test_kineto_ts_overflow(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL);
  char *path = g_build_filename(tmp, "r0.json", NULL);
  const char *trace = "{\"distributedInfo\":{\"rank\":0,\"world_size\":1},\"traceEvents\":[{\"ph\":\"X\","
                      "\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":9223372036854775806,"
                      "\"dur\":2,\"args\":{\"stream\":7}}]}";
  g_assert_true(g_file_set_contents(path, trace, -1, NULL));
  char *out = NULL, *err = NULL;
  int rc = test_wisp_run_in(NULL, (const char *[]){"inspect", path, NULL}, &out, &err);
  g_assert_cmpint(rc, ==, 0);
  test_expect_has(out, "0.002   100.0        1");
  g_free(out);
  g_free(err);
  test_rm_rf(tmp);
  g_free(path);
  g_free(tmp);
}

/* Item 15: after an XPlane read error, inspect printed its statistics
 * ("xla: 5 bytes read, 0 events ...") as if the profile had been read.
 * A 5-byte profile whose first field declares 2^25 - 1 bytes: the error
 * alone, nothing on standard output, for inspect and convert. */
static void test_xplane_error_alone(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL);
  char *path = g_build_filename(tmp, "t.xplane.pb", NULL), *dir = g_build_filename(tmp, "out", NULL);
  g_assert_true(g_file_set_contents(path, "\x0a\xff\xff\xff\x0f", 5, NULL));
  char *out = NULL, *err = NULL;
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"inspect", path, NULL}, &out, &err), ==, 1);
  test_expect_has(err, "t.xplane.pb: byte 0: field 1 declares 33554431 bytes but only 0 remain");
  g_assert_cmpstr(out, ==, "");
  g_free(out);
  g_free(err);
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"convert", path, "-o", dir, NULL}, &out, &err), ==, 1);
  g_assert_null(strstr(err, "bytes read"));
  g_free(out);
  g_free(err);
  test_rm_rf(tmp);
  g_free(path);
  g_free(dir);
  g_free(tmp);
}

/* Item 15: `sweep --list` must check the spec's keys and values as a run
 * does (the issue saw it list points with keys no run accepts). */
static void test_sweep_list_validates(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL);
  char *spec = g_build_filename(tmp, "s.yaml", NULL);
  g_assert_true(g_file_set_contents(spec, "sweep_version: 1\nname: s\ncluster: dgx-h100\naxes:\n"
                                    "  - {key: bogus_key, values: [1, 2]}\n  - {key: compute, values: [1, -2]}\n",
                                    -1, NULL));
  char *out = NULL, *err = NULL;
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"sweep", spec, "--list", NULL}, &out, &err), ==, 1);
  test_expect_has(err, "s.yaml:5: axis bogus_key: 1: unknown topology key 'bogus_key'");
  test_expect_has(err, "s.yaml:6: axis compute: -2: compute: the speedup must be a number > 0");
  g_assert_cmpstr(out, ==, ""); /* no point is listed */
  g_free(out);
  g_free(err);
  test_rm_rf(tmp);
  g_free(spec);
  g_free(tmp);
}

/* Item 15: the cycle error advised "load it with cycle breaking", an option
 * no command has.  A hand-made one-rank .et (wisp's builder refuses cycles,
 * so the protobuf bytes are written here): metadata {version "0.0.4"},
 * then two compute nodes, id 1 with ctrl_deps [2] and id 2 with ctrl_deps
 * [1], each framed by its varint length (Chakra's file format). */
static void test_chakra_cycle(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL);
  char *path = g_build_filename(tmp, "c.0.et", NULL), *prefix = g_build_filename(tmp, "c", NULL);
  static const char bytes[] = "\x07\x0a\x05" "0.0.4"                           /* GlobalMetadata.version */
                              "\x0c\x08\x01\x12\x01" "a" "\x18\x04\x22\x01\x02\x38\x0a" /* id 1, COMP, ctrl 2, 10 us */
                              "\x0c\x08\x02\x12\x01" "b" "\x18\x04\x22\x01\x01\x38\x0a"; /* id 2, COMP, ctrl 1 */
  g_assert_true(g_file_set_contents(path, bytes, sizeof bytes - 1, NULL));
  char *err = NULL;
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"simulate", prefix, "-n", "dgx-h100", NULL}, NULL, &err), ==, 1);
  test_expect_has(err, "c.0.et: the dependencies form a cycle of 2 node(s) through node ids 1 -> 2 -> 1");
  test_expect_has(err, "remove one data or control dependency along the cycle");
  g_assert_null(strstr(err, "cycle breaking"));
  g_free(err);
  test_rm_rf(tmp);
  g_free(path);
  g_free(prefix);
  g_free(tmp);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/hostile/chakra_huge_size", test_chakra_huge_size);
  g_test_add_func("/hostile/kineto_sizes_and_types", test_kineto_sizes_and_types);
  g_test_add_func("/hostile/slow_factors", test_slow_factors);
  g_test_add_func("/hostile/sweep_isolates_failure", test_sweep_isolates_failure);
  g_test_add_func("/hostile/same_output", test_same_output);
  g_test_add_func("/hostile/sweep_merge", test_sweep_merge);
  g_test_add_func("/hostile/convert_prefix", test_convert_prefix);
  g_test_add_func("/hostile/option_ranges", test_option_ranges);
  g_test_add_func("/hostile/card_params", test_card_params);
  g_test_add_func("/hostile/mfu_above_100", test_mfu_above_100);
  g_test_add_func("/hostile/gzip_corrupt", test_gzip_corrupt);
  g_test_add_func("/hostile/json_too_deep", test_json_too_deep);
  g_test_add_func("/hostile/kineto_split_overflow", test_kineto_split_overflow);
  g_test_add_func("/hostile/kineto_ts_overflow", test_kineto_ts_overflow);
  g_test_add_func("/hostile/xplane_error_alone", test_xplane_error_alone);
  g_test_add_func("/hostile/sweep_list_validates", test_sweep_list_validates);
  g_test_add_func("/hostile/chakra_cycle", test_chakra_cycle);
  g_test_add_func("/hostile/signal_removes_temp", test_signal_removes_temp);
  g_test_add_func("/hostile/resume_orphans", test_resume_orphans);
  return g_test_run();
}
