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

/* dir/ord.<r>.et: the two branches per rank; da, db in us per rank. */
static void write_branches(const char *dir, const int da[2], const int db[2])
{
  et_workload *w = et_workload_new(2, "ord");
  const uint64_t bytes[2] = {1000000, 4000000};
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

static void test_branches_program_order(void)
{
  if (!test_have_bin())
    return;
  char *dir = g_dir_make_tmp("wisp-order-XXXXXX", NULL);
  write_branches(dir, (const int[]){100, 10}, (const int[]){10, 300});
  char *wl = g_build_filename(dir, "ord", NULL), *net = g_build_filename(dir, "sw.yaml", NULL);
  char *json = g_build_filename(dir, "s.json", NULL);
  g_assert_true(g_file_set_contents(net, "schema_version: 1\nlibrary: {name: ideal}\nname: sw\n"
                                    "dims:\n  - {name: net, kind: switch, size: 2, bandwidth: 100GB/s, latency: 1us}\n",
                                    -1, NULL));
  char *out = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){"simulate", wl, "--network", net, "--algo", "ring", "--compute-slots",
                                                  "2", "--json", json, NULL}, &out), ==, 0);
  test_expect_has(out, "note: 1 collective call(s) became ready before an earlier call of their group on the same "
                       "rank and waited for it");
  char *text = NULL;
  g_assert_true(g_file_get_contents(json, &text, NULL, NULL));
  cJSON *doc = cJSON_Parse(text);
  g_assert_nonnull(doc);
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
  g_free(text);
  g_free(out);
  /* Both ranks in the same order (rank 0 like rank 1): nothing is held,
   * the note and the key are absent.  X: both issue at 10 us, 10 .. 24;
   * Y at 300 .. 344. */
  write_branches(dir, (const int[]){10, 10}, (const int[]){300, 300});
  g_assert_cmpint(test_wisp_run((const char *[]){"simulate", wl, "--network", net, "--algo", "ring", "--compute-slots",
                                                  "2", "--json", json, NULL}, &out), ==, 0);
  g_assert_null(strstr(out, "became ready before an earlier call"));
  g_assert_true(g_file_get_contents(json, &text, NULL, NULL));
  doc = cJSON_Parse(text);
  g_assert_null(cJSON_GetObjectItemCaseSensitive(doc, "collectives_held"));
  g_assert_cmpfloat(fabs(num(record(doc, 0, 1e6), "end_ns") - 24e3), <, 1e-3);
  g_assert_cmpfloat(fabs(num(doc, "step_time_ns") - 344e3), <, 1e-3);
  cJSON_Delete(doc);
  g_free(text);
  g_free(out);
  test_rm_rf(dir);
  g_free(dir);
  g_free(wl);
  g_free(net);
  g_free(json);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/coll_order_cli/branches", test_branches_program_order);
  return g_test_run();
}
