/* fe_json.c: streaming JSON tokenizer (see fe_json.h); in-place reading is
 * fe_json_ip.c, the number and time conversions fe_json_num.c.
 *
 * The state machine keeps one byte per open container (object or array)
 * and a "what may come next" state; it never recurses, so nesting depth is
 * bounded only by memory.  Strings are scanned in place in the input buffer
 * and copied in runs between escapes; a token that straddles a buffer
 * refill is simply continued after the refill.
 */
#include "config.h"

#include "frontends/fe_json_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <fcntl.h>
#include <unistd.h>
#include <glib/gstdio.h>

static void set_error_at(const fe_json *j, uint64_t off, GError **error, const char *fmt, va_list ap)
{
  char *msg = g_strdup_vprintf(fmt, ap);
  g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s: byte %" PRIu64 ": %s", j->name, off, msg);
  g_free(msg);
}

/* Sets the error at byte off without failing the tokenizer (src_read). */
static void error_at(const fe_json *j, uint64_t off, GError **error, const char *fmt, ...) G_GNUC_PRINTF(4, 5);
static void error_at(const fe_json *j, uint64_t off, GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  set_error_at(j, off, error, fmt, ap);
  va_end(ap);
}

/* Sets the error at byte off and fails the tokenizer. */
static gboolean fail_at(fe_json *j, uint64_t off, GError **error, const char *fmt, ...) G_GNUC_PRINTF(4, 5);
static gboolean fail_at(fe_json *j, uint64_t off, GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  set_error_at(j, off, error, fmt, ap);
  va_end(ap);
  j->state = ST_FAILED;
  return FALSE;
}

void fe_json_error(const fe_json *j, GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  set_error_at(j, j->tok_off, error, fmt, ap);
  va_end(ap);
}

const char *fe_json_tok_kind(fe_json_tok tok)
{
  static const char *const kind[] = {
    [FE_JSON_OBJ_BEGIN] = "an object", [FE_JSON_ARR_BEGIN] = "an array", [FE_JSON_STRING] = "a string",
    [FE_JSON_NUMBER] = "a number", [FE_JSON_TRUE] = "true", [FE_JSON_FALSE] = "false", [FE_JSON_NULL] = "null" };
  return (size_t)tok < G_N_ELEMENTS(kind) && kind[tok] ? kind[tok] : "another value";
}

fe_json *fe_json_open(const char *path, GError **error)
{
  /* gzip by its magic bytes; a plain file is read straight into the buffer
   * (zlib's transparent mode would copy every byte once more). */
  wisp_input_note(path); /* no output may replace it */
  int fd = g_open(path, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot open: %s", path, g_strerror(errno));
    return NULL;
  }
  uint8_t magic[2] = { 0, 0 };
  ssize_t got;
  do
    got = pread(fd, magic, 2, 0);
  while (got < 0 && errno == EINTR);
  if (got < 0) {
    int e = errno;
    close(fd);
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot read: %s", path, g_strerror(e));
    return NULL;
  }
  gzFile gz = NULL;
  if (got == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
    gz = gzdopen(fd, "rb");
    if (!gz) {
      close(fd);
      g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot open: out of memory", path);
      return NULL;
    }
    gzbuffer(gz, 128u * 1024u);
    fd = -1; /* gzclose closes it */
  }
  fe_json *j = g_new0(fe_json, 1);
  j->gz = gz;
  j->fd = fd;
  j->own = g_malloc(FE_JSON_BUF);
  j->buf = j->own;
  j->name = g_strdup(path);
  j->text_cap = 256;
  j->text = g_malloc(j->text_cap);
  j->text[0] = 0;
  j->state = ST_VALUE;
  return j;
}

fe_json *fe_json_new_mem(const void *data, size_t len, const char *name)
{
  fe_json *j = g_new0(fe_json, 1);
  j->fd = -1;
  j->buf = data;
  j->end = len;
  j->at_eof = TRUE;
  j->name = g_strdup(name ? name : "<memory>");
  j->text_cap = 256;
  j->text = g_malloc(j->text_cap);
  j->text[0] = 0;
  j->state = ST_VALUE;
  return j;
}

void fe_json_free(fe_json *j)
{
  if (!j)
    return;
  if (j->gz)
    gzclose(j->gz);
  if (j->fd >= 0)
    close(j->fd);
  g_free(j->own);
  g_free(j->name);
  g_free(j->text);
  g_free(j->stack);
  g_free(j);
}

const char *fe_json_text(const fe_json *j, size_t *len)
{
  if (len)
    *len = j->text_len;
  return j->text;
}

uint64_t fe_json_offset(const fe_json *j) { return j->tok_off; }
uint64_t fe_json_bytes_read(const fe_json *j) { return j->base + j->pos; }
size_t fe_json_depth(const fe_json *j) { return j->depth; }
const char *fe_json_source(const fe_json *j) { return j->name; }

/* Reads up to len bytes of input into dst, which will hold the text at
 * uncompressed offset off.  Returns the count, 0 at the end of input, -1 on
 * a read or decompression error (error set at off; the tokenizer's state
 * is left to the caller).  zlib reports data first and a pending error
 * (e.g. truncation) on the next call, and again on every later call. */
gssize fe_json_src_read(fe_json *j, uint8_t *dst, size_t len, uint64_t off, GError **error)
{
  if (j->fd >= 0) {
    ssize_t n;
    do
      n = read(j->fd, dst, len);
    while (n < 0 && errno == EINTR);
    if (n < 0)
      error_at(j, off, error, "read error: %s", g_strerror(errno));
    return n;
  }
  int n = gzread(j->gz, dst, (unsigned)len);
  if (n > 0)
    return n;
  int zerr = Z_OK;
  const char *msg = gzerror(j->gz, &zerr);
  if (n < 0 || (zerr != Z_OK && zerr != Z_STREAM_END)) {
    /* The damage lies after the text zlib delivered (gztell; the fill
     * started at off) and near the compressed bytes it consumed (gzoffset,
     * within zlib's input buffer); zlib prefixes its message with the
     * "<fd:N>: " of gzdopen, which names nothing the user knows. */
    z_off_t at = gztell(j->gz);
    if (at >= 0 && (uint64_t)at > off)
      off = (uint64_t)at;
    const char *colon = msg ? strstr(msg, ": ") : NULL;
    if (msg && msg[0] == '<' && colon)
      msg = colon + 2;
    if (zerr == Z_BUF_ERROR)
      error_at(j, off, error, "compressed stream is truncated (gzip data ends early); the file is incomplete");
    else if (zerr == Z_ERRNO)
      error_at(j, off, error, "read error: %s", g_strerror(errno));
    else
      error_at(j, off, error, "corrupt gzip data after this byte of the text, near compressed byte %lld (zlib: %s); "
               "the file is damaged: re-copy it", (long long)gzoffset(j->gz), msg ? msg : "unknown error");
    return -1;
  }
  return 0;
}

/* Refills the buffer.  Returns 1 when bytes are available, 0 at the end of
 * input, -1 on a read or decompression error (error set). */
static int fill(fe_json *j, GError **error)
{
  if (j->pos < j->end)
    return 1;
  if (j->at_eof)
    return 0;
  j->base += j->end;
  j->pos = j->end = 0;
  gssize n = fe_json_src_read(j, j->own, FE_JSON_BUF, j->base, error);
  if (n < 0) {
    j->state = ST_FAILED;
    return -1;
  }
  if (n == 0) {
    j->at_eof = TRUE;
    return 0;
  }
  j->end = (size_t)n;
  return 1;
}

/* Next byte, consumed: 0..255, -1 at end of input, -2 on error. */
static inline int getch(fe_json *j, GError **error)
{
  if (G_UNLIKELY(j->pos == j->end)) {
    int r = fill(j, error);
    if (r <= 0)
      return r == 0 ? -1 : -2;
  }
  return j->buf[j->pos++];
}

static void text_grow(fe_json *j, size_t extra)
{
  size_t cap = j->text_cap * 2;
  while (cap < j->text_len + extra + 1)
    cap *= 2;
  j->text = g_realloc(j->text, cap);
  j->text_cap = cap;
}

static inline void text_reserve(fe_json *j, size_t extra)
{
  if (G_UNLIKELY(j->text_len + extra + 1 > j->text_cap))
    text_grow(j, extra);
}

static inline void text_append(fe_json *j, const void *p, size_t n)
{
  text_reserve(j, n);
  memcpy(j->text + j->text_len, p, n);
  j->text_len += n;
}

/* Appends the n bytes at s, where [s, e) is readable input: runs of up to
 * 16 bytes (most keys and numbers) are copied with one unaligned 16-byte
 * load and store instead of a memcpy call; the bytes past n are rewritten
 * by the next append or the terminating NUL. */
FE_JSON_INLINE void text_append_run(fe_json *j, const uint8_t *s, size_t n, const uint8_t *e)
{
#if defined(__SSE2__)
  if (n <= 16 && e - s >= 16 && j->text_cap - j->text_len >= 17) {
    _mm_storeu_si128((__m128i *)(void *)(j->text + j->text_len), _mm_loadu_si128((const __m128i *)(const void *)s));
    j->text_len += n;
    return;
  }
#endif
  (void)e;
  text_append(j, s, n);
}

static void text_utf8(fe_json *j, uint32_t cp)
{
  char b[4];
  size_t n;
  if (cp < 0x80) {
    b[0] = (char)cp; n = 1;
  } else if (cp < 0x800) {
    b[0] = (char)(0xC0 | (cp >> 6)); b[1] = (char)(0x80 | (cp & 0x3F)); n = 2;
  } else if (cp < 0x10000) {
    b[0] = (char)(0xE0 | (cp >> 12)); b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    b[2] = (char)(0x80 | (cp & 0x3F)); n = 3;
  } else {
    b[0] = (char)(0xF0 | (cp >> 18)); b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    b[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); b[3] = (char)(0x80 | (cp & 0x3F)); n = 4;
  }
  text_append(j, b, n);
}

static gboolean read_hex4(fe_json *j, uint32_t *out, GError **error)
{
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) {
    uint64_t off = j->base + j->pos;
    int c = getch(j, error);
    if (c == -2)
      return FALSE;
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else if (c < 0)
      return fail_at(j, off, error, "input ends inside a \\u escape");
    else
      return fail_at(j, off, error, "invalid hex digit '%c' in \\u escape", c);
    v = v * 16 + (uint32_t)d;
  }
  *out = v;
  return TRUE;
}

/* Reads a string body; the opening quote has been consumed. */
static gboolean read_string(fe_json *j, GError **error)
{
  j->text_len = 0;
  for (;;) {
    if (j->pos == j->end) {
      int r = fill(j, error);
      if (r < 0)
        return FALSE;
      if (r == 0)
        return fail_at(j, j->tok_off, error, "string starting here is not terminated (input ends)");
    }
    const uint8_t *s = j->buf + j->pos, *e = j->buf + j->end;
    const uint8_t *p = fe_json_scan_plain(s, e);
    if (!j->discard && p > s)
      text_append_run(j, s, (size_t)(p - s), e);
    j->pos = (size_t)(p - j->buf);
    if (p == e) {
      /* Checked once per buffer refill: a 4 MB .json.gz can hold a 4 GiB
       * string, which would otherwise be decoded into memory whole. */
      if (G_UNLIKELY(j->text_len > FE_JSON_MAX_TOKEN_BYTES))
        return fail_at(j, j->tok_off, error, "string starting here is longer than %u MiB, more than any trace "
                       "field holds; the file is corrupt or not a trace", FE_JSON_MAX_TOKEN_BYTES >> 20);
      continue;
    }
    uint8_t c = *p;
    if (c == '"') {
      j->pos++;
      text_reserve(j, 0);
      j->text[j->text_len] = 0;
      return TRUE;
    }
    if (c < 0x20)
      return fail_at(j, j->base + j->pos, error, "raw control character 0x%02x inside a string (must be escaped)", c);
    /* Backslash escape. */
    uint64_t esc_off = j->base + j->pos;
    j->pos++;
    int x = getch(j, error);
    if (x == -2)
      return FALSE;
    char out;
    switch (x) {
    case '"': out = '"'; break;
    case '\\': out = '\\'; break;
    case '/': out = '/'; break;
    case 'b': out = '\b'; break;
    case 'f': out = '\f'; break;
    case 'n': out = '\n'; break;
    case 'r': out = '\r'; break;
    case 't': out = '\t'; break;
    case 'u': {
      uint32_t cp;
      if (!read_hex4(j, &cp, error))
        return FALSE;
      if (cp >= 0xD800 && cp <= 0xDBFF) {
        int b1 = getch(j, error);
        if (b1 == -2)
          return FALSE;
        int b2 = b1 == '\\' ? getch(j, error) : 0;
        if (b2 == -2)
          return FALSE;
        if (b1 != '\\' || b2 != 'u')
          return fail_at(j, esc_off, error, "high surrogate \\u%04X is not followed by a low surrogate escape", cp);
        uint32_t lo;
        if (!read_hex4(j, &lo, error))
          return FALSE;
        if (lo < 0xDC00 || lo > 0xDFFF)
          return fail_at(j, esc_off, error, "high surrogate \\u%04X is followed by \\u%04X, not a low surrogate", cp, lo);
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
        return fail_at(j, esc_off, error, "lone low surrogate \\u%04X", cp);
      }
      if (!j->discard)
        text_utf8(j, cp);
      continue;
    }
    case -1:
      return fail_at(j, esc_off, error, "input ends inside an escape sequence");
    default:
      return fail_at(j, esc_off, error, "invalid escape '\\%c' in string", (x >= 0x20 && x < 0x7f) ? x : '?');
    }
    if (!j->discard)
      text_append(j, &out, 1);
  }
}

static gboolean read_number(fe_json *j, GError **error)
{
  j->text_len = 0;
  for (;;) {
    if (j->pos == j->end) {
      int r = fill(j, error);
      if (r < 0)
        return FALSE;
      if (r == 0)
        break;
    }
    const uint8_t *p = j->buf + j->pos, *e = j->buf + j->end, *s = p;
    while (p < e && fe_json_num_char[*p])
      p++;
    text_append_run(j, s, (size_t)(p - s), e);
    j->pos = (size_t)(p - j->buf);
    if (p < e)
      break;
    if (G_UNLIKELY(j->text_len > FE_JSON_MAX_TOKEN_BYTES))
      return fail_at(j, j->tok_off, error, "number starting here is longer than %u MiB; the file is corrupt",
                     FE_JSON_MAX_TOKEN_BYTES >> 20);
  }
  text_reserve(j, 0);
  j->text[j->text_len] = 0;
  /* The text holds number characters only, as fe_json_number_span_ok expects. */
  const uint8_t *t = (const uint8_t *)j->text;
  if (!fe_json_number_span_ok(t, t + j->text_len))
    return fail_at(j, j->tok_off, error, "malformed number '%.40s'", j->text);
  return TRUE;
}

static gboolean read_literal(fe_json *j, const char *word, GError **error)
{
  for (const char *w = word + 1; *w; w++) {
    int c = getch(j, error);
    if (c == -2)
      return FALSE;
    if (c != *w)
      return fail_at(j, j->tok_off, error, "invalid literal (expected '%s')", word);
  }
  return TRUE;
}

FE_JSON_INLINE int peek_nonws(fe_json *j, GError **error)
{
  for (;;) {
    if (G_UNLIKELY(j->pos == j->end)) {
      int r = fill(j, error);
      if (r <= 0)
        return r == 0 ? -1 : -2;
    }
    const uint8_t *p = j->buf + j->pos, *e = j->buf + j->end;
    if (!fe_json_ws_char[*p])
      return *p;
    p = fe_json_skip_ws_run(p + 1, e);
    j->pos = (size_t)(p - j->buf);
    if (p < e)
      return *p;
  }
}

int fe_json_peek(fe_json *j, GError **error)
{
  return peek_nonws(j, error);
}

static void push(fe_json *j, uint8_t kind)
{
  if (j->depth == j->stack_cap) {
    j->stack_cap = j->stack_cap ? j->stack_cap * 2 : 64;
    j->stack = g_realloc(j->stack, j->stack_cap);
  }
  j->stack[j->depth++] = kind;
}

static const char *describe(int c, char buf[16])
{
  if (c == -1)
    return "end of input";
  if (c >= 0x20 && c < 0x7f)
    g_snprintf(buf, 16, "'%c'", c);
  else
    g_snprintf(buf, 16, "byte 0x%02x", c);
  return buf;
}

FE_JSON_INLINE gboolean read_value(fe_json *j, int c, fe_json_tok *tok, GError **error)
{
  char d[16];
  j->tok_off = j->base + j->pos;
  switch (c) {
  case '{':
    j->pos++;
    push(j, 1);
    j->state = ST_KEY_OR_END;
    *tok = FE_JSON_OBJ_BEGIN;
    return TRUE;
  case '[':
    j->pos++;
    push(j, 0);
    j->state = ST_VALUE_OR_END;
    *tok = FE_JSON_ARR_BEGIN;
    return TRUE;
  case '"':
    j->pos++;
    if (!read_string(j, error))
      return FALSE;
    *tok = FE_JSON_STRING;
    break;
  case 't':
    j->pos++;
    if (!read_literal(j, "true", error))
      return FALSE;
    *tok = FE_JSON_TRUE;
    break;
  case 'f':
    j->pos++;
    if (!read_literal(j, "false", error))
      return FALSE;
    *tok = FE_JSON_FALSE;
    break;
  case 'n':
    j->pos++;
    if (!read_literal(j, "null", error))
      return FALSE;
    *tok = FE_JSON_NULL;
    break;
  default:
    if (c == '-' || (c >= '0' && c <= '9')) {
      if (!read_number(j, error))
        return FALSE;
      *tok = FE_JSON_NUMBER;
      break;
    }
    if (c == -1)
      return fail_at(j, j->tok_off, error, "input ends where a value is expected (truncated file?)");
    return fail_at(j, j->tok_off, error, "expected a value, found %s", describe(c, d));
  }
  fe_json_after_value(j);
  return TRUE;
}

FE_JSON_INLINE gboolean read_key(fe_json *j, fe_json_tok *tok, GError **error)
{
  char d[16];
  j->tok_off = j->base + j->pos;
  j->pos++;
  if (!read_string(j, error))
    return FALSE;
  int c = peek_nonws(j, error);
  if (c == -2)
    return FALSE;
  if (c != ':')
    return fail_at(j, j->base + j->pos, error, "expected ':' after member name, found %s", describe(c, d));
  j->pos++;
  j->state = ST_VALUE;
  *tok = FE_JSON_KEY;
  return TRUE;
}

/* One token (see fe_json_next); inlined into fe_json_next and the skip
 * loops so that skipping a container costs no call per token. */
FE_JSON_INLINE gboolean next_tok(fe_json *j, fe_json_tok *tok, GError **error)
{
  char d[16];
  for (;;) {
    int c = peek_nonws(j, error);
    if (c == -2) {
      j->state = ST_FAILED;
      return FALSE;
    }
    switch (j->state) {
    case ST_VALUE:
      return read_value(j, c, tok, error);
    case ST_VALUE_OR_END:
      if (c == ']') {
        j->tok_off = j->base + j->pos;
        j->pos++;
        j->depth--;
        fe_json_after_value(j);
        *tok = FE_JSON_ARR_END;
        return TRUE;
      }
      return read_value(j, c, tok, error);
    case ST_KEY_OR_END:
      if (c == '}') {
        j->tok_off = j->base + j->pos;
        j->pos++;
        j->depth--;
        fe_json_after_value(j);
        *tok = FE_JSON_OBJ_END;
        return TRUE;
      }
      /* fall through */
    case ST_KEY:
      if (c == '"')
        return read_key(j, tok, error);
      if (c == -1)
        return fail_at(j, j->base + j->pos, error, "input ends inside an object (truncated file?)");
      return fail_at(j, j->base + j->pos, error, "expected a member name string, found %s", describe(c, d));
    case ST_SEP: {
      gboolean in_obj = j->stack[j->depth - 1] == 1;
      if (c == ',') {
        j->pos++;
        j->state = in_obj ? ST_KEY : ST_VALUE;
        continue;
      }
      if ((c == '}' && in_obj) || (c == ']' && !in_obj)) {
        j->tok_off = j->base + j->pos;
        j->pos++;
        j->depth--;
        fe_json_after_value(j);
        *tok = in_obj ? FE_JSON_OBJ_END : FE_JSON_ARR_END;
        return TRUE;
      }
      if (c == -1)
        return fail_at(j, j->base + j->pos, error, "input ends inside %s (truncated file?)",
                       in_obj ? "an object" : "an array");
      return fail_at(j, j->base + j->pos, error, "expected ',' or '%c', found %s", in_obj ? '}' : ']',
                     describe(c, d));
    }
    case ST_EOF:
      j->tok_off = j->base + j->pos;
      if (c == -1) {
        *tok = FE_JSON_EOF;
        return TRUE;
      }
      return fail_at(j, j->tok_off, error, "unexpected %s after the end of the top-level value", describe(c, d));
    default:
      g_assert_not_reached();
    }
  }
}

gboolean fe_json_next(fe_json *j, fe_json_tok *tok, GError **error)
{
  g_return_val_if_fail(j->state != ST_FAILED, FALSE);
  return next_tok(j, tok, error);
}

/* Closes the innermost container at buffer position p (the closer byte). */
FE_JSON_INLINE void fast_close(fe_json *j, const uint8_t *p)
{
  j->tok_off = j->base + (size_t)(p - j->buf);
  j->depth--;
  fe_json_after_value(j);
}

/* Skips tokens until a value is complete at depth target (the state is then
 * ST_SEP or ST_EOF at that depth).  The inner loop works on the raw buffer
 * without producing tokens: structural bytes move the same state machine as
 * fe_json_next, strings are scanned with scan_plain and numbers are checked
 * in place, nothing is copied.  Any token it does not fully handle within
 * the buffer (escapes, control bytes, literals, a token cut by the buffer
 * end, unexpected bytes) is left at its first byte and read by next_tok,
 * which therefore reports every error with the same message and offset as
 * a token-by-token skip.  O(bytes skipped); no allocation except the
 * nesting stack. */
static gboolean skip_to(fe_json *j, size_t target, GError **error)
{
  fe_json_tok t;
  gboolean old = j->discard;
  j->discard = TRUE;
  while (!(j->depth == target && (j->state == ST_SEP || j->state == ST_EOF))) {
    const uint8_t *b = j->buf, *p = b + j->pos, *e = b + j->end;
    while (p < e && !(j->depth == target && (j->state == ST_SEP || j->state == ST_EOF))) {
      uint8_t c = *p;
      if (fe_json_ws_char[c]) {
        p = fe_json_skip_ws_run(p + 1, e);
        continue;
      }
      const uint8_t *q;
      const char *str; /* token text from the in-place scanners (unused: skipping) */
      size_t len;
      switch (j->state) {
      case ST_SEP: {
        gboolean in_obj = j->stack[j->depth - 1] == 1;
        if (c == ',') {
          p++;
          j->state = in_obj ? ST_KEY : ST_VALUE;
          continue;
        }
        if (c != (in_obj ? '}' : ']'))
          goto slow;
        fast_close(j, p++);
        continue;
      }
      case ST_KEY_OR_END:
        if (c == '}') {
          fast_close(j, p++);
          continue;
        }
        /* fall through */
      case ST_KEY:
        if (c != '"')
          goto slow;
        q = p;
        if (!fe_json_ip_string(&q, e, &str, &len))
          goto slow;
        q = fe_json_skip_ws_run(q, e);
        if (q == e || *q != ':')
          goto slow;
        j->tok_off = j->base + (size_t)(p - b);
        p = q + 1;
        j->state = ST_VALUE;
        continue;
      case ST_VALUE_OR_END:
        if (c == ']') {
          fast_close(j, p++);
          continue;
        }
        /* fall through */
      case ST_VALUE:
        if (c == '{' || c == '[') {
          j->tok_off = j->base + (size_t)(p - b);
          push(j, c == '{');
          j->state = c == '{' ? ST_KEY_OR_END : ST_VALUE_OR_END;
          p++;
          continue;
        }
        if (c == '"') {
          q = p;
          if (!fe_json_ip_string(&q, e, &str, &len))
            goto slow;
          j->tok_off = j->base + (size_t)(p - b);
          p = q;
          fe_json_after_value(j);
          continue;
        }
        if (c == '-' || (c >= '0' && c <= '9')) {
          q = p;
          if (!fe_json_ip_number(&q, e, &str, &len))
            goto slow;
          j->tok_off = j->base + (size_t)(p - b);
          p = q;
          fe_json_after_value(j);
          continue;
        }
        goto slow;
      default:
        goto slow;
      }
    }
  slow:
    j->pos = (size_t)(p - b);
    if (j->depth == target && (j->state == ST_SEP || j->state == ST_EOF))
      break;
    if (!next_tok(j, &t, error)) {
      j->discard = old;
      return FALSE;
    }
  }
  j->discard = old;
  return TRUE;
}

gboolean fe_json_skip(fe_json *j, fe_json_tok first, GError **error)
{
  if (first != FE_JSON_OBJ_BEGIN && first != FE_JSON_ARR_BEGIN)
    return TRUE;
  g_return_val_if_fail(j->state != ST_FAILED, FALSE);
  return skip_to(j, j->depth - 1, error);
}

gboolean fe_json_skip_value(fe_json *j, GError **error)
{
  g_return_val_if_fail(j->state != ST_FAILED, FALSE);
  /* After a member name or a ',' in an array exactly one value follows. */
  if (j->state == ST_VALUE)
    return skip_to(j, j->depth, error);
  fe_json_tok t;
  gboolean old = j->discard;
  j->discard = TRUE;
  gboolean ok = next_tok(j, &t, error);
  j->discard = old;
  return ok && fe_json_skip(j, t, error);
}
