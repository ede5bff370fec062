/* test_coll_order_cli.c: a rank's collectives on one group meet in its
 * program order, whatever order their dependencies are met in (issue 28,
 * no silent wrong answer), through the `wisp` binary.
 *
 * Workload (Chakra written here): 2 ranks, each with two independent
 * branches: compute a (da) then all-reduce X of S1 = 1 MB (node listed
 * first: call #0 of world), compute b (db) then all-reduce Y of
 * S2 = 4 MB (call #1).  Rank 0: da = 100 us, db = 10 us (Y ready first);
 * rank 1: da = 10 us, db = 300 us (X ready first).  A replay that numbered
 * calls as they became ready would pair rank 0's Y with rank 1's X (and
 * stop on their sizes, as main before this change did).
 *
 * Closed form (two compute slots per rank, so the branches run side by
 * side; one switch of 2 at B = 100 GB/s, 1 us per link traversal, the
 * ideal library, ring): an all-reduce of S over N = 2 ranks takes
 * A(S) = 2 (N - 1) (2 us + (S / N) / B): A(S1) = 2 (2 + 5) = 14 us,
 * A(S2) = 2 (2 + 20) = 44 us.  X starts when both issued it, at
 * max(100, 10) = 100 us, and ends at 114 us.  Rank 0's Y, ready at 10 us,
 * waits for X's issue (100 us); rank 1 issues Y at 300 us, so Y runs
 * 300 .. 344 us; both ranks finish at 344 us.  One call was held
 * (rank 0's Y): collectives_held = 1.
 *
 * DLRM (../shared/data/param, the PyTorch execution traces alone; skipped
 * without them) on examples/networks/dgx1-v100.yaml at its 700 ns per
 * link and with 2 us: every rank's record_param_comms sequence numbers
 * 147..154 run in node id order with the same kinds and sizes on every
 * rank (all_to_allv 24576 B, all_to_all 192 B, all_to_allv 1536 B,
 * all_to_allv 13568 B, all_reduce 1576964 B, all_to_allv 24576 B,
 * all_reduce 448 B, all_reduce 907840 B), so on both settings the replay
 * must run, issue each rank's calls in node id order, and meet call k of
 * every rank with the same kind and size.  Main before this change ran the
 * backward thread's all-reduce (seq 151) before the forward's seq 148 at
 * 700 ns (step 423.260 us) and stopped at 2 us with "collective mismatch
 * in group 'world', call #3".
 */
#include "config.h"
#include "chakra/et_io.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "regress/test_util.h"

#define US SIM_PS_PER_US

static double num(const cJSON *o, const char *k)
{
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
  g_assert_nonnull(x);
  return x->valuedouble;
}

/* dir/ord.<r>.et: the two branches per rank; da, db in us per rank; X of
 * 1 MB, Y of y_bytes. */
static void write_branches(const char *dir, const int da[2], const int db[2], uint64_t y_bytes)
{
  et_workload *w = et_workload_new(2, "ord");
  const uint64_t bytes[2] = {1000000, y_bytes};
  for (int r = 0; r < 2; r++) {
    et_builder *b = et_builder_new("synthetic");
    /* Program order: X's branch first (ids 1, 2), then Y's (3, 4). */
    for (int k = 0; k < 2; k++) {
      uint64_t id = 1 + 2 * (uint64_t)k;
      et_builder_add_node(b, id, ET_NODE_COMP, "sm90_xmma_gemm", (sim_time_ps)(k == 0 ? da[r] : db[r]) * US, 0);
      uint32_t x = et_builder_add_node(b, id + 1, ET_NODE_COMM_COLL, "all_reduce", 0, 0);
      et_comm c = {.bytes = bytes[k], .group = ET_GROUP_WORLD, .split = ET_NONE, .src = -1, .dst = -1,
                   .tag = -1, .root = -1, .coll = ET_COLL_ALL_REDUCE};
      et_builder_set_comm(b, x, &c, NULL, NULL, 0);
      et_builder_add_dep(b, x, id, TRUE, FALSE);
    }
    GError *e = NULL;
    w->ranks[r] = et_builder_finish(b, 0, &e);
    g_assert_no_error(e);
  }
  GError *e = NULL;
  g_assert_true(et_workload_resolve_groups(w, &e));
  g_assert_true(et_workload_write(w, dir, "ord", &e));
  g_assert_no_error(e);
  et_workload_free(w);
}

/* The record of rank `rank`'s collective of `bytes` in the report. */
static const cJSON *record(const cJSON *doc, int rank, double bytes)
{
  const cJSON *c;
  cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(doc, "collectives"))
    if (num(c, "rank") == rank && num(c, "bytes") == bytes)
      return c;
  g_assert_not_reached();
  return NULL;
}

/* Runs `simulate WL --network NET --algo ring --compute-slots 2 --json
 * JSON` (must succeed) and returns its report parsed; *out takes the
 * command's output (g_free). */
static cJSON *simulate_report(const char *wl, const char *net, const char *json, char **out)
{
  g_assert_cmpint(test_wisp_run((const char *[]){"simulate", wl, "--network", net, "--algo", "ring", "--compute-slots",
                                                  "2", "--json", json, NULL}, out), ==, 0);
  char *text = NULL;
  g_assert_true(g_file_get_contents(json, &text, NULL, NULL));
  cJSON *doc = cJSON_Parse(text);
  g_assert_nonnull(doc);
  g_free(text);
  return doc;
}

static void test_branches_program_order(void)
{
  if (!test_have_bin())
    return;
  char *dir = g_dir_make_tmp("wisp-order-XXXXXX", NULL);
  write_branches(dir, (const int[]){100, 10}, (const int[]){10, 300}, 4000000);
  char *wl = g_build_filename(dir, "ord", NULL), *net = g_build_filename(dir, "sw.yaml", NULL);
  char *json = g_build_filename(dir, "s.json", NULL);
  g_assert_true(g_file_set_contents(net, "schema_version: 1\nlibrary: {name: ideal}\nname: sw\n"
                                    "dims:\n  - {name: net, kind: switch, size: 2, bandwidth: 100GB/s, latency: 1us}\n",
                                    -1, NULL));
  char *out = NULL;
  cJSON *doc = simulate_report(wl, net, json, &out);
  test_expect_has(out, "note: 1 collective call(s) became ready before an earlier call of their group on the same "
                       "rank and waited for it");
  g_assert_cmpfloat(num(doc, "collectives_held"), ==, 1);
  /* Closed form (top comment), in ns. */
  g_assert_cmpfloat(fabs(num(doc, "step_time_ns") - 344e3), <, 1e-3);
  for (int r = 0; r < 2; r++) {
    const cJSON *x = record(doc, r, 1e6), *y = record(doc, r, 4e6);
    g_assert_cmpfloat(fabs(num(x, "start_ns") - 100e3), <, 1e-3);
    g_assert_cmpfloat(fabs(num(x, "end_ns") - 114e3), <, 1e-3);
    g_assert_cmpfloat(fabs(num(y, "start_ns") - 300e3), <, 1e-3);
    g_assert_cmpfloat(fabs(num(y, "end_ns") - 344e3), <, 1e-3);
    /* Rank 0 issued X when its compute a ended (100 us) and Y, held, then;
     * rank 1 issued X at 10 us and Y at 300 us. */
    g_assert_cmpfloat(fabs(num(x, "issue_ns") - (r == 0 ? 100e3 : 10e3)), <, 1e-3);
    g_assert_cmpfloat(fabs(num(y, "issue_ns") - (r == 0 ? 100e3 : 300e3)), <, 1e-3);
  }
  cJSON_Delete(doc);
  g_free(out);
  /* Both ranks in the same order (rank 0 like rank 1): nothing is held,
   * the note and the key are absent.  X: both issue at 10 us, 10 .. 24;
   * Y at 300 .. 344. */
  write_branches(dir, (const int[]){10, 10}, (const int[]){300, 300}, 4000000);
  doc = simulate_report(wl, net, json, &out);
  g_assert_null(strstr(out, "became ready before an earlier call"));
  g_assert_null(cJSON_GetObjectItemCaseSensitive(doc, "collectives_held"));
  g_assert_cmpfloat(fabs(num(record(doc, 0, 1e6), "end_ns") - 24e3), <, 1e-3);
  g_assert_cmpfloat(fabs(num(doc, "step_time_ns") - 344e3), <, 1e-3);
  cJSON_Delete(doc);
  g_free(out);
  /* Y of 1 MB too (the silent case: no sizes differ to stop a wrong
   * pairing).  Program order: X 100 .. 114 us on both ranks, Y 300 .. 314.
   * Pairing by readiness would have run rank 0's Y with rank 1's X at
   * 10 .. 24 us and rank 0's X with rank 1's Y at 300 .. 314 (the same
   * step, 314 us, with rank 0's X ending 200 us late). */
  write_branches(dir, (const int[]){100, 10}, (const int[]){10, 300}, 1000000);
  doc = simulate_report(wl, net, json, &out);
  g_assert_cmpfloat(num(doc, "collectives_held"), ==, 1);
  g_assert_cmpfloat(fabs(num(doc, "step_time_ns") - 314e3), <, 1e-3);
  const cJSON *c;
  cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(doc, "collectives")) {
    gboolean x = num(c, "node_id") == 2; /* X: ids 1, 2; Y: ids 3, 4 */
    g_assert_cmpfloat(fabs(num(c, "start_ns") - (x ? 100e3 : 300e3)), <, 1e-3);
    g_assert_cmpfloat(fabs(num(c, "end_ns") - (x ? 114e3 : 314e3)), <, 1e-3);
  }
  cJSON_Delete(doc);
  g_free(out);
  test_rm_rf(dir);
  g_free(dir);
  g_free(wl);
  g_free(net);
  g_free(json);
}

/* Runs simulate on the DLRM execution traces with every link at `lat`;
 * checks the program order (top comment) and returns the step time. */
static double dlrm_step(const char *tmp, const char *et, const char *lat)
{
  char *net = g_build_filename(tmp, "dgx1.yaml", NULL), *json = g_build_filename(tmp, "d.json", NULL);
  char *src = g_build_filename(g_getenv("G_TEST_SRCDIR"), "examples", "networks", "dgx1-v100.yaml", NULL);
  char *yaml = NULL;
  g_assert_true(g_file_get_contents(src, &yaml, NULL, NULL));
  char **parts = g_strsplit(yaml, "latency: 700ns", -1);
  g_assert_cmpint(g_strv_length(parts), ==, 3); /* both tiers */
  char *lat_kv = g_strdup_printf("latency: %s", lat), *changed = g_strjoinv(lat_kv, parts);
  g_assert_true(g_file_set_contents(net, changed, -1, NULL));
  char *out = NULL, *text = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){"simulate", et, "--network", net, "--json", json, NULL}, &out), ==, 0);
  g_assert_true(g_file_get_contents(json, &text, NULL, NULL));
  cJSON *doc = cJSON_Parse(text);
  g_assert_nonnull(doc);
  g_assert_cmpfloat(num(doc, "collectives_held"), >, 0);
  /* Per rank, calls by node id: (node id, issue, kind, bytes); rank 0's
   * kinds and sizes are every rank's. */
  double id[8][8], issue[8][8], bytes[8][8];
  char op[8][8][16];
  int n[8] = {0};
  const cJSON *c;
  cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(doc, "collectives")) {
    int r = (int)num(c, "rank");
    g_assert_true(r >= 0 && r < 8 && n[r] < 8);
    int k = n[r]++;
    while (k > 0 && id[r][k - 1] > num(c, "node_id")) { /* insertion by node id */
      id[r][k] = id[r][k - 1];
      issue[r][k] = issue[r][k - 1];
      bytes[r][k] = bytes[r][k - 1];
      memcpy(op[r][k], op[r][k - 1], sizeof op[r][k]);
      k--;
    }
    id[r][k] = num(c, "node_id");
    issue[r][k] = num(c, "issue_ns");
    bytes[r][k] = num(c, "bytes");
    g_strlcpy(op[r][k], cJSON_GetObjectItemCaseSensitive(c, "op")->valuestring, sizeof op[r][k]);
  }
  const double want[8] = {24576, 192, 1536, 13568, 1576964, 24576, 448, 907840};
  for (int r = 0; r < 8; r++) {
    g_assert_cmpint(n[r], ==, 8);
    for (int k = 0; k < 8; k++) {
      g_assert_cmpfloat(bytes[r][k], ==, want[k]);
      g_assert_cmpstr(op[r][k], ==, op[0][k]);
      if (k > 0)
        g_assert_cmpfloat(issue[r][k], >=, issue[r][k - 1]);
    }
  }
  double step = num(doc, "step_time_ns");
  cJSON_Delete(doc);
  g_strfreev(parts);
  g_free(lat_kv);
  g_free(changed);
  g_free(yaml);
  g_free(src);
  g_free(text);
  g_free(out);
  g_free(net);
  g_free(json);
  return step;
}

static void test_dlrm_two_latencies(void)
{
  if (!test_have_bin())
    return;
  char *tmp = test_dlrm_halves("wisp-order-dlrm-XXXXXX");
  if (tmp == NULL)
    return;
  char *et = g_build_filename(tmp, "dlrm_pytorch_et", NULL);
  double t700 = dlrm_step(tmp, et, "700ns"), t2000 = dlrm_step(tmp, et, "2us");
  /* The same calls in the same order, every link slower: not faster. */
  g_assert_cmpfloat(t2000, >, t700);
  test_rm_rf(tmp);
  g_free(tmp);
  g_free(et);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/coll_order_cli/branches", test_branches_program_order);
  g_test_add_func("/coll_order_cli/dlrm", test_dlrm_two_latencies);
  return g_test_run();
}
