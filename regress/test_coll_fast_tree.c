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
 * disjoint and on shared links.  Runs of one plan one after another
 * (test_reuse, test_nccl_reuse) take the first run's kept result: every
 * run's members, every link's bytes and FIFO state at the end equal the
 * per-transfer path's, with competitors over a reused run.
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
  g_free(r->link_at);
  g_free(r->link_rem);
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
 * instants spread over the run converts it with the same results.  The
 * links' latencies are twice the dgx presets': NCCL's per-hop latency
 * holds the presets' wire (coll_nccl_wire_of), so at their latencies the
 * pipeline's first piece crosses the routes without latency and the
 * 4 KiB run's moving part shrinks (32 x 2 GPUs: 34.8 -> 13.6 us) to
 * where few injections find its links busy (3 of 16 converted); above
 * the reference its routes keep their latency's excess. */
#define NCCL_RAIL_YAML \
  "schema_version: 1\nname: rail\nmodel: analytical\nlibrary: {name: nccl, sm: 90}\n" \
  "dims:\n  - {name: nvlink, kind: switch, size: 2, bandwidth: 450GB/s, latency: 1us}\n" \
  "  - {name: ib, kind: switch, size: 32, bandwidth: 400Gbps, latency: 2us}\n"

/* The tuner's latency delays the first step of an NCCL run (t_base), and
 * nothing is on a link before it; with no other traffic that delay only
 * shifts the run, so the same run with a negligible per-hop latency gives
 * the moving part's length (*moving), and the delay is the whole run's
 * length minus it (returned): injections are spread over the moving part.
 * Both runs are compared on both paths and take the tree path.
 * O(run). */
static sim_time_ps nccl_first_move(const topo *t, coll_policy *pol, uint64_t bytes, const int *ranks, int n,
                                   sim_time_ps *moving)
{
  coll_path_result a = both(t, pol, ET_COLL_ALL_REDUCE, bytes, ranks, n, -1, NULL, -1);
  g_assert_cmpuint(a.st.phase_tree, ==, 1);
  sim_time_ps span = 0;
  for (int i = 0; i < n; i++)
    span = MAX(span, a.t[i]);
  res_free(&a);
  coll_library_params lq = *coll_policy_library(pol);
  double scale = lq.step_latency_scale;
  lq.step_latency_scale = 1e-9;
  coll_policy_set_library(pol, &lq);
  a = both(t, pol, ET_COLL_ALL_REDUCE, bytes, ranks, n, -1, NULL, -1);
  *moving = 0;
  for (int i = 0; i < n; i++)
    *moving = MAX(*moving, a.t[i]);
  res_free(&a);
  lq.step_latency_scale = scale;
  coll_policy_set_library(pol, &lq);
  g_assert_cmpint(*moving, <=, span);
  return span - *moving;
}

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
  sim_time_ps moving = 0, first = nccl_first_move(t, pol, bytes, ranks, n, &moving);
  competitor cx = { .src = src, .dst = dst, .bytes = 3 << 20 };
  int conversions = 0;
  for (int i = 1; i <= injections; i++) {
    coll_path_result a = both(t, pol, ET_COLL_ALL_REDUCE, bytes, ranks, n, -1, &cx, first + moving * i / (injections + 1) + (i % 3));
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

/* ---- identical collectives one after another (the kept result) -------- */

/* k collectives of one plan in one runtime, run i started at starts[i]
 * (its members' done times at t[i n ..]), and the competitor (comp !=
 * NULL) sent at comp_at (late: from an event posted at 0, so after the
 * events of that instant the runs scheduled earlier); fast as run().
 * O(k x run). */
static coll_path_result seq_run(const topo *t, const coll_policy *pol, et_coll_type type, const uint64_t *bytes,
                                const int *ranks, int n, int root, int fast, int k, const sim_time_ps *starts,
                                const competitor *comp, sim_time_ps comp_at)
{
  sim_engine *sim = sim_engine_new(TRUE);
  net *nt = net_new(sim, t, NET_TIER_ANALYTICAL);
  coll_rt *c = coll_rt_new(sim, nt, pol);
  coll_rt_set_ring_recurrence(c, fast ? 2 : 0);
  coll_path_result res = { g_new(sim_time_ps, (size_t)k * (size_t)n), 0, NULL, { 0 }, -1 };
  done_log *logs = g_new(done_log, (size_t)k);
  late_start *ls = g_new(late_start, (size_t)k);
  for (int i = 0; i < k * n; i++)
    res.t[i] = -1;
  for (int i = 0; i < k; i++) {
    logs[i] = (done_log){ res.t + (size_t)i * (size_t)n, n };
    ls[i] = (late_start){ c, { .type = type, .bytes = bytes[i], .ranks = ranks, .n_ranks = n, .root = root },
                          &logs[i] };
    sim_post_at(sim, starts[i], start_late, &ls[i], 0);
  }
  competitor cx = { 0 };
  if (comp != NULL) {
    cx = *comp;
    cx.n = nt;
    cx.done = -1;
    cx.late_at = comp_at;
    sim_post_at(sim, cx.late ? 0 : comp_at, cx.late ? comp_post : comp_start, &cx, 0);
  }
  uint32_t nl = topo_n_links(t);
  res.link_bytes = g_new(uint64_t, nl ? nl : 1);
  res.link_at = g_new(sim_time_ps, nl ? nl : 1);
  res.link_rem = g_new(uint64_t, nl ? nl : 1);
  res.comp_done = -1;
  sim_run(sim, SIM_TIME_MAX);
  for (uint32_t l = 0; l < nl; l++)
    net_link_fifo(nt, l, &res.link_at[l], &res.link_rem[l]);
  finish_run(sim, nt, c, NULL, res.t, k * n, &res.transfers, res.link_bytes, &res.st);
  res.comp_done = cx.done;
  g_free(logs);
  g_free(ls);
  return res;
}

/* seq_run on both paths; requires equal results (every member of every
 * run, the transfer count, every link's bytes, the competitor's done
 * time); returns the fast one's. */
static coll_path_result both_seq(const topo *t, const coll_policy *pol, et_coll_type type, const uint64_t *bytes,
                                 const int *ranks, int n, int root, int k, const sim_time_ps *starts,
                                 const competitor *comp, sim_time_ps comp_at)
{
  coll_path_result a = seq_run(t, pol, type, bytes, ranks, n, root, 1, k, starts, comp, comp_at);
  coll_path_result b = seq_run(t, pol, type, bytes, ranks, n, root, 0, k, starts, comp, comp_at);
  for (int i = 0; i < k * n; i++) {
    if (a.t[i] != b.t[i])
      g_test_message("comp_at %" G_GINT64_FORMAT " run %d member %d: tree path %" G_GINT64_FORMAT
                     " ps, per transfer %" G_GINT64_FORMAT " ps (reused %d, conversions %d)",
                     comp_at, i / n, i % n, a.t[i], b.t[i], (int)a.st.phase_tree_reused, (int)a.st.phase_conversions);
    g_assert_cmpint(a.t[i], ==, b.t[i]);
  }
  g_assert_cmpuint(a.transfers, ==, b.transfers);
  for (uint32_t l = 0; l < topo_n_links(t); l++) {
    g_assert_cmpuint(a.link_bytes[l], ==, b.link_bytes[l]);
    g_assert_cmpint(a.link_at[l], ==, b.link_at[l]); /* the FIFO state the next transfer would see */
    g_assert_cmpuint(a.link_rem[l], ==, b.link_rem[l]);
  }
  g_assert_cmpint(a.comp_done, ==, b.comp_done);
  g_assert_cmpuint(b.st.phase_runs, ==, 0);
  res_free(&b);
  return a;
}

/* Three runs of one plan: run 0 at 0, run 1 at `gap` after run 0's last
 * member, run 2 at 7 ps after run 1's (run 0's length after run 1's start).  Without other traffic runs 1 and
 * 2 take run 0's kept result, and each member's done time is run 0's
 * shifted by the run's start (no other traffic: the links are idle at
 * each start, the arithmetic depends on differences of times only);
 * with a competitor at `injections` instants spread over run 1 from
 * `first` after its start (NCCL: the tuner's delay, nccl_first_move) and
 * at every `every`-th distinct done time of run 1 +-1 (also sent late), run 1 converts
 * with the per-transfer path's results.  Returns the conversions.
 * O(injections x runs). */
static int reuse_case(const topo *t, const coll_policy *pol, et_coll_type type, uint64_t bytes, const int *ranks,
                      int n, int root, sim_time_ps gap, const competitor *cx, int injections, sim_time_ps first,
                      int every)
{
  uint64_t b3[3] = { bytes, bytes, bytes };
  sim_time_ps z[3] = { 0, 0, 0 };
  coll_path_result a = both_seq(t, pol, type, b3, ranks, n, root, 1, z, NULL, -1);
  sim_time_ps end0 = 0;
  for (int m = 0; m < n; m++)
    end0 = MAX(end0, a.t[m]);
  res_free(&a);
  sim_time_ps st[3] = { 0, end0 + gap, 2 * (end0 + gap) + 7 };
  a = both_seq(t, pol, type, b3, ranks, n, root, 3, st, NULL, -1);
  g_assert_cmpuint(a.st.phase_tree, ==, 3);
  g_assert_cmpuint(a.st.phase_tree_reused, ==, 2);
  for (int i = 1; i < 3; i++)
    for (int m = 0; m < n; m++)
      g_assert_cmpint(a.t[i * n + m], ==, a.t[m] + st[i]); /* shifted by the start */
  GArray *at = g_array_new(FALSE, FALSE, sizeof(sim_time_ps));
  for (int m = 0, distinct = 0; m < n; m++) {
    gboolean seen = FALSE; /* each distinct done time once, every `every`-th of them */
    for (int j = 0; j < m; j++)
      seen = seen || a.t[n + j] == a.t[n + m];
    if (!seen && distinct++ % every != 0)
      seen = TRUE;
    for (int d = -1; d <= 1 && !seen; d++)
      g_array_append_val(at, (sim_time_ps){ a.t[n + m] + d });
  }
  res_free(&a);
  int conversions = 0;
  competitor c2 = *cx;
  for (int i = 1; i <= injections; i++) {
    sim_time_ps when = st[1] + first + (end0 - first) * i / (injections + 1) + (i % 3);
    a = both_seq(t, pol, type, b3, ranks, n, root, 3, st, &c2, when);
    g_assert_cmpuint(a.st.phase_tree_reused, >=, 1); /* run 1 took the kept result, then converted */
    conversions += (int)a.st.phase_conversions;
    res_free(&a);
  }
  for (int late = 0; late < 2; late++) {
    c2.late = late;
    for (guint i = 0; i < at->len; i++) {
      a = both_seq(t, pol, type, b3, ranks, n, root, 3, st, &c2, g_array_index(at, sim_time_ps, i));
      res_free(&a);
    }
  }
  g_array_free(at, TRUE);
  return conversions;
}

/* The ideal tree: the kept result is taken by the next identical runs
 * (also starting right at the previous run's last done time), converts
 * exactly when other traffic claims a link, and is not taken by a run
 * that starts while the previous one still holds its links, nor by runs
 * of another size or group. */
static void test_reuse(void)
{
  topo *t = load(SWITCH_YAML(64));
  int *ranks = scattered(37, 64);
  coll_policy *pol = tree_policy(TRUE);
  competitor cx = { .src = 10, .dst = 0, .bytes = 3 << 20 };
  int conv = reuse_case(t, pol, ET_COLL_ALL_REDUCE, (16 << 20) + 5, ranks, 37, -1, 12345, &cx, 30, 0, 1);
  g_test_message("all-reduce: %d of 30 injections converted run 1", conv);
  g_assert_cmpint(conv, >=, 20);
  conv = reuse_case(t, pol, ET_COLL_REDUCE, 1 << 20, ranks, 21, ranks[7], 0, &(competitor){ .src = 35, .dst = 5,
                    .bytes = 1 << 20 }, 12, 0, 1);
  g_assert_cmpint(conv, >=, 8);
  /* Links without latency: a member is done when its last transfer
   * leaves the link, which may still hold a fraction of a picosecond
   * then (the kept FIFO states must be shifted, not only the done
   * times: a competitor at run 1's done times queues behind them). */
  topo *t0 = load("schema_version: 1\nname: sw0\nmodel: analytical\nlibrary: {name: ideal}\n"
                  "dims:\n  - {name: sw, kind: switch, size: 64, bandwidth: 300GB/s, latency: 0ns}\n");
  conv = reuse_case(t0, pol, ET_COLL_ALL_REDUCE, (1 << 20) + 1, ranks, 16, -1, 0,
                    &(competitor){ .src = ranks[3], .dst = ranks[0], .bytes = 1 << 20 }, 4, 0, 1);
  topo_free(t0);
  uint64_t b3[3] = { 16 << 20, 16 << 20, 16 << 20 };
  sim_time_ps z[3] = { 0, 0, 0 };
  coll_path_result a = both_seq(t, pol, ET_COLL_ALL_REDUCE, b3, ranks, 37, -1, 1, z, NULL, -1);
  sim_time_ps end0 = 0;
  for (int m = 0; m < 37; m++)
    end0 = MAX(end0, a.t[m]);
  res_free(&a);
  sim_time_ps half[3] = { 0, end0 / 2, end0 * 5 / 2 };
  a = both_seq(t, pol, ET_COLL_ALL_REDUCE, b3, ranks, 37, -1, 3, half, NULL, -1);
  g_assert_cmpuint(a.st.phase_tree_reused, ==, 1); /* run 1 found run 0's links busy; run 2 took the result */
  res_free(&a);
  uint64_t other[3] = { 16 << 20, (16 << 20) + 1, 16 << 20 };
  sim_time_ps apart[3] = { 0, 2 * end0, 4 * end0 };
  a = both_seq(t, pol, ET_COLL_ALL_REDUCE, other, ranks, 37, -1, 3, apart, NULL, -1);
  g_assert_cmpuint(a.st.phase_tree, ==, 3);
  g_assert_cmpuint(a.st.phase_tree_reused, ==, 1); /* run 1 is another plan; run 2 is run 0's */
  res_free(&a);
  g_free(ranks);
  coll_policy_free(pol);
  topo_free(t);
}

/* NCCL's tree (as test_nccl): the runs after the first take the kept
 * result, shifted; a competitor during run 1 converts it exactly. */
static void test_nccl_reuse(void)
{
  topo *t = load(NCCL_RAIL_YAML);
  GError *err = NULL;
  coll_policy *pol = coll_policy_new_from_topo(t, &err);
  g_assert_no_error(err);
  coll_policy_force(pol, COLL_ALGO_DOUBLE_BINARY_TREE);
  for (int stride = 1; stride <= 2; stride++) {
    int n = topo_n_ranks(t) / stride;
    int *ranks = g_new(int, n);
    for (int i = 0; i < n; i++)
      ranks[i] = i * stride;
    competitor cx = { .src = 3 * stride, .dst = 40, .bytes = 3 << 20 };
    uint64_t bytes = 4096 + 7 * (uint64_t)(stride - 1);
    sim_time_ps moving = 0, first = nccl_first_move(t, pol, bytes, ranks, n, &moving);
    int conv = reuse_case(t, pol, ET_COLL_ALL_REDUCE, bytes, ranks, n, -1, 1000, &cx, 8, first, 4);
    g_test_message("stride %d: %d of 8 injections converted run 1", stride, conv);
    g_assert_cmpint(conv, >=, 4);
    g_free(ranks);
  }
  coll_policy_free(pol);
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
  g_test_add_func("/coll_fast_tree/reuse", test_reuse);
  g_test_add_func("/coll_fast_tree/nccl_reuse", test_nccl_reuse);
  return g_test_run();
}
