/* kineto_trace.h: stage 1 of the Kineto frontend, the trace (private to
 * frontends/kineto*.c and exposed for tests, the fuzzer and the benchmark).
 *
 * kineto_parse.c (with kineto_decode*.c, kineto_classify.c and
 * kineto_trace.c; kineto_parse_internal.h) streams one trace file into a
 * kt_trace: a compact table of the events the frontend needs (GPU ops,
 * launches, sync calls, CPU-side collective ops, ProfilerStep ranges,
 * device [memory] instants) plus distributedInfo.  All other events are
 * counted by reason and dropped.
 * Memory: about 96 bytes per kept event plus interned strings.  A kt_trace
 * is read-only once parsed: the later stages (kineto_rank.h,
 * kineto_graph.h) only read it.
 */
#ifndef WISP_KINETO_TRACE_H
#define WISP_KINETO_TRACE_H

#include "frontends/fe.h"
#include "frontends/fe_json.h"

G_BEGIN_DECLS

#define KT_NONE UINT32_MAX

typedef struct kt_intern kt_intern;
#define KT_ABSENT INT64_MIN
/* In/Out msg nelems present but not an integer ("abc", 1e300, 2.5, [1]):
 * never a size, and not absent either (absent lets the other one size the
 * collective; an all-gather sized by its Out would be n times too big). */
#define KT_BAD (INT64_MIN + 1)

typedef enum {
  KT_EV_KERNEL = 1,
  KT_EV_MEMCPY,
  KT_EV_MEMSET,
  KT_EV_LAUNCH,      /* cudaLaunchKernel*, cuLaunchKernel*, cudaMemcpyAsync, hip* ... */
  KT_EV_RECORD,      /* cudaEventRecord / hipEventRecord */
  KT_EV_WAIT,        /* cudaStreamWaitEvent / hipStreamWaitEvent */
  KT_EV_HOST_SYNC,   /* cuda{Stream,Device,Event}Synchronize */
  KT_EV_CUDA_SYNC,   /* cat cuda_sync activity */
  KT_EV_CPU_COMM,    /* record_param_comms, nccl:*, c10d::* */
  KT_EV_STEP,        /* ProfilerStep#N (CPU side) */
  KT_EV_ANNOT,       /* a module range on a CPU thread: python_function "nn.Module: X" (with_modules /
                        with_stack) or a user_annotation that is no step or collective (record_function) */
  /* A kept [memory] instant that names a device allocation (Addr > 0,
   * Bytes != 0, Device Type 1, Device Id >= 0): correlation = Addr, aux =
   * Bytes (negative for a free), device = Device Id, ts = the event time.
   * Kineto records tensor-level caching-allocator events only (kineto.md
   * §9); segment allocations, maps and unmaps are not in Kineto traces and
   * are not read.  The value, above every other kind, is the one the
   * memory events had when they were defined apart from this list. */
  KT_EV_MEMORY = 64,
} kt_ev_kind;

typedef struct {
  sim_time_ps ts;          /* relative to kt_trace.origin_us */
  sim_time_ps dur;
  int64_t correlation;     /* KT_ABSENT when missing */
  int64_t ext_id;          /* KT_ABSENT when missing */
  int64_t pid, tid;        /* string pids map to -1 */
  int64_t aux;             /* STEP: N; CUDA_SYNC: wait_on_cuda_event_record_corr_id; MEMCPY, MEMORY: bytes */
  int32_t device;          /* GPU ops: args.device, else pid */
  int32_t stream;          /* GPU ops: args.stream, else tid; CUDA_SYNC: args.stream */
  int32_t wait_stream;     /* CUDA_SYNC: wait_on_stream (-1 absent) */
  uint32_t name;           /* interned string id */
  uint32_t meta;           /* index into metas or KT_NONE */
  uint32_t file_index;     /* position among all events of the file (tie breaker) */
  uint8_t kind;            /* kt_ev_kind */
} kt_event;

/* What the graphs (kineto_graph.c) read of an event: the fields of a
 * kt_event that a kept event needs once its rank is extracted.  40 bytes
 * against 96; kt_trace_compact turns the event table into these. */
typedef struct {
  sim_time_ps ts, dur;
  int64_t pid, tid;
  uint32_t name;
  uint8_t kind;
} kt_event_slim;

/* Collective metadata args of one event (kernel or CPU op). */
typedef struct {
  uint32_t coll_name, dtype, pg_name, pg_desc, pg_ranks, in_split, out_split, kind;
  uint32_t in_type0, in_type1;   /* Input type[0..1] */
  int64_t in_nelems, out_nelems, group_size, rank_start, rank_stride, seq, src_rank, dst_rank, rank;
  int64_t in_numel0, in_numel1;  /* product of Input Dims[0..1]; KT_ABSENT for non-tensors */
} kt_meta;

typedef struct {
  char *name, *desc;
  int n_ranks;
  int *ranks;
} kt_pg;

typedef struct {
  char *path;
  GStringChunk *chunk;
  struct kt_intern *intern; /* string -> id (kineto_trace.c) */
  GPtrArray *strings;      /* id -> const char* */
  GArray *events;          /* kt_event; NULL once compacted (then slim holds the kept events) */
  GArray *slim;            /* kt_event_slim after kt_trace_compact, else NULL */
  GArray *metas;           /* kt_meta */
  int64_t origin_us;       /* whole µs subtracted from every ts (first ts seen) */
  gboolean have_origin;
  int64_t end_max_us;      /* latest end of any complete event, kept or skipped, rounded up (absolute µs) */
  gboolean have_end;
  int64_t rank, world_size;       /* KT_ABSENT when missing */
  gboolean have_dist_info;
  char *backend;
  GPtrArray *pgs;          /* kt_pg* from pg_config */
  int64_t base_time_ns;    /* KT_ABSENT when missing */
  char *device_name;
  uint64_t bytes_read, events_read;
  uint64_t memory_allocs, memory_frees;
  GHashTable *skipped;     /* static reason string -> count */
  uint64_t missing_dur;    /* X events without dur (dur = 0) */
  uint64_t non_objects;    /* traceEvents entries that are not objects (skipped; an error under --strict) */
  uint64_t non_object_byte;       /* offset of the first of them */
  const char *non_object_kind;    /* what the first is ("a number", fe_json_tok_kind) */
  uint64_t inplace_events; /* events decoded in place (fe_json_ip.h) */
  uint64_t inplace_bails;  /* events the in-place path handed back to the tokenizer */
} kt_trace;

kt_trace *kt_trace_read(const char *path, GError **error);
/* Parses from an open tokenizer (used for in-memory input and fuzzing); takes ownership of j. */
kt_trace *kt_trace_parse(fe_json *j, const char *path, GError **error);
/* kt_trace_parse with flags: KT_PARSE_TOKENS_ONLY reads every event through
 * the pull tokenizer instead of the in-place fast path (same result; tests
 * and the fuzzer compare the two). */
#define KT_PARSE_TOKENS_ONLY 1u
kt_trace *kt_trace_parse_flags(fe_json *j, const char *path, unsigned flags, GError **error);
void kt_trace_free(kt_trace *t);
/* Keeps only the events whose keep[i] is nonzero, in their order, as
 * kt_event_slim records in t->slim, and frees what only the parse and the
 * extraction use: the full event table (t->events becomes NULL), the
 * collective metadata and the intern table (no string can be added
 * afterwards; the strings and their ids stay).  Returns the new index of
 * every old event, KT_NONE for a dropped one (g_malloc'd, one per old
 * event).  The load (kineto.c) calls it once a rank is extracted, so that
 * only what its graph reads stays in memory; a compacted trace can no
 * longer be extracted.  O(events). */
uint32_t *kt_trace_compact(kt_trace *t, const uint8_t *keep);
/* Event i as the graphs read it, from the full table or, once compacted,
 * the slim one (indices are those of the table in use). */
static inline kt_event_slim kt_trace_event(const kt_trace *t, uint32_t i)
{
  if (t->slim)
    return g_array_index(t->slim, kt_event_slim, i);
  const kt_event *e = &g_array_index(t->events, kt_event, i);
  return (kt_event_slim){ e->ts, e->dur, e->pid, e->tid, e->name, e->kind };
}
static inline uint32_t kt_trace_n_events(const kt_trace *t)
{ return t->slim ? t->slim->len : t->events->len; }
/* Everything a parsed trace holds (distributedInfo, groups, strings,
 * events, metadata, skip counts sorted by reason; not the in-place
 * counters) as text, one record per line, for tests and the fuzzer to
 * compare parses.  O(size of the trace); the caller frees the result. */
char *kt_trace_dump(const kt_trace *t);
static inline const char *kt_str(const kt_trace *t, uint32_t id)
{ return id == KT_NONE ? NULL : (const char *)g_ptr_array_index(t->strings, id); }
/* Adds n to reason's count in h (reason -> count); reason is not copied,
 * so it must outlive h (the reasons are string literals). */
void kt_count_skip(GHashTable *h, const char *reason, uint64_t n);

/* Key of the CPU thread (pid, tid) an event ran on. */
static inline int64_t kt_thread_key(const kt_event *e)
{ return (int64_t)((uint64_t)e->pid * 1000003u) ^ e->tid; }
static inline int64_t kt_slim_thread_key(const kt_event_slim *e)
{ return (int64_t)((uint64_t)e->pid * 1000003u) ^ e->tid; }

G_END_DECLS
#endif
