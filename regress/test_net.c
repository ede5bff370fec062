/* test_net.c: the network tiers (net/net.c) on topologies loaded from wisp
 * YAML.
 *
 * Expected times are written out from the model formulas next to each
 * check: tier A charges sum(latency) + round(S * 10^12 / B_min) ps; tier B
 * pays the same latency and then shares bandwidth max-min fairly, finishing
 * a flow of R remaining bytes at rate r after ceil(R * 10^12 / r) ps.
 */
#include "config.h"

#include "net/net.h"
#include "topologies/topo_variant.h"

#include <math.h>
#include <string.h>

/* A switch of 8 endpoints, 48 GB/s per endpoint link, 500 ns per link: a
 * route is endpoint -> switch -> endpoint, 2 links, 1000 ns.  48 GB/s makes
 * 10^12 / B = 20.8333 ps per byte, so rounding matters. */
static const char *switch8 =
    "schema_version: 1\n"
    "dims:\n"
    "  - {name: sw, kind: switch, size: 8, bandwidth: 48GB/s, latency: 500ns}\n";

#define SW_BW UINT64_C(48000000000)
#define SW_LAT (2 * 500 * SIM_PS_PER_NS)

typedef struct {
  sim_time_ps *t;   /* completion time per cookie */
  int n_done;
  gboolean in_send; /* set while net_send runs: detects re-entrant calls */
} record;

static void on_done(sim_engine *sim, void *ctx, uint64_t cookie) {
  record *r = ctx;
  g_assert_false(r->in_send);
  r->t[cookie] = sim_now(sim);
  r->n_done++;
}

static topo *load(const char *yaml) {
  GError *err = NULL;
  topo *t = topo_load_string(yaml, "test_net.yaml", &err);
  g_assert_no_error(err);
  g_assert_nonnull(t);
  return t;
}

/* round(S * 10^12 / B) half away from zero, in integers (S < 1.8e7 keeps
 * S * 10^12 below 2^64). */
static sim_time_ps xfer_round(uint64_t bytes, uint64_t bw) {
  g_assert_cmpuint(bytes, <, UINT64_C(18000000));
  return (sim_time_ps)((bytes * UINT64_C(1000000000000) + bw / 2) / bw);
}

/* ceil(num / den) for the incast and all-to-all closed forms. */
static sim_time_ps ceil_div(uint64_t num, uint64_t den) { return (sim_time_ps)((num + den - 1) / den); }

typedef struct {
  int src, dst;
  uint64_t bytes;
  sim_time_ps at;  /* issue time */
} xfer_spec;

typedef struct {
  net *n;
  record *rec;
  const xfer_spec *spec;
} issue_ctx;

static void ev_issue(sim_engine *sim, void *ctx, uint64_t i) {
  (void)sim;
  issue_ctx *ic = ctx;
  ic->rec->in_send = TRUE;
  net_send(ic->n, ic->spec[i].src, ic->spec[i].dst, ic->spec[i].bytes, on_done, ic->rec, i);
  ic->rec->in_send = FALSE;
}

/* Runs the transfers in one tier and returns their completion times
 * (g_free).  full = TRUE uses the solver's full re-solve switch; quantum
 * >= 0 replaces the topology's flow_quantum. */
static sim_time_ps *run_q(const topo *t, net_tier tier, const xfer_spec *spec, int n_spec, gboolean full,
                          net **keep, sim_time_ps quantum) {
  sim_engine *sim = sim_engine_new(TRUE);
  net *n = net_new(sim, t, tier);
  net_set_full_solve(n, full);
  if (quantum >= 0) net_set_flow_quantum(n, quantum);
  record rec = {.t = g_new0(sim_time_ps, n_spec)};
  issue_ctx ic = {n, &rec, spec};
  for (int i = 0; i < n_spec; i++) sim_schedule_at(sim, spec[i].at, ev_issue, &ic, (uint64_t)i);
  sim_run(sim, SIM_TIME_MAX);
  g_assert_cmpint(rec.n_done, ==, n_spec);
  g_assert_cmpuint(net_transfers(n), ==, (uint64_t)n_spec);
  g_assert_cmpuint(net_active_flows(n), ==, 0);
  if (keep) *keep = n;
  else net_free(n);
  sim_engine_free(sim);
  return rec.t;
}

static sim_time_ps *run(const topo *t, net_tier tier, const xfer_spec *spec, int n_spec, gboolean full,
                        net **keep) {
  return run_q(t, tier, spec, n_spec, full, keep, -1);
}

/* Traffic without contention: single transfers one after another, and a
 * shift permutation (rank r -> r+1 mod 8, each endpoint link carries one
 * flow) issued together.  Tier B must give tier A's times exactly, and
 * tier A's times are SW_LAT + round(S * 10^12 / 48e9) after issue. */
static void test_no_contention_equal(void) {
  topo *t = load(switch8);
  static const uint64_t sizes[] = {1, 7, 1000, 12345, 1048576, 1048583, 9999991};
  enum { NS = G_N_ELEMENTS(sizes) };
  xfer_spec spec[NS + 8];
  sim_time_ps at = 0;
  for (int i = 0; i < NS; i++) { /* sequential: each starts after the previous ended */
    spec[i] = (xfer_spec){i % 8, (i + 3) % 8, sizes[i], at};
    at += SW_LAT + xfer_round(sizes[i], SW_BW) + 1;
  }
  for (int r = 0; r < 8; r++) spec[NS + r] = (xfer_spec){r, (r + 1) % 8, 3000017 + (uint64_t)r, at};
  sim_time_ps *ta = run(t, NET_TIER_ANALYTICAL, spec, NS + 8, FALSE, NULL);
  sim_time_ps *tb = run(t, NET_TIER_FLOW, spec, NS + 8, FALSE, NULL);
  for (int i = 0; i < NS + 8; i++) {
    sim_time_ps want = spec[i].at + SW_LAT + xfer_round(spec[i].bytes, SW_BW);
    g_assert_cmpint(ta[i], ==, want);
    g_assert_cmpint(tb[i], ==, want);
  }
  g_free(ta);
  g_free(tb);
  topo_free(t);
}

/* Multi-tier routes without contention: a 2-level topology (4 GPUs per
 * node fully connected at 100 GB/s, 16 nodes on a 2:1 oversubscribed fat
 * tree at 25 GB/s per endpoint link) where a route may cross links of
 * different bandwidths and latencies.  One transfer at a time between
 * random ranks: tier B equals tier A exactly, and tier A equals the sum of
 * the route's latencies plus round(S * 10^12 / min bandwidth), both read
 * back from the topology. */
static void test_multi_tier_no_contention(void) {
  topo *t = load("schema_version: 1\n"
                 "dims:\n"
                 "  - {name: nvlink, kind: fully_connected, size: 4, bandwidth: 100GB/s, latency: 700ns}\n"
                 "  - {name: fabric, kind: fat_tree, size: 16, leaves: 4, spines: 2, oversubscription: 2,\n"
                 "     bandwidth: 200Gbps, latency: 1us}\n");
  enum { N = 60 };
  xfer_spec spec[N];
  sim_time_ps want[N];
  GRand *rng = g_rand_new_with_seed(11);
  sim_time_ps at = 0;
  int n_ranks = topo_n_ranks(t);
  g_assert_cmpint(n_ranks, ==, 64);
  for (int i = 0; i < N; i++) {
    int a = g_rand_int_range(rng, 0, n_ranks), b = g_rand_int_range(rng, 0, n_ranks - 1);
    if (b >= a) b++;
    uint64_t bytes = (uint64_t)g_rand_int_range(rng, 1, 17000000);
    uint32_t nl;
    const uint32_t *route = topo_route(t, a, b, &nl);
    g_assert_cmpuint(nl, >, 0);
    sim_time_ps lat = 0;
    uint64_t bw = UINT64_MAX;
    for (uint32_t k = 0; k < nl; k++) {
      const topo_link *l = topo_get_link(t, route[k]);
      lat += l->latency;
      bw = MIN(bw, l->bw);
    }
    spec[i] = (xfer_spec){a, b, bytes, at};
    want[i] = at + lat + xfer_round(bytes, bw);
    at = want[i] + 1;
  }
  g_rand_free(rng);
  sim_time_ps *ta = run(t, NET_TIER_ANALYTICAL, spec, N, FALSE, NULL);
  sim_time_ps *tb = run(t, NET_TIER_FLOW, spec, N, FALSE, NULL);
  for (int i = 0; i < N; i++) {
    g_assert_cmpint(ta[i], ==, want[i]);
    g_assert_cmpint(tb[i], ==, want[i]);
  }
  g_free(ta);
  g_free(tb);
  topo_free(t);
}

/* Incast: k senders into one receiver, issued together.  The receiver's
 * down link (48 GB/s) is the only shared link, so each flow gets 48/k GB/s
 * from start to end and all finish at SW_LAT + ceil(S * k * 10^12 / 48e9).
 * k = 3, S = 1000001: 1000001 * 3 * 10^12 / 48e9 = 62500062.5 -> 62500063.
 * k = 4, S = 1048576: 87381333.33 -> 87381334.  k = 6, S = 480000:
 * exactly 60000000 (an integer quotient must not be pushed up by the
 * floating-point rate).  Tier A queues the k transfers on that link. */
static void test_incast(void) {
  topo *t = load(switch8);
  static const struct { int k; uint64_t bytes; sim_time_ps want_flow; } cases[] = {
      {3, 1000001, 62500063}, {4, 1048576, 87381334}, {6, 480000, 60000000}};
  for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
    int k = cases[c].k;
    xfer_spec spec[8];
    for (int i = 0; i < k; i++) spec[i] = (xfer_spec){i + 1, 0, cases[c].bytes, 0};
    sim_time_ps want = SW_LAT + ceil_div(cases[c].bytes * (uint64_t)k * UINT64_C(1000000000000), SW_BW);
    g_assert_cmpint(want, ==, SW_LAT + cases[c].want_flow); /* the comment's arithmetic */
    net *n;
    sim_time_ps *tb = run(t, NET_TIER_FLOW, spec, k, FALSE, &n);
    for (int i = 0; i < k; i++) g_assert_cmpint(tb[i], ==, want);
    /* Byte counters: the receiver's down link carried k * S. */
    uint32_t nl;
    const uint32_t *route = topo_route(t, 1, 0, &nl);
    g_assert_cmpuint(nl, ==, 2);
    g_assert_cmpuint(net_link_bytes(n, route[1]), ==, (uint64_t)k * cases[c].bytes);
    g_assert_cmpuint(net_link_bytes(n, route[0]), ==, cases[c].bytes);
    net_free(n);
    /* Tier A: the receiver's down link serves the k transfers one after
     * the other in issue order (the up links are idle), so sender i + 1
     * ends at SW_LAT + round((i + 1) S 10^12 / 48e9): FIFO instead of fair
     * sharing, and the last one at the same bound as tier B up to tier B's
     * round-up (k = 4: 87381333.33 -> 87381333 against 87381334). */
    sim_time_ps *ta = run(t, NET_TIER_ANALYTICAL, spec, k, FALSE, NULL);
    for (int i = 0; i < k; i++)
      g_assert_cmpint(ta[i], ==, SW_LAT + xfer_round((uint64_t)(i + 1) * cases[c].bytes, SW_BW));
    g_assert_cmpint(ta[k - 1], >=, want - 1);
    g_free(ta);
    g_free(tb);
  }
  topo_free(t);
}

/* Staggered sharing on a 50 GB/s link (20 ps per byte, latency 2 x 500 ns):
 * A (10^6 bytes) is issued at 0 and flows from 1 us; B (10^6 bytes, same
 * receiver) is issued at 5 us and flows from 6 us.  A alone for 5 us sends
 * 250000 bytes; both then get 25 GB/s: A's 750000 remaining take 30 us, so
 * A ends at 36 us, when B has sent 750000; B's last 250000 at 50 GB/s take
 * 5 us: B ends at 41 us. */
static void test_staggered(void) {
  topo *t = load("schema_version: 1\n"
                 "dims:\n"
                 "  - {name: sw, kind: switch, size: 4, bandwidth: 50GB/s, latency: 500ns}\n");
  xfer_spec spec[2] = {{1, 0, 1000000, 0}, {2, 0, 1000000, 5 * SIM_PS_PER_US}};
  for (int full = 0; full < 2; full++) {
    sim_time_ps *tb = run(t, NET_TIER_FLOW, spec, 2, full, NULL);
    g_assert_cmpint(tb[0], ==, 36 * SIM_PS_PER_US);
    g_assert_cmpint(tb[1], ==, 41 * SIM_PS_PER_US);
    g_free(tb);
  }
  topo_free(t);
}

/* The approximate mode's quantum (flow_quantum).  Two 10^6-byte flows into
 * one endpoint of a 100 GB/s switch with zero latency (they share only the
 * switch -> endpoint 0 link, B = 10^11 B/s = 10^5 B/us): A (1 -> 0) at 0,
 * B (2 -> 0) at 1 us.
 *   exact (q = 0): A alone sends 10^5 B in [0, 1]; both at B/2 after: A's
 *     9 x 10^5 B take 18 us, A ends at 19 us; B has 10^5 B left then, 1 us
 *     at B: 20 us.
 *   q = 3 us: A's start is solved at 0 (no solve before it); B's start at
 *     1 us waits for the solve at 0 + 3 = 3 us, which is the only change
 *     of its batch: the new rates (B/2 each) are backdated to 1 us, B's
 *     start, so A still ends at 19 us.  A's finish comes more than 3 us
 *     after the previous solve and is solved at once: B ends at 20 us.
 *     A batch whose changes fall on one instant is exact (doc/network-
 *     models.md, "Approximate mode").
 * The quantum comes from the config's flow_quantum key (the net section of
 * the document, carried by topology variants) or net_set_flow_quantum. */
static sim_time_ps flow_quantum_of(const topo *t) {
  net_settings s;
  net_settings_from_config(topo_config(t), &s);
  return s.flow_quantum;
}

static void test_flow_quantum(void) {
  const char *base = "schema_version: 1\n"
                     "model: flow\n"
                     "%s"
                     "dims:\n"
                     "  - {name: sw, kind: switch, size: 4, bandwidth: 100GB/s, latency: 0ns}\n";
  char *y0 = g_strdup_printf(base, ""), *y3 = g_strdup_printf(base, "flow_quantum: 3us\n");
  topo *t0 = load(y0), *t3 = load(y3);
  g_assert_cmpint(flow_quantum_of(t0), ==, 0);
  g_assert_cmpint(flow_quantum_of(t3), ==, 3 * SIM_PS_PER_US);
  xfer_spec spec[2] = {{1, 0, 1000000, 0}, {2, 0, 1000000, 1 * SIM_PS_PER_US}};
  sim_time_ps *exact = run(t0, NET_TIER_FLOW, spec, 2, FALSE, NULL);
  g_assert_cmpint(exact[0], ==, 19 * SIM_PS_PER_US);
  g_assert_cmpint(exact[1], ==, 20 * SIM_PS_PER_US);
  for (int full = 0; full < 2; full++) {
    sim_time_ps *q = run(t3, NET_TIER_FLOW, spec, 2, full, NULL);
    g_assert_cmpint(q[0], ==, 19 * SIM_PS_PER_US);
    g_assert_cmpint(q[1], ==, 20 * SIM_PS_PER_US);
    g_free(q);
  }
  /* A variant carries and sets it. */
  GError *e = NULL;
  topo_variant *v = topo_variant_new(t3);
  topo *tv = topo_variant_build(v, &e);
  g_assert_no_error(e);
  g_assert_cmpint(flow_quantum_of(tv), ==, 3 * SIM_PS_PER_US);
  topo_free(tv);
  g_assert_true(topo_variant_set(v, "flow_quantum", "250ns", &e));
  tv = topo_variant_build(v, &e);
  g_assert_no_error(e);
  g_assert_cmpint(flow_quantum_of(tv), ==, 250 * SIM_PS_PER_NS);
  topo_free(tv);
  g_assert_false(topo_variant_set(v, "flow_quantum", "soon", &e));
  g_assert_nonnull(strstr(e->message, "flow_quantum"));
  g_clear_error(&e);
  topo_variant_free(v);
  /* A malformed value names the key and its line (line 3 of the text). */
  char *bad = g_strdup_printf(base, "flow_quantum: soon\n");
  g_assert_null(topo_load_string(bad, "bad.yaml", &e));
  g_assert_nonnull(strstr(e->message, "flow_quantum"));
  g_assert_nonnull(strstr(e->message, "bad.yaml:3"));
  g_clear_error(&e);
  g_free(bad);
  g_free(exact);
  topo_free(t0);
  topo_free(t3);
  g_free(y0);
  g_free(y3);
}

/* A batch with changes at several instants (approximate mode, same switch
 * as /net/flow_quantum: 10^5 B/us into endpoint 0, zero latency).  Three
 * 10^6-byte flows into endpoint 0: A (1 -> 0) at 0, B (2 -> 0) at 1 us,
 * C (3 -> 0) at 2 us.
 *   exact: [0, 1] A alone: A has 9 x 10^5 B left.  [1, 2] A and B at
 *     5 x 10^4 B/us: A 8.5 x 10^5, B 9.5 x 10^5 left.  Then three at
 *     10^5/3 B/us: A's 8.5 x 10^5 take 25.5 us, A ends at 27.5 us, when B
 *     has 10^5 and C 1.5 x 10^5 left; two at 5 x 10^4: B ends 2 us later,
 *     29.5 us; C's last 5 x 10^4 at 10^5 B/us: 30 us.
 *   q = 3 us: A is solved at 0.  B (1 us) and C (2 us) share the solve at
 *     3 us, whose rates, 10^5/3 B/us each, apply from the first change on
 *     each flow's links: 1 us for A and B (the shared link changed at B's
 *     start), 2 us for C (not before it entered).  A: 9 x 10^5 B from 1 us
 *     at 10^5/3 B/us take 27 us: A ends at 28 us, when B has
 *     10^6 - 27 x 10^5/3 = 10^5 and C 10^6 - 26 x 10^5/3 = 4 x 10^5/3 B
 *     left.  A's finish is 25 us after the previous solve: solved at once,
 *     B and C at 5 x 10^4 B/us: B ends 2 us later, at 30 us.  That finish
 *     comes 2 us after the solve at 28 us, so its solve is due at 31 us;
 *     C, still at 5 x 10^4 B/us, ends first: its 4 x 10^5/3 B take
 *     8/3 us, 28 + 8/3 = 30.667 us (30666666.7 ps, rounded up).
 * The two documented deviations are both here: over the batch [1, 2 us],
 * A and B run at the final rate 10^5/3 instead of 5 x 10^4 B/us (each
 * loses (5 x 10^4 - 10^5/3) x 1 us = 1.67 x 10^4 B, so A and B end
 * 1.67 x 10^4 / (10^5/3) = 0.5 us late), and B's share reaches C no
 * earlier than q after the previous solve, too late for C (0.667 us).
 * No finish moves by more than q. */
static void test_approx_batch(void) {
  topo *t = load("schema_version: 1\n"
                 "dims:\n"
                 "  - {name: sw, kind: switch, size: 4, bandwidth: 100GB/s, latency: 0ns}\n");
  xfer_spec spec[3] = {{1, 0, 1000000, 0}, {2, 0, 1000000, 1 * SIM_PS_PER_US}, {3, 0, 1000000, 2 * SIM_PS_PER_US}};
  const sim_time_ps q = 3 * SIM_PS_PER_US;
  const sim_time_ps want_exact[3] = {27500000, 29500000, 30000000};  /* 27.5, 29.5, 30 us */
  const sim_time_ps want_approx[3] = {28000000, 30000000, 30666667}; /* 28, 30, 30.667 us */
  sim_time_ps *exact = run_q(t, NET_TIER_FLOW, spec, 3, FALSE, NULL, 0);
  for (int i = 0; i < 3; i++) g_assert_cmpint(exact[i], ==, want_exact[i]);
  for (int full = 0; full < 2; full++) {
    sim_time_ps *a = run_q(t, NET_TIER_FLOW, spec, 3, full, NULL, q);
    for (int i = 0; i < 3; i++) {
      g_assert_cmpint(a[i], ==, want_approx[i]);
      g_assert_cmpint(a[i] - exact[i], <=, q);
    }
    g_free(a);
  }
  g_free(exact);
  topo_free(t);
}

/* Without contention the approximate mode keeps tier A's times exactly,
 * also when a start waits for a solve: the rate is backdated to the
 * flow's entry.  A start is solved at most q after it (solves are q apart
 * and the previous one came no later than the start), so a transfer that
 * lasts at least q still ends after its solve, at entry + round(S * 10^12
 * / B).  On switch8 (48 GB/s, 1 us route latency) with q = 2 us: transfers
 * of at least 96000 B (2 us at 48 GB/s) one after another, each issued
 * 1 ps after the previous one ended (entering 1 us + 1 ps after it, while
 * that finish's solve may still hold the next solve back); then the shift
 * permutation (rank r -> r + 1, one flow per link) issued at once. */
static void test_approx_no_contention(void) {
  topo *t = load(switch8);
  static const uint64_t sizes[] = {96000, 96001, 100000, 1048576, 1048583, 9999991};
  enum { NS = G_N_ELEMENTS(sizes) };
  xfer_spec spec[NS + 8];
  sim_time_ps at = 0;
  for (int i = 0; i < NS; i++) {
    spec[i] = (xfer_spec){i % 8, (i + 3) % 8, sizes[i], at};
    at += SW_LAT + xfer_round(sizes[i], SW_BW) + 1;
  }
  for (int r = 0; r < 8; r++) spec[NS + r] = (xfer_spec){r, (r + 1) % 8, 3000017 + (uint64_t)r, at};
  sim_time_ps *tb = run_q(t, NET_TIER_FLOW, spec, NS + 8, FALSE, NULL, 2 * SIM_PS_PER_US);
  for (int i = 0; i < NS + 8; i++)
    g_assert_cmpint(tb[i], ==, spec[i].at + SW_LAT + xfer_round(spec[i].bytes, SW_BW));
  g_free(tb);
  topo_free(t);
}

/* The random workload of /net/random_fat_tree and /net/approx_random: a
 * 32-host fat tree (8 leaves of 4, 2 spines, 2:1, 25 GB/s, 1 us) and
 * RANDOM_FT_N transfers between random distinct hosts, sizes uniform in
 * [0, 4 MB), issued at whole microseconds in [0, 200 us); seed 7.  Fills
 * spec and returns the topology (topo_free it). */
enum { RANDOM_FT_N = 400 };
static topo *random_fat_tree(xfer_spec *spec)
{
  topo *t = load("schema_version: 1\n"
                 "dims:\n"
                 "  - {name: f, kind: fat_tree, size: 32, leaves: 8, spines: 2, oversubscription: 2,\n"
                 "     bandwidth: 25GB/s, latency: 1us}\n");
  GRand *rng = g_rand_new_with_seed(7);
  for (int i = 0; i < RANDOM_FT_N; i++) {
    int a = g_rand_int_range(rng, 0, 32), b = g_rand_int_range(rng, 0, 31);
    if (b >= a) b++;
    spec[i] = (xfer_spec){a, b, (uint64_t)g_rand_int_range(rng, 0, 4000000),
                          (sim_time_ps)g_rand_int_range(rng, 0, 200) * SIM_PS_PER_US};
  }
  g_rand_free(rng);
  return t;
}

/* Random contended traffic on the fat tree of /net/random_fat_tree in the
 * approximate mode (q = 1 us and 5 us): deterministic (two runs, and the
 * full re-solve, give the same times to the picosecond: the changed rates
 * are the same whichever components are re-solved), no flow finishes
 * before its own alpha-beta time (a flow's rate never exceeds its bottleneck and
 * is never backdated before its entry), and the workload's completion is
 * within 1 % of exact mode's (measured: +0.0006 % and +0.058 %; see
 * bench/bench_flow for the fabric-scale figures). */
static void test_approx_random(void) {
  enum { N = RANDOM_FT_N };
  xfer_spec spec[N];
  topo *t = random_fat_tree(spec);
  sim_time_ps *exact = run_q(t, NET_TIER_FLOW, spec, N, FALSE, NULL, 0);
  /* Each transfer's own alpha-beta time (alone on its route): no flow may
   * finish before it.  (Tier A's times under contention are FIFO queue
   * times, which a max-min flow can beat.) */
  sim_time_ps *ta = g_new(sim_time_ps, N);
  for (int i = 0; i < N; i++) {
    sim_time_ps lat;
    wisp_bw_Bps bw;
    topo_route_cost(t, spec[i].src, spec[i].dst, &lat, &bw);
    ta[i] = spec[i].at + lat + wisp_transfer_ps(spec[i].bytes, bw);
  }
  sim_time_ps end_exact = 0;
  for (int i = 0; i < N; i++) end_exact = MAX(end_exact, exact[i]);
  static const sim_time_ps quanta[] = {1 * SIM_PS_PER_US, 5 * SIM_PS_PER_US};
  for (size_t k = 0; k < G_N_ELEMENTS(quanta); k++) {
    net *n;
    sim_time_ps *a1 = run_q(t, NET_TIER_FLOW, spec, N, FALSE, &n, quanta[k]);
    lmm_stats st;
    net_get_solver_stats(n, &st);
    g_assert_cmpuint(st.solves, <, net_flow_events(n)); /* changes were batched */
    net_free(n);
    sim_time_ps *a2 = run_q(t, NET_TIER_FLOW, spec, N, FALSE, NULL, quanta[k]);
    sim_time_ps *af = run_q(t, NET_TIER_FLOW, spec, N, TRUE, NULL, quanta[k]);
    sim_time_ps end = 0;
    for (int i = 0; i < N; i++) {
      g_assert_cmpint(a1[i], ==, a2[i]);
      g_assert_cmpint(a1[i], ==, af[i]);
      g_assert_cmpint(a1[i], >=, ta[i]);
      end = MAX(end, a1[i]);
    }
    g_test_message("q = %" G_GINT64_FORMAT " ps: completion %" G_GINT64_FORMAT " ps, exact %" G_GINT64_FORMAT " ps",
                   quanta[k], end, end_exact);
    g_assert_cmpfloat(fabs((double)(end - end_exact)), <=, 0.01 * (double)end_exact);
    g_free(a1);
    g_free(a2);
    g_free(af);
  }
  g_free(exact);
  g_free(ta);
  topo_free(t);
}

/* All-to-all on the 8-port switch: every rank sends S to each of the 7
 * others at once (56 flows).  Each up link and each down link carries 7
 * flows, all of them bottlenecked at 48/7 GB/s, so every flow ends at
 * SW_LAT + ceil(7 * S * 10^12 / 48e9): the per-port bound (7 S bytes
 * through one 48 GB/s port).  S = 1000000: 7 * 10^18 / 48e9 = 145833333.3
 * -> 145833334 ps.  Every endpoint link counted 7 S bytes. */
static void test_all_to_all_switch(void) {
  topo *t = load(switch8);
  const uint64_t s = 1000000;
  xfer_spec spec[56];
  int k = 0;
  for (int a = 0; a < 8; a++)
    for (int b = 0; b < 8; b++)
      if (a != b) spec[k++] = (xfer_spec){a, b, s, 0};
  net *n;
  sim_time_ps *tb = run(t, NET_TIER_FLOW, spec, 56, FALSE, &n);
  sim_time_ps want = SW_LAT + ceil_div(7 * s * UINT64_C(1000000000000), SW_BW);
  g_assert_cmpint(want, ==, SW_LAT + 145833334);
  for (int i = 0; i < 56; i++) g_assert_cmpint(tb[i], ==, want);
  for (uint32_t l = 0; l < topo_n_links(t); l++) g_assert_cmpuint(net_link_bytes(n, l), ==, 7 * s);
  net_free(n);
  g_free(tb);
  topo_free(t);
}

/* Neighbor exchange on a 4x4 torus (axis 0 fastest: rank = x + 4 y): every
 * rank sends to its four neighbors at once.  Each directed link joins one
 * pair of neighbors, so each carries exactly one flow (checked through the
 * byte counters and the 1-link routes): no contention, so tier B equals
 * tier A, 1 us + round(S * 10^12 / 56e9). */
static void test_torus_neighbors(void) {
  topo *t = load("schema_version: 1\n"
                 "dims:\n"
                 "  - {name: ici, kind: torus2d, shape: [4, 4], bandwidth: 56GB/s, latency: 1us}\n");
  const uint64_t s = 2000003;
  xfer_spec spec[64];
  int k = 0;
  for (int r = 0; r < 16; r++) {
    int x = r % 4, y = r / 4;
    int nb[4] = {(x + 1) % 4 + 4 * y, (x + 3) % 4 + 4 * y, x + 4 * ((y + 1) % 4), x + 4 * ((y + 3) % 4)};
    for (int j = 0; j < 4; j++) {
      uint32_t nl;
      topo_route(t, r, nb[j], &nl);
      g_assert_cmpuint(nl, ==, 1);
      spec[k++] = (xfer_spec){r, nb[j], s, 0};
    }
  }
  net *n;
  sim_time_ps *tb = run(t, NET_TIER_FLOW, spec, 64, FALSE, &n);
  sim_time_ps *ta = run(t, NET_TIER_ANALYTICAL, spec, 64, FALSE, NULL);
  sim_time_ps want = SIM_PS_PER_US + xfer_round(s, UINT64_C(56000000000));
  uint64_t used = 0;
  for (uint32_t l = 0; l < topo_n_links(t); l++) {
    uint64_t b = net_link_bytes(n, l);
    g_assert_true(b == 0 || b == s); /* at most one flow per link */
    used += b != 0;
  }
  g_assert_cmpuint(used, ==, 64);
  for (int i = 0; i < 64; i++) {
    g_assert_cmpint(ta[i], ==, want);
    g_assert_cmpint(tb[i], ==, want);
  }
  net_free(n);
  g_free(ta);
  g_free(tb);
  topo_free(t);
}

/* Zero bytes pay the latency only; src == dst completes at the issue time
 * through the queue (never inside net_send); both tiers. */
static void test_zero_and_self(void) {
  topo *t = load(switch8);
  xfer_spec spec[3] = {{1, 2, 0, 100}, {3, 3, 4096, 200}, {4, 4, 0, 300}};
  for (int tier = 0; tier < 2; tier++) {
    net *n;
    sim_time_ps *tt = run(t, (net_tier)tier, spec, 3, FALSE, &n);
    g_assert_cmpint(tt[0], ==, 100 + SW_LAT);
    g_assert_cmpint(tt[1], ==, 200);
    g_assert_cmpint(tt[2], ==, 300);
    /* A self transfer crosses no link. */
    uint64_t total = 0;
    for (uint32_t l = 0; l < topo_n_links(t); l++) total += net_link_bytes(n, l);
    g_assert_cmpuint(total, ==, 0);
    g_assert_cmpint(net_get_tier(n), ==, tier);
    g_assert_true(net_get_topo(n) == t);
    net_free(n);
    g_free(tt);
  }
  topo_free(t);
}

/* Random contended traffic on a 2-level fat tree (8 leaves of 4, 2:1
 * oversubscribed): the incremental and the full re-solve give the same
 * completion times to within 1 ps per rate change.  In both tiers no
 * transfer ends before its own alpha-beta time (route latency + S / B_min
 * after its issue), and no link carries its load faster than its
 * bandwidth: the last transfer through link l ends no earlier than the
 * first issue through l + (bytes through l) / bw(l).  (Tier A used to
 * ignore other traffic, so every tier B time was >= tier A's; with link
 * queues tier A serves in FIFO order and a small transfer queued behind
 * large ones can end after its max-min time, so that comparison is gone.) */
static void test_random_fat_tree(void) {
  enum { N = RANDOM_FT_N };
  xfer_spec spec[N];
  topo *t = random_fat_tree(spec);
  net *n;
  sim_time_ps *ti = run(t, NET_TIER_FLOW, spec, N, FALSE, &n);
  lmm_stats st;
  net_get_solver_stats(n, &st);
  g_assert_cmpuint(net_flow_events(n), >, 0);
  g_assert_cmpuint(st.solves, >, 0);
  net_free(n);
  sim_time_ps *tf = run(t, NET_TIER_FLOW, spec, N, TRUE, NULL);
  sim_time_ps *ta = run(t, NET_TIER_ANALYTICAL, spec, N, FALSE, NULL);
  int slower = 0;
  uint32_t nl_all = topo_n_links(t);
  sim_time_ps *first = g_new(sim_time_ps, nl_all), *last_i = g_new0(sim_time_ps, nl_all),
              *last_a = g_new0(sim_time_ps, nl_all);
  uint64_t *load = g_new0(uint64_t, nl_all);
  for (uint32_t l = 0; l < nl_all; l++) first[l] = SIM_TIME_MAX;
  for (int i = 0; i < N; i++) {
    sim_time_ps d = ti[i] - tf[i];
    g_assert_cmpint(d, <=, 2);
    g_assert_cmpint(d, >=, -2);
    sim_time_ps lat;
    wisp_bw_Bps bw;
    topo_route_cost(t, spec[i].src, spec[i].dst, &lat, &bw);
    sim_time_ps alone = spec[i].at + lat + wisp_transfer_ps(spec[i].bytes, bw);
    g_assert_cmpint(ti[i], >=, alone);
    g_assert_cmpint(ta[i], >=, alone);
    slower += ti[i] > alone;
    uint32_t nl;
    const uint32_t *route = topo_route(t, spec[i].src, spec[i].dst, &nl);
    for (uint32_t k = 0; k < nl && spec[i].bytes > 0; k++) {
      uint32_t l = route[k];
      first[l] = MIN(first[l], spec[i].at);
      load[l] += spec[i].bytes;
      last_i[l] = MAX(last_i[l], ti[i]);
      last_a[l] = MAX(last_a[l], ta[i]);
    }
  }
  g_assert_cmpint(slower, >, 0); /* the instance does have contention */
  sim_time_ps last_ti = 0, last_ta = 0;
  double mean_ti = 0, mean_ta = 0;
  for (int i = 0; i < N; i++) {
    last_ti = MAX(last_ti, ti[i]);
    last_ta = MAX(last_ta, ta[i]);
    mean_ti += (double)(ti[i] - spec[i].at) / N;
    mean_ta += (double)(ta[i] - spec[i].at) / N;
  }
  g_test_message("random fat-tree traffic, %d transfers: last completion %.3f us (flow) / %.3f us (analytical), "
                 "mean transfer time %.3f / %.3f us", N, (double)last_ti / 1e6, (double)last_ta / 1e6, mean_ti / 1e6,
                 mean_ta / 1e6);
  for (uint32_t l = 0; l < nl_all; l++) {
    if (load[l] == 0) continue;
    sim_time_ps bound = first[l] + wisp_transfer_ps(load[l], topo_get_link(t, l)->bw);
    g_assert_cmpint(last_i[l], >=, bound);
    g_assert_cmpint(last_a[l], >=, bound);
  }
  g_free(first);
  g_free(last_i);
  g_free(last_a);
  g_free(load);
  g_free(ti);
  g_free(tf);
  g_free(ta);
  topo_free(t);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/net/no_contention_equal", test_no_contention_equal);
  g_test_add_func("/net/multi_tier_no_contention", test_multi_tier_no_contention);
  g_test_add_func("/net/incast", test_incast);
  g_test_add_func("/net/staggered", test_staggered);
  g_test_add_func("/net/flow_quantum", test_flow_quantum);
  g_test_add_func("/net/approx_batch", test_approx_batch);
  g_test_add_func("/net/approx_no_contention", test_approx_no_contention);
  g_test_add_func("/net/approx_random", test_approx_random);
  g_test_add_func("/net/all_to_all_switch", test_all_to_all_switch);
  g_test_add_func("/net/torus_neighbors", test_torus_neighbors);
  g_test_add_func("/net/zero_and_self", test_zero_and_self);
  g_test_add_func("/net/random_fat_tree", test_random_fat_tree);
  return g_test_run();
}
