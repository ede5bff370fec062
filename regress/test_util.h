/* test_util.h: small helpers shared by tests and benchmarks (header only,
 * static, so each program stays self-contained). */
#ifndef WISP_TEST_UTIL_H
#define WISP_TEST_UTIL_H

#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/wait.h>

/* Removes a file or a directory tree (like rm -rf, without spawning a
 * process).  Missing paths are ignored.  Recursion depth = tree depth. */
G_GNUC_UNUSED static void test_rm_rf(const char *path)
{
  if (g_file_test(path, G_FILE_TEST_IS_DIR) && !g_file_test(path, G_FILE_TEST_IS_SYMLINK)) {
    GDir *d = g_dir_open(path, 0, NULL);
    const char *e;
    while (d && (e = g_dir_read_name(d)) != NULL) {
      char *p = g_build_filename(path, e, NULL);
      test_rm_rf(p);
      g_free(p);
    }
    if (d)
      g_dir_close(d);
    g_rmdir(path);
  } else {
    g_unlink(path);
  }
}

/* Number of entries in a directory (a leftover temporary file would show
 * up).  O(entries). */
G_GNUC_UNUSED static guint test_dir_entries(const char *dir)
{
  GDir *d = g_dir_open(dir, 0, NULL);
  g_assert_nonnull(d);
  guint n = 0;
  while (g_dir_read_name(d) != NULL)
    n++;
  g_dir_close(d);
  return n;
}

/* Extracts the gzip tarball tgz into dir with tar(1) (found on PATH);
 * asserts that it succeeds. */
G_GNUC_UNUSED static void test_untar(const char *tgz, const char *dir)
{
  char *argv[] = { (char *)"tar", (char *)"-xzf", (char *)tgz, (char *)"-C", (char *)dir, NULL };
  int status = 1;
  GError *error = NULL;
  g_assert_true(g_spawn_sync(NULL, argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL,
                             NULL, &status, &error));
  g_assert_no_error(error);
  g_assert_true(g_spawn_check_wait_status(status, NULL));
}

/* Runs the `wisp` binary named by $WISP_BIN (set by make check) with args
 * (NULL-terminated) in directory cwd (NULL: here); returns its exit status
 * (-1 when it did not exit) and, when given, its standard output and
 * standard error (g_free them).  The status, the killing signal if any
 * (a crash) and standard error go to the test log. */
G_GNUC_UNUSED static int test_wisp_run_in(const char *cwd, const char *const *args, char **out, char **err)
{
  GPtrArray *a = g_ptr_array_new();
  g_ptr_array_add(a, (gpointer)g_getenv("WISP_BIN"));
  for (const char *const *p = args; *p; p++)
    g_ptr_array_add(a, (gpointer)*p);
  g_ptr_array_add(a, NULL);
  int status = 0;
  char *o = NULL, *e = NULL;
  GError *error = NULL;
  if (!g_spawn_sync(cwd, (char **)a->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &o, &e, &status, &error))
    g_error("cannot run %s: %s", (char *)a->pdata[0], error->message);
  g_ptr_array_free(a, TRUE);
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (WIFSIGNALED(status))
    g_test_message("wisp %s ... was killed by signal %d", args[0], WTERMSIG(status));
  g_test_message("wisp %s ... exited %d; stderr: %.2000s", args[0], code, e);
  if (out)
    *out = o;
  else
    g_free(o);
  if (err)
    *err = e;
  else
    g_free(e);
  return code;
}

/* Skips the test because `rel` (a path under WISP_SHARED_DATA) or the
 * binary is absent, saying which: "run through make check" only when the
 * variables make check sets are missing, else which data set is absent
 * from which directory (issue 29 item 11: a skip under make check said
 * "run via make check"). */
G_GNUC_UNUSED static void test_skip_absent(const char *rel)
{
  const char *sd = g_getenv("WISP_SHARED_DATA");
  char *msg = !g_getenv("WISP_BIN") || sd == NULL
                  ? g_strdup_printf("WISP_BIN or WISP_SHARED_DATA not set (run through make check); needs %s", rel)
                  : g_strdup_printf("%s is absent from WISP_SHARED_DATA=%s (unpack the shared data there)", rel, sd);
  g_test_skip(msg);
  g_free(msg);
}

/* TRUE when the CLI tests can run (make check sets WISP_BIN and
 * G_TEST_SRCDIR); otherwise the test is skipped with the reason. */
G_GNUC_UNUSED static gboolean test_have_bin(void)
{
  if (g_getenv("WISP_BIN") && g_getenv("G_TEST_SRCDIR"))
    return TRUE;
  g_test_skip("WISP_BIN or G_TEST_SRCDIR not set (run through make check)");
  return FALSE;
}

/* The DLRM Kineto traces (WISP_SHARED_DATA/param/dlrm_kineto.tar.gz, 8
 * ranks of one A100 node) unpacked into a fresh temporary directory made
 * from tmp_template (returned in *dir, for test_rm_rf); returns the trace
 * directory, or NULL with the test skipped and the reason given when the
 * wisp binary or the data is missing.  Used by the CLI tests on DLRM. */
G_GNUC_UNUSED static char *test_dlrm_kineto(const char *tmp_template, char **dir)
{
  const char *sd = g_getenv("WISP_SHARED_DATA");
  char *tgz = sd ? g_build_filename(sd, "param", "dlrm_kineto.tar.gz", NULL) : NULL;
  *dir = NULL;
  if (!g_getenv("WISP_BIN") || tgz == NULL || !g_file_test(tgz, G_FILE_TEST_EXISTS)) {
    g_test_skip("WISP_BIN or WISP_SHARED_DATA/param/dlrm_kineto.tar.gz missing (make check sets both)");
    g_free(tgz);
    return NULL;
  }
  *dir = g_dir_make_tmp(tmp_template, NULL);
  test_untar(tgz, *dir);
  g_free(tgz);
  return g_build_filename(*dir, "dlrm_kineto", NULL);
}

/* Both halves of the DLRM job (WISP_SHARED_DATA/param/dlrm_kineto.tar.gz
 * and dlrm_pytorch_et.tar.gz: 8 Kineto traces and their PyTorch execution
 * traces) unpacked into a fresh temporary directory made from
 * tmp_template, which is returned (test_rm_rf, g_free) holding
 * dlrm_kineto/ and dlrm_pytorch_et/; NULL with the test skipped and the
 * reason given when the data is missing.  Used by the tests of the
 * execution-trace frontend and the CLI tests on DLRM. */
G_GNUC_UNUSED static char *test_dlrm_halves(const char *tmp_template)
{
  const char *sd = g_getenv("WISP_SHARED_DATA");
  char *k = sd ? g_build_filename(sd, "param/dlrm_kineto.tar.gz", NULL) : NULL;
  char *p = sd ? g_build_filename(sd, "param/dlrm_pytorch_et.tar.gz", NULL) : NULL;
  char *tmp = NULL;
  if (!k || !g_file_test(k, G_FILE_TEST_EXISTS) || !g_file_test(p, G_FILE_TEST_EXISTS)) {
    g_test_skip("WISP_SHARED_DATA/param/dlrm_{kineto,pytorch_et}.tar.gz not found (make check sets WISP_SHARED_DATA)");
  } else {
    tmp = g_dir_make_tmp(tmp_template, NULL);
    test_untar(k, tmp);
    test_untar(p, tmp);
  }
  g_free(k);
  g_free(p);
  return tmp;
}

/* Asserts that text (NULL reads as "") contains needle; on failure the
 * test log shows both.  O(length of text). */
G_GNUC_UNUSED static void test_expect_has(const char *text, const char *needle)
{
  if (strstr(text ? text : "", needle) == NULL) {
    g_test_message("expected to find:\n%s\nin:\n%s", needle, text ? text : "(null)");
    g_assert_nonnull(strstr(text ? text : "", needle));
  }
}

/* examples/make_dp's data-parallel job of n ranks (one 64 MiB all-reduce
 * per step after compute) written into dir as the Chakra set dir/dp.*;
 * returns the prefix dir/dp (g_free).  Needs G_TEST_BUILDDIR (make check). */
G_GNUC_UNUSED static char *test_make_dp(const char *dir, int n)
{
  char *gen = g_build_filename(g_getenv("G_TEST_BUILDDIR"), "examples", "make_dp", NULL), *ns = g_strdup_printf("%d", n);
  char *argv[] = {gen, (char *)dir, (char *)"dp", ns, NULL};
  int status = 1;
  g_assert_true(g_spawn_sync(NULL, argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, NULL, &status, NULL));
  g_assert_true(g_spawn_check_wait_status(status, NULL));
  g_free(gen);
  g_free(ns);
  return g_build_filename(dir, "dp", NULL);
}

/* test_wisp_run_in here, standard output only. */
G_GNUC_UNUSED static int test_wisp_run(const char *const *args, char **out)
{
  return test_wisp_run_in(NULL, args, out, NULL);
}

/* The bundled example workload for CLI tests: examples/make_example's
 * "llm" set in a fresh temporary directory (dir), its path (example) and
 * the 2-node cluster config (cluster).  FALSE, with the test skipped and
 * the reason given, outside `make check` (no WISP_BIN, G_TEST_SRCDIR,
 * G_TEST_BUILDDIR) or when the generator is not built. */
typedef struct {
  char *dir, *example, *cluster;
} test_example_env;

G_GNUC_UNUSED static gboolean test_example_setup(test_example_env *v, const char *tmp_template)
{
  const char *bin = g_getenv("WISP_BIN"), *src = g_getenv("G_TEST_SRCDIR"), *build = g_getenv("G_TEST_BUILDDIR");
  if (!bin || !src || !build) {
    g_test_skip("WISP_BIN, G_TEST_SRCDIR or G_TEST_BUILDDIR not set (run through make check)");
    return FALSE;
  }
  char *gen = g_build_filename(build, "examples", "make_example", NULL);
  if (!g_file_test(gen, G_FILE_TEST_IS_EXECUTABLE)) {
    g_test_skip("examples/make_example is not built");
    g_free(gen);
    return FALSE;
  }
  v->dir = g_dir_make_tmp(tmp_template, NULL);
  char *argv[] = {gen, v->dir, (char *)"llm", NULL};
  int status = 1;
  g_assert_true(g_spawn_sync(NULL, argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, NULL, &status, NULL));
  g_assert_true(g_spawn_check_wait_status(status, NULL));
  g_free(gen);
  v->example = g_build_filename(v->dir, "llm", NULL);
  v->cluster = g_build_filename(src, "examples", "cluster-2node.yaml", NULL);
  return TRUE;
}

G_GNUC_UNUSED static void test_example_teardown(test_example_env *v)
{
  test_rm_rf(v->dir);
  g_free(v->dir);
  g_free(v->example);
  g_free(v->cluster);
}

/* A temporary directory holding one file per rank, "rank<R>.json", for
 * frontends that take a list of per-rank paths. */
typedef struct {
  char *dir;
  int n;
  char **paths;            /* n paths; pass as (const char *const *) */
} test_rank_files;

/* Makes the directory (g_dir_make_tmp template tmpl) and writes texts[r]
 * as rank r's file, for r < n; asserts that everything succeeds. */
G_GNUC_UNUSED static void test_rank_files_write(test_rank_files *f, const char *tmpl, char *const *texts, int n)
{
  f->dir = g_dir_make_tmp(tmpl, NULL);
  g_assert_nonnull(f->dir);
  f->n = n;
  f->paths = g_new0(char *, n + 1);
  for (int r = 0; r < n; r++) {
    char *name = g_strdup_printf("rank%d.json", r);
    f->paths[r] = g_build_filename(f->dir, name, NULL);
    g_assert_true(g_file_set_contents(f->paths[r], texts[r], -1, NULL));
    g_free(name);
  }
}

/* Removes the directory and frees f's strings. */
G_GNUC_UNUSED static void test_rank_files_free(test_rank_files *f)
{
  test_rm_rf(f->dir);
  g_free(f->dir);
  g_strfreev(f->paths);
}

#endif

/* Helpers that need another header: each is defined when that header was
 * included before this one, and has its own guard so that a later include
 * (after the header) still defines it. */

#if defined(WISP_ET_IO_H) && !defined(WISP_TEST_UTIL_ET)
#define WISP_TEST_UTIL_ET
/* Writes w as Chakra files (DIR/et/trace.<r>.et and comm_group.json),
 * frees it and returns the workload read back from them; asserts that
 * both succeed.  Needs chakra/et_io.h. */
G_GNUC_UNUSED static et_workload *test_et_round_trip(et_workload *w, const char *dir)
{
  char *out = g_build_filename(dir, "et", NULL);
  g_assert_cmpint(g_mkdir_with_parents(out, 0755), ==, 0);
  GError *e = NULL;
  g_assert_true(et_workload_write(w, out, "trace", &e));
  g_assert_no_error(e);
  et_workload_free(w);
  et_workload *back = et_workload_load(out, 0, &e);
  g_assert_no_error(e);
  g_assert_nonnull(back);
  g_free(out);
  return back;
}
#endif

#if defined(WISP_SIM_REPLAY_H) && defined(WISP_TOPO_H) && !defined(WISP_TEST_UTIL_PAIR)
#define WISP_TEST_UTIL_PAIR
/* Step time of w (2 ranks) replayed on two fully connected endpoints of
 * link bandwidth `bandwidth` (a wisp unit string) and zero latency, the
 * analytical tier; asserts that the run succeeds.  Needs
 * replay/sim_replay.h and topologies/topo.h. */
G_GNUC_UNUSED static sim_time_ps test_replay_pair(const et_workload *w, const char *bandwidth)
{
  char *yaml = g_strdup_printf("schema_version: 1\nlibrary: {name: ideal}\nname: pair\nmodel: analytical\ndims:\n"
                               "  - {name: link, kind: fully_connected, size: 2, bandwidth: %s, latency: 0ns}\n",
                               bandwidth);
  GError *e = NULL;
  topo *t = topo_load_string(yaml, "pair.yaml", &e);
  g_assert_no_error(e);
  sim_replay_options ro = { .quiet = TRUE };
  sim_result *r = sim_replay_run(w, t, &ro, &e);
  g_assert_no_error(e);
  sim_time_ps step = r->step_time;
  sim_result_free(r);
  topo_free(t);
  g_free(yaml);
  return step;
}
#endif

#if defined(cJSON__h) && !defined(WISP_TEST_UTIL_JSON)
#define WISP_TEST_UTIL_JSON
/* Parses the JSON file at path (cJSON_Delete it); asserts that it reads
 * and parses.  Needs cjson/cJSON.h. */
G_GNUC_UNUSED static cJSON *load_json(const char *path)
{
  char *t = NULL;
  g_assert_true(g_file_get_contents(path, &t, NULL, NULL));
  cJSON *d = cJSON_ParseWithOpts(t, NULL, TRUE);
  g_assert_nonnull(d);
  g_free(t);
  return d;
}
#endif

#if defined(ZLIB_H) && !defined(WISP_TEST_UTIL_GZIP)
#define WISP_TEST_UTIL_GZIP
/* gzip of `in` at zlib level `level` (g_free it), or NULL when zlib
 * fails.  One deflate call into a buffer of deflateBound size.  Needs
 * zlib.h. */
G_GNUC_UNUSED static guint8 *test_gzip(const guint8 *in, size_t len, int level, size_t *out_len)
{
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  if (deflateInit2(&zs, level, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return NULL;
  size_t cap = deflateBound(&zs, (uLong) len) + 64;
  guint8 *out = g_malloc(cap);
  zs.next_in = (Bytef *) in;
  zs.avail_in = (uInt) len;
  zs.next_out = out;
  zs.avail_out = (uInt) cap;
  gboolean ok = deflate(&zs, Z_FINISH) == Z_STREAM_END;
  *out_len = cap - zs.avail_out;
  deflateEnd(&zs);
  if (!ok) {
    g_free(out);
    return NULL;
  }
  return out;
}
#endif
