/* topo_query.c: read-only accessors of a built topology (ranks, nodes,
 * links, tiers, coordinates, names).  Each O(1) but the node label
 * (O(tiers)).
 */
#include "config.h"
#include "topologies/topo_internal.h"

#include <string.h>

int topo_n_ranks(const topo *t)
{
  return t->n_ranks;
}

uint32_t topo_n_nodes(const topo *t)
{
  return t->n_nodes;
}

uint32_t topo_n_links(const topo *t)
{
  return t->links->len;
}

const topo_link *topo_get_link(const topo *t, uint32_t link)
{
  g_assert(link < t->links->len);
  return &g_array_index(t->links, topo_link, link);
}

wisp_bw_Bps topo_link_rate(const topo *t, const topo_link *l)
{
  wisp_bw_Bps stream = t->format == TOPO_FORMAT_GRAPH ? 0 : t->dims[l->tier].stream_bw;
  return stream > 0 && stream < l->bw ? stream : l->bw;
}

const cfg_doc *topo_config(const topo *t)
{
  return t->config;
}

wisp_bw_Bps topo_dim_bw(const topo *t, int dim)
{
  g_assert(dim >= 0 && dim < t->n_dims);
  return t->dims[dim].bw;
}

gboolean topo_is_graph(const topo *t)
{
  return t->format == TOPO_FORMAT_GRAPH;
}

int topo_node_dims(const topo *t)
{
  if (t->format != TOPO_FORMAT_DIMS)
    return 0;
  if (t->node_dims > 0)
    return t->node_dims;
  return t->n_dims >= 2 ? t->n_dims - 1 : t->n_dims;
}

int topo_n_dims(const topo *t)
{
  return t->n_dims;
}

const char *topo_dim_name(const topo *t, int dim)
{
  g_assert(dim >= 0 && dim < t->n_dims);
  return t->dims[dim].name;
}

topo_kind topo_dim_kind(const topo *t, int dim)
{
  g_assert(dim >= 0 && dim < t->n_dims);
  return t->dims[dim].kind;
}

int topo_dim_size(const topo *t, int dim)
{
  g_assert(dim >= 0 && dim < t->n_dims);
  return t->dims[dim].size;
}

int topo_dim_shape(const topo *t, int dim, int shape[3])
{
  g_assert(dim >= 0 && dim < t->n_dims);
  const topo_dim *d = &t->dims[dim];
  if (d->kind == TOPO_KIND_TORUS2D || d->kind == TOPO_KIND_TORUS3D) {
    for (int a = 0; a < d->n_axes; a++)
      shape[a] = d->shape[a];
    return d->n_axes;
  }
  shape[0] = d->size;
  return 1;
}

int topo_rank_coord(const topo *t, int rank, int dim)
{
  g_assert(rank >= 0 && rank < t->n_ranks && dim >= 0 && dim < t->n_dims);
  return (int)topo_ep_coord(&t->dims[dim], t->rank_ep[rank]);
}

uint32_t topo_n_endpoints(const topo *t)
{
  return t->n_endpoints;
}

uint32_t topo_rank_endpoint(const topo *t, int rank)
{
  g_assert(rank >= 0 && rank < t->n_ranks);
  return t->rank_ep[rank];
}

gboolean topo_node_is_endpoint(const topo *t, uint32_t node)
{
  g_assert(node < t->n_nodes);
  return node < t->n_endpoints;
}

const char *topo_name(const topo *t)
{
  return t->name;
}

const char *topo_source(const topo *t)
{
  return t->source;
}

char *topo_node_label(const topo *t, uint32_t n)
{
  if (t->node_names)
    return g_strdup(t->node_names[n]);
  if (n < t->n_endpoints)
    return g_strdup_printf("ep%u", n);
  for (int di = 0; di < t->n_dims; di++) {
    const topo_dim *d = &t->dims[di];
    if (d->fabric != NULL) {
      uint32_t count = t->n_endpoints / d->fabric_span;
      if (n >= d->switch_base && n < d->switch_base + count)
        return g_strdup_printf("%s.%s.sw%u", d->fabric, d->name, n - d->switch_base);
      continue;
    }
    uint32_t count = d->switches_per_group * d->n_groups;
    if (n >= d->switch_base && n < d->switch_base + count) {
      uint32_t g = (n - d->switch_base) / d->switches_per_group;
      uint32_t k = (n - d->switch_base) % d->switches_per_group;
      if (d->kind == TOPO_KIND_FAT_TREE)
        return k < (uint32_t)d->leaves ? g_strdup_printf("%s.g%u.leaf%u", d->name, g, k)
                                       : g_strdup_printf("%s.g%u.spine%u", d->name, g, k - (uint32_t)d->leaves);
      return g_strdup_printf("%s.sw%u", d->name, g);
    }
  }
  g_assert_not_reached();
  return NULL;
}
