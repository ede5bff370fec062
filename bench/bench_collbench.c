/* bench_collbench.c: every collective type x 12 sizes (1 KiB .. 4 GiB,
 * factor 4) x {8, 64, 512} ranks on the analytical tier, each run on a
 * fresh engine, network and library (as `wisp collbench` does).  Prints
 * the wall time per rank count and in total, and the simulated transfers
 * per second.  Topologies: one 8-GPU switch node (450 GB/s, 500 ns); 8 or
 * 64 such nodes on a second switch tier (50 GB/s, 2 us). */
#include "config.h"

#include "collectives/coll.h"

static const et_coll_type types[] = {
  ET_COLL_ALL_REDUCE, ET_COLL_ALL_GATHER, ET_COLL_REDUCE_SCATTER, ET_COLL_ALL_TO_ALL, ET_COLL_ALL_TO_ALLV,
  ET_COLL_BROADCAST, ET_COLL_REDUCE, ET_COLL_GATHER, ET_COLL_SCATTER, ET_COLL_BARRIER,
};

static topo *make_topo(int nodes)
{
  GString *y = g_string_new("schema_version: 1\ndims:\n"
                            "  - {name: nvl, kind: switch, size: 8, bandwidth: 450GB/s, latency: 500ns}\n");
  if (nodes > 1)
    g_string_append_printf(y, "  - {name: net, kind: switch, size: %d, bandwidth: 50GB/s, latency: 2us}\n", nodes);
  GError *err = NULL;
  topo *t = topo_load_string(y->str, "bench", &err);
  if (t == NULL)
    g_error("bench topology: %s", err->message);
  g_string_free(y, TRUE);
  return t;
}

int main(void)
{
  const int nodes[3] = { 1, 8, 64 };
  double total = 0;
  for (int i = 0; i < 3; i++) {
    topo *t = make_topo(nodes[i]);
    int n = topo_n_ranks(t);
    int *ranks = g_new(int, n);
    for (int r = 0; r < n; r++)
      ranks[r] = r;
    uint64_t *splits = g_new(uint64_t, (size_t)n * n);
    coll_policy *pol = coll_policy_new_default();
    double t0 = wisp_wall_seconds();
    int runs = 0;
    for (size_t k = 0; k < G_N_ELEMENTS(types); k++) {
      double tk = wisp_wall_seconds();
      for (int s = 0; s < 12; s++) {
        uint64_t size = UINT64_C(1024) << (2 * s);
        uint64_t comm = coll_ncclt_comm_size(types[k], size, n); /* barrier: 0, as collbench */
        for (size_t j = 0; j < (size_t)n * n; j++)
          splits[j] = size / (uint64_t)n;
        coll_desc d = { .type = types[k], .bytes = comm, .ranks = ranks, .n_ranks = n, .root = 0,
                        .splits = types[k] == ET_COLL_ALL_TO_ALLV ? splits : NULL };
        sim_time_ps tp;
        coll_info info;
        GError *err = NULL;
        if (!coll_measure(t, NET_TIER_ANALYTICAL, pol, &d, &tp, &info, &err))
          g_error("%s", err->message);
        runs++;
        if (s == 11 && n == 512)
          printf("  %-14s %-40s %.3f s for 12 sizes\n", coll_algo_name(info.algo), info.detail,
                 wisp_wall_seconds() - tk);
      }
    }
    double dt = wisp_wall_seconds() - t0;
    total += dt;
    printf("collbench %3d ranks: %d collectives (10 types x 12 sizes) in %.3f s\n", n, runs, dt);
    coll_policy_free(pol);
    g_free(splits);
    g_free(ranks);
    topo_free(t);
  }
  printf("collbench total: %.3f s\n", total);
  return 0;
}
