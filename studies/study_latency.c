/* study_latency.c: TTFT and TPOT what-ifs from per-execution utility
 * studies (study_latency.h).  Pure arithmetic over the studies' step
 * times: O(executions x resources).
 */
#include "config.h"

#include "studies/study_latency.h"
#include "common/wisp_json.h"

#include <math.h>
#include <string.h>

/* The executions TPOT averages: 1..n-2 when n > 2, else 1..n-1. */
static void decode_range(int n, int *first, int *last)
{
  *first = 1;
  *last = n > 2 ? n - 2 : n - 1;
}

void study_latency_rule(const double *d, int n_exec, int n_ranks, double *ttft, double *tpot)
{
  double sum_ttft = 0, sum_tpot = 0;
  int n_ttft = 0, n_tpot = 0;
  for (int r = 0; r < n_ranks; r++) {
    int len = 0;
    for (int k = 0; k < n_exec; k++)
      len += !isnan(d[(size_t)k * n_ranks + r]);
    if (len == 0)
      continue;
    int first, last, at = 0;
    decode_range(len, &first, &last);
    double s = 0;
    for (int k = 0; k < n_exec; k++) {
      double v = d[(size_t)k * n_ranks + r];
      if (isnan(v))
        continue;
      if (at == 0) {
        sum_ttft += v;
        n_ttft++;
      } else if (at >= first && at <= last) {
        s += v;
      }
      at++;
    }
    if (len > 1) {
      sum_tpot += s / (last - first + 1);
      n_tpot++;
    }
  }
  *ttft = n_ttft ? sum_ttft / n_ttft : NAN;
  *tpot = n_tpot ? sum_tpot / n_tpot : NAN;
}

static double ns_of(sim_time_ps ps)
{
  return (double)ps / (double)SIM_PS_PER_NS;
}

static double util_pct(double t, double t2)
{
  return t > 0 ? 100.0 * (t - t2) / t : 0.0;
}

/* Row r of every study names the same resource. */
static gboolean same_rows(study_utility_result *const *steps, int n, GError **error)
{
  for (int k = 1; k < n; k++) {
    if (steps[k]->rows->len != steps[0]->rows->len) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "model execution %d has %u resource rows, execution 0 %u",
                  k, steps[k]->rows->len, steps[0]->rows->len);
      return FALSE;
    }
    for (guint r = 0; r < steps[0]->rows->len; r++)
      if (strcmp(g_array_index(steps[k]->rows, study_utility_row, r).resource,
                 g_array_index(steps[0]->rows, study_utility_row, r).resource) != 0) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "model execution %d: resource row %u differs", k, r);
        return FALSE;
      }
  }
  return TRUE;
}

study_latency *study_latency_new(study_utility_result *const *steps, const double *measured_ns, int n_ranks, int n,
                                 GError **error)
{
  if (n < 2) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "TTFT and TPOT need at least two model executions (a prefill "
                "and a decode step); the trace has %d", n);
    return NULL;
  }
  if (!same_rows(steps, n, error))
    return NULL;
  study_latency *l = g_new0(study_latency, 1);
  l->n_steps = n;
  decode_range(n, &l->decode_first, &l->decode_last);
  int nd = l->decode_last - l->decode_first + 1;
  double *sim = g_new(double, n);
  for (int k = 0; k < n; k++)
    sim[k] = ns_of(steps[k]->baseline.step_time);
  study_latency_rule(sim, n, 1, &l->ttft_ns, &l->tpot_ns);
  g_free(sim);
  study_latency_rule(measured_ns, n, n_ranks, &l->measured_ttft_ns, &l->measured_tpot_ns);
  l->rows = g_array_new(FALSE, TRUE, sizeof(study_latency_row));
  for (guint r = 0; r < steps[0]->rows->len; r++) {
    const study_utility_row *u0 = &g_array_index(steps[0]->rows, study_utility_row, r);
    study_latency_row row = { g_strdup(u0->resource), u0->applicable, 0, 0, 0, 0 };
    row.ttft_2x_ns = ns_of(u0->variant.step_time);
    double s2 = 0;
    for (int k = l->decode_first; k <= l->decode_last; k++) {
      const study_utility_row *uk = &g_array_index(steps[k]->rows, study_utility_row, r);
      s2 += ns_of(uk->variant.step_time);
      row.applicable = row.applicable && uk->applicable;
    }
    row.tpot_2x_ns = s2 / nd;
    row.ttft_utility_pct = util_pct(l->ttft_ns, row.ttft_2x_ns);
    row.tpot_utility_pct = util_pct(l->tpot_ns, row.tpot_2x_ns);
    g_array_append_val(l->rows, row);
  }
  return l;
}

void study_latency_free(study_latency *l)
{
  if (l == NULL)
    return;
  for (guint r = 0; l->rows && r < l->rows->len; r++)
    g_free(g_array_index(l->rows, study_latency_row, r).resource);
  if (l->rows)
    g_array_free(l->rows, TRUE);
  g_free(l);
}

void study_latency_print(const study_latency *l, FILE *out)
{
  fprintf(out, "\nlatency (%d model executions: TTFT = execution 0, TPOT = mean of executions %d..%d, as CCL-Bench's "
          "inference_latency)\n", l->n_steps, l->decode_first, l->decode_last);
  fprintf(out, "  baseline: TTFT %.3f ms, TPOT %.3f ms", l->ttft_ns / 1e6, l->tpot_ns / 1e6);
  if (!isnan(l->measured_ttft_ns))
    fprintf(out, " (measured TTFT %.3f ms", l->measured_ttft_ns / 1e6);
  if (!isnan(l->measured_ttft_ns) && !isnan(l->measured_tpot_ns))
    fprintf(out, ", TPOT %.3f ms", l->measured_tpot_ns / 1e6);
  fprintf(out, "%s\n", isnan(l->measured_ttft_ns) ? "" : ")");
  fprintf(out, "  %-16s %12s %10s %12s %10s\n", "resource", "TTFT_2x_ms", "TTFT_util", "TPOT_2x_ms", "TPOT_util");
  for (guint r = 0; r < l->rows->len; r++) {
    const study_latency_row *row = &g_array_index(l->rows, study_latency_row, r);
    if (!row->applicable) {
      fprintf(out, "  %-16s %12s %10s %12s %10s\n", row->resource, "n/a", "n/a", "n/a", "n/a");
      continue;
    }
    fprintf(out, "  %-16s %12.3f %9.2f%% %12.3f %9.2f%%\n", row->resource, row->ttft_2x_ns / 1e6,
            row->ttft_utility_pct, row->tpot_2x_ns / 1e6, row->tpot_utility_pct);
  }
}

static void json_ns_or_null(wisp_json *j, const char *key, double ns)
{
  if (isnan(ns))
    wisp_json_string(j, key, NULL);
  else
    wisp_json_double(j, key, ns, 3);
}

gboolean study_latency_write_json(const study_latency *l, const char *path, GError **error)
{
  wisp_afile *f = wisp_afile_open(path, error);
  if (f == NULL)
    return FALSE;
  wisp_json j;
  wisp_json_init(&j, wisp_afile_stream(f), 2);
  wisp_json_begin_object(&j, NULL);
  wisp_json_int(&j, "schema_version", STUDY_SCHEMA_VERSION);
  wisp_json_string(&j, "kind", "utility_latency");
  wisp_json_int(&j, "model_executions", l->n_steps);
  wisp_json_int(&j, "tpot_first_execution", l->decode_first);
  wisp_json_int(&j, "tpot_last_execution", l->decode_last);
  wisp_json_double(&j, "ttft_ns", l->ttft_ns, 3);
  wisp_json_double(&j, "tpot_ns", l->tpot_ns, 3);
  json_ns_or_null(&j, "measured_ttft_ns", l->measured_ttft_ns);
  json_ns_or_null(&j, "measured_tpot_ns", l->measured_tpot_ns);
  wisp_json_begin_array(&j, "resources");
  for (guint r = 0; r < l->rows->len; r++) {
    const study_latency_row *row = &g_array_index(l->rows, study_latency_row, r);
    wisp_json_begin_object(&j, NULL);
    wisp_json_string(&j, "resource", row->resource);
    wisp_json_bool(&j, "applicable", row->applicable);
    wisp_json_double(&j, "ttft_2x_ns", row->ttft_2x_ns, 3);
    wisp_json_double(&j, "tpot_2x_ns", row->tpot_2x_ns, 3);
    wisp_json_double(&j, "ttft_utility_pct", row->ttft_utility_pct, 4);
    wisp_json_double(&j, "tpot_utility_pct", row->tpot_utility_pct, 4);
    wisp_json_end_object(&j);
  }
  wisp_json_end_array(&j);
  wisp_json_end_object(&j);
  wisp_json_finish(&j);
  return wisp_afile_commit(f, error);
}
