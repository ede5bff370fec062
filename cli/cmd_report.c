/* cmd_report.c: `wisp report INPUT.json... -o report.html`: one
 * self-contained HTML page from wisp's JSON outputs (studies/study_report.c). */
#include "config.h"
#include "cli/wisp_cli.h"
#include "studies/study_report.h"

#include <glib/gstdio.h>
#include <unistd.h>

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

/* --html FILE on simulate, utility and the other commands: the page is
 * written by the same code as `wisp report JSON -o FILE` from the JSON the
 * command writes.  Without --json that JSON goes to a temporary file
 * (removed by wisp_cli_html_done); --json - (standard output) cannot be
 * read back and is refused. */
gboolean wisp_cli_html_prepare(const char *html, char **json, char **tmp_json, GError **error)
{
  *tmp_json = NULL;
  if (html == NULL)
    return TRUE;
  if (*json && wisp_output_is_stdout(*json)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "--html reads the JSON report back: give --json a file, "
                "or leave --json out");
    return FALSE;
  }
  if (!wisp_output_declare(html, "--html", error))
    return FALSE;
  if (*json == NULL) {
    *tmp_json = wisp_output_temp_new("wisp-html-XXXXXX.json", FALSE, error); /* SIGINT/SIGTERM remove it too */
    if (*tmp_json == NULL)
      return FALSE;
    *json = g_strdup(*tmp_json);
  }
  return TRUE;
}

gboolean wisp_cli_write_html(const char *json, const char *tmp_json, const char *html, GError **error)
{
  gboolean tmp = tmp_json && g_strcmp0(json, tmp_json) == 0;
  if (!study_report_html_one(json, tmp ? "this run's JSON (not kept: give --json FILE to keep it)" : NULL, html,
                             error))
    return FALSE;
  if (!wisp_output_is_stdout(html))
    printf("report: %s\n", html);
  return TRUE;
}

void wisp_cli_html_done(char *tmp_json)
{
  if (tmp_json)
    g_unlink(tmp_json);
  wisp_output_temp_forget(tmp_json); /* after: a signal in between still finds it registered */
  g_free(tmp_json);
}
