/* bench_replay_mem.c: the replay's memory on the Chakra chain benchmark
 * (issue 18 section 2: 1,024 ranks x 1,000 steps in <= 150 MB peak RSS on
 * the analytical tier).
 *
 * Writes the chain workload of bench/bench_replay_work.h (per rank 3
 * nodes, 4 edges and 2 communication records per step; the ranks differ
 * only in their peers r+1 and r-1) as Chakra files, one rank at a time
 * (each graph is freed once written), loads them with et_workload_load --
 * which shares one graph among ranks equal up to a rank shift
 * (chakra/et_share.h), unless told "noshare" -- and replays the workload
 * with the default options except quiet and, unless told "keep",
 * sim_replay_options.no_comm_records (the run's 2 x RANKS x STEPS
 * communication records are then only counted through the observer, not
 * kept).  Reports, from /proc/self/status:
 *   write   the files' size and the writing's peak (VmHWM);
 *   load    the time, the distinct graphs, their heap
 *           (et_graph_memory_bytes + string pools, and per node) and
 *           VmRSS after the load (glibc's free memory trimmed) and the
 *           load's peak (VmHWM reset before it);
 *   replay  the peak during the replay (VmHWM reset through
 *           /proc/self/clear_refs after the load, so it is the replay's own
 *           peak with the graphs resident) and its increase over the
 *           resident graphs: the replay's own state (per-rank counters,
 *           matching tables, engine queue, network and collective records);
 *   total   the process's peak RSS, and a PASS/FAIL line against the
 *           150 MB target.
 * The files go to a temporary directory that is removed afterwards.  The
 * exit status is 0 either way (a benchmark measures; `make bench` runs the
 * others after it).  When clear_refs is not writable the load and replay
 * peaks are the process peak and say so.
 *
 * Usage: bench_replay_mem [STEPS [RANKS [drop|keep [share|noshare]]]]
 *   defaults: 1000 steps, 1024 ranks, drop, share.
 * With BENCH_CHAIN_DIR=DIR in the environment the files go to DIR (created
 * when absent) and stay there, beside DIR/network.yaml (the benchmark's
 * cluster), so that `wisp simulate DIR/chain --network DIR/network.yaml`
 * can be measured on the same input (bench/compare_astra_sim.sh's
 * neighbours and the note of issue 30 do).
 */
#include "config.h"
#include "bench/bench_util.h"
#include "bench/bench_replay_work.h"
#include "chakra/et_io.h"
#include "chakra/et_share.h"

#include <malloc.h>
#include <string.h>
#include <glib/gstdio.h>

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

/* Writes the chain's rank files DIR/chain.<r>.et one rank at a time;
 * returns their total size in bytes. */
static uint64_t write_chain(const char *dir, int n, int steps)
{
  uint64_t bytes = 0;
  for (int r = 0; r < n; r++) {
    et_graph *g = chain_rank(r, n, steps);
    char *path = g_strdup_printf("%s/chain.%d.et", dir, r);
    GError *error = NULL;
    if (!et_write_file(g, path, &error)) {
      fprintf(stderr, "bench_replay_mem: %s\n", error->message);
      exit(1);
    }
    GStatBuf st;
    if (g_stat(path, &st) == 0)
      bytes += (uint64_t)st.st_size;
    g_free(path);
    et_graph_free(g);
  }
  return bytes;
}

static void remove_chain(const char *dir, int n)
{
  for (int r = 0; r < n; r++) {
    char *path = g_strdup_printf("%s/chain.%d.et", dir, r);
    g_remove(path);
    g_free(path);
  }
  g_rmdir(dir);
}

int main(int argc, char **argv)
{
  int steps = argc > 1 ? atoi(argv[1]) : 1000;
  int n = argc > 2 ? atoi(argv[2]) : 1024;
  const char *mode = argc > 3 ? argv[3] : "drop";
  const char *sharing = argc > 4 ? argv[4] : "share";
  gboolean keep = g_strcmp0(mode, "keep") == 0, share = g_strcmp0(sharing, "share") == 0;
  if (argc > 5 || steps <= 0 || n < 32 || n % 32 != 0 || !(keep || g_strcmp0(mode, "drop") == 0) ||
      !(share || g_strcmp0(sharing, "noshare") == 0)) {
    fprintf(stderr, "usage: bench_replay_mem [STEPS [RANKS (multiple of 32) [drop|keep [share|noshare]]]]\n");
    return 2;
  }
  topo *t = bench_cluster(n);
  long rss0 = bench_status_kib("VmRSS");
  GError *error = NULL;
  const char *keep_dir = g_getenv("BENCH_CHAIN_DIR");
  char *dir = keep_dir != NULL && g_mkdir_with_parents(keep_dir, 0755) == 0
                ? g_strdup(keep_dir) : g_dir_make_tmp("wisp-bench-chain-XXXXXX", &error);
  if (keep_dir != NULL && !bench_cluster_yaml_write(dir, n)) {
    fprintf(stderr, "bench_replay_mem: cannot write %s/network.yaml\n", dir);
    return 1;
  }
  if (dir == NULL) {
    fprintf(stderr, "bench_replay_mem: %s\n", error->message);
    return 1;
  }
  uint64_t file_bytes = write_chain(dir, n, steps);
  long hwm_write = bench_status_kib("VmHWM");
  printf("chain %d ranks x %d steps: %.1f MB of Chakra files written one rank at a time (peak %.1f MB)\n", n, steps,
         (double)file_bytes / 1e6, mb(hwm_write));

  malloc_trim(0);
  gboolean reset = reset_peak();
  char *prefix = g_strdup_printf("%s/chain", dir);
  double l0 = wisp_wall_seconds();
  et_workload *w = et_workload_load(prefix, share ? 0 : ET_LOAD_NO_SHARE, &error);
  double load_s = wisp_wall_seconds() - l0;
  g_free(prefix);
  if (keep_dir == NULL)
    remove_chain(dir, n);
  g_free(dir);
  if (w == NULL) {
    fprintf(stderr, "bench_replay_mem: %s\n", error->message);
    return 1;
  }
  long hwm_load = bench_status_kib("VmHWM");
  malloc_trim(0);
  long rss_load = bench_status_kib("VmRSS");
  uint64_t graph_bytes = 0, nodes = 0;
  int distinct = 0;
  for (int r = 0; r < n; r++) {
    nodes += w->ranks[r]->n_nodes;
    if (w->share == NULL || et_share_canonical(w->share, r) == r) {
      graph_bytes += et_graph_memory_bytes(w->ranks[r]) + w->ranks[r]->strings_len;
      distinct++;
    }
  }
  printf("load:   %.3f s, %" G_GUINT64_FORMAT " nodes, %d ranks in %d distinct graph(s) (%s); graphs %.1f MB "
         "(%.1f B/node of the distinct graphs, et_graph_memory_bytes + strings); VmRSS %.1f MB after the load "
         "(%.1f MB before writing), load peak %.1f MB%s\n",
         load_s, nodes, n, distinct, share ? "shared" : "ET_LOAD_NO_SHARE", (double)graph_bytes / 1e6,
         (double)graph_bytes / ((double)nodes * distinct / n), mb(rss_load), mb(rss0), mb(hwm_load),
         reset ? "" : " (process peak: /proc/self/clear_refs not writable)");

  reset = reset_peak();
  uint64_t records = 0;
  sim_replay_observer obs = { .comm_done = count_comm, .ctx = &records };
  sim_replay_options opt = { .quiet = TRUE, .no_comm_records = !keep, .observer = &obs };
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
  printf("replay: peak %.1f MB%s = resident graphs and workload %.1f MB + replay state %.1f MB\n", mb(hwm_replay),
         reset ? "" : " (process peak: /proc/self/clear_refs not writable)", mb(rss_load),
         mb(hwm_replay - rss_load));
  long peak = MAX(MAX(hwm_write, hwm_load), hwm_replay);
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
