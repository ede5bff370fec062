/* wisp_options.c: the options every workload command shares (--step,
 * --steps, --strict, --deps, --scale, the levers ...) and their range
 * checks, resolved into wisp_load_options and sim_replay_options (see
 * wisp_load.h).  Each resolver is O(length of its option's text).
 */
#include "config.h"
#include "cli/wisp_load.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

gboolean wisp_steps_parse(const char *steps, int step, wisp_load_options *lo, GError **error)
{
  lo->step = step;
  lo->step_lo = lo->step_hi = -1;
  lo->all_steps = lo->whole_trace = FALSE;
  if (step < -1) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "--step takes a step number >= 0, not %d", step);
    return FALSE;
  }
  if (steps == NULL)
    return TRUE;
  if (step >= 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "give either --step N or --steps %s, not both", steps);
    return FALSE;
  }
  if (strcmp(steps, "all") == 0) {
    lo->all_steps = TRUE;
    return TRUE;
  }
  if (strcmp(steps, "whole") == 0) {
    lo->whole_trace = TRUE;
    return TRUE;
  }
  const char *dots = strstr(steps, "..");
  char *end = NULL;
  long a = -1, b = -1;
  if (dots && dots != steps && g_ascii_isdigit(steps[0]) && g_ascii_isdigit(dots[2])) {
    a = strtol(steps, &end, 10);
    if (end != dots)
      a = -1;
    b = strtol(dots + 2, &end, 10);
    if (*end != '\0')
      b = -1;
  }
  if (a < 0 || b < a || b > G_MAXINT) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "--steps takes A..B (step numbers, A <= B, e.g. 10..12), all or whole, not '%s'", steps);
    return FALSE;
  }
  lo->step_lo = (int)a;
  lo->step_hi = (int)b;
  return TRUE;
}

gboolean wisp_cli_parse_pct(const char *option, const char *text, double *out, GError **error)
{
  *out = -1;
  if (text == NULL)
    return TRUE;
  char *end = NULL;
  double v = g_ascii_strtod(text, &end);
  if (end == text || *end != '\0' || !isfinite(v) || v < 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s %s: give a percentage of 0 or more, e.g. 10", option, text);
    return FALSE;
  }
  *out = v;
  return TRUE;
}

gboolean wisp_cli_parse_shard(const char *s, int *k, int *n)
{
  char *end;
  long a = strtol(s, &end, 10);
  if (end == s || *end != '/')
    return FALSE;
  const char *q = end + 1;
  long b = strtol(q, &end, 10);
  if (end == q || *end || b < 1 || b > 1000000 || a < 1 || a > b)
    return FALSE;
  *k = (int)a;
  *n = (int)b;
  return TRUE;
}

gboolean wisp_cli_check_int(const char *option, int value, int lo, int hi, const char *what, GError **error)
{
  if (value >= lo && value <= hi)
    return TRUE;
  g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s %d: give %s", option, value, what);
  return FALSE;
}

void wisp_cli_common_entries(wisp_cli_common *c, GOptionEntry *e)
{
  memset(c, 0, sizeof(*c));
  c->step = INT_MIN; /* not given (a given negative step is refused) */
  c->compute_slots = -1; /* not given: each rank's measured concurrency, else 1 */
  c->host_launch = TRUE;
  const GOptionEntry list[WISP_CLI_COMMON_ENTRIES - WISP_CLI_SCALE_ENTRIES] = {
    {"network-model", 0, 0, G_OPTION_ARG_STRING, &c->model, WISP_CLI_NETWORK_MODEL_HELP, "MODEL"},
    {"tier", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &c->model, "same as --network-model", "MODEL"},
    {"algo", 0, 0, G_OPTION_ARG_STRING, &c->algo, "force one collective algorithm (ring, direct, halving_doubling, ...)", "ALGO"},
    {"compute-slots", 0, 0, G_OPTION_ARG_INT, &c->compute_slots, "concurrent compute nodes per rank (default: the most the profile measured at once, else 1)", "N"},
    {"deps", 0, 0, G_OPTION_ARG_STRING, &c->deps, "Chakra edges to honour: both (default, like FeederV3) or data (V1 feeder)", "both|data"},
    {"strict", 0, 0, G_OPTION_ARG_NONE, &c->strict, "repairable input problems (dangling edges, unmatched or unsized collectives) are errors", NULL},
    {"replicate-from", 0, 0, G_OPTION_ARG_STRING, &c->replicate_from, "Kineto: synthesize absent ranks from these traced ranks (symmetric assumption; 'all': every traced rank)", "R[,R...]|all"},
    {"replicate-missing", 0, 0, G_OPTION_ARG_NONE, &c->replicate_missing, "complete partial groups: XLA chips missing from the profile replay present ones, Kineto absent ranks replicate the traced ones (--replicate-from all)", NULL},
    {"starts", 0, 0, G_OPTION_ARG_STRING, &c->starts, "together (default: every rank starts its step at 0) or measured (each rank at its measured start on the traces' common clock)", "together|measured"},
    {"step", 0, 0, G_OPTION_ARG_INT, &c->step, "profiler step to replay (Kineto ProfilerStep#N, XLA step index)", "N"},
    {"comm-group", 0, 0, G_OPTION_ARG_FILENAME, &c->comm_group, "Chakra: communicator groups from FILE instead of the comm_group.json beside the .et files", "FILE"},
    {"comm-group-configuration", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, &c->comm_group, "same as --comm-group (ASTRA-sim's name)", "FILE"},
    {"steps", 0, 0, G_OPTION_ARG_STRING, &c->steps, "steps A to B, every complete step (all), or the whole trace ignoring step markers (whole)", "A..B|all|whole"},
    {"no-host-launch", 0, G_OPTION_FLAG_REVERSE, G_OPTION_ARG_NONE, &c->host_launch,
     "Kineto: no CPU launch threads in the graph (idle before a GPU op is measured from its stream and cross-stream predecessors only)", NULL},
    {"slow-rank", 0, 0, G_OPTION_ARG_STRING_ARRAY, &c->slow_rank, WISP_CLI_SLOW_RANK_HELP, "R=F"},
    {"slow-ranks", 0, 0, G_OPTION_ARG_STRING, &c->slow_ranks, WISP_CLI_SLOW_RANKS_HELP, "DIST"},
  };
  G_STATIC_ASSERT(G_N_ELEMENTS(list) + WISP_CLI_SCALE_ENTRIES == WISP_CLI_COMMON_ENTRIES);
  memcpy(e, list, sizeof(list));
  wisp_cli_scale_entries(&c->scale, e + G_N_ELEMENTS(list)); /* its terminator ends the list */
}

void wisp_cli_scale_entries(wisp_cli_scale *s, GOptionEntry *e)
{
  memset(s, 0, sizeof(*s));
  const GOptionEntry list[WISP_CLI_SCALE_ENTRIES] = {
    {"scale", 0, 0, G_OPTION_ARG_STRING, &s->scale, "simulate the job with data-parallel degree N (a multiple of the "
     "traced one): new ranks replay their traced counterpart's graph, DP groups grow, TP/PP groups are replicated; "
     "tp=, pp=, ep=, cp= (ring attention), mb= (micro-batches), mbs=, sched=gpipe|1f1b|interleaved_1f1b, vpp= "
     "re-partition the model read from the trace and --card (doc/repartition.md)", "dp=N|tp=N,pp=N,mb=N"},
    {"placement", 0, 0, G_OPTION_ARG_STRING, &s->placement, "where --scale puts the new ranks: outer (default: "
     "replicas of the traced world side by side, the trace's TP/PP placement inside each) or inner (a rank's DP "
     "replicas on consecutive ranks)", "outer|inner"},
    {"card", 0, 0, G_OPTION_ARG_FILENAME, &s->card, "workload card (CCL-Bench YAML): the parallel layout for groups "
     "the trace does not name, sizes of communication kernels that carry none (DeepEP, custom all-reduce) and "
     "the model fields of MFU", "FILE"},
    {NULL},
  };
  memcpy(e, list, sizeof(list));
}

gboolean wisp_cli_scale_resolve(wisp_cli_scale *s, wisp_load_options *lo, GError **error)
{
  et_scale_request rq = {0};
  if (!et_scale_parse(s->scale, &rq, error) || !et_placement_parse(s->placement, &rq.placement, error))
    return FALSE;
  if ((rq.tp || rq.pp || rq.mb || rq.ep || rq.cp || rq.mbs || rq.sched >= 0) && s->card == NULL) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "--scale %s re-partitions the model, which needs a workload card (--card FILE) with num_layers, "
                "num_heads, vocab_size, hidden_size, batch_size, seq_len, micro_batches and the GPU (doc/card.md)",
                s->scale);
    return FALSE;
  }
  if (s->placement && !s->scale) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "--placement %s needs --scale dp=N", s->placement);
    return FALSE;
  }
  if (s->card && s->doc == NULL && (s->doc = cfg_card_load(s->card, error)) == NULL)
    return FALSE;
  lo->scale = s->scale;
  lo->placement = s->placement;
  lo->card = s->doc;
  return TRUE;
}

void wisp_cli_scale_clear(wisp_cli_scale *s)
{
  g_free(s->scale);
  g_free(s->placement);
  g_free(s->card);
  cfg_card_free(s->doc);
  memset(s, 0, sizeof(*s));
}

gboolean wisp_cli_common_resolve(wisp_cli_common *c, wisp_load_options *lo, sim_replay_options *ro,
                                 GError **error)
{
  wisp_load_options l = WISP_LOAD_OPTIONS_INIT;
  l.build_flags = c->strict ? ET_BUILD_STRICT : 0;
  if (c->deps && strcmp(c->deps, "data") == 0) {
    l.build_flags |= ET_BUILD_DATA_DEPS_ONLY;
  } else if (c->deps && strcmp(c->deps, "both") != 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "--deps takes 'both' or 'data', not '%s'", c->deps);
    return FALSE;
  }
  l.replicate_from = c->replicate_from;
  l.replicate_missing = c->replicate_missing;
  l.host_launch = c->host_launch;
  l.comm_group = c->comm_group;
  if (c->step != INT_MIN && c->step < 0) { /* INT_MIN: not given; a step is a ProfilerStep number or index >= 0 */
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "--step %d: give a step number of 0 or more", c->step);
    return FALSE;
  }
  if (!wisp_steps_parse(c->steps, c->step == INT_MIN ? -1 : c->step, &l, error) ||
      !wisp_cli_scale_resolve(&c->scale, &l, error))
    return FALSE;
  *lo = l;
  if (c->compute_slots != -1 && (c->compute_slots < 1 || c->compute_slots > ET_MAX_COMPUTE_SLOTS)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "--compute-slots must be an integer from 1 to %d, got %d",
                ET_MAX_COMPUTE_SLOTS, c->compute_slots);
    return FALSE;
  }
  ro->compute_slots = c->compute_slots == -1 ? 0 : (unsigned)c->compute_slots;
  if (c->starts && strcmp(c->starts, "measured") == 0) {
    ro->measured_starts = TRUE;
  } else if (c->starts && strcmp(c->starts, "together") != 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "--starts takes 'together' or 'measured', not '%s'", c->starts);
    return FALSE;
  }
  if (c->model) {
    if (!wisp_cli_network_model(c->model, &ro->tier, error))
      return FALSE;
    ro->has_tier = TRUE;
  }
  if (c->algo) {
    if (!coll_algo_from_name(c->algo, &ro->algo)) {
      GString *names = g_string_new(NULL);
      for (int a = 0; a < COLL_ALGO_COUNT; a++)
        g_string_append_printf(names, "%s%s", a ? ", " : "", coll_algo_name((coll_algo)a));
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "unknown --algo '%s' (use one of %s)", c->algo, names->str);
      g_string_free(names, TRUE);
      return FALSE;
    }
    ro->has_algo = TRUE;
  }
  return wisp_cli_levers_resolve(c->slow_rank, c->slow_ranks, &ro->levers, error);
}

gboolean wisp_cli_levers_resolve(char **slow_rank, const char *slow_ranks, sim_levers *l, GError **error)
{
  for (char **p = slow_rank; p && *p; p++)
    if (!sim_levers_add_slow_rank(l, *p, error)) {
      g_prefix_error(error, "--slow-rank: ");
      return FALSE;
    }
  if (slow_ranks && !sim_levers_set_slow_ranks(l, slow_ranks, error)) {
    g_prefix_error(error, "--slow-ranks: ");
    return FALSE;
  }
  return TRUE;
}

void wisp_cli_common_clear(wisp_cli_common *c)
{
  g_free(c->deps);
  g_free(c->replicate_from);
  g_free(c->model);
  g_free(c->algo);
  g_free(c->starts);
  g_free(c->steps);
  g_free(c->comm_group);
  g_strfreev(c->slow_rank);
  g_free(c->slow_ranks);
  wisp_cli_scale_clear(&c->scale);
  memset(c, 0, sizeof(*c));
}
