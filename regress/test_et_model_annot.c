/* test_et_model_annot.c: the layers that module annotations name
 * (chakra/et_model_annot.c; et_model_internal.h, et_model_annot_layers)
 * on hand-built graphs: each node a kernel with a module path (the
 * et_comp_attr.module the Kineto frontend fills), in time order.
 *
 * Expected values are counted from the lists below: the runs of
 * consecutive nodes in one layer instance, up to the first instance seen
 * again, their first node and length, and why they cannot be the layers.
 */
#include "config.h"

#include "chakra/et_model_internal.h"

#include <string.h>

/* A graph of n kernels whose module paths are paths[i] (NULL: none), and
 * the operations list in node order. */
static et_graph *graph(const char *const *paths, int n, GArray **ops)
{
  et_builder *b = et_builder_new("annot");
  *ops = g_array_new(FALSE, FALSE, sizeof(et_model_gop));
  for (int i = 0; i < n; i++) {
    uint32_t x = et_builder_add_node(b, (uint64_t)i, ET_NODE_COMP, "k", 1000, 0);
    et_builder_set_module(b, x, paths[i]);
    et_model_gop o = {x, (sim_time_ps)i};
    g_array_append_val(*ops, o);
  }
  GError *error = NULL;
  et_graph *g = et_builder_finish(b, 0, &error);
  g_assert_no_error(error);
  return g;
}

static void layers_of(const char *const *paths, int n, et_annot_layers *out)
{
  GArray *ops = NULL;
  et_graph *g = graph(paths, n, &ops);
  et_model_annot_layers(g, ops, 0, n, out);
  g_array_free(ops, TRUE);
  et_graph_free(g);
}

#define L(i) "GPTModel_0/TransformerBlock_0/TransformerLayer_" #i
#define EMB "GPTModel_0/LanguageModelEmbedding_0"

/* Megatron: embedding, three layers of two operations (the second in the
 * layer's SelfAttention), the final norm in the block (TransformerBlock
 * is the stack here), then the next micro-batch's first layer: 3 layers of
 * 2 from node 1; the embedding's and the norm's nodes are annotated too. */
static void check_megatron(void)
{
  static const char *const p[] = {EMB, L(0), L(0) "/SelfAttention_0", L(1), L(1) "/SelfAttention_1", L(2),
                                  L(2) "/SelfAttention_2", "GPTModel_0/TransformerBlock_0/FusedLayerNorm_6", NULL,
                                  L(0)};
  et_annot_layers a;
  layers_of(p, G_N_ELEMENTS(p), &a);
  g_assert_cmpint(a.n, ==, 3);
  g_assert_cmpint(a.first, ==, 1);
  g_assert_cmpint(a.per, ==, 2);
  /* Annotated operations up to and including the next micro-batch's
   * first layer, where the reading stops: 8 of the first 8, then it. */
  g_assert_cmpint(a.annotated, ==, 9);
  g_assert_cmpstr(a.cls, ==, "TransformerLayer");
  g_assert_null(a.why);
  g_free(a.cls);
}

/* vLLM / TorchTitan: TransformerBlock is the layer when nothing deeper is
 * named; TorchTitan's fully qualified names "layers.N" too. */
static void check_block_and_fqn(void)
{
  static const char *const v[] = {"M_0/TransformerBlock_0", "M_0/TransformerBlock_0/Attention_0",
                                  "M_0/TransformerBlock_1", "M_0/TransformerBlock_1/Attention_1"};
  et_annot_layers a;
  layers_of(v, G_N_ELEMENTS(v), &a);
  g_assert_cmpint(a.n, ==, 2);
  g_assert_cmpint(a.per, ==, 2);
  g_assert_cmpstr(a.cls, ==, "TransformerBlock");
  g_free(a.cls);
  static const char *const t[] = {"tok_embeddings", "layers.0/attention", "layers.0/feed_forward",
                                  "layers.1/attention", "layers.1/feed_forward", "norm"};
  layers_of(t, G_N_ELEMENTS(t), &a);
  g_assert_cmpint(a.n, ==, 2);
  g_assert_cmpint(a.first, ==, 1);
  g_assert_cmpint(a.per, ==, 2);
  g_assert_null(a.why);
  g_free(a.cls);
}

/* Runs that cannot be the layers: of different lengths, and separated by
 * an operation outside every layer; none named: n 0. */
static void check_refused(void)
{
  static const char *const uneven[] = {L(0), L(0), L(1), L(2), L(2)};
  et_annot_layers a;
  layers_of(uneven, G_N_ELEMENTS(uneven), &a);
  g_assert_cmpint(a.n, ==, 3);
  g_assert_cmpstr(a.why, ==, "the annotated layers hold different numbers of operations");
  g_free(a.cls);
  static const char *const gap[] = {L(0), L(0), NULL, L(1), L(1)};
  layers_of(gap, G_N_ELEMENTS(gap), &a);
  g_assert_cmpstr(a.why, ==, "operations outside every annotated layer lie between two of them");
  g_free(a.cls);
  static const char *const none[] = {EMB, "GPTModel_0/Linear_0", NULL};
  layers_of(none, G_N_ELEMENTS(none), &a);
  g_assert_cmpint(a.n, ==, 0);
  g_assert_cmpint(a.annotated, ==, 2);
  g_assert_null(a.cls);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/et-model-annot/megatron", check_megatron);
  g_test_add_func("/et-model-annot/block-and-fqn", check_block_and_fqn);
  g_test_add_func("/et-model-annot/refused", check_refused);
  return g_test_run();
}
