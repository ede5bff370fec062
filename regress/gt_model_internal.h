/* gt_model_internal.h: the ground-truth model's job representation,
 * shared by gt_model.c (building, running, Kineto traces) and gt_et.c
 * (PyTorch execution traces).  Not a public interface: the tests use
 * gt_model.h. */
#ifndef WISP_GT_MODEL_INTERNAL_H
#define WISP_GT_MODEL_INTERNAL_H

#include "regress/gt_model.h"

#define GT_N_STREAMS 6

/* The timestamp the model's time 0 is written as: 1,000,000 us (1 s), so
 * every ts has the same number of digits before the point. */
#define GT_TS_ORIGIN_NS INT64_C(1000000000)
/* The same baseTimeNanoseconds on every rank: a machine whose clocks are
 * synchronised. */
#define GT_BASE_TIME_NS "1700000000000000000"
#define GT_MAX_EVENT 65535
#define GT_BF16_BYTES 2

typedef enum { A_CPU, A_LAUNCH, A_RECORD, A_WAIT, A_SYNC, A_STEP_BEGIN, A_STEP_END, A_SIGNAL, A_JOIN } action_kind;

/* One action of a CPU program and, after the run, its times. */
typedef struct {
  uint8_t kind;            /* action_kind */
  uint8_t stream;          /* launch, record, wait, stream sync: stream index 0..GT_N_STREAMS-1 */
  uint8_t thread;          /* the CPU thread running it */
  int32_t arg;             /* launch: op; record: record; wait: the record waited for, -1 none; step: its number;
                              sync: -1 device, else the stream index; join: the signal's action, -1 none */
  int32_t event;           /* record, wait: the event number; signal, join: the flag */
  uint32_t sync_first, sync_n; /* sync: the ops it waits for, rank_state.sync_ops[sync_first .. +sync_n] */
  int64_t corr;            /* runtime calls: the correlation id, else 0 */
  int64_t dur_ns;          /* cpu: the host work */
  int64_t start_ns, end_ns;
  const char *module;      /* launch: the module path it runs in (gt_job_set_module; j->names), NULL none */
} action;

/* One GPU op (kernel) and, after the run, its times (-1 while unknown). */
typedef struct {
  uint8_t kind;            /* gt_kernel_kind */
  uint8_t stream;          /* stream index */
  int32_t group;           /* NCCL kernels: the process group; compute: -1 */
  int32_t peer;            /* send/recv: the other rank */
  int32_t inst;            /* collectives: instance in the group; send/recv: the pair's index k */
  int32_t seq;             /* NCCL kernels: per-group sequence number on this rank, from 1 */
  const char *name;        /* compute kernels */
  int64_t dur_ns;          /* compute kernels */
  uint64_t bytes;          /* NCCL kernels */
  int32_t coalesced;       /* collectives: how many calls one NCCL group coalesced into this kernel (0: one call) */
  int32_t action;          /* the launch */
  int32_t prev;            /* the previous op on the stream, -1 none */
  uint32_t wait_first, wait_n; /* the records this op waits for: refs[wait_first .. +wait_n] */
  int64_t start_ns, end_ns;
} op;

/* One cudaEventRecord: reached when the op enqueued before it on its
 * stream has ended, not before the call, and not before every wait
 * enqueued on the stream after that op is satisfied. */
typedef struct {
  int32_t stream, after_op, action;
  uint32_t wait_first, wait_n;
  int64_t reach_ns;        /* -1 while unknown */
} record;

typedef struct {
  GArray *actions, *ops, *records;
  GArray *refs;            /* int32 record indices, referenced by ops and records */
  GArray *stream_ops[GT_N_STREAMS]; /* int32 op indices in FIFO order */
  /* Building. */
  GArray *pending[GT_N_STREAMS];    /* records waited for by the stream's next op */
  int32_t last_op[GT_N_STREAMS];
  GArray *event_record;    /* int32 per event number: its latest record, -1 none */
  int64_t next_corr;
  int cur_thread;          /* the thread new actions go to */
  const char *cur_module;  /* the module path new launches run in (j->names), NULL none */
  int32_t graph_action;    /* the open cudaGraphLaunch (gt_graph_begin), -1 none */
  GArray *thread_acts[GT_MAX_THREADS]; /* int32 action indices per thread, in program order */
  GArray *signals[GT_MAX_FLAGS];       /* int32 signal actions per flag, in order; NULL until used */
  int joins[GT_MAX_FLAGS];             /* joins appended per flag */
  GArray *sync_ops;        /* int32 op indices the sync actions wait for */
  /* Running. */
  guint pc[GT_MAX_THREADS];            /* next action of each thread (index into thread_acts) */
  int64_t now[GT_MAX_THREADS];
  guint cursor[GT_N_STREAMS];       /* first op of the stream whose end is unknown */
} rank_state;

/* The k-th collective of a group: what every member must agree on and how
 * far its members got. */
typedef struct {
  uint8_t kind;
  uint64_t bytes;
  int started;
  int64_t max_start;
} instance;

typedef struct {
  char *name, *desc;
  int n;
  int ranks[GT_MAX_RANKS];
  int index_of[GT_MAX_RANKS];       /* member index of a rank, -1 when not a member */
  GArray *insts;                    /* instance */
  GArray *inst_ops;                 /* int32, n per instance: member i's op, -1 until launched */
  int coll_count[GT_MAX_RANKS];     /* collectives launched per member */
  int p2p_count[GT_MAX_RANKS];      /* sends and recvs launched per member */
} group;

/* A transfer whose members have all started (gt_params.port_contention):
 * a collective instance (rank -1; a = group,
 * b = instance) or a send/recv (rank = the sender, a = its op, b = the
 * receiving rank's op). */
typedef struct {
  int64_t ready_ns;
  int rank;
  int32_t a, b;
} transfer;

struct gt_job {
  gt_params p;
  uint64_t beta, beta_out;
  int n;
  rank_state r[GT_MAX_RANKS];
  GPtrArray *groups;
  GArray *sends[GT_MAX_RANKS][GT_MAX_RANKS]; /* [a][b]: ops on a sending to b, in order */
  GArray *recvs[GT_MAX_RANKS][GT_MAX_RANKS]; /* [a][b]: ops on b receiving from a, in order */
  GArray *ready;           /* transfer: ready, not yet active (port_contention; gt_ports.c) */
  GArray *active;          /* gt_ports.c's active transfers, sharing their ports */
  double clock_ns;         /* gt_ports.c's fluid clock */
  GStringChunk *names;
  char *build_error;       /* the first problem found while building */
  gboolean ran;
};

/* gt_model.c: whether ranks a and b share a node (always, with one tier),
 * and a group's tier (scale-up when all its members share a node). */
gboolean gt_same_node(const gt_job *j, int a, int b);
void gt_group_tier(const gt_job *j, const group *g, int64_t *alpha, uint64_t *beta);
/* gt_ports.c (port contention): transfer (rank, a, b) (see `transfer`)
 * is ready at ready_ns; gt_ports_advance runs the ports' fluid clock until
 * the next transfer ends (its ops' end_ns set; TRUE), FALSE when none is
 * ready or active. */
void gt_ports_ready(gt_job *j, int rank, int32_t a, int32_t b, int64_t ready_ns);
gboolean gt_ports_advance(gt_job *j);

/* gt_modules.c: the module ranges of rank's CPU threads that rank_json
 * writes as python_function "nn.Module: X" events, from the launches'
 * module paths (gt_job_set_module). */
typedef struct {
  int64_t ts, dur;
  int thread;
  const char *name;        /* one path component (j->names) */
} gt_module_span;
GArray *gt_module_spans(const gt_job *j, int rank);

#endif
