/* kineto_decode_ip.c: one Kineto event object decoded in place, on the raw
 * bytes of the tokenizer's buffer (fe_json_ip.h) instead of token by
 * token: the fast path of the parse.
 *
 * It makes the same decisions as kineto_decode.c (the scratch helpers of
 * kineto_parse_internal.h are shared) and returns FALSE to bail: the
 * caller (kineto_parse.c) then reads the whole event again through the
 * tokenizer, which yields the same result or the same error, so only
 * events that are well-formed and plain (no string escapes, no Input
 * Dims/Input type to decode, within the window) are finished here.
 * Nothing outside the scratch record is touched before the closing brace
 * has been checked.  O(bytes of the event).
 */
#include "config.h"

#include "frontends/kineto_parse_internal.h"
#include "frontends/fe_json_ip.h"

/* Reads an integer value at *q like kineto_decode.c's read_int: a number
 * or a numeric string sets *out; null is skipped; any other value is
 * skipped and sets *out to `bad` unless that is KT_ABSENT. */
FE_JSON_INLINE gboolean ip_int_value(const uint8_t **q, const uint8_t *e, int64_t *out, int64_t bad)
{
  const char *s;
  size_t n;
  int64_t v;
  if (**q == '"') {
    if (!fe_json_ip_string(q, e, &s, &n))
      return FALSE;
  } else if (**q == '-' || (**q >= '0' && **q <= '9')) {
    if (!fe_json_ip_number(q, e, &s, &n))
      return FALSE;
  } else {
    if (**q != 'n' && bad != KT_ABSENT)
      *out = bad;
    return fe_json_ip_skip(q, e);
  }
  if (fe_json_int_n(s, n, &v))
    *out = v;
  else if (bad != KT_ABSENT)
    *out = bad;
  return TRUE;
}

/* Moves past whitespace and one ',' (TRUE, *more set) or the closer
 * (TRUE, *more clear). */
FE_JSON_INLINE gboolean ip_next_member(const uint8_t **q, const uint8_t *e, uint8_t closer, gboolean *more)
{
  if (!fe_json_ip_ws(q, e))
    return FALSE;
  if (**q == ',') {
    (*q)++;
    *more = TRUE;
    return fe_json_ip_ws(q, e);
  }
  if (**q != closer)
    return FALSE;
  (*q)++;
  *more = FALSE;
  return TRUE;
}

/* Reads a member name and its ':' at *q; *q is left at the value. */
FE_JSON_INLINE gboolean ip_key(const uint8_t **q, const uint8_t *e, const char **k, size_t *kl)
{
  if (**q != '"' || !fe_json_ip_string(q, e, k, kl) || !fe_json_ip_ws(q, e) || **q != ':')
    return FALSE;
  (*q)++;
  return fe_json_ip_ws(q, e);
}

/* Steps into the object at *q ('{'): whitespace, then either its first
 * member (*more set) or its '}' (*more clear, *q past it). */
FE_JSON_INLINE gboolean ip_open_object(const uint8_t **q, const uint8_t *e, gboolean *more)
{
  (*q)++;
  if (!fe_json_ip_ws(q, e))
    return FALSE;
  *more = **q != '}';
  if (!*more)
    (*q)++;
  return TRUE;
}

static gboolean ip_args(kt_parser *p, const uint8_t **qq, const uint8_t *e)
{
  kt_scratch *sc = &p->sc;
  const uint8_t *q = *qq;
  gboolean more;
  if (*q != '{')
    return fe_json_ip_skip(qq, e);
  if (!ip_open_object(&q, e, &more))
    return FALSE;
  while (more) {
    const char *k, *s;
    size_t kl, n;
    if (!ip_key(&q, e, &k, &kl))
      return FALSE;
    int code = kt_p_arg_code(p, k, kl);
    if (code == 0) {
      if (!fe_json_ip_skip(&q, e))
        return FALSE;
    } else if (code < 100) {
      int x = code - 1;
      if (*q == '"') {
        if (!fe_json_ip_string(&q, e, &s, &n))
          return FALSE;
        kt_scratch_str_arg(sc, x, s, n);
      } else if (!fe_json_ip_skip(&q, e)) {
        return FALSE;
      }
    } else if (code < 200) {
      int x = code - 100;
      if (!ip_int_value(&q, e, &sc->i[x], kt_p_int_bad(x)))
        return FALSE;
      kt_scratch_int_arg(sc, x);
    } else {
      return FALSE; /* Input Dims / Input type: read_dims and read_types decode them */
    }
    if (!ip_next_member(&q, e, '}', &more))
      return FALSE;
  }
  *qq = q;
  return TRUE;
}

/* Decodes the event object at *qq ('{') and finishes it; *qq moves past
 * its '}'.  FALSE: bail (nothing recorded). */
gboolean kt_p_ip_event(kt_parser *p, uint32_t file_index, const uint8_t **qq, const uint8_t *e)
{
  kt_scratch *sc = &p->sc;
  const uint8_t *q = *qq;
  gboolean more;
  kt_scratch_reset(sc);
  if (!ip_open_object(&q, e, &more))
    return FALSE;
  while (more) {
    const char *k, *s;
    size_t kl, n;
    if (!ip_key(&q, e, &k, &kl))
      return FALSE;
    int kc = kl >= 2 && kl <= 4 ? kt_p_event_key(k, kl) : EK_OTHER;
    uint8_t c = *q;
    switch (kc) {
    case EK_PH:
    case EK_CAT:
    case EK_NAME:
      if (c != '"') {
        if (!fe_json_ip_skip(&q, e))
          return FALSE;
        break;
      }
      if (!fe_json_ip_string(&q, e, &s, &n))
        return FALSE;
      if (kc == EK_PH) {
        sc->ph = n ? s[0] : 0;
      } else if (kc == EK_CAT) {
        sc->cat = kt_p_cat_of(s, n);
      } else {
        kt_scratch_name(sc, s, n);
      }
      break;
    case EK_PID:
    case EK_TID:
      if (!ip_int_value(&q, e, kc == EK_PID ? &sc->pid : &sc->tid, KT_ABSENT))
        return FALSE;
      break;
    case EK_TS:
    case EK_DUR:
      if (c == 'n') { /* null: absent */
        if (!fe_json_ip_skip(&q, e))
          return FALSE;
        break;
      }
      if (!(c == '-' || (c >= '0' && c <= '9')))
        return FALSE; /* not a number: the tokenizer path reports it */
      if (!fe_json_ip_number(&q, e, &s, &n) || !kt_scratch_time(sc, kc == EK_TS, s, n))
        return FALSE; /* out of range: the tokenizer path reports it */
      break;
    case EK_ARGS:
      if (kt_p_args_unneeded(sc) ? !fe_json_ip_skip(&q, e) : !ip_args(p, &q, e))
        return FALSE;
      break;
    default:
      if (!fe_json_ip_skip(&q, e))
        return FALSE;
      break;
    }
    if (!ip_next_member(&q, e, '}', &more))
      return FALSE;
  }
  kt_p_finish_event(p, file_index);
  *qq = q;
  return TRUE;
}
