/* topo_variant.c: editable config documents for what-if studies (see
 * topo_variant.h).  The variant is one editable cfg_doc: the settings of
 * the net, collectives and library sections, copied from the base's
 * document, and the base topology's section put as flat keys once
 * (put_section, from the resolved representation in topo_internal.h, this
 * layer's own).  Edits read and write those keys (a tier is read into a
 * tv_dim view and written back around each edit); the document is written
 * as wisp YAML and read back by the config reader and topo_from_config,
 * which stay the single places that validate and build.  This file holds
 * the keys, the variant's lifetime and read access, and the YAML output;
 * the edits are topo_variant_edit.c. */
#include "config.h"
#include "topologies/topo_variant_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

const char *tv_key_get(const topo_variant *v, const char *key)
{
  return cfg_get(v->doc, key, NULL);
}

const char *tv_item_get(const topo_variant *v, const char *list, int i, const char *field, int *line)
{
  char key[96];
  g_snprintf(key, sizeof key, "%s.%d.%s", list, i, field);
  return cfg_get(v->doc, key, line);
}

void tv_item_put(topo_variant *v, const char *list, int i, const char *field, int line, const char *fmt, ...)
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
int tv_int_of(const char *s)
{
  return s ? (int)strtol(s, NULL, 10) : 0;
}

wisp_bw_Bps tv_bw_of(const char *s)
{
  wisp_bw_Bps b = 0;
  const char *why = NULL;
  return s && wisp_parse_bandwidth(s, &b, &why) ? b : 0;
}

sim_time_ps tv_time_of(const char *s)
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

gboolean tv_is_torus(topo_kind k)
{
  return k == TOPO_KIND_TORUS2D || k == TOPO_KIND_TORUS3D;
}

void tv_dim_read(const topo_variant *v, int d, tv_dim *x)
{
  memset(x, 0, sizeof *x);
  x->index = d;
  x->name = tv_item_get(v, "dims", d, "name", NULL);
  x->kind = kind_of(tv_item_get(v, "dims", d, "kind", &x->line));
  x->size = tv_int_of(tv_item_get(v, "dims", d, "size", NULL));
  x->bw = tv_bw_of(tv_item_get(v, "dims", d, "bandwidth", NULL));
  x->latency = tv_time_of(tv_item_get(v, "dims", d, "latency", NULL));
  x->n_axes = x->kind == TOPO_KIND_TORUS2D ? 2 : x->kind == TOPO_KIND_TORUS3D ? 3 : 0;
  const char *shape = tv_item_get(v, "dims", d, "shape", NULL);
  if (shape) {
    char **parts = g_strsplit(shape, ",", 3);
    for (int i = 0; parts[i] && i < 3; i++)
      x->shape[i] = tv_int_of(parts[i]);
    g_strfreev(parts);
  }
  x->leaves = tv_int_of(tv_item_get(v, "dims", d, "leaves", NULL));
  x->spines = tv_int_of(tv_item_get(v, "dims", d, "spines", NULL));
  const char *o = tv_item_get(v, "dims", d, "oversubscription", NULL);
  x->oversub = o ? g_ascii_strtod(o, NULL) : 0.0;
  x->stream_bw = tv_bw_of(tv_item_get(v, "dims", d, "stream_bandwidth", NULL));
}

/* Writes back the fields a tier of x's kind has; keys of another kind
 * stay, unwritten by topo_variant_to_yaml (a torus turned ring keeps its
 * shape key; it is refitted if the tier becomes a torus again). */
void tv_dim_write(topo_variant *v, const tv_dim *x)
{
  int d = x->index, l = x->line;
  tv_item_put(v, "dims", d, "kind", l, "%s", topo_kind_name(x->kind));
  tv_item_put(v, "dims", d, "size", l, "%d", x->size);
  tv_item_put(v, "dims", d, "bandwidth", l, "%" G_GUINT64_FORMAT "B/s", x->bw);
  tv_item_put(v, "dims", d, "latency", l, "%" G_GINT64_FORMAT "ps", x->latency);
  if (tv_is_torus(x->kind)) {
    if (x->n_axes == 3)
      tv_item_put(v, "dims", d, "shape", l, "%d,%d,%d", x->shape[0], x->shape[1], x->shape[2]);
    else
      tv_item_put(v, "dims", d, "shape", l, "%d,%d", x->shape[0], x->shape[1]);
  }
  if (x->kind == TOPO_KIND_FAT_TREE) {
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    tv_item_put(v, "dims", d, "leaves", l, "%d", x->leaves);
    tv_item_put(v, "dims", d, "spines", l, "%d", x->spines);
    tv_item_put(v, "dims", d, "oversubscription", l, "%s", g_ascii_dtostr(buf, sizeof buf, x->oversub));
  }
  if (x->stream_bw > 0)
    tv_item_put(v, "dims", d, "stream_bandwidth", l, "%" G_GUINT64_FORMAT "B/s", x->stream_bw);
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
      tv_item_put(v, "graph.links", (int)i, "bandwidth", 0, "%" G_GUINT64_FORMAT "B/s", l->bw);
      tv_item_put(v, "graph.links", (int)i, "latency", 0, "%" G_GINT64_FORMAT "ps", l->latency);
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
    tv_dim_write(v, &x);
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
  return tv_key_get(v, "graph.nodes.0.name") != NULL;
}

/* Tiers of a dims topology: O(dims log keys). */
int tv_n_tiers(const topo_variant *v)
{
  int n = 0;
  while (tv_item_get(v, "dims", n, "kind", NULL) != NULL)
    n++;
  return n;
}

int topo_variant_n_dims(const topo_variant *v)
{
  return topo_variant_is_graph(v) ? 1 : tv_n_tiers(v);
}

const char *topo_variant_dim_name(const topo_variant *v, int dim)
{
  g_assert(dim >= 0 && dim < topo_variant_n_dims(v));
  return topo_variant_is_graph(v) ? "graph" : tv_item_get(v, "dims", dim, "name", NULL);
}

topo_kind topo_variant_dim_kind(const topo_variant *v, int dim)
{
  g_assert(dim >= 0 && dim < topo_variant_n_dims(v));
  return topo_variant_is_graph(v) ? TOPO_KIND_GRAPH : kind_of(tv_item_get(v, "dims", dim, "kind", NULL));
}

int topo_variant_dim_size(const topo_variant *v, int dim)
{
  g_assert(dim >= 0 && dim < topo_variant_n_dims(v));
  if (!topo_variant_is_graph(v))
    return tv_int_of(tv_item_get(v, "dims", dim, "size", NULL));
  int n = 0;
  const char *k;
  for (int i = 0; (k = tv_item_get(v, "graph.nodes", i, "kind", NULL)) != NULL; i++)
    n += strcmp(k, "endpoint") == 0;
  return n;
}

/* For graphs: the smallest link bandwidth (the bottleneck a user would quote). */
wisp_bw_Bps topo_variant_dim_bw(const topo_variant *v, int dim)
{
  g_assert(dim >= 0 && dim < topo_variant_n_dims(v));
  if (!topo_variant_is_graph(v))
    return tv_bw_of(tv_item_get(v, "dims", dim, "bandwidth", NULL));
  wisp_bw_Bps m = 0;
  const char *s;
  for (int i = 0; (s = tv_item_get(v, "graph.links", i, "bandwidth", NULL)) != NULL; i++) {
    wisp_bw_Bps b = tv_bw_of(s);
    if (m == 0 || b < m)
      m = b;
  }
  return m;
}

sim_time_ps topo_variant_dim_latency(const topo_variant *v, int dim)
{
  g_assert(dim >= 0 && dim < topo_variant_n_dims(v));
  if (!topo_variant_is_graph(v))
    return tv_time_of(tv_item_get(v, "dims", dim, "latency", NULL));
  return tv_time_of(tv_item_get(v, "graph.links", 0, "latency", NULL));
}

int topo_variant_n_ranks(const topo_variant *v)
{
  return tv_int_of(tv_key_get(v, "ranks"));
}

int topo_variant_find_dim(const topo_variant *v, const char *name)
{
  if (topo_variant_is_graph(v))
    return g_strcmp0(name, "graph") == 0 || g_strcmp0(name, "0") == 0 ? 0 : -1;
  int n = tv_n_tiers(v);
  for (int d = 0; d < n; d++)
    if (strcmp(tv_item_get(v, "dims", d, "name", NULL), name) == 0)
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
  int node_dims = tv_int_of(tv_key_get(v, "node_dims")), n = tv_n_tiers(v);
  /* node_dims covering every tier: one node, no scale-out tier. */
  if (node_dims > 0 && node_dims >= n)
    return -1;
  return !topo_variant_is_graph(v) && n >= 2 ? n - 1 : -1;
}

int topo_variant_domain_dim(const topo_variant *v)
{
  if (topo_variant_is_graph(v))
    return -1;
  int node_dims = tv_int_of(tv_key_get(v, "node_dims"));
  if (node_dims > 0)
    return node_dims - 1;
  int n = tv_n_tiers(v);
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

void tv_add_label(topo_variant *v, const char *fmt, ...)
{
  va_list ap;
  if (v->label->len)
    g_string_append(v->label, ", ");
  va_start(ap, fmt);
  g_string_append_vprintf(v->label, fmt, ap);
  va_end(ap);
}

void tv_add_note(topo_variant *v, const char *fmt, ...)
{
  va_list ap;
  if (v->notes->len)
    g_string_append(v->notes, "; ");
  va_start(ap, fmt);
  g_string_append_vprintf(v->notes, fmt, ap);
  va_end(ap);
}

const char *tv_src(const topo_variant *v)
{
  return cfg_source(v->doc);
}

/* ---- YAML output ---- */

/* One tier as a flow mapping, its keys in the order of doc/topology.md. */
static void write_dim(const topo_variant *v, int d, GString *s)
{
  tv_dim x;
  tv_dim_read(v, d, &x);
  g_string_append(s, "  - {name: ");
  cfg_yaml_quoted(s, x.name);
  g_string_append_printf(s, ", kind: %s", topo_kind_name(x.kind));
  if (tv_is_torus(x.kind)) {
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
  const char *fabric = tv_item_get(v, "dims", d, "fabric", NULL);
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
  for (int i = 0; (name = tv_item_get(v, "graph.nodes", i, "name", NULL)) != NULL; i++) {
    g_string_append(s, "    - {name: ");
    cfg_yaml_quoted(s, name);
    g_string_append_printf(s, ", kind: %s}\n", tv_item_get(v, "graph.nodes", i, "kind", NULL));
  }
  g_string_append(s, "  links:\n");
  for (int i = 0; (name = tv_item_get(v, "graph.links", i, "a", NULL)) != NULL; i++) {
    g_string_append(s, "    - {a: ");
    cfg_yaml_quoted(s, name);
    g_string_append(s, ", b: ");
    cfg_yaml_quoted(s, tv_item_get(v, "graph.links", i, "b", NULL));
    g_string_append_printf(s, ", bandwidth: %s, latency: %s, duplex: false}\n",
                           tv_item_get(v, "graph.links", i, "bandwidth", NULL),
                           tv_item_get(v, "graph.links", i, "latency", NULL));
  }
}

char *topo_variant_to_yaml(const topo_variant *v)
{
  GString *s = g_string_new(NULL);
  g_string_append(s, "# derived by wisp from ");
  for (const char *p = tv_src(v); *p; p++)
    g_string_append_c(s, *p == '\n' ? ' ' : *p);
  g_string_append(s, "\nschema_version: 1\n");
  if (cfg_name(v->doc)) {
    g_string_append(s, "name: ");
    cfg_yaml_quoted(s, cfg_name(v->doc));
    g_string_append_c(s, '\n');
  }
  sim_time_ps quantum = 0;
  g_string_append_printf(s, "model: %s\nranks: %s\n", cfg_get_or_default(v->doc, "model"), tv_key_get(v, "ranks"));
  if (cfg_get_time(v->doc, "flow_quantum", &quantum) && quantum > 0)
    g_string_append_printf(s, "flow_quantum: %" G_GINT64_FORMAT "ps\n", quantum);
  gboolean graph = topo_variant_is_graph(v);
  if (tv_key_get(v, "node_dims") && !graph)
    g_string_append_printf(s, "node_dims: %s\n", tv_key_get(v, "node_dims"));
  if (graph) {
    write_graph(v, s);
  } else {
    g_string_append(s, "dims:\n");
    for (int d = 0, n = tv_n_tiers(v); d < n; d++)
      write_dim(v, d, s);
  }
  const char *placement = tv_key_get(v, "placement");
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
  char *name = v->label->len ? g_strdup_printf("%s [%s]", tv_src(v), v->label->str) : g_strdup(tv_src(v));
  cfg_doc *doc = cfg_load_string(text, name, error);
  topo *t = doc ? topo_from_config(doc, error) : NULL;
  cfg_unref(doc);
  g_free(name);
  g_free(text);
  return t;
}
