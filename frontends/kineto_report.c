/* kineto_report.c: the Kineto load's report (fe_kineto_report) cleared
 * and printed, as `wisp inspect` shows it, and the per-collective rows
 * (fe_coll_rows_*) it shares with the other frontends.  O(report size).
 */
#include "config.h"

#include "frontends/kineto_load_internal.h"

#include <string.h>

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
      qsort(keys, n, sizeof(gpointer), kt_cmp_str);
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
