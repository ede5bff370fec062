/* hlo_internal.h: what the HLO parser's files share (not installed):
 * the limits, the parse context and the lexical helpers (hlo.c parses
 * instructions and shapes, hlo_groups.c replica groups). */
#ifndef WISP_HLO_INTERNAL_H
#define WISP_HLO_INTERNAL_H

#include "frontends/hlo.h"

#include <string.h>

G_BEGIN_DECLS

/* Largest dimension count accepted in a shape and largest number of ids in
 * replica groups; both are far beyond what XLA emits and only bound work on
 * hostile input.  No wisp topology holds more than 2^22 endpoints
 * (topologies/), so more ids could never be placed; at 2^24 one line took
 * 7 s to expand under the fuzzer's sanitizers, near its 10 s timeout. */
#define HLO_MAX_RANK 64
#define HLO_MAX_IDS (1u << 22)

/* Error with a quoted excerpt of the text at the failing position. */
static inline gboolean hlo_fail(GError **error, const char *start, const char *at, const char *what)
{
  size_t off = (size_t) (at - start);
  g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "HLO text, character %zu: %s (near \"%.40s\")",
              off, what, at);
  return FALSE;
}

static inline const char *hlo_skip_ws(const char *p)
{
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
    p++;
  return p;
}

static inline gboolean hlo_is_ident(char c)
{
  return g_ascii_isalnum(c) || c == '_' || c == '-' || c == '.';
}

/* Skips a balanced {...} (layouts may hold parentheses such as T(8,128)). */
static inline const char *hlo_skip_braces(const char *p)
{
  int depth = 0;
  for (; *p; p++) {
    if (*p == '{')
      depth++;
    else if (*p == '}' && --depth == 0)
      return p + 1;
  }
  return NULL;
}

static inline gboolean hlo_parse_u64(const char **pp, uint64_t *out)
{
  const char *p = *pp;
  if (!g_ascii_isdigit(*p))
    return FALSE;
  uint64_t v = 0;
  while (g_ascii_isdigit(*p)) {
    unsigned d = (unsigned) (*p - '0');
    if (v > (UINT64_MAX - d) / 10)
      return FALSE;
    v = v * 10 + d;
    p++;
  }
  *pp = p;
  *out = v;
  return TRUE;
}

static inline gboolean hlo_parse_i64(const char **pp, int64_t *out)
{
  const char *p = *pp;
  gboolean neg = FALSE;
  if (*p == '-') {
    neg = TRUE;
    p++;
  }
  uint64_t v;
  if (!hlo_parse_u64(&p, &v) || v > (uint64_t) INT64_MAX)
    return FALSE;
  *out = neg ? -(int64_t) v : (int64_t) v;
  *pp = p;
  return TRUE;
}

typedef struct {
  const char *start;   /* whole text, for error offsets */
  gboolean upper_bound;
} hlo_ctx;

/* The replica groups at p (explicit or iota form, hlo_groups.c): *n_groups
 * groups, group g's ids at (*group_ids)[(*group_off)[g] ...] (g_free both);
 * *end just past them. */
gboolean hlo_parse_groups(hlo_ctx *c, const char *p, const char **end, uint32_t *n_groups,
                          uint32_t **group_off, int64_t **group_ids, GError **error);

G_END_DECLS
#endif
