/* cmd_convert.c: `wisp convert TRACE... -o DIR` - Kineto traces to Chakra
 * ET files DIR/<prefix>.<rank>.et plus DIR/comm_group.json, written
 * atomically through et_workload_write.
 *
 * By default the files hold the graph `wisp simulate` builds from the
 * traces (host launch model included), so simulate on the files and on the
 * traces agree.  --for astra-sim writes the graph without CPU nodes and
 * rewrites it with et_astra_transform so that ASTRA-sim's one-slot feeder
 * replays it as wisp does, and prints what ASTRA-sim cannot express.
 */
#include "config.h"
#include "cli/wisp_cli.h"
#include "frontends/fe.h"
#include "frontends/nsys.h"
#include "chakra/et_astra.h"
#include "chakra/et_io.h"
#include "cli/wisp_load.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>

gboolean wisp_kineto_cli_options(const char *cmd, int *argc, char ***argv, fe_kineto_options *opt, char **out_dir,
                                 char **prefix, gboolean *verbose, int *status);
void wisp_kineto_cli_options_clear(fe_kineto_options *opt);

/* --for TARGET, set by wisp_kineto_cli_options and cmd_xla.c's option
 * parser (NULL: wisp's own graph). */
char *wisp_convert_for = NULL;

/* Checks --for: 0 for wisp's own graph, 1 for astra-sim, -1 after printing
 * the usage error.  Shared with `wisp convert` on XLA profiles. */
int wisp_convert_target(void);
int wisp_convert_target(void)
{
  if (wisp_convert_for == NULL || !strcmp(wisp_convert_for, "wisp"))
    return 0;
  if (!strcmp(wisp_convert_for, "astra-sim"))
    return 1;
  fprintf(stderr, "wisp convert: unknown --for '%s' (use astra-sim, or leave it out for wisp's own graph)\n",
          wisp_convert_for);
  return -1;
}

void wisp_cli_print_written(int n_ranks, gboolean with_groups, const char *out, const char *prefix)
{
  if (with_groups)
    printf("wrote %d ranks to %s/%s.<rank>.et and %s/comm_group.json\n", n_ranks, out, prefix, out);
  else
    printf("wrote %d ranks to %s/%s.<rank>.et (every collective spans all ranks: no comm_group.json)\n", n_ranks, out,
           prefix);
}

int wisp_cmd_convert(int argc, char **argv)
{
  fe_kineto_options opt = {0};
  char *out = NULL, *prefix = NULL;
  int status = 0;
  if (!wisp_kineto_cli_options("convert", &argc, &argv, &opt, &out, &prefix, NULL, &status))
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
  gboolean astra = target == 1;
  if (astra)
    opt.host_launch = FALSE; /* ASTRA-sim prints no statistics for graphs with CPU nodes */
  if (g_mkdir_with_parents(out, 0755) != 0) {
    fprintf(stderr, "wisp convert: error: %s: cannot create directory: %s\n", out, g_strerror(errno));
    status = 1;
    goto done;
  }
  fe_kineto_report rep;
  GError *error = NULL;
  wisp_inputs in;
  if (!wisp_inputs_resolve((const char *const *)argv + 1, argc - 1, &in, &error)) {
    fprintf(stderr, "wisp convert: error: %s\n", error->message);
    g_error_free(error);
    status = 1;
    goto done;
  }
  wisp_inputs_print_ignored(&in, stderr);
  if (strcmp(in.kind, "kineto") != 0 && strcmp(in.kind, "pytorch_et") != 0 && strcmp(in.kind, "nsys") != 0) {
    fprintf(stderr, "wisp convert: error: %s is %s input; convert reads Kineto traces (with the PyTorch execution "
            "traces beside them), PyTorch execution traces and XLA profiles\n", argv[1], in.kind);
    wisp_inputs_clear(&in);
    status = 1;
    goto done;
  }
  memset(&rep, 0, sizeof rep);
  et_workload *w = NULL;
  if (strcmp(in.kind, "kineto") == 0)
    w = fe_kineto_load((const char *const *)in.files->pdata, (int)in.files->len, &opt, &rep, &error);
  else if (strcmp(in.kind, "nsys") == 0) {
    fe_nsys_options nopt;
    fe_nsys_options_from_kineto(&nopt, &opt);
    w = fe_nsys_load_opts((const char *const *)in.files->pdata, (int)in.files->len, &nopt, NULL, &error);
  }
  if ((w || strcmp(in.kind, "pytorch_et") == 0) && !wisp_pet_inputs(&in, &w, NULL, &error))
    g_clear_pointer(&w, et_workload_free);
  wisp_inputs_clear(&in);
  /* The report is what `wisp inspect` prints; convert says only what went
   * wrong or was assumed. */
  for (guint i = 0; w && rep.warnings && i < rep.warnings->len; i++)
    fprintf(stderr, "wisp convert: warning: %s\n", (const char *)rep.warnings->pdata[i]);
  fe_kineto_report_clear(&rep);
  et_astra_report arep;
  if (w && astra) {
    et_workload *aw = et_astra_transform(w, &arep, &error);
    et_workload_free(w);
    w = aw;
  }
  if (!w || !et_workload_write(w, out, prefix ? prefix : "trace", &error)) {
    fprintf(stderr, "wisp convert: error: %s\n", error->message);
    g_error_free(error);
    et_workload_free(w);
    status = 1;
    goto done;
  }
  wisp_cli_print_written(w->n_ranks, w->groups->len > 0, out, prefix ? prefix : "trace");
  if (astra)
    et_astra_report_print(&arep, stdout);
  else if (opt.mode == FE_KINETO_KERNELS && !opt.host_launch)
    printf("note: written without the host launch model, as the traces replay with --no-host-launch\n");
  et_workload_free(w);
done:
  wisp_kineto_cli_options_clear(&opt);
  g_free(out);
  g_free(prefix);
  g_free(wisp_convert_for);
  wisp_convert_for = NULL;
  return status;
}
