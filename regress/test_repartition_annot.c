/* test_repartition_annot.c: reading the layers from module annotations
 * (issue 32 item 1; doc/repartition.md §1).
 *
 * The ground truth (regress/gt_parallel.h) writes the same job three ways:
 * without annotations, with Megatron's module names as PyTorch's
 * with_modules writes them (python_function "nn.Module: TransformerLayer_i"
 * and its SelfAttention_i / MLP_i around each layer's forward launches;
 * annotate 1), and with two layers under each TransformerLayer instance
 * (annotate 2: annotations that disagree with the job).  The annotations
 * change no time, so the three traces have one true step.  Through the
 * wisp binary, as a user would:
 *
 *   wisp calibrate TRACE --cluster dgx-h100 --library ideal -o cal.yaml
 *   wisp simulate TRACE --network cal.yaml --card TRACE/card.yaml --scale ... --json s.json
 *
 * - from the annotated TP4 x PP2 trace, wisp says it read the layers from
 *   the annotations (8 TransformerLayer instances of 10 operations: 16
 *   layers / pp 2; a layer's forward is norm, QKV, attention, projection,
 *   all-reduce, norm, FC1, GeLU, FC2, all-reduce) and that the kernel
 *   pattern agrees, and predicts every target exactly as from the
 *   unannotated trace (the same layers), within 5 % of the truth;
 * - the same from the annotated trace converted to Chakra ET (the module
 *   path travels as the node attribute wisp_module) and from a one-stage
 *   (TP8) annotated trace;
 * - the disagreeing trace (4 instances of 20 operations against the card's
 *   8 layers per stage) and the annotated trace under a card whose
 *   num_layers is half the truth's each print the disagreement with both
 *   counts, instead of answering silently.
 *
 * Skips visibly when WISP_BIN is not set (run through make check).
 */
#include "config.h"

#include "regress/test_repart.h"
#include "regress/test_util.h"

#include <math.h>
#include <string.h>

/* Writes the job (tp, pp, mb, annotate; patch: a linear patch embedding)
 * to dir with its card; its true step. */
static int64_t write_job_as(int tp, int pp, int mb, int annotate, gboolean patch, const char *dir)
{
  gt_par_params p;
  gt_par_init(&p);
  p.patch_embed = patch;
  p.tp = tp;
  p.pp = pp;
  p.mb = mb;
  p.annotate = annotate;
  return test_repart_run(&p, dir);
}

static int64_t write_job(int tp, int pp, int mb, int annotate, const char *dir)
{
  return write_job_as(tp, pp, mb, annotate, FALSE, dir);
}

/* simulate TRACE --scale spec on the flow tier; the step (ns), its stderr in *err. */
static double predict(const char *trace, const char *cal, const char *card, const char *spec, const char *json,
                      char **err)
{
  char *out = NULL;
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"simulate", trace, "--network", cal, "--card", card,
                                                          "--scale", spec, "--network-model", "flow", "--json", json,
                                                          NULL}, &out, err), ==, 0);
  g_free(out);
  return test_repart_step(json);
}

typedef struct {
  int tp, pp, mb;
} target;

static const target targets[] = {{2, 4, 8}, {8, 1, 4}, {1, 8, 8}, {4, 2, 8}};

#define ANNOT_LINE "model: layers from module annotations: 8 TransformerLayer instances of 10 operations from " \
                   "operation 1 of rank 0's first forward"

static void check_annotated(void)
{
  if (!g_getenv("WISP_BIN")) {
    g_test_skip("WISP_BIN not set (run through make check)");
    return;
  }
  char *dir = g_dir_make_tmp("wisp-annot-XXXXXX", NULL);
  char *plain = g_build_filename(dir, "plain", NULL), *annot = g_build_filename(dir, "annot", NULL);
  char *et = g_build_filename(dir, "et", NULL), *cal = g_build_filename(dir, "cal.yaml", NULL);
  char *json = g_build_filename(dir, "s.json", NULL), *card = g_build_filename(plain, "card.yaml", NULL);
  /* The annotations change no time: one truth for both traces. */
  int64_t t0 = write_job(4, 2, 4, 0, plain), t1 = write_job(4, 2, 4, 1, annot);
  g_assert_cmpint(t0, ==, t1);
  g_assert_cmpint(test_wisp_run((const char *[]){"calibrate", plain, "--cluster", "dgx-h100", "--library", "ideal",
                                                 "-o", cal, NULL}, NULL), ==, 0);
  g_assert_cmpint(test_wisp_run((const char *[]){"convert", annot, "-o", et, NULL}, NULL), ==, 0);
  for (size_t i = 0; i < G_N_ELEMENTS(targets); i++) {
    const target *c = &targets[i];
    char *spec = g_strdup_printf("tp=%d,pp=%d,mb=%d,sched=1f1b", c->tp, c->pp, c->mb);
    double truth = (double)write_job(c->tp, c->pp, c->mb, 0, NULL);
    char *e0 = NULL, *e1 = NULL, *e2 = NULL;
    double w0 = predict(plain, cal, card, spec, json, &e0), w1 = predict(annot, cal, card, spec, json, &e1);
    double w2 = predict(et, cal, card, spec, json, &e2);
    g_test_message("%s: true %.3f ms; pattern %.3f ms, annotations %.3f ms, annotations via Chakra ET %.3f ms (%+.2f %%)",
                   spec, truth / 1e6, w0 / 1e6, w1 / 1e6, w2 / 1e6, 100.0 * (w1 - truth) / truth);
    g_assert_nonnull(strstr(e0, "model: layers from the kernel pattern (the trace has no module annotations)"));
    g_assert_nonnull(strstr(e1, ANNOT_LINE));
    g_assert_nonnull(strstr(e1, "as the kernel pattern and the card's num_layers"));
    g_assert_nonnull(strstr(e2, ANNOT_LINE));
    /* The same layers, so the same job: equal predictions. */
    g_assert_cmpfloat(w1, ==, w0);
    g_assert_cmpfloat(w2, ==, w1);
    g_assert_cmpfloat(fabs(w1 - truth) / truth, <=, 0.05);
    g_free(e0);
    g_free(e1);
    g_free(e2);
    g_free(spec);
  }
  test_rm_rf(dir);
  g_free(dir);
  g_free(plain);
  g_free(annot);
  g_free(et);
  g_free(cal);
  g_free(json);
  g_free(card);
}

/* One stage (TP8): the forward's layers from the annotations of the first
 * micro-batch's range, 16 instances of 10 operations. */
static void check_one_stage(void)
{
  if (!g_getenv("WISP_BIN")) {
    g_test_skip("WISP_BIN not set (run through make check)");
    return;
  }
  char *dir = g_dir_make_tmp("wisp-annot1-XXXXXX", NULL);
  char *plain = g_build_filename(dir, "plain", NULL), *annot = g_build_filename(dir, "annot", NULL);
  char *cal = g_build_filename(dir, "cal.yaml", NULL), *json = g_build_filename(dir, "s.json", NULL);
  char *card = g_build_filename(plain, "card.yaml", NULL);
  write_job(8, 1, 4, 0, plain);
  write_job(8, 1, 4, 1, annot);
  g_assert_cmpint(test_wisp_run((const char *[]){"calibrate", plain, "--cluster", "dgx-h100", "--library", "ideal",
                                                 "-o", cal, NULL}, NULL), ==, 0);
  char *e0 = NULL, *e1 = NULL;
  double w0 = predict(plain, cal, card, "tp=4,pp=2,mb=4,sched=1f1b", json, &e0);
  double w1 = predict(annot, cal, card, "tp=4,pp=2,mb=4,sched=1f1b", json, &e1);
  double truth = (double)write_job(4, 2, 4, 0, NULL);
  g_test_message("from TP8: TP4 PP2 mb4: true %.3f ms, pattern %.3f ms, annotations %.3f ms", truth / 1e6, w0 / 1e6,
                 w1 / 1e6);
  g_assert_nonnull(strstr(e1, "model: layers from module annotations: 16 TransformerLayer instances of 10 operations"));
  g_assert_nonnull(strstr(e1, "as the kernel pattern and the card's num_layers"));
  g_assert_cmpfloat(w1, ==, w0);
  g_assert_cmpfloat(fabs(w1 - truth) / truth, <=, 0.05);
  g_free(e0);
  g_free(e1);
  test_rm_rf(dir);
  g_free(dir);
  g_free(plain);
  g_free(annot);
  g_free(cal);
  g_free(json);
  g_free(card);
}

/* Annotations that disagree: with the job (two layers per instance) and
 * with the card (num_layers 8 where the job has 16: the card gives 4 layers
 * per stage, the kernel pattern follows it with a 20-operation period,
 * the annotations name 8). */
static void check_disagree(void)
{
  if (!g_getenv("WISP_BIN")) {
    g_test_skip("WISP_BIN not set (run through make check)");
    return;
  }
  char *dir = g_dir_make_tmp("wisp-annot2-XXXXXX", NULL);
  char *wrong = g_build_filename(dir, "wrong", NULL), *annot = g_build_filename(dir, "annot", NULL);
  char *cal = g_build_filename(dir, "cal.yaml", NULL), *json = g_build_filename(dir, "s.json", NULL);
  char *card = g_build_filename(wrong, "card.yaml", NULL), *half = g_build_filename(dir, "half.yaml", NULL);
  write_job(4, 2, 4, 2, wrong);
  write_job(4, 2, 4, 1, annot);
  g_assert_cmpint(test_wisp_run((const char *[]){"calibrate", wrong, "--cluster", "dgx-h100", "--library", "ideal",
                                                 "-o", cal, NULL}, NULL), ==, 0);
  char *e = NULL;
  predict(wrong, cal, card, "tp=2,pp=4,mb=8,sched=1f1b", json, &e);
  g_assert_nonnull(strstr(e, "model: warning: the module annotations disagree and are not used: they name 4 "
                             "TransformerLayer instances in rank 0's first forward, where the card's num_layers "
                             "gives 8 and the kernel pattern finds them"));
  g_clear_pointer(&e, g_free);
  char *text = NULL;
  g_assert_true(g_file_get_contents(card, &text, NULL, NULL));
  char *at = strstr(text, "num_layers: 16");
  g_assert_nonnull(at);
  memcpy(at, "num_layers:  8", 14);
  g_assert_true(g_file_set_contents(half, text, -1, NULL));
  g_free(text);
  predict(annot, cal, half, "tp=2,pp=4,mb=8,sched=1f1b", json, &e);
  g_assert_nonnull(strstr(e, "model: warning: the module annotations disagree and are not used: they name 8 "
                             "TransformerLayer instances in rank 0's first forward, where the card's num_layers "
                             "gives 4"));
  g_free(e);
  test_rm_rf(dir);
  g_free(dir);
  g_free(wrong);
  g_free(annot);
  g_free(cal);
  g_free(json);
  g_free(card);
  g_free(half);
}

/* A linear patch embedding (one GEMM with the layers' GEMM kernel)
 * before TP1 x PP8's layers (norm, QKV, attention, projection, norm, FC1,
 * GeLU, FC2: they end with that GEMM).  Rank 0's first forward is then
 * G + 2 x (8 ops ending in G), which repeats with period 8 from operation
 * 0 as well as from 1.  The pattern took the first, a layer rotated by
 * one, which the last stage does not run, and wisp stopped; the
 * annotations start the layers at operation 1.  Now the pattern takes the
 * later of equal readings on a first stage (its layers run up to its
 * send; et_model.c best_period), so both agree: the annotated trace says
 * so, the plain trace's predictions equal the annotated one's exactly,
 * and the TP1 re-partitions come within 5 %.  The network is calibrated
 * from a TP4 x PP2 trace of the same machine (TP1's only collective is
 * the step's 4 KiB all-reduce). */
static void check_patch_embed(void)
{
  if (!g_getenv("WISP_BIN")) {
    g_test_skip("WISP_BIN not set (run through make check)");
    return;
  }
  char *dir = g_dir_make_tmp("wisp-annot3-XXXXXX", NULL);
  char *plain = g_build_filename(dir, "plain", NULL), *annot = g_build_filename(dir, "annot", NULL);
  char *net = g_build_filename(dir, "net", NULL), *cal = g_build_filename(dir, "cal.yaml", NULL);
  char *json = g_build_filename(dir, "s.json", NULL), *card = g_build_filename(plain, "card.yaml", NULL);
  write_job(4, 2, 4, 0, net);
  write_job_as(1, 8, 8, 0, TRUE, plain);
  write_job_as(1, 8, 8, 1, TRUE, annot);
  g_assert_cmpint(test_wisp_run((const char *[]){"calibrate", net, "--cluster", "dgx-h100", "--library", "ideal",
                                                 "-o", cal, NULL}, NULL), ==, 0);
  static const int targets_pp[][2] = {{8, 8}, {4, 8}, {2, 4}, {4, 4}};
  for (size_t i = 0; i < G_N_ELEMENTS(targets_pp); i++) {
    char *spec = g_strdup_printf("tp=1,pp=%d,mb=%d", targets_pp[i][0], targets_pp[i][1]), *e = NULL;
    double truth = (double)write_job_as(1, targets_pp[i][0], targets_pp[i][1], 0, TRUE, NULL);
    double w = predict(annot, cal, card, spec, json, &e), wp = predict(plain, cal, card, spec, json, NULL);
    g_test_message("patch embedding, from TP1 PP8 annotated: %s: true %.3f ms, wisp %.3f ms (%+.2f %%)", spec,
                   truth / 1e6, w / 1e6, 100.0 * (w - truth) / truth);
    g_assert_nonnull(strstr(e, "model: layers from module annotations: 2 TransformerLayer instances of 8 operations "
                               "from operation 1"));
    g_assert_nonnull(strstr(e, "as the kernel pattern and the card's num_layers"));
    g_assert_cmpfloat(wp, ==, w);
    g_assert_cmpfloat(fabs(w - truth) / truth, <=, 0.05);
    g_free(e);
    g_free(spec);
  }
  test_rm_rf(dir);
  g_free(dir);
  g_free(plain);
  g_free(annot);
  g_free(net);
  g_free(cal);
  g_free(json);
  g_free(card);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/repartition-annot/annotated", check_annotated);
  g_test_add_func("/repartition-annot/one-stage", check_one_stage);
  g_test_add_func("/repartition-annot/disagree", check_disagree);
  g_test_add_func("/repartition-annot/patch-embed", check_patch_embed);
  return g_test_run();
}
