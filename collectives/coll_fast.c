/* coll_fast.c: the symmetric-phase fast path of the analytical tier
 * (issue 30 item 1): any one-chunk schedule whose members stay in step
 * (halving-doubling, direct, hierarchical per-dimension plans, rings the
 * ring recurrence declined, all-to-all) charged without an event per
 * transfer.  It uses the run (coll_run.h: the transfer records, its
 * events, its end); the run never calls it; the front (coll_rt.c) tries
 * the ring recurrence (coll_ring.c) first, then this path, then runs per
 * transfer.
 *
 * The per-transfer path (coll_run.c) ends a member's step k when its own
 * sends of step k have arrived and it has received every transfer
 * addressed to its step k, plus its local reduction time w.  When every
 * member starts step k at one time s(k), each transfer of the step is
 * issued at s(k) and its arrival a(x) is net_send's tier A time (the
 * links' FIFO state, net_hop_at).  Member m then ends the step at
 *     e_m(k) = max(s(k), max over m's sends and receives a(x)) + w_m(k)
 * and, if every member ends it at the same time, s(k+1) = e(k): the
 * members stay in step and the recurrence goes on.  Which transfer a link
 * serves first matters when a link carries several transfers issued at
 * one instant, so the transfers are charged in the per-transfer path's
 * issue order: at the first step member order, each member's transfers
 * in schedule order (run_begin starts the members so); at a later step
 * the order in which the previous step's events ended the members' steps
 * (events of one instant run in the order they were scheduled, i.e. the
 * issue order of the transfers that arrive then; coll_xfer_done advances
 * the receiver before the sender; a member's reduction wait is posted in
 * that order too).  So the path is taken when, besides:
 *  - tier A, one chunk and one lane, no library engine, no streamed steps
 *    (the ideal library: NCCL's plans stream, and a streamed step ends
 *    at its receives, not its sends; the symmetric mode below takes
 *    NCCL's one-chunk plans), no library pre-delay, at least the ring
 *    recurrence's minimum members;
 *  - every transfer is counted at its sender's step (step-synchronous
 *    schedules: a tree's is not) and arrives after its issue instant;
 *  - every link the run uses is idle and unclaimed at the start t0 (net_
 *    link_idle), so that setting it idle again as of t0 restores it;
 *  - every member ends every step but the last at the same time (then
 *    each link serves the run's transfers in step order);
 * and it is decided while charging, in O(transfers x route length)
 * integer work with no event: a run that fails a condition is rewound
 * (net_link_rewind, net_transfers_uncredit) and goes per transfer
 * (coll_ring_stats.phase_declined).  A run on the path schedules one
 * done event per member and claims its links; another transfer over one
 * of them calls fast_convert, which rewinds the net, charges again only
 * the transfers issued before that instant (the ring recurrence's rule:
 * the first step counts as before, a later one issued at that
 * picosecond as after), makes those still in flight transfer records,
 * puts every member in its step and continues per transfer
 * (coll_ring_stats.phase_conversions).  Per-member done times, link bytes
 * and transfer counts are those of the per-transfer path (regress/
 * test_coll_fast.c checks every member and every link, with other
 * traffic injected at many instants); same-picosecond done() calls come
 * in member order.  Memory: O(steps + links used) per run.  Cost: one
 * coll_sched_step and one net_hop_at per transfer, one event per member.
 * Halving-doubling on q members is O(q log q) work per run instead of
 * O(q log q) events; direct is still O(q^2) arithmetic (its transfers),
 * but no events.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "collectives/coll_run.h"

/* Whether run r has the shape the path covers (its links and timing are
 * checked as it is charged).  O(1). */
static gboolean fast_candidate(const coll_rt *c, const coll_run *r)
{
  return r->n >= COLL_RING_RECURRENCE_MIN + c->ring_min_delta && r->n >= 2 &&
         net_get_tier(c->n) == NET_TIER_ANALYTICAL && !r->engine && !r->p2p && r->n_chunks == 1 && r->lanes == 1 &&
         r->lperm == NULL && r->held == NULL && r->n_steps > 0;
}

/* The bytes a transfer of `bytes` payload from member m to dm puts on the
 * wire: streamed steps (NCCL's plan) inflate them by the protocol's
 * efficiency on the pair's tier, as slot_start does.  O(dims). */
static uint64_t fast_wire(const coll_run *r, int m, int dm, uint64_t bytes)
{
  if (!r->stream || bytes == 0)
    return bytes;
  double inv = coll_pair_is_inter(r->lib->t, r->ranks[m], r->ranks[dm]) ? r->inv_eff_inter : r->inv_eff_intra;
  return (uint64_t)ceil((double)bytes * inv);
}

/* The event at which a member's step ends in the per-transfer path: the
 * arrival of its last transfer (time, then issue order: events of one
 * time run in the order they were scheduled; the receiver is advanced
 * before the sender, coll_xfer_done), or its own start for a step
 * without transfers (pos: its place in the issue order). */
typedef struct {
  sim_time_ps at;
  uint64_t idx;
  int m;
} fast_key;

static int cmp_key(const void *a, const void *b)
{
  const fast_key *x = a, *y = b;
  if (x->at != y->at)
    return x->at < y->at ? -1 : 1;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The state of one pass over the steps (fast_pass). */
typedef struct {
  coll_rt *c;
  coll_run *r;
  sim_time_ps t_stop;     /* FAST_NEVER: charge everything; else a conversion at t_stop */
  sim_time_ps *end;       /* per member: latest arrival of the step */
  uint32_t *need, *got;   /* per member: receives its schedule expects, receives seen */
  uint64_t *red;          /* per member: bytes reduced in the step */
  uint8_t *moved;         /* per member: the step sends or receives something */
  int *order;             /* the members in the order they issue the step */
  fast_key *key;          /* per member: the event that ends its step */
  uint64_t seq;           /* transfers issued so far in the step */
} fast_pass_state;

#define FAST_NEVER SIM_TIME_MAX

/* A transfer of step k issued before a conversion at t_stop: in flight
 * then, it becomes a transfer record whose coll_xfer_done runs at its
 * arrival; arrived, its receiver has counted it.  O(1). */
static void fast_materialize(coll_run *r, int m, int dm, uint32_t k, sim_time_ps arr, sim_time_ps t_stop)
{
  coll_rt *c = r->lib;
  if (arr < t_stop) {
    r->recv[(size_t)dm * r->n_steps + k]++;
    return;
  }
  uint32_t xi = coll_xr_alloc(c);
  c->xr[xi] = (coll_xrec){ .run = r, .src_slot = (uint32_t)m, .dst_slot = (uint32_t)dm, .dst_step = k, .src_step = k };
  if (!r->stream)
    r->slot[m].pend++; /* a streamed step does not wait for its sends (coll_xfer_done) */
  if (r->sent != NULL)
    r->sent[(size_t)m * r->n_steps + k]++;
  sim_post_at(c->sim, arr, coll_xfer_done, c, xi);
}

gboolean coll_fast_link_use(coll_rt *c, coll_run *r, uint32_t l)
{
  if (c->link_stamp[l] != c->stamp) {
    if (!net_link_idle(c->n, l, r->t0))
      return FALSE;
    c->link_stamp[l] = c->stamp;
    fast_link fl = { l, net_link_bytes(c->n, l) };
    g_array_append_val(r->fast_links, fl);
  }
  return TRUE;
}

/* Notes that transfer number idx of the step, arriving at arr, touches
 * member m (role 0: as its receiver, advanced first; 1: as its sender).
 * O(1). */
static void fast_touch(fast_pass_state *p, int m, sim_time_ps arr, uint64_t idx)
{
  fast_key *k = &p->key[m];
  if (arr > k->at || (arr == k->at && idx > k->idx)) {
    k->at = arr;
    k->idx = idx;
  }
}

/* Charges the transfers member m issues at step k (issued at s) and
 * notes their arrivals at both ends.  FALSE: the path does not apply
 * (checked only outside a conversion).  O(transfers x route length). */
static gboolean fast_member_step(fast_pass_state *p, int m, uint32_t k, sim_time_ps s)
{
  coll_run *r = p->r;
  coll_rt *c = p->c;
  int q = r->n;
  gboolean conv = p->t_stop != FAST_NEVER;
  coll_a2av_ctx x;
  coll_sched sc;
  int pos;
  const coll_phase *ph = coll_member_sched(r, m, 0, k, &x, &sc, &pos);
  uint32_t n_recv = 0;
  uint64_t red = 0;
  uint32_t nx = coll_sched_step(&sc, pos, k - ph->step0, r->scratch, &n_recv, &red);
  p->need[m] = n_recv;
  p->red[m] = red;
  p->moved[m] = nx > 0 || n_recv > 0;
  for (uint32_t i = 0; i < nx; i++) {
    const coll_xfer *xf = &r->scratch[i];
    int dm = coll_pos_member(r, ph, x.base, xf->peer, 0);
    if (!conv && ph->step0 + xf->recv_step != k)
      return FALSE; /* counted at another step of its receiver */
    net_hop h;
    coll_run_hop_init(r, r->ranks[m], r->ranks[dm], &h);
    if (!conv && xf->bytes > 0)
      for (uint32_t j = 0; j < h.n_links; j++)
        if (!coll_fast_link_use(c, r, h.route[j]))
          return FALSE;
    sim_time_ps arr = net_hop_at(c->n, &h, fast_wire(r, m, dm, xf->bytes), s);
    r->fast_charged++;
    if (arr <= s && !conv)
      return FALSE; /* arrives in its own instant: the order of that instant is not modelled */
    uint64_t idx = (uint64_t)q * 2 + p->seq++ * 2;
    fast_touch(p, dm, arr, idx);
    fast_touch(p, m, arr, idx + 1);
    if (conv)
      fast_materialize(r, m, dm, k, arr, p->t_stop);
    p->end[m] = MAX(p->end[m], arr);
    p->end[dm] = MAX(p->end[dm], arr);
    p->got[dm]++;
  }
  return TRUE;
}

/* A conversion leaves member m in step k (it ends at e, its transfers
 * are in at `in`): waiting for its transfers, or in its local wait until
 * e.  O(1). */
static void fast_member_state(fast_pass_state *p, int m, uint32_t k, sim_time_ps in, sim_time_ps e)
{
  coll_run *r = p->r;
  coll_slot *sl = &r->slot[m];
  sl->cur = k;
  sl->need = p->need[m];
  sl->moved = p->moved[m];
  if (r->slot_red != NULL)
    r->slot_red[m] = p->red[m];
  sl->state = SLOT_RUNNING;
  if (in < p->t_stop && e > in) {
    sl->state = SLOT_REDUCING;
    sim_post_at(r->lib->sim, e, coll_reduce_done, r, (uint64_t)m);
  }
}

/* One step of every member from s: charges it, and returns the members'
 * common end (or, at the last step, fills r->fin); FAST_NEVER when the
 * path does not apply.  In a conversion, also leaves the members in the
 * step when the next one begins at or after t_stop.  O(q + transfers). */
static sim_time_ps fast_step(fast_pass_state *p, uint32_t k, sim_time_ps s)
{
  coll_run *r = p->r;
  int q = r->n;
  gboolean conv = p->t_stop != FAST_NEVER;
  p->seq = 0;
  for (int i = 0; i < q; i++) {
    int m = p->order[i];
    p->end[m] = s;
    p->got[m] = 0;
    p->key[m] = (fast_key){ s, (uint64_t)i, m }; /* no transfer: its step ends where it began */
  }
  for (int i = 0; i < q; i++)
    if (!fast_member_step(p, p->order[i], k, s))
      return FAST_NEVER;
  sim_time_ps common = -1;
  gboolean last = k + 1 == r->n_steps;
  for (int m = 0; m < q; m++) {
    if (!conv && p->got[m] != p->need[m])
      return FAST_NEVER;
    sim_time_ps e = p->end[m] + coll_reduce_ps(r->lib, p->red[m]);
    if (!conv && !last && common >= 0 && e != common)
      return FAST_NEVER;
    common = e;
    if (!conv && last)
      r->fin[m] = e;
    if (conv && (last || r->step_t[k + 1] >= p->t_stop)) {
      if (last && (e < p->t_stop || r->done_ev[m] == SIM_EVENT_NONE))
        r->slot[m].cur = r->n_steps; /* done: its done event has run */
      else
        fast_member_state(p, m, k, p->end[m], e);
    }
  }
  /* The next step's issue order: the order in which the members' steps
   * end (their wait, when they have one, is posted in that order). */
  size_t nq = (size_t)(q > 0 ? q : 1);
  fast_key *ks = g_new(fast_key, nq);
  memcpy(ks, p->key, sizeof *ks * nq);
  qsort(ks, nq, sizeof *ks, cmp_key);
  for (int i = 0; i < q; i++)
    p->order[i] = ks[i].m;
  g_free(ks);
  return common;
}

/* Charges the run from r->t0: everything (t_stop FAST_NEVER; FALSE when
 * the path does not apply) or, in a conversion, the steps issued before
 * t_stop.  O(transfers x route length). */
static gboolean fast_pass(coll_rt *c, coll_run *r, sim_time_ps t_stop)
{
  int q = r->n;
  fast_pass_state p = { c, r, t_stop, g_new(sim_time_ps, (size_t)q), g_new(uint32_t, (size_t)q),
                        g_new(uint32_t, (size_t)q), g_new(uint64_t, (size_t)q), g_new(uint8_t, (size_t)q),
                        g_new(int, (size_t)q), g_new(fast_key, (size_t)q), 0 };
  for (int m = 0; m < q; m++)
    p.order[m] = m; /* run_begin starts the members in member order */
  gboolean ok = TRUE;
  sim_time_ps s = r->t0;
  for (uint32_t k = 0; k < r->n_steps && ok; k++) {
    if (t_stop != FAST_NEVER && s >= (k == 0 ? t_stop + 1 : t_stop))
      break;
    r->step_t[k] = s;
    s = fast_step(&p, k, s);
    ok = s != FAST_NEVER;
  }
  g_free(p.end);
  g_free(p.need);
  g_free(p.got);
  g_free(p.red);
  g_free(p.moved);
  g_free(p.order);
  g_free(p.key);
  return ok;
}

void coll_fast_rewind(coll_rt *c, coll_run *r)
{
  for (guint i = 0; i < r->fast_links->len; i++) {
    const fast_link *fl = &g_array_index(r->fast_links, fast_link, i);
    net_link_rewind(c->n, fl->link, r->t0, fl->bytes0);
  }
  net_transfers_uncredit(c->n, r->fast_charged);
  r->fast_charged = 0;
}

/* The claim's callback: another transfer is about to use a link of the
 * run now.  Rewinds the net, charges the transfers issued before now and
 * leaves the run per transfer (see the top comment).  O(transfers). */
void coll_fast_convert_begin(coll_rt *c, coll_run *r)
{
  net_claim_release(c->n, r->claim);
  r->claim = 0;
  c->ring.phase_conversions++;
  coll_fast_rewind(c, r);
}

static void fast_convert(void *ctx)
{
  coll_run *r = ctx;
  coll_rt *c = r->lib;
  sim_time_ps now = sim_now(c->sim);
  coll_fast_convert_begin(c, r);
  coll_run_alloc_counters(r);
  fast_pass(c, r, now);
  for (int m = 0; m < r->n; m++)
    if (r->done_ev[m] != SIM_EVENT_NONE) {
      sim_cancel(c->sim, r->done_ev[m]);
      r->done_ev[m] = SIM_EVENT_NONE;
    }
}

/* ---- the symmetric mode: one representative per step -------------------- */

/* One step of a symmetric run (fast_sym_step): every member sends n
 * transfers of b bytes and receives n, all counted at that step, and
 * reduces red bytes. */
typedef struct {
  uint32_t n;
  uint64_t b, red;    /* b: payload bytes, then (fast_sym_step's end) the bytes on the wire */
  gboolean inter;     /* streamed steps: the transfers leave the scale-up domain */
} fast_sym_shape;

/* Whether every member of r has the same step k: n sends of b bytes each,
 * n receives, all counted at step k and n addressed to it (got: q
 * counters), the same reduction and, for streamed steps, every transfer
 * on the same tier (its byte inflation, fast_wire); fills *sh.  O(q +
 * transfers of the step) schedule queries, no route and no net
 * arithmetic. */
static gboolean fast_sym_step(coll_run *r, uint32_t k, fast_sym_shape *sh, uint32_t *got)
{
  int m_first = -1, dm_first = -1;
  memset(got, 0, sizeof *got * (size_t)r->n);
  for (int m = 0; m < r->n; m++) {
    coll_a2av_ctx x;
    coll_sched sc;
    int pos;
    const coll_phase *ph = coll_member_sched(r, m, 0, k, &x, &sc, &pos);
    uint32_t n_recv = 0;
    uint64_t red = 0;
    uint32_t nx = coll_sched_step(&sc, pos, k - ph->step0, r->scratch, &n_recv, &red);
    if (m == 0)
      *sh = (fast_sym_shape){ nx, nx > 0 ? r->scratch[0].bytes : 0, red, FALSE };
    if (nx != sh->n || n_recv != sh->n || red != sh->red)
      return FALSE;
    for (uint32_t i = 0; i < nx; i++) {
      int dm = coll_pos_member(r, ph, x.base, r->scratch[i].peer, 0);
      if (r->scratch[i].bytes != sh->b || ph->step0 + r->scratch[i].recv_step != k || dm == m)
        return FALSE;
      if (r->stream) {
        gboolean inter = coll_pair_is_inter(r->lib->t, r->ranks[m], r->ranks[dm]);
        if (m_first < 0) {
          m_first = m;
          dm_first = dm;
          sh->inter = inter;
        } else if (inter != sh->inter) {
          return FALSE;
        }
      }
      got[dm]++;
    }
  }
  for (int m = 0; m < r->n; m++)
    if (got[m] != sh->n)
      return FALSE; /* a downlink would carry another count than its member expects */
  if (m_first >= 0)
    sh->b = fast_wire(r, m_first, dm_first, sh->b); /* every transfer of the step is inflated alike */
  return TRUE;
}

/* The links of a symmetric run: per member its uplink and downlink on the
 * switch, from the hop to the next member (every route between two
 * members of one switch dimension is uplink(src), downlink(dst):
 * topo_route.c's route_in_dim); all uplinks alike, all downlinks alike,
 * every hop alike for the net (net_hop_alike: latency, rate), every link
 * idle and unclaimed at t0 (recorded for the rewind).  FALSE: the mode
 * does not apply; nothing was charged.  O(q). */
static gboolean fast_sym_links(coll_rt *c, coll_run *r, uint32_t *up, uint32_t *down, net_hop *h0)
{
  int q = r->n;
  for (int m = 0; m < q; m++) {
    net_hop h;
    coll_run_hop_init(r, r->ranks[r->gmember[m]], r->ranks[r->gmember[(m + 1) % q]], &h);
    if (h.n_links != 2)
      return FALSE;
    if (m == 0)
      *h0 = h;
    else if (!net_hop_alike(c->n, h0, &h))
      return FALSE;
    up[r->gmember[m]] = h.route[0];
    down[r->gmember[(m + 1) % q]] = h.route[1];
  }
  for (int m = 0; m < q; m++)
    if (!coll_fast_link_use(c, r, up[m]) || !coll_fast_link_use(c, r, down[m]))
      return FALSE;
  return TRUE;
}

/* The symmetric mode of the path (one switch dimension, every step alike
 * for every member: fast_sym_step), for the ideal library and for NCCL's
 * one-chunk plans (streamed steps: NVLS, pairwise and direct all-to-all;
 * its trees and sliced rings pipeline chunks and are not taken).  Every
 * uplink then carries the same sequence of transfers issued at the same
 * instants, and so does every
 * downlink; links idle at t0 start in one state (net_hop_at resets an
 * idle link at its first use), so by induction every uplink, and every
 * downlink, goes through the same states.  A member's last transfer on
 * its own uplink and its last receive on its own downlink finish last
 * among its transfers of the step (FIFO), so every member ends step k at
 *     e(k) = net_hop_at(up(0) -> down(1), b) after n such charges + w(k),
 * the per-transfer path's time; the order of same-instant issues moves a
 * transfer within a downlink's queue but changes neither a link's last
 * finish nor any member's end.  So one member's route is charged per step
 * (O(n) net arithmetic) and the other links get its final states and
 * counters (net_hop_mirror); the issue order is not needed.  FALSE: the
 * mode does not apply (nothing charged, or the charge taken back: the
 * general pass follows, except for streamed runs, which go per
 * transfer).  O(q x steps) schedule queries once per plan (the verdict
 * and shapes are kept per plan: coll_symcache.c), O(q) links. */
static gboolean fast_symmetric(coll_rt *c, coll_run *r)
{
  int q = r->n;
  if (r->flat_kind != TOPO_KIND_SWITCH || r->n_g != 1 || r->splits != NULL || q < 2)
    return FALSE;
  fast_sym_shape *sh = g_new(fast_sym_shape, r->n_steps);
  uint32_t *up = g_new(uint32_t, (size_t)q), *down = g_new(uint32_t, (size_t)q);
  net_hop h0;
  gboolean ok = TRUE;
  if (!coll_symcache_lookup(c, r, sh, sizeof *sh, &ok)) { /* the same plan's verdict, else the check */
    for (uint32_t k = 0; k < r->n_steps && ok; k++)
      ok = fast_sym_step(r, k, &sh[k], up); /* up: scratch counters until fast_sym_links */
    coll_symcache_store(c, r, sh, sizeof *sh, ok);
  }
  ok = ok && fast_sym_links(c, r, up, down, &h0);
  /* Streamed steps end at their receives, not their sends: equal when
   * the uplink and the downlink serve at one rate (every transfer of a
   * step at up-queue place i and down-queue place j arrives at
   * s + max(i, j) T + alpha, so the last send and the last receive of
   * every member both arrive at s + n T + alpha). */
  ok = ok && (!r->stream || h0.uniform);
  sim_time_ps s = r->t0;
  uint64_t n_total = 0, bytes_total = 0;
  for (uint32_t k = 0; k < r->n_steps && ok; k++) {
    r->step_t[k] = s;
    sim_time_ps e = s;
    for (uint32_t i = 0; i < sh[k].n; i++)
      e = net_hop_at(c->n, &h0, sh[k].b, s);
    n_total += sh[k].n;
    bytes_total += (uint64_t)sh[k].n * sh[k].b;
    r->fast_charged += sh[k].n;
    if (sh[k].n > 0 && e <= s)
      ok = FALSE; /* arrives in its own instant: the order of that instant is not modelled */
    s = e + coll_reduce_ps(r->lib, sh[k].red);
  }
  if (ok) {
    int m0 = r->gmember[0], m1 = r->gmember[1 % q];
    for (int m = 0; m < q; m++) {
      net_hop fu = { .route = &up[m0], .n_links = 1 }, tu = { .route = &up[m], .n_links = 1 };
      net_hop fd = { .route = &down[m1], .n_links = 1 }, td = { .route = &down[m], .n_links = 1 };
      if (m != m0) {
        net_hop_mirror(c->n, &fu, &tu, bytes_total, n_total);
        r->fast_charged += n_total;
      }
      if (m != m1)
        net_hop_mirror(c->n, &fd, &td, bytes_total, 0);
      r->fin[m] = s;
    }
  }
  g_free(sh);
  g_free(up);
  g_free(down);
  return ok;
}

/* A new stamp for the links a pass records (coll_fast_link_use).  O(1),
 * O(links) when the stamp wraps. */
static void fast_new_stamp(coll_rt *c)
{
  uint32_t nl = topo_n_links(c->t);
  if (c->link_stamp == NULL)
    c->link_stamp = g_new0(uint32_t, nl ? nl : 1);
  if (++c->stamp == 0) {
    memset(c->link_stamp, 0, sizeof *c->link_stamp * (nl ? nl : 1));
    c->stamp = 1;
  }
}

void coll_fast_open(coll_rt *c, coll_run *r)
{
  fast_new_stamp(c);
  r->t0 = sim_now(c->sim);
  r->fast_charged = 0;
  r->fast_links = g_array_new(FALSE, FALSE, sizeof(fast_link));
  r->fin = g_new(sim_time_ps, (size_t)r->n);
}

void coll_fast_decline(coll_rt *c, coll_run *r)
{
  coll_fast_rewind(c, r);
  g_array_free(r->fast_links, TRUE);
  r->fast_links = NULL;
  g_free(r->step_t);
  r->step_t = NULL;
  g_free(r->fin);
  r->fin = NULL;
  c->ring.phase_declined++;
}

void coll_fast_take(coll_rt *c, coll_run *r, net_claim_fn convert)
{
  c->ring.phase_runs++;
  r->done_ev = g_new(sim_event_id, (size_t)r->n);
  r->claim = net_claim_new(c->n, convert, r);
  for (guint i = 0; i < r->fast_links->len; i++)
    net_claim_link(c->n, r->claim, g_array_index(r->fast_links, fast_link, i).link);
  for (int m = 0; m < r->n; m++)
    r->done_ev[m] = sim_schedule_at(c->sim, r->fin[m], coll_member_done_ev, r, (uint64_t)m);
}

gboolean coll_fast_begin(coll_rt *c, coll_run *r)
{
  if (!fast_candidate(c, r))
    return FALSE;
  coll_fast_open(c, r);
  r->step_t = g_new(sim_time_ps, (size_t)r->n_steps);
  gboolean sym = fast_symmetric(c, r);
  if (!sym && r->fast_links->len > 0) {
    coll_fast_rewind(c, r); /* the symmetric mode charged and declined: start again */
    g_array_set_size(r->fast_links, 0);
    fast_new_stamp(c);
  }
  if (sym)
    c->ring.phase_symmetric++;
  else if (r->stream || !fast_pass(c, r, FAST_NEVER)) { /* the general pass ends steps at their sends too */
    coll_fast_decline(c, r);
    return FALSE;
  }
  coll_fast_take(c, r, fast_convert);
  return TRUE;
}
