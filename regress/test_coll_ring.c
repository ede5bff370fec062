/* test_coll_ring.c: the ring recurrence (collectives/coll_ring.c, "Ring
 * recurrence") against the per-transfer path.
 *
 * Every case runs the same collective twice on tier A, once with the
 * recurrence (coll_rt_set_ring_recurrence(c, 2): rings of any size) and
 * once per transfer (0: off), and requires the same done time for every member to the
 * picosecond, the same transfer count and the same bytes on every link;
 * the counters (coll_rt_ring_stats) show which path ran.  Closed forms
 * (alpha-beta) are checked where the hops are equal and S divides into p
 * pieces: a ring all-reduce is 2(p-1) steps of S/p bytes, so every member
 * finishes at 2(p-1) * (wisp_transfer_ps(S/p, B) + alpha), alpha the
 * route latency of one hop (a switch hop: up and down, 2 x latency).
 */
#include "config.h"

#include "collectives/coll.h"

#include "regress/test_coll_paths.h"

static void result_free(coll_path_result *r)
{
  g_free(r->t);
  g_free(r->link_bytes);
}

/* Runs both paths; requires equal results; returns the recurrence's. */
static coll_path_result both(const topo *t, const coll_policy *pol, et_coll_type type, uint64_t bytes, const int *ranks,
                        int n, const competitor *comp, sim_time_ps comp_at)
{
  coll_path_result a = run(t, pol, type, bytes, ranks, n, 1, comp, comp_at);
  coll_path_result b = run(t, pol, type, bytes, ranks, n, 0, comp, comp_at);
  for (int i = 0; i < n; i++) {
    if (a.t[i] != b.t[i] && i == 0)
      g_test_message("comp_at %" G_GINT64_FORMAT " runs %d shared %d conv %d", comp_at, (int)a.st.runs, (int)a.st.shared, (int)a.st.conversions);
    if (a.t[i] != b.t[i])
      g_test_message("member %d: recurrence %" G_GINT64_FORMAT " ps, per transfer %" G_GINT64_FORMAT " ps", i,
                     a.t[i], b.t[i]);
    g_assert_cmpint(a.t[i], ==, b.t[i]);
  }
  g_assert_cmpuint(a.transfers, ==, b.transfers);
  for (uint32_t l = 0; l < topo_n_links(t); l++)
    g_assert_cmpuint(a.link_bytes[l], ==, b.link_bytes[l]);
  g_assert_cmpint(a.comp_done, ==, b.comp_done);
  g_assert_cmpuint(b.st.runs, ==, 0); /* off: never taken */
  result_free(&b);
  return a;
}

static coll_policy *ring_policy(const topo *t, gboolean from_topo)
{
  GError *err = NULL;
  coll_policy *pol = from_topo ? coll_policy_new_from_topo(t, &err) : coll_policy_new_default();
  g_assert_no_error(err);
  coll_policy_force(pol, COLL_ALGO_RING);
  return pol;
}

static const et_coll_type ring_types[] = { ET_COLL_ALL_REDUCE, ET_COLL_REDUCE_SCATTER, ET_COLL_ALL_GATHER };

/* Every ring type, ideal and NCCL model, with and without a reduction
 * cost, over members `ranks`: equal results and the recurrence taken. */
static void check_all(const char *yaml_ideal, const char *yaml_nccl, const int *ranks, int n, uint64_t bytes)
{
  const char *yamls[2] = { yaml_ideal, yaml_nccl };
  for (int lib = 0; lib < 2; lib++) {
    if (yamls[lib] == NULL)
      continue;
    topo *t = load(yamls[lib]);
    for (int red = 0; red < 2; red++) {
      coll_policy *pol = ring_policy(t, TRUE);
      if (red)
        coll_policy_set_reduce_bw(pol, 300000000000);
      for (size_t k = 0; k < G_N_ELEMENTS(ring_types); k++) {
        coll_path_result a = both(t, pol, ring_types[k], bytes, ranks, n, NULL, -1);
        g_assert_cmpuint(a.st.runs, ==, 1);
        g_assert_cmpuint(a.st.conversions, ==, 0);
        result_free(&a);
      }
      coll_policy_free(pol);
    }
    topo_free(t);
  }
}

static int *iota(int n)
{
  int *r = g_new(int, n);
  for (int i = 0; i < n; i++)
    r[i] = i;
  return r;
}

#define SWITCH_YAML(lib, n) \
  "schema_version: 1\nname: sw\nmodel: analytical\nlibrary: {name: " lib "}\n" \
  "dims:\n  - {name: sw, kind: switch, size: " #n ", bandwidth: 400GB/s, latency: 936.25ns}\n"

/* A switch of 8: the closed form, then equality for p = 8, 7 (not a power
 * of two, S not a multiple of p) and 2. */
static void test_switch(void)
{
  topo *t = load(SWITCH_YAML("ideal", 8));
  coll_policy *pol = ring_policy(t, TRUE);
  int *r = iota(8);
  const uint64_t S = 8 * 1048576; /* S/p = 1 MiB */
  coll_path_result a = both(t, pol, ET_COLL_ALL_REDUCE, S, r, 8, NULL, -1);
  /* 2(p-1) steps of S/p at 400 GB/s, alpha = 2 x 936.25 ns (up and down):
   * 1 MiB / 400e9 B/s = 2,621,440 ps; alpha = 1,872,500 ps;
   * 14 x 4,493,940 ps = 62,915,160 ps (= 2(p-1)/p S/B + 2(p-1) alpha). */
  sim_time_ps step = wisp_transfer_ps(S / 8, 400000000000) + 2 * 936250;
  g_assert_cmpint(step, ==, 4493940);
  for (int i = 0; i < 8; i++)
    g_assert_cmpint(a.t[i], ==, 14 * step);
  g_assert_cmpint(a.t[0], ==, 62915160);
  g_assert_cmpuint(a.st.runs, ==, 1);
  g_assert_cmpuint(a.st.symmetric, ==, 1); /* the closed form (ring_recurrence_symmetric) */
  g_assert_cmpuint(a.transfers, ==, 8 * 14);
  result_free(&a);
  coll_policy_free(pol);
  topo_free(t);
  check_all(SWITCH_YAML("ideal", 8), SWITCH_YAML("nccl", 8), r, 8, S);
  check_all(SWITCH_YAML("ideal", 8), SWITCH_YAML("nccl", 8), r, 7, 3000001);
  check_all(SWITCH_YAML("ideal", 8), SWITCH_YAML("nccl", 8), r, 2, 999);
  check_all(SWITCH_YAML("ideal", 8), SWITCH_YAML("nccl", 8), r, 5, 3); /* pieces of 0 and 1 byte */
  g_free(r);
}

#define TWO_TIER_YAML(lib) \
  "schema_version: 1\nname: tt\nmodel: analytical\nlibrary: {name: " lib "}\n" \
  "dims:\n  - {name: node, kind: switch, size: 4, bandwidth: 450GB/s, latency: 500ns}\n" \
  "  - {name: fabric, kind: fat_tree, size: 3, leaves: 1, bandwidth: 50GB/s, latency: 2us}\n"

/* Two tiers: a group that is not a sub-grid (5 and 9 of 12 ranks) runs one
 * flat ring over node and fabric hops of different bandwidths. */
static void test_two_tier(void)
{
  int r5[5] = { 0, 1, 2, 3, 4 };
  int r9[9] = { 0, 1, 2, 3, 4, 5, 6, 7, 8 };
  check_all(TWO_TIER_YAML("ideal"), TWO_TIER_YAML("nccl"), r5, 5, 4194304);
  check_all(TWO_TIER_YAML("ideal"), TWO_TIER_YAML("nccl"), r9, 9, 1000003);
}

#define RING_YAML(lib, kind) \
  "schema_version: 1\nname: rg\nmodel: analytical\nlibrary: {name: " lib "}\n" \
  "dims:\n  - {name: x, kind: " kind ", size: 6, bandwidth: 50GB/s, latency: 500ns}\n"

/* A ring topology: every hop is one link; the closed form with alpha =
 * 500 ns; then all types. */
static void test_ring_topology(void)
{
  int *r = iota(6);
  topo *t = load(RING_YAML("ideal", "ring"));
  coll_policy *pol = ring_policy(t, TRUE);
  coll_path_result a = both(t, pol, ET_COLL_ALL_REDUCE, 6000000, r, 6, NULL, -1);
  /* 10 steps of 1,000,000 bytes at 50 GB/s (20 us) + 500 ns. */
  for (int i = 0; i < 6; i++)
    g_assert_cmpint(a.t[i], ==, 10 * (20000000 + 500000));
  result_free(&a);
  coll_policy_free(pol);
  topo_free(t);
  check_all(RING_YAML("ideal", "ring"), RING_YAML("nccl", "ring"), r, 6, 6000000);
  check_all(RING_YAML("ideal", "ring_uni"), RING_YAML("nccl", "ring_uni"), r, 6, 777777);
  g_free(r);
}

#define ASYM_YAML(lib) \
  "schema_version: 1\nname: asym\nmodel: analytical\nlibrary: {name: " lib "}\ngraph:\n  nodes:\n" \
  "    - {name: g0, kind: endpoint}\n    - {name: g1, kind: endpoint}\n    - {name: g2, kind: endpoint}\n" \
  "    - {name: g3, kind: endpoint}\n    - {name: g4, kind: endpoint}\n    - {name: sw, kind: switch}\n" \
  "  links:\n" \
  "    - {a: g0, b: sw, bandwidth: 100GB/s, latency: 500ns, bandwidth_ba: 25GB/s, latency_ba: 2us}\n" \
  "    - {a: g1, b: sw, bandwidth: 30GB/s, latency: 700ns, bandwidth_ba: 70GB/s, latency_ba: 0ns}\n" \
  "    - {a: g2, b: sw, bandwidth: 100GB/s, latency: 300ns, bandwidth_ba: 30GB/s, latency_ba: 0ns}\n" \
  "    - {a: g3, b: sw, bandwidth: 10GB/s, latency: 1us}\n" \
  "    - {a: g4, b: sw, bandwidth: 100GB/s, latency: 0ns}\n"

/* Asymmetric bandwidths and latencies (some zero: a link may still hold a
 * fraction of a picosecond when the next step starts), members that
 * fall behind their successors' successors. */
static void test_asymmetric(void)
{
  int *r = iota(5);
  check_all(ASYM_YAML("ideal"), ASYM_YAML("nccl"), r, 5, 1234567);
  check_all(ASYM_YAML("ideal"), ASYM_YAML("nccl"), r, 3, 7);
  check_all(ASYM_YAML("ideal"), ASYM_YAML("nccl"), r, 2, 1 << 20);
  g_free(r);
}

#define DIRECTED_YAML(lib) \
  "schema_version: 1\nname: dr\nmodel: analytical\nlibrary: {name: " lib "}\ngraph:\n  nodes:\n" \
  "    - {name: g0, kind: endpoint}\n    - {name: g1, kind: endpoint}\n    - {name: g2, kind: endpoint}\n" \
  "    - {name: g3, kind: endpoint}\n    - {name: g4, kind: endpoint}\n  links:\n" \
  "    - {a: g0, b: g1, bandwidth: 100GB/s, latency: 0ns, duplex: false}\n" \
  "    - {a: g1, b: g2, bandwidth: 30GB/s, latency: 0ns, duplex: false}\n" \
  "    - {a: g2, b: g3, bandwidth: 70GB/s, latency: 3ns, duplex: false}\n" \
  "    - {a: g3, b: g4, bandwidth: 30GB/s, latency: 0ns, duplex: false}\n" \
  "    - {a: g4, b: g0, bandwidth: 90GB/s, latency: 0ns, duplex: false}\n"

/* A directed ring of one-link hops of unequal bandwidths (30 GB/s does not
 * divide 10^12 ps x bytes evenly) and zero latencies: a step may start
 * while its link still holds a fraction of a picosecond of the previous
 * one (rounded half up), and under the NCCL model a member's sends queue
 * on a slower outgoing link, so the links' exact FIFO state carries from
 * step to step. */
static void test_directed_ring(void)
{
  int *r = iota(5);
  check_all(DIRECTED_YAML("ideal"), DIRECTED_YAML("nccl"), r, 5, 1234567);
  check_all(DIRECTED_YAML("ideal"), DIRECTED_YAML("nccl"), r, 5, 5000000); /* equal pieces, unlike hops */
  check_all(DIRECTED_YAML("ideal"), DIRECTED_YAML("nccl"), r, 5, 33333333);
  g_free(r);
}

/* Competing traffic.  (1) A send already queued on a ring link when the
 * collective starts: the links are not idle, so the collective goes per
 * transfer (shared = 1, runs = 0).  (2) A send that starts while the
 * recurrence runs: the run is turned back to per transfer at that instant
 * (conversions = 1), and every member's time, the competitor's time and
 * the link counters equal the per-transfer path's, for instants before,
 * inside the ring's steps and on a step boundary (the tie the
 * recurrence resolves as the per-transfer path does when the competitor's
 * event was queued first, coll_ring.c); until the 8th step the competitor does
 * delay the ring (the comparison is not vacuous). */
static void test_competing(void)
{
  int *r = iota(8);
  for (int lib = 0; lib < 2; lib++) {
    topo *t = load(lib ? SWITCH_YAML("nccl", 8) : SWITCH_YAML("ideal", 8));
    coll_policy *pol = ring_policy(t, TRUE);
    const uint64_t S = 8 * 1048576;
    competitor big = { .src = 3, .dst = 4, .bytes = 64 * 1048576 }; /* 168 us: still queued after NCCL's launch */
    coll_path_result a = both(t, pol, ET_COLL_ALL_REDUCE, S, r, 8, &big, 0);
    g_assert_cmpuint(a.st.shared, ==, 1);
    g_assert_cmpuint(a.st.runs, ==, 0);
    result_free(&a);
    competitor cx = { .src = 3, .dst = 4, .bytes = 4 * 1048576 };
    coll_path_result alone = both(t, pol, ET_COLL_ALL_REDUCE, S, r, 8, NULL, -1);
    sim_time_ps step = wisp_transfer_ps(S / 8, 400000000000) + 2 * 936250;
    sim_time_ps last_alone = 0;
    for (int m = 0; m < 8; m++)
      last_alone = MAX(last_alone, alone.t[m]);
    /* Ideal: the run starts at 0, steps every `step`.  NCCL model: it
     * starts after NCCL's launch and base latency; instants in the second
     * half of the run. */
    sim_time_ps ats[] = { 1, step / 2, step, 3 * step + 17, 7 * step, 13 * step + 1, 14 * step - 1 };
    if (lib)
      for (size_t i = 0; i < G_N_ELEMENTS(ats); i++)
        ats[i] = last_alone / 2 + (sim_time_ps)i * (last_alone / 2 / (sim_time_ps)G_N_ELEMENTS(ats));
    for (size_t i = 0; i < G_N_ELEMENTS(ats); i++) {
      coll_path_result b = both(t, pol, ET_COLL_ALL_REDUCE, S, r, 8, &cx, ats[i]);
      g_assert_cmpuint(b.st.runs, ==, 1);
      g_assert_cmpuint(b.st.conversions, ==, 1);
      sim_time_ps last = 0;
      for (int m = 0; m < 8; m++)
        last = MAX(last, b.t[m]);
      if (i <= 4) /* the competitor delayed the ring (later, it queues behind the last step) */
        g_assert_cmpint(last, >, last_alone);
      result_free(&b);
    }
    if (!lib) { /* at the ring's start instant, after its first step was issued */
      coll_path_result b = both(t, pol, ET_COLL_ALL_REDUCE, S, r, 8, &cx, RUN_AFTER_START);
      g_assert_cmpuint(b.st.conversions, ==, 1);
      result_free(&b);
    }
    /* A send over links the ring does not use (a 6-member ring; ranks
     * 6 -> 7 are outside it): no conversion. */
    competitor other = { .src = 6, .dst = 7, .bytes = 4 * 1048576 };
    coll_path_result c = both(t, pol, ET_COLL_ALL_REDUCE, S, r, 6, &other, step);
    g_assert_cmpuint(c.st.runs, ==, 1);
    g_assert_cmpuint(c.st.conversions, ==, 0);
    result_free(&c);
    result_free(&alone);
    coll_policy_free(pol);
    topo_free(t);
  }
  g_free(r);
}

#define SHARED_GRAPH_YAML \
  "schema_version: 1\nname: sh\nmodel: analytical\nlibrary: {name: ideal}\ngraph:\n  nodes:\n" \
  "    - {name: a, kind: endpoint}\n    - {name: c, kind: endpoint}\n    - {name: b, kind: endpoint}\n" \
  "    - {name: d, kind: endpoint}\n    - {name: s0, kind: switch}\n    - {name: s1, kind: switch}\n" \
  "  links:\n    - {a: a, b: s0, bandwidth: 100GB/s, latency: 500ns}\n" \
  "    - {a: b, b: s0, bandwidth: 100GB/s, latency: 500ns}\n" \
  "    - {a: c, b: s1, bandwidth: 100GB/s, latency: 500ns}\n" \
  "    - {a: d, b: s1, bandwidth: 100GB/s, latency: 500ns}\n" \
  "    - {a: s0, b: s1, bandwidth: 100GB/s, latency: 1us}\n"

/* A ring whose own hops share a link (ranks alternate between two
 * switches: a -> c and b -> d both cross s0 -> s1): per transfer. */
static void test_shared_hops(void)
{
  topo *t = load(SHARED_GRAPH_YAML);
  coll_policy *pol = ring_policy(t, TRUE);
  int *r = iota(4);
  coll_path_result a = both(t, pol, ET_COLL_ALL_REDUCE, 4000000, r, 4, NULL, -1);
  g_assert_cmpuint(a.st.runs, ==, 0);
  g_assert_cmpuint(a.st.shared, ==, 1);
  result_free(&a);
  g_free(r);
  coll_policy_free(pol);
  topo_free(t);
}

/* The default: rings of COLL_RING_RECURRENCE_MIN (64) members or more
 * take the recurrence, smaller ones run per transfer; a 65-member ring
 * (S not a multiple of p, the general recurrence) and a 128-member one
 * (the symmetric form) equal the per-transfer path. */
static void test_default_threshold(void)
{
  topo *t = load(SWITCH_YAML("ideal", 128));
  coll_policy *pol = ring_policy(t, TRUE);
  int *r = iota(128);
  coll_path_result a = run(t, pol, ET_COLL_ALL_REDUCE, 1 << 20, r, 63, -1, NULL, -1);
  g_assert_cmpuint(a.st.runs + a.st.shared, ==, 0);
  result_free(&a);
  a = run(t, pol, ET_COLL_ALL_REDUCE, 1 << 20, r, 64, -1, NULL, -1);
  g_assert_cmpuint(a.st.runs, ==, 1);
  result_free(&a);
  a = both(t, pol, ET_COLL_ALL_REDUCE, 1000003, r, 65, NULL, -1);
  g_assert_cmpuint(a.st.symmetric, ==, 0);
  result_free(&a);
  a = both(t, pol, ET_COLL_ALL_GATHER, 1 << 20, r, 128, NULL, -1);
  g_assert_cmpuint(a.st.symmetric, ==, 1);
  result_free(&a);
  g_free(r);
  coll_policy_free(pol);
  topo_free(t);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/coll_ring/switch", test_switch);
  g_test_add_func("/coll_ring/two_tier", test_two_tier);
  g_test_add_func("/coll_ring/ring_topology", test_ring_topology);
  g_test_add_func("/coll_ring/asymmetric", test_asymmetric);
  g_test_add_func("/coll_ring/directed_ring", test_directed_ring);
  g_test_add_func("/coll_ring/competing", test_competing);
  g_test_add_func("/coll_ring/shared_hops", test_shared_hops);
  g_test_add_func("/coll_ring/default_threshold", test_default_threshold);
  return g_test_run();
}
