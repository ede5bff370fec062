/* test_cal_share.c: the trace-based calibration (`wisp calibrate`,
 * library nccl kept) fits the scale-out tier's effective rate as
 * library.net_efficiency, the share of the NIC's line rate, as
 * `calibrate --nccl-tests` does (cal_nccl.c), instead of the line rate.
 *
 * Why: on more than two nodes NCCL's ring runs at the topology search's
 * quantised speed (the speed arrays of NCCL's src/graph/search.cc,
 * nccl_tuner.c), so a fitted line rate moves the ring only by a step of
 * those arrays, while the share scales the rate continuously after NCCL's
 * view (search, channels, choice), which keeps the line rate.
 *
 * The trace: 8 ranks on 4 nodes of 2 GPUs (library nccl, sm 90, a 50 GB/s
 * NIC), world all-reduces of 1 MiB x 4^k (k = 0..5) whose "measured"
 * durations are simulated on the same cluster with a network that
 * delivers the share S_TRUE = 0.64 of the NIC (library.net_efficiency),
 * 32 GB/s, everything else as the cluster states or (second case) with a
 * launch of 12 us instead of 4.  Checked in each case:
 *   - the step: line rates 30 and 34 GB/s give the same 1 GiB all-reduce
 *     (one step of the search; measured with collbench: busbw 59.67 GB/s
 *     for every line rate from 30 to 34, 69.56 at 35), and both are more
 *     than 5 % off the truth's, so no line rate near 32 GB/s reproduces
 *     it (before this change the trace path fitted the line rate: 30.84
 *     GB/s, predictions below +6.6 % off);
 *   - the fit: the calibrated config keeps the line rate (50 GB/s) and
 *     writes net_efficiency = S_TRUE within the descent's finest step
 *     (x1.02, cal_config.c);
 *   - a second condition absent from the trace (world all-gather and
 *     reduce-scatter of 512 MiB, bandwidth-bound: time inversely
 *     proportional to the share) is predicted within that step, 2 %.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "calib/cal.h"
#include "collectives/coll.h"
#include "regress/test_cal_workload.h"

#define S_TRUE 0.64

static const char *cluster_yaml =
  "schema_version: 1\nname: share-4node\nlibrary: {name: nccl, sm: 90}\n"
  "dims:\n"
  "  - {name: nvlink, kind: switch, size: 2, bandwidth: 450GB/s, latency: 500ns}\n"
  "  - {name: ib, kind: switch, size: 4, bandwidth: 50GB/s, latency: 2us}\n";

/* The truths: the share alone (the simulator refit, cal_refit_to_simulator,
 * finds it), and the share with a launch of 12 us (the cluster states 4
 * us), which the library refit (cal_refit_library) fits with the share
 * (its launch and the tier latency share the constant term of one
 * collective family; measured: launch 8.7 us, share 0.6342).  Limit: with
 * NCCL's per-hop figures x2 as well the library refit stops at share
 * 0.6206 (rms 3.20 -> 3.12 %), outside the step: not checked here. */
#define TRUTH_DIMS "dims:\n" \
  "  - {name: nvlink, kind: switch, size: 2, bandwidth: 450GB/s, latency: 500ns}\n" \
  "  - {name: ib, kind: switch, size: 4, bandwidth: 50GB/s, latency: 2us}\n"
static const char *truth_share =
  "schema_version: 1\nname: truth\nlibrary: {name: nccl, sm: 90, net_efficiency: 0.64}\n" TRUTH_DIMS;
static const char *truth_share_launch =
  "schema_version: 1\nname: truth\nlibrary: {name: nccl, sm: 90, net_efficiency: 0.64, launch: 12us}\n" TRUTH_DIMS;

/* The time the simulator gives a world collective of `bytes` on t
 * (launch included, as a replay gives it). */
static sim_time_ps world_time(const topo *t, et_coll_type op, uint64_t bytes)
{
  GError *error = NULL;
  coll_policy *pol = coll_policy_new_from_topo(t, &error);
  g_assert_no_error(error);
  sim_time_ps tm = 0;
  g_assert_true(cal_simulate_point(NULL, t, NET_TIER_ANALYTICAL, pol, op, ET_GROUP_WORLD, topo_n_ranks(t), bytes,
                                   &tm, &error));
  g_assert_no_error(error);
  coll_policy_free(pol);
  return tm;
}

/* 8 ranks, world all-reduces of 1 MiB x 4^k (k = 0..5), each measured
 * at its time on the truth cluster. */
static et_workload *truth_workload(const topo *truth)
{
  et_workload *w = et_workload_new(8, "share");
  uint64_t s[6];
  sim_time_ps d[6];
  for (int k = 0; k < 6; k++) {
    s[k] = (uint64_t)1048576 << (2 * k);
    d[k] = world_time(truth, ET_COLL_ALL_REDUCE, s[k]);
  }
  for (int r = 0; r < 8; r++)
    w->ranks[r] = test_cal_allreduce_chain(s, d, 6, &w->measured_step_ps[r]);
  GError *error = NULL;
  g_assert_true(et_workload_resolve_groups(w, &error));
  g_assert_no_error(error);
  return w;
}

/* The 1 GiB world all-reduce on v with scale-out line rate bw. */
static sim_time_ps line_rate_time(const topo_variant *v, const char *bw)
{
  GError *error = NULL;
  topo_variant *c = topo_variant_copy(v);
  g_assert_true(topo_variant_set(c, "dims.1.bandwidth", bw, &error));
  topo *t = topo_variant_build(c, &error);
  g_assert_no_error(error);
  sim_time_ps tm = world_time(t, ET_COLL_ALL_REDUCE, 1u << 30);
  topo_free(t);
  topo_variant_free(c);
  return tm;
}

static void test_trace_fits_share(gconstpointer truth_yaml)
{
  GError *error = NULL;
  topo *truth = topo_load_string(truth_yaml, "truth.yaml", &error);
  g_assert_no_error(error);
  topo *base = topo_load_string(cluster_yaml, "share-4node.yaml", &error);
  g_assert_no_error(error);
  topo_variant *v = topo_variant_new(base);
  topo_free(base);
  et_workload *w = truth_workload(truth);
  double t30 = (double)line_rate_time(v, "30GB/s"), t34 = (double)line_rate_time(v, "34GB/s");
  double tt = (double)world_time(truth, ET_COLL_ALL_REDUCE, 1u << 30);
  g_test_message("1 GiB all-reduce: line rate 30 GB/s %.1f us, 34 GB/s %.1f us, truth (50 GB/s x %.2f) %.1f us",
                 t30 / 1e6, t34 / 1e6, S_TRUE, tt / 1e6);
  /* Equal within 1e-6 (measured: 0.2 ns apart in 31.5 ms). */
  g_assert_cmpfloat(fabs(t30 / t34 - 1), <, 1e-6);
  g_assert_cmpfloat(fabs(t34 / tt - 1), >, 0.05);
  cal_options opt;
  cal_options_init(&opt);
  int *dom = NULL;
  g_assert_true(cal_options_from_cluster(&opt, v, 8, &dom, &error));
  g_assert_no_error(error);
  cal_fit *f = cal_fit_workload(w, &opt, &error);
  g_assert_no_error(error);
  f->textbook = FALSE;   /* `wisp calibrate` on a cluster with library nccl keeps it */
  g_assert_true(cal_refit_to_simulator(f, w, v, NET_TIER_ANALYTICAL, &error));
  g_assert_no_error(error);
  g_assert_true(cal_refit_library(f, w, v, NET_TIER_ANALYTICAL, &error));
  g_assert_no_error(error);
  char *dir = g_dir_make_tmp("wisp-calshare-XXXXXX", &error);
  g_assert_no_error(error);
  char *path = g_build_filename(dir, "c.yaml", NULL);
  g_assert_true(cal_write_config(f, v, NULL, path, &error));
  g_assert_no_error(error);
  topo *t = topo_load(path, &error);
  g_assert_no_error(error);
  coll_library_params lib;
  g_assert_true(coll_library_params_from_topo(t, &lib, &error));
  g_assert_no_error(error);
  /* The line rate stays: every scale-out link reads 50 GB/s. */
  wisp_bw_Bps line = 0;
  for (uint32_t k = 0; k < topo_n_links(t); k++)
    if (topo_get_link(t, k)->tier == 1)
      line = topo_get_link(t, k)->bw;
  g_test_message("written: scale-out line rate %.4g GB/s, library.net_efficiency %.4g (truth %.2f), launch %.3f us, "
                 "per-step x%.3f (library refit %s, rms %.3f -> %.3f %%)", (double)line / 1e9, lib.net_efficiency, S_TRUE,
                 (double)lib.launch / 1e6, lib.step_latency_scale, f->lib_refit ? "kept" : "not needed",
                 f->lib_rms_before_pct, f->lib_rms_after_pct);
  /* The second condition: absent from the trace, bandwidth-bound. */
  static const et_coll_type ops[] = { ET_COLL_ALL_GATHER, ET_COLL_REDUCE_SCATTER };
  double worst = 0;
  for (size_t k = 0; k < G_N_ELEMENTS(ops); k++) {
    double want = (double)world_time(truth, ops[k], 512u << 20), got = (double)world_time(t, ops[k], 512u << 20);
    g_test_message("%s 512 MiB: calibrated %.1f us, truth %.1f us (%+.2f %%)", et_coll_type_name(ops[k]),
                   got / 1e6, want / 1e6, 100 * (got / want - 1));
    worst = MAX(worst, fabs(got / want - 1));
  }
  g_assert_cmpuint(line, ==, 50000000000u);
  g_assert_cmpfloat(lib.net_efficiency, >=, S_TRUE / 1.02);
  g_assert_cmpfloat(lib.net_efficiency, <=, S_TRUE * 1.02);
  g_assert_cmpfloat(worst, <=, 0.02);
  topo_free(t);
  g_unlink(path);
  g_rmdir(dir);
  g_free(path);
  g_free(dir);
  cal_fit_free(f);
  et_workload_free(w);
  g_free(dom);
  topo_variant_free(v);
  topo_free(truth);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_data_func("/cal/trace-fits-share", truth_share, test_trace_fits_share);
  g_test_add_data_func("/cal/trace-fits-share-launch", truth_share_launch, test_trace_fits_share);
  return g_test_run();
}
