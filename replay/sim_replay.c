/* sim_replay.c: the replay's driver (see sim_replay.h for the semantics
 * and rp_internal.h for how the replay is split): input checks, setup of
 * the engine, network, collectives and per-rank state, the run, the
 * result, the deadlock report and teardown.
 */
#include "config.h"
#include "replay/rp_internal.h"
#include "common/wisp_memory.h"

#include <stdlib.h>

/* ---- checks ---- */

static gboolean check_workload(const et_workload *w, GError **error)
{
  for (int r = 0; r < w->n_ranks; r++) {
    const et_graph *g = w->ranks[r];
    if (g == NULL) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: rank %d has no graph", w->source, r);
      return FALSE;
    }
    for (uint32_t i = 0; i < g->n_nodes; i++) {
      const et_node *n = &g->nodes[i];
      if (n->type == ET_NODE_MEM_LOAD || n->type == ET_NODE_MEM_STORE) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED,
                    "%s: rank %d node %" G_GUINT64_FORMAT " (%s) is a %s; wisp does not model remote "
                    "memory nodes: remove them or convert them to COMP nodes",
                    w->source, r, n->id, et_node_name(g, i), et_node_type_name(n->type));
        return FALSE;
      }
      if (rp_is_comm_node(n) && !(n->flags & ET_FLAG_REPLAY) && n->comm == ET_NONE) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                    "%s: rank %d node %" G_GUINT64_FORMAT " (%s) is a communication node without "
                    "communication attributes", w->source, r, n->id, et_node_name(g, i));
        return FALSE;
      }
      if (n->type == ET_NODE_COMM_COLL && !(n->flags & ET_FLAG_REPLAY)) {
        const et_comm *c = &g->comms[n->comm];
        int group_size = c->group == ET_GROUP_WORLD ? w->n_ranks : et_workload_group(w, c->group)->n_ranks;
        if (c->coll == ET_COLL_ALL_TO_ALLV && c->split == ET_NONE) {
          g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                      "%s: rank %d node %" G_GUINT64_FORMAT ": ALL_TO_ALLV without per-peer sizes",
                      w->source, r, n->id);
          return FALSE;
        }
        if (c->coll == ET_COLL_NONE || group_size < 1) {
          g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                      "%s: rank %d node %" G_GUINT64_FORMAT ": collective without a type", w->source, r, n->id);
          return FALSE;
        }
      }
    }
  }
  for (guint k = 0; k < w->groups->len; k++) {
    const et_group *grp = et_workload_group(w, k);
    for (int m = 0; m < grp->n_ranks; m++)
      if (grp->ranks[m] < 0 || grp->ranks[m] >= w->n_ranks) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                    "%s: group '%s' lists rank %d but the workload has ranks 0..%d",
                    w->source, grp->name, grp->ranks[m], w->n_ranks - 1);
        return FALSE;
      }
  }
  return TRUE;
}

/* The inputs the replay refuses before it builds anything: a network
 * with fewer endpoints than ranks, measured starts the workload lacks,
 * and the node and group problems check_workload finds. */
/* A lower bound of the replay's memory, checked before it allocates
 * anything per rank (common/wisp_memory.h): WISP_MEMORY_PER_RANK_BYTES a
 * rank, twice that in the flow tier (max-min solver variables and
 * constraints besides; measured on a scaled examples/make_dp job, the flow
 * tier's peak grew 4.6 KB a rank from 256 to 1,024 ranks, the analytical
 * tier's 3.8 KB).  O(1). */
static gboolean replay_fits(const et_workload *w, net_tier tier, GError **error)
{
  char work[96];
  g_snprintf(work, sizeof work, "%d ranks in the %s network model", w->n_ranks, net_tier_name(tier));
  uint64_t per_rank = (uint64_t)WISP_MEMORY_PER_RANK_BYTES * (tier == NET_TIER_FLOW ? 2 : 1);
  return wisp_memory_check((uint64_t)w->n_ranks * per_rank, work, error);
}

static gboolean check_inputs(const et_workload *w, const topo *t, const sim_replay_options *opt, GError **error)
{
  if (opt->comm_records < SIM_COMMS_MEMORY || opt->comm_records > SIM_COMMS_NONE) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "sim_replay_options.comm_records is %d; it takes a "
                "sim_comms_keep value (replay/sim_comms.h)", opt->comm_records);
    return FALSE;
  }
  if (topo_n_ranks(t) < w->n_ranks) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "the workload %s has %d ranks but the network %s places only %d; use a network with at "
                "least %d endpoints",
                w->source, w->n_ranks, topo_source(t), topo_n_ranks(t), w->n_ranks);
    return FALSE;
  }
  if (opt->measured_starts && w->measured_start_ps == NULL) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: --starts measured needs each rank's measured start on a common clock, which this workload "
                "does not carry (Kineto traces whose clocks agree do; Chakra files and XLA profiles do not)",
                w->source);
    return FALSE;
  }
  return check_workload(w, error);
}

/* ---- deadlock report ---- */

/* Describes, per blocked rank, what it waits for: what it issued that
 * waits for others (rp_match_describe_waits), else the first node that
 * never became ready.  At most 32 lines. */
static GError *deadlock_error(const rp_replay *rp)
{
  GString *s = g_string_new("the replay stopped with unfinished nodes (deadlock):");
  const int max_lines = 32;
  int lines = 0, blocked = 0;
  for (int r = 0; r < rp->w->n_ranks; r++) {
    const rp_rank *rs = &rp->ranks[r];
    if (rs->finished == rs->g->n_nodes)
      continue;
    blocked++;
    if (lines >= max_lines)
      continue;
    gboolean said = rp_match_describe_waits(rp, r, s, &lines, max_lines);
    if (!said && lines < max_lines) {
      /* Nothing this rank issued waits for another rank.  Every node that
       * became ready has then run (the queue is empty), so what is left
       * never became ready: name the lowest-index node with some parents
       * finished and how many it still waits for, else only the count. */
      uint32_t node, left;
      if (rp_pending_first(&rs->pending, &node, &left))
        g_string_append_printf(s, "\n  rank %d: %u of %u nodes unfinished; node %" G_GUINT64_FORMAT
                               " (%s) waits for %u unfinished parents",
                               r, rs->g->n_nodes - rs->finished, rs->g->n_nodes, rs->g->nodes[node].id,
                               et_node_name(rs->g, node), left);
      else
        g_string_append_printf(s, "\n  rank %d: %u of %u nodes unfinished", r, rs->g->n_nodes - rs->finished,
                               rs->g->n_nodes);
      lines++;
    }
  }
  if (lines >= max_lines)
    g_string_append_printf(s, "\n  ... (%d blocked ranks in all)", blocked);
  GError *e = g_error_new_literal(WISP_ERROR, WISP_ERROR_DEADLOCK, s->str);
  g_string_free(s, TRUE);
  return e;
}

/* ---- setup ---- */

/* Per-rank state: slots (readiness needs nothing per node up front).  The
 * graph is only read, so several ranks may replay one et_graph. */
static void rank_init(rp_replay *rp, rp_rank *rs, int r, const sim_replay_options *opt)
{
  const et_graph *g = rp->w->ranks[r];
  rs->rp = rp;
  rs->rank = r;
  rs->g = g;
  /* The option wins; else the graph's measured concurrency; else 1. */
  rs->compute_slots = opt->compute_slots ? opt->compute_slots : g->compute_slots ? g->compute_slots : 1;
  /* Readiness needs no per-node array: a node's in-degree is its parent
   * count in the graph (et_node_n_parents), and only partly ready nodes
   * get a counter (rp_pending). */
  rs->slow = 1.0;
  if (rp->ovl)
    rs->running = g_new(rp_ovl_node, rs->compute_slots);
  rs->factor = rp->rank_factor ? rp->rank_factor[r] : 1.0;
  /* The program order of collectives, once per distinct graph. */
  rp_order *o = g_hash_table_lookup(rp->orders, g);
  if (o == NULL) {
    o = rp_order_new(g);
    g_hash_table_insert(rp->orders, (gpointer)g, o);
  }
  rs->order = o;
  if (rp->klass) {
    /* Kernel classes once per distinct graph: O(nodes x name length). */
    uint8_t *k = g_hash_table_lookup(rp->klass, g);
    if (k == NULL) {
      k = g_new(uint8_t, g->n_nodes ? g->n_nodes : 1);
      for (uint32_t i = 0; i < g->n_nodes; i++)
        k[i] = (uint8_t)sim_kernel_classify(et_node_name(g, i));
      g_hash_table_insert(rp->klass, (gpointer)g, k);
    }
    rs->klass = k;
  }
}

/* The levers of opt: per-rank factors and, when a class lever is set, the
 * class table.  FALSE when a slowed rank is not in the workload. */
static gboolean levers_setup(rp_replay *rp, const sim_replay_options *opt, GError **error)
{
  rp->levers = opt->levers;
  rp->levers_on = sim_levers_active(&opt->levers);
  if (!rp->levers_on)
    return TRUE;
  GError *e = NULL;
  rp->rank_factor = sim_levers_rank_factors(&opt->levers, rp->w->n_ranks, &e);
  if (e) {
    g_propagate_error(error, e);
    return FALSE;
  }
  gboolean classes = FALSE;
  for (int c = 0; c < SIM_KERNEL_CLASS_COUNT; c++)
    classes = classes || (opt->levers.kernel[c] > 0 && opt->levers.kernel[c] != 1.0);
  if (classes)
    rp->klass = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
  return TRUE;
}

/* Builds the engine, network, collectives and every rank's state; FALSE
 * (nothing to free beyond rp_teardown) when the config's collective policy
 * is invalid. */
static gboolean replay_setup(rp_replay *rp, const et_workload *w, const topo *t, const sim_replay_options *opt,
                             net_tier tier, GError **error)
{
  rp->w = w;
  rp->policy = coll_policy_new_from_topo(t, error);
  if (rp->policy == NULL)
    return FALSE;
  if (opt->has_algo)
    coll_policy_force(rp->policy, opt->algo);
  rp->sim = sim_engine_new(opt->checked);
  rp->net = net_new(rp->sim, t, tier);
  rp->coll = coll_rt_new(rp->sim, rp->net, rp->policy);
  rp->p2p_lib = coll_library_has_engine(coll_policy_library(rp->policy)->kind);
  rp->ovl = coll_rt_set_slowdown_hook(rp->coll, rp_on_slowdown, rp);
  rp->obs = opt->observer;
  if (opt->critical_path)
    rp->crit = sim_crit_rec_new(w);
  rp->finish_node = rp_finish_node;
  rp->comm_wait = rp_comm_wait;
  rp_match_init(rp);
  sim_comms_keep keep = opt->no_comm_records ? SIM_COMMS_NONE : (sim_comms_keep)opt->comm_records;
  if ((rp->comms = sim_comms_new(w->groups->len, keep, error)) == NULL)
    return FALSE;
  rp->world_ranks = g_new(int, w->n_ranks);
  for (int r = 0; r < w->n_ranks; r++)
    rp->world_ranks[r] = r;
  guint n_groups = w->groups->len;
  rp->member_index = g_new0(GHashTable *, n_groups > 0 ? n_groups : 1);
  for (guint k = 0; k < n_groups; k++) {
    const et_group *grp = et_workload_group(w, k);
    rp->member_index[k] = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (int m = 0; m < grp->n_ranks; m++)
      g_hash_table_insert(rp->member_index[k], GINT_TO_POINTER(grp->ranks[m]), GINT_TO_POINTER(m + 1));
  }
  if (!levers_setup(rp, opt, error))
    return FALSE;
  rp->seq_base = g_new(uint32_t, n_groups + 1);
  size_t n_seq = (size_t)w->n_ranks;
  for (guint k = 0; k < n_groups; k++) {
    rp->seq_base[k + 1] = (uint32_t)n_seq;
    n_seq += (size_t)et_workload_group(w, k)->n_ranks;
  }
  rp->seq_base[0] = 0;
  rp->seq = g_new0(uint32_t, n_seq ? n_seq : 1);
  rp->ranks = g_new0(rp_rank, w->n_ranks);
  rp->orders = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, rp_order_free);
  for (int r = 0; r < w->n_ranks; r++)
    rank_init(rp, &rp->ranks[r], r, opt);
  return TRUE;
}

/* Frees what replay_setup built, users of the engine before the engine
 * (sim.h's teardown rule).  Safe on a partly built rp. */
static void replay_teardown(rp_replay *rp)
{
  for (int r = 0; rp->ranks != NULL && r < rp->w->n_ranks; r++) {
    rp_rank *rs = &rp->ranks[r];
    rp_pending_free(&rs->pending);
    g_free(rs->compute_wait.items);
    g_free(rs->cpu_wait.items);
    g_free(rs->running);
  }
  g_free(rp->ranks);
  g_free(rp->rank_factor);
  if (rp->klass)
    g_hash_table_destroy(rp->klass);
  if (rp->orders)
    g_hash_table_destroy(rp->orders);
  for (guint k = 0; rp->member_index != NULL && k < rp->w->groups->len; k++)
    g_hash_table_destroy(rp->member_index[k]);
  g_free(rp->member_index);
  g_free(rp->world_ranks);
  g_free(rp->seq);
  g_free(rp->seq_base);
  rp_match_free(rp);
  sim_comms_free(rp->comms);
  sim_crit_rec_free(rp->crit);
  coll_rt_free(rp->coll);
  net_free(rp->net);
  if (rp->sim)
    sim_engine_free(rp->sim);
  coll_policy_free(rp->policy);
}

/* ---- result ---- */

/* Per-rank figures, closing the accounting at each rank's finish time. */
static void rank_stats(const rp_rank *rs, sim_rank_stats *st)
{
  g_assert(rs->n_compute == 0 && rs->n_comm == 0 && rs->n_wait_coll == 0 && rs->n_wait_p2p == 0);
  st->rank = rs->rank;
  st->finish = rs->finish;
  st->compute = rs->t_compute_only + rs->t_both;
  st->exposed_comm = rs->t_comm_only;
  st->overlapped_comm = rs->t_both;
  st->comm_transfer = rs->t_xfer_only;
  st->straggler_wait = rs->t_wait_coll;
  st->dependency_wait = rs->t_wait_dep;
  g_assert(st->comm_transfer + st->straggler_wait + st->dependency_wait == st->exposed_comm);
  st->idle = rs->finish - rs->t_compute_only - rs->t_both - rs->t_comm_only;
  st->nodes = rs->finished;
  st->compute_slots = rs->compute_slots;
  st->interference = rs->t_added;
  st->interfered_compute = rs->t_under;
  st->compute_factor = rs->factor;
  st->coll_wait = rs->coll_wait;
  st->colls = rs->colls;
  st->coll_last = rs->coll_last;
}

/* The result of a run that finished every node; takes rp->comms (the
 * fold already passed the records on in report order, sim_comms.h). */
static sim_result *build_result(rp_replay *rp, const topo *t, const sim_replay_options *opt, net_tier tier,
                                double wall)
{
  const et_workload *w = rp->w;
  sim_result *res = g_new0(sim_result, 1);
  res->n_ranks = w->n_ranks;
  res->ranks = g_new0(sim_rank_stats, w->n_ranks);
  for (int r = 0; r < w->n_ranks; r++) {
    rank_stats(&rp->ranks[r], &res->ranks[r]);
    if (res->ranks[r].finish > res->step_time)
      res->step_time = res->ranks[r].finish;
  }
  res->comms = sim_comms_steal_records(rp->comms);
  res->comm_fold = rp->comms;
  rp->comms = NULL;
  res->events = sim_events_processed(rp->sim);
  net_get_agg_stats(rp->net, &res->flow_agg);
  res->assumed_roots = rp->assumed_roots;
  res->collectives_held = rp->held_total;
  res->lifecycle_known = rp->lifecycle_known;
  res->lifecycle_partial = rp->lifecycle_partial;
  const coll_library_params *lp = coll_policy_library(rp->policy);
  res->library = lp ? lp->kind : COLL_LIBRARY_NCCL;
  const coll_library_stats *ls = coll_rt_library_stats(rp->coll);
  if (ls && coll_library_has_engine(res->library)) {
    res->library_stats = g_new(coll_library_stats, 1);
    *res->library_stats = *ls;
  }
  res->interference = rp->ovl;
  if (rp->crit) {
    res->critical = sim_crit_rec_build(rp->crit);
    res->critical->interference_model = rp->ovl;
    g_assert(res->critical->step_time == res->step_time);
  }
  res->measured_starts = opt->measured_starts;
  res->wall_seconds = wall;
  res->tier = tier;
  res->n_links = topo_n_links(t);
  res->link_bytes = g_new0(uint64_t, res->n_links ? res->n_links : 1);
  for (uint32_t l = 0; l < res->n_links; l++)
    res->link_bytes[l] = net_link_bytes(rp->net, l);
  return res;
}

/* ---- the run ---- */

/* Starts every rank (at 0, or its measured start) and runs the engine
 * until the queue empties or a failure stops it; returns the wall time. */
static double replay_drive(rp_replay *rp, const sim_replay_options *opt)
{
  const et_workload *w = rp->w;
  double t0 = wisp_wall_seconds();
  for (int r = 0; r < w->n_ranks; r++) {
    sim_time_ps at = opt->measured_starts ? w->measured_start_ps[r] : 0;
    if (at > 0)
      sim_post_after(rp->sim, at, rp_on_rank_begin, &rp->ranks[r], 0);
    else
      rp_start_roots(&rp->ranks[r]);
  }
  sim_run(rp->sim, SIM_TIME_MAX);
  return wisp_wall_seconds() - t0;
}

sim_result *sim_replay_run(const et_workload *w, const topo *t, const sim_replay_options *opt,
                           GError **error)
{
  sim_replay_options defaults = {0};
  if (opt == NULL)
    opt = &defaults;
  if (!check_inputs(w, t, opt, error))
    return NULL;
  net_tier tier = opt->has_tier ? opt->tier : net_default_tier(t);
  if (!replay_fits(w, tier, error))
    return NULL;
  rp_replay rp = {0};
  if (!replay_setup(&rp, w, t, opt, tier, error)) {
    replay_teardown(&rp);
    return NULL;
  }
  double wall = replay_drive(&rp, opt);
  if (rp.error == NULL && sim_time_overflowed(rp.sim))
    rp.error = g_error_new(WISP_ERROR, WISP_ERROR_LIMIT,
                           "%s: the simulated time would pass 2^61 ps (about 26.7 days; the run stopped at %.3f s "
                           "simulated): a message size, compute time, link bandwidth or latency or slow-down factor "
                           "is beyond what wisp can represent; check the largest sizes and durations of the "
                           "workload, the network's bandwidths and latencies and the --slow-rank/--slow-ranks/"
                           "compute factors",
                           w->source ? w->source : "workload", (double)sim_now(rp.sim) / (double)SIM_PS_PER_S);
  for (int r = 0; rp.error == NULL && r < w->n_ranks; r++)
    if (rp.ranks[r].finished != rp.ranks[r].g->n_nodes)
      rp.error = deadlock_error(&rp);
  sim_result *res = NULL;
  if (rp.error == NULL)
    sim_comms_finish(rp.comms, &rp.error);
  if (rp.error == NULL) {
    res = build_result(&rp, t, opt, tier, wall);
    if (!opt->quiet)
      sim_print_speed(rp.sim, wall, stderr);
  } else {
    g_propagate_error(error, rp.error);
  }
  replay_teardown(&rp);
  return res;
}

void sim_result_free(sim_result *r)
{
  if (r == NULL)
    return;
  g_free(r->ranks);
  if (r->comms)
    g_array_free(r->comms, TRUE);
  sim_comms_free(r->comm_fold);
  g_free(r->link_bytes);
  g_free(r->library_stats);
  sim_crit_path_free(r->critical);
  g_free(r);
}
