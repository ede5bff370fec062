/* kineto_work.c: the Kineto load's inputs (paths expanded, ranks from
 * names, --replicate-from lists, replicated ranks) and the per-file work
 * of its parallel phases (parse, extract, graph and et_graph per rank),
 * called by kineto.c's phases; see kineto.c for the threading.
 */
#include "config.h"

#include "frontends/kineto_load_internal.h"
#include "common/wisp_par.h"

#include <string.h>

/* ---- inputs ---- */

static gboolean is_trace_name(const char *n)
{
  return g_str_has_suffix(n, ".json") || g_str_has_suffix(n, ".json.gz");
}

gboolean fe_kineto_looks_like_trace(const char *path)
{
  if (!g_file_test(path, G_FILE_TEST_IS_DIR)) {
    char *base = g_path_get_basename(path);
    gboolean r = is_trace_name(base) && !g_str_has_prefix(base, "comm_group");
    g_free(base);
    return r && g_file_test(path, G_FILE_TEST_EXISTS);
  }
  GDir *d = g_dir_open(path, 0, NULL);
  if (!d)
    return FALSE;
  gboolean json = FALSE, et = FALSE;
  const char *e;
  while ((e = g_dir_read_name(d))) {
    if (g_str_has_suffix(e, ".et") || g_str_has_suffix(e, ".et.gz"))
      et = TRUE;
    else if (is_trace_name(e) && !g_str_has_prefix(e, "comm_group"))
      json = TRUE;
  }
  g_dir_close(d);
  return json && !et;
}

GPtrArray *kt_expand_paths(const char *const *paths, int n, GError **error)
{
  GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
  for (int i = 0; i < n; i++) {
    if (g_file_test(paths[i], G_FILE_TEST_IS_DIR)) {
      GDir *d = g_dir_open(paths[i], 0, error);
      if (!d) {
        g_ptr_array_free(files, TRUE);
        return NULL;
      }
      GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
      const char *e;
      while ((e = g_dir_read_name(d)))
        if (is_trace_name(e))
          g_ptr_array_add(names, g_build_filename(paths[i], e, NULL));
      g_dir_close(d);
      g_ptr_array_sort(names, (GCompareFunc)kt_cmp_str);
      if (!names->len) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: no *.json or *.json.gz trace files in this directory",
                    paths[i]);
        g_ptr_array_free(names, TRUE);
        g_ptr_array_free(files, TRUE);
        return NULL;
      }
      for (guint k = 0; k < names->len; k++)
        g_ptr_array_add(files, g_strdup(g_ptr_array_index(names, k)));
      g_ptr_array_free(names, TRUE);
    } else if (g_file_test(paths[i], G_FILE_TEST_EXISTS)) {
      g_ptr_array_add(files, g_strdup(paths[i]));
    } else {
      g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: no such file or directory", paths[i]);
      g_ptr_array_free(files, TRUE);
      return NULL;
    }
  }
  if (!files->len) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "no trace files given");
    g_ptr_array_free(files, TRUE);
    return NULL;
  }
  return files;
}

/* Rank from a file name: "rank-3", "rank_3", "rank3", "worker3" (case-insensitive). */
int kt_rank_from_name(const char *path)
{
  char *base = g_path_get_basename(path);
  char *l = g_ascii_strdown(base, -1);
  g_free(base);
  int r = -1;
  static const char *const tags[] = { "rank", "worker" };
  for (size_t t = 0; t < G_N_ELEMENTS(tags) && r < 0; t++) {
    const char *p = strstr(l, tags[t]);
    if (!p)
      continue;
    p += strlen(tags[t]);
    if (*p == '-' || *p == '_')
      p++;
    if (g_ascii_isdigit(*p))
      r = (int)g_ascii_strtoll(p, NULL, 10);
  }
  g_free(l);
  return r;
}

static void fill_rank_report(fe_kineto_rank_report *rr, const kt_trace *t)
{
  rr->bytes_read = t->bytes_read;
  rr->events_read = t->events_read;
  rr->device_name = g_strdup(t->device_name);
  rr->memory_allocs = t->memory_allocs;
  rr->memory_frees = t->memory_frees;
  for (guint i = 0; i < t->events->len; i++) {
    const kt_event *e = &g_array_index(t->events, kt_event, i);
    switch (e->kind) {
    case KT_EV_KERNEL: rr->kernels++; break;
    case KT_EV_MEMCPY: rr->memcpys++; break;
    case KT_EV_MEMSET: rr->memsets++; break;
    case KT_EV_LAUNCH: rr->launches++; break;
    case KT_EV_RECORD: case KT_EV_WAIT: case KT_EV_HOST_SYNC: rr->sync_calls++; break;
    case KT_EV_CUDA_SYNC: rr->cuda_sync_events++; break;
    case KT_EV_CPU_COMM: rr->cpu_comm_ops++; break;
    default: break;
    }
  }
  rr->skipped = g_hash_table_new(g_str_hash, g_str_equal);
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, t->skipped);
  while (g_hash_table_iter_next(&it, &k, &v))
    kt_count_skip(rr->skipped, k, GPOINTER_TO_SIZE(v));
  if (t->missing_dur)
    kt_count_skip(rr->skipped, "complete events without dur (kept with duration 0)", t->missing_dur);
}

void kt_add_warning(GPtrArray *w, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_ptr_array_add(w, g_strdup_vprintf(fmt, ap));
  va_end(ap);
}

/* Parses "0" or "0,2" into a list of source ranks. */
GArray *kt_parse_rank_list(const char *s)
{
  GArray *a = g_array_new(FALSE, FALSE, sizeof(int));
  char **parts = g_strsplit(s, ",", -1);
  for (char **p = parts; *p; p++) {
    char *end;
    gint64 v = g_ascii_strtoll(*p, &end, 10);
    if (end == *p || *end || v < 0 || v > INT32_MAX) {
      g_array_set_size(a, 0);
      break;
    }
    int iv = (int)v;
    g_array_append_val(a, iv);
  }
  g_strfreev(parts);
  return a;
}

/* A copy of src's extraction relabelled as rank `to`: groups not containing
 * `to` are shifted by (to - from) modulo the world size (symmetric-job
 * assumption, reported by the caller), except the groups a workload card
 * made (group key "card:..."): those are the aligned blocks of consecutive
 * ranks [k n, (k+1) n) of kt_commreg_card_size, so `to` gets the block
 * holding it (a shift would give rank 20 of EP16 the members 20..35, which
 * no other rank has and which straddle nodes).  The copy shares only the trace;
 * everything kt_rank_free frees is its own. */
static gpointer copy_str(gconstpointer s, gpointer unused)
{
  (void)unused;
  return g_strdup(s);
}

kt_rank *kt_replicate_rank(const kt_rank *src, int to, int world)
{
  kt_rank *r = g_new0(kt_rank, 1);
  *r = *src;
  r->rank = to;
  r->ops = g_array_copy(src->ops);
  r->comms = g_array_copy(src->comms);
  r->buf_links = src->buf_links ? g_memdup2(src->buf_links, sizeof(kt_buf_link) * src->comms->len) : NULL;
  r->stream_keys = g_memdup2(src->stream_keys, sizeof(int64_t) * (src->n_streams ? src->n_streams : 1));
  r->stream_first = g_memdup2(src->stream_first, sizeof(uint32_t) * (src->n_streams + 1));
  r->warnings = g_ptr_array_new_with_free_func(g_free);
  r->skipped = g_hash_table_new(g_str_hash, g_str_equal);
  r->sync_edges = g_array_copy(src->sync_edges);
  r->sync_targets = g_array_copy(src->sync_targets);
  r->steps_dropped = src->steps_dropped ? g_string_new(src->steps_dropped->str) : NULL;
  r->modules = src->modules ? g_ptr_array_copy(src->modules, copy_str, NULL) : NULL;
  if (r->modules)
    g_ptr_array_set_free_func(r->modules, g_free);
  r->op_module = src->op_module ? g_memdup2(src->op_module, sizeof(uint32_t) * src->ops->len) : NULL;
  int shift = to - src->rank;
  for (guint i = 0; i < r->comms->len; i++) {
    kt_comm *c = &g_array_index(r->comms, kt_comm, i);
    c->ranks = g_memdup2(c->ranks, sizeof(int) * (gsize)c->n_ranks);
    c->splits = c->splits ? g_memdup2(c->splits, sizeof(uint64_t) * (gsize)c->n_ranks) : NULL;
    gboolean member = FALSE;
    for (int k = 0; k < c->n_ranks; k++)
      member |= c->ranks[k] == to;
    gboolean card_block = g_str_has_prefix(c->group_key, "card:") && c->n_ranks > 0 && world % c->n_ranks == 0;
    if (!member && card_block)
      for (int k = 0; k < c->n_ranks; k++)
        c->ranks[k] = to / c->n_ranks * c->n_ranks + k;
    else if (!member)
      for (int k = 0; k < c->n_ranks; k++)
        c->ranks[k] = ((c->ranks[k] + shift) % world + world) % world;
    if (c->peer >= 0)
      c->peer = ((c->peer + shift) % world + world) % world;
    const char *bar = strchr(c->group_key, '|');
    GString *key = g_string_new_len(c->group_key, bar - c->group_key + 1);
    for (int k = 0; k < c->n_ranks; k++)
      g_string_append_printf(key, "%s%d", k ? "," : "", c->ranks[k]);
    c->group_key = g_string_free(key, FALSE);
  }
  return r;
}

/* Converts a kt_graph of rank r (matching's verdicts rm) to an et_graph.
 * Node ids are indices. */
static et_graph *to_et(const kt_rank *r, const kt_rank_match *rm, const kt_graph *g, const char *source,
                       uint64_t *a2av_uniform, GError **error)
{
  et_builder *b = et_builder_new(source);
  et_builder_set_compute_slots(b, g->compute_slots);
  uint32_t split_width = 0;
  for (guint i = 0; i < g->nodes->len; i++) {
    const kt_node *n = &g_array_index(g->nodes, kt_node, i);
    uint32_t idx = et_builder_add_node(b, i, (et_node_type)n->type, n->name, n->dur, n->flags & ~ET_FLAG_HAS_START);
    et_builder_set_start(b, idx, n->start);
    if (n->op != KT_NONE && n->type == ET_NODE_COMP) {
      const kt_op *cp = &g_array_index(r->ops, kt_op, n->op);
      uint64_t bytes = (uint64_t)cp->bytes_hi << 32 | cp->bytes_lo; /* a memcpy / memset's size, else 0 */
      if (bytes)
        et_builder_set_comp_attrs(b, idx, 0, TRUE, bytes);
    }
    if (n->op != KT_NONE && r->op_module) { /* the module ranges around its launch (kineto_annot.c) */
      uint32_t mod = r->op_module[n->op];
      if (mod != KT_NONE)
        et_builder_set_module(b, idx, g_ptr_array_index(r->modules, mod));
    }
    if (n->op == KT_NONE || n->type == ET_NODE_COMP)
      continue;
    const kt_op *op = &g_array_index(r->ops, kt_op, n->op);
    const kt_comm *c = &g_array_index(r->comms, kt_comm, op->comm);
    uint32_t group = rm->comms[op->comm].group;
    char gname[16];
    g_snprintf(gname, sizeof gname, "%u", group + 1);
    et_comm ec = { 0 };
    ec.bytes = c->bytes;
    ec.src = ec.dst = ec.tag = -1;
    ec.root = c->root;
    ec.coll = c->p2p ? ET_COLL_NONE : (uint8_t)c->coll;
    ec.two_hop = c->two_hop;
    ec.two_hop_ppm = c->two_hop_ppm;
    /* Send/recv pairs match in order per (source, destination, tag); the
     * tag is the pair's own (kt_comm_match.tag: matching paired them in
     * their ranks' issue order), so a receive the replay posts early on a
     * stream of its own cannot take another pair's send, and Chakra files
     * carry the comm_tag their readers need. */
    if (c->p2p == 1) {
      ec.src = r->rank;
      ec.dst = c->peer;
      ec.tag = rm->comms[op->comm].tag;
    } else if (c->p2p == 2) {
      ec.src = c->peer;
      ec.dst = r->rank;
      ec.tag = rm->comms[op->comm].tag;
    }
    const uint64_t *splits = NULL;
    uint32_t ns = 0;
    if (c->coll == ET_COLL_ALL_TO_ALLV && !c->p2p) {
      if (c->splits && (split_width == 0 || split_width == (uint32_t)c->n_ranks)) {
        splits = c->splits;
        ns = (uint32_t)c->n_ranks;
        split_width = ns;
      } else {
        ec.coll = ET_COLL_ALL_TO_ALL;
        ec.two_hop = 0;
        (*a2av_uniform)++;
      }
    }
    et_builder_set_comm(b, idx, &ec, gname, splits, ns);
  }
  for (guint i = 0; i < g->edges->len; i++) {
    kt_edge e = g_array_index(g->edges, kt_edge, i);
    et_builder_add_dep(b, e.child, e.parent, FALSE, TRUE);
  }
  return et_builder_finish(b, 0, error);
}

/* Copies r's buffer links into the finished graph eg that was built from g
 * (the et_graph node id of kt_graph node i is i, as in to_et): every COMM
 * node whose kernel is linked gets buffer = Addr and alloc_ps (kineto_mem.h;
 * doc/libraries.md §4.1).  O(nodes). */
static void apply_buffer_links(const kt_rank *r, const kt_graph *g, et_graph *eg)
{
  const kt_buf_link *links = r->buf_links;
  for (uint32_t k = 0; k < eg->n_nodes; k++) {
    et_node *en = &eg->nodes[k];
    if (en->comm == ET_NONE || en->id >= g->nodes->len)
      continue;
    const kt_node *n = &g_array_index(g->nodes, kt_node, (guint)en->id);
    if (n->op == KT_NONE || n->type == ET_NODE_COMP)
      continue;
    uint32_t ci = g_array_index(r->ops, kt_op, n->op).comm;
    if (ci == KT_NONE || links[ci].buffer == 0)
      continue;
    et_comm *c = &eg->comms[en->comm];
    c->buffer = links[ci].buffer;
    c->has_alloc = 1;
    c->alloc_ps = links[ci].alloc_ps;
  }
}

/* ---- parallel per-file work ---- */

/* Resolves the number of workers: opt->threads, else WISP_THREADS, else the
 * number of processors.  A malformed WISP_THREADS is the user's to fix. */
gboolean kt_resolve_threads(const fe_kineto_options *opt, int *threads, GError **error)
{
  if (opt->threads > 0) {
    *threads = opt->threads;
    return TRUE;
  }
  return wisp_threads_default(threads, error);
}

/* extract_ranks for one file: the CPU-only check, then kt_rank_extract. */
static kt_rank *extract_one(kt_trace *t, int rank, int world, const fe_kineto_options *opt, GError **error)
{
  uint64_t gpu = 0;
  for (guint q = 0; q < t->events->len; q++) {
    uint8_t k = g_array_index(t->events, kt_event, q).kind;
    gpu += k == KT_EV_KERNEL || k == KT_EV_MEMCPY || k == KT_EV_MEMSET;
  }
  if (!gpu) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED,
                "%s: no GPU kernels, memcpys or memsets: a CPU-only trace%s%s%s cannot be turned into a GPU "
                "execution graph", t->path, t->backend ? " (backend " : "", t->backend ? t->backend : "",
                t->backend ? ")" : "");
    return NULL;
  }
  return kt_rank_extract(t, rank, world, opt, error);
}

/* The rank identify_file gives a file (distributedInfo.rank, else the file
 * name, else 0 for a single file), or -1 when it gives none (an error
 * there).  The same decision as identify_file's, without its reporting. */
static int file_rank(const kt_trace *t, const char *path, int nf)
{
  if (t->rank != KT_ABSENT && t->rank >= 0 && t->rank <= INT32_MAX)
    return (int)t->rank;
  int fr = kt_rank_from_name(path);
  return fr >= 0 ? fr : nf == 1 ? 0 : -1;
}

/* build_graphs for one rank: the dependency graph, its et_graph (checked by the
 * builder) and the buffer links of its communication.  Reads only the
 * rank's own tables and the shared, read-only result of matching. */
gboolean kt_graph_one(file_work *wk, file_job *jb)
{
  int rk = jb->rank;
  kt_rank *r = wk->ranks[rk];
  const kt_rank_match *rm = &wk->match->ranks[rk];
  kt_graph *g = kt_graph_build(r, rm, wk->opt->mode, wk->opt->min_gap_ps, wk->opt->host_launch);
  char *src = g_strdup_printf("%s (rank %d)", r->trace->path, rk);
  jb->et = to_et(r, rm, g, src, &jb->uniform, &jb->error);
  g_free(src);
  if (jb->et && r->buf_links)
    apply_buffer_links(r, g, jb->et); /* the buffer lifecycle's allocations */
  /* Only the graph's figures outlive this (the report's); the et_graph
   * holds the nodes.  The trace's kept events go with the last graph that
   * reads them (replicas share their source's trace). */
  jb->n_nodes = g->nodes->len;
  jb->n_edges = g->edges->len;
  jb->graph = g_memdup2(g, sizeof *g);
  jb->graph->nodes = jb->graph->edges = NULL;
  jb->graph->names = NULL;
  kt_graph_free(g);
  gint *users = g_hash_table_lookup(wk->users, r->trace);
  if (g_atomic_int_dec_and_test(users) && r->trace->slim) {
    g_array_free(r->trace->slim, TRUE);
    r->trace->slim = NULL;
  }
  return jb->et != NULL;
}

/* Fills the report's clock check from the traced ranks' clock_dev samples
 * (kt_match_ranks) and warns above 1 ms: kernels of one collective end
 * within microseconds of each other on every member, so a rank whose median
 * deviation stands out runs on an offset clock.  O(samples log samples). */
void kt_clock_check(const kt_match *m, const int *rank_of, int nf, fe_kineto_report *rep)
{
  sim_time_ps lo = 0, hi = 0;
  for (int i = 0; i < nf; i++) {
    int rk = rank_of[i];
    GArray *d = m->ranks[rk].clock_dev;
    if (!d || d->len == 0)
      continue;
    int64_t *v = g_memdup2(d->data, sizeof(int64_t) * d->len);
    qsort(v, d->len, sizeof(int64_t), kt_cmp_i64);
    sim_time_ps med = v[d->len / 2];
    g_free(v);
    if (rep->clock_ranks == 0 || med < lo) {
      lo = med;
      rep->clock_rank_early = rk;
    }
    if (rep->clock_ranks == 0 || med > hi) {
      hi = med;
      rep->clock_rank_late = rk;
    }
    if (rep->clock_ranks == 0 || d->len < rep->clock_samples_min)
      rep->clock_samples_min = d->len;
    rep->clock_ranks++;
  }
  if (rep->clock_ranks < 2)
    return;
  rep->clock_spread_ps = hi - lo;
  if (rep->clock_spread_ps > 1000 * SIM_PS_PER_US) {
    char late[32];
    kt_add_warning(rep->warnings, "rank clocks disagree: shared collectives end %s ms later on rank %d than on rank %d "
                "(medians over at least %" G_GUINT64_FORMAT " collectives per rank); per-rank timelines are offset by "
                "about that much (the replay aligns ranks at collectives and does not use absolute times)",
                wisp_ns_string(rep->clock_spread_ps / SIM_PS_PER_US, late), rep->clock_rank_late, rep->clock_rank_early,
                rep->clock_samples_min);
  }
}

/* What parse_files does with file i once it is parsed: the report's counts
 * of its events, then, when the file names its own rank and a usable
 * world size, its extraction and the shrinking of its event table, so
 * that the table is freed before the worker takes the next file.  A file
 * without them keeps its table until identify_ranks has seen every file
 * (the world size comes from the others). */
static void parse_done(file_work *wk, int i)
{
  file_job *jb = &wk->jobs[i];
  kt_trace *t = jb->trace;
  fill_rank_report(&wk->rep->ranks[i], t);
  jb->early_rank = jb->early_world = -1;
  int rk = file_rank(t, jb->path, wk->n);
  if (t->world_size == KT_ABSENT || t->world_size <= 0 || t->world_size > 1 << 24 || rk < 0 || rk >= t->world_size)
    return;
  jb->early_rank = rk;
  jb->early_world = (int)t->world_size;
  jb->extracted = extract_one(t, rk, jb->early_world, wk->opt, &jb->extract_error);
  if (jb->extracted)
    kt_rank_shrink(jb->extracted);
}

/* Job i of the current phase (wisp_run_jobs); FALSE when the file or rank
 * failed (its error kept in jobs[i]).  Files after a failed one are not
 * started; results of jobs already running are freed by the caller. */
gboolean kt_work_one(void *ctx, int i, const gint *first_failed)
{
  (void)first_failed;
  file_work *wk = ctx;
  file_job *jb = &wk->jobs[i];
  switch (wk->phase) {
  case WORK_PARSE:
    jb->trace = kt_trace_read(jb->path, &jb->error);
    if (!jb->trace)
      return FALSE;
    parse_done(wk, i);
    return TRUE;
  case WORK_EXTRACT:
    if (jb->early_rank >= 0)
      return jb->extracted != NULL; /* extracted by parse_files */
    jb->extracted = extract_one(jb->trace, jb->rank, wk->world, wk->opt, &jb->error);
    if (jb->extracted)
      kt_rank_shrink(jb->extracted);
    return jb->extracted != NULL;
  case WORK_GRAPH:
    return kt_graph_one(wk, jb);
  }
  g_assert_not_reached();
}
