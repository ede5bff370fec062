/* et_workload.c: a workload: one graph per rank, the communicator groups
 * by name and index, resolving a rank's records against them, and the
 * count of what the replay cannot simulate.  Who owns shared graphs is
 * told through the workload's owner hooks (et_share.c, et_scale.c).
 * O(1) per group lookup, O(records) per rank resolved.
 */
#include "config.h"
#include "chakra/et_graph.h"

#include <stdlib.h>
#include <string.h>

static void group_free(gpointer p)
{
  et_group *grp = p;
  g_free(grp->name);
  g_free(grp->desc);
  g_free(grp->ranks);
  g_free(grp);
}

et_workload *et_workload_new(int n_ranks, const char *source)
{
  g_return_val_if_fail(n_ranks > 0, NULL);
  et_workload *w = g_new0(et_workload, 1);
  w->n_ranks = n_ranks;
  w->ranks = g_new0(et_graph *, n_ranks);
  w->groups = g_ptr_array_new_with_free_func(group_free);
  w->group_index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  w->source = g_strdup(source ? source : "(workload)");
  w->measured_step_ps = g_new(sim_time_ps, n_ranks);
  for (int r = 0; r < n_ranks; r++)
    w->measured_step_ps[r] = -1;
  return w;
}

void et_workload_free(et_workload *w)
{
  if (w == NULL)
    return;
  /* Shared graphs (a scaled or shared workload) belong to their owner. */
  if (w->free_graphs)
    w->free_graphs(w);
  else
    for (int r = 0; r < w->n_ranks; r++)
      et_graph_free(w->ranks[r]);
  g_free(w->ranks);
  g_ptr_array_free(w->groups, TRUE);
  g_hash_table_destroy(w->group_index);
  g_free(w->source);
  g_free(w->measured_step_ps);
  g_free(w->measured_start_ps);
  g_free(w);
}

static int cmp_int(const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* Whether ranks[0, n) are distinct and in [0, limit).  Pairwise for small
 * groups, a sorted copy beyond (a grown data-parallel group has a million
 * members: the pairwise check took minutes).  O(n log n). */
static gboolean ranks_distinct(const int *ranks, int n, int limit)
{
  for (int k = 0; k < n; k++)
    if (ranks[k] < 0 || ranks[k] >= limit)
      return FALSE;
  if (n <= 64) {
    for (int k = 0; k < n; k++)
      for (int j = 0; j < k; j++)
        if (ranks[j] == ranks[k])
          return FALSE;
    return TRUE;
  }
  int *copy = g_memdup2(ranks, sizeof(int) * (size_t)n);
  qsort(copy, (size_t)n, sizeof *copy, cmp_int);
  gboolean ok = TRUE;
  for (int k = 1; k < n && ok; k++)
    ok = copy[k] != copy[k - 1];
  g_free(copy);
  return ok;
}

/* Returns the index of the new group, the index of an existing group with
 * the same name and the same ranks (desc is then ignored), or ET_NONE when
 * the name exists with other ranks or a rank is out of range / repeated. */
uint32_t et_workload_add_group(et_workload *w, const char *name, const char *desc,
                               const int *ranks, int n_ranks)
{
  g_return_val_if_fail(w != NULL && name != NULL && n_ranks > 0 && ranks != NULL, ET_NONE);
  gpointer have = g_hash_table_lookup(w->group_index, name);
  if (have != NULL) {
    const et_group *grp = g_ptr_array_index(w->groups, GPOINTER_TO_UINT(have) - 1);
    if (grp->n_ranks == n_ranks && memcmp(grp->ranks, ranks, sizeof(int) * (size_t)n_ranks) == 0)
      return GPOINTER_TO_UINT(have) - 1;
    return ET_NONE;
  }
  if (!ranks_distinct(ranks, n_ranks, w->n_ranks))
    return ET_NONE;
  et_group *grp = g_new0(et_group, 1);
  grp->name = g_strdup(name);
  grp->desc = g_strdup(desc);
  grp->n_ranks = n_ranks;
  grp->ranks = g_memdup2(ranks, sizeof(int) * (size_t)n_ranks);
  g_ptr_array_add(w->groups, grp);
  uint32_t idx = w->groups->len - 1;
  g_hash_table_insert(w->group_index, g_strdup(name), GUINT_TO_POINTER(idx + 1));
  return idx;
}

const et_group *et_workload_group(const et_workload *w, uint32_t index)
{
  g_return_val_if_fail(w != NULL && index < w->groups->len, NULL);
  return g_ptr_array_index(w->groups, index);
}

const char *et_workload_group_name(const et_workload *w, uint32_t g)
{
  return g == ET_GROUP_WORLD ? "world" : et_workload_group(w, g)->name;
}

static gboolean group_has_rank(const et_group *grp, int rank)
{
  for (int k = 0; k < grp->n_ranks; k++)
    if (grp->ranks[k] == rank)
      return TRUE;
  return FALSE;
}

/* O(total communication nodes) hash lookups. */
gboolean et_workload_resolve_rank(et_workload *w, int r, GError **error)
{
  g_return_val_if_fail(w != NULL && r >= 0 && r < w->n_ranks, FALSE);
  et_graph *g = w->ranks[r];
  if (g == NULL) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: rank %d has no graph", w->source, r);
    return FALSE;
  }
  for (uint32_t i = 0; i < g->n_nodes; i++) {
    if (g->nodes[i].comm == ET_NONE)
      continue;
    et_comm *c = &g->comms[g->nodes[i].comm];
    const char *src = g->source ? g->source : w->source;
    c->group = ET_GROUP_WORLD;
    if (c->pg_name != ET_NONE && g->strings[c->pg_name] != '\0') {
      const char *pg = g->strings + c->pg_name;
      gpointer idx = g_hash_table_lookup(w->group_index, pg);
      if (idx == NULL) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                    "%s: node id %" G_GUINT64_FORMAT " (\"%s\"): pg_name \"%s\" is not a known communicator "
                    "(%u group(s) defined, e.g. in comm_group.json); add the group (comm_group.json beside the "
                    ".et files, or --comm-group FILE) or fix pg_name",
                    src, g->nodes[i].id, et_node_name(g, i), pg, w->groups->len);
        return FALSE;
      }
      c->group = GPOINTER_TO_UINT(idx) - 1;
      const et_group *grp = g_ptr_array_index(w->groups, c->group);
      if (!group_has_rank(grp, r)) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                    "%s: node id %" G_GUINT64_FORMAT " (\"%s\") of rank %d uses communicator \"%s\", "
                    "which does not contain rank %d",
                    src, g->nodes[i].id, et_node_name(g, i), r, pg, r);
        return FALSE;
      }
    }
    uint8_t t = g->nodes[i].type;
    if (t == ET_NODE_COMM_SEND || t == ET_NODE_COMM_RECV) {
      if (c->src >= w->n_ranks || c->dst >= w->n_ranks || c->src < -1 || c->dst < -1) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                    "%s: node id %" G_GUINT64_FORMAT " (\"%s\"): comm_src %d / comm_dst %d outside ranks 0..%d",
                    src, g->nodes[i].id, et_node_name(g, i), c->src, c->dst, w->n_ranks - 1);
        return FALSE;
      }
    }
  }
  return TRUE;
}

gboolean et_workload_resolve_groups(et_workload *w, GError **error)
{
  g_return_val_if_fail(w != NULL, FALSE);
  for (int r = 0; r < w->n_ranks; r++) {
    /* A rank replaying another rank's graph was resolved as that graph's
     * translation (chakra/et_share.h); the graph's own rank is resolved. */
    if (w->graph_rank != NULL && w->graph_rank(w, r) != r)
      continue;
    if (!et_workload_resolve_rank(w, r, error))
      return FALSE;
  }
  return TRUE;
}

void et_workload_unsimulated(const et_workload *w, et_unsimulated *out)
{
  memset(out, 0, sizeof *out);
  out->first_replayed_rank = out->first_zero_rank = -1;
  for (int r = 0; r < w->n_ranks; r++) {
    const et_graph *g = w->ranks[r];
    gboolean any = FALSE;
    for (uint32_t i = 0; g && i < g->n_nodes; i++) {
      const et_node *n = &g->nodes[i];
      gboolean comm = n->type == ET_NODE_COMM_COLL || n->type == ET_NODE_COMM_SEND || n->type == ET_NODE_COMM_RECV;
      if (!comm)
        continue;
      if (n->flags & ET_FLAG_REPLAY) {
        out->replayed_nodes++;
        out->replayed_ps += n->duration_ps;
        if (out->first_replayed_rank < 0) {
          out->first_replayed_rank = r;
          out->first_replayed_node = i;
        }
        any = TRUE;
        continue;
      }
      const et_comm *c = et_node_comm(g, i);
      if (n->type == ET_NODE_COMM_COLL && c && c->bytes == 0 && c->coll != ET_COLL_BARRIER) {
        out->zero_byte_collectives++;
        if (out->first_zero_rank < 0) {
          out->first_zero_rank = r;
          out->first_zero_node = i;
        }
      }
    }
    out->replayed_ranks += any;
  }
}
