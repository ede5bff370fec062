/* et_read.c: the Chakra .et reader (et_read_file), a hand-written
 * protobuf decoder over the frames et_input.c hands it, building the
 * compact graph through et_builder.
 *
 * Why by hand: decoding by hand avoids one heap allocation per node,
 * attribute and string that protobuf-c's unpack would make (the reader runs
 * over millions of nodes) and lets every error name the exact byte offset;
 * encoding by hand writes each frame straight from the graph into one
 * buffer, without building message structs and sizing them first (which
 * made protobuf-c's get_packed_size + pack a large share of a conversion).
 * The tests cross-check both against the protobuf-c code generated from
 * et_def.proto frame by frame: the decoder against protobuf-c's unpack, the
 * encoder byte for byte against protobuf-c's pack of the unpacked frame,
 * whose output is the canonical field-number-ordered encoding of the
 * reference serializer, so golden files round-trip byte for byte.
 */
#include "config.h"
#include "chakra/et_io_internal.h"

#include <string.h>

/* ---- protobuf wire decoding over a bounded frame ---- */

typedef struct {
  const uint8_t *p, *end;
} span;

static gboolean get_varint(span *s, uint64_t *out)
{
  uint64_t v = 0;
  for (int k = 0; k < 10; k++) {
    if (s->p == s->end)
      return FALSE;
    uint8_t byte = *s->p++;
    if (k == 9 && byte > 1)
      return FALSE;
    v |= (uint64_t)(byte & 0x7f) << (7 * k);
    if (!(byte & 0x80)) {
      *out = v;
      return TRUE;
    }
  }
  return FALSE;
}

static gboolean get_fixed(span *s, int bytes, uint64_t *out)
{
  if (s->end - s->p < bytes)
    return FALSE;
  uint64_t v = 0;
  for (int k = 0; k < bytes; k++)
    v |= (uint64_t)s->p[k] << (8 * k);
  s->p += bytes;
  *out = v;
  return TRUE;
}

static gboolean get_len(span *s, span *sub)
{
  uint64_t n;
  if (!get_varint(s, &n) || n > (uint64_t)(s->end - s->p))
    return FALSE;
  sub->p = s->p;
  sub->end = s->p + n;
  s->p += n;
  return TRUE;
}

static gboolean skip_field(span *s, unsigned wt)
{
  uint64_t v;
  span sub;
  switch (wt) {
  case 0: return get_varint(s, &v);
  case 1: return get_fixed(s, 8, &v);
  case 2: return get_len(s, &sub);
  case 5: return get_fixed(s, 4, &v);
  default: return FALSE; /* groups (3, 4) and 6, 7 are not used by Chakra */
  }
}

/* Decoding context of one frame, for error messages. */
typedef struct {
  const char *path;
  const uint8_t *frame;
  uint64_t frame_off;
  uint32_t frame_no;
  gboolean has_id;
  uint64_t id;
} frame_ctx;

static void frame_error(const frame_ctx *f, GError **error, const uint8_t *at, const char *fmt, ...)
  G_GNUC_PRINTF(4, 5);
static void frame_error(const frame_ctx *f, GError **error, const uint8_t *at, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  uint64_t off = f->frame_off + (uint64_t)(at - f->frame);
  if (f->frame_no == 0)
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s: byte %" G_GUINT64_FORMAT " (GlobalMetadata frame): %s",
                f->path, off, what);
  else if (f->has_id)
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE,
                "%s: byte %" G_GUINT64_FORMAT " (node frame %u, node id %" G_GUINT64_FORMAT "): %s",
                f->path, off, f->frame_no, f->id, what);
  else
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s: byte %" G_GUINT64_FORMAT " (node frame %u): %s",
                f->path, off, f->frame_no, what);
  g_free(what);
}

/* One decoded attribute value (the last oneof member present wins, as in
 * protobuf). */
typedef enum { AV_NONE, AV_INT, AV_FLOAT, AV_STRING, AV_INT_LIST, AV_OTHER_LIST } av_kind;

typedef struct {
  const uint8_t *name;
  size_t name_len;
  av_kind kind;
  unsigned field;     /* oneof field number */
  int64_t i;          /* AV_INT */
  gboolean big;       /* AV_INT: uint64 value above INT64_MAX */
  span str;           /* AV_STRING, AV_INT_LIST (list message body) */
} attr_val;

static gboolean decode_attr(const frame_ctx *f, span s, attr_val *a, GError **error)
{
  memset(a, 0, sizeof(*a));
  while (s.p < s.end) {
    const uint8_t *at = s.p;
    uint64_t tag, v;
    if (!get_varint(&s, &tag))
      goto bad;
    unsigned field = (unsigned)(tag >> 3), wt = (unsigned)(tag & 7);
    if (field == 1 && wt == 2) {
      span sub;
      if (!get_len(&s, &sub))
        goto bad;
      a->name = sub.p;
      a->name_len = (size_t)(sub.end - sub.p);
      continue;
    }
    if (field < 3 || field > 32) {
      if (!skip_field(&s, wt))
        goto bad;
      continue;
    }
    a->field = field;
    a->big = FALSE;
    if (field % 2 == 0) { /* lists */
      if (wt != 2 || !get_len(&s, &a->str))
        goto bad;
      a->kind = (field <= 18) ? AV_INT_LIST : AV_OTHER_LIST;
      continue;
    }
    switch (field) {
    case 3: case 5: /* double, float */
      if (wt != (field == 3 ? 1u : 5u) || !get_fixed(&s, field == 3 ? 8 : 4, &v))
        goto bad;
      a->kind = AV_FLOAT;
      break;
    case 29: case 31: /* string, bytes */
      if (wt != 2 || !get_len(&s, &a->str))
        goto bad;
      a->kind = AV_STRING;
      break;
    case 19: case 23: /* fixed32, sfixed32 */
      if (wt != 5 || !get_fixed(&s, 4, &v))
        goto bad;
      a->kind = AV_INT;
      a->i = field == 19 ? (int64_t)(uint32_t)v : (int64_t)(int32_t)(uint32_t)v;
      break;
    case 21: case 25: /* fixed64, sfixed64 */
      if (wt != 1 || !get_fixed(&s, 8, &v))
        goto bad;
      a->kind = AV_INT;
      a->i = (int64_t)v;
      a->big = field == 21 && v > INT64_MAX;
      break;
    default: /* varint kinds: 7 int32, 9 int64, 11 uint32, 13 uint64, 15 sint32, 17 sint64, 27 bool */
      if (wt != 0 || !get_varint(&s, &v))
        goto bad;
      a->kind = AV_INT;
      switch (field) {
      case 7: a->i = (int32_t)(uint32_t)v; break;
      case 11: a->i = (uint32_t)v; break;
      case 13: a->i = (int64_t)v; a->big = v > INT64_MAX; break;
      case 15: a->i = (int32_t)(((uint32_t)v >> 1) ^ -((uint32_t)v & 1)); break;
      case 17: a->i = (int64_t)((v >> 1) ^ -(v & 1)); break;
      case 27: a->i = v != 0; break;
      default: a->i = (int64_t)v; break;
      }
      break;
    }
    continue;
  bad:
    frame_error(f, error, at, "malformed attribute field (bad varint, wire type or length)");
    return FALSE;
  }
  return TRUE;
}

static gboolean attr_is(const attr_val *a, const char *name)
{
  size_t n = strlen(name);
  return a->name_len == n && memcmp(a->name, name, n) == 0;
}

/* Everything wisp keeps from one Node frame. */
typedef struct {
  uint64_t id;
  span name;
  uint64_t type;
  GArray *ctrl, *data, *splits; /* uint64_t */
  uint64_t start_us, dur_us;
  gboolean has_cpu, cpu, has_ctype, has_size, has_pg, has_src, has_dst, has_tag, has_root;
  gboolean has_dur_ps, has_start_ps, has_num_ops, has_tsize, has_splits;
  gboolean delay, replay;  /* wisp_delay / wisp_replay: ET_FLAG_DELAY / ET_FLAG_REPLAY */
  gboolean has_buffer, has_alloc; /* wisp_buffer / wisp_alloc_ps */
  int64_t two_hop, two_hop_ppm;  /* wisp_two_hop / wisp_two_hop_ppm (0 when absent) */
  uint64_t buffer;
  int64_t alloc_ps;
  int64_t ctype, size, src, dst, tag, root, dur_ps, start_ps, num_ops;
  uint64_t tsize;
  span pg;
  span module;             /* wisp_module (a string; empty when absent) */
  int64_t pg_int;
  gboolean pg_is_int;
  uint64_t dropped;
  int n_comm_attrs;
} node_rec;

static const char *av_kind_name(const attr_val *a)
{
  switch (a->kind) {
  case AV_INT: return "an integer";
  case AV_FLOAT: return "a floating-point value";
  case AV_STRING: return "a string";
  case AV_INT_LIST: case AV_OTHER_LIST: return "a list";
  default: return "no value";
  }
}

static gboolean want_int(const frame_ctx *f, const attr_val *a, const uint8_t *at, int64_t lo, int64_t hi,
                         int64_t *out, GError **error)
{
  if (a->kind != AV_INT) {
    frame_error(f, error, at, "attribute \"%.*s\" must be an integer, found %s", (int)a->name_len, a->name,
                av_kind_name(a));
    return FALSE;
  }
  if (a->big || a->i < lo || a->i > hi) {
    frame_error(f, error, at, "attribute \"%.*s\" = %s%" G_GINT64_FORMAT " is out of range [%" G_GINT64_FORMAT
                ", %" G_GINT64_FORMAT "]", (int)a->name_len, a->name, a->big ? "(unsigned) " : "", a->i, lo, hi);
    return FALSE;
  }
  *out = a->i;
  return TRUE;
}

static gboolean decode_int_list(const frame_ctx *f, const attr_val *a, const uint8_t *at, GArray *out,
                                GError **error)
{
  if (a->kind != AV_INT_LIST || (a->field != 10 && a->field != 14)) {
    frame_error(f, error, at, "attribute \"%.*s\" must be an int64_list or uint64_list, found %s",
                (int)a->name_len, a->name, av_kind_name(a));
    return FALSE;
  }
  g_array_set_size(out, 0);
  span s = a->str;
  while (s.p < s.end) {
    uint64_t tag, v;
    if (!get_varint(&s, &tag))
      goto bad;
    if (tag == ((1u << 3) | 2)) {
      span sub;
      if (!get_len(&s, &sub))
        goto bad;
      while (sub.p < sub.end) {
        if (!get_varint(&sub, &v))
          goto bad;
        if (v > WISP_MAX_BYTES)
          goto neg;
        g_array_append_val(out, v);
      }
    } else if (tag == ((1u << 3) | 0)) {
      if (!get_varint(&s, &v))
        goto bad;
      if (v > WISP_MAX_BYTES)
        goto neg;
      g_array_append_val(out, v);
    } else if (!skip_field(&s, (unsigned)(tag & 7))) {
      goto bad;
    }
  }
  return TRUE;
bad:
  frame_error(f, error, at, "malformed list in attribute \"%.*s\"", (int)a->name_len, a->name);
  return FALSE;
neg:
  frame_error(f, error, at, "attribute \"%.*s\" holds a negative size or one above 2^50 bytes (1 PiB, the "
              "largest wisp represents)", (int)a->name_len, a->name);
  return FALSE;
}

/* Applies one attribute to the node record. */
static gboolean node_attr(const frame_ctx *f, node_rec *n, const attr_val *a, const uint8_t *at, GError **error)
{
  if (attr_is(a, "is_cpu_op")) {
    int64_t v;
    if (!want_int(f, a, at, 0, 1, &v, error))
      return FALSE;
    n->has_cpu = TRUE, n->cpu = v != 0;
  } else if (attr_is(a, "comm_type")) {
    if (!want_int(f, a, at, 0, ET_COLL_BARRIER, &n->ctype, error))
      return FALSE;
    n->has_ctype = TRUE, n->n_comm_attrs++;
  } else if (attr_is(a, "comm_size")) {
    if (!want_int(f, a, at, 0, (int64_t)WISP_MAX_BYTES, &n->size, error)) /* 1 PiB: see wisp_util.h */
      return FALSE;
    n->has_size = TRUE, n->n_comm_attrs++;
  } else if (attr_is(a, "pg_name")) {
    if (a->kind == AV_STRING) {
      n->pg = a->str, n->pg_is_int = FALSE;
    } else if (a->kind == AV_INT && !a->big) {
      n->pg_int = a->i, n->pg_is_int = TRUE;
    } else {
      frame_error(f, error, at, "attribute \"pg_name\" must be a string, found %s", av_kind_name(a));
      return FALSE;
    }
    n->has_pg = TRUE, n->n_comm_attrs++;
  } else if (attr_is(a, "wisp_module")) {
    if (a->kind != AV_STRING) {
      frame_error(f, error, at, "attribute \"wisp_module\" must be a string, found %s", av_kind_name(a));
      return FALSE;
    }
    n->module = a->str;
  } else if (attr_is(a, "comm_src")) {
    if (!want_int(f, a, at, 0, INT32_MAX, &n->src, error))
      return FALSE;
    n->has_src = TRUE, n->n_comm_attrs++;
  } else if (attr_is(a, "comm_dst")) {
    if (!want_int(f, a, at, 0, INT32_MAX, &n->dst, error))
      return FALSE;
    n->has_dst = TRUE, n->n_comm_attrs++;
  } else if (attr_is(a, "comm_tag")) {
    if (!want_int(f, a, at, 0, INT32_MAX, &n->tag, error))
      return FALSE;
    n->has_tag = TRUE, n->n_comm_attrs++;
  } else if (attr_is(a, "wisp_root")) {
    if (!want_int(f, a, at, 0, INT32_MAX, &n->root, error))
      return FALSE;
    n->has_root = TRUE, n->n_comm_attrs++;
  } else if (attr_is(a, "wisp_split_sizes")) {
    if (!decode_int_list(f, a, at, n->splits, error))
      return FALSE;
    n->has_splits = TRUE, n->n_comm_attrs++;
  } else if (attr_is(a, "wisp_buffer")) {
    /* An opaque unsigned id: uint64 values above INT64_MAX are accepted,
     * negative signed ones are not. */
    if (a->kind != AV_INT || (!a->big && a->i < 0)) {
      frame_error(f, error, at, "attribute \"wisp_buffer\" must be an unsigned 64-bit buffer id, found %s",
                  a->kind == AV_INT ? "a negative value" : av_kind_name(a));
      return FALSE;
    }
    n->buffer = (uint64_t)a->i, n->has_buffer = TRUE, n->n_comm_attrs++;
  } else if (attr_is(a, "wisp_two_hop")) {
    if (!want_int(f, a, at, 0, 2, &n->two_hop, error))
      return FALSE;
    n->n_comm_attrs++;
  } else if (attr_is(a, "wisp_two_hop_ppm")) {
    if (!want_int(f, a, at, 0, 1000000, &n->two_hop_ppm, error))
      return FALSE;
    n->n_comm_attrs++;
  } else if (attr_is(a, "wisp_alloc_ps")) {
    if (!want_int(f, a, at, INT64_MIN, INT64_MAX, &n->alloc_ps, error))
      return FALSE;
    n->has_alloc = TRUE, n->n_comm_attrs++;
  } else if (attr_is(a, "wisp_delay")) {
    int64_t v;
    if (!want_int(f, a, at, 0, 1, &v, error))
      return FALSE;
    n->delay = v != 0;
  } else if (attr_is(a, "wisp_replay")) {
    int64_t v;
    if (!want_int(f, a, at, 0, 1, &v, error))
      return FALSE;
    n->replay = v != 0;
  } else if (attr_is(a, "wisp_duration_ps")) {
    if (!want_int(f, a, at, 0, INT64_MAX, &n->dur_ps, error))
      return FALSE;
    n->has_dur_ps = TRUE;
  } else if (attr_is(a, "wisp_start_ps")) {
    if (!want_int(f, a, at, INT64_MIN, INT64_MAX, &n->start_ps, error))
      return FALSE;
    n->has_start_ps = TRUE;
  } else if (attr_is(a, "num_ops")) {
    if (!want_int(f, a, at, INT64_MIN, INT64_MAX, &n->num_ops, error))
      return FALSE;
    n->has_num_ops = TRUE;
  } else if (attr_is(a, "tensor_size")) {
    int64_t v;
    if (!want_int(f, a, at, 0, INT64_MAX, &v, error))
      return FALSE;
    n->tsize = (uint64_t)v, n->has_tsize = TRUE;
  } else {
    /* comm_priority, involved_dim and everything unknown. */
    n->dropped++;
  }
  return TRUE;
}

static gboolean get_deps(span *s, unsigned wt, GArray *out)
{
  uint64_t v;
  if (wt == 0) {
    if (!get_varint(s, &v))
      return FALSE;
    g_array_append_val(out, v);
    return TRUE;
  }
  span sub;
  if (wt != 2 || !get_len(s, &sub))
    return FALSE;
  while (sub.p < sub.end) {
    if (!get_varint(&sub, &v))
      return FALSE;
    g_array_append_val(out, v);
  }
  return TRUE;
}

static gboolean decode_node(frame_ctx *f, span s, node_rec *n, GError **error)
{
  GArray *ctrl = n->ctrl, *data = n->data, *splits = n->splits;
  memset(n, 0, sizeof(*n));
  n->ctrl = ctrl, n->data = data, n->splits = splits;
  g_array_set_size(ctrl, 0);
  g_array_set_size(data, 0);
  g_array_set_size(splits, 0);
  while (s.p < s.end) {
    const uint8_t *at = s.p;
    uint64_t tag;
    if (!get_varint(&s, &tag))
      goto bad;
    unsigned field = (unsigned)(tag >> 3), wt = (unsigned)(tag & 7);
    gboolean ok;
    switch (field) {
    case 1:
      ok = wt == 0 && get_varint(&s, &n->id);
      f->has_id = ok, f->id = n->id;
      break;
    case 2: ok = wt == 2 && get_len(&s, &n->name); break;
    case 3: ok = wt == 0 && get_varint(&s, &n->type); break;
    case 4: ok = get_deps(&s, wt, ctrl); break;
    case 5: ok = get_deps(&s, wt, data); break;
    case 6: ok = wt == 0 && get_varint(&s, &n->start_us); break;
    case 7: ok = wt == 0 && get_varint(&s, &n->dur_us); break;
    case 10: {
      span sub;
      attr_val a;
      if (wt != 2 || !get_len(&s, &sub))
        goto bad;
      if (!decode_attr(f, sub, &a, error) || !node_attr(f, n, &a, at, error))
        return FALSE;
      ok = TRUE;
      break;
    }
    default: /* inputs, outputs, unknown fields */
      if (field == 0)
        goto bad;
      ok = skip_field(&s, wt);
      n->dropped++;
      break;
    }
    if (!ok) {
    bad:
      frame_error(f, error, at, "malformed Node field (bad varint, wire type or length)");
      return FALSE;
    }
  }
  return TRUE;
}

/* GlobalMetadata: version (field 1) and the attributes wisp writes (field
 * 2: wisp_compute_slots, wisp_measured_step_ps, wisp_measured_start_ps);
 * other attributes and fields are counted as dropped. */
static gboolean decode_metadata(frame_ctx *f, span s, GString *version, uint32_t *compute_slots,
                                sim_time_ps *measured_step, sim_time_ps *measured_start, uint64_t *dropped,
                                GError **error)
{
  g_string_truncate(version, 0);
  *compute_slots = 0;
  *measured_step = *measured_start = -1;
  while (s.p < s.end) {
    const uint8_t *at = s.p;
    uint64_t tag;
    span sub;
    if (!get_varint(&s, &tag))
      goto bad;
    unsigned field = (unsigned)(tag >> 3), wt = (unsigned)(tag & 7);
    if (field == 1 && wt == 2) {
      if (!get_len(&s, &sub))
        goto bad;
      g_string_truncate(version, 0);
      g_string_append_len(version, (const char *)sub.p, sub.end - sub.p);
    } else if (field == 2 && wt == 2) {
      attr_val a;
      int64_t v;
      if (!get_len(&s, &sub))
        goto bad;
      if (!decode_attr(f, sub, &a, error))
        return FALSE;
      if (attr_is(&a, "wisp_compute_slots")) {
        if (!want_int(f, &a, at, 1, ET_MAX_COMPUTE_SLOTS, &v, error))
          return FALSE;
        *compute_slots = (uint32_t)v;
      } else if (attr_is(&a, "wisp_measured_step_ps") || attr_is(&a, "wisp_measured_start_ps")) {
        if (!want_int(f, &a, at, 0, SIM_TIME_MAX, &v, error))
          return FALSE;
        *(attr_is(&a, "wisp_measured_step_ps") ? measured_step : measured_start) = (sim_time_ps)v;
      } else {
        (*dropped)++;
      }
    } else {
      if (field == 0 || !skip_field(&s, wt))
        goto bad;
      (*dropped)++;
    }
    continue;
  bad:
    frame_error(f, error, at, "malformed GlobalMetadata field (bad varint, wire type or length)");
    return FALSE;
  }
  return TRUE;
}

/* Copies a span into scratch as a C string; NUL bytes become '?'. */
static const char *span_cstr(GString *scratch, span s)
{
  g_string_truncate(scratch, 0);
  g_string_append_len(scratch, (const char *)s.p, s.end - s.p);
  for (gsize k = 0; k < scratch->len; k++)
    if (scratch->str[k] == '\0')
      scratch->str[k] = '?';
  return scratch->str;
}

/* Turns one decoded node into builder calls, applying the reader rules. */
static gboolean add_node(et_builder *b, frame_ctx *f, const node_rec *n, const uint8_t *frame_start,
                         GString *name_buf, GString *pg_buf, uint64_t *replay, uint64_t *dropped, GError **error)
{
  if (n->type > ET_NODE_COMM_COLL) {
    frame_error(f, error, frame_start, "unknown node type %" G_GUINT64_FORMAT " (Chakra defines 0..7)", n->type);
    return FALSE;
  }
  sim_time_ps dur;
  if (n->has_dur_ps) {
    dur = n->dur_ps;
  } else {
    if (n->dur_us > (uint64_t)(INT64_MAX / SIM_PS_PER_US)) {
      frame_error(f, error, frame_start, "duration_micros %" G_GUINT64_FORMAT " is too large", n->dur_us);
      return FALSE;
    }
    dur = wisp_ps_from_us_int((int64_t)n->dur_us);
  }
  et_node_type type = (et_node_type)n->type;
  /* A collective with wisp_delay is an idle gap written as a replayed
   * BROADCAST for ASTRA-sim's communication slot (convert --for astra-sim,
   * chakra/et_astra.h); for wisp it is a gap like any other. */
  if (n->delay && type == ET_NODE_COMM_COLL)
    type = ET_NODE_COMP;
  gboolean is_comm = type == ET_NODE_COMM_COLL || type == ET_NODE_COMM_SEND || type == ET_NODE_COMM_RECV;
  uint8_t flags = n->cpu ? ET_FLAG_CPU_OP : 0;
  if (n->delay && type == ET_NODE_COMP)
    flags |= ET_FLAG_DELAY;
  if (is_comm && (n->cpu || n->replay || (type == ET_NODE_COMM_COLL && !n->has_ctype))) {
    flags |= ET_FLAG_REPLAY;
    (*replay)++;
  }
  *dropped += n->dropped;
  uint32_t idx = et_builder_add_node(b, n->id, type, span_cstr(name_buf, n->name), dur, flags);
  if (idx == ET_NONE)
    return TRUE; /* limit error, reported by finish */
  if (n->has_start_ps) {
    et_builder_set_start(b, idx, n->start_ps);
  } else if (n->start_us > 0) {
    if (n->start_us > (uint64_t)(INT64_MAX / SIM_PS_PER_US)) {
      frame_error(f, error, frame_start, "start_time_micros %" G_GUINT64_FORMAT " is too large", n->start_us);
      return FALSE;
    }
    et_builder_set_start(b, idx, wisp_ps_from_us_int((int64_t)n->start_us));
  }
  if ((n->has_num_ops || n->has_tsize) && (n->num_ops != 0 || n->has_tsize || type != ET_NODE_COMP))
    et_builder_set_comp_attrs(b, idx, n->num_ops, n->has_tsize, n->tsize);
  if (n->module.p != n->module.end)
    et_builder_set_module(b, idx, span_cstr(name_buf, n->module));
  gboolean replay_node = (flags & ET_FLAG_REPLAY) != 0;
  if (is_comm && (n->n_comm_attrs > 0 || !replay_node)) {
    et_comm c = {.bytes = (uint64_t)n->size, .src = -1, .dst = -1, .tag = -1, .root = -1,
                 .coll = ET_COLL_NONE};
    if (type == ET_NODE_COMM_COLL && n->has_ctype)
      c.coll = (uint8_t)n->ctype;
    if (type == ET_NODE_COMM_COLL && !replay_node && !n->has_size && c.coll != ET_COLL_BARRIER) {
      frame_error(f, error, frame_start, "COMM_COLL_NODE %s has no comm_size; add the size in bytes",
                  et_coll_type_name(c.coll));
      return FALSE;
    }
    if (type != ET_NODE_COMM_COLL && n->has_ctype)
      (*dropped)++;
    if (type != ET_NODE_COMM_COLL && !replay_node) {
      const char *missing = !n->has_size ? "comm_size"
                            : !n->has_tag ? "comm_tag"
                            : (type == ET_NODE_COMM_SEND && !n->has_dst) ? "comm_dst"
                            : (type == ET_NODE_COMM_RECV && !n->has_src) ? "comm_src" : NULL;
      if (missing != NULL) {
        frame_error(f, error, frame_start, "%s has no %s; point-to-point nodes need it",
                    et_node_type_name(type), missing);
        return FALSE;
      }
    }
    if (n->has_src)
      c.src = (int32_t)n->src;
    if (n->has_dst)
      c.dst = (int32_t)n->dst;
    if (n->has_tag)
      c.tag = (int32_t)n->tag;
    if (n->has_root)
      c.root = (int32_t)n->root;
    const char *pg = NULL;
    if (n->has_pg) {
      if (n->pg_is_int) {
        g_string_printf(pg_buf, "%" G_GINT64_FORMAT, n->pg_int);
        pg = pg_buf->str;
      } else {
        pg = span_cstr(pg_buf, n->pg);
      }
    }
    const uint64_t *sp = NULL;
    uint32_t n_sp = 0;
    if (n->has_splits) {
      if (type != ET_NODE_COMM_COLL || c.coll != ET_COLL_ALL_TO_ALL) {
        frame_error(f, error, frame_start, "wisp_split_sizes is only valid on an ALL_TO_ALL COMM_COLL_NODE");
        return FALSE;
      }
      if (n->splits->len == 0 || n->splits->len > INT32_MAX) {
        frame_error(f, error, frame_start, "wisp_split_sizes must hold one size per rank");
        return FALSE;
      }
      c.coll = ET_COLL_ALL_TO_ALLV;
      sp = (const uint64_t *)n->splits->data;
      n_sp = n->splits->len;
    }
    if (c.coll == ET_COLL_ALL_TO_ALLV && n->two_hop != 0) {
      c.two_hop = (uint8_t)n->two_hop;
      c.two_hop_ppm = n->two_hop_ppm > 0 ? (uint32_t)n->two_hop_ppm : 1000000u;
    }
    et_builder_set_comm(b, idx, &c, pg, sp, n_sp);
    if (n->has_buffer || n->has_alloc)
      et_builder_set_buffer(b, idx, n->buffer, n->has_alloc, n->alloc_ps);
  } else if (!is_comm) {
    *dropped += (uint64_t)n->n_comm_attrs;
  }
  for (guint k = 0; k < n->data->len; k++)
    et_builder_add_dep(b, idx, g_array_index(n->data, uint64_t, k), TRUE, FALSE);
  for (guint k = 0; k < n->ctrl->len; k++)
    et_builder_add_dep(b, idx, g_array_index(n->ctrl, uint64_t, k), FALSE, TRUE);
  return TRUE;
}

et_graph *et_read_file(const char *path, unsigned build_flags, GError **error)
{
  g_return_val_if_fail(path != NULL, NULL);
  et_input in;
  if (!et_input_open(&in, path, error))
    return NULL;
  et_builder *b = et_builder_new(path);
  GString *version = g_string_new(NULL), *name_buf = g_string_new(NULL), *pg_buf = g_string_new(NULL);
  sim_time_ps meas_step = -1, meas_start = -1;
  node_rec n = {0};
  n.ctrl = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  n.data = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  n.splits = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  uint64_t dropped = 0, replay = 0;
  gboolean ok = TRUE;
  et_graph *g = NULL;
  frame_ctx f = {.path = path};
  for (uint32_t frame_no = 0;; frame_no++) {
    uint64_t off = in.buf_off + in.pos;
    uint32_t len;
    int r = et_input_frame_len(&in, &len, error);
    if (r < 0) {
      ok = FALSE;
      break;
    }
    if (r == 0) {
      if (frame_no == 0) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE,
                    "%s: the file is empty; a Chakra .et file starts with a GlobalMetadata frame", path);
        ok = FALSE;
      }
      break;
    }
    if (len == 0) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE,
                  "%s: byte %" G_GUINT64_FORMAT ": empty frame (Chakra's Python reader stops at an empty frame, "
                  "FeederV3 reads it as a node with id 0); remove it", path, off);
      ok = FALSE;
      break;
    }
    if (!et_input_need(&in, len, off, error)) {
      ok = FALSE;
      break;
    }
    span s = {in.buf + in.pos, in.buf + in.pos + len};
    f.frame = s.p;
    f.frame_off = in.buf_off + in.pos;
    f.frame_no = frame_no;
    f.has_id = FALSE;
    in.pos += len;
    if (frame_no == 0) {
      uint32_t slots;
      ok = decode_metadata(&f, s, version, &slots, &meas_step, &meas_start, &dropped, error);
      et_builder_set_version(b, version->str);
      et_builder_set_compute_slots(b, slots);
    } else {
      ok = decode_node(&f, s, &n, error) &&
           add_node(b, &f, &n, s.p, name_buf, pg_buf, &replay, &dropped, error);
    }
    if (!ok)
      break;
  }
  et_input_close(&in);
  g_string_free(version, TRUE);
  g_string_free(name_buf, TRUE);
  g_string_free(pg_buf, TRUE);
  g_array_free(n.ctrl, TRUE);
  g_array_free(n.data, TRUE);
  g_array_free(n.splits, TRUE);
  if (!ok) {
    et_builder_free(b);
    return NULL;
  }
  g = et_builder_finish(b, build_flags, error);
  if (g != NULL) {
    g->measured_step_ps = meas_step;
    g->measured_start_ps = meas_start;
  }
  if (g != NULL) {
    g->dropped_attrs += dropped;
    g->replay_comm_nodes += replay;
  }
  return g;
}
