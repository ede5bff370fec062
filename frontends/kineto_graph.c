/* kineto_graph.c: per-rank graph construction from the matched ranks
 * (matching is kineto_match.c, the host launch model kineto_host.c).
 *
 * Graphs (kernels mode): one node per GPU op at its measured duration, in
 * per-stream chains; idle time on a stream becomes an ET_FLAG_DELAY node on
 * that stream (leading idle from the window start included); a trailing
 * delay closes the window; cross-stream edges come from synchronisation
 * (kineto_extract.c) and were only kept when the measured timeline agrees,
 * so measured compute/communication overlap is preserved.  Gap mode keeps
 * only the communications, chained in start order, with the time between
 * them as compute.  O(N) nodes and edges per rank.
 */
#include "config.h"

#include "frontends/kineto_graph_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- graphs ---- */

/* See kineto_graph.h.  The events kt_graph_build reads are those of the
 * ops (names), their launch calls (host_calls, host_chains) and the host
 * synchronisation calls (host_calls scans them all). */
void kt_rank_shrink(kt_rank *r)
{
  kt_trace *t = r->trace;
  guint n = t->events->len;
  uint8_t *keep = g_new0(uint8_t, n ? n : 1);
  for (guint i = 0; i < n; i++)
    keep[i] = g_array_index(t->events, kt_event, i).kind == KT_EV_HOST_SYNC;
  for (guint i = 0; i < r->ops->len; i++) {
    const kt_op *op = &g_array_index(r->ops, kt_op, i);
    keep[op->ev] = 1;
    if (op->launch != KT_NONE)
      keep[op->launch] = 1;
  }
  uint32_t *remap = kt_trace_compact(t, keep);
  for (guint i = 0; i < r->ops->len; i++) {
    kt_op *op = &g_array_index(r->ops, kt_op, i);
    op->ev = remap[op->ev];
    if (op->launch != KT_NONE)
      op->launch = remap[op->launch];
  }
  for (guint i = 0; i < r->sync_targets->len; i++) { /* host syncs are kept, in order */
    kt_sync_target *st = &g_array_index(r->sync_targets, kt_sync_target, i);
    st->ev = remap[st->ev];
  }
  g_free(remap);
  g_free(keep);
}

void kt_graph_free(kt_graph *g)
{
  if (!g)
    return;
  if (g->names)
    g_string_chunk_free(g->names);
  g_array_free(g->nodes, TRUE);
  g_array_free(g->edges, TRUE);
  g_free(g);
}

typedef struct {
  sim_time_ps s, e;
} span;

static int cmp_span(const void *a, const void *b)
{
  const span *x = a, *y = b;
  return x->s < y->s ? -1 : x->s > y->s;
}

/* Boundaries (time, +1 open / -1 close) in time order, closes first. */
static int cmp_boundary(const void *a, const void *b)
{
  const span *x = a, *y = b;
  if (x->s != y->s)
    return x->s < y->s ? -1 : 1;
  return x->e < y->e ? -1 : x->e > y->e;
}

static sim_time_ps union_length(GArray *spans)
{
  g_array_sort(spans, cmp_span);
  sim_time_ps total = 0, cs = 0, ce = -1;
  gboolean open = FALSE;
  for (guint i = 0; i < spans->len; i++) {
    span *x = &g_array_index(spans, span, i);
    if (!open || x->s > ce) {
      if (open)
        total += ce - cs;
      cs = x->s;
      ce = x->e;
      open = TRUE;
    } else if (x->e > ce) {
      ce = x->e;
    }
  }
  if (open)
    total += ce - cs;
  return total;
}

/* The largest number of spans open at one instant (a span ending when
 * another starts does not overlap it).  Sorts the 2n boundaries: O(n log n). */
static uint32_t max_concurrency(GArray *spans)
{
  GArray *ev = g_array_sized_new(FALSE, FALSE, sizeof(span), spans->len * 2);
  for (guint i = 0; i < spans->len; i++) {
    const span *x = &g_array_index(spans, span, i);
    if (x->e <= x->s)
      continue;
    span open = { x->s, 1 }, close = { x->e, -1 };
    g_array_append_val(ev, open);
    g_array_append_val(ev, close);
  }
  g_array_sort(ev, cmp_boundary);
  int64_t cur = 0, best = 0;
  for (guint i = 0; i < ev->len; i++) {
    cur += g_array_index(ev, span, i).e;
    best = MAX(best, cur);
  }
  g_array_free(ev, TRUE);
  return (uint32_t)best;
}

/* ET_FLAG_REPLAY for a matched communication that cannot be simulated
 * (some member has no size): every member replays its measured kernel. */
static uint8_t replay_flag(const kt_comm_match *m)
{
  return m && m->status == KT_COMM_MATCHED && m->replay ? ET_FLAG_REPLAY : 0;
}

/* The node type of an op: COMP unless it is a matched communication c
 * (verdict m); both NULL for an op that is not communication. */
static et_node_type node_type_of(const kt_comm *c, const kt_comm_match *m)
{
  if (!c || m->status != KT_COMM_MATCHED)
    return ET_NODE_COMP;
  return c->p2p == 1 ? ET_NODE_COMM_SEND : c->p2p == 2 ? ET_NODE_COMM_RECV : ET_NODE_COMM_COLL;
}

/* "idle_dev<D>_stream<S>", stored once per stream. */
static const char *made_name(kt_graph *g, int64_t key)
{
  char buf[64];
  g_snprintf(buf, sizeof buf, "idle_dev%d_stream%d", (int)(int32_t)(uint32_t)((uint64_t)key >> 32),
             (int)(int32_t)(uint32_t)key);
  return g_string_chunk_insert_const(g->names, buf);
}

/* Cross-stream parents of every op (r->sync_edges by child): a CSR index,
 * parent[first[i] .. first[i+1]) for op i.  O(ops + edges). */
typedef struct {
  uint32_t *first, *parent;
} sync_index;

static void sync_index_build(sync_index *x, const kt_rank *r)
{
  guint n = r->ops->len, ne = r->sync_edges->len;
  x->first = g_new0(uint32_t, n + 1);
  x->parent = g_new(uint32_t, ne ? ne : 1);
  for (guint i = 0; i < ne; i++)
    x->first[g_array_index(r->sync_edges, kt_edge, i).child + 1]++;
  for (guint i = 0; i < n; i++)
    x->first[i + 1] += x->first[i];
  uint32_t *fill = g_memdup2(x->first, sizeof(uint32_t) * (n + 1));
  for (guint i = 0; i < ne; i++) {
    kt_edge e = g_array_index(r->sync_edges, kt_edge, i);
    x->parent[fill[e.child]++] = e.parent;
  }
  g_free(fill);
}

static void sync_index_free(sync_index *x)
{
  g_free(x->first);
  g_free(x->parent);
}

/* One modelled predecessor of a GPU op: a node of the graph (or an op whose
 * node is made later, for cross-stream parents) and its measured end. */
typedef struct {
  uint32_t node, op;       /* exactly one is set, the other KT_NONE */
  sim_time_ps end;
  gboolean launch;         /* the CPU node before the op's launch call */
} pred;

/* Adds the idle time and edges in front of node `child` (measured start
 * `start`).  It is ready, on the measured timeline, when the latest of its
 * predecessors ended (time 0 without any); only the time from there to its
 * measured start is unexplained, and becomes an ET_FLAG_DELAY node after
 * that binding predecessor alone (the first of the latest, in the order
 * given).  The other predecessors point at the child directly, so when one
 * of them ends earlier in a what-if the child moves with it: measured
 * waiting is derived from the dependencies, never replayed.  Edges from ops
 * whose nodes do not exist yet go to `pending` (op -> node).  O(np). */
static void place_idle(kt_graph *g, const pred *p, int np, sim_time_ps start, sim_time_ps min_gap_ps,
                       const char *idle_name, uint32_t child, GArray *pending)
{
  int bind = -1;
  sim_time_ps ready = 0;
  for (int k = 0; k < np; k++)
    if (bind < 0 || p[k].end > ready) {
      bind = k;
      ready = p[k].end;
    }
  sim_time_ps gap = start - ready;
  uint32_t d = KT_NONE;
  if (gap > 0 && gap >= min_gap_ps) {
    d = kt_graph_add_node(g, ET_NODE_COMP, ET_FLAG_DELAY, gap, ready, KT_NONE, idle_name);
    kt_graph_add_edge(g, d, child);
    g->gap_nodes++;
    if (bind >= 0 && p[bind].launch)
      g->launch_lag_ps += gap;
    else
      g->unexplained_idle_ps += gap;
  }
  for (int k = 0; k < np; k++) {
    uint32_t to = k == bind && d != KT_NONE ? d : child;
    if (p[k].node != KT_NONE) {
      kt_graph_add_edge(g, p[k].node, to);
    } else {
      kt_edge e = { p[k].op, to };
      g_array_append_val(pending, e);
    }
  }
}

/* Kernels mode: one node per GPU op at its measured duration, in per-stream
 * chains, with launch anchors (host model), cross-stream edges, host
 * synchronisation waits and the derived idle of place_idle.  The time from
 * the latest stream or thread end to the window's end is the unexplained
 * step tail. */
static void build_kernels(kt_graph *g, const kt_rank *r, const kt_rank_match *rm, sim_time_ps min_gap_ps,
                          gboolean host_launch, GArray *rep)
{
  const kt_trace *t = r->trace;
  guint nops = r->ops->len;
  uint32_t *node_of_op = g_new(uint32_t, nops ? nops : 1);
  uint32_t *anchor = NULL;
  sim_time_ps *anchor_t = NULL;
  GArray *waits = g_array_new(FALSE, FALSE, sizeof(kt_edge));
  GArray *ends = g_array_new(FALSE, FALSE, sizeof(chain_end));
  GArray *pending = g_array_new(FALSE, FALSE, sizeof(kt_edge));
  if (host_launch) {
    anchor = g_new(uint32_t, nops ? nops : 1);
    anchor_t = g_new(sim_time_ps, nops ? nops : 1);
    kt_host_chains(g, r, min_gap_ps, anchor, anchor_t, waits, ends);
  }
  sync_index sx;
  sync_index_build(&sx, r);
  GArray *compute = g_array_new(FALSE, FALSE, sizeof(span));
  GArray *preds = g_array_new(FALSE, FALSE, sizeof(pred));
  uint32_t prev = KT_NONE;
  sim_time_ps prev_end = 0;
  for (guint i = 0; i < nops; i++) {
    const kt_op *op = &g_array_index(r->ops, kt_op, i);
    if (i == 0 || g_array_index(r->ops, kt_op, i - 1).stream != op->stream) {
      if (prev != KT_NONE) {
        chain_end ce = { prev, prev_end };
        g_array_append_val(ends, ce);
      }
      prev = KT_NONE;
      prev_end = 0;
    }
    /* Predecessors in tie order: stream predecessor, launch, cross-stream. */
    g_array_set_size(preds, 0);
    if (prev != KT_NONE) {
      pred p = { prev, KT_NONE, prev_end, FALSE };
      g_array_append_val(preds, p);
    }
    uint32_t a = anchor ? anchor[i] : KT_NONE;
    if (a != KT_NONE && anchor_t[i] > op->start)
      g->launch_inversions++; /* measured to start before its launch: keep the measured start */
    else if (a != KT_NONE) {
      pred p = { a, KT_NONE, anchor_t[i], TRUE };
      g_array_append_val(preds, p);
    }
    for (uint32_t k = sx.first[i]; k < sx.first[i + 1]; k++) {
      uint32_t po = sx.parent[k];
      pred p = { KT_NONE, po, g_array_index(r->ops, kt_op, po).end, FALSE };
      g_array_append_val(preds, p);
      g->cross_edges++;
    }
    kt_event_slim e = kt_trace_event(t, op->ev);
    const kt_comm *c = op->comm == KT_NONE ? NULL : &g_array_index(r->comms, kt_comm, op->comm);
    const kt_comm_match *cm = op->comm == KT_NONE ? NULL : &rm->comms[op->comm];
    et_node_type type = node_type_of(c, cm);
    uint32_t n = kt_graph_add_node(g, type, ET_FLAG_HAS_START | replay_flag(cm), op->end - op->start, op->start, i,
                          kt_str(t, e.name));
    node_of_op[i] = n;
    place_idle(g, (const pred *)preds->data, (int)preds->len, op->start, min_gap_ps,
               made_name(g, r->stream_keys[op->stream]), n, pending);
    prev = n;
    prev_end = MAX(prev_end, op->end);
    span s = { op->start, op->end };
    g_array_append_val(rep, s);
    if (type == ET_NODE_COMP)
      g_array_append_val(compute, s);
  }
  if (prev != KT_NONE) {
    chain_end ce = { prev, prev_end };
    g_array_append_val(ends, ce);
  }
  g->compute_slots = MIN(max_concurrency(compute), ET_MAX_COMPUTE_SLOTS);
  for (guint i = 0; i < pending->len; i++) {
    kt_edge pe = g_array_index(pending, kt_edge, i);
    kt_graph_add_edge(g, node_of_op[pe.parent], pe.child);
  }
  for (guint i = 0; i < waits->len; i++) {
    kt_edge w = g_array_index(waits, kt_edge, i);
    kt_graph_add_edge(g, node_of_op[w.parent], w.child);
  }
  /* The tail: the time from the latest stream or thread end to the
   * window's end, after every one of those ends (the step is over when all
   * its work is, whichever finishes last in a what-if). */
  sim_time_ps latest = 0;
  for (guint i = 0; i < ends->len; i++)
    latest = MAX(latest, g_array_index(ends, chain_end, i).end);
  if (ends->len && r->window_ps > latest && r->window_ps - latest >= min_gap_ps) {
    uint32_t d = kt_graph_add_node(g, ET_NODE_COMP, ET_FLAG_DELAY, r->window_ps - latest, latest, KT_NONE, "idle_step_tail");
    for (guint i = 0; i < ends->len; i++)
      kt_graph_add_edge(g, g_array_index(ends, chain_end, i).node, d);
    g->gap_nodes++;
    g->unexplained_idle_ps += r->window_ps - latest;
  }
  sync_index_free(&sx);
  g_array_free(preds, TRUE);
  g_array_free(compute, TRUE);
  g_array_free(pending, TRUE);
  g_array_free(waits, TRUE);
  g_array_free(ends, TRUE);
  g_free(anchor);
  g_free(anchor_t);
  g_free(node_of_op);
}

/* Gap mode: matched communications in start order, the time between them
 * replayed as compute (CCL-Bench's model: a serial chain, W16). */
static void build_gaps(kt_graph *g, const kt_rank *r, const kt_rank_match *rm, sim_time_ps min_gap_ps, GArray *rep)
{
  const kt_trace *t = r->trace;
  GArray *order = g_array_new(FALSE, FALSE, sizeof(span));
  for (guint i = 0; i < r->ops->len; i++) {
    const kt_op *op = &g_array_index(r->ops, kt_op, i);
    if (op->comm != KT_NONE && rm->comms[op->comm].status == KT_COMM_MATCHED) {
      span s = { op->start, (sim_time_ps)i };
      g_array_append_val(order, s);
    }
  }
  g_array_sort(order, cmp_span);
  uint32_t prev = KT_NONE;
  sim_time_ps cursor = 0;
  for (guint k = 0; k < order->len; k++) {
    uint32_t i = (uint32_t)g_array_index(order, span, k).e;
    const kt_op *op = &g_array_index(r->ops, kt_op, i);
    if (op->start - cursor >= min_gap_ps && op->start > cursor) {
      uint32_t d = kt_graph_add_node(g, ET_NODE_COMP, 0, op->start - cursor, cursor, KT_NONE, "compute_gap");
      kt_graph_add_edge(g, prev, d);
      prev = d;
      g->gap_nodes++;
    }
    kt_event_slim e = kt_trace_event(t, op->ev);
    const kt_comm *c = &g_array_index(r->comms, kt_comm, op->comm);
    const kt_comm_match *cm = &rm->comms[op->comm];
    uint32_t n = kt_graph_add_node(g, node_type_of(c, cm), ET_FLAG_HAS_START | replay_flag(cm), op->end - op->start, op->start,
                          i, kt_str(t, e.name));
    kt_graph_add_edge(g, prev, n);
    prev = n;
    cursor = MAX(cursor, op->end);
    span s = { op->start, op->end };
    g_array_append_val(rep, s);
  }
  if (r->window_ps > cursor && r->window_ps - cursor >= min_gap_ps) {
    uint32_t d = kt_graph_add_node(g, ET_NODE_COMP, 0, r->window_ps - cursor, cursor, KT_NONE, "compute_gap");
    kt_graph_add_edge(g, prev, d);
    g->gap_nodes++;
  }
  g_array_free(order, TRUE);
}

kt_graph *kt_graph_build(const kt_rank *r, const kt_rank_match *rm, fe_kineto_mode mode, sim_time_ps min_gap_ps,
                         gboolean host_launch)
{
  kt_graph *g = g_new0(kt_graph, 1);
  g->names = g_string_chunk_new(1024);
  g->nodes = g_array_new(FALSE, FALSE, sizeof(kt_node));
  g->edges = g_array_new(FALSE, FALSE, sizeof(kt_edge));
  GArray *all = g_array_new(FALSE, FALSE, sizeof(span));
  GArray *rep = g_array_new(FALSE, FALSE, sizeof(span));
  for (guint i = 0; i < r->ops->len; i++) {
    const kt_op *op = &g_array_index(r->ops, kt_op, i);
    span s = { op->start, op->end };
    g_array_append_val(all, s);
  }
  g->gpu_busy_ps = union_length(all);
  if (mode == FE_KINETO_KERNELS)
    build_kernels(g, r, rm, min_gap_ps, host_launch, rep);
  else
    build_gaps(g, r, rm, min_gap_ps, rep);
  g->node_busy_ps = union_length(rep);
  g_array_free(all, TRUE);
  g_array_free(rep, TRUE);
  g->cycle_edges_dropped = kt_graph_break_cycles(g);
  return g;
}

static int cmp_edge(const void *a, const void *b)
{
  const kt_edge *x = a, *y = b;
  if (x->child != y->child)
    return x->child < y->child ? -1 : 1;
  return x->parent < y->parent ? -1 : x->parent > y->parent;
}

uint64_t kt_graph_break_cycles(kt_graph *g)
{
  uint32_t n = g->nodes->len;
  uint64_t dropped = 0;
  /* Remove duplicate edges and self loops first (a self loop is a cycle). */
  g_array_sort(g->edges, cmp_edge);
  guint w = 0;
  for (guint i = 0; i < g->edges->len; i++) {
    kt_edge e = g_array_index(g->edges, kt_edge, i);
    if (e.parent == e.child) {
      dropped++;
      continue;
    }
    if (w > 0 && !cmp_edge(&e, &g_array_index(g->edges, kt_edge, w - 1)))
      continue;
    g_array_index(g->edges, kt_edge, w++) = e;
  }
  g_array_set_size(g->edges, w);
  for (;;) {
    guint ne = g->edges->len;
    uint32_t *indeg = g_new0(uint32_t, n ? n : 1);
    uint32_t *first = g_new0(uint32_t, n + 1);  /* CSR of children by parent */
    uint32_t *child = g_new(uint32_t, ne ? ne : 1);
    for (guint i = 0; i < ne; i++) {
      kt_edge e = g_array_index(g->edges, kt_edge, i);
      indeg[e.child]++;
      first[e.parent + 1]++;
    }
    for (uint32_t i = 0; i < n; i++)
      first[i + 1] += first[i];
    uint32_t *fill = g_memdup2(first, sizeof(uint32_t) * (n + 1));
    for (guint i = 0; i < ne; i++) {
      kt_edge e = g_array_index(g->edges, kt_edge, i);
      child[fill[e.parent]++] = e.child;
    }
    uint32_t *queue = g_new(uint32_t, n ? n : 1);
    uint32_t qh = 0, qt = 0;
    for (uint32_t i = 0; i < n; i++)
      if (!indeg[i])
        queue[qt++] = i;
    while (qh < qt) {
      uint32_t u = queue[qh++];
      for (uint32_t k = first[u]; k < first[u + 1]; k++)
        if (--indeg[child[k]] == 0)
          queue[qt++] = child[k];
    }
    gboolean acyclic = qt == n;
    if (!acyclic) {
      /* Every unfinished node has an unfinished parent, so walking parents
       * from one must close a cycle.  Drop the cycle edge that points
       * furthest back in node order (nodes were created in time order, so
       * it is the edge most at odds with the timeline). */
      uint32_t *seen_at = g_new(uint32_t, n ? n : 1);
      for (uint32_t i = 0; i < n; i++)
        seen_at[i] = UINT32_MAX;
      GArray *path = g_array_new(FALSE, FALSE, sizeof(guint)); /* edge indices walked */
      uint32_t u = 0;
      while (!indeg[u])
        u++;
      uint32_t steps = 0;
      while (seen_at[u] == UINT32_MAX) {
        seen_at[u] = steps++;
        /* Edges are sorted by child: binary search the first edge into u. */
        guint lo = 0, hi = ne;
        while (lo < hi) {
          guint mid = (lo + hi) / 2;
          if (g_array_index(g->edges, kt_edge, mid).child < u)
            lo = mid + 1;
          else
            hi = mid;
        }
        guint pick = G_MAXUINT;
        for (guint i = lo; i < ne && g_array_index(g->edges, kt_edge, i).child == u; i++)
          if (indeg[g_array_index(g->edges, kt_edge, i).parent]) {
            pick = i;
            break;
          }
        g_assert(pick != G_MAXUINT);
        g_array_append_val(path, pick);
        u = g_array_index(g->edges, kt_edge, pick).parent;
      }
      guint victim = G_MAXUINT;
      int64_t worst = INT64_MIN;
      for (guint k = seen_at[u]; k < path->len; k++) {
        guint i = g_array_index(path, guint, k);
        kt_edge e = g_array_index(g->edges, kt_edge, i);
        int64_t back = (int64_t)e.parent - (int64_t)e.child;
        if (back > worst || (back == worst && i < victim)) {
          worst = back;
          victim = i;
        }
      }
      g_array_free(path, TRUE);
      g_free(seen_at);
      g_array_remove_index(g->edges, victim);
      dropped++;
    }
    g_free(indeg);
    g_free(first);
    g_free(fill);
    g_free(child);
    g_free(queue);
    if (acyclic)
      return dropped;
  }
}
