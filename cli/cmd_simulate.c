/* cmd_simulate.c: `wisp simulate WORKLOAD --network CONFIG`.
 *
 * WORKLOAD is a Chakra ET prefix (PREFIX.0.et ... PREFIX.(N-1).et) or a
 * directory holding one such set; an optional comm_group.json beside the
 * files defines communicator groups.
 */
#include "config.h"
#include "cli/wisp_cli.h"
#include "cli/wisp_load.h"
#include "simcore/sim_report.h"

#include <stdlib.h>

int wisp_cmd_simulate(int argc, char **argv)
{
  char *network = NULL, *json = NULL, *model = NULL, *algo = NULL, *deps = NULL;
  gboolean checked = FALSE, strict = FALSE;
  int compute_slots = 1, max_rows = 64;
  GOptionEntry entries[] = {
    {"network", 'n', 0, G_OPTION_ARG_FILENAME, &network, "network config (wisp YAML or ASTRA-sim network.yml)", "CONFIG"},
    {"json", 'j', 0, G_OPTION_ARG_FILENAME, &json, "write the versioned JSON report to FILE (atomically)", "FILE"},
    {"network-model", 0, 0, G_OPTION_ARG_STRING, &model, "fidelity tier: analytical or flow (default: the config's model)", "TIER"},
    {"algo", 0, 0, G_OPTION_ARG_STRING, &algo, "force one collective algorithm (ring, direct, ...)", "ALGO"},
    {"deps", 0, 0, G_OPTION_ARG_STRING, &deps, "edges to honour: both (default, like FeederV3) or data (V1 feeder)", "both|data"},
    {"compute-slots", 0, 0, G_OPTION_ARG_INT, &compute_slots, "concurrent compute nodes per rank (default 1)", "N"},
    {"strict", 0, 0, G_OPTION_ARG_NONE, &strict, "treat repairable input problems (dangling ctrl_deps) as errors", NULL},
    {"check", 0, 0, G_OPTION_ARG_NONE, &checked, "verify engine invariants on every step (slow)", NULL},
    {"max-rows", 0, 0, G_OPTION_ARG_INT, &max_rows, "ranks shown in the summary (-1: all; default 64)", "N"},
    {NULL},
  };
  GError *error = NULL;
  GOptionContext *ctx = g_option_context_new("WORKLOAD - replay a workload on a network");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(ctx,
      "WORKLOAD is a Chakra ET prefix (PREFIX.0.et ... PREFIX.N-1.et) or a directory holding one set.\n"
      "Example: wisp simulate examples/llm-16rank/llm --network examples/networks/dgx-2node.yaml --json out.json");
  int status = 0;
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    fprintf(stderr, "wisp simulate: %s\n", error->message);
    g_clear_error(&error);
    status = 2;
    goto out;
  }
  if (argc != 2 || network == NULL) {
    fprintf(stderr, "wisp simulate: give exactly one WORKLOAD and --network CONFIG (see wisp simulate --help)\n");
    status = 2;
    goto out;
  }
  sim_replay_options opt = {.compute_slots = compute_slots > 0 ? (unsigned)compute_slots : 1, .checked = checked};
  if (model) {
    if (!net_tier_from_name(model, &opt.tier)) {
      fprintf(stderr, "wisp simulate: unknown --network-model '%s' (use analytical or flow)\n", model);
      status = 2;
      goto out;
    }
    opt.has_tier = TRUE;
  }
  if (algo) {
    if (!coll_algo_from_name(algo, &opt.algo)) {
      fprintf(stderr, "wisp simulate: unknown --algo '%s'\n", algo);
      status = 2;
      goto out;
    }
    opt.has_algo = TRUE;
  }
  unsigned build_flags = strict ? ET_BUILD_STRICT : 0;
  if (deps && g_strcmp0(deps, "data") == 0)
    build_flags |= ET_BUILD_DATA_DEPS_ONLY;
  else if (deps && g_strcmp0(deps, "both") != 0) {
    fprintf(stderr, "wisp simulate: --deps takes 'both' or 'data'\n");
    status = 2;
    goto out;
  }

  topo *t = topo_load(network, &error);
  if (t == NULL) {
    status = wisp_cli_fail(error);
    goto out;
  }
  et_workload *w = wisp_load_workload(argv[1], build_flags, &error);
  if (w == NULL) {
    topo_free(t);
    status = wisp_cli_fail(error);
    goto out;
  }
  sim_result *r = sim_replay_run(w, t, &opt, &error);
  if (r == NULL) {
    status = wisp_cli_fail(error);
  } else {
    sim_report_print_summary(r, w, t, stdout, max_rows);
    if (json && !sim_report_write_json(r, w, t, json, &error))
      status = wisp_cli_fail(error);
    sim_result_free(r);
  }
  et_workload_free(w);
  topo_free(t);
out:
  g_option_context_free(ctx);
  g_free(network);
  g_free(json);
  g_free(model);
  g_free(algo);
  g_free(deps);
  return status;
}
