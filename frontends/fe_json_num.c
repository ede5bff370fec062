/* fe_json_num.c: the number and time conversions of the JSON readers
 * (see fe_json.h): integers with an 8-digit SWAR fast path, microsecond
 * decimals to picoseconds exactly, strtod for the rare forms.  Each
 * O(length of the text). */
#include "config.h"

#include "frontends/fe_json_ip.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Runs strtod on the n bytes at text, NUL-terminated in a copy (the rare
 * fraction and exponent forms); *ok is FALSE when not all of it is a number
 * or errno is set. */
static double strtod_n(const char *text, size_t n, gboolean *ok)
{
  char small[64];
  char *c = n < sizeof(small) ? small : g_malloc(n + 1);
  memcpy(c, text, n);
  c[n] = 0;
  errno = 0;
  char *end;
  double d = strtod(c, &end);
  *ok = *end == 0 && errno == 0;
  if (c != small)
    g_free(c);
  return d;
}

/* Whether the 8 bytes in v (loaded little-endian) are all ASCII digits:
 * every byte's high nibble is 3 and adding 6 to it does not carry into
 * the high nibble (so the low nibble is at most 9). */
static inline gboolean swar_is_8digits(uint64_t v)
{
  return ((v & UINT64_C(0xF0F0F0F0F0F0F0F0)) |
          (((v + UINT64_C(0x0606060606060606)) & UINT64_C(0xF0F0F0F0F0F0F0F0)) >> 4)) ==
         UINT64_C(0x3333333333333333);
}

/* The value of 8 ASCII digits loaded little-endian (first digit in the
 * lowest byte): pairs, then quads, then the halves are combined with three
 * multiplies instead of eight multiply-adds. */
static inline uint64_t swar_8digits(uint64_t v)
{
  v -= UINT64_C(0x3030303030303030);
  v = v * 10 + (v >> 8);                     /* byte 2k holds digits 2k, 2k+1 as a number 0..99 */
  uint64_t lo = v & UINT64_C(0x000000FF000000FF), hi = (v >> 16) & UINT64_C(0x000000FF000000FF);
  /* lo: pairs 0 and 2 (bytes 0, 4); hi: pairs 1 and 3.  Digits 0-3 are
   * pair0 * 100 + pair1, digits 4-7 likewise; then quad0 * 10^4 + quad1. */
  return ((lo * (100 + (UINT64_C(1000000) << 32))) + (hi * (1 + (UINT64_C(10000) << 32)))) >> 32;
}

/* Accumulates the decimal digits at [*p, e) into *v: up to 19 digits
 * without overflow checks (10^19 - 1 < 2^64), eight at a time when they
 * come in runs of eight (timestamps have 16), then with checks.  Returns
 * FALSE on overflow of uint64; *p moves past the digits.  O(digits). */
static inline gboolean digits_u64(const char **pp, const char *e, uint64_t *v)
{
  const char *p = *pp, *start = p;
  uint64_t x = 0;
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
  while (e - p >= 8 && p - start <= 11) {
    uint64_t w;
    memcpy(&w, p, 8);
    if (!swar_is_8digits(w))
      break;
    x = x * 100000000u + swar_8digits(w);
    p += 8;
  }
#endif
  const char *fast_end = e - start > 19 ? start + 19 : e;
  while (p < fast_end && (unsigned)(*p - '0') < 10)
    x = x * 10 + (uint64_t)(*p++ - '0');
  while (p < e && (unsigned)(*p - '0') < 10) {
    uint64_t d = (uint64_t)(*p - '0');
    if (x > (UINT64_MAX - d) / 10)
      return FALSE;
    x = x * 10 + d;
    p++;
  }
  *pp = p;
  *v = x;
  return TRUE;
}

gboolean fe_json_int_n(const char *s, size_t n, int64_t *out)
{
  const char *p = s, *e = s + n;
  gboolean neg = FALSE;
  if (p < e && *p == '-') {
    neg = TRUE;
    p++;
  }
  uint64_t v = 0;
  if (!(p < e && *p >= '0' && *p <= '9'))
    return FALSE;
  if (!digits_u64(&p, e, &v))
    return FALSE;
  if (p == e) {
    if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
      return FALSE;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return TRUE;
  }
  /* Fractional or exponent form: accept integral values only. */
  gboolean ok;
  double d = strtod_n(s, n, &ok);
  if (!ok || !isfinite(d) || d != floor(d) || d < -9.2e18 || d > 9.2e18)
    return FALSE;
  *out = (int64_t)d;
  return TRUE;
}

gboolean fe_json_int(const char *s, int64_t *out)
{
  return fe_json_int_n(s, strlen(s), out);
}

/* Parses [-]digits[.digits] in [s, s + n) into magnitude (whole µs,
 * fractional ps).  Returns FALSE for other forms (exponent) or overflow. */
static gboolean parse_us_decimal(const char *s, size_t n, gboolean *neg, uint64_t *whole, uint64_t *frac)
{
  const char *p = s, *e = s + n;
  *neg = FALSE;
  if (p < e && *p == '-') {
    *neg = TRUE;
    p++;
  }
  uint64_t w = 0;
  if (!(p < e && *p >= '0' && *p <= '9'))
    return FALSE;
  if (!digits_u64(&p, e, &w) || w > UINT64_MAX / 2)
    return FALSE;
  uint64_t f = 0;
  if (p < e && *p == '.') {
    p++;
    int k = 0;
    while (p < e && *p >= '0' && *p <= '9') {
      if (k < 6)
        f = f * 10 + (uint64_t)(*p - '0');
      else if (k == 6 && *p >= '5')
        f++; /* half away from zero on the magnitude */
      k++;
      p++;
    }
    for (; k < 6; k++)
      f *= 10;
    if (f >= 1000000) {
      f -= 1000000;
      w++;
    }
  }
  if (p != e)
    return FALSE;
  *whole = w;
  *frac = f;
  return TRUE;
}

gboolean fe_json_us_to_ps_n(const char *text, size_t n, sim_time_ps *out)
{
  gboolean neg;
  uint64_t w, f;
  if (parse_us_decimal(text, n, &neg, &w, &f)) {
    if (w > (uint64_t)(INT64_MAX - 999999) / 1000000)
      return FALSE;
    int64_t v = (int64_t)(w * 1000000 + f);
    *out = neg ? -v : v;
    return TRUE;
  }
  gboolean ok;
  double d = strtod_n(text, n, &ok);
  if (!ok)
    return FALSE;
  return wisp_ps_from_us(d, out);
}

gboolean fe_json_us_to_ps(const char *text, sim_time_ps *out)
{
  return fe_json_us_to_ps_n(text, strlen(text), out);
}

gboolean fe_json_us_split_n(const char *text, size_t n, int64_t *whole_us, int64_t *frac_ps)
{
  gboolean neg;
  uint64_t w, f;
  if (!parse_us_decimal(text, n, &neg, &w, &f)) {
    gboolean ok;
    double d = strtod_n(text, n, &ok);
    if (!ok || !isfinite(d) || fabs(d) > 4e18)
      return FALSE;
    double fl = floor(d);
    *whole_us = (int64_t)fl;
    *frac_ps = (int64_t)llround((d - fl) * 1e6);
    if (*frac_ps >= 1000000) {
      *frac_ps -= 1000000;
      (*whole_us)++;
    }
    return TRUE;
  }
  if (w > (uint64_t)INT64_MAX - 1)
    return FALSE;
  if (!neg) {
    *whole_us = (int64_t)w;
    *frac_ps = (int64_t)f;
  } else {
    *whole_us = -(int64_t)w - (f > 0);
    *frac_ps = f > 0 ? 1000000 - (int64_t)f : 0;
  }
  return TRUE;
}

gboolean fe_json_us_split(const char *text, int64_t *whole_us, int64_t *frac_ps)
{
  return fe_json_us_split_n(text, strlen(text), whole_us, frac_ps);
}
