/* study_report_study.c: the sections of `wisp report` for what-if studies:
 * the utility of doubling each resource (wisp utility --json) with the
 * plain answer a reader is after (which resource first, by how much, why
 * not the others), and sweeps (wisp sweep's JSON lines, also several
 * shards of one sweep): step time per point as lines, one per combination
 * of the slower axes, the base point marked, and the share of the
 * communication that compute hides.  Cost: O(size of the input's JSON +
 * points x axes). */
#include "config.h"
#include "studies/study_report_priv.h"

#include <math.h>
#include <string.h>

/* The index of the resource with the largest utility, -1 if none applies. */
static int best_resource(const cJSON *res)
{
  const cJSON *r;
  int i = 0, bi = -1;
  double best = -INFINITY;
  cJSON_ArrayForEach(r, res) {
    if (report_isnum(r, "utility_pct") && report_dbl(r, "utility_pct") > best) {
      best = report_dbl(r, "utility_pct");
      bi = i;
    }
    i++;
  }
  return bi;
}

/* The answer box: which resource to double first, by how much the step
 * shrinks, and why each other resource helps less (its own why-line), with
 * the ceiling that compute on the critical path sets on any network
 * upgrade. */
static void utility_answer(GString *h, int src, const cJSON *d)
{
  const cJSON *res = report_get(d, "resources"), *r;
  int bi = best_resource(res);
  if (bi < 0)
    return;
  const cJSON *best = cJSON_GetArrayItem(res, bi);
  double base = report_dbl(d, "baseline_step_ns");
  g_string_append(h, "<div class=\"answer\"><p class=\"big\"><b>Answer:</b> double <b>");
  report_esc(h, report_str(best, "resource"));
  g_string_append(h, "</b> first. The step shrinks by ");
  report_numf(h, src, report_dbl(best, "utility_pct"), 1, 2, "resources/%d/utility_pct", bi);
  g_string_append(h, " %, from ");
  report_num(h, src, "baseline_step_ns", base, 1e6, 3);
  g_string_append(h, " ms to ");
  report_numf(h, src, report_dbl(best, "step_time_2x_ns"), 1e6, 3, "resources/%d/step_time_2x_ns", bi);
  g_string_append(h, " ms (");
  report_esc(h, report_str(best, "change"));
  g_string_append(h, ").</p>\n");
  const cJSON *cat = report_get(report_get(d, "baseline_critical_path"), "by_category");
  double comp = report_dbl(cat, "compute_ns"), path = report_dbl(report_get(d, "baseline_critical_path"),
                                                                 "step_time_ns");
  if (comp > 0 && path > 0) {
    static const char *const C = "baseline_critical_path/by_category/compute_ns",
                             *const P = "baseline_critical_path/step_time_ns";
    g_string_append(h, "<p>Why no resource helps more: ");
    report_numf(h, src, 100 * comp / path, 1, 1, "pct_of(%s,%s)", C, P);
    g_string_append(h, " % of the step's critical path is GPU compute, which no network resource shortens, so even "
                       "an infinitely fast network could remove at most ");
    report_numf(h, src, 100 * (1 - comp / path), 1, 1, "pct_rest(%s,%s)", C, P);
    g_string_append(h, " % of the step.</p>\n");
  }
  g_string_append(h, "<p>Why the others help less:</p><ul>");
  int i = 0;
  cJSON_ArrayForEach(r, res) {
    if (i++ == bi)
      continue;
    g_string_append(h, "<li><b>");
    report_esc(h, report_str(r, "resource"));
    g_string_append(h, "</b>: ");
    if (report_isnum(r, "utility_pct")) {
      report_numf(h, src, report_dbl(r, "utility_pct"), 1, 2, "resources/%d/utility_pct", i - 1);
      g_string_append(h, " % &mdash; ");
      report_esc(h, report_str(r, "why") ? report_str(r, "why") : report_str(r, "note"));
    } else {
      g_string_append(h, "does not apply &mdash; ");
      report_esc(h, report_str(r, "note"));
    }
    g_string_append(h, "</li>");
  }
  g_string_append(h, "</ul></div>\n");
}

/* The utility bars: one row per resource, the longest bar the largest
 * utility; resources that do not apply say why. */
static void utility_bars(GString *h, int src, const cJSON *res)
{
  double top = 0;
  const cJSON *r;
  cJSON_ArrayForEach(r, res)
    if (report_isnum(r, "utility_pct"))
      top = fmax(top, report_dbl(r, "utility_pct"));
  g_string_append(h, "<h3>Utility of doubling each resource</h3>\n<div class=\"bars\">\n");
  int i = 0;
  cJSON_ArrayForEach(r, res) {
    g_string_append(h, "<div class=\"bar\"><div class=\"lab\">");
    report_esc(h, report_str(r, "resource"));
    g_string_append(h, "</div>");
    if (report_isnum(r, "utility_pct")) {
      double u = report_dbl(r, "utility_pct"), w = top > 0 ? 300.0 * fmax(0, u) / top : 0;
      g_string_append_printf(h, "<svg class=\"chart\" viewBox=\"0 0 300 14\" width=\"100%%\" height=\"14\" "
                                "preserveAspectRatio=\"none\"><rect x=\"0\" y=\"0\" width=\"300\" height=\"14\" "
                                "fill=\"#eee\"/><rect x=\"0\" y=\"0\" width=\"%.3f\" height=\"14\" fill=\"#4e79a7\"/>"
                                "</svg><div class=\"val\">", w);
      report_numf(h, src, u, 1, 2, "resources/%d/utility_pct", i);
      g_string_append(h, " % &middot; step ");
      report_numf(h, src, report_dbl(r, "step_time_2x_ns"), 1e6, 3, "resources/%d/step_time_2x_ns", i);
      g_string_append(h, " ms");
      if (report_isnum(r, "exposed_comm_2x_ns")) {
        g_string_append(h, " &middot; exposed communication ");
        report_numf(h, src, report_dbl(r, "exposed_comm_2x_ns"), 1e6, 3, "resources/%d/exposed_comm_2x_ns", i);
        g_string_append(h, " ms");
      }
      g_string_append(h, "</div>");
    } else {
      g_string_append(h, "<div class=\"val\">does not apply</div>");
    }
    g_string_append(h, "<div class=\"why\">");
    report_esc(h, report_str(r, "change"));
    const char *why = report_str(r, "why") ? report_str(r, "why") : report_str(r, "note");
    if (why) {
      g_string_append(h, report_str(r, "change") ? " &mdash; " : "");
      report_esc(h, why);
    }
    g_string_append(h, "</div></div>\n");
    i++;
  }
  g_string_append(h, "</div>\n");
}

static void sensitivity(GString *h, int src, const cJSON *d)
{
  const cJSON *s = report_get(d, "sensitivity");
  double b = report_dbl(d, "baseline_step_ns");
  if (!report_isnum(s, "bw_x0.9_step_ns") || !(b > 0))
    return;
  g_string_append(h, "<h3>How sure: &plusmn;10 % sensitivity</h3>\n<p>Every bandwidth &minus;10 %: step ");
  report_num(h, src, "sensitivity/bw_x0.9_step_ns", report_dbl(s, "bw_x0.9_step_ns"), 1e6, 3);
  g_string_append(h, " ms (");
  report_signed(h, src, 100.0 * (report_dbl(s, "bw_x0.9_step_ns") - b) / b, 2,
                "pct_diff(sensitivity/bw_x0.9_step_ns,baseline_step_ns)");
  g_string_append(h, " %); +10 %: step ");
  report_num(h, src, "sensitivity/bw_x1.1_step_ns", report_dbl(s, "bw_x1.1_step_ns"), 1e6, 3);
  g_string_append(h, " ms (");
  report_signed(h, src, 100.0 * (report_dbl(s, "bw_x1.1_step_ns") - b) / b, 2,
                "pct_diff(sensitivity/bw_x1.1_step_ns,baseline_step_ns)");
  g_string_append(h, " %). A ranking of resources whose utilities differ by less than this swing depends on the "
                     "bandwidths being right.</p>\n");
}

void report_section_utility(GString *h, int src, const report_input *in)
{
  const cJSON *d = in->doc, *wl = report_get(d, "workload"), *cl = report_get(d, "cluster");
  g_string_append(h, "<section><h2>What-if study: ");
  report_esc(h, in->label);
  g_string_append(h, "</h2>\n");
  utility_answer(h, src, d);
  g_string_append(h, "<table>\n");
  report_row_text(h, "workload", report_str(wl, "source"));
  report_row_text(h, "workload SHA-256", report_str(wl, "sha256"));
  report_row_text(h, "cluster", report_str(cl, "source"));
  g_string_append(h, "</table>\n");
  report_topology(h, src, report_get(cl, "tiers"), "cluster/tiers");
  report_step_line(h, src, d, "baseline_step_ns", "measured_step_ns");
  if (report_isnum(report_get(d, "baseline"), "exposed_comm_ns")) {
    g_string_append(h, "<p>Baseline: compute ");
    report_num(h, src, "baseline/compute_ns", report_dbl(report_get(d, "baseline"), "compute_ns"), 1e6, 3);
    g_string_append(h, " ms, exposed communication ");
    report_num(h, src, "baseline/exposed_comm_ns", report_dbl(report_get(d, "baseline"), "exposed_comm_ns"), 1e6,
               3);
    g_string_append(h, " ms (mean over ranks): doubling a resource can only remove part of the exposed "
                       "communication, never compute.</p>\n");
  }
  utility_bars(h, src, report_get(d, "resources"));
  sensitivity(h, src, d);
  if (report_get(d, "baseline_critical_path"))
    report_crit_path(h, src, report_get(d, "baseline_critical_path"), "baseline_critical_path");
  report_warnings(h, d, "measured_step_ns");
  g_string_append(h, "</section>\n");
}

/* The axes of a sweep as the first line lists them, and per axis its
 * distinct values in order of first appearance. */
typedef struct {
  int n_axes;
  char **names;
  GPtrArray **values; /* per axis: distinct value strings */
} sweep_axes;

static const char *axis_value(const cJSON *line, const char *axis)
{
  return report_str(report_get(report_get(line, "axes"), axis), "value");
}

static void axes_read(sweep_axes *a, const cJSON *lines)
{
  const cJSON *first = cJSON_GetArrayItem(lines, 0), *ax, *o;
  a->n_axes = cJSON_GetArraySize(report_get(first, "axes"));
  a->names = g_new0(char *, a->n_axes + 1);
  a->values = g_new0(GPtrArray *, MAX(a->n_axes, 1));
  int k = 0;
  cJSON_ArrayForEach(ax, report_get(first, "axes")) {
    a->names[k] = g_strdup(ax->string);
    a->values[k] = g_ptr_array_new();
    cJSON_ArrayForEach(o, lines) {
      const char *v = axis_value(o, ax->string);
      gboolean seen = FALSE;
      for (guint i = 0; v && i < a->values[k]->len && !seen; i++)
        seen = strcmp(a->values[k]->pdata[i], v) == 0;
      if (v && !seen)
        g_ptr_array_add(a->values[k], (gpointer)v);
    }
    k++;
  }
}

static void axes_clear(sweep_axes *a)
{
  for (int k = 0; k < a->n_axes; k++)
    g_ptr_array_free(a->values[k], TRUE);
  g_strfreev(a->names);
  g_free(a->values);
}

/* The chart: for a grid (the product of the axes' distinct counts is the
 * point count) the last axis, the fastest, along x and one line per
 * combination of the others; otherwise (zip, or one axis) one line over
 * the points in order, labelled. */
static void sweep_chart(GString *h, const cJSON *lines, const sweep_axes *a)
{
  int n = cJSON_GetArraySize(lines);
  long prod = 1;
  for (int k = 0; k < a->n_axes; k++)
    prod *= (long)a->values[k]->len;
  gboolean grid = a->n_axes > 1 && prod == n;
  int n_x = grid ? (int)a->values[a->n_axes - 1]->len : n, n_lines = grid ? n / n_x : 1;
  double *y = g_new(double, (gsize)n_x * n_lines);
  char **xl = g_new0(char *, n_x + 1), **ln = g_new0(char *, n_lines + 1);
  double base = 0;
  int mark = -1, mark_line = 0;
  for (int i = 0; i < n; i++) {
    const cJSON *o = cJSON_GetArrayItem(lines, i);
    int p = (int)report_dbl(o, "point");
    int li = grid ? p / n_x : 0, xi = grid ? p % n_x : i;
    if (p < 0 || li >= n_lines || xi >= n_x)
      continue;
    y[li * n_x + xi] = report_isnum(o, "step_time_ns") ? report_dbl(o, "step_time_ns") : NAN;
    base = report_dbl(o, "base_step_ns");
    if (report_isnum(o, "step_time_ns") && base > 0 && report_dbl(o, "step_time_ns") == base && mark < 0) {
      mark = xi;
      mark_line = li;
    }
    if (xl[xi] == NULL)
      xl[xi] = g_strdup(grid ? axis_value(o, a->names[a->n_axes - 1])
                        : report_str(o, "label") ? report_str(o, "label") : "");
    if (grid && ln[li] == NULL) {
      GString *s = g_string_new(NULL);
      for (int k = 0; k + 1 < a->n_axes; k++)
        g_string_append_printf(s, "%s%s=%s", k ? ", " : "", a->names[k], axis_value(o, a->names[k]));
      ln[li] = g_string_free(s, FALSE);
    }
  }
  report_lines c = {.n_lines = n_lines, .n_x = n_x, .y = y, .x_labels = xl, .line_names = grid ? ln : NULL,
                    .y_unit = "step ms", .y_scale = 1e6, .mark_line = mark_line, .mark_x = mark, .base_y = base};
  report_line_chart(h, &c);
  g_string_append(h, "<p class=\"why\">");
  if (grid) {
    g_string_append(h, "Along x: ");
    report_esc(h, a->names[a->n_axes - 1]);
    g_string_append(h, "; one line per value of the other axes. ");
  }
  g_string_append(h, "Dashed red: the base step; circled: the base point.</p>\n");
  g_strfreev(xl);
  g_strfreev(ln);
  g_free(y);
}

void report_section_sweep(GString *h, int src, const report_input *in)
{
  const cJSON *lines = in->doc, *o;
  sweep_axes a;
  axes_read(&a, lines);
  g_string_append(h, "<section><h2>Sweep ");
  report_esc(h, report_str(cJSON_GetArrayItem(lines, 0), "sweep"));
  g_string_append(h, ": ");
  report_esc(h, in->label);
  g_string_append(h, "</h2>\n");
  sweep_chart(h, lines, &a);
  g_string_append(h, "<table><tr><th>point</th><th>label</th>");
  for (int k = 0; k < a.n_axes; k++) {
    g_string_append(h, "<th>");
    report_esc(h, a.names[k]);
    g_string_append(h, "</th>");
  }
  g_string_append(h, "<th>step ms</th><th>utility %</th><th>hidden comm %</th></tr>\n");
  int i = 0;
  cJSON_ArrayForEach(o, lines) {
    g_string_append_printf(h, "<tr><td>%.0f</td><td>", report_dbl(o, "point"));
    report_esc(h, report_str(o, "label"));
    g_string_append(h, "</td>");
    for (int k = 0; k < a.n_axes; k++) {
      g_string_append(h, "<td>");
      report_esc(h, axis_value(o, a.names[k]));
      g_string_append(h, "</td>");
    }
    g_string_append(h, "<td>");
    if (report_isnum(o, "step_time_ns")) {
      double ov = report_dbl(o, "overlapped_comm_ns"), ex = report_dbl(o, "exposed_comm_ns");
      report_numf(h, src, report_dbl(o, "step_time_ns"), 1e6, 3, "%d/step_time_ns", i);
      g_string_append(h, "</td><td>");
      report_numf(h, src, report_dbl(o, "utility_pct"), 1, 2, "%d/utility_pct", i);
      g_string_append(h, "</td><td>");
      if (ov + ex > 0)
        report_numf(h, src, 100 * ov / (ov + ex), 1, 1, "share(%d/overlapped_comm_ns,%d/exposed_comm_ns)", i, i);
      else
        g_string_append(h, "&ndash;");
    } else {
      report_esc(h, report_str(o, "error") ? report_str(o, "error") : "failed");
      g_string_append(h, "</td><td></td><td>");
    }
    g_string_append(h, "</td></tr>\n");
    i++;
  }
  g_string_append(h, "</table>\n<p class=\"why\">Hidden communication: the share of the communication time that "
                     "runs under compute (overlapped / (overlapped + exposed), mean over ranks); the exposed rest "
                     "is what a faster network can remove.</p>\n</section>\n");
  axes_clear(&a);
}

/* Two or more utility studies side by side (e.g. a GPU and a TPU job):
 * one row per resource, one column per study. */
void report_compare_utilities(GString *h, const report_input *in, int n)
{
  int cnt = 0, first = -1;
  for (int i = 0; i < n; i++)
    if (in[i].doc && in[i].kind == REPORT_UTILITY) {
      cnt++;
      first = first < 0 ? i : first;
    }
  if (cnt < 2)
    return;
  g_string_append(h, "<section><h2>Utility side by side</h2>\n<table><tr><th>resource</th>");
  for (int i = 0; i < n; i++)
    if (in[i].doc && in[i].kind == REPORT_UTILITY) {
      char *b = g_path_get_basename(in[i].path);
      g_string_append(h, "<th>");
      report_esc(h, b);
      g_string_append(h, "</th>");
      g_free(b);
    }
  g_string_append(h, "</tr>\n<tr><th>baseline step ms</th>");
  for (int i = 0; i < n; i++)
    if (in[i].doc && in[i].kind == REPORT_UTILITY) {
      g_string_append(h, "<td>");
      report_num(h, i, "baseline_step_ns", report_dbl(in[i].doc, "baseline_step_ns"), 1e6, 3);
      g_string_append(h, "</td>");
    }
  g_string_append(h, "</tr>\n");
  const cJSON *r;
  cJSON_ArrayForEach(r, report_get(in[first].doc, "resources")) {
    g_string_append(h, "<tr><th>");
    report_esc(h, report_str(r, "resource"));
    g_string_append(h, " %</th>");
    for (int i = 0; i < n; i++) {
      if (!in[i].doc || in[i].kind != REPORT_UTILITY)
        continue;
      const cJSON *o;
      int k = 0, at = -1;
      cJSON_ArrayForEach(o, report_get(in[i].doc, "resources")) {
        if (g_strcmp0(report_str(o, "resource"), report_str(r, "resource")) == 0)
          at = k;
        k++;
      }
      o = at >= 0 ? cJSON_GetArrayItem(report_get(in[i].doc, "resources"), at) : NULL;
      g_string_append(h, "<td>");
      if (report_isnum(o, "utility_pct"))
        report_numf(h, i, report_dbl(o, "utility_pct"), 1, 2, "resources/%d/utility_pct", at);
      else
        g_string_append(h, "<span class=\"why\">n/a</span>");
      g_string_append(h, "</td>");
    }
    g_string_append(h, "</tr>\n");
  }
  g_string_append(h, "</table>\n<p class=\"why\">Utility: how much shorter the step is with that resource "
                     "doubled (n/a: the cluster has no such resource). Each study's own section below says "
                     "why.</p>\n</section>\n");
}
