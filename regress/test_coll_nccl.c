/* test_coll_nccl.c: closed-form checks of the NCCL model's mechanisms
 * (collectives/libraries/nccl/, coll_run.c): NCCL's slice and tree chunk sizes,
 * the slice pipeline of a ring broadcast, and nccl-tests' timing loop in
 * coll_measure.  The validation against real runs is test_nccl_tests. */
#include "config.h"

#include <math.h>

#include "collectives/coll.h"
#include "collectives/libraries/nccl/coll_nccl.h"
#include "test_util.h"

/* Slices [nccl] src/enqueue.cc calcCollChunking, src/include/device.h:
 * Simple stepSize = 4 MiB / 8 = 524,288 B; broadcast and reduce slices 1
 * step, ring all-reduce/all-gather/reduce-scatter 2 steps (1 MiB); LL:
 * 512 KiB buffer / 8 steps / 2 (flags) = 32,768 B; LL128: 4,915,200 / 8 =
 * 614,400 B per step, 15 of 16 words data = 576,000 B. */
static void test_slices(void)
{
  uint64_t b = 4u << 20;
  g_assert_cmpuint(coll_nccl_slice_bytes(COLL_NFUNC_BROADCAST, COLL_NALGO_RING, COLL_PROTO_SIMPLE, b), ==, 524288);
  g_assert_cmpuint(coll_nccl_slice_bytes(COLL_NFUNC_REDUCE, COLL_NALGO_RING, COLL_PROTO_SIMPLE, b), ==, 524288);
  g_assert_cmpuint(coll_nccl_slice_bytes(COLL_NFUNC_ALL_REDUCE, COLL_NALGO_RING, COLL_PROTO_SIMPLE, b), ==, 1048576);
  g_assert_cmpuint(coll_nccl_slice_bytes(COLL_NFUNC_ALL_REDUCE, COLL_NALGO_TREE, COLL_PROTO_SIMPLE, b), ==, 524288);
  g_assert_cmpuint(coll_nccl_slice_bytes(COLL_NFUNC_BROADCAST, COLL_NALGO_RING, COLL_PROTO_LL, b), ==, 32768);
  g_assert_cmpuint(coll_nccl_slice_bytes(COLL_NFUNC_BROADCAST, COLL_NALGO_RING, COLL_PROTO_LL128, b), ==, 576000);
  /* NCCL_BUFFSIZE=8 MiB (the AWS p5 runs): 1 MiB steps. */
  g_assert_cmpuint(coll_nccl_slice_bytes(COLL_NFUNC_BROADCAST, COLL_NALGO_RING, COLL_PROTO_SIMPLE, 8u << 20), ==,
                   1048576);
}

/* The tree's Simple chunk (calcCollChunking's loop), 16 channels, depth 4:
 * 1 GiB: 2^30 / (16 x 512 KiB) = 128 chunks per channel >= 4 x 8, kept at
 * 512 KiB.  1 MiB: 2^20 / (16 x c) stays 0 < depth x 8 down to 128 KiB
 * (first loop), < depth x 4 down to 64 KiB, < depth down to 32 KiB.
 * 64 MiB: 64 MiB / (16 x 512 KiB) = 8 < 32, 256 KiB: 16 < 32, 128 KiB:
 * 32, stop; second loop 32 >= 16, third 32 >= 4: 128 KiB.  LL keeps its
 * slice. */
static void test_tree_chunks(void)
{
  uint64_t b = 4u << 20;
  g_assert_cmpuint(coll_nccl_tree_chunk_bytes(COLL_PROTO_SIMPLE, b, 1u << 30, 16, 4), ==, 524288);
  g_assert_cmpuint(coll_nccl_tree_chunk_bytes(COLL_PROTO_SIMPLE, b, 1u << 20, 16, 4), ==, 32768);
  g_assert_cmpuint(coll_nccl_tree_chunk_bytes(COLL_PROTO_SIMPLE, b, 64u << 20, 16, 4), ==, 131072);
  g_assert_cmpuint(coll_nccl_tree_chunk_bytes(COLL_PROTO_LL, b, 1u << 20, 16, 4), ==, 32768);
}

static coll_policy *nccl_policy(const topo *t, int channels, int proto, int gpus_per_thread)
{
  GError *error = NULL;
  coll_policy *pol = coll_policy_new_from_topo(t, &error);
  g_assert_no_error(error);
  coll_library_params lib = *coll_policy_library(pol);
  g_assert_cmpint(lib.kind, ==, COLL_LIBRARY_NCCL);
  lib.channels = channels;
  lib.nccl_proto = proto;
  lib.gpus_per_thread = gpus_per_thread;
  coll_policy_set_library(pol, &lib);
  return pol;
}

/* The ring/Simple broadcast times T(s1) and T(2 s1) of 4 ranks on one 100
 * GB/s switch with `channels` channels, one GPU per process (the plan's
 * choice is checked). */
static void bcast_pair(int channels, uint64_t s1, sim_time_ps *t1, sim_time_ps *t2)
{
  GError *error = NULL;
  topo *t = topo_load_string("schema_version: 1\nmodel: analytical\n"
                             "dims:\n  - {name: nvlink, kind: switch, size: 4, bandwidth: 100GB/s, latency: 500ns}\n"
                             "library: {name: nccl, sm: 90, nvlink_link_bw: 20.6GB/s}\n",
                             "bcast", &error);
  g_assert_no_error(error);
  coll_policy *pol = nccl_policy(t, channels, COLL_PROTO_SIMPLE, 1);
  int ranks[4] = { 0, 1, 2, 3 };
  coll_info info;
  coll_desc d = { .type = ET_COLL_BROADCAST, .bytes = s1, .ranks = ranks, .n_ranks = 4, .root = 0 };
  g_assert_true(coll_measure(t, net_default_tier(t), pol, &d, t1, &info, &error));
  g_assert_cmpint(info.nccl_algo, ==, COLL_NALGO_RING);
  g_assert_cmpint(info.proto, ==, COLL_PROTO_SIMPLE);
  d.bytes = 2 * s1;
  g_assert_true(coll_measure(t, net_default_tier(t), pol, &d, t2, &info, &error));
  g_assert_no_error(error);
  coll_policy_free(pol);
  topo_free(t);
}

/* Ring broadcast, Simple, one channel: pieces of one 512 KiB slice flow
 * along the ring, so doubling S adds S / B (the extra pieces leave the
 * root one behind the other), not (n - 1) S / B as forwarding the whole
 * buffer would.  4 ranks on a 100 GB/s switch; NCCL's NVLink rate equals
 * the link rate (nvlink_link_bw 20.6 GB/s, SM90_NVLINK_BW), so the only
 * efficiency is Simple's 1: S = 64 MiB -> 128 pieces, 128 MiB -> 256
 * pieces; T(2S) - T(S) = 64 MiB / 100 GB/s = 671,088.64 ns, within one
 * picosecond per piece of rounding. */
static void test_broadcast_pipeline(void)
{
  sim_time_ps t1 = 0, t2 = 0;
  bcast_pair(1, 64u << 20, &t1, &t2);
  double expect_ps = 67108864.0 / 100e9 * 1e12; /* 671,088,640 ps */
  g_test_message("T(64 MiB) %.3f us, T(128 MiB) %.3f us, difference %.3f us, expected S/B %.3f us "
                 "(unpipelined: 3 S/B = %.3f us)", t1 / 1e6, t2 / 1e6, (double)(t2 - t1) / 1e6, expect_ps / 1e6,
                 3 * expect_ps / 1e6);
  g_assert_cmpfloat(fabs((double)(t2 - t1) - expect_ps), <=, 256.0);
}

/* Ring broadcast, Simple, 4 channels: NCCL moves one chunk per channel
 * (broadcast.h realChunkSize = min(chunkSize, DIVUP(S, nChannels))), a
 * rank forwards a chunk once it holds all of it, and the channels do not
 * wait for each other, so the 4 chunks follow each other down the chain
 * of 3 hops: T = latency + (4 + 3 - 1) x S / 4 / B.  S = 1 MiB (4 x 256
 * KiB) and 2 MiB (4 x 512 KiB, the slice) have the same pieces and hops,
 * so the pipeline adds 6 x 262,144 B / 100 GB/s = 15,728.64 ns from
 * T(1 MiB) to T(2 MiB) (all channels' chunks as one piece, as before: 3 x
 * 1 MiB / B = 31,457.28 ns).  One GPU per process (-g 1), so the ring's
 * drain (/coll/nccl/ring-drain) adds its last slice, a channel's chunk
 * here, at 20.3 GB/s: 262,144 B more, 12,913.30 ns; 28,641.94 ns in all.
 * Same switch and rates as test_broadcast_pipeline. */
static void test_broadcast_channel_chunks(void)
{
  sim_time_ps t1 = 0, t2 = 0;
  bcast_pair(4, 1u << 20, &t1, &t2);
  double expect_ps = (6.0 * 262144.0 / 100e9 + 262144.0 / 20.3e9) * 1e12; /* 28,641,937 ps */
  g_test_message("T(1 MiB) %.3f us, T(2 MiB) %.3f us, difference %.3f us, expected 6 x S/4/B + drain %.3f us",
                 t1 / 1e6, t2 / 1e6, (double)(t2 - t1) / 1e6, expect_ps / 1e6);
  g_assert_cmpfloat(fabs((double)(t2 - t1) - expect_ps), <=, 64.0);
}

/* nccl-tests' loop: one host thread launching 8 GPUs' kernels (4 us each,
 * the library's launch) takes 32 us per iteration, more than the GPUs'
 * 8-byte all-reduce, so an iteration costs exactly 32 us; with one GPU per
 * thread (4 us) the GPU time (above 4 us: NCCL's base latency alone is
 * 6.6 us) is the iteration. */
static void test_timing_loop(void)
{
  GError *error = NULL;
  topo *t = topo_load_string("schema_version: 1\nmodel: analytical\n"
                             "dims:\n  - {name: nvlink, kind: switch, size: 8, bandwidth: 450GB/s, latency: 500ns}\n"
                             "library: {name: nccl, sm: 90}\n",
                             "loop", &error);
  g_assert_no_error(error);
  int ranks[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
  coll_desc d = { .type = ET_COLL_ALL_REDUCE, .bytes = 8, .ranks = ranks, .n_ranks = 8, .root = -1 };
  coll_policy *pol = nccl_policy(t, 0, COLL_PROTO_AUTO, 8);
  sim_time_ps ps = 0;
  g_assert_true(coll_measure(t, net_default_tier(t), pol, &d, &ps, NULL, &error));
  g_assert_cmpuint(ps, ==, 32 * SIM_PS_PER_US);
  coll_policy_free(pol);
  pol = nccl_policy(t, 0, COLL_PROTO_AUTO, 1);
  g_assert_true(coll_measure(t, net_default_tier(t), pol, &d, &ps, NULL, &error));
  g_assert_no_error(error);
  g_test_message("8-byte all-reduce, one GPU per thread: %.3f us", ps / 1e6);
  g_assert_cmpuint(ps, >, 6600 * SIM_PS_PER_NS);
  g_assert_cmpuint(ps, <, 32 * SIM_PS_PER_US);
  coll_policy_free(pol);
  topo_free(t);
}

/* The latency what-if's sign: 256 ranks on 32 nodes of 8 (the dgx-a100
 * preset's links), all-reduce 24 KiB, which NCCL's tuner runs as tree/LL
 * at every latency below.  NCCL's per-hop figures are the kernels' and
 * proxies' own cost; the wire's latency is what the routes charge, so the
 * time must grow with the network's latency.  Bounds on the growth from
 * 1 us to 2 us: the tree's reduce climbs at least log2(32) = 5 network
 * levels and its broadcast descends 5 (>= 10 hops on the critical path);
 * the plan has 4 tree steps over at most depth 6 (<= 24 hops).  (Before
 * the wire was counted once, the time was 81.9, 65.9, 61.9 and 79.9 us:
 * a latency cut looked like a slow-down.) */
static void test_latency_monotone(void)
{
  const char *lat[4] = { "0ns", "500ns", "1us", "2us" };
  sim_time_ps ps[4];
  int ranks[256];
  for (int i = 0; i < 256; i++)
    ranks[i] = i;
  for (int k = 0; k < 4; k++) {
    GError *error = NULL;
    char *y = g_strdup_printf("schema_version: 1\nmodel: analytical\ndims:\n"
                              "  - {name: nvlink, kind: switch, size: 8, bandwidth: 300GB/s, latency: 500ns}\n"
                              "  - {name: ib, kind: switch, size: 32, bandwidth: 200Gbps, latency: %s}\n"
                              "library: {name: nccl, sm: 80}\n", lat[k]);
    topo *t = topo_load_string(y, "latency", &error);
    g_assert_no_error(error);
    coll_policy *pol = nccl_policy(t, 0, COLL_PROTO_AUTO, 1);
    coll_desc d = { .type = ET_COLL_ALL_REDUCE, .bytes = 24576, .ranks = ranks, .n_ranks = 256, .root = -1 };
    coll_info info;
    g_assert_true(coll_measure(t, net_default_tier(t), pol, &d, &ps[k], &info, &error));
    g_assert_no_error(error);
    g_assert_cmpint(info.nccl_algo, ==, COLL_NALGO_TREE);
    g_assert_cmpint(info.proto, ==, COLL_PROTO_LL);
    g_test_message("network latency %s: all-reduce 24 KiB %.3f us", lat[k], ps[k] / 1e6);
    coll_policy_free(pol);
    topo_free(t);
    g_free(y);
  }
  for (int k = 1; k < 4; k++)
    g_assert_cmpuint(ps[k], >, ps[k - 1]);
  g_assert_cmpuint(ps[3] - ps[2], >=, 10 * SIM_PS_PER_US);
  g_assert_cmpuint(ps[3] - ps[2], <=, 24 * SIM_PS_PER_US);
}

/* Collective d on an H100 switch of `size` GPUs (450 GB/s), protocol
 * proto, with one GPU per process (-g 1) minus with two (-g 2): the FIFO
 * fill or drain, the timing loop's GPU time not depending on -g.  *algo:
 * NCCL's algorithm of the -g 1 run.  O(one simulation). */
static double g1_minus_g2_ps(int size, coll_desc *d, int proto, int *algo)
{
  GError *error = NULL;
  char *yaml = g_strdup_printf("schema_version: 1\nmodel: analytical\n"
                               "dims:\n  - {name: nvlink, kind: switch, size: %d, bandwidth: 450GB/s, "
                               "latency: 500ns}\nlibrary: {name: nccl, sm: 90}\n", size);
  topo *t = topo_load_string(yaml, "fifo", &error);
  g_assert_no_error(error);
  sim_time_ps t1 = 0, t2 = 0;
  coll_info info;
  coll_policy *pol = nccl_policy(t, 0, proto, 1);
  g_assert_true(coll_measure(t, net_default_tier(t), pol, d, &t1, &info, &error));
  *algo = info.nccl_algo;
  coll_policy_free(pol);
  pol = nccl_policy(t, 0, proto, 2);
  g_assert_true(coll_measure(t, net_default_tier(t), pol, d, &t2, NULL, &error));
  g_assert_no_error(error);
  g_test_message("-g 1 %.3f us, -g 2 %.3f us", t1 / 1e6, t2 / 1e6);
  coll_policy_free(pol);
  topo_free(t);
  g_free(yaml);
  return (double)t1 - (double)t2;
}

/* The send/recv FIFO's pipeline fill (coll_nccl_p2p_fill_us): one
 * NCCL_P2P_NVL_CHUNKSIZE step (512 KiB), or the whole part when smaller,
 * at a channel's copy rate (20.3 GB/s).  4 H100 ranks: an 8 MiB send runs
 * on 8 channels (1 MiB parts), so 524,288 B / 20.3 GB/s = 25.8276 us; a
 * 100 KiB send on ceil(100 / 64) = 2 channels of 51,200 B: 2.5222 us;
 * nothing on two nodes.  Simulated: a 32 MiB all-to-all (8 MiB to each
 * peer) between processes (-g 1) takes exactly that fill longer than with
 * one process driving the GPUs (-g 2, NCCL's direct copies), the timing
 * loop's GPU time not depending on -g. */
static void test_p2p_fill(void)
{
  coll_nccl_comm c = { .n_ranks = 4, .n_nodes = 1, .sm = 90, .nvlink = TRUE, .intra_GBps = 450, .link_GBps = 25,
                       .nic_GBps = 0 };
  coll_nccl_model m;
  coll_nccl_model_build(&c, &m);
  g_assert_cmpfloat_with_epsilon(coll_nccl_p2p_fill_us(&m, 8u << 20), 524288.0 / 20.3e3, 1e-9);
  g_assert_cmpfloat_with_epsilon(coll_nccl_p2p_fill_us(&m, 100u << 10), 51200.0 / 20.3e3, 1e-9);
  c.n_nodes = 2;
  c.n_ranks = 8;
  c.nic_GBps = 200;
  coll_nccl_model_build(&c, &m);
  g_assert_cmpfloat(coll_nccl_p2p_fill_us(&m, 8u << 20), ==, 0.0);
  int ranks[4] = { 0, 1, 2, 3 }, algo = -1;
  coll_desc d = { .type = ET_COLL_ALL_TO_ALL, .bytes = 32u << 20, .ranks = ranks, .n_ranks = 4, .root = -1 };
  double delta = g1_minus_g2_ps(4, &d, COLL_PROTO_AUTO, &algo);
  g_assert_cmpint(algo, ==, COLL_NALGO_P2P);
  g_assert_cmpfloat(fabs(delta - 524288.0 / 20.3e9 * 1e12), <=, 2.0);
}

/* The ring's drain (coll_nccl_ring_drain_us): one slice at a channel's
 * copy rate, 20.3 GB/s.  8 H100 ranks, 16 channels, NCCL_BUFFSIZE 4 MiB
 * (step 512 KiB, all-gather chunk 4 steps = 2 MiB, 2 slices per chunk):
 * all-gather of 64 MiB: a channel's step 64 MiB / (8 x 16) = 512 KiB,
 * slice 256 KiB: 262,144 B / 20.3 GB/s = 12.913 us; 16 GiB: the step is
 * the 2 MiB chunk, slice 1 MiB: 51.65 us; broadcast of 64 MiB: the
 * channel's chunk is one 512 KiB step and one slice: 25.83 us; nothing on
 * two nodes.  Simulated: a 64 MiB ring all-gather (Simple) between
 * processes (-g 1) takes exactly the drain longer than with -g 2. */
static void test_ring_drain(void)
{
  coll_nccl_comm c = { .n_ranks = 8, .n_nodes = 1, .sm = 90, .nvlink = TRUE, .intra_GBps = 450, .link_GBps = 25,
                       .nic_GBps = 0 };
  coll_nccl_model m;
  coll_nccl_model_build(&c, &m);
  g_assert_cmpint(m.channels, ==, 16);
  const uint64_t buf = 4u << 20;
  g_assert_cmpfloat_with_epsilon(coll_nccl_ring_drain_us(&m, COLL_NFUNC_ALL_GATHER, 64u << 20, buf),
                                 262144.0 / 20.3e3, 1e-9);
  g_assert_cmpfloat_with_epsilon(coll_nccl_ring_drain_us(&m, COLL_NFUNC_ALL_GATHER, (uint64_t)16 << 30, buf),
                                 1048576.0 / 20.3e3, 1e-9);
  g_assert_cmpfloat_with_epsilon(coll_nccl_ring_drain_us(&m, COLL_NFUNC_BROADCAST, 64u << 20, buf),
                                 524288.0 / 20.3e3, 1e-9);
  c.n_nodes = 2;
  c.n_ranks = 16;
  c.nic_GBps = 400;
  coll_nccl_model_build(&c, &m);
  g_assert_cmpfloat(coll_nccl_ring_drain_us(&m, COLL_NFUNC_ALL_GATHER, 64u << 20, buf), ==, 0.0);
  int ranks[8] = { 0, 1, 2, 3, 4, 5, 6, 7 }, algo = -1;
  /* Chakra's all-gather size is per member: 8 MiB each, 64 MiB in all. */
  coll_desc d = { .type = ET_COLL_ALL_GATHER, .bytes = 8u << 20, .ranks = ranks, .n_ranks = 8, .root = -1 };
  double delta = g1_minus_g2_ps(8, &d, COLL_PROTO_SIMPLE, &algo);
  g_assert_cmpint(algo, ==, COLL_NALGO_RING);
  g_assert_cmpfloat(fabs(delta - 262144.0 / 20.3e9 * 1e12), <=, 2.0);
}

/* One-node NVLS loops (coll_nccl_nvls_loop_bytes; src/enqueue.cc
 * calcCollChunking's NVLS branch per CTA, 8 heads): H100 (16 CTAs), 32 MiB:
 * a CTA's 2 MiB is under 64 x 8 x 128 KiB -> 64 KiB, under 8 x 8 x 64 KiB
 * -> 32 KiB, not under 2 x 8 x 32 KiB: 32 KiB x 8 x 16 = 4 MiB (8 loops,
 * 7 route latencies in series); 1 GiB: 64 MiB per CTA is not under 64 MiB:
 * 128 KiB x 8 x 16 = 16 MiB; 1 MiB: 64 KiB per CTA is under 512 KiB ->
 * 16 KiB x 128 = 2 MiB.  One B200 node: 24 CTAs (NVLS_NCHANNELS_SM100_NVL),
 * 32 MiB: 1.33 MiB per CTA -> 32 KiB x 8 x 24 = 6 MiB. */
static void test_nvls_loops(void)
{
  g_assert_cmpuint(coll_nccl_nvls_loop_bytes(90, 8, 32u << 20), ==, 4u << 20);
  g_assert_cmpuint(coll_nccl_nvls_loop_bytes(90, 8, 1u << 30), ==, 16u << 20);
  g_assert_cmpuint(coll_nccl_nvls_loop_bytes(90, 8, 1u << 20), ==, 2u << 20);
  g_assert_cmpuint(coll_nccl_nvls_loop_bytes(100, 8, 32u << 20), ==, 6u << 20);
}

/* The small-size latency, charged once (issue 27, nccl-tests#309's shape:
 * nodes x 8 H100, all-reduce 8 B, which NCCL's tuner runs as tree/LL: RS
 * ring on NVLink > double binary tree on the network > AG ring on
 * NVLink).  NCCL's model (src/graph/tuning.cc ncclTopoTuneModel, tree):
 * baseLat 6.8 + H, H = 2 x ((ppn - 1) x hwLat NVLink tree LL 0.6 +
 * log2i(nodes) x hwLat NET tree LL 5.0) = 18.4 us on 2 nodes, 28.4 on 4:
 * 25.2 and 35.2 us (the real runs: about 25 and 35).  The per-hop figures
 * hold the reference wire (coll_nccl_wire_of: 1 us per NVLink route, 2 us
 * per network route, the dgx-h100 links), so each transfer pays only its
 * route's latency above it and a route below it gives the deficit back
 * over NCCL's hops, 2 (ppn - 1) = 14 NVLink and 2 log2i(nodes) = 2 (4)
 * network hops.  Expected, plus the 8 bytes' transfer (under 10 ns):
 *   dgx-h100 links (500 ns, 1 us per traversal: the reference): 6.8 + H =
 *     25.2 / 35.2 us (before: 43.2 / 57.2, the routes' 18 / 22 us on top);
 *   every latency 0: 6.8 + H - 14 x 1 - 2 (4) x 2 = 7.2 / 13.2 us;
 *   NVLink 500 ns, network 2 us per traversal (4 us per route): 6.8 + H +
 *     2 (4) network routes x 2 us above the reference = 29.2 / 43.2 us. */
static void test_latency_terms(void)
{
  const int nodes[2] = { 2, 4 };
  const char *nvl[3] = { "500ns", "0ns", "500ns" }, *ib[3] = { "1us", "0ns", "2us" };
  const double want_us[3][2] = { { 25.2, 35.2 }, { 7.2, 13.2 }, { 29.2, 43.2 } };
  int ranks[32];
  for (int i = 0; i < 32; i++)
    ranks[i] = i;
  for (int k = 0; k < 2; k++)
    for (int v = 0; v < 3; v++) {
      GError *error = NULL;
      char *y = g_strdup_printf("schema_version: 1\nmodel: analytical\ndims:\n"
                                "  - {name: nvlink, kind: switch, size: 8, bandwidth: 450GB/s, latency: %s}\n"
                                "  - {name: ib, kind: switch, size: %d, bandwidth: 400Gbps, latency: %s}\n"
                                "collectives: {in_switch_reduction: true}\nlibrary: {name: nccl, sm: 90}\n",
                                nvl[v], nodes[k], ib[v]);
      topo *t = topo_load_string(y, "terms", &error);
      g_assert_no_error(error);
      coll_policy *pol = nccl_policy(t, 0, COLL_PROTO_AUTO, 1);
      coll_desc d = { .type = ET_COLL_ALL_REDUCE, .bytes = 8, .ranks = ranks, .n_ranks = 8 * nodes[k], .root = -1 };
      coll_info info;
      sim_time_ps ps = 0;
      g_assert_true(coll_measure(t, net_default_tier(t), pol, &d, &ps, &info, &error));
      g_assert_no_error(error);
      g_assert_cmpint(info.nccl_algo, ==, COLL_NALGO_TREE);
      g_assert_cmpint(info.proto, ==, COLL_PROTO_LL);
      g_test_message("%d nodes, all-reduce 8 B, NVLink %s, network %s per traversal: %.3f us (expected %.1f)",
                     nodes[k], nvl[v], ib[v], ps / 1e6, want_us[v][k]);
      g_assert_cmpfloat(fabs(ps / 1e6 - want_us[v][k]), <, 0.01);
      coll_policy_free(pol);
      topo_free(t);
      g_free(y);
    }
}

/* NCCL's send/recv channels on one H100 node (coll_nccl_p2p_efficiency;
 * src/enqueue.cc addP2pToPlan, src/graph/paths.cc): 18 links -> 36
 * channels per peer -> 32 (MAXCHANNELS); 8 ranks: nChannelsMin 32 / 8 = 4;
 * 4 ranks: 8.  minPart 64 KiB, maxPart 16 MiB.  Expected efficiencies:
 * channels x 20.3 GB/s / 450 GB/s, capped at NCCL's NVLink view 20.6/25. */
static void test_p2p_channels(void)
{
  coll_nccl_comm c = { .n_ranks = 8, .n_nodes = 1, .sm = 90, .nvlink = TRUE, .intra_GBps = 450, .link_GBps = 25,
                       .nic_GBps = 0 };
  coll_nccl_model m;
  coll_nccl_model_build(&c, &m);
  const double ch = 20.3 / 450.0, view = 20.6 / 25.0;
  /* 32 MiB and 64 MiB: 4 channels (parts 8 and 16 MiB, not above 16). */
  g_assert_cmpfloat_with_epsilon(coll_nccl_p2p_efficiency(&m, 32u << 20, 1), 4 * ch, 1e-9);
  g_assert_cmpfloat_with_epsilon(coll_nccl_p2p_efficiency(&m, 64u << 20, 1), 4 * ch, 1e-9);
  /* 128 MiB: 32 MiB parts double to 8 channels; 256 MiB: 16. */
  g_assert_cmpfloat_with_epsilon(coll_nccl_p2p_efficiency(&m, 128u << 20, 1), 8 * ch, 1e-9);
  g_assert_cmpfloat_with_epsilon(coll_nccl_p2p_efficiency(&m, 256u << 20, 1), 16 * ch, 1e-9);
  /* 1 GiB: 32 channels, 650 GB/s, above NCCL's view: the view. */
  g_assert_cmpfloat_with_epsilon(coll_nccl_p2p_efficiency(&m, 1u << 30, 1), view, 1e-9);
  /* 100 KiB: ceil(100 / 64) = 2 channels. */
  g_assert_cmpfloat_with_epsilon(coll_nccl_p2p_efficiency(&m, 100u << 10, 1), 2 * ch, 1e-9);
  /* All-to-all, 7 peers of 8 MiB: 4 channels each, 28 in all. */
  g_assert_cmpfloat_with_epsilon(coll_nccl_p2p_efficiency(&m, 8u << 20, 7), view, 1e-9);
  c.intra_GBps = 900; /* 28 x 20.3 / 900 = 0.632 below the view 20.6/25 */
  coll_nccl_model_build(&c, &m);
  g_assert_cmpfloat_with_epsilon(coll_nccl_p2p_efficiency(&m, 8u << 20, 7), 28 * 20.3 / 900.0, 1e-9);
  /* 4 ranks on 450 GB/s: nChannelsMin 8. */
  c.n_ranks = 4;
  c.intra_GBps = 450;
  coll_nccl_model_build(&c, &m);
  g_assert_cmpfloat_with_epsilon(coll_nccl_p2p_efficiency(&m, 32u << 20, 1), 8 * ch, 1e-9);
  /* Two nodes of 8: every peer gets the network's per-peer channels, 4
   * (test_p2p_net_channels), 4 x 20.3 GB/s over NVLink. */
  c.n_nodes = 2;
  c.n_ranks = 16;
  c.nic_GBps = 400;
  coll_nccl_model_build(&c, &m);
  g_assert_cmpfloat_with_epsilon(coll_nccl_p2p_efficiency(&m, 32u << 20, 1), 4 * ch, 1e-9);
}

/* NCCL 2.29.2's channels on several nodes, worked by hand from its rules
 * (nccl_tuner.c coll_nccl_net_ring_channels, p2p_net_op_channels), H100
 * (sm 90, NVLink view 18 x 20.6 = 370.8 GB/s) with one 50 GB/s NIC per
 * GPU:
 *   ring channels: the search's speed 48 (first of sm90SpeedArrayInter
 *   <= 50); 1 GPU per node: 1 channel, doubled (48 >= 25, 1 <= 4) to 2
 *   at 24, doubled by ncclTopoPostset to 4 (24 is not > 45); 2 GPUs: 2 ->
 *   4 -> 8; 4 GPUs: 4 -> 8 -> 16; 8 GPUs: min(8 NICs, 370.8 x 8 / (7 x
 *   48) = 8.8) = 8, not doubled (sm 90 > 80, 48 < 50, 8 > 4), 16, and 16
 *   is not < 16: 16.
 *   per network peer: ceil(50 / 14) = 4; halved while 4 x ceil(ranks / 8)
 *   exceeds the p2p channels: 10 ranks (4 ch): 8 > 4 -> 2; 20 ranks (8):
 *   12 > 8 -> 2; 40 (16): 20 > 16 -> 2; 80 (16): 40 -> 20 > 16 -> 1;
 *   2 x 1 GPU (4): 4 -> 4; 2 x 8 (16): 8 -> 4.  A 64 MiB send doubles
 *   its parts (> 128 KiB) up to that per-peer count.
 * Efficiency = channels x 14 GB/s / 50 GB/s, at most 1. */
static void test_p2p_net_channels(void)
{
  static const struct {
    int nodes, ppn, ring, ch;
  } cases[] = { { 10, 1, 4, 2 }, { 10, 2, 8, 2 }, { 10, 4, 16, 2 }, { 10, 8, 16, 1 }, { 2, 1, 4, 4 }, { 2, 8, 16, 4 } };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    coll_nccl_comm c = { .n_ranks = cases[i].nodes * cases[i].ppn, .n_nodes = cases[i].nodes, .sm = 90,
                         .nvlink = TRUE, .intra_GBps = 450, .link_GBps = 25, .nic_GBps = 50.0 * cases[i].ppn };
    coll_nccl_model m;
    coll_nccl_model_build(&c, &m);
    g_assert_cmpint(coll_nccl_net_ring_channels(&c), ==, cases[i].ring);
    double want = MIN(1.0, cases[i].ch * 14.0 / 50.0);
    g_assert_cmpfloat_with_epsilon(coll_nccl_p2p_net_efficiency(&m, 64u << 20, 1), want, 1e-9);
  }
  /* 10 x 1 GPU: a 100 KiB send starts on 1 channel (nChannelsMin: 2 x 10
   * > 4 -> 1; ceil(100 / 64) = 2 allowed) and its 100 KiB part is not
   * above 128 KiB: 1 channel, 14 / 50.  Nine network peers at 2 channels
   * each would be 18, capped by the 4 p2p channels: 56 GB/s > 50: 1. */
  coll_nccl_comm c = { .n_ranks = 10, .n_nodes = 10, .sm = 90, .nvlink = TRUE, .intra_GBps = 450, .link_GBps = 25,
                       .nic_GBps = 50 };
  coll_nccl_model m;
  coll_nccl_model_build(&c, &m);
  g_assert_cmpfloat_with_epsilon(coll_nccl_p2p_net_efficiency(&m, 100u << 10, 1), 14.0 / 50.0, 1e-9);
  g_assert_cmpfloat_with_epsilon(coll_nccl_p2p_net_efficiency(&m, 64u << 20, 9), 1.0, 1e-9);
  /* One node: no network. */
  c.n_nodes = 1;
  c.nic_GBps = 0;
  coll_nccl_model_build(&c, &m);
  g_assert_cmpint(coll_nccl_net_ring_channels(&c), ==, 0);
  g_assert_cmpfloat_with_epsilon(coll_nccl_p2p_net_efficiency(&m, 64u << 20, 1), 1.0, 1e-9);
}

/* NCCL's ring graph on several nodes and the bus bandwidth it gives the
 * tuner on more than two nodes (nccl_tuner.c net_graph_bus,
 * coll_nccl_net_graph), worked by hand from NCCL 2.29.2's rules
 * (src/graph/search.cc, src/graph/tuning.cc).  H100: sm 90, NVLink view
 * 450 x 20.6 / 25 = 370.8 GB/s, one 50 GB/s NIC per GPU, so the search's
 * speed is 48 (first of sm90SpeedArrayInter <= 50):
 *   10 x 1 GPU: 1 channel, doubled (48 >= 25, 1 <= 4) to 2 at 24: 48 GB/s;
 *   10 x 2: 2 -> 4 at 24: 96;  10 x 4: 4 -> 8 at 24: 192;
 *   10 x 8: min(8 NICs, floor(370.8 x 8 / (7 x 48)) = 8) = 8, not doubled
 *   (sm 90 > 80, 48 < 50, 8 > 4): 384, above the NVLink view: 370.8;
 *   2 x 4: two nodes keep the NIC rate, 4 x 50 = 200 (NCCL's bwIntra);
 *   10 x 1 at 90 GB/s per NIC: 48 fits 1 channel (48), 45 fits 2 (90),
 *   30 x 3, 15 x 6 and 6 x 15 tie at 90, 22 x 4 = 88: 45, doubled (2 <= 4)
 *   to 4 at 22.5: 90.
 * A100: sm 80, view 300 x 20 / 25 = 240, one 25 GB/s NIC per GPU (200
 * Gb/s): speed 24 (speedArrayInter: 48, 30, 28, 24), 4 x 8 GPUs: 8
 * channels (view cap floor(240 x 8 / (7 x 24)) = 11), not doubled (24 <
 * 25): 192.
 * Ring/Simple all-gather's algorithm bandwidth = bus x n / (n - 1). */
static void test_net_graph_bus(void)
{
  static const struct {
    int nodes, ppn, sm;
    double intra, nic_gpu;
    int ch;
    double speed, bus;
  } cases[] = {
    { 10, 1, 90, 450, 50, 2, 24, 48 },      { 10, 2, 90, 450, 50, 4, 24, 96 },
    { 10, 4, 90, 450, 50, 8, 24, 192 },     { 10, 8, 90, 450, 50, 8, 48, 370.8 },
    { 2, 4, 90, 450, 50, 8, 24, 200 },      { 4, 8, 80, 300, 25, 8, 24, 192 },
    { 10, 1, 90, 450, 90, 4, 22.5, 90 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    int n = cases[i].nodes * cases[i].ppn;
    coll_nccl_comm c = { .n_ranks = n, .n_nodes = cases[i].nodes, .sm = cases[i].sm, .nvlink = TRUE,
                         .intra_GBps = cases[i].intra, .link_GBps = 25, .nic_GBps = cases[i].nic_gpu * cases[i].ppn };
    double speed = -1;
    g_assert_cmpint(coll_nccl_net_graph(&c, &speed), ==, cases[i].ch);
    g_assert_cmpfloat_with_epsilon(speed, cases[i].speed, 1e-9);
    coll_nccl_model m;
    coll_nccl_model_build(&c, &m);
    g_assert_cmpfloat_with_epsilon(m.bw_GBps[COLL_NFUNC_ALL_GATHER][COLL_NALGO_RING][COLL_PROTO_SIMPLE],
                                   cases[i].bus * n / (n - 1), 1e-9);
  }
  /* One node: no graph across nodes. */
  coll_nccl_comm one = { .n_ranks = 8, .n_nodes = 1, .sm = 90, .nvlink = TRUE, .intra_GBps = 450, .link_GBps = 25 };
  double speed = -1;
  g_assert_cmpint(coll_nccl_net_graph(&one, &speed), ==, 0);
  g_assert_cmpfloat(speed, ==, 0.0);
}

/* The proxy's bound on one send/recv connection (nccl_tuner.c
 * p2p_proxy_GBps): a network step is NCCL_P2P_NET_CHUNKSIZE = 131,072
 * bytes (65,536 under 8 chunks, 32,768 under one) and takes 3 network
 * overheads, so a peer moves at most chunk / (3 x overhead): 131072 /
 * 3 us = 43.69 GB/s at 1 us.  2 x 1 GPU, one 50 GB/s NIC: 4 channels x
 * 14 = 56 GB/s would fill the NIC (test_p2p_net_channels), so the bound
 * sets the rate. */
static void test_p2p_proxy_bound(void)
{
  coll_nccl_comm c = { .n_ranks = 2, .n_nodes = 2, .sm = 90, .nvlink = TRUE, .intra_GBps = 450, .link_GBps = 25,
                       .nic_GBps = 50, .net_overhead_us = 1.0 };
  coll_nccl_model m;
  coll_nccl_model_build(&c, &m);
  g_assert_cmpfloat_with_epsilon(coll_nccl_p2p_net_efficiency(&m, 64u << 20, 1), 131072.0 / 3e3 / 50.0, 1e-9);
  /* 512 KiB: half chunks; 4 channels still fill the NIC. */
  g_assert_cmpfloat_with_epsilon(coll_nccl_p2p_net_efficiency(&m, 512u << 10, 1), 65536.0 / 3e3 / 50.0, 1e-9);
  /* Two network peers proceed side by side: 2 x 43.69 > 50, the NIC. */
  g_assert_cmpfloat_with_epsilon(coll_nccl_p2p_net_efficiency(&m, 64u << 20, 2), 1.0, 1e-9);
  /* NCCL's AMD figure, 2 us: half the rate. */
  c.net_overhead_us = 2.0;
  coll_nccl_model_build(&c, &m);
  g_assert_cmpfloat_with_epsilon(coll_nccl_p2p_net_efficiency(&m, 64u << 20, 1), 131072.0 / 6e3 / 50.0, 1e-9);
}

/* A measured network share (comm.net_efficiency, a calibrated config's
 * library.net_efficiency): 10 x 1 GPU H100, one 400 Gb/s NIC (50 GB/s).
 * Spec-only the ring graph's speed, 2 x 24 = 48 GB/s (test_net_graph_bus),
 * sets the ring's network efficiency to 48 / 50 = 0.96 for every share of
 * the NIC's rate; measured, the share itself is the ring/Simple efficiency
 * (0.9, 0.98: continuous), the tuner's table and so NCCL's choice are
 * unchanged, and a network send/recv's efficiency is scaled by it (two
 * peers fill the NIC: 1 x 0.9). */
static void test_net_efficiency(void)
{
  coll_nccl_comm c = { .n_ranks = 10, .n_nodes = 10, .sm = 90, .nvlink = TRUE, .intra_GBps = 450, .link_GBps = 25,
                       .nic_GBps = 50, .net_overhead_us = 1.0 };
  coll_nccl_model m0, m;
  coll_nccl_model_build(&c, &m0);
  const uint64_t s = 1u << 30;
  g_assert_cmpfloat_with_epsilon(
    coll_nccl_efficiency(&m0, COLL_NFUNC_ALL_GATHER, COLL_NALGO_RING, COLL_PROTO_SIMPLE, TRUE, s), 0.96, 1e-9);
  static const double shares[] = { 0.9, 0.98 };
  for (size_t i = 0; i < G_N_ELEMENTS(shares); i++) {
    c.net_efficiency = shares[i];
    coll_nccl_model_build(&c, &m);
    g_assert_cmpmem(m.bw_GBps, sizeof m.bw_GBps, m0.bw_GBps, sizeof m0.bw_GBps);
    g_assert_cmpfloat_with_epsilon(
      coll_nccl_efficiency(&m, COLL_NFUNC_ALL_GATHER, COLL_NALGO_RING, COLL_PROTO_SIMPLE, TRUE, s), shares[i], 1e-9);
    g_assert_cmpfloat_with_epsilon(coll_nccl_p2p_net_efficiency(&m, 64u << 20, 2), shares[i], 1e-9);
  }
}

/* The ring's thread blocks across nodes (nccl_tuner.c
 * coll_nccl_ring_copy_GBps): one block per channel of comm->nChannels,
 * each copying at most COLL_NCCL_CH_COPY_GBPS = 20.3 GB/s.  H100 (sm 90,
 * NVLink view 370.8, one 50 GB/s NIC per GPU), the channels by hand from
 * NCCL 2.29.2 (test_net_graph_bus for the graph; ncclTopoPostset doubles
 * it, and once more on sm >= 90 when bwIntra > 45 with fewer than 16):
 *   10 x 8: graph 8 x 48 (not doubled: 48 < 50, 8 > 4) -> 16 (48 > 45
 *   but 16 is not < 16): 16 x 20.3 = 324.8 GB/s, under NCCL's 384 and
 *   the NVLink view: ring/Simple efficiency 324.8 / 400 = 0.812 on the
 *   NICs (8 x 50) and 324.8 / 450 = 0.72178 of NVLink's raw rate;
 *   10 x 4: graph 8 x 24 -> 16: 324.8 > the NICs' 192, so the network
 *   keeps the graph's 192 / 200 = 0.96;  10 x 2: 8 x 20.3 = 162.4;
 *   10 x 1: 4 x 20.3 = 81.2 (NIC-bound: 0.96);  one node: 0 (no bound).
 * LL128 keeps NCCL's figure on 10 x 8: min(384 x 0.92, 16 x 36.7) / 400
 * = 0.8832.  A measured share of the NIC (0.98) does not lift the bound:
 * 0.812.  NCCL's tuner table is unchanged by the bound (its ring/Simple
 * all-gather algorithm bandwidth stays 370.8 x 80 / 79).  32 channels set
 * in the config (as NCCL_MIN_NCHANNELS=32): 32 x 20.3 = 649.6 GB/s, above
 * the graph's 384, so the network is back at 384 / 400 = 0.96. */
static void test_ring_copy_bound(void)
{
  static const struct {
    int ppn;
    double copy, eff_inter;
  } cases[] = { { 8, 324.8, 0.812 }, { 4, 324.8, 0.96 }, { 2, 162.4, 0.96 }, { 1, 81.2, 0.96 } };
  const uint64_t s = 1ull << 34;
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    int n = 10 * cases[i].ppn;
    coll_nccl_comm c = { .n_ranks = n, .n_nodes = 10, .sm = 90, .nvlink = TRUE, .intra_GBps = 450, .link_GBps = 25,
                         .nic_GBps = 50.0 * cases[i].ppn };
    coll_nccl_model m;
    coll_nccl_model_build(&c, &m);
    g_assert_cmpfloat_with_epsilon(coll_nccl_ring_copy_GBps(&c), cases[i].copy, 1e-9);
    g_assert_cmpfloat_with_epsilon(
      coll_nccl_efficiency(&m, COLL_NFUNC_ALL_GATHER, COLL_NALGO_RING, COLL_PROTO_SIMPLE, TRUE, s), cases[i].eff_inter,
      1e-9);
  }
  coll_nccl_comm c = { .n_ranks = 80, .n_nodes = 10, .sm = 90, .nvlink = TRUE, .intra_GBps = 450, .link_GBps = 25,
                       .nic_GBps = 400 };
  coll_nccl_model m;
  coll_nccl_model_build(&c, &m);
  g_assert_cmpfloat_with_epsilon(
    coll_nccl_efficiency(&m, COLL_NFUNC_ALL_GATHER, COLL_NALGO_RING, COLL_PROTO_SIMPLE, FALSE, s), 324.8 / 450, 1e-9);
  g_assert_cmpfloat_with_epsilon(
    coll_nccl_efficiency(&m, COLL_NFUNC_REDUCE_SCATTER, COLL_NALGO_RING, COLL_PROTO_SIMPLE, TRUE, s), 0.812, 1e-9);
  g_assert_cmpfloat_with_epsilon(
    coll_nccl_efficiency(&m, COLL_NFUNC_ALL_GATHER, COLL_NALGO_RING, COLL_PROTO_LL128, TRUE, s), 384 * 0.92 / 400,
    1e-9);
  g_assert_cmpfloat_with_epsilon(m.bw_GBps[COLL_NFUNC_ALL_GATHER][COLL_NALGO_RING][COLL_PROTO_SIMPLE],
                                 370.8 * 80 / 79, 1e-9);
  c.net_efficiency = 0.98;
  coll_nccl_model_build(&c, &m);
  g_assert_cmpfloat_with_epsilon(
    coll_nccl_efficiency(&m, COLL_NFUNC_ALL_GATHER, COLL_NALGO_RING, COLL_PROTO_SIMPLE, TRUE, s), 0.812, 1e-9);
  c.net_efficiency = 0;
  c.channels = 32;
  coll_nccl_model_build(&c, &m);
  g_assert_cmpfloat_with_epsilon(coll_nccl_ring_copy_GBps(&c), 32 * 20.3, 1e-9);
  g_assert_cmpfloat_with_epsilon(
    coll_nccl_efficiency(&m, COLL_NFUNC_ALL_GATHER, COLL_NALGO_RING, COLL_PROTO_SIMPLE, TRUE, s), 0.96, 1e-9);
  coll_nccl_comm one = { .n_ranks = 8, .n_nodes = 1, .sm = 90, .nvlink = TRUE, .intra_GBps = 450, .link_GBps = 25 };
  g_assert_cmpfloat(coll_nccl_ring_copy_GBps(&one), ==, 0.0);
}

/* NCCL <= 2.12's host work per launched channel (nccl_launch.c).
 * Channels launched (getAlgoInfo: drop channels while S < channels x
 * threads x threshold): ring LL on 8 ranks, 512 threads x 8 B x 8 ranks =
 * 32,768 B per channel: 8 B -> 1, 64 KiB -> 2, 100,000 B -> 3, 512 KiB ->
 * 16, 1 MiB -> 24 (the communicator's); tree LL (no rank factor) 4,096 B
 * per channel: 64 KiB -> 16; LL128 640 x 8 = 5,120 B: 64 KiB -> 12;
 * Simple 512 x 64 = 32,768 B: 1 MiB -> 24.  The communicator of one A100
 * node: NCCL's view 12 x 20 = 240 GB/s, 6 channels of 40, duplicated to
 * 12, doubled to 24; H100 (370.8): 6 x 60 -> 12 -> 24.  Host per GPU:
 * 4 us + 24 x 0.244 = 9.856 us before 2.13, 4 us from 2.13 on and for the
 * tuner's own version (0).  End to end, 8 GPUs on one thread (-g 8),
 * nccl_version 2.12: a 64 KiB all-reduce (ring LL, 2 channels) costs the
 * host 8 x (4 + 2 x 0.244) = 35.904 us and a 1 MiB one 8 x 9.856 =
 * 78.848 us, above the GPU's time, so they are nccl-tests' times; without
 * the version the 64 KiB one is 8 x 4 = 32 us and the 1 MiB one is the
 * GPU's time, above 32 us and below 78.848 (49.9 us when written). */
static void test_launch_channels(void)
{
  g_assert_cmpint(coll_nccl_launch_channels(COLL_NALGO_RING, COLL_PROTO_LL, 8, 8, 24), ==, 1);
  g_assert_cmpint(coll_nccl_launch_channels(COLL_NALGO_RING, COLL_PROTO_LL, 65536, 8, 24), ==, 2);
  g_assert_cmpint(coll_nccl_launch_channels(COLL_NALGO_RING, COLL_PROTO_LL, 100000, 8, 24), ==, 3);
  g_assert_cmpint(coll_nccl_launch_channels(COLL_NALGO_RING, COLL_PROTO_LL, 524288, 8, 24), ==, 16);
  g_assert_cmpint(coll_nccl_launch_channels(COLL_NALGO_RING, COLL_PROTO_LL, 1048576, 8, 24), ==, 24);
  g_assert_cmpint(coll_nccl_launch_channels(COLL_NALGO_TREE, COLL_PROTO_LL, 65536, 8, 24), ==, 16);
  g_assert_cmpint(coll_nccl_launch_channels(COLL_NALGO_RING, COLL_PROTO_LL128, 65536, 8, 24), ==, 12);
  g_assert_cmpint(coll_nccl_launch_channels(COLL_NALGO_RING, COLL_PROTO_SIMPLE, 1048576, 8, 24), ==, 24);
  coll_nccl_comm a100 = { .n_ranks = 8, .n_nodes = 1, .sm = 80, .nvlink = TRUE, .intra_GBps = 300.0,
                          .link_GBps = 25.0 };
  g_assert_cmpint(coll_nccl_comm_channels(&a100), ==, 24);
  coll_nccl_comm h100 = { .n_ranks = 8, .n_nodes = 1, .sm = 90, .nvlink = TRUE, .intra_GBps = 450.0,
                          .link_GBps = 25.0 };
  g_assert_cmpint(coll_nccl_comm_channels(&h100), ==, 24);
  g_assert_cmpfloat_with_epsilon(coll_nccl_host_launch_us(4.0, 21200, 24), 9.856, 1e-9);
  g_assert_cmpfloat_with_epsilon(coll_nccl_host_launch_us(4.0, 20909, 2), 4.488, 1e-9);
  g_assert_cmpfloat_with_epsilon(coll_nccl_host_launch_us(4.0, 21300, 24), 4.0, 1e-9);
  g_assert_cmpfloat_with_epsilon(coll_nccl_host_launch_us(4.0, 0, 24), 4.0, 1e-9);

  GError *error = NULL;
  const int version[2] = { 21200, 0 };
  const uint64_t bytes[2] = { 65536, 1048576 };
  const sim_time_ps want[2][2] = { { 35904 * SIM_PS_PER_NS, 78848 * SIM_PS_PER_NS },
                                   { 32 * SIM_PS_PER_US, 0 } }; /* 0: GPU-bound, bounds below */
  int ranks[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
  for (int v = 0; v < 2; v++) {
    char *y = g_strdup_printf("schema_version: 1\nmodel: analytical\n"
                              "dims:\n  - {name: nvlink, kind: switch, size: 8, bandwidth: 300GB/s, latency: 500ns}\n"
                              "library: {name: nccl, sm: 80, nccl_version: %d}\n", version[v]);
    topo *t = topo_load_string(y, "launch", &error);
    g_assert_no_error(error);
    coll_policy *pol = nccl_policy(t, 0, COLL_PROTO_AUTO, 8);
    for (int k = 0; k < 2; k++) {
      coll_desc d = { .type = ET_COLL_ALL_REDUCE, .bytes = bytes[k], .ranks = ranks, .n_ranks = 8, .root = -1 };
      sim_time_ps ps = 0;
      coll_info info;
      g_assert_true(coll_measure(t, net_default_tier(t), pol, &d, &ps, &info, &error));
      g_assert_no_error(error);
      g_assert_cmpint(info.nccl_algo, ==, COLL_NALGO_RING);
      g_assert_cmpint(info.proto, ==, COLL_PROTO_LL);
      g_test_message("A100 -g 8, version %d, all-reduce %" G_GUINT64_FORMAT " B: %.3f us", version[v], bytes[k],
                     ps / 1e6);
      if (want[v][k] > 0) {
        g_assert_cmpuint(ps, ==, want[v][k]);
      } else {
        g_assert_cmpuint(ps, >, 32 * SIM_PS_PER_US);
        g_assert_cmpuint(ps, <, want[0][k]);
      }
    }
    coll_policy_free(pol);
    topo_free(t);
    g_free(y);
  }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/coll/nccl/slices", test_slices);
  g_test_add_func("/coll/nccl/tree-chunks", test_tree_chunks);
  g_test_add_func("/coll/nccl/broadcast-pipeline", test_broadcast_pipeline);
  g_test_add_func("/coll/nccl/broadcast-channel-chunks", test_broadcast_channel_chunks);
  g_test_add_func("/coll/nccl/timing-loop", test_timing_loop);
  g_test_add_func("/coll/nccl/latency-monotone", test_latency_monotone);
  g_test_add_func("/coll/nccl/latency-terms", test_latency_terms);
  g_test_add_func("/coll/nccl/p2p-channels", test_p2p_channels);
  g_test_add_func("/coll/nccl/p2p-net-channels", test_p2p_net_channels);
  g_test_add_func("/coll/nccl/net-graph-bus", test_net_graph_bus);
  g_test_add_func("/coll/nccl/net-efficiency", test_net_efficiency);
  g_test_add_func("/coll/nccl/ring-copy-bound", test_ring_copy_bound);
  g_test_add_func("/coll/nccl/p2p-proxy-bound", test_p2p_proxy_bound);
  g_test_add_func("/coll/nccl/p2p-fill", test_p2p_fill);
  g_test_add_func("/coll/nccl/ring-drain", test_ring_drain);
  g_test_add_func("/coll/nccl/nvls-loops", test_nvls_loops);
  g_test_add_func("/coll/nccl/launch-channels", test_launch_channels);
  return g_test_run();
}
