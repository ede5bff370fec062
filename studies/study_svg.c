/* study_svg.c: charts written as standalone SVG 1.1 (no scripts, no
 * external fonts), so results can be looked at without Python.
 *
 * Every chart has a title, labelled axes (the labels carry the units), tick
 * labels and a legend where there are several series.  Numbers are printed
 * with "%.6g" in the C locale; text is XML-escaped.  Output is atomic. */
#include "config.h"
#include "studies/study.h"

#include <math.h>
#include <string.h>

enum { W = 760, H = 440, ML = 80, MR = 170, MT = 50, MB = 70 };

static const char *const palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                      "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

static void esc(GString *s, const char *text)
{
  for (const char *p = text ? text : ""; *p; p++) {
    switch (*p) {
    case '<': g_string_append(s, "&lt;"); break;
    case '>': g_string_append(s, "&gt;"); break;
    case '&': g_string_append(s, "&amp;"); break;
    case '"': g_string_append(s, "&quot;"); break;
    case '\'': g_string_append(s, "&apos;"); break;
    default:
      if ((unsigned char)*p >= 0x20 || *p == '\t' || *p == '\n')
        g_string_append_c(s, *p);
    }
  }
}

static void num(GString *s, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append(s, g_ascii_formatd(buf, sizeof buf, "%.6g", v));
}

static void text(GString *s, double x, double y, const char *anchor, int size, const char *extra, const char *t)
{
  g_string_append(s, "<text x=\"");
  num(s, x);
  g_string_append(s, "\" y=\"");
  num(s, y);
  g_string_append_printf(s, "\" text-anchor=\"%s\" font-size=\"%d\"%s%s>", anchor, size, extra ? " " : "",
                         extra ? extra : "");
  esc(s, t);
  g_string_append(s, "</text>\n");
}

static void line(GString *s, double x1, double y1, double x2, double y2, const char *stroke)
{
  g_string_append(s, "<line x1=\"");
  num(s, x1);
  g_string_append(s, "\" y1=\"");
  num(s, y1);
  g_string_append(s, "\" x2=\"");
  num(s, x2);
  g_string_append(s, "\" y2=\"");
  num(s, y2);
  g_string_append_printf(s, "\" stroke=\"%s\"/>\n", stroke);
}

static void rect(GString *s, double x, double y, double w, double h, const char *fill)
{
  g_string_append(s, "<rect x=\"");
  num(s, x);
  g_string_append(s, "\" y=\"");
  num(s, y);
  g_string_append(s, "\" width=\"");
  num(s, w > 0 ? w : 0);
  g_string_append(s, "\" height=\"");
  num(s, h > 0 ? h : 0);
  g_string_append_printf(s, "\" fill=\"%s\"/>\n", fill);
}

static void header(GString *s, const char *title)
{
  g_string_append_printf(s, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" "
                            "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n",
                         W, H, W, H);
  g_string_append(s, "<title>");
  esc(s, title);
  g_string_append(s, "</title>\n");
  rect(s, 0, 0, W, H, "white");
  text(s, (ML + W - MR) / 2.0, 28, "middle", 16, "font-weight=\"bold\"", title);
}

/* A "nice" step (1, 2 or 5 x 10^k) giving about n ticks over span. */
static double nice_step(double span, int n)
{
  if (!(span > 0))
    return 1;
  double raw = span / n, p = pow(10, floor(log10(raw))), f = raw / p;
  return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

/* Draws the y axis from lo to hi with ticks and its label; returns the
 * mapping parameters through *y0 (pixel of lo) and *k (pixels per unit). */
static void y_axis(GString *s, double lo, double hi, const char *label, double *y0, double *k)
{
  double top = MT, bottom = H - MB;
  if (!(hi > lo))
    hi = lo + 1;
  *y0 = bottom;
  *k = (bottom - top) / (hi - lo);
  line(s, ML, top, ML, bottom, "black");
  double step = nice_step(hi - lo, 6);
  for (double v = ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
    double y = bottom - (v - lo) * *k;
    line(s, ML - 5, y, ML, y, "black");
    line(s, ML, y, W - MR, y, "#e0e0e0");
    char buf[64];
    g_snprintf(buf, sizeof buf, "%.6g", fabs(v) < step * 1e-9 ? 0.0 : v);
    text(s, ML - 8, y + 4, "end", 11, NULL, buf);
  }
  GString *t = g_string_new(NULL);
  g_string_append_printf(t, "<text transform=\"translate(18,%d) rotate(-90)\" text-anchor=\"middle\" font-size=\"13\">",
                         (MT + H - MB) / 2);
  esc(t, label);
  g_string_append(t, "</text>\n");
  g_string_append(s, t->str);
  g_string_free(t, TRUE);
}

static gboolean finish(GString *s, const char *path, GError **error)
{
  g_string_append(s, "</svg>\n");
  gboolean ok = wisp_write_file_atomic(path, s->str, s->len, error);
  g_string_free(s, TRUE);
  return ok;
}

/* Dash patterns and marker shapes, cycled with the palette at different
 * periods (10, 4, 5) so that any two of the first 20 series differ in at
 * least two of colour, dash and marker. */
static const char *const dashes[] = {"", "8,4", "2,3", "10,3,2,3"};
enum { N_MARKERS = 5 };

/* A marker of shape m (circle, square, triangle, diamond, cross) at (x, y). */
static void marker(GString *s, int m, double x, double y, const char *c)
{
  switch (m % N_MARKERS) {
  case 0:
    g_string_append(s, "<circle cx=\"");
    num(s, x);
    g_string_append(s, "\" cy=\"");
    num(s, y);
    g_string_append_printf(s, "\" r=\"3.5\" fill=\"%s\"/>\n", c);
    break;
  case 1:
    g_string_append(s, "<rect x=\"");
    num(s, x - 3.5);
    g_string_append(s, "\" y=\"");
    num(s, y - 3.5);
    g_string_append_printf(s, "\" width=\"7\" height=\"7\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"/>\n", c);
    break;
  case 2:
  case 3: {
    const double tri[6] = {0, -4.5, 4, 3, -4, 3}, dia[8] = {0, -5, 4.5, 0, 0, 5, -4.5, 0};
    const double *p = m % N_MARKERS == 2 ? tri : dia;
    int np = m % N_MARKERS == 2 ? 3 : 4;
    g_string_append(s, "<polygon points=\"");
    for (int i = 0; i < np; i++) {
      num(s, x + p[2 * i]);
      g_string_append_c(s, ',');
      num(s, y + p[2 * i + 1]);
      g_string_append_c(s, ' ');
    }
    g_string_append_printf(s, "\" fill=\"%s\"/>\n", c);
    break;
  }
  default:
    g_string_append_printf(s, "<path stroke=\"%s\" stroke-width=\"1.5\" d=\"M", c);
    num(s, x - 4);
    g_string_append_c(s, ' ');
    num(s, y - 4);
    g_string_append(s, " L");
    num(s, x + 4);
    g_string_append_c(s, ' ');
    num(s, y + 4);
    g_string_append(s, " M");
    num(s, x - 4);
    g_string_append_c(s, ' ');
    num(s, y + 4);
    g_string_append(s, " L");
    num(s, x + 4);
    g_string_append_c(s, ' ');
    num(s, y - 4);
    g_string_append(s, "\"/>\n");
  }
}

const char *study_svg_time_unit(double max_ms, double *per_ms)
{
  if (max_ms >= 1000) {
    *per_ms = 1e-3;
    return "s";
  }
  if (max_ms > 0 && max_ms < 1) {
    *per_ms = 1e3;
    return "us";
  }
  *per_ms = 1;
  return "ms";
}

gboolean study_svg_line_chart(const char *path, const char *title, const char *x_label, const char *y_label,
                              const study_svg_series *series, int n_series, const char *const *x_ticks,
                              GError **error)
{
  return study_svg_line_chart_opts(path, title, x_label, y_label, series, n_series, x_ticks, NULL, error);
}

/* The data range of a line chart: x (log10 of x when *log_x; a value <= 0
 * turns *log_x off, since it cannot go on a log axis) and y (from 0, finite
 * values only), widened so neither is empty.  O(points). */
static void line_range(const study_svg_series *series, int n_series, gboolean *log_x, double *xlo_out,
                       double *xhi_out, double *ylo_out, double *yhi_out)
{
  gboolean lg = *log_x;
  double xlo = INFINITY, xhi = -INFINITY, ylo = 0, yhi = -INFINITY;
  for (int i = 0; i < n_series; i++)
    for (int k = 0; k < series[i].n; k++) {
      if (lg && !(series[i].x[k] > 0))
        lg = FALSE;
    }
  for (int i = 0; i < n_series; i++)
    for (int k = 0; k < series[i].n; k++) {
      double xv = lg ? log10(series[i].x[k]) : series[i].x[k];
      xlo = fmin(xlo, xv);
      xhi = fmax(xhi, xv);
      if (isfinite(series[i].y[k])) {
        ylo = fmin(ylo, series[i].y[k]);
        yhi = fmax(yhi, series[i].y[k]);
      }
    }
  if (!isfinite(xlo)) {
    xlo = 0;
    xhi = 1;
  }
  if (!isfinite(yhi))
    yhi = 1;
  if (!(xhi > xlo)) {
    xlo -= 1;
    xhi += 1;
  }
  *log_x = lg;
  *xlo_out = xlo;
  *xhi_out = xhi;
  *ylo_out = ylo;
  *yhi_out = yhi;
}

gboolean study_svg_line_chart_opts(const char *path, const char *title, const char *x_label, const char *y_label,
                                   const study_svg_series *series, int n_series, const char *const *x_ticks,
                                   const study_svg_line_opts *o, GError **error)
{
  static const study_svg_line_opts none = {0};
  if (o == NULL)
    o = &none;
  gboolean lg = o->log_x;
  /* x in plot coordinates: the value, or its log10 on a log axis. */
#define XV(v) (lg ? log10(v) : (v))
  double xlo, xhi, ylo, yhi;
  line_range(series, n_series, &lg, &xlo, &xhi, &ylo, &yhi);
  /* Times in ms are shown in the unit that fits the largest one. */
  double yscale = 1;
  char *ylab = NULL;
  if (o->y_ms_quantity) {
    const char *unit = study_svg_time_unit(fmax(fabs(yhi), fabs(ylo)), &yscale);
    ylab = g_strdup_printf("%s (%s)", o->y_ms_quantity, unit);
    y_label = ylab;
    ylo *= yscale;
    yhi *= yscale;
  }
  yhi += (yhi - ylo) * 0.05;
  GString *s = g_string_new(NULL);
  header(s, title);
  double y0, ky;
  y_axis(s, ylo, yhi, y_label, &y0, &ky);
  double x0 = ML + 20, kx = (W - MR - 20 - x0) / (xhi - xlo);
  line(s, ML, H - MB, W - MR, H - MB, "black");
  if (o->tick_x) {
    for (int k = 0; k < o->n_ticks; k++) {
      if (lg && !(o->tick_x[k] > 0))
        continue;
      double x = x0 + (XV(o->tick_x[k]) - xlo) * kx;
      line(s, x, H - MB, x, H - MB + 5, "black");
      text(s, x, H - MB + 18, "middle", 11, NULL, o->tick_labels[k]);
    }
  } else if (x_ticks) {
    for (int k = 0; series && n_series > 0 && k < series[0].n; k++) {
      double x = x0 + (XV(series[0].x[k]) - xlo) * kx;
      line(s, x, H - MB, x, H - MB + 5, "black");
      text(s, x, H - MB + 18, "middle", 11, NULL, x_ticks[k]);
    }
  } else {
    double step = lg ? 1 : nice_step(xhi - xlo, 6);
    for (double v = ceil(xlo / step) * step; v <= xhi + step * 1e-9; v += step) {
      double x = x0 + (v - xlo) * kx;
      char buf[64];
      g_snprintf(buf, sizeof buf, "%.6g", lg ? pow(10, v) : v);
      line(s, x, H - MB, x, H - MB + 5, "black");
      text(s, x, H - MB + 18, "middle", 11, NULL, buf);
    }
  }
  char *xlab = lg ? g_strdup_printf("%s (log scale)", x_label) : g_strdup(x_label);
  text(s, (ML + W - MR) / 2.0, H - 22, "middle", 13, NULL, xlab);
  g_free(xlab);
  for (int i = 0; i < n_series; i++) {
    const char *c = palette[i % G_N_ELEMENTS(palette)], *dash = dashes[i % G_N_ELEMENTS(dashes)];
    g_string_append_printf(s, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s%s%s points=\"", c,
                           *dash ? " stroke-dasharray=\"" : "", dash, *dash ? "\"" : "");
    for (int k = 0; k < series[i].n; k++) {
      if (!isfinite(series[i].y[k]))
        continue;
      num(s, x0 + (XV(series[i].x[k]) - xlo) * kx);
      g_string_append_c(s, ',');
      num(s, y0 - (series[i].y[k] * yscale - ylo) * ky);
      g_string_append_c(s, ' ');
    }
    g_string_append(s, "\"/>\n");
    for (int k = 0; k < series[i].n; k++)
      if (isfinite(series[i].y[k]))
        marker(s, i, x0 + (XV(series[i].x[k]) - xlo) * kx, y0 - (series[i].y[k] * yscale - ylo) * ky, c);
    if (n_series > 1 || (series[i].label && *series[i].label)) {
      double ly = MT + 10 + 18 * i;
      /* The legend shows each series' line, dash and marker. */
      g_string_append_printf(s, "<line x1=\"%d\" y1=\"", W - MR + 6);
      num(s, ly - 3);
      g_string_append_printf(s, "\" x2=\"%d\" y2=\"", W - MR + 30);
      num(s, ly - 3);
      g_string_append_printf(s, "\" stroke=\"%s\" stroke-width=\"2\"%s%s%s/>\n", c, *dash ? " stroke-dasharray=\"" : "",
                             dash, *dash ? "\"" : "");
      marker(s, i, W - MR + 18, ly - 3, c);
      /* Long legends are cut to fit the margin (the full text is in the CSV). */
      char *lab;
      if (g_utf8_strlen(series[i].label, -1) > 22) {
        char *head = g_utf8_substring(series[i].label, 0, 21);
        lab = g_strconcat(head, "\u2026", NULL);
        g_free(head);
      } else {
        lab = g_strdup(series[i].label);
      }
      text(s, W - MR + 36, ly + 1, "start", 11, NULL, lab);
      g_free(lab);
    }
  }
#undef XV
  g_free(ylab);
  return finish(s, path, error);
}

gboolean study_svg_bar_chart(const char *path, const char *title, const char *y_label, const char *const *labels,
                             const double *values, int n, const char *zero_note, GError **error)
{
  double lo = 0, hi = 0;
  int drawn = 0;
  for (int i = 0; i < n; i++) {
    if (isfinite(values[i])) {
      lo = fmin(lo, values[i]);
      hi = fmax(hi, values[i]);
      drawn++;
    }
  }
  gboolean all_zero = drawn > 0 && lo == 0 && hi == 0;
  if (!(hi > lo))
    hi = lo + 1;
  hi += (hi - lo) * 0.08;
  GString *s = g_string_new(NULL);
  header(s, title);
  double y0, ky;
  y_axis(s, lo, hi, y_label, &y0, &ky);
  double zero = y0 - (0 - lo) * ky;
  line(s, ML, zero, W - MR, zero, "black");
  double slot = n > 0 ? (double)(W - MR - ML) / n : 1;
  for (int i = 0; i < n; i++) {
    double x = ML + slot * i + slot * 0.15;
    text(s, x + slot * 0.35, H - MB + 18, "middle", 11, NULL, labels[i]);
    if (!isfinite(values[i])) {
      /* Not applicable: said in place of the bar, not silently dropped. */
      text(s, x + slot * 0.35, zero - 6, "middle", 11, "fill=\"#7f7f7f\" font-style=\"italic\"", "n/a");
      continue;
    }
    double v = values[i], y = y0 - (v - lo) * ky;
    rect(s, x, fmin(y, zero), slot * 0.7, fabs(zero - y), palette[i % G_N_ELEMENTS(palette)]);
    char buf[64];
    g_snprintf(buf, sizeof buf, "%.3f", v);
    text(s, x + slot * 0.35, fmin(y, zero) - 4, "middle", 11, NULL, buf);
  }
  if (drawn < n)
    text(s, (ML + W - MR) / 2.0, H - 6, "middle", 11, "fill=\"#7f7f7f\"",
         "n/a: not applicable to this cluster or workload (the reason is in the terminal output and the JSON)");
  if (all_zero)
    text(s, (ML + W - MR) / 2.0, MT + (H - MT - MB) / 2.0, "middle", 13, "fill=\"#d62728\"",
         zero_note ? zero_note : "every bar is 0");
  else if (drawn == 0)
    text(s, (ML + W - MR) / 2.0, MT + (H - MT - MB) / 2.0, "middle", 13, "fill=\"#d62728\"",
         "nothing to draw: no bar is applicable");
  return finish(s, path, error);
}

gboolean study_svg_rank_breakdown(const char *path, const char *title, const sim_result *r, GError **error)
{
  /* The one accounting of communication (sim_rank_stats): exposed
   * communication drawn as its transfer and its two kinds of waiting. */
  enum { NP = 6 };
  static const char *const parts[NP] = {"compute only", "overlapped comm", "comm transfer",
                                        "straggler wait", "dependency wait", "idle"};
  static const char *const colors[NP] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#c7c7c7"};
  double hi = 0;
  for (int k = 0; k < r->n_ranks; k++)
    hi = fmax(hi, (double)(r->ranks[k].compute + r->ranks[k].exposed_comm + r->ranks[k].idle) / 1e9);
  double per_ms;
  const char *unit = study_svg_time_unit(hi, &per_ms);
  hi = hi > 0 ? hi * per_ms * 1.05 : 1;
  GString *s = g_string_new(NULL);
  header(s, title);
  double y0, ky;
  char *ylab = g_strdup_printf("time (%s)", unit);
  y_axis(s, 0, hi, ylab, &y0, &ky);
  g_free(ylab);
  line(s, ML, H - MB, W - MR, H - MB, "black");
  double slot = r->n_ranks > 0 ? (double)(W - MR - ML) / r->n_ranks : 1;
  int label_every = r->n_ranks > 32 ? (r->n_ranks + 31) / 32 : 1;
  for (int k = 0; k < r->n_ranks; k++) {
    const sim_rank_stats *st = &r->ranks[k];
    /* compute includes the overlapped communication: split it so the six
     * parts add up to the rank's finish time. */
    const sim_time_ps ps[NP] = {st->compute - st->overlapped_comm, st->overlapped_comm, st->comm_transfer,
                                st->straggler_wait, st->dependency_wait, st->idle};
    /* Each bar carries its numbers as a tooltip, in the table's unit. */
    g_string_append_printf(s, "<g><title>rank %d (ms):", st->rank);
    for (int p = 0; p < NP; p++)
      g_string_append_printf(s, "%s %s %.6f", p ? ";" : "", parts[p], (double)ps[p] / 1e9);
    g_string_append(s, "</title>\n");
    double base = 0, x = ML + slot * k + slot * 0.1;
    for (int p = 0; p < NP; p++) {
      double h = (double)ps[p] / 1e9 * per_ms * ky;
      rect(s, x, y0 - base - h, slot * 0.8, h, colors[p]);
      base += h;
    }
    g_string_append(s, "</g>\n");
    if (k % label_every == 0) {
      char buf[16];
      g_snprintf(buf, sizeof buf, "%d", st->rank);
      text(s, x + slot * 0.4, H - MB + 16, "middle", 10, NULL, buf);
    }
  }
  text(s, (ML + W - MR) / 2.0, H - 22, "middle", 13, NULL, "rank");
  for (int p = 0; p < NP; p++) {
    double ly = MT + 10 + 18 * p;
    rect(s, W - MR + 12, ly - 9, 12, 12, colors[p]);
    text(s, W - MR + 30, ly + 1, "start", 11, NULL, parts[p]);
  }
  return finish(s, path, error);
}
