/* cmd_simulate_jobs.c: `wisp simulate --job [NAME=]PATH[@RANKS] --job ...
 * --network CONFIG`: several jobs on one fabric (studies/study_jobs.c).
 *
 * Each --job is a workload (anything `wisp simulate` reads) with an
 * optional name (default A, B, C, ...) and its placement onto the
 * cluster's ranks (default: the next free ranks, in order).  Every job is
 * replayed alone and all together on the same placement; the table gives
 * each job's step time both ways and the slowdown from sharing, the
 * summary and --json report are the shared run's. */
#include "config.h"
#include "cli/wisp_cli.h"
#include "cli/wisp_load.h"
#include "replay/sim_report.h"
#include "replay/sim_critical.h"
#include "studies/study.h"

#include <string.h>

typedef struct {
  const study_job *jobs;
  const study_job_result *res;
  int n;
} jobs_ctx;

static void add_jobs(wisp_json *j, void *p)
{
  const jobs_ctx *c = p;
  wisp_json_begin_array(j, "jobs");
  for (int k = 0; k < c->n; k++) {
    wisp_json_begin_object(j, NULL);
    wisp_json_string(j, "name", c->jobs[k].name);
    wisp_json_string(j, "source", c->jobs[k].w->source);
    wisp_json_int(j, "n_ranks", c->jobs[k].w->n_ranks);
    wisp_json_begin_array(j, "placement");
    for (int r = 0; r < c->jobs[k].n_place; r++)
      wisp_json_int(j, NULL, c->jobs[k].place[r]);
    wisp_json_end_array(j);
    wisp_json_ns(j, "step_alone_ns", c->res[k].alone);
    wisp_json_ns(j, "step_together_ns", c->res[k].together);
    wisp_json_double(j, "slowdown_pct", c->res[k].slowdown_pct, 6);
    wisp_json_end_object(j);
  }
  wisp_json_end_array(j);
}

/* Splits "[NAME=]PATH[@RANKS]": NAME is letters, digits, '_' and '-'
 * before the first '='; RANKS follows the last '@'. */
static void split_spec(const char *spec, int index, char **name, char **path, char **ranks)
{
  const char *s = spec, *eq = strchr(spec, '=');
  gboolean named = eq != NULL && eq > spec;
  for (const char *p = spec; named && p < eq; p++)
    named = g_ascii_isalnum(*p) || *p == '_' || *p == '-';
  if (named) {
    *name = g_strndup(spec, (gsize)(eq - spec));
    s = eq + 1;
  } else {
    *name = index < 26 ? g_strdup_printf("%c", 'A' + index) : g_strdup_printf("job%d", index);
  }
  const char *at = strrchr(s, '@');
  *path = at ? g_strndup(s, (gsize)(at - s)) : g_strdup(s);
  *ranks = at ? g_strdup(at + 1) : NULL;
}

int wisp_simulate_jobs(char **specs, const char *network, const wisp_load_options *lo, sim_replay_options *opt,
                       const char *json, int max_rows)
{
  int n = (int)g_strv_length(specs), status = 0, next = 0, n_ranks = 0;
  study_job *jobs = g_new0(study_job, n);
  study_job_result *res = g_new0(study_job_result, n);
  GError *error = NULL;
  topo *t = NULL;
  sim_result *r = NULL;
  et_workload *merged = NULL;
  /* Every --job is read and checked before any fails the run, so one
   * error lists every problem (a workload that does not load, a bad rank
   * list, a name given twice). */
  GString *problems = g_string_new(NULL);
  int n_problems = 0;
  for (int k = 0; k < n; k++) {
    char *path, *ranks;
    split_spec(specs[k], k, &jobs[k].name, &path, &ranks);
    for (int i = 0; i < k; i++)
      if (strcmp(jobs[i].name, jobs[k].name) == 0) {
        g_string_append_printf(problems, "\n  --job %s: the name %s is also job %d's; names label the jobs' rows",
                               specs[k], jobs[k].name, i + 1);
        n_problems++;
        break;
      }
    const char *paths[1] = {path};
    jobs[k].w = wisp_load_workload_paths(paths, 1, lo, &error);
    if (jobs[k].w == NULL || (ranks != NULL && !study_jobs_parse_place(ranks, &jobs[k].place, &jobs[k].n_place,
                                                                        &error))) {
      g_string_append_printf(problems, "\n  --job %s: %s", specs[k], error->message);
      g_clear_error(&error);
      n_problems++;
      if (jobs[k].w == NULL) {
        g_free(path);
        g_free(ranks);
        continue;
      }
    } else if (ranks == NULL) {
      /* Default: the next ranks after every rank placed so far. */
      jobs[k].n_place = jobs[k].w->n_ranks;
      jobs[k].place = g_new(int, jobs[k].n_place);
      for (int i = 0; i < jobs[k].n_place; i++)
        jobs[k].place[i] = next + i;
    }
    for (int i = 0; i < jobs[k].n_place; i++) {
      next = MAX(next, jobs[k].place[i] + 1);
      n_ranks = MAX(n_ranks, jobs[k].place[i] + 1);
    }
    g_free(path);
    g_free(ranks);
  }
  if (n_problems)
    status = wisp_cli_fail(g_error_new(WISP_ERROR, WISP_ERROR_INVALID, "%s%s",
                                       n_problems == 1 ? "" : "several --job problems:",
                                       n_problems == 1 ? problems->str + 3 : problems->str));
  g_string_free(problems, TRUE);
  if (status == 0 && (t = wisp_cli_network_load(network, n_ranks, stdout, &error)) == NULL)
    status = wisp_cli_fail(error);
  if (status == 0 && !wisp_output_check(&error))
    status = wisp_cli_fail(error);
  if (status == 0 && !study_jobs_run(jobs, n, t, opt, res, &r, &merged, &error))
    status = wisp_cli_fail(error);
  if (status == 0) {
    sim_report_print_summary(r, merged, t, stdout, max_rows);
    if (r->critical)
      sim_crit_print_summary(r->critical, merged, stdout);
    printf("\n%d jobs on one fabric (%s, %s tier): each replayed alone and together on the same placement\n", n,
           topo_source(t), net_tier_name(r->tier));
    printf("%-8s %6s %-24s %14s %16s %12s  %s\n", "job", "ranks", "placement", "alone_ms", "together_ms",
           "slowdown_%", "workload");
    for (int k = 0; k < n; k++) {
      GString *pl = g_string_new(NULL);
      for (int i = 0; i < jobs[k].n_place && pl->len < 21; i++)
        g_string_append_printf(pl, "%s%d", i ? "," : "", jobs[k].place[i]);
      if (pl->len >= 21) {
        g_string_truncate(pl, 20);
        g_string_append(pl, "...");
      }
      printf("%-8s %6d %-24s %14.6f %16.6f %12.4f  %s\n", jobs[k].name, jobs[k].w->n_ranks, pl->str,
             (double)res[k].alone / 1e9, (double)res[k].together / 1e9, res[k].slowdown_pct, jobs[k].w->source);
      g_string_free(pl, TRUE);
    }
    printf("slowdown = (together - alone) / alone x 100 %%; a job's step is the latest finish of its ranks.\n");
    jobs_ctx c = {jobs, res, n};
    if (json && !sim_report_write_json_ext(r, merged, t, json, add_jobs, &c, &error))
      status = wisp_cli_fail(error);
  }
  sim_result_free(r);
  et_workload_free(merged);
  topo_free(t);
  for (int k = 0; k < n; k++) {
    g_free(jobs[k].name);
    et_workload_free(jobs[k].w);
    g_free(jobs[k].place);
  }
  g_free(jobs);
  g_free(res);
  return status;
}
