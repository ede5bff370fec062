/* topo.c: physical construction of topologies, routing and accessors.
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

/* Global endpoint of local index i in group g of dimension d. */
static inline uint32_t group_ep(const topo_dim *d, uint32_t g, uint32_t i)
{
  uint32_t low = g % d->stride, high = g / d->stride;
  return low + high * d->stride * (uint32_t)d->size + i * d->stride;
}

static inline uint32_t ep_group(const topo_dim *d, uint32_t ep)
{
  return ep % d->stride + (ep / (d->stride * (uint32_t)d->size)) * d->stride;
}

static inline uint32_t ep_coord(const topo_dim *d, uint32_t ep)
{
  return (ep / d->stride) % (uint32_t)d->size;
}

/* Local index inside a torus group from axis coordinates, axis 0 fastest. */
static uint32_t torus_index(const topo_dim *d, const int *c)
{
  uint32_t i = 0;
  for (int a = d->n_axes - 1; a >= 0; a--)
    i = i * (uint32_t)d->shape[a] + (uint32_t)c[a];
  return i;
}

static void torus_coords(const topo_dim *d, uint32_t i, int *c)
{
  for (int a = 0; a < d->n_axes; a++) {
    c[a] = (int)(i % (uint32_t)d->shape[a]);
    i /= (uint32_t)d->shape[a];
  }
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
          topo_add_link(t, group_ep(d, g, i), group_ep(d, g, (i + 1) % n), d->bw, d->latency, tier);
      if (d->kind == TOPO_KIND_RING && n >= 3)
        for (int i = 0; i < n; i++)
          topo_add_link(t, group_ep(d, g, (i + 1) % n), group_ep(d, g, i), d->bw, d->latency, tier);
      break;
    case TOPO_KIND_FULLY_CONNECTED:
      for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
          if (i != j)
            topo_add_link(t, group_ep(d, g, i), group_ep(d, g, j), d->bw, d->latency, tier);
      break;
    case TOPO_KIND_SWITCH:
      if (n >= 2) {
        uint32_t sw = d->switch_base + g;
        for (int i = 0; i < n; i++) {
          topo_add_link(t, group_ep(d, g, i), sw, d->bw, d->latency, tier);
          topo_add_link(t, sw, group_ep(d, g, i), d->bw, d->latency, tier);
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
          torus_coords(d, (uint32_t)i, c);
          memcpy(c2, c, sizeof c);
          c2[a] = (c[a] + 1) % k;
          uint32_t u = group_ep(d, g, (uint32_t)i), v = group_ep(d, g, torus_index(d, c2));
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
          topo_add_link(t, group_ep(d, g, i), leaf0 + (uint32_t)(i / h), d->bw, d->latency, tier);
          topo_add_link(t, leaf0 + (uint32_t)(i / h), group_ep(d, g, i), d->bw, d->latency, tier);
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

/* ---- routing ---- */

/* Stable 64-bit mix (splitmix64 finaliser) for ECMP choices. */
static uint64_t mix64(uint64_t x)
{
  x += UINT64_C(0x9E3779B97F4A7C15);
  x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
  return x ^ (x >> 31);
}

static void hop(const topo *t, uint32_t u, uint32_t v, GArray *out)
{
  uint32_t l = topo_find_link(t, u, v);
  g_assert(l != UINT32_MAX);
  g_array_append_val(out, l);
}

/* Walks a ring of n members from local a to local b along the shorter
 * direction (ties and unidirectional rings: positive), appending one link
 * per step; ep(ctx, i) maps a local index to its global endpoint.  Returns
 * b.  O(n) at worst, O(distance) in general. */
static int ring_walk(const topo *t, int n, gboolean bidir, int a, int b, uint32_t (*ep)(const void *, int),
                     const void *ctx, GArray *out)
{
  int fwd = ((b - a) % n + n) % n;
  int dir = (!bidir || fwd <= n - fwd) ? 1 : -1;
  int steps = dir == 1 ? fwd : n - fwd;
  int cur = a;
  for (int s = 0; s < steps; s++) {
    int next = ((cur + dir) % n + n) % n;
    hop(t, ep(ctx, cur), ep(ctx, next), out);
    cur = next;
  }
  return cur;
}

typedef struct {
  const topo_dim *d;
  uint32_t g;
  int axis;
  int c[3];
} walk_ctx;

static uint32_t walk_ring_ep(const void *p, int i)
{
  const walk_ctx *w = p;
  return group_ep(w->d, w->g, (uint32_t)i);
}

static uint32_t walk_torus_ep(const void *p, int i)
{
  const walk_ctx *w = p;
  int c[3];
  memcpy(c, w->c, sizeof c);
  c[w->axis] = i;
  return group_ep(w->d, w->g, torus_index(w->d, c));
}

/* Appends the links from endpoint u to endpoint v, which differ only in
 * dimension d's coordinate. */
static void route_in_dim(const topo *t, const topo_dim *d, uint32_t u, uint32_t v, GArray *out)
{
  uint32_t g = ep_group(d, u);
  int a = (int)ep_coord(d, u), b = (int)ep_coord(d, v);
  walk_ctx w = {.d = d, .g = g};
  switch (d->kind) {
  case TOPO_KIND_RING_UNI:
  case TOPO_KIND_RING:
    ring_walk(t, d->size, d->kind == TOPO_KIND_RING, a, b, walk_ring_ep, &w, out);
    break;
  case TOPO_KIND_FULLY_CONNECTED:
    hop(t, u, v, out);
    break;
  case TOPO_KIND_SWITCH:
    hop(t, u, d->switch_base + g, out);
    hop(t, d->switch_base + g, v, out);
    break;
  case TOPO_KIND_TORUS2D:
  case TOPO_KIND_TORUS3D: {
    int cb[3];
    torus_coords(d, (uint32_t)a, w.c);
    torus_coords(d, (uint32_t)b, cb);
    for (int ax = 0; ax < d->n_axes; ax++) {
      if (w.c[ax] == cb[ax])
        continue;
      w.axis = ax;
      w.c[ax] = ring_walk(t, d->shape[ax], TRUE, w.c[ax], cb[ax], walk_torus_ep, &w, out);
    }
    break;
  }
  case TOPO_KIND_FAT_TREE: {
    int h = d->size / d->leaves;
    uint32_t leaf0 = d->switch_base + g * d->switches_per_group;
    uint32_t la = leaf0 + (uint32_t)(a / h), lb = leaf0 + (uint32_t)(b / h);
    hop(t, u, la, out);
    if (la != lb) {
      uint32_t spine = leaf0 + (uint32_t)d->leaves + (uint32_t)(mix64(((uint64_t)u << 32) | v) % (uint64_t)d->spines);
      hop(t, la, spine, out);
      hop(t, spine, lb, out);
    }
    hop(t, lb, v, out);
    break;
  }
  case TOPO_KIND_GRAPH:
    g_assert_not_reached();
  }
}

/* Hop distances to node dst for every node, by BFS over in-links; cached
 * per destination (O(V) memory each). */
static const uint32_t *graph_dist_to(const topo *t, uint32_t dst)
{
  uint32_t *dist = g_hash_table_lookup(t->graph_dist, GUINT_TO_POINTER(dst));
  if (dist)
    return dist;
  const topo_link *L = (const topo_link *)t->links->data;
  dist = g_new(uint32_t, t->n_nodes);
  for (uint32_t i = 0; i < t->n_nodes; i++)
    dist[i] = UINT32_MAX;
  uint32_t *queue = g_new(uint32_t, t->n_nodes);
  uint32_t head = 0, tail = 0;
  dist[dst] = 0;
  queue[tail++] = dst;
  while (head < tail) {
    uint32_t v = queue[head++];
    for (uint32_t k = t->in_off[v]; k < t->in_off[v + 1]; k++) {
      uint32_t u = L[t->in_link[k]].src;
      /* Paths may pass through switches and endpoints alike. */
      if (dist[u] == UINT32_MAX) {
        dist[u] = dist[v] + 1;
        queue[tail++] = u;
      }
    }
  }
  g_free(queue);
  g_hash_table_insert(t->graph_dist, GUINT_TO_POINTER(dst), dist);
  return dist;
}

static void route_graph(const topo *t, uint32_t src, uint32_t dst, GArray *out)
{
  const uint32_t *dist = graph_dist_to(t, dst);
  const topo_link *L = (const topo_link *)t->links->data;
  g_assert(dist[src] != UINT32_MAX);
  uint64_t h = mix64(((uint64_t)src << 32) | dst);
  uint32_t u = src;
  for (uint32_t step = 0; u != dst; step++) {
    /* Candidates: out-links to a node one hop closer, in link order (the
     * CSR is sorted by destination, then link index). */
    uint32_t count = 0;
    for (uint32_t k = t->out_off[u]; k < t->out_off[u + 1]; k++)
      if (dist[L[t->out_link[k]].dst] + 1 == dist[u])
        count++;
    g_assert(count > 0);
    uint32_t pick = (uint32_t)(mix64(h + step) % count), chosen = UINT32_MAX;
    for (uint32_t k = t->out_off[u]; k < t->out_off[u + 1]; k++)
      if (dist[L[t->out_link[k]].dst] + 1 == dist[u] && pick-- == 0) {
        chosen = t->out_link[k];
        break;
      }
    g_array_append_val(out, chosen);
    u = L[chosen].dst;
  }
}

/* Through the shared fabric from endpoint u to endpoint v, which differ in
 * some fabric dimension and agree outside the fabric's span: u's port, u's
 * lanes up to the outermost level where they differ, v's lanes down, v's
 * port.  Every endpoint has its own port and lanes, so traffic between
 * distinct pairs shares only the ports: a non-blocking fabric. */
static void route_fabric(const topo *t, uint32_t u, uint32_t v, GArray *out)
{
  int top = t->fabric_first;
  for (int di = t->fabric_first; di <= t->fabric_last; di++)
    if (ep_coord(&t->dims[di], u) != ep_coord(&t->dims[di], v))
      top = di;
  for (int di = t->fabric_first; di <= top; di++) {
    uint32_t l = t->dims[di].lane_base + 2 * u;
    g_array_append_val(out, l);
  }
  for (int di = top; di >= t->fabric_first; di--) {
    uint32_t l = t->dims[di].lane_base + 2 * v + 1;
    g_array_append_val(out, l);
  }
}

void topo_route_endpoints(const topo *t, uint32_t src, uint32_t dst, GArray *out)
{
  g_assert(src < t->n_endpoints && dst < t->n_endpoints);
  if (src == dst)
    return;
  if (t->format == TOPO_FORMAT_GRAPH) {
    route_graph(t, src, dst, out);
    return;
  }
  /* A pair that differs in a shared fabric's dimension crosses that fabric
   * once, from its own port, to the endpoint that has dst's coordinates in
   * every dimension the fabric spans (its own and all inner ones); the
   * other dimensions are routed in order as usual. */
  gboolean via_fabric = FALSE;
  for (int di = t->fabric_first; di >= 0 && di <= t->fabric_last; di++)
    if (ep_coord(&t->dims[di], src) != ep_coord(&t->dims[di], dst))
      via_fabric = TRUE;
  uint32_t cur = src;
  for (int di = 0; di < t->n_dims; di++) {
    const topo_dim *d = &t->dims[di];
    if (via_fabric && di <= t->fabric_last) {
      if (di == 0) {
        uint32_t span = t->dims[t->fabric_last].fabric_span;
        uint32_t next = cur - cur % span + dst % span;
        route_fabric(t, cur, next, out);
        cur = next;
      }
      continue;
    }
    uint32_t a = ep_coord(d, cur), b = ep_coord(d, dst);
    if (a == b)
      continue;
    uint32_t next = cur - a * d->stride + b * d->stride;
    route_in_dim(t, d, cur, next, out);
    cur = next;
  }
  g_assert(cur == dst);
}

static uint32_t *arena_alloc(topo *t, uint32_t n)
{
  if (n > t->arena_left) {
    uint32_t block = n > 16384 ? n : 16384;
    t->arena_cur = g_new(uint32_t, block);
    g_ptr_array_add(t->arena, t->arena_cur);
    t->arena_left = block;
  }
  uint32_t *p = t->arena_cur;
  t->arena_cur += n;
  t->arena_left -= n;
  return p;
}

static void cache_grow(topo *t)
{
  uint32_t cap = t->cache_cap ? t->cache_cap * 2 : 1024;
  topo_route_slot *slots = g_new0(topo_route_slot, cap);
  for (uint32_t i = 0; i < t->cache_cap; i++) {
    topo_route_slot *s = &t->cache[i];
    if (s->key == 0)
      continue;
    uint32_t j = (uint32_t)(mix64(s->key) & (cap - 1));
    while (slots[j].key != 0)
      j = (j + 1) & (cap - 1);
    slots[j] = *s;
  }
  g_free(t->cache);
  t->cache = slots;
  t->cache_cap = cap;
}

const uint32_t *topo_route(const topo *tc, int src_rank, int dst_rank, uint32_t *n_links)
{
  static const uint32_t empty[1] = {0};
  g_assert(src_rank >= 0 && src_rank < tc->n_ranks && dst_rank >= 0 && dst_rank < tc->n_ranks);
  /* The cache is the only mutable state behind the const pointer. */
  topo *t = (topo *)tc;
  uint32_t s = t->rank_ep[src_rank], d = t->rank_ep[dst_rank];
  if (s == d) {
    *n_links = 0;
    return empty;
  }
  uint64_t key = (((uint64_t)s << 32) | d) + 1;
  if (t->cache_cap) {
    uint32_t j = (uint32_t)(mix64(key) & (t->cache_cap - 1));
    while (t->cache[j].key != 0) {
      if (t->cache[j].key == key) {
        *n_links = t->cache[j].n;
        return t->cache[j].links;
      }
      j = (j + 1) & (t->cache_cap - 1);
    }
  }
  g_array_set_size(t->scratch, 0);
  topo_route_endpoints(t, s, d, t->scratch);
  uint32_t n = t->scratch->len;
  uint32_t *links = arena_alloc(t, n);
  memcpy(links, t->scratch->data, sizeof(uint32_t) * n);
  if ((uint64_t)(t->cache_used + 1) * 2 > t->cache_cap)
    cache_grow(t);
  uint32_t j = (uint32_t)(mix64(key) & (t->cache_cap - 1));
  while (t->cache[j].key != 0)
    j = (j + 1) & (t->cache_cap - 1);
  t->cache[j].key = key;
  t->cache[j].links = links;
  t->cache[j].n = n;
  t->cache_used++;
  *n_links = n;
  return links;
}

void topo_route_cost(const topo *t, int src_rank, int dst_rank, sim_time_ps *latency, wisp_bw_Bps *bottleneck)
{
  uint32_t n;
  const uint32_t *r = topo_route(t, src_rank, dst_rank, &n);
  sim_time_ps lat = 0;
  wisp_bw_Bps bw = n ? UINT64_MAX : 0;
  for (uint32_t i = 0; i < n; i++) {
    const topo_link *l = topo_get_link(t, r[i]);
    /* Saturates instead of overflowing on absurd latencies. */
    lat = l->latency > SIM_TIME_MAX - lat ? SIM_TIME_MAX : lat + l->latency;
    bw = MIN(bw, topo_link_rate(t, l));
  }
  if (latency)
    *latency = lat;
  if (bottleneck)
    *bottleneck = bw;
}

/* ---- accessors ---- */

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
  return (int)ep_coord(&t->dims[dim], t->rank_ep[rank]);
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
