/* topo_variant_edit.c: the edits of a topology variant (see
 * topo_variant.h): scaling a tier's bandwidth or latency, setting its
 * size (refitting the outer tier or a torus's shape), fitting the ranks,
 * and setting any key by name (topo_variant_set).  Each edit reads the
 * tier's keys into a tv_dim, changes it and writes it back, labelled and
 * noted; O(tiers) per edit. */
#include "config.h"
#include "topologies/topo_variant_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- edits ---- */

static gboolean scale_u64(uint64_t x, double factor, uint64_t min, uint64_t *out)
{
  double r = nearbyint((double)x * factor);
  if (!(r >= 0.0) || r > 9.2e18)
    return FALSE;
  *out = (uint64_t)r < min ? min : (uint64_t)r;
  return TRUE;
}

static gboolean check_dim(const topo_variant *v, int dim, GError **error)
{
  if (dim < -1 || dim >= topo_variant_n_dims(v)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: no dimension %d (the topology has %d)", tv_src(v), dim,
                topo_variant_n_dims(v));
    return FALSE;
  }
  return TRUE;
}

/* Scales one bandwidth or latency key of a graph link in place. */
static gboolean scale_link(topo_variant *v, int i, const char *field, double factor)
{
  const char *s = tv_item_get(v, "graph.links", i, field, NULL);
  uint64_t x = 0;
  if (strcmp(field, "bandwidth") == 0) {
    if (!scale_u64(tv_bw_of(s), factor, 1, &x))
      return FALSE;
    tv_item_put(v, "graph.links", i, field, 0, "%" G_GUINT64_FORMAT "B/s", x);
    return TRUE;
  }
  if (!scale_u64((uint64_t)tv_time_of(s), factor, 0, &x) || x > (uint64_t)INT64_MAX)
    return FALSE;
  tv_item_put(v, "graph.links", i, field, 0, "%" G_GINT64_FORMAT "ps", (sim_time_ps)x);
  return TRUE;
}

gboolean topo_variant_scale_bw(topo_variant *v, int dim, double factor, GError **error)
{
  if (!check_dim(v, dim, error))
    return FALSE;
  if (!(factor > 0.0) || !isfinite(factor)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "bandwidth scale factor must be a positive number, got %g",
                factor);
    return FALSE;
  }
  gboolean ok = TRUE;
  if (topo_variant_is_graph(v)) {
    for (int i = 0; ok && tv_item_get(v, "graph.links", i, "bandwidth", NULL); i++)
      ok = scale_link(v, i, "bandwidth", factor);
  } else {
    int n = tv_n_tiers(v);
    for (int d = 0; d < n && ok; d++)
      if (dim == -1 || d == dim) {
        tv_dim x;
        tv_dim_read(v, d, &x);
        ok = scale_u64(x.bw, factor, 1, &x.bw);
        if (x.stream_bw > 0) /* one stream's share scales with the link */
          ok = ok && scale_u64(x.stream_bw, factor, 1, &x.stream_bw);
        if (ok)
          tv_dim_write(v, &x);
      }
  }
  if (!ok) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_LIMIT, "%s: bandwidth x%g does not fit in 64 bits", tv_src(v), factor);
    return FALSE;
  }
  tv_add_label(v, "%s.bandwidth x%g", dim < 0 ? "all" : topo_variant_dim_name(v, dim), factor);
  return TRUE;
}

gboolean topo_variant_scale_latency(topo_variant *v, int dim, double factor, GError **error)
{
  if (!check_dim(v, dim, error))
    return FALSE;
  if (!(factor >= 0.0) || !isfinite(factor)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "latency scale factor must be >= 0, got %g", factor);
    return FALSE;
  }
  gboolean ok = TRUE;
  if (topo_variant_is_graph(v)) {
    for (int i = 0; ok && tv_item_get(v, "graph.links", i, "latency", NULL); i++)
      ok = scale_link(v, i, "latency", factor);
  } else {
    int n = tv_n_tiers(v);
    for (int d = 0; d < n && ok; d++)
      if (dim == -1 || d == dim) {
        tv_dim x;
        uint64_t t = 0;
        tv_dim_read(v, d, &x);
        ok = scale_u64((uint64_t)x.latency, factor, 0, &t) && t <= (uint64_t)INT64_MAX;
        x.latency = (sim_time_ps)t;
        if (ok)
          tv_dim_write(v, &x);
      }
  }
  if (!ok) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_LIMIT, "%s: latency x%g does not fit in 64 bits", tv_src(v), factor);
    return FALSE;
  }
  tv_add_label(v, "%s.latency x%g", dim < 0 ? "all" : topo_variant_dim_name(v, dim), factor);
  return TRUE;
}

static gboolean need_dims(const topo_variant *v, const char *what, GError **error)
{
  if (topo_variant_is_graph(v)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED,
                "%s: %s needs a hierarchical topology ('dims:'); this one is an explicit graph", tv_src(v), what);
    return FALSE;
  }
  return TRUE;
}

static int ceil_div(int64_t a, int64_t b)
{
  return (int)((a + b - 1) / b);
}

/* Product of the sizes of dimensions [0, d). */
static int64_t inner_product(const topo_variant *v, int d)
{
  int64_t p = 1;
  for (int i = 0; i < d; i++)
    p *= tv_int_of(tv_item_get(v, "dims", i, "size", NULL));
  return p;
}

/* Resizes the outermost dimension so the grid holds the ranks. */
static gboolean refit_outer(topo_variant *v, GError **error)
{
  int o = tv_n_tiers(v) - 1, n_ranks = topo_variant_n_ranks(v);
  int64_t in = inner_product(v, o);
  tv_dim d;
  tv_dim_read(v, o, &d);
  if (tv_is_torus(d.kind) || o == 0) {
    if (in * d.size < n_ranks) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s: %" G_GINT64_FORMAT " endpoints cannot hold %d ranks; enlarge tier '%s'", tv_src(v), in * d.size,
                  n_ranks, d.name);
      return FALSE;
    }
    return TRUE;
  }
  int want = ceil_div(n_ranks, in);
  if (want < 1)
    want = 1;
  if (d.kind == TOPO_KIND_FAT_TREE && want % d.leaves != 0) {
    int leaves = d.leaves;
    while (leaves > 1 && want % leaves != 0)
      leaves--;
    tv_add_note(v, "tier '%s' now has %d leaves (was %d) so its %d endpoints spread evenly", d.name, leaves, d.leaves,
             want);
    d.leaves = leaves;
    d.spines = want / leaves;
  }
  d.size = want;
  tv_dim_write(v, &d);
  return TRUE;
}

/* Torus shape holding at least n endpoints: near-square powers of two for
 * 2-D (2x4, 4x4, 4x8, ... as TPU slices come), cube-like for 3-D. */
static void torus_fit(tv_dim *d, int n)
{
  if (d->n_axes == 2) {
    int a = 1;
    while ((int64_t)(a * 2) * (a * 2) <= n)
      a *= 2;
    d->shape[0] = a;
    d->shape[1] = ceil_div(n, a);
  } else {
    int a = 1;
    while ((int64_t)(a * 2) * (a * 2) * (a * 2) <= n)
      a *= 2;
    d->shape[0] = a;
    d->shape[1] = a;
    d->shape[2] = ceil_div(n, (int64_t)a * a);
  }
  d->size = 1;
  for (int i = 0; i < d->n_axes; i++)
    d->size *= d->shape[i];
}

gboolean topo_variant_set_dim_size(topo_variant *v, int dim, int size, GError **error)
{
  if (!need_dims(v, "changing a tier's size", error) || !check_dim(v, dim, error))
    return FALSE;
  if (dim < 0 || size < 1) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: a tier size must be >= 1 (got %d)", tv_src(v), size);
    return FALSE;
  }
  tv_dim d;
  tv_dim_read(v, dim, &d);
  if (tv_is_torus(d.kind)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED,
                "%s: tier '%s' is a %s; set dims.%s.shape (e.g. \"4x8\") instead of its size", tv_src(v), d.name,
                topo_kind_name(d.kind), d.name);
    return FALSE;
  }
  if (tv_key_get(v, "placement")) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED,
                "%s: the topology places ranks explicitly ('placement:'); re-placing ranks into resized tiers is "
                "defined only for contiguous placement",
                tv_src(v));
    return FALSE;
  }
  int old = d.size, n = tv_n_tiers(v), n_ranks = topo_variant_n_ranks(v);
  if (dim < n - 1) {
    int cap = ceil_div(n_ranks, inner_product(v, dim));
    if (size > cap) {
      tv_add_note(v, "tier '%s' size %d capped at %d: %d ranks fill no larger domain", d.name, size, cap, n_ranks);
      size = cap;
    }
    d.size = size;
    tv_dim_write(v, &d);
    if (d.kind == TOPO_KIND_FAT_TREE && size % d.leaves != 0) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s: fat-tree tier '%s' has %d leaves, which do not divide the new size %d; set dims.%s.leaves too",
                  tv_src(v), d.name, d.leaves, size, d.name);
      return FALSE;
    }
    if (!refit_outer(v, error))
      return FALSE;
  } else {
    d.size = size;
    tv_dim_write(v, &d);
    if (inner_product(v, n) < n_ranks) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s: tier '%s' of size %d leaves %" G_GINT64_FORMAT " endpoints for %d ranks", tv_src(v), d.name,
                  size, inner_product(v, n), n_ranks);
      return FALSE;
    }
  }
  tv_add_label(v, "%s.size %d->%d", d.name, old, tv_int_of(tv_item_get(v, "dims", dim, "size", NULL)));
  return TRUE;
}

gboolean topo_variant_fit_ranks(topo_variant *v, int n_ranks, GError **error)
{
  if (n_ranks < 1) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "a topology needs at least one rank (got %d)", n_ranks);
    return FALSE;
  }
  int have = topo_variant_n_ranks(v);
  if (topo_variant_is_graph(v) || tv_key_get(v, "placement")) {
    if (have != n_ranks) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s places %d ranks explicitly but the workload has %d; a graph or explicit placement cannot be "
                  "refitted, write a config for %d ranks",
                  tv_src(v), have, n_ranks, n_ranks);
      return FALSE;
    }
    return TRUE;
  }
  char buf[32];
  g_snprintf(buf, sizeof buf, "%d", n_ranks);
  cfg_put(v->doc, "ranks", buf, 0);
  int last = tv_n_tiers(v) - 1;
  for (int d = 0; d <= last; d++) {
    tv_dim x;
    tv_dim_read(v, d, &x);
    int64_t in = inner_product(v, d);
    int cap = ceil_div(n_ranks, in);
    if (d == last && last > 0 && !tv_is_torus(x.kind))
      break;
    if (tv_is_torus(x.kind)) {
      if (x.size > cap || (d == last && in * x.size < n_ranks)) {
        int was = x.size;
        torus_fit(&x, cap);
        tv_dim_write(v, &x);
        if (x.size != was) {
          char third[16] = "";
          if (x.n_axes == 3)
            g_snprintf(third, sizeof third, "x%d", x.shape[2]);
          tv_add_note(v, "torus tier '%s' resized from %d to %d endpoints (%dx%d%s) for %d ranks", x.name, was, x.size,
                   x.shape[0], x.shape[1], third, n_ranks);
        }
      }
    } else if (x.size > cap) {
      tv_add_note(v, "tier '%s' size %d capped at %d for %d ranks", x.name, x.size, cap, n_ranks);
      x.size = cap;
      tv_dim_write(v, &x);
    } else if (d == last && x.size < cap) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s has a single tier '%s' of %d endpoints but the workload has %d ranks; use a cluster with a "
                  "scale-out tier",
                  tv_src(v), x.name, x.size, n_ranks);
      return FALSE;
    }
  }
  if (last > 0 && !refit_outer(v, error))
    return FALSE;
  return TRUE;
}

/* ---- set by key ---- */

static gboolean bad_value(const topo_variant *v, const char *key, const char *value, const char *why,
                          GError **error)
{
  g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: cannot set '%s' to '%s': %s", tv_src(v), key, value, why);
  return FALSE;
}

static gboolean parse_int(const char *s, int lo, int hi, int *out)
{
  char *end;
  errno = 0;
  long x = strtol(s, &end, 10);
  if (*s == '\0' || *end != '\0' || errno || x < lo || x > hi)
    return FALSE;
  *out = (int)x;
  return TRUE;
}

static gboolean set_kind(topo_variant *v, tv_dim *d, const char *key, const char *value, GError **error)
{
  static const topo_kind kinds[] = {TOPO_KIND_RING_UNI, TOPO_KIND_RING, TOPO_KIND_FULLY_CONNECTED,
                                    TOPO_KIND_SWITCH, TOPO_KIND_TORUS2D, TOPO_KIND_TORUS3D, TOPO_KIND_FAT_TREE};
  for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++) {
    if (strcmp(value, topo_kind_name(kinds[i])) != 0)
      continue;
    topo_kind k = kinds[i];
    if (tv_is_torus(k) && !tv_is_torus(d->kind)) {
      d->n_axes = k == TOPO_KIND_TORUS2D ? 2 : 3;
      torus_fit(d, d->size);
      if (d->size != d->shape[0] * d->shape[1] * (d->n_axes == 3 ? d->shape[2] : 1))
        return bad_value(v, key, value, "internal torus shape mismatch", error);
    } else if (tv_is_torus(k) && k != d->kind) {
      d->n_axes = k == TOPO_KIND_TORUS2D ? 2 : 3;
      torus_fit(d, d->size);
    }
    if (k == TOPO_KIND_FAT_TREE && d->kind != TOPO_KIND_FAT_TREE) {
      d->leaves = 1;
      d->spines = 1;
      d->oversub = 1.0;
    }
    d->kind = k;
    d->n_axes = k == TOPO_KIND_TORUS2D ? 2 : k == TOPO_KIND_TORUS3D ? 3 : d->n_axes;
    tv_dim_write(v, d);
    tv_add_label(v, "%s.kind=%s", d->name, value);
    return TRUE;
  }
  return bad_value(v, key, value,
                   "expected ring, ring_uni, fully_connected, switch, torus2d, torus3d or fat_tree", error);
}

static gboolean set_shape(topo_variant *v, tv_dim *d, const char *key, const char *value, GError **error)
{
  if (!tv_is_torus(d->kind))
    return bad_value(v, key, value, "shape applies only to torus2d/torus3d tiers", error);
  char *s = g_strdup(value);
  g_strdelimit(s, "[]", ' ');
  g_strdelimit(s, "x,", ' ');
  char **parts = g_strsplit_set(g_strstrip(s), " ", -1);
  int n = 0, shape[3] = {0};
  gboolean ok = TRUE;
  for (char **p = parts; *p && ok; p++) {
    if (**p == '\0')
      continue;
    if (n >= 3 || !parse_int(*p, 1, (int)TOPO_MAX_ENDPOINTS, &shape[n]))
      ok = FALSE;
    n++;
  }
  g_strfreev(parts);
  g_free(s);
  if (!ok || n != d->n_axes)
    return bad_value(v, key, value, d->n_axes == 2 ? "expected two axis sizes, e.g. 4x8"
                                                   : "expected three axis sizes, e.g. 4x4x4", error);
  int64_t prod = 1;
  for (int i = 0; i < n; i++)
    prod *= shape[i];
  if (prod > TOPO_MAX_ENDPOINTS)
    return bad_value(v, key, value, "too many endpoints", error);
  memcpy(d->shape, shape, sizeof shape);
  d->size = (int)prod;
  tv_dim_write(v, d);
  tv_add_label(v, "%s.shape=%s", d->name, value);
  int tiers = tv_n_tiers(v);
  if (tiers > 1 && d->index != tiers - 1)
    return refit_outer(v, error);
  return TRUE;
}

/* A new link bandwidth for a tier; a stream bandwidth keeps its ratio to
 * the link's (the same port, faster). */
static void set_dim_bw(tv_dim *d, wisp_bw_Bps b)
{
  if (d->stream_bw > 0 && d->bw > 0)
    d->stream_bw = MAX((wisp_bw_Bps)1, (wisp_bw_Bps)llround((double)d->stream_bw * ((double)b / (double)d->bw)));
  d->bw = b;
}

static gboolean set_role(topo_variant *v, const char *key, const char *value, gboolean bw, int lo, int hi,
                         gboolean torus_only, GError **error)
{
  wisp_bw_Bps b = 0;
  sim_time_ps t = 0;
  const char *why = NULL;
  if (bw ? !wisp_parse_bandwidth(value, &b, &why) : !wisp_parse_time(value, &t, &why))
    return bad_value(v, key, value, why, error);
  int hit = 0;
  for (int d = lo; d <= hi; d++) {
    tv_dim x;
    tv_dim_read(v, d, &x);
    if (torus_only && !tv_is_torus(x.kind))
      continue;
    if (bw)
      set_dim_bw(&x, b);
    else
      x.latency = t;
    tv_dim_write(v, &x);
    hit++;
  }
  if (hit == 0)
    return bad_value(v, key, value, torus_only ? "the topology has no torus tier" : "the topology has no such tier",
                     error);
  tv_add_label(v, "%s=%s", key, value);
  return TRUE;
}

gboolean topo_variant_set(topo_variant *v, const char *key, const char *value, GError **error)
{
  /* The net, collectives and library sections: the document's. */
  if (cfg_is_setting(key)) {
    const char *why = NULL;
    if (!cfg_set(v->doc, key, value, &why))
      return bad_value(v, key, value, why, error);
    tv_add_label(v, "%s=%s", key, value);
    return TRUE;
  }
  if (strcmp(key, "name") == 0) {
    cfg_set_name(v->doc, value);
    return TRUE;
  }
  if (strcmp(key, "ranks") == 0) {
    int r;
    if (!parse_int(value, 1, (int)TOPO_MAX_ENDPOINTS, &r))
      return bad_value(v, key, value, "expected a positive integer", error);
    return topo_variant_fit_ranks(v, r, error);
  }
  gboolean is_bw = g_str_has_suffix(key, "_bw"), is_lat = g_str_has_suffix(key, "_latency");
  if (g_str_has_prefix(key, "scale_up_") || g_str_has_prefix(key, "scale_out_") || strcmp(key, "ici_bw") == 0) {
    if (!need_dims(v, key, error))
      return FALSE;
    int so = topo_variant_scale_out_dim(v);
    if (strcmp(key, "scale_up_domain") == 0) {
      int size;
      if (!parse_int(value, 1, (int)TOPO_MAX_ENDPOINTS, &size))
        return bad_value(v, key, value, "expected a positive integer", error);
      return topo_variant_set_dim_size(v, topo_variant_domain_dim(v), size, error);
    }
    if (!is_bw && !is_lat)
      goto unknown;
    if (strcmp(key, "ici_bw") == 0)
      return set_role(v, key, value, TRUE, 0, tv_n_tiers(v) - 1, TRUE, error);
    if (g_str_has_prefix(key, "scale_out_")) {
      if (so < 0)
        return bad_value(v, key, value, "the topology has one tier only, so no scale-out tier", error);
      return set_role(v, key, value, is_bw, so, so, FALSE, error);
    }
    return set_role(v, key, value, is_bw, 0, so < 0 ? 0 : so - 1, FALSE, error);
  }
  if (g_str_has_prefix(key, "dims.")) {
    const char *rest = key + 5, *dot = strrchr(rest, '.');
    if (dot == NULL || dot == rest)
      goto unknown;
    if (!need_dims(v, key, error))
      return FALSE;
    char *tier = g_strndup(rest, (gsize)(dot - rest));
    int d = topo_variant_find_dim(v, tier);
    g_free(tier);
    if (d < 0) {
      GString *names = g_string_new(NULL);
      for (int i = 0, n = tv_n_tiers(v); i < n; i++)
        g_string_append_printf(names, "%s%s", i ? ", " : "", tv_item_get(v, "dims", i, "name", NULL));
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: '%s' names no tier; the tiers are: %s", tv_src(v), key,
                  names->str);
      g_string_free(names, TRUE);
      return FALSE;
    }
    tv_dim xd;
    tv_dim *x = &xd;
    tv_dim_read(v, d, x);
    const char *field = dot + 1, *why = NULL;
    if (strcmp(field, "bandwidth") == 0) {
      wisp_bw_Bps b = 0;
      if (!wisp_parse_bandwidth(value, &b, &why))
        return bad_value(v, key, value, why, error);
      set_dim_bw(x, b);
    } else if (strcmp(field, "latency") == 0) {
      if (!wisp_parse_time(value, &x->latency, &why))
        return bad_value(v, key, value, why, error);
    } else if (strcmp(field, "size") == 0) {
      int size;
      if (!parse_int(value, 1, (int)TOPO_MAX_ENDPOINTS, &size))
        return bad_value(v, key, value, "expected a positive integer", error);
      return topo_variant_set_dim_size(v, d, size, error);
    } else if (strcmp(field, "kind") == 0) {
      return set_kind(v, x, key, value, error);
    } else if (strcmp(field, "shape") == 0) {
      return set_shape(v, x, key, value, error);
    } else if (strcmp(field, "leaves") == 0 || strcmp(field, "spines") == 0) {
      int n;
      if (x->kind != TOPO_KIND_FAT_TREE)
        return bad_value(v, key, value, "leaves/spines apply only to fat_tree tiers", error);
      if (!parse_int(value, 1, 65536, &n))
        return bad_value(v, key, value, "expected a positive integer", error);
      *(field[0] == 'l' ? &x->leaves : &x->spines) = n;
    } else if (strcmp(field, "oversubscription") == 0) {
      char *end;
      double o = g_ascii_strtod(value, &end);
      if (x->kind != TOPO_KIND_FAT_TREE || *end || !(o >= 1.0) || !isfinite(o))
        return bad_value(v, key, value, "oversubscription is a number >= 1 on fat_tree tiers", error);
      x->oversub = o;
    } else {
      goto unknown;
    }
    tv_dim_write(v, x);
    tv_add_label(v, "%s=%s", key, value);
    return TRUE;
  }
unknown:
  g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
              "unknown topology key '%s'; use model, ranks, dims.TIER.{bandwidth,latency,size,kind,shape,leaves,"
              "spines,oversubscription}, scale_up_bw, scale_out_bw, ici_bw, scale_up_latency, scale_out_latency, "
              "scale_up_domain, collectives.* or library.*",
              key);
  return FALSE;
}
