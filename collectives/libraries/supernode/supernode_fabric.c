/* supernode_fabric.c: the supernode family's view of a group's fabric
 * (reference §3): the tier of each member pair (the outermost
 * topology dimension in which their coordinates differ) and each tier's
 * latency and bandwidth, from the library parameters or the topology's
 * routes.  Used by the closed forms, the partitioner and the engine on
 * the run.  O(n dims) memory; O(dims) per pair.
 * References to "§" are sections of ../shared/reference/supernode-model.md.
 */
#include "config.h"

#include "collectives/libraries/supernode/coll_library_internal.h"

static coll_tier dim_tier(int d)
{
  return d >= COLL_TIER_SCALEOUT ? COLL_TIER_SCALEOUT : (coll_tier)d;
}

coll_library_fabric *coll_library_fabric_new(const topo *t, const coll_library_params *p, const int *ranks, int n)
{
  coll_library_fabric *f = g_new0(coll_library_fabric, 1);
  f->n = n;
  f->nd = topo_n_dims(t);
  f->coord = g_new(int, (size_t)n * (size_t)(f->nd > 0 ? f->nd : 1));
  for (int i = 0; i < n; i++)
    for (int d = 0; d < f->nd; d++)
      f->coord[(size_t)i * f->nd + d] = topo_rank_coord(t, ranks[i], d);
  /* Per-tier cost from the topology: rank 0 to the first rank that
   * differs from it in that dimension only.  O(ranks * dims) once. */
  int nr = topo_n_ranks(t);
  for (int d = 0; d < f->nd && d <= COLL_TIER_SCALEOUT; d++) {
    for (int r = 1; r < nr; r++) {
      gboolean only = TRUE;
      for (int e = 0; e < f->nd && only; e++)
        if ((topo_rank_coord(t, r, e) != topo_rank_coord(t, 0, e)) != (e == d))
          only = FALSE;
      if (only) {
        topo_route_cost(t, 0, r, &f->alpha[d], &f->beta[d]);
        break;
      }
    }
  }
  for (int k = 0; k < COLL_TIER_COUNT; k++) {
    if (p->alpha[k] > 0)
      f->alpha[k] = p->alpha[k];
    if (p->beta[k] > 0)
      f->beta[k] = p->beta[k];
    if (f->beta[k] == 0) /* tier absent from the topology: never used, keep it finite */
      f->beta[k] = p->b_port;
  }
  return f;
}

void coll_library_fabric_free(coll_library_fabric *f)
{
  if (f == NULL)
    return;
  g_free(f->coord);
  g_free(f);
}

coll_tier coll_library_fabric_tier(const coll_library_fabric *f, int a, int b)
{
  for (int d = f->nd - 1; d >= 0; d--)
    if (f->coord[(size_t)a * f->nd + d] != f->coord[(size_t)b * f->nd + d])
      return dim_tier(d);
  return COLL_TIER_D2D;
}

sim_time_ps coll_library_fabric_alpha(const coll_library_fabric *f, coll_tier t)
{
  return f->alpha[t];
}

wisp_bw_Bps coll_library_fabric_beta(const coll_library_fabric *f, coll_tier t)
{
  return f->beta[t];
}

/* ---- mode A operators (§5) --------------------------------------------- */
