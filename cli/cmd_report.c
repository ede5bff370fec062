/* cmd_report.c: `wisp report INPUT.json... -o report.html`: one
 * self-contained HTML page from wisp's JSON outputs (studies/study_report.c). */
#include "config.h"
#include "cli/wisp_cli.h"
#include "studies/study_report.h"

int wisp_cmd_report(int argc, char **argv)
{
  char *out = NULL;
  GOptionEntry entries[] = {
    {"output", 'o', 0, G_OPTION_ARG_FILENAME, &out, "write the HTML page to FILE (atomically; required)", "FILE"},
    {NULL},
  };
  GError *error = NULL;
  GOptionContext *ctx = g_option_context_new("INPUT.json... - one HTML page from wisp simulate --json, "
                                             "utility --json and sweep JSON lines");
  g_option_context_add_main_entries(ctx, entries, NULL);
  int status = 0;
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    fprintf(stderr, "wisp report: %s\n", error->message);
    g_clear_error(&error);
    status = 2;
  } else if (argc < 2 || out == NULL) {
    fprintf(stderr, "wisp report: give one or more JSON inputs and -o FILE.html (see wisp report --help)\n");
    status = 2;
  } else if (!wisp_output_declare(out, "--output", &error)) {
    fprintf(stderr, "wisp report: %s\n", error->message);
    g_clear_error(&error);
    status = 2;
  } else if (!study_report_html(argv + 1, argc - 1, out, &error)) {
    status = wisp_cli_fail(error);
  } else if (!wisp_output_is_stdout(out)) {
    printf("wrote %s\n", out);
  }
  g_option_context_free(ctx);
  g_free(out);
  wisp_output_reset();
  return status;
}
