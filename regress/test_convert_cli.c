/* test_convert_cli.c: `wisp convert` through the wisp binary on generated
 * multi-rank Kineto traces (regress/gt_model.c), issue 17 items 7 and 14.
 *
 *   - default output: `wisp simulate` on the files prints the same
 *     "step time:" and "baseline:" lines as `wisp simulate` on the traces
 *     (the files carry the host launch model and the measured step);
 *     --no-host-launch files match the traces simulated with
 *     --no-host-launch;
 *   - --for astra-sim: no CPU or wisp_delay nodes, wisp_compute_slots 1,
 *     the GPU COMP nodes of each rank totally ordered by the graph (so a
 *     one-slot feeder never has to choose between two of them, and running
 *     them one at a time changes nothing), likewise collectives and SENDs;
 *     all-rank collectives without pg_name and no comm_group.json when
 *     there are no other groups; the notes on what ASTRA-sim cannot
 *     express; and wisp reads the files back.  In the tp scenario every
 *     rank has one compute stream and one communication stream, so the
 *     chains are the streams and simulate must print the trace's
 *     --no-host-launch step time exactly.
 *
 * Skips visibly when WISP_BIN is not set (run through make check).
 */
#include "config.h"

#include "chakra/et_io.h"
#include "regress/gt_model.h"
#include "regress/test_util.h"

/* The first line of out that starts with prefix, without the newline
 * (g_free it); fails the test when there is none. */
static char *line_of(const char *out, const char *prefix)
{
  for (const char *p = out; p && *p;) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (strncmp(p, prefix, strlen(prefix)) == 0)
      return g_strndup(p, len);
    p = e ? e + 1 : NULL;
  }
  g_test_message("no line starting with '%s' in:\n%s", prefix, out);
  g_assert_not_reached();
}

/* simulate's step-time and baseline lines for a workload path. */
static void sim_lines(const char *path, const char *network, gboolean no_host, char **step, char **base)
{
  char *out = NULL;
  const char *args[] = {"simulate", path, "--network", network, no_host ? "--no-host-launch" : NULL, NULL};
  g_assert_cmpint(test_wisp_run(args, &out), ==, 0);
  *step = line_of(out, "step time:");
  *base = line_of(out, "baseline:");
  g_free(out);
}

static char *network_path(void)
{
  return g_build_filename(g_getenv("G_TEST_SRCDIR"), "presets", "dgx-h100.yaml", NULL);
}

static gboolean need_env(void)
{
  if (!g_getenv("WISP_BIN") || !g_getenv("G_TEST_SRCDIR")) {
    g_test_skip("WISP_BIN or G_TEST_SRCDIR not set (run through make check)");
    return FALSE;
  }
  return TRUE;
}

/* Writes scenario s's traces into DIR/trace and returns DIR. */
static char *make_traces(gt_scenario s, char **trace)
{
  char *dir = g_dir_make_tmp("wisp-conv-XXXXXX", NULL);
  g_assert_nonnull(dir);
  *trace = g_build_filename(dir, "trace", NULL);
  gt_params p;
  gt_params_init(&p, s);
  gt_result res;
  GError *error = NULL;
  g_assert_true(gt_run(&p, *trace, &res, &error));
  g_assert_no_error(error);
  return dir;
}

static void test_default_matches_trace(gconstpointer data)
{
  if (!need_env())
    return;
  gt_scenario s = (gt_scenario)GPOINTER_TO_INT(data);
  char *trace = NULL, *dir = make_traces(s, &trace), *net = network_path();
  for (int no_host = 0; no_host < 2; no_host++) {
    char *et = g_build_filename(dir, no_host ? "et-nohost" : "et", NULL);
    const char *conv[] = {"convert", trace, "-o", et, no_host ? "--no-host-launch" : NULL, NULL};
    char *cout = NULL;
    g_assert_cmpint(test_wisp_run(conv, &cout), ==, 0);
    g_assert_null(strstr(cout, "astra"));
    char *ts, *tb, *es, *eb;
    sim_lines(trace, net, no_host, &ts, &tb);
    sim_lines(et, net, FALSE, &es, &eb);
    g_test_message("%s%s: traces: '%s' / '%s'", gt_scenario_name(s), no_host ? " --no-host-launch" : "", ts, tb);
    g_test_message("%s%s: convert output: '%s' / '%s'", gt_scenario_name(s), no_host ? " --no-host-launch" : "", es,
                   eb);
    g_assert_cmpstr(es, ==, ts);
    g_assert_cmpstr(eb, ==, tb);
    g_free(ts);
    g_free(tb);
    g_free(es);
    g_free(eb);
    g_free(cout);
    g_free(et);
  }
  test_rm_rf(dir);
  g_free(dir);
  g_free(trace);
  g_free(net);
}

/* Whether node `to` is reachable from `from` along child edges.  O(N + E). */
static gboolean reaches(const et_graph *g, uint32_t from, uint32_t to)
{
  if (from == to)
    return TRUE;
  guint8 *seen = g_new0(guint8, g->n_nodes);
  GArray *stack = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  g_array_append_val(stack, from);
  seen[from] = 1;
  gboolean found = FALSE;
  while (stack->len && !found) {
    uint32_t i = g_array_index(stack, uint32_t, stack->len - 1);
    g_array_set_size(stack, stack->len - 1);
    for (uint32_t k = g->nodes[i].children; k < g->nodes[i + 1].children && !found; k++) {
      uint32_t c = g->child_index[k];
      if (c == to)
        found = TRUE;
      else if (!seen[c]) {
        seen[c] = 1;
        g_array_append_val(stack, c);
      }
    }
  }
  g_array_free(stack, TRUE);
  g_free(seen);
  return found;
}

static const et_graph *sort_graph;
static int cmp_start(const void *a, const void *b)
{
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  sim_time_ps sx = sort_graph->nodes[x].start_ps, sy = sort_graph->nodes[y].start_ps;
  return sx != sy ? (sx < sy ? -1 : 1) : (x < y ? -1 : x > y);
}

/* Asserts that the compute nodes of g (comm FALSE), or its collectives,
 * SENDs and communication-chain gaps (comm TRUE), form a total order under
 * reachability: consecutive ones by measured start are ordered one way or
 * the other.  Returns how many there are. */
static guint check_total_order(const et_graph *g, gboolean comm)
{
  GArray *sel = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  for (uint32_t i = 0; i < g->n_nodes; i++) {
    uint8_t t = g->nodes[i].type;
    gboolean gap = (g->nodes[i].flags & ET_FLAG_DELAY) != 0; /* communication-chain gap, read back */
    if (comm ? (t == ET_NODE_COMM_COLL || t == ET_NODE_COMM_SEND || gap) : (t == ET_NODE_COMP && !gap))
      g_array_append_val(sel, i);
  }
  sort_graph = g;
  g_array_sort(sel, cmp_start);
  for (guint k = 1; k < sel->len; k++) {
    uint32_t a = g_array_index(sel, uint32_t, k - 1), b = g_array_index(sel, uint32_t, k);
    if (!reaches(g, a, b) && !reaches(g, b, a))
      g_error("%s nodes %s and %s are not ordered by the graph", comm ? "communication" : "compute",
              et_node_name(g, a), et_node_name(g, b));
  }
  guint n = sel->len;
  g_array_free(sel, TRUE);
  return n;
}

static void test_astra(gconstpointer data)
{
  if (!need_env())
    return;
  gt_scenario s = (gt_scenario)GPOINTER_TO_INT(data);
  char *trace = NULL, *dir = make_traces(s, &trace), *net = network_path();
  char *et = g_build_filename(dir, "astra", NULL);
  char *cout = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){"convert", trace, "-o", et, "--for", "astra-sim", NULL}, &cout), ==, 0);
  g_test_message("%s", cout);
  g_assert_nonnull(strstr(cout, "\nnote: multi-stream overlap serialised: compute "));
  char *cg = g_build_filename(et, "comm_group.json", NULL);
  if (s == GT_PP) {
    /* Pipeline stages talk in 2-rank groups: the file is still needed. */
    g_assert_nonnull(strstr(cout, "pass comm_group.json to ASTRA-sim (--comm-group-configuration)"));
    g_assert_true(g_file_test(cg, G_FILE_TEST_EXISTS));
  } else {
    g_assert_nonnull(strstr(cout, "(every collective spans all ranks: no comm_group.json)"));
    g_assert_nonnull(strstr(cout, "carry no pg_name: ASTRA-sim needs no comm_group file"));
    g_assert_false(g_file_test(cg, G_FILE_TEST_EXISTS));
  }
  GError *error = NULL;
  char *prefix = g_build_filename(et, "trace", NULL);
  et_workload *w = et_workload_load(prefix, 0, &error);
  g_assert_no_error(error);
  for (int r = 0; r < w->n_ranks; r++) {
    const et_graph *g = w->ranks[r];
    g_assert_cmpuint(g->compute_slots, ==, 1);
    for (uint32_t i = 0; i < g->n_nodes; i++) {
      g_assert_false(g->nodes[i].flags & ET_FLAG_CPU_OP);
      /* Idle gaps: COMP nodes in the compute chain, or (read back from the
       * BROADCAST ASTRA-sim sees) delay nodes in the communication chain. */
      if (g->nodes[i].flags & ET_FLAG_DELAY)
        g_assert_cmpuint(g->nodes[i].type, ==, ET_NODE_COMP);
      if (g->nodes[i].type == ET_NODE_COMP) /* what ASTRA-sim replays, gaps included */
        g_assert_cmpint(g->nodes[i].duration_ps % SIM_PS_PER_US, ==, 0);
      const et_comm *c = et_node_comm(g, i);
      if (c && g->nodes[i].type == ET_NODE_COMM_COLL && c->group == ET_GROUP_WORLD)
        g_assert_cmpuint(c->pg_name, ==, ET_NONE);
    }
    g_assert_cmpuint(check_total_order(g, FALSE), >, 0);
    g_assert_cmpuint(check_total_order(g, TRUE), >, 0);
  }
  et_workload_free(w);
  char *as, *ab;
  sim_lines(et, net, FALSE, &as, &ab);
  g_test_message("%s --for astra-sim, simulated by wisp: '%s' / '%s'", gt_scenario_name(s), as, ab);
  if (s == GT_TP) {
    char *ts, *tb;
    sim_lines(trace, net, TRUE, &ts, &tb);
    g_test_message("%s traces with --no-host-launch: '%s'", gt_scenario_name(s), ts);
    g_assert_cmpstr(as, ==, ts);
    g_free(ts);
    g_free(tb);
  }
  g_free(as);
  g_free(ab);
  g_free(prefix);
  g_free(cg);
  g_free(cout);
  g_free(et);
  test_rm_rf(dir);
  g_free(dir);
  g_free(trace);
  g_free(net);
}

static void test_bad_target(void)
{
  if (!need_env())
    return;
  char *out = NULL;
  /* Usage errors are checked before any input is read. */
  g_assert_cmpint(test_wisp_run((const char *[]){"convert", "nowhere", "-o", "nowhere-out", "--for", "ns3", NULL},
                                &out), ==, 2);
  g_free(out);
  g_assert_false(g_file_test("nowhere-out", G_FILE_TEST_EXISTS));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_data_func("/convert-cli/default-matches-trace/tp", GINT_TO_POINTER(GT_TP), test_default_matches_trace);
  g_test_add_data_func("/convert-cli/default-matches-trace/pp", GINT_TO_POINTER(GT_PP), test_default_matches_trace);
  g_test_add_data_func("/convert-cli/astra-sim/tp", GINT_TO_POINTER(GT_TP), test_astra);
  g_test_add_data_func("/convert-cli/astra-sim/pp", GINT_TO_POINTER(GT_PP), test_astra);
  g_test_add_func("/convert-cli/bad-target", test_bad_target);
  return g_test_run();
}
