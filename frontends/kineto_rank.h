/* kineto_rank.h: stage 2 of the Kineto frontend, the rank (private to
 * frontends/kineto*.c and exposed for tests and the fuzzer).
 *
 * kineto_extract.c turns one kt_trace (kineto_trace.h, read only) into a
 * kt_rank: the GPU ops of the selected step window per stream,
 * communication ops classified and sized (kernel args, else the linked
 * CPU-side op) with their process groups, the synchronisation edges
 * between streams, and the buffer each communication kernel uses
 * (kineto_mem.h).  A kt_rank knows nothing of the other ranks: matching
 * across ranks and the graphs are stage 3 (kineto_graph.h).
 *
 * The lookup tables of the trace vocabulary (kernel and CPU op names,
 * dtypes, rank lists) live here too, in kineto_extract.c.
 */
#ifndef WISP_KINETO_RANK_H
#define WISP_KINETO_RANK_H

#include "frontends/kineto_trace.h"
#include "frontends/kineto_commreg.h"

G_BEGIN_DECLS

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
/* Parses "[3, 5, 7]" split lists; FALSE on "...", malformed input. */
gboolean kt_parse_int_list(const char *s, GArray *out);

typedef struct {
  uint32_t ev;             /* event index in the trace */
  uint32_t bytes_lo;       /* memcpy / memset: args "bytes" (low half; 0 unknown), in the struct's padding */
  sim_time_ps start, end;  /* relative to the window start */
  uint32_t stream;         /* dense stream index within the rank */
  uint32_t comm;           /* index into kt_rank.comms or KT_NONE */
  uint32_t launch;         /* launch event index or KT_NONE */
  uint32_t bytes_hi;       /* high half of the bytes */
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
  uint8_t two_hop;         /* ET_TWO_HOP_* of a card-sized DeepEP internode all_to_allv, else 0 */
  uint32_t two_hop_ppm;    /* its scale-out deduplication ratio in millionths (et_comm.two_hop_ppm) */
  gboolean unsized;        /* no size source (bytes 0): cannot be simulated */
  const kt_commreg_entry *reg; /* the kernel's registry entry (library, kind, size rule) or NULL */
} kt_comm;

/* The allocation a communication kernel's buffer was linked to
 * (kineto_mem.h). */
typedef struct {
  uint64_t buffer;         /* Addr of the linked allocation; 0 = not linked */
  sim_time_ps alloc_ps;    /* its allocation time, relative to the rank's window start */
} kt_buf_link;

/* What a host synchronisation call waited for, as the trace's cuda_sync
 * events state it (kineto_threads.h): the op, or the whole device. */
typedef struct {
  uint32_t ev;             /* the call's event (renumbered with the trace by kt_rank_shrink) */
  uint32_t op;             /* the op it waited for; KT_NONE when the named stream had none before it */
  uint8_t device;          /* "Context Sync": every stream */
} kt_sync_target;

typedef struct {
  kt_trace *trace;
  int rank;
  GArray *ops;             /* kt_op, sorted by (stream, start) */
  GArray *comms;           /* kt_comm */
  GPtrArray *modules;      /* char*: distinct module paths of the ops (kineto_annot.c); NULL without annotations */
  uint32_t *op_module;     /* per op (ops' order): index into modules, or KT_NONE; NULL without annotations
                              (apart from kt_op, so that a trace without them costs nothing per op) */
  kt_buf_link *buf_links;  /* per kt_comm (same index), by kt_mem_link; NULL without comms */
  uint32_t n_streams;
  int64_t *stream_keys;    /* device << 32 | stream, per dense stream */
  uint32_t *stream_first;  /* ops of dense stream s: [stream_first[s], stream_first[s+1]) (n_streams + 1) */
  sim_time_ps window_ps;   /* window length (measured step time) */
  sim_time_ps window_abs;  /* window start relative to trace origin */
  int step_used, step_first, step_last, n_steps;
  int step_used_first;     /* first step in the window */
  int n_steps_used;        /* steps in the window */
  gboolean inference_markers; /* the steps are vLLM / SGLang markers, numbered by start time */
  GString *steps_dropped;  /* "#N (reason), ...": steps left out as incomplete; NULL if none */
  uint64_t size_from_args, size_from_cpu, size_unknown;
  uint64_t size_from_card, size_from_sync; /* registry kernels sized by the workload card / barriers */
  const char *card_missing_why;            /* why the card could not size a registry kernel (static), or NULL */
  uint64_t reg_local;                      /* registry kernels that are local work (kept as compute) */
  const kt_commreg_entry *reg_local_first;
  uint64_t unregistered;                   /* kernels that look like communication but are not in the registry */
  const char *unregistered_first;          /* interned in the trace */
  GPtrArray *warnings;     /* char* */
  GHashTable *skipped;     /* reason -> count (extraction-level) */
  GArray *sync_edges;      /* kt_edge candidates (parent op -> child op) from sync events */
  uint64_t inconsistent_sync_edges;
  uint64_t inferred_sync_edges;  /* producers of waits inferred from the timeline (no cudaEventRecord in the trace) */
  GArray *sync_targets;    /* kt_sync_target sorted by ev: host syncs whose target a cuda_sync event states */
  gboolean all_steps_used;
  /* The CPU thread of the step marker (kt_thread_key) and the marker's end
   * relative to the window start; have_step_thread is FALSE without a
   * marker (the whole trace is the window). */
  int64_t step_thread;
  gboolean have_step_thread;
  sim_time_ps step_cpu_end_ps;
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
  return op->launch != KT_NONE ? kt_trace_event(r->trace, op->launch).ts - r->window_abs : op->start;
}
/* The index just past the ops of stream s that start at or before t (ops
 * of a stream are in start order): a binary search, O(log n). */
uint32_t kt_stream_upper(const kt_rank *r, uint32_t s, sim_time_ps t);
void kt_rank_free(kt_rank *r);

G_END_DECLS
#endif
