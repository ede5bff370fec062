/* cmd_topo.c: `wisp topo CONFIG [--dot FILE] [--route A:B ...]` loads a
 * topology config (wisp YAML or ASTRA-sim network.yml), prints the resolved
 * topology, optionally the routes between given ranks, and optionally
 * writes it as Graphviz (atomically). */
#include "config.h"
#include "cli/wisp_cli.h"
#include "cli/wisp_load.h"
#include "topologies/topo.h"

#include <stdlib.h>

int wisp_cmd_topo(int argc, char **argv)
{
  char *dot = NULL, *network = NULL;
  char **routes = NULL;
  GOptionEntry net_entries[WISP_CLI_NETWORK_ENTRIES];
  wisp_cli_network_entries(&network, "the network (the same as the CONFIG argument)", net_entries);
  GOptionEntry entries[] = {
    {"dot", 0, 0, G_OPTION_ARG_FILENAME, &dot, "also write the topology as Graphviz to FILE", "FILE"},
    {"route", 0, 0, G_OPTION_ARG_STRING_ARRAY, &routes, "print the route from rank A to rank B (repeatable)", "A:B"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  GOptionContext *ctx = g_option_context_new("[CONFIG] - print a resolved network topology");
  g_option_context_set_description(ctx,
                                   "CONFIG (or --network CONFIG, --cluster CONFIG) is a preset name (presets/NAME.yaml), a preset file, a wisp topology\n"
                                   "(schema_version: 1, see doc/topology.md) or an ASTRA-sim network.yml.  Prints endpoints, switches, links per tier, injection\n"
                                   "and bisection bandwidth and the route of each rank pair class.\n");
  g_option_context_add_main_entries(ctx, net_entries, NULL);
  g_option_context_add_main_entries(ctx, entries, NULL);
  GError *error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    g_option_context_free(ctx);
    fprintf(stderr, "wisp topo: %s (see `wisp topo --help`)\n", error->message);
    g_error_free(error);
    return 2;
  }
  g_option_context_free(ctx);
  /* The network is the argument or --network, never both. */
  if (argc != (network ? 1 : 2)) {
    fprintf(stderr, "wisp topo: give one network: CONFIG or " WISP_CLI_NETWORK_USAGE
            " (--cluster is the same option) (see `wisp topo --help`)\n");
    g_free(network);
    g_free(dot);
    g_strfreev(routes);
    return 2;
  }
  if (!wisp_output_declare(dot, "--dot", &error)) {
    fprintf(stderr, "wisp topo: %s\n", error->message);
    g_error_free(error);
    g_free(dot);
    g_free(network);
    g_strfreev(routes);
    return 2;
  }
  topo *t = wisp_cli_network_load(network ? network : argv[1], 0, stdout, &error);
  g_free(network);
  if (t == NULL) {
    g_free(dot);
    g_strfreev(routes);
    return wisp_cli_fail(error);
  }
  /* Route arguments are checked before anything is printed. */
  int n_routes = routes ? (int)g_strv_length(routes) : 0;
  int *pairs = g_new0(int, 2 * (gsize)n_routes + 1);
  for (int i = 0; i < n_routes; i++) {
    char *end = NULL;
    long a = strtol(routes[i], &end, 10), b = -1;
    if (end != routes[i] && *end == ':') {
      char *p = end + 1;
      b = strtol(p, &end, 10);
      if (end == p || *end != '\0')
        b = -1;
    } else {
      a = -1;
    }
    if (a < 0 || b < 0 || a >= topo_n_ranks(t) || b >= topo_n_ranks(t)) {
      fprintf(stderr, "wisp topo: --route '%s' must be A:B with ranks 0..%d\n", routes[i], topo_n_ranks(t) - 1);
      g_free(pairs);
      g_strfreev(routes);
      g_free(dot);
      topo_free(t);
      return 2;
    }
    pairs[2 * i] = (int)a;
    pairs[2 * i + 1] = (int)b;
  }
  topo_print(t, stdout);
  for (int i = 0; i < n_routes; i++)
    topo_print_route(t, pairs[2 * i], pairs[2 * i + 1], stdout);
  g_free(pairs);
  g_strfreev(routes);
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
  wisp_output_reset();
  return status;
}
