/* study_report.c: `wisp report`: one self-contained HTML page (inline CSS
 * and SVG, a few lines of JavaScript that only record the charts' sizes
 * for the browser test, no network access) from wisp's JSON outputs.
 *
 * This file reads the inputs, recognises their kind and writes the page
 * around the sections (studies/study_report_sim.c, study_report_study.c,
 * study_report_more.c; shared pieces in study_report_draw.c).  A file that
 * parses as one JSON object is
 *   - a simulate report (schema_version 1 with step_time_ns and ranks; with
 *     "jobs" when several jobs shared the fabric),
 *   - a utility study (kind "utility"),
 *   - a search (objective and points),
 *   - a calibration (fit.classes),
 *   - a metric catalog (measured, without step_time_ns),
 *   - a collective benchmark comparison (kind "collbench_compare"),
 *   - collective benchmark rows (tool "wisp collbench");
 * otherwise every non-empty line must be one JSON object of a sweep (keys
 * "point" and "sweep"), as wisp sweep writes them.  Several files of one
 * sweep (its shards) become one section, points in order.  Anything else
 * is refused with the file, the byte or line, and what to give instead.
 * Cost: O(total input size). */
#include "config.h"
#include "studies/study_report_priv.h"

#include <string.h>

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
      if (!cJSON_IsObject(o) || !report_isnum(o, "point") || !cJSON_IsString(report_get(o, "sweep"))) {
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

/* The kind of one parsed JSON object, FALSE when wisp report does not draw it. */
static gboolean object_kind(const cJSON *doc, report_kind *kind)
{
  const char *k = report_str(doc, "kind");
  if (g_strcmp0(k, "utility") == 0)
    *kind = REPORT_UTILITY;
  else if (g_strcmp0(k, "collbench_compare") == 0)
    *kind = REPORT_COLLBENCH;
  else if (g_strcmp0(report_str(doc, "tool"), "wisp collbench") == 0 && cJSON_IsArray(report_get(doc, "results")))
    *kind = REPORT_COLLBENCH_ROWS;
  else if (report_isnum(doc, "step_time_ns") && cJSON_IsArray(report_get(doc, "ranks")))
    *kind = report_get(doc, "jobs") ? REPORT_JOBS : REPORT_SIMULATE;
  else if (report_str(doc, "objective") && cJSON_IsArray(report_get(doc, "points")))
    *kind = REPORT_SEARCH;
  else if (cJSON_IsArray(report_get(report_get(doc, "fit"), "classes")))
    *kind = REPORT_CALIBRATE;
  else if (report_get(doc, "measured") && !report_get(doc, "step_time_ns") && k == NULL)
    *kind = REPORT_METRICS;
  else
    return FALSE;
  return TRUE;
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
  if (cJSON_IsObject(doc) && report_isnum(doc, "point") && cJSON_IsString(report_get(doc, "sweep"))) {
    cJSON_Delete(doc); /* a sweep of one point */
    ok = parse_lines(in, text, len, error);
  } else if (cJSON_IsObject(doc) && object_kind(doc, &in->kind)) {
    in->doc = doc;
  } else if (cJSON_IsObject(doc)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED, "%s: a JSON object of a kind wisp report does not "
                "draw ('kind': %s); give the JSON of wisp simulate, utility, sweep, search, calibrate, metrics or "
                "collbench", path, report_str(doc, "kind") ? report_str(doc, "kind") : "none");
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
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s: %s (error near byte %td); give a file written by wisp "
                "simulate --json, utility --json or sweep", path, wisp_json_too_deep(text, len, end,
                CJSON_NESTING_LIMIT) ? "arrays and objects nested deeper than the JSON reader's limit of "
                G_STRINGIFY(CJSON_NESTING_LIMIT) " levels, which no file of wisp's holds" : "not valid JSON",
                end ? end - text : (ptrdiff_t)0);
    ok = FALSE;
  }
  g_free(text);
  return ok;
}

static gint cmp_point(gconstpointer a, gconstpointer b)
{
  const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
  double px = report_dbl(x, "point"), py = report_dbl(y, "point");
  return (px > py) - (px < py);
}

/* Shards of one sweep (same name and input digest) join the first one's
 * input, points sorted; the joined inputs are left empty (doc NULL).
 * O(points log points). */
static void join_shards(report_input *in, int n)
{
  for (int i = 0; i < n; i++) {
    if (in[i].kind != REPORT_SWEEP || in[i].doc == NULL)
      continue;
    const cJSON *first = cJSON_GetArrayItem(in[i].doc, 0);
    gboolean joined = FALSE;
    for (int k = i + 1; k < n; k++) {
      const cJSON *f2 = in[k].kind == REPORT_SWEEP && in[k].doc ? cJSON_GetArrayItem(in[k].doc, 0) : NULL;
      if (f2 == NULL || g_strcmp0(report_str(first, "sweep"), report_str(f2, "sweep")) != 0 ||
          g_strcmp0(report_str(first, "input_sha256"), report_str(f2, "input_sha256")) != 0)
        continue;
      cJSON *o;
      while ((o = cJSON_DetachItemFromArray(in[k].doc, 0)) != NULL)
        cJSON_AddItemToArray(in[i].doc, o);
      cJSON_Delete(in[k].doc);
      in[k].doc = NULL;
      in[k].joined_to = i + 1;
      joined = TRUE;
    }
    if (!joined)
      continue;
    GPtrArray *v = g_ptr_array_new();
    cJSON *o;
    while ((o = cJSON_DetachItemFromArray(in[i].doc, 0)) != NULL)
      g_ptr_array_add(v, o);
    g_ptr_array_sort(v, cmp_point);
    for (guint k = 0; k < v->len; k++)
      cJSON_AddItemToArray(in[i].doc, v->pdata[k]);
    g_ptr_array_free(v, TRUE);
  }
}

static const char STYLE[] =
  "body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;padding:0 .8em;max-width:52em;color:#222}"
  "h1{font-size:1.4em}h2{font-size:1.15em;border-top:2px solid #ccc;padding-top:.6em;word-break:break-all}"
  "h3{font-size:1em}table{border-collapse:collapse;display:block;overflow-x:auto;margin:.4em 0}"
  "th,td{text-align:left;padding:.15em .6em .15em 0;vertical-align:top}td{word-break:break-all}"
  ".big{font-size:1.1em}.why{color:#555;font-size:.92em}.warn li{color:#8a4b00}"
  ".legend{list-style:none;padding:0}.legend li{display:inline-block;margin-right:1em}"
  ".legend i{display:inline-block;width:.8em;height:.8em;margin-right:.3em}"
  ".bar{margin:.5em 0}.bar .lab{font-weight:600}svg.chart{display:block;max-width:100%}"
  ".answer{background:#eef4fb;border-left:4px solid #4e79a7;padding:.2em .8em;margin:.6em 0}"
  "table.metrics td,table.metrics th{font-size:.9em}";

/* The only script: records each chart's rendered size and any script error
 * in the DOM, for the browser test; the page reads the same without it. */
static const char SCRIPT_TOP[] =
  "<script>window.onerror=function(m){document.body.setAttribute('data-error',String(m));};</script>\n";
static const char SCRIPT_END[] =
  "<script>(function(){var c=document.querySelectorAll('svg.chart');for(var i=0;i<c.length;i++){"
  "var r=c[i].getBoundingClientRect();c[i].setAttribute('data-w',Math.round(r.width));"
  "c[i].setAttribute('data-h',Math.round(r.height));}"
  "document.body.setAttribute('data-ready',String(c.length));})();</script>\n";

/* The inputs, in order: data-src is the index the numbers' data-src
 * name, data-path the file (absolute), data-joined the input a sweep shard
 * was joined into (its lines then follow that input's, sorted by point). */
static void inputs_list(GString *h, const report_input *in, int n)
{
  g_string_append(h, "<h2>Inputs</h2>\n<ol class=\"inputs\" start=\"0\">");
  for (int i = 0; i < n; i++) {
    /* A labelled input is a temporary file: its name would make the page
     * differ from run to run, and it is gone once the page is written. */
    char *abs = in[i].label == in[i].path ? g_canonicalize_filename(in[i].path, NULL) : g_strdup("");
    g_string_append_printf(h, "<li data-src=\"%d\" data-joined=\"%d\" data-path=\"", i, in[i].joined_to - 1);
    report_esc(h, abs);
    g_string_append(h, "\">");
    report_esc(h, in[i].label);
    g_string_append(h, in[i].joined_to ? " (a shard, joined with the sweep above)</li>" : "</li>");
    g_free(abs);
  }
  g_string_append(h, "</ol>\n");
}

static void section(GString *h, int src, const report_input *in)
{
  switch (in->kind) {
  case REPORT_SIMULATE:
  case REPORT_JOBS: report_section_simulate(h, src, in); break;
  case REPORT_UTILITY: report_section_utility(h, src, in); break;
  case REPORT_SWEEP: report_section_sweep(h, src, in); break;
  case REPORT_SEARCH: report_section_search(h, src, in); break;
  case REPORT_CALIBRATE: report_section_calibrate(h, src, in); break;
  case REPORT_METRICS: report_section_metrics(h, src, in); break;
  case REPORT_COLLBENCH: report_section_collbench(h, src, in); break;
  case REPORT_COLLBENCH_ROWS: report_section_collbench_rows(h, src, in); break;
  }
}

/* The page for inputs; labels[i] (labels may be NULL, an entry NULL)
 * names input i on the page instead of its path. */
static gboolean report_html(char **inputs, const char *const *labels, int n_inputs, const char *out_path,
                            GError **error)
{
  report_input *in = g_new0(report_input, n_inputs);
  gboolean ok = TRUE;
  char *abs = g_canonicalize_filename(out_path, NULL), *dir = g_path_get_dirname(abs);
  for (int i = 0; i < n_inputs && ok; i++) {
    ok = load_input(&in[i], inputs[i], error);
    in[i].out_dir = dir;
    in[i].label = labels && labels[i] ? labels[i] : in[i].path;
  }
  GString *h = g_string_new(NULL);
  if (ok) {
    join_shards(in, n_inputs);
    g_string_append_printf(h, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta name=\"viewport\" "
                              "content=\"width=device-width,initial-scale=1\">\n<title>wisp report</title>\n"
                              "<style>%s</style></head>\n<body>\n%s<h1>wisp report</h1>\n", STYLE, SCRIPT_TOP);
    report_compare_utilities(h, in, n_inputs);
    report_compare_runs(h, in, n_inputs);
    /* The studies' answers first: what a reader opens the page for. */
    for (int pass = 0; pass < 2; pass++)
      for (int i = 0; i < n_inputs; i++)
        if (in[i].doc && (in[i].kind == REPORT_UTILITY) == (pass == 0))
          section(h, i, &in[i]);
    inputs_list(h, in, n_inputs);
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
  g_free(abs);
  g_free(dir);
  return ok;
}

gboolean study_report_html(char **inputs, int n_inputs, const char *out_path, GError **error)
{
  return report_html(inputs, NULL, n_inputs, out_path, error);
}

gboolean study_report_html_one(const char *json_path, const char *label, const char *out_path, GError **error)
{
  char *inputs[] = {(char *)json_path};
  const char *labels[] = {label};
  return report_html(inputs, labels, 1, out_path, error);
}
