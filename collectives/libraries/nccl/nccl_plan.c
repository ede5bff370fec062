/* nccl_plan.c: the NCCL family's plan of a collective (library nccl;
 * doc/collectives.md "The NCCL model"): the communicator the tuner sees
 * (nodes, bandwidths, NVLS), the tuner's choice of algorithm and protocol
 * (nccl_tuner.c), their efficiencies and latencies, the pipeline, rail
 * rings, and the wisp algorithms that carry the choice out; given to the
 * runtime as the family's hooks (coll_nccl_ops).  It sets the run's
 * streamed steps (coll_run.stream) and uses the plan (coll_plan_flat,
 * coll_ring_beta_min); the runtime never calls it by name.
 */
#include "config.h"

#include "collectives/coll_run.h"
#include "collectives/libraries/coll_lib_ops.h"
#include "collectives/libraries/nccl/coll_nccl.h"
#include "collectives/libraries/nccl/coll_nccl_plan.h"

static coll_nccl_func nccl_func_of(coll_prim p)
{
  switch (p) {
  case COLL_PRIM_ALL_REDUCE: return COLL_NFUNC_ALL_REDUCE;
  case COLL_PRIM_REDUCE_SCATTER: return COLL_NFUNC_REDUCE_SCATTER;
  case COLL_PRIM_ALL_GATHER: return COLL_NFUNC_ALL_GATHER;
  case COLL_PRIM_BROADCAST: return COLL_NFUNC_BROADCAST;
  case COLL_PRIM_REDUCE: return COLL_NFUNC_REDUCE;
  default: return COLL_NFUNC_P2P;
  }
}

/* Per-GPU scale-up bandwidth of dimension 0 in bytes/s, per direction:
 * a switch or ring port, every pair of a fully connected node, both
 * directions of a bidirectional ring or torus axis.  O(1). */
static double dim0_gpu_bw(const topo *t)
{
  double bw = (double)topo_dim_bw(t, 0);
  switch (topo_dim_kind(t, 0)) {
  case TOPO_KIND_FULLY_CONNECTED: return bw * (topo_dim_size(t, 0) - 1);
  case TOPO_KIND_RING: return 2 * bw;
  case TOPO_KIND_TORUS2D: return 4 * bw;
  case TOPO_KIND_TORUS3D: return 6 * bw;
  default: return bw;
  }
}

/* The NCCL model's view of the group (coll_nccl_comm) from the topology:
 * a node is a set of ranks with equal coordinates in every dimension but
 * the innermost; one NIC per GPU on dimension 1 (rail-optimised); then
 * NCCL's choice of algorithm and protocol for the collective's S bytes,
 * the plan that algorithm runs (ring: one member order per rail on
 * several nodes; tree: double binary tree; NVLS: in-switch reduction;
 * NVLS-tree: NVLS inside the node, the network between, pipelined),
 * the efficiencies and the latencies.  O(n) time and memory (the rail
 * orders: O(rails * n)). */
/* The nodes of the run's members, numbered in order of first appearance:
 * members share a node when their coordinates above dimension 0 agree
 * (graphs: one node).  node[m] gets member m's node; returns the count.
 * O(n x dims). */
static int nccl_nodes(const coll_rt *c, const coll_run *r, int *node)
{
  const topo *t = c->t;
  int n = r->n;
  int nd = topo_n_dims(t);
  gboolean dims_ok = !topo_is_graph(t) && nd >= 1;
  int64_t *key = g_new(int64_t, (size_t)n);
  int n_nodes = 0;
  GHashTable *seen = g_hash_table_new(g_int64_hash, g_int64_equal);
  for (int m = 0; m < n; m++) {
    int64_t k = 0;
    for (int dd = nd - 1; dd >= 1 && dims_ok; dd--)
      k = k * (int64_t)topo_dim_size(t, dd) + topo_rank_coord(t, r->ranks[m], dd);
    key[m] = k;
    gpointer v = g_hash_table_lookup(seen, &key[m]);
    if (v == NULL) {
      g_hash_table_insert(seen, &key[m], GINT_TO_POINTER(n_nodes + 1));
      node[m] = n_nodes++;
    } else {
      node[m] = GPOINTER_TO_INT(v) - 1;
    }
  }
  g_hash_table_destroy(seen);
  g_free(key);
  return n_nodes;
}

/* The communicator NCCL's tuner sees: ranks, nodes, SM version, NVLink
 * and NIC bandwidths, network latency and overhead, NVLS, channels. */
static void nccl_comm_of(const coll_rt *c, const coll_run *r, int n_nodes, int ppn, coll_nccl_comm *out)
{
  const topo *t = c->t;
  const coll_library_params *lp = &c->pol.lib;
  int n = r->n;
  int nd = topo_n_dims(t);
  gboolean dims_ok = !topo_is_graph(t) && nd >= 1;
  coll_nccl_comm cm = { 0 };
  cm.n_ranks = n;
  cm.n_nodes = n_nodes;
  cm.sm = lp->sm;
  cm.nvlink = dims_ok;
  if (dims_ok) {
    cm.intra_GBps = dim0_gpu_bw(t) / 1e9;
  } else {
    wisp_bw_Bps bw = coll_ring_beta_min(t, r->ranks, n);
    cm.intra_GBps = (double)bw / 1e9;
  }
  cm.link_GBps = lp->nvlink_link_bw > 0 ? (double)lp->nvlink_link_bw / 1e9 : lp->sm >= 100 ? 50.0 : 25.0;
  cm.nic_GBps = dims_ok && nd >= 2 ? (double)ppn * (double)topo_dim_bw(t, 1) / 1e9 : 0.0;
  cm.net_lat_us = (double)lp->net_latency / 1e6;
  cm.net_overhead_us = (double)lp->net_overhead / 1e6;
  cm.nvls = c->pol.in_switch_reduction && dims_ok && topo_dim_kind(t, 0) == TOPO_KIND_SWITCH && lp->sm >= 90;
  cm.channels = lp->channels;
  cm.net_efficiency = lp->net_efficiency;
  *out = cm;
}

/* The reference wire of tuner tn's choice (coll_nccl_wire_of) on run r,
 * for runs on several nodes of the config (one-node runs keep the routes' whole
 * latency on top: no committed one-node table has the small sizes to
 * decide them, doc/collectives.md "Wave l27h"): sets the run's
 * wire_ref_intra / wire_ref_inter (the pipeline's first piece then pays
 * only its routes' latency above them, coll_run_wire_less: NCCL's latency
 * term is that fill) and returns the per-hop latency,
 * us, that the routes below the reference give back: NCCL's hops of each
 * class times the reference less the class's route latency (the route
 * from member 0 to the first member on its node, and to the first on
 * another node; the rail rings and trees join GPUs of one rail), never
 * below zero.  So at the reference the run costs NCCL's latency plus its
 * simulated transfers at every size, above it the routes add what they
 * charge beyond it, below it NCCL's own hop count takes the difference
 * off: continuous at the reference and never decreasing in the latency.
 * 0 and no reference when the tuner reads its figures as the endpoints'
 * own (tn->wire NULL).  O(n + route length). */
/* Whether run r's members sit on more than one node of the config's node
 * structure (topo_node_dims: a DGX-1's two NVLink tiers are one node,
 * though NCCL's view above counts its tiers' groups as nodes).  O(n x
 * dims). */
static gboolean nccl_spans_nodes(const topo *t, const coll_run *r)
{
  if (topo_is_graph(t))
    return FALSE;
  for (int m = 1; m < r->n; m++)
    for (int d = topo_node_dims(t); d < topo_n_dims(t); d++)
      if (topo_rank_coord(t, r->ranks[m], d) != topo_rank_coord(t, r->ranks[0], d))
        return TRUE;
  return FALSE;
}

static double nccl_wire_ref(const coll_rt *c, coll_run *r, const coll_nccl_tuner *tn, const coll_nccl_model *mdl,
                            coll_nccl_func f, coll_nccl_algo a, const int *node)
{
  int mi = -1, mo = -1;
  for (int m = 1; m < r->n && (mi < 0 || mo < 0); m++) {
    if (node[m] == node[0] && mi < 0)
      mi = m;
    if (node[m] != node[0] && mo < 0)
      mo = m;
  }
  if (tn->wire == NULL || mo < 0 || !nccl_spans_nodes(c->t, r))
    return 0.0;
  coll_nccl_wire w;
  tn->wire(mdl, f, a, &w);
  sim_time_ps ri = 0, ro = 0;
  if (!wisp_ps_from_us(w.intra_us, &ri) || !wisp_ps_from_us(w.inter_us, &ro))
    return 0.0;
  r->wire_ref_intra = ri;
  r->wire_ref_inter = ro;
  double back = 0;
  net_hop h;
  if (mi >= 0) {
    net_hop_init(c->n, r->ranks[0], r->ranks[mi], &h);
    back += w.intra_hops * MAX(w.intra_us - (double)h.latency / 1e6, 0.0);
  }
  if (mo >= 0) {
    net_hop_init(c->n, r->ranks[0], r->ranks[mo], &h);
    back += w.inter_hops * MAX(w.inter_us - (double)h.latency / 1e6, 0.0);
  }
  return back;
}

/* The algorithm forced on the tuner: the library's (NCCL_ALGO), else the
 * config's or --algo's wisp name where it names an NCCL algorithm. */
static int nccl_forced_algo(const coll_rt *c, const coll_run *r, int n_nodes)
{
  const coll_library_params *lp = &c->pol.lib;
  int fa = lp->nccl_algo;
  if (fa == COLL_NALGO_AUTO && c->pol.n_algo[r->prim] != 0) {
    coll_algo w = c->pol.algo[r->prim][0];
    if (w == COLL_ALGO_RING || w == COLL_ALGO_RING_BIDIR)
      fa = COLL_NALGO_RING;
    else if (w == COLL_ALGO_DOUBLE_BINARY_TREE)
      fa = COLL_NALGO_TREE;
    else if (w == COLL_ALGO_NVLS)
      fa = n_nodes > 1 ? COLL_NALGO_NVLS_TREE : COLL_NALGO_NVLS;
  }
  return fa;
}

/* The pipeline of the chosen algorithm and protocol: slice bytes of a
 * ring broadcast/reduce, chunk bytes of a tree, and the slices a
 * connection holds in flight (LL/LL128: as fine as COLL_NCCL_MAX_CHUNKS
 * allows; flow tier: one). */
static void nccl_pipeline(const coll_rt *c, coll_run *r, const coll_nccl_model *mdl, coll_nccl_func f,
                          coll_nccl_algo a, coll_proto p, uint64_t s)
{
  const coll_library_params *lp = &c->pol.lib;
  int n = r->n;
  /* Ring broadcast and reduce move one chunk per channel and loop
   * (src/device/broadcast.h, reduce.h: realChunkSize = min(chunkSize,
   * DIVUP(size, nChannels)), one slice of BROADCAST/REDUCE_CHUNKSTEPS 1
   * step); each rank forwards a channel's chunk once it has all of it
   * (prims GenericOp posts the step after the slice), and the channels,
   * one thread block each, do not wait for one another, so their chunks
   * follow each other down the chain instead of crossing each hop
   * together: the pipelined unit is one channel's chunk. */
  if (a == COLL_NALGO_RING && (f == COLL_NFUNC_BROADCAST || f == COLL_NFUNC_REDUCE)) {
    uint64_t ch = (uint64_t)MAX(mdl->channels, 1);
    r->pipe_bytes = MIN(coll_nccl_slice_bytes(f, a, p, lp->buffsize), MAX((s + ch - 1) / ch, (uint64_t)1));
  }
  if (a == COLL_NALGO_TREE) {
    /* NCCL's tree pipelines chunks up and down the tree; wisp's tree
     * depth (levels of a binary tree over n) stands for NCCL's. */
    int depth = 1;
    while ((1 << depth) < n + 1)
      depth++;
    r->pipe_bytes = coll_nccl_tree_chunk_bytes(p, lp->buffsize, s, mdl->channels, depth) *
                    (uint64_t)MAX(mdl->channels, 1);
  }
  /* NVLS-tree pipelines in its own loops across the nodes (all_reduce.h
   * runNvlsTree over calcCollChunking's NVLS_TREE chunk, sized on each
   * CTA's share), not in NCCL_BUFFSIZE pieces. */
  if (a == COLL_NALGO_NVLS_TREE)
    r->pipe_bytes = coll_nccl_nvls_tree_loop_bytes(lp->sm, MAX(mdl->nvls_channels, 1), mdl->comm.n_nodes, s);
  r->fifo_chunks = COLL_NCCL_FIFO_SLOTS;
  if (r->pipe_bytes > 0 && p != COLL_PROTO_SIMPLE) {
    /* LL and LL128 forward each line (8 of 16 bytes, 120 of 128) as soon
     * as its flag arrives (NCCL's LL primitives poll per line), so their
     * pipeline is as fine as the simulation affords: COLL_NCCL_MAX_CHUNKS
     * pieces of at least one 128-byte line; a connection still holds
     * NCCL_STEPS slices in flight, i.e. that many slices' worth of these
     * pieces. */
    uint64_t slices = r->pipe_bytes * COLL_NCCL_FIFO_SLOTS;
    r->pipe_bytes = MAX((uint64_t)128, (r->bytes + COLL_NCCL_MAX_CHUNKS - 1) / COLL_NCCL_MAX_CHUNKS);
    r->fifo_chunks = (int)MIN((uint64_t)G_MAXINT / 64, MAX(slices / r->pipe_bytes, (uint64_t)COLL_NCCL_FIFO_SLOTS));
  } else if (net_get_tier(c->n) == NET_TIER_FLOW) {
    /* The flow tier shares a link max-min fairly among the transfers on
     * it, so slices in flight together would arrive together and the
     * pipeline would not fill one slice at a time; one slice per lane and
     * step in flight keeps NCCL's FIFO order there, at the price of one
     * route latency per slice (under 10 % for a 512 KiB x 16-channel
     * slice at 720 GB/s and 1 us). */
    r->fifo_chunks = 1;
  }
}

/* One ring per rail when the members fill n_nodes nodes of ppn GPUs each
 * (r->lanes, r->lperm, r->linv); nothing when a node holds more or fewer.
 * O(lanes x n). */
static void nccl_rail_rings(coll_run *r, const int *node, int n_nodes, int ppn)
{
  int n = r->n;
  /* One ring per rail: lane l visits node 0 from local rank l up to
   * l-1, node 1 backwards from l-1 to l, and so on, so that every
   * node-to-node hop joins two GPUs of the same rail (one NIC each). */
  int lanes = MIN(ppn, 32);
  int **loc = g_new(int *, n_nodes);
  int *cnt = g_new0(int, n_nodes);
  for (int k = 0; k < n_nodes; k++)
    loc[k] = g_new(int, ppn);
  gboolean uniform = TRUE;
  for (int m = 0; m < n; m++) {
    if (cnt[node[m]] >= ppn)
      uniform = FALSE;
    else
      loc[node[m]][cnt[node[m]]++] = m;
  }
  if (uniform) {
    r->lanes = lanes;
    r->lperm = g_new(int, (size_t)lanes * (size_t)n);
    r->linv = g_new(int, (size_t)lanes * (size_t)n);
    for (int l = 0; l < lanes; l++)
      for (int k = 0; k < n_nodes; k++)
        for (int j = 0; j < ppn; j++) {
          int li = k % 2 == 0 ? (l + j) % ppn : ((l - 1 - j) % ppn + ppn) % ppn;
          int pos = k * ppn + j;
          int m = loc[k][li];
          r->lperm[(size_t)l * n + pos] = m;
          r->linv[(size_t)l * n + m] = pos;
        }
  }
  for (int k = 0; k < n_nodes; k++)
    g_free(loc[k]);
  g_free(loc);
  g_free(cnt);
}

/* The wisp algorithms that carry out NCCL's choice a (function f) on this
 * run: forced flat, per-dimension or outer algorithms, rail rings. */
static void nccl_apply_algo(coll_run *r, coll_nccl_algo a, coll_nccl_func f, const int *node, int n_nodes, int ppn)
{
  int n = r->n;
  switch (a) {
  case COLL_NALGO_RING:
    r->force_flat = COLL_ALGO_RING;
    if (n_nodes > 1 && ppn > 1 && ppn * n_nodes == n)
      nccl_rail_rings(r, node, n_nodes, ppn);
    if (r->n_g > 1 || r->lperm != NULL)
      coll_plan_flat(r);
    break;
  case COLL_NALGO_TREE:
    if (n_nodes > 1 && ppn > 1 && r->n_g > 1 && f == COLL_NFUNC_ALL_REDUCE) {
      /* NCCL's tree on several nodes: a chain through each node to a head
       * GPU, a double binary tree between the heads over the network,
       * one tree per channel with the heads (and NICs) spread over the
       * node's GPUs (src/graph/trees.cc, connect.cc).  Summed over the
       * channels that is a reduce-scatter inside the node, the tree
       * between the nodes on each rail, and an all-gather inside the
       * node, pipelined chunk by chunk. */
      r->force_dim0 = COLL_ALGO_RING;
      r->force_outer = COLL_ALGO_DOUBLE_BINARY_TREE;
      break;
    }
    r->force_flat = COLL_ALGO_DOUBLE_BINARY_TREE;
    if (r->n_g > 1)
      coll_plan_flat(r);
    break;
  case COLL_NALGO_NVLS:
    r->force_flat = COLL_ALGO_NVLS;
    break;
  case COLL_NALGO_NVLS_TREE:
    /* NCCL's NVLS-tree: NVLS inside the node, a tree between the nodes
     * (src/graph/connect.cc connectNvls / the tree's inter-node part);
     * network switches do no reduction (no SHARP here, that is CollNet). */
    r->force_dim0 = COLL_ALGO_NVLS;
    r->force_outer = COLL_ALGO_DOUBLE_BINARY_TREE;
    r->nvls_paired = TRUE;
    break;
  default:
    break;
  }
}

/* The send/recv shape of an all-to-all(v) as NCCL schedules it: the
 * largest number of peers a rank sends to on its own node (*intra), on
 * other nodes (*remote) and in all (*all), and the largest per-peer size
 * (splits when given; else d->bytes / n to each of the n - 1 others).
 * node[m]: member m's node.  O(n^2). */
static void nccl_p2p_shape(const coll_desc *d, int n, const int *node, int *intra, int *remote, int *all,
                           uint64_t *peer_bytes)
{
  *intra = *remote = *all = 0;
  *peer_bytes = d->bytes / (uint64_t)MAX(n, 1);
  if (d->splits != NULL)
    *peer_bytes = 0;
  for (int i = 0; i < n; i++) {
    int ki = 0, kn = 0;
    for (int j = 0; j < n; j++) {
      uint64_t b = d->splits ? d->splits[(size_t)i * (size_t)n + (size_t)j] : 1;
      if (j == i || b == 0)
        continue;
      if (node[j] == node[i])
        ki++;
      else
        kn++;
      if (d->splits)
        *peer_bytes = MAX(*peer_bytes, b);
    }
    *intra = MAX(*intra, ki);
    *remote = MAX(*remote, kn);
    *all = MAX(*all, ki + kn);
  }
}

/* One-node NVLS runs in NCCL's loops (src/device/all_reduce.h runNvls
 * over calcCollChunking's NVLS chunk, sized on each CTA's share: enqueue.cc
 * calls it per channel; coll_nccl_nvls_loop_bytes), and each loop passes
 * through the switch once more (multimem load-reduce, then store) after
 * the one before: (loops - 1) x the route latency through the switch, in
 * series.  That is what simulating the loops as pipelined pieces gives
 * (one H100 node, 8 GPUs: 7, 7, 15, 31, 63 us more at 32 MiB-512 MiB with
 * 0.5 us links, one route latency per piece), charged in closed form so
 * the run stays one piece (the symmetric fast path, coll_fast.c) and past
 * COLL_NCCL_MAX_CHUNKS pieces (16 GiB: 1,023 loops, not 511).  H100 8 GPUs
 * at 32 MiB: 145 -> 152 us, real 183.  Saturates at the engine's limit.
 * O(1). */
static void nccl_nvls_loops(const coll_rt *c, coll_run *r, const coll_nccl_model *mdl, uint64_t s)
{
  uint64_t loop = coll_nccl_nvls_loop_bytes(c->pol.lib.sm, MAX(mdl->nvls_channels, 1), s);
  uint64_t loops = loop > 0 ? (s + loop - 1) / loop : 1;
  sim_time_ps lat = 0;
  topo_route_cost(c->t, r->ranks[0], r->ranks[1], &lat, NULL);
  if (loops < 2 || lat == 0)
    return;
  sim_time_ps more = (loops - 1) > (uint64_t)(SIM_TIME_LIMIT / lat) ? SIM_TIME_LIMIT
                                                                    : (sim_time_ps)(loops - 1) * lat;
  r->t_base = sim_time_add_sat(r->t_base, more);
}

/* The host thread's launches for one collective (nccl-tests -g: one
 * thread launches for gpus_per_thread GPUs, one after the other): each
 * pays the launch and, before NCCL 2.13, one work-FIFO slot per launched
 * channel (coll_nccl_host_launch_us).  A collective launches on the
 * channels getAlgoInfo keeps (coll_nccl_launch_channels); a p2p group on
 * the channels up to its farthest peer's (src/group.cc: the peer at ring
 * distance delta starts on channel delta of the p2p channels, and
 * setupLaunch launches every channel up to the last one used, an empty
 * one with a no-op): peers + 1, a lower bound once a peer's bytes span
 * several channels.  RCCL keeps the launch alone.  Saturates at the
 * engine's limit.  O(channels). */
static sim_time_ps nccl_host_ps(const coll_library_params *lp, const coll_nccl_comm *cm, coll_nccl_algo a,
                                coll_proto p, uint64_t s, int n, int p2p_peers)
{
  sim_time_ps per = (sim_time_ps)MAX(lp->gpus_per_thread, 1);
  if (lp->kind != COLL_LIBRARY_NCCL || lp->nccl_version <= 0)
    return lp->launch > SIM_TIME_LIMIT / per ? SIM_TIME_LIMIT : lp->launch * per;
  int ch = a == COLL_NALGO_P2P ? MIN(p2p_peers + 1, COLL_NCCL_MAXCHANNELS)
                               : coll_nccl_launch_channels(a, p, s, n, coll_nccl_comm_channels(cm));
  double us = coll_nccl_host_launch_us((double)lp->launch / SIM_PS_PER_US, lp->nccl_version, ch) * (double)per;
  sim_time_ps ps = 0;
  if (!wisp_ps_from_us(us, &ps) || ps > SIM_TIME_LIMIT)
    ps = SIM_TIME_LIMIT;
  return ps;
}

/* NCCL's plan for run r: the communicator's nodes, the tuner's choice of
 * algorithm and protocol for this size, their efficiencies, base and
 * per-hop latency, pipeline, and the wisp algorithms that carry it out.
 * O(n x dims) plus the tuner's table. */
void coll_nccl_plan_with(coll_rt *c, coll_run *r, const coll_desc *d, const coll_nccl_tuner *tn)
{
  const coll_library_params *lp = &c->pol.lib;
  int n = r->n;
  r->stream = TRUE;
  r->force_flat = r->force_dim0 = r->force_outer = COLL_ALGO_AUTO;
  r->inv_eff_intra = r->inv_eff_inter = 1.0;
  int *node = g_new(int, (size_t)n);
  int n_nodes = nccl_nodes(c, r, node);
  int ppn = n / MAX(n_nodes, 1);
  coll_nccl_comm cm;
  nccl_comm_of(c, r, n_nodes, ppn, &cm);
  coll_nccl_model *mdl = g_new(coll_nccl_model, 1);
  tn->build(&cm, mdl);
  coll_nccl_func f = nccl_func_of(r->prim);
  uint64_t s = r->prim == COLL_PRIM_ALL_TO_ALLV ? r->bytes : coll_algbw_bytes(d->type, d->bytes, n);
  int fa = nccl_forced_algo(c, r, n_nodes);
  coll_nccl_algo a;
  coll_proto p;
  tn->select(mdl, f, s, fa, lp->nccl_proto, &a, &p);
  r->nalgo = a;
  r->proto = p;
  r->inv_eff_intra = 1.0 / tn->efficiency(mdl, f, a, p, FALSE, s);
  r->inv_eff_inter = 1.0 / tn->efficiency(mdl, f, a, p, TRUE, s);
  /* Gather and scatter keep NCCL's NVLink view: their one root does not
   * show the channel cap in public runs (B200 gather / scatter 718 / 746
   * GB/s at 16 GiB, above 32 channels x COLL_NCCL_P2P_CH_GBPS = 650). */
  int intra = 0, remote = 0, p2p_peers = n - 1;
  uint64_t peer_bytes = 0;
  if (a == COLL_NALGO_P2P)
    nccl_p2p_shape(d, n, node, &intra, &remote, &p2p_peers, &peer_bytes);
  if (a == COLL_NALGO_P2P && d->type != ET_COLL_GATHER && d->type != ET_COLL_SCATTER) {
    if (intra > 0)
      r->inv_eff_intra = 1.0 / tn->p2p_efficiency(mdl, peer_bytes, intra);
    if (remote > 0)
      r->inv_eff_inter = 1.0 / tn->p2p_net_efficiency(mdl, peer_bytes, remote);
  }
  double base_us = 0, hop_us = 0;
  tn->latency(mdl, f, a, p, s, &base_us, &hop_us);
  double back_us = nccl_wire_ref(c, r, tn, mdl, f, a, node);
  /* The tuner's p2p row has one step per round of NCCL's p2p schedule,
   * n - 1 rounds; NCCL skips the rounds that hold no send or receive
   * (src/enqueue.cc scheduleP2pTasksToPlan), so a rank pays one step per
   * peer it exchanges with (sendrecv: one, not n - 1). */
  if (a == COLL_NALGO_P2P && n > 1) {
    hop_us *= (double)MAX(p2p_peers, 1) / (double)(n - 1);
    back_us *= (double)MAX(p2p_peers, 1) / (double)(n - 1);
  }
  /* Each term saturates at the engine's limit (the run then reports the
   * overflow) instead of being dropped or wrapping: a library's launch may
   * be up to 2^63 ps, and the tuner's base grows with net_latency. */
  sim_time_ps base_ps = 0, per = MAX(lp->gpus_per_thread, 1);
  if (!wisp_ps_from_us(base_us, &base_ps) || base_ps > SIM_TIME_LIMIT)
    base_ps = SIM_TIME_LIMIT;
  r->t_host = nccl_host_ps(lp, &cm, a, p, s, n, p2p_peers);
  r->t_base = sim_time_add_sat(base_ps, r->t_host);
  /* Between processes on one node (nccl-tests' -g 1): the FIFO's fill or
   * drain, in series like the latency.  -g N runs N GPUs in one process,
   * where NCCL copies straight into the peer's buffer (P2P_SAME_PID,
   * direct), so neither applies there. */
  double fifo_us = 0;
  if (n_nodes == 1 && per == 1 && a == COLL_NALGO_P2P && intra > 0 && tn->p2p_fill_us != NULL)
    fifo_us = tn->p2p_fill_us(mdl, peer_bytes);
  if (n_nodes == 1 && per == 1 && a == COLL_NALGO_RING && p == COLL_PROTO_SIMPLE && tn->ring_drain_us != NULL)
    fifo_us = tn->ring_drain_us(mdl, f, s, lp->buffsize);
  sim_time_ps fifo_ps = 0;
  if (fifo_us > 0 && (!wisp_ps_from_us(fifo_us, &fifo_ps) || fifo_ps > SIM_TIME_LIMIT))
    fifo_ps = SIM_TIME_LIMIT;
  r->t_base = sim_time_add_sat(r->t_base, fifo_ps);
  if (a == COLL_NALGO_NVLS && n > 1)
    nccl_nvls_loops(c, r, mdl, s);
  /* A calibrated per-step overhead scales NCCL's per-hop figures in the
   * time only (the choice above keeps NCCL's own). */
  r->hop_us = MAX(hop_us * (lp->step_latency_scale > 0 ? lp->step_latency_scale : 1.0) - back_us, 0.0);
  nccl_pipeline(c, r, mdl, f, a, p, s);
  nccl_apply_algo(r, a, f, node, n_nodes, ppn);
  g_free(mdl);
  g_free(node);
}

/* Charges the tuner's per-hop latency (r->hop_us) the way NCCL's own
 * cost model adds it (src/graph/tuning.cc ncclTopoGetAlgoTime: time =
 * latency + bytes / bandwidth): in series with the transfers, as one delay
 * added to the run's start (r->t_base), instead of a wait in every step,
 * which the simulation overlaps with the previous step's transfer whenever
 * a link is busy (a step waits only for its receive) and so hid most of it
 * from 1 MiB up.  The reason it cannot overlap: a ring rank forwards in
 * step k + 1 what it received in step k, and on the network a step moves
 * only once it is complete (src/transport/net.cc sendProxyProgress posts
 * a step to the network when the GPU has filled all of it; the receiving
 * proxy completes it before the GPU may read it).
 *
 * The per-hop figures (hwLat) are taken as the kernels' and proxies' own
 * cost per hop, and the wire's latency is the one the simulated routes
 * charge on top.  Before, each step's share had the route latency of the
 * phase's hop taken off (the figures read as wire included): the share
 * then shrank by the latency times the steps NCCL's model counts (a tree
 * phase: steps x depth), more than the simulation charges on its critical
 * path, so lower link latency made collectives slower (256 ranks, 32
 * dgx-a100 nodes, all-reduce 24 KiB tree/LL: 81.9 us with the network's
 * latency 0, 61.9 us at 1 us, 79.9 us at 2 us), and a latency what-if had
 * the wrong sign.  Without it the time grows with the latency as the
 * routes charge it (95.9, 112.7, 130.7 us), and the held-out nccl-tests
 * tables moved towards the real runs (doc/collectives.md).  O(1). */
static void nccl_latency(coll_rt *c, coll_run *r, const coll_desc *d)
{
  (void)c;
  (void)d;
  if (r->n_steps == 0)
    return;
  sim_time_ps extra = 0;
  /* Past int64 ps (a step_latency_scale of 1e12 on a 51 us hop) this was
   * dropped, so the collective ran faster than with a scale of 1: now it
   * saturates at the engine's limit, which the run reports as an overflow. */
  if (!wisp_ps_from_us(r->hop_us, &extra) || extra > SIM_TIME_LIMIT)
    extra = SIM_TIME_LIMIT;
  r->t_base = sim_time_add_sat(r->t_base, extra);
}

/* The hooks.  plan: NCCL's plan for a collective (a point-to-point under
 * the NCCL library goes straight through net_send, never here).
 * plan_chunks: NCCL pipelines hierarchical plans in buffer-sized chunks
 * (buffsize, NCCL_BUFFSIZE) except NVLS-tree (its NVLS loops, pipe_bytes),
 * and a flat plan whose steps forward the whole buffer (ring broadcast and
 * reduce, the tree) in slices (pipe_bytes); other flat plans run one piece
 * per lane (each step already moves 1/n of it; channels add bandwidth, not
 * steps).  Chunks
 * then flow step by step (step_pipe).  describe: the tuner's algorithm
 * and protocol before the plan. */
static void nccl_plan_hook(coll_rt *c, coll_run *r, const coll_desc *d, coll_prim prim, gboolean p2p)
{
  (void)prim;
  if (!p2p)
    coll_nccl_plan_with(c, r, d, &coll_nccl_tuner_default);
}

void coll_nccl_plan_chunks(coll_rt *c, coll_run *r, const coll_desc *d)
{
  if (!r->stream)
    return;
  gboolean buffered = r->n_phases > 1 && r->nalgo != COLL_NALGO_NVLS_TREE;
  uint64_t unit = buffered ? MAX(c->pol.lib.buffsize, (uint64_t)1) : r->pipe_bytes;
  uint64_t ch = unit > 0 ? (r->bytes + unit - 1) / unit : 1;
  r->n_chunks = (int)CLAMP(ch, 1, COLL_NCCL_MAX_CHUNKS) * r->lanes;
  r->step_pipe = TRUE;
  nccl_latency(c, r, d);
}

void coll_nccl_plan_describe(const coll_run *r, GString *s)
{
  if (r->stream)
    g_string_append_printf(s, "%s/%s: ", coll_nccl_algo_name((coll_nccl_algo)r->nalgo),
                           coll_proto_name((coll_proto)r->proto));
}

const coll_nccl_tuner coll_nccl_tuner_default = {
  .name = "nccl",
  .build = coll_nccl_model_build,
  .select = coll_nccl_select,
  .efficiency = coll_nccl_efficiency,
  .latency = coll_nccl_latency,
  .p2p_efficiency = coll_nccl_p2p_efficiency,
  .p2p_net_efficiency = coll_nccl_p2p_net_efficiency,
  .p2p_fill_us = coll_nccl_p2p_fill_us,
  .ring_drain_us = coll_nccl_ring_drain_us,
  .wire = coll_nccl_wire_of,
};

const coll_lib_ops coll_nccl_ops = {
  .family = "nccl",
  .tier_free = TRUE,
  .plan = nccl_plan_hook,
  .plan_chunks = coll_nccl_plan_chunks,
  .describe = coll_nccl_plan_describe,
};
