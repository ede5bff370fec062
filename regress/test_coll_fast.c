/* test_coll_fast.c: the symmetric-phase fast path (collectives/
 * coll_fast.c; issue 30 item 1) against the per-transfer path.
 *
 * Every case runs one collective twice on tier A, with the fast path
 * (coll_rt_set_ring_recurrence(c, 2): groups of any size) and per
 * transfer (0: off), and requires the same done time for every member to
 * the picosecond, the same transfer count and the same bytes on every
 * link.  Competing traffic (a send over links of the collective) is
 * injected before the start, in the start's instant and at instants
 * spread over the run: the fast path must then hand the run back to the
 * per-transfer path (a conversion) with the same results, the
 * competitor's done time included.  The counters (coll_rt_ring_stats)
 * show which path ran.  Closed forms: halving-doubling all-reduce over q
 * = 2^d members of a switch is d reduce-scatter steps of S/2, S/4, ...,
 * S/q bytes and d all-gather steps of S/q, ..., S/2 bytes, each one
 * transfer per member over its own up and down link, so every member
 * finishes at sum over steps of (wisp_transfer_ps(bytes, B) + 2 alpha);
 * a direct all-gather (q-1 pieces of D/q out of each member's one
 * uplink) at (q-1) D/q / B + 2 alpha, as the links serve the pieces one
 * after the other (tier A's FIFO).
 */
#include "config.h"

#include "collectives/coll.h"

#include "regress/test_coll_paths.h"

static void result_free(coll_path_result *r)
{
  g_free(r->t);
  g_free(r->link_bytes);
}

/* Runs both paths; requires equal results (every member's done time,
 * the transfer count, the bytes on every link, the competitor's done
 * time); returns the fast path's. */
static coll_path_result both(const topo *t, const coll_policy *pol, et_coll_type type, uint64_t bytes, const int *ranks,
                        int n, const competitor *comp, sim_time_ps comp_at)
{
  coll_path_result a = run(t, pol, type, bytes, ranks, n, 1, comp, comp_at);
  coll_path_result b = run(t, pol, type, bytes, ranks, n, 0, comp, comp_at);
  for (int i = 0; i < n; i++) {
    if (a.t[i] != b.t[i] && i == 0)
      g_test_message("comp_at %" G_GINT64_FORMAT " phase runs %d declined %d conv %d", comp_at,
                     (int)a.st.phase_runs, (int)a.st.phase_declined, (int)a.st.phase_conversions);
    if (a.t[i] != b.t[i])
      g_test_message("member %d: fast path %" G_GINT64_FORMAT " ps, per transfer %" G_GINT64_FORMAT " ps", i,
                     a.t[i], b.t[i]);
    g_assert_cmpint(a.t[i], ==, b.t[i]);
  }
  g_assert_cmpuint(a.transfers, ==, b.transfers);
  for (uint32_t l = 0; l < topo_n_links(t); l++)
    g_assert_cmpuint(a.link_bytes[l], ==, b.link_bytes[l]);
  g_assert_cmpint(a.comp_done, ==, b.comp_done);
  g_assert_cmpuint(b.st.phase_runs, ==, 0); /* off: never taken */
  g_assert_cmpuint(b.st.runs, ==, 0);
  result_free(&b);
  return a;
}


static coll_policy *forced(coll_algo a)
{
  coll_policy *pol = coll_policy_new_default();
  coll_policy_force(pol, a);
  return pol;
}

static int *iota(int n)
{
  int *r = g_new(int, n);
  for (int i = 0; i < n; i++)
    r[i] = i;
  return r;
}

#define SWITCH_YAML(n) \
  "schema_version: 1\nname: sw\nmodel: analytical\nlibrary: {name: ideal}\n" \
  "dims:\n  - {name: sw, kind: switch, size: " #n ", bandwidth: 400GB/s, latency: 936.25ns}\n"

/* Both paths for one case without competitor; *taken: the fast path ran
 * (else it declined).  Returns the fast path's result. */
static coll_path_result same(const topo *t, coll_algo algo, gboolean red, et_coll_type type, uint64_t bytes, int n,
                        gboolean *taken)
{
  coll_policy *pol = forced(algo);
  if (red)
    coll_policy_set_reduce_bw(pol, 300000000000);
  int *r = iota(n);
  coll_path_result a = both(t, pol, type, bytes, r, n, NULL, -1);
  *taken = a.st.phase_runs == 1;
  g_assert_cmpuint(a.st.phase_conversions, ==, 0);
  g_free(r);
  coll_policy_free(pol);
  return a;
}

/* Halving-doubling on a switch of 16: the closed form, and equality for
 * every type, with and without a reduction cost; the path is taken. */
static void test_halving_doubling_switch(void)
{
  topo *t = load(SWITCH_YAML(16));
  const uint64_t S = 16 << 20;
  gboolean taken;
  coll_path_result a = same(t, COLL_ALGO_HALVING_DOUBLING, FALSE, ET_COLL_ALL_REDUCE, S, 16, &taken);
  g_assert_true(taken);
  /* Every member sends one transfer of the same size per step over its
   * own uplink and its partner's downlink: the symmetric mode (one
   * representative route per step, the other links mirrored). */
  g_assert_cmpuint(a.st.phase_symmetric, ==, 1);
  /* alpha = 2 x 936.25 ns (up and down); B = 400 GB/s. */
  sim_time_ps expect = 0;
  for (uint64_t b = S / 2; b >= S / 16; b /= 2)
    expect += 2 * (wisp_transfer_ps(b, 400000000000) + 2 * 936250);
  for (int i = 0; i < 16; i++)
    g_assert_cmpint(a.t[i], ==, expect);
  result_free(&a);
  const et_coll_type types[] = { ET_COLL_ALL_REDUCE, ET_COLL_REDUCE_SCATTER, ET_COLL_ALL_GATHER };
  for (size_t k = 0; k < G_N_ELEMENTS(types); k++)
    for (int red = 0; red < 2; red++) {
      a = same(t, COLL_ALGO_HALVING_DOUBLING, red, types[k], S + 4096, 16, &taken);
      g_assert_true(taken);
      g_assert_cmpuint(a.st.phase_symmetric, ==, 1); /* S + 4096 = 16 x 1,048,832: equal pieces */
      result_free(&a);
    }
  topo_free(t);
}

/* Direct all-gather and all-to-all on a switch of 12 (several transfers
 * per link, first step only): the closed form and equality. */
static void test_direct_switch(void)
{
  topo *t = load(SWITCH_YAML(12));
  gboolean taken;
  const uint64_t piece = 1 << 20;
  coll_path_result a = same(t, COLL_ALGO_DIRECT, FALSE, ET_COLL_ALL_GATHER, piece, 12, &taken);
  g_assert_true(taken);
  g_assert_cmpuint(a.st.phase_symmetric, ==, 1); /* 11 equal pieces out, 11 in, per member */
  sim_time_ps expect = wisp_transfer_ps(11 * piece, 400000000000) + 2 * 936250;
  for (int i = 0; i < 12; i++)
    g_assert_cmpint(a.t[i], ==, expect);
  result_free(&a);
  const et_coll_type types[] = { ET_COLL_ALL_TO_ALL, ET_COLL_REDUCE_SCATTER, ET_COLL_ALL_REDUCE };
  for (size_t k = 0; k < G_N_ELEMENTS(types); k++)
    for (int red = 0; red < 2; red++) {
      a = same(t, COLL_ALGO_DIRECT, red, types[k], 12 * piece + 7, 12, &taken);
      /* 12 piece + 7 bytes: the first 7 pieces are one byte longer, so
       * the members' steps differ and the symmetric mode must decline
       * (the general pass or the per-transfer path runs instead). */
      g_assert_cmpuint(a.st.phase_symmetric, ==, 0);
      result_free(&a);
      a = same(t, COLL_ALGO_DIRECT, red, types[k], 12 * piece, 12, &taken);
      g_assert_true(taken);
      g_assert_cmpuint(a.st.phase_symmetric, ==, 1);
      result_free(&a);
    }
  topo_free(t);
}

/* In-switch reduction (NVLS) on a switch of 16: one step, every member
 * sends D + D/16 bytes to the next member over its uplink and that
 * member's downlink, so the symmetric mode takes it and the closed form
 * is wisp_transfer_ps(D + D/16, B) + 2 alpha; equal to the per-transfer
 * path. */
static void test_nvls_switch(void)
{
  topo *t = load(SWITCH_YAML(16));
  const uint64_t D = 16 << 20;
  gboolean taken;
  coll_path_result a = same(t, COLL_ALGO_NVLS, FALSE, ET_COLL_ALL_REDUCE, D, 16, &taken);
  g_assert_true(taken);
  g_assert_cmpuint(a.st.phase_symmetric, ==, 1);
  sim_time_ps expect = wisp_transfer_ps(D + D / 16, 400000000000) + 2 * 936250;
  for (int i = 0; i < 16; i++)
    g_assert_cmpint(a.t[i], ==, expect);
  result_free(&a);
  topo_free(t);
}

#define TWO_TIER_YAML \
  "schema_version: 1\nname: two\nmodel: analytical\nlibrary: {name: ideal}\n" \
  "dims:\n  - {name: node, kind: switch, size: 4, bandwidth: 450GB/s, latency: 500ns}\n" \
  "  - {name: fabric, kind: switch, size: 4, bandwidth: 50GB/s, latency: 2us}\n"

#define FAT_TREE_YAML \
  "schema_version: 1\nname: ft\nmodel: analytical\nlibrary: {name: ideal}\n" \
  "dims:\n  - {name: fabric, kind: fat_tree, size: 16, leaves: 4, oversubscription: 2, bandwidth: 50GB/s, latency: 1us}\n"

/* Hierarchical plans (one phase per dimension, 4 x 4) and a 2:1 fat tree
 * (shared uplinks: the path may decline): equal results for every
 * algorithm and type, whichever path ran. */
static void test_hierarchical_and_shared(void)
{
  const char *yamls[] = { TWO_TIER_YAML, FAT_TREE_YAML };
  const coll_algo algos[] = { COLL_ALGO_HALVING_DOUBLING, COLL_ALGO_DIRECT, COLL_ALGO_RING, COLL_ALGO_DOUBLE_BINARY_TREE };
  const et_coll_type types[] = { ET_COLL_ALL_REDUCE, ET_COLL_REDUCE_SCATTER, ET_COLL_ALL_GATHER, ET_COLL_ALL_TO_ALL };
  int taken_hier = 0;
  for (size_t y = 0; y < G_N_ELEMENTS(yamls); y++) {
    topo *t = load(yamls[y]);
    for (size_t a = 0; a < G_N_ELEMENTS(algos); a++)
      for (size_t k = 0; k < G_N_ELEMENTS(types); k++) {
        gboolean taken;
        coll_path_result r = same(t, algos[a], k % 2 == 1, types[k], (4 << 20) + 64, 16, &taken);
        if (y == 0 && taken)
          taken_hier++;
        result_free(&r);
      }
    topo_free(t);
  }
  g_test_message("hierarchical cases on the fast path: %d", taken_hier);
  g_assert_cmpint(taken_hier, >=, 2); /* halving-doubling per dimension at least */
}

/* Competing traffic over links of the collective, sent before the start,
 * in the start's instant and at 40 instants over the run: equal results
 * (the competitor's done time too) and, while the run is on the path, a
 * conversion. */
static uint64_t competitors(const char *yaml, coll_algo algo, gboolean red, et_coll_type type, int n, uint64_t bytes,
                            int src, int dst)
{
  topo *t = load(yaml);
  coll_policy *pol = forced(algo);
  if (red)
    coll_policy_set_reduce_bw(pol, 300000000000);
  int *r = iota(n);
  competitor cx = { .src = src, .dst = dst, .bytes = 3 << 20 };
  coll_path_result a = both(t, pol, type, bytes, r, n, NULL, -1);
  g_assert_cmpuint(a.st.phase_runs, ==, 1);
  uint64_t sym = a.st.phase_symmetric;
  g_test_message("symmetric mode: %s", sym ? "yes" : "no");
  sim_time_ps span = 0;
  for (int i = 0; i < n; i++)
    span = MAX(span, a.t[i]);
  result_free(&a);
  a = both(t, pol, type, bytes, r, n, &cx, 0);
  g_assert_cmpuint(a.st.phase_runs, ==, 0); /* its links were busy at the start */
  result_free(&a);
  a = both(t, pol, type, bytes, r, n, &cx, RUN_AFTER_START);
  g_assert_cmpuint(a.st.phase_conversions, ==, 1);
  result_free(&a);
  int conversions = 0;
  for (int i = 1; i <= 40; i++) {
    sim_time_ps at = span * i / 41 + (i % 3); /* off the step boundaries too */
    a = both(t, pol, type, bytes, r, n, &cx, at);
    g_assert_cmpuint(a.st.phase_symmetric, ==, sym); /* the run was charged so, then converted */
    conversions += (int)a.st.phase_conversions;
    result_free(&a);
  }
  g_test_message("%d of 40 injections converted the run", conversions);
  g_assert_cmpint(conversions, >=, 30);
  g_free(r);
  coll_policy_free(pol);
  topo_free(t);
  return sym;
}

/* The competitor exactly at the step boundaries of halving-doubling on
 * the switch of 16 (the closed form of test_halving_doubling_switch) and
 * a picosecond before and after each: the ties of the conversion rule
 * (a step issued at that instant counts as after the competitor, a
 * transfer arriving then is still in flight). */
static void test_competitor_boundaries(void)
{
  topo *t = load(SWITCH_YAML(16));
  coll_policy *pol = forced(COLL_ALGO_HALVING_DOUBLING);
  int *r = iota(16);
  competitor cx = { .src = 3, .dst = 5, .bytes = 3 << 20 };
  const uint64_t S = 16 << 20;
  sim_time_ps b = 0;
  int conversions = 0, cases = 0;
  for (int phase = 0; phase < 2; phase++)
    for (uint64_t x = S / 2; x >= S / 16; x /= 2) {
      uint64_t bytes = phase == 0 ? x : S / 16 * (S / 2 / x); /* the all-gather grows again */
      b += wisp_transfer_ps(bytes, 400000000000) + 2 * 936250;
      for (int d = -1; d <= 1; d++) {
        coll_path_result a = both(t, pol, ET_COLL_ALL_REDUCE, S, r, 16, &cx, b + d);
        conversions += (int)a.st.phase_conversions;
        cases++;
        result_free(&a);
      }
    }
  g_assert_cmpint(conversions, >=, cases - 3); /* all but those after the run's end */
  g_free(r);
  coll_policy_free(pol);
  topo_free(t);
}

static void test_competitor_halving_doubling(void)
{
  /* Both on the symmetric mode (equal steps on one switch), converted
   * by the competitor through the general pass. */
  g_assert_cmpuint(competitors(SWITCH_YAML(16), COLL_ALGO_HALVING_DOUBLING, FALSE, ET_COLL_ALL_REDUCE, 16, 16 << 20, 3, 5),
                   ==, 1);
  g_assert_cmpuint(
      competitors(SWITCH_YAML(16), COLL_ALGO_HALVING_DOUBLING, TRUE, ET_COLL_REDUCE_SCATTER, 16, (16 << 20) + 48, 0, 1),
      ==, 1);
}

static void test_competitor_direct(void)
{
  g_assert_cmpuint(competitors(SWITCH_YAML(12), COLL_ALGO_DIRECT, FALSE, ET_COLL_ALL_GATHER, 12, 1 << 20, 2, 7), ==, 1);
  /* Two steps of 11 transfers per link: the second step's issue order is
   * the order in which the first step's arrivals end the members' steps. */
  competitors(SWITCH_YAML(12), COLL_ALGO_DIRECT, FALSE, ET_COLL_ALL_REDUCE, 12, (12 << 20) + 36, 4, 9);
  competitors(SWITCH_YAML(12), COLL_ALGO_DIRECT, TRUE, ET_COLL_ALL_REDUCE, 12, 12 << 20, 11, 0);
}

static void test_competitor_hierarchical(void)
{
  competitors(TWO_TIER_YAML, COLL_ALGO_HALVING_DOUBLING, FALSE, ET_COLL_ALL_REDUCE, 16, 8 << 20, 1, 6);
  competitors(TWO_TIER_YAML, COLL_ALGO_DIRECT, TRUE, ET_COLL_ALL_REDUCE, 16, 8 << 20, 5, 14);
}

/* Several collectives at once, as in a scaled job: two halving-doubling
 * groups of 8 on one switch of 16, the second started later while the
 * first is on the path, and a competitor that converts the first in the
 * middle.  Both paths must give every member of both groups the same done
 * time, the same transfer count and the same bytes on every link (the
 * rewind of one run takes back only its own transfers). */
static void test_concurrent(void)
{
  topo *t = load(SWITCH_YAML(16));
  uint32_t nl = topo_n_links(t);
  /* One all-reduce of 8 MiB over 8 members takes about 2 x 7/8 x 8 MiB /
   * 400 GB/s = 37 us; the second group starts 5 us in, the competitor
   * (in the first group's links) at 11 us, 20 us or after both. */
  const sim_time_ps comps[] = { 11000000, 20000000, 90000000 };
  for (size_t k = 0; k < G_N_ELEMENTS(comps); k++) {
    sim_time_ps ta[16], tb[16];
    uint64_t xa, xb;
    uint64_t *ba = g_new(uint64_t, nl), *bb = g_new(uint64_t, nl);
    coll_ring_stats sa, sb;
    concurrent_run(t, forced(COLL_ALGO_HALVING_DOUBLING), 1, 8, 5000000, comps[k], ta, &xa, ba, &sa);
    concurrent_run(t, forced(COLL_ALGO_HALVING_DOUBLING), 0, 8, 5000000, comps[k], tb, &xb, bb, &sb);
    for (int i = 0; i < 16; i++)
      g_assert_cmpint(ta[i], ==, tb[i]);
    g_assert_cmpuint(xa, ==, xb);
    for (uint32_t l = 0; l < nl; l++)
      g_assert_cmpuint(ba[l], ==, bb[l]);
    g_assert_cmpuint(sa.phase_runs, ==, 2);
    g_assert_cmpuint(sa.phase_conversions, ==, k < 2 ? 1 : 0);
    g_free(ba);
    g_free(bb);
  }
  topo_free(t);
}

/* The symmetric mode's verdict is kept per plan (coll_symcache.c) and
 * reused by later collectives of the same plan in one runtime.  A
 * sequence of direct all-reduces on a switch of 16, one every 1 ms (each
 * takes about 2 x 11/12 x 12 MiB / 400 GB/s = 58 us, so they do not
 * overlap): over members 0..11 with equal pieces (taken), with pieces of
 * unequal size (12 MiB + 7: declined), both again (the kept verdicts),
 * over 4..15 and over 15..4 (other plans), and 0..11 once more with a
 * competitor in its links at 6,020 us (a conversion of a run whose
 * verdict was reused).  Every member's done time of every collective,
 * the transfer count, every link's bytes and the competitor's done time
 * must equal the per-transfer path's; 5 of the 7 runs take the mode. */
#define CACHE_RUNS 7

typedef struct {
  coll_rt *c;
  coll_desc d;
  done_log log;
} cache_start;

static void cache_start_ev(sim_engine *sim, void *ctx, uint64_t arg)
{
  (void)sim;
  (void)arg;
  cache_start *cs = ctx;
  coll_start(cs->c, &cs->d, on_done, &cs->log, 0, NULL);
}

static void cache_run(const topo *t, int fast, sim_time_ps *times, uint64_t *transfers, uint64_t *bytes,
                      coll_ring_stats *st, sim_time_ps *comp_done)
{
  sim_engine *sim = sim_engine_new(TRUE);
  net *nt = net_new(sim, t, NET_TIER_ANALYTICAL);
  coll_policy *pol = forced(COLL_ALGO_DIRECT);
  coll_rt *c = coll_rt_new(sim, nt, pol);
  coll_rt_set_ring_recurrence(c, fast ? 2 : 0);
  int ga[12], gb[12], gr[12];
  for (int i = 0; i < 12; i++) {
    ga[i] = i;
    gb[i] = 4 + i;
    gr[i] = 15 - i;
  }
  const uint64_t S = 12 << 20;
  const int *grp[CACHE_RUNS] = { ga, ga, ga, ga, gb, gr, ga };
  const uint64_t sz[CACHE_RUNS] = { S, S + 7, S, S + 7, S, S, S };
  cache_start cs[CACHE_RUNS];
  for (int k = 0; k < CACHE_RUNS; k++) {
    for (int i = 0; i < 12; i++)
      times[k * 12 + i] = -1;
    cs[k] = (cache_start){ c,
                           { .type = ET_COLL_ALL_REDUCE, .bytes = sz[k], .ranks = grp[k], .n_ranks = 12, .root = -1 },
                           { times + k * 12, 12 } };
    sim_post_at(sim, (sim_time_ps)k * 1000000000, cache_start_ev, &cs[k], 0);
  }
  competitor cx = { .n = nt, .src = 3, .dst = 7, .bytes = 1 << 20, .done = -1 };
  sim_post_at(sim, 6020000000, comp_start, &cx, 0);
  finish_run(sim, nt, c, pol, times, CACHE_RUNS * 12, transfers, bytes, st);
  *comp_done = cx.done;
}

static void test_plan_cache(void)
{
  topo *t = load(SWITCH_YAML(16));
  uint32_t nl = topo_n_links(t);
  sim_time_ps ta[CACHE_RUNS * 12], tb[CACHE_RUNS * 12], ca, cb;
  uint64_t xa, xb;
  uint64_t *ba = g_new(uint64_t, nl), *bb = g_new(uint64_t, nl);
  coll_ring_stats sa, sb;
  cache_run(t, 1, ta, &xa, ba, &sa, &ca);
  cache_run(t, 0, tb, &xb, bb, &sb, &cb);
  for (int i = 0; i < CACHE_RUNS * 12; i++)
    g_assert_cmpint(ta[i], ==, tb[i]);
  g_assert_cmpuint(xa, ==, xb);
  for (uint32_t l = 0; l < nl; l++)
    g_assert_cmpuint(ba[l], ==, bb[l]);
  g_assert_cmpint(ca, ==, cb);
  g_assert_cmpuint(sa.phase_symmetric, ==, 5); /* runs 0, 2, 4, 5, 6 */
  g_assert_cmpuint(sa.phase_conversions, ==, 1); /* run 6, by the competitor */
  g_assert_cmpuint(sb.phase_runs, ==, 0);
  g_free(ba);
  g_free(bb);
  topo_free(t);
}

/* NCCL's plans (library nccl: streamed steps, a step ends at its
 * receives, bytes inflated by the protocol's efficiency, the tuner's
 * latency before the first step) on one switch dimension, where the
 * plan is one chunk with every member's step alike: NVLS all-reduce,
 * all-gather and reduce-scatter on an NVL72-like switch (in-switch
 * reduction, sm 100, NVLS forced), pairwise all-to-all there, and a direct
 * all-to-all between 32 nodes of one GPU each (every transfer on the
 * network tier, the network's inflation).  With equal pieces (q divides
 * the size) the symmetric mode takes them; with unequal pieces it
 * declines and the general pass does not take streamed runs, so they go
 * per transfer.  Either way every member's done time, the transfer count
 * and every link's bytes equal the per-transfer path's, and the members
 * of a symmetric run all end at one time. */
#define NCCL_NVL_YAML \
  "schema_version: 1\nname: nvl\nmodel: analytical\nlibrary: {name: nccl, sm: 100}\n" \
  "collectives: {in_switch_reduction: true}\n" \
  "dims:\n  - {name: nvlink, kind: switch, size: 72, bandwidth: 900GB/s, latency: 500ns}\n"

#define NCCL_RAIL_YAML \
  "schema_version: 1\nname: rail\nmodel: analytical\nlibrary: {name: nccl, sm: 90}\n" \
  "dims:\n  - {name: nvlink, kind: switch, size: 2, bandwidth: 450GB/s, latency: 500ns}\n" \
  "  - {name: ib, kind: switch, size: 32, bandwidth: 400Gbps, latency: 1us}\n"

/* The network's NCCL policy; nvls: NVLS forced (NCCL_ALGO=NVLS, so that
 * a change of the tuner's choice does not move these cases off NVLS; an
 * all-to-all stays NCCL's send/recv). */
static coll_policy *nccl_policy(const topo *t, gboolean nvls)
{
  GError *err = NULL;
  coll_policy *pol = coll_policy_new_from_topo(t, &err);
  g_assert_no_error(err);
  if (nvls)
    coll_policy_force(pol, COLL_ALGO_NVLS);
  g_assert_cmpint(coll_policy_library(pol)->kind, ==, COLL_LIBRARY_NCCL);
  return pol;
}

/* Members 0, stride, 2 stride, ... */
static int *strided(int n, int stride)
{
  int *r = g_new(int, n);
  for (int i = 0; i < n; i++)
    r[i] = i * stride;
  return r;
}

/* Both paths for one NCCL case; returns whether the symmetric mode ran
 * (the fast path's run is then on it and nothing else). */
static gboolean nccl_same(const topo *t, et_coll_type type, uint64_t bytes, int n, int stride)
{
  coll_policy *pol = nccl_policy(t, stride == 1);
  int *r = strided(n, stride);
  coll_path_result a = both(t, pol, type, bytes, r, n, NULL, -1);
  gboolean sym = a.st.phase_symmetric == 1;
  g_assert_cmpuint(a.st.phase_runs, ==, sym ? 1 : 0); /* streamed: the symmetric mode or per transfer */
  g_assert_cmpuint(a.st.phase_conversions, ==, 0);
  for (int i = 1; i < n && sym; i++)
    g_assert_cmpint(a.t[i], ==, a.t[0]);
  result_free(&a);
  g_free(r);
  coll_policy_free(pol);
  return sym;
}

static void test_nccl_switch(void)
{
  topo *t = load(NCCL_NVL_YAML);
  const uint64_t MiB = 1 << 20;
  const et_coll_type types[] = { ET_COLL_ALL_REDUCE, ET_COLL_ALL_GATHER, ET_COLL_REDUCE_SCATTER, ET_COLL_ALL_TO_ALL };
  for (size_t k = 0; k < G_N_ELEMENTS(types); k++) {
    /* All-gather's size is per member (Chakra's comm_size): the run's D is
     * 72 times it, 72 MiB as for the others (all-to-all: NCCL's pairwise
     * send/recv); equal pieces either way. */
    gboolean ag = types[k] == ET_COLL_ALL_GATHER;
    g_assert_true(nccl_same(t, types[k], ag ? MiB : 72 * MiB, 72, 1));
    /* 5 bytes more: the first 5 pieces are one byte longer (all-gather:
     * D = 72 x (1 MiB + 5) stays a multiple of 72, so it keeps the mode). */
    g_assert_true(nccl_same(t, types[k], (ag ? MiB : 72 * MiB) + 5, 72, 1) == ag);
  }
  topo_free(t);
  t = load(NCCL_RAIL_YAML);
  g_assert_true(nccl_same(t, ET_COLL_ALL_TO_ALL, 32 * MiB, 32, 2)); /* one GPU per node: the network's tier */
  topo_free(t);
}

/* A competitor over links of a symmetric NCCL run, sent at 0 (the
 * tuner's latency delays the first step, so the competitor may be over
 * by then) and at 16 instants over the second half of the span from 0 to
 * the members' end (the first half may be that latency: the pairwise
 * all-to-all's 71 rounds of NCCL's per-peer latency): equal results, and
 * conversions. */
static void nccl_competitors(const char *yaml, et_coll_type type, uint64_t bytes, int n, int stride, int src, int dst)
{
  topo *t = load(yaml);
  coll_policy *pol = nccl_policy(t, stride == 1);
  int *r = strided(n, stride);
  competitor cx = { .src = src, .dst = dst, .bytes = 3 << 20 };
  coll_path_result a = both(t, pol, type, bytes, r, n, NULL, -1);
  g_assert_cmpuint(a.st.phase_symmetric, ==, 1);
  sim_time_ps span = a.t[0];
  result_free(&a);
  a = both(t, pol, type, bytes, r, n, &cx, 0); /* sent at 0: over, or still on the links, at the first step */
  result_free(&a);
  int conversions = 0;
  for (int i = 1; i <= 16; i++) {
    a = both(t, pol, type, bytes, r, n, &cx, span * (17 + i) / 34 + (i % 3));
    conversions += (int)a.st.phase_conversions;
    result_free(&a);
  }
  g_test_message("%d of 16 injections converted the run", conversions);
  g_assert_cmpint(conversions, >=, 12);
  g_free(r);
  coll_policy_free(pol);
  topo_free(t);
}

static void test_nccl_competitor(void)
{
  nccl_competitors(NCCL_NVL_YAML, ET_COLL_ALL_REDUCE, 72 << 20, 72, 1, 3, 5);
  nccl_competitors(NCCL_NVL_YAML, ET_COLL_ALL_TO_ALL, 72 << 20, 72, 1, 70, 0);
  nccl_competitors(NCCL_RAIL_YAML, ET_COLL_ALL_TO_ALL, 32 << 20, 32, 2, 4, 62);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/coll_fast/halving_doubling_switch", test_halving_doubling_switch);
  g_test_add_func("/coll_fast/direct_switch", test_direct_switch);
  g_test_add_func("/coll_fast/nvls_switch", test_nvls_switch);
  g_test_add_func("/coll_fast/hierarchical_and_shared", test_hierarchical_and_shared);
  g_test_add_func("/coll_fast/competitor_halving_doubling", test_competitor_halving_doubling);
  g_test_add_func("/coll_fast/competitor_boundaries", test_competitor_boundaries);
  g_test_add_func("/coll_fast/competitor_direct", test_competitor_direct);
  g_test_add_func("/coll_fast/competitor_hierarchical", test_competitor_hierarchical);
  g_test_add_func("/coll_fast/concurrent", test_concurrent);
  g_test_add_func("/coll_fast/plan_cache", test_plan_cache);
  g_test_add_func("/coll_fast/nccl_switch", test_nccl_switch);
  g_test_add_func("/coll_fast/nccl_competitor", test_nccl_competitor);
  return g_test_run();
}
