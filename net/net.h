/* net.h: the network interface between communication (collectives,
 * point-to-point) and the fidelity tiers.
 *
 * net_send() moves `bytes` from one rank to another over the topology's
 * route and calls done() when the last byte has arrived.  Tier A
 * (analytical) charges sum(latency) + bytes / bottleneck bandwidth, after
 * queueing the bytes in FIFO order on every link of the route behind the
 * traffic already there (each link serves at its own bandwidth), so it
 * never moves more through a link than the link can carry.  Tier B (flow)
 * pays the route latency first, then shares link bandwidth max-min fairly
 * with every other active flow.  Without contention the two agree to the
 * picosecond.  Both tiers schedule their completions on the simulation's
 * one event queue.
 */
#ifndef WISP_NET_H
#define WISP_NET_H

#include "simcore/sim.h"
#include "topologies/topo.h"
#include "net/lmm.h"

G_BEGIN_DECLS

typedef struct net net;
typedef void (*net_done_fn)(sim_engine *sim, void *ctx, uint64_t cookie);

typedef enum {
  NET_TIER_ANALYTICAL = 0, /* tier A: alpha-beta, no contention */
  NET_TIER_FLOW = 1,       /* tier B: max-min fair flows */
} net_tier;

const char *net_tier_name(net_tier t);
gboolean net_tier_from_name(const char *s, net_tier *out);

/* The net section of a config (config/cfg.h): `model:` (the fidelity
 * tier, analytical by default) and `flow_quantum:` (the flow tier's
 * quantum, default 0 = exact: with q > 0 the flow tier solves at most once
 * per q, batching the starts and finishes in between, and backdates the
 * new rates; approximate mode in doc/network-models.md). */
typedef struct {
  net_tier tier;
  sim_time_ps flow_quantum;
} net_settings;

/* Reads the net section of doc, which the document validated when it was
 * loaded; doc NULL gives the defaults.  O(log keys). */
void net_settings_from_config(const cfg_doc *doc, net_settings *out);
/* The tier the config of t asks for (net_settings_from_config of
 * topo_config(t)). */
net_tier net_default_tier(const topo *t);

/* A network over t at the given tier; the flow quantum starts at the one
 * of t's config (net_settings_from_config). */
net *net_new(sim_engine *sim, const topo *t, net_tier tier);
/* Frees the net, withdrawing its pending events; free it after the last
 * sim_run and before the engine (sim.h, teardown). */
void net_free(net *n);
net_tier net_get_tier(const net *n);
const topo *net_get_topo(const net *n);

/* Starts a transfer now.  bytes may be 0 (pays latency only); src == dst
 * completes after zero time (scheduled, never called re-entrantly). */
void net_send(net *n, int src_rank, int dst_rank, uint64_t bytes,
              net_done_fn done, void *ctx, uint64_t cookie);

/* Statistics for reports. */
uint64_t net_link_bytes(const net *n, uint32_t link);
uint64_t net_transfers(const net *n);

/* The flow tier (tier B, doc/network-models.md): flows currently in the
 * solver; flow start and finish events so far; the solver's counters
 * (zero for tier A); the full re-solve debug switch (no effect on tier A). */
size_t net_active_flows(const net *n);
uint64_t net_flow_events(const net *n);
void net_get_solver_stats(const net *n, lmm_stats *out);
void net_set_full_solve(net *n, gboolean full);
/* Tier B quantum in ps (0 = exact; default: the config's flow_quantum).
 * With q > 0 the flow tier runs its approximate mode: solves at least q
 * apart, each batching the starts and finishes since the previous one,
 * with the new rates backdated to the flows' own first change (net.c, and
 * doc/network-models.md for the error bound).  Set it before the first
 * send. */
void net_set_flow_quantum(net *n, sim_time_ps quantum);
sim_time_ps net_get_flow_quantum(const net *n);

G_END_DECLS
#endif
