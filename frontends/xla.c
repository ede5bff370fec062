/* xla.c: XPlane profiles to wisp workloads (see xla.h). */
#include "config.h"

#include "frontends/xla.h"
#include "frontends/fe_json.h"
#include "frontends/kineto_commreg.h"
#include "frontends/kineto_rank.h"

#include <stdlib.h>
#include <string.h>

/* One distinct op (HLO instruction text) of the job, shared by all chips. */
typedef struct {
  char *text;
  char *short_name;
  uint32_t index;
  fe_hlo_instr hlo;          /* valid when parsed */
  gboolean parsed;
  fe_hlo_kind kind;
  fe_hlo_phase phase;
  gboolean sized;
  char *unsized_reason;
  /* Global groups, shared with every collective of the same pattern
   * (xla_groups, owned by xla_ctx.groups_by_key); NULL until needed. */
  struct xla_groups *groups;
  gboolean warned_partial;
} xla_info;

/* The global groups of one replica-group pattern (group mode, channel id
 * presence and the listed ids): the groups as GArrays of int64 device ids
 * and, per device, its group.  Real programs use a handful of patterns
 * (data-, tensor-, pipeline-parallel, ...) over thousands of collectives,
 * so sharing them keeps memory at O(patterns x devices) instead of
 * O(collectives x devices): 40 all-device collectives over 2^22 device ids
 * took 2 GB before. */
typedef struct xla_groups {
  GPtrArray *groups;
  int32_t *group_of_device;  /* n_devices entries, -1 when in no group */
  uint32_t *wgroup;          /* workload group index per group, ET_NONE until added */
  int32_t *n_present;        /* members with a rank in the profile, per group (set with wgroup) */
} xla_groups;

static void groups_free(gpointer p)
{
  xla_groups *g = p;
  g_ptr_array_unref(g->groups);
  g_free(g->group_of_device);
  g_free(g->wgroup);
  g_free(g->n_present);
  g_free(g);
}

typedef struct {
  sim_time_ps start, dur;
  sim_time_ps dev_start, dev_dur;  /* device_clock: the device_*_ps stats, -1 when absent */
  uint32_t info;
  uint32_t seq;
  uint16_t stream;
} xla_op;

typedef struct {
  int file;
  int64_t local_id;
  int64_t global_id;
  GArray *ops;      /* xla_op */
  GArray *steps;    /* sim_time_ps pairs (start, end) */
  GArray *sc_ids;   /* int64 SparseCore index M (TPU) or CUDA stream id (GPU) per stream 1.. */
  gboolean gpu;     /* a /device:GPU:N plane: ops are the kernels of its "Stream #K" lines */
  int64_t replica_of;   /* replicate_missing: device whose ops this chip replays, else -1 */
  sim_time_ps measured; /* measured step (window or first op -> last op), -1 unknown */
} xla_chip;

typedef struct {
  const fe_xla_options *opt;
  fe_xla_report *rep;
  GPtrArray *infos;
  GHashTable *info_by_text;
  GHashTable *groups_by_key; /* groups_key() -> xla_groups* */
  GPtrArray *chips;
  GHashTable *chip_by_key;  /* "file:N" -> xla_chip* */
  int file;
  const char *source;
  const char *const *paths;
  xla_chip *chip;           /* current plane's chip, NULL when skipped */
  gboolean gpu_plane;       /* the current plane is /device:GPU:N */
  uint16_t stream;
  int line_kind;            /* 0 skip, 1 ops, 2 steps */
  GHashTable *meta_cache;   /* current plane: metadata id -> xla_info* */
  gboolean have_flops_id;
  int64_t flops_id;         /* current plane's stat id of model_flops */
  gboolean have_dev_ids;
  int64_t dev_off_id, dev_dur_id; /* current plane's device_offset_ps / device_duration_ps ids */
  gboolean have_base;
  int64_t base_ns;
  uint32_t seq;
  GHashTable *warned;
  int64_t n_devices;
  int32_t *dev_rank;
} xla_ctx;

enum { LINE_SKIP = 0, LINE_OPS = 1, LINE_STEPS = 2 };

/* Bounds on async matching work: starts kept open per chain, and ops a
 * done looks back for its sync-named start (trace JSON form). */
#define XLA_MAX_OPEN 1024u
#define XLA_MAX_LOOKBACK 4096u

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

static void warn(xla_ctx *c, char *msg)
{
  if (g_hash_table_contains(c->warned, msg)) {
    g_free(msg);
    return;
  }
  g_hash_table_add(c->warned, msg);
  if (c->rep->warnings)
    g_ptr_array_add(c->rep->warnings, g_strdup(msg));
}

static void info_free(gpointer p)
{
  xla_info *in = p;
  g_free(in->text);
  g_free(in->short_name);
  if (in->parsed)
    fe_hlo_instr_clear(&in->hlo);
  g_free(in->unsized_reason);
  g_free(in);
}

static void chip_free(gpointer p)
{
  xla_chip *ch = p;
  g_array_unref(ch->ops);
  g_array_unref(ch->steps);
  g_array_unref(ch->sc_ids);
  g_free(ch);
}

/* Parses "/device:TPU:N" (sc = -1), "/device:TPU:N SparseCore M" or
 * "/device:GPU:N" (*gpu TRUE, sc = -1). */
static gboolean parse_plane_name(const char *name, int64_t *chip, int64_t *sc, gboolean *gpu)
{
  static const char pre[] = "/device:TPU:", gpre[] = "/device:GPU:";
  *gpu = g_str_has_prefix(name, gpre);
  if (!*gpu && !g_str_has_prefix(name, pre))
    return FALSE;
  const char *p = name + strlen(pre); /* both prefixes have the same length */
  char *end;
  if (!g_ascii_isdigit(*p))
    return FALSE;
  gint64 n = g_ascii_strtoll(p, &end, 10);
  if (n < 0 || n > INT32_MAX)
    return FALSE;
  *chip = n;
  *sc = -1;
  if (*end == '\0')
    return TRUE;
  if (*gpu)
    return FALSE;
  if (g_str_has_prefix(end, " SparseCore ") && g_ascii_isdigit(end[12])) {
    char *e2;
    gint64 m = g_ascii_strtoll(end + 12, &e2, 10);
    if (*e2 == '\0' && m >= 0 && m < 65535) {
      *sc = m;
      return TRUE;
    }
  }
  return FALSE;
}

/* The chip record of chip n in the current file and the stream of
 * SparseCore sc (-1: the TensorCore stream 0). */
static xla_chip *chip_for(xla_ctx *c, int64_t n, int64_t sc, uint16_t *stream)
{
  char *key = g_strdup_printf("%d:%" G_GINT64_FORMAT, c->file, n);
  xla_chip *ch = g_hash_table_lookup(c->chip_by_key, key);
  if (!ch) {
    ch = g_new0(xla_chip, 1);
    ch->file = c->file;
    ch->local_id = n;
    ch->replica_of = -1;
    ch->ops = g_array_new(FALSE, FALSE, sizeof(xla_op));
    ch->steps = g_array_new(FALSE, FALSE, sizeof(sim_time_ps));
    ch->sc_ids = g_array_new(FALSE, FALSE, sizeof(int64_t));
    g_hash_table_insert(c->chip_by_key, key, ch);
    g_ptr_array_add(c->chips, ch);
  } else {
    g_free(key);
  }
  *stream = 0;
  if (sc >= 0) {
    guint i;
    for (i = 0; i < ch->sc_ids->len; i++)
      if (g_array_index(ch->sc_ids, int64_t, i) == sc)
        break;
    if (i == ch->sc_ids->len)
      g_array_append_val(ch->sc_ids, sc);
    *stream = (uint16_t) (i + 1);
  }
  return ch;
}

/* The stream index of CUDA stream id on a GPU chip (1.., in first-seen
 * order), like SparseCore streams on a TPU chip. */
static uint16_t gpu_stream(xla_chip *ch, int64_t id)
{
  guint i;
  for (i = 0; i < ch->sc_ids->len; i++)
    if (g_array_index(ch->sc_ids, int64_t, i) == id)
      break;
  if (i == ch->sc_ids->len)
    g_array_append_val(ch->sc_ids, id);
  return (uint16_t) (i + 1);
}

static gboolean on_plane(void *user, const fe_xplane_plane *p)
{
  xla_ctx *c = user;
  int64_t n, sc;
  c->chip = NULL;
  if (!parse_plane_name(fe_xplane_plane_name(p), &n, &sc, &c->gpu_plane))
    return FALSE;
  c->chip = chip_for(c, n, sc, &c->stream);
  c->chip->gpu = c->gpu_plane;
  if (c->gpu_plane)
    c->rep->n_gpu_planes++;
  if (sc >= 0)
    c->rep->n_sparsecore_planes++;
  g_hash_table_remove_all(c->meta_cache);
  c->have_flops_id = fe_xplane_stat_id(p, "model_flops", &c->flops_id);
  c->have_dev_ids = c->opt->device_clock && fe_xplane_stat_id(p, "device_offset_ps", &c->dev_off_id) &&
                    fe_xplane_stat_id(p, "device_duration_ps", &c->dev_dur_id);
  return TRUE;
}

/* GPU planes: the kernels, copies and sets of every "Stream #K(...)" line
 * are the ops (one stream each; "TensorFlow Ops", "XLA Ops" and name-scope
 * lines repeat them at a coarser level and are skipped), "Steps" the
 * steps.  O(streams of the chip). */
static gboolean on_gpu_line(xla_ctx *c, const char *name)
{
  if (g_str_has_prefix(name, "Stream #") && g_ascii_isdigit(name[8])) {
    c->stream = gpu_stream(c->chip, g_ascii_strtoll(name + 8, NULL, 10));
    c->line_kind = LINE_OPS;
  } else if (strcmp(name, "Steps") == 0 || (c->opt->step_marker && strcmp(name, "XLA Modules") == 0)) {
    c->stream = 0;
    c->line_kind = LINE_STEPS;
  }
  return c->line_kind != LINE_SKIP;
}

static gboolean on_line(void *user, const fe_xplane_plane *p, const char *name, int64_t id)
{
  xla_ctx *c = user;
  c->line_kind = LINE_SKIP;
  if (c->gpu_plane)
    return on_gpu_line(c, name);
  if (strcmp(name, "XLA Ops") == 0)
    c->line_kind = LINE_OPS;
  else if (c->stream == 0 && !c->opt->step_marker && strcmp(name, "Steps") == 0)
    c->line_kind = LINE_STEPS;
  else if (c->stream == 0 && c->opt->step_marker && (strcmp(name, "XLA Modules") == 0 || strcmp(name, "Steps") == 0))
    c->line_kind = LINE_STEPS;
  return c->line_kind != LINE_SKIP;
}

/* Absolute event start relative to the job's base timestamp, exact. */
static gboolean event_start(xla_ctx *c, const fe_xevent_view *v, sim_time_ps *out, GError **error)
{
  if (!c->have_base) {
    c->have_base = TRUE;
    c->base_ns = v->line_timestamp_ns;
  }
  __int128 t = ((__int128) v->line_timestamp_ns - c->base_ns) * 1000 + v->offset_ps;
  if (t > INT64_MAX / 4 || t < -(INT64_MAX / 4) || v->duration_ps < 0 || v->duration_ps > INT64_MAX / 4) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: byte %zu: event time (line timestamp %" G_GINT64_FORMAT " ns, offset %" G_GINT64_FORMAT
                " ps, duration %" G_GINT64_FORMAT " ps) is out of range; the profile is corrupt",
                c->source, v->byte_offset, v->line_timestamp_ns, v->offset_ps, v->duration_ps);
    return FALSE;
  }
  *out = (sim_time_ps) t;
  return TRUE;
}

/* A GPU kernel (a name, not HLO text) of a communication library in the
 * Kineto registry (kineto_commreg.h: NCCL, NVSHMEM, MSCCL++, custom
 * all-reduce, ...) or a TensorFlow collective op: a collective of unknown
 * size, replayed at its measured duration.  The kind comes from the
 * registry entry or NCCL's kernel-name token; a kernel of unknown kind
 * (ncclDevKernel_Generic, an executor) is labelled all-reduce, which only
 * names it in reports.  O(registry x name length). */
static void gpu_comm_kernel(xla_info *in)
{
  const char *name = in->text;
  const kt_commreg_entry *e = kt_commreg_lookup(name);
  et_coll_type coll = ET_COLL_NONE;
  int p2p = 0;
  gboolean tf = strstr(name, "CollectiveReduce") || strstr(name, "NcclAllReduce");
  if ((!e || e->size == KT_CR_SIZE_LOCAL) && !tf)
    return;
  if (tf)
    coll = ET_COLL_ALL_REDUCE;
  else if (e->kind_from_name)
    kt_coll_from_kernel(name, &coll, &p2p);
  else
    coll = e->coll, p2p = e->p2p;
  switch (coll) {
  case ET_COLL_ALL_GATHER: in->kind = FE_HLO_ALL_GATHER; break;
  case ET_COLL_REDUCE_SCATTER: in->kind = FE_HLO_REDUCE_SCATTER; break;
  case ET_COLL_ALL_TO_ALL:
  case ET_COLL_ALL_TO_ALLV: in->kind = FE_HLO_ALL_TO_ALL; break;
  case ET_COLL_BROADCAST: in->kind = FE_HLO_COLLECTIVE_BROADCAST; break;
  default: in->kind = p2p == 1 ? FE_HLO_SEND : p2p == 2 ? FE_HLO_RECV : FE_HLO_ALL_REDUCE; break;
  }
  in->phase = FE_HLO_SYNC;
  in->sized = FALSE;
  g_free(in->unsized_reason);
  in->unsized_reason = g_strdup_printf("%s communication kernel: the GPU plane carries no HLO text or size for it",
                                       tf ? "TensorFlow" : e->library);
}

/* Finds or creates the op record of an HLO text (or bare name) with its
 * display name and hlo_category (both may be "" / NULL). */
static xla_info *intern_text(xla_ctx *c, const char *text, const char *display, const char *cat)
{
  xla_info *in = g_hash_table_lookup(c->info_by_text, text);
  if (in)
    return in;
  in = g_new0(xla_info, 1);
  in->text = g_strdup(text);
  in->index = c->infos->len;
  g_ptr_array_add(c->infos, in);
  g_hash_table_insert(c->info_by_text, in->text, in);
  gboolean has_cat = cat != NULL && cat[0];
  fe_hlo_phase ph;
  fe_hlo_kind cat_kind = has_cat ? fe_hlo_classify(cat, NULL, &ph) : FE_HLO_OTHER;
  fe_hlo_phase cat_phase = has_cat ? ph : FE_HLO_SYNC;
  GError *err = NULL;
  const char *reason = NULL;
  if (strchr(text, '=') && fe_hlo_parse_instr(text, &in->hlo, &reason, &err)) {
    in->parsed = TRUE;
    in->kind = in->hlo.kind;
    in->phase = in->hlo.phase;
    in->sized = in->hlo.sized;
    in->short_name = g_strdup(in->hlo.name);
    if (in->kind == FE_HLO_OTHER && cat_kind != FE_HLO_OTHER) {
      /* e.g. a fusion that XLA categorises as a collective: no size we can trust. */
      in->kind = cat_kind;
      in->phase = cat_phase;
      in->sized = FALSE;
      in->unsized_reason = g_strdup_printf("opcode %s is categorised as %s", in->hlo.opcode, cat);
    } else if (reason) {
      in->unsized_reason = g_strdup(reason);
    }
  } else {
    in->short_name = g_strdup(display && display[0] ? display : text);
    fe_hlo_kind k = fe_hlo_classify(in->short_name, in->short_name, &ph);
    if (k == FE_HLO_OTHER) {
      k = cat_kind;
      ph = cat_phase;
    }
    in->kind = k;
    in->phase = ph;
    in->sized = FALSE;
    in->unsized_reason = err ? g_strdup(err->message) : g_strdup("no HLO instruction text in the profile");
  }
  g_clear_error(&err);
  if (in->kind == FE_HLO_OTHER && !in->parsed)
    gpu_comm_kernel(in);
  if (in->kind != FE_HLO_OTHER && in->phase != FE_HLO_DONE && !in->sized && !in->unsized_reason)
    in->unsized_reason = g_strdup("size unknown");
  return in;
}

static xla_info *intern(xla_ctx *c, const fe_xevent_view *v)
{
  const char *text = v->name[0] ? v->name : v->display_name;
  xla_info *in = g_hash_table_lookup(c->info_by_text, text);
  if (in)
    return in;
  fe_xstat_value cv = {0};
  char *cat = fe_xevent_stat(v, "hlo_category", &cv) && cv.type == FE_XSTAT_STR ? g_strndup(cv.s, cv.len) : NULL;
  in = intern_text(c, text, v->display_name, cat);
  g_free(cat);
  return in;
}

static gboolean on_event(void *user, const fe_xevent_view *v, GError **error)
{
  xla_ctx *c = user;
  c->rep->events++;
  if (!v->has_offset) {
    c->rep->aggregated_events++;
    return TRUE;
  }
  sim_time_ps start;
  if (!event_start(c, v, &start, error))
    return FALSE;
  if (c->line_kind == LINE_STEPS) {
    if (c->opt->step_marker && !g_str_has_prefix(v->name[0] ? v->name : v->display_name, c->opt->step_marker))
      return TRUE;
    sim_time_ps end = start + v->duration_ps;
    g_array_append_val(c->chip->steps, start);
    g_array_append_val(c->chip->steps, end);
    return TRUE;
  }
  xla_info *in = g_hash_table_lookup(c->meta_cache, &v->metadata_id);
  if (!in) {
    in = intern(c, v);
    int64_t *key = g_new(int64_t, 1);
    *key = v->metadata_id;
    g_hash_table_insert(c->meta_cache, key, in);
  }
  if (c->infos->len >= UINT32_MAX - 1 || c->seq == UINT32_MAX) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_LIMIT, "%s: more than 2^32 ops", c->source);
    return FALSE;
  }
  xla_op op = {start, v->duration_ps, -1, -1, in->index, c->seq++, c->stream};
  fe_xstat_value dv;
  int64_t doff, ddur;
  if (c->have_dev_ids && fe_xevent_stat_by_id(v, c->dev_off_id, &dv) && fe_xstat_as_int64(&dv, &doff) &&
      fe_xevent_stat_by_id(v, c->dev_dur_id, &dv) && fe_xstat_as_int64(&dv, &ddur) && ddur >= 0 &&
      doff >= 0 && doff < INT64_MAX / 4 && ddur < INT64_MAX / 4) {
    op.dev_start = start - v->offset_ps + doff;  /* same line base as offset_ps */
    op.dev_dur = ddur;
  }
  g_array_append_val(c->chip->ops, op);
  fe_xstat_value f;
  int64_t fl;
  if (c->have_flops_id && fe_xevent_stat_by_id(v, c->flops_id, &f) && fe_xstat_as_int64(&f, &fl) && fl > 0)
    c->rep->model_flops += (uint64_t) fl;
  return TRUE;
}

static int cmp_chip(const void *a, const void *b)
{
  const xla_chip *x = *(xla_chip *const *) a, *y = *(xla_chip *const *) b;
  return x->global_id < y->global_id ? -1 : x->global_id > y->global_id;
}

static int cmp_op(const void *a, const void *b)
{
  const xla_op *x = a, *y = b;
  if (x->stream != y->stream)
    return x->stream < y->stream ? -1 : 1;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The bytes that decide a collective's global groups (for a given device
 * and partition count, fixed per load): what fe_hlo_global_groups reads. */
static GBytes *groups_key(const fe_hlo_instr *h)
{
  GByteArray *k = g_byte_array_new();
  int64_t head[4] = { h->mode, h->has_channel_id, h->has_replica_groups, h->has_replica_groups ? h->n_groups : 0 };
  g_byte_array_append(k, (const guint8 *)head, sizeof head);
  if (h->has_replica_groups && h->n_groups > 0) {
    g_byte_array_append(k, (const guint8 *)h->group_off, (guint)(sizeof(uint32_t) * (h->n_groups + 1)));
    g_byte_array_append(k, (const guint8 *)h->group_ids, (guint)(sizeof(int64_t) * h->group_off[h->n_groups]));
  }
  return g_byte_array_free_to_bytes(k);
}

/* Computes (or finds) the global groups of a collective's pattern; FALSE
 * on invalid ids.  O(ids of the pattern + n_devices) the first time a
 * pattern is seen, O(its key) after. */
static gboolean info_groups(xla_ctx *c, xla_info *in, GError **error)
{
  if (in->groups)
    return TRUE;
  GBytes *key = groups_key(&in->hlo);
  xla_groups *xg = g_hash_table_lookup(c->groups_by_key, key);
  if (xg) {
    g_bytes_unref(key);
    in->groups = xg;
    return TRUE;
  }
  xg = g_new0(xla_groups, 1);
  xg->groups = g_ptr_array_new_with_free_func((GDestroyNotify) g_array_unref);
  g_hash_table_insert(c->groups_by_key, key, xg); /* owned by the table; removed again on failure */
  if (!fe_hlo_global_groups(&in->hlo, c->n_devices, c->opt->num_partitions, xg->groups, error)) {
    g_hash_table_remove(c->groups_by_key, key);
    return FALSE;
  }
  xg->group_of_device = g_new(int32_t, c->n_devices);
  for (int64_t d = 0; d < c->n_devices; d++)
    xg->group_of_device[d] = -1;
  for (guint g = 0; g < xg->groups->len; g++) {
    GArray *a = xg->groups->pdata[g];
    for (guint i = 0; i < a->len; i++) {
      int64_t d = g_array_index(a, int64_t, i);
      if (xg->group_of_device[d] >= 0) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                    "%s: collective %s: device %" G_GINT64_FORMAT " appears twice in its replica groups "
                    "(%s mode); the HLO is invalid", c->source, in->short_name, d, fe_hlo_mode_name(in->hlo.mode));
        g_hash_table_remove(c->groups_by_key, key);
        return FALSE;
      }
      xg->group_of_device[d] = (int32_t) g;
    }
  }
  xg->wgroup = g_new(uint32_t, xg->groups->len);
  xg->n_present = g_new(int32_t, xg->groups->len);
  for (guint g = 0; g < xg->groups->len; g++)
    xg->wgroup[g] = ET_NONE;
  in->groups = xg;
  return TRUE;
}

/* Workload group of device dev for collective in; counts partial groups
 * and says, in *partial, whether members are missing from the profile. */
static gboolean comm_group(xla_ctx *c, et_workload *w, xla_info *in, int64_t dev, uint32_t *out,
                           const char **pg_name, gboolean *partial, GError **error)
{
  if (!info_groups(c, in, error))
    return FALSE;
  xla_groups *xg = in->groups;
  int32_t g = xg->group_of_device[dev];
  if (g < 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: collective %s: device %" G_GINT64_FORMAT " is in none of its replica groups",
                c->source, in->short_name, dev);
    return FALSE;
  }
  GArray *a = xg->groups->pdata[g];
  /* The workload group and the present members are computed once per
   * group of the pattern (O(group size)); later calls are O(1). */
  if (xg->wgroup[g] == ET_NONE) {
    int n_present = 0;
    int *ranks = g_new(int, a->len);
    for (guint i = 0; i < a->len; i++) {
      int r = c->dev_rank[g_array_index(a, int64_t, i)];
      if (r >= 0)
        ranks[n_present++] = r;
    }
    GString *s = g_string_new("xla:");
    for (int i = 0; i < n_present; i++)
      g_string_append_printf(s, "%s%d", i ? "," : "", ranks[i]);
    gpointer idx = g_hash_table_lookup(w->group_index, s->str);
    if (idx) {
      xg->wgroup[g] = GPOINTER_TO_UINT(idx) - 1;
    } else {
      xg->wgroup[g] = et_workload_add_group(w, s->str, fe_hlo_mode_name(in->hlo.mode), ranks, n_present);
    }
    xg->n_present[g] = n_present;
    g_string_free(s, TRUE);
    g_free(ranks);
  }
  int n_present = xg->n_present[g];
  *partial = (guint) n_present < a->len;
  if (*partial) {
    c->rep->partial_groups++;
    if (c->opt->strict) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s: collective %s: its replica group names %u devices but the profile holds only %d "
                  "of them; give every host's file, or --replicate-missing to replay the missing chips, or drop "
                  "--strict to replay it at its measured duration", c->source, in->short_name, a->len, n_present);
      return FALSE;
    }
    if (!in->warned_partial) {
      in->warned_partial = TRUE;
      warn(c, g_strdup_printf("collective %s: replica group of %u devices, %d present in the profile "
                              "(%d chips in total); it cannot be simulated, so it is replayed at its measured "
                              "duration (--replicate-missing replays the missing chips and simulates it)",
                              in->short_name, a->len, n_present, c->rep->n_chips));
    }
  }
  *out = xg->wgroup[g];
  *pg_name = et_workload_group(w, *out)->name;
  return TRUE;
}

static et_coll_type coll_of(fe_hlo_kind k)
{
  switch (k) {
  case FE_HLO_ALL_REDUCE: return ET_COLL_ALL_REDUCE;
  case FE_HLO_ALL_GATHER: return ET_COLL_ALL_GATHER;
  case FE_HLO_REDUCE_SCATTER: return ET_COLL_REDUCE_SCATTER;
  case FE_HLO_ALL_TO_ALL:
  case FE_HLO_RAGGED_ALL_TO_ALL: return ET_COLL_ALL_TO_ALL;
  case FE_HLO_COLLECTIVE_BROADCAST: return ET_COLL_BROADCAST;
  default: return ET_COLL_NONE;
  }
}

/* Per-rank graph construction state. */
typedef struct {
  et_builder *b;
  uint64_t next_id;
  GArray *frontier;  /* xla_dep: the nodes the next node depends on */
} xla_chain;

/* A node of the frontier and its measured end. */
typedef struct {
  uint64_t id;
  sim_time_ps end;
} xla_dep;

static void frontier_push(xla_chain *ch, uint64_t id, sim_time_ps end)
{
  xla_dep d = {id, end};
  g_array_append_val(ch->frontier, d);
}

static uint32_t chain_add(xla_chain *ch, et_node_type type, const char *name, sim_time_ps start,
                          sim_time_ps dur, uint8_t flags, gboolean advance)
{
  uint64_t id = ch->next_id++;
  uint32_t n = et_builder_add_node(ch->b, id, type, name, dur, flags | ET_FLAG_HAS_START);
  et_builder_set_start(ch->b, n, start);
  for (guint i = 0; i < ch->frontier->len; i++)
    et_builder_add_dep(ch->b, n, g_array_index(ch->frontier, xla_dep, i).id, TRUE, TRUE); /* execution order: data_deps and ctrl_deps, for V1 and V3 feeders */
  if (advance) {
    g_array_set_size(ch->frontier, 0);
    frontier_push(ch, id, start + dur);
  }
  return n;
}

/* The idle time [start, start + dur) before the chain's next op.  It
 * follows only the frontier node that ended last on the measured timeline
 * (the first of them on ties); the next op also depends on the others
 * directly, so when that binding node ends earlier in a what-if the op
 * moves with it and the others still hold it: idle is never measured
 * waiting replayed after everything (the rule of kineto_graph.c). */
static void chain_idle(xla_chain *ch, sim_time_ps start, sim_time_ps dur)
{
  guint bind = 0;
  for (guint i = 1; i < ch->frontier->len; i++)
    if (g_array_index(ch->frontier, xla_dep, i).end > g_array_index(ch->frontier, xla_dep, bind).end)
      bind = i;
  uint64_t id = ch->next_id++;
  uint32_t n = et_builder_add_node(ch->b, id, ET_NODE_COMP, "idle_gap", dur, ET_FLAG_DELAY | ET_FLAG_HAS_START);
  et_builder_set_start(ch->b, n, start);
  if (ch->frontier->len) {
    et_builder_add_dep(ch->b, n, g_array_index(ch->frontier, xla_dep, bind).id, TRUE, TRUE);
    g_array_remove_index(ch->frontier, bind);
  }
  frontier_push(ch, id, start + dur);
}

static void comm_init(et_comm *cm)
{
  memset(cm, 0, sizeof *cm);
  cm->group = ET_GROUP_WORLD;
  cm->pg_name = ET_NONE;
  cm->split = ET_NONE;
  cm->src = cm->dst = cm->tag = cm->root = -1;
  cm->coll = ET_COLL_NONE;
}

/* Emits the SEND/RECV nodes of a permute/send/recv for device dev, with
 * consecutive node ids (not advancing the chain); *count receives how many. */
static gboolean p2p_nodes(xla_ctx *c, xla_chain *ch, xla_info *in, const xla_op *op, sim_time_ps dur,
                          int64_t dev, int rank, uint32_t *counter, uint32_t *count, GError **error)
{
  uint32_t k = counter[in->index]++;
  uint64_t tag64 = (uint64_t) k * c->infos->len + in->index;
  *count = 0;
  if (tag64 > INT32_MAX) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_LIMIT, "%s: too many point-to-point operations for 31-bit tags",
                c->source);
    return FALSE;
  }
  for (uint32_t i = 0; i < in->hlo.n_pairs; i++) {
    int64_t s = in->hlo.pairs[2 * i], t = in->hlo.pairs[2 * i + 1];
    if (s == t)
      continue;  /* a device "sending" to itself moves nothing over the network */
    for (int pass = 0; pass < 2; pass++) {
      gboolean is_send = pass == 0;
      if (is_send ? (s != dev || in->kind == FE_HLO_RECV) : (t != dev || in->kind == FE_HLO_SEND))
        continue;
      int64_t peer = is_send ? t : s;
      int pr = peer >= 0 && peer < c->n_devices ? c->dev_rank[peer] : -1;
      if (pr < 0) {
        c->rep->missing_peers++;
        continue;
      }
      uint32_t n = chain_add(ch, is_send ? ET_NODE_COMM_SEND : ET_NODE_COMM_RECV, in->short_name, op->start,
                             dur, 0, FALSE);
      et_comm cm;
      comm_init(&cm);
      cm.bytes = in->hlo.bytes;
      cm.src = is_send ? rank : pr;
      cm.dst = is_send ? pr : rank;
      cm.tag = (int32_t) tag64;
      et_builder_set_comm(ch->b, n, &cm, NULL, NULL, 0);
      c->rep->comm_bytes += cm.bytes;
      (*count)++;
    }
  }
  return TRUE;
}

/* The state of one rank's graph construction (build_rank and its
 * phases): the chip's ops in (stream, time) order, the async pairing of
 * pair_async, and the nodes emitted for each async start so that the op
 * after its done can wait for them. */
typedef struct {
  xla_ctx *c;
  et_workload *w;
  xla_chip *chip;
  int rank;
  xla_chain ch;
  const xla_op *ops;
  guint n;
  uint32_t *counter;     /* per info: point-to-point executions so far (tags) */
  int64_t *partner;      /* async start: index of its done; done: index of its start; else -1 */
  gboolean *as_start;    /* a sync-looking collective that a later done closes (trace JSON naming) */
  uint64_t *start_node;  /* first node id emitted for an async start */
  uint32_t *start_count; /* nodes emitted for it */
} xla_build;

/* Pairs a done with its start: the open start its operand names, else the
 * oldest open start of its kind, else (trace JSON) the unpaired sync op
 * "<kind>.N" of "<kind>-done.N" within XLA_MAX_LOOKBACK ops.  O(ops x
 * XLA_MAX_OPEN) worst case. */
static void pair_done(xla_build *b, GArray *open, guint i)
{
  xla_ctx *c = b->c;
  const xla_op *ops = b->ops;
  xla_info *in = c->infos->pdata[ops[i].info];
  const char *want = in->parsed ? in->hlo.operand0_name : NULL;
  guint hit = G_MAXUINT;
  for (guint j = 0; j < open->len && hit == G_MAXUINT; j++) {
    xla_info *s = c->infos->pdata[ops[g_array_index(open, guint, j)].info];
    if (want && strcmp(s->short_name, want) == 0)
      hit = j;
  }
  for (guint j = 0; j < open->len && hit == G_MAXUINT; j++) {
    xla_info *s = c->infos->pdata[ops[g_array_index(open, guint, j)].info];
    if (s->kind == in->kind)
      hit = j;
  }
  if (hit != G_MAXUINT) {
    guint si = g_array_index(open, guint, hit);
    b->partner[si] = i;
    b->partner[i] = si;
    g_array_remove_index(open, hit);
    return;
  }
  const char *dn = in->short_name;
  const char *d = strstr(dn, "-done");
  char *want_sync = d ? g_strdup_printf("%.*s%s", (int) (d - dn), dn, d + 5) : NULL;
  for (guint k = i; want_sync && k-- > 0 && i - k <= XLA_MAX_LOOKBACK && ops[k].stream == ops[i].stream;) {
    xla_info *s = c->infos->pdata[ops[k].info];
    if (s->kind == in->kind && s->phase == FE_HLO_SYNC && b->partner[k] < 0 && strcmp(s->short_name, want_sync) == 0) {
      b->partner[k] = i;
      b->partner[i] = k;
      b->as_start[k] = TRUE;
      break;
    }
  }
  g_free(want_sync);
}

/* Phase 1: the async start/done pairs of every stream. */
static void pair_async(xla_build *b)
{
  GArray *open = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < b->n; i++) {
    b->partner[i] = -1;
    b->start_node[i] = UINT64_MAX;
    if (i > 0 && b->ops[i].stream != b->ops[i - 1].stream)
      g_array_set_size(open, 0);
    xla_info *in = b->c->infos->pdata[b->ops[i].info];
    if (in->kind == FE_HLO_OTHER || in->kind == FE_HLO_SEND || in->kind == FE_HLO_RECV)
      continue;
    if (in->phase == FE_HLO_START) {
      /* Bound the open list (and so the work per done): XLA keeps a handful
       * of collectives in flight; the oldest beyond the bound stays unmatched. */
      if (open->len == XLA_MAX_OPEN)
        g_array_remove_index(open, 0);
      g_array_append_val(open, i);
    } else if (in->phase == FE_HLO_DONE) {
      pair_done(b, open, i);
    }
  }
  g_array_free(open, TRUE);
}

/* A collective without a usable size: an error under --strict, else a
 * COMM node replayed at its measured duration (never free), warned. */
static gboolean emit_unsized(xla_build *b, xla_info *in, const xla_op *op, GError **error)
{
  xla_ctx *c = b->c;
  c->rep->unsized++;
  if (c->opt->strict) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: chip %" G_GINT64_FORMAT ": collective %s has no usable size (%s); "
                "drop --strict to replay it as compute", c->source, b->chip->global_id, in->short_name,
                in->unsized_reason ? in->unsized_reason : "unknown");
    return FALSE;
  }
  warn(c, g_strdup_printf("collective %s has no usable size (%s): replayed at its measured duration, it "
                          "does not respond to the network", in->short_name,
                          in->unsized_reason ? in->unsized_reason : "?"));
  uint32_t un = chain_add(&b->ch, ET_NODE_COMM_COLL, in->short_name, op->start, op->dur, ET_FLAG_REPLAY, TRUE);
  et_comm ucm;
  comm_init(&ucm);
  ucm.coll = (uint8_t) coll_of(in->kind);
  et_builder_set_comm(b->ch.b, un, &ucm, NULL, NULL, 0);
  c->rep->replayed_collectives++;
  return TRUE;
}

/* A sized collective (or permute/send/recv) starting at op i, lasting dur
 * (to its done's end when async): its COMM node(s), recorded for the done
 * when async. */
static gboolean emit_collective(xla_build *b, xla_info *in, guint i, gboolean async, sim_time_ps dur,
                                GError **error)
{
  xla_ctx *c = b->c;
  const xla_op *op = &b->ops[i];
  if (in->kind == FE_HLO_COLLECTIVE_PERMUTE || in->kind == FE_HLO_SEND || in->kind == FE_HLO_RECV) {
    uint64_t first = b->ch.next_id;
    uint32_t cnt = 0;
    if (!p2p_nodes(c, &b->ch, in, op, dur, b->chip->global_id, b->rank, b->counter, &cnt, error))
      return FALSE;
    if (!async && cnt) {
      g_array_set_size(b->ch.frontier, 0);
      for (uint32_t j = 0; j < cnt; j++)
        frontier_push(&b->ch, first + j, op->start + dur);
    }
    if (async) {
      b->start_node[i] = first;
      b->start_count[i] = cnt;
    }
    return TRUE;
  }
  uint32_t gidx;
  const char *pg;
  gboolean partial;
  if (!comm_group(c, b->w, in, b->chip->global_id, &gidx, &pg, &partial, error))
    return FALSE;
  uint64_t id = b->ch.next_id;
  /* A group whose members are not all in the profile cannot be
   * simulated: its measured time is replayed (never free). */
  uint32_t node = chain_add(&b->ch, ET_NODE_COMM_COLL, in->short_name, op->start, dur,
                            partial ? ET_FLAG_REPLAY : 0, !async);
  if (partial)
    c->rep->replayed_collectives++;
  et_comm cm;
  comm_init(&cm);
  cm.bytes = in->hlo.bytes;
  cm.coll = (uint8_t) coll_of(in->kind);
  cm.group = gidx;
  if (in->kind == FE_HLO_COLLECTIVE_BROADCAST)
    cm.root = et_workload_group(b->w, gidx)->ranks[0];
  et_builder_set_comm(b->ch.b, node, &cm, pg, NULL, 0);
  c->rep->comm_bytes += cm.bytes;
  if (async) {
    b->start_node[i] = id;
    b->start_count[i] = 1;
  }
  return TRUE;
}

/* Phase 2, one op: the idle before it, then a compute node, the end of an
 * async pair (the next op waits for the collective's nodes), an unsized
 * or a sized collective.  *prev_end is the chain's measured end so far. */
static gboolean emit_op(xla_build *b, guint i, sim_time_ps *prev_end, GError **error)
{
  xla_ctx *c = b->c;
  const xla_op *op = &b->ops[i];
  xla_info *in = c->infos->pdata[op->info];
  if (i == 0 || op->stream != b->ops[i - 1].stream) {
    g_array_set_size(b->ch.frontier, 0);
    *prev_end = op->start;
  }
  sim_time_ps end = op->start + op->dur;
  if (op->start > *prev_end && !c->opt->no_gaps)
    chain_idle(&b->ch, *prev_end, op->start - *prev_end);
  if (op->start < *prev_end) {
    /* Ops of one chain that overlap in the profile are serialised by the
     * chain: count them and the time the replay adds. */
    c->rep->overlapped_ops++;
    c->rep->overlap_added_ps += MIN(op->dur, *prev_end - op->start);
  }
  if (end > *prev_end)
    *prev_end = end;
  c->rep->ops++;
  if (in->kind == FE_HLO_OTHER) {
    c->rep->compute_ops++;
    chain_add(&b->ch, ET_NODE_COMP, in->short_name, op->start, op->dur, 0, TRUE);
    return TRUE;
  }
  if (in->phase == FE_HLO_DONE) {
    int64_t si = b->partner[i];
    if (si < 0) {
      if (in->kind != FE_HLO_SEND && in->kind != FE_HLO_RECV)
        c->rep->unmatched_dones++;
    } else {
      for (uint32_t j = 0; j < b->start_count[si]; j++)
        frontier_push(&b->ch, b->start_node[si] + j, end); /* the collective's nodes end with the done */
      c->rep->async_pairs++;
    }
    return TRUE;
  }
  c->rep->collectives[in->kind]++;
  if (!in->sized)
    return emit_unsized(b, in, op, error);
  gboolean async = in->phase == FE_HLO_START || b->as_start[i];
  sim_time_ps dur = op->dur;
  if (async) {
    if (b->partner[i] >= 0)
      dur = b->ops[b->partner[i]].start + b->ops[b->partner[i]].dur - op->start;
    else
      c->rep->unmatched_starts++;
  }
  return emit_collective(b, in, i, async, dur, error);
}

/* One rank's graph: pair the async ops, then emit every op in (stream,
 * time) order as a chain per stream.  O(ops x XLA_MAX_OPEN) worst case. */
static et_graph *build_rank(xla_ctx *c, et_workload *w, xla_chip *chip, int rank, GError **error)
{
  const char *dev = chip->gpu ? "GPU" : "TPU";
  char *src = chip->replica_of < 0
                  ? g_strdup_printf("%s:/device:%s:%" G_GINT64_FORMAT, c->paths[chip->file], dev, chip->local_id)
                  : g_strdup_printf("device %" G_GINT64_FORMAT " (replays %s:/device:%s:%" G_GINT64_FORMAT ")",
                                    chip->global_id, c->paths[chip->file], dev, chip->local_id);
  guint n = chip->ops->len;
  xla_build b = {
    .c = c, .w = w, .chip = chip, .rank = rank,
    .ch = {et_builder_new(src), 0, g_array_new(FALSE, FALSE, sizeof(xla_dep))},
    .ops = (const xla_op *) chip->ops->data, .n = n,
    .counter = g_new0(uint32_t, c->infos->len),
    .partner = g_new(int64_t, n),
    .as_start = g_new0(gboolean, n),
    .start_node = g_new(uint64_t, n),
    .start_count = g_new0(uint32_t, n),
  };
  g_free(src);
  pair_async(&b);
  if (n == 0 && chip->gpu) {
    /* A GPU plane without kernels in the window (TensorFlow writes planes
     * for every visible GPU): a rank that idles through the step. */
    chain_idle(&b.ch, 0, MAX(chip->measured, 0));
    c->rep->idle_gpus++;
  }
  gboolean ok = TRUE;
  sim_time_ps prev_end = 0;
  for (guint i = 0; i < n && ok; i++)
    ok = emit_op(&b, i, &prev_end, error);
  g_free(b.start_node);
  g_free(b.start_count);
  g_free(b.as_start);
  g_array_free(b.ch.frontier, TRUE);
  g_free(b.partner);
  g_free(b.counter);
  if (!ok) {
    et_builder_free(b.ch.b);
    return NULL;
  }
  return et_builder_finish(b.ch.b, ET_BUILD_STRICT, error);
}

/* Keeps the ops inside the selected step window of each chip. */
static gboolean select_steps(xla_ctx *c, sim_time_ps *window_len, GError **error)
{
  xla_chip *ref = NULL;
  for (guint i = 0; i < c->chips->len && !ref; i++)
    if (((xla_chip *) c->chips->pdata[i])->steps->len)
      ref = c->chips->pdata[i];
  if (!ref) {
    if (c->opt->step_marker) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s: no XLA Modules or Steps event starts with the step marker \"%s\"; "
                  "list the module names with `wisp inspect` and pick one", c->source, c->opt->step_marker);
      return FALSE;
    }
    return TRUE;
  }
  c->rep->steps = ref->steps->len / 2;
  for (guint i = 0; i < c->chips->len; i++) {
    xla_chip *ch = c->chips->pdata[i];
    GArray *st = ch->steps->len ? ch->steps : ref->steps;
    guint ns = st->len / 2;
    sim_time_ps *s = (sim_time_ps *) st->data;
    sim_time_ps lo, hi;
    if (c->opt->step_index >= 0) {
      if ((guint) c->opt->step_index >= ns) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                    "%s: step %d requested but chip %" G_GINT64_FORMAT " has %u steps",
                    c->source, c->opt->step_index, ch->global_id, ns);
        return FALSE;
      }
      lo = s[2 * c->opt->step_index];
      hi = s[2 * c->opt->step_index + 1];
    } else {
      lo = s[0];
      hi = s[1];
      for (guint k = 0; k < ns; k++) {
        lo = MIN(lo, s[2 * k]);
        hi = MAX(hi, s[2 * k + 1]);
      }
    }
    window_len[i] = hi - lo;
    guint keep = 0;
    for (guint k = 0; k < ch->ops->len; k++) {
      xla_op *op = &g_array_index(ch->ops, xla_op, k);
      if (op->start >= lo && op->start < hi)
        g_array_index(ch->ops, xla_op, keep++) = *op;
      else
        c->rep->outside_steps++;
    }
    g_array_set_size(ch->ops, keep);
  }
  return TRUE;
}

static gboolean assign_ids(xla_ctx *c)
{
  GHashTable *seen = g_hash_table_new(g_int64_hash, g_int64_equal);
  gboolean disjoint = TRUE;
  int64_t max_per_file = 0;
  for (guint i = 0; i < c->chips->len; i++) {
    xla_chip *ch = c->chips->pdata[i];
    if (g_hash_table_contains(seen, &ch->local_id))
      disjoint = FALSE;
    g_hash_table_add(seen, &ch->local_id);
    max_per_file = MAX(max_per_file, ch->local_id + 1);
  }
  g_hash_table_unref(seen);
  for (guint i = 0; i < c->chips->len; i++) {
    xla_chip *ch = c->chips->pdata[i];
    ch->global_id = disjoint ? ch->local_id : ch->file * max_per_file + ch->local_id;
  }
  if (!disjoint && c->rep->n_files > 1)
    warn(c, g_strdup_printf("files reuse chip numbers: chip N of file h is device h*%" G_GINT64_FORMAT
                            "+N (files in argument order)", max_per_file));
  qsort(c->chips->pdata, c->chips->len, sizeof(gpointer), cmp_chip);
  return TRUE;
}

/* ---- XProf trace-viewer JSON ---- */

/* One complete ("X") event held until the pid -> device map is known. */
typedef struct {
  int64_t pid;
  sim_time_ps start, dur;
  uint32_t info;
  uint32_t seq;
} xla_jop;

typedef struct {
  char *ph, *name, *arg_name, *long_name, *category;
  int64_t pid;
  gboolean has_pid, has_ts, has_dur, has_dev_off, has_dev_dur;
  int64_t ts_us, ts_frac_ps;
  sim_time_ps dur, dev_off, dev_dur;
  int64_t model_flops;
} xla_jev;

static void jev_clear(xla_jev *e)
{
  g_free(e->ph);
  g_free(e->name);
  g_free(e->arg_name);
  g_free(e->long_name);
  g_free(e->category);
  memset(e, 0, sizeof *e);
}

/* Reads a number (or a string holding one) as an integer. */
static gboolean json_int_value(fe_json *j, fe_json_tok t, int64_t *out, GError **error)
{
  if (t == FE_JSON_NUMBER || t == FE_JSON_STRING) {
    if (fe_json_int(fe_json_text(j, NULL), out))
      return TRUE;
  } else if (!fe_json_skip(j, t, error)) {
    return FALSE;
  }
  fe_json_error(j, error, "expected an integer");
  return FALSE;
}

static gboolean json_string_value(fe_json *j, fe_json_tok t, char **out, GError **error)
{
  if (t != FE_JSON_STRING) {
    if (!fe_json_skip(j, t, error))
      return FALSE;
    return TRUE;  /* non-string names are ignored */
  }
  g_free(*out);
  size_t len;
  const char *txt = fe_json_text(j, &len);
  *out = g_strndup(txt, len);
  return TRUE;
}

static gboolean json_args(fe_json *j, xla_jev *e, GError **error)
{
  fe_json_tok t;
  for (;;) {
    if (!fe_json_next(j, &t, error))
      return FALSE;
    if (t == FE_JSON_OBJ_END)
      return TRUE;
    char *key = g_strdup(fe_json_text(j, NULL));
    if (!fe_json_next(j, &t, error)) {
      g_free(key);
      return FALSE;
    }
    gboolean ok = TRUE;
    if (strcmp(key, "name") == 0)
      ok = json_string_value(j, t, &e->arg_name, error);
    else if (strcmp(key, "long_name") == 0)
      ok = json_string_value(j, t, &e->long_name, error);
    else if (strcmp(key, "hlo_category") == 0)
      ok = json_string_value(j, t, &e->category, error);
    else if (strcmp(key, "device_offset_ps") == 0)
      ok = e->has_dev_off = json_int_value(j, t, &e->dev_off, error);
    else if (strcmp(key, "device_duration_ps") == 0)
      ok = e->has_dev_dur = json_int_value(j, t, &e->dev_dur, error);
    else if (strcmp(key, "model_flops") == 0)
      ok = json_int_value(j, t, &e->model_flops, error);
    else
      ok = fe_json_skip(j, t, error);
    g_free(key);
    if (!ok)
      return FALSE;
  }
}

static gboolean json_event(fe_json *j, xla_jev *e, GError **error)
{
  fe_json_tok t;
  for (;;) {
    if (!fe_json_next(j, &t, error))
      return FALSE;
    if (t == FE_JSON_OBJ_END)
      return TRUE;
    char *key = g_strdup(fe_json_text(j, NULL));
    if (!fe_json_next(j, &t, error)) {
      g_free(key);
      return FALSE;
    }
    gboolean ok = TRUE;
    if (strcmp(key, "ph") == 0) {
      ok = json_string_value(j, t, &e->ph, error);
    } else if (strcmp(key, "name") == 0) {
      ok = json_string_value(j, t, &e->name, error);
    } else if (strcmp(key, "pid") == 0) {
      ok = e->has_pid = json_int_value(j, t, &e->pid, error);
    } else if (strcmp(key, "ts") == 0 || strcmp(key, "dur") == 0) {
      if (t != FE_JSON_NUMBER) {
        fe_json_error(j, error, "\"%s\" is not a number", key);
        ok = FALSE;
      } else if (key[0] == 't') {
        ok = e->has_ts = fe_json_us_split(fe_json_text(j, NULL), &e->ts_us, &e->ts_frac_ps);
      } else {
        ok = e->has_dur = fe_json_us_to_ps(fe_json_text(j, NULL), &e->dur);
      }
      if (!ok && !*error)
        fe_json_error(j, error, "\"%s\" is out of range", key);
    } else if (strcmp(key, "args") == 0 && t == FE_JSON_OBJ_BEGIN) {
      ok = json_args(j, e, error);
    } else {
      ok = fe_json_skip(j, t, error);
    }
    g_free(key);
    if (!ok)
      return FALSE;
  }
}

/* The state of reading one XProf trace-viewer JSON file (json_load and
 * its phases). */
typedef struct {
  xla_ctx *c;
  fe_json *j;
  const char *path;
  GHashTable *pid_name;  /* pid -> process_name */
  GArray *jops;          /* xla_jop: complete events, in file order */
  GArray *steps;         /* sim_time_ps pairs of the step-marker events */
  gboolean have_base;
  int64_t base_us;
  xla_jev e;
} xla_jload;

/* One decoded event: a pid's process_name, a step marker, or an op
 * (device_offset_ps / device_duration_ps when present, else ts / dur);
 * others are skipped.  off is its byte offset for messages. */
static gboolean json_keep_event(xla_jload *L, uint64_t off, GError **error)
{
  xla_ctx *c = L->c;
  xla_jev *e = &L->e;
  if (!e->ph || !e->has_pid)
    return TRUE;
  if (strcmp(e->ph, "M") == 0) {
    if (e->name && strcmp(e->name, "process_name") == 0 && e->arg_name) {
      int64_t *k = g_new(int64_t, 1);
      *k = e->pid;
      g_hash_table_replace(L->pid_name, k, g_strdup(e->arg_name));
    }
    return TRUE;
  }
  if (strcmp(e->ph, "X") != 0 || !e->has_ts)
    return TRUE;
  if (!L->have_base) {
    L->have_base = TRUE;
    L->base_us = e->ts_us;
  }
  __int128 st = ((__int128) e->ts_us - L->base_us) * SIM_PS_PER_US + e->ts_frac_ps;
  if (st > INT64_MAX / 4 || st < -(INT64_MAX / 4)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: byte %" G_GUINT64_FORMAT
                ": event time is out of range", L->path, off);
    return FALSE;
  }
  sim_time_ps start = (sim_time_ps) st, dur = e->has_dur ? e->dur : 0;
  if (c->opt->step_marker && e->name && g_str_has_prefix(e->name, c->opt->step_marker)) {
    sim_time_ps end = start + dur;
    g_array_append_val(L->steps, start);
    g_array_append_val(L->steps, end);
    return TRUE;
  }
  if (e->has_dev_off)
    start = e->dev_off;
  if (e->has_dev_dur)
    dur = e->dev_dur;
  if (dur < 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: byte %" G_GUINT64_FORMAT
                ": negative duration", L->path, off);
    return FALSE;
  }
  const char *text = e->long_name && e->long_name[0] ? e->long_name : e->name ? e->name : "";
  xla_info *in = intern_text(c, text, e->name, e->category);
  xla_jop jo = {e->pid, start, dur, in->index, c->seq++};
  g_array_append_val(L->jops, jo);
  if (e->model_flops > 0)
    c->rep->model_flops += (uint64_t) e->model_flops;
  return TRUE;
}

/* The entries of the traceEvents array (its '[' already read). */
static gboolean json_events(xla_jload *L, GError **error)
{
  fe_json_tok t;
  for (;;) {
    if (!fe_json_next(L->j, &t, error))
      return FALSE;
    if (t == FE_JSON_ARR_END)
      return TRUE;
    if (t != FE_JSON_OBJ_BEGIN) {
      fe_json_error(L->j, error, "traceEvents entries must be objects");
      return FALSE;
    }
    uint64_t off = fe_json_offset(L->j);
    jev_clear(&L->e);
    if (!json_event(L->j, &L->e, error))
      return FALSE;
    L->c->rep->events++;
    if (!json_keep_event(L, off, error))
      return FALSE;
  }
}

/* The top-level object: traceEvents is read, every other key skipped;
 * then the end of the file (trailing garbage is an error). */
static gboolean json_top(xla_jload *L, GError **error)
{
  fe_json_tok t;
  gboolean seen_events = FALSE;
  if (!fe_json_next(L->j, &t, error))
    return FALSE;
  if (t != FE_JSON_OBJ_BEGIN) {
    fe_json_error(L->j, error, "expected a JSON object with \"traceEvents\"");
    return FALSE;
  }
  for (;;) {
    if (!fe_json_next(L->j, &t, error))
      return FALSE;
    if (t == FE_JSON_OBJ_END)
      break;
    gboolean is_events = strcmp(fe_json_text(L->j, NULL), "traceEvents") == 0;
    if (!fe_json_next(L->j, &t, error))
      return FALSE;
    if (!is_events || t != FE_JSON_ARR_BEGIN) {
      if (!fe_json_skip(L->j, t, error))
        return FALSE;
      continue;
    }
    seen_events = TRUE;
    if (!json_events(L, error))
      return FALSE;
  }
  if (!fe_json_next(L->j, &t, error))
    return FALSE;
  if (!seen_events) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: no \"traceEvents\" array; is this an XProf "
                "trace-viewer JSON file?", L->path);
    return FALSE;
  }
  return TRUE;
}

/* Attaches the ops of device pids to their chips, in file order; ops of
 * other pids are host events.  O(ops). */
static void json_attach(xla_jload *L)
{
  xla_ctx *c = L->c;
  GHashTable *seen_chip = g_hash_table_new(g_int64_hash, g_int64_equal);  /* SparseCore pids */
  for (guint i = 0; i < L->jops->len; i++) {
    xla_jop *jo = &g_array_index(L->jops, xla_jop, i);
    const char *pn = g_hash_table_lookup(L->pid_name, &jo->pid);
    int64_t n, sc;
    gboolean gpu;
    if (!pn || !parse_plane_name(pn, &n, &sc, &gpu)) {
      c->rep->host_events++;
      continue;
    }
    uint16_t stream;
    xla_chip *ch = chip_for(c, n, sc, &stream);
    ch->gpu = gpu;
    if (sc >= 0 && !g_hash_table_contains(seen_chip, &jo->pid)) {
      g_hash_table_add(seen_chip, &jo->pid);
      c->rep->n_sparsecore_planes++;
    }
    xla_op op = {jo->start, jo->dur, -1, -1, jo->info, jo->seq, stream};
    g_array_append_val(ch->ops, op);
    if (L->steps->len && ch->steps->len == 0)
      g_array_append_vals(ch->steps, L->steps->data, L->steps->len);
  }
  g_hash_table_unref(seen_chip);
}

/* Reads one XProf trace-viewer JSON file: `process_name` metadata events
 * map pids to `/device:TPU:N[ SparseCore M]` (or `/device:GPU:N`);
 * complete events on those pids are ops (device_offset_ps /
 * device_duration_ps when present, else ts / dur); events whose name
 * starts with the step marker (any pid) delimit steps.  Streaming: memory
 * is ~40 bytes per kept event. */
static gboolean json_load(xla_ctx *c, const char *path, GError **error)
{
  fe_json *j = fe_json_open(path, error);
  if (!j)
    return FALSE;
  xla_jload L = {
    .c = c, .j = j, .path = path,
    .pid_name = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free),
    .jops = g_array_new(FALSE, FALSE, sizeof(xla_jop)),
    .steps = g_array_new(FALSE, FALSE, sizeof(sim_time_ps)),
  };
  gboolean ok = json_top(&L, error);
  jev_clear(&L.e);
  if (ok) {
    c->rep->bytes_read += fe_json_bytes_read(j);
    json_attach(&L);
  }
  g_array_free(L.steps, TRUE);
  g_array_free(L.jops, TRUE);
  g_hash_table_unref(L.pid_name);
  fe_json_free(j);
  return ok;
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
  fe_xplane_visitor vis = {on_plane, on_line, on_event, NULL};
  for (int f = 0; f < n; f++) {
    c->file = f;
    c->source = paths[f];
    if (fe_xla_is_trace_json_path(paths[f])) {
      if (!json_load(c, paths[f], error))
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
      sorted = cmp_op(&g_array_index(ch->ops, xla_op, k - 1), &g_array_index(ch->ops, xla_op, k)) <= 0;
    if (!sorted)
      qsort(ch->ops->data, ch->ops->len, sizeof(xla_op), cmp_op);
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
  qsort(c->chips->pdata, c->chips->len, sizeof(gpointer), cmp_chip);
  warn(c, g_strdup_printf("%" G_GUINT64_FORMAT " device(s) named by replica groups are not in the profile: "
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
    .infos = g_ptr_array_new_with_free_func(info_free),
    .info_by_text = g_hash_table_new(g_str_hash, g_str_equal),
    .groups_by_key = g_hash_table_new_full(g_bytes_hash, g_bytes_equal, (GDestroyNotify) g_bytes_unref, groups_free),
    .chips = g_ptr_array_new_with_free_func(chip_free),
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
  assign_ids(&c);
  window = g_new(sim_time_ps, c.chips->len);
  for (guint i = 0; i < c.chips->len; i++)
    window[i] = -1;
  if (!select_steps(&c, window, error))
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
    w->ranks[i] = build_rank(&c, w, ch, (int) i, error);
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
