/* test_util.h: small helpers shared by tests and benchmarks (header only,
 * static, so each program stays self-contained). */
#ifndef WISP_TEST_UTIL_H
#define WISP_TEST_UTIL_H

#include <glib.h>
#include <glib/gstdio.h>

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

#endif
