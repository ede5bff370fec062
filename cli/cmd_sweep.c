/* cmd_sweep.c: `wisp sweep SPEC.yaml`: a parameter sweep over config keys
 * (studies/study_sweep.c; spec format in doc/studies.md). */
#include "config.h"
#include "cli/wisp_cli.h"
#include "cli/wisp_load.h"
#include "studies/study_sweep.h"
#include "replay/sim_report.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

/* Splits one CSV line (RFC 4180 quoting, as study_sweep.c writes it) into
 * fields (g_ptr_array_unref).  O(line). */
static GPtrArray *csv_split(const char *line)
{
  GPtrArray *f = g_ptr_array_new_with_free_func(g_free);
  GString *cur = g_string_new(NULL);
  gboolean quoted = FALSE;
  for (const char *p = line;; p++) {
    if (quoted && *p == '"' && p[1] == '"') {
      g_string_append_c(cur, '"');
      p++;
    } else if (*p == '"') {
      quoted = !quoted;
    } else if (*p == '\0' || (!quoted && *p == ',')) {
      g_ptr_array_add(f, g_strdup(cur->str));
      g_string_truncate(cur, 0);
      if (*p == '\0')
        break;
    } else {
      g_string_append_c(cur, *p);
    }
  }
  g_string_free(cur, TRUE);
  return f;
}

/* The results as a table, from the CSV the sweep wrote: each point's
 * label and axis values, step time (ms), utility against the base point
 * and status; at most 40 rows (the CSV has all).  O(points). */
static void print_results(const study_spec *s, const char *csv_path)
{
  char *text = NULL;
  if (!g_file_get_contents(csv_path, &text, NULL, NULL))
    return;
  char **lines = g_strsplit(text, "\n", -1);
  g_free(text);
  GPtrArray *head = lines[0] ? csv_split(lines[0]) : NULL;
  guint n_axes = (guint)s->n_axes, first = 2 + n_axes; /* point, label, axes, then step_time_ns ... */
  if (head == NULL || head->len < first + 6) {
    if (head)
      g_ptr_array_unref(head);
    g_strfreev(lines);
    return;
  }
  printf("\n%6s  %-16s", "point", "label");
  for (guint a = 0; a < n_axes; a++)
    printf("  %-14s", (const char *)head->pdata[2 + a]);
  printf("  %14s  %10s  %s\n", "step_time_ms", "utility_%", "status");
  int shown = 0, total = 0;
  for (char **l = lines + 1; *l; l++) {
    if (**l == '\0')
      continue;
    total++;
    if (shown >= 40)
      continue;
    GPtrArray *f = csv_split(*l);
    if (f->len == head->len) {
      const char *st = f->pdata[f->len - 1], *ms = f->pdata[first];
      printf("%6s  %-16s", (const char *)f->pdata[0], (const char *)f->pdata[1]);
      for (guint a = 0; a < n_axes; a++)
        printf("  %-14s", (const char *)f->pdata[2 + a]);
      if (*ms)
        printf("  %14.6f  %10s  %s\n", g_ascii_strtod(ms, NULL) / 1e6, (const char *)f->pdata[f->len - 2], st);
      else
        printf("  %14s  %10s  %s\n", "-", "-", st);
      shown++;
    }
    g_ptr_array_unref(f);
  }
  if (total > shown)
    printf("  ... %d more points in %s\n", total - shown, csv_path);
  g_ptr_array_unref(head);
  g_strfreev(lines);
}

/* The sweep's summary (points, outputs, errors) and the baseline fidelity
 * of the base point against the workload's measured step, checked against
 * --check-baseline (MAX_PCT, < 0: unchecked).  Returns the exit status. */
static int report_sweep(const study_spec *s, const et_workload *w, const study_sweep_stats *st, double check_baseline,
                        gboolean measured_starts)
{
  int status = 0;
  printf("sweep %s: %d points (%d simulated, %d kept from a previous run, %d in error) in %.2f s",
         s->name, st->total, st->run, st->skipped, st->failed, st->wall_seconds);
  if (st->run > 0 && st->wall_seconds > 0)
    printf(", %.1f points/s", st->run / st->wall_seconds);
  printf("\n  %s\n  %s\n", st->csv_path, st->jsonl_path);
  if (st->orphans_removed > 0)
    printf("  removed %d temporary point file(s) a killed run left behind\n", st->orphans_removed);
  if (st->svg_path)
    printf("  %s\n", st->svg_path);
  else
    printf("  (no chart: no point finished)\n");
  print_results(s, st->csv_path);
  for (guint i = 0; st->errors && i < st->errors->len; i++)
    fprintf(stderr, "wisp sweep: %s\n", (const char *)st->errors->pdata[i]);
  if (st->failed)
    status = 1;
  sim_time_ps measured = sim_report_measured_end(w, measured_starts, NULL);
  if (measured > 0) {
    double err = 100.0 * (double)(st->base_step - measured) / (double)measured;
    printf("baseline: base point simulated %.6f ms vs measured %.6f ms: error %+.2f %%\n",
           (double)st->base_step / 1e9, (double)measured / 1e9, err);
    if (check_baseline >= 0 && fabs(err) > check_baseline) {
      char *advice = sim_report_baseline_advice(w, measured_starts);
      fprintf(stderr, "wisp: error: baseline error %+.2f %% exceeds --check-baseline %.2f %%: %s first\n", err,
              check_baseline, advice);
      g_free(advice);
      status = 1;
    }
  } else if (check_baseline >= 0) {
    fprintf(stderr, "wisp: error: --check-baseline: the workload carries no measured step time\n");
    status = 1;
  }
  return status;
}

/* --list: the points of the spec, one line each with every axis value. */
static void list_points(const study_spec *s)
{
  printf("%s: %d points (%s)\n", s->name, s->n_points, s->zip ? "zip" : "grid");
  for (int p = 0; p < s->n_points; p++) {
    printf("%6d", p);
    for (int a = 0; a < s->n_axes; a++)
      printf("  %s=%s", s->axes[a].key, study_spec_value(s, p, a));
    printf("\n");
  }
}

/* The numeric options' ranges (cli/wisp_load.h): --jobs 0 is "not given"
 * (all cores) and a negative count is refused. */
static gboolean sweep_ranges(const char *check_baseline_s, double *check_baseline, int jobs, GError **error)
{
  return wisp_cli_parse_pct("--check-baseline", check_baseline_s, check_baseline, error) &&
         wisp_cli_check_int("--jobs", jobs, 0, 4096, "a worker count of 1 to 4096 (0 or absent: all cores)", error);
}

/* The worker count is --jobs: -j means --json on every command. */
static void print_parse_error(const GError *error)
{
  fprintf(stderr, "wisp sweep: %s%s\n", error->message,
          strstr(error->message, "-j") && !strstr(error->message, "--jobs")
              ? " (the worker count is --jobs N; -j means --json on every command)" : "");
}

int wisp_cmd_sweep(int argc, char **argv)
{
  char *out_dir = NULL, *check_baseline_s = NULL, *workload = NULL, *shard = NULL, *html = NULL;
  int jobs = 0;
  double check_baseline = -1;
  gboolean resume = FALSE, no_progress = FALSE, dry = FALSE;
  GOptionEntry entries[] = {
    {"output", 'o', 0, G_OPTION_ARG_FILENAME, &out_dir, "output directory (default: NAME-sweep in the current directory)", "DIR"},
    {"jobs", 0, 0, G_OPTION_ARG_INT, &jobs, "worker processes (default: all cores)", "N"},
    {"resume", 0, 0, G_OPTION_ARG_NONE, &resume, "keep points already finished in DIR (after a kill or a failure)", NULL},
    {"shard", 0, 0, G_OPTION_ARG_STRING, &shard, "run only shard K of N (points p with p % N == K-1); join with wisp sweep-merge", "K/N"},
    {"workload", 'w', 0, G_OPTION_ARG_FILENAME, &workload, "workload to use instead of the spec's", "PATH"},
    {"no-progress", 0, 0, G_OPTION_ARG_NONE, &no_progress, "no progress bar even on a terminal", NULL},
    {"list", 0, 0, G_OPTION_ARG_NONE, &dry, "print the points and exit", NULL},
    {"check-baseline", 0, 0, G_OPTION_ARG_STRING, &check_baseline_s, "fail when the base point's step differs from the workload's measured step by more than MAX_PCT %", "MAX_PCT"},
    WISP_CLI_HTML_ENTRY(html),
    {NULL},
  };
  GError *error = NULL;
  /* The input and replay options of simulate and utility, applied to
   * every point (the spec's set: and axes may override algo and
   * compute_slots). */
  wisp_cli_common common;
  GOptionEntry common_entries[WISP_CLI_COMMON_ENTRIES];
  wisp_cli_common_entries(&common, common_entries);
  GOptionContext *ctx = g_option_context_new("SPEC.yaml - sweep config keys and tabulate the simulated step time");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_add_main_entries(ctx, common_entries, NULL);
  g_option_context_set_description(ctx,
      "Outputs DIR/NAME.csv, DIR/NAME.jsonl, DIR/NAME.svg and the resume state DIR/NAME.points/.\n"
      "The input and replay options (--starts, --algo, --slow-rank, ...) apply to every point.\n"
      "Example: wisp sweep examples/ccl-bench-sweep.yaml --workload build/demo/workload/llm --jobs 4");
  int status = 0, k = 1, n = 1;
  wisp_load_options lo = WISP_LOAD_OPTIONS_INIT;
  sim_replay_options ro = {0};
  study_spec *s = NULL;
  et_workload *w = NULL;
  study_sweep_stats st = {0};
  if (!g_option_context_parse(ctx, &argc, &argv, &error) ||
      !sweep_ranges(check_baseline_s, &check_baseline, jobs, &error) ||
      (html && !wisp_output_declare(html, "--html", &error))) {
    print_parse_error(error);
    g_clear_error(&error);
    status = 2;
    goto out;
  }
  if (argc != 2) {
    fprintf(stderr, "wisp sweep: give exactly one SPEC.yaml (see wisp sweep --help)\n");
    status = 2;
    goto out;
  }
  if (shard && !wisp_cli_parse_shard(shard, &k, &n)) {
    fprintf(stderr, "wisp sweep: --shard takes K/N with 1 <= K <= N, e.g. 2/8 (got '%s')\n", shard);
    status = 2;
    goto out;
  }
  if (!wisp_cli_common_resolve(&common, &lo, &ro, &error)) {
    fprintf(stderr, "wisp sweep: %s\n", error->message);
    g_clear_error(&error);
    status = 2;
    goto out;
  }
  if ((s = study_spec_load(argv[1], &error)) == NULL) {
    status = wisp_cli_fail(error);
    goto out;
  }
  /* --list checks the spec too (on the cluster as written: no workload is
   * loaded to fit it to). */
  if (dry) {
    if (!study_spec_check(s, 0, &error)) {
      status = wisp_cli_fail(error);
      goto out;
    }
    list_points(s);
    goto out;
  }
  const char *wpath = workload ? workload : s->workload;
  if (wpath == NULL) {
    fprintf(stderr, "wisp sweep: the spec names no workload; pass --workload PATH\n");
    status = 2;
    goto out;
  }
  if ((w = wisp_load_workload_full(wpath, &lo, &error)) == NULL || !study_spec_check(s, w->n_ranks, &error)) {
    status = wisp_cli_fail(error);
    goto out;
  }
  char *dir = out_dir ? g_strdup(out_dir) : g_strdup_printf("%s-sweep", s->name);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  study_sweep_options o = {.out_dir = dir, .jobs = jobs > 0 ? jobs : (cores > 0 ? (int)cores : 1),
                           .shard_k = k, .shard_n = n, .resume = resume,
                           .progress = !no_progress && isatty(2), .has_tier = ro.has_tier, .tier = ro.tier,
                           .levers = ro.levers, .has_algo = ro.has_algo, .algo = ro.algo,
                           .compute_slots = ro.compute_slots, .measured_starts = ro.measured_starts};
  if (!study_sweep_run(s, w, &o, &st, &error)) {
    status = wisp_cli_fail(error);
  } else {
    status = report_sweep(s, w, &st, check_baseline, ro.measured_starts);
    if (html && st.jsonl_path && !wisp_cli_write_html(st.jsonl_path, NULL, html, &error))
      status = wisp_cli_fail(error);
  }
  g_free(dir);
out:
  g_free(check_baseline_s);
  study_sweep_stats_clear(&st);
  if (w)
    et_workload_free(w);
  study_spec_free(s);
  g_option_context_free(ctx);
  g_free(out_dir);
  g_free(workload);
  g_free(shard);
  g_free(html);
  wisp_cli_common_clear(&common);
  return status;
}
