/* wisp_network.c: the one way a command opens the network an option names
 * (--network, --cluster, topo CONFIG); see cli/wisp_load.h.  Kept apart
 * from the workload loader so commands without workloads (topo,
 * collbench) link it alone. */
#include "config.h"
#include "cli/wisp_load.h"
#include "studies/study.h"

#include <string.h>

void wisp_cli_network_entries(char **network, const char *help, GOptionEntry *e)
{
  const GOptionEntry list[WISP_CLI_NETWORK_ENTRIES] = {
    {"network", 'n', 0, G_OPTION_ARG_FILENAME, network, help, "PRESET|CONFIG"},
    {"cluster", 'c', 0, G_OPTION_ARG_FILENAME, network, "same as --network", "PRESET|CONFIG"},
    {NULL},
  };
  memcpy(e, list, sizeof(list));
}

topo_variant *wisp_cli_network_open(const char *spec, int n_ranks, FILE *out, char **resolved, GError **error)
{
  char *notes = NULL;
  topo_variant *v = study_cluster_open(spec, n_ranks, resolved, &notes, error);
  if (v && out && notes && *notes)
    fprintf(out, "network %s: %s\n", spec, notes);
  g_free(notes);
  return v;
}

/* TRUE when the file has a top-level `preset_version:` line (a preset given
 * by its path).  Reads the file once; O(size). */
static gboolean file_is_preset(const char *path)
{
  char *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, NULL))
    return FALSE;
  gboolean yes = g_str_has_prefix(text, "preset_version:") || strstr(text, "\npreset_version:") != NULL;
  g_free(text);
  return yes;
}

topo *wisp_cli_network_load(const char *spec, int n_ranks, FILE *out, GError **error)
{
  /* A plain config file is loaded as it is, so its resolved form keeps its
   * source label (ASTRA-sim network.yml or wisp YAML); presets go through
   * the variant, which drops the preset_version line and resizes. */
  if (g_file_test(spec, G_FILE_TEST_IS_REGULAR) && !file_is_preset(spec))
    return topo_load(spec, error);
  topo_variant *v = wisp_cli_network_open(spec, n_ranks, out, NULL, error);
  topo *t = v ? topo_variant_build(v, error) : NULL;
  topo_variant_free(v);
  return t;
}

const char *wisp_cli_preset_for_device(const char *device)
{
  /* GPU model names as CUDA reports them, most specific first. */
  static const struct { const char *needle, *preset; } map[] = {
    {"GB200", "gb200-nvl72"}, {"H200", "dgx-h200"}, {"H100", "dgx-h100"}, {"A100", "dgx-a100"},
    {"TPU v6", "tpu-v6e"},
  };
  if (device == NULL)
    return NULL;
  for (size_t i = 0; i < G_N_ELEMENTS(map); i++) {
    if (strstr(device, map[i].needle) == NULL)
      continue;
    char *path = study_cluster_find(map[i].preset, NULL, NULL);
    gboolean found = path != NULL;
    g_free(path);
    return found ? map[i].preset : NULL;
  }
  return NULL;
}

gboolean wisp_cli_network_exists(const char *spec, GError **error)
{
  char *path = study_cluster_find(spec, NULL, error);
  g_free(path);
  return path != NULL;
}
