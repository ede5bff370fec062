/* study_report_sim.c: the sections of `wisp report` for one simulated run
 * (wisp simulate --json, also with several --job) and for the metric
 * catalog (wisp metrics --json, and simulate's "metrics" object): what was
 * simulated, the network diagram, the step and its critical path, the
 * per-rank timeline, the jobs on one fabric, the measured-versus-simulated
 * catalog and the warnings.  Cost: O(size of the input's JSON). */
#include "config.h"
#include "studies/study_report_priv.h"

#include <math.h>
#include <string.h>

/* The runs of bins in one lane whose share, rounded to a quarter, is
 * `level` (1..4), appended to a path as rectangles.  O(bins). */
static void lane_runs(GString *d, const cJSON *pct, int level, double y, double hgt, double bw)
{
  int n = cJSON_GetArraySize(pct), b = 0;
  while (b < n) {
    int v = (cJSON_GetArrayItem(pct, b)->valueint + 12) / 25, e = b + 1;
    while (e < n && (cJSON_GetArrayItem(pct, e)->valueint + 12) / 25 == v)
      e++;
    if (v == level)
      g_string_append_printf(d, "M%.1f %.1fh%.1fv%.0fh%.1fz", 40 + bw * b, y, bw * (e - b), hgt, -bw * (e - b));
    b = e;
  }
}

/* A path relative to the page's directory for a link (no scheme, so the
 * page stays free of URLs): `target` as written when it is relative to
 * the page already cannot be known, so absolute paths are made relative. */
static char *relative_to(const char *target, const char *out_dir)
{
  if (!g_path_is_absolute(target) || out_dir == NULL)
    return g_strdup(target);
  char **a = g_strsplit(target, "/", -1), **b = g_strsplit(out_dir, "/", -1);
  int i = 0;
  while (a[i] && b[i] && strcmp(a[i], b[i]) == 0)
    i++;
  GString *r = g_string_new(NULL);
  for (int k = i; b[k]; k++)
    if (*b[k])
      g_string_append(r, "../");
  for (int k = i; a[k]; k++) {
    g_string_append(r, a[k]);
    if (a[k + 1])
      g_string_append_c(r, '/');
  }
  g_strfreev(a);
  g_strfreev(b);
  return g_string_free(r, FALSE);
}

/* The per-rank timeline: per rank a lane of compute (upper half) and
 * communication (lower half) over the step, shaded by the share of each
 * bin they cover; white is idle; the critical path's runs on that rank are
 * a black bar beneath. */
static void rank_timeline(GString *h, int src, const report_input *in)
{
  const cJSON *tl = report_get(in->doc, "rank_timeline"), *ranks = report_get(tl, "ranks");
  int n = cJSON_GetArraySize(ranks), bins = (int)report_dbl(tl, "bins");
  double bin_ns = report_dbl(tl, "bin_ns");
  if (n == 0 || bins <= 0 || !(bin_ns > 0))
    return;
  double bw = 550.0 / bins, span = bin_ns * bins, from = report_dbl(tl, "from_ns");
  g_string_append_printf(h, "<h3>Per-rank timeline of the step</h3>\n<svg class=\"chart\" viewBox=\"0 0 600 %d\" "
                            "width=\"100%%\" role=\"img\">", 18 * n + 24);
  const cJSON *segs = report_get(report_get(in->doc, "critical_path"), "segments"), *s;
  for (int i = 0; i < n; i++)
    g_string_append_printf(h, "<text x=\"36\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%.0f</text>"
                              "<rect x=\"40\" y=\"%.1f\" width=\"550\" height=\"14\" fill=\"#f4f4f4\"/>",
                           18.0 * i + 13, report_dbl(cJSON_GetArrayItem(ranks, i), "rank"), 18.0 * i + 2);
  /* One path per lane kind and shade (a quarter of the bin busy .. all of it). */
  static const char *const keys[] = {"compute_pct", "communication_pct"}, *const col[] = {"#4e79a7", "#e15759"};
  GString *d = g_string_new(NULL);
  for (int k = 0; k < 2; k++)
    for (int level = 1; level <= 4; level++) {
      g_string_truncate(d, 0);
      for (int i = 0; i < n; i++)
        lane_runs(d, report_get(cJSON_GetArrayItem(ranks, i), keys[k]), level, 18.0 * i + 2 + 7 * k, 7, bw);
      if (d->len)
        g_string_append_printf(h, "<path d=\"%s\" fill=\"%s\" fill-opacity=\"%.2f\"/>", d->str, col[k], level / 4.0);
    }
  g_string_free(d, TRUE);
  for (int i = 0; i < n; i++) {
    const cJSON *r = cJSON_GetArrayItem(ranks, i);
    double y = 18.0 * i + 2;
    cJSON_ArrayForEach(s, segs) { /* the path's segments on this rank, clipped to the window */
      double a = fmax(report_dbl(s, "start_ns"), from), b = fmin(report_dbl(s, "end_ns"), from + span);
      if (report_dbl(s, "rank") == report_dbl(r, "rank") && b >= a)
        g_string_append_printf(h, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"3\" fill=\"#000\"/>",
                               40 + 550 * (a - from) / span, y + 14, fmax(0.5, 550 * (b - a) / span));
    }
  }
  g_string_append_printf(h, "<text x=\"40\" y=\"%d\" font-size=\"11\">%.3f ms</text><text x=\"590\" y=\"%d\" "
                            "font-size=\"11\" text-anchor=\"end\">%.3f ms</text></svg>\n", 18 * n + 16,
                         from / 1e6, 18 * n + 16, (from + span) / 1e6);
  g_string_append(h, "<p class=\"why\">One row per rank (rank number on the left): <b style=\"color:#4e79a7\">blue"
                     "</b> upper half = GPU compute, <b style=\"color:#e15759\">red</b> lower half = communication "
                     "moving data (darker = more of the bin busy), light grey = idle, <b>black bar</b> = the critical "
                     "path. Bins of ");
  report_num(h, src, "rank_timeline/bin_ns", bin_ns, 1e6, 4);
  g_string_append(h, " ms; ");
  report_num(h, src, "rank_timeline/ranks_recorded", report_dbl(tl, "ranks_recorded"), 1, 0);
  g_string_append(h, " of ");
  report_num(h, src, "rank_timeline/ranks_total", report_dbl(tl, "ranks_total"), 1, 0);
  g_string_append(h, " ranks recorded");
  if (report_isnum(tl, "ranks_selected") && report_dbl(tl, "ranks_selected") > report_dbl(tl, "ranks_recorded")) {
    g_string_append(h, ", ");
    report_esc(h, report_str(tl, "selection"));
    g_string_append(h, " (");
    report_num(h, src, "rank_timeline/ranks_selected", report_dbl(tl, "ranks_selected"), 1, 0);
    g_string_append(h, " ranks; --timeline-ranks chooses others)");
  } else if (report_str(tl, "selection")) {
    g_string_append(h, " (");
    report_esc(h, report_str(tl, "selection"));
    g_string_append(h, ")");
  }
  g_string_append(h, ".");
  if (report_str(in->doc, "timeline_file")) {
    char *rel = relative_to(report_str(in->doc, "timeline_file"), in->out_dir);
    g_string_append(h, " Every slice: <a href=\"");
    report_esc(h, rel);
    g_string_append(h, "\">the Perfetto trace</a> (open it in the Perfetto UI).");
    g_free(rel);
  }
  g_string_append(h, "</p>\n");
}

/* The step broken down as CCL-Bench does (mean over ranks): compute,
 * communication hidden under compute, exposed communication and idle;
 * then the traffic per collective type. */
static void step_breakdown(GString *h, int src, const cJSON *d)
{
  static const char *const keys[] = {"compute_ns", "overlapped_comm_ns", "exposed_comm_ns", "idle_ns"};
  static const char *const names[] = {"compute", "overlapped communication", "exposed communication", "idle"};
  const cJSON *ranks = report_get(d, "ranks"), *r, *op;
  int n = cJSON_GetArraySize(ranks);
  if (n == 0)
    return;
  g_string_append(h, "<h3>Step breakdown (mean over ranks)</h3>\n<table><tr><th>part</th><th>ms</th></tr>\n");
  for (int k = 0; k < 4; k++) {
    double sum = 0;
    cJSON_ArrayForEach(r, ranks)
      sum += report_dbl(r, keys[k]);
    g_string_append_printf(h, "<tr><td>%s</td><td>", names[k]);
    report_numf(h, src, sum / n, 1e6, 3, "mean(ranks/*/%s)", keys[k]);
    g_string_append(h, "</td></tr>\n");
  }
  g_string_append(h, "</table>\n");
  if (cJSON_GetArraySize(report_get(d, "op_types")) == 0)
    return;
  g_string_append(h, "<h3>Traffic per collective type</h3>\n<table><tr><th>operation</th><th>count</th>"
                     "<th>MB (all ranks)</th></tr>\n");
  int i = 0;
  cJSON_ArrayForEach(op, report_get(d, "op_types")) {
    g_string_append(h, "<tr><td>");
    report_esc(h, report_str(op, "op"));
    g_string_append(h, "</td><td>");
    report_numf(h, src, report_dbl(op, "count"), 1, 0, "op_types/%d/count", i);
    g_string_append(h, "</td><td>");
    report_numf(h, src, report_dbl(op, "bytes"), 1e6, 1, "op_types/%d/bytes", i);
    g_string_append(h, "</td></tr>\n");
    i++;
  }
  g_string_append(h, "</table>\n");
}

/* Several jobs on one fabric: each job's step alone and together. */
static void jobs_table(GString *h, int src, const cJSON *jobs)
{
  const cJSON *j;
  int i = 0;
  g_string_append(h, "<h3>Jobs on one fabric</h3>\n<table><tr><th>job</th><th>ranks</th><th>step alone ms</th>"
                     "<th>step together ms</th><th>slowdown %</th></tr>\n");
  static const report_col cols[] = {{"n_ranks", 1, 0}, {"step_alone_ns", 1e6, 3}, {"step_together_ns", 1e6, 3},
                                    {"slowdown_pct", 1, 2}};
  cJSON_ArrayForEach(j, jobs) {
    char *base = g_strdup_printf("jobs/%d", i);
    g_string_append(h, "<tr><td>");
    report_esc(h, report_str(j, "name"));
    g_string_append(h, "</td>");
    report_cells(h, src, j, base, cols, 4);
    g_string_append(h, "</tr>\n");
    g_free(base);
    i++;
  }
  g_string_append(h, "</table>\n<p class=\"why\">Slowdown: how much longer each job's step is when the jobs share "
                     "the fabric than when it runs alone on the same ranks.</p>\n");
}

/* The unit and scale a metric key's suffix implies. */
static const char *metric_unit(const char *k, double *scale, int *dec)
{
  *scale = 1;
  *dec = 3;
  if (g_str_has_suffix(k, "_ns")) {
    *scale = 1e6;
    return "ms";
  }
  if (g_str_has_suffix(k, "_pct"))
    return "%";
  if (g_str_has_suffix(k, "_GBps"))
    return "GB/s";
  if (g_str_has_suffix(k, "_bytes") || g_str_has_suffix(k, "_per_step")) {
    *scale = 1e6;
    return "MB";
  }
  *dec = g_str_has_suffix(k, "steps") || g_str_has_suffix(k, "_rank") ? 0 : 4;
  return "";
}

/* One catalog cell: the number, or the reason it is missing. */
static void metric_cell(GString *h, int src, const cJSON *o, const char *side, const char *base, const char *k)
{
  g_string_append(h, "<td>");
  const cJSON *v = report_get(o, k);
  if (cJSON_IsNumber(v)) {
    double sc;
    int dec;
    metric_unit(k, &sc, &dec);
    report_numf(h, src, v->valuedouble, sc, dec, "%s%s%s/%s", base, *base ? "/" : "", side, k);
  } else if (cJSON_IsString(v)) {
    report_esc(h, v->valuestring);
  } else {
    /* The reason is under KEY_na_reason, KEY_source or, without the unit
     * suffix, STEM_source (mfu_pct: mfu_source). */
    const char *us = strrchr(k, '_');
    char *stem = us ? g_strndup(k, (gsize)(us - k)) : g_strdup(k);
    char *na = g_strdup_printf("%s_na_reason", k), *so = g_strdup_printf("%s_source", k);
    char *so2 = g_strdup_printf("%s_source", stem);
    const char *why = report_str(o, na) ? report_str(o, na) : report_str(o, so) ? report_str(o, so)
                      : report_str(o, so2);
    g_string_append(h, "<span class=\"why\">");
    report_esc(h, why ? why : o == NULL ? "(not measured)" : "n/a");
    g_free(stem);
    g_free(so2);
    g_string_append(h, "</span>");
    g_free(na);
    g_free(so);
  }
  g_string_append(h, "</td>");
}

void report_metrics_table(GString *h, int src, const cJSON *m, const char *base)
{
  const cJSON *meas = report_get(m, "measured"), *sim = report_get(m, "simulated"), *it;
  const cJSON *keys_from = cJSON_IsObject(sim) ? sim : meas;
  if (!cJSON_IsObject(keys_from))
    return;
  gboolean both = cJSON_IsObject(sim); /* wisp metrics measures only: no simulated column then */
  g_string_append_printf(h, "<h3>Metrics catalog: measured%s</h3>\n<table class=\"metrics\"><tr><th>metric</th>"
                            "<th>unit</th><th>measured</th>%s</tr>\n", both ? " and simulated" : "",
                         both ? "<th>simulated</th>" : "");
  cJSON_ArrayForEach(it, keys_from) {
    const char *k = it->string;
    if (cJSON_IsArray(it) || cJSON_IsObject(it) || g_str_has_suffix(k, "_na_reason") || g_str_has_suffix(k, "_source"))
      continue;
    double sc;
    int dec;
    g_string_append(h, "<tr><th>");
    report_esc(h, k);
    g_string_append(h, "</th><td>");
    report_esc(h, metric_unit(k, &sc, &dec));
    g_string_append(h, "</td>");
    metric_cell(h, src, cJSON_IsObject(meas) ? meas : NULL, "measured", base, k);
    if (both)
      metric_cell(h, src, sim, "simulated", base, k);
    g_string_append(h, "</tr>\n");
  }
  g_string_append_printf(h, "</table>\n<p class=\"why\">The CCL-Bench metric catalog (doc/metrics.md). Measured: "
                            "from the trace's own timestamps%s. A reason in place of a value says why a metric is "
                            "missing.</p>\n", both ? "; simulated: from wisp's replay" : "");
}

/* A measured run's window per rank (wisp metrics' measured.ranks): one
 * horizontal bar per rank (the first 32) of compute, memory copies,
 * exposed communication and idle, which add up to the rank's window, on a
 * common scale (the longest window); the legend gives each part's mean
 * over all ranks.  O(ranks). */
static void measured_rank_bars(GString *h, int src, const cJSON *ranks)
{
  static const char *const keys[] = {"compute_ns", "memcpy_ns", "exposed_comm_ns", "idle_ns"};
  static const char *const names[] = {"compute (hides the overlapped communication)", "memory copies",
                                      "exposed communication", "idle"};
  static const char *const col[] = {"#4e79a7", "#76b7b2", "#e15759", "#bab0ac"};
  int n = cJSON_GetArraySize(ranks), rows = MIN(n, 32);
  double longest = 0;
  const cJSON *r;
  cJSON_ArrayForEach(r, ranks)
    longest = fmax(longest, report_dbl(r, "window_ns"));
  if (rows == 0 || !(longest > 0))
    return;
  g_string_append_printf(h, "<h3>Each rank's measured window</h3>\n<svg class=\"chart\" viewBox=\"0 0 600 %d\" "
                            "width=\"100%%\" role=\"img\">", 18 * rows + 20);
  for (int i = 0; i < rows; i++) {
    r = cJSON_GetArrayItem(ranks, i);
    double x = 40;
    g_string_append_printf(h, "<text x=\"36\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%.0f</text>",
                           18.0 * i + 13, report_dbl(r, "rank"));
    for (int k = 0; k < 4; k++) {
      double w = 550 * fmax(0, report_dbl(r, keys[k])) / longest;
      if (w > 0)
        g_string_append_printf(h, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"14\" fill=\"%s\"><title>%s"
                                  "</title></rect>", x, 18.0 * i + 2, w, col[k], names[k]);
      x += w;
    }
  }
  g_string_append_printf(h, "<text x=\"40\" y=\"%d\" font-size=\"11\">0</text><text x=\"590\" y=\"%d\" "
                            "font-size=\"11\" text-anchor=\"end\">%.3f ms</text></svg>\n<ul class=\"legend\">",
                         18 * rows + 16, 18 * rows + 16, longest / 1e6);
  for (int k = 0; k < 4; k++) {
    double sum = 0;
    cJSON_ArrayForEach(r, ranks)
      sum += report_dbl(r, keys[k]);
    g_string_append_printf(h, "<li><i style=\"background:%s\"></i>%s, mean ", col[k], names[k]);
    report_numf(h, src, sum / n, 1e6, 3, "mean(measured/ranks/*/%s)", keys[k]);
    g_string_append(h, " ms</li>");
  }
  g_string_append_printf(h, "</ul>\n<p class=\"why\">One row per rank (%d of %d shown, rank number on the left), "
                            "all on the scale of the longest window.</p>\n", rows, n);
}

void report_section_metrics(GString *h, int src, const report_input *in)
{
  report_section_head(h, "Metrics", in);
  report_row_text(h, "trace", report_str(report_get(in->doc, "workload"), "source"));
  report_row_text(h, "card", report_str(in->doc, "card"));
  g_string_append(h, "</table>\n");
  measured_rank_bars(h, src, report_get(report_get(in->doc, "measured"), "ranks"));
  report_metrics_table(h, src, in->doc, "");
  g_string_append(h, "</section>\n");
}

void report_section_simulate(GString *h, int src, const report_input *in)
{
  const cJSON *d = in->doc, *wl = report_get(d, "workload"), *nw = report_get(d, "network");
  report_section_head(h, report_get(d, "jobs") ? "Several jobs" : "Simulation", in);
  report_row_text(h, "workload", report_str(wl, "source"));
  char *nr = g_strdup_printf("%.0f", report_dbl(wl, "n_ranks"));
  report_row_text(h, "ranks", nr);
  g_free(nr);
  report_row_text(h, "workload SHA-256", report_str(d, "workload_digest_sha256"));
  report_row_text(h, "network", report_str(nw, "source"));
  report_row_text(h, "tier", report_str(nw, "tier"));
  report_row_text(h, "library", report_str(d, "library"));
  report_row_text(h, "wisp version", report_str(d, "wisp_version"));
  g_string_append(h, "</table>\n");
  if (report_get(report_get(d, "topology"), "dims"))
    report_topology(h, src, report_get(report_get(d, "topology"), "dims"), "topology/dims");
  report_step_line(h, src, d, "step_time_ns", "measured_step_ns");
  if (report_get(d, "jobs"))
    jobs_table(h, src, report_get(d, "jobs"));
  step_breakdown(h, src, d);
  if (report_get(d, "critical_path"))
    report_crit_path(h, src, report_get(d, "critical_path"), "critical_path");
  rank_timeline(h, src, in);
  if (report_get(d, "metrics"))
    report_metrics_table(h, src, report_get(d, "metrics"), "metrics");
  report_warnings(h, d, "measured_step_ns");
  g_string_append(h, "</section>\n");
}

/* Two or more simulated runs side by side (e.g. two parallel
 * configurations of one job): step, the breakdown of the step (mean over
 * ranks) and the bytes per collective type. */
void report_compare_runs(GString *h, const report_input *in, int n)
{
  static const char *const keys[] = {"compute_ns", "overlapped_comm_ns", "exposed_comm_ns", "idle_ns"};
  static const char *const names[] = {"compute ms", "overlapped comm ms", "exposed comm ms", "idle ms"};
  int cnt = 0;
  for (int i = 0; i < n; i++)
    cnt += in[i].doc && in[i].kind == REPORT_SIMULATE;
  if (cnt < 2)
    return;
  g_string_append(h, "<section><h2>Runs side by side</h2>\n<table><tr><th></th>");
  for (int i = 0; i < n; i++)
    if (in[i].doc && in[i].kind == REPORT_SIMULATE) {
      char *b = g_path_get_basename(in[i].path);
      g_string_append(h, "<th>");
      report_esc(h, b);
      g_string_append(h, "</th>");
      g_free(b);
    }
  g_string_append(h, "</tr>\n<tr><th>step ms</th>");
  for (int i = 0; i < n; i++)
    if (in[i].doc && in[i].kind == REPORT_SIMULATE) {
      g_string_append(h, "<td>");
      report_num(h, i, "step_time_ns", report_dbl(in[i].doc, "step_time_ns"), 1e6, 3);
      g_string_append(h, "</td>");
    }
  for (int k = 0; k < 4; k++) {
    g_string_append_printf(h, "</tr>\n<tr><th>%s</th>", names[k]);
    for (int i = 0; i < n; i++)
      if (in[i].doc && in[i].kind == REPORT_SIMULATE) {
        const cJSON *ranks = report_get(in[i].doc, "ranks"), *r;
        double sum = 0;
        cJSON_ArrayForEach(r, ranks)
          sum += report_dbl(r, keys[k]);
        g_string_append(h, "<td>");
        report_numf(h, i, sum / MAX(1, cJSON_GetArraySize(ranks)), 1e6, 3, "mean(ranks/*/%s)", keys[k]);
        g_string_append(h, "</td>");
      }
  }
  g_string_append(h, "</tr>\n<tr><th>hidden comm %</th>");
  for (int i = 0; i < n; i++)
    if (in[i].doc && in[i].kind == REPORT_SIMULATE) {
      const cJSON *r;
      double ov = 0, ex = 0;
      cJSON_ArrayForEach(r, report_get(in[i].doc, "ranks")) {
        ov += report_dbl(r, "overlapped_comm_ns");
        ex += report_dbl(r, "exposed_comm_ns");
      }
      g_string_append(h, "<td>");
      if (ov + ex > 0)
        report_numf(h, i, 100 * ov / (ov + ex), 1, 1, "share(ranks/*/overlapped_comm_ns,ranks/*/exposed_comm_ns)");
      else
        g_string_append(h, "&ndash;");
      g_string_append(h, "</td>");
    }
  g_string_append(h, "</tr>\n</table>\n<p class=\"why\">Mean over ranks. Hidden communication: overlapped / "
                     "(overlapped + exposed). Each run's own section below has its traffic per collective type "
                     "and its critical path.</p>\n</section>\n");
}
