/* gt_scenarios.c: the named scenarios of the ground-truth model
 * (gt_model.h, doc/ground-truth.md section 4), written with the public
 * program calls only (gt_job_*, gt_launch_*, gt_record, ...), as a test
 * would write its own job.  Each builder appends one profiler step of one
 * rank's program; gt_scenario_build repeats it three times per rank.
 * Building costs O(ops) per rank.
 */
#include "config.h"

#include "regress/gt_model.h"
#include "common/wisp_util.h"

#include <math.h>

#define US INT64_C(1000)

/* Kernel names as a PyTorch profile of a bf16 transformer on an H100 shows them. */
#define K_GEMM "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
#define K_GEMM_DGRAD "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas"
#define K_ELEMENTWISE "elementwise_kernel"
#define K_LOSS "cross_entropy_loss_kernel"
#define K_OPTIMIZER "multi_tensor_apply_kernel"

/* Event numbers, reused every time (a wait refers to the latest record). */
enum { EV_TO_COMM = 1, EV_TO_COMPUTE = 2, EV_TO_P2P = 3, EV_FROM_P2P = 4, EV_STEP_END = 5, EV_TO_DP = 6 };
/* Flags of the backward thread's hand-over and join. */
enum { F_BACKWARD = 0, F_BACKWARD_DONE = 1 };

typedef struct {
  gt_job *j;
  const gt_params *p;
  int r;
  double scale;            /* this rank's compute slowdown */
} prog;

static int64_t scaled(const prog *g, int64_t ns)
{
  return g->scale == 1.0 ? ns : (int64_t)llround((double)ns * g->scale);
}

/* Every launch of a scenario follows p->host_ns of host work. */
static void host(const prog *g)
{
  if (g->p->host_ns > 0)
    gt_cpu(g->j, g->r, g->p->host_ns);
}

static void kernel(const prog *g, int stream, const char *name, int64_t ns)
{
  host(g);
  gt_launch_compute(g->j, g->r, stream, name, scaled(g, ns));
}

static void coll_on(const prog *g, int stream, gt_kernel_kind kind, uint64_t bytes, int group_no)
{
  host(g);
  gt_launch_coll(g->j, g->r, stream, kind, bytes, group_no);
}

static void coll(const prog *g, gt_kernel_kind kind, uint64_t bytes, int group_no)
{
  coll_on(g, GT_STREAM_COMM, kind, bytes, group_no);
}

static void p2p(const prog *g, gt_kernel_kind kind, int peer, uint64_t bytes, int group_no)
{
  host(g);
  gt_launch_p2p(g->j, g->r, GT_STREAM_P2P, kind, peer, bytes, group_no);
}

/* Stream `to` waits for everything enqueued so far on stream `from`. */
static void handoff(const prog *g, int from, int to, int event)
{
  gt_record(g->j, g->r, from, event);
  gt_wait(g->j, g->r, to, event);
}

static void step_open(const prog *g, int k)
{
  gt_step_begin(g->j, g->r, k);
  if (g->p->head_ns > 0)
    gt_cpu(g->j, g->r, g->p->head_ns);
}

/* The common step end: a small world all-reduce (a loss or grad-norm
 * reduction) after the compute stream's work, a device synchronisation,
 * host work, the step mark. */
static void step_close(const prog *g, int k, int group_no)
{
  handoff(g, GT_STREAM_COMPUTE, GT_STREAM_COMM, EV_STEP_END);
  coll(g, GT_ALL_REDUCE, g->p->final_bytes, group_no);
  gt_device_sync(g->j, g->r);
  if (g->p->tail_ns > 0)
    gt_cpu(g->j, g->r, g->p->tail_ns);
  gt_step_end(g->j, g->r, k);
}

/* tp, launch, straggler: per layer a GEMM and an elementwise kernel, then
 * the layer's all-reduce in the tensor-parallel group, which the compute
 * stream waits for. */
static void step_tp(const prog *g, int tp)
{
  const gt_params *p = g->p;
  for (int l = 0; l < p->layers; l++) {
    kernel(g, GT_STREAM_COMPUTE, K_GEMM, p->gemm_ns);
    kernel(g, GT_STREAM_COMPUTE, K_ELEMENTWISE, p->elementwise_ns);
    handoff(g, GT_STREAM_COMPUTE, GT_STREAM_COMM, EV_TO_COMM);
    coll(g, GT_ALL_REDUCE, p->comm_bytes[l % 2], tp);
    handoff(g, GT_STREAM_COMM, GT_STREAM_COMPUTE, EV_TO_COMPUTE);
  }
  kernel(g, GT_STREAM_COMPUTE, K_LOSS, p->loss_ns);
}

/* dp: forward kernels, then backward kernels with a gradient bucket
 * all-reduced after every bucket_kernels of them (and after the last),
 * which only the optimizer waits for. */
static void step_dp(const prog *g, int dp)
{
  const gt_params *p = g->p;
  for (int i = 0; i < p->fwd_kernels; i++)
    kernel(g, GT_STREAM_COMPUTE, K_GEMM, p->fwd_ns);
  int bucket = 0;
  for (int i = 0; i < p->bwd_kernels; i++) {
    kernel(g, GT_STREAM_COMPUTE, K_GEMM_DGRAD, p->bwd_ns);
    if ((i + 1) % p->bucket_kernels == 0 || i + 1 == p->bwd_kernels) {
      handoff(g, GT_STREAM_COMPUTE, GT_STREAM_COMM, EV_TO_COMM);
      coll(g, GT_ALL_REDUCE, p->comm_bytes[bucket % 2], dp);
      bucket++;
    }
  }
  handoff(g, GT_STREAM_COMM, GT_STREAM_COMPUTE, EV_TO_COMPUTE);
  kernel(g, GT_STREAM_COMPUTE, K_OPTIMIZER, p->optimizer_ns);
}

/* One tensor-parallel layer: GEMM-like kernel(s), then the layer's
 * all-reduce in the TP group on the communication stream, which the
 * compute stream waits for. */
static void tp_layer(const prog *g, const char *gemm, int64_t gemm_ns, int64_t elementwise_ns, uint64_t bytes, int tp)
{
  kernel(g, GT_STREAM_COMPUTE, gemm, gemm_ns);
  if (elementwise_ns > 0)
    kernel(g, GT_STREAM_COMPUTE, K_ELEMENTWISE, elementwise_ns);
  handoff(g, GT_STREAM_COMPUTE, GT_STREAM_COMM, EV_TO_COMM);
  coll(g, GT_ALL_REDUCE, bytes, tp);
  handoff(g, GT_STREAM_COMM, GT_STREAM_COMPUTE, EV_TO_COMPUTE);
}

/* tpdp: forward layers with TP all-reduces on the main thread; the
 * backward layers (TP all-reduces too) with a DP bucket all-reduce on the
 * DP stream after every bucket_layers layers, launched by the main thread
 * or, with backward_thread, by thread 1 (PyTorch's autograd thread and
 * DDP's hooks) while the main thread blocks in a join (backward()); then
 * the main thread synchronises on the DP stream, runs the optimizer and a
 * blocking device-to-host copy (.item(): cudaMemcpyAsync then
 * cudaStreamSynchronize). */
static void step_tpdp(const prog *g, int tp, int dp)
{
  const gt_params *p = g->p;
  for (int l = 0; l < p->layers; l++)
    tp_layer(g, K_GEMM, p->gemm_ns, p->elementwise_ns, p->comm_bytes[l % 2], tp);
  kernel(g, GT_STREAM_COMPUTE, K_LOSS, p->loss_ns);
  if (p->backward_thread) {
    gt_signal(g->j, g->r, F_BACKWARD);
    gt_job_set_thread(g->j, g->r, 1);
    gt_join(g->j, g->r, F_BACKWARD);
  }
  int bucket = 0, held = 0;
  uint64_t group[2];
  for (int l = p->layers - 1; l >= 0; l--) {
    tp_layer(g, K_GEMM_DGRAD, p->bwd_ns, 0, p->comm_bytes[l % 2], tp);
    if ((p->layers - l) % p->bucket_layers == 0 || l == 0) {
      uint64_t b = p->bucket_bytes[bucket++ % 2];
      if (!p->coalesce_buckets) {
        handoff(g, GT_STREAM_COMPUTE, GT_STREAM_DP, EV_TO_DP);
        coll_on(g, GT_STREAM_DP, GT_ALL_REDUCE, b, dp);
        continue;
      }
      /* Two buckets at a time (the last alone when odd) as one NCCL group. */
      group[held++] = b;
      if (held == 2 || l == 0) {
        handoff(g, GT_STREAM_COMPUTE, GT_STREAM_DP, EV_TO_DP);
        host(g);
        gt_launch_coll_coalesced(g->j, g->r, GT_STREAM_DP, GT_ALL_REDUCE, group, held, dp);
        held = 0;
      }
    }
  }
  if (p->backward_thread) {
    gt_signal(g->j, g->r, F_BACKWARD_DONE);
    gt_job_set_thread(g->j, g->r, 0);
    gt_join(g->j, g->r, F_BACKWARD_DONE);
  }
  if (p->post_backward_ns > 0)
    gt_cpu(g->j, g->r, p->post_backward_ns);
  host(g);
  gt_stream_sync(g->j, g->r, GT_STREAM_DP);
  kernel(g, GT_STREAM_COMPUTE, K_OPTIMIZER, p->optimizer_ns);
  host(g);
  gt_launch_copy(g->j, g->r, GT_STREAM_COMPUTE, p->copy_ns);
  gt_stream_sync(g->j, g->r, GT_STREAM_COMPUTE);
}

/* decode: the whole step's kernels as one CUDA graph replay (one
 * cudaGraphLaunch): per layer a GEMM, an elementwise kernel and the
 * layer's TP all-reduce, captured on the compute stream (in stream order,
 * no events), then the sampling kernel; after the graph the sampled
 * tokens are copied to the host (cudaMemcpyAsync, cudaStreamSynchronize). */
static void step_decode(const prog *g, int tp)
{
  const gt_params *p = g->p;
  host(g);
  gt_graph_begin(g->j, g->r);
  for (int l = 0; l < p->layers; l++) {
    gt_launch_compute(g->j, g->r, GT_STREAM_COMPUTE, K_GEMM, scaled(g, p->gemm_ns));
    gt_launch_compute(g->j, g->r, GT_STREAM_COMPUTE, K_ELEMENTWISE, scaled(g, p->elementwise_ns));
    gt_launch_coll(g->j, g->r, GT_STREAM_COMPUTE, GT_ALL_REDUCE, p->comm_bytes[l % 2], tp);
  }
  gt_launch_compute(g->j, g->r, GT_STREAM_COMPUTE, K_LOSS, scaled(g, p->loss_ns));
  gt_graph_end(g->j, g->r);
  host(g);
  gt_launch_copy(g->j, g->r, GT_STREAM_COMPUTE, p->copy_ns);
  gt_stream_sync(g->j, g->r, GT_STREAM_COMPUTE);
}

/* serve: model execution k of an LLM server (vLLM), TP over the world:
 * per layer a GEMM and an elementwise kernel, then the layer's all-reduce,
 * which the compute stream waits for; then the sampling kernel, the
 * sampled tokens copied to the host and a stream sync.  Execution 0 is the
 * prefill: compute times and all-reduce sizes x prefill_scale. */
static void step_serve(const prog *g, int tp, int k)
{
  const gt_params *p = g->p;
  int64_t f = k == 0 ? p->prefill_scale : 1;
  for (int l = 0; l < p->layers; l++) {
    kernel(g, GT_STREAM_COMPUTE, K_GEMM, p->gemm_ns * f);
    kernel(g, GT_STREAM_COMPUTE, K_ELEMENTWISE, p->elementwise_ns * f);
    handoff(g, GT_STREAM_COMPUTE, GT_STREAM_COMM, EV_TO_COMM);
    coll(g, GT_ALL_REDUCE, p->comm_bytes[l % 2] * (uint64_t)f, tp);
    handoff(g, GT_STREAM_COMM, GT_STREAM_COMPUTE, EV_TO_COMPUTE);
  }
  kernel(g, GT_STREAM_COMPUTE, K_LOSS, p->loss_ns);
  host(g);
  gt_launch_copy(g->j, g->r, GT_STREAM_COMPUTE, p->copy_ns);
  gt_stream_sync(g->j, g->r, GT_STREAM_COMPUTE);
}

/* pp: GPipe over two stages.  Stage 0 (ranks 0, 1) runs the forward of
 * every micro-batch and sends the activations to its stage-1 partner
 * (rank + 2); stage 1 receives, runs the forwards, then the backwards in
 * reverse order and sends the gradients back; stage 0 receives them in
 * that order and runs its backwards.  Then each stage all-reduces its
 * gradients in its data-parallel group (two sizes) and runs the optimizer. */
static void step_pp(const prog *g, int pp_group, int dp_group)
{
  const gt_params *p = g->p;
  int M = p->microbatches;
  if (g->r < 2) {
    int peer = g->r + 2;
    for (int m = 0; m < M; m++) {
      kernel(g, GT_STREAM_COMPUTE, K_GEMM, p->fwd_ns);
      handoff(g, GT_STREAM_COMPUTE, GT_STREAM_P2P, EV_TO_P2P);
      p2p(g, GT_SEND, peer, p->act_bytes, pp_group);
    }
    for (int m = M - 1; m >= 0; m--) {
      p2p(g, GT_RECV, peer, p->act_bytes, pp_group);
      handoff(g, GT_STREAM_P2P, GT_STREAM_COMPUTE, EV_FROM_P2P);
      kernel(g, GT_STREAM_COMPUTE, K_GEMM_DGRAD, p->bwd_ns);
    }
  } else {
    int peer = g->r - 2;
    for (int m = 0; m < M; m++) {
      p2p(g, GT_RECV, peer, p->act_bytes, pp_group);
      handoff(g, GT_STREAM_P2P, GT_STREAM_COMPUTE, EV_FROM_P2P);
      kernel(g, GT_STREAM_COMPUTE, K_GEMM, p->fwd_ns);
    }
    for (int m = M - 1; m >= 0; m--) {
      kernel(g, GT_STREAM_COMPUTE, K_GEMM_DGRAD, p->bwd_ns);
      handoff(g, GT_STREAM_COMPUTE, GT_STREAM_P2P, EV_TO_P2P);
      p2p(g, GT_SEND, peer, p->act_bytes, pp_group);
    }
  }
  handoff(g, GT_STREAM_COMPUTE, GT_STREAM_COMM, EV_TO_COMM);
  coll(g, GT_ALL_REDUCE, p->comm_bytes[0], dp_group);
  coll(g, GT_ALL_REDUCE, p->comm_bytes[1], dp_group);
  handoff(g, GT_STREAM_COMM, GT_STREAM_COMPUTE, EV_TO_COMPUTE);
  kernel(g, GT_STREAM_COMPUTE, K_OPTIMIZER, p->optimizer_ns);
}

#define GT_STEPS 3

gt_job *gt_scenario_build(const gt_params *p, GError **error)
{
  const char *why = gt_params_check(p);
  if (why) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "scenario %s: %s", gt_scenario_name(p->scenario), why);
    return NULL;
  }
  int n = p->ranks;
  gt_job *j = gt_job_new(p, n);
  int all[GT_MAX_RANKS];
  for (int r = 0; r < n; r++)
    all[r] = r;
  int g_main = -1, pp_g[2] = { -1, -1 }, dp_g[2] = { -1, -1 };
  int tp_of[GT_MAX_RANKS], dp_of[GT_MAX_RANKS];
  if (p->scenario == GT_TPDP) {
    /* TP groups: consecutive blocks of tp ranks; DP groups: the ranks
     * equal modulo tp (one per TP group). */
    int nd = n / p->tp, m[GT_MAX_RANKS];
    for (int b = 0; b < nd; b++) {
      for (int i = 0; i < p->tp; i++)
        m[i] = b * p->tp + i;
      int gi = gt_job_add_group(j, "mesh_tp", m, p->tp);
      for (int i = 0; i < p->tp; i++)
        tp_of[b * p->tp + i] = gi;
    }
    for (int i = 0; i < p->tp; i++) {
      for (int b = 0; b < nd; b++)
        m[b] = b * p->tp + i;
      int gi = gt_job_add_group(j, "mesh_dp", m, nd);
      for (int b = 0; b < nd; b++)
        dp_of[b * p->tp + i] = gi;
    }
  } else if (p->scenario == GT_PP) {
    static const int pp0[] = { 0, 2 }, pp1[] = { 1, 3 }, dp0[] = { 0, 1 }, dp1[] = { 2, 3 };
    pp_g[0] = gt_job_add_group(j, "mesh_pp", pp0, 2);
    pp_g[1] = gt_job_add_group(j, "mesh_pp", pp1, 2);
    dp_g[0] = gt_job_add_group(j, "mesh_dp", dp0, 2);
    dp_g[1] = gt_job_add_group(j, "mesh_dp", dp1, 2);
  } else {
    g_main = gt_job_add_group(j, p->scenario == GT_DP ? "mesh_dp" : "mesh_tp", all, n);
  }
  for (int r = 0; r < n; r++) {
    prog g = { j, p, r, r == p->straggler_rank ? p->straggler_scale : 1.0 };
    for (int k = 0; p->scenario == GT_SERVE && k < p->serve_steps; k++) {
      step_open(&g, k); /* no closing all-reduce: a server's step ends with the token copy */
      step_serve(&g, g_main, k);
      if (p->tail_ns > 0)
        gt_cpu(g.j, g.r, p->tail_ns);
      gt_step_end(g.j, g.r, k);
    }
    for (int k = 1; p->scenario != GT_SERVE && k <= GT_STEPS; k++) {
      step_open(&g, k);
      switch (p->scenario) {
      case GT_DP: step_dp(&g, g_main); break;
      case GT_PP: step_pp(&g, pp_g[r % 2], dp_g[r / 2]); break;
      case GT_TPDP: step_tpdp(&g, tp_of[r], dp_of[r]); break;
      case GT_DECODE: step_decode(&g, g_main); break;
      default: step_tp(&g, g_main); break;
      }
      /* tpdp closes in its DP group: a world group would span the full
       * node grid, which NCCL and simulators may run hierarchically. */
      step_close(&g, k, p->scenario == GT_TPDP ? dp_of[r] : GT_GROUP_WORLD);
    }
  }
  return j;
}

