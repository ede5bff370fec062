/* test_scale.c: scaling a traced job by data parallelism (chakra/et_scale.h,
 * `--scale dp=N`): closed-form step times, group growth, size rules,
 * placement, layout inference and the errors for bad requests. */
#include "config.h"
#include "chakra/et_scale.h"
#include "chakra/et_view.h"
#include "replay/sim_replay.h"
#include "regress/test_util.h"

#include <math.h>

#define US SIM_PS_PER_US

static et_comm coll_comm(et_coll_type t, uint64_t bytes, int root)
{
  et_comm c = {.bytes = bytes, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = -1, .dst = -1, .tag = -1,
               .root = root, .coll = t};
  return c;
}

static void fail_on(GError *e)
{
  g_assert_no_error(e);
}

/* ---- the closed form: a DP-only job, 8 -> 64 -> 512 ranks ---- */

/* Every rank: compute C, then an all-reduce of S bytes over group "dp"
 * (all 8 ranks, description "dp"). */
static et_workload *dp_only(sim_time_ps C, uint64_t S)
{
  et_workload *w = et_workload_new(8, "dp-only");
  int all[8];
  for (int r = 0; r < 8; r++) {
    et_builder *b = et_builder_new("dp-only");
    et_builder_add_node(b, 1, ET_NODE_COMP, "compute", C, 0);
    uint32_t a = et_builder_add_node(b, 2, ET_NODE_COMM_COLL, "grad_allreduce", 0, 0);
    et_comm c = coll_comm(ET_COLL_ALL_REDUCE, S, -1);
    et_builder_set_comm(b, a, &c, "dp", NULL, 0);
    et_builder_add_dep(b, a, 1, TRUE, FALSE);
    GError *e = NULL;
    w->ranks[r] = et_builder_finish(b, ET_BUILD_STRICT, &e);
    fail_on(e);
    all[r] = r;
  }
  et_workload_add_group(w, "dp", "dp", all, 8);
  GError *e = NULL;
  g_assert_true(et_workload_resolve_groups(w, &e));
  return w;
}

static et_workload *scale(et_workload *w, int dp, et_placement pl, GError **error)
{
  et_layout l;
  g_assert_true(et_layout_infer(w, NULL, &l, error));
  et_scale_request rq = {.dp = dp, .placement = pl};
  et_workload *o = et_workload_scale(w, &l, &rq, error);
  et_layout_clear(&l);
  return o;
}

static sim_time_ps step_of(const et_workload *w, const topo *t)
{
  sim_replay_options opt = {.quiet = TRUE};
  GError *e = NULL;
  sim_result *r = sim_replay_run(w, t, &opt, &e);
  fail_on(e);
  sim_time_ps s = r->step_time;
  sim_result_free(r);
  return s;
}

/* Two tiers: 8 GPUs per node fully connected (B0 = 100 GB/s per pair, link
 * latency 1 us, one hop: alpha0 = 1 us), 64 nodes on a switch (B1 = 25 GB/s,
 * 2 us per link, two links per route: alpha1 = 4 us).  Library "ideal"
 * (wisp's textbook algorithms); all-reduce direct inside the node, ring
 * across nodes, so the hierarchical all-reduce of S over 8 x q ranks is
 *   reduce-scatter in the node (direct, one step of S/8 per pair)
 *   + ring all-reduce of S/8 over q nodes: 2 (q - 1) steps of S/(8 q)
 *   + all-gather in the node (direct, one step of S/8 per pair):
 *   T(q) = 2 (alpha0 + S/8 / B0) + 2 (q - 1) (alpha1 + S/(8 q) / B1),
 * and the step is C + T(q).  With C = 10 ms and S = 64 MiB = 67,108,864 B:
 *   S/8 / B0      = 8,388,608 B / 100 GB/s = 83,886,080 ps
 *   node part     = 2 (1,000,000 + 83,886,080)            =   169,772,160 ps
 *   q = 1 (8)     : no network part                           step 10,169,772,160 ps
 *   q = 8 (64)    : S/64 / B1 = 1,048,576 B / 25 GB/s = 41,943,040 ps;
 *                   14 (4,000,000 + 41,943,040) = 643,202,560  step 10,812,974,720 ps
 *   q = 64 (512)  : S/512 / B1 = 131,072 B / 25 GB/s = 5,242,880 ps;
 *                   126 (4,000,000 + 5,242,880) = 1,164,602,880 step 11,334,375,040 ps
 * (the traced 8 ranks sit on node 0: the flat direct all-reduce = the node part). */
#define TWO_TIER \
  "schema_version: 1\nname: two-tier\nmodel: analytical\nlibrary: {name: ideal}\n" \
  "collectives: {all_reduce: \"direct,ring\"}\n" \
  "dims:\n" \
  "  - {name: node, kind: fully_connected, size: 8, bandwidth: 100GB/s, latency: 1us}\n" \
  "  - {name: net, kind: switch, size: 64, bandwidth: 25GB/s, latency: 2us}\n"

static void test_closed_form(void)
{
  GError *e = NULL;
  topo *t = topo_load_string(TWO_TIER, "two-tier.yaml", &e);
  fail_on(e);
  const sim_time_ps C = 10000 * US;
  const uint64_t S = 64u << 20;
  const sim_time_ps node = 2 * (1 * US + 83886080);
  g_assert_cmpint(node, ==, 169772160);
  const struct { int dp; sim_time_ps want; } cases[] = {
    {8, C + node},
    {64, C + node + 14 * (4 * US + 41943040)},
    {512, C + node + 126 * (4 * US + 5242880)},
  };
  g_assert_cmpint(cases[1].want, ==, INT64_C(10812974720));
  g_assert_cmpint(cases[2].want, ==, INT64_C(11334375040));
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    et_workload *w = dp_only(C, S);
    if (cases[i].dp != 8) {
      w = scale(w, cases[i].dp, ET_PLACE_OUTER, &e);
      fail_on(e);
      g_assert_cmpint(w->n_ranks, ==, cases[i].dp);
      /* Shared graphs: every rank's graph is one of the 8 traced ones. */
      g_assert_true(w->ranks[cases[i].dp - 1] == w->ranks[7]);
    }
    sim_time_ps got = step_of(w, t);
    g_test_message("dp %d: step %" G_GINT64_FORMAT " ps, expected %" G_GINT64_FORMAT " ps", cases[i].dp, got,
                   cases[i].want);
    g_assert_cmpint(got, ==, cases[i].want);
    et_workload_free(w);
  }
  topo_free(t);
}

/* ---- group growth, translation, size rules, placement ---- */

/* 8 ranks = tp 2 x pp 2 x dp 2, rank = dp*4 + pp*2 + tp (Megatron order):
 * tp groups "tp0".."tp3" (desc mesh_tp), dp groups "dp0".."dp3" (desc
 * dp_shard).  Each rank: an all-gather of 1000 B and a reduce-scatter of
 * 4000 B and an all-reduce of 512 B on its dp group, a broadcast of 64 B
 * rooted at the group's first rank on its tp group, and pipeline p2p:
 * stage 0 sends 256 B (tag 7) to stage 1. */
static et_workload *mixed(void)
{
  et_workload *w = et_workload_new(8, "mixed");
  for (int r = 0; r < 8; r++) {
    int dp = r / 4, pp = (r / 2) % 2, tp = r % 2;
    char tpg[8], dpg[8];
    g_snprintf(tpg, sizeof tpg, "tp%d", r / 2);
    g_snprintf(dpg, sizeof dpg, "dp%d", pp * 2 + tp);
    et_builder *b = et_builder_new("mixed");
    uint32_t n;
    et_comm c;
    n = et_builder_add_node(b, 1, ET_NODE_COMM_COLL, "ag", 0, 0);
    c = coll_comm(ET_COLL_ALL_GATHER, 1000, -1);
    et_builder_set_comm(b, n, &c, dpg, NULL, 0);
    n = et_builder_add_node(b, 2, ET_NODE_COMM_COLL, "rs", 0, 0);
    c = coll_comm(ET_COLL_REDUCE_SCATTER, 4000, -1);
    et_builder_set_comm(b, n, &c, dpg, NULL, 0);
    et_builder_add_dep(b, n, 1, TRUE, FALSE);
    n = et_builder_add_node(b, 3, ET_NODE_COMM_COLL, "ar", 0, 0);
    c = coll_comm(ET_COLL_ALL_REDUCE, 512, -1);
    et_builder_set_comm(b, n, &c, dpg, NULL, 0);
    et_builder_add_dep(b, n, 2, TRUE, FALSE);
    n = et_builder_add_node(b, 4, ET_NODE_COMM_COLL, "bcast", 0, 0);
    c = coll_comm(ET_COLL_BROADCAST, 64, r - tp);
    et_builder_set_comm(b, n, &c, tpg, NULL, 0);
    et_builder_add_dep(b, n, 3, TRUE, FALSE);
    n = et_builder_add_node(b, 5, pp == 0 ? ET_NODE_COMM_SEND : ET_NODE_COMM_RECV, "p2p", 0, 0);
    c = (et_comm){.bytes = 256, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = pp == 0 ? r : r - 2,
                  .dst = pp == 0 ? r + 2 : r, .tag = 7, .root = -1, .coll = ET_COLL_NONE};
    et_builder_set_comm(b, n, &c, NULL, NULL, 0);
    et_builder_add_dep(b, n, 4, TRUE, FALSE);
    GError *e = NULL;
    w->ranks[r] = et_builder_finish(b, ET_BUILD_STRICT, &e);
    fail_on(e);
    (void)dp;
  }
  for (int k = 0; k < 4; k++) {
    int m[2] = {2 * k, 2 * k + 1};
    char name[8];
    g_snprintf(name, sizeof name, "tp%d", k);
    et_workload_add_group(w, name, "mesh_tp", m, 2);
  }
  for (int k = 0; k < 4; k++) {
    int m[2] = {k, k + 4};
    char name[8];
    g_snprintf(name, sizeof name, "dp%d", k);
    et_workload_add_group(w, name, "dp_shard", m, 2);
  }
  GError *e = NULL;
  g_assert_true(et_workload_resolve_groups(w, &e));
  return w;
}

static void test_layout(void)
{
  et_workload *w = mixed();
  et_layout l;
  GError *e = NULL;
  g_assert_true(et_layout_infer(w, NULL, &l, &e));
  /* tp and dp from the group descriptions; pp = 8 / (2 x 2), the factor left. */
  g_assert_cmpint(l.degree[ET_DIM_TP], ==, 2);
  g_assert_cmpint(l.degree[ET_DIM_DP], ==, 2);
  g_assert_cmpint(l.degree[ET_DIM_PP], ==, 2);
  g_assert_cmpint(l.group_dims[0], ==, ET_DIM_BIT(ET_DIM_TP));
  g_assert_cmpint(l.group_dims[4], ==, ET_DIM_BIT(ET_DIM_DP));
  g_assert_true(l.tp_contiguous);
  GString *s = g_string_new(NULL);
  et_layout_describe(&l, w, s);
  g_test_message("%s", s->str);
  g_assert_nonnull(strstr(s->str, "layout: 8 ranks = dp 2 x pp 2 x cp 1 x tp 2 (ep 1)"));
  g_assert_nonnull(strstr(s->str, "groups tp: 4 of 2 ranks, e.g. 'tp0' (mesh_tp), stride 1"));
  g_assert_nonnull(strstr(s->str, "groups dp: 4 of 2 ranks, e.g. 'dp0' (dp_shard), stride 4"));
  g_string_free(s, TRUE);
  et_layout_clear(&l);

  /* Descriptions that combine dimensions: torchtitan's dp_shard_cp. */
  int m[2] = {0, 4};
  et_workload_add_group(w, "x", "dp_shard_cp", m, 2);
  g_assert_true(et_layout_infer(w, NULL, &l, &e));
  g_assert_cmpint(l.group_dims[8], ==, ET_DIM_BIT(ET_DIM_DP) | ET_DIM_BIT(ET_DIM_CP));
  et_layout_clear(&l);

  /* A card classifies unnamed groups by the coordinates their members
   * differ in (torchtitan order, tp innermost): with tp 2, pp 2,
   * dp_shard 2 the ranks {1, 5} differ in dp_shard only... */
  et_workload_add_group(w, "y", NULL, (int[]){1, 5}, 2);
  et_workload_add_group(w, "z", NULL, (int[]){0, 1}, 2);
  et_card card = {.tp = 2, .dp_shard = 2, .pp = 2, .source = (char *)"card.yaml"};
  g_assert_true(et_layout_infer(w, &card, &l, &e));
  g_assert_cmpint(l.group_dims[9], ==, ET_DIM_BIT(ET_DIM_PP)); /* torchtitan: pp outermost, so 1 and 5 differ in pp */
  g_assert_cmpint(l.group_dims[10], ==, ET_DIM_BIT(ET_DIM_TP));
  g_assert_cmpint(l.degree[ET_DIM_DP], ==, 2);
  et_layout_clear(&l);
  /* ...a card that contradicts a named group is an error... */
  card.tp = 1;
  card.dp_shard = 4;
  g_assert_false(et_layout_infer(w, &card, &l, &e));
  g_assert_nonnull(strstr(e->message, "card.yaml: the card gives tp 1 but the trace's groups named 'mesh_tp' have 2 ranks"));
  g_clear_error(&e);
  card.dp_shard = 2;
  /* ...and so is a card whose sizes do not multiply to the ranks. */
  card.tp = 4;
  g_assert_false(et_layout_infer(w, &card, &l, &e));
  g_assert_error(e, WISP_ERROR, WISP_ERROR_INVALID);
  g_test_message("%s", e->message);
  g_assert_nonnull(strstr(e->message, "card.yaml: the card's parallel sizes multiply to 16"));
  g_clear_error(&e);
  et_workload_free(w);
}

static void test_growth_and_sizes(void)
{
  GError *e = NULL;
  et_workload *w = scale(mixed(), 8, ET_PLACE_OUTER, &e);
  fail_on(e);
  /* dp 2 -> 8: K = 4 replicas of 8 ranks. */
  g_assert_cmpint(w->n_ranks, ==, 32);
  g_assert_nonnull(w->scale);
  /* Groups: 4 tp groups kept (replica 0) + 4 dp grown + 4 x 3 tp replicas. */
  g_assert_cmpint(w->groups->len, ==, 4 + 4 + 12);
  const et_group *dp1 = et_workload_group(w, 5);
  g_assert_cmpstr(dp1->name, ==, "dp1");
  g_assert_cmpint(dp1->n_ranks, ==, 8);
  const int want_dp1[8] = {1, 5, 9, 13, 17, 21, 25, 29}; /* traced {1, 5} in replicas 0..3 (+8 each) */
  for (int i = 0; i < 8; i++)
    g_assert_cmpint(dp1->ranks[i], ==, want_dp1[i]);
  const et_group *tp0 = et_workload_group(w, 0);
  g_assert_cmpint(tp0->n_ranks, ==, 2);
  g_assert_cmpint(tp0->ranks[1], ==, 1);

  /* Rank 26 = replica 3 of traced rank 2 (dp 0, pp 1, tp 0). */
  g_assert_cmpint(et_scale_counterpart(w->scale, 26), ==, 2);
  g_assert_cmpint(et_scale_replica(w->scale, 26), ==, 3);
  g_assert_true(w->ranks[26] == w->ranks[2]);
  et_comm tmp;
  const et_graph *g = w->ranks[26];
  /* all-gather on a grown group: S = 2 x 1000 kept, piece 1000 / 4 = 250. */
  const et_comm *c = et_workload_comm(w, 26, g->nodes[0].comm, &tmp);
  g_assert_cmpint(c->group, ==, 6);
  g_assert_cmpuint(c->bytes, ==, 250);
  /* reduce-scatter (whole input) and all-reduce keep their size. */
  c = et_workload_comm(w, 26, g->nodes[1].comm, &tmp);
  g_assert_cmpuint(c->bytes, ==, 4000);
  c = et_workload_comm(w, 26, g->nodes[2].comm, &tmp);
  g_assert_cmpuint(c->bytes, ==, 512);
  /* broadcast on tp group "tp1" (index 1), replicated: replica 3 of it is
   * index rep_base + 2; the root (traced 2) moves to 2 + 3 x 8 = 26. */
  c = et_workload_comm(w, 26, g->nodes[3].comm, &tmp);
  const et_group *tg = et_workload_group(w, c->group);
  g_assert_cmpstr(tg->name, ==, "tp1@replica3");
  g_assert_cmpint(tg->ranks[0], ==, 26);
  g_assert_cmpint(tg->ranks[1], ==, 27);
  g_assert_cmpint(c->root, ==, 26);
  g_assert_cmpuint(c->bytes, ==, 64);
  /* p2p: traced recv from 0 -> from 0 + 24 = 24. */
  c = et_workload_comm(w, 26, g->nodes[4].comm, &tmp);
  g_assert_cmpint(c->src, ==, 24);
  g_assert_cmpint(c->dst, ==, 26);
  GString *sum = g_string_new(et_scale_summary(w->scale));
  g_test_message("%s", sum->str);
  g_assert_nonnull(strstr(sum->str, "scaled: dp 2 -> 8: 8 traced ranks -> 32 ranks (4 replicas"));
  g_assert_nonnull(strstr(sum->str, "groups: 4 spanning dp grown 4x (with the world); 4 others replicated, 20 groups"));
  g_string_free(sum, TRUE);

  /* The scaled job replays: every collective matches across replicas. */
  topo *t = topo_load_string("schema_version: 1\nname: t\nmodel: analytical\nlibrary: {name: ideal}\ndims:\n"
                             "  - {name: node, kind: switch, size: 8, bandwidth: 100GB/s, latency: 1us}\n"
                             "  - {name: net, kind: switch, size: 4, bandwidth: 25GB/s, latency: 2us}\n",
                             "t.yaml", &e);
  fail_on(e);
  g_assert_cmpint(step_of(w, t), >, 0);
  et_workload_free(w);

  /* Placement inner: traced rank c's replicas are c*4 .. c*4+3. */
  w = scale(mixed(), 8, ET_PLACE_INNER, &e);
  fail_on(e);
  g_assert_cmpint(et_scale_counterpart(w->scale, 9), ==, 2);
  g_assert_cmpint(et_scale_replica(w->scale, 9), ==, 1);
  dp1 = et_workload_group(w, 5);
  const int want_inner[8] = {4, 20, 5, 21, 6, 22, 7, 23}; /* traced {1, 5} -> (1*4 + k, 5*4 + k) per replica k */
  for (int i = 0; i < 8; i++)
    g_assert_cmpint(dp1->ranks[i], ==, want_inner[i]);
  c = et_workload_comm(w, 9, w->ranks[9]->nodes[4].comm, &tmp);
  g_assert_cmpint(c->src, ==, 1); /* traced rank 0, replica 1 -> 0*4 + 1 */
  g_assert_cmpint(step_of(w, t), >, 0);
  et_workload_free(w);
  topo_free(t);
}

/* ---- bad requests ---- */

static void test_errors(void)
{
  et_scale_request rq = {0};
  GError *e = NULL;
  const struct { const char *spec; int code; const char *text; } bad[] = {
    {"ep=0", WISP_ERROR_INVALID, "ep must be a whole number from 1"},
    {"mbs=x", WISP_ERROR_INVALID, "mbs must be a whole number from 1"},
    {"tp=2,cp=0", WISP_ERROR_INVALID, "cp must be a whole number from 1"},
    {"xx=2", WISP_ERROR_INVALID, "'xx' is not a parallel dimension"},
    {"dp", WISP_ERROR_INVALID, "expected DIM=N, e.g. --scale dp=64"},
    {"dp=0", WISP_ERROR_INVALID, "dp must be a whole number from 1"},
    {"dp=12x", WISP_ERROR_INVALID, "dp must be a whole number from 1"},
    {"pp=4,sched=zigzag", WISP_ERROR_INVALID, "sched must be gpipe, 1f1b or interleaved_1f1b"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_assert_false(et_scale_parse(bad[i].spec, &rq, &e));
    g_assert_error(e, WISP_ERROR, bad[i].code);
    g_test_message("%s: %s", bad[i].spec, e->message);
    g_assert_nonnull(strstr(e->message, bad[i].text));
    g_clear_error(&e);
  }
  g_assert_true(et_scale_parse("dp=64", &rq, &e) && rq.dp == 64 && rq.tp == 0 && rq.sched == -1);
  g_assert_true(et_scale_parse("ep=8,mbs=2", &rq, &e) && rq.ep == 8 && rq.mbs == 2 && rq.dp == 0);
  g_assert_true(et_scale_parse("tp=2,cp=4", &rq, &e) && rq.tp == 2 && rq.cp == 4 && rq.dp == 0);
  g_assert_true(et_scale_parse("tp=2,pp=4,mb=8,sched=gpipe", &rq, &e));
  g_assert_true(rq.dp == 0 && rq.tp == 2 && rq.pp == 4 && rq.mb == 8 && rq.sched == 1);
  /* vpp= alone selects interleaved 1F1B (et_sched 2); sched= spells it too. */
  g_assert_true(et_scale_parse("pp=4,vpp=2", &rq, &e) && rq.vpp == 2 && rq.sched == 2);
  g_assert_true(et_scale_parse("sched=interleaved_1f1b", &rq, &e) && rq.vpp == 0 && rq.sched == 2);
  et_placement pl;
  g_assert_false(et_placement_parse("diagonal", &pl, &e));
  g_assert_nonnull(strstr(e->message, "--placement 'diagonal': use outer"));
  g_clear_error(&e);

  /* Not a multiple of the traced degree: w is left to the caller. */
  et_workload *w = mixed();
  g_assert_null(scale(w, 3, ET_PLACE_OUTER, &e));
  g_assert_error(e, WISP_ERROR, WISP_ERROR_INVALID);
  g_assert_nonnull(strstr(e->message, "--scale dp=3: the traced job has data-parallel degree 2"));
  g_clear_error(&e);
  /* A group that names no dimension: ask for a card. */
  et_workload_add_group(w, "mystery", NULL, (int[]){0, 3}, 2);
  g_assert_null(scale(w, 4, ET_PLACE_OUTER, &e));
  g_assert_nonnull(strstr(e->message, "group 'mystery' (2 ranks) names no parallel dimension"));
  g_assert_nonnull(strstr(e->message, "--card FILE"));
  g_clear_error(&e);
  et_workload_free(w);
}

/* ---- the command line: --scale, --card, inspect, errors ---- */

static void test_cli(void)
{
  test_example_env v;
  if (!test_example_setup(&v, "wisp-scale-XXXXXX"))
    return;
  /* The bundled example is tp 4 x pp 2 x dp 2; dp=8 gives 64 ranks on
   * 8 nodes of the dgx-a100 preset (resized). */
  char *out = NULL, *err = NULL;
  char *json = g_build_filename(v.dir, "scaled.json", NULL);
  const char *a1[] = {"simulate", v.example, "--network", "dgx-a100", "--scale", "dp=8", "--json", json, NULL};
  g_assert_cmpint(test_wisp_run_in(NULL, a1, &out, &err), ==, 0);
  char *text = NULL;
  g_assert_true(g_file_get_contents(json, &text, NULL, NULL));
  g_assert_nonnull(strstr(text, "\"n_ranks\": 64"));
  g_assert_nonnull(strstr(text, "\"traced_ranks\": 16"));
  g_assert_nonnull(strstr(text, "\"scaling\": \"layout: 16 ranks"));
  g_free(text);
  g_free(json);
  /* The layout and the scaling are said once, in the report on stdout
   * (issue 29 item 9: the block was printed on stderr too). */
  g_assert_nonnull(strstr(out, "layout: 16 ranks = dp 2 x pp 2 x cp 1 x tp 4 (ep 1)"));
  g_assert_nonnull(strstr(out, "scaled: dp 2 -> 8: 16 traced ranks -> 64 ranks"));
  g_assert_null(strstr(err, "scaled: dp 2 -> 8"));
  g_assert_nonnull(strstr(out, "64 ranks"));
  g_free(out);
  g_free(err);

  const char *a2[] = {"utility", v.example, "--network", "dgx-a100", "--scale", "pp=4", NULL};
  g_assert_cmpint(test_wisp_run_in(NULL, a2, NULL, &err), ==, 2);
  g_assert_nonnull(strstr(err, "--scale pp=4 re-partitions the model, which needs a workload card (--card FILE)"));
  g_free(err);

  /* A card the trace does not match. */
  char *card = g_build_filename(v.dir, "card.yaml", NULL);
  g_assert_true(g_file_set_contents(card, "version: 1\nModel-executor:\n  model_plan_parallelization:\n"
                                          "    dp_replicate: 1\n    dp_shard: 2\n    tp: 4\n    pp: 4\n", -1, NULL));
  const char *a3[] = {"simulate", v.example, "--network", "dgx-a100", "--scale", "dp=4", "--card", card, NULL};
  g_assert_cmpint(test_wisp_run_in(NULL, a3, NULL, &err), ==, 1);
  g_assert_nonnull(strstr(err, "the card's parallel sizes multiply to 32"));
  g_free(err);
  g_assert_true(g_file_set_contents(card, "Model-executor:\n  model_plan_parallelization:\n    tp: four\n", -1, NULL));
  g_assert_cmpint(test_wisp_run_in(NULL, a3, NULL, &err), ==, 1);
  g_assert_nonnull(strstr(err, "card.yaml:3: Model-executor.model_plan_parallelization.tp: expected a whole number from 1 to 16777216, got 'four'"));
  g_free(err);

  /* The example (examples/run-scale.sh): 1,024 ranks on two tiers, where
   * scale-out utility is a number, not "not applicable". */
  char *c1024 = g_build_filename(g_getenv("G_TEST_SRCDIR"), "examples", "cluster-1024.yaml", NULL);
  const char *a5[] = {"utility", v.example, "--scale", "dp=128", "--cluster", c1024, "--resource", "scale_out_bw", NULL};
  g_assert_cmpint(test_wisp_run_in(NULL, a5, &out, NULL), ==, 0);
  g_test_message("%s", out);
  g_assert_nonnull(strstr(out, "(scaled dp 2 -> 128): 1024 ranks"));
  const char *row = strstr(out, "\nscale_out_bw ");
  g_assert_nonnull(row);
  double T = 0, T2 = 0, u = 0;
  g_assert_cmpint(sscanf(row, " scale_out_bw %lf %lf %lf", &T, &T2, &u), ==, 3);
  /* Utility = (T - T_2x) / T x 100, printed to 4 decimals; the DP
   * all-reduce crosses 128 nodes, so doubling scale-out must pay. */
  g_assert_cmpfloat(fabs(u - (T - T2) / T * 100), <, 1e-3);
  g_assert_cmpfloat(u, >, 1.0);
  g_free(out);
  g_free(c1024);

  /* inspect prints the inferred layout. */
  const char *a4[] = {"inspect", v.example, NULL};
  g_assert_cmpint(test_wisp_run_in(NULL, a4, &out, NULL), ==, 0);
  g_assert_nonnull(strstr(out, "layout: 16 ranks = dp 2 x pp 2 x cp 1 x tp 4 (ep 1)"));
  g_free(out);
  g_free(card);
  test_example_teardown(&v);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/scale/closed-form", test_closed_form);
  g_test_add_func("/scale/layout", test_layout);
  g_test_add_func("/scale/growth-and-sizes", test_growth_and_sizes);
  g_test_add_func("/scale/errors", test_errors);
  g_test_add_func("/scale/cli", test_cli);
  return g_test_run();
}
