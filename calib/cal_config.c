/* cal_config.c: from a cluster config to fit classes and priors, and from
 * a fit back to a calibrated network config (see cal.h).
 */
#include "config.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "calib/cal.h"
#include "collectives/coll.h"

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
  /* A rank's node is its coordinate in the tiers outside the node
   * (topo_node_dims: `node_dims:`, else all but the outermost tier), so
   * ranks that differ only in tiers inside a node (an 8-GPU DGX-1 modelled
   * as quads x cross links) are intra-node.  O(ranks x dims). */
  int nd = topo_node_dims(t), n_dims = topo_variant_n_dims(v);
  int *dom = g_new(int, n_ranks > 0 ? n_ranks : 1);
  for (int r = 0; r < n_ranks; r++) {
    int node = 0, stride = 1;
    for (int d = nd; d < n_dims; d++) {
      node += topo_rank_coord(t, r, d) * stride;
      stride *= topo_variant_dim_size(v, d);
    }
    dom[r] = node;
  }
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

double cal_round_sig4(double x)
{
  if (!(x > 0) || !isfinite(x))
    return x;
  double scale = pow(10.0, floor(log10(x)) - 3.0);
  return round(x / scale) * scale;
}

/* Writes tier dim's latency and effective rate: dims.<dim>.bandwidth =
 * bw or, with line > 0 (the scale-out tier's line rate under library
 * nccl, cal_rate_is_share), CAL_SHARE_KEY = bw / line capped at 1 and the
 * line rate kept. */
static gboolean set_link_values(topo_variant *v, int dim, double lat, double bw, double line, GError **error)
{
  char key[96], val[64];
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
  if (line > 0) {
    g_snprintf(val, sizeof val, "%.4g", MIN(bw / line, 1.0));
    return topo_variant_set(v, CAL_SHARE_KEY, val, error);
  }
  g_snprintf(key, sizeof key, "dims.%d.bandwidth", dim);
  g_snprintf(val, sizeof val, "%" G_GUINT64_FORMAT "B/s", (guint64)llround(bw));
  return topo_variant_set(v, key, val, error);
}

gboolean cal_rate_is_share(const topo_variant *v, int dim, const coll_library_params *lib)
{
  return lib->kind == COLL_LIBRARY_NCCL && dim >= 0 && dim == topo_variant_scale_out_dim(v);
}

/* The library the variant v runs, into *lib.  FALSE with error. */
static gboolean variant_library(const topo_variant *v, coll_library_params *lib, GError **error)
{
  topo *t = topo_variant_build(v, error);
  gboolean ok = t != NULL && coll_library_params_from_topo(t, lib, error);
  topo_free(t);
  return ok;
}

/* The scale-out line rate (B/s) when f's inter-node class is fitted as
 * the share CAL_SHARE_KEY on v (the cluster's library nccl kept, not the
 * textbook schedules), else 0; *lib (optional) gets v's library.  One
 * topology build. */
static double share_line(const cal_fit *f, const topo_variant *v, coll_library_params *lib, GError **error)
{
  coll_library_params own;
  if (lib == NULL)
    lib = &own;
  memset(lib, 0, sizeof *lib);
  if (topo_variant_is_graph(v) || !variant_library(v, lib, error))
    return -1;
  int so = topo_variant_scale_out_dim(v);
  return !f->textbook && cal_rate_is_share(v, so, lib) ? (double)topo_variant_dim_bw(v, so) : 0;
}

/* The tier a class is written onto (for the intra-node class the
 * outermost tier inside a node), or -1. */
static int class_dim(const topo_variant *v, cal_class c)
{
  if (c == CAL_CLASS_INTER)
    return topo_variant_scale_out_dim(v);
  int dd = topo_variant_domain_dim(v);
  return dd < 0 ? 0 : dd;
}

/* Sets a class's link values: the inter-node class on its tier, the
 * intra-node class on every tier inside a node (dims 0..class_dim), since
 * the fit describes the node as a whole (a DGX-1 modelled as quads x cross
 * links).  line > 0: the inter-node class's rate is written as the share
 * of that line rate (share_line).  O(tiers). */
static gboolean set_class_values(topo_variant *v, const topo_variant *dims, cal_class c, double lat, double bw,
                                 double line, GError **error)
{
  int dim = class_dim(dims, c);
  for (int d = c == CAL_CLASS_INTER ? dim : 0; d <= dim; d++)
    if (!set_link_values(v, d, lat, bw, c == CAL_CLASS_INTER ? line : 0, error))
      return FALSE;
  return TRUE;
}

/* Writes the fit onto v, the tiers of each class found on `dims` (the
 * fitted cluster; v itself or its unfitted shape, same tiers): each fitted
 * class's tier (refitted values when present, else latency = alpha / hops
 * and bandwidth = beta; with library nccl kept, the scale-out tier's
 * bandwidth as the share CAL_SHARE_KEY of its line rate, which stays) and,
 * with f->textbook, the algorithms the model assumes. */
static gboolean apply_fit_dims(topo_variant *v, const topo_variant *dims, const cal_fit *f, GError **error)
{
  double line = share_line(f, dims, NULL, error);
  if (line < 0)
    return FALSE;
  for (int c = 0; c < CAL_N_CLASSES; c++) {
    const cal_class_fit *cf = &f->cls[c];
    int dim = class_dim(dims, (cal_class)c);
    if (!cf->fitted || dim < 0)
      continue;
    double lat = cf->alpha_ps / cal_hops_per_step(topo_variant_dim_kind(dims, dim)), bw = cf->beta_Bps;
    if (f->refit[c].done) {
      lat = f->refit[c].latency_ps;
      bw = f->refit[c].bw_Bps;
    }
    /* Four significant digits: the fit's own error is percents, and the
     * written config reads "35.41GB/s", "571.8ns". */
    if (!set_class_values(v, dims, (cal_class)c, cal_round_sig4(lat), cal_round_sig4(bw), line, error))
      return FALSE;
  }
  if (f->lib_refit) {
    /* The library's fitted launch and per-step overhead (cal_refit_library). */
    char launch[48], step[48];
    g_snprintf(launch, sizeof launch, "%.4gus", f->launch_ps / 1e6);
    g_snprintf(step, sizeof step, "%.4g", f->step_scale);
    if (!topo_variant_set(v, "library.launch", launch, error) ||
        !topo_variant_set(v, "library.step_latency_scale", step, error))
      return FALSE;
  }
  if (!f->textbook)
    return TRUE;
  static const char *const algos[][2] = {
    { "collectives.all_reduce", "ring" },
    { "collectives.all_gather", "ring" },
    { "collectives.reduce_scatter", "ring" },
    { "collectives.all_to_all", "pairwise" },
    /* One step of S from the root: the bandwidth term of a pipelined
     * chain; the latency term is (n-1) alpha in the model, alpha here. */
    { "collectives.broadcast", "direct" },
    { "collectives.reduce", "direct" },
    /* The fitted alpha and beta are those of the textbook schedules above,
     * not of NCCL's protocols: the calibrated config runs them as such. */
    { "library.name", "ideal" },
  };
  for (size_t k = 0; k < G_N_ELEMENTS(algos); k++)
    if (!topo_variant_set(v, algos[k][0], algos[k][1], error))
      return FALSE;
  return TRUE;
}

static gboolean apply_fit(topo_variant *v, const cal_fit *f, GError **error)
{
  return apply_fit_dims(v, v, f, error);
}

/* One line per tier value or setting that differs between a and b. */
static void describe_changes(const topo_variant *a, const topo_variant *b, GString *out)
{
  for (int d = 0; d < topo_variant_n_dims(a); d++) {
    char *x, *y;
    if (topo_variant_dim_bw(a, d) != topo_variant_dim_bw(b, d)) {
      x = wisp_format_bandwidth(topo_variant_dim_bw(a, d)), y = wisp_format_bandwidth(topo_variant_dim_bw(b, d));
      g_string_append_printf(out, "tier '%s' bandwidth: %s -> %s\n", topo_variant_dim_name(a, d), x, y);
      g_free(x), g_free(y);
    }
    if (topo_variant_dim_latency(a, d) != topo_variant_dim_latency(b, d)) {
      x = wisp_format_time(topo_variant_dim_latency(a, d)), y = wisp_format_time(topo_variant_dim_latency(b, d));
      g_string_append_printf(out, "tier '%s' latency: %s -> %s\n", topo_variant_dim_name(a, d), x, y);
      g_free(x), g_free(y);
    }
  }
  /* Library and collectives: compared as the lines of the YAML. */
  char *ya = topo_variant_to_yaml(a), *yb = topo_variant_to_yaml(b);
  const char *keys[] = {"library: ", "collectives: "};
  for (size_t k = 0; k < G_N_ELEMENTS(keys); k++) {
    const char *pa = strstr(ya, keys[k]), *pb = strstr(yb, keys[k]);
    char *la = pa ? g_strndup(pa, strcspn(pa, "\n")) : g_strdup("(none)");
    char *lb = pb ? g_strndup(pb, strcspn(pb, "\n")) : g_strdup("(none)");
    if (strcmp(la, lb) != 0)
      g_string_append_printf(out, "%s -> %s\n", la, lb);
    g_free(la), g_free(lb);
  }
  g_free(ya), g_free(yb);
}

gboolean cal_write_config_shaped(const cal_fit *f, const topo_variant *base, const topo_variant *shape,
                                 const char *header, const char *path, char **changes, GError **error)
{
  if (topo_variant_is_graph(base)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED,
                "cannot write a calibrated explicit graph; use a hierarchical cluster (dims:)");
    return FALSE;
  }
  const topo_variant *from = shape ? shape : base;
  topo_variant *v = topo_variant_copy(from);
  gboolean ok = apply_fit_dims(v, base, f, error);
  char *yaml = NULL;
  if (ok) {
    yaml = cal_config_yaml(v, shape != NULL);
    topo *t = topo_load_string(yaml, path, error);
    ok = t != NULL;
    topo_free(t);
  }
  if (ok && changes) {
    GString *c = g_string_new(NULL);
    describe_changes(from, v, c);
    *changes = g_string_free(c, FALSE);
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

gboolean cal_write_config(const cal_fit *f, const topo_variant *base, const char *header, const char *path,
                          GError **error)
{
  return cal_write_config_shaped(f, base, NULL, header, path, NULL, error);
}

/* ---- refit against the simulator ---- */

typedef struct {
  et_coll_type op;
  uint32_t group;
  int n;
  uint64_t bytes;
  double y;                /* mean measured duration of the merged instances (ps) */
  double weight;           /* loss weight x multiplicity */
  double count;            /* multiplicity */
} refit_pt;

gboolean cal_simulate_point(const et_workload *w, const topo *t, net_tier tier, const coll_policy *pol,
                            et_coll_type op, uint32_t group, int n, uint64_t bytes, sim_time_ps *time_ps,
                            GError **error)
{
  const et_group *grp = group == ET_GROUP_WORLD ? NULL : et_workload_group(w, group);
  int *ranks = g_new(int, n);
  for (int m = 0; m < n; m++)
    ranks[m] = grp ? grp->ranks[m] : m;
  coll_desc d = { .type = op, .bytes = bytes, .ranks = ranks, .n_ranks = n,
                  .root = et_coll_rooted(op) ? ranks[0] : -1 };
  /* The time a replay gives the collective: with NCCL the launch is part
   * of it (nccl_plan.c's base delay), where coll_measure would hide it
   * behind the previous iteration as nccl-tests' loop does; so the launch
   * is simulated as 0 and added. */
  coll_library_params lib = *coll_policy_library(pol);
  sim_time_ps launch = lib.kind == COLL_LIBRARY_NCCL ? lib.launch * (sim_time_ps)MAX(lib.gpus_per_thread, 1) : 0;
  coll_policy *own = launch > 0 ? coll_policy_new_from_topo(t, error) : NULL;
  gboolean ok = launch == 0 || own != NULL;
  if (own) {
    lib.launch = 0;
    coll_policy_set_library(own, &lib);
  }
  ok = ok && coll_measure(t, tier, own ? own : pol, &d, time_ps, NULL, error);
  *time_ps += ok ? launch : 0;
  coll_policy_free(own);
  g_free(ranks);
  return ok;
}

/* Simulated time of every point with class cls's tiers set to (lat, bw)
 * (line: set_class_values); FALSE with error when the topology or a
 * collective is refused. */
static gboolean simulate_points(const topo_variant *base, cal_class cls, double lat, double bw, double line,
                                const GArray *pts, const et_workload *w, net_tier tier, double *out, GError **error)
{
  topo_variant *v = topo_variant_copy(base);
  gboolean ok = set_class_values(v, v, cls, lat, bw, line, error);
  topo *t = ok ? topo_variant_build(v, error) : NULL;
  topo_variant_free(v);
  if (t == NULL)
    return FALSE;
  coll_policy *pol = coll_policy_new_from_topo(t, error);
  ok = pol != NULL;
  for (guint k = 0; ok && k < pts->len; k++) {
    const refit_pt *p = &g_array_index(pts, refit_pt, k);
    sim_time_ps tm = 0;
    ok = cal_simulate_point(w, t, tier, pol, p->op, p->group, p->n, p->bytes, &tm, error);
    out[k] = (double)tm;
  }
  coll_policy_free(pol);
  topo_free(t);
  return ok;
}

static double rms_pct(const GArray *pts, const double *sim)
{
  double ss = 0, n = 0;
  for (guint k = 0; k < pts->len; k++) {
    const refit_pt *p = &g_array_index(pts, refit_pt, k);
    double e = 100.0 * (sim[k] - p->y) / p->y;
    ss += e * e * p->count;
    n += p->count;
  }
  return n > 0 ? sqrt(ss / n) : 0.0;
}

static int cmp_refit(const void *a, const void *b)
{
  const refit_pt *x = a, *y = b;
  if (x->op != y->op)
    return x->op < y->op ? -1 : 1;
  if (x->group != y->group)
    return x->group < y->group ? -1 : 1;
  return x->bytes < y->bytes ? -1 : x->bytes > y->bytes;
}

/* The distinct (op, group, bytes) of f's used instances of class cls
 * (-1: every class), all-to-allv left out (its matrix is not kept), each
 * with its mean measured duration, multiplicity and loss weight.
 * O(points log points). */
static GArray *distinct_points(const cal_fit *f, int cls)
{
  GArray *pts = g_array_new(FALSE, FALSE, sizeof(refit_pt));
  for (guint k = 0; k < f->points->len; k++) {
    const cal_point *p = &g_array_index(f->points, cal_point, k);
    if (p->excluded != CAL_USED || (cls >= 0 && p->cls != cls) || p->op == ET_COLL_ALL_TO_ALLV)
      continue;
    refit_pt q = { (et_coll_type)p->op, p->group, p->n, p->bytes, (double)p->measured, 1.0, 1.0 };
    g_array_append_val(pts, q);
  }
  if (pts->len > 1)
    qsort(pts->data, pts->len, sizeof(refit_pt), cmp_refit);
  guint m = 0;
  for (guint k = 0; k < pts->len; k++) {
    refit_pt *q = &g_array_index(pts, refit_pt, k);
    refit_pt *last = m ? &g_array_index(pts, refit_pt, m - 1) : NULL;
    if (last && last->op == q->op && last->group == q->group && last->bytes == q->bytes) {
      last->y = (last->y * last->count + q->y) / (last->count + 1);
      last->count += 1;
    } else {
      g_array_index(pts, refit_pt, m++) = *q;
    }
  }
  g_array_set_size(pts, m);
  for (guint k = 0; k < m; k++) {
    refit_pt *q = &g_array_index(pts, refit_pt, k);
    q->weight = f->loss == CAL_LOSS_RELATIVE ? q->count / (q->y * q->y) : q->count;
  }
  return pts;
}

gboolean cal_refit_to_simulator(cal_fit *f, const et_workload *w, const topo_variant *base, net_tier tier,
                                GError **error)
{
  if (topo_variant_is_graph(base))
    return TRUE;
  topo_variant *v = topo_variant_copy(base);
  gboolean ok = apply_fit(v, f, error);
  double line_inter = ok ? share_line(f, v, NULL, error) : 0;
  ok = ok && line_inter >= 0;
  for (int c = 0; ok && c < CAL_N_CLASSES; c++) {
    int dim = class_dim(v, (cal_class)c);
    if (!f->cls[c].fitted || dim < 0)
      continue;
    GArray *pts = distinct_points(f, c);
    guint m = pts->len;
    if (m == 0) {
      g_array_free(pts, TRUE);
      continue;
    }
    double lat = f->cls[c].alpha_ps / cal_hops_per_step(topo_variant_dim_kind(v, dim));
    /* ps per byte; the share is at most 1: g no less than the line rate's. */
    double line = c == CAL_CLASS_INTER ? line_inter : 0, g_min = line > 0 ? 1e12 / line : 0;
    double g = MAX(1e12 / f->cls[c].beta_Bps, g_min);
    double *t0 = g_new(double, m), *t1 = g_new(double, m), *t2 = g_new(double, m);
    ok = simulate_points(v, (cal_class)c, lat, 1e12 / g, line, pts, w, tier, t0, error);
    double best_rms = ok ? rms_pct(pts, t0) : 0, first_rms = best_rms;
    double best_lat = lat, best_g = g;
    for (int it = 0; ok && it < 4 && best_rms > 1e-6; it++) {
      double dl = MAX(1000.0, 0.1 * lat), dg = 0.1 * g;
      ok = simulate_points(v, (cal_class)c, lat + dl, 1e12 / g, line, pts, w, tier, t1, error) &&
           simulate_points(v, (cal_class)c, lat, 1e12 / (g + dg), line, pts, w, tier, t2, error);
      if (!ok)
        break;
      /* Normal equations of the linearised residual in (dlat, dg). */
      double a = 0, b = 0, cc = 0, d = 0, e = 0;
      for (guint k = 0; k < m; k++) {
        const refit_pt *q = &g_array_index(pts, refit_pt, k);
        double jl = (t1[k] - t0[k]) / dl, jg = (t2[k] - t0[k]) / dg, r = q->y - t0[k];
        a += q->weight * jl * jl;
        b += q->weight * jl * jg;
        cc += q->weight * jg * jg;
        d += q->weight * jl * r;
        e += q->weight * jg * r;
      }
      double det = a * cc - b * b, nl, ng;
      if (det > 1e-12 * a * cc) {
        nl = lat + (d * cc - b * e) / det;
        ng = g + (a * e - b * d) / det;
      } else if (cc > 0) {     /* latency not identifiable: move bandwidth only */
        nl = lat;
        ng = g + e / cc;
      } else {
        break;
      }
      nl = MAX(nl, 0.0);
      if (!(ng > 0))
        ng = g / 2;
      lat = nl;
      g = MAX(ng, g_min);
      ok = simulate_points(v, (cal_class)c, lat, 1e12 / g, line, pts, w, tier, t0, error);
      if (!ok)
        break;
      double r2 = rms_pct(pts, t0);
      if (r2 < best_rms) {
        best_rms = r2;
        best_lat = lat;
        best_g = g;
      }
    }
    g_free(t0);
    g_free(t1);
    g_free(t2);
    if (ok) {
      cal_tier_refit *rf = &f->refit[c];
      rf->dim = dim;
      rf->points = (int)m;
      rf->rms_before_pct = first_rms;
      rf->rms_after_pct = best_rms;
      /* Applied only when it helps by more than 0.001 percentage points. */
      rf->done = best_rms < first_rms - 1e-3;
      rf->latency_ps = best_lat;
      rf->bw_Bps = 1e12 / best_g;
      rf->line_Bps = line;
      if (rf->done)
        ok = set_class_values(v, v, (cal_class)c, best_lat, rf->bw_Bps, line, error);
    }
    g_array_free(pts, TRUE);
  }
  topo_variant_free(v);
  return ok;
}

/* ---- the library's free parameters (library nccl kept) ---- */

/* The parameters of cal_refit_library: per class the link latency (ps)
 * and effective bandwidth (B/s; with a share line rate, the inter-node
 * class's is written as CAL_SHARE_KEY and stays at most the line rate),
 * then the launch (ps) and the per-step factor. */
enum { LIB_P_LAUNCH = 2 * CAL_N_CLASSES, LIB_P_STEP, LIB_N_P };

typedef struct {
  const et_workload *w;
  const topo_variant *base;
  net_tier tier;
  const GArray *pts;
  gboolean used[LIB_N_P];
  double line;             /* scale-out line rate when the share is fitted (share_line), else 0 */
  int evals;
  double *sim;
} lib_fit;

/* The rms relative error (%) of the points on base with candidate x, or
 * -1 with error set.  One topology build, one simulation per point. */
static double lib_eval(lib_fit *lf, const double *x, GError **error)
{
  topo_variant *v = topo_variant_copy(lf->base);
  gboolean ok = TRUE;
  for (int c = 0; ok && c < CAL_N_CLASSES; c++)
    if (lf->used[2 * c])
      ok = set_class_values(v, v, (cal_class)c, x[2 * c], x[2 * c + 1], c == CAL_CLASS_INTER ? lf->line : 0, error);
  char val[64];
  g_snprintf(val, sizeof val, "%" G_GINT64_FORMAT "ps", (gint64)llround(x[LIB_P_LAUNCH]));
  ok = ok && topo_variant_set(v, "library.launch", val, error);
  g_snprintf(val, sizeof val, "%.6g", x[LIB_P_STEP]);
  ok = ok && topo_variant_set(v, "library.step_latency_scale", val, error);
  topo *t = ok ? topo_variant_build(v, error) : NULL;
  topo_variant_free(v);
  lf->evals++;
  if (t == NULL)
    return -1;
  coll_policy *pol = coll_policy_new_from_topo(t, error);
  ok = pol != NULL;
  for (guint k = 0; ok && k < lf->pts->len; k++) {
    const refit_pt *p = &g_array_index(lf->pts, refit_pt, k);
    sim_time_ps tm = 0;
    ok = cal_simulate_point(lf->w, t, lf->tier, pol, p->op, p->group, p->n, p->bytes, &tm, error);
    lf->sim[k] = (double)tm;
  }
  coll_policy_free(pol);
  topo_free(t);
  return ok ? rms_pct(lf->pts, lf->sim) : -1;
}

/* Coordinate descent in log space from x (see cal.h); *best holds the
 * rms of x on entry and of the returned x on exit. */
static gboolean lib_descend(lib_fit *lf, double *x, const double *x0, double *best, GError **error)
{
  static const double steps[] = { 2.0, 1.25, 1.07, 1.02 };
  for (size_t s = 0; s < G_N_ELEMENTS(steps); s++) {
    gboolean improved = TRUE;
    while (improved && lf->evals < CAL_LIB_MAX_EVALS) {
      improved = FALSE;
      for (int p = 0; p < LIB_N_P && lf->evals < CAL_LIB_MAX_EVALS; p++) {
        for (int dir = 0; lf->used[p] && dir < 2; dir++) {
          double keep = x[p], y = dir ? keep / steps[s] : keep * steps[s];
          if (y < x0[p] / 50 || y > x0[p] * 50 ||
              (p == 2 * CAL_CLASS_INTER + 1 && lf->line > 0 && y > lf->line * (1 + 1e-9)))
            continue;
          x[p] = y;
          double r = lib_eval(lf, x, error);
          if (r < 0)
            return FALSE;
          if (r < *best - 1e-9) {
            *best = r;
            improved = TRUE;
            break;
          }
          x[p] = keep;
        }
      }
    }
  }
  return TRUE;
}

gboolean cal_refit_library(cal_fit *f, const et_workload *w, const topo_variant *base, net_tier tier, GError **error)
{
  if (f->textbook || topo_variant_is_graph(base))
    return TRUE;
  topo_variant *v = topo_variant_copy(base);
  coll_library_params lib;
  gboolean ok = apply_fit(v, f, error);
  double line = ok ? share_line(f, v, &lib, error) : -1;
  ok = ok && line >= 0;
  GArray *pts = ok && lib.kind == COLL_LIBRARY_NCCL ? distinct_points(f, -1) : NULL;
  if (pts == NULL || pts->len == 0) {
    if (pts)
      g_array_free(pts, TRUE);
    topo_variant_free(v);
    return ok;
  }
  lib_fit lf = { .w = w, .base = v, .tier = tier, .pts = pts, .line = line, .sim = g_new(double, pts->len) };
  double x[LIB_N_P] = { 0 }, x0[LIB_N_P];
  for (int c = 0; c < CAL_N_CLASSES; c++) {
    int dim = class_dim(v, (cal_class)c);
    if (!f->cls[c].fitted || dim < 0)
      continue;
    lf.used[2 * c] = lf.used[2 * c + 1] = TRUE;
    /* A 1 ns floor: the descent multiplies, and cannot leave zero. */
    x[2 * c] = MAX((double)topo_variant_dim_latency(v, dim), 1000.0);
    x[2 * c + 1] = (double)topo_variant_dim_bw(v, dim);
    if (c == CAL_CLASS_INTER && line > 0)   /* the effective rate apply_fit wrote as the share */
      x[2 * c + 1] = line * (lib.net_efficiency > 0 ? lib.net_efficiency : 1.0);
  }
  x[LIB_P_LAUNCH] = MAX((double)lib.launch, 1000.0);
  x[LIB_P_STEP] = lib.step_latency_scale > 0 ? lib.step_latency_scale : 1.0;
  lf.used[LIB_P_LAUNCH] = lf.used[LIB_P_STEP] = TRUE;
  memcpy(x0, x, sizeof x);
  /* The descent stays within 50x of x0.  A link latency the simulator
   * refit (cal_refit_to_simulator) took to zero would pin it to 1-50 ns,
   * so its range is centred on the textbook fit's latency per hop instead
   * (DLRM on dgx-a100: 0 after the refit, 571.8 ns from alpha). */
  for (int c = 0; c < CAL_N_CLASSES; c++)
    if (lf.used[2 * c]) {
      int dim = class_dim(v, (cal_class)c);
      x0[2 * c] = MAX(x0[2 * c], f->cls[c].alpha_ps / cal_hops_per_step(topo_variant_dim_kind(v, dim)));
      x[2 * c] = MAX(x[2 * c], x0[2 * c] / 50);
    }
  double first = lib_eval(&lf, x, error), best = first;
  ok = first >= 0 && lib_descend(&lf, x, x0, &best, error);
  if (ok && best < first - 1e-3) {
    f->lib_refit = TRUE;
    f->launch_ps = x[LIB_P_LAUNCH];
    f->step_scale = x[LIB_P_STEP];
    f->lib_rms_before_pct = first;
    f->lib_rms_after_pct = best;
    for (int c = 0; c < CAL_N_CLASSES; c++)
      if (lf.used[2 * c]) {
        f->refit[c].done = TRUE;
        f->refit[c].dim = class_dim(v, (cal_class)c);
        f->refit[c].latency_ps = x[2 * c];
        f->refit[c].bw_Bps = x[2 * c + 1];
        f->refit[c].line_Bps = c == CAL_CLASS_INTER ? line : 0;
      }
  }
  g_free(lf.sim);
  g_array_free(pts, TRUE);
  topo_variant_free(v);
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
