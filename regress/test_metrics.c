/* test_metrics.c: the CCL-Bench metric catalog (studies/study_metrics.c,
 * doc/metrics.md) against hand-computed values.
 *
 *  - a generated two-rank timeline where every metric is worked out in the
 *    comments from the intervals;
 *  - workload cards: MFU by the seed's FLOP formulas (training, inference),
 *    model_flops (XLA), and the errors of bad cards;
 *  - the replay feed: the timeline the observer fills gives the per-rank
 *    compute / exposed / overlapped / idle split the replay computes on
 *    its own (sim_rank_stats), and the window is the rank's finish;
 *  - the shared traces through the wisp binary (skipped visibly without
 *    $WISP_SHARED_DATA): values computed independently from the raw Kineto
 *    JSON (ProfilerStep window, kernel events clipped to it, unions), as
 *    stated beside each check.
 */
#include "config.h"
#include "studies/study_metrics_internal.h"
#include "topologies/topo.h"
#include "studies/study_latency.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <unistd.h>
#include "regress/test_util.h"

#define US(x) ((sim_time_ps)(x) * 1000000)

/* A node with a measured start [s, e) in us on rank graph b. */
static uint32_t add(et_builder *b, uint64_t id, et_node_type type, const char *name, double s, double e,
                    uint8_t flags)
{
  uint32_t n = et_builder_add_node(b, id, type, name, US(e) - US(s), flags);
  et_builder_set_start(b, n, US(s));
  return n;
}

static void add_ar(et_builder *b, uint64_t id, double s, double e, uint64_t bytes)
{
  uint32_t n = add(b, id, ET_NODE_COMM_COLL, "ncclKernel_AllReduce_RING_LL_Sum_float", s, e, 0);
  et_comm c = {.bytes = bytes, .group = ET_GROUP_WORLD, .pg_name = ET_NONE, .split = ET_NONE,
               .src = -1, .dst = -1, .tag = -1, .root = -1, .coll = ET_COLL_ALL_REDUCE};
  et_builder_set_comm(b, n, &c, NULL, NULL, 0);
}

/* Two ranks (times in us, rank-local; rank 1's window starts 10 us later
 * on the common clock):
 *   rank 0, window [0, 100):
 *     sm80_xmma_gemm [0, 30)  elementwise_kernel [20, 40)  Memcpy DtoD [35, 50)
 *     all-reduce 1 MB [45, 80)
 *   rank 1, window [0, 120), origin 10:
 *     gemm [0, 50)  all-reduce 1 MB [50, 100)  gemm_tail [110, 130) (cut at 120)
 *     a CPU node [0, 120) and an idle gap [100, 110): not GPU activity. */
static et_workload *two_rank_timeline(void)
{
  et_workload *w = et_workload_new(2, "generated");
  w->measured_start_ps = g_new0(sim_time_ps, 2);
  GError *e = NULL;
  et_builder *b = et_builder_new("rank0");
  add(b, 1, ET_NODE_COMP, "sm80_xmma_gemm_f16f16", 0, 30, 0);
  add(b, 2, ET_NODE_COMP, "elementwise_kernel", 20, 40, 0);
  add(b, 3, ET_NODE_COMP, "Memcpy DtoD (Device -> Device)", 35, 50, 0);
  add_ar(b, 4, 45, 80, 1000000);
  w->ranks[0] = et_builder_finish(b, 0, &e);
  g_assert_no_error(e);
  b = et_builder_new("rank1");
  add(b, 1, ET_NODE_COMP, "ampere_gemm", 0, 50, 0);
  add_ar(b, 2, 50, 100, 1000000);
  add(b, 3, ET_NODE_COMP, "gemm_tail", 110, 130, 0);
  add(b, 4, ET_NODE_COMP, "aten::mm", 0, 120, ET_FLAG_CPU_OP);
  add(b, 5, ET_NODE_COMP, "idle_gap", 100, 110, ET_FLAG_DELAY);
  w->ranks[1] = et_builder_finish(b, 0, &e);
  g_assert_no_error(e);
  w->measured_step_ps[0] = US(100);
  w->measured_step_ps[1] = US(120);
  w->measured_start_ps[1] = US(10);
  return w;
}

static study_metrics *measure(const et_workload *w, int steps, const study_mfu_input *mi)
{
  study_activity *a = study_activity_new(w);
  GError *e = NULL;
  g_assert_true(study_activity_add_measured(a, w, &e));
  g_assert_no_error(e);
  study_activity_set_steps(a, steps);
  study_metrics *m = study_metrics_compute(a, mi);
  study_activity_free(a);
  return m;
}

static void test_generated(void)
{
  et_workload *w = two_rank_timeline();
  study_metrics *m = measure(w, 1, NULL);
  /* Rank 0: U_k = [0,40) = 40, U_m = [35,50) = 15, U_c = [45,80) = 35;
   * U_k u U_m = [0,50), so overlapped = [45,50) = 5, exposed 30, active
   * 35 + 50 - 5 = 80, idle 20. */
  g_assert_cmpint(m->ranks[0].compute, ==, US(40));
  g_assert_cmpint(m->ranks[0].memcpy, ==, US(15));
  g_assert_cmpint(m->ranks[0].comm, ==, US(35));
  g_assert_cmpint(m->ranks[0].overlapped_comm, ==, US(5));
  g_assert_cmpint(m->ranks[0].exposed_comm, ==, US(30));
  g_assert_cmpint(m->ranks[0].active, ==, US(80));
  g_assert_cmpint(m->ranks[0].idle, ==, US(20));
  /* Rank 1: U_k = [0,50) + [110,120) = 60 (the tail cut at the window),
   * U_c = [50,100) = 50, no overlap; active 110, idle 10. */
  g_assert_cmpint(m->ranks[1].compute, ==, US(60));
  g_assert_cmpint(m->ranks[1].comm, ==, US(50));
  g_assert_cmpint(m->ranks[1].overlapped_comm, ==, 0);
  g_assert_cmpint(m->ranks[1].active, ==, US(110));
  g_assert_cmpint(m->ranks[1].idle, ==, US(10));
  /* avg_step_time = (100 + 120) / 2 = 110 us, spread 100..120. */
  g_assert_cmpint(m->avg_step_time, ==, US(110));
  g_assert_cmpint(m->step_min, ==, US(100));
  g_assert_cmpint(m->step_max, ==, US(120));
  /* Compute classes over all ranks: GEMM 30 + 50 + 10 = 90, elementwise
   * 20: 90 / 110 and 20 / 110. */
  g_assert_cmpfloat_with_epsilon(m->compute_bound_pct, 100.0 * 90 / 110, 1e-9);
  g_assert_cmpfloat_with_epsilon(m->memory_bound_pct, 100.0 * 20 / 110, 1e-9);
  /* memory_transfer_overhead: |U_m \ U_k| = [40,50) = 10 of 100 on rank 0,
   * nothing on rank 1: mean (10 %, 0 %) = 5 %. */
  g_assert_cmpfloat_with_epsilon(m->memory_transfer_overhead_pct, 5.0, 1e-9);
  /* communication_fraction: mean (35 / 80, 50 / 110). */
  g_assert_cmpfloat_with_epsilon(m->communication_fraction_pct, 100.0 * (35.0 / 80 + 50.0 / 110) / 2, 1e-9);
  /* total_communication_time: mean exposed (30, 50) = 40 us. */
  g_assert_cmpint(m->total_communication_time, ==, US(40));
  /* compute_comm_overlap: mean (5 / 35, 0 / 50). */
  g_assert_cmpfloat_with_epsilon(m->compute_comm_overlap_pct, 100.0 * (5.0 / 35) / 2, 1e-9);
  /* load_imbalance_ratio: active 110 / 80. */
  g_assert_cmpfloat_with_epsilon(m->load_imbalance_ratio, 110.0 / 80, 1e-12);
  /* straggler on the common clock: rank 0's communication [45, 80), rank
   * 1's [10 + 50, 10 + 100) = [60, 110): (110 - 80) / (110 - 45). */
  g_assert_cmpfloat_with_epsilon(m->straggler, 30.0 / 65, 1e-12);
  g_assert_cmpint(m->straggler_rank, ==, 1);
  /* Bandwidth: all-reduce of S = 1e6 bytes on 2 ranks, busbw factor
   * 2 (2 - 1) / 2 = 1; 1e6 B / 35 us = 28.571 GB/s and / 50 us = 20 GB/s,
   * median of two = their mean.  Traffic per rank and step: 1e6 bytes. */
  g_assert_cmpuint(m->colls->len, ==, 1);
  const study_metric_coll *c = &g_array_index(m->colls, study_metric_coll, 0);
  g_assert_cmpstr(c->op, ==, "all_reduce");
  g_assert_cmpuint(c->count, ==, 2);
  g_assert_cmpfloat_with_epsilon(c->median_busbw_GBps, (1e6 / 35e-6 + 1e6 / 50e-6) / 2 / 1e9, 1e-9);
  g_assert_cmpfloat_with_epsilon(c->median_algbw_GBps, c->median_busbw_GBps, 1e-12);
  g_assert_cmpfloat_with_epsilon(c->message_bytes_per_step, 1e6, 1e-6);
  g_assert_cmpfloat_with_epsilon(c->bus_bytes_per_step, 1e6, 1e-6);
  g_assert_true(isnan(m->mfu_pct));
  study_metrics_free(m);
  /* Two steps in the window: per-step figures halve (110 / 2 = 55 us,
   * exposed 40 / 2 = 20 us, traffic 5e5 bytes); ratios do not change. */
  m = measure(w, 2, NULL);
  g_assert_cmpint(m->avg_step_time, ==, US(55));
  g_assert_cmpint(m->total_communication_time, ==, US(20));
  g_assert_cmpfloat_with_epsilon(g_array_index(m->colls, study_metric_coll, 0).message_bytes_per_step, 5e5, 1e-6);
  g_assert_cmpfloat_with_epsilon(m->load_imbalance_ratio, 110.0 / 80, 1e-12);
  study_metrics_free(m);
  et_workload_free(w);
}

static char *write_tmp(const char *text)
{
  char *path = NULL;
  int fd = g_file_open_tmp("wisp-card-XXXXXX.yaml", &path, NULL);
  g_assert_cmpint(fd, >=, 0);
  close(fd);
  g_assert_true(g_file_set_contents(path, text, -1, NULL));
  return path;
}

static const char *card_text =
    "version: 1\n"
    "workload:\n"
    "  model:\n"
    "    phase: %s\n"
    "    model_arch:\n"
    "      num_params: 1000000\n"
    "      num_params_embedding: 0\n"
    "      num_layers: 2\n"
    "      num_heads: 2\n"
    "      head_dim: 4\n"
    "  data:\n"
    "    batch_size: 1\n"
    "    seq_len: 8\n"
    "  hardware:\n"
    "    xpu_spec:\n"
    "      model: nvidia_a100\n"
    "      total_count: 2\n";

/* The studies' section of a card file, through the one card reader. */
static gboolean load_study_card(const char *path, study_card *out, GError **error)
{
  cfg_card *doc = cfg_card_load(path, error);
  gboolean ok = doc && study_card_from_doc(doc, out, error);
  cfg_card_free(doc);
  return ok;
}

static void test_mfu(void)
{
  et_workload *w = two_rank_timeline();
  GError *e = NULL;
  study_card card;
  char *text = g_strdup_printf(card_text, "training");
  char *path = write_tmp(text);
  g_assert_true(load_study_card(path, &card, &e));
  g_assert_no_error(e);
  /* Training: 6 (N - N_emb) + 12 L H Q S = 6e6 + 12 x 2 x 4 x 2 x 8 = 6,001,536. */
  g_assert_cmpfloat(study_card_flop_per_token(&card), ==, 6001536.0);
  g_assert_cmpfloat(card.peak_tflops, ==, 312.0);
  study_mfu_input mi = {&card, 0, 0};
  study_metrics *m = measure(w, 1, &mi);
  /* tokens/s = 1 x 8 / 110 us; MFU = 6,001,536 x 8 / 110e-6 / (2 x 312e12) = 0.069948 %. */
  g_assert_cmpfloat_with_epsilon(m->mfu_pct, 6001536.0 * 8 / 110e-6 / (2 * 312e12) * 100, 1e-12);
  g_assert_cmpstr(m->mfu_source, ==, "card");
  study_metrics_free(m);
  study_card_clear(&card);
  g_free(text);
  g_unlink(path);
  g_free(path);
  /* Inference: 2 (N - N_emb) + 4 L H Q S = 2e6 + 512. */
  text = g_strdup_printf(card_text, "inference");
  path = write_tmp(text);
  g_assert_true(load_study_card(path, &card, &e));
  g_assert_cmpfloat(study_card_flop_per_token(&card), ==, 2000512.0);
  study_card_clear(&card);
  g_free(text);
  g_unlink(path);
  g_free(path);
  /* XLA: 1e9 model FLOPs over 2 chips and 1 step, 110 us, peak 918:
   * 5e8 / 110e-6 / 918e12 = 0.49514 %. */
  study_mfu_input xi = {NULL, 1000000000, 918};
  m = measure(w, 1, &xi);
  g_assert_cmpfloat_with_epsilon(m->mfu_pct, 5e8 / 110e-6 / 918e12 * 100, 1e-12);
  g_assert_cmpstr(m->mfu_source, ==, "model_flops");
  study_metrics_free(m);
  /* model_flops without a peak: MFU unknown, and the reason says what to give. */
  study_mfu_input np = {NULL, 1000000000, 0};
  m = measure(w, 1, &np);
  g_assert_true(isnan(m->mfu_pct));
  g_assert_nonnull(strstr(m->mfu_source, "--peak-tflops"));
  study_metrics_free(m);
  et_workload_free(w);
}

static void test_card_errors(void)
{
  GError *e = NULL;
  study_card card;
  char *path = write_tmp("workload:\n  model:\n    model_arch:\n      num_params: 10\n");
  g_assert_false(load_study_card(path, &card, &e));
  g_assert_nonnull(strstr(e->message, ": workload.model.model_arch.num_layers: missing (MFU needs"));
  g_clear_error(&e);
  g_unlink(path);
  g_free(path);
  path = write_tmp("workload:\n  model:\n    model_arch:\n      num_params: ten\n");
  g_assert_false(load_study_card(path, &card, &e));
  /* Line 4 holds the bad value. */
  g_assert_nonnull(strstr(e->message, ":4: workload.model.model_arch.num_params: expected a non-negative number, got 'ten'"));
  g_clear_error(&e);
  g_unlink(path);
  g_free(path);
  path = write_tmp("model: [\n");
  g_assert_false(load_study_card(path, &card, &e));
  g_assert_nonnull(strstr(e->message, "a workload card is YAML"));
  g_clear_error(&e);
  g_unlink(path);
  g_free(path);
  g_assert_false(load_study_card("/nonexistent/card.yaml", &card, &e));
  g_assert_nonnull(e);
  g_clear_error(&e);
  /* A card written for the layout (--scale) or kernel sizes only: read,
   * and MFU is n/a with the reason instead of a number. */
  path = write_tmp("Model-executor:\n  model_plan_parallelization:\n    tp: 4\n");
  g_assert_true(load_study_card(path, &card, &e));
  g_assert_true(card.no_model);
  et_workload *lw = two_rank_timeline();
  study_mfu_input li = {&card, 0, 0};
  study_metrics *lm = measure(lw, 1, &li);
  g_assert_true(isnan(lm->mfu_pct));
  g_assert_nonnull(strstr(lm->mfu_source, "no workload.model.model_arch"));
  study_metrics_free(lm);
  et_workload_free(lw);
  study_card_clear(&card);
  g_unlink(path);
  g_free(path);
  /* A generated set without measured windows has no measured metrics. */
  et_workload *w = et_workload_new(1, "generated.et");
  et_builder *b = et_builder_new("r0");
  et_builder_add_node(b, 1, ET_NODE_COMP, "k", 10, 0);
  w->ranks[0] = et_builder_finish(b, 0, &e);
  study_activity *a = study_activity_new(w);
  g_assert_false(study_activity_add_measured(a, w, &e));
  g_assert_nonnull(strstr(e->message, "generated.et: the workload carries no measured step window"));
  g_clear_error(&e);
  study_activity_free(a);
  et_workload_free(w);
}

/* The metrics of study_metrics_json, as text.  O(ranks + rows). */
static char *metrics_text(const study_metrics *m)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  wisp_json j;
  wisp_json_init(&j, f, 99);
  study_metrics_json(&j, NULL, m);
  wisp_json_finish(&j);
  fclose(f);
  return buf;
}

/* Bounded memory (issue 30): a timeline spilled to its temporary file in
 * blocks of 3 intervals after the first 5 must give the same metrics,
 * byte for byte, as the one held in memory, from the same replay (both
 * watch it through chained observers).  Four ranks x 12 steps of a GEMM
 * of rank-dependent length, a memcpy and an all-reduce of 1 MB, so every
 * kind, the overlap walk and the per-collective medians are exercised;
 * 4 x 12 x 3 = 144 intervals, so both timelines must also hold all 144
 * (the memory one keeps them; the spilled one keeps at most 3 per rank). */
static void test_spill_same(void)
{
  enum { RANKS = 4, STEPS = 12 };
  et_workload *w = et_workload_new(RANKS, "spilled");
  GError *e = NULL;
  for (int r = 0; r < RANKS; r++) {
    et_builder *b = et_builder_new("rank");
    uint32_t prev = 0;
    for (int k = 0; k < STEPS; k++) {
      uint32_t id = 1 + 3 * (uint32_t)k;
      et_builder_add_node(b, id, ET_NODE_COMP, "gemm", US(10 + 3 * r + k % 4), 0);
      et_builder_add_node(b, id + 1, ET_NODE_COMP, "Memcpy DtoD", US(2), 0);
      uint32_t n = et_builder_add_node(b, id + 2, ET_NODE_COMM_COLL, "allreduce", 0, 0);
      et_comm c = {.bytes = 1000000, .group = ET_GROUP_WORLD, .pg_name = ET_NONE, .split = ET_NONE,
                   .src = -1, .dst = -1, .tag = -1, .root = -1, .coll = ET_COLL_ALL_REDUCE};
      et_builder_set_comm(b, n, &c, NULL, NULL, 0);
      et_builder_add_dep(b, n, id, TRUE, FALSE);
      if (prev)
        et_builder_add_dep(b, id, prev, TRUE, FALSE);
      et_builder_add_dep(b, id + 1, id, TRUE, FALSE);
      prev = id + 2;
    }
    w->ranks[r] = et_builder_finish(b, 0, &e);
    g_assert_no_error(e);
  }
  topo *t = topo_load_string("schema_version: 1\nlibrary: {name: ideal}\nname: quad\nmodel: analytical\ndims:\n"
                             "  - {name: link, kind: switch, size: 4, bandwidth: 100GB/s, latency: 1us}\n",
                             "quad.yaml", &e);
  g_assert_no_error(e);
  study_activity *held = study_activity_new(w), *spilled = study_activity_new(w);
  study_activity_set_spill(spilled, 5, 3);
  sim_replay_options ro = {.quiet = TRUE};
  ro.observer = study_activity_observer(held, NULL);
  ro.observer = study_activity_observer(spilled, ro.observer);
  sim_result *r = sim_replay_run(w, t, &ro, &e);
  g_assert_no_error(e);
  guint n_held = 0, n_spilled = 0;
  for (int k = 0; k < RANKS; k++) {
    n_held += held->ivs[k]->len;
    g_assert_cmpuint(spilled->ivs[k]->len, <=, 3);
    n_spilled += study_activity_rank_ivs(spilled, k)->len;
  }
  g_assert_nonnull(spilled->spill);
  g_assert_null(held->spill);
  g_assert_cmpuint(n_held, ==, RANKS * STEPS * 3);
  g_assert_cmpuint(n_spilled, ==, RANKS * STEPS * 3);
  study_activity_set_replay_windows(held, r, w);
  study_activity_set_replay_windows(spilled, r, w);
  study_metrics *mh = study_metrics_compute(held, NULL), *ms = study_metrics_compute(spilled, NULL);
  g_assert_true(study_activity_check(spilled, &e));
  g_assert_no_error(e);
  g_assert_cmpuint(ms->colls->len, ==, 1);
  g_assert_cmpint(ms->ranks[3].compute, >, ms->ranks[0].compute); /* rank 3's GEMMs are 9 us longer */
  char *th = metrics_text(mh), *ts = metrics_text(ms);
  g_assert_cmpstr(ts, ==, th);
  g_free(th);
  g_free(ts);
  study_metrics_free(mh);
  study_metrics_free(ms);
  study_activity_free(held);
  study_activity_free(spilled);
  sim_result_free(r);
  topo_free(t);
  et_workload_free(w);
}

/* The replay feed: two ranks, each a 10 us GEMM then a 1 MB all-reduce
 * that depends on it, on two endpoints at 100 GB/s.  The timeline the
 * observer collects must give the split the replay computes itself. */
static void test_replay_feed(void)
{
  et_workload *w = et_workload_new(2, "replayed");
  GError *e = NULL;
  for (int r = 0; r < 2; r++) {
    et_builder *b = et_builder_new("rank");
    et_builder_add_node(b, 1, ET_NODE_COMP, "gemm", US(10 + 5 * r), 0);
    uint32_t n = et_builder_add_node(b, 2, ET_NODE_COMM_COLL, "allreduce", 0, 0);
    et_comm c = {.bytes = 1000000, .group = ET_GROUP_WORLD, .pg_name = ET_NONE, .split = ET_NONE,
                 .src = -1, .dst = -1, .tag = -1, .root = -1, .coll = ET_COLL_ALL_REDUCE};
    et_builder_set_comm(b, n, &c, NULL, NULL, 0);
    et_builder_add_dep(b, n, 1, TRUE, FALSE);
    w->ranks[r] = et_builder_finish(b, 0, &e);
    g_assert_no_error(e);
  }
  topo *t = topo_load_string("schema_version: 1\nlibrary: {name: ideal}\nname: pair\nmodel: analytical\ndims:\n"
                             "  - {name: link, kind: fully_connected, size: 2, bandwidth: 100GB/s, latency: 0ns}\n",
                             "pair.yaml", &e);
  g_assert_no_error(e);
  study_activity *a = study_activity_new(w);
  sim_replay_options ro = {.quiet = TRUE};
  ro.observer = study_activity_observer(a, NULL);
  sim_result *r = sim_replay_run(w, t, &ro, &e);
  g_assert_no_error(e);
  study_activity_set_replay_windows(a, r, w);
  study_metrics *m = study_metrics_compute(a, NULL);
  sim_time_ps sum = 0;
  for (int k = 0; k < 2; k++) {
    const sim_rank_stats *s = &r->ranks[k];
    g_assert_cmpint(m->ranks[s->rank].window, ==, s->finish);
    g_assert_cmpint(m->ranks[s->rank].compute, ==, s->compute);
    g_assert_cmpint(m->ranks[s->rank].exposed_comm, ==, s->exposed_comm);
    g_assert_cmpint(m->ranks[s->rank].overlapped_comm, ==, s->overlapped_comm);
    g_assert_cmpint(m->ranks[s->rank].idle, ==, s->idle);
    sum += s->finish;
  }
  /* Rank 1's GEMM is 5 us longer, so rank 0 waits 5 us inside the
   * all-reduce: its communication interval (issue to end) is 5 us longer
   * than rank 1's, and both end together, so the seed's straggler is 0
   * (the ends coincide); avg_step_time is the mean finish. */
  g_assert_cmpint(m->ranks[0].comm - m->ranks[1].comm, ==, US(5));
  g_assert_cmpfloat(m->straggler, ==, 0.0);
  g_assert_cmpint(m->avg_step_time, ==, sum / 2);
  study_metrics_free(m);
  study_activity_free(a);
  sim_result_free(r);
  topo_free(t);
  et_workload_free(w);
}

/* Runs wisp with args and parses its JSON report from stdout. */
static cJSON *wisp_json_of(const char *const *args)
{
  char *out = NULL;
  g_assert_cmpint(test_wisp_run(args, &out), ==, 0);
  cJSON *d = cJSON_Parse(out);
  g_assert_nonnull(d);
  g_free(out);
  return d;
}

static double num(const cJSON *o, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  g_assert_true(cJSON_IsNumber(v));
  return v->valuedouble;
}

static const cJSON *coll_row(const cJSON *m, const char *op)
{
  const cJSON *row;
  cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(m, "collectives"))
    if (strcmp(cJSON_GetObjectItemCaseSensitive(row, "op")->valuestring, op) == 0)
      return row;
  g_assert_not_reached();
}

static const char *shared_file(const char *rel, char **path)
{
  const char *sd = g_getenv("WISP_SHARED_DATA");
  *path = sd ? g_build_filename(sd, rel, NULL) : NULL;
  return *path && g_file_test(*path, G_FILE_TEST_EXISTS) ? *path : NULL;
}

/* HTA's nccl_data.json.gz (rank 0 of 2; rank 1 replicated): the last
 * complete step is ProfilerStep#6, ts 4458676859077.781 us, dur
 * 224936.243 us.  Independent arithmetic on the raw JSON (kernel,
 * gpu_memcpy and gpu_memset events clipped to that window, names starting
 * "nccl" as communication, "memcpy" as copies; unions merged):
 *   compute 38854.292 us, memcpy 766.249, comm 22587.442, overlapped
 *   3875.792, exposed 18711.650, active 58332.191; compute-bound kernel
 *   time (kernel and gpu_memset events, not nccl/memcpy, clipped; names
 *   matching the gemm rules of replay/sim_levers.c: gemm, matmul, cublas,
 *   cutlass, xmma, ..., scudnn, ..., dot, and none of the
 *   communication-adjacent ones) 13597.10 of 38854.29 us = 34.9951 %
 *   (33.8047 % before the cuDNN convolution kernel
 *   cudnn_infer_ampere_scudnn_128x64_relu_xregs_large_nn_v1 counted); memcpy outside compute / window 0.34065 %.
 *   Communication: 5 all-reduce kernels (Group size 2, busbw factor 1)
 *   with In msg nelems x 4 bytes / dur = 1.3675, 4.5206, 4.5667, 5.2653,
 *   10.0696 GB/s: median 4.5667; their bytes sum to 102,228,128; 2
 *   broadcasts, 0.0536 and 7.2807 GB/s: median 3.6672, bytes 212,904.
 *   average_memory_bandwidth: the 320 gpu_memcpy events in the window
 *   (args "bytes", pro rata when clipped) move 102,440,895 B in 766.249 us
 *   = 133.691 GB/s (as CCL-Bench, memsets left out; wisp's times are whole
 *   ns, so 0.01 GB/s tolerance). */
static void test_shared_hta(void)
{
  char *path = NULL;
  if (!g_getenv("WISP_BIN") || !shared_file("hta/nccl_parser_config/nccl_data.json.gz", &path)) {
    test_skip_absent("hta/nccl_parser_config/nccl_data.json.gz");
    g_free(path);
    return;
  }
  cJSON *d = wisp_json_of((const char *[]){"metrics", path, "--replicate-missing", "--json", "-", NULL});
  g_assert_cmpint((int)num(d, "schema_version"), ==, STUDY_METRICS_SCHEMA_VERSION);
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(d, "measured");
  const cJSON *r0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(m, "ranks"), 0);
  /* The frontend rounds times to whole ns: 1 us tolerance on sums of ~10^4 us. */
  g_assert_cmpfloat_with_epsilon(num(m, "avg_step_time_ns"), 224936243.0, 1.0);
  g_assert_cmpfloat_with_epsilon(num(r0, "compute_ns"), 38854292.0, 1000);
  g_assert_cmpfloat_with_epsilon(num(r0, "memcpy_ns"), 766249.0, 1000);
  g_assert_cmpfloat_with_epsilon(num(r0, "comm_ns"), 22587442.0, 1000);
  g_assert_cmpfloat_with_epsilon(num(r0, "overlapped_comm_ns"), 3875792.0, 1000);
  g_assert_cmpfloat_with_epsilon(num(r0, "exposed_comm_ns"), 18711650.0, 1000);
  g_assert_cmpfloat_with_epsilon(num(r0, "active_ns"), 58332191.0, 1000);
  g_assert_cmpfloat_with_epsilon(num(m, "compute_bound_pct"), 34.9951, 1e-3);
  /* The other two classes by doc/studies.md's "Kernel classes" lists
   * applied in Python to the same clipped events: memory-bound (a
   * comm_adjacent name, or an elementwise one) 25254.688 us = 64.9985 %,
   * unclassified (no rule matches; cask_cudnn_infer::computeOffsetsKernel)
   * 2.496 us = 0.00642 %. */
  g_assert_cmpfloat_with_epsilon(num(m, "memory_bound_pct"), 100 * 25254.688 / 38854.292, 1e-3);
  g_assert_cmpfloat_with_epsilon(num(m, "unclassified_pct"), 100 * 2.496 / 38854.292, 1e-4);
  g_assert_true(g_str_has_prefix(cJSON_GetObjectItemCaseSensitive(m, "unclassified_kernel")->valuestring,
                                 "void cask_cudnn_infer::computeOffsetsKernel"));
  g_assert_cmpfloat_with_epsilon(num(m, "average_memory_bandwidth_GBps"), 133.691, 0.01);
  g_assert_cmpfloat_with_epsilon(num(m, "memory_transfer_overhead_pct"), 0.34065, 1e-3);
  /* Rank 1 is rank 0's copy, so the means equal rank 0's ratios. */
  g_assert_cmpfloat_with_epsilon(num(m, "communication_fraction_pct"), 100 * 22587.442 / 58332.191, 1e-3);
  g_assert_cmpfloat_with_epsilon(num(m, "compute_comm_overlap_pct"), 100 * 3875.792 / 22587.442, 1e-3);
  g_assert_cmpfloat_with_epsilon(num(m, "load_imbalance_ratio"), 1.0, 1e-9);
  /* Exposed communication per step: 18711.650 us (one step; rank 1 a copy). */
  g_assert_cmpfloat_with_epsilon(num(m, "total_communication_time_ns"), 18711650.0, 1000);
  /* dominant_kernel_concentration: per kernel name, the clipped time of
   * the kernel and gpu_memset events (not nccl, not memcpy) in the window
   * (Python over the raw JSON): cudnn::ops::nchwToNhwcKernel<float, ...>
   * 4247.649 us of 38854.292 us = 10.93225 %; no kernel name matches the
   * MoE words (moe, expert, routing, gating, topk, grouped_gemm,
   * dispatchkernel, combinekernel): moe_fraction 0. */
  g_assert_cmpfloat_with_epsilon(num(m, "dominant_kernel_concentration_pct"), 100 * 4247.649 / 38854.292, 1e-3);
  g_assert_true(g_str_has_prefix(cJSON_GetObjectItemCaseSensitive(m, "dominant_kernel")->valuestring,
                                 "void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true"));
  g_assert_cmpfloat(num(m, "moe_fraction_pct"), ==, 0);
  const cJSON *ar = coll_row(m, "all_reduce"), *bc = coll_row(m, "broadcast");
  g_assert_cmpfloat(num(ar, "count"), ==, 10);
  g_assert_cmpfloat_with_epsilon(num(ar, "median_busbw_GBps"), 4.5667, 1e-4);
  g_assert_cmpfloat_with_epsilon(num(ar, "message_bytes_per_step"), 102228128, 0.5);
  g_assert_cmpfloat_with_epsilon(num(bc, "median_busbw_GBps"), 3.6672, 1e-4);
  g_assert_cmpfloat_with_epsilon(num(bc, "message_bytes_per_step"), 212904, 0.5);
  cJSON_Delete(d);
  /* MFU with a training card of doc/metrics.md's example model (N 8030261248,
   * N_emb 525336576, L 32, H 32, Q 128; batch 4 x seq 512 tokens) on 2
   * A100s of 312 TFLOPS, over the raw window of 224936.243 us:
   * F = 6 (N - N_emb) + 12 L H Q S = 45834854400 FLOP per token;
   * MFU = F x 2048 / 224936.243e-6 / (2 x 312e12) x 100 = 66.88 %. */
  char *card = write_tmp("version: 1\nworkload:\n  model:\n    phase: training\n    model_arch: {num_params: 8030261248, "
                         "num_params_embedding: 525336576, num_layers: 32, num_heads: 32, head_dim: 128}\n  data: "
                         "{batch_size: 4, seq_len: 512}\n  hardware:\n    xpu_spec: {model: nvidia_a100, total_count: 2}\n");
  d = wisp_json_of((const char *[]){"metrics", path, "--replicate-missing", "--card", card, "--json", "-", NULL});
  m = cJSON_GetObjectItemCaseSensitive(d, "measured");
  double mfu = 45834854400.0 * 2048 / 224936.243e-6 / (2 * 312e12) * 100;
  g_assert_cmpfloat_with_epsilon(num(m, "mfu_pct"), mfu, 1e-4);
  cJSON_Delete(d);
  g_unlink(card);
  g_free(card);
  g_free(path);
}

/* PARAM's DLRM job (8 ranks, ProfilerStep#10).  Independent arithmetic on
 * the raw JSON as above, per rank (us):
 *   rank  active  window  comm   exposed
 *   0     6590    14455   5798   5537
 *   1     12321   19901   11336  11056
 *   ...   (2..6)
 *   7     2659    12509   1746   1580
 * avg_step_time = mean window = 16007.75 us; load_imbalance_ratio =
 * 12321 / 2659 = 4.63370; communication_fraction = mean comm / active =
 * 83.8977 %; straggler over the raw ts (the traces share a clock): last
 * communication end minus the first rank's end over the span from the
 * first communication start = 0.000437 (ranks 2, 4 and 6 end last
 * together; the lowest is named).  8 kernels per rank: 3 all-reduce and 5
 * all-to-all (SendRecv kernels of nccl:all_to_all) -> counts 24 and 40.
 * Then `simulate --json` carries the same measured object beside the
 * simulated one. */
static void test_shared_dlrm(void)
{
  char *tgz = NULL;
  if (!g_getenv("WISP_BIN") || !shared_file("param/dlrm_kineto.tar.gz", &tgz)) {
    test_skip_absent("param/dlrm_kineto.tar.gz");
    g_free(tgz);
    return;
  }
  char *dir = g_dir_make_tmp("wisp-metrics-XXXXXX", NULL);
  test_untar(tgz, dir);
  char *traces = g_build_filename(dir, "dlrm_kineto", NULL);
  cJSON *d = wisp_json_of((const char *[]){"metrics", traces, "--json", "-", NULL});
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(d, "measured");
  g_assert_cmpfloat_with_epsilon(num(m, "avg_step_time_ns"), 16007750.0, 1.0);
  g_assert_cmpfloat_with_epsilon(num(m, "load_imbalance_ratio"), 12321.0 / 2659, 1e-6);
  g_assert_cmpfloat_with_epsilon(num(m, "communication_fraction_pct"), 83.8977, 1e-3);
  g_assert_cmpfloat_with_epsilon(num(m, "straggler"), 0.000437, 1e-6);
  g_assert_cmpfloat(num(m, "straggler_rank"), ==, 2);
  g_assert_cmpfloat(num(coll_row(m, "all_reduce"), "count"), ==, 24);
  g_assert_cmpfloat(num(coll_row(m, "all_to_all"), "count"), ==, 40);
  const cJSON *r7 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(m, "ranks"), 7);
  g_assert_cmpfloat_with_epsilon(num(r7, "exposed_comm_ns"), 1580000.0, 1.0);
  double cf = num(m, "communication_fraction_pct");
  cJSON_Delete(d);

  char *json = g_build_filename(dir, "sim.json", NULL);
  char *out = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){"simulate", traces, "--network", "dgx-a100", "--json", json, NULL},
                                &out), ==, 0);
  g_assert_nonnull(strstr(out, "metrics (doc/metrics.md):"));
  g_free(out);
  d = load_json(json);
  const cJSON *mm = cJSON_GetObjectItemCaseSensitive(d, "metrics");
  g_assert_cmpint((int)num(mm, "schema_version"), ==, STUDY_METRICS_SCHEMA_VERSION);
  const cJSON *meas = cJSON_GetObjectItemCaseSensitive(mm, "measured");
  const cJSON *sim = cJSON_GetObjectItemCaseSensitive(mm, "simulated");
  g_assert_cmpfloat(num(meas, "communication_fraction_pct"), ==, cf);
  /* The simulated avg_step_time is the replay's step, the latest of the
   * report's rank finishes: every simulated window ends with the step (the
   * replay starts every rank at 0 here), so a rank that finished early is
   * idle until then, as its measured step shows; the mean of the finishes
   * is shorter (issue 31: p32 saw 119.0 vs 129.2 ms on a pipeline). */
  double latest = 0, sum = 0;
  const cJSON *rk;
  cJSON_ArrayForEach(rk, cJSON_GetObjectItemCaseSensitive(d, "ranks")) {
    latest = MAX(latest, num(rk, "finish_ns"));
    sum += num(rk, "finish_ns");
  }
  g_assert_cmpfloat_with_epsilon(num(sim, "avg_step_time_ns"), latest, 0.001);
  g_assert_cmpfloat(num(sim, "step_time_min_ns"), ==, num(sim, "step_time_max_ns"));
  g_assert_cmpfloat(sum / 8, <, latest); /* the ranks of this DLRM step do not all finish together */
  g_assert_cmpfloat(num(coll_row(sim, "all_reduce"), "count"), ==, 24);
  cJSON_Delete(d);
  g_free(json);
  test_rm_rf(dir);
  g_free(dir);
  g_free(traces);
  g_free(tgz);
}

/* XProf's tpu_inference_2.xplane.pb (4 TPU v6e chips, no step markers:
 * one window): MFU from model_flops is the FLOPs `wisp inspect` reports
 * (its "model_flops N" line) / 4 chips / 1 step / avg_step_time / peak, with
 * --peak-tflops 918 (TPU v6e, studies.md section 7). */
static void test_shared_xla(void)
{
  char *path = NULL;
  if (!g_getenv("WISP_BIN") || !shared_file("xprof/test_xplanes/tpu_inference_2.xplane.pb", &path)) {
    test_skip_absent("xprof/test_xplanes/tpu_inference_2.xplane.pb");
    g_free(path);
    return;
  }
  char *out = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){"inspect", path, NULL}, &out), ==, 0);
  const char *at = strstr(out, "model_flops ");
  g_assert_nonnull(at);
  double flops = g_ascii_strtod(at + strlen("model_flops "), NULL);
  g_assert_cmpfloat(flops, >, 0);
  g_free(out);
  cJSON *d = wisp_json_of((const char *[]){"metrics", path, "--peak-tflops", "918", "--json", "-", NULL});
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(d, "measured");
  g_assert_cmpfloat(num(m, "steps"), ==, 1);
  g_assert_cmpstr(cJSON_GetObjectItemCaseSensitive(m, "mfu_source")->valuestring, ==, "model_flops");
  double step_s = num(m, "avg_step_time_ns") * 1e-9, want = flops / 4 / step_s / 918e12 * 100;
  g_assert_cmpfloat_with_epsilon(num(m, "mfu_pct"), want, 1e-6);
  g_assert_cmpint(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(m, "ranks")), ==, 4);
  cJSON_Delete(d);
  g_free(path);
}

/* A Chakra set without measured times: metrics prints every key as n/a
 * with the reason (issue 31: every key for every input kind); no TRACE is a
 * usage error. */
static void test_cli_errors(void)
{
  test_example_env v;
  if (!test_example_setup(&v, "wisp-metrics-XXXXXX"))
    return;
  char *out = NULL, *err = NULL;
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"metrics", v.example, NULL}, &out, &err), ==, 0);
  test_expect_has(out, "every metric: n/a: the workload carries no measured step window");
  test_expect_has(out, "avg_step_time (ms)                           n/a");
  g_free(out);
  g_free(err);
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"metrics", NULL}, NULL, &err), ==, 2);
  g_free(err);
  test_example_teardown(&v);
}

/* simulate on the generated example (no measured times): the metrics
 * object has measured null and the simulated catalog; the metric observer
 * chains the timeline writer without changing it (the same bytes with
 * --no-metrics, which also drops the object). */
static void test_cli_simulate(void)
{
  test_example_env v;
  if (!test_example_setup(&v, "wisp-metrics-XXXXXX"))
    return;
  char *j1 = g_build_filename(v.dir, "a.json", NULL), *j2 = g_build_filename(v.dir, "b.json", NULL);
  char *t1 = g_build_filename(v.dir, "a.trace.json", NULL), *t2 = g_build_filename(v.dir, "b.trace.json", NULL);
  g_assert_cmpint(test_wisp_run((const char *[]){"simulate", v.example, "--network", v.cluster, "--json", j1,
                                                 "--timeline", t1, NULL}, NULL), ==, 0);
  g_assert_cmpint(test_wisp_run((const char *[]){"simulate", v.example, "--network", v.cluster, "--json", j2,
                                                 "--timeline", t2, "--no-metrics", NULL}, NULL), ==, 0);
  char *a = NULL, *b = NULL;
  g_assert_true(g_file_get_contents(t1, &a, NULL, NULL));
  g_assert_true(g_file_get_contents(t2, &b, NULL, NULL));
  g_assert_cmpstr(a, ==, b);
  g_free(a);
  g_free(b);
  cJSON *d = load_json(j1);
  const cJSON *mm = cJSON_GetObjectItemCaseSensitive(d, "metrics");
  g_assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(mm, "measured")));
  const cJSON *sim = cJSON_GetObjectItemCaseSensitive(mm, "simulated");
  /* The per-rank split equals the report's own (sim_rank_stats); every
   * window runs to the step's end, the latest finish, so a rank's idle is
   * the report's plus the wait from its finish to that end. */
  const cJSON *rk;
  int k = 0;
  double latest = 0;
  cJSON_ArrayForEach(rk, cJSON_GetObjectItemCaseSensitive(d, "ranks"))
    latest = MAX(latest, num(rk, "finish_ns"));
  cJSON_ArrayForEach(rk, cJSON_GetObjectItemCaseSensitive(d, "ranks")) {
    const cJSON *mr = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(sim, "ranks"), (int)num(rk, "rank"));
    g_assert_cmpfloat(num(mr, "window_ns"), ==, latest);
    g_assert_cmpfloat_with_epsilon(num(mr, "idle_ns"), num(rk, "idle_ns") + latest - num(rk, "finish_ns"), 0.002);
    g_assert_cmpfloat(num(mr, "exposed_comm_ns"), ==, num(rk, "exposed_comm_ns"));
    g_assert_cmpfloat(num(mr, "overlapped_comm_ns"), ==, num(rk, "overlapped_comm_ns"));
    k++;
  }
  g_assert_cmpint(k, ==, 16);
  /* Issue 29 obs 10: the example's compute nodes are layers named
   * fwd_mbM_layerL / bwd_mbM_layerL (make_example.c: per rank M x L = 16
   * of each, 1200 and 2400 us) and one optimizer_step (3000 us).  A layer
   * is neither a GEMM nor an elementwise kernel by name: unclassified, not
   * memory-bound (it was "memory_bound 100 %").  Per rank (the same on
   * every rank): 16 x 3600 = 57600 us unclassified, 3000 us memory-bound
   * (the optimizer), 0 compute-bound, of 60600 us. */
  g_assert_cmpfloat_with_epsilon(num(sim, "unclassified_pct"), 100.0 * 57600 / 60600, 1e-3);
  g_assert_cmpfloat_with_epsilon(num(sim, "memory_bound_pct"), 100.0 * 3000 / 60600, 1e-3);
  g_assert_cmpfloat(num(sim, "compute_bound_pct"), ==, 0.0);
  g_assert_true(g_str_has_prefix(cJSON_GetObjectItemCaseSensitive(sim, "unclassified_kernel")->valuestring, "bwd_mb"));
  cJSON_Delete(d);
  /* The compute:elementwise lever still scales every kernel no other rule
   * claims, and says how much of it only matched no rule. */
  char *out = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){"utility", v.example, "--network", v.cluster, "--resource",
                                                 "compute:elementwise", NULL}, &out), ==, 0);
  test_expect_has(out, "elementwise kernels: 100.00 % of GPU kernel time, of which 95.05 % by default: names that "
                  "match no class rule");
  g_free(out);
  d = load_json(j2);
  g_assert_null(cJSON_GetObjectItemCaseSensitive(d, "metrics"));
  cJSON_Delete(d);
  g_free(j1);
  g_free(j2);
  g_free(t1);
  g_free(t2);
  test_example_teardown(&v);
}

/* The catalog's keys, each with the key that says why it is null (NULL:
 * a key that is a number whenever the input carries measured times). */
static const struct {
  const char *key, *why;
} catalog_keys[] = {
  {"mfu_pct", "mfu_source"}, {"average_memory_bandwidth_GBps", "average_memory_bandwidth_source"},
  {"mean_sm_coverage_pct", "mean_sm_coverage_source"}, {"bw_peertopeer_pct", "bw_peertopeer_source"},
  {"ttft_ns", "ttft_source"}, {"tpot_ns", "tpot_source"}, {"avg_step_time_ns", NULL},
  {"compute_bound_pct", NULL}, {"memory_bound_pct", NULL}, {"unclassified_pct", NULL},
  {"memory_transfer_overhead_pct", NULL}, {"communication_fraction_pct", NULL},
  {"total_communication_time_ns", NULL}, {"load_imbalance_ratio", NULL}, {"straggler", NULL},
  {"dominant_kernel_concentration_pct", NULL}, {"moe_fraction_pct", NULL},
};

/* Every key of the catalog on every input kind wisp measures (Kineto:
 * HTA's trace, XLA: XProf's tpu_inference_2, Nsight: cloverleaf; a
 * PyTorch execution trace alone has no measured window, test_input_kinds_cli
 * checks that refusal): each key is a number, or null with its reason
 * under the key's _source, never a bare null.  The values themselves are
 * checked against the raw files by /metrics/shared_* and test_nsys. */
static void test_catalog_kinds(void)
{
  static const char *const inputs[3] = {"hta/nccl_parser_config/nccl_data.json.gz",
                                        "xprof/test_xplanes/tpu_inference_2.xplane.pb",
                                        "nsys/perlmutter-cloverleaf-cuda.sqlite"};
  static const char *const ttft_why[3] = {"no vLLM execute_context_* or SGLang run_batch markers",
                                          "an XLA profile", "an Nsight export"};
  for (int i = 0; i < 3; i++) {
    char *path = NULL;
    if (!g_getenv("WISP_BIN") || !shared_file(inputs[i], &path)) {
      test_skip_absent(inputs[i]);
      g_free(path);
      return;
    }
    cJSON *d = wisp_json_of((const char *[]){"metrics", path, "--replicate-missing", "--json", "-", NULL});
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(d, "measured");
    for (size_t k = 0; k < G_N_ELEMENTS(catalog_keys); k++) {
      const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, catalog_keys[k].key);
      g_test_message("%s: %s = %s", inputs[i], catalog_keys[k].key, cJSON_IsNumber(v) ? "a number" : "null");
      g_assert_true(cJSON_IsNumber(v) || (cJSON_IsNull(v) && catalog_keys[k].why));
      if (cJSON_IsNull(v)) {
        const cJSON *why = cJSON_GetObjectItemCaseSensitive(m, catalog_keys[k].why);
        g_assert_true(cJSON_IsString(why) && strlen(why->valuestring) > 10);
      }
    }
    g_assert_nonnull(strstr(cJSON_GetObjectItemCaseSensitive(m, "ttft_source")->valuestring, ttft_why[i]));
    cJSON_Delete(d);
    g_free(path);
  }
}

/* Every key null with one reason: the metrics of an input without
 * measured times (test_catalog_kinds covers the measured kinds). */
static void expect_unmeasured(const char *input, const char *why)
{
  cJSON *d = wisp_json_of((const char *[]){"metrics", input, "--json", "-", NULL});
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(d, "measured");
  const cJSON *r = cJSON_GetObjectItemCaseSensitive(m, "unmeasured_reason");
  g_assert_true(cJSON_IsString(r));
  test_expect_has(r->valuestring, why);
  for (size_t k = 0; k < G_N_ELEMENTS(catalog_keys); k++) {
    g_assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(m, catalog_keys[k].key)));
    if (catalog_keys[k].why)
      g_assert_cmpstr(cJSON_GetObjectItemCaseSensitive(m, catalog_keys[k].why)->valuestring, ==, r->valuestring);
  }
  g_assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(m, "steps")));
  g_assert_cmpint(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(m, "collectives")), ==, 0);
  cJSON_Delete(d);
}

/* The other two input kinds: Chakra ET and PyTorch ET.  A Chakra set
 * converted from a Kineto trace keeps its measured windows (HTA's trace:
 * every key a number, or null with its reason, and the step equal to the
 * Kineto input's); a generated Chakra set, the DLRM job's PyTorch
 * execution traces alone (no timestamps) and a Chakra set converted from
 * those print every key null with the input's reason. */
static void test_catalog_unmeasured(void)
{
  test_example_env v;
  if (!test_example_setup(&v, "wisp-metrics-XXXXXX"))
    return;
  expect_unmeasured(v.example, "the workload carries no measured step window");
  char *tgz = NULL, *hta = NULL;
  if (!shared_file("param/dlrm_pytorch_et.tar.gz", &tgz) ||
      !shared_file("hta/nccl_parser_config/nccl_data.json.gz", &hta)) {
    test_skip_absent("param/dlrm_pytorch_et.tar.gz and hta/nccl_parser_config/nccl_data.json.gz");
    g_free(tgz);
    g_free(hta);
    test_example_teardown(&v);
    return;
  }
  char *dir = g_dir_make_tmp("wisp-metrics-et-XXXXXX", NULL);
  test_untar(tgz, dir);
  char *et = g_build_filename(dir, "dlrm_pytorch_et", NULL), *conv = g_build_filename(dir, "conv", NULL);
  char *kconv = g_build_filename(dir, "kconv", NULL);
  expect_unmeasured(et, "a PyTorch execution trace alone records no timestamps or durations");
  g_assert_cmpint(test_wisp_run((const char *[]){"convert", et, "-o", conv, NULL}, NULL), ==, 0);
  expect_unmeasured(conv, "the workload carries no measured step window");
  g_assert_cmpint(test_wisp_run((const char *[]){"convert", hta, "--replicate-missing", "-o", kconv, NULL}, NULL),
                  ==, 0);
  cJSON *d = wisp_json_of((const char *[]){"metrics", kconv, "--json", "-", NULL});
  cJSON *k = wisp_json_of((const char *[]){"metrics", hta, "--replicate-missing", "--json", "-", NULL});
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(d, "measured");
  g_assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(m, "unmeasured_reason")));
  for (size_t i = 0; i < G_N_ELEMENTS(catalog_keys); i++) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(m, catalog_keys[i].key);
    g_assert_true(cJSON_IsNumber(x) || (cJSON_IsNull(x) && catalog_keys[i].why &&
                                        cJSON_IsString(cJSON_GetObjectItemCaseSensitive(m, catalog_keys[i].why))));
  }
  g_assert_cmpfloat(num(m, "avg_step_time_ns"), ==, num(cJSON_GetObjectItemCaseSensitive(k, "measured"),
                                                         "avg_step_time_ns"));
  cJSON_Delete(d);
  cJSON_Delete(k);
  test_rm_rf(dir);
  g_free(dir);
  g_free(et);
  g_free(conv);
  g_free(kconv);
  g_free(tgz);
  g_free(hta);
  test_example_teardown(&v);
}

/* CCL-Bench's inference_latency rule is per rank
 * (_summarize_rank_sequences): each rank's TTFT (its first execution) and
 * TPOT (mean of its 2nd .. second-to-last when it has more than two, else
 * of its later ones), then the mean over ranks; a rank without a marker is
 * skipped.  Worked by hand, 4 ranks x 5 executions (ns; - = no marker):
 *   rank 0: 10  2  4 100  -   ttft 10, tpot (2 + 4) / 2 = 3
 *   rank 1: 12  3  -   5 50   ttft 12, tpot (3 + 5) / 2 = 4
 *   rank 2: 20  6  -   -  -   ttft 20, tpot 6 (two executions: the last stays)
 *   rank 3:  -  -  -   -  -   skipped
 *   TTFT = (10 + 12 + 20) / 3 = 14, TPOT = (3 + 4 + 6) / 3 = 13/3.
 * The slowest rank per execution would give TTFT 20 instead. */
static void test_latency_rule(void)
{
  const double X = NAN;
  const double d[5 * 4] = {10, 12, 20, X, 2, 3, 6, X, 4, X, X, X, 100, 5, X, X, X, 50, X, X};
  double ttft, tpot;
  study_latency_rule(d, 5, 4, &ttft, &tpot);
  g_assert_cmpfloat_with_epsilon(ttft, 14.0, 1e-12);
  g_assert_cmpfloat_with_epsilon(tpot, 13.0 / 3.0, 1e-12);
  const double one[1] = {7};
  study_latency_rule(one, 1, 1, &ttft, &tpot); /* one execution: a TTFT, no decode step */
  g_assert_cmpfloat_with_epsilon(ttft, 7.0, 1e-12);
  g_assert_true(isnan(tpot));
  const double none[2] = {X, X};
  study_latency_rule(none, 2, 1, &ttft, &tpot);
  g_assert_true(isnan(ttft) && isnan(tpot));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/metrics/generated", test_generated);
  g_test_add_func("/metrics/latency_rule", test_latency_rule);
  g_test_add_func("/metrics/catalog_kinds", test_catalog_kinds);
  g_test_add_func("/metrics/catalog_unmeasured", test_catalog_unmeasured);
  g_test_add_func("/metrics/mfu", test_mfu);
  g_test_add_func("/metrics/card_errors", test_card_errors);
  g_test_add_func("/metrics/replay_feed", test_replay_feed);
  g_test_add_func("/metrics/spill_same", test_spill_same);
  g_test_add_func("/metrics/shared_hta", test_shared_hta);
  g_test_add_func("/metrics/shared_dlrm", test_shared_dlrm);
  g_test_add_func("/metrics/shared_xla", test_shared_xla);
  g_test_add_func("/metrics/cli_errors", test_cli_errors);
  g_test_add_func("/metrics/cli_simulate", test_cli_simulate);
  return g_test_run();
}
