/* study_report_draw.c: the pieces every section of `wisp report` uses:
 * JSON accessors, escaped text, numbers traceable to their JSON path, the
 * step line, the critical path bars, the warnings list, the topology
 * diagram and a line chart.  Every function appends to one GString and
 * costs O(its output); nothing here reads files. */
#include "config.h"
#include "studies/study_report_priv.h"

#include <math.h>
#include <stdarg.h>

const cJSON *report_get(const cJSON *o, const char *k)
{
  return cJSON_GetObjectItemCaseSensitive(o, k);
}

const char *report_str(const cJSON *o, const char *k)
{
  const cJSON *v = report_get(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

gboolean report_isnum(const cJSON *o, const char *k)
{
  return cJSON_IsNumber(report_get(o, k));
}

double report_dbl(const cJSON *o, const char *k)
{
  const cJSON *v = report_get(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : 0.0;
}

void report_esc(GString *h, const char *s)
{
  for (; s && *s; s++) {
    switch (*s) {
    case '<': g_string_append(h, "&lt;"); break;
    case '>': g_string_append(h, "&gt;"); break;
    case '&': g_string_append(h, "&amp;"); break;
    case '"': g_string_append(h, "&quot;"); break;
    default: g_string_append_c(h, *s);
    }
  }
}

void report_num(GString *h, int src, const char *path, double v, double scale, int dec)
{
  g_string_append_printf(h, "<span class=\"n\" data-src=\"%d\" data-json=\"", src);
  report_esc(h, path);
  g_string_append_printf(h, "\" data-v=\"%.17g\" data-scale=\"%g\" data-dec=\"%d\">%.*f</span>", v, scale, dec, dec,
                         v / scale);
}

void report_numf(GString *h, int src, double v, double scale, int dec, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *p = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  report_num(h, src, p, v, scale, dec);
  g_free(p);
}

void report_section_head(GString *h, const char *title, const report_input *in)
{
  g_string_append(h, "<section><h2>");
  report_esc(h, title);
  g_string_append(h, ": ");
  report_esc(h, in->label);
  g_string_append(h, "</h2>\n<table>\n");
}

void report_cells(GString *h, int src, const cJSON *row, const char *base, const report_col *cols, int n_cols)
{
  for (int c = 0; c < n_cols; c++) {
    g_string_append(h, "<td>");
    report_numf(h, src, report_dbl(row, cols[c].key), cols[c].scale, cols[c].dec, "%s/%s", base, cols[c].key);
    g_string_append(h, "</td>");
  }
}

void report_signed(GString *h, int src, double v, int dec, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *p = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  if (v >= 0)
    g_string_append_c(h, '+');
  report_num(h, src, p, v, 1, dec);
  g_free(p);
}

void report_row_text(GString *h, const char *name, const char *value)
{
  g_string_append(h, "<tr><th>");
  report_esc(h, name);
  g_string_append(h, "</th><td>");
  report_esc(h, value ? value : "(not recorded)");
  g_string_append(h, "</td></tr>\n");
}

void report_step_line(GString *h, int src, const cJSON *doc, const char *step_key, const char *measured_key)
{
  g_string_append(h, "<p class=\"big\">Step time ");
  report_num(h, src, step_key, report_dbl(doc, step_key), 1e6, 3);
  g_string_append(h, " ms");
  if (report_isnum(doc, measured_key) && report_dbl(doc, measured_key) > 0) {
    double m = report_dbl(doc, measured_key), s = report_dbl(doc, step_key);
    g_string_append(h, " &middot; measured ");
    report_num(h, src, measured_key, m, 1e6, 3);
    g_string_append(h, " ms &middot; baseline error ");
    report_signed(h, src, 100.0 * (s - m) / m, 2, "pct_diff(%s,%s)", step_key, measured_key);
    g_string_append(h, " %");
  }
  g_string_append(h, "</p>\n");
}

/* Category colours of the stacked bars (also in the legends). */
static const char *const CAT_KEYS[] = {"compute_ns", "communication_ns", "communication_replayed_ns", "host_ns",
                                       "idle_ns", "other_ns", "start_offset_ns"};
static const char *const CAT_NAMES[] = {"compute", "communication", "replayed communication", "host", "idle",
                                        "other", "start offset"};
static const char *const CAT_COLOURS[] = {"#4e79a7", "#e15759", "#f28e2b", "#76b7b2", "#bab0ac", "#edc948",
                                          "#9c755f"};
#define N_CATS 7
static const char *const RANK_COLOURS[] = {"#4e79a7", "#59a14f", "#af7aa1", "#ff9da7", "#9c755f", "#76b7b2",
                                           "#edc948", "#bab0ac"};

/* One stacked bar of n parts with a legend of (name, value at JSON path or
 * derived expression, share of the parts' total); total_expr is the list
 * of paths whose sum is the total (study_report_priv.h). */
static void stacked(GString *h, int src, int n, const double *v, char **names, char **paths, const char *const *col,
                    const char *total_expr)
{
  double total = 0;
  for (int i = 0; i < n; i++)
    total += fmax(0, v[i]);
  if (!(total > 0))
    return;
  g_string_append(h, "<svg class=\"chart\" viewBox=\"0 0 600 30\" preserveAspectRatio=\"none\" width=\"100%\" "
                     "height=\"30\" role=\"img\">");
  double x = 0;
  for (int i = 0; i < n; i++) {
    double w = 600.0 * fmax(0, v[i]) / total;
    if (w <= 0)
      continue;
    g_string_append_printf(h, "<rect x=\"%.3f\" y=\"0\" width=\"%.3f\" height=\"30\" fill=\"%s\"><title>", x, w,
                           col[i]);
    report_esc(h, names[i]);
    g_string_append(h, "</title></rect>");
    x += w;
  }
  g_string_append(h, "</svg>\n<ul class=\"legend\">");
  for (int i = 0; i < n; i++) {
    if (!(v[i] > 0))
      continue;
    g_string_append_printf(h, "<li><i style=\"background:%s\"></i>", col[i]);
    report_esc(h, names[i]);
    g_string_append_c(h, ' ');
    report_num(h, src, paths[i], v[i], 1e6, 3);
    g_string_append(h, " ms (");
    report_numf(h, src, 100.0 * v[i] / total, 1, 1, "pct_of(%s,%s)", paths[i], total_expr);
    g_string_append(h, " %)</li>");
  }
  g_string_append(h, "</ul>\n");
}

/* The critical path's time per rank: the 7 largest and the rest. */
static void crit_by_rank(GString *h, int src, const cJSON *crit, const char *base)
{
  const cJSON *ranks = report_get(crit, "ranks");
  int n = cJSON_GetArraySize(ranks);
  if (n == 0)
    return;
  int *order = g_new(int, n);
  for (int i = 0; i < n; i++)
    order[i] = i;
  for (int i = 1; i < n; i++) /* insertion sort by time, largest first: n is the path's ranks */
    for (int k = i; k > 0 && report_dbl(cJSON_GetArrayItem(ranks, order[k]), "time_ns") >
                             report_dbl(cJSON_GetArrayItem(ranks, order[k - 1]), "time_ns"); k--) {
      int t = order[k];
      order[k] = order[k - 1];
      order[k - 1] = t;
    }
  int parts = n > 8 ? 8 : n;
  double v[8] = {0};
  char *names[8] = {NULL}, *paths[8] = {NULL};
  for (int i = 0; i < parts; i++) {
    if (n > 8 && i == 7) { /* the rest, summed; traced as all ranks' time less the seven shown */
      GString *e = g_string_new(NULL);
      g_string_append_printf(e, "diff(%s/ranks/*/time_ns,", base);
      v[i] = 0;
      for (int k = 7; k < n; k++)
        v[i] += report_dbl(cJSON_GetArrayItem(ranks, order[k]), "time_ns");
      for (int k = 0; k < 7; k++)
        g_string_append_printf(e, "%s%s/ranks/%d/time_ns", k ? "+" : "", base, order[k]);
      g_string_append_c(e, ')');
      names[i] = g_strdup_printf("%d other ranks", n - 7);
      paths[i] = g_string_free(e, FALSE);
      continue;
    }
    const cJSON *r = cJSON_GetArrayItem(ranks, order[i]);
    v[i] = report_dbl(r, "time_ns");
    names[i] = g_strdup_printf("rank %.0f", report_dbl(r, "rank"));
    paths[i] = g_strdup_printf("%s/ranks/%d/time_ns", base, order[i]);
  }
  g_string_append_printf(h, "<h3>Critical path by rank</h3>\n<p class=\"why\">The path runs through %d rank%s; "
                            "the time it spends on each:</p>\n", n, n == 1 ? "" : "s");
  char *total = g_strdup_printf("%s/ranks/*/time_ns", base);
  stacked(h, src, parts, v, names, paths, RANK_COLOURS, total);
  g_free(total);
  for (int i = 0; i < parts; i++) {
    g_free(names[i]);
    g_free(paths[i]);
  }
  g_free(order);
}

void report_crit_path(GString *h, int src, const cJSON *crit, const char *base)
{
  const cJSON *cat = report_get(crit, "by_category");
  double v[N_CATS];
  char *names[N_CATS], *paths[N_CATS];
  for (int c = 0; c < N_CATS; c++) {
    v[c] = report_dbl(cat, CAT_KEYS[c]);
    names[c] = (char *)CAT_NAMES[c];
    paths[c] = g_strdup_printf("%s/by_category/%s", base, CAT_KEYS[c]);
  }
  GString *total = g_string_new(NULL);
  for (int c = 0; c < N_CATS; c++)
    g_string_append_printf(total, "%s%s", c ? "+" : "", paths[c]);
  g_string_append(h, "<h3>Critical path by category</h3>\n");
  stacked(h, src, N_CATS, v, names, paths, CAT_COLOURS, total->str);
  g_string_free(total, TRUE);
  for (int c = 0; c < N_CATS; c++)
    g_free(paths[c]);
  if (report_str(crit, "bound")) {
    g_string_append(h, "<p class=\"why\"><b>What bounds the step:</b> ");
    report_esc(h, report_str(crit, "bound"));
    g_string_append(h, "</p>\n");
  }
  crit_by_rank(h, src, crit, base);
}

void report_warnings(GString *h, const cJSON *doc, const char *measured_key)
{
  GPtrArray *w = g_ptr_array_new_with_free_func(g_free);
  const cJSON *un = report_get(doc, "unsimulated_communication");
  if (report_dbl(un, "replayed_ops") > 0)
    g_ptr_array_add(w, g_strdup_printf("%.0f communication ops on %.0f ranks were replayed at their measured "
                                       "duration, not simulated", report_dbl(un, "replayed_ops"),
                                       report_dbl(un, "replayed_ranks")));
  if (report_dbl(un, "zero_byte_collectives") > 0)
    g_ptr_array_add(w, g_strdup_printf("%.0f collectives had no byte count and move nothing in the simulation",
                                       report_dbl(un, "zero_byte_collectives")));
  if (report_dbl(doc, "assumed_roots") > 0)
    g_ptr_array_add(w, g_strdup_printf("%.0f graph roots were assumed", report_dbl(doc, "assumed_roots")));
  if (measured_key && !report_isnum(doc, measured_key))
    g_ptr_array_add(w, g_strdup("no measured step time was given: the baseline's error is unknown"));
  if (cJSON_IsTrue(report_get(doc, "calibration_error_above_10pct")))
    g_ptr_array_add(w, g_strdup("the baseline is more than 10 % off the measured step: treat the utilities "
                                "with caution"));
  const cJSON *cl = report_get(doc, "cluster"), *wl = report_get(doc, "workload");
  if (report_str(cl, "fitting") && *report_str(cl, "fitting"))
    g_ptr_array_add(w, g_strdup_printf("cluster fitting: %s", report_str(cl, "fitting")));
  if (report_str(wl, "scaling"))
    g_ptr_array_add(w, g_strdup_printf("scaled workload: %s", report_str(wl, "scaling")));
  const cJSON *list = report_get(doc, "warnings"), *it;
  cJSON_ArrayForEach(it, list)
    if (cJSON_IsString(it))
      g_ptr_array_add(w, g_strdup(it->valuestring));
  g_string_append(h, "<h3>Assumptions and warnings</h3>\n<ul class=\"warn\">");
  if (w->len == 0)
    g_string_append(h, "<li>none recorded</li>");
  for (guint i = 0; i < w->len; i++) {
    g_string_append(h, "<li>");
    report_esc(h, w->pdata[i]);
    g_string_append(h, "</li>");
  }
  g_string_append(h, "</ul>\n");
  g_ptr_array_free(w, TRUE);
}

/* The members of one tier's box, joined as its kind says: a switch is a
 * bar they all hang from, a ring or torus a closed chain, fully connected
 * every pair (drawn for up to 6 members), anything else a chain. */
static void tier_members(GString *h, const char *kind, int shown, double x0, double y, double dx)
{
  double xl = x0 + dx / 2, xr = x0 + dx * (shown - 0.5);
  if (g_strcmp0(kind, "switch") == 0) {
    g_string_append_printf(h, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"6\" fill=\"#888\"/>", xl - 6,
                           y - 26, xr - xl + 12);
    for (int i = 0; i < shown; i++)
      g_string_append_printf(h, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>",
                             xl + dx * i, xl + dx * i, y - 20, y);
  } else if (g_strcmp0(kind, "fully_connected") == 0 && shown <= 6) {
    for (int i = 0; i < shown; i++)
      for (int k = i + 1; k < shown; k++)
        g_string_append_printf(h, "<path d=\"M%.1f %.1fQ%.1f %.1f %.1f %.1f\" fill=\"none\" stroke=\"#888\"/>",
                               xl + dx * i, y, xl + dx * (i + k) / 2.0, y - 8 - 5.0 * (k - i), xl + dx * k, y);
  } else {
    g_string_append_printf(h, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>", xl, xr, y,
                           y);
    if (g_strcmp0(kind, "ring") == 0 || g_str_has_prefix(kind ? kind : "", "torus"))
      g_string_append_printf(h, "<path d=\"M%.1f %.1fQ%.1f %.1f %.1f %.1f\" fill=\"none\" stroke=\"#888\"/>", xl, y,
                             (xl + xr) / 2, y - 30, xr, y);
  }
}

void report_topology(GString *h, int src, const cJSON *tiers, const char *base)
{
  int n = cJSON_GetArraySize(tiers);
  if (n == 0)
    return;
  g_string_append_printf(h, "<h3>Network (as resolved)</h3>\n<svg class=\"chart\" viewBox=\"0 0 600 %d\" "
                            "width=\"100%%\" role=\"img\">", 62 * n + 6);
  /* Outermost tier on top: each of its members holds one box of the tier below. */
  for (int k = n - 1, row = 0; k >= 0; k--, row++) {
    const cJSON *t = cJSON_GetArrayItem(tiers, k);
    int size = (int)report_dbl(t, "size"), shown = MIN(MAX(size, 1), 8);
    double y = 62.0 * row + 52, dx = 300.0 / 8;
    g_string_append_printf(h, "<rect x=\"2\" y=\"%.1f\" width=\"596\" height=\"58\" rx=\"6\" fill=\"none\" "
                              "stroke=\"#ccc\"/>", y - 48);
    tier_members(h, report_str(t, "kind"), shown, 8, y, dx);
    for (int i = 0; i < shown; i++)
      g_string_append_printf(h, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"7\" fill=\"%s\"/>", 8 + dx * (i + 0.5), y,
                             k == 0 ? "#4e79a7" : "#f28e2b");
    if (size > shown)
      g_string_append_printf(h, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"14\">&#8230; %d</text>", 8 + dx * shown,
                             y + 5, size);
    g_string_append_printf(h, "<text x=\"318\" y=\"%.1f\" font-size=\"15\" font-weight=\"600\">", y - 24);
    report_esc(h, report_str(t, "name"));
    g_string_append_printf(h, "</text><text x=\"318\" y=\"%.1f\" font-size=\"13\">", y - 6);
    report_esc(h, report_str(t, "kind"));
    g_string_append_printf(h, " &#215; %d, %.1f GB/s%s</text>", size, report_dbl(t, "bandwidth_Bps") / 1e9,
                           k == 0 ? " (GPUs)" : "");
  }
  g_string_append(h, "</svg>\n<p class=\"why\">Top: the outermost tier; each of its members (orange) holds one box "
                     "of the tier below; blue: the GPUs. Bandwidths: ");
  for (int k = 0; k < n; k++) {
    const cJSON *t = cJSON_GetArrayItem(tiers, k);
    report_esc(h, report_str(t, "name"));
    g_string_append_c(h, ' ');
    report_numf(h, src, report_dbl(t, "bandwidth_Bps"), 1e9, 1, "%s/%d/bandwidth_Bps", base, k);
    g_string_append(h, k + 1 < n ? " GB/s, " : " GB/s.</p>\n");
  }
}

static const char *const LINE_COLOURS[] = {"#4e79a7", "#e15759", "#59a14f", "#f28e2b", "#af7aa1", "#76b7b2",
                                           "#9c755f", "#edc948"};

void report_line_chart(GString *h, const report_lines *c)
{
  double lo = INFINITY, hi = -INFINITY;
  for (int i = 0; i < c->n_lines * c->n_x; i++)
    if (isfinite(c->y[i])) {
      lo = fmin(lo, c->y[i]);
      hi = fmax(hi, c->y[i]);
    }
  if (!(hi >= lo))
    return;
  if (c->base_y > 0) {
    lo = fmin(lo, c->base_y);
    hi = fmax(hi, c->base_y);
  }
  lo = fmin(lo, 0); /* from zero: a step time's change reads as its share */
  double span = hi > lo ? hi - lo : fmax(1, fabs(hi));
#define CX(i) (90 + 460.0 * (c->n_x > 1 ? (double)(i) / (c->n_x - 1) : 0.5))
#define CY(v) (200 - 170 * ((v) - lo) / span)
  g_string_append(h, "<svg class=\"chart\" viewBox=\"0 0 600 250\" width=\"100%\" role=\"img\">");
  for (int t = 0; t <= 4; t++) {
    double v = lo + span * t / 4;
    g_string_append_printf(h, "<line x1=\"60\" x2=\"590\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/><text x=\"56\" "
                              "y=\"%.1f\" font-size=\"12\" text-anchor=\"end\">%.4g</text>", CY(v), CY(v), CY(v) + 4,
                           v / c->y_scale);
  }
  g_string_append_printf(h, "<text x=\"4\" y=\"12\" font-size=\"12\">%s</text>", c->y_unit);
  for (int i = 0; i < c->n_x; i++)
    if (c->x_labels && c->x_labels[i] && (!c->log_x_labels_only || i % 4 == 0 || i == c->n_x - 1)) {
      g_string_append_printf(h, "<text x=\"%.1f\" y=\"218\" font-size=\"12\" text-anchor=\"middle\">", CX(i));
      report_esc(h, c->x_labels[i]);
      g_string_append(h, "</text>");
    }
  if (c->base_y > 0)
    g_string_append_printf(h, "<line x1=\"60\" x2=\"590\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e15759\" "
                              "stroke-dasharray=\"6 4\"/>", CY(c->base_y), CY(c->base_y));
  for (int l = 0; l < c->n_lines; l++) {
    const char *col = LINE_COLOURS[l % 8];
    g_string_append_printf(h, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", col);
    for (int i = 0; i < c->n_x; i++)
      if (isfinite(c->y[l * c->n_x + i]))
        g_string_append_printf(h, "%.1f,%.1f ", CX(i), CY(c->y[l * c->n_x + i]));
    g_string_append(h, "\"/>");
    for (int i = 0; i < c->n_x; i++)
      if (isfinite(c->y[l * c->n_x + i]))
        g_string_append_printf(h, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>", CX(i),
                               CY(c->y[l * c->n_x + i]), col);
  }
  if (c->mark_x >= 0 && c->mark_line >= 0 && isfinite(c->y[c->mark_line * c->n_x + c->mark_x])) {
    double x = CX(c->mark_x), y = CY(c->y[c->mark_line * c->n_x + c->mark_x]);
    g_string_append_printf(h, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"8\" fill=\"none\" stroke=\"#e15759\" "
                              "stroke-width=\"2\"/><text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" fill=\"#e15759\">base"
                              "</text>", x, y, x + 10, y - 10);
  }
  int ly = 236;
  for (int l = 0; l < c->n_lines && c->line_names; l++) { /* the legend, one row, wrapping is not needed for few lines */
    g_string_append_printf(h, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"%d\" "
                              "font-size=\"11\">", 60 + 130 * (l % 4), ly + 12 * (l / 4) - 8, LINE_COLOURS[l % 8],
                           74 + 130 * (l % 4), ly + 12 * (l / 4) + 1);
    report_esc(h, c->line_names[l]);
    g_string_append(h, "</text>");
  }
  g_string_append(h, "</svg>\n");
#undef CX
#undef CY
}
