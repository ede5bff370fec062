/* test_critical.c: the critical path of a replay (replay/sim_critical.h):
 * binding predecessors, categories, straggler waits, the tiling of [0,
 * step], the sentence, and `wisp simulate --critical-path --json`.
 *
 * Expected times are closed forms written next to each check, on the pair
 * network below: a transfer of S bytes costs 1 us + S / 100 GB/s, and a
 * 2-rank all-reduce of S bytes 2 x (1 us + (S/2) / 100 GB/s) (ring: two
 * steps of S/2 bytes, one hop each; as in test_replay.c).
 */
#include "config.h"
#include "chakra/et_io.h"
#include "cli/wisp_cli.h"
#include "replay/sim_critical.h"
#include "replay/sim_report.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

/* The program's error printer lives in cli/wisp.c (with main); this test
 * links the simulate command alone, so it carries the same two lines. */
int wisp_cli_fail(GError *error)
{
  fprintf(stderr, "wisp: error: %s\n", error ? error->message : "unknown error");
  g_clear_error(&error);
  return 1;
}

/* Two (or four) ranks joined by a fully connected dimension, 100 GB/s, 1 us. */
static const char *pair_yaml =
  "schema_version: 1\nlibrary: {name: ideal}\n"
  "name: pair\n"
  "dims:\n"
  "  - {name: fc, kind: fully_connected, size: 2, bandwidth: 100GB/s, latency: 1us}\n";
static const char *quad_yaml =
  "schema_version: 1\nlibrary: {name: ideal}\n"
  "name: quad\n"
  "dims:\n"
  "  - {name: fc, kind: fully_connected, size: 4, bandwidth: 100GB/s, latency: 1us}\n";

static const sim_time_ps US = SIM_PS_PER_US;

static topo *load_topo(const char *yaml)
{
  GError *error = NULL;
  topo *t = topo_load_string(yaml, "test.yaml", &error);
  g_assert_no_error(error);
  return t;
}

/* 2-rank all-reduce of S bytes on the pair: 2 x (1 us + round(S/2 / 100 GB/s)). */
static sim_time_ps pair_allreduce_ps(uint64_t bytes)
{
  return 2 * (US + wisp_transfer_ps(bytes / 2, 100000000000ull));
}

static sim_result *run_opt(const et_workload *w, const topo *t, unsigned slots, gboolean critical)
{
  sim_replay_options opt = {.compute_slots = slots, .checked = TRUE, .quiet = TRUE, .critical_path = critical};
  GError *error = NULL;
  sim_result *r = sim_replay_run(w, t, &opt, &error);
  g_assert_no_error(error);
  g_assert_nonnull(r);
  g_assert_true(critical == (r->critical != NULL));
  return r;
}

static sim_result *run(const et_workload *w, const topo *t, unsigned slots)
{
  return run_opt(w, t, slots, TRUE);
}

static et_graph *finish(et_builder *b)
{
  GError *error = NULL;
  et_graph *g = et_builder_finish(b, 0, &error);
  g_assert_no_error(error);
  return g;
}

static void dep(et_builder *b, uint32_t node, uint64_t parent_id)
{
  et_builder_add_dep(b, node, parent_id, TRUE, FALSE);
}

/* A collective on pg_name (NULL: world). */
static uint32_t add_coll(et_builder *b, uint64_t id, const char *name, et_coll_type type, uint64_t bytes,
                         const char *pg_name)
{
  uint32_t n = et_builder_add_node(b, id, ET_NODE_COMM_COLL, name, 0, 0);
  et_comm c = {.bytes = bytes, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = -1, .dst = -1, .tag = -1,
               .root = -1, .coll = type};
  et_builder_set_comm(b, n, &c, pg_name, NULL, 0);
  return n;
}

static uint32_t add_p2p(et_builder *b, uint64_t id, gboolean send, int peer, int tag, uint64_t bytes)
{
  uint32_t n = et_builder_add_node(b, id, send ? ET_NODE_COMM_SEND : ET_NODE_COMM_RECV, send ? "send" : "recv", 0, 0);
  et_comm c = {.bytes = bytes, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = send ? -1 : peer,
               .dst = send ? peer : -1, .tag = tag, .root = -1, .coll = ET_COLL_NONE};
  et_builder_set_comm(b, n, &c, NULL, NULL, 0);
  return n;
}

/* Rank graph: COMP "gemm" of comp_us, then a world all-reduce of bytes on it. */
static et_graph *comp_then_allreduce(int64_t comp_us, uint64_t bytes)
{
  et_builder *b = et_builder_new("test");
  et_builder_add_node(b, 1, ET_NODE_COMP, "gemm", comp_us * US, 0);
  uint32_t n = add_coll(b, 2, "all_reduce", ET_COLL_ALL_REDUCE, bytes, NULL);
  dep(b, n, 1);
  return finish(b);
}

static const sim_crit_segment *seg(const sim_critical_path *p, guint k)
{
  g_assert_cmpuint(k, <, p->segments->len);
  return &g_array_index(p->segments, sim_crit_segment, k);
}

/* The invariants every path keeps: segments tile [0, step] in time order,
 * categories and per-rank times each sum to the step. */
static void check_tiling(const sim_critical_path *p, const sim_result *r)
{
  g_assert_cmpint(p->step_time, ==, r->step_time);
  g_assert_cmpuint(p->segments->len, >, 0);
  g_assert_cmpint(seg(p, 0)->start, ==, 0);
  for (guint k = 0; k < p->segments->len; k++) {
    g_assert_cmpint(seg(p, k)->start, <=, seg(p, k)->end);
    if (k + 1 < p->segments->len)
      g_assert_cmpint(seg(p, k)->end, ==, seg(p, k + 1)->start);
  }
  g_assert_cmpint(seg(p, p->segments->len - 1)->end, ==, p->step_time);
  sim_time_ps cat = 0, ranks = 0;
  for (int c = 0; c < SIM_CRIT_N_CATEGORIES; c++)
    cat += p->by_category[c];
  for (int k = 0; k < p->n_ranks; k++)
    ranks += p->rank_time[k];
  g_assert_cmpint(cat, ==, p->step_time);
  g_assert_cmpint(ranks, ==, p->step_time);
  /* Merged runs cover the same interval with as many nodes. */
  GArray *runs = sim_crit_runs(p);
  guint nodes = 0;
  for (guint k = 0; k < runs->len; k++) {
    const sim_crit_run *x = &g_array_index(runs, sim_crit_run, k);
    nodes += x->nodes;
    if (k + 1 < runs->len)
      g_assert_cmpint(x->end, ==, g_array_index(runs, sim_crit_run, k + 1).start);
  }
  g_assert_cmpuint(nodes, ==, p->segments->len);
  g_array_unref(runs);
}

/* Rank 0 computes 10 us, rank 1 30 us, then both all-reduce 1 MiB.  The
 * all-reduce starts when rank 1 issues it at 30 us and takes
 * 2 x (1 us + 524288 B / 100 GB/s) = 2 x (1,000,000 + 5,242,880) ps =
 * 12,485,760 ps; both ranks finish at 30 us + 12,485,760 ps, so the path
 * ends on rank 0 (lowest among the tie) in the collective [30 us, step] and
 * jumps to rank 1, the last issuer: rank 1's gemm [0, 30 us].  Rank 0
 * waited 30 - 10 = 20 us for rank 1. */
static void test_straggler(void)
{
  topo *t = load_topo(pair_yaml);
  const uint64_t S = 1048576;
  const sim_time_ps ar = pair_allreduce_ps(S);
  g_assert_cmpint(ar, ==, 2 * (1000000 + 5242880));
  et_workload *w = et_workload_new(2, "straggler");
  w->ranks[0] = comp_then_allreduce(10, S);
  w->ranks[1] = comp_then_allreduce(30, S);
  sim_result *r = run(w, t, 1);
  const sim_critical_path *p = r->critical;
  check_tiling(p, r);
  g_assert_cmpint(r->step_time, ==, 30 * US + ar);
  g_assert_cmpint(r->ranks[0].finish, ==, r->ranks[1].finish);
  g_assert_cmpint(p->end_rank, ==, 0);
  g_assert_cmpuint(p->segments->len, ==, 2);
  g_assert_cmpint(seg(p, 0)->rank, ==, 1);            /* rank 1's 30 us gemm */
  g_assert_cmpuint(seg(p, 0)->category, ==, SIM_CRIT_COMPUTE);
  g_assert_cmpint(seg(p, 0)->end, ==, 30 * US);
  g_assert_cmpint(seg(p, 1)->rank, ==, 0);            /* the all-reduce, from its data start */
  g_assert_cmpuint(seg(p, 1)->category, ==, SIM_CRIT_COMM);
  g_assert_cmpint(seg(p, 1)->start, ==, 30 * US);
  g_assert_cmpint(p->by_category[SIM_CRIT_COMPUTE], ==, 30 * US);
  g_assert_cmpint(p->by_category[SIM_CRIT_COMM], ==, ar);
  g_assert_cmpint(p->rank_time[1], ==, 30 * US);
  g_assert_cmpint(p->rank_time[0], ==, ar);
  g_assert_cmpuint(p->comm->len, ==, 1);              /* all_reduce on world: ar */
  g_assert_cmpint(g_array_index(p->comm, sim_crit_comm, 0).time, ==, ar);
  g_assert_cmpuint(g_array_index(p->comm, sim_crit_comm, 0).group, ==, ET_GROUP_WORLD);
  g_assert_cmpuint(p->waits->len, ==, 1);
  const sim_crit_wait *x = &g_array_index(p->waits, sim_crit_wait, 0);
  g_assert_cmpint(x->rank, ==, 0);
  g_assert_cmpint(x->for_rank, ==, 1);
  g_assert_cmpint(x->waited, ==, 20 * US);             /* 30 us - 10 us */
  g_assert_cmpuint(x->seq, ==, 0);
  g_assert_cmpuint(p->stragglers->len, ==, 1);
  const sim_crit_straggler *s = &g_array_index(p->stragglers, sim_crit_straggler, 0);
  g_assert_cmpint(s->rank, ==, 1);
  g_assert_cmpint(s->waited, ==, 20 * US);
  g_assert_cmpuint(s->count, ==, 1);
  /* 30 us of 42.48576 us is compute: 70.6 %; the wait (20 us, 47.1 %) is less. */
  char *b = sim_crit_bound_sentence(p, w);
  g_test_message("%s", b);
  g_assert_true(g_str_has_prefix(b, "the step is bound by GPU compute: 70.6 % of the critical path (rank 1)"));
  g_assert_nonnull(strstr(b, "rank 1's work makes the ranks on the path wait 0.020000 ms (47.1 % of the step)"));
  g_assert_nonnull(strstr(b, "communication transfer (data moving) is 29.4 % of the path"));
  g_free(b);
  sim_result_free(r);
  et_workload_free(w);

  /* Equal computes: both issue at 10 us, so each member binds to itself:
   * no rank jump, no straggler; the path is rank 0's gemm and collective. */
  w = et_workload_new(2, "symmetric");
  w->ranks[0] = comp_then_allreduce(10, S);
  w->ranks[1] = comp_then_allreduce(10, S);
  r = run(w, t, 1);
  p = r->critical;
  check_tiling(p, r);
  g_assert_cmpint(r->step_time, ==, 10 * US + ar);
  g_assert_cmpuint(p->segments->len, ==, 2);
  g_assert_cmpint(seg(p, 0)->rank, ==, 0);
  g_assert_cmpint(seg(p, 1)->rank, ==, 0);
  g_assert_cmpint(p->rank_time[1], ==, 0);
  g_assert_cmpuint(p->waits->len, ==, 0);
  g_assert_cmpuint(p->stragglers->len, ==, 0);
  sim_result_free(r);
  et_workload_free(w);

  /* The same, with 5 us more compute on rank 1 after the all-reduce: the
   * path ends on rank 1, whose own issue (10 us) is the start, so it binds
   * to itself (the start is recorded once for both members, each with
   * whether its own issue is the start), not to rank 0, the lowest rank
   * issuing at the start: rank 1's gemm [0, 10 us], the all-reduce, its
   * second gemm; no wait, rank 0 no time. */
  w = et_workload_new(2, "symmetric-tail");
  w->ranks[0] = comp_then_allreduce(10, S);
  et_builder *b1 = et_builder_new("test");
  et_builder_add_node(b1, 1, ET_NODE_COMP, "gemm", 10 * US, 0);
  dep(b1, add_coll(b1, 2, "all_reduce", ET_COLL_ALL_REDUCE, S, NULL), 1);
  dep(b1, et_builder_add_node(b1, 3, ET_NODE_COMP, "gemm", 5 * US, 0), 2);
  w->ranks[1] = finish(b1);
  r = run(w, t, 1);
  p = r->critical;
  check_tiling(p, r);
  g_assert_cmpint(r->step_time, ==, 15 * US + ar);
  g_assert_cmpint(p->end_rank, ==, 1);
  g_assert_cmpuint(p->segments->len, ==, 3);
  for (guint k = 0; k < 3; k++)
    g_assert_cmpint(seg(p, k)->rank, ==, 1);
  g_assert_cmpint(seg(p, 1)->start, ==, 10 * US);
  g_assert_cmpint(p->rank_time[0], ==, 0);
  g_assert_cmpuint(p->waits->len, ==, 0);
  sim_result_free(r);
  et_workload_free(w);
  topo_free(t);
}

/* One compute slot, two independent 10 us COMP nodes: "a" takes the slot
 * at 0, "b" waits and gets it when "a" finishes at 10 us, so b's binding
 * predecessor is a (through the slot, not an edge): path a [0, 10 us],
 * b [10, 20 us]. */
static void test_slot_wait(void)
{
  topo *t = load_topo(pair_yaml);
  et_workload *w = et_workload_new(1, "slot");
  et_builder *b = et_builder_new("slot");
  et_builder_add_node(b, 1, ET_NODE_COMP, "a", 10 * US, 0);
  et_builder_add_node(b, 2, ET_NODE_COMP, "b", 10 * US, 0);
  w->ranks[0] = finish(b);
  sim_result *r = run(w, t, 1);
  const sim_critical_path *p = r->critical;
  check_tiling(p, r);
  g_assert_cmpint(p->step_time, ==, 20 * US);
  g_assert_cmpuint(p->segments->len, ==, 2);
  g_assert_cmpuint(seg(p, 0)->node, ==, 0);
  g_assert_cmpint(seg(p, 0)->end, ==, 10 * US);
  g_assert_cmpuint(seg(p, 1)->node, ==, 1);
  g_assert_cmpint(p->by_category[SIM_CRIT_COMPUTE], ==, 20 * US);
  sim_result_free(r);
  /* Two slots: both run at once; the path is the one node that finished
   * last (b, processed after a at 10 us), 10 us. */
  r = run(w, t, 2);
  p = r->critical;
  check_tiling(p, r);
  g_assert_cmpint(p->step_time, ==, 10 * US);
  g_assert_cmpuint(p->segments->len, ==, 1);
  g_assert_cmpuint(seg(p, 0)->node, ==, 1);
  sim_result_free(r);
  et_workload_free(w);
  topo_free(t);
}

/* A host chain feeding the GPU: launch (CPU_OP, 5 us) -> host gap
 * (CPU_OP | DELAY, 3 us) -> kernel (COMP, 20 us) -> idle gap (DELAY,
 * 7 us) -> kernel2 (COMP, 4 us), plus a METADATA node at the end.
 * host = 5 + 3 = 8 us, compute = 20 + 4 = 24 us, idle = 7 us, other = 0;
 * step = 39 us.  Host is 20.5 % and idle 17.9 %: compute (61.5 %) bounds. */
static void test_host_idle_compute(void)
{
  topo *t = load_topo(pair_yaml);
  et_workload *w = et_workload_new(1, "host");
  et_builder *b = et_builder_new("host");
  et_builder_add_node(b, 1, ET_NODE_COMP, "cudaLaunchKernel", 5 * US, ET_FLAG_CPU_OP);
  uint32_t n = et_builder_add_node(b, 2, ET_NODE_COMP, "host_gap", 3 * US, ET_FLAG_CPU_OP | ET_FLAG_DELAY);
  dep(b, n, 1);
  n = et_builder_add_node(b, 3, ET_NODE_COMP, "kernel", 20 * US, 0);
  dep(b, n, 2);
  n = et_builder_add_node(b, 4, ET_NODE_COMP, "idle_gap", 7 * US, ET_FLAG_DELAY);
  dep(b, n, 3);
  n = et_builder_add_node(b, 5, ET_NODE_COMP, "kernel2", 4 * US, 0);
  dep(b, n, 4);
  n = et_builder_add_node(b, 6, ET_NODE_METADATA, "marker", 0, 0);
  dep(b, n, 5);
  w->ranks[0] = finish(b);
  sim_result *r = run(w, t, 1);
  const sim_critical_path *p = r->critical;
  check_tiling(p, r);
  g_assert_cmpint(p->step_time, ==, 39 * US);
  g_assert_cmpuint(p->segments->len, ==, 6);
  g_assert_cmpint(p->by_category[SIM_CRIT_HOST], ==, 8 * US);
  g_assert_cmpint(p->by_category[SIM_CRIT_COMPUTE], ==, 24 * US);
  g_assert_cmpint(p->by_category[SIM_CRIT_IDLE], ==, 7 * US);
  g_assert_cmpint(p->by_category[SIM_CRIT_OTHER], ==, 0);
  g_assert_cmpuint(seg(p, 5)->category, ==, SIM_CRIT_OTHER);
  g_assert_cmpint(seg(p, 5)->start, ==, seg(p, 5)->end);
  char *s = sim_crit_bound_sentence(p, w);
  g_test_message("%s", s);
  g_assert_true(g_str_has_prefix(s, "the step is bound by GPU compute: 61.5 % of the critical path (rank 0)"));
  g_assert_nonnull(strstr(s, "no simulated communication is on it"));
  g_free(s);
  sim_result_free(r);
  et_workload_free(w);

  /* The same chain with a long host part: launch 30 us makes host
   * (30 + 3 = 33 us of 64 us, 51.6 %) the bound. */
  w = et_workload_new(1, "host-bound");
  b = et_builder_new("host-bound");
  et_builder_add_node(b, 1, ET_NODE_COMP, "cudaLaunchKernel", 30 * US, ET_FLAG_CPU_OP);
  n = et_builder_add_node(b, 2, ET_NODE_COMP, "host_gap", 3 * US, ET_FLAG_CPU_OP | ET_FLAG_DELAY);
  dep(b, n, 1);
  n = et_builder_add_node(b, 3, ET_NODE_COMP, "kernel", 20 * US, 0);
  dep(b, n, 2);
  n = et_builder_add_node(b, 4, ET_NODE_COMP, "idle_gap", 7 * US, ET_FLAG_DELAY);
  dep(b, n, 3);
  n = et_builder_add_node(b, 5, ET_NODE_COMP, "kernel2", 4 * US, 0);
  dep(b, n, 4);
  w->ranks[0] = finish(b);
  r = run(w, t, 1);
  check_tiling(r->critical, r);
  g_assert_cmpint(r->critical->by_category[SIM_CRIT_HOST], ==, 33 * US);
  s = sim_crit_bound_sentence(r->critical, w);
  g_test_message("%s", s);
  g_assert_true(g_str_has_prefix(s, "the step is bound by host/CPU work: 51.6 % of the critical path (rank 0)"));
  g_free(s);
  sim_result_free(r);
  et_workload_free(w);
  topo_free(t);
}

/* Rank 0 sends 1 MiB to rank 1 at time 0; rank 1 computes 50 us before it
 * posts the receive.  The transfer starts at 50 us and takes
 * 1 us + 1048576 B / 100 GB/s = 1,000,000 + 10,485,760 ps; both sides
 * finish then, so the path ends on rank 0's send [50 us, step], whose
 * last issuer is rank 1's recv: the path continues with rank 1's 50 us
 * compute.  Rank 0 waited 50 us for rank 1. */
static void test_send_recv_late_receiver(void)
{
  topo *t = load_topo(pair_yaml);
  const sim_time_ps xfer = 1000000 + 10485760;
  et_workload *w = et_workload_new(2, "p2p");
  et_builder *b = et_builder_new("p2p0");
  add_p2p(b, 1, TRUE, 1, 5, 1048576);
  w->ranks[0] = finish(b);
  b = et_builder_new("p2p1");
  et_builder_add_node(b, 1, ET_NODE_COMP, "work", 50 * US, 0);
  uint32_t n = add_p2p(b, 2, FALSE, 0, 5, 1048576);
  dep(b, n, 1);
  w->ranks[1] = finish(b);
  sim_result *r = run(w, t, 1);
  const sim_critical_path *p = r->critical;
  check_tiling(p, r);
  g_assert_cmpint(p->step_time, ==, 50 * US + xfer);
  g_assert_cmpint(p->end_rank, ==, 0);
  g_assert_cmpuint(p->segments->len, ==, 2);
  g_assert_cmpint(seg(p, 0)->rank, ==, 1);
  g_assert_cmpuint(seg(p, 0)->category, ==, SIM_CRIT_COMPUTE);
  g_assert_cmpint(seg(p, 1)->rank, ==, 0);
  g_assert_cmpint(seg(p, 1)->start, ==, 50 * US);
  g_assert_cmpint(p->by_category[SIM_CRIT_COMM], ==, xfer);
  g_assert_cmpuint(p->comm->len, ==, 1);
  g_assert_cmpuint(g_array_index(p->comm, sim_crit_comm, 0).node_type, ==, ET_NODE_COMM_SEND);
  g_assert_cmpuint(p->waits->len, ==, 1);
  const sim_crit_wait *x = &g_array_index(p->waits, sim_crit_wait, 0);
  g_assert_cmpint(x->rank, ==, 0);
  g_assert_cmpint(x->for_rank, ==, 1);
  g_assert_cmpint(x->waited, ==, 50 * US);             /* issued at 0, data at 50 us */
  g_assert_cmpuint(x->seq, ==, ET_NONE);
  sim_result_free(r);
  et_workload_free(w);
  topo_free(t);
}

/* A communication replayed for its measured 15 us (ET_FLAG_REPLAY) after
 * a 10 us kernel: communication_replayed 15 us, compute 10 us, nothing
 * simulated.  The replayed part (60 %) bounds the step. */
static void test_replayed_comm(void)
{
  topo *t = load_topo(pair_yaml);
  et_workload *w = et_workload_new(1, "replay");
  et_builder *b = et_builder_new("replay");
  et_builder_add_node(b, 1, ET_NODE_COMP, "kernel", 10 * US, 0);
  uint32_t n = et_builder_add_node(b, 2, ET_NODE_COMM_COLL, "c10d::allreduce_", 15 * US, ET_FLAG_REPLAY);
  dep(b, n, 1);
  w->ranks[0] = finish(b);
  sim_result *r = run(w, t, 1);
  const sim_critical_path *p = r->critical;
  check_tiling(p, r);
  g_assert_cmpint(p->step_time, ==, 25 * US);
  g_assert_cmpint(p->by_category[SIM_CRIT_COMM_REPLAYED], ==, 15 * US);
  g_assert_cmpint(p->by_category[SIM_CRIT_COMM], ==, 0);
  g_assert_cmpint(p->by_category[SIM_CRIT_COMPUTE], ==, 10 * US);
  g_assert_cmpuint(p->comm->len, ==, 0);
  char *s = sim_crit_bound_sentence(p, w);
  g_test_message("%s", s);
  g_assert_true(g_str_has_prefix(s, "the step is bound by replayed communication"));
  g_assert_nonnull(strstr(s, "60.0 %"));
  g_free(s);
  sim_result_free(r);
  et_workload_free(w);
  topo_free(t);
}

/* Communication bound: a 64 MiB all-reduce after 1 us of compute on both
 * ranks: 2 x (1 us + 33554432 B / 100 GB/s) = 2 x (1 + 335.54432) us =
 * 673.08864 us of 674.08864 us (99.9 %). */
static void test_comm_bound_sentence(void)
{
  topo *t = load_topo(pair_yaml);
  et_workload *w = et_workload_new(2, "comm-bound");
  w->ranks[0] = comp_then_allreduce(1, 64 * 1048576);
  w->ranks[1] = comp_then_allreduce(1, 64 * 1048576);
  sim_result *r = run(w, t, 1);
  check_tiling(r->critical, r);
  g_assert_cmpint(r->critical->by_category[SIM_CRIT_COMM], ==, 2 * (US + 335544320));
  char *s = sim_crit_bound_sentence(r->critical, w);
  g_test_message("%s", s);
  g_assert_true(g_str_has_prefix(s, "the step is bound by communication: 99.9 % of the critical path "
                                    "(all_reduce on group world: 99.9 %)"));
  g_free(s);
  sim_result_free(r);
  et_workload_free(w);
  topo_free(t);
}

/* A straggler whose waits exceed every category: rank 1 runs host 10 us,
 * kernel 10 us, idle gap 10 us before a 4 KiB all-reduce; rank 0 runs a
 * 5 us kernel.  Rank 0 waits 30 - 5 = 25 us; the largest category on the
 * path is 10 us, so the straggler is named first. */
static void test_straggler_sentence(void)
{
  topo *t = load_topo(pair_yaml);
  et_workload *w = et_workload_new(2, "straggler-bound");
  w->ranks[0] = comp_then_allreduce(5, 4096);
  et_builder *b = et_builder_new("slow");
  et_builder_add_node(b, 1, ET_NODE_COMP, "launch", 10 * US, ET_FLAG_CPU_OP);
  uint32_t n = et_builder_add_node(b, 2, ET_NODE_COMP, "kernel", 10 * US, 0);
  dep(b, n, 1);
  n = et_builder_add_node(b, 3, ET_NODE_COMP, "gap", 10 * US, ET_FLAG_DELAY);
  dep(b, n, 2);
  n = add_coll(b, 4, "all_reduce", ET_COLL_ALL_REDUCE, 4096, NULL);
  dep(b, n, 3);
  w->ranks[1] = finish(b);
  sim_result *r = run(w, t, 1);
  const sim_critical_path *p = r->critical;
  check_tiling(p, r);
  g_assert_cmpint(g_array_index(p->stragglers, sim_crit_straggler, 0).waited, ==, 25 * US);
  char *s = sim_crit_bound_sentence(p, w);
  g_test_message("%s", s);
  g_assert_true(g_str_has_prefix(s, "the step is bound by a straggler: rank 1's work makes the ranks on the path "
                                    "wait 0.025000 ms"));
  g_free(s);
  sim_result_free(r);
  et_workload_free(w);
  topo_free(t);
}

/* ---- a larger random-ish workload ---- */

/* 4 ranks, 40 layers each.  A layer: 1 to 4 COMP nodes (1 to 20 us; plain,
 * CPU_OP, CPU_OP | DELAY or DELAY), each after the previous layer's tail
 * and maybe after earlier nodes of the layer; then a communication after
 * the layer's last node (layer % 3: 0 world all-reduce, 1 all-reduce in
 * the rank's pair group, 2 send/recv within the pair); every fifth layer
 * a replayed communication; then a METADATA tail after everything in the
 * layer.  Durations differ per rank (seeded by rank), so the path jumps
 * between ranks.  About 180 nodes per rank. */
static et_workload *random_workload(void)
{
  et_workload *w = et_workload_new(4, "random");
  const int pair0[] = {0, 1}, pair1[] = {2, 3};
  g_assert_cmpuint(et_workload_add_group(w, "pair0", "pp", pair0, 2), ==, 0);
  g_assert_cmpuint(et_workload_add_group(w, "pair1", "pp", pair1, 2), ==, 1);
  static const uint8_t flags[] = {0, 0, ET_FLAG_CPU_OP, ET_FLAG_CPU_OP | ET_FLAG_DELAY, ET_FLAG_DELAY};
  for (int r = 0; r < 4; r++) {
    GRand *rng = g_rand_new_with_seed(1234 + (guint32)r);
    et_builder *b = et_builder_new("random");
    uint64_t id = 1, tail = 0;
    for (int layer = 0; layer < 40; layer++) {
      int k = g_rand_int_range(rng, 1, 5);
      uint64_t first = id;
      for (int c = 0; c < k; c++) {
        char name[32];
        g_snprintf(name, sizeof name, "l%d_op%d", layer, c);
        uint32_t n = et_builder_add_node(b, id, ET_NODE_COMP, name, g_rand_int_range(rng, 1, 21) * US,
                                         flags[g_rand_int_range(rng, 0, G_N_ELEMENTS(flags))]);
        if (tail)
          dep(b, n, tail);
        for (uint64_t e = first; e < id; e++)
          if (g_rand_boolean(rng))
            dep(b, n, e);
        id++;
      }
      uint64_t last_comp = id - 1;
      uint32_t cn;
      const char *pg = r < 2 ? "pair0" : "pair1";
      if (layer % 3 == 0)
        cn = add_coll(b, id, "world_all_reduce", ET_COLL_ALL_REDUCE, 65536 * (uint64_t)(layer + 1), NULL);
      else if (layer % 3 == 1)
        cn = add_coll(b, id, "pair_all_reduce", ET_COLL_ALL_REDUCE, 32768 * (uint64_t)(layer + 1), pg);
      else
        cn = add_p2p(b, id, r % 2 == 0, r ^ 1, layer, 131072);
      dep(b, cn, last_comp);
      uint64_t comm_id = id++;
      if (layer % 5 == 4) {
        uint32_t rn = et_builder_add_node(b, id, ET_NODE_COMM_COLL, "replayed", g_rand_int_range(rng, 1, 9) * US,
                                          ET_FLAG_REPLAY);
        dep(b, rn, comm_id);
        id++;
      }
      char tname[32];
      g_snprintf(tname, sizeof tname, "l%d_tail", layer);
      uint32_t tn = et_builder_add_node(b, id, ET_NODE_METADATA, tname, 0, 0);
      for (uint64_t e = first; e < id; e++)
        dep(b, tn, e);
      tail = id++;
    }
    w->ranks[r] = finish(b);
    g_rand_free(rng);
  }
  GError *error = NULL;
  g_assert_true(et_workload_resolve_groups(w, &error));
  g_assert_no_error(error);
  return w;
}

/* The record of (rank, node id) in r->comms, or NULL. */
static const sim_comm_record *find_record(const sim_result *r, int rank, uint64_t node_id)
{
  for (guint k = 0; k < r->comms->len; k++) {
    const sim_comm_record *c = &g_array_index(r->comms, sim_comm_record, k);
    if (c->rank == rank && c->node_id == node_id)
      return c;
  }
  return NULL;
}

/* On the random workload: the segments tile [0, step] and the categories
 * sum to it; every segment agrees with what the replay reports
 * independently (timed nodes last their duration; communication segments
 * run from the record's data start to its end; each wait is that record's
 * start - issue); recording changes nothing in the run; two runs give the
 * same path. */
static void test_random_tiling(void)
{
  topo *t = load_topo(quad_yaml);
  et_workload *w = random_workload();
  uint64_t total = 0;
  for (int r = 0; r < 4; r++)
    total += w->ranks[r]->n_nodes;
  g_assert_cmpuint(total, >, 400);
  sim_result *r = run(w, t, 2);
  const sim_critical_path *p = r->critical;
  check_tiling(p, r);
  g_test_message("%" G_GUINT64_FORMAT " nodes, path of %u nodes, %u waits, step %" G_GINT64_FORMAT " ps", total,
                 p->segments->len, p->waits->len, p->step_time);
  g_assert_cmpuint(p->segments->len, >, 40);
  g_assert_cmpuint(p->waits->len, >, 0);
  for (guint k = 0; k < p->segments->len; k++) {
    const sim_crit_segment *s = seg(p, k);
    const et_node *n = &w->ranks[s->rank]->nodes[s->node];
    g_assert_cmpuint(s->category, ==, sim_crit_classify(n));
    if (s->category == SIM_CRIT_COMM) {
      const sim_comm_record *c = find_record(r, s->rank, n->id);
      g_assert_nonnull(c);
      g_assert_cmpint(c->start, ==, s->start);
      g_assert_cmpint(c->end, ==, s->end);
    } else if (n->type == ET_NODE_COMP || (n->flags & ET_FLAG_REPLAY)) {
      g_assert_cmpint(s->end - s->start, ==, n->duration_ps);
    } else {
      g_assert_cmpint(s->end, ==, s->start);
    }
  }
  for (guint k = 0; k < p->waits->len; k++) {
    const sim_crit_wait *x = &g_array_index(p->waits, sim_crit_wait, k);
    const sim_comm_record *c = find_record(r, x->rank, w->ranks[x->rank]->nodes[x->node].id);
    g_assert_nonnull(c);
    g_assert_cmpint(x->waited, ==, c->start - c->issue);
    g_assert_cmpint(x->rank, !=, x->for_rank);
  }
  /* Every wait is either a straggler's (at a collective) or a dependency
   * (at a send/recv): the two totals together are all the waits. */
  sim_time_ps waited = 0;
  for (guint k = 0; k < p->stragglers->len; k++)
    waited += g_array_index(p->stragglers, sim_crit_straggler, k).waited;
  for (guint k = 0; k < p->dependencies->len; k++)
    waited += g_array_index(p->dependencies, sim_crit_straggler, k).waited;
  for (guint k = 0; k < p->waits->len; k++)
    waited -= g_array_index(p->waits, sim_crit_wait, k).waited;
  g_assert_cmpint(waited, ==, 0);

  /* Recording is passive: the same run without it. */
  sim_result *plain = run_opt(w, t, 2, FALSE);
  g_assert_cmpint(plain->step_time, ==, r->step_time);
  g_assert_cmpuint(plain->comms->len, ==, r->comms->len);
  g_assert_cmpint(memcmp(plain->comms->data, r->comms->data, sizeof(sim_comm_record) * r->comms->len), ==, 0);
  for (int k = 0; k < 4; k++)
    g_assert_cmpint(plain->ranks[k].finish, ==, r->ranks[k].finish);
  sim_result_free(plain);

  /* Deterministic. */
  sim_result *again = run(w, t, 2);
  g_assert_cmpuint(again->critical->segments->len, ==, p->segments->len);
  g_assert_cmpint(memcmp(again->critical->segments->data, p->segments->data,
                         sizeof(sim_crit_segment) * p->segments->len), ==, 0);
  char *s1 = sim_crit_bound_sentence(p, w), *s2 = sim_crit_bound_sentence(again->critical, w);
  g_assert_cmpstr(s1, ==, s2);
  g_test_message("%s", s1);
  g_free(s1);
  g_free(s2);
  sim_result_free(again);
  sim_result_free(r);
  et_workload_free(w);
  topo_free(t);
}

/* ---- `wisp simulate --critical-path --json` ---- */

static int simulate(char **args, int n, const char *stdout_path)
{
  char **argv = g_new0(char *, n + 2);
  argv[0] = g_strdup("simulate");
  for (int k = 0; k < n; k++)
    argv[k + 1] = g_strdup(args[k]);
  char **keep = g_memdup2(argv, sizeof(char *) * (n + 2));
  /* The command prints to stdout, which carries this test's TAP stream:
   * send it to a file for the call. */
  fflush(stdout);
  int saved = dup(STDOUT_FILENO);
  int fd = open(stdout_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  g_assert_cmpint(saved, >=, 0);
  g_assert_cmpint(fd, >=, 0);
  dup2(fd, STDOUT_FILENO);
  close(fd);
  int rc = wisp_cmd_simulate(n + 1, argv);
  fflush(stdout);
  dup2(saved, STDOUT_FILENO);
  close(saved);
  g_strfreev(keep);
  g_free(argv);
  return rc;
}

/* Decimal nanoseconds ("1234.567") to picoseconds. */
static sim_time_ps json_ps(const cJSON *o, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  g_assert_true(cJSON_IsNumber(v));
  return (sim_time_ps)llround(v->valuedouble * 1000.0);
}

/* The straggler workload of test_straggler through the command: the JSON
 * report carries critical_path with by_category summing to step_time_ns
 * (30 us of compute + 12,485,760 ps of all-reduce), the straggler and the
 * two merged runs; the text names the chain. */
static void test_simulate_cli(void)
{
  char *dir = g_dir_make_tmp("wisp-critical-XXXXXX", NULL);
  g_assert_nonnull(dir);
  et_workload *w = et_workload_new(2, "cli");
  w->ranks[0] = comp_then_allreduce(10, 1048576);
  w->ranks[1] = comp_then_allreduce(30, 1048576);
  GError *error = NULL;
  g_assert_true(et_workload_write(w, dir, "trace", &error));
  g_assert_no_error(error);
  et_workload_free(w);
  char *netpath = g_build_filename(dir, "pair.yaml", NULL);
  g_assert_true(g_file_set_contents(netpath, pair_yaml, -1, NULL));
  char *prefix = g_build_filename(dir, "trace", NULL);
  char *json = g_build_filename(dir, "report.json", NULL);
  char *text = g_build_filename(dir, "stdout.txt", NULL);
  char *args[] = {prefix, "--network", netpath, "--critical-path", "--json", json};
  g_assert_cmpint(simulate(args, G_N_ELEMENTS(args), text), ==, 0);

  char *out = NULL;
  g_assert_true(g_file_get_contents(text, &out, NULL, NULL));
  g_assert_nonnull(strstr(out, "critical path: "));
  g_assert_nonnull(strstr(out, "critical path chain (2 runs"));
  g_assert_nonnull(strstr(out, "bound: the step is bound by GPU compute"));
  g_free(out);

  char *body = NULL;
  g_assert_true(g_file_get_contents(json, &body, NULL, NULL));
  cJSON *d = cJSON_Parse(body);
  g_assert_nonnull(d);
  const cJSON *cp = cJSON_GetObjectItemCaseSensitive(d, "critical_path");
  g_assert_true(cJSON_IsObject(cp));
  sim_time_ps step = json_ps(cp, "step_time_ns");
  g_assert_cmpint(step, ==, json_ps(d, "step_time_ns"));
  g_assert_cmpint(step, ==, 30 * US + 2 * (1000000 + 5242880));
  const cJSON *cat = cJSON_GetObjectItemCaseSensitive(cp, "by_category");
  sim_time_ps sum = 0;
  int n_cat = 0;
  for (const cJSON *c = cat->child; c; c = c->next) {
    g_assert_true(g_str_has_suffix(c->string, "_ns"));
    sum += (sim_time_ps)llround(c->valuedouble * 1000.0);
    n_cat++;
  }
  g_assert_cmpint(n_cat, ==, SIM_CRIT_N_CATEGORIES);
  g_assert_cmpint(sum, ==, step);
  g_assert_cmpint(json_ps(cat, "compute_ns"), ==, 30 * US);
  g_assert_cmpint(cJSON_GetObjectItemCaseSensitive(cp, "end_rank")->valueint, ==, 0);
  const cJSON *st = cJSON_GetObjectItemCaseSensitive(cp, "stragglers");
  g_assert_cmpint(cJSON_GetArraySize(st), ==, 1);
  g_assert_cmpint(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(st, 0), "rank")->valueint, ==, 1);
  g_assert_cmpint(json_ps(cJSON_GetArrayItem(st, 0), "waited_ns"), ==, 20 * US);
  const cJSON *segs = cJSON_GetObjectItemCaseSensitive(cp, "segments");
  g_assert_cmpint(cJSON_GetArraySize(segs), ==, 2);
  const cJSON *s0 = cJSON_GetArrayItem(segs, 0);
  g_assert_cmpstr(cJSON_GetObjectItemCaseSensitive(s0, "category")->valuestring, ==, "compute");
  g_assert_cmpstr(cJSON_GetObjectItemCaseSensitive(s0, "first")->valuestring, ==, "gemm");
  g_assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(cp, "bound")));
  cJSON_Delete(d);
  g_free(body);

  const char *files[] = {json, text, netpath};
  for (guint k = 0; k < G_N_ELEMENTS(files); k++)
    g_remove(files[k]);
  for (int r = 0; r < 2; r++) {
    char *f = g_strdup_printf("%s.%d.et", prefix, r);
    g_remove(f);
    g_free(f);
  }
  GDir *left = g_dir_open(dir, 0, NULL);
  const char *e;
  while (left && (e = g_dir_read_name(left)) != NULL) {
    char *f = g_build_filename(dir, e, NULL);
    g_remove(f);
    g_free(f);
  }
  if (left)
    g_dir_close(left);
  g_rmdir(dir);
  g_free(json);
  g_free(text);
  g_free(netpath);
  g_free(prefix);
  g_free(dir);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/critical/straggler", test_straggler);
  g_test_add_func("/critical/slot-wait", test_slot_wait);
  g_test_add_func("/critical/host-idle-compute", test_host_idle_compute);
  g_test_add_func("/critical/send-recv-late-receiver", test_send_recv_late_receiver);
  g_test_add_func("/critical/replayed-comm", test_replayed_comm);
  g_test_add_func("/critical/comm-bound-sentence", test_comm_bound_sentence);
  g_test_add_func("/critical/straggler-sentence", test_straggler_sentence);
  g_test_add_func("/critical/random-tiling", test_random_tiling);
  g_test_add_func("/critical/simulate-cli", test_simulate_cli);
  return g_test_run();
}
