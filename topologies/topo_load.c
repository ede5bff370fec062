/* topo_load.c: the topology section of a config document (wisp YAML
 * schema 1 with `dims:` or `graph:`, and ASTRA-sim network.yml), read from
 * the document's YAML tree with libyaml's document API.
 *
 * The document (config/cfg.h) has detected the format and checked the top
 * level; this file reads dims, graph, node_dims, ranks and placement (or
 * ASTRA-sim's four lists).  Parsing is strict: unknown or duplicate keys,
 * missing required keys, bad units and inconsistent sizes are errors that
 * name the file, the line and the key, and say what is expected.
 */
#include "config.h"
#include "topologies/topo_internal.h"
#include "config/cfg_yaml.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- wisp dims ---- */

static gboolean parse_kind(const cfg_reader *c, const yaml_node_t *v, const char *where, topo_kind *out)
{
  static const topo_kind kinds[] = {TOPO_KIND_RING_UNI, TOPO_KIND_RING, TOPO_KIND_FULLY_CONNECTED,
                                    TOPO_KIND_SWITCH, TOPO_KIND_TORUS2D, TOPO_KIND_TORUS3D, TOPO_KIND_FAT_TREE};
  const char *s;
  if (!cfg_need_scalar(c, v, "kind", where, &s))
    return FALSE;
  for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++)
    if (strcmp(s, topo_kind_name(kinds[i])) == 0) {
      *out = kinds[i];
      return TRUE;
    }
  return cfg_fail(c, v, WISP_ERROR_PARSE,
              "unknown kind '%s' in '%s' (expected one of ring, ring_uni, fully_connected, switch, torus2d, torus3d, "
              "fat_tree; irregular fabrics use a top-level 'graph:')",
              s, where);
}

/* A dimension's optional stream_bandwidth (at most the link's; equal
 * means none) and shared fabric name (switch tiers only). */
static gboolean parse_dim_stream_fabric(const cfg_reader *c, const yaml_node_t *m, const char *where, topo_dim *d)
{
  yaml_node_t *v;
  if ((v = cfg_lookup(c, m, "stream_bandwidth"))) {
    if (!cfg_read_bw(c, v, "stream_bandwidth", where, &d->stream_bw))
      return FALSE;
    if (d->stream_bw > d->bw) {
      cfg_fail(c, v, WISP_ERROR_INVALID,
           "'stream_bandwidth' in '%s' is above 'bandwidth'; it is the most one transfer gets through a link, so it "
           "must not exceed the link's capacity (drop it, or raise 'bandwidth')",
           where);
      return FALSE;
    }
    if (d->stream_bw == d->bw)
      d->stream_bw = 0;
  }
  d->fabric_level = -1;
  if ((v = cfg_lookup(c, m, "fabric"))) {
    const char *s;
    if (!cfg_need_scalar(c, v, "fabric", where, &s))
      return FALSE;
    if (d->kind != TOPO_KIND_SWITCH) {
      cfg_fail(c, v, WISP_ERROR_INVALID,
           "'fabric' in '%s' applies only to kind switch, not %s (a shared fabric is built of switch levels)", where,
           topo_kind_name(d->kind));
      return FALSE;
    }
    if (*s == '\0') {
      cfg_fail(c, v, WISP_ERROR_INVALID, "'fabric' in '%s' must name the fabric, e.g. 'fabric: ub'", where);
      return FALSE;
    }
    d->fabric = g_strdup(s);
  }
  return TRUE;
}

/* The keys that belong to one kind (shape: tori; leaves, spines,
 * oversubscription: fat trees) are refused on others; a torus's shape is
 * read, checked against TOPO_MAX_ENDPOINTS and against an explicit size. */
static gboolean parse_dim_shape(const cfg_reader *c, const yaml_node_t *m, const char *where, topo_dim *d)
{
  yaml_node_t *v;
  gboolean torus = d->kind == TOPO_KIND_TORUS2D || d->kind == TOPO_KIND_TORUS3D;
  static const char *const torus_keys[] = {"shape", NULL};
  static const char *const ft_keys[] = {"leaves", "spines", "oversubscription", NULL};
  for (const char *const *k = torus_keys; *k; k++)
    if (!torus && (v = cfg_lookup(c, m, *k))) {
      cfg_fail(c, v, WISP_ERROR_INVALID, "'%s' in '%s' applies only to kind torus2d or torus3d, not %s", *k, where,
           topo_kind_name(d->kind));
      return FALSE;
    }
  for (const char *const *k = ft_keys; *k; k++)
    if (d->kind != TOPO_KIND_FAT_TREE && (v = cfg_lookup(c, m, *k))) {
      cfg_fail(c, v, WISP_ERROR_INVALID, "'%s' in '%s' applies only to kind fat_tree, not %s", *k, where,
           topo_kind_name(d->kind));
      return FALSE;
    }
  if (torus) {
    int want = d->kind == TOPO_KIND_TORUS2D ? 2 : 3;
    if (!cfg_need(c, m, "shape", where, &v))
      return FALSE;
    if (v->type != YAML_SEQUENCE_NODE || (int)(v->data.sequence.items.top - v->data.sequence.items.start) != want) {
      cfg_fail(c, v, WISP_ERROR_INVALID, "'shape' in '%s' must be a list of %d axis sizes for %s, e.g. %s", where,
           want, topo_kind_name(d->kind), want == 2 ? "[4, 4]" : "[4, 4, 4]");
      return FALSE;
    }
    d->n_axes = want;
    uint64_t prod = 1;
    for (int a = 0; a < want; a++) {
      if (!cfg_read_int(c, cfg_node(c, v->data.sequence.items.start[a]), "shape", where, 1, (long)TOPO_MAX_ENDPOINTS,
                   &d->shape[a]))
        return FALSE;
      prod *= (uint64_t)d->shape[a];
    }
    if (prod > TOPO_MAX_ENDPOINTS) {
      cfg_fail(c, v, WISP_ERROR_LIMIT, "'shape' in '%s' gives more than %u endpoints", where, TOPO_MAX_ENDPOINTS);
      return FALSE;
    }
    if (d->size == 0)
      d->size = (int)prod;
    else if ((uint64_t)d->size != prod) {
      cfg_fail(c, cfg_lookup(c, m, "size"), WISP_ERROR_INVALID,
           "inconsistent sizes in '%s': size %d but shape gives %" G_GUINT64_FORMAT " endpoints; drop 'size' or make "
           "it the product of 'shape'",
           where, d->size, prod);
      return FALSE;
    }
  }
  return TRUE;
}

/* A fat tree's leaves (dividing the size), spines (default: the hosts
 * per leaf) and oversubscription (>= 1), and the leaf-spine link
 * bandwidth they give. */
static gboolean parse_dim_fat_tree(const cfg_reader *c, const yaml_node_t *m, const char *where, topo_dim *d)
{
  yaml_node_t *v;
  if (!cfg_need(c, m, "leaves", where, &v) || !cfg_read_int(c, v, "leaves", where, 1, d->size, &d->leaves))
    return FALSE;
  if (d->size % d->leaves != 0) {
    cfg_fail(c, v, WISP_ERROR_INVALID,
         "inconsistent sizes in '%s': %d endpoints cannot be spread evenly over %d leaves; make size a multiple "
         "of leaves",
         where, d->size, d->leaves);
    return FALSE;
  }
  int h = d->size / d->leaves;
  d->spines = h;
  d->oversub = 1.0;
  if ((v = cfg_lookup(c, m, "spines")) && !cfg_read_int(c, v, "spines", where, 1, 65536, &d->spines))
    return FALSE;
  if ((v = cfg_lookup(c, m, "oversubscription"))) {
    if (!cfg_read_double(c, v, "oversubscription", where, &d->oversub))
      return FALSE;
    if (d->oversub < 1.0) {
      cfg_fail(c, v, WISP_ERROR_INVALID, "'oversubscription' in '%s' must be >= 1 (1 = non-blocking), got %g", where,
           d->oversub);
      return FALSE;
    }
  }
  /* Each leaf's uplink capacity is its hosts' capacity divided by the
   * oversubscription, shared evenly over one link to every spine. */
  double up = (double)d->bw * (double)h / (d->oversub * (double)d->spines);
  if (!(up >= 1.0) || up > 1.8e19) {
    cfg_fail(c, m, WISP_ERROR_INVALID, "'%s': the leaf-spine link bandwidth would be %g B/s; check spines and "
         "oversubscription", where, up);
    return FALSE;
  }
  d->up_bw = (wisp_bw_Bps)llround(up);
  return TRUE;
}

static gboolean parse_dim(const cfg_reader *c, const yaml_node_t *m, int index, topo_dim *d)
{
  static const char *const keys[] = {"name", "kind", "size", "bandwidth", "latency", "shape",
                                     "leaves", "spines", "oversubscription", "fabric", "stream_bandwidth",
                                     "description", NULL};
  char *where = g_strdup_printf("dims[%d]", index);
  gboolean ok = FALSE;
  yaml_node_t *v;
  d->line = cfg_line(m);
  d->size = 0;
  if (!cfg_check_keys(c, m, where, keys))
    goto out;
  if ((v = cfg_lookup(c, m, "name"))) {
    const char *s;
    if (!cfg_need_scalar(c, v, "name", where, &s))
      goto out;
    d->name = g_strdup(s);
  } else {
    d->name = g_strdup_printf("dim%d", index);
  }
  if (!cfg_need(c, m, "kind", where, &v) || !parse_kind(c, v, where, &d->kind))
    goto out;
  if (!cfg_need(c, m, "bandwidth", where, &v) || !cfg_read_bw(c, v, "bandwidth", where, &d->bw))
    goto out;
  if (!cfg_need(c, m, "latency", where, &v) || !cfg_read_time(c, v, "latency", where, &d->latency))
    goto out;
  if ((v = cfg_lookup(c, m, "size")) && !cfg_read_int(c, v, "size", where, 1, (long)TOPO_MAX_ENDPOINTS, &d->size))
    goto out;
  if (!parse_dim_stream_fabric(c, m, where, d))
    goto out;
  if (!parse_dim_shape(c, m, where, d))
    goto out;
  if (d->size == 0) {
    cfg_fail(c, m, WISP_ERROR_PARSE, "'%s' is missing the required key 'size'", where);
    goto out;
  }
  if (d->kind == TOPO_KIND_FAT_TREE && !parse_dim_fat_tree(c, m, where, d))
    goto out;
  ok = TRUE;
out:
  g_free(where);
  return ok;
}

static gboolean parse_dims(const cfg_reader *c, topo *t, const yaml_node_t *v)
{
  if (v->type != YAML_SEQUENCE_NODE || v->data.sequence.items.top == v->data.sequence.items.start)
    return cfg_fail(c, v, WISP_ERROR_PARSE, "'dims' must be a non-empty list of dimensions, innermost first");
  int n = (int)(v->data.sequence.items.top - v->data.sequence.items.start);
  if (n > 64)
    return cfg_fail(c, v, WISP_ERROR_LIMIT, "'dims' has %d dimensions; at most 64 are supported", n);
  t->dims = g_new0(topo_dim, n);
  for (int i = 0; i < n; i++) {
    t->n_dims = i + 1; /* so topo_free releases names parsed so far */
    if (!parse_dim(c, cfg_node(c, v->data.sequence.items.start[i]), i, &t->dims[i]))
      return FALSE;
    for (int j = 0; j < i; j++)
      if (strcmp(t->dims[j].name, t->dims[i].name) == 0)
        return cfg_fail(c, cfg_node(c, v->data.sequence.items.start[i]), WISP_ERROR_INVALID,
                    "two dimensions are named '%s'; give each tier its own name", t->dims[i].name);
  }
  /* A shared fabric: consecutive switch dimensions that name it, one
   * fabric per topology (each endpoint has one port into it). */
  for (int i = 0; i < n; i++) {
    topo_dim *d = &t->dims[i];
    if (d->fabric == NULL)
      continue;
    const yaml_node_t *node = cfg_node(c, v->data.sequence.items.start[i]);
    if (t->fabric_first < 0) {
      t->fabric_first = i;
    } else if (strcmp(d->fabric, t->dims[t->fabric_first].fabric) != 0) {
      return cfg_fail(c, node, WISP_ERROR_INVALID,
                  "dims[%d] names fabric '%s' but dims[%d] already names '%s'; one shared fabric per topology is "
                  "supported",
                  i, d->fabric, t->fabric_first, t->dims[t->fabric_first].fabric);
    } else if (t->fabric_last != i - 1) {
      return cfg_fail(c, node, WISP_ERROR_INVALID,
                  "the dimensions of fabric '%s' must be consecutive, but dims[%d] ('%s') is not; give the fabric "
                  "to the dimensions in between too, or to none of them",
                  d->fabric, t->fabric_last + 1, t->dims[t->fabric_last + 1].name);
    }
    d->fabric_level = i - t->fabric_first;
    t->fabric_last = i;
  }
  return topo_build_dims(t, c->error);
}

/* ---- wisp graph ---- */

/* One entry of graph.links, m (index i): its ends (names in `index`,
 * mapped to node indices by node_id), bandwidth and latency, and the b->a
 * direction unless duplex is false (bandwidth_ba/latency_ba override it). */
static gboolean parse_graph_link(const cfg_reader *c, topo *t, const yaml_node_t *m, size_t i, GHashTable *index,
                                 const uint32_t *node_id)
{
  static const char *const lkeys[] = {"a", "b", "bandwidth", "latency", "duplex", "bandwidth_ba", "latency_ba",
                                      NULL};
  char where[48];
  g_snprintf(where, sizeof where, "graph.links[%zu]", i);
  yaml_node_t *v;
  const char *an, *bn;
  wisp_bw_Bps bw, bw_ba;
  sim_time_ps lat, lat_ba;
  if (!cfg_check_keys(c, m, where, lkeys) || !cfg_need(c, m, "a", where, &v) || !cfg_need_scalar(c, v, "a", where, &an) ||
      !cfg_need(c, m, "b", where, &v) || !cfg_need_scalar(c, v, "b", where, &bn) || !cfg_need(c, m, "bandwidth", where, &v) ||
      !cfg_read_bw(c, v, "bandwidth", where, &bw) || !cfg_need(c, m, "latency", where, &v) ||
      !cfg_read_time(c, v, "latency", where, &lat))
    return FALSE;
  gpointer ia, ib;
  if (!g_hash_table_lookup_extended(index, an, NULL, &ia)) {
    cfg_fail(c, m, WISP_ERROR_INVALID, "'%s' names node '%s', which is not in graph.nodes", where, an);
    return FALSE;
  }
  if (!g_hash_table_lookup_extended(index, bn, NULL, &ib)) {
    cfg_fail(c, m, WISP_ERROR_INVALID, "'%s' names node '%s', which is not in graph.nodes", where, bn);
    return FALSE;
  }
  if (ia == ib) {
    cfg_fail(c, m, WISP_ERROR_INVALID, "'%s' joins node '%s' to itself", where, an);
    return FALSE;
  }
  gboolean duplex = TRUE;
  if ((v = cfg_lookup(c, m, "duplex"))) {
    const char *s;
    if (!cfg_need_scalar(c, v, "duplex", where, &s))
      return FALSE;
    if (strcmp(s, "true") == 0)
      duplex = TRUE;
    else if (strcmp(s, "false") == 0)
      duplex = FALSE;
    else {
      cfg_fail(c, v, WISP_ERROR_PARSE, "'duplex' in '%s' must be true or false, got '%s'", where, s);
      return FALSE;
    }
  }
  bw_ba = bw;
  lat_ba = lat;
  yaml_node_t *vb = cfg_lookup(c, m, "bandwidth_ba"), *vl = cfg_lookup(c, m, "latency_ba");
  if (!duplex && (vb || vl)) {
    cfg_fail(c, vb ? vb : vl, WISP_ERROR_INVALID, "'%s' has duplex: false, so it has no b->a direction to give "
         "bandwidth_ba/latency_ba; remove them or set duplex: true", where);
    return FALSE;
  }
  if ((vb && !cfg_read_bw(c, vb, "bandwidth_ba", where, &bw_ba)) || (vl && !cfg_read_time(c, vl, "latency_ba", where, &lat_ba)))
    return FALSE;
  uint32_t a = node_id[GPOINTER_TO_SIZE(ia)], b = node_id[GPOINTER_TO_SIZE(ib)];
  topo_add_link(t, a, b, bw, lat, 0);
  if (duplex)
    topo_add_link(t, b, a, bw_ba, lat_ba, 0);
  return TRUE;
}

static gboolean parse_graph(const cfg_reader *c, topo *t, const yaml_node_t *g)
{
  static const char *const gkeys[] = {"nodes", "links", NULL};
  static const char *const nkeys[] = {"name", "kind", NULL};
  yaml_node_t *nodes, *links;
  if (!cfg_check_keys(c, g, "graph", gkeys) || !cfg_need(c, g, "nodes", "graph", &nodes) ||
      !cfg_need(c, g, "links", "graph", &links))
    return FALSE;
  if (nodes->type != YAML_SEQUENCE_NODE)
    return cfg_fail(c, nodes, WISP_ERROR_PARSE, "'graph.nodes' must be a list of {name, kind}");
  if (links->type != YAML_SEQUENCE_NODE)
    return cfg_fail(c, links, WISP_ERROR_PARSE, "'graph.links' must be a list of {a, b, bandwidth, latency}");
  size_t n = (size_t)(nodes->data.sequence.items.top - nodes->data.sequence.items.start);
  if (n > TOPO_MAX_ENDPOINTS)
    return cfg_fail(c, nodes, WISP_ERROR_LIMIT, "the graph has more than %u nodes", TOPO_MAX_ENDPOINTS);
  /* Endpoints first, in listed order, then switches in listed order. */
  const char **names = g_new0(const char *, n ? n : 1);
  gboolean *is_sw = g_new0(gboolean, n ? n : 1);
  GHashTable *index = g_hash_table_new(g_str_hash, g_str_equal);
  uint32_t *node_id = g_new0(uint32_t, n ? n : 1);
  gboolean ok = FALSE;
  uint32_t n_ep = 0;
  for (size_t i = 0; i < n; i++) {
    yaml_node_t *m = cfg_node(c, nodes->data.sequence.items.start[i]);
    char where[48];
    g_snprintf(where, sizeof where, "graph.nodes[%zu]", i);
    yaml_node_t *v;
    if (!cfg_check_keys(c, m, where, nkeys) || !cfg_need(c, m, "name", where, &v) || !cfg_need_scalar(c, v, "name", where, &names[i]))
      goto out;
    if (g_hash_table_contains(index, names[i])) {
      cfg_fail(c, m, WISP_ERROR_INVALID, "node name '%s' is used twice; node names must be unique", names[i]);
      goto out;
    }
    g_hash_table_insert(index, (gpointer)names[i], GSIZE_TO_POINTER(i));
    const char *k;
    if (!cfg_need(c, m, "kind", where, &v) || !cfg_need_scalar(c, v, "kind", where, &k))
      goto out;
    if (strcmp(k, "switch") == 0)
      is_sw[i] = TRUE;
    else if (strcmp(k, "endpoint") == 0)
      n_ep++;
    else {
      cfg_fail(c, v, WISP_ERROR_PARSE, "unknown node kind '%s' in '%s' (expected endpoint or switch)", k, where);
      goto out;
    }
  }
  if (n_ep == 0) {
    cfg_fail(c, nodes, WISP_ERROR_INVALID, "the graph has no node of kind endpoint; ranks need endpoints");
    goto out;
  }
  {
    uint32_t e = 0, s = n_ep;
    for (size_t i = 0; i < n; i++)
      node_id[i] = is_sw[i] ? s++ : e++;
  }
  t->n_endpoints = n_ep;
  t->n_nodes = (uint32_t)n;
  t->node_names = g_new0(char *, n ? n : 1);
  for (size_t i = 0; i < n; i++)
    t->node_names[node_id[i]] = g_strdup(names[i]);
  size_t nl = (size_t)(links->data.sequence.items.top - links->data.sequence.items.start);
  if (nl * 2 > t->max_links) {
    cfg_fail(c, links, WISP_ERROR_LIMIT, "the graph has more than %" G_GUINT64_FORMAT " links", t->max_links / 2);
    goto out;
  }
  for (size_t i = 0; i < nl; i++)
    if (!parse_graph_link(c, t, cfg_node(c, links->data.sequence.items.start[i]), i, index, node_id))
      goto out;
  ok = topo_build_graph(t, c->error);
out:
  g_free(names);
  g_free(is_sw);
  g_free(node_id);
  g_hash_table_destroy(index);
  return ok;
}

/* ---- placement ---- */

static gboolean parse_placement(const cfg_reader *c, topo *t, const yaml_node_t *root)
{
  yaml_node_t *pv = cfg_lookup(c, root, "placement"), *rv = cfg_lookup(c, root, "ranks");
  int ranks = -1;
  if (rv && !cfg_read_int(c, rv, "ranks", "topology", 1, (long)TOPO_MAX_ENDPOINTS, &ranks))
    return FALSE;
  if (pv == NULL || (cfg_scalar(pv) && strcmp(cfg_scalar(pv), "contiguous") == 0))
    return topo_set_placement(t, ranks > 0 ? ranks : (int)t->n_endpoints, NULL, cfg_line(rv ? rv : root),
                              c->error);
  if (pv->type != YAML_SEQUENCE_NODE)
    return cfg_fail(c, pv, WISP_ERROR_PARSE,
                "'placement' must be 'contiguous' or a list giving each rank's endpoint id, e.g. [0, 2, 4, 6]");
  int n = (int)(pv->data.sequence.items.top - pv->data.sequence.items.start);
  if (ranks > 0 && n != ranks)
    return cfg_fail(c, pv, WISP_ERROR_INVALID,
                "inconsistent sizes: 'placement' lists %d endpoints but 'ranks' is %d; give one endpoint per rank", n,
                ranks);
  if (n == 0)
    return cfg_fail(c, pv, WISP_ERROR_INVALID, "'placement' is an empty list; give one endpoint id per rank");
  uint32_t *map = g_new(uint32_t, n);
  for (int r = 0; r < n; r++) {
    yaml_node_t *item = cfg_node(c, pv->data.sequence.items.start[r]);
    const char *s = cfg_scalar(item);
    /* Explicit graphs may name the endpoint instead of giving its id. */
    if (t->node_names && s && !g_ascii_isdigit(s[0])) {
      uint32_t ep = UINT32_MAX;
      for (uint32_t e = 0; e < t->n_endpoints; e++)
        if (strcmp(t->node_names[e], s) == 0)
          ep = e;
      if (ep == UINT32_MAX) {
        g_free(map);
        return cfg_fail(c, item, WISP_ERROR_INVALID, "placement of rank %d names '%s', which is not an endpoint of the graph",
                    r, s);
      }
      map[r] = ep;
      continue;
    }
    int ep;
    if (!cfg_read_int(c, item, "placement", "topology", 0, (long)TOPO_MAX_ENDPOINTS - 1, &ep)) {
      g_free(map);
      return FALSE;
    }
    map[r] = (uint32_t)ep;
  }
  gboolean ok = topo_set_placement(t, n, map, cfg_line(pv), c->error);
  g_free(map);
  return ok;
}

/* ---- formats ---- */

/* The topology section of a wisp config; the document (config/cfg.c) has
 * checked the top level, the versions, the name and the other sections. */
static gboolean load_wisp(const cfg_reader *c, topo *t, const yaml_node_t *root)
{
  yaml_node_t *v;
  yaml_node_t *dims = cfg_lookup(c, root, "dims"), *graph = cfg_lookup(c, root, "graph");
  if (dims && graph)
    return cfg_fail(c, graph, WISP_ERROR_INVALID, "give either 'dims' (hierarchical) or 'graph' (explicit), not both");
  if (!dims && !graph)
    return cfg_fail(c, root, WISP_ERROR_PARSE, "the topology needs 'dims' (hierarchical tiers) or 'graph' (explicit)");
  if (dims) {
    t->format = TOPO_FORMAT_DIMS;
    if (!parse_dims(c, t, dims))
      return FALSE;
  } else {
    t->format = TOPO_FORMAT_GRAPH;
    if (!parse_graph(c, t, graph))
      return FALSE;
  }
  if ((v = cfg_lookup(c, root, "node_dims"))) {
    if (t->format != TOPO_FORMAT_DIMS)
      return cfg_fail(c, v, WISP_ERROR_INVALID, "'node_dims' needs 'dims' (it counts the tiers inside one node)");
    if (!cfg_read_int(c, v, "node_dims", "topology", 1, t->n_dims, &t->node_dims))
      return FALSE;
  }
  return parse_placement(c, t, root);
}

/* ASTRA-sim accepts each key as a list (one entry per dimension); a bare
 * scalar is taken as a one-entry list. */
static int astra_list(const cfg_reader *c, const yaml_node_t *v, yaml_node_t ***items)
{
  if (v->type == YAML_SCALAR_NODE) {
    *items = g_new(yaml_node_t *, 1);
    (*items)[0] = (yaml_node_t *)v;
    return 1;
  }
  if (v->type != YAML_SEQUENCE_NODE)
    return -1;
  int n = (int)(v->data.sequence.items.top - v->data.sequence.items.start);
  *items = g_new(yaml_node_t *, n ? n : 1);
  for (int i = 0; i < n; i++)
    (*items)[i] = cfg_node(c, v->data.sequence.items.start[i]);
  return n;
}

static gboolean load_astra(const cfg_reader *c, topo *t, const yaml_node_t *root)
{
  static const char *const names[] = {"topology", "npus_count", "bandwidth", "latency"};
  yaml_node_t **items[4] = {NULL};
  int len[4];
  gboolean ok = FALSE;
  for (int k = 0; k < 4; k++) {
    yaml_node_t *v;
    if (!cfg_need(c, root, names[k], "network.yml (ASTRA-sim)", &v))
      goto out;
    len[k] = astra_list(c, v, &items[k]);
    if (len[k] <= 0) {
      cfg_fail(c, v, WISP_ERROR_PARSE, "'%s' must be a non-empty list with one entry per dimension", names[k]);
      goto out;
    }
  }
  for (int k = 1; k < 4; k++)
    if (len[k] != len[0]) {
      cfg_fail(c, root, WISP_ERROR_INVALID,
           "ASTRA-sim lists must have one entry per dimension, but topology has %d, npus_count %d, bandwidth %d and "
           "latency %d entries",
           len[0], len[1], len[2], len[3]);
      goto out;
    }
  if (len[0] > 64) {
    cfg_fail(c, root, WISP_ERROR_LIMIT, "%d dimensions; at most 64 are supported", len[0]);
    goto out;
  }
  t->format = TOPO_FORMAT_ASTRA;
  t->dims = g_new0(topo_dim, len[0]);
  for (int i = 0; i < len[0]; i++) {
    topo_dim *d = &t->dims[i];
    t->n_dims = i + 1;
    d->name = g_strdup_printf("dim%d", i);
    d->line = cfg_line(items[0][i]);
    const char *s;
    if (!cfg_need_scalar(c, items[0][i], "topology", "network.yml", &s))
      goto out;
    if (strcmp(s, "Ring") == 0)
      d->kind = TOPO_KIND_RING;
    else if (strcmp(s, "FullyConnected") == 0)
      d->kind = TOPO_KIND_FULLY_CONNECTED;
    else if (strcmp(s, "Switch") == 0)
      d->kind = TOPO_KIND_SWITCH;
    else {
      cfg_fail(c, items[0][i], WISP_ERROR_PARSE,
           "unknown ASTRA-sim topology '%s' (expected Ring, FullyConnected or Switch)", s);
      goto out;
    }
    if (!cfg_read_int(c, items[1][i], "npus_count", "network.yml", 1, (long)TOPO_MAX_ENDPOINTS, &d->size))
      goto out;
    double gb, ns;
    if (!cfg_read_double(c, items[2][i], "bandwidth", "network.yml", &gb))
      goto out;
    if (!(gb > 0) || gb > 1e9) {
      cfg_fail(c, items[2][i], WISP_ERROR_INVALID, "ASTRA-sim bandwidth must be a positive number of \"GB/s\", got %g",
           gb);
      goto out;
    }
    /* ASTRA-sim converts "GB/s" as value * 2^30 / 10^9 bytes per ns, i.e.
     * the value is GiB/s; we keep exactly that (round to whole B/s). */
    d->astra_value = gb;
    d->bw = (wisp_bw_Bps)llround(gb * 1073741824.0);
    if (d->bw == 0) {
      cfg_fail(c, items[2][i], WISP_ERROR_INVALID, "ASTRA-sim bandwidth %g \"GB/s\" is below 1 byte/s", gb);
      goto out;
    }
    if (!cfg_read_double(c, items[3][i], "latency", "network.yml", &ns))
      goto out;
    if (ns < 0 || !wisp_ps_from_ns(ns, &d->latency)) {
      cfg_fail(c, items[3][i], WISP_ERROR_INVALID, "ASTRA-sim latency must be a non-negative number of ns, got %g", ns);
      goto out;
    }
  }
  ok = topo_build_dims(t, c->error) && topo_set_placement(t, (int)t->n_endpoints, NULL, cfg_line(root), c->error);
out:
  for (int k = 0; k < 4; k++)
    g_free(items[k]);
  return ok;
}

topo *topo_from_config(const cfg_doc *doc, GError **error)
{
  return topo_from_config_bounded(doc, TOPO_MAX_LINKS, error);
}

topo *topo_from_config_bounded(const cfg_doc *doc, uint64_t max_links, GError **error)
{
  g_return_val_if_fail(doc != NULL, NULL);
  g_return_val_if_fail(max_links >= 1 && max_links <= TOPO_MAX_LINKS, NULL);
  cfg_reader c;
  yaml_node_t *root;
  if (!cfg_reader_init(&c, doc, error, &root)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: the config has no topology section to build (an edited settings-only document)", cfg_source(doc));
    return NULL;
  }
  topo *t = topo_alloc(cfg_source(doc));
  t->max_links = max_links;
  t->name = g_strdup(cfg_name(doc));
  t->config = cfg_ref((cfg_doc *)doc);
  gboolean ok = cfg_doc_format(doc) == CFG_FORMAT_ASTRA ? load_astra(&c, t, root) : load_wisp(&c, t, root);
  if (!ok) {
    topo_free(t);
    t = NULL;
  }
  return t;
}

topo *topo_load_string(const char *text, const char *source_name, GError **error)
{
  return topo_load_string_bounded(text, source_name, TOPO_MAX_LINKS, error);
}

topo *topo_load_string_bounded(const char *text, const char *source_name, uint64_t max_links, GError **error)
{
  g_return_val_if_fail(text != NULL, NULL);
  g_return_val_if_fail(max_links >= 1 && max_links <= TOPO_MAX_LINKS, NULL);
  cfg_doc *doc = cfg_load_string(text, source_name, error);
  if (doc == NULL)
    return NULL;
  topo *t = topo_from_config_bounded(doc, max_links, error);
  cfg_unref(doc);
  return t;
}

topo *topo_load(const char *path, GError **error)
{
  cfg_doc *doc = cfg_load(path, error);
  if (doc == NULL)
    return NULL;
  topo *t = topo_from_config(doc, error);
  cfg_unref(doc);
  return t;
}
