/* test_topo.c: the topology layer (topologies/topo.h).
 *
 * Every expected value is a closed form or independent arithmetic written
 * next to its check: link counts per kind, ring/torus distances, unit
 * conversions, ASTRA-sim's GiB/s reading, cut sizes counted from the link
 * list.  Example configs are read from examples/networks through
 * G_TEST_SRCDIR (set by `make check`). */
#include "config.h"
#include "topologies/topo.h"

#include <glib/gstdio.h>
#include <string.h>

/* ---- helpers ---- */

static topo *load_ok(const char *yaml)
{
  GError *e = NULL;
  topo *t = topo_load_string(yaml, "test.yaml", &e);
  if (t == NULL)
    g_test_message("unexpected error: %s", e->message);
  g_assert_no_error(e);
  g_assert_nonnull(t);
  return t;
}

/* Loads yaml expecting an error whose message contains every needle. */
static void load_fails(const char *yaml, int code, const char *needle1, const char *needle2)
{
  GError *e = NULL;
  topo *t = topo_load_string(yaml, "bad.yaml", &e);
  g_assert_null(t);
  g_assert_error(e, WISP_ERROR, code);
  g_test_message("error (as expected): %s", e->message);
  g_assert_true(g_str_has_prefix(e->message, "bad.yaml"));
  if (needle1)
    g_assert_nonnull(strstr(e->message, needle1));
  if (needle2)
    g_assert_nonnull(strstr(e->message, needle2));
  g_error_free(e);
}

static topo *one_dim(const char *kind_and_params)
{
  char *y = g_strdup_printf("schema_version: 1\ndims:\n  - {name: d, kind: %s, bandwidth: 100GB/s, latency: 1us}\n",
                            kind_and_params);
  topo *t = load_ok(y);
  g_free(y);
  return t;
}

/* No two links join the same ordered node pair (no doubled links). */
static void assert_no_parallel_links(const topo *t)
{
  GHashTable *seen = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  for (uint32_t i = 0; i < topo_n_links(t); i++) {
    const topo_link *l = topo_get_link(t, i);
    gint64 *k = g_new(gint64, 1);
    *k = ((gint64)l->src << 32) | l->dst;
    g_assert_false(g_hash_table_contains(seen, k));
    g_hash_table_add(seen, k);
  }
  g_hash_table_destroy(seen);
}

/* A route is a connected walk from src's endpoint to dst's endpoint. */
static void assert_route_valid(const topo *t, int a, int b)
{
  uint32_t n;
  const uint32_t *r = topo_route(t, a, b, &n);
  uint32_t at = topo_rank_endpoint(t, a);
  for (uint32_t i = 0; i < n; i++) {
    const topo_link *l = topo_get_link(t, r[i]);
    g_assert_cmpuint(l->src, ==, at);
    at = l->dst;
    /* intermediate hops never stop at the destination early */
    if (i + 1 < n)
      g_assert_cmpuint(at, !=, topo_rank_endpoint(t, b));
  }
  g_assert_cmpuint(at, ==, topo_rank_endpoint(t, b));
  if (a == b)
    g_assert_cmpuint(n, ==, 0);
}

static uint32_t hops(const topo *t, int a, int b)
{
  uint32_t n;
  topo_route(t, a, b, &n);
  return n;
}

static int ring_dist(int a, int b, int k)
{
  int f = ((b - a) % k + k) % k;
  return MIN(f, k - f);
}

/* ---- units ---- */

static void test_units(void)
{
  topo *t = load_ok("schema_version: 1\n"
                    "dims:\n"
                    "  - {name: a, kind: ring, size: 3, bandwidth: 400Gbps, latency: 500ns}\n"
                    "  - {name: b, kind: ring, size: 3, bandwidth: 50GB/s, latency: 2.1us}\n"
                    "  - {name: c, kind: ring, size: 3, bandwidth: 1.8TB/s, latency: 250ps}\n"
                    "  - {name: d, kind: ring, size: 3, bandwidth: 1GiB/s, latency: 3ms}\n");
  /* Dimension d's links are tier d; the first link of each tier carries it. */
  wisp_bw_Bps want_bw[] = {400000000000ull / 8, /* 400 Gb/s = 50e9 B/s */
                           50000000000ull, 1800000000000ull, 1073741824ull /* 2^30 */};
  sim_time_ps want_lat[] = {500 * SIM_PS_PER_NS, 2100 * SIM_PS_PER_NS, 250, 3 * INT64_C(1000000000)};
  gboolean seen[4] = {FALSE};
  for (uint32_t i = 0; i < topo_n_links(t); i++) {
    const topo_link *l = topo_get_link(t, i);
    g_assert_cmpuint(l->tier, <, 4);
    g_assert_cmpuint(l->bw, ==, want_bw[l->tier]);
    g_assert_cmpint(l->latency, ==, want_lat[l->tier]);
    seen[l->tier] = TRUE;
  }
  for (int d = 0; d < 4; d++)
    g_assert_true(seen[d]);
  g_assert_cmpstr(cfg_get_or_default(topo_config(t), "model"), ==, "analytical");
  topo_free(t);
}

/* ---- link counts from closed forms ---- */

typedef struct {
  const char *spec;
  uint32_t endpoints, switches;
  uint64_t links;
  const char *why;
} count_case;

static void test_link_counts(void)
{
  static const count_case cases[] = {
    {"ring, size: 5", 5, 0, 10, "bidirectional ring: n links per direction, 2n"},
    {"ring, size: 2", 2, 0, 2, "2-ring: one link each way, not doubled"},
    {"ring, size: 1", 1, 0, 0, "a single member has no links"},
    {"ring_uni, size: 5", 5, 0, 5, "unidirectional ring: n"},
    {"ring_uni, size: 2", 2, 0, 2, "unidirectional 2-ring: 0->1 and 1->0"},
    {"fully_connected, size: 6", 6, 0, 30, "n(n-1) = 6*5"},
    {"fully_connected, size: 1", 1, 0, 0, "n(n-1) = 0"},
    {"switch, size: 6", 6, 1, 12, "one switch, an up- and a down-link per endpoint: 2n"},
    {"switch, size: 1", 1, 0, 0, "a size-1 switch dimension builds nothing"},
    {"torus2d, shape: [3, 5]", 15, 0, 60, "a*b*4 for a,b > 2"},
    {"torus2d, shape: [6, 7]", 42, 0, 168, "6*7*4, sizes not powers of two"},
    {"torus2d, shape: [2, 4]", 8, 0, 24, "axis of 2: 4 lines*2 links; axis of 4: 2 lines*8 links"},
    {"torus2d, shape: [2, 2]", 4, 0, 8, "2 lines*2 links per axis, 2 axes"},
    {"torus2d, shape: [1, 5]", 5, 0, 10, "a 5-ring"},
    {"torus3d, shape: [3, 3, 3]", 27, 0, 162, "a*b*c*6 for all sizes > 2"},
    {"torus3d, shape: [2, 3, 1]", 6, 0, 18, "axis of 2: 3*2; axis of 3: 2*6; axis of 1: 0"},
    {"fat_tree, size: 8, leaves: 2, spines: 3", 8, 5, 28, "2n host links + 2*L*S leaf-spine links = 16+12"},
    {"fat_tree, size: 8, leaves: 1", 8, 1, 16, "one leaf: a switch, 2n"},
    {"fat_tree, size: 12, leaves: 3", 12, 7, 48, "spines default to hosts per leaf (4): 24 + 2*3*4"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    const count_case *c = &cases[i];
    g_test_message("%s: %s", c->spec, c->why);
    topo *t = one_dim(c->spec);
    g_assert_cmpuint(topo_n_endpoints(t), ==, c->endpoints);
    g_assert_cmpuint(topo_n_nodes(t) - topo_n_endpoints(t), ==, c->switches);
    g_assert_cmpuint(topo_n_links(t), ==, c->links);
    g_assert_cmpint(topo_n_ranks(t), ==, (int)c->endpoints);
    assert_no_parallel_links(t);
    for (int a = 0; a < topo_n_ranks(t); a++)
      for (int b = 0; b < topo_n_ranks(t); b++)
        assert_route_valid(t, a, b);
    topo_free(t);
  }
}

static void test_multi_dim_counts(void)
{
  /* [ring 4] x [fully_connected 3] x [switch 2]: 24 endpoints.
   * dim 0: 24/4 = 6 rings of 8 links = 48; dim 1: 8 groups of 3*2 = 48;
   * dim 2: 12 switches with 4 links each = 48. */
  topo *t = load_ok("schema_version: 1\n"
                    "dims:\n"
                    "  - {name: r, kind: ring, size: 4, bandwidth: 10GB/s, latency: 1us}\n"
                    "  - {name: f, kind: fully_connected, size: 3, bandwidth: 20GB/s, latency: 1us}\n"
                    "  - {name: s, kind: switch, size: 2, bandwidth: 30GB/s, latency: 1us}\n");
  g_assert_cmpuint(topo_n_endpoints(t), ==, 24);
  g_assert_cmpuint(topo_n_nodes(t), ==, 24 + 12);
  g_assert_cmpuint(topo_n_links(t), ==, 48 + 48 + 48);
  uint32_t per_tier[3] = {0};
  for (uint32_t i = 0; i < topo_n_links(t); i++) {
    const topo_link *l = topo_get_link(t, i);
    per_tier[l->tier]++;
    /* Tier d links join endpoints (or an endpoint and a switch) that
     * differ only in coordinate d. */
    if (topo_node_is_endpoint(t, l->src) && topo_node_is_endpoint(t, l->dst))
      for (int d = 0; d < 3; d++)
        if (d != l->tier)
          g_assert_cmpint(topo_rank_coord(t, (int)l->src, d), ==, topo_rank_coord(t, (int)l->dst, d));
  }
  g_assert_cmpuint(per_tier[0], ==, 48);
  g_assert_cmpuint(per_tier[1], ==, 48);
  g_assert_cmpuint(per_tier[2], ==, 48);
  /* Coordinates: dimension 0 fastest, coord[d] = (id / prod_{k<d} n_k) mod n_d. */
  for (int r = 0; r < 24; r++) {
    g_assert_cmpint(topo_rank_coord(t, r, 0), ==, r % 4);
    g_assert_cmpint(topo_rank_coord(t, r, 1), ==, (r / 4) % 3);
    g_assert_cmpint(topo_rank_coord(t, r, 2), ==, r / 12);
  }
  g_assert_cmpint(topo_n_dims(t), ==, 3);
  g_assert_cmpstr(topo_dim_name(t, 1), ==, "f");
  g_assert_cmpint(topo_dim_kind(t, 2), ==, TOPO_KIND_SWITCH);
  g_assert_cmpint(topo_dim_size(t, 0), ==, 4);
  /* Every pair's hop count: ring distance + (1 if dim 1 differs) + (2 if dim 2 differs). */
  for (int a = 0; a < 24; a++)
    for (int b = 0; b < 24; b++) {
      assert_route_valid(t, a, b);
      uint32_t want = (uint32_t)ring_dist(a % 4, b % 4, 4) + ((a / 4) % 3 != (b / 4) % 3) + 2u * (a / 12 != b / 12);
      g_assert_cmpuint(hops(t, a, b), ==, want);
    }
  topo_free(t);
}

/* ---- routes ---- */

static void test_ring_routes(void)
{
  topo *t = one_dim("ring, size: 8");
  /* Shorter direction: 0->3 forward 3 hops, 0->5 backward 3 hops. */
  g_assert_cmpuint(hops(t, 0, 3), ==, 3);
  g_assert_cmpuint(hops(t, 0, 5), ==, 3);
  uint32_t n;
  const uint32_t *r = topo_route(t, 0, 5, &n);
  g_assert_cmpuint(topo_get_link(t, r[0])->dst, ==, 7); /* first hop goes backwards */
  /* Tie (distance 4 both ways) goes in the positive direction. */
  r = topo_route(t, 0, 4, &n);
  g_assert_cmpuint(n, ==, 4);
  g_assert_cmpuint(topo_get_link(t, r[0])->dst, ==, 1);
  r = topo_route(t, 6, 2, &n);
  g_assert_cmpuint(topo_get_link(t, r[0])->dst, ==, 7);
  /* Cost: 3 hops at 1 us each, bottleneck 100 GB/s. */
  sim_time_ps lat;
  wisp_bw_Bps bw;
  topo_route_cost(t, 0, 5, &lat, &bw);
  g_assert_cmpint(lat, ==, 3 * SIM_PS_PER_US);
  g_assert_cmpuint(bw, ==, 100000000000ull);
  topo_route_cost(t, 2, 2, &lat, &bw);
  g_assert_cmpint(lat, ==, 0);
  g_assert_cmpuint(bw, ==, 0);
  /* Cached: the second call returns the same array. */
  const uint32_t *r1 = topo_route(t, 1, 6, &n);
  const uint32_t *r2 = topo_route(t, 1, 6, &n);
  g_assert_true(r1 == r2);
  for (int a = 0; a < 8; a++)
    for (int b = 0; b < 8; b++)
      g_assert_cmpuint(hops(t, a, b), ==, (uint32_t)ring_dist(a, b, 8));
  /* topo_print_route: a header line plus one line per link (3 for 0 -> 5). */
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  topo_print_route(t, 0, 5, f);
  fclose(f);
  int lines = 0;
  for (char *p = buf; *p; p++)
    lines += *p == '\n';
  g_assert_cmpint(lines, ==, 1 + 3);
  g_assert_nonnull(strstr(buf, "ep0 -> ep7"));
  free(buf);
  topo_free(t);

  t = one_dim("ring_uni, size: 8");
  g_assert_cmpuint(hops(t, 0, 7), ==, 7); /* one direction only: (7-0) mod 8 */
  g_assert_cmpuint(hops(t, 7, 0), ==, 1);
  topo_free(t);
}

static void test_torus_routes(void)
{
  /* 4x6 torus (local index = x + 4 y): distance = ring(x) + ring(y). */
  topo *t = one_dim("torus2d, shape: [4, 6]");
  for (int a = 0; a < 24; a++)
    for (int b = 0; b < 24; b++) {
      assert_route_valid(t, a, b);
      uint32_t want = (uint32_t)(ring_dist(a % 4, b % 4, 4) + ring_dist(a / 4, b / 4, 6));
      g_assert_cmpuint(hops(t, a, b), ==, want);
    }
  int shape[3];
  g_assert_cmpint(topo_dim_shape(t, 0, shape), ==, 2);
  g_assert_cmpint(shape[0], ==, 4);
  g_assert_cmpint(shape[1], ==, 6);
  g_assert_cmpint(topo_dim_size(t, 0), ==, 24);
  /* Wrap-around: (0,0) -> (3,0) is one hop over the wrap link. */
  g_assert_cmpuint(hops(t, 0, 3), ==, 1);
  /* (0,0) -> (0,5) = index 20: one hop over the y wrap. */
  g_assert_cmpuint(hops(t, 0, 20), ==, 1);
  topo_free(t);

  t = one_dim("torus3d, shape: [3, 5, 2]");
  for (int a = 0; a < 30; a++)
    for (int b = 0; b < 30; b++) {
      assert_route_valid(t, a, b);
      uint32_t want = (uint32_t)(ring_dist(a % 3, b % 3, 3) + ring_dist((a / 3) % 5, (b / 3) % 5, 5) +
                                 ring_dist(a / 15, b / 15, 2));
      g_assert_cmpuint(hops(t, a, b), ==, want);
    }
  topo_free(t);
}

static void test_fat_tree_routes(void)
{
  /* 8 hosts, 2 leaves of 4, 3 spines, oversubscription 2: leaf-spine link =
   * 4 * 100 GB/s / (2 * 3) = 66.666... GB/s, rounded to whole B/s. */
  topo *t = one_dim("fat_tree, size: 8, leaves: 2, spines: 3, oversubscription: 2");
  gboolean spine_used[3] = {FALSE};
  for (int a = 0; a < 8; a++)
    for (int b = 0; b < 8; b++) {
      if (a == b)
        continue;
      assert_route_valid(t, a, b);
      uint32_t n;
      const uint32_t *r = topo_route(t, a, b, &n);
      /* same leaf: host-leaf-host; else host-leaf-spine-leaf-host */
      g_assert_cmpuint(n, ==, a / 4 == b / 4 ? 2 : 4);
      if (n == 4) {
        const topo_link *up = topo_get_link(t, r[1]);
        g_assert_cmpuint(up->bw, ==, 66666666667ull);
        spine_used[up->dst - 8 - 2] = TRUE; /* spines follow the 8 hosts and 2 leaves */
      }
    }
  /* ECMP over 32 cross-leaf pairs reaches every spine. */
  for (int s = 0; s < 3; s++)
    g_assert_true(spine_used[s]);
  /* Bisection: min(4 hosts * 100 GB/s, 1 leaf * 3 spines * 66.67 GB/s) = 200 GB/s (+1 B/s of rounding). */
  g_assert_cmpuint(topo_bisection_bw(t), ==, 3 * 66666666667ull);
  topo_free(t);
}

/* ---- the 2-tier example ---- */

static char *example_path(const char *name)
{
  return g_test_build_filename(G_TEST_DIST, "examples", "networks", name, NULL);
}

static gboolean route_uses_tier(const topo *t, int a, int b, int tier)
{
  uint32_t n;
  const uint32_t *r = topo_route(t, a, b, &n);
  for (uint32_t i = 0; i < n; i++)
    if (topo_get_link(t, r[i])->tier == tier)
      return TRUE;
  return FALSE;
}

static void test_two_tier_example(void)
{
  char *path = example_path("two-tier-fc8-switch.yaml");
  GError *e = NULL;
  topo *t = topo_load(path, &e);
  g_assert_no_error(e);
  g_free(path);
  /* 8 per node x 4 nodes = 32 ranks; fc: 4 * 8*7 = 224 links; switch: 8 planes * 2*4 = 64. */
  g_assert_cmpint(topo_n_ranks(t), ==, 32);
  g_assert_cmpuint(topo_n_links(t), ==, 224 + 64);
  g_assert_cmpstr(cfg_get(topo_config(t), "model", NULL), ==, "flow");
  /* An 8-rank group inside node 1 (ranks 8..15) never touches scale-out. */
  for (int a = 8; a < 16; a++)
    for (int b = 8; b < 16; b++) {
      g_assert_false(route_uses_tier(t, a, b, 1));
      if (a != b)
        g_assert_cmpuint(hops(t, a, b), ==, 1);
    }
  /* A strided group {3, 11, 19, 27} (same local GPU, 4 nodes) uses it on
   * every pair: switch = 2 hops at 2 us, bottleneck 400 Gb/s = 50 GB/s. */
  int strided[] = {3, 11, 19, 27};
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) {
      if (i == j)
        continue;
      g_assert_true(route_uses_tier(t, strided[i], strided[j], 1));
      g_assert_false(route_uses_tier(t, strided[i], strided[j], 0));
      sim_time_ps lat;
      wisp_bw_Bps bw;
      topo_route_cost(t, strided[i], strided[j], &lat, &bw);
      g_assert_cmpint(lat, ==, 2 * 2 * SIM_PS_PER_US);
      g_assert_cmpuint(bw, ==, 50000000000ull);
    }
  /* Rank 3 -> rank 12 differs in both dims and pays both tiers (not
   * ASTRA-sim's first-differing-dimension rule): 250 ns + 2 * 2 us. */
  g_assert_true(route_uses_tier(t, 3, 12, 0));
  g_assert_true(route_uses_tier(t, 3, 12, 1));
  sim_time_ps lat;
  topo_route_cost(t, 3, 12, &lat, NULL);
  g_assert_cmpint(lat, ==, 250 * SIM_PS_PER_NS + 4 * SIM_PS_PER_US);
  /* Settings kept verbatim with their lines. */
  int line = 0;
  g_assert_cmpstr(cfg_get(topo_config(t), "collectives.all_gather", &line), ==, "ring,direct");
  g_assert_cmpint(line, >, 0);
  g_assert_cmpstr(cfg_get(topo_config(t), "collectives.chunks", NULL), ==, "4");
  g_assert_null(cfg_get(topo_config(t), "collectives.broadcast", NULL));
  topo_free(t);
}

static void test_cloudmatrix(void)
{
  char *path = example_path("cloudmatrix384.yaml");
  GError *e = NULL;
  topo *t = topo_load(path, &e);
  g_assert_no_error(e);
  g_free(path);
  /* rank = die: 2 dies x 8 NPUs x 48 nodes = 768 (384 NPUs). */
  g_assert_cmpuint(topo_n_endpoints(t), ==, 2 * 8 * 48);
  g_assert_cmpint(topo_n_ranks(t), ==, 768);
  g_assert_cmpint(topo_n_dims(t), ==, 4);
  g_assert_cmpstr(topo_dim_name(t, 0), ==, "d2d");
  g_assert_cmpstr(topo_dim_name(t, 2), ==, "inter_node");
  /* Table 1 per-pair alpha for pairs differing in one tier: d2d 0.2 us,
   * intra-node 0.7 us, inter-node 2.1 us; beta 210 / 170 / 150 GB/s. */
  sim_time_ps lat;
  wisp_bw_Bps bw;
  topo_route_cost(t, 0, 1, &lat, &bw);
  g_assert_cmpint(lat, ==, 200 * SIM_PS_PER_NS);
  g_assert_cmpuint(bw, ==, 210000000000ull);
  topo_route_cost(t, 0, 2, &lat, &bw);
  g_assert_cmpint(lat, ==, 700 * SIM_PS_PER_NS);
  g_assert_cmpuint(bw, ==, 170000000000ull);
  topo_route_cost(t, 0, 16, &lat, &bw);
  g_assert_cmpint(lat, ==, 2100 * SIM_PS_PER_NS);
  g_assert_cmpuint(bw, ==, 150000000000ull);
  topo_free(t);

  path = example_path("cloudmatrix384-x2.yaml");
  t = topo_load(path, &e);
  g_assert_no_error(e);
  g_free(path);
  g_assert_cmpuint(topo_n_endpoints(t), ==, 2 * 768);
  /* A die in supernode 0 to the same die in supernode 1: the RDMA plane,
   * 200 Gb/s = 25 GB/s, 2 x 2.5 us. */
  topo_route_cost(t, 0, 768, &lat, &bw);
  g_assert_cmpint(lat, ==, 5 * SIM_PS_PER_US);
  g_assert_cmpuint(bw, ==, 25000000000ull);
  topo_free(t);
}

static void test_all_examples_load(void)
{
  static const char *names[] = {"dgx-h100-8gpu.yaml", "nodes4-fat-tree-200g.yaml", "tpu-v6e-2x4.yaml",
                                "tpu-v6e-16x16.yaml", "cloudmatrix384.yaml", "cloudmatrix384-x2.yaml",
                                "two-tier-fc8-switch.yaml", "astra-fc4-switch2.yml", "irregular-graph.yaml"};
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    char *path = example_path(names[i]);
    GError *e = NULL;
    topo *t = topo_load(path, &e);
    g_assert_no_error(e);
    /* Printing is deterministic: two prints are byte-identical. */
    char *buf1 = NULL, *buf2 = NULL;
    size_t len1 = 0, len2 = 0;
    FILE *f = open_memstream(&buf1, &len1);
    topo_print(t, f);
    fclose(f);
    f = open_memstream(&buf2, &len2);
    topo_print(t, f);
    fclose(f);
    g_assert_cmpstr(buf1, ==, buf2);
    g_assert_nonnull(strstr(buf1, "links per tier"));
    free(buf1);
    free(buf2);
    topo_free(t);
    g_free(path);
  }
  /* The 16x16 torus: 16*16*4 links; every chip's farthest chip is 8+8 hops. */
  char *path = example_path("tpu-v6e-16x16.yaml");
  topo *t = topo_load(path, NULL);
  g_free(path);
  g_assert_cmpuint(topo_n_links(t), ==, 16 * 16 * 4);
  g_assert_cmpuint(hops(t, 0, 8 + 16 * 8), ==, 16);
  g_assert_cmpuint(hops(t, 0, 15 + 16 * 15), ==, 2); /* (15,15): one wrap hop per axis */
  topo_free(t);
}

/* ---- ASTRA-sim network.yml ---- */

static void test_astra(void)
{
  topo *t = load_ok("topology: [ FullyConnected, Switch ]\n"
                    "npus_count: [ 4, 2 ]\n"
                    "bandwidth: [ 50, 25.5 ]\n"
                    "latency: [ 500.5, 5000 ]\n");
  g_assert_cmpint(topo_n_ranks(t), ==, 8);
  g_assert_cmpint(topo_n_dims(t), ==, 2);
  g_assert_cmpint(topo_dim_kind(t, 0), ==, TOPO_KIND_FULLY_CONNECTED);
  g_assert_cmpint(topo_dim_kind(t, 1), ==, TOPO_KIND_SWITCH);
  sim_time_ps lat;
  wisp_bw_Bps bw;
  /* 50 "GB/s" read as GiB/s: 50 * 2^30 = 53687091200 B/s; 500.5 ns. */
  topo_route_cost(t, 0, 1, &lat, &bw);
  g_assert_cmpuint(bw, ==, 53687091200ull);
  g_assert_cmpint(lat, ==, 500500);
  /* Switch = 2 hops: latency paid twice; 25.5 * 2^30 = 27380416512 B/s. */
  topo_route_cost(t, 0, 4, &lat, &bw);
  g_assert_cmpuint(hops(t, 0, 4), ==, 2);
  g_assert_cmpint(lat, ==, 2 * 5000 * SIM_PS_PER_NS);
  g_assert_cmpuint(bw, ==, 27380416512ull);
  /* The normalised value is echoed by topo_print. */
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  topo_print(t, f);
  fclose(f);
  g_assert_nonnull(strstr(buf, "53687091200 B/s"));
  free(buf);
  topo_free(t);

  /* The layout of ASTRA-sim's shipped examples, trailing comments included:
   * Switch, 8 NPUs, 400 "GB/s" = 400 * 2^30 B/s, 936.25 ns per hop. */
  t = load_ok("topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ 400.0 ]  # GB/s\nlatency: [ 936.25 ]  # ns\n");
  topo_route_cost(t, 0, 7, &lat, &bw);
  g_assert_cmpuint(bw, ==, 400ull << 30);
  g_assert_cmpint(lat, ==, 2 * 936250);
  topo_free(t);

  /* Ring: bidirectional shortest distance; a bare scalar is a one-entry list. */
  t = load_ok("topology: Ring\nnpus_count: 6\nbandwidth: 100\nlatency: 10\n");
  g_assert_cmpuint(hops(t, 0, 4), ==, 2);
  g_assert_cmpuint(topo_n_links(t), ==, 12);
  topo_free(t);
}

/* ---- placement and settings ---- */

static void test_placement(void)
{
  topo *t = load_ok("schema_version: 1\n"
                    "dims:\n"
                    "  - {name: in, kind: fully_connected, size: 8, bandwidth: 900GB/s, latency: 250ns}\n"
                    "  - {name: out, kind: switch, size: 4, bandwidth: 400Gbps, latency: 2us}\n"
                    "placement: [0, 8, 16, 24]\n");
  g_assert_cmpint(topo_n_ranks(t), ==, 4);
  for (int r = 0; r < 4; r++) {
    g_assert_cmpuint(topo_rank_endpoint(t, r), ==, (uint32_t)(8 * r));
    g_assert_cmpint(topo_rank_coord(t, r, 0), ==, 0);
    g_assert_cmpint(topo_rank_coord(t, r, 1), ==, r);
  }
  /* ranks 0 and 1 are on different nodes: 2 scale-out hops. */
  g_assert_true(route_uses_tier(t, 0, 1, 1));
  g_assert_cmpuint(hops(t, 0, 1), ==, 2);
  topo_free(t);

  /* ranks < endpoints with contiguous placement (non-divisible domain). */
  t = load_ok("schema_version: 1\nranks: 6\n"
              "dims:\n  - {kind: switch, size: 4, bandwidth: 1GB/s, latency: 1us}\n"
              "  - {kind: switch, size: 2, bandwidth: 1GB/s, latency: 1us}\n");
  g_assert_cmpint(topo_n_ranks(t), ==, 6);
  g_assert_cmpint(topo_rank_coord(t, 5, 1), ==, 1);
  g_assert_cmpstr(topo_dim_name(t, 1), ==, "dim1");
  topo_free(t);
}

static void test_settings(void)
{
  topo *t = load_ok("schema_version: 1\n"
                    "dims: [{kind: ring, size: 4, bandwidth: 1GB/s, latency: 1us}]\n"
                    "collectives:\n"
                    "  all_reduce: ring\n"
                    "  all_gather: [ring, direct]\n"
                    "  chunks: 4\n"
                    "library:\n"
                    "  registration: {mode: roa, gap: 2.6s}\n");
  int line = 0;
  g_assert_cmpstr(cfg_get(topo_config(t), "collectives.all_reduce", &line), ==, "ring");
  g_assert_cmpint(line, ==, 4);
  g_assert_cmpstr(cfg_get(topo_config(t), "collectives.all_gather", &line), ==, "ring,direct");
  g_assert_cmpint(line, ==, 5);
  g_assert_cmpstr(cfg_get(topo_config(t), "collectives.chunks", NULL), ==, "4");
  g_assert_cmpstr(cfg_get(topo_config(t), "library.registration.mode", &line), ==, "roa");
  g_assert_cmpint(line, ==, 8);
  g_assert_cmpstr(cfg_get(topo_config(t), "library.registration.gap", NULL), ==, "2.6s");
  g_assert_cmpstr(topo_source(t), ==, "test.yaml");
  topo_free(t);
}

/* ---- explicit graphs ---- */

static void test_graph(void)
{
  char *path = example_path("irregular-graph.yaml");
  GError *e = NULL;
  topo *t = topo_load(path, &e);
  g_assert_no_error(e);
  g_free(path);
  /* 9 link entries, one simplex: 8*2 + 1 = 17 directed links. */
  g_assert_cmpuint(topo_n_links(t), ==, 17);
  g_assert_cmpuint(topo_n_endpoints(t), ==, 4);
  g_assert_cmpuint(topo_n_nodes(t), ==, 8);
  g_assert_cmpint(topo_n_dims(t), ==, 1);
  g_assert_cmpint(topo_dim_kind(t, 0), ==, TOPO_KIND_GRAPH);
  /* gpu0 -> gpu1 takes the simplex shortcut (1 hop); back it goes via swA. */
  g_assert_cmpuint(hops(t, 0, 1), ==, 1);
  g_assert_cmpuint(hops(t, 1, 0), ==, 2);
  /* gpu0 -> gpu2: gpu0, swA, swC|swD, swB, gpu2 = 4 hops. */
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 4; b++)
      assert_route_valid(t, a, b);
  g_assert_cmpuint(hops(t, 0, 2), ==, 4);
  /* Asymmetric link: gpu3 -> swB is 100 GB/s, swB -> gpu3 50 GB/s (bandwidth_ba). */
  wisp_bw_Bps bw;
  topo_route_cost(t, 3, 2, NULL, &bw); /* gpu3 -> swB -> gpu2, both 100 GB/s */
  g_assert_cmpuint(bw, ==, 100000000000ull);
  topo_route_cost(t, 2, 3, NULL, &bw); /* gpu2 -> swB -> gpu3, the second at 50 GB/s */
  g_assert_cmpuint(bw, ==, 50000000000ull);
  uint32_t n;
  const uint32_t *r = topo_route(t, 2, 3, &n);
  g_assert_cmpuint(topo_get_link(t, r[n - 1])->bw, ==, 50000000000ull);
  r = topo_route(t, 3, 2, &n);
  g_assert_cmpuint(topo_get_link(t, r[0])->bw, ==, 100000000000ull);
  /* The ECMP choice is stable across loads. */
  uint32_t first_route[4];
  r = topo_route(t, 0, 2, &n);
  memcpy(first_route, r, sizeof first_route);
  topo_free(t);
  path = example_path("irregular-graph.yaml");
  t = topo_load(path, NULL);
  g_free(path);
  r = topo_route(t, 0, 2, &n);
  g_assert_cmpmem(r, sizeof first_route, first_route, sizeof first_route);
  topo_free(t);

  /* Placement by endpoint name: rank 0 on gpu3, rank 1 on gpu0. */
  t = load_ok("schema_version: 1\ngraph:\n  nodes: [{name: g0, kind: endpoint}, {name: s, kind: switch}, "
              "{name: g1, kind: endpoint}]\n  links: [{a: g0, b: s, bandwidth: 1GB/s, latency: 1us}, "
              "{a: g1, b: s, bandwidth: 1GB/s, latency: 1us}]\nplacement: [g1, 0]\n");
  g_assert_cmpuint(topo_rank_endpoint(t, 0), ==, 1); /* endpoints in listed order: g0 = 0, g1 = 1 */
  g_assert_cmpuint(topo_rank_endpoint(t, 1), ==, 0);
  g_assert_cmpuint(topo_n_nodes(t), ==, 3);
  topo_free(t);
  load_fails("schema_version: 1\ngraph:\n  nodes: [{name: g0, kind: endpoint}, {name: s, kind: switch}]\n"
             "  links: [{a: g0, b: s, bandwidth: 1GB/s, latency: 1us}]\nplacement: [s]\n",
             WISP_ERROR_INVALID, "bad.yaml:5:", "'s', which is not an endpoint");

  /* ECMP spreads pairs over both equal-cost middle switches: 2 leaves x 8
   * hosts, 2 spines; over the 128 cross pairs both spines are used. */
  GString *y = g_string_new("schema_version: 1\ngraph:\n  nodes:\n");
  for (int i = 0; i < 16; i++)
    g_string_append_printf(y, "    - {name: h%d, kind: endpoint}\n", i);
  g_string_append(y, "    - {name: L0, kind: switch}\n    - {name: L1, kind: switch}\n"
                     "    - {name: S0, kind: switch}\n    - {name: S1, kind: switch}\n  links:\n");
  for (int i = 0; i < 16; i++)
    g_string_append_printf(y, "    - {a: h%d, b: L%d, bandwidth: 1GB/s, latency: 1us}\n", i, i / 8);
  for (int l = 0; l < 2; l++)
    for (int s = 0; s < 2; s++)
      g_string_append_printf(y, "    - {a: L%d, b: S%d, bandwidth: 1GB/s, latency: 1us}\n", l, s);
  t = load_ok(y->str);
  g_string_free(y, TRUE);
  int use[2] = {0, 0};
  for (int a = 0; a < 8; a++)
    for (int b = 8; b < 16; b++) {
      r = topo_route(t, a, b, &n);
      g_assert_cmpuint(n, ==, 4);
      uint32_t spine = topo_get_link(t, r[1])->dst;
      g_assert_true(spine == 18 || spine == 19); /* nodes: 16 hosts, L0, L1, S0, S1 */
      use[spine - 18]++;
    }
  g_assert_cmpint(use[0], >, 0);
  g_assert_cmpint(use[1], >, 0);
  g_assert_cmpint(use[0] + use[1], ==, 64);
  topo_free(t);
}

/* ---- bisection from the link list ---- */

/* Sum of bandwidths of links from endpoints whose coordinate `key` < half
 * to endpoints whose coordinate >= half (endpoint-to-endpoint links only). */
static wisp_bw_Bps count_cut(const topo *t, int (*side)(const topo *, uint32_t))
{
  wisp_bw_Bps s = 0;
  for (uint32_t i = 0; i < topo_n_links(t); i++) {
    const topo_link *l = topo_get_link(t, i);
    g_assert_true(topo_node_is_endpoint(t, l->src) && topo_node_is_endpoint(t, l->dst));
    if (side(t, l->src) == 0 && side(t, l->dst) == 1)
      s += l->bw;
  }
  return s;
}

static int side_outer(const topo *t, uint32_t ep)
{
  int o = topo_n_dims(t) - 1;
  return topo_rank_coord(t, (int)ep, o) >= topo_dim_size(t, o) / 2;
}

static int side_torus_y(const topo *t, uint32_t ep)
{
  return (int)(ep / 4) >= 3; /* 4x6 torus: largest axis is y (6) */
}

static void test_bisection(void)
{
  static const char *specs[] = {
    "dims: [{kind: ring, size: 7, bandwidth: 10GB/s, latency: 1us}]",
    "dims: [{kind: fully_connected, size: 5, bandwidth: 10GB/s, latency: 1us}]",
    "dims: [{kind: fully_connected, size: 4, bandwidth: 7GB/s, latency: 1us}, "
    "{kind: ring, size: 6, bandwidth: 10GB/s, latency: 1us}]",
    "dims: [{kind: ring, size: 3, bandwidth: 7GB/s, latency: 1us}, "
    "{kind: ring_uni, size: 4, bandwidth: 10GB/s, latency: 1us}]",
  };
  for (size_t i = 0; i < G_N_ELEMENTS(specs); i++) {
    char *y = g_strdup_printf("schema_version: 1\n%s\n", specs[i]);
    topo *t = load_ok(y);
    g_free(y);
    g_assert_cmpuint(topo_bisection_bw(t), ==, count_cut(t, side_outer));
    g_assert_cmpuint(topo_bisection_bw(t), >, 0);
    topo_free(t);
  }
  topo *t = one_dim("torus2d, shape: [4, 6]");
  /* 2 * 4 columns crossing the y cut, 100 GB/s each = 800 GB/s. */
  g_assert_cmpuint(topo_bisection_bw(t), ==, count_cut(t, side_torus_y));
  g_assert_cmpuint(topo_bisection_bw(t), ==, 800000000000ull);
  topo_free(t);
  /* Switch of 8: min(4, 4) links of 100 GB/s. */
  t = one_dim("switch, size: 8");
  g_assert_cmpuint(topo_bisection_bw(t), ==, 400000000000ull);
  topo_free(t);
}

static void test_dot(void)
{
  topo *t = one_dim("switch, size: 3");
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  topo_print_dot(t, f);
  fclose(f);
  g_assert_true(g_str_has_prefix(buf, "digraph"));
  /* 4 nodes, 3 duplex cables drawn as two-headed edges. */
  int nodes = 0, edges = 0;
  for (char *p = buf; (p = strstr(p, "shape=")); p++)
    nodes++;
  for (char *p = buf; (p = strstr(p, "dir=both")); p++)
    edges++;
  g_assert_cmpint(nodes, ==, 4);
  g_assert_cmpint(edges, ==, 3);
  free(buf);
  topo_free(t);
}

/* ---- errors ---- */

static void test_errors(void)
{
  /* Unknown key, with its line (line 3) and the expected keys. */
  load_fails("schema_version: 1\n"
             "dims: [{kind: ring, size: 4, bandwidth: 1GB/s, latency: 1us}]\n"
             "foo: 1\n",
             WISP_ERROR_PARSE, "bad.yaml:3: unknown key 'foo' in 'topology'", "expected one of");
  load_fails("schema_version: 1\n"
             "dims:\n"
             "  - {kind: ring, size: 4, bandwidth: 1GB/s, latency: 1us, colour: red}\n",
             WISP_ERROR_PARSE, "bad.yaml:3:", "unknown key 'colour' in 'dims[0]'");
  /* Missing schema_version. */
  load_fails("dims: [{kind: ring, size: 4, bandwidth: 1GB/s, latency: 1us}]\n", WISP_ERROR_PARSE,
             "schema_version", NULL);
  load_fails("schema_version: 2\ndims: [{kind: ring, size: 4, bandwidth: 1GB/s, latency: 1us}]\n",
             WISP_ERROR_UNSUPPORTED, "bad.yaml:1:", "schema_version 2");
  /* Bad units. */
  load_fails("schema_version: 1\ndims: [{kind: ring, size: 4, bandwidth: 400, latency: 1us}]\n", WISP_ERROR_PARSE,
             "bad bandwidth '400'", "unit");
  load_fails("schema_version: 1\ndims: [{kind: ring, size: 4, bandwidth: 4 furlongs, latency: 1us}]\n",
             WISP_ERROR_PARSE, "bad bandwidth", NULL);
  load_fails("schema_version: 1\ndims: [{kind: ring, size: 4, bandwidth: 1GB/s, latency: 5 weeks}]\n",
             WISP_ERROR_PARSE, "bad time '5 weeks'", NULL);
  /* Inconsistent sizes. */
  load_fails("schema_version: 1\nranks: 3\n"
             "dims: [{kind: ring, size: 4, bandwidth: 1GB/s, latency: 1us}]\nplacement: [0, 1]\n",
             WISP_ERROR_INVALID, "bad.yaml:4:", "inconsistent sizes");
  load_fails("schema_version: 1\ndims: [{kind: torus2d, size: 10, shape: [3, 4], bandwidth: 1GB/s, latency: 1us}]\n",
             WISP_ERROR_INVALID, "inconsistent sizes", "shape gives 12");
  load_fails("schema_version: 1\ndims: [{kind: fat_tree, size: 10, leaves: 3, bandwidth: 1GB/s, latency: 1us}]\n",
             WISP_ERROR_INVALID, "inconsistent sizes", NULL);
  load_fails("schema_version: 1\nranks: 5\ndims: [{kind: ring, size: 4, bandwidth: 1GB/s, latency: 1us}]\n",
             WISP_ERROR_INVALID, "5 ranks do not fit on 4 endpoints", NULL);
  load_fails("schema_version: 1\ndims: [{kind: ring, size: 4, bandwidth: 1GB/s, latency: 1us}]\nplacement: [0, 4]\n",
             WISP_ERROR_INVALID, "endpoint 4", NULL);
  load_fails("schema_version: 1\ndims: [{kind: ring, size: 4, bandwidth: 1GB/s, latency: 1us}]\nplacement: [1, 1]\n",
             WISP_ERROR_INVALID, "both placed on endpoint 1", NULL);
  /* Other semantic errors. */
  load_fails("schema_version: 1\ndims: [{kind: hypercube, size: 4, bandwidth: 1GB/s, latency: 1us}]\n",
             WISP_ERROR_PARSE, "unknown kind 'hypercube'", NULL);
  load_fails("schema_version: 1\ndims: [{kind: ring, bandwidth: 1GB/s, latency: 1us}]\n", WISP_ERROR_PARSE,
             "required key 'size'", NULL);
  load_fails("schema_version: 1\ndims: [{kind: ring, size: 4, shape: [2, 2], bandwidth: 1GB/s, latency: 1us}]\n",
             WISP_ERROR_INVALID, "'shape'", "torus");
  load_fails("schema_version: 1\ndims: [{kind: ring, size: 0, bandwidth: 1GB/s, latency: 1us}]\n",
             WISP_ERROR_INVALID, "'size'", NULL);
  load_fails("schema_version: 1\ndims: [{kind: ring, size: 4, size: 5, bandwidth: 1GB/s, latency: 1us}]\n",
             WISP_ERROR_PARSE, "duplicate key 'size'", NULL);
  load_fails("schema_version: 1\ndims:\n  - {name: a, kind: ring, size: 2, bandwidth: 1GB/s, latency: 1us}\n"
             "  - {name: a, kind: ring, size: 2, bandwidth: 1GB/s, latency: 1us}\n",
             WISP_ERROR_INVALID, "named 'a'", NULL);
  load_fails("schema_version: 1\ndims: [{kind: fully_connected, size: 100000, bandwidth: 1GB/s, latency: 1us}]\n",
             WISP_ERROR_LIMIT, "too large", NULL);
  /* Just past the 2^24-link bound: 4097 x 4096 = 16,781,312 directed links
   * at 40 bytes each = 640.2 MiB, stated before anything is allocated. */
  load_fails("schema_version: 1\ndims: [{kind: fully_connected, size: 4097, bandwidth: 1GB/s, latency: 1us}]\n",
             WISP_ERROR_LIMIT, "16781312 links", "about 640 MiB");
  load_fails("schema_version: 1\nmodel: packet\ndims: [{kind: ring, size: 4, bandwidth: 1GB/s, latency: 1us}]\n",
             WISP_ERROR_PARSE, "unknown model 'packet'", NULL);
  load_fails("schema_version: 1\n", WISP_ERROR_PARSE, "'dims'", NULL);
  load_fails("schema_version: 1\ndims: [{kind: ring, size: 4, bandwidth: 1GB/s, latency: 1us}]\n"
             "graph: {nodes: [], links: []}\n",
             WISP_ERROR_INVALID, "not both", NULL);
  /* YAML-level problems. */
  load_fails("schema_version: 1\ndims: [{kind: ring\n", WISP_ERROR_PARSE, "YAML syntax error", NULL);
  load_fails("", WISP_ERROR_PARSE, "empty", NULL);
  load_fails("- a\n- b\n", WISP_ERROR_PARSE, "top level must be a mapping", NULL);
  load_fails("hello: world\n", WISP_ERROR_PARSE, "cannot tell the format", NULL);
  load_fails("schema_version: 1\ndims: [{kind: ring, size: 4, bandwidth: 1GB/s, latency: 1us}]\n---\na: 1\n",
             WISP_ERROR_PARSE, "second YAML document", NULL);
  load_fails("schema_version: 1\ndims: [{kind: ring, size: 4, bandwidth: 1GB/s, latency: 1us}]\n---\n[a, b\n",
             WISP_ERROR_PARSE, "YAML syntax error", NULL);
  load_fails("a: &x [*x]\n", WISP_ERROR_PARSE, NULL, NULL);
  load_fails("schema_version: 1\ndims: *nothing\n", WISP_ERROR_PARSE, "YAML syntax error", NULL);
  /* Graphs. */
  load_fails("schema_version: 1\ngraph:\n  nodes: [{name: a, kind: endpoint}, {name: b, kind: endpoint}]\n"
             "  links: [{a: a, b: c, bandwidth: 1GB/s, latency: 1us}]\n",
             WISP_ERROR_INVALID, "node 'c'", NULL);
  load_fails("schema_version: 1\ngraph:\n  nodes: [{name: a, kind: endpoint}, {name: b, kind: endpoint}]\n"
             "  links: [{a: a, b: b, bandwidth: 1GB/s, latency: 1us, duplex: false}]\n",
             WISP_ERROR_INVALID, "not connected", NULL);
  load_fails("schema_version: 1\ngraph:\n  nodes: [{name: a, kind: endpoint}, {name: a, kind: switch}]\n"
             "  links: []\n",
             WISP_ERROR_INVALID, "used twice", NULL);
  load_fails("schema_version: 1\ngraph:\n  nodes: [{name: s, kind: switch}]\n  links: []\n", WISP_ERROR_INVALID,
             "no node of kind endpoint", NULL);
  load_fails("schema_version: 1\ngraph:\n  nodes: [{name: a, kind: endpoint}, {name: b, kind: endpoint}]\n"
             "  links: [{a: a, b: b, bandwidth: 1GB/s, latency: 1us, duplex: false, bandwidth_ba: 2GB/s}]\n",
             WISP_ERROR_INVALID, "bandwidth_ba", NULL);
  /* ASTRA-sim network.yml. */
  load_fails("topology: [ Ring, Switch ]\nnpus_count: [ 4 ]\nbandwidth: [ 50, 25 ]\nlatency: [ 500, 500 ]\n",
             WISP_ERROR_INVALID, "topology has 2, npus_count 1", NULL);
  load_fails("topology: [ Torus ]\nnpus_count: [ 4 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n", WISP_ERROR_PARSE,
             "unknown ASTRA-sim topology 'Torus'", NULL);
  load_fails("topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50GB/s ]\nlatency: [ 500 ]\n", WISP_ERROR_PARSE,
             "bad.yaml:3:", "must be a number");
  load_fails("topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50 ]\n", WISP_ERROR_PARSE, "'latency'", NULL);
  load_fails("topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 0 ]\nlatency: [ 5 ]\n", WISP_ERROR_INVALID,
             "positive", NULL);
  load_fails("topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 5 ]\nlatency: [ 5 ]\nextra: 1\n",
             WISP_ERROR_PARSE, "unknown key 'extra'", NULL);
  /* Files. */
  GError *e = NULL;
  g_assert_null(topo_load("/nonexistent/dir/net.yaml", &e));
  g_assert_error(e, WISP_ERROR, WISP_ERROR_IO);
  g_assert_nonnull(strstr(e->message, "/nonexistent/dir/net.yaml"));
  g_clear_error(&e);
}

/* Random byte mutations of every example config never crash: each load
 * either succeeds (and then prints and routes) or fails with an error.
 * Fixed seed, so the run is reproducible. */
static void test_mutations(void)
{
  static const char *names[] = {"two-tier-fc8-switch.yaml", "nodes4-fat-tree-200g.yaml", "tpu-v6e-2x4.yaml",
                                "astra-fc4-switch2.yml", "irregular-graph.yaml"};
  static const char alphabet[] = "0123456789:-[]{},# \n\"'abGBps/&*!|>%@";
  GRand *rng = g_rand_new_with_seed(20261129);
  int ok = 0, err = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    char *path = example_path(names[i]);
    char *text = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(path, &text, &len, NULL));
    g_free(path);
    for (int k = 0; k < 300; k++) {
      char *m = g_strdup(text);
      int edits = g_rand_int_range(rng, 1, 4);
      for (int j = 0; j < edits; j++)
        m[g_rand_int_range(rng, 0, (gint32)len)] = alphabet[g_rand_int_range(rng, 0, (gint32)sizeof alphabet - 1)];
      GError *e = NULL;
      topo *t = topo_load_string(m, "mutant.yaml", &e);
      if (t) {
        g_assert_no_error(e);
        ok++;
        FILE *f = fopen("/dev/null", "w");
        topo_print(t, f);
        fclose(f);
        for (int a = 0; a < topo_n_ranks(t); a++)
          assert_route_valid(t, a, topo_n_ranks(t) - 1 - a);
        topo_free(t);
      } else {
        g_assert_nonnull(e);
        g_assert_true(g_str_has_prefix(e->message, "mutant.yaml"));
        err++;
        g_error_free(e);
      }
      g_free(m);
    }
    g_free(text);
  }
  g_rand_free(rng);
  g_test_message("%d mutants loaded, %d rejected", ok, err);
  g_assert_cmpint(ok + err, ==, 5 * 300);
}

/* Truncations of a valid config at every byte never crash and either load
 * or give an error. */
static void test_truncations(void)
{
  const char *full = "schema_version: 1\nname: x\nmodel: flow\n"
                     "dims:\n  - {name: a, kind: torus2d, shape: [2, 3], bandwidth: 1GB/s, latency: 1us}\n"
                     "  - {name: b, kind: fat_tree, size: 4, leaves: 2, bandwidth: 1GB/s, latency: 1us}\n"
                     "placement: [0, 1, 2]\ncollectives: {all_reduce: [ring, direct]}\n";
  size_t n = strlen(full);
  int ok = 0, err = 0;
  for (size_t i = 0; i <= n; i++) {
    char *s = g_strndup(full, i);
    GError *e = NULL;
    topo *t = topo_load_string(s, "trunc.yaml", &e);
    if (t) {
      g_assert_no_error(e);
      ok++;
      topo_free(t);
    } else {
      g_assert_nonnull(e);
      err++;
      g_error_free(e);
    }
    g_free(s);
  }
  g_assert_cmpint(ok + err, ==, (int)n + 1);
  g_assert_cmpint(err, >, 0);
  g_assert_cmpint(ok, >, 0);
}

/* `wisp topo` end to end, when the binary is built (WISP_BIN, set by
 * `make check`); skipped visibly otherwise. */
static void test_cli(void)
{
  const char *bin = g_getenv("WISP_BIN");
  if (bin == NULL || !g_file_test(bin, G_FILE_TEST_IS_EXECUTABLE)) {
    g_test_skip("WISP_BIN is not set or not executable; run through `make check` to test `wisp topo`");
    return;
  }
  /* The lead registers the subcommand in cli/wisp.c; until then skip. */
  char *argv0[] = {(char *)bin, "topo", "--help", NULL};
  int status = 0;
  if (!g_spawn_sync(NULL, argv0, NULL, G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, NULL, NULL,
                    &status, NULL) ||
      !g_spawn_check_wait_status(status, NULL)) {
    g_test_skip("`wisp topo --help` fails: the topo subcommand is not registered in this wisp binary");
    return;
  }
  char *cfg = example_path("two-tier-fc8-switch.yaml");
  char *dir = g_dir_make_tmp("test_topo_XXXXXX", NULL);
  g_assert_nonnull(dir);
  char *dot = g_build_filename(dir, "net.dot", NULL);
  char *out = NULL, *err = NULL;
  char *argv1[] = {(char *)bin, "topo", cfg, "--dot", dot, "--route", "3:12", NULL};
  g_assert_true(g_spawn_sync(NULL, argv1, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, NULL));
  g_assert_true(g_spawn_check_wait_status(status, NULL));
  g_assert_nonnull(strstr(out, "topology two-tier-fc8-switch"));
  g_assert_nonnull(strstr(out, "bisection bandwidth"));
  g_assert_nonnull(strstr(out, "route rank 3 -> rank 12"));
  char *text = NULL;
  g_assert_true(g_file_get_contents(dot, &text, NULL, NULL));
  g_assert_true(g_str_has_prefix(text, "digraph"));
  g_free(text);
  g_free(out);
  g_free(err);
  /* A missing config: exit status 1 and the file named on stderr. */
  char *argv2[] = {(char *)bin, "topo", "/nonexistent/net.yaml", NULL};
  g_assert_true(g_spawn_sync(NULL, argv2, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, NULL));
  g_assert_false(g_spawn_check_wait_status(status, NULL));
  g_assert_nonnull(strstr(err, "/nonexistent/net.yaml"));
  g_free(out);
  g_free(err);
  g_remove(dot);
  g_rmdir(dir);
  g_free(dot);
  g_free(dir);
  g_free(cfg);
}

/* topo_load_string_bounded: a ring of n endpoints has 2n directed links,
 * so with a bound of 16 links a ring of 8 loads and a ring of 9 (18 links)
 * is refused before it is built; an explicit graph counts 2 directed links
 * per listed link (the bound's upper estimate), so the 9 links of
 * irregular-graph.yaml (17 directed: one is simplex) need a bound of 18. */
static void test_bounded(void)
{
  GError *e = NULL;
  topo *t = topo_load_string_bounded("schema_version: 1\ndims: [{kind: ring, size: 8, bandwidth: 1GB/s, latency: 1us}]\n",
                                     "ring8.yaml", 16, &e);
  g_assert_no_error(e);
  g_assert_cmpuint(topo_n_links(t), ==, 16);
  topo_free(t);
  t = topo_load_string_bounded("schema_version: 1\ndims: [{kind: ring, size: 9, bandwidth: 1GB/s, latency: 1us}]\n",
                               "ring9.yaml", 16, &e);
  g_assert_null(t);
  g_assert_error(e, WISP_ERROR, WISP_ERROR_LIMIT);
  g_test_message("error (as expected): %s", e->message);
  g_assert_nonnull(strstr(e->message, "(18 links"));
  g_assert_nonnull(strstr(e->message, "the limit is 16 links"));
  g_clear_error(&e);
  char *text = NULL;
  char *path = example_path("irregular-graph.yaml");
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  t = topo_load_string_bounded(text, "irregular.yaml", 17, &e);
  g_assert_null(t);
  g_assert_error(e, WISP_ERROR, WISP_ERROR_LIMIT);
  g_assert_nonnull(strstr(e->message, "more than 8 links"));
  g_clear_error(&e);
  t = topo_load_string_bounded(text, "irregular.yaml", 18, &e);
  g_assert_no_error(e);
  g_assert_cmpuint(topo_n_links(t), ==, 17);
  topo_free(t);
  g_free(text);
  g_free(path);
}

/* Degenerate values are rejected or saturate, never wrap or crash. */
static void test_extremes(void)
{
  load_fails("topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 1e-12 ]\nlatency: [ 5 ]\n", WISP_ERROR_INVALID,
             "below 1 byte/s", NULL);
  load_fails("schema_version: 1\ndims: [{kind: ring, size: 4, bandwidth: 1GB/s, latency: 1e30s}]\n", WISP_ERROR_PARSE,
             "bad time", NULL);
  /* Huge latencies: route costs add exactly while they fit, then saturate. */
  topo *t = load_ok("schema_version: 1\ndims: [{kind: ring, size: 8, bandwidth: 1GB/s, latency: 2000000s}]\n");
  sim_time_ps lat;
  topo_route_cost(t, 0, 4, &lat, NULL); /* 4 hops of 2e18 ps: 8e18 < 9.22e18 fits */
  g_assert_cmpint(lat, ==, 4 * INT64_C(2000000000000000000));
  topo_free(t);
  t = load_ok("schema_version: 1\ndims: [{kind: ring, size: 16, bandwidth: 1GB/s, latency: 3000000s}]\n");
  topo_route_cost(t, 0, 8, &lat, NULL); /* 8 hops of 3e18 ps overflow int64: saturated */
  g_assert_cmpint(lat, ==, SIM_TIME_MAX);
  FILE *f = fopen("/dev/null", "w");
  topo_print(t, f);
  fclose(f);
  topo_free(t);
  /* One NPU per dimension: no links at all.  Printing it passed a NULL
   * array to qsort, undefined behaviour reported by UBSan (found by
   * fuzz/fuzz_topo.c).  The link summary is then just its header. */
  t = load_ok("topology: [ FullyConnected, Switch ]\nnpus_count: [ 1, 1 ]\nbandwidth: [ 300, 25 ]\n"
              "latency: [ 500, 5000 ]\n");
  g_assert_cmpint(topo_n_ranks(t), ==, 1);
  g_assert_cmpuint(topo_n_links(t), ==, 0);
  char *buf = NULL;
  size_t len = 0;
  f = open_memstream(&buf, &len);
  topo_print(t, f);
  fclose(f);
  g_assert_nonnull(strstr(buf, "links per tier:\n"));
  g_free(buf);
  topo_free(t);
  /* Bisection of a fully connected group at huge bandwidth saturates. */
  t = load_ok("schema_version: 1\ndims: [{kind: fully_connected, size: 64, bandwidth: 1000000TB/s, latency: 1us}]\n");
  g_assert_cmpuint(topo_bisection_bw(t), ==, UINT64_MAX); /* 32*32*1e18 > 2^64 */
  topo_free(t);
}

/* ---- the config document ---- */

/* One document, parsed once, builds the topology; the topology holds a
 * reference, so the settings of the layers above stay readable through
 * topo_config() after the caller drops its own.  A settings-only
 * document (what-if edits) has no topology section to build. */
static void test_from_config(void)
{
  GError *e = NULL;
  cfg_doc *doc = cfg_load_string("schema_version: 1\nname: two\nmodel: flow\n"
                                 "dims: [{kind: switch, size: 4, bandwidth: 1GB/s, latency: 1us}]\n"
                                 "collectives: {chunks: 4}\n",
                                 "cfg.yaml", &e);
  g_assert_no_error(e);
  topo *a = topo_from_config(doc, &e), *b = topo_from_config(doc, &e);
  g_assert_no_error(e);
  cfg_unref(doc);
  /* A switch of 4: 4 endpoints + 1 switch, 2 links per endpoint. */
  g_assert_cmpuint(topo_n_nodes(a), ==, 5);
  g_assert_cmpuint(topo_n_links(a), ==, 8);
  g_assert_cmpuint(topo_n_links(b), ==, 8);
  g_assert_cmpstr(topo_name(a), ==, "two");
  g_assert_true(topo_config(a) == topo_config(b));
  g_assert_cmpstr(cfg_source(topo_config(a)), ==, topo_source(a));
  int line = 0;
  g_assert_cmpstr(cfg_get(topo_config(a), "collectives.chunks", &line), ==, "4");
  g_assert_cmpint(line, ==, 5);
  g_assert_cmpstr(cfg_get(topo_config(b), "model", NULL), ==, "flow");
  g_assert_cmpuint(topo_dim_bw(a, 0), ==, 1000000000ull);
  g_assert_false(topo_is_graph(a));
  topo_free(a);
  topo_free(b);
  cfg_doc *edit = cfg_new_edit("edit");
  g_assert_null(topo_from_config(edit, &e));
  g_assert_error(e, WISP_ERROR, WISP_ERROR_INVALID);
  g_assert_true(g_str_has_prefix(e->message, "edit: the config has no topology section"));
  g_clear_error(&e);
  cfg_unref(edit);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/topo/units", test_units);
  g_test_add_func("/topo/from-config", test_from_config);
  g_test_add_func("/topo/link-counts", test_link_counts);
  g_test_add_func("/topo/multi-dim", test_multi_dim_counts);
  g_test_add_func("/topo/routes/ring", test_ring_routes);
  g_test_add_func("/topo/routes/torus", test_torus_routes);
  g_test_add_func("/topo/routes/fat-tree", test_fat_tree_routes);
  g_test_add_func("/topo/example/two-tier", test_two_tier_example);
  g_test_add_func("/topo/example/cloudmatrix384", test_cloudmatrix);
  g_test_add_func("/topo/example/all", test_all_examples_load);
  g_test_add_func("/topo/astra", test_astra);
  g_test_add_func("/topo/placement", test_placement);
  g_test_add_func("/topo/settings", test_settings);
  g_test_add_func("/topo/graph", test_graph);
  g_test_add_func("/topo/bisection", test_bisection);
  g_test_add_func("/topo/dot", test_dot);
  g_test_add_func("/topo/errors", test_errors);
  g_test_add_func("/topo/truncations", test_truncations);
  g_test_add_func("/topo/mutations", test_mutations);
  g_test_add_func("/topo/extremes", test_extremes);
  g_test_add_func("/topo/bounded", test_bounded);
  g_test_add_func("/topo/cli", test_cli);
  return g_test_run();
}
