/* fe_json_ip.c: in-place reading of array elements (see fe_json_ip.h):
 * the tokenizer's buffer compacted so an element's bytes sit in one
 * window the caller decodes directly, then the tokenizer resumes.
 */
#include "config.h"

#include "frontends/fe_json_internal.h"

#include <string.h>

/* Moves the unread bytes to the front of the owned buffer and reads more
 * until the buffer is full or the input ends (then at_eof is set, so the
 * last window is never compacted again).  A read or decompression error
 * only stops the reading: it recurs when fill() next reads, after the
 * tokenizer has consumed the bytes before it, so errors in those bytes are
 * reported first, as without the read-ahead.  O(bytes moved + read). */
static void compact(fe_json *j)
{
  size_t left = j->end - j->pos;
  memmove(j->own, j->own + j->pos, left);
  j->base += j->pos;
  j->pos = 0;
  j->end = left;
  while (j->end < FE_JSON_BUF) {
    GError *deferred = NULL;
    gssize n = fe_json_src_read(j, j->own + j->end, FE_JSON_BUF - j->end, j->base + j->end, &deferred);
    if (n < 0) {
      g_error_free(deferred);
      break;
    }
    if (n == 0) {
      j->at_eof = TRUE; /* no more compaction; fill() then reports the end */
      break;
    }
    j->end += (size_t)n;
  }
}

/* Whether the next non-blank byte is c (1; not consumed), another byte or
 * the end (0), or a read error (-1, the tokenizer failed). */
static int peek_is(fe_json *j, int c, GError **error)
{
  int got = fe_json_peek(j, error);
  if (got == -2) {
    j->state = ST_FAILED;
    return -1;
  }
  return got == c;
}

int fe_json_ip_begin(fe_json *j, size_t want, const uint8_t **p, const uint8_t **e, GError **error)
{
  g_return_val_if_fail(j->state != ST_FAILED, -1);
  g_return_val_if_fail(want <= FE_JSON_BUF / 2, -1);
  if (j->state == ST_SEP) {
    /* After an array element: only ',' lets another one come. */
    if (j->depth == 0 || j->stack[j->depth - 1] != 0)
      return 0;
    int r = peek_is(j, ',', error);
    if (r <= 0)
      return r;
    j->pos++;
    j->state = ST_VALUE;
  } else if (j->state != ST_VALUE && j->state != ST_VALUE_OR_END) {
    return 0;
  }
  int r = peek_is(j, '{', error);
  if (r <= 0)
    return r;
  if (j->own != NULL && !j->at_eof && j->end - j->pos < want)
    compact(j);
  j->tok_off = j->base + j->pos;
  *p = j->buf + j->pos;
  *e = j->buf + j->end;
  return 1;
}

void fe_json_ip_end(fe_json *j, const uint8_t *p)
{
  g_assert(p > j->buf + j->pos && p <= j->buf + j->end);
  j->pos = (size_t)(p - j->buf);
  fe_json_after_value(j);
}

/* Scans one literal (true, false, null) at p; NULL when it is not one. */
static const uint8_t *ip_literal(const uint8_t *p, const uint8_t *e)
{
  static const char *const words[] = { "true", "false", "null" };
  const char *w = words[*p == 't' ? 0 : *p == 'f' ? 1 : 2];
  size_t n = strlen(w);
  if ((size_t)(e - p) < n || memcmp(p, w, n) != 0)
    return NULL;
  return p + n;
}

gboolean fe_json_ip_skip(const uint8_t **pp, const uint8_t *e)
{
  const uint8_t *p = *pp;
  uint64_t stack = 0; /* bit k: level k + 1 is an object */
  int depth = 0;
  const char *s;
  size_t n;
value:
  switch (*p) {
  case '{':
  case '[':
    if (depth == 64)
      return FALSE;
    stack = stack << 1 | (*p == '{');
    depth++;
    p++;
    if (!fe_json_ip_ws(&p, e))
      return FALSE;
    if (*p == ((stack & 1) ? '}' : ']')) {
      p++;
      depth--;
      stack >>= 1;
      goto after;
    }
    if (stack & 1)
      goto key;
    goto value;
  case '"':
    if (!fe_json_ip_string(&p, e, &s, &n))
      return FALSE;
    break;
  case 't':
  case 'f':
  case 'n':
    if ((p = ip_literal(p, e)) == NULL)
      return FALSE;
    break;
  default:
    if (!(*p == '-' || (*p >= '0' && *p <= '9')) || !fe_json_ip_number(&p, e, &s, &n))
      return FALSE;
    break;
  }
after:
  if (depth == 0) {
    *pp = p;
    return TRUE;
  }
  if (!fe_json_ip_ws(&p, e))
    return FALSE;
  if (*p == ',') {
    p++;
    if (!fe_json_ip_ws(&p, e))
      return FALSE;
    if (stack & 1)
      goto key;
    goto value;
  }
  if (*p != ((stack & 1) ? '}' : ']'))
    return FALSE;
  p++;
  depth--;
  stack >>= 1;
  goto after;
key:
  if (*p != '"' || !fe_json_ip_string(&p, e, &s, &n) || !fe_json_ip_ws(&p, e) || *p != ':')
    return FALSE;
  p++;
  if (!fe_json_ip_ws(&p, e))
    return FALSE;
  goto value;
}
