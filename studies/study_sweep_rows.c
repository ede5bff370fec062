/* study_sweep_rows.c: the sweep's row formats: CSV fields and lines
 * (RFC 4180 quoting, no embedded newlines), the CSV header, and one
 * point's CSV row and JSON line as study_sweep_run writes them.  Each is
 * O(length of the line).
 */
#include "config.h"
#include "studies/study_sweep_internal.h"
#include "common/wisp_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void study_sweep_csv_field(GString *s, const char *f)
{
  if (strpbrk(f, ",\"\n\r") == NULL) {
    g_string_append(s, f);
    return;
  }
  g_string_append_c(s, '"');
  for (const char *p = f; *p; p++) {
    if (*p == '"')
      g_string_append_c(s, '"');
    g_string_append_c(s, *p);
  }
  g_string_append_c(s, '"');
}

/* Splits one CSV line (RFC 4180 quoting, no embedded newlines). */
GPtrArray *study_sweep_csv_split(const char *line)
{
  GPtrArray *f = g_ptr_array_new_with_free_func(g_free);
  const char *p = line;
  for (;;) {
    GString *cur = g_string_new(NULL);
    if (*p == '"') {
      p++;
      while (*p) {
        if (*p == '"' && p[1] == '"') {
          g_string_append_c(cur, '"');
          p += 2;
        } else if (*p == '"') {
          p++;
          break;
        } else {
          g_string_append_c(cur, *p++);
        }
      }
    }
    while (*p && *p != ',')
      g_string_append_c(cur, *p++);
    g_ptr_array_add(f, g_string_free(cur, FALSE));
    if (*p != ',')
      break;
    p++;
  }
  return f;
}

/* Field `col` (0-based) of a CSV line, double quotes honoured; NULL when
 * the line is shorter.  O(line length). */
char *study_sweep_csv_column(const char *line, int col)
{
  GString *f = g_string_new(NULL);
  gboolean quoted = FALSE;
  int c = 0;
  for (const char *p = line; *p && *p != '\n'; p++) {
    if (*p == '"') {
      quoted = !quoted;
    } else if (*p == ',' && !quoted) {
      if (c++ == col)
        return g_string_free(f, FALSE);
      g_string_truncate(f, 0);
    } else {
      g_string_append_c(f, *p);
    }
  }
  if (c == col)
    return g_string_free(f, FALSE);
  g_string_free(f, TRUE);
  return NULL;
}

static const char *const result_columns[] = {"step_time_ns", "compute_ns", "exposed_comm_ns", "overlapped_comm_ns",
                                             "idle_ns", "utility_pct", "status"};

char *study_sweep_csv_header(const study_spec *s)
{
  GString *h = g_string_new("point,label");
  for (int a = 0; a < s->n_axes; a++) {
    g_string_append_c(h, ',');
    study_sweep_csv_field(h, s->axes[a].key);
  }
  for (size_t i = 0; i < G_N_ELEMENTS(result_columns); i++)
    g_string_append_printf(h, ",%s", result_columns[i]);
  g_string_append_c(h, '\n');
  return g_string_free(h, FALSE);
}

static const char *point_label(const study_spec *s, int p)
{
  return s->labels->len ? s->labels->pdata[p] : "";
}

/* Formats point p's CSV row and JSON line into one string (two lines). */
char *study_sweep_format_point(const sweep_ctx *c, int p, const study_summary *r, const char *err)
{
  const study_spec *s = c->s;
  char nb[32];
  GString *row = g_string_new(NULL);
  g_string_append_printf(row, "%d,", p);
  study_sweep_csv_field(row, point_label(s, p));
  for (int a = 0; a < s->n_axes; a++) {
    g_string_append_c(row, ',');
    study_sweep_csv_field(row, study_spec_value(s, p, a));
  }
  double util = 0;
  if (err == NULL) {
    const sim_time_ps v[5] = {r->step_time, r->compute, r->exposed_comm, r->overlapped_comm, r->idle};
    for (int i = 0; i < 5; i++)
      g_string_append_printf(row, ",%s", wisp_ns_string(v[i], nb));
    util = c->base_step > 0 ? 100.0 * (double)(c->base_step - r->step_time) / (double)c->base_step : 0.0;
    g_string_append_printf(row, ",%.6f,ok\n", util);
  } else {
    g_string_append(row, ",,,,,,,");
    char *msg = g_strdup_printf("error: %s", err);
    g_strdelimit(msg, "\n\r", ' ');
    study_sweep_csv_field(row, msg);
    g_free(msg);
    g_string_append_c(row, '\n');
  }

  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  g_assert(m != NULL);
  wisp_json j;
  wisp_json_init(&j, m, 0);
  wisp_json_begin_object(&j, NULL);
  wisp_json_int(&j, "point", p); /* first: study_sweep_point_done() reads the row's prefix */
  wisp_json_int(&j, "schema_version", STUDY_SCHEMA_VERSION); /* doc/interfaces.md */
  wisp_json_int(&j, "n_points", s->n_points);
  wisp_json_string(&j, "sweep", s->name);
  wisp_json_string(&j, "label", point_label(s, p));
  wisp_json_begin_object(&j, "axes");
  for (int a = 0; a < s->n_axes; a++) {
    const char *k = s->axes[a].key, *v = study_spec_value(s, p, a), *why;
    wisp_json_begin_object(&j, k);
    wisp_json_string(&j, "value", v);
    wisp_bw_Bps bw;
    sim_time_ps t;
    if ((g_str_has_suffix(k, "_bw") || g_str_has_suffix(k, ".bandwidth")) && wisp_parse_bandwidth(v, &bw, &why))
      wisp_json_uint(&j, "Bps", bw);
    else if (g_str_has_suffix(k, "latency") && wisp_parse_time(v, &t, &why))
      wisp_json_ns(&j, "ns", t);
    wisp_json_end_object(&j);
  }
  wisp_json_end_object(&j);
  if (err == NULL) {
    wisp_json_ns(&j, "step_time_ns", r->step_time);
    wisp_json_ns(&j, "compute_ns", r->compute);
    wisp_json_ns(&j, "exposed_comm_ns", r->exposed_comm);
    wisp_json_ns(&j, "overlapped_comm_ns", r->overlapped_comm);
    wisp_json_ns(&j, "idle_ns", r->idle);
    wisp_json_double(&j, "utility_pct", util, 6);
    wisp_json_string(&j, "status", "ok");
  } else {
    wisp_json_string(&j, "status", "error");
    wisp_json_string(&j, "error", err);
  }
  wisp_json_ns(&j, "base_step_ns", c->base_step);
  wisp_json_string(&j, "workload", c->w->source);
  wisp_json_int(&j, "n_ranks", c->w->n_ranks);
  sim_report_json_unsimulated(&j, c->w);
  wisp_json_string(&j, "input_sha256", c->digest);
  wisp_json_string(&j, "wisp_version", PACKAGE_VERSION);
  wisp_json_end_object(&j);
  wisp_json_finish(&j);
  fclose(m);
  g_string_append_len(row, buf, (gssize)len);
  free(buf);
  return g_string_free(row, FALSE);
}
