/* test_kineto_idle.c: GPU idle is derived from the dependencies the graph
 * models, never replayed as measured waiting (frontends/kineto_graph.c,
 * place_idle; frontends/kineto_extract.c, infer_wait_edges), and
 * communication that cannot be simulated replays its measured time.
 *
 * One hand-made tensor-parallel step, the same on both ranks of a 2-rank
 * job, in microseconds from the step start (thread 1 runs the step marker
 * and every call unless a test moves the all-reduce's calls to thread 2):
 *
 *   CPU:  L1 cudaLaunchKernel [10, 15] -> K1 gemm, stream 7, [16, 56]
 *         R1 cudaEventRecord [16, 17]  W1 cudaStreamWaitEvent [18, 19]
 *         L2 cudaLaunchKernel [20, 25] -> AR all-reduce of 4 MiB, stream 20,
 *                                          [56, 96] (waits for K1 through R1/W1)
 *         R2 cudaEventRecord [26, 27]  W2 cudaStreamWaitEvent [28, 29]
 *         L3 cudaLaunchKernel [30, 35] -> K2 gemm, stream 7, [98, 138]
 *                                          (waits for AR through R2/W2)
 *         S cudaDeviceSynchronize [40, 140]
 *   ProfilerStep#1 [0, 150].
 *
 * The graph (host model): K1 follows its launch (launch lag [10, 16]); AR
 * follows K1 (the record/wait edge; its launch began at 20 < 56); K2's
 * latest predecessor is AR (ended at 96; K1 at 56, its launch at 30), so
 * its 2 us of unexplained idle hang after AR, and nothing holds K2 to a
 * fixed delay after K1.  S waits for K2 and AR and lasts 140 - 138 = 2 us
 * after them; the step thread's CPU time [140, 150] closes the step.
 *
 * Replays on 2 ranks, fully connected, zero latency: the ring all-reduce of
 * S = 4,194,304 B over n = 2 moves 2 (n - 1) / n S = S bytes per rank, so
 * it takes S / B.
 *   B = 104,857,600,000 B/s: 40 us, every op at its measured time: 150 us.
 *   2B: 20 us: AR [56, 76], K2 [78, 118], S returns 120, tail 10: 130 us.
 *   The old rule (idle measured from the stream predecessor) kept K2 42 us
 *   after K1, at 98, whatever the network: 150 us at 2B too.
 *   B / 2: 80 us: AR [56, 136], K2 [138, 178], S 180, tail: 190 us.
 */
#include "config.h"

#include "frontends/fe.h"
#include "replay/sim_replay.h"
#include "topologies/topo.h"
#include "regress/test_util.h"

#include <string.h>

#define US SIM_PS_PER_US

typedef struct {
  gboolean records;     /* write cudaEventRecord calls */
  int ar_thread;        /* thread of L2, R2 and W2 (1, or 2 for a DDP-like hook thread) */
  gboolean sized;       /* the all-reduce carries its size */
} trace_opts;

static void call(GString *s, int tid, const char *name, long ts, long dur, int corr)
{
  g_string_append_printf(s, ",\n{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"%s\", \"pid\": 1, \"tid\": %d, "
                            "\"ts\": %ld, \"dur\": %ld, \"args\": {\"correlation\": %d}}", name, tid, 1000000 + ts, dur,
                         corr);
}

static void kernel(GString *s, const char *name, int stream, long ts, long dur, int corr, const char *args)
{
  g_string_append_printf(s, ",\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": %d, "
                            "\"ts\": %ld, \"dur\": %ld, \"args\": {\"device\": 0, \"stream\": %d, \"correlation\": %d%s}}",
                         name, stream, 1000000 + ts, dur, stream, corr, args ? args : "");
}

static char *tp_json(int rank, const trace_opts *o)
{
  GString *s = g_string_new("");
  g_string_append_printf(s, "{\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d, \"world_size\": 2}, "
                            "\"traceEvents\": [\n{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": "
                            "\"ProfilerStep#1\", \"pid\": 1, \"tid\": 1, \"ts\": 1000000, \"dur\": 150}", rank);
  int t2 = o->ar_thread;
  call(s, 1, "cudaLaunchKernel", 10, 5, 1);
  if (o->records)
    call(s, 1, "cudaEventRecord", 16, 1, 11);
  call(s, t2, "cudaStreamWaitEvent", 18, 1, 12);
  call(s, t2, "cudaLaunchKernel", 20, 5, 2);
  if (o->records)
    call(s, t2, "cudaEventRecord", 26, 1, 13);
  call(s, t2, "cudaStreamWaitEvent", 28, 1, 14);
  call(s, 1, "cudaLaunchKernel", 30, 5, 3);
  call(s, 1, "cudaDeviceSynchronize", 40, 100, 15);
  kernel(s, "sm90_gemm_k1", 7, 16, 40, 1, NULL);
  kernel(s, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 20, 56, 40, 2,
         o->sized ? ", \"Collective name\": \"allreduce\", \"In msg nelems\": 1048576, \"Out msg nelems\": 1048576, "
                    "\"Group size\": 2, \"dtype\": \"Float\", \"Process Group Name\": \"0\", "
                    "\"Process Group Ranks\": \"[0, 1]\", \"Seq\": 1"
                  : ", \"Collective name\": \"allreduce\", \"Group size\": 2, \"Process Group Name\": \"0\", "
                    "\"Process Group Ranks\": \"[0, 1]\", \"Seq\": 1");
  kernel(s, "sm90_gemm_k2", 7, 98, 40, 3, NULL);
  g_string_append(s, "\n]}\n");
  return g_string_free(s, FALSE);
}

static et_workload *load(const trace_opts *o, gboolean host, gboolean strict, fe_kineto_report *rep, GError **e)
{
  char *texts[2] = { tp_json(0, o), tp_json(1, o) };
  test_rank_files ts;
  test_rank_files_write(&ts, "wisp-kineto-idle-XXXXXX", texts, 2);
  g_free(texts[0]);
  g_free(texts[1]);
  fe_kineto_options opt;
  fe_kineto_options_init(&opt);
  opt.host_launch = host;
  opt.strict = strict;
  et_workload *w = fe_kineto_load((const char *const *)ts.paths, 2, &opt, rep, e);
  test_rank_files_free(&ts);
  return w;
}

/* Step time of w on 2 ranks, fully connected, zero latency, bandwidth bw. */
static sim_time_ps replay(const et_workload *w, const char *bw)
{
  return test_replay_pair(w, bw);
}

/* The replays of the file comment, in both directions, for one graph. */
static void check_what_if(const et_workload *w, const char *what)
{
  sim_time_ps base = replay(w, "104857600000B/s"), fast = replay(w, "209715200000B/s"),
              slow = replay(w, "52428800000B/s");
  g_test_message("%s: B %" G_GINT64_FORMAT " ps (expected 150 us), 2B %" G_GINT64_FORMAT " ps (expected 130 us), "
                 "B/2 %" G_GINT64_FORMAT " ps (expected 190 us)", what, base, fast, slow);
  g_assert_cmpint(base, ==, 150 * US);
  g_assert_cmpint(fast, ==, 130 * US);
  g_assert_cmpint(slow, ==, 190 * US);
}

/* Record/wait pairs on one thread: the idle is derived, the what-if moves. */
static void test_record_wait(void)
{
  trace_opts o = { TRUE, 1, TRUE };
  fe_kineto_report rep;
  GError *e = NULL;
  et_workload *w = load(&o, TRUE, FALSE, &rep, &e);
  g_assert_no_error(e);
  const fe_kineto_rank_report *rr = &rep.ranks[0];
  g_assert_cmpuint(rr->cross_stream_edges, ==, 2);   /* K1 -> AR, AR -> K2 */
  g_assert_cmpuint(rr->inferred_sync_edges, ==, 0);
  g_assert_cmpint(rr->launch_lag_ps, ==, 6 * US);     /* [10, 16] */
  g_assert_cmpint(rr->unexplained_idle_ps, ==, 2 * US); /* [96, 98] after AR */
  g_assert_cmpuint(rr->sync_waits, ==, 2);           /* S waits for K2 and AR */
  sim_time_ps lag, unexplained;
  et_graph_fixed_idle(w->ranks[0], &lag, &unexplained);
  g_assert_cmpint(lag, ==, 6 * US);
  g_assert_cmpint(unexplained, ==, 2 * US);
  check_what_if(w, "record/wait, host model");
  et_workload_free(w);
  fe_kineto_report_clear(&rep);
  /* Without the host model: K1's idle [0, 16] from the window start, K2's
   * 2 us after AR, and the tail [138, 150] after every stream's end. */
  w = load(&o, FALSE, FALSE, &rep, &e);
  g_assert_no_error(e);
  g_assert_cmpint(rep.ranks[0].launch_lag_ps, ==, 0);
  g_assert_cmpint(rep.ranks[0].unexplained_idle_ps, ==, (16 + 2 + 12) * US);
  check_what_if(w, "record/wait, no host model");
  et_workload_free(w);
  fe_kineto_report_clear(&rep);
}

/* No cudaEventRecord calls (older Kineto): the two waits are inferred from
 * the timeline.  AR starts at 56 with 36 us of idle after its launch (at
 * 20), right when K1 (stream 7) ends, with W1 (18) between K1's launch (10)
 * and AR's launch (20); K2 starts 2 us after AR ends, with W2 (28) between
 * the launches at 20 and 30.  Same graph, same replays. */
/* Loads o's trace with the host model; both cross-stream edges must be
 * inferred, the unexplained idle be K2's 2 us and the replays those of the
 * file comment. */
static void check_inferred(const trace_opts *o, const char *what)
{
  fe_kineto_report rep;
  GError *e = NULL;
  et_workload *w = load(o, TRUE, FALSE, &rep, &e);
  g_assert_no_error(e);
  g_assert_cmpuint(rep.ranks[0].inferred_sync_edges, ==, 2);
  g_assert_cmpuint(rep.ranks[0].cross_stream_edges, ==, 2);
  g_assert_cmpuint(rep.ranks[0].sync_waits, ==, 2);     /* S waits for K2 and AR */
  g_assert_cmpint(rep.ranks[0].unexplained_idle_ps, ==, 2 * US);
  check_what_if(w, what);
  et_workload_free(w);
  fe_kineto_report_clear(&rep);
}

static void test_inferred(void)
{
  trace_opts o = { FALSE, 1, TRUE };
  check_inferred(&o, "inferred waits");
}

/* W1, L2, R2 and W2 on thread 2 (a DDP hook thread); L1, R1, L3 and S on
 * thread 1.  The per-thread pairing finds nothing: thread 1 records (R1)
 * but never waits, and thread 2's W1 comes before anything it recorded,
 * its pair R2/W2 before no later launch of its own.  Both edges are then
 * inferred from the timeline: AR starts 36 us after its launch, when K1
 * ends, with W1 between the launches of K1 (10) and AR (20); K2 starts
 * 2 us after AR ends, 63 us after its launch, with W2 between 20 and 30.
 * Same graph, same replays; the device sync on thread 1 waits for AR
 * although thread 2 launched it. */
static void test_other_thread(void)
{
  trace_opts o = { TRUE, 2, TRUE };
  check_inferred(&o, "waits on another thread");
}

/* An all-reduce without a size: every member replays its measured 40 us
 * (ET_FLAG_REPLAY), which neither vanishes nor responds to the network:
 * 150 us at B, 2B and B/2.  --strict makes it an error naming the op. */
static void test_unsized(void)
{
  trace_opts o = { TRUE, 1, FALSE };
  fe_kineto_report rep;
  GError *e = NULL;
  et_workload *w = load(&o, TRUE, FALSE, &rep, &e);
  g_assert_no_error(e);
  g_assert_cmpuint(rep.ranks[0].comm_size_unknown, ==, 1);
  g_assert_cmpuint(rep.ranks[0].comm_replayed, ==, 1);
  et_unsimulated u;
  et_workload_unsimulated(w, &u);
  g_assert_cmpuint(u.replayed_nodes, ==, 2);
  g_assert_cmpint(u.replayed_ranks, ==, 2);
  g_assert_cmpint(u.replayed_ps, ==, 80 * US);
  g_assert_cmpint(replay(w, "104857600000B/s"), ==, 150 * US);
  g_assert_cmpint(replay(w, "209715200000B/s"), ==, 150 * US);
  g_assert_cmpint(replay(w, "52428800000B/s"), ==, 150 * US);
  et_workload_free(w);
  fe_kineto_report_clear(&rep);
  w = load(&o, TRUE, TRUE, &rep, &e);
  g_assert_null(w);
  g_assert_error(e, WISP_ERROR, WISP_ERROR_INVALID);
  g_assert_nonnull(strstr(e->message, "has no size"));
  g_clear_error(&e);
  fe_kineto_report_clear(&rep);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/kineto_idle/record_wait", test_record_wait);
  g_test_add_func("/kineto_idle/inferred", test_inferred);
  g_test_add_func("/kineto_idle/other_thread", test_other_thread);
  g_test_add_func("/kineto_idle/unsized", test_unsized);
  return g_test_run();
}
