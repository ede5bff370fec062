/* wisp_fail.c: how every subcommand reports the error that ends it
 * (wisp_cli_fail, cli/wisp_cli.h).  Its own file so that the subcommands
 * do not call back into the dispatcher (cli/wisp.c), and so that the tests
 * that compile a subcommand can stub it.  O(1).
 */
#include "config.h"

#include <stdio.h>

#include "cli/wisp_cli.h"

int wisp_cli_fail(GError *error)
{
  fprintf(stderr, "wisp: error: %s\n", error ? error->message : "unknown error");
  g_clear_error(&error);
  return 1;
}
