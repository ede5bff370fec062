/* topo_variant.c: editable config snapshots for what-if studies (see
 * topo_variant.h).  The topology section is taken from the private
 * representation (topo_internal.h, this layer's own); the other sections
 * (net, collectives, library) are an editable copy of the config document
 * (config/cfg.h), which the variant edits without interpreting them.  Both
 * are written back as wisp YAML, so the config reader and the topology
 * loader stay the single places that validate and build. */
#include "config.h"
#include "topologies/topo_variant.h"
#include "topologies/topo_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char *name;
  topo_kind kind;
  int size;
  wisp_bw_Bps bw;
  sim_time_ps latency;
  int n_axes;
  int shape[3];
  int leaves, spines;
  double oversub;
  char *fabric;            /* shared fabric name or NULL (topo_dim.fabric) */
  wisp_bw_Bps stream_bw;   /* topo_dim.stream_bw; 0 = none */
} tv_dim;

struct topo_variant {
  char *source;
  char *name;
  cfg_doc *doc;             /* net, collectives and library settings (cfg_copy_settings) */
  int node_dims;           /* `node_dims:` as given (0 = not given) */
  gboolean graph;
  int n_dims;
  tv_dim *dims;
  /* Explicit graphs: node names (endpoints first) and directed links. */
  uint32_t n_endpoints, n_nodes;
  char **node_names;
  GArray *links;           /* topo_link */
  int n_ranks;
  uint32_t *placement;     /* NULL = contiguous */
  GString *notes;
  GString *label;
};

topo_variant *topo_variant_new(const topo *base)
{
  topo_variant *v = g_new0(topo_variant, 1);
  v->source = g_strdup(base->source);
  v->name = g_strdup(base->name);
  v->node_dims = base->node_dims;
  v->graph = base->format == TOPO_FORMAT_GRAPH;
  v->n_ranks = base->n_ranks;
  if (!base->contiguous) {
    v->placement = g_new(uint32_t, base->n_ranks);
    memcpy(v->placement, base->rank_ep, sizeof(uint32_t) * (size_t)base->n_ranks);
  }
  if (v->graph) {
    v->n_endpoints = base->n_endpoints;
    v->n_nodes = base->n_nodes;
    v->node_names = g_new0(char *, base->n_nodes + 1);
    for (uint32_t i = 0; i < base->n_nodes; i++)
      v->node_names[i] = g_strdup(base->node_names[i]);
    v->links = g_array_sized_new(FALSE, FALSE, sizeof(topo_link), base->links->len);
    g_array_append_vals(v->links, base->links->data, base->links->len);
  } else {
    v->n_dims = base->n_dims;
    v->dims = g_new0(tv_dim, base->n_dims);
    for (int d = 0; d < base->n_dims; d++) {
      const topo_dim *s = &base->dims[d];
      tv_dim *o = &v->dims[d];
      o->name = g_strdup(s->name);
      o->kind = s->kind;
      o->size = s->size;
      o->bw = s->bw;
      o->latency = s->latency;
      o->n_axes = s->n_axes;
      memcpy(o->shape, s->shape, sizeof o->shape);
      o->leaves = s->leaves;
      o->spines = s->spines;
      o->oversub = s->oversub;
      o->fabric = g_strdup(s->fabric);
      o->stream_bw = s->stream_bw;
    }
  }
  /* A topology built otherwise than from a config has no settings. */
  v->doc = base->config ? cfg_copy_settings(base->config) : cfg_new_edit(base->source);
  v->notes = g_string_new(NULL);
  v->label = g_string_new(NULL);
  return v;
}

topo_variant *topo_variant_copy(const topo_variant *v)
{
  topo_variant *c = g_new0(topo_variant, 1);
  *c = *v;
  c->source = g_strdup(v->source);
  c->name = g_strdup(v->name);
  if (v->placement)
    c->placement = g_memdup2(v->placement, sizeof(uint32_t) * (size_t)v->n_ranks);
  if (v->graph) {
    c->node_names = g_new0(char *, v->n_nodes + 1);
    for (uint32_t i = 0; i < v->n_nodes; i++)
      c->node_names[i] = g_strdup(v->node_names[i]);
    c->links = g_array_sized_new(FALSE, FALSE, sizeof(topo_link), v->links->len);
    g_array_append_vals(c->links, v->links->data, v->links->len);
  }
  if (v->n_dims) {
    c->dims = g_new0(tv_dim, v->n_dims);
    for (int d = 0; d < v->n_dims; d++) {
      c->dims[d] = v->dims[d];
      c->dims[d].name = g_strdup(v->dims[d].name);
      c->dims[d].fabric = g_strdup(v->dims[d].fabric);
    }
  }
  c->doc = cfg_copy_settings(v->doc);
  c->notes = g_string_new(v->notes->str);
  c->label = g_string_new(v->label->str);
  return c;
}

void topo_variant_free(topo_variant *v)
{
  if (v == NULL)
    return;
  g_free(v->source);
  g_free(v->name);
  for (int d = 0; d < v->n_dims; d++) {
    g_free(v->dims[d].name);
    g_free(v->dims[d].fabric);
  }
  g_free(v->dims);
  if (v->node_names)
    g_strfreev(v->node_names);
  if (v->links)
    g_array_free(v->links, TRUE);
  g_free(v->placement);
  cfg_unref(v->doc);
  g_string_free(v->notes, TRUE);
  g_string_free(v->label, TRUE);
  g_free(v);
}

/* ---- read access ---- */

int topo_variant_n_dims(const topo_variant *v)
{
  return v->graph ? 1 : v->n_dims;
}

gboolean topo_variant_is_graph(const topo_variant *v)
{
  return v->graph;
}

const char *topo_variant_dim_name(const topo_variant *v, int dim)
{
  g_assert(dim >= 0 && dim < topo_variant_n_dims(v));
  return v->graph ? "graph" : v->dims[dim].name;
}

topo_kind topo_variant_dim_kind(const topo_variant *v, int dim)
{
  g_assert(dim >= 0 && dim < topo_variant_n_dims(v));
  return v->graph ? TOPO_KIND_GRAPH : v->dims[dim].kind;
}

int topo_variant_dim_size(const topo_variant *v, int dim)
{
  g_assert(dim >= 0 && dim < topo_variant_n_dims(v));
  return v->graph ? (int)v->n_endpoints : v->dims[dim].size;
}

/* For graphs: the smallest link bandwidth (the bottleneck a user would quote). */
wisp_bw_Bps topo_variant_dim_bw(const topo_variant *v, int dim)
{
  g_assert(dim >= 0 && dim < topo_variant_n_dims(v));
  if (!v->graph)
    return v->dims[dim].bw;
  wisp_bw_Bps m = 0;
  for (guint i = 0; i < v->links->len; i++) {
    wisp_bw_Bps b = g_array_index(v->links, topo_link, i).bw;
    if (m == 0 || b < m)
      m = b;
  }
  return m;
}

sim_time_ps topo_variant_dim_latency(const topo_variant *v, int dim)
{
  g_assert(dim >= 0 && dim < topo_variant_n_dims(v));
  if (!v->graph)
    return v->dims[dim].latency;
  return v->links->len ? g_array_index(v->links, topo_link, 0).latency : 0;
}

int topo_variant_n_ranks(const topo_variant *v)
{
  return v->n_ranks;
}

int topo_variant_find_dim(const topo_variant *v, const char *name)
{
  if (v->graph)
    return g_strcmp0(name, "graph") == 0 || g_strcmp0(name, "0") == 0 ? 0 : -1;
  for (int d = 0; d < v->n_dims; d++)
    if (strcmp(v->dims[d].name, name) == 0)
      return d;
  char *end;
  errno = 0;
  long i = strtol(name, &end, 10);
  if (*name && *end == '\0' && errno == 0 && i >= 0 && i < v->n_dims)
    return (int)i;
  return -1;
}

int topo_variant_scale_out_dim(const topo_variant *v)
{
  /* node_dims covering every tier: one node, no scale-out tier. */
  if (v->node_dims > 0 && v->node_dims >= v->n_dims)
    return -1;
  return !v->graph && v->n_dims >= 2 ? v->n_dims - 1 : -1;
}

int topo_variant_domain_dim(const topo_variant *v)
{
  if (v->graph)
    return -1;
  if (v->node_dims > 0)
    return v->node_dims - 1;
  return v->n_dims >= 2 ? v->n_dims - 2 : 0;
}

const char *topo_variant_notes(const topo_variant *v)
{
  return v->notes->str;
}

const char *topo_variant_label(const topo_variant *v)
{
  return v->label->str;
}

static void add_label(topo_variant *v, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void add_label(topo_variant *v, const char *fmt, ...)
{
  va_list ap;
  if (v->label->len)
    g_string_append(v->label, ", ");
  va_start(ap, fmt);
  g_string_append_vprintf(v->label, fmt, ap);
  va_end(ap);
}

static void add_note(topo_variant *v, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void add_note(topo_variant *v, const char *fmt, ...)
{
  va_list ap;
  if (v->notes->len)
    g_string_append(v->notes, "; ");
  va_start(ap, fmt);
  g_string_append_vprintf(v->notes, fmt, ap);
  va_end(ap);
}

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
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: no dimension %d (the topology has %d)", v->source, dim,
                topo_variant_n_dims(v));
    return FALSE;
  }
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
  if (v->graph) {
    for (guint i = 0; i < v->links->len; i++) {
      topo_link *l = &g_array_index(v->links, topo_link, i);
      ok = ok && scale_u64(l->bw, factor, 1, &l->bw);
    }
  } else {
    for (int d = 0; d < v->n_dims; d++)
      if (dim == -1 || d == dim) {
        ok = ok && scale_u64(v->dims[d].bw, factor, 1, &v->dims[d].bw);
        if (v->dims[d].stream_bw > 0) /* one stream's share scales with the link */
          ok = ok && scale_u64(v->dims[d].stream_bw, factor, 1, &v->dims[d].stream_bw);
      }
  }
  if (!ok) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_LIMIT, "%s: bandwidth x%g does not fit in 64 bits", v->source, factor);
    return FALSE;
  }
  add_label(v, "%s.bandwidth x%g", dim < 0 ? "all" : topo_variant_dim_name(v, dim), factor);
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
  uint64_t x = 0;
  if (v->graph) {
    for (guint i = 0; i < v->links->len; i++) {
      topo_link *l = &g_array_index(v->links, topo_link, i);
      ok = ok && scale_u64((uint64_t)l->latency, factor, 0, &x) && x <= (uint64_t)INT64_MAX;
      l->latency = (sim_time_ps)x;
    }
  } else {
    for (int d = 0; d < v->n_dims; d++)
      if (dim == -1 || d == dim) {
        ok = ok && scale_u64((uint64_t)v->dims[d].latency, factor, 0, &x) && x <= (uint64_t)INT64_MAX;
        v->dims[d].latency = (sim_time_ps)x;
      }
  }
  if (!ok) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_LIMIT, "%s: latency x%g does not fit in 64 bits", v->source, factor);
    return FALSE;
  }
  add_label(v, "%s.latency x%g", dim < 0 ? "all" : topo_variant_dim_name(v, dim), factor);
  return TRUE;
}

static gboolean need_dims(const topo_variant *v, const char *what, GError **error)
{
  if (v->graph) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED,
                "%s: %s needs a hierarchical topology ('dims:'); this one is an explicit graph", v->source, what);
    return FALSE;
  }
  return TRUE;
}

static int ceil_div(int64_t a, int64_t b)
{
  return (int)((a + b - 1) / b);
}

static gboolean is_torus(topo_kind k)
{
  return k == TOPO_KIND_TORUS2D || k == TOPO_KIND_TORUS3D;
}

/* Product of the sizes of dimensions [0, d). */
static int64_t inner_product(const topo_variant *v, int d)
{
  int64_t p = 1;
  for (int i = 0; i < d; i++)
    p *= v->dims[i].size;
  return p;
}

/* Resizes the outermost dimension so the grid holds n_ranks endpoints. */
static gboolean refit_outer(topo_variant *v, GError **error)
{
  int o = v->n_dims - 1;
  int64_t in = inner_product(v, o);
  tv_dim *d = &v->dims[o];
  if (is_torus(d->kind) || o == 0) {
    if (in * d->size < v->n_ranks) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s: %" G_GINT64_FORMAT " endpoints cannot hold %d ranks; enlarge tier '%s'", v->source,
                  in * d->size, v->n_ranks, d->name);
      return FALSE;
    }
    return TRUE;
  }
  int want = ceil_div(v->n_ranks, in);
  if (want < 1)
    want = 1;
  if (d->kind == TOPO_KIND_FAT_TREE && want % d->leaves != 0) {
    int leaves = d->leaves;
    while (leaves > 1 && want % leaves != 0)
      leaves--;
    add_note(v, "tier '%s' now has %d leaves (was %d) so its %d endpoints spread evenly", d->name, leaves,
             d->leaves, want);
    d->leaves = leaves;
    d->spines = want / leaves;
  }
  d->size = want;
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
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: a tier size must be >= 1 (got %d)", v->source, size);
    return FALSE;
  }
  tv_dim *d = &v->dims[dim];
  if (is_torus(d->kind)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED,
                "%s: tier '%s' is a %s; set dims.%s.shape (e.g. \"4x8\") instead of its size", v->source, d->name,
                topo_kind_name(d->kind), d->name);
    return FALSE;
  }
  if (v->placement) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED,
                "%s: the topology places ranks explicitly ('placement:'); re-placing ranks into resized tiers is "
                "defined only for contiguous placement",
                v->source);
    return FALSE;
  }
  int old = d->size;
  if (dim < v->n_dims - 1) {
    int cap = ceil_div(v->n_ranks, inner_product(v, dim));
    if (size > cap) {
      add_note(v, "tier '%s' size %d capped at %d: %d ranks fill no larger domain", d->name, size, cap, v->n_ranks);
      size = cap;
    }
    d->size = size;
    if (d->kind == TOPO_KIND_FAT_TREE && size % d->leaves != 0) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s: fat-tree tier '%s' has %d leaves, which do not divide the new size %d; set dims.%s.leaves too",
                  v->source, d->name, d->leaves, size, d->name);
      return FALSE;
    }
    if (!refit_outer(v, error))
      return FALSE;
  } else {
    d->size = size;
    if (inner_product(v, v->n_dims) < v->n_ranks) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s: tier '%s' of size %d leaves %" G_GINT64_FORMAT " endpoints for %d ranks", v->source, d->name,
                  size, inner_product(v, v->n_dims), v->n_ranks);
      return FALSE;
    }
  }
  add_label(v, "%s.size %d->%d", d->name, old, d->size);
  return TRUE;
}

gboolean topo_variant_fit_ranks(topo_variant *v, int n_ranks, GError **error)
{
  if (n_ranks < 1) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "a topology needs at least one rank (got %d)", n_ranks);
    return FALSE;
  }
  if (v->graph || v->placement) {
    if (v->n_ranks != n_ranks) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s places %d ranks explicitly but the workload has %d; a graph or explicit placement cannot be "
                  "refitted, write a config for %d ranks",
                  v->source, v->n_ranks, n_ranks, n_ranks);
      return FALSE;
    }
    return TRUE;
  }
  v->n_ranks = n_ranks;
  int last = v->n_dims - 1;
  for (int d = 0; d < v->n_dims; d++) {
    tv_dim *x = &v->dims[d];
    int64_t in = inner_product(v, d);
    int cap = ceil_div(n_ranks, in);
    if (d == last && last > 0 && !is_torus(x->kind))
      break;
    if (is_torus(x->kind)) {
      if (x->size > cap || (d == last && in * x->size < n_ranks)) {
        int was = x->size;
        torus_fit(x, cap);
        if (x->size != was) {
          char third[16] = "";
          if (x->n_axes == 3)
            g_snprintf(third, sizeof third, "x%d", x->shape[2]);
          add_note(v, "torus tier '%s' resized from %d to %d endpoints (%dx%d%s) for %d ranks", x->name, was,
                   x->size, x->shape[0], x->shape[1], third, n_ranks);
        }
      }
    } else if (x->size > cap) {
      add_note(v, "tier '%s' size %d capped at %d for %d ranks", x->name, x->size, cap, n_ranks);
      x->size = cap;
    } else if (d == last && x->size < cap) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s has a single tier '%s' of %d endpoints but the workload has %d ranks; use a cluster with a "
                  "scale-out tier",
                  v->source, x->name, x->size, n_ranks);
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
  g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: cannot set '%s' to '%s': %s", v->source, key, value, why);
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
    if (is_torus(k) && !is_torus(d->kind)) {
      d->n_axes = k == TOPO_KIND_TORUS2D ? 2 : 3;
      torus_fit(d, d->size);
      if (d->size != d->shape[0] * d->shape[1] * (d->n_axes == 3 ? d->shape[2] : 1))
        return bad_value(v, key, value, "internal torus shape mismatch", error);
    } else if (is_torus(k) && k != d->kind) {
      d->n_axes = k == TOPO_KIND_TORUS2D ? 2 : 3;
      torus_fit(d, d->size);
    }
    if (k == TOPO_KIND_FAT_TREE && d->kind != TOPO_KIND_FAT_TREE) {
      d->leaves = 1;
      d->spines = 1;
      d->oversub = 1.0;
    }
    d->kind = k;
    add_label(v, "%s.kind=%s", d->name, value);
    return TRUE;
  }
  return bad_value(v, key, value,
                   "expected ring, ring_uni, fully_connected, switch, torus2d, torus3d or fat_tree", error);
}

static gboolean set_shape(topo_variant *v, tv_dim *d, const char *key, const char *value, GError **error)
{
  if (!is_torus(d->kind))
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
  add_label(v, "%s.shape=%s", d->name, value);
  if (v->n_dims > 1 && d != &v->dims[v->n_dims - 1])
    return refit_outer(v, error);
  return TRUE;
}

/* Applies fn-like edits to the dims selected by a role alias. */
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
    if (torus_only && !is_torus(v->dims[d].kind))
      continue;
    if (bw)
      set_dim_bw(&v->dims[d], b);
    else
      v->dims[d].latency = t;
    hit++;
  }
  if (hit == 0)
    return bad_value(v, key, value, torus_only ? "the topology has no torus tier" : "the topology has no such tier",
                     error);
  add_label(v, "%s=%s", key, value);
  return TRUE;
}

gboolean topo_variant_set(topo_variant *v, const char *key, const char *value, GError **error)
{
  /* The net, collectives and library sections: the document's. */
  if (cfg_is_setting(key)) {
    const char *why = NULL;
    if (!cfg_set(v->doc, key, value, &why))
      return bad_value(v, key, value, why, error);
    add_label(v, "%s=%s", key, value);
    return TRUE;
  }
  if (strcmp(key, "name") == 0) {
    g_free(v->name);
    v->name = g_strdup(value);
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
      return set_role(v, key, value, TRUE, 0, v->n_dims - 1, TRUE, error);
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
      for (int i = 0; i < v->n_dims; i++)
        g_string_append_printf(names, "%s%s", i ? ", " : "", v->dims[i].name);
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: '%s' names no tier; the tiers are: %s", v->source, key,
                  names->str);
      g_string_free(names, TRUE);
      return FALSE;
    }
    tv_dim *x = &v->dims[d];
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
    add_label(v, "%s=%s", key, value);
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

/* ---- YAML output ---- */

char *topo_variant_to_yaml(const topo_variant *v)
{
  GString *s = g_string_new(NULL);
  g_string_append(s, "# derived by wisp from ");
  for (const char *p = v->source; *p; p++)
    g_string_append_c(s, *p == '\n' ? ' ' : *p);
  g_string_append(s, "\nschema_version: 1\n");
  if (v->name) {
    g_string_append(s, "name: ");
    cfg_yaml_quoted(s, v->name);
    g_string_append_c(s, '\n');
  }
  sim_time_ps quantum = 0;
  g_string_append_printf(s, "model: %s\nranks: %d\n", cfg_get_or_default(v->doc, "model"), v->n_ranks);
  if (cfg_get_time(v->doc, "flow_quantum", &quantum) && quantum > 0)
    g_string_append_printf(s, "flow_quantum: %" G_GINT64_FORMAT "ps\n", quantum);
  if (v->node_dims > 0 && !v->graph)
    g_string_append_printf(s, "node_dims: %d\n", v->node_dims);
  if (v->graph) {
    g_string_append(s, "graph:\n  nodes:\n");
    for (uint32_t i = 0; i < v->n_nodes; i++) {
      g_string_append(s, "    - {name: ");
      cfg_yaml_quoted(s, v->node_names[i]);
      g_string_append_printf(s, ", kind: %s}\n", i < v->n_endpoints ? "endpoint" : "switch");
    }
    g_string_append(s, "  links:\n");
    for (guint i = 0; i < v->links->len; i++) {
      const topo_link *l = &g_array_index(v->links, topo_link, i);
      g_string_append(s, "    - {a: ");
      cfg_yaml_quoted(s, v->node_names[l->src]);
      g_string_append(s, ", b: ");
      cfg_yaml_quoted(s, v->node_names[l->dst]);
      g_string_append_printf(s, ", bandwidth: %" G_GUINT64_FORMAT "B/s, latency: %" G_GINT64_FORMAT "ps, duplex: false}\n",
                             l->bw, l->latency);
    }
  } else {
    g_string_append(s, "dims:\n");
    for (int d = 0; d < v->n_dims; d++) {
      const tv_dim *x = &v->dims[d];
      g_string_append(s, "  - {name: ");
      cfg_yaml_quoted(s, x->name);
      g_string_append_printf(s, ", kind: %s", topo_kind_name(x->kind));
      if (is_torus(x->kind)) {
        g_string_append_printf(s, ", shape: [%d, %d", x->shape[0], x->shape[1]);
        if (x->n_axes == 3)
          g_string_append_printf(s, ", %d", x->shape[2]);
        g_string_append_c(s, ']');
      } else {
        g_string_append_printf(s, ", size: %d", x->size);
      }
      g_string_append_printf(s, ", bandwidth: %" G_GUINT64_FORMAT "B/s, latency: %" G_GINT64_FORMAT "ps", x->bw,
                             x->latency);
      if (x->kind == TOPO_KIND_FAT_TREE) {
        char buf[G_ASCII_DTOSTR_BUF_SIZE];
        g_string_append_printf(s, ", leaves: %d, spines: %d, oversubscription: %s", x->leaves, x->spines,
                               g_ascii_dtostr(buf, sizeof buf, x->oversub));
      }
      if (x->stream_bw > 0)
        g_string_append_printf(s, ", stream_bandwidth: %" G_GUINT64_FORMAT "B/s", MIN(x->stream_bw, x->bw));
      if (x->fabric != NULL) {
        g_string_append(s, ", fabric: ");
        cfg_yaml_quoted(s, x->fabric);
      }
      g_string_append(s, "}\n");
    }
  }
  if (v->placement) {
    g_string_append(s, "placement: [");
    for (int r = 0; r < v->n_ranks; r++)
      g_string_append_printf(s, "%s%u", r ? ", " : "", v->placement[r]);
    g_string_append(s, "]\n");
  }
  cfg_write_sections(v->doc, s);
  return g_string_free(s, FALSE);
}

topo *topo_variant_build(const topo_variant *v, GError **error)
{
  char *text = topo_variant_to_yaml(v);
  char *src = v->label->len ? g_strdup_printf("%s [%s]", v->source, v->label->str) : g_strdup(v->source);
  topo *t = topo_load_string(text, src, error);
  g_free(src);
  g_free(text);
  return t;
}
