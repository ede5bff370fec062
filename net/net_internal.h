/* net_internal.h: what the files of net/ share behind net.h (not
 * installed): the transfer record, the net itself and the functions one
 * file of the folder calls in another.  The files, top down:
 *   net.c           tier names and settings, the net's life, net_send;
 *   net_analytic.c  tier A: the link FIFOs, prepared hops and claims;
 *   net_group.c     tier B: flows entering together, checked for symmetry;
 *   net_flow.c      tier B: flows and aggregates in the max-min solver;
 *   net_bundle.c    tier B: the link sets aggregates share (bundles);
 *   net_xfer.c      the pool of transfer records.
 * Calls go down this list only.
 */
#ifndef WISP_NET_INTERNAL_H
#define WISP_NET_INTERNAL_H

#include "net/net.h"
#include "net/lmm.h"

#include <stddef.h>

G_BEGIN_DECLS

/* One transfer.  The first 64 bytes hold what a re-solve reads for every
 * flow whose rate changed (one cache line per flow); the rest is read at
 * start and completion only. */
typedef struct {
  double rate;              /* bytes/s, current */
  double remaining;         /* bytes */
  sim_time_ps last_update;  /* remaining is exact as of this time */
  sim_time_ps end;          /* predicted finish at the current rate */
  sim_time_ps ev_at;        /* time of the pending event */
  sim_event_id ev;          /* the one pending event of this transfer */
  sim_time_ps flow_start;   /* entry into the solver */
  uint32_t var;             /* solver variable, LMM_NONE outside the solver */
  uint8_t single_rate;      /* no rate change since flow_start */
  uint8_t alive;
  uint8_t capped;           /* a link's stream bandwidth sets the bottleneck (a rate bound) */
  /* cold */
  wisp_bw_Bps bottleneck;   /* minimum over the route of link and stream bandwidths */
  uint64_t bytes;
  net_done_fn done;
  void *ctx;
  uint64_t cookie;
  const uint32_t *route;
  uint32_t n_links;
  uint32_t next_free;
  uint32_t agg;             /* the aggregate this member rides in (NET_NO_AGG: none) */
  GArray *members;          /* an aggregate's member transfers (uint32_t), else NULL */
  float *mult;              /* an aggregate's flows per link, per route position */
  uint32_t *rep_route;      /* an aggregate's representative links (its route; owned) */
  uint64_t shape;           /* digest of the route's shape (route_of in net.c) */
  uint32_t shape_id;        /* the route's shape, interned: equal ids iff equal shapes */
  uint32_t bundle;          /* the bundle an aggregate rides */
} net_xfer;

#define NET_NO_AGG UINT32_MAX
#define NET_NO_BUNDLE UINT32_MAX

/* A bundle (net_bundle.c): the links one or more aggregates share, by
 * position.  Every link of position p carries the same flows of every
 * aggregate riding the bundle, so the solver sees position p through one
 * representative link, rep[p]; no flow outside the bundle's aggregates
 * uses any of its links. */
typedef struct {
  GArray *links;            /* uint32_t: every link of the bundle */
  GArray *aggs;             /* uint32_t: the aggregates riding it; NULL for a free slot */
  uint32_t n_pos;
  uint32_t *rep;            /* per position: the representative link */
  uint32_t *width;          /* per position: how many links */
  uint32_t next_free;
} net_bundle;

/* Flows waiting out their latency phase that will enter the solver at
 * the same instant with the same size and bottleneck (an aggregation
 * candidate, see the top comment). */
typedef struct {
  sim_time_ps at;
  uint64_t bytes;
  wisp_bw_Bps bottleneck;
  gboolean capped;
} net_group_key;

typedef struct {
  net_group_key key;
  GArray *members;          /* uint32_t transfer slots, in send order */
  sim_event_id ev;
} net_group;

G_STATIC_ASSERT(offsetof(net_xfer, bottleneck) <= 64);

/* Tier A: when a link has served every byte queued on it, exactly:
 * at + rem / bw(l) picoseconds, 0 <= rem < bw(l). */
typedef struct {
  sim_time_ps at;
  uint64_t rem;
} net_link_free;

/* The route of one of a rank's last NET_MEMO_WAYS destinations and what
 * net_send derives from it (a collective's member sends to the same peers
 * step after step; a rank in a TP and a DP group alternates between two,
 * and a member of NCCL's trees and rings on a multi-node preset sends to
 * up to four: its tree parent and children and its ring successor). */
#define NET_MEMO_WAYS 4
typedef struct {
  int dst;                  /* -1: none yet */
  uint32_t n_links;
  const uint32_t *route;
  sim_time_ps latency;
  wisp_bw_Bps rate;         /* of one stream alone (the bottleneck) */
  uint64_t shape;
  uint32_t shape_id;        /* tier B: the interned shape (net_shape_id) */
  uint8_t capped;           /* a stream bandwidth below every link's capacity */
} net_route_memo;

/* A link's aggregation state, in one place, 16 bytes (class_check reads
 * all of it for every link of a class).  Positions are 16-bit: a class
 * whose routes are longer than NET_AGG_MAX_POS links enters flow by flow
 * (net_group.c). */
typedef struct {
  uint32_t use;             /* scratch: flows of the class being checked on the link */
  uint32_t bundle;          /* the bundle it belongs to, NET_NO_BUNDLE when none */
  uint32_t flows;           /* flows of their own in the solver on the link (not aggregates) */
  uint16_t pos;             /* scratch: the route position the class uses it at */
  uint16_t bpos;            /* in a bundle: its position there */
} net_link_agg;

#define NET_AGG_MAX_POS UINT16_MAX
G_STATIC_ASSERT(sizeof(net_link_agg) == 16);

struct net {
  sim_engine *sim;
  const topo *t;
  net_tier tier;
  uint32_t n_links;
  uint64_t *link_bytes;
  uint64_t transfers;
  net_route_memo *memo;     /* per source rank, its last NET_MEMO_WAYS destinations */
  lmm_system *lmm;          /* tier B only */
  uint32_t *cnst_of_link;
  uint32_t *xf_of_var;      /* solver variable id -> transfer slot */
  size_t cap_xf_of_var;
  net_xfer *xf;
  size_t n_xf, cap_xf;
  uint32_t xf_free;
  size_t active_flows;
  gboolean solve_pending;
  sim_event_id solve_ev;
  uint64_t flow_events;
  net_link_free *link_free; /* tier A only: per link, when its FIFO has served all queued bytes */
  /* Approximate mode (quantum > 0; see the top comment). */
  sim_time_ps quantum;      /* 0: exact, every change solved at its instant */
  sim_time_ps last_solve;   /* time of the previous solve, -1 before the first */
  sim_time_ps batch_first;  /* first start or finish since the previous solve */
  sim_time_ps *link_first;  /* per link: the same on that link, -1 if none */
  uint32_t *touched;        /* links whose link_first is set */
  size_t n_touched;
  /* Aggregation (tier B, exact mode; see the top comment). */
  gboolean aggregate;
  GHashTable *groups;       /* net_group_key -> net_group (pending latency phases) */
  GHashTable *shapes;       /* interned route shapes (net_shape_id), value: id + 1 */
  net_group *last_group;    /* the group the last transfer joined (NULL: none pending) */
  net_link_agg *link_st;    /* per link: its aggregation state */
  GArray *bundles;          /* net_bundle, index = id */
  uint32_t bundle_free;     /* free list of bundle slots */
  net_agg_stats agg_stats;  /* net_get_agg_stats */
  uint32_t live_aggs;        /* aggregates in the solver */
  /* Claims (tier A, net.h): per link the claim holding it (0: none); the
   * claims, index = id - 1. */
  uint32_t *link_claim;
  GArray *claims;           /* net_claim */
  uint32_t claims_held;
};

typedef struct {
  net_claim_fn fn;
  void *ctx;
  GArray *links;            /* uint32_t */
  gboolean alive;
} net_claim;

/* net_bundle.c: bundles.  net_bundle_new makes one from the routes of
 * the class mem[0..m) (which class_check found symmetric on free links):
 * its positions are the route positions, its representatives mem[0]'s
 * links; net_bundle_attach adds aggregate a to bundle b; net_bundle_detach
 * takes it off and frees the bundle (its links become free) when it was
 * the last.  O(m x route length), O(1), O(aggregates of b + links of b). */
uint32_t net_bundle_new(net *n, const uint32_t *mem, uint32_t m);
void net_bundle_attach(net *n, uint32_t b, uint32_t a);
void net_bundle_detach(net *n, uint32_t b, uint32_t a);
void net_bundles_free(net *n);
static inline net_bundle *net_bundle_at(net *n, uint32_t b) { return &g_array_index(n->bundles, net_bundle, b); }

/* net_xfer.c: the transfer pool.  net_xf_alloc returns a fresh live
 * slot; net_xf_complete releases slot i and then calls its completion
 * (the callback may start transfers that reuse the slot).  O(1)
 * amortized. */
uint32_t net_xf_alloc(net *n);
void net_xf_complete(net *n, uint32_t i);

/* net_flow.c: tier B.  net_flow_ev_start is the event that ends a
 * transfer's latency phase (arg: its slot) and enters it in the solver;
 * net_flow_enter does the same now; net_flow_agg_enter makes the class
 * mem[0..m) one aggregate entering now, taking ownership of mult (its
 * flows per link, per route position), riding bundle `bundle` with route
 * position k on the bundle's position posmap[k] (NET_NO_BUNDLE: a new
 * bundle of its own links; posmap is then ignored). */
void net_flow_ev_start(sim_engine *sim, void *ctx, uint64_t arg);
void net_flow_enter(net *n, uint32_t i);
void net_flow_agg_enter(net *n, const uint32_t *mem, uint32_t m, float *mult, uint32_t bundle,
                        const uint32_t *posmap);

/* net_group.c: tier B flows whose latency phases end together.
 * net_groups_new makes the table of pending groups; net_groups_free
 * withdraws their events and frees them; net_group_join puts slot i,
 * whose latency phase ends at `at`, in its group. */
GHashTable *net_groups_new(void);
void net_groups_free(net *n);
void net_group_join(net *n, uint32_t i, sim_time_ps at);
/* Route shapes (net_group.c): net_shapes_new makes the table;
 * net_shape_id returns the id of the shape (length, and per position the
 * link's bandwidth and dimension) of route[0..n_links), whose digest is
 * `digest`, interning it on first sight: two routes have the same id iff
 * they have the same shape.  O(route length) plus one hash lookup. */
GHashTable *net_shapes_new(void);
uint32_t net_shape_id(net *n, const uint32_t *route, uint32_t n_links, uint64_t digest);

/* net_analytic.c: tier A.  net_analytic_queue queues `bytes` on every
 * link of the route behind what each already serves and returns when the
 * last link has served them; net_claims_yield calls the claims on a route
 * before another transfer uses it. */
sim_time_ps net_analytic_queue(net *n, const uint32_t *route, uint32_t n_links, uint64_t bytes, sim_time_ps now);
void net_claims_yield(net *n, const uint32_t *route, uint32_t n_links);

G_END_DECLS
#endif
