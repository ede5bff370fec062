/* wisp_json.h: a small streaming JSON writer for reports.
 *
 * Reports are written field by field to a FILE (never built as a tree in
 * memory), with deterministic formatting: two-space indentation for
 * objects at depth < flat_depth, one line per object below it.  Numbers are
 * written by the caller-chosen functions so picosecond times print exactly
 * (wisp_json_ns prints "1234.567" for 1234567 ps).  Depth is bounded by
 * WISP_JSON_MAX_DEPTH (an assertion).
 */
#ifndef WISP_JSON_H
#define WISP_JSON_H

#include "common/wisp_util.h"

G_BEGIN_DECLS

#define WISP_JSON_MAX_DEPTH 32

typedef struct {
  FILE *out;
  int depth;
  int flat_depth;          /* containers at this depth or deeper are written on one line */
  gboolean first[WISP_JSON_MAX_DEPTH];
  gboolean flat[WISP_JSON_MAX_DEPTH];
} wisp_json;

void wisp_json_init(wisp_json *j, FILE *out, int flat_depth);
/* Makes containers opened from now on at depth >= flat_depth one-line
 * (the init value); returns the previous value, to restore it after a
 * section written with another layout. */
int wisp_json_set_flat_depth(wisp_json *j, int flat_depth);
void wisp_json_begin_object(wisp_json *j, const char *key);   /* key NULL inside arrays / at top */
void wisp_json_end_object(wisp_json *j);
void wisp_json_begin_array(wisp_json *j, const char *key);
void wisp_json_end_array(wisp_json *j);
void wisp_json_string(wisp_json *j, const char *key, const char *value); /* NULL value -> null */
void wisp_json_int(wisp_json *j, const char *key, int64_t value);
void wisp_json_uint(wisp_json *j, const char *key, uint64_t value);
void wisp_json_double(wisp_json *j, const char *key, double value, int decimals);
void wisp_json_bool(wisp_json *j, const char *key, gboolean value);
void wisp_json_ns(wisp_json *j, const char *key, sim_time_ps value);
/* Ends the document with a newline. */
void wisp_json_finish(wisp_json *j);

/* Writes s as a JSON string literal (with quotes and escapes). */
void wisp_json_write_escaped(FILE *out, const char *s);

/* Whether a JSON reader that stopped at `end` (inside text[0, len)) stopped
 * because `limit` arrays and objects were open there (cJSON refuses
 * nesting past CJSON_NESTING_LIMIT) rather than at a syntax error, so the
 * message can say which.  Skips brackets inside strings.  O(end - text). */
gboolean wisp_json_too_deep(const char *text, size_t len, const char *end, int limit);

/* The longest string or number token a JSON reader decodes: 64 MiB, as the
 * streaming tokenizer (frontends/fe_json.h).  The largest real trace
 * fields, rank lists of 10^5 ranks, are under 1 MiB; a 4 MB .json.gz can
 * inflate to one 4 GiB string. */
#define WISP_JSON_MAX_TOKEN_BYTES (64u * 1024u * 1024u)

/* A guard for readers that load a whole JSON text before parsing it (cJSON
 * is not streaming): fed the text chunk by chunk as it is read, it stops
 * the read at a string or number token longer than
 * WISP_JSON_MAX_TOKEN_BYTES, so memory stays near that cap however far
 * the token would go.  Zero-initialise it (WISP_JSON_SCAN_INIT). */
typedef struct {
  uint64_t offset;    /* bytes fed so far */
  uint64_t tok_start; /* offset of the open string's quote or number's first character */
  int state;          /* 0 between tokens, 1 in a string, 2 after a backslash in one, 3 in a number */
} wisp_json_scan;
#define WISP_JSON_SCAN_INIT {0, 0, 0}

/* Feeds the next n bytes.  FALSE, with a WISP_ERROR_LIMIT naming `path`
 * and the token's byte offset, once the open token passes the cap.  The
 * scan does not check the grammar (the parser does).  O(n). */
gboolean wisp_json_scan_feed(wisp_json_scan *s, const char *buf, size_t n, const char *path, GError **error);

G_END_DECLS
#endif
