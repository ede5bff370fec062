/* topo_variant.c: editable config documents for what-if studies (see
 * topo_variant.h).  The variant is one editable cfg_doc: the settings of
 * the net, collectives and library sections, copied from the base's
 * document, and the base topology's section put as flat keys once
 * (put_section, from the resolved representation in topo_internal.h, this
 * layer's own).  Edits read and write those keys (a tier is read into a
 * tv_dim view and written back around each edit); the document is written
 * as wisp YAML and read back by the config reader and topo_from_config,
 * which stay the single places that validate and build. */
#include "config.h"
#include "topologies/topo_variant.h"
#include "topologies/topo_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A view of one tier, read from the document's keys dims.D.* by
 * dim_read and written back by dim_write around an edit; the document
 * stays the only copy between edits. */
typedef struct {
  int index;
  const char *name;        /* the document's string: tier names are never edited */
  topo_kind kind;
  int size;
  wisp_bw_Bps bw;
  sim_time_ps latency;
  int n_axes;              /* 2 or 3 for tori (from the kind), else 0 */
  int shape[3];
  int leaves, spines;
  double oversub;
  wisp_bw_Bps stream_bw;   /* 0 = none */
  int line;                /* the tier's config line (0 = made by an edit) */
} tv_dim;

struct topo_variant {
  /* The whole config as flat keys: the settings (model, flow_quantum,
   * collectives.*, library.*) and the topology section (see put_section). */
  cfg_doc *doc;
  GString *notes;
  GString *label;
};

/* ---- the topology section as document keys ----
 *
 * Keys, in the formats topo_variant_to_yaml writes (so writing needs no
 * conversion and reading back gives the same integers):
 *   ranks, node_dims                     "%d" (node_dims only when given)
 *   placement                            endpoint ids, comma-joined (only when explicit)
 *   dims.D.name, .kind                   text, topo_kind_name
 *   dims.D.size                          "%d" (also for tori: the product of the shape)
 *   dims.D.shape                         "4,8" (tori)
 *   dims.D.bandwidth, .stream_bandwidth  "%" G_GUINT64_FORMAT "B/s" (stream only when below the link's)
 *   dims.D.latency                       "%" G_GINT64_FORMAT "ps"
 *   dims.D.leaves, .spines               "%d" (fat trees)
 *   dims.D.oversubscription              g_ascii_dtostr (fat trees)
 *   dims.D.fabric                        text (when given)
 *   graph.nodes.I.name, .kind            text, endpoint | switch (endpoints first)
 *   graph.links.I.a, .b                  node names (one key per direction: duplex false)
 *   graph.links.I.bandwidth, .latency    as for dims
 * The dims.D.* keys carry the tier's config line (topo_dim.line). */

static const char *key_get(const topo_variant *v, const char *key)
{
  return cfg_get(v->doc, key, NULL);
}

static const char *item_get(const topo_variant *v, const char *list, int i, const char *field, int *line)
{
  char key[96];
  g_snprintf(key, sizeof key, "%s.%d.%s", list, i, field);
  return cfg_get(v->doc, key, line);
}

static void item_put(topo_variant *v, const char *list, int i, const char *field, int line, const char *fmt, ...)
  G_GNUC_PRINTF(6, 7);
static void item_put(topo_variant *v, const char *list, int i, const char *field, int line, const char *fmt, ...)
{
  char key[96], value[64];
  va_list ap;
  va_start(ap, fmt);
  g_vsnprintf(value, sizeof value, fmt, ap);
  va_end(ap);
  g_snprintf(key, sizeof key, "%s.%d.%s", list, i, field);
  cfg_put(v->doc, key, value, line);
}

/* Integer, bandwidth and time values of keys this file wrote (absent: 0). */
static int int_of(const char *s)
{
  return s ? (int)strtol(s, NULL, 10) : 0;
}

static wisp_bw_Bps bw_of(const char *s)
{
  wisp_bw_Bps b = 0;
  const char *why = NULL;
  return s && wisp_parse_bandwidth(s, &b, &why) ? b : 0;
}

static sim_time_ps time_of(const char *s)
{
  sim_time_ps t = 0;
  const char *why = NULL;
  return s && wisp_parse_time(s, &t, &why) ? t : 0;
}

static topo_kind kind_of(const char *s)
{
  static const topo_kind kinds[] = {TOPO_KIND_RING_UNI, TOPO_KIND_RING, TOPO_KIND_FULLY_CONNECTED,
                                    TOPO_KIND_SWITCH, TOPO_KIND_TORUS2D, TOPO_KIND_TORUS3D, TOPO_KIND_FAT_TREE};
  for (size_t i = 0; s && i < G_N_ELEMENTS(kinds); i++)
    if (strcmp(s, topo_kind_name(kinds[i])) == 0)
      return kinds[i];
  return TOPO_KIND_SWITCH;
}

static gboolean is_torus(topo_kind k)
{
  return k == TOPO_KIND_TORUS2D || k == TOPO_KIND_TORUS3D;
}

static void dim_read(const topo_variant *v, int d, tv_dim *x)
{
  memset(x, 0, sizeof *x);
  x->index = d;
  x->name = item_get(v, "dims", d, "name", NULL);
  x->kind = kind_of(item_get(v, "dims", d, "kind", &x->line));
  x->size = int_of(item_get(v, "dims", d, "size", NULL));
  x->bw = bw_of(item_get(v, "dims", d, "bandwidth", NULL));
  x->latency = time_of(item_get(v, "dims", d, "latency", NULL));
  x->n_axes = x->kind == TOPO_KIND_TORUS2D ? 2 : x->kind == TOPO_KIND_TORUS3D ? 3 : 0;
  const char *shape = item_get(v, "dims", d, "shape", NULL);
  if (shape) {
    char **parts = g_strsplit(shape, ",", 3);
    for (int i = 0; parts[i] && i < 3; i++)
      x->shape[i] = int_of(parts[i]);
    g_strfreev(parts);
  }
  x->leaves = int_of(item_get(v, "dims", d, "leaves", NULL));
  x->spines = int_of(item_get(v, "dims", d, "spines", NULL));
  const char *o = item_get(v, "dims", d, "oversubscription", NULL);
  x->oversub = o ? g_ascii_strtod(o, NULL) : 0.0;
  x->stream_bw = bw_of(item_get(v, "dims", d, "stream_bandwidth", NULL));
}

/* Writes back the fields a tier of x's kind has; keys of another kind
 * stay, unwritten by topo_variant_to_yaml (a torus turned ring keeps its
 * shape key; it is refitted if the tier becomes a torus again). */
static void dim_write(topo_variant *v, const tv_dim *x)
{
  int d = x->index, l = x->line;
  item_put(v, "dims", d, "kind", l, "%s", topo_kind_name(x->kind));
  item_put(v, "dims", d, "size", l, "%d", x->size);
  item_put(v, "dims", d, "bandwidth", l, "%" G_GUINT64_FORMAT "B/s", x->bw);
  item_put(v, "dims", d, "latency", l, "%" G_GINT64_FORMAT "ps", x->latency);
  if (is_torus(x->kind)) {
    if (x->n_axes == 3)
      item_put(v, "dims", d, "shape", l, "%d,%d,%d", x->shape[0], x->shape[1], x->shape[2]);
    else
      item_put(v, "dims", d, "shape", l, "%d,%d", x->shape[0], x->shape[1]);
  }
  if (x->kind == TOPO_KIND_FAT_TREE) {
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    item_put(v, "dims", d, "leaves", l, "%d", x->leaves);
    item_put(v, "dims", d, "spines", l, "%d", x->spines);
    item_put(v, "dims", d, "oversubscription", l, "%s", g_ascii_dtostr(buf, sizeof buf, x->oversub));
  }
  if (x->stream_bw > 0)
    item_put(v, "dims", d, "stream_bandwidth", l, "%" G_GUINT64_FORMAT "B/s", x->stream_bw);
}

/* The topology section of base as document keys (see above): what the
 * loader resolved (default names and spines, ASTRA-sim's GiB/s, sizes of
 * tori), so the variant's YAML is a wisp config of the same topology.
 * O(dims + graph nodes + links + ranks). */
static void put_section(topo_variant *v, const topo *base)
{
  char buf[32];
  g_snprintf(buf, sizeof buf, "%d", base->n_ranks);
  cfg_put(v->doc, "ranks", buf, 0);
  if (base->node_dims > 0 && base->format != TOPO_FORMAT_GRAPH) {
    g_snprintf(buf, sizeof buf, "%d", base->node_dims);
    cfg_put(v->doc, "node_dims", buf, 0);
  }
  if (!base->contiguous) {
    GString *p = g_string_new(NULL);
    for (int r = 0; r < base->n_ranks; r++)
      g_string_append_printf(p, "%s%u", r ? "," : "", base->rank_ep[r]);
    cfg_put(v->doc, "placement", p->str, 0);
    g_string_free(p, TRUE);
  }
  if (base->format == TOPO_FORMAT_GRAPH) {
    for (uint32_t i = 0; i < base->n_nodes; i++) {
      char key[64];
      g_snprintf(key, sizeof key, "graph.nodes.%u.name", i);
      cfg_put(v->doc, key, base->node_names[i], 0);
      g_snprintf(key, sizeof key, "graph.nodes.%u.kind", i);
      cfg_put(v->doc, key, i < base->n_endpoints ? "endpoint" : "switch", 0);
    }
    for (guint i = 0; i < base->links->len; i++) {
      const topo_link *l = &g_array_index(base->links, topo_link, i);
      char key[64];
      g_snprintf(key, sizeof key, "graph.links.%u.a", i);
      cfg_put(v->doc, key, base->node_names[l->src], 0);
      g_snprintf(key, sizeof key, "graph.links.%u.b", i);
      cfg_put(v->doc, key, base->node_names[l->dst], 0);
      item_put(v, "graph.links", (int)i, "bandwidth", 0, "%" G_GUINT64_FORMAT "B/s", l->bw);
      item_put(v, "graph.links", (int)i, "latency", 0, "%" G_GINT64_FORMAT "ps", l->latency);
    }
    return;
  }
  for (int d = 0; d < base->n_dims; d++) {
    const topo_dim *s = &base->dims[d];
    char key[96];
    g_snprintf(key, sizeof key, "dims.%d.name", d);
    cfg_put(v->doc, key, s->name, s->line);
    if (s->fabric) {
      g_snprintf(key, sizeof key, "dims.%d.fabric", d);
      cfg_put(v->doc, key, s->fabric, s->line);
    }
    tv_dim x = {.index = d, .kind = s->kind, .size = s->size, .bw = s->bw, .latency = s->latency,
                .n_axes = s->n_axes, .leaves = s->leaves, .spines = s->spines, .oversub = s->oversub,
                .stream_bw = s->stream_bw, .line = s->line};
    memcpy(x.shape, s->shape, sizeof x.shape);
    dim_write(v, &x);
  }
}

topo_variant *topo_variant_new(const topo *base)
{
  topo_variant *v = g_new0(topo_variant, 1);
  /* A topology built otherwise than from a config has no settings. */
  v->doc = base->config ? cfg_copy_settings(base->config) : cfg_new_edit(base->source);
  cfg_set_name(v->doc, base->name);
  put_section(v, base);
  v->notes = g_string_new(NULL);
  v->label = g_string_new(NULL);
  return v;
}

topo_variant *topo_variant_copy(const topo_variant *v)
{
  topo_variant *c = g_new0(topo_variant, 1);
  c->doc = cfg_copy_settings(v->doc);
  c->notes = g_string_new(v->notes->str);
  c->label = g_string_new(v->label->str);
  return c;
}

void topo_variant_free(topo_variant *v)
{
  if (v == NULL)
    return;
  cfg_unref(v->doc);
  g_string_free(v->notes, TRUE);
  g_string_free(v->label, TRUE);
  g_free(v);
}

/* ---- read access ---- */

gboolean topo_variant_is_graph(const topo_variant *v)
{
  return key_get(v, "graph.nodes.0.name") != NULL;
}

/* Tiers of a dims topology: O(dims log keys). */
static int n_tiers(const topo_variant *v)
{
  int n = 0;
  while (item_get(v, "dims", n, "kind", NULL) != NULL)
    n++;
  return n;
}

int topo_variant_n_dims(const topo_variant *v)
{
  return topo_variant_is_graph(v) ? 1 : n_tiers(v);
}

const char *topo_variant_dim_name(const topo_variant *v, int dim)
{
  g_assert(dim >= 0 && dim < topo_variant_n_dims(v));
  return topo_variant_is_graph(v) ? "graph" : item_get(v, "dims", dim, "name", NULL);
}

topo_kind topo_variant_dim_kind(const topo_variant *v, int dim)
{
  g_assert(dim >= 0 && dim < topo_variant_n_dims(v));
  return topo_variant_is_graph(v) ? TOPO_KIND_GRAPH : kind_of(item_get(v, "dims", dim, "kind", NULL));
}

int topo_variant_dim_size(const topo_variant *v, int dim)
{
  g_assert(dim >= 0 && dim < topo_variant_n_dims(v));
  if (!topo_variant_is_graph(v))
    return int_of(item_get(v, "dims", dim, "size", NULL));
  int n = 0;
  const char *k;
  for (int i = 0; (k = item_get(v, "graph.nodes", i, "kind", NULL)) != NULL; i++)
    n += strcmp(k, "endpoint") == 0;
  return n;
}

/* For graphs: the smallest link bandwidth (the bottleneck a user would quote). */
wisp_bw_Bps topo_variant_dim_bw(const topo_variant *v, int dim)
{
  g_assert(dim >= 0 && dim < topo_variant_n_dims(v));
  if (!topo_variant_is_graph(v))
    return bw_of(item_get(v, "dims", dim, "bandwidth", NULL));
  wisp_bw_Bps m = 0;
  const char *s;
  for (int i = 0; (s = item_get(v, "graph.links", i, "bandwidth", NULL)) != NULL; i++) {
    wisp_bw_Bps b = bw_of(s);
    if (m == 0 || b < m)
      m = b;
  }
  return m;
}

sim_time_ps topo_variant_dim_latency(const topo_variant *v, int dim)
{
  g_assert(dim >= 0 && dim < topo_variant_n_dims(v));
  if (!topo_variant_is_graph(v))
    return time_of(item_get(v, "dims", dim, "latency", NULL));
  return time_of(item_get(v, "graph.links", 0, "latency", NULL));
}

int topo_variant_n_ranks(const topo_variant *v)
{
  return int_of(key_get(v, "ranks"));
}

int topo_variant_find_dim(const topo_variant *v, const char *name)
{
  if (topo_variant_is_graph(v))
    return g_strcmp0(name, "graph") == 0 || g_strcmp0(name, "0") == 0 ? 0 : -1;
  int n = n_tiers(v);
  for (int d = 0; d < n; d++)
    if (strcmp(item_get(v, "dims", d, "name", NULL), name) == 0)
      return d;
  char *end;
  errno = 0;
  long i = strtol(name, &end, 10);
  if (*name && *end == '\0' && errno == 0 && i >= 0 && i < n)
    return (int)i;
  return -1;
}

int topo_variant_scale_out_dim(const topo_variant *v)
{
  int node_dims = int_of(key_get(v, "node_dims")), n = n_tiers(v);
  /* node_dims covering every tier: one node, no scale-out tier. */
  if (node_dims > 0 && node_dims >= n)
    return -1;
  return !topo_variant_is_graph(v) && n >= 2 ? n - 1 : -1;
}

int topo_variant_domain_dim(const topo_variant *v)
{
  if (topo_variant_is_graph(v))
    return -1;
  int node_dims = int_of(key_get(v, "node_dims"));
  if (node_dims > 0)
    return node_dims - 1;
  int n = n_tiers(v);
  return n >= 2 ? n - 2 : 0;
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

static const char *src(const topo_variant *v)
{
  return cfg_source(v->doc);
}

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
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: no dimension %d (the topology has %d)", src(v), dim,
                topo_variant_n_dims(v));
    return FALSE;
  }
  return TRUE;
}

/* Scales one bandwidth or latency key of a graph link in place. */
static gboolean scale_link(topo_variant *v, int i, const char *field, double factor)
{
  const char *s = item_get(v, "graph.links", i, field, NULL);
  uint64_t x = 0;
  if (strcmp(field, "bandwidth") == 0) {
    if (!scale_u64(bw_of(s), factor, 1, &x))
      return FALSE;
    item_put(v, "graph.links", i, field, 0, "%" G_GUINT64_FORMAT "B/s", x);
    return TRUE;
  }
  if (!scale_u64((uint64_t)time_of(s), factor, 0, &x) || x > (uint64_t)INT64_MAX)
    return FALSE;
  item_put(v, "graph.links", i, field, 0, "%" G_GINT64_FORMAT "ps", (sim_time_ps)x);
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
    for (int i = 0; ok && item_get(v, "graph.links", i, "bandwidth", NULL); i++)
      ok = scale_link(v, i, "bandwidth", factor);
  } else {
    int n = n_tiers(v);
    for (int d = 0; d < n && ok; d++)
      if (dim == -1 || d == dim) {
        tv_dim x;
        dim_read(v, d, &x);
        ok = scale_u64(x.bw, factor, 1, &x.bw);
        if (x.stream_bw > 0) /* one stream's share scales with the link */
          ok = ok && scale_u64(x.stream_bw, factor, 1, &x.stream_bw);
        if (ok)
          dim_write(v, &x);
      }
  }
  if (!ok) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_LIMIT, "%s: bandwidth x%g does not fit in 64 bits", src(v), factor);
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
  if (topo_variant_is_graph(v)) {
    for (int i = 0; ok && item_get(v, "graph.links", i, "latency", NULL); i++)
      ok = scale_link(v, i, "latency", factor);
  } else {
    int n = n_tiers(v);
    for (int d = 0; d < n && ok; d++)
      if (dim == -1 || d == dim) {
        tv_dim x;
        uint64_t t = 0;
        dim_read(v, d, &x);
        ok = scale_u64((uint64_t)x.latency, factor, 0, &t) && t <= (uint64_t)INT64_MAX;
        x.latency = (sim_time_ps)t;
        if (ok)
          dim_write(v, &x);
      }
  }
  if (!ok) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_LIMIT, "%s: latency x%g does not fit in 64 bits", src(v), factor);
    return FALSE;
  }
  add_label(v, "%s.latency x%g", dim < 0 ? "all" : topo_variant_dim_name(v, dim), factor);
  return TRUE;
}

static gboolean need_dims(const topo_variant *v, const char *what, GError **error)
{
  if (topo_variant_is_graph(v)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED,
                "%s: %s needs a hierarchical topology ('dims:'); this one is an explicit graph", src(v), what);
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
    p *= int_of(item_get(v, "dims", i, "size", NULL));
  return p;
}

/* Resizes the outermost dimension so the grid holds the ranks. */
static gboolean refit_outer(topo_variant *v, GError **error)
{
  int o = n_tiers(v) - 1, n_ranks = topo_variant_n_ranks(v);
  int64_t in = inner_product(v, o);
  tv_dim d;
  dim_read(v, o, &d);
  if (is_torus(d.kind) || o == 0) {
    if (in * d.size < n_ranks) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s: %" G_GINT64_FORMAT " endpoints cannot hold %d ranks; enlarge tier '%s'", src(v), in * d.size,
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
    add_note(v, "tier '%s' now has %d leaves (was %d) so its %d endpoints spread evenly", d.name, leaves, d.leaves,
             want);
    d.leaves = leaves;
    d.spines = want / leaves;
  }
  d.size = want;
  dim_write(v, &d);
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
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: a tier size must be >= 1 (got %d)", src(v), size);
    return FALSE;
  }
  tv_dim d;
  dim_read(v, dim, &d);
  if (is_torus(d.kind)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED,
                "%s: tier '%s' is a %s; set dims.%s.shape (e.g. \"4x8\") instead of its size", src(v), d.name,
                topo_kind_name(d.kind), d.name);
    return FALSE;
  }
  if (key_get(v, "placement")) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED,
                "%s: the topology places ranks explicitly ('placement:'); re-placing ranks into resized tiers is "
                "defined only for contiguous placement",
                src(v));
    return FALSE;
  }
  int old = d.size, n = n_tiers(v), n_ranks = topo_variant_n_ranks(v);
  if (dim < n - 1) {
    int cap = ceil_div(n_ranks, inner_product(v, dim));
    if (size > cap) {
      add_note(v, "tier '%s' size %d capped at %d: %d ranks fill no larger domain", d.name, size, cap, n_ranks);
      size = cap;
    }
    d.size = size;
    dim_write(v, &d);
    if (d.kind == TOPO_KIND_FAT_TREE && size % d.leaves != 0) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s: fat-tree tier '%s' has %d leaves, which do not divide the new size %d; set dims.%s.leaves too",
                  src(v), d.name, d.leaves, size, d.name);
      return FALSE;
    }
    if (!refit_outer(v, error))
      return FALSE;
  } else {
    d.size = size;
    dim_write(v, &d);
    if (inner_product(v, n) < n_ranks) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s: tier '%s' of size %d leaves %" G_GINT64_FORMAT " endpoints for %d ranks", src(v), d.name,
                  size, inner_product(v, n), n_ranks);
      return FALSE;
    }
  }
  add_label(v, "%s.size %d->%d", d.name, old, int_of(item_get(v, "dims", dim, "size", NULL)));
  return TRUE;
}

gboolean topo_variant_fit_ranks(topo_variant *v, int n_ranks, GError **error)
{
  if (n_ranks < 1) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "a topology needs at least one rank (got %d)", n_ranks);
    return FALSE;
  }
  int have = topo_variant_n_ranks(v);
  if (topo_variant_is_graph(v) || key_get(v, "placement")) {
    if (have != n_ranks) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s places %d ranks explicitly but the workload has %d; a graph or explicit placement cannot be "
                  "refitted, write a config for %d ranks",
                  src(v), have, n_ranks, n_ranks);
      return FALSE;
    }
    return TRUE;
  }
  char buf[32];
  g_snprintf(buf, sizeof buf, "%d", n_ranks);
  cfg_put(v->doc, "ranks", buf, 0);
  int last = n_tiers(v) - 1;
  for (int d = 0; d <= last; d++) {
    tv_dim x;
    dim_read(v, d, &x);
    int64_t in = inner_product(v, d);
    int cap = ceil_div(n_ranks, in);
    if (d == last && last > 0 && !is_torus(x.kind))
      break;
    if (is_torus(x.kind)) {
      if (x.size > cap || (d == last && in * x.size < n_ranks)) {
        int was = x.size;
        torus_fit(&x, cap);
        dim_write(v, &x);
        if (x.size != was) {
          char third[16] = "";
          if (x.n_axes == 3)
            g_snprintf(third, sizeof third, "x%d", x.shape[2]);
          add_note(v, "torus tier '%s' resized from %d to %d endpoints (%dx%d%s) for %d ranks", x.name, was, x.size,
                   x.shape[0], x.shape[1], third, n_ranks);
        }
      }
    } else if (x.size > cap) {
      add_note(v, "tier '%s' size %d capped at %d for %d ranks", x.name, x.size, cap, n_ranks);
      x.size = cap;
      dim_write(v, &x);
    } else if (d == last && x.size < cap) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s has a single tier '%s' of %d endpoints but the workload has %d ranks; use a cluster with a "
                  "scale-out tier",
                  src(v), x.name, x.size, n_ranks);
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
  g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: cannot set '%s' to '%s': %s", src(v), key, value, why);
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
    d->n_axes = k == TOPO_KIND_TORUS2D ? 2 : k == TOPO_KIND_TORUS3D ? 3 : d->n_axes;
    dim_write(v, d);
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
  dim_write(v, d);
  add_label(v, "%s.shape=%s", d->name, value);
  int tiers = n_tiers(v);
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
    dim_read(v, d, &x);
    if (torus_only && !is_torus(x.kind))
      continue;
    if (bw)
      set_dim_bw(&x, b);
    else
      x.latency = t;
    dim_write(v, &x);
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
      return set_role(v, key, value, TRUE, 0, n_tiers(v) - 1, TRUE, error);
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
      for (int i = 0, n = n_tiers(v); i < n; i++)
        g_string_append_printf(names, "%s%s", i ? ", " : "", item_get(v, "dims", i, "name", NULL));
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: '%s' names no tier; the tiers are: %s", src(v), key,
                  names->str);
      g_string_free(names, TRUE);
      return FALSE;
    }
    tv_dim xd;
    tv_dim *x = &xd;
    dim_read(v, d, x);
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
    dim_write(v, x);
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

/* One tier as a flow mapping, its keys in the order of doc/topology.md. */
static void write_dim(const topo_variant *v, int d, GString *s)
{
  tv_dim x;
  dim_read(v, d, &x);
  g_string_append(s, "  - {name: ");
  cfg_yaml_quoted(s, x.name);
  g_string_append_printf(s, ", kind: %s", topo_kind_name(x.kind));
  if (is_torus(x.kind)) {
    g_string_append_printf(s, ", shape: [%d, %d", x.shape[0], x.shape[1]);
    if (x.n_axes == 3)
      g_string_append_printf(s, ", %d", x.shape[2]);
    g_string_append_c(s, ']');
  } else {
    g_string_append_printf(s, ", size: %d", x.size);
  }
  g_string_append_printf(s, ", bandwidth: %" G_GUINT64_FORMAT "B/s, latency: %" G_GINT64_FORMAT "ps", x.bw,
                         x.latency);
  if (x.kind == TOPO_KIND_FAT_TREE) {
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_string_append_printf(s, ", leaves: %d, spines: %d, oversubscription: %s", x.leaves, x.spines,
                           g_ascii_dtostr(buf, sizeof buf, x.oversub));
  }
  if (x.stream_bw > 0)
    g_string_append_printf(s, ", stream_bandwidth: %" G_GUINT64_FORMAT "B/s", MIN(x.stream_bw, x.bw));
  const char *fabric = item_get(v, "dims", d, "fabric", NULL);
  if (fabric != NULL) {
    g_string_append(s, ", fabric: ");
    cfg_yaml_quoted(s, fabric);
  }
  g_string_append(s, "}\n");
}

static void write_graph(const topo_variant *v, GString *s)
{
  const char *name;
  g_string_append(s, "graph:\n  nodes:\n");
  for (int i = 0; (name = item_get(v, "graph.nodes", i, "name", NULL)) != NULL; i++) {
    g_string_append(s, "    - {name: ");
    cfg_yaml_quoted(s, name);
    g_string_append_printf(s, ", kind: %s}\n", item_get(v, "graph.nodes", i, "kind", NULL));
  }
  g_string_append(s, "  links:\n");
  for (int i = 0; (name = item_get(v, "graph.links", i, "a", NULL)) != NULL; i++) {
    g_string_append(s, "    - {a: ");
    cfg_yaml_quoted(s, name);
    g_string_append(s, ", b: ");
    cfg_yaml_quoted(s, item_get(v, "graph.links", i, "b", NULL));
    g_string_append_printf(s, ", bandwidth: %s, latency: %s, duplex: false}\n",
                           item_get(v, "graph.links", i, "bandwidth", NULL),
                           item_get(v, "graph.links", i, "latency", NULL));
  }
}

char *topo_variant_to_yaml(const topo_variant *v)
{
  GString *s = g_string_new(NULL);
  g_string_append(s, "# derived by wisp from ");
  for (const char *p = src(v); *p; p++)
    g_string_append_c(s, *p == '\n' ? ' ' : *p);
  g_string_append(s, "\nschema_version: 1\n");
  if (cfg_name(v->doc)) {
    g_string_append(s, "name: ");
    cfg_yaml_quoted(s, cfg_name(v->doc));
    g_string_append_c(s, '\n');
  }
  sim_time_ps quantum = 0;
  g_string_append_printf(s, "model: %s\nranks: %s\n", cfg_get_or_default(v->doc, "model"), key_get(v, "ranks"));
  if (cfg_get_time(v->doc, "flow_quantum", &quantum) && quantum > 0)
    g_string_append_printf(s, "flow_quantum: %" G_GINT64_FORMAT "ps\n", quantum);
  gboolean graph = topo_variant_is_graph(v);
  if (key_get(v, "node_dims") && !graph)
    g_string_append_printf(s, "node_dims: %s\n", key_get(v, "node_dims"));
  if (graph) {
    write_graph(v, s);
  } else {
    g_string_append(s, "dims:\n");
    for (int d = 0, n = n_tiers(v); d < n; d++)
      write_dim(v, d, s);
  }
  const char *placement = key_get(v, "placement");
  if (placement) {
    char **ids = g_strsplit(placement, ",", -1);
    g_string_append(s, "placement: [");
    for (int r = 0; ids[r]; r++)
      g_string_append_printf(s, "%s%s", r ? ", " : "", ids[r]);
    g_string_append(s, "]\n");
    g_strfreev(ids);
  }
  cfg_write_sections(v->doc, s);
  return g_string_free(s, FALSE);
}

/* The edited document, written and read back: cfg_load_string checks the
 * top level and the settings, topo_from_config the topology section, the
 * same checks a hand-written config passes (messages name the written
 * YAML's lines; the source is "FILE [edits]"). */
topo *topo_variant_build(const topo_variant *v, GError **error)
{
  char *text = topo_variant_to_yaml(v);
  char *name = v->label->len ? g_strdup_printf("%s [%s]", src(v), v->label->str) : g_strdup(src(v));
  cfg_doc *doc = cfg_load_string(text, name, error);
  topo *t = doc ? topo_from_config(doc, error) : NULL;
  cfg_unref(doc);
  g_free(name);
  g_free(text);
  return t;
}
