/* rccl_plan.c: the RCCL family's hooks (library rccl): NCCL's plan
 * (nccl/coll_nccl_plan.h) with RCCL's tuner (rccl_tuner.c), and one
 * difference in how the choice is carried out.  On a node whose GPUs are
 * fully connected (MI300X: 7 xGMI links per GPU, one to each peer), RCCL
 * runs many rings at once, each in a different GPU order (rome_model_79's
 * 28 orders, doubled to 56 channels), so that together they load every
 * link of a GPU alike; wisp's single ring would use one link per hop.  So
 * a one-node ring on a fully connected tier runs as wisp's direct
 * schedule, which moves the same bytes per link as the balanced set of
 * rings (all-reduce: 2 S / n per link and direction) on all links at once;
 * the tuner's ring latency is spread over its steps as for any plan.  On
 * several nodes the rings cross the NICs as NCCL's rail rings, in GPU
 * orders that spread them over the mesh (rccl_mesh_rings).  O(n x dims)
 * per collective, as NCCL's plan.
 */
#include "config.h"

#include "collectives/coll_run.h"
#include "collectives/libraries/coll_lib_ops.h"
#include "collectives/libraries/nccl/coll_nccl_plan.h"
#include "collectives/libraries/rccl/coll_rccl.h"

static const coll_nccl_tuner rccl_tuner = {
  .name = "rccl",
  .build = coll_rccl_model_build,
  .select = coll_rccl_select,
  .efficiency = coll_rccl_efficiency,
  .latency = coll_rccl_latency,
  .p2p_efficiency = coll_rccl_p2p_efficiency,
  .p2p_net_efficiency = coll_rccl_p2p_net_efficiency,
  /* No FIFO fill or drain (coll_nccl_p2p_fill_us, coll_nccl_ring_drain_us):
   * their copy rate is measured on NVIDIA GPUs only, and the public
   * rccl-tests runs are -g 8 (one process). */
  .p2p_fill_us = NULL,
  .ring_drain_us = NULL,
  /* RCCL's per-hop figures (tuning_model_5.hwLat) are read as NCCL's are,
   * the routes charging their whole latency on top; no public MI300X
   * run at small sizes on several nodes says which xGMI and RoCE wire
   * they hold, so no reference wire (coll_nccl_wire_of) yet. */
  .wire = NULL,
};

/* Whether every member of run r sits on one node of a topology whose
 * innermost tier is fully connected. */
static gboolean one_fc_node(const coll_rt *c, const coll_run *r)
{
  const topo *t = c->t;
  if (topo_is_graph(t) || topo_n_dims(t) < 1 || topo_dim_kind(t, 0) != TOPO_KIND_FULLY_CONNECTED)
    return FALSE;
  for (int m = 1; m < r->n; m++)
    for (int dd = 1; dd < topo_n_dims(t); dd++)
      if (topo_rank_coord(t, r->ranks[m], dd) != topo_rank_coord(t, r->ranks[0], dd))
        return FALSE;
  return TRUE;
}

/* Position j (0 .. q-1) of Walecki's zig-zag Hamiltonian path of K_q
 * (q even, m = q / 2): 0, 1, q-1, 2, q-2, ..., m; path t < m is that one
 * rotated by t, path t >= m the reverse of path t - m.  The q paths use
 * every ordered pair of the q GPUs exactly once (the m undirected paths
 * split K_q's edges, and each is walked both ways).  O(1). */
static int zigzag(int q, int t, int j)
{
  int m = q / 2;
  if (t >= m)
    return zigzag(q, t - m, q - 1 - j);
  int a = j == 0 ? 0 : j % 2 == 1 ? (j + 1) / 2 : q - j / 2;
  return (a + t) % q;
}

/* RCCL's rings on several fully connected nodes: NCCL's rail rings (one
 * per GPU of a node, entering and leaving a node through the same rails'
 * NICs) walk every node in index order, so on a mesh all of them would
 * share the links (x, x+1).  RCCL's rome models give every channel its
 * own GPU order instead (rome_model_81/84 ringBase) so that the channels
 * load all xGMI links.  wisp orders lane t by zig-zag path t inside even
 * nodes and its reverse inside odd ones: still one rail in and one out of
 * each node, and each directed link of a node carries exactly one lane.
 * Only for an even number of GPUs per node filling the lanes (else NCCL's
 * orders stay), one lane per GPU of a node.  The node's members come
 * from lane 0 (nccl_rail_rings: even nodes in local order, odd nodes
 * reversed).  O(lanes x n). */
static void rccl_mesh_rings(const topo *t, coll_run *r)
{
  int n = r->n, q = r->lanes;
  if (q < 4 || q % 2 != 0 || n % q != 0 || topo_dim_size(t, 0) != q)
    return;
  int nodes = n / q;
  int *loc = g_new(int, (size_t)n);
  for (int k = 0; k < nodes; k++)
    for (int j = 0; j < q; j++)
      loc[k * q + (k % 2 == 0 ? j : q - 1 - j)] = r->lperm[k * q + j];
  for (int l = 0; l < q; l++)
    for (int k = 0; k < nodes; k++)
      for (int j = 0; j < q; j++) {
        int g = zigzag(q, l, k % 2 == 0 ? j : q - 1 - j);
        int m = loc[k * q + g];
        r->lperm[(size_t)l * n + k * q + j] = m;
        r->linv[(size_t)l * n + m] = k * q + j;
      }
  g_free(loc);
}

static void rccl_plan_hook(coll_rt *c, coll_run *r, const coll_desc *d, coll_prim prim, gboolean p2p)
{
  (void)prim;
  if (p2p)
    return;
  coll_nccl_plan_with(c, r, d, &rccl_tuner);
  if (r->force_flat != COLL_ALGO_RING)
    return;
  if (r->lperm == NULL && one_fc_node(c, r))
    r->force_flat = COLL_ALGO_DIRECT;
  else if (r->lperm != NULL && !topo_is_graph(c->t) && topo_dim_kind(c->t, 0) == TOPO_KIND_FULLY_CONNECTED)
    rccl_mesh_rings(c->t, r);
}

const coll_lib_ops coll_rccl_ops = {
  .family = "rccl",
  .tier_free = TRUE,
  .plan = rccl_plan_hook,
  .plan_chunks = coll_nccl_plan_chunks,
  .describe = coll_nccl_plan_describe,
};
