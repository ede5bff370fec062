/* gt_par_gen.c: writes the traces and card of the ground-truth transformer
 * job (regress/gt_parallel.h) under one parallel configuration and prints
 * its true step time.
 *
 * Usage: gt_par_gen [--moe] [--tp N] [--pp N] [--dp N] [--ep N] [--cp N] [--grads-after] [--mb N] [--batch N]
 *                   [--sched gpipe|1f1b|interleaved_1f1b] [--vpp N] [--sp [--sp-regather] [--etp N]] [OUTDIR]
 * --moe starts from the MoE job (gt_par_init_moe: 8 ranks of data
 * parallelism, 16 experts, top-2, EP 4) instead of the dense one; the
 * other options change its configuration (e.g. --moe --ep 8).
 * With OUTDIR, writes OUTDIR/rank<r>.json and OUTDIR/card.yaml. */
#include "config.h"
#include "regress/gt_parallel.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
  gt_par_params p;
  gboolean moe = FALSE;
  for (int i = 1; i < argc; i++)
    moe = moe || strcmp(argv[i], "--moe") == 0;
  if (moe)
    gt_par_init_moe(&p);
  else
    gt_par_init(&p);
  int tp = p.tp, pp = p.pp, mb = p.mb, dp = p.dp, ep = p.ep, cp = p.cp, batch = p.global_batch;
  gboolean after = FALSE;
  int vpp = 2, annotate = 0;
  gboolean sp = FALSE, patch = FALSE, regather = FALSE;
  int etp = 1;
  char *sched = NULL;
  GOptionEntry entries[] = {
    {"moe", 0, 0, G_OPTION_ARG_NONE, &moe, "the MoE job (16 experts, top-2) instead of the dense one", NULL},
    {"dp", 0, 0, G_OPTION_ARG_INT, &dp, "data-parallel degree", "N"},
    {"batch", 0, 0, G_OPTION_ARG_INT, &batch, "global batch (sequences)", "N"},
    {"ep", 0, 0, G_OPTION_ARG_INT, &ep, "expert-parallel degree (divides dp; MoE only)", "N"},
    {"cp", 0, 0, G_OPTION_ARG_INT, &cp, "context-parallel degree (ring attention; pp 1, dense only)", "N"},
    {"grads-after", 0, 0, G_OPTION_ARG_NONE, &after, "gradient reductions after the backward (not overlapping it)",
     NULL},
    {"tp", 0, 0, G_OPTION_ARG_INT, &tp, "tensor-parallel degree", "N"},
    {"pp", 0, 0, G_OPTION_ARG_INT, &pp, "pipeline stages", "N"},
    {"mb", 0, 0, G_OPTION_ARG_INT, &mb, "micro-batch count", "N"},
    {"sched", 0, 0, G_OPTION_ARG_STRING, &sched, "pipeline schedule", "gpipe|1f1b|interleaved_1f1b"},
    {"vpp", 0, 0, G_OPTION_ARG_INT, &vpp, "interleaved: layer chunks per rank (default 2)", "N"},
    {"patch-embed", 0, 0, G_OPTION_ARG_NONE, &patch, "a linear patch embedding (one GEMM) instead of the lookup", NULL},
    {"sp", 0, 0, G_OPTION_ARG_NONE, &sp, "Megatron's sequence parallelism (tp > 1)", NULL},
    {"sp-regather", 0, 0, G_OPTION_ARG_NONE, &regather, "with --sp: the weight gradients' re-gather, the embedding's "
     "reduce-scatter and the norms' gradient all-reduce", NULL},
    {"etp", 0, 0, G_OPTION_ARG_INT, &etp, "expert tensor parallelism (1, or tp with --sp --moe)", "N"},
    {"annotate", 0, 0, G_OPTION_ARG_INT, &annotate, "module annotations: 0 none, 1 Megatron's (with_modules), "
     "2 two layers per TransformerLayer (disagreeing)", "N"},
    {NULL},
  };
  GError *error = NULL;
  GOptionContext *ctx = g_option_context_new("[OUTDIR]");
  g_option_context_add_main_entries(ctx, entries, NULL);
  if (!g_option_context_parse(ctx, &argc, &argv, &error) || argc > 2) {
    fprintf(stderr, "gt_par_gen: %s\n", error ? error->message : "one OUTDIR at most");
    return 2;
  }
  g_option_context_free(ctx);
  p.tp = tp;
  p.pp = pp;
  p.mb = mb;
  p.dp = dp;
  p.ep = ep;
  p.cp = cp;
  p.annotate = annotate;
  p.sequence_parallel = sp;
  p.sp_regather = regather;
  p.etp = etp;
  p.patch_embed = patch;
  if (after)
    p.overlap_grad_reduce = FALSE;
  p.global_batch = batch;
  if (sched && strcmp(sched, "gpipe") == 0)
    p.sched = GT_SCHED_GPIPE;
  if (sched && strcmp(sched, "interleaved_1f1b") == 0) {
    p.sched = GT_SCHED_INTERLEAVED;
    p.vpp = vpp;
  }
  int64_t step = 0;
  if (!gt_par_run(&p, argc == 2 ? argv[1] : NULL, &step, &error)) {
    fprintf(stderr, "gt_par_gen: %s\n", error->message);
    return 1;
  }
  if (argc == 2) {
    char *card = gt_par_card(&p), *path = g_build_filename(argv[1], "card.yaml", NULL);
    if (!g_file_set_contents(path, card, -1, &error)) {
      fprintf(stderr, "gt_par_gen: %s\n", error->message);
      return 1;
    }
    g_free(card);
    g_free(path);
  }
  printf("tp %d pp %d dp %d ep %d cp %d mb %d %s: step %.3f ms\n", p.tp, p.pp, p.dp, p.ep, p.cp, p.mb,
         p.sched == GT_SCHED_GPIPE ? "gpipe" : p.sched == GT_SCHED_INTERLEAVED ? "interleaved_1f1b" : "1f1b",
         (double)step / 1e6);
  g_free(sched);
  return 0;
}
