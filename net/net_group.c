/* net_group.c: tier B's groups (net_flow.c, "Aggregation"): transfers
 * whose latency phases end at one instant with one size and bottleneck
 * wait in one group and end their latency phase in one event; there each
 * class of one route shape enters the solver as one aggregate when it is
 * symmetric (class_check), else flow by flow.  Route shapes are interned
 * once per route-memo miss (net_shape_id), so members are split into
 * classes by comparing ids.  O(m log m + m x route length) per group of m
 * transfers (O(m + m x route length) when the members are in order).
 */
#include "config.h"

#include "net/net_internal.h"

#include <stdlib.h>
#include <string.h>

static guint group_key_hash(gconstpointer p)
{
  const net_group_key *k = p;
  return (guint)(wisp_mix64((uint64_t)k->at ^ wisp_mix64(k->bytes ^ wisp_mix64(k->bottleneck + (uint64_t)k->capped))));
}

static gboolean group_key_equal(gconstpointer a, gconstpointer b)
{
  const net_group_key *x = a, *y = b;
  return x->at == y->at && x->bytes == y->bytes && x->bottleneck == y->bottleneck && x->capped == y->capped;
}

GHashTable *net_groups_new(void)
{
  return g_hash_table_new_full(group_key_hash, group_key_equal, NULL, NULL);
}

void net_groups_free(net *n)
{
  GHashTableIter it;
  gpointer v;
  g_hash_table_iter_init(&it, n->groups);
  while (g_hash_table_iter_next(&it, NULL, &v)) {
    net_group *gr = v;
    sim_cancel(n->sim, gr->ev);
    g_array_free(gr->members, TRUE);
    g_free(gr);
  }
  g_hash_table_destroy(n->groups);
  n->last_group = NULL;
}

/* Why a class may not aggregate (net_agg_stats' fallbacks). */
typedef enum { CLASS_OK, CLASS_BUSY, CLASS_MIXED, CLASS_UNEVEN } class_verdict;

/* What class_check found: the bundle the class rides (NET_NO_BUNDLE: its
 * links are free, a new one) and, per route position, the bundle's
 * position (posmap) and the class's links there (width). */
typedef struct {
  uint32_t bundle;
  uint32_t *posmap, *width;
} class_fit;

/* Counts the class's flows on each of its links (link_st's use and pos;
 * touched lists the links) and notes which bundle they lie in.  O(m x
 * route length). */
static class_verdict class_scan(net *n, const uint32_t *mem, uint32_t m, GArray *touched, class_fit *f) {
  uint32_t nl = n->xf[mem[0]].n_links;
  const uint32_t unset = NET_NO_BUNDLE - 1;
  f->bundle = unset;
  for (uint32_t k = 0; k < nl; k++) {
    f->posmap[k] = NET_NO_BUNDLE;
    f->width[k] = 0;
  }
  for (uint32_t j = 0; j < m; j++) {
    const net_xfer *x = &n->xf[mem[j]];
    for (uint32_t k = 0; k < nl; k++) {
      uint32_t l = x->route[k];
      if (n->link_st[l].use++ > 0) {
        if (n->link_st[l].pos != k)
          return CLASS_MIXED;
        continue;
      }
      g_array_append_val(touched, l);
      n->link_st[l].pos = k;
      f->width[k]++;
      uint32_t b = n->link_st[l].bundle;
      if (b == NET_NO_BUNDLE && n->link_st[l].flows > 0)
        return CLASS_BUSY; /* a flow of its own */
      if (f->bundle == unset)
        f->bundle = b;
      else if (f->bundle != b)
        return CLASS_BUSY; /* two bundles, or a bundle and free links */
      uint32_t p = b == NET_NO_BUNDLE ? k : n->link_st[l].bpos;
      if (f->posmap[k] == NET_NO_BUNDLE)
        f->posmap[k] = p;
      else if (f->posmap[k] != p)
        return CLASS_UNEVEN; /* one class position over two bundle positions */
    }
  }
  return CLASS_OK;
}

/* Whether the class (members mem[0..m)) may aggregate (net_flow.c,
 * "Aggregation"), else the first rule it breaks; fills mult with m_k per
 * route position and f with the bundle it rides.  O(m x route length). */
static class_verdict class_check(net *n, const uint32_t *mem, uint32_t m, float *mult, class_fit *f) {
  const net_xfer *r0 = &n->xf[mem[0]];
  uint32_t nl = r0->n_links;
  GArray *touched = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  /* Positions are 16-bit in link_st: longer routes enter flow by flow. */
  class_verdict v = nl == 0 || nl > NET_AGG_MAX_POS ? CLASS_MIXED : class_scan(n, mem, m, touched, f);
  for (uint32_t k = 0; v == CLASS_OK && k < nl; k++)
    mult[k] = (float)n->link_st[r0->route[k]].use;
  for (uint32_t j = 0; v == CLASS_OK && j < m; j++)
    for (uint32_t k = 0; v == CLASS_OK && k < nl; k++)
      if (n->link_st[n->xf[mem[j]].route[k]].use != (uint32_t)mult[k])
        v = CLASS_UNEVEN;
  if (v == CLASS_OK && f->bundle != NET_NO_BUNDLE) {
    /* Riding a bundle: distinct bundle positions, each covered whole. */
    const net_bundle *B = net_bundle_at(n, f->bundle);
    for (uint32_t k = 0; v == CLASS_OK && k < nl; k++) {
      if (f->width[k] != B->width[f->posmap[k]])
        v = CLASS_UNEVEN;
      for (uint32_t q = 0; q < k; q++)
        if (f->posmap[q] == f->posmap[k])
          v = CLASS_MIXED;
    }
  }
  for (guint t = 0; t < touched->len; t++)
    n->link_st[g_array_index(touched, uint32_t, t)].use = 0;
  g_array_free(touched, TRUE);
  return v;
}

/* Counts a class of c flows that enters flow by flow under verdict v
 * (c == 1: alone). */
static void count_fallback(net *n, uint32_t c, class_verdict v) {
  uint64_t *reason = c == 1 && v == CLASS_OK ? &n->agg_stats.alone
                     : v == CLASS_BUSY ? &n->agg_stats.busy
                     : v == CLASS_MIXED ? &n->agg_stats.mixed
                                        : &n->agg_stats.uneven;
  *reason += c;
}


typedef struct {
  uint64_t shape;           /* the digest: classes enter in its order */
  uint32_t order, xf, id;   /* send order, transfer slot, interned shape */
} net_member;

static int cmp_member(const void *a, const void *b) {
  const net_member *x = a, *y = b;
  if (x->shape != y->shape) return x->shape < y->shape ? -1 : 1;
  return x->order < y->order ? -1 : (x->order > y->order);
}

/* A route shape as interned by net_shape_id: per position the link's
 * bandwidth and dimension, sig[2k] and sig[2k + 1]. */
typedef struct {
  uint64_t digest;
  uint32_t n_links, id;
  uint64_t sig[];
} net_shape;

static guint shape_hash(gconstpointer p) { return (guint)((const net_shape *)p)->digest; }

static gboolean shape_equal(gconstpointer a, gconstpointer b) {
  const net_shape *x = a, *y = b;
  return x->n_links == y->n_links && memcmp(x->sig, y->sig, 2 * sizeof(uint64_t) * x->n_links) == 0;
}

GHashTable *net_shapes_new(void) { return g_hash_table_new_full(shape_hash, shape_equal, g_free, NULL); }

uint32_t net_shape_id(net *n, const uint32_t *route, uint32_t n_links, uint64_t digest) {
  net_shape *s = g_malloc(sizeof *s + 2 * sizeof(uint64_t) * n_links);
  s->digest = digest;
  s->n_links = n_links;
  for (uint32_t k = 0; k < n_links; k++) {
    const topo_link *l = topo_get_link(n->t, route[k]);
    s->sig[2 * k] = l->bw;
    s->sig[2 * k + 1] = l->tier;
  }
  const net_shape *seen = g_hash_table_lookup(n->shapes, s);
  if (seen != NULL) {
    g_free(s);
    return seen->id;
  }
  s->id = g_hash_table_size(n->shapes);
  g_hash_table_add(n->shapes, s);
  return s->id;
}

/* Sorts the members by (digest, send order) unless they already are
 * (the common case: one class in send order).  O(m), else O(m log m). */
static void sort_members(net_member *v, guint m) {
  for (guint j = 1; j < m; j++)
    if (cmp_member(&v[j - 1], &v[j]) > 0) {
      qsort(v, m, sizeof *v, cmp_member);
      return;
    }
}

/* A group's latency phase is over: its classes enter the solver, as one
 * aggregate each where symmetric (class_check), else flow by flow in
 * send order.  O(m log m + m x route length) for m members. */
static void ev_group_start(sim_engine *sim, void *ctx, uint64_t arg) {
  (void)sim;
  net *n = ctx;
  net_group *gr = (net_group *)(uintptr_t)arg;
  g_hash_table_remove(n->groups, &gr->key);
  if (n->last_group == gr)
    n->last_group = NULL;
  n->agg_stats.groups++;
  guint m = gr->members->len;
  net_member *v = g_new(net_member, m);
  for (guint j = 0; j < m; j++) {
    uint32_t i = g_array_index(gr->members, uint32_t, j);
    n->xf[i].ev = SIM_EVENT_NONE;
    v[j] = (net_member){ n->xf[i].shape, j, i, n->xf[i].shape_id };
  }
  sort_members(v, m);
  uint32_t *mem = g_new(uint32_t, m);
  for (guint j = 0; j < m;) {
    guint e = j + 1;
    while (e < m && v[e].shape == v[j].shape && v[e].id == v[j].id) e++;
    uint32_t c = 0;
    for (guint k = j; k < e; k++) mem[c++] = v[k].xf;
    uint32_t nl = n->xf[mem[0]].n_links;
    float *mult = g_new(float, nl ? nl : 1);
    class_fit fit = {NET_NO_BUNDLE, g_new(uint32_t, nl ? nl : 1), g_new(uint32_t, nl ? nl : 1)};
    class_verdict verdict = class_check(n, mem, c, mult, &fit);
    /* A single flow aggregates only to ride an existing bundle. */
    if (verdict == CLASS_OK && (c > 1 || fit.bundle != NET_NO_BUNDLE)) {
      net_flow_agg_enter(n, mem, c, mult, fit.bundle, fit.posmap);
    } else {
      g_free(mult);
      count_fallback(n, c, verdict);
      for (uint32_t k = 0; k < c; k++) net_flow_enter(n, mem[k]);
    }
    g_free(fit.posmap);
    g_free(fit.width);
    j = e;
  }
  g_free(mem);
  g_free(v);
  g_array_free(gr->members, TRUE);
  g_free(gr);
}

/* Puts transfer slot i, whose latency phase ends at `at`, in the group of
 * flows entering then with its size and bottleneck. */
void net_group_join(net *n, uint32_t i, sim_time_ps at) {
  const net_xfer *x = &n->xf[i];
  net_group_key key = { at, x->bytes, x->bottleneck, x->capped };
  /* The members of a collective step send one after the other: most
   * joins find the previous transfer's group. */
  net_group *gr = n->last_group;
  if (gr == NULL || !group_key_equal(&gr->key, &key))
    gr = g_hash_table_lookup(n->groups, &key);
  if (gr == NULL) {
    gr = g_new(net_group, 1);
    gr->key = key;
    gr->members = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    gr->ev = sim_schedule_at(n->sim, at, ev_group_start, n, (uint64_t)(uintptr_t)gr);
    g_hash_table_insert(n->groups, &gr->key, gr);
  }
  n->last_group = gr;
  g_array_append_val(gr->members, i);
}
