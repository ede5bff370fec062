/* bench_scale.c: a traced 8-rank job scaled by data parallelism to
 * thousands of ranks (issue 18: "TP8 x DP2048, one step, <= 60 s and
 * <= 2 GB on the analytical tier").
 *
 * The trace is built in memory: 8 ranks, tensor parallel 8 (one group
 * "tp" of all 8, description mesh_tp) and data parallel 1 (eight one-rank
 * groups "dp0".."dp7", description mesh_dp).  One training step of
 * LAYERS layers per rank: forward compute (FWD) and a 32 MiB TP
 * all-reduce per layer, backward compute (BWD) and a 32 MiB TP all-reduce
 * per layer in reverse order, and per layer a 96 MiB gradient all-reduce
 * over the rank's DP group that starts when its backward is done and
 * overlaps the rest; an optimizer step (OPT) waits for every gradient
 * all-reduce.  `--scale dp=N` semantics (chakra/et_scale.h) make it
 * TP8 x DPN: 8N ranks sharing the 8 traced graphs, 8 DP groups of N ranks.
 *
 * Network (analytical tier, the library's default algorithms): 8-GPU
 * nodes on a 450 GB/s, 500 ns NVSwitch; nodes on one 400 Gb/s (50 GB/s),
 * 2 us switch tier, i.e. a two-tier fabric with one NIC per GPU.
 *
 * `--fat-tree HOSTS_PER_LEAF:OVERSUB` makes the node tier a two-level
 * fat tree instead of one switch (issue 30: "TP8 x DP2048 on a 2:1 fat
 * tree on the flow tier"): DP/HOSTS_PER_LEAF leaves, the given
 * oversubscription, the same 400 Gb/s, 2 us links.
 *
 * `--write-trace DIR` replays nothing: it writes the 8-rank trace as
 * Chakra files (DIR/trace.<r>.et, comm_group.json, comm_group_names.json)
 * and, per DP size, the network as DIR/network_dp<N>.yaml, so that
 * `wisp simulate DIR/trace --scale dp=N --network DIR/network_dp<N>.yaml`
 * measures the same job through the command (issue 30 item 3: its memory).
 *
 * Usage: bench_scale [--algo ALGO] [--library NAME] [--model analytical|flow] [--fat-tree H:O] [--write-trace DIR] [DP ...]   (default algorithm: the
 * library's tuner, as `wisp simulate` without --algo; default sizes: 128 512 2048, i.e. 1,024, 4,096
 * and 16,384 ranks).  Prints per size the scale time (building the larger
 * job), the replay's wall and CPU time, events, the step time and the
 * peak RSS so far (VmHWM; the sizes run in increasing order, so each
 * figure is that size's peak), the algorithm and time of one DP
 * all-reduce, then a power-law fit of the replay's CPU time over the last
 * two sizes and its extrapolation to 131,072 ranks.  The network's
 * library is "ideal" (wisp's textbook algorithms, whose tuner picks
 * halving-doubling for these power-of-two groups); `--library nccl` runs
 * NCCL's tuner instead, whose tree/ring models cost far more events per
 * collective at these group sizes (see the note in doc/).
 */
#include "config.h"
#include "bench/bench_util.h"
#include "chakra/et_io.h"
#include "chakra/et_scale.h"
#include "replay/sim_replay.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { TP = 8, LAYERS = 8 };
#define FWD_PS (1000 * SIM_PS_PER_US)
#define BWD_PS (2000 * SIM_PS_PER_US)
#define OPT_PS (3000 * SIM_PS_PER_US)
#define ACT_BYTES (UINT64_C(32) << 20)
#define GRAD_BYTES (UINT64_C(96) << 20)

static double wall_seconds(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, GError *e)
{
  fprintf(stderr, "bench_scale: %s: %s\n", what, e ? e->message : "failed");
  exit(1);
}

static uint32_t coll(et_builder *b, uint64_t id, const char *name, uint64_t bytes, const char *pg)
{
  uint32_t n = et_builder_add_node(b, id, ET_NODE_COMM_COLL, name, 0, 0);
  et_comm c = {.bytes = bytes, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = -1, .dst = -1, .tag = -1,
               .root = -1, .coll = ET_COLL_ALL_REDUCE};
  et_builder_set_comm(b, n, &c, pg, NULL, 0);
  return n;
}

/* Rank r's step: a chain fwd, tp-AR, ..., bwd, tp-AR, ...; dp-ARs hang off
 * each backward; the optimizer waits for the chain's end and every dp-AR. */
static et_graph *trace_rank(int r)
{
  et_builder *b = et_builder_new("bench-scale");
  char dp[16], name[48];
  g_snprintf(dp, sizeof dp, "dp%d", r);
  uint64_t id = 0, last = 0;
  uint64_t grads[LAYERS];
  for (int pass = 0; pass < 2; pass++)
    for (int k = 0; k < LAYERS; k++) {
      int l = pass ? LAYERS - 1 - k : k;
      g_snprintf(name, sizeof name, "%s_layer%d", pass ? "bwd" : "fwd", l);
      uint32_t c = et_builder_add_node(b, ++id, ET_NODE_COMP, name, pass ? BWD_PS : FWD_PS, 0);
      if (last)
        et_builder_add_dep(b, c, last, TRUE, FALSE);
      uint64_t comp = id;
      g_snprintf(name, sizeof name, "tp_allreduce_%s_layer%d", pass ? "bwd" : "fwd", l);
      uint32_t a = coll(b, ++id, name, ACT_BYTES, "tp");
      et_builder_add_dep(b, a, comp, TRUE, FALSE);
      last = id;
      if (pass) {
        g_snprintf(name, sizeof name, "dp_allreduce_grad_layer%d", l);
        uint32_t g = coll(b, ++id, name, GRAD_BYTES, dp);
        et_builder_add_dep(b, g, comp, TRUE, FALSE);
        grads[k] = id;
      }
    }
  uint32_t o = et_builder_add_node(b, ++id, ET_NODE_COMP, "optimizer_step", OPT_PS, 0);
  et_builder_add_dep(b, o, last, TRUE, FALSE);
  for (int k = 0; k < LAYERS; k++)
    et_builder_add_dep(b, o, grads[k], TRUE, FALSE);
  GError *e = NULL;
  et_graph *g = et_builder_finish(b, ET_BUILD_STRICT, &e);
  if (g == NULL)
    die("trace", e);
  return g;
}

static et_workload *trace(void)
{
  et_workload *w = et_workload_new(TP, "bench-scale-tp8");
  int all[TP];
  for (int r = 0; r < TP; r++) {
    w->ranks[r] = trace_rank(r);
    all[r] = r;
  }
  et_workload_add_group(w, "tp", "mesh_tp", all, TP);
  for (int r = 0; r < TP; r++) {
    char dp[16];
    g_snprintf(dp, sizeof dp, "dp%d", r);
    et_workload_add_group(w, dp, "mesh_dp", &r, 1);
  }
  GError *e = NULL;
  if (!et_workload_resolve_groups(w, &e))
    die("groups", e);
  return w;
}

/* The network of a TP8 x DP job (see the top comment). */
static char *network_yaml(int dp, const char *model, const char *library, int leaf_hosts, int oversub)
{
  char *fabric = leaf_hosts && dp % leaf_hosts == 0
                     ? g_strdup_printf("kind: fat_tree, size: %d, leaves: %d, oversubscription: %d", dp,
                                       dp / leaf_hosts, oversub)
                     : g_strdup_printf("kind: switch, size: %d", dp);
  char *yaml = g_strdup_printf("schema_version: 1\nname: bench-scale\nmodel: %s\ndims:\n"
                               "  - {name: nvswitch, kind: switch, size: 8, bandwidth: 450GB/s, latency: 500ns}\n"
                               "  - {name: fabric, %s, bandwidth: 400Gbps, latency: 2us}\n"
                               "library: {name: %s}\n",
                               model, fabric, library);
  g_free(fabric);
  return yaml;
}

/* --write-trace: the trace and each size's network as files. */
static int write_trace(const char *dir, const int *sizes, int n_sizes, const char *model, const char *library,
                       int leaf_hosts, int oversub)
{
  GError *e = NULL;
  if (g_mkdir_with_parents(dir, 0755) != 0) {
    fprintf(stderr, "bench_scale: %s: cannot create the directory\n", dir);
    return 1;
  }
  et_workload *w = trace();
  if (!et_workload_write(w, dir, "trace", &e))
    die("write", e);
  et_workload_free(w);
  for (int i = 0; i < n_sizes; i++) {
    char *yaml = network_yaml(sizes[i], model, library, leaf_hosts, oversub);
    char *path = g_strdup_printf("%s/network_dp%d.yaml", dir, sizes[i]);
    if (!g_file_set_contents(path, yaml, -1, &e))
      die("write", e);
    printf("%s: TP8 x DP%d network\n", path, sizes[i]);
    g_free(path);
    g_free(yaml);
  }
  printf("%s/trace.{0..7}.et: the 8-rank trace (wisp simulate %s/trace --scale dp=N --network %s/network_dpN.yaml)\n",
         dir, dir, dir);
  return 0;
}

int main(int argc, char **argv)
{
  int sizes[16] = {128, 512, 2048}, n_sizes = 3, first = 1;
  coll_algo algo = COLL_ALGO_AUTO;
  const char *library = "ideal", *model = "analytical";
  int leaf_hosts = 0, oversub = 1;
  const char *write_dir = NULL;
  while (argc > first + 1 && argv[first][0] == '-') {
    if (strcmp(argv[first], "--algo") == 0 && coll_algo_from_name(argv[first + 1], &algo)) {
      first += 2;
    } else if (strcmp(argv[first], "--model") == 0) {
      model = argv[first + 1];
      first += 2;
    } else if (strcmp(argv[first], "--fat-tree") == 0 &&
               sscanf(argv[first + 1], "%d:%d", &leaf_hosts, &oversub) == 2 && leaf_hosts > 0 && oversub > 0) {
      first += 2;
    } else if (strcmp(argv[first], "--write-trace") == 0) {
      write_dir = argv[first + 1];
      first += 2;
    } else if (strcmp(argv[first], "--library") == 0) {
      library = argv[first + 1];
      first += 2;
    } else {
      fprintf(stderr, "bench_scale: unknown option '%s %s'\n", argv[first], argv[first + 1]);
      return 2;
    }
  }
  if (argc > first) {
    n_sizes = 0;
    for (int i = first; i < argc && n_sizes < 16; i++)
      if ((sizes[n_sizes++] = atoi(argv[i])) < 1) {
        fprintf(stderr, "usage: bench_scale [--algo ALGO] [--library NAME] [--model analytical|flow] [--fat-tree H:O] [DP ...] (data-parallel degrees, each >= 1)\n");
        return 2;
      }
  }
  if (write_dir != NULL)
    return write_trace(write_dir, sizes, n_sizes, model, library, leaf_hosts, oversub);
  double xs[16], ys[16];
  for (int i = 0; i < n_sizes; i++) {
    int dp = sizes[i], n = TP * dp;
    double t0 = wall_seconds();
    et_workload *w = trace();
    et_layout l;
    GError *e = NULL;
    if (!et_layout_infer(w, NULL, &l, &e))
      die("layout", e);
    et_scale_request rq = {.dp = dp, .placement = ET_PLACE_OUTER};
    et_workload *s = et_workload_scale(w, &l, &rq, &e);
    if (s == NULL)
      die("scale", e);
    et_layout_clear(&l);
    char *yaml = network_yaml(dp, model, library, leaf_hosts, oversub);
    topo *t = topo_load_string(yaml, "bench-scale.yaml", &e);
    g_free(yaml);
    if (t == NULL)
      die("network", e);
    double t1 = wall_seconds(), c1 = bench_cpu_seconds();
    sim_replay_options opt = {.quiet = TRUE, .has_algo = algo != COLL_ALGO_AUTO, .algo = algo};
    sim_result *r = sim_replay_run(s, t, &opt, &e);
    double t2 = wall_seconds(), c2 = bench_cpu_seconds();
    if (r == NULL)
      die("replay", e);
    char step[32];
    printf("TP8 x DP%d = %d ranks: scale+network %.3f s; replay %.3f s wall, %.3f s CPU, %" G_GUINT64_FORMAT
           " events; step time %s ns; peak RSS %ld KiB\n",
           dp, n, t1 - t0, t2 - t1, c2 - c1, r->events, wisp_ns_string(r->step_time, step), bench_status_kib("VmHWM"));
    const net_agg_stats *ag = &r->flow_agg;
    if (ag->flows_entered > 0)
      printf("  flow tier: %" G_GUINT64_FORMAT " flows in %" G_GUINT64_FORMAT " groups; %" G_GUINT64_FORMAT
             " carried by %" G_GUINT64_FORMAT " aggregates (%" G_GUINT64_FORMAT " split, releasing %" G_GUINT64_FORMAT
             "); one by one: %" G_GUINT64_FORMAT " alone, %" G_GUINT64_FORMAT " busy links, %" G_GUINT64_FORMAT
             " mixed positions, %" G_GUINT64_FORMAT " uneven\n",
             ag->flows_entered, ag->groups, ag->aggregated, ag->aggregates, ag->splits, ag->split_flows, ag->alone,
             ag->busy, ag->mixed, ag->uneven);
    /* The algorithm that ran the data-parallel all-reduce (the largest group). */
    for (guint k = 0; k < r->comms->len; k++) {
      const sim_comm_record *c = &g_array_index(r->comms, sim_comm_record, k);
      if (c->n_ranks == dp && dp > 1) {
        printf("  dp all-reduce (%d ranks, %" G_GUINT64_FORMAT " bytes): %s, %.3f ms\n", dp, c->bytes,
               coll_algo_name((coll_algo)c->algo), (double)(c->end - c->start) / 1e9);
        break;
      }
    }
    fflush(stdout);
    xs[i] = log((double)n);
    ys[i] = log(MAX(c2 - c1, 1e-6)); /* CPU time: the machine may be shared, wall time varies with load */
    sim_result_free(r);
    topo_free(t);
    et_workload_free(s);
  }
  if (n_sizes >= 2) {
    double b = (ys[n_sizes - 1] - ys[n_sizes - 2]) / (xs[n_sizes - 1] - xs[n_sizes - 2]);
    double est = exp(ys[n_sizes - 1] + b * (log(131072.0) - xs[n_sizes - 1]));
    printf("replay CPU time grows as ranks^%.2f over the last two sizes; 131,072 ranks (TP8 x DP16384) estimated at "
           "%.0f s CPU\n",
           b, est);
  }
  return 0;
}
