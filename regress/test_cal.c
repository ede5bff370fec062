/* test_cal.c: calibration (alpha-beta fit per class), the calibrated
 * config and the baseline fidelity report, on workloads built in memory
 * whose measured durations come from the alpha-beta model with known
 * parameters and the ring formulas written out below (independently of
 * calib/cal_fit.c's tables).
 */
#include "config.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "calib/cal.h"
#include "collectives/coll.h"

/* Known parameters of the synthetic traces. */
#define A_INTRA 700000.0     /* 700 ns per step */
#define B_INTRA 150e9        /* 150 GB/s */
#define A_INTER 5000000.0    /* 5 us per step */
#define B_INTER 20e9         /* 20 GB/s */

/* Ring model, written out per collective (doc/calibration.md, table 1):
 * all-reduce 2(n-1) steps and 2(n-1)/n * S bytes; reduce-scatter (S = full
 * input) and all-to-all (S = send buffer) n-1 and (n-1)/n * S; all-gather
 * (comm_size c = shard) n-1 and (n-1) * c; broadcast n-1 and S. */
static void ring_model(et_coll_type op, int n, uint64_t s, double *steps, double *bus)
{
  switch (op) {
  case ET_COLL_ALL_REDUCE:
    *steps = 2.0 * (n - 1);
    *bus = 2.0 * (n - 1) / n * (double)s;
    break;
  case ET_COLL_ALL_GATHER:
    *steps = n - 1;
    *bus = (double)(n - 1) * (double)s;
    break;
  case ET_COLL_BROADCAST:
    *steps = n - 1;
    *bus = (double)s;
    break;
  default: /* reduce-scatter, all-to-all */
    *steps = n - 1;
    *bus = (double)(n - 1) / n * (double)s;
    break;
  }
}

static sim_time_ps model_ps(et_coll_type op, int n, uint64_t s, double alpha, double beta)
{
  double steps, bus;
  ring_model(op, n, s, &steps, &bus);
  return (sim_time_ps)llround(steps * alpha + bus * 1e12 / beta);
}

/* ---- building synthetic workloads ---- */

typedef struct {
  int n_ranks;
  et_workload *w;
  et_builder **b;
  uint64_t *next_id;       /* per rank */
  sim_time_ps *clock;      /* per rank: measured timeline */
  gint64 *last;            /* per rank: previous node id, -1 none */
} synth;

static synth *synth_new(int n_ranks)
{
  synth *s = g_new0(synth, 1);
  s->n_ranks = n_ranks;
  s->w = et_workload_new(n_ranks, "synthetic");
  s->b = g_new0(et_builder *, n_ranks);
  s->next_id = g_new0(uint64_t, n_ranks);
  s->clock = g_new0(sim_time_ps, n_ranks);
  s->last = g_new(gint64, n_ranks);
  for (int r = 0; r < n_ranks; r++) {
    s->b[r] = et_builder_new("synthetic");
    s->last[r] = -1;
  }
  return s;
}

static uint32_t synth_group(synth *s, const char *name, const int *ranks, int n)
{
  uint32_t g = et_workload_add_group(s->w, name, NULL, ranks, n);
  g_assert_cmpuint(g, !=, ET_NONE);
  return g;
}

/* Adds node to rank r at the rank's clock, chained after its previous node. */
static uint32_t synth_node(synth *s, int r, et_node_type type, sim_time_ps dur, sim_time_ps start)
{
  uint64_t id = s->next_id[r]++;
  uint32_t i = et_builder_add_node(s->b[r], id, type, type == ET_NODE_COMP ? "comp" : "comm", dur, 0);
  et_builder_set_start(s->b[r], i, start);
  if (s->last[r] >= 0)
    et_builder_add_dep(s->b[r], i, (uint64_t)s->last[r], TRUE, FALSE);
  s->last[r] = (gint64)id;
  return i;
}

/* One collective on every member of group g (ranks[]), each measured at
 * dur, started at the member's clock; clocks then advance by dur + 1 us. */
static void synth_coll(synth *s, uint32_t g, et_coll_type op, uint64_t bytes, sim_time_ps dur)
{
  const et_group *grp = et_workload_group(s->w, g);
  for (int m = 0; m < grp->n_ranks; m++) {
    int r = grp->ranks[m];
    uint32_t i = synth_node(s, r, ET_NODE_COMM_COLL, dur, s->clock[r]);
    et_comm c = { .bytes = bytes, .group = g, .split = ET_NONE, .src = -1, .dst = -1, .tag = -1,
                  .root = op == ET_COLL_BROADCAST ? grp->ranks[0] : -1, .coll = op };
    et_builder_set_comm(s->b[r], i, &c, grp->name, NULL, 0);
    s->clock[r] += dur + SIM_PS_PER_US;
  }
}

static et_workload *synth_finish(synth *s)
{
  et_workload *w = s->w;
  for (int r = 0; r < s->n_ranks; r++) {
    if (s->next_id[r] == 0)
      et_builder_add_node(s->b[r], 0, ET_NODE_COMP, "idle", 0, 0);
    GError *error = NULL;
    w->ranks[r] = et_builder_finish(s->b[r], 0, &error);
    g_assert_no_error(error);
    w->measured_step_ps[r] = s->clock[r];
  }
  GError *error = NULL;
  g_assert_true(et_workload_resolve_groups(w, &error));
  g_assert_no_error(error);
  g_free(s->b);
  g_free(s->next_id);
  g_free(s->clock);
  g_free(s->last);
  g_free(s);
  return w;
}

/* 16 ranks in 2 domains of 8.  Intra groups: {0..7} (n 8), {0..3} (n 4),
 * {8,9} (n 2); inter groups: {0..15} (n 16), {0,8} (n 2), {0,4,8,12} (n 4).
 * Every op at every size on every group: 6 groups x 5 ops x 4 sizes = 120
 * instances, 60 per class. */
static const uint64_t sizes[] = { 65536, 1048576, 16777216, 268435456 };
static const et_coll_type ops[] = { ET_COLL_ALL_REDUCE, ET_COLL_ALL_GATHER, ET_COLL_REDUCE_SCATTER,
                                    ET_COLL_ALL_TO_ALL, ET_COLL_BROADCAST };

static et_workload *two_class_workload(void)
{
  synth *s = synth_new(16);
  int all8[8] = { 0, 1, 2, 3, 4, 5, 6, 7 }, four[4] = { 0, 1, 2, 3 }, pair[2] = { 8, 9 };
  int all16[16], cross2[2] = { 0, 8 }, cross4[4] = { 0, 4, 8, 12 };
  for (int k = 0; k < 16; k++)
    all16[k] = k;
  struct { uint32_t g; gboolean inter; } groups[6] = {
    { synth_group(s, "a8", all8, 8), FALSE }, { synth_group(s, "a4", four, 4), FALSE },
    { synth_group(s, "p2", pair, 2), FALSE }, { synth_group(s, "w16", all16, 16), TRUE },
    { synth_group(s, "x2", cross2, 2), TRUE }, { synth_group(s, "x4", cross4, 4), TRUE },
  };
  for (int gi = 0; gi < 6; gi++)
    for (size_t o = 0; o < G_N_ELEMENTS(ops); o++)
      for (size_t z = 0; z < G_N_ELEMENTS(sizes); z++) {
        int n = et_workload_group(s->w, groups[gi].g)->n_ranks;
        sim_time_ps d = groups[gi].inter ? model_ps(ops[o], n, sizes[z], A_INTER, B_INTER)
                                         : model_ps(ops[o], n, sizes[z], A_INTRA, B_INTRA);
        synth_coll(s, groups[gi].g, ops[o], sizes[z], d);
      }
  return synth_finish(s);
}

static double rel(double got, double want)
{
  return fabs(got - want) / want;
}

static void test_recovers_alpha_beta(void)
{
  et_workload *w = two_class_workload();
  cal_options opt;
  cal_options_init(&opt);
  opt.domain_size = 8;
  GError *error = NULL;
  cal_fit *f = cal_fit_workload(w, &opt, &error);
  g_assert_no_error(error);
  const cal_class_fit *ci = &f->cls[CAL_CLASS_INTRA], *ce = &f->cls[CAL_CLASS_INTER];
  if (g_test_verbose())
    cal_fit_print(f, TRUE, stdout);
  g_test_message("intra: alpha %.3f ns (true 700), beta %.6f GB/s (true 150); inter: alpha %.3f ns (true 5000), "
                 "beta %.6f GB/s (true 20)", ci->alpha_ps / 1e3, ci->beta_Bps / 1e9, ce->alpha_ps / 1e3,
                 ce->beta_Bps / 1e9);
  /* 3 groups x 5 ops x 4 sizes = 60 instances per class, 4 distinct sizes. */
  g_assert_cmpint(ci->n_points, ==, 60);
  g_assert_cmpint(ce->n_points, ==, 60);
  g_assert_cmpint(ci->n_sizes, ==, 4);
  g_assert_true(ci->fitted && ce->fitted);
  g_assert_false(ci->alpha_from_prior || ci->beta_from_prior || ci->alpha_clamped);
  /* Within 1 % (the bar); the only error is rounding durations to
   * whole picoseconds, so the fit is in fact far closer. */
  g_assert_cmpfloat(rel(ci->alpha_ps, A_INTRA), <, 0.01);
  g_assert_cmpfloat(rel(ci->beta_Bps, B_INTRA), <, 0.01);
  g_assert_cmpfloat(rel(ce->alpha_ps, A_INTER), <, 0.01);
  g_assert_cmpfloat(rel(ce->beta_Bps, B_INTER), <, 0.01);
  g_assert_cmpfloat(rel(ci->alpha_ps, A_INTRA), <, 1e-4);
  g_assert_cmpfloat(rel(ce->beta_Bps, B_INTER), <, 1e-6);
  g_assert_cmpfloat(ci->rms_rel_pct, <, 1e-3);
  for (int e = 1; e < CAL_EX_COUNT; e++)
    g_assert_cmpuint(f->excluded[e], ==, 0);
  /* 120 instances from 3*8+... member nodes: groups of 8+4+2+16+2+4 = 36
   * members x 20 collectives = 720 nodes. */
  g_assert_cmpuint(f->instances, ==, 120);
  g_assert_cmpuint(f->comm_nodes, ==, 720);
  /* The absolute loss recovers the same parameters from exact data. */
  opt.loss = CAL_LOSS_ABSOLUTE;
  cal_fit *fa = cal_fit_workload(w, &opt, &error);
  g_assert_no_error(error);
  g_assert_cmpfloat(rel(fa->cls[CAL_CLASS_INTER].alpha_ps, A_INTER), <, 0.01);
  g_assert_cmpfloat(rel(fa->cls[CAL_CLASS_INTRA].beta_Bps, B_INTRA), <, 0.01);
  cal_fit_free(fa);
  /* Printing names both classes. */
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  cal_fit_print(f, TRUE, mem);
  fclose(mem);
  g_assert_nonnull(strstr(buf, "intra-node"));
  g_assert_nonnull(strstr(buf, "inter-node"));
  g_assert_nonnull(strstr(buf, "excluded: none"));
  free(buf);
  cal_fit_free(f);
  et_workload_free(w);
}

/* An instance whose every member overlapped other communication is left
 * out; instances with one clean member use that member. */
static void test_overlap_exclusion(void)
{
  synth *s = synth_new(4);
  int g01[2] = { 0, 1 }, g02[2] = { 0, 2 }, g13[2] = { 1, 3 };
  uint32_t a = synth_group(s, "a", g01, 2), b = synth_group(s, "b", g02, 2), c = synth_group(s, "c", g13, 2);
  /* Clean points, 2 sizes on group a. */
  for (int k = 0; k < 2; k++)
    synth_coll(s, a, ET_COLL_ALL_REDUCE, sizes[k + 1], model_ps(ET_COLL_ALL_REDUCE, 2, sizes[k + 1], A_INTRA, B_INTRA));
  /* X on a, inflated 10x: if it were used the fit would be wrong. */
  sim_time_ps x = 10 * model_ps(ET_COLL_ALL_REDUCE, 2, sizes[3], A_INTRA, B_INTRA);
  sim_time_ps t0 = MAX(s->clock[0], s->clock[1]);
  for (int r = 0; r < 4; r++)
    s->clock[r] = t0;
  synth_coll(s, a, ET_COLL_ALL_REDUCE, sizes[3], x);
  /* Y1 on b starts on rank 0 inside X (t0 + 1 ns); Y2 on c inside X on rank 1. */
  for (int r = 0; r < 4; r++)
    s->clock[r] = t0 + 1000;
  sim_time_ps y = model_ps(ET_COLL_ALL_REDUCE, 2, sizes[0], A_INTRA, B_INTRA);
  synth_coll(s, b, ET_COLL_ALL_REDUCE, sizes[0], y);
  synth_coll(s, c, ET_COLL_ALL_REDUCE, sizes[0], y);
  et_workload *w = synth_finish(s);
  cal_options opt;
  cal_options_init(&opt);
  opt.domain_size = 8;
  GError *error = NULL;
  cal_fit *f = cal_fit_workload(w, &opt, &error);
  g_assert_no_error(error);
  /* X excluded (both members overlapped); Y1 and Y2 each have one clean
   * member (ranks 2 and 3): 2 + 2 = 4 points. */
  g_assert_cmpuint(f->excluded[CAL_EX_OVERLAP], ==, 1);
  g_assert_cmpint(f->cls[CAL_CLASS_INTRA].n_points, ==, 4);
  g_assert_cmpfloat(rel(f->cls[CAL_CLASS_INTRA].beta_Bps, B_INTRA), <, 0.01);
  g_assert_cmpfloat(rel(f->cls[CAL_CLASS_INTRA].alpha_ps, A_INTRA), <, 0.01);
  gboolean found = FALSE;
  for (guint k = 0; k < f->points->len; k++) {
    const cal_point *p = &g_array_index(f->points, cal_point, k);
    if (p->excluded == CAL_EX_OVERLAP) {
      found = TRUE;
      g_assert_cmpint(p->members_overlapped, ==, 2);
      g_assert_cmpint(p->bytes, ==, sizes[3]);
    }
    if (p->excluded == CAL_USED && p->group == b)
      g_assert_cmpint(p->rank, ==, 2);
    if (p->excluded == CAL_USED && p->group == c)
      g_assert_cmpint(p->rank, ==, 3);
  }
  g_assert_true(found);
  cal_fit_free(f);
  et_workload_free(w);
}

/* One distinct size: alpha and beta cannot be separated; alpha is fixed to
 * the prior and beta fitted: with every point T = 14 a + 1.75 S / B
 * (all-reduce, n = 8), 1/beta' = (T - 14 p) / (1.75 S). */
static void test_single_size(void)
{
  synth *s = synth_new(8);
  int all8[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
  uint32_t g = synth_group(s, "a8", all8, 8);
  sim_time_ps t = model_ps(ET_COLL_ALL_REDUCE, 8, 1048576, A_INTRA, B_INTRA);
  for (int k = 0; k < 3; k++)
    synth_coll(s, g, ET_COLL_ALL_REDUCE, 1048576, t);
  et_workload *w = synth_finish(s);
  cal_options opt;
  cal_options_init(&opt);
  opt.prior_alpha_ps[CAL_CLASS_INTRA] = 500000.0; /* 500 ns prior, not the true 700 */
  GError *error = NULL;
  cal_fit *f = cal_fit_workload(w, &opt, &error);
  g_assert_no_error(error);
  const cal_class_fit *cf = &f->cls[CAL_CLASS_INTRA];
  g_assert_true(cf->alpha_from_prior);
  g_assert_cmpfloat(cf->alpha_ps, ==, 500000.0);
  double want_beta = 1.75 * 1048576.0 * 1e12 / ((double)t - 14 * 500000.0);
  g_assert_cmpfloat(rel(cf->beta_Bps, want_beta), <, 1e-9);
  g_assert_nonnull(cf->note);
  g_assert_nonnull(strstr(cf->note, "one distinct size"));
  g_assert_nonnull(strstr(cf->note, "cannot be separated"));
  g_test_message("note: %s", cf->note);
  /* The inter class had no points: prior kept, said so. */
  g_assert_false(f->cls[CAL_CLASS_INTER].fitted);
  g_assert_nonnull(strstr(f->cls[CAL_CLASS_INTER].note, "no usable collective"));
  cal_fit_free(f);
  /* A prior larger than the measured time: alpha falls to 0 and beta
   * takes the whole time: beta = 1.75 S / T. */
  opt.prior_alpha_ps[CAL_CLASS_INTRA] = (double)t;
  f = cal_fit_workload(w, &opt, &error);
  g_assert_no_error(error);
  cf = &f->cls[CAL_CLASS_INTRA];
  g_assert_cmpfloat(cf->alpha_ps, ==, 0.0);
  g_assert_cmpfloat(rel(cf->beta_Bps, 1.75 * 1048576.0 * 1e12 / (double)t), <, 1e-9);
  g_assert_nonnull(strstr(cf->note, "alpha was set to 0"));
  cal_fit_free(f);
  et_workload_free(w);
}

/* Time that does not grow with size cannot give a bandwidth. */
static void test_flat_time(void)
{
  synth *s = synth_new(2);
  int g01[2] = { 0, 1 };
  uint32_t g = synth_group(s, "a", g01, 2);
  for (size_t k = 0; k < G_N_ELEMENTS(sizes); k++)
    synth_coll(s, g, ET_COLL_ALL_REDUCE, sizes[k], 50 * SIM_PS_PER_US);
  et_workload *w = synth_finish(s);
  cal_options opt;
  cal_options_init(&opt);
  GError *error = NULL;
  cal_fit *f = cal_fit_workload(w, &opt, &error);
  g_assert_no_error(error);
  const cal_class_fit *cf = &f->cls[CAL_CLASS_INTRA];
  /* With constant times, the unconstrained fit has a negative slope or
   * zero slope; the prior bandwidth is kept. */
  g_assert_true(cf->beta_from_prior);
  g_assert_cmpfloat(cf->beta_Bps, ==, opt.prior_beta_Bps[CAL_CLASS_INTRA]);
  g_assert_nonnull(strstr(cf->note, "does not grow with size"));
  cal_fit_free(f);
  et_workload_free(w);
}

static void test_no_comm(void)
{
  synth *s = synth_new(2);
  synth_node(s, 0, ET_NODE_COMP, SIM_PS_PER_US, 0);
  synth_node(s, 1, ET_NODE_COMP, SIM_PS_PER_US, 0);
  et_workload *w = synth_finish(s);
  cal_options opt;
  cal_options_init(&opt);
  GError *error = NULL;
  cal_fit *f = cal_fit_workload(w, &opt, &error);
  g_assert_null(f);
  g_assert_error(error, WISP_ERROR, WISP_ERROR_INVALID);
  g_test_message("%s", error->message);
  g_assert_nonnull(strstr(error->message, "no communication kernel can be used"));
  g_assert_nonnull(strstr(error->message, "0 communication nodes"));
  g_clear_error(&error);
  et_workload_free(w);
}

/* Zero-byte collectives and point-to-point nodes are counted, with reasons. */
static void test_zero_bytes_and_p2p(void)
{
  synth *s = synth_new(2);
  int g01[2] = { 0, 1 };
  uint32_t g = synth_group(s, "a", g01, 2);
  synth_coll(s, g, ET_COLL_ALL_REDUCE, 0, 10 * SIM_PS_PER_US);
  synth_coll(s, g, ET_COLL_ALL_REDUCE, 0, 10 * SIM_PS_PER_US);
  uint32_t i = synth_node(s, 0, ET_NODE_COMM_SEND, 5 * SIM_PS_PER_US, s->clock[0]);
  et_comm c = { .bytes = 4096, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = 0, .dst = 1, .tag = 0,
                .root = -1, .coll = ET_COLL_NONE };
  et_builder_set_comm(s->b[0], i, &c, NULL, NULL, 0);
  et_workload *w = synth_finish(s);
  cal_options opt;
  cal_options_init(&opt);
  GError *error = NULL;
  cal_fit *f = cal_fit_workload(w, &opt, &error);
  g_assert_null(f);
  g_assert_error(error, WISP_ERROR, WISP_ERROR_INVALID);
  g_test_message("%s", error->message);
  /* 2 instances of zero bytes, 1 send; 5 communication nodes. */
  g_assert_nonnull(strstr(error->message, "5 communication nodes, 2 collective instances"));
  g_assert_nonnull(strstr(error->message, "2 zero bytes"));
  g_assert_nonnull(strstr(error->message, "1 point-to-point"));
  g_clear_error(&error);
  et_workload_free(w);
}

/* ---- cluster mapping, written config and the simulator ---- */

static const char *cluster_yaml =
  "schema_version: 1\nlibrary: {name: ideal}\n"
  "name: test-2node\n"
  "dims:\n"
  "  - {name: nvlink, kind: switch, size: 8, bandwidth: 450GB/s, latency: 500ns}\n"
  "  - {name: ib, kind: switch, size: 2, bandwidth: 400Gbps, latency: 1us}\n";

static void test_config_roundtrip(void)
{
  GError *error = NULL;
  topo *base = topo_load_string(cluster_yaml, "test-2node.yaml", &error);
  g_assert_no_error(error);
  topo_variant *v = topo_variant_new(base);
  topo_free(base);
  cal_options opt;
  cal_options_init(&opt);
  int *dom = NULL;
  g_assert_true(cal_options_from_cluster(&opt, v, 16, &dom, &error));
  g_assert_no_error(error);
  /* Priors: a switch step is 2 traversals: 2 x 500 ns and 2 x 1 us;
   * 400 Gb/s = 50 GB/s.  Domains: rank / 8. */
  g_assert_cmpfloat(opt.prior_alpha_ps[CAL_CLASS_INTRA], ==, 1e6);
  g_assert_cmpfloat(opt.prior_beta_Bps[CAL_CLASS_INTRA], ==, 450e9);
  g_assert_cmpfloat(opt.prior_alpha_ps[CAL_CLASS_INTER], ==, 2e6);
  g_assert_cmpfloat(opt.prior_beta_Bps[CAL_CLASS_INTER], ==, 50e9);
  for (int r = 0; r < 16; r++)
    g_assert_cmpint(dom[r], ==, r / 8);
  et_workload *w = two_class_workload();
  cal_fit *f = cal_fit_workload(w, &opt, &error);
  g_assert_no_error(error);
  char *dir = g_dir_make_tmp("wisp-cal-XXXXXX", &error);
  g_assert_no_error(error);
  char *path = g_build_filename(dir, "calibrated.yaml", NULL);
  g_assert_true(cal_write_config(f, v, "from synthetic\nsecond line", path, &error));
  g_assert_no_error(error);
  char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  g_assert_true(g_str_has_prefix(text, "# from synthetic\n# second line\n"));
  g_free(text);
  topo *t = topo_load(path, &error);
  g_assert_no_error(error);
  /* Link latency = alpha / 2 traversals, bandwidth = beta, each rounded to
   * 4 significant digits (cal_round_sig4; the text says e.g. "150GB/s"). */
  for (uint32_t k = 0; k < topo_n_links(t); k++) {
    const topo_link *l = topo_get_link(t, k);
    const cal_class_fit *cf = &f->cls[l->tier == 0 ? CAL_CLASS_INTRA : CAL_CLASS_INTER];
    g_assert_cmpint(l->latency, ==, llround(cal_round_sig4(cf->alpha_ps / 2)));
    g_assert_cmpuint(l->bw, ==, (wisp_bw_Bps)llround(cal_round_sig4(cf->beta_Bps)));
  }
  /* The simulator on the written config reproduces the model for groups
   * inside one tier: ring all-reduce of 16 MiB on 8 ranks of a node,
   * T = 14 (2 L) + 14 (S/8) / B, and on the pair {0, 8} across nodes,
   * T = 2 (2 L') + 2 (S/2) / B'.  Tolerance: per-transfer picosecond
   * rounding, far below 0.01 %. */
  coll_policy *pol = coll_policy_new_from_topo(t, &error);
  g_assert_no_error(error);
  int ranks8[8] = { 0, 1, 2, 3, 4, 5, 6, 7 }, pair[2] = { 0, 8 };
  coll_desc d8 = { .type = ET_COLL_ALL_REDUCE, .bytes = 16777216, .ranks = ranks8, .n_ranks = 8, .root = -1 };
  coll_desc d2 = { .type = ET_COLL_ALL_REDUCE, .bytes = 16777216, .ranks = pair, .n_ranks = 2, .root = -1 };
  coll_info info;
  sim_time_ps t8 = 0, t2 = 0;
  g_assert_true(coll_measure(t, NET_TIER_ANALYTICAL, pol, &d8, &t8, &info, &error));
  g_assert_cmpint(info.algo, ==, COLL_ALGO_RING);
  g_assert_true(coll_measure(t, NET_TIER_ANALYTICAL, pol, &d2, &t2, &info, &error));
  double m8 = 14 * A_INTRA + 14 * (16777216.0 / 8) * 1e12 / B_INTRA;
  double m2 = 2 * A_INTER + 2 * (16777216.0 / 2) * 1e12 / B_INTER;
  g_test_message("simulated %" G_GINT64_FORMAT " ps vs model %.0f; %" G_GINT64_FORMAT " ps vs %.0f", t8, m8, t2, m2);
  g_assert_cmpfloat(rel((double)t8, m8), <, 1e-4);
  g_assert_cmpfloat(rel((double)t2, m2), <, 1e-4);
  /* Broadcast on the pair {8, 9} inside node 1: one step of S,
   * T = 2 L + S / B. */
  int p89[2] = { 8, 9 };
  coll_desc db = { .type = ET_COLL_BROADCAST, .bytes = 16777216, .ranks = p89, .n_ranks = 2, .root = 8 };
  sim_time_ps tb = 0;
  g_assert_true(coll_measure(t, NET_TIER_ANALYTICAL, pol, &db, &tb, &info, &error));
  double mb = A_INTRA + 16777216.0 * 1e12 / B_INTRA;
  g_test_message("broadcast: simulated %" G_GINT64_FORMAT " ps (%s) vs model %.0f", tb, coll_algo_name(info.algo), mb);
  g_assert_cmpfloat(rel((double)tb, mb), <, 1e-4);
  coll_policy_free(pol);
  topo_free(t);
  g_unlink(path);
  g_rmdir(dir);
  g_free(path);
  g_free(dir);
  cal_fit_free(f);
  et_workload_free(w);
  g_free(dom);
  topo_variant_free(v);
}

/* Inter-node data from the flat ring model (as NCCL runs it) while wisp
 * runs full sub-grid groups ({0..15}, {0,4,8,12}) hierarchically: the
 * direct mapping alpha/hops, beta does not reproduce them, the refit
 * against the simulator must do better; intra-node groups on the switch
 * tier are reproduced exactly and keep the direct mapping. */
static void test_refit_to_simulator(void)
{
  GError *error = NULL;
  topo *base = topo_load_string(cluster_yaml, "test-2node.yaml", &error);
  g_assert_no_error(error);
  topo_variant *v = topo_variant_new(base);
  topo_free(base);
  cal_options opt;
  cal_options_init(&opt);
  int *dom = NULL;
  g_assert_true(cal_options_from_cluster(&opt, v, 16, &dom, &error));
  et_workload *w = two_class_workload();
  cal_fit *f = cal_fit_workload(w, &opt, &error);
  g_assert_no_error(error);
  g_assert_true(cal_refit_to_simulator(f, w, v, NET_TIER_ANALYTICAL, &error));
  g_assert_no_error(error);
  const cal_tier_refit *ri = &f->refit[CAL_CLASS_INTRA], *re = &f->refit[CAL_CLASS_INTER];
  g_test_message("intra: %d points, rms %.4f %% -> %.4f %% (%s); inter: %d points, rms %.3f %% -> %.3f %% (%s), "
                 "latency %.3f ns, bandwidth %.3f GB/s", ri->points, ri->rms_before_pct, ri->rms_after_pct,
                 ri->done ? "refitted" : "kept", re->points, re->rms_before_pct, re->rms_after_pct,
                 re->done ? "refitted" : "kept", re->latency_ps / 1e3, re->bw_Bps / 1e9);
  /* Intra: 3 groups x 4 sizes x 5 ops, all distinct = 60; broadcast of n
   * ranks runs `direct` (one alpha instead of n-1), so the direct
   * mapping is off only on the latency of broadcasts of 4 and 8 ranks. */
  g_assert_cmpint(ri->points, ==, 60);
  g_assert_cmpint(re->points, ==, 60);
  g_assert_true(re->done);
  g_assert_cmpfloat(re->rms_after_pct, <, re->rms_before_pct);
  g_assert_cmpfloat(ri->rms_after_pct, <=, ri->rms_before_pct);
  /* The written config carries the refitted scale-out values. */
  char *dir = g_dir_make_tmp("wisp-cal-XXXXXX", &error);
  char *path = g_build_filename(dir, "c.yaml", NULL);
  g_assert_true(cal_write_config(f, v, NULL, path, &error));
  g_assert_no_error(error);
  topo *t = topo_load(path, &error);
  g_assert_no_error(error);
  for (uint32_t k = 0; k < topo_n_links(t); k++) {
    const topo_link *l = topo_get_link(t, k);
    if (l->tier != 1)
      continue;
    g_assert_cmpint(l->latency, ==, llround(cal_round_sig4(re->latency_ps)));
    g_assert_cmpuint(l->bw, ==, (wisp_bw_Bps)llround(cal_round_sig4(re->bw_Bps)));
  }
  topo_free(t);
  g_unlink(path);
  g_rmdir(dir);
  g_free(path);
  g_free(dir);
  cal_fit_free(f);
  et_workload_free(w);
  g_free(dom);
  topo_variant_free(v);
}

static void test_digest(void)
{
  GError *error = NULL;
  char *dir = g_dir_make_tmp("wisp-cal-XXXXXX", &error);
  g_assert_no_error(error);
  char *a = g_build_filename(dir, "rank0.json", NULL), *b = g_build_filename(dir, "rank1.json", NULL);
  g_assert_true(g_file_set_contents(a, "abc", 3, NULL));
  g_assert_true(g_file_set_contents(b, "de", 2, NULL));
  int n = 0;
  char *d1 = cal_trace_digest(dir, &n, &error);
  g_assert_no_error(error);
  g_assert_cmpint(n, ==, 2);
  /* SHA-256 of the sorted "name\tsize\n" list, computed here directly. */
  const char *list = "rank0.json\t3\nrank1.json\t2\n";
  char *want = g_compute_checksum_for_string(G_CHECKSUM_SHA256, list, -1);
  g_assert_cmpstr(d1, ==, want);
  g_assert_true(g_file_set_contents(b, "def", 3, NULL));
  char *d2 = cal_trace_digest(dir, &n, &error);
  g_assert_cmpstr(d1, !=, d2);
  g_assert_null(cal_trace_digest("/nonexistent/wisp-cal", &n, &error));
  g_assert_error(error, WISP_ERROR, WISP_ERROR_IO);
  g_clear_error(&error);
  g_unlink(a);
  g_unlink(b);
  g_rmdir(dir);
  g_free(a);
  g_free(b);
  g_free(d1);
  g_free(d2);
  g_free(want);
  g_free(dir);
}

/* ---- baseline ---- */

static void test_size_bins(void)
{
  /* Powers of 4 from 1 KiB. */
  g_assert_cmpint(cal_size_bin(0), ==, 0);
  g_assert_cmpint(cal_size_bin(1023), ==, 0);
  g_assert_cmpint(cal_size_bin(1024), ==, 1);
  g_assert_cmpint(cal_size_bin(4095), ==, 1);
  g_assert_cmpint(cal_size_bin(4096), ==, 2);
  g_assert_cmpint(cal_size_bin(1048576), ==, 6);      /* 1 MiB = 4^5 KiB: bin 6 [1,4) MiB */
  g_assert_cmpstr(cal_size_bin_label(6), ==, "1MiB-4MiB");
  g_assert_cmpint(cal_size_bin((1u << 30) - 1), ==, 10);
  g_assert_cmpint(cal_size_bin(1u << 30), ==, 11);
  g_assert_cmpint(cal_size_bin(UINT64_MAX), ==, 11);
}

static sim_result *fake_result(sim_time_ps step)
{
  sim_result *r = g_new0(sim_result, 1);
  r->n_ranks = 2;
  r->ranks = g_new0(sim_rank_stats, 2);
  r->comms = g_array_new(FALSE, TRUE, sizeof(sim_comm_record));
  r->step_time = step;
  return r;
}

static void add_rec(sim_result *r, et_coll_type op, uint64_t bytes, sim_time_ps sim, sim_time_ps meas)
{
  sim_comm_record c = { 0 };
  c.op = op;
  c.node_type = ET_NODE_COMM_COLL;
  c.bytes = bytes;
  c.start = 1000;
  c.end = 1000 + sim;
  c.measured = meas;
  g_array_append_val(r->comms, c);
}

static void test_baseline_report(void)
{
  et_workload *w = et_workload_new(2, "fake");
  w->measured_step_ps[0] = 1000000;   /* 1 us */
  w->measured_step_ps[1] = 980000;
  sim_result *r = fake_result(1050000);
  /* all_reduce 1 MiB: sim 110 vs 100 -> +10 %; all_reduce 2 MiB (same
   * bin): 95 vs 100 -> -5 %: mean |err| 7.5 %, signed mean +2.5 %, worst
   * +10 %.  all_to_all 8 KiB: 90 vs 100 -> -10 %.  One record without a
   * measurement.  Overall: mean |err| (10 + 5 + 10) / 3 = 8.333 %, worst
   * +10 % (first of equal magnitudes). */
  add_rec(r, ET_COLL_ALL_REDUCE, 1048576, 110000, 100000);
  add_rec(r, ET_COLL_ALL_REDUCE, 2097152, 95000, 100000);
  add_rec(r, ET_COLL_ALL_TO_ALL, 8192, 90000, 100000);
  add_rec(r, ET_COLL_ALL_TO_ALL, 8192, 90000, 0);
  cal_baseline b;
  cal_baseline_compute(r, w, &b);
  /* Step: (1,050,000 - 1,000,000) / 1,000,000 = +5 %, max over ranks is rank 0. */
  g_assert_cmpint(b.meas_step, ==, 1000000);
  g_assert_cmpint(b.meas_step_rank, ==, 0);
  g_assert_cmpfloat(fabs(b.step_err_pct - 5.0), <, 1e-9);
  g_assert_cmpuint(b.comms, ==, 4);
  g_assert_cmpuint(b.comms_measured, ==, 3);
  g_assert_cmpfloat(fabs(b.mean_abs_pct - 25.0 / 3), <, 1e-9);
  g_assert_cmpfloat(b.worst_pct, ==, 10.0);
  g_assert_cmpuint(b.rows->len, ==, 2);
  const cal_baseline_row *ar = &g_array_index(b.rows, cal_baseline_row, 0);
  g_assert_cmpstr(ar->op, ==, "all_reduce");
  g_assert_cmpint(ar->bin, ==, 6);
  g_assert_cmpuint(ar->count, ==, 2);
  g_assert_cmpfloat(fabs(ar->mean_abs_pct - 7.5), <, 1e-9);
  g_assert_cmpfloat(fabs(ar->mean_pct - 2.5), <, 1e-9);
  g_assert_cmpfloat(ar->worst_pct, ==, 10.0);
  const cal_baseline_row *aa = &g_array_index(b.rows, cal_baseline_row, 1);
  g_assert_cmpstr(aa->op, ==, "all_to_all");
  g_assert_cmpint(aa->bin, ==, 2);
  g_assert_cmpfloat(aa->worst_pct, ==, -10.0);
  cal_baseline_clear(&b);
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  cal_print_baseline(r, w, mem);
  fclose(mem);
  g_test_message("%s", buf);
  g_assert_nonnull(strstr(buf, "error +5.00 %"));
  g_assert_nonnull(strstr(buf, "1MiB-4MiB"));
  free(buf);
  /* The JSON variant parses as the same numbers (spot check by text). */
  GError *error = NULL;
  char *dir = g_dir_make_tmp("wisp-cal-XXXXXX", &error);
  char *path = g_build_filename(dir, "baseline.json", NULL);
  g_assert_true(cal_write_baseline_json(r, w, path, &error));
  g_assert_no_error(error);
  char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  g_assert_nonnull(strstr(text, "\"step_error_pct\": 5.0000"));
  g_assert_nonnull(strstr(text, "\"measured_step_ns\": 1000.000"));
  g_free(text);
  g_unlink(path);
  g_rmdir(dir);
  g_free(path);
  g_free(dir);
  sim_result_free(r);
  et_workload_free(w);
}

/* Members of one instance share (group, start, op, bytes).  Member A's
 * kernel took 150 (it waited 50 for B), B's 100; both simulated 100.
 * Instance: sim max(end) - start = 100 vs min measured 100: 0 %.
 * Records: (100 - 150) / 150 = -33.33 % and 0 %: mean |err| 16.67 %. */
static void test_baseline_instances(void)
{
  et_workload *w = et_workload_new(2, "fake");
  sim_result *r = fake_result(1000000);
  add_rec(r, ET_COLL_ALL_REDUCE, 4096, 100000, 150000);
  add_rec(r, ET_COLL_ALL_REDUCE, 4096, 100000, 100000);
  g_array_index(r->comms, sim_comm_record, 1).rank = 1;
  cal_baseline b;
  cal_baseline_compute(r, w, &b);
  g_assert_cmpuint(b.instances, ==, 1);
  g_assert_cmpfloat(b.inst_mean_abs_pct, ==, 0.0);
  g_assert_cmpfloat(fabs(b.mean_abs_pct - 100.0 / 6), <, 1e-9);
  g_assert_cmpfloat(fabs(b.worst_pct + 100.0 / 3), <, 1e-9);
  g_assert_cmpuint(b.rows->len, ==, 1);
  g_assert_cmpuint(g_array_index(b.rows, cal_baseline_row, 0).records, ==, 2);
  /* Measured step unknown: NAN error, said in the text. */
  g_assert_cmpint(b.meas_step, ==, -1);
  g_assert_true(isnan(b.step_err_pct));
  cal_baseline_clear(&b);
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  cal_print_baseline(r, w, mem);
  fclose(mem);
  g_assert_nonnull(strstr(buf, "measured step unknown"));
  free(buf);
  sim_result_free(r);
  et_workload_free(w);
}

static void test_check_baseline(void)
{
  et_workload *w = et_workload_new(2, "fake");
  w->measured_step_ps[0] = 1000000;
  w->measured_step_ps[1] = 980000;
  GError *error = NULL;
  /* Simulated 1,050,000 ps vs measured 1,000,000: +5.00 %. */
  sim_result *r = fake_result(1050000);
  g_assert_true(cal_check_baseline(r, w, 5.0, &error));   /* |5| <= 5: passes */
  g_assert_no_error(error);
  g_assert_false(cal_check_baseline(r, w, 4.9, &error));  /* 5 > 4.9: fails */
  g_assert_error(error, WISP_ERROR, WISP_ERROR_INVALID);
  g_assert_nonnull(strstr(error->message, "+5.00 %"));
  g_assert_nonnull(strstr(error->message, "exceeds"));
  g_clear_error(&error);
  /* Simulated 940,000: -6 %; the bound is on the magnitude. */
  r->step_time = 940000;
  g_assert_false(cal_check_baseline(r, w, 5.0, &error));
  g_assert_nonnull(strstr(error->message, "-6.00 %"));
  g_clear_error(&error);
  g_assert_true(cal_check_baseline(r, w, 6.0, &error));
  /* Measured step unknown on every rank: fails, saying so. */
  w->measured_step_ps[0] = w->measured_step_ps[1] = -1;
  g_assert_false(cal_check_baseline(r, w, 100.0, &error));
  g_assert_nonnull(strstr(error->message, "no measured step time"));
  g_clear_error(&error);
  sim_result_free(r);
  et_workload_free(w);
}

/* End to end on the synthetic workload restricted to one node: replay on
 * the calibrated config and compare each collective with its measurement.
 * Ring all-reduce / all-gather / reduce-scatter and pairwise all-to-all
 * inside one switch tier are exactly the fitted model, so every record's
 * simulated (end - start) is within rounding of its measured duration. */
static void test_replay_after_calibration(void)
{
  synth *s = synth_new(8);
  int all8[8] = { 0, 1, 2, 3, 4, 5, 6, 7 }, four[4] = { 4, 5, 6, 7 };
  uint32_t g8 = synth_group(s, "a8", all8, 8), g4 = synth_group(s, "a4", four, 4);
  for (size_t o = 0; o < 4; o++)
    for (size_t z = 0; z < G_N_ELEMENTS(sizes); z++) {
      synth_coll(s, g8, ops[o], sizes[z], model_ps(ops[o], 8, sizes[z], A_INTRA, B_INTRA));
      synth_coll(s, g4, ops[o], sizes[z], model_ps(ops[o], 4, sizes[z], A_INTRA, B_INTRA));
    }
  et_workload *w = synth_finish(s);
  GError *error = NULL;
  topo *base = topo_load_string(cluster_yaml, "test-2node.yaml", &error);
  topo_variant *v = topo_variant_new(base);
  topo_free(base);
  cal_options opt;
  cal_options_init(&opt);
  int *dom = NULL;
  g_assert_true(cal_options_from_cluster(&opt, v, 8, &dom, &error));
  cal_fit *f = cal_fit_workload(w, &opt, &error);
  g_assert_no_error(error);
  char *dir = g_dir_make_tmp("wisp-cal-XXXXXX", &error);
  char *path = g_build_filename(dir, "c.yaml", NULL);
  g_assert_true(cal_write_config(f, v, NULL, path, &error));
  g_assert_no_error(error);
  topo *t = topo_load(path, &error);
  g_assert_no_error(error);
  sim_replay_options ro = { .quiet = TRUE, .checked = TRUE };
  sim_result *r = sim_replay_run(w, t, &ro, &error);
  g_assert_no_error(error);
  cal_baseline b;
  cal_baseline_compute(r, w, &b);
  g_test_message("per-collective mean |err| %.6f %%, worst %+.6f %%", b.inst_mean_abs_pct, b.inst_worst_pct);
  /* 4 ops x 4 sizes x (8 + 4) members = 192 records, all measured. */
  g_assert_cmpuint(b.comms_measured, ==, 192);
  g_assert_cmpfloat(fabs(b.worst_pct), <, 0.01);
  /* 4 ops x 4 sizes x 2 groups = 32 instances. */
  g_assert_cmpuint(b.instances, ==, 32);
  g_assert_cmpfloat(fabs(b.inst_worst_pct), <, 0.01);
  cal_baseline_clear(&b);
  sim_result_free(r);
  topo_free(t);
  g_unlink(path);
  g_rmdir(dir);
  g_free(path);
  g_free(dir);
  cal_fit_free(f);
  g_free(dom);
  topo_variant_free(v);
  et_workload_free(w);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/cal/recovers-alpha-beta", test_recovers_alpha_beta);
  g_test_add_func("/cal/overlap-exclusion", test_overlap_exclusion);
  g_test_add_func("/cal/single-size", test_single_size);
  g_test_add_func("/cal/flat-time", test_flat_time);
  g_test_add_func("/cal/no-comm", test_no_comm);
  g_test_add_func("/cal/zero-bytes-and-p2p", test_zero_bytes_and_p2p);
  g_test_add_func("/cal/config-roundtrip", test_config_roundtrip);
  g_test_add_func("/cal/refit-to-simulator", test_refit_to_simulator);
  g_test_add_func("/cal/digest", test_digest);
  g_test_add_func("/cal/size-bins", test_size_bins);
  g_test_add_func("/cal/baseline-report", test_baseline_report);
  g_test_add_func("/cal/baseline-instances", test_baseline_instances);
  g_test_add_func("/cal/check-baseline", test_check_baseline);
  g_test_add_func("/cal/replay-after-calibration", test_replay_after_calibration);
  return g_test_run();
}
