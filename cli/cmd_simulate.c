/* cmd_simulate.c: `wisp simulate` (being written). */
#include "config.h"
#include "cli/wisp_cli.h"

int wisp_cmd_simulate(int argc, char **argv)
{
  fprintf(stderr, "wisp simulate: not implemented yet\n");
  return 1;
}
