/* test_gt_et.c: wisp's what-if answers through the PyTorch execution-trace
 * path (frontends/pyt_et*.c) against the ground truth.
 *
 * The ground-truth model (regress/gt_model.c, doc/ground-truth.md) writes,
 * with et_trace set, each rank's Kineto trace (now with the
 * record_param_comms CPU op, carrying its "Record function id", around every
 * NCCL launch) and beside it the rank's PyTorch execution trace of the
 * measured step (regress/gt_et.c), on a network of bus bandwidth B and one
 * of 2B, with the true step times T_B and T_2B.  For each scenario this test
 * runs the `wisp` binary on the directories holding both halves, as a user
 * would:
 *
 *   wisp calibrate B / 2B --cluster dgx-h100 --library ideal -o calB.yaml / cal2B.yaml
 *     (the twin's collectives are textbook rings: the textbook schedules, not the preset's NCCL)
 *   wisp inspect B                                  (the link report)
 *   wisp utility B --cluster calB.yaml --resource scale_up_bw --json u.json
 *   wisp utility 2B --cluster cal2B.yaml --resource scale_up_bw --json v.json
 *   wisp simulate 2B --network calB.yaml --json s.json   (2B -> B)
 *
 * and requires:
 *   - every collective of the execution traces joined by rf_id (Chakra's
 *     chain: rf_id -> Kineto CPU op -> launch correlation -> kernel): the
 *     expected count is the number of record_param_comms nodes in the
 *     execution-trace files, counted here from the raw text; no join
 *     failure of any kind, no collective only in one half, every size equal,
 *     no stated dependency contradicted by the timeline;
 *   - doubling: wisp's utility of 2x bandwidth on B within 1 percentage
 *     point of the true (T_B - T_2B) / T_B;
 *   - halving (the other direction): from the 2B directory, wisp's T_B'
 *     (2B replayed on calB) and its baseline T_2B' give (T_B' - T_2B') / T_B'
 *     within 1 percentage point of the same truth.
 * A disagreement is then made on purpose: one record_param_comms rf_id
 * in rank 0's execution trace is changed to one no Kineto CPU op carries,
 * and the report must count exactly one "no Kineto CPU op with the rf_id"
 * and one collective only in each half.
 *
 * The scenarios: tp, dp, launch, straggler, pp on one node, and the
 * two-tier tpdp job on test_ground_truth's 2 x 4 cluster (its twin's two
 * tiers: on the one-node cluster its 1.1 pp / 2.45 pp error came from one
 * tier standing for two, check_tpdp_tiers), where the scale-out tier's
 * utility is checked too.
 *
 * /gt_et/serve_latency: the serve twin (vLLM markers, no execution
 * trace) through `wisp utility --latency` against CCL-Bench's TTFT/TPOT
 * rule on the raw files and the true TTFT/TPOT utilities (its comment).
 *
 * Skips visibly when WISP_BIN is not set (run through make check).
 */
#include "config.h"

#include <cjson/cJSON.h>

#include "regress/gt_model.h"
#include "regress/test_util.h"

#include <math.h>
#include <string.h>

static double ns_of(const cJSON *obj, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  g_assert_nonnull(v);
  if (cJSON_IsString(v))
    return g_ascii_strtod(v->valuestring, NULL);
  g_assert_true(cJSON_IsNumber(v));
  return v->valuedouble;
}

/* The utility row of a resource and the baseline of a `utility --json`. */
static void utility_row(const char *path, const char *resource, double *base, double *util)
{
  cJSON *u = load_json(path);
  *base = ns_of(u, "baseline_step_ns");
  *util = NAN;
  const cJSON *row;
  cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(u, "resources"))
    if (strcmp(cJSON_GetObjectItemCaseSensitive(row, "resource")->valuestring, resource) == 0)
      *util = cJSON_GetObjectItemCaseSensitive(row, "utility_pct")->valuedouble;
  g_assert_false(isnan(*util));
  cJSON_Delete(u);
}

static void utility_of(const char *path, double *base, double *util)
{
  utility_row(path, "scale_up_bw", base, util);
}

/* The two-tier cluster of the tpdp twin (test_ground_truth's check_tiers):
 * TP4 inside a node on the scale-up tier, DP across two nodes on the
 * scale-out tier; calibration fits each tier. */
static const char cluster_2x4[] = "schema_version: 1\n"
                                  "name: gt-2x4\n"
                                  "model: analytical\n"
                                  "dims:\n"
                                  "  - {name: nvlink, kind: switch, size: 4, bandwidth: 450GB/s, latency: 500ns}\n"
                                  "  - {name: ib, kind: switch, size: 2, bandwidth: 400Gbps, latency: 1us}\n";

/* tpdp only: the scale-out tier's utility on the two-tier cluster against
 * the truth (T_B - T(bw_scale_out 2)) / T_B, within 1 pp; and why the
 * one-node dgx-h100 cluster cannot answer for this job (the cause of the
 * 1.1 pp / 2.45 pp f31c saw there): its one tier must carry both the TP
 * all-reduces (100 GB/s, 2 us a step in the twin) and the DP buckets
 * (25 GB/s, 5 us), so one fit cannot match both: calibrate's own check
 * reports an rms error far above the two-tier fit's 0 % (measured 38.7 %),
 * and its scale_up_bw doubles the DP tier too. */
static void check_tpdp_tiers(const gt_params *p0, const char *dir, const char *b_dir, const char *u_json,
                             double t_b)
{
  gt_params q = *p0;
  q.bw_scale = 1.0;
  q.bw_scale_out = 2.0;
  gt_result rout;
  GError *error = NULL;
  g_assert_true(gt_run(&q, NULL, &rout, &error));
  g_assert_no_error(error);
  double true_out = 100.0 * (t_b - (double)rout.step_ns) / t_b, base = 0, out = 0;
  utility_row(u_json, "scale_out_bw", &base, &out);
  g_test_message("tpdp: scale-out utility: true %.3f %%, wisp %.3f %% (%+.3f pp)", true_out, out, out - true_out);
  g_assert_cmpfloat(fabs(out - true_out), <=, 1.0);
  g_assert_cmpfloat(true_out, >, 1.0); /* the check can fail */
  char *cal1 = g_build_filename(dir, "cal1.yaml", NULL), *log = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){"calibrate", b_dir, "--cluster", "dgx-h100", "--library", "ideal",
                                                 "-o", cal1, NULL},
                                &log), ==, 0);
  const char *at = strstr(log, "simulated alone on the calibrated config");
  g_assert_nonnull(at);
  at = strstr(at, "rms error ");
  g_assert_nonnull(at);
  double rms = g_ascii_strtod(at + strlen("rms error "), NULL);
  g_test_message("tpdp on the one-tier dgx-h100: calibrate's check rms error %.3f %%", rms);
  g_assert_cmpfloat(rms, >, 10.0);
  g_free(log);
  g_free(cal1);
}

/* record_param_comms nodes in dir's rank<r>.et.json files, counted in the
 * raw text (each node's "name" appears once). */
static int count_rpc(const char *dir, int ranks)
{
  int n = 0;
  for (int r = 0; r < ranks; r++) {
    char *name = g_strdup_printf("rank%d.et.json", r), *path = g_build_filename(dir, name, NULL), *text = NULL;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    for (const char *p = text; (p = strstr(p, "\"name\": \"record_param_comms\"")) != NULL; p++)
      n++;
    g_free(text);
    g_free(path);
    g_free(name);
  }
  return n;
}

/* The number after `key` in text ("... key N ..."); -1 when absent. */
static long number_after(const char *text, const char *key)
{
  const char *p = strstr(text, key);
  return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static void check_link_report(const char *out, int joined, int no_op)
{
  char *want = g_strdup_printf("collective(s) joined; not joined: no rf_id 0, no Kineto CPU op with the rf_id %d, "
                               "CPU op without GPU activity 0, kernel outside the graph's window 0; ", no_op);
  test_expect_has(out, "joined by rf_id as Chakra's linker does");
  test_expect_has(out, want);
  const char *keys[] = { "linked with Kineto:", "joined by rf_id", "dependencies between collectives" };
  for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
    const char *l = strstr(out, keys[i]), *e = l ? strchr(l, '\n') : NULL;
    g_test_message("%.*s", l && e ? (int)(e - l) : 0, l ? l : "");
  }
  g_free(want);
  g_assert_cmpint(number_after(strstr(out, "joined by rf_id"), "rank(s): "), ==, joined);
  g_assert_cmpint(number_after(out, "sizes differ "), ==, 0);
  g_assert_cmpint(number_after(out, "kinds differ "), ==, 0);
  g_assert_cmpint(number_after(out, "only in the execution trace "), ==, no_op);
  g_assert_cmpint(number_after(out, "only in Kineto "), ==, no_op);
  g_assert_cmpint(number_after(out, "contradicted by the measured timeline (not added) "), ==, 0);
}

/* Rank 0's first record_param_comms gets rf_id 987654321 (no Kineto CPU op has it). */
static void break_one_rf(const char *dir)
{
  char *path = g_build_filename(dir, "rank0.et.json", NULL), *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  char *rpc = strstr(text, "\"name\": \"record_param_comms\"");
  g_assert_nonnull(rpc);
  char *rf = strstr(rpc, "{\"name\": \"rf_id\", \"type\": \"uint64\", \"value\": ");
  g_assert_nonnull(rf);
  char *v = rf + strlen("{\"name\": \"rf_id\", \"type\": \"uint64\", \"value\": "), *e = strchr(v, '}');
  GString *s = g_string_new_len(text, v - text);
  g_string_append(s, "987654321");
  g_string_append(s, e);
  g_assert_true(g_file_set_contents(path, s->str, (gssize)s->len, NULL));
  g_string_free(s, TRUE);
  g_free(text);
  g_free(path);
}

static void check_case(gconstpointer data)
{
  gt_scenario sc = (gt_scenario)GPOINTER_TO_INT(data);
  if (!g_getenv("WISP_BIN")) {
    g_test_skip("WISP_BIN not set (run through make check)");
    return;
  }
  char *dir = g_dir_make_tmp("wisp-gtet-XXXXXX", NULL);
  char *b_dir = g_build_filename(dir, "B", NULL), *b2_dir = g_build_filename(dir, "2B", NULL);
  char *cal_b = g_build_filename(dir, "calB.yaml", NULL), *cal_2b = g_build_filename(dir, "cal2B.yaml", NULL);
  char *u_json = g_build_filename(dir, "u.json", NULL), *v_json = g_build_filename(dir, "v.json", NULL),
       *s_json = g_build_filename(dir, "s.json", NULL);
  gt_params p;
  gt_params_init(&p, sc);
  p.et_trace = TRUE;
  gt_result rb, r2b;
  GError *error = NULL;
  g_assert_true(gt_run(&p, b_dir, &rb, &error));
  g_assert_no_error(error);
  p.bw_scale = 2.0;
  g_assert_true(gt_run(&p, b2_dir, &r2b, &error));
  g_assert_no_error(error);
  double t_b = (double)rb.step_ns, t_2b = (double)r2b.step_ns, true_util = 100.0 * (t_b - t_2b) / t_b;
  const char *name = gt_scenario_name(sc);
  /* tpdp runs on two nodes of 4 (its twin's two tiers); the rest on one. */
  char *cluster = sc == GT_TPDP ? g_build_filename(dir, "cluster.yaml", NULL) : g_strdup("dgx-h100");
  if (sc == GT_TPDP)
    g_assert_true(g_file_set_contents(cluster, cluster_2x4, -1, NULL));
  const char *res = sc == GT_TPDP ? "scale_up_bw,scale_out_bw" : "scale_up_bw";

  g_assert_cmpint(test_wisp_run((const char *[]){"calibrate", b_dir, "--cluster", cluster, "--library", "ideal",
                                                 "-o", cal_b, NULL},
                                NULL), ==, 0);
  g_assert_cmpint(test_wisp_run((const char *[]){"calibrate", b2_dir, "--cluster", cluster, "--library", "ideal",
                                                 "-o", cal_2b, NULL},
                                NULL), ==, 0);
  char *out = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){"inspect", b_dir, NULL}, &out), ==, 0);
  int rpc = count_rpc(b_dir, rb.n_ranks);
  g_assert_cmpint(rpc, >, 0);
  check_link_report(out, rpc, 0);
  g_free(out);
  char *err = NULL;
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"utility", b_dir, "--cluster", cal_b, "--resource",
                                                          res, "--json", u_json, NULL}, NULL, &err), ==, 0);
  test_expect_has(err, "joined by rf_id as Chakra's linker does");
  g_free(err);
  g_assert_cmpint(test_wisp_run((const char *[]){"utility", b2_dir, "--cluster", cal_2b, "--resource", "scale_up_bw",
                                                 "--json", v_json, NULL}, NULL), ==, 0);
  g_assert_cmpint(test_wisp_run((const char *[]){"simulate", b2_dir, "--network", cal_b, "--json", s_json, NULL},
                                NULL), ==, 0);
  double base_b = 0, util = 0, base_2b = 0, util_2b = 0;
  utility_of(u_json, &base_b, &util);
  utility_of(v_json, &base_2b, &util_2b);
  cJSON *s = load_json(s_json);
  double b_from_2b = ns_of(s, "step_time_ns");
  cJSON_Delete(s);
  double halving = 100.0 * (b_from_2b - base_2b) / b_from_2b;
  g_test_message("%s (execution traces + Kineto, %d collectives joined by rf_id): true (T_B - T_2B) / T_B = %.3f %% "
                 "(T_B %.0f ns, T_2B %.0f ns); doubling on B: wisp %.3f %% (%+.3f pp, baseline %.0f ns); halving from "
                 "2B: wisp T_B' %.0f ns, T_2B' %.0f ns, %.3f %% (%+.3f pp)", name, rpc, true_util, t_b, t_2b, util,
                 util - true_util, base_b, b_from_2b, base_2b, halving, halving - true_util);
  g_assert_cmpfloat(fabs(util - true_util), <=, 1.0);
  g_assert_cmpfloat(fabs(halving - true_util), <=, 1.0);
  if (sc == GT_TPDP)
    check_tpdp_tiers(&p, dir, b_dir, u_json, t_b);
  g_free(cluster);

  /* One disagreement on purpose. */
  break_one_rf(b_dir);
  g_assert_cmpint(test_wisp_run((const char *[]){"inspect", b_dir, NULL}, &out), ==, 0);
  check_link_report(out, rpc - 1, 1);
  g_free(out);

  test_rm_rf(dir);
  g_free(dir);
  g_free(b_dir);
  g_free(b2_dir);
  g_free(cal_b);
  g_free(cal_2b);
  g_free(u_json);
  g_free(v_json);
  g_free(s_json);
}

/* CCL-Bench's marker test (tools/inference_latency/inference_latency.py,
 * _calc_json): vLLM = cat user_annotation, name starting execute_context_;
 * SGLang = cat python_function, name matching "(^|:) run_batch$". */
static gboolean ccl_bench_marker(const char *cat, const char *name, gboolean sglang)
{
  if (!sglang)
    return strcmp(cat, "user_annotation") == 0 && g_str_has_prefix(name, "execute_context_");
  return strcmp(cat, "python_function") == 0 && (g_str_has_suffix(name, ": run_batch") ||
                                                 strcmp(name, " run_batch") == 0);
}

/* CCL-Bench's inference_latency on one directory's raw Kineto files: per
 * rank the durations (us) of the marker events (ccl_bench_marker) in start
 * order; TTFT = the first, TPOT = the mean of the later ones without the
 * last (more than two); each averaged over ranks; returned in ns. */
static void ccl_bench_latency(const char *dir, int ranks, gboolean sglang, double *ttft_ns, double *tpot_ns)
{
  double ttft = 0, tpot = 0;
  for (int r = 0; r < ranks; r++) {
    char *name = g_strdup_printf("rank%d.json", r), *path = g_build_filename(dir, name, NULL);
    cJSON *doc = load_json(path), *e;
    GArray *ts = g_array_new(FALSE, FALSE, sizeof(double)), *dur = g_array_new(FALSE, FALSE, sizeof(double));
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "traceEvents")) {
      const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "name"), *c = cJSON_GetObjectItemCaseSensitive(e, "cat");
      if (cJSON_IsString(n) && cJSON_IsString(c) && ccl_bench_marker(c->valuestring, n->valuestring, sglang)) {
        double t = cJSON_GetObjectItemCaseSensitive(e, "ts")->valuedouble, d = cJSON_GetObjectItemCaseSensitive(e, "dur")->valuedouble;
        guint at = 0;
        while (at < ts->len && g_array_index(ts, double, at) < t)
          at++;
        g_array_insert_val(ts, at, t);
        g_array_insert_val(dur, at, d);
      }
    }
    g_assert_cmpuint(dur->len, >, 2);
    ttft += g_array_index(dur, double, 0);
    double s = 0;
    for (guint k = 1; k + 1 < dur->len; k++)
      s += g_array_index(dur, double, k);
    tpot += s / (dur->len - 2);
    g_array_free(ts, TRUE);
    g_array_free(dur, TRUE);
    cJSON_Delete(doc);
    g_free(path);
    g_free(name);
  }
  *ttft_ns = 1000.0 * ttft / ranks;
  *tpot_ns = 1000.0 * tpot / ranks;
}

/* The truth of the serve twin: the same rule on the model's own marker
 * lengths (gt_result.serve_step_ns). */
static void true_latency(const gt_result *res, double *ttft_ns, double *tpot_ns)
{
  double ttft = 0, tpot = 0;
  int n = res->serve_steps;
  for (int r = 0; r < res->n_ranks; r++) {
    ttft += (double)res->serve_step_ns[0][r];
    double s = 0;
    for (int k = 1; k <= n - 2; k++)
      s += (double)res->serve_step_ns[k][r];
    tpot += s / (n - 2);
  }
  *ttft_ns = ttft / res->n_ranks;
  *tpot_ns = tpot / res->n_ranks;
}

/* `wisp metrics` on the serve twin's trace: TTFT and TPOT equal to
 * CCL-Bench's rule on the raw files (within 0.1 %); with a card whose
 * phase is training both are n/a with CCL-Bench's reason; with
 * output_len 1, TPOT is n/a and TTFT stays. */
static void check_metrics_latency(const char *dir, const char *b_dir, double raw_ttft, double raw_tpot)
{
  char *m_json = g_build_filename(dir, "m.json", NULL), *card = g_build_filename(dir, "card.yaml", NULL);
  char *out = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){"metrics", b_dir, "--json", m_json, NULL}, &out), ==, 0);
  test_expect_has(out, "ttft: CCL-Bench's inference_latency over 6 model executions");
  g_free(out);
  cJSON *m = load_json(m_json);
  const cJSON *meas = cJSON_GetObjectItemCaseSensitive(m, "measured");
  double ttft = ns_of(meas, "ttft_ns"), tpot = ns_of(meas, "tpot_ns");
  g_test_message("wisp metrics: TTFT %.0f ns, TPOT %.0f ns (CCL-Bench on the raw files: %.0f, %.0f)", ttft, tpot,
                 raw_ttft, raw_tpot);
  g_assert_cmpfloat(fabs(ttft - raw_ttft) / raw_ttft, <=, 0.001);
  g_assert_cmpfloat(fabs(tpot - raw_tpot) / raw_tpot, <=, 0.001);
  cJSON_Delete(m);
  static const char *const cards[2] = {"workload:\n  model:\n    phase: training\n",
                                       "workload:\n  model:\n    phase: inference\n  data:\n    output_len: 1\n"};
  for (int c = 0; c < 2; c++) {
    g_assert_true(g_file_set_contents(card, cards[c], -1, NULL));
    g_assert_cmpint(test_wisp_run((const char *[]){"metrics", b_dir, "--card", card, "--json", m_json, NULL}, &out),
                    ==, 0);
    m = load_json(m_json);
    meas = cJSON_GetObjectItemCaseSensitive(m, "measured");
    g_assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(meas, "tpot_ns")));
    if (c == 0) {
      g_assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(meas, "ttft_ns")));
      test_expect_has(out, "ttft: n/a: the card's workload.model.phase is training");
    } else {
      g_assert_cmpfloat(fabs(ns_of(meas, "ttft_ns") - raw_ttft) / raw_ttft, <=, 0.001);
      test_expect_has(out, "tpot: n/a: the card's workload.data.output_len is 1");
    }
    cJSON_Delete(m);
    g_free(out);
  }
  g_free(m_json);
  g_free(card);
}

/* TTFT and TPOT of the serve twin (one prefill, five decode steps marked
 * as vLLM marks them, or as SGLang does with data 1) at B and 2B: `wisp
 * utility --latency` and `wisp metrics` must measure TTFT and TPOT as
 * CCL-Bench's rule computes them from the raw files (within 0.1 %), and
 * the utilities of doubling scale_up_bw for TTFT and for TPOT must be
 * within 1 percentage point of the true ones. */
static void check_serve_latency(gconstpointer data)
{
  gboolean sglang = GPOINTER_TO_INT(data);
  if (!g_getenv("WISP_BIN")) {
    g_test_skip("WISP_BIN not set (run through make check)");
    return;
  }
  char *dir = g_dir_make_tmp("wisp-gtlat-XXXXXX", NULL);
  char *b_dir = g_build_filename(dir, "B", NULL), *b2_dir = g_build_filename(dir, "2B", NULL);
  char *cal_b = g_build_filename(dir, "calB.yaml", NULL), *u_json = g_build_filename(dir, "u.json", NULL);
  gt_params p;
  gt_params_init(&p, GT_SERVE);
  p.sglang_markers = sglang;
  gt_result rb, r2b;
  GError *error = NULL;
  g_assert_true(gt_run(&p, b_dir, &rb, &error));
  p.bw_scale = 2.0;
  g_assert_true(gt_run(&p, b2_dir, &r2b, &error));
  g_assert_no_error(error);
  double ttft_b, tpot_b, ttft_2b, tpot_2b, raw_ttft, raw_tpot;
  true_latency(&rb, &ttft_b, &tpot_b);
  true_latency(&r2b, &ttft_2b, &tpot_2b);
  ccl_bench_latency(b_dir, rb.n_ranks, sglang, &raw_ttft, &raw_tpot);
  double true_ttft_u = 100.0 * (ttft_b - ttft_2b) / ttft_b, true_tpot_u = 100.0 * (tpot_b - tpot_2b) / tpot_b;
  g_assert_cmpint(test_wisp_run((const char *[]){"calibrate", b_dir, "--cluster", "dgx-h100", "--library", "ideal",
                                                 "-o", cal_b, NULL},
                                NULL), ==, 0);
  char *out = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){"utility", b_dir, "--cluster", cal_b, "--resource", "scale_up_bw",
                                                 "--latency", "--json", u_json, NULL}, &out), ==, 0);
  test_expect_has(out, "latency (6 model executions: TTFT = execution 0, TPOT = mean of executions 1..4");
  g_free(out);
  cJSON *u = load_json(u_json);
  double m_ttft = ns_of(u, "measured_ttft_ns"), m_tpot = ns_of(u, "measured_tpot_ns");
  double ttft = ns_of(u, "ttft_ns"), tpot = ns_of(u, "tpot_ns");
  const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(u, "resources"), 0);
  double ttft_u = cJSON_GetObjectItemCaseSensitive(row, "ttft_utility_pct")->valuedouble;
  double tpot_u = cJSON_GetObjectItemCaseSensitive(row, "tpot_utility_pct")->valuedouble;
  g_test_message("serve: CCL-Bench rule on the raw files: TTFT %.0f ns, TPOT %.0f ns; the twin's truth TTFT %.0f / "
                 "%.0f ns, TPOT %.0f / %.0f ns (B / 2B); wisp measured TTFT %.0f ns, TPOT %.0f ns, simulated %.0f / "
                 "%.0f ns; utility of 2x scale_up_bw: TTFT true %.3f %%, wisp %.3f %% (%+.3f pp); TPOT true %.3f %%, "
                 "wisp %.3f %% (%+.3f pp)", raw_ttft, raw_tpot, ttft_b, ttft_2b, tpot_b, tpot_2b, m_ttft, m_tpot, ttft,
                 tpot, true_ttft_u, ttft_u, ttft_u - true_ttft_u, true_tpot_u, tpot_u, tpot_u - true_tpot_u);
  g_assert_cmpfloat(fabs(raw_ttft - ttft_b), <=, 1.0); /* the file's us with 3 decimals: exact to the ns */
  g_assert_cmpfloat(fabs(raw_tpot - tpot_b), <=, 1.0);
  g_assert_cmpfloat(fabs(m_ttft - raw_ttft) / raw_ttft, <=, 0.001);
  g_assert_cmpfloat(fabs(m_tpot - raw_tpot) / raw_tpot, <=, 0.001);
  g_assert_cmpfloat(fabs(ttft_u - true_ttft_u), <=, 1.0);
  g_assert_cmpfloat(fabs(tpot_u - true_tpot_u), <=, 1.0);
  g_assert_cmpfloat(true_ttft_u, >, 1.0); /* the check can fail: both utilities are well above 0 */
  g_assert_cmpfloat(true_tpot_u, >, 1.0);
  cJSON_Delete(u);
  check_metrics_latency(dir, b_dir, raw_ttft, raw_tpot);
  test_rm_rf(dir);
  g_free(dir);
  g_free(b_dir);
  g_free(b2_dir);
  g_free(cal_b);
  g_free(u_json);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  static const gt_scenario cases[] = { GT_TP, GT_DP, GT_LAUNCH, GT_STRAGGLER, GT_PP, GT_TPDP };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    char *path = g_strdup_printf("/gt_et/%s", gt_scenario_name(cases[i]));
    g_test_add_data_func(path, GINT_TO_POINTER(cases[i]), check_case);
    g_free(path);
  }
  g_test_add_data_func("/gt_et/serve_latency", GINT_TO_POINTER(FALSE), check_serve_latency);
  g_test_add_data_func("/gt_et/serve_latency_sglang", GINT_TO_POINTER(TRUE), check_serve_latency);
  return g_test_run();
}
