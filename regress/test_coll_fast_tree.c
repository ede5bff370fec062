/* test_coll_fast_tree.c: the tree path (collectives/coll_fast_tree.c;
 * issue 30 item 1) against the per-transfer path.
 *
 * Every case runs one double binary tree collective of the ideal library
 * twice on tier A, with the fast paths on (coll_rt_set_ring_recurrence(c,
 * 2): groups of any size) and off (0), and requires the same done time
 * for every member to the picosecond, the same transfer count and the
 * same bytes on every link; the counters (coll_rt_ring_stats) show that
 * the tree path ran (phase_tree).  Competing traffic (a send over links
 * of the collective) is injected before the start, in the start's
 * instant, at 40 instants spread over the run and at every member's
 * done time and a picosecond either side (also sent from an event after
 * the run's start, so that the done events of that instant precede it
 * and the members that end then are done when the run converts): the
 * path must hand the
 * run back to the per-transfer path (a conversion) with the same results,
 * the competitor's done time included.  Two trees run concurrently, on
 * disjoint and on shared links.
 *
 * Closed form (test_closed_form): an all-reduce of S over members 0, 1,
 * 2 of a switch (every route: the sender's uplink, the receiver's
 * downlink, bandwidth B, latency alpha each).  Both trees have root 0;
 * tree 0's children are 1 and 2, tree 1's are 2 and 1 (labels mirrored),
 * each tree moves S/2, one transfer time T = S/2 / B.  The slots start in
 * slot order, so the four leaf sends issued at 0 leave uplink 1 as (1,
 * tree 0) then (1, tree 1) and uplink 2 likewise, and downlink 0 serves
 * them in that order: they arrive at T, 2T, 3T, 4T (+ 2 alpha).  Tree 0's
 * root has both children's data at 3T + 2a and sends to 1 then 2 (uplink
 * 0 ends them at 4T and 5T: arrivals 4T + 4a, 5T + 4a); tree 1's at 4T +
 * 2a, behind them on uplink 0, to 2 then 1 (6T + 4a, 7T + 4a).  Member 0
 * ends when its last send has arrived, 7T + 4 alpha; member 1 with its
 * tree 1 receive, 7T + 4 alpha; member 2 at 6T + 4 alpha.
 */
#include "config.h"

#include "collectives/coll.h"
#include "collectives/libraries/nccl/coll_nccl.h"

#include "regress/test_coll_paths.h"

#define SWITCH_YAML(n) \
  "schema_version: 1\nname: sw\nmodel: analytical\nlibrary: {name: ideal}\n" \
  "dims:\n  - {name: sw, kind: switch, size: " #n ", bandwidth: 400GB/s, latency: 936.25ns}\n"

/* Routes of several hops that share links between members. */
#define RING_YAML \
  "schema_version: 1\nname: ring\nmodel: analytical\nlibrary: {name: ideal}\n" \
  "dims:\n  - {name: x, kind: ring, size: 12, bandwidth: 50GB/s, latency: 500ns}\n"

/* Nodes of 4 on a fat tree; routes between nodes cross several links. */
#define NODES_YAML \
  "schema_version: 1\nname: nodes\nmodel: analytical\nlibrary: {name: ideal}\n" \
  "dims:\n  - {name: node, kind: switch, size: 4, bandwidth: 450GB/s, latency: 500ns}\n" \
  "  - {name: fabric, kind: fat_tree, size: 6, leaves: 2, bandwidth: 50GB/s, latency: 2us}\n"

static void res_free(coll_path_result *r)
{
  g_free(r->t);
  g_free(r->link_bytes);
}

/* A double binary tree policy, with or without a reduction cost. */
static coll_policy *tree_policy(gboolean red)
{
  coll_policy *pol = coll_policy_new_default();
  coll_policy_force(pol, COLL_ALGO_DOUBLE_BINARY_TREE);
  if (red)
    coll_policy_set_reduce_bw(pol, 300000000000);
  return pol;
}

/* Runs both paths; requires equal results (every member's done time, the
 * transfer count, the bytes on every link, the competitor's done time);
 * returns the fast one's. */
static coll_path_result both(const topo *t, const coll_policy *pol, et_coll_type type, uint64_t bytes, const int *ranks,
                             int n, int root, const competitor *comp, sim_time_ps comp_at)
{
  coll_path_result a = run_rooted(t, pol, type, bytes, ranks, n, root, 1, comp, comp_at);
  coll_path_result b = run_rooted(t, pol, type, bytes, ranks, n, root, 0, comp, comp_at);
  for (int i = 0; i < n; i++) {
    if (a.t[i] != b.t[i])
      g_test_message("comp_at %" G_GINT64_FORMAT " member %d: tree path %" G_GINT64_FORMAT
                     " ps, per transfer %" G_GINT64_FORMAT " ps (conversions %d)",
                     comp_at, i, a.t[i], b.t[i], (int)a.st.phase_conversions);
    g_assert_cmpint(a.t[i], ==, b.t[i]);
  }
  g_assert_cmpuint(a.transfers, ==, b.transfers);
  for (uint32_t l = 0; l < topo_n_links(t); l++)
    g_assert_cmpuint(a.link_bytes[l], ==, b.link_bytes[l]);
  g_assert_cmpint(a.comp_done, ==, b.comp_done);
  g_assert_cmpuint(b.st.phase_runs, ==, 0); /* off: never taken */
  res_free(&b);
  return a;
}

static void test_closed_form(void)
{
  topo *t = load(SWITCH_YAML(16));
  coll_policy *pol = tree_policy(FALSE);
  const int ranks[] = { 0, 1, 2 };
  const uint64_t S = 16 << 20;
  coll_path_result a = both(t, pol, ET_COLL_ALL_REDUCE, S, ranks, 3, -1, NULL, -1);
  g_assert_cmpuint(a.st.phase_tree, ==, 1);
  g_assert_cmpuint(a.st.phase_runs, ==, 1);
  sim_time_ps T = wisp_transfer_ps(S / 2, 400000000000), alpha = 936250;
  g_assert_cmpint(a.t[0], ==, 7 * T + 4 * alpha);
  g_assert_cmpint(a.t[1], ==, 7 * T + 4 * alpha);
  g_assert_cmpint(a.t[2], ==, 6 * T + 4 * alpha);
  g_assert_cmpuint(a.transfers, ==, 8); /* 2 trees x 2 edges x (up, down) */
  res_free(&a);
  coll_policy_free(pol);
  topo_free(t);
}

/* Members: q ranks of the network in a scattered order (rank i x 5 mod
 * nr when 5 is prime to nr, else in order). */
static int *scattered(int q, int nr)
{
  int *r = g_new(int, q);
  for (int i = 0; i < q; i++)
    r[i] = nr % 5 != 0 ? (int)(((int64_t)i * 5) % nr) : i;
  return r;
}

/* Every type the tree runs (all-reduce, reduce, broadcast: roots first,
 * middle and last), sizes that split evenly and not, with and without a
 * reduction cost, on a switch, a ring (shared multi-hop routes) and nodes
 * on a fat tree: the tree path is taken and equals the per-transfer
 * path. */
static void test_shapes(void)
{
  const char *yamls[] = { SWITCH_YAML(64), RING_YAML, NODES_YAML };
  const int qs[] = { 2, 3, 5, 12, 16, 37 };
  const uint64_t sizes[] = { 16 << 20, (16 << 20) + 3, 1000 };
  int cases = 0;
  for (size_t y = 0; y < G_N_ELEMENTS(yamls); y++) {
    topo *t = load(yamls[y]);
    int nr = topo_n_ranks(t);
    for (size_t qi = 0; qi < G_N_ELEMENTS(qs); qi++) {
      int q = qs[qi];
      if (q > nr)
        continue;
      int *ranks = scattered(q, nr);
      for (int red = 0; red < 2; red++) {
        coll_policy *pol = tree_policy(red);
        for (size_t si = 0; si < G_N_ELEMENTS(sizes); si++) {
          const et_coll_type types[] = { ET_COLL_ALL_REDUCE, ET_COLL_REDUCE, ET_COLL_BROADCAST };
          for (size_t ti = 0; ti < G_N_ELEMENTS(types); ti++) {
            int root = types[ti] == ET_COLL_ALL_REDUCE ? -1 : ranks[(si * (size_t)(q - 1)) / 2];
            coll_path_result a = both(t, pol, types[ti], sizes[si], ranks, q, root, NULL, -1);
            g_assert_cmpuint(a.st.phase_tree, ==, 1);
            g_assert_cmpuint(a.st.phase_conversions, ==, 0);
            res_free(&a);
            cases++;
          }
        }
        coll_policy_free(pol);
      }
      g_free(ranks);
    }
    topo_free(t);
  }
  g_test_message("%d cases on the tree path", cases);
}

/* One case with the competitor src -> dst (ranks) at many instants (see
 * the top comment).  O(injections x run). */
static void competitor_case(const char *yaml, et_coll_type type, gboolean red, int q, int root_member, int src,
                            int dst)
{
  topo *t = load(yaml);
  coll_policy *pol = tree_policy(red);
  int *ranks = scattered(q, topo_n_ranks(t));
  int root = root_member >= 0 ? ranks[root_member] : -1;
  competitor cx = { .src = src, .dst = dst, .bytes = 3 << 20 };
  const uint64_t S = (16 << 20) + 5;
  coll_path_result a = both(t, pol, type, S, ranks, q, root, NULL, -1);
  g_assert_cmpuint(a.st.phase_tree, ==, 1);
  sim_time_ps span = 0;
  GArray *at = g_array_new(FALSE, FALSE, sizeof(sim_time_ps));
  for (int i = 0; i < q; i++) {
    span = MAX(span, a.t[i]);
    for (int d = -1; d <= 1; d++)
      g_array_append_val(at, (sim_time_ps){ a.t[i] + d }); /* ties with the done events */
  }
  res_free(&a);
  a = both(t, pol, type, S, ranks, q, root, &cx, 0);
  g_assert_cmpuint(a.st.phase_runs, ==, 0); /* its links were busy at the start */
  res_free(&a);
  a = both(t, pol, type, S, ranks, q, root, &cx, RUN_AFTER_START);
  g_assert_cmpuint(a.st.phase_conversions, ==, 1);
  res_free(&a);
  int conversions = 0;
  for (int i = 1; i <= 40; i++) {
    a = both(t, pol, type, S, ranks, q, root, &cx, span * i / 41 + (i % 3)); /* off the event instants too */
    g_assert_cmpuint(a.st.phase_tree, ==, 1); /* the run was charged so, then converted */
    conversions += (int)a.st.phase_conversions;
    res_free(&a);
  }
  g_test_message("%d of 40 injections converted the run", conversions);
  g_assert_cmpint(conversions, >=, 30);
  for (int late = 0; late < 2; late++) {
    cx.late = late; /* late: the members' done events of that instant run before the competitor */
    for (guint i = 0; i < at->len; i++) {
      a = both(t, pol, type, S, ranks, q, root, &cx, g_array_index(at, sim_time_ps, i));
      res_free(&a);
    }
  }
  g_array_free(at, TRUE);
  g_free(ranks);
  coll_policy_free(pol);
  topo_free(t);
}

static void test_competitor(void)
{
  competitor_case(SWITCH_YAML(16), ET_COLL_ALL_REDUCE, FALSE, 16, -1, 3, 5);
  competitor_case(SWITCH_YAML(64), ET_COLL_ALL_REDUCE, TRUE, 37, -1, 10, 0);
  competitor_case(SWITCH_YAML(64), ET_COLL_REDUCE, TRUE, 21, 7, 35, 5);
  competitor_case(SWITCH_YAML(64), ET_COLL_BROADCAST, FALSE, 21, 20, 0, 40);
  competitor_case(RING_YAML, ET_COLL_ALL_REDUCE, FALSE, 12, -1, 2, 9);
  competitor_case(NODES_YAML, ET_COLL_ALL_REDUCE, TRUE, 16, -1, 1, 14);
}

/* Two tree all-reduces, over ranks 0..7 at 0 and over b0..b0+7 at 5 us,
 * and a competitor 2 -> 6 (concurrent_run).  Disjoint groups (b0 = 8): both trees on the path, the competitor
 * converts the first while it runs.  Overlapping groups (b0 = 4): the
 * second finds links of the first claimed, runs per transfer and its
 * first send converts the first. */
static void test_concurrent(void)
{
  topo *t = load(SWITCH_YAML(16));
  uint32_t nl = topo_n_links(t);
  const sim_time_ps comps[] = { 11000000, 20000000, 900000000 };
  for (int b0 = 4; b0 <= 8; b0 += 4)
    for (size_t k = 0; k < G_N_ELEMENTS(comps); k++) {
      sim_time_ps ta[16], tb[16];
      uint64_t xa, xb;
      uint64_t *ba = g_new(uint64_t, nl), *bb = g_new(uint64_t, nl);
      coll_ring_stats sa, sb;
      concurrent_run(t, tree_policy(FALSE), 1, b0, 5000000, comps[k], ta, &xa, ba, &sa);
      concurrent_run(t, tree_policy(FALSE), 0, b0, 5000000, comps[k], tb, &xb, bb, &sb);
      for (int i = 0; i < 16; i++)
        g_assert_cmpint(ta[i], ==, tb[i]);
      g_assert_cmpuint(xa, ==, xb);
      for (uint32_t l = 0; l < nl; l++)
        g_assert_cmpuint(ba[l], ==, bb[l]);
      g_assert_cmpuint(sa.phase_tree, ==, b0 == 8 ? 2 : 1);
      g_assert_cmpuint(sa.phase_conversions, ==, b0 == 4 || k < 2 ? 1 : 0);
      g_free(ba);
      g_free(bb);
    }
  topo_free(t);
}

/* NCCL's tree (library nccl, NCCL_ALGO=TREE through the forced
 * algorithm): streamed steps (a step ends at its receives), chunks
 * pipelined step by step with NCCL's FIFO window, bytes inflated by the
 * protocol's efficiency per tier, the tuner's latency before the first
 * step.  Nodes of 2 GPUs on a 32-node scale-out switch: every GPU (a
 * hierarchical plan: ring phases in the node around the tree across
 * nodes) and one GPU per node (a flat tree over the scale-out switch);
 * sizes the tuner runs with LL (larger ones, LL128 and Simple, are
 * compared whole by bench/compare_replay.sh-style runs: the per-transfer
 * path on the checked engine is too slow for them here).  The tree path
 * is taken, equals the per-transfer path, and with a competitor at
 * instants spread over the run converts it with the same results. */
#define NCCL_RAIL_YAML \
  "schema_version: 1\nname: rail\nmodel: analytical\nlibrary: {name: nccl, sm: 90}\n" \
  "dims:\n  - {name: nvlink, kind: switch, size: 2, bandwidth: 450GB/s, latency: 500ns}\n" \
  "  - {name: ib, kind: switch, size: 32, bandwidth: 400Gbps, latency: 1us}\n"

static void nccl_case(const topo *t, uint64_t bytes, int stride, int src, int dst, int injections, gboolean simple)
{
  GError *err = NULL;
  coll_policy *pol = coll_policy_new_from_topo(t, &err);
  g_assert_no_error(err);
  coll_policy_force(pol, COLL_ALGO_DOUBLE_BINARY_TREE);
  if (simple) {
    coll_library_params lp = *coll_policy_library(pol);
    lp.nccl_proto = COLL_PROTO_SIMPLE; /* NCCL_PROTO=Simple: few large chunks, the FIFO window binds */
    coll_policy_set_library(pol, &lp);
  }
  int n = topo_n_ranks(t) / stride;
  int *ranks = g_new(int, n);
  for (int i = 0; i < n; i++)
    ranks[i] = i * stride;
  coll_path_result a = both(t, pol, ET_COLL_ALL_REDUCE, bytes, ranks, n, -1, NULL, -1);
  g_assert_cmpuint(a.st.phase_tree, ==, 1);
  sim_time_ps span = 0;
  for (int i = 0; i < n; i++)
    span = MAX(span, a.t[i]);
  res_free(&a);
  /* The tuner's latency delays the first step (t_base), and nothing is on
   * a link before it; with no other traffic that delay only shifts the
   * run, so the same run with a negligible per-hop latency gives the
   * moving part's length, and the injections are spread over that part. */
  coll_library_params lq = *coll_policy_library(pol);
  double scale = lq.step_latency_scale;
  lq.step_latency_scale = 1e-9;
  coll_policy_set_library(pol, &lq);
  a = both(t, pol, ET_COLL_ALL_REDUCE, bytes, ranks, n, -1, NULL, -1);
  sim_time_ps moving = 0;
  for (int i = 0; i < n; i++)
    moving = MAX(moving, a.t[i]);
  res_free(&a);
  lq.step_latency_scale = scale;
  coll_policy_set_library(pol, &lq);
  g_assert_cmpint(moving, <=, span);
  sim_time_ps first = span - moving;
  competitor cx = { .src = src, .dst = dst, .bytes = 3 << 20 };
  int conversions = 0;
  for (int i = 1; i <= injections; i++) {
    a = both(t, pol, ET_COLL_ALL_REDUCE, bytes, ranks, n, -1, &cx, first + moving * i / (injections + 1) + (i % 3));
    conversions += (int)a.st.phase_conversions;
    res_free(&a);
  }
  g_test_message("%" G_GUINT64_FORMAT " B, stride %d: %d of %d injections converted the run", bytes, stride,
                 conversions, injections);
  g_assert_cmpint(conversions, >=, injections / 2);
  g_free(ranks);
  coll_policy_free(pol);
}

static void test_nccl(void)
{
  topo *t = load(NCCL_RAIL_YAML);
  /* Small sizes: the per-transfer path on the checked engine is slow
   * with NCCL's hundreds of chunks per lane. */
  nccl_case(t, 4096, 1, 3, 40, 16, FALSE);
  nccl_case(t, 4096, 2, 6, 40, 16, FALSE);
  nccl_case(t, (64 << 10) + 7, 1, 3, 40, 6, FALSE);
  nccl_case(t, (16 << 20) + 7, 2, 6, 40, 16, TRUE);
  nccl_case(t, 16 << 20, 1, 3, 40, 8, TRUE);
  topo_free(t);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/coll_fast_tree/closed_form", test_closed_form);
  g_test_add_func("/coll_fast_tree/shapes", test_shapes);
  g_test_add_func("/coll_fast_tree/competitor", test_competitor);
  g_test_add_func("/coll_fast_tree/concurrent", test_concurrent);
  g_test_add_func("/coll_fast_tree/nccl", test_nccl);
  return g_test_run();
}
