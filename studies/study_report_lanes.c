/* study_report_lanes.c: the per-rank timeline that `wisp report` draws,
 * recorded from the replay as it runs (a replay observer chained in front
 * of any other, e.g. the Perfetto timeline's).
 *
 * For at most STUDY_REPORT_LANE_RANKS ranks it keeps every compute
 * interval (GPU kernels: compute nodes that are neither CPU ops nor
 * measured idle gaps) and every communication interval (a collective or
 * point-to-point operation from the moment its data started moving to its
 * end, and communication replayed at its measured duration).  When the JSON
 * is written they are folded into STUDY_REPORT_LANE_BINS equal bins over
 * the window (default [0, step time]): per bin the share of the bin (0-100 %,
 * rounded) covered by compute and by communication.  Concurrent intervals
 * of one kind are merged first (a union), so a share never exceeds 100 %.
 *
 * Which ranks: the --timeline-ranks list when given, else every rank; when
 * that is more than STUDY_REPORT_LANE_RANKS, that many spread evenly over
 * it (the i-th kept is candidate floor(i * candidates / kept), so the first
 * is always kept and, for a job of equal nodes, one GPU per node or stage
 * is seen).  The JSON names the selection and how many ranks there were.
 *
 * Memory: 4 bytes per rank for the selection map and 24 bytes per interval
 * of a kept rank; time O(1) per callback and O(k log k) for a kept rank's k
 * intervals at the end. */
#include "config.h"
#include "studies/study_report.h"

#include <stdlib.h>

typedef struct {
  sim_time_ps start, end;
} lane_iv;

struct study_report_lanes {
  int n_ranks, n_kept, n_candidates;
  gboolean listed;         /* the candidates came from --timeline-ranks */
  int *slot;               /* [rank]: its lane, -1 when not kept */
  int *rank_of;            /* [lane]: its rank */
  sim_time_ps from, to;    /* the window; to < 0: the step's end */
  GArray **iv; /* [lane * 2 + kind], kind 0 compute, 1 communication */
  sim_replay_observer obs;
  const sim_replay_observer *next;
};

static void add(study_report_lanes *l, int rank, int kind, sim_time_ps start, sim_time_ps end)
{
  if (rank < 0 || rank >= l->n_ranks || l->slot[rank] < 0 || end <= start)
    return;
  lane_iv v = {start, end};
  g_array_append_val(l->iv[l->slot[rank] * 2 + kind], v);
}

static void on_node(void *ctx, int rank, const et_graph *g, uint32_t node, sim_time_ps start, sim_time_ps end)
{
  study_report_lanes *l = ctx;
  const et_node *n = &g->nodes[node];
  if (n->type == ET_NODE_COMP && !(n->flags & (ET_FLAG_DELAY | ET_FLAG_CPU_OP)))
    add(l, rank, 0, start, end);
  else if (n->comm != ET_NONE && (n->flags & ET_FLAG_REPLAY))
    add(l, rank, 1, start, end);
  if (l->next && l->next->node_done)
    l->next->node_done(l->next->ctx, rank, g, node, start, end);
}

static void on_comm(void *ctx, const sim_comm_record *c)
{
  study_report_lanes *l = ctx;
  add(l, c->rank, 1, c->start, c->end);
  if (l->next && l->next->comm_done)
    l->next->comm_done(l->next->ctx, c);
}

study_report_lanes *study_report_lanes_new(int n_ranks, const gboolean *rank_on, sim_time_ps from, sim_time_ps to,
                                          const sim_replay_observer *next)
{
  study_report_lanes *l = g_new0(study_report_lanes, 1);
  l->n_ranks = MAX(n_ranks, 0);
  l->listed = rank_on != NULL;
  l->from = MAX(from, (sim_time_ps)0);
  l->to = to;
  int *cand = g_new(int, MAX(l->n_ranks, 1));
  for (int r = 0; r < l->n_ranks; r++)
    if (rank_on == NULL || rank_on[r])
      cand[l->n_candidates++] = r;
  l->n_kept = MIN(l->n_candidates, STUDY_REPORT_LANE_RANKS);
  l->slot = g_new(int, MAX(l->n_ranks, 1));
  l->rank_of = g_new(int, MAX(l->n_kept, 1));
  for (int r = 0; r < l->n_ranks; r++)
    l->slot[r] = -1;
  for (int i = 0; i < l->n_kept; i++) { /* evenly spread, increasing, distinct since kept <= candidates */
    int r = cand[(int)((int64_t)i * l->n_candidates / l->n_kept)];
    l->rank_of[i] = r;
    l->slot[r] = i;
  }
  g_free(cand);
  l->iv = g_new0(GArray *, (gsize)l->n_kept * 2);
  for (int i = 0; i < l->n_kept * 2; i++)
    l->iv[i] = g_array_new(FALSE, FALSE, sizeof(lane_iv));
  l->next = next;
  l->obs.node_done = on_node;
  l->obs.comm_done = on_comm;
  l->obs.ctx = l;
  return l;
}

const sim_replay_observer *study_report_lanes_observer(study_report_lanes *l)
{
  return &l->obs;
}

static gint cmp_iv(gconstpointer a, gconstpointer b)
{
  const lane_iv *x = a, *y = b;
  return x->start < y->start ? -1 : x->start > y->start ? 1 : (x->end > y->end) - (x->end < y->end);
}

/* The union of a rank's intervals of one kind, clipped to [from, from +
 * bins * w), folded into `bins` bins of width w: pct[b] = covered share of
 * bin b in whole percent. */
static void fold(GArray *a, sim_time_ps from, sim_time_ps w, int bins, int *pct)
{
  g_array_sort(a, cmp_iv);
  sim_time_ps *cov = g_new0(sim_time_ps, bins);
  sim_time_ps cs = -1, ce = -1;
  for (guint k = 0; k <= a->len; k++) {
    const lane_iv *v = k < a->len ? &g_array_index(a, lane_iv, k) : NULL;
    if (v && cs >= 0 && v->start <= ce) {
      ce = MAX(ce, v->end);
      continue;
    }
    sim_time_ps lo = MAX(cs, from) - from, hi = MIN(ce, from + (sim_time_ps)bins * w) - from;
    for (sim_time_ps t = lo; cs >= 0 && t < hi;) { /* spread [lo, hi) over its bins */
      int b = (int)MIN((sim_time_ps)bins - 1, t / w);
      sim_time_ps stop = MIN(hi, (sim_time_ps)(b + 1) * w);
      cov[b] += stop - t;
      t = stop;
    }
    if (v) {
      cs = v->start;
      ce = v->end;
    }
  }
  for (int b = 0; b < bins; b++)
    pct[b] = (int)MIN(100, (cov[b] * 100 + w / 2) / w);
  g_free(cov);
}

void study_report_lanes_json(study_report_lanes *l, sim_time_ps step, int n_ranks, wisp_json *j)
{
  int bins = STUDY_REPORT_LANE_BINS;
  sim_time_ps from = MIN(l->from, step), to = l->to < 0 ? step : MIN(l->to, step);
  sim_time_ps w = MAX((sim_time_ps)1, (to - from + bins - 1) / bins);
  int saved = wisp_json_set_flat_depth(j, MIN(j->flat_depth, j->depth + 3)); /* one line per rank */
  wisp_json_begin_object(j, "rank_timeline");
  wisp_json_int(j, "bins", bins);
  wisp_json_ns(j, "bin_ns", w);
  wisp_json_ns(j, "from_ns", from);
  wisp_json_int(j, "ranks_recorded", l->n_kept);
  wisp_json_int(j, "ranks_total", n_ranks);
  wisp_json_int(j, "ranks_selected", l->n_candidates);
  wisp_json_string(j, "selection", l->n_kept < l->n_candidates ? (l->listed ? "evenly spread over --timeline-ranks"
                                                                           : "evenly spread over all ranks")
                                   : l->listed ? "--timeline-ranks" : "all ranks");
  wisp_json_begin_array(j, "ranks");
  int *pct = g_new(int, bins);
  for (int r = 0; r < l->n_kept; r++) {
    wisp_json_begin_object(j, NULL);
    wisp_json_int(j, "rank", l->rank_of[r]);
    static const char *const keys[] = {"compute_pct", "communication_pct"};
    for (int k = 0; k < 2; k++) {
      fold(l->iv[r * 2 + k], from, w, bins, pct);
      wisp_json_begin_array(j, keys[k]);
      for (int b = 0; b < bins; b++)
        wisp_json_int(j, NULL, pct[b]);
      wisp_json_end_array(j);
    }
    wisp_json_end_object(j);
  }
  g_free(pct);
  wisp_json_end_array(j);
  wisp_json_end_object(j);
  wisp_json_set_flat_depth(j, saved);
}

void study_report_lanes_free(study_report_lanes *l)
{
  if (l == NULL)
    return;
  for (int i = 0; i < l->n_kept * 2; i++)
    g_array_unref(l->iv[i]);
  g_free(l->iv);
  g_free(l->slot);
  g_free(l->rank_of);
  g_free(l);
}
