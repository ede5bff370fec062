/* nccl_tuner.c: the NCCL cost model (the tuner) (see coll_nccl.h and
 * doc/collectives.md "The NCCL model").  Every constant below is tagged
 * with its source; [nccl] means NVIDIA/nccl at commit 5067397 (master of
 * 2026-06-11), file src/graph/tuning.cc unless another file is named.
 * The structure follows ncclTopoTuneModel / ncclTopoGetAlgoTime, and the
 * ring graphs its topology search builds on one node and across nodes
 * (src/graph/search.cc); the code is wisp's.  Every function is O(1) (the
 * tables are 6 x 8 x 3; the speed arrays 13 and 19 long).
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "collectives/libraries/nccl/coll_nccl.h"

static const char *const algo_names[COLL_NALGO_COUNT] = { "tree", "ring", "collnet_direct", "collnet_chain",
                                                          "nvls", "nvls_tree", "pat", "p2p" };
static const char *const proto_names[COLL_PROTO_COUNT] = { "LL", "LL128", "Simple" };

const char *coll_nccl_algo_name(coll_nccl_algo a)
{
  return (int)a >= 0 && a < COLL_NALGO_COUNT ? algo_names[a] : "?";
}

const char *coll_proto_name(coll_proto p)
{
  return (int)p >= 0 && p < COLL_PROTO_COUNT ? proto_names[p] : "?";
}

gboolean coll_nccl_algo_from_name(const char *s, int *out)
{
  if (s == NULL)
    return FALSE;
  if (g_ascii_strcasecmp(s, "auto") == 0) {
    *out = COLL_NALGO_AUTO;
    return TRUE;
  }
  if (g_ascii_strcasecmp(s, "nvlstree") == 0 || g_ascii_strcasecmp(s, "nvls-tree") == 0) {
    *out = COLL_NALGO_NVLS_TREE;
    return TRUE;
  }
  for (int a = 0; a < COLL_NALGO_COUNT; a++)
    if (g_ascii_strcasecmp(s, algo_names[a]) == 0) {
      *out = a;
      return TRUE;
    }
  return FALSE;
}

gboolean coll_proto_from_name(const char *s, int *out)
{
  if (s == NULL)
    return FALSE;
  if (g_ascii_strcasecmp(s, "auto") == 0) {
    *out = COLL_PROTO_AUTO;
    return TRUE;
  }
  for (int p = 0; p < COLL_PROTO_COUNT; p++)
    if (g_ascii_strcasecmp(s, proto_names[p]) == 0) {
      *out = p;
      return TRUE;
    }
  return FALSE;
}

/* ---- NCCL's constants ---------------------------------------------------- */

enum { HW_NVLINK = 0, HW_PCI, HW_NET, HW_COUNT };

/* Base latency in us per algorithm x protocol (LL, LL128, Simple)
 * [nccl] ncclTunerConstantsDefaults.baseLatencies. */
static const double base_lat[COLL_NALGO_COUNT][COLL_PROTO_COUNT] = {
  { 6.8, 14.0, 8.4 }, /* tree */
  { 6.6, 14.0, 8.4 }, /* ring */
  { 0, 0, 0 },        /* collnet direct */
  { 0, 0, 0 },        /* collnet chain */
  { 0, 0, 0 },        /* nvls */
  { 0, 0, 0 },        /* nvls tree */
  { 8.0, 8.0, 8.0 },  /* pat */
  { 0, 0, 0 },        /* p2p (wisp): no base latency beyond the launch */
};

/* Per-hop latency in us by link type [nccl] hwLatencies (NVLINK, PCI,
 * NET); the p2p row (wisp) uses the ring's Simple figures. */
static const double hw_lat[HW_COUNT][COLL_NALGO_COUNT][COLL_PROTO_COUNT] = {
  { { 0.6, 1.25, 4.0 }, { 0.6, 1.9, 3.4 }, { 0, 0, 3.7 }, { 0, 0, 2.8 }, { 0, 0, 25 }, { 0, 0, 25 }, { 0, 0, 4.0 },
    { 3.4, 3.4, 3.4 } },
  { { 1.0, 1.9, 4.0 }, { 1.0, 2.5, 5.7 }, { 0, 0, 3.7 }, { 0, 0, 2.8 }, { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 4.0 },
    { 5.7, 5.7, 5.7 } },
  { { 5.0, 8.5, 14 }, { 2.7, 4.0, 14.0 }, { 0, 0, 31 }, { 0, 0, 30 }, { 0, 0, 18 }, { 0, 0, 20.9 }, { 0, 0, 14 },
    { 14.0, 14.0, 14.0 } },
};

/* Per-architecture tables, index 0 Volta, 1 Ampere, 2 Hopper, 3 Blackwell;
 * second index: 1 node, 2 nodes, more [nccl]. */
static const double ll_max_bw[4][3] = { { 39.0, 39.0, 20.4 }, { 87.7, 22.5, 19.0 }, { 141.0, 45.0, 35.0 },
                                        { 282.0, 90.0, 70.0 } };
static const double per_ch_ring_ll128[4][3] = { { 20, 20, 20 }, { 20, 20, 20 }, { 36.7, 36.7, 36.7 },
                                                { 40, 40, 40 } };
static const double per_ch_tree_ll128[4][3] = { { 20, 20, 20 }, { 20, 20, 20 }, { 36.7, 36.7, 29.0 },
                                                { 55.6, 31.67, 20.0 } };
static const double per_ch_tree[4][3] = { { 26.5, 18.5, 10.0 }, { 24.0, 23.6, 17.8 }, { 38.7, 41.4, 36.0 },
                                          { 70.0, 42.8, 24.0 } };
static const double per_ch_nvls_tree[4][3] = { { 26.5, 18.5, 10.0 }, { 24.0, 23.6, 17.8 }, { 0.0, 57.7, 45.5 },
                                               { 0.0, 96.0, 80.0 } };
/* NVLS efficiency [nccl] nvlsEfficiency (Volta and Ampere have no NVLS). */
static const double nvls_eff[4] = { 0.0, 0.0, 0.85, 0.74 };
/* NCCL's NVLink rate per link in GB/s [nccl] src/graph/topo.h
 * SM70/SM80/SM90/SM100_NVLINK_BW. */
static const double nccl_nvlink_bw[4] = { 20.0, 20.0, 20.6, 40.1 };
/* Tree correction by log2(S / 64), 64 B .. 256 MiB [nccl]
 * treeCorrectionFactor (rows LL, LL128, Simple). */
static const double tree_corr[COLL_PROTO_COUNT][24] = {
  { 1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0 },
  { 1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0 },
  { .9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9 },
};
/* Ring channels: NCCL's graph search duplicates channels up to
 * MAXCHANNELS/2 = 16 on NVLink nodes [nccl] src/graph/search.cc
 * ncclTopoCompute + src/include/device.h MAXCHANNELS 32; wisp takes 16
 * on NVLink and 2 per NIC otherwise [ASSUMPTION]. */
#define NCCL_RING_CHANNELS_NVLINK 16
/* A bandwidth no link reaches, GB/s: the other link type's, so that a
 * link type's efficiency sees its own bandwidth only. */
#define NCCL_UNBOUND_GBPS 1e12
/* NVLS channels: min(NCCL_MAX_NVLS_ARITY = 32, local GPUs) [nccl]
 * src/graph/search.cc, src/include/device.h. */
#define NCCL_MAX_NVLS_ARITY 32

/* NCCL's intra-node ring search speeds in GB/s per channel, highest first
 * [nccl] src/graph/search.cc speedArrayIntra, sm90SpeedArrayIntra,
 * sm100SpeedArrayIntra; a ring graph holds at most MAXCHANNELS / 2 = 16
 * channels (src/init.cc ringGraph->maxChannels). */
static const double intra_speeds[3][13] = {
  { 40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0 },
  { 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0, 0, 0 },
  { 90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0, 0 },
};
#define NCCL_RING_GRAPH_MAX_CHANNELS 16

static int arch_index(int sm)
{
  return sm >= 100 ? 3 : sm >= 90 ? 2 : sm >= 80 ? 1 : 0;
}

double coll_nccl_nvlink_GBps(int sm)
{
  return nccl_nvlink_bw[arch_index(sm)];
}

/* NCCL's inter-node ring search speeds in GB/s, highest first [nccl]
 * src/graph/search.cc speedArrayInter, sm90SpeedArrayInter,
 * sm100SpeedArrayInter (NCCL 2.29.2). */
static const double inter_speeds[3][19] = {
  { 48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.4, 1.2, 0.24, 0.12 },
  { 48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12, 0, 0 },
  { 96.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12, 0 },
};

/* The channels NCCL's search fits at `speed` GB/s per channel: each NIC
 * carries floor(nic / speed) of them (at least one); each GPU forwards
 * every channel but the one it leaves the node on over NVLink, so NCCL's
 * NVLink view caps them at view x ppn / ((ppn - 1) speed); at most
 * MAXCHANNELS / 2 (src/init.cc ringGraph->maxChannels).  Both counts are
 * bounded before they become integers, so an unbounded rate
 * (coll_nccl_efficiency's one-link models) cannot overflow.  O(1). */
static int graph_channels_at(const coll_nccl_comm *c, int ppn, double nic, double speed)
{
  int nch = ppn * MAX(1, (int)MIN(nic / speed, (double)COLL_NCCL_MAXCHANNELS));
  if (ppn > 1 && c->nvlink) {
    double view = c->intra_GBps * (c->link_GBps > 0 ? MIN(1.0, coll_nccl_nvlink_GBps(c->sm) / c->link_GBps) : 1.0);
    nch = MIN(nch, MAX(1, (int)MIN(view * ppn / ((ppn - 1) * speed), (double)COLL_NCCL_MAXCHANNELS)));
  }
  return MIN(nch, COLL_NCCL_MAXCHANNELS / 2);
}

int coll_nccl_net_graph(const coll_nccl_comm *c, double *speed_GBps)
{
  int nodes = MAX(c->n_nodes, 1), ppn = MAX(c->n_ranks / nodes, 1);
  double nic = c->nic_GBps / ppn;
  *speed_GBps = 0.0;
  if (nodes < 2 || nic <= 0)
    return 0;
  const double *sp = inter_speeds[c->sm >= 100 ? 2 : c->sm >= 90 ? 1 : 0];
  /* The search tries its speeds from the highest down and keeps the
   * graph that carries the most, channels x speed (ncclTopoCompute); the
   * higher speed on a tie (within rounding: 16 x 3 is 1 x 48).  Speeds
   * above the NIC rate fit no channel; below the lowest speed, one
   * channel per NIC at it. */
  double speed = 0.0, best = 0.0;
  for (int i = 0; i < 19 && sp[i] > 0; i++) {
    if (sp[i] <= nic) {
      double carry = graph_channels_at(c, ppn, nic, sp[i]) * sp[i];
      if (carry > best * (1.0 + 1e-9)) {
        best = carry;
        speed = sp[i];
      }
    }
    if (speed == 0.0 && (i == 18 || sp[i + 1] <= 0))
      speed = sp[i];
  }
  int nch = graph_channels_at(c, ppn, nic, speed);
  /* ncclTopoDupChannels: doubled at >= 25 GB/s, except on sm > 80 below
   * 50 GB/s with more than 4 channels. */
  if (speed >= 25.0 && !(c->sm > 80 && speed < 50.0 && nch > 4)) {
    int dup = MIN(2 * nch, COLL_NCCL_MAXCHANNELS / 2);
    speed /= (dup + nch - 1) / nch;
    nch = dup;
  }
  *speed_GBps = speed;
  return nch;
}

int coll_nccl_net_ring_channels(const coll_nccl_comm *c)
{
  double speed = 0.0;
  int nch = coll_nccl_net_graph(c, &speed);
  if (nch == 0)
    return 0;
  /* src/graph/connect.cc ncclTopoPostset: doubled again; on sm >= 90
   * with a ring above 45 GB/s per channel and under 16 channels, once
   * more. */
  nch = MIN(COLL_NCCL_MAXCHANNELS, 2 * nch);
  if (c->sm >= 90 && speed > 45.0 && nch < 16)
    nch = MIN(COLL_NCCL_MAXCHANNELS, 2 * nch);
  return nch;
}


/* The bus bandwidth the thread blocks of NCCL's ring move across nodes:
 * one block per channel (comm->nChannels, coll_nccl_net_ring_channels)
 * copies every step its channel carries, at most COLL_NCCL_CH_COPY_GBPS
 * each, so the ring's bus bandwidth is at most channels x that rate.
 * NCCL's tuner does not count it (its ring bus is the graph's channels x
 * bwInter), so it bounds the simulated rate, not NCCL's choice.  It binds
 * where the ring has two channels per NIC and direction: 8 GPUs per node
 * with a 400 Gb/s NIC each (16 channels, 324.8 GB/s of the 8 NICs' 400;
 * xxrjun/nccl-tests-cluster @455de4f, 10 x 8 H100, NCCL 2.29.2: all-gather
 * 324.3 and reduce-scatter 323.4 GB/s busbw at 16 GiB); with 1, 2 or 4
 * GPUs per node NCCL doubles its channels again ("4 compute channels per
 * search channel to reach peak BW on <8 PPN", src/graph/connect.cc
 * ncclTopoPostset) and the NIC binds (10 x 1/2/4: 48.9/97.9/195.4 GB/s).
 * Channels a config sets (comm.channels, as NCCL_MIN_NCHANNELS would)
 * count instead of the derived ones.  0 on one node (not bound there:
 * NCCL's one-node rings have more channels than wisp counts).  O(1). */
double coll_nccl_ring_copy_GBps(const coll_nccl_comm *c)
{
  int nch = coll_nccl_net_ring_channels(c);
  if (nch > 0 && c->channels > 0)
    nch = c->channels;
  return nch * COLL_NCCL_CH_COPY_GBPS;
}

static int log2i(int n)
{
  int l = 0;
  while (n > 1) {
    n >>= 1;
    l++;
  }
  return l;
}

/* NCCL's one-node ring graph (src/graph/search.cc ncclTopoCompute): its
 * speed per channel (bwIntra), its channels in *nch (0 when no speed
 * fits: then the view).  The search starts at the highest
 * speed at or below the GPU's NVLink bandwidth in NCCL's view and packs
 * floor(view / speed) channels of that speed (at most 16); lower speeds
 * are kept only when they carry more in total.  Below the view whenever
 * the speeds do not divide it: H100 (18 x 20.6 = 370.8 GB/s) 6 x 60 =
 * 360, A100 (240) 6 x 40 = 240, B200 (721.8) 8 x 90 = 720.  O(1). */
static double ring_search_graph(int sm, double view, int *nch)
{
  const double *sp = intra_speeds[sm >= 100 ? 2 : sm >= 90 ? 1 : 0];
  double best = 0;
  *nch = 0;
  for (int i = 0; i < 13 && sp[i] > 0; i++) {
    if (sp[i] > view)
      continue;
    int k = MIN((int)(view / sp[i]), NCCL_RING_GRAPH_MAX_CHANNELS);
    if (k * sp[i] > best) {
      best = k * sp[i];
      *nch = k;
    }
  }
  return best > 0 ? best / MAX(*nch, 1) : view;
}

/* The bus bandwidth of that graph, nChannels x bwIntra.  O(1). */
static double ring_search_bus(int sm, double view)
{
  int nch = 0;
  double speed = ring_search_graph(sm, view, &nch);
  return nch > 0 ? nch * speed : view;
}

/* The channels of a one-node communicator as NCCL's init sets them: the
 * ring graph's (ring_search_graph), doubled by ncclTopoDupChannels when
 * its speed is >= 25 GB/s (src/graph/search.cc, the same sm > 80
 * exception as coll_nccl_net_graph), then doubled again by
 * ncclTopoPostset (src/graph/connect.cc), at most MAXCHANNELS.  A100
 * (240 GB/s in NCCL's view): 6 x 40 -> 12 -> 24, as NCCL 2.9's own search
 * (SM80_NVLINK_WIDTH 21 x 12 = 252: 6 x 42 -> 12 -> 24).  On several
 * nodes, coll_nccl_net_ring_channels.  O(1). */
int coll_nccl_comm_channels(const coll_nccl_comm *c)
{
  if (c->n_nodes > 1)
    return MAX(1, coll_nccl_net_ring_channels(c));
  int ai = arch_index(c->sm);
  double eff = c->nvlink && c->link_GBps > 0 ? MIN(1.0, nccl_nvlink_bw[ai] / c->link_GBps) : 1.0;
  int nch = 0;
  double speed = ring_search_graph(c->sm, c->intra_GBps * eff, &nch);
  if (nch == 0)
    return 1;
  if (speed >= 25.0 && !(c->sm > 80 && speed < 50.0 && nch > 4))
    nch = MIN(2 * nch, COLL_NCCL_MAXCHANNELS / 2);
  return MIN(COLL_NCCL_MAXCHANNELS, 2 * nch);
}

static int n_steps(coll_nccl_func f, int n)
{
  if (f == COLL_NFUNC_ALL_REDUCE)
    return 2 * (n - 1);
  if (f == COLL_NFUNC_REDUCE_SCATTER || f == COLL_NFUNC_ALL_GATHER)
    return n - 1;
  return n;
}

/* Which (function, algorithm, protocol) NCCL considers at all
 * (ncclTopoTuneModel's loops and enable rules). */
static gboolean considered(const coll_nccl_model *m, coll_nccl_func f, coll_nccl_algo a, coll_proto p)
{
  const coll_nccl_comm *c = &m->comm;
  if (f == COLL_NFUNC_P2P)
    return a == COLL_NALGO_P2P && p == COLL_PROTO_SIMPLE;
  if (a == COLL_NALGO_P2P || a == COLL_NALGO_COLLNET_DIRECT || a == COLL_NALGO_COLLNET_CHAIN || a == COLL_NALGO_PAT)
    return FALSE; /* CollNet and PAT are not modelled */
  if ((f == COLL_NFUNC_BROADCAST || f == COLL_NFUNC_REDUCE) && a != COLL_NALGO_RING)
    return FALSE;
  if ((f == COLL_NFUNC_ALL_GATHER || f == COLL_NFUNC_REDUCE_SCATTER) && a != COLL_NALGO_RING && a != COLL_NALGO_NVLS)
    return FALSE;
  if ((a == COLL_NALGO_NVLS || a == COLL_NALGO_NVLS_TREE) && (p != COLL_PROTO_SIMPLE || !c->nvls ||
                                                              m->nvls_channels < 2))
    return FALSE;
  /* NVLS-tree is off on one node; NVLS across nodes needs CollNet. */
  if (a == COLL_NALGO_NVLS_TREE && c->n_nodes == 1)
    return FALSE;
  if (a == COLL_NALGO_NVLS && c->n_nodes > 1)
    return FALSE;
  /* LL128 is on by default on NVLink systems from Volta on (NCCL enables
   * it per path type; wisp assumes paths that allow it). */
  if (p == COLL_PROTO_LL128 && (c->sm < 70 || !c->nvlink))
    return FALSE;
  return TRUE;
}

/* On more than two nodes NCCL's tuner takes the ring graph's bwInter as
 * its bus bandwidth (src/graph/tuning.cc ncclTopoTuneModel: nChannels x
 * bwInter of graphs[a], for every algorithm), and bwInter is the search's
 * speed per channel, the first of its speed array at or below the NIC
 * rate per GPU (src/graph/search.cc: 48 GB/s for a 400 Gb/s NIC, not its
 * 50; 24 for 200 Gb/s), halved when ncclTopoDupChannels doubles the
 * channels (coll_nccl_net_graph).  On two nodes NCCL takes bwIntra, which
 * its search may raise above bwInter (not modelled: *bus keeps the NIC
 * rate).  The NVLink-only model of coll_nccl_efficiency (NIC unbounded)
 * keeps the NVLink view.  Not taken: the graph's channel count for the
 * LL128 and tree caps per channel (measured, doc/collectives.md "Wave
 * h27g").  O(1). */
static void net_graph_bus(const coll_nccl_comm *c, double intra_view, double *bus)
{
  double speed = 0.0;
  int gch = coll_nccl_net_graph(c, &speed);
  if (gch > 0 && c->n_nodes > 2 && c->nic_GBps < NCCL_UNBOUND_GBPS)
    *bus = MIN(intra_view, gch * speed);
}

void coll_nccl_model_build(const coll_nccl_comm *c, coll_nccl_model *m)
{
  memset(m, 0, sizeof *m);
  m->comm = *c;
  int n = MAX(c->n_ranks, 1), nodes = MAX(c->n_nodes, 1);
  double ppn = (double)n / nodes;
  int ai = arch_index(c->sm);
  int i2 = nodes <= 2 ? nodes - 1 : 2;
  /* LL: one node looks at the GPU, several at the CPU (x86 Intel
   * assumed: index 0) [nccl]. */
  double ll_max = ll_max_bw[nodes == 1 ? ai : 0][i2];
  m->link_eff = c->nvlink && c->link_GBps > 0 ? MIN(1.0, nccl_nvlink_bw[ai] / c->link_GBps) : 1.0;
  double intra_view = c->intra_GBps * m->link_eff;
  m->channels = c->channels > 0 ? c->channels
                                : c->nvlink ? NCCL_RING_CHANNELS_NVLINK : MAX(2, 2 * (int)ceil(c->nic_GBps / 50.0));
  m->nvls_channels = MIN(NCCL_MAX_NVLS_ARITY, (int)ppn);
  double graph_bus = nodes == 1 ? intra_view : MIN(intra_view, c->nic_GBps);
  int nch = m->channels, nvch = MAX(m->nvls_channels, 1);
  double plain_bus = graph_bus;
  net_graph_bus(c, intra_view, &graph_bus);
  m->net_quant = plain_bus > 0 && graph_bus < plain_bus ? graph_bus / plain_bus : 1.0;
  for (int f = 0; f < COLL_NFUNC_COUNT; f++) {
    int ns = n_steps((coll_nccl_func)f, n);
    for (int a = 0; a < COLL_NALGO_COUNT; a++)
      for (int p = 0; p < COLL_PROTO_COUNT; p++) {
        if (!considered(m, (coll_nccl_func)f, (coll_nccl_algo)a, (coll_proto)p))
          continue;
        double bus = graph_bus;
        if (a == COLL_NALGO_RING && nodes == 1 && c->nvlink)
          bus = ring_search_bus(c->sm, intra_view);
        if (a == COLL_NALGO_NVLS || a == COLL_NALGO_NVLS_TREE) {
          double intra = intra_view / nvch * nvls_eff[ai] * (nvch - 1) / nvch;
          intra *= f == COLL_NFUNC_ALL_REDUCE ? 2.0 : (ppn - 1) / ppn;
          double bw = intra;
          if (nodes > 1) {
            double inter = c->nic_GBps / nvch * (nodes <= 2 && a == COLL_NALGO_NVLS_TREE ? 2.0 : 1.0);
            bw = MIN(bw, inter);
          }
          if (a == COLL_NALGO_NVLS_TREE)
            bw = MIN(bw, per_ch_nvls_tree[ai][i2]);
          bus = nvch * bw;
        }
        if (a == COLL_NALGO_RING && p == COLL_PROTO_LL)
          bus = MIN(ll_max, bus * 0.5);
        if (a == COLL_NALGO_RING && p == COLL_PROTO_LL128)
          bus = MIN(bus * 0.92, nch * per_ch_ring_ll128[ai][i2]);
        if (a == COLL_NALGO_TREE && f == COLL_NFUNC_ALL_REDUCE)
          bus = MIN(bus * 0.92, nch * per_ch_tree[ai][i2]);
        if (a == COLL_NALGO_TREE && p == COLL_PROTO_LL)
          bus = MIN(bus / 3.8, ll_max);
        if (a == COLL_NALGO_TREE && p == COLL_PROTO_LL128)
          bus = MIN(bus * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), nch * per_ch_tree_ll128[ai][i2]);
        /* Bus to algorithm bandwidth. */
        if (!(a != COLL_NALGO_RING && (f == COLL_NFUNC_ALL_GATHER || f == COLL_NFUNC_REDUCE_SCATTER))) {
          if (a == COLL_NALGO_RING || a == COLL_NALGO_NVLS || a == COLL_NALGO_NVLS_TREE)
            bus *= (double)n / ns;
          else if (a == COLL_NALGO_TREE)
            bus *= 0.5;
        }
        m->bw_GBps[f][a][p] = bus;
        /* Latency. */
        int intra_hw = c->nvlink ? HW_NVLINK : HW_PCI;
        double lat = base_lat[a][p];
        double intra_lat = hw_lat[intra_hw][a][p];
        double inter_lat = (ppn <= 1.0 ? hw_lat[HW_NET][COLL_NALGO_TREE][p] : hw_lat[HW_NET][a][p]) + c->net_lat_us;
        if (p == COLL_PROTO_SIMPLE)
          inter_lat += c->net_lat_us; /* the flush [nccl] */
        if (a == COLL_NALGO_RING) {
          if (f == COLL_NFUNC_BROADCAST || f == COLL_NFUNC_REDUCE) {
            lat += hw_lat[nodes == 1 ? intra_hw : HW_NET][a][p]; /* same channels [nccl] */
          } else {
            double ovh = nodes > 1 ? c->net_overhead_us * (p == COLL_PROTO_SIMPLE ? 3 : 1) : 0.0;
            double il = MAX(intra_lat, ovh);
            int n_inter = nodes == 1 ? 0 : f == COLL_NFUNC_ALL_REDUCE ? 2 * (nodes - 1) : nodes - 1;
            lat += (ns - n_inter) * il + n_inter * inter_lat;
          }
        } else if (a == COLL_NALGO_TREE) {
          lat += 2 * ((ppn - 1) * intra_lat + log2i(nodes) * inter_lat);
        } else if (a == COLL_NALGO_NVLS) {
          lat = intra_lat + (nodes > 1 ? inter_lat : 0.0);
        } else if (a == COLL_NALGO_NVLS_TREE) {
          lat += intra_lat + 2 * log2i(nodes) * inter_lat;
        } else if (a == COLL_NALGO_P2P) {
          /* wisp: one send/recv step per peer round, on its link type. */
          lat += (nodes == 1 ? intra_lat : hw_lat[HW_NET][a][p]) * (n - 1);
        }
        m->lat_us[f][a][p] = lat;
      }
  }
}

/* NCCL's plateau factor and tree correction (ncclTopoGetAlgoTime). */
static double lat_factor(const coll_nccl_model *m, coll_nccl_func f, coll_nccl_algo a, coll_proto p, uint64_t s)
{
  if (a == COLL_NALGO_RING && p == COLL_PROTO_SIMPLE && m->comm.n_nodes > 1 && f == COLL_NFUNC_ALL_REDUCE &&
      s / ((uint64_t)m->channels * (uint64_t)MAX(m->comm.n_ranks, 1)) >= 64)
    return m->comm.sm < 80 ? 1.9 : 1.4;
  return 1.0;
}

double coll_nccl_time_us(const coll_nccl_model *m, coll_nccl_func f, coll_nccl_algo a, coll_proto p, uint64_t s)
{
  if ((int)f < 0 || f >= COLL_NFUNC_COUNT || (int)a < 0 || a >= COLL_NALGO_COUNT || (int)p < 0 ||
      p >= COLL_PROTO_COUNT)
    return -1.0;
  double bw = m->bw_GBps[f][a][p];
  if (bw <= 0)
    return -1.0;
  int ls = s >= 64 ? log2i((int)MIN(s >> 6, (uint64_t)G_MAXINT)) : -1;
  if (a == COLL_NALGO_TREE && f == COLL_NFUNC_ALL_REDUCE && ls >= 0 && ls < 23)
    bw *= tree_corr[p][ls];
  return m->lat_us[f][a][p] * lat_factor(m, f, a, p, s) + (double)s / (1000.0 * bw);
}

gboolean coll_nccl_select_by(coll_nccl_time_fn time_us, const coll_nccl_model *m, coll_nccl_func f, uint64_t s,
                             int force_algo, int force_proto, coll_nccl_algo *a_out, coll_proto *p_out)
{
  double best = -1, best_forced = -1;
  coll_nccl_algo ba = f == COLL_NFUNC_P2P ? COLL_NALGO_P2P : COLL_NALGO_RING, bfa = ba;
  coll_proto bp = COLL_PROTO_SIMPLE, bfp = bp;
  /* Ties go to the lower (algorithm, protocol) index, as NCCL's scan. */
  for (int a = 0; a < COLL_NALGO_COUNT; a++)
    for (int p = 0; p < COLL_PROTO_COUNT; p++) {
      double t = time_us(m, f, (coll_nccl_algo)a, (coll_proto)p, s);
      if (t < 0)
        continue;
      if (best < 0 || t < best) {
        best = t;
        ba = (coll_nccl_algo)a;
        bp = (coll_proto)p;
      }
      if ((force_algo == COLL_NALGO_AUTO || force_algo == a) && (force_proto == COLL_PROTO_AUTO || force_proto == p) &&
          (best_forced < 0 || t < best_forced)) {
        best_forced = t;
        bfa = (coll_nccl_algo)a;
        bfp = (coll_proto)p;
      }
    }
  if (f == COLL_NFUNC_P2P) {
    *a_out = COLL_NALGO_P2P;
    *p_out = COLL_PROTO_SIMPLE;
    return force_algo == COLL_NALGO_AUTO && (force_proto == COLL_PROTO_AUTO || force_proto == COLL_PROTO_SIMPLE);
  }
  *a_out = best_forced >= 0 ? bfa : ba;
  *p_out = best_forced >= 0 ? bfp : bp;
  return best_forced >= 0;
}

gboolean coll_nccl_select(const coll_nccl_model *m, coll_nccl_func f, uint64_t s, int force_algo, int force_proto,
                          coll_nccl_algo *a_out, coll_proto *p_out)
{
  return coll_nccl_select_by(coll_nccl_time_us, m, f, s, force_algo, force_proto, a_out, p_out);
}

static double efficiency_of(const coll_nccl_model *m, coll_nccl_func f, coll_nccl_algo a, coll_proto p,
                            gboolean inter, uint64_t s)
{
  const coll_nccl_comm *c = &m->comm;
  int n = MAX(c->n_ranks, 1), nodes = MAX(c->n_nodes, 1);
  double bw = m->bw_GBps[f][a][p];
  double link = inter ? 1.0 : m->link_eff;
  if (bw <= 0 || a == COLL_NALGO_P2P)
    return link;
  /* Tree: wisp's double binary tree, pipelined in NCCL's chunks, sends
   * and receives about 2 S per rank and direction, as NCCL's tree ratio
   * (algorithm bandwidth = bus / 2) assumes, so the general rule below
   * applies; NCCL's size-dependent tree correction scales it. */
  double corr = 1.0;
  int ls = s >= 64 ? log2i((int)MIN(s >> 6, (uint64_t)G_MAXINT)) : -1;
  if (a == COLL_NALGO_TREE && f == COLL_NFUNC_ALL_REDUCE && ls >= 0 && ls < 23)
    corr = tree_corr[p][ls];
  /* Undo the bus-to-algorithm ratio, then divide by the raw bus
   * bandwidth of the same graph in NCCL's view. */
  int ns = n_steps(f, n);
  double bus = bw;
  if (!(a != COLL_NALGO_RING && (f == COLL_NFUNC_ALL_GATHER || f == COLL_NFUNC_REDUCE_SCATTER))) {
    if (a == COLL_NALGO_RING || a == COLL_NALGO_NVLS || a == COLL_NALGO_NVLS_TREE)
      bus /= (double)n / ns;
    else if (a == COLL_NALGO_TREE)
      bus /= 0.5;
  }
  double intra_view = c->intra_GBps * m->link_eff;
  double base = nodes == 1 ? intra_view : MIN(intra_view, c->nic_GBps);
  double ppn = (double)n / nodes;
  double nvls_ch = MAX(m->nvls_channels, 2); /* NVLS needs 2 (considered()) */
  if (a == COLL_NALGO_NVLS) {
    /* NVLS's doubling is the in-switch reduction itself, which the
     * simulated schedule already has; the rest is efficiency.  For
     * all-reduce NCCL's per-channel figure also carries (nCh - 1) / nCh
     * (nCh = the GPUs): with the doubling it counts 2 (n - 1) / n S per
     * GPU, the ring-equivalent traffic of busbw's convention, so that its
     * algorithm bandwidth is nvlsEfficiency x NVLink whatever n.  wisp's
     * schedule carries the physical S (1 + 1/n) per direction (coll_sched.c
     * NVLS), whose own-share term is that same correction; keeping
     * (nCh - 1) / nCh as an efficiency counted it twice (one H100 node,
     * xxrjun/nccl-tests-cluster: 8 GPUs 429 vs 482 GB/s, 4 GPUs 283 vs 367;
     * without it 489 and 377).  So only nvlsEfficiency remains here.
     * All-gather and reduce-scatter keep NCCL's figure: their schedule
     * carries (n - 1) / n S, so their simulated algorithm bandwidth is
     * already nvlsEfficiency x NVLink, as NCCL's. */
    base = intra_view * (f == COLL_NFUNC_ALL_REDUCE ? 2.0 * (nvls_ch - 1) / nvls_ch : (ppn - 1) / ppn);
  } else if (a == COLL_NALGO_TREE && nodes > 1 && ppn > 1) {
    /* wisp's plan of NCCL's tree on several nodes (nccl_plan.c): ring
     * reduce-scatter and all-gather inside the node, 2 (ppn - 1) / ppn S
     * per NVLink direction, and a double binary tree between the nodes,
     * S / ppn per NIC and direction on two nodes, 2 S / ppn on more. */
    double ratio = 2.0 * (n - 1) / n;
    base = MIN(ratio * intra_view * ppn / (2.0 * (ppn - 1)), ratio * c->nic_GBps * (nodes <= 2 ? 1.0 : 0.5));
  } else if (a == COLL_NALGO_TREE && nodes > 1 && ppn > 1 && f == COLL_NFUNC_ALL_REDUCE) {
    /* wisp's plan of NCCL's tree on several nodes (nccl_plan.c): ring
     * reduce-scatter and all-gather inside the node, 2 (ppn - 1) / ppn S
     * per NVLink direction, and a double binary tree between the nodes,
     * S / ppn per NIC and direction on two nodes, 2 S / ppn on more. */
    double ratio = 2.0 * (n - 1) / n;
    base = MIN(ratio * intra_view * ppn / (2.0 * (ppn - 1)), ratio * c->nic_GBps * (nodes <= 2 ? 1.0 : 0.5));
  } else if (a == COLL_NALGO_NVLS_TREE) {
    /* The raw bus bandwidth of wisp's NVLS-tree plan on the same links:
     * NVLink carries S (1 + 1/ppn) per direction (multimem reduce and
     * store, coll_sched nvls_paired), a GPU's NIC S / ppn per direction
     * on two nodes (the tree is one exchange) and 2 S / ppn on more (a
     * double binary tree: each node is inner in one tree, sending up once
     * and down twice), as NCCL's own bwInter doubling on two nodes. */
    double ratio = 2.0 * (n - 1) / n;
    base = MIN(ratio * intra_view / (1.0 + 1.0 / ppn), ratio * c->nic_GBps * (nodes <= 2 ? 1.0 : 0.5));
  }
  double e = base > 0 ? corr * bus / base : 1.0;
  /* A measured network share (library.net_efficiency, applied by
   * coll_nccl_efficiency) takes the place of the ring graph's
   * quantisation on the wire: the search's speed stands for what a ring
   * achieves over the NIC only while nothing measured it (a 400 Gb/s NIC
   * gives 48 GB/s of 50; xxrjun's 10 x 1 GPU all-reduce reaches 48.8).
   * The tuner's tables, hence NCCL's choice, keep it. */
  if (inter && m->comm.net_efficiency > 0 && (a == COLL_NALGO_RING || a == COLL_NALGO_TREE))
    e /= m->net_quant;
  e = MIN(MAX(e, 1e-3), 1.0);
  return link * e;
}


/* On several nodes each link type's efficiency comes from a model in
 * which the other type never binds (its bandwidth NCCL_UNBOUND_GBPS, the
 * channels kept): NCCL's bus bandwidth is min(fraction x min(NVLink,
 * NIC), caps) (the LL/LL128/tree caps are absolute GB/s), and dividing it
 * by min(NVLink, NIC) gave the faster link cap x its own / the slower
 * link's bandwidth, which shrinks as the slower link gets faster: on
 * perlmutter (NVLink view 240, Slingshot 100 GB/s per node) ring/LL is
 * capped at 20.4 GB/s, so doubling Slingshot halved NVLink's efficiency
 * (0.163 -> 0.082) and an 8 KiB all-gather went 43.7 -> 45.6 us.  Now a
 * link carries at most min(fraction x its own, caps): the same as before
 * on the bottleneck link (the collective's rate is unchanged), never more
 * than the caps allow on the other, and monotone in every bandwidth. */
double coll_nccl_efficiency(const coll_nccl_model *m, coll_nccl_func f, coll_nccl_algo a, coll_proto p,
                            gboolean inter, uint64_t s)
{
  if (m->comm.n_nodes <= 1)
    return efficiency_of(m, f, a, p, inter, s);
  coll_nccl_comm c = m->comm;
  c.channels = m->channels;
  if (inter)
    c.intra_GBps = NCCL_UNBOUND_GBPS;
  else
    c.nic_GBps = NCCL_UNBOUND_GBPS;
  coll_nccl_model *own = g_new(coll_nccl_model, 1);
  coll_nccl_model_build(&c, own);
  double e = efficiency_of(own, f, a, p, inter, s);
  g_free(own);
  /* A calibrated config's measured share of the NIC's line rate
   * (library.net_efficiency), after NCCL's view, which keeps the line
   * rate (cal_nccl.h). */
  if (inter && c.net_efficiency > 0)
    e *= MIN(c.net_efficiency, 1.0);
  /* The ring's thread blocks (coll_nccl_ring_copy_GBps, counted on the
   * communicator itself): Simple, the protocol the copy rate was measured
   * on; the bound is a bus bandwidth, so a share of the link's raw rate. */
  double raw = inter ? m->comm.nic_GBps : m->comm.intra_GBps;
  double copy = coll_nccl_ring_copy_GBps(&m->comm);
  if (a == COLL_NALGO_RING && p == COLL_PROTO_SIMPLE && copy > 0 && raw > 0)
    e = MIN(e, copy / raw);
  return e;
}

void coll_nccl_latency(const coll_nccl_model *m, coll_nccl_func f, coll_nccl_algo a, coll_proto p, uint64_t s,
                       double *base_us, double *hop_us)
{
  /* The network latency a plugin reports (comm.net_lat_us, NCCL's graph
   * latencyInter) is an input of the tuner's choice; the simulated time
   * has the network's own route latencies instead.  So the hop latencies
   * here are NCCL's hardware figures without it. */
  coll_nccl_model *m0 = NULL;
  if (m->comm.net_lat_us != 0.0) {
    coll_nccl_comm c0 = m->comm;
    c0.net_lat_us = 0.0;
    m0 = g_new(coll_nccl_model, 1);
    coll_nccl_model_build(&c0, m0);
    m = m0;
  }
  double lat = m->lat_us[f][a][p] * lat_factor(m, f, a, p, s);
  g_free(m0);
  double base = a == COLL_NALGO_NVLS ? 0.0 : base_lat[a][p];
  *base_us = MIN(base, lat);
  *hop_us = lat - *base_us;
}

/* The reference wire of one NCCL hop, us.  NCCL's figures hold the
 * network's latency: the tuner adds a net plugin's reported latency only
 * beyond them (src/graph/tuning.cc: interLat += graphs[a]->latencyInter),
 * NCCL's IB and socket transports report 0 (src/transport/net_ib/init.cc,
 * net_socket.cc: "Not set") and the example plugin says 0 means "use
 * default NCCL values" (plugins/net/example/plugin.c).  NCCL gives no
 * figure for the wire alone, so the reference is the route of wisp's DGX
 * presets, the systems those figures are tuned on [ASSUMPTION:
 * presets/dgx-*.yaml, whose latencies are assumptions themselves]:
 * GPU-NVSwitch-GPU 2 x 500 ns, GPU-IB switch-GPU 2 x 1 us.  PCI has no
 * preset: 0 (its figures read as the endpoints' own). */
#define NCCL_REF_WIRE_NVLINK_US 1.0
#define NCCL_REF_WIRE_NET_US 2.0

void coll_nccl_wire_of(const coll_nccl_model *m, coll_nccl_func f, coll_nccl_algo a, coll_nccl_wire *out)
{
  const coll_nccl_comm *c = &m->comm;
  int n = c->n_ranks, nodes = MAX(c->n_nodes, 1);
  int ppn = n / nodes;
  double intra = 0, inter = 0;
  /* The hops ncclTopoTuneModel's latency counts (coll_nccl_model_build). */
  switch (a) {
  case COLL_NALGO_RING:
    if (f == COLL_NFUNC_BROADCAST || f == COLL_NFUNC_REDUCE) {
      intra = nodes == 1 ? 1 : 0;
      inter = nodes == 1 ? 0 : 1;
    } else {
      inter = nodes == 1 ? 0 : f == COLL_NFUNC_ALL_REDUCE ? 2 * (nodes - 1) : nodes - 1;
      intra = n_steps(f, n) - inter;
    }
    break;
  case COLL_NALGO_TREE:
    intra = 2.0 * (ppn - 1);
    inter = 2.0 * log2i(nodes);
    break;
  case COLL_NALGO_NVLS:
    intra = 1;
    inter = nodes > 1 ? 1 : 0;
    break;
  case COLL_NALGO_NVLS_TREE:
    intra = 1;
    inter = 2.0 * log2i(nodes);
    break;
  case COLL_NALGO_P2P:
    intra = nodes == 1 ? n - 1 : 0;
    inter = nodes == 1 ? 0 : n - 1;
    break;
  default:
    break;
  }
  *out = (coll_nccl_wire){ c->nvlink ? NCCL_REF_WIRE_NVLINK_US : 0.0, NCCL_REF_WIRE_NET_US, MAX(intra, 0.0),
                           MAX(inter, 0.0) };
}
