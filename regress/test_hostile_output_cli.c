/* test_hostile_output_cli.c: issue 28's output rules (what to build, item 4)
 * on the readers and commands the first probes did not reach, through the
 * `wisp` binary ($WISP_BIN, set by `make check`):
 *   - every command that writes refuses an output that is one of its
 *     inputs, for the inputs read outside the JSON and YAML readers that
 *     noted them already: nccl-tests logs (collbench --compare-csv,
 *     calibrate --nccl-tests), PyTorch execution traces and Nsight Systems
 *     exports; the input must be byte-identical afterwards;
 *   - two outputs of one collbench run naming the same file are refused
 *     (--svg was not declared);
 *   - SIGTERM removes the run's own temporary files that are not outputs:
 *     --html's JSON in $TMPDIR, wisp search's points directory;
 *   - a sweep's workers end with their parent instead of finishing their
 *     points after it was killed;
 *   - a sweep spec's name cannot take its files out of the output directory.
 * The first five cases failed on c65857e (the input overwritten, status 0;
 * the temporaries left behind; rows written after the kill); the last held
 * already and is kept as a probe of its own.
 *
 * Inputs are written by the test (Chakra through chakra/et_io.h, the
 * Nsight export with SQLite, the rest as text); nothing depends on
 * ../shared/data.
 */
#include "config.h"

#include "chakra/et_io.h"
#include "regress/allreduce_et.h"
#include "regress/test_util.h"

#include <glib/gstdio.h>
#include <signal.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/wait.h>

/* Runs wisp in cwd, checks the status and that stderr holds `want`. */
static void expect_run(const char *cwd, const char *const *args, int status, const char *want)
{
  char *err = NULL;
  int rc = test_wisp_run_in(cwd, args, NULL, &err);
  g_assert_cmpint(rc, ==, status);
  if (want)
    test_expect_has(err, want);
  g_free(err);
}

/* Runs wisp with `out` naming the input `in` (both relative to dir): status
 * 1, the refusal, and the input unchanged. */
static void expect_refused(const char *dir, const char *const *args, const char *in, const char *option)
{
  char *path = g_build_filename(dir, in, NULL), *before = NULL, *after = NULL;
  gsize n0 = 0, n1 = 0;
  g_assert_true(g_file_get_contents(path, &before, &n0, NULL));
  char *want = g_strdup_printf("%s %s: refusing to write over %s, one of this run's inputs", option, in, in);
  expect_run(dir, args, 1, want);
  g_assert_true(g_file_get_contents(path, &after, &n1, NULL));
  g_assert_cmpuint(n0, ==, n1);
  g_assert_true(memcmp(before, after, n0) == 0);
  g_free(want);
  g_free(before);
  g_free(after);
  g_free(path);
}

/* An nccl-tests run's raw output: 8 ranks, two all_reduce_perf rows. */
static const char ncclt_log[] =
  "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
  "validation: 1 graph: 0\n#\n"
  "#  Rank  0 Group  0 Pid   1234 on   host0 device  0 [0x18] NVIDIA H100 80GB HBM3\n"
  "#  Rank  1 Group  0 Pid   1235 on   host0 device  1 [0x19] NVIDIA H100 80GB HBM3\n"
  "#  Rank  2 Group  0 Pid   1236 on   host0 device  2 [0x1a] NVIDIA H100 80GB HBM3\n"
  "#  Rank  3 Group  0 Pid   1237 on   host0 device  3 [0x1b] NVIDIA H100 80GB HBM3\n"
  "#  Rank  4 Group  0 Pid   1238 on   host0 device  4 [0x1c] NVIDIA H100 80GB HBM3\n"
  "#  Rank  5 Group  0 Pid   1239 on   host0 device  5 [0x1d] NVIDIA H100 80GB HBM3\n"
  "#  Rank  6 Group  0 Pid   1240 on   host0 device  6 [0x1e] NVIDIA H100 80GB HBM3\n"
  "#  Rank  7 Group  0 Pid   1241 on   host0 device  7 [0x1f] NVIDIA H100 80GB HBM3\n#\n"
  "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
  "#wrong\n"
  "     1048576        262144     float     sum      -1    40.00   26.21   45.88      0    40.00   26.21   45.88      0\n"
  "     4194304       1048576     float     sum      -1    60.00   69.91  122.34      0    60.00   69.91  122.34      0\n";

/* A one-rank PyTorch execution trace (schema 1.0.1): process, thread, one
 * aten::mm. */
static const char pyt_et[] =
  "{\"schema\": \"1.0.1\", \"pid\": 42, \"time\": \"now\", \"nodes\": [\n"
  "{\"name\": \"[pytorch|profiler|execution_graph|process]\", \"id\": 1, \"rf_id\": 101, \"parent\": 1, \"tid\": 0, "
  "\"inputs\": [], \"input_types\": [], \"outputs\": [], \"output_types\": []},\n"
  "{\"name\": \"[pytorch|profiler|execution_graph|thread]\", \"id\": 2, \"rf_id\": 102, \"parent\": 1, \"tid\": 1, "
  "\"inputs\": [], \"input_types\": [], \"outputs\": [], \"output_types\": []},\n"
  "{\"name\": \"aten::mm\", \"id\": 3, \"rf_id\": 103, \"parent\": 2, \"tid\": 1, \"inputs\": [], "
  "\"input_types\": [], \"outputs\": [], \"output_types\": []}]}\n";

/* A one-device Nsight Systems export: one 100 us kernel on stream 7. */
static void write_nsys(const char *path)
{
  sqlite3 *db = NULL;
  g_assert_cmpint(sqlite3_open(path, &db), ==, SQLITE_OK);
  char *msg = NULL;
  int rc = sqlite3_exec(db, "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
                        "INSERT INTO StringIds VALUES (1, 'volta_sgemm_128x64_nn');"
                        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, "
                        "streamId INTEGER, correlationId INTEGER, demangledName INTEGER, gridX INTEGER);"
                        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 101000, 0, 7, 1, 1, 132);",
                        NULL, NULL, &msg);
  if (rc != SQLITE_OK)
    g_error("sqlite: %s", msg);
  sqlite3_close(db);
}

/* Inputs read outside fe_json and the YAML readers were not noted, so an
 * output could replace them: the nccl-tests log under collbench --svg,
 * --json and --html and calibrate -o, the PyTorch ET under simulate
 * --json, the Nsight export under simulate and metrics --json. */
static void test_reader_inputs(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-out-XXXXXX", NULL);
  char *log = g_build_filename(tmp, "ar.log", NULL), *et = g_build_filename(tmp, "et.json", NULL);
  char *db = g_build_filename(tmp, "run.sqlite", NULL);
  g_assert_true(g_file_set_contents(log, ncclt_log, -1, NULL));
  g_assert_true(g_file_set_contents(et, pyt_et, -1, NULL));
  write_nsys(db);
  static const char *const outs[] = {"--svg", "--json", "--html"};
  for (guint i = 0; i < G_N_ELEMENTS(outs); i++)
    expect_refused(tmp, (const char *[]){"collbench", "-n", "dgx-h100", "--compare-csv", "ar.log", outs[i], "ar.log",
                                         NULL}, "ar.log", outs[i]);
  expect_refused(tmp, (const char *[]){"calibrate", "--nccl-tests", "ar.log", "-n", "dgx-h100", "-o", "ar.log", NULL},
                 "ar.log", "-o");
  expect_refused(tmp, (const char *[]){"simulate", "et.json", "-n", "dgx-h100", "--json", "et.json", NULL}, "et.json",
                 "--json");
  expect_refused(tmp, (const char *[]){"simulate", "run.sqlite", "-n", "dgx-h100", "--json", "run.sqlite", NULL},
                 "run.sqlite", "--json");
  expect_refused(tmp, (const char *[]){"metrics", "run.sqlite", "--json", "run.sqlite", NULL}, "run.sqlite", "--json");
  /* The same inputs with outputs of their own still run. */
  expect_run(tmp, (const char *[]){"calibrate", "--nccl-tests", "ar.log", "-n", "dgx-h100", "-o", "fit.yaml", NULL}, 0,
             NULL);
  expect_run(tmp, (const char *[]){"simulate", "run.sqlite", "-n", "dgx-h100", "--json", "r.json", NULL}, 0, NULL);
  test_rm_rf(tmp);
  g_free(log);
  g_free(et);
  g_free(db);
  g_free(tmp);
}

/* collbench --svg X --json X: the SVG was not declared, so one output
 * silently replaced the other. */
static void test_collbench_same_output(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-out-XXXXXX", NULL);
  char *log = g_build_filename(tmp, "ar.log", NULL), *x = g_build_filename(tmp, "x", NULL);
  g_assert_true(g_file_set_contents(log, ncclt_log, -1, NULL));
  expect_run(tmp, (const char *[]){"collbench", "-n", "dgx-h100", "--compare-csv", "ar.log", "--svg", "x", "--json",
                                   "x", NULL}, 2, "--json x and --svg x name the same file");
  g_assert_false(g_file_test(x, G_FILE_TEST_EXISTS));
  test_rm_rf(tmp);
  g_free(log);
  g_free(x);
  g_free(tmp);
}

/* The path of dir's first entry (in directory order) whose name starts
 * with prefix and ends with suffix; NULL when none (g_free). */
static char *entry_with(const char *dir, const char *prefix, const char *suffix)
{
  GDir *d = g_dir_open(dir, 0, NULL);
  char *found = NULL;
  const char *name;
  while (d && !found && (name = g_dir_read_name(d)) != NULL)
    if (g_str_has_prefix(name, prefix) && g_str_has_suffix(name, suffix))
      found = g_build_filename(dir, name, NULL);
  if (d)
    g_dir_close(d);
  return found;
}

/* $TMPDIR holds --html's temporary JSON. */
static gboolean html_temp_seen(const char *tmpdir)
{
  char *p = entry_with(tmpdir, "wisp-html-", "");
  g_free(p);
  return p != NULL;
}

/* $TMPDIR holds wisp search's points directory with a point in it. */
static gboolean search_point_seen(const char *tmpdir)
{
  char *dir = entry_with(tmpdir, "wisp-search-", ""), *p = dir ? entry_with(dir, "P", ".point") : NULL;
  g_free(dir);
  g_free(p);
  return p != NULL;
}

/* Starts wisp (argv after the binary) in cwd with TMPDIR=tmpdir, polls every
 * 0.2 ms until seen(tmpdir), sends SIGTERM and reaps it.  TRUE when the
 * signal was sent (the process must then have died of it); FALSE when the
 * run ended first. */
static gboolean term_when_seen(const char *cwd, const char *const *args, const char *tmpdir,
                               gboolean (*seen)(const char *tmpdir))
{
  GPtrArray *a = g_ptr_array_new();
  g_ptr_array_add(a, (gpointer)g_getenv("WISP_BIN"));
  for (const char *const *p = args; *p; p++)
    g_ptr_array_add(a, (gpointer)*p);
  g_ptr_array_add(a, NULL);
  char **env = g_environ_setenv(g_get_environ(), "TMPDIR", tmpdir, TRUE);
  GPid pid;
  GError *error = NULL;
  g_assert_true(g_spawn_async(cwd, (char **)a->pdata, env, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL |
                              G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &pid, &error));
  int status = 0;
  gboolean sent = FALSE;
  for (;;) {
    if (seen(tmpdir)) {
      kill(pid, SIGTERM);
      sent = TRUE;
      break;
    }
    if (waitpid(pid, &status, WNOHANG) == pid)
      break;
    g_usleep(200);
  }
  if (sent) {
    g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
    g_assert_true(WIFSIGNALED(status));
    g_assert_cmpint(WTERMSIG(status), ==, SIGTERM);
  }
  g_spawn_close_pid(pid);
  g_strfreev(env);
  g_ptr_array_free(a, TRUE);
  return sent;
}

/* simulate --html without --json keeps its JSON in $TMPDIR/wisp-html-*.json
 * (made before the run, read back for the page); SIGTERM left it there.
 * Retried with a larger --scale when the run ends before the poll sees it;
 * losing every race leaves the test incomplete, not passed. */
static void test_html_temp_on_signal(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-out-XXXXXX", NULL), *tdir = g_build_filename(tmp, "t", NULL);
  g_assert_cmpint(g_mkdir(tdir, 0755), ==, 0);
  test_write_allreduce(tmp, "w", 8, 1 << 20, 100);
  gboolean caught = FALSE;
  for (int dp = 256; dp <= 8192 && !caught; dp *= 4) {
    char *scale = g_strdup_printf("dp=%d", dp);
    caught = term_when_seen(tmp, (const char *[]){"simulate", "w", "-n", "dgx-h100", "--scale", scale, "--html",
                                                  "p.html", NULL}, tdir, html_temp_seen);
    g_free(scale);
  }
  if (caught)
    g_assert_cmpuint(test_dir_entries(tdir), ==, 0);
  else
    g_test_incomplete("every run finished before its temporary JSON was seen");
  test_rm_rf(tmp);
  g_free(tdir);
  g_free(tmp);
}

/* wisp search without -o keeps its points in $TMPDIR/wisp-search-XXXXXX;
 * SIGTERM once a point file is there left the directory and its files, and
 * the workers wrote more points into it after their parent died.  Now it
 * is gone, and still gone 2 s later (several points of this search): the
 * handler removed it after the files the workers renamed in meanwhile. */
static void test_search_temp_on_signal(void)
{
  test_example_env ex;
  if (!test_example_setup(&ex, "wisp-hostile-out-XXXXXX"))
    return;
  char *tdir = g_build_filename(ex.dir, "t", NULL);
  char *card = g_build_filename(g_getenv("G_TEST_SRCDIR"), "examples", "cards", "example-llm.yaml", NULL);
  char *net = g_build_filename(g_getenv("G_TEST_SRCDIR"), "examples", "cluster-1024.yaml", NULL);
  g_assert_cmpint(g_mkdir(tdir, 0755), ==, 0);
  gboolean caught = term_when_seen(NULL, (const char *[]){"search", ex.example, "--card", card, "-n", net, "--jobs",
                                                         "2", "--max-gpus", "1024", NULL}, tdir, search_point_seen);
  if (caught) {
    g_assert_cmpuint(test_dir_entries(tdir), ==, 0);
    g_usleep(2 * G_USEC_PER_SEC);
    g_assert_cmpuint(test_dir_entries(tdir), ==, 0);
  } else {
    g_test_incomplete("the search finished before a point file was seen");
  }
  g_free(card);
  g_free(net);
  g_free(tdir);
  test_example_teardown(&ex);
}

/* A sweep's parent killed (SIGKILL: no handler of its own runs) while its
 * two workers run points of about 0.5 s: the workers finished their
 * current points and wrote their rows after the parent was gone.  Now they
 * end with it, so the row count seen 3 s after the kill is the count at
 * the kill, and no temporary row file is left. */
static void test_sweep_workers_end(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-out-XXXXXX", NULL);
  test_write_allreduce(tmp, "w", 8, 1 << 20, 100);
  char *spec = g_build_filename(tmp, "s.yaml", NULL), *pts = g_build_filename(tmp, "o", "k.points", NULL);
  g_assert_true(g_file_set_contents(spec, "sweep_version: 1\nname: k\ncluster: dgx-h100\naxes:\n  - {key: compute, "
                                    "values: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]}\n", -1, NULL));
  const char *argv[] = {g_getenv("WISP_BIN"), "sweep", "s.yaml", "-w", "w", "--scale", "dp=8192", "-o", "o", "--jobs",
                        "2", "--no-progress", NULL};
  GPid pid;
  g_assert_true(g_spawn_async(tmp, (char **)argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL |
                              G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &pid, NULL));
  int status = 0;
  gboolean killed = FALSE;
  while (!killed && waitpid(pid, &status, WNOHANG) != pid) {
    char *row = entry_with(pts, "P", ".row");
    g_free(row);
    if (row != NULL) {
      kill(pid, SIGKILL);
      g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
      killed = TRUE;
    }
    g_usleep(200);
  }
  g_spawn_close_pid(pid);
  if (killed) {
    guint at_kill = test_dir_entries(pts);
    g_usleep(3 * G_USEC_PER_SEC);
    g_assert_cmpuint(test_dir_entries(pts), <=, at_kill);
    GDir *d = g_dir_open(pts, 0, NULL);
    const char *name;
    while ((name = g_dir_read_name(d)) != NULL)
      g_assert_null(strstr(name, ".tmp."));
    g_dir_close(d);
  } else {
    g_test_incomplete("the sweep finished before its first row was seen");
  }
  test_rm_rf(tmp);
  g_free(spec);
  g_free(pts);
  g_free(tmp);
}

/* Output names cannot escape the output directory (what to build, item
 * 4; convert -p is /hostile/convert_prefix): a sweep spec's name is part
 * of its file names (NAME.csv, NAME.points/), so '../esc', '/tmp/x' and
 * 'a/b' are refused before anything is written; no directory is made. */
static void test_sweep_name_escape(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-hostile-out-XXXXXX", NULL), *sub = g_build_filename(tmp, "d", NULL);
  g_assert_cmpint(g_mkdir(sub, 0755), ==, 0);
  test_write_allreduce(sub, "w", 2, 1 << 20, 100);
  static const char *const names[] = {"../esc", "/tmp/wisp-hostile-esc", "a/b"};
  for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
    char *text = g_strdup_printf("sweep_version: 1\nname: %s\ncluster: dgx-h100\naxes:\n  - {key: compute, "
                                 "values: [1, 2]}\n", names[i]);
    char *spec = g_build_filename(sub, "s.yaml", NULL);
    g_assert_true(g_file_set_contents(spec, text, -1, NULL));
    expect_run(sub, (const char *[]){"sweep", "s.yaml", "-w", "w", "-o", "o", "--jobs", "1", "--no-progress", NULL}, 1,
               "s.yaml:2: 'name' is used in file names: give letters, digits, '-' or '_'");
    g_free(text);
    g_free(spec);
  }
  char *esc = g_build_filename(tmp, "esc.csv", NULL), *o = g_build_filename(sub, "o", NULL);
  g_assert_false(g_file_test(esc, G_FILE_TEST_EXISTS));
  g_assert_false(g_file_test(o, G_FILE_TEST_EXISTS));
  g_assert_false(g_file_test("/tmp/wisp-hostile-esc.csv", G_FILE_TEST_EXISTS));
  g_free(esc);
  g_free(o);
  test_rm_rf(tmp);
  g_free(sub);
  g_free(tmp);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/hostile_output/reader_inputs", test_reader_inputs);
  g_test_add_func("/hostile_output/collbench_same_output", test_collbench_same_output);
  g_test_add_func("/hostile_output/html_temp_on_signal", test_html_temp_on_signal);
  g_test_add_func("/hostile_output/search_temp_on_signal", test_search_temp_on_signal);
  g_test_add_func("/hostile_output/sweep_workers_end", test_sweep_workers_end);
  g_test_add_func("/hostile_output/sweep_name_escape", test_sweep_name_escape);
  return g_test_run();
}
