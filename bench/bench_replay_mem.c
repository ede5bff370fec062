/* bench_replay_mem.c: the replay's memory on the chain benchmark (issue 18
 * section 2: 1,024 ranks x 1,000 steps in <= 150 MB peak RSS on the
 * analytical tier).
 *
 * Builds the chain workload of bench/bench_replay_work.h (one graph per
 * rank: 3 nodes, 4 edges and 2 communication records per step) and replays
 * it with the default options except quiet and, unless told "keep",
 * sim_replay_options.no_comm_records (the run's 2 x RANKS x STEPS
 * communication records are then only counted through the observer, not
 * kept).  Reports, from /proc/self/status:
 *   build   the graphs' heap (et_graph_memory_bytes + string pools, and per
 *           node) and VmRSS after the build (glibc's free memory trimmed)
 *           and the build's peak (VmHWM);
 *   replay  the peak during the replay (VmHWM reset through
 *           /proc/self/clear_refs after the build, so it is the replay's own
 *           peak with the graphs resident) and its increase over the
 *           resident graphs: the replay's own state (per-rank counters,
 *           matching tables, engine queue, network and collective records);
 *   total   the process's peak RSS, and a PASS/FAIL line against the
 *           150 MB target.
 * The exit status is 0 either way (a benchmark measures; `make bench`
 * runs the others after it).  When clear_refs is not writable the replay
 * peak is the process peak and says so.
 *
 * Usage: bench_replay_mem [STEPS [RANKS [drop|keep]]]
 *   defaults: 1000 steps, 1024 ranks, drop.
 */
#include "config.h"
#include "bench/bench_util.h"
#include "bench/bench_replay_work.h"

#include <malloc.h>
#include <string.h>

#define TARGET_KIB (150L * 1000 * 1000 / 1024) /* 150 MB = 146,484 KiB */

static void count_comm(void *ctx, const sim_comm_record *rec)
{
  (void)rec;
  (*(uint64_t *)ctx)++;
}

/* Resets VmHWM to the current RSS (Linux >= 4.0: "5" > clear_refs). */
static gboolean reset_peak(void)
{
  FILE *f = fopen("/proc/self/clear_refs", "w");
  if (f == NULL)
    return FALSE;
  gboolean ok = fputs("5", f) >= 0;
  return fclose(f) == 0 && ok;
}

static double mb(long kib)
{
  return (double)kib * 1024.0 / 1e6;
}

int main(int argc, char **argv)
{
  int steps = argc > 1 ? atoi(argv[1]) : 1000;
  int n = argc > 2 ? atoi(argv[2]) : 1024;
  const char *mode = argc > 3 ? argv[3] : "drop";
  gboolean keep = g_strcmp0(mode, "keep") == 0;
  if (argc > 4 || steps <= 0 || n < 32 || n % 32 != 0 || !(keep || g_strcmp0(mode, "drop") == 0)) {
    fprintf(stderr, "usage: bench_replay_mem [STEPS [RANKS (multiple of 32) [drop|keep]]]\n");
    return 2;
  }
  topo *t = bench_cluster(n);
  long rss0 = bench_status_kib("VmRSS");

  et_workload *w = build(FALSE, n, steps);
  malloc_trim(0);
  long rss_build = bench_status_kib("VmRSS"), hwm_build = bench_status_kib("VmHWM");
  uint64_t graph_bytes = 0, nodes = 0;
  for (int r = 0; r < n; r++) {
    graph_bytes += et_graph_memory_bytes(w->ranks[r]) + w->ranks[r]->strings_len;
    nodes += w->ranks[r]->n_nodes;
  }
  printf("chain %d ranks x %d steps: %" G_GUINT64_FORMAT " nodes in %d graphs\n", n, steps, nodes, n);
  printf("build:  graphs %.1f MB (%.1f B/node, et_graph_memory_bytes + strings); VmRSS %.1f MB after the build "
         "(%.1f MB before), build peak %.1f MB\n",
         (double)graph_bytes / 1e6, (double)graph_bytes / (double)nodes, mb(rss_build), mb(rss0), mb(hwm_build));

  gboolean reset = reset_peak();
  uint64_t records = 0;
  sim_replay_observer obs = { .comm_done = count_comm, .ctx = &records };
  sim_replay_options opt = { .quiet = TRUE, .no_comm_records = !keep, .observer = &obs };
  GError *error = NULL;
  double t0 = wisp_wall_seconds(), c0 = bench_cpu_seconds();
  sim_result *res = sim_replay_run(w, t, &opt, &error);
  double wall = wisp_wall_seconds() - t0, cpu = bench_cpu_seconds() - c0;
  if (res == NULL) {
    fprintf(stderr, "bench_replay_mem: %s\n", error->message);
    return 1;
  }
  long hwm_replay = bench_status_kib("VmHWM");
  char step[32];
  printf("replay: %.3f s wall, %.3f s CPU, %" G_GUINT64_FORMAT " events, step time %s ns, %" G_GUINT64_FORMAT
         " communication records (%s: %u kept, %.1f MB)\n",
         wall, cpu, res->events, wisp_ns_string(res->step_time, step), records,
         keep ? "kept" : "no_comm_records", res->comms->len,
         (double)res->comms->len * sizeof(sim_comm_record) / 1e6);
  printf("replay: peak %.1f MB%s = resident graphs %.1f MB + replay state %.1f MB\n", mb(hwm_replay),
         reset ? "" : " (process peak: /proc/self/clear_refs not writable)", mb(rss_build),
         mb(hwm_replay - rss_build));
  long peak = MAX(hwm_build, hwm_replay);
  if (steps == 1000 && n == 1024)
    printf("peak RSS (VmHWM): %.1f MB (%ld KiB); target <= 150 MB: %s\n", mb(peak), peak,
           peak <= TARGET_KIB ? "PASS" : "FAIL");
  else
    printf("peak RSS (VmHWM): %.1f MB (%ld KiB); the 150 MB target is for 1024 ranks x 1000 steps\n", mb(peak),
           peak);
  sim_result_free(res);
  et_workload_free(w);
  topo_free(t);
  return 0;
}
