/* et_graph.c: the compact graph's lifetime and queries (free, copy,
 * memory, compute attributes, fixed idle time) and the name tables of
 * Chakra enums.  The builder that makes graphs is et_builder.c, the
 * workload of ranks and groups et_workload.c.
 */
#include "config.h"
#include "chakra/et_graph.h"

#include <string.h>

/* ---- names ---- */

const char *et_node_type_name(et_node_type t)
{
  static const char *const names[] = {
    "INVALID_NODE", "METADATA_NODE", "MEM_LOAD_NODE", "MEM_STORE_NODE",
    "COMP_NODE", "COMM_SEND_NODE", "COMM_RECV_NODE", "COMM_COLL_NODE",
  };
  if ((unsigned)t < G_N_ELEMENTS(names))
    return names[t];
  return "UNKNOWN_NODE";
}

/* The one table of collective facts (et_graph.h, et_coll_info).  Order:
 * Chakra's CollectiveCommType values, then wisp's extension and NONE. */
static const et_coll_info coll_infos[] = {
  /* type, name, short name, rooted, reduces, size rule, busbw factor */
  { ET_COLL_ALL_REDUCE, "ALL_REDUCE", "all_reduce", FALSE, TRUE, ET_COLL_SIZE_WHOLE, ET_COLL_BUS_TWICE_NM1 },
  { ET_COLL_REDUCE, "REDUCE", "reduce", TRUE, TRUE, ET_COLL_SIZE_WHOLE, ET_COLL_BUS_ONE },
  { ET_COLL_ALL_GATHER, "ALL_GATHER", "all_gather", FALSE, FALSE, ET_COLL_SIZE_PIECE, ET_COLL_BUS_NM1 },
  { ET_COLL_GATHER, "GATHER", "gather", TRUE, FALSE, ET_COLL_SIZE_PIECE, ET_COLL_BUS_NM1 },
  { ET_COLL_SCATTER, "SCATTER", "scatter", TRUE, FALSE, ET_COLL_SIZE_PIECE, ET_COLL_BUS_NM1 },
  { ET_COLL_BROADCAST, "BROADCAST", "broadcast", TRUE, FALSE, ET_COLL_SIZE_WHOLE, ET_COLL_BUS_ONE },
  { ET_COLL_ALL_TO_ALL, "ALL_TO_ALL", "all_to_all", FALSE, FALSE, ET_COLL_SIZE_WHOLE, ET_COLL_BUS_NM1 },
  { ET_COLL_REDUCE_SCATTER, "REDUCE_SCATTER", "reduce_scatter", FALSE, TRUE, ET_COLL_SIZE_WHOLE, ET_COLL_BUS_NM1 },
  { ET_COLL_REDUCE_SCATTER_BLOCK, "REDUCE_SCATTER_BLOCK", "reduce_scatter_block", FALSE, TRUE, ET_COLL_SIZE_WHOLE,
    ET_COLL_BUS_NM1 },
  { ET_COLL_BARRIER, "BARRIER", "barrier", FALSE, FALSE, ET_COLL_SIZE_NONE, ET_COLL_BUS_ZERO },
  { ET_COLL_ALL_TO_ALLV, "ALL_TO_ALLV", "all_to_allv", FALSE, FALSE, ET_COLL_SIZE_WHOLE, ET_COLL_BUS_NM1 },
  { ET_COLL_NONE, "NONE", "none", FALSE, FALSE, ET_COLL_SIZE_NONE, ET_COLL_BUS_ZERO },
};

const et_coll_info *et_coll_info_of(et_coll_type c)
{
  for (size_t i = 0; i < G_N_ELEMENTS(coll_infos); i++)
    if (coll_infos[i].type == c)
      return &coll_infos[i];
  return NULL;
}

gboolean et_coll_rooted(et_coll_type c)
{
  const et_coll_info *ci = et_coll_info_of(c);
  return ci != NULL && ci->rooted;
}

gboolean et_coll_reduces(et_coll_type c)
{
  const et_coll_info *ci = et_coll_info_of(c);
  return ci != NULL && ci->reduces;
}

const char *et_coll_type_name(et_coll_type c)
{
  const et_coll_info *ci = et_coll_info_of(c);
  return ci ? ci->name : "UNKNOWN";
}

const char *et_coll_short_name(et_coll_type c)
{
  const et_coll_info *ci = et_coll_info_of(c);
  return ci ? ci->short_name : "unknown";
}

/* Accepts the short names above, case-insensitively; "none" is rejected
 * because it is not a collective a user can ask for. */
gboolean et_coll_from_short_name(const char *s, et_coll_type *out)
{
  g_return_val_if_fail(s != NULL && out != NULL, FALSE);
  for (size_t i = 0; i < G_N_ELEMENTS(coll_infos); i++) {
    if (coll_infos[i].type != ET_COLL_NONE && g_ascii_strcasecmp(s, coll_infos[i].short_name) == 0) {
      *out = coll_infos[i].type;
      return TRUE;
    }
  }
  return FALSE;
}

/* ---- graph ---- */

void et_graph_free(et_graph *g)
{
  if (g == NULL)
    return;
  g_free(g->nodes);
  g_free(g->parent_edges);
  g_free(g->child_index);
  g_free(g->comms);
  g_free(g->splits);
  g_free(g->strings);
  g_free(g->version);
  g_free(g->source);
  g_free(g->comp_attrs);
  g_free(g);
}

et_graph *et_graph_copy(const et_graph *g)
{
  g_return_val_if_fail(g != NULL, NULL);
  et_graph *c = g_new(et_graph, 1);
  *c = *g;
  size_t n_edges = g->nodes[g->n_nodes].parents, n_child = g->nodes[g->n_nodes].children;
  c->nodes = g_memdup2(g->nodes, sizeof(et_node) * ((size_t)g->n_nodes + 1));
  c->parent_edges = n_edges ? g_memdup2(g->parent_edges, sizeof(uint32_t) * n_edges) : NULL;
  c->child_index = n_child ? g_memdup2(g->child_index, sizeof(uint32_t) * n_child) : NULL;
  c->comms = g->n_comms ? g_memdup2(g->comms, sizeof(et_comm) * g->n_comms) : NULL;
  c->splits = g->n_splits ? g_memdup2(g->splits, sizeof(uint64_t) * g->n_splits) : NULL;
  c->strings = g->strings ? g_memdup2(g->strings, g->strings_len ? g->strings_len : 1) : NULL;
  c->version = g_strdup(g->version);
  c->source = g_strdup(g->source);
  c->comp_attrs = g->n_comp_attrs ? g_memdup2(g->comp_attrs, sizeof(et_comp_attr) * g->n_comp_attrs) : NULL;
  return c;
}

size_t et_graph_memory_bytes(const et_graph *g)
{
  g_return_val_if_fail(g != NULL, 0);
  size_t n_edges = g->nodes[g->n_nodes].parents;
  size_t bytes = sizeof(*g);
  bytes += (size_t)(g->n_nodes + 1) * sizeof(et_node);
  bytes += n_edges * sizeof(uint32_t) * 2; /* parent entries and child entries are equal in number */
  bytes += (size_t)g->n_comms * sizeof(et_comm);
  bytes += (size_t)g->n_comp_attrs * sizeof(et_comp_attr);
  bytes += (size_t)g->n_splits * sizeof(uint64_t);
  bytes += g->version ? strlen(g->version) + 1 : 0;
  return bytes;
}

const et_comp_attr *et_graph_comp_attr(const et_graph *g, uint32_t node)
{
  uint32_t lo = 0, hi = g->n_comp_attrs;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (g->comp_attrs[mid].node < node)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < g->n_comp_attrs && g->comp_attrs[lo].node == node)
    return &g->comp_attrs[lo];
  return NULL;
}

const char *et_graph_module(const et_graph *g, uint32_t node)
{
  const et_comp_attr *ca = g->n_comp_attrs ? et_graph_comp_attr(g, node) : NULL;
  return ca && ca->module ? g->strings + ca->module : NULL;
}

void et_graph_fixed_idle(const et_graph *g, sim_time_ps *launch_lag_ps, sim_time_ps *unexplained_ps)
{
  sim_time_ps lag = 0, all = 0;
  for (uint32_t i = 0; i < g->n_nodes; i++) {
    const et_node *n = &g->nodes[i];
    if (n->type == ET_NODE_COMP && (n->flags & ET_FLAG_DELAY) && !(n->flags & ET_FLAG_CPU_OP))
      all += n->duration_ps;
    if (!(n->flags & ET_FLAG_CPU_OP))
      continue;
    for (uint32_t e = n->children; e < g->nodes[i + 1].children; e++) {
      uint32_t ci = g->child_index[e];
      const et_node *c = &g->nodes[ci];
      if (c->type == ET_NODE_COMP && (c->flags & ET_FLAG_DELAY) && !(c->flags & ET_FLAG_CPU_OP) &&
          et_node_n_parents(g, ci) == 1)
        lag += c->duration_ps;
    }
  }
  *launch_lag_ps = lag;
  *unexplained_ps = all - lag;
}

/* Min-heap of node indices, for et_graph_topo_order: push and pop
 * O(log n). */
static void heap_push(uint32_t *h, uint32_t *n, uint32_t v)
{
  uint32_t i = (*n)++;
  while (i > 0 && h[(i - 1) / 2] > v) {
    h[i] = h[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h[i] = v;
}

static uint32_t heap_pop(uint32_t *h, uint32_t *n)
{
  uint32_t top = h[0], v = h[--(*n)], i = 0;
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= *n)
      break;
    if (c + 1 < *n && h[c + 1] < h[c])
      c++;
    if (h[c] >= v)
      break;
    h[i] = h[c];
    i = c;
  }
  if (*n > 0)
    h[i] = v;
  return top;
}

uint32_t *et_graph_topo_order(const et_graph *g)
{
  gboolean sorted = TRUE;
  for (uint32_t i = 0; i < g->n_nodes && sorted; i++)
    for (uint32_t e = g->nodes[i].parents; e < g->nodes[i + 1].parents; e++)
      if (ET_EDGE_INDEX(g->parent_edges[e]) >= i)
        sorted = FALSE;
  if (sorted)
    return NULL;
  uint32_t n = g->n_nodes, hn = 0, k = 0;
  uint32_t *indeg = g_new(uint32_t, n), *heap = g_new(uint32_t, n), *order = g_new(uint32_t, n);
  for (uint32_t i = 0; i < n; i++) {
    indeg[i] = et_node_n_parents(g, i);
    if (indeg[i] == 0)
      heap_push(heap, &hn, i);
  }
  while (hn > 0) {
    uint32_t v = heap_pop(heap, &hn);
    order[k++] = v;
    for (uint32_t e = g->nodes[v].children; e < g->nodes[v + 1].children; e++)
      if (--indeg[g->child_index[e]] == 0)
        heap_push(heap, &hn, g->child_index[e]);
  }
  g_assert(k == n); /* graphs are acyclic by construction */
  g_free(indeg);
  g_free(heap);
  return order;
}
