/* test_hostile_input_cli.c: issue 28's probes of sizes end to end through
 * the `wisp` binary ($WISP_BIN, set by `make check`): inputs sized to make
 * the readers or the replay allocate without bound, and numbers out of
 * the range a reader accepts.  Each check asserts that
 * the process exited normally (never killed by a signal: GLib's allocation
 * abort is SIGTRAP) with the documented status and message, and, where
 * the point is a bound, the child's peak resident memory (getrusage of the
 * reaped child) under that bound.  No expected figure comes from wisp's
 * own output.  (The other probes are in test_hostile_cli.c.)
 */
#include "config.h"

#include "chakra/et_io.h"
#include "regress/allreduce_et.h"
#include "regress/test_sqlite.h"
#include "regress/test_util.h"

#include <fcntl.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

/* Runs wisp with `args`, its address space limited to `limit` bytes (0:
 * no limit; setrlimit in the child before exec, like `ulimit -v`) and its
 * CPU time to 120 s; returns the exit status (-1 when killed, logged), its
 * standard error in *err and its peak resident set in *maxrss_kib (from
 * wait4's rusage of this one child). */
static int run_measured(const char *const *args, rlim_t limit, char **err, long *maxrss_kib)
{
  char *log = g_build_filename(g_get_tmp_dir(), "wisp-hostile-mem-err-XXXXXX", NULL);
  int fd = g_mkstemp(log);
  g_assert_cmpint(fd, >=, 0);
  GPtrArray *a = g_ptr_array_new();
  g_ptr_array_add(a, (gpointer)g_getenv("WISP_BIN"));
  for (const char *const *p = args; *p; p++)
    g_ptr_array_add(a, (gpointer)*p);
  g_ptr_array_add(a, NULL);
  fflush(NULL);
  pid_t pid = fork();
  g_assert_cmpint(pid, >=, 0);
  if (pid == 0) {
    struct rlimit as = {limit, limit}, cpu = {120, 120};
    if (limit > 0)
      setrlimit(RLIMIT_AS, &as);
    setrlimit(RLIMIT_CPU, &cpu);
    int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    execv((char *)a->pdata[0], (char **)a->pdata);
    _exit(127);
  }
  int status = 0;
  struct rusage ru;
  g_assert_cmpint(wait4(pid, &status, 0, &ru), ==, pid);
  close(fd);
  g_assert_true(g_file_get_contents(log, err, NULL, NULL));
  g_unlink(log);
  g_free(log);
  g_ptr_array_free(a, TRUE);
  *maxrss_kib = ru.ru_maxrss;
  if (WIFSIGNALED(status))
    g_test_message("wisp %s ... was killed by signal %d; stderr: %.2000s", args[0], WTERMSIG(status), *err);
  g_test_message("wisp %s ...: status %d, peak RSS %ld KiB; stderr: %.2000s", args[0],
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1, *maxrss_kib, *err);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* TRUE when wisp starts under an address-space limit of `limit` bytes; a
 * sanitizer build reserves terabytes of shadow and does not, so the tests
 * of limits are skipped there (the bounds on RSS still run). */
static gboolean starts_under(rlim_t limit)
{
  char *err = NULL;
  long rss = 0;
  gboolean ok = run_measured((const char *[]){"--version", NULL}, limit, &err, &rss) == 0;
  g_free(err);
  return ok;
}

/* Deflates len bytes of `in` with `flush` into out (cap bytes, enough for
 * them); returns the output size. */
static size_t deflate_all(z_stream *zs, const char *in, size_t len, int flush, unsigned char *out, size_t cap)
{
  zs->next_in = (Bytef *)in;
  zs->avail_in = (uInt)len;
  zs->next_out = out;
  zs->avail_out = (uInt)cap;
  g_assert_cmpint(deflate(zs, flush), >=, Z_OK);
  g_assert_cmpuint(zs->avail_in, ==, 0);
  return cap - zs->avail_out;
}

/* Writes a gzip file (one member, as `gzip` makes) whose text is `head`,
 * then `chunks` MiB of the byte `fill`, then `tail`, without compressing
 * the middle more than once: after a full flush deflate starts afresh, so
 * every 1 MiB chunk of one byte compresses to the same bytes, which are
 * written `chunks` times; the trailer's CRC-32 is combined (crc32_combine)
 * and its length is the text's size modulo 2^32 (RFC 1952).  Returns the
 * file's size.  O(chunks) writes of about 1 KiB. */
static size_t write_inflating_gz(const char *path, const char *head, char fill, unsigned chunks, const char *tail)
{
  enum { MIB = 1 << 20 };
  char *chunk = g_malloc(MIB);
  memset(chunk, fill, MIB);
  size_t cap = 2 * MIB;
  unsigned char *out = g_malloc(cap);
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  g_assert_cmpint(deflateInit2(&zs, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY), ==, Z_OK);
  FILE *f = fopen(path, "wb");
  g_assert_nonnull(f);
  static const unsigned char gz_head[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
  g_assert_cmpuint(fwrite(gz_head, 1, 10, f), ==, 10);
  size_t total = 10;
  size_t n = deflate_all(&zs, head, strlen(head), Z_FULL_FLUSH, out, cap);
  total += fwrite(out, 1, n, f);
  size_t a = deflate_all(&zs, chunk, MIB, Z_FULL_FLUSH, out, cap);
  unsigned char *first = g_memdup2(out, a);
  size_t b = deflate_all(&zs, chunk, MIB, Z_FULL_FLUSH, out, cap);
  /* The premise: a chunk after a full flush compresses to the same bytes. */
  g_assert_cmpuint(a, ==, b);
  g_assert_cmpmem(first, a, out, b);
  for (unsigned i = 0; i < chunks; i++)
    total += fwrite(first, 1, a, f);
  n = deflate_all(&zs, tail, strlen(tail), Z_FINISH, out, cap);
  total += fwrite(out, 1, n, f);
  deflateEnd(&zs);
  uLong crc_chunk = crc32(0, (const Bytef *)chunk, MIB), crc = crc32(0, (const Bytef *)head, (uInt)strlen(head));
  for (unsigned i = 0; i < chunks; i++)
    crc = crc32_combine(crc, crc_chunk, MIB);
  crc = crc32_combine(crc, crc32(0, (const Bytef *)tail, (uInt)strlen(tail)), (z_off_t)strlen(tail));
  uint32_t isize = (uint32_t)(strlen(head) + (uint64_t)chunks * MIB + strlen(tail));
  unsigned char trailer[8];
  for (int i = 0; i < 4; i++) {
    trailer[i] = (unsigned char)(crc >> (8 * i));
    trailer[4 + i] = (unsigned char)(isize >> (8 * i));
  }
  total += fwrite(trailer, 1, 8, f);
  g_assert_cmpint(fclose(f), ==, 0);
  g_free(first);
  g_free(out);
  g_free(chunk);
  return total;
}

/* Item 6 as the issue ran it: a 4 MB .json.gz holding one 4 GiB string
 * (the build: RSS past 2.5 GB, a GLib abort under ulimit -v 1.5G).
 * The file inflates to 4097 MiB; the readers stop at their 64 MiB token
 * cap (WISP_JSON_MAX_TOKEN_BYTES, FE_JSON_MAX_TOKEN_BYTES) at the string's
 * opening quote, for a Kineto trace (streaming tokenizer) and for a PyTorch
 * execution trace (read whole for cJSON: the cap guards the read).  Bound:
 * a peak RSS under 512 MiB, an eighth of the string (the cap's 64 MiB, the
 * read buffer growing to twice that, the program); then the same under an
 * address-space limit of 1 GiB, a quarter of the string. */
static void test_huge_string_4gib(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL);
  char *kineto = g_build_filename(tmp, "big.json.gz", NULL), *et = g_build_filename(tmp, "et.json.gz", NULL);
  const char *khead = "{\"distributedInfo\": {\"rank\": 0, \"world_size\": 1}, \"traceEvents\": "
                      "[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"";
  const char *ehead = "{\"schema\": \"1.0.1\", \"pid\": 1, \"nodes\": [{\"name\": \"";
  /* The strings open at byte strlen(head) - 1 of the text: 103 and 49. */
  g_assert_cmpuint(strlen(khead), ==, 104);
  g_assert_cmpuint(strlen(ehead), ==, 50);
  size_t kbytes = write_inflating_gz(kineto, khead, 'a', 4096, "\", \"ts\": 1, \"dur\": 2}]}");
  size_t ebytes = write_inflating_gz(et, ehead, 'a', 4096, "\", \"id\": 2}]}");
  /* 4096 chunks of about 1 KiB: "a 4 MB .json.gz". */
  g_assert_cmpuint(kbytes, <, 8u << 20);
  g_assert_cmpuint(ebytes, <, 8u << 20);
  const char *const *runs[] = {(const char *[]){"simulate", kineto, "-n", "dgx-h100", NULL},
                               (const char *[]){"simulate", et, "-n", "dgx-h100", NULL}};
  const char *want[] = {"big.json.gz: byte 103: string starting here is longer than 64 MiB",
                        "et.json.gz: byte 49: string starting here is longer than 64 MiB"};
  gboolean limits = starts_under((rlim_t)160 << 20);
  for (int i = 0; i < 2; i++) {
    char *err = NULL;
    long rss = 0;
    g_assert_cmpint(run_measured(runs[i], 0, &err, &rss), ==, 1);
    test_expect_has(err, want[i]);
    g_assert_cmpint(rss, <, 512 * 1024);
    g_free(err);
    if (!limits)
      continue;
    g_assert_cmpint(run_measured(runs[i], (rlim_t)1 << 30, &err, &rss), ==, 1);
    test_expect_has(err, want[i]);
    g_free(err);
  }
  if (!limits)
    g_test_message("address-space limits skipped: wisp does not start under 160 MiB (a sanitizer build?)");
  test_rm_rf(tmp);
  g_free(kineto);
  g_free(et);
  g_free(tmp);
}

/* The cap on numbers in the whole-file reader: a PyTorch execution trace
 * whose "pid" is 70 MiB of digits (0.1 MB compressed) stops at the number's
 * first digit, byte 40, before cJSON ever sees it. */
static void test_huge_number(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL);
  char *et = g_build_filename(tmp, "num.json.gz", NULL);
  const char *head = "{\"schema\": \"1.0.1\", \"nodes\": [], \"pid\": 1";
  g_assert_cmpuint(strlen(head), ==, 41);
  write_inflating_gz(et, head, '7', 70, "}");
  char *err = NULL;
  long rss = 0;
  g_assert_cmpint(run_measured((const char *[]){"simulate", et, "-n", "dgx-h100", NULL}, 0, &err, &rss), ==, 1);
  test_expect_has(err, "num.json.gz: byte 40: number starting here is longer than 64 MiB");
  g_free(err);
  test_rm_rf(tmp);
  g_free(et);
  g_free(tmp);
}

/* Whether the memory-limit tests can run: the binary is there and starts
 * under a 160 MiB address-space limit (a sanitizer build cannot); the test
 * is skipped with the reason otherwise. */
static gboolean can_limit_memory(void)
{
  if (!test_have_bin())
    return FALSE;
  if (!starts_under((rlim_t)160 << 20)) {
    g_test_skip("wisp does not start under a 160 MiB address-space limit (a sanitizer build?)");
    return FALSE;
  }
  return TRUE;
}

/* Item 6, second half: allocation failure on user-sized work.  The
 * issue's `--scale dp=1024` under `ulimit -v 1G` died in GLib's allocation
 * abort (SIGTRAP) after 16 s, and a huge rank count never got that far (a
 * quadratic duplicate check on a million-member group).  Now:
 *  - 8 traced ranks scaled to dp=8388608 (8388608 ranks) under 1 GiB are
 *    refused before anything that size is allocated: the lower bound of
 *    1 KiB per rank (WISP_MEMORY_PER_RANK_BYTES) is 8 GiB;
 *  - dp=65536 passes that bound under 96 MiB (64 MiB) but not the run:
 *    the allocation that fails becomes "not enough memory for 65536 ranks"
 *    with status 1, whether GLib's allocator or the address space itself
 *    (the stack of GLib's error path) gave out first;
 *  - the same in the flow network model is refused when the replay
 *    starts: its lower bound is twice that.
 * Skipped when wisp cannot start under the limit (a sanitizer build). */
static void test_memory_limit(void)
{
  if (!can_limit_memory())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL), *err = NULL;
  long rss = 0;
  test_write_allreduce(tmp, "w", 8, 1 << 20, 0);
  char *w = g_build_filename(tmp, "w", NULL);
  g_assert_cmpint(run_measured((const char *[]){"simulate", w, "-n", "dgx-h100", "--scale", "dp=8388608", NULL},
                               (rlim_t)1 << 30, &err, &rss), ==, 1);
  test_expect_has(err, "not enough memory for 8388608 ranks (--scale dp=8388608): needs at least 8.0 GiB, and the "
                       "address-space limit (ulimit -v) is 1.0 GiB");
  g_free(err);
  g_assert_cmpint(run_measured((const char *[]){"simulate", w, "-n", "dgx-h100", "--scale", "dp=65536", NULL},
                               (rlim_t)96 << 20, &err, &rss), ==, 1);
  test_expect_has(err, "wisp: error: not enough memory for 65536 ranks (--scale dp=65536): needs more than ");
  test_expect_has(err, "and the address-space limit (ulimit -v) is 96 MiB");
  g_free(err);
  /* The flow network model keeps at least twice the per-rank lower bound
   * (2 KiB a rank: 128 MiB for 65536 ranks), checked when the replay
   * starts, before its per-rank state. */
  g_assert_cmpint(run_measured((const char *[]){"simulate", w, "-n", "dgx-h100", "--scale", "dp=65536",
                                                "--network-model", "flow", NULL}, (rlim_t)96 << 20, &err, &rss), ==, 1);
  test_expect_has(err, "wisp: error: not enough memory for 65536 ranks in the flow network model: needs at least "
                       "128 MiB, and the address-space limit (ulimit -v) is 96 MiB");
  g_free(err);
  test_rm_rf(tmp);
  g_free(w);
  g_free(tmp);
}

/* Item 6 for traces: a trace too large for the memory limit ended in
 * GLib's allocation abort (SIGTRAP); r28b's handler made it "not enough
 * memory for this run".  Now the message names the trace being read:
 *  - a Kineto trace of 400,000 kernels (1.2 MiB compressed; the reader
 *    keeps about 300 bytes a kernel, 310 MB for 10^6 measured) under a
 *    96 MiB address-space limit;
 *  - a PyTorch execution trace padded with 200 MiB of spaces (valid JSON,
 *    0.2 MiB compressed; read whole for cJSON) under the same limit.
 * Skipped under a sanitizer build (no address-space limit possible). */
static void test_trace_memory(void)
{
  if (!can_limit_memory())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL), *err = NULL;
  char *kineto = g_build_filename(tmp, "many.json.gz", NULL), *et = g_build_filename(tmp, "pad.json.gz", NULL);
  gzFile gz = gzopen(kineto, "wb1");
  g_assert_nonnull(gz);
  gzprintf(gz, "{\"distributedInfo\": {\"rank\": 0, \"world_size\": 1}, \"traceEvents\": [\n");
  for (int i = 0; i < 400000; i++)
    gzprintf(gz, "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":%d,\"dur\":2,"
             "\"args\":{\"stream\":7,\"device\":0}},\n", 3 * i + 1);
  gzprintf(gz, "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"profiler_stop\",\"pid\":0,\"tid\":1,\"ts\":1200020,"
           "\"dur\":10,\"args\":{}}]}\n");
  g_assert_cmpint(gzclose(gz), ==, Z_OK);
  write_inflating_gz(et, "{\"schema\": \"1.0.1\", \"pid\": 1, \"nodes\": [", ' ', 200, "]}");
  long rss = 0;
  g_assert_cmpint(run_measured((const char *[]){"simulate", kineto, "-n", "dgx-h100", NULL}, (rlim_t)96 << 20, &err,
                               &rss), ==, 1);
  test_expect_has(err, "wisp: error: not enough memory for the Kineto trace ");
  test_expect_has(err, "many.json.gz (1.");
  test_expect_has(err, "MiB on disk): needs ");
  test_expect_has(err, "the address-space limit (ulimit -v) is 96 MiB");
  g_free(err);
  g_assert_cmpint(run_measured((const char *[]){"simulate", et, "-n", "dgx-h100", NULL}, (rlim_t)96 << 20, &err, &rss),
                  ==, 1);
  test_expect_has(err, "wisp: error: not enough memory for the PyTorch execution trace ");
  test_expect_has(err, "pad.json.gz (");
  test_expect_has(err, "the address-space limit (ulimit -v) is 96 MiB");
  g_free(err);
  test_rm_rf(tmp);
  g_free(kineto);
  g_free(et);
  g_free(tmp);
}

/* Runs wisp and checks the exit status and that stderr holds `want`. */
/* r28c's "not done": a sweep point that ran out of memory ended its worker
 * and with it the sweep ("a worker failed ... rerun with --resume", no
 * CSV; with --jobs 1 the sweep itself died).  Now the point is an `error:`
 * row naming the point and the memory, and the other points run.  The
 * point that does not fit asks for a cluster of 4194304 ranks (the most a
 * topology takes, TOPO_MAX_ENDPOINTS): building it took 907 MB of peak RSS
 * without a limit (measured with /usr/bin/time), far above the 256 MiB
 * address-space limit here, while the 8- and 16-rank points need about
 * 5 MB.  The runner reruns the points a failed worker left, so the CSV of
 * one worker equals the CSV of two.  Skipped under a sanitizer build. */
static void test_sweep_point_memory(void)
{
  if (!can_limit_memory())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL), *err = NULL;
  test_write_allreduce(tmp, "w", 8, 1 << 20, 0);
  char *w = g_build_filename(tmp, "w", NULL), *spec = g_build_filename(tmp, "s.yaml", NULL);
  g_assert_true(g_file_set_contents(spec, "sweep_version: 1\nname: m\ncluster: dgx-h100\naxes:\n"
                                    "  - {key: ranks, values: [8, 4194304, 16]}\n", -1, NULL));
  char *csv[2] = {NULL, NULL};
  const char *jobs[2] = {"1", "2"};
  for (int k = 0; k < 2; k++) {
    char *out = g_build_filename(tmp, jobs[k], NULL), *path = g_build_filename(out, "m.csv", NULL);
    long rss = 0;
    g_assert_cmpint(run_measured((const char *[]){"sweep", spec, "-w", w, "-o", out, "--jobs", jobs[k], "--no-progress",
                                                  NULL}, (rlim_t)256 << 20, &err, &rss), ==, 1);
    g_assert_null(strstr(err, "a worker failed"));
    g_assert_true(g_file_get_contents(path, &csv[k], NULL, NULL));
    char **lines = g_strsplit(csv[k], "\n", -1);
    g_assert_cmpuint(g_strv_length(lines), ==, 5); /* header, 3 rows, "" */
    g_assert_true(g_str_has_prefix(lines[1], "0,,8,") && g_str_has_suffix(lines[1], ",ok"));
    g_assert_true(g_str_has_prefix(lines[2], "1,,4194304,,"));
    test_expect_has(lines[2], "\"error: not enough memory for point 1 of the sweep m (a replay of 8 ranks of ");
    test_expect_has(lines[2], "and the address-space limit (ulimit -v) is 256 MiB");
    g_assert_true(g_str_has_prefix(lines[3], "2,,16,") && g_str_has_suffix(lines[3], ",ok"));
    g_strfreev(lines);
    g_free(err);
    g_free(out);
    g_free(path);
  }
  g_assert_cmpstr(csv[0], ==, csv[1]);
  g_free(csv[0]);
  g_free(csv[1]);
  test_rm_rf(tmp);
  g_free(w);
  g_free(spec);
  g_free(tmp);
}

static void expect_run(const char *const *args, int status, const char *want)
{
  char *err = NULL;
  g_assert_cmpint(test_wisp_run_in(NULL, args, NULL, &err), ==, status);
  test_expect_has(err, want);
  g_free(err);
}

/* Items 1 and 11 through the binary (n27 tests the reader itself in
 * test_ncclt_cli): nccl-tests rows of 2^63 - 1 bytes (aborted in
 * analytic_queue), -1048576 (wrapped to 2^64 - 2^20), 1e30 (read as 1),
 * times of inf/nan/negative (printed as real) and a header without
 * size_bytes (shifted columns) are each an error naming the line and the
 * field, status 1, from `collbench --compare-csv`. */
static void test_nccltests_rows(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL), *csv = g_build_filename(tmp, "r.csv", NULL);
  const char *head = "test,table,size_bytes,count,type,redop,root,oop_time_us,oop_algbw_GBps,oop_busbw_GBps\n";
  const struct { const char *row, *want; } probes[] = {
    {"9223372036854775807,262144,float,sum,-1,40.0", "r.csv:2: size_bytes 9223372036854775807 exceeds 2^50 B"},
    {"-1048576,262144,float,sum,-1,40.0", "r.csv:2: size_bytes '-1048576' is not a count"},
    {"1e30,262144,float,sum,-1,40.0", "r.csv:2: size_bytes '1e30' is not a count"},
    {"1048576,262144,float,sum,-1,inf", "r.csv:2: time_us 'inf' is not a finite positive number"},
    {"1048576,262144,float,sum,-1,nan", "r.csv:2: time_us 'nan' is not a finite positive number"},
    {"1048576,262144,float,sum,-1,-40.0", "r.csv:2: time_us '-40.0' is not a finite positive number"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(probes); i++) {
    char *text = g_strconcat(head, "all_reduce_perf,1,", probes[i].row, ",26.21,45.88\n", NULL);
    g_assert_true(g_file_set_contents(csv, text, -1, NULL));
    expect_run((const char *[]){"collbench", "-n", "dgx-h100", "--compare-csv", csv, NULL}, 1, probes[i].want);
    g_free(text);
  }
  g_assert_true(g_file_set_contents(csv, "test,table,count,type,redop,root,oop_time_us,oop_algbw_GBps,oop_busbw_GBps\n"
                                    "all_reduce_perf,1,262144,float,sum,-1,40.0,26.21,45.88\n", -1, NULL));
  expect_run((const char *[]){"collbench", "-n", "dgx-h100", "--compare-csv", csv, NULL}, 1,
             "r.csv:1: the header lacks the column(s) size_bytes");
  /* The raw output of an nccl-tests binary: a good row, then a row sized
   * -1048576 or 1e30 (this wave's audit: the raw reader skipped such a
   * line, as if it were not a row, and ran the table without it). */
  char *raw = g_build_filename(tmp, "r.log", NULL);
  const char *row = "        type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
                    "     1048576        262144     float     sum      -1    40.00   26.21   45.88      0    40.00   "
                    "26.21   45.88      0\n";
  static const char *const sizes[] = {"-1048576", "1e30"};
  for (guint i = 0; i < G_N_ELEMENTS(sizes); i++) {
    char *text = g_strdup_printf("# nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5\n"
                                 "#  Rank  0 Group  0 Pid   1234 on   host0 device  0 [0x18] NVIDIA H100 80GB HBM3\n"
                                 "#       size         count%s %s        262144     float     sum      -1    40.00   "
                                 "26.21   45.88      0    40.00   26.21   45.88      0\n", row, sizes[i]);
    g_assert_true(g_file_set_contents(raw, text, -1, NULL));
    char *want = g_strdup_printf("r.log:5: size_bytes '%s' is not a count", sizes[i]);
    expect_run((const char *[]){"collbench", "-n", "dgx-h100", "--compare-csv", raw, "--op", "all_reduce", NULL}, 1,
               want);
    g_free(want);
    g_free(text);
  }
  g_free(raw);
  test_rm_rf(tmp);
  g_free(csv);
  g_free(tmp);
}

/* Fuzz finding (fuzz_spec, r28d's campaign, timeout-604cc2...): a sweep
 * range from 10GB/s to 1e54GB/s in steps of 15GB/s made a million value
 * strings before it was refused (over 10 s under ASan).  The count is now
 * computed first: (1e54 - 10) / 15 + 1 = 6.667e52 values, refused at once
 * with the count.  A geometric range from 0 (0 * factor stays 0, a million
 * zeros) is refused too. */
static void test_sweep_huge_range(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL);
  char *spec = g_build_filename(tmp, "s.yaml", NULL);
  g_assert_true(g_file_set_contents(spec, "sweep_version: 1\nname: s\ncluster: dgx-h100\naxes:\n  - {key: "
                                    "scale_out_bw, range: {from: 10GB/s, to: 1e54GB/s, step: 15GB/s}}\n", -1, NULL));
  expect_run((const char *[]){"sweep", spec, "--list", NULL}, 1, "the range gives 6.667e+52 values, more than 1000000");
  g_assert_true(g_file_set_contents(spec, "sweep_version: 1\nname: s\ncluster: dgx-h100\naxes:\n  - {key: "
                                    "compute, range: {from: 0, to: 8, factor: 2}}\n", -1, NULL));
  expect_run((const char *[]){"sweep", spec, "--list", NULL}, 1,
             "'from' must be positive in a range with a 'factor' (it is 0)");
  test_rm_rf(tmp);
  g_free(spec);
  g_free(tmp);
}

/* Found by this wave's audit (item 1: no assertion reachable from input):
 * a network config's link latency of 9e6 s (104 days, inside the reader's
 * range of times below 2^63 ps) summed over a route's 2 hops past int64:
 * simulate, utility and collbench aborted in sim_engine.c enqueue
 * (t >= sim->now), on both tiers.  Route latencies now saturate at the
 * engine's 2^61 ps, so each run ends with its overflow error, status 1.
 * A 1000 s latency is inside the range: that simulate answers, with a
 * step of at least one transfer's two hops (2000 s). */
static void test_huge_latency(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL), *w = g_build_filename(tmp, "w", NULL);
  char *net = g_build_filename(tmp, "n.yaml", NULL), *flow = g_build_filename(tmp, "f.yaml", NULL);
  char *slow = g_build_filename(tmp, "s.yaml", NULL);
  test_write_allreduce(tmp, "w", 8, 1 << 20, 0);
  const char *fmt = "schema_version: 1\nname: n\nmodel: %s\ndims:\n  - {name: nvlink, kind: switch, size: 8, "
                    "bandwidth: 450GB/s, latency: %s}\n";
  char *t1 = g_strdup_printf(fmt, "analytical", "9e6s"), *t2 = g_strdup_printf(fmt, "flow", "9e6s");
  char *t3 = g_strdup_printf(fmt, "analytical", "1000s");
  g_assert_true(g_file_set_contents(net, t1, -1, NULL));
  g_assert_true(g_file_set_contents(flow, t2, -1, NULL));
  g_assert_true(g_file_set_contents(slow, t3, -1, NULL));
  const char *want = "the simulated time would pass 2^61 ps";
  expect_run((const char *[]){"simulate", w, "-n", net, NULL}, 1, want);
  expect_run((const char *[]){"simulate", w, "-n", flow, NULL}, 1, want);
  expect_run((const char *[]){"utility", w, "-n", net, NULL}, 1, want);
  expect_run((const char *[]){"collbench", "-n", net, "--sizes", "1M", NULL}, 1,
             "a collective of 1048576 bytes takes past 2^61 ps");
  expect_run((const char *[]){"collbench", "-n", flow, "--sizes", "1M", NULL}, 1,
             "a collective of 1048576 bytes takes past 2^61 ps");
  char *out = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){"simulate", w, "-n", slow, NULL}, &out), ==, 0);
  const char *st = strstr(out, "step time: ");
  g_assert_nonnull(st);
  g_assert_cmpfloat(g_ascii_strtod(st + strlen("step time: "), NULL), >=, 2000.0 * 1000); /* ms */
  g_free(out);
  g_free(t1);
  g_free(t2);
  g_free(t3);
  test_rm_rf(tmp);
  g_free(w);
  g_free(net);
  g_free(flow);
  g_free(slow);
  g_free(tmp);
}

/* The time (us, column 6) of collbench's 1 MiB all-reduce row on
 * dgx-h100 with --library-set KV; -1 when the run fails. */
static double collbench_us(const char *kv)
{
  char *out = NULL;
  double us = -1;
  if (test_wisp_run((const char *[]){"collbench", "-n", "dgx-h100", "--sizes", "1M", "--library-set", kv, NULL},
                    &out) == 0) {
    char **lines = g_strsplit(out, "\n", -1);
    for (int i = 0; lines[i] && us < 0; i++) {
      char **f = g_strsplit_set(g_strstrip(lines[i]), " ", -1);
      GPtrArray *w = g_ptr_array_new();
      for (int k = 0; f[k]; k++)
        if (f[k][0])
          g_ptr_array_add(w, f[k]);
      if (w->len > 5 && strcmp(g_ptr_array_index(w, 0), "1048576") == 0)
        us = g_ascii_strtod(g_ptr_array_index(w, 5), NULL);
      g_ptr_array_free(w, TRUE);
      g_strfreev(f);
    }
    g_strfreev(lines);
  }
  g_free(out);
  return us;
}

/* Found by this wave's audit (a silent wrong answer): NCCL's per-hop
 * latency scaled by step_latency_scale 1e12 (about 5e7 s, past int64 ps)
 * was dropped, so the 1 MiB all-reduce on dgx-h100 took 57.5 us, less
 * than the 71.3 us of scale 1.  Now it saturates at the engine's limit
 * and the run fails with the overflow; scales inside the range keep the
 * time growing with the scale. */
static void test_huge_latency_scale(void)
{
  if (!test_have_bin())
    return;
  double t1 = collbench_us("step_latency_scale=1"), t2 = collbench_us("step_latency_scale=1e9");
  g_assert_cmpfloat(t1, >, 0);
  g_assert_cmpfloat(t2, >, t1);
  expect_run((const char *[]){"collbench", "-n", "dgx-h100", "--sizes", "1M", "--library-set",
                              "step_latency_scale=1e12", NULL}, 1, "a collective of 1048576 bytes takes past 2^61 ps");
}

/* Found by this wave's audit (item 1): the XLA reader took an HLO shape's
 * bytes as the message size with no bound, so bf16[2^62] (2^63 bytes)
 * and s8[2^64 - 1] reached the replay (which ended in its overflow error,
 * even under --strict, instead of naming the size).  Now a size above
 * 2^50 bytes is no usable size, as an overflowing shape already was: the
 * op is replayed at its measured time with the warning, and --strict makes
 * it an error naming the op and the bound; f32[2^48] (exactly 2^50 bytes)
 * is still simulated at that size. */
static void test_xla_huge_shape(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL), *path = g_build_filename(tmp, "x.trace.json", NULL);
  const char *fmt = "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n"
    "{\"ph\": \"M\", \"pid\": 3, \"name\": \"process_name\", \"args\": {\"name\": \"/device:TPU:0\"}},\n"
    "{\"ph\": \"M\", \"pid\": 4, \"name\": \"process_name\", \"args\": {\"name\": \"/device:TPU:1\"}},\n"
    "{\"ph\": \"M\", \"pid\": 3, \"tid\": 2, \"name\": \"thread_name\", \"args\": {\"name\": \"XLA Ops\"}},\n"
    "{\"ph\": \"M\", \"pid\": 4, \"tid\": 2, \"name\": \"thread_name\", \"args\": {\"name\": \"XLA Ops\"}},\n"
    "{\"ph\": \"X\", \"pid\": 3, \"tid\": 2, \"ts\": 13, \"dur\": 4, \"name\": \"all-reduce.2\", \"args\": "
    "{\"long_name\": \"%%all-reduce.2 = %s{0} all-reduce(%s{0} %%p), replica_groups={{0,1}}, to_apply=%%add\"}},\n"
    "{\"ph\": \"X\", \"pid\": 4, \"tid\": 2, \"ts\": 13, \"dur\": 4, \"name\": \"all-reduce.2\", \"args\": "
    "{\"long_name\": \"%%all-reduce.2 = %s{0} all-reduce(%s{0} %%p), replica_groups={{0,1}}, to_apply=%%add\"}}]}\n";
  static const char *const huge[] = {"bf16[4611686018427387904]", "s8[18446744073709551615]"};
  for (guint i = 0; i < G_N_ELEMENTS(huge); i++) {
    char *text = g_strdup_printf(fmt, huge[i], huge[i], huge[i], huge[i]);
    g_assert_true(g_file_set_contents(path, text, -1, NULL));
    expect_run((const char *[]){"simulate", path, "-n", "dgx-h100", "--strict", NULL}, 1,
               "collective all-reduce.2 has no usable size (a size above 2^50 bytes (1 PiB)");
    /* The count of what cannot be simulated is in the report on stdout
     * (printed once there, issue 29 obs 9); the per-op warning on stderr. */
    char *out = NULL, *err = NULL;
    g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"simulate", path, "-n", "dgx-h100", NULL}, &out, &err),
                    ==, 0);
    test_expect_has(out, "2 communication op(s) on 2 rank(s) were not simulated");
    test_expect_has(err, "has no usable size (a size above 2^50 bytes (1 PiB)");
    g_free(out);
    g_free(err);
    g_free(text);
  }
  char *text = g_strdup_printf(fmt, "f32[281474976710656]", "f32[281474976710656]", "f32[281474976710656]",
                               "f32[281474976710656]"), *out = NULL;
  g_assert_true(g_file_set_contents(path, text, -1, NULL));
  g_assert_cmpint(test_wisp_run((const char *[]){"simulate", path, "-n", "dgx-h100", "--strict", NULL}, &out), ==, 0);
  test_expect_has(out, "all_reduce ring/Simple for 1 collective of 1125899906842624 B");
  g_free(out);
  g_free(text);
  test_rm_rf(tmp);
  g_free(path);
  g_free(tmp);
}

/* test_nsys_export's one-kernel export (a 100 us kernel at 1000 ns) and a
 * second kernel row whose first seven values are the SQL text `row`
 * (start, end, deviceId, streamId, correlationId, demangledName, gridX). */
static void write_nsys(const char *path, const char *row)
{
  char *sql = g_strdup_printf("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (%s, 1, 1);", row);
  test_nsys_export(path, sql);
  g_free(sql);
}

/* Found by this wave's audit (items 1 and 2 on Nsight exports): a kernel
 * row starting at 2^63 - 1 ns wrapped when turned into ps, the kernel
 * vanished with a GLib critical (et_builder_add_node: duration_ps >= 0)
 * and simulate answered 0.1 ms, status 0; a start stored as text 'abc' or
 * NULL (SQLite keeps them in an INTEGER column) was read as 0.  Each is
 * now an error naming the file, table, row and field.  A good second
 * kernel at [200000, 300000] ns gives the window 300000 - 1000 = 299000 ns
 * (the replay keeps the measured gap), as before. */
static void test_nsys_times(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-XXXXXX", NULL), *db = g_build_filename(tmp, "n.sqlite", NULL);
  const struct { const char *row, *want; } probes[] = {
    {"9223372036854775807, 1, 0, 7, 2, 1, 132", "row 2: start is '9223372036854775807', not a time in ns"},
    {"1000, 9223372036854775807, 0, 7, 2, 1, 132", "row 2: end is '9223372036854775807', not a time in ns"},
    {"'abc', 2000, 0, 7, 2, 1, 132", "row 2: start is 'abc', not a time in ns"},
    {"2000, NULL, 0, 7, 2, 1, 132", "row 2: end is NULL, not a time in ns"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(probes); i++) {
    write_nsys(db, probes[i].row);
    expect_run((const char *[]){"simulate", db, "-n", "dgx-h100", NULL}, 1, probes[i].want);
    expect_run((const char *[]){"simulate", db, "-n", "dgx-h100", NULL}, 1, "n.sqlite: table CUPTI_ACTIVITY_KIND_KERNEL");
  }
  write_nsys(db, "200000, 300000, 0, 7, 2, 1, 132");
  char *out = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){"simulate", db, "-n", "dgx-h100", NULL}, &out), ==, 0);
  test_expect_has(out, "step time: 0.29900 ms (299000.000 ns)");
  g_free(out);
  test_rm_rf(tmp);
  g_free(db);
  g_free(tmp);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/hostile_input/huge_string_4gib", test_huge_string_4gib);
  g_test_add_func("/hostile_input/huge_number", test_huge_number);
  g_test_add_func("/hostile_input/memory_limit", test_memory_limit);
  g_test_add_func("/hostile_input/trace_memory", test_trace_memory);
  g_test_add_func("/hostile_input/sweep_point_memory", test_sweep_point_memory);
  g_test_add_func("/hostile_input/nccltests_rows", test_nccltests_rows);
  g_test_add_func("/hostile_input/sweep_huge_range", test_sweep_huge_range);
  g_test_add_func("/hostile_input/huge_latency", test_huge_latency);
  g_test_add_func("/hostile_input/huge_latency_scale", test_huge_latency_scale);
  g_test_add_func("/hostile_input/xla_huge_shape", test_xla_huge_shape);
  g_test_add_func("/hostile_input/nsys_times", test_nsys_times);
  return g_test_run();
}
