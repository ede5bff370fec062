/* fe_json.h: a streaming (pull) JSON tokenizer for large trace files.
 *
 * The tokenizer reads its input through a fixed-size buffer (1 MiB) from a
 * zlib gzread stream, so plain and gzip-compressed files (detected by their
 * magic bytes) are read the same way, and memory use does not depend on the
 * file size: it holds the buffer, one decoded string or number text (grown
 * to the longest single token) and one bit of nesting state per open
 * container.  There is no limit on file size or nesting depth other than
 * available memory; one string or number token may hold at most
 * FE_JSON_MAX_TOKEN_BYTES (64 MiB, checked per 1 MiB buffer: the largest
 * real trace fields, rank lists of 10^5 ranks, are under 1 MiB), so a
 * small gzip file cannot make the reader decode gigabytes into memory.  Every token costs O(its length); skipping a
 * value does not copy its strings.
 *
 * The grammar is checked completely (RFC 8259): commas, colons, literal
 * spellings, number syntax, string escapes including \u surrogate pairs,
 * raw control characters, trailing garbage.  Any violation, a truncated
 * file or a corrupt gzip stream is a WISP_ERROR_PARSE naming the source and
 * the byte offset in the uncompressed text.  String contents are returned
 * as UTF-8 bytes without validating multi-byte sequences.
 */
#ifndef WISP_FE_JSON_H
#define WISP_FE_JSON_H

#include "common/wisp_util.h"

G_BEGIN_DECLS

/* The longest string or number token decoded (see the top comment). */
#define FE_JSON_MAX_TOKEN_BYTES (64u * 1024u * 1024u)

/* Size of the read buffer of a file tokenizer (tests size their inputs by it). */
#define FE_JSON_BUFFER_BYTES (1024u * 1024u)

typedef enum {
  FE_JSON_EOF = 0,      /* end of input after the single top-level value */
  FE_JSON_OBJ_BEGIN,
  FE_JSON_OBJ_END,
  FE_JSON_ARR_BEGIN,
  FE_JSON_ARR_END,
  FE_JSON_KEY,          /* object member name; fe_json_text() holds it */
  FE_JSON_STRING,       /* fe_json_text() holds the decoded string */
  FE_JSON_NUMBER,       /* fe_json_text() holds the number's source text */
  FE_JSON_TRUE,
  FE_JSON_FALSE,
  FE_JSON_NULL,
} fe_json_tok;

typedef struct fe_json fe_json;

/* Opens a file (plain or gzip).  Returns NULL and sets error when it cannot
 * be opened. */
fe_json *fe_json_open(const char *path, GError **error);
/* Tokenizes len bytes at data (not copied; must outlive the tokenizer).
 * name is used in error messages. */
fe_json *fe_json_new_mem(const void *data, size_t len, const char *name);
void fe_json_free(fe_json *j);

/* Reads the next token into *tok.  Returns FALSE with error set on
 * malformed input or a read error; after a failure only fe_json_free may
 * be called. */
gboolean fe_json_next(fe_json *j, fe_json_tok *tok, GError **error);
/* Text of the last KEY, STRING or NUMBER token, NUL-terminated (strings may
 * contain NUL bytes from \u0000; *len gives the true length).  Valid until
 * the next call. */
const char *fe_json_text(const fe_json *j, size_t *len);
/* Skips the rest of a value whose first token `first` was just returned
 * (for OBJ_BEGIN/ARR_BEGIN, up to the matching end; otherwise nothing). */
gboolean fe_json_skip(fe_json *j, fe_json_tok first, GError **error);
/* Reads and skips one whole value (the next token starts it). */
gboolean fe_json_skip_value(fe_json *j, GError **error);
/* Byte offset (uncompressed) where the last token started. */
uint64_t fe_json_offset(const fe_json *j);
/* Uncompressed bytes consumed so far. */
uint64_t fe_json_bytes_read(const fe_json *j);
/* Number of containers open after the last token. */
size_t fe_json_depth(const fe_json *j);
const char *fe_json_source(const fe_json *j);

/* Sets a WISP_ERROR_PARSE error "SOURCE: byte OFFSET: MESSAGE" at the last
 * token's offset; for callers that reject well-formed but unexpected JSON. */
void fe_json_error(const fe_json *j, GError **error, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
/* What a value starting with token tok is, for messages: "a string",
 * "an array", "null", ... (a static string). */
const char *fe_json_tok_kind(fe_json_tok tok);

/* Number helpers on a NUMBER token's text.  fe_json_int parses an integer
 * (also "12.0" or "1e3" when the value is integral and fits in int64).
 * fe_json_us_to_ps converts a decimal count of microseconds exactly into
 * picoseconds (digits beyond the sixth decimal are rounded half away from
 * zero); exponent forms go through wisp_ps_from_us.  Both return FALSE when
 * the value is not representable. */
gboolean fe_json_int(const char *text, int64_t *out);
gboolean fe_json_us_to_ps(const char *text, sim_time_ps *out);
/* Splits a microsecond decimal into whole microseconds and the remaining
 * picoseconds (0 <= *frac_ps < 10^6, rounded), so absolute epoch times that
 * overflow int64 picoseconds stay exact. */
gboolean fe_json_us_split(const char *text, int64_t *whole_us, int64_t *frac_ps);

G_END_DECLS
#endif
