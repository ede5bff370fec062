/* fe_card.c: workload cards (`--card FILE`, fe.h fe_workload_card).
 *
 * A card is CCL-Bench's YAML job description (workload.model,
 * workload.data, workload.hardware, Model-executor.
 * model_plan_parallelization; ../shared/reference/studies.md §3) with
 * wisp's additions for MoE communication (workload.model.hidden_size,
 * moe_top_k, moe_routing, moe_dispatch_precision; workload.data.
 * tokens_per_rank).  The tree is flattened into dotted paths of its scalar
 * leaves ("workload.model.hidden_size" -> "7168", with the line), then the
 * few keys wisp reads are looked up; everything else is ignored.  Cost:
 * O(nodes of the document).
 */
#include "config.h"

#include "frontends/fe.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

typedef struct {
  GHashTable *leaf;  /* dotted path -> value (char*) */
  GHashTable *line;  /* dotted path -> GINT_TO_POINTER(line) */
} card_tree;

static void flatten(yaml_document_t *d, yaml_node_t *n, const char *path, card_tree *t, int depth)
{
  if (!n || depth > 16)
    return;
  if (n->type == YAML_SCALAR_NODE) {
    g_hash_table_replace(t->leaf, g_strdup(path), g_strndup((const char *)n->data.scalar.value,
                                                            n->data.scalar.length));
    g_hash_table_replace(t->line, g_strdup(path), GINT_TO_POINTER((int)n->start_mark.line + 1));
    return;
  }
  if (n->type != YAML_MAPPING_NODE)
    return; /* lists (bandwidth_gbps, metric sources) are not read */
  for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
    yaml_node_t *k = yaml_document_get_node(d, p->key);
    if (!k || k->type != YAML_SCALAR_NODE)
      continue;
    char *sub = *path ? g_strdup_printf("%s.%s", path, (const char *)k->data.scalar.value)
                      : g_strdup((const char *)k->data.scalar.value);
    flatten(d, yaml_document_get_node(d, p->value), sub, t, depth + 1);
    g_free(sub);
  }
}

/* A positive whole number at key, -1 when absent; FALSE (error set) when
 * present but not a positive integer. */
static gboolean card_int(const card_tree *t, const char *path, const char *key, int64_t *out, GError **error)
{
  const char *v = g_hash_table_lookup(t->leaf, key);
  *out = -1;
  if (!v)
    return TRUE;
  char *end;
  errno = 0;
  gint64 x = g_ascii_strtoll(v, &end, 10);
  if (end == v || *end || errno || x <= 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s:%d: %s: expected a positive whole number, got '%s'",
                path, GPOINTER_TO_INT(g_hash_table_lookup(t->line, key)), key, v);
    return FALSE;
  }
  *out = x;
  return TRUE;
}

/* Bytes per element of a card precision (CCL-Bench writes bf16; c10 and
 * NumPy spellings are accepted too); 0 when unknown. */
static int precision_bytes(const char *p)
{
  static const struct { const char *n; int b; } tab[] = {
    { "bf16", 2 }, { "bfloat16", 2 }, { "fp16", 2 }, { "float16", 2 }, { "half", 2 }, { "fp32", 4 },
    { "float32", 4 }, { "float", 4 }, { "tf32", 4 }, { "fp8", 1 }, { "float8", 1 }, { "e4m3", 1 },
    { "fp8_e4m3", 1 }, { "fp8_e5m2", 1 }, { "int8", 1 }, { "fp64", 8 }, { "float64", 8 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(tab); i++)
    if (!g_ascii_strcasecmp(p, tab[i].n))
      return tab[i].b;
  return 0;
}

static gboolean card_precision(const card_tree *t, const char *path, const char *key, char **name, int *bytes,
                               GError **error)
{
  const char *v = g_hash_table_lookup(t->leaf, key);
  if (!v)
    return TRUE;
  *bytes = precision_bytes(v);
  if (!*bytes) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s:%d: %s: unknown precision '%s' (use bf16, fp16, fp32 "
                "or fp8)", path, GPOINTER_TO_INT(g_hash_table_lookup(t->line, key)), key, v);
    return FALSE;
  }
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
static gboolean card_derive(fe_workload_card *c, const card_tree *t, GError **error)
{
  int64_t heads, head_dim, batch, seq;
  if (!card_int(t, c->path, "workload.model.num_heads", &heads, error) ||
      !card_int(t, c->path, "workload.model.head_dim", &head_dim, error) ||
      !card_int(t, c->path, "workload.data.batch_size", &batch, error) ||
      !card_int(t, c->path, "workload.data.seq_len", &seq, error))
    return FALSE;
  if (c->hidden_size < 0 && heads > 0 && head_dim > 0) {
    c->hidden_size = heads * head_dim;
    g_ptr_array_add(c->assumptions, g_strdup_printf("hidden size = num_heads x head_dim = %" G_GINT64_FORMAT
                                                    " (no workload.model.hidden_size; wrong for models whose "
                                                    "attention width differs from the hidden size, e.g. MLA)",
                                                    c->hidden_size));
  }
  if (c->tokens_per_rank < 0 && batch > 0 && seq > 0) {
    c->tokens_per_rank = batch * seq;
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
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED, "%s:%d: workload.model.moe_routing: '%s' is not "
                "modelled; only 'balanced' is", c->path,
                GPOINTER_TO_INT(g_hash_table_lookup(t->line, "workload.model.moe_routing")), c->routing);
    return FALSE;
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

fe_workload_card *fe_card_load(const char *path, GError **error)
{
  FILE *f = fopen(path, "rb");
  if (!f) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot open the workload card: %s", path, g_strerror(errno));
    return NULL;
  }
  yaml_parser_t p;
  yaml_document_t d;
  yaml_parser_initialize(&p);
  yaml_parser_set_input_file(&p, f);
  if (!yaml_parser_load(&p, &d)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s:%zu: malformed YAML: %s", path,
                p.problem_mark.line + 1, p.problem ? p.problem : "unknown error");
    yaml_parser_delete(&p);
    fclose(f);
    return NULL;
  }
  card_tree t = { g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free),
                  g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL) };
  yaml_node_t *root = yaml_document_get_root_node(&d);
  gboolean is_map = root && root->type == YAML_MAPPING_NODE;
  flatten(&d, root, "", &t, 0);
  yaml_document_delete(&d);
  yaml_parser_delete(&p);
  fclose(f);
  fe_workload_card *c = g_new0(fe_workload_card, 1);
  c->path = g_strdup(path);
  c->assumptions = g_ptr_array_new_with_free_func(g_free);
  const char *routing = g_hash_table_lookup(t.leaf, "workload.model.moe_routing");
  c->routing = routing ? g_strdup(routing) : NULL;
  gboolean ok =
    is_map &&
    card_int(&t, path, "workload.model.hidden_size", &c->hidden_size, error) &&
    card_int(&t, path, "workload.data.tokens_per_rank", &c->tokens_per_rank, error) &&
    card_int(&t, path, "workload.model.moe_top_k", &c->top_k, error) &&
    card_int(&t, path, "Model-executor.model_plan_parallelization.ep", &c->ep_degree, error) &&
    card_int(&t, path, "Model-executor.model_plan_parallelization.tp", &c->tp_degree, error) &&
    card_int(&t, path, "workload.hardware.xpu_spec.count_per_node", &c->gpus_per_node, error) &&
    card_precision(&t, path, "workload.model.precision", &c->dtype, &c->dtype_bytes, error) &&
    card_precision(&t, path, "workload.model.moe_dispatch_precision", &c->dispatch_dtype,
                   &c->dispatch_dtype_bytes, error) &&
    card_derive(c, &t, error);
  if (!ok && error && !*error)
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s: a workload card is a YAML mapping (CCL-Bench's card "
                "layout: workload.model, workload.data, Model-executor)", path);
  g_hash_table_destroy(t.leaf);
  g_hash_table_destroy(t.line);
  if (!ok) {
    fe_card_free(c);
    return NULL;
  }
  return c;
}
