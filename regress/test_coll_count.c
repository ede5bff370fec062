/* test_coll_count.c: the per-transfer path's step counters in half a
 * byte (collectives/coll_count.c, issue 30): a short plan that goes per
 * transfer from its start counts in half a byte per slot, step and kind,
 * widens to one byte the first time a count would pass 15 and to two
 * bytes the first time one would pass 255.
 *
 * A direct collective over 300 members of one switch has one step in
 * which every member receives 299 transfers, so every receiving slot
 * passes 15 and then 255 and the run widens twice mid-flight; over 40
 * members (39 receives) it widens once.  Its result must be the
 * symmetric fast path's (coll_fast.c, which keeps no counters): every
 * member's done time, the transfer count and the bytes on every link;
 * the all-gather's done time is also the closed form of a switch whose
 * uplink serves 299 pieces back to back: 299 x piece / B + 2 x latency
 * (as /coll_fast/direct_switch with 12 members).  Counts that stay below
 * 16 (12 members) go through the same comparison without a widening.
 */
#include "config.h"

#include "collectives/coll.h"

#include "regress/test_coll_paths.h"

#define SWITCH_YAML(n) \
  "schema_version: 1\nname: sw\nmodel: analytical\nlibrary: {name: ideal}\n" \
  "dims:\n  - {name: sw, kind: switch, size: " #n ", bandwidth: 400GB/s, latency: 936.25ns}\n"

/* One direct collective of type over members 0..n-1 at time 0, on the
 * fast path (fast 1) or per transfer (fast 0), on an engine without the
 * invariant checks of run() (test_coll_paths.h): they cost O(queue) per
 * event, and the 300-member run queues 89,700 arrivals at once.  Returns
 * every member's done time, the transfer count and every link's bytes;
 * *taken: the fast path ran. */
static coll_path_result direct_run(const topo *t, et_coll_type type, uint64_t bytes, int n, int fast, gboolean *taken)
{
  sim_engine *sim = sim_engine_new(FALSE);
  net *nt = net_new(sim, t, NET_TIER_ANALYTICAL);
  coll_policy *pol = coll_policy_new_default();
  coll_policy_force(pol, COLL_ALGO_DIRECT);
  coll_rt *c = coll_rt_new(sim, nt, pol);
  coll_rt_set_ring_recurrence(c, fast ? 2 : 0); /* the switch of every fast path */
  int *ranks = g_new(int, n);
  coll_path_result res = { g_new(sim_time_ps, n), 0, g_new(uint64_t, topo_n_links(t) + 1), { 0 }, -1 };
  for (int i = 0; i < n; i++) {
    ranks[i] = i;
    res.t[i] = -1;
  }
  done_log log = { res.t, n };
  coll_desc d = { .type = type, .bytes = bytes, .ranks = ranks, .n_ranks = n, .root = -1 };
  coll_start(c, &d, on_done, &log, 0, NULL);
  sim_run(sim, SIM_TIME_MAX);
  g_assert_false(sim_time_overflowed(sim));
  res.transfers = net_transfers(nt);
  for (uint32_t l = 0; l < topo_n_links(t); l++)
    res.link_bytes[l] = net_link_bytes(nt, l);
  *taken = coll_rt_ring_stats(c)->phase_runs == 1;
  coll_rt_free(c);
  coll_policy_free(pol);
  net_free(nt);
  sim_engine_free(sim);
  g_free(ranks);
  return res;
}

/* Runs type per transfer and on the fast path (which must take it);
 * requires equal results and steps x n x (n - 1) transfers; returns the per-transfer done times (g_free). */
static sim_time_ps *per_transfer_as_fast(const topo *t, et_coll_type type, uint64_t bytes, int n, uint64_t steps)
{
  gboolean fast_taken, slow_taken;
  coll_path_result a = direct_run(t, type, bytes, n, 1, &fast_taken);
  coll_path_result b = direct_run(t, type, bytes, n, 0, &slow_taken);
  g_assert_true(fast_taken);
  g_assert_false(slow_taken);
  g_assert_cmpuint(a.transfers, ==, steps * (uint64_t)n * (uint64_t)(n - 1)); /* q - 1 pieces per member and step */
  g_assert_cmpuint(b.transfers, ==, a.transfers);
  for (int i = 0; i < n; i++) {
    g_assert_cmpint(a.t[i], >, 0);
    g_assert_cmpint(b.t[i], ==, a.t[i]);
  }
  for (uint32_t l = 0; l < topo_n_links(t); l++)
    g_assert_cmpuint(b.link_bytes[l], ==, a.link_bytes[l]);
  g_free(a.t);
  g_free(a.link_bytes);
  g_free(b.link_bytes);
  return b.t;
}

static void check_direct(int n, const char *yaml)
{
  topo *t = load(yaml);
  const uint64_t piece = 1 << 16;
  sim_time_ps *times = per_transfer_as_fast(t, ET_COLL_ALL_GATHER, piece, n, 1);
  sim_time_ps expect = wisp_transfer_ps((uint64_t)(n - 1) * piece, 400000000000) + 2 * 936250;
  for (int i = 0; i < n; i++)
    g_assert_cmpint(times[i], ==, expect);
  g_free(times);
  /* All-to-all: one step; all-reduce: reduce-scatter, then all-gather. */
  g_free(per_transfer_as_fast(t, ET_COLL_ALL_TO_ALL, (uint64_t)n * piece, n, 1));
  g_free(per_transfer_as_fast(t, ET_COLL_ALL_REDUCE, (uint64_t)n * piece, n, 2));
  topo_free(t);
}

/* 299 receives per slot in the one step: the counters widen twice. */
static void test_widen(void)
{
  check_direct(300, SWITCH_YAML(300));
}

/* 39 receives per slot: half a byte, then one byte. */
static void test_widen4(void)
{
  check_direct(40, SWITCH_YAML(40));
}

/* 11 receives: half a byte throughout. */
static void test_narrow(void)
{
  check_direct(12, SWITCH_YAML(12));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/coll_count/widen", test_widen);
  g_test_add_func("/coll_count/widen4", test_widen4);
  g_test_add_func("/coll_count/narrow", test_narrow);
  return g_test_run();
}
