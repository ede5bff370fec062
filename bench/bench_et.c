/* bench_et.c: speed and memory of the Chakra ET reader and writer.
 *
 * Generates one large rank file in a temporary directory: N nodes (default
 * 5,000,000; first argument overrides), a chain through all nodes written in
 * both data_deps and ctrl_deps (the wisp writer convention), plus for half
 * of the nodes one extra data edge to a random earlier node within 1,000;
 * every 50th node is an ALL_REDUCE COMM_COLL node, the rest COMP nodes with
 * whole-microsecond durations.  Reports build+write and load throughput
 * (nodes/s, MB/s), the write of a two-rank workload (the same graph twice)
 * with one worker and with the default number of workers (WISP_THREADS or
 * one per processor; et_workload_write writes ranks in parallel), and
 * resident memory per node after the load: the VmRSS
 * delta (with glibc's free memory trimmed) and et_graph_memory_bytes(),
 * both excluding the string pool of names.  Target: <= 64 B/node.
 * Deterministic: a fixed seed.
 */
#include "config.h"
#include "bench/bench_util.h"
#include "chakra/et_io.h"

#include <glib/gstdio.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
  uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 5000000u;
  if (n < 2) {
    fprintf(stderr, "usage: bench_et [NODES >= 2]\n");
    return 2;
  }
  GError *err = NULL;
  char *dir = g_dir_make_tmp("bench_et_XXXXXX", &err);
  if (dir == NULL) {
    fprintf(stderr, "%s\n", err->message);
    return 1;
  }
  char *path = g_build_filename(dir, "big.0.et", NULL);

  /* Build and write. */
  double t0 = wisp_wall_seconds();
  GRand *rng = g_rand_new_with_seed(20261129);
  et_builder *b = et_builder_new("bench");
  et_builder_set_version(b, "0.0.4");
  uint64_t edges = 0;
  char name[32];
  for (uint32_t i = 0; i < n; i++) {
    gboolean comm = i % 50 == 49;
    g_snprintf(name, sizeof(name), comm ? "ar_%u" : "k_%u", i);
    uint32_t v = et_builder_add_node(b, i, comm ? ET_NODE_COMM_COLL : ET_NODE_COMP, name,
                                     comm ? 0 : (sim_time_ps)g_rand_int_range(rng, 1, 500) * SIM_PS_PER_US, 0);
    if (comm) {
      et_comm c = {.bytes = (uint64_t)g_rand_int_range(rng, 1, 1 << 20) * 64, .coll = ET_COLL_ALL_REDUCE,
                   .src = -1, .dst = -1, .tag = -1, .root = -1};
      et_builder_set_comm(b, v, &c, NULL, NULL, 0);
    }
    if (i > 0) {
      et_builder_add_dep(b, v, i - 1, TRUE, TRUE);
      edges++;
    }
    if (i > 2 && g_rand_boolean(rng)) {
      uint32_t back = (uint32_t)g_rand_int_range(rng, 2, (gint32)MIN(i, 1000u) + 1);
      et_builder_add_dep(b, v, i - back, TRUE, FALSE);
      edges++;
    }
  }
  et_graph *g = et_builder_finish(b, 0, &err);
  if (g == NULL) {
    fprintf(stderr, "%s\n", err->message);
    return 1;
  }
  double t1 = wisp_wall_seconds();
  if (!et_write_file(g, path, &err)) {
    fprintf(stderr, "%s\n", err->message);
    return 1;
  }
  double t2 = wisp_wall_seconds();
  GStatBuf st;
  g_stat(path, &st);
  double mb = (double)st.st_size / 1e6;
  printf("nodes %u, edges %" G_GUINT64_FORMAT ", file %.1f MB\n", n, edges, mb);
  printf("build: %.2f s (%.2f M nodes/s); write: %.2f s (%.2f M nodes/s, %.0f MB/s)\n", t1 - t0,
         n / (t1 - t0) / 1e6, t2 - t1, n / (t2 - t1) / 1e6, mb / (t2 - t1));
  printf("PERFORMANCE: et_write nodes %u speed %.0f nodes/s\n", n, n / (t2 - t1));

  /* A two-rank workload sharing the graph: one worker, then the default. */
  et_workload *w = et_workload_new(2, "bench");
  w->ranks[0] = w->ranks[1] = g;
  for (int pass = 0; pass < 2; pass++) {
    double t5 = wisp_wall_seconds();
    if (!et_workload_write_threads(w, dir, "wl", pass == 0 ? 1 : 0, &err)) {
      fprintf(stderr, "%s\n", err->message);
      return 1;
    }
    double t6 = wisp_wall_seconds();
    printf("workload write, 2 ranks, %s: %.2f s (%.2f M nodes/s)\n", pass == 0 ? "1 worker" : "default workers",
           t6 - t5, 2.0 * n / (t6 - t5) / 1e6);
    printf("PERFORMANCE: et_workload_write ranks 2 workers %s speed %.0f nodes/s\n", pass == 0 ? "1" : "default",
           2.0 * n / (t6 - t5));
    for (int r = 0; r < 2; r++) {
      char *base = g_strdup_printf("wl.%d.et", r);
      char *p = g_build_filename(dir, base, NULL);
      g_unlink(p);
      g_free(p);
      g_free(base);
    }
  }
  w->ranks[0] = w->ranks[1] = NULL; /* g is freed once, below */
  et_workload_free(w);
  et_graph_free(g);
  g_rand_free(rng);

  /* Load and measure. */
  malloc_trim(0);
  long before = bench_status_kib("VmRSS");
  double t3 = wisp_wall_seconds();
  g = et_read_file(path, 0, &err);
  double t4 = wisp_wall_seconds();
  if (g == NULL) {
    fprintf(stderr, "%s\n", err->message);
    return 1;
  }
  malloc_trim(0);
  long after = bench_status_kib("VmRSS");
  double rss_per_node = ((double)(after - before) * 1024.0 - (double)g->strings_len) / n;
  double mem_per_node = (double)et_graph_memory_bytes(g) / n;
  printf("load: %.2f s (%.2f M nodes/s, %.0f MB/s)\n", t4 - t3, n / (t4 - t3) / 1e6, mb / (t4 - t3));
  printf("resident per node (VmRSS delta minus %.1f MB of names): %.1f B; et_graph_memory_bytes per node: %.1f B "
         "(target <= 64)\n", (double)g->strings_len / 1e6, rss_per_node, mem_per_node);
  printf("PERFORMANCE: et_load nodes %u speed %.0f nodes/s\n", n, n / (t4 - t3));
  gboolean ok = g->n_nodes == n && mem_per_node <= 64.0;
  et_graph_free(g);
  g_unlink(path);
  g_rmdir(dir);
  g_free(path);
  g_free(dir);
  return ok ? 0 : 1;
}
