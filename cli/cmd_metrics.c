/* cmd_metrics.c: `wisp metrics TRACE... [--card CARD.yaml]`: the CCL-Bench
 * metric catalog of a measured run (studies/study_metrics.h,
 * doc/metrics.md).  Inputs are read as by inspect and simulate
 * (cli/wisp_load.c); the metrics need the measured times a Kineto or XLA
 * trace carries.  `wisp simulate --json` reports the same metrics for the
 * simulated run.
 */
#include "config.h"
#include "cli/wisp_cli.h"
#include "cli/wisp_load.h"
#include "cli/wisp_metrics.h"
#include "studies/study_metrics.h"
#include "studies/study_latency.h"
#include "frontends/nsys.h"

#include <math.h>
#include <string.h>

/* Nsight inputs: the facts the graphs do not keep (launch grids, NVLink
 * samples; frontends/nsys.h) into the measured timeline a.  Other inputs
 * leave a as it is (its reasons say that the input kind carries none).
 * O(kernels + samples). */
static gboolean add_nsys_facts(study_activity *a, const char *const *paths, int n, const wisp_load_options *lo,
                               GError **error)
{
  wisp_inputs in;
  if (!wisp_inputs_resolve(paths, n, &in, error))
    return FALSE;
  gboolean ok = TRUE;
  if (in.kind && strcmp(in.kind, "nsys") == 0) {
    fe_nsys_facts f;
    fe_nsys_options opt;
    wisp_nsys_options(lo, &opt);
    if ((ok = fe_nsys_facts_load_opts((const char *const *)in.files->pdata, (int)in.files->len, &opt, &f, error))) {
      study_activity_add_nsys_facts(a, &f);
      fe_nsys_facts_clear(&f);
    }
  }
  wisp_inputs_clear(&in);
  return ok;
}

/* The card's gate, as CCL-Bench's inference_latency applies it: NULL
 * when TTFT and TPOT apply, else why not (static or in *buf); *tpot_why
 * set when only TPOT is out (output_len <= 1: no decode step). */
static const char *latency_gate(const cfg_card *card, char *buf, size_t len, const char **tpot_why, GError **error)
{
  *tpot_why = NULL;
  if (card == NULL)
    return NULL;
  const char *phase = cfg_card_get(card, "workload.model.phase", NULL);
  if (phase && g_ascii_strcasecmp(phase, "inference") != 0) {
    g_snprintf(buf, len, "the card's workload.model.phase is %s; CCL-Bench computes TTFT and TPOT for inference "
               "only", phase);
    return buf;
  }
  int64_t out_len = 0;
  gboolean found = FALSE;
  if (!cfg_card_count(card, "workload.data.output_len", G_MAXINT32, &out_len, &found, error))
    return "";
  if (found && out_len <= 1)
    *tpot_why = "the card's workload.data.output_len is 1: no decode step (CCL-Bench: -1)";
  return NULL;
}

/* Why the input gives no model executions, by its kind (static). */
static const char *no_markers_why(const char *const *paths, int n)
{
  wisp_inputs in;
  const char *kind = wisp_inputs_resolve(paths, n, &in, NULL) && in.kind ? in.kind : "";
  const char *why =
    strcmp(kind, "nsys") == 0 ? "an Nsight export without vLLM execute_context_* or SGLang run_batch NVTX ranges "
                                "(PyTorch emits its record_function ranges as NVTX under emit_nvtx or nsys "
                                "--pytorch=autograd-nvtx), nor ProfilerStep ranges with a card whose "
                                "workload.model.phase is inference (doc/nsys.md \"Steps\")"
    : strcmp(kind, "xla") == 0 ? "an XLA profile: CCL-Bench times the TPU JSON trace's \"$core.py:331 step\" events; "
                                 "wisp does not read them from XProf"
    : strcmp(kind, "kineto") == 0 ? "the trace has no vLLM execute_context_* or SGLang run_batch markers (model "
                                    "executions), nor ProfilerStep steps with a card whose workload.model.phase is "
                                    "inference (each step then one execution); CCL-Bench's rule needs them"
                                  : "the input carries no measured model executions";
  wisp_inputs_clear(&in);
  return why;
}

/* The catalog of an input without measured times: every metric n/a with
 * the reason its kind gives; NULL when the workload carries a measured
 * window.  O(ranks). */
static study_metrics *unmeasured_metrics(const et_workload *w, const char *const *paths, int n)
{
  for (int r = 0; r < w->n_ranks; r++)
    if (w->measured_step_ps && w->measured_step_ps[r] > 0)
      return NULL;
  wisp_inputs in;
  const char *kind = wisp_inputs_resolve(paths, n, &in, NULL) && in.kind ? in.kind : "";
  const char *why =
    strcmp(kind, "pytorch_et") == 0
      ? "a PyTorch execution trace alone records no timestamps or durations, so no window or kernel time can be "
        "measured (put each rank's Kineto trace beside it; `wisp simulate --json` gives the simulated run's metrics)"
      : "the workload carries no measured step window (a generated Chakra set, or one converted from an input "
        "without times); the metrics of a measured run need a Kineto, XLA or Nsight input (`wisp simulate --json` "
        "gives the simulated run's metrics)";
  study_metrics *m = study_metrics_unmeasured(w->n_ranks, why);
  wisp_inputs_clear(&in);
  return m;
}

/* TTFT and TPOT of the measured run (studies/study_latency.h): each model
 * execution k (the trace's vLLM execute_context / SGLang run_batch
 * markers, numbered by start time) loaded as --step k until the trace has
 * no more, each rank's window the execution's duration on that rank, then
 * CCL-Bench's per-rank rule.  Loads the trace once per execution
 * (O(executions x trace)); FALSE with the error when a load fails. */
static gboolean measure_latency(study_metrics *m, const char *const *paths, int n, wisp_load_options lo,
                                gboolean markers, const cfg_card *card, GError **error)
{
  char buf[256];
  const char *tpot_gate = NULL, *gate = latency_gate(card, buf, sizeof buf, &tpot_gate, error);
  if (gate && *gate == '\0')
    return FALSE;
  if (gate || !markers) {
    gate = gate ? gate : no_markers_why(paths, n);
    study_metrics_set_latency(m, NAN, NAN, gate, gate);
    return TRUE;
  }
  GArray *d = g_array_new(FALSE, FALSE, sizeof(double));
  int n_ranks = -1, k = 0;
  lo.steps_in_window = NULL;
  lo.model_flops = NULL;
  lo.inference_markers = NULL;
  lo.quiet = TRUE; /* the first load said it all */
  lo.step_lo = lo.step_hi = -1;
  lo.all_steps = lo.whole_trace = FALSE;
  for (;; k++) {
    lo.step = k;
    et_workload *w = wisp_load_workload_paths(paths, n, &lo, error);
    if (w == NULL && k > 0 && strstr((*error)->message, ": no ProfilerStep#")) {
      g_clear_error(error); /* past the last execution */
      break;
    }
    if (w == NULL || (n_ranks >= 0 && w->n_ranks != n_ranks)) {
      if (w)
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "model execution %d has %d ranks, execution 0 %d", k,
                    w->n_ranks, n_ranks);
      et_workload_free(w);
      g_array_free(d, TRUE);
      return FALSE;
    }
    n_ranks = w->n_ranks;
    for (int r = 0; r < n_ranks; r++) {
      double v = w->measured_step_ps && w->measured_step_ps[r] >= 0
                     ? (double)w->measured_step_ps[r] / (double)SIM_PS_PER_NS : NAN;
      g_array_append_val(d, v);
    }
    et_workload_free(w);
  }
  double ttft, tpot;
  study_latency_rule((const double *)(void *)d->data, k, n_ranks, &ttft, &tpot);
  g_array_free(d, TRUE);
  char *how = g_strdup_printf("CCL-Bench's inference_latency over %d model executions: per rank the first, and the "
                              "mean of the %s; then the mean over ranks", k,
                              k > 2 ? "2nd to the second-to-last" : "later ones");
  study_metrics_set_latency(m, ttft, tpot_gate ? NAN : tpot, how, tpot_gate ? tpot_gate : how);
  g_free(how);
  return TRUE;
}

/* The terminal report: a header line, then the catalog's table. */
static void print_report(const et_workload *w, const study_metrics *m)
{
  if (m->unmeasured_why)
    printf("metrics of %s: %d ranks, no measured window\n", w->source, w->n_ranks);
  else
    printf("metrics of %s: %d ranks, %d step%s in the window\n", w->source, w->n_ranks, m->steps,
           m->steps == 1 ? "" : "s");
  study_metrics_print(m, NULL, stdout);
}

/* Writes the versioned report: schema_version, wisp_version,
 * workload{source, n_ranks}, card (or null), measured{...}. */
static gboolean write_json(const char *path, const et_workload *w, const char *card_path, const study_metrics *m,
                           GError **error)
{
  wisp_afile *f = wisp_afile_open(path, error);
  if (f == NULL)
    return FALSE;
  wisp_json j;
  wisp_json_init(&j, wisp_afile_stream(f), 3);
  wisp_json_begin_object(&j, NULL);
  wisp_json_int(&j, "schema_version", STUDY_METRICS_SCHEMA_VERSION);
  wisp_json_string(&j, "wisp_version", PACKAGE_VERSION);
  wisp_json_begin_object(&j, "workload");
  wisp_json_string(&j, "source", w->source);
  wisp_json_int(&j, "n_ranks", w->n_ranks);
  wisp_json_end_object(&j);
  wisp_json_string(&j, "card", card_path);
  study_metrics_json(&j, "measured", m);
  wisp_json_end_object(&j);
  wisp_json_finish(&j);
  return wisp_afile_commit(f, error);
}

int wisp_cmd_metrics(int argc, char **argv)
{
  char *card_path = NULL, *json = NULL, *steps = NULL, *replicate_from = NULL, *comm_group = NULL;
  char *html = NULL, *tmp_json = NULL;
  gboolean strict = FALSE, replicate_missing = FALSE, markers = FALSE;
  int step = -1;
  double peak = 0;
  GOptionEntry entries[] = {
    {"card", 0, 0, G_OPTION_ARG_FILENAME, &card_path, "workload card (CCL-Bench YAML) for MFU: model_arch, data, xpu_spec", "FILE"},
    {"peak-tflops", 0, 0, G_OPTION_ARG_DOUBLE, &peak, "peak dense TFLOPS per device for MFU (default: from the card's xpu_spec.model)", "TFLOPS"},
    {"json", 'j', 0, G_OPTION_ARG_FILENAME, &json, "write the versioned JSON report to FILE (atomically; - is stdout)", "FILE"},
    WISP_CLI_HTML_ENTRY(html),
    {"step", 0, 0, G_OPTION_ARG_INT, &step, "profiler step to measure (default: the last complete one)", "N"},
    {"steps", 0, 0, G_OPTION_ARG_STRING, &steps, "steps A..B, all, or whole (ignore step markers)", "A..B|all|whole"},
    {"strict", 0, 0, G_OPTION_ARG_NONE, &strict, "treat matching problems as errors", NULL},
    {"replicate-from", 0, 0, G_OPTION_ARG_STRING, &replicate_from, "Kineto: synthesize absent ranks from these traced ranks (symmetric assumption; 'all': every traced rank)", "R[,R...]|all"},
    {"replicate-missing", 0, 0, G_OPTION_ARG_NONE, &replicate_missing, "synthesize every absent rank (Kineto: from all traced ranks)", NULL},
    {"comm-group", 0, 0, G_OPTION_ARG_FILENAME, &comm_group, "Chakra workloads: groups from FILE", "FILE"},
    {NULL},
  };
  GError *error = NULL;
  GOptionContext *ctx = g_option_context_new("TRACE... - the CCL-Bench metric catalog of a measured run");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(ctx,
      "TRACE is per-rank Kineto traces (files, globs or a directory), XLA profiles, Nsight Systems SQLite exports,\n"
      "PyTorch execution traces or a Chakra set, as for inspect and simulate (without measured times every\n"
      "metric is n/a with the reason).\n"
      "Metrics and formulas: doc/metrics.md (man wisp-metrics).  `wisp simulate --json` reports the same metrics\n"
      "for the simulated run.  Example: wisp metrics traces/ --card workload_card.yaml --json metrics.json");
  int status = 0;
  study_card card = {0};
  gboolean have_card = FALSE;
  cfg_card *doc = NULL;
  et_workload *w = NULL;
  study_activity *a = NULL;
  study_metrics *m = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    fprintf(stderr, "wisp metrics: %s\n", error->message);
    g_clear_error(&error);
    status = 2;
    goto out;
  }
  const char *usage = argc < 2 ? "give a TRACE (one or more paths) (see wisp metrics --help)"
                      : peak < 0 || !isfinite(peak) ? "--peak-tflops takes a positive number of TFLOPS, e.g. 312" : NULL;
  if (usage) {
    fprintf(stderr, "wisp metrics: %s\n", usage);
    status = 2;
    goto out;
  }
  wisp_load_options lo = WISP_LOAD_OPTIONS_INIT;
  int n_steps = 1;
  uint64_t model_flops = 0;
  lo.build_flags = strict ? ET_BUILD_STRICT : 0;
  lo.replicate_from = replicate_from;
  lo.replicate_missing = replicate_missing;
  lo.comm_group = comm_group;
  lo.steps_in_window = &n_steps;
  lo.model_flops = &model_flops;
  lo.inference_markers = &markers;
  if (!wisp_steps_parse(steps, step, &lo, &error) || !wisp_cli_html_prepare(html, &json, &tmp_json, &error) ||
      !wisp_output_declare(json, "--json", &error)) {
    fprintf(stderr, "wisp metrics: %s\n", error->message);
    g_clear_error(&error);
    status = 2;
    goto out;
  }
  /* One parse of the card: MFU's keys here, the same document sizes
   * kernels that carry no size (lo.card). */
  if (card_path) {
    if ((doc = cfg_card_load(card_path, &error)) == NULL || !study_card_from_doc(doc, &card, &error)) {
      status = wisp_cli_fail(error);
      goto out;
    }
    have_card = TRUE;
    lo.card = doc;
  }
  w = wisp_load_workload_paths((const char *const *)argv + 1, argc - 1, &lo, &error);
  if (w == NULL || !wisp_output_check(&error)) {
    status = wisp_cli_fail(error);
    goto out;
  }
  if ((m = unmeasured_metrics(w, (const char *const *)argv + 1, argc - 1)) != NULL)
    goto report;
  a = study_activity_new(w);
  if (!study_activity_add_measured(a, w, &error) ||
      !add_nsys_facts(a, (const char *const *)argv + 1, argc - 1, &lo, &error)) {
    status = wisp_cli_fail(error);
    goto out;
  }
  study_activity_set_steps(a, n_steps);
  study_mfu_input mi = {have_card ? &card : NULL, model_flops, peak};
  m = study_metrics_compute(a, &mi);
  if (!study_activity_check(a, &error) ||
      !measure_latency(m, (const char *const *)argv + 1, argc - 1, lo, markers, doc, &error)) {
    status = wisp_cli_fail(error);
    goto out;
  }
report:
  print_report(w, m);
  if ((json && !write_json(json, w, card_path, m, &error)) || (html && !wisp_cli_write_html(json, tmp_json, html, &error)))
    status = wisp_cli_fail(error);
out:
  wisp_cli_html_done(tmp_json);
  g_free(html);
  study_metrics_free(m);
  study_activity_free(a);
  if (w)
    et_workload_free(w);
  if (have_card)
    study_card_clear(&card);
  cfg_card_free(doc);
  g_option_context_free(ctx);
  g_free(card_path);
  g_free(json);
  g_free(steps);
  g_free(replicate_from);
  g_free(comm_group);
  wisp_output_reset();
  return status;
}

/* ---- the hooks of `wisp simulate` (cli/wisp_metrics.h) ---- */

struct wisp_run_metrics {
  gboolean on;
  gboolean have_card;
  study_card card;
  int n_steps;
  uint64_t model_flops;
  study_activity *act;
  study_metrics *measured, *simulated;
};

void wisp_run_metrics_entries(gboolean *off, GOptionEntry *entries)
{
  entries[0] = (GOptionEntry){"no-metrics", 0, 0, G_OPTION_ARG_NONE, off,
                              "skip the metric catalog (saves its 32 bytes per GPU node of the run)", NULL};
  entries[1] = (GOptionEntry){NULL};
}

wisp_run_metrics *wisp_run_metrics_new(gboolean off, wisp_load_options *lo, GError **error)
{
  wisp_run_metrics *m = g_new0(wisp_run_metrics, 1);
  m->on = !off;
  m->n_steps = 1;
  if (lo->card) {
    if (!study_card_from_doc(lo->card, &m->card, error)) {
      g_free(m);
      return NULL;
    }
    m->have_card = TRUE;
  }
  if (m->on) {
    lo->steps_in_window = &m->n_steps;
    lo->model_flops = &m->model_flops;
  }
  return m;
}

void wisp_run_metrics_watch(wisp_run_metrics *m, const et_workload *w, sim_replay_options *opt)
{
  if (!m->on)
    return;
  m->act = study_activity_new(w);
  opt->observer = study_activity_observer(m->act, opt->observer);
}

void wisp_run_metrics_finish(wisp_run_metrics *m, const sim_result *r, const et_workload *w, FILE *out)
{
  if (!m->on || m->act == NULL)
    return;
  study_mfu_input mi = {m->have_card ? &m->card : NULL, m->model_flops, 0};
  study_activity_set_steps(m->act, m->n_steps);
  study_activity_set_replay_windows(m->act, r, w);
  m->simulated = study_metrics_compute(m->act, &mi);
  GError *error = NULL;
  if (!study_activity_check(m->act, &error)) { /* the spill file failed: no metrics rather than wrong ones */
    fprintf(stderr, "wisp: warning: %s\n", error->message);
    g_error_free(error);
    study_metrics_free(m->simulated);
    m->simulated = NULL;
    return;
  }
  study_activity *meas = study_activity_new(w);
  study_activity_set_steps(meas, m->n_steps);
  if (study_activity_add_measured(meas, w, NULL))
    m->measured = study_metrics_compute(meas, &mi);
  study_activity_free(meas);
  fprintf(out, "\nmetrics (doc/metrics.md):\n");
  study_metrics_print(m->measured, m->simulated, out);
}

void wisp_run_metrics_json(const wisp_run_metrics *m, wisp_json *j)
{
  if (m == NULL || m->simulated == NULL)
    return;
  wisp_json_begin_object(j, "metrics");
  wisp_json_int(j, "schema_version", STUDY_METRICS_SCHEMA_VERSION);
  study_metrics_json(j, "measured", m->measured);
  study_metrics_json(j, "simulated", m->simulated);
  wisp_json_end_object(j);
}

void wisp_run_metrics_free(wisp_run_metrics *m)
{
  if (m == NULL)
    return;
  study_metrics_free(m->measured);
  study_metrics_free(m->simulated);
  study_activity_free(m->act);
  if (m->have_card)
    study_card_clear(&m->card);
  g_free(m);
}
