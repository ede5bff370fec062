/* coll_ring.c: the fast path of flat rings on the analytical tier: the
 * ring recurrence (issue 18: collective cost at scale).  It computes the
 * same per-member times as the per-transfer run (coll_run.c) with O(q)
 * events per collective, and hands a run back to the per-transfer state
 * when another transfer needs one of its links.  It uses the run (the
 * transfer records, its events and its end); the run never calls it (the
 * front, coll_rt.c, decides when a run begins).
 *
 * A flat unidirectional ring all-reduce, reduce-scatter or all-gather of
 * one chunk over q members issues q transfers per step over q-1 steps
 * (2(q-1) for all-reduce):
 * O(q^2) transfers, each an event pair and a net_send.  On tier A the
 * schedule is a recurrence over the steps.  With s_j(k) the time position
 * j starts step k (s_j(0) = the run's start t0), a_j(k) the time its
 * step-k send to j+1 arrives (net_send's tier A time, issued at s_j(k)),
 * j-1 the predecessor and w_j(k) the step's local wait (reduction at
 * reduce_bw, coll_reduce_ps; NCCL's hop latency is charged before the
 * first step, in the run's start):
 *     ideal (a step waits for its own send):
 *         s_j(k+1) = max(a_j(k), a_{j-1}(k)) + w_j(k)
 *     NCCL model (a step waits only for its receive):
 *         s_j(k+1) = max(s_j(k), a_{j-1}(k)) + w_j(k)
 * and member j is done at s_j(K), K the number of steps.  This is exactly
 * what the per-transfer path computes (slot_advance), provided the times
 * a_j(k) are: every transfer of hop j -> j+1 is queued on that hop's
 * links in step order by net_analytic_at, which keeps the links' FIFO
 * state as net_send would.  That holds when nothing else uses the links
 * while the ring runs, so the recurrence is taken only when
 *  - the hops are link-disjoint (no link carries two hops), and every
 *    link is idle and unclaimed when the run starts (the tier A FIFO
 *    state: net_link_idle); otherwise the run goes per transfer
 *    (coll_ring_stats.shared);
 *  - and it claims the links (net_claim_*) until its last member is done:
 *    a transfer of anyone else over a claimed link first calls
 *    ring_convert, which re-runs the recurrence up to that instant,
 *    charging the net only the transfers issued before it (the first
 *    step, issued by run_begin at t0, counts as before; a later ring
 *    transfer due at that very picosecond is issued after the other one,
 *    and one due to arrive then arrives after it: the order of events the
 *    per-transfer path has when the other transfer's event was queued
 *    before the ring's step began; when it was queued later, that path
 *    puts the ring first and a tie on a link can differ), puts the
 *    transfers still in flight, the receive counters and every member's
 *    step into the per-transfer state and continues per transfer
 *    (coll_ring_stats.conversions).
 * So per-member completion times are those of the per-transfer path in
 * every case but that tie (regress/test_coll_ring.c checks them to the
 * picosecond); the order of same-picosecond done() calls may differ.  Cost: O(q K)
 * integer work and O(q) events per run instead of O(q K) transfers, each
 * an event pair through the net; a conversion costs the recurrence once
 * more plus the in-flight transfers. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "collectives/coll_run.h"

typedef struct ring_hop {
  net_hop nh;            /* the route, prepared once (net_hop_init) */
  int src, dst;          /* global ranks of positions j and j+1 */
  double inv;            /* NCCL model: the hop's byte inflation (protocol efficiency), else 1 */
  uint64_t total;        /* wire bytes over all steps */
} ring_hop;

/* Whether run r has the shape the recurrence covers (the links are
 * checked when it begins).  O(1). */
gboolean coll_ring_candidate(const coll_rt *c, const coll_run *r)
{
  if (r->n < COLL_RING_RECURRENCE_MIN + c->ring_min_delta || net_get_tier(c->n) != NET_TIER_ANALYTICAL ||
      r->engine || r->p2p || r->n < 2 ||
      r->n_phases != 1 || r->ph[0].algo != COLL_ALGO_RING || r->ph[0].g >= 0 || r->n_chunks != 1 ||
      r->lanes != 1 || r->lperm != NULL)
    return FALSE;
  return r->ph[0].prim == COLL_PRIM_ALL_REDUCE || r->ph[0].prim == COLL_PRIM_REDUCE_SCATTER ||
         r->ph[0].prim == COLL_PRIM_ALL_GATHER;
}

static inline int ring_mod(int64_t x, int q)
{
  int64_t m = x % q;
  return (int)(m < 0 ? m + q : m);
}

/* One step of the ring for every position: piece j of D is
 * base + (j < extra) (coll_piece); position p sends piece p - off and
 * reduces piece p - off - 1 (mod q), as coll_sched_step's unidirectional
 * ring (sched_ring: ring_rs, ring_ag).  Fills snd[p], red[p].  O(q), no
 * division. */
static void ring_step_all(const coll_run *r, uint32_t k, uint64_t *snd, uint64_t *red)
{
  int q = r->n;
  uint64_t base = r->bytes / (uint64_t)q, extra = r->bytes % (uint64_t)q;
  coll_prim prim = r->ph[0].prim;
  gboolean ag = prim == COLL_PRIM_ALL_GATHER || (prim == COLL_PRIM_ALL_REDUCE && k >= (uint32_t)(q - 1));
  uint32_t ks = prim == COLL_PRIM_ALL_REDUCE && ag ? k - (uint32_t)(q - 1) : k;
  int off = ring_mod(ag ? (int64_t)ks : (int64_t)ks + 1, q);
  int idx = q - off; /* (0 - off) mod q, in 0..q */
  if (idx == q)
    idx = 0;
  for (int p = 0; p < q; p++) {
    snd[p] = base + ((uint64_t)idx < extra);
    int ri = idx == 0 ? q - 1 : idx - 1;
    red[p] = ag ? 0 : base + ((uint64_t)ri < extra);
    if (++idx == q)
      idx = 0;
  }
}

/* A ring transfer issued before t_stop (ring_convert): still in flight at
 * t_stop, it becomes a transfer record whose coll_xfer_done runs at its
 * arrival; arrived, it is counted by its receiver.  O(1). */
static void ring_materialize(coll_run *r, int j, uint32_t k, sim_time_ps arr, sim_time_ps t_stop)
{
  coll_rt *c = r->lib;
  uint32_t src = (uint32_t)r->gmember[j], dst = (uint32_t)r->gmember[(j + 1) % r->n];
  if (arr < t_stop) {
    r->recv[(size_t)dst * r->n_steps + k]++;
    return;
  }
  uint32_t xi = coll_xr_alloc(c);
  c->xr[xi] = (coll_xrec){ .run = r, .src_slot = src, .dst_slot = dst, .dst_step = k, .src_step = k };
  if (!r->stream)
    r->slot[src].pend++; /* a streamed step does not wait for its sends: no count (coll_xfer_done) */
  if (r->sent != NULL)
    r->sent[(size_t)src * r->n_steps + k]++;
  sim_post_at(c->sim, arr, coll_xfer_done, c, xi);
}

#define RING_NEVER SIM_TIME_MAX

/* Whether every member of r is alike (the closed form below applies):
 * pieces of equal size (q divides D) and hops alike for the net
 * (net_hop_alike) with equal byte inflation.  O(q route length). */
static gboolean ring_symmetric(const coll_run *r)
{
  if (r->bytes % (uint64_t)r->n != 0)
    return FALSE;
  for (int j = 1; j < r->n; j++)
    if (r->hop[j].inv != r->hop[0].inv || !net_hop_alike(r->lib->n, &r->hop[0].nh, &r->hop[j].nh))
      return FALSE;
  return TRUE;
}

/* The recurrence of a symmetric ring (ring_symmetric), whose links are
 * idle at t0: every position sends the same bytes at every step over an
 * alike route whose links start in the same state, so by induction every
 * member starts step k at the same time s(k) and every hop's links go
 * through the same states.  Then a_{j-1}(k) = a_j(k) = a(k) and both
 * recurrences become
 *     s(k+1) = a(k) + w(k),   a(k) = net_hop_at(hop 0, D/q, s(k))
 * (a(k) >= s(k)), which is evaluated on hop 0 alone; the other hops get
 * hop 0's link states and counters (net_hop_mirror).  With equal hop
 * times T (links idle at every step) this is the closed form
 * s(K) = t0 + K (T + w): for the ring all-reduce 2(q-1) steps of D/q
 * bytes, 2(q-1)/q D/B + 2(q-1) alpha.  O(K + q route length). */
static void ring_recurrence_symmetric(coll_run *r)
{
  coll_rt *c = r->lib;
  int q = r->n;
  uint32_t K = r->n_steps;
  uint64_t piece = r->bytes / (uint64_t)q, wire = piece;
  if (r->stream && wire > 0)
    wire = (uint64_t)ceil((double)wire * r->hop[0].inv); /* as slot_start */
  sim_time_ps red_wait = coll_reduce_ps(c, piece), s = r->t0;
  for (uint32_t k = 0; k < K; k++) {
    gboolean ag = r->ph[0].prim == COLL_PRIM_ALL_GATHER ||
                  (r->ph[0].prim == COLL_PRIM_ALL_REDUCE && k >= (uint32_t)(q - 1));
    s = net_hop_at(c->n, &r->hop[0].nh, wire, s) + (ag ? 0 : red_wait);
  }
  r->hop[0].total = wire * K;
  for (int j = 1; j < q; j++) {
    r->hop[j].total = wire * K;
    net_hop_mirror(c->n, &r->hop[0].nh, &r->hop[j].nh, wire * K, K);
  }
  for (int m = 0; m < q; m++)
    r->fin[m] = s;
}

/* Runs the recurrence from r->t0, charging the net (net_hop_at) with
 * every transfer issued before t_stop.  t_stop RING_NEVER: all of
 * them; r->fin receives each member's done time and r->hop the hops'
 * totals.  Otherwise (a conversion) every member's slot is set to its
 * state at t_stop (ring_materialize, the step it is in, waiting for
 * transfers or in its local wait).  O(q K). */
static void ring_recurrence(coll_run *r, sim_time_ps t_stop)
{
  coll_rt *c = r->lib;
  int q = r->n;
  uint32_t K = r->n_steps;
  gboolean conv = t_stop != RING_NEVER;
  if (!conv && ring_symmetric(r)) {
    c->ring.symmetric++;
    ring_recurrence_symmetric(r);
    return;
  }
  sim_time_ps *st = g_new(sim_time_ps, (size_t)q);
  sim_time_ps *arr = g_new(sim_time_ps, (size_t)q);
  uint64_t *snd = g_new(uint64_t, (size_t)q), *rb = g_new(uint64_t, (size_t)q);
  sim_time_ps *rwait = g_new0(sim_time_ps, (size_t)q);
  for (int j = 0; j < q; j++) {
    st[j] = r->t0;
    if (!conv)
      r->hop[j].total = 0;
  }
  for (uint32_t k = 0; k < K; k++) {
    ring_step_all(r, k, snd, rb);
    if (c->pol.reduce_bw > 0)
      for (int j = 0; j < q; j++)
        rwait[j] = coll_reduce_ps(c, rb[j]);
    /* Step 0 is issued at t0 by run_begin, an event before the one
     * converting the run at t_stop >= t0; a later step issued at t_stop
     * counts as after it (see the top comment). */
    sim_time_ps bound = k == 0 && t_stop != RING_NEVER ? t_stop + 1 : t_stop;
    for (int j = 0; j < q; j++) {
      if (st[j] >= bound) {
        arr[j] = RING_NEVER;
        continue;
      }
      uint64_t wire = snd[j];
      if (r->stream && wire > 0)
        wire = (uint64_t)ceil((double)wire * r->hop[j].inv); /* as slot_start */
      if (!conv)
        r->hop[j].total += wire;
      arr[j] = net_hop_at(c->n, &r->hop[j].nh, wire, st[j]);
      if (conv)
        ring_materialize(r, j, k, arr[j], t_stop);
    }
    for (int j = 0; j < q; j++) {
      if (st[j] >= bound)
        continue;
      sim_time_ps pred = arr[j == 0 ? q - 1 : j - 1];
      sim_time_ps done = MAX(r->stream ? st[j] : arr[j], pred);
      sim_time_ps next = done == RING_NEVER ? done : done + rwait[j];
      if (conv && next >= t_stop) { /* member j is in step k at t_stop */
        coll_slot *sl = &r->slot[r->gmember[j]];
        sl->cur = k;
        sl->need = 1;
        sl->moved = 1;
        if (r->slot_red != NULL)
          r->slot_red[r->gmember[j]] = rb[j];
        sl->state = SLOT_RUNNING;
        if (done < t_stop) { /* its transfers are in: in its local wait until next */
          sl->state = SLOT_REDUCING;
          sim_post_at(c->sim, next, coll_reduce_done, r, (uint64_t)r->gmember[j]);
        }
      }
      st[j] = next;
    }
  }
  for (int j = 0; j < q; j++) {
    if (!conv)
      r->fin[r->gmember[j]] = st[j];
    else if (st[j] < t_stop || r->done_ev[r->gmember[j]] == SIM_EVENT_NONE)
      r->slot[r->gmember[j]].cur = K; /* done (its done event has run) */
  }
  g_free(st);
  g_free(arr);
  g_free(snd);
  g_free(rb);
  g_free(rwait);
}

/* The claim's callback: another transfer is about to use a link of the
 * ring at `now`.  Takes back the recurrence's charges, replays it up to
 * now and leaves the run in the per-transfer state (see above).
 * O(q K). */
static void ring_convert(void *ctx)
{
  coll_run *r = ctx;
  coll_rt *c = r->lib;
  sim_time_ps now = sim_now(c->sim);
  net_claim_release(c->n, r->claim);
  r->claim = 0;
  c->ring.conversions++;
  for (int j = 0; j < r->n; j++) {
    net_route_reset(c->n, r->hop[j].src, r->hop[j].dst, r->t0);
    net_uncredit(c->n, r->hop[j].src, r->hop[j].dst, r->hop[j].total, r->n_steps);
  }
  coll_run_alloc_counters(r);
  ring_recurrence(r, now);
  for (int m = 0; m < r->n; m++)
    if (r->done_ev[m] != SIM_EVENT_NONE) {
      sim_cancel(c->sim, r->done_ev[m]);
      r->done_ev[m] = SIM_EVENT_NONE;
    }
}

/* Takes the recurrence for run r when its hops are link-disjoint and
 * every link is idle and unclaimed now; schedules the members' done
 * events and claims the links.  Returns FALSE (nothing changed) when the
 * run must go per transfer.  O(q K + route lengths). */
gboolean coll_ring_begin(coll_rt *c, coll_run *r)
{
  if (!coll_ring_candidate(c, r))
    return FALSE;
  const topo *t = c->t;
  sim_time_ps now = sim_now(c->sim);
  uint32_t nl = topo_n_links(t);
  if (c->link_stamp == NULL)
    c->link_stamp = g_new0(uint32_t, nl ? nl : 1);
  if (++c->stamp == 0) {
    memset(c->link_stamp, 0, sizeof *c->link_stamp * (nl ? nl : 1));
    c->stamp = 1;
  }
  int q = r->n;
  ring_hop *hop = g_new(ring_hop, (size_t)q);
  gboolean ok = TRUE;
  for (int j = 0; j < q && ok; j++) {
    hop[j].src = r->ranks[r->gmember[j]];
    hop[j].dst = r->ranks[r->gmember[(j + 1) % q]];
    hop[j].inv = 1.0;
    if (r->stream)
      hop[j].inv = coll_pair_is_inter(t, hop[j].src, hop[j].dst) ? r->inv_eff_inter : r->inv_eff_intra;
    coll_run_hop_init(r, hop[j].src, hop[j].dst, &hop[j].nh);
    uint32_t n_links = hop[j].nh.n_links;
    const uint32_t *route = hop[j].nh.route;
    ok = n_links > 0;
    for (uint32_t k = 0; k < n_links && ok; k++) {
      ok = c->link_stamp[route[k]] != c->stamp && net_link_idle(c->n, route[k], now);
      c->link_stamp[route[k]] = c->stamp;
    }
  }
  if (!ok) {
    g_free(hop);
    c->ring.shared++;
    return FALSE;
  }
  c->ring.runs++;
  r->hop = hop;
  r->t0 = now;
  r->fin = g_new(sim_time_ps, (size_t)q);
  r->done_ev = g_new(sim_event_id, (size_t)q);
  ring_recurrence(r, RING_NEVER);
  r->claim = net_claim_new(c->n, ring_convert, r);
  for (int j = 0; j < q; j++)
    net_claim_route(c->n, r->claim, hop[j].src, hop[j].dst);
  for (int m = 0; m < q; m++)
    r->done_ev[m] = sim_schedule_at(c->sim, r->fin[m], coll_member_done_ev, r, (uint64_t)m);
  return TRUE;
}

void coll_rt_set_ring_recurrence(coll_rt *c, int min_members)
{
  c->ring_min_delta = (min_members <= 0 ? 65537 : min_members) - COLL_RING_RECURRENCE_MIN;
}

const coll_ring_stats *coll_rt_ring_stats(const coll_rt *c)
{
  return &c->ring;
}
