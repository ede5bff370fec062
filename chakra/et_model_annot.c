/* et_model_annot.c: what the module annotations of a trace say about its
 * layers (et_model_internal.h, et_model_annot_layers).
 *
 * A node's module path (et_graph_module: "GPTModel_0/TransformerBlock_0/
 * TransformerLayer_3/SelfAttention_3", from PyTorch's with_modules or
 * record_function ranges) names the layer it belongs to by its deepest
 * component that is a layer: Megatron's TransformerLayer (and the legacy
 * ParallelTransformerLayer), Hugging Face's ...DecoderLayer, ...EncoderLayer,
 * BertLayer and GPT2Block, TorchTitan's
 * and vLLM's TransformerBlock (Megatron's TransformerBlock is the stack
 * and holds TransformerLayers, which are deeper), GPT-2's Block, or a
 * fully qualified name "layers.N" / "layers_N" (TorchTitan's module names,
 * record_function with FQNs); TransformerBlock and Block are layers only
 * in a range that names none of the others.  The roles of the other components are read
 * by name for the description (attention, MLP, MoE, embedding, output
 * layer and loss).
 *
 * Cost: O(operations x path length).
 */
#include "config.h"
#include "chakra/et_model_internal.h"

#include <string.h>

/* Whether path component c (its class name before a "_<instance>"
 * suffix) is a transformer layer: 2 a layer whatever holds it
 * (TransformerLayer, ParallelTransformerLayer, ...DecoderLayer,
 * ...EncoderLayer, BertLayer, GPT2Block, layers.N), 1 a layer only where no component of level 2 is seen
 * (TransformerBlock, Block: Megatron's TransformerBlock is the stack that
 * holds TransformerLayers), 0 not a layer. */
static int layer_level(const char *c, size_t n)
{
  char *low = g_ascii_strdown(c, (gssize)n);
  size_t k = strlen(low);
  while (k > 0 && g_ascii_isdigit(low[k - 1]))
    k--;
  gboolean fqn = k < strlen(low) && k >= 7 && (!strncmp(low + k - 7, "layers.", 7) || !strncmp(low + k - 7, "layers_", 7));
  if (k > 0 && low[k - 1] == '_')
    k--;
  low[k] = '\0';
  int level = fqn || g_str_has_suffix(low, "transformerlayer") || g_str_has_suffix(low, "decoderlayer") ||
              g_str_has_suffix(low, "encoderlayer") || !strcmp(low, "bertlayer") || !strcmp(low, "gpt2block") ? 2
            : !strcmp(low, "transformerblock") || !strcmp(low, "block") ? 1 : 0;
  g_free(low);
  return level;
}

/* The length of the prefix of path up to and including its deepest layer
 * component of level at least min (0: none), that component in *comp /
 * *comp_n; *top: the highest level of any component. */
static size_t layer_prefix(const char *path, int min, const char **comp, size_t *comp_n, int *top)
{
  size_t best = 0;
  for (const char *p = path; *p;) {
    const char *end = strchr(p, '/');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    int level = layer_level(p, n);
    *top = MAX(*top, level);
    if (level >= min && level > 0) {
      best = (size_t)(p - path) + n;
      *comp = p;
      *comp_n = n;
    }
    p += n + (end != NULL);
  }
  return best;
}

void et_model_annot_layers(const et_graph *g, const GArray *ops, int lo, int hi, et_annot_layers *out)
{
  memset(out, 0, sizeof *out);
  out->first = -1;
  int min = 0; /* the level a layer needs: 2 when the range names any layer of level 2 */
  const char *comp = NULL;
  size_t comp_n = 0;
  for (int i = lo; i < hi; i++) {
    const char *path = et_graph_module(g, g_array_index(ops, et_model_gop, i).node);
    if (path)
      layer_prefix(path, 3, &comp, &comp_n, &min);
  }
  const char *run = NULL;
  size_t run_n = 0;
  int top = 0;
  GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  int start = -1, gap = -1;
  gboolean stop = FALSE;
  for (int i = lo; i < hi && !stop; i++) {
    const char *path = et_graph_module(g, g_array_index(ops, et_model_gop, i).node);
    out->annotated += path != NULL;
    size_t n = path ? layer_prefix(path, min, &comp, &comp_n, &top) : 0;
    if (n > 0 && run && n == run_n && !strncmp(path, run, n))
      continue; /* the same layer instance */
    if (run) { /* a run ends at i */
      int len = i - start;
      if (out->n == 1)
        out->per = len;
      else if (len != out->per && !out->why)
        out->why = "the annotated layers hold different numbers of operations";
      run = NULL;
    }
    if (n == 0) {
      if (out->n > 0 && gap < 0)
        gap = i;
      continue;
    }
    char *key = g_strndup(path, n);
    if (g_hash_table_contains(seen, key)) { /* the next micro-batch's first layer: the forward's layers end */
      g_free(key);
      stop = TRUE;
      break;
    }
    if (gap >= 0 && !out->why)
      out->why = "operations outside every annotated layer lie between two of them";
    g_hash_table_add(seen, key);
    if (out->n == 0) {
      out->first = i;
      out->cls = g_strndup(comp, comp_n);
    }
    out->n++;
    run = path;
    run_n = n;
    start = i;
  }
  if (run && !stop) {
    int len = hi - start;
    if (out->n == 1)
      out->per = len;
    else if (len != out->per && !out->why)
      out->why = "the annotated layers hold different numbers of operations";
  }
  g_hash_table_destroy(seen);
  if (out->cls) { /* the class without its instance number: "TransformerLayer" */
    size_t k = strlen(out->cls);
    while (k > 0 && g_ascii_isdigit(out->cls[k - 1]))
      k--;
    if (k > 0 && k < strlen(out->cls) && out->cls[k - 1] == '_')
      out->cls[k - 1] = '\0';
  }
}

/* The role a module path's components name, for the description. */
static const char *role_of(const char *path)
{
  static const struct { const char *key, *role; } roles[] = {
    {"moe", "moe"}, {"expert", "moe"}, {"router", "moe"}, {"attention", "attention"}, {"attn", "attention"},
    {"mlp", "mlp"}, {"feedforward", "mlp"}, {"feed_forward", "mlp"}, {"embedding", "embedding"},
    {"output_layer", "output layer"}, {"lm_head", "output layer"}, {"columnparallellinear", "output layer"},
    {"loss", "loss"}, {"optimizer", "optimizer"},
  };
  char *low = g_ascii_strdown(path, -1);
  const char *r = NULL;
  for (size_t k = 0; k < G_N_ELEMENTS(roles) && !r; k++) /* the first role of this list the path names */
    if (strstr(low, roles[k].key))
      r = roles[k].role;
  g_free(low);
  return r;
}

void et_model_annot_roles(const et_graph *g, const GArray *ops, int lo, int hi, GString *how)
{
  static const char *const names[] = {"embedding", "attention", "mlp", "moe", "output layer", "loss", "optimizer"};
  int count[G_N_ELEMENTS(names)] = {0};
  for (int i = lo; i < hi; i++) {
    const char *path = et_graph_module(g, g_array_index(ops, et_model_gop, i).node);
    const char *r = path ? role_of(path) : NULL;
    for (size_t k = 0; r && k < G_N_ELEMENTS(names); k++)
      count[k] += !strcmp(r, names[k]);
  }
  gboolean any = FALSE;
  for (size_t k = 0; k < G_N_ELEMENTS(names); k++)
    if (count[k]) {
      g_string_append_printf(how, "%s%s %d", any ? ", " : "", names[k], count[k]);
      any = TRUE;
    }
  if (!any)
    g_string_append(how, "no role named");
}
