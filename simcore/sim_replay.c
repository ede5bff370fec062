/* sim_replay.c: the workload replay (see sim_replay.h for the semantics).
 *
 * State per rank: an in-degree counter per node, FIFO queues of ready nodes
 * waiting for the compute or CPU slot, per-group issue counters, and the
 * accounting of busy time.  Collectives in flight are instances keyed by
 * (group, sequence); point-to-point operations wait in FIFO queues keyed by
 * (source, destination, tag).  Every node finishes through an engine event,
 * never re-entrantly, so the replay needs no recursion.
 */
#include "config.h"
#include "simcore/sim_replay.h"
#include "simcore/sim_critical.h"

#include <math.h>
#include <string.h>

/* A rank's ready queue for one slot kind: a growable ring of node indices. */
typedef struct {
  uint32_t *items;
  uint32_t head, len, cap;
} node_fifo;

static void fifo_push(node_fifo *q, uint32_t v)
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

static uint32_t fifo_pop(node_fifo *q)
{
  g_assert(q->len > 0);
  uint32_t v = q->items[q->head];
  q->head = (q->head + 1) % q->cap;
  q->len--;
  return v;
}

typedef struct replay replay;

/* A compute node in progress under the interference model: its remaining
 * work in picoseconds of undisturbed compute, when that was last brought
 * up to date, when it started and its (cancellable) finish event. */
typedef struct {
  uint32_t node;
  sim_time_ps left, t_last, start;
  sim_event_id ev;
} ovl_node;

typedef struct {
  replay *rp;
  int rank;
  const et_graph *g;
  uint32_t *indeg;          /* remaining unfinished parents per node */
  uint32_t finished;        /* nodes finished */
  node_fifo compute_wait, cpu_wait;
  unsigned compute_slots;   /* this rank's GPU compute slots */
  unsigned compute_busy, cpu_busy;
  uint32_t *group_seq;      /* per group (n_groups + 1 for world): next sequence */
  sim_time_ps *comm_issue;  /* per comm record: issue time */
  /* Busy-time accounting: counts of running compute and comm nodes and the
   * time of the last change. */
  int n_compute, n_comm;
  sim_time_ps last_change;
  sim_time_ps t_compute_only, t_both, t_comm_only, t_idle;
  sim_time_ps finish;
  /* Interference (replay.ovl only): compute progresses at rate 1 / slow
   * (slow = 1 + delta of the library communication in flight here);
   * running holds the GPU compute nodes in progress (at most
   * compute_slots).  t_added: compute time added by the slowdown;
   * t_under: undisturbed work done while slow > 1. */
  double slow;
  ovl_node *running;
  unsigned n_running;
  sim_time_ps t_added, t_under;
} rank_state;

/* A collective instance waiting for members or in flight. */
typedef struct {
  uint32_t group;
  uint32_t seq;
  const et_group *grp;      /* NULL for world */
  int n;                    /* members */
  int arrived, done;
  uint8_t type;
  uint64_t bytes;
  int root;
  int first_rank;           /* first member that issued, for mismatch messages */
  uint32_t *node;           /* per member: node index, ET_NONE until issued */
  uint64_t *splits;         /* ALL_TO_ALLV matrix n*n, or NULL */
  sim_time_ps start;
  coll_info info;
} coll_inst;

/* A point-to-point operation waiting for its partner or in flight. */
typedef struct {
  int src, dst;
  uint32_t send_node, recv_node;
  uint64_t bytes;
  sim_time_ps start;
  int sides_done;           /* library point-to-point: sides finished */
} p2p_op;

struct replay {
  const et_workload *w;
  sim_engine *sim;
  net *net;
  coll_lib *coll;
  gboolean p2p_lib;         /* a library runs point-to-point (coll_p2p_start), not nccl */
  coll_policy *policy;
  const sim_replay_observer *obs;
  rank_state *ranks;
  int *world_ranks;
  GHashTable *insts;        /* (group, seq) key -> coll_inst* */
  GHashTable *p2p_wait;     /* "src dst tag" key -> GQueue of (rank<<32|node) waiting */
  GPtrArray *p2p_ops;       /* p2p_op*, cookie = index */
  GHashTable **member_index;/* per group: rank -> member index + 1 */
  GArray *comms;
  uint64_t assumed_roots;
  uint64_t lifecycle_known, lifecycle_partial;
  sim_crit_rec *crit;       /* binding predecessors (critical path), NULL when not asked */
  gboolean ovl;             /* the library slows compute (coll_lib_set_slowdown_hook) */
  GError *error;
};

static uint64_t inst_key(uint32_t group, uint32_t seq)
{
  return ((uint64_t)group << 32) | seq;
}

/* ---- busy-time accounting ---- */

static void account(rank_state *rs, int dcompute, int dcomm)
{
  sim_time_ps now = sim_now(rs->rp->sim);
  sim_time_ps dt = now - rs->last_change;
  if (rs->n_compute > 0 && rs->n_comm > 0)
    rs->t_both += dt;
  else if (rs->n_compute > 0)
    rs->t_compute_only += dt;
  else if (rs->n_comm > 0)
    rs->t_comm_only += dt;
  else
    rs->t_idle += dt;
  rs->last_change = now;
  rs->n_compute += dcompute;
  rs->n_comm += dcomm;
  g_assert(rs->n_compute >= 0 && rs->n_comm >= 0);
}

static void fail(replay *rp, GError *e)
{
  if (rp->error == NULL)
    rp->error = e;
  else
    g_error_free(e);
  sim_stop(rp->sim);
}

/* ---- node lifecycle ---- */

static void start_node(rank_state *rs, uint32_t i);

static gboolean is_comm_node(const et_node *n)
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
static void start_waiting(rank_state *rs, node_fifo *q, uint32_t freer)
{
  uint32_t next = fifo_pop(q);
  if (G_UNLIKELY(rs->rp->crit != NULL))
    sim_crit_rec_bind(rs->rp->crit, rs->rank, next, freer);
  start_node(rs, next);
}

/* started: when the node began running, or -1 when it is not a stretched
 * compute node (the observer then derives it as before). */
static void finish_node(rank_state *rs, uint32_t i, sim_time_ps started)
{
  const et_graph *g = rs->g;
  const et_node *n = &g->nodes[i];
  int slot = node_slot(n);
  gboolean counts_comm = is_comm_node(n) || (n->flags & ET_FLAG_REPLAY);
  account(rs, slot ? -1 : 0, counts_comm ? -1 : 0);
  rs->finished++;
  rs->finish = sim_now(rs->rp->sim);
  sim_crit_rec *crit = rs->rp->crit;
  if (G_UNLIKELY(crit != NULL))
    sim_crit_rec_finish(crit, rs->rank, i, rs->finish);
  const sim_replay_observer *obs = rs->rp->obs;
  if (obs && obs->node_done) {
    /* Timed nodes ran for their duration (unless interference stretched
     * them: `started`); communication started when this rank issued it. */
    sim_time_ps start = started >= 0 ? started
                        : n->comm != ET_NONE && !(n->flags & ET_FLAG_REPLAY) ? rs->comm_issue[n->comm]
                        : (n->type == ET_NODE_COMP || (n->flags & ET_FLAG_REPLAY)) ? rs->finish - n->duration_ps
                        : rs->finish;
    obs->node_done(obs->ctx, rs->rank, g, i, start, rs->finish);
  }
  for (uint32_t e = n->children; e < g->nodes[i + 1].children; e++) {
    uint32_t c = g->child_index[e];
    g_assert(rs->indeg[c] > 0);
    if (--rs->indeg[c] == 0) {
      if (G_UNLIKELY(crit != NULL))
        sim_crit_rec_bind(crit, rs->rank, c, i);
      start_node(rs, c);
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
  finish_node(ctx, (uint32_t)arg, -1);
}

static void run_for(rank_state *rs, uint32_t i, sim_time_ps d)
{
  sim_post_after(rs->rp->sim, d, on_node_timer, rs, i);
}

/* ---- interference: compute slowed by communication on the same cores ----
 *
 * The collectives layer reports each change of a rank's slowdown delta
 * (coll_lib_set_slowdown_hook); GPU compute nodes on that rank then
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
static void ovl_progress(rank_state *rs, ovl_node *x, sim_time_ps now)
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
  rank_state *rs = ctx;
  uint32_t i = (uint32_t)arg;
  unsigned k = 0;
  while (k < rs->n_running && rs->running[k].node != i)
    k++;
  g_assert(k < rs->n_running);
  ovl_node x = rs->running[k];
  rs->running[k] = rs->running[--rs->n_running];
  /* The rest of the work was done at the current factor (any change would
   * have re-timed this event). */
  if (rs->slow > 1.0)
    rs->t_under += x.left;
  sim_time_ps added = sim_now(sim) - x.start - rs->g->nodes[i].duration_ps;
  g_assert(added >= 0);
  rs->t_added += added;
  if (G_UNLIKELY(rs->rp->crit != NULL) && added > 0)
    sim_crit_rec_stretch(rs->rp->crit, rs->rank, i, added);
  finish_node(rs, i, x.start);
}

static void run_compute(rank_state *rs, uint32_t i, sim_time_ps d)
{
  g_assert(rs->n_running < rs->compute_slots);
  sim_engine *sim = rs->rp->sim;
  sim_time_ps now = sim_now(sim);
  ovl_node *x = &rs->running[rs->n_running++];
  *x = (ovl_node){ .node = i, .left = d, .t_last = now, .start = now };
  x->ev = sim_schedule_after(sim, ovl_stretch(d, rs->slow), on_compute_timer, rs, i);
}

/* coll_slowdown_fn: rank's delta changed now. */
static void on_slowdown(sim_engine *sim, void *ctx, int rank, double delta)
{
  replay *rp = ctx;
  if (rank < 0 || rank >= rp->w->n_ranks)
    return;
  rank_state *rs = &rp->ranks[rank];
  double f = 1.0 + delta;
  if (f == rs->slow)
    return;
  sim_time_ps now = sim_now(sim);
  for (unsigned k = 0; k < rs->n_running; k++)
    ovl_progress(rs, &rs->running[k], now);
  rs->slow = f;
  for (unsigned k = 0; k < rs->n_running; k++) {
    ovl_node *x = &rs->running[k];
    gboolean pending = sim_cancel(sim, x->ev);
    g_assert(pending);
    x->ev = sim_schedule_after(sim, ovl_stretch(x->left, f), on_compute_timer, rs, x->node);
  }
}

/* ---- collectives ---- */

static void on_coll_member_done(sim_engine *sim, void *ctx, uint64_t cookie, int member)
{
  replay *rp = ctx;
  coll_inst *ci = g_hash_table_lookup(rp->insts, &cookie);
  g_assert(ci != NULL && member >= 0 && member < ci->n);
  int rank = ci->grp ? ci->grp->ranks[member] : member;
  rank_state *rs = &rp->ranks[rank];
  uint32_t node = ci->node[member];
  const et_node *n = &rs->g->nodes[node];
  sim_comm_record rec = {
    .rank = rank, .node_id = n->id, .op = ci->type, .node_type = n->type, .algo = ci->info.algo,
    .nccl_algo = (int8_t)ci->info.nccl_algo, .proto = (int8_t)ci->info.proto, .group = ci->group,
    .n_ranks = ci->n, .peer = -1, .bytes = ci->bytes,
    .algbw_bytes = ci->info.algbw_bytes, .busbw_factor = ci->info.busbw_factor,
    .issue = rs->comm_issue[n->comm], .start = ci->start, .end = sim_now(sim),
    .measured = n->duration_ps,
  };
  g_array_append_val(rp->comms, rec);
  if (rp->obs && rp->obs->comm_done)
    rp->obs->comm_done(rp->obs->ctx, &rec);
  finish_node(rs, node, -1);
  if (++ci->done == ci->n)
    g_hash_table_remove(rp->insts, &cookie);
}

static void coll_inst_free(gpointer p)
{
  coll_inst *ci = p;
  g_free(ci->node);
  g_free(ci->splits);
  g_free(ci);
}

static const char *group_label(replay *rp, uint32_t group)
{
  return group == ET_GROUP_WORLD ? "world" : et_workload_group(rp->w, group)->name;
}

/* Member index of `rank` in group `group`, or -1. */
static int member_of(replay *rp, uint32_t group, int rank)
{
  if (group == ET_GROUP_WORLD)
    return rank;
  gpointer v = g_hash_table_lookup(rp->member_index[group], GINT_TO_POINTER(rank));
  return v ? GPOINTER_TO_INT(v) - 1 : -1;
}

/* Buffer lifecycle of a collective from its members' nodes (et_comm.buffer,
 * has_alloc, alloc_ps: from memory events).  coll_desc holds one buffer id
 * and one allocation time for the whole group, so: the buffer id is a hash
 * of the members' ids in member order, and the allocation time is the
 * latest member's (the group's registration can start only when every
 * member's buffer exists), on the replay clock whose origin is the traces'
 * measured window start, clamped to now (an allocation cannot follow its
 * use).  Only when every member carries an allocation time is the lifecycle
 * known; otherwise the library's synthetic lifecycle applies (counted in
 * sim_result.lifecycle_partial when some members had one).  O(members). */
static void lifecycle_of(replay *rp, const coll_inst *ci, coll_desc *d)
{
  uint64_t h = UINT64_C(0x9e3779b97f4a7c15);
  sim_time_ps latest = INT64_MIN;
  int with = 0;
  for (int k = 0; k < ci->n; k++) {
    int rank = ci->grp ? ci->grp->ranks[k] : k;
    const et_comm *c = et_node_comm(rp->ranks[rank].g, ci->node[k]);
    if (c == NULL || !c->has_alloc || c->buffer == 0)
      continue;
    with++;
    latest = MAX(latest, c->alloc_ps);
    /* splitmix64 step over (h, member buffer). */
    uint64_t z = (h += c->buffer + UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    h = z ^ (z >> 31);
  }
  if (with == 0)
    return;
  if (with < ci->n) {
    rp->lifecycle_partial++;
    return;
  }
  rp->lifecycle_known++;
  d->buffer = h != 0 ? h : 1;
  d->alloc_known = TRUE;
  d->alloc_time = MIN(latest, sim_now(rp->sim));
}

static void issue_collective(rank_state *rs, uint32_t i)
{
  replay *rp = rs->rp;
  const et_graph *g = rs->g;
  const et_node *n = &g->nodes[i];
  const et_comm *c = &g->comms[n->comm];
  uint32_t gslot = c->group == ET_GROUP_WORLD ? 0 : c->group + 1;
  uint32_t seq = rs->group_seq[gslot]++;
  int member = member_of(rp, c->group, rs->rank);
  if (member < 0) {
    fail(rp, g_error_new(WISP_ERROR, WISP_ERROR_INVALID,
                         "rank %d node %" G_GUINT64_FORMAT " (%s) issues %s on group '%s', "
                         "but rank %d is not a member of that group; fix the node's pg_name or comm_group.json",
                         rs->rank, n->id, et_node_name(g, i), et_coll_type_name(c->coll),
                         group_label(rp, c->group), rs->rank));
    return;
  }
  uint64_t key = inst_key(c->group, seq);
  coll_inst *ci = g_hash_table_lookup(rp->insts, &key);
  if (ci == NULL) {
    ci = g_new0(coll_inst, 1);
    ci->group = c->group;
    ci->seq = seq;
    ci->grp = c->group == ET_GROUP_WORLD ? NULL : et_workload_group(rp->w, c->group);
    ci->n = ci->grp ? ci->grp->n_ranks : rp->w->n_ranks;
    ci->type = c->coll;
    ci->bytes = c->bytes;
    ci->root = c->root;
    ci->first_rank = rs->rank;
    ci->node = g_new(uint32_t, ci->n);
    for (int k = 0; k < ci->n; k++)
      ci->node[k] = ET_NONE;
    if (c->coll == ET_COLL_ALL_TO_ALLV)
      ci->splits = g_new0(uint64_t, (size_t)ci->n * ci->n);
    uint64_t *k = g_new(uint64_t, 1);
    *k = key;
    g_hash_table_insert(rp->insts, k, ci);
  } else if (ci->type != c->coll || ci->bytes != c->bytes || ci->root != c->root) {
    char ra[32] = "", rb[32] = "";
    if (ci->root != c->root) {
      g_snprintf(ra, sizeof ra, " with root %d", ci->root);
      g_snprintf(rb, sizeof rb, " with root %d", c->root);
    }
    fail(rp, g_error_new(WISP_ERROR, WISP_ERROR_INVALID,
                         "collective mismatch in group '%s', call #%u: rank %d issued %s of %" G_GUINT64_FORMAT
                         " bytes%s but rank %d issued %s of %" G_GUINT64_FORMAT
                         " bytes%s (node %" G_GUINT64_FORMAT "); every member must issue the same "
                         "collectives in the same order",
                         group_label(rp, c->group), seq, ci->first_rank, et_coll_type_name(ci->type),
                         ci->bytes, ra, rs->rank, et_coll_type_name(c->coll), c->bytes, rb, n->id));
    return;
  }
  g_assert(ci->node[member] == ET_NONE);
  ci->node[member] = i;
  if (ci->splits && c->split != ET_NONE)
    memcpy(ci->splits + (size_t)member * ci->n, g->splits + c->split, sizeof(uint64_t) * ci->n);
  if (++ci->arrived < ci->n)
    return;
  /* Every member has issued: the collective starts now.  A rooted
   * collective whose trace did not record the root (Kineto rarely does)
   * runs with the group's first member as root; the run counts these. */
  ci->start = sim_now(rp->sim);
  gboolean rooted = ci->type == ET_COLL_BROADCAST || ci->type == ET_COLL_REDUCE || ci->type == ET_COLL_GATHER ||
                    ci->type == ET_COLL_SCATTER;
  if (rooted && ci->root < 0) {
    ci->root = ci->grp ? ci->grp->ranks[0] : 0;
    rp->assumed_roots++;
  }
  coll_desc d = {
    .type = ci->type, .bytes = ci->bytes,
    .ranks = ci->grp ? ci->grp->ranks : rp->world_ranks, .n_ranks = ci->n,
    .root = ci->root, .splits = ci->splits,
  };
  lifecycle_of(rp, ci, &d);
  if (G_UNLIKELY(rp->crit != NULL))
    sim_crit_rec_comm_start(rp->crit, ci->n, d.ranks, ci->node, ci->start, ci->seq);
  GError *e = NULL;
  if (!coll_desc_check(net_get_topo(rp->net), &d, &e)) {
    fail(rp, g_error_new(WISP_ERROR, WISP_ERROR_INVALID, "%s #%u of group '%s' (rank %d node %" G_GUINT64_FORMAT
                         "): %s", et_coll_type_name(ci->type), seq, group_label(rp, c->group), rs->rank,
                         n->id, e->message));
    g_error_free(e);
    return;
  }
  coll_start(rp->coll, &d, on_coll_member_done, rp, key, &ci->info);
}

/* ---- point to point ---- */

static char *p2p_key(int src, int dst, int tag)
{
  return g_strdup_printf("%d %d %d", src, dst, tag);
}

/* Side k (0 the sender, 1 the receiver) of point-to-point op `cookie` has
 * finished now: its record, then its node. */
static void p2p_side_done(replay *rp, const p2p_op *op, int k)
{
  int ranks[2] = {op->src, op->dst};
  uint32_t nodes[2] = {op->send_node, op->recv_node};
  rank_state *rs = &rp->ranks[ranks[k]];
  const et_node *n = &rs->g->nodes[nodes[k]];
  sim_comm_record rec = {
    .rank = ranks[k], .node_id = n->id, .op = ET_COLL_NONE, .node_type = n->type,
    .algo = COLL_ALGO_DIRECT, .nccl_algo = -1, .proto = -1, .group = ET_GROUP_WORLD, .n_ranks = 2,
    .peer = ranks[1 - k],
    .bytes = op->bytes, .algbw_bytes = op->bytes, .busbw_factor = 1.0,
    .issue = rs->comm_issue[n->comm], .start = op->start, .end = sim_now(rp->sim),
    .measured = n->duration_ps,
  };
  g_array_append_val(rp->comms, rec);
  if (rp->obs && rp->obs->comm_done)
    rp->obs->comm_done(rp->obs->ctx, &rec);
  finish_node(rs, nodes[k], -1);
}

/* nccl: the transfer arrived; both sides finish now. */
static void on_p2p_done(sim_engine *sim, void *ctx, uint64_t cookie)
{
  (void)sim;
  replay *rp = ctx;
  p2p_op *op = g_ptr_array_index(rp->p2p_ops, cookie);
  for (int k = 0; k < 2; k++)
    p2p_side_done(rp, op, k);
  g_free(op);
  rp->p2p_ops->pdata[cookie] = NULL;
}

/* Library (coll_p2p_start): each side finishes on its own. */
static void on_p2p_member_done(sim_engine *sim, void *ctx, uint64_t cookie, int member)
{
  (void)sim;
  replay *rp = ctx;
  p2p_op *op = g_ptr_array_index(rp->p2p_ops, cookie);
  p2p_side_done(rp, op, member);
  if (++op->sides_done == 2) {
    g_free(op);
    rp->p2p_ops->pdata[cookie] = NULL;
  }
}

static void issue_p2p(rank_state *rs, uint32_t i)
{
  replay *rp = rs->rp;
  const et_node *n = &rs->g->nodes[i];
  const et_comm *c = &rs->g->comms[n->comm];
  gboolean is_send = n->type == ET_NODE_COMM_SEND;
  int src = is_send ? rs->rank : c->src;
  int dst = is_send ? c->dst : rs->rank;
  if (src < 0 || src >= rp->w->n_ranks || dst < 0 || dst >= rp->w->n_ranks) {
    fail(rp, g_error_new(WISP_ERROR, WISP_ERROR_INVALID,
                         "rank %d node %" G_GUINT64_FORMAT " (%s): peer rank %d is outside the workload's %d ranks",
                         rs->rank, n->id, et_node_name(rs->g, i), is_send ? dst : src, rp->w->n_ranks));
    return;
  }
  /* Sends wait under key "src dst tag" with a leading 's', receives with 'r'. */
  char *mine = p2p_key(src, dst, c->tag);
  char *wait_key = g_strconcat(is_send ? "r" : "s", mine, NULL);
  GQueue *q = g_hash_table_lookup(rp->p2p_wait, wait_key);
  g_free(wait_key);
  if (q == NULL || g_queue_is_empty(q)) {
    char *k = g_strconcat(is_send ? "s" : "r", mine, NULL);
    GQueue *mq = g_hash_table_lookup(rp->p2p_wait, k);
    if (mq == NULL) {
      mq = g_queue_new();
      g_hash_table_insert(rp->p2p_wait, k, mq);
    } else {
      g_free(k);
    }
    g_queue_push_tail(mq, GUINT_TO_POINTER(i + 1));
    g_free(mine);
    return;
  }
  g_free(mine);
  uint32_t other = GPOINTER_TO_UINT(g_queue_pop_head(q)) - 1;
  p2p_op *op = g_new0(p2p_op, 1);
  op->src = src;
  op->dst = dst;
  op->send_node = is_send ? i : other;
  op->recv_node = is_send ? other : i;
  /* The sender's size is what moves. */
  const et_graph *sg = rp->ranks[src].g;
  op->bytes = sg->comms[sg->nodes[op->send_node].comm].bytes;
  op->start = sim_now(rp->sim);
  if (G_UNLIKELY(rp->crit != NULL))
    sim_crit_rec_comm_start(rp->crit, 2, (const int[]){src, dst}, (const uint32_t[]){op->send_node, op->recv_node},
                            op->start, ET_NONE);
  g_ptr_array_add(rp->p2p_ops, op);
  /* A communication library runs the send itself (registration, engine,
   * sigma_sig; doc/libraries.md §2); nccl's goes straight to the network.
   * The buffer lifecycle is known when both sides' nodes carry one (the
   * later allocation, clamped to now), as for collectives. */
  if (G_UNLIKELY(rp->p2p_lib)) {
    const et_comm *sc = &sg->comms[sg->nodes[op->send_node].comm];
    const et_graph *rg = rp->ranks[dst].g;
    const et_comm *rc = &rg->comms[rg->nodes[op->recv_node].comm];
    gboolean known = sc->has_alloc && rc->has_alloc && sc->buffer != 0 && rc->buffer != 0;
    uint64_t buf = known ? coll_library_mix(sc->buffer ^ coll_library_mix(rc->buffer)) | 1u : 0;
    sim_time_ps at = known ? MIN(MAX(sc->alloc_ps, rc->alloc_ps), op->start) : 0;
    gboolean ran = coll_p2p_start(rp->coll, src, dst, op->bytes, buf, known, at, on_p2p_member_done, rp,
                                  rp->p2p_ops->len - 1, NULL);
    g_assert(ran);
  } else
    net_send(rp->net, src, dst, op->bytes, on_p2p_done, rp, rp->p2p_ops->len - 1);
}

/* ---- dispatch ---- */

static void start_node(rank_state *rs, uint32_t i)
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
  gboolean counts_comm = is_comm_node(n) || (n->flags & ET_FLAG_REPLAY);
  account(rs, slot ? 1 : 0, counts_comm ? 1 : 0);
  if (slot == 1)
    rs->compute_busy++;
  else if (slot == 2)
    rs->cpu_busy++;
  if (n->comm != ET_NONE)
    rs->comm_issue[n->comm] = sim_now(rs->rp->sim);

  if (n->flags & ET_FLAG_REPLAY) {
    run_for(rs, i, n->duration_ps);
    return;
  }
  switch ((et_node_type)n->type) {
  case ET_NODE_COMP:
    if (G_UNLIKELY(rs->rp->ovl) && slot == 1)
      run_compute(rs, i, n->duration_ps);
    else
      run_for(rs, i, n->duration_ps);
    break;
  case ET_NODE_COMM_COLL:
    issue_collective(rs, i);
    break;
  case ET_NODE_COMM_SEND:
  case ET_NODE_COMM_RECV:
    issue_p2p(rs, i);
    break;
  case ET_NODE_METADATA:
  case ET_NODE_INVALID:
  default:
    run_for(rs, i, 0);
    break;
  }
}

/* Starts every node of the rank without parents. */
static void start_roots(rank_state *rs)
{
  for (uint32_t i = 0; i < rs->g->n_nodes; i++)
    if (rs->indeg[i] == 0)
      start_node(rs, i);
}

/* A rank that begins later than time 0 (measured starts). */
static void on_rank_begin(sim_engine *sim, void *ctx, uint64_t arg)
{
  (void)sim;
  (void)arg;
  start_roots(ctx);
}

/* ---- setup, checks and deadlock reports ---- */

static gboolean check_workload(const et_workload *w, GError **error)
{
  for (int r = 0; r < w->n_ranks; r++) {
    const et_graph *g = w->ranks[r];
    if (g == NULL) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: rank %d has no graph", w->source, r);
      return FALSE;
    }
    for (uint32_t i = 0; i < g->n_nodes; i++) {
      const et_node *n = &g->nodes[i];
      if (n->type == ET_NODE_MEM_LOAD || n->type == ET_NODE_MEM_STORE) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED,
                    "%s: rank %d node %" G_GUINT64_FORMAT " (%s) is a %s; wisp does not model remote "
                    "memory nodes: remove them or convert them to COMP nodes",
                    w->source, r, n->id, et_node_name(g, i), et_node_type_name(n->type));
        return FALSE;
      }
      if (is_comm_node(n) && !(n->flags & ET_FLAG_REPLAY) && n->comm == ET_NONE) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                    "%s: rank %d node %" G_GUINT64_FORMAT " (%s) is a communication node without "
                    "communication attributes", w->source, r, n->id, et_node_name(g, i));
        return FALSE;
      }
      if (n->type == ET_NODE_COMM_COLL && !(n->flags & ET_FLAG_REPLAY)) {
        const et_comm *c = &g->comms[n->comm];
        int group_size = c->group == ET_GROUP_WORLD ? w->n_ranks : et_workload_group(w, c->group)->n_ranks;
        if (c->coll == ET_COLL_ALL_TO_ALLV && c->split == ET_NONE) {
          g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                      "%s: rank %d node %" G_GUINT64_FORMAT ": ALL_TO_ALLV without per-peer sizes",
                      w->source, r, n->id);
          return FALSE;
        }
        if (c->coll == ET_COLL_NONE || group_size < 1) {
          g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                      "%s: rank %d node %" G_GUINT64_FORMAT ": collective without a type", w->source, r, n->id);
          return FALSE;
        }
      }
    }
  }
  for (guint k = 0; k < w->groups->len; k++) {
    const et_group *grp = et_workload_group(w, k);
    for (int m = 0; m < grp->n_ranks; m++)
      if (grp->ranks[m] < 0 || grp->ranks[m] >= w->n_ranks) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                    "%s: group '%s' lists rank %d but the workload has ranks 0..%d",
                    w->source, grp->name, grp->ranks[m], w->n_ranks - 1);
        return FALSE;
      }
  }
  return TRUE;
}

/* Describes, per blocked rank, what it waits for. */
static GError *deadlock_error(replay *rp)
{
  GString *s = g_string_new("the replay stopped with unfinished nodes (deadlock):");
  const int max_lines = 32;
  int lines = 0, blocked = 0;
  for (int r = 0; r < rp->w->n_ranks; r++) {
    rank_state *rs = &rp->ranks[r];
    if (rs->finished == rs->g->n_nodes)
      continue;
    blocked++;
    if (lines >= max_lines)
      continue;
    gboolean said = FALSE;
    /* Collectives this rank issued whose other members did not. */
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, rp->insts);
    GPtrArray *mine = g_ptr_array_new();
    while (g_hash_table_iter_next(&it, &k, &v)) {
      coll_inst *ci = v;
      int m = member_of(rp, ci->group, r);
      if (m >= 0 && ci->node[m] != ET_NONE && ci->arrived < ci->n)
        g_ptr_array_add(mine, ci);
    }
    for (guint x = 0; x < mine->len; x++) {
      coll_inst *ci = mine->pdata[x];
      for (int m = 0; m < ci->n && lines < max_lines; m++) {
        if (ci->node[m] != ET_NONE)
          continue;
        int other = ci->grp ? ci->grp->ranks[m] : m;
        g_string_append_printf(s, "\n  rank %d waits for rank %d to issue %s #%u of group %s", r, other,
                               et_coll_type_name(ci->type), ci->seq, group_label(rp, ci->group));
        lines++;
        said = TRUE;
        break; /* one missing member per instance is enough */
      }
    }
    g_ptr_array_free(mine, TRUE);
    /* Point-to-point operations waiting for their partner. */
    g_hash_table_iter_init(&it, rp->p2p_wait);
    while (g_hash_table_iter_next(&it, &k, &v) && lines < max_lines) {
      const char *key = k;
      GQueue *q = v;
      int src, dst, tag;
      if (g_queue_is_empty(q) || sscanf(key + 1, "%d %d %d", &src, &dst, &tag) != 3)
        continue;
      gboolean send = key[0] == 's';
      if ((send && src == r) || (!send && dst == r)) {
        g_string_append_printf(s, "\n  rank %d waits for rank %d to %s (tag %d)", r, send ? dst : src,
                               send ? "post the matching receive" : "send", tag);
        lines++;
        said = TRUE;
      }
    }
    if (!said && lines < max_lines) {
      /* Nothing issued: report the first node that never became ready. */
      for (uint32_t i = 0; i < rs->g->n_nodes; i++) {
        if (rs->indeg[i] > 0) {
          g_string_append_printf(s, "\n  rank %d: %u of %u nodes unfinished; node %" G_GUINT64_FORMAT
                                 " (%s) waits for %u unfinished parents",
                                 r, rs->g->n_nodes - rs->finished, rs->g->n_nodes, rs->g->nodes[i].id,
                                 et_node_name(rs->g, i), rs->indeg[i]);
          lines++;
          break;
        }
      }
    }
  }
  if (lines >= max_lines)
    g_string_append_printf(s, "\n  ... (%d blocked ranks in all)", blocked);
  GError *e = g_error_new_literal(WISP_ERROR, WISP_ERROR_DEADLOCK, s->str);
  g_string_free(s, TRUE);
  return e;
}

static gint comm_record_cmp(gconstpointer a, gconstpointer b)
{
  const sim_comm_record *x = a, *y = b;
  if (x->end != y->end)
    return x->end < y->end ? -1 : 1;
  if (x->rank != y->rank)
    return x->rank < y->rank ? -1 : 1;
  return x->node_id < y->node_id ? -1 : (x->node_id > y->node_id);
}

static void p2p_queue_free(gpointer q)
{
  g_queue_free(q);
}

static guint u64_hash(gconstpointer p)
{
  uint64_t v = *(const uint64_t *)p;
  return (guint)(v ^ (v >> 32)) * 2654435761u;
}

static gboolean u64_equal(gconstpointer a, gconstpointer b)
{
  return *(const uint64_t *)a == *(const uint64_t *)b;
}

sim_result *sim_replay_run(const et_workload *w, const topo *t, const sim_replay_options *opt,
                           GError **error)
{
  sim_replay_options defaults = {0};
  if (opt == NULL)
    opt = &defaults;
  if (topo_n_ranks(t) < w->n_ranks) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "the workload %s has %d ranks but the network %s places only %d; use a network with at "
                "least %d endpoints",
                w->source, w->n_ranks, topo_source(t), topo_n_ranks(t), w->n_ranks);
    return NULL;
  }
  if (opt->measured_starts && w->measured_start_ps == NULL) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: --starts measured needs each rank's measured start on a common clock, which this workload "
                "does not carry (Kineto traces whose clocks agree do; Chakra files and XLA profiles do not)",
                w->source);
    return NULL;
  }
  if (!check_workload(w, error))
    return NULL;

  replay rp = {0};
  rp.w = w;
  rp.policy = coll_policy_new_from_topo(t, error);
  if (rp.policy == NULL)
    return NULL;
  if (opt->has_algo)
    coll_policy_force(rp.policy, opt->algo);
  net_tier tier = opt->has_tier ? opt->tier : net_default_tier(t);
  rp.sim = sim_engine_new(opt->checked);
  rp.net = net_new(rp.sim, t, tier);
  rp.coll = coll_lib_new(rp.sim, rp.net, rp.policy);
  rp.p2p_lib = coll_library_has_engine(coll_policy_library(rp.policy)->kind);
  rp.ovl = coll_lib_set_slowdown_hook(rp.coll, on_slowdown, &rp);
  rp.obs = opt->observer;
  if (opt->critical_path)
    rp.crit = sim_crit_rec_new(w);
  rp.insts = g_hash_table_new_full(u64_hash, u64_equal, g_free, coll_inst_free);
  rp.p2p_wait = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, p2p_queue_free);
  rp.p2p_ops = g_ptr_array_new();
  rp.comms = g_array_new(FALSE, FALSE, sizeof(sim_comm_record));
  rp.world_ranks = g_new(int, w->n_ranks);
  for (int r = 0; r < w->n_ranks; r++)
    rp.world_ranks[r] = r;
  guint n_groups = w->groups->len;
  rp.member_index = g_new0(GHashTable *, n_groups > 0 ? n_groups : 1);
  for (guint k = 0; k < n_groups; k++) {
    const et_group *grp = et_workload_group(w, k);
    rp.member_index[k] = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (int m = 0; m < grp->n_ranks; m++)
      g_hash_table_insert(rp.member_index[k], GINT_TO_POINTER(grp->ranks[m]), GINT_TO_POINTER(m + 1));
  }

  rp.ranks = g_new0(rank_state, w->n_ranks);
  for (int r = 0; r < w->n_ranks; r++) {
    rank_state *rs = &rp.ranks[r];
    const et_graph *g = w->ranks[r];
    rs->rp = &rp;
    rs->rank = r;
    rs->g = g;
    /* The option wins; else the graph's measured concurrency; else 1. */
    rs->compute_slots = opt->compute_slots ? opt->compute_slots : g->compute_slots ? g->compute_slots : 1;
    rs->indeg = g_new0(uint32_t, g->n_nodes ? g->n_nodes : 1);
    for (uint32_t i = 0; i < g->n_nodes; i++)
      for (uint32_t e = g->nodes[i].children; e < g->nodes[i + 1].children; e++)
        rs->indeg[g->child_index[e]]++;
    rs->group_seq = g_new0(uint32_t, n_groups + 1);
    rs->comm_issue = g_new0(sim_time_ps, g->n_comms ? g->n_comms : 1);
    rs->slow = 1.0;
    if (rp.ovl)
      rs->running = g_new(ovl_node, rs->compute_slots);
  }

  double t0 = wisp_wall_seconds();
  for (int r = 0; r < w->n_ranks; r++) {
    sim_time_ps at = opt->measured_starts ? w->measured_start_ps[r] : 0;
    if (at > 0)
      sim_post_after(rp.sim, at, on_rank_begin, &rp.ranks[r], 0);
    else
      start_roots(&rp.ranks[r]);
  }
  sim_run(rp.sim, SIM_TIME_MAX);
  double wall = wisp_wall_seconds() - t0;

  sim_result *res = NULL;
  if (rp.error == NULL) {
    for (int r = 0; r < w->n_ranks; r++)
      if (rp.ranks[r].finished != rp.ranks[r].g->n_nodes) {
        rp.error = deadlock_error(&rp);
        break;
      }
  }
  if (rp.error == NULL) {
    res = g_new0(sim_result, 1);
    res->n_ranks = w->n_ranks;
    res->ranks = g_new0(sim_rank_stats, w->n_ranks);
    for (int r = 0; r < w->n_ranks; r++) {
      rank_state *rs = &rp.ranks[r];
      /* Close the accounting at this rank's finish time. */
      g_assert(rs->n_compute == 0 && rs->n_comm == 0);
      sim_rank_stats *st = &res->ranks[r];
      st->rank = r;
      st->finish = rs->finish;
      st->compute = rs->t_compute_only + rs->t_both;
      st->exposed_comm = rs->t_comm_only;
      st->overlapped_comm = rs->t_both;
      st->idle = rs->finish - rs->t_compute_only - rs->t_both - rs->t_comm_only;
      st->nodes = rs->finished;
      st->compute_slots = rs->compute_slots;
      st->interference = rs->t_added;
      st->interfered_compute = rs->t_under;
      if (st->finish > res->step_time)
        res->step_time = st->finish;
    }
    g_array_sort(rp.comms, comm_record_cmp);
    res->comms = rp.comms;
    rp.comms = NULL;
    res->events = sim_events_processed(rp.sim);
    res->assumed_roots = rp.assumed_roots;
    res->lifecycle_known = rp.lifecycle_known;
    res->lifecycle_partial = rp.lifecycle_partial;
    const coll_library_params *lp = coll_policy_library(rp.policy);
    res->library = lp ? lp->kind : COLL_LIBRARY_NCCL;
    const coll_library_stats *ls = coll_lib_library_stats(rp.coll);
    if (ls)
      res->library_stats = *ls;
    res->interference = rp.ovl;
    if (rp.crit) {
      res->critical = sim_crit_rec_build(rp.crit);
      res->critical->interference_model = rp.ovl;
      g_assert(res->critical->step_time == res->step_time);
    }
    res->measured_starts = opt->measured_starts;
    res->wall_seconds = wall;
    res->tier = tier;
    res->n_links = topo_n_links(t);
    res->link_bytes = g_new0(uint64_t, res->n_links ? res->n_links : 1);
    for (uint32_t l = 0; l < res->n_links; l++)
      res->link_bytes[l] = net_link_bytes(rp.net, l);
    if (!opt->quiet)
      sim_print_speed(rp.sim, wall, stderr);
  } else {
    g_propagate_error(error, rp.error);
  }

  for (int r = 0; r < w->n_ranks; r++) {
    rank_state *rs = &rp.ranks[r];
    g_free(rs->indeg);
    g_free(rs->group_seq);
    g_free(rs->comm_issue);
    g_free(rs->compute_wait.items);
    g_free(rs->cpu_wait.items);
    g_free(rs->running);
  }
  g_free(rp.ranks);
  for (guint k = 0; k < n_groups; k++)
    g_hash_table_destroy(rp.member_index[k]);
  g_free(rp.member_index);
  g_free(rp.world_ranks);
  g_hash_table_destroy(rp.insts);
  g_hash_table_destroy(rp.p2p_wait);
  for (guint k = 0; k < rp.p2p_ops->len; k++)
    g_free(rp.p2p_ops->pdata[k]);
  g_ptr_array_free(rp.p2p_ops, TRUE);
  if (rp.comms)
    g_array_free(rp.comms, TRUE);
  sim_crit_rec_free(rp.crit);
  coll_lib_free(rp.coll);
  net_free(rp.net);
  sim_engine_free(rp.sim);
  coll_policy_free(rp.policy);
  return res;
}

void sim_result_free(sim_result *r)
{
  if (r == NULL)
    return;
  g_free(r->ranks);
  if (r->comms)
    g_array_free(r->comms, TRUE);
  g_free(r->link_bytes);
  sim_crit_path_free(r->critical);
  g_free(r);
}
