/* kineto.h: internals of the Kineto frontend, exposed for tests.
 *
 * Stage 1 (kineto_parse.c) streams one trace file into a kt_trace: a compact
 * table of the events the frontend needs (GPU ops, launches, sync calls,
 * CPU-side collective ops, ProfilerStep ranges) plus distributedInfo.  All
 * other events are counted by reason and dropped.  Memory: about 96 bytes
 * per kept event plus interned strings.
 *
 * Stage 2 (kineto_extract.c) turns a kt_trace into a kt_rank: the GPU ops of
 * the selected step window per stream, communication ops classified and
 * sized (kernel args, else the linked CPU-side op), with their process
 * groups.  Stage 3 (kineto_graph.c) matches collectives across ranks and
 * builds the per-rank dependency graphs (kt_graph), checked acyclic, which
 * kineto.c converts to et_graph through the et_builder API.
 */
#ifndef WISP_KINETO_H
#define WISP_KINETO_H

#include "frontends/fe.h"
#include "frontends/fe_json.h"

G_BEGIN_DECLS

#define KT_NONE UINT32_MAX

typedef struct kt_intern kt_intern;
#define KT_ABSENT INT64_MIN

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
} kt_ev_kind;

typedef struct {
  sim_time_ps ts;          /* relative to kt_trace.origin_us */
  sim_time_ps dur;
  int64_t correlation;     /* KT_ABSENT when missing */
  int64_t ext_id;          /* KT_ABSENT when missing */
  int64_t pid, tid;        /* string pids map to -1 */
  int64_t aux;             /* STEP: N; CUDA_SYNC: wait_on_cuda_event_record_corr_id; MEMCPY: bytes */
  int32_t device;          /* GPU ops: args.device, else pid */
  int32_t stream;          /* GPU ops: args.stream, else tid; CUDA_SYNC: args.stream */
  int32_t wait_stream;     /* CUDA_SYNC: wait_on_stream (-1 absent) */
  uint32_t name;           /* interned string id */
  uint32_t meta;           /* index into metas or KT_NONE */
  uint32_t file_index;     /* position among all events of the file (tie breaker) */
  uint8_t kind;            /* kt_ev_kind */
} kt_event;

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
  struct kt_intern *intern; /* string -> id (kineto_parse.c) */
  GPtrArray *strings;      /* id -> const char* */
  GArray *events;          /* kt_event */
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
/* Everything a parsed trace holds (distributedInfo, groups, strings,
 * events, metadata, skip counts sorted by reason; not the in-place
 * counters) as text, one record per line, for tests and the fuzzer to
 * compare parses.  O(size of the trace); the caller frees the result. */
char *kt_trace_dump(const kt_trace *t);
static inline const char *kt_str(const kt_trace *t, uint32_t id)
{ return id == KT_NONE ? NULL : (const char *)g_ptr_array_index(t->strings, id); }
void kt_count_skip(GHashTable *h, const char *reason, uint64_t n);

/* ---- tables (kineto_extract.c) ---- */

/* c10 ScalarType name ("BFloat16") or C++ type name ("c10::BFloat16",
 * "long int") to bytes per element; 0 when unknown. */
int kt_dtype_size(const char *name);
/* Kernel name is an NCCL/RCCL (or listed non-NCCL) communication kernel. */
gboolean kt_is_comm_kernel_name(const char *name);
/* Collective kind from `Collective name`, a CPU op name (nccl:*, c10d::*)
 * or a kernel name.  Returns FALSE when unknown.  *p2p is 1 for send, 2 for
 * recv, 0 otherwise. */
gboolean kt_coll_from_arg(const char *s, et_coll_type *c, int *p2p);
gboolean kt_coll_from_cpu_op(const char *s, et_coll_type *c, int *p2p);
gboolean kt_coll_from_kernel(const char *s, et_coll_type *c, int *p2p);
/* Parses a `Process Group Ranks` string.  Handles "[0, 1]", the elided
 * "[0, 4, ..., 124]" form (stride from the first two values, every listed
 * value on the progression, count = group_size when known) and reports the
 * truncated "[0, 1, ..., 29, ...]" form by returning FALSE with *truncated.
 * Every member must be below world (the job's size), which an elided list
 * is checked against before it is expanded, so "[0, 1, ..., 99999999]" in a
 * small job is an error, not 400 MB.  Returns a g_malloc'd array. */
gboolean kt_parse_ranks(const char *s, int64_t group_size, int world, int **ranks, int *n, gboolean *truncated,
                        const char **why);
/* qsort/bsearch order of int64_t values. */
int kt_cmp_i64(const void *a, const void *b);
/* Key of the CPU thread (pid, tid) an event ran on. */
static inline int64_t kt_thread_key(const kt_event *e)
{ return (int64_t)((uint64_t)e->pid * 1000003u) ^ e->tid; }
/* Parses "[3, 5, 7]" split lists; FALSE on "...", malformed input. */
gboolean kt_parse_int_list(const char *s, GArray *out);

typedef struct {
  uint32_t ev;             /* event index in the trace */
  sim_time_ps start, end;  /* relative to the window start */
  uint32_t stream;         /* dense stream index within the rank */
  uint32_t comm;           /* index into kt_rank.comms or KT_NONE */
  uint32_t launch;         /* launch event index or KT_NONE */
} kt_op;

typedef struct {
  uint32_t op;             /* index into kt_rank.ops */
  et_coll_type coll;
  int p2p;                 /* 0 collective, 1 send, 2 recv */
  uint64_t bytes;
  const char *dtype;       /* interned in the trace */
  int dsize;
  const char *size_source; /* static description */
  const char *pg_name, *pg_desc;  /* may be NULL */
  int *ranks;              /* group members (global ranks), g_malloc'd */
  int n_ranks;
  char *group_key;         /* "pg_name|r0,r1,..." */
  int64_t seq;             /* KT_ABSENT when missing */
  int root, peer;          /* -1 when absent */
  uint64_t *splits;        /* per-member bytes for all_to_allv (n_ranks entries) or NULL */
  uint32_t group;          /* workload group index after matching */
  int status;              /* 0 pending, 1 matched, 2 dropped */
  gboolean unsized;        /* no size source (bytes 0): cannot be simulated */
  gboolean replay;         /* matched, but some member is unsized: every member
                              replays it at its measured duration (ET_FLAG_REPLAY) */
  const char *drop_reason;
  char *drop_detail;
} kt_comm;

typedef struct {
  kt_trace *trace;
  int rank;
  GArray *ops;             /* kt_op, sorted by (stream, start) */
  GArray *comms;           /* kt_comm */
  uint32_t n_streams;
  int64_t *stream_keys;    /* device << 32 | stream, per dense stream */
  uint32_t *stream_first;  /* ops of dense stream s: [stream_first[s], stream_first[s+1]) (n_streams + 1) */
  sim_time_ps window_ps;   /* window length (measured step time) */
  sim_time_ps window_abs;  /* window start relative to trace origin */
  int step_used, step_first, step_last, n_steps;
  int step_used_first;     /* first step in the window */
  int n_steps_used;        /* steps in the window */
  GString *steps_dropped;  /* "#N (reason), ...": steps left out as incomplete; NULL if none */
  uint64_t size_from_args, size_from_cpu, size_unknown;
  GPtrArray *warnings;     /* char* */
  GHashTable *skipped;     /* reason -> count (extraction-level) */
  GArray *sync_edges;      /* kt_edge candidates (parent op -> child op) from sync events */
  uint64_t inconsistent_sync_edges;
  uint64_t inferred_sync_edges;  /* producers of waits inferred from the timeline (no cudaEventRecord in the trace) */
  gboolean all_steps_used;
  /* The CPU thread of the step marker (kt_thread_key) and the marker's end
   * relative to the window start; have_step_thread is FALSE without a
   * marker (the whole trace is the window). */
  int64_t step_thread;
  gboolean have_step_thread;
  sim_time_ps step_cpu_end_ps;
  /* Clock check (kt_match): for every matched collective, how much later
   * (ps, may be negative) this rank's kernel ended than the median member's,
   * each rank's times taken on its own clock.  NULL until a match. */
  GArray *clock_dev;       /* int64_t */
} kt_rank;

typedef struct {
  uint32_t parent, child;
} kt_edge;

/* Builds a kt_rank from a parsed trace.  rank is the global rank to use
 * (already validated), world_size the job's size (groups without member
 * information default to all of it).  Does not take ownership of t. */
kt_rank *kt_rank_extract(kt_trace *t, int rank, int world_size, const fe_kineto_options *opt, GError **error);
/* When op was issued: its launch call's start, else its own start (both
 * relative to the window). */
static inline sim_time_ps kt_op_issued(const kt_rank *r, const kt_op *op)
{
  return op->launch != KT_NONE ? g_array_index(r->trace->events, kt_event, op->launch).ts - r->window_abs
                               : op->start;
}
/* The index just past the ops of stream s that start at or before t (ops
 * of a stream are in start order): a binary search, O(log n). */
uint32_t kt_stream_upper(const kt_rank *r, uint32_t s, sim_time_ps t);
void kt_rank_free(kt_rank *r);

/* ---- graphs (kineto_graph.c) ---- */

typedef struct {
  uint8_t type;            /* et_node_type */
  uint8_t flags;           /* ET_FLAG_* */
  sim_time_ps dur, start;
  uint32_t op;             /* kt_op index or KT_NONE (gap / delay nodes) */
  const char *name;        /* the trace's interned name or kt_graph.names */
} kt_node;

typedef struct {
  GArray *nodes;           /* kt_node */
  GArray *edges;           /* kt_edge over node indices */
  GStringChunk *names;     /* names made up for delay nodes (deduplicated) */
  uint64_t gap_nodes, cross_edges, cycle_edges_dropped;
  sim_time_ps node_busy_ps, gpu_busy_ps;
  /* Host launch model (host_launch): CPU nodes (launch calls, host
   * synchronisation calls, the time between them), launching threads, GPU
   * ops whose launch began before the window (no CPU dependency), GPU ops
   * measured to start before their launch began (dependency dropped), and
   * GPU ops a host synchronisation waits for. */
  uint64_t host_nodes, host_threads, launched_before_window, launch_inversions, sync_waits;
  uint64_t host_overlaps;  /* launch calls inside the time of an earlier call on their thread */
  uint64_t host_forks;     /* other threads whose chain starts after a node of the step thread's */
  /* Kernels mode: the most GPU compute nodes (kernels, copies, memsets and
   * unmatched communication kernels) measured running at once; the
   * replay's compute-slot count.  0 in gap mode (one compute chain). */
  uint32_t compute_slots;
  /* Kernels mode: the GPU idle the replay keeps as fixed delays
   * (ET_FLAG_DELAY nodes that are not CPU nodes), split into launch lag
   * (after the CPU node that ends where the op's launch call begins: the
   * call and the submission) and unexplained idle (after a stream
   * predecessor, a cross-stream parent, or nothing; the step tail
   * included); and whether the step thread's chain was extended to the
   * step marker's end. */
  sim_time_ps launch_lag_ps, unexplained_idle_ps;
  gboolean host_step_tail;
} kt_graph;

/* Cross-rank matching of every rank's comms (ranks[i] may be NULL for
 * absent ranks).  Assigns kt_comm.group / status, fills groups (kt_group_out
 * entries) and appends warnings.  Returns FALSE (error set) under strict on
 * any mismatch. */
typedef struct {
  char *key, *pg_name, *desc;
  char *name_or_key;       /* "N (pg \"name\", ranks a,b,...)" for messages */
  int *ranks;
  int n_ranks;
  uint64_t n_ops, bytes;
} kt_group;

typedef struct {
  uint64_t matched, dropped, mismatches, imbalanced_a2av;
  uint64_t replayed;       /* matched, but replayed at the measured duration (a member had no size) */
} kt_match_stats;

gboolean kt_match(kt_rank **ranks, int n_ranks, gboolean strict, GPtrArray *groups, GPtrArray *warnings,
                  kt_match_stats *stats, GError **error);
void kt_group_free(gpointer g);

/* host_launch (kernels mode only): model the CPU threads that launch GPU
 * work (see kineto_graph.c). */
kt_graph *kt_graph_build(const kt_rank *r, fe_kineto_mode mode, sim_time_ps min_gap_ps, gboolean host_launch);
void kt_graph_free(kt_graph *g);
/* Drops edges that close a cycle (Kahn's algorithm, O(V + E) per dropped
 * edge, in a deterministic order); returns the number dropped. */
uint64_t kt_graph_break_cycles(kt_graph *g);

G_END_DECLS
#endif
