/* cmd_simulate.c: `wisp simulate WORKLOAD --network CONFIG`.
 *
 * WORKLOAD is a Chakra ET prefix (PREFIX.0.et ... PREFIX.(N-1).et) or a
 * directory holding one such set; an optional comm_group.json beside the
 * files defines communicator groups.
 */
#include "config.h"
#include "cli/wisp_cli.h"
#include "cli/wisp_load.h"
#include "replay/sim_report.h"
#include "replay/sim_critical.h"
#include "replay/sim_comms.h"
#include "studies/study.h"
#include "calib/cal.h"
#include "cli/wisp_metrics.h"
#include "studies/study_report.h"
#include "topologies/topo.h"

/* Adds the workload's content digest (so that `wisp diff` can tell two
 * workloads apart) and, for measured inputs, the baseline fidelity object
 * to the JSON report. */
typedef struct {
  const sim_result *r;
  const et_workload *w;
  gboolean measured;
  const wisp_run_metrics *metrics; /* the CCL-Bench catalog (doc/metrics.md) */
  const topo *t;
  study_report_lanes *lanes;       /* the per-rank timeline the HTML report draws */
  const char *timeline;            /* the Perfetto file, when one was written */
} baseline_ctx;

/* TRUE when the input carried measured times (a profile, not a synthetic
 * graph): then the baseline fidelity report applies. */
static gboolean has_measurements(const sim_result *r, const et_workload *w)
{
  if (sim_report_measured_step(w) >= 0)
    return TRUE;
  sim_comms *owned;
  gboolean any = sim_comms_measured(sim_comms_of(r, w->groups->len, &owned)) > 0;
  sim_comms_free(owned);
  return any;
}

static void add_baseline(wisp_json *j, void *p)
{
  baseline_ctx *b = p;
  char *digest = study_workload_digest(b->w); /* O(nodes + edges) */
  wisp_json_string(j, "workload_digest_sha256", digest);
  g_free(digest);
  if (b->measured)
    cal_baseline_json(b->r, b->w, j, "baseline");
  wisp_run_metrics_json(b->metrics, j);
  /* For wisp report: the resolved tiers, the per-rank timeline and the
   * Perfetto file (absolute, so a page elsewhere can link it). */
  wisp_json_begin_object(j, "topology");
  wisp_json_string(j, "name", topo_name(b->t));
  wisp_json_int(j, "n_ranks", topo_n_ranks(b->t));
  wisp_json_uint(j, "n_links", topo_n_links(b->t));
  wisp_json_begin_array(j, "dims");
  for (int d = 0; d < topo_n_dims(b->t); d++) {
    wisp_json_begin_object(j, NULL);
    wisp_json_string(j, "name", topo_dim_name(b->t, d));
    wisp_json_string(j, "kind", topo_kind_name(topo_dim_kind(b->t, d)));
    wisp_json_int(j, "size", topo_dim_size(b->t, d));
    wisp_json_uint(j, "bandwidth_Bps", topo_dim_bw(b->t, d));
    wisp_json_end_object(j);
  }
  wisp_json_end_array(j);
  wisp_json_end_object(j);
  if (b->lanes)
    study_report_lanes_json(b->lanes, b->r->step_time, b->r->n_ranks, j);
  if (b->timeline && !wisp_output_is_stdout(b->timeline)) {
    char *abs = g_canonicalize_filename(b->timeline, NULL);
    wisp_json_string(j, "timeline_file", abs);
    g_free(abs);
  }
}

#include <stdlib.h>
#include <limits.h>
#include <string.h>

/* "FROM:TO" with time units, either side may be empty ("10ms:", ":5ms"). */
static gboolean parse_window(const char *s, sim_time_ps *from, sim_time_ps *to)
{
  const char *colon = strchr(s, ':'), *why;
  if (colon == NULL)
    return FALSE;
  char *a = g_strndup(s, (gsize)(colon - s));
  gboolean ok = (*a == '\0' || wisp_parse_time(a, from, &why)) && (colon[1] == '\0' || wisp_parse_time(colon + 1, to, &why));
  g_free(a);
  return ok && (*to < 0 || *to > *from);
}

/* Loads the workload and the network (--network and --cluster are one
 * option: presets are resized to the workload and the resize is printed),
 * refuses an output that would overwrite an input before the replay prints
 * anything, and opens the timeline when asked.  Returns 0 with *w, *t (and
 * *tl when `timeline` is set) owned by the caller, or the exit status with
 * nothing to free. */
static int simulate_inputs(const char *network, const char *system, int n_paths, char **paths, const wisp_load_options *lo,
                           const char *timeline, const char *tl_ranks, sim_time_ps tl_from, sim_time_ps tl_to,
                           et_workload **w, topo **t, study_timeline **tl)
{
  GError *error = NULL;
  if (!wisp_cli_network_exists(network, &error))
    return wisp_cli_fail(error);
  wisp_load_options l = *lo;
  l.scale_in_report = TRUE; /* the summary prints a scaled job's layout on stdout, once */
  l.unsimulated_in_report = TRUE; /* and its unsimulated-communication warning */
  *w = wisp_load_workload_paths((const char *const *)paths, n_paths, &l, &error);
  if (*w == NULL)
    return wisp_cli_fail(error);
  if ((*t = wisp_cli_network_load_system(network, system, (*w)->n_ranks, stdout, &error)) == NULL || !wisp_output_check(&error) ||
      (timeline && (*tl = study_timeline_open(timeline, *w, tl_ranks, tl_from, tl_to, &error)) == NULL)) {
    et_workload_free(*w);
    if (*t)
      topo_free(*t);
    *w = NULL;
    *t = NULL;
    return wisp_cli_fail(error);
  }
  return 0;
}

/* The outputs of `wisp simulate` besides the summary. */
typedef struct {
  const char *json, *timeline, *svg, *html;
  const char *tmp_json;       /* json is this temporary file (--html without --json): not kept, not printed */
  int max_rows;
  gboolean chain;
  double check_baseline;
  wisp_run_metrics *metrics;  /* the metric catalog (off with --no-metrics) */
  study_report_lanes *lanes;  /* the per-rank timeline for the JSON (with --json or --html) */
} simulate_outputs;

/* Prints the summary, the critical path and (for measured inputs) the
 * baseline fidelity, then finishes the timeline and writes the JSON and SVG
 * outputs and checks --check-baseline.  Returns the exit status. */
static int simulate_report(const sim_result *r, const et_workload *w, const topo *t, study_timeline *tl,
                           const simulate_outputs *o)
{
  GError *error = NULL;
  int status = 0;
  sim_report_print_summary(r, w, t, stdout, o->max_rows);
  if (r->critical) {
    sim_crit_print_summary(r->critical, w, stdout);
    if (o->chain)
      sim_crit_print_chain(r->critical, w, stdout, o->max_rows);
  }
  /* Baseline fidelity: simulated against measured, whenever the input
   * came from a profile (it carries measured times). */
  gboolean measured = has_measurements(r, w);
  if (measured)
    cal_print_baseline(r, w, stdout);
  if (tl) {
    uint64_t n_ev = study_timeline_events(tl);
    if (study_timeline_finish(tl, r, &error))
      printf("timeline: %s (%" G_GUINT64_FORMAT " slices)\n", o->timeline, n_ev);
    else
      status = wisp_cli_fail(error);
  }
  wisp_run_metrics_finish(o->metrics, r, w, stdout);
  baseline_ctx bctx = {r, w, measured, o->metrics, t, o->lanes, o->timeline};
  if (o->json && !sim_report_write_json_ext(r, w, t, o->json, add_baseline, &bctx, &error))
    status = wisp_cli_fail(error);
  else if (o->json) {
    if (o->tmp_json == NULL)
      printf("json: %s (the versioned report, schema_version %d)\n", o->json, WISP_REPORT_SCHEMA_VERSION);
    if (o->html && !wisp_cli_write_html(o->json, o->tmp_json, o->html, &error))
      status = wisp_cli_fail(error);
  }
  if (status == 0 && o->check_baseline >= 0 && !cal_check_baseline(r, w, o->check_baseline, &error))
    status = wisp_cli_fail(error);
  if (o->svg && !study_svg_rank_breakdown(o->svg, "Per-rank step breakdown (simulated)", r, &error))
    status = wisp_cli_fail(error);
  else if (o->svg)
    printf("svg: %s (per-rank step breakdown, %d ranks)\n", o->svg, r->n_ranks);
  return status;
}

/* --job: several jobs on one fabric (cmd_simulate_jobs.c).  `usable`:
 * no WORKLOAD argument, one network, no --timeline, --svg or
 * --check-baseline.  Returns the exit status. */
static int simulate_jobs(char **jobs, const char *network, gboolean usable, wisp_cli_common *common,
                         gboolean checked, const char *json, const char *tmp_json, const char *html, int max_rows)
{
  GError *error = NULL;
  sim_replay_options jo = {.checked = checked, .critical_path = TRUE};
  wisp_load_options jl;
  if (!usable) {
    fprintf(stderr, "wisp simulate: --job takes the workloads itself (no WORKLOAD argument), needs one --network "
            "and does not combine with --timeline, --svg, --check-baseline or --system\n");
    return 2;
  }
  if (!wisp_cli_common_resolve(common, &jl, &jo, &error) || !wisp_output_declare(json, "--json", &error)) {
    fprintf(stderr, "wisp simulate: %s\n", error->message);
    g_clear_error(&error);
    return 2;
  }
  int status = wisp_simulate_jobs(jobs, network, &jl, &jo, json, max_rows);
  if (status == 0 && html && !wisp_cli_write_html(json, tmp_json, html, &error))
    status = wisp_cli_fail(error);
  return status;
}

/* Checks the output options before anything is loaded: the timeline
 * window (into *tl_from, *tl_to), every output path, and that the
 * timeline's selections come with --timeline.  Returns 0 or the exit
 * status 2 with the reason printed. */
static int simulate_check_outputs(const char *json, const char *timeline, const char *tl_ranks, const char *tl_window,
                                  const char *svg, sim_time_ps *tl_from, sim_time_ps *tl_to)
{
  GError *error = NULL;
  if (tl_window && !parse_window(tl_window, tl_from, tl_to)) {
    fprintf(stderr, "wisp simulate: --timeline-window takes FROM:TO with time units and FROM < TO, e.g. 10ms:20ms\n");
    return 2;
  }
  if (!wisp_output_declare(json, "--json", &error) || !wisp_output_declare(timeline, "--timeline", &error) ||
      !wisp_output_declare(svg, "--svg", &error)) {
    fprintf(stderr, "wisp simulate: %s\n", error->message);
    g_clear_error(&error);
    return 2;
  }
  if ((tl_ranks || tl_window) && !timeline && !json) {
    fprintf(stderr, "wisp simulate: --timeline-ranks and --timeline-window select what a timeline shows: give "
            "--timeline FILE (Perfetto), --json FILE or --html FILE (the report's per-rank timeline) too\n");
    return 2;
  }
  return 0;
}

/* The replay's observers, each calling the next: the metric catalog's,
 * the HTML report's per-rank timeline (with the JSON report; O(intervals
 * of at most 32 ranks), the ranks and window of --timeline-ranks and
 * --timeline-window) and the Perfetto timeline's.  Sets *lanes to the
 * report's timeline recorder (NULL without JSON), which the caller frees.
 * FALSE with an error when tl_ranks does not name ranks of the workload. */
static gboolean simulate_watch(study_timeline *tl, gboolean json, const char *tl_ranks, sim_time_ps tl_from,
                               sim_time_ps tl_to, const et_workload *w, wisp_run_metrics *metrics,
                               sim_replay_options *opt, study_report_lanes **lanes, GError **error)
{
  *lanes = NULL;
  if (tl)
    opt->observer = study_timeline_observer(tl);
  if (json) {
    gboolean *on = tl_ranks ? g_new0(gboolean, MAX(w->n_ranks, 1)) : NULL;
    if (on && !study_timeline_parse_ranks(tl_ranks, w->n_ranks, on, error)) {
      g_free(on);
      return FALSE;
    }
    *lanes = study_report_lanes_new(w->n_ranks, on, tl_from, tl_to, opt->observer);
    g_free(on);
    opt->observer = study_report_lanes_observer(*lanes);
  }
  wisp_run_metrics_watch(metrics, w, opt);
  return TRUE;
}

int wisp_cmd_simulate(int argc, char **argv)
{
  char *network = NULL, *system = NULL, *json = NULL;
  char *timeline = NULL, *tl_ranks = NULL, *tl_window = NULL, *svg = NULL, *html = NULL, *tmp_json = NULL;
  gboolean checked = FALSE, chain = FALSE;
  char **jobs = NULL;
  int max_rows = 64;
  double check_baseline = -1;
  char *check_baseline_s = NULL;
  gboolean no_metrics = FALSE;
  wisp_run_metrics *metrics = NULL;
  GOptionEntry metric_entries[WISP_RUN_METRICS_ENTRIES];
  wisp_run_metrics_entries(&no_metrics, metric_entries);
  wisp_cli_common common;
  GOptionEntry common_entries[WISP_CLI_COMMON_ENTRIES];
  wisp_cli_common_entries(&common, common_entries);
  GOptionEntry net_entries[WISP_CLI_NETWORK_SYSTEM_ENTRIES];
  wisp_cli_network_system_entries(&network, &system, "network: preset name or file (resized to the workload), wisp "
                                  "YAML or ASTRA-sim network.yml", net_entries);
  GOptionEntry entries[] = {
    {"json", 'j', 0, G_OPTION_ARG_FILENAME, &json, "write the versioned JSON report to FILE (atomically)", "FILE"},
    {"check", 0, 0, G_OPTION_ARG_NONE, &checked, "verify engine invariants on every step (slow)", NULL},
    {"max-rows", 0, 0, G_OPTION_ARG_INT, &max_rows, "ranks shown in the summary and runs in the critical path chain (-1: all; default 64)", "N"},
    {"timeline", 0, 0, G_OPTION_ARG_FILENAME, &timeline, "write a Chrome/Perfetto trace of the simulated run to FILE", "FILE"},
    {"timeline-ranks", 0, 0, G_OPTION_ARG_STRING, &tl_ranks, "ranks in the timeline, e.g. 0-3,8 (default all)", "LIST"},
    {"timeline-window", 0, 0, G_OPTION_ARG_STRING, &tl_window, "only slices overlapping FROM:TO, e.g. 10ms:20ms (either side may be empty)", "FROM:TO"},
    {"svg", 0, 0, G_OPTION_ARG_FILENAME, &svg, "write per-rank step breakdown bars (SVG) to FILE", "FILE"},
    WISP_CLI_HTML_ENTRY(html),
    {"check-baseline", 0, 0, G_OPTION_ARG_STRING, &check_baseline_s, "fail when the simulated step differs from the measured one by more than MAX_PCT %", "MAX_PCT"},
    {"critical-path", 0, 0, G_OPTION_ARG_NONE, &chain, "also print the critical path chain (runs of nodes on one rank and category)", NULL},
    {"job", 0, 0, G_OPTION_ARG_STRING_ARRAY, &jobs, "several jobs on one fabric: a workload, its name and its cluster ranks (repeat per job; no WORKLOAD then)", "[NAME=]PATH[@RANKS]"},
    {NULL},
  };
  GError *error = NULL;
  GOptionContext *ctx = g_option_context_new("WORKLOAD... - replay a workload on a network");
  g_option_context_add_main_entries(ctx, net_entries, NULL);
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_add_main_entries(ctx, common_entries, NULL);
  g_option_context_add_main_entries(ctx, metric_entries, NULL);
  g_option_context_set_description(ctx,
      "WORKLOAD is a Chakra ET prefix (PREFIX.0.et ... PREFIX.N-1.et) or a directory holding one set, per-rank\n"
      "Kineto traces (*.json, *.json.gz: files, globs or a directory; PyTorch execution traces beside them are\n"
      "linked with them), or XLA profiles (*.xplane.pb, *.trace.json.gz).  Several paths form one workload.\n"
      "Example: wisp simulate build/demo/workload/llm --network examples/cluster-2node.yaml --json out.json");
  int status = 0;
  if (!g_option_context_parse(ctx, &argc, &argv, &error) ||
      !wisp_cli_parse_pct("--check-baseline", check_baseline_s, &check_baseline, &error) ||
      !wisp_cli_check_int("--max-rows", max_rows, -1, INT_MAX, "-1 (all) or a row count of 0 or more", &error) ||
      !wisp_cli_html_prepare(html, &json, &tmp_json, &error)) {
    fprintf(stderr, "wisp simulate: %s\n", error->message);
    g_clear_error(&error);
    status = 2;
    goto out;
  }
  if (jobs != NULL) {
    gboolean alone_only = argc <= 1 && network != NULL && !timeline && !svg && check_baseline < 0 && !system;
    status = simulate_jobs(jobs, network, alone_only, &common, checked, json, tmp_json, html, max_rows);
    goto out;
  }
  if (argc < 2 || network == NULL) {
    fprintf(stderr, "wisp simulate: give a WORKLOAD (one or more paths) and " WISP_CLI_NETWORK_USAGE
            " (--cluster is the same option) (see wisp simulate --help)\n");
    status = 2;
    goto out;
  }
  /* The critical path is cheap (O(nodes)), so every run records it.  The
   * communication records go to a temporary file, not memory (issue 30):
   * every one when the JSON report lists them, else only those with a
   * measured duration (baseline fidelity); the summary reads the fold. */
  sim_replay_options opt = {.checked = checked, .critical_path = TRUE,
                            .comm_records = json ? SIM_COMMS_FILE : SIM_COMMS_MEASURED};
  wisp_load_options lo;
  if (!wisp_cli_common_resolve(&common, &lo, &opt, &error)) {
    fprintf(stderr, "wisp simulate: %s\n", error->message);
    g_clear_error(&error);
    status = 2;
    goto out;
  }

  sim_time_ps tl_from = 0, tl_to = -1;
  if ((status = simulate_check_outputs(json, timeline, tl_ranks, tl_window, svg, &tl_from, &tl_to)) != 0)
    goto out;
  et_workload *w = NULL;
  topo *t = NULL;
  study_timeline *tl = NULL; /* the Perfetto timeline (--timeline) */
  if ((metrics = wisp_run_metrics_new(no_metrics, &lo, &error)) == NULL) {
    status = wisp_cli_fail(error);
    goto out;
  }
  if ((status = simulate_inputs(network, system, argc - 1, argv + 1, &lo, timeline, tl_ranks, tl_from, tl_to, &w, &t,
                                &tl)))
    goto out;
  study_report_lanes *lanes = NULL; /* the report's per-rank timeline (with --json or --html) */
  sim_result *r = simulate_watch(tl, json != NULL, tl_ranks, tl_from, tl_to, w, metrics, &opt, &lanes, &error)
                      ? sim_replay_run(w, t, &opt, &error) : NULL;
  if (r == NULL) {
    study_timeline_abort(tl);
    status = wisp_cli_fail(error);
  } else {
    simulate_outputs o = { json, timeline, svg, html, tmp_json, max_rows, chain, check_baseline, metrics, lanes };
    status = simulate_report(r, w, t, tl, &o);
    sim_result_free(r);
  }
  study_report_lanes_free(lanes);
  et_workload_free(w);
  topo_free(t);
out:
  g_option_context_free(ctx);
  g_free(check_baseline_s);
  g_free(network), g_free(system);
  wisp_cli_common_clear(&common);
  g_free(timeline), g_free(tl_ranks), g_free(tl_window);
  g_free(svg);
  wisp_cli_html_done(tmp_json), g_free(html), g_free(json);
  wisp_run_metrics_free(metrics);
  g_strfreev(jobs);
  wisp_output_reset();
  return status;
}
