/* cal_config.c: from a cluster config to fit classes and priors, and from
 * a fit back to a calibrated network config (see cal.h).
 */
#include "config.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "calib/cal.h"

int cal_hops_per_step(topo_kind k)
{
  switch (k) {
  case TOPO_KIND_SWITCH:
  case TOPO_KIND_FAT_TREE: /* host-leaf-host; cross-leaf paths take 4 */
    return 2;
  default:                 /* ring neighbours, torus neighbours, direct links */
    return 1;
  }
}

gboolean cal_options_from_cluster(cal_options *opt, const topo_variant *v, int n_ranks, int **rank_domain_out,
                                  GError **error)
{
  *rank_domain_out = NULL;
  if (topo_variant_is_graph(v)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED,
                "calibration needs a hierarchical cluster (dims:), not an explicit graph: the fitted "
                "intra- and inter-node values are written onto its scale-up and scale-out tiers");
    return FALSE;
  }
  topo *t = topo_variant_build(v, error);
  if (t == NULL)
    return FALSE;
  if (topo_n_ranks(t) < n_ranks) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s holds %d ranks but the trace has %d; give a cluster with at least %d ranks",
                topo_source(t), topo_n_ranks(t), n_ranks, n_ranks);
    topo_free(t);
    return FALSE;
  }
  int so = topo_variant_scale_out_dim(v);
  int dd = topo_variant_domain_dim(v);
  if (dd < 0)
    dd = 0;
  int *dom = g_new(int, n_ranks > 0 ? n_ranks : 1);
  for (int r = 0; r < n_ranks; r++)
    dom[r] = so >= 0 ? topo_rank_coord(t, r, so) : 0;
  topo_free(t);
  opt->rank_domain = dom;
  *rank_domain_out = dom;
  opt->prior_alpha_ps[CAL_CLASS_INTRA] =
    (double)cal_hops_per_step(topo_variant_dim_kind(v, dd)) * (double)topo_variant_dim_latency(v, dd);
  opt->prior_beta_Bps[CAL_CLASS_INTRA] = (double)topo_variant_dim_bw(v, dd);
  int od = so >= 0 ? so : dd;
  opt->prior_alpha_ps[CAL_CLASS_INTER] =
    (double)cal_hops_per_step(topo_variant_dim_kind(v, od)) * (double)topo_variant_dim_latency(v, od);
  opt->prior_beta_Bps[CAL_CLASS_INTER] = (double)topo_variant_dim_bw(v, od);
  return TRUE;
}

static gboolean set_tier(topo_variant *v, int dim, const cal_class_fit *cf, GError **error)
{
  char key[96], val[64];
  double lat = cf->alpha_ps / cal_hops_per_step(topo_variant_dim_kind(v, dim));
  double bw = cf->beta_Bps;
  if (!(bw >= 1.0) || !(bw < 1.8e19) || !(lat >= 0.0) || !(lat < 9e18)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "the fit for tier '%s' is out of range (latency %g ps, bandwidth %g B/s); check the trace's "
                "durations and sizes", topo_variant_dim_name(v, dim), lat, bw);
    return FALSE;
  }
  g_snprintf(key, sizeof key, "dims.%d.latency", dim);
  g_snprintf(val, sizeof val, "%" G_GINT64_FORMAT "ps", (gint64)llround(lat));
  if (!topo_variant_set(v, key, val, error))
    return FALSE;
  g_snprintf(key, sizeof key, "dims.%d.bandwidth", dim);
  g_snprintf(val, sizeof val, "%" G_GUINT64_FORMAT "B/s", (guint64)llround(bw));
  return topo_variant_set(v, key, val, error);
}

gboolean cal_write_config(const cal_fit *f, const topo_variant *base, const char *header, const char *path,
                          GError **error)
{
  if (topo_variant_is_graph(base)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED,
                "cannot write a calibrated explicit graph; use a hierarchical cluster (dims:)");
    return FALSE;
  }
  topo_variant *v = topo_variant_copy(base);
  int so = topo_variant_scale_out_dim(v);
  int dd = topo_variant_domain_dim(v);
  if (dd < 0)
    dd = 0;
  gboolean ok = TRUE;
  if (f->cls[CAL_CLASS_INTRA].fitted)
    ok = set_tier(v, dd, &f->cls[CAL_CLASS_INTRA], error);
  if (ok && so >= 0 && f->cls[CAL_CLASS_INTER].fitted)
    ok = set_tier(v, so, &f->cls[CAL_CLASS_INTER], error);
  /* The fit assumed ring algorithms; make the replay use them. */
  static const char *const algos[][2] = {
    { "collectives.all_reduce", "ring" },
    { "collectives.all_gather", "ring" },
    { "collectives.reduce_scatter", "ring" },
    { "collectives.all_to_all", "pairwise" },
    /* One step of S from the root: the bandwidth term of a pipelined
     * chain; the latency term is (n-1) alpha in the model, alpha here. */
    { "collectives.broadcast", "direct" },
    { "collectives.reduce", "direct" },
  };
  for (size_t k = 0; ok && k < G_N_ELEMENTS(algos); k++)
    ok = topo_variant_set(v, algos[k][0], algos[k][1], error);
  char *yaml = NULL;
  if (ok) {
    yaml = topo_variant_to_yaml(v);
    topo *t = topo_load_string(yaml, path, error);
    ok = t != NULL;
    topo_free(t);
  }
  topo_variant_free(v);
  if (!ok) {
    g_free(yaml);
    return FALSE;
  }
  GString *text = g_string_new(NULL);
  if (header) {
    char **lines = g_strsplit(header, "\n", -1);
    for (char **l = lines; *l; l++) {
      if (**l == '\0' && l[1] == NULL)
        break;
      g_string_append_printf(text, "# %s\n", *l);
    }
    g_strfreev(lines);
  }
  g_string_append(text, yaml);
  g_free(yaml);
  ok = wisp_write_file_atomic(path, text->str, text->len, error);
  g_string_free(text, TRUE);
  return ok;
}

static int cmp_names(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

char *cal_trace_digest(const char *path, int *n_files, GError **error)
{
  GString *list = g_string_new(NULL);
  int count = 0;
  GStatBuf st;
  if (g_stat(path, &st) != 0) {
    int e = errno;
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: %s", path, g_strerror(e));
    g_string_free(list, TRUE);
    return NULL;
  }
  if (S_ISDIR(st.st_mode)) {
    GDir *d = g_dir_open(path, 0, error);
    if (d == NULL) {
      g_string_free(list, TRUE);
      return NULL;
    }
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    const char *name;
    while ((name = g_dir_read_name(d)) != NULL)
      g_ptr_array_add(names, g_strdup(name));
    g_dir_close(d);
    g_ptr_array_sort(names, cmp_names);
    for (guint k = 0; k < names->len; k++) {
      const char *nm = g_ptr_array_index(names, k);
      char *full = g_build_filename(path, nm, NULL);
      GStatBuf fs;
      if (g_stat(full, &fs) == 0 && S_ISREG(fs.st_mode)) {
        g_string_append_printf(list, "%s\t%" G_GINT64_FORMAT "\n", nm, (gint64)fs.st_size);
        count++;
      }
      g_free(full);
    }
    g_ptr_array_free(names, TRUE);
  } else {
    char *base = g_path_get_basename(path);
    g_string_append_printf(list, "%s\t%" G_GINT64_FORMAT "\n", base, (gint64)st.st_size);
    g_free(base);
    count = 1;
  }
  char *sum = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)list->str, list->len);
  g_string_free(list, TRUE);
  if (n_files)
    *n_files = count;
  return sum;
}
