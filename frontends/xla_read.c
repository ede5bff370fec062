/* xla_read.c: reading an XPlane profile (see xla.h): planes to chips,
 * lines to streams and step markers, events to ops interned by their HLO
 * text, once per distinct op.  O(events); memory O(ops + distinct
 * texts). */
#include "config.h"

#include "frontends/xla_internal.h"

#include <stdlib.h>
#include <string.h>

void xla_warn(xla_ctx *c, char *msg)
{
  if (g_hash_table_contains(c->warned, msg)) {
    g_free(msg);
    return;
  }
  g_hash_table_add(c->warned, msg);
  if (c->rep->warnings)
    g_ptr_array_add(c->rep->warnings, g_strdup(msg));
}

void xla_info_free(gpointer p)
{
  xla_info *in = p;
  g_free(in->text);
  g_free(in->short_name);
  if (in->parsed)
    fe_hlo_instr_clear(&in->hlo);
  g_free(in->unsized_reason);
  g_free(in);
}

void xla_chip_free(gpointer p)
{
  xla_chip *ch = p;
  g_array_unref(ch->ops);
  g_array_unref(ch->steps);
  g_array_unref(ch->sc_ids);
  g_free(ch);
}

/* Parses "/device:TPU:N" (sc = -1), "/device:TPU:N SparseCore M" or
 * "/device:GPU:N" (*gpu TRUE, sc = -1). */
gboolean xla_parse_plane_name(const char *name, int64_t *chip, int64_t *sc, gboolean *gpu)
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
xla_chip *xla_chip_for(xla_ctx *c, int64_t n, int64_t sc, uint16_t *stream)
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

gboolean xla_on_plane(void *user, const fe_xplane_plane *p)
{
  xla_ctx *c = user;
  int64_t n, sc;
  c->chip = NULL;
  if (!xla_parse_plane_name(fe_xplane_plane_name(p), &n, &sc, &c->gpu_plane))
    return FALSE;
  c->chip = xla_chip_for(c, n, sc, &c->stream);
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

gboolean xla_on_line(void *user, const fe_xplane_plane *p, const char *name, int64_t id)
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
xla_info *xla_intern_text(xla_ctx *c, const char *text, const char *display, const char *cat)
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
  in = xla_intern_text(c, text, v->display_name, cat);
  g_free(cat);
  return in;
}

gboolean xla_on_event(void *user, const fe_xevent_view *v, GError **error)
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
