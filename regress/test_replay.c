/* test_replay.c: end-to-end replay semantics with expected times derived
 * from closed forms next to each check.
 *
 * Conventions used in the expectations:
 *  - a transfer of S bytes over one hop at B bytes/s with latency a costs
 *    a + round(S * 1e12 / B) ps (wisp_transfer_ps rounds half away from 0);
 *  - ring all-reduce over p ranks moves S/p bytes per step for 2(p-1)
 *    steps, each one hop: T = 2(p-1) * (a + round(S/p / B)).
 */
#include "config.h"
#include "chakra/et_io.h"
#include "replay/sim_report.h"
#include "replay/sim_comms.h"

#include <glib/gstdio.h>
#include <string.h>

/* An 8-rank bidirectional ring at 50 GB/s, 500 ns per hop. */
static const char *ring8_yaml =
  "schema_version: 1\nlibrary: {name: ideal}\n"
  "name: ring8\n"
  "dims:\n"
  "  - {name: ring, kind: ring, size: 8, bandwidth: 50GB/s, latency: 500ns}\n";

/* Two ranks joined by a switch-free fully connected dimension, 100 GB/s, 1 us. */
static const char *pair_yaml =
  "schema_version: 1\nlibrary: {name: ideal}\n"
  "name: pair\n"
  "dims:\n"
  "  - {name: fc, kind: fully_connected, size: 2, bandwidth: 100GB/s, latency: 1us}\n";

static topo *load_topo(const char *yaml)
{
  GError *error = NULL;
  topo *t = topo_load_string(yaml, "test.yaml", &error);
  g_assert_no_error(error);
  g_assert_nonnull(t);
  return t;
}

static sim_result *run(const et_workload *w, const topo *t, unsigned slots)
{
  sim_replay_options opt = {.compute_slots = slots, .checked = TRUE, .quiet = TRUE};
  GError *error = NULL;
  sim_result *r = sim_replay_run(w, t, &opt, &error);
  g_assert_no_error(error);
  g_assert_nonnull(r);
  return r;
}

/* Builds rank r's graph: optional COMP of comp_us, then optional world
 * all-reduce of ar_bytes; `edge` makes the all-reduce depend on the COMP. */
static et_graph *comp_and_allreduce(int r, int64_t comp_us, uint64_t ar_bytes, gboolean edge)
{
  et_builder *b = et_builder_new("test");
  if (comp_us > 0)
    et_builder_add_node(b, 1, ET_NODE_COMP, "gemm", comp_us * SIM_PS_PER_US, 0);
  if (ar_bytes > 0) {
    uint32_t n = et_builder_add_node(b, 2, ET_NODE_COMM_COLL, "all_reduce", 0, 0);
    et_comm c = {.bytes = ar_bytes, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = -1, .dst = -1,
                 .tag = -1, .root = -1, .coll = ET_COLL_ALL_REDUCE};
    et_builder_set_comm(b, n, &c, NULL, NULL, 0);
    if (edge && comp_us > 0)
      et_builder_add_dep(b, n, 1, TRUE, FALSE);
  }
  GError *error = NULL;
  et_graph *g = et_builder_finish(b, 0, &error);
  g_assert_no_error(error);
  (void)r;
  return g;
}

static et_workload *uniform_workload(int n, int64_t comp_us, uint64_t ar_bytes, gboolean edge)
{
  et_workload *w = et_workload_new(n, "test-workload");
  for (int r = 0; r < n; r++)
    w->ranks[r] = comp_and_allreduce(r, comp_us, ar_bytes, edge);
  return w;
}

/* Ring all-reduce of 1 MiB over 8 ranks at 50 GB/s, 500 ns:
 * S/p = 131072 B -> 131072 / 50e9 s = 2,621,440 ps per step; 2*7 = 14 steps
 * of 500,000 + 2,621,440 ps = 43,700,160 ps. */
static const sim_time_ps ring8_1MiB_ps = 14 * (500000 + 2621440);

static void test_ring_allreduce_closed_form(void)
{
  topo *t = load_topo(ring8_yaml);
  et_workload *w = uniform_workload(8, 0, 1048576, FALSE);
  sim_replay_options opt = {.checked = TRUE, .quiet = TRUE, .has_algo = TRUE, .algo = COLL_ALGO_RING};
  GError *error = NULL;
  sim_result *r = sim_replay_run(w, t, &opt, &error);
  g_assert_no_error(error);
  g_test_message("expected %" G_GINT64_FORMAT " ps, got %" G_GINT64_FORMAT " ps", ring8_1MiB_ps, r->step_time);
  g_assert_cmpint(r->step_time, ==, ring8_1MiB_ps);
  /* Every rank has one all-reduce record; nothing else ran. */
  g_assert_cmpuint(r->comms->len, ==, 8);
  for (int k = 0; k < 8; k++) {
    g_assert_cmpint(r->ranks[k].compute, ==, 0);
    g_assert_cmpint(r->ranks[k].exposed_comm + r->ranks[k].idle, ==, r->ranks[k].finish);
  }
  sim_result_free(r);
  et_workload_free(w);
  topo_free(t);
}

/* ASTRA-sim's own 8-rank microbenchmark files, one 1 MiB collective per
 * rank, on the same ring with the ring algorithm.  Chakra comm_size is the
 * full buffer for all-reduce, the per-rank shard for all-gather and the full
 * input for reduce-scatter, so with S = 1 MiB, p = 8, a = 500 ns, B = 50 GB/s:
 *   all_reduce:     2(p-1) steps of S/p = 131072 B: 14 * (500,000 + 2,621,440) ps
 *   all_gather:     (p-1) steps of S = 1 MiB:       7 * (500,000 + 20,971,520) ps
 *   reduce_scatter: (p-1) steps of S/p:             7 * (500,000 + 2,621,440) ps */
static void test_astrasim_microbenchmark(void)
{
  static const struct {
    const char *name;
    sim_time_ps expected;
  } sets[] = {
    {"all_reduce", 14 * (500000 + 2621440)},
    {"all_gather", 7 * (500000 + 20971520)},
    {"reduce_scatter", 7 * (500000 + 2621440)},
  };
  const char *shared = g_getenv("WISP_SHARED_DATA");
  char *probe = shared ? g_build_filename(shared, "astrasim", "all_reduce", "8npus_1MB", "all_reduce.0.et", NULL) : NULL;
  if (probe == NULL || !g_file_test(probe, G_FILE_TEST_EXISTS)) {
    g_test_skip("SKIP: ../shared/data/astrasim is absent (set WISP_SHARED_DATA)");
    g_free(probe);
    return;
  }
  g_free(probe);
  topo *t = load_topo(ring8_yaml);
  for (guint k = 0; k < G_N_ELEMENTS(sets); k++) {
    char *prefix = g_build_filename(shared, "astrasim", sets[k].name, "8npus_1MB", sets[k].name, NULL);
    GError *error = NULL;
    et_workload *w = et_workload_load(prefix, 0, &error);
    g_assert_no_error(error);
    g_assert_cmpint(w->n_ranks, ==, 8);
    sim_replay_options opt = {.checked = TRUE, .quiet = TRUE, .has_algo = TRUE, .algo = COLL_ALGO_RING};
    sim_result *r = sim_replay_run(w, t, &opt, &error);
    g_assert_no_error(error);
    g_test_message("%s: expected %" G_GINT64_FORMAT " ps, got %" G_GINT64_FORMAT " ps", sets[k].name,
                   sets[k].expected, r->step_time);
    g_assert_cmpint(r->step_time, ==, sets[k].expected);
    sim_result_free(r);
    et_workload_free(w);
    g_free(prefix);
  }
  topo_free(t);
}

/* Collective time on the 2-rank pair: a ring all-reduce over p = 2 has
 * 2(p-1) = 2 steps of S/2 bytes: 2 * (1 us + S/2 / 100 GB/s). */
static sim_time_ps pair_allreduce_ps(uint64_t bytes)
{
  return 2 * (SIM_PS_PER_US + wisp_transfer_ps(bytes / 2, 100000000000ull));
}

/* Vector A11's invariants: an independent COMP and all-reduce overlap; an
 * edge COMP -> all-reduce serialises them; two independent COMP nodes on
 * one rank share its single compute slot. */
static void test_overlap_and_edges(void)
{
  topo *t = load_topo(pair_yaml);
  const uint64_t S = 50 * 1048576;            /* 50 MiB: 2 * (1 us + 262.144 us) < 1000 us */
  const sim_time_ps comp = 1000 * SIM_PS_PER_US;
  sim_time_ps ar = pair_allreduce_ps(S);
  g_assert_cmpint(ar, <, comp);               /* so overlap is visible */

  et_workload *w = uniform_workload(2, 1000, S, FALSE);
  sim_result *r = run(w, t, 1);
  g_assert_cmpint(r->step_time, ==, comp);    /* max(comp, ar) */
  g_assert_cmpint(r->ranks[0].overlapped_comm, ==, ar);
  g_assert_cmpint(r->ranks[0].exposed_comm, ==, 0);
  g_assert_cmpint(r->ranks[0].compute, ==, comp);
  sim_result_free(r);
  et_workload_free(w);

  w = uniform_workload(2, 1000, S, TRUE);
  r = run(w, t, 1);
  g_assert_cmpint(r->step_time, ==, comp + ar);
  g_assert_cmpint(r->ranks[1].exposed_comm, ==, ar);
  g_assert_cmpint(r->ranks[1].overlapped_comm, ==, 0);
  sim_result_free(r);
  et_workload_free(w);

  /* Two independent 1000 us COMP nodes per rank. */
  w = et_workload_new(2, "two-comp");
  for (int k = 0; k < 2; k++) {
    et_builder *b = et_builder_new("two-comp");
    et_builder_add_node(b, 1, ET_NODE_COMP, "a", comp, 0);
    et_builder_add_node(b, 2, ET_NODE_COMP, "b", comp, 0);
    GError *error = NULL;
    w->ranks[k] = et_builder_finish(b, 0, &error);
    g_assert_no_error(error);
  }
  r = run(w, t, 1);
  g_assert_cmpint(r->step_time, ==, 2 * comp);  /* one compute slot */
  sim_result_free(r);
  r = run(w, t, 2);
  g_assert_cmpint(r->step_time, ==, comp);      /* two slots */
  sim_result_free(r);
  et_workload_free(w);
  topo_free(t);
}

static et_graph *p2p_graph(gboolean send, int peer, int tag, uint64_t bytes)
{
  et_builder *b = et_builder_new("p2p");
  uint32_t n = et_builder_add_node(b, 7, send ? ET_NODE_COMM_SEND : ET_NODE_COMM_RECV, send ? "send" : "recv", 0, 0);
  et_comm c = {.bytes = bytes, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = send ? -1 : peer,
               .dst = send ? peer : -1, .tag = tag, .root = -1, .coll = ET_COLL_NONE};
  et_builder_set_comm(b, n, &c, NULL, NULL, 0);
  GError *error = NULL;
  et_graph *g = et_builder_finish(b, 0, &error);
  g_assert_no_error(error);
  return g;
}

/* Send 1 MiB from rank 0 to rank 1 over one 100 GB/s, 1 us hop:
 * 1 us + 1048576 / 100e9 s = 1,000,000 + 10,485,760 ps. */
static void test_send_recv(void)
{
  topo *t = load_topo(pair_yaml);
  et_workload *w = et_workload_new(2, "p2p");
  w->ranks[0] = p2p_graph(TRUE, 1, 5, 1048576);
  w->ranks[1] = p2p_graph(FALSE, 0, 5, 1048576);
  sim_result *r = run(w, t, 1);
  g_assert_cmpint(r->step_time, ==, 1000000 + 10485760);
  g_assert_cmpuint(r->comms->len, ==, 2);
  sim_result_free(r);
  et_workload_free(w);

  /* A tag mismatch never matches: the deadlock report names both sides. */
  w = et_workload_new(2, "p2p-bad");
  w->ranks[0] = p2p_graph(TRUE, 1, 5, 1048576);
  w->ranks[1] = p2p_graph(FALSE, 0, 6, 1048576);
  GError *error = NULL;
  sim_replay_options opt = {.quiet = TRUE};
  r = sim_replay_run(w, t, &opt, &error);
  g_assert_null(r);
  g_assert_error(error, WISP_ERROR, WISP_ERROR_DEADLOCK);
  g_test_message("%s", error->message);
  g_assert_nonnull(strstr(error->message, "rank 0 waits for rank 1 to post the matching receive (tag 5)"));
  g_assert_nonnull(strstr(error->message, "rank 1 waits for rank 0 to send (tag 6)"));
  g_clear_error(&error);
  et_workload_free(w);
  topo_free(t);
}

/* A graph of independent sends (send[k] TRUE) or receives to or from
 * `peer`, one per tag, all roots. */
static et_graph *p2p_many(const gboolean *send, int peer, const int *tags, int n)
{
  et_builder *b = et_builder_new("p2p-many");
  for (int k = 0; k < n; k++) {
    uint32_t i = et_builder_add_node(b, (uint64_t)k + 1, send[k] ? ET_NODE_COMM_SEND : ET_NODE_COMM_RECV,
                                     send[k] ? "send" : "recv", 0, 0);
    et_comm c = {.bytes = 4096, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = send[k] ? -1 : peer,
                 .dst = send[k] ? peer : -1, .tag = tags[k], .root = -1, .coll = ET_COLL_NONE};
    et_builder_set_comm(b, i, &c, NULL, NULL, 0);
  }
  GError *error = NULL;
  et_graph *g = et_builder_finish(b, 0, &error);
  g_assert_no_error(error);
  return g;
}

/* Unmatched sends and receives are reported in (source, destination, tag)
 * order, whatever order they were issued in, and a pair that matched
 * (tag 7) is gone from the waiting table: rank 0 sends tags 9, 7, 3, 5;
 * rank 1 receives tags 7 and 4.  Expected, from the rule in
 * rp_match.c: rank 0's lines for tags 3, 5, 9, then rank 1's for tag 4. */
static void test_p2p_wait_report(void)
{
  topo *t = load_topo(pair_yaml);
  et_workload *w = et_workload_new(2, "p2p-waits");
  const gboolean s0[] = {TRUE, TRUE, TRUE, TRUE}, s1[] = {FALSE, FALSE};
  const int t0[] = {9, 7, 3, 5}, t1[] = {7, 4};
  w->ranks[0] = p2p_many(s0, 1, t0, 4);
  w->ranks[1] = p2p_many(s1, 0, t1, 2);
  GError *error = NULL;
  sim_replay_options opt = {.quiet = TRUE};
  sim_result *r = sim_replay_run(w, t, &opt, &error);
  g_assert_null(r);
  g_assert_error(error, WISP_ERROR, WISP_ERROR_DEADLOCK);
  g_test_message("%s", error->message);
  const char *want[] = {
    "\n  rank 0 waits for rank 1 to post the matching receive (tag 3)",
    "\n  rank 0 waits for rank 1 to post the matching receive (tag 5)",
    "\n  rank 0 waits for rank 1 to post the matching receive (tag 9)",
    "\n  rank 1 waits for rank 0 to send (tag 4)",
  };
  const char *at = error->message;
  for (guint k = 0; k < G_N_ELEMENTS(want); k++) {
    const char *hit = strstr(at, want[k]);
    g_test_message("expected line %u in order: %s", k, hit ? "found" : "missing");
    g_assert_nonnull(hit);
    at = hit + 1;
  }
  g_assert_null(strstr(error->message, "(tag 7)"));
  g_clear_error(&error);
  et_workload_free(w);
  topo_free(t);
}

/* Rank 1 never issues the all-reduce rank 0 waits on. */
static void test_deadlock_report(void)
{
  topo *t = load_topo(pair_yaml);
  et_workload *w = et_workload_new(2, "deadlock");
  w->ranks[0] = comp_and_allreduce(0, 10, 4096, TRUE);
  w->ranks[1] = comp_and_allreduce(1, 10, 0, FALSE);
  GError *error = NULL;
  sim_replay_options opt = {.quiet = TRUE};
  sim_result *r = sim_replay_run(w, t, &opt, &error);
  g_assert_null(r);
  g_assert_error(error, WISP_ERROR, WISP_ERROR_DEADLOCK);
  g_test_message("%s", error->message);
  g_assert_nonnull(strstr(error->message, "rank 0 waits for rank 1 to issue ALL_REDUCE #0 of group world"));
  g_clear_error(&error);
  et_workload_free(w);
  topo_free(t);
}

/* A held call in the deadlock report: rank 0's all-reduce X (call #0,
 * 1 MB) waits for a receive rank 1 never sends, so its Y (call #1, 4 MB,
 * ready at once) is held; rank 1 issues both.  Main before the hold
 * matched rank 0's Y with rank 1's X and stopped on their sizes. */
static et_graph *held_graph(gboolean stuck)
{
  et_builder *b = et_builder_new("test");
  if (stuck) {
    uint32_t n = et_builder_add_node(b, 1, ET_NODE_COMM_RECV, "recv", 0, 0);
    et_comm c = {.bytes = 64, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = 1, .dst = -1, .tag = 7,
                 .root = -1, .coll = ET_COLL_NONE};
    et_builder_set_comm(b, n, &c, NULL, NULL, 0);
  }
  const uint64_t bytes[2] = {1000000, 4000000};
  for (int k = 0; k < 2; k++) {
    uint32_t n = et_builder_add_node(b, 2 + (uint64_t)k, ET_NODE_COMM_COLL, "all_reduce", 0, 0);
    et_comm c = {.bytes = bytes[k], .group = ET_GROUP_WORLD, .split = ET_NONE, .src = -1, .dst = -1,
                 .tag = -1, .root = -1, .coll = ET_COLL_ALL_REDUCE};
    et_builder_set_comm(b, n, &c, NULL, NULL, 0);
    if (stuck && k == 0)
      et_builder_add_dep(b, n, 1, TRUE, FALSE);
  }
  GError *error = NULL;
  et_graph *g = et_builder_finish(b, 0, &error);
  g_assert_no_error(error);
  return g;
}

static void test_held_deadlock_report(void)
{
  topo *t = load_topo(pair_yaml);
  et_workload *w = et_workload_new(2, "held");
  w->ranks[0] = held_graph(TRUE);
  w->ranks[1] = held_graph(FALSE);
  GError *error = NULL;
  sim_replay_options opt = {.quiet = TRUE};
  sim_result *r = sim_replay_run(w, t, &opt, &error);
  g_assert_null(r);
  g_assert_error(error, WISP_ERROR, WISP_ERROR_DEADLOCK);
  g_test_message("%s", error->message);
  g_assert_nonnull(strstr(error->message, "rank 0 holds ALL_REDUCE node 3 (call #1 of group world) until its earlier "
                                          "calls of that group issue"));
  g_assert_nonnull(strstr(error->message, "rank 1 waits for rank 0 to issue ALL_REDUCE #0 of group world"));
  g_clear_error(&error);
  et_workload_free(w);
  topo_free(t);
}

/* Rank 0 all-reduces 4 KiB, rank 1 8 KiB as the same call: an error that
 * names both ranks. */
static void test_mismatch(void)
{
  topo *t = load_topo(pair_yaml);
  et_workload *w = et_workload_new(2, "mismatch");
  w->ranks[0] = comp_and_allreduce(0, 0, 4096, FALSE);
  w->ranks[1] = comp_and_allreduce(1, 0, 8192, FALSE);
  GError *error = NULL;
  sim_replay_options opt = {.quiet = TRUE};
  sim_result *r = sim_replay_run(w, t, &opt, &error);
  g_assert_null(r);
  g_assert_error(error, WISP_ERROR, WISP_ERROR_INVALID);
  g_test_message("%s", error->message);
  g_assert_nonnull(strstr(error->message, "rank 0 issued ALL_REDUCE of 4096 bytes"));
  g_assert_nonnull(strstr(error->message, "rank 1 issued ALL_REDUCE of 8192 bytes"));
  g_clear_error(&error);
  et_workload_free(w);
  topo_free(t);
}

static char *run_to_json(const et_workload *w, const topo *t, const char *dir, const char *name)
{
  sim_result *r = run(w, t, 1);
  char *path = g_build_filename(dir, name, NULL);
  GError *error = NULL;
  g_assert_true(sim_report_write_json(r, w, t, path, &error));
  g_assert_no_error(error);
  char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  sim_result_free(r);
  g_free(path);
  return text;
}

/* Two runs of the same inputs give byte-identical reports, and the report
 * carries the documented keys with picosecond precision. */
static void test_determinism_and_json(void)
{
  topo *t = load_topo(ring8_yaml);
  et_workload *w = uniform_workload(8, 3, 1048576 + 3, TRUE); /* odd size: exercises rounding */
  char *dir = g_dir_make_tmp("wisp-replay-XXXXXX", NULL);
  char *a = run_to_json(w, t, dir, "a.json");
  char *b = run_to_json(w, t, dir, "b.json");
  g_assert_cmpstr(a, ==, b);
  const char *keys[] = {"\"schema_version\": 1", "\"wisp_version\"", "\"step_time_ns\"", "\"ranks\"",
                        "\"finish_ns\"", "\"compute_ns\"", "\"exposed_comm_ns\"", "\"idle_ns\"",
                        "\"collectives\"", "\"node_id\"", "\"op\": \"all_reduce\"", "\"group\": \"world\"",
                        "\"bytes\": 1048579", "\"start_ns\"", "\"end_ns\"", "\"busbw_GBps\"", NULL};
  for (int k = 0; keys[k]; k++) {
    if (strstr(a, keys[k]) == NULL)
      g_error("report lacks %s:\n%s", keys[k], a);
  }
  g_free(a);
  g_free(b);
  char *pa = g_build_filename(dir, "a.json", NULL), *pb = g_build_filename(dir, "b.json", NULL);
  g_remove(pa);
  g_remove(pb);
  g_rmdir(dir);
  g_free(pa);
  g_free(pb);
  g_free(dir);
  et_workload_free(w);
  topo_free(t);
}

/* Records every node's finish time (observer node_done), indexed by node. */
typedef struct {
  sim_time_ps *end;
  uint32_t n;
} finish_log;

static void log_node_done(void *ctx, int rank, const et_graph *g, uint32_t node, sim_time_ps start, sim_time_ps end)
{
  finish_log *f = ctx;
  (void)rank;
  (void)g;
  (void)start;
  g_assert_cmpuint(node, <, f->n);
  f->end[node] = end;
}

/* Readiness with many nodes partly ready at once (the replay counts
 * unfinished parents only for those): one rank, 64 roots with durations
 * k + 1 us (k = 0..63), 300 joins of 1 us, join j after the 5 distinct
 * roots (7j + 13m) mod 64, m = 0..4 (13 is odd, so the 5 are distinct mod
 * 64), and a sink of 1 us after all 300 joins.  With 1024 compute slots
 * nothing waits for a slot, so join j ends at (max_m ((7j + 13m) mod 64)
 * + 1) us + 1 us and the sink at 1 us after the last join: 64 + 1 + 1 us. */
static void test_join_readiness(void)
{
  enum { ROOTS = 64, JOINS = 300 };
  et_builder *b = et_builder_new("joins");
  char name[32];
  for (int k = 0; k < ROOTS; k++) {
    g_snprintf(name, sizeof name, "root%d", k);
    et_builder_add_node(b, (uint64_t)k + 1, ET_NODE_COMP, name, (k + 1) * SIM_PS_PER_US, 0);
  }
  for (int j = 0; j < JOINS; j++) {
    uint32_t v = et_builder_add_node(b, 1000 + (uint64_t)j, ET_NODE_COMP, "join", SIM_PS_PER_US, 0);
    for (int m = 0; m < 5; m++)
      et_builder_add_dep(b, v, (uint64_t)((7 * j + 13 * m) % ROOTS) + 1, TRUE, FALSE);
  }
  uint32_t sink = et_builder_add_node(b, 5000, ET_NODE_COMP, "sink", SIM_PS_PER_US, 0);
  for (int j = 0; j < JOINS; j++)
    et_builder_add_dep(b, sink, 1000 + (uint64_t)j, TRUE, FALSE);
  GError *error = NULL;
  et_graph *g = et_builder_finish(b, 0, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(et_node_n_parents(g, sink), ==, JOINS);
  et_workload *w = et_workload_new(1, "joins");
  w->ranks[0] = g;
  topo *t = load_topo(pair_yaml);
  finish_log f = {g_new0(sim_time_ps, g->n_nodes), g->n_nodes};
  sim_replay_observer obs = {.node_done = log_node_done, .ctx = &f};
  sim_replay_options opt = {.compute_slots = 1024, .checked = TRUE, .quiet = TRUE, .observer = &obs};
  sim_result *r = sim_replay_run(w, t, &opt, &error);
  g_assert_no_error(error);
  for (int k = 0; k < ROOTS; k++)
    g_assert_cmpint(f.end[k], ==, (k + 1) * SIM_PS_PER_US);
  for (int j = 0; j < JOINS; j++) {
    int last = 0;
    for (int m = 0; m < 5; m++)
      last = MAX(last, (7 * j + 13 * m) % ROOTS);
    g_assert_cmpint(f.end[ROOTS + j], ==, (last + 1 + 1) * SIM_PS_PER_US);
  }
  g_test_message("sink: expected %d ps, got %" G_GINT64_FORMAT " ps", 66 * 1000000, f.end[sink]);
  g_assert_cmpint(f.end[sink], ==, 66 * SIM_PS_PER_US);
  g_assert_cmpint(r->step_time, ==, 66 * SIM_PS_PER_US);
  g_assert_cmpuint(r->ranks[0].nodes, ==, ROOTS + JOINS + 1);
  sim_result_free(r);
  g_free(f.end);
  et_workload_free(w);
  topo_free(t);
}

/* Rank 0 sends three messages with one tag to rank 1 at time 0 (sizes
 * 4096 (k + 1) bytes, k = 0..2); rank 1 posts the three receives (declared
 * size 1 byte) after a 10 us compute.  Sends and receives of one (source,
 * destination, tag) pair in FIFO order, so receive k (in node order, the
 * order they become ready) carries send k's size; every send was issued
 * at 0, every receive at 10 us, and all three start moving at 10 us. */
static et_workload *fifo_workload(void)
{
  et_workload *w = et_workload_new(2, "p2p-fifo");
  et_builder *b = et_builder_new("fifo-send");
  for (int k = 0; k < 3; k++) {
    uint32_t i = et_builder_add_node(b, (uint64_t)k + 1, ET_NODE_COMM_SEND, "send", 0, 0);
    et_comm c = {.bytes = 4096 * (uint64_t)(k + 1), .group = ET_GROUP_WORLD, .split = ET_NONE, .src = -1,
                 .dst = 1, .tag = 1, .root = -1, .coll = ET_COLL_NONE};
    et_builder_set_comm(b, i, &c, NULL, NULL, 0);
  }
  GError *error = NULL;
  w->ranks[0] = et_builder_finish(b, 0, &error);
  g_assert_no_error(error);
  b = et_builder_new("fifo-recv");
  et_builder_add_node(b, 1, ET_NODE_COMP, "compute", 10 * SIM_PS_PER_US, 0);
  for (int k = 0; k < 3; k++) {
    uint32_t i = et_builder_add_node(b, (uint64_t)k + 2, ET_NODE_COMM_RECV, "recv", 0, 0);
    et_comm c = {.bytes = 1, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = 0, .dst = -1, .tag = 1,
                 .root = -1, .coll = ET_COLL_NONE};
    et_builder_set_comm(b, i, &c, NULL, NULL, 0);
    et_builder_add_dep(b, i, 1, TRUE, FALSE);
  }
  w->ranks[1] = et_builder_finish(b, 0, &error);
  g_assert_no_error(error);
  return w;
}

static const sim_comm_record *find_record(const sim_result *r, int rank, uint64_t node_id)
{
  for (guint k = 0; k < r->comms->len; k++) {
    const sim_comm_record *c = &g_array_index(r->comms, sim_comm_record, k);
    if (c->rank == rank && c->node_id == node_id)
      return c;
  }
  return NULL;
}

static void test_p2p_fifo_issue(void)
{
  topo *t = load_topo(pair_yaml);
  et_workload *w = fifo_workload();
  sim_result *r = run(w, t, 1);
  g_assert_cmpuint(r->comms->len, ==, 6);
  for (int k = 0; k < 3; k++) {
    const sim_comm_record *s = find_record(r, 0, (uint64_t)k + 1), *v = find_record(r, 1, (uint64_t)k + 2);
    g_assert_nonnull(s);
    g_assert_nonnull(v);
    g_assert_cmpuint(s->bytes, ==, 4096 * (uint64_t)(k + 1));
    g_assert_cmpuint(v->bytes, ==, 4096 * (uint64_t)(k + 1));
    g_assert_cmpint(s->issue, ==, 0);
    g_assert_cmpint(v->issue, ==, 10 * SIM_PS_PER_US);
    g_assert_cmpint(s->start, ==, 10 * SIM_PS_PER_US);
    g_assert_cmpint(v->start, ==, 10 * SIM_PS_PER_US);
    g_assert_cmpint(s->end, ==, v->end);
  }
  sim_result_free(r);
  et_workload_free(w);
  topo_free(t);
}

static void keep_record(void *ctx, const sim_comm_record *rec)
{
  g_array_append_val((GArray *)ctx, *rec);
}

static gint record_order(gconstpointer a, gconstpointer b)
{
  const sim_comm_record *x = a, *y = b;
  if (x->end != y->end)
    return x->end < y->end ? -1 : 1;
  if (x->rank != y->rank)
    return x->rank < y->rank ? -1 : 1;
  return x->node_id < y->node_id ? -1 : (x->node_id > y->node_id);
}

/* options.no_comm_records: sim_result.comms stays empty, the run is the
 * same (step time, per-rank figures) and the observer sees exactly the
 * records a default run keeps (sorted as sim_result.comms is). */
static void test_no_comm_records(void)
{
  topo *t = load_topo(ring8_yaml);
  et_workload *w = uniform_workload(8, 3, 1048576, TRUE);
  sim_result *full = run(w, t, 1);
  GArray *seen = g_array_new(FALSE, FALSE, sizeof(sim_comm_record));
  sim_replay_observer obs = {.comm_done = keep_record, .ctx = seen};
  sim_replay_options opt = {.checked = TRUE, .quiet = TRUE, .no_comm_records = TRUE, .observer = &obs};
  GError *error = NULL;
  sim_result *lean = sim_replay_run(w, t, &opt, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(lean->comms->len, ==, 0);
  g_assert_cmpint(lean->step_time, ==, full->step_time);
  g_assert_cmpmem(lean->ranks, sizeof(sim_rank_stats) * 8, full->ranks, sizeof(sim_rank_stats) * 8);
  g_array_sort(seen, record_order);
  g_assert_cmpuint(seen->len, ==, 8);
  g_assert_cmpmem(seen->data, seen->len * sizeof(sim_comm_record), full->comms->data,
                  full->comms->len * sizeof(sim_comm_record));
  g_array_free(seen, TRUE);
  sim_result_free(lean);
  sim_result_free(full);
  et_workload_free(w);
  topo_free(t);
}

typedef struct {
  GArray *seen;
} walk_ctx;

static void walk_record(void *ctx, const sim_comm_record *rec)
{
  g_array_append_val(((walk_ctx *)ctx)->seen, *rec);
}

/* Every record sim_comms_foreach walks in a result (measured_only or all). */
static GArray *walk(const sim_result *r, gboolean measured_only)
{
  walk_ctx c = {g_array_new(FALSE, FALSE, sizeof(sim_comm_record))};
  GError *error = NULL;
  g_assert_true(sim_comms_foreach(r, measured_only, walk_record, &c, &error));
  g_assert_no_error(error);
  return c.seen;
}

/* options.comm_records (issue 30 item 3): with the records in a temporary
 * file the run is the same, sim_result.comms stays empty and a walk of
 * the file gives, byte for byte and in the same order, the records a
 * default run keeps in memory; with only the measured ones kept, the walk
 * gives exactly the memory records whose measured duration is set.  The
 * aggregates are the records' own arithmetic: 8 ranks x 2 all-reduces of
 * 1 MiB on the world = 16 records, 16 MiB, 8 of them measured (the even
 * ranks' nodes, set below). */
static void test_comm_records_file(void)
{
  topo *t = load_topo(ring8_yaml);
  et_workload *w = et_workload_new(8, "two-allreduces");
  for (int r = 0; r < 8; r++) {
    et_builder *b = et_builder_new("test");
    et_builder_add_node(b, 1, ET_NODE_COMP, "gemm", (1 + r % 3) * SIM_PS_PER_US, 0);
    for (int k = 0; k < 2; k++) {
      uint32_t n = et_builder_add_node(b, 2 + (uint64_t)k, ET_NODE_COMM_COLL, "all_reduce",
                                       r % 2 == 0 ? 7 * SIM_PS_PER_US : 0, 0);
      et_comm c = {.bytes = 1048576, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = -1, .dst = -1,
                   .tag = -1, .root = -1, .coll = ET_COLL_ALL_REDUCE};
      et_builder_set_comm(b, n, &c, NULL, NULL, 0);
      et_builder_add_dep(b, n, 1 + (uint64_t)k, TRUE, FALSE);
    }
    GError *error = NULL;
    w->ranks[r] = et_builder_finish(b, 0, &error);
    g_assert_no_error(error);
  }
  sim_result *full = run(w, t, 1);
  g_assert_cmpuint(full->comms->len, ==, 16);
  GError *error = NULL;
  sim_replay_options opt = {.checked = TRUE, .quiet = TRUE, .comm_records = SIM_COMMS_FILE};
  sim_result *file = sim_replay_run(w, t, &opt, &error);
  g_assert_no_error(error);
  opt.comm_records = SIM_COMMS_MEASURED;
  sim_result *meas = sim_replay_run(w, t, &opt, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(file->comms->len, ==, 0);
  g_assert_cmpuint(meas->comms->len, ==, 0);
  g_assert_cmpint(file->step_time, ==, full->step_time);
  g_assert_cmpmem(file->ranks, sizeof(sim_rank_stats) * 8, full->ranks, sizeof(sim_rank_stats) * 8);
  GArray *all = walk(file, FALSE);
  g_assert_cmpmem(all->data, all->len * sizeof(sim_comm_record), full->comms->data,
                  full->comms->len * sizeof(sim_comm_record));
  /* Twice: the walk rewinds the file. */
  GArray *again = walk(file, FALSE);
  g_assert_cmpmem(again->data, again->len * sizeof(sim_comm_record), all->data, all->len * sizeof(sim_comm_record));
  g_assert_true(sim_comms_has_all(file));
  g_assert_false(sim_comms_has_all(meas));
  GArray *mine = walk(meas, TRUE), *expect = g_array_new(FALSE, FALSE, sizeof(sim_comm_record));
  for (guint k = 0; k < full->comms->len; k++)
    if (g_array_index(full->comms, sim_comm_record, k).measured > 0)
      g_array_append_val(expect, g_array_index(full->comms, sim_comm_record, k));
  g_assert_cmpuint(expect->len, ==, 8);
  g_assert_cmpmem(mine->data, mine->len * sizeof(sim_comm_record), expect->data,
                  expect->len * sizeof(sim_comm_record));
  const sim_result *rs[3] = {full, file, meas};
  for (int i = 0; i < 3; i++) {
    sim_comms *owned;
    const sim_comms *f = sim_comms_of(rs[i], w->groups->len, &owned);
    g_assert_null(owned); /* a run's result carries its fold */
    g_assert_cmpuint(sim_comms_records(f), ==, 16);
    g_assert_cmpuint(sim_comms_measured(f), ==, 8);
    g_assert_cmpuint(sim_comms_group_ops(f, w->groups->len), ==, 16);
    g_assert_cmpuint(sim_comms_group_bytes(f, w->groups->len), ==, 16 * UINT64_C(1048576));
    g_assert_cmpuint(sim_comms_op_count(f, ET_COLL_ALL_REDUCE), ==, 16);
    g_assert_cmpuint(sim_comms_op_bytes(f, ET_COLL_ALL_REDUCE), ==, 16 * UINT64_C(1048576));
    g_assert_cmpuint(sim_comms_p2p_count(f, 0) + sim_comms_p2p_count(f, 1), ==, 0);
  }
  /* A result built by hand (no fold) folds its array on the spot. */
  sim_comms *f = NULL;
  sim_comms *saved = full->comm_fold;
  full->comm_fold = NULL;
  g_assert_cmpuint(sim_comms_records(sim_comms_of(full, w->groups->len, &f)), ==, 16);
  g_assert_nonnull(f);
  sim_comms_free(f);
  full->comm_fold = saved;
  g_array_free(all, TRUE);
  g_array_free(again, TRUE);
  g_array_free(mine, TRUE);
  g_array_free(expect, TRUE);
  sim_result_free(full);
  sim_result_free(file);
  sim_result_free(meas);
  et_workload_free(w);
  topo_free(t);
}

/* A comm_records value outside sim_comms_keep is a clear error. */
static void test_comm_records_invalid(void)
{
  topo *t = load_topo(ring8_yaml);
  et_workload *w = uniform_workload(8, 3, 1048576, TRUE);
  sim_replay_options opt = {.quiet = TRUE, .comm_records = 9};
  GError *error = NULL;
  g_assert_null(sim_replay_run(w, t, &opt, &error));
  g_assert_error(error, WISP_ERROR, WISP_ERROR_INVALID);
  g_assert_nonnull(strstr(error->message, "comm_records"));
  g_error_free(error);
  et_workload_free(w);
  topo_free(t);
}

/* Ranks may replay one shared et_graph (the replay keeps its per-node
 * state outside the graph): 8 ranks on one graph of a 3 us compute then a
 * 1 MiB ring all-reduce end at 3 us + ring8_1MiB_ps, with records
 * identical to those of 8 private copies. */
static void test_shared_graph(void)
{
  topo *t = load_topo(ring8_yaml);
  et_workload *priv = uniform_workload(8, 3, 1048576, TRUE);
  et_workload *shared = et_workload_new(8, "shared");
  shared->ranks[0] = comp_and_allreduce(0, 3, 1048576, TRUE);
  for (int r = 1; r < 8; r++)
    shared->ranks[r] = shared->ranks[0];
  sim_replay_options opt = {.checked = TRUE, .quiet = TRUE, .has_algo = TRUE, .algo = COLL_ALGO_RING};
  GError *error = NULL;
  sim_result *a = sim_replay_run(priv, t, &opt, &error);
  g_assert_no_error(error);
  sim_result *b = sim_replay_run(shared, t, &opt, &error);
  g_assert_no_error(error);
  g_assert_cmpint(b->step_time, ==, 3 * SIM_PS_PER_US + ring8_1MiB_ps);
  g_assert_cmpuint(b->comms->len, ==, 8);
  g_assert_cmpmem(a->comms->data, a->comms->len * sizeof(sim_comm_record), b->comms->data,
                  b->comms->len * sizeof(sim_comm_record));
  sim_result_free(a);
  sim_result_free(b);
  for (int r = 1; r < 8; r++)
    shared->ranks[r] = NULL; /* one owner */
  et_workload_free(shared);
  et_workload_free(priv);
  topo_free(t);
}

/* A workload with more ranks than the network places is rejected clearly. */
static void test_too_many_ranks(void)
{
  topo *t = load_topo(pair_yaml);
  et_workload *w = uniform_workload(3, 1, 0, FALSE);
  GError *error = NULL;
  sim_replay_options opt = {.quiet = TRUE};
  g_assert_null(sim_replay_run(w, t, &opt, &error));
  g_assert_error(error, WISP_ERROR, WISP_ERROR_INVALID);
  g_assert_nonnull(strstr(error->message, "has 3 ranks"));
  g_clear_error(&error);
  et_workload_free(w);
  topo_free(t);
}

/* A rank's program order of collectives when the node order breaks an
 * edge (a Chakra file from elsewhere may list a child before its parent):
 * per rank, node 0 = all-reduce Y of 4 MB after compute b (node 3), node 1
 * = all-reduce X of 1 MB after compute a (node 2).  The topological order
 * that takes the lowest ready index first (replay/rp_order.c) is a, X, b,
 * Y: X is call #0, Y call #1 on both ranks.  Rank 0: a = 100 us, b = 10 us
 * (Y ready first, held until X issues at 100 us); rank 1: a = 10 us,
 * b = 300 us.  Two compute slots, so the branches run side by side.  On
 * the pair (pair_allreduce_ps): X runs 100 .. 100 + 12 us, Y 300 .. 300 +
 * 42 us; one call held. */
static et_graph *children_first(int64_t a_us, int64_t b_us)
{
  et_builder *b = et_builder_new("test");
  const uint64_t bytes[2] = {4000000, 1000000};
  for (int k = 0; k < 2; k++) {
    uint32_t n = et_builder_add_node(b, 1 + (uint64_t)k, ET_NODE_COMM_COLL, "all_reduce", 0, 0);
    et_comm c = {.bytes = bytes[k], .group = ET_GROUP_WORLD, .split = ET_NONE, .src = -1, .dst = -1,
                 .tag = -1, .root = -1, .coll = ET_COLL_ALL_REDUCE};
    et_builder_set_comm(b, n, &c, NULL, NULL, 0);
    et_builder_add_dep(b, n, k == 0 ? 4 : 3, TRUE, FALSE);
  }
  et_builder_add_node(b, 3, ET_NODE_COMP, "gemm_a", a_us * SIM_PS_PER_US, 0);
  et_builder_add_node(b, 4, ET_NODE_COMP, "gemm_b", b_us * SIM_PS_PER_US, 0);
  GError *error = NULL;
  et_graph *g = et_builder_finish(b, 0, &error);
  g_assert_no_error(error);
  return g;
}

static void test_program_order_topological(void)
{
  topo *t = load_topo(pair_yaml);
  et_workload *w = et_workload_new(2, "test-workload");
  w->ranks[0] = children_first(100, 10);
  w->ranks[1] = children_first(10, 300);
  sim_result *r = run(w, t, 2);
  g_assert_cmpuint(r->collectives_held, ==, 1);
  sim_time_ps us = SIM_PS_PER_US;
  for (int k = 0; k < 2; k++) {
    const sim_comm_record *x = find_record(r, k, 2), *y = find_record(r, k, 1);
    g_assert_cmpint(x->start, ==, 100 * us);
    g_assert_cmpint(x->end, ==, 100 * us + pair_allreduce_ps(1000000));
    g_assert_cmpint(y->start, ==, 300 * us);
    g_assert_cmpint(y->end, ==, 300 * us + pair_allreduce_ps(4000000));
    g_assert_cmpint(y->issue, ==, k == 0 ? 100 * us : 300 * us);
  }
  g_assert_cmpint(r->step_time, ==, 300 * us + pair_allreduce_ps(4000000));
  g_assert_cmpint(pair_allreduce_ps(4000000), ==, 42 * us);
  sim_result_free(r);
  et_workload_free(w);
  topo_free(t);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/replay/ring-allreduce-closed-form", test_ring_allreduce_closed_form);
  g_test_add_func("/replay/astrasim-microbenchmark", test_astrasim_microbenchmark);
  g_test_add_func("/replay/overlap-and-edges", test_overlap_and_edges);
  g_test_add_func("/replay/send-recv", test_send_recv);
  g_test_add_func("/replay/deadlock-report", test_deadlock_report);
  g_test_add_func("/replay/p2p-wait-report", test_p2p_wait_report);
  g_test_add_func("/replay/mismatch", test_mismatch);
  g_test_add_func("/replay/held-deadlock-report", test_held_deadlock_report);
  g_test_add_func("/replay/determinism-and-json", test_determinism_and_json);
  g_test_add_func("/replay/too-many-ranks", test_too_many_ranks);
  g_test_add_func("/replay/join-readiness", test_join_readiness);
  g_test_add_func("/replay/p2p-fifo-issue", test_p2p_fifo_issue);
  g_test_add_func("/replay/no-comm-records", test_no_comm_records);
  g_test_add_func("/replay/comm-records-file", test_comm_records_file);
  g_test_add_func("/replay/comm-records-invalid", test_comm_records_invalid);
  g_test_add_func("/replay/shared-graph", test_shared_graph);
  g_test_add_func("/replay/program-order-topological", test_program_order_topological);
  return g_test_run();
}
