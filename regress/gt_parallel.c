/* gt_parallel.c: one transformer job under several parallel
 * configurations, executed on gt_model's machine (see gt_parallel.h).
 * Shares no code with wisp's model reader or re-partitioning. */
#include "config.h"
#include <stdarg.h>
#include "regress/gt_parallel.h"
#include "common/wisp_util.h"

#include <math.h>
#include <string.h>

#define US INT64_C(1000)

void gt_par_init(gt_par_params *p)
{
  memset(p, 0, sizeof *p);
  p->tp = 4;
  p->pp = 2;
  p->mb = 4;
  p->sched = GT_SCHED_1F1B;
  p->layers = 16;
  p->hidden = 4096;
  p->ffn = 16384;
  p->heads = 32;
  p->seq = 2048;
  p->vocab = 32000;
  p->global_batch = 8;
  p->peak_flops = 989e12;
  p->hbm_Bps = 3.35e12;
  p->sms = 132;
  p->gemm_eff = 0.80;
  p->attn_eff = 0.60;
  p->hbm_eff = 0.90;
  p->kernel_fixed_ns = 3 * US;
  p->dp = 1;
  p->ep = 1;
  p->cp = 1;
  p->overlap_grad_reduce = TRUE;
  gt_params_init(&p->base, GT_TP);
  p->base.host_ns = 2 * US;
  p->base.head_ns = 20 * US;
  p->base.tail_ns = 20 * US;
  /* A GPU's TP collectives and pipeline transfers share its NVLink port. */
  p->base.port_contention = TRUE;
}

void gt_par_init_moe(gt_par_params *p)
{
  gt_par_init(p);
  p->layers = 8;
  p->tp = 1;
  p->pp = 1;
  p->dp = 8;
  p->mb = 2;
  p->global_batch = 16;
  p->experts = 16;
  p->top_k = 2;
  p->moe_ffn = 4096;
  p->ep = 4;
  p->overlap_grad_reduce = FALSE;
}

const char *gt_par_check(const gt_par_params *p)
{
  if (p->tp < 1 || p->pp < 1 || p->dp < 1 || p->cp < 1 || p->mb < 1 || p->tp * p->pp * p->dp * p->cp > GT_MAX_RANKS)
    return "tp x pp x dp x cp must be 1..16 ranks and mb >= 1";
  if (p->cp > 1 && (p->experts > 0 || p->seq % p->cp))
    return "context parallelism needs no experts and cp dividing the sequence";
  if (p->layers % p->pp || p->heads % p->tp || p->hidden % p->tp || p->ffn % p->tp || p->vocab % p->tp)
    return "pp must divide the layers, tp the heads, hidden, ffn and vocabulary";
  if (p->global_batch % (p->mb * p->dp))
    return "dp x the micro-batch count must divide the global batch";
  if (p->experts > 0 && ((p->tp != 1 && !p->sequence_parallel) || p->ep < 1 || p->dp % p->ep || p->experts % p->ep || p->top_k < 1 ||
                         p->top_k > p->experts || p->moe_ffn < 1))
    return "MoE needs tp 1 (or sequence parallelism), ep dividing dp and the experts, 1 <= top_k <= experts and "
           "moe_ffn >= 1";
  if (p->experts == 0 && p->ep != 1)
    return "ep > 1 needs experts";
  if (p->etp > 1 && (p->experts == 0 || p->etp != p->tp || !p->sequence_parallel))
    return "expert tensor parallelism needs experts, etp equal to tp and sequence parallelism";
  if (p->sched == GT_SCHED_INTERLEAVED &&
      (p->vpp < 2 || p->pp < 2 || p->mb % p->pp || p->layers % (p->pp * p->vpp)))
    return "interleaved 1F1B needs vpp >= 2, pp >= 2 dividing mb, and pp x vpp dividing the layers";
  return gt_params_check(&p->base);
}

/* ---- kernel times: this file's GPU model ---- */

typedef struct {
  const gt_par_params *p;
  double tokens;              /* tokens per micro-batch */
} kt;

static int64_t finish(const kt *k, double compute_s, double bytes)
{
  double mem_s = bytes / (k->p->hbm_Bps * k->p->hbm_eff);
  return k->p->kernel_fixed_ns + (int64_t)llround(1e9 * fmax(compute_s, mem_s));
}

/* C[M x N] = A[M x K] B[K x N]: 128x128 tiles in whole waves. */
static int64_t gemm_ns(const kt *k, double m, double n, double kk)
{
  double tiles = ceil(m / 128.0) * ceil(n / 128.0);
  double waves = ceil(tiles / k->p->sms);
  double flops = waves * k->p->sms * 2.0 * 128.0 * 128.0 * kk;
  return finish(k, flops / (k->p->peak_flops * k->p->gemm_eff), 2.0 * (m * kk + kk * n + m * n));
}

/* Causal flash attention over `heads` heads of the micro-batch; bwd: 2.5x. */
static int64_t attn_ns(const kt *k, double heads, double factor)
{
  const gt_par_params *p = k->p;
  double b = k->tokens / p->seq, hd = (double)p->hidden / p->heads;
  double flops = factor * 2.0 * b * heads * (double)p->seq * p->seq * hd; /* 4 b h S^2 d / 2 */
  return finish(k, flops / (p->peak_flops * p->attn_eff), 2.0 * 4.0 * k->tokens * heads * hd);
}

/* One step of ring attention (context parallelism): the local queries
 * (seq / cp of each sequence) against one KV block of seq / cp, a cp^2-th
 * of the whole sequence's causal work (load-balanced chunks); bwd: 2.5x. */
static int64_t ring_attn_ns(const kt *k, double heads, double factor)
{
  const gt_par_params *p = k->p;
  double cp = p->cp, b = k->tokens * cp / p->seq, hd = (double)p->hidden / p->heads;
  double flops = factor * 2.0 * b * heads * (double)p->seq * p->seq * hd / (cp * cp);
  return finish(k, flops / (p->peak_flops * p->attn_eff), 2.0 * 4.0 * k->tokens * heads * hd);
}

/* `groups` GEMMs of one shape in one kernel (a grouped GEMM: the
 * experts' tiles share the waves). */
static int64_t grouped_ns(const kt *k, double groups, double m, double n, double kk)
{
  double tiles = groups * ceil(m / 128.0) * ceil(n / 128.0);
  double waves = ceil(tiles / k->p->sms);
  double flops = waves * k->p->sms * 2.0 * 128.0 * 128.0 * kk;
  return finish(k, flops / (k->p->peak_flops * k->p->gemm_eff), groups * 2.0 * (m * kk + kk * n + m * n));
}

static int64_t elem_ns(const kt *k, double bytes)
{
  return finish(k, 0.0, bytes);
}

/* ---- the program ---- */

#define K_GEMM_F "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_cublas"
#define K_GEMM_D "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64_cublas"
#define K_GEMM_W "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x128x64_cublas"
#define K_FLASH_F "flash_fwd_kernel"
#define K_FLASH_B "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel"
#define K_NORM_F "vectorized_layer_norm_kernel"
#define K_NORM_B "layer_norm_grad_input_kernel"
#define K_GELU_F "vectorized_elementwise_kernel<GeluCUDAKernelImpl>"
#define K_GELU_B "vectorized_elementwise_kernel<GeluBackwardCUDAKernelImpl>"
#define K_EMB_F "indexSelectLargeIndex"
#define K_EMB_B "embedding_backward_cuda_kernel"
#define K_XENT_F "cross_entropy_loss_fwd_kernel"
#define K_XENT_B "cross_entropy_loss_bwd_kernel"
#define K_ADAM "multi_tensor_apply_kernel<AdamFunctor>"
#define K_ROUTER_F "moe_topk_softmax_kernel"
#define K_ROUTER_B "moe_topk_softmax_backward_kernel"
#define K_PERMUTE_F "moe_permute_tokens_kernel"
#define K_PERMUTE_B "moe_permute_tokens_backward_kernel"
#define K_UNPERMUTE_F "moe_unpermute_kernel"
#define K_UNPERMUTE_B "moe_unpermute_backward_kernel"
#define K_GROUPED_F "cutlass_grouped_gemm_bf16_tn_experts"
#define K_GROUPED_D "cutlass_grouped_gemm_bf16_nn_experts"
#define K_GROUPED_W "cutlass_grouped_gemm_bf16_nt_experts"

enum { EV_TO_COMM = 1, EV_TO_COMPUTE = 2, EV_TO_P2P = 3, EV_FROM_P2P = 4, EV_STEP_END = 5, EV_TO_DP = 6,
       EV_FROM_DP = 7, EV_REGATHER = 8 };

typedef struct {
  gt_job *j;
  const gt_par_params *p;
  kt k;
  int r, stage, tp_group, world;
  int dp_group, ep_group, edp_group; /* -1 when of one rank */
  int cp_next, cp_prev;       /* the CP ring's neighbours (-1: cp 1) */
  int cp_group;               /* the CP group (the ring's transfers are written in it) */
  int prev, next;             /* ranks of the neighbour stages, -1 at the ends */
  int first, last;            /* ranks of stage 0 and stage pp - 1 (same d, i): interleaving's wrap-around */
  int chunks;                 /* layer chunks per rank (interleaved: vpp, else 1) */
} prog;

static void host(const prog *g)
{
  if (g->p->base.host_ns > 0)
    gt_cpu(g->j, g->r, g->p->base.host_ns);
}

static void kernel(const prog *g, const char *name, int64_t ns)
{
  host(g);
  gt_launch_compute(g->j, g->r, GT_STREAM_COMPUTE, name, ns);
}

/* The module the next launches run in, when the job writes module
 * annotations (gt_par_params.annotate; printf-style path, NULL: none). */
static void G_GNUC_PRINTF(2, 3) module(const prog *g, const char *fmt, ...)
{
  if (!g->p->annotate)
    return;
  char *path = NULL;
  if (fmt) {
    va_list ap;
    va_start(ap, fmt);
    path = g_strdup_vprintf(fmt, ap);
    va_end(ap);
  }
  gt_job_set_module(g->j, g->r, path);
  g_free(path);
}

/* Layer i's module path prefix (annotate 2: two layers per instance, the
 * annotations a test checks a disagreement with). */
#define LAYER_PATH "GPTModel_0/TransformerBlock_0/TransformerLayer_%d"
static int layer_instance(const prog *g, int i) { return g->p->annotate == 2 ? i / 2 : i; }

static void handoff(const prog *g, int from, int to, int event)
{
  gt_record(g->j, g->r, from, event);
  gt_wait(g->j, g->r, to, event);
}

/* The TP all-reduce of the activations (or their gradients): the compute
 * stream waits for it. */
static void tp_allreduce(const prog *g)
{
  if (g->p->tp == 1)
    return;
  handoff(g, GT_STREAM_COMPUTE, GT_STREAM_COMM, EV_TO_COMM);
  host(g);
  gt_launch_coll(g->j, g->r, GT_STREAM_COMM, GT_ALL_REDUCE, (uint64_t)g->k.tokens * g->p->hidden * 2, g->tp_group);
  handoff(g, GT_STREAM_COMM, GT_STREAM_COMPUTE, EV_TO_COMPUTE);
}

/* Sequence parallelism (tp > 1): the TP all-reduce that closes a block
 * becomes a reduce-scatter (T x h in, T / tp x h out per rank), and the
 * block's first GEMM waits for an all-gather of the T / tp x h shards
 * (gather); without it, gather does nothing and scatter all-reduces. */
static void tp_coll(const prog *g, gt_kernel_kind kind, uint64_t bytes)
{
  handoff(g, GT_STREAM_COMPUTE, GT_STREAM_COMM, EV_TO_COMM);
  host(g);
  gt_launch_coll(g->j, g->r, GT_STREAM_COMM, kind, bytes, g->tp_group);
  handoff(g, GT_STREAM_COMM, GT_STREAM_COMPUTE, EV_TO_COMPUTE);
}

static void tp_gather(const prog *g)
{
  if (g->p->tp > 1 && g->p->sequence_parallel)
    tp_coll(g, GT_ALL_GATHER, (uint64_t)g->k.tokens / g->p->tp * g->p->hidden * 2);
}

static void tp_scatter(const prog *g)
{
  if (g->p->tp > 1 && g->p->sequence_parallel)
    tp_coll(g, GT_REDUCE_SCATTER, (uint64_t)g->k.tokens * g->p->hidden * 2);
  else
    tp_allreduce(g);
}

/* Megatron's sequence-parallel column-parallel linear in the backward
 * (sp_regather; its LinearWithGradAccumulationAndAsyncCommunication):
 * the forward kept only the rank's T / tp x h input shard, so the weight
 * gradient's input is all-gathered again, issued on the communication
 * stream before the data gradient's GEMM, which it overlaps; the weight
 * gradient's GEMM waits for it (regather_wait). */
static gboolean regathers(const prog *g)
{
  return g->p->sp_regather && g->p->sequence_parallel && g->p->tp > 1;
}

static void regather(const prog *g)
{
  if (!regathers(g))
    return;
  handoff(g, GT_STREAM_COMPUTE, GT_STREAM_COMM, EV_TO_COMM);
  host(g);
  gt_launch_coll(g->j, g->r, GT_STREAM_COMM, GT_ALL_GATHER, (uint64_t)g->k.tokens / g->p->tp * g->p->hidden * 2,
                 g->tp_group);
  gt_record(g->j, g->r, GT_STREAM_COMM, EV_REGATHER);
}

static void regather_wait(const prog *g)
{
  if (regathers(g))
    gt_wait(g->j, g->r, GT_STREAM_COMPUTE, EV_REGATHER);
}

/* A column-parallel linear's weight gradient GEMM (ns) and the
 * reduce-scatter of its input's gradient: with sp_regather Megatron
 * issues the reduce-scatter on the communication stream before the
 * weight gradient's GEMM, which it overlaps, and what follows waits for
 * both; else the GEMM, then the block's scatter (tp_scatter). */
static void wgrad_scatter(const prog *g, int64_t ns)
{
  if (!regathers(g)) {
    kernel(g, K_GEMM_W, ns);
    tp_scatter(g);
    return;
  }
  handoff(g, GT_STREAM_COMPUTE, GT_STREAM_COMM, EV_TO_COMM);
  host(g);
  gt_launch_coll(g->j, g->r, GT_STREAM_COMM, GT_REDUCE_SCATTER, (uint64_t)g->k.tokens * g->p->hidden * 2,
                 g->tp_group);
  gt_record(g->j, g->r, GT_STREAM_COMM, EV_REGATHER);
  kernel(g, K_GEMM_W, ns);
  gt_wait(g->j, g->r, GT_STREAM_COMPUTE, EV_REGATHER);
}

/* The tokens a token-wise kernel of the rank sees: T / tp under sequence
 * parallelism (norms, the MoE block), else T. */
static kt seq_shard(const prog *g)
{
  kt k = g->k;
  if (g->p->sequence_parallel)
    k.tokens /= g->p->tp;
  return k;
}

/* The dispatch or combine all-to-all of the EP group: T x top_k x h bf16
 * per rank (T / tp under sequence parallelism); the compute stream waits
 * for it. */
static void ep_alltoall(const prog *g)
{
  if (g->ep_group < 0)
    return;
  handoff(g, GT_STREAM_COMPUTE, GT_STREAM_COMM, EV_TO_COMM);
  host(g);
  gt_launch_coll(g->j, g->r, GT_STREAM_COMM, GT_ALL_TO_ALL,
                 (uint64_t)seq_shard(g).tokens * g->p->top_k * g->p->hidden * 2, g->ep_group);
  handoff(g, GT_STREAM_COMM, GT_STREAM_COMPUTE, EV_TO_COMPUTE);
}

/* Expert tensor parallelism (gt_par_params.etp > 1): the expert tokens'
 * all-gather over the TP group before the experts (T / tp x top_k x h
 * bf16 per rank: what the dispatch brought) and the reduce-scatter of
 * their outputs after them (tp times that in). */
static void etp_coll(const prog *g, gt_kernel_kind kind)
{
  if (g->p->etp < 2)
    return;
  uint64_t shard = (uint64_t)seq_shard(g).tokens * g->p->top_k * g->p->hidden * 2;
  tp_coll(g, kind, kind == GT_ALL_GATHER ? shard : shard * (uint64_t)g->p->etp);
}

/* The MoE block's forward after the second norm. */
static void moe_fwd(const prog *g)
{
  const gt_par_params *p = g->p;
  const kt ks = seq_shard(g);
  double T = ks.tokens, h = p->hidden, E = p->experts, k = p->top_k, f = p->moe_ffn;
  double le = E / p->ep, te = T * k * p->ep / E, x = MAX(p->etp, 1);
  kernel(g, K_GEMM_F, gemm_ns(&ks, T, E, h));                /* router */
  kernel(g, K_ROUTER_F, elem_ns(&ks, 3.0 * T * E * 4));
  kernel(g, K_PERMUTE_F, elem_ns(&ks, 2.0 * T * k * h * 2));
  ep_alltoall(g);                                              /* dispatch */
  etp_coll(g, GT_ALL_GATHER);
  kernel(g, K_GROUPED_F, grouped_ns(&ks, le, te * x, f / x, h)); /* expert FC1 */
  kernel(g, K_GELU_F, elem_ns(&ks, 2.0 * T * k * f * 2));
  kernel(g, K_GROUPED_F, grouped_ns(&ks, le, te * x, h, f / x)); /* expert FC2 */
  etp_coll(g, GT_REDUCE_SCATTER);
  ep_alltoall(g);                                              /* combine */
  kernel(g, K_UNPERMUTE_F, elem_ns(&ks, (2.0 * k + 1.0) * T * h * 2));
}

static void moe_bwd(const prog *g)
{
  const gt_par_params *p = g->p;
  const kt ks = seq_shard(g);
  double T = ks.tokens, h = p->hidden, E = p->experts, k = p->top_k, f = p->moe_ffn;
  double le = E / p->ep, te = T * k * p->ep / E, x = MAX(p->etp, 1);
  kernel(g, K_UNPERMUTE_B, elem_ns(&ks, (2.0 * k + 1.0) * T * h * 2));
  ep_alltoall(g);                                              /* combine's gradient */
  etp_coll(g, GT_ALL_GATHER);                                  /* the reduce-scatter's gradient */
  kernel(g, K_GROUPED_D, grouped_ns(&ks, le, te * x, f / x, h)); /* FC2 data gradient */
  kernel(g, K_GROUPED_W, grouped_ns(&ks, le, f / x, h, te * x)); /* FC2 weight gradient */
  kernel(g, K_GELU_B, elem_ns(&ks, 3.0 * T * k * f * 2));
  kernel(g, K_GROUPED_D, grouped_ns(&ks, le, te * x, h, f / x)); /* FC1 */
  kernel(g, K_GROUPED_W, grouped_ns(&ks, le, h, f / x, te * x));
  etp_coll(g, GT_REDUCE_SCATTER);                              /* the all-gather's gradient */
  ep_alltoall(g);                                              /* dispatch's gradient */
  kernel(g, K_PERMUTE_B, elem_ns(&ks, 2.0 * T * k * h * 2));
  kernel(g, K_ROUTER_B, elem_ns(&ks, 3.0 * T * E * 4));
  kernel(g, K_GEMM_D, gemm_ns(&ks, T, h, E));                /* router */
  kernel(g, K_GEMM_W, gemm_ns(&ks, E, h, T));
}

/* A layer's attention: one flash kernel, or with cp > 1 the ring: step j
 * sends the KV block it holds to the next CP rank and receives the next
 * block from the previous one (on the point-to-point streams, after the
 * compute stream's work so far) while it computes; step j + 1 waits for
 * the block.  The backward moves K, V and their gradients (2x). */
static void attention(const prog *g, gboolean backward)
{
  const gt_par_params *p = g->p;
  double factor = backward ? 2.5 : 1.0;
  const char *name = backward ? K_FLASH_B : K_FLASH_F;
  if (p->cp == 1) {
    kernel(g, name, attn_ns(&g->k, p->heads / p->tp, factor));
    return;
  }
  uint64_t kv = (uint64_t)llround(2.0 * g->k.tokens * p->hidden / p->tp * 2 * (backward ? 2 : 1));
  for (int j = 0; j < p->cp; j++) {
    if (j + 1 < p->cp) {
      handoff(g, GT_STREAM_COMPUTE, GT_STREAM_P2P, EV_TO_P2P);
      host(g);
      gt_launch_p2p(g->j, g->r, GT_STREAM_P2P, GT_SEND, g->cp_next, kv, g->cp_group);
      host(g);
      gt_launch_p2p(g->j, g->r, GT_STREAM_P2P_RECV, GT_RECV, g->cp_prev, kv, g->cp_group);
    }
    kernel(g, name, ring_attn_ns(&g->k, p->heads / p->tp, factor));
    if (j + 1 < p->cp)
      handoff(g, GT_STREAM_P2P_RECV, GT_STREAM_COMPUTE, EV_FROM_P2P);
  }
}

/* Layer i's forward (i: its instance on the rank, for the annotations). */
static void layer_fwd(const prog *g, int i)
{
  const gt_par_params *p = g->p;
  double T = g->k.tokens, h = p->hidden, f = p->ffn, t = p->tp;
  int li = layer_instance(g, i);
  const kt ks = seq_shard(g);
  module(g, LAYER_PATH, li);
  kernel(g, K_NORM_F, elem_ns(&ks, 2.0 * ks.tokens * h * 2));
  module(g, LAYER_PATH "/SelfAttention_%d", li, li);
  tp_gather(g);
  kernel(g, K_GEMM_F, gemm_ns(&g->k, T, 3 * h / t, h));
  attention(g, FALSE);
  kernel(g, K_GEMM_F, gemm_ns(&g->k, T, h, h / t));
  tp_scatter(g);
  module(g, LAYER_PATH, li);
  kernel(g, K_NORM_F, elem_ns(&ks, 3.0 * ks.tokens * h * 2));
  if (p->experts > 0) {
    module(g, LAYER_PATH "/MoELayer_%d", li, li);
    moe_fwd(g);
    return;
  }
  module(g, LAYER_PATH "/MLP_%d", li, li);
  tp_gather(g);
  kernel(g, K_GEMM_F, gemm_ns(&g->k, T, f / t, h));
  kernel(g, K_GELU_F, elem_ns(&g->k, 2.0 * T * f / t * 2));
  kernel(g, K_GEMM_F, gemm_ns(&g->k, T, h, f / t));
  tp_scatter(g);
}

static void layer_bwd(const prog *g)
{
  const gt_par_params *p = g->p;
  double T = g->k.tokens, h = p->hidden, f = p->ffn, t = p->tp;
  const kt ks = seq_shard(g);
  if (p->experts > 0) {
    moe_bwd(g);
  } else {
    tp_gather(g);                                       /* the reduce-scatter's gradient */
    kernel(g, K_GEMM_D, gemm_ns(&g->k, T, f / t, h));   /* fc2 data gradient */
    kernel(g, K_GEMM_W, gemm_ns(&g->k, h, f / t, T));   /* fc2 weight gradient */
    kernel(g, K_GELU_B, elem_ns(&g->k, 3.0 * T * f / t * 2));
    regather(g);
    kernel(g, K_GEMM_D, gemm_ns(&g->k, T, h, f / t));   /* fc1 */
    regather_wait(g);
    wgrad_scatter(g, gemm_ns(&g->k, f / t, h, T));
  }
  if (p->experts > 0 && !p->sequence_parallel) /* a sequence-parallel MoE block has no TP collective */
    tp_scatter(g);
  kernel(g, K_NORM_B, elem_ns(&ks, 4.0 * ks.tokens * h * 2));
  tp_gather(g);
  kernel(g, K_GEMM_D, gemm_ns(&g->k, T, h / t, h));   /* projection */
  kernel(g, K_GEMM_W, gemm_ns(&g->k, h / t, h, T));
  attention(g, TRUE);
  regather(g);
  kernel(g, K_GEMM_D, gemm_ns(&g->k, T, h, 3 * h / t)); /* qkv */
  regather_wait(g);
  wgrad_scatter(g, gemm_ns(&g->k, 3 * h / t, h, T));
  kernel(g, K_NORM_B, elem_ns(&ks, 4.0 * ks.tokens * h * 2));
}

static uint64_t act_bytes(const prog *g)
{
  return (uint64_t)g->k.tokens * g->p->hidden * 2;
}

/* The rank chunk c's forward receives from and sends to (-1: the
 * embedding, the head). */
static int from_rank(const prog *g, int c)
{
  return g->prev >= 0 ? g->prev : c > 0 ? g->last : -1;
}

static int to_rank(const prog *g, int c)
{
  return g->next >= 0 ? g->next : c + 1 < g->chunks ? g->first : -1;
}

/* Forward of one micro-batch through this stage's chunk c. */
static void fwd(const prog *g, int c)
{
  const gt_par_params *p = g->p;
  double T = g->k.tokens, h = p->hidden, v = p->vocab, t = p->tp;
  int from = from_rank(g, c), to = to_rank(g, c);
  if (from >= 0) { /* interleaved: receives on their own stream (Megatron batches them with the sends) */
    int st = g->chunks > 1 ? GT_STREAM_P2P_RECV : GT_STREAM_P2P;
    host(g);
    gt_launch_p2p(g->j, g->r, st, GT_RECV, from, act_bytes(g), GT_GROUP_WORLD);
    handoff(g, st, GT_STREAM_COMPUTE, EV_FROM_P2P);
  } else {
    module(g, "GPTModel_0/LanguageModelEmbedding_0");
    if (p->patch_embed) /* a linear patch embedding: one GEMM of the layers' kernel (T x h over h) */
      kernel(g, K_GEMM_F, gemm_ns(&g->k, T, h, h));
    else
      kernel(g, K_EMB_F, elem_ns(&g->k, 2.0 * T * h * 2));
    if (regathers(g) && !p->patch_embed) /* VocabParallelEmbedding's output reduce-scattered to the sequence shards */
      tp_scatter(g);
  }
  int ls = p->layers / p->pp / g->chunks;
  for (int l = 0; l < ls; l++)
    layer_fwd(g, c * ls + l);
  module(g, NULL);
  if (to >= 0) {
    handoff(g, GT_STREAM_COMPUTE, GT_STREAM_P2P, EV_TO_P2P);
    host(g);
    gt_launch_p2p(g->j, g->r, GT_STREAM_P2P, GT_SEND, to, act_bytes(g), GT_GROUP_WORLD);
  } else { /* Megatron: the block's final norm, the output layer, the loss in GPTModel's forward */
    const kt ks = seq_shard(g);
    module(g, "GPTModel_0/TransformerBlock_0/FusedLayerNorm_%d", 2 * ls * g->chunks);
    kernel(g, K_NORM_F, elem_ns(&ks, 2.0 * ks.tokens * h * 2));
    module(g, "GPTModel_0/ColumnParallelLinear_0");
    if (p->sequence_parallel)
      tp_gather(g);
    kernel(g, K_GEMM_F, gemm_ns(&g->k, T, v / t, h));
    module(g, "GPTModel_0");
    kernel(g, K_XENT_F, elem_ns(&g->k, 2.0 * T * v / t * 4));
    module(g, NULL);
  }
}

/* Parameters of one layer on a rank: dense (attention, router) and the
 * local experts'. */
static double layer_dense_params(const gt_par_params *p)
{
  double h = p->hidden;
  return p->experts > 0 ? 4.0 * h * h / p->tp + h * p->experts : (4.0 * h * h + 2.0 * h * p->ffn) / p->tp;
}

static double layer_expert_params(const gt_par_params *p)
{
  return p->experts > 0 ? (double)p->experts / p->ep * 2.0 * p->hidden * p->moe_ffn / MAX(p->etp, 1) : 0.0;
}

/* The all-reduce of `params` bf16 gradients in group grp on the
 * data-parallel stream, after the compute stream's work so far. */
static void dp_reduce(const prog *g, int grp, double params)
{
  if (grp < 0 || params <= 0)
    return;
  handoff(g, GT_STREAM_COMPUTE, GT_STREAM_DP, EV_TO_DP);
  host(g);
  gt_launch_coll(g->j, g->r, GT_STREAM_DP, GT_ALL_REDUCE, (uint64_t)llround(params) * 2, grp);
}

/* Backward of one micro-batch on this stage (gradients travel on the
 * communication stream); in the step's last, each layer's gradients are
 * all-reduced as soon as they are final. */
static void bwd(const prog *g, int c, gboolean last)
{
  const gt_par_params *p = g->p;
  double T = g->k.tokens, h = p->hidden, v = p->vocab, t = p->tp;
  int from = from_rank(g, c), to = to_rank(g, c);
  if (to >= 0) {
    int st = g->chunks > 1 ? GT_STREAM_COMM_RECV : GT_STREAM_COMM;
    host(g);
    gt_launch_p2p(g->j, g->r, st, GT_RECV, to, act_bytes(g), GT_GROUP_WORLD);
    handoff(g, st, GT_STREAM_COMPUTE, EV_FROM_P2P);
  } else {
    kernel(g, K_XENT_B, elem_ns(&g->k, 2.0 * T * v / t * 4));
    regather(g);
    kernel(g, K_GEMM_D, gemm_ns(&g->k, T, h, v / t));
    regather_wait(g);
    if (p->sequence_parallel)
      wgrad_scatter(g, gemm_ns(&g->k, v / t, h, T));
    else
      kernel(g, K_GEMM_W, gemm_ns(&g->k, v / t, h, T));
    const kt ks = seq_shard(g);
    kernel(g, K_NORM_B, elem_ns(&ks, 4.0 * ks.tokens * h * 2));
  }
  for (int l = 0; l < p->layers / p->pp / g->chunks; l++) {
    layer_bwd(g);
    if (last && p->overlap_grad_reduce) {
      dp_reduce(g, g->dp_group, layer_dense_params(p));
      dp_reduce(g, g->edp_group, layer_expert_params(p));
    }
  }
  if (from >= 0) {
    handoff(g, GT_STREAM_COMPUTE, GT_STREAM_COMM, EV_TO_COMM);
    host(g);
    gt_launch_p2p(g->j, g->r, GT_STREAM_COMM, GT_SEND, from, act_bytes(g), GT_GROUP_WORLD);
  } else {
    if (p->patch_embed) {
      kernel(g, K_GEMM_W, gemm_ns(&g->k, h, h, T));
    } else {
      if (regathers(g)) /* the reduce-scatter's gradient */
        tp_gather(g);
      kernel(g, K_EMB_B, elem_ns(&g->k, 3.0 * T * h * 2));
    }
  }
}

/* Parameters on this rank: its layers' shards, the embedding on stage 0
 * and the LM head on the last stage (vocabulary-parallel). */
static double rank_params(const prog *g)
{
  const gt_par_params *p = g->p;
  double h = p->hidden, n = (double)p->layers / p->pp * (layer_dense_params(p) + layer_expert_params(p));
  if (g->prev < 0)
    n += (double)p->vocab * h / p->tp;
  if (g->next < 0)
    n += (double)p->vocab * h / p->tp;
  return n;
}

/* Virtual micro-batch k's chunk (forward or backward) and micro-batch
 * (gt_parallel.h); one chunk: k itself. */
static int v_chunk(const prog *g, int k, gboolean backward)
{
  int c = (k / g->p->pp) % g->chunks;
  return backward ? g->chunks - 1 - c : c;
}

static int v_mb(const prog *g, int k)
{
  return g->chunks == 1 ? k : (k / (g->p->pp * g->chunks)) * g->p->pp + k % g->p->pp;
}

/* The micro-batches: GPipe, 1F1B or interleaved 1F1B (the step's last
 * backward of each chunk reduces its gradients when they overlap). */
static void schedule(const prog *g)
{
  const gt_par_params *p = g->p;
  int m = p->mb * g->chunks, warm = p->sched == GT_SCHED_GPIPE ? m : MIN(p->pp - g->stage - 1, m);
  if (p->sched == GT_SCHED_INTERLEAVED)
    warm = MIN((p->pp - g->stage - 1) * 2 + (g->chunks - 1) * p->pp, m);
  for (int i = 0; i < warm; i++)
    fwd(g, v_chunk(g, i, FALSE));
  for (int i = 0; i < m - warm; i++) {
    fwd(g, v_chunk(g, warm + i, FALSE));
    bwd(g, v_chunk(g, i, TRUE), v_mb(g, i) == p->mb - 1);
  }
  for (int i = m - warm; i < m; i++)
    bwd(g, v_chunk(g, i, TRUE), v_mb(g, i) == p->mb - 1);
}

static void step(const prog *g, int k)
{
  const gt_par_params *p = g->p;
  gt_step_begin(g->j, g->r, k);
  gt_cpu(g->j, g->r, p->base.head_ns);
  schedule(g);
  for (int l = 0; !p->overlap_grad_reduce && l < p->layers / p->pp; l++) {
    dp_reduce(g, g->dp_group, layer_dense_params(p));
    dp_reduce(g, g->edp_group, layer_expert_params(p));
  }
  if (g->dp_group >= 0 || g->edp_group >= 0) { /* embedding and head; the optimizer waits for every reduction */
    double v = p->vocab * (double)p->hidden / p->tp;
    dp_reduce(g, g->dp_group, (g->prev < 0 ? v : 0) + (g->next < 0 ? v : 0));
    handoff(g, GT_STREAM_DP, GT_STREAM_COMPUTE, EV_FROM_DP);
  }
  /* Sequence parallelism: the norms' (and the router's) weights are
   * replicated over TP but see T / tp tokens, so their gradients are
   * all-reduced over the TP group (Megatron's finalize_model_grads,
   * _allreduce_layernorm_grads): two norms of weight and bias (4 h) per
   * layer, the final norm's on the last stage, bf16. */
  if (regathers(g)) {
    double n = p->layers / p->pp * (4.0 * p->hidden + (p->experts > 0 ? (double)p->hidden * p->experts : 0)) +
               (g->next < 0 ? 2.0 * p->hidden : 0);
    tp_coll(g, GT_ALL_REDUCE, (uint64_t)llround(n * 2));
  }
  /* Adam: fp32 master weights, two moments and the bf16 weights and
   * gradients: 16 bytes read and written per parameter. */
  kernel(g, K_ADAM, elem_ns(&g->k, 16.0 * rank_params(g)));
  handoff(g, GT_STREAM_COMPUTE, GT_STREAM_COMM, EV_STEP_END);
  host(g);
  gt_launch_coll(g->j, g->r, GT_STREAM_COMM, GT_ALL_REDUCE, 4096, g->world);
  gt_device_sync(g->j, g->r);
  gt_cpu(g->j, g->r, p->base.tail_ns);
  gt_step_end(g->j, g->r, k);
}

/* One group of the ranks r(d, s, c, i) = ((d * pp + s) * cp + c) * tp + i
 * over the index that `vary` selects (0: i, 1: s, 2: d within its EP
 * block, 3: d across EP blocks, 4: every d and c (the gradients' group),
 * 5: c), the others fixed at (d, s, c, i); its number is stored in
 * out[member][slot] (slot < 0: not stored).  No group for one rank. */
static void one_group(gt_job *j, const gt_par_params *p, const char *desc, int vary, const int at[4], int out[][5],
                      int slot)
{
  int mem[GT_MAX_RANKS];
  int d = at[0], s = at[1], c = at[2], i = at[3];
  int n = vary == 0 ? p->tp : vary == 1 ? p->pp : vary == 2 ? p->ep : vary == 3 ? p->dp / p->ep
        : vary == 4 ? p->dp * p->cp : p->cp;
  for (int k = 0; k < n; k++) {
    int dd = vary == 2 ? d / p->ep * p->ep + k : vary == 3 ? d % p->ep + k * p->ep : vary == 4 ? k / p->cp : d;
    int cc = vary == 4 ? k % p->cp : vary == 5 ? k : c;
    mem[k] = ((dd * p->pp + (vary == 1 ? k : s)) * p->cp + cc) * p->tp + (vary == 0 ? k : i);
  }
  if (n < 2)
    return;
  int grp = gt_job_add_group(j, desc, mem, n);
  for (int k = 0; slot >= 0 && k < n; k++)
    out[mem[k]][slot] = grp;
}

/* The TP groups (per d, s, c), PP (per d, c, i), DP x CP (per s, i), EP
 * (per s, i and block of ep consecutive d), expert-DP (per s, i and d mod
 * ep) and CP (per d, s, i). */
static void add_groups(gt_job *j, const gt_par_params *p, int out[][5])
{
  for (int r = 0; r < GT_MAX_RANKS; r++)
    for (int k = 0; k < 5; k++)
      out[r][k] = -1;
  for (int d = 0; d < p->dp; d++)
    for (int s = 0; s < p->pp; s++)
      for (int c = 0; c < p->cp; c++)
        one_group(j, p, "mesh_tp", 0, (const int[4]){d, s, c, 0}, out, 0);
  for (int d = 0; d < p->dp; d++)
    for (int c = 0; c < p->cp; c++)
      for (int i = 0; i < p->tp; i++)
        one_group(j, p, "mesh_pp", 1, (const int[4]){d, 0, c, i}, out, -1);
  for (int s = 0; s < p->pp; s++)
    for (int i = 0; i < p->tp; i++) {
      one_group(j, p, p->cp > 1 ? "mesh_dp_cp" : "mesh_dp", 4,
                (const int[4]){0, s, 0, i}, out, 1);
      for (int d = 0; p->experts > 0 && d < p->dp; d += p->ep)
        one_group(j, p, "mesh_ep", 2, (const int[4]){d, s, 0, i}, out, 2);
      for (int d = 0; p->experts > 0 && d < p->ep; d++)
        one_group(j, p, "mesh_expert_dp", 3, (const int[4]){d, s, 0, i}, out, 3);
    }
  for (int d = 0; p->cp > 1 && d < p->dp; d++)
    for (int s = 0; s < p->pp; s++)
      for (int i = 0; i < p->tp; i++)
        one_group(j, p, "mesh_cp", 5, (const int[4]){d, s, 0, i}, out, 4);
}

static gt_job *build(const gt_par_params *p, GError **error)
{
  const char *why = gt_par_check(p);
  if (why) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "gt_parallel tp%d pp%d mb%d: %s", p->tp, p->pp, p->mb, why);
    return NULL;
  }
  int n = p->tp * p->pp * p->dp * p->cp, sp = p->tp * p->cp; /* sp: rank distance between stages */
  gt_job *j = gt_job_new(&p->base, n);
  int groups[GT_MAX_RANKS][5]; /* per rank: tp, dp (x cp), ep, expert-dp, cp group (-1: none) */
  add_groups(j, p, groups);
  for (int r = 0; r < n; r++) {
    int s = (r / sp) % p->pp, c = (r / p->tp) % p->cp;
    prog g = {j, p, {p, (double)p->global_batch / p->dp / p->mb * p->seq / p->cp}, r, s, groups[r][0],
              GT_GROUP_WORLD, groups[r][1], groups[r][2], groups[r][3],
              p->cp > 1 ? r + (((c + 1) % p->cp) - c) * p->tp : -1, p->cp > 1 ? r + (((c + p->cp - 1) % p->cp) - c) * p->tp : -1,
              groups[r][4], s > 0 ? r - sp : -1, s + 1 < p->pp ? r + sp : -1, r - s * sp, r + (p->pp - 1 - s) * sp,
              p->sched == GT_SCHED_INTERLEAVED ? p->vpp : 1};
    for (int k = 1; k <= 3; k++)
      step(&g, k);
  }
  return j;
}

gboolean gt_par_run(const gt_par_params *p, const char *outdir, int64_t *step_ns, GError **error)
{
  gt_job *j = build(p, error);
  if (j == NULL)
    return FALSE;
  gboolean ok = gt_job_run(j, error);
  if (ok && outdir) {
    if (g_mkdir_with_parents(outdir, 0755) != 0) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "cannot create %s", outdir);
      ok = FALSE;
    } else {
      ok = gt_job_write(j, outdir, error);
    }
  }
  *step_ns = 0;
  for (int r = 0; ok && r < gt_job_ranks(j); r++) {
    int64_t b = 0, e = 0;
    if (gt_job_step(j, r, 2, &b, &e))
      *step_ns = MAX(*step_ns, e - b);
  }
  gt_job_free(j);
  return ok;
}

char *gt_par_card(const gt_par_params *p)
{
  double h = p->hidden, params = p->layers * (4.0 * h * h + 2.0 * h * p->ffn) + 2.0 * p->vocab * h;
  if (p->experts > 0)
    params = p->layers * (4.0 * h * h + h * p->experts + p->experts * 2.0 * h * p->moe_ffn) + 2.0 * p->vocab * h;
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "# gt_parallel: the ground-truth transformer job (regress/gt_parallel.h)\n"
                         "workload:\n"
                         "  model:\n"
                         "    phase: training\n"
                         "    precision: bf16\n"
                         "    hidden_size: %d\n", p->hidden);
  if (p->experts > 0)
    g_string_append_printf(s, "    moe_top_k: %d\n", p->top_k);
  g_string_append_printf(s, "    model_arch:\n"
                         "      num_layers: %d\n"
                         "      num_heads: %d\n"
                         "      head_dim: %d\n"
                         "      ffn_hidden_size: %d\n"
                         "      vocab_size: %d\n"
                         "      num_params: %.0f\n", p->layers, p->heads, p->hidden / p->heads, p->ffn, p->vocab, params);
  if (p->experts > 0)
    g_string_append_printf(s, "      num_experts: %d\n"
                           "      moe_ffn_hidden_size: %d\n", p->experts, p->moe_ffn);
  g_string_append_printf(s, "  data:\n"
                         "    batch_size: %d\n"
                         "    seq_len: %d\n"
                         "  hardware:\n"
                         "    xpu_spec:\n"
                         "      model: nvidia_h100\n"
                         "      total_count: %d\n"
                         "Model-executor:\n"
                         "  model_plan_parallelization:\n"
                         "    dp_replicate: %d\n"
                         "    tp: %d\n"
                         "    pp: %d\n"
                         "    ep: %d\n"
                         "    cp: %d\n"
                         "    micro_batches: %d\n"
                         "    sequence_parallel: %s\n"
                         "    overlap_grad_reduce: %s\n"
                         "    pp_transfers_on_tp_stream: gradients\n"
                         "    pipeline_schedule: %s\n", p->global_batch, p->seq, p->tp * p->pp * p->dp * p->cp, p->dp,
                         p->tp, p->pp, p->ep, p->cp, p->mb, p->sequence_parallel ? "true" : "false",
                         p->overlap_grad_reduce ? "true" : "false",
                         p->sched == GT_SCHED_GPIPE ? "gpipe" : p->sched == GT_SCHED_INTERLEAVED ? "interleaved_1f1b"
                                                                                                 : "1f1b");
  if (p->sched == GT_SCHED_INTERLEAVED)
    g_string_append_printf(s, "    vpp: %d\n", p->vpp);
  if (p->experts > 0) /* 1: the experts whole on every TP rank */
    g_string_append_printf(s, "    expert_tensor_parallel_size: %d\n", MAX(p->etp, 1));
  return g_string_free(s, FALSE);
}
