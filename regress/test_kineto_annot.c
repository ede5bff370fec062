/* test_kineto_annot.c: the module path of every GPU op from the
 * annotation ranges around its launch (frontends/kineto_annot.c), through
 * the Kineto load into the Chakra graph (et_graph_module) and through a
 * Chakra ET file and back (the wisp_module attribute).
 *
 * One rank's trace: on the launching thread (pid 1, tid 1) python_function
 * "nn.Module: GPTModel_0" [1, 151) us, "nn.Module: TransformerLayer_0"
 * [10, 50) inside it and a record_function (user_annotation) "attn_block"
 * [12, 20) inside that; on another thread (tid 2) "nn.Module: Other_0"
 * over everything, which must not count.  Launches at 14, 30, 60 and 170
 * us give K1 .. K4 the paths of the ranges holding 14, 30, 60 (all three,
 * the layer, the model) and 170 (none); K5 has no launch (no
 * correlation) and no path.
 */
#include "config.h"
#include "chakra/et_io.h"
#include "frontends/fe.h"
#include "regress/test_util.h"

#include <string.h>

static char *annot_json(void)
{
  const long b = 1000000;
  GString *s = g_string_new("{\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, \"world_size\": 1}, "
                            "\"traceEvents\": [\n");
  g_string_append_printf(s, "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 1, "
                            "\"tid\": 1, \"ts\": %ld, \"dur\": 200}", b);
  static const struct { const char *cat, *name; int tid; long ts, dur; } r[] = {
    {"python_function", "nn.Module: GPTModel_0", 1, 1, 150},
    {"python_function", "nn.Module: TransformerLayer_0", 1, 10, 40},
    {"user_annotation", "attn_block", 1, 12, 8},
    {"python_function", "nn.Module: Other_0", 2, 0, 200},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(r); i++)
    g_string_append_printf(s, ",\n{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": 1, \"tid\": %d, "
                              "\"ts\": %ld, \"dur\": %ld}", r[i].cat, r[i].name, r[i].tid, b + r[i].ts, r[i].dur);
  static const long launch[] = {14, 30, 60, 170};
  for (size_t i = 0; i < G_N_ELEMENTS(launch); i++)
    g_string_append_printf(s, ",\n{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
                              "\"pid\": 1, \"tid\": 1, \"ts\": %ld, \"dur\": 1, \"args\": {\"correlation\": %zu}}",
                           b + launch[i], i + 1);
  static const long start[] = {20, 35, 65, 175, 180};
  for (size_t i = 0; i < G_N_ELEMENTS(start); i++) {
    g_string_append_printf(s, ",\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"K%zu\", \"pid\": 0, \"tid\": 7, "
                              "\"ts\": %ld, \"dur\": 4, \"args\": {\"device\": 0, \"stream\": 7", i + 1, b + start[i]);
    if (i < G_N_ELEMENTS(launch))
      g_string_append_printf(s, ", \"correlation\": %zu", i + 1);
    g_string_append(s, "}}");
  }
  g_string_append(s, "\n]}\n");
  return g_string_free(s, FALSE);
}

/* The module path of the kernel named name in g (asserting there is one). */
static const char *module_of(const et_graph *g, const char *name)
{
  for (uint32_t i = 0; i < g->n_nodes; i++)
    if (!strcmp(et_node_name(g, i), name))
      return et_graph_module(g, i);
  g_assert_not_reached();
  return NULL;
}

static void check_paths(const et_graph *g)
{
  g_assert_cmpstr(module_of(g, "K1"), ==, "GPTModel_0/TransformerLayer_0/attn_block");
  g_assert_cmpstr(module_of(g, "K2"), ==, "GPTModel_0/TransformerLayer_0");
  g_assert_cmpstr(module_of(g, "K3"), ==, "GPTModel_0");
  g_assert_null(module_of(g, "K4"));
  g_assert_null(module_of(g, "K5"));
}

static void check_annot(void)
{
  char *text = annot_json();
  test_rank_files f;
  test_rank_files_write(&f, "wisp-kineto-annot-XXXXXX", &text, 1);
  g_free(text);
  fe_kineto_options opt;
  fe_kineto_options_init(&opt);
  opt.host_launch = FALSE;
  fe_kineto_report rep;
  memset(&rep, 0, sizeof rep);
  GError *e = NULL;
  et_workload *w = fe_kineto_load((const char *const *)f.paths, 1, &opt, &rep, &e);
  g_assert_no_error(e);
  g_assert_nonnull(w);
  check_paths(w->ranks[0]);
  /* Through a Chakra ET file and back: the string attribute wisp_module. */
  char *et = g_build_filename(f.dir, "et", NULL);
  g_assert_cmpint(g_mkdir_with_parents(et, 0755), ==, 0);
  gboolean written = et_workload_write(w, et, "trace", &e);
  g_assert_no_error(e);
  g_assert_true(written);
  et_workload *back = et_workload_load(et, 0, &e);
  g_assert_no_error(e);
  check_paths(back->ranks[0]);
  et_workload_free(back);
  et_workload_free(w);
  fe_kineto_report_clear(&rep);
  g_free(et);
  test_rank_files_free(&f);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/kineto-annot/paths", check_annot);
  return g_test_run();
}
