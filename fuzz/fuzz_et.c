/* fuzz_et.c: libFuzzer harness for the Chakra ET reader (chakra/et_io.c,
 * chakra/et_graph.c).
 *
 * et_read_file streams a path, so each input is written to a temporary
 * file and read three ways:
 *   1. as is, with the builder flags given by the low 3 bits of the input
 *      size (strict, data-deps-only, break-cycles in every combination);
 *      inputs starting with 1f 8b take the reader's gzip path with
 *      arbitrary (mostly corrupt) compressed data;
 *   2. gzip-compressed by the harness (inputs up to 64 KiB), so the
 *      mutations reach the frame decoder through the inflating reader and
 *      its buffer refills, with ET_BUILD_BREAK_CYCLES;
 *   3. when (1) succeeds, the graph is written back with et_write_file and
 *      read again without flags: the writer must produce a file its own
 *      reader accepts, with the same number of nodes.
 * Errors are expected and must be WISP_ERROR; crashes, leaks, hangs and
 * sanitizer reports are bugs.  Build and run with fuzz/run.sh.
 */
#include "config.h"

#include "chakra/et_io.h"
#include "fuzz/fuzz_util.h"

#include <stdint.h>
#include <stddef.h>
#include <zlib.h>

#include "regress/test_util.h" /* after zlib.h: test_gzip */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static et_graph *read_expect(const char *path, unsigned flags)
{
  GError *error = NULL;
  et_graph *g = et_read_file(path, flags, &error);
  if (!g) {
    g_assert(error != NULL && error->domain == WISP_ERROR);
    g_error_free(error);
    return NULL;
  }
  g_assert(error == NULL && g->n_nodes >= 1);
  return g;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static char *plain, *gz, *back;
  if (!plain) {
    plain = fuzz_path("in.et");
    gz = fuzz_path("in.et.gz");
    back = fuzz_path("back.et");
  }
  fuzz_write(plain, data, size);
  et_graph *g = read_expect(plain, (unsigned) (size & 7));
  if (g) {
    GError *error = NULL;
    if (et_write_file(g, back, &error)) {
      et_graph *again = read_expect(back, 0);
      g_assert(again != NULL);
      g_assert(again->n_nodes == g->n_nodes);
      et_graph_free(again);
    } else {
      g_assert(error != NULL && error->domain == WISP_ERROR);
      g_error_free(error);
    }
    et_graph_free(g);
  }
  if (size <= 1 << 16) {
    size_t zl;
    guint8 *z = test_gzip(data, size, 1, &zl);
    g_assert(z != NULL);
    fuzz_write(gz, z, zl);
    g_free(z);
    et_graph_free(read_expect(gz, ET_BUILD_BREAK_CYCLES));
  }
  return 0;
}
