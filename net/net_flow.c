/* net_flow.c: tier B (flow, max-min fair) of net.h.
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
 * (Groups of flows entering together and the symmetry check are in
 * net_group.c.)
 *
 * Costs: a solve costs the component re-solve (lmm.h) plus O(log queue)
 * per flow whose rate changed.
 */
#include "config.h"

#include "net/net_internal.h"

#include <math.h>

/* Relative slack of the round-up of flow durations; see the top comment. */
#define NET_CEIL_SLACK 1e-12

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

/* Counts a flow of its own (not an aggregate) entering (+1) or leaving
 * (-1) the solver on each link of its route (link_st's flows, which
 * class_scan reads instead of the solver's constraint).  O(route length). */
static void own_flow_count(net *n, const net_xfer *x, int delta) {
  for (uint32_t k = 0; k < x->n_links; k++)
    n->link_st[x->route[k]].flows += (uint32_t)delta;
}

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
  own_flow_count(n, x, -1);
  n->active_flows--;
  n->flow_events++;
  flow_changed(n, x);
  net_xf_complete(n, (uint32_t)arg);
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

static void bundle_dissolve(net *n, uint32_t b);

/* Transfer slot i enters the solver now as a flow of its own, first
 * dissolving any bundle one of its links belongs to (the symmetry of the
 * aggregates riding it ends here).  O(route length) plus the splits. */
void net_flow_enter(net *n, uint32_t i) {
  for (uint32_t k = 0; n->live_aggs > 0 && k < n->xf[i].n_links; k++) {
    uint32_t b = n->link_st[n->xf[i].route[k]].bundle;
    if (b != NET_NO_BUNDLE) bundle_dissolve(n, b);
  }
  net_xfer *x = &n->xf[i];
  /* A stream bandwidth below every link's capacity bounds the flow's rate
   * (topo_link_rate); otherwise its links do. */
  x->var = lmm_variable_new(n->lmm, 1.0, x->capped ? (double)x->bottleneck : 0, i);
  map_var(n, x->var, i);
  for (uint32_t k = 0; k < x->n_links; k++)
    lmm_expand(n->lmm, n->cnst_of_link[x->route[k]], x->var, 1.0);
  own_flow_count(n, x, +1);
  x->flow_start = x->last_update = sim_now(n->sim);
  x->remaining = (double)x->bytes;
  x->rate = 0;
  x->single_rate = TRUE;
  n->agg_stats.flows_entered++;
  n->active_flows++;
  n->flow_events++;
  flow_changed(n, x);
}

void net_flow_ev_start(sim_engine *sim, void *ctx, uint64_t arg) {
  (void)sim;
  net *n = ctx;
  n->xf[arg].ev = SIM_EVENT_NONE;
  net_flow_enter(n, (uint32_t)arg);
}

/* ---- aggregation (tier B, exact mode) ----
 * A class: members of one group (same entry instant, size and
 * bottleneck) whose routes have the same shape (length, and per position
 * the link's bandwidth and dimension).  It becomes one solver variable
 * when it is symmetric by construction: every link it uses is used at one
 * route position only, and every link used at position k carries the same
 * number m_k of its flows.  Its links must be either free (no flow in the
 * solver, no bundle) -- then they become a new bundle whose positions are
 * the class's -- or exactly the links of distinct positions of one
 * existing bundle (position k of the class covering all links of one
 * position of the bundle), which the class then rides with the aggregates
 * already there (net_group.c, class_check).  Every link of a bundle's
 * position then carries the same flows of every aggregate riding it, and
 * nothing else, so progressive filling treats the links of one position
 * alike (equal remaining capacity and weight at every level): each
 * member's max-min rate is the rate of one variable of weight 1 with
 * consumption m_k on the bundle's representative link of the position
 * (lmm.h's model), and every member finishes when that variable does.
 * This is what lets the concurrent rings of several collectives over the
 * same ranks (one per layer's gradients, offset in time) stay aggregated.
 * A flow that enters on a bundle's link first dissolves the bundle: each
 * aggregate riding it splits into per-member flows with the aggregate's
 * rate and remaining bytes (agg_split), so the symmetry is never assumed
 * after it ends.  So the aggregated run computes the same rates as the
 * per-flow one up to the solver's rounding (regress/test_net_aggregate
 * compares them transfer by transfer). */

/* Makes the class one aggregate transfer (a slot with no completion of
 * its own) that enters the solver now; see net_internal.h.  O(m x route
 * length). */
void net_flow_agg_enter(net *n, const uint32_t *mem, uint32_t m, float *mult, uint32_t bundle,
                        const uint32_t *posmap) {
  if (bundle == NET_NO_BUNDLE) {
    bundle = net_bundle_new(n, mem, m);
    posmap = NULL;
  }
  uint32_t a = net_xf_alloc(n);
  net_xfer *x = &n->xf[a], *r0 = &n->xf[mem[0]];
  const net_bundle *B = net_bundle_at(n, bundle);
  x->bytes = r0->bytes;
  x->n_links = r0->n_links;
  x->rep_route = g_new(uint32_t, x->n_links);
  for (uint32_t k = 0; k < x->n_links; k++)
    x->rep_route[k] = B->rep[posmap ? posmap[k] : k];
  x->route = x->rep_route;
  x->capped = r0->capped;
  x->bottleneck = r0->bottleneck;
  x->mult = mult;
  x->members = g_array_sized_new(FALSE, FALSE, sizeof(uint32_t), m);
  g_array_append_vals(x->members, mem, m);
  for (uint32_t j = 0; j < m; j++)
    n->xf[mem[j]].agg = a;
  net_bundle_attach(n, bundle, a);
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
  n->agg_stats.aggregates++;
  n->agg_stats.aggregated += m;
  n->agg_stats.flows_entered += m;
  n->live_aggs++;
  flow_changed(n, x);
}

/* Releases aggregate a's links and slot (its members are handled by the
 * caller); returns its members (g_array_free them). */
static GArray *agg_release(net *n, uint32_t a) {
  net_xfer *x = &n->xf[a];
  GArray *mem = x->members;
  for (guint j = 0; j < mem->len; j++)
    n->xf[g_array_index(mem, uint32_t, j)].agg = NET_NO_AGG;
  net_bundle_detach(n, x->bundle, a);
  g_free(x->mult);
  x->mult = NULL;
  g_free(x->rep_route);
  x->rep_route = NULL;
  x->route = NULL;
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
  n->agg_stats.splits++;
  n->agg_stats.split_flows += mem->len;
  for (guint j = 0; j < mem->len; j++) {
    uint32_t i = g_array_index(mem, uint32_t, j);
    net_xfer *y = &n->xf[i];
    y->var = lmm_variable_new(n->lmm, 1.0, y->capped ? (double)y->bottleneck : 0, i);
    map_var(n, y->var, i);
    for (uint32_t k = 0; k < y->n_links; k++)
      lmm_expand(n->lmm, n->cnst_of_link[y->route[k]], y->var, 1.0);
    own_flow_count(n, y, +1);
    y->flow_start = start;
    y->last_update = rate > 0 ? now : last;
    y->remaining = remaining;
    y->rate = rate;
    y->single_rate = single;
    flow_changed(n, y);
  }
  g_array_free(mem, TRUE);
}

/* Splits every aggregate riding bundle b (which frees it). */
static void bundle_dissolve(net *n, uint32_t b) {
  guint left;
  do {
    const net_bundle *B = net_bundle_at(n, b);
    left = B->aggs->len - 1;
    agg_split(n, g_array_index(B->aggs, uint32_t, left));
  } while (left > 0);
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
    net_xf_complete(n, g_array_index(mem, uint32_t, j));
  g_array_free(mem, TRUE);
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
