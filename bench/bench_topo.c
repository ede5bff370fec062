/* bench_topo.c: cost of building topologies and of topo_route, cold (first
 * call per pair: route computed and cached) and warm (cache hit).  Prints
 * one line per case; figures are wall-clock on this machine. */
#include "config.h"
#include "topologies/topo.h"

#include <stdlib.h>

static void run(const char *label, const char *yaml, int pair_stride)
{
  GError *e = NULL;
  double t0 = wisp_wall_seconds();
  topo *t = topo_load_string(yaml, label, &e);
  if (t == NULL) {
    fprintf(stderr, "bench_topo: %s\n", e->message);
    exit(1);
  }
  double t1 = wisp_wall_seconds();
  int n = topo_n_ranks(t);
  uint64_t pairs = 0, links = 0;
  for (int a = 0; a < n; a += pair_stride)
    for (int b = 0; b < n; b++) {
      uint32_t k;
      topo_route(t, a, b, &k);
      pairs++;
      links += k;
    }
  double t2 = wisp_wall_seconds();
  uint64_t warm = 0;
  for (int rep = 0; rep < 3; rep++)
    for (int a = 0; a < n; a += pair_stride)
      for (int b = 0; b < n; b++) {
        uint32_t k;
        topo_route(t, a, b, &k);
        warm += k;
      }
  double t3 = wisp_wall_seconds();
  printf("%-28s ranks %6d links %8u  load %8.3f ms  cold %7.1f ns/route (%" G_GUINT64_FORMAT
         " pairs, %.2f hops avg)  warm %6.1f ns/route\n",
         label, n, topo_n_links(t), (t1 - t0) * 1e3, (t2 - t1) * 1e9 / (double)pairs, pairs,
         (double)links / (double)pairs, (t3 - t2) * 1e9 / (double)(3 * pairs));
  if (warm != 3 * links) {
    fprintf(stderr, "bench_topo: warm routes differ from cold ones\n");
    exit(1);
  }
  topo_free(t);
}

int main(void)
{
  run("torus2d 16x16", "schema_version: 1\ndims: [{kind: torus2d, shape: [16, 16], bandwidth: 56GB/s, latency: 1us}]\n",
      1);
  run("cloudmatrix384 x2 (dies)",
      "schema_version: 1\ndims:\n"
      "  - {kind: fully_connected, size: 2, bandwidth: 210GB/s, latency: 200ns}\n"
      "  - {kind: switch, size: 8, bandwidth: 170GB/s, latency: 350ns}\n"
      "  - {kind: switch, size: 48, bandwidth: 150GB/s, latency: 1050ns}\n"
      "  - {kind: switch, size: 2, bandwidth: 200Gbps, latency: 2.5us}\n",
      7);
  run("fc8 x fat_tree 1024 (8192)",
      "schema_version: 1\ndims:\n"
      "  - {kind: fully_connected, size: 8, bandwidth: 900GB/s, latency: 250ns}\n"
      "  - {kind: fat_tree, size: 1024, leaves: 32, spines: 16, bandwidth: 400Gbps, latency: 1us}\n",
      511);
  run("torus3d 16x16x16", "schema_version: 1\ndims: [{kind: torus3d, shape: [16, 16, 16], bandwidth: 50GB/s, latency: 1us}]\n",
      127);
  return 0;
}
