/* study_report_more.c: the sections of `wisp report` for wisp search
 * (the step time against the GPU count with the Pareto front), wisp
 * calibrate (the fitted latency and bandwidth per class and the baseline's
 * error) and wisp collbench --compare-csv (real against simulated bus
 * bandwidth over the message size).  Cost: O(size of the input's JSON). */
#include "config.h"
#include "studies/study_report_priv.h"

#include <math.h>

/* Search: every simulated point as a dot (GPUs along x on a log2 scale,
 * step time up), the Pareto front joined by a line. */
static void search_chart(GString *h, const cJSON *pts)
{
  double xmin = INFINITY, xmax = -INFINITY, ymax = 0;
  const cJSON *p;
  cJSON_ArrayForEach(p, pts)
    if (report_isnum(p, "step_time_ns")) {
      xmin = fmin(xmin, log2(fmax(1, report_dbl(p, "gpus"))));
      xmax = fmax(xmax, log2(fmax(1, report_dbl(p, "gpus"))));
      ymax = fmax(ymax, report_dbl(p, "step_time_ns"));
    }
  if (!(ymax > 0))
    return;
  double xs = xmax > xmin ? xmax - xmin : 1;
#define SX(g) (60 + 520 * (log2(fmax(1, (g))) - xmin) / xs)
#define SY(v) (200 - 180 * (v) / ymax)
  g_string_append(h, "<svg class=\"chart\" viewBox=\"0 0 600 230\" width=\"100%\" role=\"img\">");
  for (int t = 0; t <= 4; t++)
    g_string_append_printf(h, "<line x1=\"60\" x2=\"590\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/><text x=\"56\" "
                              "y=\"%.1f\" font-size=\"12\" text-anchor=\"end\">%.4g</text>", SY(ymax * t / 4),
                           SY(ymax * t / 4), SY(ymax * t / 4) + 4, ymax * t / 4 / 1e6);
  g_string_append(h, "<text x=\"4\" y=\"12\" font-size=\"12\">step ms</text>");
  for (double g = exp2(floor(xmin)); log2(g) <= xmax + 1e-9; g *= 2)
    g_string_append_printf(h, "<text x=\"%.1f\" y=\"218\" font-size=\"12\" text-anchor=\"middle\">%.0f</text>",
                           SX(g), g);
  g_string_append(h, "<text x=\"590\" y=\"230\" font-size=\"12\" text-anchor=\"end\">GPUs</text>"
                     "<polyline fill=\"none\" stroke=\"#e15759\" stroke-width=\"2\" points=\"");
  for (double g = exp2(floor(xmin)); log2(g) <= xmax + 1e-9; g *= 2) { /* front: fastest Pareto point per GPU count */
    double best = INFINITY;
    cJSON_ArrayForEach(p, pts)
      if (cJSON_IsTrue(report_get(p, "pareto")) && report_dbl(p, "gpus") == g)
        best = fmin(best, report_dbl(p, "step_time_ns"));
    if (isfinite(best))
      g_string_append_printf(h, "%.1f,%.1f ", SX(g), SY(best));
  }
  g_string_append(h, "\"/>");
  cJSON_ArrayForEach(p, pts)
    if (report_isnum(p, "step_time_ns")) {
      gboolean front = cJSON_IsTrue(report_get(p, "pareto"));
      g_string_append_printf(h, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" fill=\"%s\"><title>dp %.0f tp %.0f pp %.0f "
                                "mb %.0f</title></circle>", SX(report_dbl(p, "gpus")),
                             SY(report_dbl(p, "step_time_ns")), front ? 5 : 3, front ? "#e15759" : "#4e79a7",
                             report_dbl(p, "dp"), report_dbl(p, "tp"), report_dbl(p, "pp"),
                             report_dbl(p, "micro_batches"));
    }
  g_string_append(h, "</svg>\n");
#undef SX
#undef SY
}

void report_section_search(GString *h, int src, const report_input *in)
{
  const cJSON *d = in->doc, *pts = report_get(d, "points"), *p;
  g_string_append(h, "<section><h2>Parallel-configuration search: ");
  report_esc(h, in->label);
  g_string_append(h, "</h2>\n<p>Objective ");
  report_esc(h, report_str(d, "objective"));
  g_string_append(h, "; ");
  report_num(h, src, "simulated", report_dbl(d, "simulated"), 1, 0);
  g_string_append(h, " configurations simulated, ");
  report_num(h, src, "does_not_fit", report_dbl(d, "does_not_fit"), 1, 0);
  g_string_append(h, " refused (out of memory), ");
  report_num(h, src, "failed", report_dbl(d, "failed"), 1, 0);
  g_string_append(h, " failed.</p>\n");
  search_chart(h, pts);
  g_string_append(h, "<p class=\"why\">Red: the Pareto front (no other configuration is both faster and uses no "
                     "more GPUs); blue: the rest.</p>\n<table><tr><th>#</th><th>GPUs</th><th>dp</th><th>tp</th>"
                     "<th>pp</th><th>mb</th><th>step ms</th><th>Pareto</th></tr>\n");
  int i = 0;
  cJSON_ArrayForEach(p, pts) {
    if (report_isnum(p, "step_time_ns") && i < 40) { /* the 40 best: the JSON has every point */
      g_string_append_printf(h, "<tr><td>%.0f</td><td>%.0f</td><td>%.0f</td><td>%.0f</td><td>%.0f</td><td>%.0f</td>"
                                "<td>", report_dbl(p, "rank"), report_dbl(p, "gpus"), report_dbl(p, "dp"),
                             report_dbl(p, "tp"), report_dbl(p, "pp"), report_dbl(p, "micro_batches"));
      report_numf(h, src, report_dbl(p, "step_time_ns"), 1e6, 3, "points/%d/step_time_ns", i);
      g_string_append_printf(h, "</td><td>%s%s</td></tr>\n", cJSON_IsTrue(report_get(p, "pareto")) ? "yes" : "",
                             cJSON_IsTrue(report_get(p, "traced")) ? " (traced)" : "");
    }
    i++;
  }
  g_string_append(h, "</table>\n</section>\n");
}

/* The calibration's points: measured against the fit's prediction, one
 * dot per collective (log-log, both axes over the same decades), coloured
 * by class, with the diagonal where they agree.  Points without both
 * times are left out.  O(points x classes). */
static void calibrate_scatter(GString *h, const cJSON *pts, const cJSON *cls)
{
  static const char *const col[] = {"#4e79a7", "#e15759", "#59a14f", "#af7aa1"};
  double lo = INFINITY, hi = 0;
  const cJSON *p, *c;
  cJSON_ArrayForEach(p, pts)
    if (report_dbl(p, "measured_ns") > 0 && report_dbl(p, "predicted_ns") > 0) {
      lo = fmin(lo, fmin(report_dbl(p, "measured_ns"), report_dbl(p, "predicted_ns")));
      hi = fmax(hi, fmax(report_dbl(p, "measured_ns"), report_dbl(p, "predicted_ns")));
    }
  if (!(hi > 0))
    return;
  double l0 = floor(log10(lo)), l1 = fmax(ceil(log10(hi)), l0 + 1);
#define PX(v) (50 + 330 * (log10(v) - l0) / (l1 - l0))
#define PY(v) (350 - 330 * (log10(v) - l0) / (l1 - l0))
  g_string_append_printf(h, "<h3>Measured against fitted time, per collective</h3>\n<svg class=\"chart\" "
                            "viewBox=\"0 0 400 390\" width=\"100%%\" style=\"max-width:420px\" role=\"img\">"
                            "<line x1=\"50\" y1=\"350\" x2=\"380\" y2=\"20\" stroke=\"#999\" stroke-dasharray=\"4\"/>"
                            "<rect x=\"50\" y=\"20\" width=\"330\" height=\"330\" fill=\"none\" stroke=\"#ccc\"/>");
  for (double e = l0; e <= l1; e++) {
    const char *u = e >= 6 ? "ms" : e >= 3 ? "us" : "ns";
    double v = pow(10, e) / (e >= 6 ? 1e6 : e >= 3 ? 1e3 : 1);
    g_string_append_printf(h, "<text x=\"%.1f\" y=\"366\" font-size=\"10\" text-anchor=\"middle\">%g %s</text>"
                              "<text x=\"46\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\">%g %s</text>",
                           50 + 330 * (e - l0) / (l1 - l0), v, u, 354 - 330 * (e - l0) / (l1 - l0), v, u);
  }
  cJSON_ArrayForEach(p, pts) {
    double m = report_dbl(p, "measured_ns"), f = report_dbl(p, "predicted_ns");
    int k = 0, i = 0;
    cJSON_ArrayForEach(c, cls) {
      if (g_strcmp0(report_str(c, "class"), report_str(p, "class")) == 0)
        k = i;
      i++;
    }
    if (m > 0 && f > 0) {
      g_string_append_printf(h, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\" fill-opacity=\"0.7\"><title>",
                             PX(m), PY(f), col[k % 4]);
      report_esc(h, report_str(p, "op"));
      g_string_append_printf(h, " %.0f B</title></circle>", report_dbl(p, "bytes"));
    }
  }
#undef PX
#undef PY
  g_string_append(h, "<text x=\"215\" y=\"384\" font-size=\"11\" text-anchor=\"middle\">measured</text></svg>\n"
                     "<ul class=\"legend\">");
  int i = 0;
  cJSON_ArrayForEach(c, cls) {
    g_string_append_printf(h, "<li><i style=\"background:%s\"></i>", col[i++ % 4]);
    report_esc(h, report_str(c, "class"));
    g_string_append(h, "</li>");
  }
  g_string_append(h, "</ul>\n<p class=\"why\">Up: fitted (t = &alpha; + bus bytes / &beta;), across: measured; on "
                     "the dashed diagonal they agree.</p>\n");
}

void report_section_calibrate(GString *h, int src, const report_input *in)
{
  const cJSON *d = in->doc, *cls = report_get(report_get(d, "fit"), "classes"), *c, *b = report_get(d, "baseline");
  report_section_head(h, "Calibration", in);
  report_row_text(h, "trace", report_str(d, "trace"));
  report_row_text(h, "trace SHA-256", report_str(d, "trace_sha256"));
  report_row_text(h, "cluster", report_str(d, "cluster"));
  report_row_text(h, "calibrated config", report_str(d, "config"));
  g_string_append(h, "</table>\n");
  if (report_isnum(b, "simulated_step_ns")) {
    g_string_append(h, "<p class=\"big\">Calibrated step ");
    report_num(h, src, "baseline/simulated_step_ns", report_dbl(b, "simulated_step_ns"), 1e6, 3);
    g_string_append(h, " ms");
    if (report_isnum(b, "measured_step_ns")) {
      g_string_append(h, " &middot; measured ");
      report_num(h, src, "baseline/measured_step_ns", report_dbl(b, "measured_step_ns"), 1e6, 3);
      g_string_append(h, " ms &middot; error ");
      report_num(h, src, "baseline/step_error_pct", report_dbl(b, "step_error_pct"), 1, 2);
      g_string_append(h, " %");
    }
    g_string_append(h, "</p>\n");
  }
  g_string_append(h, "<h3>Fit per class (t = &alpha; + bytes / &beta;)</h3>\n<table><tr><th>class</th><th>points"
                     "</th><th>&alpha; ns</th><th>&beta; GB/s</th><th>rms error %</th><th>note</th></tr>\n");
  int i = 0;
  cJSON_ArrayForEach(c, cls) {
    static const report_col cols[] = {{"points", 1, 0}, {"alpha_ns", 1, 1}, {"beta_GBps", 1, 2}};
    char *base = g_strdup_printf("fit/classes/%d", i);
    g_string_append(h, "<tr><td>");
    report_esc(h, report_str(c, "class"));
    g_string_append(h, "</td>");
    report_cells(h, src, c, base, cols, 3);
    g_free(base);
    g_string_append(h, "<td>");
    if (report_isnum(c, "rms_rel_pct"))
      report_numf(h, src, report_dbl(c, "rms_rel_pct"), 1, 2, "fit/classes/%d/rms_rel_pct", i);
    else
      g_string_append(h, cJSON_IsTrue(report_get(c, "fitted")) ? "" : "not fitted");
    g_string_append(h, "</td><td class=\"why\">");
    report_esc(h, report_str(c, "note"));
    g_string_append(h, "</td></tr>\n");
    i++;
  }
  g_string_append(h, "</table>\n");
  calibrate_scatter(h, report_get(report_get(d, "fit"), "points"), cls);
  report_warnings(h, d, NULL);
  g_string_append(h, "</section>\n");
}

/* A size as the charts label it: 64K, 1M, 2G. */
static char *size_label(double s)
{
  return s >= 1 << 30 ? g_strdup_printf("%.0fG", s / (1 << 30)) : s >= 1 << 20 ? g_strdup_printf("%.0fM", s / (1 << 20))
         : s >= 1024 ? g_strdup_printf("%.0fK", s / 1024) : g_strdup_printf("%.0f", s);
}

void report_section_collbench(GString *h, int src, const report_input *in)
{
  const cJSON *d = in->doc, *rows = report_get(d, "rows"), *r;
  int n = cJSON_GetArraySize(rows), i = 0;
  report_section_head(h, "Collective benchmark, real and simulated", in);
  report_row_text(h, "measurement", report_str(d, "csv"));
  report_row_text(h, "test", report_str(d, "test"));
  report_row_text(h, "network", report_str(d, "network"));
  report_row_text(h, "library", report_str(d, "library"));
  g_string_append(h, "</table>\n");
  double *y = g_new(double, 2 * (gsize)MAX(n, 1));
  char **xl = g_new0(char *, n + 1);
  char *names[] = {"real busbw", "wisp busbw", NULL};
  cJSON_ArrayForEach(r, rows) {
    double s = report_dbl(r, "size_bytes");
    y[i] = report_dbl(r, "real_busbw_GBps");
    y[n + i] = report_dbl(r, "wisp_busbw_GBps");
    xl[i] = size_label(s);
    i++;
  }
  report_lines c = {.n_lines = 2, .n_x = n, .y = y, .x_labels = xl, .line_names = names, .y_unit = "busbw GB/s",
                    .y_scale = 1, .mark_line = -1, .mark_x = -1, .log_x_labels_only = TRUE};
  report_line_chart(h, &c);
  g_strfreev(xl);
  g_free(y);
  g_string_append(h, "<p>Median |error|: bus bandwidth at sizes &ge; 64 MiB ");
  if (report_isnum(d, "median_busbw_error_pct")) {
    report_num(h, src, "median_busbw_error_pct", report_dbl(d, "median_busbw_error_pct"), 1, 1);
    g_string_append(h, " %");
  } else {
    g_string_append(h, "n/a");
  }
  g_string_append(h, "; time at sizes &le; 64 KiB ");
  if (report_isnum(d, "median_time_error_pct")) {
    report_num(h, src, "median_time_error_pct", report_dbl(d, "median_time_error_pct"), 1, 1);
    g_string_append(h, " %");
  } else {
    g_string_append(h, "n/a");
  }
  g_string_append(h, ".</p>\n<table><tr><th>size</th><th>real &micro;s</th><th>wisp &micro;s</th><th>real busbw GB/s"
                     "</th><th>wisp busbw GB/s</th></tr>\n");
  i = 0;
  cJSON_ArrayForEach(r, rows) { /* every fourth size and the last, as the chart labels them */
    if (i % 4 == 0 || i == n - 1) {
      g_string_append(h, "<tr><td>");
      report_numf(h, src, report_dbl(r, "size_bytes"), 1, 0, "rows/%d/size_bytes", i);
      g_string_append(h, "</td><td>");
      report_numf(h, src, report_dbl(r, "real_time_us"), 1, 2, "rows/%d/real_time_us", i);
      g_string_append(h, "</td><td>");
      report_numf(h, src, report_dbl(r, "wisp_time_us"), 1, 2, "rows/%d/wisp_time_us", i);
      g_string_append(h, "</td><td>");
      report_numf(h, src, report_dbl(r, "real_busbw_GBps"), 1, 2, "rows/%d/real_busbw_GBps", i);
      g_string_append(h, "</td><td>");
      report_numf(h, src, report_dbl(r, "wisp_busbw_GBps"), 1, 2, "rows/%d/wisp_busbw_GBps", i);
      g_string_append(h, "</td></tr>\n");
    }
    i++;
  }
  g_string_append(h, "</table>\n</section>\n");
}

/* wisp collbench --json without --compare-csv: bus bandwidth against the
 * size, one line per operation (x: the sizes of the first operation's rows,
 * in order; another operation's row at a size not among them is left out
 * of the chart), and every row in a table.  O(rows x sizes). */
void report_section_collbench_rows(GString *h, int src, const report_input *in)
{
  const cJSON *d = in->doc, *rows = report_get(d, "results"), *r;
  report_section_head(h, "Collective benchmark", in);
  report_row_text(h, "network", report_str(d, "network"));
  report_row_text(h, "network model", report_str(d, "tier"));
  report_row_text(h, "library", report_str(d, "library"));
  g_string_append(h, "<tr><th>ranks</th><td>");
  report_num(h, src, "n_ranks", report_dbl(d, "n_ranks"), 1, 0);
  g_string_append(h, "</td></tr>\n</table>\n");
  GPtrArray *ops = g_ptr_array_new();
  GArray *sizes = g_array_new(FALSE, FALSE, sizeof(double));
  cJSON_ArrayForEach(r, rows) {
    const char *op = report_str(r, "op");
    gboolean seen = FALSE;
    for (guint k = 0; k < ops->len && !seen; k++)
      seen = g_strcmp0(ops->pdata[k], op) == 0;
    if (!seen)
      g_ptr_array_add(ops, (gpointer)op);
    if (ops->len == 1) {
      double s = report_dbl(r, "size");
      g_array_append_val(sizes, s);
    }
  }
  int nx = (int)sizes->len, nl = (int)ops->len;
  if (nx >= 2 && nl > 0) {
    double *y = g_new(double, (gsize)nx * nl);
    for (int k = 0; k < nx * nl; k++)
      y[k] = NAN;
    cJSON_ArrayForEach(r, rows)
      for (int l = 0; l < nl; l++)
        if (g_strcmp0(ops->pdata[l], report_str(r, "op")) == 0)
          for (int x = 0; x < nx; x++)
            if (g_array_index(sizes, double, x) == report_dbl(r, "size"))
              y[l * nx + x] = report_dbl(r, "busbw_GBps");
    char **xl = g_new0(char *, nx + 1), **names = g_new0(char *, nl + 1);
    for (int x = 0; x < nx; x++)
      xl[x] = size_label(g_array_index(sizes, double, x));
    for (int l = 0; l < nl; l++)
      names[l] = g_strdup(ops->pdata[l]);
    report_lines c = {.n_lines = nl, .n_x = nx, .y = y, .x_labels = xl, .line_names = names,
                      .y_unit = "busbw GB/s", .y_scale = 1, .mark_line = -1, .mark_x = -1, .log_x_labels_only = TRUE};
    report_line_chart(h, &c);
    g_strfreev(xl);
    g_strfreev(names);
    g_free(y);
  }
  g_string_append(h, "<table><tr><th>operation</th><th>size B</th><th>time &micro;s</th><th>algbw GB/s</th>"
                     "<th>busbw GB/s</th><th>algorithm</th></tr>\n");
  int i = 0;
  static const report_col cols[] = {{"size", 1, 0}, {"time_us", 1, 2}, {"algbw_GBps", 1, 2}, {"busbw_GBps", 1, 2}};
  cJSON_ArrayForEach(r, rows) {
    char *base = g_strdup_printf("results/%d", i);
    g_string_append(h, "<tr><td>");
    report_esc(h, report_str(r, "op"));
    g_string_append(h, "</td>");
    report_cells(h, src, r, base, cols, 4);
    g_string_append(h, "<td>");
    report_esc(h, report_str(r, "plan") ? report_str(r, "plan") : report_str(r, "algorithm"));
    g_string_append(h, "</td></tr>\n");
    g_free(base);
    i++;
  }
  g_string_append(h, "</table>\n<p class=\"why\">Each row is one collective simulated alone on a fresh fabric; "
                     "busbw = algbw &times; nccl-tests' bus factor of the operation (doc/collectives.md).</p>\n"
                     "</section>\n");
  g_ptr_array_free(ops, TRUE);
  g_array_free(sizes, TRUE);
}
