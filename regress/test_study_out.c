/* test_study_out.c: outputs people read: the Chrome/Perfetto timeline,
 * the SVG charts, per-link bytes and utilization in the report, and
 * `wisp diff`'s comparison of two reports.
 *
 * Workload (4 ranks on a [2, 2] two-tier cluster, groups tp0 = {0, 1} and
 * tp1 = {2, 3}): each rank computes 1 ms, all-reduces 8 MiB in its tp
 * group, computes 1 ms again, then all-reduces 8 MiB over the world.
 * Per rank: 2 compute slices and 2 collective slices, so a full timeline has
 * 4 x 4 = 16 slices.
 */
#include "config.h"
#include "studies/study.h"
#include "replay/sim_report.h"

#include <cjson/cJSON.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

static const char *cluster_yaml =
  "schema_version: 1\nlibrary: {name: ideal}\n"
  "dims:\n"
  "  - {name: scale_up, kind: switch, size: 2, bandwidth: 300GB/s, latency: 500ns}\n"
  "  - {name: scale_out, kind: switch, size: 2, bandwidth: 25GB/s, latency: 1us}\n";

static et_workload *tp_workload(void)
{
  et_workload *w = et_workload_new(4, "synthetic-tp");
  int g0[] = {0, 1}, g1[] = {2, 3};
  et_workload_add_group(w, "tp0", "tp", g0, 2);
  et_workload_add_group(w, "tp1", "tp", g1, 2);
  for (int r = 0; r < 4; r++) {
    et_builder *b = et_builder_new("synthetic");
    et_builder_add_node(b, 1, ET_NODE_COMP, "layer0", SIM_PS_PER_US * 1000, 0);
    uint32_t n2 = et_builder_add_node(b, 2, ET_NODE_COMM_COLL, "tp_all_reduce", 0, 0);
    et_comm c = {.bytes = 8u << 20, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = -1, .dst = -1, .tag = -1,
                 .root = -1, .coll = ET_COLL_ALL_REDUCE};
    et_builder_set_comm(b, n2, &c, r < 2 ? "tp0" : "tp1", NULL, 0);
    et_builder_add_dep(b, n2, 1, TRUE, FALSE);
    uint32_t n3 = et_builder_add_node(b, 3, ET_NODE_COMP, "layer1", SIM_PS_PER_US * 1000, 0);
    et_builder_add_dep(b, n3, 2, TRUE, FALSE);
    uint32_t n4 = et_builder_add_node(b, 4, ET_NODE_COMM_COLL, "dp_all_reduce", 0, 0);
    et_builder_set_comm(b, n4, &c, NULL, NULL, 0);
    et_builder_add_dep(b, n4, 3, TRUE, FALSE);
    GError *error = NULL;
    w->ranks[r] = et_builder_finish(b, 0, &error);
    g_assert_no_error(error);
  }
  GError *error = NULL;
  g_assert_true(et_workload_resolve_groups(w, &error));
  g_assert_no_error(error);
  return w;
}

static topo *load(const char *yaml)
{
  GError *error = NULL;
  topo *t = topo_load_string(yaml, "test.yaml", &error);
  g_assert_no_error(error);
  return t;
}

static char *tmp_path(const char *dir, const char *name)
{
  return g_build_filename(dir, name, NULL);
}

/* Runs w on t with a timeline; returns the parsed JSON (strict parser: the
 * whole file must be one JSON value, nothing after it). */
static cJSON *timeline_run(const et_workload *w, const topo *t, const char *path, const char *ranks,
                           sim_time_ps from, sim_time_ps to, sim_time_ps *step, uint64_t *slices)
{
  GError *error = NULL;
  study_timeline *tl = study_timeline_open(path, w, ranks, from, to, &error);
  g_assert_no_error(error);
  sim_replay_options opt = {.observer = study_timeline_observer(tl), .quiet = TRUE, .checked = TRUE};
  sim_result *r = sim_replay_run(w, t, &opt, &error);
  g_assert_no_error(error);
  *slices = study_timeline_events(tl);
  g_assert_true(study_timeline_finish(tl, r, &error));
  g_assert_no_error(error);
  *step = r->step_time;
  sim_result_free(r);
  char *text = NULL;
  gsize len;
  g_assert_true(g_file_get_contents(path, &text, &len, NULL));
  const char *end = NULL;
  cJSON *doc = cJSON_ParseWithOpts(text, &end, TRUE);
  if (doc == NULL)
    g_error("timeline is not strict JSON near byte %td", end ? end - text : -1);
  g_free(text);
  return doc;
}

typedef struct {
  double ts, end;
  int pid, tid;
} slice;

static int cmp_slice(const void *a, const void *b)
{
  const slice *x = a, *y = b;
  if (x->pid != y->pid)
    return x->pid - y->pid;
  if (x->tid != y->tid)
    return x->tid - y->tid;
  return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* Checks: every X slice lies in [0, step]; slices on one (pid, tid) do not
 * overlap partially; returns the number of X slices and the set of pids. */
static int check_slices(const cJSON *doc, sim_time_ps step, gboolean *pids, int n_pids)
{
  const cJSON *ev = cJSON_GetObjectItemCaseSensitive(doc, "traceEvents");
  g_assert_true(cJSON_IsArray(ev));
  int n = cJSON_GetArraySize(ev), k = 0;
  slice *s = g_new(slice, n ? n : 1);
  double step_us = (double)step / 1e6;
  const cJSON *e;
  cJSON_ArrayForEach(e, ev) {
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
    g_assert_true(cJSON_IsString(ph));
    g_assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(e, "pid")));
    g_assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(e, "tid")));
    if (strcmp(ph->valuestring, "X") != 0) {
      g_assert_cmpstr(ph->valuestring, ==, "M");
      continue;
    }
    double ts = cJSON_GetObjectItemCaseSensitive(e, "ts")->valuedouble;
    double dur = cJSON_GetObjectItemCaseSensitive(e, "dur")->valuedouble;
    g_assert_cmpfloat(ts, >=, 0.0);
    g_assert_cmpfloat(dur, >=, 0.0);
    g_assert_cmpfloat(ts + dur, <=, step_us + 1e-6);
    s[k].ts = ts;
    s[k].end = ts + dur;
    s[k].pid = cJSON_GetObjectItemCaseSensitive(e, "pid")->valueint;
    s[k].tid = cJSON_GetObjectItemCaseSensitive(e, "tid")->valueint;
    g_assert_cmpint(s[k].pid, >=, 0);
    g_assert_cmpint(s[k].pid, <, n_pids);
    pids[s[k].pid] = TRUE;
    if (strcmp(cJSON_GetObjectItemCaseSensitive(e, "cat")->valuestring, "collective") == 0) {
      const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
      g_assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(args, "bytes")));
      g_assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(args, "group")));
      g_assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(args, "algorithm")));
      g_assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(args, "busbw_GBps")));
    }
    k++;
  }
  qsort(s, k, sizeof *s, cmp_slice);
  for (int i = 1; i < k; i++)
    if (s[i].pid == s[i - 1].pid && s[i].tid == s[i - 1].tid)
      g_assert_cmpfloat(s[i].ts, >=, s[i - 1].end - 1e-9);
  g_free(s);
  return k;
}

static void test_timeline(void)
{
  et_workload *w = tp_workload();
  topo *t = load(cluster_yaml);
  char *dir = g_dir_make_tmp("wisp-tl-XXXXXX", NULL), *p = tmp_path(dir, "tl.json");
  sim_time_ps step;
  uint64_t slices;
  gboolean pids[4] = {FALSE};

  cJSON *doc = timeline_run(w, t, p, NULL, 0, -1, &step, &slices);
  g_assert_cmpint(check_slices(doc, step, pids, 4), ==, 16); /* 4 ranks x (2 compute + 2 collectives) */
  g_assert_cmpuint(slices, ==, 16);
  for (int r = 0; r < 4; r++)
    g_assert_true(pids[r]);
  /* The first compute slice of rank 0 starts at 0 and lasts 1 ms = 1000 us. */
  const cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "traceEvents"), 0);
  g_assert_cmpfloat(cJSON_GetObjectItemCaseSensitive(first, "dur")->valuedouble, ==, 1000.0);
  cJSON_Delete(doc);

  /* Ranks 1-2 only: 2 x 4 = 8 slices. */
  memset(pids, 0, sizeof pids);
  doc = timeline_run(w, t, p, "1-2", 0, -1, &step, &slices);
  g_assert_cmpint(check_slices(doc, step, pids, 4), ==, 8);
  g_assert_false(pids[0]);
  g_assert_true(pids[1] && pids[2]);
  g_assert_false(pids[3]);
  cJSON_Delete(doc);

  /* Window [0, 0.5 ms): only the first compute slice of each rank (it runs
   * 0..1 ms; everything else starts at >= 1 ms): 4 slices. */
  memset(pids, 0, sizeof pids);
  doc = timeline_run(w, t, p, NULL, 0, 500 * SIM_PS_PER_US, &step, &slices);
  g_assert_cmpint(check_slices(doc, step, pids, 4), ==, 4);
  cJSON_Delete(doc);

  /* Bad rank lists are errors and leave no file. */
  g_unlink(p);
  GError *error = NULL;
  static const char *const bad[] = {"4", "a-b", "2-1", "-1", "1-"};
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_assert_null(study_timeline_open(p, w, bad[i], 0, -1, &error));
    g_assert_error(error, WISP_ERROR, WISP_ERROR_INVALID);
    g_clear_error(&error);
  }
  g_assert_false(g_file_test(p, G_FILE_TEST_EXISTS));
  g_rmdir(dir);
  g_free(p);
  g_free(dir);
  topo_free(t);
  et_workload_free(w);
}

/* ---- SVG well-formedness with GLib's XML subset parser ---- */

typedef struct {
  int depth, max_depth, rects, texts;
  gboolean root_svg;
} svg_stats;

static void svg_start(GMarkupParseContext *c, const char *el, const char **names, const char **values, gpointer data,
                      GError **error)
{
  (void)c, (void)names, (void)values, (void)error;
  svg_stats *s = data;
  if (s->depth == 0)
    s->root_svg = strcmp(el, "svg") == 0;
  s->depth++;
  s->max_depth = MAX(s->max_depth, s->depth);
  s->rects += strcmp(el, "rect") == 0;
  s->texts += strcmp(el, "text") == 0;
}

static void svg_end(GMarkupParseContext *c, const char *el, gpointer data, GError **error)
{
  (void)c, (void)el, (void)error;
  ((svg_stats *)data)->depth--;
}

static svg_stats parse_svg(const char *path)
{
  char *text = NULL;
  gsize len;
  g_assert_true(g_file_get_contents(path, &text, &len, NULL));
  /* GMarkup does not take the XML declaration: skip it. */
  const char *body = text;
  if (g_str_has_prefix(body, "<?xml")) {
    body = strstr(body, "?>");
    g_assert_nonnull(body);
    body += 2;
  }
  GMarkupParser p = {svg_start, svg_end, NULL, NULL, NULL};
  svg_stats st = {0};
  GMarkupParseContext *c = g_markup_parse_context_new(&p, 0, &st, NULL);
  GError *error = NULL;
  if (!g_markup_parse_context_parse(c, body, -1, &error) || !g_markup_parse_context_end_parse(c, &error))
    g_error("%s is not well-formed XML: %s", path, error->message);
  g_markup_parse_context_free(c);
  g_free(text);
  g_assert_cmpint(st.depth, ==, 0);
  g_assert_true(st.root_svg);
  return st;
}

static void test_svg(void)
{
  char *dir = g_dir_make_tmp("wisp-svg-XXXXXX", NULL);
  char *p1 = tmp_path(dir, "bar.svg"), *p2 = tmp_path(dir, "line.svg"), *p3 = tmp_path(dir, "ranks.svg");
  GError *error = NULL;
  /* Labels with XML specials must be escaped. */
  const char *labels[] = {"scale_out_bw", "a<b & \"c\"", "latency"};
  double vals[] = {12.5, -3.0, 0.0};
  g_assert_true(study_svg_bar_chart(p1, "Utility <of> doubling", "utility (%)", labels, vals, 3, NULL, &error));
  g_assert_no_error(error);
  svg_stats s = parse_svg(p1);
  g_assert_cmpint(s.rects, ==, 1 + 3); /* background + one bar per value */

  double x[] = {0, 1, 2}, y1[] = {10, 8, 7}, y2[] = {12, 9, NAN};
  study_svg_series ser[] = {{"algo=ring", x, y1, 3}, {"algo=direct & co", x, y2, 2}};
  const char *ticks[] = {"25GB/s", "50GB/s", "100GB/s"};
  g_assert_true(study_svg_line_chart(p2, "Sweep", "scale_out_bw", "step time (ms)", ser, 2, ticks, &error));
  g_assert_no_error(error);
  parse_svg(p2);

  et_workload *w = tp_workload();
  topo *t = load(cluster_yaml);
  sim_replay_options opt = {.quiet = TRUE};
  sim_result *r = sim_replay_run(w, t, &opt, &error);
  g_assert_no_error(error);
  g_assert_true(study_svg_rank_breakdown(p3, "Per-rank breakdown", r, &error));
  g_assert_no_error(error);
  s = parse_svg(p3);
  g_assert_cmpint(s.rects, ==, 1 + 6 * 4 + 6); /* background, 6 segments x 4 ranks, 6 legend swatches */
  sim_result_free(r);
  topo_free(t);
  et_workload_free(w);
  g_unlink(p1), g_unlink(p2), g_unlink(p3);
  g_rmdir(dir);
  g_free(p1), g_free(p2), g_free(p3), g_free(dir);
}

/* Per-link bytes and utilization: 2 ranks on one fully connected pair
 * (100 GB/s, 1 us), rank 0 sends S = 1e9 bytes to rank 1 at time 0:
 * step = 1 us + 10 ms; link 0->1 carries S bytes, utilization
 * S / (100e9 B/s x 10.001 ms) = 10 / 10.001; the reverse link carries 0
 * and is not listed. */
static void test_report_links(void)
{
  et_workload *w = et_workload_new(2, "pair");
  for (int r = 0; r < 2; r++) {
    et_builder *b = et_builder_new("pair");
    uint32_t n = et_builder_add_node(b, 1, r == 0 ? ET_NODE_COMM_SEND : ET_NODE_COMM_RECV, "p2p", 0, 0);
    et_comm c = {.bytes = 1000000000, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = 0, .dst = 1, .tag = 0,
                 .root = -1, .coll = ET_COLL_NONE};
    et_builder_set_comm(b, n, &c, NULL, NULL, 0);
    GError *error = NULL;
    w->ranks[r] = et_builder_finish(b, 0, &error);
    g_assert_no_error(error);
  }
  GError *error = NULL;
  g_assert_true(et_workload_resolve_groups(w, &error));
  topo *t = load("schema_version: 1\nlibrary: {name: ideal}\ndims:\n  - {name: fc, kind: fully_connected, size: 2, bandwidth: 100GB/s, "
                 "latency: 1us}\n");
  sim_replay_options opt = {.quiet = TRUE};
  sim_result *r = sim_replay_run(w, t, &opt, &error);
  g_assert_no_error(error);
  g_assert_cmpint(r->step_time, ==, SIM_PS_PER_US + 10 * SIM_PS_PER_US * 1000);
  char *dir = g_dir_make_tmp("wisp-rep-XXXXXX", NULL), *p = tmp_path(dir, "r.json");
  g_assert_true(sim_report_write_json(r, w, t, p, &error));
  char *text = NULL;
  g_assert_true(g_file_get_contents(p, &text, NULL, NULL));
  cJSON *doc = cJSON_ParseWithOpts(text, NULL, TRUE);
  g_assert_nonnull(doc);
  const cJSON *links = cJSON_GetObjectItemCaseSensitive(doc, "links");
  g_assert_cmpint(cJSON_GetArraySize(links), ==, 1);
  const cJSON *l0 = cJSON_GetArrayItem(links, 0);
  g_assert_cmpfloat(cJSON_GetObjectItemCaseSensitive(l0, "bytes")->valuedouble, ==, 1e9);
  g_assert_cmpfloat_with_epsilon(cJSON_GetObjectItemCaseSensitive(l0, "utilization")->valuedouble, 10.0 / 10.001,
                                 1e-6);
  g_assert_cmpstr(cJSON_GetObjectItemCaseSensitive(l0, "tier")->valuestring, ==, "fc");
  g_assert_cmpint(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "busiest_links")), ==, 1);
  /* Existing keys are still there. */
  g_assert_nonnull(cJSON_GetObjectItemCaseSensitive(doc, "op_types"));
  g_assert_nonnull(cJSON_GetObjectItemCaseSensitive(doc, "groups"));
  cJSON_Delete(doc);
  g_free(text);
  g_unlink(p);
  g_rmdir(dir);
  g_free(p);
  g_free(dir);
  sim_result_free(r);
  topo_free(t);
  et_workload_free(w);
}

/* wisp diff: A = the tp workload on the cluster, B = the same with the
 * scale-out bandwidth doubled.  The step delta is B - A of the two runs'
 * step times; the per-group records and bytes do not change (same
 * workload), their summed times do. */
static void test_diff(void)
{
  et_workload *w = tp_workload();
  char *dir = g_dir_make_tmp("wisp-diff-XXXXXX", NULL);
  char *pa = tmp_path(dir, "a.json"), *pb = tmp_path(dir, "b.json"), *pd = tmp_path(dir, "d.json");
  GError *error = NULL;
  topo *ta = load(cluster_yaml);
  topo_variant *v = topo_variant_new(ta);
  g_assert_true(topo_variant_scale_bw(v, 1, 2.0, &error));
  topo *tb = topo_variant_build(v, &error);
  g_assert_no_error(error);
  sim_replay_options opt = {.quiet = TRUE};
  sim_result *ra = sim_replay_run(w, ta, &opt, &error), *rb = sim_replay_run(w, tb, &opt, &error);
  g_assert_no_error(error);
  g_assert_cmpint(rb->step_time, <, ra->step_time); /* the world all-reduce crosses scale-out */
  g_assert_true(sim_report_write_json(ra, w, ta, pa, &error));
  g_assert_true(sim_report_write_json(rb, w, tb, pb, &error));
  FILE *devnull = fopen("/dev/null", "w");
  g_assert_true(study_diff_reports(pa, pb, devnull, -1, pd, &error));
  g_assert_no_error(error);
  char *text = NULL;
  g_assert_true(g_file_get_contents(pd, &text, NULL, NULL));
  cJSON *doc = cJSON_ParseWithOpts(text, NULL, TRUE);
  g_assert_nonnull(doc);
  const cJSON *st = cJSON_GetObjectItemCaseSensitive(doc, "step_time_ns");
  g_assert_cmpfloat_with_epsilon(cJSON_GetObjectItemCaseSensitive(st, "delta")->valuedouble,
                                 (double)(rb->step_time - ra->step_time) / 1e3, 1e-3);
  g_assert_cmpint(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "ranks")), ==, 4);
  const cJSON *groups = cJSON_GetObjectItemCaseSensitive(doc, "groups"), *g;
  g_assert_cmpint(cJSON_GetArraySize(groups), ==, 3); /* tp0, tp1, world */
  cJSON_ArrayForEach(g, groups) {
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(g, "records");
    g_assert_cmpfloat(cJSON_GetObjectItemCaseSensitive(rec, "delta")->valuedouble, ==, 0.0);
  }
  const cJSON *ops = cJSON_GetObjectItemCaseSensitive(doc, "op_types");
  g_assert_cmpint(cJSON_GetArraySize(ops), ==, 1);
  g_assert_cmpstr(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ops, 0), "op")->valuestring, ==, "all_reduce");
  /* 4 ranks x 2 all-reduces = 8 records on each side. */
  g_assert_cmpfloat(cJSON_GetObjectItemCaseSensitive(
                        cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ops, 0), "records"), "a")->valuedouble,
                    ==, 8.0);
  cJSON_Delete(doc);
  g_free(text);
  /* Malformed inputs: not JSON, another schema, missing keys. */
  static const char *const bad[] = {"{\"schema_version\": 1, \"step_time_ns\": ", "{\"schema_version\": 7}",
                                    "{\"schema_version\": 1, \"step_time_ns\": 5, \"ranks\": []}",
                                    "{\"schema_version\": 1} trailing"};
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_assert_true(g_file_set_contents(pb, bad[i], -1, NULL));
    g_assert_false(study_diff_reports(pa, pb, devnull, -1, NULL, &error));
    g_assert_nonnull(error);
    g_assert_nonnull(strstr(error->message, "b.json"));
    g_clear_error(&error);
  }
  fclose(devnull);
  sim_result_free(ra);
  sim_result_free(rb);
  topo_variant_free(v);
  topo_free(ta);
  topo_free(tb);
  et_workload_free(w);
  g_unlink(pa), g_unlink(pb), g_unlink(pd);
  g_rmdir(dir);
  g_free(pa), g_free(pb), g_free(pd), g_free(dir);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/study-out/timeline", test_timeline);
  g_test_add_func("/study-out/svg", test_svg);
  g_test_add_func("/study-out/report-links", test_report_links);
  g_test_add_func("/study-out/diff", test_diff);
  return g_test_run();
}
