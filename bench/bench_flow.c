/* bench_flow.c: tier B (max-min flows) under churn, exact and approximate.
 *
 * A 1,024-endpoint two-level fat tree (32 leaves of 32 endpoints, 32
 * spines, non-blocking, 50 GB/s links, 500 ns per link), loaded with
 * topo_load_string.  The workload is F chains (--flows, default 10,000) of
 * L transfers each (--length): every chain issues its first transfer at
 * time 0 and each next one after a gap of 0-10 us (whole nanoseconds) once
 * the previous one has completed, so about F flows stay in flight while
 * flows keep arriving and leaving; the workload ends when every chain has
 * completed its L transfers (its "step time").  Sizes are log-uniform
 * between 64 KiB and 16 MiB.  Every draw (source, destination, size, gap)
 * is a hash of (seed, chain, index), so the workload is the same whatever
 * order the transfers complete in, and runs with different quanta can be
 * compared transfer by transfer.
 *
 * Speed: flow events (starts plus finishes, i.e. solver updates) per CPU
 * second over a window of M completions (--measure) after a warm-up of W
 * completions (--warmup, default F, one generation of flows), plus the
 * mean size of the component each solve re-solved.  The run then goes on
 * to the end of the workload.
 *
 * Accuracy: the flow tier's approximate mode (net_set_flow_quantum: at
 * most one solve per quantum) runs with each quantum of --quantum
 * T[,T2...] (default 4us) after an exact reference run (quantum 0) of the
 * same workload, and prints, against the reference, the relative error of
 * the step time (the last completion), of the worst chain's completion
 * and of the worst transfer's completion time (issue to completion), and
 * the mean and 99th percentile of the latter.  --exact-only and
 * --approx-only skip one side.  --noise B adds an exact run of the
 * workload with transfer 0 B bytes larger and prints its "error" the same
 * way: max-min sharing under churn is chaotic (a small change reorders
 * later events), so this is the floor below which per-chain and
 * per-transfer differences are not the approximation's.  --stop N ends
 * every run after N completions (for profiling; the digest then counts
 * unfinished transfers as -1 and the errors are meaningless).
 *
 * Every run prints a digest (FNV-1a over every transfer's completion time
 * in picoseconds, in transfer order): the same digest means the same
 * simulated results.
 *
 * Traffic patterns (--pattern):
 *   group8   endpoints talk within groups of 8 (one server / tensor-parallel
 *            group); the components are the groups.
 *   leaf     endpoints talk within their leaf (32 endpoints).
 *   uniform  any endpoint to any endpoint: routes cross the spines, so the
 *            whole fabric is one component and every solve re-solves it.
 * Usage: bench_flow [--pattern P|all] [--flows F] [--length L] [--warmup W]
 *                   [--measure M] [--seed S] [--tier analytical|flow]
 *                   [--quantum T[,T...]] [--exact-only | --approx-only] [--noise B]
 *                   [--stop N]
 * Figures go to stdout.  Same arguments, same simulated results.
 */
#include "config.h"
#include "bench/bench_util.h"

#include "net/net.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *fat_tree_1024 =
    "schema_version: 1\n"
    "name: bench-fat-tree-1024\n"
    "model: flow\n"
    "dims:\n"
    "  - {name: fabric, kind: fat_tree, size: 1024, leaves: 32, spines: 32,\n"
    "     bandwidth: 50GB/s, latency: 500ns}\n";

/* The workload: what every run of one pattern shares. */
typedef struct {
  const char *pattern;
  int group;             /* endpoints per traffic group */
  int n_ranks;
  uint32_t chains, length;
  uint64_t warmup, measure;
  uint64_t seed;
  uint64_t bump;         /* bytes added to transfer 0 (--noise) */
  uint64_t stop;         /* > 0: end the run after this many completions (--stop) */
} workload;

/* One run's results. */
typedef struct {
  sim_time_ps quantum;
  sim_time_ps *issued, *finished; /* per transfer (chain * length + index) */
  double window_cpu;     /* CPU seconds of the measured window */
  uint64_t window_events;
  lmm_stats window_st;
  sim_time_ps window_sim;
  double run_cpu;
  uint64_t run_events;
  uint64_t digest;
} run_result;

typedef struct {
  const workload *w;
  run_result *r;
  net *n;
  sim_engine *sim;
  uint64_t completions;
  double cpu0;
  uint64_t ev0;
  lmm_stats st0;
  sim_time_ps sim0;
} bench;

enum { DRAW_SRC, DRAW_DST, DRAW_SIZE, DRAW_GAP };

/* The draw `field` of transfer `id`: independent of the order of events. */
static uint64_t draw(const workload *w, uint64_t id, unsigned field) {
  return wisp_mix64(wisp_mix64(w->seed ^ wisp_mix64(id)) + field);
}

/* Uniform integer in [0, n), by the high half of a 64x32-bit product. */
static uint32_t draw_below(const workload *w, uint64_t id, unsigned field, uint32_t n) {
  return (uint32_t)(((draw(w, id, field) >> 32) * (uint64_t)n) >> 32);
}

static void issue(bench *b, uint64_t id);

static void ev_issue(sim_engine *sim, void *ctx, uint64_t id) {
  (void)sim;
  issue(ctx, id);
}

static void on_done(sim_engine *sim, void *ctx, uint64_t id) {
  bench *b = ctx;
  const workload *w = b->w;
  b->r->finished[id] = sim_now(sim);
  b->completions++;
  if (b->completions == w->warmup) {
    b->cpu0 = bench_cpu_seconds();
    b->ev0 = net_flow_events(b->n);
    net_get_solver_stats(b->n, &b->st0);
    b->sim0 = sim_now(sim);
  }
  if (b->completions == w->warmup + w->measure) {
    b->r->window_cpu = bench_cpu_seconds() - b->cpu0;
    b->r->window_events = net_flow_events(b->n) - b->ev0;
    lmm_stats st;
    net_get_solver_stats(b->n, &st);
    b->r->window_st = (lmm_stats){st.solves - b->st0.solves, st.component_vars - b->st0.component_vars,
                                  st.component_cnsts - b->st0.component_cnsts, st.changed - b->st0.changed};
    b->r->window_sim = sim_now(sim) - b->sim0;
  }
  if (b->completions == w->stop) sim_stop(sim);
  if ((id + 1) % w->length != 0) /* not the chain's last transfer */
    sim_post_after(sim, (sim_time_ps)draw_below(w, id + 1, DRAW_GAP, 10001) * SIM_PS_PER_NS, ev_issue, b,
                   id + 1);
}

static void issue(bench *b, uint64_t id) {
  const workload *w = b->w;
  int src = (int)draw_below(w, id, DRAW_SRC, (uint32_t)w->n_ranks);
  int base = src / w->group * w->group;
  int dst = base + (int)draw_below(w, id, DRAW_DST, (uint32_t)w->group - 1);
  if (dst >= src) dst++;
  /* log-uniform in [64 KiB, 16 MiB] */
  double e = 16.0 + 8.0 * (double)(draw(w, id, DRAW_SIZE) >> 11) * 0x1.0p-53;
  uint64_t bytes = (uint64_t)exp2(e) + (id == 0 ? w->bump : 0);
  b->r->issued[id] = sim_now(b->sim);
  net_send(b->n, src, dst, bytes, on_done, b, id);
}

static uint64_t fnv1a(uint64_t h, uint64_t v) {
  for (int i = 0; i < 8; i++) {
    h ^= (v >> (8 * i)) & 0xff;
    h *= UINT64_C(1099511628211);
  }
  return h;
}

static gboolean run_once(const topo *t, const workload *w, net_tier tier, run_result *r) {
  uint64_t total = (uint64_t)w->chains * w->length;
  bench b = {.w = w, .r = r};
  r->issued = g_new0(sim_time_ps, total);
  r->finished = g_new(sim_time_ps, total);
  for (uint64_t i = 0; i < total; i++) r->finished[i] = -1;
  b.sim = sim_engine_new(FALSE);
  b.n = net_new(b.sim, t, tier);
  net_set_flow_quantum(b.n, r->quantum);
  double c0 = bench_cpu_seconds();
  for (uint32_t c = 0; c < w->chains; c++) issue(&b, (uint64_t)c * w->length);
  sim_run(b.sim, SIM_TIME_MAX);
  r->run_cpu = bench_cpu_seconds() - c0;
  r->run_events = net_flow_events(b.n);
  net_free(b.n);
  sim_engine_free(b.sim);
  if (b.completions != total && b.completions != w->stop) {
    fprintf(stderr, "bench_flow: run ended early (%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " completions)\n",
            b.completions, total);
    return FALSE;
  }
  r->digest = UINT64_C(14695981039346656037);
  for (uint64_t i = 0; i < total; i++) r->digest = fnv1a(r->digest, (uint64_t)r->finished[i]);
  return TRUE;
}

static void run_free(run_result *r) {
  g_free(r->issued);
  g_free(r->finished);
}

static sim_time_ps step_time(const workload *w, const run_result *r) {
  sim_time_ps m = 0;
  for (uint64_t i = 0; i < (uint64_t)w->chains * w->length; i++)
    if (r->finished[i] > m) m = r->finished[i];
  return m;
}

static void print_run(const workload *w, net_tier tier, const run_result *r) {
  char b1[32], b2[32], b3[32];
  const lmm_stats *st = &r->window_st;
  if (tier != NET_TIER_FLOW) {
    printf("  %s: %.0f transfers per CPU s in the window; whole run %.2f s CPU; step time %s us; digest %016" G_GINT64_MODIFIER
           "x\n", net_tier_name(tier), w->measure / r->window_cpu, r->run_cpu,
           wisp_ns_string(step_time(w, r) / 1000, b2), r->digest);
    return;
  }
  printf("  %-7s quantum %9s ns: %8.0f flow events per CPU s (%" G_GUINT64_FORMAT " events, %.3f s, %s us simulated);"
         " %.1f events per solve,\n"
         "          component %.0f variables / %.0f constraints, %.0f rates changed per solve; whole run %" G_GUINT64_FORMAT
         " events in %.2f s CPU; step time %s us; digest %016" G_GINT64_MODIFIER "x\n",
         r->quantum ? "approx" : "exact", wisp_ns_string(r->quantum, b1), r->window_events / r->window_cpu,
         r->window_events, r->window_cpu, wisp_ns_string(r->window_sim / 1000, b2),
         st->solves ? (double)r->window_events / st->solves : 0.0,
         st->solves ? (double)st->component_vars / st->solves : 0.0,
         st->solves ? (double)st->component_cnsts / st->solves : 0.0,
         st->solves ? (double)st->changed / st->solves : 0.0, r->run_events, r->run_cpu,
         wisp_ns_string(step_time(w, r) / 1000, b3), r->digest);
}

static int cmp_double(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  return (a > b) - (a < b);
}

/* Errors of run a against the exact reference e. */
static void print_errors(const workload *w, const run_result *e, const run_result *a) {
  uint64_t total = (uint64_t)w->chains * w->length;
  sim_time_ps te = step_time(w, e), ta = step_time(w, a);
  double worst_chain = 0, worst_flow = 0, sum = 0, bias = 0;
  uint64_t worst_id = 0, worst_last = 0;
  double *rel = g_new(double, total);
  for (uint32_t c = 0; c < w->chains; c++) {
    uint64_t last = (uint64_t)c * w->length + w->length - 1;
    double d = fabs((double)(a->finished[last] - e->finished[last])) / (double)e->finished[last];
    if (d > worst_chain) {
      worst_chain = d;
      worst_last = last;
    }
  }
  for (uint64_t i = 0; i < total; i++) {
    double fe = (double)(e->finished[i] - e->issued[i]), fa = (double)(a->finished[i] - a->issued[i]);
    rel[i] = fabs(fa - fe) / fe;
    sum += rel[i];
    bias += (fa - fe) / fe;
    if (rel[i] > worst_flow) {
      worst_flow = rel[i];
      worst_id = i;
    }
  }
  qsort(rel, total, sizeof *rel, cmp_double);
  char b1[32], b2[32], b3[32], b4[32];
  printf("          error vs exact: step time %+.3f %%, worst chain %.3f %% (ends at %s us exact, %s us approximate);"
         " transfer completion time:"
         " mean |err| %.3f %% (mean signed %+.3f %%), p99 %.2f %%, worst %.2f %% (transfer %" G_GUINT64_FORMAT
         ", %s us exact, %s us approximate)\n",
         100.0 * (double)(ta - te) / (double)te, 100.0 * worst_chain,
         wisp_ns_string(e->finished[worst_last] / 1000, b3), wisp_ns_string(a->finished[worst_last] / 1000, b4),
         100.0 * sum / total, 100.0 * bias / total,
         100.0 * rel[(size_t)(0.99 * (total - 1))], 100.0 * worst_flow, worst_id,
         wisp_ns_string((e->finished[worst_id] - e->issued[worst_id]) / 1000, b1),
         wisp_ns_string((a->finished[worst_id] - a->issued[worst_id]) / 1000, b2));
  g_free(rel);
}

static int run_pattern(const topo *t, workload *w, net_tier tier, const sim_time_ps *quanta, int n_quanta,
                       gboolean exact, gboolean approx, uint64_t noise) {
  if (!strcmp(w->pattern, "group8")) w->group = 8;
  else if (!strcmp(w->pattern, "leaf")) w->group = 32;
  else if (!strcmp(w->pattern, "uniform")) w->group = w->n_ranks;
  else {
    fprintf(stderr, "bench_flow: unknown pattern '%s' (group8, leaf, uniform, all)\n", w->pattern);
    return 2;
  }
  uint64_t total = (uint64_t)w->chains * w->length;
  if (w->warmup + w->measure > total || (w->stop && w->stop < w->warmup + w->measure)) {
    fprintf(stderr, "bench_flow: warm-up %" G_GUINT64_FORMAT " + measured %" G_GUINT64_FORMAT
            " exceed the %" G_GUINT64_FORMAT " transfers of the workload or --stop (raise --length)\n",
            w->warmup, w->measure, w->stop ? w->stop : total);
    return 2;
  }
  printf("pattern %s: %u chains x %u transfers, window: completions %" G_GUINT64_FORMAT "-%" G_GUINT64_FORMAT "\n",
         w->pattern, w->chains, w->length, w->warmup, w->warmup + w->measure);
  run_result ref = {0};
  gboolean have_ref = FALSE;
  if (exact || tier != NET_TIER_FLOW) {
    if (!run_once(t, w, tier, &ref)) return 1;
    print_run(w, tier, &ref);
    have_ref = TRUE;
  }
  if (have_ref && noise && tier == NET_TIER_FLOW) {
    /* The same exact solver on a workload one byte larger: how far a
     * negligible perturbation moves the results through the dynamics. */
    workload wb = *w;
    wb.bump = noise;
    run_result r = {0};
    if (!run_once(t, &wb, tier, &r)) {
      run_free(&ref);
      return 1;
    }
    printf("  noise   (exact, transfer 0 %" G_GUINT64_FORMAT " bytes larger):\n", noise);
    print_errors(w, &ref, &r);
    run_free(&r);
  }
  for (int k = 0; approx && tier == NET_TIER_FLOW && k < n_quanta; k++) {
    run_result r = {.quantum = quanta[k]};
    if (!run_once(t, w, tier, &r)) {
      run_free(&ref);
      return 1;
    }
    print_run(w, tier, &r);
    if (have_ref) print_errors(w, &ref, &r);
    run_free(&r);
  }
  run_free(&ref);
  fflush(stdout);
  return 0;
}

static void usage(void) {
  fprintf(stderr, "usage: bench_flow [--pattern group8|leaf|uniform|all] [--flows F] [--length L] [--warmup W]"
                  " [--measure M] [--seed S] [--tier analytical|flow] [--quantum T[,T...]]"
                  " [--exact-only | --approx-only] [--noise B] [--stop N]\n");
}

int main(int argc, char **argv) {
  const char *pattern = "all";
  long long flows = 10000, length = -1, warmup = -1, measure = -1;
  guint64 seed = 1;
  net_tier tier = NET_TIER_FLOW;
  sim_time_ps quanta[16];
  int n_quanta = 0;
  gboolean exact = TRUE, approx = TRUE;
  uint64_t noise = 0, stop = 0;
  for (int i = 1; i < argc; i++) {
    if (i + 1 < argc && !strcmp(argv[i], "--pattern")) pattern = argv[++i];
    else if (i + 1 < argc && !strcmp(argv[i], "--flows")) flows = atoll(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--length")) length = atoll(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--warmup")) warmup = atoll(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--measure")) measure = atoll(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--seed")) seed = g_ascii_strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--exact-only")) approx = FALSE;
    else if (!strcmp(argv[i], "--approx-only")) exact = FALSE;
    else if (i + 1 < argc && !strcmp(argv[i], "--stop")) stop = g_ascii_strtoull(argv[++i], NULL, 10);
    else if (i + 1 < argc && !strcmp(argv[i], "--noise")) noise = g_ascii_strtoull(argv[++i], NULL, 10);
    else if (i + 1 < argc && !strcmp(argv[i], "--quantum")) {
      char **parts = g_strsplit(argv[++i], ",", -1);
      for (char **p = parts; *p; p++) {
        const char *why;
        if (n_quanta == G_N_ELEMENTS(quanta) || !wisp_parse_time(*p, &quanta[n_quanta], &why) ||
            quanta[n_quanta] <= 0) {
          fprintf(stderr, "bench_flow: --quantum '%s': %s\n", *p,
                  n_quanta == G_N_ELEMENTS(quanta) ? "too many quanta" : "not a positive time");
          g_strfreev(parts);
          return 2;
        }
        n_quanta++;
      }
      g_strfreev(parts);
    } else if (i + 1 < argc && !strcmp(argv[i], "--tier")) {
      if (!net_tier_from_name(argv[++i], &tier)) {
        fprintf(stderr, "bench_flow: unknown tier '%s' (analytical, flow)\n", argv[i]);
        return 2;
      }
    } else {
      usage();
      return 2;
    }
  }
  if (flows < 1 || flows > UINT32_MAX || (length != -1 && (length < 1 || length > UINT32_MAX)) ||
      (warmup != -1 && warmup < 0) || (measure != -1 && measure < 1) || (!exact && !approx)) {
    usage();
    return 2;
  }
  if (n_quanta == 0) quanta[n_quanta++] = 4 * SIM_PS_PER_US;
  GError *err = NULL;
  topo *t = topo_load_string(fat_tree_1024, "bench-fat-tree-1024.yaml", &err);
  if (!t) {
    fprintf(stderr, "bench_flow: %s\n", err->message);
    g_error_free(err);
    return 1;
  }
  printf("bench_flow: %d endpoints, %u links (fat tree, 32 leaves x 32, 32 spines), seed %" G_GUINT64_FORMAT "\n",
         topo_n_ranks(t), topo_n_links(t), seed);
  int rc = 0;
  static const char *const all[] = {"group8", "leaf", "uniform"};
  /* Defaults: a window of one further generation (F completions) after a
   * warm-up of one, in workloads long enough that about F flows stay in
   * flight through the window.  The uniform pattern is slow in exact mode
   * (every solve re-solves the fabric), so its exact window is shorter. */
  static const long long default_length[] = {25, 12, 3};
  static const long long default_measure[] = {200000, 100000, 10000};
  gboolean known = FALSE;
  for (size_t k = 0; k < G_N_ELEMENTS(all) && !rc; k++) {
    if (strcmp(pattern, "all") && strcmp(pattern, all[k])) continue;
    known = TRUE;
    workload w = {.pattern = all[k], .n_ranks = topo_n_ranks(t), .chains = (uint32_t)flows, .seed = seed,
                  .stop = stop};
    w.length = (uint32_t)(length > 0 ? length : default_length[k]);
    w.warmup = (uint64_t)(warmup >= 0 ? warmup : flows);
    w.measure = (uint64_t)(measure > 0 ? measure : default_measure[k] * flows / 10000);
    if (w.measure < 1) w.measure = 1;
    rc = run_pattern(t, &w, tier, quanta, n_quanta, exact, approx, noise);
  }
  if (!known) {
    workload w = {.pattern = pattern};
    rc = run_pattern(t, &w, tier, quanta, n_quanta, exact, approx, noise); /* reports the unknown pattern */
  }
  topo_free(t);
  return rc;
}
