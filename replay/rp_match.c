/* rp_match.c: the replay matches the ranks' communication nodes into
 * collectives and send/receive pairs and starts them (rp_internal.h).
 *
 * Collectives: an instance per (group, per-group sequence number) gathers
 * the members' nodes until every member has issued, then starts on
 * collectives/ (coll_start), which reports each member's finish; the
 * instance is freed when the last member has finished.  The buffer
 * lifecycle the library model sees comes from coll_desc_set_lifecycle
 * (collectives/coll.h), not from here.
 *
 * Point to point: a send or receive whose partner has not issued waits in
 * a FIFO keyed by (source, destination, tag, side); the partner pops it
 * and the pair becomes an operation in a pool slot (cookie = slot index)
 * until both sides have finished.  A key's entry is freed when its FIFO
 * empties and a slot is reused when its operation ends, so both hold only
 * what is waiting or in flight, never the run's history.
 *
 * Cost: O(1) hash operations per issue plus O(members) per collective
 * start (lifecycle, critical-path record) plus the collective and network
 * models' own work.
 */
#include "config.h"
#include "replay/rp_internal.h"
#include "chakra/et_view.h"

#include <string.h>

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
  uint32_t *node;           /* per member: node index, ET_NONE until issued (inside issue's block) */
  sim_time_ps *issue;       /* per member: when it issued */
  uint64_t *splits;         /* ALL_TO_ALLV matrix n*n, or NULL */
  int two_hop;              /* et_comm.two_hop of the first member to issue (coll_desc.two_hop) */
  uint32_t two_hop_ppm;
  sim_time_ps start;
  coll_info info;
} rp_coll_inst;

/* The wait key of a point-to-point side: which transfer, and whether the
 * waiting side is the sender. */
typedef struct {
  int src, dst, tag;
  gboolean send;
} rp_p2p_key;

/* A side waiting for its partner: its node and when it was issued. */
typedef struct {
  uint32_t node;
  sim_time_ps issue;
} rp_p2p_side;

/* One key's waiting sides in issue order: a ring (head, len) in items,
 * which points at the inline `one` until a second side waits under the
 * same key (the common case allocates nothing more). */
typedef struct {
  rp_p2p_key key;           /* first: the table's key points here */
  uint32_t head, len, cap;
  rp_p2p_side *items;
  rp_p2p_side one;
} rp_p2p_wait;

static uint64_t inst_key(uint32_t group, uint32_t seq)
{
  return ((uint64_t)group << 32) | seq;
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

static guint p2p_key_hash(gconstpointer p)
{
  const rp_p2p_key *k = p;
  uint64_t v = ((uint64_t)(uint32_t)k->src << 32 | (uint32_t)k->dst) * UINT64_C(0x9e3779b97f4a7c15);
  v ^= ((uint64_t)(uint32_t)k->tag << 1 | (k->send != 0)) * UINT64_C(0xbf58476d1ce4e5b9);
  return (guint)(v ^ (v >> 32));
}

static gboolean p2p_key_equal(gconstpointer a, gconstpointer b)
{
  const rp_p2p_key *x = a, *y = b;
  return x->src == y->src && x->dst == y->dst && x->tag == y->tag && !x->send == !y->send;
}

static void p2p_wait_free(gpointer p)
{
  rp_p2p_wait *wt = p;
  if (wt->items != &wt->one)
    g_free(wt->items);
  g_free(wt);
}

/* Appends a side; the ring doubles when full (amortized O(1)). */
static void p2p_wait_push(rp_p2p_wait *wt, uint32_t node, sim_time_ps issue)
{
  if (wt->len == wt->cap) {
    rp_p2p_side *n = g_new(rp_p2p_side, 2 * wt->cap);
    for (uint32_t k = 0; k < wt->len; k++)
      n[k] = wt->items[(wt->head + k) % wt->cap];
    if (wt->items != &wt->one)
      g_free(wt->items);
    wt->items = n;
    wt->head = 0;
    wt->cap *= 2;
  }
  wt->items[(wt->head + wt->len) % wt->cap] = (rp_p2p_side){ node, issue };
  wt->len++;
}

static rp_p2p_side p2p_wait_pop(rp_p2p_wait *wt)
{
  g_assert(wt->len > 0);
  rp_p2p_side v = wt->items[wt->head];
  wt->head = (wt->head + 1) % wt->cap;
  wt->len--;
  return v;
}

/* ---- collectives ---- */

static void on_coll_member_done(sim_engine *sim, void *ctx, uint64_t cookie, int member)
{
  rp_replay *rp = ctx;
  rp_coll_inst *ci = g_hash_table_lookup(rp->insts, &cookie);
  g_assert(ci != NULL && member >= 0 && member < ci->n);
  int rank = ci->grp ? ci->grp->ranks[member] : member;
  rp_rank *rs = &rp->ranks[rank];
  uint32_t node = ci->node[member];
  const et_node *n = &rs->g->nodes[node];
  /* Zeroed first, padding included, so records compare bytewise. */
  sim_comm_record rec;
  memset(&rec, 0, sizeof rec);
  rec.rank = rank;
  rec.node_id = n->id;
  rec.op = ci->type;
  rec.node_type = n->type;
  rec.algo = ci->info.algo;
  rec.nccl_algo = (int8_t)ci->info.nccl_algo;
  rec.proto = (int8_t)ci->info.proto;
  rec.group = ci->group;
  rec.n_ranks = ci->n;
  rec.peer = -1;
  rec.bytes = ci->bytes;
  rec.algbw_bytes = ci->info.algbw_bytes;
  rec.busbw_factor = ci->info.busbw_factor;
  rec.issue = ci->issue[member];
  rec.start = ci->start;
  rec.end = sim_now(sim);
  rec.measured = n->duration_ps;
  rs->coll_wait += rec.start - rec.issue;
  rs->colls++;
  rs->coll_last += rec.start == rec.issue;
  sim_comms_add(rp->comms, &rec);
  if (rp->obs && rp->obs->comm_done)
    rp->obs->comm_done(rp->obs->ctx, &rec);
  rp->finish_node(rs, node, rec.issue);
  if (++ci->done == ci->n)
    g_hash_table_remove(rp->insts, &cookie);
}

static void rp_coll_inst_free(gpointer p)
{
  rp_coll_inst *ci = p;
  g_free(ci->issue); /* also holds node[] */
  g_free(ci->splits);
  g_free(ci);
}

static const char *group_label(const rp_replay *rp, uint32_t group)
{
  return et_workload_group_name(rp->w, group);
}

/* Member index of `rank` in group `group`, or -1. */
int rp_member_of(const rp_replay *rp, uint32_t group, int rank)
{
  if (group == ET_GROUP_WORLD)
    return rank;
  gpointer v = g_hash_table_lookup(rp->member_index[group], GINT_TO_POINTER(rank));
  return v ? GPOINTER_TO_INT(v) - 1 : -1;
}

typedef struct {
  const rp_replay *rp;
  const rp_coll_inst *ci;
  et_comm tmp;             /* a translated record (et_workload_traced_comm) */
} member_ctx;

/* coll_member_comm_fn: member k's communication attributes. */
static const et_comm *member_comm(void *ctx, int k)
{
  member_ctx *m = ctx;
  int rank = m->ci->grp ? m->ci->grp->ranks[k] : k;
  const et_graph *g = m->rp->ranks[rank].g;
  uint32_t comm = g->nodes[m->ci->node[k]].comm;
  return comm == ET_NONE ? NULL : et_workload_traced_comm(m->rp->w, rank, comm, &m->tmp);
}

/* The buffer lifecycle of a collective (coll_desc_set_lifecycle), counted
 * in sim_result.lifecycle_known / lifecycle_partial. */
static void lifecycle_of(rp_replay *rp, const rp_coll_inst *ci, coll_desc *d)
{
  member_ctx m = {rp, ci};
  switch (coll_desc_set_lifecycle(d, member_comm, &m, sim_now(rp->sim))) {
  case COLL_LIFECYCLE_KNOWN:
    rp->lifecycle_known++;
    break;
  case COLL_LIFECYCLE_PARTIAL:
    rp->lifecycle_partial++;
    break;
  case COLL_LIFECYCLE_NONE:
    break;
  }
}

/* Rank rs issues collective node i (record c, member index `member`) as
 * call `seq` of its group: it joins (or opens) the instance and, as the
 * last member, starts the collective. */
static void issue_member(rp_rank *rs, uint32_t i, const et_comm *c, int member, uint32_t seq)
{
  rp_replay *rp = rs->rp;
  const et_graph *g = rs->g;
  const et_node *n = &g->nodes[i];
  uint64_t key = inst_key(c->group, seq);
  rp_coll_inst *ci = g_hash_table_lookup(rp->insts, &key);
  if (ci == NULL) {
    ci = g_new0(rp_coll_inst, 1);
    ci->group = c->group;
    ci->seq = seq;
    ci->grp = c->group == ET_GROUP_WORLD ? NULL : et_workload_group(rp->w, c->group);
    ci->n = ci->grp ? ci->grp->n_ranks : rp->w->n_ranks;
    ci->type = c->coll;
    ci->bytes = c->bytes;
    ci->root = c->root;
    ci->two_hop = c->two_hop;
    ci->two_hop_ppm = c->two_hop_ppm;
    ci->first_rank = rs->rank;
    /* One block: the issue times, then the node indices. */
    ci->issue = g_malloc((sizeof(sim_time_ps) + sizeof(uint32_t)) * (size_t)ci->n);
    ci->node = (uint32_t *)(ci->issue + ci->n);
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
    rp_fail(rp, g_error_new(WISP_ERROR, WISP_ERROR_INVALID,
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
  ci->issue[member] = sim_now(rp->sim);
  if (ci->splits && c->split != ET_NONE)
    memcpy(ci->splits + (size_t)member * ci->n, g->splits + c->split, sizeof(uint64_t) * ci->n);
  if (++ci->arrived < ci->n) {
    rp->comm_wait(rs, 1, 0);
    return;
  }
  /* Every member has issued: the collective starts now; the others stop
   * waiting for their peers (rp->comm_wait). */
  for (int k = 0; k < ci->n; k++)
    if (k != member)
      rp->comm_wait(&rp->ranks[ci->grp ? ci->grp->ranks[k] : k], -1, 0);
  /* The collective starts now.  A rooted
   * collective whose trace did not record the root (Kineto rarely does)
   * runs with the group's first member as root; the run counts these. */
  ci->start = sim_now(rp->sim);
  if (et_coll_rooted(ci->type) && ci->root < 0) {
    ci->root = ci->grp ? ci->grp->ranks[0] : 0;
    rp->assumed_roots++;
  }
  coll_desc d = {
    .type = ci->type, .bytes = ci->bytes,
    .ranks = ci->grp ? ci->grp->ranks : rp->world_ranks, .n_ranks = ci->n,
    .root = ci->root, .splits = ci->splits,
    .two_hop = ci->splits ? ci->two_hop : COLL_TWO_HOP_NONE, .two_hop_ppm = ci->two_hop_ppm,
  };
  lifecycle_of(rp, ci, &d);
  if (G_UNLIKELY(rp->crit != NULL))
    sim_crit_rec_comm_start(rp->crit, ci->n, d.ranks, ci->node, ci->start, ci->seq);
  GError *e = NULL;
  if (!coll_desc_check(net_get_topo(rp->net), &d, &e)) {
    rp_fail(rp, g_error_new(WISP_ERROR, WISP_ERROR_INVALID, "%s #%u of group '%s' (rank %d node %" G_GUINT64_FORMAT
                         "): %s", et_coll_type_name(ci->type), seq, group_label(rp, c->group), rs->rank,
                         n->id, e->message));
    g_error_free(e);
    return;
  }
  coll_start(rp->coll, &d, on_coll_member_done, rp, key, &ci->info);
}

/* The held-call key of ordinal `ord` in membership slot `slot`. */
static uint64_t held_key(uint32_t slot, uint32_t ord)
{
  return ((uint64_t)slot << 32) | ord;
}

/* Rank rs's collective node i is ready.  It issues as the call its place
 * in the rank's program order names (rp_order.c), when every earlier call
 * of its group on this rank has issued; else it is held until they have
 * (the communicator's order: a real rank cannot call them out of order),
 * and counted.  Issuing a call releases the held one after it, in a loop
 * (no recursion).  O(log collectives) plus issue_member's work per call. */
void rp_issue_collective(rp_rank *rs, uint32_t i)
{
  rp_replay *rp = rs->rp;
  for (;;) {
    const et_node *n = &rs->g->nodes[i];
    et_comm tc; /* a scaled workload's record as this rank issues it (chakra/et_view.h) */
    const et_comm *c = et_workload_comm(rp->w, rs->rank, n->comm, &tc);
    int member = rp_member_of(rp, c->group, rs->rank);
    if (member < 0) {
      rp_fail(rp, g_error_new(WISP_ERROR, WISP_ERROR_INVALID,
                              "rank %d node %" G_GUINT64_FORMAT " (%s) issues %s on group '%s', "
                              "but rank %d is not a member of that group; fix the node's pg_name or comm_group.json",
                              rs->rank, n->id, et_node_name(rs->g, i), et_coll_type_name(c->coll),
                              group_label(rp, c->group), rs->rank));
      return;
    }
    uint32_t gslot = c->group == ET_GROUP_WORLD ? 0 : c->group + 1;
    uint32_t slot = rp->seq_base[gslot] + (uint32_t)member;
    uint32_t ord = rp_order_of(rs->order, i);
    if (ord > rp->seq[slot]) {
      uint64_t *k = g_new(uint64_t, 1);
      *k = held_key(slot, ord);
      g_hash_table_insert(rp->held, k, GUINT_TO_POINTER(i + 1));
      rp->held_total++;
      rp->comm_wait(rs, 0, 1);
      return;
    }
    if (ord < rp->seq[slot]) { /* two of the graph's groups became one on this rank */
      rp_fail(rp, g_error_new(WISP_ERROR, WISP_ERROR_INVALID,
                              "rank %d node %" G_GUINT64_FORMAT " (%s): call #%u of group '%s' was already issued; "
                              "the rank's groups do not map one to one onto the traced ones",
                              rs->rank, n->id, et_node_name(rs->g, i), ord, group_label(rp, c->group)));
      return;
    }
    rp->seq[slot]++;
    issue_member(rs, i, c, member, ord);
    uint64_t next = held_key(slot, rp->seq[slot]);
    gpointer v;
    if (rp->error != NULL || !g_hash_table_lookup_extended(rp->held, &next, NULL, &v))
      return;
    g_hash_table_remove(rp->held, &next);
    rp->comm_wait(rs, 0, -1);
    uint32_t prev = i;
    i = GPOINTER_TO_UINT(v) - 1;
    if (G_UNLIKELY(rp->crit != NULL)) /* it issues now, when `prev` did */
      sim_crit_rec_bind_like(rp->crit, rs->rank, i, prev);
  }
}

/* ---- point to point ---- */

/* Side k (0 the sender, 1 the receiver) of point-to-point op `cookie` has
 * finished now: its record, then its node. */
static void p2p_side_done(rp_replay *rp, const rp_p2p_op *op, int k)
{
  int ranks[2] = {op->src, op->dst};
  uint32_t nodes[2] = {op->send_node, op->recv_node};
  rp_rank *rs = &rp->ranks[ranks[k]];
  const et_node *n = &rs->g->nodes[nodes[k]];
  /* Zeroed first, padding included, so records compare bytewise. */
  sim_comm_record rec;
  memset(&rec, 0, sizeof rec);
  rec.rank = ranks[k];
  rec.node_id = n->id;
  rec.op = ET_COLL_NONE;
  rec.node_type = n->type;
  rec.algo = COLL_ALGO_DIRECT;
  rec.nccl_algo = -1;
  rec.proto = -1;
  rec.group = ET_GROUP_WORLD;
  rec.n_ranks = 2;
  rec.peer = ranks[1 - k];
  rec.bytes = op->bytes;
  rec.algbw_bytes = op->bytes;
  rec.busbw_factor = 1.0;
  rec.issue = k == 0 ? op->send_issue : op->recv_issue;
  rec.start = op->start;
  rec.end = sim_now(rp->sim);
  rec.measured = n->duration_ps;
  sim_comms_add(rp->comms, &rec);
  if (rp->obs && rp->obs->comm_done)
    rp->obs->comm_done(rp->obs->ctx, &rec);
  rp->finish_node(rs, nodes[k], rec.issue);
}

/* Returns slot `cookie` of the operation pool to the free list. */
static void p2p_op_release(rp_replay *rp, uint64_t cookie)
{
  g_array_index(rp->p2p_ops, rp_p2p_op, cookie).next_free = rp->p2p_free;
  rp->p2p_free = (uint32_t)cookie;
}

/* nccl: the transfer arrived; both sides finish now.  The operation is
 * copied out and its slot freed first: finishing a side starts its
 * children, which may issue new operations into the pool. */
static void on_p2p_done(sim_engine *sim, void *ctx, uint64_t cookie)
{
  (void)sim;
  rp_replay *rp = ctx;
  rp_p2p_op op = g_array_index(rp->p2p_ops, rp_p2p_op, cookie);
  p2p_op_release(rp, cookie);
  for (int k = 0; k < 2; k++)
    p2p_side_done(rp, &op, k);
}

/* Library (coll_p2p_start): each side finishes on its own. */
static void on_p2p_member_done(sim_engine *sim, void *ctx, uint64_t cookie, int member)
{
  (void)sim;
  rp_replay *rp = ctx;
  rp_p2p_op *slot = &g_array_index(rp->p2p_ops, rp_p2p_op, cookie);
  rp_p2p_op op = *slot;
  if (++slot->sides_done == 2)
    p2p_op_release(rp, cookie);
  p2p_side_done(rp, &op, member);
}

/* Takes a free pool slot (or appends one) for an operation; returns its index. */
static uint32_t p2p_op_alloc(rp_replay *rp)
{
  if (rp->p2p_free != ET_NONE) {
    uint32_t k = rp->p2p_free;
    rp->p2p_free = g_array_index(rp->p2p_ops, rp_p2p_op, k).next_free;
    return k;
  }
  g_array_set_size(rp->p2p_ops, rp->p2p_ops->len + 1);
  return rp->p2p_ops->len - 1;
}

/* Starts the data transfer of a matched pair: through the communication
 * library when it runs point-to-point itself (registration, engine,
 * sigma_sig; doc/libraries.md §2), else straight on the network.  The
 * buffer lifecycle comes from coll_p2p_lifecycle (collectives/coll.h). */
static void p2p_transfer(rp_replay *rp, uint32_t cookie)
{
  const rp_p2p_op *op = &g_array_index(rp->p2p_ops, rp_p2p_op, cookie);
  if (G_UNLIKELY(rp->p2p_lib)) {
    const et_graph *sg = rp->ranks[op->src].g, *rg = rp->ranks[op->dst].g;
    const et_comm *sc = &sg->comms[sg->nodes[op->send_node].comm];
    const et_comm *rc = &rg->comms[rg->nodes[op->recv_node].comm];
    uint64_t buf;
    sim_time_ps at;
    gboolean known = coll_p2p_lifecycle(sc, rc, op->start, &buf, &at);
    gboolean ran = coll_p2p_start(rp->coll, op->src, op->dst, op->bytes, buf, known, at, on_p2p_member_done, rp,
                                  cookie, NULL);
    g_assert(ran);
  } else
    net_send(rp->net, op->src, op->dst, op->bytes, on_p2p_done, rp, cookie);
}

void rp_issue_p2p(rp_rank *rs, uint32_t i)
{
  rp_replay *rp = rs->rp;
  const et_node *n = &rs->g->nodes[i];
  et_comm tc; /* peers translated for a scaled workload's replica (chakra/et_view.h) */
  const et_comm *c = et_workload_comm(rp->w, rs->rank, n->comm, &tc);
  gboolean is_send = n->type == ET_NODE_COMM_SEND;
  int src = is_send ? rs->rank : c->src;
  int dst = is_send ? c->dst : rs->rank;
  if (src < 0 || src >= rp->w->n_ranks || dst < 0 || dst >= rp->w->n_ranks) {
    rp_fail(rp, g_error_new(WISP_ERROR, WISP_ERROR_INVALID,
                            "rank %d node %" G_GUINT64_FORMAT " (%s): peer rank %d is outside the workload's %d ranks",
                            rs->rank, n->id, et_node_name(rs->g, i), is_send ? dst : src, rp->w->n_ranks));
    return;
  }
  /* The partner's side waits under the same transfer with the other flag. */
  rp_p2p_key partner = {src, dst, c->tag, !is_send};
  rp_p2p_wait *wt = g_hash_table_lookup(rp->p2p_wait, &partner);
  if (wt == NULL) {
    rp_p2p_key mine = {src, dst, c->tag, is_send};
    rp_p2p_wait *mw = g_hash_table_lookup(rp->p2p_wait, &mine);
    if (mw == NULL) {
      mw = g_new0(rp_p2p_wait, 1);
      mw->key = mine;
      mw->items = &mw->one;
      mw->cap = 1;
      g_hash_table_insert(rp->p2p_wait, &mw->key, mw);
    }
    p2p_wait_push(mw, i, sim_now(rp->sim));
    rp->comm_wait(rs, 0, 1);
    return;
  }
  rp_p2p_side other = p2p_wait_pop(wt);
  rp->comm_wait(&rp->ranks[is_send ? dst : src], 0, -1);
  if (wt->len == 0)
    g_hash_table_remove(rp->p2p_wait, &partner);
  uint32_t cookie = p2p_op_alloc(rp);
  rp_p2p_op *op = &g_array_index(rp->p2p_ops, rp_p2p_op, cookie);
  sim_time_ps now = sim_now(rp->sim);
  *op = (rp_p2p_op){ .src = src, .dst = dst, .send_node = is_send ? i : other.node,
                     .recv_node = is_send ? other.node : i, .send_issue = is_send ? now : other.issue,
                     .recv_issue = is_send ? other.issue : now };
  /* The sender's size is what moves. */
  const et_graph *sg = rp->ranks[src].g;
  op->bytes = sg->comms[sg->nodes[op->send_node].comm].bytes;
  op->start = now;
  if (G_UNLIKELY(rp->crit != NULL))
    sim_crit_rec_comm_start(rp->crit, 2, (const int[]){src, dst}, (const uint32_t[]){op->send_node, op->recv_node},
                            op->start, ET_NONE);
  p2p_transfer(rp, cookie);
}

/* ---- tables ---- */

void rp_match_init(rp_replay *rp)
{
  rp->insts = g_hash_table_new_full(u64_hash, u64_equal, g_free, rp_coll_inst_free);
  rp->held = g_hash_table_new_full(u64_hash, u64_equal, g_free, NULL);
  rp->p2p_wait = g_hash_table_new_full(p2p_key_hash, p2p_key_equal, NULL, p2p_wait_free);
  rp->p2p_ops = g_array_new(FALSE, FALSE, sizeof(rp_p2p_op));
  rp->p2p_free = ET_NONE;
}

void rp_match_free(rp_replay *rp)
{
  if (rp->insts)
    g_hash_table_destroy(rp->insts);
  if (rp->held)
    g_hash_table_destroy(rp->held);
  if (rp->p2p_wait)
    g_hash_table_destroy(rp->p2p_wait);
  if (rp->p2p_ops)
    g_array_free(rp->p2p_ops, TRUE);
}

/* ---- what is still waiting (deadlock report) ---- */

static gint p2p_wait_cmp(gconstpointer a, gconstpointer b)
{
  const rp_p2p_key *x = *(rp_p2p_key *const *)a, *y = *(rp_p2p_key *const *)b;
  if (x->src != y->src)
    return x->src < y->src ? -1 : 1;
  if (x->dst != y->dst)
    return x->dst < y->dst ? -1 : 1;
  if (x->tag != y->tag)
    return x->tag < y->tag ? -1 : 1;
  return (int)!x->send - (int)!y->send;
}

static gint u32_cmp(gconstpointer a, gconstpointer b)
{
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* Appends what rank r holds behind an earlier call of its group (lowest
 * node first), as rp_match_describe_waits.  O(held log held). */
static gboolean describe_held(const rp_replay *rp, int r, GString *s, int *lines, int max_lines)
{
  GArray *nodes = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, rp->held);
  while (g_hash_table_iter_next(&it, &k, &v)) {
    uint32_t slot = (uint32_t)(*(const uint64_t *)k >> 32), node = GPOINTER_TO_UINT(v) - 1;
    /* The slot is the rank's membership in some group: match by the node's own group. */
    const rp_rank *rs = &rp->ranks[r];
    et_comm tc;
    if (node >= rs->g->n_nodes || rs->g->nodes[node].type != ET_NODE_COMM_COLL)
      continue;
    const et_comm *c = et_workload_comm(rp->w, r, rs->g->nodes[node].comm, &tc);
    int m = rp_member_of(rp, c->group, r);
    if (m >= 0 && rp->seq_base[c->group == ET_GROUP_WORLD ? 0 : c->group + 1] + (uint32_t)m == slot)
      g_array_append_val(nodes, node);
  }
  g_array_sort(nodes, u32_cmp);
  const rp_rank *rs = &rp->ranks[r];
  for (guint x = 0; x < nodes->len && *lines < max_lines; x++) {
    uint32_t node = g_array_index(nodes, uint32_t, x);
    et_comm tc;
    const et_comm *c = et_workload_comm(rp->w, r, rs->g->nodes[node].comm, &tc);
    g_string_append_printf(s, "\n  rank %d holds %s node %" G_GUINT64_FORMAT " (call #%u of group %s) until its "
                           "earlier calls of that group issue", r, et_coll_type_name(c->coll), rs->g->nodes[node].id,
                           rp_order_of(rs->order, node), group_label(rp, c->group));
    (*lines)++;
  }
  gboolean said = nodes->len > 0;
  g_array_free(nodes, TRUE);
  return said;
}

gboolean rp_match_describe_waits(const rp_replay *rp, int r, GString *s, int *lines, int max_lines)
{
  gboolean said = FALSE;
  /* Collectives this rank issued whose other members did not. */
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, rp->insts);
  GPtrArray *mine = g_ptr_array_new();
  while (g_hash_table_iter_next(&it, &k, &v)) {
    rp_coll_inst *ci = v;
    int m = rp_member_of(rp, ci->group, r);
    if (m >= 0 && ci->node[m] != ET_NONE && ci->arrived < ci->n)
      g_ptr_array_add(mine, ci);
  }
  for (guint x = 0; x < mine->len; x++) {
    rp_coll_inst *ci = mine->pdata[x];
    for (int m = 0; m < ci->n && *lines < max_lines; m++) {
      if (ci->node[m] != ET_NONE)
        continue;
      int other = ci->grp ? ci->grp->ranks[m] : m;
      g_string_append_printf(s, "\n  rank %d waits for rank %d to issue %s #%u of group %s", r, other,
                             et_coll_type_name(ci->type), ci->seq, group_label(rp, ci->group));
      (*lines)++;
      said = TRUE;
      break; /* one missing member per instance is enough */
    }
  }
  g_ptr_array_set_size(mine, 0);
  said = describe_held(rp, r, s, lines, max_lines) || said;
  /* Point-to-point sides waiting for their partner, in key order. */
  g_hash_table_iter_init(&it, rp->p2p_wait);
  while (g_hash_table_iter_next(&it, &k, &v)) {
    const rp_p2p_key *key = k;
    if ((key->send && key->src == r) || (!key->send && key->dst == r))
      g_ptr_array_add(mine, k);
  }
  g_ptr_array_sort(mine, p2p_wait_cmp);
  for (guint x = 0; x < mine->len && *lines < max_lines; x++) {
    const rp_p2p_key *key = mine->pdata[x];
    g_string_append_printf(s, "\n  rank %d waits for rank %d to %s (tag %d)", r, key->send ? key->dst : key->src,
                           key->send ? "post the matching receive" : "send", key->tag);
    (*lines)++;
    said = TRUE;
  }
  g_ptr_array_free(mine, TRUE);
  return said;
}
