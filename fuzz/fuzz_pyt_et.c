/* fuzz_pyt_et.c: libFuzzer harness for the PyTorch execution-trace reader
 * (frontends/pyt_et.c) and its graph builder (pyt_et_graph.c).
 *
 * Each input is the text of one rank's execution trace: it is parsed
 * (pet_trace_parse) and, when it parses, turned into rank 0's graph of a
 * 2-rank job (pet_rank_graph: the operator tree walk, tensor edges,
 * collectives and their splits).  The linker (pyt_et_link.c) reads the
 * same pet_trace and is not run here.  Errors are expected and must be
 * WISP_ERROR GErrors; crashes, leaks, hangs and sanitizer reports are
 * bugs.  Build and run with fuzz/run.sh.
 */
#include "config.h"

#include "frontends/pyt_et_internal.h"
#include "fuzz/fuzz_util.h"

#include <stdint.h>
#include <stddef.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  GError *error = NULL;
  pet_trace *t = pet_trace_parse((const char *)data, size, "fuzz", &error);
  g_assert(t != NULL || (error != NULL && error->domain == WISP_ERROR));
  if (t == NULL) {
    g_error_free(error);
    return 0;
  }
  uint64_t p2p = 0, reordered = 0;
  et_graph *g = pet_rank_graph(t, 2, &p2p, &reordered, &error);
  g_assert(g != NULL || (error != NULL && error->domain == WISP_ERROR));
  et_graph_free(g);
  g_clear_error(&error);
  pet_trace_free(t);
  return 0;
}
