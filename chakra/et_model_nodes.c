/* et_model_nodes.c: the node predicates the model readers share
 * (et_model_internal.h): data-parallel gradient reductions, TP
 * collectives, the CP
 * ring's transfers, and names equal but for their digits.  A leaf: calls
 * nothing in chakra/ but the graph's accessors.  Each O(name length) or
 * O(1).
 */
#include "config.h"
#include "chakra/et_model_internal.h"

/* Whether node i is a collective of a data-parallel group (not TP): a
 * gradient reduction. */
gboolean et_model_dp_coll(const et_graph *g, const et_layout *l, uint32_t i)
{
  const et_node *n = &g->nodes[i];
  if (n->type != ET_NODE_COMM_COLL)
    return FALSE;
  uint32_t grp = g->comms[n->comm].group;
  return grp != ET_GROUP_WORLD && grp < (uint32_t)l->n_groups && (l->group_dims[grp] & ET_DIM_BIT(ET_DIM_DP)) &&
         !(l->group_dims[grp] & ET_DIM_BIT(ET_DIM_TP));
}

/* Whether node i is a collective of a group spanning the TP dimension. */
gboolean et_model_tp_coll(const et_graph *g, const et_layout *l, uint32_t i)
{
  if (g->nodes[i].type != ET_NODE_COMM_COLL)
    return FALSE;
  uint32_t grp = g->comms[g->nodes[i].comm].group;
  return grp != ET_GROUP_WORLD && grp < (uint32_t)l->n_groups && (l->group_dims[grp] & ET_DIM_BIT(ET_DIM_TP));
}

/* Whether node i is a send or receive of a context-parallel group alone
 * (the ring attention's KV exchange), not the pipeline's (a world group
 * spans cp too). */
gboolean et_model_cp_p2p(const et_graph *g, const et_layout *l, uint32_t i)
{
  const et_node *n = &g->nodes[i];
  if (n->type != ET_NODE_COMM_SEND && n->type != ET_NODE_COMM_RECV)
    return FALSE;
  uint32_t grp = g->comms[n->comm].group;
  return grp != ET_GROUP_WORLD && grp < (uint32_t)l->n_groups && l->group_dims[grp] == ET_DIM_BIT(ET_DIM_CP);
}

/* Names equal but for their digits ("fwd_mb0_layer3" and "fwd_mb1_layer4"
 * name one step of a layer; so do kernels differing in a template number). */
gboolean et_model_name_eq(const char *a, const char *b)
{
  for (;;) {
    while (g_ascii_isdigit(*a))
      a++;
    while (g_ascii_isdigit(*b))
      b++;
    if (*a != *b)
      return FALSE;
    if (*a == '\0')
      return TRUE;
    a++;
    b++;
  }
}
