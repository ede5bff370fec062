/* topo.c: physical construction of topologies (routing is topo_route.c,
 * the accessors topo_query.c).
 *
 * Hierarchical topologies are built dimension by dimension: dimension d
 * joins, in each of its n_endpoints/size groups, the endpoints that differ
 * only in coordinate d, with links (and switches) of its kind.  Routing is
 * dimension-order: the source's coordinates are corrected one dimension at
 * a time, innermost first, each along its kind's shortest path, so a pair
 * that differs in several dimensions pays every tier it crosses.  Explicit
 * graphs route by BFS hop count with a stable ECMP hash of (src, dst).
 * Routes are cached per endpoint pair, so repeated topo_route calls cost
 * O(1) plus the caller's walk over the returned links.
 */
#include "config.h"
#include "topologies/topo_internal.h"

#include <string.h>

const char *topo_kind_name(topo_kind k)
{
  switch (k) {
  case TOPO_KIND_RING_UNI:
    return "ring_uni";
  case TOPO_KIND_RING:
    return "ring";
  case TOPO_KIND_FULLY_CONNECTED:
    return "fully_connected";
  case TOPO_KIND_SWITCH:
    return "switch";
  case TOPO_KIND_TORUS2D:
    return "torus2d";
  case TOPO_KIND_TORUS3D:
    return "torus3d";
  case TOPO_KIND_FAT_TREE:
    return "fat_tree";
  case TOPO_KIND_GRAPH:
    return "graph";
  }
  return "unknown";
}

/* ---- allocation ---- */

topo *topo_alloc(const char *source)
{
  topo *t = g_new0(topo, 1);
  t->source = g_strdup(source ? source : "<string>");
  t->links = g_array_new(FALSE, FALSE, sizeof(topo_link));
  t->max_links = TOPO_MAX_LINKS;
  t->arena = g_ptr_array_new_with_free_func(g_free);
  t->scratch = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  t->contiguous = TRUE;
  t->fabric_first = t->fabric_last = -1;
  return t;
}

void topo_free(topo *t)
{
  if (t == NULL)
    return;
  g_free(t->source);
  g_free(t->name);
  for (int d = 0; d < t->n_dims; d++) {
    g_free(t->dims[d].name);
    g_free(t->dims[d].fabric);
  }
  g_free(t->dims);
  if (t->node_names) {
    for (uint32_t i = 0; i < t->n_nodes; i++)
      g_free(t->node_names[i]);
    g_free(t->node_names);
  }
  g_array_free(t->links, TRUE);
  g_free(t->out_off);
  g_free(t->out_link);
  g_free(t->in_off);
  g_free(t->in_link);
  g_free(t->rank_ep);
  cfg_unref(t->config);
  g_free(t->cache);
  g_ptr_array_free(t->arena, TRUE);
  if (t->graph_dist)
    g_hash_table_destroy(t->graph_dist);
  g_array_free(t->scratch, TRUE);
  g_free(t);
}

void topo_add_link(topo *t, uint32_t src, uint32_t dst, wisp_bw_Bps bw, sim_time_ps lat, uint16_t tier)
{
  g_assert(src != dst && bw > 0 && lat >= 0);
  topo_link l = {.src = src, .dst = dst, .bw = bw, .latency = lat, .tier = tier};
  g_array_append_val(t->links, l);
}

/* ---- CSR adjacency ---- */

/* Builds out- (and optionally in-) adjacency in O(V + L) with two stable
 * counting sorts (by destination, then by source), so the out-links of
 * each node are ordered by destination, then link index, and
 * topo_find_link is a binary search. */
static void build_csr(topo *t, gboolean with_in)
{
  uint32_t n = t->n_nodes, m = t->links->len;
  const topo_link *L = (const topo_link *)t->links->data;
  uint32_t *by_dst = g_new(uint32_t, m ? m : 1);
  t->in_off = g_new0(uint32_t, (gsize)n + 1);
  for (uint32_t i = 0; i < m; i++)
    t->in_off[L[i].dst + 1]++;
  for (uint32_t i = 0; i < n; i++)
    t->in_off[i + 1] += t->in_off[i];
  uint32_t *fill = g_memdup2(t->in_off, sizeof(uint32_t) * n);
  for (uint32_t i = 0; i < m; i++)
    by_dst[fill[L[i].dst]++] = i;
  g_free(fill);
  t->out_off = g_new0(uint32_t, (gsize)n + 1);
  t->out_link = g_new(uint32_t, m ? m : 1);
  for (uint32_t i = 0; i < m; i++)
    t->out_off[L[i].src + 1]++;
  for (uint32_t i = 0; i < n; i++)
    t->out_off[i + 1] += t->out_off[i];
  fill = g_memdup2(t->out_off, sizeof(uint32_t) * n);
  for (uint32_t k = 0; k < m; k++)
    t->out_link[fill[L[by_dst[k]].src]++] = by_dst[k];
  g_free(fill);
  if (with_in) {
    t->in_link = by_dst; /* grouped by destination, link order inside */
  } else {
    g_free(by_dst);
    g_free(t->in_off);
    t->in_off = NULL;
  }
}

uint32_t topo_find_link(const topo *t, uint32_t u, uint32_t v)
{
  const topo_link *L = (const topo_link *)t->links->data;
  uint32_t lo = t->out_off[u], hi = t->out_off[u + 1];
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (L[t->out_link[mid]].dst < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < t->out_off[u + 1] && L[t->out_link[lo]].dst == v)
    return t->out_link[lo];
  return UINT32_MAX;
}

/* ---- hierarchical construction ---- */

/* Directed links of one ring of n members: n forward links when n >= 2,
 * plus n backward links when n >= 3 (a 2-member ring's two directions are
 * already its forward links). */
static uint64_t ring_links(int n, gboolean bidir)
{
  if (n < 2)
    return 0;
  return (uint64_t)n * (bidir && n >= 3 ? 2 : 1);
}

uint64_t topo_dim_link_count(const topo_dim *d)
{
  uint64_t n = (uint64_t)d->size, per_group = 0;
  if (d->fabric != NULL) /* a level of a shared fabric: 2 links per endpoint (port or lane) */
    return 2 * n * d->n_groups;
  switch (d->kind) {
  case TOPO_KIND_RING_UNI:
    per_group = ring_links(d->size, FALSE);
    break;
  case TOPO_KIND_RING:
    per_group = ring_links(d->size, TRUE);
    break;
  case TOPO_KIND_FULLY_CONNECTED:
    per_group = n * (n - 1);
    break;
  case TOPO_KIND_SWITCH:
    per_group = n >= 2 ? 2 * n : 0;
    break;
  case TOPO_KIND_TORUS2D:
  case TOPO_KIND_TORUS3D:
    for (int a = 0; a < d->n_axes; a++)
      per_group += (n / (uint64_t)d->shape[a]) * ring_links(d->shape[a], TRUE);
    break;
  case TOPO_KIND_FAT_TREE:
    if (n >= 2)
      per_group = 2 * n + (d->leaves >= 2 ? 2 * (uint64_t)d->leaves * (uint64_t)d->spines : 0);
    break;
  case TOPO_KIND_GRAPH:
    g_assert_not_reached();
  }
  return per_group * d->n_groups;
}

/* Switch of fabric level d above endpoint e. */
static inline uint32_t fabric_switch(const topo_dim *d, uint32_t e)
{
  return d->switch_base + e / d->fabric_span;
}

/* A level of a shared fabric: for every endpoint, its port to the level-0
 * switch (level 0) or its lane from the switch below to this level's
 * switch, up then down, so that lane_base + 2e (+1) finds them in O(1). */
static void build_fabric_level(topo *t, int di)
{
  topo_dim *d = &t->dims[di];
  d->lane_base = t->links->len;
  for (uint32_t e = 0; e < t->n_endpoints; e++) {
    uint32_t below = d->fabric_level == 0 ? e : fabric_switch(&t->dims[di - 1], e);
    topo_add_link(t, below, fabric_switch(d, e), d->bw, d->latency, (uint16_t)di);
    topo_add_link(t, fabric_switch(d, e), below, d->bw, d->latency, (uint16_t)di);
  }
}

static void build_dim(topo *t, int di)
{
  topo_dim *d = &t->dims[di];
  uint16_t tier = (uint16_t)di;
  int n = d->size;
  if (d->fabric != NULL) {
    build_fabric_level(t, di);
    return;
  }
  for (uint32_t g = 0; g < d->n_groups; g++) {
    switch (d->kind) {
    case TOPO_KIND_RING_UNI:
    case TOPO_KIND_RING:
      if (n >= 2)
        for (int i = 0; i < n; i++)
          topo_add_link(t, topo_group_ep(d, g, i), topo_group_ep(d, g, (i + 1) % n), d->bw, d->latency, tier);
      if (d->kind == TOPO_KIND_RING && n >= 3)
        for (int i = 0; i < n; i++)
          topo_add_link(t, topo_group_ep(d, g, (i + 1) % n), topo_group_ep(d, g, i), d->bw, d->latency, tier);
      break;
    case TOPO_KIND_FULLY_CONNECTED:
      for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
          if (i != j)
            topo_add_link(t, topo_group_ep(d, g, i), topo_group_ep(d, g, j), d->bw, d->latency, tier);
      break;
    case TOPO_KIND_SWITCH:
      if (n >= 2) {
        uint32_t sw = d->switch_base + g;
        for (int i = 0; i < n; i++) {
          topo_add_link(t, topo_group_ep(d, g, i), sw, d->bw, d->latency, tier);
          topo_add_link(t, sw, topo_group_ep(d, g, i), d->bw, d->latency, tier);
        }
      }
      break;
    case TOPO_KIND_TORUS2D:
    case TOPO_KIND_TORUS3D:
      for (int a = 0; a < d->n_axes; a++) {
        int k = d->shape[a];
        if (k < 2)
          continue;
        for (int i = 0; i < n; i++) {
          int c[3], c2[3];
          topo_torus_coords(d, (uint32_t)i, c);
          memcpy(c2, c, sizeof c);
          c2[a] = (c[a] + 1) % k;
          uint32_t u = topo_group_ep(d, g, (uint32_t)i), v = topo_group_ep(d, g, topo_torus_index(d, c2));
          topo_add_link(t, u, v, d->bw, d->latency, tier);
          if (k >= 3)
            topo_add_link(t, v, u, d->bw, d->latency, tier);
        }
      }
      break;
    case TOPO_KIND_FAT_TREE:
      if (n >= 2) {
        int h = n / d->leaves;
        uint32_t leaf0 = d->switch_base + g * d->switches_per_group;
        uint32_t spine0 = leaf0 + (uint32_t)d->leaves;
        for (int i = 0; i < n; i++) {
          topo_add_link(t, topo_group_ep(d, g, i), leaf0 + (uint32_t)(i / h), d->bw, d->latency, tier);
          topo_add_link(t, leaf0 + (uint32_t)(i / h), topo_group_ep(d, g, i), d->bw, d->latency, tier);
        }
        if (d->leaves >= 2)
          for (int l = 0; l < d->leaves; l++)
            for (int s = 0; s < d->spines; s++) {
              topo_add_link(t, leaf0 + (uint32_t)l, spine0 + (uint32_t)s, d->up_bw, d->latency, tier);
              topo_add_link(t, spine0 + (uint32_t)s, leaf0 + (uint32_t)l, d->up_bw, d->latency, tier);
            }
      }
      break;
    case TOPO_KIND_GRAPH:
      g_assert_not_reached();
    }
  }
}

gboolean topo_build_dims(topo *t, GError **error)
{
  g_assert(t->n_dims >= 1);
  uint64_t e = 1;
  for (int d = 0; d < t->n_dims; d++) {
    e *= (uint64_t)t->dims[d].size;
    if (e > TOPO_MAX_ENDPOINTS) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_LIMIT,
                  "%s:%d: the dimensions give more than %u endpoints (dimension '%s' brings the product past the "
                  "limit); reduce the sizes",
                  t->source, t->dims[d].line, TOPO_MAX_ENDPOINTS, t->dims[d].name);
      return FALSE;
    }
  }
  t->n_endpoints = (uint32_t)e;
  uint32_t stride = 1;
  uint64_t nodes = e, links = 0;
  for (int di = 0; di < t->n_dims; di++) {
    topo_dim *d = &t->dims[di];
    d->stride = stride;
    stride *= (uint32_t)d->size;
    d->n_groups = t->n_endpoints / (uint32_t)d->size;
    d->switch_base = (uint32_t)nodes;
    d->switches_per_group = 0;
    if (d->size >= 2 && d->kind == TOPO_KIND_SWITCH)
      d->switches_per_group = 1;
    if (d->size >= 2 && d->kind == TOPO_KIND_FAT_TREE)
      d->switches_per_group = (uint32_t)d->leaves + (d->leaves >= 2 ? (uint32_t)d->spines : 0);
    if (d->fabric != NULL) {
      /* One switch per fabric_span endpoints, whatever the size (a level of
       * size 1 still joins the inner dimensions' endpoints). */
      d->fabric_span = d->stride * (uint32_t)d->size;
      nodes += t->n_endpoints / d->fabric_span;
    } else {
      nodes += (uint64_t)d->switches_per_group * d->n_groups;
    }
    links += topo_dim_link_count(d);
    if (nodes > UINT32_MAX / 2 || links > t->max_links) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_LIMIT,
                  "%s:%d: dimension '%s' makes the topology too large (%" G_GUINT64_FORMAT " links, %" G_GUINT64_FORMAT
                  " nodes, about %" G_GUINT64_FORMAT " MiB; the limit is %" G_GUINT64_FORMAT
                  " links); reduce its size or use a switch kind",
                  t->source, d->line, d->name, links, nodes, links * TOPO_LINK_BYTES >> 20, t->max_links);
      return FALSE;
    }
  }
  t->n_nodes = (uint32_t)nodes;
  /* The link count is known exactly, so the array is allocated once at its
   * final size instead of doubling (which would briefly need 3x). */
  g_array_free(t->links, TRUE);
  t->links = g_array_sized_new(FALSE, FALSE, sizeof(topo_link), (guint)links);
  for (int di = 0; di < t->n_dims; di++)
    build_dim(t, di);
  g_assert((uint64_t)t->links->len == links);
  build_csr(t, FALSE);
  return TRUE;
}

/* Marks the nodes reachable from `start` following out-links (or in-links
 * when reverse) and returns how many endpoints were reached. O(V + E). */
static uint32_t reach_endpoints(const topo *t, uint32_t start, gboolean reverse)
{
  const topo_link *L = (const topo_link *)t->links->data;
  guint8 *seen = g_new0(guint8, t->n_nodes);
  uint32_t *queue = g_new(uint32_t, t->n_nodes);
  uint32_t head = 0, tail = 0, eps = 0;
  seen[start] = 1;
  queue[tail++] = start;
  while (head < tail) {
    uint32_t u = queue[head++];
    if (u < t->n_endpoints)
      eps++;
    const uint32_t *off = reverse ? t->in_off : t->out_off;
    const uint32_t *lk = reverse ? t->in_link : t->out_link;
    for (uint32_t k = off[u]; k < off[u + 1]; k++) {
      uint32_t v = reverse ? L[lk[k]].src : L[lk[k]].dst;
      if (!seen[v]) {
        seen[v] = 1;
        queue[tail++] = v;
      }
    }
  }
  g_free(seen);
  g_free(queue);
  return eps;
}

gboolean topo_build_graph(topo *t, GError **error)
{
  g_assert(t->n_endpoints >= 1);
  build_csr(t, TRUE);
  /* Every endpoint reaches endpoint 0 and is reached from it, hence every
   * endpoint pair is connected (strong connectivity among endpoints). */
  if (reach_endpoints(t, 0, FALSE) != t->n_endpoints || reach_endpoints(t, 0, TRUE) != t->n_endpoints) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: the graph is not connected: some endpoints cannot reach endpoint '%s' or cannot be reached "
                "from it; add links (remember `duplex: false` links go one way only)",
                t->source, t->node_names[0]);
    return FALSE;
  }
  t->n_dims = 1;
  t->dims = g_new0(topo_dim, 1);
  t->dims[0].name = g_strdup("graph");
  t->dims[0].kind = TOPO_KIND_GRAPH;
  t->dims[0].size = (int)t->n_endpoints;
  t->dims[0].stride = 1;
  t->dims[0].n_groups = 1;
  t->graph_dist = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
  return TRUE;
}

gboolean topo_set_placement(topo *t, int n_ranks, const uint32_t *placement, int line, GError **error)
{
  if (n_ranks < 1 || (uint32_t)n_ranks > t->n_endpoints) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s:%d: %d ranks do not fit on %u endpoints; use at most one rank per endpoint", t->source, line,
                n_ranks, t->n_endpoints);
    return FALSE;
  }
  t->n_ranks = n_ranks;
  t->rank_ep = g_new(uint32_t, n_ranks);
  if (placement == NULL) {
    for (int r = 0; r < n_ranks; r++)
      t->rank_ep[r] = (uint32_t)r;
    t->contiguous = TRUE;
    return TRUE;
  }
  int *owner = g_new(int, t->n_endpoints);
  for (uint32_t i = 0; i < t->n_endpoints; i++)
    owner[i] = -1;
  t->contiguous = TRUE;
  for (int r = 0; r < n_ranks; r++) {
    uint32_t ep = placement[r];
    if (ep >= t->n_endpoints) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s:%d: placement of rank %d is endpoint %u, but endpoints are numbered 0..%u", t->source, line, r,
                  ep, t->n_endpoints - 1);
      g_free(owner);
      return FALSE;
    }
    if (owner[ep] >= 0) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s:%d: ranks %d and %d are both placed on endpoint %u; give each rank its own endpoint", t->source,
                  line, owner[ep], r, ep);
      g_free(owner);
      return FALSE;
    }
    owner[ep] = r;
    t->rank_ep[r] = ep;
    if (ep != (uint32_t)r)
      t->contiguous = FALSE;
  }
  g_free(owner);
  return TRUE;
}
