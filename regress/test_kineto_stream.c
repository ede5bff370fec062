/* test_kineto_stream.c: the Kineto load in memory that grows with the
 * nodes kept (issue 18 part 3): kt_trace_compact, kt_rank_shrink and the
 * load's per-file extraction (frontends/kineto.c, kineto_graph.c).
 *
 * The expectations are independent of the code under test: the graph of a
 * shrunk rank is compared node by node and edge by edge with the graph the
 * same rank gives before shrinking (the path the load took before the
 * change), on the shared DLRM and HTA nccl_data traces and on a synthetic trace with
 * every kind of event the host model reads; the slim records are compared
 * field by field with the full events they came from; and the errors of a
 * load that fails in several files are those of the first failing file in
 * the order the phases ran before (every file identified before any is
 * extracted).
 */
#include "config.h"
#include "regress/test_util.h"

#include "frontends/kineto_graph.h"

#include <glib/gstdio.h>
#include <string.h>

static char *write_file(const char *dir, const char *name, const char *text)
{
  char *p = g_build_filename(dir, name, NULL);
  g_assert_true(g_file_set_contents(p, text, -1, NULL));
  return p;
}

/* Asserts that a and b are the same graph: every node's type, flags,
 * duration, start, op and name, and every edge, in order. */
static void assert_same_graph(const kt_graph *a, const kt_graph *b)
{
  g_assert_cmpuint(a->nodes->len, ==, b->nodes->len);
  g_assert_cmpuint(a->edges->len, ==, b->edges->len);
  for (guint i = 0; i < a->nodes->len; i++) {
    const kt_node *x = &g_array_index(a->nodes, kt_node, i), *y = &g_array_index(b->nodes, kt_node, i);
    g_assert_cmpint(x->type, ==, y->type);
    g_assert_cmpint(x->flags, ==, y->flags);
    g_assert_cmpint(x->dur, ==, y->dur);
    g_assert_cmpint(x->start, ==, y->start);
    g_assert_cmpuint(x->op, ==, y->op);
    g_assert_cmpstr(x->name, ==, y->name);
  }
  for (guint i = 0; i < a->edges->len; i++) {
    kt_edge x = g_array_index(a->edges, kt_edge, i), y = g_array_index(b->edges, kt_edge, i);
    g_assert_cmpuint(x.parent, ==, y.parent);
    g_assert_cmpuint(x.child, ==, y.child);
  }
  g_assert_cmpuint(a->host_nodes, ==, b->host_nodes);
  g_assert_cmpuint(a->sync_waits, ==, b->sync_waits);
  g_assert_cmpuint(a->launched_before_window, ==, b->launched_before_window);
  g_assert_cmpint(a->gpu_busy_ps, ==, b->gpu_busy_ps);
}

/* Reads and extracts the n files (rank: distributedInfo, else the index)
 * in a job of `world` ranks (ranks without a file are absent), matches
 * them, and checks for every rank and both modes (kernels with
 * the host model, gap) that the graph after kt_rank_shrink equals the
 * graph before it; also that the shrunk trace holds exactly the ops'
 * events, their launches and the host syncs.  Returns the ops checked. */
static guint check_shrink(char **paths, int n, int world)
{
  fe_kineto_options opt;
  fe_kineto_options_init(&opt);
  kt_trace **t = g_new0(kt_trace *, n);
  kt_rank **r = g_new0(kt_rank *, n);
  for (int i = 0; i < n; i++) {
    GError *e = NULL;
    t[i] = kt_trace_read(paths[i], &e);
    g_assert_no_error(e);
    r[i] = kt_rank_extract(t[i], t[i]->rank != KT_ABSENT ? (int)t[i]->rank : i, world, &opt, &e);
    g_assert_no_error(e);
  }
  GPtrArray *warn = g_ptr_array_new_with_free_func(g_free);
  GError *e = NULL;
  kt_rank **by_rank = g_new0(kt_rank *, world);
  for (int i = 0; i < n; i++)
    by_rank[r[i]->rank] = r[i];
  kt_match *m = kt_match_ranks((const kt_rank *const *)by_rank, world, FALSE, warn, &e);
  g_assert_no_error(e);
  guint ops = 0;
  for (int i = 0; i < n; i++) {
    kt_rank *x = r[i];
    const kt_rank_match *rm = &m->ranks[x->rank];
    kt_graph *before_k = kt_graph_build(x, rm, FE_KINETO_KERNELS, opt.min_gap_ps, TRUE);
    kt_graph *before_g = kt_graph_build(x, rm, FE_KINETO_GAP, opt.min_gap_ps, FALSE);
    /* What the shrunk trace must hold, counted on the full table. */
    guint n_ev = t[i]->events->len, want = 0;
    uint8_t *need = g_new0(uint8_t, n_ev);
    for (guint q = 0; q < n_ev; q++)
      need[q] = g_array_index(t[i]->events, kt_event, q).kind == KT_EV_HOST_SYNC;
    for (guint q = 0; q < x->ops->len; q++) {
      const kt_op *op = &g_array_index(x->ops, kt_op, q);
      need[op->ev] = 1;
      if (op->launch != KT_NONE)
        need[op->launch] = 1;
    }
    for (guint q = 0; q < n_ev; q++)
      want += need[q];
    g_free(need);
    kt_rank_shrink(x);
    g_assert_null(t[i]->events);
    g_assert_nonnull(t[i]->slim);
    g_assert_cmpuint(t[i]->slim->len, ==, want);
    g_assert_cmpuint(t[i]->metas->len, ==, 0);
    kt_graph *after_k = kt_graph_build(x, rm, FE_KINETO_KERNELS, opt.min_gap_ps, TRUE);
    kt_graph *after_g = kt_graph_build(x, rm, FE_KINETO_GAP, opt.min_gap_ps, FALSE);
    assert_same_graph(before_k, after_k);
    assert_same_graph(before_g, after_g);
    ops += x->ops->len;
    kt_graph_free(before_k);
    kt_graph_free(before_g);
    kt_graph_free(after_k);
    kt_graph_free(after_g);
  }
  kt_match_free(m);
  g_ptr_array_free(warn, TRUE);
  for (int i = 0; i < n; i++) {
    kt_rank_free(r[i]);
    kt_trace_free(t[i]);
  }
  g_free(by_rank);
  g_free(r);
  g_free(t);
  return ops;
}

/* kt_trace_compact: the kept events in order, each slim record equal to
 * its full event's fields, the remap monotone with KT_NONE for the rest. */
static void test_compact(void)
{
  const char *json =
    "{\"traceEvents\": ["
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 5, \"tid\": 6, \"ts\": 1, "
    "\"dur\": 2, \"args\": {\"correlation\": 1}},"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k1\", \"pid\": 0, \"tid\": 7, \"ts\": 4, \"dur\": 3, "
    "\"args\": {\"stream\": 7, \"correlation\": 1}},"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaDeviceSynchronize\", \"pid\": 5, \"tid\": 6, "
    "\"ts\": 8, \"dur\": 1.5},"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce_Sum_f32_RING_LL\", \"pid\": 0, "
    "\"tid\": 9, \"ts\": 10, \"dur\": 1, \"args\": {\"stream\": 9, \"Collective name\": \"allreduce\", "
    "\"In msg nelems\": 4, \"dtype\": \"Float\"}}]}";
  char *dir = g_dir_make_tmp("wisp-ktstream-XXXXXX", NULL);
  char *path = write_file(dir, "rank0.json", json);
  GError *e = NULL;
  kt_trace *t = kt_trace_read(path, &e);
  g_assert_no_error(e);
  g_assert_cmpuint(t->events->len, ==, 4);
  g_assert_cmpuint(t->metas->len, ==, 1);
  GArray *full = g_array_copy(t->events);
  uint8_t keep[4] = { 1, 0, 1, 1 };
  uint32_t *remap = kt_trace_compact(t, keep);
  g_assert_null(t->events);
  g_assert_cmpuint(kt_trace_n_events(t), ==, 3);
  g_assert_cmpuint(t->metas->len, ==, 0);
  uint32_t expect[4] = { 0, KT_NONE, 1, 2 };
  for (int i = 0; i < 4; i++) {
    g_assert_cmpuint(remap[i], ==, expect[i]);
    if (remap[i] == KT_NONE)
      continue;
    const kt_event *f = &g_array_index(full, kt_event, i);
    kt_event_slim s = kt_trace_event(t, remap[i]);
    g_assert_cmpint(s.ts, ==, f->ts);
    g_assert_cmpint(s.dur, ==, f->dur);
    g_assert_cmpint(s.pid, ==, f->pid);
    g_assert_cmpint(s.tid, ==, f->tid);
    g_assert_cmpuint(s.kind, ==, f->kind);
    g_assert_cmpstr(kt_str(t, s.name), ==, kt_str(t, f->name));
  }
  /* The trace's own numbers: the sync is 1.5 us long, the third event. */
  g_assert_cmpint(kt_trace_event(t, 1).dur, ==, 1500 * SIM_PS_PER_NS);
  g_assert_cmpstr(kt_str(t, kt_trace_event(t, 1).name), ==, "cudaDeviceSynchronize");
  g_free(remap);
  g_array_free(full, TRUE);
  kt_trace_free(t);
  g_unlink(path);
  g_rmdir(dir);
  g_free(path);
  g_free(dir);
}

/* A one-rank trace with two threads, launches, a blocking copy, device,
 * stream and event syncs inside and outside the step: the host model
 * reads every kind of kept event. */
static void test_shrink_synthetic(void)
{
  GString *s = g_string_new("{\"distributedInfo\": {\"rank\": 0, \"world_size\": 1}, \"traceEvents\": [");
  g_string_append(s, "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 5, "
                     "\"tid\": 6, \"ts\": 0, \"dur\": 400}");
  g_string_append(s, ", {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#2\", \"pid\": 5, "
                     "\"tid\": 6, \"ts\": 400, \"dur\": 400}");
  const char *syncs[] = { "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize" };
  int corr = 1;
  for (int step = 0; step < 2; step++)
    for (int k = 0; k < 12; k++) {
      int ts = step * 400 + 10 + k * 30, tid = k % 4 == 3 ? 8 : 6;
      const char *call = k % 5 == 4 ? "cudaMemcpy" : "cudaLaunchKernel";
      g_string_append_printf(s, ", {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"%s\", \"pid\": 5, "
                             "\"tid\": %d, \"ts\": %d, \"dur\": 4, \"args\": {\"correlation\": %d}}", call, tid, ts, corr);
      if (k % 5 == 4)
        g_string_append_printf(s, ", {\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy DtoH\", \"pid\": 0, "
                               "\"tid\": 7, \"ts\": %d, \"dur\": 6, \"args\": {\"stream\": 7, \"correlation\": %d, "
                               "\"bytes\": 4096}}", ts + 6, corr);
      else
        g_string_append_printf(s, ", {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"kernel_%d\", \"pid\": 0, "
                               "\"tid\": %d, \"ts\": %d, \"dur\": 12, \"args\": {\"stream\": %d, \"correlation\": %d}}",
                               k % 3, k % 2 ? 7 : 9, ts + 8, k % 2 ? 7 : 9, corr);
      corr++;
      if (k % 4 == 1)
        g_string_append_printf(s, ", {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"%s\", \"pid\": 5, "
                               "\"tid\": %d, \"ts\": %d, \"dur\": 9}", syncs[k / 4 % 3], tid, ts + 14);
    }
  g_string_append(s, ", {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::zeros\", \"pid\": 5, \"tid\": 6, "
                     "\"ts\": 805, \"dur\": 3}]}");
  char *dir = g_dir_make_tmp("wisp-ktstream-XXXXXX", NULL);
  char *path = write_file(dir, "rank0.json", s->str);
  char *paths[] = { path };
  /* 24 GPU ops in the trace, 12 in the window (step #2): the ops checked. */
  g_assert_cmpuint(check_shrink(paths, 1, 1), ==, 12);
  g_unlink(path);
  g_rmdir(dir);
  g_free(path);
  g_free(dir);
  g_string_free(s, TRUE);
}

static void test_shrink_shared(void)
{
  const char *d = g_getenv("WISP_SHARED_DATA");
  if (!d || !g_file_test(d, G_FILE_TEST_IS_DIR)) {
    g_test_skip("WISP_SHARED_DATA not set or absent: shared-trace shrink test skipped");
    return;
  }
  char *tar = g_build_filename(d, "param/dlrm_kineto.tar.gz", NULL);
  char *dir = g_dir_make_tmp("wisp-ktstream-XXXXXX", NULL);
  test_untar(tar, dir);
  char *tdir = g_build_filename(dir, "dlrm_kineto", NULL);
  GDir *gd = g_dir_open(tdir, 0, NULL);
  g_assert_nonnull(gd);
  GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
  const char *name;
  while ((name = g_dir_read_name(gd)))
    g_ptr_array_add(files, g_build_filename(tdir, name, NULL));
  g_dir_close(gd);
  g_assert_cmpuint(files->len, ==, 8);
  guint ops = check_shrink((char **)files->pdata, 8, 8);
  g_test_message("DLRM: %u ops over 8 ranks give the same graphs after shrinking", ops);
  g_assert_cmpuint(ops, >, 0);
  g_ptr_array_free(files, TRUE);
  /* HTA's nccl_data: rank 0 of a 2-rank job (rank 1 absent: its
   * collectives stay unmatched). */
  char *one[] = { g_build_filename(d, "hta/nccl_parser_config/nccl_data.json.gz", NULL) };
  ops = check_shrink(one, 1, 2);
  g_test_message("nccl_data: %u ops give the same graphs after shrinking", ops);
  g_assert_cmpuint(ops, >, 0);
  g_free(one[0]);
  test_rm_rf(dir);
  g_free(tdir);
  g_free(dir);
  g_free(tar);
}

/* Errors of a load that fails in several files: identification of every
 * file comes before any extraction error, as when all files were parsed,
 * then identified, then extracted.  File 0 is CPU-only (its extraction
 * fails, early, while it is parsed); file 1 claims rank 0 too. */
static void test_error_order(void)
{
  char *dir = g_dir_make_tmp("wisp-ktstream-XXXXXX", NULL);
  const char *cpu_only = "{\"distributedInfo\": {\"rank\": 0, \"world_size\": 2}, \"traceEvents\": ["
                         "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1, "
                         "\"ts\": 1, \"dur\": 2}]}";
  const char *gpu_rank = "{\"distributedInfo\": {\"rank\": %d, \"world_size\": 2}, \"traceEvents\": ["
                         "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, "
                         "\"ts\": 1, \"dur\": 2, \"args\": {\"stream\": 7}}]}";
  char *a = write_file(dir, "a.json", cpu_only);
  char *text = g_strdup_printf(gpu_rank, 0);
  char *b = write_file(dir, "b.json", text);
  g_free(text);
  text = g_strdup_printf(gpu_rank, 1);
  char *c = write_file(dir, "c.json", text);
  g_free(text);
  for (int threads = 1; threads <= 2; threads++) {
    fe_kineto_options opt;
    fe_kineto_options_init(&opt);
    opt.threads = threads;
    GError *e = NULL;
    const char *dup[] = { a, b };
    et_workload *w = fe_kineto_load(dup, 2, &opt, NULL, &e);
    g_assert_null(w);
    g_assert_nonnull(e);
    g_assert_nonnull(strstr(e->message, "both claim rank 0"));
    g_clear_error(&e);
    const char *ok_ids[] = { a, c };
    w = fe_kineto_load(ok_ids, 2, &opt, NULL, &e);
    g_assert_null(w);
    g_assert_nonnull(e);
    g_assert_nonnull(strstr(e->message, "a CPU-only trace"));
    g_assert_nonnull(strstr(e->message, "a.json"));
    g_clear_error(&e);
  }
  g_unlink(a);
  g_unlink(b);
  g_unlink(c);
  g_rmdir(dir);
  g_free(a);
  g_free(b);
  g_free(c);
  g_free(dir);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/kineto_stream/compact", test_compact);
  g_test_add_func("/kineto_stream/shrink_synthetic", test_shrink_synthetic);
  g_test_add_func("/kineto_stream/shrink_shared", test_shrink_shared);
  g_test_add_func("/kineto_stream/error_order", test_error_order);
  return g_test_run();
}
