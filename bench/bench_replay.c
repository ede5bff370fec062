/* bench_replay.c: the replay's speed on the analytical tier (the "chain
 * benchmark", 256 ranks x 1000 steps).
 *
 * The workloads and cluster are in bench/bench_replay_work.h (shared with
 * the memory benchmark, bench_replay_mem.c).  Both workloads are built in
 * memory (no file I/O) and replayed on the analytical tier with the
 * default options; the build is not timed.
 *
 * The ring workloads (issue 18, "collective cost at scale") are a step of
 * a 20 us compute node followed by a 4 MiB all-reduce over all RANKS ranks
 * (any RANKS >= 2), the next step waiting for it, replayed with `--algo
 * ring` on one switch of RANKS ports at 400 GB/s and 936.25 ns per hop
 * (compare_astra_sim.sh's defaults, ASTRA-sim's HGX-H100-validated.yml):
 *   ring:      library ideal (wisp's textbook ring, ASTRA-sim's default);
 *   ring-nccl: library nccl (the NCCL model's ring).
 *
 * Usage: bench_replay [STEPS [RANKS [chain|coll|both|ring|ring-nccl]]]
 *   defaults: 1000 steps, 256 ranks, both; without arguments (make bench)
 *   also ring and ring-nccl at 256 ranks and ring at 1,024 ranks.
 * Prints per workload the events processed, the step time (so a change of
 * the network model that should not affect this contention-free traffic
 * can be checked), wall and CPU seconds and events per second of each.
 * Wall-clock figures on a shared machine vary by about 10 %; for a
 * before/after comparison use instruction counts, e.g.
 *   valgrind --tool=callgrind --callgrind-out-file=/dev/null bench/bench_replay 1000 256 chain
 * and compare the "Collected" line.
 */
#include "config.h"
#include "bench/bench_util.h"
#include "bench/bench_replay_work.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double wall_seconds(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void run_ring(const char *name, gboolean nccl, int n, int steps)
{
  char *yaml = g_strdup_printf("schema_version: 1\n"
                               "name: bench-ring\n"
                               "model: analytical\n"
                               "library: {name: %s}\n"
                               "dims:\n"
                               "  - {name: sw, kind: switch, size: %d, bandwidth: 400GB/s, latency: 936.25ns}\n",
                               nccl ? "nccl" : "ideal", n);
  GError *error = NULL;
  topo *t = topo_load_string(yaml, "bench-ring.yaml", &error);
  g_free(yaml);
  if (t == NULL) {
    fprintf(stderr, "bench_replay: %s\n", error->message);
    exit(1);
  }
  et_workload *w = et_workload_new(n, "bench-ring");
  for (int r = 0; r < n; r++)
    w->ranks[r] = allreduce_rank(NULL, steps); /* over the world */
  sim_replay_options opt = { .quiet = TRUE, .has_algo = TRUE, .algo = COLL_ALGO_RING };
  double c0 = bench_cpu_seconds(), t0 = wall_seconds();
  sim_result *r = sim_replay_run(w, t, &opt, &error);
  double t1 = wall_seconds(), c1 = bench_cpu_seconds();
  if (r == NULL) {
    fprintf(stderr, "bench_replay: %s\n", error->message);
    exit(1);
  }
  char step[32];
  printf("%-9s %d ranks x %d steps: %" G_GUINT64_FORMAT " events, step time %s ns; %.3f s wall, %.3f s CPU\n", name, n,
         steps, r->events, wisp_ns_string(r->step_time, step), t1 - t0, c1 - c0);
  sim_result_free(r);
  et_workload_free(w);
  topo_free(t);
}

static void run(const char *name, gboolean coll, int n, int steps, const topo *t)
{
  et_workload *w = build(coll, n, steps);
  sim_replay_options opt = { .quiet = TRUE };
  GError *error = NULL;
  double c0 = bench_cpu_seconds(), t0 = wall_seconds();
  sim_result *r = sim_replay_run(w, t, &opt, &error);
  double t1 = wall_seconds(), c1 = bench_cpu_seconds();
  if (r == NULL) {
    fprintf(stderr, "bench_replay: %s\n", error->message);
    exit(1);
  }
  char step[32];
  printf("%-5s %d ranks x %d steps: %" G_GUINT64_FORMAT " events, step time %s ns; %.3f s wall = %.2f M events/s, "
         "%.3f s CPU = %.2f M events/s\n",
         name, n, steps, r->events, wisp_ns_string(r->step_time, step), t1 - t0, (double)r->events / (t1 - t0) / 1e6, c1 - c0,
         (double)r->events / (c1 - c0) / 1e6);
  sim_result_free(r);
  et_workload_free(w);
}

int main(int argc, char **argv)
{
  int steps = argc > 1 ? atoi(argv[1]) : 1000;
  int n = argc > 2 ? atoi(argv[2]) : 256;
  const char *which = argc > 3 ? argv[3] : "both";
  gboolean do_chain = g_strcmp0(which, "chain") == 0 || g_strcmp0(which, "both") == 0;
  gboolean do_coll = g_strcmp0(which, "coll") == 0 || g_strcmp0(which, "both") == 0;
  gboolean do_ring = g_strcmp0(which, "ring") == 0, do_ring_nccl = g_strcmp0(which, "ring-nccl") == 0;
  if (argc <= 4 && steps > 0 && n >= 2 && (do_ring || do_ring_nccl)) {
    run_ring(which, do_ring_nccl, n, steps);
    printf("peak RSS: %ld KiB\n", bench_status_kib("VmHWM"));
    return 0;
  }
  if (argc == 1) { /* make bench: the ring workloads too, at 256 and 1,024 ranks */
    run_ring("ring", FALSE, 256, steps);
    run_ring("ring-nccl", TRUE, 256, steps);
    run_ring("ring", FALSE, 1024, steps);
  }
  if (argc > 4 || steps <= 0 || n < 32 || n % 32 != 0 || !(do_chain || do_coll)) {
    fprintf(stderr, "usage: bench_replay [STEPS [RANKS (multiple of 32) [chain|coll|both]]]\n"
                    "       bench_replay [STEPS [RANKS (>= 2) ring|ring-nccl]]\n");
    return 2;
  }
  topo *t = bench_cluster(n);
  if (do_chain)
    run("chain", FALSE, n, steps, t);
  if (do_coll)
    run("coll", TRUE, n, steps, t);
  printf("peak RSS: %ld KiB\n", bench_status_kib("VmHWM"));
  topo_free(t);
  return 0;
}
