/* bench_replay.c: the replay's speed on the analytical tier (the "chain
 * benchmark", 256 ranks x 1000 steps).
 *
 * The workloads and cluster are in bench/bench_replay_work.h (shared with
 * the memory benchmark, bench_replay_mem.c).  Both workloads are built in
 * memory (no file I/O) and replayed on the analytical tier with the
 * default options; the build is not timed.
 *
 * Usage: bench_replay [STEPS [RANKS [chain|coll|both]]]
 *   defaults: 1000 steps, 256 ranks, both.
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
  if (argc > 4 || steps <= 0 || n < 32 || n % 32 != 0 || !(do_chain || do_coll)) {
    fprintf(stderr, "usage: bench_replay [STEPS [RANKS (multiple of 32) [chain|coll|both]]]\n");
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
