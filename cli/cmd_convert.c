/* cmd_convert.c: `wisp convert TRACE... -o DIR` - Kineto traces to Chakra
 * ET files DIR/<prefix>.<rank>.et plus DIR/comm_group.json, written
 * atomically through et_workload_write.
 */
#include "config.h"
#include "frontends/fe.h"
#include "chakra/et_io.h"
#include "cli/wisp_load.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>

gboolean wisp_kineto_cli_options(const char *cmd, int *argc, char ***argv, fe_kineto_options *opt, char **out_dir,
                                 char **prefix, gboolean *verbose, int *status);
void wisp_kineto_cli_options_clear(fe_kineto_options *opt);

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
  if (strcmp(in.kind, "kineto") != 0) {
    fprintf(stderr, "wisp convert: error: %s is %s input; convert reads Kineto traces and XLA profiles\n", argv[1],
            in.kind);
    wisp_inputs_clear(&in);
    status = 1;
    goto done;
  }
  et_workload *w = fe_kineto_load((const char *const *)in.files->pdata, (int)in.files->len, &opt, &rep, &error);
  wisp_inputs_clear(&in);
  /* The report is what `wisp inspect` prints; convert says only what went
   * wrong or was assumed. */
  for (guint i = 0; w && rep.warnings && i < rep.warnings->len; i++)
    fprintf(stderr, "wisp convert: warning: %s\n", (const char *)rep.warnings->pdata[i]);
  fe_kineto_report_clear(&rep);
  if (!w || !et_workload_write(w, out, prefix ? prefix : "trace", &error)) {
    fprintf(stderr, "wisp convert: error: %s\n", error->message);
    g_error_free(error);
    et_workload_free(w);
    status = 1;
    goto done;
  }
  printf("wrote %d ranks to %s/%s.<rank>.et and %s/comm_group.json\n", w->n_ranks, out, prefix ? prefix : "trace",
         out);
  if (opt.mode == FE_KINETO_KERNELS && !opt.host_launch)
    printf("note: written without the host launch model, so ASTRA-sim can read the files; `wisp simulate` on the "
           "traces themselves models the launching CPU threads (--host-launch writes them too)\n");
  et_workload_free(w);
done:
  wisp_kineto_cli_options_clear(&opt);
  g_free(out);
  g_free(prefix);
  return status;
}
