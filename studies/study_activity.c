/* study_activity.c: the activity timeline the metric catalog reads
 * (study_metrics.h): kernel classes by name, and the two feeds - a trace's
 * measured start times and a replay's observer - with each rank's window.
 * Adding is O(1) amortized per interval; memory is 24 bytes per held
 * interval (act_rec: times and node; the kernel class, bytes and
 * communicator size are derived from the node when the metrics read the
 * rank, study_activity_rank_ivs), and a long timeline goes to a spill file
 * past 262,144 intervals (6 MiB; study_act_spill.c).
 */
#include "config.h"
#include "chakra/et_view.h"
#include "studies/study_metrics_internal.h"
#include "replay/sim_levers.h"
#include "frontends/kineto_commreg.h"
#include "frontends/nsys.h"

#include <math.h>
#include <string.h>

/* ---- classification ---- */

static gboolean contains_ci(const char *hay, const char *needle)
{
  size_t n = strlen(needle);
  for (const char *p = hay; *p; p++)
    if (g_ascii_strncasecmp(p, needle, n) == 0)
      return TRUE;
  return FALSE;
}

study_kernel_class study_kernel_class_of(const char *name)
{
  /* One set of name rules (replay/sim_levers.c, doc/studies.md "Kernel
   * classes"): the gemm class is compute-bound, elementwise and
   * communication-adjacent kernels are memory-bound. */
  if (sim_kernel_classify(name) == SIM_KERNEL_GEMM)
    return STUDY_KERNEL_COMPUTE_BOUND;
  return sim_kernel_named(name) ? STUDY_KERNEL_MEMORY_BOUND : STUDY_KERNEL_UNCLASSIFIED;
}

gboolean study_is_memcpy_name(const char *name)
{
  return name && (contains_ci(name, "memcpy") || g_str_has_prefix(name, "copy-start") ||
                  g_str_has_prefix(name, "copy-done"));
}

gboolean study_is_moe_kernel(const char *name)
{
  if (name == NULL)
    return FALSE;
  const kt_commreg_entry *e = kt_commreg_lookup(name);
  if (e && (e->size == KT_CR_SIZE_MOE_DISPATCH || e->size == KT_CR_SIZE_MOE_COMBINE))
    return TRUE;
  static const char *const pats[] = {"moe", "expert", "routing", "gating", "topk", "grouped_gemm", "dispatchkernel",
                                     "combinekernel"};
  for (guint i = 0; i < G_N_ELEMENTS(pats); i++)
    if (contains_ci(name, pats[i]))
      return TRUE;
  return FALSE;
}

/* study_is_moe_kernel once per string of the graphs' pools.  O(1)
 * amortized. */
static gboolean moe_cached(study_activity *a, const char *name)
{
  gpointer v = g_hash_table_lookup(a->moe_names, name);
  if (v == NULL) {
    v = GINT_TO_POINTER(study_is_moe_kernel(name) + 1);
    g_hash_table_insert(a->moe_names, (gpointer)name, v);
  }
  return GPOINTER_TO_INT(v) == 2;
}

/* A compute node's interval kind and kclass bits from its name, computed
 * once per string of the graphs' pools (the name rules scan about a
 * hundred patterns; a chain of a million nodes has a handful of names).
 * O(1) amortized. */
static void comp_classify(study_activity *a, const char *name, act_iv *iv)
{
  gpointer v = g_hash_table_lookup(a->comp_names, name);
  if (v == NULL) {
    study_kernel_class kc = study_kernel_class_of(name);
    unsigned kind = study_is_memcpy_name(name) ? STUDY_ACT_MEMCPY : STUDY_ACT_COMPUTE;
    unsigned kclass = (kc == STUDY_KERNEL_UNCLASSIFIED ? ACT_UNNAMED : (unsigned)kc) | (moe_cached(a, name) ? ACT_MOE : 0) |
                      (g_ascii_strncasecmp(name, "memset", 6) == 0 ? ACT_MEMSET : 0);
    v = GUINT_TO_POINTER((kind | kclass << 8) + 1);
    g_hash_table_insert(a->comp_names, (gpointer)name, v);
  }
  unsigned bits = GPOINTER_TO_UINT(v) - 1;
  iv->kind = (uint8_t)(bits & 0xffu);
  iv->kclass = (uint8_t)(bits >> 8);
}

/* ---- the timeline ---- */

study_activity *study_activity_new(const et_workload *w)
{
  study_activity *a = g_new0(study_activity, 1);
  a->w = w;
  a->n_ranks = w->n_ranks;
  a->steps = 1;
  a->ivs = g_new0(GArray *, w->n_ranks);
  for (int r = 0; r < w->n_ranks; r++)
    a->ivs[r] = g_array_new(FALSE, FALSE, sizeof(act_rec));
  a->graphs = g_ptr_array_new();
  a->graph_no = g_hash_table_new(g_direct_hash, g_direct_equal);
  a->scratch = g_array_new(FALSE, FALSE, sizeof(act_iv));
  /* 262,144 intervals (6 MiB) held before spilling; blocks of 16 to 4,096
   * intervals, about 8 MiB of act_iv over the ranks. */
  a->spill_at = 262144;
  a->spill_block = (guint)CLAMP((8u << 20) / (sizeof(act_iv) * (guint)MAX(w->n_ranks, 1)), 16, 4096);
  a->origin = g_new0(sim_time_ps, w->n_ranks);
  a->window = g_new0(sim_time_ps, w->n_ranks);
  a->grid_why = "the input carries no kernel launch grids (Kineto, XLA and Chakra graphs do not keep them; Nsight "
                "exports do)";
  a->p2p_why = "the input carries no NVLink counters (Nsight exports profiled with --gpu-metrics-devices do)";
  a->moe_names = g_hash_table_new(g_direct_hash, g_direct_equal);
  a->comp_names = g_hash_table_new(g_direct_hash, g_direct_equal);
  return a;
}

void study_activity_free(study_activity *a)
{
  if (a == NULL)
    return;
  for (int r = 0; r < a->n_ranks; r++) {
    g_array_free(a->ivs[r], TRUE);
    if (a->grids && a->grids[r])
      g_array_free(a->grids[r], TRUE);
    if (a->p2p && a->p2p[r])
      g_array_free(a->p2p[r], TRUE);
  }
  g_free(a->ivs);
  g_ptr_array_free(a->graphs, TRUE);
  g_hash_table_destroy(a->graph_no);
  g_array_free(a->scratch, TRUE);
  g_free(a->grids);
  g_free(a->p2p);
  g_hash_table_destroy(a->moe_names);
  g_hash_table_destroy(a->comp_names);
  g_free(a->origin);
  g_free(a->window);
  g_free(a->comm_split);
  study_spill_free(a->spill);
  g_free(a);
}

void study_activity_set_spill(study_activity *a, uint64_t held, guint block)
{
  a->spill_at = held;
  a->spill_block = MAX(block, 1);
}

gboolean study_activity_check(const study_activity *a, GError **error)
{
  const char *why = study_spill_error(a->spill);
  if (why)
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s", why);
  return why == NULL;
}

/* Moves rank's held intervals to the spill file as one block and gives it
 * a block-sized array (a grown array would keep its capacity); on a write
 * failure the intervals stay and spilling stops.  O(held of rank). */
static void spill_rank(study_activity *a, int rank)
{
  GArray *v = a->ivs[rank];
  if (v->len == 0)
    return;
  if (!study_spill_write(a->spill, rank, (const act_rec *)v->data, v->len)) {
    a->spill_off = TRUE;
    return;
  }
  a->held -= v->len;
  g_array_free(v, TRUE);
  a->ivs[rank] = g_array_sized_new(FALSE, FALSE, sizeof(act_rec), a->spill_block);
}

/* After an append to rank: start spilling once past spill_at (every rank
 * flushed), then flush rank's array whenever it fills a block.  O(1)
 * amortized. */
static void spill_check(study_activity *a, int rank)
{
  a->held++;
  if (a->spill_off)
    return;
  if (a->spill == NULL) {
    if (a->held <= a->spill_at)
      return;
    a->spill = study_spill_new(a->n_ranks);
    if (a->spill == NULL) {
      a->spill_off = TRUE;
      return;
    }
    for (int r = 0; r < a->n_ranks && !a->spill_off; r++)
      spill_rank(a, r);
  } else if (a->ivs[rank]->len >= a->spill_block) {
    spill_rank(a, rank);
  }
}

void study_activity_set_steps(study_activity *a, int steps)
{
  a->steps = steps > 0 ? steps : 1;
}

/* Rank's interval of node (of g) over [start, end) as the metrics read it:
 * its kind and kernel class from the name (memory copies and memsets with
 * their bytes), or a communication's bytes, operation and communicator
 * size (the traced record when a->w has one).  O(1) amortized. */
static void iv_derive(study_activity *a, int rank, const et_graph *g, uint32_t node, sim_time_ps start,
                      sim_time_ps end, act_iv *iv)
{
  const et_node *n = &g->nodes[node];
  *iv = (act_iv){.start = start, .end = end, .op = ET_COLL_NONE, .node_type = n->type};
  if (n->type == ET_NODE_COMP) {
    const char *name = et_node_name(g, node);
    comp_classify(a, name, iv);
    iv->name = name;
    const et_comp_attr *ca = g->n_comp_attrs ? et_graph_comp_attr(g, node) : NULL;
    if (ca && ca->has_tensor_size && (iv->kind == STUDY_ACT_MEMCPY || g_str_has_prefix(name, "Memset"))) {
      iv->bytes = ca->tensor_size; /* the bytes a copy or memset moved (Nsight exports) */
      iv->n_ranks = 1;
    }
    return;
  }
  et_comm tc;
  const et_comm *c = n->comm == ET_NONE ? NULL
                     : a->w ? et_workload_traced_comm(a->w, rank, n->comm, &tc) : et_node_comm(g, node);
  iv->kind = STUDY_ACT_COMM;
  iv->kclass = moe_cached(a, et_node_name(g, node)) ? ACT_MOE : 0;
  if (c) {
    iv->bytes = c->bytes;
    iv->op = n->type == ET_NODE_COMM_COLL ? c->coll : ET_COLL_NONE;
    const et_group *grp = c->group == ET_GROUP_WORLD ? NULL : et_workload_group(a->w, c->group);
    iv->n_ranks = n->type != ET_NODE_COMM_COLL ? 2 : grp ? grp->n_ranks : a->w->n_ranks;
  }
}

/* The timeline's number of graph g (a job's ranks share a few graphs, so
 * the last one is checked first).  O(1) amortized. */
static uint32_t graph_number(study_activity *a, const et_graph *g)
{
  if (a->last_g == g && a->graphs->len > 0)
    return a->last_gno;
  guint no = GPOINTER_TO_UINT(g_hash_table_lookup(a->graph_no, g));
  if (no == 0) {
    g_ptr_array_add(a->graphs, (gpointer)g);
    no = a->graphs->len;
    g_hash_table_insert(a->graph_no, (gpointer)g, GUINT_TO_POINTER(no));
  }
  a->last_g = g;
  a->last_gno = no - 1;
  return a->last_gno;
}

GArray *study_activity_rank_ivs(const study_activity *a, int r)
{
  const GArray *v = a->ivs[r];
  if (study_spill_has(a->spill, r)) {
    GArray *s = study_spill_read(a->spill, r);
    if (s != NULL) { /* else study_activity_check fails the result */
      g_array_append_vals(s, a->ivs[r]->data, a->ivs[r]->len);
      v = s;
    }
  }
  /* The classification caches change, the records do not. */
  study_activity *m = (study_activity *)a;
  g_array_set_size(m->scratch, v->len);
  for (guint i = 0; i < v->len; i++) {
    const act_rec *x = &g_array_index(v, act_rec, i);
    iv_derive(m, r, g_ptr_array_index(a->graphs, x->graph), x->node, x->start, x->end,
              &g_array_index(m->scratch, act_iv, i));
  }
  return m->scratch;
}

void study_activity_add(study_activity *a, int rank, const et_graph *g, uint32_t node, sim_time_ps start,
                        sim_time_ps end)
{
  const et_node *n = &g->nodes[node];
  if (rank < 0 || rank >= a->n_ranks || end <= start || (n->flags & (ET_FLAG_CPU_OP | ET_FLAG_DELAY)))
    return;
  if (n->type != ET_NODE_COMP && n->type != ET_NODE_COMM_COLL && n->type != ET_NODE_COMM_SEND &&
      n->type != ET_NODE_COMM_RECV)
    return;
  act_rec x = {start, end, node, graph_number(a, g)};
  g_array_append_val(a->ivs[rank], x);
  spill_check(a, rank);
}

gboolean study_activity_add_measured(study_activity *a, const et_workload *w, GError **error)
{
  gboolean any = FALSE;
  for (int r = 0; r < w->n_ranks; r++)
    any |= w->measured_step_ps && w->measured_step_ps[r] > 0;
  if (!any) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: the workload carries no measured step window (a generated or converted-without-times set); "
                "the metrics of a measured run need a Kineto or XLA trace (simulate --json gives the simulated "
                "run's metrics)", w->source ? w->source : "workload");
    return FALSE;
  }
  for (int r = 0; r < w->n_ranks; r++) {
    const et_graph *g = w->ranks[r];
    sim_time_ps origin = w->measured_start_ps ? w->measured_start_ps[r] : 0;
    a->origin[r] = origin;
    a->window[r] = w->measured_step_ps[r] > 0 ? w->measured_step_ps[r] : 0;
    for (uint32_t i = 0; g && i < g->n_nodes; i++)
      if (g->nodes[i].flags & ET_FLAG_HAS_START)
        study_activity_add(a, r, g, i, origin + g->nodes[i].start_ps,
                           origin + g->nodes[i].start_ps + g->nodes[i].duration_ps);
  }
  return TRUE;
}

static void obs_node_done(void *ctx, int rank, const et_graph *g, uint32_t node, sim_time_ps start, sim_time_ps end)
{
  study_activity *a = ctx;
  study_activity_add(a, rank, g, node, start, end);
  if (a->next.node_done)
    a->next.node_done(a->next.ctx, rank, g, node, start, end);
}

static void obs_comm_done(void *ctx, const sim_comm_record *rec)
{
  study_activity *a = ctx;
  if (a->next.comm_done)
    a->next.comm_done(a->next.ctx, rec);
}

const sim_replay_observer *study_activity_observer(study_activity *a, const sim_replay_observer *next)
{
  if (next)
    a->next = *next;
  a->obs.node_done = obs_node_done;
  a->obs.comm_done = obs_comm_done;
  a->obs.ctx = a;
  return &a->obs;
}

void study_activity_add_grid(study_activity *a, int rank, sim_time_ps start, sim_time_ps end, double blocks,
                             int sm_count)
{
  if (rank < 0 || rank >= a->n_ranks || end <= start || sm_count <= 0 || !(blocks >= 0))
    return;
  if (a->grids == NULL)
    a->grids = g_new0(GArray *, a->n_ranks);
  if (a->grids[rank] == NULL)
    a->grids[rank] = g_array_new(FALSE, FALSE, sizeof(act_grid));
  act_grid x = {start, end, MIN(blocks / sm_count, 1.0)};
  g_array_append_val(a->grids[rank], x);
}

void study_activity_add_p2p_sample(study_activity *a, int rank, sim_time_ps t, double value)
{
  if (rank < 0 || rank >= a->n_ranks || !isfinite(value))
    return;
  if (a->p2p == NULL)
    a->p2p = g_new0(GArray *, a->n_ranks);
  if (a->p2p[rank] == NULL)
    a->p2p[rank] = g_array_new(FALSE, FALSE, sizeof(act_sample));
  act_sample x = {t, value};
  g_array_append_val(a->p2p[rank], x);
}

void study_activity_set_facts_why(study_activity *a, const char *grid_why, const char *p2p_why)
{
  if (grid_why)
    a->grid_why = grid_why;
  if (p2p_why)
    a->p2p_why = p2p_why;
}

void study_activity_add_nsys_facts(study_activity *a, const fe_nsys_facts *f)
{
  for (int r = 0; r < f->n_ranks; r++) {
    for (guint i = 0; i < f->grids[r]->len; i++) {
      const fe_nsys_grid *x = &g_array_index(f->grids[r], fe_nsys_grid, i);
      study_activity_add_grid(a, r, x->start, x->end, x->blocks, f->sm_count[r]);
    }
    for (guint i = 0; i < f->p2p[r]->len; i++) {
      const fe_nsys_sample *x = &g_array_index(f->p2p[r], fe_nsys_sample, i);
      study_activity_add_p2p_sample(a, r, x->t, x->value);
    }
  }
  study_activity_set_facts_why(a, !f->have_grids ? "the Nsight export's kernel table has no gridX/gridY/gridZ"
                               : "the Nsight export names no SM count (TARGET_INFO_GPU smCount)",
                               !f->have_gpu_metrics ? "the Nsight export has no GPU_METRICS table (profile with "
                               "--gpu-metrics-devices to sample NVLink throughput)"
                               : "the Nsight export's GPU metrics hold no NVLink TX Responses User Data "
                                 "[Throughput %] sample in the window");
}

void study_activity_set_replay_windows(study_activity *a, const sim_result *r, const et_workload *w)
{
  /* Every window ends with the step, when the last rank finishes: a rank
   * of a repeating job that finishes early (a pipeline's first or last
   * stage) waits for the next step, and its measured ProfilerStep lasts
   * until then, so ending it at its own finish would make avg_step_time a
   * mean of finishes, shorter than the replay's step (doc/metrics.md). */
  sim_time_ps end = 0;
  for (int k = 0; k < r->n_ranks; k++)
    end = MAX(end, r->ranks[k].finish);
  for (int k = 0; k < r->n_ranks && k < a->n_ranks; k++) {
    int rank = r->ranks[k].rank;
    if (rank < 0 || rank >= a->n_ranks || r->ranks[k].finish <= 0)
      continue;
    sim_time_ps origin = r->measured_starts && w->measured_start_ps ? w->measured_start_ps[rank] : 0;
    a->origin[rank] = origin;
    a->window[rank] = end > origin ? end - origin : 0;
    if (a->comm_split == NULL)
      a->comm_split = g_new0(sim_time_ps, 3 * (gsize)a->n_ranks);
    a->comm_split[3 * rank] = r->ranks[k].comm_transfer;
    a->comm_split[3 * rank + 1] = r->ranks[k].straggler_wait;
    a->comm_split[3 * rank + 2] = r->ranks[k].dependency_wait;
  }
}
