/* coll_nccl.h: the NCCL cost model (library `nccl`, the default for wisp
 * configs), structured like NCCL's own tuner: per algorithm x protocol a
 * base latency, a per-hop latency by link type (NVLink, PCI, network) and
 * a bus bandwidth built from the GPU's links, the protocol's efficiency
 * and NCCL's per-channel caps; the time of (algorithm, protocol) for S
 * bytes is latency + S / bandwidth, and the tuner picks the fastest
 * enabled pair for each size, as NCCL does.  The constants are NCCL's,
 * read from NVIDIA/nccl@5067397 src/graph/tuning.cc and
 * src/graph/topo.h (tag [nccl] below); wisp's code is its own.
 *
 * The tuner only chooses.  The time of a collective comes out of the
 * simulation (nccl_plan.c on the run): the chosen algorithm's transfers run on the
 * network, structured as NCCL runs them (rings per rail, the tree as a
 * chain inside the node and a tree between nodes, NVLS-tree, slices
 * pipelined along rings and trees: coll_nccl_slice_bytes,
 * coll_nccl_tree_chunk_bytes), with the protocol's efficiency applied to
 * their bytes (coll_nccl_efficiency) and its latencies added in series,
 * as a delay before the first step (coll_nccl_latency).  Algorithms: ring,
 * tree, NVLS, NVLS-tree; CollNet and PAT are not modelled (never chosen).
 * Every function is O(1) unless it says otherwise.  Prefix coll_nccl_.
 */
#ifndef WISP_COLL_NCCL_H
#define WISP_COLL_NCCL_H

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

/* NCCL's algorithms, in NCCL's order. */
typedef enum {
  COLL_NALGO_TREE = 0,
  COLL_NALGO_RING,
  COLL_NALGO_COLLNET_DIRECT, /* not modelled */
  COLL_NALGO_COLLNET_CHAIN,  /* not modelled */
  COLL_NALGO_NVLS,
  COLL_NALGO_NVLS_TREE,
  COLL_NALGO_PAT,            /* not modelled */
  COLL_NALGO_P2P,            /* wisp: all-to-all, gather, scatter run as NCCL send/recv */
  COLL_NALGO_COUNT
} coll_nccl_algo;

/* NCCL's protocols. */
typedef enum {
  COLL_PROTO_LL = 0,
  COLL_PROTO_LL128,
  COLL_PROTO_SIMPLE,
  COLL_PROTO_COUNT
} coll_proto;

#define COLL_PROTO_AUTO (-1)
#define COLL_NALGO_AUTO (-1)

const char *coll_nccl_algo_name(coll_nccl_algo a);
const char *coll_proto_name(coll_proto p);
/* Case-insensitive; accepts NCCL_ALGO spellings (Ring, Tree, NVLS,
 * NVLSTree, nvls_tree) and "auto" (COLL_NALGO_AUTO). */
gboolean coll_nccl_algo_from_name(const char *s, int *out);
/* LL, LL128, Simple (any case) or auto (COLL_PROTO_AUTO). */
gboolean coll_proto_from_name(const char *s, int *out);

/* NCCL's collective functions that the tuner knows. */
typedef enum {
  COLL_NFUNC_BROADCAST = 0,
  COLL_NFUNC_REDUCE,
  COLL_NFUNC_ALL_GATHER,
  COLL_NFUNC_REDUCE_SCATTER,
  COLL_NFUNC_ALL_REDUCE,
  COLL_NFUNC_P2P,            /* all-to-all(v), gather, scatter, barrier */
  COLL_NFUNC_COUNT
} coll_nccl_func;

/* The communicator as NCCL's tuner sees it, from physical numbers. */
typedef struct {
  int n_ranks, n_nodes;      /* nodes: groups of ranks sharing the scale-up domain */
  int sm;                    /* compute capability x 10: 70, 80, 90, 100 */
  gboolean nvlink;           /* intra-node links are NVLink (else PCI) */
  double intra_GBps;         /* raw per-GPU scale-up bandwidth per direction (links x link rate) */
  double link_GBps;          /* raw rate of one NVLink link (25 for NVLink 3/4, 50 for NVLink 5) */
  double nic_GBps;           /* per-node network bandwidth per direction (all NICs) */
  double net_lat_us;         /* latency a net plugin reports (NCCL graph latencyInter; 0 for IB); the choice only */
  gboolean nvls;             /* NVSwitch multicast available and enabled */
  int channels;              /* ring/tree channels; 0 = derived (coll_nccl_channels) */
  double net_overhead_us;    /* host cost of a network post (NCCL_NET_OVERHEAD) */
  double net_efficiency;     /* measured share of nic_GBps the wire achieves (library.net_efficiency); 0 = not measured */
} coll_nccl_comm;

/* The tuner's tables for one communicator. */
typedef struct {
  coll_nccl_comm comm;
  int channels, nvls_channels;
  double link_eff;           /* NCCL's NVLink rate / the raw link rate */
  double net_quant;          /* the ring graph's bus / the bus without it (net_graph_bus): <= 1, 1 when not applied */
  double lat_us[COLL_NFUNC_COUNT][COLL_NALGO_COUNT][COLL_PROTO_COUNT];
  double bw_GBps[COLL_NFUNC_COUNT][COLL_NALGO_COUNT][COLL_PROTO_COUNT]; /* algorithm bw; 0 = disabled */
} coll_nccl_model;

/* Fills the tables the way NCCL's ncclTopoTuneModel does.  O(1). */
void coll_nccl_model_build(const coll_nccl_comm *c, coll_nccl_model *m);

/* Predicted time in microseconds of (a, p) for S bytes (nccl-tests' S),
 * or a negative value when the pair is disabled.  Applies NCCL's tree
 * correction and ring plateau factors. */
double coll_nccl_time_us(const coll_nccl_model *m, coll_nccl_func f, coll_nccl_algo a, coll_proto p, uint64_t s);

/* NCCL's choice for S bytes: the fastest enabled pair, restricted to
 * force_algo / force_proto when they are not AUTO (NCCL_ALGO /
 * NCCL_PROTO).  Returns FALSE when no enabled pair matches the forcing
 * (then *a, *p hold the unforced choice).  P2P functions always give
 * (P2P, Simple). */
gboolean coll_nccl_select(const coll_nccl_model *m, coll_nccl_func f, uint64_t s, int force_algo, int force_proto,
                          coll_nccl_algo *a, coll_proto *p);

/* A tuner's time function (coll_nccl_time_us, coll_rccl_time_us). */
typedef double (*coll_nccl_time_fn)(const coll_nccl_model *m, coll_nccl_func f, coll_nccl_algo a, coll_proto p,
                                    uint64_t s);

/* coll_nccl_select's scan with another tuner's times: both libraries pick
 * the fastest enabled pair the same way.  O(algorithms x protocols). */
gboolean coll_nccl_select_by(coll_nccl_time_fn time_us, const coll_nccl_model *m, coll_nccl_func f, uint64_t s,
                             int force_algo, int force_proto, coll_nccl_algo *a, coll_proto *p);

/* The share of a link's raw rate that (a, p) achieves for S bytes: the
 * link efficiency (NVLink tier only), the protocol's payload share and
 * NCCL's per-communicator caps (and, for the tree, NCCL's size-dependent
 * tree correction), as NCCL's bus bandwidth divided by the raw bus
 * bandwidth of wisp's plan on the same links.  inter: TRUE for a network
 * transfer; there, when comm.net_efficiency is measured (> 0), the ring
 * graph's quantisation (net_quant) is left out of the ring and tree and
 * the result is multiplied by it.  In (0, 1]. */
double coll_nccl_efficiency(const coll_nccl_model *m, coll_nccl_func f, coll_nccl_algo a, coll_proto p,
                            gboolean inter, uint64_t s);

/* The latencies of (a, p): *base_us once per collective, *hop_us the
 * total per-hop part on the critical path (NCCL's latency minus the
 * base), without the plugin-reported network latency (comm.net_lat_us
 * steers the choice only; the network's route latencies are simulated).
 * The plan (nccl_plan.c) adds hop_us in series before the first step, as
 * NCCL's own cost model adds latency to bytes / bandwidth; the routes
 * charge only the wire above the reference these figures hold
 * (coll_nccl_wire_of). */
void coll_nccl_latency(const coll_nccl_model *m, coll_nccl_func f, coll_nccl_algo a, coll_proto p, uint64_t s,
                       double *base_us, double *hop_us);

/* The wire NCCL's per-hop figures of (f, a) hold (coll_nccl_wire_of):
 * the reference wire of one hop within a node and across nodes, us, and
 * how many hops of each class NCCL's latency formula counts. */
typedef struct {
  double intra_us, inter_us;
  double intra_hops, inter_hops;
} coll_nccl_wire;

/* NCCL's per-hop figures (hwLat) are measured per hop, wire included:
 * the reference wire is what a hop of the hardware they stand for spends
 * on the wire, which the simulated routes charge too.  On several nodes
 * the plan lets the pipeline's first piece (the fill NCCL's latency term
 * stands for) pay only its routes' latency above it (coll_run.wire_ref_*),
 * and takes the deficit of a route below it off the per-hop term over
 * NCCL's own hops (nccl_plan.c), so at the reference a run costs NCCL's
 * latency plus its simulated transfers, and a latency what-if moves it by
 * the routes' change.  O(1). */
void coll_nccl_wire_of(const coll_nccl_model *m, coll_nccl_func f, coll_nccl_algo a, coll_nccl_wire *out);

/* NCCL's NVLink rate per link in GB/s for an SM architecture (its
 * nvlink bandwidth table, nccl_tuner.c). */
double coll_nccl_nvlink_GBps(int sm);

/* Most chunks wisp cuts one collective into (simulation cost: members x
 * chunks x steps); the pipeline fill a cap adds is (steps - 1) / cap of
 * the transfer time, under 2 % for 8-member rings. */
#define COLL_NCCL_MAX_CHUNKS 512
/* Slices a connection holds in flight: NCCL_STEPS [nccl]
 * src/include/device.h. */
#define COLL_NCCL_FIFO_SLOTS 8

/* The efficiency (fraction of the raw scale-up bandwidth) of one rank's
 * send/recv traffic on one node: `peers` peers of `peer_bytes` each, on
 * the channels NCCL gives them (src/enqueue.cc addP2pToPlan, src/graph/
 * paths.cc), each channel moving at most COLL_NCCL_P2P_CH_GBPS; never above
 * NCCL's NVLink view (link_eff).  On several nodes every peer gets the
 * network's per-peer channels (coll_nccl_p2p_net_efficiency).  O(log S). */
double coll_nccl_p2p_efficiency(const coll_nccl_model *m, uint64_t peer_bytes, int peers);

/* The pipeline fill of a send/recv between two processes on one node, us:
 * without a direct pointer to the peer's user buffer (ranks in different
 * processes, src/transport/p2p.cc P2P_SAME_PID) each step passes through
 * the connection's FIFO slot in two copies, the sender's into the slot
 * and the receiver's out of it (src/device/prims_simple.h; the slot is
 * NCCL_P2P_NVL_CHUNKSIZE, 512 KiB, src/init.cc), so one step of one of
 * them is not overlapped: one step (or the whole part, when smaller) at a
 * channel's copy rate.  0 on several nodes (the network's proxy steps
 * are priced elsewhere) and without NVLink.  O(log S). */
double coll_nccl_p2p_fill_us(const coll_nccl_model *m, uint64_t peer_bytes);

/* The ring's drain between processes on one node, us: a ring step lands
 * in the receiver's FIFO slot and the receiver copies it out (to its
 * output, and on to the next rank in the same pass); the copy of the
 * last slice has nothing left to overlap with (src/device/prims_simple.h,
 * src/transport/p2p.cc: without P2P_DIRECT the peer's output is not
 * mapped), so one slice at a channel's copy rate is added.  The slice is
 * the primitive's: a channel's share of one step (S / (n x channels),
 * broadcast and reduce S / channels), at most the chunk, over
 * SlicePerChunk (2; 1 for broadcast and reduce), at least sliceSteps
 * steps / 32.  buffsize: NCCL_BUFFSIZE.  Simple protocol only (LL and
 * LL128 forward line by line); 0 on several nodes (not checked there) and
 * without NVLink.  O(1). */
double coll_nccl_ring_drain_us(const coll_nccl_model *m, coll_nccl_func f, uint64_t s, uint64_t buffsize);

/* The efficiency (fraction of a GPU's NIC rate) of one rank's send/recv
 * traffic to `net_peers` peers on other nodes, `peer_bytes` each: the
 * channels NCCL gives a network peer (src/graph/paths.cc, src/enqueue.cc;
 * fewer on larger communicators), each moving NCCL's own per-channel
 * network figure, NCCL_P2P_PER_CHANNEL_NET_BW (14 GB/s); at most 1;
 * times comm.net_efficiency when that is measured.  On one node: 1.
 * O(log S). */
double coll_nccl_p2p_net_efficiency(const coll_nccl_model *m, uint64_t peer_bytes, int net_peers);

/* One channel's copy rate, GB/s: a channel is one thread block, which
 * copies each step of its connection [MEASURED: public nccl-tests
 * sendrecv on one node, busbw / NCCL's channel count: H100
 * (xxrjun/nccl-tests-cluster @455de4f, 8 GPUs) 4 channels 81.8 GB/s, 8
 * channels 162.5; B200 (mit-orcd/orcd-benchmarks @bca7147) 4 channels
 * 84.2, 16 channels 329.8, 32 channels 636: 19.9-21.1 per channel on both
 * generations; no public source states it].  The send/recv channels
 * (nccl_p2p.c) and the ring's channels across nodes
 * (coll_nccl_ring_copy_GBps) move at most this each. */
#define COLL_NCCL_CH_COPY_GBPS 20.3

/* Channels per communicator at most [nccl] src/include/device.h
 * MAXCHANNELS; a ring graph holds half of them (src/init.cc). */
#define COLL_NCCL_MAXCHANNELS 32

/* The ring graph NCCL's topology search builds for a communicator of
 * several nodes, before ncclTopoPostset duplicates its channels
 * (src/graph/search.cc ncclTopoCompute and ncclTopoDupChannels): returns
 * the graph's channels (graphs[RING]->nChannels, what ncclTopoTuneModel
 * multiplies and caps) and sets *speed_GBps to its per-channel bandwidth
 * (bwInter); one NIC per GPU, the search's speed whose floor(NIC rate per
 * GPU / speed) channels carry the most (the higher speed on a tie); 0 (and
 * 0 GB/s) on one node.  O(speeds). */
int coll_nccl_net_graph(const coll_nccl_comm *c, double *speed_GBps);

/* The ring channels NCCL's topology search gives a communicator of
 * several nodes (comm->nChannels; src/graph/search.cc ncclTopoCompute and
 * ncclTopoDupChannels, src/graph/connect.cc ncclTopoPostset), from the
 * NIC rate per GPU, the GPUs per node and NCCL's NVLink view, assuming
 * one NIC per GPU and the search's first speed at or below the NIC rate;
 * 0 on one node.  O(1). */
int coll_nccl_net_ring_channels(const coll_nccl_comm *c);

/* The bus bandwidth, GB/s, the thread blocks of NCCL's ring can move on
 * several nodes: coll_nccl_net_ring_channels (or comm.channels when set)
 * x COLL_NCCL_CH_COPY_GBPS; it
 * bounds the simulated Simple ring (coll_nccl_efficiency), not NCCL's
 * choice; 0 on one node.  O(1). */
double coll_nccl_ring_copy_GBps(const coll_nccl_comm *c);

/* The channels of the communicator as NCCL's init sets them (one node:
 * the ring graph's, duplicated by ncclTopoDupChannels and ncclTopoPostset;
 * several: coll_nccl_net_ring_channels), at least 1.  O(1). */
int coll_nccl_comm_channels(const coll_nccl_comm *c);

/* nccl_launch.c.  The channels (thread blocks) NCCL launches a collective
 * of S bytes (nccl-tests' S; NCCL's nBytes, the whole buffer for
 * all-gather and reduce-scatter) on with (a, p): comm_channels, fewer
 * while S < channels x threads x the protocol's per-thread threshold
 * (src/enqueue.cc getAlgoInfo, NCCL <= 2.12 and later alike).  A100 ring
 * LL, 8 ranks: one channel per 32 KiB (64 KiB -> 2, 512 KiB -> 16).
 * O(channels). */
int coll_nccl_launch_channels(coll_nccl_algo a, coll_proto p, uint64_t s, int n_ranks, int comm_channels);

/* The host thread's cost in us of launching one collective for one GPU:
 * launch_us, plus, in NCCL versions before 2.13 (nccl_version in
 * NCCL_VERSION_CODE form, e.g. 20909 for 2.9.9; <= 0 = the version the
 * tuner follows, 2.29), the work-FIFO slot the host fills per launched
 * channel (0.244 us each, nccl_launch.c).  O(1). */
double coll_nccl_host_launch_us(double launch_us, int nccl_version, int launched_channels);

/* Payload bytes of one pipeline slice of (f, a, p) on one channel, as
 * NCCL's calcCollChunking (src/enqueue.cc) sizes it: stepSize =
 * buffSizes[p] / NCCL_STEPS (8); Simple ring slices are sliceSteps steps
 * (1 for broadcast and reduce, 2 for the others), LL carries half of a
 * step (flag words), LL128 15/16.  buffsize: NCCL_BUFFSIZE of the Simple
 * protocol (default 4 MiB); LL and LL128 use their fixed buffers.  O(1). */
uint64_t coll_nccl_slice_bytes(coll_nccl_func f, coll_nccl_algo a, coll_proto p, uint64_t buffsize);

/* The tree's chunk for S bytes on nch channels and a tree of the given
 * depth: the Simple slice halved while the tree would hold too few chunks
 * (calcCollChunking's "Optimize chunkSize / nSteps" loop for the tree:
 * below depth x 8 chunks per channel down to 128 KiB, below depth x 4 down
 * to 64 KiB, below depth down to 32 KiB); LL and LL128 as
 * coll_nccl_slice_bytes.  O(log S). */
uint64_t coll_nccl_tree_chunk_bytes(coll_proto p, uint64_t buffsize, uint64_t s, int nch, int depth);

/* The bytes one loop of NCCL's one-node NVLS kernel moves over all its
 * CTAs: NCCL_NVLS_CHUNKSIZE (128 KiB) shrunk for small sizes as
 * calcCollChunking does for NVLS (src/enqueue.cc; per CTA, concurrentOps =
 * the heads) to 64, 32 or 16 KiB, times the heads and the CTAs.  O(1). */
uint64_t coll_nccl_nvls_loop_bytes(int sm, int heads, uint64_t s);

/* The bytes one loop of NCCL's NVLS-tree kernel moves over all its CTAs
 * on `nodes` nodes: calcCollChunking's NVLS_TREE chunk (src/enqueue.cc,
 * 32-256 KiB, at most 64 KiB on >= 4 nodes, sized on one CTA's share)
 * times the heads and NCCL's NVLS CTAs.  O(1). */
uint64_t coll_nccl_nvls_tree_loop_bytes(int sm, int heads, int nodes, uint64_t s);

G_END_DECLS
#endif
