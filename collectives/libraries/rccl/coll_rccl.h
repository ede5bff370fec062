/* coll_rccl.h: the RCCL cost model (library `rccl`): RCCL, AMD's fork of
 * NCCL for Instinct GPUs, keeps NCCL's algorithms (ring, tree), protocols
 * (LL, LL128, Simple), channels and pipeline, so wisp runs NCCL's plan
 * (nccl/coll_nccl_plan.h) with RCCL's tuner: the tables here fill the same
 * coll_nccl_model, and the time, choice, efficiency and latency rules are
 * RCCL's.  Read from ROCm/rccl (tag [rccl] below): src/graph/tuning.cc and
 * src/misc/rccl_wrap.cc @9e22c79d8dccb80075967c2a03f1a921c253c867 (the
 * newest stored), src/graph/rome_models.cc, topo.h, connect.cc @0cbce2a7;
 * wisp's code is its own.
 *
 * Which tuning model.  RCCL carries six tuning models (src/graph/
 * tuning.cc tuning_model_0..5: per-link-type latencies, bandwidth ratios
 * per algorithm and protocol, and per-size ring and tree correction
 * factors) and picks one per platform: the rome model that matches the
 * node (src/graph/rome_models.cc, matched on GPU, CPU and NIC counts,
 * xGMI links and the NUMA pattern, not on bus ids) sets `tuning=N` in its
 * options (parseOptions).  Every 8-GPU, 7-link, fully connected MI300X
 * platform of that file has tuning=5: rome_model_79 (no NICs),
 * rome_model_81 (8 NICs) and rome_model_84 (16 NIC ports).  So wisp's rccl is
 * tuning model 5, the MI300X model; the others (MI100/MI200 nodes) are
 * not carried.
 *
 * What model 5 says, and wisp follows:
 *  - bandwidth: RCCL's ring and tree take the GPU's total xGMI bandwidth
 *    as NCCL's graph bandwidth (rome model graphs: bwIntra = totalBw /
 *    nChannels), 48 GB/s per link (GFX94X_XGMI_WIDTH, src/graph/topo.h),
 *    scaled by bwRatio[a][p] (one table for <= 2 nodes, one for more);
 *    that ratio is the protocol's efficiency on the simulated transfers
 *    (on several nodes relative to the NIC, though RCCL's figure is over
 *    the xGMI total: a multi-node tree/Simple, 0.11 on 2 nodes, runs far
 *    below what RCCL's own formula predicts; no table to check it);
 *  - time: latency + S / (bw x correction), the correction by
 *    log2(S / 64) for the tree always and for the ring on > 1 node
 *    (ncclTopoGetAlgoTime under __HIP_PLATFORM_AMD__; no ring plateau);
 *  - latency: baseLat (12 us LL/LL128, 17 us Simple) plus model 5's
 *    per-hop figures by link type (network ring Simple: 320 us a hop);
 *  - protocol on >= 2 nodes: model 5's llProtoRanges decide it for
 *    reduce-scatter, all-gather and all-reduce by the bytes per rank (LL
 *    up to 640 KiB, 96 KiB, 1 MiB), Simple above;
 *  - gfx94x on one node: no tree/Simple, broadcast and reduce ring/LL
 *    x 1.65; LL128 off (RCCL enables it only in ENABLE_LL128 builds on
 *    nodes whose rome model sets ll128Enabled, which the MI300X models of
 *    0cbce2a do not); no NVLS, no CollNet, no MSCCL/MSCCL++ kernels, and
 *    not the single-node protocol thresholds rccl_wrap.cc adds for gfx942.
 * Every function is O(1) unless it says otherwise.  Prefix coll_rccl_.
 */
#ifndef WISP_COLL_RCCL_H
#define WISP_COLL_RCCL_H

#include "collectives/libraries/nccl/coll_nccl.h"

G_BEGIN_DECLS

/* RCCL's rate of one xGMI link in GB/s on gfx94x (MI300X)
 * [rccl] src/graph/topo.h GFX94X_XGMI_WIDTH. */
#define COLL_RCCL_XGMI_GBPS 48.0
/* Ring channels of one MI300X node: rome_model_79's 28 rings
 * (src/graph/rome_models.cc ringBase), doubled by connectRings while
 * nChannels <= maxChannels / 2 (src/graph/connect.cc: MAXCHANNELS 128 on
 * gfx94x, 64 with intra-node NICs or on several nodes) [rccl]. */
#define COLL_RCCL_CHANNELS 56

/* Fills m with RCCL tuning model 5's tables for communicator c (the
 * fields of coll_nccl_model mean what they mean for NCCL; link_eff is
 * RCCL's xGMI view over the raw link rate c->link_GBps). */
void coll_rccl_model_build(const coll_nccl_comm *c, coll_nccl_model *m);
/* RCCL's predicted time in us of (a, p) for S bytes, negative when the
 * pair is disabled: latency + S / (bandwidth x correction(S)). */
double coll_rccl_time_us(const coll_nccl_model *m, coll_nccl_func f, coll_nccl_algo a, coll_proto p, uint64_t s);
/* RCCL's choice for S bytes (the fastest enabled pair by
 * coll_rccl_time_us; forcing as coll_nccl_select). */
gboolean coll_rccl_select(const coll_nccl_model *m, coll_nccl_func f, uint64_t s, int force_algo, int force_proto,
                          coll_nccl_algo *a, coll_proto *p);
/* The share of a link's raw rate (a, p) achieves: model 5's bwRatio
 * times RCCL's xGMI view on the node's links (inter FALSE).  The size
 * corrections (0.1 .. 1, in steps) only steer RCCL's choice, as NCCL's
 * net plugin latency does, and are not applied to the transfers; s is
 * unused.  In (0, 1]. */
double coll_rccl_efficiency(const coll_nccl_model *m, coll_nccl_func f, coll_nccl_algo a, coll_proto p,
                            gboolean inter, uint64_t s);
/* baseLat once (*base_us) and the rest of RCCL's latency (*hop_us),
 * without the plugin-reported network latency (as coll_nccl_latency). */
void coll_rccl_latency(const coll_nccl_model *m, coll_nccl_func f, coll_nccl_algo a, coll_proto p, uint64_t s,
                       double *base_us, double *hop_us);
/* Send/recv: RCCL's xGMI view on the node, the NIC rate between nodes;
 * RCCL's per-peer channel rules (src/graph/paths.cc, 4 per xGMI link on
 * gfx94x) set no per-channel rate wisp could use. */
double coll_rccl_p2p_efficiency(const coll_nccl_model *m, uint64_t peer_bytes, int peers);
double coll_rccl_p2p_net_efficiency(const coll_nccl_model *m, uint64_t peer_bytes, int net_peers);

G_END_DECLS
#endif
