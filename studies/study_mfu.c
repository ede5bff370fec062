/* study_mfu.c: CCL-Bench workload cards as the metrics read them (model
 * size, data shape, device peak) and model FLOPs utilisation from a card or
 * from an XLA profile's model FLOPs (study_metrics.h; doc/metrics.md
 * "MFU").  Every function here is O(1) apart from the card lookups.
 */
#include "config.h"
#include "studies/study_metrics_internal.h"

#include <math.h>
#include <string.h>

/* ---- workload cards ---- */

double study_peak_tflops_of(const char *hw_model)
{
  static const struct { const char *name; double tflops; } peaks[] = {
    {"nvidia_a100", 312.0}, {"nvidia_h100", 989.0}, {"tpu_v6e", 918.0},
  };
  for (guint i = 0; hw_model && i < G_N_ELEMENTS(peaks); i++)
    if (g_ascii_strcasecmp(hw_model, peaks[i].name) == 0)
      return peaks[i].tflops;
  return 0;
}

/* A required count or number of the MFU model; the error of a missing one
 * names every key MFU needs. */
static gboolean mfu_need(const cfg_card *doc, const char *key, gboolean count, double *out, GError **error)
{
  gboolean found = FALSE;
  int64_t n = 0;
  if (count ? !cfg_card_count(doc, key, G_MAXINT32, &n, &found, error)
            : !cfg_card_number(doc, key, out, &found, error))
    return FALSE;
  if (!found)
    return cfg_card_fail(doc, key, WISP_ERROR_INVALID, error, "missing (MFU needs workload.model.model_arch."
                         "{num_params, num_layers, head_dim, num_heads} and workload.data.{batch_size, seq_len})");
  if (count)
    *out = (double)n;
  return TRUE;
}

gboolean study_card_from_doc(const cfg_card *doc, study_card *out, GError **error)
{
  memset(out, 0, sizeof *out);
  out->training = TRUE;
  if (!cfg_card_has(doc, "workload.model.model_arch")) {
    /* Not an MFU card: MFU says so, the other uses of --card go on. */
    out->no_model = TRUE;
    return TRUE;
  }
  static const char *const phases[] = {"training", "inference", NULL};
  const char *phase = NULL, *hw = NULL;
  int64_t total = 0;
  gboolean ok =
    mfu_need(doc, "workload.model.model_arch.num_params", FALSE, &out->num_params, error) &&
    cfg_card_number(doc, "workload.model.model_arch.num_params_embedding", &out->num_params_embedding, NULL,
                    error) &&
    mfu_need(doc, "workload.model.model_arch.num_layers", TRUE, &out->num_layers, error) &&
    mfu_need(doc, "workload.model.model_arch.head_dim", TRUE, &out->head_dim, error) &&
    mfu_need(doc, "workload.model.model_arch.num_heads", TRUE, &out->num_heads, error) &&
    mfu_need(doc, "workload.data.batch_size", TRUE, &out->batch_size, error) &&
    mfu_need(doc, "workload.data.seq_len", TRUE, &out->seq_len, error) &&
    cfg_card_count(doc, "workload.hardware.xpu_spec.total_count", G_MAXINT32, &total, NULL, error);
  out->num_params_active = out->num_params;
  ok = ok &&
       cfg_card_number(doc, "workload.model.model_arch.num_params_active", &out->num_params_active, NULL, error) &&
       cfg_card_choice(doc, "workload.model.phase", phases, &phase, NULL, error);
  if (!ok)
    return FALSE;
  /* Parameter counts in [1, 10^15] (the largest published models hold a few
   * 10^12): 1e300 would print a 290-digit MFU.  Embedding and active counts
   * lie within the total. */
  static const char *const pkeys[] = {"workload.model.model_arch.num_params",
                                      "workload.model.model_arch.num_params_active",
                                      "workload.model.model_arch.num_params_embedding"};
  const double pvals[] = {out->num_params, out->num_params_active, out->num_params_embedding};
  for (int k = 0; k < 3; k++) {
    double lo = k == 2 ? 0.0 : 1.0, hi = k == 0 ? 1e15 : out->num_params;
    if (!(pvals[k] >= lo && pvals[k] <= hi))
      return cfg_card_fail(doc, pkeys[k], WISP_ERROR_INVALID, error, "%g is out of range: give a parameter count "
                           "from %g to %g%s", pvals[k], lo, hi, k ? " (at most num_params)" : "");
  }
  out->total_count = (int)total;
  out->training = phase == NULL || strcmp(phase, "training") == 0;
  if ((hw = cfg_card_get(doc, "workload.hardware.xpu_spec.model", NULL)) != NULL) {
    out->hw_model = g_strdup(hw);
    out->peak_tflops = study_peak_tflops_of(out->hw_model);
  }
  return TRUE;
}

void study_card_clear(study_card *c)
{
  g_free(c->hw_model);
  c->hw_model = NULL;
}

double study_card_flop_per_token(const study_card *c)
{
  double dense = c->num_params_active - c->num_params_embedding;
  double attn = c->num_layers * c->head_dim * c->num_heads * c->seq_len;
  return c->training ? 6 * dense + 12 * attn : 2 * dense + 4 * attn;
}

/* ---- MFU ---- */

void study_metrics_mfu(study_metrics *m, const study_mfu_input *in)
{
  m->mfu_pct = NAN;
  m->mfu_source = "no workload card (--card) or model_flops";
  if (in == NULL || m->avg_step_time <= 0)
    return;
  double step_s = (double)m->avg_step_time * 1e-12;
  double peak = in->peak_tflops > 0 ? in->peak_tflops : in->card ? in->card->peak_tflops : 0;
  if (in->card && in->card->no_model && in->model_flops == 0) {
    m->mfu_source = "the workload card has no workload.model.model_arch (num_params, num_layers, head_dim, num_heads)";
    return;
  }
  study_mfu_input flops_only = {NULL, in->model_flops, in->peak_tflops};
  if (in->card && in->card->no_model)
    in = &flops_only;
  if (in->card == NULL && in->model_flops == 0)
    return;
  if (peak <= 0) {
    m->mfu_source = "unknown peak: give hardware.xpu_spec.model (nvidia_a100, nvidia_h100, tpu_v6e) or --peak-tflops";
    return;
  }
  if (in->card) {
    const study_card *c = in->card;
    double world = c->total_count > 0 ? c->total_count : m->n_ranks;
    double tokens_per_s = c->batch_size * c->seq_len / step_s;
    m->mfu_pct = study_card_flop_per_token(c) * tokens_per_s / (world * peak * 1e12) * 100;
    m->mfu_source = "card";
  } else {
    /* Per chip and step: model_flops / (chips x steps), over the step time. */
    double per_chip_step = (double)in->model_flops / ((double)m->n_ranks * m->steps);
    m->mfu_pct = per_chip_step / step_s / (peak * 1e12) * 100;
    m->mfu_source = "model_flops";
  }
  /* Above 100 % the card's (or model_flops') FLOPs are more than the peak
   * could do in the measured step: the figure would be meaningless. */
  if (m->mfu_pct > 100) {
    m->mfu_source = in->card ? "above 100 %: the card does not describe this trace (its model and batch "
                    "need more FLOPs than the devices' peak allows in the step)" : "above 100 %: model_flops does "
                    "not describe this trace (more FLOPs than the devices' peak allows in the step)";
    m->mfu_pct = NAN;
  }
}
