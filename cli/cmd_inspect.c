/* cmd_inspect.c: `wisp inspect TRACE...` - load PyTorch profiler (Kineto)
 * traces and print what the frontend found, skipped and built, per rank.
 * Exit status 0 on success, 1 on malformed or unusable input (the message
 * names the file and byte offset), 2 on bad usage.
 */
#include "config.h"
#include "frontends/fe.h"

#include <stdlib.h>
#include <string.h>

/* Shared option parsing of inspect and convert; fills opt, returns FALSE on a usage error.
 * After success, wisp_kineto_cli_options_clear frees what opt owns. */
gboolean wisp_kineto_cli_options(const char *cmd, int *argc, char ***argv, fe_kineto_options *opt, char **out_dir,
                                 char **prefix, int *status);
void wisp_kineto_cli_options_clear(fe_kineto_options *opt);
extern char *wisp_convert_for; /* convert --for TARGET (cmd_convert.c) */

gboolean wisp_kineto_cli_options(const char *cmd, int *argc, char ***argv, fe_kineto_options *opt, char **out_dir,
                                 char **prefix, int *status)
{
  char *mode = NULL, *steps = NULL, *replicate = NULL;
  int step = -1;
  double min_gap_ns = 1.0;
  gboolean strict = FALSE, host_launch = TRUE; /* convert --for astra-sim turns it off (cmd_convert.c) */
  GOptionEntry common[] = {
    {"mode", 'm', 0, G_OPTION_ARG_STRING, &mode, "compute model: kernels (default) or gap", "kernels|gap"},
    {"step", 0, 0, G_OPTION_ARG_INT, &step, "use ProfilerStep#N as the window", "N"},
    {"steps", 0, 0, G_OPTION_ARG_STRING, &steps, "all: window spans the inner steps; whole: ignore steps", "all|whole"},
    {"strict", 0, 0, G_OPTION_ARG_NONE, &strict, "unmatched collectives, mismatches and guessed ranks are errors", NULL},
    {"replicate-from", 0, 0, G_OPTION_ARG_STRING, &replicate,
     "synthesize absent ranks from these traced ranks (symmetric assumption)", "R[,R...]"},
    {"min-gap-ns", 0, 0, G_OPTION_ARG_DOUBLE, &min_gap_ns, "idle gaps shorter than this are not emitted (default 1)", "NS"},
    {NULL},
  };
  GOptionEntry host_off[] = {
    {"no-host-launch", 0, G_OPTION_FLAG_REVERSE, G_OPTION_ARG_NONE, &host_launch,
     "kernels mode: no CPU launch threads in the graph (idle before a GPU op is measured from its stream and cross-stream predecessors only)", NULL},
    {NULL},
  };
  GOptionEntry conv[] = {
    {"output", 'o', 0, G_OPTION_ARG_FILENAME, out_dir, "output directory (created if absent)", "DIR"},
    {"prefix", 'p', 0, G_OPTION_ARG_STRING, prefix, "file prefix (default: trace)", "PREFIX"},
    {"host-launch", 0, 0, G_OPTION_ARG_NONE, &host_launch, "kernels mode: write the launching CPU threads (default)", NULL},
    {"for", 0, 0, G_OPTION_ARG_STRING, &wisp_convert_for, "write for another tool: astra-sim (see wisp-convert(1))", "astra-sim"},
    {NULL},
  };
  GError *error = NULL;
  GOptionContext *ctx = g_option_context_new(out_dir ? "TRACE... -o DIR - convert Kineto traces to Chakra ET"
                                                     : "TRACE... - summarize Kineto traces");
  g_option_context_add_main_entries(ctx, common, NULL);
  if (out_dir)
    g_option_context_add_main_entries(ctx, conv, NULL);
  g_option_context_add_main_entries(ctx, host_off, NULL);
  g_option_context_set_description(ctx, "TRACE is a directory of per-rank *.json / *.json.gz files, files, or one file.\n"
                                        "The rank of each file comes from distributedInfo.rank.");
  gboolean ok = g_option_context_parse(ctx, argc, argv, &error);
  g_option_context_free(ctx);
  if (!ok) {
    fprintf(stderr, "wisp %s: %s\n", cmd, error->message);
    g_error_free(error);
    *status = 2;
    return FALSE;
  }
  /* From here on every exit goes through `out`, which frees the option
   * strings; on success opt->replicate_from is owned by the caller
   * (wisp_kineto_cli_options_clear). */
  gboolean good = FALSE;
  fe_kineto_options_init(opt);
  opt->strict = strict;
  opt->host_launch = host_launch;
  opt->step = step;
  opt->replicate_from = replicate;
  *status = 2;
  if (min_gap_ns < 0 || !wisp_ps_from_ns(min_gap_ns, &opt->min_gap_ps)) {
    fprintf(stderr, "wisp %s: --min-gap-ns must be a non-negative number\n", cmd);
    goto out;
  }
  if (mode && !strcmp(mode, "gap"))
    opt->mode = FE_KINETO_GAP;
  else if (mode && strcmp(mode, "kernels")) {
    fprintf(stderr, "wisp %s: unknown --mode '%s' (use kernels or gap)\n", cmd, mode);
    goto out;
  }
  if (steps && !strcmp(steps, "all"))
    opt->all_steps = TRUE;
  else if (steps && !strcmp(steps, "whole"))
    opt->whole_trace = TRUE;
  else if (steps) {
    fprintf(stderr, "wisp %s: unknown --steps '%s' (use all or whole, or --step N)\n", cmd, steps);
    goto out;
  }
  if (*argc < 2) {
    fprintf(stderr, "wisp %s: give at least one TRACE directory or file (see wisp %s --help)\n", cmd, cmd);
    goto out;
  }
  good = TRUE;
  *status = 0;
out:
  g_free(mode);
  g_free(steps);
  if (!good)
    wisp_kineto_cli_options_clear(opt);
  return good;
}

void wisp_kineto_cli_options_clear(fe_kineto_options *opt)
{
  g_free((char *)opt->replicate_from);
  opt->replicate_from = NULL;
}

int wisp_cmd_inspect(int argc, char **argv)
{
  fe_kineto_options opt;
  int status = 0;
  if (!wisp_kineto_cli_options("inspect", &argc, &argv, &opt, NULL, NULL, &status))
    return status;
  status = 1;
  fe_kineto_report rep;
  GError *error = NULL;
  double t0 = wisp_wall_seconds();
  et_workload *w = fe_kineto_load((const char *const *)argv + 1, argc - 1, &opt, &rep, &error);
  double dt = wisp_wall_seconds() - t0;
  if (w || (rep.n_files > 0 && rep.ranks[0].events_read > 0))
    fe_kineto_report_print(&rep, stdout);
  uint64_t bytes = 0;
  for (int i = 0; i < rep.n_files; i++)
    bytes += rep.ranks[i].bytes_read;
  if (w)
    printf("\nloaded in %.3f s (%.1f MB/s of JSON)\n", dt, dt > 0 ? (double)bytes / dt / 1e6 : 0.0);
  fe_kineto_report_clear(&rep);
  if (!w) {
    fprintf(stderr, "wisp inspect: error: %s\n", error->message);
    g_error_free(error);
  } else {
    et_workload_free(w);
    status = 0;
  }
  wisp_kineto_cli_options_clear(&opt);
  return status;
}
