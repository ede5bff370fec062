/* et_astra.c: the ASTRA-sim rewrite of a workload (see et_astra.h for the
 * model and its limits).
 */
#include "config.h"

#include "chakra/et_astra.h"

#include <stdlib.h>
#include <string.h>

enum { CLS_COMP = 0, CLS_COMM = 1, CLS_NONE = 2, CLS_REMOVED = 3 };

/* One element of a rank's compute or communication chain: a kept node,
 * preceded by the gap node written in front of it when gap > 0. */
typedef struct {
  uint32_t node;
  sim_time_ps start;
} chain_ent;

static int cmp_chain(const void *a, const void *b)
{
  const chain_ent *x = a, *y = b;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return x->node < y->node ? -1 : x->node > y->node;
}

/* Concurrent time of a chain sorted by start: sum of durations minus the
 * length of the union of [start, end) (ts/te: the baseline times).  O(n). */
static sim_time_ps serialised_ps(const GArray *chain, const sim_time_ps *ts, const sim_time_ps *te)
{
  sim_time_ps sum = 0, uni = 0, cur_s = 0, cur_e = 0;
  gboolean open = FALSE;
  for (guint k = 0; k < chain->len; k++) {
    uint32_t i = g_array_index(chain, chain_ent, k).node;
    sim_time_ps s = ts[i], e = te[i];
    sum += e - s;
    if (open && s <= cur_e) {
      cur_e = MAX(cur_e, e);
    } else {
      if (open)
        uni += cur_e - cur_s;
      cur_s = s;
      cur_e = e;
      open = TRUE;
    }
  }
  if (open)
    uni += cur_e - cur_s;
  return sum - uni;
}

/* Rounds d + *carry to whole microseconds (never below 0) and keeps the
 * difference in *carry, so the rounding error does not accumulate along a
 * chain. */
static sim_time_ps round_carry(sim_time_ps d, sim_time_ps *carry)
{
  sim_time_ps want = d + *carry;
  sim_time_ps w = want <= 0 ? 0 : (want + SIM_PS_PER_US / 2) / SIM_PS_PER_US * SIM_PS_PER_US;
  *carry = want - w;
  return w;
}

/* Whether group gi of w is every rank in rank order (ASTRA-sim's default
 * communicator). */
static gboolean is_world(const et_workload *w, uint32_t gi)
{
  if (gi == ET_GROUP_WORLD)
    return TRUE;
  const et_group *grp = et_workload_group(w, gi);
  if (grp->n_ranks != w->n_ranks)
    return FALSE;
  for (int k = 0; k < grp->n_ranks; k++)
    if (grp->ranks[k] != k)
      return FALSE;
  return TRUE;
}

typedef struct {
  const et_workload *w;
  et_workload *out;
  et_astra_report *rep;
} ctx;

/* Rewrites rank r's graph.  Returns NULL with error set on failure. */
static et_graph *transform_rank(ctx *cx, int r, GError **error)
{
  const et_graph *g = cx->w->ranks[r];
  et_astra_report *rep = cx->rep;
  uint32_t n = g->n_nodes;
  uint8_t *cls = g_new(uint8_t, n ? n : 1);
  uint64_t max_id = 0;
  sim_time_ps window_end = 0, kept_end = 0;

  /* Topological order (Kahn) and the baseline times: every node as soon
   * as its parents end, at its duration (wisp's replay of the graph
   * without slot limits, which for graphs from traces is the measured
   * timeline as the graph serialises it). */
  uint32_t *indeg = g_new(uint32_t, n ? n : 1), *order = g_new(uint32_t, n ? n : 1);
  uint32_t head = 0, tail = 0;
  for (uint32_t i = 0; i < n; i++)
    if ((indeg[i] = et_node_n_parents(g, i)) == 0)
      order[tail++] = i;
  while (head < tail) {
    uint32_t i = order[head++];
    for (uint32_t k = g->nodes[i].children; k < g->nodes[i + 1].children; k++)
      if (--indeg[g->child_index[k]] == 0)
        order[tail++] = g->child_index[k];
  }
  g_assert(tail == n); /* the builder rejected cycles */
  sim_time_ps *ts = g_new0(sim_time_ps, n ? n : 1), *te = g_new0(sim_time_ps, n ? n : 1);
  for (uint32_t o = 0; o < n; o++) {
    uint32_t i = order[o];
    for (uint32_t k = g->nodes[i].parents; k < g->nodes[i + 1].parents; k++)
      ts[i] = MAX(ts[i], te[ET_EDGE_INDEX(g->parent_edges[k])]);
    te[i] = ts[i] + g->nodes[i].duration_ps;
    window_end = MAX(window_end, te[i]);
  }

  for (uint32_t i = 0; i < n; i++) {
    const et_node *nd = &g->nodes[i];
    max_id = MAX(max_id, nd->id);
    if (nd->flags & ET_FLAG_DELAY) {
      cls[i] = CLS_REMOVED;
      rep->removed_gap_nodes++;
    } else if (nd->flags & ET_FLAG_CPU_OP) {
      cls[i] = CLS_REMOVED;
      rep->removed_cpu_nodes++;
      rep->removed_cpu_ps += nd->duration_ps;
    } else if (nd->type == ET_NODE_COMP) {
      cls[i] = CLS_COMP;
      kept_end = MAX(kept_end, te[i]);
    } else if (nd->type == ET_NODE_COMM_COLL || nd->type == ET_NODE_COMM_SEND || (nd->flags & ET_FLAG_REPLAY)) {
      cls[i] = CLS_COMM;
      kept_end = MAX(kept_end, te[i]);
    } else {
      cls[i] = CLS_NONE;
      kept_end = MAX(kept_end, te[i]);
    }
  }

  /* The kept ancestors of every node through removed ones: eff[i] lists
   * node i's nearest kept ancestors. */
  GArray **eff = g_new0(GArray *, n ? n : 1);
  uint32_t *stamp = g_new(uint32_t, n ? n : 1);
  memset(stamp, 0xff, sizeof(uint32_t) * (n ? n : 1));
  for (uint32_t o = 0; o < n; o++) {
    uint32_t i = order[o];
    eff[i] = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    for (uint32_t k = g->nodes[i].parents; k < g->nodes[i + 1].parents; k++) {
      uint32_t p = ET_EDGE_INDEX(g->parent_edges[k]);
      if (cls[p] != CLS_REMOVED) {
        if (stamp[p] != i) {
          stamp[p] = i;
          g_array_append_val(eff[i], p);
        }
      } else {
        for (guint q = 0; q < eff[p]->len; q++) {
          uint32_t a = g_array_index(eff[p], uint32_t, q);
          if (stamp[a] != i) {
            stamp[a] = i;
            g_array_append_val(eff[i], a);
          }
        }
      }
    }
  }

  /* The two chains in measured start order. */
  GArray *chain[2] = {g_array_new(FALSE, FALSE, sizeof(chain_ent)), g_array_new(FALSE, FALSE, sizeof(chain_ent))};
  for (uint32_t i = 0; i < n; i++)
    if (cls[i] == CLS_COMP || cls[i] == CLS_COMM) {
      chain_ent e = {i, ts[i]};
      g_array_append_val(chain[cls[i]], e);
    }
  uint32_t *chain_prev = g_new(uint32_t, n ? n : 1);
  for (uint32_t i = 0; i < n; i++)
    chain_prev[i] = ET_NONE;
  for (int c = 0; c < 2; c++) {
    g_array_sort(chain[c], cmp_chain);
    for (guint k = 1; k < chain[c]->len; k++)
      chain_prev[g_array_index(chain[c], chain_ent, k).node] = g_array_index(chain[c], chain_ent, k - 1).node;
  }
  sim_time_ps ser[2] = {serialised_ps(chain[0], ts, te), serialised_ps(chain[1], ts, te)};
  if (ser[0] > rep->comp_serialised_max_ps || rep->comp_serialised_rank < 0) {
    rep->comp_serialised_max_ps = ser[0];
    rep->comp_serialised_rank = r;
  }
  if (ser[1] > rep->comm_serialised_max_ps || rep->comm_serialised_rank < 0) {
    rep->comm_serialised_max_ps = ser[1];
    rep->comm_serialised_rank = r;
  }
  rep->comp_serialised_sum_ps += ser[0];
  rep->comm_serialised_sum_ps += ser[1];
  rep->max_measured_slots = MAX(rep->max_measured_slots, g->compute_slots);

  /* Gap in front of each kept node: measured start minus the latest
   * measured end of its kept ancestors and chain predecessor; bind is the
   * first of the latest (graph parents first, then the chain). */
  sim_time_ps *gap = g_new0(sim_time_ps, n ? n : 1), *ready = g_new0(sim_time_ps, n ? n : 1);
  uint32_t *bind = g_new(uint32_t, n ? n : 1);
  for (uint32_t i = 0; i < n; i++) {
    bind[i] = ET_NONE;
    if (cls[i] == CLS_REMOVED)
      continue;
    sim_time_ps rd = 0;
    for (guint q = 0; q < eff[i]->len; q++) {
      uint32_t p = g_array_index(eff[i], uint32_t, q);
      sim_time_ps e = te[p];
      if (bind[i] == ET_NONE || e > rd) {
        bind[i] = p;
        rd = e;
      }
    }
    if (chain_prev[i] != ET_NONE) {
      uint32_t p = chain_prev[i];
      sim_time_ps e = te[p];
      if (bind[i] == ET_NONE || e > rd) {
        bind[i] = p;
        rd = e;
      }
    }
    ready[i] = rd;
    if (ts[i] > rd)
      gap[i] = ts[i] - rd;
  }

  /* Durations written: compute chain (gaps and nodes) and the
   * communication chain's gaps, rounded with the error carried along. */
  sim_time_ps *dur = g_new(sim_time_ps, n ? n : 1), *gap_w = g_new0(sim_time_ps, n ? n : 1);
  for (uint32_t i = 0; i < n; i++)
    dur[i] = g->nodes[i].duration_ps;
  sim_time_ps carry = 0, measured_total = 0, written_total = 0;
  for (guint k = 0; k < chain[0]->len; k++) {
    uint32_t i = g_array_index(chain[0], chain_ent, k).node;
    gap_w[i] = round_carry(gap[i], &carry);
    dur[i] = round_carry(g->nodes[i].duration_ps, &carry);
    measured_total += gap[i] + g->nodes[i].duration_ps;
    written_total += gap_w[i] + dur[i];
  }
  sim_time_ps tail_ps = window_end > kept_end ? window_end - kept_end : 0;
  sim_time_ps tail_w = round_carry(tail_ps, &carry);
  measured_total += tail_ps;
  written_total += tail_w;
  sim_time_ps diff = written_total - measured_total;
  rep->rounding_max_ps = MAX(rep->rounding_max_ps, diff < 0 ? -diff : diff);
  carry = 0;
  for (guint k = 0; k < chain[1]->len; k++) {
    uint32_t i = g_array_index(chain[1], chain_ent, k).node;
    gap_w[i] = round_carry(gap[i], &carry);
    if (g->nodes[i].flags & ET_FLAG_REPLAY) /* replayed for its duration by both tools */
      dur[i] = round_carry(g->nodes[i].duration_ps, &carry);
  }

  /* Build.  Kept nodes in index order, each gap node just before its node. */
  et_builder *b = et_builder_new(g->source ? g->source : cx->w->source);
  et_builder_set_version(b, g->version);
  et_builder_set_compute_slots(b, 1);
  uint64_t next_id = max_id + 1;
  for (uint32_t i = 0; i < n; i++) {
    if (cls[i] == CLS_REMOVED)
      continue;
    const et_node *nd = &g->nodes[i];
    uint64_t gap_id = 0;
    gboolean has_gap = gap_w[i] > 0 && cls[i] != CLS_NONE;
    if (gap[i] > 0 && cls[i] == CLS_NONE) {
      rep->dropped_recv_gaps++;
      rep->dropped_recv_gap_ps += gap[i];
    }
    if (has_gap) {
      gap_id = next_id++;
      uint32_t gn;
      if (cls[i] == CLS_COMP) {
        gn = et_builder_add_node(b, gap_id, ET_NODE_COMP, "idle_gap", gap_w[i], 0);
        rep->comp_gaps++;
      } else {
        gn = et_builder_add_node(b, gap_id, ET_NODE_COMM_COLL, "idle_gap", gap_w[i], ET_FLAG_REPLAY | ET_FLAG_DELAY);
        et_comm gc = {.bytes = 1, .group = ET_GROUP_WORLD, .pg_name = ET_NONE, .split = ET_NONE, .src = -1,
                      .dst = -1, .tag = -1, .root = -1, .coll = ET_COLL_BROADCAST};
        et_builder_set_comm(b, gn, &gc, NULL, NULL, 0);
        rep->comm_gaps++;
      }
      et_builder_set_start(b, gn, ready[i]);
      if (bind[i] != ET_NONE)
        et_builder_add_dep(b, gn, g->nodes[bind[i]].id, TRUE, FALSE);
      if (chain_prev[i] != ET_NONE && chain_prev[i] != bind[i])
        et_builder_add_dep(b, gn, g->nodes[chain_prev[i]].id, TRUE, FALSE);
    }
    gboolean replay = nd->type != ET_NODE_COMP && (nd->flags & ET_FLAG_REPLAY);
    uint32_t x = et_builder_add_node(b, nd->id, replay ? ET_NODE_COMM_COLL : (et_node_type)nd->type,
                                     et_node_name(g, i), dur[i], replay ? ET_FLAG_REPLAY : 0);
    et_builder_set_start(b, x, (nd->flags & ET_FLAG_HAS_START) ? nd->start_ps : ts[i]);
    const et_comm *c = et_node_comm(g, i);
    if (replay) {
      et_comm rc = {.bytes = 1, .group = ET_GROUP_WORLD, .pg_name = ET_NONE, .split = ET_NONE, .src = -1,
                    .dst = -1, .tag = -1, .root = -1, .coll = ET_COLL_BROADCAST};
      et_builder_set_comm(b, x, &rc, NULL, NULL, 0);
      rep->replay_comm_as_broadcast++;
    } else if (c != NULL) {
      const char *pg = NULL;
      if (nd->type == ET_NODE_COMM_COLL) {
        if (is_world(cx->w, c->group)) {
          rep->world_collectives++;
        } else {
          const et_group *grp = et_workload_group(cx->w, c->group);
          pg = grp->name;
          et_workload_add_group(cx->out, grp->name, grp->desc, grp->ranks, grp->n_ranks);
          rep->group_collectives++;
        }
      } else if (c->group != ET_GROUP_WORLD) {
        const et_group *grp = et_workload_group(cx->w, c->group);
        pg = grp->name;
        et_workload_add_group(cx->out, grp->name, grp->desc, grp->ranks, grp->n_ranks);
      }
      et_comm cc = *c;
      const uint64_t *splits = NULL;
      uint32_t n_splits = 0;
      if (c->coll == ET_COLL_ALL_TO_ALLV && c->split != ET_NONE) {
        splits = g->splits + c->split;
        n_splits = g->split_width;
      }
      et_builder_set_comm(b, x, &cc, pg, splits, n_splits);
      if (c->buffer != 0 || c->has_alloc)
        et_builder_set_buffer(b, x, c->buffer, c->has_alloc, c->alloc_ps);
    }
    const et_comp_attr *ca = g->n_comp_attrs ? et_graph_comp_attr(g, i) : NULL;
    if (ca && nd->type == ET_NODE_COMP)
      et_builder_set_comp_attrs(b, x, ca->num_ops, ca->has_tensor_size, ca->tensor_size);
    uint32_t skip_a = has_gap ? bind[i] : ET_NONE, skip_b = has_gap ? chain_prev[i] : ET_NONE;
    if (has_gap)
      et_builder_add_dep(b, x, gap_id, TRUE, FALSE);
    for (guint q = 0; q < eff[i]->len; q++) {
      uint32_t p = g_array_index(eff[i], uint32_t, q);
      if (p != skip_a && p != skip_b)
        et_builder_add_dep(b, x, g->nodes[p].id, TRUE, FALSE);
    }
    if (chain_prev[i] != ET_NONE && !has_gap) {
      gboolean listed = FALSE;
      for (guint q = 0; q < eff[i]->len && !listed; q++)
        listed = g_array_index(eff[i], uint32_t, q) == chain_prev[i];
      if (!listed)
        et_builder_add_dep(b, x, g->nodes[chain_prev[i]].id, TRUE, FALSE);
    }
  }
  /* The step tail: after every kept node without kept children and after
   * the end of the compute chain. */
  if (tail_w > 0) {
    uint32_t t = et_builder_add_node(b, next_id, ET_NODE_COMP, "idle_step_tail", tail_w, 0);
    et_builder_set_start(b, t, kept_end);
    rep->comp_gaps++;
    gboolean *has_kept_child = g_new0(gboolean, n ? n : 1);
    for (uint32_t i = 0; i < n; i++)
      if (cls[i] != CLS_REMOVED) {
        for (guint q = 0; q < eff[i]->len; q++)
          has_kept_child[g_array_index(eff[i], uint32_t, q)] = TRUE;
        if (chain_prev[i] != ET_NONE)
          has_kept_child[chain_prev[i]] = TRUE;
      }
    for (uint32_t i = 0; i < n; i++)
      if (cls[i] != CLS_REMOVED && !has_kept_child[i])
        et_builder_add_dep(b, t, g->nodes[i].id, TRUE, FALSE);
    g_free(has_kept_child);
  }

  for (uint32_t i = 0; i < n; i++)
    if (eff[i])
      g_array_free(eff[i], TRUE);
  g_free(eff);
  g_free(stamp);
  g_free(indeg);
  g_free(order);
  g_free(chain_prev);
  g_free(gap);
  g_free(gap_w);
  g_free(ready);
  g_free(bind);
  g_free(dur);
  g_free(cls);
  g_free(ts);
  g_free(te);
  g_array_free(chain[0], TRUE);
  g_array_free(chain[1], TRUE);
  return et_builder_finish(b, 0, error);
}

et_workload *et_astra_transform(const et_workload *w, et_astra_report *rep, GError **error)
{
  g_return_val_if_fail(w != NULL, NULL);
  et_astra_report local;
  if (rep == NULL)
    rep = &local;
  memset(rep, 0, sizeof *rep);
  rep->n_ranks = w->n_ranks;
  rep->comp_serialised_rank = rep->comm_serialised_rank = -1;
  rep->max_step_ps = -1;
  et_workload *out = et_workload_new(w->n_ranks, w->source);
  ctx cx = {w, out, rep};
  for (int r = 0; r < w->n_ranks; r++) {
    if (w->ranks[r] == NULL) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: rank %d has no graph", w->source, r);
      et_workload_free(out);
      return NULL;
    }
    out->ranks[r] = transform_rank(&cx, r, error);
    if (out->ranks[r] == NULL) {
      et_workload_free(out);
      return NULL;
    }
    out->ranks[r]->measured_step_ps = w->ranks[r]->measured_step_ps;
    out->ranks[r]->measured_start_ps = w->ranks[r]->measured_start_ps;
    out->measured_step_ps[r] = w->measured_step_ps[r];
    rep->max_step_ps = MAX(rep->max_step_ps, w->measured_step_ps[r]);
  }
  if (w->measured_start_ps) {
    out->measured_start_ps = g_new(sim_time_ps, w->n_ranks);
    memcpy(out->measured_start_ps, w->measured_start_ps, sizeof(sim_time_ps) * (size_t)w->n_ranks);
  }
  if (!et_workload_resolve_groups(out, error)) {
    et_workload_free(out);
    return NULL;
  }
  return out;
}

static void pct_of_step(const et_astra_report *rep, sim_time_ps ps, FILE *out)
{
  if (rep->max_step_ps > 0)
    fprintf(out, ", %.1f %% of the measured step", 100.0 * (double)ps / (double)rep->max_step_ps);
}

void et_astra_report_print(const et_astra_report *rep, FILE *out)
{
  fprintf(out,
          "note: --for astra-sim: one compute chain and one communication chain per rank (ASTRA-sim runs one GPU "
          "COMP node and one collective/SEND at a time per rank); %" G_GUINT64_FORMAT " idle-gap nodes re-derived "
          "as %" G_GUINT64_FORMAT " compute gaps and %" G_GUINT64_FORMAT " communication gaps (BROADCAST "
          "replayed for its duration); durations rounded to whole us, worst rank's compute total off by %.3f us\n",
          rep->removed_gap_nodes, rep->comp_gaps, rep->comm_gaps, (double)rep->rounding_max_ps / SIM_PS_PER_US);
  fprintf(out, "note: multi-stream overlap serialised: compute %.3f ms on rank %d (worst", 
          (double)rep->comp_serialised_max_ps / 1e9, MAX(rep->comp_serialised_rank, 0));
  pct_of_step(rep, rep->comp_serialised_max_ps, out);
  fprintf(out, "; %.3f ms over all ranks), communication %.3f ms on rank %d (worst",
          (double)rep->comp_serialised_sum_ps / 1e9, (double)rep->comm_serialised_max_ps / 1e9,
          MAX(rep->comm_serialised_rank, 0));
  pct_of_step(rep, rep->comm_serialised_max_ps, out);
  fprintf(out, "; %.3f ms over all ranks)", (double)rep->comm_serialised_sum_ps / 1e9);
  if (rep->max_measured_slots)
    fprintf(out, "; the profile ran up to %u compute nodes at once", rep->max_measured_slots);
  fputc('\n', out);
  if (rep->removed_cpu_nodes)
    fprintf(out, "note: %" G_GUINT64_FORMAT " CPU nodes (%.3f ms) removed, their edges kept through them (ASTRA-sim "
            "prints no statistics with CPU nodes)\n", rep->removed_cpu_nodes, (double)rep->removed_cpu_ps / 1e9);
  if (rep->dropped_recv_gaps)
    fprintf(out, "note: %" G_GUINT64_FORMAT " idle gaps before RECV nodes (%.3f ms) dropped: a RECV takes no slot "
            "in ASTRA-sim, so no gap node can hold it\n", rep->dropped_recv_gaps,
            (double)rep->dropped_recv_gap_ps / 1e9);
  if (rep->replay_comm_as_broadcast)
    fprintf(out, "note: %" G_GUINT64_FORMAT " communication nodes wisp replays at their measured duration (no usable "
            "size or group) written as BROADCAST, which ASTRA-sim replays for its duration\n",
            rep->replay_comm_as_broadcast);
  if (rep->group_collectives)
    fprintf(out, "note: %" G_GUINT64_FORMAT " collectives use sub-world groups: pass comm_group.json to ASTRA-sim "
            "(--comm-group-configuration); %" G_GUINT64_FORMAT " all-rank collectives carry no pg_name\n",
            rep->group_collectives, rep->world_collectives);
  else
    fprintf(out, "note: all %" G_GUINT64_FORMAT " collectives span every rank and carry no pg_name: ASTRA-sim needs "
            "no comm_group file\n", rep->world_collectives);
}
