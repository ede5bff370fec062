/* test_cfg_card.c: the workload card reader (config/cfg_card.h) and its
 * three readers: the frontends' MoE sizes (fe_card_from_doc), MFU's model
 * (study_card_from_doc) and the --scale layout (wisp_card_layout, through
 * the wisp binary).  Expected values are the card texts themselves (a key
 * keeps its value and the line it is written on, counted by hand in the
 * comments) and the closed forms of the derived values, stated beside each
 * check. */
#include "config.h"
#include "config/cfg_card.h"
#include "frontends/fe.h"
#include "studies/study_metrics.h"
#include "test_util.h"

#include <string.h>

static cfg_card *card_ok(const char *yaml)
{
  GError *e = NULL;
  cfg_card *c = cfg_card_load_string(yaml, "card.yaml", &e);
  g_assert_no_error(e);
  g_assert_nonnull(c);
  return c;
}

/* Loading fails with exactly `message`. */
static void load_fails(const char *yaml, int code, const char *message)
{
  GError *e = NULL;
  g_assert_null(cfg_card_load_string(yaml, "bad.yaml", &e));
  g_assert_error(e, WISP_ERROR, code);
  g_test_message("expected: %s\nactual:   %s", message, e->message);
  g_assert_cmpstr(e->message, ==, message);
  g_error_free(e);
}

/* ---- the document: leaves, lines, absent and empty values ---- */

static void test_document(void)
{
  /* Lines: 1 workload, 2 model, 3 precision, 4 empty, 5 data, 6 list. */
  cfg_card *c = card_ok("workload:\n  model:\n    precision: bf16\n    hidden_size:\n  data:\n"
                        "    sizes: [1, 2]\nversion: 1\n");
  int line = -1;
  g_assert_cmpstr(cfg_card_get(c, "workload.model.precision", &line), ==, "bf16");
  g_assert_cmpint(line, ==, 3);
  g_assert_cmpstr(cfg_card_get(c, "version", &line), ==, "1");
  g_assert_cmpint(line, ==, 7);
  /* An empty value is absent to the accessors, but the key exists. */
  g_assert_null(cfg_card_get(c, "workload.model.hidden_size", &line));
  g_assert_true(cfg_card_has(c, "workload.model.hidden_size"));
  g_assert_true(cfg_card_has(c, "workload.model"));
  g_assert_false(cfg_card_has(c, "workload.model.moe_top_k"));
  g_assert_null(cfg_card_get(c, "workload.model.moe_top_k", &line));
  g_assert_cmpint(line, ==, 0);
  int64_t n = 77;
  gboolean found = TRUE;
  GError *e = NULL;
  g_assert_true(cfg_card_count(c, "workload.model.hidden_size", 100, &n, &found, &e));
  g_assert_false(found);
  g_assert_cmpint(n, ==, 77); /* untouched when absent */
  /* A list is not a single value: line 6. */
  g_assert_false(cfg_card_count(c, "workload.data.sizes", 100, &n, &found, &e));
  g_assert_cmpstr(e->message, ==, "card.yaml:6: workload.data.sizes: expected a single value, got a list");
  g_clear_error(&e);
  g_assert_cmpstr(cfg_card_path(c), ==, "card.yaml");
  cfg_card_free(c);
}

/* ---- typed accessors: every error names file:line:key ---- */

static void test_accessor_errors(void)
{
  cfg_card *c = card_ok("a:\n  n: 0\n  big: 17\n  x: 1.5e9\n  neg: -2\n  p: fp5\n  phase: both\n  ok: 16\n");
  GError *e = NULL;
  int64_t n = 0;
  double x = 0;
  g_assert_false(cfg_card_count(c, "a.n", 100, &n, NULL, &e));
  g_assert_cmpstr(e->message, ==, "card.yaml:2: a.n: expected a whole number from 1 to 100, got '0'");
  g_clear_error(&e);
  g_assert_false(cfg_card_count(c, "a.big", 16, &n, NULL, &e));
  g_assert_cmpstr(e->message, ==, "card.yaml:3: a.big: expected a whole number from 1 to 16, got '17'");
  g_clear_error(&e);
  g_assert_true(cfg_card_count(c, "a.ok", 16, &n, NULL, &e));
  g_assert_cmpint(n, ==, 16);
  /* 1.5e9 is a number, not a whole-number count. */
  g_assert_false(cfg_card_count(c, "a.x", G_MAXINT64, &n, NULL, &e));
  g_assert_cmpstr(e->message, ==, "card.yaml:4: a.x: expected a whole number from 1 to 9223372036854775807, got '1.5e9'");
  g_clear_error(&e);
  g_assert_true(cfg_card_number(c, "a.x", &x, NULL, &e));
  g_assert_cmpfloat(x, ==, 1.5e9);
  g_assert_false(cfg_card_number(c, "a.neg", &x, NULL, &e));
  g_assert_cmpstr(e->message, ==, "card.yaml:5: a.neg: expected a non-negative number, got '-2'");
  g_clear_error(&e);
  const char *name = NULL;
  int bytes = 0;
  g_assert_false(cfg_card_precision(c, "a.p", &name, &bytes, NULL, &e));
  g_assert_cmpstr(e->message, ==, "card.yaml:6: a.p: unknown precision 'fp5' (use bf16, fp16, fp32 or fp8)");
  g_clear_error(&e);
  static const char *const phases[] = {"training", "inference", NULL};
  const char *ph = NULL;
  g_assert_false(cfg_card_choice(c, "a.phase", phases, &ph, NULL, &e));
  g_assert_cmpstr(e->message, ==, "card.yaml:7: a.phase: expected training or inference, got 'both'");
  g_clear_error(&e);
  /* An absent key has no line: the message names the file and the key. */
  g_assert_false(cfg_card_fail(c, "a.none", WISP_ERROR_INVALID, &e, "missing"));
  g_assert_cmpstr(e->message, ==, "card.yaml: a.none: missing");
  g_clear_error(&e);
  cfg_card_free(c);
  /* Precisions: CCL-Bench's bf16 and fp8, case-insensitive long names. */
  g_assert_cmpint(cfg_precision_bytes("bf16"), ==, 2);
  g_assert_cmpint(cfg_precision_bytes("BFloat16"), ==, 2);
  g_assert_cmpint(cfg_precision_bytes("fp8"), ==, 1);
  g_assert_cmpint(cfg_precision_bytes("float32"), ==, 4);
  g_assert_cmpint(cfg_precision_bytes("fp64"), ==, 8);
  g_assert_cmpint(cfg_precision_bytes("fp5"), ==, 0);
}

static void test_load_errors(void)
{
  load_fails("workload: [\n", WISP_ERROR_PARSE,
             "bad.yaml:2: malformed YAML: did not find expected node content (a workload card is YAML)");
  load_fails("- a\n- b\n", WISP_ERROR_PARSE, "bad.yaml: a workload card is a YAML mapping (CCL-Bench's card "
             "layout: workload.model, workload.data, Model-executor)");
  load_fails("", WISP_ERROR_PARSE, "bad.yaml: a workload card is a YAML mapping (CCL-Bench's card layout: "
             "workload.model, workload.data, Model-executor)");
  /* The second tp (line 4) against the first (line 3). */
  load_fails("Model-executor:\n  model_plan_parallelization:\n    tp: 2\n    tp: 4\n", WISP_ERROR_PARSE,
             "bad.yaml:4: Model-executor.model_plan_parallelization.tp: given twice (first on line 3)");
  GError *e = NULL;
  g_assert_null(cfg_card_load("/nonexistent/card.yaml", &e));
  g_assert_error(e, WISP_ERROR, WISP_ERROR_IO);
  g_assert_nonnull(strstr(e->message, "/nonexistent/card.yaml: cannot open the workload card: "));
  g_clear_error(&e);
  char *dir = g_dir_make_tmp("wisp-card-XXXXXX", NULL);
  char *p = g_build_filename(dir, "nul.yaml", NULL);
  g_assert_true(g_file_set_contents(p, "a: 1\n\0b: 2\n", 11, NULL));
  g_assert_null(cfg_card_load(p, &e));
  g_assert_error(e, WISP_ERROR, WISP_ERROR_PARSE);
  g_assert_nonnull(strstr(e->message, "holds NUL bytes"));
  g_clear_error(&e);
  test_rm_rf(dir);
  g_free(p);
  g_free(dir);
}

/* ---- one card, three readers ---- */

static const char *const layout_keys[] = {"dp_replicate", "dp_shard", "tp", "pp", "cp", "ep"};

/* How many layout keys the card gives (the test's own count, not
 * wisp_card_layout's, which lives in the CLI and is run below). */
static int layout_count(const cfg_card *c)
{
  int k = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(layout_keys); i++) {
    char *key = g_strdup_printf("Model-executor.model_plan_parallelization.%s", layout_keys[i]);
    int64_t v = 0;
    gboolean found = FALSE;
    g_assert_true(cfg_card_count(c, key, CFG_CARD_MAX_DEGREE, &v, &found, NULL));
    k += found;
    g_free(key);
  }
  return k;
}

static void test_layout_only(void)
{
  cfg_card *c = card_ok("Model-executor:\n  model_plan_parallelization:\n    dp_shard: 2\n    tp: 4\n    pp: 2\n");
  g_assert_cmpint(layout_count(c), ==, 3);
  /* MFU: no model, read (the one --card also serves --scale). */
  study_card s;
  GError *e = NULL;
  g_assert_true(study_card_from_doc(c, &s, &e));
  g_assert_true(s.no_model);
  study_card_clear(&s);
  /* Sizes: TP degree 4 from the plan, nothing else; the assumptions are
   * balanced routing and the missing EP degree. */
  fe_workload_card *f = fe_card_from_doc(c, &e);
  g_assert_no_error(e);
  g_assert_cmpint(f->tp_degree, ==, 4);
  g_assert_cmpint(f->ep_degree, ==, -1);
  g_assert_cmpint(f->hidden_size, ==, -1);
  g_assert_cmpint(f->tokens_per_rank, ==, -1);
  g_assert_cmpuint(f->assumptions->len, ==, 2);
  fe_card_free(f);
  cfg_card_free(c);
  /* A degree over CFG_CARD_MAX_DEGREE (2^24 = 16777216) is refused by the
   * sizes reader with the message the layout reader gives (same bound). */
  c = card_ok("Model-executor:\n  model_plan_parallelization:\n    tp: 16777217\n");
  g_assert_null(fe_card_from_doc(c, &e));
  g_assert_cmpstr(e->message, ==, "card.yaml:3: Model-executor.model_plan_parallelization.tp: expected a whole "
                  "number from 1 to 16777216, got '16777217'");
  g_clear_error(&e);
  cfg_card_free(c);
}

static void test_moe_only(void)
{
  cfg_card *c = card_ok("workload:\n  model:\n    hidden_size: 4096\n    moe_top_k: 2\n    precision: bf16\n"
                        "    moe_dispatch_precision: fp8\n  data:\n    tokens_per_rank: 512\n");
  g_assert_cmpint(layout_count(c), ==, 0);
  GError *e = NULL;
  fe_workload_card *f = fe_card_from_doc(c, &e);
  g_assert_no_error(e);
  g_assert_cmpint(f->hidden_size, ==, 4096);
  g_assert_cmpint(f->top_k, ==, 2);
  g_assert_cmpint(f->tokens_per_rank, ==, 512);
  g_assert_cmpint(f->dtype_bytes, ==, 2);
  g_assert_cmpint(f->dispatch_dtype_bytes, ==, 1);
  g_assert_cmpstr(f->routing, ==, "balanced");
  fe_card_free(f);
  study_card s;
  g_assert_true(study_card_from_doc(c, &s, &e));
  g_assert_true(s.no_model);
  study_card_clear(&s);
  cfg_card_free(c);
}

/* Model fields only: MFU reads them; the sizes reader derives H = heads x
 * head_dim = 32 x 128 = 4096 and T = batch x seq = 4 x 512 = 2048 from the
 * same keys (one spelling: workload.model.model_arch.*). */
static const char model_card[] =
  "workload:\n"
  "  model:\n"
  "    phase: inference\n"
  "    model_arch:\n"
  "      num_params: 8.03e9\n"
  "      num_params_embedding: 525336576\n"
  "      num_layers: 32\n"
  "      num_heads: 32\n"
  "      head_dim: 128\n"
  "  data:\n"
  "    batch_size: 4\n"
  "    seq_len: 512\n"
  "  hardware:\n"
  "    xpu_spec:\n"
  "      model: nvidia_h100\n"
  "      total_count: 8\n";

static void test_model_only(void)
{
  cfg_card *c = card_ok(model_card);
  g_assert_cmpint(layout_count(c), ==, 0);
  study_card s;
  GError *e = NULL;
  g_assert_true(study_card_from_doc(c, &s, &e));
  g_assert_no_error(e);
  g_assert_false(s.no_model);
  g_assert_false(s.training);
  g_assert_cmpfloat(s.num_params, ==, 8.03e9);
  g_assert_cmpfloat(s.num_params_active, ==, 8.03e9); /* defaults to num_params */
  g_assert_cmpint(s.total_count, ==, 8);
  g_assert_cmpfloat(s.peak_tflops, ==, 989.0); /* H100, studies.md §"MFU" */
  /* Inference: 2 (N - N_emb) + 4 L H Q S = 2 (8.03e9 - 525336576) + 4 x 32 x 128 x 32 x 512. */
  g_assert_cmpfloat(study_card_flop_per_token(&s), ==, 2 * (8.03e9 - 525336576.0) + 4.0 * 32 * 128 * 32 * 512);
  study_card_clear(&s);
  fe_workload_card *f = fe_card_from_doc(c, &e);
  g_assert_no_error(e);
  g_assert_cmpint(f->hidden_size, ==, 32 * 128);
  g_assert_cmpint(f->tokens_per_rank, ==, 4 * 512);
  fe_card_free(f);
  cfg_card_free(c);
  /* A model_arch lacking a key MFU needs: the error names the key. */
  c = card_ok("workload:\n  model:\n    model_arch:\n      num_params: 10\n");
  g_assert_false(study_card_from_doc(c, &s, &e));
  g_assert_nonnull(strstr(e->message, "card.yaml: workload.model.model_arch.num_layers: missing (MFU needs"));
  g_clear_error(&e);
  cfg_card_free(c);
  /* A shared key read by two readers fails the same way in both: seq_len
   * on line 5 is not a count. */
  c = card_ok("workload:\n  model:\n    model_arch: {num_params: 1, num_layers: 1, num_heads: 1, head_dim: 1}\n"
              "  data:\n    seq_len: 1.5\n    batch_size: 1\n");
  const char *want = "card.yaml:5: workload.data.seq_len: expected a whole number from 1 to";
  g_assert_false(study_card_from_doc(c, &s, &e));
  g_assert_nonnull(strstr(e->message, want));
  g_clear_error(&e);
  g_assert_null(fe_card_from_doc(c, &e));
  g_assert_nonnull(strstr(e->message, want));
  g_clear_error(&e);
  cfg_card_free(c);
}

/* All three sections in one card, and the bundled example card. */
static void test_all_and_examples(void)
{
  char *text = g_strconcat(model_card, "      count_per_node: 4\n"
                           "Model-executor:\n  model_plan_parallelization:\n    dp_shard: 2\n    tp: 4\n    ep: 8\n",
                           NULL);
  cfg_card *c = card_ok(text);
  g_free(text);
  g_assert_cmpint(layout_count(c), ==, 3);
  GError *e = NULL;
  study_card s;
  g_assert_true(study_card_from_doc(c, &s, &e));
  g_assert_false(s.no_model);
  study_card_clear(&s);
  fe_workload_card *f = fe_card_from_doc(c, &e);
  g_assert_no_error(e);
  g_assert_cmpint(f->ep_degree, ==, 8);
  g_assert_cmpint(f->tp_degree, ==, 4);
  g_assert_cmpint(f->gpus_per_node, ==, 4);
  fe_card_free(f);
  cfg_card_free(c);

  const char *src = g_getenv("G_TEST_SRCDIR");
  if (src == NULL) {
    g_test_skip("G_TEST_SRCDIR not set (run through make check)");
    return;
  }
  char *dir = g_build_filename(src, "examples", "cards", NULL);
  GDir *d = g_dir_open(dir, 0, NULL);
  g_assert_nonnull(d);
  int n = 0;
  for (const char *name; (name = g_dir_read_name(d)) != NULL;) {
    if (!g_str_has_suffix(name, ".yaml"))
      continue;
    char *p = g_build_filename(dir, name, NULL);
    c = cfg_card_load(p, &e);
    g_assert_no_error(e);
    f = fe_card_from_doc(c, &e);
    g_assert_no_error(e);
    g_assert_true(study_card_from_doc(c, &s, &e));
    g_assert_no_error(e);
    if (strcmp(name, "deepseek-v3-train-ep64.yaml") == 0) {
      /* The card's own values (examples/cards/deepseek-v3-train-ep64.yaml). */
      g_assert_cmpint(f->hidden_size, ==, 7168);
      g_assert_cmpint(f->top_k, ==, 8);
      g_assert_cmpint(f->tokens_per_rank, ==, 4096);
      g_assert_cmpint(f->ep_degree, ==, 64);
      g_assert_cmpint(f->tp_degree, ==, 1);
      g_assert_cmpint(f->gpus_per_node, ==, 8);
      g_assert_cmpint(f->dtype_bytes, ==, 2);
      g_assert_true(s.no_model); /* written for sizes and the layout */
      g_assert_cmpint(layout_count(c), ==, 4);
    }
    study_card_clear(&s);
    fe_card_free(f);
    cfg_card_free(c);
    g_free(p);
    n++;
  }
  g_dir_close(d);
  g_free(dir);
  g_assert_cmpint(n, >=, 1);
}

/* The layout reader (cli/wisp_load.c) through the binary: the bundled
 * example is dp 2 x pp 2 x tp 4 (16 ranks); a card saying so is read and
 * its layout printed, a card giving tp 8 contradicts the trace's groups,
 * and --scale with a card that has no layout names the missing section. */
static void test_layout_cli(void)
{
  test_example_env v;
  if (!test_example_setup(&v, "wisp-card-XXXXXX"))
    return;
  char *card = g_build_filename(v.dir, "card.yaml", NULL);
  char *err = NULL;
  const char *args[] = {"simulate", v.example, "--network", "dgx-a100", "--card", card, NULL};
  g_assert_true(g_file_set_contents(card, "Model-executor:\n  model_plan_parallelization:\n    dp_shard: 2\n"
                                          "    pp: 2\n    tp: 4\n", -1, NULL));
  g_assert_cmpint(test_wisp_run_in(NULL, args, NULL, &err), ==, 0);
  g_assert_nonnull(strstr(err, "layout: 16 ranks = dp 2 x pp 2 x cp 1 x tp 4 (ep 1)"));
  g_free(err);
  g_assert_true(g_file_set_contents(card, "Model-executor:\n  model_plan_parallelization:\n    dp_shard: 1\n"
                                          "    pp: 2\n    tp: 8\n", -1, NULL));
  g_assert_cmpint(test_wisp_run_in(NULL, args, NULL, &err), ==, 1);
  g_assert_nonnull(strstr(err, "the card gives tp 8"));
  g_free(err);
  g_assert_true(g_file_set_contents(card, "workload:\n  model:\n    hidden_size: 8\n", -1, NULL));
  const char *scaled[] = {"simulate", v.example, "--network", "dgx-a100", "--scale", "dp=4", "--card", card, NULL};
  g_assert_cmpint(test_wisp_run_in(NULL, scaled, NULL, &err), ==, 1);
  g_assert_nonnull(strstr(err, ": Model-executor.model_plan_parallelization: no parallel sizes"));
  g_free(err);
  /* A card that cannot be parsed stops the command before the load. */
  g_assert_true(g_file_set_contents(card, "workload: [\n", -1, NULL));
  g_assert_cmpint(test_wisp_run_in(NULL, args, NULL, &err), ==, 2);
  g_assert_nonnull(strstr(err, "card.yaml:2: malformed YAML"));
  g_free(err);
  g_free(card);
  test_example_teardown(&v);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/cfg_card/document", test_document);
  g_test_add_func("/cfg_card/accessor_errors", test_accessor_errors);
  g_test_add_func("/cfg_card/load_errors", test_load_errors);
  g_test_add_func("/cfg_card/layout_only", test_layout_only);
  g_test_add_func("/cfg_card/moe_only", test_moe_only);
  g_test_add_func("/cfg_card/model_only", test_model_only);
  g_test_add_func("/cfg_card/all_and_examples", test_all_and_examples);
  g_test_add_func("/cfg_card/layout_cli", test_layout_cli);
  return g_test_run();
}
