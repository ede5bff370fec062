/* wisp_load.c: input detection and workload loading shared by every
 * command (see wisp_load.h); several inputs are resolved by wisp_inputs.c,
 * the shared options by wisp_options.c.
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
#include "chakra/et_view.h"
#include "frontends/fe.h"
#include "frontends/xla.h"
#include "frontends/pyt_et.h"
#include "frontends/nsys.h"
#include "common/wisp_memory.h"

#include <glib/gstdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <limits.h>
#include <math.h>
#include <string.h>

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

void wisp_nsys_options(const wisp_load_options *lo, fe_nsys_options *o)
{
  const char *phase = lo->card ? cfg_card_get(lo->card, "workload.model.phase", NULL) : NULL;
  *o = (fe_nsys_options){lo->step, lo->step_lo, lo->step_hi, lo->all_steps, lo->whole_trace,
                         phase && g_ascii_strcasecmp(phase, "inference") == 0};
}

/* Nsight Systems exports (frontends/nsys.h), of their NVTX step windows;
 * the warnings on stderr, the steps used too unless quiet. */
static et_workload *load_nsys(const wisp_inputs *in, const wisp_load_options *lo, GError **error)
{
  fe_nsys_report rep;
  fe_nsys_report_init(&rep);
  fe_nsys_options opt;
  wisp_nsys_options(lo, &opt);
  et_workload *w = fe_nsys_load_opts((const char *const *)in->files->pdata, (int)in->files->len, &opt, &rep, error);
  if (w) {
    print_warnings(rep.warnings);
    if (lo->steps_in_window)
      *lo->steps_in_window = rep.steps_in_window;
    if (lo->inference_markers)
      *lo->inference_markers = rep.inference_markers;
    for (guint i = 0; !lo->quiet && i < rep.files->len; i++) {
      const fe_nsys_file_report *f = &g_array_index(rep.files, fe_nsys_file_report, i);
      if (f->step_used_first >= 0)
        fprintf(stderr, "wisp: %s: steps #%" G_GINT64_FORMAT "..#%" G_GINT64_FORMAT " of the NVTX %s #%"
                G_GINT64_FORMAT "..#%" G_GINT64_FORMAT "\n", f->path, f->step_used_first, f->step_used_last,
                f->inference_markers ? "model executions" : "ProfilerStep ranges", f->step_first, f->step_last);
    }
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
  gboolean ok = fe_pet_link_kineto(w, (const char *const *)in->pet_files->pdata, (int)in->pet_files->len,
                                   (const char *const *)in->files->pdata, (int)in->files->len, &rep, error);
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
                      : fe_pet_link_kineto(*w, (const char *const *)files->pdata, (int)files->len,
                                           (const char *const *)in->files->pdata, (int)in->files->len, &rep, error);
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
    for (int i = 0; w && lo->inference_markers && i < rep.n_files; i++)
      *lo->inference_markers = (i ? *lo->inference_markers : FALSE) || rep.ranks[i].inference_markers;
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
  if (card.none) { /* --card without --scale, and the card gives no layout */
    g_free(card.source);
    return w;
  }
  gboolean ok = et_layout_infer(w, have_card ? &card : NULL, &l, error);
  g_free(card.source);
  if (!ok) {
    et_workload_free(w);
    return NULL;
  }
  gboolean repart = rq.tp || rq.pp || rq.mb || rq.ep || rq.cp || rq.mbs || rq.sched >= 0;
  et_workload *o = repart ? wisp_repartition(w, &l, lo->card, &rq, lo->quiet, error)
                   : rq.dp > 0 ? et_workload_scale(w, &l, &rq, error) : w;
  if (o == NULL && !repart)
    et_workload_free(w);
  else if (o == NULL || repart)
    ; /* wisp_repartition consumed w and printed its lines */
  else if (o->scale) { /* the report says it (scale_in_report), or this line does: once either way */
    if (!lo->quiet && !lo->scale_in_report)
      fprintf(stderr, "wisp: %s\n", et_scale_summary(o->scale));
  } else if (!lo->quiet) { /* --card alone: the layout it gives, checked against the trace */
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

/* Names the trace being read for the message of an allocation that fails
 * while reading it (common/wisp_memory.h): "the Kineto trace r0.json.gz
 * (4.0 MiB on disk)", or "the 8 Kineto trace files of DIR (...)". */
static void memory_context_of(const wisp_inputs *in, const char *path)
{
  uint64_t bytes = 0;
  for (guint i = 0; i < in->files->len; i++) {
    GStatBuf st;
    if (g_stat(in->files->pdata[i], &st) == 0 && S_ISREG(st.st_mode))
      bytes += (uint64_t)st.st_size;
  }
  static const char *const kinds[][2] = {{"chakra", "Chakra"}, {"kineto", "Kineto"}, {"xla", "XLA"},
                                          {"pytorch_et", "PyTorch execution"}, {"nsys", "Nsight Systems"}};
  const char *kind = in->kind;
  for (guint k = 0; k < G_N_ELEMENTS(kinds); k++)
    if (strcmp(kind, kinds[k][0]) == 0)
      kind = kinds[k][1];
  char size[32], work[192];
  wisp_memory_size_string(bytes, size);
  if (in->files->len == 1)
    g_snprintf(work, sizeof work, "the %s trace %.100s (%s on disk)", kind, path, size);
  else
    g_snprintf(work, sizeof work, "the %u %s trace files of %.100s (%s on disk)", in->files->len, kind, path, size);
  wisp_memory_set_context(work);
}

et_workload *wisp_load_workload_paths(const char *const *paths, int n, const wisp_load_options *lo, GError **error)
{
  wisp_inputs in;
  if (!wisp_inputs_resolve(paths, n, &in, error))
    return NULL;
  if (!lo->quiet)
    wisp_inputs_print_ignored(&in, stderr);
  memory_context_of(&in, paths[0]);
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
  gboolean warn = !lo->quiet && !lo->unsimulated_in_report; /* else the report says it, once */
  if (warn && u.replayed_nodes)
    fprintf(stderr, "wisp: WARNING: %" G_GUINT64_FORMAT " communication operation(s) on %d rank(s) cannot be simulated "
            "(no usable size, group members missing from the trace, or CPU-side ops) and are replayed at their "
            "measured duration: %.6f ms in all, which does not respond to the network; --strict makes this an "
            "error, --replicate-missing completes partial groups\n", u.replayed_nodes, u.replayed_ranks,
            (double)u.replayed_ps / 1e9);
  if (warn && u.zero_byte_collectives)
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
