/* cmd_calibrate.c: `wisp calibrate TRACE [--cluster CONFIG] -o calibrated.yaml`:
 * fits per-class alpha-beta parameters to the trace's measured
 * collectives (calib/cal_fit.c), writes the cluster with the fitted values
 * (calib/cal_config.c), checks each fitted collective on the written
 * config and replays the trace on it for the baseline fidelity report.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "calib/cal.h"
#include "calib/cal_nccl.h"
#include "cli/wisp_cli.h"
#include "cli/wisp_load.h"
#include "replay/sim_report.h"
#include "studies/study.h"

/* Simulates every used fit point alone on the calibrated config (rooted
 * collectives rooted at the first member; all-to-allv is skipped: its
 * matrix is not kept) and prints how far the simulator lands from the
 * measured durations.  O(points x collective cost). */
static gboolean check_points(const cal_fit *f, const et_workload *w, const topo *t, net_tier tier, FILE *out,
                             double *rms, GError **error)
{
  *rms = 0;
  coll_policy *pol = coll_policy_new_from_topo(t, error);
  if (pol == NULL)
    return FALSE;
  double ss = 0, worst = 0;
  int n = 0, skipped = 0;
  gboolean ok = TRUE;
  for (guint k = 0; ok && k < f->points->len; k++) {
    const cal_point *p = &g_array_index(f->points, cal_point, k);
    if (p->excluded != CAL_USED)
      continue;
    if (p->op == ET_COLL_ALL_TO_ALLV) {
      skipped++;
      continue;
    }
    sim_time_ps tm = 0;
    ok = cal_simulate_point(w, t, tier, pol, (et_coll_type)p->op, p->group, p->n, p->bytes, &tm, error);
    if (!ok)
      break;
    double e = 100.0 * (double)(tm - p->measured) / (double)p->measured;
    ss += e * e;
    if (fabs(e) > fabs(worst))
      worst = e;
    n++;
  }
  coll_policy_free(pol);
  if (!ok)
    return FALSE;
  *rms = n ? sqrt(ss / n) : 0;
  if (n)
    fprintf(out, "check: %d fitted collectives simulated alone on the calibrated config (%s tier): "
            "rms error %.3f %%, worst %+.3f %% against the measured durations%s\n", n, net_tier_name(tier),
            sqrt(ss / n), worst, skipped ? " (all-to-allv not checked)" : "");
  return TRUE;
}

/* Replays w with every bandwidth of the calibrated config x0.9 and x1.1
 * and prints the step change, so users see whether the step depends on
 * the network at all.  Two more replays. */
static gboolean print_sensitivity(const et_workload *w, const topo *t, const sim_replay_options *ro,
                                  sim_time_ps base, FILE *out, GError **error)
{
  double pct[2];
  sim_time_ps steps[2];
  topo_variant *v = topo_variant_new(t);
  gboolean ok = study_bw_sensitivity(w, v, ro, steps, error);
  topo_variant_free(v);
  if (!ok)
    return FALSE;
  for (int k = 0; k < 2; k++)
    pct[k] = base > 0 ? 100.0 * (double)(steps[k] - base) / (double)base : 0.0;
  fprintf(out, "sensitivity: every bandwidth x0.9 -> step %+.3f %%, x1.1 -> step %+.3f %%%s\n", pct[0], pct[1],
          fabs(pct[0]) < 1.0 && fabs(pct[1]) < 1.0 ? " (the step hardly depends on the network)" : "");
  return TRUE;
}

/* cal_trace_digest of one path; of several, the SHA-256 of their digests
 * in argument order (file counts summed). */
static char *trace_digest(int n, char **paths, int *n_files, GError **error)
{
  if (n == 1)
    return cal_trace_digest(paths[0], n_files, error);
  GChecksum *c = g_checksum_new(G_CHECKSUM_SHA256);
  *n_files = 0;
  for (int i = 0; i < n; i++) {
    int k = 0;
    char *d = cal_trace_digest(paths[i], &k, error);
    if (d == NULL) {
      g_checksum_free(c);
      return NULL;
    }
    g_checksum_update(c, (const guchar *)d, (gssize)strlen(d));
    g_free(d);
    *n_files += k;
  }
  char *out = g_strdup(g_checksum_get_string(c));
  g_checksum_free(c);
  return out;
}

/* ", written as library.net_efficiency ..." when the refit's effective rate
 * is written as the share of the line rate, else "". */
static const char *share_note(const cal_tier_refit *rf, char *buf, size_t len)
{
  if (!(rf->line_Bps > 0))
    return "";
  g_snprintf(buf, len, " (effective: line rate %.4g GB/s, kept for NCCL's search, x %s %.4g)", rf->line_Bps / 1e9,
             CAL_SHARE_KEY, MIN(cal_round_sig4(rf->bw_Bps) / rf->line_Bps, 1.0));
  return buf;
}

/* One line per class refitted against the simulator (cal_refit_to_simulator):
 * the link values written, or why the measured ones are kept. */
static void print_refit(const cal_fit *f, const topo_variant *v)
{
  char note[192];
  if (f->lib_refit) {
    printf("refit (library nccl kept): the NCCL model's free parameters fitted against the simulator on every "
           "class: rms %.3f %% -> %.3f %%; launch %.3f us, per-step overhead x%.3f NCCL's per-hop latencies\n",
           f->lib_rms_before_pct, f->lib_rms_after_pct, f->launch_ps / 1e6, f->step_scale);
    for (int c = 0; c < CAL_N_CLASSES; c++)
      if (f->refit[c].done)
        printf("  %s, tier %s: latency %.3f ns, bandwidth %.6f GB/s%s\n", cal_class_name((cal_class)c),
               topo_variant_dim_name(v, f->refit[c].dim), f->refit[c].latency_ps / 1e3, f->refit[c].bw_Bps / 1e9,
               share_note(&f->refit[c], note, sizeof note));
    return;
  }
  for (int c = 0; c < CAL_N_CLASSES; c++) {
    const cal_tier_refit *rf = &f->refit[c];
    if (rf->points == 0)
      continue;
    /* The intra-node class is written on every tier inside a node. */
    char tiers[160];
    if (c == CAL_CLASS_INTRA && rf->dim > 0)
      g_snprintf(tiers, sizeof tiers, "tiers %s..%s", topo_variant_dim_name(v, 0), topo_variant_dim_name(v, rf->dim));
    else
      g_snprintf(tiers, sizeof tiers, "tier %s", topo_variant_dim_name(v, rf->dim));
    if (rf->done)
      printf("refit (%s, %s): the simulator with latency alpha/hops and bandwidth beta is off by %.3f %% "
             "rms on %d distinct collectives; link values refitted against the simulator: latency %.3f ns, "
             "bandwidth %.6f GB/s%s (%.3f %% rms)\n", cal_class_name((cal_class)c),
             tiers, rf->rms_before_pct, rf->points, rf->latency_ps / 1e3,
             rf->bw_Bps / 1e9, share_note(rf, note, sizeof note), rf->rms_after_pct);
    else
      printf("refit (%s, %s): no link values do better than alpha/hops and beta (%.3f %% rms against the "
             "measurements on %d distinct collectives); kept\n", cal_class_name((cal_class)c), tiers,
             rf->rms_before_pct, rf->points);
  }
}

/* The comment written at the top of the calibrated config: the trace and
 * its digest, the cluster, the model, each class's fit and refit. */
static char *config_header(const cal_fit *f, const cal_options *opt, const char *label, int n_files,
                           const char *digest, int n_ranks, const char *cluster_path)
{
  GString *hdr = g_string_new(NULL);
  g_string_append_printf(hdr, "Calibrated by `wisp calibrate` from the trace %s\n", label);
  g_string_append_printf(hdr, "(%d files; sha256 of the sorted name/size list: %s), %d ranks.\n", n_files, digest,
                         n_ranks);
  g_string_append_printf(hdr, "Cluster shape from %s.\n", cluster_path);
  g_string_append_printf(hdr, "Model per class: T = steps x alpha + bus_bytes / beta (doc/calibration.md), "
                         "%s least squares.\n", opt->loss == CAL_LOSS_RELATIVE ? "relative" : "absolute");
  for (int c = 0; c < CAL_N_CLASSES; c++) {
    const cal_class_fit *cf = &f->cls[c];
    if (cf->fitted)
      g_string_append_printf(hdr, "%s: alpha %.3f ns/step, beta %.6f GB/s from %d collectives (%d sizes), "
                             "rms error %.3f %%%s\n", cal_class_name((cal_class)c), cf->alpha_ps / 1e3,
                             cf->beta_Bps / 1e9, cf->n_points, cf->n_sizes, cf->rms_rel_pct,
                             cf->alpha_from_prior ? " (alpha from the cluster prior)" :
                             cf->beta_from_prior ? " (beta from the cluster prior)" : "");
    else
      g_string_append_printf(hdr, "%s: no collectives; the cluster's values are kept\n",
                             cal_class_name((cal_class)c));
    char note[192];
    if (f->refit[c].done)
      g_string_append_printf(hdr, "%s: link values refitted against the simulator (rms %.3f %% -> %.3f %%)%s\n",
                             cal_class_name((cal_class)c), f->refit[c].rms_before_pct, f->refit[c].rms_after_pct,
                             share_note(&f->refit[c], note, sizeof note));
  }
  if (f->lib_refit)
    g_string_append_printf(hdr, "library nccl kept: launch %.3f us, per-step overhead x%.4g NCCL's per-hop latencies "
                           "(with the link values, refitted against the simulator: rms %.3f %% -> %.3f %%)\n",
                           f->launch_ps / 1e6, f->step_scale, f->lib_rms_before_pct, f->lib_rms_after_pct);
  return g_string_free(hdr, FALSE);
}

/* The state of one calibration: the trace, the cluster, the fit, the
 * calibrated config and its baseline replay; owned, freed by
 * calib_run_clear. */
typedef struct {
  et_workload *w;
  topo_variant *v;
  topo_variant *shape;     /* the cluster before fitting to the trace (a preset), or NULL */
  const char *library;     /* --library NAME, or NULL: the cluster's */
  cal_fit *f;
  int *dom;
  char *cluster_path, *digest, *notes, *device, *label;
  int n_files;
  topo *t;
  sim_result *res;
  cal_options opt;
  net_tier tier;
} calib_run;

static void calib_run_clear(calib_run *r)
{
  sim_result_free(r->res);
  topo_free(r->t);
  cal_fit_free(r->f);
  g_free(r->dom);
  topo_variant_free(r->v);
  topo_variant_free(r->shape);
  g_free(r->cluster_path);
  g_free(r->notes);
  g_free(r->digest);
  g_free(r->device);
  g_free(r->label);
  if (r->w)
    et_workload_free(r->w);
}

/* --json: the trace, the cluster, the config written, the fit and (when
 * replayed) the baseline, written atomically. */
static gboolean write_calibrate_json(const char *json, const char *output, const calib_run *r, GError **error)
{
  wisp_afile *af = wisp_afile_open(json, error);
  if (af == NULL)
    return FALSE;
  wisp_json j;
  wisp_json_init(&j, wisp_afile_stream(af), 3);
  wisp_json_begin_object(&j, NULL);
  wisp_json_int(&j, "schema_version", 1);
  wisp_json_string(&j, "trace", r->label);
  wisp_json_string(&j, "trace_sha256", r->digest);
  wisp_json_string(&j, "cluster", r->cluster_path);
  wisp_json_string(&j, "config", output);
  cal_fit_json(r->f, &j, "fit");
  sim_report_json_unsimulated(&j, r->w);
  if (r->res)
    cal_baseline_json(r->res, r->w, &j, "baseline");
  wisp_json_end_object(&j);
  wisp_json_finish(&j);
  return wisp_afile_commit(af, error);
}

/* Why no cluster was chosen: the trace's device matches no preset, or the
 * trace does not name its device. */
static void print_no_cluster(const char *device)
{
  if (device)
    fprintf(stderr, "wisp calibrate: the trace ran on '%s', which no shipped preset models; give --network "
            "PRESET|CONFIG (a preset name or file, a wisp YAML or an ASTRA-sim network.yml%s)\n", device,
            strstr(device, "V100") ? "; for a DGX-1, examples/networks/dgx1-v100.yaml" : "");
  else
    fprintf(stderr, "wisp calibrate: the trace does not name its device, so no cluster can be chosen for it; give "
            WISP_CLI_NETWORK_USAGE " (a preset name or file, a wisp YAML or an ASTRA-sim network.yml)\n");
}

/* Whether the cluster `name` is fitted to each workload: a preset given
 * by name, or a file carrying a preset_version line.  O(file). */
static gboolean is_preset_cluster(const char *name)
{
  gboolean preset = FALSE;
  char *path = study_cluster_find(name, &preset, NULL), *text = NULL;
  if (path && !preset && g_file_get_contents(path, &text, NULL, NULL))
    preset = g_str_has_prefix(text, "preset_version:") || strstr(text, "\npreset_version:") != NULL;
  g_free(text);
  g_free(path);
  return preset;
}

/* The library the cluster's YAML names ("nccl" when it names none, the
 * default of wisp configs).  g_free. */
static char *cluster_library(const topo_variant *v)
{
  char *y = topo_variant_to_yaml(v), *name = NULL;
  const char *p = strstr(y, "library: {\"name\": \"");
  if (p) {
    p += strlen("library: {\"name\": \"");
    name = g_strndup(p, strcspn(p, "\""));
  }
  g_free(y);
  return name ? name : g_strdup("nccl");
}

/* Reads the trace (its label, digest and workload) and opens the cluster:
 * the one given, or the preset of the trace's device, never a silent
 * default for another machine; prints the trace and cluster lines.
 * Returns 0, 1 or 2 (exit status). */
static int calib_load(calib_run *r, int n_paths, char **paths, wisp_load_options *lo, const char *cluster)
{
  GError *error = NULL;
  lo->device_name = &r->device;
  GString *lab = g_string_new(NULL);
  for (int i = 0; i < n_paths; i++)
    g_string_append_printf(lab, "%s%s", i > 0 ? " " : "", paths[i]);
  r->label = g_string_free(lab, FALSE);
  if ((r->digest = trace_digest(n_paths, paths, &r->n_files, &error)) == NULL ||
      (r->w = wisp_load_workload_paths((const char *const *)paths, n_paths, lo, &error)) == NULL)
    return wisp_cli_fail(error);
  const char *chosen = cluster ? cluster : wisp_cli_preset_for_device(r->device);
  if (chosen == NULL) {
    print_no_cluster(r->device);
    return 2;
  }
  if ((r->v = study_cluster_open(chosen, r->w->n_ranks, &r->cluster_path, &r->notes, &error)) == NULL ||
      !wisp_output_check(&error))
    return wisp_cli_fail(error);
  /* A preset (by name, or a file with preset_version: 1) keeps its own
   * shape in the output, so the calibrated config is fitted to each
   * workload again (--scale included) instead of pinned to this trace's
   * ranks. */
  if (is_preset_cluster(chosen))
    r->shape = study_cluster_open(chosen, 0, NULL, NULL, NULL);
  printf("trace: %s (%d files, sha256 %s), %d ranks\n", r->label, r->n_files, r->digest, r->w->n_ranks);
  if (cluster)
    printf("cluster: %s%s%s\n", r->cluster_path, r->notes && *r->notes ? "; " : "", r->notes ? r->notes : "");
  else
    printf("cluster: %s (chosen for the trace's device '%s'; give --network for another)%s%s\n", r->cluster_path,
           r->device, r->notes && *r->notes ? "; " : "", r->notes ? r->notes : "");
  return 0;
}

/* Fits the classes, refits the link values against the simulator, writes
 * the calibrated config to `output`, loads it back and checks every fitted
 * collective on it. */
static gboolean calib_fit_and_write(calib_run *r, gboolean summary, const char *output, GError **error)
{
  char *lib = cluster_library(r->v);
  if (r->library && strcmp(r->library, "ideal") != 0 && strcmp(r->library, lib) != 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "--library %s: calibrate keeps the cluster's library (%s) "
                "or writes the textbook schedules the fit assumes (--library ideal)", r->library, lib);
    g_free(lib);
    return FALSE;
  }
  if (!cal_options_from_cluster(&r->opt, r->v, r->w->n_ranks, &r->dom, error) ||
      (r->f = cal_fit_workload(r->w, &r->opt, error)) == NULL) {
    g_free(lib);
    return FALSE;
  }
  /* By default the written config keeps the cluster's library and its
   * choices; with NCCL the NCCL model's own free parameters (link values,
   * launch, per-step overhead) are then fitted against the simulator
   * (cal_refit_library).  --library ideal writes the textbook schedules
   * the alpha-beta fit assumes instead.  Either way the output says what
   * changed. */
  r->f->textbook = strcmp(r->library ? r->library : lib, "ideal") == 0;
  cal_fit_print(r->f, !summary, stdout);
  if (!cal_refit_to_simulator(r->f, r->w, r->v, r->tier, error) ||
      !cal_refit_library(r->f, r->w, r->v, r->tier, error))
    return FALSE;
  print_refit(r->f, r->v);
  char *hdr = config_header(r->f, &r->opt, r->label, r->n_files, r->digest, r->w->n_ranks, r->cluster_path);
  char *changes = NULL;
  gboolean ok = cal_write_config_shaped(r->f, r->v, r->shape, hdr, output, &changes, error);
  g_free(hdr);
  /* The calibrated config as a command reads it: fitted to the trace when
   * it is preset-shaped. */
  topo_variant *back = ok ? study_cluster_open(output, r->w->n_ranks, NULL, NULL, error) : NULL;
  if (back && (r->t = topo_variant_build(back, error)) == NULL)
    ok = FALSE;
  topo_variant_free(back);
  double rms = 0;
  if (!ok || r->t == NULL || !check_points(r->f, r->w, r->t, r->tier, stdout, &rms, error)) {
    g_free(lib);
    g_free(changes);
    return FALSE;
  }
  printf("wrote %s\n", output);
  /* What the output changed, and what it kept. */
  char **lines = g_strsplit(changes ? changes : "", "\n", -1);
  for (char **l = lines; *l; l++)
    if (**l)
      printf("  changed: %s\n", *l);
  g_strfreev(lines);
  g_free(changes);
  char *hint = strcmp(lib, "ideal") != 0 && r->f->textbook ? g_strdup_printf(" (--library %s keeps it)", lib)
                                                             : g_strdup("");
  printf("  kept: %s; library %s%s\n",
         r->shape ? "the cluster's shape (preset_version: 1, so every command fits it to its workload, "
                    "--scale included)" : "the cluster's tiers and sizes as given",
         strcmp(lib, "ideal") == 0 ? "ideal, with the textbook schedules the fit assumes"
         : r->f->textbook ? "replaced by ideal, the textbook schedules the fit assumes" : lib,
         hint);
  g_free(hint);
  /* The fit's model has no library costs: when keeping the library makes
   * the check much worse than the fit itself, say which option helps. */
  double fit_rms = 0;
  for (int c = 0; c < CAL_N_CLASSES; c++)
    fit_rms = MAX(fit_rms, r->f->cls[c].fitted ? r->f->cls[c].rms_rel_pct : 0);
  if (!r->f->textbook && rms > 2 * fit_rms + 1)
    printf("  note: library %s adds costs the fit's model (steps x alpha + bytes / beta) does not have: the check is "
           "%.1f %% rms against the fit's own %.1f %%; --library ideal writes the schedules the fit assumes\n", lib,
           rms, fit_rms);
  g_free(lib);
  return TRUE;
}

/* Replays the trace on the calibrated config and prints the baseline and
 * its bandwidth sensitivity (three replays). */
static gboolean calib_baseline(calib_run *r, const sim_replay_options *ro, GError **error)
{
  r->res = sim_replay_run(r->w, r->t, ro, error);
  if (r->res == NULL)
    return FALSE;
  cal_print_baseline(r->res, r->w, stdout);
  return print_sensitivity(r->w, r->t, ro, r->res->step_time, stdout, error);
}

/* `wisp calibrate --nccl-tests LOG... --network CONFIG -o OUT`: fits the
 * config's free hardware parameters to the logs (calib/cal_nccl.c), prints
 * the fit per table and writes the fitted config.  Returns the exit
 * status. */
static int calibrate_nccl_tests(int n_logs, char **paths, const char *cluster, const char *output, net_tier tier)
{
  GError *error = NULL;
  if (cluster == NULL) {
    fprintf(stderr, "wisp calibrate: --nccl-tests needs --network CONFIG (the cluster whose free parameters are "
                    "fitted, e.g. a preset or a config written from the system's spec sheet)\n");
    return 2;
  }
  GPtrArray *logs = g_ptr_array_new_with_free_func((GDestroyNotify)coll_ncclt_log_free);
  int status = 0;
  for (int i = 0; i < n_logs && status == 0; i++) {
    coll_ncclt_log *log = coll_ncclt_load(paths[i], &error);
    if (log == NULL)
      status = wisp_cli_fail(error);
    else
      g_ptr_array_add(logs, log);
  }
  topo *t = status == 0 ? wisp_cli_network_load(cluster, 0, stdout, &error) : NULL;
  if (status == 0 && t == NULL)
    status = wisp_cli_fail(error);
  if (status == 0) {
    topo_variant *v = topo_variant_new(t);
    cal_nccl_fit *f = cal_nccl_fit_logs(v, logs, tier, &error);
    /* A preset keeps its shape in the output (fitted to each workload,
     * --scale included), as a trace's calibration does. */
    if (f == NULL || !cal_nccl_write(f, logs, is_preset_cluster(cluster) ? v : NULL, output, &error))
      status = wisp_cli_fail(error);
    else {
      cal_nccl_print(f, stdout);
      printf("wrote %s\n", output);
    }
    cal_nccl_fit_free(f);
    topo_variant_free(v);
  }
  if (t)
    topo_free(t);
  g_ptr_array_free(logs, TRUE);
  return status;
}

/* The outputs: -o, --json and --html (the JSON in a temporary file when
 * only --html is given; neither with --nccl-tests, which prints its fit
 * per table).  Returns 0 or the exit status 2 with the reason printed. */
static int calibrate_check_outputs(const char *output, gboolean nccl_tests, const char *html, char **json,
                                   char **tmp_json)
{
  GError *error = NULL;
  if (nccl_tests && (*json || html)) {
    fprintf(stderr, "wisp calibrate: --json and --html report a trace's calibration; with --nccl-tests the fit "
            "per table is printed and written to -o (drop --json and --html)\n");
    return 2;
  }
  if (!wisp_output_declare(output, "-o", &error) || !wisp_cli_html_prepare(html, json, tmp_json, &error) ||
      !wisp_output_declare(*json, "--json", &error)) {
    fprintf(stderr, "wisp calibrate: %s\n", error->message);
    g_clear_error(&error);
    return 2;
  }
  return 0;
}

/* --loss relative|absolute (NULL: relative) into o; FALSE after saying
 * so on an unknown value. */
static gboolean calibrate_loss(const char *loss, cal_options *o)
{
  if (loss && strcmp(loss, "relative") != 0 && strcmp(loss, "absolute") != 0) {
    fprintf(stderr, "wisp calibrate: unknown --loss '%s' (use relative or absolute)\n", loss);
    return FALSE;
  }
  if (loss && strcmp(loss, "absolute") == 0)
    o->loss = CAL_LOSS_ABSOLUTE;
  return TRUE;
}

int wisp_cmd_calibrate(int argc, char **argv)
{
  char *cluster = NULL, *output = NULL, *loss = NULL, *json = NULL, *library = NULL, *html = NULL, *tmp_json = NULL;
  gboolean summary = FALSE, no_baseline = FALSE, nccl_tests = FALSE;
  wisp_cli_common common;
  GOptionEntry common_entries[WISP_CLI_COMMON_ENTRIES];
  wisp_cli_common_entries(&common, common_entries);
  GOptionEntry net_entries[WISP_CLI_NETWORK_ENTRIES];
  wisp_cli_network_entries(&cluster, "network whose shape the output keeps: preset name or file, wisp YAML or "
                           "ASTRA-sim network.yml (default: the preset of the trace's GPU; required when none "
                           "matches)", net_entries);
  GOptionEntry entries[] = {
    {"output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "write the calibrated network config to FILE (atomically)",
     "FILE"},
    {"loss", 0, 0, G_OPTION_ARG_STRING, &loss, "least-squares loss: relative (default) or absolute", "LOSS"},
    {"json", 'j', 0, G_OPTION_ARG_FILENAME, &json, "write the fit and the baseline as JSON to FILE", "FILE"},
    WISP_CLI_HTML_ENTRY(html),
    {"summary", 's', 0, G_OPTION_ARG_NONE, &summary, "print the fit per class only, not one line per collective",
     NULL},
    {"no-baseline", 0, 0, G_OPTION_ARG_NONE, &no_baseline, "do not replay the trace on the calibrated config",
     NULL},
    {"library", 0, 0, G_OPTION_ARG_STRING, &library, "library of the written config: the cluster's own (default; "
     "kept with its choices, and with nccl its launch cost and per-step overhead fitted too) or ideal (the "
     "ring/pairwise/direct schedules the alpha-beta fit assumes)", "NAME"},
    {"nccl-tests", 0, 0, G_OPTION_ARG_NONE, &nccl_tests, "the inputs are nccl-tests logs (raw output or CSV): fit "
     "the network's per-tier latency and bandwidth, the launch cost and NCCL's per-step overhead to them, print the "
     "fit per table",
     NULL},
    {NULL},
  };
  GError *error = NULL;
  GOptionContext *ctx = g_option_context_new("TRACE... - fit network latency and bandwidth to measured collectives");
  g_option_context_add_main_entries(ctx, net_entries, NULL);
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_add_main_entries(ctx, common_entries, NULL);
  g_option_context_set_description(ctx,
      "Fits T = steps x alpha + bus_bytes / beta per communicator class (intra-/inter-node),\n"
      "writes the cluster with the fitted tiers and replays the trace on it (see doc/calibration.md).\n"
      "The checks and the baseline replay use the analytical tier unless --network-model says otherwise.\n"
      "With --nccl-tests the inputs are nccl-tests logs and the fit is of the network's free parameters\n"
      "(per-tier latency and bandwidth, launch cost, NCCL's per-step overhead), on the analytical tier.\n"
      "Example: wisp calibrate traces/ --network dgx-h100 -o calibrated.yaml\n"
      "         wisp calibrate --nccl-tests all_reduce.log --network dgx-h100 -o fitted.yaml");
  int status = 0;
  calib_run r;
  memset(&r, 0, sizeof r);
  cal_options_init(&r.opt);
  r.tier = NET_TIER_ANALYTICAL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    fprintf(stderr, "wisp calibrate: %s\n", error->message);
    g_clear_error(&error);
    status = 2;
    goto out;
  }
  if (argc < 2 || output == NULL) {
    fprintf(stderr, "wisp calibrate: give a TRACE (one or more paths) and -o FILE (see wisp calibrate --help)\n");
    status = 2;
    goto out;
  }
  if ((status = calibrate_check_outputs(output, nccl_tests, html, &json, &tmp_json)) != 0)
    goto out;
  if (!calibrate_loss(loss, &r.opt)) {
    status = 2;
    goto out;
  }
  if (nccl_tests) {
    status = calibrate_nccl_tests(argc - 1, argv + 1, cluster, output, NET_TIER_ANALYTICAL);
    goto out;
  }
  /* The options every trace-reading, replaying command shares; the
   * checks and the baseline replay use the analytical tier unless
   * --network-model says otherwise. */
  sim_replay_options ro = {0};
  wisp_load_options lo;
  if (!wisp_cli_common_resolve(&common, &lo, &ro, &error)) {
    fprintf(stderr, "wisp calibrate: %s\n", error->message);
    g_clear_error(&error);
    status = 2;
    goto out;
  }
  /* Every complete step by default: more collectives (and sizes) give a
   * better fit, and one step with one size cannot separate alpha from
   * beta. */
  if (common.step < 0 && common.steps == NULL)
    lo.all_steps = TRUE;
  if (ro.has_tier)
    r.tier = ro.tier;
  ro.has_tier = TRUE;
  ro.tier = r.tier;
  ro.quiet = TRUE;
  r.library = library;
  if ((status = calib_load(&r, argc - 1, argv + 1, &lo, cluster)) != 0)
    goto out;
  if (!calib_fit_and_write(&r, summary, output, &error) ||
      (!no_baseline && !calib_baseline(&r, &ro, &error)) ||
      (json && !write_calibrate_json(json, output, &r, &error)) ||
      (html && !wisp_cli_write_html(json, tmp_json, html, &error)))
    status = wisp_cli_fail(error);
out:
  wisp_cli_html_done(tmp_json);
  g_free(html);
  calib_run_clear(&r);
  g_option_context_free(ctx);
  g_free(cluster);
  g_free(output), g_free(loss);
  g_free(json);
  g_free(library);
  wisp_cli_common_clear(&common);
  wisp_output_reset();
  return status;
}
