/* kineto_parse_internal.h: what the files of the Kineto parse share (not
 * installed): the scratch record one event is decoded into, the arg
 * table, the parser state and the small per-member helpers both decoders
 * inline.
 *
 * The parse (stage 1 of doc/ARCHITECTURE.md's Kineto table) is five
 * files, calls going down only:
 *   kineto_parse.c     the file: top-level keys, distributedInfo, the
 *                      event array (each event in place when possible,
 *                      else token by token);
 *   kineto_decode_ip.c one event object decoded on the raw bytes;
 *   kineto_decode.c    one event object decoded token by token (and the
 *                      arg table, Input Dims, Input type);
 *   kineto_classify.c  what a decoded event is: kept (appended to the
 *                      trace) or counted under a skip reason;
 *   kineto_trace.c     the kt_trace itself: interned strings, free,
 *                      compact, dump.
 */
#ifndef WISP_KINETO_PARSE_INTERNAL_H
#define WISP_KINETO_PARSE_INTERNAL_H

#include "frontends/kineto_trace.h"
#include "frontends/fe_json_ip.h" /* the number readers kt_scratch_time uses */

#include <string.h>

G_BEGIN_DECLS

typedef enum {
  CAT_OTHER, CAT_KERNEL, CAT_MEMCPY, CAT_MEMSET, CAT_RUNTIME, CAT_CUDA_SYNC, CAT_CPU_OP,
  CAT_USER_ANNOTATION, CAT_GPU_USER_ANNOTATION, CAT_PYTHON, CAT_NONE,
} kt_ev_cat;

/* String-valued args of interest, in kt_meta order. */
enum { S_COLL, S_DTYPE, S_PG_NAME, S_PG_DESC, S_PG_RANKS, S_IN_SPLIT, S_OUT_SPLIT, S_KIND, S_TYPE0, S_TYPE1, S_N };
/* Integer-valued args. */
enum {
  I_EXT, I_CORR, I_STREAM, I_DEVICE, I_IN_NELEMS, I_OUT_NELEMS, I_GROUP_SIZE, I_RANK_START, I_RANK_STRIDE,
  I_SEQ, I_SRC, I_DST, I_RANK, I_WAIT_STREAM, I_WAIT_CORR, I_BYTES, I_NUMEL0, I_NUMEL1, I_MEM_BYTES,
  I_MEM_ADDR, I_MEM_DEV_ID, I_MEM_DEV_TYPE, I_N
};

typedef struct {
  char ph;
  kt_ev_cat cat;
  GString *name;
  gboolean has_ts, has_dur, has_name;
  int64_t ts_us, ts_frac;
  sim_time_ps dur;
  int64_t pid, tid;
  GString *s[S_N];
  gboolean has_s[S_N];
  int64_t i[I_N];
  gboolean any_meta;
  int rt_kind;             /* runtime_kind(name) once computed, -1 before (kineto_classify.c) */
} kt_scratch;

/* Arg codes: 1-based, strings < 100, integers 100..199, special >= 200. */
#define K_STR(x) (1 + (x))
#define K_INT(x) (100 + (x))
#define K_DIMS 200
#define K_TYPES 201

/* The args the frontend reads, with their codes (kineto_decode.c). */
typedef struct {
  const char *key;
  int code;
} kt_arg_entry;
#define KT_P_N_ARGS 31
extern const kt_arg_entry kt_p_arg_table[KT_P_N_ARGS];

/* Index of kt_p_arg_table by key length: the entries of length n are
 * order[first[n]] .. order[first[n] + count[n] - 1] (at most a few per
 * length, so a lookup is a length test and one or two memcmp). */
#define ARG_MAX_LEN 40

typedef struct {
  uint8_t first[ARG_MAX_LEN], count[ARG_MAX_LEN];
  uint8_t order[KT_P_N_ARGS];
} kt_arg_index;

/* Skip counts gathered during the parse, keyed by the reason's address (the
 * reasons are string literals), and added to t->skipped at the end in the
 * order each reason first occurred: one pointer compare per skipped event
 * instead of hashing the reason text twice. */
#define PARSE_SKIP_SLOTS 32

typedef struct {
  fe_json *j;
  kt_trace *t;
  kt_scratch sc;
  const char *skip_reason[PARSE_SKIP_SLOTS];
  uint64_t skip_n[PARSE_SKIP_SLOTS];
  int n_skip;
  kt_arg_index args;          /* arg name -> code (1-based; strings < 100, ints >= 100, special >= 200) */
  gboolean inplace;        /* decode events in place when possible */
} kt_parser;

static inline void kt_scratch_reset(kt_scratch *sc)
{
  sc->ph = 0;
  sc->cat = CAT_NONE;
  g_string_truncate(sc->name, 0);
  sc->has_ts = sc->has_dur = sc->has_name = FALSE;
  sc->dur = 0;
  sc->pid = sc->tid = -1;
  for (int k = 0; k < S_N; k++)
    sc->has_s[k] = FALSE;
  for (int k = 0; k < I_N; k++)
    sc->i[k] = KT_ABSENT;
  sc->any_meta = FALSE;
  sc->rt_kind = -1;
}

/* Arg-name code of the n bytes at k, 0 for args the frontend ignores. */
static inline int kt_p_arg_code(const kt_parser *p, const char *k, size_t n)
{
  if (n >= ARG_MAX_LEN)
    return 0;
  for (unsigned i = p->args.first[n], e = i + p->args.count[n]; i < e; i++) {
    const char *key = kt_p_arg_table[p->args.order[i]].key;
    if (key[0] == k[0] && !memcmp(key, k, n))
      return kt_p_arg_table[p->args.order[i]].code;
  }
  return 0;
}

/* ---- what a member's value does to the scratch record ----
 * Shared by the tokenizer path (kineto_decode.c) and the in-place
 * path (kineto_decode_ip.c), so both make the same decisions. */

/* String-valued arg x (S_*) with the text [s, s + n). */
static inline void kt_scratch_str_arg(kt_scratch *sc, int x, const char *s, size_t n)
{
  g_string_truncate(sc->s[x], 0);
  g_string_append_len(sc->s[x], s, (gssize)n);
  sc->has_s[x] = TRUE;
  if (x != S_KIND)
    sc->any_meta = TRUE;
}

/* Integer-valued arg x (I_*) has been read into sc->i[x]. */
static inline void kt_scratch_int_arg(kt_scratch *sc, int x)
{
  if (x >= I_IN_NELEMS && x <= I_RANK && sc->i[x] != KT_ABSENT)
    sc->any_meta = TRUE;
}

static inline void kt_scratch_name(kt_scratch *sc, const char *s, size_t n)
{
  g_string_truncate(sc->name, 0);
  g_string_append_len(sc->name, s, (gssize)n);
  sc->has_name = TRUE;
}

/* ts (is_ts) or dur from a number's text [s, s + n); FALSE when it is out
 * of range or a negative duration. */
static inline gboolean kt_scratch_time(kt_scratch *sc, gboolean is_ts, const char *s, size_t n)
{
  if (is_ts) {
    if (!fe_json_us_split_n(s, n, &sc->ts_us, &sc->ts_frac))
      return FALSE;
    sc->has_ts = TRUE;
  } else {
    if (!fe_json_us_to_ps_n(s, n, &sc->dur) || sc->dur < 0)
      return FALSE;
    sc->has_dur = TRUE;
  }
  return TRUE;
}

enum { EK_OTHER, EK_PH, EK_CAT, EK_NAME, EK_PID, EK_TID, EK_TS, EK_DUR, EK_ARGS };

/* Event member names by length and bytes (no strcmp chain in the hot loop). */
static inline int kt_p_event_key(const char *k, size_t len)
{
  switch (len) {
  case 2:
    if (k[0] == 'p' && k[1] == 'h') return EK_PH;
    if (k[0] == 't' && k[1] == 's') return EK_TS;
    return EK_OTHER;
  case 3:
    if (!memcmp(k, "cat", 3)) return EK_CAT;
    if (!memcmp(k, "pid", 3)) return EK_PID;
    if (!memcmp(k, "tid", 3)) return EK_TID;
    if (!memcmp(k, "dur", 3)) return EK_DUR;
    return EK_OTHER;
  case 4:
    if (!memcmp(k, "name", 4)) return EK_NAME;
    if (!memcmp(k, "args", 4)) return EK_ARGS;
    return EK_OTHER;
  default:
    return EK_OTHER;
  }
}

/* kineto_trace.c: a new, empty trace of path; the id of the n bytes at s
 * in t's strings, added on first sight (O(n) expected). */
kt_trace *kt_p_trace_new(const char *path);
uint32_t kt_p_intern_n(kt_trace *t, const char *s, size_t n);

/* kineto_classify.c: the category of the text [s, s + n); whether the
 * event, from the ph/cat/name seen so far, will be dropped whatever its
 * args say; one skipped event counted under reason (a string literal);
 * the gathered counts moved into t->skipped (first-occurrence order); the
 * decoded event appended to the trace if the frontend needs it. */
kt_ev_cat kt_p_cat_of(const char *s, size_t n);
gboolean kt_p_args_unneeded(kt_scratch *sc);
void kt_p_count_skip(kt_parser *p, const char *reason);
void kt_p_flush_skips(kt_parser *p);
void kt_p_finish_event(kt_parser *p, uint32_t file_index);

/* kineto_decode.c: the arg index built from kt_p_arg_table; an integer
 * value (number or numeric string; other values skipped, *out unchanged;
 * FALSE only on a parse error); one event object after its '{', token by
 * token, finished through kt_p_finish_event. */
void kt_p_arg_index_init(kt_arg_index *x);
gboolean kt_p_read_int_value(kt_parser *p, int64_t *out, GError **error);

/* What a wrong-typed value of integer arg x reads as in both decoders:
 * KT_BAD for In/Out msg nelems (typed reading: it must not pass for absent),
 * else KT_ABSENT (skipped). */
static inline int64_t kt_p_int_bad(int x)
{
  return x == I_IN_NELEMS || x == I_OUT_NELEMS ? KT_BAD : KT_ABSENT;
}
gboolean kt_p_read_event(kt_parser *p, uint32_t file_index, GError **error);

/* kineto_decode_ip.c: the event object at *qq ('{') decoded on the raw
 * bytes and finished; *qq moves past its '}'.  FALSE: bail, nothing
 * recorded (the caller reads the event again token by token).  Events
 * longer than KT_P_IP_WINDOW bytes take the tokenizer path. */
#define KT_P_IP_WINDOW (64u * 1024u)
gboolean kt_p_ip_event(kt_parser *p, uint32_t file_index, const uint8_t **qq, const uint8_t *e);

G_END_DECLS
#endif
