/* fuzz_hlo.c: libFuzzer harness for the HLO instruction parser (frontends/hlo.c).
 *
 * Each input is one line of HLO text (NUL-terminated copy; an embedded NUL
 * ends the line, as it would for the C strings the XLA frontend passes).
 * It goes through fe_hlo_parse_instr and, when that succeeds, through
 * fe_hlo_global_groups for a device count that covers every id the line
 * names (capped at 4096) under the default and an explicit partition
 * count; the same text is also fed to fe_hlo_parse_shape,
 * fe_hlo_parse_replica_groups, fe_hlo_classify and fe_hlo_dtype_bits
 * directly, so their own entry checks see arbitrary bytes.  Errors are
 * expected and must be WISP_ERROR; crashes, leaks, hangs and sanitizer
 * reports are bugs.  Build and run with fuzz/run.sh.
 */
#include "config.h"

#include "frontends/hlo.h"
#include "fuzz/fuzz_util.h"

#include <stdint.h>
#include <stddef.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void expect_error(GError **error)
{
  g_assert(*error != NULL && (*error)->domain == WISP_ERROR);
  g_clear_error(error);
}

static void free_groups(GPtrArray *groups)
{
  for (guint i = 0; i < groups->len; i++)
    g_array_free(groups->pdata[i], TRUE);
  g_ptr_array_set_size(groups, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size > 1 << 16)
    return 0; /* HLO lines are short; keep the search on the grammar */
  char *text = g_strndup((const char *) data, size);
  GError *error = NULL;

  fe_hlo_instr in;
  const char *why = NULL;
  if (fe_hlo_parse_instr(text, &in, &why, &error)) {
    g_assert(error == NULL);
    g_assert(in.sized || why == NULL || why[0] != '\0');
    /* Devices: enough for every id named (ids beyond 4096 give the expected
     * out-of-range error instead of a huge allocation). */
    int64_t n_dev = 1;
    if (in.has_replica_groups)
      for (uint32_t k = 0; k < in.group_off[in.n_groups]; k++)
        n_dev = MAX(n_dev, MIN(in.group_ids[k], 4095) + 1);
    for (uint32_t k = 0; in.has_pairs && k < 2 * in.n_pairs; k++)
      n_dev = MAX(n_dev, MIN(in.pairs[k], 4095) + 1);
    GPtrArray *groups = g_ptr_array_new();
    int64_t parts[2] = { 0, n_dev % 2 == 0 ? 2 : 1 };
    for (int i = 0; i < 2; i++) {
      if (fe_hlo_global_groups(&in, n_dev, parts[i], groups, &error)) {
        for (guint g = 0; g < groups->len; g++) {
          GArray *a = groups->pdata[g];
          for (guint m = 0; m < a->len; m++) {
            int64_t id = g_array_index(a, int64_t, m);
            g_assert(id >= 0 && id < n_dev);
          }
        }
      } else {
        expect_error(&error);
      }
      free_groups(groups);
    }
    g_ptr_array_free(groups, TRUE);
    fe_hlo_instr_clear(&in);
  } else {
    expect_error(&error);
  }

  /* The lower-level entry points on the raw text. */
  const char *end = NULL;
  uint64_t bytes = 0, first = 0;
  if (fe_hlo_parse_shape(text, &end, &bytes, &first, &error))
    g_assert(end >= text && end <= text + strlen(text));
  else
    expect_error(&error);
  uint32_t n_groups = 0, *off = NULL;
  int64_t *ids = NULL;
  if (fe_hlo_parse_replica_groups(text, &end, &n_groups, &off, &ids, &error)) {
    g_assert(end >= text && end <= text + strlen(text));
    g_free(off);
    g_free(ids);
  } else {
    expect_error(&error);
  }
  fe_hlo_phase phase;
  (void) fe_hlo_classify(text, text, &phase);
  unsigned bits;
  (void) fe_hlo_dtype_bits((const char *) data, MIN(size, 16), &bits);
  g_free(text);
  return 0;
}
