/* kineto_classify.c: what one decoded Kineto event is.  From the scratch
 * record both decoders fill (kineto_decode.c, kineto_decode_ip.c) it
 * decides by ph, cat and name whether the frontend keeps the event (a GPU
 * op, a launch or sync call, a CPU-side collective, a step marker, a
 * device [memory] instant) and appends it with its collective metadata to
 * the trace, or counts it under a skip reason.  It also tells the
 * decoders early when an event's args need no decoding.  O(name length)
 * per event; the runtime-call list is a linear scan of about 30 names.
 */
#include "config.h"

#include "frontends/kineto_parse_internal.h"
#include "frontends/kineto_commreg.h"

/* Category by its text [s, s + n). */
kt_ev_cat kt_p_cat_of(const char *s, size_t n)
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
gboolean kt_p_args_unneeded(kt_scratch *sc)
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


/* Counts one skipped event under reason (a string literal). */
void kt_p_count_skip(kt_parser *p, const char *reason)
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
void kt_p_flush_skips(kt_parser *p)
{
  for (int k = 0; k < p->n_skip; k++)
    kt_count_skip(p->t->skipped, p->skip_reason[k], p->skip_n[k]);
  p->n_skip = 0;
}

/* The kind of a complete ('X') scratch event, with its aux value in *aux;
 * 0 when the frontend does not keep it (counted as skipped). */
static int complete_kind(kt_parser *p, int64_t *aux)
{
  kt_scratch *sc = &p->sc;
  const char *name = sc->name->str;
  int kind = 0;
  switch (sc->cat) {
  case CAT_KERNEL: kind = KT_EV_KERNEL; break;
  case CAT_MEMCPY: kind = KT_EV_MEMCPY; *aux = sc->i[I_BYTES]; break;
  case CAT_MEMSET: kind = KT_EV_MEMSET; *aux = sc->i[I_BYTES]; break;
  case CAT_RUNTIME:
    kind = sc->rt_kind >= 0 ? sc->rt_kind : runtime_kind(name);
    if (!kind)
      kt_p_count_skip(p, "runtime/driver call (not a launch or sync)");
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
    else if (sc->cat == CAT_USER_ANNOTATION)
      kind = KT_EV_ANNOT; /* record_function: the ops launched inside are annotated with it (kineto_annot.c) */
    else
      kt_p_count_skip(p, "cpu_op (not communication)");
    break;
  case CAT_GPU_USER_ANNOTATION:
    kt_p_count_skip(p, "gpu_user_annotation (GPU copy of annotations, unreliable)");
    break;
  case CAT_PYTHON:
    if (!strcmp(name, "run_batch") || g_str_has_suffix(name, ": run_batch"))
      kind = KT_EV_STEP; /* SGLang step marker; numbered by time later */
    else if (g_str_has_prefix(name, "nn.Module: "))
      kind = KT_EV_ANNOT; /* with_modules: the module the ops launched inside belong to */
    else
      kt_p_count_skip(p, "python_function");
    break;
  default:
    kt_p_count_skip(p, "complete event of another category (Trace, overhead, ...)");
    break;
  }
  return kind;
}

/* An instant ('i', 'I') scratch event: a [memory] instant is counted as an
 * allocation or a free and kept (KT_EV_MEMORY, aux = Bytes) when it names
 * a device allocation; 0 for everything else (counted as skipped). */
static int instant_kind(kt_parser *p, int64_t *aux)
{
  kt_scratch *sc = &p->sc;
  kt_trace *t = p->t;
  if (strcmp(sc->name->str, "[memory]")) {
    kt_p_count_skip(p, "instant event");
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
    kt_p_count_skip(p, sc->i[I_MEM_DEV_TYPE] == 0 ? "[memory] instant on the CPU (not a device buffer)"
                              : "[memory] instant without Addr, Bytes or a CUDA Device Id (cannot be linked)");
    return 0;
  }
  *aux = sc->i[I_MEM_BYTES];
  return KT_EV_MEMORY;
}

/* The kind of the scratch event by its ph, with its aux value in *aux; 0
 * when the frontend does not keep it (counted as skipped). */
static int event_kind(kt_parser *p, int64_t *aux)
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
    kt_p_count_skip(p, "flow event (links taken from correlation ids)");
    return 0;
  case 'M':
    kt_p_count_skip(p, "metadata event");
    return 0;
  case 0:
    kt_p_count_skip(p, "event without ph");
    return 0;
  default:
    kt_p_count_skip(p, "event with unsupported ph (B/E/C/...)");
    return 0;
  }
}

/* Appends the collective metadata of the scratch event to t->metas and
 * returns its index. */
static uint32_t append_meta(kt_trace *t, const kt_scratch *sc)
{
  kt_meta m;
  uint32_t *sv[S_N] = { &m.coll_name, &m.dtype, &m.pg_name, &m.pg_desc, &m.pg_ranks, &m.in_split, &m.out_split,
                        &m.kind, &m.in_type0, &m.in_type1 };
  for (int k = 0; k < S_N; k++)
    *sv[k] = sc->has_s[k] ? kt_p_intern_n(t, sc->s[k]->str, sc->s[k]->len) : KT_NONE;
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
void kt_p_finish_event(kt_parser *p, uint32_t file_index)
{
  kt_scratch *sc = &p->sc;
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
    kt_p_count_skip(p, "complete event without ts");
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
    kt_p_count_skip(p, "event more than 26 days from the trace's first timestamp");
    return;
  }
  if (sc->dur > (INT64_C(1) << 61)) {
    kt_p_count_skip(p, "event with a duration over 26 days");
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
  e.name = kt_p_intern_n(t, name, sc->name->len);
  e.meta = KT_NONE;
  e.file_index = file_index;
  e.kind = (uint8_t)kind;
  if (sc->any_meta || (kind == KT_EV_CPU_COMM && (sc->has_s[S_TYPE0] || sc->i[I_NUMEL0] != KT_ABSENT)) ||
      sc->has_s[S_KIND])
    e.meta = append_meta(t, sc);
  g_array_append_val(t->events, e);
}
