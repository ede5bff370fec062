/* wisp_network.c: the one way a command opens the network an option names
 * (--network, --cluster, topo CONFIG); see cli/wisp_load.h.  Kept apart
 * from the workload loader so commands without workloads (topo,
 * collbench) link it alone. */
#include "config.h"
#include "cli/wisp_load.h"
#include "collectives/coll_system.h"
#include "config/cfg.h"
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

void wisp_cli_system_entries(char **system, GOptionEntry *e)
{
  const GOptionEntry list[WISP_CLI_SYSTEM_ENTRIES] = {
    {"system", 0, 0, G_OPTION_ARG_FILENAME, system,
     "ASTRA-sim system.json: its collective implementations (one per network dimension) and dataset splits "
     "become the network's collectives settings; the keys wisp ignores are named", "FILE"},
    {"system-configuration", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, system,
     "same as --system (ASTRA-sim's name)", "FILE"},
    {NULL},
  };
  memcpy(e, list, sizeof(list));
}

/* TRUE when spec is an ASTRA-sim network.yml without a library: setting:
 * such a file runs the ideal library (collectives/coll_library.c), which
 * the variant's wisp YAML would not say.  O(size of the file). */
static gboolean astra_without_library(const char *spec)
{
  if (!g_file_test(spec, G_FILE_TEST_IS_REGULAR))
    return FALSE;
  cfg_doc *d = cfg_load(spec, NULL);
  gboolean yes = d && cfg_doc_format(d) == CFG_FORMAT_ASTRA && cfg_get(d, "library.name", NULL) == NULL;
  if (d)
    cfg_unref(d);
  return yes;
}

gboolean wisp_cli_system_apply(topo_variant *v, const char *spec, const char *system, FILE *out, GError **error)
{
  coll_system *s = coll_system_load(system, error);
  if (s == NULL)
    return FALSE;
  int dims = topo_variant_is_graph(v) ? 1 : topo_variant_n_dims(v);
  gboolean ok = !astra_without_library(spec) || topo_variant_set(v, "library.name", "ideal", error);
  for (guint i = 0; ok && i < s->settings->len; i++) {
    const coll_system_setting *x = s->settings->pdata[i];
    if (x->n_dims > dims) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s: byte %" G_GUINT64_FORMAT ": %s lists %d implementations but the network %s has %d "
                  "dimension%s; give one per dimension", system, x->offset, x->from, x->n_dims, spec, dims,
                  dims == 1 ? "" : "s");
      ok = FALSE;
    } else if (!topo_variant_set(v, x->key, x->value, error)) {
      g_prefix_error(error, "%s: byte %" G_GUINT64_FORMAT ": %s: ", system, x->offset, x->from);
      ok = FALSE;
    } else if (x->n_dims > 0 && x->n_dims < dims) {
      g_ptr_array_add(s->notes, g_strdup_printf("%s lists %d implementation%s for %d dimensions: wisp uses the "
                                                "last on the outer ones (ASTRA-sim would keep world collectives "
                                                "inside the first %d)", x->from, x->n_dims,
                                                x->n_dims == 1 ? "" : "s", dims, x->n_dims));
    }
  }
  if (ok && out) {
    char *applied = coll_system_applied(s), *ignored = coll_system_ignored(s);
    fprintf(out, "system %s: %s\n", system, applied);
    if (ignored)
      fprintf(out, "system %s: ignored: %s\n", system, ignored);
    for (guint i = 0; i < s->notes->len; i++)
      fprintf(out, "system %s: note: %s\n", system, (const char *)s->notes->pdata[i]);
    g_free(applied);
    g_free(ignored);
  }
  coll_system_free(s);
  return ok;
}

topo *wisp_cli_network_load_system(const char *spec, const char *system, int n_ranks, FILE *out, GError **error)
{
  if (system == NULL)
    return wisp_cli_network_load(spec, n_ranks, out, error);
  topo_variant *v = wisp_cli_network_open(spec, n_ranks, out, NULL, error);
  topo *t = v && wisp_cli_system_apply(v, spec, system, out, error) ? topo_variant_build(v, error) : NULL;
  topo_variant_free(v);
  return t;
}

void wisp_cli_network_system_entries(char **network, char **system, const char *help, GOptionEntry *e)
{
  wisp_cli_network_entries(network, help, e);
  wisp_cli_system_entries(system, e + WISP_CLI_NETWORK_ENTRIES - 1);
}
