/* net.c: the network fidelity tiers behind net.h.
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
 * Tier B (flow, max-min fair).  A transfer first pays the route latency
 * sum_i latency(l_i) (the "latency phase"; SimGrid's network models do the
 * same), then enters the max-min solver (net/lmm.h) as a variable of weight
 * 1 on one constraint per link of its route (capacity = link bw).  Each
 * flow keeps its remaining bytes, its current rate and the time they were
 * last brought up to date; its predicted finish is one event in the
 * engine's queue.  Every flow start or finish marks the solver; one solve
 * event per simulated instant (coalescing all starts and finishes at that
 * picosecond) re-solves the touched component.  For each flow whose rate
 * changed, the remaining bytes are advanced at the old rate to now and
 * the predicted finish becomes
 *     now + ceil(remaining * 10^12 / rate)   picoseconds,
 * rounded up so that a flow never finishes early (up to a relative slack of
 * NET_CEIL_SLACK that absorbs the rounding of the double arithmetic, so a
 * mathematically integer duration is not pushed one picosecond late).  An
 * earlier finish cancels and replaces the pending event; a later one leaves
 * it in place, and when it fires it sees the finish still ahead and re-arms
 * itself there (lazy postponement: a flow whose rate drops several times
 * costs one queue operation, not one per drop).
 * Approximate mode (quantum q > 0: topology key `flow_quantum`,
 * net_set_flow_quantum).  Solves are at least q apart: a start or finish
 * at time t is solved at max(t, previous solve + q), so every start and
 * finish until then shares one solve (a batch).  The rates a solve changes
 * are backdated: each applies from the flow's change time, the first start
 * or finish on one of the flow's own links since the previous solve (the
 * batch's first one when none touched its links), never before the flow
 * entered the solver.  Its remaining bytes are advanced at the old rate to
 * that time and its finish is predicted from there; a flow the new rate
 * would have finished before the solve finishes at the solve.  So a batch
 * whose changes fall on one instant gives exact mode's rates from that
 * instant (only such early finishes move, by less than q), and a batch
 * spanning [e1, ek] (ek - e1 <= q) credits each flow, instead of the
 * sequence of max-min rates it should have had in that span, the max-min
 * rate of the batch's final flow set: at most q times its largest rate
 * change in bytes per batch.  Within a batch a link may also carry up to
 * the rates of flows that finished in it above capacity, or leave the
 * share of flows that arrived in it unused.  doc/network-models.md derives
 * this and gives measured errors.  q = 0, the default, is exact: every
 * change is solved at its instant and nothing is backdated.
 * Exactness with tier A: a flow whose rate has not changed since it entered
 * the solver and equals its bottleneck link's integer bandwidth finishes at
 *     start + wisp_transfer_ps(S, bottleneck)
 * computed in integers, so traffic without contention gives tier A's times
 * to the picosecond.
 * Aggregation (exact mode, on by default: net_set_flow_aggregation).  The
 * latency phases of transfers that will enter the solver at one instant
 * with one size and bottleneck end in one event (a group); there the
 * group's flows of one route shape that load their links evenly and alone
 * become one solver variable with a multiplicity (see "aggregation" below
 * for the rule and why it is exact), finishing in one event that completes
 * its members in send order.  A flow entering one of an aggregate's links
 * splits it first.  A collective step of N symmetric transfers then costs
 * one variable and two events instead of N and 2N (regress/
 * test_net_aggregate compares both against each other transfer by
 * transfer).
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

#include "net/net.h"
#include "net/lmm.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* Relative slack of the round-up of flow durations; see the top comment. */
#define NET_CEIL_SLACK 1e-12

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
} net_xfer;

#define NET_NO_AGG UINT32_MAX

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

/* Tier A: when a link has served every byte queued on it, exactly:
 * at + rem / bw(l) picoseconds, 0 <= rem < bw(l). */
typedef struct {
  sim_time_ps at;
  uint64_t rem;
} net_link_free;

struct net {
  sim_engine *sim;
  const topo *t;
  net_tier tier;
  uint32_t n_links;
  uint64_t *link_bytes;
  uint64_t transfers;
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
  uint32_t *link_agg;       /* per link: the aggregate riding it, NET_NO_AGG when none */
  uint32_t *link_use;       /* scratch: flows of a class on the link */
  uint32_t *link_pos;       /* scratch: the route position the class uses the link at */
  uint64_t aggregates, aggregated, splits;
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
    n->groups = g_hash_table_new_full(group_key_hash, group_key_equal, NULL, NULL);
    n->link_agg = g_new(uint32_t, n->n_links ? n->n_links : 1);
    n->link_use = g_new0(uint32_t, n->n_links ? n->n_links : 1);
    n->link_pos = g_new0(uint32_t, n->n_links ? n->n_links : 1);
    for (uint32_t l = 0; l < n->n_links; l++)
      n->link_agg[l] = NET_NO_AGG;
  }
  return n;
}

void net_free(net *n) {
  if (!n) return;
  /* Pending events point at this net: withdraw them. */
  for (size_t i = 0; i < n->n_xf; i++)
    if (n->xf[i].alive && n->xf[i].ev != SIM_EVENT_NONE) sim_cancel(n->sim, n->xf[i].ev);
  if (n->solve_pending) sim_cancel(n->sim, n->solve_ev);
  if (n->groups != NULL) {
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
  for (size_t i = 0; i < n->n_xf; i++) {
    if (n->xf[i].members != NULL)
      g_array_free(n->xf[i].members, TRUE);
    g_free(n->xf[i].mult);
  }
  g_free(n->link_agg);
  g_free(n->link_use);
  g_free(n->link_pos);
  lmm_system_free(n->lmm);
  g_free(n->cnst_of_link);
  g_free(n->link_first);
  g_free(n->touched);
  g_free(n->xf_of_var);
  g_free(n->link_bytes);
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

static uint32_t xf_alloc(net *n) {
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
static void xf_complete(net *n, uint32_t i) {
  net_xfer x = n->xf[i];
  n->xf[i].alive = FALSE;
  n->xf[i].next_free = n->xf_free;
  n->xf_free = i;
  if (x.done) x.done(n->sim, x.ctx, x.cookie);
}

static void ev_done(sim_engine *sim, void *ctx, uint64_t arg) {
  (void)sim;
  net *n = ctx;
  n->xf[arg].ev = SIM_EVENT_NONE;
  xf_complete(n, (uint32_t)arg);
}

static void ev_solve(sim_engine *sim, void *ctx, uint64_t arg);

/* Records a start or finish of transfer x now and schedules the one
 * pending solve: at this instant, or with a quantum q no earlier than q
 * after the previous solve, so that every start and finish until then
 * shares it.  With a quantum it also notes the first change on each link
 * of x's route since the previous solve (the backdating times; see the top
 * comment).  O(route length). */
static void flow_changed(net *n, const net_xfer *x) {
  sim_time_ps now = sim_now(n->sim);
  if (n->quantum > 0) {
    for (uint32_t i = 0; i < x->n_links; i++) {
      uint32_t l = x->route[i];
      if (n->link_first[l] < 0) {
        n->link_first[l] = now;
        n->touched[n->n_touched++] = l;
      }
    }
  }
  if (n->solve_pending) return;
  n->solve_pending = TRUE;
  n->batch_first = now;
  sim_time_ps at = now;
  if (n->quantum > 0 && n->last_solve >= 0 && n->last_solve + n->quantum > now) at = n->last_solve + n->quantum;
  n->solve_ev = sim_schedule_at(n->sim, at, ev_solve, n, 0);
}

/* The time from which x's new rate applies (approximate mode): the first
 * change on its route since the previous solve, else the batch's first
 * change, and not before x's last update (its entry, for a new flow).
 * O(route length). */
static sim_time_ps flow_change_time(const net *n, const net_xfer *x) {
  sim_time_ps t = -1;
  for (uint32_t i = 0; i < x->n_links; i++) {
    sim_time_ps f = n->link_first[x->route[i]];
    if (f >= 0 && (t < 0 || f < t)) t = f;
  }
  if (t < 0) t = n->batch_first;
  return t > x->last_update ? t : x->last_update;
}

static void agg_finish(net *n, uint32_t a);

static void ev_flow_finish(sim_engine *sim, void *ctx, uint64_t arg) {
  net *n = ctx;
  net_xfer *x = &n->xf[arg];
  x->ev = SIM_EVENT_NONE;
  if (x->end > sim_now(sim)) { /* early: the rate dropped since it was set */
    x->ev_at = x->end;
    x->ev = sim_schedule_at(sim, x->end, ev_flow_finish, n, arg);
    return;
  }
  if (x->members != NULL) {
    agg_finish(n, (uint32_t)arg);
    return;
  }
  lmm_variable_free(n->lmm, x->var);
  x->var = LMM_NONE;
  n->active_flows--;
  n->flow_events++;
  flow_changed(n, x);
  xf_complete(n, (uint32_t)arg);
}

/* Registers solver variable var as transfer slot i's. */
static void map_var(net *n, uint32_t var, uint32_t i) {
  if (var >= n->cap_xf_of_var) { /* solver ids are dense: grow to fit */
    size_t cap = n->cap_xf_of_var ? n->cap_xf_of_var : 64;
    while (cap <= var) cap *= 2;
    n->xf_of_var = g_realloc_n(n->xf_of_var, cap, sizeof *n->xf_of_var);
    n->cap_xf_of_var = cap;
  }
  n->xf_of_var[var] = i;
}

static void agg_split(net *n, uint32_t a);

/* Transfer slot i enters the solver now as a flow of its own, first
 * splitting any aggregate that rides one of its links (that aggregate's
 * symmetry ends here).  O(route length) plus the splits. */
static void flow_enter(net *n, uint32_t i) {
  for (uint32_t k = 0; n->live_aggs > 0 && k < n->xf[i].n_links; k++) {
    uint32_t a = n->link_agg[n->xf[i].route[k]];
    if (a != NET_NO_AGG) agg_split(n, a);
  }
  net_xfer *x = &n->xf[i];
  /* A stream bandwidth below every link's capacity bounds the flow's rate
   * (topo_link_rate); otherwise its links do. */
  x->var = lmm_variable_new(n->lmm, 1.0, x->capped ? (double)x->bottleneck : 0, i);
  map_var(n, x->var, i);
  for (uint32_t k = 0; k < x->n_links; k++)
    lmm_expand(n->lmm, n->cnst_of_link[x->route[k]], x->var, 1.0);
  x->flow_start = x->last_update = sim_now(n->sim);
  x->remaining = (double)x->bytes;
  x->rate = 0;
  x->single_rate = TRUE;
  n->active_flows++;
  n->flow_events++;
  flow_changed(n, x);
}

static void ev_flow_start(sim_engine *sim, void *ctx, uint64_t arg) {
  (void)sim;
  net *n = ctx;
  n->xf[arg].ev = SIM_EVENT_NONE;
  flow_enter(n, (uint32_t)arg);
}

/* ---- aggregation (tier B, exact mode) ----
 * A class: members of one group (same entry instant, size and
 * bottleneck) whose routes have the same shape (length, and per position
 * the link's bandwidth and dimension).  It becomes one solver variable
 * when it is symmetric by construction: every link it uses is used at one
 * route position only, every link used at position k carries the same
 * number m_k of its flows, and no other flow or aggregate uses any of
 * them.  Then progressive filling treats every link of a position alike
 * (equal remaining capacity and weight at every level), so each member's
 * max-min rate is the rate of one variable of weight 1 with consumption
 * m_k on one representative link per position (lmm.h's model), and every
 * member finishes when that variable does.  The links stay the
 * aggregate's until it finishes; a flow that enters on one of them first
 * splits the aggregate into per-member flows with the aggregate's rate and
 * remaining bytes (agg_split), so the symmetry is never assumed after it
 * ends.  So the aggregated run computes the same rates as the per-flow one
 * up to the solver's rounding (regress/test_net_aggregate compares them). */

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

/* Makes the class one aggregate transfer (a slot with no completion of
 * its own) that enters the solver now.  O(m x route length). */
static void agg_enter(net *n, const uint32_t *mem, uint32_t m, float *mult) {
  uint32_t a = xf_alloc(n);
  net_xfer *x = &n->xf[a], *r0 = &n->xf[mem[0]];
  x->bytes = r0->bytes;
  x->route = r0->route;
  x->n_links = r0->n_links;
  x->capped = r0->capped;
  x->bottleneck = r0->bottleneck;
  x->mult = mult;
  x->members = g_array_sized_new(FALSE, FALSE, sizeof(uint32_t), m);
  g_array_append_vals(x->members, mem, m);
  for (uint32_t j = 0; j < m; j++) {
    net_xfer *y = &n->xf[mem[j]];
    y->agg = a;
    for (uint32_t k = 0; k < y->n_links; k++)
      n->link_agg[y->route[k]] = a;
  }
  x->var = lmm_variable_new(n->lmm, 1.0, x->capped ? (double)x->bottleneck : 0, a);
  map_var(n, x->var, a);
  for (uint32_t k = 0; k < x->n_links; k++)
    lmm_expand(n->lmm, n->cnst_of_link[x->route[k]], x->var, (double)mult[k]);
  x->flow_start = x->last_update = sim_now(n->sim);
  x->remaining = (double)x->bytes;
  x->rate = 0;
  x->single_rate = TRUE;
  n->active_flows += m;
  n->flow_events += m;
  n->aggregates++;
  n->aggregated += m;
  n->live_aggs++;
  flow_changed(n, x);
}

/* Releases aggregate a's links and slot (its members are handled by the
 * caller); returns its members (g_array_free them). */
static GArray *agg_release(net *n, uint32_t a) {
  net_xfer *x = &n->xf[a];
  GArray *mem = x->members;
  for (guint j = 0; j < mem->len; j++) {
    net_xfer *y = &n->xf[g_array_index(mem, uint32_t, j)];
    y->agg = NET_NO_AGG;
    for (uint32_t k = 0; k < y->n_links; k++)
      n->link_agg[y->route[k]] = NET_NO_AGG;
  }
  g_free(x->mult);
  x->mult = NULL;
  x->members = NULL;
  n->live_aggs--;
  x->alive = FALSE;
  x->next_free = n->xf_free;
  n->xf_free = a;
  return mem;
}

/* Ends aggregate a's symmetry now: each member becomes a flow of its own
 * with the aggregate's rate, remaining bytes and history (a member keeps
 * the exact integer finish while its rate has not changed since entry).
 * O(m x route length). */
static void agg_split(net *n, uint32_t a) {
  net_xfer *x = &n->xf[a];
  sim_time_ps now = sim_now(n->sim);
  if (x->ev != SIM_EVENT_NONE) sim_cancel(n->sim, x->ev);
  lmm_variable_free(n->lmm, x->var);
  double remaining = x->remaining, rate = x->rate;
  sim_time_ps last = x->last_update, start = x->flow_start;
  uint8_t single = x->single_rate;
  if (rate > 0) remaining -= rate * (double)(now - last) / (double)SIM_PS_PER_S;
  GArray *mem = agg_release(n, a);
  n->splits++;
  for (guint j = 0; j < mem->len; j++) {
    uint32_t i = g_array_index(mem, uint32_t, j);
    net_xfer *y = &n->xf[i];
    y->var = lmm_variable_new(n->lmm, 1.0, y->capped ? (double)y->bottleneck : 0, i);
    map_var(n, y->var, i);
    for (uint32_t k = 0; k < y->n_links; k++)
      lmm_expand(n->lmm, n->cnst_of_link[y->route[k]], y->var, 1.0);
    y->flow_start = start;
    y->last_update = rate > 0 ? now : last;
    y->remaining = remaining;
    y->rate = rate;
    y->single_rate = single;
    flow_changed(n, y);
  }
  g_array_free(mem, TRUE);
}

/* A finished aggregate: its members complete in send order. */
static void agg_finish(net *n, uint32_t a) {
  net_xfer *x = &n->xf[a];
  lmm_variable_free(n->lmm, x->var);
  x->var = LMM_NONE;
  guint m = x->members->len;
  n->active_flows -= m;
  n->flow_events += m;
  flow_changed(n, x);
  GArray *mem = agg_release(n, a);
  for (guint j = 0; j < mem->len; j++)
    xf_complete(n, g_array_index(mem, uint32_t, j));
  g_array_free(mem, TRUE);
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
      agg_enter(n, mem, c, mult);
    } else {
      g_free(mult);
      for (uint32_t k = 0; k < c; k++) flow_enter(n, mem[k]);
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
static void group_join(net *n, uint32_t i, sim_time_ps at) {
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

/* Duration in ps of `remaining` bytes at `rate` bytes/s, rounded up. */
static sim_time_ps flow_duration(double remaining, double rate, sim_time_ps now) {
  if (remaining <= 0) return 0;
  double x = remaining * (double)SIM_PS_PER_S / rate;
  double d = ceil(x - x * NET_CEIL_SLACK);
  if (d < 0) d = 0;
  if (!(d < (double)(SIM_TIME_MAX - now))) return SIM_TIME_MAX - now;
  return (sim_time_ps)d;
}

static void ev_solve(sim_engine *sim, void *ctx, uint64_t arg) {
  (void)arg;
  net *n = ctx;
  n->solve_pending = FALSE;
  lmm_solve(n->lmm);
  size_t n_ch;
  const uint32_t *ch = lmm_changed(n->lmm, &n_ch);
  sim_time_ps now = sim_now(sim);
  n->last_solve = now;
  for (size_t k = 0; k < n_ch; k++) {
    uint32_t i = n->xf_of_var[ch[k]];
    net_xfer *x = &n->xf[i];
    g_assert(x->var == ch[k]);
    double rate = lmm_variable_rate(n->lmm, ch[k]);
    /* The new rate applies from `from`: now in exact mode, backdated to
     * the flow's change time with a quantum. */
    sim_time_ps from = n->quantum > 0 ? flow_change_time(n, x) : now;
    if (x->rate > 0) { /* not the first rate: bring remaining up to `from` */
      x->remaining -= x->rate * (double)(from - x->last_update) / (double)SIM_PS_PER_S;
      /* A flow split from an aggregate is reported with the rate it had
       * (it is a new variable): that is no change. */
      if (fabs(rate - x->rate) > LMM_EPSILON * MAX(rate, x->rate))
        x->single_rate = FALSE;
    } else {
      x->flow_start = from; /* its entry, also with a quantum */
    }
    x->last_update = from;
    x->rate = rate;
    sim_time_ps end;
    double bw = (double)x->bottleneck;
    if (x->single_rate && fabs(rate - bw) <= LMM_EPSILON * bw) {
      end = x->flow_start + wisp_transfer_ps(x->bytes, x->bottleneck);
    } else {
      end = from + flow_duration(x->remaining, rate, from);
    }
    if (end < now) end = now; /* a backdated rate may have finished it already */
    x->end = end;
    /* A pending event at or before the new finish stays: when it fires it
     * sees end > now and moves itself (lazy postponement saves a cancel
     * per rate decrease).  A later one is replaced. */
    if (x->ev != SIM_EVENT_NONE) {
      if (x->ev_at <= end) continue;
      sim_cancel(sim, x->ev);
    }
    x->ev_at = end;
    x->ev = sim_schedule_at(sim, end, ev_flow_finish, n, i);
  }
  for (size_t k = 0; k < n->n_touched; k++) n->link_first[n->touched[k]] = -1;
  n->n_touched = 0;
}

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
static sim_time_ps analytic_queue(net *n, const uint32_t *route, uint32_t n_links, uint64_t bytes,
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
static void claims_yield(net *n, const uint32_t *route, uint32_t n_links) {
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
    h->latency += l->latency;
    if (k > 0 && l->bw != h->capacity)
      h->uniform = FALSE;
    h->capacity = MIN(h->capacity, l->bw);
    h->rate = MIN(h->rate, topo_link_rate(n->t, l));
  }
}

/* net_analytic_at over a prepared route: net_send's tier A arithmetic
 * (analytic_queue, which a route of mixed bandwidths still calls; a
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
    end = analytic_queue(n, h->route, h->n_links, bytes, at);
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
    for (uint32_t k = 0; k < h->n_links; k++) { /* as analytic_queue */
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

void net_send(net *n, int src_rank, int dst_rank, uint64_t bytes,
              net_done_fn done, void *ctx, uint64_t cookie) {
  g_assert(src_rank >= 0 && src_rank < topo_n_ranks(n->t));
  g_assert(dst_rank >= 0 && dst_rank < topo_n_ranks(n->t));
  if (n->claims_held > 0) { /* a claimed link's sequence first catches up to now */
    uint32_t nl = 0;
    const uint32_t *rt = src_rank == dst_rank ? NULL : topo_route(n->t, src_rank, dst_rank, &nl);
    claims_yield(n, rt, nl);
  }
  n->transfers++;
  uint32_t i = xf_alloc(n);
  net_xfer *x = &n->xf[i];
  x->done = done;
  x->ctx = ctx;
  x->cookie = cookie;
  x->bytes = bytes;
  uint32_t n_links = 0;
  const uint32_t *route = src_rank == dst_rank ? NULL : topo_route(n->t, src_rank, dst_rank, &n_links);
  if (n_links == 0) { /* same endpoint: zero time, through the queue */
    x->ev = sim_schedule_after(n->sim, 0, ev_done, n, i);
    return;
  }
  sim_time_ps latency = 0;
  wisp_bw_Bps capacity = UINT64_MAX, rate = UINT64_MAX; /* of the links; of one stream alone */
  for (uint32_t k = 0; k < n_links; k++) {
    const topo_link *l = topo_get_link(n->t, route[k]);
    latency += l->latency;
    capacity = MIN(capacity, l->bw);
    rate = MIN(rate, topo_link_rate(n->t, l));
    n->link_bytes[route[k]] += bytes;
  }
  x->route = route;
  x->n_links = n_links;
  x->capped = rate < capacity;
  x->bottleneck = rate;
  if (n->tier == NET_TIER_ANALYTICAL && bytes > 0) {
    /* The links serve the bytes at their capacity (FIFO); a capped stream
     * also takes at least S / its stream bandwidth, so concurrent capped
     * streams share a link's capacity as in tier B. */
    sim_time_ps end = analytic_queue(n, route, n_links, bytes, sim_now(n->sim));
    if (x->capped)
      end = MAX(end, sim_now(n->sim) + wisp_transfer_ps(bytes, x->bottleneck));
    x->ev = sim_schedule_at(n->sim, end + latency, ev_done, n, i);
    return;
  }
  if (bytes == 0) { /* latency only, both tiers; occupies no link */
    x->ev = sim_schedule_after(n->sim, latency, ev_done, n, i);
    return;
  }
  if (n->aggregate && n->quantum == 0) {
    group_join(n, i, sim_now(n->sim) + latency);
    return;
  }
  x->ev = sim_schedule_after(n->sim, latency, ev_flow_start, n, i);
}

void net_set_flow_aggregation(net *n, gboolean on) {
  g_assert(n->groups == NULL || g_hash_table_size(n->groups) == 0);
  n->aggregate = on && n->tier == NET_TIER_FLOW;
}

void net_get_aggregation_stats(const net *n, uint64_t *aggregates, uint64_t *aggregated, uint64_t *splits) {
  *aggregates = n->aggregates;
  *aggregated = n->aggregated;
  *splits = n->splits;
}
