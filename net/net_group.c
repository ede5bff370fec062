/* net_group.c: tier B's groups (net_flow.c, "Aggregation"): transfers
 * whose latency phases end at one instant with one size and bottleneck
 * wait in one group and end their latency phase in one event; there each
 * class of one route shape enters the solver as one aggregate when it is
 * symmetric (class_symmetric), else flow by flow.  O(m log m + m x route
 * length) per group of m transfers.
 */
#include "config.h"

#include "net/net_internal.h"

#include <stdlib.h>

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
}

/* Whether the class (members mem[0..m)) may aggregate; fills mult with
 * m_k per route position.  O(m x route length). */
static gboolean class_symmetric(net *n, const uint32_t *mem, uint32_t m, float *mult) {
  const net_xfer *r0 = &n->xf[mem[0]];
  uint32_t nl = r0->n_links;
  gboolean ok = TRUE;
  GArray *touched = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  for (uint32_t j = 0; ok && j < m; j++) {
    const net_xfer *x = &n->xf[mem[j]];
    for (uint32_t k = 0; ok && k < nl; k++) {
      uint32_t l = x->route[k];
      if (n->link_use[l] == 0) {
        if (n->link_agg[l] != NET_NO_AGG || lmm_constraint_n_variables(n->lmm, n->cnst_of_link[l]) > 0)
          ok = FALSE;
        n->link_pos[l] = k;
        g_array_append_val(touched, l);
      } else if (n->link_pos[l] != k) {
        ok = FALSE;
      }
      n->link_use[l]++;
    }
  }
  for (uint32_t k = 0; ok && k < nl; k++)
    mult[k] = (float)n->link_use[r0->route[k]];
  for (uint32_t j = 0; ok && j < m; j++)
    for (uint32_t k = 0; ok && k < nl; k++)
      ok = n->link_use[n->xf[mem[j]].route[k]] == (uint32_t)mult[k];
  for (guint t = 0; t < touched->len; t++)
    n->link_use[g_array_index(touched, uint32_t, t)] = 0;
  g_array_free(touched, TRUE);
  return ok;
}


/* A 64-bit digest of a route's shape: its length and, per position, the
 * link's bandwidth and dimension. */
static uint64_t route_shape(const net *n, const net_xfer *x) {
  uint64_t h = wisp_mix64(x->n_links);
  for (uint32_t k = 0; k < x->n_links; k++) {
    const topo_link *l = topo_get_link(n->t, x->route[k]);
    h = wisp_mix64(h ^ l->bw ^ ((uint64_t)l->tier << 56));
  }
  return h;
}

typedef struct {
  uint64_t shape;
  uint32_t order, xf;
} net_member;

static int cmp_member(const void *a, const void *b) {
  const net_member *x = a, *y = b;
  if (x->shape != y->shape) return x->shape < y->shape ? -1 : 1;
  return x->order < y->order ? -1 : (x->order > y->order);
}

/* Whether two routes have the same shape, position by position. */
static gboolean same_shape(const net *n, const net_xfer *a, const net_xfer *b) {
  if (a->n_links != b->n_links) return FALSE;
  for (uint32_t k = 0; k < a->n_links; k++) {
    const topo_link *p = topo_get_link(n->t, a->route[k]), *q = topo_get_link(n->t, b->route[k]);
    if (p->bw != q->bw || p->tier != q->tier) return FALSE;
  }
  return TRUE;
}

/* A group's latency phase is over: its classes enter the solver, as one
 * aggregate each where symmetric (class_symmetric), else flow by flow in
 * send order.  O(m log m + m x route length) for m members. */
static void ev_group_start(sim_engine *sim, void *ctx, uint64_t arg) {
  (void)sim;
  net *n = ctx;
  net_group *gr = (net_group *)(uintptr_t)arg;
  g_hash_table_remove(n->groups, &gr->key);
  guint m = gr->members->len;
  net_member *v = g_new(net_member, m);
  for (guint j = 0; j < m; j++) {
    uint32_t i = g_array_index(gr->members, uint32_t, j);
    n->xf[i].ev = SIM_EVENT_NONE;
    v[j] = (net_member){ route_shape(n, &n->xf[i]), j, i };
  }
  qsort(v, m, sizeof *v, cmp_member);
  uint32_t *mem = g_new(uint32_t, m);
  for (guint j = 0; j < m;) {
    guint e = j + 1;
    while (e < m && v[e].shape == v[j].shape && same_shape(n, &n->xf[v[j].xf], &n->xf[v[e].xf])) e++;
    uint32_t c = 0;
    for (guint k = j; k < e; k++) mem[c++] = v[k].xf;
    float *mult = c > 1 ? g_new(float, n->xf[mem[0]].n_links) : NULL;
    if (c > 1 && class_symmetric(n, mem, c, mult)) {
      net_flow_agg_enter(n, mem, c, mult);
    } else {
      g_free(mult);
      for (uint32_t k = 0; k < c; k++) net_flow_enter(n, mem[k]);
    }
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
  net_group *gr = g_hash_table_lookup(n->groups, &key);
  if (gr == NULL) {
    gr = g_new(net_group, 1);
    gr->key = key;
    gr->members = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    gr->ev = sim_schedule_at(n->sim, at, ev_group_start, n, (uint64_t)(uintptr_t)gr);
    g_hash_table_insert(n->groups, &gr->key, gr);
  }
  g_array_append_val(gr->members, i);
}
