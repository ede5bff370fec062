/* nccl_p2p.c: NCCL's send/recv in the NCCL model: the channels a peer
 * gets on NVLink and across nodes, the rate of one connection (proxy and
 * network chunk), the efficiencies the plan puts on p2p transfers, and
 * the copy delays of GPUs in separate processes (the p2p FIFO fill and the
 * ring's end drain).  Split from nccl_tuner.c (the collective cost model);
 * the constants are tagged with their sources as there ([nccl]: NVIDIA/nccl
 * at the commit nccl_tuner.c names).  Every function is O(1) or O(log
 * channels).
 */
#include "config.h"


#include "collectives/libraries/nccl/coll_nccl.h"

#define NCCL_STEPS COLL_NCCL_FIFO_SLOTS

/* NCCL's send/recv channels (src/enqueue.cc addP2pToPlan, src/graph/paths.cc
 * ncclTopoComputeP2pChannels): a peer over NVLink gets 2 channels per
 * NVLink-worth of path bandwidth (ncclTopoGetNchannels), rounded up to a
 * power of 2 and capped at the communicator's p2p channels (MAXCHANNELS
 * 32 [nccl] src/include/device.h); an operation starts on nChannelsMin =
 * per-peer channels halved until n x nChannelsMin fits the p2p channels,
 * at least ceil(bytes / minPartSize) of them, and doubles while a part
 * exceeds maxPartSize (one node: minPartSize = stepSize / 8, maxPartSize
 * = 32 stepSize, stepSize = NCCL_P2P_NVL_CHUNKSIZE 512 KiB [nccl]
 * src/init.cc).  Each channel is one thread block copying; its rate is
 * COLL_NCCL_P2P_CH_GBPS. */
#define NCCL_P2P_NVL_CHUNK (512u * 1024u)
/* One channel's copy rate: COLL_NCCL_CH_COPY_GBPS (coll_nccl.h). */
#define COLL_NCCL_P2P_CH_GBPS COLL_NCCL_CH_COPY_GBPS
/* NCCL_P2P_NET_CHUNKSIZE, the step of a send/recv on several nodes
 * [nccl] src/init.cc (128 KiB; twice that on Arm hosts with sm >= 100,
 * not modelled). */
#define NCCL_P2P_NET_CHUNK (128u * 1024u)
/* NCCL_P2P_PER_CHANNEL_NET_BW: the rate NCCL counts on one send/recv
 * channel to move over the network, GB/s, used to size the channels per
 * network peer [nccl] src/graph/paths.cc (14, NCCL 2.29.2).  wisp takes
 * it as that channel's rate: one thread block copies each step into and
 * out of the network FIFO.  Checked against public sendrecv tables
 * (xxrjun/nccl-tests-cluster @455de4f, H100 + 400 Gb/s NIC per GPU, NCCL
 * 2.29.2): 10 nodes x 1/2/4 GPUs, 2 channels per peer by the rule below,
 * real 24.9/25.2/26.2 GB/s (28 modelled); 10 x 8 GPUs, 1 channel, real
 * 15.2 (14 modelled); 2 nodes, 4 channels, the NIC's line rate. */
#define NCCL_P2P_PER_CHANNEL_NET_BW 14
#define COLL_NCCL_P2P_NET_CH_GBPS ((double)NCCL_P2P_PER_CHANNEL_NET_BW)

static int pow2_up(int v)
{
  int p = 1;
  while (p < v)
    p <<= 1;
  return p;
}

/* The channels of one operation of `peer_bytes` (src/enqueue.cc
 * addP2pToPlan): as many as parts of at least min_part, at most ch_min,
 * doubled (up to per_peer) while a part exceeds max_part.  O(log
 * channels). */
static int op_channels(uint64_t peer_bytes, int ch_min, int per_peer, uint64_t min_part, uint64_t max_part)
{
  uint64_t want = MAX((peer_bytes + min_part - 1) / min_part, (uint64_t)1);
  int nch = (int)MIN((uint64_t)ch_min, want);
  uint64_t part = MAX(min_part, (peer_bytes + (uint64_t)nch - 1) / (uint64_t)nch);
  while (part > max_part && nch <= per_peer / 2) {
    nch *= 2;
    part = (peer_bytes + (uint64_t)nch - 1) / (uint64_t)nch;
  }
  return nch;
}

/* The channels of one send or receive of `peer_bytes` on several nodes
 * (NCCL 2.29.2, src/graph/paths.cc ncclTopoGetNchannels and
 * ncclTopoComputeP2pChannels, src/enqueue.cc scheduleP2pTasksToPlan and
 * addP2pToPlan): p2p channels = the ring channels rounded up to a power
 * of 2; per peer, the fewest over the peers: a network peer gets
 * ceil(NIC GB/s / NCCL_P2P_PER_CHANNEL_NET_BW) (at least one per NIC), an
 * NVLink peer 2 per NVLink-worth; halved while per-peer x ceil(ranks / 8)
 * exceeds the p2p channels (8 = NCCL_MAX_DEV_WORK_P2P_PER_BATCH); an
 * operation starts on that halved again until ranks x it fits, at least
 * one per 64 KiB, and doubles while a part exceeds 128 KiB
 * (NCCL_P2P_NET_CHUNKSIZE; minPart = half of it).  *p2p_ch gets the p2p
 * channels.  O(log S). */
static int p2p_net_op_channels(const coll_nccl_model *m, uint64_t peer_bytes, int *p2p_ch)
{
  const coll_nccl_comm *c = &m->comm;
  int n = MAX(c->n_ranks, 1), nodes = MAX(c->n_nodes, 1), ppn = MAX(n / nodes, 1);
  int ring = coll_nccl_net_ring_channels(c);
  int p2p = pow2_up(MIN(MAX(ring, 1), COLL_NCCL_MAXCHANNELS));
  double nic = c->nic_GBps / ppn;
  int per_peer = MAX(1, ((int)nic + NCCL_P2P_PER_CHANNEL_NET_BW - 1) / NCCL_P2P_PER_CHANNEL_NET_BW);
  if (ppn > 1 && c->nvlink && c->link_GBps > 0) {
    double nvl = coll_nccl_nvlink_GBps(c->sm);
    per_peer = MIN(per_peer, 2 * MAX(1, (int)(c->intra_GBps * m->link_eff / nvl)));
  }
  per_peer = pow2_up(per_peer);
  while (per_peer * ((n + 7) / 8) > p2p && per_peer > 1)
    per_peer /= 2;
  int ch_min = per_peer;
  while (ch_min * n > p2p && ch_min > 1)
    ch_min /= 2;
  *p2p_ch = p2p;
  return op_channels(peer_bytes, ch_min, per_peer, NCCL_P2P_NET_CHUNK / 2, NCCL_P2P_NET_CHUNK);
}

/* The network rate of one send/recv connection (one peer), GB/s: its
 * steps pass one after another through the proxy thread, which posts each
 * filled step and completes it (src/transport/net.cc sendProxyProgress /
 * recvProxyProgress), and NCCL's own model charges a network step three
 * network overheads on Simple (src/graph/tuning.cc: netOverhead x 3,
 * getNetOverhead 1 us on x86 Intel, 2 us on AMD; wisp's
 * library.net_overhead), so a peer's steps complete at most one per
 * 3 x overhead.  A send/recv step is NCCL_P2P_NET_CHUNKSIZE (128 KiB), a
 * quarter of it for an operation under one chunk and half of it under
 * eight (src/enqueue.cc addP2pToPlan, network peers): 43.7 GB/s per peer
 * at 1 us for large operations, below a 400 Gb/s NIC's 50; peers proceed
 * side by side, so all-to-all with several network peers is not bound.
 * No bound when the overhead is 0.  O(1). */
static double p2p_proxy_GBps(const coll_nccl_comm *c, uint64_t peer_bytes)
{
  if (c->net_overhead_us <= 0)
    return G_MAXDOUBLE;
  uint64_t chunk = NCCL_P2P_NET_CHUNK;
  if (peer_bytes < NCCL_P2P_NET_CHUNK)
    chunk /= 4;
  else if (peer_bytes < 8 * (uint64_t)NCCL_P2P_NET_CHUNK)
    chunk /= 2;
  return (double)chunk / (3.0 * c->net_overhead_us * 1e3);
}

double coll_nccl_p2p_net_efficiency(const coll_nccl_model *m, uint64_t peer_bytes, int net_peers)
{
  const coll_nccl_comm *c = &m->comm;
  int nodes = MAX(c->n_nodes, 1), ppn = MAX(c->n_ranks / nodes, 1);
  double nic = c->nic_GBps / ppn;
  if (nodes < 2 || nic <= 0 || net_peers < 1)
    return 1.0;
  int p2p = 0;
  int nch = p2p_net_op_channels(m, peer_bytes, &p2p);
  int total = MIN(p2p, nch * net_peers);
  double e = MIN(1.0, total * COLL_NCCL_P2P_NET_CH_GBPS / nic);
  e = MIN(e, net_peers * p2p_proxy_GBps(c, peer_bytes) / nic);
  /* A calibrated config's measured share of the line rate (as
   * coll_nccl_efficiency); NCCL's channels keep the line rate. */
  return c->net_efficiency > 0 ? e * MIN(c->net_efficiency, 1.0) : e;
}

/* The channels of one send or receive of `peer_bytes` to an NVLink peer
 * on one node (src/enqueue.cc scheduleP2pTasksToPlan, addP2pToPlan): the
 * per-peer channels (2 per NVLink-worth, a power of 2, at most
 * MAXCHANNELS), halved until n ranks fit the p2p channels, at least one
 * per minPartSize, doubled while a part exceeds maxPartSize.  O(log S). */
static int p2p_nvl_op_channels(const coll_nccl_model *m, uint64_t peer_bytes)
{
  const coll_nccl_comm *c = &m->comm;
  int n = MAX(c->n_ranks, 1);
  double nvl = c->link_GBps > 0 ? c->link_GBps : 1.0;
  int per_peer = MIN(COLL_NCCL_MAXCHANNELS, pow2_up(2 * MAX(1, (int)(c->intra_GBps / nvl))));
  int ch_min = per_peer;
  while (ch_min * n > COLL_NCCL_MAXCHANNELS && ch_min > 1)
    ch_min /= 2;
  return op_channels(peer_bytes, ch_min, per_peer, NCCL_P2P_NVL_CHUNK / 8, (uint64_t)NCCL_P2P_NVL_CHUNK * 32);
}

double coll_nccl_p2p_efficiency(const coll_nccl_model *m, uint64_t peer_bytes, int peers)
{
  const coll_nccl_comm *c = &m->comm;
  if (!c->nvlink || c->intra_GBps <= 0 || peers < 1)
    return m->link_eff;
  if (c->n_nodes > 1) {
    /* Several nodes: every peer gets the network's per-peer channels. */
    int p2p = 0;
    int nch = p2p_net_op_channels(m, peer_bytes, &p2p);
    double e = MIN(p2p, nch * peers) * COLL_NCCL_P2P_CH_GBPS / c->intra_GBps;
    return MIN(e, m->link_eff);
  }
  int total = MIN(COLL_NCCL_MAXCHANNELS, p2p_nvl_op_channels(m, peer_bytes) * peers);
  double e = total * COLL_NCCL_P2P_CH_GBPS / c->intra_GBps;
  return MIN(e, m->link_eff);
}

/* One channel's copy of `bytes`, us: COLL_NCCL_P2P_CH_GBPS, the rate of
 * one thread block copying (measured on send/recv, see there). */
static double channel_copy_us(uint64_t bytes)
{
  return (double)bytes / (COLL_NCCL_P2P_CH_GBPS * 1e3);
}

double coll_nccl_p2p_fill_us(const coll_nccl_model *m, uint64_t peer_bytes)
{
  const coll_nccl_comm *c = &m->comm;
  if (!c->nvlink || c->intra_GBps <= 0 || c->n_nodes > 1 || peer_bytes == 0)
    return 0.0;
  int nch = p2p_nvl_op_channels(m, peer_bytes);
  uint64_t part = (peer_bytes + (uint64_t)nch - 1) / (uint64_t)nch;
  return channel_copy_us(MIN(part, (uint64_t)NCCL_P2P_NVL_CHUNK));
}

double coll_nccl_ring_drain_us(const coll_nccl_model *m, coll_nccl_func f, uint64_t s, uint64_t buffsize)
{
  const coll_nccl_comm *c = &m->comm;
  if (!c->nvlink || c->n_nodes > 1 || s == 0 || f == COLL_NFUNC_P2P)
    return 0.0;
  uint64_t n = (uint64_t)MAX(c->n_ranks, 1), nch = (uint64_t)MAX(m->channels, 1);
  uint64_t step = MAX(buffsize, (uint64_t)NCCL_STEPS) / NCCL_STEPS;
  gboolean one = f == COLL_NFUNC_BROADCAST || f == COLL_NFUNC_REDUCE;
  /* A channel's share of one ring step, at most the chunk (chunkSteps
   * steps: 1 for broadcast and reduce, NCCL_STEPS / 2 for the others
   * [nccl] src/include/collectives.h); broadcast and reduce move the
   * whole buffer each step. */
  uint64_t part = one ? s / nch : s / (n * nch);
  part = MIN(part, one ? step : step * (NCCL_STEPS / 2));
  /* The primitive's slice [nccl] src/device/prims_simple.h: the chunk
   * over SlicePerChunk (2, or 1 for broadcast and reduce) rounded to 16
   * bytes, at least a 32nd of sliceSteps steps, at most the chunk. */
  uint64_t per_chunk = one ? 1 : 2, slice_steps = one ? 1 : NCCL_STEPS / 4;
  uint64_t slice = MAX((part + 16 * per_chunk - 1) / (16 * per_chunk) * 16, step * slice_steps / 32);
  return channel_copy_us(MIN(slice, part));
}

