/* test_topo_fabric.c: shared fabrics (`fabric: NAME`) and stream
 * bandwidths (`stream_bandwidth:`) in topologies (doc/topology.md,
 * "Shared fabrics"), and what both network tiers make of them.
 *
 * The fabric under test, 16 endpoints, innermost first:
 *   pair: fully_connected 2, 200 GB/s, 100 ns (a die-to-die link);
 *   node: switch 4, port 100 GB/s, one stream 80 GB/s, 250 ns, fabric f;
 *   pod:  switch 2, lane 100 GB/s, one stream 60 GB/s, 500 ns, fabric f.
 * Endpoint e has coordinates (e % 2, (e / 2) % 4, e / 8).  Level 0 (node)
 * has one switch per 2 x 4 = 8 endpoints (2 switches), level 1 (pod) one
 * per 16 (1 switch).  Each level builds 2 links per endpoint (port or lane,
 * up and down): 2 x 16 x 2 = 64, plus the pairs' 8 groups x 2 = 16 links:
 * 80 links, 16 + 2 + 1 = 19 nodes.
 * Every expected value below is computed from these numbers. */
#include "config.h"

#include <string.h>

#include "net/net.h"
#include "simcore/sim.h"
#include "topologies/topo.h"
#include "topologies/topo_variant.h"

#define NS SIM_PS_PER_NS
#define GB UINT64_C(1000000000)

static const char FABRIC[] =
  "schema_version: 1\n"
  "dims:\n"
  "  - {name: pair, kind: fully_connected, size: 2, bandwidth: 200GB/s, latency: 100ns}\n"
  "  - {name: node, kind: switch, size: 4, bandwidth: 100GB/s, stream_bandwidth: 80GB/s, latency: 250ns,"
  " fabric: f}\n"
  "  - {name: pod, kind: switch, size: 2, bandwidth: 100GB/s, stream_bandwidth: 60GB/s, latency: 500ns, fabric: f}\n";

static topo *load(const char *yaml)
{
  GError *err = NULL;
  topo *t = topo_load_string(yaml, "fabric.yaml", &err);
  g_assert_no_error(err);
  return t;
}

/* Links, nodes and the route of every pair class. */
static void test_structure(void)
{
  topo *t = load(FABRIC);
  g_assert_cmpuint(topo_n_links(t), ==, 80);
  g_assert_cmpuint(topo_n_nodes(t), ==, 19);
  struct {
    int a, b;
    uint32_t hops;
    sim_time_ps lat;
    wisp_bw_Bps bw;
  } want[] = {
    /* same pair: the pair link, 100 ns, 200 GB/s */
    { 0, 1, 1, 100 * NS, 200 * GB },
    /* other pair, same node switch: port up and down, 2 x 250 ns, one
     * stream 80 GB/s; also when the pair coordinate differs (1 -> 2): the
     * fabric reaches every endpoint under its switch directly */
    { 0, 2, 2, 500 * NS, 80 * GB },
    { 1, 2, 2, 500 * NS, 80 * GB },
    { 1, 6, 2, 500 * NS, 80 * GB },
    /* other pod switch half: port, lane up, lane down, port:
     * 2 x 250 + 2 x 500 = 1500 ns, one stream min(80, 60) = 60 GB/s */
    { 0, 8, 4, 1500 * NS, 60 * GB },
    { 1, 14, 4, 1500 * NS, 60 * GB },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
    uint32_t n = 0;
    topo_route(t, want[i].a, want[i].b, &n);
    sim_time_ps lat = 0;
    wisp_bw_Bps bw = 0;
    topo_route_cost(t, want[i].a, want[i].b, &lat, &bw);
    g_test_message("route %d -> %d: %u hops, %" G_GINT64_FORMAT " ps, %" G_GUINT64_FORMAT " B/s (expected %u, %"
                   G_GINT64_FORMAT ", %" G_GUINT64_FORMAT ")", want[i].a, want[i].b, n, lat, bw, want[i].hops,
                   want[i].lat, want[i].bw);
    g_assert_cmpuint(n, ==, want[i].hops);
    g_assert_cmpint(lat, ==, want[i].lat);
    g_assert_cmpuint(bw, ==, want[i].bw);
  }
  /* Each endpoint has its own port and lanes: the routes of 0 -> 8 and
   * 2 -> 10 (both cross the pod level) share no link. */
  uint32_t na = 0, nb = 0;
  const uint32_t *ra = topo_route(t, 0, 8, &na);
  uint32_t *copy = g_memdup2(ra, na * sizeof *ra);
  const uint32_t *rb = topo_route(t, 2, 10, &nb);
  for (uint32_t i = 0; i < na; i++)
    for (uint32_t j = 0; j < nb; j++)
      g_assert_cmpuint(copy[i], !=, rb[j]);
  g_free(copy);
  topo_free(t);
}

typedef struct {
  sim_time_ps end[4];
  int done;
} runs;

static void on_done(sim_engine *sim, void *ctx, uint64_t cookie)
{
  runs *r = ctx;
  r->end[cookie] = sim_now(sim);
  r->done++;
}

/* Sends (src[i], dst[i], bytes) at time 0 on tier `tier`; fills end[]. */
static void send_all(const topo *t, net_tier tier, const int *src, const int *dst, int n, uint64_t bytes, runs *r)
{
  sim_engine *sim = sim_engine_new(FALSE);
  net *nw = net_new(sim, t, tier);
  memset(r, 0, sizeof *r);
  for (int i = 0; i < n; i++)
    net_send(nw, src[i], dst[i], bytes, on_done, r, (uint64_t)i);
  sim_run(sim, SIM_TIME_MAX);
  g_assert_cmpint(r->done, ==, n);
  net_free(nw);
  sim_engine_free(sim);
}

/* One stream alone gets its stream bandwidth on both tiers, to the
 * picosecond (the tiers' contract without contention): 0 -> 2, 1 GB:
 * 500 ns + 1e9 / 80e9 s = 0.5 + 12,500 us.  Two streams from one port
 * (0 -> 2 and 0 -> 4, 1 GB each) share the port's 100 GB/s: each alone
 * would take 12.5 ms, together the port needs 2e9 / 100e9 s = 20 ms, so
 * the last ends at 500 ns + 20 ms on both tiers (tier B: 50 GB/s each,
 * both at 20 ms; tier A: the port serves them back to back, the first at
 * max(10 ms, its own 12.5 ms), the second at 20 ms). */
static void test_streams(void)
{
  topo *t = load(FABRIC);
  static const net_tier tiers[] = { NET_TIER_ANALYTICAL, NET_TIER_FLOW };
  for (size_t k = 0; k < G_N_ELEMENTS(tiers); k++) {
    runs r;
    int s1[] = { 0 }, d1[] = { 2 };
    send_all(t, tiers[k], s1, d1, 1, GB, &r);
    sim_time_ps one = 500 * NS + wisp_transfer_ps(GB, 80 * GB);
    g_test_message("%s: one stream %.3f us (expected %.3f)", net_tier_name(tiers[k]), r.end[0] / 1e6, one / 1e6);
    g_assert_cmpint(r.end[0], ==, one);
    int s2[] = { 0, 0 }, d2[] = { 2, 4 };
    send_all(t, tiers[k], s2, d2, 2, GB, &r);
    sim_time_ps two = 500 * NS + wisp_transfer_ps(2 * GB, 100 * GB);
    g_test_message("%s: two streams through one port: %.3f and %.3f us (expected the last at %.3f)",
                   net_tier_name(tiers[k]), r.end[0] / 1e6, r.end[1] / 1e6, two / 1e6);
    g_assert_cmpint(MAX(r.end[0], r.end[1]), ==, two);
    g_assert_cmpint(MIN(r.end[0], r.end[1]), >=, one);
  }
  topo_free(t);
}

/* Doubling a fabric tier's bandwidth doubles its stream bandwidth too
 * (the same port, faster): node 200 GB/s, one stream 160 GB/s. */
static void test_variant(void)
{
  topo *t = load(FABRIC);
  GError *err = NULL;
  topo_variant *v = topo_variant_new(t);
  g_assert_true(topo_variant_scale_bw(v, 1, 2.0, &err));
  g_assert_no_error(err);
  topo *u = topo_variant_build(v, &err);
  g_assert_no_error(err);
  sim_time_ps lat = 0;
  wisp_bw_Bps bw = 0;
  topo_route_cost(u, 0, 2, &lat, &bw);
  g_assert_cmpuint(bw, ==, 160 * GB);
  g_assert_cmpint(lat, ==, 500 * NS);
  g_assert_cmpuint(topo_n_links(u), ==, 80);
  topo_route_cost(u, 0, 8, &lat, &bw);
  g_assert_cmpuint(bw, ==, 60 * GB); /* the pod lane's stream is unchanged */
  topo_free(u);
  topo_variant_free(v);
  topo_free(t);
}

/* Configuration errors name the file, line and what to do. */
static void test_errors(void)
{
  struct {
    const char *yaml, *want;
  } cases[] = {
    { "schema_version: 1\ndims:\n  - {name: a, kind: ring, size: 4, bandwidth: 1GB/s, latency: 1ns, fabric: f}\n",
      "fabric.yaml:3: 'fabric' in 'dims[0]' applies only to kind switch, not ring" },
    { "schema_version: 1\ndims:\n"
      "  - {name: a, kind: switch, size: 2, bandwidth: 1GB/s, latency: 1ns, fabric: f}\n"
      "  - {name: b, kind: switch, size: 2, bandwidth: 1GB/s, latency: 1ns}\n"
      "  - {name: c, kind: switch, size: 2, bandwidth: 1GB/s, latency: 1ns, fabric: f}\n",
      "the dimensions of fabric 'f' must be consecutive, but dims[1] ('b') is not" },
    { "schema_version: 1\ndims:\n"
      "  - {name: a, kind: switch, size: 2, bandwidth: 1GB/s, latency: 1ns, fabric: f}\n"
      "  - {name: b, kind: switch, size: 2, bandwidth: 1GB/s, latency: 1ns, fabric: g}\n",
      "dims[1] names fabric 'g' but dims[0] already names 'f'" },
    { "schema_version: 1\ndims:\n"
      "  - {name: a, kind: switch, size: 2, bandwidth: 1GB/s, stream_bandwidth: 2GB/s, latency: 1ns}\n",
      "'stream_bandwidth' in 'dims[0]' is above 'bandwidth'" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    GError *err = NULL;
    topo *t = topo_load_string(cases[i].yaml, "fabric.yaml", &err);
    g_assert_null(t);
    g_assert_nonnull(err);
    g_test_message("error: %s (expected to contain: %s)", err->message, cases[i].want);
    g_assert_nonnull(strstr(err->message, cases[i].want));
    g_error_free(err);
  }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/topo_fabric/structure", test_structure);
  g_test_add_func("/topo_fabric/streams", test_streams);
  g_test_add_func("/topo_fabric/variant", test_variant);
  g_test_add_func("/topo_fabric/errors", test_errors);
  return g_test_run();
}
