/* wisp.c: entry point of the `wisp` command; dispatches to subcommands. */
#include "config.h"
#include "cli/wisp_cli.h"
#include "common/wisp_memory.h"
#include "calib/cal.h"
#include "collectives/coll.h"
#include "frontends/fe.h"
#include "frontends/xla.h"
#include "studies/study.h"
#include "topologies/topo.h"
#include <cjson/cJSON.h>

#include <locale.h>
#include <signal.h>
#include <sys/mman.h>
#include <stdio.h>
#include <unistd.h>
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

/* GLib ends the process when an allocation fails (g_error, SIGTRAP or
 * SIGABRT).  For wisp the allocations that fail are the user-sized ones
 * (ranks, traces), so that is an answer, not a crash: this handler, for
 * GLib's fatal errors, prints what did not fit (common/wisp_memory.h),
 * removes the run's temporary output files and exits with status 1.  Any
 * other GLib error keeps GLib's default handling (an abort: a bug). */
static void on_glib_error(const char *domain, GLogLevelFlags level, const char *message, gpointer data)
{
  const char *at = message ? strstr(message, "failed to allocate ") : NULL;
  if (at == NULL) {
    g_log_default_handler(domain, level, message, data);
    return;
  }
  char text[640];
  wisp_memory_failure_message(g_ascii_strtoull(at + strlen("failed to allocate "), NULL, 10), text, sizeof text);
  wisp_output_remove_temps();
  fflush(stdout);
  /* A sweep point's worker hands the message to its sweep (an error row). */
  if (!wisp_memory_report_failure(text))
    fprintf(stderr, "wisp: error: %s\n", text);
  _exit(1);
}

/* When memory is exhausted down to the last small block, GLib's own error
 * path fails too: formatting the message allocates, fails and reports
 * that, recursively, until the stack cannot grow (SIGSEGV) and the handler
 * above never runs.  So SIGSEGV is caught on a stack of its own: when even
 * a 1 MiB mapping is refused, the address space is exhausted and this is
 * the same answer (what did not fit, temp files removed, status 1); any
 * other SIGSEGV is a bug and dies as one (default action, re-raised).
 * Uses only async-signal-safe calls (mmap, munmap, write, unlink). */
static void on_sigsegv(int sig)
{
  void *probe = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (probe != MAP_FAILED) {
    munmap(probe, 1 << 20);
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  char text[640];
  wisp_memory_failure_message(0, text, sizeof text);
  wisp_output_remove_temps();
  if (wisp_memory_report_failure(text))
    _exit(1);
  static const char head[] = "wisp: error: ";
  if (write(STDERR_FILENO, head, sizeof head - 1) < 0 || write(STDERR_FILENO, text, strlen(text)) < 0 ||
      write(STDERR_FILENO, "\n", 1) < 0)
    _exit(1);
  _exit(1);
}

static void catch_exhaustion(void)
{
#if defined(__SANITIZE_ADDRESS__)
  return; /* AddressSanitizer's own SIGSEGV report matters more in such a build */
#endif
  static char alt[1 << 16];
  stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0};
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigsegv;
  sa.sa_flags = SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  if (sigaltstack(&ss, NULL) == 0)
    sigaction(SIGSEGV, &sa, NULL);
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
  g_log_set_handler("GLib", G_LOG_LEVEL_ERROR | G_LOG_FLAG_FATAL | G_LOG_FLAG_RECURSION, on_glib_error, NULL);
  /* cJSON (execution traces, reports) allocates through GLib too, so that
   * running out of memory in it is the message above, not "not valid JSON". */
  cJSON_InitHooks(&(cJSON_Hooks){.malloc_fn = g_malloc, .free_fn = g_free});
  catch_exhaustion();
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
