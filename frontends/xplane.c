/* xplane.c: streaming XSpace reader (see xplane.h): walks the protobuf
 * wire of an opened file (xplane_file.c) plane by plane, line by line,
 * and hands each event with its statistics to the visitor. */
#include "config.h"

#include "frontends/xplane_internal.h"
#include "frontends/xplane.pb-c.h"

#include <stddef.h>
#include <string.h>

gboolean fe_xstat_as_int64(const fe_xstat_value *v, int64_t *out)
{
  switch (v->type) {
  case FE_XSTAT_INT:
    *out = v->i;
    return TRUE;
  case FE_XSTAT_UINT:
    if (v->u > (uint64_t) INT64_MAX)
      return FALSE;
    *out = (int64_t) v->u;
    return TRUE;
  case FE_XSTAT_DOUBLE:
    if (!(v->d >= -9.2e18 && v->d <= 9.2e18) || v->d != (double) (int64_t) v->d)
      return FALSE;
    *out = (int64_t) v->d;
    return TRUE;
  default:
    return FALSE;
  }
}

/* ---- wire walking ---- */

typedef struct {
  const guint8 *p, *end;
  const guint8 *base;     /* file start, for offsets */
  const char *source;
} xp_cur;

typedef struct {
  uint32_t field;
  uint32_t wire;
  uint64_t v;             /* varint / fixed value */
  const guint8 *data;     /* length-delimited payload */
  size_t len;
  size_t offset;          /* of the tag */
} xp_field;

static gboolean xp_err(const xp_cur *c, const guint8 *at, GError **error, const char *what)
{
  g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE,
              "%s: byte %zu: %s; the XPlane profile is truncated or corrupt (re-export it with jax.profiler)",
              c->source, (size_t) (at - c->base), what);
  return FALSE;
}

static gboolean xp_varint_slow(xp_cur *c, uint64_t *out, GError **error)
{
  uint64_t v = 0;
  if (c->end - c->p >= 10) {
    /* No bounds checks needed: a valid varint has at most 10 bytes. */
    const guint8 *p = c->p;
    for (int shift = 0; shift < 70; shift += 7) {
      guint8 b = *p++;
      v |= (uint64_t) (b & 0x7f) << (shift < 64 ? shift : 0);
      if (!(b & 0x80)) {
        c->p = p;
        *out = v;
        return TRUE;
      }
    }
    return xp_err(c, c->p, error, "varint longer than 10 bytes");
  }
  const guint8 *start = c->p;
  for (int shift = 0; shift < 64; shift += 7) {
    if (c->p >= c->end)
      return xp_err(c, start, error, "varint runs past the end of its message");
    guint8 b = *c->p++;
    v |= (uint64_t) (b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *out = v;
      return TRUE;
    }
  }
  return xp_err(c, start, error, "varint longer than 10 bytes");
}

/* Varints of one or two bytes (tags, small ids) take the inline path. */
static inline gboolean xp_varint(xp_cur *c, uint64_t *out, GError **error)
{
  if (G_LIKELY(c->end - c->p >= 2)) {
    guint8 b0 = c->p[0];
    if (!(b0 & 0x80)) {
      *out = b0;
      c->p++;
      return TRUE;
    }
    guint8 b1 = c->p[1];
    if (!(b1 & 0x80)) {
      *out = (uint64_t) (b0 & 0x7f) | (uint64_t) b1 << 7;
      c->p += 2;
      return TRUE;
    }
  }
  return xp_varint_slow(c, out, error);
}

/* Reads one field; returns FALSE at the end (with *error unset) or on error. */
static inline __attribute__((always_inline)) gboolean xp_next(xp_cur *c, xp_field *f, GError **error)
{
  if (c->p >= c->end)
    return FALSE;
  f->offset = (size_t) (c->p - c->base);
  uint64_t tag;
  if (!xp_varint(c, &tag, error))
    return FALSE;
  f->field = (uint32_t) (tag >> 3);
  f->wire = (uint32_t) (tag & 7);
  if (f->field == 0 || tag >> 3 > 0x1fffffff)
    return xp_err(c, c->base + f->offset, error, "invalid field number 0");
  switch (f->wire) {
  case 0:
    return xp_varint(c, &f->v, error);
  case 1:
    if (c->end - c->p < 8)
      return xp_err(c, c->base + f->offset, error, "64-bit field runs past the end");
    memcpy(&f->v, c->p, 8);
    c->p += 8;
    return TRUE;
  case 5: {
    uint32_t v32;
    if (c->end - c->p < 4)
      return xp_err(c, c->base + f->offset, error, "32-bit field runs past the end");
    memcpy(&v32, c->p, 4);
    f->v = v32;
    c->p += 4;
    return TRUE;
  }
  case 2: {
    uint64_t len;
    if (!xp_varint(c, &len, error))
      return FALSE;
    if (len > (uint64_t) (c->end - c->p)) {
      char *m = g_strdup_printf("field %u declares %" G_GUINT64_FORMAT " bytes but only %zu remain in its message",
                                f->field, len, (size_t) (c->end - c->p));
      xp_err(c, c->base + f->offset, error, m);
      g_free(m);
      return FALSE;
    }
    f->data = c->p;
    f->len = (size_t) len;
    c->p += len;
    return TRUE;
  }
  default: {
    char *m = g_strdup_printf("unsupported wire type %u (field %u)", f->wire, f->field);
    xp_err(c, c->base + f->offset, error, m);
    g_free(m);
    return FALSE;
  }
  }
}

static gboolean xp_expect_fail(const xp_cur *c, const xp_field *f, uint32_t wire, const char *msg,
                               GError **error)
{
  char *m = g_strdup_printf("%s field %u has wire type %u, expected %u", msg, f->field, f->wire, wire);
  xp_err(c, c->base + f->offset, error, m);
  g_free(m);
  return FALSE;
}

static inline gboolean xp_expect(const xp_cur *c, const xp_field *f, uint32_t wire, const char *msg,
                                 GError **error)
{
  return G_LIKELY(f->wire == wire) || xp_expect_fail(c, f, wire, msg, error);
}

/* ---- planes ---- */

struct fe_xplane_plane {
  int64_t id;
  char *name;
  GHashTable *event_meta;   /* int64* -> Tensorflow__Profiler__XEventMetadata* */
  /* Dense index of event_meta when ids are small (the usual case): id -> metadata. */
  Tensorflow__Profiler__XEventMetadata **meta_by_id;
  int64_t n_meta_by_id;
  GHashTable *stat_names;   /* int64* -> const char* */
  GHashTable *stat_ids;     /* const char* -> int64* (first id of that name) */
  GPtrArray *entries;       /* unpacked map entries and stats, freed with the plane */
  GPtrArray *stats;         /* Tensorflow__Profiler__XStat* */
};

const char *fe_xplane_plane_name(const fe_xplane_plane *p) { return p->name; }
int64_t fe_xplane_plane_id(const fe_xplane_plane *p) { return p->id; }

static void plane_clear(fe_xplane_plane *p)
{
  g_free(p->meta_by_id);
  g_free(p->name);
  g_hash_table_unref(p->event_meta);
  g_hash_table_unref(p->stat_names);
  g_hash_table_unref(p->stat_ids);
  g_ptr_array_unref(p->entries);
  g_ptr_array_unref(p->stats);
}

static void free_message(gpointer m)
{
  protobuf_c_message_free_unpacked((ProtobufCMessage *) m, NULL);
}

static void plane_init(fe_xplane_plane *p)
{
  memset(p, 0, sizeof *p);
  p->name = g_strdup("");
  p->event_meta = g_hash_table_new(g_int64_hash, g_int64_equal);
  p->stat_names = g_hash_table_new(g_int64_hash, g_int64_equal);
  p->stat_ids = g_hash_table_new(g_str_hash, g_str_equal);
  p->entries = g_ptr_array_new_with_free_func(free_message);
  p->stats = g_ptr_array_new();
}

static void stat_value(const fe_xplane_plane *p, const Tensorflow__Profiler__XStat *s, fe_xstat_value *out)
{
  memset(out, 0, sizeof *out);
  switch (s->value_case) {
  case TENSORFLOW__PROFILER__XSTAT__VALUE_DOUBLE_VALUE:
    out->type = FE_XSTAT_DOUBLE;
    out->d = s->double_value;
    break;
  case TENSORFLOW__PROFILER__XSTAT__VALUE_UINT64_VALUE:
    out->type = FE_XSTAT_UINT;
    out->u = s->uint64_value;
    break;
  case TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE:
    out->type = FE_XSTAT_INT;
    out->i = s->int64_value;
    break;
  case TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE:
    out->type = FE_XSTAT_STR;
    out->s = s->str_value;
    out->len = strlen(s->str_value);
    break;
  case TENSORFLOW__PROFILER__XSTAT__VALUE_BYTES_VALUE:
    out->type = FE_XSTAT_BYTES;
    out->s = (const char *) s->bytes_value.data;
    out->len = s->bytes_value.len;
    break;
  case TENSORFLOW__PROFILER__XSTAT__VALUE_REF_VALUE: {
    int64_t key = (int64_t) s->ref_value;
    const char *n = g_hash_table_lookup(p->stat_names, &key);
    out->type = n ? FE_XSTAT_STR : FE_XSTAT_NONE;
    out->s = n;
    out->len = n ? strlen(n) : 0;
    break;
  }
  default:
    break;
  }
}

static gboolean find_stat(const fe_xplane_plane *p, Tensorflow__Profiler__XStat *const *stats, size_t n,
                          int64_t id, fe_xstat_value *out)
{
  for (size_t i = 0; i < n; i++)
    if (stats[i]->metadata_id == id) {
      stat_value(p, stats[i], out);
      return TRUE;
    }
  return FALSE;
}

gboolean fe_xplane_plane_stat(const fe_xplane_plane *p, const char *name, fe_xstat_value *out)
{
  const int64_t *id = g_hash_table_lookup(p->stat_ids, name);
  if (!id)
    return FALSE;
  return find_stat(p, (Tensorflow__Profiler__XStat *const *) p->stats->pdata, p->stats->len, *id, out);
}

/* A decoded event: scalar fields and the raw bytes of each stat. */
#define XP_MAX_EVENT_STATS 64

typedef struct {
  int64_t metadata_id, offset_ps, num_occurrences, duration_ps;
  gboolean has_offset;
  uint32_t n_stats;
  const guint8 *stat[XP_MAX_EVENT_STATS];
  uint32_t stat_len[XP_MAX_EVENT_STATS];
} xp_event;

/* Decodes one raw XStat; FALSE when malformed (callers treat it as absent,
 * the scan has already validated the framing). */
static gboolean raw_stat(const fe_xplane_plane *p, const guint8 *d, size_t n, int64_t *id, fe_xstat_value *out)
{
  xp_cur c = {d, d + n, d, ""};
  xp_field f;
  memset(out, 0, sizeof *out);
  *id = 0;
  while (xp_next(&c, &f, NULL)) {
    switch (f.field) {
    case 1: if (f.wire == 0) *id = (int64_t) f.v; break;
    case 2: if (f.wire == 1) { out->type = FE_XSTAT_DOUBLE; memcpy(&out->d, &f.v, 8); } break;
    case 3: if (f.wire == 0) { out->type = FE_XSTAT_UINT; out->u = f.v; } break;
    case 4: if (f.wire == 0) { out->type = FE_XSTAT_INT; out->i = (int64_t) f.v; } break;
    case 5:
    case 6:
      /* Event-level strings point into the file image: not NUL-terminated. */
      if (f.wire == 2) {
        out->type = f.field == 5 ? FE_XSTAT_STR : FE_XSTAT_BYTES;
        out->s = (const char *) f.data;
        out->len = f.len;
      }
      break;
    case 7:
      if (f.wire == 0) {
        int64_t key = (int64_t) f.v;
        const char *nm = g_hash_table_lookup(p->stat_names, &key);
        out->type = nm ? FE_XSTAT_STR : FE_XSTAT_NONE;
        out->s = nm;
        out->len = nm ? strlen(nm) : 0;
      }
      break;
    default: break;
    }
  }
  return c.p == c.end;
}

gboolean fe_xplane_stat_id(const fe_xplane_plane *p, const char *name, int64_t *id)
{
  const int64_t *v = g_hash_table_lookup(p->stat_ids, name);
  if (!v)
    return FALSE;
  *id = *v;
  return TRUE;
}

gboolean fe_xevent_stat_by_id(const fe_xevent_view *ev, int64_t id, fe_xstat_value *out)
{
  const xp_event *e = ev->priv_event;
  for (uint32_t i = 0; i < e->n_stats; i++) {
    int64_t sid;
    fe_xstat_value v;
    if (raw_stat(ev->plane, e->stat[i], e->stat_len[i], &sid, &v) && sid == id) {
      *out = v;
      return TRUE;
    }
  }
  const Tensorflow__Profiler__XEventMetadata *m = ev->priv_meta;
  return m && find_stat(ev->plane, m->stats, m->n_stats, id, out);
}

gboolean fe_xevent_stat(const fe_xevent_view *ev, const char *name, fe_xstat_value *out)
{
  int64_t id;
  return fe_xplane_stat_id(ev->plane, name, &id) && fe_xevent_stat_by_id(ev, id, out);
}

/* Decodes an XEvent by hand (the hot path: no allocation). */
static gboolean decode_event(const xp_cur *parent, const xp_field *ef, xp_event *e, GError **error)
{
  xp_cur c = {ef->data, ef->data + ef->len, parent->base, parent->source};
  xp_field f;
  GError *err = NULL;
  memset(e, 0, offsetof(xp_event, stat));
  e->has_offset = TRUE;
  while (xp_next(&c, &f, &err)) {
    switch (f.field) {
    case 1: case 2: case 3: case 5:
      if (!xp_expect(&c, &f, 0, "XEvent", error))
        return FALSE;
      if (f.field == 1)
        e->metadata_id = (int64_t) f.v;
      else if (f.field == 2) {
        e->offset_ps = (int64_t) f.v;
        e->has_offset = TRUE;
      } else if (f.field == 3)
        e->duration_ps = (int64_t) f.v;
      else {
        e->num_occurrences = (int64_t) f.v;
        e->has_offset = FALSE;
      }
      break;
    case 4: {
      if (!xp_expect(&c, &f, 2, "XEvent.stats", error))
        return FALSE;
      /* Validate the stat's framing now so that lookups cannot fail later. */
      xp_cur sc = {f.data, f.data + f.len, parent->base, parent->source};
      xp_field sf;
      while (xp_next(&sc, &sf, &err))
        ;
      if (err) {
        /* Stop here: going on with the event's next field would set err twice. */
        g_propagate_prefixed_error(error, err, "malformed XEvent: ");
        return FALSE;
      }
      if (e->n_stats == XP_MAX_EVENT_STATS) {
        xp_err(&c, c.base + f.offset, error, "event has more than 64 stats");
        return FALSE;
      }
      e->stat[e->n_stats] = f.data;
      e->stat_len[e->n_stats++] = (uint32_t) f.len;
      break;
    }
    default:
      break;
    }
  }
  if (err) {
    g_propagate_prefixed_error(error, err, "malformed XEvent: ");
    return FALSE;
  }
  return TRUE;
}

static ProtobufCMessage *xp_unpack(const xp_cur *c, const ProtobufCMessageDescriptor *d, const xp_field *f,
                                   ProtobufCAllocator *alloc, const char *what, GError **error)
{
  ProtobufCMessage *m = protobuf_c_message_unpack(d, alloc, f->len, f->data);
  if (!m) {
    char *msg = g_strdup_printf("malformed %s message of %zu bytes", what, f->len);
    xp_err(c, c->base + f->offset, error, msg);
    g_free(msg);
  }
  return m;
}

/* First pass over a plane: everything except lines. */
static gboolean plane_metadata(xp_cur *pc, fe_xplane_plane *p, fe_xplane_counts *counts, GError **error)
{
  xp_field f;
  GError *e = NULL;
  while (xp_next(pc, &f, &e)) {
    switch (f.field) {
    case 1:
      if (!xp_expect(pc, &f, 0, "XPlane.id", error))
        return FALSE;
      p->id = (int64_t) f.v;
      break;
    case 2:
      if (!xp_expect(pc, &f, 2, "XPlane.name", error))
        return FALSE;
      g_free(p->name);
      p->name = g_strndup((const char *) f.data, f.len);
      break;
    case 3:
      if (!xp_expect(pc, &f, 2, "XPlane.lines", error))
        return FALSE;
      break;
    case 4: {
      if (!xp_expect(pc, &f, 2, "XPlane.event_metadata", error))
        return FALSE;
      Tensorflow__Profiler__XPlane__EventMetadataEntry *en = (void *) xp_unpack(
          pc, &tensorflow__profiler__xplane__event_metadata_entry__descriptor, &f, NULL, "event_metadata entry", error);
      if (!en)
        return FALSE;
      g_ptr_array_add(p->entries, en);
      if (en->value)
        g_hash_table_replace(p->event_meta, &en->key, en->value);
      counts->metadata++;
      break;
    }
    case 5: {
      if (!xp_expect(pc, &f, 2, "XPlane.stat_metadata", error))
        return FALSE;
      Tensorflow__Profiler__XPlane__StatMetadataEntry *en = (void *) xp_unpack(
          pc, &tensorflow__profiler__xplane__stat_metadata_entry__descriptor, &f, NULL, "stat_metadata entry", error);
      if (!en)
        return FALSE;
      g_ptr_array_add(p->entries, en);
      if (en->value) {
        g_hash_table_replace(p->stat_names, &en->key, en->value->name);
        if (!g_hash_table_contains(p->stat_ids, en->value->name))
          g_hash_table_insert(p->stat_ids, en->value->name, &en->key);
      }
      break;
    }
    case 6: {
      if (!xp_expect(pc, &f, 2, "XPlane.stats", error))
        return FALSE;
      ProtobufCMessage *s = xp_unpack(pc, &tensorflow__profiler__xstat__descriptor, &f, NULL, "XStat", error);
      if (!s)
        return FALSE;
      g_ptr_array_add(p->entries, s);
      g_ptr_array_add(p->stats, s);
      break;
    }
    default:
      break;  /* unknown fields are skipped, as protobuf requires */
    }
  }
  if (e) {
    g_propagate_error(error, e);
    return FALSE;
  }
  /* Dense lookup table when the ids are non-negative and not much sparser
   * than the entries (bounded by 4 x entries + 1024 pointers). */
  int64_t max_id = -1;
  gboolean dense = TRUE;
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, p->event_meta);
  while (g_hash_table_iter_next(&it, &k, &v)) {
    int64_t id = *(int64_t *) k;
    if (id < 0)
      dense = FALSE;
    max_id = MAX(max_id, id);
  }
  int64_t cap = 4 * (int64_t) g_hash_table_size(p->event_meta) + 1024;
  if (dense && max_id >= 0 && max_id < cap) {
    p->n_meta_by_id = max_id + 1;
    p->meta_by_id = g_new0(Tensorflow__Profiler__XEventMetadata *, p->n_meta_by_id);
    g_hash_table_iter_init(&it, p->event_meta);
    while (g_hash_table_iter_next(&it, &k, &v))
      p->meta_by_id[*(int64_t *) k] = v;
  }
  return TRUE;
}

static inline const Tensorflow__Profiler__XEventMetadata *plane_meta(const fe_xplane_plane *p, int64_t id)
{
  if (p->meta_by_id)
    return id >= 0 && id < p->n_meta_by_id ? p->meta_by_id[id] : NULL;
  return g_hash_table_lookup(p->event_meta, &id);
}

typedef struct {
  int64_t id, timestamp_ns;
  const char *name;
  size_t name_len;
} xp_line_head;

static gboolean line_scan(const xp_cur *parent, const xp_field *lf, fe_xplane_plane *p,
                          const fe_xplane_visitor *vis, void *user, xp_event *ev,
                          fe_xplane_counts *counts, GError **error)
{
  xp_cur c = {lf->data, lf->data + lf->len, parent->base, parent->source};
  xp_field f;
  GError *e = NULL;
  xp_line_head h = {0, 0, "", 0};
  /* Pass 1: scalars and the name (fields may come in any order). */
  while (xp_next(&c, &f, &e)) {
    if (f.field == 1 || f.field == 3 || f.field == 9 || f.field == 10) {
      if (!xp_expect(&c, &f, 0, "XLine", error))
        return FALSE;
      if (f.field == 1)
        h.id = (int64_t) f.v;
      else if (f.field == 3)
        h.timestamp_ns = (int64_t) f.v;
    } else if (f.field == 2 || f.field == 4 || f.field == 11) {
      if (!xp_expect(&c, &f, 2, "XLine", error))
        return FALSE;
      if (f.field == 2) {
        h.name = (const char *) f.data;
        h.name_len = f.len;
      }
    }
  }
  if (e) {
    g_propagate_error(error, e);
    return FALSE;
  }
  counts->lines++;
  char *name = g_strndup(h.name, h.name_len);
  if (vis->line && !vis->line(user, p, name, h.id)) {
    g_free(name);
    return TRUE;
  }
  /* Pass 2: events, decoded by hand into *ev (no allocation per event). */
  c.p = lf->data;
  gboolean ok = TRUE;
  while (ok && xp_next(&c, &f, &e)) {
    if (f.field != 4)
      continue;
    if (f.len > UINT32_MAX || !decode_event(&c, &f, ev, error)) {
      if (error && !*error)
        xp_err(&c, c.base + f.offset, error, "malformed XEvent");
      ok = FALSE;
      break;
    }
    counts->events++;
    const Tensorflow__Profiler__XEventMetadata *m = plane_meta(p, ev->metadata_id);
    fe_xevent_view v = {
      .plane = p,
      .line_name = name,
      .line_id = h.id,
      .line_timestamp_ns = h.timestamp_ns,
      .metadata_id = ev->metadata_id,
      .name = m ? m->name : "",
      .display_name = m ? m->display_name : "",
      .has_offset = ev->has_offset,
      .offset_ps = ev->has_offset ? ev->offset_ps : 0,
      .duration_ps = ev->duration_ps,
      .num_occurrences = ev->num_occurrences,
      .byte_offset = f.offset,
      .priv_event = ev,
      .priv_meta = m,
    };
    if (vis->event && !vis->event(user, &v, error))
      ok = FALSE;
  }
  if (e) {
    g_propagate_error(error, e);
    ok = FALSE;
  }
  g_free(name);
  return ok;
}

static gboolean plane_scan(const xp_cur *space, const xp_field *pf, const fe_xplane_visitor *vis,
                           void *user, xp_event *ev, fe_xplane_counts *counts, GError **error)
{
  xp_cur c = {pf->data, pf->data + pf->len, space->base, space->source};
  fe_xplane_plane p;
  plane_init(&p);
  gboolean ok = plane_metadata(&c, &p, counts, error);
  counts->planes++;
  if (ok && (!vis->plane || vis->plane(user, &p))) {
    c.p = pf->data;
    xp_field f;
    GError *e = NULL;
    while (ok && xp_next(&c, &f, &e))
      if (f.field == 3)
        ok = line_scan(&c, &f, &p, vis, user, ev, counts, error);
    if (e) {
      g_propagate_error(error, e);
      ok = FALSE;
    }
  }
  plane_clear(&p);
  return ok;
}

gboolean fe_xplane_scan(const fe_xplane_file *file, const fe_xplane_visitor *vis, void *user,
                        fe_xplane_counts *counts, GError **error)
{
  fe_xplane_counts local = {0};
  if (!counts)
    counts = &local;
  memset(counts, 0, sizeof *counts);
  /* An empty file maps to NULL (GLib does not map 0 bytes): scan an empty
   * buffer instead, since NULL + 0 is undefined in C. */
  static const guint8 empty[1];
  const guint8 *data = file->len ? file->data : empty;
  xp_cur c = {data, data + file->len, data, file->source};
  xp_event *ev = g_new(xp_event, 1);
  xp_field f;
  GError *e = NULL;
  gboolean ok = TRUE;
  while (ok && xp_next(&c, &f, &e)) {
    if (f.field == 1) {
      ok = xp_expect(&c, &f, 2, "XSpace.planes", error) &&
           plane_scan(&c, &f, vis, user, ev, counts, error);
    } else if (f.field >= 2 && f.field <= 4) {
      ok = xp_expect(&c, &f, 2, "XSpace string", error);
      if (ok && f.field == 4 && vis->hostname) {
        char *h = g_strndup((const char *) f.data, f.len);
        vis->hostname(user, h);
        g_free(h);
      }
    }
  }
  if (e) {
    g_propagate_error(error, e);
    ok = FALSE;
  }
  g_free(ev);
  return ok;
}
