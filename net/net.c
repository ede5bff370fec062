/* net.c: the network fidelity tiers behind net.h: tier names and
 * settings, the net's life and net_send, which hands each transfer to its
 * tier.  Tier A (analytical, link FIFOs) is net_analytic.c; tier B (flow,
 * max-min fair) is net_flow.c with its groups of symmetric flows in
 * net_group.c; both take transfer records from net_xfer.c's pool
 * (net_internal.h lists the files).
 *
 * Costs: a send is O(route length) plus queue operations; a solve costs
 * the component re-solve (lmm.h) plus O(log queue) per flow whose rate
 * changed.  Transfer records come from a pool with a free list; a
 * steady-state run does not allocate.
 *
 * Per-link byte counters (net_link_bytes) are credited with the transfer's
 * full size on every link of its route when the transfer starts, in both
 * tiers.  Zero-byte transfers pay latency only and never enter the solver;
 * src == dst (or an empty route) completes after zero time, through the
 * queue.
 */
#include "config.h"

#include "net/net_internal.h"

#include <string.h>

const char *net_tier_name(net_tier t) {
  switch (t) {
  case NET_TIER_ANALYTICAL: return "analytical";
  case NET_TIER_FLOW: return "flow";
  }
  return "unknown";
}

gboolean net_tier_from_name(const char *s, net_tier *out) {
  if (s == NULL) return FALSE;
  if (strcmp(s, "analytical") == 0) {
    *out = NET_TIER_ANALYTICAL;
    return TRUE;
  }
  if (strcmp(s, "flow") == 0) {
    *out = NET_TIER_FLOW;
    return TRUE;
  }
  return FALSE;
}

void net_settings_from_config(const cfg_doc *doc, net_settings *out) {
  out->tier = NET_TIER_ANALYTICAL;
  out->flow_quantum = 0;
  if (doc == NULL) return;
  /* The document accepted only analytical or flow, and a valid time. */
  if (!net_tier_from_name(cfg_get_or_default(doc, "model"), &out->tier)) out->tier = NET_TIER_ANALYTICAL;
  if (!cfg_get_time(doc, "flow_quantum", &out->flow_quantum)) out->flow_quantum = 0;
}

net_tier net_default_tier(const topo *t) {
  net_settings s;
  net_settings_from_config(topo_config(t), &s);
  return s.tier;
}

net *net_new(sim_engine *sim, const topo *t, net_tier tier) {
  g_assert(sim && t);
  g_assert(tier == NET_TIER_ANALYTICAL || tier == NET_TIER_FLOW);
  net *n = g_new0(net, 1);
  n->sim = sim;
  n->t = t;
  n->tier = tier;
  net_settings cfg;
  net_settings_from_config(topo_config(t), &cfg);
  n->quantum = cfg.flow_quantum;
  n->n_links = topo_n_links(t);
  n->link_bytes = g_new0(uint64_t, n->n_links ? n->n_links : 1);
  int ranks = topo_n_ranks(t);
  n->memo = g_new(net_route_memo, NET_MEMO_WAYS * (size_t)(ranks > 0 ? ranks : 1));
  for (size_t r = 0; r < NET_MEMO_WAYS * (size_t)ranks; r++)
    n->memo[r].dst = -1;
  n->xf_free = UINT32_MAX;
  if (tier == NET_TIER_ANALYTICAL) n->link_free = g_new0(net_link_free, n->n_links ? n->n_links : 1);
  n->last_solve = -1;
  if (tier == NET_TIER_FLOW) {
    n->lmm = lmm_system_new();
    n->cnst_of_link = g_new(uint32_t, n->n_links ? n->n_links : 1);
    n->link_first = g_new(sim_time_ps, n->n_links ? n->n_links : 1);
    n->touched = g_new(uint32_t, n->n_links ? n->n_links : 1);
    for (uint32_t l = 0; l < n->n_links; l++) {
      const topo_link *k = topo_get_link(t, l);
      g_assert(k->bw > 0);
      n->cnst_of_link[l] = lmm_constraint_new(n->lmm, (double)k->bw);
      n->link_first[l] = -1;
    }
    n->aggregate = TRUE;
    n->groups = net_groups_new();
    n->shapes = net_shapes_new();
    n->link_st = g_new0(net_link_agg, n->n_links ? n->n_links : 1);
    for (uint32_t l = 0; l < n->n_links; l++)
      n->link_st[l].bundle = NET_NO_BUNDLE;
  }
  return n;
}

void net_free(net *n) {
  if (!n) return;
  /* Pending events point at this net: withdraw them. */
  for (size_t i = 0; i < n->n_xf; i++)
    if (n->xf[i].alive && n->xf[i].ev != SIM_EVENT_NONE) sim_cancel(n->sim, n->xf[i].ev);
  if (n->solve_pending) sim_cancel(n->sim, n->solve_ev);
  if (n->groups != NULL)
    net_groups_free(n);
  if (n->shapes != NULL)
    g_hash_table_destroy(n->shapes);
  for (size_t i = 0; i < n->n_xf; i++) {
    if (n->xf[i].members != NULL)
      g_array_free(n->xf[i].members, TRUE);
    g_free(n->xf[i].mult);
    g_free(n->xf[i].rep_route);
  }
  net_bundles_free(n);
  g_free(n->link_st);
  lmm_system_free(n->lmm);
  g_free(n->cnst_of_link);
  g_free(n->link_first);
  g_free(n->touched);
  g_free(n->xf_of_var);
  g_free(n->link_bytes);
  g_free(n->memo);
  g_free(n->link_free);
  g_free(n->xf);
  if (n->claims != NULL) {
    for (guint i = 0; i < n->claims->len; i++)
      if (g_array_index(n->claims, net_claim, i).links != NULL)
        g_array_free(g_array_index(n->claims, net_claim, i).links, TRUE);
    g_array_free(n->claims, TRUE);
  }
  g_free(n->link_claim);
  g_free(n);
}

net_tier net_get_tier(const net *n) { return n->tier; }
const topo *net_get_topo(const net *n) { return n->t; }

uint64_t net_link_bytes(const net *n, uint32_t link) {
  g_assert(link < n->n_links);
  return n->link_bytes[link];
}

uint64_t net_transfers(const net *n) { return n->transfers; }

size_t net_active_flows(const net *n) { return n->active_flows; }

uint64_t net_flow_events(const net *n) { return n->flow_events; }

void net_set_flow_quantum(net *n, sim_time_ps quantum) {
  g_assert(quantum >= 0 && !n->solve_pending);
  n->quantum = quantum;
}

sim_time_ps net_get_flow_quantum(const net *n) { return n->quantum; }

void net_set_full_solve(net *n, gboolean full) {
  if (n->lmm) lmm_set_full_solve(n->lmm, full);
}

void net_get_solver_stats(const net *n, lmm_stats *out) {
  if (n->lmm) lmm_get_stats(n->lmm, out);
  else *out = (lmm_stats){0};
}

static void ev_done(sim_engine *sim, void *ctx, uint64_t arg) {
  (void)sim;
  net *n = ctx;
  n->xf[arg].ev = SIM_EVENT_NONE;
  net_xf_complete(n, (uint32_t)arg);
}

/* The route src -> dst (src != dst) and its latency, stream rate, whether
 * that rate is below the links' capacity, and its shape (digest, and on
 * tier B the interned id), from src's NET_MEMO_WAYS memo entries (most
 * recently used first: a hit moves to the front) or computed and
 * memoized at the front, dropping the least recently used.  O(1) when src
 * sent to dst among its last NET_MEMO_WAYS destinations, else O(route
 * length) plus topo_route and, on tier B, one hash lookup. */
static const net_route_memo *route_of(net *n, int src, int dst) {
  net_route_memo *m = &n->memo[NET_MEMO_WAYS * (size_t)src];
  if (m[0].dst == dst)
    return &m[0];
  uint32_t j = 1;
  while (j < NET_MEMO_WAYS && m[j].dst != dst)
    j++;
  gboolean hit = j < NET_MEMO_WAYS;
  if (!hit)
    j = NET_MEMO_WAYS - 1;
  net_route_memo found = m[j];
  memmove(&m[1], &m[0], j * sizeof *m);
  m[0] = found;
  if (hit)
    return &m[0];
  m->dst = dst;
  m->route = topo_route(n->t, src, dst, &m->n_links);
  m->latency = 0;
  wisp_bw_Bps capacity = UINT64_MAX;
  m->rate = UINT64_MAX;
  m->shape = wisp_mix64(m->n_links);
  for (uint32_t k = 0; k < m->n_links; k++) {
    const topo_link *l = topo_get_link(n->t, m->route[k]);
    /* Saturates at the engine's limit (a config time may reach 2^63 ps),
     * so end + latency below stays in range and is refused as an overflow. */
    m->latency = sim_time_add_sat(m->latency, l->latency);
    capacity = MIN(capacity, l->bw);
    m->rate = MIN(m->rate, topo_link_rate(n->t, l));
    m->shape = wisp_mix64(m->shape ^ l->bw ^ ((uint64_t)l->tier << 56));
  }
  m->capped = m->rate < capacity;
  m->shape_id = n->shapes != NULL ? net_shape_id(n, m->route, m->n_links, m->shape) : 0;
  return m;
}

/* A claimed link's sequence first catches up to now (claims: tier A's
 * replays of known sequences, net_analytic.c).  O(route length) while
 * a claim is held, else O(1). */
static void yield_claims(net *n, int src_rank, int dst_rank) {
  if (n->claims_held > 0) { /* a claimed link's sequence first catches up to now */
    uint32_t nl = 0;
    const uint32_t *rt = src_rank == dst_rank ? NULL : topo_route(n->t, src_rank, dst_rank, &nl);
    net_claims_yield(n, rt, nl);
  }
}

sim_time_ps net_send_arrival(net *n, int src_rank, int dst_rank, uint64_t bytes) {
  return net_send_arrival_less(n, src_rank, dst_rank, bytes, 0);
}

sim_time_ps net_send_arrival_less(net *n, int src_rank, int dst_rank, uint64_t bytes, sim_time_ps less) {
  g_assert(n->tier == NET_TIER_ANALYTICAL);
  g_assert(src_rank >= 0 && src_rank < topo_n_ranks(n->t));
  g_assert(dst_rank >= 0 && dst_rank < topo_n_ranks(n->t));
  yield_claims(n, src_rank, dst_rank);
  n->transfers++;
  sim_time_ps now = sim_now(n->sim);
  const net_route_memo *rm = src_rank == dst_rank ? NULL : route_of(n, src_rank, dst_rank);
  if (rm == NULL || rm->n_links == 0) /* same endpoint: zero time, through the queue */
    return now;
  for (uint32_t k = 0; k < rm->n_links; k++)
    n->link_bytes[rm->route[k]] += bytes;
  sim_time_ps latency = rm->latency - MIN(less, rm->latency);
  if (bytes == 0) /* latency only; occupies no link */
    return sim_time_add_sat(now, latency);
  /* The links serve the bytes at their capacity (FIFO); a capped stream
   * also takes at least S / its stream bandwidth, so concurrent capped
   * streams share a link's capacity as in tier B. */
  sim_time_ps end = net_analytic_queue(n, rm->route, rm->n_links, bytes, now);
  if (rm->capped)
    end = MAX(end, now + wisp_transfer_ps(bytes, rm->rate));
  return end + latency;
}

/* A transfer record from the pool with its completion and size.  O(1)
 * amortized. */
static uint32_t new_record(net *n, net_done_fn done, void *ctx, uint64_t cookie, uint64_t bytes) {
  uint32_t i = net_xf_alloc(n);
  net_xfer *x = &n->xf[i];
  x->done = done;
  x->ctx = ctx;
  x->cookie = cookie;
  x->bytes = bytes;
  return i;
}

void net_send(net *n, int src_rank, int dst_rank, uint64_t bytes,
              net_done_fn done, void *ctx, uint64_t cookie) {
  net_send_less(n, src_rank, dst_rank, bytes, 0, done, ctx, cookie);
}

void net_send_less(net *n, int src_rank, int dst_rank, uint64_t bytes, sim_time_ps less,
                   net_done_fn done, void *ctx, uint64_t cookie) {
  if (n->tier == NET_TIER_ANALYTICAL) {
    sim_time_ps at = net_send_arrival_less(n, src_rank, dst_rank, bytes, less);
    uint32_t i = new_record(n, done, ctx, cookie, bytes);
    n->xf[i].ev = sim_schedule_at(n->sim, at, ev_done, n, i);
    return;
  }
  g_assert(src_rank >= 0 && src_rank < topo_n_ranks(n->t));
  g_assert(dst_rank >= 0 && dst_rank < topo_n_ranks(n->t));
  yield_claims(n, src_rank, dst_rank);
  n->transfers++;
  uint32_t i = new_record(n, done, ctx, cookie, bytes);
  net_xfer *x = &n->xf[i];
  const net_route_memo *rm = src_rank == dst_rank ? NULL : route_of(n, src_rank, dst_rank);
  if (rm == NULL || rm->n_links == 0) { /* same endpoint: zero time, through the queue */
    x->ev = sim_schedule_after(n->sim, 0, ev_done, n, i);
    return;
  }
  const uint32_t *route = rm->route;
  uint32_t n_links = rm->n_links;
  sim_time_ps latency = rm->latency - MIN(less, rm->latency);
  for (uint32_t k = 0; k < n_links; k++)
    n->link_bytes[route[k]] += bytes;
  x->shape = rm->shape;
  x->shape_id = rm->shape_id;
  x->route = route;
  x->n_links = n_links;
  x->capped = rm->capped;
  x->bottleneck = rm->rate;
  if (bytes == 0) { /* latency only; occupies no link */
    x->ev = sim_schedule_after(n->sim, latency, ev_done, n, i);
    return;
  }
  if (n->aggregate && n->quantum == 0) {
    net_group_join(n, i, sim_now(n->sim) + latency);
    return;
  }
  x->ev = sim_schedule_after(n->sim, latency, net_flow_ev_start, n, i);
}

void net_set_flow_aggregation(net *n, gboolean on) {
  g_assert(n->groups == NULL || g_hash_table_size(n->groups) == 0);
  n->aggregate = on && n->tier == NET_TIER_FLOW;
}

void net_get_aggregation_stats(const net *n, uint64_t *aggregates, uint64_t *aggregated, uint64_t *splits) {
  *aggregates = n->agg_stats.aggregates;
  *aggregated = n->agg_stats.aggregated;
  *splits = n->agg_stats.splits;
}

void net_get_agg_stats(const net *n, net_agg_stats *out) { *out = n->agg_stats; }
