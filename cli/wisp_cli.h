/* wisp_cli.h: the `wisp` command's subcommands.  Each lives in its own
 * cli/cmd_*.c file and returns the process exit status. */
#ifndef WISP_CLI_H
#define WISP_CLI_H

#include "common/wisp_util.h"

int wisp_cmd_simulate(int argc, char **argv);
/* `wisp collbench`: nccl-tests-shaped table of simulated collectives
 * (cmd_collbench.c; declared here, not in the installed coll.h, because
 * it is not part of libwisp). */
int wisp_cmd_collbench(int argc, char **argv);

/* The other subcommands (cli/cmd_*.c); declared here, not in the
 * installed headers of the layers they drive, since libwisp does not hold
 * them. */
int wisp_cmd_inspect(int argc, char **argv);
int wisp_cmd_convert(int argc, char **argv);
int wisp_cmd_calibrate(int argc, char **argv);
int wisp_cmd_utility(int argc, char **argv);
int wisp_cmd_search(int argc, char **argv);
int wisp_cmd_sweep(int argc, char **argv);
int wisp_cmd_sweep_merge(int argc, char **argv);
int wisp_cmd_diff(int argc, char **argv);
int wisp_cmd_topo(int argc, char **argv);
int wisp_cmd_metrics(int argc, char **argv);
int wisp_cmd_report(int argc, char **argv);    /* cmd_report.c: one HTML page from wisp's JSON */   /* cmd_metrics.c: the CCL-Bench metric catalog */

/* convert's closing line: "wrote N ranks to OUT/PREFIX.<rank>.et and
 * OUT/comm_group.json", or that no comm_group.json was needed
 * (cmd_convert.c; also used by the XLA convert). */
void wisp_cli_print_written(int n_ranks, gboolean with_groups, const char *out, const char *prefix);

/* Prints "wisp: error: <message>" to stderr and returns exit status 1. */
int wisp_cli_fail(GError *error);

/* --html FILE (cmd_report.c): declares the page as an output and, without
 * --json, points *json at a temporary file (*tmp_json, removed by
 * wisp_cli_html_done); refuses --json on standard output.  Then, once the
 * command wrote its JSON, wisp_cli_write_html writes the page the way
 * `wisp report` does and prints its path (tmp_json: the temporary JSON,
 * which the page then names as not kept). */
#define WISP_CLI_HTML_ENTRY(var) \
  {"html", 0, 0, G_OPTION_ARG_FILENAME, &(var), "also write the report as one self-contained HTML page to FILE (as wisp report does)", "FILE"}
gboolean wisp_cli_html_prepare(const char *html, char **json, char **tmp_json, GError **error);
gboolean wisp_cli_write_html(const char *json, const char *tmp_json, const char *html, GError **error);
void wisp_cli_html_done(char *tmp_json);


#endif
