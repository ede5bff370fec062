/* wisp_load.c: input detection shared by every command (see wisp_load.h).
 *
 * Rules, in order:
 *  1. an XLA profile (an *.xplane.pb[.gz] or XProf *.trace.json[.gz] file,
 *     or a directory holding XPlane files) goes to the XLA frontend;
 *  2. a *.json / *.json.gz file, or a directory holding such files and no
 *     *.et files, goes to the Kineto frontend;
 *  3. anything else is a Chakra ET prefix, directory or rank file.
 * Detection only lists directory entries (O(entries), possibly twice); file
 * contents are read once, by the chosen reader.
 */
#include "config.h"
#include "cli/wisp_load.h"
#include "cli/wisp_repart.h"
#include "chakra/et_io.h"
#include "frontends/fe.h"
#include "frontends/xla.h"
#include "frontends/pyt_et.h"
#include "frontends/nsys.h"

#include <glob.h>
#include <stdlib.h>
#include <limits.h>
#include <math.h>
#include <string.h>
#include <errno.h>
#include <zlib.h>

static gboolean has_suffix(const char *s, const char *suffix)
{
  return g_str_has_suffix(s, suffix);
}

static gboolean is_kineto_name(const char *name)
{
  return has_suffix(name, ".json") || has_suffix(name, ".json.gz");
}

/* What a directory holds: counts of .et files and of JSON files. */
static void scan_dir(const char *path, int *n_et, int *n_json)
{
  *n_et = *n_json = 0;
  GDir *d = g_dir_open(path, 0, NULL);
  if (d == NULL)
    return;
  const char *name;
  while ((name = g_dir_read_name(d)) != NULL) {
    if (has_suffix(name, ".et"))
      (*n_et)++;
    else if (is_kineto_name(name) && strcmp(name, "comm_group.json") != 0 &&
             strcmp(name, "comm_group_names.json") != 0)
      (*n_json)++;
  }
  g_dir_close(d);
}

const char *wisp_input_kind(const char *path)
{
  char *argv[] = {(char *)"wisp", (char *)path, NULL};
  if (fe_xla_wants(2, argv))
    return "xla";
  if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
    int n_et, n_json;
    scan_dir(path, &n_et, &n_json);
    return n_et == 0 && n_json > 0 ? "kineto" : "chakra";
  }
  if (g_file_test(path, G_FILE_TEST_IS_REGULAR) && is_kineto_name(path))
    return "kineto";
  return "chakra";
}

et_workload *wisp_load_workload(const char *path, unsigned build_flags, GError **error)
{
  wisp_load_options opt = WISP_LOAD_OPTIONS_INIT;
  opt.build_flags = build_flags;
  return wisp_load_workload_full(path, &opt, error);
}

/* A frontend's warnings (char*), loud as promised: one stderr line each. */
static void print_warnings(const GPtrArray *warnings)
{
  for (guint k = 0; warnings && k < warnings->len; k++)
    fprintf(stderr, "wisp: warning: %s\n", (const char *)warnings->pdata[k]);
}

fe_workload_card *wisp_card_sizes(const cfg_card *card, GError **error)
{
  fe_workload_card *c = fe_card_from_doc(card, error);
  for (guint i = 0; c && i < c->assumptions->len; i++)
    fprintf(stderr, "wisp: card %s: assumption: %s\n", cfg_card_path(card), (const char *)c->assumptions->pdata[i]);
  return c;
}

/* The execution traces' report on stderr: the warnings always, the
 * summary unless quiet. */
static void print_pet(const fe_pet_report *rep, const wisp_load_options *lo)
{
  print_warnings(rep->warnings);
  if (lo->quiet)
    return;
  char *text = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&text, &len);
  fe_pet_report_print(rep, m);
  fclose(m);
  gchar **lines = g_strsplit(text, "\n", -1);
  for (int i = 0; lines[i] && lines[i][0]; i++)
    fprintf(stderr, "wisp: %s\n", lines[i]);
  g_strfreev(lines);
  free(text);
}

/* Nsight Systems exports (frontends/nsys.h); the report on stderr unless quiet. */
static et_workload *load_nsys(const wisp_inputs *in, const wisp_load_options *lo, GError **error)
{
  fe_nsys_report rep;
  fe_nsys_report_init(&rep);
  et_workload *w = fe_nsys_load((const char *const *)in->files->pdata, (int)in->files->len, &rep, error);
  if (w) {
    print_warnings(rep.warnings);
    for (guint i = 0; lo->device_name && *lo->device_name == NULL && i < rep.files->len; i++)
      if (g_array_index(rep.files, fe_nsys_file_report, i).device_name)
        *lo->device_name = g_strdup(g_array_index(rep.files, fe_nsys_file_report, i).device_name);
  }
  fe_nsys_report_clear(&rep);
  return w;
}

/* PyTorch execution traces alone (frontends/pyt_et.h): durations unknown. */
static et_workload *load_pet_alone(const wisp_inputs *in, const wisp_load_options *lo, GError **error)
{
  fe_pet_report rep;
  fe_pet_report_init(&rep);
  et_workload *w = fe_pet_load((const char *const *)in->files->pdata, (int)in->files->len, &rep, error);
  if (w)
    print_pet(&rep, lo);
  fe_pet_report_clear(&rep);
  return w;
}

/* The execution traces beside Kineto ones: linked with the Kineto graphs. */
static gboolean link_pet(et_workload *w, const wisp_inputs *in, const wisp_load_options *lo, GError **error)
{
  fe_pet_report rep;
  fe_pet_report_init(&rep);
  gboolean ok = fe_pet_link(w, (const char *const *)in->pet_files->pdata, (int)in->pet_files->len, &rep, error);
  if (ok)
    print_pet(&rep, lo);
  fe_pet_report_clear(&rep);
  return ok;
}

gboolean wisp_pet_inputs(const wisp_inputs *in, et_workload **w, FILE *out, GError **error)
{
  gboolean alone = strcmp(in->kind, "pytorch_et") == 0;
  if (!alone && (strcmp(in->kind, "kineto") != 0 || in->pet_files->len == 0))
    return TRUE;
  fe_pet_report rep;
  fe_pet_report_init(&rep);
  const GPtrArray *files = alone ? in->files : in->pet_files;
  gboolean ok = alone ? (*w = fe_pet_load((const char *const *)files->pdata, (int)files->len, &rep, error)) != NULL
                      : fe_pet_link(*w, (const char *const *)files->pdata, (int)files->len, &rep, error);
  if (ok) {
    print_warnings(rep.warnings);
    if (out)
      fe_pet_report_print(&rep, out);
  }
  fe_pet_report_clear(&rep);
  return ok;
}

static et_workload *load_any(const wisp_inputs *in, const wisp_load_options *lo, GError **error)
{
  unsigned build_flags = lo->build_flags;
  const char *kind = in->kind, *path = in->files->pdata[0];
  const char *const *paths = (const char *const *)in->files->pdata;
  int n_paths = (int)in->files->len;
  if (lo->comm_group && strcmp(kind, "chakra") != 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: --comm-group %s applies to Chakra workloads (.et files); %s input carries its own process "
                "groups", path, lo->comm_group, strcmp(kind, "xla") == 0 ? "an XLA" : "a Kineto");
    return NULL;
  }
  if (strcmp(kind, "pytorch_et") == 0)
    return load_pet_alone(in, lo, error);
  if (strcmp(kind, "nsys") == 0)
    return load_nsys(in, lo, error);
  if (strcmp(kind, "xla") == 0) {
    fe_xla_options opt;
    fe_xla_options_init(&opt);
    opt.strict = (build_flags & ET_BUILD_STRICT) != 0;
    opt.replicate_missing = lo->replicate_missing;
    if (lo->step >= 0)
      opt.step_index = lo->step;
    if (lo->step_lo >= 0 && lo->step_lo == lo->step_hi) {
      opt.step_index = lo->step_lo;
    } else if (lo->step_lo >= 0) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED,
                  "%s: --steps %d..%d: an XLA profile is replayed one step (--step N) or all of it (--steps all, the "
                  "default)", path, lo->step_lo, lo->step_hi);
      return NULL;
    }
    fe_xla_report rep;
    fe_xla_report_init(&rep);
    et_workload *w = fe_xla_load_inputs(paths, n_paths, &opt, &rep, error);
    if (w != NULL)
      print_warnings(rep.warnings);
    if (w && lo->steps_in_window)
      *lo->steps_in_window = opt.step_index >= 0 || rep.steps == 0 ? 1 : (int)rep.steps;
    if (w && lo->model_flops)
      *lo->model_flops = rep.model_flops;
    fe_xla_report_clear(&rep);
    return w;
  }
  if (strcmp(kind, "kineto") == 0) {
    fe_kineto_options opt;
    fe_kineto_options_init(&opt);
    opt.strict = (build_flags & ET_BUILD_STRICT) != 0;
    opt.replicate_from = lo->replicate_from ? lo->replicate_from : lo->replicate_missing ? "all" : NULL;
    opt.host_launch = lo->host_launch;
    if (lo->step >= 0)
      opt.step = lo->step;
    opt.step_lo = lo->step_lo;
    opt.step_hi = lo->step_hi;
    opt.all_steps = lo->all_steps;
    opt.whole_trace = lo->whole_trace;
    fe_workload_card *card = NULL;
    if (lo->card && !(card = wisp_card_sizes(lo->card, error)))
      return NULL;
    opt.card = card;
    fe_kineto_report rep = {0};
    et_workload *w = fe_kineto_load(paths, n_paths, &opt, &rep, error);
    fe_card_free(card);
    if (w && in->pet_files->len > 0 && !link_pet(w, in, lo, error)) {
      et_workload_free(w);
      w = NULL;
    }
    if (w != NULL)
      print_warnings(rep.warnings);
    for (int i = 0; w && lo->device_name && i < rep.n_files && *lo->device_name == NULL; i++)
      if (rep.ranks[i].device_name)
        *lo->device_name = g_strdup(rep.ranks[i].device_name);
    for (int i = 0; w && lo->steps_in_window && i < rep.n_files; i++)
      *lo->steps_in_window = MAX(i ? *lo->steps_in_window : 1, rep.ranks[i].n_steps_used);
    /* Which steps the window holds, whenever steps were chosen or dropped. */
    gboolean dropped = FALSE;
    for (int i = 0; w && i < rep.n_files; i++)
      dropped |= rep.ranks[i].steps_dropped != NULL;
    if (w && rep.step_note && (dropped || lo->all_steps || lo->step_lo >= 0))
      fprintf(stderr, "wisp: steps: %s\n", rep.step_note);
    fe_kineto_report_clear(&rep);
    return w;
  }
  return et_workload_load_groups(path, build_flags, lo->comm_group, error);
}

/* --scale: the layout (from the groups, or lo->card), then the scaled job;
 * --card alone: the layout only.  Frees w on failure.  The layout and
 * assumptions go to stderr unless quiet. */
static et_workload *scale_workload(et_workload *w, const wisp_load_options *lo, GError **error)
{
  et_scale_request rq = {0};
  et_card card = {0};
  et_layout l;
  gboolean have_card = lo->card != NULL;
  if (!et_scale_parse(lo->scale, &rq, error) || !et_placement_parse(lo->placement, &rq.placement, error) ||
      (have_card && !wisp_card_layout(lo->card, lo->scale != NULL, &card, error))) {
    et_workload_free(w);
    return NULL;
  }
  if (card.none) /* --card without --scale, and the card gives no layout */
    return w;
  gboolean ok = et_layout_infer(w, have_card ? &card : NULL, &l, error);
  g_free(card.source);
  if (!ok) {
    et_workload_free(w);
    return NULL;
  }
  gboolean repart = rq.tp || rq.pp || rq.mb || rq.sched >= 0;
  et_workload *o = repart ? wisp_repartition(w, &l, lo->card, &rq, lo->quiet, error)
                   : rq.dp > 0 ? et_workload_scale(w, &l, &rq, error) : w;
  if (o == NULL && !repart)
    et_workload_free(w);
  else if (o == NULL || repart)
    ; /* wisp_repartition consumed w and printed its lines */
  else if (!lo->quiet && o->scale)
    fprintf(stderr, "wisp: %s\n", et_scale_summary(o->scale));
  else if (!lo->quiet) { /* --card alone: the layout it gives, checked against the trace */
    GString *d = g_string_new(NULL);
    et_layout_describe(&l, o, d);
    fprintf(stderr, "wisp: %s", d->str);
    g_string_free(d, TRUE);
  }
  et_layout_clear(&l);
  return o;
}

gboolean wisp_card_layout(const cfg_card *card, gboolean need, et_card *out, GError **error)
{
  static const char *const keys[] = {
    "Model-executor.model_plan_parallelization.dp_replicate", "Model-executor.model_plan_parallelization.dp_shard",
    "Model-executor.model_plan_parallelization.tp", "Model-executor.model_plan_parallelization.pp",
    "Model-executor.model_plan_parallelization.cp", "Model-executor.model_plan_parallelization.ep",
  };
  memset(out, 0, sizeof *out);
  int *dst[] = {&out->dp_replicate, &out->dp_shard, &out->tp, &out->pp, &out->cp, &out->ep};
  int found = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
    int64_t x = 0;
    gboolean here = FALSE;
    if (!cfg_card_count(card, keys[i], CFG_CARD_MAX_DEGREE, &x, &here, error))
      return FALSE;
    if (here) {
      *dst[i] = (int)x;
      found++;
    }
  }
  if (found == 0 && need)
    return cfg_card_fail(card, "Model-executor.model_plan_parallelization", WISP_ERROR_INVALID, error,
                         "no parallel sizes (dp_replicate, dp_shard, tp, pp, cp, ep), which --scale needs; is it a "
                         "CCL-Bench workload card?");
  out->none = found == 0; /* a card for kernel sizes or MFU only: no layout to check */
  out->source = g_strdup(cfg_card_path(card));
  return TRUE;
}

et_workload *wisp_load_workload_full(const char *path, const wisp_load_options *lo, GError **error)
{
  return wisp_load_workload_paths(&path, 1, lo, error);
}

et_workload *wisp_load_workload_paths(const char *const *paths, int n, const wisp_load_options *lo, GError **error)
{
  wisp_inputs in;
  if (!wisp_inputs_resolve(paths, n, &in, error))
    return NULL;
  if (!lo->quiet)
    wisp_inputs_print_ignored(&in, stderr);
  et_workload *w = load_any(&in, lo, error);
  /* The frontend names a workload read from a file list generically; one
   * path given keeps its name, as when the reader got it directly. */
  if (w && n == 1 && strcmp(in.kind, "chakra") != 0 && in.files->len > 1) {
    g_free(w->source);
    w->source = g_strdup(paths[0]);
  }
  wisp_inputs_clear(&in);
  if (w == NULL)
    return NULL;
  const char *path = paths[0];
  et_unsimulated u;
  et_workload_unsimulated(w, &u);
  if (u.replayed_nodes && (lo->build_flags & ET_BUILD_STRICT)) {
    const et_graph *g = w->ranks[u.first_replayed_rank];
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: --strict: %" G_GUINT64_FORMAT " communication operation(s) cannot be simulated and would be "
                "replayed at their measured duration (first: rank %d node %" G_GUINT64_FORMAT " '%s'); drop "
                "--strict to replay them as measured", path, u.replayed_nodes, u.first_replayed_rank,
                g->nodes[u.first_replayed_node].id, et_node_name(g, u.first_replayed_node));
    et_workload_free(w);
    return NULL;
  }
  if (u.zero_byte_collectives && (lo->build_flags & ET_BUILD_STRICT)) {
    const et_graph *g = w->ranks[u.first_zero_rank];
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: --strict: %" G_GUINT64_FORMAT " collective(s) of 0 bytes would cost only latency (first: rank "
                "%d node %" G_GUINT64_FORMAT " '%s'); give their comm_size, or drop --strict", path,
                u.zero_byte_collectives, u.first_zero_rank, g->nodes[u.first_zero_node].id,
                et_node_name(g, u.first_zero_node));
    et_workload_free(w);
    return NULL;
  }
  if (!lo->quiet && u.replayed_nodes)
    fprintf(stderr, "wisp: WARNING: %" G_GUINT64_FORMAT " communication operation(s) on %d rank(s) cannot be simulated "
            "(no usable size, group members missing from the trace, or CPU-side ops) and are replayed at their "
            "measured duration: %.6f ms in all, which does not respond to the network; --strict makes this an "
            "error, --replicate-missing completes partial groups\n", u.replayed_nodes, u.replayed_ranks,
            (double)u.replayed_ps / 1e9);
  if (!lo->quiet && u.zero_byte_collectives)
    fprintf(stderr, "wisp: WARNING: %" G_GUINT64_FORMAT " collective(s) have a size of 0 bytes, so only their latency "
            "is simulated; --strict makes this an error\n", u.zero_byte_collectives);
  char *shared = lo->quiet ? NULL : et_workload_share_summary(w);
  if (shared) /* ranks equal up to a rank shift keep one graph (chakra/et_share.h) */
    fprintf(stderr, "wisp: %s\n", shared);
  g_free(shared);
  if ((lo->scale != NULL || lo->card != NULL) && (w = scale_workload(w, lo, error)) == NULL)
    return NULL;
  return w;
}

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
     "tp=, pp=, mb= (micro-batches), sched=gpipe|1f1b re-partition the model read from the trace and --card "
     "(doc/repartition.md; ep, cp are refused)", "dp=N|tp=N,pp=N,mb=N"},
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
  if ((rq.tp || rq.pp || rq.mb || rq.sched >= 0) && s->card == NULL) {
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

/* ---- several paths, globs and mixed directories (wisp_inputs_resolve) ---- */


/* What a JSON file holds, from at most its first MiB (plain or gzip):
 * "kineto" (a "traceEvents" key), "nodes" (a PyTorch execution trace or
 * Chakra JSON) or NULL.  O(1 MiB). */
static const char *sniff_json(const char *path)
{
  gzFile f = gzopen(path, "rb");
  if (f == NULL)
    return NULL;
  enum { CHUNK = 65536, LIMIT = 1 << 20 };
  char *buf = g_malloc(CHUNK + 16);
  char carry[16] = "";
  size_t total = 0;
  const char *kind = NULL;
  gboolean nodes = FALSE;
  int n = 0;
  while (kind == NULL && total < LIMIT && (n = gzread(f, buf + 15, CHUNK)) > 0) {
    /* The last 15 bytes of the previous chunk go first, so a key split
     * across chunks is still found. */
    memcpy(buf, carry, 15);
    buf[15 + n] = '\0';
    for (int k = 0; k < 15; k++)
      if (buf[k] == '\0')
        buf[k] = ' ';
    if (memmem(buf, (size_t)n + 15, "\"traceEvents\"", 13))
      kind = "kineto";
    else if (memmem(buf, (size_t)n + 15, "\"nodes\"", 7))
      nodes = TRUE;
    memcpy(carry, buf + n, 15);
    total += (size_t)n;
  }
  /* A damaged .json.gz goes to the Kineto reader, which names the damage
   * and its offset, rather than being called "not a trace". */
  if (kind == NULL && total < LIMIT && n < 0)
    kind = "kineto";
  gzclose(f);
  g_free(buf);
  return kind ? kind : nodes ? "nodes" : NULL;
}

/* Adds "reason" -> name to the ignored list (names grouped by reason). */
static void ignore(wisp_inputs *in, const char *name, const char *reason)
{
  GPtrArray *names = g_hash_table_lookup(in->ignored, reason);
  if (names == NULL) {
    names = g_ptr_array_new_with_free_func(g_free);
    g_hash_table_insert(in->ignored, g_strdup(reason), names);
    g_ptr_array_add(in->reasons, g_strdup(reason));
  }
  g_ptr_array_add(names, g_strdup(name));
}

/* Classifies one file: "chakra" (a .et rank file), "xla", "kineto", or
 * NULL with *why saying why it is not an input. */
static const char *classify_file(const char *path, const char **why)
{
  char *base = g_path_get_basename(path);
  const char *kind = NULL;
  *why = NULL;
  if (g_str_has_suffix(base, ".et"))
    kind = "chakra";
  else if (fe_nsys_is_export(path))
    kind = "nsys";
  else if (fe_xla_is_xplane_path(base) || fe_xla_is_trace_json_path(base))
    kind = "xla";
  else if (g_str_has_prefix(base, "comm_group") && g_str_has_suffix(base, ".json"))
    *why = "communicator groups (read with the Chakra .et files they describe)";
  else if (g_str_has_suffix(base, ".json") || g_str_has_suffix(base, ".json.gz")) {
    const char *s = sniff_json(path);
    if (s && strcmp(s, "kineto") == 0)
      kind = "kineto";
    else if (s)
      kind = "pytorch_et"; /* a Chakra JSON fails in the reader, naming what to give instead */
    else
      *why = "JSON without \"traceEvents\" (not a Kineto trace)";
  } else
    *why = "not a workload file (Chakra .et, Kineto *.json[.gz], XPlane *.xplane.pb, XProf *.trace.json[.gz], Nsight "
           "Systems *.sqlite)";
  g_free(base);
  return kind;
}

static int cmp_strp(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

void wisp_inputs_clear(wisp_inputs *in)
{
  if (in->files)
    g_ptr_array_free(in->files, TRUE);
  if (in->pet_files)
    g_ptr_array_free(in->pet_files, TRUE);
  if (in->ignored)
    g_hash_table_destroy(in->ignored);
  if (in->reasons)
    g_ptr_array_free(in->reasons, TRUE);
  memset(in, 0, sizeof *in);
}

/* Sets the kind, or fails when the inputs mix kinds. */
static gboolean set_kind(wisp_inputs *in, const char *kind, const char *path, GError **error)
{
  if (in->kind && strcmp(in->kind, kind) != 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s is %s input but an earlier path is %s input; give the inputs of one workload, of one kind",
                path, kind, in->kind);
    return FALSE;
  }
  in->kind = kind;
  return TRUE;
}

/* The error for a path that holds nothing usable: every kind tried. */
static void nothing_usable(const char *path, const wisp_inputs *in, GError **error)
{
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "%s: %sno workload found; tried a Chakra ET prefix or directory (%s.0.et, or DIR/PREFIX.N.et),"
                         " Kineto traces (*.json, *.json.gz with \"traceEvents\"), XPlane profiles (*.xplane.pb[.gz])"
                         " and XProf JSON (*.trace.json[.gz])", path,
                         g_file_test(path, G_FILE_TEST_EXISTS) ? "" : "no such file or directory, and ", path);
  if (in && in->reasons->len == 0)
    g_string_append(s, "; the directory holds no files");
  for (guint r = 0; in && r < in->reasons->len; r++) {
    GPtrArray *names = g_hash_table_lookup(in->ignored, in->reasons->pdata[r]);
    g_string_append_printf(s, "%s %u file(s) ignored: %s (%s%s)", r ? ";" : ";", names->len,
                           (char *)in->reasons->pdata[r], (char *)names->pdata[0], names->len > 1 ? ", ..." : "");
  }
  g_set_error_literal(error, WISP_ERROR, WISP_ERROR_IO, s->str);
  g_string_free(s, TRUE);
}

/* One directory: XLA and Chakra directories go to their readers as they are
 * (the XLA reader walks them, the Chakra reader finds the one .et set);
 * otherwise every file is classified and the Kineto traces are taken. */
static gboolean add_dir(wisp_inputs *in, const char *dir, GError **error)
{
  char *argv[] = {(char *)"wisp", (char *)dir, NULL};
  GDir *d = g_dir_open(dir, 0, error);
  if (d == NULL)
    return FALSE;
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  const char *e;
  while ((e = g_dir_read_name(d)) != NULL)
    g_ptr_array_add(names, g_strdup(e));
  g_dir_close(d);
  g_ptr_array_sort(names, cmp_strp);
  int n_et = 0;
  for (guint i = 0; i < names->len; i++)
    n_et += g_str_has_suffix(names->pdata[i], ".et");
  const char *dir_kind = n_et > 0 ? "chakra" : fe_xla_wants(2, argv) ? "xla" : NULL;
  int taken = 0;
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < names->len; i++) {
    char *p = g_build_filename(dir, (char *)names->pdata[i], NULL);
    if (g_file_test(p, G_FILE_TEST_IS_DIR)) {
      if (dir_kind == NULL || strcmp(dir_kind, "xla") != 0)
        ignore(in, p, "a subdirectory (directories are not searched recursively)");
      g_free(p);
      continue;
    }
    const char *why = NULL, *kind = classify_file(p, &why);
    if (dir_kind && strcmp(dir_kind, "chakra") == 0) {
      if (kind && strcmp(kind, "chakra") != 0)
        ignore(in, p, "a trace beside a Chakra .et set (the .et files are the workload)");
      else if (kind == NULL && !g_str_has_prefix((char *)names->pdata[i], "comm_group"))
        ignore(in, p, why);
    } else if (dir_kind) {
      if (kind == NULL || strcmp(kind, "xla") != 0)
        ignore(in, p, kind ? "a trace beside XLA profiles (the profiles are the workload)" : why);
    } else if (kind && strcmp(kind, "kineto") == 0) {
      ok = set_kind(in, "kineto", dir, error);
      g_ptr_array_add(in->files, g_strdup(p));
      taken++;
    } else if (kind && strcmp(kind, "pytorch_et") == 0) {
      g_ptr_array_add(in->pet_files, g_strdup(p));
      taken++;
    } else if (kind && strcmp(kind, "nsys") == 0) {
      ok = set_kind(in, "nsys", dir, error);
      g_ptr_array_add(in->files, g_strdup(p));
      taken++;
    } else {
      ignore(in, p, why ? why : "unexpected input kind in a Kineto directory");
    }
    g_free(p);
  }
  g_ptr_array_free(names, TRUE);
  if (!ok)
    return FALSE;
  if (dir_kind) {
    if (!set_kind(in, dir_kind, dir, error))
      return FALSE;
    g_ptr_array_add(in->files, g_strdup(dir));
    return TRUE;
  }
  if (taken == 0) {
    nothing_usable(dir, in, error);
    return FALSE;
  }
  return TRUE;
}

static gboolean add_path(wisp_inputs *in, const char *path, GError **error)
{
  if (g_file_test(path, G_FILE_TEST_IS_DIR))
    return add_dir(in, path, error);
  if (g_file_test(path, G_FILE_TEST_EXISTS)) {
    const char *why = NULL, *kind = classify_file(path, &why);
    if (kind == NULL) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s: %s; tried a Chakra ET rank file (*.N.et), a Kineto trace (*.json, *.json.gz with "
                  "\"traceEvents\"), an XPlane profile (*.xplane.pb[.gz]) and XProf JSON (*.trace.json[.gz])", path,
                  why);
      return FALSE;
    }
    if (strcmp(kind, "pytorch_et") == 0) { /* the workload itself, or beside Kineto traces */
      g_ptr_array_add(in->pet_files, g_strdup(path));
      return TRUE;
    }
    if (!set_kind(in, kind, path, error))
      return FALSE;
    g_ptr_array_add(in->files, g_strdup(path));
    return TRUE;
  }
  /* A Chakra prefix: PREFIX.0.et exists. */
  char *first = g_strdup_printf("%s.0.et", path);
  gboolean prefix = g_file_test(first, G_FILE_TEST_IS_REGULAR);
  g_free(first);
  if (prefix) {
    if (!set_kind(in, "chakra", path, error))
      return FALSE;
    g_ptr_array_add(in->files, g_strdup(path));
    return TRUE;
  }
  /* A glob pattern the shell did not expand (quoted, or no shell). */
  if (strpbrk(path, "*?[") != NULL) {
    glob_t g;
    int rc = glob(path, 0, NULL, &g);
    if (rc == GLOB_NOMATCH) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: the pattern matches no file", path);
      return FALSE;
    }
    gboolean ok = rc == 0;
    if (!ok)
      g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot expand the pattern", path);
    for (size_t i = 0; ok && i < g.gl_pathc; i++)
      ok = add_path(in, g.gl_pathv[i], error);
    globfree(&g);
    return ok;
  }
  nothing_usable(path, NULL, error);
  return FALSE;
}

gboolean wisp_inputs_resolve(const char *const *paths, int n, wisp_inputs *in, GError **error)
{
  memset(in, 0, sizeof *in);
  in->files = g_ptr_array_new_with_free_func(g_free);
  in->pet_files = g_ptr_array_new_with_free_func(g_free);
  in->ignored = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_ptr_array_unref);
  in->reasons = g_ptr_array_new_with_free_func(g_free);
  if (n < 1) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "no workload given");
    return FALSE;
  }
  for (int i = 0; i < n; i++)
    if (!add_path(in, paths[i], error)) {
      wisp_inputs_clear(in);
      return FALSE;
    }
  /* PyTorch execution traces: beside Kineto traces they are linked with
   * them; alone they are the workload; beside anything else, an error. */
  if (in->pet_files->len > 0 && in->kind == NULL) {
    in->kind = "pytorch_et";
    GPtrArray *t = in->files;
    in->files = in->pet_files;
    in->pet_files = t;
  } else if (in->pet_files->len > 0 && strcmp(in->kind, "kineto") != 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s is a PyTorch execution trace but the workload is %s input; execution traces go alone or beside "
                "the ranks' Kineto traces", (char *)in->pet_files->pdata[0], in->kind);
    wisp_inputs_clear(in);
    return FALSE;
  }
  /* Chakra: one set of rank files, named by one prefix, directory or file. */
  if (strcmp(in->kind, "chakra") == 0 && in->files->len > 1) {
    wisp_inputs_clear(in);
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "several Chakra inputs given; a Chakra workload is one set of rank files: pass its prefix "
                "(PREFIX for PREFIX.0.et ...) or its directory once");
    return FALSE;
  }
  return TRUE;
}

void wisp_inputs_print_ignored(const wisp_inputs *in, FILE *out)
{
  for (guint r = 0; r < in->reasons->len; r++) {
    GPtrArray *names = g_hash_table_lookup(in->ignored, in->reasons->pdata[r]);
    fprintf(out, "wisp: ignored %u file(s): %s:", names->len, (char *)in->reasons->pdata[r]);
    for (guint k = 0; k < names->len && k < 4; k++)
      fprintf(out, " %s", (char *)names->pdata[k]);
    if (names->len > 4)
      fprintf(out, " ... (%u more)", names->len - 4);
    fputc('\n', out);
  }
}
