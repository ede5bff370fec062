/* et_builder.c: the et_builder (id resolution, validation, CSR construction)
 * that makes a compact graph (chakra/et_graph.h).
 *
 * Building costs O(n + e) time for n nodes and e edges, plus O(L) per
 * cycle for a cycle of length L when ET_BUILD_BREAK_CYCLES repairs it.
 * While building, the builder holds 48 bytes per node, 16 bytes per
 * recorded dependency and the names; et_builder_finish additionally uses
 * about 12 bytes per node of scratch (id table, in-degrees, queue) and
 * frees everything it does not hand to the graph.  The finished graph holds
 * sizeof(et_node) = 48 bytes per node, 8 bytes per edge (parent entry plus
 * child entry), one et_comm per communication node and the string pool.
 */
#include "config.h"
#include "chakra/et_graph.h"

#include <string.h>

/* ---- builder ---- */

/* One recorded dependency: child node index, ET_EDGE_* bits and the parent's
 * Chakra id (replaced by the parent's index once resolved). */
typedef struct {
  uint32_t node;
  uint32_t bits;
  uint64_t parent;
} dep_rec;

/* Largest node count: parent entries keep the index in 30 bits. */
#define ET_MAX_NODES (UINT32_C(1) << 30)

struct et_builder {
  char *source;
  char *version;
  uint32_t compute_slots;
  et_node *nodes;
  uint32_t n_nodes, cap_nodes;
  dep_rec *deps;
  size_t n_deps, cap_deps;
  et_comm *comms;
  uint32_t n_comms, cap_comms;
  GArray *splits;        /* uint64_t */
  uint32_t split_width;  /* sizes per ALL_TO_ALLV node (0 until the first one) */
  GArray *comp_attrs;    /* et_comp_attr, appended in node order or sorted at finish */
  char *strings;
  size_t strings_len, strings_cap;
  GHashTable *pg_pool;   /* pg_name -> GUINT_TO_POINTER(offset + 1) */
  /* Names already in the pool (builder_intern): open addressing, slot =
   * offset (0 = empty), so each distinct name is stored once. */
  uint32_t *name_slots;
  size_t name_mask, name_used;
  char *limit_error;     /* first limit violation, reported by finish */
};

et_builder *et_builder_new(const char *source)
{
  et_builder *b = g_new0(et_builder, 1);
  b->source = g_strdup(source ? source : "(graph)");
  b->version = g_strdup("");
  b->splits = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  b->comp_attrs = g_array_new(FALSE, FALSE, sizeof(et_comp_attr));
  b->strings_cap = 4096;
  b->strings = g_malloc(b->strings_cap);
  b->strings[0] = '\0'; /* offset 0 is the empty name */
  b->strings_len = 1;
  b->pg_pool = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  return b;
}

void et_builder_free(et_builder *b)
{
  if (b == NULL)
    return;
  g_free(b->source);
  g_free(b->version);
  g_free(b->nodes);
  g_free(b->deps);
  g_free(b->comms);
  g_array_free(b->splits, TRUE);
  g_array_free(b->comp_attrs, TRUE);
  g_free(b->strings);
  g_free(b->name_slots);
  g_hash_table_destroy(b->pg_pool);
  g_free(b->limit_error);
  g_free(b);
}

void et_builder_set_version(et_builder *b, const char *version)
{
  g_return_if_fail(b != NULL);
  g_free(b->version);
  b->version = g_strdup(version ? version : "");
}

void et_builder_set_compute_slots(et_builder *b, uint32_t slots)
{
  g_return_if_fail(b != NULL);
  b->compute_slots = slots;
}

static void builder_limit(et_builder *b, const char *what)
{
  if (b->limit_error == NULL)
    b->limit_error = g_strdup_printf("%s: %s", b->source, what);
}

/* Doubles the name table (builder_intern). */
static void names_grow(et_builder *b)
{
  size_t cap = b->name_slots ? (b->name_mask + 1) * 2 : 1024;
  uint32_t *slots = g_new0(uint32_t, cap);
  for (size_t k = 0; b->name_slots && k <= b->name_mask; k++) {
    uint32_t off = b->name_slots[k];
    if (off == 0)
      continue;
    size_t q = g_str_hash(b->strings + off) & (cap - 1);
    while (slots[q])
      q = (q + 1) & (cap - 1);
    slots[q] = off;
  }
  g_free(b->name_slots);
  b->name_slots = slots;
  b->name_mask = cap - 1;
}

/* The offset of s in the pool, appended when it is not there yet; empty
 * strings share offset 0.  Each distinct name is stored once, so a graph
 * of many kernels with the same long name holds that name once (node
 * names repeat: kernel, launch and CPU names of every layer and step).
 * Offsets are 32-bit, so the pool is limited to 4 GiB.  O(length) per
 * call (one hash, one compare per probe). */
static uint32_t builder_intern(et_builder *b, const char *s)
{
  if (s == NULL || s[0] == '\0')
    return 0;
  if (b->name_used * 2 >= b->name_mask + 1 || !b->name_slots)
    names_grow(b);
  size_t k = g_str_hash(s) & b->name_mask;
  for (; b->name_slots[k]; k = (k + 1) & b->name_mask)
    if (!strcmp(b->strings + b->name_slots[k], s))
      return b->name_slots[k];
  size_t len = strlen(s) + 1;
  if (b->strings_len + len > UINT32_MAX) {
    builder_limit(b, "the names exceed wisp's 4 GiB string pool; shorten or drop node names");
    return 0;
  }
  if (b->strings_len + len > b->strings_cap) {
    while (b->strings_len + len > b->strings_cap)
      b->strings_cap *= 2;
    b->strings = g_realloc(b->strings, b->strings_cap);
  }
  uint32_t off = (uint32_t)b->strings_len;
  memcpy(b->strings + off, s, len);
  b->strings_len += len;
  b->name_slots[k] = off;
  b->name_used++;
  return off;
}

uint32_t et_builder_add_node(et_builder *b, uint64_t id, et_node_type type, const char *name,
                             sim_time_ps duration_ps, uint8_t flags)
{
  g_return_val_if_fail(b != NULL, ET_NONE);
  g_return_val_if_fail(duration_ps >= 0, ET_NONE);
  if (b->n_nodes + 1 >= ET_MAX_NODES) {
    builder_limit(b, "more than 2^30 nodes in one rank; split the trace");
    return ET_NONE;
  }
  if (b->n_nodes == b->cap_nodes) {
    b->cap_nodes = b->cap_nodes ? b->cap_nodes * 2 : 1024;
    b->nodes = g_renew(et_node, b->nodes, b->cap_nodes);
  }
  uint32_t i = b->n_nodes++;
  et_node *n = &b->nodes[i];
  memset(n, 0, sizeof(*n));
  n->id = id;
  n->duration_ps = duration_ps;
  n->name = builder_intern(b, name);
  n->comm = ET_NONE;
  n->type = (uint8_t)type;
  n->flags = flags;
  return i;
}

void et_builder_set_start(et_builder *b, uint32_t node, sim_time_ps start_ps)
{
  g_return_if_fail(b != NULL && node < b->n_nodes);
  b->nodes[node].start_ps = start_ps;
  b->nodes[node].flags |= ET_FLAG_HAS_START;
}

void et_builder_set_buffer(et_builder *b, uint32_t node, uint64_t buffer, gboolean has_alloc, sim_time_ps alloc_ps)
{
  g_return_if_fail(b != NULL && node < b->n_nodes && b->nodes[node].comm != ET_NONE);
  et_comm *c = &b->comms[b->nodes[node].comm];
  c->buffer = buffer;
  c->has_alloc = has_alloc ? 1 : 0;
  c->alloc_ps = has_alloc ? alloc_ps : 0;
}

void et_builder_set_comm(et_builder *b, uint32_t node, const et_comm *comm, const char *pg_name,
                         const uint64_t *splits, uint32_t n_splits)
{
  g_return_if_fail(b != NULL && node < b->n_nodes && comm != NULL);
  g_return_if_fail(n_splits == 0 || splits != NULL);
  et_comm *c;
  if (b->nodes[node].comm != ET_NONE) {
    c = &b->comms[b->nodes[node].comm];
  } else {
    if (b->n_comms == b->cap_comms) {
      b->cap_comms = b->cap_comms ? b->cap_comms * 2 : 64;
      b->comms = g_renew(et_comm, b->comms, b->cap_comms);
    }
    b->nodes[node].comm = b->n_comms;
    c = &b->comms[b->n_comms++];
  }
  *c = *comm;
  c->group = ET_GROUP_WORLD;
  c->pg_name = ET_NONE;
  if (pg_name != NULL) {
    gpointer off = g_hash_table_lookup(b->pg_pool, pg_name);
    if (off == NULL) {
      /* The empty pg_name gets its own pool entry so that "" (present) and
       * absent (ET_NONE) stay distinct. */
      uint32_t o;
      if (pg_name[0] == '\0') {
        o = (uint32_t)b->strings_len;
        if (b->strings_len + 1 > b->strings_cap)
          b->strings = g_realloc(b->strings, b->strings_cap *= 2);
        b->strings[b->strings_len++] = '\0';
      } else {
        o = builder_intern(b, pg_name);
      }
      off = GUINT_TO_POINTER(o + 1);
      g_hash_table_insert(b->pg_pool, g_strdup(pg_name), off);
    }
    c->pg_name = GPOINTER_TO_UINT(off) - 1;
  }
  c->split = ET_NONE;
  if (n_splits > 0) {
    if (b->split_width != 0 && b->split_width != n_splits) {
      builder_limit(b, "all-to-all-v nodes carry different numbers of split sizes; "
                       "every one needs one size per rank");
      return;
    }
    b->split_width = n_splits;
    if ((uint64_t)b->splits->len + n_splits > UINT32_MAX) {
      builder_limit(b, "too many all-to-all-v split sizes (more than 2^32)");
      return;
    }
    c->split = b->splits->len;
    g_array_append_vals(b->splits, splits, n_splits);
  }
}

void et_builder_add_dep(et_builder *b, uint32_t node, uint64_t parent_id, gboolean data, gboolean ctrl)
{
  g_return_if_fail(b != NULL && node < b->n_nodes);
  g_return_if_fail(data || ctrl);
  if (b->n_deps == b->cap_deps) {
    b->cap_deps = b->cap_deps ? b->cap_deps * 2 : 1024;
    b->deps = g_renew(dep_rec, b->deps, b->cap_deps);
  }
  dep_rec *d = &b->deps[b->n_deps++];
  d->node = node;
  d->bits = (data ? ET_EDGE_DATA : 0) | (ctrl ? ET_EDGE_CTRL : 0);
  d->parent = parent_id;
}

void et_builder_set_comp_attrs(et_builder *b, uint32_t node, int64_t num_ops,
                               gboolean has_tensor_size, uint64_t tensor_size)
{
  g_return_if_fail(b != NULL && node < b->n_nodes);
  et_comp_attr a = {.node = node, .has_tensor_size = has_tensor_size ? 1 : 0,
                    .num_ops = num_ops, .tensor_size = has_tensor_size ? tensor_size : 0};
  g_array_append_val(b->comp_attrs, a);
}

void et_builder_set_module(et_builder *b, uint32_t node, const char *module)
{
  g_return_if_fail(b != NULL && node < b->n_nodes);
  if (module == NULL || module[0] == '\0')
    return;
  uint32_t off = builder_intern(b, module);
  guint n = b->comp_attrs->len;
  if (n > 0 && g_array_index(b->comp_attrs, et_comp_attr, n - 1).node == node) {
    g_array_index(b->comp_attrs, et_comp_attr, n - 1).module = off;
    return;
  }
  et_comp_attr a = {.node = node, .module = off};
  g_array_append_val(b->comp_attrs, a);
}

/* ---- id table: open addressing over node indices, keyed by nodes[i].id ---- */

typedef struct {
  const et_node *nodes;
  uint32_t *slots;   /* node index or ET_NONE; NULL when ids are dense 0..n-1 */
  uint32_t mask;
  uint32_t n;
} id_table;

static inline uint32_t id_hash(uint64_t id, uint32_t mask)
{
  id ^= id >> 33;
  id *= UINT64_C(0xff51afd7ed558ccd);
  id ^= id >> 33;
  return (uint32_t)id & mask;
}

/* Builds the table; returns the index of a node whose id repeats an earlier
 * one (and the earlier index in *first), or ET_NONE.  O(n) expected. */
static uint32_t id_table_build(id_table *t, const et_node *nodes, uint32_t n, uint32_t *first)
{
  t->nodes = nodes;
  t->n = n;
  t->slots = NULL;
  gboolean dense = TRUE;
  for (uint32_t i = 0; i < n && dense; i++)
    dense = nodes[i].id == i;
  if (dense)
    return ET_NONE;
  uint32_t cap = 16;
  while (cap < (uint64_t)n * 2)
    cap *= 2;
  t->mask = cap - 1;
  t->slots = g_new(uint32_t, cap);
  memset(t->slots, 0xff, (size_t)cap * sizeof(uint32_t));
  for (uint32_t i = 0; i < n; i++) {
    uint32_t h = id_hash(nodes[i].id, t->mask);
    while (t->slots[h] != ET_NONE) {
      if (nodes[t->slots[h]].id == nodes[i].id) {
        *first = t->slots[h];
        return i;
      }
      h = (h + 1) & t->mask;
    }
    t->slots[h] = i;
  }
  return ET_NONE;
}

static inline uint32_t id_table_find(const id_table *t, uint64_t id)
{
  if (t->slots == NULL)
    return id < t->n ? (uint32_t)id : ET_NONE;
  uint32_t h = id_hash(id, t->mask);
  while (t->slots[h] != ET_NONE) {
    if (t->nodes[t->slots[h]].id == id)
      return t->slots[h];
    h = (h + 1) & t->mask;
  }
  return ET_NONE;
}

/* ---- finish ---- */

static char *node_label(const et_builder *b, uint32_t i)
{
  const char *name = b->strings + b->nodes[i].name;
  if (name[0] == '\0')
    return g_strdup_printf("id %" G_GUINT64_FORMAT, b->nodes[i].id);
  return g_strdup_printf("id %" G_GUINT64_FORMAT " (\"%.60s\")", b->nodes[i].id, name);
}

/* Marks a removed edge in parent_edges / child_index. */
#define DEAD_EDGE UINT32_MAX

/* Finds a cycle among the nodes Kahn could not process (indeg > 0) by
 * walking parent links backwards from `start`; every such node has an
 * unprocessed parent, so the walk must revisit a node.  The cycle's nodes
 * are returned in execution order in *cycle, starting at the node with the
 * smallest index.  O(length of the walk). */
static void find_cycle(const et_node *nodes, const uint32_t *parent_edges, const uint32_t *indeg,
                       uint32_t start, uint32_t *pos_of, GArray *path, GArray *cycle)
{
  g_array_set_size(path, 0);
  uint32_t cur = start;
  for (;;) {
    uint32_t p = pos_of[cur];
    if (p < path->len && g_array_index(path, uint32_t, p) == cur) {
      /* Path holds cur <- ... in reverse execution order from position p. */
      g_array_set_size(cycle, 0);
      for (uint32_t k = path->len; k-- > p;)
        g_array_append_val(cycle, g_array_index(path, uint32_t, k));
      /* Rotate so that the node with the smallest index comes first. */
      uint32_t m = 0, len = cycle->len;
      for (uint32_t k = 1; k < len; k++)
        if (g_array_index(cycle, uint32_t, k) < g_array_index(cycle, uint32_t, m))
          m = k;
      g_array_set_size(path, 0);
      for (uint32_t k = 0; k < len; k++)
        g_array_append_val(path, g_array_index(cycle, uint32_t, (m + k) % len));
      g_array_set_size(cycle, 0);
      g_array_append_vals(cycle, path->data, len);
      return;
    }
    pos_of[cur] = path->len;
    g_array_append_val(path, cur);
    uint32_t next = ET_NONE;
    for (uint32_t e = nodes[cur].parents; e < nodes[cur + 1].parents; e++) {
      uint32_t pe = parent_edges[e];
      if (pe == DEAD_EDGE)
        continue;
      if (indeg[ET_EDGE_INDEX(pe)] > 0) {
        next = ET_EDGE_INDEX(pe);
        break;
      }
    }
    g_assert(next != ET_NONE);
    cur = next;
  }
}

static int comp_attr_cmp(gconstpointer a, gconstpointer b)
{
  const et_comp_attr *x = a, *y = b;
  return x->node < y->node ? -1 : x->node > y->node;
}

/* The arrays et_builder_finish builds, from the builder's nodes and
 * dependency records to the graph's CSR; freed by fin_clear unless handed
 * over to the graph. */
typedef struct {
  et_builder *b;
  unsigned flags;
  uint32_t n, n_edges;
  et_node *nodes;
  uint32_t *pos_of, *indeg, *queue, *parent_edges, *child_index;
  uint64_t dropped_dangling, ignored_ctrl, merged, dropped_cycle;
} fin_state;

/* Steps 1 and 2: node ids to indices (duplicates are errors), then parent
 * ids resolved in place, dropping what the flags say to drop; *kept gets
 * the number of dependency records kept.  O(nodes + dependencies). */
static gboolean fin_resolve_ids(fin_state *st, size_t *kept, GError **error)
{
  et_builder *b = st->b;
  id_table ids = {0};
  gboolean ok = FALSE;
  uint32_t first = 0;
  uint32_t dup = id_table_build(&ids, b->nodes, st->n, &first);
  if (dup != ET_NONE) {
    char *a = node_label(b, first), *c = node_label(b, dup);
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: duplicate node id %" G_GUINT64_FORMAT ": node #%u %s and node #%u %s; ids must be unique per rank",
                b->source, b->nodes[dup].id, first, a, dup, c);
    g_free(a);
    g_free(c);
    goto out;
  }
  *kept = 0;
  for (size_t k = 0; k < b->n_deps; k++) {
    dep_rec d = b->deps[k];
    uint32_t p = id_table_find(&ids, d.parent);
    if (p == ET_NONE) {
      if ((d.bits & ET_EDGE_DATA) || (st->flags & ET_BUILD_STRICT)) {
        char *c = node_label(b, d.node);
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                    "%s: node %s depends (%s) on node id %" G_GUINT64_FORMAT
                    ", which is not in the graph; fix the trace%s",
                    b->source, c, (d.bits & ET_EDGE_DATA) ? "data_deps" : "ctrl_deps", d.parent,
                    (d.bits & ET_EDGE_DATA) ? "" : " or load without strict checking to drop dangling ctrl_deps");
        g_free(c);
        goto out;
      }
      st->dropped_dangling++;
      continue;
    }
    if ((st->flags & ET_BUILD_DATA_DEPS_ONLY) && !(d.bits & ET_EDGE_DATA)) {
      st->ignored_ctrl++;
      continue;
    }
    d.parent = p;
    b->deps[(*kept)++] = d;
  }
  ok = TRUE;
out:
  g_free(ids.slots);
  return ok;
}

/* Step 3: the parent CSR by a stable counting sort on the child index,
 * merging repeated (child, parent) pairs into their first entry; frees the
 * dependency records.  O(nodes + kept). */
static void fin_parent_csr(fin_state *st, size_t kept)
{
  et_builder *b = st->b;
  uint32_t n = st->n;
  et_node *nodes = b->nodes;
  /* Counts live in .parents of the next node, then a prefix sum. */
  if (n + 1 > b->cap_nodes)
    nodes = b->nodes = g_renew(et_node, b->nodes, n + 1);
  st->nodes = nodes;
  memset(&nodes[n], 0, sizeof(et_node));
  nodes[n].comm = ET_NONE;
  for (uint32_t i = 0; i <= n; i++)
    nodes[i].parents = 0;
  for (size_t k = 0; k < kept; k++)
    nodes[b->deps[k].node + 1].parents++;
  for (uint32_t i = 0; i < n; i++)
    nodes[i + 1].parents += nodes[i].parents;
  uint32_t *parent_edges = st->parent_edges = g_new(uint32_t, kept ? kept : 1);
  for (uint32_t i = 0; i < n; i++)
    nodes[i].children = nodes[i].parents; /* cursor */
  for (size_t k = 0; k < kept; k++) {
    const dep_rec *d = &b->deps[k];
    parent_edges[nodes[d->node].children++] = d->bits | (uint32_t)d->parent;
  }
  g_clear_pointer(&b->deps, g_free);
  b->n_deps = b->cap_deps = 0;

  uint32_t *pos_of = st->pos_of = g_new0(uint32_t, n);
  uint32_t w = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t start = nodes[i].parents, end = nodes[i + 1].parents;
    nodes[i].parents = w;
    uint32_t node_start = w;
    for (uint32_t e = start; e < end; e++) {
      uint32_t pe = parent_edges[e], p = ET_EDGE_INDEX(pe);
      uint32_t at = pos_of[p];
      if (at >= node_start && at < w && ET_EDGE_INDEX(parent_edges[at]) == p) {
        parent_edges[at] |= pe & (ET_EDGE_DATA | ET_EDGE_CTRL);
        st->merged++;
        continue;
      }
      pos_of[p] = w;
      parent_edges[w++] = pe;
    }
  }
  nodes[n].parents = w;
  st->n_edges = w;
}

/* Step 4: the children CSR (the transpose; children of a node in index
 * order).  O(nodes + edges). */
static void fin_child_csr(fin_state *st)
{
  uint32_t n = st->n;
  et_node *nodes = st->nodes;
  for (uint32_t i = 0; i <= n; i++)
    nodes[i].children = 0;
  for (uint32_t e = 0; e < st->n_edges; e++)
    nodes[ET_EDGE_INDEX(st->parent_edges[e]) + 1].children++;
  for (uint32_t i = 0; i < n; i++)
    nodes[i + 1].children += nodes[i].children;
  st->child_index = g_new(uint32_t, st->n_edges ? st->n_edges : 1);
  st->indeg = g_new(uint32_t, n);
  for (uint32_t i = 0; i < n; i++)
    st->indeg[i] = nodes[i].children; /* cursor, reused as in-degree below */
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t e = nodes[i].parents; e < nodes[i + 1].parents; e++)
      st->child_index[st->indeg[ET_EDGE_INDEX(st->parent_edges[e])]++] = i;
}

/* The error for a cycle found by Kahn's algorithm (qt nodes sorted): the
 * first 16 node ids along it. */
static void fin_cycle_error(const fin_state *st, const GArray *cycle, uint32_t qt, GError **error)
{
  GString *s = g_string_new(NULL);
  for (uint32_t k = 0; k < cycle->len && k < 16; k++)
    g_string_append_printf(s, "%" G_GUINT64_FORMAT " -> ", st->nodes[g_array_index(cycle, uint32_t, k)].id);
  if (cycle->len > 16)
    g_string_append(s, "... -> ");
  g_string_append_printf(s, "%" G_GUINT64_FORMAT, st->nodes[g_array_index(cycle, uint32_t, 0)].id);
  g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
              "%s: the dependencies form a cycle of %u node(s) through node ids %s; "
              "%u of %u nodes could never run. Fix the trace: remove one data or control dependency along the "
              "cycle (wisp breaks cycles only in graphs it builds from Kineto traces, not in Chakra files)",
              st->b->source, cycle->len, s->str, st->n - qt, st->n);
  g_string_free(s, TRUE);
}

/* Drops the edge closing the cycle against file order: among the cycle's
 * edges parent -> child with parent index >= child index (at least one
 * exists), the one whose child has the smallest index.  Returns that
 * child.  O(cycle + the two nodes' edges). */
static uint32_t fin_break_cycle(fin_state *st, const GArray *cycle)
{
  et_node *nodes = st->nodes;
  uint32_t best_child = ET_NONE, best_parent = ET_NONE;
  for (uint32_t k = 0; k < cycle->len; k++) {
    uint32_t p = g_array_index(cycle, uint32_t, k);
    uint32_t c = g_array_index(cycle, uint32_t, (k + 1) % cycle->len);
    if (p >= c && (best_child == ET_NONE || c < best_child))
      best_child = c, best_parent = p;
  }
  g_assert(best_child != ET_NONE);
  for (uint32_t e = nodes[best_child].parents; e < nodes[best_child + 1].parents; e++)
    if (st->parent_edges[e] != DEAD_EDGE && ET_EDGE_INDEX(st->parent_edges[e]) == best_parent) {
      st->parent_edges[e] = DEAD_EDGE;
      break;
    }
  for (uint32_t e = nodes[best_parent].children; e < nodes[best_parent + 1].children; e++)
    if (st->child_index[e] == best_child) {
      st->child_index[e] = DEAD_EDGE;
      break;
    }
  st->dropped_cycle++;
  return best_child;
}

/* Step 5: Kahn's algorithm; a stall means a cycle, an error unless the
 * flags ask to break cycles.  O(nodes + edges) plus, per cycle broken,
 * its search (find_cycle). */
static gboolean fin_topo_sort(fin_state *st, GError **error)
{
  uint32_t n = st->n;
  et_node *nodes = st->nodes;
  uint32_t *indeg = st->indeg;
  uint32_t *queue = st->queue = g_new(uint32_t, n);
  uint32_t qh = 0, qt = 0;
  for (uint32_t i = 0; i < n; i++) {
    indeg[i] = nodes[i + 1].parents - nodes[i].parents;
    if (indeg[i] == 0)
      queue[qt++] = i;
  }
  uint32_t scan = 0;
  GArray *path = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  GArray *cycle = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  gboolean ok = TRUE;
  memset(st->pos_of, 0xff, (size_t)n * sizeof(uint32_t));
  for (;;) {
    while (qh < qt) {
      uint32_t v = queue[qh++];
      for (uint32_t e = nodes[v].children; e < nodes[v + 1].children; e++) {
        uint32_t c = st->child_index[e];
        if (c != DEAD_EDGE && --indeg[c] == 0)
          queue[qt++] = c;
      }
    }
    if (qt == n)
      break;
    while (indeg[scan] == 0)
      scan++;
    find_cycle(nodes, st->parent_edges, indeg, scan, st->pos_of, path, cycle);
    if (!(st->flags & ET_BUILD_BREAK_CYCLES)) {
      fin_cycle_error(st, cycle, qt, error);
      ok = FALSE;
      break;
    }
    uint32_t best_child = fin_break_cycle(st, cycle);
    if (--indeg[best_child] == 0)
      queue[qt++] = best_child;
  }
  g_array_free(path, TRUE);
  g_array_free(cycle, TRUE);
  return ok;
}

/* Step 6: compacts away the edges removed by cycle breaking.  O(nodes +
 * edges). */
static void fin_compact(fin_state *st)
{
  uint32_t n = st->n;
  et_node *nodes = st->nodes;
  uint32_t wp = 0, wc = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t ps = nodes[i].parents, pe = nodes[i + 1].parents;
    uint32_t cs = nodes[i].children, ce = nodes[i + 1].children;
    nodes[i].parents = wp;
    nodes[i].children = wc;
    for (uint32_t e = ps; e < pe; e++)
      if (st->parent_edges[e] != DEAD_EDGE)
        st->parent_edges[wp++] = st->parent_edges[e];
    for (uint32_t e = cs; e < ce; e++)
      if (st->child_index[e] != DEAD_EDGE)
        st->child_index[wc++] = st->child_index[e];
  }
  g_assert(wp == wc);
  nodes[n].parents = wp;
  nodes[n].children = wc;
  st->n_edges = wp;
}

/* Step 7: hands the arrays over to a new graph, trimmed to their exact
 * sizes; computation attributes sorted by node, the last record per node
 * kept.  O(nodes + edges + attributes log attributes). */
static et_graph *fin_hand_over(fin_state *st)
{
  et_builder *b = st->b;
  uint32_t n = st->n, n_edges = st->n_edges;
  et_graph *g = g_new0(et_graph, 1);
  g->n_nodes = n;
  g->nodes = g_renew(et_node, b->nodes, n + 1);
  b->nodes = NULL;
  g->parent_edges = g_renew(uint32_t, st->parent_edges, n_edges ? n_edges : 1);
  st->parent_edges = NULL;
  g->child_index = g_renew(uint32_t, st->child_index, n_edges ? n_edges : 1);
  st->child_index = NULL;
  g->n_comms = b->n_comms;
  g->comms = b->n_comms ? g_renew(et_comm, b->comms, b->n_comms) : (g_free(b->comms), NULL);
  b->comms = NULL;
  g->splits = b->splits->len ? g_memdup2(b->splits->data, (gsize)b->splits->len * sizeof(uint64_t)) : NULL;
  g->n_splits = b->splits->len;
  g->split_width = b->split_width;
  g->strings = g_realloc(b->strings, b->strings_len);
  g->strings_len = b->strings_len;
  b->strings = NULL;
  g->version = b->version;
  b->version = NULL;
  g->compute_slots = b->compute_slots;
  g->measured_step_ps = g->measured_start_ps = -1;
  g->source = b->source;
  b->source = NULL;
  g_array_sort(b->comp_attrs, comp_attr_cmp); /* stable enough: later duplicates are merged below */
  if (b->comp_attrs->len > 0) {
    /* Keep the last record per node (and the last module named). */
    et_comp_attr *ca = (et_comp_attr *)b->comp_attrs->data;
    uint32_t wca = 0;
    for (uint32_t k = 0; k < b->comp_attrs->len; k++) {
      if (wca > 0 && ca[wca - 1].node == ca[k].node) {
        uint32_t module = ca[k].module ? ca[k].module : ca[wca - 1].module;
        ca[wca - 1] = ca[k];
        ca[wca - 1].module = module;
      } else
        ca[wca++] = ca[k];
    }
    g->n_comp_attrs = wca;
    g->comp_attrs = g_memdup2(ca, (gsize)wca * sizeof(et_comp_attr));
  }
  g->dropped_dangling_ctrl = st->dropped_dangling;
  g->ignored_ctrl_edges = st->ignored_ctrl;
  g->merged_dup_edges = st->merged;
  g->dropped_cycle_edges = st->dropped_cycle;
  return g;
}

et_graph *et_builder_finish(et_builder *b, unsigned flags, GError **error)
{
  g_return_val_if_fail(b != NULL, NULL);
  et_graph *g = NULL;
  fin_state st = {.b = b, .flags = flags, .n = b->n_nodes};
  size_t kept = 0;
  if (b->limit_error != NULL) {
    g_set_error_literal(error, WISP_ERROR, WISP_ERROR_LIMIT, b->limit_error);
    goto out;
  }
  if (st.n == 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: the graph has no nodes (Chakra consumers need at least one node per rank)", b->source);
    goto out;
  }
  if (!fin_resolve_ids(&st, &kept, error))
    goto out;
  fin_parent_csr(&st, kept);
  fin_child_csr(&st);
  if (!fin_topo_sort(&st, error))
    goto out;
  if (st.dropped_cycle > 0)
    fin_compact(&st);
  g = fin_hand_over(&st);
out:
  g_free(st.pos_of);
  g_free(st.indeg);
  g_free(st.queue);
  g_free(st.parent_edges);
  g_free(st.child_index);
  et_builder_free(b);
  return g;
}
