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
/* Tier A without a transfer record, for a caller that keeps its own
 * state per transfer: charges the transfer exactly as net_send() does on
 * tier A (claims yielded, counters, link FIFOs) and returns the instant
 * net_send()'s done() would run there.  The caller posts its own event
 * at that instant, in the order it would have called net_send() (the
 * engine orders equal instants by insertion); an instant at or past
 * SIM_TIME_LIMIT is flagged by the engine as net_send()'s would be.
 * Saves the record (about 170 bytes) and the cancel handle of every
 * transfer in flight.  O(route length). */
sim_time_ps net_send_arrival(net *n, int src_rank, int dst_rank, uint64_t bytes);
/* net_send and net_send_arrival with at most `less` ps taken off the
 * route's latency (the route then pays max(latency - less, 0)): for a
 * communication library whose own per-hop figures already hold part of
 * the wire's latency (collectives' NCCL plan, coll_run.h wire_ref).  less
 * 0 is net_send / net_send_arrival.  Same costs. */
void net_send_less(net *n, int src_rank, int dst_rank, uint64_t bytes, sim_time_ps less,
                   net_done_fn done, void *ctx, uint64_t cookie);
sim_time_ps net_send_arrival_less(net *n, int src_rank, int dst_rank, uint64_t bytes, sim_time_ps less);

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
 * with the new rates backdated to the flows' own first change (net_flow.c, and
 * doc/network-models.md for the error bound).  Set it before the first
 * send. */
void net_set_flow_quantum(net *n, sim_time_ps quantum);
/* Tier B aggregation of symmetric flows (on by default; exact mode only,
 * a quantum turns it off): flows that enter the solver at one instant with
 * one size and bottleneck, whose routes have one shape and load their
 * links evenly and alone, are one solver variable with the flows per link
 * as its consumption until they finish or another flow enters one of
 * their links (net_flow.c, "Aggregation").  Off: every transfer is its own
 * flow.  Set it before the first send.  The statistics: aggregates
 * formed, transfers they carried, aggregates split back into flows. */
void net_set_flow_aggregation(net *n, gboolean on);
void net_get_aggregation_stats(const net *n, uint64_t *aggregates, uint64_t *aggregated, uint64_t *splits);
/* Everything the aggregation did, for reports and benchmarks: the groups
 * of flows that entered together, the aggregates and the flows they
 * carried, the splits and the flows they released, and the flows that
 * entered one by one, by reason (each flow counted once, under the first
 * reason its class met).  With aggregation on, flows_entered = aggregated
 * + the four fallbacks; all zero on tier A. */
typedef struct {
  uint64_t flows_entered;   /* transfers that entered the solver (tier B, bytes > 0) */
  uint64_t groups;          /* groups of flows entering at one instant with one size and bottleneck */
  uint64_t aggregates;      /* classes entered as one variable */
  uint64_t aggregated;      /* transfers those carried */
  uint64_t splits;          /* aggregates split back into flows */
  uint64_t split_flows;     /* transfers those splits released */
  uint64_t alone;           /* fallback: the only flow of its route shape in its group */
  uint64_t busy;            /* fallback: a link of the class carried another flow or aggregate */
  uint64_t mixed;           /* fallback: the class used one link at two route positions */
  uint64_t uneven;          /* fallback: links of one position carried unequal counts of the class */
} net_agg_stats;
void net_get_agg_stats(const net *n, net_agg_stats *out);
sim_time_ps net_get_flow_quantum(const net *n);

/* ---- Tier A replay of a known transfer sequence (collectives' ring
 * recurrence, collectives/coll.c) ----
 * A caller that can compute, in time order per link, the issue times of a
 * set of transfers whose links carry nothing else can charge them without
 * events: net_analytic_at() queues one transfer issued at `at` (>= the
 * link's last issue) exactly as net_send() would on tier A (same FIFO
 * state, byte and transfer counters) and returns the time its done()
 * would run.  A claim marks links as used by such a sequence: net_send()
 * of any other transfer over a claimed link first calls the claim's
 * callback (once), which must bring the links to the state net_send()
 * would have left at that time (net_route_reset, net_uncredit and
 * net_analytic_at again) and release the claim; only then is the new
 * transfer queued.  Tier A only.  Costs: O(route length) each; net_send
 * pays O(route length) more while any claim is held. */
typedef void (*net_claim_fn)(void *ctx);
/* Whether link l is idle at t (its FIFO has served everything queued:
 * what net_send would see at t) and unclaimed.  O(1). */
gboolean net_link_idle(const net *n, uint32_t link, sim_time_ps t);
sim_time_ps net_analytic_at(net *n, int src_rank, int dst_rank, uint64_t bytes, sim_time_ps at);
/* The same for many transfers over one route: net_hop_init once, then
 * net_hop_at per transfer (the route's latency and bottleneck looked up
 * once; S * 10^12 / bw kept for the last size, so transfers of one size
 * pay no division).  A net_hop is valid while its net is. */
typedef struct {
  const uint32_t *route;
  uint32_t n_links;
  int src, dst;
  sim_time_ps latency;
  wisp_bw_Bps capacity, rate;
  gboolean uniform;         /* every link of the route has bandwidth `capacity` */
  uint64_t last_bytes;      /* the cached division: last_bytes * 10^12 / capacity = q + r / capacity */
  sim_time_ps q;
  uint64_t r;
} net_hop;
void net_hop_init(const net *n, int src_rank, int dst_rank, net_hop *h);
sim_time_ps net_hop_at(net *n, net_hop *h, uint64_t bytes, sim_time_ps at);
/* Whether two prepared routes are alike for tier A: as many links, of
 * equal bandwidths position by position, equal total latency and stream
 * rate; then equal transfer sequences leave their links in equal states.
 * O(route length). */
gboolean net_hop_alike(const net *n, const net_hop *a, const net_hop *b);
/* Charges `to` with what `from` was charged by a sequence of `count`
 * transfers of `bytes` in total, for an alike route that carried the same
 * sequence: copies the links' FIFO state position by position and credits
 * the counters.  O(route length). */
void net_hop_mirror(net *n, const net_hop *from, const net_hop *to, uint64_t bytes, uint64_t count);
/* Takes back the counters of `count` transfers of `bytes` bytes in total
 * on the route src -> dst (net_link_bytes, net_transfers). */
void net_uncredit(net *n, int src_rank, int dst_rank, uint64_t bytes, uint64_t count);
/* Sets every link of the route src -> dst idle as of t. */
void net_route_reset(net *n, int src_rank, int dst_rank, sim_time_ps t);
/* A new claim (never 0) and the links of a route it covers; release it
 * with net_claim_release (its links become free). */
uint32_t net_claim_new(net *n, net_claim_fn fn, void *ctx);
void net_claim_route(net *n, uint32_t claim, int src_rank, int dst_rank);
void net_claim_release(net *n, uint32_t claim);
/* One link for a claim (it must be unclaimed): for a sequence whose
 * links are not one route's.  O(1) amortized. */
void net_claim_link(net *n, uint32_t claim, uint32_t link);
/* Takes back a sequence charged with net_hop_at over links that were idle
 * at t and nobody else used since: sets link idle as of t with `bytes` on
 * its counter (net_link_bytes), and takes `count` transfers off the
 * transfer counter (net_transfers).  Tier A only.  O(1) each. */
void net_link_rewind(net *n, uint32_t link, sim_time_ps t, uint64_t bytes);
void net_transfers_uncredit(net *n, uint64_t count);
/* A charged sequence's effect on link l, to apply it again later
 * (collectives' tree replay reuses a run's result for the next identical
 * run on idle links): net_link_fifo reads the FIFO state (the time it has
 * served every byte queued, and the remainder in 1/bw ps units);
 * net_link_charge sets it and adds `bytes` to the link's counter;
 * net_transfers_credit adds `count` transfers.  Tier A only.  O(1). */
void net_link_fifo(const net *n, uint32_t link, sim_time_ps *at, uint64_t *rem);
void net_link_charge(net *n, uint32_t link, sim_time_ps at, uint64_t rem, uint64_t bytes);
void net_transfers_credit(net *n, uint64_t count);

G_END_DECLS
#endif
