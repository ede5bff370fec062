/* topo_load.c: reads topology configs (wisp YAML schema 1, with `dims:`
 * or `graph:`, and ASTRA-sim network.yml) with libyaml's document API.
 *
 * The format is told by the top-level keys: `schema_version` means wisp,
 * `topology`/`npus_count` mean ASTRA-sim.  Parsing is strict: unknown or
 * duplicate keys, missing required keys, bad units and inconsistent sizes
 * are errors that name the file, the line and the key, and say what is
 * expected.  The whole document is held in memory (configs are small;
 * explicit graphs cost a few hundred bytes per node and link).
 */
#include "config.h"
#include "topologies/topo_internal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* Bound on settings kept from `collectives:` / `library:`, so an alias bomb
 * cannot expand without limit. */
#define TOPO_MAX_SETTINGS 10000

typedef struct {
  const char *src;
  yaml_document_t *doc;
  GError **error;
  int n_settings;
} ld;

static int line_of(const yaml_node_t *n)
{
  return (int)n->start_mark.line + 1;
}

static yaml_node_t *ynode(ld *c, int id)
{
  return yaml_document_get_node(c->doc, id);
}

G_GNUC_PRINTF(4, 5)
static gboolean fail(ld *c, const yaml_node_t *n, int code, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  if (n)
    g_set_error(c->error, WISP_ERROR, code, "%s:%d: %s", c->src, line_of(n), msg);
  else
    g_set_error(c->error, WISP_ERROR, code, "%s: %s", c->src, msg);
  g_free(msg);
  return FALSE;
}

static const char *scalar(const yaml_node_t *n)
{
  return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static const char *node_type_name(const yaml_node_t *n)
{
  switch (n->type) {
  case YAML_SCALAR_NODE:
    return "a scalar";
  case YAML_SEQUENCE_NODE:
    return "a list";
  case YAML_MAPPING_NODE:
    return "a mapping";
  default:
    return "empty";
  }
}

/* Checks that map is a mapping whose keys are scalars from `allowed`
 * (NULL-terminated), each at most once.  O(keys * allowed). */
static gboolean check_keys(ld *c, const yaml_node_t *map, const char *where, const char *const *allowed)
{
  if (map->type != YAML_MAPPING_NODE)
    return fail(c, map, WISP_ERROR_PARSE, "'%s' must be a mapping (key: value), not %s", where,
                node_type_name(map));
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
    yaml_node_t *k = ynode(c, p->key);
    const char *ks = scalar(k);
    if (ks == NULL)
      return fail(c, k, WISP_ERROR_PARSE, "keys in '%s' must be plain names", where);
    gboolean ok = FALSE;
    for (const char *const *a = allowed; *a; a++)
      if (strcmp(*a, ks) == 0)
        ok = TRUE;
    if (!ok) {
      GString *exp = g_string_new(NULL);
      for (const char *const *a = allowed; *a; a++)
        g_string_append_printf(exp, "%s%s", a == allowed ? "" : ", ", *a);
      fail(c, k, WISP_ERROR_PARSE, "unknown key '%s' in '%s' (expected one of %s)", ks, where, exp->str);
      g_string_free(exp, TRUE);
      return FALSE;
    }
    for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++)
      if (g_strcmp0(scalar(ynode(c, q->key)), ks) == 0)
        return fail(c, k, WISP_ERROR_PARSE, "duplicate key '%s' in '%s' (first given on line %d)", ks, where,
                    line_of(ynode(c, q->key)));
  }
  return TRUE;
}

static yaml_node_t *get(ld *c, const yaml_node_t *map, const char *key)
{
  if (map->type != YAML_MAPPING_NODE)
    return NULL;
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++)
    if (g_strcmp0(scalar(ynode(c, p->key)), key) == 0)
      return ynode(c, p->value);
  return NULL;
}

static gboolean need_scalar(ld *c, const yaml_node_t *v, const char *key, const char *where, const char **out)
{
  const char *s = scalar(v);
  if (s == NULL || *s == '\0')
    return fail(c, v, WISP_ERROR_PARSE, "'%s' in '%s' must be a single value, not %s", key, where,
                s ? "empty" : node_type_name(v));
  *out = s;
  return TRUE;
}

static gboolean get_int(ld *c, const yaml_node_t *v, const char *key, const char *where, long min, long max,
                        int *out)
{
  const char *s = NULL;
  if (!need_scalar(c, v, key, where, &s))
    return FALSE;
  char *end = NULL;
  errno = 0;
  long x = strtol(s, &end, 10);
  if (end == s || *end != '\0' || errno == ERANGE)
    return fail(c, v, WISP_ERROR_PARSE, "'%s' in '%s' must be a whole number, got '%s'", key, where, s);
  if (x < min || x > max)
    return fail(c, v, WISP_ERROR_INVALID, "'%s' in '%s' must be between %ld and %ld, got %ld", key, where, min, max,
                x);
  *out = (int)x;
  return TRUE;
}

static gboolean get_double(ld *c, const yaml_node_t *v, const char *key, const char *where, double *out)
{
  const char *s = NULL;
  if (!need_scalar(c, v, key, where, &s))
    return FALSE;
  char *end = NULL;
  errno = 0;
  double x = g_ascii_strtod(s, &end);
  if (end == s || *end != '\0' || errno == ERANGE || !isfinite(x))
    return fail(c, v, WISP_ERROR_PARSE, "'%s' in '%s' must be a number, got '%s'", key, where, s);
  *out = x;
  return TRUE;
}

static gboolean get_bw(ld *c, const yaml_node_t *v, const char *key, const char *where, wisp_bw_Bps *out)
{
  const char *s = NULL, *why = NULL;
  if (!need_scalar(c, v, key, where, &s))
    return FALSE;
  if (!wisp_parse_bandwidth(s, out, &why))
    return fail(c, v, WISP_ERROR_PARSE, "bad bandwidth '%s' for '%s' in '%s': %s", s, key, where, why);
  return TRUE;
}

static gboolean get_time(ld *c, const yaml_node_t *v, const char *key, const char *where, sim_time_ps *out)
{
  const char *s = NULL, *why = NULL;
  if (!need_scalar(c, v, key, where, &s))
    return FALSE;
  if (!wisp_parse_time(s, out, &why))
    return fail(c, v, WISP_ERROR_PARSE, "bad time '%s' for '%s' in '%s': %s", s, key, where, why);
  return TRUE;
}

static gboolean need(ld *c, const yaml_node_t *map, const char *key, const char *where, yaml_node_t **out)
{
  *out = get(c, map, key);
  if (*out == NULL)
    return fail(c, map, WISP_ERROR_PARSE, "'%s' is missing the required key '%s'", where, key);
  return TRUE;
}

/* ---- settings (collectives:, library:) ---- */

static gboolean flatten(ld *c, topo *t, const char *prefix, const yaml_node_t *n)
{
  if (++c->n_settings > TOPO_MAX_SETTINGS)
    return fail(c, n, WISP_ERROR_LIMIT, "more than %d settings under '%s'; the config is too large",
                TOPO_MAX_SETTINGS, prefix);
  switch (n->type) {
  case YAML_SCALAR_NODE:
    topo_put_setting(t, prefix, scalar(n), line_of(n));
    return TRUE;
  case YAML_SEQUENCE_NODE: {
    gboolean all_scalar = TRUE;
    for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++)
      if (ynode(c, *i)->type != YAML_SCALAR_NODE)
        all_scalar = FALSE;
    if (all_scalar) {
      /* A list of scalars is kept comma-joined ("ring,direct"), the same
       * value as the string form. */
      GString *s = g_string_new(NULL);
      for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++)
        g_string_append_printf(s, "%s%s", s->len ? "," : "", scalar(ynode(c, *i)));
      topo_put_setting(t, prefix, s->str, line_of(n));
      g_string_free(s, TRUE);
      return TRUE;
    }
    int k = 0;
    for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++, k++) {
      char *key = g_strdup_printf("%s.%d", prefix, k);
      gboolean ok = flatten(c, t, key, ynode(c, *i));
      g_free(key);
      if (!ok)
        return FALSE;
    }
    return TRUE;
  }
  case YAML_MAPPING_NODE:
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
      const yaml_node_t *k = ynode(c, p->key);
      const char *ks = scalar(k);
      if (ks == NULL || *ks == '\0')
        return fail(c, k, WISP_ERROR_PARSE, "keys under '%s' must be plain names", prefix);
      for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < p; q++)
        if (g_strcmp0(scalar(ynode(c, q->key)), ks) == 0)
          return fail(c, k, WISP_ERROR_PARSE, "duplicate key '%s' under '%s'", ks, prefix);
      char *key = g_strdup_printf("%s.%s", prefix, ks);
      gboolean ok = flatten(c, t, key, ynode(c, p->value));
      g_free(key);
      if (!ok)
        return FALSE;
    }
    return TRUE;
  default:
    topo_put_setting(t, prefix, "", line_of(n));
    return TRUE;
  }
}

/* ---- wisp dims ---- */

static gboolean parse_kind(ld *c, const yaml_node_t *v, const char *where, topo_kind *out)
{
  static const topo_kind kinds[] = {TOPO_KIND_RING_UNI, TOPO_KIND_RING, TOPO_KIND_FULLY_CONNECTED,
                                    TOPO_KIND_SWITCH, TOPO_KIND_TORUS2D, TOPO_KIND_TORUS3D, TOPO_KIND_FAT_TREE};
  const char *s;
  if (!need_scalar(c, v, "kind", where, &s))
    return FALSE;
  for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++)
    if (strcmp(s, topo_kind_name(kinds[i])) == 0) {
      *out = kinds[i];
      return TRUE;
    }
  return fail(c, v, WISP_ERROR_PARSE,
              "unknown kind '%s' in '%s' (expected one of ring, ring_uni, fully_connected, switch, torus2d, torus3d, "
              "fat_tree; irregular fabrics use a top-level 'graph:')",
              s, where);
}

static gboolean parse_dim(ld *c, const yaml_node_t *m, int index, topo_dim *d)
{
  static const char *const keys[] = {"name", "kind", "size", "bandwidth", "latency", "shape",
                                     "leaves", "spines", "oversubscription", "fabric", "stream_bandwidth",
                                     "description", NULL};
  char *where = g_strdup_printf("dims[%d]", index);
  gboolean ok = FALSE;
  yaml_node_t *v;
  d->line = line_of(m);
  d->size = 0;
  if (!check_keys(c, m, where, keys))
    goto out;
  if ((v = get(c, m, "name"))) {
    const char *s;
    if (!need_scalar(c, v, "name", where, &s))
      goto out;
    d->name = g_strdup(s);
  } else {
    d->name = g_strdup_printf("dim%d", index);
  }
  if (!need(c, m, "kind", where, &v) || !parse_kind(c, v, where, &d->kind))
    goto out;
  if (!need(c, m, "bandwidth", where, &v) || !get_bw(c, v, "bandwidth", where, &d->bw))
    goto out;
  if (!need(c, m, "latency", where, &v) || !get_time(c, v, "latency", where, &d->latency))
    goto out;
  if ((v = get(c, m, "size")) && !get_int(c, v, "size", where, 1, (long)TOPO_MAX_ENDPOINTS, &d->size))
    goto out;
  if ((v = get(c, m, "stream_bandwidth"))) {
    if (!get_bw(c, v, "stream_bandwidth", where, &d->stream_bw))
      goto out;
    if (d->stream_bw > d->bw) {
      fail(c, v, WISP_ERROR_INVALID,
           "'stream_bandwidth' in '%s' is above 'bandwidth'; it is the most one transfer gets through a link, so it "
           "must not exceed the link's capacity (drop it, or raise 'bandwidth')",
           where);
      goto out;
    }
    if (d->stream_bw == d->bw)
      d->stream_bw = 0;
  }
  d->fabric_level = -1;
  if ((v = get(c, m, "fabric"))) {
    const char *s;
    if (!need_scalar(c, v, "fabric", where, &s))
      goto out;
    if (d->kind != TOPO_KIND_SWITCH) {
      fail(c, v, WISP_ERROR_INVALID,
           "'fabric' in '%s' applies only to kind switch, not %s (a shared fabric is built of switch levels)", where,
           topo_kind_name(d->kind));
      goto out;
    }
    if (*s == '\0') {
      fail(c, v, WISP_ERROR_INVALID, "'fabric' in '%s' must name the fabric, e.g. 'fabric: ub'", where);
      goto out;
    }
    d->fabric = g_strdup(s);
  }
  gboolean torus = d->kind == TOPO_KIND_TORUS2D || d->kind == TOPO_KIND_TORUS3D;
  static const char *const torus_keys[] = {"shape", NULL};
  static const char *const ft_keys[] = {"leaves", "spines", "oversubscription", NULL};
  for (const char *const *k = torus_keys; *k; k++)
    if (!torus && (v = get(c, m, *k))) {
      fail(c, v, WISP_ERROR_INVALID, "'%s' in '%s' applies only to kind torus2d or torus3d, not %s", *k, where,
           topo_kind_name(d->kind));
      goto out;
    }
  for (const char *const *k = ft_keys; *k; k++)
    if (d->kind != TOPO_KIND_FAT_TREE && (v = get(c, m, *k))) {
      fail(c, v, WISP_ERROR_INVALID, "'%s' in '%s' applies only to kind fat_tree, not %s", *k, where,
           topo_kind_name(d->kind));
      goto out;
    }
  if (torus) {
    int want = d->kind == TOPO_KIND_TORUS2D ? 2 : 3;
    if (!need(c, m, "shape", where, &v))
      goto out;
    if (v->type != YAML_SEQUENCE_NODE || (int)(v->data.sequence.items.top - v->data.sequence.items.start) != want) {
      fail(c, v, WISP_ERROR_INVALID, "'shape' in '%s' must be a list of %d axis sizes for %s, e.g. %s", where,
           want, topo_kind_name(d->kind), want == 2 ? "[4, 4]" : "[4, 4, 4]");
      goto out;
    }
    d->n_axes = want;
    uint64_t prod = 1;
    for (int a = 0; a < want; a++) {
      if (!get_int(c, ynode(c, v->data.sequence.items.start[a]), "shape", where, 1, (long)TOPO_MAX_ENDPOINTS,
                   &d->shape[a]))
        goto out;
      prod *= (uint64_t)d->shape[a];
    }
    if (prod > TOPO_MAX_ENDPOINTS) {
      fail(c, v, WISP_ERROR_LIMIT, "'shape' in '%s' gives more than %u endpoints", where, TOPO_MAX_ENDPOINTS);
      goto out;
    }
    if (d->size == 0)
      d->size = (int)prod;
    else if ((uint64_t)d->size != prod) {
      fail(c, get(c, m, "size"), WISP_ERROR_INVALID,
           "inconsistent sizes in '%s': size %d but shape gives %" G_GUINT64_FORMAT " endpoints; drop 'size' or make "
           "it the product of 'shape'",
           where, d->size, prod);
      goto out;
    }
  }
  if (d->size == 0) {
    fail(c, m, WISP_ERROR_PARSE, "'%s' is missing the required key 'size'", where);
    goto out;
  }
  if (d->kind == TOPO_KIND_FAT_TREE) {
    if (!need(c, m, "leaves", where, &v) || !get_int(c, v, "leaves", where, 1, d->size, &d->leaves))
      goto out;
    if (d->size % d->leaves != 0) {
      fail(c, v, WISP_ERROR_INVALID,
           "inconsistent sizes in '%s': %d endpoints cannot be spread evenly over %d leaves; make size a multiple "
           "of leaves",
           where, d->size, d->leaves);
      goto out;
    }
    int h = d->size / d->leaves;
    d->spines = h;
    d->oversub = 1.0;
    if ((v = get(c, m, "spines")) && !get_int(c, v, "spines", where, 1, 65536, &d->spines))
      goto out;
    if ((v = get(c, m, "oversubscription"))) {
      if (!get_double(c, v, "oversubscription", where, &d->oversub))
        goto out;
      if (d->oversub < 1.0) {
        fail(c, v, WISP_ERROR_INVALID, "'oversubscription' in '%s' must be >= 1 (1 = non-blocking), got %g", where,
             d->oversub);
        goto out;
      }
    }
    /* Each leaf's uplink capacity is its hosts' capacity divided by the
     * oversubscription, shared evenly over one link to every spine. */
    double up = (double)d->bw * (double)h / (d->oversub * (double)d->spines);
    if (!(up >= 1.0) || up > 1.8e19) {
      fail(c, m, WISP_ERROR_INVALID, "'%s': the leaf-spine link bandwidth would be %g B/s; check spines and "
           "oversubscription", where, up);
      goto out;
    }
    d->up_bw = (wisp_bw_Bps)llround(up);
  }
  ok = TRUE;
out:
  g_free(where);
  return ok;
}

static gboolean parse_dims(ld *c, topo *t, const yaml_node_t *v)
{
  if (v->type != YAML_SEQUENCE_NODE || v->data.sequence.items.top == v->data.sequence.items.start)
    return fail(c, v, WISP_ERROR_PARSE, "'dims' must be a non-empty list of dimensions, innermost first");
  int n = (int)(v->data.sequence.items.top - v->data.sequence.items.start);
  if (n > 64)
    return fail(c, v, WISP_ERROR_LIMIT, "'dims' has %d dimensions; at most 64 are supported", n);
  t->dims = g_new0(topo_dim, n);
  for (int i = 0; i < n; i++) {
    t->n_dims = i + 1; /* so topo_free releases names parsed so far */
    if (!parse_dim(c, ynode(c, v->data.sequence.items.start[i]), i, &t->dims[i]))
      return FALSE;
    for (int j = 0; j < i; j++)
      if (strcmp(t->dims[j].name, t->dims[i].name) == 0)
        return fail(c, ynode(c, v->data.sequence.items.start[i]), WISP_ERROR_INVALID,
                    "two dimensions are named '%s'; give each tier its own name", t->dims[i].name);
  }
  /* A shared fabric: consecutive switch dimensions that name it, one
   * fabric per topology (each endpoint has one port into it). */
  for (int i = 0; i < n; i++) {
    topo_dim *d = &t->dims[i];
    if (d->fabric == NULL)
      continue;
    const yaml_node_t *node = ynode(c, v->data.sequence.items.start[i]);
    if (t->fabric_first < 0) {
      t->fabric_first = i;
    } else if (strcmp(d->fabric, t->dims[t->fabric_first].fabric) != 0) {
      return fail(c, node, WISP_ERROR_INVALID,
                  "dims[%d] names fabric '%s' but dims[%d] already names '%s'; one shared fabric per topology is "
                  "supported",
                  i, d->fabric, t->fabric_first, t->dims[t->fabric_first].fabric);
    } else if (t->fabric_last != i - 1) {
      return fail(c, node, WISP_ERROR_INVALID,
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

static gboolean parse_graph(ld *c, topo *t, const yaml_node_t *g)
{
  static const char *const gkeys[] = {"nodes", "links", NULL};
  static const char *const nkeys[] = {"name", "kind", NULL};
  static const char *const lkeys[] = {"a", "b", "bandwidth", "latency", "duplex", "bandwidth_ba", "latency_ba",
                                      NULL};
  yaml_node_t *nodes, *links;
  if (!check_keys(c, g, "graph", gkeys) || !need(c, g, "nodes", "graph", &nodes) ||
      !need(c, g, "links", "graph", &links))
    return FALSE;
  if (nodes->type != YAML_SEQUENCE_NODE)
    return fail(c, nodes, WISP_ERROR_PARSE, "'graph.nodes' must be a list of {name, kind}");
  if (links->type != YAML_SEQUENCE_NODE)
    return fail(c, links, WISP_ERROR_PARSE, "'graph.links' must be a list of {a, b, bandwidth, latency}");
  size_t n = (size_t)(nodes->data.sequence.items.top - nodes->data.sequence.items.start);
  if (n > TOPO_MAX_ENDPOINTS)
    return fail(c, nodes, WISP_ERROR_LIMIT, "the graph has more than %u nodes", TOPO_MAX_ENDPOINTS);
  /* Endpoints first, in listed order, then switches in listed order. */
  const char **names = g_new0(const char *, n ? n : 1);
  gboolean *is_sw = g_new0(gboolean, n ? n : 1);
  GHashTable *index = g_hash_table_new(g_str_hash, g_str_equal);
  uint32_t *node_id = g_new0(uint32_t, n ? n : 1);
  gboolean ok = FALSE;
  uint32_t n_ep = 0;
  for (size_t i = 0; i < n; i++) {
    yaml_node_t *m = ynode(c, nodes->data.sequence.items.start[i]);
    char where[48];
    g_snprintf(where, sizeof where, "graph.nodes[%zu]", i);
    yaml_node_t *v;
    if (!check_keys(c, m, where, nkeys) || !need(c, m, "name", where, &v) || !need_scalar(c, v, "name", where, &names[i]))
      goto out;
    if (g_hash_table_contains(index, names[i])) {
      fail(c, m, WISP_ERROR_INVALID, "node name '%s' is used twice; node names must be unique", names[i]);
      goto out;
    }
    g_hash_table_insert(index, (gpointer)names[i], GSIZE_TO_POINTER(i));
    const char *k;
    if (!need(c, m, "kind", where, &v) || !need_scalar(c, v, "kind", where, &k))
      goto out;
    if (strcmp(k, "switch") == 0)
      is_sw[i] = TRUE;
    else if (strcmp(k, "endpoint") == 0)
      n_ep++;
    else {
      fail(c, v, WISP_ERROR_PARSE, "unknown node kind '%s' in '%s' (expected endpoint or switch)", k, where);
      goto out;
    }
  }
  if (n_ep == 0) {
    fail(c, nodes, WISP_ERROR_INVALID, "the graph has no node of kind endpoint; ranks need endpoints");
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
    fail(c, links, WISP_ERROR_LIMIT, "the graph has more than %" G_GUINT64_FORMAT " links", t->max_links / 2);
    goto out;
  }
  for (size_t i = 0; i < nl; i++) {
    yaml_node_t *m = ynode(c, links->data.sequence.items.start[i]);
    char where[48];
    g_snprintf(where, sizeof where, "graph.links[%zu]", i);
    yaml_node_t *v;
    const char *an, *bn;
    wisp_bw_Bps bw, bw_ba;
    sim_time_ps lat, lat_ba;
    if (!check_keys(c, m, where, lkeys) || !need(c, m, "a", where, &v) || !need_scalar(c, v, "a", where, &an) ||
        !need(c, m, "b", where, &v) || !need_scalar(c, v, "b", where, &bn) || !need(c, m, "bandwidth", where, &v) ||
        !get_bw(c, v, "bandwidth", where, &bw) || !need(c, m, "latency", where, &v) ||
        !get_time(c, v, "latency", where, &lat))
      goto out;
    gpointer ia, ib;
    if (!g_hash_table_lookup_extended(index, an, NULL, &ia)) {
      fail(c, m, WISP_ERROR_INVALID, "'%s' names node '%s', which is not in graph.nodes", where, an);
      goto out;
    }
    if (!g_hash_table_lookup_extended(index, bn, NULL, &ib)) {
      fail(c, m, WISP_ERROR_INVALID, "'%s' names node '%s', which is not in graph.nodes", where, bn);
      goto out;
    }
    if (ia == ib) {
      fail(c, m, WISP_ERROR_INVALID, "'%s' joins node '%s' to itself", where, an);
      goto out;
    }
    gboolean duplex = TRUE;
    if ((v = get(c, m, "duplex"))) {
      const char *s;
      if (!need_scalar(c, v, "duplex", where, &s))
        goto out;
      if (strcmp(s, "true") == 0)
        duplex = TRUE;
      else if (strcmp(s, "false") == 0)
        duplex = FALSE;
      else {
        fail(c, v, WISP_ERROR_PARSE, "'duplex' in '%s' must be true or false, got '%s'", where, s);
        goto out;
      }
    }
    bw_ba = bw;
    lat_ba = lat;
    yaml_node_t *vb = get(c, m, "bandwidth_ba"), *vl = get(c, m, "latency_ba");
    if (!duplex && (vb || vl)) {
      fail(c, vb ? vb : vl, WISP_ERROR_INVALID, "'%s' has duplex: false, so it has no b->a direction to give "
           "bandwidth_ba/latency_ba; remove them or set duplex: true", where);
      goto out;
    }
    if ((vb && !get_bw(c, vb, "bandwidth_ba", where, &bw_ba)) || (vl && !get_time(c, vl, "latency_ba", where, &lat_ba)))
      goto out;
    uint32_t a = node_id[GPOINTER_TO_SIZE(ia)], b = node_id[GPOINTER_TO_SIZE(ib)];
    topo_add_link(t, a, b, bw, lat, 0);
    if (duplex)
      topo_add_link(t, b, a, bw_ba, lat_ba, 0);
  }
  ok = topo_build_graph(t, c->error);
out:
  g_free(names);
  g_free(is_sw);
  g_free(node_id);
  g_hash_table_destroy(index);
  return ok;
}

/* ---- placement ---- */

static gboolean parse_placement(ld *c, topo *t, const yaml_node_t *root)
{
  yaml_node_t *pv = get(c, root, "placement"), *rv = get(c, root, "ranks");
  int ranks = -1;
  if (rv && !get_int(c, rv, "ranks", "topology", 1, (long)TOPO_MAX_ENDPOINTS, &ranks))
    return FALSE;
  if (pv == NULL || (scalar(pv) && strcmp(scalar(pv), "contiguous") == 0))
    return topo_set_placement(t, ranks > 0 ? ranks : (int)t->n_endpoints, NULL, line_of(rv ? rv : root),
                              c->error);
  if (pv->type != YAML_SEQUENCE_NODE)
    return fail(c, pv, WISP_ERROR_PARSE,
                "'placement' must be 'contiguous' or a list giving each rank's endpoint id, e.g. [0, 2, 4, 6]");
  int n = (int)(pv->data.sequence.items.top - pv->data.sequence.items.start);
  if (ranks > 0 && n != ranks)
    return fail(c, pv, WISP_ERROR_INVALID,
                "inconsistent sizes: 'placement' lists %d endpoints but 'ranks' is %d; give one endpoint per rank", n,
                ranks);
  if (n == 0)
    return fail(c, pv, WISP_ERROR_INVALID, "'placement' is an empty list; give one endpoint id per rank");
  uint32_t *map = g_new(uint32_t, n);
  for (int r = 0; r < n; r++) {
    yaml_node_t *item = ynode(c, pv->data.sequence.items.start[r]);
    const char *s = scalar(item);
    /* Explicit graphs may name the endpoint instead of giving its id. */
    if (t->node_names && s && !g_ascii_isdigit(s[0])) {
      uint32_t ep = UINT32_MAX;
      for (uint32_t e = 0; e < t->n_endpoints; e++)
        if (strcmp(t->node_names[e], s) == 0)
          ep = e;
      if (ep == UINT32_MAX) {
        g_free(map);
        return fail(c, item, WISP_ERROR_INVALID, "placement of rank %d names '%s', which is not an endpoint of the graph",
                    r, s);
      }
      map[r] = ep;
      continue;
    }
    int ep;
    if (!get_int(c, item, "placement", "topology", 0, (long)TOPO_MAX_ENDPOINTS - 1, &ep)) {
      g_free(map);
      return FALSE;
    }
    map[r] = (uint32_t)ep;
  }
  gboolean ok = topo_set_placement(t, n, map, line_of(pv), c->error);
  g_free(map);
  return ok;
}

/* ---- formats ---- */

static gboolean load_wisp(ld *c, topo *t, const yaml_node_t *root)
{
  static const char *const keys[] = {"schema_version", "name", "description", "model", "flow_quantum", "ranks",
                                     "node_dims", "dims", "graph", "placement", "collectives", "library",
                                     "preset_version", NULL};
  yaml_node_t *v;
  int version;
  if (!check_keys(c, root, "topology", keys))
    return FALSE;
  /* Cluster presets (the presets directory) carry `preset_version: 1`; accepted
   * here so that a preset file is also a network config. */
  if ((v = get(c, root, "preset_version"))) {
    int pv;
    if (!get_int(c, v, "preset_version", "topology", 0, 1000000, &pv))
      return FALSE;
    if (pv != 1)
      return fail(c, v, WISP_ERROR_UNSUPPORTED, "preset_version %d is not supported; this wisp reads preset_version 1",
                  pv);
  }
  v = get(c, root, "schema_version");
  if (!get_int(c, v, "schema_version", "topology", 0, 1000000, &version))
    return FALSE;
  if (version != 1)
    return fail(c, v, WISP_ERROR_UNSUPPORTED, "schema_version %d is not supported; this wisp reads schema_version 1",
                version);
  if ((v = get(c, root, "name"))) {
    const char *s;
    if (!need_scalar(c, v, "name", "topology", &s))
      return FALSE;
    t->name = g_strdup(s);
  }
  if ((v = get(c, root, "description")) && v->type != YAML_SCALAR_NODE)
    return fail(c, v, WISP_ERROR_PARSE, "'description' must be text");
  t->tier = NET_TIER_ANALYTICAL;
  if ((v = get(c, root, "model"))) {
    const char *s;
    if (!need_scalar(c, v, "model", "topology", &s))
      return FALSE;
    if (!net_tier_from_name(s, &t->tier))
      return fail(c, v, WISP_ERROR_PARSE, "unknown model '%s' (expected analytical or flow)", s);
  }
  if ((v = get(c, root, "flow_quantum")) && !get_time(c, v, "flow_quantum", "topology", &t->flow_quantum))
    return FALSE;
  yaml_node_t *dims = get(c, root, "dims"), *graph = get(c, root, "graph");
  if (dims && graph)
    return fail(c, graph, WISP_ERROR_INVALID, "give either 'dims' (hierarchical) or 'graph' (explicit), not both");
  if (!dims && !graph)
    return fail(c, root, WISP_ERROR_PARSE, "the topology needs 'dims' (hierarchical tiers) or 'graph' (explicit)");
  if (dims) {
    t->format = TOPO_FORMAT_DIMS;
    if (!parse_dims(c, t, dims))
      return FALSE;
  } else {
    t->format = TOPO_FORMAT_GRAPH;
    if (!parse_graph(c, t, graph))
      return FALSE;
  }
  if ((v = get(c, root, "node_dims"))) {
    if (t->format != TOPO_FORMAT_DIMS)
      return fail(c, v, WISP_ERROR_INVALID, "'node_dims' needs 'dims' (it counts the tiers inside one node)");
    if (!get_int(c, v, "node_dims", "topology", 1, t->n_dims, &t->node_dims))
      return FALSE;
  }
  if (!parse_placement(c, t, root))
    return FALSE;
  if ((v = get(c, root, "collectives"))) {
    if (v->type != YAML_MAPPING_NODE)
      return fail(c, v, WISP_ERROR_PARSE, "'collectives' must be a mapping, e.g. {all_reduce: ring, chunks: 4}");
    if (!flatten(c, t, "collectives", v))
      return FALSE;
  }
  if ((v = get(c, root, "library"))) {
    if (v->type != YAML_MAPPING_NODE)
      return fail(c, v, WISP_ERROR_PARSE, "'library' must be a mapping");
    if (!flatten(c, t, "library", v))
      return FALSE;
  }
  return TRUE;
}

/* ASTRA-sim accepts each key as a list (one entry per dimension); a bare
 * scalar is taken as a one-entry list. */
static int astra_list(ld *c, const yaml_node_t *v, yaml_node_t ***items)
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
    (*items)[i] = ynode(c, v->data.sequence.items.start[i]);
  return n;
}

static gboolean load_astra(ld *c, topo *t, const yaml_node_t *root)
{
  static const char *const keys[] = {"topology", "npus_count", "bandwidth", "latency", NULL};
  static const char *const names[] = {"topology", "npus_count", "bandwidth", "latency"};
  yaml_node_t **items[4] = {NULL};
  int len[4];
  gboolean ok = FALSE;
  if (!check_keys(c, root, "network.yml", keys))
    return FALSE;
  for (int k = 0; k < 4; k++) {
    yaml_node_t *v;
    if (!need(c, root, names[k], "network.yml (ASTRA-sim)", &v))
      goto out;
    len[k] = astra_list(c, v, &items[k]);
    if (len[k] <= 0) {
      fail(c, v, WISP_ERROR_PARSE, "'%s' must be a non-empty list with one entry per dimension", names[k]);
      goto out;
    }
  }
  for (int k = 1; k < 4; k++)
    if (len[k] != len[0]) {
      fail(c, root, WISP_ERROR_INVALID,
           "ASTRA-sim lists must have one entry per dimension, but topology has %d, npus_count %d, bandwidth %d and "
           "latency %d entries",
           len[0], len[1], len[2], len[3]);
      goto out;
    }
  if (len[0] > 64) {
    fail(c, root, WISP_ERROR_LIMIT, "%d dimensions; at most 64 are supported", len[0]);
    goto out;
  }
  t->format = TOPO_FORMAT_ASTRA;
  t->tier = NET_TIER_ANALYTICAL;
  t->dims = g_new0(topo_dim, len[0]);
  for (int i = 0; i < len[0]; i++) {
    topo_dim *d = &t->dims[i];
    t->n_dims = i + 1;
    d->name = g_strdup_printf("dim%d", i);
    d->line = line_of(items[0][i]);
    const char *s;
    if (!need_scalar(c, items[0][i], "topology", "network.yml", &s))
      goto out;
    if (strcmp(s, "Ring") == 0)
      d->kind = TOPO_KIND_RING;
    else if (strcmp(s, "FullyConnected") == 0)
      d->kind = TOPO_KIND_FULLY_CONNECTED;
    else if (strcmp(s, "Switch") == 0)
      d->kind = TOPO_KIND_SWITCH;
    else {
      fail(c, items[0][i], WISP_ERROR_PARSE,
           "unknown ASTRA-sim topology '%s' (expected Ring, FullyConnected or Switch)", s);
      goto out;
    }
    if (!get_int(c, items[1][i], "npus_count", "network.yml", 1, (long)TOPO_MAX_ENDPOINTS, &d->size))
      goto out;
    double gb, ns;
    if (!get_double(c, items[2][i], "bandwidth", "network.yml", &gb))
      goto out;
    if (!(gb > 0) || gb > 1e9) {
      fail(c, items[2][i], WISP_ERROR_INVALID, "ASTRA-sim bandwidth must be a positive number of \"GB/s\", got %g",
           gb);
      goto out;
    }
    /* ASTRA-sim converts "GB/s" as value * 2^30 / 10^9 bytes per ns, i.e.
     * the value is GiB/s; we keep exactly that (round to whole B/s). */
    d->astra_value = gb;
    d->bw = (wisp_bw_Bps)llround(gb * 1073741824.0);
    if (d->bw == 0) {
      fail(c, items[2][i], WISP_ERROR_INVALID, "ASTRA-sim bandwidth %g \"GB/s\" is below 1 byte/s", gb);
      goto out;
    }
    if (!get_double(c, items[3][i], "latency", "network.yml", &ns))
      goto out;
    if (ns < 0 || !wisp_ps_from_ns(ns, &d->latency)) {
      fail(c, items[3][i], WISP_ERROR_INVALID, "ASTRA-sim latency must be a non-negative number of ns, got %g", ns);
      goto out;
    }
  }
  ok = topo_build_dims(t, c->error) && topo_set_placement(t, (int)t->n_endpoints, NULL, line_of(root), c->error);
out:
  for (int k = 0; k < 4; k++)
    g_free(items[k]);
  return ok;
}

topo *topo_load_string(const char *text, const char *source_name, GError **error)
{
  return topo_load_string_bounded(text, source_name, TOPO_MAX_LINKS, error);
}

topo *topo_load_string_bounded(const char *text, const char *source_name, uint64_t max_links, GError **error)
{
  g_return_val_if_fail(text != NULL, NULL);
  g_return_val_if_fail(max_links >= 1 && max_links <= TOPO_MAX_LINKS, NULL);
  const char *src = source_name ? source_name : "<string>";
  yaml_parser_t parser;
  yaml_document_t doc;
  topo *t = NULL;
  if (!yaml_parser_initialize(&parser)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_LIMIT, "%s: cannot initialise the YAML parser (out of memory)", src);
    return NULL;
  }
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
  if (!yaml_parser_load(&parser, &doc)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s:%zu:%zu: YAML syntax error: %s%s%s", src,
                parser.problem_mark.line + 1, parser.problem_mark.column + 1,
                parser.problem ? parser.problem : "unknown problem", parser.context ? " " : "",
                parser.context ? parser.context : "");
    yaml_parser_delete(&parser);
    return NULL;
  }
  ld c = {.src = src, .doc = &doc, .error = error};
  yaml_node_t *root = yaml_document_get_root_node(&doc);
  if (root == NULL) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE,
                "%s: the file is empty; a topology needs 'schema_version: 1' and 'dims' or 'graph' (or ASTRA-sim's "
                "topology/npus_count/bandwidth/latency)",
                src);
    goto done;
  }
  {
    /* A second document would be silently ignored; refuse it. */
    yaml_document_t extra;
    if (!yaml_parser_load(&parser, &extra)) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s:%zu: YAML syntax error: %s", src,
                  parser.problem_mark.line + 1, parser.problem ? parser.problem : "unknown problem");
      goto done;
    }
    gboolean more = yaml_document_get_root_node(&extra) != NULL;
    int line = more ? line_of(yaml_document_get_root_node(&extra)) : 0;
    yaml_document_delete(&extra);
    if (more) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE,
                  "%s:%d: a second YAML document ('---') follows the topology; keep one topology per file", src, line);
      goto done;
    }
  }
  if (root->type != YAML_MAPPING_NODE) {
    fail(&c, root, WISP_ERROR_PARSE, "the top level must be a mapping (key: value), not %s", node_type_name(root));
    goto done;
  }
  t = topo_alloc(src);
  t->max_links = max_links;
  gboolean ok;
  if (get(&c, root, "schema_version"))
    ok = load_wisp(&c, t, root);
  else if (get(&c, root, "topology") || get(&c, root, "npus_count"))
    ok = load_astra(&c, t, root);
  else if (get(&c, root, "dims") || get(&c, root, "graph"))
    ok = fail(&c, root, WISP_ERROR_PARSE, "missing 'schema_version: 1' (wisp topology files are versioned)");
  else
    ok = fail(&c, root, WISP_ERROR_PARSE,
              "cannot tell the format: a wisp topology starts with 'schema_version: 1'; an ASTRA-sim network.yml "
              "has topology, npus_count, bandwidth and latency");
  if (!ok) {
    topo_free(t);
    t = NULL;
  }
done:
  yaml_document_delete(&doc);
  yaml_parser_delete(&parser);
  return t;
}

topo *topo_load(const char *path, GError **error)
{
  char *text = NULL;
  gsize len = 0;
  GError *e = NULL;
  wisp_input_note(path); /* no output may replace it */
  if (!g_file_get_contents(path, &text, &len, &e)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot read the topology: %s", path, e->message);
    g_error_free(e);
    return NULL;
  }
  if (memchr(text, '\0', len) != NULL) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s: contains a NUL byte; a topology is a YAML text file", path);
    g_free(text);
    return NULL;
  }
  topo *t = topo_load_string(text, path, error);
  g_free(text);
  return t;
}
