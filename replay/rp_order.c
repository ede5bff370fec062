/* rp_order.c: each rank's program order of its collectives per group, the
 * order in which the replay matches them (rp_internal.h, rp_order).
 *
 * A real job issues the collectives of one communicator in the order its
 * CPU thread called them (NCCL's requirement; PyTorch's process-group
 * sequence numbers, Kineto's launch order); every rank issues them in the
 * same order, and call k of a group on one rank meets call k on the
 * others.  A replay that numbered a rank's calls in the order their
 * dependencies happened to be met would let timing decide which calls
 * meet (two independent branches, each ending in a collective on the same
 * group, reach their calls in different orders on different ranks).  So
 * the replay numbers each collective by its place in the rank's program
 * order, computed here once per distinct graph, and holds a call whose
 * dependencies are met until the group's earlier calls on that rank have
 * been issued (rp_match.c).
 *
 * Program order: the graph's node order (the order the input lists its
 * nodes: Chakra's converters and wisp's frontends write them in execution
 * order) when every edge runs from a lower to a higher index; otherwise
 * the topological order that takes the lowest-index ready node first
 * (et_graph_topo_order, chakra/et_graph.h), which equals the node order
 * wherever the node order respects the edges, so the hold never waits on
 * a call that itself depends on the held one.  Only collectives the
 * replay matches count (COMM_COLL without ET_FLAG_REPLAY); their group is
 * the one the graph's record names (ranks sharing a graph translate
 * groups one to one, so the ordinals carry over).
 *
 * Cost: O(nodes + edges) when the node order respects the edges, else
 * O((nodes + edges) log nodes); memory 8 bytes per collective, plus
 * O(nodes) during the computation only.  A lookup is a binary search,
 * O(log collectives).
 */
#include "config.h"
#include "replay/rp_internal.h"

/* The collectives the replay matches (rp_sched.c hands only these to
 * rp_issue_collective). */
static gboolean matched_coll(const et_node *n)
{
  return n->type == ET_NODE_COMM_COLL && !(n->flags & ET_FLAG_REPLAY) && n->comm != ET_NONE;
}

/* Next ordinal of a group (raw et_comm.group) in the count table. */
static uint32_t next_ordinal(GHashTable *count, uint32_t group)
{
  gpointer key = GUINT_TO_POINTER(group == ET_GROUP_WORLD ? 0u : group + 1u);
  uint32_t v = GPOINTER_TO_UINT(g_hash_table_lookup(count, key));
  g_hash_table_insert(count, key, GUINT_TO_POINTER(v + 1));
  return v;
}

rp_order *rp_order_new(const et_graph *g)
{
  rp_order *o = g_new0(rp_order, 1);
  for (uint32_t i = 0; i < g->n_nodes; i++)
    o->n += matched_coll(&g->nodes[i]);
  o->node = g_new(uint32_t, o->n ? o->n : 1);
  o->ord = g_new(uint32_t, o->n ? o->n : 1);
  uint32_t k = 0;
  for (uint32_t i = 0; i < g->n_nodes; i++)
    if (matched_coll(&g->nodes[i]))
      o->node[k++] = i;
  if (o->n < 2)
    return o; /* one call per group at most: ordinal 0 */
  uint32_t *seq = et_graph_topo_order(g); /* NULL: the node order */
  o->reordered = seq != NULL;
  GHashTable *count = g_hash_table_new(g_direct_hash, g_direct_equal);
  k = 0;
  for (uint32_t x = 0; x < g->n_nodes; x++) {
    uint32_t i = seq ? seq[x] : x;
    if (!matched_coll(&g->nodes[i]))
      continue;
    uint32_t ord = next_ordinal(count, g->comms[g->nodes[i].comm].group);
    if (seq == NULL)
      o->ord[k++] = ord; /* node[] is ascending: the same walk */
    else
      o->ord[rp_order_find(o, i)] = ord;
  }
  g_hash_table_destroy(count);
  g_free(seq);
  return o;
}

uint32_t rp_order_find(const rp_order *o, uint32_t node)
{
  uint32_t lo = 0, hi = o->n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (o->node[mid] < node)
      lo = mid + 1;
    else
      hi = mid;
  }
  g_assert(lo < o->n && o->node[lo] == node);
  return lo;
}

uint32_t rp_order_of(const rp_order *o, uint32_t node)
{
  return o->n < 2 ? 0 : o->ord[rp_order_find(o, node)];
}

void rp_order_free(gpointer p)
{
  rp_order *o = p;
  if (o == NULL)
    return;
  g_free(o->node);
  g_free(o->ord);
  g_free(o);
}
