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

#endif
