/* test_sensitivity_sign.c: the sign of every what-if on the shipped
 * presets.  A what-if that improves one tier (its latency halved, or its
 * bandwidth doubled) must never make a collective slower while NCCL runs
 * the same (algorithm, protocol) as before: with the choice held, time is
 * a sum of latencies and of bytes over shares of bandwidth, each of which
 * can only shrink.  (With the choice free, NCCL's tuner may switch to a
 * schedule that is slower on the machine, as the real library does: on
 * dgx-h100 at 32 ranks, bandwidth doubled, a 16 MiB broadcast switches
 * from ring/LL128 to ring/Simple, 129.0 -> 143.5 us; that is the tuner's
 * call, not a sign error, so it is not checked here.)
 *
 * The bug this guards against: the NCCL plan took the route latency off
 * its per-hop latency once per step NCCL's model counts, more than the
 * simulation charges, so lower latency made collectives slower (32
 * dgx-a100 nodes, 24 KiB all-reduce: 81.9 us at latency 0, 61.9 us at
 * 1 us; test_coll_nccl /coll/nccl/latency-monotone has that case).
 *
 * Cases: the presets dgx-a100, dgx-h100, perlmutter and gb200-nvl72, 32
 * ranks each (perlmutter's 16); every tier alone; all-reduce, all-gather, reduce-scatter,
 * all-to-all and broadcast at 8 KiB, 1 MiB and 64 MiB; both network
 * tiers (analytical and flow).  Needs G_TEST_SRCDIR (make check).
 *
 * The only violations allowed are the named ones in sens_exceptions
 * below (doc/network-models.md "Sensitivity sign"); any other fails, and
 * so does a listed one that no longer occurs (the list must stay exact).
 * In every listed case the plan is the same in both runs (checked with
 * the plan's base, per-hop latency, chunks, FIFO depth and per-link
 * efficiencies; where a bandwidth doubles, only that link's effective
 * rate changes, and it grows), so every transfer has the same bytes on
 * the same route over links that are at least as fast: what changes is
 * only when transfers arrive, and how the network tier serves transfers
 * that overlap. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "collectives/coll.h"
#include "collectives/libraries/nccl/coll_nccl.h"
#include "topologies/topo_variant.h"
#include "test_util.h"

/* A named violation: preset, tier, resource ("latency" halved or
 * "bandwidth" doubled), the changed dimension, collective, bytes (the
 * collective's own: all-gather per rank), whether it is an open defect
 * (reported as TODO, not passed) and the reason with its measured
 * figures (base -> improved, us). */
typedef struct {
  const char *preset, *tier, *resource, *dim, *op;
  uint64_t bytes;
  gboolean open;
  const char *why;
} sens_exception;

/* Tier B shares a link max-min fairly among the transfers on it; an
 * earlier arrival changes which transfers overlap on a shared link.  On
 * these presets 8 (4) rail rings cross each GPU's one NVLink port: 7 (3)
 * lanes forward over it while the lane that leaves the node uses the
 * NIC.  Example, dgx-h100 ring/LL128 all-gather of 1 MiB per rank: each
 * lane step moves 128 KiB, the NIC hop 2.85 us at 50 GB/s x 0.92, the 7
 * NVLink lanes 2.7 us together at 450 GB/s x 0.76, so the NIC (31 such
 * steps, 88.3 us) and the shared port are nearly balanced.  Tier A,
 * which serves every link at its full rate, is monotone in the IB
 * latency (170.4 us at 1 us, 169.4 at 500 ns, 168.9 at 250 ns, 168.4 at
 * 0); tier B gives 173.9, 192.3, 176.3, 176.6 us.  The inference (not
 * traced flow by flow): at 500 ns the lanes' NVLink sends overlap so that
 * the one feeding the next NIC hop gets a fair share of the port and the
 * NIC idles.  It is the port: with NVLink at 3600 GB/s (no contention on
 * it) tier B is monotone again (170.5, 169.8, 169.3, 167.8 us). */
#define SENS_WHY_SHARING "tier B max-min sharing of each GPU's NVLink port among the rail rings"
/* The two 8 KiB ring/LL all-gathers stay slower with NVLink at 8x (+1.2
 * us) and at 64x (+0.4 us); they show the same bump in the IB latency
 * (80.2 us at 750 ns, 83.1 at 500, 77.3 at 250).  Inferred, not traced:
 * the lanes' small sends, in phase, finish together under max-min. */
#define SENS_WHY_PHASE "tier B, same plan: the rail rings' small sends in phase, sharing under max-min (inferred, not traced)"
/* Two more stay slower with NVLink at 8x and 64x (dgx-h100 all-gather
 * 64 MiB: 5349.859 -> 5349.922 us at 64x; perlmutter all-gather 1 MiB:
 * 224.704 -> 225.042); their plans are identical too, but which shared
 * resource carries the effect is not identified. */
#define SENS_WHY_UNIDENTIFIED "tier B timing effect with the same plan; the shared link is not identified"
/* Tier A serves each link first come, first served, a whole transfer at
 * a time; a ring broadcast's 1 MiB-per-lane slices that cross the faster
 * NIC reach the next node's NVLink port earlier and queue ahead of the
 * lanes on the critical chain.  dgx-h100 ring/Simple broadcast 64 MiB:
 * IB 400/800/1600 Gb/s: 483.0/488.4/507.2 us (before g27h; now 263.3 us
 * at 400 and 800); with NVLink at 3600 GB/s
 * (port uncontended) 284.9/180.0/127.9 us.  Open: tier A's FIFO order,
 * not the machine (tier B: 441.7/427.9/422.5 us). */
#define SENS_WHY_FIFO "tier A first-come-first-served NVLink port: faster NIC slices queue ahead of the critical lane"

static const sens_exception sens_exceptions[] = {
  { "dgx-a100", "flow", "latency", "nvlink", "ALL_GATHER", 64u << 20, FALSE, SENS_WHY_SHARING ": 10612.085 -> 10612.689" },
  /* Since NCCL's ring-graph bus bandwidth on more than two nodes (h27g:
   * 8 channels x 24 GB/s of its search, 192 of the NICs' 200 GB/s; 384 of
   * 400 on dgx-h100, 96 of 100 on perlmutter) the NIC hops run 4 %
   * slower and tier B's overlaps move: dgx-a100 reduce-scatter 64 MiB
   * (NVLink latency, 435.579 -> 436.620), dgx-h100 all-gather 64 MiB
   * (NVLink bandwidth, 5348.537 -> 5384.113), perlmutter all-reduce 64 MiB
   * (Slingshot latency, 1458.485 -> 1474.361) and the open tier-A
   * broadcast 64 MiB on perlmutter (Slingshot bandwidth, 1553.835 ->
   * 1573.807) no longer slow down; these six do (plans checked equal by
   * the test, the shared link not traced). */
  { "dgx-a100", "flow", "latency", "nvlink", "ALL_GATHER", 1u << 20, FALSE, SENS_WHY_UNIDENTIFIED ": 266.095 -> 266.993" },
  { "dgx-a100", "flow", "latency", "ib", "ALL_GATHER", 8192, FALSE, SENS_WHY_PHASE ": 81.979 -> 83.216" },
  { "dgx-h100", "flow", "bandwidth", "ib", "ALL_GATHER", 1u << 20, FALSE, SENS_WHY_SHARING ": 173.857 -> 192.956" },
  { "dgx-h100", "flow", "latency", "ib", "ALL_GATHER", 8192, FALSE, SENS_WHY_PHASE ": 81.979 -> 83.144" },
  { "dgx-h100", "flow", "latency", "ib", "ALL_GATHER", 1u << 20, FALSE, SENS_WHY_SHARING ": 173.857 -> 192.258" },
  { "dgx-h100", "flow", "latency", "ib", "REDUCE_SCATTER", 64u << 20, FALSE, SENS_WHY_SHARING ": 260.670 -> 274.900" },
  { "perlmutter", "flow", "bandwidth", "nvlink", "ALL_REDUCE", 64u << 20, FALSE, SENS_WHY_SHARING ": 1458.485 -> 1463.561" },
  { "perlmutter", "flow", "bandwidth", "nvlink", "ALL_GATHER", 1u << 20, FALSE, SENS_WHY_SHARING ": 221.764 -> 224.704" },
  { "perlmutter", "flow", "latency", "nvlink", "ALL_REDUCE", 64u << 20, FALSE, SENS_WHY_SHARING ": 1458.485 -> 1492.985" },
  { "perlmutter", "flow", "latency", "nvlink", "ALL_GATHER", 1u << 20, FALSE, SENS_WHY_UNIDENTIFIED ": 221.764 -> 230.153" },
  { "perlmutter", "flow", "latency", "slingshot", "ALL_GATHER", 1u << 20, FALSE, SENS_WHY_SHARING ": 221.764 -> 222.860" },
  { "dgx-h100", "flow", "latency", "nvlink", "REDUCE_SCATTER", 64u << 20, FALSE, SENS_WHY_UNIDENTIFIED ": 266.699 -> 267.446" }, /* h27g, ring/LL128: ring@flat x8 rails */
  { "dgx-h100", "flow", "latency", "nvlink", "ALL_GATHER", 64u << 20, FALSE, SENS_WHY_UNIDENTIFIED ": 5610.097 -> 5618.308" }, /* h27g, ring/Simple: ring@flat x8 rails */
  { "perlmutter", "flow", "latency", "nvlink", "REDUCE_SCATTER", 64u << 20, FALSE, SENS_WHY_UNIDENTIFIED ": 753.839 -> 759.221" }, /* h27g, ring/Simple: ring@flat x4 rails */
  { "perlmutter", "flow", "latency", "nvlink", "ALL_GATHER", 64u << 20, FALSE, SENS_WHY_UNIDENTIFIED ": 10800.661 -> 10820.892" }, /* h27g, ring/Simple: ring@flat x4 rails */
  { "dgx-h100", "analytical", "bandwidth", "ib", "BROADCAST", 64u << 20, TRUE, SENS_WHY_FIFO ": 263.292 -> 263.320 (482.971 -> 488.418 before g27h's per-channel broadcast chunks)" },
  { "perlmutter", "analytical", "bandwidth", "slingshot", "BROADCAST", 1u << 20, TRUE, SENS_WHY_FIFO ": 46.368 -> 47.104 (47.698 -> 49.276 before g27h)" },
};

/* The index of the listed exception for this case, or -1.  O(list). */
static int sens_find(const char *preset, const char *tier, const char *resource, const char *dim, const char *op,
                     uint64_t bytes)
{
  for (size_t i = 0; i < G_N_ELEMENTS(sens_exceptions); i++) {
    const sens_exception *e = &sens_exceptions[i];
    if (strcmp(e->preset, preset) == 0 && strcmp(e->tier, tier) == 0 && strcmp(e->resource, resource) == 0 &&
        strcmp(e->dim, dim) == 0 && strcmp(e->op, op) == 0 && e->bytes == bytes)
      return (int)i;
  }
  return -1;
}

/* The preset t with tier dim improved the way `wisp utility` improves a
 * tier (topo_variant_scale_latency / _scale_bw): its latency halved (lat)
 * or its bandwidth doubled (!lat). */
static topo *vary(const topo *t, int dim, gboolean lat)
{
  GError *error = NULL;
  topo_variant *v = topo_variant_new(t);
  g_assert_true(lat ? topo_variant_scale_latency(v, dim, 0.5, &error) : topo_variant_scale_bw(v, dim, 2.0, &error));
  g_assert_no_error(error);
  topo *t1 = topo_variant_build(v, &error);
  g_assert_no_error(error);
  topo_variant_free(v);
  return t1;
}

/* One collective's time on `t` (tier), NCCL's choice forced to
 * (algo, proto) unless they are AUTO; the choice made into *info. */
static sim_time_ps measure(const topo *t, net_tier tier, int algo, int proto, const coll_desc *d, coll_info *info)
{
  GError *error = NULL;
  coll_policy *pol = coll_policy_new_from_topo(t, &error);
  g_assert_no_error(error);
  coll_library_params lib = *coll_policy_library(pol);
  g_assert_cmpint(lib.kind, ==, COLL_LIBRARY_NCCL);
  lib.nccl_algo = algo;
  lib.nccl_proto = proto;
  coll_policy_set_library(pol, &lib);
  sim_time_ps ps = 0;
  g_assert_true(coll_measure(t, tier, pol, d, &ps, info, &error));
  g_assert_no_error(error);
  coll_policy_free(pol);
  return ps;
}

static void test_preset(gconstpointer data)
{
  const char *name = data;
  if (g_getenv("G_TEST_SRCDIR") == NULL) {
    g_test_skip("G_TEST_SRCDIR not set (run through make check)");
    return;
  }
  char *file = g_strconcat(name, ".yaml", NULL);
  char *path = g_build_filename(g_getenv("G_TEST_SRCDIR"), "presets", file, NULL);
  static const et_coll_type ops[] = { ET_COLL_ALL_REDUCE, ET_COLL_ALL_GATHER, ET_COLL_REDUCE_SCATTER,
                                      ET_COLL_ALL_TO_ALL, ET_COLL_BROADCAST };
  static const uint64_t sizes[] = { 8192, 1u << 20, 64u << 20 };
  int ranks[32];
  for (int i = 0; i < 32; i++)
    ranks[i] = i;
  GError *error = NULL;
  topo *t0 = topo_load(path, &error);
  g_assert_no_error(error);
  int n_dims = topo_n_dims(t0), n = MIN(32, topo_n_ranks(t0));
  /* Every improved network once: tv[2 dim + lat]. */
  topo **tv = g_new(topo *, 2 * (size_t)n_dims);
  for (int dim = 0; dim < n_dims; dim++)
    for (int lat = 0; lat < 2; lat++)
      tv[2 * dim + lat] = vary(t0, dim, lat);
  unsigned checked = 0, n_open = 0;
  gboolean seen[G_N_ELEMENTS(sens_exceptions)] = { FALSE };
  for (int tier = NET_TIER_ANALYTICAL; tier <= NET_TIER_FLOW; tier++)
    for (size_t o = 0; o < G_N_ELEMENTS(ops); o++)
      for (size_t s = 0; s < G_N_ELEMENTS(sizes); s++) {
        coll_desc d = { .type = ops[o], .bytes = sizes[s], .ranks = ranks, .n_ranks = n,
                        .root = ops[o] == ET_COLL_BROADCAST ? 0 : -1 };
        coll_info info;
        sim_time_ps base = measure(t0, (net_tier)tier, COLL_NALGO_AUTO, COLL_PROTO_AUTO, &d, &info);
        for (int dim = 0; dim < n_dims; dim++)
          for (int lat = 0; lat < 2; lat++) {
            coll_info info1;
            sim_time_ps better = measure(tv[2 * dim + lat], (net_tier)tier, info.nccl_algo, info.proto, &d, &info1);
            g_assert_cmpint(info1.nccl_algo, ==, info.nccl_algo);
            g_assert_cmpint(info1.proto, ==, info.proto);
            int ex = better > base ? sens_find(name, net_tier_name((net_tier)tier), lat ? "latency" : "bandwidth",
                                               topo_dim_name(t0, dim), et_coll_type_name(ops[o]), sizes[s])
                                   : -1;
            if (ex >= 0) {
              seen[ex] = TRUE;
              g_test_message("listed%s: %s, %s tier, %s of %s: %s of %" G_GUINT64_FORMAT " B (%s): %.3f -> %.3f us; %s",
                             sens_exceptions[ex].open ? " (open)" : "", name, net_tier_name((net_tier)tier),
                             lat ? "latency" : "bandwidth", topo_dim_name(t0, dim), et_coll_type_name(ops[o]),
                             sizes[s], info.detail, base / 1e6, better / 1e6, sens_exceptions[ex].why);
              n_open += sens_exceptions[ex].open;
            } else if (better > base) {
              g_test_fail_printf("%s, %s tier, %s of tier %s %s: %s of %" G_GUINT64_FORMAT " B got slower with the "
                                 "same choice (%s): %.3f -> %.3f us", name, net_tier_name((net_tier)tier),
                                 lat ? "latency" : "bandwidth", topo_dim_name(t0, dim), lat ? "halved" : "doubled",
                                 et_coll_type_name(ops[o]), sizes[s], info.detail, base / 1e6, better / 1e6);
            }
            checked++;
          }
      }
  for (int i = 0; i < 2 * n_dims; i++)
    topo_free(tv[i]);
  g_free(tv);
  g_test_message("%s: %u cases (tier x tier's dims x {latency/2, bandwidth x2} x 5 collectives x 3 sizes)", name,
                 checked);
  for (size_t i = 0; i < G_N_ELEMENTS(sens_exceptions); i++)
    if (strcmp(sens_exceptions[i].preset, name) == 0 && !seen[i])
      g_test_fail_printf("listed exception %s, %s tier, %s of %s, %s of %" G_GUINT64_FORMAT
                         " B no longer slows down: remove it from sens_exceptions and doc/network-models.md",
                         name, sens_exceptions[i].tier, sens_exceptions[i].resource, sens_exceptions[i].dim,
                         sens_exceptions[i].op, sens_exceptions[i].bytes);
  if (n_open > 0 && !g_test_failed())
    g_test_incomplete_printf("%s: %u open tier-A FIFO-order violations (listed, see sens_exceptions)", name, n_open);
  topo_free(t0);
  g_free(path);
  g_free(file);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_data_func("/sensitivity-sign/dgx-a100", "dgx-a100", test_preset);
  g_test_add_data_func("/sensitivity-sign/dgx-h100", "dgx-h100", test_preset);
  g_test_add_data_func("/sensitivity-sign/perlmutter", "perlmutter", test_preset);
  g_test_add_data_func("/sensitivity-sign/gb200-nvl72", "gb200-nvl72", test_preset);
  return g_test_run();
}
