/* test_kineto_slots.c: measured compute concurrency (kt_graph.compute_slots,
 * et_graph.compute_slots) and the replay's default slot count.
 *
 * One hand-made rank trace (the same on both ranks of a 2-rank job, no
 * communication), in microseconds from the step start; every kernel is
 * compute:
 *
 *   stream 7:   K1 [0, 40]
 *   stream 8:   K2 [10, 30]  K3 [35, 50]
 *   stream 9:   K4 [20, 25]  K5 [26, 29]
 *   stream 10:  K6 [29, 33]
 *   ProfilerStep#1 [0, 60]: the window is 60 us.
 *
 * Kernels running at once: 3 during [20, 25] (K1 K2 K4), [26, 29] (K1 K2
 * K5) and [29, 30] (K1 K2 K6); K5 ends at 29 exactly when K6 starts, and
 * a kernel that ends when another starts does not overlap it, so the
 * maximum is 3, not 4.
 *
 * Replays (no host model; the graph is the per-stream chains with their
 * idle gaps and a 10 us step tail after the last kernel end at 50):
 *  - with the measured 3 slots every kernel starts at its measured time:
 *    60 us, the measured step;
 *  - with 1 slot the compute slot is never idle from 0 (K1 is ready at 0
 *    and some kernel is always waiting until the last one runs), so the
 *    kernels end at the sum of their durations, 40 + 20 + 15 + 5 + 3 + 4 =
 *    87 us, and the tail makes 97 us.
 */
#include "config.h"

#include "chakra/et_io.h"
#include "frontends/fe.h"
#include "frontends/kineto_graph.h"
#include "replay/sim_replay.h"
#include "topologies/topo.h"
#include "regress/test_util.h"

#include <string.h>

static char *slots_json(int rank)
{
  static const struct { int stream; long ts, dur; const char *name; } k[] = {
    { 7, 0, 40, "K1" }, { 8, 10, 20, "K2" }, { 8, 35, 15, "K3" },
    { 9, 20, 5, "K4" }, { 9, 26, 3, "K5" }, { 10, 29, 4, "K6" },
  };
  const long base = 1000000;
  GString *s = g_string_new("");
  g_string_append_printf(s, "{\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d, \"world_size\": 2}, "
                            "\"traceEvents\": [\n", rank);
  g_string_append_printf(s, "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 1, "
                            "\"tid\": 1, \"ts\": %ld, \"dur\": 60}", base);
  for (size_t i = 0; i < G_N_ELEMENTS(k); i++)
    g_string_append_printf(s, ",\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": %d, "
                              "\"ts\": %ld, \"dur\": %ld, \"args\": {\"device\": 0, \"stream\": %d, "
                              "\"correlation\": %zu}}", k[i].name, k[i].stream, base + k[i].ts, k[i].dur,
                           k[i].stream, i + 1);
  g_string_append(s, "\n]}\n");
  return g_string_free(s, FALSE);
}

typedef test_rank_files trace_set;

static void traces_write(trace_set *ts)
{
  char *texts[2] = { slots_json(0), slots_json(1) };
  test_rank_files_write(ts, "wisp-kineto-slots-XXXXXX", texts, 2);
  g_free(texts[0]);
  g_free(texts[1]);
}

static et_workload *load(const trace_set *ts, fe_kineto_mode mode, fe_kineto_report *rep)
{
  fe_kineto_options opt;
  fe_kineto_options_init(&opt);
  opt.host_launch = FALSE;
  opt.mode = mode;
  GError *e = NULL;
  et_workload *w = fe_kineto_load((const char *const *)ts->paths, 2, &opt, rep, &e);
  g_assert_no_error(e);
  g_assert_nonnull(w);
  return w;
}

/* Step time of w on a 2-rank network; slots 0 means the default. */
static sim_time_ps replay(const et_workload *w, unsigned slots)
{
  GError *e = NULL;
  topo *t = topo_load_string("schema_version: 1\nlibrary: {name: ideal}\nname: pair\nmodel: analytical\ndims:\n"
                             "  - {name: link, kind: fully_connected, size: 2, bandwidth: 100GB/s, latency: 1us}\n",
                             "pair.yaml", &e);
  g_assert_no_error(e);
  sim_replay_options ro = { .compute_slots = slots, .quiet = TRUE };
  sim_result *r = sim_replay_run(w, t, &ro, &e);
  g_assert_no_error(e);
  sim_time_ps step = r->step_time;
  g_assert_cmpuint(r->ranks[0].compute_slots, ==, slots ? slots : 3);
  sim_result_free(r);
  topo_free(t);
  return step;
}

/* The count in the graph and the report, and the replays of the file comment. */
static void test_measured(void)
{
  trace_set ts;
  traces_write(&ts);
  fe_kineto_report rep;
  et_workload *w = load(&ts, FE_KINETO_KERNELS, &rep);
  g_assert_cmpuint(rep.ranks[0].compute_slots, ==, 3);
  g_assert_cmpuint(w->ranks[0]->compute_slots, ==, 3);
  g_assert_cmpuint(w->ranks[1]->compute_slots, ==, 3);
  const sim_time_ps us = SIM_PS_PER_US;
  sim_time_ps def = replay(w, 0), one = replay(w, 1), three = replay(w, 3);
  g_test_message("default slots: %" G_GINT64_FORMAT " ps (expected 60 us); 1 slot: %" G_GINT64_FORMAT
                 " ps (expected 97 us); 3 slots: %" G_GINT64_FORMAT " ps (expected 60 us)", def, one, three);
  g_assert_cmpint(def, ==, 60 * us);
  g_assert_cmpint(one, ==, 97 * us);
  g_assert_cmpint(three, ==, 60 * us);
  et_workload_free(w);
  fe_kineto_report_clear(&rep);
  /* Gap mode keeps one compute chain: nothing measured, the replay's 1. */
  w = load(&ts, FE_KINETO_GAP, &rep);
  g_assert_cmpuint(rep.ranks[0].compute_slots, ==, 0);
  g_assert_cmpuint(w->ranks[0]->compute_slots, ==, 0);
  et_workload_free(w);
  fe_kineto_report_clear(&rep);
  test_rank_files_free(&ts);
}

/* The count survives a round trip through Chakra files (GlobalMetadata
 * attribute wisp_compute_slots), and the re-read workload replays the
 * measured 60 us by default. */
static void test_round_trip(void)
{
  trace_set ts;
  traces_write(&ts);
  et_workload *w = test_et_round_trip(load(&ts, FE_KINETO_KERNELS, NULL), ts.dir);
  g_assert_cmpuint(w->ranks[0]->compute_slots, ==, 3);
  g_assert_cmpuint(w->ranks[0]->dropped_attrs, ==, 0);
  g_assert_cmpint(replay(w, 0), ==, 60 * SIM_PS_PER_US);
  et_workload_free(w);
  test_rank_files_free(&ts);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/kineto_slots/measured", test_measured);
  g_test_add_func("/kineto_slots/round_trip", test_round_trip);
  return g_test_run();
}
