/* wisp_repart.c: the card's model and hardware for re-partitioning
 * (chakra/et_model.h, et_repart.h; issue 32), and the --scale path that
 * re-partitions a loaded workload.
 *
 * Card keys (doc/card.md): workload.model.{hidden_size, precision},
 * workload.model.model_arch.{num_layers, num_heads, head_dim,
 * ffn_hidden_size, vocab_size}, workload.data.{batch_size (the global
 * batch, sequences), seq_len}, Model-executor.model_plan_parallelization.
 * {micro_batches, pipeline_schedule, vpp, cp_comm_type, sequence_parallel,
 * pp_transfers_on_tp_stream}, workload.hardware.xpu_spec.{model,
 * peak_tflops, hbm_bandwidth_GBps, hbm_capacity_GB, kernel_floor_us,
 * count_per_node}; memory: Model-executor.model_plan_parallelization.
 * {zero_stage (0..3; dp_shard > 1 without it: 3), activation_recompute
 * (none, selective, full), overlap_grad_reduce (true, false: where the
 * gradient reductions go when the trace has none)}; the traced cp from
 * the layout (the card's cp); MoE: model_arch.{num_experts, moe_ffn_hidden_size
 * (default ffn_hidden_size)}, workload.model.moe_top_k,
 * Model-executor.model_plan_parallelization.expert_tensor_parallel_size
 * (only 1 is modelled; more is refused by et_repart_check). */
#include "config.h"
#include "cli/wisp_load.h"
#include "cli/wisp_repart.h"

#include <stdio.h>
#include <string.h>

/* Peak dense bf16 TFLOP/s, HBM GB/s and GB and SM count of the GPUs CCL-Bench cards name
 * (vendors' data sheets). */
static const struct { const char *name; double tflops, hbm_GBps, hbm_GB; int sms; } gpus[] = {
  {"nvidia_a100", 312, 2039, 80, 108},
  {"nvidia_h100", 989, 3350, 80, 132},
  {"nvidia_h200", 989, 4800, 141, 132},
  {"nvidia_b200", 2250, 8000, 192, 148},
  {"tpu_v6e", 918, 1640, 32, 0},
};
/* A kernel's fixed time when the card does not give kernel_floor_us and
 * the trace's GEMMs do not give one (et_model.h): 2 us, the order of an
 * empty kernel's measured duration on recent GPUs (an assumption,
 * printed). */
#define DEFAULT_KERNEL_FLOOR_US 2.0

#define ARCH "workload.model.model_arch."
#define PLAN "Model-executor.model_plan_parallelization."
#define XPU "workload.hardware.xpu_spec."

static void note_missing(GString *miss, const char *key)
{
  g_string_append_printf(miss, "%s%s", miss->len ? ", " : "", key);
}

static gboolean count_key(const cfg_card *card, const char *key, int *out, GString *miss, GError **error)
{
  int64_t v = 0;
  gboolean found = FALSE;
  if (!cfg_card_count(card, key, CFG_CARD_MAX_DEGREE * 64ll, &v, &found, error))
    return FALSE;
  if (found)
    *out = (int)v;
  else if (miss)
    note_missing(miss, key);
  return TRUE;
}

static gboolean hardware(const cfg_card *card, et_model_card *out, GString *miss, GError **error)
{
  const char *hw = cfg_card_get(card, XPU "model", NULL);
  for (size_t i = 0; hw && i < G_N_ELEMENTS(gpus); i++)
    if (g_ascii_strcasecmp(hw, gpus[i].name) == 0) {
      out->peak_flops = gpus[i].tflops * 1e12;
      out->hbm_Bps = gpus[i].hbm_GBps * 1e9;
      out->hbm_bytes = gpus[i].hbm_GB * 1e9;
      out->sms = gpus[i].sms;
    }
  out->hw = g_strdup(hw);
  double v = 0;
  gboolean found = FALSE;
  if (!cfg_card_number(card, XPU "peak_tflops", &v, &found, error))
    return FALSE;
  if (found)
    out->peak_flops = v * 1e12;
  if (!cfg_card_number(card, XPU "hbm_bandwidth_GBps", &v, &found, error))
    return FALSE;
  if (found)
    out->hbm_Bps = v * 1e9;
  if (!cfg_card_number(card, XPU "hbm_capacity_GB", &v, &found, error))
    return FALSE;
  if (found)
    out->hbm_bytes = v * 1e9;
  if (!cfg_card_number(card, XPU "kernel_floor_us", &v, &found, error))
    return FALSE;
  out->kernel_floor_given = found;
  if (!wisp_ps_from_us(found ? v : DEFAULT_KERNEL_FLOOR_US, &out->kernel_floor_ps))
    return cfg_card_fail(card, XPU "kernel_floor_us", WISP_ERROR_INVALID, error, "out of range");
  if (out->peak_flops <= 0 || out->hbm_Bps <= 0 || out->hbm_bytes <= 0)
    note_missing(miss, XPU "model (nvidia_a100, nvidia_h100, nvidia_h200, nvidia_b200, tpu_v6e) or peak_tflops, "
                 "hbm_bandwidth_GBps and hbm_capacity_GB");
  return TRUE;
}

gboolean wisp_card_model(const cfg_card *card, const et_layout *l, et_model_card *out, GError **error)
{
  memset(out, 0, sizeof *out);
  out->sched = -1;
  out->source = g_strdup(cfg_card_path(card));
  GString *miss = g_string_new(NULL);
  int head_dim = 0;
  gboolean ok = count_key(card, ARCH "num_layers", &out->layers, miss, error) &&
                count_key(card, ARCH "num_heads", &out->heads, miss, error) &&
                count_key(card, ARCH "vocab_size", &out->vocab, miss, error) &&
                count_key(card, ARCH "ffn_hidden_size", &out->ffn, NULL, error) &&
                count_key(card, ARCH "head_dim", &head_dim, NULL, error) &&
                count_key(card, "workload.model.hidden_size", &out->hidden, NULL, error) &&
                count_key(card, "workload.data.batch_size", &out->global_batch, miss, error) &&
                count_key(card, "workload.data.seq_len", &out->seq, miss, error) &&
                count_key(card, PLAN "micro_batches", &out->mb, miss, error) && hardware(card, out, miss, error);
  if (ok && out->hidden == 0 && head_dim > 0 && out->heads > 0)
    out->hidden = head_dim * out->heads;
  if (ok && out->hidden == 0)
    note_missing(miss, "workload.model.hidden_size (or model_arch.num_heads and head_dim)");
  const char *prec = NULL;
  int bytes = 0;
  gboolean found = FALSE;
  ok = ok && cfg_card_precision(card, "workload.model.precision", &prec, &bytes, &found, error);
  out->dtype_bytes = found ? bytes : 2;
  static const char *const scheds[] = {"1f1b", "gpipe", "interleaved_1f1b", NULL};
  const char *sched = NULL;
  ok = ok && cfg_card_choice(card, PLAN "pipeline_schedule", scheds, &sched, &found, error);
  if (found)
    out->sched = strcmp(sched, "gpipe") == 0 ? ET_SCHED_GPIPE
                 : strcmp(sched, "interleaved_1f1b") == 0 ? ET_SCHED_INTERLEAVED : ET_SCHED_1F1B;
  ok = ok && count_key(card, PLAN "vpp", &out->vpp, NULL, error);
  static const char *const cp_comms[] = {"p2p", "all_gather", "a2a", "a2a+p2p", NULL};
  const char *cp_comm = NULL;
  ok = ok && cfg_card_choice(card, PLAN "cp_comm_type", cp_comms, &cp_comm, &found, error);
  out->cp_comm = ok && found && strcmp(cp_comm, "p2p") != 0 ? cp_comm : NULL;
  out->tp = MAX(l->degree[ET_DIM_TP], 1);
  out->pp = MAX(l->degree[ET_DIM_PP], 1);
  out->dp = MAX(l->degree[ET_DIM_DP], 1);
  out->ep = MAX(l->degree[ET_DIM_EP], 1);
  out->cp = MAX(l->degree[ET_DIM_CP], 1);
  static const char *const bools[] = {"true", "false", NULL};
  const char *overlap = NULL;
  ok = ok && cfg_card_choice(card, PLAN "overlap_grad_reduce", bools, &overlap, &found, error);
  out->grads_after = ok && found ? strcmp(overlap, "false") == 0 : -1;
  const char *sp = NULL;
  ok = ok && cfg_card_choice(card, PLAN "sequence_parallel", bools, &sp, &found, error);
  out->sp = ok && found && strcmp(sp, "true") == 0;
  static const char *const streams[] = {"none", "activations", "gradients", "both", NULL};
  const char *st = NULL;
  ok = ok && cfg_card_choice(card, PLAN "pp_transfers_on_tp_stream", streams, &st, &found, error);
  for (int k = 0; ok && found && streams[k]; k++)
    if (strcmp(st, streams[k]) == 0)
      out->tp_stream = k + 1;
  ok = ok && count_key(card, ARCH "num_experts", &out->experts, NULL, error) &&
       count_key(card, "workload.model.moe_top_k", &out->top_k, NULL, error) &&
       count_key(card, ARCH "moe_ffn_hidden_size", &out->moe_ffn, NULL, error) &&
       count_key(card, PLAN "expert_tensor_parallel_size", &out->etp, NULL, error) &&
       count_key(card, XPU "count_per_node", &out->gpus_per_node, NULL, error);
  if (ok && out->experts > 0 && out->top_k == 0)
    note_missing(miss, "workload.model.moe_top_k (the card has model_arch.num_experts)");
  if (ok && out->experts > 0 && out->moe_ffn == 0)
    out->moe_ffn = out->ffn;
  /* Memory: the ZeRO stage (FSDP, the card's dp_shard > 1: 3) and the
   * activation recomputation. */
  int zero = -1, shard = 0;
  ok = ok && count_key(card, PLAN "dp_shard", &shard, NULL, error);
  double z = 0;
  gboolean zfound = FALSE;
  ok = ok && cfg_card_number(card, PLAN "zero_stage", &z, &zfound, error);
  if (ok && zfound && (z != (int)z || z > 3))
    ok = cfg_card_fail(card, PLAN "zero_stage", WISP_ERROR_INVALID, error, "must be 0, 1, 2 or 3 (ZeRO's stages)");
  zero = zfound ? (int)z : shard > 1 ? 3 : 0;
  out->zero = zero;
  static const char *const recomputes[] = {"none", "selective", "full", NULL};
  const char *rc = NULL;
  gboolean rfound = FALSE;
  ok = ok && cfg_card_choice(card, PLAN "activation_recompute", recomputes, &rc, &rfound, error);
  out->recompute = !rfound ? 0 : strcmp(rc, "full") == 0 ? 2 : strcmp(rc, "selective") == 0 ? 1 : 0;
  if (miss->len)
    out->missing = g_strdup(miss->str);
  g_string_free(miss, TRUE);
  if (!ok)
    et_model_card_clear(out);
  return ok;
}

et_workload *wisp_repartition(et_workload *w, const et_layout *l, const cfg_card *card, const et_scale_request *rq,
                              gboolean quiet, GError **error)
{
  if (card == NULL) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "--scale with tp=, pp=, mb= or sched= re-partitions the model, which needs a workload card (--card "
                "FILE) with num_layers, num_heads, vocab_size, hidden_size, batch_size, seq_len, micro_batches and "
                "the GPU (doc/card.md)");
    et_workload_free(w);
    return NULL;
  }
  et_model_card c;
  et_model m;
  if (!wisp_card_model(card, l, &c, error)) {
    et_workload_free(w);
    return NULL;
  }
  if (!et_model_read(w, l, &c, &m, error)) {
    et_model_card_clear(&c);
    et_workload_free(w);
    return NULL;
  }
  et_repart_request r = {.tp = rq->tp, .pp = rq->pp, .dp = rq->dp, .mb = rq->mb, .sched = rq->sched, .ep = rq->ep,
                         .mbs = rq->mbs, .vpp = rq->vpp, .cp = rq->cp};
  GString *how = g_string_new(NULL);
  et_workload *o = et_repart_build(w->source, &m, &c, &r, how, error);
  if (o && !quiet)
    fprintf(stderr, "%s%s", m.how->str, how->str);
  g_string_free(how, TRUE);
  et_model_clear(&m);
  et_model_card_clear(&c);
  et_workload_free(w);
  return o;
}
