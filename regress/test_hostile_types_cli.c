/* test_hostile_types_cli.c: issue 28's typed reading (what-to-build item
 * 2) end to end through the `wisp` binary ($WISP_BIN, set by `make
 * check`): values of the wrong JSON or SQLite type, or outside the range
 * wisp represents, in the trace files themselves.  A value of the wrong
 * type is an error naming the file, the place and the field, or, where
 * the format allows it, a counted and reported skip that --strict makes an
 * error; never a silent drop or a wrapped time.  Each check asserts the
 * exit status (a signal is a failure) and the message; the good answers
 * beside them come from the inputs' own arithmetic, written next to the
 * check.  (Sizes are in test_hostile_input_cli.c, the other probes in
 * test_hostile_cli.c.)
 */
#include "config.h"

#include "regress/test_sqlite.h"
#include "regress/test_util.h"

#include <glib/gstdio.h>
#include <string.h>

/* Runs wisp; checks the status and that stderr holds want (when given);
 * returns stdout (g_free). */
static char *expect_run(const char *const *args, int status, const char *want)
{
  char *out = NULL, *err = NULL;
  int rc = test_wisp_run_in(NULL, args, &out, &err);
  if (rc != status)
    g_test_message("wisp %s: status %d, expected %d; stderr:\n%s", args[0], rc, status, err);
  g_assert_cmpint(rc, ==, status);
  if (want)
    test_expect_has(err, want);
  g_free(err);
  return out;
}

/* A one-rank Kineto trace: ProfilerStep#1 over [0, 400) us, a 100 us gemm
 * at 10 us, profiler_stop at 450 us, and `extra` (JSON text) between the
 * step and the gemm. */
static char *kineto_text(const char *extra)
{
  return g_strdup_printf(
    "{\"distributedInfo\": {\"rank\": 0, \"world_size\": 1}, \"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 0, \"tid\": 1, \"ts\": 0, "
    "\"dur\": 400, \"args\": {}},\n%s"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": 0, \"tid\": 7, \"ts\": 10, \"dur\": 100, "
    "\"args\": {\"stream\": 7, \"device\": 0}},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"profiler_stop\", \"pid\": 0, \"tid\": 1, \"ts\": 450, "
    "\"dur\": 10, \"args\": {}}]}\n", extra);
}

/* traceEvents entries that are not objects (42, "x", [1, 2], null) were
 * counted as skipped but said nowhere outside `inspect --verbose`, and
 * --strict accepted them.  Now a warning with the count, the first one's
 * byte and type, and an error under --strict.  The events around them
 * still replay: the step window [0, 400) us is the step time, 0.4 ms. */
static void test_kineto_non_object_entries(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL), *a = g_build_filename(tmp, "a.json", NULL);
  char *text = kineto_text("42, \"x\", [1, 2], null,\n");
  g_assert_true(g_file_set_contents(a, text, -1, NULL));
  int at = (int)(strstr(text, "42,") - text);
  char *warn = g_strdup_printf("a.json: 4 traceEvents entries are not an event object, skipped (the first at byte "
                               "%d is a number); --strict makes this an error", at);
  char *out = expect_run((const char *[]){"simulate", a, "-n", "dgx-h100", NULL}, 0, warn);
  test_expect_has(out, "step time: 0.40000 ms (400000.000 ns)");
  g_free(out);
  char *strict = g_strdup_printf("--strict: %s: byte %d: a traceEvents entry is a number, not an event object (4 "
                                 "such entries)", a, at);
  g_free(expect_run((const char *[]){"simulate", a, "-n", "dgx-h100", "--strict", NULL}, 1, strict));
  g_free(text);
  g_free(warn);
  g_free(strict);
  /* One entry, a string: the singular, and its type. */
  text = kineto_text("\"x\",\n");
  g_assert_true(g_file_set_contents(a, text, -1, NULL));
  at = (int)(strstr(text, "\"x\",") - text);
  warn = g_strdup_printf("a.json: 1 traceEvents entry is not an event object, skipped (the first at byte %d is a "
                         "string)", at);
  g_free(expect_run((const char *[]){"simulate", a, "-n", "dgx-h100", NULL}, 0, warn));
  g_free(expect_run((const char *[]){"simulate", a, "-n", "dgx-h100", "--strict", NULL}, 1,
                    "a traceEvents entry is a string, not an event object (1 such entry)"));
  g_free(text);
  g_free(warn);
  /* None: no warning, and --strict accepts the trace. */
  text = kineto_text("");
  g_assert_true(g_file_set_contents(a, text, -1, NULL));
  char *err = NULL;
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"simulate", a, "-n", "dgx-h100", "--strict", NULL}, NULL,
                                   &err), ==, 0);
  g_assert_null(strstr(err, "traceEvents entr"));
  g_free(err);
  g_free(text);
  test_rm_rf(tmp);
  g_free(a);
  g_free(tmp);
}

/* distributedInfo.rank and .world_size of the wrong type were dropped: a
 * world_size of "abc" or 1e300 led to the warning "no
 * distributedInfo.world_size in any file" (the trace has one) and --strict
 * accepted the inferred size; a rank of 0.5 was "no rank".  Each is now an
 * error at the value's byte.  A string holding an integer ("0") and null
 * (absent) read as before. */
static void test_kineto_dist_info(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL), *a = g_build_filename(tmp, "a.json", NULL);
  const struct { const char *info, *key, *want; } bad[] = { /* key: the text before the value (its byte) */
    {"{\"rank\": 0, \"world_size\": \"abc\"}", "\"world_size\": ",
     "distributedInfo.world_size is a string 'abc', not an integer"},
    {"{\"rank\": 0, \"world_size\": 1e300}", "\"world_size\": ",
     "distributedInfo.world_size is a number '1e300', not an integer"},
    {"{\"rank\": 0.5, \"world_size\": 1}", "\"rank\": ", "distributedInfo.rank is a number '0.5', not an integer"},
    {"{\"rank\": [0], \"world_size\": 1}", "\"rank\": ", "distributedInfo.rank must be an integer, found an array"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
    char *body = kineto_text(""), *text = g_strdup_printf("{\"distributedInfo\": %s, %s", bad[i].info,
                                                          strstr(body, "\"traceEvents\""));
    g_assert_true(g_file_set_contents(a, text, -1, NULL));
    const char *at = strstr(text, bad[i].key) + strlen(bad[i].key);
    char *want = g_strdup_printf("a.json: byte %d: %s", (int)(at - text), bad[i].want);
    g_free(expect_run((const char *[]){"simulate", a, "-n", "dgx-h100", NULL}, 1, want));
    g_free(want);
    g_free(text);
    g_free(body);
  }
  const char *good[] = {"{\"rank\": \"0\", \"world_size\": 1}", "{\"rank\": 0, \"world_size\": null}"};
  for (guint i = 0; i < G_N_ELEMENTS(good); i++) {
    char *body = kineto_text(""), *text = g_strdup_printf("{\"distributedInfo\": %s, %s", good[i],
                                                          strstr(body, "\"traceEvents\""));
    g_assert_true(g_file_set_contents(a, text, -1, NULL));
    char *out = expect_run((const char *[]){"simulate", a, "-n", "dgx-h100", NULL}, 0, NULL);
    test_expect_has(out, "step time: 0.40000 ms (400000.000 ns)");
    g_free(out);
    g_free(text);
    g_free(body);
  }
  test_rm_rf(tmp);
  g_free(a);
  g_free(tmp);
}

/* An all-reduce kernel whose "In msg nelems" is the JSON text `in` and
 * whose "Out msg nelems" is 1024 floats, in kineto_text's step. */
static char *nelems_text(const char *in)
{
  char *ev = g_strdup_printf("{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce_Sum_f32_RING_LL"
                             "(ncclDevComm*, unsigned long, ncclWork*)\", \"pid\": 0, \"tid\": 20, \"ts\": 120, "
                             "\"dur\": 50, \"args\": {\"stream\": 20, \"device\": 0, \"Collective name\": "
                             "\"allreduce\", \"In msg nelems\": %s, \"Out msg nelems\": 1024, \"dtype\": \"Float\", "
                             "\"Process Group Name\": \"0\", \"Process Group Ranks\": \"[0]\"}},\n", in);
  char *text = kineto_text(ev);
  g_free(ev);
  return text;
}

/* "In msg nelems" of the wrong type ("abc", 1e300, 2.5, [1]) passed for
 * absent, and the kernel was sized by its "Out msg nelems": right for an
 * all-reduce, n times the shard for an all-gather, silently.  Now it is
 * no size, as a negative count already was: the rank's warning counts the
 * kernel, it replays at its measured time, and --strict refuses it.  A
 * count in a string ("1024") and null (absent: Out sizes it) read as
 * before: 1024 floats = 4096 B. */
static void test_kineto_msg_nelems(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL), *a = g_build_filename(tmp, "a.json", NULL);
  const char *bad[] = {"\"abc\"", "1e300", "2.5", "[1]"};
  for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
    char *text = nelems_text(bad[i]);
    g_assert_true(g_file_set_contents(a, text, -1, NULL));
    g_free(expect_run((const char *[]){"simulate", a, "-n", "dgx-h100", NULL}, 0,
                      "rank 0: 1 communication kernel(s) have no size"));
    g_free(expect_run((const char *[]){"simulate", a, "-n", "dgx-h100", "--strict", NULL}, 1,
                      "--strict: all_reduce #0 of group 1 (pg \"0\", ranks 0) has no size on rank 0"));
    g_free(text);
  }
  const char *good[] = {"\"1024\"", "null"};
  for (guint i = 0; i < G_N_ELEMENTS(good); i++) {
    char *text = nelems_text(good[i]);
    g_assert_true(g_file_set_contents(a, text, -1, NULL));
    char *out = expect_run((const char *[]){"simulate", a, "-n", "dgx-h100", "--strict", NULL}, 0, NULL);
    test_expect_has(out, "for 1 collective of 4096 B");
    g_free(out);
    g_free(text);
  }
  test_rm_rf(tmp);
  g_free(a);
  g_free(tmp);
}

/* test_nsys_export's one-kernel export (a 100 us kernel [1000, 101000] ns
 * on device 0), with NVTX step ranges `markers` (SQL rows of start, end,
 * text; NULL for none) and the NVLink TX samples `samples` (SQL rows of
 * timestamp and value; NULL for none) of the counter bw_peertopeer reads. */
static void write_export(const char *path, const char *markers, const char *samples)
{
  GString *sql = g_string_new("");
  if (markers)
    g_string_append_printf(sql, "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, text TEXT, textId INTEGER);"
                           "INSERT INTO NVTX_EVENTS (start, end, text) VALUES %s;", markers);
  if (samples)
    g_string_append_printf(sql, "CREATE TABLE TARGET_INFO_GPU_METRICS (typeId INTEGER, metricId INTEGER, "
                           "metricName TEXT);"
                           "INSERT INTO TARGET_INFO_GPU_METRICS VALUES (256, 5, "
                           "'NVLink TX Responses User Data [Throughput %%]');"
                           "CREATE TABLE GPU_METRICS (timestamp INTEGER, typeId INTEGER, metricId INTEGER, "
                           "value INTEGER);"
                           "INSERT INTO GPU_METRICS (timestamp, value) VALUES %s;"
                           "UPDATE GPU_METRICS SET typeId = 256, metricId = 5;", samples);
  test_nsys_export(path, sql->str);
  g_string_free(sql, TRUE);
}

/* GPU metric samples (nsys_facts.c) turned their timestamps into ps
 * unchecked: a timestamp of 2^61 + 50000 + 1000 ns wrapped (1000 x (2^61 +
 * 50000) = 5 x 10^7 + 125 x 2^64 ps) onto 50 us, inside the kernel's window,
 * and `metrics` answered bw_peertopeer 50.00 % from it, status 0; text and
 * NULL read as 0 and the sample silently fell outside the window; a value
 * of 1e308 printed a 300-digit percentage.  Each is now an error naming
 * the table, the device and the field.  Good samples: 10 at 50000 ns and
 * 90 at 60000 ns, both in the window [1000, 101000] ns: (10 + 90) / 2 =
 * 50.00 %; a timestamp of exactly 2^61 / 1000 ns is accepted (outside the
 * window: 10.00 %), one more is refused. */
static void test_nsys_metric_samples(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL), *db = g_build_filename(tmp, "n.sqlite", NULL);
  const struct { const char *row, *want; } bad[] = {
    {"(2305843009213744952, 90)", "timestamp is '2305843009213744952', not a time in ns from 0 to 2305843009213693"},
    {"(9223372036854775807, 90)", "timestamp is '9223372036854775807', not a time in ns"},
    {"(-1, 90)", "timestamp is '-1', not a time in ns"},
    {"('abc', 90)", "timestamp is 'abc', not a time in ns"},
    {"(NULL, 90)", "timestamp is NULL, not a time in ns"},
    {"(2305843009213694, 90)", "timestamp is '2305843009213694', not a time in ns"},
    {"(60000, 'abc')", "value is 'abc', not a throughput percentage (a number from 0 to 100)"},
    {"(60000, -5)", "value is '-5', not a throughput percentage"},
    {"(60000, 100.5)", "value is '100.5', not a throughput percentage"},
    {"(60000, 1e308)", "value is '1.0e+308', not a throughput percentage"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
    char *rows = g_strdup_printf("(50000, 10), %s", bad[i].row);
    write_export(db, NULL, rows);
    g_free(expect_run((const char *[]){"metrics", db, NULL}, 1, bad[i].want));
    g_free(expect_run((const char *[]){"metrics", db, NULL}, 1,
                      "n.sqlite: table GPU_METRICS, a sample of device 0 (NVLink TX Responses User Data"));
    g_free(rows);
  }
  const struct { const char *rows, *want; } good[] = {
    {"(50000, 10), (60000, 90)", "bw_peertopeer (%)                          50.00"},
    {"(50000, 10), (2305843009213693, 90)", "bw_peertopeer (%)                          10.00"},
    {"(50000, 10), (60000, 100)", "bw_peertopeer (%)                          55.00"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(good); i++) {
    write_export(db, NULL, good[i].rows);
    char *out = expect_run((const char *[]){"metrics", db, NULL}, 0, NULL);
    test_expect_has(out, good[i].want);
    g_free(out);
  }
  test_rm_rf(tmp);
  g_free(db);
  g_free(tmp);
}

/* NVTX step ranges (nsys_steps.c) gave the device's clock origin
 * unchecked: a ProfilerStep#1 starting at -2^62 ns wrapped every time
 * (1000 x 2^62 = 250 x 2^64 ps, so the kernel still started at 1 us) and
 * simulate answered a measured step of 0.2 ms, status 0; an end of 2^63 - 1
 * lost the measured step; a text start failed the SQL filter and the
 * step was silently ignored.  Each is now an error naming the range and
 * the field.  The good range [500, 200000] ns measures 199500 ns; a
 * reversed range is skipped as before, so the whole export is the
 * window: the kernel's 100 us. */
static void test_nsys_step_markers(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL), *db = g_build_filename(tmp, "m.sqlite", NULL);
  const struct { const char *row, *want; } bad[] = {
    {"(-4611686018427387904, 200000, 'ProfilerStep#1')", "start is '-4611686018427387904', not a time in ns"},
    {"(500, 9223372036854775807, 'ProfilerStep#1')", "end is '9223372036854775807', not a time in ns"},
    {"('abc', 200000, 'ProfilerStep#1')", "start is 'abc', not a time in ns"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
    write_export(db, bad[i].row, NULL);
    g_free(expect_run((const char *[]){"simulate", db, "-n", "dgx-h100", NULL}, 1, bad[i].want));
    g_free(expect_run((const char *[]){"metrics", db, NULL}, 1,
                      "m.sqlite: table NVTX_EVENTS, the step range 'ProfilerStep#1': "));
  }
  write_export(db, "(500, 200000, 'ProfilerStep#1')", NULL);
  char *out = expect_run((const char *[]){"simulate", db, "-n", "dgx-h100", NULL}, 0, NULL);
  test_expect_has(out, "measured step time: 0.199500 ms");
  g_free(out);
  write_export(db, "(300000, 200000, 'ProfilerStep#1')", NULL);
  out = expect_run((const char *[]){"simulate", db, "-n", "dgx-h100", NULL}, 0, NULL);
  test_expect_has(out, "measured step time: 0.100000 ms");
  g_free(out);
  test_rm_rf(tmp);
  g_free(db);
  g_free(tmp);
}

/* Counts in an Nsight export read unchecked: a memcpy of 'abc' or -5
 * bytes read as 0 and one of 1e300 as 2^63 - 1 (metrics answered an
 * average_memory_bandwidth of 922337203685477.625 GB/s, status 0); a
 * kernel's gridX of 'abc' read as 0 blocks (mean_sm_coverage 0.00 %,
 * status 0).  Each is now an error naming the table, row and column: the
 * bytes for every command (the graph keeps them), the grid for metrics
 * (only its facts read grids).  Good: 4096 B copied in [101000, 111000] ns
 * is 4096 B / 10 us = 0.4096 GB/s ("0.410"); 132 blocks on 132 SMs
 * (test_nsys_export's kernel, TARGET_INFO_GPU smCount 132) cover 100 %. */
static void test_nsys_counts(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL), *db = g_build_filename(tmp, "c.sqlite", NULL);
  const char *fmt = "CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT, smCount INTEGER);"
                    "INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H100 80GB HBM3', 132);"
                    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER, "
                    "streamId INTEGER, bytes INTEGER, copyKind INTEGER);"
                    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (101000, 111000, 0, 7, %s, 1);"
                    "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET gridX = %s;";
  const struct { const char *bytes, *grid, *want; gboolean graph; } bad[] = {
    {"'abc'", "132", "table CUPTI_ACTIVITY_KIND_MEMCPY, row 1: bytes is 'abc', not a byte count from 0 to "
     "1125899906842624", TRUE},
    {"-5", "132", "bytes is '-5', not a byte count", TRUE},
    {"1e300", "132", "bytes is '1.0e+300', not a byte count", TRUE},
    {"1125899906842625", "132", "bytes is '1125899906842625', not a byte count", TRUE},
    {"4096", "'abc'", "table CUPTI_ACTIVITY_KIND_KERNEL, row 1: gridX is 'abc', not a grid dimension from 1 to "
     "2147483647", FALSE},
    {"4096", "0", "gridX is '0', not a grid dimension", FALSE},
  };
  for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
    char *sql = g_strdup_printf(fmt, bad[i].bytes, bad[i].grid);
    test_nsys_export(db, sql);
    g_free(expect_run((const char *[]){"metrics", db, NULL}, 1, bad[i].want));
    if (bad[i].graph)
      g_free(expect_run((const char *[]){"simulate", db, "-n", "dgx-h100", NULL}, 1, bad[i].want));
    g_free(sql);
  }
  char *sql = g_strdup_printf(fmt, "4096", "132");
  test_nsys_export(db, sql);
  char *out = expect_run((const char *[]){"metrics", db, NULL}, 0, NULL);
  test_expect_has(out, "average_memory_bandwidth (GB/s)            0.410");
  test_expect_has(out, "mean_sm_coverage (%)                      100.00");
  g_free(out);
  g_free(sql);
  test_rm_rf(tmp);
  g_free(db);
  g_free(tmp);
}

/* The fuzz seed fuzz/corpus/nsys/seed-gpu-metrics.sqlite: the export of
 * the good cases above, a step range [500, 200000] ns and the samples 10
 * and 90 in it, so that fuzz_nsys starts from an export that reaches the
 * step ranges and the GPU metric samples (no corpus file had GPU_METRICS).
 * Written by this test when WISP_WRITE_NSYS_METRICS_SEED names a path; the
 * built export and the seed read the same: a measured window of 199500 ns
 * (0.200 ms at three decimals) and bw_peertopeer (10 + 90) / 2 = 50 %. */
static void test_nsys_metrics_seed(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL), *db = g_build_filename(tmp, "s.sqlite", NULL);
  char *seed = g_build_filename(g_getenv("G_TEST_SRCDIR"), "fuzz", "corpus", "nsys", "seed-gpu-metrics.sqlite", NULL);
  const char *keep = g_getenv("WISP_WRITE_NSYS_METRICS_SEED");
  write_export(keep ? keep : db, "(500, 200000, 'ProfilerStep#1')", "(50000, 10), (60000, 90)");
  if (keep)
    write_export(db, "(500, 200000, 'ProfilerStep#1')", "(50000, 10), (60000, 90)");
  for (int k = 0; k < 2; k++) {
    char *out = expect_run((const char *[]){"metrics", k ? seed : db, NULL}, 0, NULL);
    test_expect_has(out, "avg_step_time (ms)                         0.200");
    test_expect_has(out, "bw_peertopeer (%)                          50.00");
    g_free(out);
  }
  test_rm_rf(tmp);
  g_free(db);
  g_free(seed);
  g_free(tmp);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/hostile_types/kineto_non_object_entries", test_kineto_non_object_entries);
  g_test_add_func("/hostile_types/kineto_dist_info", test_kineto_dist_info);
  g_test_add_func("/hostile_types/kineto_msg_nelems", test_kineto_msg_nelems);
  g_test_add_func("/hostile_types/nsys_metric_samples", test_nsys_metric_samples);
  g_test_add_func("/hostile_types/nsys_step_markers", test_nsys_step_markers);
  g_test_add_func("/hostile_types/nsys_counts", test_nsys_counts);
  g_test_add_func("/hostile_types/nsys_metrics_seed", test_nsys_metrics_seed);
  return g_test_run();
}
