/* fe_json_internal.h: the tokenizer's state, shared by fe_json.c (the
 * tokenizer) and fe_json_ip.c (in-place reading); not installed.  The
 * number and time conversions (fe_json_num.c) need none of it. */
#ifndef WISP_FE_JSON_INTERNAL_H
#define WISP_FE_JSON_INTERNAL_H

#include "frontends/fe_json_ip.h"

#include <zlib.h>

G_BEGIN_DECLS

#define FE_JSON_BUF FE_JSON_BUFFER_BYTES

enum {
  ST_VALUE,          /* a value must come (top level, after ':' or ',' in an array) */
  ST_VALUE_OR_END,   /* after '[' */
  ST_KEY,            /* after ',' in an object */
  ST_KEY_OR_END,     /* after '{' */
  ST_SEP,            /* after a value inside a container: ',' or the closer */
  ST_EOF,            /* after the top-level value */
  ST_FAILED,
};

struct fe_json {
  gzFile gz;                 /* gzip file, else NULL */
  int fd;                    /* plain file read with read(2) into own, else -1 */
  const uint8_t *buf;        /* current buffer (own storage or caller's memory) */
  uint8_t *own;              /* owned buffer of FE_JSON_BUF bytes (file mode) */
  size_t pos, end;
  uint64_t base;             /* uncompressed offset of buf[0] */
  gboolean at_eof;
  char *name;
  char *text;
  size_t text_len, text_cap;
  uint8_t *stack;            /* 1 = object, 0 = array */
  size_t depth, stack_cap;
  int state;
  uint64_t tok_off;
  gboolean discard;          /* skipping: do not store string contents */
};

static inline void fe_json_after_value(fe_json *j)
{
  j->state = j->depth == 0 ? ST_EOF : ST_SEP;
}

/* Reads up to len bytes of input into dst, which will hold the text at
 * uncompressed offset off.  Returns the count, 0 at the end of input, -1 on
 * a read or decompression error (error set at off; the tokenizer's state
 * is left to the caller).  zlib reports data first and a pending error
 * (e.g. truncation) on the next call, and again on every later call. */
gssize fe_json_src_read(fe_json *j, uint8_t *dst, size_t len, uint64_t off, GError **error);
/* The next non-whitespace byte, not consumed (the tokenizer's inline
 * peek): 0..255, -1 at end of input, -2 on error (set). */
int fe_json_peek(fe_json *j, GError **error);

G_END_DECLS
#endif
