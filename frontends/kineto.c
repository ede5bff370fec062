/* kineto.c: fe_kineto_load (files -> ranks -> matched graphs -> et_workload)
 * phase by phase; the inputs and the per-file work of the parallel phases
 * are kineto_work.c, the report printed by `wisp inspect` kineto_report.c.
 *
 * The rank files are independent until cross-rank matching, so parsing and
 * extraction run on up to opt->threads workers, each taking the next file in
 * input order and building that file's own kt_trace / kt_rank (the parser
 * and extractor keep all their state, string interning included, in these
 * per-file objects; nothing is shared between workers but the read-only
 * options and two atomic counters).  Everything that depends on more than
 * one file (rank identification checks, world size, matching, warnings)
 * then runs in the calling thread in file or rank order; the graphs, which
 * read only their own rank and the result of matching, are built on the
 * workers again and taken in rank order.  This makes the output independent
 * of the number of workers and of scheduling.  The phases are named
 * functions over one kt_load, in the order fe_kineto_load calls them (see
 * "fe_kineto_load, phase by phase" below and doc/ARCHITECTURE.md).
 * Each parse streams its file (a 1 MiB read buffer, fe_json.c), and a file
 * that names its rank and world size is extracted and shrunk
 * (kt_rank_shrink) by the worker that parsed it, before it takes the next
 * file.  So peak memory is one full event table per worker plus, per rank,
 * its ops, communication records and the 40-byte records of the events its
 * graph reads, then the et_graphs: it grows with the nodes kept, not with
 * the bytes read (doc/kineto.md, "Memory").
 */
#include "config.h"

#include "frontends/kineto_load_internal.h"
#include "common/wisp_par.h"

#include <string.h>

void fe_kineto_options_init(fe_kineto_options *opt)
{
  memset(opt, 0, sizeof *opt);
  opt->mode = FE_KINETO_KERNELS;
  opt->step = -1;
  opt->step_lo = opt->step_hi = -1;
  opt->min_gap_ps = SIM_PS_PER_NS;
  opt->host_launch = TRUE;
}

/* ---- fe_kineto_load, phase by phase ----
 *
 * One load is the sequence of the phase functions below over one kt_load:
 * parse (stage 1, in parallel), identify ranks, extract (stage 2, in
 * parallel), synthesize absent ranks, match (stage 3), add the groups to
 * the workload, build the graphs (stage 3, in parallel), then the report.
 * Each phase returns FALSE with error set when the load fails; the state
 * is freed by load_clear whatever phase was reached. */

typedef struct {
  const fe_kineto_options *opt;
  fe_kineto_report *rep;
  GPtrArray *files;        /* the expanded input paths */
  int nf;                  /* files->len */
  int threads;             /* workers of the parallel phases */
  file_job *jobs;          /* per file: the parallel phases' slots */
  kt_trace **traces;       /* per file (owned) */
  int *rank_of;            /* per file: its global rank */
  int world;               /* the job's size, -1 until known */
  kt_rank **ranks;         /* per global rank (owned; replicas included) */
  kt_match *match;         /* matching's result */
  kt_graph **graphs;       /* per global rank: the graph's figures (its nodes and edges are freed) */
  uint32_t *graph_nodes, *graph_edges;  /* per global rank: the graph's size */
  et_workload *w;          /* the result */
} kt_load;

/* Parses every file (in parallel); the errors stay in the jobs for
 * identify_ranks to report in file order. */
static void parse_files(kt_load *L)
{
  L->nf = (int)L->files->len;
  L->traces = g_new0(kt_trace *, L->nf);
  L->rank_of = g_new(int, L->nf);
  L->jobs = g_new0(file_job, L->nf);
  L->rep->n_files = L->nf;
  L->rep->ranks = g_new0(fe_kineto_rank_report, L->nf);
  for (int i = 0; i < L->nf; i++) {
    L->jobs[i].path = g_ptr_array_index(L->files, i);
    L->jobs[i].early_rank = L->jobs[i].early_world = -1;
  }
  file_work work = { .jobs = L->jobs, .n = L->nf, .phase = WORK_PARSE, .opt = L->opt, .rep = L->rep };
  wisp_run_jobs(work.n, L->threads, kt_work_one, &work);
  for (int i = 0; i < L->nf; i++) {
    L->traces[i] = L->jobs[i].trace;
    L->jobs[i].trace = NULL;
  }
}

/* traceEvents entries that are not objects (a number, a string, ...):
 * under --strict an error at the first one, else one warning with their
 * count, as a wrong-typed element must not vanish unreported.  O(1). */
static gboolean check_entries(const kt_load *L, const kt_trace *t, const char *path, GError **error)
{
  if (!t->non_objects)
    return TRUE;
  if (L->opt->strict) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "--strict: %s: byte %" G_GUINT64_FORMAT ": a traceEvents entry is %s, not an event object (%"
                G_GUINT64_FORMAT " such entr%s); remove what is not an event or leave out --strict to skip it", path,
                t->non_object_byte, t->non_object_kind, t->non_objects, t->non_objects == 1 ? "y" : "ies");
    return FALSE;
  }
  kt_add_warning(L->rep->warnings, "%s: %" G_GUINT64_FORMAT " traceEvents entr%s not an event object, skipped "
                 "(the first at byte %" G_GUINT64_FORMAT " is %s); --strict makes this an error", path,
                 t->non_objects, t->non_objects == 1 ? "y is" : "ies are", t->non_object_byte, t->non_object_kind);
  return TRUE;
}

/* The global rank of file i (distributedInfo.rank, else the file name, else
 * 0 for a single file) and its world size, checked against the files
 * before it; fills the file's report. */
static gboolean identify_file(kt_load *L, int i, GError **error)
{
  const char *path = g_ptr_array_index(L->files, i);
  fe_kineto_report *rep = L->rep;
  fe_kineto_rank_report *rr = &rep->ranks[i];
  int *rank_of = L->rank_of, nf = L->nf;
  rr->path = g_strdup(path);
  rr->rank = -1;
  rr->world_size = -1;
  if (!L->traces[i]) {
    g_propagate_error(error, L->jobs[i].error);
    L->jobs[i].error = NULL;
    return FALSE;
  }
  kt_trace *t = L->traces[i];
  if (!check_entries(L, t, path, error))
    return FALSE;
  if (t->world_size != KT_ABSENT)
    rr->world_size = (int)t->world_size;
  int fr = kt_rank_from_name(path);
  if (t->rank != KT_ABSENT && t->rank >= 0 && t->rank <= INT32_MAX) {
    rank_of[i] = (int)t->rank;
    rr->rank_source = "distributedInfo.rank";
    if (fr >= 0 && fr != rank_of[i])
      kt_add_warning(rep->warnings, "%s: file name says rank %d but distributedInfo.rank is %d (using %d)", path, fr,
                  rank_of[i], rank_of[i]);
  } else if (fr >= 0) {
    rank_of[i] = fr;
    rr->rank_source = "file name (fallback: no distributedInfo.rank)";
    kt_add_warning(rep->warnings, "%s: %s; rank %d taken from the file name", path,
                t->have_dist_info ? "distributedInfo has no rank" : "no distributedInfo", fr);
  } else if (nf == 1) {
    rank_of[i] = 0;
    rr->rank_source = "assumed (single file without rank information)";
    kt_add_warning(rep->warnings, "%s: %s and no rank in the file name; treated as rank 0 of a 1-rank job", path,
                t->have_dist_info ? "distributedInfo has no rank" : "no distributedInfo");
  } else {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: cannot tell which rank this file is: %s and the file name holds no 'rank<N>'; rename the files "
                "or pass one file", path, t->have_dist_info ? "distributedInfo has no rank" : "no distributedInfo");
    return FALSE;
  }
  if (L->opt->strict && strcmp(rr->rank_source, "distributedInfo.rank")) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "--strict: %s has no distributedInfo.rank", path);
    return FALSE;
  }
  rr->rank = rank_of[i];
  if (t->world_size != KT_ABSENT) {
    if (L->world >= 0 && L->world != t->world_size) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s: distributedInfo.world_size %" G_GINT64_FORMAT " differs from %d in the other files", path,
                  t->world_size, L->world);
      return FALSE;
    }
    if (t->world_size <= 0 || t->world_size > 1 << 24) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: distributedInfo.world_size %" G_GINT64_FORMAT
                  " is not a usable size", path, t->world_size);
      return FALSE;
    }
    L->world = (int)t->world_size;
  }
  return TRUE;
}

/* Identifies the rank of every file in file order (the first file that
 * failed to parse or to identify gives the error, as if the files had been
 * read one after another), then the world size (inferred from the files
 * when none says it) and checks that ranks are in range and distinct. */
static gboolean identify_ranks(kt_load *L, GError **error)
{
  for (int i = 0; i < L->nf; i++)
    if (!identify_file(L, i, error))
      return FALSE;
  if (L->world < 0) {
    int mx = 0;
    for (int i = 0; i < L->nf; i++)
      mx = MAX(mx, L->rank_of[i] + 1);
    L->world = MAX(L->nf, mx);
    kt_add_warning(L->rep->warnings, "no distributedInfo.world_size in any file; world size %d inferred from the files",
                L->world);
  }
  L->rep->n_ranks = L->world;
  L->ranks = g_new0(kt_rank *, L->world);
  for (int i = 0; i < L->nf; i++) {
    if (L->rank_of[i] >= L->world) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: rank %d is outside the world size %d",
                  (char *)g_ptr_array_index(L->files, i), L->rank_of[i], L->world);
      return FALSE;
    }
    for (int k = 0; k < i; k++)
      if (L->rank_of[k] == L->rank_of[i]) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s and %s both claim rank %d",
                    (char *)g_ptr_array_index(L->files, k), (char *)g_ptr_array_index(L->files, i), L->rank_of[i]);
        return FALSE;
      }
  }
  return TRUE;
}

/* Extracts each rank parse_files did not (in parallel; every extraction
 * reads only its own trace), then takes the results and warnings in file
 * order. */
static gboolean extract_ranks(kt_load *L, GError **error)
{
  for (int i = 0; i < L->nf; i++) {
    file_job *jb = &L->jobs[i];
    jb->trace = L->traces[i];  /* borrowed: traces[] keeps ownership */
    jb->rank = L->rank_of[i];
    if (jb->early_rank >= 0 && (jb->early_rank != jb->rank || jb->early_world != L->world)) {
      /* identify_ranks takes a file's own rank and world size, so this
       * cannot happen; the events are gone, so it cannot be redone. */
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: internal error: extracted as rank %d of %d, identified "
                  "as rank %d of %d", jb->path, jb->early_rank, jb->early_world, jb->rank, L->world);
      return FALSE;
    }
    if (jb->early_rank >= 0 && !jb->extracted) {
      jb->error = jb->extract_error;
      jb->extract_error = NULL;
    }
  }
  file_work work = { .jobs = L->jobs, .n = L->nf, .phase = WORK_EXTRACT, .world = L->world, .opt = L->opt };
  wisp_run_jobs(work.n, L->threads, kt_work_one, &work);
  for (int i = 0; i < L->nf; i++) {
    kt_rank *r = L->jobs[i].extracted;
    if (!r) {
      g_propagate_error(error, L->jobs[i].error);
      L->jobs[i].error = NULL;
      return FALSE;
    }
    L->jobs[i].extracted = NULL;
    L->ranks[L->rank_of[i]] = r;
    for (guint q = 0; q < r->warnings->len; q++)
      g_ptr_array_add(L->rep->warnings, g_strdup(g_ptr_array_index(r->warnings, q)));
  }
  return TRUE;
}

/* The traced ranks the absent ones are copied from: the list `from` names,
 * or every traced rank in rank order for "all"; empty when a listed rank
 * is not traced. */
static GArray *replica_sources(const kt_load *L, const char *from)
{
  GArray *src = strcmp(from, "all") ? kt_parse_rank_list(from) : g_array_new(FALSE, FALSE, sizeof(int));
  if (!strcmp(from, "all"))
    for (int rk = 0; rk < L->world; rk++)
      if (L->ranks[rk])
        g_array_append_val(src, rk);
  for (guint q = 0; q < src->len; q++)
    if (g_array_index(src, int, q) >= L->world || !L->ranks[g_array_index(src, int, q)])
      g_array_set_size(src, 0);
  return src;
}

/* Ranks without a trace: an error, unless --replicate-from (or
 * --replicate-missing, "all") names traced ranks to copy them from, round
 * robin (symmetric-job assumption, warned). */
static gboolean replicate_missing(kt_load *L, GError **error)
{
  const fe_kineto_options *opt = L->opt;
  fe_kineto_report *rep = L->rep;
  int world = L->world;
  GString *missing = g_string_new("");
  int n_missing = 0;
  for (int rk = 0; rk < world; rk++)
    if (!L->ranks[rk]) {
      if (n_missing < 16)
        g_string_append_printf(missing, "%s%d", n_missing ? ", " : "", rk);
      n_missing++;
    }
  const char *replicate_from = opt->replicate_from ? opt->replicate_from : opt->allow_partial ? "all" : NULL;
  const char *more = n_missing > 16 ? ", ..." : "";
  rep->n_missing = n_missing;
  gboolean ok = TRUE;
  if (n_missing)
    rep->missing = g_strdup_printf("%s%s", missing->str, more);
  if (n_missing && !replicate_from) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%d of %d ranks have no trace (missing: %s%s); pass every rank's file, or --replicate-from RANKS "
                "(or --replicate-missing, for all traced ranks) to synthesize the absent ranks from traced ones "
                "(symmetric assumption)", n_missing, world, missing->str, more);
    ok = FALSE;
  } else if (!n_missing && opt->replicate_from) {
    /* Checked even when no rank is absent: a --replicate-from naming an
     * untraced rank is a mistake, not a no-op. */
    GArray *src = replica_sources(L, opt->replicate_from);
    if (!src->len) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "--replicate-from %s: not a list of traced ranks (the "
                  "traces cover ranks 0..%d, and none is absent, so nothing needs replicating)",
                  opt->replicate_from, world - 1);
      ok = FALSE;
    } else {
      kt_add_warning(rep->warnings, "--replicate-from %s: every rank of %d has a trace, nothing was replicated",
                  opt->replicate_from, world);
    }
    g_array_free(src, TRUE);
  } else if (n_missing) {
    GArray *src = replica_sources(L, replicate_from);
    if (!src->len) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "--replicate-from %s: not a list of traced ranks",
                  replicate_from);
      ok = FALSE;
    } else {
      int q = 0;
      for (int rk = 0; rk < world; rk++)
        if (!L->ranks[rk]) {
          int from = g_array_index(src, int, q++ % (int)src->len);
          L->ranks[rk] = kt_replicate_rank(L->ranks[from], rk, world);
        }
      if (opt->replicate_from)
        kt_add_warning(rep->warnings, "%d absent rank(s) (%s%s) synthesized from rank(s) %s, assuming a symmetric job "
                    "(groups shifted by the rank offset)", n_missing, missing->str, more, replicate_from);
      else
        kt_add_warning(rep->warnings, "the traces cover %d of %d ranks (missing: %s%s); the absent ranks are "
                    "synthesized from the traced ones only to match collectives (symmetric assumption), and the "
                    "figures are the traced ranks' own", world - n_missing, world, missing->str, more);
    }
    g_array_free(src, TRUE);
  }
  g_string_free(missing, TRUE);
  return ok;
}

/* Matches collectives across ranks (kineto_graph.c) and runs the clock
 * check on the result. */
static gboolean match_ranks(kt_load *L, GError **error)
{
  fe_kineto_report *rep = L->rep;
  L->match = kt_match_ranks((const kt_rank *const *)L->ranks, L->world, L->opt->strict, rep->warnings, error);
  if (!L->match)
    return FALSE;
  rep->matched = L->match->stats.matched;
  rep->dropped = L->match->stats.dropped;
  rep->mismatches = L->match->stats.mismatches;
  rep->imbalanced_a2av = L->match->stats.imbalanced_a2av;
  kt_clock_check(L->match, L->rank_of, L->nf, rep);
  rep->groups = L->match->groups->len;
  return TRUE;
}

/* Creates the workload and adds the matched groups to it (group i is named
 * i + 1), with the report's line for each. */
static gboolean add_groups(kt_load *L, const char *source, GError **error)
{
  GPtrArray *groups = L->match->groups;
  L->w = et_workload_new(L->world, source);
  for (guint gi = 0; gi < groups->len; gi++) {
    kt_group *g = g_ptr_array_index(groups, gi);
    char name[16];
    g_snprintf(name, sizeof name, "%u", gi + 1);
    char *desc = g_strdup_printf("pg %s%s%s", g->pg_name ? g->pg_name : "(unnamed)", g->desc ? " " : "",
                                 g->desc ? g->desc : "");
    uint32_t idx = et_workload_add_group(L->w, name, desc, g->ranks, g->n_ranks);
    GString *rl = g_string_new("");
    for (int k = 0; k < g->n_ranks && k < 32; k++)
      g_string_append_printf(rl, "%s%d", k ? "," : "", g->ranks[k]);
    g_ptr_array_add(L->rep->group_lines,
                    g_strdup_printf("%s: ranks [%s%s] %s, %" G_GUINT64_FORMAT " matched ops, %" G_GUINT64_FORMAT
                                    " bytes (sum over ranks)", name, rl->str, g->n_ranks > 32 ? ",..." : "", desc,
                                    g->n_ops, g->bytes));
    g_string_free(rl, TRUE);
    g_free(desc);
    if (idx == ET_NONE) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "group %s has repeated or out-of-range ranks", g->name_or_key);
      return FALSE;
    }
  }
  return TRUE;
}

/* Builds every rank's graph (in parallel; each reads only its own rank and
 * the read-only result of matching), then takes results and warnings in
 * rank order; the lowest failing rank gives the error. */
static gboolean build_graphs(kt_load *L, GError **error)
{
  int world = L->world;
  L->graphs = g_new0(kt_graph *, world);
  file_job *gjobs = g_new0(file_job, world);
  L->graph_nodes = g_new0(uint32_t, world);
  L->graph_edges = g_new0(uint32_t, world);
  gint *users = g_new0(gint, L->nf);
  GHashTable *by_trace = g_hash_table_new(g_direct_hash, g_direct_equal);
  for (int i = 0; i < L->nf; i++)
    g_hash_table_insert(by_trace, L->traces[i], &users[i]);
  for (int rk = 0; rk < world; rk++)
    (*(gint *)g_hash_table_lookup(by_trace, L->ranks[rk]->trace))++;
  file_work gw = { .jobs = gjobs, .n = world, .phase = WORK_GRAPH, .world = world, .opt = L->opt,
                   .ranks = L->ranks, .match = L->match, .users = by_trace };
  for (int rk = 0; rk < world; rk++)
    gjobs[rk].rank = rk;
  int failed = wisp_run_jobs(gw.n, L->threads, kt_work_one, &gw);
  g_hash_table_destroy(by_trace);
  g_free(users);
  for (int rk = 0; rk < world; rk++) {
    file_job *jb = &gjobs[rk];
    L->graphs[rk] = jb->graph;
    L->graph_nodes[rk] = jb->n_nodes;
    L->graph_edges[rk] = jb->n_edges;
    L->w->ranks[rk] = jb->et;
    if (rk == failed) {
      g_propagate_error(error, jb->error);
      jb->error = NULL;
    }
    g_clear_error(&jb->error);
    if (rk >= failed || !jb->et)
      continue;
    if (jb->uniform)
      kt_add_warning(L->rep->warnings, "rank %d: %" G_GUINT64_FORMAT " all_to_allv written as uniform all_to_all (split "
                  "lists unavailable or of another width)", rk, jb->uniform);
    if (jb->graph->sync_by_how[KT_SYNC_UNRESOLVED] && L->opt->strict && failed >= world) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "rank %d: %" G_GUINT64_FORMAT " host synchronisation "
                  "call(s) waited for something the trace does not show (the first at %.3f us into the window): no "
                  "cuda_sync event names the stream and no op ended within 20 us before the call returned; record "
                  "with enable_cuda_sync_events or leave out --strict (then the ops its own thread launched are "
                  "assumed)", rk, jb->graph->sync_by_how[KT_SYNC_UNRESOLVED],
                  (double)jb->graph->first_unresolved_ps / 1e6);
      failed = rk;
    }
    if (jb->graph->cycle_edges_dropped)
      kt_add_warning(L->rep->warnings, "rank %d: %" G_GUINT64_FORMAT " dependency edge(s) closed a cycle and were "
                  "dropped", rk, jb->graph->cycle_edges_dropped);
    L->w->measured_step_ps[rk] = L->ranks[rk]->window_ps;
  }
  g_free(gjobs);
  return failed >= world;
}

/* The report's per-collective table over the traced ranks' matched calls:
 * one row per (op, group, bytes, dtype, size source).  O(calls) plus a sort
 * per row. */
static void report_collectives(kt_load *L)
{
  GHashTable *index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  GArray *rows = g_array_new(FALSE, TRUE, sizeof(fe_coll_row));
  GPtrArray *times = g_ptr_array_new();
  GPtrArray *seen = g_ptr_array_new_with_free_func((GDestroyNotify)g_hash_table_unref);
  for (int i = 0; i < L->nf; i++) {
    int rk = L->rank_of[i];
    const kt_rank *r = L->ranks[rk];
    for (guint k = 0; k < r->comms->len; k++) {
      const kt_comm *c = &g_array_index(r->comms, kt_comm, k);
      const kt_comm_match *cm = &L->match->ranks[rk].comms[k];
      if (cm->status != KT_COMM_MATCHED)
        continue;
      const char *op = c->p2p == 1 ? "send" : c->p2p == 2 ? "recv" : c->splits ? "all_to_allv"
                                                                           : et_coll_short_name(c->coll);
      char *key = g_strdup_printf("%s|%u|%" G_GUINT64_FORMAT "|%s|%s", op, cm->group, c->bytes,
                                  c->dtype ? c->dtype : "-", c->size_source ? c->size_source : "-");
      gpointer hit = g_hash_table_lookup(index, key);
      guint row;
      if (hit == NULL) {
        fe_coll_row x = {0};
        x.op = g_strdup(op);
        x.group = g_strdup_printf("%u", cm->group + 1);
        x.group_ranks = c->n_ranks;
        x.bytes = c->bytes;
        x.dtype = g_strdup(c->dtype ? c->dtype : "-");
        x.size_source = g_strdup(c->size_source ? c->size_source : "-");
        g_array_append_val(rows, x);
        g_ptr_array_add(times, g_array_new(FALSE, FALSE, sizeof(sim_time_ps)));
        g_ptr_array_add(seen, g_hash_table_new(g_direct_hash, g_direct_equal));
        row = rows->len - 1;
        g_hash_table_insert(index, key, GUINT_TO_POINTER(row + 1));
      } else {
        row = GPOINTER_TO_UINT(hit) - 1;
        g_free(key);
      }
      const kt_op *o = &g_array_index(r->ops, kt_op, c->op);
      sim_time_ps d = o->end - o->start;
      g_array_append_val((GArray *)times->pdata[row], d);
      g_hash_table_add(seen->pdata[row], GINT_TO_POINTER(rk + 1));
    }
  }
  fe_coll_rows_finish(rows, times, seen);
  L->rep->colls = rows;
  g_ptr_array_free(seen, TRUE);
  g_hash_table_destroy(index);
}

/* The report's communication-by-library line and the line for kernels
 * that look like communication but are not in the registry
 * (kineto_commreg.h).  O(comms + registry). */
static void report_libraries(fe_kineto_rank_report *rr, const kt_rank *r)
{
  const kt_commreg_entry **ents = g_new0(const kt_commreg_entry *, r->comms->len + 1);
  size_t n = 0, other = 0;
  for (guint q = 0; q < r->comms->len; q++) {
    const kt_comm *c = &g_array_index(r->comms, kt_comm, q);
    if (c->reg)
      ents[n++] = c->reg;
    else
      other++;
  }
  g_free(rr->comm_libraries);
  rr->comm_libraries = kt_commreg_summary(ents, n, other);
  g_free(ents);
  g_free(rr->comm_unregistered);
  rr->comm_unregistered = NULL;
  GString *u = g_string_new(NULL);
  if (r->reg_local)
    g_string_append_printf(u, "%" G_GUINT64_FORMAT " %s kernel(s) recognised as local work (%s), kept as compute",
                           r->reg_local, r->reg_local_first->library, r->reg_local_first->what);
  if (r->unregistered)
    g_string_append_printf(u, "%sWARNING: %" G_GUINT64_FORMAT " kernel(s) look like communication but are not in the "
                           "communication-kernel registry (first: '%.120s'); replayed as compute, so the network "
                           "what-if ignores them: add the library to frontends/kineto_commreg.c",
                           u->len ? "; " : "", r->unregistered, r->unregistered_first);
  rr->comm_unregistered = u->len ? g_string_free(u, FALSE) : (g_string_free(u, TRUE), NULL);
}

/* One traced rank's figures: its window, graph and communication counts
 * (r extracted, g its graph, rm matching's verdicts on it). */
static void report_rank(fe_kineto_rank_report *rr, const kt_rank *r, const kt_graph *g, uint32_t nodes, uint32_t edges,
                        const kt_rank_match *rm)
{
  rr->n_steps = r->n_steps;
  rr->step_first = r->step_first;
  rr->step_last = r->step_last;
  rr->step_used = r->step_used;
  rr->step_used_first = r->step_used_first;
  rr->n_steps_used = r->n_steps_used;
  rr->inference_markers = r->inference_markers;
  rr->steps_dropped = r->steps_dropped ? g_strdup(r->steps_dropped->str) : NULL;
  rr->window_start_ps = r->window_abs;
  rr->window_ps = r->window_ps;
  rr->measured_step_ps = r->window_ps;
  rr->gpu_busy_ps = g->gpu_busy_ps;
  rr->node_busy_ps = g->node_busy_ps;
  rr->nodes = nodes;
  rr->edges = edges;
  rr->gap_nodes = g->gap_nodes;
  rr->cross_stream_edges = g->cross_edges;
  rr->inconsistent_sync_edges = r->inconsistent_sync_edges;
  rr->inferred_sync_edges = r->inferred_sync_edges;
  rr->cycle_edges_dropped = g->cycle_edges_dropped;
  rr->host_nodes = g->host_nodes;
  rr->host_threads = g->host_threads;
  rr->launched_before_window = g->launched_before_window;
  rr->launch_inversions = g->launch_inversions;
  rr->sync_waits = g->sync_waits;
  rr->host_overlaps = g->host_overlaps;
  rr->host_forks = g->host_forks;
  rr->host_syncs_device = g->sync_by_how[KT_SYNC_DEVICE];
  rr->host_syncs_stated = g->sync_by_how[KT_SYNC_STATED];
  rr->host_syncs_inferred = g->sync_by_how[KT_SYNC_INFERRED];
  rr->host_syncs_assumed = g->sync_by_how[KT_SYNC_ASSUMED];
  rr->host_syncs_unresolved = g->sync_by_how[KT_SYNC_UNRESOLVED];
  rr->host_joins = g->joins;
  rr->compute_slots = g->compute_slots;
  rr->unexplained_idle_ps = g->unexplained_idle_ps;
  rr->launch_lag_ps = g->launch_lag_ps;
  rr->host_step_tail = g->host_step_tail;
  rr->comm_size_from_args = r->size_from_args;
  rr->comm_size_from_cpu_op = r->size_from_cpu;
  rr->comm_size_unknown = r->size_unknown;
  rr->comm_size_from_card = r->size_from_card;
  rr->comm_size_sync = r->size_from_sync;
  report_libraries(rr, r);
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, r->skipped);
  while (g_hash_table_iter_next(&it, &k, &v))
    kt_count_skip(rr->skipped, k, GPOINTER_TO_SIZE(v));
  for (guint q = 0; q < r->comms->len; q++) {
    const kt_comm *c = &g_array_index(r->comms, kt_comm, q);
    const kt_comm_match *cm = &rm->comms[q];
    rr->comm_kernels++;
    int ti = c->p2p == 1 ? 11 : c->p2p == 2 ? 12 : c->coll == ET_COLL_ALL_TO_ALLV ? 10 : (int)c->coll;
    if (ti >= 0 && ti < (int)G_N_ELEMENTS(rr->comm_by_type))
      rr->comm_by_type[ti]++;
    rr->comm_bytes += c->bytes;
    if (cm->status == KT_COMM_MATCHED) {
      rr->comm_matched++;
      rr->comm_replayed += cm->replay;
    } else {
      rr->comm_dropped++;
      kt_count_skip(rr->skipped, cm->drop_reason ? cm->drop_reason : "communication not matched", 1);
    }
  }
}

/* Where each rank's window began on the common clock (trace origins are
 * whole microseconds apart), relative to the earliest rank: only when the
 * clock check found the ranks' clocks in agreement (within 1 ms), so the
 * offsets are real and not clock error. */
static void measured_starts(kt_load *L)
{
  const fe_kineto_report *rep = L->rep;
  if (rep->clock_ranks < 2 || rep->clock_spread_ps > 1000 * SIM_PS_PER_US)
    return;
  const int64_t lim_us = (INT64_C(1) << 61) / SIM_PS_PER_US;
  int64_t o0 = L->ranks[0]->trace->origin_us;
  gboolean fits = TRUE;
  sim_time_ps *abs_start = g_new(sim_time_ps, L->world), lo = 0;
  for (int rk = 0; rk < L->world && fits; rk++) {
    int64_t d_us;
    fits = !__builtin_sub_overflow(L->ranks[rk]->trace->origin_us, o0, &d_us) && d_us <= lim_us && d_us >= -lim_us;
    if (fits)
      abs_start[rk] = d_us * SIM_PS_PER_US + L->ranks[rk]->window_abs;
    if (fits && (rk == 0 || abs_start[rk] < lo))
      lo = abs_start[rk];
  }
  if (fits) {
    L->w->measured_start_ps = abs_start;
    for (int rk = 0; rk < L->world; rk++)
      L->w->measured_start_ps[rk] -= lo;
  } else {
    g_free(abs_start);
  }
}

/* The report's sentence on the window: which step(s), chosen how (the
 * first file's rank stands for all). */
static char *step_note(const fe_kineto_options *opt, const fe_kineto_rank_report *r0)
{
  if (opt->whole_trace)
    return g_strdup("whole trace (ProfilerStep ranges ignored on request)");
  if (r0->n_steps == 0)
    return g_strdup("no ProfilerStep annotations: the whole trace is the window (pass an explicit window by trimming "
                    "the trace if that is not intended)");
  if (opt->step >= 0)
    return g_strdup_printf("ProfilerStep#%d (--step)", opt->step);
  if (opt->all_steps || opt->step_lo >= 0) {
    char range[32], asked[48];
    if (r0->n_steps_used > 1)
      g_snprintf(range, sizeof range, "#%d..#%d", r0->step_used_first, r0->step_used);
    else
      g_snprintf(range, sizeof range, "#%d", r0->step_used);
    if (opt->all_steps)
      g_strlcpy(asked, "--steps all", sizeof asked);
    else
      g_snprintf(asked, sizeof asked, "--steps %d..%d", opt->step_lo, opt->step_hi);
    return g_strdup_printf("ProfilerStep%s (%s: %d step(s) of %d on rank %d%s%s)", range, asked, r0->n_steps_used,
                           r0->n_steps, r0->rank, r0->steps_dropped ? "; dropped as incomplete: " : "; none dropped",
                           r0->steps_dropped ? r0->steps_dropped : "");
  }
  return g_strdup_printf("last complete ProfilerStep (#%d on rank %d%s%s)", r0->step_used, r0->rank,
                         r0->steps_dropped ? "; dropped as incomplete: " : "", r0->steps_dropped ? r0->steps_dropped : "");
}

/* Fills the report of a load that succeeded. */
static void report_load(kt_load *L)
{
  report_collectives(L);
  for (int i = 0; i < L->nf; i++) {
    int rk = L->rank_of[i];
    report_rank(&L->rep->ranks[i], L->ranks[rk], L->graphs[rk], L->graph_nodes[rk], L->graph_edges[rk],
                &L->match->ranks[rk]);
  }
  measured_starts(L);
  L->rep->step_note = step_note(L->opt, &L->rep->ranks[0]);
  L->rep->complete = TRUE;
  L->rep->mode = L->opt->mode;
}

/* Frees everything a load holds but the workload and the report. */
static void load_clear(kt_load *L)
{
  if (L->graphs)
    for (int rk = 0; rk < L->world; rk++)
      g_free(L->graphs[rk]); /* figures only (kt_graph_one) */
  g_free(L->graphs);
  g_free(L->graph_nodes);
  g_free(L->graph_edges);
  if (L->ranks)
    for (int rk = 0; rk < L->world; rk++)
      kt_rank_free(L->ranks[rk]); /* replicas share their source's trace; only the traces[] own them */
  g_free(L->ranks);
  for (int i = 0; i < L->nf; i++) {
    /* Results of files after a failed one (finished by other workers) are discarded. */
    kt_rank_free(L->jobs[i].extracted);
    if (L->jobs[i].error)
      g_error_free(L->jobs[i].error);
    if (L->jobs[i].extract_error)
      g_error_free(L->jobs[i].extract_error);
    kt_trace_free(L->traces[i]);
  }
  g_free(L->jobs);
  g_free(L->traces);
  g_free(L->rank_of);
  kt_match_free(L->match);
  if (L->files)
    g_ptr_array_free(L->files, TRUE);
}

et_workload *fe_kineto_load(const char *const *paths, int n_paths, const fe_kineto_options *opt_in,
                            fe_kineto_report *report, GError **error)
{
  fe_kineto_options defopt;
  if (!opt_in) {
    fe_kineto_options_init(&defopt);
    opt_in = &defopt;
  }
  fe_kineto_report local;
  fe_kineto_report *rep = report ? report : &local;
  memset(rep, 0, sizeof *rep);
  rep->warnings = g_ptr_array_new_with_free_func(g_free);
  rep->group_lines = g_ptr_array_new_with_free_func(g_free);
  kt_load L = { .opt = opt_in, .rep = rep, .world = -1, .threads = 1 };
  gboolean ok = (L.files = kt_expand_paths(paths, n_paths, error)) != NULL && kt_resolve_threads(L.opt, &L.threads, error);
  if (ok)
    parse_files(&L);
  ok = ok && identify_ranks(&L, error) && extract_ranks(&L, error) && replicate_missing(&L, error) &&
       match_ranks(&L, error) && add_groups(&L, n_paths == 1 ? paths[0] : "(kineto traces)", error) &&
       build_graphs(&L, error) && et_workload_resolve_groups(L.w, error);
  if (ok)
    report_load(&L);
  else if (L.w) {
    et_workload_free(L.w);
    L.w = NULL;
  }
  load_clear(&L);
  if (!report)
    fe_kineto_report_clear(rep);
  return L.w;
}
