/* fuzz_spec.c: libFuzzer harness for the sweep spec reader
 * (studies/study_spec.c) and the key application of each point
 * (study_spec_apply on a 2-tier, 16-rank network variant).
 *
 * Each input is the text of a sweep spec, written to a file (the reader
 * takes a path); when it loads, the values of the first 64 points are
 * applied axis by axis to a copy of the base variant, as `wisp sweep` does
 * before simulating a point.  Errors are expected (a WISP_ERROR each);
 * crashes, leaks, hangs, sanitizer reports and GLib criticals are bugs.
 * Build and run with fuzz/run.sh.
 */
#include "config.h"

#include "studies/study_sweep.h"
#include "topologies/topo.h"
#include "topologies/topo_variant.h"
#include "fuzz/fuzz_util.h"

#include <stdint.h>
#include <stddef.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static topo *base_topo;

static const char base_yaml[] =
  "schema_version: 1\n"
  "name: base\n"
  "model: analytical\n"
  "dims:\n"
  "  - {name: scale_up, kind: switch, size: 4, bandwidth: 300GB/s, latency: 500ns}\n"
  "  - {name: scale_out, kind: switch, size: 4, bandwidth: 25GB/s, latency: 2us}\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size > 1 << 16)
    return 0; /* specs are small */
  GError *error = NULL;
  if (base_topo == NULL) {
    base_topo = topo_load_string_bounded(base_yaml, "base.yaml", UINT64_C(1) << 20, &error);
    if (base_topo == NULL)
      g_error("fuzz_spec: the base network does not load: %s", error->message);
  }
  char *path = fuzz_path("spec.yaml");
  if (!g_file_set_contents(path, (const char *)data, (gssize)size, NULL))
    abort();
  study_spec *s = study_spec_load(path, &error);
  g_free(path);
  if (s == NULL) {
    g_assert(error != NULL && error->domain == WISP_ERROR);
    g_error_free(error);
    return 0;
  }
  topo_variant *base = topo_variant_new(base_topo);
  for (int p = 0; p < s->n_points && p < 64; p++) {
    topo_variant *v = topo_variant_copy(base);
    sim_replay_options opt = {0};
    for (int a = 0; a < s->n_axes; a++) {
      const char *value = study_spec_value(s, p, a);
      g_assert(value != NULL);
      if (!study_spec_apply(s->axes[a].key, value, v, &opt, &error)) {
        g_assert(error != NULL && error->domain == WISP_ERROR);
        g_clear_error(&error);
        break;
      }
    }
    topo_variant_free(v);
  }
  topo_variant_free(base);
  study_spec_free(s);
  return 0;
}
