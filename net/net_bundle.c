/* net_bundle.c: tier B's bundles (net_internal.h, net_flow.c
 * "Aggregation"): the sets of links that aggregates share, by route
 * position.  A bundle is made by the first class that aggregates on free
 * links; later classes whose links are exactly the links of some of its
 * positions, loaded evenly, ride it too (net_group.c's class_check), and
 * it is freed with its last aggregate.  Slots are reused through a free
 * list.  Costs: O(m x route length) to make one from a class of m flows,
 * O(1) to attach an aggregate, O(aggregates + links) to detach the last.
 */
#include "config.h"

#include "net/net_internal.h"

uint32_t net_bundle_new(net *n, const uint32_t *mem, uint32_t m) {
  if (n->bundles == NULL) {
    n->bundles = g_array_new(FALSE, TRUE, sizeof(net_bundle));
    n->bundle_free = NET_NO_BUNDLE;
  }
  uint32_t b;
  if (n->bundle_free != NET_NO_BUNDLE) {
    b = n->bundle_free;
    n->bundle_free = net_bundle_at(n, b)->next_free;
  } else {
    g_assert(n->bundles->len < NET_NO_BUNDLE);
    b = n->bundles->len;
    g_array_set_size(n->bundles, b + 1);
  }
  const net_xfer *r0 = &n->xf[mem[0]];
  net_bundle *B = net_bundle_at(n, b);
  B->n_pos = r0->n_links;
  B->rep = g_memdup2(r0->route, sizeof(uint32_t) * r0->n_links);
  B->width = g_new0(uint32_t, r0->n_links);
  B->links = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  B->aggs = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  for (uint32_t j = 0; j < m; j++) {
    const net_xfer *x = &n->xf[mem[j]];
    for (uint32_t k = 0; k < x->n_links; k++) {
      uint32_t l = x->route[k];
      if (n->link_st[l].bundle == b)
        continue;
      g_assert(n->link_st[l].bundle == NET_NO_BUNDLE);
      n->link_st[l].bundle = b;
      n->link_st[l].bpos = k;
      B->width[k]++;
      g_array_append_val(B->links, l);
    }
  }
  return b;
}

void net_bundle_attach(net *n, uint32_t b, uint32_t a) {
  g_array_append_val(net_bundle_at(n, b)->aggs, a);
  n->xf[a].bundle = b;
}

void net_bundle_detach(net *n, uint32_t b, uint32_t a) {
  net_bundle *B = net_bundle_at(n, b);
  for (guint j = 0; j < B->aggs->len; j++)
    if (g_array_index(B->aggs, uint32_t, j) == a) {
      g_array_remove_index_fast(B->aggs, j);
      break;
    }
  n->xf[a].bundle = NET_NO_BUNDLE;
  if (B->aggs->len > 0)
    return;
  for (guint j = 0; j < B->links->len; j++)
    n->link_st[g_array_index(B->links, uint32_t, j)].bundle = NET_NO_BUNDLE;
  g_array_free(B->links, TRUE);
  g_array_free(B->aggs, TRUE);
  g_free(B->rep);
  g_free(B->width);
  *B = (net_bundle){.next_free = n->bundle_free};
  n->bundle_free = b;
}

void net_bundles_free(net *n) {
  if (n->bundles == NULL)
    return;
  for (guint b = 0; b < n->bundles->len; b++) {
    net_bundle *B = net_bundle_at(n, b);
    if (B->aggs == NULL)
      continue;
    g_array_free(B->links, TRUE);
    g_array_free(B->aggs, TRUE);
    g_free(B->rep);
    g_free(B->width);
  }
  g_array_free(n->bundles, TRUE);
}
