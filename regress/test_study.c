/* test_study.c: topology variants, preset lookup and the utility of
 * doubling, with expected values from closed forms written next to each
 * check.
 *
 * Analytical tier (net.h): a transfer of S bytes over a route costs the sum
 * of the link latencies plus round(S * 1e12 / B_min) ps, B_min the route's
 * smallest bandwidth.  Through a switch a route has two links.
 */
#include "config.h"
#include "studies/study.h"
#include "replay/sim_report.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

/* 4 ranks: dims [scale_up switch 2 @ 300 GB/s 500 ns, scale_out switch 2 @
 * 25 GB/s 1 us].  Rank r has scale_up coordinate r % 2 and scale_out
 * coordinate r / 2, so ranks r and r + 2 differ only in scale_out. */
static const char *two_tier_yaml =
  "schema_version: 1\nlibrary: {name: ideal}\n"
  "name: two-tier\n"
  "dims:\n"
  "  - {name: scale_up, kind: switch, size: 2, bandwidth: 300GB/s, latency: 500ns}\n"
  "  - {name: scale_out, kind: switch, size: 2, bandwidth: 25GB/s, latency: 1us}\n";

static topo_variant *variant_of(const char *yaml)
{
  GError *error = NULL;
  topo *t = topo_load_string(yaml, "test.yaml", &error);
  g_assert_no_error(error);
  topo_variant *v = topo_variant_new(t);
  topo_free(t);
  return v;
}

/* Rank r < 2: COMP of comp_ps, then SEND of S bytes to r + 2.  Ranks 2, 3:
 * the matching RECV (issued at time 0). */
static et_workload *scale_out_p2p(sim_time_ps comp_ps, uint64_t bytes)
{
  et_workload *w = et_workload_new(4, "synthetic-scale-out-p2p");
  for (int r = 0; r < 4; r++) {
    et_builder *b = et_builder_new("synthetic");
    gboolean sender = r < 2;
    if (sender)
      et_builder_add_node(b, 1, ET_NODE_COMP, "gemm", comp_ps, 0);
    uint32_t n = et_builder_add_node(b, 2, sender ? ET_NODE_COMM_SEND : ET_NODE_COMM_RECV, "p2p", 0, 0);
    et_comm c = {.bytes = bytes, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = sender ? r : r - 2,
                 .dst = sender ? r + 2 : r, .tag = 7, .root = -1, .coll = ET_COLL_NONE};
    et_builder_set_comm(b, n, &c, NULL, NULL, 0);
    if (sender)
      et_builder_add_dep(b, n, 1, TRUE, FALSE);
    GError *error = NULL;
    w->ranks[r] = et_builder_finish(b, 0, &error);
    g_assert_no_error(error);
  }
  GError *error = NULL;
  g_assert_true(et_workload_resolve_groups(w, &error));
  g_assert_no_error(error);
  return w;
}

static const study_utility_row *row_of(const study_utility_result *u, const char *name)
{
  for (guint i = 0; i < u->rows->len; i++) {
    const study_utility_row *r = &g_array_index(u->rows, study_utility_row, i);
    if (strcmp(r->resource, name) == 0)
      return r;
  }
  g_assert_not_reached();
  return NULL;
}

/* Communication-bound on scale-out only.  With c = 10 ms of compute, S = 1e9
 * bytes, B_out = 25 GB/s and a scale-out latency of 1 us per link (2 links
 * through the switch):
 *   T    = c + 2 us + S / B_out       = 10 ms + 2 us + 40 ms = 50.002 ms
 *   T_2x = c + 2 us + S / (2 B_out)   = 10 ms + 2 us + 20 ms = 30.002 ms
 *   Utility(scale_out_bw) = (T - T_2x) / T = 20 / 50.002 = 39.99840 %.
 * Scale-up links are never on the route, so doubling their bandwidth, or
 * the domain (here: [2, 2] -> [4, 1], which moves the pair into one
 * scale-up switch: T = c + 2 x 500 ns + S / 300 GB/s), are derived the
 * same way:
 *   Utility(scale_up_bw) = 0 exactly;
 *   T_domain = 10 ms + 1 us + 3.333333333 ms (S * 1e12 / 3e11 rounded to
 *   the ps) and Utility = (T - T_domain) / T.
 * Halving latency: T_lat = c + 1 us + 40 ms, Utility = 1 us / T. */
static void test_utility_closed_form(void)
{
  const sim_time_ps c = 10 * SIM_PS_PER_US * 1000;
  const uint64_t S = 1000000000;
  et_workload *w = scale_out_p2p(c, S);
  topo_variant *base = variant_of(two_tier_yaml);
  sim_replay_options opt = {.checked = TRUE};
  GError *error = NULL;
  study_utility_result *u = study_utility_run(w, base, "all", &opt, &error);
  g_assert_no_error(error);
  g_assert_nonnull(u);

  const sim_time_ps T = c + 2 * SIM_PS_PER_US + 40 * SIM_PS_PER_US * 1000;
  g_assert_cmpint(u->baseline.step_time, ==, T);
  g_assert_cmpint(u->measured_step, ==, -1); /* synthetic: no measured step */

  const study_utility_row *so = row_of(u, "scale_out_bw");
  g_assert_true(so->applicable);
  g_assert_cmpint(so->variant.step_time, ==, c + 2 * SIM_PS_PER_US + 20 * SIM_PS_PER_US * 1000);
  g_assert_cmpfloat_with_epsilon(so->utility_pct, 100.0 * 20.0 / 50.002, 1e-9);

  const study_utility_row *su = row_of(u, "scale_up_bw");
  g_assert_true(su->applicable);
  g_assert_cmpint(su->variant.step_time, ==, T);
  g_assert_cmpfloat(su->utility_pct, ==, 0.0);

  const study_utility_row *dom = row_of(u, "scale_up_domain");
  g_assert_true(dom->applicable);
  sim_time_ps t_dom = c + 2 * 500 * SIM_PS_PER_NS + wisp_transfer_ps(S, 300000000000ull);
  g_assert_cmpint(wisp_transfer_ps(S, 300000000000ull), ==, 3333333333); /* 1e9 * 1e12 / 3e11 ps */
  g_assert_cmpint(dom->variant.step_time, ==, t_dom);
  g_assert_cmpfloat_with_epsilon(dom->utility_pct, 100.0 * (double)(T - t_dom) / (double)T, 1e-9);

  const study_utility_row *ici = row_of(u, "ici_bw");
  g_assert_false(ici->applicable); /* no torus tier */
  g_assert_nonnull(ici->note);

  const study_utility_row *lat = row_of(u, "latency");
  g_assert_cmpint(lat->variant.step_time, ==, T - SIM_PS_PER_US);
  g_assert_cmpfloat_with_epsilon(lat->utility_pct, 100.0 * 1.0 / 50002.0, 1e-9);

  /* Sensitivity: every bandwidth x0.9: S / 22.5 GB/s = 44.444444444 ms
   * (rounded to the ps); x1.1: S / 27.5 GB/s = 36.363636364 ms. */
  g_assert_cmpint(u->bw_minus10, ==, c + 2 * SIM_PS_PER_US + wisp_transfer_ps(S, 22500000000ull));
  g_assert_cmpint(u->bw_plus10, ==, c + 2 * SIM_PS_PER_US + wisp_transfer_ps(S, 27500000000ull));

  /* The JSON result parses and holds the baseline. */
  char *dir = g_dir_make_tmp("wisp-study-XXXXXX", &error);
  g_assert_no_error(error);
  char *path = g_build_filename(dir, "u.json", NULL);
  g_assert_true(study_utility_write_json(u, w, base, "two-tier", path, &error));
  g_assert_no_error(error);
  char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  g_assert_nonnull(strstr(text, "\"baseline_step_ns\": 50002000.000"));
  g_free(text);
  g_unlink(path);
  g_rmdir(dir);
  g_free(path);
  g_free(dir);

  study_utility_result_free(u);
  topo_variant_free(base);
  et_workload_free(w);
}

/* Re-placement: 16 ranks on [8, 2]; doubling the domain gives [16, 1];
 * [4, 4] -> [8, 2] rebuilds the links (a switch of n endpoints has 2n
 * links: 4 groups x 8 + 4 groups x 8 = 64 before, 2 x 16 + 8 x 4 = 64
 * after, but the pair (0, 4) moves from scale-out to scale-up). */
static void test_variant_resize(void)
{
  topo_variant *v = variant_of("schema_version: 1\nlibrary: {name: ideal}\n"
                               "dims:\n"
                               "  - {name: su, kind: switch, size: 4, bandwidth: 300GB/s, latency: 500ns}\n"
                               "  - {name: so, kind: switch, size: 4, bandwidth: 25GB/s, latency: 1us}\n");
  GError *error = NULL;
  topo *t0 = topo_variant_build(v, &error);
  g_assert_no_error(error);
  g_assert_cmpint(topo_rank_coord(t0, 4, 1), ==, 1); /* rank 4 is in the second group of 4 */
  g_assert_true(topo_variant_set(v, "scale_up_domain", "8", &error));
  g_assert_no_error(error);
  g_assert_cmpint(topo_variant_dim_size(v, 0), ==, 8);
  g_assert_cmpint(topo_variant_dim_size(v, 1), ==, 2); /* R / 8 = 16 / 8 */
  topo *t1 = topo_variant_build(v, &error);
  g_assert_no_error(error);
  g_assert_cmpint(topo_n_ranks(t1), ==, 16);
  g_assert_cmpint(topo_rank_coord(t1, 4, 0), ==, 4);
  g_assert_cmpint(topo_rank_coord(t1, 4, 1), ==, 0); /* now in rank 0's domain */
  /* Route 0 -> 4: two scale-up links at 300 GB/s, 500 ns each. */
  sim_time_ps lat;
  wisp_bw_Bps bw;
  topo_route_cost(t1, 0, 4, &lat, &bw);
  g_assert_cmpint(lat, ==, 1000 * SIM_PS_PER_NS);
  g_assert_cmpuint(bw, ==, 300000000000ull);
  /* A domain of 32 for 16 ranks is capped at 16 (noted), outer size 1. */
  g_assert_true(topo_variant_set(v, "dims.su.size", "32", &error));
  g_assert_cmpint(topo_variant_dim_size(v, 0), ==, 16);
  g_assert_cmpint(topo_variant_dim_size(v, 1), ==, 1);
  g_assert_nonnull(strstr(topo_variant_notes(v), "capped at 16"));
  topo_free(t0);
  topo_free(t1);
  topo_variant_free(v);
}

/* Keys: units parse, unknown keys and bad values are errors naming them,
 * settings survive the YAML round trip. */
static void test_variant_keys(void)
{
  topo_variant *v = variant_of(two_tier_yaml);
  GError *error = NULL;
  g_assert_true(topo_variant_set(v, "scale_out_bw", "400Gbps", &error));
  g_assert_cmpuint(topo_variant_dim_bw(v, 1), ==, 50000000000ull); /* 400e9 / 8 */
  g_assert_true(topo_variant_set(v, "dims.scale_up.latency", "2.5us", &error));
  g_assert_cmpint(topo_variant_dim_latency(v, 0), ==, 2500 * SIM_PS_PER_NS);
  g_assert_true(topo_variant_set(v, "dims.0.kind", "fully_connected", &error));
  g_assert_cmpint(topo_variant_dim_kind(v, 0), ==, TOPO_KIND_FULLY_CONNECTED);
  g_assert_true(topo_variant_set(v, "collectives.all_reduce", "ring,direct", &error));
  g_assert_true(topo_variant_set(v, "model", "flow", &error));
  g_assert_no_error(error);
  topo *t = topo_variant_build(v, &error);
  g_assert_no_error(error);
  int line;
  g_assert_cmpstr(cfg_get(topo_config(t), "collectives.all_reduce", &line), ==, "ring,direct");
  g_assert_cmpint(net_default_tier(t), ==, NET_TIER_FLOW);
  topo_free(t);

  g_assert_false(topo_variant_set(v, "dims.nope.bandwidth", "1GB/s", &error));
  g_assert_error(error, WISP_ERROR, WISP_ERROR_INVALID);
  g_assert_nonnull(strstr(error->message, "scale_up, scale_out"));
  g_clear_error(&error);
  g_assert_false(topo_variant_set(v, "scale_out_bw", "fast", &error));
  g_assert_nonnull(strstr(error->message, "scale_out_bw"));
  g_clear_error(&error);
  g_assert_false(topo_variant_set(v, "frobnicate", "1", &error));
  g_assert_nonnull(strstr(error->message, "unknown topology key"));
  g_clear_error(&error);
  g_assert_false(topo_variant_set(v, "dims.scale_up.size", "0", &error));
  g_clear_error(&error);
  topo_variant_free(v);
}

/* Graphs, explicit placements and tori: what can and cannot be edited. */
static void test_variant_shapes(void)
{
  GError *error = NULL;
  /* Explicit graph a - sw - b at 10 GB/s, 1 us per link: doubling every
   * link's bandwidth doubles the route's bottleneck; sizes cannot change. */
  topo_variant *g = variant_of("schema_version: 1\nlibrary: {name: ideal}\n"
                               "graph:\n"
                               "  nodes: [{name: a, kind: endpoint}, {name: b, kind: endpoint}, {name: sw, kind: switch}]\n"
                               "  links:\n"
                               "    - {a: a, b: sw, bandwidth: 10GB/s, latency: 1us}\n"
                               "    - {a: sw, b: b, bandwidth: 10GB/s, latency: 1us}\n");
  g_assert_true(topo_variant_is_graph(g));
  g_assert_true(topo_variant_scale_bw(g, -1, 2.0, &error));
  topo *t = topo_variant_build(g, &error);
  g_assert_no_error(error);
  sim_time_ps lat;
  wisp_bw_Bps bw;
  topo_route_cost(t, 0, 1, &lat, &bw);
  g_assert_cmpuint(bw, ==, 20000000000ull);
  g_assert_cmpint(lat, ==, 2 * SIM_PS_PER_US);
  topo_free(t);
  g_assert_false(topo_variant_set_dim_size(g, 0, 4, &error));
  g_assert_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED);
  g_clear_error(&error);
  topo_variant_free(g);

  /* Explicit placement: re-placing ranks into a larger domain is refused. */
  topo_variant *p = variant_of("schema_version: 1\nlibrary: {name: ideal}\n"
                               "dims:\n"
                               "  - {name: su, kind: switch, size: 2, bandwidth: 300GB/s, latency: 500ns}\n"
                               "  - {name: so, kind: switch, size: 2, bandwidth: 25GB/s, latency: 1us}\n"
                               "placement: [0, 2, 1, 3]\n");
  g_assert_false(topo_variant_set(p, "scale_up_domain", "4", &error));
  g_assert_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED);
  g_clear_error(&error);
  /* ... but bandwidth edits keep the placement (rank 1 stays on endpoint 2). */
  g_assert_true(topo_variant_set(p, "scale_out_bw", "50GB/s", &error));
  t = topo_variant_build(p, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(topo_rank_endpoint(t, 1), ==, 2);
  topo_free(t);
  topo_variant_free(p);

  /* Torus: size edits point to the shape; a shape edit resizes. */
  topo_variant *x = variant_of("schema_version: 1\nlibrary: {name: ideal}\n"
                               "dims:\n"
                               "  - {name: ici, kind: torus2d, shape: [2, 4], bandwidth: 100GB/s, latency: 1us}\n");
  g_assert_false(topo_variant_set(x, "dims.ici.size", "16", &error));
  g_assert_nonnull(strstr(error->message, "shape"));
  g_clear_error(&error);
  g_assert_false(topo_variant_set(x, "dims.ici.shape", "4x4x4", &error));
  g_clear_error(&error);
  g_assert_true(topo_variant_set(x, "dims.ici.shape", "[4, 4]", &error));
  g_assert_cmpint(topo_variant_dim_size(x, 0), ==, 16);
  t = topo_variant_build(x, &error);
  g_assert_no_error(error);
  g_assert_cmpint(topo_n_endpoints(t), ==, 16);
  topo_free(t);
  topo_variant_free(x);
}

/* Presets: every shipped preset loads and fits a 16-rank workload. */
static void test_presets(void)
{
  const char *srcdir = g_getenv("G_TEST_SRCDIR");
  if (srcdir == NULL) {
    g_test_skip("G_TEST_SRCDIR not set (run through make check)");
    return;
  }
  char *dir = g_build_filename(srcdir, "presets", NULL);
  g_setenv("WISP_PRESET_PATH", dir, TRUE);
  static const char *const names[] = {"perlmutter", "dgx-h100", "dgx-h200", "gb200-nvl72", "tpu-v6e",
                                      "cloudmatrix384"};
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    GError *error = NULL;
    char *path = NULL;
    topo_variant *v = study_cluster_open(names[i], 16, &path, NULL, &error);
    g_assert_no_error(error);
    g_assert_nonnull(v);
    topo *t = topo_variant_build(v, &error);
    g_assert_no_error(error);
    g_assert_cmpint(topo_n_ranks(t), ==, 16);
    topo_free(t);
    topo_variant_free(v);
    g_free(path);
  }
  /* Perlmutter: [4, 4] for 16 ranks (4 GPUs per node). */
  GError *error = NULL;
  topo_variant *v = study_cluster_open("perlmutter", 16, NULL, NULL, &error);
  g_assert_cmpint(topo_variant_dim_size(v, 0), ==, 4);
  g_assert_cmpint(topo_variant_dim_size(v, 1), ==, 4);
  topo_variant_free(v);
  /* A preset named by its path is fitted too: perlmutter for 8 ranks is [4, 2]. */
  char *pp = g_build_filename(srcdir, "presets", "perlmutter.yaml", NULL);
  v = study_cluster_open(pp, 8, NULL, NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpint(topo_variant_dim_size(v, 1), ==, 2);
  g_assert_cmpint(topo_variant_n_ranks(v), ==, 8);
  topo_variant_free(v);
  g_free(pp);
  /* TPU v6e: 16 chips -> a 4 x 4 slice. */
  v = study_cluster_open("tpu-v6e", 16, NULL, NULL, &error);
  g_assert_cmpint(topo_variant_dim_size(v, 0), ==, 16);
  topo_variant_free(v);
  g_assert_null(study_cluster_open("no-such-cluster", 16, NULL, NULL, &error));
  g_assert_error(error, WISP_ERROR, WISP_ERROR_IO);
  g_assert_nonnull(strstr(error->message, "perlmutter"));
  g_clear_error(&error);
  g_unsetenv("WISP_PRESET_PATH");
  g_free(dir);

  /* A preset of another preset_version is refused with its line; a preset
   * directory from WISP_PRESET_PATH is searched first. */
  char *tmp = g_dir_make_tmp("wisp-preset-XXXXXX", NULL);
  char *bad = g_build_filename(tmp, "future.yaml", NULL);
  g_assert_true(g_file_set_contents(bad, "# a preset from the future\npreset_version: 2\nschema_version: 1\nlibrary: {name: ideal}\n"
                                         "dims:\n  - {name: x, kind: switch, size: 2, bandwidth: 1GB/s, latency: 1us}\n",
                                    -1, NULL));
  g_setenv("WISP_PRESET_PATH", tmp, TRUE);
  g_assert_null(study_cluster_open("future", 2, NULL, NULL, &error));
  g_assert_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED);
  g_assert_nonnull(strstr(error->message, "future.yaml:2"));
  g_clear_error(&error);
  g_unsetenv("WISP_PRESET_PATH");
  g_unlink(bad);
  g_rmdir(tmp);
  g_free(bad);
  g_free(tmp);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/study/utility-closed-form", test_utility_closed_form);
  g_test_add_func("/study/variant-resize", test_variant_resize);
  g_test_add_func("/study/variant-keys", test_variant_keys);
  g_test_add_func("/study/variant-shapes", test_variant_shapes);
  g_test_add_func("/study/presets", test_presets);
  return g_test_run();
}
