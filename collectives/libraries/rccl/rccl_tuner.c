/* rccl_tuner.c: RCCL's tuner, tuning model 5 (MI300X), on NCCL's model
 * tables (see coll_rccl.h for which model and why).  The constants are
 * RCCL's, read from ROCm/rccl @9e22c79 src/graph/tuning.cc and src/misc/rccl_wrap.cc (tag [rccl]);
 * the rules follow ncclTopoTuneModel and ncclTopoGetAlgoTime as compiled
 * for AMD (__HIP_PLATFORM_AMD__).  Every function is O(1).
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "collectives/libraries/rccl/coll_rccl.h"

enum { HW_NVLINK = 0, HW_PCI, HW_NET, HW_COUNT };

/* Base latency in us, tree and ring, (LL, LL128, Simple) [rccl] baseLat. */
static const double base_lat[COLL_PROTO_COUNT] = { 12.0, 12.0, 17.0 };

/* tuning_model_5.hwLat for the tree and the ring (rows NVLINK = xGMI,
 * PCI, NET; LL, LL128, Simple) [rccl]. */
static const double hw_lat_tree[HW_COUNT][COLL_PROTO_COUNT] = { { 0.9, 0.9, 2.3 }, { 2.2, 2.2, 5.7 },
                                                                { 10.5, 10.5, 25.0 } };
static const double hw_lat_ring[HW_COUNT][COLL_PROTO_COUNT] = { { 0.8, 0.8, 2.1 }, { 2.2, 2.2, 5.7 },
                                                                { 9.5, 9.5, 320.0 } };

/* tuning_model_5.bwRatio, first index <= 2 nodes / more [rccl]. */
static const double bw_ratio_tree[2][COLL_PROTO_COUNT] = { { 0.06, 0.06, 0.11 }, { 0.06, 0.06, 0.59 } };
static const double bw_ratio_ring[2][COLL_PROTO_COUNT] = { { 0.08, 0.08, 1.00 }, { 0.08, 0.08, 1.00 } };

/* tuning_model_5 correction factors by log2(S / 64), 27 entries (64 B ..
 * 4 GiB), the last for every larger size [rccl]. */
#define RCCL_CORR_N 27
#define RCCL_TREE_LL { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 1.0, 1.0, 1.0, 1.0, 0.6, 1.0, 0.9, \
                       1.0, 1.0, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 }
#define RCCL_RING_LL { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 0.2, 1.0, \
                       0.4, 0.4, 0.1, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 }
static const double tree_corr[COLL_PROTO_COUNT][RCCL_CORR_N] = {
  RCCL_TREE_LL,
  RCCL_TREE_LL, /* LL128: the same row */
  { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1,
    0.1, 0.7, 1.0, 1.0, 1.0, 1.0, 1.0, 0.7, 0.7, 0.5, 0.6, 0.6, 0.6 },
};
static const double ring_corr[COLL_PROTO_COUNT][RCCL_CORR_N] = {
  RCCL_RING_LL,
  RCCL_RING_LL, /* LL128: the same row */
  { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1,
    0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 0.8, 1.0, 1.0, 1.0 },
};

/* tuning_model_5.llProtoRanges: on >= 2 nodes RCCL overrides the
 * protocol by the bytes per rank (src/misc/rccl_wrap.cc
 * rcclUpdateCollectiveProtocol): LL in (min, max], else LL128 in its range
 * when enabled (never here), else Simple.  Rows reduce-scatter,
 * all-gather, all-reduce [rccl]. */
static const uint64_t ll_range[3][2] = { { 0, 655360 }, { 0, 98304 }, { 0, 1048576 } };

/* Broadcast and reduce ring/LL on one gfx94x node: busBw x 1.65 [rccl]. */
#define RCCL_GFX94_BCAST_LL 1.65

/* NCCL's log2i (floor, 0 for 0). */
static int log2i(uint64_t n)
{
  int l = 0;
  while (n >>= 1)
    l++;
  return l;
}

static int n_steps(coll_nccl_func f, int n)
{
  if (f == COLL_NFUNC_ALL_REDUCE)
    return 2 * (n - 1);
  if (f == COLL_NFUNC_REDUCE_SCATTER || f == COLL_NFUNC_ALL_GATHER)
    return n - 1;
  return n;
}

/* Which pairs RCCL considers on an MI300X platform: ring for every
 * collective, tree for all-reduce (not with Simple on one node), LL and
 * Simple only; the wisp p2p row for send/recv. */
static gboolean considered(const coll_nccl_model *m, coll_nccl_func f, coll_nccl_algo a, coll_proto p)
{
  if (f == COLL_NFUNC_P2P)
    return a == COLL_NALGO_P2P && p == COLL_PROTO_SIMPLE;
  if (p == COLL_PROTO_LL128)
    return FALSE;
  if (a == COLL_NALGO_RING)
    return TRUE;
  return a == COLL_NALGO_TREE && f == COLL_NFUNC_ALL_REDUCE && !(p == COLL_PROTO_SIMPLE && m->comm.n_nodes <= 1);
}

/* The bandwidth ratio of (a, p) (the protocol's share of RCCL's graph
 * bandwidth), with the gfx94x broadcast/reduce LL boost; 0 otherwise. */
static double ratio_of(const coll_nccl_model *m, coll_nccl_func f, coll_nccl_algo a, coll_proto p)
{
  int i2 = m->comm.n_nodes <= 2 ? 0 : 1;
  double r = a == COLL_NALGO_TREE ? bw_ratio_tree[i2][p] : a == COLL_NALGO_RING ? bw_ratio_ring[i2][p] : 1.0;
  if (a == COLL_NALGO_RING && p == COLL_PROTO_LL && (f == COLL_NFUNC_BROADCAST || f == COLL_NFUNC_REDUCE) &&
      m->comm.n_nodes <= 1)
    r *= RCCL_GFX94_BCAST_LL;
  return r;
}

/* RCCL's latency of (f, a, p) for communicator c (ncclTopoTuneModel):
 * baseLat, then per hop on the critical path; the network hop of a
 * one-GPU-per-node communicator takes the tree's figure, plus the net
 * plugin's latency (twice with Simple: the flush). */
static double latency_of(const coll_nccl_comm *c, coll_nccl_func f, coll_nccl_algo a, coll_proto p)
{
  int n = MAX(c->n_ranks, 1), nodes = MAX(c->n_nodes, 1);
  int ppn = n / nodes;
  int intra_hw = c->nvlink ? HW_NVLINK : HW_PCI;
  /* wisp: one send/recv step per peer round.  RCCL's tuner has no
   * send/recv row; its ring/Simple network figure (320 us) only keeps the
   * ring off the network below 256 MiB, so the step takes model 5's
   * tree/Simple figures (xGMI 2.3 us, network 25 us) [ASSUMPTION]. */
  if (a == COLL_NALGO_P2P)
    return hw_lat_tree[nodes == 1 ? intra_hw : HW_NET][COLL_PROTO_SIMPLE] * (n - 1);
  const double(*hw)[COLL_PROTO_COUNT] = a == COLL_NALGO_TREE ? hw_lat_tree : hw_lat_ring;
  double lat = base_lat[p];
  double intra_lat = hw[intra_hw][p];
  double inter_lat = (ppn == 1 ? hw_lat_tree[HW_NET][p] : hw[HW_NET][p]) + c->net_lat_us;
  if (p == COLL_PROTO_SIMPLE)
    inter_lat += c->net_lat_us;
  if (a == COLL_NALGO_TREE)
    return lat + 2 * ((ppn - 1) * intra_lat + log2i((uint64_t)nodes) * inter_lat);
  if (f == COLL_NFUNC_BROADCAST || f == COLL_NFUNC_REDUCE)
    return lat + hw[nodes == 1 ? intra_hw : HW_NET][p]; /* same channels, as NCCL's branch */
  if (nodes > 1)
    intra_lat = MAX(intra_lat, c->net_overhead_us * (p == COLL_PROTO_SIMPLE ? 3 : 1));
  int ni = nodes == 1 ? 0 : f == COLL_NFUNC_ALL_REDUCE ? 2 * (nodes - 1) : nodes - 1;
  return lat + (n_steps(f, n) - ni) * intra_lat + ni * inter_lat;
}

void coll_rccl_model_build(const coll_nccl_comm *c, coll_nccl_model *m)
{
  memset(m, 0, sizeof *m);
  m->comm = *c;
  int n = MAX(c->n_ranks, 1);
  m->link_eff = c->nvlink && c->link_GBps > 0 ? MIN(1.0, COLL_RCCL_XGMI_GBPS / c->link_GBps) : 1.0;
  m->channels = c->channels > 0 ? c->channels : COLL_RCCL_CHANNELS;
  m->nvls_channels = 0;
  /* Rome-model graphs: nChannels x bwIntra = the GPU's total xGMI
   * bandwidth in RCCL's view, on one node and on several. */
  double total = c->intra_GBps * m->link_eff;
  for (int f = 0; f < COLL_NFUNC_COUNT; f++)
    for (int a = 0; a < COLL_NALGO_COUNT; a++)
      for (int p = 0; p < COLL_PROTO_COUNT; p++) {
        if (!considered(m, (coll_nccl_func)f, (coll_nccl_algo)a, (coll_proto)p))
          continue;
        double bus = total * ratio_of(m, (coll_nccl_func)f, (coll_nccl_algo)a, (coll_proto)p);
        if (a == COLL_NALGO_RING)
          bus *= (double)n / n_steps((coll_nccl_func)f, n);
        else if (a == COLL_NALGO_TREE)
          bus *= 0.5;
        m->bw_GBps[f][a][p] = bus;
        m->lat_us[f][a][p] = latency_of(c, (coll_nccl_func)f, (coll_nccl_algo)a, (coll_proto)p);
      }
}

/* The size correction of ncclTopoGetAlgoTime (AMD): the tree always, the
 * ring on several nodes; 1 otherwise. */
static double correction(const coll_nccl_model *m, coll_nccl_algo a, coll_proto p, uint64_t s)
{
  int ls = MIN(log2i(s >> 6), RCCL_CORR_N - 1);
  if (a == COLL_NALGO_TREE)
    return tree_corr[p][ls];
  if (a == COLL_NALGO_RING && m->comm.n_nodes > 1)
    return ring_corr[p][ls];
  return 1.0;
}

double coll_rccl_time_us(const coll_nccl_model *m, coll_nccl_func f, coll_nccl_algo a, coll_proto p, uint64_t s)
{
  if ((int)f < 0 || f >= COLL_NFUNC_COUNT || (int)a < 0 || a >= COLL_NALGO_COUNT || (int)p < 0 ||
      p >= COLL_PROTO_COUNT)
    return -1.0;
  double bw = m->bw_GBps[f][a][p] * correction(m, a, p, s);
  if (bw <= 0)
    return -1.0;
  return m->lat_us[f][a][p] + (double)s / (1000.0 * bw);
}

gboolean coll_rccl_select(const coll_nccl_model *m, coll_nccl_func f, uint64_t s, int force_algo, int force_proto,
                          coll_nccl_algo *a_out, coll_proto *p_out)
{
  gboolean forced = coll_nccl_select_by(coll_rccl_time_us, m, f, s, force_algo, force_proto, a_out, p_out);
  if (f == COLL_NFUNC_P2P)
    return forced;
  /* On >= 2 nodes model 5's ranges pick the protocol of reduce-scatter,
   * all-gather and all-reduce when none is forced (NCCL_PROTO unset). */
  int row = f == COLL_NFUNC_REDUCE_SCATTER ? 0 : f == COLL_NFUNC_ALL_GATHER ? 1 : f == COLL_NFUNC_ALL_REDUCE ? 2 : -1;
  if (row >= 0 && m->comm.n_nodes >= 2 && force_proto == COLL_PROTO_AUTO) {
    uint64_t per_rank = row == 2 ? s : s / (uint64_t)MAX(m->comm.n_ranks, 1);
    coll_proto want = per_rank > ll_range[row][0] && per_rank <= ll_range[row][1] ? COLL_PROTO_LL : COLL_PROTO_SIMPLE;
    if (coll_rccl_time_us(m, f, *a_out, want, s) >= 0)
      *p_out = want;
  }
  return forced;
}

double coll_rccl_efficiency(const coll_nccl_model *m, coll_nccl_func f, coll_nccl_algo a, coll_proto p,
                            gboolean inter, uint64_t s)
{
  double link = inter ? 1.0 : m->link_eff;
  if (a == COLL_NALGO_P2P || m->bw_GBps[f][a][p] <= 0)
    return link;
  (void)s; /* the size corrections steer the choice only (coll_rccl.h) */
  double e = ratio_of(m, f, a, p);
  return link * MIN(MAX(e, 1e-3), 1.0);
}

void coll_rccl_latency(const coll_nccl_model *m, coll_nccl_func f, coll_nccl_algo a, coll_proto p, uint64_t s,
                       double *base_us, double *hop_us)
{
  (void)s;
  coll_nccl_comm c0 = m->comm;
  c0.net_lat_us = 0.0; /* steers the choice only; the network's latencies are simulated */
  double lat = latency_of(&c0, f, a, p);
  double base = a == COLL_NALGO_P2P ? 0.0 : base_lat[p];
  *base_us = MIN(base, MAX(lat, 0.0));
  *hop_us = MAX(lat - *base_us, 0.0);
}

double coll_rccl_p2p_efficiency(const coll_nccl_model *m, uint64_t peer_bytes, int peers)
{
  (void)peer_bytes;
  (void)peers;
  return m->link_eff;
}

double coll_rccl_p2p_net_efficiency(const coll_nccl_model *m, uint64_t peer_bytes, int net_peers)
{
  (void)m;
  (void)peer_bytes;
  (void)net_peers;
  return 1.0;
}
