/* study_cluster.c: cluster presets and single simulated points. */
#include "config.h"
#include "chakra/et_view.h"
#include "studies/study.h"

#include <string.h>

#ifndef WISP_SOURCE_PRESETS
#define WISP_SOURCE_PRESETS ""
#endif
#ifndef WISP_INSTALLED_PRESETS
#define WISP_INSTALLED_PRESETS ""
#endif
#ifndef WISP_BINDIR
#define WISP_BINDIR ""
#endif

/* TRUE when the running program lives in the configured bindir, i.e. it is
 * the installed wisp (so its presets are the installed ones). */
static gboolean running_installed(void)
{
  char *exe = g_file_read_link("/proc/self/exe", NULL);
  if (exe == NULL)
    return FALSE;
  char *dir = g_path_get_dirname(exe);
  gboolean inst = WISP_BINDIR[0] && strcmp(dir, WISP_BINDIR) == 0;
  g_free(dir);
  g_free(exe);
  return inst;
}

static gint cmp_names(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list_presets(const char *dir, GString *names)
{
  GDir *d = g_dir_open(dir, 0, NULL);
  if (d == NULL)
    return;
  GPtrArray *found = g_ptr_array_new_with_free_func(g_free);
  const char *e;
  while ((e = g_dir_read_name(d)))
    if (g_str_has_suffix(e, ".yaml"))
      g_ptr_array_add(found, g_strndup(e, strlen(e) - 5));
  g_dir_close(d);
  g_ptr_array_sort(found, cmp_names);
  for (guint i = 0; i < found->len; i++)
    if (!strstr(names->str, found->pdata[i]))
      g_string_append_printf(names, "%s%s", names->len ? ", " : "", (char *)found->pdata[i]);
  g_ptr_array_free(found, TRUE);
}

char *study_cluster_find(const char *name, gboolean *is_preset, GError **error)
{
  if (is_preset)
    *is_preset = FALSE;
  if (name == NULL || *name == '\0') {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "no cluster given; pass --cluster NAME or a config path");
    return NULL;
  }
  if (g_file_test(name, G_FILE_TEST_IS_REGULAR))
    return g_strdup(name);
  GPtrArray *dirs = g_ptr_array_new_with_free_func(g_free);
  const char *env = g_getenv("WISP_PRESET_PATH");
  if (env && *env) {
    char **parts = g_strsplit(env, ":", -1);
    for (char **p = parts; *p; p++)
      if (**p)
        g_ptr_array_add(dirs, g_strdup(*p));
    g_strfreev(parts);
  }
  if (WISP_SOURCE_PRESETS[0] && !running_installed())
    g_ptr_array_add(dirs, g_strdup(WISP_SOURCE_PRESETS));
  if (WISP_INSTALLED_PRESETS[0])
    g_ptr_array_add(dirs, g_strdup(WISP_INSTALLED_PRESETS));
  char *hit = NULL;
  if (strchr(name, '/') == NULL) {
    for (guint i = 0; i < dirs->len && !hit; i++) {
      char *file = g_strdup_printf("%s.yaml", name);
      char *p = g_build_filename(dirs->pdata[i], file, NULL);
      g_free(file);
      if (g_file_test(p, G_FILE_TEST_IS_REGULAR))
        hit = p;
      else
        g_free(p);
    }
  }
  if (hit) {
    if (is_preset)
      *is_preset = TRUE;
  } else {
    GString *tried = g_string_new(NULL), *names = g_string_new(NULL);
    for (guint i = 0; i < dirs->len; i++) {
      g_string_append_printf(tried, "%s%s", i ? ", " : "", (char *)dirs->pdata[i]);
      list_presets(dirs->pdata[i], names);
    }
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO,
                "network '%s' is neither a file nor a preset (looked in: %s); presets available: %s; set "
                "WISP_PRESET_PATH to add a directory",
                name, tried->len ? tried->str : "no preset directory", names->len ? names->str : "none found");
    g_string_free(tried, TRUE);
    g_string_free(names, TRUE);
  }
  g_ptr_array_free(dirs, TRUE);
  return hit;
}

/* Loads a cluster config.  Presets carry one key the topology loader does
 * not know, a top-level `preset_version: N` line; it is checked (version 1)
 * and blanked into a comment so line numbers in errors stay right;
 * *has_preset_version tells whether the line was there. */
static topo *load_cluster_file(const char *path, gboolean *has_preset_version, GError **error)
{
  char *text = NULL;
  gsize len = 0;
  wisp_input_note(path); /* no output may replace it */
  if (!g_file_get_contents(path, &text, &len, error))
    return NULL;
  if (strlen(text) != len) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s: the file contains a NUL byte; it is not a YAML config",
                path);
    g_free(text);
    return NULL;
  }
  char *line = text;
  int lineno = 1;
  while (line && *line) {
    char *nl = strchr(line, '\n');
    if (g_str_has_prefix(line, "preset_version:")) {
      char *v = g_strstrip(g_strndup(line + 15, nl ? (gsize)(nl - line - 15) : strlen(line + 15)));
      gboolean ok = strcmp(v, "1") == 0;
      g_free(v);
      if (!ok) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED,
                    "%s:%d: preset_version must be 1 (this wisp reads preset_version 1)", path, lineno);
        g_free(text);
        return NULL;
      }
      line[0] = '#';
      *has_preset_version = TRUE;
    }
    line = nl ? nl + 1 : NULL;
    lineno++;
  }
  topo *t = topo_load_string(text, path, error);
  g_free(text);
  return t;
}

topo_variant *study_cluster_open(const char *name, int n_ranks, char **resolved_path, char **notes, GError **error)
{
  gboolean preset = FALSE;
  char *path = study_cluster_find(name, &preset, error);
  if (path == NULL)
    return NULL;
  gboolean versioned = FALSE;
  topo *t = load_cluster_file(path, &versioned, error);
  if (t == NULL) {
    g_free(path);
    return NULL;
  }
  /* An ASTRA-sim network.yml without a library: setting runs the ideal
   * library (what `wisp simulate` does with the file itself); the variant
   * writes wisp YAML, whose default would be NCCL, so it says so. */
  const cfg_doc *doc = topo_config(t);
  gboolean astra_ideal = doc && cfg_doc_format(doc) == CFG_FORMAT_ASTRA && cfg_get(doc, "library.name", NULL) == NULL;
  topo_variant *v = topo_variant_new(t);
  topo_free(t);
  if (astra_ideal && !topo_variant_set(v, "library.name", "ideal", error)) {
    topo_variant_free(v);
    g_free(path);
    return NULL;
  }
  /* A preset given by its path (it has a preset_version line) is fitted
   * like one given by name.  The sizes before and after are compared so
   * the notes say what the resize changed (O(dims)). */
  int n_dims = topo_variant_n_dims(v), ranks_before = topo_variant_n_ranks(v);
  int *before = g_new0(int, n_dims + 1);
  for (int d = 0; d < n_dims; d++)
    before[d] = topo_variant_dim_size(v, d);
  gboolean fit = (preset || versioned) && n_ranks > 0;
  if (fit && !topo_variant_fit_ranks(v, n_ranks, error)) {
    g_free(before);
    topo_variant_free(v);
    g_free(path);
    return NULL;
  }
  if (notes) {
    GString *s = g_string_new(NULL);
    if (fit && topo_variant_n_ranks(v) != ranks_before) {
      g_string_append_printf(s, "preset resized from %d to the workload's %d ranks", ranks_before,
                             topo_variant_n_ranks(v));
      const char *sep = " (";
      for (int d = 0; d < n_dims && !topo_variant_is_graph(v); d++) {
        /* Tiers the fitting notes already name (capped, torus resized) are
         * said once, there. */
        char *named = g_strdup_printf("tier '%s'", topo_variant_dim_name(v, d));
        gboolean said = strstr(topo_variant_notes(v), named) != NULL;
        g_free(named);
        if (!said && topo_variant_dim_size(v, d) != before[d]) {
          g_string_append_printf(s, "%stier '%s' %d -> %d", sep, topo_variant_dim_name(v, d), before[d],
                                 topo_variant_dim_size(v, d));
          sep = ", ";
        }
      }
      if (strcmp(sep, ", ") == 0)
        g_string_append_c(s, ')');
    }
    if (topo_variant_notes(v)[0])
      g_string_append_printf(s, "%s%s", s->len ? "; " : "", topo_variant_notes(v));
    *notes = g_string_free(s, FALSE);
  }
  g_free(before);
  if (resolved_path)
    *resolved_path = path;
  else
    g_free(path);
  return v;
}

void study_summarize(const sim_result *r, study_summary *out)
{
  memset(out, 0, sizeof *out);
  out->step_time = r->step_time;
  out->events = r->events;
  out->most_exposed_rank = -1;
  out->last_issuer = -1;
  if (r->n_ranks == 0)
    return;
  /* Means over ranks, summed exactly in 64 bits then divided once
   * (truncating to the picosecond). */
  for (int k = 0; k < r->n_ranks; k++) {
    out->compute += r->ranks[k].compute;
    out->exposed_comm += r->ranks[k].exposed_comm;
    out->overlapped_comm += r->ranks[k].overlapped_comm;
    out->idle += r->ranks[k].idle;
    out->comm_transfer += r->ranks[k].comm_transfer;
    out->straggler_wait += r->ranks[k].straggler_wait;
    out->dependency_wait += r->ranks[k].dependency_wait;
    if (r->ranks[k].exposed_comm > 0 &&
        (out->most_exposed_rank < 0 || r->ranks[k].exposed_comm > out->most_exposed.exposed_comm)) {
      out->most_exposed_rank = k;
      out->most_exposed = r->ranks[k];
    }
    if (r->ranks[k].coll_last > 0 &&
        (out->last_issuer < 0 || r->ranks[k].coll_last > out->last_issuer_stats.coll_last)) {
      out->last_issuer = k;
      out->last_issuer_stats = r->ranks[k];
    }
  }
  out->comm_transfer /= r->n_ranks;
  out->straggler_wait /= r->n_ranks;
  out->dependency_wait /= r->n_ranks;
  out->compute /= r->n_ranks;
  out->exposed_comm /= r->n_ranks;
  out->overlapped_comm /= r->n_ranks;
  out->idle /= r->n_ranks;
}

gboolean study_run_point(const et_workload *w, const topo_variant *v, const sim_replay_options *opt,
                         study_summary *out, GError **error)
{
  return study_run_point_critical(w, v, opt, out, NULL, error);
}

gboolean study_run_point_critical(const et_workload *w, const topo_variant *v, const sim_replay_options *opt,
                                  study_summary *out, sim_critical_path **critical, GError **error)
{
  if (critical)
    *critical = NULL;
  if (topo_variant_n_ranks(v) < w->n_ranks) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "the cluster places %d ranks but the workload has %d; give a larger cluster or a preset (presets "
                "are fitted to the workload)",
                topo_variant_n_ranks(v), w->n_ranks);
    return FALSE;
  }
  topo *t = topo_variant_build(v, error);
  if (t == NULL)
    return FALSE;
  sim_replay_options o = opt ? *opt : (sim_replay_options){0};
  o.quiet = TRUE;
  o.critical_path = critical != NULL;
  sim_result *r = sim_replay_run(w, t, &o, error);
  topo_free(t);
  if (r == NULL)
    return FALSE;
  study_summarize(r, out);
  if (critical) {
    *critical = r->critical;
    r->critical = NULL;
  }
  sim_result_free(r);
  return TRUE;
}

static void h_u64(GChecksum *c, uint64_t v)
{
  unsigned char b[8];
  for (int i = 0; i < 8; i++)
    b[i] = (unsigned char)(v >> (8 * i));
  g_checksum_update(c, b, 8);
}

char *study_workload_digest(const et_workload *w)
{
  GChecksum *c = g_checksum_new(G_CHECKSUM_SHA256);
  h_u64(c, (uint64_t)w->n_ranks);
  for (guint gi = 0; gi < w->groups->len; gi++) {
    const et_group *g = et_workload_group(w, gi);
    g_checksum_update(c, (const guchar *)g->name, (gssize)strlen(g->name) + 1);
    h_u64(c, (uint64_t)g->n_ranks);
    for (int k = 0; k < g->n_ranks; k++)
      h_u64(c, (uint64_t)g->ranks[k]);
  }
  for (int r = 0; r < w->n_ranks; r++) {
    const et_graph *g = w->ranks[r];
    h_u64(c, g->n_nodes);
    for (uint32_t i = 0; i < g->n_nodes; i++) {
      const et_node *n = &g->nodes[i];
      h_u64(c, n->id);
      h_u64(c, (uint64_t)n->duration_ps);
      h_u64(c, (uint64_t)n->type << 8 | n->flags);
      for (uint32_t e = n->parents; e < g->nodes[i + 1].parents; e++)
        h_u64(c, g->parent_edges[e]);
      et_comm tc;
      const et_comm *m = n->comm == ET_NONE ? NULL : et_workload_traced_comm(w, r, n->comm, &tc);
      if (m) {
        h_u64(c, m->bytes);
        h_u64(c, m->group);
        h_u64(c, (uint64_t)m->coll);
        h_u64(c, (uint64_t)(uint32_t)m->src << 32 | (uint32_t)m->dst);
        h_u64(c, (uint64_t)(uint32_t)m->tag << 32 | (uint32_t)m->root);
      }
    }
    for (uint32_t k = 0; k < g->n_splits; k++)
      h_u64(c, g->splits[k]);
    /* The measured concurrency sets the default compute slots, so it is
     * part of the content; hashed only when known (tagged), which keeps the
     * digests of graphs without it unchanged. */
    if (g->compute_slots)
      h_u64(c, UINT64_C(0x5eed) << 48 | g->compute_slots);
  }
  char *d = g_strdup(g_checksum_get_string(c));
  g_checksum_free(c);
  return d;
}
