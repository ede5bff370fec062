/* et_astra.c: the ASTRA-sim rewrite of a workload (see et_astra.h for the
 * model and its limits).
 */
#include "config.h"
#include "chakra/et_view.h"

#include "chakra/et_astra.h"

#include <stdlib.h>
#include <string.h>

enum { CLS_COMP = 0, CLS_COMM = 1, CLS_NONE = 2, CLS_REMOVED = 3 };

/* One element of a rank's compute or communication chain: a kept node,
 * preceded by the gap node written in front of it when gap > 0. */
typedef struct {
  uint32_t node;
  sim_time_ps start;
} chain_ent;

static int cmp_chain(const void *a, const void *b)
{
  const chain_ent *x = a, *y = b;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return x->node < y->node ? -1 : x->node > y->node;
}

/* Concurrent time of a chain sorted by start: sum of durations minus the
 * length of the union of [start, end) (ts/te: the baseline times).  O(n). */
static sim_time_ps serialised_ps(const GArray *chain, const sim_time_ps *ts, const sim_time_ps *te)
{
  sim_time_ps sum = 0, uni = 0, cur_s = 0, cur_e = 0;
  gboolean open = FALSE;
  for (guint k = 0; k < chain->len; k++) {
    uint32_t i = g_array_index(chain, chain_ent, k).node;
    sim_time_ps s = ts[i], e = te[i];
    sum += e - s;
    if (open && s <= cur_e) {
      cur_e = MAX(cur_e, e);
    } else {
      if (open)
        uni += cur_e - cur_s;
      cur_s = s;
      cur_e = e;
      open = TRUE;
    }
  }
  if (open)
    uni += cur_e - cur_s;
  return sum - uni;
}

/* Rounds d + *carry to whole microseconds (never below 0) and keeps the
 * difference in *carry, so the rounding error does not accumulate along a
 * chain. */
static sim_time_ps round_carry(sim_time_ps d, sim_time_ps *carry)
{
  sim_time_ps want = d + *carry;
  sim_time_ps w = want <= 0 ? 0 : (want + SIM_PS_PER_US / 2) / SIM_PS_PER_US * SIM_PS_PER_US;
  *carry = want - w;
  return w;
}

/* Whether group gi of w is every rank in rank order (ASTRA-sim's default
 * communicator). */
static gboolean is_world(const et_workload *w, uint32_t gi)
{
  if (gi == ET_GROUP_WORLD)
    return TRUE;
  const et_group *grp = et_workload_group(w, gi);
  if (grp->n_ranks != w->n_ranks)
    return FALSE;
  for (int k = 0; k < grp->n_ranks; k++)
    if (grp->ranks[k] != k)
      return FALSE;
  return TRUE;
}

typedef struct {
  const et_workload *w;
  et_workload *out;
  et_astra_report *rep;
} ctx;

/* One rank's rewrite in progress: the graph, each node's class, the
 * baseline times, the nearest kept ancestors, the two chains and the gaps
 * and durations to write.  Every array has one entry per node (at least
 * one, so empty graphs allocate). */
typedef struct {
  const et_graph *g;
  int rank;                     /* the rank g is replayed for (records via et_workload_comm) */
  uint32_t n;
  uint8_t *cls;
  uint64_t max_id;
  sim_time_ps window_end, kept_end, tail_w;
  uint32_t *order;              /* topological order (Kahn) */
  sim_time_ps *ts, *te;         /* baseline start and end */
  GArray **eff;                 /* nearest kept ancestors (uint32_t) */
  GArray *chain[2];             /* compute and communication chains (chain_ent) */
  uint32_t *chain_prev;         /* predecessor on the node's chain, or ET_NONE */
  sim_time_ps *gap, *ready, *gap_w, *dur;
  uint32_t *bind;               /* the ancestor the gap is measured from, or ET_NONE */
} xf_rank;

/* Topological order (Kahn) and the baseline times: every node as soon as
 * its parents end, at its duration (wisp's replay of the graph without
 * slot limits, which for graphs from traces is the measured timeline as
 * the graph serialises it).  O(nodes + edges). */
static void baseline_times(xf_rank *s)
{
  const et_graph *g = s->g;
  uint32_t n = s->n;
  uint32_t *indeg = g_new(uint32_t, n ? n : 1);
  s->order = g_new(uint32_t, n ? n : 1);
  uint32_t head = 0, tail = 0;
  for (uint32_t i = 0; i < n; i++)
    if ((indeg[i] = et_node_n_parents(g, i)) == 0)
      s->order[tail++] = i;
  while (head < tail) {
    uint32_t i = s->order[head++];
    for (uint32_t k = g->nodes[i].children; k < g->nodes[i + 1].children; k++)
      if (--indeg[g->child_index[k]] == 0)
        s->order[tail++] = g->child_index[k];
  }
  g_assert(tail == n); /* the builder rejected cycles */
  g_free(indeg);
  s->ts = g_new0(sim_time_ps, n ? n : 1);
  s->te = g_new0(sim_time_ps, n ? n : 1);
  for (uint32_t o = 0; o < n; o++) {
    uint32_t i = s->order[o];
    for (uint32_t k = g->nodes[i].parents; k < g->nodes[i + 1].parents; k++)
      s->ts[i] = MAX(s->ts[i], s->te[ET_EDGE_INDEX(g->parent_edges[k])]);
    s->te[i] = s->ts[i] + g->nodes[i].duration_ps;
    s->window_end = MAX(s->window_end, s->te[i]);
  }
}

/* Each node's class (removed: delays and CPU ops; compute; communication;
 * other kept nodes), counted in the report.  O(nodes). */
static void classify(xf_rank *s, et_astra_report *rep)
{
  for (uint32_t i = 0; i < s->n; i++) {
    const et_node *nd = &s->g->nodes[i];
    s->max_id = MAX(s->max_id, nd->id);
    if (nd->flags & ET_FLAG_DELAY) {
      s->cls[i] = CLS_REMOVED;
      rep->removed_gap_nodes++;
    } else if (nd->flags & ET_FLAG_CPU_OP) {
      s->cls[i] = CLS_REMOVED;
      rep->removed_cpu_nodes++;
      rep->removed_cpu_ps += nd->duration_ps;
    } else if (nd->type == ET_NODE_COMP) {
      s->cls[i] = CLS_COMP;
      s->kept_end = MAX(s->kept_end, s->te[i]);
    } else if (nd->type == ET_NODE_COMM_COLL || nd->type == ET_NODE_COMM_SEND || (nd->flags & ET_FLAG_REPLAY)) {
      s->cls[i] = CLS_COMM;
      s->kept_end = MAX(s->kept_end, s->te[i]);
    } else {
      s->cls[i] = CLS_NONE;
      s->kept_end = MAX(s->kept_end, s->te[i]);
    }
  }
}

/* The kept ancestors of every node through removed ones: eff[i] lists
 * node i's nearest kept ancestors, each once.  O(nodes + edges x the
 * ancestors listed per removed parent). */
static void kept_ancestors(xf_rank *s)
{
  const et_graph *g = s->g;
  uint32_t n = s->n;
  s->eff = g_new0(GArray *, n ? n : 1);
  uint32_t *stamp = g_new(uint32_t, n ? n : 1);
  memset(stamp, 0xff, sizeof(uint32_t) * (n ? n : 1));
  for (uint32_t o = 0; o < n; o++) {
    uint32_t i = s->order[o];
    s->eff[i] = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    for (uint32_t k = g->nodes[i].parents; k < g->nodes[i + 1].parents; k++) {
      uint32_t p = ET_EDGE_INDEX(g->parent_edges[k]);
      if (s->cls[p] != CLS_REMOVED) {
        if (stamp[p] != i) {
          stamp[p] = i;
          g_array_append_val(s->eff[i], p);
        }
      } else {
        for (guint q = 0; q < s->eff[p]->len; q++) {
          uint32_t a = g_array_index(s->eff[p], uint32_t, q);
          if (stamp[a] != i) {
            stamp[a] = i;
            g_array_append_val(s->eff[i], a);
          }
        }
      }
    }
  }
  g_free(stamp);
}

/* The compute and communication chains in measured start order, each
 * node's predecessor on its chain, and the chains' serialised time in the
 * report (rank r).  O(nodes log nodes). */
static void build_chains(xf_rank *s, et_astra_report *rep, int r)
{
  uint32_t n = s->n;
  s->chain[0] = g_array_new(FALSE, FALSE, sizeof(chain_ent));
  s->chain[1] = g_array_new(FALSE, FALSE, sizeof(chain_ent));
  for (uint32_t i = 0; i < n; i++)
    if (s->cls[i] == CLS_COMP || s->cls[i] == CLS_COMM) {
      chain_ent e = {i, s->ts[i]};
      g_array_append_val(s->chain[s->cls[i]], e);
    }
  s->chain_prev = g_new(uint32_t, n ? n : 1);
  for (uint32_t i = 0; i < n; i++)
    s->chain_prev[i] = ET_NONE;
  for (int c = 0; c < 2; c++) {
    g_array_sort(s->chain[c], cmp_chain);
    for (guint k = 1; k < s->chain[c]->len; k++)
      s->chain_prev[g_array_index(s->chain[c], chain_ent, k).node] = g_array_index(s->chain[c], chain_ent, k - 1).node;
  }
  sim_time_ps ser[2] = {serialised_ps(s->chain[0], s->ts, s->te), serialised_ps(s->chain[1], s->ts, s->te)};
  if (ser[0] > rep->comp_serialised_max_ps || rep->comp_serialised_rank < 0) {
    rep->comp_serialised_max_ps = ser[0];
    rep->comp_serialised_rank = r;
  }
  if (ser[1] > rep->comm_serialised_max_ps || rep->comm_serialised_rank < 0) {
    rep->comm_serialised_max_ps = ser[1];
    rep->comm_serialised_rank = r;
  }
  rep->comp_serialised_sum_ps += ser[0];
  rep->comm_serialised_sum_ps += ser[1];
  rep->max_measured_slots = MAX(rep->max_measured_slots, s->g->compute_slots);
}

/* Gap in front of each kept node: measured start minus the latest
 * measured end of its kept ancestors and chain predecessor; bind is the
 * first of the latest (graph parents first, then the chain).  O(nodes +
 * kept ancestors). */
static void node_gaps(xf_rank *s)
{
  uint32_t n = s->n;
  s->gap = g_new0(sim_time_ps, n ? n : 1);
  s->ready = g_new0(sim_time_ps, n ? n : 1);
  s->bind = g_new(uint32_t, n ? n : 1);
  for (uint32_t i = 0; i < n; i++) {
    s->bind[i] = ET_NONE;
    if (s->cls[i] == CLS_REMOVED)
      continue;
    sim_time_ps rd = 0;
    for (guint q = 0; q < s->eff[i]->len; q++) {
      uint32_t p = g_array_index(s->eff[i], uint32_t, q);
      sim_time_ps e = s->te[p];
      if (s->bind[i] == ET_NONE || e > rd) {
        s->bind[i] = p;
        rd = e;
      }
    }
    if (s->chain_prev[i] != ET_NONE) {
      uint32_t p = s->chain_prev[i];
      sim_time_ps e = s->te[p];
      if (s->bind[i] == ET_NONE || e > rd) {
        s->bind[i] = p;
        rd = e;
      }
    }
    s->ready[i] = rd;
    if (s->ts[i] > rd)
      s->gap[i] = s->ts[i] - rd;
  }
}

/* Durations written: compute chain (gaps and nodes) and the communication
 * chain's gaps, rounded with the error carried along; the step tail.  The
 * largest rounding difference goes to the report.  O(nodes). */
static void written_durations(xf_rank *s, et_astra_report *rep)
{
  const et_graph *g = s->g;
  uint32_t n = s->n;
  s->dur = g_new(sim_time_ps, n ? n : 1);
  s->gap_w = g_new0(sim_time_ps, n ? n : 1);
  for (uint32_t i = 0; i < n; i++)
    s->dur[i] = g->nodes[i].duration_ps;
  sim_time_ps carry = 0, measured_total = 0, written_total = 0;
  for (guint k = 0; k < s->chain[0]->len; k++) {
    uint32_t i = g_array_index(s->chain[0], chain_ent, k).node;
    s->gap_w[i] = round_carry(s->gap[i], &carry);
    s->dur[i] = round_carry(g->nodes[i].duration_ps, &carry);
    measured_total += s->gap[i] + g->nodes[i].duration_ps;
    written_total += s->gap_w[i] + s->dur[i];
  }
  sim_time_ps tail_ps = s->window_end > s->kept_end ? s->window_end - s->kept_end : 0;
  s->tail_w = round_carry(tail_ps, &carry);
  measured_total += tail_ps;
  written_total += s->tail_w;
  sim_time_ps diff = written_total - measured_total;
  rep->rounding_max_ps = MAX(rep->rounding_max_ps, diff < 0 ? -diff : diff);
  carry = 0;
  for (guint k = 0; k < s->chain[1]->len; k++) {
    uint32_t i = g_array_index(s->chain[1], chain_ent, k).node;
    s->gap_w[i] = round_carry(s->gap[i], &carry);
    if (g->nodes[i].flags & ET_FLAG_REPLAY) /* replayed for its duration by both tools */
      s->dur[i] = round_carry(g->nodes[i].duration_ps, &carry);
  }
}

/* Adds the gap node in front of kept node i (id gap_id): a compute node on
 * the compute chain, a replayed delay on the communication chain, after
 * its binding ancestor and its chain predecessor. */
static void add_gap_node(const xf_rank *s, et_builder *b, uint32_t i, uint64_t gap_id, et_astra_report *rep)
{
  const et_graph *g = s->g;
  uint32_t gn;
  if (s->cls[i] == CLS_COMP) {
    gn = et_builder_add_node(b, gap_id, ET_NODE_COMP, "idle_gap", s->gap_w[i], 0);
    rep->comp_gaps++;
  } else {
    gn = et_builder_add_node(b, gap_id, ET_NODE_COMM_COLL, "idle_gap", s->gap_w[i], ET_FLAG_REPLAY | ET_FLAG_DELAY);
    et_comm gc = {.bytes = 1, .group = ET_GROUP_WORLD, .pg_name = ET_NONE, .split = ET_NONE, .src = -1,
                  .dst = -1, .tag = -1, .root = -1, .coll = ET_COLL_BROADCAST};
    et_builder_set_comm(b, gn, &gc, NULL, NULL, 0);
    rep->comm_gaps++;
  }
  et_builder_set_start(b, gn, s->ready[i]);
  if (s->bind[i] != ET_NONE)
    et_builder_add_dep(b, gn, g->nodes[s->bind[i]].id, TRUE, FALSE);
  if (s->chain_prev[i] != ET_NONE && s->chain_prev[i] != s->bind[i])
    et_builder_add_dep(b, gn, g->nodes[s->chain_prev[i]].id, TRUE, FALSE);
}

/* The communication of kept node x (graph node i): a replayed node as a
 * one-byte broadcast, otherwise its own, with its group added to the
 * output workload and counted (world or group collective). */
static void copy_comm(const xf_rank *s, ctx *cx, et_builder *b, uint32_t i, uint32_t x, gboolean replay)
{
  const et_graph *g = s->g;
  const et_node *nd = &g->nodes[i];
  et_astra_report *rep = cx->rep;
  et_comm tc;
  const et_comm *c = nd->comm == ET_NONE ? NULL : et_workload_traced_comm(cx->w, s->rank, nd->comm, &tc);
  if (replay) {
    et_comm rc = {.bytes = 1, .group = ET_GROUP_WORLD, .pg_name = ET_NONE, .split = ET_NONE, .src = -1,
                  .dst = -1, .tag = -1, .root = -1, .coll = ET_COLL_BROADCAST};
    et_builder_set_comm(b, x, &rc, NULL, NULL, 0);
    rep->replay_comm_as_broadcast++;
  } else if (c != NULL) {
    const char *pg = NULL;
    if (nd->type == ET_NODE_COMM_COLL) {
      if (is_world(cx->w, c->group)) {
        rep->world_collectives++;
      } else {
        const et_group *grp = et_workload_group(cx->w, c->group);
        pg = grp->name;
        et_workload_add_group(cx->out, grp->name, grp->desc, grp->ranks, grp->n_ranks);
        rep->group_collectives++;
      }
    } else if (c->group != ET_GROUP_WORLD) {
      const et_group *grp = et_workload_group(cx->w, c->group);
      pg = grp->name;
      et_workload_add_group(cx->out, grp->name, grp->desc, grp->ranks, grp->n_ranks);
    }
    et_comm cc = *c;
    const uint64_t *splits = NULL;
    uint32_t n_splits = 0;
    if (c->coll == ET_COLL_ALL_TO_ALLV && c->split != ET_NONE) {
      splits = g->splits + c->split;
      n_splits = g->split_width;
    }
    et_builder_set_comm(b, x, &cc, pg, splits, n_splits);
    if (c->buffer != 0 || c->has_alloc)
      et_builder_set_buffer(b, x, c->buffer, c->has_alloc, c->alloc_ps);
  }
}

/* Writes kept node i, preceded by its gap node when it has one (ids from
 * *next_id), with its dependencies: the gap node, or the binding ancestor
 * and chain predecessor, and every other nearest kept ancestor. */
static void emit_node(const xf_rank *s, ctx *cx, et_builder *b, uint32_t i, uint64_t *next_id)
{
  const et_graph *g = s->g;
  const et_node *nd = &g->nodes[i];
  et_astra_report *rep = cx->rep;
  uint64_t gap_id = 0;
  gboolean has_gap = s->gap_w[i] > 0 && s->cls[i] != CLS_NONE;
  if (s->gap[i] > 0 && s->cls[i] == CLS_NONE) {
    rep->dropped_recv_gaps++;
    rep->dropped_recv_gap_ps += s->gap[i];
  }
  if (has_gap) {
    gap_id = (*next_id)++;
    add_gap_node(s, b, i, gap_id, rep);
  }
  gboolean replay = nd->type != ET_NODE_COMP && (nd->flags & ET_FLAG_REPLAY);
  uint32_t x = et_builder_add_node(b, nd->id, replay ? ET_NODE_COMM_COLL : (et_node_type)nd->type,
                                   et_node_name(g, i), s->dur[i], replay ? ET_FLAG_REPLAY : 0);
  et_builder_set_start(b, x, (nd->flags & ET_FLAG_HAS_START) ? nd->start_ps : s->ts[i]);
  copy_comm(s, cx, b, i, x, replay);
  const et_comp_attr *ca = g->n_comp_attrs ? et_graph_comp_attr(g, i) : NULL;
  if (ca && nd->type == ET_NODE_COMP)
    et_builder_set_comp_attrs(b, x, ca->num_ops, ca->has_tensor_size, ca->tensor_size);
  et_builder_set_module(b, x, et_graph_module(g, i));
  uint32_t skip_a = has_gap ? s->bind[i] : ET_NONE, skip_b = has_gap ? s->chain_prev[i] : ET_NONE;
  if (has_gap)
    et_builder_add_dep(b, x, gap_id, TRUE, FALSE);
  for (guint q = 0; q < s->eff[i]->len; q++) {
    uint32_t p = g_array_index(s->eff[i], uint32_t, q);
    if (p != skip_a && p != skip_b)
      et_builder_add_dep(b, x, g->nodes[p].id, TRUE, FALSE);
  }
  if (s->chain_prev[i] != ET_NONE && !has_gap) {
    gboolean listed = FALSE;
    for (guint q = 0; q < s->eff[i]->len && !listed; q++)
      listed = g_array_index(s->eff[i], uint32_t, q) == s->chain_prev[i];
    if (!listed)
      et_builder_add_dep(b, x, g->nodes[s->chain_prev[i]].id, TRUE, FALSE);
  }
}

/* The step tail (id tail_id): after every kept node without kept children
 * and after the end of the compute chain. */
static void add_step_tail(const xf_rank *s, et_builder *b, uint64_t tail_id, et_astra_report *rep)
{
  uint32_t n = s->n;
  uint32_t t = et_builder_add_node(b, tail_id, ET_NODE_COMP, "idle_step_tail", s->tail_w, 0);
  et_builder_set_start(b, t, s->kept_end);
  rep->comp_gaps++;
  gboolean *has_kept_child = g_new0(gboolean, n ? n : 1);
  for (uint32_t i = 0; i < n; i++)
    if (s->cls[i] != CLS_REMOVED) {
      for (guint q = 0; q < s->eff[i]->len; q++)
        has_kept_child[g_array_index(s->eff[i], uint32_t, q)] = TRUE;
      if (s->chain_prev[i] != ET_NONE)
        has_kept_child[s->chain_prev[i]] = TRUE;
    }
  for (uint32_t i = 0; i < n; i++)
    if (s->cls[i] != CLS_REMOVED && !has_kept_child[i])
      et_builder_add_dep(b, t, s->g->nodes[i].id, TRUE, FALSE);
  g_free(has_kept_child);
}

static void xf_rank_clear(xf_rank *s)
{
  for (uint32_t i = 0; s->eff && i < s->n; i++)
    if (s->eff[i])
      g_array_free(s->eff[i], TRUE);
  g_free(s->eff);
  g_free(s->order);
  g_free(s->chain_prev);
  g_free(s->gap);
  g_free(s->gap_w);
  g_free(s->ready);
  g_free(s->bind);
  g_free(s->dur);
  g_free(s->cls);
  g_free(s->ts);
  g_free(s->te);
  g_array_free(s->chain[0], TRUE);
  g_array_free(s->chain[1], TRUE);
}

/* Rewrites rank r's graph: baseline times, classes, kept ancestors,
 * chains, gaps and written durations, then the kept nodes in index order,
 * each gap node just before its node, and the step tail.  Time O(nodes log
 * nodes + edges); memory a few words per node.  Returns NULL with error set
 * on failure. */
static et_graph *transform_rank(ctx *cx, int r, GError **error)
{
  xf_rank s;
  memset(&s, 0, sizeof s);
  s.g = cx->w->ranks[r];
  s.rank = r;
  s.n = s.g->n_nodes;
  s.cls = g_new(uint8_t, s.n ? s.n : 1);
  baseline_times(&s);
  classify(&s, cx->rep);
  kept_ancestors(&s);
  build_chains(&s, cx->rep, r);
  node_gaps(&s);
  written_durations(&s, cx->rep);
  const et_graph *g = s.g;
  et_builder *b = et_builder_new(g->source ? g->source : cx->w->source);
  et_builder_set_version(b, g->version);
  et_builder_set_compute_slots(b, 1);
  uint64_t next_id = s.max_id + 1;
  for (uint32_t i = 0; i < s.n; i++)
    if (s.cls[i] != CLS_REMOVED)
      emit_node(&s, cx, b, i, &next_id);
  if (s.tail_w > 0)
    add_step_tail(&s, b, next_id, cx->rep);
  xf_rank_clear(&s);
  return et_builder_finish(b, 0, error);
}

et_workload *et_astra_transform(const et_workload *w, et_astra_report *rep, GError **error)
{
  g_return_val_if_fail(w != NULL, NULL);
  et_astra_report local;
  if (rep == NULL)
    rep = &local;
  memset(rep, 0, sizeof *rep);
  rep->n_ranks = w->n_ranks;
  rep->comp_serialised_rank = rep->comm_serialised_rank = -1;
  rep->max_step_ps = -1;
  et_workload *out = et_workload_new(w->n_ranks, w->source);
  ctx cx = {w, out, rep};
  for (int r = 0; r < w->n_ranks; r++) {
    if (w->ranks[r] == NULL) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: rank %d has no graph", w->source, r);
      et_workload_free(out);
      return NULL;
    }
    out->ranks[r] = transform_rank(&cx, r, error);
    if (out->ranks[r] == NULL) {
      et_workload_free(out);
      return NULL;
    }
    out->ranks[r]->measured_step_ps = w->ranks[r]->measured_step_ps;
    out->ranks[r]->measured_start_ps = w->ranks[r]->measured_start_ps;
    out->measured_step_ps[r] = w->measured_step_ps[r];
    rep->max_step_ps = MAX(rep->max_step_ps, w->measured_step_ps[r]);
  }
  if (w->measured_start_ps) {
    out->measured_start_ps = g_new(sim_time_ps, w->n_ranks);
    memcpy(out->measured_start_ps, w->measured_start_ps, sizeof(sim_time_ps) * (size_t)w->n_ranks);
  }
  if (!et_workload_resolve_groups(out, error)) {
    et_workload_free(out);
    return NULL;
  }
  return out;
}

static void pct_of_step(const et_astra_report *rep, sim_time_ps ps, FILE *out)
{
  if (rep->max_step_ps > 0)
    fprintf(out, ", %.1f %% of the measured step", 100.0 * (double)ps / (double)rep->max_step_ps);
}

void et_astra_report_print(const et_astra_report *rep, FILE *out)
{
  fprintf(out,
          "note: --for astra-sim: one compute chain and one communication chain per rank (ASTRA-sim runs one GPU "
          "COMP node and one collective/SEND at a time per rank); %" G_GUINT64_FORMAT " idle-gap nodes re-derived "
          "as %" G_GUINT64_FORMAT " compute gaps and %" G_GUINT64_FORMAT " communication gaps (BROADCAST "
          "replayed for its duration); durations rounded to whole us, worst rank's compute total off by %.3f us\n",
          rep->removed_gap_nodes, rep->comp_gaps, rep->comm_gaps, (double)rep->rounding_max_ps / SIM_PS_PER_US);
  fprintf(out, "note: multi-stream overlap serialised: compute %.3f ms on rank %d (worst", 
          (double)rep->comp_serialised_max_ps / 1e9, MAX(rep->comp_serialised_rank, 0));
  pct_of_step(rep, rep->comp_serialised_max_ps, out);
  fprintf(out, "; %.3f ms over all ranks), communication %.3f ms on rank %d (worst",
          (double)rep->comp_serialised_sum_ps / 1e9, (double)rep->comm_serialised_max_ps / 1e9,
          MAX(rep->comm_serialised_rank, 0));
  pct_of_step(rep, rep->comm_serialised_max_ps, out);
  fprintf(out, "; %.3f ms over all ranks)", (double)rep->comm_serialised_sum_ps / 1e9);
  if (rep->max_measured_slots)
    fprintf(out, "; the profile ran up to %u compute nodes at once", rep->max_measured_slots);
  fputc('\n', out);
  if (rep->removed_cpu_nodes)
    fprintf(out, "note: %" G_GUINT64_FORMAT " CPU nodes (%.3f ms) removed, their edges kept through them (ASTRA-sim "
            "prints no statistics with CPU nodes)\n", rep->removed_cpu_nodes, (double)rep->removed_cpu_ps / 1e9);
  if (rep->dropped_recv_gaps)
    fprintf(out, "note: %" G_GUINT64_FORMAT " idle gaps before RECV nodes (%.3f ms) dropped: a RECV takes no slot "
            "in ASTRA-sim, so no gap node can hold it\n", rep->dropped_recv_gaps,
            (double)rep->dropped_recv_gap_ps / 1e9);
  if (rep->replay_comm_as_broadcast)
    fprintf(out, "note: %" G_GUINT64_FORMAT " communication nodes wisp replays at their measured duration (no usable "
            "size or group) written as BROADCAST, which ASTRA-sim replays for its duration\n",
            rep->replay_comm_as_broadcast);
  if (rep->group_collectives)
    fprintf(out, "note: %" G_GUINT64_FORMAT " collectives use sub-world groups: pass comm_group.json to ASTRA-sim "
            "(--comm-group-configuration); %" G_GUINT64_FORMAT " all-rank collectives carry no pg_name\n",
            rep->group_collectives, rep->world_collectives);
  else
    fprintf(out, "note: all %" G_GUINT64_FORMAT " collectives span every rank and carry no pg_name: ASTRA-sim needs "
            "no comm_group file\n", rep->world_collectives);
}
