/* pyt_et_graph.c: PyTorch execution traces alone to one et_graph per rank
 * (fe_pet_load, pyt_et.h), and the report shared with the linker.
 *
 * The operator tree (each node's "parent" / "ctrl_deps") is walked from its
 * roots in id order.  A record_param_comms collective becomes a COMM node;
 * an operator whose subtree issues no collective becomes one COMP node (its
 * children are its own implementation); process, thread, ProfilerStep and
 * "## name ##" annotation nodes are not operators and are walked through.
 * Edges: each CPU thread's nodes in the order it ran them (Chakra's
 * converter states this order as data_deps), plus a data dependency from
 * the last node that wrote a tensor to each node that reads it.  The trace
 * records no durations: COMP nodes take 0 s (what Chakra's converter does
 * without the Kineto half, whose COMP nodes have no duration either), so a
 * replay gives communication and dependency time only.  Time and memory
 * O(nodes + tensors) per rank.
 */
#include "frontends/pyt_et_internal.h"

#include <string.h>

void fe_pet_report_init(fe_pet_report *r)
{
  memset(r, 0, sizeof *r);
  r->lines = g_ptr_array_new_with_free_func(g_free);
  r->warnings = g_ptr_array_new_with_free_func(g_free);
}

void fe_pet_report_clear(fe_pet_report *r)
{
  if (r->lines)
    g_ptr_array_free(r->lines, TRUE);
  if (r->warnings)
    g_ptr_array_free(r->warnings, TRUE);
  g_free(r->schemas);
  memset(r, 0, sizeof *r);
}

void fe_pet_report_print(const fe_pet_report *r, FILE *out)
{
  fprintf(out, "PyTorch execution traces: %d rank(s), schema %s; %" G_GUINT64_FORMAT " nodes, %" G_GUINT64_FORMAT
          " collectives, %" G_GUINT64_FORMAT " waits\n", r->n_ranks, r->schemas ? r->schemas : "-", r->nodes, r->comms,
          r->waits);
  if (r->durations_unknown)
    fprintf(out, "durations: unknown (an execution trace records none): compute nodes take 0 s, so a replay gives "
            "communication and dependency time only; put the Kineto traces beside it for measured durations\n");
  else
    fprintf(out, "linked with Kineto: %" G_GUINT64_FORMAT " collective(s) linked, sizes equal %" G_GUINT64_FORMAT
            ", sizes differ %" G_GUINT64_FORMAT ", kinds differ %" G_GUINT64_FORMAT ", only in the execution trace %"
            G_GUINT64_FORMAT ", only in Kineto %" G_GUINT64_FORMAT "\n", r->linked, r->size_equal, r->size_differs,
            r->kind_differs, r->et_only, r->kineto_only);
  if (!r->durations_unknown && r->ranks_by_rf)
    fprintf(out, "joined by rf_id as Chakra's linker does (rf_id -> Kineto CPU op -> launch correlation -> kernel) on %"
            G_GUINT64_FORMAT " rank(s): %" G_GUINT64_FORMAT " collective(s) joined; not joined: no rf_id %"
            G_GUINT64_FORMAT ", no Kineto CPU op with the rf_id %" G_GUINT64_FORMAT ", CPU op without GPU activity %"
            G_GUINT64_FORMAT ", kernel outside the graph's window %" G_GUINT64_FORMAT "; joined to another node than "
            "the position join's %" G_GUINT64_FORMAT "\n", r->ranks_by_rf, r->rf_joined, r->rf_no_rfid, r->rf_no_op,
            r->rf_no_kernel, r->rf_outside, r->rf_position_differs);
  if (!r->durations_unknown)
    fprintf(out, "all_to_all written uniform from Kineto and given the execution trace's per-peer splits: %"
            G_GUINT64_FORMAT "\n", r->splits_added);
  if (!r->durations_unknown)
    fprintf(out, "dependencies between collectives the execution trace states: %" G_GUINT64_FORMAT "; already "
            "inferred from the timeline %" G_GUINT64_FORMAT ", added %" G_GUINT64_FORMAT ", contradicted by the "
            "measured timeline (not added) %" G_GUINT64_FORMAT "\n", r->deps_stated, r->deps_inferred_too,
            r->deps_added, r->deps_contradicted);
  for (guint i = 0; i < r->lines->len; i++)
    fprintf(out, "  %s\n", (const char *)r->lines->pdata[i]);
}

/* The tree: index of each node's parent (-1 for roots), children in id order. */
typedef struct {
  const pet_trace *t;
  int *parent;
  GArray **kids;          /* per node: guint indices, sorted by id */
  gboolean *has_comm;     /* the subtree issues a collective */
  et_builder *b;
  GHashTable *writer;     /* tensor id -> builder index + 1 of its last writer */
  GHashTable *last;       /* tid -> builder index + 1 of the thread's last node */
  GHashTable *pg_seq;     /* process-group handle -> 1 + the sequence number of its last collective emitted */
  uint64_t p2p_skipped;
  uint64_t seq_reordered; /* collectives emitted after a later call of their process group */
} pg_state;

static gboolean not_an_operator(const char *name)
{
  return g_str_has_prefix(name, "[pytorch|profiler|execution_") || g_str_has_prefix(name, "## ") ||
         g_str_has_prefix(name, "ProfilerStep#") || strcmp(name, "") == 0;
}

static int cmp_by_id(gconstpointer a, gconstpointer b, gpointer data)
{
  const pet_trace *t = data;
  uint64_t x = g_array_index(t->nodes, pet_node, *(const guint *)a).id;
  uint64_t y = g_array_index(t->nodes, pet_node, *(const guint *)b).id;
  return x < y ? -1 : x > y;
}

/* Parents, children and has_comm; a parent chain longer than the node count
 * (a cycle) stops the upward walk.  O(nodes log nodes + comms x depth). */
static void build_tree(pg_state *s)
{
  guint n = s->t->nodes->len;
  GHashTable *at = g_hash_table_new(g_int64_hash, g_int64_equal);
  for (guint i = 0; i < n; i++)
    g_hash_table_insert(at, &g_array_index(s->t->nodes, pet_node, i).id, GUINT_TO_POINTER(i + 1));
  s->parent = g_new(int, n);
  s->kids = g_new0(GArray *, n + 1);
  s->has_comm = g_new0(gboolean, n);
  for (guint i = 0; i < n; i++) {
    const pet_node *pn = &g_array_index(s->t->nodes, pet_node, i);
    guint p = GPOINTER_TO_UINT(g_hash_table_lookup(at, &pn->parent));
    s->parent[i] = p && p - 1 != i ? (int)p - 1 : -1;
    guint slot = s->parent[i] >= 0 ? (guint)s->parent[i] : n; /* kids[n]: the roots */
    if (s->kids[slot] == NULL)
      s->kids[slot] = g_array_new(FALSE, FALSE, sizeof(guint));
    g_array_append_val(s->kids[slot], i);
  }
  for (guint i = 0; i <= n; i++)
    if (s->kids[i])
      g_array_sort_with_data(s->kids[i], cmp_by_id, (gpointer)s->t);
  for (guint i = 0; i < n; i++) {
    if (g_array_index(s->t->nodes, pet_node, i).comm < 0)
      continue;
    int v = (int)i;
    for (guint steps = 0; v >= 0 && !s->has_comm[v] && steps <= n; steps++) {
      s->has_comm[v] = TRUE;
      v = s->parent[v];
    }
  }
  g_hash_table_destroy(at);
}

/* Orders node bi after the thread's previous node and after the writers of
 * the tensors it reads; then records what it writes. */
static void add_edges(pg_state *s, uint32_t bi, const pet_node *pn, const GArray *in, const GArray *out)
{
  guint last = GPOINTER_TO_UINT(g_hash_table_lookup(s->last, &pn->tid));
  if (last)
    et_builder_add_dep(s->b, bi, g_array_index(s->t->nodes, pet_node, last - 1).id, TRUE, FALSE);
  for (guint k = 0; in && k < in->len; k++) {
    guint w = GPOINTER_TO_UINT(g_hash_table_lookup(s->writer, &g_array_index(in, uint64_t, k)));
    if (w && w != last)
      et_builder_add_dep(s->b, bi, g_array_index(s->t->nodes, pet_node, w - 1).id, TRUE, FALSE);
  }
  for (guint k = 0; out && k < out->len; k++)
    g_hash_table_insert(s->writer, (gpointer)&g_array_index(out, uint64_t, k),
                        GUINT_TO_POINTER(pn - &g_array_index(s->t->nodes, pet_node, 0) + 1));
  g_hash_table_insert(s->last, (gpointer)&pn->tid, GUINT_TO_POINTER(pn - &g_array_index(s->t->nodes, pet_node, 0) + 1));
}

/* A COMM node for collective c of node pn (world group; splits when they
 * cover every rank). */
static void emit_comm(pg_state *s, const pet_node *pn, const pet_comm *c, int n_ranks)
{
  if (c->p2p) { /* peers are not recorded by record_param_comms: left to the thread order */
    s->p2p_skipped++;
    uint32_t bi = et_builder_add_node(s->b, pn->id, ET_NODE_COMP, c->op, 0, 0);
    add_edges(s, bi, pn, c->in_tensors, c->out_tensors);
    return;
  }
  et_comm ec = {0};
  ec.coll = (uint8_t)c->coll;
  ec.src = ec.dst = ec.tag = ec.root = -1;
  ec.bytes = c->in_bytes;
  uint64_t *splits = NULL;
  uint32_t n_splits = 0;
  if (c->coll == ET_COLL_ALL_TO_ALL && c->in_splits && (int)c->in_splits->len == n_ranks && c->elem_bytes > 0) {
    ec.coll = ET_COLL_ALL_TO_ALLV;
    n_splits = c->in_splits->len;
    splits = g_new(uint64_t, n_splits);
    for (uint32_t k = 0; k < n_splits; k++)
      splits[k] = g_array_index(c->in_splits, uint64_t, k) * (uint64_t)c->elem_bytes;
  } else if (c->coll == ET_COLL_ALL_TO_ALLV && !(c->in_splits && (int)c->in_splits->len == n_ranks)) {
    ec.coll = ET_COLL_ALL_TO_ALL;
  } else if (c->coll == ET_COLL_ALL_TO_ALLV) {
    n_splits = c->in_splits->len;
    splits = g_new(uint64_t, n_splits);
    for (uint32_t k = 0; k < n_splits; k++)
      splits[k] = g_array_index(c->in_splits, uint64_t, k) * (uint64_t)c->elem_bytes;
  }
  /* The replay matches a rank's collectives in the graph's node order
   * (replay/rp_order.c); the process group's sequence numbers are the
   * order the rank really called them in, so a call emitted after a later
   * one of its group is counted (fe_pet_load warns). */
  if (c->seq >= 0) {
    uint64_t *pg = g_new(uint64_t, 1);
    *pg = c->pg;
    int64_t last = (int64_t)GPOINTER_TO_SIZE(g_hash_table_lookup(s->pg_seq, pg)) - 1;
    s->seq_reordered += c->seq < last;
    g_hash_table_insert(s->pg_seq, pg, GSIZE_TO_POINTER((gsize)MAX(last, c->seq) + 1));
  }
  uint32_t bi = et_builder_add_node(s->b, pn->id, ET_NODE_COMM_COLL, c->op, 0, 0);
  et_builder_set_comm(s->b, bi, &ec, NULL, splits, n_splits);
  g_free(splits);
  add_edges(s, bi, pn, c->in_tensors, c->out_tensors);
}

/* The walk: preorder from the roots, children in id order, with an
 * explicit stack (traces nest deeply). */
static void walk(pg_state *s, int n_ranks)
{
  guint n = s->t->nodes->len;
  GArray *stack = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint k = s->kids[n] ? s->kids[n]->len : 0; k > 0; k--)
    g_array_append_val(stack, g_array_index(s->kids[n], guint, k - 1));
  gboolean *seen = g_new0(gboolean, n);
  while (stack->len > 0) {
    guint i = g_array_index(stack, guint, stack->len - 1);
    g_array_set_size(stack, stack->len - 1);
    if (seen[i])
      continue;
    seen[i] = TRUE;
    const pet_node *pn = &g_array_index(s->t->nodes, pet_node, i);
    if (pn->comm >= 0) {
      emit_comm(s, pn, &g_array_index(s->t->comms, pet_comm, pn->comm), n_ranks);
      continue;
    }
    if (pn->wait)
      continue;
    if (!s->has_comm[i] && !not_an_operator(pn->name)) {
      uint32_t bi = et_builder_add_node(s->b, pn->id, ET_NODE_COMP, pn->name, 0, 0);
      add_edges(s, bi, pn, pn->in_tensors, pn->out_tensors);
      continue;
    }
    for (guint k = s->kids[i] ? s->kids[i]->len : 0; k > 0; k--)
      g_array_append_val(stack, g_array_index(s->kids[i], guint, k - 1));
  }
  g_free(seen);
  g_array_free(stack, TRUE);
}

static void state_clear(pg_state *s)
{
  guint n = s->t->nodes->len;
  for (guint i = 0; i <= n; i++)
    if (s->kids[i])
      g_array_free(s->kids[i], TRUE);
  g_free(s->kids);
  g_free(s->parent);
  g_free(s->has_comm);
  g_hash_table_destroy(s->writer);
  g_hash_table_destroy(s->last);
  g_hash_table_destroy(s->pg_seq);
}

et_graph *pet_rank_graph(const pet_trace *t, int n_ranks, uint64_t *p2p_skipped, uint64_t *seq_reordered,
                         GError **error)
{
  pg_state s = {0};
  s.t = t;
  s.b = et_builder_new(t->path);
  char *v = g_strdup_printf("pytorch-et-%s", t->schema);
  et_builder_set_version(s.b, v);
  g_free(v);
  s.writer = g_hash_table_new(g_int64_hash, g_int64_equal);
  s.last = g_hash_table_new(g_int64_hash, g_int64_equal);
  s.pg_seq = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  build_tree(&s);
  walk(&s, n_ranks);
  *p2p_skipped += s.p2p_skipped;
  *seq_reordered += s.seq_reordered;
  state_clear(&s);
  return et_builder_finish(s.b, 0, error);
}

pet_trace **pet_read_ranks(const char *const *paths, int n_paths, GError **error)
{
  pet_trace **by_rank = g_new0(pet_trace *, n_paths);
  for (int i = 0; i < n_paths; i++) {
    pet_trace *t = pet_trace_read(paths[i], error);
    const char *bad = NULL;
    if (t && n_paths == 1)
      t->rank = 0; /* one trace: the one rank, whatever its name */
    if (t && t->rank < 0)
      bad = "its name ends in no rank number (name the files ..._0.json, ..._1.json, ...)";
    else if (t && t->rank >= n_paths)
      bad = "its rank number is not below the number of execution traces given";
    else if (t && by_rank[t->rank])
      bad = "another file names the same rank";
    if (t == NULL || bad) {
      if (bad)
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: %s (%d file(s) given)", paths[i], bad, n_paths);
      pet_trace_free(t);
      for (int r = 0; r < n_paths; r++)
        pet_trace_free(by_rank[r]);
      g_free(by_rank);
      return NULL;
    }
    by_rank[t->rank] = t;
  }
  return by_rank;
}

void pet_report_traces(fe_pet_report *rep, pet_trace *const *by_rank, int n)
{
  GString *schemas = g_string_new(NULL);
  rep->n_ranks = n;
  for (int r = 0; r < n; r++) {
    rep->nodes += by_rank[r]->nodes->len;
    rep->comms += by_rank[r]->comms->len;
    rep->waits += by_rank[r]->waits;
    char *needle = g_strdup_printf("%s,", by_rank[r]->schema);
    char *hay = g_strdup_printf("%s,", schemas->str);
    if (!strstr(hay, needle))
      g_string_append_printf(schemas, "%s%s", schemas->len ? "," : "", by_rank[r]->schema);
    g_free(needle);
    g_free(hay);
  }
  g_free(rep->schemas);
  rep->schemas = g_string_free(schemas, FALSE);
}

et_workload *fe_pet_load(const char *const *paths, int n_paths, fe_pet_report *report, GError **error)
{
  g_return_val_if_fail(n_paths > 0, NULL);
  pet_trace **by_rank = pet_read_ranks(paths, n_paths, error);
  if (by_rank == NULL)
    return NULL;
  et_workload *w = et_workload_new(n_paths, n_paths == 1 ? paths[0] : "(PyTorch execution traces)");
  uint64_t p2p = 0, reordered = 0;
  gboolean ok = TRUE;
  for (int r = 0; ok && r < n_paths; r++)
    ok = (w->ranks[r] = pet_rank_graph(by_rank[r], n_paths, &p2p, &reordered, error)) != NULL;
  if (ok)
    ok = et_workload_resolve_groups(w, error);
  if (ok && report) {
    pet_report_traces(report, by_rank, n_paths);
    report->durations_unknown = TRUE;
    if (report->comms > 0)
      g_ptr_array_add(report->warnings, g_strdup_printf(
        "%" G_GUINT64_FORMAT " collective(s) taken as world collectives: the execution traces name a process "
        "group by an opaque handle, not by its ranks", report->comms - p2p));
    if (reordered)
      g_ptr_array_add(report->warnings, g_strdup_printf(
        "%" G_GUINT64_FORMAT " collective(s) come after a later call of their process group in the operator tree's "
        "order (record_param_comms' sequence numbers): the replay matches each rank's calls in the tree's order",
        reordered));
    if (p2p)
      g_ptr_array_add(report->warnings, g_strdup_printf(
        "%" G_GUINT64_FORMAT " send/recv op(s) kept as 0 s compute: record_param_comms does not record the peer",
        p2p));
    g_ptr_array_add(report->warnings, g_strdup(
      "durations unknown: an execution trace records none, so compute takes 0 s and the replay gives communication "
      "and dependency time only (put the rank's Kineto trace beside it for measured durations)"));
  }
  for (int r = 0; r < n_paths; r++)
    pet_trace_free(by_rank[r]);
  g_free(by_rank);
  if (!ok) {
    et_workload_free(w);
    return NULL;
  }
  return w;
}
