/* fe_json_ip.h: in-place JSON scanning for hot loops.
 *
 * The pull tokenizer (fe_json.h) returns one token per call: it moves a
 * state machine, records the token's offset and copies its text, about
 * 25 ns per token on the development machine.  A caller that reads many
 * small values of a known shape (the events of a trace) can instead walk
 * each value directly in the tokenizer's buffer:
 *
 *   fe_json_ip_begin   makes the next array element available as a window
 *                      [p, e) of buffered bytes (at least `want` bytes, or
 *                      up to the end of input);
 *   fe_json_ip_*       scanners walk the window without copying;
 *   fe_json_ip_end     commits the position after the element.
 *
 * Every scanner accepts exactly what RFC 8259 accepts or "bails" (returns
 * FALSE or NULL) without touching the tokenizer.  On a bail the caller
 * discards what it decoded from the element and reads the same element
 * again with fe_json_next, which reports any error with its usual message
 * and byte offset; so the in-place path never changes what is accepted or
 * what an error says.  Scanners bail on anything uncommon: a backslash
 * escape inside a string, a token reaching the window's end, nesting deeper
 * than 64 levels.  Strings returned by the scanners are raw bytes with no
 * escapes, hence equal to their decoded text and free of NUL bytes.
 *
 * Cost: strings and whitespace runs are scanned 16 bytes per step with
 * SSE2; everything else is one pass over the bytes.
 */
#ifndef WISP_FE_JSON_IP_H
#define WISP_FE_JSON_IP_H

#include "frontends/fe_json.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

G_BEGIN_DECLS

/* Forces inlining of the per-token helpers into the callers' loops (GCC and
 * Clang); a plain inline hint elsewhere. */
#if defined(__GNUC__)
#define FE_JSON_INLINE static inline __attribute__((always_inline))
#else
#define FE_JSON_INLINE static inline
#endif

/* Prepares to read the next element of the array being read in place.
 * Valid where fe_json_next would return an array element or the array's
 * end (just after ARR_BEGIN or after a complete element).  Consumes the
 * separating ',' and whitespace; then, when the element is an object,
 * buffers at least want bytes of it (fewer only at the end of input), sets
 * [*p, *e) to the buffered bytes starting at its '{' and returns 1.
 * Returns 0 when the next token is anything else (the array's end, another
 * kind of value, malformed input): the caller goes on with fe_json_next.
 * Returns -1 with error set on a read or decompression error.
 * O(want) when the buffer is compacted, O(1) otherwise. */
int fe_json_ip_begin(fe_json *j, size_t want, const uint8_t **p, const uint8_t **e, GError **error);
/* Commits an element read in place: p points just past its closing byte,
 * inside the window fe_json_ip_begin returned. */
void fe_json_ip_end(fe_json *j, const uint8_t *p);

/* Skips one JSON value starting at *p (its first byte, not whitespace),
 * validating it completely; on success *p points just past it.  Bails
 * (FALSE, *p unchanged) on escapes, on reaching e and beyond 64 levels of
 * nesting.  O(value length). */
gboolean fe_json_ip_skip(const uint8_t **p, const uint8_t *e);

/* Span forms of fe_json_int, fe_json_us_to_ps and fe_json_us_split for
 * text that is not NUL-terminated (same results on the same text). */
gboolean fe_json_int_n(const char *text, size_t n, int64_t *out);
gboolean fe_json_us_to_ps_n(const char *text, size_t n, sim_time_ps *out);
gboolean fe_json_us_split_n(const char *text, size_t n, int64_t *whole_us, int64_t *frac_ps);

/* Bytes that end a plain run inside a string: '"', '\\' and controls. */
static const uint8_t fe_json_str_special[256] = {
  [0x00] = 1, [0x01] = 1, [0x02] = 1, [0x03] = 1, [0x04] = 1, [0x05] = 1, [0x06] = 1, [0x07] = 1,
  [0x08] = 1, [0x09] = 1, [0x0a] = 1, [0x0b] = 1, [0x0c] = 1, [0x0d] = 1, [0x0e] = 1, [0x0f] = 1,
  [0x10] = 1, [0x11] = 1, [0x12] = 1, [0x13] = 1, [0x14] = 1, [0x15] = 1, [0x16] = 1, [0x17] = 1,
  [0x18] = 1, [0x19] = 1, [0x1a] = 1, [0x1b] = 1, [0x1c] = 1, [0x1d] = 1, [0x1e] = 1, [0x1f] = 1,
  ['"'] = 1, ['\\'] = 1,
};

/* Bytes a number token may contain (RFC 8259 syntax is checked separately). */
static const uint8_t fe_json_num_char[256] = {
  ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1,
  ['-'] = 1, ['+'] = 1, ['.'] = 1, ['e'] = 1, ['E'] = 1,
};

/* JSON whitespace (RFC 8259: space, tab, line feed, carriage return). */
static const uint8_t fe_json_ws_char[256] = { [' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1 };

/* Returns the first byte in [p, e) that ends a plain string run ('"', '\\'
 * or a control byte), or e.  With SSE2 it tests 16 bytes per step (three
 * compares and one movemask); the tail under 16 bytes uses the class table. */
FE_JSON_INLINE const uint8_t *fe_json_scan_plain(const uint8_t *p, const uint8_t *e)
{
#if defined(__SSE2__) && defined(__GNUC__)
  const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), ctl = _mm_set1_epi8(0x1f);
  while (e - p >= 16) {
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
    /* max(x, 0x1f) == 0x1f exactly when x <= 0x1f (unsigned). */
    __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, bslash)),
                             _mm_cmpeq_epi8(_mm_max_epu8(x, ctl), ctl));
    unsigned mask = (unsigned)_mm_movemask_epi8(m);
    if (mask)
      return p + __builtin_ctz(mask);
    p += 16;
  }
#else
  while (e - p >= 4 && !(fe_json_str_special[p[0]] | fe_json_str_special[p[1]] | fe_json_str_special[p[2]] |
                         fe_json_str_special[p[3]]))
    p += 4;
#endif
  while (p < e && !fe_json_str_special[*p])
    p++;
  return p;
}

/* Returns the first byte in [p, e) that is not JSON whitespace, or e;
 * 16 bytes per step with SSE2 (indentation runs like "\n    " are common
 * in Kineto files). */
FE_JSON_INLINE const uint8_t *fe_json_skip_ws_run(const uint8_t *p, const uint8_t *e)
{
#if defined(__SSE2__) && defined(__GNUC__)
  while (e - p >= 16) {
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i w = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(x, _mm_set1_epi8('\n'))),
                             _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('\t')), _mm_cmpeq_epi8(x, _mm_set1_epi8('\r'))));
    unsigned other = ~(unsigned)_mm_movemask_epi8(w) & 0xffffu;
    if (other)
      return p + __builtin_ctz(other);
    p += 16;
  }
#endif
  while (p < e && fe_json_ws_char[*p])
    p++;
  return p;
}

/* Checks RFC 8259 number syntax of [s, e), which holds only number
 * characters (fe_json_num_char). */
FE_JSON_INLINE gboolean fe_json_number_span_ok(const uint8_t *s, const uint8_t *e)
{
  if (s < e && *s == '-')
    s++;
  if (s < e && *s == '0')
    s++;
  else if (s < e && *s >= '1' && *s <= '9')
    while (s < e && *s >= '0' && *s <= '9')
      s++;
  else
    return FALSE;
  if (s < e && *s == '.') {
    s++;
    if (!(s < e && *s >= '0' && *s <= '9'))
      return FALSE;
    while (s < e && *s >= '0' && *s <= '9')
      s++;
  }
  if (s < e && (*s == 'e' || *s == 'E')) {
    s++;
    if (s < e && (*s == '+' || *s == '-'))
      s++;
    if (!(s < e && *s >= '0' && *s <= '9'))
      return FALSE;
    while (s < e && *s >= '0' && *s <= '9')
      s++;
  }
  return s == e;
}

/* Advances *p over whitespace; FALSE when the window ends first.  No
 * whitespace and a single blank (as in `"ph": "X", "cat": ...`) are tested
 * byte by byte; longer runs go to the 16-byte scanner. */
FE_JSON_INLINE gboolean fe_json_ip_ws(const uint8_t **p, const uint8_t *e)
{
  const uint8_t *q = *p;
  if (G_LIKELY(q < e && !fe_json_ws_char[*q]))
    return TRUE;
  if (G_LIKELY(e - q >= 2 && !fe_json_ws_char[q[1]])) {
    *p = q + 1;
    return TRUE;
  }
  q = fe_json_skip_ws_run(q, e);
  *p = q;
  return q < e;
}

/* Reads a string at *p (which is '"') without escapes: [*s, *s + *n) are its
 * bytes and *p moves past the closing quote.  Bails on an escape, a raw
 * control byte or the window's end. */
FE_JSON_INLINE gboolean fe_json_ip_string(const uint8_t **p, const uint8_t *e, const char **s, size_t *n)
{
  const uint8_t *b = *p + 1, *q = fe_json_scan_plain(b, e);
  if (q == e || *q != '"')
    return FALSE;
  *s = (const char *)b;
  *n = (size_t)(q - b);
  *p = q + 1;
  return TRUE;
}

/* Reads a number at *p (a '-' or a digit): [*s, *s + *n) is its text, *p
 * moves past it.  One pass that follows the RFC 8259 number grammar
 * ([-] int [frac] [exp]); it bails on bad syntax, when the number reaches
 * e, and when a number character follows what it accepted (the tokenizer
 * reads such a run, e.g. "01" or "1.2.3", as one malformed number). */
FE_JSON_INLINE gboolean fe_json_ip_number(const uint8_t **p, const uint8_t *e, const char **s, size_t *n)
{
#define FE_JSON_IP_DIGIT(q) ((q) < e && (unsigned)(*(q) - '0') < 10)
  const uint8_t *b = *p, *q = b;
  if (q < e && *q == '-')
    q++;
  if (q < e && *q == '0')
    q++;
  else if (FE_JSON_IP_DIGIT(q))
    while (FE_JSON_IP_DIGIT(q))
      q++;
  else
    return FALSE;
  if (q < e && *q == '.') {
    q++;
    if (!FE_JSON_IP_DIGIT(q))
      return FALSE;
    while (FE_JSON_IP_DIGIT(q))
      q++;
  }
  if (q < e && (*q == 'e' || *q == 'E')) {
    q++;
    if (q < e && (*q == '+' || *q == '-'))
      q++;
    if (!FE_JSON_IP_DIGIT(q))
      return FALSE;
    while (FE_JSON_IP_DIGIT(q))
      q++;
  }
  if (q == e || fe_json_num_char[*q])
    return FALSE;
  *s = (const char *)b;
  *n = (size_t)(q - b);
  *p = q;
  return TRUE;
#undef FE_JSON_IP_DIGIT
}

G_END_DECLS
#endif
