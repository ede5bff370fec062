/* net_xfer.c: the pool of transfer records behind both tiers (one
 * net_xfer per transfer in flight, and per tier B aggregate).  Slots come
 * from a free list, so a steady-state run does not allocate; the array
 * doubles when the list is empty.  O(1) amortized per slot.
 */
#include "config.h"

#include "net/net_internal.h"

uint32_t net_xf_alloc(net *n) {
  uint32_t i;
  if (n->xf_free != UINT32_MAX) {
    i = n->xf_free;
    n->xf_free = n->xf[i].next_free;
  } else {
    if (n->n_xf == n->cap_xf) {
      n->cap_xf = n->cap_xf ? n->cap_xf * 2 : 64;
      n->xf = g_realloc_n(n->xf, n->cap_xf, sizeof *n->xf);
    }
    g_assert(n->n_xf < UINT32_MAX);
    i = (uint32_t)n->n_xf++;
  }
  n->xf[i] = (net_xfer){.var = LMM_NONE, .ev = SIM_EVENT_NONE, .alive = TRUE, .agg = NET_NO_AGG};
  return i;
}

/* Releases slot i and calls its completion (after the release, so the
 * callback may start new transfers that reuse the slot). */
void net_xf_complete(net *n, uint32_t i) {
  net_xfer x = n->xf[i];
  n->xf[i].alive = FALSE;
  n->xf[i].next_free = n->xf_free;
  n->xf_free = i;
  if (x.done) x.done(n->sim, x.ctx, x.cookie);
}
