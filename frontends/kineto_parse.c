/* kineto_parse.c: stream one Kineto trace file into a kt_trace.
 *
 * One pass over the tokens: top-level keys in any order (traceEvents may
 * come before or after distributedInfo); each event object is decoded into
 * a fixed scratch record (strings in reusable buffers), classified when its
 * closing brace arrives, and either appended to the compact event table or
 * counted under a skip reason.  Cost is O(file bytes); memory is O(events
 * kept + distinct strings kept).  A top-level array (Chrome "JSON array
 * format") is accepted as the event list.
 */
#include "config.h"

#include "frontends/kineto_trace.h"
#include "frontends/kineto_commreg.h"
#include "frontends/fe_json_ip.h"

#include <string.h>

typedef enum {
  CAT_OTHER, CAT_KERNEL, CAT_MEMCPY, CAT_MEMSET, CAT_RUNTIME, CAT_CUDA_SYNC, CAT_CPU_OP,
  CAT_USER_ANNOTATION, CAT_GPU_USER_ANNOTATION, CAT_PYTHON, CAT_NONE,
} ev_cat;

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
  ev_cat cat;
  GString *name;
  gboolean has_ts, has_dur, has_name;
  int64_t ts_us, ts_frac;
  sim_time_ps dur;
  int64_t pid, tid;
  GString *s[S_N];
  gboolean has_s[S_N];
  int64_t i[I_N];
  gboolean any_meta;
  int rt_kind;             /* runtime_kind(name) once computed, -1 before */
} scratch;

/* Arg codes: 1-based, strings < 100, integers 100..199, special >= 200. */
#define K_STR(x) (1 + (x))
#define K_INT(x) (100 + (x))
#define K_DIMS 200
#define K_TYPES 201

/* The args the frontend reads, with their codes (K_STR: string-valued,
 * K_INT: integer-valued, K_DIMS / K_TYPES: Input Dims / Input type). */
static const struct {
  const char *key;
  int code;
} arg_table[] = {
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

/* Index of arg_table by key length: the entries of length n are
 * order[first[n]] .. order[first[n] + count[n] - 1] (at most a few per
 * length, so a lookup is a length test and one or two memcmp). */
#define ARG_MAX_LEN 40

typedef struct {
  uint8_t first[ARG_MAX_LEN], count[ARG_MAX_LEN];
  uint8_t order[G_N_ELEMENTS(arg_table)];
} arg_index;

static void arg_index_init(arg_index *x)
{
  memset(x, 0, sizeof *x);
  size_t k = 0;
  for (size_t n = 0; n < ARG_MAX_LEN; n++) {
    x->first[n] = (uint8_t)k;
    for (size_t i = 0; i < G_N_ELEMENTS(arg_table); i++)
      if (strlen(arg_table[i].key) == n) {
        x->order[k++] = (uint8_t)i;
        x->count[n]++;
      }
  }
  g_assert(k == G_N_ELEMENTS(arg_table)); /* every key is shorter than ARG_MAX_LEN */
}

/* Skip counts gathered during the parse, keyed by the reason's address (the
 * reasons are string literals), and added to t->skipped at the end in the
 * order each reason first occurred: one pointer compare per skipped event
 * instead of hashing the reason text twice. */
#define PARSE_SKIP_SLOTS 32

typedef struct {
  fe_json *j;
  kt_trace *t;
  scratch sc;
  const char *skip_reason[PARSE_SKIP_SLOTS];
  uint64_t skip_n[PARSE_SKIP_SLOTS];
  int n_skip;
  arg_index args;          /* arg name -> code (1-based; strings < 100, ints >= 100, special >= 200) */
  gboolean inplace;        /* decode events in place when possible */
} parser;


void kt_count_skip(GHashTable *h, const char *reason, uint64_t n)
{
  gpointer v = g_hash_table_lookup(h, reason);
  g_hash_table_insert(h, (gpointer)reason, GSIZE_TO_POINTER(GPOINTER_TO_SIZE(v) + n));
}

/* Counts one skipped event under reason (a string literal). */
static void count_skip(parser *p, const char *reason)
{
  for (int k = 0; k < p->n_skip; k++)
    if (p->skip_reason[k] == reason) {
      p->skip_n[k]++;
      return;
    }
  if (p->n_skip == PARSE_SKIP_SLOTS) {
    kt_count_skip(p->t->skipped, reason, 1); /* more reasons than slots: count directly */
    return;
  }
  p->skip_reason[p->n_skip] = reason;
  p->skip_n[p->n_skip++] = 1;
}

/* Moves the gathered skip counts into t->skipped (first-occurrence order). */
static void flush_skips(parser *p)
{
  for (int k = 0; k < p->n_skip; k++)
    kt_count_skip(p->t->skipped, p->skip_reason[k], p->skip_n[k]);
  p->n_skip = 0;
}

/* String hash for the intern table: eight bytes per multiply (FNV-style
 * xor-multiply on 64-bit words, then a final fold), about 4x fewer steps
 * than a per-byte loop on kernel names of 60-200 bytes.  O(n). */
static uint64_t str_hash_n(const char *key, size_t n)
{
  const unsigned char *s = (const unsigned char *)key;
  uint64_t h = UINT64_C(0xcbf29ce484222325) ^ n;
  while (n >= 8) {
    uint64_t w;
    memcpy(&w, s, 8);
    h = (h ^ w) * UINT64_C(0x9e3779b97f4a7c15);
    h ^= h >> 29;
    s += 8;
    n -= 8;
  }
  uint64_t w = 0;
  memcpy(&w, s, n);
  h = (h ^ w) * UINT64_C(0x9e3779b97f4a7c15);
  h ^= h >> 32;
  return h;
}

/* The intern table: open addressing with linear probing over slots that
 * keep each string's hash and length, so a lookup costs one hash of the
 * text and, on a hit, one memcmp (no strlen, no callbacks).  Kept at most
 * half full; doubling rehashes from the stored hashes.  Strings are
 * NUL-free (decoded texts are cut at an escaped NUL before interning). */
typedef struct {
  uint64_t hash;
  uint32_t id1;  /* string id + 1; 0 marks an empty slot */
  uint32_t len;
} intern_slot;

struct kt_intern {
  intern_slot *slots;
  size_t mask, used;
};

static kt_intern *intern_new(void)
{
  kt_intern *in = g_new0(kt_intern, 1);
  in->mask = 1023;
  in->slots = g_new0(intern_slot, in->mask + 1);
  return in;
}

static void intern_free(kt_intern *in)
{
  if (in) {
    g_free(in->slots);
    g_free(in);
  }
}

static void intern_grow(kt_intern *in)
{
  size_t cap = (in->mask + 1) * 2;
  intern_slot *old = in->slots;
  size_t old_cap = in->mask + 1;
  in->slots = g_new0(intern_slot, cap);
  in->mask = cap - 1;
  for (size_t i = 0; i < old_cap; i++) {
    if (!old[i].id1)
      continue;
    size_t k = old[i].hash & in->mask;
    while (in->slots[k].id1)
      k = (k + 1) & in->mask;
    in->slots[k] = old[i];
  }
  g_free(old);
}

/* Id of the n bytes at s, adding them on first sight.  O(n) expected. */
static uint32_t intern_n(kt_trace *t, const char *s, size_t n)
{
  kt_intern *in = t->intern;
  uint64_t h = str_hash_n(s, n);
  size_t k = h & in->mask;
  for (; in->slots[k].id1; k = (k + 1) & in->mask) {
    const intern_slot *sl = &in->slots[k];
    if (sl->hash == h && sl->len == n && !memcmp(g_ptr_array_index(t->strings, sl->id1 - 1), s, n))
      return sl->id1 - 1;
  }
  g_assert(n <= UINT32_MAX && t->strings->len < UINT32_MAX - 1);
  char *c = g_string_chunk_insert_len(t->chunk, s, (gssize)n);
  uint32_t id = t->strings->len;
  g_ptr_array_add(t->strings, c);
  in->slots[k] = (intern_slot){ .hash = h, .id1 = id + 1, .len = (uint32_t)n };
  if (++in->used * 2 > in->mask + 1)
    intern_grow(in);
  return id;
}

void kt_trace_free(kt_trace *t)
{
  if (!t)
    return;
  g_free(t->path);
  if (t->chunk)
    g_string_chunk_free(t->chunk);
  intern_free(t->intern);
  if (t->strings)
    g_ptr_array_free(t->strings, TRUE);
  if (t->events)
    g_array_free(t->events, TRUE);
  if (t->slim)
    g_array_free(t->slim, TRUE);
  if (t->metas)
    g_array_free(t->metas, TRUE);
  g_free(t->backend);
  if (t->pgs)
    g_ptr_array_free(t->pgs, TRUE);
  g_free(t->device_name);
  if (t->skipped)
    g_hash_table_destroy(t->skipped);
  g_free(t);
}

uint32_t *kt_trace_compact(kt_trace *t, const uint8_t *keep)
{
  guint n = t->events->len, kept = 0;
  uint32_t *remap = g_new(uint32_t, n ? n : 1);
  for (guint i = 0; i < n; i++) {
    remap[i] = keep[i] ? kept : KT_NONE;
    if (keep[i])
      kept++;
  }
  GArray *slim = g_array_sized_new(FALSE, FALSE, sizeof(kt_event_slim), kept);
  for (guint i = 0; i < n; i++)
    if (keep[i]) {
      kt_event_slim e = kt_trace_event(t, i);
      g_array_append_val(slim, e);
    }
  g_array_free(t->events, TRUE);
  t->events = NULL;
  t->slim = slim;
  g_array_free(t->metas, TRUE);
  t->metas = g_array_new(FALSE, FALSE, sizeof(kt_meta));
  intern_free(t->intern);
  t->intern = NULL;
  return remap;
}

static void pg_free(gpointer p)
{
  kt_pg *pg = p;
  g_free(pg->name);
  g_free(pg->desc);
  g_free(pg->ranks);
  g_free(pg);
}

/* Category by its text [s, s + n). */
static ev_cat cat_of(const char *s, size_t n)
{
#define CAT_IS(lit) (n == sizeof(lit) - 1 && !memcmp(s, lit, n))
  switch (n ? s[0] : 0) {
  case 'k': if (CAT_IS("kernel")) return CAT_KERNEL; break;
  case 'g':
    if (CAT_IS("gpu_memcpy")) return CAT_MEMCPY;
    if (CAT_IS("gpu_memset")) return CAT_MEMSET;
    if (CAT_IS("gpu_user_annotation")) return CAT_GPU_USER_ANNOTATION;
    break;
  case 'c':
    if (CAT_IS("cpu_op")) return CAT_CPU_OP;
    if (CAT_IS("cuda_runtime") || CAT_IS("cuda_driver")) return CAT_RUNTIME;
    if (CAT_IS("cuda_sync")) return CAT_CUDA_SYNC;
    break;
  case 'h': if (CAT_IS("hip_runtime") || CAT_IS("hip_driver")) return CAT_RUNTIME; break;
  case 'm': /* torch_mlu's Kineto (ActivityType MLU_RUNTIME, MLU_MEMCPY, MLU_MEMSET) */
    if (CAT_IS("mlu_runtime") || CAT_IS("mlu_driver")) return CAT_RUNTIME;
    if (CAT_IS("mlu_memcpy")) return CAT_MEMCPY;
    if (CAT_IS("mlu_memset")) return CAT_MEMSET;
    break;
  case 'u': if (CAT_IS("user_annotation")) return CAT_USER_ANNOTATION; break;
  case 'p':
    if (CAT_IS("python_function")) return CAT_PYTHON;
    if (CAT_IS("privateuse1_runtime")) return CAT_RUNTIME; /* out-of-tree PyTorch backends */
    break;
  case 'K': if (CAT_IS("Kernel")) return CAT_KERNEL; break;
  case 'M':
    if (CAT_IS("Memcpy")) return CAT_MEMCPY;
    if (CAT_IS("Memset")) return CAT_MEMSET;
    break;
  default: break;
  }
  return CAT_OTHER;
#undef CAT_IS
}

/* Runtime API classification by name (CUDA and HIP spellings). */
static int runtime_kind(const char *n)
{
  static const char *const launch[] = {
    "cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx", "cudaLaunchCooperativeKernel",
    "cudaLaunchCooperativeKernelMultiDevice", "cudaMemcpyAsync", "cudaMemsetAsync", "cudaMemcpy", "cudaMemset",
    "cudaMemcpy2DAsync", "cudaMemcpyPeerAsync", "cudaGraphLaunch", "cuMemcpyAsync", "cuMemsetD8Async",
    "cuMemsetD32Async", "hipLaunchKernel", "hipExtLaunchKernel", "hipExtModuleLaunchKernel", "hipModuleLaunchKernel",
    "hipMemcpyAsync", "hipMemsetAsync", "hipMemcpy", "hipMemset", "hipMemcpyWithStream", "hipLaunchCooperativeKernel",
    "hipGraphLaunch", "hipExtLaunchMultiKernelMultiDevice", "hipMemcpy2DAsync", "hipMemsetD8Async",
    "hipMemsetD32Async", NULL };
  for (int i = 0; launch[i]; i++)
    if (!strcmp(n, launch[i]))
      return KT_EV_LAUNCH;
  if (kt_commreg_launch_name(n)) /* Cambricon CNRT/CNDrv launches (kineto_commreg.c) */
    return KT_EV_LAUNCH;
  if (!strcmp(n, "cudaEventRecord") || !strcmp(n, "hipEventRecord") || !strcmp(n, "cudaEventRecordWithFlags") ||
      !strcmp(n, "cuEventRecord") || !strcmp(n, "hipEventRecordWithFlags"))
    return KT_EV_RECORD;
  if (!strcmp(n, "cudaStreamWaitEvent") || !strcmp(n, "hipStreamWaitEvent") || !strcmp(n, "cuStreamWaitEvent"))
    return KT_EV_WAIT;
  if (!strcmp(n, "cudaStreamSynchronize") || !strcmp(n, "cudaDeviceSynchronize") ||
      !strcmp(n, "cudaEventSynchronize") || !strcmp(n, "hipStreamSynchronize") ||
      !strcmp(n, "hipDeviceSynchronize") || !strcmp(n, "hipEventSynchronize") || !strcmp(n, "cuStreamSynchronize") ||
      !strcmp(n, "cuCtxSynchronize") || kt_commreg_host_sync_name(n))
    return KT_EV_HOST_SYNC;
  return 0;
}

static gboolean is_cpu_comm(const char *n)
{
  return !strcmp(n, "record_param_comms") || g_str_has_prefix(n, "nccl:") || g_str_has_prefix(n, "c10d::") ||
         g_str_has_prefix(n, "rccl:") || g_str_has_prefix(n, "gloo:") || kt_commreg_cpu_op(n);
}

static gboolean step_number(const char *n, int64_t *out)
{
  if (!g_str_has_prefix(n, "ProfilerStep#"))
    return FALSE;
  const char *p = n + 13;
  if (!*p)
    return FALSE;
  int64_t v = 0;
  for (; *p; p++) {
    if (*p < '0' || *p > '9' || v > INT64_MAX / 10 - 10)
      return FALSE;
    v = v * 10 + (*p - '0');
  }
  *out = v;
  return TRUE;
}

/* Whether the event, from the ph/cat/name seen so far, will be dropped
 * whatever its args say. */
static gboolean args_unneeded(scratch *sc)
{
  if (sc->ph == 's' || sc->ph == 'f' || sc->ph == 't' || sc->ph == 'M')
    return TRUE;
  if (sc->ph != 'X' || sc->cat == CAT_NONE)
    return FALSE;
  switch (sc->cat) {
  case CAT_PYTHON:
  case CAT_GPU_USER_ANNOTATION:
    return TRUE;
  case CAT_CPU_OP:
  case CAT_USER_ANNOTATION:
    return sc->has_name && !is_cpu_comm(sc->name->str) && !g_str_has_prefix(sc->name->str, "ProfilerStep#");
  case CAT_RUNTIME:
    if (!sc->has_name)
      return FALSE;
    if (sc->rt_kind < 0)
      sc->rt_kind = runtime_kind(sc->name->str);
    return sc->rt_kind == 0;
  default:
    return FALSE;
  }
}

static void scratch_reset(scratch *sc)
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

/* Reads an integer value (number, or a numeric string); other JSON values
 * are skipped and leave *out unchanged.  Returns FALSE only on a parse error. */
static gboolean read_int_value(parser *p, int64_t *out, GError **error)
{
  fe_json_tok t;
  if (!fe_json_next(p->j, &t, error))
    return FALSE;
  if (t == FE_JSON_NUMBER || t == FE_JSON_STRING) {
    int64_t v;
    if (fe_json_int(fe_json_text(p->j, NULL), &v))
      *out = v;
    return TRUE;
  }
  return fe_json_skip(p->j, t, error);
}

/* Input Dims: products of the first two top-level shapes. */
static gboolean read_dims(parser *p, GError **error)
{
  scratch *sc = &p->sc;
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

static gboolean read_types(parser *p, GError **error)
{
  scratch *sc = &p->sc;
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

/* Arg-name code of the n bytes at k, 0 for args the frontend ignores. */
static inline int arg_code(const parser *p, const char *k, size_t n)
{
  if (n >= ARG_MAX_LEN)
    return 0;
  for (unsigned i = p->args.first[n], e = i + p->args.count[n]; i < e; i++) {
    const char *key = arg_table[p->args.order[i]].key;
    if (key[0] == k[0] && !memcmp(key, k, n))
      return arg_table[p->args.order[i]].code;
  }
  return 0;
}

/* ---- what a member's value does to the scratch record ----
 * Shared by the tokenizer path (read_event, read_args) and the in-place
 * path (ip_event, ip_args), so both make the same decisions. */

/* String-valued arg x (S_*) with the text [s, s + n). */
static void scratch_str_arg(scratch *sc, int x, const char *s, size_t n)
{
  g_string_truncate(sc->s[x], 0);
  g_string_append_len(sc->s[x], s, (gssize)n);
  sc->has_s[x] = TRUE;
  if (x != S_KIND)
    sc->any_meta = TRUE;
}

/* Integer-valued arg x (I_*) has been read into sc->i[x]. */
static void scratch_int_arg(scratch *sc, int x)
{
  if (x >= I_IN_NELEMS && x <= I_RANK && sc->i[x] != KT_ABSENT)
    sc->any_meta = TRUE;
}

static void scratch_name(scratch *sc, const char *s, size_t n)
{
  g_string_truncate(sc->name, 0);
  g_string_append_len(sc->name, s, (gssize)n);
  sc->has_name = TRUE;
}

/* ts (is_ts) or dur from a number's text [s, s + n); FALSE when it is out
 * of range or a negative duration. */
static gboolean scratch_time(scratch *sc, gboolean is_ts, const char *s, size_t n)
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

static gboolean read_args(parser *p, GError **error)
{
  scratch *sc = &p->sc;
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
    int code = arg_code(p, kt, klen);
    if (code == 0) {
      if (!fe_json_skip_value(p->j, error))
        return FALSE;
    } else if (code < 100) {
      int k = code - 1;
      if (!fe_json_next(p->j, &t, error))
        return FALSE;
      if (t == FE_JSON_STRING) {
        const char *text = fe_json_text(p->j, NULL);
        scratch_str_arg(sc, k, text, strlen(text)); /* up to an escaped NUL */
      } else if (!fe_json_skip(p->j, t, error)) {
        return FALSE;
      }
    } else if (code < 200) {
      int k = code - 100;
      if (!read_int_value(p, &sc->i[k], error))
        return FALSE;
      scratch_int_arg(sc, k);
    } else if (code == 200) {
      if (!read_dims(p, error))
        return FALSE;
    } else {
      if (!read_types(p, error))
        return FALSE;
    }
  }
}

/* The kind of a complete ('X') scratch event, with its aux value in *aux;
 * 0 when the frontend does not keep it (counted as skipped). */
static int complete_kind(parser *p, int64_t *aux)
{
  scratch *sc = &p->sc;
  const char *name = sc->name->str;
  int kind = 0;
  switch (sc->cat) {
  case CAT_KERNEL: kind = KT_EV_KERNEL; break;
  case CAT_MEMCPY: kind = KT_EV_MEMCPY; *aux = sc->i[I_BYTES]; break;
  case CAT_MEMSET: kind = KT_EV_MEMSET; *aux = sc->i[I_BYTES]; break;
  case CAT_RUNTIME:
    kind = sc->rt_kind >= 0 ? sc->rt_kind : runtime_kind(name);
    if (!kind)
      count_skip(p, "runtime/driver call (not a launch or sync)");
    break;
  case CAT_CUDA_SYNC: kind = KT_EV_CUDA_SYNC; *aux = sc->i[I_WAIT_CORR]; break;
  case CAT_CPU_OP:
  case CAT_USER_ANNOTATION:
    if (step_number(name, aux))
      kind = KT_EV_STEP;
    else if (sc->cat == CAT_USER_ANNOTATION && g_str_has_prefix(name, "execute_context_"))
      kind = KT_EV_STEP; /* vLLM step marker; numbered by time later (aux absent) */
    else if (is_cpu_comm(name))
      kind = KT_EV_CPU_COMM;
    else
      count_skip(p, sc->cat == CAT_CPU_OP ? "cpu_op (not communication)"
                                          : "user_annotation (not a step or collective)");
    break;
  case CAT_GPU_USER_ANNOTATION:
    count_skip(p, "gpu_user_annotation (GPU copy of annotations, unreliable)");
    break;
  case CAT_PYTHON:
    if (!strcmp(name, "run_batch") || g_str_has_suffix(name, ": run_batch"))
      kind = KT_EV_STEP; /* SGLang step marker; numbered by time later */
    else
      count_skip(p, "python_function");
    break;
  default:
    count_skip(p, "complete event of another category (Trace, overhead, ...)");
    break;
  }
  return kind;
}

/* An instant ('i', 'I') scratch event: a [memory] instant is counted as an
 * allocation or a free and kept (KT_EV_MEMORY, aux = Bytes) when it names
 * a device allocation; 0 for everything else (counted as skipped). */
static int instant_kind(parser *p, int64_t *aux)
{
  scratch *sc = &p->sc;
  kt_trace *t = p->t;
  if (strcmp(sc->name->str, "[memory]")) {
    count_skip(p, "instant event");
    return 0;
  }
  if (sc->i[I_MEM_BYTES] != KT_ABSENT && sc->i[I_MEM_BYTES] < 0)
    t->memory_frees++;
  else
    t->memory_allocs++;
  /* Kept (kineto_mem.c links communication to them) when the event
   * names a device allocation: Addr, non-zero Bytes, Device Type 1
   * (CUDA; ROCm reports 1 too) and a Device Id. */
  if (sc->i[I_MEM_ADDR] == KT_ABSENT || sc->i[I_MEM_ADDR] <= 0 || sc->i[I_MEM_BYTES] == KT_ABSENT ||
      sc->i[I_MEM_BYTES] == 0 || sc->i[I_MEM_DEV_TYPE] != 1 || sc->i[I_MEM_DEV_ID] == KT_ABSENT ||
      sc->i[I_MEM_DEV_ID] < 0 || sc->i[I_MEM_DEV_ID] > INT32_MAX) {
    count_skip(p, sc->i[I_MEM_DEV_TYPE] == 0 ? "[memory] instant on the CPU (not a device buffer)"
                              : "[memory] instant without Addr, Bytes or a CUDA Device Id (cannot be linked)");
    return 0;
  }
  *aux = sc->i[I_MEM_BYTES];
  return KT_EV_MEMORY;
}

/* The kind of the scratch event by its ph, with its aux value in *aux; 0
 * when the frontend does not keep it (counted as skipped). */
static int event_kind(parser *p, int64_t *aux)
{
  switch (p->sc.ph) {
  case 'X':
    return complete_kind(p, aux);
  case 'i':
  case 'I':
    return instant_kind(p, aux);
  case 's':
  case 'f':
  case 't':
    count_skip(p, "flow event (links taken from correlation ids)");
    return 0;
  case 'M':
    count_skip(p, "metadata event");
    return 0;
  case 0:
    count_skip(p, "event without ph");
    return 0;
  default:
    count_skip(p, "event with unsupported ph (B/E/C/...)");
    return 0;
  }
}

/* Appends the collective metadata of the scratch event to t->metas and
 * returns its index. */
static uint32_t append_meta(kt_trace *t, const scratch *sc)
{
  kt_meta m;
  uint32_t *sv[S_N] = { &m.coll_name, &m.dtype, &m.pg_name, &m.pg_desc, &m.pg_ranks, &m.in_split, &m.out_split,
                        &m.kind, &m.in_type0, &m.in_type1 };
  for (int k = 0; k < S_N; k++)
    *sv[k] = sc->has_s[k] ? intern_n(t, sc->s[k]->str, sc->s[k]->len) : KT_NONE;
  m.in_nelems = sc->i[I_IN_NELEMS];
  m.out_nelems = sc->i[I_OUT_NELEMS];
  m.group_size = sc->i[I_GROUP_SIZE];
  m.rank_start = sc->i[I_RANK_START];
  m.rank_stride = sc->i[I_RANK_STRIDE];
  m.seq = sc->i[I_SEQ];
  m.src_rank = sc->i[I_SRC];
  m.dst_rank = sc->i[I_DST];
  m.rank = sc->i[I_RANK];
  m.in_numel0 = sc->i[I_NUMEL0];
  m.in_numel1 = sc->i[I_NUMEL1];
  g_array_append_val(t->metas, m);
  return t->metas->len - 1;
}

/* Appends the scratch event to the table if it is one the frontend needs. */
static void finish_event(parser *p, uint32_t file_index)
{
  scratch *sc = &p->sc;
  kt_trace *t = p->t;
  const char *name = sc->name->str;
  int64_t aux = KT_ABSENT;
  t->events_read++;
  /* The latest end of any complete event, kept or skipped: a step whose
   * marker ends at or after it was cut by the trace's end. */
  /* A ts within the duration of INT64_MAX (a damaged trace; found by
   * fuzz_kineto_num) has no representable end: the time range check below
   * refuses such an event, so it does not count here either. */
  if (sc->ph == 'X' && sc->has_ts && sc->dur >= 0 && sc->dur <= (INT64_C(1) << 61)) {
    int64_t dur_us = (sc->dur + sc->ts_frac + SIM_PS_PER_US - 1) / SIM_PS_PER_US;
    if (sc->ts_us <= INT64_MAX - dur_us) {
      int64_t end_us = sc->ts_us + dur_us;
      if (!t->have_end || end_us > t->end_max_us)
        t->end_max_us = end_us;
      t->have_end = TRUE;
    }
  }
  int kind = event_kind(p, &aux);
  if (!kind)
    return;
  if (!sc->has_ts) {
    count_skip(p, "complete event without ts");
    return;
  }
  if (!sc->has_dur && kind != KT_EV_MEMORY)
    t->missing_dur++;
  if (!t->have_origin) {
    t->origin_us = sc->ts_us;
    t->have_origin = TRUE;
  }
  kt_event e = { 0 };
  /* Times are kept within ±2^61 ps (±26 days) of the first event so that
   * every later sum or difference of two of them fits in int64. */
  int64_t dus;
  const int64_t lim_us = (INT64_C(1) << 61) / SIM_PS_PER_US - 1;
  if (__builtin_sub_overflow(sc->ts_us, t->origin_us, &dus) || dus > lim_us || dus < -lim_us) {
    count_skip(p, "event more than 26 days from the trace's first timestamp");
    return;
  }
  if (sc->dur > (INT64_C(1) << 61)) {
    count_skip(p, "event with a duration over 26 days");
    return;
  }
  e.ts = dus * SIM_PS_PER_US + sc->ts_frac;
  e.dur = sc->dur;
  e.correlation = sc->i[I_CORR];
  e.ext_id = sc->i[I_EXT];
  e.pid = sc->pid;
  e.tid = sc->tid;
  e.aux = kind == KT_EV_STEP ? aux : (kind == KT_EV_CUDA_SYNC || kind == KT_EV_MEMCPY || kind == KT_EV_MEMSET ? aux : KT_ABSENT);
  e.device = sc->i[I_DEVICE] != KT_ABSENT ? (int32_t)sc->i[I_DEVICE] : (int32_t)sc->pid;
  if (kind == KT_EV_MEMORY) {
    /* [memory]: correlation = Addr, aux = Bytes (negative: free), device = Device Id. */
    e.aux = aux;
    e.correlation = sc->i[I_MEM_ADDR];
    e.device = (int32_t)sc->i[I_MEM_DEV_ID];
  }
  e.stream = sc->i[I_STREAM] != KT_ABSENT ? (int32_t)sc->i[I_STREAM] : (int32_t)sc->tid;
  e.wait_stream = sc->i[I_WAIT_STREAM] != KT_ABSENT ? (int32_t)sc->i[I_WAIT_STREAM] : -1;
  e.name = intern_n(t, name, sc->name->len);
  e.meta = KT_NONE;
  e.file_index = file_index;
  e.kind = (uint8_t)kind;
  if (sc->any_meta || (kind == KT_EV_CPU_COMM && (sc->has_s[S_TYPE0] || sc->i[I_NUMEL0] != KT_ABSENT)) ||
      sc->has_s[S_KIND])
    e.meta = append_meta(t, sc);
  g_array_append_val(t->events, e);
}

enum { EK_OTHER, EK_PH, EK_CAT, EK_NAME, EK_PID, EK_TID, EK_TS, EK_DUR, EK_ARGS };

/* Event member names by length and bytes (no strcmp chain in the hot loop). */
static inline int event_key(const char *k, size_t len)
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

static gboolean read_event(parser *p, uint32_t file_index, GError **error)
{
  scratch *sc = &p->sc;
  fe_json_tok t;
  scratch_reset(sc);
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
    int kc = event_key(k, klen);
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
        sc->cat = cat_of(c, strlen(c));
      }
      else if (!fe_json_skip(p->j, t, error))
        return FALSE;
    } else if (kc == EK_NAME) {
      if (!fe_json_next(p->j, &t, error))
        return FALSE;
      if (t == FE_JSON_STRING) {
        size_t len;
        const char *s = fe_json_text(p->j, &len);
        scratch_name(sc, s, strnlen(s, len));
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
        static const char *const kind[] = {
          [FE_JSON_OBJ_BEGIN] = "an object", [FE_JSON_ARR_BEGIN] = "an array", [FE_JSON_STRING] = "a string",
          [FE_JSON_TRUE] = "true", [FE_JSON_FALSE] = "false" };
        fe_json_error(p->j, error, "\"%s\" must be a number of microseconds, found %s; fix the event",
                      is_ts ? "ts" : "dur", (size_t)t < G_N_ELEMENTS(kind) && kind[t] ? kind[t] : "another value");
        return FALSE;
      }
      const char *txt = fe_json_text(p->j, NULL);
      if (!scratch_time(sc, is_ts, txt, strlen(txt))) {
        fe_json_error(p->j, error, is_ts ? "timestamp %.40s is out of range"
                                         : "duration %.40s is negative or out of range", txt);
        return FALSE;
      }
    } else if (kc == EK_ARGS) {
      if (args_unneeded(sc)) {
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
  finish_event(p, file_index);
  return TRUE;
}

/* ---- in-place event decoding ----
 *
 * The same decisions as read_event/read_args, made on the raw bytes of one
 * event object in the tokenizer's buffer (fe_json_ip.h) instead of token by
 * token.  Each function returns FALSE to bail: the caller then reads the
 * whole event again through the tokenizer, which yields the same result or
 * the same error, so only events that are well-formed and plain (no string
 * escapes, no Input Dims/Input type to decode, within the window) are
 * finished here.  Nothing outside the scratch record is touched before the
 * closing brace has been checked. */

/* Window for one event: events longer than this take the tokenizer path. */
#define IP_WINDOW (64u * 1024u)

/* Reads an integer value at *q like read_int_value: a number or a numeric
 * string sets *out, any other value is skipped. */
FE_JSON_INLINE gboolean ip_int_value(const uint8_t **q, const uint8_t *e, int64_t *out)
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
    return fe_json_ip_skip(q, e);
  }
  if (fe_json_int_n(s, n, &v))
    *out = v;
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

static gboolean ip_args(parser *p, const uint8_t **qq, const uint8_t *e)
{
  scratch *sc = &p->sc;
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
    int code = arg_code(p, k, kl);
    if (code == 0) {
      if (!fe_json_ip_skip(&q, e))
        return FALSE;
    } else if (code < 100) {
      int x = code - 1;
      if (*q == '"') {
        if (!fe_json_ip_string(&q, e, &s, &n))
          return FALSE;
        scratch_str_arg(sc, x, s, n);
      } else if (!fe_json_ip_skip(&q, e)) {
        return FALSE;
      }
    } else if (code < 200) {
      int x = code - 100;
      if (!ip_int_value(&q, e, &sc->i[x]))
        return FALSE;
      scratch_int_arg(sc, x);
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
static gboolean ip_event(parser *p, uint32_t file_index, const uint8_t **qq, const uint8_t *e)
{
  scratch *sc = &p->sc;
  const uint8_t *q = *qq;
  gboolean more;
  scratch_reset(sc);
  if (!ip_open_object(&q, e, &more))
    return FALSE;
  while (more) {
    const char *k, *s;
    size_t kl, n;
    if (!ip_key(&q, e, &k, &kl))
      return FALSE;
    int kc = kl >= 2 && kl <= 4 ? event_key(k, kl) : EK_OTHER;
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
        sc->cat = cat_of(s, n);
      } else {
        scratch_name(sc, s, n);
      }
      break;
    case EK_PID:
    case EK_TID:
      if (!ip_int_value(&q, e, kc == EK_PID ? &sc->pid : &sc->tid))
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
      if (!fe_json_ip_number(&q, e, &s, &n) || !scratch_time(sc, kc == EK_TS, s, n))
        return FALSE; /* out of range: the tokenizer path reports it */
      break;
    case EK_ARGS:
      if (args_unneeded(sc) ? !fe_json_ip_skip(&q, e) : !ip_args(p, &q, e))
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
  finish_event(p, file_index);
  *qq = q;
  return TRUE;
}

/* Reads the elements of an event array after its '[' up to its ']': objects
 * are events (in place when possible), anything else is counted and
 * skipped.  *idx numbers the events. */
static gboolean read_event_items(parser *p, uint32_t *idx, GError **error)
{
  fe_json_tok t;
  for (;;) {
    if (p->inplace) {
      const uint8_t *q, *e;
      int r = fe_json_ip_begin(p->j, IP_WINDOW, &q, &e, error);
      if (r < 0)
        return FALSE;
      if (r > 0) {
        if (ip_event(p, *idx, &q, e)) {
          fe_json_ip_end(p->j, q);
          (*idx)++;
          p->t->inplace_events++;
          continue;
        }
        p->t->inplace_bails++;
      }
    }
    if (!fe_json_next(p->j, &t, error))
      return FALSE;
    if (t == FE_JSON_ARR_END)
      return TRUE;
    if (t != FE_JSON_OBJ_BEGIN) {
      count_skip(p, "traceEvents entry that is not an object");
      if (!fe_json_skip(p->j, t, error))
        return FALSE;
      continue;
    }
    if (!read_event(p, (*idx)++, error))
      return FALSE;
  }
}

static gboolean read_events(parser *p, GError **error)
{
  fe_json_tok t;
  if (!fe_json_next(p->j, &t, error))
    return FALSE;
  if (t != FE_JSON_ARR_BEGIN) {
    fe_json_error(p->j, error, "traceEvents is not an array");
    return FALSE;
  }
  uint32_t idx = (uint32_t)p->t->events_read;
  return read_event_items(p, &idx, error);
}

/* Reads a JSON array of integers into a new kt_pg ranks array. */
static gboolean read_int_array(parser *p, int **out, int *n, GError **error)
{
  fe_json_tok t;
  if (!fe_json_next(p->j, &t, error))
    return FALSE;
  if (t != FE_JSON_ARR_BEGIN)
    return fe_json_skip(p->j, t, error);
  GArray *a = g_array_new(FALSE, FALSE, sizeof(int));
  for (;;) {
    if (!fe_json_next(p->j, &t, error)) {
      g_array_free(a, TRUE);
      return FALSE;
    }
    if (t == FE_JSON_ARR_END)
      break;
    int64_t v;
    if (t == FE_JSON_NUMBER && fe_json_int(fe_json_text(p->j, NULL), &v) && v >= 0 && v <= INT32_MAX) {
      int iv = (int)v;
      g_array_append_val(a, iv);
    } else if (!fe_json_skip(p->j, t, error)) {
      g_array_free(a, TRUE);
      return FALSE;
    }
  }
  *n = (int)a->len;
  *out = (int *)g_array_free(a, FALSE);
  return TRUE;
}

static gboolean read_string_value(parser *p, char **out, GError **error)
{
  fe_json_tok t;
  if (!fe_json_next(p->j, &t, error))
    return FALSE;
  if (t == FE_JSON_STRING || t == FE_JSON_NUMBER) {
    g_free(*out);
    *out = g_strdup(fe_json_text(p->j, NULL));
    return TRUE;
  }
  return fe_json_skip(p->j, t, error);
}

static gboolean read_pg_config(parser *p, GError **error)
{
  fe_json_tok t;
  if (!fe_json_next(p->j, &t, error))
    return FALSE;
  if (t != FE_JSON_ARR_BEGIN)
    return fe_json_skip(p->j, t, error);
  for (;;) {
    if (!fe_json_next(p->j, &t, error))
      return FALSE;
    if (t == FE_JSON_ARR_END)
      return TRUE;
    if (t != FE_JSON_OBJ_BEGIN) {
      if (!fe_json_skip(p->j, t, error))
        return FALSE;
      continue;
    }
    kt_pg *pg = g_new0(kt_pg, 1);
    g_ptr_array_add(p->t->pgs, pg);
    for (;;) {
      if (!fe_json_next(p->j, &t, error))
        return FALSE;
      if (t == FE_JSON_OBJ_END)
        break;
      const char *k = fe_json_text(p->j, NULL);
      gboolean ok;
      if (!strcmp(k, "pg_name"))
        ok = read_string_value(p, &pg->name, error);
      else if (!strcmp(k, "pg_desc"))
        ok = read_string_value(p, &pg->desc, error);
      else if (!strcmp(k, "ranks")) {
        g_free(pg->ranks);
        pg->ranks = NULL;
        ok = read_int_array(p, &pg->ranks, &pg->n_ranks, error);
      } else
        ok = fe_json_skip_value(p->j, error);
      if (!ok)
        return FALSE;
    }
  }
}

static gboolean read_dist_info(parser *p, GError **error)
{
  fe_json_tok t;
  if (!fe_json_next(p->j, &t, error))
    return FALSE;
  if (t != FE_JSON_OBJ_BEGIN)
    return fe_json_skip(p->j, t, error);
  p->t->have_dist_info = TRUE;
  for (;;) {
    if (!fe_json_next(p->j, &t, error))
      return FALSE;
    if (t == FE_JSON_OBJ_END)
      return TRUE;
    const char *k = fe_json_text(p->j, NULL);
    gboolean ok;
    if (!strcmp(k, "rank"))
      ok = read_int_value(p, &p->t->rank, error);
    else if (!strcmp(k, "world_size"))
      ok = read_int_value(p, &p->t->world_size, error);
    else if (!strcmp(k, "backend"))
      ok = read_string_value(p, &p->t->backend, error);
    else if (!strcmp(k, "pg_config"))
      ok = read_pg_config(p, error);
    else
      ok = fe_json_skip_value(p->j, error);
    if (!ok)
      return FALSE;
  }
}

static gboolean read_device_props(parser *p, GError **error)
{
  fe_json_tok t;
  if (!fe_json_next(p->j, &t, error))
    return FALSE;
  if (t != FE_JSON_ARR_BEGIN)
    return fe_json_skip(p->j, t, error);
  for (;;) {
    if (!fe_json_next(p->j, &t, error))
      return FALSE;
    if (t == FE_JSON_ARR_END)
      return TRUE;
    if (t != FE_JSON_OBJ_BEGIN || p->t->device_name) {
      if (!fe_json_skip(p->j, t, error))
        return FALSE;
      continue;
    }
    for (;;) {
      if (!fe_json_next(p->j, &t, error))
        return FALSE;
      if (t == FE_JSON_OBJ_END)
        break;
      gboolean ok = !strcmp(fe_json_text(p->j, NULL), "name") ? read_string_value(p, &p->t->device_name, error)
                                                               : fe_json_skip_value(p->j, error);
      if (!ok)
        return FALSE;
    }
  }
}

kt_trace *kt_trace_parse(fe_json *j, const char *path, GError **error)
{
  return kt_trace_parse_flags(j, path, 0, error);
}

kt_trace *kt_trace_parse_flags(fe_json *j, const char *path, unsigned flags, GError **error)
{
  kt_trace *t = g_new0(kt_trace, 1);
  t->path = g_strdup(path);
  t->chunk = g_string_chunk_new(64 * 1024);
  t->intern = intern_new();
  t->strings = g_ptr_array_new();
  t->events = g_array_new(FALSE, FALSE, sizeof(kt_event));
  t->metas = g_array_new(FALSE, FALSE, sizeof(kt_meta));
  t->rank = t->world_size = KT_ABSENT;
  t->base_time_ns = KT_ABSENT;
  t->pgs = g_ptr_array_new_with_free_func(pg_free);
  t->skipped = g_hash_table_new(g_str_hash, g_str_equal);
  parser p = { .j = j, .t = t, .inplace = !(flags & KT_PARSE_TOKENS_ONLY) };
  p.sc.name = g_string_sized_new(256);
  for (int k = 0; k < S_N; k++)
    p.sc.s[k] = g_string_sized_new(32);
  arg_index_init(&p.args);
  gboolean ok = TRUE, saw_events = FALSE;
  fe_json_tok tok;
  if (!fe_json_next(j, &tok, error)) {
    ok = FALSE;
  } else if (tok == FE_JSON_ARR_BEGIN) {
    /* JSON array format: the whole file is the event list. */
    saw_events = TRUE;
    uint32_t idx = 0;
    ok = read_event_items(&p, &idx, error);
  } else if (tok == FE_JSON_OBJ_BEGIN) {
    for (;;) {
      if (!fe_json_next(j, &tok, error)) {
        ok = FALSE;
        break;
      }
      if (tok == FE_JSON_OBJ_END)
        break;
      const char *k = fe_json_text(j, NULL);
      if (!strcmp(k, "traceEvents")) {
        saw_events = TRUE;
        ok = read_events(&p, error);
      } else if (!strcmp(k, "distributedInfo")) {
        ok = read_dist_info(&p, error);
      } else if (!strcmp(k, "baseTimeNanoseconds")) {
        ok = read_int_value(&p, &t->base_time_ns, error);
      } else if (!strcmp(k, "deviceProperties")) {
        ok = read_device_props(&p, error);
      } else {
        ok = fe_json_skip_value(j, error);
      }
      if (!ok)
        break;
    }
  } else {
    fe_json_error(j, error, "the top-level value is not an object or array; not a Kineto trace");
    ok = FALSE;
  }
  if (ok) {
    /* Trailing garbage after the top-level value is an error too. */
    ok = fe_json_next(j, &tok, error);
    if (ok && tok != FE_JSON_EOF) {
      fe_json_error(j, error, "unexpected data after the top-level value");
      ok = FALSE;
    }
  }
  if (ok && !saw_events) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: no traceEvents array; this is not a Kineto/Chrome trace (or it holds only metadata)", path);
    ok = FALSE;
  }
  flush_skips(&p);
  t->bytes_read = fe_json_bytes_read(j);
  g_string_free(p.sc.name, TRUE);
  for (int k = 0; k < S_N; k++)
    g_string_free(p.sc.s[k], TRUE);
  fe_json_free(j);
  if (!ok) {
    kt_trace_free(t);
    return NULL;
  }
  return t;
}

/* ---- canonical dump ---- */

static int cmp_reason(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

char *kt_trace_dump(const kt_trace *t)
{
  GString *s = g_string_new("");
  g_string_append_printf(s, "rank %" G_GINT64_FORMAT " world %" G_GINT64_FORMAT " dist %d backend %s\n", t->rank,
                         t->world_size, t->have_dist_info, t->backend ? t->backend : "-");
  g_string_append_printf(s, "origin %" G_GINT64_FORMAT " %d base_ns %" G_GINT64_FORMAT " device %s\n", t->origin_us,
                         t->have_origin, t->base_time_ns, t->device_name ? t->device_name : "-");
  g_string_append_printf(s, "bytes %" G_GUINT64_FORMAT " events %" G_GUINT64_FORMAT " mem %" G_GUINT64_FORMAT
                         "/%" G_GUINT64_FORMAT " missing_dur %" G_GUINT64_FORMAT "\n",
                         t->bytes_read, t->events_read, t->memory_allocs, t->memory_frees, t->missing_dur);
  for (guint i = 0; i < t->pgs->len; i++) {
    const kt_pg *pg = g_ptr_array_index(t->pgs, i);
    g_string_append_printf(s, "pg %s %s", pg->name ? pg->name : "-", pg->desc ? pg->desc : "-");
    for (int k = 0; k < pg->n_ranks; k++)
      g_string_append_printf(s, " %d", pg->ranks[k]);
    g_string_append_c(s, '\n');
  }
  for (guint i = 0; i < t->strings->len; i++)
    g_string_append_printf(s, "str %u %s\n", i, (const char *)g_ptr_array_index(t->strings, i));
  for (guint i = 0; i < t->events->len; i++) {
    const kt_event *e = &g_array_index(t->events, kt_event, i);
    g_string_append_printf(s, "ev %d ts %" G_GINT64_FORMAT " dur %" G_GINT64_FORMAT " corr %" G_GINT64_FORMAT
                           " ext %" G_GINT64_FORMAT " pid %" G_GINT64_FORMAT " tid %" G_GINT64_FORMAT
                           " aux %" G_GINT64_FORMAT " dev %d stream %d wait %d name %u meta %u idx %u\n",
                           e->kind, e->ts, e->dur, e->correlation, e->ext_id, e->pid, e->tid, e->aux, e->device,
                           e->stream, e->wait_stream, e->name, e->meta, e->file_index);
  }
  for (guint i = 0; i < t->metas->len; i++) {
    const kt_meta *m = &g_array_index(t->metas, kt_meta, i);
    g_string_append_printf(s, "meta %u %u %u %u %u %u %u %u %u %u", m->coll_name, m->dtype, m->pg_name, m->pg_desc,
                           m->pg_ranks, m->in_split, m->out_split, m->kind, m->in_type0, m->in_type1);
    const int64_t v[] = { m->in_nelems, m->out_nelems, m->group_size, m->rank_start, m->rank_stride, m->seq,
                          m->src_rank, m->dst_rank, m->rank, m->in_numel0, m->in_numel1 };
    for (size_t k = 0; k < G_N_ELEMENTS(v); k++)
      g_string_append_printf(s, " %" G_GINT64_FORMAT, v[k]);
    g_string_append_c(s, '\n');
  }
  GPtrArray *reasons = g_ptr_array_new();
  GHashTableIter it;
  gpointer k;
  g_hash_table_iter_init(&it, t->skipped);
  while (g_hash_table_iter_next(&it, &k, NULL))
    g_ptr_array_add(reasons, k);
  g_ptr_array_sort(reasons, cmp_reason);
  for (guint i = 0; i < reasons->len; i++)
    g_string_append_printf(s, "skip %s: %" G_GSIZE_FORMAT "\n", (const char *)g_ptr_array_index(reasons, i),
                           GPOINTER_TO_SIZE(g_hash_table_lookup(t->skipped, g_ptr_array_index(reasons, i))));
  g_ptr_array_free(reasons, TRUE);
  return g_string_free(s, FALSE);
}

kt_trace *kt_trace_read(const char *path, GError **error)
{
  fe_json *j = fe_json_open(path, error);
  if (!j)
    return NULL;
  return kt_trace_parse(j, path, error);
}
