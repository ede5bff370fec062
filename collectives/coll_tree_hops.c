/* coll_tree_hops.c: the tree replay's table of rank pairs (issue 30): per
 * pair its route, tier and class, a class being one prepared hop shared
 * by the pairs whose hops are alike, so that the replay (coll_fast_tree.c)
 * prepares a pair once per job and keeps 32 bytes per pair (see
 * coll_tree_hops.h).  O(1) expected per lookup.
 */
#include "config.h"

#include <string.h>

#include "collectives/coll_tree_hops.h"

/* Emptied past this many pairs (about 5 MB with the index). */
#define TREE_HOPS_MAX (1u << 17)
/* A new pair's class is looked for among the last TREE_CLS_SCAN classes
 * (a miss only adds a class: still exact). */
#define TREE_CLS_SCAN 32

static uint32_t hop_slot(uint64_t key, uint32_t mask)
{
  return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}

/* Doubles the index of t and files every pair again.  O(pairs). */
static void hops_grow_index(struct tree_hops *t)
{
  uint32_t size = t->index ? 2 * (t->mask + 1) : 4096;
  g_free(t->index);
  t->index = g_new0(uint32_t, size);
  t->mask = size - 1;
  for (uint32_t i = 0; i < t->len; i++) {
    uint64_t key = ((uint64_t)(uint32_t)t->v[i].src << 32) | (uint32_t)t->v[i].dst;
    uint32_t j = hop_slot(key, t->mask);
    while (t->index[j] != 0)
      j = (j + 1) & t->mask;
    t->index[j] = i + 1;
  }
}

void coll_tree_hops_free(struct tree_hops *t)
{
  if (t == NULL)
    return;
  g_free(t->v);
  g_free(t->index);
  g_free(t->cls);
  g_free(t);
}

/* The runtime's table, made on first use.  O(1). */
static struct tree_hops *tree_hops_of(coll_rt *c)
{
  if (c->tree_hops == NULL) {
    c->tree_hops = g_new0(struct tree_hops, 1);
    hops_grow_index(c->tree_hops);
  }
  return c->tree_hops;
}

/* A new number for a full replay, so that a pair's links are checked
 * once per replay (every pair unchecked when the number wraps).  O(1),
 * O(pairs) on a wrap. */
void coll_tree_hops_new_run(coll_rt *c)
{
  struct tree_hops *t = tree_hops_of(c);
  if (++t->run == 0) {
    for (uint32_t i = 0; i < t->len; i++)
      t->v[i].stamp = 0;
    t->run = 1;
  }
}

/* The class of hop h: one of the last TREE_CLS_SCAN classes alike, else
 * a new one.  O(TREE_CLS_SCAN x route length). */
static uint32_t hop_class(coll_rt *c, struct tree_hops *t, const net_hop *h)
{
  for (uint32_t k = t->n_cls; k > 0 && k + TREE_CLS_SCAN > t->n_cls; k--)
    if (net_hop_alike(c->n, &t->cls[k - 1], h))
      return k - 1;
  if (t->n_cls == t->cap_cls) {
    t->cap_cls = t->cap_cls ? 2 * t->cap_cls : 16;
    t->cls = g_renew(net_hop, t->cls, t->cap_cls);
  }
  t->cls[t->n_cls] = *h;
  return t->n_cls++;
}

/* Files a new pair a -> b at index slot j of t.  O(route length +
 * hop_class). */
static tree_pair *hops_add(coll_rt *c, struct tree_hops *t, int a, int b, uint32_t j)
{
  if (t->len == t->cap) {
    t->cap = t->cap ? 2 * t->cap : 1024;
    t->v = g_renew(tree_pair, t->v, t->cap);
  }
  net_hop h;
  net_hop_init(c->n, a, b, &h);
  tree_pair *p = &t->v[t->len];
  t->index[j] = ++t->len;
  *p = (tree_pair){ a, b, h.route, h.n_links, hop_class(c, t, &h), 0, coll_pair_is_inter(c->t, a, b) };
  return p;
}

/* The pair from rank a to rank b.  O(1) expected on a pair seen,
 * O(route length) amortized on a new one.  The pointer is valid until
 * the next call. */
tree_pair *coll_tree_pair_of(coll_rt *c, int a, int b)
{
  struct tree_hops *t = tree_hops_of(c);
  uint64_t key = ((uint64_t)(uint32_t)a << 32) | (uint32_t)b;
  uint32_t j = hop_slot(key, t->mask);
  for (; t->index[j] != 0; j = (j + 1) & t->mask) {
    tree_pair *p = &t->v[t->index[j] - 1];
    if (p->src == a && p->dst == b)
      return p;
  }
  if (t->len == TREE_HOPS_MAX) { /* full: start again */
    t->len = 0;
    t->n_cls = 0;
    memset(t->index, 0, sizeof *t->index * ((size_t)t->mask + 1));
    j = hop_slot(key, t->mask);
  } else if (2 * ((size_t)t->len + 1) > (size_t)t->mask + 1) {
    hops_grow_index(t);
    for (j = hop_slot(key, t->mask); t->index[j] != 0; j = (j + 1) & t->mask)
      ;
  }
  return hops_add(c, t, a, b, j);
}

/* Pair p's prepared hop: its class's, over p's route (valid until the
 * next call).  O(1). */
net_hop *coll_tree_pair_hop(coll_rt *c, const tree_pair *p)
{
  net_hop *h = &c->tree_hops->cls[p->cls];
  h->route = p->route;
  h->src = p->src;
  h->dst = p->dst;
  return h;
}
