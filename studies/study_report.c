/* study_report.c: `wisp report`: one self-contained HTML page (inline CSS
 * and SVG, a few lines of JavaScript that only record the charts' sizes
 * for the browser test, no network access) from wisp's JSON outputs.
 *
 * Inputs are read with cJSON.  A file that parses as one JSON object is a
 * simulate report (schema_version 1 with step_time_ns and ranks) or a
 * utility study (kind "utility"); otherwise every non-empty line must be
 * one JSON object of a sweep (keys "point" and "sweep"), as wisp sweep
 * writes them.  Anything else is refused with the file, the byte or line,
 * and what to give instead.
 *
 * Every number shown that comes from an input is written as
 * <span class="n" data-src=I data-json=PATH data-v=VALUE data-dec=D>
 * where PATH is a '/'-separated path into input I's JSON (array indices as
 * numbers; for a sweep the first segment is the line index), VALUE the
 * number read (%.17g, exact for a double) and the text VALUE/scale with D
 * decimals: regress/test_report.c compares them with the JSON they came
 * from.  Cost: O(total input size); the page holds one element per number
 * shown, so it grows with ranks only through the tables it lists (none per
 * rank here). */
#include "config.h"
#include "studies/study_report.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

typedef enum { REPORT_SIMULATE, REPORT_UTILITY, REPORT_SWEEP } report_kind;

typedef struct {
  char *path;
  report_kind kind;
  cJSON *doc; /* the object, or for a sweep an array of the lines' objects */
} report_input;

/* Category colours of the stacked bars (also in the legends). */
static const char *const CAT_KEYS[] = {"compute_ns", "communication_ns", "communication_replayed_ns", "host_ns",
                                       "idle_ns", "other_ns", "start_offset_ns"};
static const char *const CAT_NAMES[] = {"compute", "communication", "replayed communication", "host", "idle",
                                        "other", "start offset"};
static const char *const CAT_COLOURS[] = {"#4e79a7", "#e15759", "#f28e2b", "#76b7b2", "#bab0ac", "#edc948",
                                          "#9c755f"};
#define N_CATS 7

static void esc(GString *h, const char *s)
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

/* A number from input src at path, shown as v / scale with dec decimals. */
static void num(GString *h, int src, const char *path, double v, double scale, int dec)
{
  g_string_append_printf(h, "<span class=\"n\" data-src=\"%d\" data-json=\"", src);
  esc(h, path);
  g_string_append_printf(h, "\" data-v=\"%.17g\" data-scale=\"%g\" data-dec=\"%d\">%.*f</span>", v, scale, dec, dec,
                         v / scale);
}

static const cJSON *get(const cJSON *o, const char *k)
{
  return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const char *str(const cJSON *o, const char *k)
{
  const cJSON *v = get(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static gboolean isnum(const cJSON *o, const char *k)
{
  return cJSON_IsNumber(get(o, k));
}

static double dbl(const cJSON *o, const char *k)
{
  const cJSON *v = get(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : 0.0;
}

static gboolean parse_lines(report_input *in, const char *text, gsize len, GError **error)
{
  in->doc = cJSON_CreateArray();
  const char *p = text, *end = text + len;
  for (int line = 1; p < end; line++) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *stop = nl ? nl : end;
    gboolean blank = TRUE;
    for (const char *c = p; c < stop; c++)
      blank = blank && g_ascii_isspace(*c);
    if (!blank) {
      cJSON *o = cJSON_ParseWithLength(p, (size_t)(stop - p));
      if (!cJSON_IsObject(o) || !isnum(o, "point") || !cJSON_IsString(get(o, "sweep"))) {
        cJSON_Delete(o);
        g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE,
                    "%s:%d: not a wisp report: give the JSON of wisp simulate --json or wisp utility --json, or "
                    "the JSON lines of wisp sweep (one object with 'point' and 'sweep' per line)",
                    in->path, line);
        return FALSE;
      }
      cJSON_AddItemToArray(in->doc, o);
    }
    p = stop + 1;
  }
  if (cJSON_GetArraySize(in->doc) == 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s: empty file: give a JSON file written by wisp", in->path);
    return FALSE;
  }
  in->kind = REPORT_SWEEP;
  return TRUE;
}

/* Whether the text's first line alone is one JSON object (JSON lines). */
static gboolean first_line_is_object(const char *text, gsize len)
{
  const char *nl = memchr(text, '\n', len);
  if (nl == NULL)
    return FALSE;
  cJSON *o = cJSON_ParseWithLength(text, (size_t)(nl - text));
  gboolean yes = cJSON_IsObject(o);
  cJSON_Delete(o);
  return yes;
}

static gboolean load_input(report_input *in, const char *path, GError **error)
{
  char *text = NULL;
  gsize len = 0;
  in->path = g_strdup(path);
  wisp_input_note(path); /* the page may not replace it */
  if (!g_file_get_contents(path, &text, &len, error))
    return FALSE;
  const char *end = NULL;
  cJSON *doc = cJSON_ParseWithLengthOpts(text, len + 1, &end, TRUE);
  gboolean ok = TRUE;
  if (cJSON_IsObject(doc) && g_strcmp0(str(doc, "kind"), "utility") == 0) {
    in->kind = REPORT_UTILITY;
    in->doc = doc;
  } else if (cJSON_IsObject(doc) && isnum(doc, "step_time_ns") && cJSON_IsArray(get(doc, "ranks"))) {
    in->kind = REPORT_SIMULATE;
    in->doc = doc;
  } else if (cJSON_IsObject(doc) && isnum(doc, "point") && cJSON_IsString(get(doc, "sweep"))) {
    cJSON_Delete(doc); /* a sweep of one point */
    ok = parse_lines(in, text, len, error);
  } else if (cJSON_IsObject(doc)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED, "%s: a JSON object of a kind wisp report does not "
                "draw ('kind': %s); give the JSON of wisp simulate, utility or sweep", path,
                str(doc, "kind") ? str(doc, "kind") : "none");
    cJSON_Delete(doc);
    ok = FALSE;
  } else if (doc != NULL) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s: the JSON is not an object: give a file written by wisp",
                path);
    cJSON_Delete(doc);
    ok = FALSE;
  } else if (first_line_is_object(text, len)) {
    ok = parse_lines(in, text, len, error);
  } else {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s: not valid JSON (error near byte %td); give a file written "
                "by wisp simulate --json, utility --json or sweep", path, end ? end - text : (ptrdiff_t)0);
    ok = FALSE;
  }
  g_free(text);
  return ok;
}

/* A stacked horizontal bar of the critical path's categories (pre: base is
 * the path of the by_category object inside input src). */
static void crit_bar(GString *h, int src, const cJSON *crit, const char *base)
{
  const cJSON *cat = get(crit, "by_category");
  double total = 0;
  for (int c = 0; c < N_CATS; c++)
    total += fmax(0, dbl(cat, CAT_KEYS[c]));
  if (!(total > 0))
    return;
  g_string_append(h, "<h3>Critical path by category</h3>\n<svg class=\"chart\" viewBox=\"0 0 600 36\" "
                     "preserveAspectRatio=\"none\" width=\"100%\" height=\"36\" role=\"img\">");
  double x = 0;
  for (int c = 0; c < N_CATS; c++) {
    double w = 600.0 * fmax(0, dbl(cat, CAT_KEYS[c])) / total;
    if (w <= 0)
      continue;
    g_string_append_printf(h, "<rect x=\"%.3f\" y=\"0\" width=\"%.3f\" height=\"36\" fill=\"%s\"><title>%s</title>"
                              "</rect>", x, w, CAT_COLOURS[c], CAT_NAMES[c]);
    x += w;
  }
  g_string_append(h, "</svg>\n<ul class=\"legend\">");
  for (int c = 0; c < N_CATS; c++) {
    if (!(dbl(cat, CAT_KEYS[c]) > 0))
      continue;
    char *p = g_strdup_printf("%s/by_category/%s", base, CAT_KEYS[c]);
    g_string_append_printf(h, "<li><i style=\"background:%s\"></i>%s ", CAT_COLOURS[c], CAT_NAMES[c]);
    num(h, src, p, dbl(cat, CAT_KEYS[c]), 1e6, 3);
    g_string_append_printf(h, " ms (%.1f %%)</li>", 100.0 * dbl(cat, CAT_KEYS[c]) / total);
    g_free(p);
  }
  g_string_append(h, "</ul>\n");
  if (str(crit, "bound")) {
    g_string_append(h, "<p class=\"why\"><b>What bounds the step:</b> ");
    esc(h, str(crit, "bound"));
    g_string_append(h, "</p>\n");
  }
}

static void row_text(GString *h, const char *name, const char *value)
{
  g_string_append(h, "<tr><th>");
  esc(h, name);
  g_string_append(h, "</th><td>");
  esc(h, value ? value : "(not recorded)");
  g_string_append(h, "</td></tr>\n");
}

/* Warnings a reader must see: what the run could not simulate. */
static void warnings(GString *h, const cJSON *doc, const char *measured_key)
{
  GPtrArray *w = g_ptr_array_new_with_free_func(g_free);
  const cJSON *un = get(doc, "unsimulated_communication");
  if (dbl(un, "replayed_ops") > 0)
    g_ptr_array_add(w, g_strdup_printf("%.0f communication ops on %.0f ranks were replayed at their measured "
                                       "duration, not simulated", dbl(un, "replayed_ops"), dbl(un, "replayed_ranks")));
  if (dbl(un, "zero_byte_collectives") > 0)
    g_ptr_array_add(w, g_strdup_printf("%.0f collectives had no byte count and move nothing in the simulation",
                                       dbl(un, "zero_byte_collectives")));
  if (dbl(doc, "assumed_roots") > 0)
    g_ptr_array_add(w, g_strdup_printf("%.0f graph roots were assumed", dbl(doc, "assumed_roots")));
  if (!isnum(doc, measured_key))
    g_ptr_array_add(w, g_strdup("no measured step time was given: the baseline's error is unknown"));
  if (cJSON_IsTrue(get(doc, "calibration_error_above_10pct")))
    g_ptr_array_add(w, g_strdup("the baseline is more than 10 % off the measured step: treat the utilities "
                                "with caution"));
  const cJSON *cl = get(doc, "cluster");
  if (str(cl, "fitting") && *str(cl, "fitting"))
    g_ptr_array_add(w, g_strdup_printf("cluster fitting: %s", str(cl, "fitting")));
  const cJSON *list = get(doc, "warnings"), *it;
  cJSON_ArrayForEach(it, list)
    if (cJSON_IsString(it))
      g_ptr_array_add(w, g_strdup(it->valuestring));
  g_string_append(h, "<h3>Assumptions and warnings</h3>\n<ul class=\"warn\">");
  if (w->len == 0)
    g_string_append(h, "<li>none recorded</li>");
  for (guint i = 0; i < w->len; i++) {
    g_string_append(h, "<li>");
    esc(h, w->pdata[i]);
    g_string_append(h, "</li>");
  }
  g_string_append(h, "</ul>\n");
  g_ptr_array_free(w, TRUE);
}

/* Step time and its error against the measurement, when there is one. */
static void step_line(GString *h, int src, const cJSON *doc, const char *step_key, const char *measured_key)
{
  g_string_append(h, "<p class=\"big\">Step time ");
  num(h, src, step_key, dbl(doc, step_key), 1e6, 3);
  g_string_append(h, " ms");
  if (isnum(doc, measured_key) && dbl(doc, measured_key) > 0) {
    double m = dbl(doc, measured_key), s = dbl(doc, step_key);
    g_string_append(h, " &middot; measured ");
    num(h, src, measured_key, m, 1e6, 3);
    g_string_append_printf(h, " ms &middot; baseline error %+.2f %%", 100.0 * (s - m) / m);
  }
  g_string_append(h, "</p>\n");
}

static void section_simulate(GString *h, int src, const report_input *in)
{
  const cJSON *d = in->doc, *wl = get(d, "workload"), *net = get(d, "network");
  g_string_append(h, "<section><h2>Simulation: ");
  esc(h, in->path);
  g_string_append(h, "</h2>\n<table>\n");
  row_text(h, "workload", str(wl, "source"));
  char *nr = g_strdup_printf("%.0f", dbl(wl, "n_ranks"));
  row_text(h, "ranks", nr);
  g_free(nr);
  row_text(h, "workload SHA-256", str(d, "workload_digest_sha256"));
  row_text(h, "network", str(net, "source"));
  row_text(h, "tier", str(net, "tier"));
  row_text(h, "library", str(d, "library"));
  row_text(h, "wisp version", str(d, "wisp_version"));
  g_string_append(h, "</table>\n");
  step_line(h, src, d, "step_time_ns", "measured_step_ns");
  if (get(d, "critical_path"))
    crit_bar(h, src, get(d, "critical_path"), "critical_path");
  warnings(h, d, "measured_step_ns");
  g_string_append(h, "</section>\n");
}

/* The utility bars: one row per resource, the longest bar the largest
 * utility; resources that do not apply say why. */
static void utility_bars(GString *h, int src, const cJSON *res)
{
  double top = 0;
  const cJSON *r;
  cJSON_ArrayForEach(r, res)
    if (isnum(r, "utility_pct"))
      top = fmax(top, dbl(r, "utility_pct"));
  g_string_append(h, "<h3>Utility of doubling each resource</h3>\n<div class=\"bars\">\n");
  int i = 0;
  cJSON_ArrayForEach(r, res) {
    g_string_append(h, "<div class=\"bar\"><div class=\"lab\">");
    esc(h, str(r, "resource"));
    g_string_append(h, "</div>");
    if (isnum(r, "utility_pct")) {
      double u = dbl(r, "utility_pct"), w = top > 0 ? 300.0 * fmax(0, u) / top : 0;
      g_string_append_printf(h, "<svg class=\"chart\" viewBox=\"0 0 300 14\" width=\"100%%\" height=\"14\" "
                                "preserveAspectRatio=\"none\"><rect x=\"0\" y=\"0\" width=\"300\" height=\"14\" "
                                "fill=\"#eee\"/><rect x=\"0\" y=\"0\" width=\"%.3f\" height=\"14\" fill=\"#4e79a7\"/>"
                                "</svg><div class=\"val\">", w);
      char *p = g_strdup_printf("resources/%d/utility_pct", i);
      num(h, src, p, u, 1, 2);
      g_free(p);
      g_string_append(h, " % &middot; step ");
      p = g_strdup_printf("resources/%d/step_time_2x_ns", i);
      num(h, src, p, dbl(r, "step_time_2x_ns"), 1e6, 3);
      g_free(p);
      g_string_append(h, " ms");
      if (isnum(r, "exposed_comm_2x_ns")) {
        g_string_append(h, " &middot; exposed communication ");
        p = g_strdup_printf("resources/%d/exposed_comm_2x_ns", i);
        num(h, src, p, dbl(r, "exposed_comm_2x_ns"), 1e6, 3);
        g_free(p);
        g_string_append(h, " ms");
      }
      g_string_append(h, "</div>");
    } else {
      g_string_append(h, "<div class=\"val\">does not apply</div>");
    }
    g_string_append(h, "<div class=\"why\">");
    esc(h, str(r, "change"));
    const char *why = str(r, "why") ? str(r, "why") : str(r, "note");
    if (why) {
      g_string_append(h, str(r, "change") ? " &mdash; " : "");
      esc(h, why);
    }
    g_string_append(h, "</div></div>\n");
    i++;
  }
  g_string_append(h, "</div>\n");
}

/* The headline: which resource to double first and by how much the step
 * shrinks (the largest utility). */
static void utility_headline(GString *h, int src, const cJSON *d)
{
  const cJSON *res = get(d, "resources"), *r, *best = NULL;
  int i = 0, bi = -1;
  cJSON_ArrayForEach(r, res) {
    if (isnum(r, "utility_pct") && (best == NULL || dbl(r, "utility_pct") > dbl(best, "utility_pct"))) {
      best = r;
      bi = i;
    }
    i++;
  }
  if (best == NULL)
    return;
  g_string_append(h, "<p class=\"big\">Double <b>");
  esc(h, str(best, "resource"));
  g_string_append(h, "</b> first: the step shrinks by ");
  char *p = g_strdup_printf("resources/%d/utility_pct", bi);
  num(h, src, p, dbl(best, "utility_pct"), 1, 2);
  g_free(p);
  g_string_append(h, " %, from ");
  num(h, src, "baseline_step_ns", dbl(d, "baseline_step_ns"), 1e6, 3);
  g_string_append(h, " ms to ");
  p = g_strdup_printf("resources/%d/step_time_2x_ns", bi);
  num(h, src, p, dbl(best, "step_time_2x_ns"), 1e6, 3);
  g_free(p);
  g_string_append(h, " ms.</p>\n");
}

static void sensitivity(GString *h, int src, const cJSON *d)
{
  const cJSON *s = get(d, "sensitivity");
  double b = dbl(d, "baseline_step_ns");
  if (!isnum(s, "bw_x0.9_step_ns") || !(b > 0))
    return;
  g_string_append(h, "<h3>Sensitivity</h3>\n<p>Every bandwidth &minus;10 %: step ");
  num(h, src, "sensitivity/bw_x0.9_step_ns", dbl(s, "bw_x0.9_step_ns"), 1e6, 3);
  g_string_append_printf(h, " ms (%+.2f %%); +10 %%: step ", 100.0 * (dbl(s, "bw_x0.9_step_ns") - b) / b);
  num(h, src, "sensitivity/bw_x1.1_step_ns", dbl(s, "bw_x1.1_step_ns"), 1e6, 3);
  g_string_append_printf(h, " ms (%+.2f %%).</p>\n", 100.0 * (dbl(s, "bw_x1.1_step_ns") - b) / b);
}

static void section_utility(GString *h, int src, const report_input *in)
{
  const cJSON *d = in->doc, *wl = get(d, "workload"), *cl = get(d, "cluster"), *t;
  g_string_append(h, "<section><h2>What-if study: ");
  esc(h, in->path);
  g_string_append(h, "</h2>\n<table>\n");
  row_text(h, "workload", str(wl, "source"));
  row_text(h, "workload SHA-256", str(wl, "sha256"));
  row_text(h, "cluster", str(cl, "source"));
  g_string_append(h, "</table>\n<table><tr><th>tier</th><th>kind</th><th>size</th><th>GB/s</th><th>latency ns"
                     "</th></tr>\n");
  int i = 0;
  cJSON_ArrayForEach(t, get(cl, "tiers")) {
    g_string_append(h, "<tr><td>");
    esc(h, str(t, "name"));
    g_string_append(h, "</td><td>");
    esc(h, str(t, "kind"));
    g_string_append_printf(h, "</td><td>%.0f</td><td>", dbl(t, "size"));
    char *p = g_strdup_printf("cluster/tiers/%d/bandwidth_Bps", i++);
    num(h, src, p, dbl(t, "bandwidth_Bps"), 1e9, 1);
    g_free(p);
    g_string_append_printf(h, "</td><td>%.1f</td></tr>\n", dbl(t, "latency_ns"));
  }
  g_string_append(h, "</table>\n");
  utility_headline(h, src, d);
  step_line(h, src, d, "baseline_step_ns", "measured_step_ns");
  if (isnum(get(d, "baseline"), "exposed_comm_ns")) {
    g_string_append(h, "<p>Baseline: compute ");
    num(h, src, "baseline/compute_ns", dbl(get(d, "baseline"), "compute_ns"), 1e6, 3);
    g_string_append(h, " ms, exposed communication ");
    num(h, src, "baseline/exposed_comm_ns", dbl(get(d, "baseline"), "exposed_comm_ns"), 1e6, 3);
    g_string_append(h, " ms (mean over ranks): doubling a resource can only remove part of the exposed "
                       "communication, never compute.</p>\n");
  }
  utility_bars(h, src, get(d, "resources"));
  sensitivity(h, src, d);
  if (get(d, "baseline_critical_path"))
    crit_bar(h, src, get(d, "baseline_critical_path"), "baseline_critical_path");
  warnings(h, d, "measured_step_ns");
  g_string_append(h, "</section>\n");
}

/* A line chart of the sweep's step time per point, the base step dashed. */
static void sweep_chart(GString *h, const cJSON *lines)
{
  int n = cJSON_GetArraySize(lines);
  double lo = INFINITY, hi = -INFINITY, base = 0;
  const cJSON *o;
  cJSON_ArrayForEach(o, lines) {
    if (isnum(o, "step_time_ns")) {
      lo = fmin(lo, dbl(o, "step_time_ns"));
      hi = fmax(hi, dbl(o, "step_time_ns"));
    }
    base = dbl(o, "base_step_ns");
  }
  if (!(hi >= lo))
    return;
  if (base > 0) {
    lo = fmin(lo, base);
    hi = fmax(hi, base);
  }
  double span = hi > lo ? hi - lo : fmax(1, hi);
  g_string_append(h, "<svg class=\"chart\" viewBox=\"0 0 600 220\" width=\"100%\" height=\"220\" role=\"img\">"
                     "<polyline fill=\"none\" stroke=\"#4e79a7\" stroke-width=\"2\" points=\"");
  int i = 0;
  cJSON_ArrayForEach(o, lines) {
    if (isnum(o, "step_time_ns"))
      g_string_append_printf(h, "%.2f,%.2f ", 30 + 560.0 * (n > 1 ? (double)i / (n - 1) : 0.5),
                             200 - 180 * (dbl(o, "step_time_ns") - lo) / span);
    i++;
  }
  g_string_append(h, "\"/>");
  if (base > 0)
    g_string_append_printf(h, "<line x1=\"30\" x2=\"590\" y1=\"%.2f\" y2=\"%.2f\" stroke=\"#e15759\" "
                              "stroke-dasharray=\"6 4\"/><text x=\"32\" y=\"%.2f\" font-size=\"12\" "
                              "fill=\"#e15759\">base</text>", 200 - 180 * (base - lo) / span,
                           200 - 180 * (base - lo) / span, 196 - 180 * (base - lo) / span);
  g_string_append_printf(h, "<text x=\"30\" y=\"216\" font-size=\"12\">point 0 .. %d; step %.3f .. %.3f ms</text>"
                            "</svg>\n", n - 1, lo / 1e6, hi / 1e6);
}

static void section_sweep(GString *h, int src, const report_input *in)
{
  const cJSON *lines = in->doc, *o;
  g_string_append(h, "<section><h2>Sweep ");
  esc(h, str(cJSON_GetArrayItem(lines, 0), "sweep"));
  g_string_append(h, ": ");
  esc(h, in->path);
  g_string_append(h, "</h2>\n");
  sweep_chart(h, lines);
  g_string_append(h, "<table><tr><th>point</th><th>label</th><th>step ms</th><th>utility %</th></tr>\n");
  int i = 0;
  cJSON_ArrayForEach(o, lines) {
    g_string_append_printf(h, "<tr><td>%.0f</td><td>", dbl(o, "point"));
    esc(h, str(o, "label"));
    g_string_append(h, "</td><td>");
    if (isnum(o, "step_time_ns")) {
      char *p = g_strdup_printf("%d/step_time_ns", i);
      num(h, src, p, dbl(o, "step_time_ns"), 1e6, 3);
      g_free(p);
      g_string_append(h, "</td><td>");
      p = g_strdup_printf("%d/utility_pct", i);
      num(h, src, p, dbl(o, "utility_pct"), 1, 2);
      g_free(p);
    } else {
      esc(h, str(o, "error") ? str(o, "error") : "failed");
      g_string_append(h, "</td><td>");
    }
    g_string_append(h, "</td></tr>\n");
    i++;
  }
  g_string_append(h, "</table>\n</section>\n");
}

static const char STYLE[] =
  "body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;padding:0 .8em;max-width:52em;color:#222}"
  "h1{font-size:1.4em}h2{font-size:1.15em;border-top:2px solid #ccc;padding-top:.6em;word-break:break-all}"
  "h3{font-size:1em}table{border-collapse:collapse;display:block;overflow-x:auto;margin:.4em 0}"
  "th,td{text-align:left;padding:.15em .6em .15em 0;vertical-align:top}td{word-break:break-all}"
  ".big{font-size:1.1em}.why{color:#555;font-size:.92em}.warn li{color:#8a4b00}"
  ".legend{list-style:none;padding:0}.legend li{display:inline-block;margin-right:1em}"
  ".legend i{display:inline-block;width:.8em;height:.8em;margin-right:.3em}"
  ".bar{margin:.5em 0}.bar .lab{font-weight:600}svg.chart{display:block;max-width:100%}";

/* The only script: records each chart's rendered size and any script error
 * in the DOM, for the browser test; the page reads the same without it. */
static const char SCRIPT_TOP[] =
  "<script>window.onerror=function(m){document.body.setAttribute('data-error',String(m));};</script>\n";
static const char SCRIPT_END[] =
  "<script>(function(){var c=document.querySelectorAll('svg.chart');for(var i=0;i<c.length;i++){"
  "var r=c[i].getBoundingClientRect();c[i].setAttribute('data-w',Math.round(r.width));"
  "c[i].setAttribute('data-h',Math.round(r.height));}"
  "document.body.setAttribute('data-ready',String(c.length));})();</script>\n";

gboolean study_report_html(char **inputs, int n_inputs, const char *out_path, GError **error)
{
  report_input *in = g_new0(report_input, n_inputs);
  gboolean ok = TRUE;
  for (int i = 0; i < n_inputs && ok; i++)
    ok = load_input(&in[i], inputs[i], error);
  GString *h = g_string_new(NULL);
  if (ok) {
    g_string_append_printf(h, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta name=\"viewport\" "
                              "content=\"width=device-width,initial-scale=1\">\n<title>wisp report</title>\n"
                              "<style>%s</style></head>\n<body>\n%s<h1>wisp report</h1>\n", STYLE, SCRIPT_TOP);
    for (int i = 0; i < n_inputs; i++) {
      if (in[i].kind == REPORT_SIMULATE)
        section_simulate(h, i, &in[i]);
      else if (in[i].kind == REPORT_UTILITY)
        section_utility(h, i, &in[i]);
      else
        section_sweep(h, i, &in[i]);
    }
    g_string_append_printf(h, "<p class=\"why\">Written by wisp %s from %d input%s.</p>\n%s</body></html>\n",
                           PACKAGE_VERSION, n_inputs, n_inputs == 1 ? "" : "s", SCRIPT_END);
    ok = wisp_write_file_atomic(out_path, h->str, h->len, error);
  }
  g_string_free(h, TRUE);
  for (int i = 0; i < n_inputs; i++) {
    g_free(in[i].path);
    cJSON_Delete(in[i].doc);
  }
  g_free(in);
  return ok;
}
