/* fe_card.c: workload cards (`--card FILE`, fe.h fe_workload_card).
 *
 * A card is CCL-Bench's YAML job description (workload.model,
 * workload.data, workload.hardware, Model-executor.
 * model_plan_parallelization; ../shared/reference/studies.md §3) with
 * wisp's additions for MoE communication (workload.model.hidden_size,
 * moe_top_k, moe_routing, moe_dispatch_precision; workload.data.
 * tokens_per_rank).  The card is parsed once by config/cfg_card.h; this
 * reader takes the MoE keys from that document (the frontends' section of
 * the card) and states every derived value as an assumption.  Cost: O(1)
 * lookups.
 */
#include "config.h"

#include "frontends/fe.h"

#include <string.h>

/* A positive whole number at key, -1 when absent. */
static gboolean card_int(const cfg_card *doc, const char *key, int64_t *out, GError **error)
{
  *out = -1;
  return cfg_card_count(doc, key, G_MAXINT64, out, NULL, error);
}

/* A parallel degree, bounded as the layout reader (cli/wisp_load.c) bounds
 * the same keys, so both accept the same values. */
static gboolean card_degree(const cfg_card *doc, const char *key, int64_t *out, GError **error)
{
  *out = -1;
  return cfg_card_count(doc, key, CFG_CARD_MAX_DEGREE, out, NULL, error);
}

/* A precision at key: name and bytes, untouched when absent. */
static gboolean card_precision(const cfg_card *doc, const char *key, char **name, int *bytes, GError **error)
{
  const char *v = NULL;
  gboolean found = FALSE;
  if (!cfg_card_precision(doc, key, &v, bytes, &found, error))
    return FALSE;
  if (found)
    *name = g_strdup(v);
  return TRUE;
}

void fe_card_free(fe_workload_card *c)
{
  if (!c)
    return;
  g_free(c->path);
  g_free(c->dtype);
  g_free(c->dispatch_dtype);
  g_free(c->routing);
  if (c->assumptions)
    g_ptr_array_free(c->assumptions, TRUE);
  g_free(c);
}

/* The values derived from others, each stated in c->assumptions. */
static gboolean card_derive(fe_workload_card *c, const cfg_card *doc, GError **error)
{
  int64_t heads, head_dim, batch, seq;
  if (!card_int(doc, "workload.model.model_arch.num_heads", &heads, error) ||
      !card_int(doc, "workload.model.model_arch.head_dim", &head_dim, error) ||
      !card_int(doc, "workload.data.batch_size", &batch, error) ||
      !card_int(doc, "workload.data.seq_len", &seq, error))
    return FALSE;
  /* Each derived product is checked: two counts the reader accepts (up to
   * 2^63 - 1 each) can multiply past int64's range. */
  if (c->hidden_size < 0 && heads > 0 && head_dim > 0) {
    if (__builtin_mul_overflow(heads, head_dim, &c->hidden_size))
      return cfg_card_fail(doc, "workload.model.model_arch.head_dim", WISP_ERROR_INVALID, error,
                           "num_heads x head_dim (%" G_GINT64_FORMAT " x %" G_GINT64_FORMAT ") is past 2^63 - 1; "
                           "fix them or give workload.model.hidden_size", heads, head_dim);
    g_ptr_array_add(c->assumptions, g_strdup_printf("hidden size = model_arch.num_heads x head_dim = %" G_GINT64_FORMAT
                                                    " (no workload.model.hidden_size; wrong for models whose "
                                                    "attention width differs from the hidden size, e.g. MLA)",
                                                    c->hidden_size));
  }
  if (c->tokens_per_rank < 0 && batch > 0 && seq > 0) {
    if (__builtin_mul_overflow(batch, seq, &c->tokens_per_rank))
      return cfg_card_fail(doc, "workload.data.seq_len", WISP_ERROR_INVALID, error,
                           "batch_size x seq_len (%" G_GINT64_FORMAT " x %" G_GINT64_FORMAT ") is past 2^63 - 1; "
                           "fix them or give workload.data.tokens_per_rank", batch, seq);
    g_ptr_array_add(c->assumptions, g_strdup_printf("tokens per rank per MoE layer call = batch_size x seq_len = "
                                                    "%" G_GINT64_FORMAT " (no workload.data.tokens_per_rank; "
                                                    "batch_size read as the per-rank micro-batch)",
                                                    c->tokens_per_rank));
  }
  if (!c->dispatch_dtype && c->dtype) {
    c->dispatch_dtype = g_strdup(c->dtype);
    c->dispatch_dtype_bytes = c->dtype_bytes;
  }
  if (!c->routing) {
    c->routing = g_strdup("balanced");
    g_ptr_array_add(c->assumptions, g_strdup("MoE routing balanced (no workload.model.moe_routing): every rank "
                                             "sends tokens x top-k / EP token copies to each member of its EP "
                                             "group, itself included; each copy travels separately (no per-node "
                                             "deduplication)"));
  } else if (strcmp(c->routing, "balanced")) {
    return cfg_card_fail(doc, "workload.model.moe_routing", WISP_ERROR_UNSUPPORTED, error, "'%s' is not modelled; "
                         "only 'balanced' is", c->routing);
  } else {
    g_ptr_array_add(c->assumptions, g_strdup("MoE routing balanced (stated by the card): tokens x top-k / EP "
                                             "token copies to each member of the EP group; each copy travels "
                                             "separately (no per-node deduplication)"));
  }
  if (c->ep_degree < 0)
    g_ptr_array_add(c->assumptions, g_strdup("no EP degree (model_plan_parallelization.ep): MoE all-to-all "
                                             "groups span every rank"));
  return TRUE;
}

fe_workload_card *fe_card_from_doc(const cfg_card *doc, GError **error)
{
  fe_workload_card *c = g_new0(fe_workload_card, 1);
  c->path = g_strdup(cfg_card_path(doc));
  c->assumptions = g_ptr_array_new_with_free_func(g_free);
  const char *routing = cfg_card_get(doc, "workload.model.moe_routing", NULL);
  c->routing = routing ? g_strdup(routing) : NULL;
  const char *phase = cfg_card_get(doc, "workload.model.phase", NULL);
  c->inference = phase && g_ascii_strcasecmp(phase, "inference") == 0;
  gboolean ok =
    card_int(doc, "workload.model.hidden_size", &c->hidden_size, error) &&
    card_int(doc, "workload.data.tokens_per_rank", &c->tokens_per_rank, error) &&
    card_int(doc, "workload.model.moe_top_k", &c->top_k, error) &&
    card_degree(doc, "Model-executor.model_plan_parallelization.ep", &c->ep_degree, error) &&
    card_degree(doc, "Model-executor.model_plan_parallelization.tp", &c->tp_degree, error) &&
    card_int(doc, "workload.hardware.xpu_spec.count_per_node", &c->gpus_per_node, error) &&
    card_precision(doc, "workload.model.precision", &c->dtype, &c->dtype_bytes, error) &&
    card_precision(doc, "workload.model.moe_dispatch_precision", &c->dispatch_dtype, &c->dispatch_dtype_bytes,
                   error) &&
    card_derive(c, doc, error);
  if (!ok) {
    fe_card_free(c);
    return NULL;
  }
  return c;
}
