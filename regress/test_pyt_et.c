/* test_pyt_et.c: the PyTorch execution-trace frontend (frontends/pyt_et.h).
 *
 * A hand-written two-rank trace, the same operators in schema 1.0.1's flat
 * layout and in schema 1.1.1's attrs layout.  Per rank (ids):
 *
 *   1 process root, 2 thread root (tid 1), 10 thread root (tid 2)
 *   thread 1:  3 aten::mm        reads T10, writes T11 (1000 floats)
 *              4 c10d::allreduce_ -> 5 record_param_comms "allreduce" on T11
 *                                    (1000 x 4 B = 4000 B; writes T11) -> 6 nccl:all_reduce
 *              7 aten::relu      reads T11, writes T12
 *              8 record_param_comms "all_to_allv" on T12 (6 floats = 24 B),
 *                                    input splits [2, 4] elements = [8, 16] B
 *              9 record_param_comms "wait" (sequence 8)
 *   thread 2: 11 aten::add       reads T10 (written by no node)
 *             12 aten::mul       reads T12 (written by 7 on thread 1)
 *
 * Alone, each rank's graph is: COMP 3, COMM 5, COMP 7, COMM 8 on thread 1
 * (4 is walked through: it issues a collective; 6 is the collective's own
 * child; 9 is a wait), COMP 11 and 12 on thread 2: 6 nodes.  Edges: the
 * thread order 3->5->7->8 and 11->12, plus the tensor edge 7->12 (12 reads
 * T12, last written by 7); T11's writer when 7 reads it is 5 (the
 * collective writes its tensor in place), which is also the thread's
 * previous node: one entry.  Every COMP node takes 0 s.
 *
 * Linked with a hand-built two-rank "Kineto" workload holding the two
 * collectives as uniform all_to_all / all_reduce nodes with measured starts,
 * the linker must find 2 collectives per rank, equal sizes, take the
 * all_to_allv splits, and judge the stated dependency 5 -> 8 (8 reads T12,
 * computed by 7 from 5's output) as: added (no path, 8 began after 5 ended),
 * contradicted (8 began before 5 ended), or inferred too (a path exists).
 *
 * The real 8-rank DLRM job (../shared/data/param, README: 3 all-reduce + 5
 * all-to-all per rank) is checked when WISP_SHARED_DATA is set: every
 * collective linked and of the size the Kineto frontend took from
 * record_param_comms, and rank 0's bytes from the execution trace alone
 * equal the sum written out in test_dlrm.
 */
#include "config.h"

#include "frontends/fe.h"
#include "frontends/pyt_et.h"
#include "regress/test_util.h"

#include <string.h>

/* One node of the hand-written trace, in either layout.  in/out are JSON
 * lists of values (already spelled); types are the matching type names. */
typedef struct {
  int id, parent, tid;
  const char *name, *in, *in_types, *out, *out_types;
} tnode;

#define T(id, st, n) "[" #id ", " #st ", 0, " #n ", 4, \"cuda:0\"]"

static const tnode nodes_common[] = {
  {1, 1, 0, "[pytorch|profiler|execution_graph|process]", "[]", "[]", "[]", "[]"},
  {2, 1, 1, "[pytorch|profiler|execution_graph|thread]", "[]", "[]", "[]", "[]"},
  {3, 2, 1, "aten::mm", "[" T(10, 10, 1000) "]", "[\"Tensor(float)\"]", "[" T(11, 11, 1000) "]", "[\"Tensor(float)\"]"},
  {4, 2, 1, "c10d::allreduce_", "[[" T(11, 11, 1000) "]]", "[\"GenericList[Tensor(float)]\"]", "[]", "[]"},
  {5, 4, 1, "record_param_comms", "[[" T(11, 11, 1000) "], 7, 1234, 0, \"allreduce\", [], []]",
   "[\"GenericList[Tensor(float)]\", \"Int\", \"Int\", \"Int\", \"String\", \"GenericList[]\", \"GenericList[]\"]",
   "[[" T(11, 11, 1000) "]]", "[\"GenericList[Tensor(float)]\"]"},
  {6, 5, 1, "nccl:all_reduce", "[" T(11, 11, 1000) "]", "[\"Tensor(float)\"]", "[]", "[]"},
  {7, 2, 1, "aten::relu", "[" T(11, 11, 1000) "]", "[\"Tensor(float)\"]", "[" T(12, 12, 6) "]", "[\"Tensor(float)\"]"},
  {8, 2, 1, "record_param_comms", "[" T(12, 12, 6) ", 8, 1234, 0, \"all_to_allv\", [2, 4], [3, 3]]",
   "[\"Tensor(float)\", \"Int\", \"Int\", \"Int\", \"String\", \"GenericList[Int,Int]\", \"GenericList[Int,Int]\"]",
   "[" T(13, 13, 6) "]", "[\"Tensor(float)\"]"},
  {9, 2, 1, "record_param_comms", "[8, 0, 0, \"wait\", [], []]",
   "[\"Int\", \"Int\", \"Int\", \"String\", \"GenericList[]\", \"GenericList[]\"]", "[]", "[]"},
  {10, 1, 2, "[pytorch|profiler|execution_graph|thread]", "[]", "[]", "[]", "[]"},
  {11, 10, 2, "aten::add", "[" T(10, 10, 1000) "]", "[\"Tensor(float)\"]", "[" T(14, 14, 1000) "]", "[\"Tensor(float)\"]"},
  {12, 10, 2, "aten::mul", "[" T(12, 12, 6) "]", "[\"Tensor(float)\"]", "[" T(15, 15, 6) "]", "[\"Tensor(float)\"]"},
};

/* The trace as text: schema 1.0.1 (flat) or 1.1.1 (attrs). */
static char *trace_text(gboolean v11)
{
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "{\"schema\": \"%s\", \"pid\": 42, \"time\": \"now\", \"nodes\": [\n",
                         v11 ? "1.1.1-chakra.0.0.4" : "1.0.1");
  for (size_t i = 0; i < G_N_ELEMENTS(nodes_common); i++) {
    const tnode *n = &nodes_common[i];
    if (v11)
      g_string_append_printf(s, "%s{\"id\": %d, \"name\": \"%s\", \"ctrl_deps\": %d, \"inputs\": {\"values\": %s, "
                             "\"shapes\": [], \"types\": %s}, \"outputs\": {\"values\": %s, \"shapes\": [], "
                             "\"types\": %s}, \"attrs\": [{\"name\": \"rf_id\", \"type\": \"uint64\", \"value\": %d}, "
                             "{\"name\": \"tid\", \"type\": \"uint64\", \"value\": %d}]}\n", i ? "," : "", n->id,
                             n->name, n->parent, n->in, n->in_types, n->out, n->out_types, n->id + 100, n->tid);
    else
      g_string_append_printf(s, "%s{\"name\": \"%s\", \"id\": %d, \"rf_id\": %d, \"parent\": %d, \"tid\": %d, "
                             "\"inputs\": %s, \"input_types\": %s, \"outputs\": %s, \"output_types\": %s}\n",
                             i ? "," : "", n->name, n->id, n->id + 100, n->parent, n->tid, n->in, n->in_types, n->out,
                             n->out_types);
  }
  g_string_append(s, "]}\n");
  return g_string_free(s, FALSE);
}

/* Writes rank files name_0.json, name_1.json under dir; returns the paths. */
static char **write_ranks(const char *dir, const char *name, const char *text, int n)
{
  char **paths = g_new0(char *, n + 1);
  for (int r = 0; r < n; r++) {
    char *base = g_strdup_printf("%s_%d.json", name, r);
    paths[r] = g_build_filename(dir, base, NULL);
    g_assert_true(g_file_set_contents(paths[r], text, -1, NULL));
    g_free(base);
  }
  return paths;
}

static uint32_t node_of(const et_graph *g, uint64_t id)
{
  for (uint32_t i = 0; i < g->n_nodes; i++)
    if (g->nodes[i].id == id)
      return i;
  g_assert_not_reached();
  return 0;
}

static gboolean has_parent(const et_graph *g, uint64_t child, uint64_t parent)
{
  uint32_t c = node_of(g, child), p = node_of(g, parent);
  for (uint32_t e = g->nodes[c].parents; e < g->nodes[c + 1].parents; e++)
    if (ET_EDGE_INDEX(g->parent_edges[e]) == p)
      return TRUE;
  return FALSE;
}

static void check_alone_graph(const et_graph *g)
{
  g_assert_cmpuint(g->n_nodes, ==, 6);
  const uint64_t comp[] = {3, 7, 11, 12};
  for (size_t k = 0; k < G_N_ELEMENTS(comp); k++) {
    uint32_t i = node_of(g, comp[k]);
    g_assert_cmpint(g->nodes[i].type, ==, ET_NODE_COMP);
    g_assert_cmpint(g->nodes[i].duration_ps, ==, 0); /* the trace records no durations */
  }
  const et_comm *ar = et_node_comm(g, node_of(g, 5)), *a2 = et_node_comm(g, node_of(g, 8));
  g_assert_cmpint(ar->coll, ==, ET_COLL_ALL_REDUCE);
  g_assert_cmpuint(ar->bytes, ==, 4000);   /* 1000 floats x 4 B */
  g_assert_cmpint(a2->coll, ==, ET_COLL_ALL_TO_ALLV);
  g_assert_cmpuint(a2->bytes, ==, 24);     /* 6 floats x 4 B */
  g_assert_cmpuint(g->split_width, ==, 2);
  g_assert_cmpuint(g->splits[a2->split], ==, 8);      /* 2 elements x 4 B */
  g_assert_cmpuint(g->splits[a2->split + 1], ==, 16); /* 4 elements x 4 B */
  /* Thread order, then the cross-thread tensor edge 7 -> 12. */
  g_assert_true(has_parent(g, 5, 3));
  g_assert_true(has_parent(g, 7, 5));
  g_assert_true(has_parent(g, 8, 7));
  g_assert_true(has_parent(g, 12, 11));
  g_assert_true(has_parent(g, 12, 7));
  g_assert_false(has_parent(g, 11, 3)); /* another thread, no shared tensor */
  g_assert_cmpuint(et_node_n_parents(g, node_of(g, 3)), ==, 0);
}

static void test_alone(gconstpointer v11p)
{
  gboolean v11 = GPOINTER_TO_INT(v11p);
  char *dir = g_dir_make_tmp("wisp-pet-XXXXXX", NULL), *text = trace_text(v11);
  char **paths = write_ranks(dir, "job", text, 2);
  fe_pet_report rep;
  fe_pet_report_init(&rep);
  GError *error = NULL;
  et_workload *w = fe_pet_load((const char *const *)paths, 2, &rep, &error);
  g_assert_no_error(error);
  g_assert_cmpint(w->n_ranks, ==, 2);
  for (int r = 0; r < 2; r++)
    check_alone_graph(w->ranks[r]);
  g_assert_true(rep.durations_unknown);
  g_assert_cmpuint(rep.comms, ==, 4);  /* 2 per rank */
  g_assert_cmpuint(rep.waits, ==, 2);
  g_assert_cmpuint(rep.nodes, ==, 2 * G_N_ELEMENTS(nodes_common));
  g_assert_cmpstr(rep.schemas, ==, v11 ? "1.1.1-chakra.0.0.4" : "1.0.1");
  et_workload_free(w);
  fe_pet_report_clear(&rep);
  g_strfreev(paths);
  g_free(text);
  test_rm_rf(dir);
  g_free(dir);
}

/* Expects fe_pet_load of one file "x_0.json" holding text to fail with a
 * message containing want. */
static void expect_fail(const char *text, const char *name, const char *want)
{
  char *dir = g_dir_make_tmp("wisp-pet-bad-XXXXXX", NULL), *p = g_build_filename(dir, name, NULL);
  g_assert_true(g_file_set_contents(p, text, -1, NULL));
  GError *error = NULL;
  const char *paths[] = {p};
  et_workload *w = fe_pet_load(paths, 1, NULL, &error);
  g_assert_null(w);
  g_assert_nonnull(error);
  if (!strstr(error->message, want))
    g_error("expected '%s' in: %s", want, error->message);
  g_assert_nonnull(strstr(error->message, p)); /* names the file */
  g_error_free(error);
  test_rm_rf(dir);
  g_free(dir);
  g_free(p);
}

static void test_errors(void)
{
  expect_fail("{\"schema\": \"1.0.1\", \"nodes\": [", "x_0.json", "offset");
  expect_fail("{\"nodes\": []}", "x_0.json", "no \"schema\"");
  expect_fail("{\"schema\": \"2.0.0\", \"nodes\": []}", "x_0.json", "\"2.0.0\" is not one wisp reads");
  expect_fail("{\"schema\": \"1.0.1\"}", "x_0.json", "no \"nodes\" list");
  expect_fail("{\"schema\": \"1.0.1\", \"nodes\": [{\"name\": \"a\"}]}", "x_0.json", "node 0 (0-based");
  expect_fail("{\"schema\": \"1.0.1\", \"nodes\": [{\"name\": \"record_param_comms\", \"id\": 4, "
              "\"inputs\": [5, 0, 0, \"frobnicate\", [], []]}]}", "x_0.json",
              "node 0 (id 4): record_param_comms names a collective wisp does not know ('frobnicate')");
  expect_fail("{\"schema\": \"1.0.1\", \"nodes\": [{\"name\": \"record_param_comms\", \"id\": 4, "
              "\"inputs\": [5, 0, 0]}]}", "x_0.json", "without a collective name");
  /* (A single file is rank 0 whatever its name; two need rank numbers:
   * checked in test_link's refusal and by the CLI.) */

  expect_fail("[1, 2]", "x_0.json", "not a JSON object");
}

/* A two-rank "Kineto" workload: per rank an all_reduce of 4000 B at
 * [0, 10] us and a uniform all_to_all of 24 B starting at b_start_us,
 * with an edge between them when chained; group "1" of both ranks. */
static et_workload *kineto_like(sim_time_ps b_start_us, gboolean chained, uint64_t ar_bytes)
{
  et_workload *w = et_workload_new(2, "kineto-like");
  int members[] = {0, 1};
  g_assert_cmpuint(et_workload_add_group(w, "1", NULL, members, 2), ==, 0);
  for (int r = 0; r < 2; r++) {
    et_builder *b = et_builder_new("kineto-like");
    et_comm c = {.src = -1, .dst = -1, .tag = -1, .root = -1};
    uint32_t a = et_builder_add_node(b, 100, ET_NODE_COMM_COLL, "ncclKernel_AllReduce", 10 * 1000000, 0);
    et_builder_set_start(b, a, 0);
    c.coll = ET_COLL_ALL_REDUCE;
    c.bytes = ar_bytes;
    et_builder_set_comm(b, a, &c, "1", NULL, 0);
    uint32_t x = et_builder_add_node(b, 101, ET_NODE_COMM_COLL, "ncclKernel_SendRecv", 5 * 1000000, 0);
    et_builder_set_start(b, x, b_start_us * 1000000);
    c.coll = ET_COLL_ALL_TO_ALL;
    c.bytes = 24;
    et_builder_set_comm(b, x, &c, "1", NULL, 0);
    if (chained)
      et_builder_add_dep(b, x, 100, FALSE, TRUE);
    GError *error = NULL;
    w->ranks[r] = et_builder_finish(b, 0, &error);
    g_assert_no_error(error);
  }
  GError *error = NULL;
  g_assert_true(et_workload_resolve_groups(w, &error));
  return w;
}

static void test_link(void)
{
  char *dir = g_dir_make_tmp("wisp-pet-link-XXXXXX", NULL), *text = trace_text(FALSE);
  char **paths = write_ranks(dir, "job", text, 2);
  struct { sim_time_ps start_us; gboolean chained; uint64_t ar; uint64_t added, contra, too, differs; } cases[] = {
    {20, FALSE, 4000, 2, 0, 0, 0}, /* no path, 8 began after 5 ended: added on both ranks */
    {5, FALSE, 4000, 0, 2, 0, 0},  /* 8 began at 5 us, before 5 ended at 10 us: contradicted */
    {20, TRUE, 4000, 0, 0, 2, 0},  /* the graph already orders them */
    {20, TRUE, 4001, 0, 0, 2, 2},  /* the all_reduce sizes disagree: counted, nothing else changes */
  };
  for (size_t k = 0; k < G_N_ELEMENTS(cases); k++) {
    et_workload *w = kineto_like(cases[k].start_us, cases[k].chained, cases[k].ar);
    fe_pet_report rep;
    fe_pet_report_init(&rep);
    GError *error = NULL;
    g_assert_true(fe_pet_link(w, (const char *const *)paths, 2, &rep, &error));
    g_assert_no_error(error);
    g_assert_cmpuint(rep.linked, ==, 4);
    g_assert_cmpuint(rep.size_differs, ==, cases[k].differs);
    g_assert_cmpuint(rep.size_equal, ==, 4 - cases[k].differs);
    g_assert_cmpuint(rep.kind_differs + rep.et_only + rep.kineto_only, ==, 0);
    g_assert_cmpuint(rep.deps_stated, ==, 2); /* 5 -> 8 on each rank */
    g_assert_cmpuint(rep.deps_added, ==, cases[k].added);
    g_assert_cmpuint(rep.deps_contradicted, ==, cases[k].contra);
    g_assert_cmpuint(rep.deps_inferred_too, ==, cases[k].too);
    g_assert_cmpuint(rep.splits_added, ==, 2); /* the uniform all_to_all takes [8, 16] B */
    for (int r = 0; r < 2; r++) {
      const et_graph *g = w->ranks[r];
      const et_comm *x = et_node_comm(g, node_of(g, 101));
      g_assert_cmpint(x->coll, ==, ET_COLL_ALL_TO_ALLV);
      g_assert_cmpuint(g->splits[x->split], ==, 8);
      g_assert_cmpuint(g->splits[x->split + 1], ==, 16);
      g_assert_cmpint(has_parent(g, 101, 100), ==, cases[k].added || cases[k].chained);
      g_assert_cmpint(g->nodes[node_of(g, 100)].start_ps, ==, 0); /* measured starts kept */
    }
    fe_pet_report_clear(&rep);
    et_workload_free(w);
  }
  /* One execution trace for a two-rank workload: refused. */
  et_workload *w = kineto_like(20, FALSE, 4000);
  GError *error = NULL;
  g_assert_false(fe_pet_link(w, (const char *const *)paths, 1, NULL, &error));
  g_assert_nonnull(strstr(error->message, "1 execution trace(s) beside a 2-rank Kineto workload"));
  g_clear_error(&error);
  et_workload_free(w);
  g_strfreev(paths);
  g_free(text);
  test_rm_rf(dir);
  g_free(dir);
}

/* The 8-rank DLRM job. */
static void test_dlrm(void)
{
  char *tmp = test_dlrm_halves("wisp-pet-dlrm-XXXXXX");
  if (tmp == NULL)
    return;
  char *kdir = g_build_filename(tmp, "dlrm_kineto", NULL);
  char *et[8];
  for (int r = 0; r < 8; r++) {
    char *b = g_strdup_printf("dlrm_pytorch_et/dlrm_eg_%d.json", r);
    et[r] = g_build_filename(tmp, b, NULL);
    g_free(b);
  }
  GError *error = NULL;
  fe_pet_report rep;
  fe_pet_report_init(&rep);
  /* Alone: rank 0's collectives (dlrm_eg_0.json, record_param_comms, its
   * input tensor numel x element size): all-reduce 394241 x 4 + 112 x 4 +
   * 226960 x 4 = 2485252 B; all_to_allv 6144 x 4 twice = 49152 B,
   * 384 x 4 = 1536 B and 3392 x 4 = 13568 B; all_to_all 24 x 8 = 192 B:
   * 2549700 B in 8 collectives. */
  et_workload *w = fe_pet_load((const char *const *)et, 8, &rep, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(rep.comms, ==, 64);
  uint64_t bytes = 0;
  for (uint32_t c = 0; c < w->ranks[0]->n_comms; c++)
    bytes += w->ranks[0]->comms[c].bytes;
  g_assert_cmpuint(w->ranks[0]->n_comms, ==, 8);
  g_assert_cmpuint(bytes, ==, 2549700);
  et_workload_free(w);
  fe_pet_report_clear(&rep);
  /* Linked with the Kineto half: all 64 collectives, every size equal to
   * the one the Kineto frontend took from record_param_comms. */
  fe_kineto_options opt;
  fe_kineto_options_init(&opt);
  const char *kp[] = {kdir};
  w = fe_kineto_load(kp, 1, &opt, NULL, &error);
  g_assert_no_error(error);
  fe_pet_report_init(&rep);
  g_assert_true(fe_pet_link(w, (const char *const *)et, 8, &rep, &error));
  g_assert_no_error(error);
  g_test_message("DLRM link: %" G_GUINT64_FORMAT " linked, %" G_GUINT64_FORMAT " equal, splits %" G_GUINT64_FORMAT
                 ", stated %" G_GUINT64_FORMAT " (inferred too %" G_GUINT64_FORMAT ", added %" G_GUINT64_FORMAT
                 ", contradicted %" G_GUINT64_FORMAT ")", rep.linked, rep.size_equal, rep.splits_added,
                 rep.deps_stated, rep.deps_inferred_too, rep.deps_added, rep.deps_contradicted);
  g_assert_cmpuint(rep.linked, ==, 64);
  g_assert_cmpuint(rep.size_equal, ==, 64);
  g_assert_cmpuint(rep.size_differs + rep.kind_differs + rep.et_only + rep.kineto_only, ==, 0);
  /* 4 of the 5 all-to-alls per rank are all_to_allv with 8 splits in the
   * execution trace (the one of 24 x 8 B has none). */
  g_assert_cmpuint(rep.splits_added, ==, 32);
  fe_pet_report_clear(&rep);
  et_workload_free(w);
  for (int r = 0; r < 8; r++)
    g_free(et[r]);
  test_rm_rf(tmp);
  g_free(tmp);
  g_free(kdir);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_data_func("/pyt-et/alone-1.0", GINT_TO_POINTER(0), test_alone);
  g_test_add_data_func("/pyt-et/alone-1.1", GINT_TO_POINTER(1), test_alone);
  g_test_add_func("/pyt-et/errors", test_errors);
  g_test_add_func("/pyt-et/link", test_link);
  g_test_add_func("/pyt-et/dlrm", test_dlrm);
  return g_test_run();
}
