/* wisp_load.h: opens a workload from whatever the user points at: a Chakra
 * ET prefix or directory, a folder of Kineto traces, or XLA profiles, so
 * every command accepts the same inputs. */
#ifndef WISP_LOAD_H
#define WISP_LOAD_H

#include "chakra/et_graph.h"
#include "chakra/et_scale.h"
#include "config/cfg_card.h"
#include "frontends/fe.h"
#include "replay/sim_replay.h"
#include "topologies/topo_variant.h"

G_BEGIN_DECLS

typedef struct {
  unsigned build_flags;        /* ET_BUILD_* for Chakra input; ET_BUILD_STRICT also makes frontends strict,
                                  and makes communication that cannot be simulated an error */
  const char *replicate_from;  /* Kineto: synthesize absent ranks from these ranks ("0", "0,1" or "all") */
  int step;                    /* profiler step to replay, -1 = the frontend's default */
  gboolean host_launch;        /* Kineto kernels mode: model the launching CPU threads (default TRUE) */
  gboolean replicate_missing;  /* XLA: replay chips missing from the profile; Kineto: replicate_from "all" */
  gboolean quiet;              /* do not print the warning about communication replayed as measured */
  int step_lo, step_hi;        /* --steps A..B (-1 = not given) */
  gboolean all_steps;          /* --steps all: every complete step */
  gboolean whole_trace;        /* --steps whole: ignore step markers */
  char **device_name;          /* out, may be NULL: the first traced rank's device, e.g. "Tesla V100-SXM2-32GB"
                                  (g_free); NULL when the input does not name one */
  const char *comm_group;      /* --comm-group FILE: Chakra groups from FILE, not the comm_group.json beside */
  int *steps_in_window;        /* out, may be NULL: profiler steps the window spans (Kineto: rank files' most;
                                  XLA: 1 for --step N, else the markers found, at least 1); untouched for Chakra */
  gboolean *inference_markers; /* out, may be NULL: Kineto steps are vLLM / SGLang model executions (numbered
                                  0.. by start time: --step K loads execution K) */
  uint64_t *model_flops;       /* out, may be NULL: XLA model_flops summed over the window's ops (0 unknown) */
  /* Scaling by parallelism (chakra/et_scale.h): --scale dp=N, --placement
   * outer|inner.  NULL = not given.  With scale, the loaded workload is the
   * scaled job, its inferred layout and assumptions printed on stderr
   * (unless quiet) and kept in its summary (et_scale_summary). */
  const char *scale, *placement;
  const cfg_card *card;        /* --card FILE, parsed once (wisp_cli_scale_resolve): the layout for
                                  --scale; Kineto: sizes of registry kernels that carry none */
  gboolean scale_in_report;    /* the command prints the scaled job's layout in its report (simulate,
                                  utility: on stdout), so the loader does not print it on stderr too */
  gboolean unsimulated_in_report; /* the command's report warns of communication replayed as measured and
                                     of 0-byte collectives (simulate, utility), so the loader does not */
} wisp_load_options;

#define WISP_LOAD_OPTIONS_INIT {0, NULL, -1, TRUE, FALSE, FALSE, -1, -1, FALSE, FALSE, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, FALSE, FALSE}

/* The frontends' section of a parsed card (fe_card_from_doc), each of its
 * assumptions printed on stderr ("wisp: card FILE: assumption: ..."), so
 * that a size derived from it never goes unstated.  NULL (error set) on a
 * bad value. */
fe_workload_card *wisp_card_sizes(const cfg_card *card, GError **error);

/* Step selection, one spelling on every command that reads traces:
 * --step N (one profiler step), --steps A..B (steps A to B), --steps all
 * (every step; a step is dropped only when shown incomplete, and the
 * report says which and why), --steps whole (ignore step markers).
 * Parses `steps` (may be NULL) together with `step` (-1 = not given) into
 * the loader options; an error names the accepted forms. */
gboolean wisp_steps_parse(const char *steps, int step, wisp_load_options *lo, GError **error);
/* The same selection for Nsight exports' NVTX step ranges (frontends/nsys.h). */
struct fe_nsys_options;
void wisp_nsys_options(const wisp_load_options *lo, struct fe_nsys_options *o);

/* Both load a workload, then count the communication it cannot simulate
 * (et_workload_unsimulated): an error under ET_BUILD_STRICT, else one loud
 * warning on stderr (unless opt->quiet) with the count and the measured
 * time that will be replayed as it is. */
et_workload *wisp_load_workload(const char *path, unsigned build_flags, GError **error);
et_workload *wisp_load_workload_full(const char *path, const wisp_load_options *opt, GError **error);

/* Options every workload-replaying command shares (simulate, utility):
 * input  --deps both|data, --strict, --replicate-from R[,R], --replicate-missing,
 *        --step N, --steps A..B|all|whole, --no-host-launch,
 *        --comm-group FILE (alias --comm-group-configuration, ASTRA-sim's spelling),
 *        --scale dp=N, --placement outer|inner, --card FILE;
 * replay --network-model analytical|flow (alias --tier), --algo ALGO, --compute-slots N,
 *        --starts together|measured, --slow-rank R=F (repeatable), --slow-ranks DIST. */
/* The job's shape, one spelling on simulate, utility, sweep and calibrate:
 * --scale dp=N, --placement outer|inner, and --card FILE, the one workload
 * card option: a CCL-Bench card gives the parallel layout (--scale), the
 * sizes of communication kernels that carry none (frontends) and the model
 * fields of MFU (simulate's metrics). */
typedef struct {
  char *scale, *placement, *card;
  cfg_card *doc;               /* the card, parsed once by wisp_cli_scale_resolve */
} wisp_cli_scale;
#define WISP_CLI_SCALE_ENTRIES 4
/* Fills `entries` (WISP_CLI_SCALE_ENTRIES, the last the terminator). */
void wisp_cli_scale_entries(wisp_cli_scale *s, GOptionEntry *entries);
/* Checks the values (before a long load), parses the card (once: a second
 * call reuses it) and points lo at them. */
gboolean wisp_cli_scale_resolve(wisp_cli_scale *s, wisp_load_options *lo, GError **error);
void wisp_cli_scale_clear(wisp_cli_scale *s);

/* The layout section of a parsed card: Model-executor.
 * model_plan_parallelization.{dp_replicate, dp_shard, tp, pp, cp, ep}, each
 * a whole number from 1 to 2^24.  Errors name the file, line and key.  A
 * card without any is an error when `need` (--scale), else read with
 * out->none set.  out->source is g_malloc'd. */
gboolean wisp_card_layout(const cfg_card *card, gboolean need, et_card *out, GError **error);

typedef struct {
  char *deps, *replicate_from, *model, *algo, *starts, *steps, *comm_group;
  gboolean strict, host_launch, replicate_missing;
  int step, compute_slots;
  char **slow_rank, *slow_ranks;
  wisp_cli_scale scale;        /* --scale, --placement, --card */
} wisp_cli_common;

#define WISP_CLI_COMMON_ENTRIES (17 + WISP_CLI_SCALE_ENTRIES - 1)

/* Per-rank slowdowns, one spelling on simulate, utility and sweep (the
 * sweep keys slow_rank and slow_ranks take the same values):
 * --slow-rank R=F (repeatable; rank R's GPU kernels take F times as long)
 * and --slow-ranks lognormal:sigma=S[,seed=N] | uniform:max=M[,seed=N]. */
#define WISP_CLI_SLOW_RANK_HELP "rank R's GPU kernels take F times as long (a straggler; repeatable), e.g. 3=1.2"
#define WISP_CLI_SLOW_RANKS_HELP "per-rank compute factors drawn from a seeded distribution: lognormal:sigma=S[,seed=N] (exp(S z)) or uniform:max=M[,seed=N] (1 + M u)"
/* --shard K/N of sweep and search: 1 <= K <= N <= 1,000,000 into *k, *n;
 * FALSE (nothing set) otherwise.  O(length). */
gboolean wisp_cli_parse_shard(const char *s, int *k, int *n);

/* Range checks for numeric options, one place: a value outside the range
 * is a usage error (never a silent fallback to the default).
 * wisp_cli_parse_pct: `text` NULL (option not given) sets *out to -1 (the
 * gate is off); otherwise a finite percentage >= 0 ("nan", "-5" refused).
 * wisp_cli_check_int: `value` within [lo, hi], else the error names the
 * option and the range. */
gboolean wisp_cli_parse_pct(const char *option, const char *text, double *out, GError **error);
gboolean wisp_cli_check_int(const char *option, int value, int lo, int hi, const char *what, GError **error);
/* Fills l from the two options' values (either may be NULL). */
gboolean wisp_cli_levers_resolve(char **slow_rank, const char *slow_ranks, sim_levers *l, GError **error);
/* Fills `entries` (WISP_CLI_COMMON_ENTRIES, the last one the terminator)
 * for g_option_context_add_main_entries and sets the defaults in c. */
void wisp_cli_common_entries(wisp_cli_common *c, GOptionEntry *entries);
/* Checks the values; fills the loader and replay options. */
gboolean wisp_cli_common_resolve(wisp_cli_common *c, wisp_load_options *lo, sim_replay_options *ro,
                                 GError **error);
void wisp_cli_common_clear(wisp_cli_common *c);

/* The network model (fidelity tier) option, one spelling and one set of
 * values for every command that has it: --network-model analytical|flow,
 * with --tier kept as a hidden alias. */
#define WISP_CLI_NETWORK_MODEL_HELP "network model (fidelity tier): analytical or flow (default: the config's model); alias --tier"
static inline gboolean wisp_cli_network_model(const char *name, net_tier *tier, GError **error)
{
  if (net_tier_from_name(name, tier))
    return TRUE;
  g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "unknown --network-model '%s' (use analytical or flow)", name);
  return FALSE;
}

/* The network option, one spelling on every command that takes a network
 * (simulate, utility, calibrate, collbench, topo): --network (-n) with
 * --cluster (-c) as the same option, both storing into *network.  `help`
 * says what the network is for on that command.  Fills `entries`
 * (WISP_CLI_NETWORK_ENTRIES, the last the terminator). */
#define WISP_CLI_NETWORK_ENTRIES 3
#define WISP_CLI_NETWORK_USAGE "--network PRESET|CONFIG"
void wisp_cli_network_entries(char **network, const char *help, GOptionEntry *entries);

/* The one way a command opens the network an option names (--network,
 * --cluster): a preset name (presets/NAME.yaml), a preset file, a wisp YAML
 * or an ASTRA-sim network.yml (studies/study_cluster.c).  A preset is resized
 * to n_ranks when n_ranks > 0, and the resize is printed on `out` (when not
 * NULL) as "network SPEC: preset resized from A to the workload's B ranks
 * (tier 'T' X -> Y)".  *resolved (may be NULL) gets the file's path. */
topo_variant *wisp_cli_network_open(const char *spec, int n_ranks, FILE *out, char **resolved, GError **error);
/* The preset that models the machine a trace's device belongs to
 * ("NVIDIA H100 80GB HBM3" -> "dgx-h100"), or NULL when no shipped preset
 * matches (or device is NULL).  The preset must also be found on disk. */
const char *wisp_cli_preset_for_device(const char *device);
/* Whether spec names a network at all (a file or a preset), before a long
 * workload load; the error lists the presets. */
gboolean wisp_cli_network_exists(const char *spec, GError **error);
/* The same, built into a topology. */
topo *wisp_cli_network_load(const char *spec, int n_ranks, FILE *out, GError **error);

/* ASTRA-sim's system file, one spelling on simulate, utility and
 * collbench: --system FILE (alias --system-configuration, ASTRA-sim's
 * name).  Fills `entries` (WISP_CLI_SYSTEM_ENTRIES, the last the
 * terminator). */
#define WISP_CLI_SYSTEM_ENTRIES 3
void wisp_cli_system_entries(char **system, GOptionEntry *entries);
/* Both sets in one array (WISP_CLI_NETWORK_SYSTEM_ENTRIES, the last the
 * terminator): --network, --cluster, --system, --system-configuration. */
#define WISP_CLI_NETWORK_SYSTEM_ENTRIES (WISP_CLI_NETWORK_ENTRIES + WISP_CLI_SYSTEM_ENTRIES - 1)
void wisp_cli_network_system_entries(char **network, char **system, const char *help, GOptionEntry *entries);
/* Reads the system file (collectives/coll_system.h) into the network's
 * collectives settings: a per-dimension list longer than the network's
 * dimensions is an error naming the file and byte; an ASTRA-sim
 * network.yml keeps its ideal library.  Prints on out (may be NULL) what
 * was set, the ignored keys in one line and the differences of meaning. */
gboolean wisp_cli_system_apply(topo_variant *v, const char *spec, const char *system, FILE *out, GError **error);
/* wisp_cli_network_load with the system file applied (system NULL: the
 * same as wisp_cli_network_load). */
topo *wisp_cli_network_load_system(const char *spec, const char *system, int n_ranks, FILE *out,
                                   GError **error);

/* Several paths as one workload.  Each argument is a file, a directory, a
 * Chakra prefix or a glob pattern (expanded here when the shell did not).
 * Files are classified by name and, for JSON, by their first MiB (a
 * "traceEvents" key means Kineto; "nodes" a PyTorch execution trace).  A
 * directory holding .et files is a Chakra workload, one holding XPlane/XProf
 * files an XLA one, else its Kineto traces are taken with the execution
 * traces beside them (pet_files: linked with the Kineto graphs,
 * frontends/pyt_et.h); execution traces without Kineto traces are the
 * workload themselves (kind "pytorch_et"); everything else is listed in
 * `ignored` with the reason.  The inputs must
 * be of one kind; a path with nothing usable is an error naming every kind
 * tried.  O(files in the directories + 1 MiB per JSON file). */
typedef struct {
  const char *kind;            /* "chakra", "kineto", "xla", "pytorch_et" or "nsys" */
  GPtrArray *files;            /* char*: what the reader gets (Chakra: one prefix, directory or rank file) */
  GPtrArray *pet_files;        /* char*: PyTorch execution traces beside Kineto traces (kind "kineto") */
  GHashTable *ignored;         /* reason -> GPtrArray of paths */
  GPtrArray *reasons;          /* reasons in order of discovery */
} wisp_inputs;

gboolean wisp_inputs_resolve(const char *const *paths, int n, wisp_inputs *in, GError **error);
/* The PyTorch execution traces among the inputs (frontends/pyt_et.h), for
 * commands that load for themselves (inspect, convert): kind "pytorch_et"
 * loads them into *w (NULL on entry); kind "kineto" with pet_files links
 * them into the Kineto workload *w; otherwise nothing.  The report goes to
 * out (NULL: only the warnings, on stderr).  O(the traces). */
gboolean wisp_pet_inputs(const wisp_inputs *in, et_workload **w, FILE *out, GError **error);
/* "wisp: ignored N file(s): REASON: a b c ..." per reason (at most 4 names). */
void wisp_inputs_print_ignored(const wisp_inputs *in, FILE *out);
void wisp_inputs_clear(wisp_inputs *in);
/* wisp_load_workload_full over several paths (wisp_inputs_resolve), with
 * the ignored files listed on stderr unless opt->quiet. */
et_workload *wisp_load_workload_paths(const char *const *paths, int n, const wisp_load_options *opt,
                                      GError **error);

/* `wisp simulate --job [NAME=]PATH[@RANKS] ...` (cli/cmd_simulate_jobs.c):
 * several jobs on one fabric, each replayed alone and all together on
 * the network `network`; prints the shared run and the per-job table,
 * writes the shared run's report with a "jobs" array to json (may be
 * NULL).  Returns the exit status. */
int wisp_simulate_jobs(char **specs, const char *network, const wisp_load_options *lo, sim_replay_options *opt,
                       const char *json, int max_rows);

/* "chakra", "kineto" or "xla": which reader wisp_load_workload uses. */
const char *wisp_input_kind(const char *path);

G_END_DECLS
#endif
