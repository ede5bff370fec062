/* cmd_diff.c: `wisp diff A.json B.json`: per rank, per group and per
 * collective type deltas between two simulate reports (studies/study_diff.c). */
#include "config.h"
#include "cli/wisp_cli.h"
#include "studies/study.h"

int wisp_cmd_diff(int argc, char **argv)
{
  char *json = NULL;
  int max_rows = 16;
  GOptionEntry entries[] = {
    {"json", 'j', 0, G_OPTION_ARG_FILENAME, &json, "write the deltas as JSON to FILE (atomically)", "FILE"},
    {"max-rows", 0, 0, G_OPTION_ARG_INT, &max_rows, "ranks shown (-1: all; default 16)", "N"},
    {NULL},
  };
  GError *error = NULL;
  GOptionContext *ctx = g_option_context_new("A.json B.json - compare two wisp simulate --json reports (B - A)");
  g_option_context_add_main_entries(ctx, entries, NULL);
  int status = 0;
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    fprintf(stderr, "wisp diff: %s\n", error->message);
    g_clear_error(&error);
    status = 2;
  } else if (max_rows < -1) {
    fprintf(stderr, "wisp diff: --max-rows %d: give -1 (all) or a row count of 0 or more\n", max_rows);
    status = 2;
  } else if (argc != 3) {
    fprintf(stderr, "wisp diff: give two reports, A.json and B.json (see wisp diff --help)\n");
    status = 2;
  } else if (!wisp_output_declare(json, "--json", &error)) {
    fprintf(stderr, "wisp diff: %s\n", error->message);
    g_clear_error(&error);
    status = 2;
  } else if (!study_diff_reports(argv[1], argv[2], stdout, max_rows, json, &error)) {
    status = wisp_cli_fail(error);
  }
  g_option_context_free(ctx);
  g_free(json);
  wisp_output_reset();
  return status;
}
