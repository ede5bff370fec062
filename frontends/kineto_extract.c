/* kineto_extract.c: from one parsed trace to the GPU ops of the step window,
 * with communication kernels classified, sized and assigned to groups, and
 * candidate cross-stream dependencies from synchronisation calls.
 *
 * Costs: O(E log E) for sorting the kept events (E = kept events); kernel to
 * CPU-op linking is O(1) by correlation / External id hash lookups, or
 * O(log C) by binary search over the issuing thread's collective CPU ops
 * (C) for old traces linked by time containment.
 */
#include "config.h"

#include "frontends/kineto_rank.h"
#include "frontends/kineto_mem.h"
#include "frontends/kineto_commreg.h"
#include "frontends/kineto_threads.h"

#include <stdlib.h>
#include <string.h>

/* ---- tables ---- */

int kt_dtype_size(const char *n)
{
  static const struct { const char *name; int size; } tab[] = {
    /* c10::ScalarType names (c10/core/ScalarType.h), elementSize in bytes. */
    { "Byte", 1 }, { "Char", 1 }, { "Short", 2 }, { "Int", 4 }, { "Long", 8 }, { "Half", 2 }, { "Float", 4 },
    { "Double", 8 }, { "ComplexHalf", 4 }, { "ComplexFloat", 8 }, { "ComplexDouble", 16 }, { "Bool", 1 },
    { "QInt8", 1 }, { "QUInt8", 1 }, { "QInt32", 4 }, { "BFloat16", 2 }, { "QUInt4x2", 1 }, { "QUInt2x4", 1 },
    { "Bits1x8", 1 }, { "Bits2x4", 1 }, { "Bits4x2", 1 }, { "Bits8", 1 }, { "Bits16", 2 },
    { "Float8_e5m2", 1 }, { "Float8_e4m3fn", 1 }, { "Float8_e5m2fnuz", 1 }, { "Float8_e4m3fnuz", 1 },
    { "UInt16", 2 }, { "UInt32", 4 }, { "UInt64", 8 }, { "UInt1", 1 }, { "UInt2", 1 }, { "UInt3", 1 },
    { "UInt4", 1 }, { "UInt5", 1 }, { "UInt6", 1 }, { "UInt7", 1 }, { "Int1", 1 }, { "Int2", 1 }, { "Int3", 1 },
    { "Int4", 1 }, { "Int5", 1 }, { "Int6", 1 }, { "Int7", 1 }, { "Float8_e8m0fnu", 1 },
    { "Float4_e2m1fn_x2", 1 },
    /* Demangled C++ names used by `Input type`. */
    { "float", 4 }, { "double", 8 }, { "c10::Half", 2 }, { "c10::BFloat16", 2 }, { "long int", 8 },
    { "long", 8 }, { "int64_t", 8 }, { "long long", 8 }, { "unsigned long", 8 }, { "int", 4 },
    { "unsigned int", 4 }, { "short int", 2 }, { "short", 2 }, { "signed char", 1 }, { "unsigned char", 1 },
    { "char", 1 }, { "bool", 1 }, { "c10::complex<float>", 8 }, { "c10::complex<double>", 16 },
    { "c10::complex<c10::Half>", 4 }, { "uint16_t", 2 }, { "uint32_t", 4 }, { "uint64_t", 8 },
    /* Spellings seen in other tools' mock traces. */
    { "Int64", 8 }, { "Int32", 4 }, { "Int16", 2 }, { "Int8", 1 }, { "UInt8", 1 }, { "Float16", 2 },
    { "Float32", 4 }, { "Float64", 8 },
  };
  if (!n)
    return 0;
  for (size_t i = 0; i < G_N_ELEMENTS(tab); i++)
    if (!strcmp(n, tab[i].name))
      return tab[i].size;
  if (g_str_has_prefix(n, "c10::Float8_") || g_str_has_prefix(n, "c10::Float4_"))
    return 1;
  return 0;
}

gboolean kt_is_comm_kernel_name(const char *name)
{
  const kt_commreg_entry *e = kt_commreg_lookup(name);
  return e && e->size != KT_CR_SIZE_LOCAL;
}

gboolean kt_coll_from_arg(const char *s, et_coll_type *c, int *p2p)
{
  static const struct { const char *n; et_coll_type c; int p; } tab[] = {
    { "allreduce", ET_COLL_ALL_REDUCE, 0 }, { "all_reduce", ET_COLL_ALL_REDUCE, 0 },
    { "allreduce_coalesced", ET_COLL_ALL_REDUCE, 0 }, { "all_reduce_coalesced", ET_COLL_ALL_REDUCE, 0 },
    { "broadcast", ET_COLL_BROADCAST, 0 }, { "reduce", ET_COLL_REDUCE, 0 },
    { "allgather", ET_COLL_ALL_GATHER, 0 }, { "all_gather", ET_COLL_ALL_GATHER, 0 },
    { "_allgather_base", ET_COLL_ALL_GATHER, 0 }, { "_all_gather_base", ET_COLL_ALL_GATHER, 0 },
    { "allgather_base", ET_COLL_ALL_GATHER, 0 }, { "all_gather_base", ET_COLL_ALL_GATHER, 0 },
    { "allgather_into_tensor_coalesced", ET_COLL_ALL_GATHER, 0 }, { "allgather_coalesced", ET_COLL_ALL_GATHER, 0 },
    { "all_gather_into_tensor", ET_COLL_ALL_GATHER, 0 },
    { "reduce_scatter", ET_COLL_REDUCE_SCATTER, 0 }, { "_reduce_scatter_base", ET_COLL_REDUCE_SCATTER, 0 },
    { "reduce_scatter_base", ET_COLL_REDUCE_SCATTER, 0 },
    { "reduce_scatter_tensor_coalesced", ET_COLL_REDUCE_SCATTER, 0 },
    { "reduce_scatter_tensor", ET_COLL_REDUCE_SCATTER, 0 },
    { "all_to_all", ET_COLL_ALL_TO_ALL, 0 }, { "alltoall", ET_COLL_ALL_TO_ALL, 0 },
    { "alltoall_base", ET_COLL_ALL_TO_ALL, 0 }, { "all_to_all_single", ET_COLL_ALL_TO_ALL, 0 },
    { "all_to_allv", ET_COLL_ALL_TO_ALLV, 0 }, { "alltoallv", ET_COLL_ALL_TO_ALLV, 0 },
    { "gather", ET_COLL_GATHER, 0 }, { "scatter", ET_COLL_SCATTER, 0 }, { "barrier", ET_COLL_BARRIER, 0 },
    { "send", ET_COLL_NONE, 1 }, { "recv", ET_COLL_NONE, 2 }, { "recv_anysource", ET_COLL_NONE, 2 },
  };
  if (!s)
    return FALSE;
  char *l = g_ascii_strdown(s, -1);
  gboolean found = FALSE;
  for (size_t i = 0; i < G_N_ELEMENTS(tab) && !found; i++)
    if (!strcmp(l, tab[i].n)) {
      *c = tab[i].c;
      *p2p = tab[i].p;
      found = TRUE;
    }
  g_free(l);
  return found;
}

gboolean kt_coll_from_cpu_op(const char *s, et_coll_type *c, int *p2p)
{
  if (!s)
    return FALSE;
  const char *p = NULL;
  if (g_str_has_prefix(s, "nccl:") || g_str_has_prefix(s, "rccl:") || g_str_has_prefix(s, "gloo:"))
    p = s + 5;
  else if (g_str_has_prefix(s, "c10d::"))
    p = s + 6;
  if (!p)
    return FALSE;
  char *n = g_strdup(p);
  size_t len = strlen(n);
  if (len && n[len - 1] == '_')
    n[len - 1] = 0; /* c10d::allreduce_ */
  gboolean ok = kt_coll_from_arg(n, c, p2p);
  g_free(n);
  return ok;
}

gboolean kt_coll_from_kernel(const char *name, et_coll_type *c, int *p2p)
{
  /* Token after "Kernel_": AllReduce, AllGather, ReduceScatter, Broadcast,
   * Reduce, SendRecv, Send, Recv, AllToAll; ncclDevKernel_Generic has none. */
  const char *k = strstr(name, "Kernel_");
  if (!k)
    k = strstr(name, "kernel_");
  if (!k)
    return FALSE;
  k += 7;
  static const struct { const char *t; et_coll_type c; int p; } tab[] = {
    { "AllReduce", ET_COLL_ALL_REDUCE, 0 }, { "AllGather", ET_COLL_ALL_GATHER, 0 },
    { "ReduceScatter", ET_COLL_REDUCE_SCATTER, 0 }, { "Broadcast", ET_COLL_BROADCAST, 0 },
    { "AllToAll", ET_COLL_ALL_TO_ALL, 0 }, { "SendRecv", ET_COLL_ALL_TO_ALL, 0 }, { "Send", ET_COLL_NONE, 1 },
    { "Recv", ET_COLL_NONE, 2 }, { "Reduce", ET_COLL_REDUCE, 0 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(tab); i++) {
    size_t n = strlen(tab[i].t);
    if (!g_ascii_strncasecmp(k, tab[i].t, n) && !g_ascii_isalpha(k[n])) {
      *c = tab[i].c;
      *p2p = tab[i].p;
      return TRUE;
    }
  }
  return FALSE;
}

gboolean kt_parse_int_list(const char *s, GArray *out)
{
  g_array_set_size(out, 0);
  const char *p = s;
  while (*p == ' ')
    p++;
  if (*p++ != '[')
    return FALSE;
  for (;;) {
    while (*p == ' ')
      p++;
    if (*p == ']')
      return p[1] == 0 || out->len == 0 ? p[1] == 0 : TRUE;
    if (*p == '.')
      return FALSE;
    char *end;
    gint64 v = g_ascii_strtoll(p, &end, 10);
    if (end == p)
      return FALSE;
    g_array_append_val(out, v);
    p = end;
    while (*p == ' ')
      p++;
    if (*p == ',')
      p++;
    else if (*p != ']')
      return FALSE;
  }
}

gboolean kt_parse_ranks(const char *s, int64_t group_size, int world, int **ranks, int *n, gboolean *truncated,
                        const char **why)
{
  *truncated = FALSE;
  *ranks = NULL;
  *n = 0;
  /* Tokenize into ints and "..." markers. */
  GArray *vals = g_array_new(FALSE, FALSE, sizeof(gint64));
  int ellipsis_at = -1, n_ellipsis = 0;
  const char *p = s;
  while (*p == ' ')
    p++;
  if (*p++ != '[') {
    *why = "does not start with '['";
    g_array_free(vals, TRUE);
    return FALSE;
  }
  gboolean closed = FALSE;
  while (*p) {
    while (*p == ' ' || *p == ',')
      p++;
    if (*p == ']') {
      closed = TRUE;
      p++;
      break;
    }
    if (g_str_has_prefix(p, "...")) {
      n_ellipsis++;
      ellipsis_at = (int)vals->len;
      p += 3;
      continue;
    }
    char *end;
    gint64 v = g_ascii_strtoll(p, &end, 10);
    if (end == p || v < 0 || v > INT32_MAX) {
      *why = "holds something other than non-negative integers";
      g_array_free(vals, TRUE);
      return FALSE;
    }
    g_array_append_val(vals, v);
    p = end;
  }
  while (*p == ' ')
    p++;
  if (!closed || *p) {
    *why = "is not a closed list";
    g_array_free(vals, TRUE);
    return FALSE;
  }
  gint64 *v = (gint64 *)vals->data;
  int nv = (int)vals->len;
  for (int i = 0; i < nv; i++)
    if (v[i] >= world) { /* the largest member of an elided list is listed */
      *why = "names a rank at or beyond the job's world size";
      g_array_free(vals, TRUE);
      return FALSE;
    }
  if (n_ellipsis == 0) {
    *n = nv;
    *ranks = g_new(int, nv > 0 ? nv : 1);
    for (int i = 0; i < nv; i++)
      (*ranks)[i] = (int)v[i];
    g_array_free(vals, TRUE);
    return TRUE;
  }
  if (n_ellipsis > 1 || ellipsis_at == nv) {
    /* "[0, 1, ..., 29, ...]": PyTorch cut the list; members beyond are unknown. */
    *truncated = TRUE;
    *why = "is truncated (ends with '...')";
    g_array_free(vals, TRUE);
    return FALSE;
  }
  /* Elided arithmetic progression "[a0, a1, ..., an]". */
  if (ellipsis_at < 2 || nv - ellipsis_at < 1) {
    *why = "elides members but gives fewer than two leading values (stride unknown)";
    g_array_free(vals, TRUE);
    return FALSE;
  }
  gint64 stride = v[1] - v[0];
  if (stride <= 0 || (v[nv - 1] - v[0]) % stride) {
    *why = "elided list is not an increasing arithmetic progression";
    g_array_free(vals, TRUE);
    return FALSE;
  }
  gint64 count = (v[nv - 1] - v[0]) / stride + 1;
  for (int i = 0; i < nv; i++)
    if ((v[i] - v[0]) % stride || (v[i] - v[0]) / stride >= count || (i > 0 && v[i] <= v[i - 1])) {
      *why = "elided list has a value off the progression set by its first two values";
      g_array_free(vals, TRUE);
      return FALSE;
    }
  if (group_size != KT_ABSENT && group_size != count) {
    *why = "elided list's progression does not match `Group size`";
    g_array_free(vals, TRUE);
    return FALSE;
  }
  *n = (int)count;
  *ranks = g_new(int, count);
  for (gint64 i = 0; i < count; i++)
    (*ranks)[i] = (int)(v[0] + i * stride);
  g_array_free(vals, TRUE);
  return TRUE;
}

/* ---- extraction ---- */

typedef struct {
  kt_trace *t;
  kt_rank *r;
  const fe_kineto_options *opt;
  int world;
  GHashTable *reg_cache;        /* kernel name string id -> registry entry (or &no_entry) */
  GHashTable *launch_by_corr;   /* correlation -> event index + 1 */
  GHashTable *record_by_corr;   /* correlation -> event index + 1 */
  GHashTable *cpu_by_ext;       /* External id -> CPU comm event index + 1 */
  GHashTable *cpu_by_thread;    /* (pid,tid) key -> GArray of CPU comm event indices sorted by ts */
  uint32_t *op_of_event;        /* event index -> op index or KT_NONE */
} ctx;

static const kt_event *ev(const kt_trace *t, uint32_t i) { return &g_array_index(t->events, kt_event, i); }
static const kt_meta *meta(const kt_trace *t, const kt_event *e)
{ return e->meta == KT_NONE ? NULL : &g_array_index(t->metas, kt_meta, e->meta); }

static gint64 *thread_key(const kt_event *e)
{
  gint64 *k = g_new(gint64, 1);
  *k = kt_thread_key(e);
  return k;
}

typedef struct {
  sim_time_ps ts;
  uint32_t file_index, idx;
} ts_key;

static int cmp_ts_key(const void *a, const void *b)
{
  const ts_key *x = a, *y = b;
  if (x->ts != y->ts)
    return x->ts < y->ts ? -1 : 1;
  return x->file_index < y->file_index ? -1 : x->file_index > y->file_index;
}

/* Sorts an array of event indices by (ts, file order); O(n log n). */
static void sort_by_ts(const kt_trace *t, GArray *a)
{
  ts_key *k = g_new(ts_key, a->len ? a->len : 1);
  for (guint i = 0; i < a->len; i++) {
    const kt_event *e = ev(t, g_array_index(a, uint32_t, i));
    k[i] = (ts_key){ e->ts, e->file_index, g_array_index(a, uint32_t, i) };
  }
  qsort(k, a->len, sizeof(ts_key), cmp_ts_key);
  for (guint i = 0; i < a->len; i++)
    g_array_index(a, uint32_t, i) = k[i].idx;
  g_free(k);
}

static void rank_warn(kt_rank *r, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void rank_warn(kt_rank *r, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *m = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_ptr_array_add(r->warnings, g_strdup_printf("rank %d: %s", r->rank, m));
  g_free(m);
}

void kt_rank_free(kt_rank *r)
{
  if (!r)
    return;
  if (r->comms) {
    for (guint i = 0; i < r->comms->len; i++) {
      kt_comm *c = &g_array_index(r->comms, kt_comm, i);
      g_free(c->ranks);
      g_free(c->group_key);
      g_free(c->splits);
    }
    g_array_free(r->comms, TRUE);
  }
  g_free(r->buf_links);
  if (r->ops)
    g_array_free(r->ops, TRUE);
  g_free(r->stream_keys);
  g_free(r->stream_first);
  if (r->warnings)
    g_ptr_array_free(r->warnings, TRUE);
  if (r->steps_dropped)
    g_string_free(r->steps_dropped, TRUE);
  if (r->skipped)
    g_hash_table_destroy(r->skipped);
  if (r->sync_edges)
    g_array_free(r->sync_edges, TRUE);
  if (r->sync_targets)
    g_array_free(r->sync_targets, TRUE);
  g_free(r);
}

typedef struct {
  int64_t n;
  uint32_t ev;
} step_ref;

static int cmp_step(const void *a, const void *b)
{
  const step_ref *x = a, *y = b;
  return x->n < y->n ? -1 : x->n > y->n;
}

/* Time a GPU op is attributed to: its launch when known, else its own start. */
static sim_time_ps gpu_anchor(ctx *c, const kt_event *e)
{
  if (e->correlation != KT_ABSENT) {
    gpointer v = g_hash_table_lookup(c->launch_by_corr, &e->correlation);
    if (v)
      return ev(c->t, GPOINTER_TO_UINT(v) - 1)->ts;
  }
  return e->ts;
}

/* Whether any GPU op is anchored in [ws, we); O(events). */
static gboolean step_has_gpu(ctx *c, sim_time_ps ws, sim_time_ps we)
{
  for (guint i = 0; i < c->t->events->len; i++) {
    const kt_event *e = ev(c->t, i);
    if (e->kind != KT_EV_KERNEL && e->kind != KT_EV_MEMCPY && e->kind != KT_EV_MEMSET)
      continue;
    sim_time_ps a = gpu_anchor(c, e);
    if (a >= ws && a < we)
      return TRUE;
  }
  return FALSE;
}

/* Why the step with marker se is incomplete, or NULL when it is not:
 * it launched no GPU work, or nothing in the trace ends after its marker
 * (the trace was cut inside the step).  O(events). */
static const char *step_incomplete(ctx *c, const kt_event *se)
{
  if (!step_has_gpu(c, se->ts, se->ts + se->dur))
    return "launched no GPU work";
  sim_time_ps end = se->ts + se->dur, last = 0;
  for (guint i = 0; i < c->t->events->len; i++) {
    const kt_event *e = ev(c->t, i);
    if (e != se && e->ts + e->dur > last)
      last = e->ts + e->dur;
  }
  /* Skipped events (CPU ops, runtime calls) count too; their end is only
   * known to the microsecond, so it must be past the marker's end by one. */
  if (c->t->have_end && c->t->end_max_us - c->t->origin_us > (end + SIM_PS_PER_US - 1) / SIM_PS_PER_US)
    last = end + 1;
  if (last <= end)
    return "cut by the trace's end: nothing in the trace ends after its marker";
  return NULL;
}

/* Records a step left out of the window and why (the report prints it). */
static void note_dropped(kt_rank *r, int n, const char *why)
{
  if (r->steps_dropped == NULL)
    r->steps_dropped = g_string_new(NULL);
  else
    g_string_append(r->steps_dropped, ", ");
  g_string_append_printf(r->steps_dropped, "#%d (%s)", n, why);
  rank_warn(r, "ProfilerStep#%d dropped as incomplete: %s", n, why);
}

/* The step markers of the trace, numbered (vLLM / SGLang markers by start
 * time) and sorted by number, duplicates counted and dropped; sets
 * r->n_steps. */
static GArray *collect_steps(ctx *c)
{
  kt_trace *t = c->t;
  kt_rank *r = c->r;
  GArray *steps = g_array_new(FALSE, FALSE, sizeof(step_ref));
  for (guint i = 0; i < t->events->len; i++) {
    const kt_event *e = ev(t, i);
    if (e->kind != KT_EV_STEP)
      continue;
    gboolean dup = FALSE;
    for (guint k = 0; k < steps->len && e->aux != KT_ABSENT; k++)
      if (g_array_index(steps, step_ref, k).n == e->aux)
        dup = TRUE;
    if (dup) {
      kt_count_skip(r->skipped, "duplicate ProfilerStep range (first kept)", 1);
      continue;
    }
    step_ref s = { e->aux, i };
    g_array_append_val(steps, s);
  }
  /* vLLM / SGLang markers carry no number: number every step by start time
   * (sort_by_ts orders event indices; ProfilerStep numbers are kept). */
  gboolean unnumbered = FALSE;
  for (guint k = 0; k < steps->len; k++)
    unnumbered |= g_array_index(steps, step_ref, k).n == KT_ABSENT;
  if (unnumbered) {
    GArray *idx = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    for (guint k = 0; k < steps->len; k++)
      g_array_append_val(idx, g_array_index(steps, step_ref, k).ev);
    sort_by_ts(t, idx);
    for (guint k = 0; k < steps->len; k++)
      g_array_index(steps, step_ref, k) = (step_ref){ (int64_t)k, g_array_index(idx, uint32_t, k) };
    g_array_free(idx, TRUE);
    rank_warn(r, "steps are vLLM/SGLang markers numbered 0..%u by start time", steps->len ? steps->len - 1 : 0);
  }
  g_array_sort(steps, cmp_step);
  r->n_steps = (int)steps->len;
  return steps;
}

/* The steps of the window among the n sorted steps s, as the indices
 * [*lo, *hi]: --step N, --steps A..B or every step, dropping steps shown
 * incomplete from the ends (each noted), else the last complete step.
 * FALSE (error set) when the steps asked for are not in the trace. */
static gboolean pick_steps(ctx *c, const step_ref *s, guint n, guint *lo_out, guint *hi_out, GError **error)
{
  const kt_trace *t = c->t;
  kt_rank *r = c->r;
  guint lo = 0, hi = n - 1;
  if (c->opt->step >= 0) {
    gboolean found = FALSE;
    for (guint k = 0; k < n; k++)
      if (s[k].n == c->opt->step) {
        lo = hi = k;
        found = TRUE;
      }
    if (!found) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: no ProfilerStep#%d (the trace has steps %d..%d)",
                  t->path, c->opt->step, r->step_first, r->step_last);
      return FALSE;
    }
    /* An explicit step is used even when incomplete, with a warning. */
    const char *why = step_incomplete(c, ev(t, s[lo].ev));
    if (why)
      rank_warn(r, "ProfilerStep#%d (--step) %s", (int)s[lo].n, why);
  } else {
    if (c->opt->step_lo >= 0) {
      /* --steps A..B: the steps numbered A..B. */
      guint k = 0;
      while (k < n && s[k].n < c->opt->step_lo)
        k++;
      guint m = k;
      while (m < n && s[m].n <= c->opt->step_hi)
        m++;
      if (m == k) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                    "%s: --steps %d..%d: no ProfilerStep in that range (the trace has steps %d..%d)", t->path,
                    c->opt->step_lo, c->opt->step_hi, r->step_first, r->step_last);
        return FALSE;
      }
      lo = k;
      hi = m - 1;
    }
    /* A step is dropped only when it is shown to be incomplete (no GPU
     * work, or cut by the trace's end), and only from the ends of the
     * window, which must stay contiguous; each drop is recorded with its
     * reason.  The default (one step) is the last complete one. */
    const char *why_lo = NULL, *why_hi = NULL;
    guint lo0 = lo, hi0 = hi;
    while (hi > lo && (why_hi = step_incomplete(c, ev(t, s[hi].ev))) != NULL) {
      note_dropped(r, (int)s[hi].n, why_hi);
      hi--;
    }
    if (c->opt->all_steps || c->opt->step_lo >= 0) {
      while (lo < hi && (why_lo = step_incomplete(c, ev(t, s[lo].ev))) != NULL) {
        note_dropped(r, (int)s[lo].n, why_lo);
        lo++;
      }
    } else {
      lo = hi;
    }
    if (lo == hi && step_incomplete(c, ev(t, s[hi].ev)) != NULL) {
      /* Nothing complete: keep the range asked for rather than guess. */
      rank_warn(r, "no complete ProfilerStep among #%d..#%d (%s); using them anyway", (int)s[lo0].n,
                (int)s[hi0].n, step_incomplete(c, ev(t, s[hi].ev)));
      if (r->steps_dropped) {
        g_string_free(r->steps_dropped, TRUE);
        r->steps_dropped = NULL;
      }
      hi = hi0;
      lo = c->opt->all_steps || c->opt->step_lo >= 0 ? lo0 : hi0;
    }
  }
  *lo_out = lo;
  *hi_out = hi;
  return TRUE;
}

/* Chooses the window [*ws, *we) on the CPU timeline (*have FALSE: no
 * steps, or the whole trace asked for) and records the steps used. */
static gboolean choose_window(ctx *c, sim_time_ps *ws, sim_time_ps *we, gboolean *have, GError **error)
{
  kt_trace *t = c->t;
  kt_rank *r = c->r;
  GArray *steps = collect_steps(c);
  *have = FALSE;
  r->step_first = r->step_last = r->step_used = r->step_used_first = -1;
  if (steps->len == 0 || c->opt->whole_trace) {
    if (steps->len) {
      r->step_first = (int)g_array_index(steps, step_ref, 0).n;
      r->step_last = (int)g_array_index(steps, step_ref, steps->len - 1).n;
    }
    g_array_free(steps, TRUE);
    if (c->opt->step >= 0) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: --step %d asked for, but the trace has no ProfilerStep",
                  t->path, c->opt->step);
      return FALSE;
    }
    return TRUE;
  }
  step_ref *s = (step_ref *)steps->data;
  r->step_first = (int)s[0].n;
  r->step_last = (int)s[steps->len - 1].n;
  guint lo, hi;
  if (!pick_steps(c, s, steps->len, &lo, &hi, error)) {
    g_array_free(steps, TRUE);
    return FALSE;
  }
  r->step_used_first = (int)s[lo].n;
  r->n_steps_used = (int)(hi - lo + 1);
  *ws = ev(t, s[lo].ev)->ts;
  *we = ev(t, s[hi].ev)->ts + ev(t, s[hi].ev)->dur;
  r->step_used = (int)s[hi].n;
  r->all_steps_used = lo != hi;
  /* The thread that ran the (last) step marker: its CPU work up to the
   * marker's end is part of the step (kineto_graph.c, host_chains). */
  r->step_thread = kt_thread_key(ev(t, s[hi].ev));
  r->have_step_thread = TRUE;
  *have = TRUE;
  g_array_free(steps, TRUE);
  return TRUE;
}

/* Innermost CPU comm ops on the launch's thread that contain time ts; returns
 * up to 4 event indices, innermost first. */
static int containing_cpu_ops(ctx *c, const kt_event *launch, uint32_t out[4])
{
  gint64 key = kt_thread_key(launch);
  GArray *a = g_hash_table_lookup(c->cpu_by_thread, &key);
  if (!a)
    return 0;
  /* Binary search: last op with ts <= launch ts. */
  guint lo = 0, hi = a->len;
  while (lo < hi) {
    guint mid = (lo + hi) / 2;
    if (ev(c->t, g_array_index(a, uint32_t, mid))->ts <= launch->ts)
      lo = mid + 1;
    else
      hi = mid;
  }
  int n = 0;
  for (guint k = lo; k-- > 0 && n < 4 && lo - k <= 16;) {
    const kt_event *e = ev(c->t, g_array_index(a, uint32_t, k));
    if (e->ts <= launch->ts && launch->ts < e->ts + (e->dur > 0 ? e->dur : 1))
      out[n++] = g_array_index(a, uint32_t, k);
  }
  return n;
}

static const char *type_name_of(const kt_trace *t, uint32_t id) { return kt_str(t, id); }

/* What describe_comm found: a communication record, a kernel kept as
 * compute (counted and warned), or an error in *error.  Three values, so
 * that a fatal error cannot pass for a skip when the caller gives no
 * GError (error == NULL). */
typedef enum { KT_DESC_OK, KT_DESC_SKIP, KT_DESC_ERROR } kt_desc;

/* The CPU-side ops linked to a communication kernel, most specific link
 * first (at most 8). */
typedef struct {
  uint32_t ev[8];
  int n;
} cpu_links;

/* Linked CPU ops: by the kernel's External id, by the launch's External id,
 * then by time containment of the launch on its thread. */
static void link_cpu_ops(ctx *c, const kt_event *k, const kt_event *launch, cpu_links *cpu)
{
  cpu->n = 0;
  /* Old traces: a GPU op's or launch's External id equals its correlation and
   * links to nothing; such ids must not match unrelated CPU ops by accident. */
  int64_t ext[2] = { k->ext_id != k->correlation ? k->ext_id : KT_ABSENT,
                     launch && launch->ext_id != launch->correlation ? launch->ext_id : KT_ABSENT };
  for (int i = 0; i < 2; i++) {
    if (ext[i] == KT_ABSENT)
      continue;
    gpointer v = g_hash_table_lookup(c->cpu_by_ext, &ext[i]);
    if (v) {
      cpu->ev[cpu->n++] = GPOINTER_TO_UINT(v) - 1;
      break;
    }
  }
  if (launch) {
    uint32_t in[4];
    int n = containing_cpu_ops(c, launch, in);
    for (int i = 0; i < n; i++) {
      gboolean dup = FALSE;
      for (int q = 0; q < cpu->n; q++)
        dup |= cpu->ev[q] == in[i];
      if (!dup && cpu->n < 8)
        cpu->ev[cpu->n++] = in[i];
    }
  }
}

/* Kind: Collective name on the kernel, then on CPU ops, then CPU op names
 * (the most specific first: nccl:* over c10d::*), then the kernel name.
 * FALSE when none tells. */
static gboolean comm_kind(const kt_trace *t, const kt_event *k, const kt_meta *km, const cpu_links *cpu,
                          const kt_commreg_entry *re, et_coll_type *coll, int *p2p)
{
  gboolean known = km && kt_coll_from_arg(kt_str(t, km->coll_name), coll, p2p);
  for (int i = 0; i < cpu->n && !known; i++) {
    const kt_meta *m = meta(t, ev(t, cpu->ev[i]));
    known = m && kt_coll_from_arg(kt_str(t, m->coll_name), coll, p2p);
  }
  for (int pass = 0; pass < 2 && !known; pass++)
    for (int i = 0; i < cpu->n && !known; i++) {
      const char *n = kt_str(t, ev(t, cpu->ev[i])->name);
      if ((pass == 0) == (g_str_has_prefix(n, "nccl:") || g_str_has_prefix(n, "rccl:")))
        known = kt_coll_from_cpu_op(n, coll, p2p);
    }
  if (!known && re && !re->kind_from_name && (re->coll != ET_COLL_NONE || re->p2p)) {
    *coll = re->coll;
    *p2p = re->p2p;
    known = TRUE;
  }
  if (!known)
    known = kt_coll_from_kernel(kt_str(t, k->name), coll, p2p);
  return known;
}

/* Input Dims x Input type of the CPU-side op (nccl:<op> first, then
 * record_param_comms, then c10d::<op>): the element count, its dtype in
 * *dtype and the size source in cm; KT_ABSENT when no op gives both. */
static int64_t size_from_input_dims(const kt_trace *t, const cpu_links *cpu, kt_comm *cm, const char **dtype)
{
  static const char *const pref[] = { "nccl:", "rccl:", "record_param_comms", "c10d::" };
  int64_t nelems = KT_ABSENT;
  for (size_t pi = 0; pi < G_N_ELEMENTS(pref) && nelems == KT_ABSENT; pi++)
    for (int i = 0; i < cpu->n && nelems == KT_ABSENT; i++) {
      const kt_event *e = ev(t, cpu->ev[i]);
      const char *n = kt_str(t, e->name);
      const kt_meta *m = meta(t, e);
      gboolean reg_op = pi == 2 && kt_commreg_cpu_op(n); /* _C_custom_ar::all_reduce, symm_mem::*, ... */
      if ((!g_str_has_prefix(n, pref[pi]) && !reg_op) || !m)
        continue;
      /* c10d::alltoall_base_ lists [output, input]: the send size is entry 1. */
      gboolean second = g_str_has_prefix(n, "c10d::alltoall_base");
      int64_t ne = second ? m->in_numel1 : m->in_numel0;
      uint32_t ty = second ? m->in_type1 : m->in_type0;
      if (ne != KT_ABSENT && ty != KT_NONE && kt_dtype_size(type_name_of(t, ty)) > 0) {
        nelems = ne;
        *dtype = kt_str(t, ty);
        cm->size_source = pi < 2 ? "CPU op nccl:* Input Dims x Input type"
                                 : reg_op ? "CPU op of the library (registry) Input Dims x Input type"
                                 : (pi == 2 ? "CPU op record_param_comms Input Dims x Input type"
                                            : "CPU op c10d::* Input Dims x Input type");
      }
    }
  return nelems;
}

/* Size: In/Out msg nelems x dtype of the kernel, else of a CPU op, else
 * the Input Dims of a CPU op; counted in the rank's size sources.  Returns
 * the element count (KT_ABSENT when unknown) and in *szm the metadata that
 * gave it (NULL for Input Dims or none). */
static int64_t comm_size(ctx *c, kt_comm *cm, const kt_event *k, const kt_meta *km, const cpu_links *cpu,
                         const kt_meta **szm_out)
{
  const kt_trace *t = c->t;
  kt_rank *r = c->r;
  const kt_meta *szm = NULL;
  if (km && (km->in_nelems != KT_ABSENT || km->out_nelems != KT_ABSENT) && km->dtype != KT_NONE) {
    szm = km;
    cm->size_source = "kernel args (In/Out msg nelems x dtype)";
  }
  for (int i = 0; i < cpu->n && !szm; i++) {
    const kt_meta *m = meta(t, ev(t, cpu->ev[i]));
    if (m && (m->in_nelems != KT_ABSENT || m->out_nelems != KT_ABSENT) && m->dtype != KT_NONE) {
      szm = m;
      cm->size_source = "CPU op args (In/Out msg nelems x dtype)";
    }
  }
  int64_t nelems = KT_ABSENT;
  const char *dtype = NULL;
  if (szm) {
    nelems = cm->p2p == 2 ? szm->out_nelems : szm->in_nelems;
    if (nelems == KT_ABSENT)
      nelems = cm->p2p == 2 ? szm->in_nelems : szm->out_nelems;
    dtype = kt_str(t, szm->dtype);
  } else {
    nelems = size_from_input_dims(t, cpu, cm, &dtype);
  }
  cm->dsize = kt_dtype_size(dtype);
  cm->dtype = dtype;
  if (nelems == KT_ABSENT || nelems < 0 || !dtype) {
    r->size_unknown++;
    cm->size_source = "unknown";
    cm->bytes = 0;
    cm->unsized = TRUE;
  } else if (cm->dsize == 0) {
    r->size_unknown++;
    cm->unsized = TRUE;
    rank_warn(r, "kernel '%s': unknown dtype '%s' (not in the c10 ScalarType table); size unknown",
              kt_str(t, k->name), dtype);
    cm->size_source = "unknown dtype";
    cm->bytes = 0;
  } else {
    cm->bytes = (uint64_t)nelems * (uint64_t)cm->dsize;
    if (g_str_has_prefix(cm->size_source, "kernel"))
      r->size_from_args++;
    else
      r->size_from_cpu++;
  }
  *szm_out = szm;
  return nelems;
}

/* Members from a truncated or malformed Process Group Ranks string rs:
 * Global rank start / stride with Group size when rs is truncated (checked
 * against the world), else an error for a malformed list.  Leaves
 * cm->ranks NULL when rs is truncated and start/stride are absent. */
static kt_desc ranks_from_list(ctx *c, kt_comm *cm, const kt_event *k, const char *rs, int64_t grp_size,
                               int64_t rstart, int64_t rstride, GError **error)
{
  const kt_trace *t = c->t;
  gboolean trunc;
  const char *why = NULL;
  if (kt_parse_ranks(rs, grp_size, c->world, &cm->ranks, &cm->n_ranks, &trunc, &why))
    return KT_DESC_OK;
  if (trunc && rstart != KT_ABSENT && rstride > 0 && grp_size > 0) {
    if (rstart < 0 || rstart >= c->world || grp_size > c->world ||
        (grp_size > 1 && rstride > (c->world - 1 - rstart) / (grp_size - 1))) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s: kernel '%s' at ts %.3f us: Global rank start %" G_GINT64_FORMAT ", stride %" G_GINT64_FORMAT
                  " and Group size %" G_GINT64_FORMAT " name ranks beyond the job's world size %d",
                  t->path, kt_str(t, k->name), (double)k->ts / 1e6, rstart, rstride, grp_size, c->world);
      return KT_DESC_ERROR;
    }
    cm->n_ranks = (int)grp_size;
    cm->ranks = g_new(int, grp_size);
    for (int64_t i = 0; i < grp_size; i++)
      cm->ranks[i] = (int)(rstart + i * rstride);
  } else if (!trunc) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: kernel '%s' at ts %.3f us: Process Group Ranks \"%s\" %s (world size %d)", t->path,
                kt_str(t, k->name), (double)k->ts / 1e6, rs, why, c->world);
    return KT_DESC_ERROR;
  }
  return KT_DESC_OK;
}

/* Members from distributedInfo.pg_config by the group's name (checked
 * against the world); cm->ranks stays NULL when the name is not listed. */
static kt_desc ranks_from_pg_config(ctx *c, kt_comm *cm, GError **error)
{
  const kt_trace *t = c->t;
  for (guint i = 0; i < t->pgs->len; i++) {
    kt_pg *pg = g_ptr_array_index(t->pgs, i);
    if (!pg->name || strcmp(pg->name, cm->pg_name) || pg->n_ranks <= 0)
      continue;
    for (int q = 0; q < pg->n_ranks; q++)
      if (pg->ranks[q] < 0 || pg->ranks[q] >= c->world) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                    "%s: distributedInfo.pg_config group '%s' names rank %d, beyond the job's world size %d",
                    t->path, pg->name, pg->ranks[q], c->world);
        return KT_DESC_ERROR;
      }
    cm->n_ranks = pg->n_ranks;
    cm->ranks = g_memdup2(pg->ranks, sizeof(int) * (size_t)pg->n_ranks);
    if (!cm->pg_desc)
      cm->pg_desc = pg->desc;
    break;
  }
  return KT_DESC_OK;
}

/* Group: name, description and members from the kernel's metadata, else a
 * CPU op's (the member list, else start/stride, else pg_config, else every
 * rank of the job), and the matching key "pg_name|r0,r1,...". */
static kt_desc comm_group(ctx *c, kt_comm *cm, const kt_event *k, const kt_meta *km, const cpu_links *cpu,
                          GError **error)
{
  const kt_trace *t = c->t;
  kt_rank *r = c->r;
  const kt_meta *gm = NULL;
  if (km && (km->pg_ranks != KT_NONE || km->pg_name != KT_NONE))
    gm = km;
  for (int i = 0; i < cpu->n && !gm; i++) {
    const kt_meta *m = meta(t, ev(t, cpu->ev[i]));
    if (m && (m->pg_ranks != KT_NONE || m->pg_name != KT_NONE))
      gm = m;
  }
  /* Rank start/stride live on record_param_comms. */
  int64_t grp_size = gm ? gm->group_size : KT_ABSENT, rstart = KT_ABSENT, rstride = KT_ABSENT;
  for (int i = 0; i < cpu->n; i++) {
    const kt_meta *m = meta(t, ev(t, cpu->ev[i]));
    if (m && m->rank_start != KT_ABSENT && rstart == KT_ABSENT) {
      rstart = m->rank_start;
      rstride = m->rank_stride;
      if (grp_size == KT_ABSENT)
        grp_size = m->group_size;
    }
  }
  cm->pg_name = gm ? kt_str(t, gm->pg_name) : NULL;
  cm->pg_desc = gm ? kt_str(t, gm->pg_desc) : NULL;
  const char *rs = gm ? kt_str(t, gm->pg_ranks) : NULL;
  if (rs && ranks_from_list(c, cm, k, rs, grp_size, rstart, rstride, error) == KT_DESC_ERROR)
    return KT_DESC_ERROR;
  if (!cm->ranks && cm->pg_name && ranks_from_pg_config(c, cm, error) == KT_DESC_ERROR)
    return KT_DESC_ERROR;
  if (!cm->ranks && rs) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: kernel '%s': Process Group Ranks \"%s\" is truncated and neither Global rank start/stride nor "
                "distributedInfo.pg_config give the members; re-profile with a newer PyTorch or pass the groups "
                "explicitly", t->path, kt_str(t, k->name), rs);
    return KT_DESC_ERROR;
  }
  if (!cm->ranks) {
    cm->n_ranks = c->world;
    cm->ranks = g_new(int, c->world);
    for (int i = 0; i < c->world; i++)
      cm->ranks[i] = i;
    kt_count_skip(r->skipped, "collective without process group info (assumed the default group of all ranks)", 1);
  }
  if (grp_size != KT_ABSENT && grp_size != cm->n_ranks)
    rank_warn(r, "kernel '%s': Group size %" G_GINT64_FORMAT " but %d ranks listed", kt_str(t, k->name), grp_size,
              cm->n_ranks);
  gboolean member = FALSE;
  for (int i = 0; i < cm->n_ranks; i++)
    member |= cm->ranks[i] == r->rank;
  if (!member)
    rank_warn(r, "kernel '%s': rank %d is not a member of its group %s", kt_str(t, k->name), r->rank,
              rs ? rs : "(default)");
  GString *key = g_string_new(cm->pg_name ? cm->pg_name : "");
  g_string_append_c(key, '|');
  for (int i = 0; i < cm->n_ranks; i++)
    g_string_append_printf(key, "%s%d", i ? "," : "", cm->ranks[i]);
  cm->group_key = g_string_free(key, FALSE);
  return KT_DESC_OK;
}

/* All-to-all(v) per-peer split sizes from the In split size list of the
 * metadata szm that sized it (nelems elements): an all_to_allv when the
 * list has one entry per member and divides the count. */
static void comm_splits(ctx *c, kt_comm *cm, const kt_meta *szm, int64_t nelems)
{
  const char *sp = szm ? kt_str(c->t, szm->in_split) : NULL;
  GArray *l = g_array_new(FALSE, FALSE, sizeof(gint64));
  if (sp && kt_parse_int_list(sp, l) && l->len == (guint)cm->n_ranks) {
    gint64 sum = 0;
    for (guint i = 0; i < l->len; i++)
      sum += g_array_index(l, gint64, i);
    if (sum > 0 && nelems % sum == 0) {
      uint64_t per_row = (uint64_t)(nelems / sum) * (uint64_t)cm->dsize;
      cm->splits = g_new(uint64_t, cm->n_ranks);
      for (int i = 0; i < cm->n_ranks; i++)
        cm->splits[i] = (uint64_t)g_array_index(l, gint64, i) * per_row;
      cm->coll = ET_COLL_ALL_TO_ALLV;
    }
  } else if (sp && strstr(sp, "...")) {
    kt_count_skip(c->r->skipped, "all_to_allv split list cut at 30 entries (uniform split assumed)", 1);
  }
  g_array_free(l, TRUE);
}

/* A registry kernel that neither its args nor a linked CPU op sized:
 * a synchronisation kernel is a barrier without payload; otherwise the
 * workload card gives the size, the group and (MoE all-to-allv) the
 * per-member splits (kt_commreg_card_size).  Without a card, or with one
 * lacking a field, the kernel stays of unknown size: replayed at its
 * measured duration and reported (warn_unsized).  The group key is
 * "card:<rule>|members" so that card groups never merge with a traced
 * process group.  O(group size). */
static void registry_size(ctx *c, kt_comm *cm)
{
  kt_rank *r = c->r;
  const kt_commreg_entry *re = cm->reg;
  int *ranks = NULL, n = 0;
  uint64_t bytes = 0, *splits = NULL;
  const char *why = NULL;
  gboolean ok = kt_commreg_card_size(re, c->opt->card, r->rank, c->world, &ranks, &n, &bytes, &splits, &why);
  if (!ok && re->size != KT_CR_SIZE_SYNC) {
    if (!r->card_missing_why)
      r->card_missing_why = why;
    return;
  }
  r->size_unknown--;
  cm->unsized = FALSE;
  cm->bytes = bytes;
  cm->size_source = re->size == KT_CR_SIZE_SYNC ? "registry: synchronisation, no payload" : why;
  if (re->size == KT_CR_SIZE_SYNC) {
    cm->coll = ET_COLL_BARRIER;
    cm->p2p = 0;
    r->size_from_sync++;
  } else {
    r->size_from_card++;
    cm->dtype = NULL;
    cm->dsize = 0;
  }
  if (ranks) {
    cm->ranks = ranks;
    cm->n_ranks = n;
    cm->pg_name = NULL;
    cm->pg_desc = re->size == KT_CR_SIZE_TOKENS_HIDDEN ? "TP group from the workload card"
                                                         : "EP group from the workload card";
    GString *key = g_string_new(re->size == KT_CR_SIZE_TOKENS_HIDDEN ? "card:tp|" : "card:ep|");
    for (int i = 0; i < n; i++)
      g_string_append_printf(key, "%s%d", i ? "," : "", ranks[i]);
    cm->group_key = g_string_free(key, FALSE);
  }
  if (splits) {
    cm->splits = splits;
    cm->coll = ET_COLL_ALL_TO_ALLV;
    const char *hop_why = NULL;
    if (kt_commreg_two_hop(re, c->opt->card, n, &cm->two_hop, &cm->two_hop_ppm, &hop_why))
      cm->size_source = hop_why;
  }
}

/* Fills kind, size, dtype, group, seq, peers and splits of comm from the
 * kernel's args and its linked CPU ops, one helper per field above. */
static kt_desc describe_comm(ctx *c, kt_comm *cm, const kt_event *k, const kt_event *launch, GError **error)
{
  kt_trace *t = c->t;
  kt_rank *r = c->r;
  const kt_meta *km = meta(t, k);
  cpu_links cpu;
  link_cpu_ops(c, k, launch, &cpu);
  et_coll_type coll = ET_COLL_NONE;
  int p2p = 0;
  if (!comm_kind(t, k, km, &cpu, cm->reg, &coll, &p2p)) {
    kt_count_skip(r->skipped, "communication kernel of unknown kind (kept as compute)", 1);
    rank_warn(r, "communication kernel '%s' has no Collective name and no linked collective CPU op; replayed as "
              "compute", kt_str(t, k->name));
    return KT_DESC_SKIP;
  }
  cm->coll = coll;
  cm->p2p = p2p;
  cm->seq = km && km->seq != KT_ABSENT ? km->seq : KT_ABSENT;
  cm->root = cm->peer = -1;
  const kt_meta *szm = NULL;
  int64_t nelems = comm_size(c, cm, k, km, &cpu, &szm);
  uint64_t bytes_exact;
  if (!cm->unsized && (!wisp_mul_u64((uint64_t)nelems, cm->dsize, &bytes_exact) || bytes_exact > WISP_MAX_BYTES)) {
    /* Checked where the size enters: 2^62 float elements would wrap to 0 bytes. */
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: kernel '%s' at ts %.3f us: %s give %" G_GINT64_FORMAT " elements of %s (%u bytes each), above "
                "the 2^50 bytes (1 PiB) wisp represents per message; fix the trace's size fields",
                t->path, kt_str(t, k->name), (double)k->ts / 1e6, cm->size_source, nelems, cm->dtype,
                (unsigned)cm->dsize);
    return KT_DESC_ERROR;
  }
  if (cm->unsized && cm->reg && cm->reg->size != KT_CR_SIZE_ARGS)
    registry_size(c, cm);
  if (!cm->ranks && comm_group(c, cm, k, km, &cpu, error) == KT_DESC_ERROR)
    return KT_DESC_ERROR;
  /* Peers and roots. */
  if (cm->p2p) {
    int64_t src = km ? km->src_rank : KT_ABSENT, dst = km ? km->dst_rank : KT_ABSENT;
    int64_t peer = cm->p2p == 1 ? dst : src;
    cm->peer = peer >= 0 && peer <= INT32_MAX ? (int)peer : -1;
  } else if (et_coll_rooted(coll)) {
    if (km && km->src_rank >= 0 && km->src_rank <= INT32_MAX)
      cm->root = (int)km->src_rank;
  }
  if ((coll == ET_COLL_ALL_TO_ALL || coll == ET_COLL_ALL_TO_ALLV) && cm->bytes > 0 && cm->n_ranks > 0 && !cm->splits)
    comm_splits(c, cm, szm, nelems);
  return KT_DESC_OK;
}

static int cmp_op(const void *a, const void *b)
{
  const kt_op *x = a, *y = b;
  if (x->stream != y->stream)
    return x->stream < y->stream ? -1 : 1;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return x->ev < y->ev ? -1 : x->ev > y->ev;
}

int kt_cmp_i64(const void *a, const void *b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static void add_sync_edge(ctx *c, uint32_t parent, uint32_t child)
{
  if (parent == KT_NONE || child == KT_NONE || parent == child)
    return;
  const kt_op *p = &g_array_index(c->r->ops, kt_op, parent), *q = &g_array_index(c->r->ops, kt_op, child);
  if (p->stream == q->stream)
    return; /* already ordered by the stream */
  if (p->end > q->start) {
    /* The measured timeline contradicts the edge: keep the measured overlap. */
    c->r->inconsistent_sync_edges++;
    return;
  }
  kt_edge e = { parent, child };
  g_array_append_val(c->r->sync_edges, e);
}

uint32_t kt_stream_upper(const kt_rank *r, uint32_t s, sim_time_ps t)
{
  uint32_t lo = r->stream_first[s], hi = r->stream_first[s + 1];
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (g_array_index(r->ops, kt_op, mid).start <= t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Ops of stream s are [first[s], first[s+1]) in start order, which is
 * their issue order (a stream is FIFO).  The index of the first op of s
 * issued at or after t (first[s+1] when none): a binary search. */
static uint32_t first_issued_from(ctx *c, uint32_t s, sim_time_ps t)
{
  const uint32_t *first = c->r->stream_first;
  uint32_t lo = first[s], hi = first[s + 1];
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (kt_op_issued(c->r, &g_array_index(c->r->ops, kt_op, mid)) < t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* The dense stream index of (device, stream), or -1. */
static int64_t stream_index(const kt_rank *r, int32_t device, int32_t stream)
{
  int64_t key = (int64_t)(((uint64_t)(uint32_t)device << 32) | (uint32_t)stream);
  int64_t *found = r->n_streams ? bsearch(&key, r->stream_keys, r->n_streams, sizeof(int64_t), kt_cmp_i64) : NULL;
  return found ? found - r->stream_keys : -1;
}

/* cuda_sync events ("Stream Wait Event": args stream = the waiting stream,
 * wait_on_stream = the stream the event was recorded on,
 * wait_on_cuda_event_record_corr_id = the cudaEventRecord's correlation).
 * Their timestamps are those of the API call on the CPU, which may run far
 * ahead of the GPU.  Producer: the last op issued on wait_on_stream before
 * the cudaEventRecord call (when wait_on_stream is absent, the last op the
 * recording thread launched before it); consumer: the first op issued on
 * the waiting stream at or after the wait call.  Binary searches:
 * O(log n) per sync event. */
static void cuda_sync_edges(ctx *c, GHashTable *threads)
{
  const uint32_t *first = c->r->stream_first;
  kt_trace *t = c->t;
  kt_rank *r = c->r;
  for (guint i = 0; i < t->events->len; i++) {
    const kt_event *e = ev(t, i);
    if (e->kind != KT_EV_CUDA_SYNC || e->aux == KT_ABSENT || e->stream < 0)
      continue;
    gpointer rv = g_hash_table_lookup(c->record_by_corr, &e->aux);
    if (!rv)
      continue;
    const kt_event *rec = ev(t, GPOINTER_TO_UINT(rv) - 1);
    uint32_t prod = KT_NONE;
    int64_t ps = e->wait_stream >= 0 ? stream_index(r, e->device, e->wait_stream) : -1;
    if (ps >= 0) {
      uint32_t k = first_issued_from(c, (uint32_t)ps, rec->ts - r->window_abs);
      if (k > first[ps])
        prod = k - 1;
    } else {
      gint64 key = kt_thread_key(rec);
      GArray *a = g_hash_table_lookup(threads, &key);
      if (a) {
        guint lo = 0, hi = a->len;
        while (lo < hi) {
          guint mid = (lo + hi) / 2;
          if (ev(t, g_array_index(a, uint32_t, mid))->ts <= rec->ts)
            lo = mid + 1;
          else
            hi = mid;
        }
        for (guint k = lo; k-- > 0 && prod == KT_NONE;) {
          uint32_t ei = g_array_index(a, uint32_t, k);
          if (ev(t, ei)->kind == KT_EV_LAUNCH)
            prod = c->op_of_event[ei];
        }
      }
    }
    int64_t ws = stream_index(r, e->device, e->stream);
    uint32_t cons = KT_NONE;
    if (ws >= 0) {
      uint32_t k = first_issued_from(c, (uint32_t)ws, e->ts - r->window_abs);
      if (k < first[ws + 1])
        cons = k;
    }
    add_sync_edge(c, prod, cons);
  }
}

/* How close (ps) the end of an op on another stream must be to the start of
 * a waiting op for the wait to be attributed to it: GPU event waits resolve
 * within microseconds. */
#define KT_INFER_WAIT_TOL_PS (20 * SIM_PS_PER_US)
/* Only idle this long is worth an inferred edge: shorter gaps after a
 * launch are the launch's own latency (a few microseconds). */
#define KT_INFER_MIN_IDLE_PS (10 * SIM_PS_PER_US)

/* The producer of a stream wait the record/wait pairs do not explain, for
 * op x that started at least KT_INFER_MIN_IDLE_PS after its stream
 * predecessor, its launch and ready[x] (the end of its cross-stream parents
 * found so far) ended: the op on another stream that ended last at or
 * before x's start, at most KT_INFER_WAIT_TOL_PS before it, and later than
 * all of those, so that it explains x's wait.
 * KT_NONE when no op does.  first[] indexes the ops of each stream (sorted
 * by start, FIFO, so ends are monotone); a binary search and a walk back
 * of at most 16 ops per stream: O(streams log n). */
static uint32_t infer_producer(ctx *c, const sim_time_ps *ready, uint32_t x)
{
  const uint32_t *first = c->r->stream_first;
  const kt_rank *r = c->r;
  const kt_op *op = &g_array_index(r->ops, kt_op, x);
  sim_time_ps explained = ready[x];
  if (x > first[op->stream])
    explained = MAX(explained, g_array_index(r->ops, kt_op, x - 1).end);
  if (op->launch != KT_NONE)
    explained = MAX(explained, ev(c->t, op->launch)->ts - r->window_abs);
  uint32_t best = KT_NONE;
  sim_time_ps best_end = explained;
  if (op->start - explained < KT_INFER_MIN_IDLE_PS)
    return KT_NONE;
  for (uint32_t s = 0; s < r->n_streams; s++) {
    if (s == op->stream)
      continue;
    for (uint32_t k = kt_stream_upper(r, s, op->start), steps = 0; k-- > first[s] && steps < 16; steps++) {
      sim_time_ps end = g_array_index(r->ops, kt_op, k).end;
      if (end > op->start)
        continue;
      if (end > best_end && op->start - end <= KT_INFER_WAIT_TOL_PS) {
        best = k;
        best_end = end;
      }
      break;
    }
  }
  return best;
}

/* Waits the record/wait pairs cannot place.  Traces without
 * cudaEventRecord calls (older Kineto versions did not record them) show a
 * cudaStreamWaitEvent but not what it waits for, nor on which stream; and
 * the waiting op is often launched by another thread than the wait (DDP's
 * gradient hooks wait on a background thread, the optimizer launches on
 * the main one), which the per-thread pairing cannot see.  So the edge is
 * inferred from the timeline: an op x whose start its stream predecessor,
 * launch and known cross-stream parents do not explain, and which starts
 * right after an op p on another stream ended (infer_producer), depends on
 * p when some thread made a cudaStreamWaitEvent call after p was issued
 * and before x was.  waits: the times of every wait call, sorted.  Counted
 * in kt_rank.inferred_sync_edges.  O(ops (streams + 1) log n + edges). */
static void infer_wait_edges(ctx *c, const GArray *waits)
{
  kt_rank *r = c->r;
  sim_time_ps *ready = g_new0(sim_time_ps, r->ops->len ? r->ops->len : 1);
  for (guint i = 0; i < r->sync_edges->len; i++) {
    kt_edge e = g_array_index(r->sync_edges, kt_edge, i);
    ready[e.child] = MAX(ready[e.child], g_array_index(r->ops, kt_op, e.parent).end);
  }
  for (guint x = 0; x < r->ops->len; x++) {
    uint32_t p = infer_producer(c, ready, x);
    if (p == KT_NONE)
      continue;
    sim_time_ps from = kt_op_issued(c->r, &g_array_index(r->ops, kt_op, p));
    sim_time_ps to = kt_op_issued(c->r, &g_array_index(r->ops, kt_op, x));
    guint lo = 0, hi = waits->len;
    while (lo < hi) {
      guint mid = (lo + hi) / 2;
      if (g_array_index(waits, sim_time_ps, mid) < from)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo == waits->len || g_array_index(waits, sim_time_ps, lo) > to)
      continue;
    guint before = r->sync_edges->len;
    add_sync_edge(c, p, x);
    r->inferred_sync_edges += r->sync_edges->len - before;
  }
  g_free(ready);
}

/* Cross-stream dependencies from record/wait pairs, cuda_sync events and
 * host synchronisation (see kineto.md §8); without cuda_sync events, the
 * waits the pairs cannot place are inferred from the timeline
 * (infer_wait_edges). */
static void sync_edges(ctx *c)
{
  kt_trace *t = c->t;
  kt_rank *r = c->r;
  /* Per-thread host call sequences, ts-ordered. */
  GHashTable *threads = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, (GDestroyNotify)g_array_unref);
  gboolean have_cuda_sync = FALSE;
  for (guint i = 0; i < t->events->len; i++) {
    const kt_event *e = ev(t, i);
    if (e->kind == KT_EV_CUDA_SYNC)
      have_cuda_sync = TRUE;
    if (e->kind != KT_EV_LAUNCH && e->kind != KT_EV_RECORD && e->kind != KT_EV_WAIT && e->kind != KT_EV_HOST_SYNC)
      continue;
    gint64 *k = thread_key(e);
    GArray *a = g_hash_table_lookup(threads, k);
    if (!a) {
      a = g_array_new(FALSE, FALSE, sizeof(uint32_t));
      g_hash_table_insert(threads, k, a);
    } else {
      g_free(k);
    }
    uint32_t idx = i;
    g_array_append_val(a, idx);
  }
  /* Deterministic thread order. */
  GList *keys = g_list_sort(g_hash_table_get_keys(threads), (GCompareFunc)kt_cmp_i64);
  uint32_t *last_on_stream = g_new(uint32_t, r->n_streams ? r->n_streams : 1);
  for (GList *l = keys; l; l = l->next) {
    GArray *a = g_hash_table_lookup(threads, l->data);
    sort_by_ts(t, a);
    uint32_t last_op = KT_NONE, recorded = KT_NONE, waiting = KT_NONE;
    gboolean host_sync = FALSE;
    for (uint32_t s = 0; s < r->n_streams; s++)
      last_on_stream[s] = KT_NONE;
    for (guint i = 0; i < a->len; i++) {
      uint32_t ei = g_array_index(a, uint32_t, i);
      const kt_event *e = ev(t, ei);
      switch (e->kind) {
      case KT_EV_LAUNCH: {
        uint32_t op = c->op_of_event[ei];
        if (op == KT_NONE)
          break;
        if (waiting != KT_NONE && !have_cuda_sync) {
          add_sync_edge(c, waiting, op);
          waiting = KT_NONE;
        }
        if (host_sync) {
          for (uint32_t s = 0; s < r->n_streams; s++)
            add_sync_edge(c, last_on_stream[s], op);
          host_sync = FALSE;
        }
        last_op = op;
        last_on_stream[g_array_index(r->ops, kt_op, op).stream] = op;
        break;
      }
      case KT_EV_RECORD:
        recorded = last_op;
        break;
      case KT_EV_WAIT:
        waiting = recorded;
        break;
      case KT_EV_HOST_SYNC:
        host_sync = TRUE;
        break;
      default:
        break;
      }
    }
  }
  g_free(last_on_stream);
  if (!have_cuda_sync) {
    GArray *waits = g_array_new(FALSE, FALSE, sizeof(sim_time_ps));
    for (guint i = 0; i < t->events->len; i++)
      if (ev(t, i)->kind == KT_EV_WAIT) {
        sim_time_ps at = ev(t, i)->ts - r->window_abs;
        g_array_append_val(waits, at);
      }
    g_array_sort(waits, kt_cmp_i64);
    if (waits->len)
      infer_wait_edges(c, waits);
    g_array_free(waits, TRUE);
  }
  if (have_cuda_sync)
    cuda_sync_edges(c, threads);
  g_list_free(keys);
  g_hash_table_destroy(threads);
}

/* The lookup tables of one extraction: launches and event records by
 * correlation, CPU-side collective ops by External id and by thread (in
 * time order).  O(E log E) for E events. */
static void index_events(ctx *c)
{
  const kt_trace *t = c->t;
  c->launch_by_corr = g_hash_table_new(g_int64_hash, g_int64_equal);
  c->record_by_corr = g_hash_table_new(g_int64_hash, g_int64_equal);
  c->cpu_by_ext = g_hash_table_new(g_int64_hash, g_int64_equal);
  c->cpu_by_thread = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, (GDestroyNotify)g_array_unref);
  c->op_of_event = g_new(uint32_t, t->events->len ? t->events->len : 1);
  for (guint i = 0; i < t->events->len; i++) {
    kt_event *e = &g_array_index(t->events, kt_event, i);
    c->op_of_event[i] = KT_NONE;
    if (e->kind == KT_EV_LAUNCH && e->correlation != KT_ABSENT)
      g_hash_table_insert(c->launch_by_corr, &e->correlation, GUINT_TO_POINTER(i + 1));
    else if (e->kind == KT_EV_RECORD && e->correlation != KT_ABSENT)
      g_hash_table_insert(c->record_by_corr, &e->correlation, GUINT_TO_POINTER(i + 1));
    else if (e->kind == KT_EV_CPU_COMM) {
      if (e->ext_id != KT_ABSENT && !g_hash_table_contains(c->cpu_by_ext, &e->ext_id))
        g_hash_table_insert(c->cpu_by_ext, &e->ext_id, GUINT_TO_POINTER(i + 1));
      gint64 *k = thread_key(e);
      GArray *a = g_hash_table_lookup(c->cpu_by_thread, k);
      if (!a) {
        a = g_array_new(FALSE, FALSE, sizeof(uint32_t));
        g_hash_table_insert(c->cpu_by_thread, k, a);
      } else {
        g_free(k);
      }
      uint32_t idx = i;
      g_array_append_val(a, idx);
    }
  }
  GHashTableIter it;
  gpointer hk, hv;
  g_hash_table_iter_init(&it, c->cpu_by_thread);
  while (g_hash_table_iter_next(&it, &hk, &hv))
    sort_by_ts(t, hv);
}

/* The GPU ops launched in the window [ws, we) (every one without a window)
 * into r->ops, with their (device, stream) keys in keys, and the window:
 * it covers the step and every selected op. */
static void select_ops(ctx *c, sim_time_ps ws, sim_time_ps we, gboolean have_window, GArray *keys)
{
  const kt_trace *t = c->t;
  kt_rank *r = c->r;
  sim_time_ps gmin = SIM_TIME_MAX, gmax = 0;
  uint64_t outside = 0;
  for (guint i = 0; i < t->events->len; i++) {
    const kt_event *e = ev(t, i);
    if (e->kind != KT_EV_KERNEL && e->kind != KT_EV_MEMCPY && e->kind != KT_EV_MEMSET)
      continue;
    uint32_t launch = KT_NONE;
    if (e->correlation != KT_ABSENT) {
      gpointer v = g_hash_table_lookup(c->launch_by_corr, &e->correlation);
      if (v)
        launch = GPOINTER_TO_UINT(v) - 1;
    }
    if (have_window) {
      sim_time_ps anchor = launch != KT_NONE ? ev(t, launch)->ts : e->ts;
      if (anchor < ws || anchor >= we) {
        outside++;
        continue;
      }
    }
    kt_op op = { .ev = i, .start = e->ts, .end = e->ts + e->dur, .comm = KT_NONE, .launch = launch };
    op.stream = 0;
    g_array_append_val(r->ops, op);
    int64_t key = (int64_t)(((uint64_t)(uint32_t)e->device << 32) | (uint32_t)e->stream);
    g_array_append_val(keys, key);
    gmin = MIN(gmin, op.start);
    gmax = MAX(gmax, op.end);
  }
  if (outside)
    kt_count_skip(r->skipped, "GPU op launched outside the step window", outside);
  if (!have_window) {
    ws = r->ops->len ? gmin : 0;
    we = r->ops->len ? gmax : 0;
  }
  r->window_abs = MIN(ws, r->ops->len ? gmin : ws);
  sim_time_ps wend = MAX(we, r->ops->len ? gmax : we);
  r->window_ps = wend - r->window_abs;
  r->step_cpu_end_ps = have_window ? we - r->window_abs : r->window_ps;
}

/* Dense stream indices in key order (keys[i]: op i's stream key), op times
 * relative to the window, ops sorted by (stream, start) and the per-stream
 * ranges.  O(n log n). */
static void assign_streams(kt_rank *r, GArray *keys)
{
  GArray *sorted = g_array_copy(keys);
  g_array_sort(sorted, kt_cmp_i64);
  guint ns = 0;
  for (guint i = 0; i < sorted->len; i++)
    if (i == 0 || g_array_index(sorted, int64_t, i) != g_array_index(sorted, int64_t, ns - 1))
      g_array_index(sorted, int64_t, ns++) = g_array_index(sorted, int64_t, i);
  r->n_streams = ns;
  r->stream_keys = g_new(int64_t, ns ? ns : 1);
  if (ns)
    memcpy(r->stream_keys, sorted->data, sizeof(int64_t) * ns);
  for (guint i = 0; i < r->ops->len; i++) {
    kt_op *op = &g_array_index(r->ops, kt_op, i);
    int64_t key = g_array_index(keys, int64_t, i);
    int64_t *found = bsearch(&key, r->stream_keys, ns, sizeof(int64_t), kt_cmp_i64);
    op->stream = (uint32_t)(found - r->stream_keys);
    op->start -= r->window_abs;
    op->end -= r->window_abs;
  }
  g_array_free(sorted, TRUE);
  g_array_sort(r->ops, cmp_op);
  r->stream_first = g_new0(uint32_t, ns + 1);
  for (guint i = 0; i < r->ops->len; i++)
    r->stream_first[g_array_index(r->ops, kt_op, i).stream + 1]++;
  for (uint32_t s = 0; s < ns; s++)
    r->stream_first[s + 1] += r->stream_first[s];
}

/* The registry entry of the kernel name with string id name, or NULL:
 * looked up once per distinct name (kt_commreg_lookup walks the table).
 * O(1) amortised. */
static const kt_commreg_entry *registry_entry(ctx *c, uint32_t name)
{
  static const char none = 0;
  gpointer v;
  if (g_hash_table_lookup_extended(c->reg_cache, GUINT_TO_POINTER(name), NULL, &v))
    return v == &none ? NULL : v;
  const kt_commreg_entry *e = kt_commreg_lookup(kt_str(c->t, name));
  g_hash_table_insert(c->reg_cache, GUINT_TO_POINTER(name), e ? (gpointer)e : (gpointer)&none);
  return e;
}

/* The op of every selected event and launch, and a kt_comm for every
 * communication kernel (describe_comm).  FALSE (error set) on a fatal
 * error in a kernel's description. */
static gboolean extract_comms(ctx *c, GError **error)
{
  const kt_trace *t = c->t;
  kt_rank *r = c->r;
  for (guint i = 0; i < r->ops->len; i++) {
    kt_op *op = &g_array_index(r->ops, kt_op, i);
    c->op_of_event[op->ev] = i;
    if (op->launch != KT_NONE)
      c->op_of_event[op->launch] = i;
    const kt_event *e = ev(t, op->ev);
    if (e->kind != KT_EV_KERNEL)
      continue;
    const kt_meta *m = meta(t, e);
    const kt_commreg_entry *re = registry_entry(c, e->name);
    gboolean coll_arg = m && m->coll_name != KT_NONE;
    if (!coll_arg && (!re || re->size == KT_CR_SIZE_LOCAL)) {
      if (re) {
        if (!r->reg_local++)
          r->reg_local_first = re;
      } else if (kt_commreg_looks_like_comm(kt_str(t, e->name))) {
        if (!r->unregistered++)
          r->unregistered_first = kt_str(t, e->name);
      }
      continue;
    }
    kt_comm cm = { 0 };
    cm.op = i;
    cm.reg = re;
    kt_desc d = describe_comm(c, &cm, e, op->launch != KT_NONE ? ev(t, op->launch) : NULL, error);
    if (d != KT_DESC_OK) {
      g_free(cm.ranks);
      g_free(cm.group_key);
      g_free(cm.splits);
      if (d == KT_DESC_ERROR)
        return FALSE;
      continue;
    }
    op->comm = r->comms->len;
    g_array_append_val(r->comms, cm);
  }
  return TRUE;
}

/* Communication without any size source cannot be simulated: it is
 * replayed at its measured duration (kt_match_ranks marks every member of
 * such a collective); say so once per rank, naming the first such kernel
 * (unknown dtype names already warned per kernel).  O(comms). */
static void warn_unsized(kt_rank *r)
{
  const kt_trace *t = r->trace;
  uint64_t no_size = 0;
  const char *first_no_size = NULL;
  for (guint i = 0; i < r->comms->len; i++) {
    const kt_comm *cm = &g_array_index(r->comms, kt_comm, i);
    if (cm->bytes == 0 && cm->size_source && !strcmp(cm->size_source, "unknown")) {
      if (!no_size++)
        first_no_size = kt_str(t, ev(t, g_array_index(r->ops, kt_op, cm->op).ev)->name);
    }
  }
  if (no_size)
    rank_warn(r, "%" G_GUINT64_FORMAT " communication kernel(s) have no size (first: '%s'): no In/Out msg nelems with a "
              "dtype on the kernel or a linked CPU op, no Input Dims on a linked nccl:*/record_param_comms/c10d:: "
              "op%s%s; they are replayed at their measured duration (which includes waiting for peers) and do not "
              "respond to the network; --strict makes this an error", no_size, first_no_size,
              r->card_missing_why ? ", and the card cannot size them: " : "",
              r->card_missing_why ? r->card_missing_why : "");
}

/* Buffer links of the communication kernels (kineto_mem.c), computed once
 * here: the report says how many were linked, and the graph stage copies
 * them into the COMM nodes. */
static void link_buffers(kt_rank *r)
{
  if (!r->comms->len)
    return;
  r->buf_links = g_new(kt_buf_link, r->comms->len);
  kt_mem_stats ms;
  kt_mem_link(r, r->buf_links, &ms);
  char *line = kt_mem_summary(r->rank, &ms);
  if (line)
    g_ptr_array_add(r->warnings, line);
}

kt_rank *kt_rank_extract(kt_trace *t, int rank, int world_size, const fe_kineto_options *opt, GError **error)
{
  kt_rank *r = g_new0(kt_rank, 1);
  r->trace = t;
  r->rank = rank;
  r->ops = g_array_new(FALSE, FALSE, sizeof(kt_op));
  r->comms = g_array_new(FALSE, TRUE, sizeof(kt_comm));
  r->warnings = g_ptr_array_new_with_free_func(g_free);
  r->skipped = g_hash_table_new(g_str_hash, g_str_equal);
  r->sync_edges = g_array_new(FALSE, FALSE, sizeof(kt_edge));
  r->sync_targets = g_array_new(FALSE, FALSE, sizeof(kt_sync_target));
  ctx c = { .t = t, .r = r, .opt = opt, .world = world_size };
  c.reg_cache = g_hash_table_new(g_direct_hash, g_direct_equal);
  index_events(&c);
  sim_time_ps ws = 0, we = 0;
  gboolean have_window;
  gboolean ok = choose_window(&c, &ws, &we, &have_window, error);
  if (ok) {
    GArray *keys = g_array_new(FALSE, FALSE, sizeof(int64_t));
    select_ops(&c, ws, we, have_window, keys);
    assign_streams(r, keys);
    g_array_free(keys, TRUE);
    ok = extract_comms(&c, error);
  }
  if (ok) {
    warn_unsized(r);
    sync_edges(&c);
    kt_sync_targets_extract(r);
    link_buffers(r);
  }
  g_hash_table_destroy(c.reg_cache);
  g_hash_table_destroy(c.launch_by_corr);
  g_hash_table_destroy(c.record_by_corr);
  g_hash_table_destroy(c.cpu_by_ext);
  g_hash_table_destroy(c.cpu_by_thread);
  g_free(c.op_of_event);
  if (!ok) {
    kt_rank_free(r);
    return NULL;
  }
  return r;
}
