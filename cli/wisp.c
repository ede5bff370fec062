/* wisp.c: entry point of the `wisp` command; dispatches to subcommands. */
#include "config.h"
#include "cli/wisp_cli.h"
#include "calib/cal.h"
#include "collectives/coll.h"
#include "frontends/fe.h"
#include "frontends/xla.h"
#include "studies/study.h"
#include "topologies/topo.h"

#include <locale.h>
#include <string.h>

typedef struct {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} wisp_command;

/* inspect and convert take Kineto traces or XLA profiles. */
static int cmd_inspect(int argc, char **argv)
{
  return fe_xla_wants(argc, argv) ? wisp_xla_inspect(argc, argv) : wisp_cmd_inspect(argc, argv);
}

static int cmd_convert(int argc, char **argv)
{
  return fe_xla_wants(argc, argv) ? wisp_xla_convert(argc, argv) : wisp_cmd_convert(argc, argv);
}

static const wisp_command commands[] = {
  {"inspect", cmd_inspect, "summarise profiler traces (Kineto JSON, XLA XPlane/JSON): ranks, kernels, collectives, groups"},
  {"convert", cmd_convert, "convert profiler traces to Chakra ET files (+ comm_group.json)"},
  {"simulate", wisp_cmd_simulate, "replay a workload (Chakra ET, Kineto or XLA traces) on a network"},
  {"utility", wisp_cmd_utility, "what-if: utility of doubling each network resource"},
  {"search", wisp_cmd_search, "what-if: simulate and rank the job's parallel configurations (dp, tp, pp, micro-batches)"},
  {"sweep", wisp_cmd_sweep, "what-if: sweep cluster parameters (grid or zip), CSV + JSON lines"},
  {"sweep-merge", wisp_cmd_sweep_merge, "merge the shards of a sharded sweep"},
  {"diff", wisp_cmd_diff, "per rank, group and op-type deltas between two reports"},
  {"calibrate", wisp_cmd_calibrate, "fit per-tier latency and bandwidth to a trace's measured collectives"},
  {"topo", wisp_cmd_topo, "print a resolved network topology (--dot for Graphviz)"},
  {"collbench", wisp_cmd_collbench, "nccl-tests-style table of simulated collectives"},
  {"metrics", wisp_cmd_metrics, "the CCL-Bench metric catalog of a measured run (MFU, overlap, bandwidths, ...)"},
  {"report", wisp_cmd_report, "one self-contained HTML page from simulate, utility and sweep JSON"},
  {NULL, NULL, NULL},
};

static void usage(FILE *out)
{
  fprintf(out, "usage: wisp COMMAND [OPTIONS...]\n\ncommands:\n");
  for (const wisp_command *c = commands; c->name; c++)
    fprintf(out, "  %-12s %s\n", c->name, c->summary);
  fprintf(out, "\n`wisp COMMAND --help` describes a command.  The manual pages are `man wisp` and `man wisp-COMMAND`\n"
               "once installed; in a source tree, `man -l doc/wisp.1` and `man -l doc/wisp-COMMAND.1`.\n");
}

int main(int argc, char **argv)
{
  setlocale(LC_ALL, "C");
  /* This process runs one command: no output of it may replace one of its
   * inputs (common/wisp_output.c). */
  wisp_output_guard_enable();
  /* SIGINT/SIGTERM/SIGHUP remove the temporary files of outputs being
   * written, then end the process by the same signal. */
  wisp_output_cleanup_on_signals();
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
    printf("wisp %s\n", PACKAGE_VERSION);
    return 0;
  }
  for (const wisp_command *c = commands; c->name; c++)
    if (strcmp(argv[1], c->name) == 0)
      return c->run(argc - 1, argv + 1);
  fprintf(stderr, "wisp: unknown command '%s'\n\n", argv[1]);
  usage(stderr);
  return 2;
}
