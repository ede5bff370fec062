/* test_coll.c: collectives on the network, against closed forms.
 *
 * Unless a test says otherwise the analytical tier is used: a transfer of
 * S bytes over a route costs sum(link latency) + wisp_transfer_ps(S,
 * bottleneck), where wisp_transfer_ps rounds S*10^12/B to the nearest
 * picosecond (ties away from zero).  Every expected value below is that
 * formula applied step by step; the comments give the numbers.  Routes:
 * ring neighbours are one link (alpha = latency), a switch is two links
 * (alpha = 2 * latency), fully connected is one link.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "collectives/coll_internal.h"

#define MiB (UINT64_C(1) << 20)
#define NS SIM_PS_PER_NS
#define US SIM_PS_PER_US

typedef struct {
  sim_time_ps *t;        /* completion time per member */
  int *calls;            /* done() calls per member */
  int n;
} done_log;

static void on_done(sim_engine *sim, void *ctx, uint64_t cookie, int member)
{
  done_log *log = ctx;
  g_assert_cmpuint(cookie, ==, 77);
  g_assert_cmpint(member, >=, 0);
  g_assert_cmpint(member, <, log->n);
  log->t[member] = sim_now(sim);
  log->calls[member]++;
}

static topo *load(const char *yaml)
{
  GError *err = NULL;
  topo *t = topo_load_string(yaml, "test.yaml", &err);
  g_assert_no_error(err);
  g_assert_nonnull(t);
  return t;
}

/* Runs one collective; returns the time the last member finished and
 * checks that done() was called exactly once per member.  per_member (may
 * be NULL) receives each member's finish time. */
static sim_time_ps run_one(const topo *t, net_tier tier, const coll_policy *pol, et_coll_type type,
                           uint64_t bytes, const int *ranks, int n, int root, const uint64_t *splits,
                           sim_time_ps *per_member, coll_info *info)
{
  sim_engine *sim = sim_engine_new(TRUE);
  net *nt = net_new(sim, t, tier);
  coll_rt *c = coll_rt_new(sim, nt, pol);
  done_log log = { g_new0(sim_time_ps, n), g_new0(int, n), n };
  coll_desc d = { .type = type, .bytes = bytes, .ranks = ranks, .n_ranks = n, .root = root, .splits = splits };
  GError *err = NULL;
  g_assert_true(coll_desc_check(t, &d, &err));
  g_assert_no_error(err);
  coll_info local;
  coll_start(c, &d, on_done, &log, 77, info ? info : &local);
  sim_run(sim, SIM_TIME_MAX);
  sim_time_ps end = 0;
  for (int i = 0; i < n; i++) {
    g_assert_cmpint(log.calls[i], ==, 1);
    end = MAX(end, log.t[i]);
    if (per_member)
      per_member[i] = log.t[i];
  }
  g_assert_cmpint(end, ==, sim_now(sim)); /* nothing runs after the last member */
  coll_rt_free(c);
  net_free(nt);
  sim_engine_free(sim);
  g_free(log.t);
  g_free(log.calls);
  return end;
}

static int *iota(int n, int first, int stride)
{
  int *r = g_new(int, n);
  for (int i = 0; i < n; i++)
    r[i] = first + i * stride;
  return r;
}

static const char *RING8 =
  "schema_version: 1\nlibrary: {name: ideal}\n"
  "dims:\n"
  "  - {name: x, kind: ring, size: 8, bandwidth: 50GB/s, latency: 500ns}\n";

static const char *SWITCH8 =
  "schema_version: 1\nlibrary: {name: ideal}\n"
  "dims:\n"
  "  - {name: sw, kind: switch, size: 8, bandwidth: 50GB/s, latency: 500ns}\n";

/* Ring all-reduce: 2(p-1) * (alpha + round(S/(p*B))).  The reference case
 * shared with the replay test: p = 8, S = 1 MiB, B = 50 GB/s, alpha = 500
 * ns: S/p = 131072 B -> 2621.44 ns = 2,621,440 ps; step 3,121,440 ps;
 * 14 steps = 43,700,160 ps. */
static void test_ring_allreduce(void)
{
  topo *t = load(RING8);
  coll_policy *pol = coll_policy_new_default();
  coll_policy_force(pol, COLL_ALGO_RING);
  int *r = iota(8, 0, 1);
  sim_time_ps per[8];
  coll_info info;
  sim_time_ps got = run_one(t, NET_TIER_ANALYTICAL, pol, ET_COLL_ALL_REDUCE, MiB, r, 8, -1, NULL, per, &info);
  sim_time_ps step = 500 * NS + wisp_transfer_ps(MiB / 8, UINT64_C(50000000000));
  g_assert_cmpint(step, ==, 3121440);
  g_assert_cmpint(got, ==, 14 * step);
  g_assert_cmpint(got, ==, 43700160);
  /* Uniform ring: the schedule is symmetric, every member finishes with
   * its last receive at the same instant. */
  for (int i = 0; i < 8; i++)
    g_assert_cmpint(per[i], ==, got);
  g_assert_cmpint(info.algo, ==, COLL_ALGO_RING);
  g_assert_cmpstr(info.detail, ==, "ring@x");
  g_assert_cmpuint(info.algbw_bytes, ==, MiB);
  g_assert_cmpfloat_with_epsilon(info.busbw_factor, 14.0 / 8.0, 1e-15);

  /* Non-divisible size: 1,000,003 B over 8 pieces = 125,001 (3 pieces)
   * and 125,000 (5 pieces).  Every step of a uniform ring has a member
   * carrying a 125,001-byte piece, so each step lasts alpha +
   * round(125001 B / 50 GB/s) = 500,000 + 2,500,020 ps. */
  got = run_one(t, NET_TIER_ANALYTICAL, pol, ET_COLL_ALL_REDUCE, 1000003, r, 8, -1, NULL, NULL, NULL);
  g_assert_cmpint(got, ==, 14 * (500 * NS + wisp_transfer_ps(125001, UINT64_C(50000000000))));

  /* Bidirectional ring: half of each piece each way on separate links,
   * 14 * (alpha + round(S/(2p)/B)) = 14 * (500,000 + 1,310,720). */
  coll_policy_force(pol, COLL_ALGO_RING_BIDIR);
  got = run_one(t, NET_TIER_ANALYTICAL, pol, ET_COLL_ALL_REDUCE, MiB, r, 8, -1, NULL, NULL, NULL);
  g_assert_cmpint(got, ==, 14 * (500 * NS + wisp_transfer_ps(MiB / 16, UINT64_C(50000000000))));

  /* Two chunks on a single-dimension plan: one chunk per dimension and
   * member is active at a time (doc/collectives.md), so the chunks run one
   * after the other: 2 * 14 * (alpha + round(S/(2p)/B)) = 28 * (500,000 +
   * 1,310,720) = 50,700,160 ps — chunking a flat ring only adds latency. */
  coll_policy_force(pol, COLL_ALGO_RING);
  coll_policy_set_chunks(pol, 2);
  got = run_one(t, NET_TIER_ANALYTICAL, pol, ET_COLL_ALL_REDUCE, MiB, r, 8, -1, NULL, NULL, NULL);
  g_assert_cmpint(got, ==, 28 * (500 * NS + wisp_transfer_ps(MiB / 16, UINT64_C(50000000000))));
  g_assert_cmpint(got, ==, 50700160);
  coll_policy_set_chunks(pol, 1);

  /* Reduction cost at 100 GB/s: each of the 7 reduce-scatter steps adds
   * round(131072 B / 100 GB/s) = 1,310,720 ps after its receive. */
  coll_policy_set_reduce_bw(pol, UINT64_C(100000000000));
  got = run_one(t, NET_TIER_ANALYTICAL, pol, ET_COLL_ALL_REDUCE, MiB, r, 8, -1, NULL, NULL, NULL);
  g_assert_cmpint(got, ==, 43700160 + 7 * wisp_transfer_ps(MiB / 8, UINT64_C(100000000000)));
  g_assert_cmpint(got, ==, 43700160 + 7 * 1310720);

  /* The flow tier with one flow per link gives the same step time, up to
   * the flow tier's documented round-up (< 1 ps per transfer here). */
  coll_policy_set_reduce_bw(pol, 0);
  got = run_one(t, NET_TIER_FLOW, pol, ET_COLL_ALL_REDUCE, MiB, r, 8, -1, NULL, NULL, NULL);
  g_assert_cmpint(got, >=, 43700160);
  g_assert_cmpint(got, <=, 43700160 + 14);
  coll_policy_free(pol);
  g_free(r);
  topo_free(t);
}

/* busbw of a ring all-reduce on a uniform ring approaches the link
 * bandwidth: busbw = S/T * 2(p-1)/p with T = 2(p-1)(alpha + S/(pB)), so
 * busbw = B / (1 + alpha p B / S) -> B as S grows.  S = 4 GiB: the
 * latency term alpha p B / S = 500e-9 * 8 * 50e9 / 2^32 = 4.66e-5. */
static void test_busbw_approaches_link(void)
{
  topo *t = load(RING8);
  coll_policy *pol = coll_policy_new_default();
  coll_policy_force(pol, COLL_ALGO_RING);
  int *r = iota(8, 0, 1);
  uint64_t S = UINT64_C(4) << 30;
  coll_info info;
  sim_time_ps T = run_one(t, NET_TIER_ANALYTICAL, pol, ET_COLL_ALL_REDUCE, S, r, 8, -1, NULL, NULL, &info);
  double algbw = (double)info.algbw_bytes / ((double)T / 1e12);
  double busbw = algbw * info.busbw_factor;
  double expect = 50e9 / (1.0 + 500e-9 * 8 * 50e9 / (double)S);
  g_assert_cmpfloat(busbw, <, 50e9);
  g_assert_cmpfloat(fabs(busbw - expect) / expect, <, 1e-9);
  g_assert_cmpfloat(busbw, >, 0.9999 * 50e9);
  /* And a small message is latency-bound: 64 KiB gives well under half. */
  T = run_one(t, NET_TIER_ANALYTICAL, pol, ET_COLL_ALL_REDUCE, 65536, r, 8, -1, NULL, NULL, &info);
  g_assert_cmpfloat((double)info.algbw_bytes / ((double)T / 1e12) * info.busbw_factor, <, 0.5 * 50e9);
  coll_policy_free(pol);
  g_free(r);
  topo_free(t);
}

/* Direct all-gather on a fully connected dimension: one step, every
 * member sends its shard to every other on a dedicated link:
 * alpha + round(shard/B) = 1 us + round(1 MiB / 100 GB/s) = 1,000,000 +
 * 10,485,760 ps.  On the flow tier the same schedule on a switch shares
 * each member's uplink between its 7 flows: alpha_route + round(7 shard/B). */
static void test_direct_allgather(void)
{
  topo *t = load("schema_version: 1\nlibrary: {name: ideal}\n"
                 "dims:\n"
                 "  - {name: fc, kind: fully_connected, size: 8, bandwidth: 100GB/s, latency: 1us}\n");
  coll_policy *pol = coll_policy_new_default();
  coll_policy_force(pol, COLL_ALGO_DIRECT);
  int *r = iota(8, 0, 1);
  coll_info info;
  sim_time_ps got = run_one(t, NET_TIER_ANALYTICAL, pol, ET_COLL_ALL_GATHER, MiB, r, 8, -1, NULL, NULL, &info);
  g_assert_cmpint(got, ==, 1 * US + wisp_transfer_ps(MiB, UINT64_C(100000000000)));
  g_assert_cmpint(got, ==, 11485760);
  g_assert_cmpuint(info.algbw_bytes, ==, 8 * MiB); /* AG: S = n * shard */
  topo_free(t);

  t = load(SWITCH8);
  got = run_one(t, NET_TIER_FLOW, pol, ET_COLL_ALL_GATHER, MiB, r, 8, -1, NULL, NULL, NULL);
  sim_time_ps expect = 2 * 500 * NS + wisp_transfer_ps(7 * MiB, UINT64_C(50000000000));
  g_assert_cmpint(got, >=, expect);
  g_assert_cmpint(got, <=, expect + 8);
  coll_policy_free(pol);
  g_free(r);
  topo_free(t);
}

/* Recursive halving-doubling on a switch (alpha = 2 * 500 ns).
 * Power of two, p = 8: 2 * sum_{s=1..3} (alpha + round(S/2^s / B)) =
 * 2 * (3,000,000 + 10,485,760 + 5,242,880 + 2,621,440) = 42,700,160 ps.
 * p = 6 (P = 4, 2 extras): fold and unfold each alpha + round(S/B) =
 * 1,000,000 + 20,971,520, core 2 * (2 alpha + round(S/2B) + round(S/4B)):
 * 43,943,040 + 35,457,280 = 79,400,320 ps. */
static void test_halving_doubling(void)
{
  topo *t = load(SWITCH8);
  coll_policy *pol = coll_policy_new_default();
  coll_policy_force(pol, COLL_ALGO_HALVING_DOUBLING);
  const wisp_bw_Bps B = UINT64_C(50000000000);
  const sim_time_ps a = 1000 * NS;
  int *r = iota(8, 0, 1);
  sim_time_ps got = run_one(t, NET_TIER_ANALYTICAL, pol, ET_COLL_ALL_REDUCE, MiB, r, 8, -1, NULL, NULL, NULL);
  g_assert_cmpint(got, ==, 2 * (3 * a + wisp_transfer_ps(MiB / 2, B) + wisp_transfer_ps(MiB / 4, B) +
                                wisp_transfer_ps(MiB / 8, B)));
  g_assert_cmpint(got, ==, 42700160);
  got = run_one(t, NET_TIER_ANALYTICAL, pol, ET_COLL_ALL_REDUCE, MiB, r, 6, -1, NULL, NULL, NULL);
  g_assert_cmpint(got, ==, 2 * (a + wisp_transfer_ps(MiB, B)) +
                               2 * (2 * a + wisp_transfer_ps(MiB / 2, B) + wisp_transfer_ps(MiB / 4, B)));
  g_assert_cmpint(got, ==, 79400320);
  coll_policy_free(pol);
  g_free(r);
  topo_free(t);
}

/* Double binary tree all-reduce, p = 7: two trees of height
 * floor(log2 7) = 2, each carrying S/2 = 524288 B (D = round(S/2 / B) =
 * 10,485,760 ps at 50 GB/s), reduce up then broadcast down.
 * On a fully connected dimension (50 GB/s, 1 us) every pair has its own
 * link, so no two transfers share one:
 *   all-reduce 2 * 2 * (alpha + D) = 4 * (1,000,000 + 10,485,760);
 *   broadcast from root 3: 2 * (alpha + D).
 * On the switch (alpha = 2 x 500 ns) the trees share ports.  All-reduce:
 * an interior node receives its two children's pieces through its down
 * port (>= 2D), the root then receives a tree's two pieces (>= 2D more),
 * sends them through its up port (>= 2D) and an interior node forwards its
 * piece to its two children (>= 2D): >= 4 alpha + 8D = 87,886,080 ps in
 * both tiers (the capacity-free time was 4 (alpha + D)).  Broadcast: the
 * root's up port sends 4 pieces (>= 4D), the interior node that gets the
 * last one forwards it twice (>= 2D): >= 2 alpha + 6D = 64,914,560 ps. */
static void test_double_binary_tree(void)
{
  const wisp_bw_Bps B = UINT64_C(50000000000);
  const sim_time_ps D = wisp_transfer_ps(MiB / 2, B);
  topo *t = load("schema_version: 1\nlibrary: {name: ideal}\n"
                 "dims:\n"
                 "  - {name: fc, kind: fully_connected, size: 8, bandwidth: 50GB/s, latency: 1us}\n");
  coll_policy *pol = coll_policy_new_default();
  coll_policy_force(pol, COLL_ALGO_DOUBLE_BINARY_TREE);
  int *r = iota(7, 0, 1);
  coll_info info;
  sim_time_ps got = run_one(t, NET_TIER_ANALYTICAL, pol, ET_COLL_ALL_REDUCE, MiB, r, 7, -1, NULL, NULL, &info);
  g_assert_cmpint(got, ==, 4 * (1000 * NS + D));
  g_assert_cmpint(got, ==, 45943040);
  g_assert_cmpint(info.algo, ==, COLL_ALGO_DOUBLE_BINARY_TREE);
  got = run_one(t, NET_TIER_ANALYTICAL, pol, ET_COLL_BROADCAST, MiB, r, 7, 3, NULL, NULL, NULL);
  g_assert_cmpint(got, ==, 2 * (1000 * NS + D));
  topo_free(t);

  t = load(SWITCH8);
  const sim_time_ps ar_bound = 4 * 1000 * NS + 8 * D, bc_bound = 2 * 1000 * NS + 6 * D;
  g_assert_cmpint(ar_bound, ==, 87886080);
  g_assert_cmpint(bc_bound, ==, 64914560);
  for (int tier = 0; tier < 2; tier++) {
    got = run_one(t, (net_tier)tier, pol, ET_COLL_ALL_REDUCE, MiB, r, 7, -1, NULL, NULL, NULL);
    g_test_message("double binary tree all-reduce, switch, %s: bound %" G_GINT64_FORMAT " ps, wisp %" G_GINT64_FORMAT
                   " ps", net_tier_name((net_tier)tier), ar_bound, got);
    g_assert_cmpint(got, >=, ar_bound);
    got = run_one(t, (net_tier)tier, pol, ET_COLL_BROADCAST, MiB, r, 7, 3, NULL, NULL, NULL);
    g_test_message("double binary tree broadcast, switch, %s: bound %" G_GINT64_FORMAT " ps, wisp %" G_GINT64_FORMAT
                   " ps", net_tier_name((net_tier)tier), bc_bound, got);
    g_assert_cmpint(got, >=, bc_bound);
  }
  coll_policy_free(pol);
  g_free(r);
  topo_free(t);
}

/* In-switch reduction (NVLS): one step in which every member's uplink and
 * downlink carry S (1 + 1/p) bytes: alpha + round((S + S/p)/B) =
 * 1,000,000 + 23,592,960 ps.  Its busbw, 2(p-1)/p * S / T, exceeds the
 * link rate, as nccl-tests reports for NVLS.  Allowed on a switch
 * dimension only: on a ring the request falls back to the tuner. */
static void test_nvls(void)
{
  topo *t = load(SWITCH8);
  coll_policy *pol = coll_policy_new_default();
  coll_policy_force(pol, COLL_ALGO_NVLS);
  int *r = iota(8, 0, 1);
  coll_info info;
  sim_time_ps got = run_one(t, NET_TIER_ANALYTICAL, pol, ET_COLL_ALL_REDUCE, MiB, r, 8, -1, NULL, NULL, &info);
  g_assert_cmpint(got, ==, 1000 * NS + wisp_transfer_ps(MiB + MiB / 8, UINT64_C(50000000000)));
  g_assert_cmpint(info.algo, ==, COLL_ALGO_NVLS);
  g_assert_cmpfloat((double)MiB / ((double)got / 1e12) * info.busbw_factor, >, 50e9);
  topo_free(t);
  t = load(RING8);
  run_one(t, NET_TIER_ANALYTICAL, pol, ET_COLL_ALL_REDUCE, MiB, r, 8, -1, NULL, NULL, &info);
  g_assert_cmpint(info.algo, ==, COLL_ALGO_RING_BIDIR); /* tuner's choice on a bidirectional ring */
  coll_policy_free(pol);
  g_free(r);
  topo_free(t);
}

static const char *TWO_TIER =
  "schema_version: 1\nlibrary: {name: ideal}\n"
  "dims:\n"
  "  - {name: node, kind: fully_connected, size: 4, bandwidth: 100GB/s, latency: 1us}\n"
  "  - {name: net, kind: switch, size: 4, bandwidth: 25GB/s, latency: 2us}\n";

/* Hierarchical two-tier all-reduce on 8 ranks = 4 (node) x 2 (net):
 * reduce-scatter in the node, all-reduce of S/4 across nodes, all-gather
 * in the node.  Auto picks direct on both (fully connected; switch with
 * q = 2).  alpha0 = 1 us, alpha1 = 2 * 2 us:
 *   RS  alpha0 + round(S/4 / 100 GB/s)       = 1,000,000 + 2,621,440
 *   AR  2 (alpha1 + round(S/8 / 25 GB/s))    = 2 (4,000,000 + 5,242,880)
 *   AG  alpha0 + round(S/4 / 100 GB/s)       = 1,000,000 + 2,621,440
 *   total 25,728,640 ps.
 * With "ring,direct" (ring inside the node): RS and AG take 3 steps each. */
static void test_hierarchical(void)
{
  topo *t = load(TWO_TIER);
  const wisp_bw_Bps B0 = UINT64_C(100000000000), B1 = UINT64_C(25000000000);
  const sim_time_ps a0 = 1 * US, a1 = 4 * US;
  int *r = iota(8, 0, 1);
  coll_info info;
  sim_time_ps got = run_one(t, NET_TIER_ANALYTICAL, NULL, ET_COLL_ALL_REDUCE, MiB, r, 8, -1, NULL, NULL, &info);
  sim_time_ps in_node = a0 + wisp_transfer_ps(MiB / 4, B0);
  sim_time_ps across = 2 * (a1 + wisp_transfer_ps(MiB / 8, B1));
  g_assert_cmpint(got, ==, in_node + across + in_node);
  g_assert_cmpint(got, ==, 25728640);
  g_assert_cmpint(info.algo, ==, COLL_ALGO_HIERARCHICAL);
  g_assert_cmpstr(info.detail, ==, "reduce_scatter:direct@node > all_reduce:direct@net > all_gather:direct@node");
  topo_free(t);

  char *yaml = g_strconcat(TWO_TIER, "collectives: {all_reduce: \"ring,direct\"}\n", NULL);
  t = load(yaml);
  g_free(yaml);
  GError *err = NULL;
  coll_policy *pol = coll_policy_new_from_topo(t, &err);
  g_assert_no_error(err);
  got = run_one(t, NET_TIER_ANALYTICAL, pol, ET_COLL_ALL_REDUCE, MiB, r, 8, -1, NULL, NULL, &info);
  g_assert_cmpint(got, ==, 3 * in_node + across + 3 * in_node);
  g_assert_cmpstr(info.detail, ==, "reduce_scatter:ring@node > all_reduce:direct@net > all_gather:ring@node");

  /* Pipelining across dimensions with 4 chunks.  Every member runs three
   * phases per chunk: P0 = ring RS in the node (3 steps), P1 = direct AR
   * across nodes (2 steps), P2 = ring AG in the node (3 steps), each on
   * S/4.  On each dimension one (phase, chunk) item runs at a time, in
   * (phase, chunk) order: the node dimension runs P0 of chunks 0..3, then
   * P2 of chunks 0..3.  The group is symmetric, so peers' messages arrive
   * when the member is ready, and F(c, ph) = max(F(c, ph-1), F(previous
   * item on ph's dimension)) + T_ph with
   *   T0 = T2 = 3 (alpha0 + round(S/16 / B0)),  S = 64 MiB,
   *   T1 = 2 (alpha1 + round(S/32 / B1))  (AR on S/16: pieces of S/32). */
  const uint64_t S = 64 * MiB; /* large enough for pipelining to pay */
  coll_policy_set_chunks(pol, 1);
  got = run_one(t, NET_TIER_ANALYTICAL, pol, ET_COLL_ALL_REDUCE, S, r, 8, -1, NULL, NULL, NULL);
  g_assert_cmpint(got, ==, 6 * (a0 + wisp_transfer_ps(S / 4, B0)) + 2 * (a1 + wisp_transfer_ps(S / 8, B1)));
  coll_policy_set_chunks(pol, 4);
  sim_time_ps chunked = run_one(t, NET_TIER_ANALYTICAL, pol, ET_COLL_ALL_REDUCE, S, r, 8, -1, NULL, NULL, NULL);
  sim_time_ps T[3] = { 3 * (a0 + wisp_transfer_ps(S / 16, B0)), 2 * (a1 + wisp_transfer_ps(S / 32, B1)),
                       3 * (a0 + wisp_transfer_ps(S / 16, B0)) };
  sim_time_ps F[4][3];
  for (int c = 0; c < 4; c++) {
    F[c][0] = (c > 0 ? F[c - 1][0] : 0) + T[0];
    F[c][1] = MAX(F[c][0], c > 0 ? F[c - 1][1] : 0) + T[1];
  }
  for (int c = 0; c < 4; c++)
    F[c][2] = MAX(F[c][1], c > 0 ? F[c - 1][2] : F[3][0]) + T[2];
  g_assert_cmpint(chunked, ==, F[3][2]);
  g_assert_cmpint(chunked, <, got); /* pipelining pays off here */
  coll_policy_free(pol);
  g_free(r);
  topo_free(t);
}

/* A group strided across nodes pays the scale-out links; one inside a node
 * does not (16 ranks, node = 4 fully connected at 100 GB/s, 4 nodes on a
 * 25 GB/s switch).  The tuner picks direct in the fully connected node and
 * halving-doubling on the switch (analytical tier, 256 KiB pieces):
 *   contiguous {0,1,2,3}: 2 (1 us + round(S/4 / 100 GB/s)) = 2 * 3,621,440
 *   strided {0,4,8,12}:   2 (2 * 4 us + round(S/2 / 25 GB/s) + round(S/4 / 25 GB/s))
 *                         = 2 * (8,000,000 + 20,971,520 + 10,485,760) */
static void test_strided_vs_contiguous(void)
{
  topo *t = load(TWO_TIER);
  int *contig = iota(4, 0, 1), *strided = iota(4, 0, 4);
  coll_info ic, is;
  sim_time_ps tc = run_one(t, NET_TIER_ANALYTICAL, NULL, ET_COLL_ALL_REDUCE, MiB, contig, 4, -1, NULL, NULL, &ic);
  sim_time_ps ts = run_one(t, NET_TIER_ANALYTICAL, NULL, ET_COLL_ALL_REDUCE, MiB, strided, 4, -1, NULL, NULL, &is);
  g_assert_cmpint(tc, ==, 2 * (1 * US + wisp_transfer_ps(MiB / 4, UINT64_C(100000000000))));
  g_assert_cmpint(ts, ==, 2 * (2 * 4 * US + wisp_transfer_ps(MiB / 2, UINT64_C(25000000000)) +
                                wisp_transfer_ps(MiB / 4, UINT64_C(25000000000))));
  g_assert_cmpint(tc, <, ts);
  g_assert_cmpstr(ic.detail, ==, "direct@node");
  g_assert_cmpstr(is.detail, ==, "halving_doubling@net");
  /* The same holds for a forced ring (ASTRA-sim's A9 gives identical
   * times to the strided group's scale-up cost; wisp does not). */
  coll_policy *pol = coll_policy_new_default();
  coll_policy_force(pol, COLL_ALGO_RING);
  tc = run_one(t, NET_TIER_ANALYTICAL, pol, ET_COLL_ALL_REDUCE, MiB, contig, 4, -1, NULL, NULL, NULL);
  ts = run_one(t, NET_TIER_ANALYTICAL, pol, ET_COLL_ALL_REDUCE, MiB, strided, 4, -1, NULL, NULL, NULL);
  g_assert_cmpint(tc, ==, 6 * (1 * US + wisp_transfer_ps(MiB / 4, UINT64_C(100000000000))));
  g_assert_cmpint(ts, ==, 6 * (4 * US + wisp_transfer_ps(MiB / 4, UINT64_C(25000000000))));
  /* A group that is not a sub-grid ({0,1,2,5}: 3 x 2 coordinates for 4
   * members) runs one flat ring over its real routes: every step waits for
   * the slowest hop, so it is at least as slow as the strided ring. */
  int odd[4] = { 0, 1, 2, 5 };
  coll_info io;
  sim_time_ps to = run_one(t, NET_TIER_ANALYTICAL, pol, ET_COLL_ALL_REDUCE, MiB, odd, 4, -1, NULL, NULL, &io);
  g_assert_cmpstr(io.detail, ==, "ring@flat");
  g_assert_cmpint(to, >=, ts);
  coll_policy_free(pol);
  g_free(contig);
  g_free(strided);
  topo_free(t);
}

/* Per-member completion: a ring broadcast (a chain from the root) ends at
 * a different time for each member.  Root 2 on the 8-ring, hop h = alpha +
 * round(S/B): the root finishes when its send arrived (h), the member at
 * distance u in 1..6 when its forward arrived ((u+1) h), the last member
 * (u = 7) when it received (7 h). */
static void test_completion_order(void)
{
  topo *t = load(RING8);
  coll_policy *pol = coll_policy_new_default();
  coll_policy_force(pol, COLL_ALGO_RING);
  int *r = iota(8, 0, 1);
  sim_time_ps per[8];
  run_one(t, NET_TIER_ANALYTICAL, pol, ET_COLL_BROADCAST, MiB, r, 8, 2, NULL, per, NULL);
  sim_time_ps h = 500 * NS + wisp_transfer_ps(MiB, UINT64_C(50000000000));
  for (int m = 0; m < 8; m++) {
    int u = (m - 2 + 8) % 8;
    sim_time_ps expect = u == 0 ? h : (u == 7 ? 7 * h : (u + 1) * h);
    g_assert_cmpint(per[m], ==, expect);
  }
  coll_policy_free(pol);
  g_free(r);
  topo_free(t);
}

/* Every type with every algorithm defined for it, on three topologies and
 * a few group shapes: done() once per member (checked in run_one), and a
 * time at least one route latency. */
static void test_all_types_complete(void)
{
  const char *yamls[] = { RING8, SWITCH8, TWO_TIER };
  const et_coll_type types[] = { ET_COLL_ALL_REDUCE, ET_COLL_REDUCE, ET_COLL_ALL_GATHER, ET_COLL_GATHER,
                                 ET_COLL_SCATTER, ET_COLL_BROADCAST, ET_COLL_ALL_TO_ALL,
                                 ET_COLL_REDUCE_SCATTER, ET_COLL_BARRIER, ET_COLL_ALL_TO_ALLV };
  for (size_t y = 0; y < G_N_ELEMENTS(yamls); y++) {
    topo *t = load(yamls[y]);
    int groups[3][8] = { { 0, 1, 2, 3, 4, 5, 6, 7 }, { 5, 3, 1 }, { 7, 0 } };
    int sizes[3] = { 8, 3, 2 };
    for (int g = 0; g < 3; g++) {
      int n = sizes[g];
      uint64_t *splits = g_new(uint64_t, n * n);
      for (int i = 0; i < n * n; i++)
        splits[i] = (uint64_t)(i % 3) * 4096;
      for (size_t k = 0; k < G_N_ELEMENTS(types); k++) {
        coll_prim prim;
        g_assert_true(coll_prim_from_type(types[k], &prim));
        for (int a = COLL_ALGO_AUTO; a < COLL_ALGO_COUNT; a++) {
          if (a != COLL_ALGO_AUTO && a != COLL_ALGO_HIERARCHICAL && !coll_algo_supports((coll_algo)a, prim))
            continue;
          coll_policy *pol = coll_policy_new_default();
          coll_policy_force(pol, (coll_algo)a);
          coll_policy_set_chunks(pol, 3);
          coll_info info;
          g_test_message("topology %zu group %d %s algo %s", y, g, coll_prim_name(prim), coll_algo_name((coll_algo)a));
          sim_time_ps got = run_one(t, NET_TIER_ANALYTICAL, pol, types[k], 100000, groups[g], n,
                                    groups[g][n - 1], types[k] == ET_COLL_ALL_TO_ALLV ? splits : NULL, NULL,
                                    &info);
          g_assert_cmpint(got, >=, 500 * NS);
          g_assert_cmpint(info.algo, !=, COLL_ALGO_AUTO);
          g_test_message("  flow tier");
          got = run_one(t, NET_TIER_FLOW, pol, types[k], 100000, groups[g], n, groups[g][n - 1],
                        types[k] == ET_COLL_ALL_TO_ALLV ? splits : NULL, NULL, NULL);
          g_assert_cmpint(got, >=, 500 * NS);
          coll_policy_free(pol);
        }
      }
      g_free(splits);
    }
    /* A single member completes at once without transfers. */
    int one = 3;
    g_assert_cmpint(run_one(t, NET_TIER_ANALYTICAL, NULL, ET_COLL_ALL_REDUCE, MiB, &one, 1, -1, NULL, NULL, NULL),
                    ==, 0);
    topo_free(t);
  }
}

/* Two collectives on one library at once, and coll_measure. */
static void test_concurrent_and_measure(void)
{
  topo *t = load(RING8);
  coll_policy *pol = coll_policy_new_default();
  coll_policy_force(pol, COLL_ALGO_RING);
  sim_engine *sim = sim_engine_new(TRUE);
  net *nt = net_new(sim, t, NET_TIER_ANALYTICAL);
  coll_rt *c = coll_rt_new(sim, nt, pol);
  int a[4] = { 0, 1, 2, 3 }, b[4] = { 4, 5, 6, 7 };
  done_log la = { g_new0(sim_time_ps, 4), g_new0(int, 4), 4 }, lb = { g_new0(sim_time_ps, 4), g_new0(int, 4), 4 };
  coll_desc da = { .type = ET_COLL_ALL_REDUCE, .bytes = MiB, .ranks = a, .n_ranks = 4, .root = -1 };
  coll_desc db = da;
  db.ranks = b;
  coll_start(c, &da, on_done, &la, 77, NULL);
  coll_start(c, &db, on_done, &lb, 77, NULL);
  sim_run(sim, SIM_TIME_MAX);
  /* {0,1,2,3} is a path on the ring: the 3 -> 0 hop takes 3 links
   * (alpha 1.5 us); every ring step waits for it. */
  sim_time_ps step = 1500 * NS + wisp_transfer_ps(MiB / 4, UINT64_C(50000000000));
  for (int i = 0; i < 4; i++) {
    g_assert_cmpint(la.calls[i], ==, 1);
    g_assert_cmpint(lb.calls[i], ==, 1);
    g_assert_cmpint(MAX(la.t[i], lb.t[i]), <=, 6 * step);
  }
  coll_rt_free(c);
  net_free(nt);
  sim_engine_free(sim);
  g_free(la.t); g_free(la.calls); g_free(lb.t); g_free(lb.calls);

  sim_time_ps tm;
  coll_info info;
  GError *err = NULL;
  int r8[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
  coll_desc d = { .type = ET_COLL_ALL_REDUCE, .bytes = MiB, .ranks = r8, .n_ranks = 8, .root = -1 };
  g_assert_true(coll_measure(t, NET_TIER_ANALYTICAL, pol, &d, &tm, &info, &err));
  g_assert_no_error(err);
  g_assert_cmpint(tm, ==, 43700160);
  coll_policy_free(pol);
  topo_free(t);
}

/* Bad descriptors and bad config settings are reported, not crashed on. */
static void test_errors(void)
{
  topo *t = load(RING8);
  GError *err = NULL;
  int bad[2] = { 0, 9 }, dup[2] = { 1, 1 }, ok[2] = { 0, 1 };
  coll_desc d = { .type = ET_COLL_ALL_REDUCE, .bytes = 1, .ranks = bad, .n_ranks = 2, .root = -1 };
  g_assert_false(coll_desc_check(t, &d, &err));
  g_assert_error(err, WISP_ERROR, WISP_ERROR_INVALID);
  g_assert_nonnull(strstr(err->message, "rank 9"));
  g_clear_error(&err);
  d.ranks = dup;
  g_assert_false(coll_desc_check(t, &d, &err));
  g_assert_nonnull(strstr(err->message, "twice"));
  g_clear_error(&err);
  d.ranks = ok;
  d.type = ET_COLL_BROADCAST;
  d.root = 5;
  g_assert_false(coll_desc_check(t, &d, &err));
  g_assert_nonnull(strstr(err->message, "root 5"));
  g_clear_error(&err);
  d.type = ET_COLL_ALL_TO_ALLV;
  g_assert_false(coll_desc_check(t, &d, &err));
  g_assert_nonnull(strstr(err->message, "per-peer"));
  g_clear_error(&err);
  d.type = ET_COLL_NONE;
  g_assert_false(coll_desc_check(t, &d, &err));
  g_assert_error(err, WISP_ERROR, WISP_ERROR_UNSUPPORTED);
  g_clear_error(&err);
  d.type = ET_COLL_ALL_REDUCE;
  d.n_ranks = 0;
  g_assert_false(coll_desc_check(t, &d, &err));
  g_clear_error(&err);
  topo_free(t);

  static const struct { const char *setting; const char *needle; } cases[] = {
    { "collectives: {all_reduce: bogus}\n", "unknown algorithm 'bogus'" },
    { "collectives: {all_gather: double_binary_tree}\n", "not defined for all_gather" },
    { "collectives: {all_reduce: \"ring,,direct\"}\n", "unknown algorithm ''" },
    { "collectives: {chunks: 0}\n", "collectives.chunks" },
    { "collectives: {chunks: 4x}\n", "collectives.chunks" },
    { "collectives: {reduce_bw: fast}\n", "collectives.reduce_bw" },
    { "collectives: {in_switch_reduction: maybe}\n", "in_switch_reduction" },
    { "collectives: {all_reduce: \"ring,ring,ring,ring,ring,ring,ring,ring,ring\"}\n", "at most one per" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    char *yaml = g_strconcat(RING8, cases[i].setting, NULL);
    t = load(yaml);
    g_free(yaml);
    coll_policy *p = coll_policy_new_from_topo(t, &err);
    g_assert_null(p);
    g_assert_error(err, WISP_ERROR, err->code);
    if (strstr(err->message, cases[i].needle) == NULL)
      g_error("case %zu: '%s' lacks '%s'", i, err->message, cases[i].needle);
    /* The message names the file and the line of the setting (line 5: the config starts with schema_version and library). */
    g_assert_nonnull(strstr(err->message, "test.yaml:5"));
    g_clear_error(&err);
    topo_free(t);
  }
  /* Valid settings are taken. */
  char *yaml = g_strconcat(RING8, "collectives: {all_reduce: halvingDoubling, chunks: 3, reduce_bw: 2000GB/s, "
                           "in_switch_reduction: true}\n", NULL);
  t = load(yaml);
  g_free(yaml);
  coll_policy *p = coll_policy_new_from_topo(t, &err);
  g_assert_no_error(err);
  g_assert_cmpint(p->chunks, ==, 3);
  g_assert_cmpuint(p->reduce_bw, ==, UINT64_C(2000000000000));
  g_assert_true(p->in_switch_reduction);
  g_assert_cmpint(p->algo[COLL_PRIM_ALL_REDUCE][0], ==, COLL_ALGO_HALVING_DOUBLING);
  coll_policy_free(p);
  topo_free(t);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/coll/ring-allreduce", test_ring_allreduce);
  g_test_add_func("/coll/busbw-approaches-link", test_busbw_approaches_link);
  g_test_add_func("/coll/direct-allgather", test_direct_allgather);
  g_test_add_func("/coll/halving-doubling", test_halving_doubling);
  g_test_add_func("/coll/double-binary-tree", test_double_binary_tree);
  g_test_add_func("/coll/nvls", test_nvls);
  g_test_add_func("/coll/hierarchical", test_hierarchical);
  g_test_add_func("/coll/strided-vs-contiguous", test_strided_vs_contiguous);
  g_test_add_func("/coll/completion-order", test_completion_order);
  g_test_add_func("/coll/all-types", test_all_types_complete);
  g_test_add_func("/coll/concurrent-and-measure", test_concurrent_and_measure);
  g_test_add_func("/coll/errors", test_errors);
  return g_test_run();
}
