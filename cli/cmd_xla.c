/* cmd_xla.c: `wisp inspect` and `wisp convert` for XLA/TPU profiles
 * (XPlane `*.xplane.pb[.gz]`, XProf trace JSON `*.trace.json[.gz]`).
 * The lead's dispatcher calls these when fe_xla_wants(argc, argv).
 * Exit status 0 on success, 1 on malformed or unusable input (the message
 * names the file and byte offset), 2 on bad usage.
 */
#include "config.h"
#include "cli/wisp_cli.h"
#include "chakra/et_astra.h"
#include "frontends/xla.h"
#include "chakra/et_io.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>

extern char *wisp_convert_for; /* convert --for TARGET (cmd_convert.c) */
int wisp_convert_target(void);

/* Parses the options shared by inspect and convert; FALSE on a usage error. */
static gboolean xla_cli_options(const char *cmd, int *argc, char ***argv, fe_xla_options *opt, char **marker,
                                char **out_dir, char **prefix, int *status)
{
  int step = -1;
  gint64 partitions = 0;
  char *max_size = NULL, *steps = NULL;
  gboolean strict = FALSE, no_gaps = FALSE, replicate = FALSE, device_clock = FALSE;
  GOptionEntry common[] = {
    {"strict", 0, 0, G_OPTION_ARG_NONE, &strict, "unsized collectives and incomplete replica groups are errors", NULL},
    {"step-marker", 0, 0, G_OPTION_ARG_STRING, marker, "XLA Modules / Steps event name prefix delimiting steps", "NAME"},
    {"step", 0, 0, G_OPTION_ARG_INT, &step, "keep only step N (0-based; default: all steps)", "N"},
    {"steps", 0, 0, G_OPTION_ARG_STRING, &steps, "all or whole: every step (the default); N..N: step N (a profile is "
     "replayed one step or all of it)", "A..B|all|whole"},
    {"no-gaps", 0, 0, G_OPTION_ARG_NONE, &no_gaps, "do not emit idle-gap nodes between ops", NULL},
    {"device-clock", 0, 0, G_OPTION_ARG_NONE, &device_clock,
     "time ops by their device_offset_ps / device_duration_ps stats", NULL},
    {"replicate-missing", 0, 0, G_OPTION_ARG_NONE, &replicate,
     "devices named by replica groups but not profiled replay chip (device mod #chips)", NULL},
    {"num-partitions", 0, 0, G_OPTION_ARG_INT64, &partitions, "SPMD partitions per replica (default: inferred)", "N"},
    {"max-bytes", 0, 0, G_OPTION_ARG_STRING, &max_size, "largest (inflated) profile accepted (default 8GiB)", "SIZE"},
    {NULL},
  };
  GOptionEntry conv[] = {
    {"output", 'o', 0, G_OPTION_ARG_FILENAME, out_dir, "output directory (created if absent)", "DIR"},
    {"prefix", 'p', 0, G_OPTION_ARG_STRING, prefix, "file prefix (default: trace)", "PREFIX"},
    {"for", 0, 0, G_OPTION_ARG_STRING, &wisp_convert_for, "write for another tool: astra-sim (see wisp-convert(1))", "astra-sim"},
    {NULL},
  };
  GError *error = NULL;
  GOptionContext *ctx = g_option_context_new(out_dir ? "PROFILE... -o DIR - convert XLA/TPU profiles to Chakra ET"
                                                     : "PROFILE... - summarize XLA/TPU profiles");
  g_option_context_add_main_entries(ctx, common, NULL);
  if (out_dir)
    g_option_context_add_main_entries(ctx, conv, NULL);
  g_option_context_set_description(ctx, "PROFILE is an *.xplane.pb[.gz] or *.trace.json[.gz] file (one per host)\n"
                                        "or a directory of them; one rank per /device:TPU:N chip or /device:GPU:N GPU.");
  gboolean ok = g_option_context_parse(ctx, argc, argv, &error);
  g_option_context_free(ctx);
  if (!ok) {
    fprintf(stderr, "wisp %s: %s\n", cmd, error->message);
    g_error_free(error);
    *status = 2;
    return FALSE;
  }
  /* --steps as on every trace-reading command (cli/wisp_load.c's
   * wisp_steps_parse; XLA keeps one step or all of them). */
  if (steps && step >= 0) {
    fprintf(stderr, "wisp %s: give either --step N or --steps %s, not both\n", cmd, steps);
    g_free(steps);
    *status = 2;
    return FALSE;
  }
  if (steps && strcmp(steps, "all") != 0 && strcmp(steps, "whole") != 0) {
    int a = -1, b = -1, used = 0;
    if (sscanf(steps, "%d..%d%n", &a, &b, &used) != 2 || steps[used] != '\0' || a < 0 || b < a) {
      fprintf(stderr, "wisp %s: --steps takes A..B (step numbers, A <= B, e.g. 10..12), all or whole, not '%s'\n",
              cmd, steps);
      g_free(steps);
      *status = 2;
      return FALSE;
    }
    if (a != b) {
      fprintf(stderr, "wisp %s: --steps %d..%d: an XLA profile is replayed one step (--step N) or all of it "
              "(--steps all, the default)\n", cmd, a, b);
      g_free(steps);
      *status = 2;
      return FALSE;
    }
    step = a;
  }
  g_free(steps);
  fe_xla_options_init(opt);
  opt->strict = strict;
  opt->no_gaps = no_gaps;
  opt->replicate_missing = replicate;
  opt->device_clock = device_clock;
  opt->step_marker = *marker;
  opt->step_index = step;
  opt->num_partitions = partitions;
  if (max_size) {
    const char *why = NULL;
    if (!wisp_parse_size(max_size, &opt->limits.max_bytes, &why)) {
      fprintf(stderr, "wisp %s: --max-bytes %s: %s\n", cmd, max_size, why);
      g_free(max_size);
      *status = 2;
      return FALSE;
    }
    g_free(max_size);
  }
  if (partitions < 0 || step < -1) {
    fprintf(stderr, "wisp %s: --num-partitions and --step must not be negative\n", cmd);
    *status = 2;
    return FALSE;
  }
  if (*argc < 2) {
    fprintf(stderr, "wisp %s: give at least one PROFILE file or directory (see wisp %s --help)\n", cmd, cmd);
    *status = 2;
    return FALSE;
  }
  return TRUE;
}

static et_workload *xla_cli_load(int argc, char **argv, const fe_xla_options *opt, fe_xla_report *rep,
                                 double *seconds, GError **error)
{
  double t0 = wisp_wall_seconds();
  et_workload *w = fe_xla_load_inputs((const char *const *) argv + 1, argc - 1, opt, rep, error);
  *seconds = wisp_wall_seconds() - t0;
  return w;
}

int wisp_xla_inspect(int argc, char **argv)
{
  fe_xla_options opt;
  char *marker = NULL;
  int status = 0;
  if (!xla_cli_options("inspect", &argc, &argv, &opt, &marker, NULL, NULL, &status)) {
    g_free(marker);
    return status;
  }
  fe_xla_report rep;
  fe_xla_report_init(&rep);
  GError *error = NULL;
  double dt = 0;
  et_workload *w = xla_cli_load(argc, argv, &opt, &rep, &dt, &error);
  if (w) /* after an error the counts are partial: the error alone is the answer */
    fe_xla_report_print(&rep, stdout);
  if (w) {
    for (int r = 0; r < w->n_ranks; r++) {
      const et_graph *g = w->ranks[r];
      char buf[32];
      sim_time_ps lag, unexplained;
      et_graph_fixed_idle(g, &lag, &unexplained);
      sim_time_ps step = w->measured_step_ps[r];
      printf("rank %d: %s: %u nodes, %u communication nodes, measured step %s ns; unexplained idle %.3f ms, "
             "%.1f %% of the step (replayed as fixed delays)\n", r, g->source ? g->source : "?", g->n_nodes,
             g->n_comms, step >= 0 ? wisp_ns_string(step, buf) : "?", (double)unexplained / 1e9,
             step > 0 ? 100.0 * (double)unexplained / (double)step : 0.0);
    }
    for (guint i = 0; i < w->groups->len; i++) {
      const et_group *grp = et_workload_group(w, i);
      printf("group %s (%s): %d rank(s)\n", grp->name, grp->desc ? grp->desc : "", grp->n_ranks);
    }
    printf("\nloaded in %.3f s (%.1f MB/s)\n", dt, dt > 0 ? (double) rep.bytes_read / dt / 1e6 : 0.0);
  }
  fe_xla_report_clear(&rep);
  g_free(marker);
  if (!w) {
    fprintf(stderr, "wisp inspect: error: %s\n", error->message);
    g_error_free(error);
    return 1;
  }
  et_workload_free(w);
  return 0;
}

int wisp_xla_convert(int argc, char **argv)
{
  fe_xla_options opt;
  char *out = NULL, *prefix = NULL, *marker = NULL;
  int status = 0;
  et_workload *w = NULL;
  if (!xla_cli_options("convert", &argc, &argv, &opt, &marker, &out, &prefix, &status))
    goto done;
  if (!out) {
    fprintf(stderr, "wisp convert: give the output directory with -o DIR\n");
    status = 2;
    goto done;
  }
  int target = wisp_convert_target();
  if (target < 0) {
    status = 2;
    goto done;
  }
  if (g_mkdir_with_parents(out, 0755) != 0) {
    fprintf(stderr, "wisp convert: error: %s: cannot create directory: %s\n", out, g_strerror(errno));
    status = 1;
    goto done;
  }
  fe_xla_report rep;
  fe_xla_report_init(&rep);
  GError *error = NULL;
  double dt = 0;
  w = xla_cli_load(argc, argv, &opt, &rep, &dt, &error);
  if (w)
    fe_xla_report_print(&rep, stderr);
  fe_xla_report_clear(&rep);
  et_astra_report arep;
  if (w && target == 1) {
    et_workload *aw = et_astra_transform(w, &arep, &error);
    et_workload_free(w);
    w = aw;
  }
  if (!w || !et_workload_write(w, out, prefix ? prefix : "trace", &error)) {
    fprintf(stderr, "wisp convert: error: %s\n", error->message);
    g_error_free(error);
    status = 1;
    goto done;
  }
  wisp_cli_print_written(w->n_ranks, w->groups->len > 0, out, prefix ? prefix : "trace");
  if (target == 1)
    et_astra_report_print(&arep, stdout);
done:
  et_workload_free(w);
  g_free(out);
  g_free(prefix);
  g_free(marker);
  g_free(wisp_convert_for);
  wisp_convert_for = NULL;
  return status;
}
