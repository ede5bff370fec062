/* coll_fast_tree.c: the tree path of the analytical tier (issue 30 item
 * 1): plans with a double binary tree, the ideal library's (`--algo
 * tree`: one flat phase, one chunk per tree) and NCCL's (streamed steps
 * pipelined chunk by chunk with NCCL's FIFO window, any phases around the
 * tree), charged without a transfer record or shared-engine event per
 * transfer.
 *
 * A tree's members do not stay in step (a leaf sends at once, an interior
 * node when its children's data is in, and a node's up- and downlink
 * carry both trees' transfers), so neither the ring recurrence nor the
 * step-synchronous pass of coll_fast.c applies, and which transfer a link
 * serves first depends on the order in which the per-transfer path issues
 * transfers of one instant.  This path replays that path's state machine
 * exactly, on the run's own slots and counters, with a private engine as
 * its queue: run_begin kicks the slots in slot order (coll_rt.c); a kick
 * advances a slot and the slots it wakes, last woken first (coll_run_kick);
 * a slot starts a step when its gate is open (NCCL: behind the lane's
 * previous chunk and within the FIFO window), with its transfers charged
 * by net_hop_at (net_send's tier A arithmetic, NCCL's protocol inflation
 * per tier) in schedule order; it ends the step when its receives are in
 * and, unless streamed, its sends have arrived (coll_run.c slot_advance),
 * after its local wait (a reduction cost); an arrival counts at the
 * receiver and advances it, then the sender or (streamed) the lane's
 * chunk the FIFO held back (coll_xfer_done).  The private engine orders events by (time, sequence
 * of scheduling) as the shared one does (simcore/sim.h), and the run's
 * events are scheduled only while its own events run, so they come out
 * in the shared engine's order and every link is charged in the same
 * order: the members' done times, the link byte counters and the transfer
 * count are the per-transfer path's.  It is taken when, besides the
 * shape (tree_candidate), every link the run uses is idle and unclaimed
 * at the start (net_link_idle) and every transfer arrives after its issue
 * instant; else the charge is taken back (coll_fast_decline) and the run
 * goes per transfer.
 *
 * A run on the path schedules one done event per member and claims its
 * links; another transfer over one of them calls tree_convert at that
 * instant t: the links are rewound, the replay runs again from the start
 * through the events before t (the run's start counts as before; an
 * event at t as after, as in coll_fast.c), which leaves the slots and
 * counters in the per-transfer path's state at t, and the events still
 * queued become shared-engine events in queue order (transfer records at
 * their arrival, reduction waits).  Memory: during a replay the run's
 * own slots and counters (O(members x chunks x steps), as per transfer)
 * plus one private-engine event per transfer in flight (a conversion's
 * replay: a 40-byte entry each too); between its start and a conversion
 * neither (tree_release).  Cost: one coll_sched_step per slot and step,
 * one net_hop_at per transfer (routes: per member within one switch
 * dimension, else the table of rank pairs, coll_tree_hops.c), O(1)
 * amortized per queue operation, one shared-engine event per member.  Measured: one NCCL
 * tree/LL128 all-reduce of 96 MiB over 2,048 members 1.2 s of CPU and
 * 113 MB against 4-5 s and 276 MB per transfer (doc/scaling.md).
 *
 * A job repeats its collectives (same plan, bytes and members), and a
 * replay that starts on idle links depends on the links only through
 * "idle" (net_hop_at resets an idle link at its first use) and on time
 * only through differences: its result started at t0 + d is the result
 * at t0 shifted by d.  So a full replay's result is kept per plan
 * (coll_symcache.c, kind COLL_MEMO_TREE: done times, the links' FIFO
 * states and byte counts relative to t0, the transfer count), and a
 * later run of the plan whose links are all idle and unclaimed at its
 * start takes it shifted (tree_memo_take: O(members + links), no
 * counters allocated); else it replays as above.  Such a run claims its
 * links and converts exactly like a replayed one (the conversion
 * replays from its start).  NCCL's chain of 16 MiB all-reduces over 256
 * ranks on dgx-h100 (200 steps): 0.84 -> 0.06 s of user CPU.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "collectives/coll_run.h"
#include "collectives/coll_tree_hops.h"

/* One queued event of the replay: a transfer's arrival (src, dst slot,
 * the receiver's step) or the end of a slot's reduction wait (src). */
typedef struct {
  sim_time_ps at;
  uint64_t seq;
  uint32_t src, dst, step;
  uint32_t src_step;  /* the sender's step (streamed runs count its sends in flight) */
  uint32_t reduce;
} tree_ev;

#define TREE_NEVER SIM_TIME_MAX

/* The replay's state: the queue (a private engine, simcore/sim.h, whose
 * events name entries of `ev`; an entry is live from its push to its
 * run, free ones are chained through `step`), the clock,
 * the slots each member has still to finish, and the stop instant of a
 * conversion (TREE_NEVER: the whole run). */
typedef struct {
  coll_rt *c;
  coll_run *r;
  sim_engine *q;
  tree_ev *ev;
  size_t n, cap;      /* entries made; capacity */
  uint32_t free_ev;   /* first free entry, or UINT32_MAX */
  gboolean packed;    /* events packed in the engine's argument (TREE_PACK_SLOT) */
  uint64_t seq;
  sim_time_ps now, t_stop;
  int *left;
  gboolean ok;
  uint32_t *work;     /* coll_run_kick's worklist (a stack of slots): work_len of work_cap */
  size_t work_len, work_cap;
  /* One switch dimension (tree_switch_links): per member its uplink and
   * downlink, and one prepared hop whose route is `pair`; else NULL. */
  uint32_t *up, *down;
  net_hop h0;
  uint32_t pair[2];
} tree_emu;

/* Whether run r has the shape the path covers: one flat phase of the
 * double binary tree, one chunk per tree, no library engine, no stream,
 * no pre- or post-delay, no interference accounting; and as many members
 * as the fast paths' threshold (coll_rt_set_ring_recurrence).  O(1). */
static gboolean tree_candidate(const coll_rt *c, const coll_run *r)
{
  if (r->n < COLL_RING_RECURRENCE_MIN + c->ring_min_delta || r->n < 2 || net_get_tier(c->n) != NET_TIER_ANALYTICAL ||
      r->engine || r->p2p || r->held != NULL || r->ovl_on != NULL || r->slot_local_done != NULL ||
      c->ops->post_delay != NULL || r->n_steps == 0)
    return FALSE;
  gboolean tree = FALSE;
  for (int i = 0; i < r->n_phases; i++)
    tree = tree || r->ph[i].algo == COLL_ALGO_DOUBLE_BINARY_TREE;
  if (!tree)
    return FALSE;
  if (r->stream)
    return r->step_pipe; /* NCCL's plans pipeline step by step (coll_nccl_plan_chunks) */
  return !r->step_pipe && r->lperm == NULL && r->n_phases == 1 && r->n_chunks == r->lanes;
}

static gboolean ev_before(const tree_ev *a, const tree_ev *b)
{
  return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static void emu_handler(sim_engine *sim, void *ctx, uint64_t arg);
static void emu_handler_packed(sim_engine *sim, void *ctx, uint64_t arg);

/* A whole-run replay (no conversion: nothing to hand over) packs an event
 * into the engine's argument instead of an entry, when slots and steps
 * fit: src and dst slot 22 bits each, the steps 9 bits each, one bit for
 * a reduction end (one cache miss less per event). */
#define TREE_PACK_SLOT 22
#define TREE_PACK_STEP 9

/* Queues an event at `at` with the next sequence number: an entry and an
 * engine event that names it.  O(1) amortized. */
static void emu_push(tree_emu *e, sim_time_ps at, uint32_t src, uint32_t dst, uint32_t step, uint32_t src_step,
                     uint32_t reduce)
{
  if (e->packed) {
    uint64_t a = (uint64_t)src | (uint64_t)dst << TREE_PACK_SLOT | (uint64_t)step << (2 * TREE_PACK_SLOT) |
                 (uint64_t)src_step << (2 * TREE_PACK_SLOT + TREE_PACK_STEP) |
                 (uint64_t)reduce << (2 * TREE_PACK_SLOT + 2 * TREE_PACK_STEP);
    sim_post_at(e->q, at, emu_handler_packed, e, a);
    return;
  }
  uint32_t i = e->free_ev;
  if (i != UINT32_MAX) {
    e->free_ev = e->ev[i].step;
  } else {
    if (e->n == e->cap) {
      e->cap = e->cap ? 2 * e->cap : 256;
      e->ev = g_renew(tree_ev, e->ev, e->cap);
    }
    i = (uint32_t)e->n++;
  }
  e->ev[i] = (tree_ev){ at, e->seq++, src, dst, step, src_step, reduce | 2 };
  sim_post_at(e->q, at, emu_handler, e, i);
}

/* Starts slot s's current step as slot_start does: its schedule, then its
 * transfers charged in schedule order and queued at their arrival.
 * FALSE (outside a conversion): the path does not apply (a link busy or
 * claimed at t0, an arrival in its own instant).  O(transfers x route
 * length), O(1) amortized per queued event. */
static gboolean emu_start(tree_emu *e, uint32_t s)
{
  coll_run *r = e->r;
  coll_rt *c = e->c;
  coll_slot *sl = &r->slot[s];
  int m = (int)(s / (uint32_t)r->n_chunks);
  int ch = (int)(s % (uint32_t)r->n_chunks);
  gboolean conv = e->t_stop != TREE_NEVER;
  coll_a2av_ctx x;
  uint32_t nx = 0;
  const coll_phase *ph = coll_slot_step_begin(r, s, &x, &nx);
  if (!r->stream)
    sl->pend += nx; /* a streamed step does not wait for its sends */
  for (uint32_t i = 0; i < nx; i++) {
    const coll_xfer *xf = &r->scratch[i];
    int dm = coll_pos_member(r, ph, x.base, xf->peer, ch);
    net_hop *h = &e->h0;
    gboolean inter = FALSE;
    tree_pair *p = NULL;
    if (e->up != NULL) {
      e->pair[0] = e->up[m]; /* route_in_dim of a switch: the sender's uplink, the receiver's downlink */
      e->pair[1] = e->down[dm];
      inter = r->stream && coll_run_pair_inter(c->t, r, m, dm);
    } else {
      p = coll_tree_pair_of(c, r->ranks[m], r->ranks[dm]);
      h = coll_tree_pair_hop(c, p);
      inter = p->inter;
    }
    if (!conv && xf->bytes > 0 && (p == NULL || p->stamp != c->tree_hops->run)) {
      for (uint32_t j = 0; j < h->n_links; j++)
        if (!coll_fast_link_use(c, r, h->route[j]))
          return FALSE;
      if (p != NULL)
        p->stamp = c->tree_hops->run; /* its links are this run's: checked once */
    }
    uint16_t *sent = r->sent != NULL ? &r->sent[(size_t)s * r->n_steps + sl->cur] : NULL;
    if (sent != NULL && *sent == UINT16_MAX)
      return FALSE; /* slot_start asserts it: leave it to the per-transfer path */
    if (sent != NULL)
      (*sent)++;
    uint64_t wire = xf->bytes;
    if (r->stream && wire > 0) /* the protocol's efficiency on the pair's tier, as slot_start */
      wire = (uint64_t)ceil((double)wire * (inter ? r->inv_eff_inter : r->inv_eff_intra));
    /* The hops are shared by runs (tree_hop_of), so the run's reference
     * wire comes off the arrival, as net_send_arrival_less takes it off
     * the route (tier A adds the latency after the links' FIFOs). */
    sim_time_ps arr = net_hop_at(c->n, h, wire, e->now);
    arr -= MIN(h->latency, coll_run_wire_less(r, ch, r->ranks[m], r->ranks[dm]));
    r->fast_charged++;
    if (arr <= e->now && !conv)
      return FALSE; /* arrives in its own instant: the conversion rule does not cover it */
    emu_push(e, arr, s, (uint32_t)dm * (uint32_t)r->n_chunks + (uint32_t)ch, ph->step0 + xf->recv_step, sl->cur, 0);
  }
  return TRUE;
}

/* Whether slot s may start step k (phase_gate_open): streamed runs
 * pipeline chunks step by step (behind the lane's previous chunk, at most
 * fifo_chunks of a lane in flight per step); the ideal tree's one phase
 * with one chunk per tree is always open.  O(1). */
static gboolean emu_gate(const coll_run *r, uint32_t s, uint32_t k)
{
  return !r->step_pipe || coll_pipe_gate_open(r, s, k);
}

/* Pushes slot s on the worklist.  O(1) amortized. */
static inline void emu_work_push(tree_emu *e, uint32_t s)
{
  if (e->work_len == e->work_cap) {
    e->work_cap = e->work_cap ? 2 * e->work_cap : 64;
    e->work = g_renew(uint32_t, e->work, e->work_cap);
  }
  e->work[e->work_len++] = s;
}

/* Advances slot s as far as it goes now (slot_advance without engine,
 * pre- or post-delay): a streamed run's slot that ends a step wakes the
 * lane's next chunk (pushed on the worklist); the ideal tree's wake-ups
 * at its one phase's end find every slot started and are left out.  A
 * member whose last slot ends has its done time in r->fin.  O(steps
 * advanced x emu_start). */
static void emu_advance(tree_emu *e, uint32_t s)
{
  coll_run *r = e->r;
  coll_slot *sl = &r->slot[s];
  for (;;) {
    uint32_t k = sl->cur;
    if (k >= r->n_steps || !e->ok)
      return;
    if (sl->state == SLOT_IDLE) {
      if (!emu_gate(r, s, k))
        return;
      if (!emu_start(e, s)) {
        e->ok = FALSE;
        return;
      }
    }
    if (sl->state == SLOT_RUNNING) {
      if (r->recv[(size_t)s * r->n_steps + k] < sl->need || (!r->stream && sl->pend > 0))
        return;
      sim_time_ps wait = r->slot_red != NULL ? coll_reduce_ps(r->lib, r->slot_red[s]) : 0;
      if (wait > 0) {
        if (wait >= SIM_TIME_LIMIT - e->now) {
          e->ok = FALSE; /* the engine would refuse it: leave it to the per-transfer path */
          return;
        }
        sl->state = SLOT_REDUCING;
        emu_push(e, e->now + wait, s, 0, 0, 0, 1);
        return;
      }
    } else if (sl->state == SLOT_REDUCING) {
      return;
    }
    sl->cur = k + 1;
    sl->state = SLOT_IDLE;
    if (r->step_pipe && (int)(s % (uint32_t)r->n_chunks) + r->lanes < r->n_chunks)
      emu_work_push(e, s + (uint32_t)r->lanes);
    if (sl->cur == r->n_steps) {
      int m = (int)(s / (uint32_t)r->n_chunks);
      if (--e->left[m] == 0)
        r->fin[m] = e->now;
      return;
    }
  }
}

/* coll_run_kick: slot s, then the slots its advance woke, last woken
 * first.  O(the advances). */
static void emu_kick(tree_emu *e, uint32_t s)
{
  e->work_len = 0;
  emu_work_push(e, s);
  while (e->work_len > 0 && e->ok) {
    uint32_t x = e->work[--e->work_len];
    emu_advance(e, x);
  }
}

/* Runs one queued event (coll_xfer_done, coll_reduce_done).  O(the
 * advances it causes). */
static void emu_event(tree_emu *e, const tree_ev *v)
{
  coll_run *r = e->r;
  if (v->reduce) {
    r->slot[v->src].state = SLOT_REDUCED;
    emu_kick(e, v->src);
    return;
  }
  uint16_t *cnt = &r->recv[(size_t)v->dst * r->n_steps + v->step];
  if (*cnt == UINT16_MAX) {
    e->ok = FALSE;
    return;
  }
  (*cnt)++;
  gboolean dst_waits = r->slot[v->dst].cur == v->step;
  if (!r->stream) {
    g_assert(r->slot[v->src].pend > 0);
    r->slot[v->src].pend--;
    if (dst_waits && v->dst != v->src)
      emu_kick(e, v->dst);
    emu_kick(e, v->src);
    return;
  }
  /* Streamed: only the receiver advances; the sender's next chunk may
   * wait for this step's sends to land. */
  uint32_t next = v->src + (uint32_t)(r->fifo_chunks * r->lanes);
  gboolean wake_next = FALSE;
  if (r->sent != NULL) {
    uint16_t *sc = &r->sent[(size_t)v->src * r->n_steps + v->src_step];
    g_assert(*sc > 0);
    wake_next = --*sc == 0 &&
                (int)(v->src % (uint32_t)r->n_chunks) + r->fifo_chunks * r->lanes < r->n_chunks &&
                r->slot[next].cur == v->src_step && r->slot[next].state == SLOT_IDLE;
  }
  if (dst_waits)
    emu_kick(e, v->dst);
  if (wake_next)
    emu_kick(e, next);
}

/* The private engine's handler: runs entry arg and frees it.  O(the
 * advances it causes). */
static void emu_handler(sim_engine *sim, void *ctx, uint64_t arg)
{
  tree_emu *e = ctx;
  tree_ev v = e->ev[arg];
  v.reduce &= 1;
  e->ev[arg].reduce = 0; /* not live */
  e->ev[arg].step = e->free_ev;
  e->free_ev = (uint32_t)arg;
  e->now = sim_now(sim);
  emu_event(e, &v);
  if (!e->ok)
    sim_stop(sim);
}

static void emu_handler_packed(sim_engine *sim, void *ctx, uint64_t arg)
{
  tree_emu *e = ctx;
  const uint64_t ms = ((uint64_t)1 << TREE_PACK_SLOT) - 1, mk = ((uint64_t)1 << TREE_PACK_STEP) - 1;
  tree_ev v = { .src = (uint32_t)(arg & ms), .dst = (uint32_t)(arg >> TREE_PACK_SLOT & ms),
                .step = (uint32_t)(arg >> (2 * TREE_PACK_SLOT) & mk),
                .src_step = (uint32_t)(arg >> (2 * TREE_PACK_SLOT + TREE_PACK_STEP) & mk),
                .reduce = (uint32_t)(arg >> (2 * TREE_PACK_SLOT + 2 * TREE_PACK_STEP)) };
  e->now = sim_now(sim);
  emu_event(e, &v);
  if (!e->ok)
    sim_stop(sim);
}

/* Replays the run from r->t0 on fresh slots and counters: to its end
 * (t_stop TREE_NEVER; FALSE when the path does not apply) or through the
 * events before t_stop (a conversion; the queue keeps the rest).  O(run's
 * transfers x route length), O(1) amortized per event (a radix heap). */
static gboolean emu_run(tree_emu *e)
{
  coll_run *r = e->r;
  size_t n_slots = (size_t)r->n * (size_t)r->n_chunks;
  memset(r->slot, 0, sizeof *r->slot * n_slots);
  memset(r->recv, 0, sizeof *r->recv * n_slots * r->n_steps);
  if (r->sent != NULL)
    memset(r->sent, 0, sizeof *r->sent * n_slots * r->n_steps);
  for (int m = 0; m < r->n; m++)
    e->left[m] = r->n_chunks;
  e->now = r->t0;
  e->ok = TRUE;
  if (e->t_stop == TREE_NEVER)
    coll_tree_hops_new_run(e->c);
  for (uint32_t s = 0; s < (uint32_t)n_slots && e->ok; s++)
    emu_kick(e, s); /* run_begin kicks the slots in slot order */
  if (e->ok && e->t_stop > r->t0) /* every event lies after t0 (arrivals after their issue, waits > 0) */
    sim_run(e->q, e->t_stop == TREE_NEVER ? SIM_TIME_MAX : e->t_stop - 1); /* the events before t_stop */
  e->ok = e->ok && !sim_time_overflowed(e->q);
  if (!e->ok || e->t_stop != TREE_NEVER)
    return e->ok;
  for (int m = 0; m < r->n; m++)
    if (e->left[m] != 0)
      return FALSE;
  return TRUE;
}

static int cmp_ev(const void *a, const void *b)
{
  const tree_ev *x = a, *y = b;
  return ev_before(x, y) ? -1 : ev_before(y, x);
}

/* After a conversion's replay: the members whose done event has run
 * (their last event was at t_stop, after that event) are left finished;
 * the others keep the slots they still have to end.  The queued events
 * become engine events in queue order: transfers whose coll_xfer_done
 * runs at their arrival (coll_xfer_post_at), reduction ends.  O(members +
 * in flight x log in flight). */
static void emu_handover(tree_emu *e, const gboolean *done_ran)
{
  coll_run *r = e->r;
  coll_rt *c = e->c;
  for (int m = 0; m < r->n; m++) {
    if (!done_ran[m]) {
      g_assert(e->left[m] > 0); /* its done time is not before t_stop */
      r->chunks_left[m] = e->left[m];
    } else if (e->left[m] > 0) {
      for (int ch = 0; ch < r->n_chunks; ch++)
        r->slot[(size_t)m * (size_t)r->n_chunks + (size_t)ch].cur = r->n_steps; /* its pending events change nothing */
    }
  }
  size_t n_live = 0;
  for (size_t i = 0; i < e->n; i++)
    if (e->ev[i].reduce & 2)
      e->ev[n_live++] = e->ev[i]; /* the live entries, in place */
  qsort(e->ev, n_live, sizeof *e->ev, cmp_ev);
  for (size_t i = 0; i < n_live; i++) {
    const tree_ev *v = &e->ev[i];
    if (v->reduce & 1) {
      sim_post_at(c->sim, v->at, coll_reduce_done, r, v->src);
      continue;
    }
    coll_xfer_post_at(c, r, v->at, v->src, v->dst, v->step, v->src_step);
  }
}

/* A run within one switch dimension: every route between two members is
 * the sender's uplink and the receiver's downlink (topo_route.c's
 * route_in_dim).  When every uplink has the same bandwidth, latency and
 * stream rate, and so has every downlink, every pair's prepared hop is
 * the first pair's with its route replaced, so the replay needs no route
 * lookup per transfer: fills e->up, e->down and e->h0.  Else leaves them
 * NULL (a route per transfer).  O(members). */
static void tree_switch_links(tree_emu *e)
{
  coll_run *r = e->r;
  const topo *t = e->c->t;
  int q = r->n;
  if (r->flat_kind != TOPO_KIND_SWITCH || r->n_g != 1)
    return;
  uint32_t *up = g_new(uint32_t, (size_t)q), *down = g_new(uint32_t, (size_t)q);
  gboolean ok = TRUE;
  for (int m = 0; m < q && ok; m++) {
    net_hop h;
    net_hop_init(e->c->n, r->ranks[r->gmember[m]], r->ranks[r->gmember[(m + 1) % q]], &h);
    ok = h.n_links == 2;
    if (ok && m == 0)
      e->h0 = h;
    up[r->gmember[m]] = ok ? h.route[0] : 0;
    down[r->gmember[(m + 1) % q]] = ok ? h.route[1] : 0;
  }
  for (int m = 0; m < q && ok; m++)
    for (int j = 0; j < 2 && ok; j++) {
      const topo_link *a = topo_get_link(t, e->h0.route[j]), *b = topo_get_link(t, j == 0 ? up[m] : down[m]);
      ok = a->bw == b->bw && a->latency == b->latency && topo_link_rate(t, a) == topo_link_rate(t, b);
    }
  if (!ok) {
    g_free(up);
    g_free(down);
    return;
  }
  e->up = up;
  e->down = down;
  e->h0.route = e->pair;
}

/* A replay's state for run r up to t_stop, with its scratch.  O(members). */
static void tree_emu_init(tree_emu *e, coll_rt *c, coll_run *r, sim_time_ps t_stop)
{
  *e = (tree_emu){ .c = c, .r = r, .t_stop = t_stop, .left = g_new(int, (size_t)r->n),
                   .q = sim_engine_new(FALSE),
                   .free_ev = UINT32_MAX };
  e->packed = t_stop == TREE_NEVER && (uint64_t)r->n * (uint64_t)r->n_chunks <= ((uint64_t)1 << TREE_PACK_SLOT) &&
              r->n_steps <= ((uint32_t)1 << TREE_PACK_STEP);
  tree_switch_links(e);
}

static void tree_emu_clear(tree_emu *e)
{
  g_free(e->ev);
  sim_engine_free(e->q);
  g_free(e->left);
  g_free(e->up);
  g_free(e->down);
  g_free(e->work);
}

/* The claim's callback: another transfer is about to use a link of the
 * run now.  Rewinds the net, replays the events before now and hands
 * the run over to the per-transfer path (see the top comment).
 * O(transfers). */
static void tree_convert(void *ctx)
{
  coll_run *r = ctx;
  coll_rt *c = r->lib;
  sim_time_ps now = sim_now(c->sim);
  coll_fast_convert_begin(c, r);
  coll_run_alloc_counters(r); /* a run that took a kept result has none yet */
  gboolean *done_ran = g_new(gboolean, (size_t)r->n);
  for (int m = 0; m < r->n; m++) {
    done_ran[m] = r->done_ev[m] == SIM_EVENT_NONE;
    if (!done_ran[m]) {
      sim_cancel(c->sim, r->done_ev[m]);
      r->done_ev[m] = SIM_EVENT_NONE;
    }
  }
  tree_emu e;
  if (r->slot == NULL) /* released while the run was on the path (tree_release) */
    r->slot = g_new0(coll_slot, (size_t)r->n * (size_t)r->n_chunks);
  tree_emu_init(&e, c, r, now);
  gboolean ok = emu_run(&e);
  g_assert(ok); /* the same replay succeeded at the start */
  emu_handover(&e, done_ran);
  tree_emu_clear(&e);
  g_free(done_ran);
  coll_count_narrow(r);
}

/* ---- the result kept per plan ------------------------------------------ */

/* A replay's result relative to its start t0, kept per plan
 * (coll_memo_put, kind COLL_MEMO_TREE): the transfers it charged, its
 * span (every time it produced lies before t0 + span), then per member
 * its done time - t0 and per link used the FIFO state it left (free time
 * - t0, remainder) and the bytes it added. */
typedef struct {
  uint64_t transfers;
  sim_time_ps span;
  uint32_t n_links, n;
} tree_memo;

typedef struct {
  uint32_t link;
  sim_time_ps at;
  uint64_t rem, bytes;
} tree_memo_link;

/* Keeps the result of run r, just replayed in full from r->t0 (its
 * links recorded in r->fast_links and charged; r->fin filled), for the
 * next run of the same plan.  Not kept when a time overflowed (the
 * replay's arithmetic is translation-invariant only in range).
 * O(members + links). */
static void tree_memo_store(coll_rt *c, coll_run *r)
{
  if (sim_time_overflowed(c->sim))
    return;
  uint32_t nl = r->fast_links->len;
  size_t size = sizeof(tree_memo) + sizeof(sim_time_ps) * (size_t)r->n + sizeof(tree_memo_link) * nl;
  tree_memo *mo = g_malloc(size);
  sim_time_ps *fin = (sim_time_ps *)(mo + 1);
  tree_memo_link *ml = (tree_memo_link *)(fin + r->n);
  *mo = (tree_memo){ r->fast_charged, 0, nl, (uint32_t)r->n };
  for (int m = 0; m < r->n; m++) {
    fin[m] = r->fin[m] - r->t0;
    mo->span = MAX(mo->span, fin[m] + 1);
  }
  for (uint32_t i = 0; i < nl; i++) {
    const fast_link *fl = &g_array_index(r->fast_links, fast_link, i);
    sim_time_ps at;
    uint64_t rem;
    net_link_fifo(c->n, fl->link, &at, &rem);
    g_assert(at >= r->t0); /* a link the run charged was reset to its first use, not before t0 */
    ml[i] = (tree_memo_link){ fl->link, at - r->t0, rem, net_link_bytes(c->n, fl->link) - fl->bytes0 };
    mo->span = MAX(mo->span, ml[i].at + 2); /* the free time rounds up by at most 1 ps */
  }
  coll_memo_put(c, r, COLL_MEMO_TREE, mo, size);
  g_free(mo);
}

/* Takes the kept result of r's plan when there is one and every link it
 * used is idle and unclaimed now and its span fits before the time
 * limit: the replay from an idle state depends on the links' states only
 * through "idle" (net_hop_at resets an idle link at its first use, and
 * every net_hop_at term is a difference of times), so its result at a
 * later start is the kept one shifted by the start: the members' done
 * times, the links' FIFO states and byte counters, the transfer count.
 * The run is then as after a full replay (coll_fast_open: its links
 * recorded for a conversion, which replays from t0 as for any run on the
 * path).  FALSE: nothing changed.  O(members + links). */
static gboolean tree_memo_take(coll_rt *c, coll_run *r)
{
  const void *data = NULL;
  size_t size = 0;
  if (!coll_memo_get(c, r, COLL_MEMO_TREE, &data, &size))
    return FALSE;
  const tree_memo *mo = data;
  const sim_time_ps *fin = (const sim_time_ps *)(mo + 1);
  const tree_memo_link *ml = (const tree_memo_link *)(fin + mo->n);
  sim_time_ps t0 = sim_now(c->sim);
  g_assert(mo->n == (uint32_t)r->n);
  if (mo->span >= SIM_TIME_LIMIT - t0)
    return FALSE;
  for (uint32_t i = 0; i < mo->n_links; i++)
    if (!net_link_idle(c->n, ml[i].link, t0))
      return FALSE;
  coll_fast_open(c, r);
  for (uint32_t i = 0; i < mo->n_links; i++) {
    gboolean idle = coll_fast_link_use(c, r, ml[i].link);
    g_assert(idle);
    net_link_charge(c->n, ml[i].link, t0 + ml[i].at, ml[i].rem, ml[i].bytes);
  }
  net_transfers_credit(c->n, mo->transfers);
  r->fast_charged = mo->transfers;
  for (int m = 0; m < r->n; m++)
    r->fin[m] = t0 + fin[m];
  return TRUE;
}

/* A run on the path needs its slots and dense counters only during a
 * replay: its done events and its claim read neither, and a conversion
 * replays from fresh ones (tree_convert allocates them again).  So they
 * are freed when the run takes the path: 8 bytes per slot and 2 or 4
 * per slot and step (a 2,048-member NCCL tree all-reduce: 2 M slots, 48
 * MB) for as long as the run stays on it.  O(1). */
static void tree_release(coll_run *r)
{
  g_free(r->slot);
  g_free(r->recv);
  g_free(r->sent);
  r->slot = NULL;
  r->recv = r->sent = NULL;
}

gboolean coll_fast_tree_begin(coll_rt *c, coll_run *r)
{
  if (!tree_candidate(c, r))
    return FALSE;
  if (tree_memo_take(c, r)) {
    c->ring.phase_tree++;
    c->ring.phase_tree_reused++;
    coll_fast_take(c, r, tree_convert);
    tree_release(r);
    return TRUE;
  }
  coll_run_alloc_counters(r);
  coll_fast_open(c, r);
  tree_emu e;
  tree_emu_init(&e, c, r, TREE_NEVER);
  gboolean ok = emu_run(&e);
  tree_emu_clear(&e);
  if (!ok) {
    coll_fast_decline(c, r);
    uint32_t n_slots = (uint32_t)r->n * (uint32_t)r->n_chunks;
    memset(r->slot, 0, sizeof *r->slot * n_slots); /* the per-transfer path starts from fresh slots */
    memset(r->recv, 0, sizeof *r->recv * (size_t)n_slots * r->n_steps);
    if (r->sent != NULL)
      memset(r->sent, 0, sizeof *r->sent * (size_t)n_slots * r->n_steps);
    if (r->slot_red != NULL)
      memset(r->slot_red, 0, sizeof *r->slot_red * n_slots);
    return FALSE;
  }
  tree_memo_store(c, r);
  c->ring.phase_tree++;
  coll_fast_take(c, r, tree_convert);
  tree_release(r);
  return TRUE;
}
