/* coll_run.c: running a planned collective as per-member state machines
 * over net_send().  The collective's bytes are cut into chunks; each
 * (member, chunk) pair is a slot that walks the plan's steps in order.
 * Chunks pipeline across dimensions with one active chunk per dimension
 * and member (see phase_gate_open); with streamed steps (the NCCL
 * family's plan) they pipeline step by step instead, one behind the other
 * with NCCL's FIFO window (coll_run.step_pipe); a slot finishes step k
 * once its own sends of step k have arrived and it has received every
 * transfer addressed to its step k (plus, optionally, the local reduction
 * time).  Engine-driven steps (a library family with a step hook) end
 * when their receives are in and the member's engine has sent its
 * writes.  Transfers go through net_send() on the flow tier and for
 * library engines; on the analytical tier through net_send_arrival(),
 * with the run's own arrival event (the transfer packed into its
 * argument), so a transfer in flight costs the engine's entry only.
 * Memory: O(members * chunks) slots of 8 bytes and step counters per
 * collective (coll_count.c: one byte per slot and step, or a window of
 * steps per slot).  Work:
 * O(1) amortised per transfer plus O(q) per step start for algorithms
 * that emit q transfers.  Also the interference bookkeeping of members in
 * flight and the transfer records.  Never names a library: the run reads
 * its flags and calls the family's hooks (coll_run.h).
 */
#include "config.h"

#include <math.h>

#include "collectives/coll_run.h"

void coll_run_free(coll_run *r)
{
  if (r->claim != 0)
    net_claim_release(r->lib->n, r->claim);
  g_free(r->fin);
  g_free(r->done_ev);
  g_free(r->hop);
  g_free(r->step_t);
  if (r->fast_links != NULL)
    g_array_free(r->fast_links, TRUE);
  g_free(r->ranks);
  g_free(r->splits);
  g_free(r->gidx);
  g_free(r->gmember);
  g_free(r->slot);
  g_free(r->slot_local_done);
  g_free(r->slot_red);
  coll_count_free(r);
  g_free(r->chunks_left);
  g_free(r->scratch);
  g_free(r->held);
  g_free(r->t_begin);
  g_free(r->copy_out_m);
  g_free(r->ovl_on);
  g_free(r->lperm);
  g_free(r->linv);
  g_free(r);
}

/* Member m of r enters (sign 1) or leaves (-1) its rank's in-flight set;
 * reports the rank's new delta when it changed.  The sums are integers,
 * so a rank with nothing in flight is back at exactly delta 0.  O(1) plus
 * the callback. */
static void ovl_apply(coll_run *r, int m, int sign)
{
  coll_rt *c = r->lib;
  int rank = r->ranks[m];
  c->ovl_cores[rank] += sign * r->ovl_cores;
  c->ovl_sdma[rank] += sign * r->ovl_sdma;
  if (sign > 0)
    c->ovl_rate[rank] += r->ovl_rate;
  else
    c->ovl_rate[rank] -= r->ovl_rate;
  double d = c->ops->interference(&c->pol.lib, c->ovl_cores[rank], c->ovl_rate[rank], c->ovl_sdma[rank]);
  if (d != c->ovl_delta[rank]) {
    c->ovl_delta[rank] = d;
    c->ovl_fn(c->sim, c->ovl_ctx, rank, d);
  }
}

void coll_ovl_begin(coll_run *r, int m)
{
  if (r->ovl_on == NULL || r->ovl_on[m] != 0)
    return;
  r->ovl_on[m] = 1;
  ovl_apply(r, m, 1);
}

void coll_ovl_begin_ev(sim_engine *sim, void *ctx, uint64_t arg)
{
  (void)sim;
  coll_ovl_begin(ctx, (int)arg);
}

/* Before member m's done(): its rank's compute speeds up again. */
void coll_ovl_end(coll_run *r, int m)
{
  if (r->ovl_on == NULL)
    return;
  if (r->ovl_on[m] == 1)
    ovl_apply(r, m, -1);
  r->ovl_on[m] = 2;
}

uint32_t coll_xr_alloc(coll_rt *c)
{
  if (c->free_xr != XR_NONE) {
    uint32_t i = c->free_xr;
    c->free_xr = c->xr[i].next_free;
    return i;
  }
  if (c->n_xr == c->cap_xr) {
    c->cap_xr = c->cap_xr ? 2 * c->cap_xr : 1024;
    c->xr = g_renew(coll_xrec, c->xr, c->cap_xr);
  }
  return c->n_xr++;
}

/* ---- running ----------------------------------------------------------- */

static uint64_t a2av_bytes(const void *vctx, int a, int b)
{
  const coll_a2av_ctx *x = vctx;
  int ma = coll_pos_member(x->r, x->ph, x->base, a, x->c);
  int mb = coll_pos_member(x->r, x->ph, x->base, b, x->c);
  return coll_piece(x->r->splits[(size_t)ma * (size_t)x->r->n + (size_t)mb], x->r->n_chunks, x->c);
}

static const coll_phase *phase_of(const coll_run *r, uint32_t k)
{
  for (int i = r->n_phases - 1; i >= 0; i--)
    if (k >= r->ph[i].step0)
      return &r->ph[i];
  g_assert_not_reached();
  return NULL;
}


/* Whether a transfer between two ranks leaves the scale-up domain: they
 * differ in a dimension other than 0 (the innermost dimension is the
 * node's, doc/collectives.md "The NCCL model").  O(dims). */
gboolean coll_pair_is_inter(const topo *t, int a, int b)
{
  int nd = topo_n_dims(t);
  for (int d = 1; d < nd; d++)
    if (topo_rank_coord(t, a, d) != topo_rank_coord(t, b, d))
      return TRUE;
  return FALSE;
}

sim_time_ps coll_run_wire_less(const coll_run *r, int ch, int src_rank, int dst_rank)
{
  if ((r->wire_ref_intra == 0 && r->wire_ref_inter == 0) || ch >= r->lanes)
    return 0;
  return coll_pair_is_inter(r->lib->t, src_rank, dst_rank) ? r->wire_ref_inter : r->wire_ref_intra;
}

void coll_run_hop_init(const coll_run *r, int src_rank, int dst_rank, net_hop *h)
{
  net_hop_init(r->lib->n, src_rank, dst_rank, h);
  h->latency -= MIN(h->latency, coll_run_wire_less(r, 0, src_rank, dst_rank));
}

static int cmp_u64(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* r's members' coordinates in the dimensions other than 0 as one
 * mixed-radix number each, sorted: all equal means no pair crosses
 * tiers, all distinct means every pair does.  O(n dims + n log n). */
static int run_inter_kind(const topo *t, const coll_run *r)
{
  int nd = topo_n_dims(t);
  uint64_t *key = g_new(uint64_t, (size_t)r->n);
  for (int m = 0; m < r->n; m++) {
    uint64_t k = 0;
    for (int d = nd - 1; d >= 1; d--)
      k = k * (uint64_t)topo_dim_size(t, d) + (uint64_t)topo_rank_coord(t, r->ranks[m], d);
    key[m] = k;
  }
  qsort(key, (size_t)r->n, sizeof *key, cmp_u64);
  gboolean distinct = TRUE;
  for (int m = 1; m < r->n; m++)
    distinct = distinct && key[m] != key[m - 1];
  int kind = key[0] == key[r->n - 1] ? COLL_INTER_NONE : distinct ? COLL_INTER_ALL : COLL_INTER_MIXED;
  g_free(key);
  return kind;
}

gboolean coll_run_pair_inter(const topo *t, coll_run *r, int m, int dm)
{
  if (r->inter_kind == 0)
    r->inter_kind = (uint8_t)run_inter_kind(t, r);
  if (r->inter_kind == COLL_INTER_MIXED)
    return coll_pair_is_inter(t, r->ranks[m], r->ranks[dm]);
  return r->inter_kind == COLL_INTER_ALL && m != dm;
}

/* The schedule of member m, chunk ch at global step k, seen from the
 * step's sub-group: fills *x (which *sc points to) and *sc, returns the
 * phase and the member's position.  O(1). */
const coll_phase *coll_member_sched(const coll_run *r, int m, int ch, uint32_t k, coll_a2av_ctx *x, coll_sched *sc,
                                      int *pos_out)
{
  const coll_phase *ph = phase_of(r, k);
  int q, pos, base;
  if (ph->g < 0) {
    q = r->n;
    pos = r->lperm != NULL ? r->linv[(size_t)(ch % r->lanes) * (size_t)r->n + (size_t)m] : r->gidx[m];
    base = 0;
  } else {
    q = r->gsize[ph->g];
    pos = (r->gidx[m] / r->gstride[ph->g]) % q;
    base = r->gidx[m] - pos * r->gstride[ph->g];
  }
  *x = (coll_a2av_ctx){ r, ph, ch, base };
  *sc = (coll_sched){
    .prim = ph->prim,
    .algo = ph->algo,
    .q = q,
    .root = r->root_member >= 0 ? r->gidx[r->root_member] : -1,
    .tree = ch % r->lanes,
    .bytes = (coll_piece(r->bytes, r->n_chunks, ch) + ph->div - 1) / ph->div, /* largest piece: ceil */
    .a2av = r->splits ? a2av_bytes : NULL,
    .a2av_ctx = x,
    .nvls_paired = r->nvls_paired,
  };
  *pos_out = pos;
  return ph;
}

const coll_phase *coll_slot_step_begin(coll_run *r, uint32_t s, coll_a2av_ctx *x, uint32_t *nx)
{
  coll_slot *sl = &r->slot[s];
  int m = (int)(s / (uint32_t)r->n_chunks);
  int ch = (int)(s % (uint32_t)r->n_chunks);
  coll_sched sc;
  int pos;
  const coll_phase *ph = coll_member_sched(r, m, ch, sl->cur, x, &sc, &pos);
  uint32_t n_recv = 0;
  uint64_t red = 0;
  *nx = coll_sched_step(&sc, pos, sl->cur - ph->step0, r->scratch, &n_recv, &red);
  g_assert(*nx <= UINT16_MAX && n_recv <= UINT16_MAX && r->n_steps < (1u << 24)); /* coll_slot's widths */
  sl->state = SLOT_RUNNING;
  sl->moved = *nx > 0 || n_recv > 0;
  sl->need = n_recv;
  if (r->slot_red != NULL)
    r->slot_red[s] = red;
  return ph;
}

/* A transfer in flight of a run without a library engine, on tier A,
 * packed into the engine event's argument instead of a coll_xrec (the
 * event's context is the run): the sender's slot, the receiving member
 * (its slot is the same chunk's), the receiver's step and the sender's.
 * A run whose slots, members or steps do not fit keeps records. */
#define XP_SLOT_BITS 26
#define XP_MEMBER_BITS 20
#define XP_STEP_BITS 9

static gboolean xfer_packs(const coll_run *r)
{
  return (uint64_t)r->n * (uint64_t)r->n_chunks <= ((uint64_t)1 << XP_SLOT_BITS) &&
         r->n <= (1 << XP_MEMBER_BITS) && r->n_steps <= (1u << XP_STEP_BITS);
}

static uint64_t xfer_pack(uint32_t src_slot, int dm, uint32_t dst_step, uint32_t src_step)
{
  return (uint64_t)src_slot | (uint64_t)dm << XP_SLOT_BITS | (uint64_t)dst_step << (XP_SLOT_BITS + XP_MEMBER_BITS) |
         (uint64_t)src_step << (XP_SLOT_BITS + XP_MEMBER_BITS + XP_STEP_BITS);
}

/* The bytes on the wire of a transfer of `bytes` between a pair of
 * members that crosses tiers (inter) or not: streamed steps carry the
 * payload at the protocol's efficiency on the pair's tier
 * (coll_nccl_efficiency), i.e. payload / eff bytes.  O(1). */
static uint64_t wire_bytes(const coll_run *r, gboolean inter, uint64_t bytes)
{
  if (!r->stream || bytes == 0)
    return bytes;
  double inv = inter ? r->inv_eff_inter : r->inv_eff_intra;
  return (uint64_t)ceil((double)bytes * inv);
}

/* A packed transfer landed (ctx the run, arg xfer_pack's word). */
static void coll_xfer_packed_done(sim_engine *sim, void *ctx, uint64_t arg);

/* Posts the arrival at `at` of a transfer from src_slot to dst_slot (the
 * same chunk) for the receiver's step dst_step, sent at src_step: packed
 * in the event's argument, else a coll_xrec.  O(1) amortized. */
static void xfer_post(coll_rt *c, coll_run *r, gboolean packed, sim_time_ps at, uint32_t src_slot,
                      uint32_t dst_slot, uint32_t dst_step, uint32_t src_step)
{
  if (packed) {
    sim_post_at(c->sim, at, coll_xfer_packed_done, r,
                xfer_pack(src_slot, (int)(dst_slot / (uint32_t)r->n_chunks), dst_step, src_step));
    return;
  }
  uint32_t xi = coll_xr_alloc(c);
  c->xr[xi] = (coll_xrec){ .run = r, .src_slot = src_slot, .dst_slot = dst_slot, .dst_step = dst_step,
                           .src_step = src_step };
  sim_post_at(c->sim, at, coll_xfer_done, c, xi);
}

/* Issues the nx transfers of slot s's step (r->scratch, phase ph, grid
 * base `base`) on tier A without a network record: net_send_arrival
 * charges each as net_send would and the run posts its own arrival
 * event, packed in the event's argument when the run fits (else a
 * coll_xrec), in the order slot_start would have sent them.  Memory per
 * transfer in flight: the engine's entry (plus 32 bytes unpacked) instead
 * of the net's record, its cancel handle and a coll_xrec.  O(nx x route
 * length). */
static void slot_issue_direct(coll_run *r, uint32_t s, const coll_phase *ph, int base, uint32_t nx)
{
  coll_rt *c = r->lib;
  coll_slot *sl = &r->slot[s];
  int m = (int)(s / (uint32_t)r->n_chunks);
  int ch = (int)(s % (uint32_t)r->n_chunks);
  gboolean packed = xfer_packs(r);
  if (r->step_pipe)
    for (uint32_t i = 0; i < nx; i++)
      coll_sent_add(r, s, sl->cur, 1);
  for (uint32_t i = 0; i < nx; i++) {
    const coll_xfer *xf = &r->scratch[i];
    int dm = coll_pos_member(r, ph, base, xf->peer, ch);
    uint32_t dst_step = ph->step0 + xf->recv_step;
    int dst = r->ranks[dm];
    sim_time_ps at = net_send_arrival_less(c->n, r->ranks[m], dst,
                                           wire_bytes(r, r->stream && coll_run_pair_inter(c->t, r, m, dm), xf->bytes),
                                           coll_run_wire_less(r, ch, r->ranks[m], dst));
    xfer_post(c, r, packed, at, s, (uint32_t)dm * (uint32_t)r->n_chunks + (uint32_t)ch, dst_step, sl->cur);
  }
}

void coll_xfer_post_at(coll_rt *c, coll_run *r, sim_time_ps at, uint32_t src_slot, uint32_t dst_slot,
                       uint32_t dst_step, uint32_t src_step)
{
  xfer_post(c, r, !r->engine && xfer_packs(r), at, src_slot, dst_slot, dst_step, src_step);
}

/* Issues the transfers of slot s's current step. */
static void slot_start(coll_run *r, uint32_t s)
{
  coll_rt *c = r->lib;
  coll_slot *sl = &r->slot[s];
  int m = (int)(s / (uint32_t)r->n_chunks);
  int ch = (int)(s % (uint32_t)r->n_chunks);
  coll_a2av_ctx x;
  uint32_t nx = 0;
  const coll_phase *ph = coll_slot_step_begin(r, s, &x, &nx);
  int base = x.base;
  if (!r->engine && !r->stream)
    sl->pend += nx; /* only a step that waits for its own sends counts them (slot_advance) */
  if (r->slot_local_done != NULL)
    r->slot_local_done[s] = sim_now(c->sim);
  if (!r->engine && net_get_tier(c->n) == NET_TIER_ANALYTICAL) {
    slot_issue_direct(r, s, ph, base, nx);
    return;
  }
  uint32_t xi_small[32];
  int dst_small[32];
  uint32_t *xis = xi_small;
  int *dsts = dst_small;
  if (nx > G_N_ELEMENTS(xi_small)) {
    xis = g_new(uint32_t, nx);
    dsts = g_new(int, nx);
  }
  for (uint32_t i = 0; i < nx; i++) {
    const coll_xfer *xf = &r->scratch[i];
    int dm = coll_pos_member(r, ph, base, xf->peer, ch);
    uint32_t xi = coll_xr_alloc(c);
    coll_xrec *rec = &c->xr[xi];
    rec->run = r;
    rec->src_slot = s;
    rec->dst_slot = (uint32_t)dm * (uint32_t)r->n_chunks + (uint32_t)ch;
    rec->dst_step = ph->step0 + xf->recv_step;
    rec->src_step = sl->cur;
    rec->deliver_at = 0;
    if (r->step_pipe)
      coll_sent_add(r, s, sl->cur, 1);
    xis[i] = xi;
    dsts[i] = r->ranks[dm];
  }
  /* The library's engine first (it sets the delivery times), then the
   * network; no transfer finishes inside net_send. */
  if (r->engine && nx > 0)
    c->ops->step(r, m, xis, nx, dsts);
  for (uint32_t i = 0; i < nx; i++) {
    gboolean inter = r->stream && coll_pair_is_inter(c->t, r->ranks[m], dsts[i]);
    net_send_less(c->n, r->ranks[m], dsts[i], wire_bytes(r, inter, r->scratch[i].bytes),
                  coll_run_wire_less(r, ch, r->ranks[m], dsts[i]), coll_xfer_done, c, xis[i]);
  }
  if (xis != xi_small) {
    g_free(xis);
    g_free(dsts);
  }
}

/* Chunk pipelining: on every dimension a member runs one (phase, chunk)
 * item at a time, in (phase, chunk) order — the order is the same on
 * every member, so it cannot deadlock.  Chunk c starts phase ph once
 * chunk c-lanes finished ph; the first chunks start ph once the last
 * chunks finished the previous phase on the same dimension.  (Their own
 * previous phase is done, since steps run in order.)  Within a phase a
 * chunk's steps follow each other freely. */
gboolean coll_pipe_gate_open(const coll_run *r, uint32_t s, uint32_t k)
{
  int c0 = (int)(s % (uint32_t)r->n_chunks);
  if (c0 < r->lanes)
    return TRUE;
  if (r->slot[s - (uint32_t)r->lanes].cur <= k)
    return FALSE;
  int back = r->fifo_chunks * r->lanes;
  return c0 < back || coll_sent_get(r, s - (uint32_t)back, k) == 0;
}

static gboolean phase_gate_open(const coll_run *r, uint32_t s, uint32_t k)
{
  if (r->step_pipe)
    return coll_pipe_gate_open(r, s, k);
  const coll_phase *ph = phase_of(r, k);
  if (k != ph->step0)
    return TRUE;
  int ch = (int)(s % (uint32_t)r->n_chunks);
  if (ch >= r->lanes)
    return r->slot[s - (uint32_t)r->lanes].cur >= ph->step0 + ph->n_steps;
  uint32_t base = s - (uint32_t)ch;
  for (int i = (int)(ph - r->ph) - 1; i >= 0; i--) {
    const coll_phase *q = &r->ph[i];
    if (q->g != ph->g)
      continue;
    for (int l = 0; l < r->lanes; l++)
      if (r->slot[base + (uint32_t)(r->n_chunks - r->lanes + l)].cur < q->step0 + q->n_steps)
        return FALSE;
    break;
  }
  return TRUE;
}


/* Step pipeline: the step k2 > k up to which slot s, whose gate for
 * step k is open, may leave every step at once because none of them
 * moves data (coll_sched_next_busy: the chains of the rooted primitives
 * on a ring, where a member moves data at 2 of q - 1 steps) and the gate
 * of each is open (chunk s - lanes is past it; the FIFO's sends of an
 * empty step are none); k when there is nothing to skip.  Leaving them
 * one by one would do nothing else: an empty step ends at once (no
 * reduction) and wakes only the next chunk of the
 * lane, which runs after this slot blocks either way.  O(1). */
static uint32_t slot_skip_to(const coll_run *r, uint32_t s, uint32_t k)
{
  const coll_phase *ph = phase_of(r, k);
  if ((ph->algo != COLL_ALGO_RING && ph->algo != COLL_ALGO_RING_BIDIR) ||
      (ph->prim != COLL_PRIM_BROADCAST && ph->prim != COLL_PRIM_REDUCE && ph->prim != COLL_PRIM_SCATTER &&
       ph->prim != COLL_PRIM_GATHER))
    return k;
  int ch = (int)(s % (uint32_t)r->n_chunks);
  coll_a2av_ctx x;
  coll_sched sc;
  int pos;
  ph = coll_member_sched(r, (int)(s / (uint32_t)r->n_chunks), ch, k, &x, &sc, &pos);
  uint32_t k2 = ph->step0 + coll_sched_next_busy(&sc, pos, k - ph->step0);
  if (ch >= r->lanes)
    k2 = MIN(k2, r->slot[s - (uint32_t)r->lanes].cur);
  return k2;
}

static void member_post_done(sim_engine *sim, void *ctx, uint64_t arg)
{
  (void)sim;
  coll_run *r = ctx;
  coll_rt *c = r->lib;
  r->members_left--;
  coll_ovl_end(r, (int)arg);
  if (r->done != NULL)
    r->done(c->sim, r->ctx, r->cookie, (int)arg);
  if (r->members_left == 0)
    coll_run_finish(c, r);
}

/* Pushes slot s on coll_run_kick's stack.  O(1) amortized. */
static inline void work_push(coll_rt *c, uint32_t s)
{
  if (c->work_len == c->work_cap) {
    c->work_cap = c->work_cap ? 2 * c->work_cap : 64;
    c->work = g_renew(uint32_t, c->work, c->work_cap);
  }
  c->work[c->work_len++] = s;
}

/* Advances slot s as far as it can go; returns TRUE when the whole
 * collective has finished. */
static gboolean slot_advance(coll_run *r, uint32_t s)
{
  coll_rt *c = r->lib;
  coll_slot *sl = &r->slot[s];
  int ch = (int)(s % (uint32_t)r->n_chunks);
  if (r->held != NULL && r->held[s / (uint32_t)r->n_chunks])
    return FALSE;   /* the member has not passed its library pre-delay yet */
  for (;;) {
    uint32_t k = sl->cur;
    if (k >= r->n_steps)
      return FALSE;
    if (sl->state == SLOT_IDLE) {
      if (!phase_gate_open(r, s, k))
        return FALSE;
      uint32_t k2 = r->step_pipe ? slot_skip_to(r, s, k) : k;
      if (k2 > k + 1) {
        /* Leave the empty steps k .. k2 - 2 at once; the empty step
         * k2 - 1 ends below as usual (waking the next chunk of the lane,
         * or ending the member). */
        coll_count_jump(r, s, k, k2 - 1);
        sl->cur = k = k2 - 1;
      }
      slot_start(r, s);
    }
    if (sl->state == SLOT_RUNNING) {
      /* nccl: a step ends when its own sends have arrived and its
       * receives are in.  A library step (notify-driven) ends when its
       * receives are in and its engine has sent its own writes (their
       * arrival is the receiver's business: the receiver's step waits for
       * them). */
      if (coll_recv_get(r, s, k) < sl->need || (!r->engine && !r->stream && sl->pend > 0))
        return FALSE;
      /* Engine, local reduction, then (library model) the per-step
       * synchronisation sigma_sig of steps that moved data, once per
       * staging round. */
      sim_time_ps now = sim_now(c->sim);
      sim_time_ps wait = r->engine && r->slot_local_done[s] > now ? r->slot_local_done[s] - now : 0;
      if (r->slot_red != NULL)
        wait += coll_reduce_ps(c, r->slot_red[s]);
      if (sl->moved && r->engine)
        wait += r->step_sync * (r->sync_mult > 0 ? r->sync_mult : 1);
      if (wait > 0) {
        sl->state = SLOT_REDUCING;
        sim_post_after(c->sim, wait, coll_reduce_done, r, s);
        return FALSE;
      }
    } else if (sl->state == SLOT_REDUCING) {
      return FALSE;
    }
    /* Step k finished. */
    coll_count_pass(r, s, k);
    sl->cur = k + 1;
    sl->state = SLOT_IDLE;
    const coll_phase *ph = phase_of(r, k);
    if (r->step_pipe) {
      /* The next chunk of this lane may enter step k (if its sends of
       * step k have landed; else coll_xfer_done wakes it). */
      if (ch + r->lanes < r->n_chunks)
        work_push(c, s + (uint32_t)r->lanes);
    } else if (sl->cur == ph->step0 + ph->n_steps) {
      /* A phase ended: wake the next chunk of this phase and, after the
       * last chunks, the first chunks waiting for this dimension. */
      uint32_t base = s - (uint32_t)ch;
      if (ch + r->lanes < r->n_chunks)
        work_push(c, s + (uint32_t)r->lanes);
      else
        for (int l = 0; l < r->lanes; l++)
          work_push(c, base + (uint32_t)l);
    }
    if (sl->cur == r->n_steps) {
      int m = (int)(s / (uint32_t)r->n_chunks);
      if (--r->chunks_left[m] == 0) {
        sim_time_ps post = c->ops->post_delay != NULL ? c->ops->post_delay(r, m) : 0;
        if (post > 0) {
          sim_post_after(c->sim, post, member_post_done, r, (uint64_t)m);
          return FALSE;
        }
        r->members_left--;
        coll_ovl_end(r, m);
        if (r->done != NULL)
          r->done(c->sim, r->ctx, r->cookie, m);
      }
      return r->members_left == 0;
    }
  }
}

void coll_member_done_ev(sim_engine *sim, void *ctx, uint64_t arg)
{
  (void)sim;
  coll_run *r = ctx;
  coll_rt *c = r->lib;
  int m = (int)arg;
  r->done_ev[m] = SIM_EVENT_NONE;
  r->chunks_left[m] = 0;
  r->members_left--;
  coll_ovl_end(r, m);
  if (r->done != NULL)
    r->done(c->sim, r->ctx, r->cookie, m);
  if (r->members_left == 0)
    coll_run_finish(c, r);
}

static void unlink_run(coll_rt *c, coll_run *r)
{
  if (r->prev)
    r->prev->next = r->next;
  else
    c->runs = r->next;
  if (r->next)
    r->next->prev = r->prev;
}

/* Worklist of slots (no recursion, so long chains of empty steps and
 * chunk hand-offs cost no stack).  Returns TRUE when this call finished
 * the collective; the caller then unlinks and frees it. */
gboolean coll_run_kick(coll_rt *c, coll_run *r, uint32_t slot)
{
  gboolean finished = FALSE;
  c->work_len = 0;
  work_push(c, slot);
  while (c->work_len > 0)
    if (slot_advance(r, c->work[--c->work_len]))
      finished = TRUE;
  return finished;
}

void coll_run_finish(coll_rt *c, coll_run *r)
{
  unlink_run(c, r);
  coll_run_free(r);
}

/* Library: the receiver counts a transfer (after its network arrival and
 * its engine delivery time).  The sender does not wait for it, so only the
 * receiver is advanced; that may finish the run. */
static void lib_deliver(coll_run *r, uint32_t dst_slot, uint32_t dst_step)
{
  coll_recv_inc(r, dst_slot, dst_step);
  if (r->slot[dst_slot].cur == dst_step && coll_run_kick(r->lib, r, dst_slot))
    coll_run_finish(r->lib, r);
}

static void lib_deliver_ev(sim_engine *sim, void *ctx, uint64_t arg)
{
  (void)sim;
  lib_deliver(ctx, (uint32_t)(arg & 0xffffffffu), (uint32_t)(arg >> 32));
}

/* A transfer of run r landed (rec: what coll_xfer_done's record or
 * coll_xfer_packed_done's argument held). */
static void xfer_land(coll_rt *c, coll_run *r, coll_xrec rec)
{
  if (!r->engine && !r->stream) {
    /* Library and streamed steps do not wait for their own sends, so
     * their slots keep no count (one cache miss less per transfer). */
    g_assert(r->slot[rec.src_slot].pend > 0);
    r->slot[rec.src_slot].pend--;
  }
  if (r->engine) {
    if (rec.deliver_at > sim_now(c->sim))
      sim_post_at(c->sim, rec.deliver_at, lib_deliver_ev, r,
                  (uint64_t)rec.dst_slot | ((uint64_t)rec.dst_step << 32));
    else
      lib_deliver(r, rec.dst_slot, rec.dst_step);
    return;
  }
  coll_recv_inc(r, rec.dst_slot, rec.dst_step);
  /* Receiver first, then sender: a fixed order keeps runs deterministic.
   * The receiver's advance cannot finish the run while the sender still
   * waits (its step is incomplete), so r is alive for the second coll_run_kick. */
  gboolean dst_waits = r->slot[rec.dst_slot].cur == rec.dst_step;
  gboolean fin = FALSE;
  if (r->stream) {
    /* NCCL's protocols stream: a step does not wait for its own sends to
     * land (the receiver's step does), so only the receiver advances, and
     * that may finish the run.  Step pipeline: the sender's next chunk may
     * be waiting for this step's sends to land. */
    uint32_t next = rec.src_slot + (uint32_t)(r->fifo_chunks * r->lanes);
    gboolean wake_next = FALSE;
    if (r->step_pipe) {
      wake_next = coll_sent_add(r, rec.src_slot, rec.src_step, -1) == 0 &&
                  (int)(rec.src_slot % (uint32_t)r->n_chunks) + r->fifo_chunks * r->lanes < r->n_chunks &&
                  r->slot[next].cur == rec.src_step && r->slot[next].state == SLOT_IDLE;
    }
    if (dst_waits && coll_run_kick(c, r, rec.dst_slot)) {
      coll_run_finish(c, r);
      return;
    }
    if (wake_next && coll_run_kick(c, r, next))
      coll_run_finish(c, r);
    return;
  }
  if (dst_waits && rec.dst_slot != rec.src_slot)
    fin = coll_run_kick(c, r, rec.dst_slot);
  g_assert(!fin);
  if (coll_run_kick(c, r, rec.src_slot))
    coll_run_finish(c, r);
}

void coll_xfer_done(sim_engine *sim, void *ctx, uint64_t cookie)
{
  (void)sim;
  coll_rt *c = ctx;
  coll_xrec rec = c->xr[cookie];
  c->xr[cookie].next_free = c->free_xr;
  c->free_xr = (uint32_t)cookie;
  xfer_land(c, rec.run, rec);
}

static void coll_xfer_packed_done(sim_engine *sim, void *ctx, uint64_t arg)
{
  (void)sim;
  coll_run *r = ctx;
  const uint64_t ms = ((uint64_t)1 << XP_SLOT_BITS) - 1, mm = ((uint64_t)1 << XP_MEMBER_BITS) - 1,
                 mk = ((uint64_t)1 << XP_STEP_BITS) - 1;
  uint32_t src = (uint32_t)(arg & ms);
  uint32_t dm = (uint32_t)(arg >> XP_SLOT_BITS & mm);
  coll_xrec rec = { .run = r, .src_slot = src, .dst_slot = dm * (uint32_t)r->n_chunks + src % (uint32_t)r->n_chunks,
                    .dst_step = (uint32_t)(arg >> (XP_SLOT_BITS + XP_MEMBER_BITS) & mk),
                    .src_step = (uint32_t)(arg >> (XP_SLOT_BITS + XP_MEMBER_BITS + XP_STEP_BITS) & mk) };
  xfer_land(r->lib, r, rec);
}

void coll_reduce_done(sim_engine *sim, void *ctx, uint64_t arg)
{
  (void)sim;
  coll_run *r = ctx;
  g_assert(r->slot[arg].state == SLOT_REDUCING);
  r->slot[arg].state = SLOT_REDUCED;
  if (coll_run_kick(r->lib, r, (uint32_t)arg))
    coll_run_finish(r->lib, r);
}

/* Member m passed its library pre-delay: release its slots. */
void coll_member_release(sim_engine *sim, void *ctx, uint64_t arg)
{
  (void)sim;
  coll_run *r = ctx;
  coll_rt *c = r->lib;
  int m = (int)arg;
  r->held[m] = 0;
  r->t_begin[m] = sim_now(c->sim);
  gboolean fin = FALSE;
  for (int ch = 0; ch < r->n_chunks; ch++)
    if (coll_run_kick(c, r, (uint32_t)m * (uint32_t)r->n_chunks + (uint32_t)ch))
      fin = TRUE;
  if (fin)
    coll_run_finish(c, r);
}
