/* et_io.c: Chakra .et reader and writer (both hand-written protobuf
 * codecs) and workload loading/saving.
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
#include "chakra/et_io.h"
#include "chakra/et_share.h"
#include "chakra/et_view.h"
#include "common/wisp_par.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <glib/gstdio.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define READ_CHUNK (256u << 10)

/* ---- buffered input over zlib (transparent for plain files) ---- */

typedef struct {
  const char *path;
  gzFile gz;
  uint8_t *buf;
  size_t cap, pos, end;
  uint64_t buf_off;    /* offset of buf[0] in the (uncompressed) stream */
  uint64_t file_size;  /* size of a plain file; 0 for gzip (unknown) */
  gboolean is_gzip;
  gboolean eof;
} et_input;

static gboolean input_open(et_input *in, const char *path, GError **error)
{
  memset(in, 0, sizeof(*in));
  in->path = path;
  wisp_input_note(path); /* no output may replace it */
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot open: %s", path, g_strerror(e));
    return FALSE;
  }
  struct stat st;
  uint8_t magic[2] = {0, 0};
  ssize_t got = pread(fd, magic, 2, 0);
  if (fstat(fd, &st) != 0 || got < 0) {
    int e = errno;
    close(fd);
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot read: %s", path, g_strerror(e));
    return FALSE;
  }
  in->is_gzip = got == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  in->file_size = in->is_gzip ? 0 : (uint64_t)st.st_size;
  in->gz = gzdopen(fd, "rb");
  if (in->gz == NULL) {
    close(fd);
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot open: out of memory", path);
    return FALSE;
  }
  gzbuffer(in->gz, READ_CHUNK);
  in->cap = READ_CHUNK;
  in->buf = g_malloc(in->cap);
  return TRUE;
}

static void input_close(et_input *in)
{
  if (in->gz)
    gzclose(in->gz);
  g_free(in->buf);
  in->gz = NULL;
  in->buf = NULL;
}

/* Reads more bytes after in->end; returns the count, 0 at the end, -1 on
 * error (set).  Moves unread bytes to the front first. */
static gssize input_fill(et_input *in, GError **error)
{
  if (in->eof)
    return 0;
  if (in->pos > 0) {
    memmove(in->buf, in->buf + in->pos, in->end - in->pos);
    in->buf_off += in->pos;
    in->end -= in->pos;
    in->pos = 0;
  }
  if (in->end == in->cap)
    return 0;
  size_t want = MIN(in->cap - in->end, (size_t)INT_MAX);
  int n = gzread(in->gz, in->buf + in->end, (unsigned)want);
  if (n < 0) {
    int errnum = 0;
    const char *msg = gzerror(in->gz, &errnum), *colon = strstr(msg, ": ");
    if (msg[0] == '<' && colon != NULL) /* zlib's "<fd:N>: " prefix */
      msg = colon + 2;
    z_off_t at = gztell(in->gz); /* bytes zlib delivered, this failed call's included */
    g_set_error(error, WISP_ERROR, errnum == Z_ERRNO ? WISP_ERROR_IO : WISP_ERROR_PARSE,
                "%s: near uncompressed byte %" G_GUINT64_FORMAT ": %s", in->path,
                MAX(in->buf_off + in->end, at > 0 ? (uint64_t)at : 0), errnum == Z_ERRNO ? g_strerror(errno) : msg);
    return -1;
  }
  if (n == 0) {
    in->eof = TRUE;
    int errnum = 0;
    const char *msg = gzerror(in->gz, &errnum);
    if (errnum != Z_OK) {
      /* zlib prefixes its message with "<fd:N>: ". */
      const char *colon = strstr(msg, ": ");
      if (msg[0] == '<' && colon != NULL)
        msg = colon + 2;
      g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE,
                  "%s: the gzip stream is damaged or truncated after uncompressed byte %" G_GUINT64_FORMAT
                  " (%s)", in->path, in->buf_off + in->end, msg);
      return -1;
    }
    return 0;
  }
  in->end += (size_t)n;
  return n;
}

/* Reads a frame length.  Returns 1 with *len set, 0 at a clean end of
 * input, -1 on error. */
static int input_frame_len(et_input *in, uint32_t *len, GError **error)
{
  uint64_t v = 0;
  uint64_t start = in->buf_off + in->pos;
  for (int k = 0;; k++) {
    if (in->pos == in->end) {
      gssize n = input_fill(in, error);
      if (n < 0)
        return -1;
      if (n == 0) {
        if (k == 0)
          return 0;
        g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE,
                    "%s: byte %" G_GUINT64_FORMAT ": the file ends inside a frame length prefix (truncated file)",
                    in->path, start);
        return -1;
      }
    }
    uint8_t byte = in->buf[in->pos++];
    v |= (uint64_t)(byte & 0x7f) << (7 * k);
    if (!(byte & 0x80))
      break;
    if (k == 4) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE,
                  "%s: byte %" G_GUINT64_FORMAT ": bad frame length prefix (a varint32 has at most 5 bytes); "
                  "this is not a Chakra .et file or it is damaged",
                  in->path, start);
      return -1;
    }
  }
  if (v > UINT32_MAX) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE,
                "%s: byte %" G_GUINT64_FORMAT ": frame length %" G_GUINT64_FORMAT " does not fit in 32 bits",
                in->path, start, v);
    return -1;
  }
  *len = (uint32_t)v;
  return 1;
}

/* Makes len bytes available at in->buf + in->pos, growing the buffer only as
 * data arrives (so a lying length prefix costs at most the real input). */
static gboolean input_need(et_input *in, uint32_t len, uint64_t frame_off, GError **error)
{
  if (len > ET_IO_MAX_FRAME) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_LIMIT,
                "%s: byte %" G_GUINT64_FORMAT ": frame length %u exceeds wisp's limit of %u bytes; "
                "the file is damaged or not a Chakra .et file",
                in->path, frame_off, len, ET_IO_MAX_FRAME);
    return FALSE;
  }
  if (in->file_size > 0 && in->buf_off + in->pos + len > in->file_size) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE,
                "%s: byte %" G_GUINT64_FORMAT ": a frame of %u bytes extends %" G_GUINT64_FORMAT
                " bytes beyond the end of the file (%" G_GUINT64_FORMAT " bytes): truncated or damaged file",
                in->path, frame_off, len, in->buf_off + in->pos + len - in->file_size, in->file_size);
    return FALSE;
  }
  while (in->end - in->pos < len) {
    if (in->pos == 0 && in->end == in->cap) {
      in->cap = MIN(in->cap * 2, (size_t)len + 16);
      in->buf = g_realloc(in->buf, in->cap);
    }
    gssize n = input_fill(in, error);
    if (n < 0)
      return FALSE;
    if (n == 0 && in->end < in->cap) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE,
                  "%s: byte %" G_GUINT64_FORMAT ": the file ends %" G_GUINT64_FORMAT
                  " bytes into a frame of %u bytes (truncated file)",
                  in->path, frame_off, (uint64_t)(in->end - in->pos), len);
      return FALSE;
    }
  }
  return TRUE;
}

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
  if (n->has_num_ops || n->has_tsize) {
    if (n->num_ops != 0 || n->has_tsize || type != ET_NODE_COMP)
      et_builder_set_comp_attrs(b, idx, n->num_ops, n->has_tsize, n->tsize);
  }
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
  if (!input_open(&in, path, error))
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
    int r = input_frame_len(&in, &len, error);
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
    if (!input_need(&in, len, off, error)) {
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
  input_close(&in);
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

/* ---- writer: a hand-written protobuf encoder ----
 *
 * Each frame is encoded straight from the graph into one growable byte
 * buffer per file and written out in batches of about WRITE_BATCH bytes: no
 * message structs, no per-node allocation and no separate sizing pass.  The
 * bytes are those protobuf-c produces for et_def.proto (proto3): fields in
 * field-number order; id, name, type, start_time_micros and
 * duration_micros omitted when zero or empty; ctrl_deps / data_deps packed
 * and omitted when empty; an attribute's oneof value always present, even
 * when 0 or false; int32 and int64 values sign-extended to 64 bits (a
 * negative one takes 10 bytes); every length a minimal varint.  The tests
 * check each frame against protobuf-c (unpack, re-pack, compare bytes). */

#define WRITE_BATCH (256u << 10)

/* Wire types and the tags written (field number << 3 | wire type). */
enum { WT_VARINT = 0, WT_LEN = 2 };
#define TAG(field, wt) (((uint32_t)(field) << 3) | (wt))
enum {
  NODE_ID = 1, NODE_NAME = 2, NODE_TYPE = 3, NODE_CTRL_DEPS = 4, NODE_DATA_DEPS = 5, NODE_START = 6,
  NODE_DURATION = 7, NODE_ATTR = 10,
  ATTR_NAME = 1, ATTR_INT32 = 7, ATTR_INT64 = 9, ATTR_INT64_LIST = 10, ATTR_UINT64 = 13, ATTR_BOOL = 27,
  ATTR_STRING = 29,
  META_VERSION = 1, META_ATTR = 2, LIST_VALUES = 1,
};

static inline size_t varint_size(uint64_t v)
{
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

/* Writes v as a varint at p (at most 10 bytes) and returns the end. */
static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
  while (v >= 0x80) {
    *p++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *p++ = (uint8_t)v;
  return p;
}

/* The length and the len bytes at s (a length-delimited value's body). */
static inline uint8_t *put_len_bytes(uint8_t *p, const void *s, size_t len)
{
  p = put_varint(p, len);
  memcpy(p, s, len);
  return p + len;
}

static inline uint8_t *put_bytes(uint8_t *p, uint32_t tag, const void *s, size_t len)
{
  return put_len_bytes(put_varint(p, tag), s, len);
}

/* A length-delimited body whose size is not known in advance starts one
 * byte after its length slot (len_open); len_close writes the minimal varint
 * length there, moving the body up by the extra bytes when it is 128 bytes
 * or longer (the caller reserved room for that).  Returns the new end. */
static inline uint8_t *len_open(uint8_t *p)
{
  return p + 1;
}

static inline uint8_t *len_close(uint8_t *body, uint8_t *end)
{
  size_t n = (size_t)(end - body);
  if (n < 0x80) {
    body[-1] = (uint8_t)n;
    return end;
  }
  size_t extra = varint_size(n) - 1;
  memmove(body + extra, body, n);
  put_varint(body - 1, n);
  return end + extra;
}

/* One attribute entry of a message whose attr field is `container`
 * (Node.attr or GlobalMetadata.attr): tag, length, name, then the value's
 * tag (the value itself follows).  value_len counts the value's tag and
 * bytes. */
static inline uint8_t *put_attr_head_in(uint8_t *p, uint32_t container, const char *name, size_t name_len,
                                        uint32_t value_tag, size_t value_len)
{
  p = put_varint(p, TAG(container, WT_LEN));
  p = put_varint(p, 1 + varint_size(name_len) + name_len + value_len);
  p = put_bytes(p, TAG(ATTR_NAME, WT_LEN), name, name_len);
  return put_varint(p, value_tag);
}
#define put_attr_head(p, name, name_len, value_tag, value_len) \
  put_attr_head_in(p, NODE_ATTR, name, name_len, value_tag, value_len)

/* Bytes put_attr_varint_in writes for an attribute named name_len bytes. */
static inline size_t attr_varint_size(size_t name_len, uint32_t field, uint64_t v)
{
  size_t body = 1 + varint_size(name_len) + name_len + varint_size(TAG(field, WT_VARINT)) + varint_size(v);
  return 1 + varint_size(body) + body;
}

/* Integer attributes: int64_val / uint64_val / int32_val / bool_val.  The
 * names are literals, so sizeof gives their length at compile time. */
static inline uint8_t *put_attr_varint_in(uint8_t *p, uint32_t container, const char *name, size_t name_len,
                                          uint32_t field, uint64_t v)
{
  uint32_t tag = TAG(field, WT_VARINT);
  p = put_attr_head_in(p, container, name, name_len, tag, varint_size(tag) + varint_size(v));
  return put_varint(p, v);
}
#define put_attr_varint(p, name, name_len, field, v) put_attr_varint_in(p, NODE_ATTR, name, name_len, field, v)
#define ATTR_I64(p, name, v) put_attr_varint(p, name, sizeof(name) - 1, ATTR_INT64, (uint64_t)(int64_t)(v))
#define ATTR_U64(p, name, v) put_attr_varint(p, name, sizeof(name) - 1, ATTR_UINT64, (uint64_t)(v))
#define ATTR_I32(p, name, v) put_attr_varint(p, name, sizeof(name) - 1, ATTR_INT32, (uint64_t)(int64_t)(int32_t)(v))
#define ATTR_BOOL(p, name, v) put_attr_varint(p, name, sizeof(name) - 1, ATTR_BOOL, (v) ? 1u : 0u)

static inline uint8_t *put_attr_string(uint8_t *p, const char *name, size_t name_len, const char *s, size_t len)
{
  uint32_t tag = TAG(ATTR_STRING, WT_LEN);
  p = put_attr_head(p, name, name_len, tag, varint_size(tag) + varint_size(len) + len);
  return put_len_bytes(p, s, len);
}

/* int64_list attribute holding the values as packed int64 (values above
 * INT64_MAX keep their bits, as the int64 cast does in protobuf-c). */
static inline uint8_t *put_attr_i64_list(uint8_t *p, const char *name, size_t name_len, const uint64_t *v,
                                         uint32_t n)
{
  size_t payload = 0;
  for (uint32_t j = 0; j < n; j++)
    payload += varint_size(v[j]);
  size_t list = n ? 1 + varint_size(payload) + payload : 0; /* Int64List body */
  uint32_t tag = TAG(ATTR_INT64_LIST, WT_LEN);
  p = put_attr_head(p, name, name_len, tag, varint_size(tag) + varint_size(list) + list);
  p = put_varint(p, list);
  if (n) {
    p = put_varint(p, TAG(LIST_VALUES, WT_LEN));
    p = put_varint(p, payload);
    for (uint32_t j = 0; j < n; j++)
      p = put_varint(p, v[j]);
  }
  return p;
}

/* Packed ctrl_deps (want = ET_EDGE_CTRL) or data_deps (ET_EDGE_DATA): the
 * ids of the parent entries carrying that bit, in parent_edges order;
 * nothing when there is none. */
static inline uint8_t *put_deps(uint8_t *p, const et_graph *g, const et_node *nd, uint32_t field, uint32_t want)
{
  uint8_t *tag_at = p;
  p = put_varint(p, TAG(field, WT_LEN));
  uint8_t *body = len_open(p), *q = body;
  for (uint32_t e = nd->parents; e < nd[1].parents; e++) {
    uint32_t pe = g->parent_edges[e];
    if (pe & want)
      q = put_varint(q, g->nodes[ET_EDGE_INDEX(pe)].id);
  }
  return q == body ? tag_at : len_close(body, q);
}

/* Nearest whole microsecond, ties away from zero, for t >= 0. */
static uint64_t us_round(sim_time_ps t)
{
  return (uint64_t)((t + SIM_PS_PER_US / 2) / SIM_PS_PER_US);
}

/* Output of one file: the frames not yet written sit in buf[0..len). */
typedef struct {
  FILE *out;
  uint8_t *buf;
  size_t len, cap;
  int err;  /* errno of a failed write, 0 when none failed */
} frame_writer;

/* Makes room for `more` bytes after the pending ones and returns where they
 * start. */
static uint8_t *fw_reserve(frame_writer *fw, size_t more)
{
  if (fw->len + more > fw->cap) {
    fw->cap = MAX(fw->len + more, fw->cap * 2);
    fw->buf = g_realloc(fw->buf, fw->cap);
  }
  return fw->buf + fw->len;
}

/* Writes the pending bytes; FALSE (errno kept in fw->err) on failure. */
static gboolean fw_flush(frame_writer *fw)
{
  size_t n = fw->len;
  fw->len = 0;
  if (n == 0 || fwrite(fw->buf, 1, n, fw->out) == n)
    return TRUE;
  fw->err = errno ? errno : EIO;
  return FALSE;
}

/* Min-heap of node indices, for the write order below. */
static void heap_push(uint32_t *h, uint32_t *n, uint32_t v)
{
  uint32_t i = (*n)++;
  while (i > 0 && h[(i - 1) / 2] > v) {
    h[i] = h[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h[i] = v;
}

static uint32_t heap_pop(uint32_t *h, uint32_t *n)
{
  uint32_t top = h[0], v = h[--(*n)], i = 0;
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= *n)
      break;
    if (c + 1 < *n && h[c + 1] < h[c])
      c++;
    if (h[c] >= v)
      break;
    h[i] = h[c];
    i = c;
  }
  if (*n > 0)
    h[i] = v;
  return top;
}

/* Chakra readers that load nodes in windows (the V1 feeder) want parents
 * before children.  Returns NULL when index order already is topological
 * (checked in O(edges)), else the topological order that takes the
 * smallest ready index first (Kahn with a min-heap, O((n + e) log n)). */
static uint32_t *write_order(const et_graph *g)
{
  gboolean sorted = TRUE;
  for (uint32_t i = 0; i < g->n_nodes && sorted; i++)
    for (uint32_t e = g->nodes[i].parents; e < g->nodes[i + 1].parents; e++)
      if (ET_EDGE_INDEX(g->parent_edges[e]) >= i)
        sorted = FALSE;
  if (sorted)
    return NULL;
  uint32_t n = g->n_nodes, hn = 0, k = 0;
  uint32_t *indeg = g_new(uint32_t, n), *heap = g_new(uint32_t, n), *order = g_new(uint32_t, n);
  for (uint32_t i = 0; i < n; i++) {
    indeg[i] = et_node_n_parents(g, i);
    if (indeg[i] == 0)
      heap_push(heap, &hn, i);
  }
  while (hn > 0) {
    uint32_t v = heap_pop(heap, &hn);
    order[k++] = v;
    for (uint32_t e = g->nodes[v].children; e < g->nodes[v + 1].children; e++)
      if (--indeg[g->child_index[e]] == 0)
        heap_push(heap, &hn, g->child_index[e]);
  }
  g_assert(k == n); /* graphs are acyclic by construction */
  g_free(indeg);
  g_free(heap);
  return order;
}

/* A worker of a parallel workload write gives up on its rank (abort, no
 * error) once a lower rank has failed: that rank's error is the one
 * reported, and this file would only outlive a failed run. */
static gboolean write_cancelled(const gint *first_failed, int rank)
{
  return first_failed != NULL && g_atomic_int_get(first_failed) < rank;
}

/* Writes one graph; group_ids (may be NULL) maps group indices, looked up
 * through w->group_index by pg_name, to the pg_name written.  With
 * first_failed non-NULL this is rank `rank` of a parallel workload write:
 * when write_cancelled() turns true (checked after every batch and before
 * the commit) the temporary file is removed and FALSE is returned without
 * an error.  Time O(nodes + edges + bytes written); memory one batch
 * (WRITE_BATCH plus the largest frame) and, for graphs not in topological
 * index order, 12 bytes per node. */
/* The GlobalMetadata frame of rank `rank`: version, attrs
 * wisp_compute_slots, wisp_measured_step_ps and wisp_measured_start_ps
 * when known; the version is never empty, so the frame never is.  The
 * measured times come from the workload (the rank's entry), else from the
 * graph as read. */
static void put_metadata(frame_writer *fw, const et_graph *g, const et_workload *w, int rank)
{
  static const char slots_name[] = "wisp_compute_slots";
  static const char step_name[] = "wisp_measured_step_ps";
  static const char start_name[] = "wisp_measured_start_ps";
  sim_time_ps mstep = g->measured_step_ps, mstart = g->measured_start_ps;
  if (w != NULL) {
    mstep = w->measured_step_ps != NULL ? w->measured_step_ps[rank] : -1;
    mstart = w->measured_start_ps != NULL ? w->measured_start_ps[rank] : -1;
  }
  const char *version = g->version && g->version[0] ? g->version : "0.0.4";
  size_t vlen = strlen(version);
  size_t slots_len = g->compute_slots ? attr_varint_size(sizeof slots_name - 1, ATTR_INT64, g->compute_slots) : 0;
  size_t step_len = mstep >= 0 ? attr_varint_size(sizeof step_name - 1, ATTR_INT64, (uint64_t)mstep) : 0;
  size_t start_len = mstart >= 0 ? attr_varint_size(sizeof start_name - 1, ATTR_INT64, (uint64_t)mstart) : 0;
  uint8_t *p = fw_reserve(fw, 16 + vlen + slots_len + step_len + start_len);
  p = put_varint(p, 1 + varint_size(vlen) + vlen + slots_len + step_len + start_len);
  p = put_bytes(p, TAG(META_VERSION, WT_LEN), version, vlen);
  if (g->compute_slots)
    p = put_attr_varint_in(p, META_ATTR, slots_name, sizeof slots_name - 1, ATTR_INT64, g->compute_slots);
  if (mstep >= 0)
    p = put_attr_varint_in(p, META_ATTR, step_name, sizeof step_name - 1, ATTR_INT64, (uint64_t)mstep);
  if (mstart >= 0)
    p = put_attr_varint_in(p, META_ATTR, start_name, sizeof start_name - 1, ATTR_INT64, (uint64_t)mstart);
  fw->len = (size_t)(p - fw->buf);

}

/* Node i's attributes after its fields: is_cpu_op, the computation's
 * num_ops and tensor_size, the communication's type, size, pg_name (pg,
 * pg_len; NULL = none), peers, tag, root, all-to-allv splits (sw of them),
 * buffer and allocation time, and wisp's own flags and exact times, so
 * idle gaps and replayed communication survive a round trip.  Returns the
 * end of what was written. */
static uint8_t *put_node_attrs(uint8_t *p, const et_graph *g, uint32_t i, const et_comm *c, const char *pg,
                               size_t pg_len, uint32_t sw, gboolean fine_start)
{
  const et_node *nd = &g->nodes[i];
  p = ATTR_BOOL(p, "is_cpu_op", (nd->flags & ET_FLAG_CPU_OP) != 0);
  const et_comp_attr *ca = g->n_comp_attrs ? et_graph_comp_attr(g, i) : NULL;
  if (nd->type == ET_NODE_COMP || ca != NULL) {
    if (nd->type == ET_NODE_COMP || ca->num_ops != 0)
      p = ATTR_I64(p, "num_ops", ca ? ca->num_ops : 0);
    if (ca && ca->has_tensor_size)
      p = ATTR_U64(p, "tensor_size", ca->tensor_size);
  }
  if (c != NULL) {
    if (c->coll != ET_COLL_NONE)
      p = ATTR_I64(p, "comm_type", c->coll == ET_COLL_ALL_TO_ALLV ? ET_COLL_ALL_TO_ALL : c->coll);
    if (!(nd->flags & ET_FLAG_REPLAY) || c->bytes != 0)
      p = ATTR_I64(p, "comm_size", (int64_t)c->bytes);
    if (pg != NULL)
      p = put_attr_string(p, "pg_name", sizeof("pg_name") - 1, pg, pg_len);
    if (c->src >= 0)
      p = ATTR_I32(p, "comm_src", c->src);
    if (c->dst >= 0)
      p = ATTR_I32(p, "comm_dst", c->dst);
    if (c->tag >= 0)
      p = ATTR_I32(p, "comm_tag", c->tag);
    if (c->root >= 0)
      p = ATTR_I32(p, "wisp_root", c->root);
    if (c->coll == ET_COLL_ALL_TO_ALLV && c->split != ET_NONE)
      p = put_attr_i64_list(p, "wisp_split_sizes", sizeof("wisp_split_sizes") - 1, g->splits + c->split, sw);
    if (c->coll == ET_COLL_ALL_TO_ALLV && c->split != ET_NONE && c->two_hop != 0) {
      p = ATTR_I64(p, "wisp_two_hop", c->two_hop);
      p = ATTR_I64(p, "wisp_two_hop_ppm", c->two_hop_ppm);
    }
    if (c->buffer != 0)
      p = ATTR_U64(p, "wisp_buffer", c->buffer);
    if (c->has_alloc)
      p = ATTR_I64(p, "wisp_alloc_ps", c->alloc_ps);
  }
  /* Other readers ignore unknown attributes. */
  if ((nd->type == ET_NODE_COMP || nd->type == ET_NODE_COMM_COLL) && (nd->flags & ET_FLAG_DELAY))
    p = ATTR_BOOL(p, "wisp_delay", TRUE);
  if (nd->type != ET_NODE_COMP && (nd->flags & ET_FLAG_REPLAY) && !(nd->flags & ET_FLAG_CPU_OP) &&
      !(nd->type == ET_NODE_COMM_COLL && (c == NULL || c->coll == ET_COLL_NONE)))
    p = ATTR_BOOL(p, "wisp_replay", TRUE);
  if (nd->duration_ps % SIM_PS_PER_US != 0)
    p = ATTR_I64(p, "wisp_duration_ps", nd->duration_ps);
  if (fine_start)
    p = ATTR_I64(p, "wisp_start_ps", nd->start_ps);

  return p;
}

static gboolean write_graph(const et_graph *g, const char *path, const et_workload *w, char **group_ids,
                            const gint *first_failed, int rank, GError **error)
{
  g_return_val_if_fail(g != NULL && path != NULL, FALSE);
  if (g->n_nodes == 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: refusing to write a rank file without nodes", path);
    return FALSE;
  }
  wisp_afile *af = wisp_afile_open(path, error);
  if (af == NULL)
    return FALSE;
  frame_writer fw = {.out = wisp_afile_stream(af), .cap = WRITE_BATCH + 4096};
  fw.buf = g_malloc(fw.cap);
  gboolean ok = TRUE;

  put_metadata(&fw, g, w, rank);
  /* A rank sharing another rank's graph writes its own records: peers,
   * group and root translated (chakra/et_share.h). */
  const et_share *sh = w == NULL ? NULL : w->scale ? et_scale_share(w->scale) : w->share;
  int traced = w != NULL && w->scale ? et_scale_counterpart(w->scale, rank) : rank;
  gboolean shared = sh != NULL && et_share_canonical(sh, traced) != traced;
  uint32_t *order = write_order(g);
  char idbuf[24];
  for (uint32_t k = 0; k < g->n_nodes; k++) {
    uint32_t i = order ? order[k] : k;
    const et_node *nd = &g->nodes[i];
    const char *name = g->strings + nd->name;
    size_t name_len = strlen(name);
    uint32_t np = nd[1].parents - nd->parents;
    et_comm tc;
    const et_comm *c = shared && nd->comm != ET_NONE ? et_workload_traced_comm(w, rank, nd->comm, &tc) : et_node_comm(g, i);
    const char *pg = NULL;
    size_t pg_len = 0;
    if (c != NULL && c->pg_name != ET_NONE) {
      pg = shared && c->group != ET_GROUP_WORLD ? et_workload_group(w, c->group)->name : g->strings + c->pg_name;
      if (group_ids != NULL && pg[0] != '\0') {
        gpointer gi = g_hash_table_lookup(w->group_index, pg);
        if (gi == NULL) {
          g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                      "%s: node id %" G_GUINT64_FORMAT ": pg_name \"%s\" names no group of the workload",
                      g->source ? g->source : path, nd->id, pg);
          ok = FALSE;
          break;
        }
        g_strlcpy(idbuf, group_ids[GPOINTER_TO_UINT(gi) - 1], sizeof(idbuf));
        pg = idbuf;
      }
      pg_len = strlen(pg);
    }
    uint32_t sw = c != NULL && c->coll == ET_COLL_ALL_TO_ALLV && c->split != ET_NONE ? g->split_width : 0;
    /* Upper bound of the frame: 5 bytes per length and 11 per tagged varint
     * (fields, deps, lengths, fixed-size attributes: 19 attributes of at
     * most 36 bytes) plus the variable parts. */
    size_t bound = 1024 + name_len + pg_len + 20 * (size_t)np + 10 * (size_t)sw;
    uint8_t *frame = fw_reserve(&fw, bound);
    uint8_t *body = len_open(frame);
    uint8_t *p = body;

    if (nd->id != 0) {
      p = put_varint(p, TAG(NODE_ID, WT_VARINT));
      p = put_varint(p, nd->id);
    }
    if (name_len > 0)
      p = put_bytes(p, TAG(NODE_NAME, WT_LEN), name, name_len);
    if (nd->type != 0) {
      p = put_varint(p, TAG(NODE_TYPE, WT_VARINT));
      p = put_varint(p, nd->type);
    }
    p = put_deps(p, g, nd, NODE_CTRL_DEPS, ET_EDGE_CTRL);
    p = put_deps(p, g, nd, NODE_DATA_DEPS, ET_EDGE_DATA);
    uint64_t start_us = 0, duration_us = us_round(nd->duration_ps);
    gboolean fine_start = FALSE;
    if (nd->flags & ET_FLAG_HAS_START) {
      if (nd->start_ps >= 0)
        start_us = us_round(nd->start_ps);
      fine_start = nd->start_ps < 0 || start_us == 0 || nd->start_ps % SIM_PS_PER_US != 0;
    }
    if (start_us != 0) {
      p = put_varint(p, TAG(NODE_START, WT_VARINT));
      p = put_varint(p, start_us);
    }
    if (duration_us != 0) {
      p = put_varint(p, TAG(NODE_DURATION, WT_VARINT));
      p = put_varint(p, duration_us);
    }

    p = put_node_attrs(p, g, i, c, pg, pg_len, sw, fine_start);

    g_assert((size_t)(p - body) <= UINT32_MAX); /* the frame length prefix is a varint32 */
    p = len_close(body, p);
    g_assert((size_t)(p - frame) <= bound);
    fw.len = (size_t)(p - fw.buf);
    if (fw.len >= WRITE_BATCH) {
      if (!fw_flush(&fw) || write_cancelled(first_failed, rank)) {
        ok = FALSE;
        break;
      }
    }
  }
  ok = ok && fw_flush(&fw) && !write_cancelled(first_failed, rank);
  if (fw.err != 0)
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot write: %s", path, g_strerror(fw.err));
  g_free(order);
  g_free(fw.buf);
  if (!ok) {
    wisp_afile_abort(af);
    return FALSE;
  }
  return wisp_afile_commit(af, error);
}

gboolean et_write_file(const et_graph *g, const char *path, GError **error)
{
  return write_graph(g, path, NULL, NULL, NULL, 0, error);
}

/* ---- workloads ---- */

/* TRUE when s is a canonical decimal id >= 1 that fits an int. */
static gboolean is_group_id(const char *s)
{
  if (s[0] < '1' || s[0] > '9')
    return FALSE;
  size_t k = 0;
  for (; s[k]; k++)
    if (s[k] < '0' || s[k] > '9' || k >= 9)
      return FALSE;
  return TRUE;
}

static char *read_small_file(const char *path, GError **error)
{
  char *text = NULL;
  gsize len = 0;
  wisp_input_note(path);
  if (!g_file_get_contents(path, &text, &len, error))
    return NULL;
  if (len > (64u << 20)) {
    g_free(text);
    g_set_error(error, WISP_ERROR, WISP_ERROR_LIMIT, "%s: too large for a group file", path);
    return NULL;
  }
  return text;
}

static gboolean load_groups(et_workload *w, const char *path, GError **error)
{
  char *text = read_small_file(path, error);
  if (text == NULL)
    return FALSE;
  cJSON *root = cJSON_Parse(text);
  gboolean ok = FALSE;
  if (root == NULL || !cJSON_IsObject(root)) {
    const char *at = cJSON_GetErrorPtr();
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE,
                "%s: not a JSON object of communicator ids to rank lists%s%.20s%s", path,
                root == NULL && at ? " (error near \"" : "", root == NULL && at ? at : "",
                root == NULL && at ? "\")" : "");
    goto out;
  }
  for (cJSON *it = root->child; it != NULL; it = it->next) {
    if (!is_group_id(it->string)) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s: key \"%s\" is not a communicator id (a decimal number >= 1)", path, it->string);
      goto out;
    }
    int n = cJSON_GetArraySize(it);
    if (!cJSON_IsArray(it) || n == 0) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: group \"%s\" must be a non-empty list of ranks",
                  path, it->string);
      goto out;
    }
    int *ranks = g_new(int, n);
    int k = 0;
    for (cJSON *r = it->child; r != NULL; r = r->next, k++) {
      double v = cJSON_IsNumber(r) ? r->valuedouble : -1;
      if (!(v >= 0 && v < w->n_ranks) || v != (double)(int)v) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                    "%s: group \"%s\" entry %d is not a rank in 0..%d", path, it->string, k, w->n_ranks - 1);
        g_free(ranks);
        goto out;
      }
      ranks[k] = (int)v;
    }
    uint32_t idx = et_workload_add_group(w, it->string, NULL, ranks, n);
    g_free(ranks);
    if (idx == ET_NONE) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s: group \"%s\" repeats a rank or repeats an earlier group id with other ranks",
                  path, it->string);
      goto out;
    }
  }
  ok = TRUE;
out:
  cJSON_Delete(root);
  g_free(text);
  return ok;
}

/* Applies comm_group_names.json: renames groups (keeping the id as an alias
 * in group_index, since the rank files name groups by id). */
static gboolean load_group_names(et_workload *w, const char *path, GError **error)
{
  char *text = read_small_file(path, error);
  if (text == NULL)
    return FALSE;
  cJSON *root = cJSON_Parse(text);
  gboolean ok = FALSE;
  if (root == NULL || !cJSON_IsObject(root)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s: not a JSON object", path);
    goto out;
  }
  for (cJSON *it = root->child; it != NULL; it = it->next) {
    gpointer gi = g_hash_table_lookup(w->group_index, it->string);
    cJSON *name = cJSON_GetObjectItemCaseSensitive(it, "name");
    cJSON *desc = cJSON_GetObjectItemCaseSensitive(it, "desc");
    if (gi == NULL || !cJSON_IsObject(it) || (name && !cJSON_IsString(name)) || (desc && !cJSON_IsString(desc))) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s: entry \"%s\" must name a group of comm_group.json and map to {\"name\": ..., \"desc\": ...}",
                  path, it->string);
      goto out;
    }
    et_group *grp = g_ptr_array_index(w->groups, GPOINTER_TO_UINT(gi) - 1);
    if (name != NULL && strcmp(name->valuestring, grp->name) != 0) {
      if (g_hash_table_contains(w->group_index, name->valuestring)) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: name \"%s\" is used twice", path,
                    name->valuestring);
        goto out;
      }
      g_free(grp->name);
      grp->name = g_strdup(name->valuestring);
      g_hash_table_insert(w->group_index, g_strdup(grp->name), gi);
    }
    if (desc != NULL) {
      g_free(grp->desc);
      grp->desc = g_strdup(desc->valuestring);
    }
  }
  ok = TRUE;
out:
  cJSON_Delete(root);
  g_free(text);
  return ok;
}

static int cmp_str_ptr(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Finds the rank-file prefix inside dir: the single P with P.<r>.et files. */
static char *dir_prefix(const char *dir, GError **error)
{
  GDir *d = g_dir_open(dir, 0, error);
  if (d == NULL)
    return NULL;
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  const char *e;
  while ((e = g_dir_read_name(d)) != NULL) {
    size_t len = strlen(e);
    if (len < 6 || strcmp(e + len - 3, ".et") != 0)
      continue;
    size_t k = len - 3;
    while (k > 0 && g_ascii_isdigit(e[k - 1]))
      k--;
    if (k == len - 3 || k < 2 || e[k - 1] != '.')
      continue;
    char *p = g_strndup(e, k - 1);
    gboolean seen = FALSE;
    for (guint j = 0; j < names->len; j++)
      seen = seen || strcmp(g_ptr_array_index(names, j), p) == 0;
    if (seen)
      g_free(p);
    else
      g_ptr_array_add(names, p);
  }
  g_dir_close(d);
  char *out = NULL;
  if (names->len == 1) {
    out = g_build_filename(dir, g_ptr_array_index(names, 0), NULL);
  } else if (names->len == 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: no rank files named PREFIX.<rank>.et in this directory", dir);
  } else {
    g_ptr_array_sort(names, cmp_str_ptr);
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: rank files with %u different prefixes (e.g. \"%s\" and \"%s\"); pass PREFIX instead of the "
                "directory", dir, names->len, (char *)g_ptr_array_index(names, 0),
                (char *)g_ptr_array_index(names, 1));
  }
  g_ptr_array_free(names, TRUE);
  return out;
}

/* Reads rank r of workload w (PREFIX.<r>.et), fills its point-to-point
 * defaults, takes its measured baseline, resolves its groups and offers
 * it for sharing (w->share).  *all_starts is cleared when the rank has no
 * measured window start.  O(file + graph size). */
static gboolean load_rank(et_workload *w, const char *prefix, int r, unsigned build_flags, gboolean *all_starts,
                          GError **error)
{
  char *f = g_strdup_printf("%s.%d.et", prefix, r);
  et_graph *g = et_read_file(f, build_flags & ~(unsigned)ET_LOAD_NO_SHARE, error);
  g_free(f);
  if (g == NULL)
    return FALSE;
  w->ranks[r] = g;
  for (uint32_t c = 0; c < g->n_comms; c++) {
    et_comm *cm = &g->comms[c];
    if (cm->coll != ET_COLL_NONE)
      continue;
    /* SEND: comm_src defaults to the own rank; RECV: comm_dst likewise. */
    if (cm->src < 0)
      cm->src = r;
    if (cm->dst < 0)
      cm->dst = r;
  }
  /* The measured baseline the files carry (wisp's own convert output):
   * steps per rank; window starts only when every rank has one, as the
   * frontends give them. */
  w->measured_step_ps[r] = g->measured_step_ps;
  if (g->measured_start_ps >= 0 && *all_starts) {
    if (w->measured_start_ps == NULL)
      w->measured_start_ps = g_new(sim_time_ps, w->n_ranks);
    w->measured_start_ps[r] = g->measured_start_ps;
  }
  *all_starts = *all_starts && g->measured_start_ps >= 0;
  if (!et_workload_resolve_rank(w, r, error))
    return FALSE;
  if (w->share)
    et_share_offer(w, r);
  return TRUE;
}

et_workload *et_workload_load(const char *path, unsigned build_flags, GError **error)
{
  return et_workload_load_groups(path, build_flags, NULL, error);
}

et_workload *et_workload_load_groups(const char *path, unsigned build_flags, const char *comm_group,
                                     GError **error)
{
  g_return_val_if_fail(path != NULL, NULL);
  if (comm_group && !g_file_test(comm_group, G_FILE_TEST_IS_REGULAR)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: no such file (--comm-group names the comm_group.json to use)",
                comm_group);
    return NULL;
  }
  char *prefix = g_file_test(path, G_FILE_TEST_IS_DIR) ? dir_prefix(path, error) : g_strdup(path);
  if (prefix == NULL)
    return NULL;
  /* A rank file itself (PREFIX.<r>.et) stands for its prefix. */
  size_t pl = strlen(prefix);
  if (pl > 5 && g_str_has_suffix(prefix, ".et") && g_file_test(prefix, G_FILE_TEST_IS_REGULAR)) {
    size_t k = pl - 3;
    while (k > 0 && g_ascii_isdigit(prefix[k - 1]))
      k--;
    if (k < pl - 3 && k >= 2 && prefix[k - 1] == '.')
      prefix[k - 1] = '\0';
  }
  int n = 0;
  for (;; n++) {
    char *f = g_strdup_printf("%s.%d.et", prefix, n);
    gboolean exists = g_file_test(f, G_FILE_TEST_EXISTS);
    g_free(f);
    if (!exists || n == INT_MAX - 1)
      break;
  }
  if (n == 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s.0.et: no such file (expected rank files PREFIX.<rank>.et)",
                prefix);
    g_free(prefix);
    return NULL;
  }
  /* A file after a gap (PREFIX.5.et without PREFIX.4.et) would be ignored
   * silently; refuse instead. */
  char *dir = g_path_get_dirname(prefix), *base = g_path_get_basename(prefix);
  GDir *d = g_dir_open(dir, 0, NULL);
  if (d != NULL) {
    const char *e;
    size_t bl = strlen(base);
    while ((e = g_dir_read_name(d)) != NULL) {
      size_t len = strlen(e);
      if (len > bl + 4 && strncmp(e, base, bl) == 0 && e[bl] == '.' && strcmp(e + len - 3, ".et") == 0) {
        const char *num = e + bl + 1;
        char *endp;
        errno = 0;
        long r = strtol(num, &endp, 10);
        if (endp == e + len - 3 && endp > num && g_ascii_isdigit(num[0]) && errno == 0 && r >= n) {
          g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                      "%s/%s exists but %s.%d.et does not: rank files must be numbered 0..N-1 without gaps",
                      dir, e, prefix, n);
          g_dir_close(d);
          g_free(dir), g_free(base), g_free(prefix);
          return NULL;
        }
      }
    }
    g_dir_close(d);
  }
  et_workload *w = et_workload_new(n, prefix);
  /* The groups first: each rank is resolved as it is read, so that it can
   * share an earlier rank's graph (chakra/et_share.h) before the next
   * rank is read. */
  char *gdir = comm_group ? g_path_get_dirname(comm_group) : NULL;
  char *groups = comm_group ? g_strdup(comm_group) : g_build_filename(dir, "comm_group.json", NULL);
  char *names = g_build_filename(gdir ? gdir : dir, "comm_group_names.json", NULL);
  g_free(gdir);
  gboolean ok = TRUE;
  if (g_file_test(groups, G_FILE_TEST_EXISTS))
    ok = load_groups(w, groups, error) && (!g_file_test(names, G_FILE_TEST_EXISTS) ||
                                           load_group_names(w, names, error));
  if (ok && !(build_flags & ET_LOAD_NO_SHARE))
    et_share_attach(w);
  gboolean all_starts = n > 0;
  for (int r = 0; ok && r < n; r++)
    ok = load_rank(w, prefix, r, build_flags, &all_starts, error);
  if (!all_starts) {
    g_free(w->measured_start_ps);
    w->measured_start_ps = NULL;
  }
  if (w->share)
    et_share_seal(w->share);
  g_free(groups);
  g_free(names);
  g_free(dir);
  g_free(base);
  g_free(prefix);
  if (!ok) {
    et_workload_free(w);
    return NULL;
  }
  return w;
}

/* The jobs of one et_workload_write_threads call (wisp_run_jobs).
 * errors[r] is written only by the worker writing rank r; the rest is
 * read-only while the workers run (GHashTable lookups do not modify the
 * table). */
typedef struct {
  const et_workload *w;
  const char *dir, *prefix;
  char **group_ids;        /* NULL when the group names are written as they are */
  GError **errors;         /* per rank; NULL = written (or given up, see write_cancelled) */
} rank_work;

/* Writes rank r; FALSE only when it failed (a write given up because a
 * lower rank failed is not a failure of its own). */
static gboolean write_rank(void *ctx, int r, const gint *first_failed)
{
  rank_work *rw = ctx;
  char *base = g_strdup_printf("%s.%d.et", rw->prefix, r);
  char *path = g_build_filename(rw->dir, base, NULL);
  gboolean ok = write_graph(rw->w->ranks[r], path, rw->w, rw->group_ids, first_failed, r, &rw->errors[r]) ||
                rw->errors[r] == NULL;
  g_free(base);
  g_free(path);
  return ok;
}

/* Writes every rank file with up to `threads` workers (the calling thread
 * is one of them).  Returns FALSE with the error of the lowest failing
 * rank. */
static gboolean write_ranks(const et_workload *w, const char *dir, const char *prefix, char **group_ids,
                            int threads, GError **error)
{
  rank_work rw = {.w = w, .dir = dir, .prefix = prefix, .group_ids = group_ids,
                  .errors = g_new0(GError *, MAX(w->n_ranks, 1))};
  int first_failed = wisp_run_jobs(w->n_ranks, threads, write_rank, &rw);
  gboolean ok = first_failed == w->n_ranks;
  if (!ok)
    g_propagate_error(error, g_steal_pointer(&rw.errors[first_failed]));
  for (int r = 0; r < w->n_ranks; r++)
    if (rw.errors[r] != NULL)
      g_error_free(rw.errors[r]);
  g_free(rw.errors);
  return ok;
}

gboolean et_workload_write(const et_workload *w, const char *dir, const char *prefix, GError **error)
{
  return et_workload_write_threads(w, dir, prefix, 0, error);
}

gboolean et_workload_write_threads(const et_workload *w, const char *dir, const char *prefix, int threads,
                                   GError **error)
{
  g_return_val_if_fail(w != NULL && dir != NULL && prefix != NULL && threads >= 0, FALSE);
  /* The files are named PREFIX.<rank>.et inside dir: a prefix with a path
   * separator or a dot-dot would put them elsewhere (convert -p '../x'). */
  if (*prefix == '\0' || strchr(prefix, '/') != NULL || strcmp(prefix, ".") == 0 || strcmp(prefix, "..") == 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "prefix '%s': give a plain file name prefix (no '/', not "
                "'.' or '..'); the files go into %s", prefix, dir);
    return FALSE;
  }
  if (threads == 0 && !wisp_threads_default(&threads, error))
    return FALSE;
  for (int r = 0; r < w->n_ranks; r++)
    if (w->ranks[r] == NULL) {
      char *base = g_strdup_printf("%s.%d.et", prefix, r);
      char *path = g_build_filename(dir, base, NULL);
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: rank %d has no graph; nothing was written", path, r);
      g_free(base);
      g_free(path);
      return FALSE;
    }
  guint ng = w->groups->len;
  gboolean all_ids = TRUE, any_desc = FALSE;
  for (guint k = 0; k < ng; k++) {
    const et_group *grp = g_ptr_array_index(w->groups, k);
    all_ids = all_ids && is_group_id(grp->name);
    any_desc = any_desc || grp->desc != NULL;
  }
  char **ids = g_new0(char *, ng + 1);
  for (guint k = 0; k < ng; k++) {
    const et_group *grp = g_ptr_array_index(w->groups, k);
    ids[k] = all_ids ? g_strdup(grp->name) : g_strdup_printf("%u", k + 1);
  }
  gboolean ok = write_ranks(w, dir, prefix, all_ids ? NULL : ids, threads, error);
  if (ok && ng > 0) {
    /* The layout of Python's json.dumps(indent=2), as CCL-Bench writes it. */
    GString *s = g_string_new("{");
    for (guint k = 0; k < ng; k++) {
      const et_group *grp = g_ptr_array_index(w->groups, k);
      g_string_append_printf(s, "%s\n  \"%s\": [", k ? "," : "", ids[k]);
      for (int j = 0; j < grp->n_ranks; j++)
        g_string_append_printf(s, "%s\n    %d", j ? "," : "", grp->ranks[j]);
      g_string_append(s, "\n  ]");
    }
    g_string_append(s, "\n}\n");
    char *path = g_build_filename(dir, "comm_group.json", NULL);
    ok = wisp_write_file_atomic(path, s->str, s->len, error);
    g_free(path);
    g_string_free(s, TRUE);
  }
  if (ok && ng > 0 && (!all_ids || any_desc)) {
    cJSON *root = cJSON_CreateObject();
    for (guint k = 0; k < ng; k++) {
      const et_group *grp = g_ptr_array_index(w->groups, k);
      cJSON *o = cJSON_AddObjectToObject(root, ids[k]);
      cJSON_AddStringToObject(o, "name", grp->name);
      if (grp->desc)
        cJSON_AddStringToObject(o, "desc", grp->desc);
    }
    char *text = cJSON_Print(root);
    char *path = g_build_filename(dir, "comm_group_names.json", NULL);
    GString *s = g_string_new(text);
    g_string_append_c(s, '\n');
    ok = wisp_write_file_atomic(path, s->str, s->len, error);
    g_string_free(s, TRUE);
    g_free(path);
    cJSON_free(text);
    cJSON_Delete(root);
  }
  /* A group file left from an earlier run would describe other groups. */
  if (ok && ng == 0) {
    char *path = g_build_filename(dir, "comm_group.json", NULL);
    g_unlink(path);
    g_free(path);
  }
  if (ok && (ng == 0 || (all_ids && !any_desc))) {
    char *path = g_build_filename(dir, "comm_group_names.json", NULL);
    g_unlink(path);
    g_free(path);
  }
  g_strfreev(ids);
  return ok;
}
