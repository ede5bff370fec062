/* topo_route.c: routes between ranks and endpoints.  Dimension-order
 * for hierarchical topologies (innermost tier first, each along its
 * kind's shortest path), BFS hop count with a stable ECMP hash of (src,
 * dst) for explicit graphs; routes are cached per endpoint pair in an
 * arena, so a repeated topo_route costs O(1).
 */
#include "config.h"
#include "topologies/topo_internal.h"

#include <string.h>

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
  return topo_group_ep(w->d, w->g, (uint32_t)i);
}

static uint32_t walk_torus_ep(const void *p, int i)
{
  const walk_ctx *w = p;
  int c[3];
  memcpy(c, w->c, sizeof c);
  c[w->axis] = i;
  return topo_group_ep(w->d, w->g, topo_torus_index(w->d, c));
}

/* Appends the links from endpoint u to endpoint v, which differ only in
 * dimension d's coordinate. */
static void route_in_dim(const topo *t, const topo_dim *d, uint32_t u, uint32_t v, GArray *out)
{
  uint32_t g = topo_ep_group(d, u);
  int a = (int)topo_ep_coord(d, u), b = (int)topo_ep_coord(d, v);
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
    topo_torus_coords(d, (uint32_t)a, w.c);
    topo_torus_coords(d, (uint32_t)b, cb);
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
    if (topo_ep_coord(&t->dims[di], u) != topo_ep_coord(&t->dims[di], v))
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
    if (topo_ep_coord(&t->dims[di], src) != topo_ep_coord(&t->dims[di], dst))
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
    uint32_t a = topo_ep_coord(d, cur), b = topo_ep_coord(d, dst);
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
