/* bench_astra_chain.c: writes the side-by-side speed workload of issue 30
 * as Chakra files that both ASTRA-sim and wisp read
 * (bench/compare_astra_speed.sh runs them).
 *
 * Every rank runs STEPS steps of a COMP_US microsecond compute node
 * followed by an all-reduce of BYTES over all ranks (no pg_name: ASTRA-sim
 * reads that as the all-rank group without a comm_group.json); the next
 * step's compute depends on the all-reduce.  So each rank holds at most one
 * compute and one communication node at a time, compute durations are
 * whole microseconds and there are no CPU nodes: the graph is already what
 * et_astra_transform would write (chakra/et_astra.h), and ASTRA-sim's
 * one-slot feeder and wisp's replay see the same dependencies.  The ranks'
 * graphs are identical (wisp's loader shares one, chakra/et_share.h).
 *
 * Usage: bench_astra_chain DIR RANKS STEPS [COMP_US [BYTES]]
 *   writes DIR/chain.0.et .. DIR/chain.(RANKS-1).et; defaults 100 us and
 *   16 MiB (the chain).  Time and memory O(STEPS) (one graph,
 *   written RANKS times).
 */
#include "config.h"
#include "chakra/et_io.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <glib/gstdio.h>

static et_graph *chain_graph(int steps, int64_t comp_us, uint64_t bytes)
{
  et_builder *b = et_builder_new("astra-chain");
  for (int s = 0; s < steps; s++) {
    uint64_t base = 2 * (uint64_t)s;
    uint32_t c = et_builder_add_node(b, base + 1, ET_NODE_COMP, "compute", comp_us * SIM_PS_PER_US, 0);
    if (s > 0)
      et_builder_add_dep(b, c, base, TRUE, FALSE);
    uint32_t ar = et_builder_add_node(b, base + 2, ET_NODE_COMM_COLL, "all_reduce", 0, 0);
    et_comm cm = { .bytes = bytes, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = -1, .dst = -1, .tag = -1,
                   .root = -1, .coll = ET_COLL_ALL_REDUCE };
    et_builder_set_comm(b, ar, &cm, NULL, NULL, 0);
    et_builder_add_dep(b, ar, base + 1, TRUE, FALSE);
  }
  GError *error = NULL;
  et_graph *g = et_builder_finish(b, 0, &error);
  if (g == NULL) {
    fprintf(stderr, "bench_astra_chain: %s\n", error->message);
    exit(1);
  }
  return g;
}

int main(int argc, char **argv)
{
  if (argc < 4 || argc > 6) {
    fprintf(stderr, "usage: bench_astra_chain DIR RANKS STEPS [COMP_US [BYTES]]\n");
    return 2;
  }
  const char *dir = argv[1];
  int n = atoi(argv[2]), steps = atoi(argv[3]);
  long long comp_us = argc > 4 ? atoll(argv[4]) : 100;
  unsigned long long bytes = argc > 5 ? strtoull(argv[5], NULL, 10) : 16ULL << 20;
  if (n < 2 || steps < 1 || comp_us < 0 || bytes == 0) {
    fprintf(stderr, "bench_astra_chain: RANKS >= 2, STEPS >= 1, COMP_US >= 0 and BYTES >= 1 (got %s %s%s%s)\n",
            argv[2], argv[3], argc > 4 ? " " : "", argc > 4 ? argv[4] : "");
    return 2;
  }
  if (g_mkdir_with_parents(dir, 0755) != 0) {
    fprintf(stderr, "bench_astra_chain: %s: cannot create the directory: %s\n", dir, g_strerror(errno));
    return 1;
  }
  et_graph *g = chain_graph(steps, comp_us, bytes);
  for (int r = 0; r < n; r++) {
    char *path = g_strdup_printf("%s/chain.%d.et", dir, r);
    GError *error = NULL;
    if (!et_write_file(g, path, &error)) {
      fprintf(stderr, "bench_astra_chain: %s\n", error->message);
      return 1;
    }
    g_free(path);
  }
  et_graph_free(g);
  return 0;
}
