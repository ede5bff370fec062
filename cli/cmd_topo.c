/* cmd_topo.c: `wisp topo CONFIG [--dot FILE]` loads a topology config
 * (wisp YAML or ASTRA-sim network.yml), prints the resolved topology and
 * optionally writes it as Graphviz (atomically). */
#include "config.h"
#include "cli/wisp_cli.h"
#include "topologies/topo.h"

int wisp_cmd_topo(int argc, char **argv)
{
  char *dot = NULL;
  GOptionEntry entries[] = {
    {"dot", 0, 0, G_OPTION_ARG_FILENAME, &dot, "also write the topology as Graphviz to FILE", "FILE"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  GOptionContext *ctx = g_option_context_new("CONFIG - print a resolved network topology");
  g_option_context_set_description(ctx,
                                   "CONFIG is a wisp topology (schema_version: 1, see doc/topology.md) or an\n"
                                   "ASTRA-sim network.yml.  Prints endpoints, switches, links per tier, injection\n"
                                   "and bisection bandwidth and the route of each rank pair class.\n");
  g_option_context_add_main_entries(ctx, entries, NULL);
  GError *error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    g_option_context_free(ctx);
    fprintf(stderr, "wisp topo: %s (see `wisp topo --help`)\n", error->message);
    g_error_free(error);
    return 2;
  }
  g_option_context_free(ctx);
  if (argc != 2) {
    fprintf(stderr, "wisp topo: expected exactly one CONFIG file (see `wisp topo --help`)\n");
    g_free(dot);
    return 2;
  }
  topo *t = topo_load(argv[1], &error);
  if (t == NULL) {
    g_free(dot);
    return wisp_cli_fail(error);
  }
  topo_print(t, stdout);
  int status = 0;
  if (dot) {
    wisp_afile *f = wisp_afile_open(dot, &error);
    if (f == NULL) {
      status = wisp_cli_fail(error);
    } else {
      topo_print_dot(t, wisp_afile_stream(f));
      if (!wisp_afile_commit(f, &error))
        status = wisp_cli_fail(error);
    }
  }
  if (fflush(stdout) != 0 && status == 0) {
    fprintf(stderr, "wisp topo: cannot write to standard output\n");
    status = 1;
  }
  topo_free(t);
  g_free(dot);
  return status;
}
