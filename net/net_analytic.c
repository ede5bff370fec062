/* net_analytic.c: tier A (analytical) of net.h, and the replay of known
 * transfer sequences over it (prepared hops, claims).
 *
 * Tier A (analytical, alpha-beta with link capacity).  Every link is a
 * FIFO server of its own bandwidth: link l keeps free_at(l), the time it
 * has finished serving every byte queued on it so far.  A transfer of S
 * bytes issued at `now` over route l_1 .. l_k is queued on each of its
 * links in issue order (same-time sends in the engine's order):
 *     fin(l)     = max(now, free_at(l)) + S * 10^12 / bw(l)   (exact)
 *     free_at(l) = fin(l)
 *     T_done     = round(max_i fin(l_i)) + sum_i latency(l_i)
 * free_at is kept exactly (picoseconds plus a remainder in units of 1/bw(l)
 * ps) and only T_done is rounded, half up as wisp_transfer_ps, so:
 *  - without queued traffic T_done - now = sum latency +
 *    wisp_transfer_ps(S, min bw), the plain alpha-beta time, equal to tier
 *    B's to the picosecond;
 *  - a link never serves more than bw(l) x (time it was busy) bytes, so a
 *    burst of transfers released together ends no earlier than
 *    max over links of (bytes through the link) / bw(l): the injection
 *    bound at the ports and the load bound of every other link.  For a
 *    burst that is also the earliest any schedule can finish (give every
 *    transfer the constant rate S / makespan), so tier B's max-min
 *    sharing can only equal or exceed it (up to route latencies, which
 *    tier B pays before its flow phase).
 * Individual completions follow FIFO order, not fair sharing: a transfer
 * queued behind large ones ends later than under max-min, one ahead of them
 * earlier (doc/network-models.md measures it against tier B).  Links serve
 * independently: a transfer waiting on one busy link does not hold its
 * other links idle.  (Holding the whole route from the time every link is
 * free leaves gaps no later transfer can use: 3.0x the port bound on a
 * direct all-gather over an 8-port switch and 3.8x tier B on a direct
 * all-reduce over a 64-ring, so it was not chosen.)  Zero-byte transfers
 * queue nowhere.  One event per transfer, O(route length + log queue) per
 * send; 16 bytes per link.
 *
 * Exactness with tier B: without queued traffic a transfer's time equals
 * tier B's to the picosecond (net_flow.c).
 */
#include "config.h"

#include "net/net_internal.h"


/* A transfer time the engine can add to a clock without overflow: longer
 * ones (a size of 2^62 bytes, a link of a few bytes per second) flag the
 * engine's time overflow (the run stops and is reported as out of range)
 * and count as 0 here, so that nothing downstream computes past the
 * range. */
#define NET_TIME_CAP SIM_TIME_LIMIT

/* `at` + d when both are in range; otherwise flags the overflow and
 * returns at.  O(1). */
static sim_time_ps net_time_add(net *n, sim_time_ps at, unsigned __int128 d) {
  if (d >= (unsigned __int128)NET_TIME_CAP || at >= NET_TIME_CAP) {
    sim_flag_overflow(n->sim);
    return at;
  }
  return at + (sim_time_ps)d;
}

/* Tier A: queues `bytes` on every link of the route behind what each link
 * already serves and returns when the last link has served it, rounded to
 * the nearest picosecond (see the top comment).  Each link's free time is
 * kept exactly, as picoseconds plus a remainder in units of 1/bw ps, so a
 * queue of k transfers ends at the exact k S / bw, never a rounding error
 * per transfer earlier.  O(route length); one 128-bit division per
 * distinct link bandwidth on the route (consecutive equal bandwidths share
 * it). */
sim_time_ps net_analytic_queue(net *n, const uint32_t *route, uint32_t n_links, uint64_t bytes,
                                  sim_time_ps now) {
  sim_time_ps end = now, q = 0;
  uint64_t r = 0;
  wisp_bw_Bps bw_q = 0;
  unsigned __int128 num = (unsigned __int128)bytes * (unsigned __int128)SIM_PS_PER_S;
  for (uint32_t k = 0; k < n_links; k++) {
    wisp_bw_Bps bw = topo_get_link(n->t, route[k])->bw;
    if (bw != bw_q) { /* S * 10^12 / bw = q + r / bw ps */
      if (num <= UINT64_MAX) { /* S < 18.4 MB: one 64-bit division */
        q = (sim_time_ps)((uint64_t)num / bw);
        r = (uint64_t)num % bw;
      } else {
        unsigned __int128 qq = num / bw;
        gboolean fits = qq <= (unsigned __int128)NET_TIME_CAP; /* else net_time_add flags it */
        q = fits ? (sim_time_ps)qq : NET_TIME_CAP + 1;
        r = fits ? (uint64_t)(num - qq * bw) : 0;
      }
      bw_q = bw;
    }
    net_link_free *f = &n->link_free[route[k]];
    if (f->at < now || (f->at == now && f->rem == 0)) { /* idle: starts now */
      f->at = now;
      f->rem = 0;
    }
    f->at = net_time_add(n, f->at, (unsigned __int128)q);
    if (r >= bw - f->rem) { /* f->rem + r >= bw, without overflow */
      f->rem = r - (bw - f->rem);
      f->at++;
    } else {
      f->rem += r;
    }
    sim_time_ps fin = f->at + (f->rem >= bw - f->rem); /* half rounds up, as wisp_transfer_ps */
    if (fin > end) end = fin;
  }
  return end;
}

/* Calls the claims on the route before a transfer of someone else uses
 * it; each callback releases its claim.  O(route length). */
void net_claims_yield(net *n, const uint32_t *route, uint32_t n_links) {
  for (uint32_t k = 0; k < n_links && n->claims_held > 0; k++) {
    uint32_t id = n->link_claim[route[k]];
    if (id == 0)
      continue;
    net_claim *cl = &g_array_index(n->claims, net_claim, id - 1);
    g_assert(cl->alive);
    cl->fn(cl->ctx);
    g_assert(n->link_claim[route[k]] == 0); /* the callback released it */
  }
}

gboolean net_link_idle(const net *n, uint32_t link, sim_time_ps t) {
  g_assert(n->tier == NET_TIER_ANALYTICAL && link < n->n_links);
  const net_link_free *f = &n->link_free[link];
  if (n->link_claim != NULL && n->link_claim[link] != 0)
    return FALSE;
  return f->at < t || (f->at == t && f->rem == 0);
}

/* The part of net_send that charges a tier A transfer issued at `at`:
 * counters, link FIFOs, the time done() runs.  bytes > 0 queue; 0 pays
 * latency only; an empty route costs nothing. */
sim_time_ps net_analytic_at(net *n, int src_rank, int dst_rank, uint64_t bytes, sim_time_ps at) {
  net_hop h;
  net_hop_init(n, src_rank, dst_rank, &h);
  return net_hop_at(n, &h, bytes, at);
}

void net_hop_init(const net *n, int src_rank, int dst_rank, net_hop *h) {
  *h = (net_hop){ .src = src_rank, .dst = dst_rank, .capacity = UINT64_MAX, .rate = UINT64_MAX, .uniform = TRUE,
                  .last_bytes = UINT64_MAX };
  h->route = src_rank == dst_rank ? NULL : topo_route(n->t, src_rank, dst_rank, &h->n_links);
  for (uint32_t k = 0; k < h->n_links; k++) {
    const topo_link *l = topo_get_link(n->t, h->route[k]);
    h->latency = sim_time_add_sat(h->latency, l->latency); /* as route_of */
    if (k > 0 && l->bw != h->capacity)
      h->uniform = FALSE;
    h->capacity = MIN(h->capacity, l->bw);
    h->rate = MIN(h->rate, topo_link_rate(n->t, l));
  }
}

/* net_analytic_at over a prepared route: net_send's tier A arithmetic
 * (net_analytic_queue, which a route of mixed bandwidths still calls; a
 * uniform one reuses the division of the last size). */
sim_time_ps net_hop_at(net *n, net_hop *h, uint64_t bytes, sim_time_ps at) {
  g_assert(n->tier == NET_TIER_ANALYTICAL);
  n->transfers++;
  if (h->n_links == 0)
    return at;
  for (uint32_t k = 0; k < h->n_links; k++)
    n->link_bytes[h->route[k]] += bytes;
  if (bytes == 0)
    return at + h->latency;
  sim_time_ps end;
  if (!h->uniform) {
    end = net_analytic_queue(n, h->route, h->n_links, bytes, at);
  } else {
    wisp_bw_Bps bw = h->capacity;
    if (bytes != h->last_bytes) {
      unsigned __int128 num = (unsigned __int128)bytes * (unsigned __int128)SIM_PS_PER_S;
      unsigned __int128 qq = num / bw;
      gboolean fits = qq <= (unsigned __int128)NET_TIME_CAP; /* else net_time_add flags it */
      h->q = fits ? (sim_time_ps)qq : NET_TIME_CAP + 1;
      h->r = fits ? (uint64_t)(num - qq * bw) : 0;
      h->last_bytes = bytes;
    }
    end = at;
    for (uint32_t k = 0; k < h->n_links; k++) { /* as net_analytic_queue */
      net_link_free *f = &n->link_free[h->route[k]];
      if (f->at < at || (f->at == at && f->rem == 0)) {
        f->at = at;
        f->rem = 0;
      }
      f->at = net_time_add(n, f->at, (unsigned __int128)h->q);
      if (h->r >= bw - f->rem) {
        f->rem = h->r - (bw - f->rem);
        f->at++;
      } else {
        f->rem += h->r;
      }
      sim_time_ps fin = f->at + (f->rem >= bw - f->rem);
      if (fin > end)
        end = fin;
    }
  }
  if (h->rate < h->capacity)
    end = MAX(end, net_time_add(n, at, (unsigned __int128)wisp_transfer_ps(bytes, h->rate)));
  return end + h->latency;
}

gboolean net_hop_alike(const net *n, const net_hop *a, const net_hop *b) {
  if (a->n_links != b->n_links || a->latency != b->latency || a->rate != b->rate || a->capacity != b->capacity)
    return FALSE;
  for (uint32_t k = 0; k < a->n_links; k++)
    if (topo_get_link(n->t, a->route[k])->bw != topo_get_link(n->t, b->route[k])->bw)
      return FALSE;
  return TRUE;
}

void net_hop_mirror(net *n, const net_hop *from, const net_hop *to, uint64_t bytes, uint64_t count) {
  g_assert(n->tier == NET_TIER_ANALYTICAL && from->n_links == to->n_links);
  n->transfers += count;
  for (uint32_t k = 0; k < to->n_links; k++) {
    n->link_free[to->route[k]] = n->link_free[from->route[k]];
    n->link_bytes[to->route[k]] += bytes;
  }
}

void net_uncredit(net *n, int src_rank, int dst_rank, uint64_t bytes, uint64_t count) {
  g_assert(n->transfers >= count);
  n->transfers -= count;
  uint32_t n_links = 0;
  const uint32_t *route = src_rank == dst_rank ? NULL : topo_route(n->t, src_rank, dst_rank, &n_links);
  for (uint32_t k = 0; k < n_links; k++) {
    g_assert(n->link_bytes[route[k]] >= bytes);
    n->link_bytes[route[k]] -= bytes;
  }
}

void net_route_reset(net *n, int src_rank, int dst_rank, sim_time_ps t) {
  g_assert(n->tier == NET_TIER_ANALYTICAL);
  uint32_t n_links = 0;
  const uint32_t *route = src_rank == dst_rank ? NULL : topo_route(n->t, src_rank, dst_rank, &n_links);
  for (uint32_t k = 0; k < n_links; k++)
    n->link_free[route[k]] = (net_link_free){ t, 0 };
}

uint32_t net_claim_new(net *n, net_claim_fn fn, void *ctx) {
  g_assert(n->tier == NET_TIER_ANALYTICAL && fn != NULL);
  if (n->claims == NULL) {
    n->claims = g_array_new(FALSE, TRUE, sizeof(net_claim));
    n->link_claim = g_new0(uint32_t, n->n_links ? n->n_links : 1);
  }
  guint i;
  for (i = 0; i < n->claims->len; i++) /* a free entry (few claims are held at once) */
    if (!g_array_index(n->claims, net_claim, i).alive)
      break;
  if (i == n->claims->len)
    g_array_set_size(n->claims, i + 1);
  net_claim *cl = &g_array_index(n->claims, net_claim, i);
  if (cl->links == NULL)
    cl->links = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  g_array_set_size(cl->links, 0);
  cl->fn = fn;
  cl->ctx = ctx;
  cl->alive = TRUE;
  n->claims_held++;
  return i + 1;
}

void net_claim_route(net *n, uint32_t claim, int src_rank, int dst_rank) {
  net_claim *cl = &g_array_index(n->claims, net_claim, claim - 1);
  g_assert(cl->alive);
  uint32_t n_links = 0;
  const uint32_t *route = src_rank == dst_rank ? NULL : topo_route(n->t, src_rank, dst_rank, &n_links);
  for (uint32_t k = 0; k < n_links; k++) {
    g_assert(n->link_claim[route[k]] == 0);
    n->link_claim[route[k]] = claim;
    g_array_append_val(cl->links, route[k]);
  }
}

void net_claim_release(net *n, uint32_t claim) {
  net_claim *cl = &g_array_index(n->claims, net_claim, claim - 1);
  g_assert(cl->alive);
  for (guint i = 0; i < cl->links->len; i++)
    n->link_claim[g_array_index(cl->links, uint32_t, i)] = 0;
  cl->alive = FALSE;
  n->claims_held--;
}

void net_claim_link(net *n, uint32_t claim, uint32_t link) {
  net_claim *cl = &g_array_index(n->claims, net_claim, claim - 1);
  g_assert(cl->alive && link < n->n_links && n->link_claim[link] == 0);
  n->link_claim[link] = claim;
  g_array_append_val(cl->links, link);
}

void net_link_rewind(net *n, uint32_t link, sim_time_ps t, uint64_t bytes) {
  g_assert(n->tier == NET_TIER_ANALYTICAL && link < n->n_links);
  n->link_free[link] = (net_link_free){ t, 0 };
  n->link_bytes[link] = bytes;
}

void net_transfers_uncredit(net *n, uint64_t count) {
  g_assert(count <= n->transfers);
  n->transfers -= count;
}

void net_link_fifo(const net *n, uint32_t link, sim_time_ps *at, uint64_t *rem) {
  g_assert(n->tier == NET_TIER_ANALYTICAL && link < n->n_links);
  *at = n->link_free[link].at;
  *rem = n->link_free[link].rem;
}

void net_link_charge(net *n, uint32_t link, sim_time_ps at, uint64_t rem, uint64_t bytes) {
  g_assert(n->tier == NET_TIER_ANALYTICAL && link < n->n_links);
  n->link_free[link] = (net_link_free){ at, rem };
  n->link_bytes[link] += bytes;
}

void net_transfers_credit(net *n, uint64_t count) {
  n->transfers += count;
}
