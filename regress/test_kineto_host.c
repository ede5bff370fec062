/* test_kineto_host.c: the host launch model of the Kineto frontend
 * (fe_kineto_options.host_launch, host_chains in frontends/kineto_graph.c)
 * and, on the same trace, the cross-rank clock check (clock_sample).
 *
 * One hand-made rank trace, in microseconds from the step start (the same
 * on both ranks of a 2-rank job):
 *
 *   CPU thread 1:  cudaLaunchKernel L1 [10, 15]   L2 [20, 25]
 *                  cudaDeviceSynchronize S [30, 70]   L3 [75, 80]
 *   GPU stream 7:  K1 [16, 26] (gemm, launched by L1)
 *                  K2 [26, 60] (all-reduce of 4 MiB over both ranks, L2)
 *                  K3 [82, 90] (gemm, L3)
 *   ProfilerStep#1 [0, 100]: the window is 100 us.
 *
 * With the host model the graph is, per rank: the CPU chain
 * idle[0,10] L1 idle[15,20] L2 idle[25,30] S idle[70,75] L3 and, since
 * thread 1 also ran the step marker, its CPU time up to the marker's end
 * [80,100] (9 nodes; S waits for K2, the last op launched before it, and
 * lasts from K2's end 60 to 70); on the stream the launch lag idle[10,16]
 * (after L1 began) K1 K2 idle[75,82] (after L3 began, the latest of K3's
 * predecessors: K2 ended at 60) K3; no step tail, because the CPU chain
 * reaches the window's end: 14 nodes, 2 of them stream idle, both launch
 * lag (13 us), none unexplained.  Without it: idle[0,16] K1 K2
 * idle[60,82] K3 tail[90,100] = 6 nodes, 16 + 22 + 10 = 48 us of
 * unexplained idle.
 *
 * Replays on a 2-rank network (test_what_if): when the all-reduce takes its
 * measured 34 us both models replay the measured 100 us; when it takes 1 us
 * the host model gives 70 us (K3 waits for L3, which follows the sync) and
 * the model without it 67 us (K3 follows K2 after a fixed 22 us idle); the
 * arithmetic is written next to the checks.
 */
#include "config.h"

#include "chakra/et_io.h"
#include "frontends/fe.h"
#include "replay/sim_replay.h"
#include "replay/sim_critical.h"
#include "replay/sim_report.h"
#include "topologies/topo.h"
#include "regress/test_util.h"

#include <stdlib.h>
#include <string.h>

/* One rank's trace (times above, offset by 1,000,000 us plus skew_us, as if
 * the rank's clock ran that far ahead). */
static char *host_json(int rank, long skew_us, gboolean late_sync)
{
  const long base = 1000000 + skew_us;
  GString *s = g_string_new("");
  g_string_append_printf(s, "{\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d, \"world_size\": 2}, "
                            "\"traceEvents\": [\n", rank);
  g_string_append_printf(s, "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 1, "
                            "\"tid\": 1, \"ts\": %ld, \"dur\": 100},\n", base);
  static const struct { long ts, dur; int corr; const char *name; } cpu[] = {
    { 10, 5, 1, "cudaLaunchKernel" }, { 20, 5, 2, "cudaLaunchKernel" }, { 30, 40, 0, "cudaDeviceSynchronize" },
    { 75, 5, 3, "cudaLaunchKernel" },
  };
  if (late_sync) /* a sync from 95 us to 125 us: still waiting when the step ends at 100 us */
    g_string_append_printf(s, "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaStreamSynchronize\", "
                              "\"pid\": 1, \"tid\": 1, \"ts\": %ld, \"dur\": 30, \"args\": {\"correlation\": 101}},\n",
                           base + 95);
  for (size_t i = 0; i < G_N_ELEMENTS(cpu); i++)
    g_string_append_printf(s, "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"%s\", \"pid\": 1, \"tid\": 1, "
                              "\"ts\": %ld, \"dur\": %ld, \"args\": {\"correlation\": %d}},\n", cpu[i].name,
                           base + cpu[i].ts, cpu[i].dur, cpu[i].corr ? cpu[i].corr : 100);
  g_string_append_printf(s, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm_a\", \"pid\": 0, \"tid\": 7, "
                            "\"ts\": %ld, \"dur\": 10, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 1}},\n",
                         base + 16);
  g_string_append_printf(s, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce_Sum_f32_RING_LL\", "
                            "\"pid\": 0, \"tid\": 7, \"ts\": %ld, \"dur\": 34, \"args\": {\"device\": 0, \"stream\": 7, "
                            "\"correlation\": 2, \"Collective name\": \"allreduce\", \"In msg nelems\": 1048576, "
                            "\"Out msg nelems\": 1048576, \"Group size\": 2, \"dtype\": \"Float\", "
                            "\"Process Group Name\": \"0\", \"Process Group Ranks\": \"[0, 1]\", \"Seq\": 1}},\n",
                         base + 26);
  g_string_append_printf(s, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm_b\", \"pid\": 0, \"tid\": 7, "
                            "\"ts\": %ld, \"dur\": 8, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 3}}\n",
                         base + 82);
  g_string_append(s, "]}\n");
  return g_string_free(s, FALSE);
}

typedef test_rank_files trace_set;

/* Rank 1's clock runs skew_us ahead of rank 0's; late_sync adds a sync
 * call that outlasts the step on both ranks. */
static void traces_write_full(trace_set *ts, long skew_us, gboolean late_sync)
{
  char *texts[2] = { host_json(0, 0, late_sync), host_json(1, skew_us, late_sync) };
  test_rank_files_write(ts, "wisp-kineto-host-XXXXXX", texts, 2);
  g_free(texts[0]);
  g_free(texts[1]);
}

static void traces_write_skewed(trace_set *ts, long skew_us)
{
  traces_write_full(ts, skew_us, FALSE);
}

static void traces_write(trace_set *ts)
{
  traces_write_skewed(ts, 0);
}

static et_workload *load(const trace_set *ts, gboolean host, fe_kineto_report *rep)
{
  fe_kineto_options opt;
  fe_kineto_options_init(&opt);
  opt.host_launch = host;
  GError *e = NULL;
  et_workload *w = fe_kineto_load((const char *const *)ts->paths, 2, &opt, rep, &e);
  g_assert_no_error(e);
  g_assert_nonnull(w);
  return w;
}

/* The graph shape given in the file comment. */
static void test_graph(void)
{
  trace_set ts;
  traces_write(&ts);
  fe_kineto_report rep;
  et_workload *w = load(&ts, TRUE, &rep);
  const fe_kineto_rank_report *rr = &rep.ranks[0];
  g_assert_cmpuint(rr->nodes, ==, 14);
  g_assert_cmpuint(rr->gap_nodes, ==, 2);
  g_assert_cmpuint(rr->host_nodes, ==, 9);
  g_assert_true(rr->host_step_tail);
  g_assert_cmpint(rr->launch_lag_ps, ==, 13 * SIM_PS_PER_US);   /* [10,16] + [75,82] */
  g_assert_cmpint(rr->unexplained_idle_ps, ==, 0);
  g_assert_cmpuint(rr->host_threads, ==, 1);
  g_assert_cmpuint(rr->sync_waits, ==, 1);   /* S waits for K2 */
  g_assert_cmpuint(rr->launch_inversions, ==, 0);
  g_assert_cmpuint(rr->cycle_edges_dropped, ==, 0);
  /* The sync node: CPU op, no slot, from K2's end (60 us) to 70 us. */
  const et_graph *g = w->ranks[0];
  gboolean found = FALSE;
  for (uint32_t i = 0; i < g->n_nodes; i++) {
    const et_node *n = &g->nodes[i];
    if (strcmp(g->strings + n->name, "cudaDeviceSynchronize") != 0)
      continue;
    found = TRUE;
    g_assert_true((n->flags & ET_FLAG_CPU_OP) && (n->flags & ET_FLAG_DELAY));
    g_assert_cmpint(n->start_ps, ==, 60 * SIM_PS_PER_US);
    g_assert_cmpint(n->duration_ps, ==, 10 * SIM_PS_PER_US);
  }
  g_assert_true(found);
  et_workload_free(w);
  fe_kineto_report_clear(&rep);
  w = load(&ts, FALSE, &rep);
  g_assert_cmpuint(rep.ranks[0].nodes, ==, 6);
  g_assert_cmpuint(rep.ranks[0].host_nodes, ==, 0);
  g_assert_cmpint(rep.ranks[0].launch_lag_ps, ==, 0);
  g_assert_cmpint(rep.ranks[0].unexplained_idle_ps, ==, 48 * SIM_PS_PER_US); /* [0,16] + [60,82] + [90,100] */
  et_workload_free(w);
  fe_kineto_report_clear(&rep);
  test_rank_files_free(&ts);
}

/* Step time of the 2-rank replay of w on a 2-rank fully connected network
 * of the given link bandwidth and zero latency. */
static sim_time_ps replay_workload(const et_workload *w, const char *bandwidth)
{
  return test_replay_pair(w, bandwidth);
}

static sim_time_ps replay(const trace_set *ts, gboolean host, const char *bandwidth)
{
  et_workload *w = load(ts, host, NULL);
  sim_time_ps step = replay_workload(w, bandwidth);
  et_workload_free(w);
  return step;
}

/* The CPU nodes survive a round trip through Chakra files (is_cpu_op and
 * wisp_delay): the written and re-read workload gives the same 70 us as
 * the in-memory one in test_what_if. */
static void test_round_trip(void)
{
  trace_set ts;
  traces_write(&ts);
  et_workload *w = test_et_round_trip(load(&ts, TRUE, NULL), ts.dir);
  g_assert_cmpint(replay_workload(w, "4194304000000B/s"), ==, 70 * SIM_PS_PER_US);
  et_workload_free(w);
  test_rank_files_free(&ts);
}

/* All-reduce of S = 4 MiB on 2 ranks moves S bytes over each rank's link in
 * total (ring: reduce-scatter S/2 then all-gather S/2; 2 (n - 1) / n x S = S),
 * so with zero latency it takes t = S / B.
 *
 * B = 4,194,304 B / 34 us = 123,361,882,352.94 B/s (given as 123361882353B/s,
 * t = 34.000 us to within 1 ps): every op replays at its measured time,
 * and both models give the measured 100 us.
 *
 * B = 4,194,304,000,000 B/s: t = 1 us.
 *   host model: K2 [26, 27]; S starts when both the CPU (at 30) and K2
 *     (at 27) are done, at 30, and lasts its post-wait time 70 - 60 = 10 us,
 *     ending at 40; idle 5 -> L3 [45, 50]; K3 ready at
 *     max(27, 45) = 45, + 7 us launch lag -> [52, 60]; the step thread's
 *     CPU time after L3, 100 - 80 = 20 us -> 70 us.
 *   without: K3 follows K2's end 27 after the fixed 22 us idle -> [49, 57];
 *     tail 10 -> 67 us. */
static void test_what_if(void)
{
  trace_set ts;
  traces_write(&ts);
  const sim_time_ps us = SIM_PS_PER_US;
  sim_time_ps base_host = replay(&ts, TRUE, "123361882353B/s");
  sim_time_ps base_plain = replay(&ts, FALSE, "123361882353B/s");
  g_test_message("baseline: host model %" G_GINT64_FORMAT " ps, without %" G_GINT64_FORMAT " ps (expected 100 us)",
                 base_host, base_plain);
  g_assert_cmpint(llabs(base_host - 100 * us), <=, 2);
  g_assert_cmpint(llabs(base_plain - 100 * us), <=, 2);
  sim_time_ps fast_host = replay(&ts, TRUE, "4194304000000B/s");
  sim_time_ps fast_plain = replay(&ts, FALSE, "4194304000000B/s");
  g_test_message("all-reduce 1 us: host model %" G_GINT64_FORMAT " ps (expected 70 us), without %" G_GINT64_FORMAT
                 " ps (expected 67 us)", fast_host, fast_plain);
  g_assert_cmpint(fast_host, ==, 70 * us);
  g_assert_cmpint(fast_plain, ==, 67 * us);
  test_rank_files_free(&ts);
}

/* The host model is on by default (fe_kineto_options_init); gap mode has no
 * per-op graph, so it adds no CPU nodes there. */
static void test_defaults_and_gap_mode(void)
{
  fe_kineto_options opt;
  fe_kineto_options_init(&opt);
  g_assert_true(opt.host_launch);
  trace_set ts;
  traces_write(&ts);
  opt.mode = FE_KINETO_GAP;
  fe_kineto_report rep;
  GError *e = NULL;
  et_workload *w = fe_kineto_load((const char *const *)ts.paths, 2, &opt, &rep, &e);
  g_assert_no_error(e);
  g_assert_cmpuint(rep.ranks[0].host_nodes, ==, 0);
  g_assert_cmpuint(rep.ranks[0].host_threads, ==, 0);
  et_workload_free(w);
  fe_kineto_report_clear(&rep);
  test_rank_files_free(&ts);
}

/* A sync call from 95 us to 125 us outlasts the step (window 100 us): its
 * node is clipped to the window, so the baseline still replays 100 us.  It
 * adds two CPU nodes (idle [80, 95], then the sync [95, 100]) and waits for
 * K3, the last op its thread launched, which ended at 90. */
static void test_window_clip(void)
{
  trace_set ts;
  traces_write_full(&ts, 0, TRUE);
  fe_kineto_report rep;
  et_workload *w = load(&ts, TRUE, &rep);
  g_assert_cmpuint(rep.ranks[0].host_nodes, ==, 10); /* 8 + idle [80, 95] + the sync (to the marker's end) */
  g_assert_cmpuint(rep.ranks[0].sync_waits, ==, 2);  /* S waits for K2, the late sync for K3 */
  et_workload_free(w);
  fe_kineto_report_clear(&rep);
  sim_time_ps base = replay(&ts, TRUE, "123361882353B/s");
  g_assert_cmpint(llabs(base - 100 * SIM_PS_PER_US), <=, 2);
  test_rank_files_free(&ts);
}

/* Loads one rank's events (ProfilerStep#1 [0, 100] us on thread 1) with
 * or without --strict; NULL with *e set when the load fails. */
static et_workload *load_one(const char *events, gboolean strict, fe_kineto_report *rep, GError **e)
{
  char *dir = g_dir_make_tmp("wisp-kineto-sync-XXXXXX", NULL);
  char *text = g_strdup_printf("{\"distributedInfo\": {\"rank\": 0, \"world_size\": 1}, \"traceEvents\": [\n"
                               "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", "
                               "\"pid\": 1, \"tid\": 1, \"ts\": 1000000, \"dur\": 100}%s\n]}\n", events);
  char *path = g_build_filename(dir, "rank0.json", NULL);
  g_assert_true(g_file_set_contents(path, text, -1, NULL));
  fe_kineto_options opt;
  fe_kineto_options_init(&opt);
  opt.strict = strict;
  const char *paths[] = { path };
  et_workload *w = fe_kineto_load(paths, 1, &opt, rep, e);
  test_rm_rf(dir);
  g_free(dir);
  g_free(path);
  g_free(text);
  return w;
}

/* A one-rank trace: ProfilerStep#1 over [0, 100] us on thread 1, then the
 * given events (JSON objects, each preceded by ",\n", times relative to
 * the step start at 1,000,000 us).  Loads it (host model on), checks the
 * report's host counts, and replays it on a one-endpoint network: there is
 * no communication, so the replay must give the measured 100 us. */
static void one_rank_check(const char *events, uint64_t host_nodes, uint64_t overlaps, uint64_t waits)
{
  fe_kineto_report rep;
  GError *e = NULL;
  et_workload *w = load_one(events, FALSE, &rep, &e);
  g_assert_no_error(e);
  g_assert_cmpuint(rep.ranks[0].host_nodes, ==, host_nodes);
  g_assert_cmpuint(rep.ranks[0].host_overlaps, ==, overlaps);
  g_assert_cmpuint(rep.ranks[0].sync_waits, ==, waits);
  g_assert_cmpuint(rep.ranks[0].launch_inversions, ==, 0);
  topo *t = topo_load_string("schema_version: 1\nlibrary: {name: ideal}\ndims:\n  - {name: one, kind: switch, size: 1, bandwidth: 1GB/s, "
                             "latency: 1us}\n", "one.yaml", &e);
  g_assert_no_error(e);
  sim_replay_options ro = { .quiet = TRUE };
  sim_result *r = sim_replay_run(w, t, &ro, &e);
  g_assert_no_error(e);
  g_assert_cmpint(r->step_time, ==, 100 * SIM_PS_PER_US);
  sim_result_free(r);
  topo_free(t);
  et_workload_free(w);
  fe_kineto_report_clear(&rep);
}

/* Appends a runtime call on thread 1 and, when corr > 0, the GPU op it
 * launched (category cat: "kernel" or "gpu_memcpy"), in us from the step. */
static void add_call(GString *s, const char *call, long ts, long dur, int corr, const char *cat, long op_ts,
                     long op_dur, int stream)
{
  g_string_append_printf(s, ",\n{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"%s\", \"pid\": 1, "
                            "\"tid\": 1, \"ts\": %ld, \"dur\": %ld, \"args\": {\"correlation\": %d}}",
                         call, 1000000 + ts, dur, corr);
  if (cat)
    g_string_append_printf(s, ",\n{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"op%d\", \"pid\": 0, "
                              "\"tid\": %d, \"ts\": %ld, \"dur\": %ld, \"args\": {\"device\": 0, \"stream\": %d, "
                              "\"correlation\": %d}}", cat, corr, stream, 1000000 + op_ts, op_dur, stream, corr);
}

/* Nested launch calls on one thread, in us:
 *   L1 cudaLaunchKernel [10, 30] launches K1 [32, 40] on stream 7;
 *   L2 [15, 20], inside L1, launches K2 [21, 28] on stream 8;
 *   L3 [25, 40], overlapping L1's end, launches K3 [45, 50] on stream 7.
 * The chain is idle [0, 10], L1, then only L3's part past L1, [30, 40],
 * and the step thread's time up to the marker's end, [40, 100]: 4 CPU
 * nodes, 2 nested calls.  L2 and L3 wait for the idle node (their launch
 * began after it ended at 10 us), like L1. */
static void test_nested_calls(void)
{
  GString *s = g_string_new("");
  add_call(s, "cudaLaunchKernel", 10, 20, 1, "kernel", 32, 8, 7);
  add_call(s, "cudaLaunchKernel", 15, 5, 2, "kernel", 21, 7, 8);
  add_call(s, "cudaLaunchKernel", 25, 15, 3, "kernel", 45, 5, 7);
  one_rank_check(s->str, 4, 2, 0);
  g_string_free(s, TRUE);
}

/* A blocking copy: cudaMemcpy [10, 40] launches the copy X [15, 35] and
 * returns 5 us after it ends; then cudaLaunchKernel [45, 50] launches K
 * [52, 60].  Chain: idle [0, 10], the memcpy node (waits for X: from 35 to
 * 40), idle [40, 45], the launch, the step thread's time [50, 100]: 5 CPU
 * nodes, 1 wait. */
static void test_blocking_copy(void)
{
  GString *s = g_string_new("");
  add_call(s, "cudaMemcpy", 10, 30, 1, "gpu_memcpy", 15, 20, 7);
  add_call(s, "cudaLaunchKernel", 45, 5, 2, "kernel", 52, 8, 7);
  one_rank_check(s->str, 5, 0, 1);
  g_string_free(s, TRUE);
}

/* A runtime call on CPU thread tid and, when stream >= 0, the kernel it
 * launched, in us from the step (correlation corr). */
static void add_call_t(GString *s, int tid, const char *call, long ts, long dur, int corr, long op_ts, long op_dur,
                       int stream)
{
  g_string_append_printf(s, ",\n{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"%s\", \"pid\": 1, "
                            "\"tid\": %d, \"ts\": %ld, \"dur\": %ld, \"args\": {\"correlation\": %d}}",
                         call, tid, 1000000 + ts, dur, corr);
  if (stream >= 0)
    g_string_append_printf(s, ",\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"op%d\", \"pid\": 0, "
                              "\"tid\": %d, \"ts\": %ld, \"dur\": %ld, \"args\": {\"device\": 0, \"stream\": %d, "
                              "\"correlation\": %d}}", corr, stream, 1000000 + op_ts, op_dur, stream, corr);
}

/* A stream sync on a stream its thread never launched on (kineto_threads.h).
 * Thread 1 launches K1 [16, 26] on stream 7 (L1 [10, 15]) and calls
 * cudaStreamSynchronize [40, END]; thread 2 launches K2 [30, 80] on
 * stream 20 (L2 [20, 25]).
 *   END 85: K2, issued before the call, ended 5 us before it returned
 *     (within 20 us): the target is inferred, stream 20; the sync waits for
 *     K2 (1 wait), not for K1, its own thread's launch.
 *   END 99: K2 ended 19 us before, still within 20 us: inferred.
 *   END 99 and a cuda_sync "Stream Sync" on stream 20 with the call's
 *     correlation: stated.
 *   a sync [88, 99]: nothing ended while it ran (K2 ended at 80): it did
 *     not wait, its own launches are assumed (K1).
 *   a sync [40, 99] with K2 [30, 60] ending 39 us before it returned, more
 *     than 20 us and more than half the call (29.5 us): unresolved, an
 *     error under --strict. */
static void test_sync_targets(void)
{
  static const struct { long start, end, k2_end; gboolean stated; int how; } cases[] = {
    { 40, 85, 80, FALSE, 2 }, { 40, 99, 80, FALSE, 2 }, { 40, 99, 80, TRUE, 1 }, { 88, 99, 80, FALSE, 3 },
    { 40, 99, 60, FALSE, 4 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    GString *s = g_string_new("");
    add_call_t(s, 1, "cudaLaunchKernel", 10, 5, 1, 16, 10, 7);
    add_call_t(s, 2, "cudaLaunchKernel", 20, 5, 2, 30, cases[i].k2_end - 30, 20);
    add_call_t(s, 1, "cudaStreamSynchronize", cases[i].start, cases[i].end - cases[i].start, 3, 0, 0, -1);
    if (cases[i].stated)
      g_string_append_printf(s, ",\n{\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"Stream Sync\", \"pid\": 0, "
                                "\"tid\": 20, \"ts\": %ld, \"dur\": %ld, \"args\": {\"cuda_sync_kind\": \"Stream "
                                "Sync\", \"stream\": 20, \"correlation\": 3, \"device\": 0}}", 1000000 + cases[i].start,
                             cases[i].end - cases[i].start);
    for (int strict = 0; strict < 2; strict++) {
      fe_kineto_report rep;
      GError *e = NULL;
      et_workload *w = load_one(s->str, strict, &rep, &e);
      if (strict && cases[i].how == 4) {
        g_assert_null(w);
        g_assert_error(e, WISP_ERROR, WISP_ERROR_INVALID);
        g_assert_nonnull(strstr(e->message, "waited for something the trace does not show"));
        g_clear_error(&e);
        fe_kineto_report_clear(&rep);
        continue;
      }
      g_assert_no_error(e);
      const fe_kineto_rank_report *k = &rep.ranks[0];
      uint64_t got[] = { k->host_syncs_device, k->host_syncs_stated, k->host_syncs_inferred, k->host_syncs_assumed,
                         k->host_syncs_unresolved };
      for (int h = 0; h < 5; h++)
        g_assert_cmpuint(got[h], ==, h == cases[i].how);
      /* The inferred and stated cases wait for K2; the assumed case for
       * K1 (thread 1's launch, ended before the call); the unresolved one
       * for K1 as well. */
      g_assert_cmpuint(k->sync_waits, ==, 1);
      et_workload_free(w);
      fe_kineto_report_clear(&rep);
    }
    g_string_free(s, TRUE);
  }
}

/* A join (kineto_threads.h): thread 1 launches K1 (L1 [10, 15]) and makes
 * no call until L3 [65, 70]; thread 2 launches K2 (L2 [20, 25]) and K4
 * (L4 [55, 60]).  Thread 2's last call before 65 ends at 60, inside thread
 * 1's gap [15, 65] and 5 us before it ends: a join.  With thread 2's last
 * call at [60, 65] instead and L3 at [95, 97], the gap's rest (30 us) is
 * more than 20 us, but thread 2's calls lie inside the gap and the rest is
 * at most half of it (80 us): still a join.  With L2 at [5, 8] and L4 at
 * [30, 35], thread 2's last call ends 60 us before L3, more than half of
 * thread 1's gap: no join; and thread 2's own gap [8, 30] is shorter than
 * the 50 us a join needs (else L1's end at 15 us would explain it). */
static void test_join(void)
{
  static const struct { long l2, l4, l3; uint64_t joins; } cases[] = {
    { 20, 55, 65, 1 }, { 20, 60, 95, 1 }, { 5, 30, 95, 0 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    GString *s = g_string_new("");
    add_call_t(s, 1, "cudaLaunchKernel", 10, 5, 1, 16, 2, 7);
    add_call_t(s, 2, "cudaLaunchKernel", cases[i].l2, cases[i].l2 == 5 ? 3 : 5, 2, cases[i].l2 + 6, 2, 20);
    add_call_t(s, 2, "cudaLaunchKernel", cases[i].l4, 5, 4, cases[i].l4 + 6, 2, 20);
    add_call_t(s, 1, "cudaLaunchKernel", cases[i].l3, 2, 3, cases[i].l3 + 2, 1, 7);
    fe_kineto_report rep;
    GError *e = NULL;
    et_workload *w = load_one(s->str, FALSE, &rep, &e);
    g_assert_no_error(e);
    g_assert_cmpuint(rep.ranks[0].host_joins, ==, cases[i].joins);
    et_workload_free(w);
    fe_kineto_report_clear(&rep);
    g_string_free(s, TRUE);
  }
}

/* Clock check: the all-reduce K2 ends at 60 us after each rank's step start.
 * With equal clocks both ranks agree (spread 0, no warning).  With rank 1's
 * clock 5,000 us ahead, its end reads 5,060 us on the common scale against
 * 60 us; the median of the two (the upper one, 5,060) gives deviations
 * -5,000 us (rank 0) and 0 (rank 1): spread 5 ms, rank 1 latest, and a
 * warning since it exceeds 1 ms.  The replay itself does not change. */
static void test_clock_check(void)
{
  for (int skewed = 0; skewed < 2; skewed++) {
    trace_set ts;
    traces_write_skewed(&ts, skewed ? 5000 : 0);
    fe_kineto_report rep;
    et_workload *w = load(&ts, TRUE, &rep);
    g_assert_cmpint(rep.clock_ranks, ==, 2);
    g_assert_cmpuint(rep.clock_samples_min, ==, 1);
    gboolean warned = FALSE;
    for (guint i = 0; i < rep.warnings->len; i++)
      warned = warned || strstr(g_ptr_array_index(rep.warnings, i), "rank clocks disagree") != NULL;
    if (skewed) {
      g_assert_cmpint(rep.clock_spread_ps, ==, 5000 * SIM_PS_PER_US);
      g_assert_cmpint(rep.clock_rank_late, ==, 1);
      g_assert_cmpint(rep.clock_rank_early, ==, 0);
      g_assert_true(warned);
    } else {
      g_assert_cmpint(rep.clock_spread_ps, ==, 0);
      g_assert_false(warned);
    }
    et_workload_free(w);
    fe_kineto_report_clear(&rep);
    g_assert_cmpint(replay(&ts, TRUE, "4194304000000B/s"), ==, 70 * SIM_PS_PER_US);
    test_rank_files_free(&ts);
  }
}

/* Measured starts: rank 1's trace runs 20 us behind rank 0's on a clock the
 * check accepts (spread 20 us < 1 ms), so the workload carries starts
 * {0, 20 us}.  Replayed with the all-reduce at its measured 34 us:
 *   together: both ranks as measured, 100 us;
 *   measured starts: rank 1's K1 [36, 46] issues the all-reduce at 46, so
 *     it runs [46, 80] on both; each S returns 10 us after it, at 90; idle
 *     5 -> L3 [95, 100]; K3 [102, 110]; the step thread's 20 us after L3
 *     -> 120 us on both ranks, against the measured latest end from the
 *     earliest start, 20 + 100 = 120 us: error 0.  The critical path ends
 *     on rank 0, crosses to rank 1 at the all-reduce (rank 0 waited 20 us
 *     for it) and begins with rank 1's 20 us start offset. */
static void test_measured_starts(void)
{
  trace_set ts;
  traces_write_skewed(&ts, 20);
  et_workload *w = load(&ts, TRUE, NULL);
  g_assert_nonnull(w->measured_start_ps);
  g_assert_cmpint(w->measured_start_ps[0], ==, 0);
  g_assert_cmpint(w->measured_start_ps[1], ==, 20 * SIM_PS_PER_US);
  g_assert_cmpint(sim_report_measured_end(w, TRUE, NULL), ==, 120 * SIM_PS_PER_US);
  g_assert_cmpint(sim_report_measured_end(w, FALSE, NULL), ==, 100 * SIM_PS_PER_US);
  topo *t = topo_load_string("schema_version: 1\nlibrary: {name: ideal}\nname: pair\nmodel: analytical\ndims:\n"
                             "  - {name: link, kind: fully_connected, size: 2, bandwidth: 123361882353B/s, "
                             "latency: 0ns}\n", "pair.yaml", NULL);
  g_assert_nonnull(t);
  GError *e = NULL;
  sim_replay_options ro = { .quiet = TRUE, .measured_starts = TRUE, .critical_path = TRUE };
  sim_result *r = sim_replay_run(w, t, &ro, &e);
  g_assert_no_error(e);
  g_test_message("measured starts: %" G_GINT64_FORMAT " ps (expected 120 us)", r->step_time);
  g_assert_cmpint(llabs(r->step_time - 120 * SIM_PS_PER_US), <=, 2);
  const sim_crit_segment *first = &g_array_index(r->critical->segments, sim_crit_segment, 0);
  g_assert_cmpint(first->category, ==, SIM_CRIT_START_OFFSET);
  g_assert_cmpint(first->rank, ==, 1);
  g_assert_cmpint(first->end, ==, 20 * SIM_PS_PER_US);
  sim_result_free(r);
  /* Together: the measured 100 us (the all-reduce still at 34 us). */
  ro.measured_starts = FALSE;
  r = sim_replay_run(w, t, &ro, &e);
  g_assert_no_error(e);
  g_assert_cmpint(llabs(r->step_time - 100 * SIM_PS_PER_US), <=, 2);
  sim_result_free(r);
  topo_free(t);
  et_workload_free(w);
  /* Clocks 5 ms apart (the clock check warns): no measured starts, and
   * asking for them is an error that says why. */
  test_rank_files_free(&ts);
  traces_write_skewed(&ts, 5000);
  w = load(&ts, TRUE, NULL);
  g_assert_null(w->measured_start_ps);
  t = topo_load_string("schema_version: 1\nlibrary: {name: ideal}\nname: pair\ndims:\n  - {name: link, kind: fully_connected, size: 2, "
                       "bandwidth: 1GB/s, latency: 0ns}\n", "pair.yaml", NULL);
  ro.measured_starts = TRUE;
  g_assert_null(sim_replay_run(w, t, &ro, &e));
  g_assert_error(e, WISP_ERROR, WISP_ERROR_INVALID);
  g_assert_nonnull(strstr(e->message, "--starts measured"));
  g_clear_error(&e);
  topo_free(t);
  et_workload_free(w);
  test_rank_files_free(&ts);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/kineto_host/graph", test_graph);
  g_test_add_func("/kineto_host/what_if", test_what_if);
  g_test_add_func("/kineto_host/round_trip", test_round_trip);
  g_test_add_func("/kineto_host/clock_check", test_clock_check);
  g_test_add_func("/kineto_host/window_clip", test_window_clip);
  g_test_add_func("/kineto_host/nested_calls", test_nested_calls);
  g_test_add_func("/kineto_host/blocking_copy", test_blocking_copy);
  g_test_add_func("/kineto_host/sync_targets", test_sync_targets);
  g_test_add_func("/kineto_host/join", test_join);
  g_test_add_func("/kineto_host/defaults_and_gap_mode", test_defaults_and_gap_mode);
  g_test_add_func("/kineto_host/measured_starts", test_measured_starts);
  return g_test_run();
}
