/* kineto_decode.c: one Kineto event object decoded token by token through
 * the pull tokenizer (fe_json.h) into the scratch record: the general
 * path, taken for every event the in-place decoder (kineto_decode_ip.c)
 * hands back and for every event when KT_PARSE_TOKENS_ONLY is set.  It
 * holds the table of args the frontend reads and decodes Input Dims and
 * Input type, and it reports typed errors ("ts" must be a number).  The
 * event is finished by kineto_classify.c.  O(bytes of the event).
 */
#include "config.h"

#include "frontends/kineto_parse_internal.h"


/* The args the frontend reads, with their codes (K_STR: string-valued,
 * K_INT: integer-valued, K_DIMS / K_TYPES: Input Dims / Input type). */
const kt_arg_entry kt_p_arg_table[] = {
  /* "Data Type" is not written by Kineto; CCL-Bench's mock trace generator
   * uses it instead of "dtype", so it is read as the same field. */
  { "Collective name", K_STR(S_COLL) }, { "dtype", K_STR(S_DTYPE) }, { "Data Type", K_STR(S_DTYPE) },
  { "Process Group Name", K_STR(S_PG_NAME) }, { "Process Group Description", K_STR(S_PG_DESC) },
  { "Process Group Ranks", K_STR(S_PG_RANKS) }, { "In split size", K_STR(S_IN_SPLIT) },
  { "Out split size", K_STR(S_OUT_SPLIT) }, { "kind", K_STR(S_KIND) },
  { "External id", K_INT(I_EXT) }, { "correlation", K_INT(I_CORR) }, { "stream", K_INT(I_STREAM) },
  { "device", K_INT(I_DEVICE) }, { "In msg nelems", K_INT(I_IN_NELEMS) }, { "Out msg nelems", K_INT(I_OUT_NELEMS) },
  { "Group size", K_INT(I_GROUP_SIZE) }, { "Global rank start", K_INT(I_RANK_START) },
  { "Global rank stride", K_INT(I_RANK_STRIDE) }, { "Seq", K_INT(I_SEQ) }, { "Src Rank", K_INT(I_SRC) },
  { "Dst Rank", K_INT(I_DST) }, { "Rank", K_INT(I_RANK) }, { "wait_on_stream", K_INT(I_WAIT_STREAM) },
  { "wait_on_cuda_event_record_corr_id", K_INT(I_WAIT_CORR) }, { "bytes", K_INT(I_BYTES) },
  { "Bytes", K_INT(I_MEM_BYTES) }, { "Addr", K_INT(I_MEM_ADDR) }, { "Device Id", K_INT(I_MEM_DEV_ID) },
  { "Device Type", K_INT(I_MEM_DEV_TYPE) }, { "Input Dims", K_DIMS }, { "Input type", K_TYPES },
};
G_STATIC_ASSERT(G_N_ELEMENTS(kt_p_arg_table) == KT_P_N_ARGS);

void kt_p_arg_index_init(kt_arg_index *x)
{
  memset(x, 0, sizeof *x);
  size_t k = 0;
  for (size_t n = 0; n < ARG_MAX_LEN; n++) {
    x->first[n] = (uint8_t)k;
    for (size_t i = 0; i < G_N_ELEMENTS(kt_p_arg_table); i++)
      if (strlen(kt_p_arg_table[i].key) == n) {
        x->order[k++] = (uint8_t)i;
        x->count[n]++;
      }
  }
  g_assert(k == G_N_ELEMENTS(kt_p_arg_table)); /* every key is shorter than ARG_MAX_LEN */
}

/* Reads an integer value (number, or a numeric string); null leaves *out
 * unchanged, any other value sets it to `bad` unless that is KT_ABSENT
 * (then it is left unchanged too).  Returns FALSE only on a parse error. */
static gboolean read_int(kt_parser *p, int64_t *out, int64_t bad, GError **error)
{
  fe_json_tok t;
  if (!fe_json_next(p->j, &t, error))
    return FALSE;
  int64_t v;
  if ((t == FE_JSON_NUMBER || t == FE_JSON_STRING) && fe_json_int(fe_json_text(p->j, NULL), &v)) {
    *out = v;
    return TRUE;
  }
  if (t != FE_JSON_NULL && bad != KT_ABSENT)
    *out = bad;
  return fe_json_skip(p->j, t, error);
}

gboolean kt_p_read_int_value(kt_parser *p, int64_t *out, GError **error)
{
  return read_int(p, out, KT_ABSENT, error);
}

/* Input Dims: products of the first two top-level shapes. */
static gboolean read_dims(kt_parser *p, GError **error)
{
  kt_scratch *sc = &p->sc;
  fe_json_tok t;
  if (!fe_json_next(p->j, &t, error))
    return FALSE;
  if (t != FE_JSON_ARR_BEGIN)
    return fe_json_skip(p->j, t, error);
  for (int idx = 0;; idx++) {
    if (!fe_json_next(p->j, &t, error))
      return FALSE;
    if (t == FE_JSON_ARR_END)
      return TRUE;
    if (t != FE_JSON_ARR_BEGIN) {
      if (!fe_json_skip(p->j, t, error))
        return FALSE;
      continue;
    }
    /* A shape: numbers; nested lists (TensorList) make it a non-tensor entry. */
    int64_t prod = 1;
    gboolean valid = TRUE, any = FALSE;
    for (;;) {
      if (!fe_json_next(p->j, &t, error))
        return FALSE;
      if (t == FE_JSON_ARR_END)
        break;
      int64_t v;
      if (t == FE_JSON_NUMBER && fe_json_int(fe_json_text(p->j, NULL), &v) && v >= 0) {
        any = TRUE;
        if (v != 0 && prod > INT64_MAX / v)
          valid = FALSE;
        else
          prod *= v;
      } else {
        valid = FALSE;
        if (!fe_json_skip(p->j, t, error))
          return FALSE;
      }
    }
    if (idx < 2 && valid && any)
      sc->i[idx == 0 ? I_NUMEL0 : I_NUMEL1] = prod;
  }
}

static gboolean read_types(kt_parser *p, GError **error)
{
  kt_scratch *sc = &p->sc;
  fe_json_tok t;
  if (!fe_json_next(p->j, &t, error))
    return FALSE;
  if (t != FE_JSON_ARR_BEGIN)
    return fe_json_skip(p->j, t, error);
  for (int idx = 0;; idx++) {
    if (!fe_json_next(p->j, &t, error))
      return FALSE;
    if (t == FE_JSON_ARR_END)
      return TRUE;
    if (t == FE_JSON_STRING && idx < 2) {
      int k = idx == 0 ? S_TYPE0 : S_TYPE1;
      size_t len;
      const char *s = fe_json_text(p->j, &len);
      g_string_assign(sc->s[k], s);
      sc->has_s[k] = TRUE;
    } else if (!fe_json_skip(p->j, t, error)) {
      return FALSE;
    }
  }
}

static gboolean read_args(kt_parser *p, GError **error)
{
  kt_scratch *sc = &p->sc;
  fe_json_tok t;
  if (!fe_json_next(p->j, &t, error))
    return FALSE;
  if (t != FE_JSON_OBJ_BEGIN)
    return fe_json_skip(p->j, t, error);
  for (;;) {
    if (!fe_json_next(p->j, &t, error))
      return FALSE;
    if (t == FE_JSON_OBJ_END)
      return TRUE;
    size_t klen;
    const char *kt = fe_json_text(p->j, &klen);
    int code = kt_p_arg_code(p, kt, klen);
    if (code == 0) {
      if (!fe_json_skip_value(p->j, error))
        return FALSE;
    } else if (code < 100) {
      int k = code - 1;
      if (!fe_json_next(p->j, &t, error))
        return FALSE;
      if (t == FE_JSON_STRING) {
        const char *text = fe_json_text(p->j, NULL);
        kt_scratch_str_arg(sc, k, text, strlen(text)); /* up to an escaped NUL */
      } else if (!fe_json_skip(p->j, t, error)) {
        return FALSE;
      }
    } else if (code < 200) {
      int k = code - 100;
      if (!read_int(p, &sc->i[k], kt_p_int_bad(k), error))
        return FALSE;
      kt_scratch_int_arg(sc, k);
    } else if (code == 200) {
      if (!read_dims(p, error))
        return FALSE;
    } else {
      if (!read_types(p, error))
        return FALSE;
    }
  }
}

gboolean kt_p_read_event(kt_parser *p, uint32_t file_index, GError **error)
{
  kt_scratch *sc = &p->sc;
  fe_json_tok t;
  kt_scratch_reset(sc);
  for (;;) {
    if (!fe_json_next(p->j, &t, error))
      return FALSE;
    if (t == FE_JSON_OBJ_END)
      break;
    size_t klen;
    const char *k = fe_json_text(p->j, &klen);
    /* Event keys are short: compare length first, strcmp only on a length hit. */
    if (klen > 4 || klen < 2) {
      if (!fe_json_skip_value(p->j, error))
        return FALSE;
      continue;
    }
    int kc = kt_p_event_key(k, klen);
    if (kc == EK_PH) {
      if (!fe_json_next(p->j, &t, error))
        return FALSE;
      if (t == FE_JSON_STRING)
        sc->ph = fe_json_text(p->j, NULL)[0];
      else if (!fe_json_skip(p->j, t, error))
        return FALSE;
    } else if (kc == EK_CAT) {
      if (!fe_json_next(p->j, &t, error))
        return FALSE;
      if (t == FE_JSON_STRING) {
        const char *c = fe_json_text(p->j, NULL);
        sc->cat = kt_p_cat_of(c, strlen(c));
      }
      else if (!fe_json_skip(p->j, t, error))
        return FALSE;
    } else if (kc == EK_NAME) {
      if (!fe_json_next(p->j, &t, error))
        return FALSE;
      if (t == FE_JSON_STRING) {
        size_t len;
        const char *s = fe_json_text(p->j, &len);
        kt_scratch_name(sc, s, strnlen(s, len));
      } else if (!fe_json_skip(p->j, t, error)) {
        return FALSE;
      }
    } else if (kc == EK_PID || kc == EK_TID) {
      int64_t *dst = kc == EK_PID ? &sc->pid : &sc->tid;
      if (!fe_json_next(p->j, &t, error))
        return FALSE;
      int64_t v;
      if (t == FE_JSON_NUMBER && fe_json_int(fe_json_text(p->j, NULL), &v))
        *dst = v;
      else if (t == FE_JSON_STRING && fe_json_int(fe_json_text(p->j, NULL), &v))
        *dst = v;
      else if (!fe_json_skip(p->j, t, error))
        return FALSE;
    } else if (kc == EK_TS || kc == EK_DUR) {
      gboolean is_ts = kc == EK_TS;
      if (!fe_json_next(p->j, &t, error))
        return FALSE;
      if (t == FE_JSON_NULL)
        continue; /* absent, as a missing key */
      if (t != FE_JSON_NUMBER) {
        /* Typed reading: "dur": "abc" or "ts": [1, 2] would otherwise drop
         * the time silently (the kernel vanishes or gets a wrong length). */
        fe_json_error(p->j, error, "\"%s\" must be a number of microseconds, found %s; fix the event",
                      is_ts ? "ts" : "dur", fe_json_tok_kind(t));
        return FALSE;
      }
      const char *txt = fe_json_text(p->j, NULL);
      if (!kt_scratch_time(sc, is_ts, txt, strlen(txt))) {
        fe_json_error(p->j, error, is_ts ? "timestamp %.40s is out of range"
                                         : "duration %.40s is negative or out of range", txt);
        return FALSE;
      }
    } else if (kc == EK_ARGS) {
      if (kt_p_args_unneeded(sc)) {
        /* Already known to be dropped (e.g. a non-collective cpu_op): skip
         * the args without decoding them.  [memory] instants need Bytes. */
        if (!fe_json_skip_value(p->j, error))
          return FALSE;
      } else if (!read_args(p, error)) {
        return FALSE;
      }
    } else if (!fe_json_skip_value(p->j, error)) {
      return FALSE;
    }
  }
  kt_p_finish_event(p, file_index);
  return TRUE;
}
