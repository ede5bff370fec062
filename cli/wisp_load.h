/* wisp_load.h: opens a workload from whatever the user points at: a Chakra
 * ET prefix or directory, a folder of Kineto traces, or XLA profiles, so
 * every command accepts the same inputs. */
#ifndef WISP_LOAD_H
#define WISP_LOAD_H

#include "chakra/et_graph.h"
#include "simcore/sim_replay.h"

G_BEGIN_DECLS

typedef struct {
  unsigned build_flags;        /* ET_BUILD_* for Chakra input; ET_BUILD_STRICT also makes frontends strict,
                                  and makes communication that cannot be simulated an error */
  const char *replicate_from;  /* Kineto: synthesize absent ranks from these ranks ("0", "0,1" or "all") */
  int step;                    /* profiler step to replay, -1 = the frontend's default */
  gboolean host_launch;        /* Kineto kernels mode: model the launching CPU threads (default TRUE) */
  gboolean replicate_missing;  /* XLA: replay chips missing from the profile; Kineto: replicate_from "all" */
  gboolean quiet;              /* do not print the warning about communication replayed as measured */
} wisp_load_options;

#define WISP_LOAD_OPTIONS_INIT {0, NULL, -1, TRUE, FALSE, FALSE}

/* Both load a workload, then count the communication it cannot simulate
 * (et_workload_unsimulated): an error under ET_BUILD_STRICT, else one loud
 * warning on stderr (unless opt->quiet) with the count and the measured
 * time that will be replayed as it is. */
et_workload *wisp_load_workload(const char *path, unsigned build_flags, GError **error);
et_workload *wisp_load_workload_full(const char *path, const wisp_load_options *opt, GError **error);

/* Options every workload-replaying command shares (simulate, utility):
 * input  --deps both|data, --strict, --replicate-from R[,R], --replicate-missing,
 *        --step N, --no-host-launch;
 * replay --network-model analytical|flow (alias --tier), --algo ALGO, --compute-slots N,
 *        --starts together|measured. */
typedef struct {
  char *deps, *replicate_from, *model, *algo, *starts;
  gboolean strict, host_launch, replicate_missing;
  int step, compute_slots;
} wisp_cli_common;

#define WISP_CLI_COMMON_ENTRIES 12
/* Fills `entries` (WISP_CLI_COMMON_ENTRIES, the last one the terminator)
 * for g_option_context_add_main_entries and sets the defaults in c. */
void wisp_cli_common_entries(wisp_cli_common *c, GOptionEntry *entries);
/* Checks the values; fills the loader and replay options. */
gboolean wisp_cli_common_resolve(const wisp_cli_common *c, wisp_load_options *lo, sim_replay_options *ro,
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

/* "chakra", "kineto" or "xla": which reader wisp_load_workload uses. */
const char *wisp_input_kind(const char *path);

G_END_DECLS
#endif
