/* fuzz_nccltests.c: libFuzzer harness for the nccl-tests result reader
 * (collectives/coll_nccltests.c): wisp's CSV and the raw standard output
 * of the nccl-tests binaries, both through coll_ncclt_load (which takes a
 * path, so each input is written to a file first; fuzz_util.h).
 *
 * When the file is read, every table is looked up and listed and every row
 * is checked against the reader's documented promises: sizes in
 * (0, 2^50], finite positive times, finite non-negative bandwidths, a row
 * belonging to a listed table.  Errors are expected (a WISP_ERROR each);
 * crashes, leaks, hangs, sanitizer reports, GLib criticals and broken
 * promises are bugs.  Build and run with fuzz/run.sh.
 */
#include "config.h"

#include "collectives/coll_nccltests.h"
#include "fuzz/fuzz_util.h"

#include <math.h>
#include <stdint.h>
#include <stddef.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size > 1 << 18)
    return 0; /* result files are small; keep the search on the format */
  char *path = fuzz_path(size % 2 ? "r.csv" : "r.log");
  if (!g_file_set_contents(path, (const char *)data, (gssize)size, NULL))
    abort();
  GError *error = NULL;
  coll_ncclt_log *log = coll_ncclt_load(path, &error);
  if (log == NULL) {
    g_assert(error != NULL && error->domain == WISP_ERROR);
    g_error_free(error);
    g_free(path);
    return 0;
  }
  g_assert(error == NULL && log->rows->len > 0);
  for (guint i = 0; i < log->rows->len; i++) {
    const coll_ncclt_row *r = &g_array_index(log->rows, coll_ncclt_row, i);
    if (r->size == 0 || r->size > COLL_NCCLT_MAX_SIZE || !isfinite(r->time_us) || r->time_us <= 0 ||
        !isfinite(r->busbw_GBps) || r->busbw_GBps < 0 || (r->algbw_GBps != -1 && !(r->algbw_GBps >= 0)))
      g_error("row %u (line %d) breaks the reader's promises: size %" G_GUINT64_FORMAT ", time %g us, busbw %g",
              i, r->line, r->size, r->time_us, r->busbw_GBps);
    g_assert(coll_ncclt_find(log, r->table) != NULL);
    et_coll_type type;
    (void)coll_ncclt_op(r->test, &type);
    (void)coll_ncclt_is_sendrecv(r->test);
  }
  char *list = coll_ncclt_list(log);
  g_free(list);
  coll_ncclt_log_free(log);
  GArray *rows = coll_ncclt_read(path, &error);
  if (rows)
    g_array_free(rows, TRUE);
  else
    g_clear_error(&error);
  g_free(path);
  return 0;
}
