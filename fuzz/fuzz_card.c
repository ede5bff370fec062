/* fuzz_card.c: libFuzzer harness for the workload card reader
 * (config/cfg_card.c) and the frontends' section of it (fe_card_from_doc,
 * frontends/fe_card.c: MoE sizes, precision, layout counts).
 *
 * Each input is the text of a card (CCL-Bench YAML); it is parsed once and,
 * when it parses, read by the frontends' card reader.  Errors are
 * expected (a WISP_ERROR each); crashes, leaks, hangs, sanitizer reports
 * and GLib criticals are bugs.  Build and run with fuzz/run.sh.
 */
#include "config.h"

#include "config/cfg_card.h"
#include "frontends/fe.h"
#include "fuzz/fuzz_util.h"

#include <stdint.h>
#include <stddef.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size > 1 << 16)
    return 0; /* cards are small; keep the search on the grammar */
  char *text = g_strndup((const char *)data, size);
  GError *error = NULL;
  cfg_card *doc = cfg_card_load_string(text, "fuzz.yaml", &error);
  g_free(text);
  if (doc == NULL) {
    g_assert(error != NULL && error->domain == WISP_ERROR);
    g_error_free(error);
    return 0;
  }
  fe_workload_card *card = fe_card_from_doc(doc, &error);
  if (card == NULL) {
    g_assert(error != NULL && error->domain == WISP_ERROR);
    g_clear_error(&error);
  } else {
    fe_card_free(card);
  }
  cfg_card_free(doc);
  return 0;
}
