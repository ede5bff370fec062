/* test_net_capacity.c: both network tiers respect link and port capacity.
 *
 * Collectives that send to many peers at once (direct algorithms, the
 * library full mesh, all-to-all, incast) are run on a switch, a ring, a 2-D
 * torus and fat trees, on the analytical tier (A) and the flow tier (B).
 * Each expected bound is a closed form written beside the check and
 * computed here from the topology's numbers, never read back from wisp:
 *   - injection bound: the bytes a rank must push through its out-links
 *     (its port), divided by their total bandwidth;
 *   - link-load bound: the bytes the routes put on the busiest link,
 *     divided by its bandwidth (tighter on rings and tori, where traffic
 *     crosses several links);
 *   - leaf-uplink bound on an oversubscribed fat tree: the bytes a leaf
 *     sends to other leaves over the total bandwidth of its uplinks.
 * Both tiers must finish no earlier than every bound (nothing is faster
 * than physics).  For a burst released at once, tier A's per-link FIFO
 * reaches the busiest link's bound exactly (net/net_analytic.c), so single-phase
 * operations on topologies whose link loads are known in closed form are
 * also checked from above: tier A <= bound + the longest route latency.
 * Every case prints the closed form next to wisp's figures (g_test_message,
 * visible with --verbose).
 *
 * Conventions (doc/collectives.md): the size of all-gather and gather is
 * the per-rank shard s (gather: every member sends s to the root);
 * all-reduce and all-to-all take S per rank, cut into pieces S/q.
 */
#include "config.h"

#include "collectives/coll.h"

#include <string.h>

#define GiB (UINT64_C(1) << 30)
#define NS SIM_PS_PER_NS
#define B50 UINT64_C(50000000000) /* 50 GB/s */

static topo *load(const char *yaml)
{
  GError *err = NULL;
  topo *t = topo_load_string(yaml, "test_net_capacity.yaml", &err);
  g_assert_no_error(err);
  g_assert_nonnull(t);
  return t;
}

/* The library full mesh: stratacl with the default allocation gap, so its
 * readiness barrier never blocks; it adds t_chk and sigma_sig to the same
 * direct transfers. */
static coll_policy *policy(gboolean full_mesh)
{
  coll_policy *pol = coll_policy_new_default();
  coll_policy_force(pol, COLL_ALGO_DIRECT);
  if (full_mesh) {
    coll_library_params lp;
    coll_library_params_default(COLL_LIBRARY_STRATACL, &lp);
    lp.p_remap = 0;
    coll_policy_set_library(pol, &lp);
  }
  return pol;
}

static sim_time_ps measure(const topo *t, net_tier tier, const coll_policy *pol, et_coll_type type, uint64_t bytes,
                           int q, coll_info *info)
{
  int *ranks = g_new(int, q);
  for (int i = 0; i < q; i++)
    ranks[i] = i;
  coll_desc d = { .type = type, .bytes = bytes, .ranks = ranks, .n_ranks = q, .root = type == ET_COLL_GATHER ? 0 : -1 };
  sim_time_ps tp = 0;
  GError *err = NULL;
  g_assert_true(coll_measure(t, tier, pol, &d, &tp, info, &err));
  g_assert_no_error(err);
  g_free(ranks);
  return tp;
}

static double ms(sim_time_ps t)
{
  return (double)t / 1e9;
}

/* Runs one case on both tiers.  bound: the closed form; upper (0 = none):
 * the most tier A may take (bound + longest route latency, for bursts
 * whose busiest link is known exactly).  Returns tier A's time. */
static sim_time_ps check_case(const char *what, const topo *t, gboolean full_mesh, et_coll_type type,
                              uint64_t bytes, int q, sim_time_ps bound, sim_time_ps upper)
{
  coll_policy *pol = policy(full_mesh);
  coll_info info;
  sim_time_ps ta = measure(t, NET_TIER_ANALYTICAL, pol, type, bytes, q, &info);
  g_assert_cmpint(info.algo, ==, COLL_ALGO_DIRECT);
  sim_time_ps tb = measure(t, NET_TIER_FLOW, pol, type, bytes, q, NULL);
  double busbw_port = (double)info.algbw_bytes * info.busbw_factor / ((double)ta / 1e12) / 1e9;
  g_test_message("%s%s: bound %.3f ms; analytical %.3f ms (busbw %.2f GB/s), flow %.3f ms", what,
                 full_mesh ? " (stratacl full mesh)" : "", ms(bound), ms(ta), busbw_port, ms(tb));
  g_assert_cmpint(ta, >=, bound);
  g_assert_cmpint(tb, >=, bound);
  if (upper > 0)
    g_assert_cmpint(ta, <=, upper);
  coll_policy_free(pol);
  return ta;
}

/* ---- switch: 8 ports of 50 GB/s, 500 ns per link (alpha = 1 us) ------- */

static const char *SWITCH8 = "schema_version: 1\n"
                             "dims:\n"
                             "  - {name: sw, kind: switch, size: 8, bandwidth: 50GB/s, latency: 500ns}\n";

/* Direct all-gather, 8-port switch, 1 GiB per rank, 50 GB/s ports: every
 * rank sends 7 x 1 GiB through its port: >= 7 x 2^30 / 50e9 s = 150.3 ms
 * (+ alpha = 1 us for the last byte to cross the switch).  Tier A serves
 * each up port and each down port back to back from t = 0, so it ends
 * exactly there: busbw 50 GB/s (nccl-tests: (q-1)/q x 8 GiB / time).
 * The library full mesh adds t_chk + sigma_sig on top.
 * Direct all-to-all, 1 GiB per rank: 7 pieces of 2^30/8 through each
 * port: alpha + 7 x 2^27 / 50e9 s = 18.8 ms, exactly on tier A.
 * Direct all-reduce, 1 GiB: reduce-scatter then all-gather of 7 pieces of
 * 2^27 per port each, every member starting the all-gather when its 7
 * pieces are in (at the same instant, by symmetry):
 * 2 (alpha + 7 x 2^27 / 50e9 s) = 37.6 ms, exactly on tier A.
 * Gather (incast) of 1 GiB shards to rank 0: the root's down port
 * receives 7 x 2^30: alpha + 7 x 2^30 / 50e9 s = 150.3 ms, exactly on
 * tier A. */
static void test_switch(void)
{
  topo *t = load(SWITCH8);
  const sim_time_ps alpha = 1000 * NS;
  sim_time_ps ag = alpha + wisp_transfer_ps(7 * GiB, B50);
  g_assert_cmpint(ag, ==, INT64_C(150323855360) + alpha); /* 7 x 2^30 / 50e9 s = 150.32385536 ms */
  sim_time_ps ta = check_case("direct all-gather, 8-port switch, 1 GiB per rank", t, FALSE, ET_COLL_ALL_GATHER, GiB, 8,
                              ag, ag);
  g_assert_cmpint(ta, ==, ag);
  check_case("direct all-gather, 8-port switch, 1 GiB per rank", t, TRUE, ET_COLL_ALL_GATHER, GiB, 8, ag, 0);
  sim_time_ps a2a = alpha + wisp_transfer_ps(7 * (GiB / 8), B50);
  ta = check_case("direct all-to-all, 8-port switch, 1 GiB per rank", t, FALSE, ET_COLL_ALL_TO_ALL, GiB, 8, a2a, a2a);
  g_assert_cmpint(ta, ==, a2a);
  check_case("direct all-to-all, 8-port switch, 1 GiB per rank", t, TRUE, ET_COLL_ALL_TO_ALL, GiB, 8, a2a, 0);
  sim_time_ps ar = 2 * a2a;
  ta = check_case("direct all-reduce, 8-port switch, 1 GiB", t, FALSE, ET_COLL_ALL_REDUCE, GiB, 8, ar, ar);
  g_assert_cmpint(ta, ==, ar);
  ta = check_case("gather (incast) to rank 0, 8-port switch, 1 GiB per rank", t, FALSE, ET_COLL_GATHER, GiB, 8, ag, ag);
  g_assert_cmpint(ta, ==, ag);
  topo_free(t);
}

/* The direct all-gather, all-to-all and all-reduce of 1 GiB per rank on a
 * topology whose binding bound is a link load: load_ag for the
 * all-gather, load_a2a for the all-to-all (and twice it for the
 * all-reduce's two phases); both tiers end no earlier than the bound plus
 * one hop's latency, tier A within the longest route's latency (4 hops)
 * of it (tier B's upper side is not asserted). */
static void check_direct_trio(const topo *t, const char *where, int n, sim_time_ps load_ag, sim_time_ps load_a2a,
                              sim_time_ps hop)
{
  char *ag = g_strdup_printf("direct all-gather, %s, 1 GiB per rank", where);
  char *a2a = g_strdup_printf("direct all-to-all, %s, 1 GiB per rank", where);
  char *ar = g_strdup_printf("direct all-reduce, %s, 1 GiB", where);
  check_case(ag, t, FALSE, ET_COLL_ALL_GATHER, GiB, n, load_ag + hop, load_ag + 4 * hop);
  check_case(ag, t, TRUE, ET_COLL_ALL_GATHER, GiB, n, load_ag + hop, 0);
  check_case(a2a, t, FALSE, ET_COLL_ALL_TO_ALL, GiB, n, load_a2a + hop, load_a2a + 4 * hop);
  check_case(a2a, t, TRUE, ET_COLL_ALL_TO_ALL, GiB, n, load_a2a + hop, 0);
  check_case(ar, t, FALSE, ET_COLL_ALL_REDUCE, GiB, n, 2 * (load_a2a + hop), 0);
  g_free(ag);
  g_free(a2a);
  g_free(ar);
}

/* ---- ring: 8 ranks, bidirectional, 50 GB/s per link and direction ---- */

/* Routes take the shorter way round, ties (distance 4) clockwise.  A
 * clockwise link i -> i+1 carries the transfers of distance d = 1..4 that
 * start at i-d+1 .. i: 1 + 2 + 3 + 4 = 10 pieces; a counter-clockwise one
 * 1 + 2 + 3 = 6.  So a direct all-gather (1 GiB shards):
 *   injection bound (2 out-links): 7 x 2^30 / (2 x 50e9) s = 75.2 ms;
 *   link-load bound: 10 x 2^30 / 50e9 s = 214.7 ms (the binding one);
 * tier A ends within the longest route's latency (4 hops x 500 ns) of the
 * link-load bound.  All-to-all and all-reduce: the same with pieces of
 * 2^30/8 (all-reduce: two phases, >= 2 x 10 x 2^27 / 50e9 s). */
static void test_ring(void)
{
  topo *t = load("schema_version: 1\nlibrary: {name: ideal}\n"
                 "dims:\n"
                 "  - {name: ring, kind: ring, size: 8, bandwidth: 50GB/s, latency: 500ns}\n");
  const sim_time_ps hop = 500 * NS;
  sim_time_ps inj = wisp_transfer_ps(7 * GiB, 2 * B50), load_ag = wisp_transfer_ps(10 * GiB, B50);
  g_test_message("ring 8, direct all-gather 1 GiB: injection bound %.3f ms, link-load bound %.3f ms", ms(inj),
                 ms(load_ag));
  g_assert_cmpint(load_ag, >, inj);
  check_direct_trio(t, "8-ring", 8, load_ag, wisp_transfer_ps(10 * (GiB / 8), B50), hop);
  topo_free(t);
}

/* The user's case: 64-ring, 50 GB/s links, direct all-reduce of 1 GiB.
 * Injection bound: (p-1)/p x S / B with the 2 out-links sending half each
 * way per phase: 2 phases x 63 x 2^24 / (2 x 50e9) s = 21.1 ms.  Link-load
 * bound: a clockwise link carries distances 1..32 in each phase:
 * 2 x (32 x 33 / 2) x 2^24 / 50e9 s = 354.3 ms.  (Tier A used to give
 * 0.7 ms.) */
static void test_ring64_all_reduce(void)
{
  topo *t = load("schema_version: 1\nlibrary: {name: ideal}\n"
                 "dims:\n"
                 "  - {name: ring, kind: ring, size: 64, bandwidth: 50GB/s, latency: 500ns}\n");
  uint64_t piece = GiB / 64;
  sim_time_ps inj = 2 * wisp_transfer_ps(63 * piece, 2 * B50);
  sim_time_ps bound = 2 * wisp_transfer_ps(528 * piece, B50);
  g_test_message("ring 64, direct all-reduce 1 GiB: injection bound %.3f ms, link-load bound %.3f ms", ms(inj),
                 ms(bound));
  g_assert_cmpint(bound, >, inj);
  check_case("direct all-reduce, 64-ring, 1 GiB", t, FALSE, ET_COLL_ALL_REDUCE, GiB, 64, bound, 0);
  topo_free(t);
}

/* ---- torus: 4 x 4, 50 GB/s per link and direction, 500 ns ------------- */

/* Dimension-order routes (x, then y), each axis a 4-ring (distance 2 goes
 * the positive way).  A +x link in row y carries the pairs whose source
 * lies in row y and whose x leg crosses it: (x_src = x, dx = 1 or 2) and
 * (x_src = x - 1, dx = 2), each to any of 4 destination rows: 12 pieces; a
 * +y link likewise 12.  Direct all-gather of 1 GiB shards:
 *   injection bound (4 out-links): 15 x 2^30 / (4 x 50e9) s = 80.5 ms;
 *   link-load bound: 12 x 2^30 / 50e9 s = 257.7 ms (binding);
 * tier A ends within the longest route latency (4 hops) of it.  All-to-all
 * and all-reduce with 2^30/16 pieces. */
static void test_torus(void)
{
  topo *t = load("schema_version: 1\nlibrary: {name: ideal}\n"
                 "dims:\n"
                 "  - {name: ici, kind: torus2d, shape: [4, 4], bandwidth: 50GB/s, latency: 500ns}\n");
  const sim_time_ps hop = 500 * NS;
  sim_time_ps inj = wisp_transfer_ps(15 * GiB, 4 * B50), load_ag = wisp_transfer_ps(12 * GiB, B50);
  g_test_message("torus 4x4, direct all-gather 1 GiB: injection bound %.3f ms, link-load bound %.3f ms", ms(inj),
                 ms(load_ag));
  g_assert_cmpint(load_ag, >, inj);
  check_direct_trio(t, "4x4 torus", 16, load_ag, wisp_transfer_ps(12 * (GiB / 16), B50), hop);
  topo_free(t);
}

/* ---- fat trees: 16 hosts, 4 leaves of 4, 4 spines, 50 GB/s hosts ------ */

/* Non-blocking (leaf-spine links 4 x 50 / 4 = 50 GB/s): the host port is
 * the bound: a direct all-gather pushes 15 x 1 GiB through it:
 * >= 15 x 2^30 / 50e9 s = 322.1 ms (+ 2 hops x 500 ns); all-to-all 15
 * pieces of 2^26: 20.1 ms.  Spines are picked by a hash, so an uplink may
 * carry more than its share: only the lower bound is checked.
 * 2:1 oversubscribed (leaf-spine links 4 x 50 / (2 x 4) = 25 GB/s): a
 * leaf's 4 hosts send 4 x 12 shards to the 12 hosts of other leaves over 4
 * uplinks of 25 GB/s: >= 48 x 2^30 / 100e9 s = 515.4 ms, above the host
 * port's 322.1 ms; all-to-all: 48 pieces of 2^26: 32.2 ms. */
static void test_fat_tree(void)
{
  const sim_time_ps hop = 500 * NS;
  topo *t = load("schema_version: 1\nlibrary: {name: ideal}\n"
                 "dims:\n"
                 "  - {name: ft, kind: fat_tree, size: 16, leaves: 4, bandwidth: 50GB/s, latency: 500ns}\n");
  sim_time_ps port = wisp_transfer_ps(15 * GiB, B50);
  check_case("direct all-gather, fat tree 16 (non-blocking), 1 GiB per rank", t, FALSE, ET_COLL_ALL_GATHER, GiB, 16,
             port + 2 * hop, 0);
  check_case("direct all-gather, fat tree 16 (non-blocking), 1 GiB per rank", t, TRUE, ET_COLL_ALL_GATHER, GiB, 16,
             port + 2 * hop, 0);
  sim_time_ps port_a2a = wisp_transfer_ps(15 * (GiB / 16), B50);
  check_case("direct all-to-all, fat tree 16 (non-blocking), 1 GiB per rank", t, FALSE, ET_COLL_ALL_TO_ALL, GiB, 16,
             port_a2a + 2 * hop, 0);
  check_case("direct all-reduce, fat tree 16 (non-blocking), 1 GiB", t, FALSE, ET_COLL_ALL_REDUCE, GiB, 16,
             2 * (port_a2a + 2 * hop), 0);
  topo_free(t);

  t = load("schema_version: 1\nlibrary: {name: ideal}\n"
           "dims:\n"
           "  - {name: ft, kind: fat_tree, size: 16, leaves: 4, oversubscription: 2, bandwidth: 50GB/s,\n"
           "     latency: 500ns}\n");
  sim_time_ps up = wisp_transfer_ps(48 * GiB, 4 * (B50 / 2));
  g_assert_cmpint(up, >, port);
  check_case("direct all-gather, fat tree 16 (2:1), 1 GiB per rank", t, FALSE, ET_COLL_ALL_GATHER, GiB, 16,
             up + 4 * hop, 0);
  check_case("direct all-gather, fat tree 16 (2:1), 1 GiB per rank", t, TRUE, ET_COLL_ALL_GATHER, GiB, 16,
             up + 4 * hop, 0);
  sim_time_ps up_a2a = wisp_transfer_ps(48 * (GiB / 16), 4 * (B50 / 2));
  check_case("direct all-to-all, fat tree 16 (2:1), 1 GiB per rank", t, FALSE, ET_COLL_ALL_TO_ALL, GiB, 16,
             up_a2a + 4 * hop, 0);
  topo_free(t);
}

/* ---- net_send level: incast and all-to-all, FIFO versus fair sharing -- */

typedef struct {
  sim_time_ps *t;
  int n_done;
} record;

static void on_done(sim_engine *sim, void *ctx, uint64_t cookie)
{
  record *r = ctx;
  r->t[cookie] = sim_now(sim);
  r->n_done++;
}

/* Issues n transfers (src[i] -> dst[i], bytes each) at time 0 on one tier
 * and returns their completion times (g_free). */
static sim_time_ps *burst(const topo *t, net_tier tier, const int *src, const int *dst, int n, uint64_t bytes)
{
  sim_engine *sim = sim_engine_new(TRUE);
  net *nt = net_new(sim, t, tier);
  record rec = { g_new0(sim_time_ps, n), 0 };
  for (int i = 0; i < n; i++)
    net_send(nt, src[i], dst[i], bytes, on_done, &rec, (uint64_t)i);
  sim_run(sim, SIM_TIME_MAX);
  g_assert_cmpint(rec.n_done, ==, n);
  net_free(nt);
  sim_engine_free(sim);
  return rec.t;
}

/* Incast of k = 7 senders of 16 MiB into rank 0 of the 8-port switch
 * (B = 50 GB/s, alpha = 1 us).  The last byte ends at alpha + 7 x 2^24 /
 * 50e9 s = 2.349 ms in both tiers.  Tier A serves the root's down port in
 * issue order: sender i (0-based) ends at alpha + (i+1) x 2^24 / 50e9 s,
 * mean alpha + 4 x 2^24 / 50e9 s; tier B shares it fairly: all end at the
 * last byte's time.  So the mean completion differs by 3/7 of the
 * makespan, the makespan not at all.  All-to-all of 16 MiB pieces on the
 * same switch: every port carries 7 pieces; both tiers end at alpha + 7 x
 * 2^24 / 50e9 s; tier A's mean completion is lower (FIFO). */
static void test_incast_all_to_all_burst(void)
{
  topo *t = load(SWITCH8);
  const uint64_t piece = UINT64_C(1) << 24;
  const sim_time_ps alpha = 1000 * NS, d = wisp_transfer_ps(piece, B50);
  int src[56], dst[56];
  for (int i = 0; i < 7; i++) {
    src[i] = i + 1;
    dst[i] = 0;
  }
  sim_time_ps *ta = burst(t, NET_TIER_ANALYTICAL, src, dst, 7, piece);
  sim_time_ps *tb = burst(t, NET_TIER_FLOW, src, dst, 7, piece);
  sim_time_ps last = alpha + wisp_transfer_ps(7 * piece, B50);
  double mean_a = 0, mean_b = 0;
  for (int i = 0; i < 7; i++) {
    g_assert_cmpint(ta[i], ==, alpha + wisp_transfer_ps((uint64_t)(i + 1) * piece, B50));
    g_assert_cmpint(tb[i], >=, last);
    g_assert_cmpint(tb[i], <=, last + 1);
    mean_a += (double)ta[i] / 7;
    mean_b += (double)tb[i] / 7;
  }
  g_assert_cmpint(ta[6], ==, last);
  g_test_message("incast 7 x 16 MiB, 8-port switch: last %.3f / %.3f ms, mean %.3f / %.3f ms (analytical / flow)",
                 ms(ta[6]), ms(tb[6]), mean_a / 1e9, mean_b / 1e9);
  g_assert_cmpfloat(mean_a, <, mean_b);
  (void)d;
  g_free(ta);
  g_free(tb);

  int n = 0;
  for (int a = 0; a < 8; a++)
    for (int j = 1; j < 8; j++) {
      src[n] = a;
      dst[n] = (a + j) % 8;
      n++;
    }
  ta = burst(t, NET_TIER_ANALYTICAL, src, dst, n, piece);
  tb = burst(t, NET_TIER_FLOW, src, dst, n, piece);
  sim_time_ps ma = 0, mb = 0;
  mean_a = mean_b = 0;
  for (int i = 0; i < n; i++) {
    ma = MAX(ma, ta[i]);
    mb = MAX(mb, tb[i]);
    mean_a += (double)ta[i] / n;
    mean_b += (double)tb[i] / n;
    g_assert_cmpint(ta[i], >=, alpha + d); /* no transfer beats its own alpha-beta time */
  }
  g_test_message("all-to-all 56 x 16 MiB, 8-port switch: last %.3f / %.3f ms, mean %.3f / %.3f ms (analytical / flow)",
                 ms(ma), ms(mb), mean_a / 1e9, mean_b / 1e9);
  g_assert_cmpint(ma, ==, last);
  g_assert_cmpint(mb, >=, last);
  g_assert_cmpint(mb, <=, last + 1);
  g_free(ta);
  g_free(tb);
  topo_free(t);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/net_capacity/switch", test_switch);
  g_test_add_func("/net_capacity/ring", test_ring);
  g_test_add_func("/net_capacity/ring64_all_reduce", test_ring64_all_reduce);
  g_test_add_func("/net_capacity/torus", test_torus);
  g_test_add_func("/net_capacity/fat_tree", test_fat_tree);
  g_test_add_func("/net_capacity/incast_all_to_all_burst", test_incast_all_to_all_burst);
  return g_test_run();
}
