/* kineto.c: fe_kineto_load (files -> ranks -> matched graphs -> et_workload)
 * and the report printed by `wisp inspect`.
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

#include "frontends/kineto_graph.h"
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

static void rank_report_clear(fe_kineto_rank_report *rr)
{
  g_free(rr->path);
  g_free(rr->device_name);
  g_free(rr->steps_dropped);
  if (rr->skipped)
    g_hash_table_destroy(rr->skipped);
  g_free(rr->comm_libraries);
  g_free(rr->comm_unregistered);
}

void fe_kineto_report_clear(fe_kineto_report *r)
{
  if (!r)
    return;
  for (int i = 0; i < r->n_files; i++)
    rank_report_clear(&r->ranks[i]);
  g_free(r->ranks);
  if (r->group_lines)
    g_ptr_array_free(r->group_lines, TRUE);
  if (r->warnings)
    g_ptr_array_free(r->warnings, TRUE);
  g_free(r->step_note);
  fe_coll_rows_free(r->colls);
  g_free(r->missing);
  memset(r, 0, sizeof *r);
}

static const char *comm_type_label(int i)
{
  if (i == 10)
    return "all_to_allv";
  if (i == 11)
    return "send";
  if (i == 12)
    return "recv";
  return et_coll_short_name((et_coll_type)i);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int cmp_ps(const void *a, const void *b)
{
  sim_time_ps x = *(const sim_time_ps *)a, y = *(const sim_time_ps *)b;
  return x < y ? -1 : x > y;
}

static int cmp_row(const void *a, const void *b)
{
  const fe_coll_row *x = a, *y = b;
  int c = strcmp(x->op, y->op);
  if (c == 0 && strlen(x->group) != strlen(y->group))
    c = strlen(x->group) < strlen(y->group) ? -1 : 1;
  if (c == 0)
    c = strcmp(x->group, y->group);
  if (c == 0 && x->bytes != y->bytes)
    c = x->bytes < y->bytes ? -1 : 1;
  if (c == 0)
    c = strcmp(x->dtype, y->dtype);
  return c ? c : strcmp(x->size_source, y->size_source);
}

void fe_coll_rows_finish(GArray *rows, GPtrArray *times, GPtrArray *seen)
{
  for (guint k = 0; k < rows->len; k++) {
    fe_coll_row *x = &g_array_index(rows, fe_coll_row, k);
    GArray *t = times->pdata[k];
    guint members = g_hash_table_size(seen->pdata[k]);
    x->records = t->len;
    x->calls = members ? (x->records + members / 2) / members : 0;
    if (t->len) {
      qsort(t->data, t->len, sizeof(sim_time_ps), cmp_ps);
      x->min_ps = g_array_index(t, sim_time_ps, 0);
      x->median_ps = g_array_index(t, sim_time_ps, (t->len - 1) / 2);
      x->max_ps = g_array_index(t, sim_time_ps, t->len - 1);
    }
    g_array_free(t, TRUE);
  }
  g_ptr_array_free(times, TRUE);
  g_array_sort(rows, cmp_row);
}

void fe_coll_rows_print(const GArray *rows, FILE *out)
{
  if (rows == NULL || rows->len == 0) {
    fprintf(out, "collectives: none matched\n");
    return;
  }
  fprintf(out, "collectives (measured time of each member's call, us):\n");
  fprintf(out, "  %-12s %5s %5s %14s %-10s %6s %10s %10s %10s  %s\n", "op", "group", "ranks", "bytes", "dtype",
          "calls", "min_us", "median_us", "max_us", "size from");
  for (guint k = 0; k < rows->len; k++) {
    const fe_coll_row *x = &g_array_index(rows, fe_coll_row, k);
    fprintf(out, "  %-12s %5s %5d %14" G_GUINT64_FORMAT " %-10s %6" G_GUINT64_FORMAT " %10.3f %10.3f %10.3f  %s\n",
            x->op, x->group, x->group_ranks, x->bytes, x->dtype, x->calls, (double)x->min_ps / 1e6,
            (double)x->median_ps / 1e6, (double)x->max_ps / 1e6, x->size_source);
  }
}

void fe_coll_rows_free(GArray *rows)
{
  if (rows == NULL)
    return;
  for (guint k = 0; k < rows->len; k++) {
    fe_coll_row *x = &g_array_index(rows, fe_coll_row, k);
    g_free(x->op);
    g_free(x->group);
    g_free(x->dtype);
    g_free(x->size_source);
  }
  g_array_free(rows, TRUE);
}

/* Warnings, those of the form "rank N: TEXT" with the same TEXT merged into
 * "ranks A,B,...: TEXT" (first-seen order).  O(warnings). */
static void free_gstring(gpointer s)
{
  g_string_free(s, TRUE);
}

static void print_merged_warnings(const GPtrArray *warnings, FILE *out)
{
  GPtrArray *texts = g_ptr_array_new();
  GHashTable *who = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, free_gstring);
  for (guint i = 0; i < warnings->len; i++) {
    const char *w = warnings->pdata[i], *colon;
    int rk = -1;
    if (sscanf(w, "rank %d:", &rk) == 1 && (colon = strchr(w, ':')) != NULL && colon[1] == ' ') {
      const char *text = colon + 2;
      GString *s = g_hash_table_lookup(who, text);
      if (s == NULL) {
        s = g_string_new(NULL);
        g_hash_table_insert(who, (gpointer)text, s);
        g_ptr_array_add(texts, (gpointer)text);
      }
      g_string_append_printf(s, "%s%d", s->len ? "," : "", rk);
    } else {
      g_ptr_array_add(texts, (gpointer)w);
    }
  }
  fprintf(out, "warnings (%u):\n", texts->len);
  for (guint i = 0; i < texts->len; i++) {
    GString *s = g_hash_table_lookup(who, texts->pdata[i]);
    if (s)
      fprintf(out, "  %s %s: %s\n", strchr(s->str, ',') ? "ranks" : "rank", s->str, (const char *)texts->pdata[i]);
    else
      fprintf(out, "  %s\n", (const char *)texts->pdata[i]);
  }
  g_hash_table_destroy(who);
  g_ptr_array_free(texts, TRUE);
}

/* The concise view's lines on communication libraries: each distinct
 * "kernels by library" summary and "look like communication" line once,
 * with the number of rank files it describes, so that traffic of a library
 * outside the registry is noticed without --verbose.  O(files^2) string
 * compares in the worst case (files are ranks: hundreds at most). */
static void print_library_lines(const fe_kineto_report *r, FILE *out)
{
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < r->n_files; i++) {
      const char *t = pass ? r->ranks[i].comm_unregistered : r->ranks[i].comm_libraries;
      gboolean seen = FALSE;
      for (int j = 0; t && j < i && !seen; j++) {
        const char *u = pass ? r->ranks[j].comm_unregistered : r->ranks[j].comm_libraries;
        seen = u && strcmp(u, t) == 0;
      }
      if (t == NULL || seen)
        continue;
      int n = 0;
      for (int j = i; j < r->n_files; j++) {
        const char *u = pass ? r->ranks[j].comm_unregistered : r->ranks[j].comm_libraries;
        n += u && strcmp(u, t) == 0;
      }
      if (pass)
        fprintf(out, "%s (%d of %d rank files)\n", t, n, r->n_files);
      else
        fprintf(out, "communication kernels by library (%d of %d rank files): %s\n", n, r->n_files, t);
    }
}

/* The host launch model's lines of one rank: its CPU chains, and how the
 * host syncs' targets and the joins between threads were found. */
static void print_host_lines(const fe_kineto_rank_report *k, FILE *out)
{
  if (!k->host_threads)
    return;
  fprintf(out, "  host launch model: %" G_GUINT64_FORMAT " CPU nodes on %" G_GUINT64_FORMAT " thread(s), %"
          G_GUINT64_FORMAT " launch calls nested in another; %" G_GUINT64_FORMAT " GPU ops waited on by host "
          "syncs; %" G_GUINT64_FORMAT " launched before the window and %" G_GUINT64_FORMAT " measured to start "
          "before their launch (no launch dependency); %" G_GUINT64_FORMAT " other thread(s) start after the "
          "step thread's last node before their first call\n", k->host_nodes, k->host_threads, k->host_overlaps,
          k->sync_waits, k->launched_before_window, k->launch_inversions, k->host_forks);
  fprintf(out, "  host syncs: %" G_GUINT64_FORMAT " device-wide, %" G_GUINT64_FORMAT " with the stream stated by "
          "cuda_sync events, %" G_GUINT64_FORMAT " inferred from the timeline (the stream whose op ended within 20 "
          "us, or half the call, before it returned), %" G_GUINT64_FORMAT " did not wait (own launches assumed), %"
          G_GUINT64_FORMAT " unresolved (waited for nothing in the trace; own launches assumed; an error under "
          "--strict); joins between threads: %" G_GUINT64_FORMAT " inferred from the timeline, 0 stated (Kineto "
          "records none)\n", k->host_syncs_device, k->host_syncs_stated, k->host_syncs_inferred,
          k->host_syncs_assumed, k->host_syncs_unresolved, k->host_joins);
}

void fe_kineto_report_print_ex(const fe_kineto_report *r, gboolean verbose, FILE *out)
{
  if (verbose || !r->complete) {
    fe_kineto_report_print(r, out);
    if (r->complete) {
      fputc('\n', out);
      fe_coll_rows_print(r->colls, out);
    }
    return;
  }
  fprintf(out, "Kineto traces: %d file(s), world size %d%s%s%s\n", r->n_files, r->n_ranks,
          r->missing ? " (no trace for rank(s) " : "", r->missing ? r->missing : "", r->missing ? ")" : "");
  if (r->step_note)
    fprintf(out, "window: %s\n", r->step_note);
  /* The device, once when every rank names the same. */
  const char *dev = r->n_files ? r->ranks[0].device_name : NULL;
  for (int i = 1; i < r->n_files && dev; i++)
    if (r->ranks[i].device_name == NULL || strcmp(r->ranks[i].device_name, dev) != 0)
      dev = NULL;
  if (dev)
    fprintf(out, "device: %s\n", dev);
  fprintf(out, "  %4s %9s %12s %7s %8s %5s %8s %7s %7s  %s\n", "rank", "step", "measured_ms", "busy_%", "kernels",
          "comm", "matched", "dropped", "nodes", "file");
  for (int i = 0; i < r->n_files; i++) {
    const fe_kineto_rank_report *k = &r->ranks[i];
    char step[24] = "-";
    if (k->n_steps && k->step_used_first != k->step_used)
      g_snprintf(step, sizeof step, "#%d..#%d", k->step_used_first, k->step_used);
    else if (k->n_steps)
      g_snprintf(step, sizeof step, "#%d", k->step_used);
    fprintf(out, "  %4d %9s %12.3f %7.1f %8" G_GUINT64_FORMAT " %5" G_GUINT64_FORMAT " %8" G_GUINT64_FORMAT " %7"
            G_GUINT64_FORMAT " %7" G_GUINT64_FORMAT "  %s%s%s\n", k->rank, step, (double)k->window_ps / 1e9,
            k->window_ps ? 100.0 * (double)k->gpu_busy_ps / (double)k->window_ps : 0.0, k->kernels, k->comm_kernels,
            k->comm_matched, k->comm_dropped, k->nodes, k->path, dev || !k->device_name ? "" : "  ",
            dev || !k->device_name ? "" : k->device_name);
  }
  fprintf(out, "groups: %" G_GUINT64_FORMAT "\n", r->groups);
  for (guint i = 0; r->group_lines && i < r->group_lines->len; i++)
    fprintf(out, "  %s\n", (const char *)g_ptr_array_index(r->group_lines, i));
  fprintf(out, "matching: %" G_GUINT64_FORMAT " matched, %" G_GUINT64_FORMAT " dropped instances, %" G_GUINT64_FORMAT
          " mismatches, %" G_GUINT64_FORMAT " imbalanced all_to_all(v)\n", r->matched, r->dropped, r->mismatches,
          r->imbalanced_a2av);
  print_library_lines(r, out);
  fe_coll_rows_print(r->colls, out);
  if (r->warnings && r->warnings->len)
    print_merged_warnings(r->warnings, out);
  fprintf(out, "(per-rank details: --verbose)\n");
}

void fe_kineto_report_print(const fe_kineto_report *r, FILE *out)
{
  char b1[32];
  fprintf(out, "Kineto traces: %d file(s), world size %d\n", r->n_files, r->n_ranks);
  if (r->step_note)
    fprintf(out, "window: %s\n", r->step_note);
  for (int i = 0; i < r->n_files; i++) {
    const fe_kineto_rank_report *k = &r->ranks[i];
    fprintf(out, "\nrank %d  (%s; rank from %s)\n", k->rank, k->path, k->rank_source ? k->rank_source : "?");
    if (k->device_name)
      fprintf(out, "  device: %s\n", k->device_name);
    fprintf(out, "  read: %" G_GUINT64_FORMAT " bytes of JSON, %" G_GUINT64_FORMAT " events\n", k->bytes_read,
            k->events_read);
    fprintf(out, "  kept: %" G_GUINT64_FORMAT " kernels, %" G_GUINT64_FORMAT " memcpy, %" G_GUINT64_FORMAT
            " memset, %" G_GUINT64_FORMAT " launches, %" G_GUINT64_FORMAT " sync calls, %" G_GUINT64_FORMAT
            " cuda_sync, %" G_GUINT64_FORMAT " CPU collective ops\n", k->kernels, k->memcpys, k->memsets,
            k->launches, k->sync_calls, k->cuda_sync_events, k->cpu_comm_ops);
    fprintf(out, "  memory events: %" G_GUINT64_FORMAT " allocs, %" G_GUINT64_FORMAT " frees\n", k->memory_allocs,
            k->memory_frees);
    if (!r->complete) {
      fprintf(out, "  not analysed further: the load stopped before steps, matching and graphs (see the error)\n");
      continue;
    }
    if (k->n_steps && k->step_used_first != k->step_used)
      fprintf(out, "  steps: %d ProfilerStep (#%d..#%d), used #%d..#%d%s%s\n", k->n_steps, k->step_first,
              k->step_last, k->step_used_first, k->step_used, k->steps_dropped ? "; dropped as incomplete: " : "",
              k->steps_dropped ? k->steps_dropped : "");
    else if (k->n_steps)
      fprintf(out, "  steps: %d ProfilerStep (#%d..#%d), used #%d%s%s\n", k->n_steps, k->step_first, k->step_last,
              k->step_used, k->steps_dropped ? "; dropped as incomplete: " : "",
              k->steps_dropped ? k->steps_dropped : "");
    else
      fprintf(out, "  steps: no ProfilerStep; the whole trace is the window\n");
    fprintf(out, "  window: %s ns measured step time", wisp_ns_string(k->window_ps, b1));
    fprintf(out, " (GPU busy %.1f%%)\n", k->window_ps ? 100.0 * (double)k->gpu_busy_ps / (double)k->window_ps : 0.0);
    fprintf(out, "  communication kernels in window: %" G_GUINT64_FORMAT, k->comm_kernels);
    for (int t = 0; t < (int)G_N_ELEMENTS(k->comm_by_type); t++)
      if (k->comm_by_type[t])
        fprintf(out, ", %s %" G_GUINT64_FORMAT, comm_type_label(t), k->comm_by_type[t]);
    fprintf(out, "\n");
    if (k->comm_libraries)
      fprintf(out, "  communication kernels by library: %s\n", k->comm_libraries);
    if (k->comm_unregistered)
      fprintf(out, "  %s\n", k->comm_unregistered);
    fprintf(out, "  communication bytes: %" G_GUINT64_FORMAT " (sizes: %" G_GUINT64_FORMAT " from kernel args, %"
            G_GUINT64_FORMAT " from CPU ops, ", k->comm_bytes, k->comm_size_from_args, k->comm_size_from_cpu_op);
    if (k->comm_size_from_card)
      fprintf(out, "%" G_GUINT64_FORMAT " from the workload card, ", k->comm_size_from_card);
    if (k->comm_size_sync)
      fprintf(out, "%" G_GUINT64_FORMAT " synchronisation without payload, ", k->comm_size_sync);
    fprintf(out, "%" G_GUINT64_FORMAT " unknown)\n", k->comm_size_unknown);
    fprintf(out, "  matched %" G_GUINT64_FORMAT ", dropped %" G_GUINT64_FORMAT " (replayed as compute)\n",
            k->comm_matched, k->comm_dropped);
    if (k->comm_replayed)
      fprintf(out, "  WARNING: %" G_GUINT64_FORMAT " matched communication op(s) have no size on some member: "
              "replayed at their measured duration, they do not respond to the network\n", k->comm_replayed);
    fprintf(out, "  graph: %" G_GUINT64_FORMAT " nodes (%" G_GUINT64_FORMAT " idle/gap), %" G_GUINT64_FORMAT
            " edges, %" G_GUINT64_FORMAT " cross-stream; %" G_GUINT64_FORMAT " sync edges contradicted by the timeline "
            "(not added), %" G_GUINT64_FORMAT " cycle edges dropped\n", k->nodes, k->gap_nodes, k->edges,
            k->cross_stream_edges, k->inconsistent_sync_edges, k->cycle_edges_dropped);
    if (k->inferred_sync_edges)
      fprintf(out, "  %" G_GUINT64_FORMAT " cross-stream edge(s) inferred from the timeline: a cudaStreamWaitEvent "
              "that record/wait pairs do not place (no cudaEventRecord in the trace, or the waiting op launched by "
              "another thread) tied to the op on another stream that ended within 20 us before the waiting op "
              "started\n", k->inferred_sync_edges);
    print_host_lines(k, out);
    if (k->compute_slots)
      fprintf(out, "  compute concurrency: at most %u compute node(s) measured running at once (the replay's "
              "compute slots unless --compute-slots is given)\n", k->compute_slots);
    if (r->mode == FE_KINETO_KERNELS) {
      fprintf(out, "  unexplained GPU idle: %.3f ms, %.1f %% of the step (GPU idle no modelled dependency explains, "
              "replayed as fixed delays); launch lag %.3f ms (from a launch call's start to its kernel's start, kept "
              "after the call)%s\n", (double)k->unexplained_idle_ps / 1e9,
              k->window_ps ? 100.0 * (double)k->unexplained_idle_ps / (double)k->window_ps : 0.0,
              (double)k->launch_lag_ps / 1e9,
              k->host_step_tail ? "; the step thread's CPU work runs to the step marker's end" : "");
    }
    fprintf(out, "  coverage: %.1f%% of the window's GPU busy time is in graph nodes\n",
            k->gpu_busy_ps ? 100.0 * (double)k->node_busy_ps / (double)k->gpu_busy_ps : 100.0);
    if (k->skipped && g_hash_table_size(k->skipped)) {
      fprintf(out, "  skipped:\n");
      guint n;
      gpointer *keys = g_hash_table_get_keys_as_array(k->skipped, &n);
      qsort(keys, n, sizeof(gpointer), cmp_str);
      for (guint q = 0; q < n; q++)
        fprintf(out, "    %8" G_GSIZE_FORMAT "  %s\n", GPOINTER_TO_SIZE(g_hash_table_lookup(k->skipped, keys[q])),
                (const char *)keys[q]);
      g_free(keys);
    }
  }
  if (!r->complete)
    goto warnings;
  fprintf(out, "\ngroups: %" G_GUINT64_FORMAT "\n", r->groups);
  for (guint i = 0; r->group_lines && i < r->group_lines->len; i++)
    fprintf(out, "  %s\n", (const char *)g_ptr_array_index(r->group_lines, i));
  fprintf(out, "matching: %" G_GUINT64_FORMAT " matched, %" G_GUINT64_FORMAT " dropped instances, %" G_GUINT64_FORMAT
          " mismatches, %" G_GUINT64_FORMAT " imbalanced all_to_all(v)\n", r->matched, r->dropped, r->mismatches,
          r->imbalanced_a2av);
  if (r->clock_ranks >= 2) {
    char spread[32];
    fprintf(out, "clock check: shared collectives end within %s us of each other across %d ranks (rank %d latest, "
            "rank %d earliest; medians over at least %" G_GUINT64_FORMAT " collectives per rank)\n",
            wisp_ns_string(r->clock_spread_ps / 1000, spread), r->clock_ranks, r->clock_rank_late, r->clock_rank_early,
            r->clock_samples_min);
  }
warnings:
  if (r->warnings && r->warnings->len) {
    fprintf(out, "warnings (%u):\n", r->warnings->len);
    for (guint i = 0; i < r->warnings->len; i++)
      fprintf(out, "  %s\n", (const char *)g_ptr_array_index(r->warnings, i));
  }
}

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

static GPtrArray *expand_paths(const char *const *paths, int n, GError **error)
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
      g_ptr_array_sort(names, (GCompareFunc)cmp_str);
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
static int rank_from_name(const char *path)
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

static void add_warning(GPtrArray *w, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void add_warning(GPtrArray *w, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_ptr_array_add(w, g_strdup_vprintf(fmt, ap));
  va_end(ap);
}

/* Parses "0" or "0,2" into a list of source ranks. */
static GArray *parse_rank_list(const char *s)
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
static kt_rank *replicate_rank(const kt_rank *src, int to, int world)
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
     * tag is the pair's group, so the pairs of different groups between
     * the same ranks never mix, and Chakra files carry the comm_tag their
     * readers need. */
    if (c->p2p == 1) {
      ec.src = r->rank;
      ec.dst = c->peer;
      ec.tag = (int32_t)group;
    } else if (c->p2p == 2) {
      ec.src = c->peer;
      ec.dst = r->rank;
      ec.tag = (int32_t)group;
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

/* One input file's slot: filled by whichever worker takes it. */
typedef struct {
  const char *path;
  int rank;                /* extract_ranks' input: the file's global rank */
  kt_trace *trace;         /* parse_files' result (owned here until moved out) */
  kt_rank *extracted;      /* the extraction's result (owned here until moved out) */
  /* parse_files extracts a file at once when the file itself names its
   * rank and world size (early_rank, early_world; else -1): the slot then
   * holds its kt_rank, or the extraction's failure in extract_error, which
   * extract_ranks reports in file order as if it had extracted the file. */
  int early_rank, early_world;
  GError *extract_error;
  /* build_graphs (one job per rank): the rank's graph, its et_graph and the
   * number of all_to_allv written as uniform (moved out in rank order). */
  kt_graph *graph;         /* its figures only: nodes, edges and names are freed at once */
  uint32_t n_nodes, n_edges;
  et_graph *et;
  uint64_t uniform;
  GError *error;           /* the file's own failure */
} file_job;

typedef enum { WORK_PARSE = 1, WORK_EXTRACT = 2, WORK_GRAPH = 3 } work_phase;

/* One phase's jobs for wisp_run_jobs.  jobs[i] is written only by the
 * worker running index i; everything else is read-only during the run. */
typedef struct {
  file_job *jobs;
  int n;
  work_phase phase;
  int world;
  const fe_kineto_options *opt;
  fe_kineto_report *rep;   /* parse_files: job i fills rep->ranks[i]'s counts */
  kt_rank **ranks;         /* build_graphs: the ranks (read-only) */
  const kt_match *match;   /* build_graphs: matching's result (read-only) */
  GHashTable *users;       /* build_graphs: kt_trace* -> gint* count of ranks whose graph is still to be built */
} file_work;

/* Resolves the number of workers: opt->threads, else WISP_THREADS, else the
 * number of processors.  A malformed WISP_THREADS is the user's to fix. */
static gboolean resolve_threads(const fe_kineto_options *opt, int *threads, GError **error)
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
  int fr = rank_from_name(path);
  return fr >= 0 ? fr : nf == 1 ? 0 : -1;
}

/* build_graphs for one rank: the dependency graph, its et_graph (checked by the
 * builder) and the buffer links of its communication.  Reads only the
 * rank's own tables and the shared, read-only result of matching. */
static gboolean graph_one(file_work *wk, file_job *jb)
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
static void clock_check(const kt_match *m, const int *rank_of, int nf, fe_kineto_report *rep)
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
    add_warning(rep->warnings, "rank clocks disagree: shared collectives end %s ms later on rank %d than on rank %d "
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
static gboolean work_one(void *ctx, int i, const gint *first_failed)
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
    return graph_one(wk, jb);
  }
  g_assert_not_reached();
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
  wisp_run_jobs(work.n, L->threads, work_one, &work);
  for (int i = 0; i < L->nf; i++) {
    L->traces[i] = L->jobs[i].trace;
    L->jobs[i].trace = NULL;
  }
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
  if (t->world_size != KT_ABSENT)
    rr->world_size = (int)t->world_size;
  int fr = rank_from_name(path);
  if (t->rank != KT_ABSENT && t->rank >= 0 && t->rank <= INT32_MAX) {
    rank_of[i] = (int)t->rank;
    rr->rank_source = "distributedInfo.rank";
    if (fr >= 0 && fr != rank_of[i])
      add_warning(rep->warnings, "%s: file name says rank %d but distributedInfo.rank is %d (using %d)", path, fr,
                  rank_of[i], rank_of[i]);
  } else if (fr >= 0) {
    rank_of[i] = fr;
    rr->rank_source = "file name (fallback: no distributedInfo.rank)";
    add_warning(rep->warnings, "%s: %s; rank %d taken from the file name", path,
                t->have_dist_info ? "distributedInfo has no rank" : "no distributedInfo", fr);
  } else if (nf == 1) {
    rank_of[i] = 0;
    rr->rank_source = "assumed (single file without rank information)";
    add_warning(rep->warnings, "%s: %s and no rank in the file name; treated as rank 0 of a 1-rank job", path,
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
    add_warning(L->rep->warnings, "no distributedInfo.world_size in any file; world size %d inferred from the files",
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
  wisp_run_jobs(work.n, L->threads, work_one, &work);
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
  GArray *src = strcmp(from, "all") ? parse_rank_list(from) : g_array_new(FALSE, FALSE, sizeof(int));
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
      add_warning(rep->warnings, "--replicate-from %s: every rank of %d has a trace, nothing was replicated",
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
          L->ranks[rk] = replicate_rank(L->ranks[from], rk, world);
        }
      if (opt->replicate_from)
        add_warning(rep->warnings, "%d absent rank(s) (%s%s) synthesized from rank(s) %s, assuming a symmetric job "
                    "(groups shifted by the rank offset)", n_missing, missing->str, more, replicate_from);
      else
        add_warning(rep->warnings, "the traces cover %d of %d ranks (missing: %s%s); the absent ranks are "
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
  clock_check(L->match, L->rank_of, L->nf, rep);
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
  int failed = wisp_run_jobs(gw.n, L->threads, work_one, &gw);
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
      add_warning(L->rep->warnings, "rank %d: %" G_GUINT64_FORMAT " all_to_allv written as uniform all_to_all (split "
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
      add_warning(L->rep->warnings, "rank %d: %" G_GUINT64_FORMAT " dependency edge(s) closed a cycle and were "
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
      g_free(L->graphs[rk]); /* figures only (graph_one) */
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
  gboolean ok = (L.files = expand_paths(paths, n_paths, error)) != NULL && resolve_threads(L.opt, &L.threads, error);
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
