/* test_twohop.c: DeepEP's internode all-to-all as two hops
 * (collectives/coll_twohop.c, doc/kineto.md "Two-hop MoE traffic") against
 * closed forms, on both fidelity tiers; the frontend's marking
 * (kt_commreg_two_hop) and its Chakra round trip.
 *
 * The case: 2 nodes x 4 GPUs, switch tiers.  Scale-up (nvlink) B_up =
 * 200 GB/s, alpha_up = the route latency between two GPUs of a node;
 * scale-out (ib) B_out = 50 GB/s, alpha_out = the route latency between
 * same-index GPUs of the two nodes (both taken from topo_route_cost and
 * checked against the YAML: a switch route crosses two links).  Balanced
 * splits: every member sends s = 1 MiB to every other member.
 *
 * Dispatch, per source a: 3 direct scale-up sends of s (its node), and one
 * hop-1 send of rho x 4s to its relay (same index, other node); the relay
 * forwards s to each of the 3 other GPUs of its node.  Every GPU's ib
 * uplink carries one hop-1 transfer; every GPU's nvlink uplink carries 3s
 * direct (from t = 0) and, after hop 1, 3s forwarded.  With 4 rho s /
 * B_out > 3s / B_up the direct traffic is done before hop 1 arrives, so
 *   T_dispatch = alpha_out + 4 rho s / B_out + alpha_up + 3 s / B_up.
 * Combine, per owner b: the 3 other GPUs of the far node send s each to
 * the relay (far node, index of b), over nvlink, together with the direct
 * intra-node combine traffic (3s per uplink): each nvlink uplink and
 * downlink carries 6s from t = 0; then the relay sends rho x 4s over ib:
 *   T_combine = alpha_up + 6 s / B_up + alpha_out + 4 rho s / B_out.
 */
#include "config.h"

#include <string.h>

#include "collectives/coll.h"
#include "chakra/et_io.h"
#include "frontends/kineto_commreg.h"
#include "test_util.h"

#define MiB (UINT64_C(1) << 20)
#define NS ((sim_time_ps)1000)

static const char *yaml_of(const char *up, const char *out)
{
  static char buf[512];
  g_snprintf(buf, sizeof buf,
             "schema_version: 1\nname: twohop\nmodel: analytical\n"
             "dims:\n  - {name: nvlink, kind: switch, size: 4, bandwidth: %s, latency: 500ns}\n"
             "  - {name: ib, kind: switch, size: 2, bandwidth: %s, latency: 1us}\n",
             up, out);
  return buf;
}

static topo *load(const char *yaml)
{
  GError *err = NULL;
  topo *t = topo_load_string(yaml, "twohop.yaml", &err);
  g_assert_no_error(err);
  g_assert_nonnull(t);
  return t;
}

typedef struct {
  sim_time_ps t[8];
  int calls[8];
} done_log;

static void on_done(sim_engine *sim, void *ctx, uint64_t cookie, int member)
{
  done_log *log = ctx;
  g_assert_cmpuint(cookie, ==, 5);
  log->t[member] = sim_now(sim);
  log->calls[member]++;
}

/* Bytes carried by the links of one tier (dim), summed over links. */
static uint64_t tier_bytes(const topo *t, const net *nt, int dim)
{
  uint64_t s = 0;
  for (uint32_t l = 0; l < topo_n_links(t); l++)
    if (topo_get_link(t, l)->tier == dim)
      s += net_link_bytes(nt, l);
  return s;
}

/* Runs one 8-member balanced all_to_allv (s per pair) with the given
 * two-hop mode; returns the last member's finish time and each tier's
 * link bytes; checks that each member finished exactly once. */
static sim_time_ps run_chunked(const topo *t, net_tier tier, int mode, uint32_t ppm, uint64_t s, int chunks,
                               uint64_t *up_bytes, uint64_t *out_bytes, coll_info *info)
{
  int ranks[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
  uint64_t splits[64];
  for (int a = 0; a < 8; a++)
    for (int b = 0; b < 8; b++)
      splits[a * 8 + b] = a == b ? 0 : s;
  sim_engine *sim = sim_engine_new(TRUE);
  net *nt = net_new(sim, t, tier);
  coll_policy *pol = coll_policy_new_default();
  coll_policy_set_chunks(pol, chunks);
  coll_rt *c = coll_rt_new(sim, nt, pol);
  coll_policy_free(pol);
  coll_desc d = { .type = ET_COLL_ALL_TO_ALLV, .bytes = 7 * s, .ranks = ranks, .n_ranks = 8, .root = -1,
                  .splits = splits, .two_hop = mode, .two_hop_ppm = ppm };
  GError *err = NULL;
  g_assert_true(coll_desc_check(t, &d, &err));
  done_log log;
  memset(&log, 0, sizeof log);
  coll_start(c, &d, on_done, &log, 5, info);
  sim_run(sim, SIM_TIME_MAX);
  sim_time_ps end = 0;
  for (int i = 0; i < 8; i++) {
    g_assert_cmpint(log.calls[i], ==, 1);
    end = MAX(end, log.t[i]);
  }
  if (up_bytes)
    *up_bytes = tier_bytes(t, nt, 0);
  if (out_bytes)
    *out_bytes = tier_bytes(t, nt, 1);
  coll_rt_free(c);
  net_free(nt);
  sim_engine_free(sim);
  return end;
}

static sim_time_ps run(const topo *t, net_tier tier, int mode, uint32_t ppm, uint64_t s, uint64_t *up_bytes,
                       uint64_t *out_bytes, coll_info *info)
{
  return run_chunked(t, tier, mode, ppm, s, 1, up_bytes, out_bytes, info);
}

/* Route latencies: a switch route crosses the source's uplink and the
 * destination's downlink, each with the dimension's latency. */
static void alphas(const topo *t, sim_time_ps *a_up, sim_time_ps *a_out)
{
  wisp_bw_Bps bw;
  topo_route_cost(t, 0, 1, a_up, &bw);
  topo_route_cost(t, 0, 4, a_out, &bw);
  g_assert_cmpint(*a_up, ==, 2 * 500 * NS);
  g_assert_cmpint(*a_out, ==, 2 * 1000 * NS);
}

static sim_time_ps xfer(uint64_t bytes, uint64_t bw_Bps)
{
  return wisp_transfer_ps(bytes, bw_Bps);
}

#define B_UP UINT64_C(200000000000)
#define B_OUT UINT64_C(50000000000)

static sim_time_ps closed_dispatch(sim_time_ps a_up, sim_time_ps a_out, uint64_t s, uint32_t ppm, uint64_t b_up,
                                   uint64_t b_out)
{
  uint64_t hop1 = (4 * s * ppm + 500000) / 1000000;
  return a_out + xfer(hop1, b_out) + a_up + xfer(3 * s, b_up);
}

static sim_time_ps closed_combine(sim_time_ps a_up, sim_time_ps a_out, uint64_t s, uint32_t ppm, uint64_t b_up,
                                  uint64_t b_out)
{
  uint64_t hop2 = (4 * s * ppm + 500000) / 1000000;
  return a_up + xfer(6 * s, b_up) + a_out + xfer(hop2, b_out);
}

/* Allowed difference between a tier and the closed form: the flow tier
 * rounds each rate change to a picosecond per transfer. */
#define SLACK_PS 64

static void check_close(sim_time_ps got, sim_time_ps want, const char *what)
{
  g_test_message("%s: simulated %" G_GINT64_FORMAT " ps, closed form %" G_GINT64_FORMAT " ps", what, (gint64)got,
                 (gint64)want);
  g_assert_cmpint(got, >=, want - SLACK_PS);
  g_assert_cmpint(got, <=, want + SLACK_PS);
}

static void test_closed_form(void)
{
  topo *t = load(yaml_of("200GB/s", "50GB/s"));
  sim_time_ps a_up, a_out;
  alphas(t, &a_up, &a_out);
  uint64_t s = MiB;
  for (int tier = 0; tier < 2; tier++) {
    for (int k = 0; k < 2; k++) {
      uint32_t ppm = k == 0 ? 1000000u : 500000u;
      uint64_t up, out;
      coll_info info;
      sim_time_ps td = run(t, (net_tier)tier, COLL_TWO_HOP_DISPATCH, ppm, s, &up, &out, &info);
      /* Worked out for ppm 1e6: alpha_out 2 us + 4 MiB / 50 GB/s
       * (83.886 us) + alpha_up 1 us + 3 MiB / 200 GB/s (15.729 us)
       * = 102.615 us. */
      check_close(td, closed_dispatch(a_up, a_out, s, ppm, B_UP, B_OUT), "dispatch");
      g_assert_nonnull(strstr(info.detail, "two-hop dispatch"));
      /* Tier bytes: every transfer crosses an uplink and a downlink.
       * Scale-out: 8 hop-1 sends of rho 4s; scale-up: 8 x 3 direct + 8 x 3
       * forwarded sends of s. */
      uint64_t hop1 = (4 * s * ppm + 500000) / 1000000;
      g_assert_cmpuint(out, ==, 2 * 8 * hop1);
      g_assert_cmpuint(up, ==, 2 * 48 * s);
      sim_time_ps tc = run(t, (net_tier)tier, COLL_TWO_HOP_COMBINE, ppm, s, &up, &out, &info);
      check_close(tc, closed_combine(a_up, a_out, s, ppm, B_UP, B_OUT), "combine");
      g_assert_cmpuint(out, ==, 2 * 8 * hop1);
      g_assert_cmpuint(up, ==, 2 * 48 * s);
    }
    /* The flat all-to-all, for contrast: 4s per GPU crosses ib (4
     * transfers of s); nvlink carries the 3 intra-node pairs and, by
     * dimension-order routing (innermost tier first), the 3 cross-node
     * pairs of different local index before their ib hop: 8 x 6 sends. */
    uint64_t up, out;
    run(t, (net_tier)tier, COLL_TWO_HOP_NONE, 0, s, &up, &out, NULL);
    g_assert_cmpuint(out, ==, 2 * 8 * 4 * s);
    g_assert_cmpuint(up, ==, 2 * 8 * 6 * s);
  }
  topo_free(t);
}

/* Doubling scale-out bandwidth shortens hop 1 only (the step falls by half
 * the ib term); doubling scale-up shortens hop 2 only (by half the nvlink
 * term); both tiers. */
static void test_sensitivity(void)
{
  topo *t = load(yaml_of("200GB/s", "50GB/s"));
  topo *t_out = load(yaml_of("200GB/s", "100GB/s"));
  topo *t_up = load(yaml_of("400GB/s", "50GB/s"));
  sim_time_ps a_up, a_out;
  alphas(t, &a_up, &a_out);
  uint64_t s = MiB;
  for (int tier = 0; tier < 2; tier++) {
    net_tier nt = (net_tier)tier;
    sim_time_ps base = run(t, nt, COLL_TWO_HOP_DISPATCH, 1000000u, s, NULL, NULL, NULL);
    sim_time_ps so = run(t_out, nt, COLL_TWO_HOP_DISPATCH, 1000000u, s, NULL, NULL, NULL);
    sim_time_ps su = run(t_up, nt, COLL_TWO_HOP_DISPATCH, 1000000u, s, NULL, NULL, NULL);
    /* Hop 1 = 4s / B_out: 83.886 us -> 41.943 us; hop 2 = 3s / B_up:
     * 15.729 us -> 7.864 us; the other term is unchanged. */
    check_close(base - so, xfer(4 * s, B_OUT) - xfer(4 * s, 2 * B_OUT), "dispatch, 2x scale-out");
    check_close(base - su, xfer(3 * s, B_UP) - xfer(3 * s, 2 * B_UP), "dispatch, 2x scale-up");
    base = run(t, nt, COLL_TWO_HOP_COMBINE, 1000000u, s, NULL, NULL, NULL);
    so = run(t_out, nt, COLL_TWO_HOP_COMBINE, 1000000u, s, NULL, NULL, NULL);
    su = run(t_up, nt, COLL_TWO_HOP_COMBINE, 1000000u, s, NULL, NULL, NULL);
    check_close(base - so, xfer(4 * s, B_OUT) - xfer(4 * s, 2 * B_OUT), "combine, 2x scale-out");
    check_close(base - su, xfer(6 * s, B_UP) - xfer(6 * s, 2 * B_UP), "combine, 2x scale-up");
  }
  topo_free(t);
  topo_free(t_out);
  topo_free(t_up);
}

/* Chunked hops (the policy's chunks, C = 4): dispatch's hop 1 is sent as
 * 4 pieces one after the other, each forwarded as soon as it arrives:
 *   T = C alpha_out + 4 s / B_out + alpha_up + 3 s / (C B_up)
 * (the NVLink forward of a piece, 3.93 us, ends before the next piece
 * arrives 23 us later; the 3 s of direct traffic, 16.7 us, before the
 * first piece): 8 us + 83.886 us + 1 us + 3.932 us = 96.818 us, against
 * 102.615 us unchunked.  Combine: the gather pieces share the NVLink
 * ports with the direct traffic, so only bounds: it cannot beat the
 * scale-out term plus one piece of the gather, and pipelining makes it
 * shorter than the unchunked run. */
static void test_chunks(void)
{
  topo *t = load(yaml_of("200GB/s", "50GB/s"));
  sim_time_ps a_up, a_out;
  alphas(t, &a_up, &a_out);
  uint64_t s = MiB;
  for (int tier = 0; tier < 2; tier++) {
    coll_info info;
    uint64_t up, out;
    sim_time_ps td = run_chunked(t, (net_tier)tier, COLL_TWO_HOP_DISPATCH, 1000000u, s, 4, &up, &out, &info);
    check_close(td, 4 * a_out + xfer(4 * s, B_OUT) + a_up + xfer(3 * s / 4, B_UP), "dispatch, 4 chunks");
    g_assert_nonnull(strstr(info.detail, "4 chunks"));
    g_assert_cmpuint(out, ==, 2 * 8 * 4 * s);
    g_assert_cmpuint(up, ==, 2 * 48 * s);
    sim_time_ps tc = run_chunked(t, (net_tier)tier, COLL_TWO_HOP_COMBINE, 1000000u, s, 4, &up, &out, NULL);
    sim_time_ps tc1 = run(t, (net_tier)tier, COLL_TWO_HOP_COMBINE, 1000000u, s, NULL, NULL, NULL);
    g_test_message("combine, 4 chunks: %" G_GINT64_FORMAT " ps (unchunked %" G_GINT64_FORMAT " ps)", (gint64)tc,
                   (gint64)tc1);
    g_assert_cmpint(tc, <, tc1);
    g_assert_cmpint(tc, >=, a_up + xfer(3 * s / 4, B_UP) + a_out + xfer(4 * s, B_OUT));
    g_assert_cmpuint(out, ==, 2 * 8 * 4 * s);
    g_assert_cmpuint(up, ==, 2 * 48 * s);
  }
  topo_free(t);
}

/* Without node structure (one tier) the two-hop mark falls back to the
 * flat all-to-all: same time and detail as an unmarked run. */
static void test_fallback(void)
{
  topo *t = load("schema_version: 1\nname: one\nmodel: analytical\n"
                 "dims:\n  - {name: nvlink, kind: switch, size: 8, bandwidth: 200GB/s, latency: 500ns}\n");
  coll_info a, b;
  sim_time_ps flat = run(t, NET_TIER_ANALYTICAL, COLL_TWO_HOP_NONE, 0, MiB, NULL, NULL, &a);
  sim_time_ps marked = run(t, NET_TIER_ANALYTICAL, COLL_TWO_HOP_DISPATCH, 1000000u, MiB, NULL, NULL, &b);
  g_assert_cmpint(flat, ==, marked);
  g_assert_cmpstr(a.detail, ==, b.detail);
  g_assert_null(strstr(b.detail, "two-hop"));
  topo_free(t);
}

/* The frontend's marking: DeepEP internode dispatch/combine only, the
 * deduplication ratio min(1, N / k) from the card's count_per_node. */
static void test_marking(void)
{
  fe_workload_card card;
  memset(&card, 0, sizeof card);
  card.top_k = 8;
  card.gpus_per_node = 8;
  const kt_commreg_entry *disp = kt_commreg_lookup("void deep_ep::internode::dispatch<4, 8>(int4*)");
  const kt_commreg_entry *comb = kt_commreg_lookup("void dpsk::ep::internode::combine<8>(int4*)");
  const kt_commreg_entry *ll = kt_commreg_lookup("deep_ep::internode_ll::dispatch<1>");
  const kt_commreg_entry *intra = kt_commreg_lookup("deep_ep::intranode::dispatch<8>");
  g_assert_nonnull(disp);
  g_assert_nonnull(comb);
  uint8_t mode;
  uint32_t ppm;
  const char *why;
  /* EP64 on 8-GPU nodes: N = 8 = k, every node once: no deduplication. */
  g_assert_true(kt_commreg_two_hop(disp, &card, 64, &mode, &ppm, &why));
  g_assert_cmpint(mode, ==, ET_TWO_HOP_DISPATCH);
  g_assert_cmpuint(ppm, ==, 1000000u);
  /* EP32: N = 4 < k = 8: a token's 8 copies cross to each of 4 nodes once,
   * where the flat splits count 2 copies per node: ratio 4 / 8. */
  g_assert_true(kt_commreg_two_hop(comb, &card, 32, &mode, &ppm, &why));
  g_assert_cmpint(mode, ==, ET_TWO_HOP_COMBINE);
  g_assert_cmpuint(ppm, ==, 500000u);
  /* EP48, k = 8: N = 6: ratio 6 / 8. */
  g_assert_true(kt_commreg_two_hop(disp, &card, 48, &mode, &ppm, &why));
  g_assert_cmpuint(ppm, ==, 750000u);
  g_assert_nonnull(strstr(why, "E[nodes] = min(top_k, EP / count_per_node)"));
  /* Without count_per_node: two-hop, no deduplication, said so. */
  card.gpus_per_node = -1;
  g_assert_true(kt_commreg_two_hop(disp, &card, 32, &mode, &ppm, &why));
  g_assert_cmpuint(ppm, ==, 1000000u);
  g_assert_nonnull(strstr(why, "count_per_node"));
  /* Low-latency and intranode kernels stay single-hop. */
  if (ll)
    g_assert_false(kt_commreg_two_hop(ll, &card, 64, &mode, &ppm, &why));
  if (intra)
    g_assert_false(kt_commreg_two_hop(intra, &card, 64, &mode, &ppm, &why));
  g_assert_cmpint(mode, ==, ET_TWO_HOP_NONE);
}

/* The marking survives a Chakra write and read (wisp-only attributes). */
static void test_chakra_round_trip(void)
{
  et_builder *b = et_builder_new("twohop");
  uint32_t n = et_builder_add_node(b, 1, ET_NODE_COMM_COLL, "dispatch", 0, 0);
  uint64_t splits[2] = { 100, 200 };
  et_comm c = { .bytes = 300, .group = ET_GROUP_WORLD, .src = -1, .dst = -1, .tag = -1, .root = -1,
                .coll = ET_COLL_ALL_TO_ALLV, .two_hop = ET_TWO_HOP_COMBINE, .two_hop_ppm = 625000u };
  et_builder_set_comm(b, n, &c, NULL, splits, 2);
  GError *err = NULL;
  et_graph *g = et_builder_finish(b, 0, &err);
  g_assert_no_error(err);
  char *dir = g_dir_make_tmp("twohop-XXXXXX", &err);
  g_assert_no_error(err);
  char *path = g_build_filename(dir, "r.0.et", NULL);
  g_assert_true(et_write_file(g, path, &err));
  g_assert_no_error(err);
  et_graph *h = et_read_file(path, 0, &err);
  g_assert_no_error(err);
  const et_comm *rc = et_node_comm(h, 0);
  g_assert_nonnull(rc);
  g_assert_cmpint(rc->coll, ==, ET_COLL_ALL_TO_ALLV);
  g_assert_cmpint(rc->two_hop, ==, ET_TWO_HOP_COMBINE);
  g_assert_cmpuint(rc->two_hop_ppm, ==, 625000u);
  et_graph_free(g);
  et_graph_free(h);
  test_rm_rf(dir);
  g_free(path);
  g_free(dir);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/twohop/closed_form", test_closed_form);
  g_test_add_func("/twohop/sensitivity", test_sensitivity);
  g_test_add_func("/twohop/chunks", test_chunks);
  g_test_add_func("/twohop/fallback", test_fallback);
  g_test_add_func("/twohop/marking", test_marking);
  g_test_add_func("/twohop/chakra_round_trip", test_chakra_round_trip);
  return g_test_run();
}
