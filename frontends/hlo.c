/* hlo.c: one-line HLO instruction parser, shapes and collective sizing
 * (see hlo.h); replica groups are hlo_groups.c. */
#include "config.h"

#include "frontends/hlo_internal.h"

#include <string.h>

const char *fe_hlo_kind_name(fe_hlo_kind k)
{
  switch (k) {
  case FE_HLO_ALL_REDUCE: return "all-reduce";
  case FE_HLO_ALL_GATHER: return "all-gather";
  case FE_HLO_REDUCE_SCATTER: return "reduce-scatter";
  case FE_HLO_ALL_TO_ALL: return "all-to-all";
  case FE_HLO_RAGGED_ALL_TO_ALL: return "ragged-all-to-all";
  case FE_HLO_COLLECTIVE_PERMUTE: return "collective-permute";
  case FE_HLO_COLLECTIVE_BROADCAST: return "collective-broadcast";
  case FE_HLO_SEND: return "send";
  case FE_HLO_RECV: return "recv";
  case FE_HLO_OTHER: break;
  }
  return "other";
}

typedef struct {
  const char *name;
  unsigned bits;
} hlo_dtype;

/* Element sizes in bits, from XLA's PrimitiveType list (doc/xla.md §3). */
static const hlo_dtype hlo_dtypes[] = {
  {"pred", 8}, {"s2", 2}, {"s4", 4}, {"s8", 8}, {"s16", 16}, {"s32", 32}, {"s64", 64},
  {"u2", 2}, {"u4", 4}, {"u8", 8}, {"u16", 16}, {"u32", 32}, {"u64", 64},
  {"f16", 16}, {"bf16", 16}, {"f32", 32}, {"f64", 64},
  {"f8e4m3fn", 8}, {"f8e5m2", 8}, {"f8e4m3fnuz", 8}, {"f8e5m2fnuz", 8},
  {"f8e4m3b11fnuz", 8}, {"f8e4m3", 8}, {"f8e3m4", 8}, {"f8e8m0fnu", 8},
  {"f4e2m1fn", 4}, {"c64", 64}, {"c128", 128}, {"token", 0},
};

gboolean fe_hlo_dtype_bits(const char *name, size_t len, unsigned *bits)
{
  for (size_t i = 0; i < G_N_ELEMENTS(hlo_dtypes); i++)
    if (strlen(hlo_dtypes[i].name) == len && memcmp(hlo_dtypes[i].name, name, len) == 0) {
      *bits = hlo_dtypes[i].bits;
      return TRUE;
    }
  return FALSE;
}

static gboolean parse_shape_rec(hlo_ctx *c, const char *p, const char **end, uint64_t *bytes,
                                uint64_t *first, int depth, GError **error)
{
  if (depth > 16)
    return hlo_fail(error, c->start, p, "tuple nesting deeper than 16");
  p = hlo_skip_ws(p);
  if (*p == '(') {
    uint64_t total = 0;
    gboolean have_first = FALSE;
    p = hlo_skip_ws(p + 1);
    if (*p == ')') {
      *bytes = 0;
      if (first)
        *first = 0;
      *end = p + 1;
      return TRUE;
    }
    for (;;) {
      uint64_t b;
      if (!parse_shape_rec(c, p, &p, &b, NULL, depth + 1, error))
        return FALSE;
      if (total > UINT64_MAX - b)
        return hlo_fail(error, c->start, p, "tuple size overflows 64 bits");
      total += b;
      if (!have_first) {
        if (first)
          *first = b;
        have_first = TRUE;
      }
      p = hlo_skip_ws(p);
      if (*p == ',') {
        p++;
        continue;
      }
      if (*p == ')') {
        p++;
        break;
      }
      return hlo_fail(error, c->start, p, "expected ',' or ')' in a tuple shape");
    }
    *bytes = total;
    *end = p;
    return TRUE;
  }
  const char *t = p;
  while (g_ascii_isalnum(*p))
    p++;
  unsigned bits;
  if (p == t)
    return hlo_fail(error, c->start, t, "expected a shape");
  if (!fe_hlo_dtype_bits(t, (size_t) (p - t), &bits)) {
    char *msg = g_strdup_printf("unknown element type \"%.*s\"", (int) (p - t), t);
    gboolean r = hlo_fail(error, c->start, t, msg);
    g_free(msg);
    return r;
  }
  if (*p != '[')
    return hlo_fail(error, c->start, p, "expected '[' after the element type");
  p++;
  /* Element count as an exact product; the bit total must fit in 64 bits. */
  unsigned __int128 elems = 1;
  int rank = 0;
  p = hlo_skip_ws(p);
  if (*p != ']') {
    for (;;) {
      p = hlo_skip_ws(p);
      uint64_t d;
      if (p[0] == '<' && p[1] == '=') {
        p += 2;
        c->upper_bound = TRUE;
      } else if (*p == '?') {
        return hlo_fail(error, c->start, p, "unbounded dynamic dimension '?' has no size");
      }
      if (!hlo_parse_u64(&p, &d))
        return hlo_fail(error, c->start, p, "expected a dimension size");
      if (++rank > HLO_MAX_RANK)
        return hlo_fail(error, c->start, p, "more than 64 dimensions");
      elems *= d;
      if (elems > ((unsigned __int128) UINT64_MAX))
        return hlo_fail(error, c->start, p, "shape size overflows 64 bits");
      p = hlo_skip_ws(p);
      if (*p == ',') {
        p++;
        continue;
      }
      if (*p == ']')
        break;
      return hlo_fail(error, c->start, p, "expected ',' or ']' in dimensions");
    }
  }
  p++;
  if (*p == '{') {
    const char *q = hlo_skip_braces(p);
    if (!q)
      return hlo_fail(error, c->start, p, "unterminated layout '{'");
    p = q;
  }
  unsigned __int128 total_bits = elems * bits;
  unsigned __int128 b = (total_bits + 7) / 8;
  if (b > UINT64_MAX)
    return hlo_fail(error, c->start, p, "shape size overflows 64 bits");
  *bytes = (uint64_t) b;
  if (first)
    *first = (uint64_t) b;
  *end = p;
  return TRUE;
}

gboolean fe_hlo_parse_shape(const char *text, const char **end, uint64_t *bytes,
                            uint64_t *first_elem_bytes, GError **error)
{
  hlo_ctx c = {text, FALSE};
  return parse_shape_rec(&c, text, end, bytes, first_elem_bytes, 0, error);
}

typedef struct {
  const char *prefix;
  fe_hlo_kind kind;
} hlo_kind_name;

/* Longest names first so that "all-gather" is not taken for "all-gather-start". */
static const hlo_kind_name hlo_kinds[] = {
  {"ragged-all-to-all", FE_HLO_RAGGED_ALL_TO_ALL},
  {"collective-broadcast", FE_HLO_COLLECTIVE_BROADCAST},
  {"collective-permute", FE_HLO_COLLECTIVE_PERMUTE},
  {"reduce-scatter", FE_HLO_REDUCE_SCATTER},
  {"all-reduce", FE_HLO_ALL_REDUCE},
  {"all-gather", FE_HLO_ALL_GATHER},
  {"all-to-all", FE_HLO_ALL_TO_ALL},
  {"send", FE_HLO_SEND},
  {"recv", FE_HLO_RECV},
};

/* Matches "<kind>", "<kind>-start", "<kind>-done" exactly (rest == end) or,
 * for names, followed by '.' and a suffix. */
static fe_hlo_kind match_kind(const char *s, gboolean allow_suffix, fe_hlo_phase *phase)
{
  for (size_t i = 0; i < G_N_ELEMENTS(hlo_kinds); i++) {
    size_t n = strlen(hlo_kinds[i].prefix);
    if (strncmp(s, hlo_kinds[i].prefix, n) != 0)
      continue;
    const char *r = s + n;
    fe_hlo_phase ph = FE_HLO_SYNC;
    if (g_str_has_prefix(r, "-start")) {
      ph = FE_HLO_START;
      r += 6;
    } else if (g_str_has_prefix(r, "-done")) {
      ph = FE_HLO_DONE;
      r += 5;
    }
    if (*r == '\0' || (allow_suffix && *r == '.')) {
      *phase = ph;
      return hlo_kinds[i].kind;
    }
  }
  *phase = FE_HLO_SYNC;
  return FE_HLO_OTHER;
}

fe_hlo_kind fe_hlo_classify(const char *opcode, const char *instr_name, fe_hlo_phase *phase)
{
  fe_hlo_phase ph;
  fe_hlo_kind k = match_kind(opcode, FALSE, &ph);
  if (k != FE_HLO_OTHER) {
    *phase = ph;
    return k;
  }
  if ((strcmp(opcode, "async-start") == 0 || strcmp(opcode, "async-done") == 0) && instr_name) {
    k = match_kind(instr_name, TRUE, &ph);
    if (k != FE_HLO_OTHER) {
      *phase = opcode[6] == 's' ? FE_HLO_START : FE_HLO_DONE;
      return k;
    }
  }
  *phase = FE_HLO_SYNC;
  return FE_HLO_OTHER;
}

void fe_hlo_instr_clear(fe_hlo_instr *in)
{
  g_free(in->name);
  g_free(in->opcode);
  g_free(in->operand0_name);
  g_free(in->group_off);
  g_free(in->group_ids);
  g_free(in->pairs);
  memset(in, 0, sizeof *in);
}

/* Finds the end of an attribute value: the next top-level ',' or the end. */
static const char *attr_value_end(const char *p)
{
  int depth = 0;
  gboolean quoted = FALSE;
  for (; *p; p++) {
    if (quoted) {
      if (*p == '\\' && p[1])
        p++;
      else if (*p == '"')
        quoted = FALSE;
      continue;
    }
    if (*p == '"')
      quoted = TRUE;
    else if (*p == '{' || *p == '(' || *p == '[')
      depth++;
    else if (*p == '}' || *p == ')' || *p == ']')
      depth--;
    else if (*p == ',' && depth == 0)
      return p;
  }
  return p;
}

static gboolean parse_pairs(hlo_ctx *c, const char *p, fe_hlo_instr *out, GError **error)
{
  uint32_t ng;
  uint32_t *off;
  int64_t *ids;
  if (!hlo_parse_groups(c, p, &p, &ng, &off, &ids, error))
    return FALSE;
  for (uint32_t g = 0; g < ng; g++)
    if (off[g + 1] - off[g] != 2) {
      g_free(off);
      g_free(ids);
      return hlo_fail(error, c->start, p, "source_target_pairs entries must be {source,target}");
    }
  g_free(out->pairs);
  out->has_pairs = TRUE;
  out->n_pairs = ng;
  out->pairs = ids;
  g_free(off);
  return TRUE;
}

/* Handles one `key=value` attribute; unknown keys are ignored. */
static gboolean parse_attr(hlo_ctx *c, const char *key, size_t klen, const char *val,
                           const char *vend, fe_hlo_instr *out, GError **error)
{
#define KEY_IS(s) (klen == strlen(s) && memcmp(key, s, klen) == 0)
  if (KEY_IS("replica_groups")) {
    const char *e;
    g_free(out->group_off);
    g_free(out->group_ids);
    out->group_off = NULL;
    out->group_ids = NULL;
    if (!hlo_parse_groups(c, val, &e, &out->n_groups, &out->group_off, &out->group_ids, error))
      return FALSE;
    if (hlo_skip_ws(e) != vend)
      return hlo_fail(error, c->start, e, "unparsed text after replica_groups");
    out->has_replica_groups = TRUE;
  } else if (KEY_IS("source_target_pairs")) {
    return parse_pairs(c, val, out, error);
  } else if (KEY_IS("channel_id")) {
    const char *p = val;
    if (!hlo_parse_i64(&p, &out->channel_id))
      return hlo_fail(error, c->start, val, "channel_id is not an integer");
    out->has_channel_id = TRUE;
  } else if (KEY_IS("use_global_device_ids")) {
    if (g_str_has_prefix(val, "true"))
      out->use_global_device_ids = 1;
    else if (g_str_has_prefix(val, "false"))
      out->use_global_device_ids = 0;
    else
      return hlo_fail(error, c->start, val, "use_global_device_ids is neither true nor false");
  } else if (KEY_IS("frontend_attributes") && !out->has_pairs) {
    /* send/recv carry their pairs as _xla_send_recv_source_target_pairs="{{0,1}}". */
    const char *k = g_strstr_len(val, vend - val, "_xla_send_recv_source_target_pairs=\"");
    if (k)
      return parse_pairs(c, k + strlen("_xla_send_recv_source_target_pairs=\""), out, error);
  }
  return TRUE;
#undef KEY_IS
}

/* Sets bytes/sized for collectives per the comm_size convention. */
static void size_collective(fe_hlo_instr *in, const char **reason)
{
  in->sized = FALSE;
  if (in->kind == FE_HLO_OTHER || in->phase == FE_HLO_DONE)
    return;
  uint64_t group_n = 0;
  if (in->has_replica_groups && in->n_groups > 0)
    group_n = in->group_off[1] - in->group_off[0];
  gboolean have_ops = in->n_operand_shapes == in->n_operands && in->n_operands > 0;
  switch (in->kind) {
  case FE_HLO_ALL_REDUCE:
  case FE_HLO_ALL_TO_ALL:
  case FE_HLO_COLLECTIVE_BROADCAST:
  case FE_HLO_COLLECTIVE_PERMUTE:
    if (have_ops) {
      /* Permute-start may carry extra operands (output buffer, contexts): use the first. */
      in->bytes = in->kind == FE_HLO_COLLECTIVE_PERMUTE ? in->operand0_bytes : in->operand_bytes;
    } else if (in->phase == FE_HLO_SYNC) {
      /* Same shape in and out: the result is the buffer. */
      in->bytes = in->result_bytes;
      in->bytes_derived = TRUE;
    } else {
      *reason = "async start without operand shapes";
      return;
    }
    break;
  case FE_HLO_SEND:
    if (!have_ops) {
      *reason = "send without operand shapes";
      return;
    }
    in->bytes = in->operand0_bytes;
    break;
  case FE_HLO_RECV:
    /* recv's result is (buffer, context, token). */
    in->bytes = in->result_first_bytes;
    break;
  case FE_HLO_RAGGED_ALL_TO_ALL:
    if (!have_ops) {
      *reason = "ragged-all-to-all without operand shapes";
      return;
    }
    in->bytes = in->operand0_bytes;
    in->bytes_upper_bound = TRUE;
    break;
  case FE_HLO_ALL_GATHER:
    if (have_ops) {
      in->bytes = in->operand_bytes;
    } else if (in->phase == FE_HLO_SYNC && group_n > 0 && in->result_bytes % group_n == 0) {
      in->bytes = in->result_bytes / group_n;
      in->bytes_derived = TRUE;
    } else {
      *reason = "all-gather without operand shapes or replica groups";
      return;
    }
    break;
  case FE_HLO_REDUCE_SCATTER:
    if (have_ops) {
      in->bytes = in->operand_bytes;
    } else if (in->phase == FE_HLO_SYNC && group_n > 0 && in->result_bytes <= UINT64_MAX / group_n) {
      in->bytes = in->result_bytes * group_n;
      in->bytes_derived = TRUE;
    } else {
      *reason = "reduce-scatter without operand shapes or replica groups";
      return;
    }
    break;
  case FE_HLO_OTHER:
    return;
  }
  /* The bound every reader applies (wisp_util.h): a shape of bf16[2^62]
   * (2^63 bytes) or s8[2^64 - 1] was taken as a message size. */
  if (in->bytes > WISP_MAX_BYTES) {
    *reason = "a size above 2^50 bytes (1 PiB), more than wisp represents";
    in->bytes = 0;
    return;
  }
  in->sized = TRUE;
}

/* The operand list after the opcode's '(' at *pp: "[shape] %name"
 * separated by top-level commas, their sizes summed (the first's kept) and
 * the first operand's name; *pp is left on the closing ')'. */
static gboolean parse_operands(hlo_ctx *c, const char **pp, fe_hlo_instr *out, GError **error)
{
  const char *p = *pp;
  p = hlo_skip_ws(p);
  if (*p != ')') {
    for (;;) {
      p = hlo_skip_ws(p);
      if (*p != '%' && *p != ')' && *p != ',') {
        uint64_t b;
        if (!parse_shape_rec(c, p, &p, &b, NULL, 0, error))
          return FALSE;
        if (out->n_operand_shapes == 0)
          out->operand0_bytes = b;
        if (out->operand_bytes > UINT64_MAX - b) {
          hlo_fail(error, c->start, p, "operand sizes overflow 64 bits");
          return FALSE;
        }
        out->operand_bytes += b;
        out->n_operand_shapes++;
        p = hlo_skip_ws(p);
      }
      if (*p == '%')
        p++;
      const char *on = p;
      while (hlo_is_ident(*p))
        p++;
      if (out->n_operands == 0 && p > on)
        out->operand0_name = g_strndup(on, (size_t) (p - on));
      out->n_operands++;
      p = hlo_skip_ws(p);
      if (*p == ',') {
        p++;
        continue;
      }
      if (*p == ')')
        break;
      hlo_fail(error, c->start, p, "expected ',' or ')' in the operand list");
      return FALSE;
    }
  }
  *pp = p;
  return TRUE;
}

gboolean fe_hlo_parse_instr(const char *text, fe_hlo_instr *out, const char **unsized_reason,
                            GError **error)
{
  hlo_ctx c = {text, FALSE};
  const char *dummy_reason = NULL;
  const char **reason = unsized_reason ? unsized_reason : &dummy_reason;
  *reason = NULL;
  memset(out, 0, sizeof *out);
  out->use_global_device_ids = -1;
  const char *p = hlo_skip_ws(text);
  if (g_str_has_prefix(p, "ROOT "))
    p = hlo_skip_ws(p + 5);
  if (*p == '%')
    p++;
  const char *n0 = p;
  while (*p && *p != ' ' && *p != '=')
    p++;
  if (p == n0)
    return hlo_fail(error, text, p, "expected an instruction name");
  out->name = g_strndup(n0, (size_t) (p - n0));
  p = hlo_skip_ws(p);
  if (*p != '=') {
    hlo_fail(error, text, p, "expected '=' after the instruction name");
    goto fail;
  }
  if (!parse_shape_rec(&c, p + 1, &p, &out->result_bytes, &out->result_first_bytes, 0, error))
    goto fail;
  p = hlo_skip_ws(p);
  const char *o0 = p;
  while (hlo_is_ident(*p))
    p++;
  if (p == o0 || *p != '(') {
    hlo_fail(error, text, p, "expected an opcode followed by '('");
    goto fail;
  }
  out->opcode = g_strndup(o0, (size_t) (p - o0));
  out->kind = fe_hlo_classify(out->opcode, out->name, &out->phase);
  p++;
  /* Operands: "[shape] %name" separated by top-level commas. */
  if (!parse_operands(&c, &p, out, error))
    goto fail;
  p++;
  /* Attributes. */
  for (;;) {
    p = hlo_skip_ws(p);
    if (*p == '\0')
      break;
    if (*p != ',') {
      hlo_fail(error, text, p, "expected ',' before an attribute");
      goto fail;
    }
    p = hlo_skip_ws(p + 1);
    const char *k = p;
    while (hlo_is_ident(*p))
      p++;
    size_t klen = (size_t) (p - k);
    if (klen == 0 || *p != '=') {
      hlo_fail(error, text, p, "expected key=value");
      goto fail;
    }
    const char *v = p + 1;
    const char *ve = attr_value_end(v);
    if (!parse_attr(&c, k, klen, v, ve, out, error))
      goto fail;
    p = ve;
  }
  if (!out->has_channel_id)
    out->mode = FE_HLO_MODE_CROSS_REPLICA;
  else if (out->use_global_device_ids == 1)
    out->mode = FE_HLO_MODE_FLATTENED_ID;
  else if (out->use_global_device_ids == 0)
    out->mode = FE_HLO_MODE_CROSS_REPLICA_AND_PARTITION;
  else
    out->mode = FE_HLO_MODE_CROSS_PARTITION;
  if (!out->has_channel_id && out->use_global_device_ids == 1 && out->kind != FE_HLO_OTHER) {
    hlo_fail(error, text, text, "use_global_device_ids=true without channel_id is invalid HLO");
    goto fail;
  }
  size_collective(out, reason);
  if (c.upper_bound && out->sized)
    out->bytes_upper_bound = TRUE;
  return TRUE;
fail:
  fe_hlo_instr_clear(out);
  return FALSE;
}
