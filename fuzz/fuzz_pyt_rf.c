/* fuzz_pyt_rf.c: libFuzzer harness for the join of an execution trace's
 * collectives to the Kineto kernels by rf_id (frontends/pyt_et_rfid.c,
 * pet_rf_link_kineto: Record function id -> CPU op -> External id ->
 * launch -> correlation -> GPU activity).
 *
 * One input is an execution trace and a Kineto trace of the same rank,
 * separated by a line "--kineto--": both halves are mutated together, so
 * rf_ids, External ids and correlations that match (or almost match)
 * across the two files are reachable.  An input without the separator is
 * the Kineto half alone, joined to a fixed two-collective execution trace.
 * The execution trace is parsed from memory (pet_trace_parse); the Kineto
 * half is written to a file, since the linker reads a path (fuzz_util.h),
 * named "kineto_rank1.json" so that the rank-from-name fallback runs too.
 * The join is tried with 1 and with 2 ranks (the rank the trace states
 * must be below n).  Every result is then checked against the linker's
 * promises: one status and one kernel start per collective, a start only
 * for a linked collective and never negative, a reason whenever no join
 * was possible.  Errors must be WISP_ERROR GErrors; crashes, leaks, hangs
 * and sanitizer reports are bugs.  Build and run with fuzz/run.sh.
 */
#include "config.h"

#include "frontends/pyt_et_internal.h"
#include "fuzz/fuzz_util.h"

#include <stdint.h>
#include <stddef.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char sep[] = "\n--kineto--\n";

static const char fixed_et[] =
  "{\"schema\": \"1.0.1\", \"pid\": 1, \"nodes\": ["
  "{\"name\": \"[pytorch|profiler|execution_graph|thread]\", \"id\": 2, \"rf_id\": 0, \"parent\": 1, \"tid\": 1, "
  "\"inputs\": [], \"outputs\": []},"
  "{\"name\": \"record_param_comms\", \"id\": 5, \"rf_id\": 7, \"parent\": 2, \"tid\": 1, \"inputs\": "
  "[[[11, 11, 0, 8, 4, \"cuda:0\"]], 7, 99, 0, \"allreduce\", [], []], \"outputs\": [[[11, 11, 0, 8, 4, \"cuda:0\"]]]},"
  "{\"name\": \"record_param_comms\", \"id\": 8, \"rf_id\": 9, \"parent\": 2, \"tid\": 1, \"inputs\": "
  "[[11, 11, 0, 6, 4, \"cuda:0\"], 8, 99, 0, \"all_gather\", [], []], \"outputs\": [[12, 12, 0, 6, 4, \"cuda:0\"]]}"
  "]}";

/* The linker's promises about one result (pyt_et_internal.h). */
static void check_links(const pet_rf_links *l, const pet_trace *t, int n)
{
  g_assert(l->status != NULL && l->kernel_ps != NULL);
  if (!l->has_rf) {
    g_assert(l->why != NULL && l->status->len == 0);
    return;
  }
  g_assert(l->rank >= 0 && l->rank < n);
  g_assert_cmpuint(l->status->len, ==, t->comms->len);
  g_assert_cmpuint(l->kernel_ps->len, ==, t->comms->len);
  for (guint i = 0; i < l->status->len; i++) {
    int st = g_array_index(l->status, int, i);
    int64_t ps = g_array_index(l->kernel_ps, int64_t, i);
    g_assert(st >= PET_RF_LINKED && st <= PET_RF_NO_KERNEL);
    g_assert(st == PET_RF_LINKED ? ps >= 0 : ps == -1);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static char *kpath;
  if (!kpath)
    kpath = fuzz_path("kineto_rank1.json");
  const char *text = (const char *)data;
  const char *at = size >= sizeof sep - 1 ? g_strstr_len(text, (gssize)size, sep) : NULL;
  const char *et = fixed_et, *kt = text;
  size_t et_len = sizeof fixed_et - 1, kt_len = size;
  if (at) {
    et = text;
    et_len = (size_t)(at - text);
    kt = at + sizeof sep - 1;
    kt_len = size - et_len - (sizeof sep - 1);
  }
  GError *error = NULL;
  pet_trace *t = pet_trace_parse(et, et_len, "fuzz-et", &error);
  g_assert(t != NULL || (error != NULL && error->domain == WISP_ERROR));
  if (t == NULL) {
    g_error_free(error);
    return 0;
  }
  fuzz_write(kpath, kt, kt_len);
  pet_trace *by_rank[2] = { t, t };
  for (int n = 1; n <= 2; n++) {
    pet_rf_links l;
    gboolean ok = pet_rf_link_kineto(by_rank, n, kpath, &l, &error);
    g_assert(ok || (error != NULL && error->domain == WISP_ERROR));
    if (ok)
      check_links(&l, t, n);
    pet_rf_links_clear(&l);
    g_clear_error(&error);
  }
  pet_trace_free(t);
  return 0;
}
