/* pyt_et_link.c: links PyTorch execution traces with the graphs the Kineto
 * frontend built from the same ranks (fe_pet_link, pyt_et.h).
 *
 * Chakra's trace linker joins an execution-trace node to its Kineto CPU op
 * by the record-function id (rf_id = Kineto's "Record function id") and the
 * CPU op to its GPU kernels by the launch's correlation id.  The Kineto
 * frontend has already made that second join (it sizes each communication
 * kernel from the record_param_comms CPU op around its launch) and keeps
 * one COMM node per communication kernel, in the order the GPU ran them.
 * When the Kineto traces are given and carry "Record function id"s, each
 * execution-trace collective is joined to its kernel that way
 * (pyt_et_rfid.c), and the kernel to the graph's communication node that
 * starts when it did (the graph's window is placed on the trace's clock by
 * the offset that lands the most joined kernels on nodes).  Each way a
 * collective fails to join is counted (no rf_id, no CPU op with it, an op
 * with no GPU activity, a kernel outside the graph), and so are joins that
 * differ from the position join.  Otherwise (no Kineto paths, or traces
 * without Record function ids, PyTorch before 2.1 such as the DLRM set): a
 * rank issues its collectives in one order on one communicator stream, so
 * the k-th record_param_comms collective of the execution trace (id order)
 * is linked to the k-th communication node of the graph (measured start
 * order).  Either way the link is then checked: the kinds must agree, and
 * the sizes are compared (all_to_allv: the per-peer splits).
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

/* The tolerance of a kernel start against a graph node's: 1 us, above the
 * rounding of epoch-based Kineto timestamps read as doubles. */
#define RF_TOL_PS INT64_C(1000000)

/* The graph comm node (index into gc) starting at ps (within RF_TOL_PS),
 * -1 when none; of several (kernels of two streams starting together), one
 * of pc's kind when pc is given, then the nearest.  gc is in start order:
 * binary search, O(log n + candidates). */
static int node_at(const et_graph *g, const GArray *gc, int64_t ps, const pet_comm *pc)
{
  guint lo = 0, hi = gc->len;
  while (lo < hi) {
    guint mid = (lo + hi) / 2;
    if ((int64_t)g->nodes[g_array_index(gc, uint32_t, mid)].start_ps < ps - RF_TOL_PS)
      lo = mid + 1;
    else
      hi = mid;
  }
  int best = -1;
  gboolean best_kind = FALSE;
  int64_t best_d = 0;
  for (guint i = lo; i < gc->len && (int64_t)g->nodes[g_array_index(gc, uint32_t, i)].start_ps <= ps + RF_TOL_PS; i++) {
    uint32_t node = g_array_index(gc, uint32_t, i);
    int64_t d = (int64_t)g->nodes[node].start_ps - ps;
    d = d < 0 ? -d : d;
    gboolean kind = pc && same_kind(pc->coll, pc->p2p, g, node);
    if (best < 0 || (kind && !best_kind) || (kind == best_kind && d < best_d)) {
      best = (int)i;
      best_kind = kind;
      best_d = d;
    }
  }
  return best;
}

/* Where the graph's clock (its window) starts on the Kineto trace's: the
 * offset that puts the most rf_id-joined kernels on a graph comm node;
 * candidates pair the first joined kernel with each node, each scored on
 * at most RF_SCORE_MAX joined kernels.  O(nodes x RF_SCORE_MAX x log
 * nodes). */
#define RF_SCORE_MAX 64
static int64_t rf_offset(const et_graph *g, const GArray *gc, const pet_rf_links *rf)
{
  int64_t first = -1, best_o = 0;
  guint best = 0;
  for (guint k = 0; k < rf->status->len && first < 0; k++)
    if (g_array_index(rf->status, int, k) == PET_RF_LINKED)
      first = g_array_index(rf->kernel_ps, int64_t, k);
  for (guint j = 0; first >= 0 && j < gc->len; j++) {
    int64_t o = first - (int64_t)g->nodes[g_array_index(gc, uint32_t, j)].start_ps;
    guint hits = 0, tried = 0;
    for (guint k = 0; k < rf->status->len && tried < RF_SCORE_MAX; k++) {
      if (g_array_index(rf->status, int, k) != PET_RF_LINKED)
        continue;
      tried++;
      hits += node_at(g, gc, g_array_index(rf->kernel_ps, int64_t, k) - o, NULL) >= 0;
    }
    if (hits > best) {
      best = hits;
      best_o = o;
    }
  }
  return best_o;
}

/* et_to_g[k]: the graph node of the trace's k-th collective, ET_NONE when
 * unlinked.  By rf_id when rf has the join (counting each way a collective
 * failed to link, and links that differ from the position join), else the
 * k-th collective to the k-th comm node. */
static void map_collectives(const pet_trace *t, const et_graph *g, const GArray *gc, const pet_rf_links *rf,
                            uint32_t *et_to_g, fe_pet_report *rep)
{
  guint n_et = t->comms->len;
  for (guint k = 0; k < n_et; k++)
    et_to_g[k] = !rf || !rf->has_rf ? (k < gc->len ? g_array_index(gc, uint32_t, k) : ET_NONE) : ET_NONE;
  if (!rf || !rf->has_rf)
    return;
  int64_t o = rf_offset(g, gc, rf);
  guint8 *taken = g_malloc0(gc->len + 1);
  for (guint k = 0; k < n_et && k < rf->status->len; k++) {
    int st = g_array_index(rf->status, int, k);
    rep->rf_no_rfid += st == PET_RF_NO_RFID;
    rep->rf_no_op += st == PET_RF_NO_OP;
    rep->rf_no_kernel += st == PET_RF_NO_KERNEL;
    if (st != PET_RF_LINKED)
      continue;
    int j = node_at(g, gc, g_array_index(rf->kernel_ps, int64_t, k) - o, &g_array_index(t->comms, pet_comm, k));
    if (j < 0 || taken[j]) {
      rep->rf_outside++; /* the kernel is not one of the graph's (outside its window) or was joined already */
      continue;
    }
    taken[j] = 1;
    et_to_g[k] = g_array_index(gc, uint32_t, j);
    rep->rf_joined++;
    rep->rf_position_differs += (guint)j != k;
  }
  g_free(taken);
}

/* Kinds and sizes of the linked pairs; returns how many are of equal size. */
static guint check_pairs(const pet_trace *t, const et_workload *w, int r, const uint32_t *et_to_g, fe_pet_report *rep,
                         link_edits *ed)
{
  const et_graph *g = w->ranks[r];
  guint eq = 0;
  for (guint k = 0; k < t->comms->len; k++) {
    if (et_to_g[k] == ET_NONE)
      continue;
    const pet_comm *pc = &g_array_index(t->comms, pet_comm, k);
    uint32_t node = et_to_g[k];
    char *what = NULL;
    rep->linked++;
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
  }
  rep->size_equal += eq;
  return eq;
}

/* The dependencies the trace states between linked collectives, checked
 * against the graph; the ones to add go to ed->pairs.  Counts in c[4]:
 * stated, inferred too, added, contradicted. */
static void check_deps(const pet_trace *t, const et_graph *g, const uint32_t *et_to_g, link_edits *ed, uint64_t c[4])
{
  guint8 *mark = g_malloc0(g->n_nodes ? g->n_nodes : 1);
  GArray *stack = g_array_new(FALSE, FALSE, sizeof(uint32_t)), *deps = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint a = 0; a < t->comms->len; a++) {
    if (et_to_g[a] == ET_NONE)
      continue;
    g_array_set_size(deps, 0);
    stated_after(t, a, deps);
    for (guint k = 0; k < deps->len; k++) {
      guint bi = g_array_index(deps, guint, k);
      if (et_to_g[bi] == ET_NONE)
        continue;
      uint32_t ga = et_to_g[a], gb = et_to_g[bi];
      c[0]++;
      const et_node *na = &g->nodes[ga], *nb = &g->nodes[gb];
      if (reaches(g, ga, gb, mark, stack)) {
        c[1]++;
      } else if (reaches(g, gb, ga, mark, stack) || ((na->flags & ET_FLAG_HAS_START) && (nb->flags & ET_FLAG_HAS_START) &&
                 nb->start_ps < na->start_ps + na->duration_ps)) {
        c[3]++; /* the graph orders B before A, or B began before A ended */
      } else {
        c[2]++;
        g_array_append_val(ed->pairs, ga);
        g_array_append_val(ed->pairs, gb);
      }
    }
  }
  g_free(mark);
  g_array_free(stack, TRUE);
  g_array_free(deps, TRUE);
}

/* Links one rank: the join (rf_id or position), kinds and sizes, then the
 * stated dependencies; the graph edits go to ed. */
static void link_rank(const pet_trace *t, const et_workload *w, int r, const pet_rf_links *rf, fe_pet_report *rep,
                      link_edits *ed)
{
  const et_graph *g = w->ranks[r];
  GArray *gc = graph_comms(g);
  guint n_et = t->comms->len;
  uint32_t *et_to_g = g_new(uint32_t, n_et + 1);
  map_collectives(t, g, gc, rf, et_to_g, rep);
  uint64_t before = rep->linked;
  guint eq = check_pairs(t, w, r, et_to_g, rep, ed);
  guint n = (guint)(rep->linked - before);
  rep->et_only += n_et - n;
  rep->kineto_only += gc->len - n;
  uint64_t c[4] = {0, 0, 0, 0};
  check_deps(t, g, et_to_g, ed, c);
  rep->deps_stated += c[0];
  rep->deps_inferred_too += c[1];
  rep->deps_added += c[2];
  rep->deps_contradicted += c[3];
  if (rf && rf->has_rf)
    rep->ranks_by_rf++;
  g_ptr_array_add(rep->lines, g_strdup_printf(
    "rank %d: %s (schema %s, %u nodes): %u of %u collective(s) linked %s to the Kineto graph's %u, %u of equal size; "
    "stated dependencies %" G_GUINT64_FORMAT " (inferred too %" G_GUINT64_FORMAT ", added %" G_GUINT64_FORMAT
    ", contradicted %" G_GUINT64_FORMAT ")", r, t->path, t->schema, t->nodes->len, n, n_et,
    rf && rf->has_rf ? "by rf_id" : "by position", gc->len, eq, c[0], c[1], c[2], c[3]));
  g_free(et_to_g);
  g_array_free(gc, TRUE);
}

/* rf[r]: the rf_id join of rank r from the Kineto trace that states r
 * (has_rf FALSE where none does); the first reason no join was possible
 * goes to the report.  FALSE when a Kineto file cannot be read. */
static gboolean rf_joins(pet_trace *const *by_rank, int n, const char *const *kineto_paths, int n_kineto,
                         pet_rf_links *rf, fe_pet_report *rep, GError **error)
{
  gboolean said = FALSE;
  for (int i = 0; i < n_kineto; i++) {
    pet_rf_links l;
    if (!pet_rf_link_kineto(by_rank, n, kineto_paths[i], &l, error)) {
      pet_rf_links_clear(&l);
      return FALSE;
    }
    if (l.has_rf && !rf[l.rank].has_rf) {
      rf[l.rank] = l;
      continue;
    }
    if (!l.has_rf && !said) {
      g_ptr_array_add(rep->lines, g_strdup_printf("no rf_id join (linked by position instead): %s", l.why));
      said = TRUE;
    } else if (l.has_rf) {
      g_ptr_array_add(rep->warnings, g_strdup_printf("%s: a second Kineto trace of rank %d; its rf_id join is not "
                                                     "used", kineto_paths[i], l.rank));
    }
    pet_rf_links_clear(&l);
  }
  return TRUE;
}

gboolean fe_pet_link(et_workload *w, const char *const *paths, int n_paths, fe_pet_report *report, GError **error)
{
  return fe_pet_link_kineto(w, paths, n_paths, NULL, 0, report, error);
}

gboolean fe_pet_link_kineto(et_workload *w, const char *const *paths, int n_paths, const char *const *kineto_paths,
                            int n_kineto, fe_pet_report *report, GError **error)
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
  pet_rf_links *rf = g_new0(pet_rf_links, n_paths);
  gboolean ok = rf_joins(by_rank, n_paths, kineto_paths, n_kineto, rf, rep, error);
  link_edits ed = {g_array_new(FALSE, FALSE, sizeof(uint32_t)), g_array_new(FALSE, FALSE, sizeof(uint32_t)),
                   g_array_new(FALSE, FALSE, sizeof(uint64_t)), 0};
  for (int r = 0; ok && r < n_paths; r++) {
    g_array_set_size(ed.pairs, 0);
    g_array_set_size(ed.a2av_nodes, 0);
    g_array_set_size(ed.a2av_splits, 0);
    ed.width = 0;
    link_rank(by_rank[r], w, r, &rf[r], rep, &ed);
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
  for (int r = 0; r < n_paths; r++) {
    pet_trace_free(by_rank[r]);
    pet_rf_links_clear(&rf[r]);
  }
  g_free(rf);
  g_free(by_rank);
  if (!report)
    fe_pet_report_clear(&local);
  return ok;
}
