/* test_cal_data.c: calibration and baseline fidelity on the shared Kineto
 * fixtures (WISP_SHARED_DATA): the 8-rank DLRM set and HTA's
 * nccl_parser_config (rank 0 of 2; rank 1 is replicated from rank 0).
 * Counts checked here come from ../shared/data/README.md; the fitted
 * values and errors are printed (g_test_message) for the report, since
 * they are measurements, not closed forms.
 */
#include "config.h"
#include "regress/test_util.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "calib/cal.h"
#include "frontends/fe.h"

static char *shared_path(const char *rel)
{
  const char *root = g_getenv("WISP_SHARED_DATA");
  if (root == NULL)
    return NULL;
  char *p = g_build_filename(root, rel, NULL);
  if (!g_file_test(p, G_FILE_TEST_EXISTS)) {
    g_free(p);
    return NULL;
  }
  return p;
}

typedef struct {
  double step_err_pct, comm_mean_abs_pct, comm_worst_pct;
  sim_time_ps sim_step, meas_step;
} run_figures;

/* Fit, write the calibrated config, replay on it and report. */
static cal_fit *calibrate_and_replay(et_workload *w, const char *cluster_yaml, const char *label, run_figures *out)
{
  GError *error = NULL;
  topo *base = topo_load_string(cluster_yaml, label, &error);
  g_assert_no_error(error);
  topo_variant *v = topo_variant_new(base);
  topo_free(base);
  cal_options opt;
  cal_options_init(&opt);
  int *dom = NULL;
  g_assert_true(cal_options_from_cluster(&opt, v, w->n_ranks, &dom, &error));
  cal_fit *f = cal_fit_workload(w, &opt, &error);
  g_assert_no_error(error);
  /* As `wisp calibrate` does: refit the link values against the simulator. */
  g_assert_true(cal_refit_to_simulator(f, w, v, NET_TIER_ANALYTICAL, &error));
  g_assert_no_error(error);
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  cal_fit_print(f, TRUE, mem);
  char *dir = g_dir_make_tmp("wisp-cal-XXXXXX", &error);
  char *path = g_build_filename(dir, "calibrated.yaml", NULL);
  g_assert_true(cal_write_config(f, v, label, path, &error));
  g_assert_no_error(error);
  topo *t = topo_load(path, &error);
  g_assert_no_error(error);
  sim_replay_options ro = { .quiet = TRUE };
  sim_result *r = sim_replay_run(w, t, &ro, &error);
  g_assert_no_error(error);
  cal_print_baseline(r, w, mem);
  for (int k = 0; k < r->n_ranks; k++)
    fprintf(mem, "  rank %d: compute %.3f us, exposed comm %.3f us, overlapped comm %.3f us, idle %.3f us\n", k,
            r->ranks[k].compute / 1e6, r->ranks[k].exposed_comm / 1e6, r->ranks[k].overlapped_comm / 1e6,
            r->ranks[k].idle / 1e6);
  for (int c = 0; c < CAL_N_CLASSES; c++)
    if (f->refit[c].points)
      fprintf(mem, "  refit %s: %d points, rms %.3f %% -> %.3f %% (%s)\n", cal_class_name((cal_class)c),
              f->refit[c].points, f->refit[c].rms_before_pct, f->refit[c].rms_after_pct,
              f->refit[c].done ? "applied" : "kept");
  fclose(mem);
  g_test_message("%s:\n%s", label, buf);
  free(buf);
  cal_baseline b;
  cal_baseline_compute(r, w, &b);
  out->step_err_pct = b.step_err_pct;
  out->comm_mean_abs_pct = b.inst_mean_abs_pct;
  out->comm_worst_pct = b.inst_worst_pct;
  out->sim_step = b.sim_step;
  out->meas_step = b.meas_step;
  cal_baseline_clear(&b);
  sim_result_free(r);
  topo_free(t);
  g_unlink(path);
  g_rmdir(dir);
  g_free(path);
  g_free(dir);
  g_free(dom);
  topo_variant_free(v);
  return f;
}

/* 8 x V100 in one node (NVLink); the values are priors only, the fit
 * replaces them. */
static const char *v100_yaml =
  "schema_version: 1\nlibrary: {name: ideal}\n"
  "name: dgx1-v100\n"
  "dims:\n"
  "  - {name: nvlink, kind: switch, size: 8, bandwidth: 150GB/s, latency: 1us}\n";

static void test_dlrm(void)
{
  char *tgz = shared_path("param/dlrm_kineto.tar.gz");
  if (tgz == NULL) {
    g_test_skip("WISP_SHARED_DATA/param/dlrm_kineto.tar.gz not found (set WISP_SHARED_DATA; make check does)");
    return;
  }
  GError *error = NULL;
  char *dir = g_dir_make_tmp("wisp-cal-dlrm-XXXXXX", &error);
  g_assert_no_error(error);
  test_untar(tgz, dir);
  int status = 0;
  /* The archive may hold a sub-directory: find the folder with the traces. */
  char *argv2[] = { "sh", "-c", "find \"$0\" -name '*.json*' -printf '%h\\n' | sort -u | head -1", dir, NULL };
  char *found = NULL;
  g_assert_true(g_spawn_sync(NULL, argv2, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &found, NULL, &status, &error));
  g_strstrip(found);
  g_assert_cmpstr(found, !=, "");
  fe_kineto_options ko;
  fe_kineto_options_init(&ko);
  const char *paths[] = { found };
  et_workload *w = fe_kineto_load(paths, 1, &ko, NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpint(w->n_ranks, ==, 8);
  run_figures fig;
  cal_fit *f = calibrate_and_replay(w, v100_yaml, "dlrm-8xV100", &fig);
  /* README: per rank 3 all-reduce + 5 all-to-all NCCL kernels, all ranks
   * matched: 8 collective instances from 64 communication nodes, all in
   * one node (intra class). */
  g_assert_cmpuint(f->comm_nodes, ==, 64);
  g_assert_cmpuint(f->instances, ==, 8);
  g_assert_cmpint(f->cls[CAL_CLASS_INTER].n_points, ==, 0);
  g_assert_cmpint(f->cls[CAL_CLASS_INTRA].n_points + (int)(f->instances - f->cls[CAL_CLASS_INTRA].n_points), ==, 8);
  g_assert_true(f->cls[CAL_CLASS_INTRA].fitted);
  g_assert_true(fig.meas_step > 0);
  g_assert_true(isfinite(fig.step_err_pct));
  g_test_message("DLRM: step %.3f us simulated vs %.3f us measured (%+.2f %%); collective instances mean |err| %.2f %%, "
                 "worst %+.2f %%", fig.sim_step / 1e6, fig.meas_step / 1e6, fig.step_err_pct, fig.comm_mean_abs_pct,
                 fig.comm_worst_pct);
  cal_fit_free(f);
  et_workload_free(w);
  g_free(found);
  test_rm_rf(dir);
  g_free(dir);
  g_free(tgz);
}

static const char *a100_yaml =
  "schema_version: 1\nlibrary: {name: ideal}\n"
  "name: a100-2gpu\n"
  "ranks: 2\n"
  "dims:\n"
  "  - {name: nvlink, kind: switch, size: 2, bandwidth: 300GB/s, latency: 1us}\n";

static void test_hta_nccl(void)
{
  char *file = shared_path("hta/nccl_parser_config/nccl_data.json.gz");
  if (file == NULL) {
    g_test_skip("WISP_SHARED_DATA/hta/nccl_parser_config not found (set WISP_SHARED_DATA; make check does)");
    return;
  }
  fe_kineto_options ko;
  fe_kineto_options_init(&ko);
  ko.replicate_from = "0";     /* the file is rank 0 of 2 */
  GError *error = NULL;
  const char *paths[] = { file };
  et_workload *w = fe_kineto_load(paths, 1, &ko, NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpint(w->n_ranks, ==, 2);
  /* The trace's broadcast kernels carry no root (no `Src Rank` arg), and
   * the replay refuses a rooted collective without one.  DDP broadcasts
   * from rank 0, so root 0 is assumed here. */
  int patched = 0;
  for (int r = 0; r < w->n_ranks; r++)
    for (uint32_t k = 0; k < w->ranks[r]->n_comms; k++) {
      et_comm *c = &w->ranks[r]->comms[k];
      if (c->coll == ET_COLL_BROADCAST && c->root < 0) {
        c->root = 0;
        patched++;
      }
    }
  g_test_message("broadcasts given root 0: %d", patched);
  run_figures fig;
  cal_fit *f = calibrate_and_replay(w, a100_yaml, "hta-nccl-a100", &fig);
  g_assert_true(f->cls[CAL_CLASS_INTRA].fitted);
  g_assert_cmpint(f->cls[CAL_CLASS_INTER].n_points, ==, 0);
  g_assert_true(isfinite(fig.step_err_pct));
  g_test_message("HTA nccl: step %.3f us simulated vs %.3f us measured (%+.2f %%); collective instances mean |err| %.2f %%, "
                 "worst %+.2f %%", fig.sim_step / 1e6, fig.meas_step / 1e6, fig.step_err_pct, fig.comm_mean_abs_pct,
                 fig.comm_worst_pct);
  cal_fit_free(f);
  et_workload_free(w);
  g_free(file);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/cal-data/dlrm-8rank", test_dlrm);
  g_test_add_func("/cal-data/hta-nccl", test_hta_nccl);
  return g_test_run();
}
