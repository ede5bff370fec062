/* rp_sched.c: the replay's scheduling (rp_internal.h): node readiness,
 * compute and CPU slots with their FIFO wait queues, busy-time accounting,
 * node start and finish, and the interference model.  Communication nodes
 * are handed to rp_match.c, which hands them back through rp->finish_node
 * (rp_finish_node, set by the driver) when they finish; this file calls
 * the matcher, never the other way round.
 */
#include "config.h"
#include "replay/rp_internal.h"

#include <math.h>

/* ---- slot wait queues: push amortized O(1) (the ring doubles when full),
 * pop O(1) ---- */

static void fifo_push(rp_fifo *q, uint32_t v)
{
  if (q->len == q->cap) {
    uint32_t ncap = q->cap ? q->cap * 2 : 16;
    uint32_t *n = g_new(uint32_t, ncap);
    for (uint32_t i = 0; i < q->len; i++)
      n[i] = q->items[(q->head + i) % q->cap];
    g_free(q->items);
    q->items = n;
    q->head = 0;
    q->cap = ncap;
  }
  q->items[(q->head + q->len) % q->cap] = v;
  q->len++;
}

static uint32_t fifo_pop(rp_fifo *q)
{
  g_assert(q->len > 0);
  uint32_t v = q->items[q->head];
  q->head = (q->head + 1) % q->cap;
  q->len--;
  return v;
}

/* ---- in-degree counters of partly ready nodes (rp_pending) ---- */

static uint32_t pending_slot(uint32_t key, uint32_t mask)
{
  uint32_t h = key * 2654435761u;
  return (h ^ h >> 16) & mask;
}

/* Rebuilds the table with capacity cap (a power of two). O(cap). */
static void pending_resize(rp_pending *p, uint32_t cap)
{
  uint32_t *keys = p->keys, *left = p->left, old = p->mask ? p->mask + 1 : 0;
  p->keys = g_new0(uint32_t, cap);
  p->left = g_new(uint32_t, cap);
  p->mask = cap - 1;
  for (uint32_t k = 0; k < old; k++) {
    if (keys[k] == 0)
      continue;
    uint32_t s = pending_slot(keys[k], p->mask);
    while (p->keys[s] != 0)
      s = (s + 1) & p->mask;
    p->keys[s] = keys[k];
    p->left[s] = left[k];
  }
  g_free(keys);
  g_free(left);
}

/* One parent of node c (which has n_parents > 1 parents) finished;
 * returns how many are still unfinished.  The first call for c inserts it
 * with n_parents - 1, the call that reaches 0 removes it (backward shift,
 * so no tombstones accumulate). */
static uint32_t pending_dec(rp_pending *p, uint32_t c, uint32_t n_parents)
{
  uint32_t key = c + 1;
  if (G_UNLIKELY(2 * (p->len + 1) > p->mask + 1))
    pending_resize(p, p->mask ? 2 * (p->mask + 1) : 16);
  uint32_t s = pending_slot(key, p->mask);
  while (p->keys[s] != 0 && p->keys[s] != key)
    s = (s + 1) & p->mask;
  if (p->keys[s] == 0) {
    p->keys[s] = key;
    p->left[s] = n_parents - 1;
    p->len++;
    return n_parents - 1;
  }
  g_assert(p->left[s] > 0);
  if (--p->left[s] > 0)
    return p->left[s];
  /* Delete: move later entries of the probe run back into the hole. */
  p->len--;
  uint32_t hole = s;
  for (uint32_t t = (s + 1) & p->mask; p->keys[t] != 0; t = (t + 1) & p->mask) {
    uint32_t home = pending_slot(p->keys[t], p->mask);
    /* Entry t may fill the hole unless its home lies cyclically in (hole, t]. */
    if (((t - home) & p->mask) >= ((t - hole) & p->mask)) {
      p->keys[hole] = p->keys[t];
      p->left[hole] = p->left[t];
      hole = t;
    }
  }
  p->keys[hole] = 0;
  return 0;
}

void rp_pending_free(rp_pending *p)
{
  g_free(p->keys);
  g_free(p->left);
  *p = (rp_pending){0};
}

gboolean rp_pending_first(const rp_pending *p, uint32_t *node, uint32_t *left)
{
  gboolean found = FALSE;
  for (uint32_t k = 0; p->mask && k <= p->mask; k++)
    if (p->keys[k] != 0 && (!found || p->keys[k] - 1 < *node)) {
      *node = p->keys[k] - 1;
      *left = p->left[k];
      found = TRUE;
    }
  return found;
}

/* ---- busy-time accounting ---- */

static void account(rp_rank *rs, int dcompute, int dcomm)
{
  sim_time_ps now = sim_now(rs->rp->sim);
  sim_time_ps dt = now - rs->last_change;
  if (rs->n_compute > 0 && rs->n_comm > 0)
    rs->t_both += dt;
  else if (rs->n_compute > 0)
    rs->t_compute_only += dt;
  else if (rs->n_comm > 0) {
    rs->t_comm_only += dt;
    if (rs->n_comm > rs->n_wait_coll + rs->n_wait_p2p)
      rs->t_xfer_only += dt;
    else if (rs->n_wait_coll > 0)
      rs->t_wait_coll += dt;
    else
      rs->t_wait_dep += dt;
  } else
    rs->t_idle += dt;
  rs->last_change = now;
  rs->n_compute += dcompute;
  rs->n_comm += dcomm;
  g_assert(rs->n_compute >= 0 && rs->n_comm >= 0);
}

void rp_comm_wait(rp_rank *rs, int dcoll, int dp2p)
{
  account(rs, 0, 0);
  rs->n_wait_coll += dcoll;
  rs->n_wait_p2p += dp2p;
  g_assert(rs->n_wait_coll >= 0 && rs->n_wait_p2p >= 0);
  g_assert(rs->n_wait_coll + rs->n_wait_p2p <= rs->n_comm);
}

/* ---- node lifecycle ---- */

gboolean rp_is_comm_node(const et_node *n)
{
  return n->type == ET_NODE_COMM_COLL || n->type == ET_NODE_COMM_SEND || n->type == ET_NODE_COMM_RECV;
}

/* Which slot a node occupies: 0 none, 1 compute, 2 cpu. */
static int node_slot(const et_node *n)
{
  if (n->type != ET_NODE_COMP || (n->flags & ET_FLAG_DELAY))
    return 0;
  return (n->flags & ET_FLAG_CPU_OP) ? 2 : 1;
}

/* Starts the oldest node waiting in q for the slot that node `freer` just
 * freed (the waiting node's binding predecessor on the critical path). */
static void start_waiting(rp_rank *rs, rp_fifo *q, uint32_t freer)
{
  uint32_t next = fifo_pop(q);
  if (G_UNLIKELY(rs->rp->crit != NULL))
    sim_crit_rec_bind(rs->rp->crit, rs->rank, next, freer);
  rp_start_node(rs, next);
}

/* started: when the node began running, or -1 when it is not a stretched
 * compute node (the observer then derives it as before). */
void rp_finish_node(rp_rank *rs, uint32_t i, sim_time_ps started)
{
  const et_graph *g = rs->g;
  const et_node *n = &g->nodes[i];
  int slot = node_slot(n);
  gboolean counts_comm = rp_is_comm_node(n) || (n->flags & ET_FLAG_REPLAY);
  account(rs, slot ? -1 : 0, counts_comm ? -1 : 0);
  rs->finished++;
  rs->finish = sim_now(rs->rp->sim);
  sim_crit_rec *crit = rs->rp->crit;
  if (G_UNLIKELY(crit != NULL))
    sim_crit_rec_finish(crit, rs->rank, i, rs->finish);
  const sim_replay_observer *obs = rs->rp->obs;
  if (obs && obs->node_done) {
    /* Timed nodes ran for their duration (unless interference stretched
     * them: `started`); communication started when this rank issued it
     * (`started`, given by rp_match.c). */
    sim_time_ps start = started >= 0 ? started
                        : (n->type == ET_NODE_COMP || (n->flags & ET_FLAG_REPLAY)) ? rs->finish - rp_node_duration(rs, i)
                        : rs->finish;
    obs->node_done(obs->ctx, rs->rank, g, i, start, rs->finish);
  }
  for (uint32_t e = n->children; e < g->nodes[i + 1].children; e++) {
    uint32_t c = g->child_index[e];
    uint32_t np = et_node_n_parents(g, c);
    if (np == 1 || pending_dec(&rs->pending, c, np) == 0) {
      if (G_UNLIKELY(crit != NULL))
        sim_crit_rec_bind(crit, rs->rank, c, i);
      rp_start_node(rs, c);
    }
  }
  /* Hand the freed slot to the oldest waiting node. */
  if (slot == 1) {
    rs->compute_busy--;
    if (rs->compute_wait.len > 0)
      start_waiting(rs, &rs->compute_wait, i);
  } else if (slot == 2) {
    rs->cpu_busy--;
    if (rs->cpu_wait.len > 0)
      start_waiting(rs, &rs->cpu_wait, i);
  }
}

static void on_node_timer(sim_engine *sim, void *ctx, uint64_t arg)
{
  (void)sim;
  rp_finish_node(ctx, (uint32_t)arg, -1);
}

static void run_for(rp_rank *rs, uint32_t i, sim_time_ps d)
{
  sim_post_after(rs->rp->sim, d, on_node_timer, rs, i);
}

/* ---- interference: compute slowed by communication on the same cores ----
 *
 * The collectives layer reports each change of a rank's slowdown delta
 * (coll_rt_set_slowdown_hook); GPU compute nodes on that rank then
 * progress at rate 1 / (1 + delta).  Each running node keeps its remaining
 * work in picoseconds of undisturbed compute; a change brings every
 * running node of the rank up to date (work done = elapsed / old factor,
 * rounded) and re-times its finish event (remaining x new factor,
 * rounded): O(running compute nodes) per change, nothing per picosecond.
 * A node that overlaps a collective only partly is stretched only for
 * the overlapping part.  Only used when the library interferes; without
 * it compute nodes are posted as plain timers (run_for). */

static sim_time_ps ovl_stretch(sim_time_ps work, double f)
{
  return f == 1.0 ? work : (sim_time_ps)llround((double)work * f);
}

/* Brings x's remaining work up to now at the rank's current factor. */
static void ovl_progress(rp_rank *rs, rp_ovl_node *x, sim_time_ps now)
{
  sim_time_ps dt = now - x->t_last;
  sim_time_ps done = rs->slow == 1.0 ? dt : (sim_time_ps)llround((double)dt / rs->slow);
  done = MIN(done, x->left);
  if (rs->slow > 1.0)
    rs->t_under += done;
  x->left -= done;
  x->t_last = now;
}

static void on_compute_timer(sim_engine *sim, void *ctx, uint64_t arg)
{
  rp_rank *rs = ctx;
  uint32_t i = (uint32_t)arg;
  unsigned k = 0;
  while (k < rs->n_running && rs->running[k].node != i)
    k++;
  g_assert(k < rs->n_running);
  rp_ovl_node x = rs->running[k];
  rs->running[k] = rs->running[--rs->n_running];
  /* The rest of the work was done at the current factor (any change would
   * have re-timed this event). */
  if (rs->slow > 1.0)
    rs->t_under += x.left;
  sim_time_ps added = sim_now(sim) - x.start - rp_node_duration(rs, i);
  g_assert(added >= 0);
  rs->t_added += added;
  if (G_UNLIKELY(rs->rp->crit != NULL) && added > 0)
    sim_crit_rec_stretch(rs->rp->crit, rs->rank, i, added);
  rp_finish_node(rs, i, x.start);
}

static void run_compute(rp_rank *rs, uint32_t i, sim_time_ps d)
{
  g_assert(rs->n_running < rs->compute_slots);
  sim_engine *sim = rs->rp->sim;
  sim_time_ps now = sim_now(sim);
  rp_ovl_node *x = &rs->running[rs->n_running++];
  *x = (rp_ovl_node){ .node = i, .left = d, .t_last = now, .start = now };
  x->ev = sim_schedule_after(sim, ovl_stretch(d, rs->slow), on_compute_timer, rs, i);
}

/* coll_slowdown_fn: rank's delta changed now. */
void rp_on_slowdown(sim_engine *sim, void *ctx, int rank, double delta)
{
  rp_replay *rp = ctx;
  if (rank < 0 || rank >= rp->w->n_ranks)
    return;
  rp_rank *rs = &rp->ranks[rank];
  double f = 1.0 + delta;
  if (f == rs->slow)
    return;
  sim_time_ps now = sim_now(sim);
  for (unsigned k = 0; k < rs->n_running; k++)
    ovl_progress(rs, &rs->running[k], now);
  rs->slow = f;
  for (unsigned k = 0; k < rs->n_running; k++) {
    rp_ovl_node *x = &rs->running[k];
    gboolean pending = sim_cancel(sim, x->ev);
    g_assert(pending);
    x->ev = sim_schedule_after(sim, ovl_stretch(x->left, f), on_compute_timer, rs, x->node);
  }
}

/* ---- levers ---- */

sim_time_ps rp_node_duration(const rp_rank *rs, uint32_t i)
{
  const et_node *n = &rs->g->nodes[i];
  if (G_LIKELY(!rs->rp->levers_on))
    return n->duration_ps;
  sim_kernel_class k = rs->klass ? (sim_kernel_class)rs->klass[i] : SIM_KERNEL_ELEMENTWISE;
  double f = sim_levers_node_factor(&rs->rp->levers, n, k, rs->factor);
  if (f == 1.0)
    return n->duration_ps;
  /* A factor that takes the time out of range (1e308, a lognormal draw of
   * sigma 1000) saturates at SIM_TIME_LIMIT, which the engine refuses to
   * schedule: the run reports the overflow instead of converting an
   * unrepresentable double (negative or NaN factors cannot reach here). */
  double d = (double)n->duration_ps * f;
  return d < (double)SIM_TIME_LIMIT ? (sim_time_ps)llround(d) : SIM_TIME_LIMIT;
}

/* ---- dispatch ---- */

void rp_start_node(rp_rank *rs, uint32_t i)
{
  const et_node *n = &rs->g->nodes[i];
  int slot = node_slot(n);
  if (slot == 1 && rs->compute_busy >= rs->compute_slots) {
    fifo_push(&rs->compute_wait, i);
    return;
  }
  if (slot == 2 && rs->cpu_busy >= 1) {
    fifo_push(&rs->cpu_wait, i);
    return;
  }
  gboolean counts_comm = rp_is_comm_node(n) || (n->flags & ET_FLAG_REPLAY);
  account(rs, slot ? 1 : 0, counts_comm ? 1 : 0);
  if (slot == 1)
    rs->compute_busy++;
  else if (slot == 2)
    rs->cpu_busy++;
  if (n->flags & ET_FLAG_REPLAY) {
    run_for(rs, i, n->duration_ps);
    return;
  }
  switch ((et_node_type)n->type) {
  case ET_NODE_COMP: {
    sim_time_ps d = rp_node_duration(rs, i);
    if (G_UNLIKELY(rs->rp->levers_on && rs->rp->crit != NULL) && d != n->duration_ps)
      sim_crit_rec_duration(rs->rp->crit, rs->rank, i, d);
    if (G_UNLIKELY(rs->rp->ovl) && slot == 1)
      run_compute(rs, i, d);
    else
      run_for(rs, i, d);
    break;
  }
  case ET_NODE_COMM_COLL:
    rp_issue_collective(rs, i);
    break;
  case ET_NODE_COMM_SEND:
  case ET_NODE_COMM_RECV:
    rp_issue_p2p(rs, i);
    break;
  case ET_NODE_METADATA:
  case ET_NODE_INVALID:
  default:
    run_for(rs, i, 0);
    break;
  }
}

/* Starts every node of the rank without parents. */
void rp_start_roots(rp_rank *rs)
{
  for (uint32_t i = 0; i < rs->g->n_nodes; i++)
    if (et_node_n_parents(rs->g, i) == 0)
      rp_start_node(rs, i);
}

/* A rank that begins later than time 0 (measured starts). */
void rp_on_rank_begin(sim_engine *sim, void *ctx, uint64_t arg)
{
  (void)sim;
  (void)arg;
  rp_start_roots(ctx);
}

