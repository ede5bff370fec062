/* coll_plan.c: planning a collective onto its group's topology
 * dimensions: which algorithm, which phases.  The members' coordinates
 * (topo_rank_coord) are compressed per dimension; when the group is a full
 * Cartesian sub-grid of the topology (every combination of the used
 * coordinates present exactly once), all-reduce, reduce-scatter and
 * all-gather are composed per grid dimension (hierarchical plan); every
 * other case runs one flat phase over the whole group, in grid order (or
 * communicator order when the group is not a sub-grid), on the real
 * routes.  Each phase's algorithm is the one forced by the library
 * family's plan, else the config's, else the family's default
 * (coll_lib_ops.default_algo), else the tuner (coll_tune).  Also the
 * chunking and the run's description.  Never names a library.
 */
#include "config.h"

#include "collectives/coll_run.h"

/* ---- planning ---------------------------------------------------------- */

/* Compresses the members' coordinates; sets up a grid over the dimensions
 * in which they differ, or a single flat dimension in communicator order
 * when they do not form a full sub-grid. */
void coll_plan_grid(coll_run *r, const topo *t)
{
  int n = r->n;
  int nd = topo_n_dims(t);
  r->gidx = g_new(int, n);
  r->gmember = g_new(int, n);
  r->n_g = 0;
  r->flat_kind = TOPO_KIND_GRAPH;
  gboolean grid = nd <= COLL_MAX_DIMS && n > 1;
  int *index[COLL_MAX_DIMS] = { 0 };
  if (grid) {
    for (int m = 0; m < n; m++)
      r->gidx[m] = 0;
    int stride = 1;
    for (int d = 0; d < nd && grid; d++) {
      int size = topo_dim_size(t, d);
      int *idx = g_new(int, size > 0 ? size : 1);
      index[d] = idx;
      for (int i = 0; i < size; i++)
        idx[i] = -1;
      for (int m = 0; m < n; m++) {
        int c = topo_rank_coord(t, r->ranks[m], d);
        g_assert(c >= 0 && c < size);
        idx[c] = 0;
      }
      int distinct = 0;
      for (int i = 0; i < size; i++)
        if (idx[i] == 0)
          idx[i] = distinct++;
      if (distinct <= 1)
        continue;
      if ((int64_t)stride * distinct > n) {
        grid = FALSE;
        break;
      }
      r->gsize[r->n_g] = distinct;
      r->gstride[r->n_g] = stride;
      r->gtopo[r->n_g] = d;
      r->n_g++;
      for (int m = 0; m < n; m++)
        r->gidx[m] += stride * idx[topo_rank_coord(t, r->ranks[m], d)];
      stride *= distinct;
    }
    if (grid && stride != n)
      grid = FALSE;
    if (grid) {
      for (int i = 0; i < n; i++)
        r->gmember[i] = -1;
      for (int m = 0; m < n && grid; m++) {
        if (r->gmember[r->gidx[m]] >= 0)
          grid = FALSE;   /* two members on one coordinate tuple */
        else
          r->gmember[r->gidx[m]] = m;
      }
    }
  }
  for (int d = 0; d < COLL_MAX_DIMS; d++)
    g_free(index[d]);
  if (!grid || r->n_g == 0) {
    r->n_g = 1;
    r->gsize[0] = n;
    r->gstride[0] = 1;
    r->gtopo[0] = -1;
    for (int m = 0; m < n; m++) {
      r->gidx[m] = m;
      r->gmember[m] = m;
    }
  }
  if (r->n_g == 1 && r->gtopo[0] >= 0)
    r->flat_kind = topo_dim_kind(t, r->gtopo[0]);
}

/* One flat dimension over the whole group in communicator order.  O(n). */
void coll_plan_flat(coll_run *r)
{
  r->n_g = 1;
  r->gsize[0] = r->n;
  r->gstride[0] = 1;
  r->gtopo[0] = -1;   /* flat_kind stays: the tuner's view of a one-dimension group */
  for (int m = 0; m < r->n; m++) {
    r->gidx[m] = m;
    r->gmember[m] = m;
  }
}

/* Slowest hop bandwidth of the ring over the members in communicator
 * order (the reference's beta_min).  O(n) cached route lookups. */
wisp_bw_Bps coll_ring_beta_min(const topo *t, const int *ranks, int n)
{
  wisp_bw_Bps bmin = 0;
  for (int i = 0; i < n && n > 1; i++) {
    wisp_bw_Bps bw = 0;
    topo_route_cost(t, ranks[i], ranks[(i + 1) % n], NULL, &bw);
    if (bw > 0 && (bmin == 0 || bw < bmin))
      bmin = bw;
  }
  return bmin > 0 ? bmin : 1;
}

static coll_algo policy_algo(const coll_policy *pol, coll_prim prim, int tdim)
{
  int n = pol->n_algo[prim];
  if (n == 0)
    return COLL_ALGO_AUTO;
  int i = tdim < 0 ? 0 : MIN(tdim, n - 1);
  return pol->algo[prim][i];
}

/* An explicit choice that does not apply (wrong primitive, NVLS off a
 * switch dimension, `hierarchical` for a single phase) falls back to the
 * tuner; the report names the algorithm that actually ran. */
static coll_algo resolve(const coll_lib_ops *ops, const coll_policy *pol, coll_prim phase_prim, coll_prim req_prim,
                         int tdim, topo_kind kind, int q, uint64_t bytes, gboolean shared)
{
  coll_algo a = policy_algo(pol, req_prim, tdim);
  if (ops->tier_free)
    shared = TRUE; /* the library model does not depend on wisp's fidelity tier */
  if (a == COLL_ALGO_AUTO && ops->default_algo != NULL)
    a = ops->default_algo(&pol->lib, phase_prim, q);
  if (a == COLL_ALGO_NVLS && kind != TOPO_KIND_SWITCH)
    a = COLL_ALGO_AUTO;
  if (a != COLL_ALGO_AUTO && a != COLL_ALGO_HIERARCHICAL && coll_algo_supports(a, phase_prim))
    return a;
  return coll_tune(phase_prim, kind, q, bytes, pol->in_switch_reduction, shared);
}

static void add_phase(coll_run *r, const coll_policy *pol, const topo *t, coll_prim phase_prim, int g,
                      uint64_t div)
{
  coll_phase *ph = &r->ph[r->n_phases++];
  int q = g < 0 ? r->n : r->gsize[g];
  int tdim = g < 0 ? (r->n_g == 1 ? r->gtopo[0] : -1) : r->gtopo[g];
  topo_kind kind = tdim < 0 ? TOPO_KIND_GRAPH : topo_dim_kind(t, tdim);
  if (g < 0)
    kind = r->flat_kind;
  ph->prim = phase_prim;
  ph->g = g;
  ph->div = div;
  coll_algo forced = g < 0 ? r->force_flat : tdim == 0 ? r->force_dim0 : r->force_outer;
  if (forced != COLL_ALGO_AUTO && coll_algo_supports(forced, phase_prim) &&
      (forced != COLL_ALGO_NVLS || kind == TOPO_KIND_SWITCH))
    ph->algo = forced;
  else
    ph->algo = r->p2p ? COLL_ALGO_DIRECT
                      : resolve(r->lib->ops, pol, phase_prim, r->prim, tdim, kind, q, r->bytes / div,
                                net_get_tier(r->lib->n) == NET_TIER_FLOW);
  coll_sched s = { .prim = phase_prim, .algo = ph->algo, .q = q, .root = 0 };
  ph->step0 = r->n_steps;
  ph->n_steps = coll_sched_n_steps(&s);
  r->n_steps += ph->n_steps;
}

void coll_plan_phases(coll_run *r, const coll_policy *pol, const topo *t)
{
  int k = r->n_g;
  gboolean hier = k >= 2 && (r->prim == COLL_PRIM_ALL_REDUCE || r->prim == COLL_PRIM_REDUCE_SCATTER ||
                             r->prim == COLL_PRIM_ALL_GATHER);
  if (r->n <= 1)
    return;
  if (!hier) {
    add_phase(r, pol, t, r->prim, -1, 1);
    return;
  }
  uint64_t div[COLL_MAX_DIMS];
  div[0] = 1;
  for (int i = 1; i < k; i++)
    div[i] = div[i - 1] * (uint64_t)r->gsize[i - 1];
  switch (r->prim) {
  case COLL_PRIM_ALL_REDUCE:
    for (int i = 0; i < k - 1; i++)
      add_phase(r, pol, t, COLL_PRIM_REDUCE_SCATTER, i, div[i]);
    add_phase(r, pol, t, COLL_PRIM_ALL_REDUCE, k - 1, div[k - 1]);
    for (int i = k - 2; i >= 0; i--)
      add_phase(r, pol, t, COLL_PRIM_ALL_GATHER, i, div[i]);
    break;
  case COLL_PRIM_REDUCE_SCATTER:
    for (int i = 0; i < k; i++)
      add_phase(r, pol, t, COLL_PRIM_REDUCE_SCATTER, i, div[i]);
    break;
  default: /* all-gather: smallest pieces first, on the outer dimension */
    for (int i = k - 1; i >= 0; i--)
      add_phase(r, pol, t, COLL_PRIM_ALL_GATHER, i, div[i]);
    break;
  }
}

void coll_plan_describe(const coll_run *r, const topo *t, coll_info *info)
{
  GString *s = g_string_new(NULL);
  if (r->lib->ops->describe != NULL && r->n_phases > 0)
    r->lib->ops->describe(r, s);
  if (r->n_phases == 0)
    g_string_append(s, "none");
  for (int i = 0; i < r->n_phases; i++) {
    const coll_phase *ph = &r->ph[i];
    if (i > 0)
      g_string_append(s, " > ");
    if (r->n_phases > 1)
      g_string_append_printf(s, "%s:", coll_prim_name(ph->prim));
    g_string_append(s, coll_algo_name(ph->algo));
    if (ph->g >= 0)
      g_string_append_printf(s, "@%s", topo_dim_name(t, r->gtopo[ph->g]));
    else if (r->n_g == 1 && r->gtopo[0] >= 0)
      g_string_append_printf(s, "@%s", topo_dim_name(t, r->gtopo[0]));
    else
      g_string_append(s, "@flat"); /* whole group over its real routes */
  }
  if (r->lperm != NULL)
    g_string_append_printf(s, " x%d rails", r->lanes);
  g_strlcpy(info->detail, s->str, sizeof info->detail);
  g_string_free(s, TRUE);
  if (r->n_phases > 1)
    info->algo = COLL_ALGO_HIERARCHICAL;
  else if (r->n_phases == 1)
    info->algo = r->ph[0].algo;
  else
    info->algo = COLL_ALGO_DIRECT; /* a single member: nothing moves */
}

/* The chunks each member moves: lanes x the policy's chunks (the
 * family's plan_chunks hook may cut them otherwise: NCCL's buffer-sized
 * or sliced pipeline), one per lane for a barrier.  O(phases). */
void coll_plan_chunks(coll_rt *c, coll_run *r, const coll_desc *d, coll_prim prim)
{
  if (r->lperm == NULL) {
    r->lanes = 1;
    for (int i = 0; i < r->n_phases; i++)
      if (r->ph[i].algo == COLL_ALGO_DOUBLE_BINARY_TREE)
        r->lanes = 2;
  }
  r->n_chunks = c->pol.chunks * r->lanes;
  if (c->ops->plan_chunks != NULL)
    c->ops->plan_chunks(c, r, d);
  if (prim == COLL_PRIM_BARRIER)
    r->n_chunks = r->lanes;
}
