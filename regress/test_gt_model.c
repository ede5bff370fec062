/* test_gt_model.c: the ground-truth model (regress/gt_model.h,
 * doc/ground-truth.md) against closed forms worked out by hand next to
 * each check, its determinism and deadlock detection, and wisp's Kineto
 * frontend reading every scenario's traces with every collective and
 * send/recv matched and sized.  Nothing here judges wisp's predictions.
 *
 * Machine defaults used in the hand computations: cudaLaunchKernel 5 us,
 * kernel eligible 3 us after the call starts, record/wait calls 2 us,
 * stream gap 1 us, event gap 2 us, sync return 5 us; network alpha 2 us,
 * beta 100 GB/s.
 */
#include "config.h"

#include "regress/gt_model.h"
#include "common/wisp_util.h"
#include "frontends/fe.h"
#include "regress/test_util.h"

#include <string.h>

#define US INT64_C(1000)
#define MiB (UINT64_C(1) << 20)
#define BETA UINT64_C(100000000000)

static gt_job *job(int n)
{
  gt_params p;
  gt_params_init(&p, GT_TP);
  return gt_job_new(&p, n);
}

static void run_ok(gt_job *j)
{
  GError *e = NULL;
  g_assert_true(gt_job_run(j, &e));
  g_assert_no_error(e);
}

/* T = steps * alpha + bus_bytes / beta, rounded once to the ns (halves up). */
static void test_closed_forms(void)
{
  /* all_reduce n=2, 8 MiB: 2*1*2 us + 2*1/2 * 8388608 B / 100e9 B/s = 4 us + 83886.08 ns. */
  g_assert_cmpint(gt_coll_ns(GT_ALL_REDUCE, 8 * MiB, 2, 2 * US, BETA), ==, 4000 + 83886);
  /* all_reduce n=8, 32 MiB: 14 * 2 us + 14/8 * 33554432 / 100e9 s = 28 us + 587202.56 ns. */
  g_assert_cmpint(gt_coll_ns(GT_ALL_REDUCE, 32 * MiB, 8, 2 * US, BETA), ==, 28000 + 587203);
  /* reduce_scatter n=4, 8 MiB full input: 3 * 2 us + 3/4 * 8388608 / 100e9 s = 6 us + 62914.56 ns. */
  g_assert_cmpint(gt_coll_ns(GT_REDUCE_SCATTER, 8 * MiB, 4, 2 * US, BETA), ==, 6000 + 62915);
  /* all_gather n=4, 1 MiB shard: 3 * 2 us + 3 * 1048576 / 100e9 s = 6 us + 31457.28 ns. */
  g_assert_cmpint(gt_coll_ns(GT_ALL_GATHER, 1 * MiB, 4, 2 * US, BETA), ==, 6000 + 31457);
  /* Halves round up: 2 * 1/2 * 5 B / 1e9 B/s = 5 ns; 1 B / 2e9 B/s = 0.5 ns -> 1 ns. */
  g_assert_cmpint(gt_coll_ns(GT_ALL_REDUCE, 5, 2, 0, UINT64_C(1000000000)), ==, 5);
  g_assert_cmpint(gt_p2p_ns(1, 0, UINT64_C(2000000000)), ==, 1);
  /* send/recv: alpha + S / beta = 2 us + 16777216 / 100e9 s = 2 us + 167772.16 ns. */
  g_assert_cmpint(gt_p2p_ns(16 * MiB, 2 * US, BETA), ==, 2000 + 167772);
  /* A group of one rank takes no time. */
  g_assert_cmpint(gt_coll_ns(GT_ALL_REDUCE, 8 * MiB, 1, 2 * US, BETA), ==, 0);
  /* Doubling beta: round(100e9 * 2). */
  gt_params p;
  gt_params_init(&p, GT_TP);
  p.bw_scale = 2;
  g_assert_cmpuint(gt_params_beta(&p), ==, 2 * BETA);
}

/* Per rank: launch(compute, gemm gemm_us); record(compute, 1);
 * wait(comm, 1); launch(comm, all_reduce 8 MiB over both ranks);
 * device_sync().  Returns the ops and the sync action in out[]. */
static void two_rank_program(gt_job *j, const int64_t gemm_us[2], int out[2][3])
{
  for (int r = 0; r < 2; r++) {
    out[r][0] = gt_launch_compute(j, r, GT_STREAM_COMPUTE, "gemm", gemm_us[r] * US);
    gt_record(j, r, GT_STREAM_COMPUTE, 1);
    gt_wait(j, r, GT_STREAM_COMM, 1);
    out[r][1] = gt_launch_coll(j, r, GT_STREAM_COMM, GT_ALL_REDUCE, 8 * MiB, GT_GROUP_WORLD);
    out[r][2] = gt_device_sync(j, r);
  }
}

/* One compute kernel and one all-reduce on 2 ranks, by hand:
 *   gemm launch [0, 5 us], eligible at 3 us, runs [3 us, 103 us];
 *   record [5, 7] us: reached when the gemm ends, 103 us;
 *   wait [7, 9] us; all-reduce launch [9, 14] us, eligible at 12 us,
 *   starts at max(12, 103 + 2) = 105 us and lasts T = 4 us + 83886 ns, so
 *   ends at 105000 + 87886 = 192886 ns;
 *   device_sync starts at 14 us and returns at 192886 + 5000 = 197886 ns. */
static void test_two_ranks(void)
{
  gt_job *j = job(2);
  int ids[2][3];
  two_rank_program(j, (const int64_t[]){ 100, 100 }, ids);
  run_ok(j);
  for (int r = 0; r < 2; r++) {
    gt_op_times k = gt_job_op(j, r, ids[r][0]), c = gt_job_op(j, r, ids[r][1]);
    g_assert_cmpint(k.launch_ns, ==, 0);
    g_assert_cmpint(k.eligible_ns, ==, 3000);
    g_assert_cmpint(k.start_ns, ==, 3000);
    g_assert_cmpint(k.end_ns, ==, 103000);
    g_assert_cmpint(c.launch_ns, ==, 9000);
    g_assert_cmpint(c.start_ns, ==, 105000);
    g_assert_cmpint(c.end_ns, ==, 105000 + 4000 + 83886);
    int64_t s, e;
    gt_job_action(j, r, ids[r][2], &s, &e);
    g_assert_cmpint(s, ==, 14000);
    g_assert_cmpint(e, ==, 192886 + 5000);
  }
  gt_job_free(j);
}

/* Rank 1's gemm takes 150 us: its all-reduce starts at 155 us, rank 0's
 * still at 105 us; both end at max(105, 155) us + 87886 ns = 242886 ns, so
 * rank 0's kernel lasts T + 50 us (it waited for its peer). */
static void test_peer_wait(void)
{
  gt_job *j = job(2);
  int ids[2][3];
  two_rank_program(j, (const int64_t[]){ 100, 150 }, ids);
  run_ok(j);
  gt_op_times c0 = gt_job_op(j, 0, ids[0][1]), c1 = gt_job_op(j, 1, ids[1][1]);
  g_assert_cmpint(c0.start_ns, ==, 105000);
  g_assert_cmpint(c1.start_ns, ==, 155000);
  g_assert_cmpint(c0.end_ns, ==, 242886);
  g_assert_cmpint(c1.end_ns, ==, 242886);
  g_assert_cmpint(c0.end_ns - c0.start_ns, ==, 87886 + 50000);
  g_assert_cmpint(c1.end_ns - c1.start_ns, ==, 87886);
  gt_job_free(j);
}

/* Stream rules on one rank. */
static void test_stream_rules(void)
{
  gt_job *j = job(1);
  /* Back to back: A [0,5] us call, runs [3, 103] us; B call [5, 10] us,
   * eligible at 8 us, starts at A's end + 1 us gap = 104 us. */
  int a = gt_launch_compute(j, 0, GT_STREAM_COMPUTE, "A", 100 * US);
  int b = gt_launch_compute(j, 0, GT_STREAM_COMPUTE, "B", 10 * US);
  /* Host work 200 us [10, 210]: C call [210, 215], eligible at 213 us, after
   * B ended (114 us): no gap, C starts at 213 us. */
  gt_cpu(j, 0, 200 * US);
  int c = gt_launch_compute(j, 0, GT_STREAM_COMPUTE, "C", 50 * US);
  /* record(compute, 1) [215, 217]: reached at C's end, 263 us.
   * D on the comm stream without a wait: call [217, 222], starts when
   * eligible at 220 us. */
  gt_record(j, 0, GT_STREAM_COMPUTE, 1);
  int d = gt_launch_compute(j, 0, GT_STREAM_COMM, "D", 1 * US);
  /* wait(comm, 1) [222, 224]; E call [224, 229], eligible at 227 us, but
   * waits for the event: 263 + 2 = 265 us (D ended at 221 us). */
  gt_wait(j, 0, GT_STREAM_COMM, 1);
  int e = gt_launch_compute(j, 0, GT_STREAM_COMM, "E", 1 * US);
  /* A record behind a wait: record(comm, 2) [229, 231] is reached when E
   * ends, 266 us; wait(p2p, 2) [231, 233]; record(p2p, 3) [233, 235] on a
   * stream with no op: reached when event 2 is, plus the event gap,
   * 266 + 2 = 268 us; wait(compute, 3) [235, 237]; F call [237, 242],
   * eligible at 240 us, starts at 268 + 2 = 270 us. */
  gt_record(j, 0, GT_STREAM_COMM, 2);
  gt_wait(j, 0, GT_STREAM_P2P, 2);
  gt_record(j, 0, GT_STREAM_P2P, 3);
  gt_wait(j, 0, GT_STREAM_COMPUTE, 3);
  int f = gt_launch_compute(j, 0, GT_STREAM_COMPUTE, "F", 1 * US);
  /* Waiting for an event never recorded does nothing: wait [242, 244],
   * G call [244, 249], eligible at 247 us, after F (271 us) + 1 us. */
  gt_wait(j, 0, GT_STREAM_COMPUTE, 99);
  int g = gt_launch_compute(j, 0, GT_STREAM_COMPUTE, "G", 1 * US);
  /* device_sync [249, ...]: the GPU is idle at G's end, 273 us; returns
   * 5 us later, 278 us.  A second sync with nothing pending returns after
   * R_sync alone: [278, 283] us. */
  int s1 = gt_device_sync(j, 0);
  int s2 = gt_device_sync(j, 0);
  run_ok(j);
  g_assert_cmpint(gt_job_op(j, 0, a).start_ns, ==, 3 * US);
  g_assert_cmpint(gt_job_op(j, 0, b).start_ns, ==, 104 * US);
  g_assert_cmpint(gt_job_op(j, 0, c).start_ns, ==, 213 * US);
  g_assert_cmpint(gt_job_op(j, 0, d).start_ns, ==, 220 * US);
  g_assert_cmpint(gt_job_op(j, 0, e).start_ns, ==, 265 * US);
  g_assert_cmpint(gt_job_op(j, 0, f).start_ns, ==, 270 * US);
  g_assert_cmpint(gt_job_op(j, 0, g).start_ns, ==, 272 * US);
  int64_t st, en;
  gt_job_action(j, 0, s1, &st, &en);
  g_assert_cmpint(st, ==, 249 * US);
  g_assert_cmpint(en, ==, 278 * US);
  gt_job_action(j, 0, s2, &st, &en);
  g_assert_cmpint(st, ==, 278 * US);
  g_assert_cmpint(en, ==, 283 * US);
  gt_job_free(j);
}

/* A send and its recv end together, alpha + S / beta after the later
 * start: send call [0,5] us (eligible 3 us); the recv's rank does 100 us
 * of host work first, recv call [100, 105] us, eligible at 103 us; both
 * end at 103 us + 2 us + 167772 ns = 272772 ns. */
static void test_send_recv(void)
{
  gt_job *j = job(2);
  int s = gt_launch_p2p(j, 0, GT_STREAM_P2P, GT_SEND, 1, 16 * MiB, GT_GROUP_WORLD);
  gt_cpu(j, 1, 100 * US);
  int r = gt_launch_p2p(j, 1, GT_STREAM_P2P, GT_RECV, 0, 16 * MiB, GT_GROUP_WORLD);
  run_ok(j);
  g_assert_cmpint(gt_job_op(j, 0, s).start_ns, ==, 3000);
  g_assert_cmpint(gt_job_op(j, 1, r).start_ns, ==, 103000);
  g_assert_cmpint(gt_job_op(j, 0, s).end_ns, ==, 103000 + 2000 + 167772);
  g_assert_cmpint(gt_job_op(j, 1, r).end_ns, ==, 103000 + 2000 + 167772);
  gt_job_free(j);
}

/* Port contention (gt_ports.c): ports shared max-min fairly.  Every
 * launch call takes 5 us and its kernel is eligible 3 us after the call
 * starts; 16 MiB at 100 GB/s is W = 167772 ns of bandwidth work, the
 * latency L = 2 us per step (a send/recv: one step; an all-reduce of 2
 * ranks: 2).
 * (a) Rank 0 sends to rank 1, then to rank 2 (calls [0,5] and [5,10] us:
 *     ready at 3 and 8 us; the receives are posted at 3 us).  The first
 *     drains alone for 5000 ns, then both share rank 0's egress at half
 *     rate: the first drains its 162772 ns left by 3000 + 5000 + 2 x
 *     162772 = 333544 and ends L later, 335544; the second has 5000 left
 *     at full rate: 338544 + 2000 = 340544 (the port busy 2 W from 3 us).
 * (b) The same with an all-reduce of ranks 0 and 1 first (ready at 3 us,
 *     L = 4 us): it ends 333544 + 4000 = 337544, the send 340544.
 * (c) Rank 0 sends to rank 1 while rank 2 sends to rank 0 (rank 0's
 *     receive called second, ready at 8 us): egress and ingress are
 *     different ports, so each takes its closed form, 3000 + 169772 and
 *     8000 + 169772. */
static void test_ports(void)
{
  gt_params p;
  gt_params_init(&p, GT_TP);
  p.port_contention = TRUE;
  for (int c = 0; c < 3; c++) {
    gt_job *j = gt_job_new(&p, 3);
    int grp = gt_job_add_group(j, "tp", (const int[]){0, 1}, 2), a = -1, b = -1;
    if (c == 0) {
      a = gt_launch_p2p(j, 0, GT_STREAM_P2P, GT_SEND, 1, 16 * MiB, GT_GROUP_WORLD);
      gt_launch_p2p(j, 1, GT_STREAM_P2P, GT_RECV, 0, 16 * MiB, GT_GROUP_WORLD);
    } else if (c == 1) {
      a = gt_launch_coll(j, 0, GT_STREAM_COMM, GT_ALL_REDUCE, 16 * MiB, grp);
      gt_launch_coll(j, 1, GT_STREAM_COMM, GT_ALL_REDUCE, 16 * MiB, grp);
    } else {
      a = gt_launch_p2p(j, 0, GT_STREAM_P2P, GT_SEND, 1, 16 * MiB, GT_GROUP_WORLD);
      gt_launch_p2p(j, 1, GT_STREAM_P2P, GT_RECV, 0, 16 * MiB, GT_GROUP_WORLD);
      b = gt_launch_p2p(j, 0, GT_STREAM_COMM, GT_RECV, 2, 16 * MiB, GT_GROUP_WORLD);
      gt_launch_p2p(j, 2, GT_STREAM_P2P, GT_SEND, 0, 16 * MiB, GT_GROUP_WORLD);
    }
    if (c < 2) {
      b = gt_launch_p2p(j, 0, GT_STREAM_P2P_RECV, GT_SEND, 2, 16 * MiB, GT_GROUP_WORLD);
      gt_launch_p2p(j, 2, GT_STREAM_P2P, GT_RECV, 0, 16 * MiB, GT_GROUP_WORLD);
    }
    run_ok(j);
    static const int64_t want[3][2] = {{335544, 340544}, {337544, 340544}, {3000 + 169772, 8000 + 169772}};
    g_assert_cmpint(gt_job_op(j, 0, a).end_ns, ==, want[c][0]);
    g_assert_cmpint(gt_job_op(j, 0, b).end_ns, ==, want[c][1]);
    gt_job_free(j);
  }
}

static gt_result run_scenario(gt_scenario s, double bw_scale)
{
  gt_params p;
  gt_params_init(&p, s);
  p.bw_scale = bw_scale;
  gt_result res;
  GError *e = NULL;
  g_assert_true(gt_run(&p, NULL, &res, &e));
  g_assert_no_error(e);
  return res;
}

/* Doubling beta: tp gains 10-20 %, launch (almost) nothing; the true step
 * is ProfilerStep#2's longest rank. */
static void test_doubling(void)
{
  for (int s = 0; s < GT_N_SCENARIOS; s++) {
    gt_result b = run_scenario((gt_scenario)s, 1), b2 = run_scenario((gt_scenario)s, 2);
    double u = (double)(b.step_ns - b2.step_ns) / (double)b.step_ns;
    if (g_test_verbose())
      g_printerr("%s: T_B %" G_GINT64_FORMAT " ns, T_2B %" G_GINT64_FORMAT " ns, utility %.6f\n",
                 gt_scenario_name((gt_scenario)s), b.step_ns, b2.step_ns, u);
    g_assert_cmpint(b2.step_ns, <=, b.step_ns);
    int64_t longest = 0;
    for (int r = 0; r < b.n_ranks; r++)
      longest = MAX(longest, b.rank_step_ns[r]);
    g_assert_cmpint(longest, ==, b.step_ns);
    switch ((gt_scenario)s) {
    case GT_TP:
      g_assert_cmpfloat(u, >=, 0.10);
      g_assert_cmpfloat(u, <=, 0.20);
      break;
    case GT_LAUNCH:
      /* Only the 4 KiB world all-reduce's bandwidth term changes:
       * 14/8 * 4096 B / 100e9 B/s = 71.68 ns -> 72 ns, at 2B 35.84 -> 36 ns. */
      g_assert_cmpint(b.step_ns - b2.step_ns, ==, 72 - 36);
      break;
    case GT_STRAGGLER: {
      gt_result tp = run_scenario(GT_TP, 1);
      g_assert_cmpint(b.step_ns, >, tp.step_ns);
      g_assert_cmpint(b2.step_ns, <, b.step_ns);
      break;
    }
    default:
      g_assert_cmpint(b2.step_ns, <, b.step_ns);
      break;
    }
  }
}

/* The tp step by hand from its structure: the CPU runs ahead, so the
 * compute stream is a chain.  Per layer: gemm 600 us, 1 us gap,
 * elementwise 200 us, 2 us event gap to the all-reduce T_l, 2 us event gap
 * back; the step starts with 50 us of host work and a launch whose kernel
 * is eligible 10 + 3 us later. */
static void test_tp_by_hand(void)
{
  gt_params p;
  gt_params_init(&p, GT_TP);
  gt_result res;
  GError *e = NULL;
  g_assert_true(gt_run(&p, NULL, &res, &e));
  int64_t t_a = gt_coll_ns(GT_ALL_REDUCE, 8 * MiB, 8, 2 * US, BETA);
  int64_t t_b = gt_coll_ns(GT_ALL_REDUCE, 32 * MiB, 8, 2 * US, BETA);
  int64_t t_f = gt_coll_ns(GT_ALL_REDUCE, 4096, 8, 2 * US, BETA);
  /* Step start -> first gemm: head 50 + host 10 + submit 3 us. */
  int64_t t = 63 * US;
  for (int l = 0; l < 12; l++)
    t += 600 * US + 1 * US + 200 * US + 2 * US + (l % 2 ? t_b : t_a) + 2 * US;
  /* Loss kernel 100 us, then the world all-reduce 2 us after it, the sync
   * returning 5 us after that, and 100 us of tail. */
  t += 100 * US + 2 * US + t_f + 5 * US + 100 * US;
  g_assert_cmpint(res.step_ns, ==, t);
}

static char *read_all(const char *dir, int n)
{
  GString *s = g_string_new("");
  for (int r = 0; r < n; r++) {
    char *name = g_strdup_printf("rank%d.json", r), *path = g_build_filename(dir, name, NULL), *text = NULL;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    g_string_append(s, text);
    g_free(text);
    g_free(path);
    g_free(name);
  }
  return g_string_free(s, FALSE);
}

/* Two runs write byte-identical files. */
static void test_determinism(void)
{
  char *dir = g_dir_make_tmp("wisp-gt-XXXXXX", NULL);
  char *d1 = g_build_filename(dir, "a", NULL), *d2 = g_build_filename(dir, "b", NULL);
  for (int s = 0; s < GT_N_SCENARIOS; s++) {
    gt_params p;
    gt_params_init(&p, (gt_scenario)s);
    p.cuda_sync_events = TRUE;
    gt_result r1, r2;
    g_assert_true(gt_run(&p, d1, &r1, NULL));
    g_assert_true(gt_run(&p, d2, &r2, NULL));
    g_assert_cmpint(r1.step_ns, ==, r2.step_ns);
    char *a = read_all(d1, r1.n_ranks), *b = read_all(d2, r2.n_ranks);
    g_assert_cmpstr(a, ==, b);
    g_free(a);
    g_free(b);
  }
  test_rm_rf(dir);
  g_free(d1);
  g_free(d2);
  g_free(dir);
}

/* A recv with no send, and two collectives issued in opposite orders, are
 * reported as deadlocks naming what waits; members disagreeing on a size
 * are an invalid program. */
static void test_deadlock(void)
{
  gt_job *j = job(2);
  gt_launch_p2p(j, 1, GT_STREAM_P2P, GT_RECV, 0, 1024, GT_GROUP_WORLD);
  gt_device_sync(j, 1);
  GError *e = NULL;
  g_assert_false(gt_job_run(j, &e));
  g_assert_error(e, WISP_ERROR, WISP_ERROR_DEADLOCK);
  g_assert_nonnull(strstr(e->message, "rank 1 stream 24: recv #1 from rank 0 has no matching send on rank 0"));
  g_assert_nonnull(strstr(e->message, "rank 1 CPU: blocked in cudaDeviceSynchronize"));
  g_clear_error(&e);
  gt_job_free(j);

  j = job(2);
  int g1 = gt_job_add_group(j, "a", (const int[]){ 0, 1 }, 2);
  gt_launch_coll(j, 0, GT_STREAM_COMM, GT_ALL_REDUCE, 1024, g1);
  gt_launch_coll(j, 0, GT_STREAM_COMM, GT_ALL_REDUCE, 1024, GT_GROUP_WORLD);
  gt_launch_coll(j, 1, GT_STREAM_COMM, GT_ALL_REDUCE, 1024, GT_GROUP_WORLD);
  gt_launch_coll(j, 1, GT_STREAM_COMM, GT_ALL_REDUCE, 1024, g1);
  g_assert_false(gt_job_run(j, &e));
  g_assert_error(e, WISP_ERROR, WISP_ERROR_DEADLOCK);
  g_assert_nonnull(strstr(e->message, "rank 0 stream 20: all_reduce #1 of group 1 (a) waits for rank(s) 1"));
  g_clear_error(&e);
  gt_job_free(j);

  j = job(2);
  gt_launch_coll(j, 0, GT_STREAM_COMM, GT_ALL_REDUCE, 1024, GT_GROUP_WORLD);
  gt_launch_coll(j, 1, GT_STREAM_COMM, GT_ALL_REDUCE, 2048, GT_GROUP_WORLD);
  g_assert_false(gt_job_run(j, &e));
  g_assert_error(e, WISP_ERROR, WISP_ERROR_INVALID);
  g_clear_error(&e);
  gt_job_free(j);
}

/* wisp's Kineto frontend on every scenario's traces, with and without the
 * cuda_sync events: every NCCL kernel of the measured step (ProfilerStep#2)
 * is a matched collective or send/recv sized from its kernel args, nothing
 * is dropped or mismatched, and the measured window is the true step. */
static void test_wisp_reads(void)
{
  char *dir = g_dir_make_tmp("wisp-gt-XXXXXX", NULL);
  for (int s = 0; s < GT_N_SCENARIOS; s++)
    for (int cs = 0; cs < 2; cs++) {
      gt_params p;
      gt_params_init(&p, (gt_scenario)s);
      p.cuda_sync_events = cs;
      char *out = g_strdup_printf("%s/%s%s", dir, gt_scenario_name((gt_scenario)s), cs ? "-sync" : "");
      gt_result res;
      GError *e = NULL;
      g_assert_true(gt_run(&p, out, &res, &e));
      g_assert_no_error(e);
      fe_kineto_options opt;
      fe_kineto_options_init(&opt);
      opt.threads = 1;
      if (p.scenario == GT_SERVE)
        opt.step = 2; /* vLLM markers are steps 0..5 by start time; the default would take the last */
      fe_kineto_report rep;
      const char *paths[] = { out };
      et_workload *w = fe_kineto_load(paths, 1, &opt, &rep, &e);
      g_assert_no_error(e);
      g_assert_nonnull(w);
      /* NCCL kernels per rank and step: tp-like one all-reduce per layer;
       * dp one per bucket; pp 2M send/recv and two DP all-reduces; tpdp
       * one per layer forward and backward and one per DP bucket; plus
       * the closing all-reduce (serve: one per layer, no closing one). */
      uint64_t comm = p.scenario == GT_DP ? (uint64_t)((p.bwd_kernels + p.bucket_kernels - 1) / p.bucket_kernels) + 1
                      : p.scenario == GT_PP ? 2 * (uint64_t)p.microbatches + 3
                      : p.scenario == GT_TPDP
                        ? 2 * (uint64_t)p.layers + (uint64_t)((p.layers + p.bucket_layers - 1) / p.bucket_layers) + 1
                        : p.scenario == GT_SERVE ? (uint64_t)p.layers
                        : (uint64_t)p.layers + 1;
      g_assert_cmpint(rep.n_files, ==, res.n_ranks);
      g_assert_cmpuint(rep.dropped, ==, 0);
      g_assert_cmpuint(rep.mismatches, ==, 0);
      for (int r = 0; r < rep.n_files; r++) {
        const fe_kineto_rank_report *k = &rep.ranks[r];
        g_assert_cmpint(k->step_used, ==, 2);
        g_assert_cmpuint(k->comm_kernels, ==, comm);
        g_assert_cmpuint(k->comm_matched, ==, comm);
        g_assert_cmpuint(k->comm_dropped, ==, 0);
        g_assert_cmpuint(k->comm_size_from_args, ==, comm);
        g_assert_cmpuint(k->comm_size_unknown, ==, 0);
        g_assert_cmpuint(k->cuda_sync_events > 0, ==, cs);
        g_assert_cmpint(k->window_ps, ==, res.rank_step_ns[k->rank] * SIM_PS_PER_NS);
      }
      for (int r = 0; r < w->n_ranks; r++)
        g_assert_cmpint(w->measured_step_ps[r], ==, res.rank_step_ns[r] * SIM_PS_PER_NS);
      et_workload_free(w);
      fe_kineto_report_clear(&rep);
      g_free(out);
    }
  test_rm_rf(dir);
  g_free(dir);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/gt_model/closed_forms", test_closed_forms);
  g_test_add_func("/gt_model/two_ranks", test_two_ranks);
  g_test_add_func("/gt_model/peer_wait", test_peer_wait);
  g_test_add_func("/gt_model/stream_rules", test_stream_rules);
  g_test_add_func("/gt_model/send_recv", test_send_recv);
  g_test_add_func("/gt_model/ports", test_ports);
  g_test_add_func("/gt_model/doubling", test_doubling);
  g_test_add_func("/gt_model/tp_by_hand", test_tp_by_hand);
  g_test_add_func("/gt_model/determinism", test_determinism);
  g_test_add_func("/gt_model/deadlock", test_deadlock);
  g_test_add_func("/gt_model/wisp_reads", test_wisp_reads);
  return g_test_run();
}
