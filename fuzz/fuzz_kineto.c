/* fuzz_kineto.c: libFuzzer harness for the Kineto frontend.
 *
 * Each input is treated as the text of one rank's trace: it is tokenized
 * and parsed (fe_json + kineto_parse), and when it parses, extracted as
 * rank 0 of a 2-rank job, matched (the second rank absent) and turned into
 * a graph with cycle checking, so the whole pipeline short of the Chakra
 * writer sees fuzzed data.  Each input is also parsed a second time through
 * the pull tokenizer alone (KT_PARSE_TOKENS_ONLY): the in-place event path
 * must give the same trace (kt_trace_dump) or the same error message, so a
 * difference aborts.  Errors are expected; crashes, leaks, hangs,
 * sanitizer reports and differences are bugs.  Build and run with
 * fuzz/run.sh.
 */
#include "config.h"

#include "frontends/kineto_graph.h"
#include "fuzz/fuzz_util.h"

#include <stdint.h>
#include <stddef.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The parse outcome as text: the dump, or the error. */
static char *outcome(const kt_trace *t, const GError *error)
{
  return t ? kt_trace_dump(t) : g_strdup_printf("error %d: %s", error->code, error->message);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  GError *error = NULL, *error_tok = NULL;
  kt_trace *t = kt_trace_parse(fe_json_new_mem(data, size, "fuzz"), "fuzz", &error);
  kt_trace *t_tok = kt_trace_parse_flags(fe_json_new_mem(data, size, "fuzz"), "fuzz", KT_PARSE_TOKENS_ONLY, &error_tok);
  g_assert(t != NULL || (error != NULL && error->domain == WISP_ERROR));
  char *a = outcome(t, error), *b = outcome(t_tok, error_tok);
  if (strcmp(a, b) != 0)
    g_error("in-place and tokenizer parses differ:\n--- in place\n%s\n--- tokenizer\n%s", a, b);
  g_free(a);
  g_free(b);
  kt_trace_free(t_tok);
  g_clear_error(&error_tok);
  if (!t) {
    g_error_free(error);
    return 0;
  }
  fe_kineto_options opt;
  fe_kineto_options_init(&opt);
  kt_rank *r = kt_rank_extract(t, 0, 2, &opt, &error);
  if (r) {
    const kt_rank *ranks[2] = { r, NULL };
    GPtrArray *warnings = g_ptr_array_new_with_free_func(g_free);
    kt_match *m = kt_match_ranks(ranks, 2, FALSE, warnings, &error);
    if (m) {
      kt_graph *g = kt_graph_build(r, &m->ranks[0], FE_KINETO_KERNELS, SIM_PS_PER_NS, FALSE);
      kt_graph_free(g);
      g = kt_graph_build(r, &m->ranks[0], FE_KINETO_KERNELS, 0, TRUE);
      kt_graph_free(g);
      g = kt_graph_build(r, &m->ranks[0], FE_KINETO_GAP, 0, FALSE);
      kt_graph_free(g);
      kt_match_free(m);
    } else {
      g_clear_error(&error);
    }
    g_ptr_array_free(warnings, TRUE);
    kt_rank_free(r);
  } else {
    g_clear_error(&error);
  }
  kt_trace_free(t);
  return 0;
}
