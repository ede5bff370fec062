/* bench_replay_work.h: the chain and collective workloads of the replay
 * benchmarks (bench_replay.c for speed, bench_replay_mem.c for memory),
 * built in memory, and their cluster (header only, static functions, so
 * the two benchmarks replay exactly the same input).
 *
 * RANKS ranks (a multiple of 32) on 8-GPU nodes: a 450 GB/s, 500 ns switch
 * per node and a 50 GB/s, 2 us fat tree of 4 leaves between the nodes.
 * Every rank runs STEPS steps; a step is a 20 us compute node followed by
 *   chain: a 1 MiB send to rank r+1 and a 1 MiB receive from rank r-1
 *          (mod RANKS), both after the compute; the next step's compute
 *          waits for both, so every rank's steps form one chain that is
 *          tied to its neighbours' every step (3 nodes, 4 edges and 2
 *          communication records per step);
 *   coll:  a 4 MiB all-reduce over the rank's node (8 ranks, the tuner's
 *          algorithm); the next step's compute waits for it.
 * Every rank has its own graph (the chain's peers differ per rank).
 */
#ifndef WISP_BENCH_REPLAY_WORK_H
#define WISP_BENCH_REPLAY_WORK_H

#include "replay/sim_replay.h"

#include <stdio.h>
#include <stdlib.h>

#define BENCH_COMP_PS (20 * SIM_PS_PER_US)
#define BENCH_P2P_BYTES UINT64_C(1048576)
#define BENCH_AR_BYTES UINT64_C(4194304)

static void add_dep(et_builder *b, uint32_t node, uint64_t parent)
{
  et_builder_add_dep(b, node, parent, TRUE, FALSE);
}

static et_graph *finish(et_builder *b)
{
  GError *error = NULL;
  et_graph *g = et_builder_finish(b, 0, &error);
  if (g == NULL) {
    fprintf(stderr, "bench_replay: %s\n", error->message);
    exit(1);
  }
  return g;
}

/* Rank r of the chain workload: ids 3s+1 (compute), 3s+2 (send), 3s+3
 * (receive) for step s. */
static et_graph *chain_rank(int r, int n, int steps)
{
  et_builder *b = et_builder_new("bench-chain");
  for (int s = 0; s < steps; s++) {
    uint64_t base = 3 * (uint64_t)s;
    uint32_t c = et_builder_add_node(b, base + 1, ET_NODE_COMP, "compute", BENCH_COMP_PS, 0);
    if (s > 0) {
      add_dep(b, c, base - 1);
      add_dep(b, c, base);
    }
    uint32_t snd = et_builder_add_node(b, base + 2, ET_NODE_COMM_SEND, "send", 0, 0);
    et_comm cs = { .bytes = BENCH_P2P_BYTES, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = -1,
                   .dst = (r + 1) % n, .tag = s, .root = -1, .coll = ET_COLL_NONE };
    et_builder_set_comm(b, snd, &cs, NULL, NULL, 0);
    add_dep(b, snd, base + 1);
    uint32_t rcv = et_builder_add_node(b, base + 3, ET_NODE_COMM_RECV, "recv", 0, 0);
    et_comm cr = { .bytes = BENCH_P2P_BYTES, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = (r + n - 1) % n,
                   .dst = -1, .tag = s, .root = -1, .coll = ET_COLL_NONE };
    et_builder_set_comm(b, rcv, &cr, NULL, NULL, 0);
    add_dep(b, rcv, base + 1);
  }
  return finish(b);
}

/* A rank of STEPS steps: ids 2s+1 (a 20 us compute), 2s+2 (a 4 MiB
 * all-reduce over pg, the world when NULL, after it); each compute waits
 * for the previous all-reduce. */
static et_graph *allreduce_rank(const char *pg, int steps)
{
  et_builder *b = et_builder_new(pg ? "bench-coll" : "bench-ring");
  for (int s = 0; s < steps; s++) {
    uint64_t base = 2 * (uint64_t)s;
    uint32_t c = et_builder_add_node(b, base + 1, ET_NODE_COMP, "compute", BENCH_COMP_PS, 0);
    if (s > 0)
      add_dep(b, c, base);
    uint32_t ar = et_builder_add_node(b, base + 2, ET_NODE_COMM_COLL, "all_reduce", 0, 0);
    et_comm cc = { .bytes = BENCH_AR_BYTES, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = -1, .dst = -1,
                   .tag = -1, .root = -1, .coll = ET_COLL_ALL_REDUCE };
    et_builder_set_comm(b, ar, &cc, pg, NULL, 0);
    add_dep(b, ar, base + 1);
  }
  return finish(b);
}

/* Rank r of the collective workload: the all-reduce over the rank's node
 * group ("node<r/8>"). */
static et_graph *coll_rank(int r, int steps)
{
  char pg[32];
  g_snprintf(pg, sizeof pg, "node%d", r / 8);
  return allreduce_rank(pg, steps);
}

G_GNUC_UNUSED static et_workload *build(gboolean coll, int n, int steps)
{
  et_workload *w = et_workload_new(n, coll ? "bench-coll" : "bench-chain");
  for (int r = 0; r < n; r++)
    w->ranks[r] = coll ? coll_rank(r, steps) : chain_rank(r, n, steps);
  if (coll) {
    for (int k = 0; k < n / 8; k++) {
      int members[8];
      char pg[32];
      for (int i = 0; i < 8; i++)
        members[i] = 8 * k + i;
      g_snprintf(pg, sizeof pg, "node%d", k);
      et_workload_add_group(w, pg, NULL, members, 8);
    }
    GError *error = NULL;
    if (!et_workload_resolve_groups(w, &error)) {
      fprintf(stderr, "bench_replay: %s\n", error->message);
      exit(1);
    }
  }
  return w;
}

/* The cluster's YAML for n ranks (g_free). */
static char *bench_cluster_yaml(int n)
{
  return g_strdup_printf("schema_version: 1\n"
                         "name: bench-replay\n"
                               "model: analytical\n"
                               "dims:\n"
                               "  - {name: node, kind: switch, size: 8, bandwidth: 450GB/s, latency: 500ns}\n"
                               "  - {name: fabric, kind: fat_tree, size: %d, leaves: 4, bandwidth: 50GB/s, "
                               "latency: 2us}\n",
                               n / 8);
}

/* Writes the cluster's YAML to DIR/network.yaml; FALSE on failure. */
static G_GNUC_UNUSED gboolean bench_cluster_yaml_write(const char *dir, int n)
{
  char *yaml = bench_cluster_yaml(n), *path = g_strdup_printf("%s/network.yaml", dir);
  gboolean ok = g_file_set_contents(path, yaml, -1, NULL);
  g_free(yaml);
  g_free(path);
  return ok;
}

/* The benchmarks' cluster for n ranks; exits on failure. */
static topo *bench_cluster(int n)
{
  char *yaml = bench_cluster_yaml(n);
  GError *error = NULL;
  topo *t = topo_load_string(yaml, "bench-replay.yaml", &error);
  g_free(yaml);
  if (t == NULL) {
    fprintf(stderr, "bench_replay: %s\n", error->message);
    exit(1);
  }
  return t;
}

#endif
