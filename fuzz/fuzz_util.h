/* fuzz_util.h: helpers shared by the libFuzzer harnesses (not library code).
 *
 * Every harness includes this header once: it defines LLVMFuzzerInitialize.
 * Some readers only take a path (the Chakra reader streams its file, the
 * XLA frontend picks the format by file name), so those harnesses write each
 * input to a file in a private temporary directory made once per process
 * (under $TMPDIR, /dev/shm when it exists) and removed at exit.  Writing a
 * small file costs a few microseconds, well below the parse itself.
 */
#ifndef WISP_FUZZ_UTIL_H
#define WISP_FUZZ_UTIL_H

#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);

/* GLib warnings and criticals (a GError set twice, a g_return_if_fail
 * precondition) are bugs too: print them and abort, which libFuzzer records
 * as a crash with the input (GLib's own fatal mode raises SIGTRAP, which
 * libFuzzer does not catch).  The library code never logs on purpose. */
static GLogWriterOutput fuzz_log_writer(GLogLevelFlags level, const GLogField *fields, gsize n_fields,
                                        gpointer user_data)
{
  GLogWriterOutput out = g_log_writer_default(level, fields, n_fields, user_data);
  if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING))
    abort();
  return out;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void) argc;
  (void) argv;
  g_log_set_writer_func(fuzz_log_writer, NULL, NULL);
  return 0;
}

static char *fuzz_dir;

static inline void fuzz_dir_remove(void)
{
  if (!fuzz_dir)
    return;
  GDir *d = g_dir_open(fuzz_dir, 0, NULL);
  const char *e;
  while (d && (e = g_dir_read_name(d)) != NULL) {
    char *p = g_build_filename(fuzz_dir, e, NULL);
    g_unlink(p);
    g_free(p);
  }
  if (d)
    g_dir_close(d);
  g_rmdir(fuzz_dir);
  g_free(fuzz_dir);
  fuzz_dir = NULL;
}

/* Returns DIR/name in the per-process directory (caller frees).  A failure
 * to make the directory is a broken environment, not an input bug: abort. */
static inline char *fuzz_path(const char *name)
{
  if (!fuzz_dir) {
    const char *base = g_getenv("TMPDIR");
    if (!base || !*base)
      base = g_file_test("/dev/shm", G_FILE_TEST_IS_DIR) ? "/dev/shm" : g_get_tmp_dir();
    char *tmpl = g_build_filename(base, "wisp-fuzz-XXXXXX", NULL);
    fuzz_dir = g_mkdtemp(tmpl);
    if (!fuzz_dir) {
      fprintf(stderr, "fuzz: cannot create a temporary directory under %s\n", base);
      abort();
    }
    atexit(fuzz_dir_remove);
  }
  return g_build_filename(fuzz_dir, name, NULL);
}

/* Writes len bytes to path (plain stdio: no atomic rename needed here). */
static inline void fuzz_write(const char *path, const void *data, size_t len)
{
  FILE *f = fopen(path, "wb");
  if (!f || (len && fwrite(data, 1, len, f) != len) || fclose(f) != 0) {
    fprintf(stderr, "fuzz: cannot write %s\n", path);
    abort();
  }
}

#endif
