/* cmd_utility.c: `wisp utility WORKLOAD --cluster PRESET|CONFIG`: the
 * utility of doubling each resource (studies/study_utility.c). */
#include "config.h"
#include "cli/wisp_cli.h"
#include "cli/wisp_load.h"
#include "studies/study.h"
#include "studies/study_latency.h"

#include "replay/sim_critical.h"
#include "replay/sim_report.h"

#include <math.h>
#include <string.h>

/* --svg: one bar per resource (n/a where doubling does not apply); when
 * every bar is 0 the chart says why, with the first clause of what bounds
 * the baseline's critical path. */
static gboolean draw_utility_svg(const study_utility_result *u, const et_workload *w, const char *svg, GError **error)
{
  const char **labels = g_new0(const char *, u->rows->len + 1);
  double *vals = g_new0(double, u->rows->len + 1);
  int n = 0;
  for (guint i = 0; i < u->rows->len; i++) {
    const study_utility_row *r = &g_array_index(u->rows, study_utility_row, i);
    labels[n] = r->resource;
    vals[n++] = r->applicable ? r->utility_pct : NAN; /* drawn as "n/a" */
  }
  char *title = g_strdup_printf("Utility of doubling each resource (T = %.3f ms)", (double)u->baseline.step_time / 1e9);
  char *bound = u->baseline_critical ? sim_crit_bound_sentence(u->baseline_critical, w) : NULL;
  if (bound && strchr(bound, ';'))
    *strchr(bound, ';') = '\0';
  char *zero_note = g_strdup_printf("every utility is 0 %%: %s", bound ? bound : "doubling any one of these "
                                    "resources leaves the step time unchanged");
  g_free(bound);
  gboolean drew = study_svg_bar_chart(svg, title, "utility (%)", labels, vals, n, zero_note, error);
  g_free(zero_note);
  g_free(title);
  g_free(labels);
  g_free(vals);
  return drew;
}

/* --check-baseline MAX_PCT (check_baseline < 0: not given): 0 when the
 * baseline is within it, else 1 after saying why (no measured step, or
 * the error with the option that would help). */
static int check_baseline_gate(const study_utility_result *u, const et_workload *w, double check_baseline)
{
  if (check_baseline < 0)
    return 0;
  if (u->measured_step < 0) {
    if (w->scale)
      fprintf(stderr, "wisp: error: --check-baseline: a scaled job (--scale) has no measured step (the trace "
              "measured %d ranks), so the baseline cannot be checked; check it without --scale\n",
              et_scale_traced_ranks(w->scale));
    else
      fprintf(stderr, "wisp: error: --check-baseline: the workload carries no measured step time, so the "
              "baseline cannot be checked (use a profiler trace)\n");
    return 1;
  }
  if (fabs(u->calibration_error_pct) > check_baseline) {
    char *advice = sim_report_baseline_advice(w, u->measured_starts);
    fprintf(stderr, "wisp: error: baseline error %+.2f %% exceeds --check-baseline %.2f %%: %s before trusting "
            "what-if answers\n", u->calibration_error_pct, check_baseline, advice);
    g_free(advice);
    return 1;
  }
  return 0;
}

/* --latency: one utility study per model execution (the trace's steps 0,
 * 1, ...: vLLM execute_context / SGLang run_batch markers, numbered by
 * start time), loaded one at a time until the trace has no more, then TTFT
 * and TPOT (studies/study_latency.h).  Returns the exit status. */
static int run_latency(const char *const *paths, int n_paths, wisp_load_options lo, const char *cluster,
                       const char *system, const char *resources, const sim_replay_options *opt, const char *json)
{
  GPtrArray *studies = g_ptr_array_new_with_free_func((GDestroyNotify)study_utility_result_free);
  GArray *measured = g_array_new(FALSE, FALSE, sizeof(double));
  topo_variant *base = NULL;
  char *path = NULL;
  GError *error = NULL;
  study_latency *l = NULL;
  int status = 0, n_ranks = 0;
  for (int k = 0; k < 100000; k++) {
    lo.step = k;
    et_workload *w = wisp_load_workload_paths(paths, n_paths, &lo, &error);
    if (w == NULL && k > 0 && strstr(error->message, ": no ProfilerStep#")) {
      g_clear_error(&error); /* past the last execution */
      break;
    }
    study_utility_result *u = NULL;
    if (w && k > 0 && w->n_ranks != n_ranks)
      g_set_error(&error, WISP_ERROR, WISP_ERROR_INVALID, "model execution %d has %d ranks, execution 0 %d", k,
                  w->n_ranks, n_ranks);
    if (w == NULL || error ||
        (!base && ((base = wisp_cli_network_open(cluster, w->n_ranks, stdout, &path, &error)) == NULL ||
                   (system && !wisp_cli_system_apply(base, cluster, system, stdout, &error)))) ||
        (u = study_utility_run(w, base, resources, opt, &error)) == NULL) {
      if (w)
        et_workload_free(w);
      status = wisp_cli_fail(error);
      goto out;
    }
    /* Each rank's own window: CCL-Bench's rule is per rank (study_latency_rule). */
    n_ranks = w->n_ranks;
    for (int r = 0; r < w->n_ranks; r++) {
      double m = u->measured_step > 0 && w->measured_step_ps && w->measured_step_ps[r] >= 0
                     ? (double)w->measured_step_ps[r] / (double)SIM_PS_PER_NS : NAN;
      g_array_append_val(measured, m);
    }
    et_workload_free(w);
    g_ptr_array_add(studies, u);
  }
  if ((l = study_latency_new((study_utility_result *const *)studies->pdata, (const double *)(void *)measured->data,
                             n_ranks, (int)studies->len, &error)) == NULL) {
    status = wisp_cli_fail(error);
    goto out;
  }
  study_latency_print(l, stdout);
  if (json && !study_latency_write_json(l, json, &error))
    status = wisp_cli_fail(error);
out:
  study_latency_free(l);
  topo_variant_free(base);
  g_free(path);
  g_array_free(measured, TRUE);
  g_ptr_array_free(studies, TRUE);
  return status;
}

int wisp_cmd_utility(int argc, char **argv)
{
  char *cluster = NULL, *system = NULL, *resources = NULL, *json = NULL, *svg = NULL, *html = NULL, *tmp_json = NULL;
  double check_baseline = -1;
  char *check_baseline_s = NULL;
  gboolean verbose = FALSE;
  gboolean latency = FALSE;
  wisp_cli_common common;
  GOptionEntry common_entries[WISP_CLI_COMMON_ENTRIES];
  wisp_cli_common_entries(&common, common_entries);
  GOptionEntry net_entries[WISP_CLI_NETWORK_SYSTEM_ENTRIES];
  wisp_cli_network_system_entries(&cluster, &system, "network: preset name or file (resized to the workload), wisp "
                                  "YAML or ASTRA-sim network.yml", net_entries);
  GOptionEntry entries[] = {
    {"resource", 'r', 0, G_OPTION_ARG_STRING, &resources,
     "resources to double: scale_out_bw,scale_up_bw,scale_up_domain,ici_bw,latency,all,bw:TIER,lat:TIER,size:TIER, and the levers compute,compute:CLASS (gemm, elementwise, comm_adjacent),host (default all: the network ones)", "LIST"},
    {"json", 'j', 0, G_OPTION_ARG_FILENAME, &json, "write the versioned JSON result to FILE (atomically)", "FILE"},
    {"svg", 0, 0, G_OPTION_ARG_FILENAME, &svg, "write a utility bar chart (SVG) to FILE", "FILE"},
    WISP_CLI_HTML_ENTRY(html),
    {"latency", 0, 0, G_OPTION_ARG_NONE, &latency, "inference traces: TTFT and TPOT (CCL-Bench's rule over the vLLM execute_context / SGLang run_batch markers) and what doubling each resource does to them, one replay per model execution", NULL},
    {"check-baseline", 0, 0, G_OPTION_ARG_STRING, &check_baseline_s, "fail when the simulated baseline differs from the measured step by more than MAX_PCT %", "MAX_PCT"},
    {"verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose, "also print the critical path's categories, communications, ranks and every wait (default: one screen)", NULL},
    {NULL},
  };
  GError *error = NULL;
  GOptionContext *ctx = g_option_context_new("WORKLOAD... - utility of doubling each network resource");
  g_option_context_add_main_entries(ctx, net_entries, NULL);
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_add_main_entries(ctx, common_entries, NULL);
  g_option_context_set_description(ctx,
      "Utility(r) = (T - T_2x(r)) / T x 100 %, T the simulated baseline step time.\n"
      "Example: wisp utility build/demo/workload/llm --network examples/cluster-2node.yaml");
  int status = 0;
  et_workload *w = NULL;
  topo_variant *base = NULL;
  char *path = NULL;
  study_utility_result *u = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    fprintf(stderr, "wisp utility: %s\n", error->message);
    g_clear_error(&error);
    status = 2;
    goto out;
  }
  if (!wisp_cli_parse_pct("--check-baseline", check_baseline_s, &check_baseline, &error)) {
    fprintf(stderr, "wisp utility: %s\n", error->message);
    g_clear_error(&error);
    status = 2;
    goto out;
  }
  if (argc < 2 || cluster == NULL) {
    fprintf(stderr, "wisp utility: give a WORKLOAD (one or more paths) and " WISP_CLI_NETWORK_USAGE
            " (--cluster is the same option) (see wisp utility --help)\n");
    status = 2;
    goto out;
  }
  if (!wisp_cli_html_prepare(html, &json, &tmp_json, &error) || !wisp_output_declare(json, "--json", &error) ||
      !wisp_output_declare(svg, "--svg", &error)) {
    fprintf(stderr, "wisp utility: %s\n", error->message);
    g_clear_error(&error);
    status = 2;
    goto out;
  }
  sim_replay_options opt = {0};
  wisp_load_options lo;
  if (!wisp_cli_common_resolve(&common, &lo, &opt, &error)) {
    fprintf(stderr, "wisp utility: %s\n", error->message);
    g_clear_error(&error);
    status = 2;
    goto out;
  }
  if (!wisp_cli_network_exists(cluster, &error)) {
    status = wisp_cli_fail(error);
    goto out;
  }
  lo.scale_in_report = TRUE; /* study_utility_print says a scaled job's layout on stdout, once */
  lo.unsimulated_in_report = TRUE; /* and the unsimulated-communication warning */
  if (latency) {
    if (lo.step >= 0 || lo.step_lo >= 0 || lo.all_steps || lo.whole_trace || svg || html || check_baseline >= 0) {
      fprintf(stderr, "wisp utility: --latency replays every model execution itself: give it without --step, "
              "--steps, --svg, --html and --check-baseline\n");
      status = 2;
      goto out;
    }
    status = run_latency((const char *const *)argv + 1, argc - 1, lo, cluster, system, resources, &opt, json);
    goto out;
  }
  w = wisp_load_workload_paths((const char *const *)argv + 1, argc - 1, &lo, &error);
  if (w == NULL || (base = wisp_cli_network_open(cluster, w->n_ranks, stdout, &path, &error)) == NULL ||
      (system && !wisp_cli_system_apply(base, cluster, system, stdout, &error)) ||
      !wisp_output_check(&error) || (u = study_utility_run(w, base, resources, &opt, &error)) == NULL) {
    status = wisp_cli_fail(error);
    goto out;
  }
  study_utility_print(u, w, base, path, verbose, stdout);
  if ((status = check_baseline_gate(u, w, check_baseline)) != 0)
    goto out;
  if ((json && !study_utility_write_json(u, w, base, path, json, &error)) ||
      (html && !wisp_cli_write_html(json, tmp_json, html, &error)))
    status = wisp_cli_fail(error);
  if (status == 0 && svg && !draw_utility_svg(u, w, svg, &error))
    status = wisp_cli_fail(error);
out:
  g_free(check_baseline_s);
  study_utility_result_free(u);
  topo_variant_free(base);
  if (w)
    et_workload_free(w);
  g_free(path);
  g_option_context_free(ctx);
  g_free(cluster);
  g_free(system);
  g_free(resources);
  g_free(json);
  wisp_cli_common_clear(&common);
  g_free(svg);
  wisp_cli_html_done(tmp_json), g_free(html);
  wisp_output_reset();
  return status;
}
