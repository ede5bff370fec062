/* xla.c: XPlane profiles to wisp workloads (see xla.h): options, the
 * report, the inputs, and the load that drives reading (xla_read.c,
 * xla_json.c) and building (xla_build.c). */
#include "config.h"

#include "frontends/xla_internal.h"

#include <stdlib.h>
#include <string.h>

static void groups_free(gpointer p)
{
  xla_groups *g = p;
  g_ptr_array_unref(g->groups);
  g_free(g->group_of_device);
  g_free(g->wgroup);
  g_free(g->n_present);
  g_free(g);
}

void fe_xla_options_init(fe_xla_options *opt)
{
  memset(opt, 0, sizeof *opt);
  opt->step_index = -1;
}

void fe_xla_report_init(fe_xla_report *rep)
{
  memset(rep, 0, sizeof *rep);
  rep->warnings = g_ptr_array_new_with_free_func(g_free);
}

void fe_xla_report_clear(fe_xla_report *rep)
{
  if (rep->warnings)
    g_ptr_array_unref(rep->warnings);
  memset(rep, 0, sizeof *rep);
}

void fe_xla_report_print(const fe_xla_report *rep, FILE *out)
{
  fprintf(out, "xla: %d file(s), %d chip(s), %d SparseCore plane(s), %" G_GINT64_FORMAT " device id(s) named\n",
          rep->n_files, rep->n_chips, rep->n_sparsecore_planes, rep->n_devices);
  if (rep->n_gpu_planes)
    fprintf(out, "xla: %d of the chips are GPUs (/device:GPU:N planes: kernels of their Stream lines; "
            "communication kernels without HLO text are replayed at their measured duration), %d without "
            "kernels in the window (idle ranks)\n", rep->n_gpu_planes, rep->idle_gpus);
  if (rep->device_clock_ops)
    fprintf(out, "xla: %" G_GUINT64_FORMAT " op(s) timed by device_offset_ps / device_duration_ps\n",
            rep->device_clock_ops);
  if (rep->replicated_ranks)
    fprintf(out, "xla: %" G_GUINT64_FORMAT " rank(s) replayed from profiled chips (--replicate-missing)\n",
            rep->replicated_ranks);
  fprintf(out, "xla: %" G_GUINT64_FORMAT " bytes read, %" G_GUINT64_FORMAT " events, %" G_GUINT64_FORMAT
          " ops selected (%" G_GUINT64_FORMAT " compute), %" G_GUINT64_FORMAT " steps\n",
          rep->bytes_read, rep->events, rep->ops, rep->compute_ops, rep->steps);
  for (int k = FE_HLO_ALL_REDUCE; k <= FE_HLO_RECV; k++)
    if (rep->collectives[k])
      fprintf(out, "xla: %-20s %" G_GUINT64_FORMAT "\n", fe_hlo_kind_name((fe_hlo_kind) k), rep->collectives[k]);
  fprintf(out, "xla: async pairs %" G_GUINT64_FORMAT ", unmatched starts %" G_GUINT64_FORMAT
          ", unmatched dones %" G_GUINT64_FORMAT "\n", rep->async_pairs, rep->unmatched_starts, rep->unmatched_dones);
  fprintf(out, "xla: unsized collectives %" G_GUINT64_FORMAT ", partial groups %" G_GUINT64_FORMAT
          ", missing peers %" G_GUINT64_FORMAT ", aggregated events skipped %" G_GUINT64_FORMAT
          ", ops outside steps %" G_GUINT64_FORMAT "\n", rep->unsized, rep->partial_groups,
          rep->missing_peers, rep->aggregated_events, rep->outside_steps);
  if (rep->replayed_collectives)
    fprintf(out, "xla: WARNING: %" G_GUINT64_FORMAT " collective execution(s) replayed at their measured duration "
            "(no usable size, or members missing from the profile): they do not respond to the network\n",
            rep->replayed_collectives);
  fprintf(out, "xla: ops overlapping their predecessor %" G_GUINT64_FORMAT " (serialised: %" G_GINT64_FORMAT
          " ps added)\n", rep->overlapped_ops, rep->overlap_added_ps);
  fprintf(out, "xla: model_flops %" G_GUINT64_FORMAT ", communication bytes %" G_GUINT64_FORMAT "\n",
          rep->model_flops, rep->comm_bytes);
  for (guint i = 0; rep->warnings && i < rep->warnings->len; i++)
    fprintf(out, "xla: warning: %s\n", (const char *) rep->warnings->pdata[i]);
}

gboolean fe_xla_is_xplane_path(const char *path)
{
  return g_str_has_suffix(path, ".xplane.pb") || g_str_has_suffix(path, ".xplane.pb.gz");
}

static gboolean is_xla_file(const char *path)
{
  return fe_xla_is_xplane_path(path) || fe_xla_is_trace_json_path(path);
}

static int cmp_str(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *) a, *(char *const *) b);
}

GPtrArray *fe_xla_expand_inputs(const char *const *args, int n, GError **error)
{
  GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
  for (int i = 0; i < n; i++) {
    if (!g_file_test(args[i], G_FILE_TEST_IS_DIR)) {
      if (!g_file_test(args[i], G_FILE_TEST_EXISTS)) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: no such file or directory", args[i]);
        g_ptr_array_unref(out);
        return NULL;
      }
      g_ptr_array_add(out, g_strdup(args[i]));
      continue;
    }
    GDir *d = g_dir_open(args[i], 0, error);
    if (!d) {
      g_ptr_array_unref(out);
      return NULL;
    }
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    const char *e;
    while ((e = g_dir_read_name(d)))
      if (is_xla_file(e))
        g_ptr_array_add(names, g_build_filename(args[i], e, NULL));
    g_dir_close(d);
    if (names->len == 0) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_IO,
                  "%s: the directory holds no *.xplane.pb[.gz] or *.trace.json[.gz] file", args[i]);
      g_ptr_array_unref(names);
      g_ptr_array_unref(out);
      return NULL;
    }
    g_ptr_array_sort(names, cmp_str);
    for (guint k = 0; k < names->len; k++)
      g_ptr_array_add(out, g_strdup(names->pdata[k]));
    g_ptr_array_unref(names);
  }
  g_ptr_array_add(out, NULL);
  return out;
}

et_workload *fe_xla_load_inputs(const char *const *args, int n, const fe_xla_options *opt,
                                fe_xla_report *rep, GError **error)
{
  GPtrArray *paths = fe_xla_expand_inputs(args, n, error);
  if (!paths)
    return NULL;
  et_workload *w = fe_xla_load((const char *const *) paths->pdata, (int) paths->len - 1, opt, rep, error);
  g_ptr_array_unref(paths);
  return w;
}

gboolean fe_xla_wants(int argc, char **argv)
{
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] == '-')
      continue;
    if (is_xla_file(a))
      return TRUE;
    if (g_file_test(a, G_FILE_TEST_IS_DIR)) {
      GDir *d = g_dir_open(a, 0, NULL);
      const char *e;
      gboolean found = FALSE;
      while (d && !found && (e = g_dir_read_name(d)))
        found = fe_xla_is_xplane_path(e) || fe_xla_is_trace_json_path(e);
      if (d)
        g_dir_close(d);
      if (found)
        return TRUE;
    }
  }
  return FALSE;
}

gboolean fe_xla_is_trace_json_path(const char *path)
{
  /* PyTorch's profiler writes *.pt.trace.json: those are Kineto traces. */
  if (g_str_has_suffix(path, ".pt.trace.json") || g_str_has_suffix(path, ".pt.trace.json.gz"))
    return FALSE;
  return g_str_has_suffix(path, ".trace.json") || g_str_has_suffix(path, ".trace.json.gz");
}

/* Scans every input file (XPlane or trace JSON) into the context's chips
 * and ops.  O(size of the files). */
static gboolean read_inputs(xla_ctx *c, const char *const *paths, int n, GError **error)
{
  fe_xplane_visitor vis = {xla_on_plane, xla_on_line, xla_on_event, NULL};
  for (int f = 0; f < n; f++) {
    c->file = f;
    c->source = paths[f];
    if (fe_xla_is_trace_json_path(paths[f])) {
      if (!xla_json_load(c, paths[f], error))
        return FALSE;
      continue;
    }
    fe_xplane_file *xf = fe_xplane_file_open(paths[f], &c->opt->limits, error);
    if (!xf)
      return FALSE;
    c->file = f;
    c->source = paths[f];
    c->rep->bytes_read += fe_xplane_file_size(xf);
    gboolean ok = fe_xplane_scan(xf, &vis, c, NULL, error);
    fe_xplane_file_free(xf);
    if (!ok)
      return FALSE;
  }
  return TRUE;
}

/* The device id space: the chips and every id a collective names (replica
 * groups, source-target pairs), at most 2^22.  O(ids named). */
static gboolean device_space(xla_ctx *c, const char *joined, GError **error)
{
  c->n_devices = 0;
  for (guint i = 0; i < c->chips->len; i++)
    c->n_devices = MAX(c->n_devices, ((xla_chip *) c->chips->pdata[i])->global_id + 1);
  for (guint i = 0; i < c->infos->len; i++) {
    xla_info *in = c->infos->pdata[i];
    if (!in->parsed)
      continue;
    for (uint32_t k = 0; in->hlo.has_replica_groups && k < in->hlo.group_off[in->hlo.n_groups]; k++)
      c->n_devices = MAX(c->n_devices, in->hlo.group_ids[k] + 1);
    for (uint32_t k = 0; k < 2 * in->hlo.n_pairs; k++)
      c->n_devices = MAX(c->n_devices, in->hlo.pairs[k] + 1);
  }
  if (c->n_devices > (1 << 22)) { /* the most endpoints a topology holds */
    g_set_error(error, WISP_ERROR, WISP_ERROR_LIMIT, "%s: device ids up to %" G_GINT64_FORMAT
                " exceed the limit of 2^22", joined, c->n_devices);
    return FALSE;
  }
  c->rep->n_devices = c->n_devices;
  return TRUE;
}

/* Device clock (when asked), the job's time base (the first selected op
 * starts at 0), each chip's ops in (stream, time) order and its measured
 * step (the window, else first op to last).  O(ops log ops). */
static void time_base(xla_ctx *c, const sim_time_ps *window)
{
  /* device_clock: steps were selected on the event clock; from here on the
   * ops use their device times where the profile has them. */
  for (guint i = 0; c->opt->device_clock && i < c->chips->len; i++) {
    xla_chip *ch = c->chips->pdata[i];
    for (guint k = 0; k < ch->ops->len; k++) {
      xla_op *op = &g_array_index(ch->ops, xla_op, k);
      if (op->dev_start >= 0 || op->dev_dur >= 0) {
        op->start = op->dev_start;
        op->dur = op->dev_dur;
        c->rep->device_clock_ops++;
      }
    }
  }
  /* Time base: the first selected op of the job starts at 0; then each
   * chip's ops in (stream, time) order and its measured step. */
  sim_time_ps t0 = SIM_TIME_MAX;
  for (guint i = 0; i < c->chips->len; i++) {
    xla_chip *ch = c->chips->pdata[i];
    for (guint k = 0; k < ch->ops->len; k++)
      t0 = MIN(t0, g_array_index(ch->ops, xla_op, k).start);
  }
  for (guint i = 0; i < c->chips->len; i++) {
    xla_chip *ch = c->chips->pdata[i];
    sim_time_ps lo = SIM_TIME_MAX, hi = 0;
    for (guint k = 0; k < ch->ops->len; k++) {
      xla_op *op = &g_array_index(ch->ops, xla_op, k);
      op->start -= t0;
      lo = MIN(lo, op->start);
      hi = MAX(hi, op->start + op->dur);
    }
    /* Profiles are usually in time order already: sort only when needed. */
    gboolean sorted = TRUE;
    for (guint k = 1; k < ch->ops->len && sorted; k++)
      sorted = xla_cmp_op(&g_array_index(ch->ops, xla_op, k - 1), &g_array_index(ch->ops, xla_op, k)) <= 0;
    if (!sorted)
      qsort(ch->ops->data, ch->ops->len, sizeof(xla_op), xla_cmp_op);
    ch->measured = window[i] >= 0 ? window[i] : ch->ops->len ? hi - lo : -1;
  }
}

/* replicate_missing: device d without a chip replays chip (d mod #chips):
 * same ops, its own groups and peers; the op arrays are shared, not
 * copied.  O(devices). */
static void replicate_missing(xla_ctx *c)
{
  guint n_real = c->chips->len;
  gboolean *have = g_new0(gboolean, c->n_devices);
  for (guint i = 0; i < n_real; i++)
    have[((xla_chip *) c->chips->pdata[i])->global_id] = TRUE;
  for (int64_t d = 0; d < c->n_devices; d++) {
    if (have[d])
      continue;
    xla_chip *src = c->chips->pdata[d % n_real];
    xla_chip *v = g_new0(xla_chip, 1);
    *v = *src;
    v->global_id = d;
    v->replica_of = src->global_id;
    v->ops = g_array_ref(src->ops);
    v->steps = g_array_ref(src->steps);
    v->sc_ids = g_array_ref(src->sc_ids);
    g_ptr_array_add(c->chips, v);
    c->rep->replicated_ranks++;
  }
  g_free(have);
  qsort(c->chips->pdata, c->chips->len, sizeof(gpointer), xla_cmp_chip);
  xla_warn(c, g_strdup_printf("%" G_GUINT64_FORMAT " device(s) named by replica groups are not in the profile: "
                          "each replays the chip (device mod %u) of the profile (symmetry assumed)",
                          c->rep->replicated_ranks, n_real));
}

et_workload *fe_xla_load(const char *const *paths, int n, const fe_xla_options *opt_in,
                         fe_xla_report *rep_in, GError **error)
{
  fe_xla_options defopt;
  fe_xla_report local_rep;
  if (!opt_in) {
    fe_xla_options_init(&defopt);
    opt_in = &defopt;
  }
  fe_xla_report *rep = rep_in;
  if (!rep) {
    fe_xla_report_init(&local_rep);
    rep = &local_rep;
  }
  g_return_val_if_fail(n > 0, NULL);
  GString *js = g_string_new(paths[0]);
  for (int f = 1; f < n; f++)
    g_string_append_printf(js, ",%s", paths[f]);
  char *joined = g_string_free(js, FALSE);
  xla_ctx c = {
    .opt = opt_in,
    .paths = paths,
    .rep = rep,
    .infos = g_ptr_array_new_with_free_func(xla_info_free),
    .info_by_text = g_hash_table_new(g_str_hash, g_str_equal),
    .groups_by_key = g_hash_table_new_full(g_bytes_hash, g_bytes_equal, (GDestroyNotify) g_bytes_unref, groups_free),
    .chips = g_ptr_array_new_with_free_func(xla_chip_free),
    .chip_by_key = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
    .warned = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
    .meta_cache = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL),
  };
  et_workload *w = NULL;
  sim_time_ps *window = NULL;
  rep->n_files = n;
  if (!read_inputs(&c, paths, n, error))
    goto out;
  c.source = joined;
  if (c.chips->len == 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: no /device:TPU:N or /device:GPU:N plane found; is this a profile written by jax.profiler "
                "or tf.profiler?", joined);
    goto out;
  }
  rep->n_chips = (int) c.chips->len;
  xla_assign_ids(&c);
  window = g_new(sim_time_ps, c.chips->len);
  for (guint i = 0; i < c.chips->len; i++)
    window[i] = -1;
  if (!xla_select_steps(&c, window, error))
    goto out;
  if (!device_space(&c, joined, error))
    goto out;
  time_base(&c, window);
  if (opt_in->replicate_missing && c.n_devices > (int64_t) c.chips->len)
    replicate_missing(&c);
  c.dev_rank = g_new(int32_t, c.n_devices);
  for (int64_t d = 0; d < c.n_devices; d++)
    c.dev_rank[d] = -1;
  for (guint i = 0; i < c.chips->len; i++)
    c.dev_rank[((xla_chip *) c.chips->pdata[i])->global_id] = (int32_t) i;
  w = et_workload_new((int) c.chips->len, joined);
  for (guint i = 0; i < c.chips->len; i++) {
    xla_chip *ch = c.chips->pdata[i];
    w->measured_step_ps[i] = ch->measured;
    w->ranks[i] = xla_build_rank(&c, w, ch, (int) i, error);
    if (!w->ranks[i]) {
      et_workload_free(w);
      w = NULL;
      goto out;
    }
  }
  if (!et_workload_resolve_groups(w, error)) {
    et_workload_free(w);
    w = NULL;
  }
out:
  g_free(window);
  g_free(c.dev_rank);
  g_ptr_array_unref(c.infos);
  g_hash_table_unref(c.info_by_text);
  g_hash_table_unref(c.groups_by_key);
  g_ptr_array_unref(c.chips);
  g_hash_table_unref(c.chip_by_key);
  g_hash_table_unref(c.warned);
  g_hash_table_unref(c.meta_cache);
  g_free(joined);
  if (rep == &local_rep)
    fe_xla_report_clear(&local_rep);
  return w;
}
