/* study_search.c: enumerating, simulating and ranking the parallel
 * configurations of a traced job (see study_search.h). */
#include "config.h"
#include "studies/study_search_internal.h"
#include "studies/study_sweep.h"
#include "studies/study.h"
#include "common/wisp_json.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

void study_search_result_free(study_search_result *r)
{
  if (r == NULL)
    return;
  for (guint i = 0; r->points && i < r->points->len; i++)
    g_free(g_array_index(r->points, study_search_point, i).why);
  if (r->points)
    g_array_free(r->points, TRUE);
  g_free(r);
}

/* Every valid (schedule, dp, tp, pp, cp, ep, mb); ep (dividing dp and the
 * experts) only for a MoE card, cp up to max_cp: O(schedules x divisors^6). */
static void enumerate(const et_model_card *c, const study_search_opts *o, GArray *out)
{
  int card_sched = c->sched >= 0 ? c->sched : ET_SCHED_1F1B;
  for (int si = 0; si < MAX(o->n_scheds, 1); si++) {
    int sched = o->n_scheds > 0 ? o->scheds[si] : card_sched;
    int vpp = sched == ET_SCHED_INTERLEAVED ? (c->vpp > 0 ? c->vpp : 2) : 0;
    for (int tp = 1; tp <= o->max_tp && tp <= o->max_gpus; tp++)
      for (int pp = 1; tp * pp <= o->max_gpus; pp++)
        for (int cp = 1; cp <= MAX(o->max_cp, 1) && tp * pp * cp <= o->max_gpus; cp++)
          for (int dp = 1; dp * tp * pp * cp <= o->max_gpus; dp++)
            for (int ep = 1; ep <= (c->experts > 0 ? dp : 1); ep++)
              for (int mb = 1; mb * dp <= c->global_batch; mb++) {
                et_repart_request rq = {.tp = tp, .pp = pp, .dp = dp, .mb = mb, .sched = sched, .ep = ep, .vpp = vpp,
                                        .cp = cp};
                if (!et_repart_check(c, &rq, NULL))
                  continue;
                study_search_point p = {.rq = rq, .gpus = dp * tp * pp * cp};
                p.baseline = tp == c->tp && pp == c->pp && dp == c->dp && mb == c->mb && ep == MAX(c->ep, 1) &&
                             cp == MAX(c->cp, 1) && sched == card_sched && (vpp == 0 || c->vpp == 0 || vpp == c->vpp);
                g_array_append_val(out, p);
              }
  }
}

static int cmp_points(const void *pa, const void *pb)
{
  const study_search_point *a = pa, *b = pb;
  if ((a->status == STUDY_PT_SIMULATED) != (b->status == STUDY_PT_SIMULATED))
    return a->status == STUDY_PT_SIMULATED ? -1 : 1;
  if (a->status == STUDY_PT_SIMULATED && a->score != b->score)
    return a->score < b->score ? -1 : 1;
  if (a->gpus != b->gpus)
    return a->gpus - b->gpus;
  if (a->rq.dp != b->rq.dp)
    return a->rq.dp - b->rq.dp;
  if (a->rq.tp != b->rq.tp)
    return a->rq.tp - b->rq.tp;
  if (a->rq.pp != b->rq.pp)
    return a->rq.pp - b->rq.pp;
  if (a->rq.ep != b->rq.ep)
    return a->rq.ep - b->rq.ep;
  if (a->rq.cp != b->rq.cp)
    return a->rq.cp - b->rq.cp;
  if (a->rq.mb != b->rq.mb)
    return a->rq.mb - b->rq.mb;
  return a->rq.sched - b->rq.sched;
}

/* Scores (composite negated, so smaller is better throughout), the
 * Pareto front, the order and the ranks. */
static void rank_points(study_search_result *r)
{
  GArray *a = r->points;
  double t0 = 0, n0 = 0;
  for (guint i = 0; i < a->len; i++) {
    study_search_point *p = &g_array_index(a, study_search_point, i);
    if (p->baseline && p->status == STUDY_PT_SIMULATED) {
      t0 = (double)p->step;
      n0 = p->gpus;
    }
  }
  for (guint i = 0; i < a->len; i++) {
    study_search_point *p = &g_array_index(a, study_search_point, i);
    if (p->status != STUDY_PT_SIMULATED)
      continue;
    double t = (double)p->step;
    p->score = r->weight < 0 || t0 <= 0 ? t / 1e9 : -(r->weight * t0 / t + (1.0 - r->weight) * n0 / p->gpus);
    p->pareto = TRUE;
    for (guint j = 0; j < a->len && p->pareto; j++) {
      const study_search_point *q = &g_array_index(a, study_search_point, j);
      p->pareto = !(q->status == STUDY_PT_SIMULATED && q->step <= p->step && q->gpus <= p->gpus &&
                    (q->step < p->step || q->gpus < p->gpus));
    }
  }
  g_array_sort(a, cmp_points);
  r->baseline = -1;
  int k = 0;
  for (guint i = 0; i < a->len; i++) {
    study_search_point *p = &g_array_index(a, study_search_point, i);
    p->rank = p->status == STUDY_PT_SIMULATED ? ++k : 0;
    if (p->baseline)
      r->baseline = (int)i;
  }
}

/* The tier the points run on: --network-model's, else the cluster's own
 * setting (read from the cluster fitted to the traced configuration's
 * GPUs; presets keep their setting when fitted).  One topology build. */
static gboolean search_tier(const study_search_opts *o, const et_model_card *c, const sim_replay_options *opt,
                            net_tier *tier, GError **error)
{
  if (opt->has_tier) {
    *tier = opt->tier;
    return TRUE;
  }
  char *resolved = NULL, *notes = NULL;
  topo_variant *v = study_cluster_open(o->cluster, MAX(c->dp, 1) * MAX(c->tp, 1) * MAX(c->pp, 1) * MAX(c->cp, 1),
                                       &resolved, &notes, error);
  g_free(resolved);
  g_free(notes);
  topo *t = v ? topo_variant_build(v, error) : NULL;
  if (t)
    *tier = net_default_tier(t);
  topo_free(t);
  topo_variant_free(v);
  return t != NULL;
}

/* How many ranks after the first score within STUDY_SEARCH_CLOSE_PCT of
 * it on the analytical tier (0 on the flow tier).  O(points). */
static int close_to_best(const study_search_result *r)
{
  if (r->tier != NET_TIER_ANALYTICAL || r->points->len == 0)
    return 0;
  const study_search_point *best = &g_array_index(r->points, study_search_point, 0);
  if (best->status != STUDY_PT_SIMULATED)
    return 0;
  int n = 0;
  for (guint i = 1; i < r->points->len; i++) {
    const study_search_point *p = &g_array_index(r->points, study_search_point, i);
    if (p->status != STUDY_PT_SIMULATED ||
        fabs(p->score - best->score) > STUDY_SEARCH_CLOSE_PCT / 100.0 * fabs(best->score))
      break;
    n++;
  }
  return n;
}

/* The points to simulate now: this shard's, less those with a valid
 * result file when resuming (counted in r->kept). */
static GArray *pending_points(const study_search_ctx *sc, study_search_result *r)
{
  const study_search_opts *o = sc->o;
  GArray *pending = g_array_new(FALSE, FALSE, sizeof(int));
  for (int p = 0; p < (int)sc->points->len; p++) {
    if (o->shard_n > 1 && p % o->shard_n != o->shard_k - 1)
      continue;
    if (o->resume && study_search_point_read(sc, p))
      r->kept++;
    else
      g_array_append_val(pending, p);
  }
  return pending;
}

/* Reads every point's result back (other shards' when present) and
 * counts them; r->missing the points without a result. */
static void collect(const study_search_ctx *sc, study_search_result *r)
{
  for (int p = 0; p < (int)sc->points->len; p++) {
    study_search_point *pt = &g_array_index(sc->points, study_search_point, p);
    if (!study_search_point_read(sc, p)) {
      r->missing++;
      continue;
    }
    r->simulated += pt->status == STUDY_PT_SIMULATED;
    r->refused += pt->status == STUDY_PT_NO_MEMORY;
    r->failed += pt->status == STUDY_PT_FAILED;
  }
}

study_search_result *study_search_run(const et_model *m, const et_model_card *c, const sim_replay_options *opt,
                                      const study_search_opts *o, GError **error)
{
  double t_start = wisp_wall_seconds();
  study_search_result *r = g_new0(study_search_result, 1);
  r->points = g_array_new(FALSE, FALSE, sizeof(study_search_point));
  r->weight = o->weight;
  if (o->max_cp > 1 && !et_model_has_attention(m)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED,
                "--max-cp %d: re-partitioning the sequence needs the layer's attention kernel (a name with flash, "
                "fmha, attention or sdpa), and the traced layer has none", o->max_cp);
    study_search_result_free(r);
    return NULL;
  }
  if (o->max_cp > 1 && c->cp_comm) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED,
                "--max-cp %d: context parallelism is modelled as Megatron's ring attention (cp_comm_type p2p); the "
                "card's cp_comm_type %s is not modelled", o->max_cp, c->cp_comm);
    study_search_result_free(r);
    return NULL;
  }
  if (!et_model_etp_modelled(c)) { /* every point would be refused (et_repart_check) */
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED,
                "the card's expert_tensor_parallel_size %d is not modelled: only 1 or the traced tp %d under "
                "sequence parallelism (Megatron's expert tensor parallelism over the TP group); see wisp simulate "
                "--scale for what is missing", c->etp, c->tp);
    study_search_result_free(r);
    return NULL;
  }
  if (!search_tier(o, c, opt, &r->tier, error)) {
    study_search_result_free(r);
    return NULL;
  }
  enumerate(c, o, r->points);
  for (guint i = 0; i < r->points->len; i++) {
    study_search_point *p = &g_array_index(r->points, study_search_point, i);
    et_repart_memory mem;
    et_repart_memory_of(c, &p->rq, &mem);
    p->mem_bytes = mem.total_bytes;
  }
  /* Without -o the points go to a temporary directory that SIGINT/SIGTERM remove too. */
  char *dir = o->points_dir ? g_strdup(o->points_dir) : wisp_output_temp_new("wisp-search-XXXXXX", TRUE, error);
  if (dir == NULL || g_mkdir_with_parents(dir, 0777) != 0) {
    if (dir)
      g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot create the points directory: %s", dir,
                  g_strerror(errno));
    g_free(dir);
    study_search_result_free(r);
    return NULL;
  }
  study_search_ctx sc = {.m = m, .c = c, .opt = opt, .o = o, .points = r->points, .dir = dir};
  GArray *pending = pending_points(&sc, r);
  study_points_runner run = {.fn = study_search_point_run, .ctx = &sc, .jobs = o->jobs, .progress = o->progress,
                             .who = "wisp search"};
  gboolean ok = study_points_run(&run, (const int *)(void *)pending->data, (int)pending->len,
                                 (int)pending->len + r->kept, r->kept, error);
  r->run_now = (int)pending->len;
  g_array_free(pending, TRUE);
  if (ok) {
    collect(&sc, r);
    if (r->missing == 0) {
      rank_points(r);
      r->close_to_best = close_to_best(r);
    }
  }
  if (o->points_dir == NULL) {
    study_search_points_remove(dir, (int)r->points->len);
    wisp_output_temp_forget(dir); /* after: a signal in between still removes the rest */
  }
  g_free(dir);
  if (!ok) {
    study_search_result_free(r);
    return NULL;
  }
  r->seconds = wisp_wall_seconds() - t_start;
  return r;
}
