/* study_sweep_chart.c: the SVG chart of a sweep CSV (step time over the
 * first axis, one series per combination of the other axes), drawn by
 * study_sweep_run and by sweep-merge.  O(rows).
 */
#include "config.h"
#include "studies/study_sweep_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Step time over the first axis (categorical x, in value order of first
 * appearance), one line per combination of the other axes (at most 10;
 * more are left out and counted in the title). */
/* The number an axis value stands for, and its kind: 1 plain number, 2
 * bandwidth, 3 time, 4 size (units as in configs: "50GB/s", "500ns",
 * "64KiB").  0 when it is none of them (an algorithm name, a label). */
static int axis_number(const char *v, double *out)
{
  char *end;
  double d = g_ascii_strtod(v, &end);
  if (end != v && *end == '\0' && isfinite(d)) {
    *out = d;
    return 1;
  }
  const char *why;
  wisp_bw_Bps bw;
  sim_time_ps t;
  uint64_t sz;
  if (wisp_parse_bandwidth(v, &bw, &why)) {
    *out = (double)bw;
    return 2;
  }
  if (wisp_parse_time(v, &t, &why)) {
    *out = (double)t;
    return 3;
  }
  if (wisp_parse_size(v, &sz, &why)) {
    *out = (double)sz;
    return 4;
  }
  return 0;
}

/* The points of a sweep CSV's chart: x categories (the first axis's
 * values), series keys (the other axes' values, at most 10 series), each
 * point's x index, step time (ms) and series, and its name (label, else
 * axis values); points in error and in further series are counted. */
typedef struct {
  GPtrArray *xs, *names, *pnames;
  GArray *px, *py, *ps;
  int dropped, in_error;
} chart_points;

/* Reads the CSV's point lines (after the header) into cp. */
static void read_chart_points(char **lines, int n_axes, int step_col, int status_col, chart_points *cp)
{
  for (char **l = lines + 1; *l && **l; l++) {
    GPtrArray *f = study_sweep_csv_split(*l);
    if ((int)f->len <= status_col || strcmp(f->pdata[status_col], "ok") != 0) {
      cp->in_error++; /* said in the title, not silently left out */
      g_ptr_array_unref(f);
      continue;
    }
    const char *x = f->pdata[2];
    guint xi;
    if (!g_ptr_array_find_with_equal_func(cp->xs, x, g_str_equal, &xi)) {
      g_ptr_array_add(cp->xs, g_strdup(x));
      xi = cp->xs->len - 1;
    }
    GString *key = g_string_new(NULL);
    for (int a = 1; a < n_axes; a++)
      g_string_append_printf(key, "%s%s", a > 1 ? ", " : "", (char *)f->pdata[2 + a]);
    guint si;
    if (!g_ptr_array_find_with_equal_func(cp->names, key->str, g_str_equal, &si)) {
      if (cp->names->len >= 10) {
        cp->dropped++;
        g_string_free(key, TRUE);
        g_ptr_array_unref(f);
        continue;
      }
      g_ptr_array_add(cp->names, g_strdup(key->str));
      si = cp->names->len - 1;
    }
    g_string_free(key, TRUE);
    double x_v = xi, y_v = g_ascii_strtod(f->pdata[step_col], NULL) / 1e6;
    int s_v = (int)si;
    g_array_append_val(cp->px, x_v);
    g_array_append_val(cp->py, y_v);
    g_array_append_val(cp->ps, s_v);
    /* Point name for the one-series fallback below: its label, else all its axis values. */
    GString *pn = g_string_new(f->pdata[1]);
    if (pn->len == 0)
      for (int a = 0; a < n_axes; a++)
        g_string_append_printf(pn, "%s%s", a ? " " : "", (char *)f->pdata[2 + a]);
    g_ptr_array_add(cp->pnames, g_string_free(pn, FALSE));
    g_ptr_array_unref(f);
  }
}

/* One series per key of cp->names, holding its points in order; *sx and
 * *sy get the arrays the series point into (the caller frees them). */
static study_svg_series *split_series(const chart_points *cp, double ***sx_out, double ***sy_out)
{
  const GArray *px = cp->px, *py = cp->py, *ps = cp->ps;
  int ns = (int)cp->names->len;
  study_svg_series *series = g_new0(study_svg_series, ns ? ns : 1);
  double **sx = g_new0(double *, ns ? ns : 1), **sy = g_new0(double *, ns ? ns : 1);
  for (int i = 0; i < ns; i++) {
    sx[i] = g_new0(double, px->len);
    sy[i] = g_new0(double, px->len);
    series[i].label = cp->names->pdata[i];
  }
  for (guint k = 0; k < px->len; k++) {
    int si = g_array_index(ps, int, k);
    sx[si][series[si].n] = g_array_index(px, double, k);
    sy[si][series[si].n] = g_array_index(py, double, k);
    series[si].n++;
  }
  for (int i = 0; i < ns; i++) {
    series[i].x = sx[i];
    series[i].y = sy[i];
  }
  *sx_out = sx;
  *sy_out = sy;
  return series;
}

gboolean study_sweep_chart_from_csv(const char *csv, const char *title, const char *path, gboolean *written,
                                    GError **error)
{
  char **lines = g_strsplit(csv, "\n", -1);
  gboolean ok = TRUE;
  *written = FALSE;
  if (lines[0] == NULL || lines[1] == NULL) {
    g_strfreev(lines);
    return TRUE;
  }
  GPtrArray *hdr = study_sweep_csv_split(lines[0]);
  int step_col = -1, status_col = -1;
  for (guint i = 0; i < hdr->len; i++) {
    if (strcmp(hdr->pdata[i], "step_time_ns") == 0)
      step_col = (int)i;
    if (strcmp(hdr->pdata[i], "status") == 0)
      status_col = (int)i;
  }
  int n_axes = step_col - 2;
  if (n_axes < 1 || status_col < 0) {
    g_ptr_array_unref(hdr);
    g_strfreev(lines);
    return TRUE;
  }
  chart_points cpts = {
    .xs = g_ptr_array_new_with_free_func(g_free), .names = g_ptr_array_new_with_free_func(g_free),
    .pnames = g_ptr_array_new_with_free_func(g_free), .px = g_array_new(FALSE, FALSE, sizeof(double)),
    .py = g_array_new(FALSE, FALSE, sizeof(double)), .ps = g_array_new(FALSE, FALSE, sizeof(int)),
  };
  read_chart_points(lines, n_axes, step_col, status_col, &cpts);
  GPtrArray *xs = cpts.xs, *names = cpts.names, *pnames = cpts.pnames;
  GArray *px = cpts.px, *py = cpts.py, *ps = cpts.ps;
  int dropped = cpts.dropped, in_error = cpts.in_error;
  /* Zipped sweeps (every combination of the other axes occurs once) read
   * better as one line over the points, labelled by point. */
  gboolean one_line = names->len > 1 && names->len == px->len;
  if (one_line) {
    g_ptr_array_set_size(names, 0);
    g_ptr_array_add(names, g_strdup("step time"));
    g_ptr_array_set_size(xs, 0);
    for (guint k = 0; k < px->len; k++) {
      g_array_index(px, double, k) = k;
      g_array_index(ps, int, k) = 0;
      g_ptr_array_add(xs, g_strdup(pnames->pdata[k]));
    }
  }
  /* A numeric first axis (numbers, bandwidths, times or sizes, all of one
   * kind) is spaced by value, on a log scale when its values span more than
   * 10x; other axes stay categories in the order they appear. */
  int kind = -1;
  double *xv = g_new0(double, xs->len + 1), vmin = INFINITY, vmax = -INFINITY;
  for (guint i = 0; !one_line && i < xs->len && kind != 0; i++) {
    int k = axis_number(xs->pdata[i], &xv[i]);
    kind = kind < 0 || kind == k ? k : 0;
    vmin = fmin(vmin, xv[i]);
    vmax = fmax(vmax, xv[i]);
  }
  gboolean numeric = kind > 0 && xs->len > 1;
  study_svg_line_opts lopt = {.y_ms_quantity = "step time"};
  if (numeric) {
    for (guint k = 0; k < px->len; k++)
      g_array_index(px, double, k) = xv[(int)g_array_index(px, double, k)];
    lopt.tick_x = xv;
    lopt.tick_labels = (const char *const *)xs->pdata;
    lopt.n_ticks = (int)xs->len;
    lopt.log_x = vmin > 0 && vmax > 10 * vmin;
  }
  int ns = (int)names->len;
  double **sx, **sy;
  study_svg_series *series = split_series(&cpts, &sx, &sy);
  /* Tick labels follow series 0's points (all categories when it covers them). */
  const char **ticks = g_new0(const char *, px->len + 1);
  for (int k = 0; !numeric && ns > 0 && k < series[0].n; k++)
    ticks[k] = xs->pdata[(int)series[0].x[k]];
  /* The legend shows the other axes' values; their keys go into the title. */
  GString *t = g_string_new(title);
  if (!one_line && n_axes > 1) {
    g_string_append(t, "; lines: ");
    for (int a = 1; a < n_axes; a++)
      g_string_append_printf(t, "%s%s", a > 1 ? ", " : "", (char *)hdr->pdata[2 + a]);
  }
  if (dropped)
    g_string_append_printf(t, " (%d points in further lines not drawn)", dropped);
  if (in_error)
    g_string_append_printf(t, " (%d point%s in error not drawn)", in_error, in_error > 1 ? "s" : "");
  *written = ns > 0;
  if (ns > 0)
    ok = study_svg_line_chart_opts(path, t->str, one_line ? "point" : (const char *)hdr->pdata[2], "step time (ms)",
                                   series, ns, ticks, &lopt, error);
  g_free(xv);
  g_string_free(t, TRUE);
  g_free(ticks);
  for (int i = 0; i < ns; i++) {
    g_free(sx[i]);
    g_free(sy[i]);
  }
  g_free(sx);
  g_free(sy);
  g_free(series);
  g_array_free(px, TRUE);
  g_array_free(py, TRUE);
  g_array_free(ps, TRUE);
  g_ptr_array_unref(xs);
  g_ptr_array_unref(names);
  g_ptr_array_unref(pnames);
  g_ptr_array_unref(hdr);
  g_strfreev(lines);
  return ok;
}
