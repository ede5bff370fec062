/* study_search_out.c: the outputs of `wisp search` (study_search.h): the
 * ranked table with the refused points and their reasons, the JSON for
 * planning scripts and the SVG of step time against GPU count. */
#include "config.h"
#include "studies/study_search_internal.h"
#include "studies/study.h"
#include "common/wisp_json.h"

#include <string.h>

static const char *status_name(study_point_status s)
{
  return s == STUDY_PT_SIMULATED ? "simulated" : s == STUDY_PT_NO_MEMORY ? "does_not_fit" : "failed";
}

void study_search_print(const study_search_result *r, const et_model_card *c, FILE *out)
{
  GString *sn = g_string_new(NULL);
  for (guint i = 0; i < r->points->len; i++) {
    const char *n = et_sched_name((et_sched)g_array_index(r->points, study_search_point, i).rq.sched);
    if (!strstr(sn->str, n))
      g_string_append_printf(sn, "%s%s", sn->len ? ", " : "", n);
  }
  int max_cp = 1;
  for (guint i = 0; i < r->points->len; i++)
    max_cp = MAX(max_cp, g_array_index(r->points, study_search_point, i).rq.cp);
  char cps[32] = "cp = 1";
  if (max_cp > 1)
    g_snprintf(cps, sizeof cps, "cp 1..%d", max_cp);
  fprintf(out, "search: %u configurations (dp x tp x pp%s, micro-batches; schedule %s; %s): %d simulated, %d "
          "do not fit in %.0f GB of HBM, %d failed; %.2f s\n", r->points->len, c->experts > 0 ? " x ep" : "",
          sn->len ? sn->str : et_sched_name(c->sched >= 0 ? (et_sched)c->sched : ET_SCHED_1F1B), cps, r->simulated,
          r->refused, c->hbm_bytes / 1e9, r->failed, r->seconds);
  g_string_free(sn, TRUE);
  if (r->kept > 0)
    fprintf(out, "resumed: %d configurations kept from the points directory, %d simulated now\n", r->kept,
            r->run_now);
  if (r->weight >= 0)
    fprintf(out, "objective: composite w T0/T + (1 - w) N0/N, w = %.2f, T0 and N0 the traced configuration's "
            "(larger is better)\n", r->weight);
  else
    fprintf(out, "objective: step time (smaller is better)\n");
  fprintf(out, "%5s %5s %4s %4s %4s %4s %4s %14s %10s %9s %-16s %3s %3s %6s\n", "rank", "gpus", "dp", "tp", "pp",
          "ep", "mb", "step_time_ms", r->weight >= 0 ? "composite" : "", "mem_GB", "schedule", "vpp", "cp", "pareto");
  for (guint i = 0; i < r->points->len; i++) {
    const study_search_point *p = &g_array_index(r->points, study_search_point, i);
    if (p->status != STUDY_PT_SIMULATED)
      continue;
    char score[32] = "";
    if (r->weight >= 0)
      g_snprintf(score, sizeof score, "%.4f", -p->score);
    fprintf(out, "%5d %5d %4d %4d %4d %4d %4d %14.3f %10s %9.2f %-16s %3d %3d %6s%s\n", p->rank, p->gpus, p->rq.dp,
            p->rq.tp, p->rq.pp, p->rq.ep, p->rq.mb, (double)p->step / 1e9, score, p->mem_bytes / 1e9,
            et_sched_name((et_sched)p->rq.sched), MAX(p->rq.vpp, 1), MAX(p->rq.cp, 1), p->pareto ? "*" : "",
            p->baseline ? "  (traced)" : "");
  }
  if (r->close_to_best > 0) {
    char ranks[48] = "rank 2 is";
    if (r->close_to_best > 1)
      g_snprintf(ranks, sizeof ranks, "ranks 2..%d are", r->close_to_best + 1);
    fprintf(out, "close call: %s within %.0f %% of rank 1 on the analytical tier, whose links serve transfers "
            "first come, first served: against ground truth that shares links fairly its step times were off by "
            "-0.25 .. +1.69 %% (doc/repartition.md), so configurations this close can come out in either order; "
            "settle them with --network-model flow\n", ranks, STUDY_SEARCH_CLOSE_PCT);
  }
  for (guint i = 0; i < r->points->len; i++) {
    const study_search_point *p = &g_array_index(r->points, study_search_point, i);
    if (p->status != STUDY_PT_SIMULATED)
      fprintf(out, "%s: dp %d tp %d pp %d ep %d mb %d%s%.0d%s%s: %s\n",
              p->status == STUDY_PT_NO_MEMORY ? "refused" : "failed", p->rq.dp, p->rq.tp, p->rq.pp, p->rq.ep,
              p->rq.mb, p->rq.cp > 1 ? " cp " : "", p->rq.cp > 1 ? p->rq.cp : 0, p->rq.sched != (c->sched >= 0 ? c->sched : ET_SCHED_1F1B) ? " schedule " : "",
              p->rq.sched != (c->sched >= 0 ? c->sched : ET_SCHED_1F1B) ? et_sched_name((et_sched)p->rq.sched) : "",
              p->why);
  }
}

gboolean study_search_write_json(const study_search_result *r, const et_model_card *c, const char *path,
                                 GError **error)
{
  wisp_afile *f = wisp_afile_open(path, error);
  if (f == NULL)
    return FALSE;
  wisp_json j;
  wisp_json_init(&j, wisp_afile_stream(f), 2);
  wisp_json_begin_object(&j, NULL);
  wisp_json_int(&j, "schema_version", STUDY_SCHEMA_VERSION);
  wisp_json_string(&j, "objective", r->weight >= 0 ? "composite" : "step_time");
  if (r->weight >= 0)
    wisp_json_double(&j, "weight", r->weight, 4);
  wisp_json_string(&j, "schedule", et_sched_name(c->sched >= 0 ? (et_sched)c->sched : ET_SCHED_1F1B));
  wisp_json_string(&j, "network_model", net_tier_name(r->tier));
  wisp_json_double(&j, "hbm_bytes", c->hbm_bytes, 0);
  wisp_json_int(&j, "simulated", r->simulated);
  wisp_json_int(&j, "does_not_fit", r->refused);
  wisp_json_int(&j, "failed", r->failed);
  wisp_json_begin_array(&j, "points");
  for (guint i = 0; i < r->points->len; i++) {
    const study_search_point *p = &g_array_index(r->points, study_search_point, i);
    wisp_json_begin_object(&j, NULL);
    wisp_json_int(&j, "rank", p->rank);
    wisp_json_string(&j, "status", status_name(p->status));
    wisp_json_int(&j, "gpus", p->gpus);
    wisp_json_int(&j, "dp", p->rq.dp);
    wisp_json_int(&j, "tp", p->rq.tp);
    wisp_json_int(&j, "pp", p->rq.pp);
    wisp_json_int(&j, "ep", p->rq.ep);
    wisp_json_int(&j, "cp", MAX(p->rq.cp, 1));
    wisp_json_int(&j, "micro_batches", p->rq.mb);
    wisp_json_string(&j, "schedule", et_sched_name((et_sched)p->rq.sched));
    wisp_json_int(&j, "vpp", MAX(p->rq.vpp, 1));
    wisp_json_double(&j, "memory_bytes", p->mem_bytes, 0);
    if (p->status == STUDY_PT_SIMULATED) {
      wisp_json_ns(&j, "step_time_ns", p->step);
      if (r->weight >= 0)
        wisp_json_double(&j, "composite", -p->score, 6);
      wisp_json_bool(&j, "pareto", p->pareto);
      /* Within STUDY_SEARCH_CLOSE_PCT of rank 1 on the analytical tier. */
      wisp_json_bool(&j, "close_to_best", p->rank >= 2 && p->rank <= r->close_to_best + 1);
    } else {
      wisp_json_string(&j, "reason", p->why);
    }
    wisp_json_bool(&j, "traced", p->baseline);
    wisp_json_end_object(&j);
  }
  wisp_json_end_array(&j);
  wisp_json_end_object(&j);
  wisp_json_finish(&j);
  return wisp_afile_commit(f, error);
}

gboolean study_search_svg(const study_search_result *r, const char *path, GError **error)
{
  GArray *bx = g_array_new(FALSE, FALSE, sizeof(double)), *by = g_array_new(FALSE, FALSE, sizeof(double));
  GArray *px = g_array_new(FALSE, FALSE, sizeof(double)), *py = g_array_new(FALSE, FALSE, sizeof(double));
  /* Best step time per GPU count, and the front, by GPU count. */
  for (int n = 1; n <= 1 << 20; n++) {
    double best = -1;
    gboolean any = FALSE, front = FALSE;
    for (guint i = 0; i < r->points->len; i++) {
      const study_search_point *p = &g_array_index(r->points, study_search_point, i);
      if (p->status == STUDY_PT_SIMULATED && p->gpus == n) {
        double ms = (double)p->step / 1e9;
        if (!any || ms < best)
          best = ms;
        any = TRUE;
        front |= p->pareto;
      }
    }
    if (any) {
      double x = n;
      g_array_append_val(bx, x);
      g_array_append_val(by, best);
      if (front) {
        g_array_append_val(px, x);
        g_array_append_val(py, best);
      }
    }
    gboolean more = FALSE;
    for (guint i = 0; i < r->points->len && !more; i++)
      more = g_array_index(r->points, study_search_point, i).gpus > n;
    if (!more)
      break;
  }
  study_svg_series s[2] = {
    {"best configuration per GPU count", (double *)bx->data, (double *)by->data, (int)bx->len},
    {"Pareto front (step time, GPUs)", (double *)px->data, (double *)py->data, (int)px->len},
  };
  study_svg_line_opts opts = {.log_x = TRUE, .y_ms_quantity = "step time"};
  gboolean ok = study_svg_line_chart_opts(path, "wisp search: step time against GPU count", "GPUs", "step time (ms)",
                                          s, 2, NULL, &opts, error);
  g_array_free(bx, TRUE);
  g_array_free(by, TRUE);
  g_array_free(px, TRUE);
  g_array_free(py, TRUE);
  return ok;
}
