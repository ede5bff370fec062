/* gt_model.h: an independent ground-truth model of a small distributed GPU
 * job, for checking wisp's what-if predictions (doc/ground-truth.md).
 *
 * The model executes, per rank, one CPU thread running a program (host
 * work, kernel launches, event record/wait, device synchronisation,
 * profiler step marks) and three FIFO GPU streams (compute 7,
 * communication 20, point-to-point 24) in integer nanoseconds, with NCCL
 * kernels timed by the ring alpha-beta model of doc/calibration.md §1 and
 * every member of a collective ending at the same time.  It shares no code
 * with wisp's replay: only wisp's unit parsers and atomic file writer
 * (common/wisp_util.h) are used.
 *
 * Two ways to use it:
 *   - gt_run(): build one of the named scenarios (tp, dp, launch,
 *     straggler, pp) from gt_params, execute it, optionally write the
 *     per-rank PyTorch-profiler (Kineto) traces, and return the true step
 *     time;
 *   - the gt_job_* calls: write a program by hand (tests of the model
 *     itself), run it and read every op's times back.
 *
 * All times are integer nanoseconds on one clock shared by all ranks; the
 * model starts every rank's CPU at 0.
 */
#ifndef WISP_GT_MODEL_H
#define WISP_GT_MODEL_H

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

#define GT_MAX_RANKS 16
#define GT_MAX_SERVE_STEPS 16

/* The three GPU streams of a rank, by their Kineto stream ids. */
#define GT_STREAM_COMPUTE 7
#define GT_STREAM_COMM 20
#define GT_STREAM_P2P 24
#define GT_STREAM_DP 28      /* a second communication stream (data-parallel buckets) */
#define GT_STREAM_P2P_RECV 32  /* receives apart from sends (gt_parallel's interleaved pipeline: batched p2p) */
#define GT_STREAM_COMM_RECV 36

/* CPU threads per rank (thread 0 runs the step; gt_job_set_thread) and
 * flags of gt_signal / gt_join. */
#define GT_MAX_THREADS 4
#define GT_MAX_FLAGS 64

/* The process-group number of the default group (all ranks), which every
 * job has. */
#define GT_GROUP_WORLD 0

typedef enum {
  GT_TP = 0,         /* tensor parallel, 8 ranks, compute waits for every all-reduce */
  GT_DP,             /* data parallel, 8 ranks, bucketed all-reduces overlapping the backward pass */
  GT_LAUNCH,         /* tp with a slow CPU thread: the GPU waits for launches */
  GT_STRAGGLER,      /* tp with one rank's compute 1.3x slower */
  GT_PP,             /* pipeline parallel, 2 stages x 2 replicas, GPipe, NCCL send/recv */
  GT_TPDP,           /* TP x DP on nodes of gpus_per_node: TP all-reduces inside a node, DP buckets across nodes on
                        their own stream, optionally backward on a second CPU thread (backward_thread) */
  GT_DECODE,         /* a decode step replayed as one CUDA graph: per layer GEMM, elementwise, TP all-reduce captured
                        on the compute stream; then a device-to-host copy of the sampled tokens and a stream sync */
  GT_SERVE,          /* LLM serving as vLLM runs it, TP over all ranks: serve_steps model executions, each marked by
                        a user_annotation "execute_context_<k>(<tokens>)" (no ProfilerStep): execution 0 the prefill
                        (compute and all-reduce sizes x prefill_scale), the others decode steps; each ends with the
                        sampled tokens copied to the host and a stream sync */
  GT_N_SCENARIOS
} gt_scenario;

const char *gt_scenario_name(gt_scenario s);
/* FALSE when name is not one of the scenario names above. */
gboolean gt_scenario_from_name(const char *name, gt_scenario *out);

typedef enum {
  GT_COMPUTE = 0,
  GT_ALL_REDUCE,     /* bytes = the buffer (in = out) */
  GT_ALL_GATHER,     /* bytes = the per-rank shard (output n * bytes) */
  GT_REDUCE_SCATTER, /* bytes = the full input (output bytes / n) */
  GT_SEND,
  GT_RECV,
  GT_MEMCPY,         /* a device-to-host copy (cudaMemcpyAsync), ns fixed like a compute kernel */
  GT_ALL_TO_ALL,     /* bytes = each rank's send buffer, split evenly over the members (all_to_all_single) */
} gt_kernel_kind;

/* Every parameter of the model and of the scenarios.  gt_params_init
 * fills the documented defaults of a scenario (doc/ground-truth.md §3). */
typedef struct {
  gt_scenario scenario;
  int ranks;                  /* tp, dp, launch, straggler: world size (2..16); pp is always 4 */
  /* Network: ring alpha-beta. */
  int64_t alpha_ns;           /* per ring step, and the latency of a send/recv (default 2 us) */
  uint64_t beta_Bps;          /* bus bandwidth B in bytes/s (default 100 GB/s) */
  double bw_scale;            /* the network's bandwidth is beta_Bps * bw_scale (1: B, 2: 2B) */
  /* Two tiers: with gpus_per_node > 0, ranks r and q share a node when
   * r / gpus_per_node == q / gpus_per_node; a group or pair inside one
   * node uses (alpha_ns, beta_Bps * bw_scale), the scale-up tier, and any
   * other the scale-out tier (alpha_out_ns, beta_out_Bps * bw_scale_out).
   * 0 (the default of every scenario but tpdp): one node, one tier. */
  int gpus_per_node;
  int64_t alpha_out_ns;       /* per ring step across nodes (default 5 us) */
  uint64_t beta_out_Bps;      /* scale-out bus bandwidth (default 25 GB/s) */
  double bw_scale_out;        /* scale-out bandwidth factor (1) */
  /* Port contention (FALSE in every scenario's defaults; gt_par_init sets
   * it): each rank has one port per tier and direction (its NVLink or its
   * NIC, egress and ingress).  A collective crosses the egress and ingress
   * of every member on its tier, a send/recv the sender's egress and the
   * receiver's ingress; concurrent transfers share a port max-min fairly
   * (a fluid model: gt_ports.c), each draining the bandwidth part of its
   * closed form at its share and ending its latency part after that.
   * FALSE: every transfer takes its closed form whatever else is in
   * flight. */
  gboolean port_contention;
  /* Machine. */
  int64_t l_call_ns;          /* cudaLaunchKernel call (5 us) */
  int64_t l_submit_ns;        /* call start to the kernel being eligible on the GPU (3 us) */
  int64_t l_small_ns;         /* cudaEventRecord / cudaStreamWaitEvent call (2 us) */
  int64_t g_stream_ns;        /* gap between back-to-back kernels of a stream (1 us) */
  int64_t g_event_ns;         /* an event reached to a waiting stream's next kernel (2 us) */
  int64_t r_sync_ns;          /* GPU idle to cudaDeviceSynchronize / cudaStreamSynchronize returning (5 us) */
  int64_t r_join_ns;          /* a joined thread's signal to the joining thread running again (5 us) */
  /* Host program. */
  int64_t host_ns;            /* Python work before every launch */
  int64_t head_ns;            /* work at the start of a step */
  int64_t tail_ns;            /* work after the step's synchronisation (100 us) */
  uint64_t final_bytes;       /* the world all-reduce closing every step (4 KiB) */
  /* tp, launch, straggler. */
  int layers;
  int64_t gemm_ns, elementwise_ns; /* the two compute kernels of a layer */
  int64_t loss_ns;            /* the compute kernel after the last layer */
  /* tp-like: the all-reduce of layer l has comm_bytes[l % 2]; dp: bucket b
   * has comm_bytes[b % 2]; pp: the two data-parallel gradient all-reduces. */
  uint64_t comm_bytes[2];
  int straggler_rank;         /* -1: none */
  double straggler_scale;     /* its compute kernels take this much longer */
  /* dp. */
  int fwd_kernels, bwd_kernels, bucket_kernels; /* a bucket is ready after every bucket_kernels backward kernels */
  /* dp, pp. */
  int64_t fwd_ns, bwd_ns;     /* one forward / backward kernel (pp: one stage, one micro-batch) */
  int64_t optimizer_ns;
  /* pp. */
  int microbatches;
  uint64_t act_bytes;         /* activations (and their gradients) sent between the stages */
  /* tpdp. */
  int tp;                     /* tensor-parallel degree (4); ranks / tp data-parallel replicas */
  int bucket_layers;          /* a DP bucket is all-reduced after every bucket_layers backward layers (2) */
  uint64_t bucket_bytes[2];   /* DP bucket sizes, alternating (16, 24 MiB) */
  int64_t copy_ns;            /* the blocking device-to-host copy after the optimizer (20 us) */
  int64_t post_backward_ns;   /* host work on the main thread after backward() returns (0) */
  gboolean backward_thread;   /* launch backward and its DP hooks from thread 1; the main thread joins it */
  gboolean coalesce_buckets;  /* all-reduce the DP buckets two at a time as one coalesced NCCL group */
  /* serve. */
  int serve_steps;            /* model executions: 1 prefill + serve_steps - 1 decode steps (6; 3..GT_MAX_SERVE_STEPS) */
  int prefill_scale;          /* the prefill's compute times and all-reduce sizes over a decode step's (16) */
  /* Traces. */
  gboolean cuda_sync_events;  /* also write the cat "cuda_sync" activities: Stream Wait Event for every wait on a
                                 recorded event, Stream Sync / Context Sync for every host synchronisation */
  gboolean et_trace;          /* also write each rank's PyTorch execution trace of the measured step beside its
                                 Kineto trace (gt_job_write_et), and give every NCCL launch a record_param_comms
                                 CPU op with its "Record function id" in the Kineto trace: the ids Chakra's trace
                                 linker joins the two halves on */
  gboolean sglang_markers;    /* serve: mark each model execution as SGLang's scheduler does (a python_function
                                 event "...scheduler.py(N): run_batch") instead of vLLM's execute_context_* */
} gt_params;

void gt_params_init(gt_params *p, gt_scenario s);
/* The bandwidth the model uses: round(beta_Bps * bw_scale), at least 1;
 * the scale-out tier's round(beta_out_Bps * bw_scale_out). */
uint64_t gt_params_beta(const gt_params *p);
uint64_t gt_params_beta_out(const gt_params *p);
/* NULL when p is usable, else a static explanation. */
const char *gt_params_check(const gt_params *p);

/* The closed forms (doc/calibration.md §1), rounded once to the nearest
 * nanosecond, halves up:
 *   T = steps(kind, n) * alpha + bus_bytes(kind, bytes, n) / beta
 * all_reduce 2(n-1) steps, 2(n-1)/n * S; reduce_scatter n-1, (n-1)/n * S;
 * all_gather n-1, (n-1) * S; all_to_all n-1, (n-1)/n * S (S each rank's
 * send buffer: pairwise exchange, one peer per step); a send/recv pair
 * alpha + S / beta. */
int64_t gt_coll_ns(gt_kernel_kind kind, uint64_t bytes, int n, int64_t alpha_ns, uint64_t beta_Bps);
int64_t gt_p2p_ns(uint64_t bytes, int64_t alpha_ns, uint64_t beta_Bps);

/* ---- programs ---- */

typedef struct gt_job gt_job;

/* A job of n_ranks ranks (1..GT_MAX_RANKS) on the machine and network of p
 * (only the network, machine and cuda_sync_events fields are used).  Group
 * GT_GROUP_WORLD (all ranks, "default_pg") exists from the start. */
gt_job *gt_job_new(const gt_params *p, int n_ranks);
void gt_job_free(gt_job *j);
/* Adds a process group; returns its number (its Kineto "Process Group
 * Name").  ranks: n distinct ranks, ascending. */
int gt_job_add_group(gt_job *j, const char *desc, const int *ranks, int n);

/* Program actions, appended to rank's CPU program in order.  The launch
 * calls return the GPU op's index on the rank (gt_job_op); the others the
 * action's index (gt_job_action).  stream is one of GT_STREAM_*; an event
 * is any number 0..65535 (re-recording an event is allowed; a wait refers
 * to the event's latest record before it, as in CUDA; waiting for an event
 * never recorded does nothing). */
int gt_cpu(gt_job *j, int rank, int64_t ns);
/* The module path ("/"-separated, outermost first; NULL or "": none) the
 * rank's next launches run in: the trace writes each component as a
 * python_function "nn.Module: X" range around the consecutive launches of
 * a thread that share it (PyTorch's with_modules). */
void gt_job_set_module(gt_job *j, int rank, const char *path);
int gt_launch_compute(gt_job *j, int rank, int stream, const char *name, int64_t ns);
int gt_launch_coll(gt_job *j, int rank, int stream, gt_kernel_kind kind, uint64_t bytes, int group);
int gt_launch_p2p(gt_job *j, int rank, int stream, gt_kernel_kind kind, int peer, uint64_t bytes, int group);
/* n collectives of one kind in one group issued in one NCCL group
 * (ncclGroupStart/End, PyTorch's _coalescing_manager): NCCL runs them as
 * one kernel, one grouped operation of the summed size, timed by the
 * closed form once (one set of latency steps); the kernel's Collective
 * name is "<name>_coalesced" (allreduce_coalesced, ...) and its element
 * counts the sum. */
int gt_launch_coll_coalesced(gt_job *j, int rank, int stream, gt_kernel_kind kind, const uint64_t *bytes, int n,
                             int group_no);
int gt_record(gt_job *j, int rank, int stream, int event);
int gt_wait(gt_job *j, int rank, int stream, int event);
int gt_device_sync(gt_job *j, int rank);
/* cudaStreamSynchronize(stream): returns r_sync_ns after the last op
 * appended to that stream before it (by any thread) has ended, or at once
 * (+ r_sync_ns) when there is none. */
int gt_stream_sync(gt_job *j, int rank, int stream);
/* A device-to-host copy on stream (cudaMemcpyAsync, gpu_memcpy), ns long. */
int gt_launch_copy(gt_job *j, int rank, int stream, int64_t ns);
/* Threads: the actions appended to rank from now on belong to CPU thread
 * `thread` (0..GT_MAX_THREADS-1; 0, the default, runs the step marks).
 * Threads run concurrently, each its program in order, from time 0.
 * gt_signal (no CPU time, not traced) marks a point of the current thread;
 * the k-th gt_join on `flag` (0..GT_MAX_FLAGS-1) of a rank blocks its
 * thread until the k-th gt_signal on that flag has run, and continues
 * r_join_ns after it (a thread waiting on a condition variable: the main
 * thread in backward(), a Work.wait()).  The blocked time is not traced.
 * Ops of one stream, and records and waits of one event, must be appended
 * in the order their calls run: gt_job_run checks it. */
void gt_job_set_thread(gt_job *j, int rank, int thread);
/* A CUDA graph replay: gt_graph_begin appends one cudaGraphLaunch call
 * (l_call_ns); every op launched on rank until gt_graph_end is a captured
 * op of that call (no call of its own, eligible l_submit_ns after the
 * graph's call began, its kernel carrying the call's correlation), in
 * stream order as usual.  Records and waits are not allowed inside. */
int gt_graph_begin(gt_job *j, int rank);
void gt_graph_end(gt_job *j, int rank);
int gt_signal(gt_job *j, int rank, int flag);
int gt_join(gt_job *j, int rank, int flag);
int gt_step_begin(gt_job *j, int rank, int step);
int gt_step_end(gt_job *j, int rank, int step);

/* Executes every program.  Fails with WISP_ERROR_DEADLOCK (naming what
 * each blocked rank waits for) when some action or op can never run, and
 * with WISP_ERROR_INVALID when the members of a collective disagree on its
 * kind or size, a send and its recv on the size, or a size is not a whole
 * number of bf16 elements.  Runs once per job. */
gboolean gt_job_run(gt_job *j, GError **error);

typedef struct {
  int stream;                 /* GT_STREAM_* */
  gt_kernel_kind kind;
  int64_t launch_ns;          /* the launch call's start */
  int64_t eligible_ns;        /* launch_ns + l_submit_ns */
  int64_t start_ns, end_ns;
} gt_op_times;

/* After gt_job_run succeeded. */
gt_op_times gt_job_op(const gt_job *j, int rank, int op);
void gt_job_action(const gt_job *j, int rank, int action, int64_t *start_ns, int64_t *end_ns);
/* ProfilerStep#step on rank: its start and end; FALSE when the rank has no such step. */
gboolean gt_job_step(const gt_job *j, int rank, int step, int64_t *start_ns, int64_t *end_ns);
int gt_job_ranks(const gt_job *j);
uint64_t gt_job_gpu_ops(const gt_job *j);

/* Writes OUTDIR/rank<r>.json for every rank (OUTDIR must exist), each
 * file atomically.  The bytes depend only on the job. */
gboolean gt_job_write(const gt_job *j, const char *outdir, GError **error);

/* Writes OUTDIR/rank<r>.et.json for every rank: the PyTorch execution
 * trace (schema 1.1.1-chakra.0.0.4) of ProfilerStep#step, as
 * torch.profiler.ExecutionTraceObserver records one step (regress/gt_et.c
 * states what it holds).  Each NCCL launch is a c10d operator with a
 * record_param_comms child whose rf_id is the "Record function id" of the
 * Kineto CPU op that gt_job_write writes when the job's et_trace is set.
 * Each file atomically; the bytes depend only on the job. */
gboolean gt_job_write_et(const gt_job *j, int step, const char *outdir, GError **error);

/* ---- scenarios ---- */

/* The scenario p->scenario as a job, ready to run: three profiler steps,
 * #1..#3, identical in structure. */
gt_job *gt_scenario_build(const gt_params *p, GError **error);

typedef struct {
  gt_scenario scenario;
  int n_ranks;
  int step;                       /* the measured step: 2 */
  uint64_t beta_Bps;              /* the bandwidth used (gt_params_beta) */
  int64_t step_ns;                /* the true step time: max over ranks of ProfilerStep#2's length */
  int64_t rank_step_ns[GT_MAX_RANKS];
  uint64_t gpu_ops;               /* kernels over all ranks and steps */
  uint64_t comm_ops;              /* of which NCCL kernels */
  uint64_t runtime_calls;         /* CUDA runtime calls over all ranks */
  /* serve: every model execution's marker length per rank, [execution][rank]
   * (the truth of TTFT and TPOT); serve_steps 0 for the other scenarios. */
  int serve_steps;
  int64_t serve_step_ns[GT_MAX_SERVE_STEPS][GT_MAX_RANKS];
} gt_result;

/* Builds and runs p's scenario, writes its traces into outdir (created if
 * needed; NULL: no files) and fills res. */
gboolean gt_run(const gt_params *p, const char *outdir, gt_result *res, GError **error);

G_END_DECLS
#endif
