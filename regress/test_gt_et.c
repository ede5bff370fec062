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
 *   wisp calibrate B / 2B --cluster dgx-h100 -o calB.yaml / cal2B.yaml
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
 * The scenarios: tp, dp, launch, straggler, pp on one node (the
 * two-tier tpdp job needs the two-tier cluster of test_ground_truth's
 * check_tiers and is not repeated here).
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

/* The utility row of scale_up_bw and the baseline of a `utility --json`. */
static void utility_of(const char *path, double *base, double *util)
{
  cJSON *u = load_json(path);
  *base = ns_of(u, "baseline_step_ns");
  *util = NAN;
  const cJSON *row;
  cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(u, "resources"))
    if (strcmp(cJSON_GetObjectItemCaseSensitive(row, "resource")->valuestring, "scale_up_bw") == 0)
      *util = cJSON_GetObjectItemCaseSensitive(row, "utility_pct")->valuedouble;
  g_assert_false(isnan(*util));
  cJSON_Delete(u);
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

  g_assert_cmpint(test_wisp_run((const char *[]){"calibrate", b_dir, "--cluster", "dgx-h100", "-o", cal_b, NULL},
                                NULL), ==, 0);
  g_assert_cmpint(test_wisp_run((const char *[]){"calibrate", b2_dir, "--cluster", "dgx-h100", "-o", cal_2b, NULL},
                                NULL), ==, 0);
  char *out = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){"inspect", b_dir, NULL}, &out), ==, 0);
  int rpc = count_rpc(b_dir, rb.n_ranks);
  g_assert_cmpint(rpc, >, 0);
  check_link_report(out, rpc, 0);
  g_free(out);
  char *err = NULL;
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"utility", b_dir, "--cluster", cal_b, "--resource",
                                                          "scale_up_bw", "--json", u_json, NULL}, NULL, &err), ==, 0);
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

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  static const gt_scenario cases[] = { GT_TP, GT_DP, GT_LAUNCH, GT_STRAGGLER, GT_PP };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    char *path = g_strdup_printf("/gt_et/%s", gt_scenario_name(cases[i]));
    g_test_add_data_func(path, GINT_TO_POINTER(cases[i]), check_case);
    g_free(path);
  }
  return g_test_run();
}
