/* pyt_et_link.c: links PyTorch execution traces with the graphs the Kineto
 * frontend built from the same ranks (fe_pet_link, pyt_et.h).
 *
 * Chakra's trace linker joins an execution-trace node to its Kineto CPU op
 * by the record-function id (rf_id = Kineto's "Record function id") and the
 * CPU op to its GPU kernels by the launch's correlation id.  The Kineto
 * frontend has already made that second join (it sizes each communication
 * kernel from the record_param_comms CPU op around its launch) and keeps
 * one COMM node per communication kernel, in the order the GPU ran them.
 * A rank issues its collectives in one order on one communicator stream, so
 * the k-th record_param_comms collective of the execution trace (id order)
 * is the k-th communication node of the graph (measured start order); the
 * link is then checked: the kinds must agree, and the sizes are compared
 * (all_to_allv: the per-peer splits).  Traces without "Record function id"
 * (PyTorch before 2.1, such as the DLRM set) cannot be joined by rf_id at
 * all, and the position join is the same on those that have it.
 *
 * Dependencies: the execution trace states which tensors each operator
 * reads and writes.  A collective B that reads a tensor computed (through
 * any chain of operators) from collective A's output depends on A.  Each
 * such pair is looked up in the Kineto graph: already ordered (a path from
 * A to B: the timeline inference found it), contradicted (the measured B
 * started before A ended: not added, counted), or added as a data edge.
 * Time: O(nodes + tensors) per collective for the taint walk, O(nodes +
 * edges) per stated pair for the path check.
 */
#include "frontends/pyt_et_internal.h"

#include <string.h>

/* The graph's communication nodes (GPU side) in measured start order. */
static GArray *graph_comms(const et_graph *g)
{
  GArray *a = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  for (uint32_t i = 0; i < g->n_nodes; i++)
    if (g->nodes[i].comm != ET_NONE && !(g->nodes[i].flags & ET_FLAG_CPU_OP))
      g_array_append_val(a, i);
  for (guint i = 1; i < a->len; i++) { /* insertion sort by start: stable, small arrays */
    uint32_t x = g_array_index(a, uint32_t, i);
    guint j = i;
    while (j > 0 && g->nodes[g_array_index(a, uint32_t, j - 1)].start_ps > g->nodes[x].start_ps) {
      g_array_index(a, uint32_t, j) = g_array_index(a, uint32_t, j - 1);
      j--;
    }
    g_array_index(a, uint32_t, j) = x;
  }
  return a;
}

static gboolean same_kind(et_coll_type et, int p2p, const et_graph *g, uint32_t node)
{
  const et_comm *c = et_node_comm(g, node);
  et_node_type t = (et_node_type)g->nodes[node].type;
  if (p2p == 1)
    return t == ET_NODE_COMM_SEND;
  if (p2p == 2)
    return t == ET_NODE_COMM_RECV;
  gboolean a2a_et = et == ET_COLL_ALL_TO_ALL || et == ET_COLL_ALL_TO_ALLV;
  gboolean a2a_g = c->coll == ET_COLL_ALL_TO_ALL || c->coll == ET_COLL_ALL_TO_ALLV;
  return t == ET_NODE_COMM_COLL && (a2a_et ? a2a_g : c->coll == (uint8_t)et);
}

/* Whether the sizes agree; *what describes both for a report line. */
static gboolean same_size(const pet_comm *pc, const et_graph *g, uint32_t node, char **what)
{
  const et_comm *c = et_node_comm(g, node);
  if (c->coll == ET_COLL_ALL_TO_ALLV && c->split != ET_NONE && pc->in_splits && pc->elem_bytes > 0 &&
      pc->in_splits->len == g->split_width) {
    gboolean eq = TRUE;
    for (guint k = 0; k < pc->in_splits->len; k++)
      eq &= g_array_index(pc->in_splits, uint64_t, k) * (uint64_t)pc->elem_bytes == g->splits[c->split + k];
    *what = g_strdup_printf("per-peer splits %s (execution trace %" G_GUINT64_FORMAT " B in all)",
                            eq ? "equal" : "differ", pc->in_bytes);
    return eq;
  }
  *what = g_strdup_printf("execution trace %" G_GUINT64_FORMAT " B, Kineto graph %" G_GUINT64_FORMAT " B",
                          pc->in_bytes, c->bytes);
  return pc->in_bytes == c->bytes;
}

/* The collectives that read what collective a wrote, directly or through
 * other operators: appended to deps as comm indices.  Walks the nodes after
 * a's in id order (the order they ran).  O(nodes + tensors). */
static void stated_after(const pet_trace *t, guint a, GArray *deps)
{
  const pet_comm *ca = &g_array_index(t->comms, pet_comm, a);
  GHashTable *taint = g_hash_table_new(g_int64_hash, g_int64_equal);
  for (guint k = 0; k < ca->out_tensors->len; k++)
    g_hash_table_add(taint, &g_array_index(ca->out_tensors, uint64_t, k));
  GArray *order = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < t->nodes->len; i++)
    if (g_array_index(t->nodes, pet_node, i).id > ca->node_id)
      g_array_append_val(order, i);
  /* Nodes are mostly stored in id order; sort to be sure (ids are unique). */
  for (guint i = 1; i < order->len; i++) {
    guint x = g_array_index(order, guint, i), j = i;
    uint64_t xid = g_array_index(t->nodes, pet_node, x).id;
    while (j > 0 && g_array_index(t->nodes, pet_node, g_array_index(order, guint, j - 1)).id > xid) {
      g_array_index(order, guint, j) = g_array_index(order, guint, j - 1);
      j--;
    }
    g_array_index(order, guint, j) = x;
  }
  for (guint o = 0; o < order->len; o++) {
    const pet_node *pn = &g_array_index(t->nodes, pet_node, g_array_index(order, guint, o));
    const GArray *in = pn->comm >= 0 ? g_array_index(t->comms, pet_comm, pn->comm).in_tensors : pn->in_tensors;
    gboolean hit = FALSE;
    for (guint k = 0; k < in->len && !hit; k++)
      hit = g_hash_table_contains(taint, &g_array_index(in, uint64_t, k));
    if (!hit)
      continue;
    if (pn->comm >= 0) {
      guint b = (guint)pn->comm;
      g_array_append_val(deps, b);
      continue; /* what B writes depends on A through B: B's own pairs carry it */
    }
    for (guint k = 0; k < pn->out_tensors->len; k++)
      g_hash_table_add(taint, &g_array_index(pn->out_tensors, uint64_t, k));
  }
  g_array_free(order, TRUE);
  g_hash_table_destroy(taint);
}

/* Whether the graph has a path from node a to node b.  O(nodes + edges). */
static gboolean reaches(const et_graph *g, uint32_t a, uint32_t b, guint8 *mark, GArray *stack)
{
  memset(mark, 0, g->n_nodes);
  g_array_set_size(stack, 0);
  g_array_append_val(stack, a);
  mark[a] = 1;
  while (stack->len) {
    uint32_t v = g_array_index(stack, uint32_t, stack->len - 1);
    g_array_set_size(stack, stack->len - 1);
    if (v == b)
      return TRUE;
    for (uint32_t e = g->nodes[v].children; e < g->nodes[v + 1].children; e++) {
      uint32_t c = g->child_index[e];
      if (!mark[c]) {
        mark[c] = 1;
        g_array_append_val(stack, c);
      }
    }
  }
  return FALSE;
}

/* What linking changes in a rank's graph: extra data edges (pairs of node
 * indices: parent, child) and all_to_all nodes that become all_to_allv
 * with the execution trace's splits (node index, then its n per-peer byte
 * counts in splits). */
typedef struct {
  GArray *pairs;           /* uint32_t parent, child, ... */
  GArray *a2av_nodes;      /* uint32_t */
  GArray *a2av_splits;     /* uint64_t, width per node */
  uint32_t width;
} link_edits;

/* The per-peer bytes node i sends, from the edits or the graph; NULL when
 * none.  O(edited nodes). */
static const uint64_t *splits_for(const et_graph *g, const link_edits *ed, uint32_t i, uint32_t *n)
{
  for (guint k = 0; k < ed->a2av_nodes->len; k++)
    if (g_array_index(ed->a2av_nodes, uint32_t, k) == i) {
      *n = ed->width;
      return &g_array_index(ed->a2av_splits, uint64_t, (gsize)k * ed->width);
    }
  const et_comm *c = et_node_comm(g, i);
  *n = c->split != ET_NONE ? g->split_width : 0;
  return c->split != ET_NONE ? g->splits + c->split : NULL;
}

/* g rebuilt with the edits.  O(nodes + edges + edited nodes^2). */
static et_graph *graph_plus_edges(const et_graph *g, const link_edits *ed, GError **error)
{
  const GArray *pairs = ed->pairs;
  et_builder *b = et_builder_new(g->source ? g->source : "(graph)");
  et_builder_set_version(b, g->version ? g->version : "");
  et_builder_set_compute_slots(b, g->compute_slots);
  for (uint32_t i = 0; i < g->n_nodes; i++) {
    const et_node *n = &g->nodes[i];
    et_builder_add_node(b, n->id, (et_node_type)n->type, et_node_name(g, i), n->duration_ps, n->flags);
    if (n->flags & ET_FLAG_HAS_START)
      et_builder_set_start(b, i, n->start_ps);
    const et_comm *c = et_node_comm(g, i);
    if (c) {
      uint32_t ns = 0;
      const uint64_t *sp = splits_for(g, ed, i, &ns);
      et_comm cc = *c;
      if (sp && cc.coll == ET_COLL_ALL_TO_ALL)
        cc.coll = ET_COLL_ALL_TO_ALLV;
      et_builder_set_comm(b, i, &cc, c->pg_name != ET_NONE ? g->strings + c->pg_name : NULL, sp, ns);
      et_builder_set_buffer(b, i, c->buffer, c->has_alloc, c->alloc_ps);
    }
  }
  for (uint32_t k = 0; k < g->n_comp_attrs; k++)
    et_builder_set_comp_attrs(b, g->comp_attrs[k].node, g->comp_attrs[k].num_ops, g->comp_attrs[k].has_tensor_size,
                              g->comp_attrs[k].tensor_size);
  for (uint32_t i = 0; i < g->n_nodes; i++)
    for (uint32_t e = g->nodes[i].parents; e < g->nodes[i + 1].parents; e++) {
      uint32_t pe = g->parent_edges[e];
      et_builder_add_dep(b, i, g->nodes[ET_EDGE_INDEX(pe)].id, (pe & ET_EDGE_DATA) != 0, (pe & ET_EDGE_CTRL) != 0);
    }
  for (guint k = 0; k + 1 < pairs->len; k += 2)
    et_builder_add_dep(b, g_array_index(pairs, uint32_t, k + 1), g->nodes[g_array_index(pairs, uint32_t, k)].id,
                       TRUE, FALSE);
  et_graph *o = et_builder_finish(b, 0, error);
  if (o) {
    o->measured_step_ps = g->measured_step_ps;
    o->measured_start_ps = g->measured_start_ps;
    o->dropped_dangling_ctrl = g->dropped_dangling_ctrl;
    o->dropped_attrs = g->dropped_attrs;
    o->dropped_cycle_edges = g->dropped_cycle_edges;
    o->replay_comm_nodes = g->replay_comm_nodes;
  }
  return o;
}

/* An all_to_all of the graph that the execution trace states as an
 * all_to_allv with per-peer splits (the Kineto trace did not carry them):
 * the node takes the splits, when they cover its group and every split
 * list of the rank has that width. */
static void take_splits(const pet_comm *pc, const et_workload *w, const et_graph *g, uint32_t node, link_edits *ed,
                        fe_pet_report *rep)
{
  const et_comm *c = et_node_comm(g, node);
  if (c->coll != ET_COLL_ALL_TO_ALL || !pc->in_splits || pc->elem_bytes <= 0)
    return;
  uint32_t n = pc->in_splits->len;
  int members = c->group == ET_GROUP_WORLD ? w->n_ranks : et_workload_group(w, c->group)->n_ranks;
  if ((int)n != members || (g->split_width && g->split_width != n) || (ed->width && ed->width != n))
    return;
  uint64_t sum = 0;
  for (uint32_t k = 0; k < n; k++) {
    uint64_t x = g_array_index(pc->in_splits, uint64_t, k) * (uint64_t)pc->elem_bytes;
    g_array_append_val(ed->a2av_splits, x);
    sum += x;
  }
  if (sum != c->bytes) {
    g_array_set_size(ed->a2av_splits, ed->a2av_splits->len - n);
    return;
  }
  ed->width = n;
  g_array_append_val(ed->a2av_nodes, node);
  rep->splits_added++;
}

/* Links one rank: kinds and sizes, then the stated dependencies.  Returns
 * the pairs to add (parent, child node indices) in *pairs. */
static void link_rank(const pet_trace *t, const et_workload *w, int r, fe_pet_report *rep, link_edits *ed)
{
  const et_graph *g = w->ranks[r];
  GArray *pairs = ed->pairs;
  GArray *gc = graph_comms(g);
  guint n_et = t->comms->len, n = MIN(n_et, gc->len), eq = 0;
  GArray *et_to_g = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  for (guint k = 0; k < n; k++) {
    const pet_comm *pc = &g_array_index(t->comms, pet_comm, k);
    uint32_t node = g_array_index(gc, uint32_t, k);
    char *what = NULL;
    if (!same_kind(pc->coll, pc->p2p, g, node)) {
      rep->kind_differs++;
      g_ptr_array_add(rep->lines, g_strdup_printf("rank %d collective %u: the execution trace's '%s' (node %"
                      G_GUINT64_FORMAT ") is '%s' in the Kineto graph", r, k, pc->op, pc->node_id, et_node_name(g, node)));
    } else if (same_size(pc, g, node, &what)) {
      eq++;
      take_splits(pc, w, g, node, ed, rep);
    } else {
      rep->size_differs++;
      g_ptr_array_add(rep->lines, g_strdup_printf("rank %d collective %u '%s' (node %" G_GUINT64_FORMAT "): size "
                      "differs: %s", r, k, pc->op, pc->node_id, what));
    }
    g_free(what);
    g_array_append_val(et_to_g, node);
  }
  rep->linked += n;
  rep->size_equal += eq;
  rep->et_only += n_et - n;
  rep->kineto_only += gc->len - n;
  uint64_t stated = 0, too = 0, added = 0, contra = 0;
  guint8 *mark = g_malloc0(g->n_nodes ? g->n_nodes : 1);
  GArray *stack = g_array_new(FALSE, FALSE, sizeof(uint32_t)), *deps = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint a = 0; a < n; a++) {
    g_array_set_size(deps, 0);
    stated_after(t, a, deps);
    for (guint k = 0; k < deps->len; k++) {
      guint bi = g_array_index(deps, guint, k);
      if (bi >= n)
        continue;
      uint32_t ga = g_array_index(et_to_g, uint32_t, a), gb = g_array_index(et_to_g, uint32_t, bi);
      stated++;
      const et_node *na = &g->nodes[ga], *nb = &g->nodes[gb];
      if (reaches(g, ga, gb, mark, stack)) {
        too++;
      } else if (reaches(g, gb, ga, mark, stack) || ((na->flags & ET_FLAG_HAS_START) && (nb->flags & ET_FLAG_HAS_START) &&
                 nb->start_ps < na->start_ps + na->duration_ps)) {
        contra++; /* the graph orders B before A, or B began before A ended */
      } else {
        added++;
        g_array_append_val(pairs, ga);
        g_array_append_val(pairs, gb);
      }
    }
  }
  rep->deps_stated += stated;
  rep->deps_inferred_too += too;
  rep->deps_added += added;
  rep->deps_contradicted += contra;
  g_ptr_array_add(rep->lines, g_strdup_printf(
    "rank %d: %s (schema %s, %u nodes): %u of %u collective(s) linked to the Kineto graph's %u, %u of equal size; "
    "stated dependencies %" G_GUINT64_FORMAT " (inferred too %" G_GUINT64_FORMAT ", added %" G_GUINT64_FORMAT
    ", contradicted %" G_GUINT64_FORMAT ")", r, t->path, t->schema, t->nodes->len, n, n_et, gc->len, eq, stated, too,
    added, contra));
  g_free(mark);
  g_array_free(stack, TRUE);
  g_array_free(deps, TRUE);
  g_array_free(et_to_g, TRUE);
  g_array_free(gc, TRUE);
}

gboolean fe_pet_link(et_workload *w, const char *const *paths, int n_paths, fe_pet_report *report, GError **error)
{
  if (w->scale || w->share) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED, "%s: execution traces are linked with the traced "
                "ranks' own graphs, before scaling or sharing", w->source);
    return FALSE;
  }
  if (n_paths != w->n_ranks) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: %d execution trace(s) beside a %d-rank Kineto "
                "workload; give one per rank (or none)", w->source, n_paths, w->n_ranks);
    return FALSE;
  }
  pet_trace **by_rank = pet_read_ranks(paths, n_paths, error);
  if (by_rank == NULL)
    return FALSE;
  fe_pet_report local;
  fe_pet_report *rep = report ? report : &local;
  if (!report)
    fe_pet_report_init(&local);
  pet_report_traces(rep, by_rank, n_paths);
  gboolean ok = TRUE;
  link_edits ed = {g_array_new(FALSE, FALSE, sizeof(uint32_t)), g_array_new(FALSE, FALSE, sizeof(uint32_t)),
                   g_array_new(FALSE, FALSE, sizeof(uint64_t)), 0};
  for (int r = 0; ok && r < n_paths; r++) {
    g_array_set_size(ed.pairs, 0);
    g_array_set_size(ed.a2av_nodes, 0);
    g_array_set_size(ed.a2av_splits, 0);
    ed.width = 0;
    link_rank(by_rank[r], w, r, rep, &ed);
    if (ed.pairs->len == 0 && ed.a2av_nodes->len == 0)
      continue;
    et_graph *o = graph_plus_edges(w->ranks[r], &ed, error);
    if ((ok = o != NULL)) {
      et_graph_free(w->ranks[r]);
      w->ranks[r] = o;
    }
  }
  g_array_free(ed.pairs, TRUE);
  g_array_free(ed.a2av_nodes, TRUE);
  g_array_free(ed.a2av_splits, TRUE);
  if (ok)
    ok = et_workload_resolve_groups(w, error);
  for (int r = 0; r < n_paths; r++)
    pet_trace_free(by_rank[r]);
  g_free(by_rank);
  if (!report)
    fe_pet_report_clear(&local);
  return ok;
}
