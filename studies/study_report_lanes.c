/* study_report_lanes.c: the per-rank timeline that `wisp report` draws,
 * recorded from the replay as it runs (a replay observer chained in front
 * of any other, e.g. the Perfetto timeline's).
 *
 * For the first STUDY_REPORT_LANE_RANKS ranks it keeps every compute
 * interval (GPU kernels: compute nodes that are neither CPU ops nor
 * measured idle gaps) and every communication interval (a collective or
 * point-to-point operation from the moment its data started moving to its
 * end, and communication replayed at its measured duration).  When the JSON
 * is written they are folded into STUDY_REPORT_LANE_BINS equal bins over
 * [0, step time]: per bin the share of the bin (0-100 %, rounded) covered by
 * compute and by communication.  Concurrent intervals of one kind are
 * merged first (a union), so a share never exceeds 100 %.
 *
 * Memory: 24 bytes per interval of a kept rank; time O(k log k) for a
 * rank's k intervals at the end.  Ranks beyond the first
 * STUDY_REPORT_LANE_RANKS are not recorded (the JSON says how many were). */
#include "config.h"
#include "studies/study_report.h"

#include <stdlib.h>

typedef struct {
  sim_time_ps start, end;
} lane_iv;

struct study_report_lanes {
  int n_kept;
  GArray **iv; /* [rank * 2 + kind], kind 0 compute, 1 communication */
  sim_replay_observer obs;
  const sim_replay_observer *next;
};

static void add(study_report_lanes *l, int rank, int kind, sim_time_ps start, sim_time_ps end)
{
  if (rank < 0 || rank >= l->n_kept || end <= start)
    return;
  lane_iv v = {start, end};
  g_array_append_val(l->iv[rank * 2 + kind], v);
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

study_report_lanes *study_report_lanes_new(int n_ranks, const sim_replay_observer *next)
{
  study_report_lanes *l = g_new0(study_report_lanes, 1);
  l->n_kept = MIN(n_ranks, STUDY_REPORT_LANE_RANKS);
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

/* The union of a rank's intervals of one kind folded into `bins` bins of
 * width w: pct[b] = covered share of bin b in whole percent. */
static void fold(GArray *a, sim_time_ps w, int bins, int *pct)
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
    for (sim_time_ps t = cs; cs >= 0 && t < ce;) { /* spread [cs, ce) over its bins */
      int b = (int)MIN((sim_time_ps)bins - 1, t / w);
      sim_time_ps stop = b == bins - 1 ? ce : MIN(ce, (sim_time_ps)(b + 1) * w);
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
  sim_time_ps w = MAX((sim_time_ps)1, (step + bins - 1) / bins);
  int saved = wisp_json_set_flat_depth(j, MIN(j->flat_depth, j->depth + 3)); /* one line per rank */
  wisp_json_begin_object(j, "rank_timeline");
  wisp_json_int(j, "bins", bins);
  wisp_json_ns(j, "bin_ns", w);
  wisp_json_int(j, "ranks_recorded", l->n_kept);
  wisp_json_int(j, "ranks_total", n_ranks);
  wisp_json_begin_array(j, "ranks");
  int *pct = g_new(int, bins);
  for (int r = 0; r < l->n_kept; r++) {
    wisp_json_begin_object(j, NULL);
    wisp_json_int(j, "rank", r);
    static const char *const keys[] = {"compute_pct", "communication_pct"};
    for (int k = 0; k < 2; k++) {
      fold(l->iv[r * 2 + k], w, bins, pct);
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
  g_free(l);
}
