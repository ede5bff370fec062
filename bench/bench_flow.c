/* bench_flow.c: tier B (max-min flows) under churn.
 *
 * A 1,024-endpoint two-level fat tree (32 leaves of 32 endpoints, 32
 * spines, non-blocking, 50 GB/s links, 500 ns per link), loaded with
 * topo_load_string.  10,000 flows are issued at time 0; every completion
 * issues a new flow after a seeded random gap of 0-10 us, so about 10,000
 * flows stay in flight while flows keep arriving and leaving.  Sizes are
 * log-uniform between 64 KiB and 16 MiB.  After a warm-up of
 * W = min(flows, M) completions the benchmark measures M more and reports flow events (starts plus
 * finishes, i.e. solver updates) per wall-clock second and the mean size of
 * the component each solve re-solved.
 *
 * Traffic patterns (--pattern):
 *   group8   endpoints talk within groups of 8 (one server / tensor-parallel
 *            group); the components are the groups.
 *   leaf     endpoints talk within their leaf (32 endpoints).
 *   uniform  any endpoint to any endpoint: routes cross the spines, so the
 *            whole fabric is one component and every event re-solves it.
 * --quantum T (e.g. 1us) sets the flow tier's batching quantum (net.h):
 * starts and finishes then share one solve per multiple of T, and the
 * mean simulated flow duration is printed so runs with different quanta
 * can be compared (same seed: same traffic until the quanta shift times).
 * Usage: bench_flow [--pattern P|all] [--flows N] [--measure M] [--seed S]
 *                   [--tier analytical|flow] [--quantum T]
 * Figures go to stdout.  Same seed, same simulated results.
 */
#include "config.h"
#include "bench/bench_util.h"

#include "net/net.h"

#include <math.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

static const char *fat_tree_1024 =
    "schema_version: 1\n"
    "name: bench-fat-tree-1024\n"
    "model: flow\n"
    "dims:\n"
    "  - {name: fabric, kind: fat_tree, size: 1024, leaves: 32, spines: 32,\n"
    "     bandwidth: 50GB/s, latency: 500ns}\n";

typedef struct {
  net *n;
  sim_engine *sim;
  GRand *rng;
  int group;             /* endpoints per traffic group */
  int n_ranks;
  uint64_t completions;
  uint64_t warmup, stop_at;
  double t0, cpu0;
  uint64_t ev0;
  lmm_stats st0;
  sim_time_ps sim0;
  double dur_sum_ps;     /* sum of measured flow durations (issue to completion) */
  uint64_t dur_n;
} bench;

static void issue(bench *b, uint64_t cookie);

static void ev_issue(sim_engine *sim, void *ctx, uint64_t cookie) {
  (void)sim;
  issue(ctx, cookie);
}

/* cookie: the flow's issue time. */
static void on_done(sim_engine *sim, void *ctx, uint64_t issued) {
  bench *b = ctx;
  b->completions++;
  if (b->completions > b->warmup) {
    b->dur_sum_ps += (double)(sim_now(sim) - (sim_time_ps)issued);
    b->dur_n++;
  }
  if (b->completions == b->warmup) {
    b->t0 = wisp_wall_seconds();
    b->cpu0 = bench_cpu_seconds();
    b->ev0 = net_flow_events(b->n);
    net_get_solver_stats(b->n, &b->st0);
    b->sim0 = sim_now(sim);
  }
  if (b->completions == b->stop_at) {
    sim_stop(sim);
    return;
  }
  sim_schedule_after(sim, (sim_time_ps)g_rand_int_range(b->rng, 0, 10001) * SIM_PS_PER_NS, ev_issue, b, 0);
}

static void issue(bench *b, uint64_t cookie) {
  (void)cookie;
  int src = g_rand_int_range(b->rng, 0, b->n_ranks);
  int base = src / b->group * b->group;
  int dst = base + g_rand_int_range(b->rng, 0, b->group - 1);
  if (dst >= src) dst++;
  /* log-uniform in [64 KiB, 16 MiB] */
  double e = g_rand_double_range(b->rng, 16.0, 24.0);
  uint64_t bytes = (uint64_t)exp2(e);
  net_send(b->n, src, dst, bytes, on_done, b, (uint64_t)sim_now(b->sim));
}

static int run_pattern(const topo *t, const char *pattern, net_tier tier, int flows, uint64_t measure,
                       guint32 seed, sim_time_ps quantum) {
  bench b = {.n_ranks = topo_n_ranks(t)};
  if (!strcmp(pattern, "group8")) b.group = 8;
  else if (!strcmp(pattern, "leaf")) b.group = 32;
  else if (!strcmp(pattern, "uniform")) b.group = b.n_ranks;
  else {
    fprintf(stderr, "bench_flow: unknown pattern '%s' (group8, leaf, uniform, all)\n", pattern);
    return 2;
  }
  b.sim = sim_engine_new(FALSE);
  b.n = net_new(b.sim, t, tier);
  net_set_flow_quantum(b.n, quantum);
  b.rng = g_rand_new_with_seed(seed);
  /* Warm up for one generation of flows (capped by the measured count so
   * the slow uniform pattern stays short). */
  b.warmup = (uint64_t)flows < measure ? (uint64_t)flows : measure;
  b.stop_at = b.warmup + measure;
  double t_start = wisp_wall_seconds();
  for (int i = 0; i < flows; i++) issue(&b, 0);
  sim_run(b.sim, SIM_TIME_MAX);
  double t_end = wisp_wall_seconds();
  double cpu = bench_cpu_seconds() - b.cpu0;
  if (b.completions < b.stop_at) {
    fprintf(stderr, "bench_flow: run ended early (%" G_GUINT64_FORMAT " completions)\n", b.completions);
    return 1;
  }
  double wall = t_end - b.t0;
  uint64_t ev = net_flow_events(b.n) - b.ev0;
  lmm_stats st;
  net_get_solver_stats(b.n, &st);
  uint64_t solves = st.solves - b.st0.solves;
  char buf[32];
  printf("pattern %-8s tier %-10s flows %d  warm-up %.2f s  measured %" G_GUINT64_FORMAT
         " completions in %.3f s wall (%.3f s CPU), %s us simulated\n",
         pattern, net_tier_name(tier), flows, b.t0 - t_start, measure, wall, cpu,
         wisp_ns_string((sim_now(b.sim) - b.sim0) / 1000, buf));
  if (tier == NET_TIER_FLOW) {
    printf("  quantum %s ns; flow events (starts+finishes): %" G_GUINT64_FORMAT "  -> %.0f flow events/s wall, "
           "%.0f per CPU s; mean measured flow time %.3f us\n", wisp_ns_string(quantum, buf), ev, ev / wall,
           ev / cpu, b.dur_n ? b.dur_sum_ps / (double)b.dur_n / 1e6 : 0.0);
    printf("  solves %" G_GUINT64_FORMAT ", mean re-solved component: %.1f variables, %.1f constraints;"
           " mean rates changed per solve %.1f; in flight at end %zu\n",
           solves, solves ? (double)(st.component_vars - b.st0.component_vars) / solves : 0.0,
           solves ? (double)(st.component_cnsts - b.st0.component_cnsts) / solves : 0.0,
           solves ? (double)(st.changed - b.st0.changed) / solves : 0.0, net_active_flows(b.n));
  } else {
    printf("  transfers: %.0f completions/s wall, %.0f per CPU s\n", measure / wall, measure / cpu);
  }
  net_free(b.n);
  sim_engine_free(b.sim);
  g_rand_free(b.rng);
  return 0;
}

int main(int argc, char **argv) {
  const char *pattern = "all";
  int flows = 10000;
  long long measure = -1;
  guint32 seed = 1;
  net_tier tier = NET_TIER_FLOW;
  sim_time_ps quantum = 0;
  for (int i = 1; i < argc; i++) {
    if (i + 1 < argc && !strcmp(argv[i], "--pattern")) pattern = argv[++i];
    else if (i + 1 < argc && !strcmp(argv[i], "--flows")) flows = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--measure")) measure = atoll(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--seed")) seed = (guint32)strtoul(argv[++i], NULL, 10);
    else if (i + 1 < argc && !strcmp(argv[i], "--quantum")) {
      const char *why;
      if (!wisp_parse_time(argv[++i], &quantum, &why)) {
        fprintf(stderr, "bench_flow: --quantum '%s': %s\n", argv[i], why);
        return 2;
      }
    }
    else if (i + 1 < argc && !strcmp(argv[i], "--tier")) {
      if (!net_tier_from_name(argv[++i], &tier)) {
        fprintf(stderr, "bench_flow: unknown tier '%s' (analytical, flow)\n", argv[i]);
        return 2;
      }
    } else {
      fprintf(stderr, "usage: bench_flow [--pattern group8|leaf|uniform|all] [--flows N] [--measure M] "
                      "[--seed S] [--tier analytical|flow] [--quantum TIME]\n");
      return 2;
    }
  }
  if (flows < 1) {
    fprintf(stderr, "bench_flow: --flows must be >= 1\n");
    return 2;
  }
  GError *err = NULL;
  topo *t = topo_load_string(fat_tree_1024, "bench-fat-tree-1024.yaml", &err);
  if (!t) {
    fprintf(stderr, "bench_flow: %s\n", err->message);
    g_error_free(err);
    return 1;
  }
  printf("bench_flow: %d endpoints, %u links (fat tree, 32 leaves x 32, 32 spines), seed %u\n",
         topo_n_ranks(t), topo_n_links(t), seed);
  int rc = 0;
  static const char *const all[] = {"group8", "leaf", "uniform"};
  /* The uniform pattern re-solves the whole fabric per event: measure
   * fewer completions by default so the run stays short. */
  static const long long default_measure[] = {200000, 100000, 300};
  for (size_t k = 0; k < G_N_ELEMENTS(all) && !rc; k++) {
    if (strcmp(pattern, "all") && strcmp(pattern, all[k])) continue;
    rc = run_pattern(t, all[k], tier, flows, (uint64_t)(measure > 0 ? measure : default_measure[k]), seed, quantum);
  }
  if (!rc && strcmp(pattern, "all") && strcmp(pattern, "group8") && strcmp(pattern, "leaf") &&
      strcmp(pattern, "uniform"))
    rc = run_pattern(t, pattern, tier, flows, 1, seed, quantum); /* reports the unknown pattern */
  topo_free(t);
  return rc;
}
