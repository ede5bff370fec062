/* gt_parallel.h: the ground truth of one transformer job under several
 * parallel configurations (issue 32), on gt_model's machine and network.
 *
 * The job: a decoder-only transformer (layers, hidden, ffn, heads,
 * sequence, vocabulary), a global batch of `global_batch` sequences, data
 * parallel degree 1, split over tp x pp ranks (rank = stage * tp + tp
 * index: TP innermost), trained with Megatron's layout: per layer a
 * column-parallel QKV GEMM, flash attention over heads / tp, a
 * row-parallel projection, a TP all-reduce, a column-parallel FC1, GeLU,
 * a row-parallel FC2 and a second all-reduce; layer norms are replicated
 * (not sharded); the backward pass mirrors it with data- and weight-
 * gradient GEMMs and two all-reduces.  Stage 0 runs the embedding, the
 * last stage the LM head and the loss, every rank an Adam step over its
 * parameters.  Micro-batches (count `mb`, size global_batch / mb) run in
 * a GPipe or 1F1B schedule with activations and their gradients sent
 * between stages (activations on the point-to-point stream, gradients on
 * the communication stream, so the two directions never queue behind
 * each other, as Megatron's batched send/recv).
 *
 * Kernel times are this file's own model of a GPU (not wisp's): a GEMM
 * M x N x K runs its 128x128 output tiles in waves over `sms`
 * multiprocessors at `gemm_eff` of the peak, so a partial last wave costs
 * a whole wave; flash attention runs at `attn_eff` of the peak (causal:
 * half the S^2 work); elementwise kernels move their bytes at `hbm_eff` of
 * the HBM bandwidth; every kernel is the larger of its compute and memory
 * times plus a fixed `kernel_fixed_ns`.  Communication is gt_model's ring
 * alpha-beta.  The traces are gt_job_write's.
 */
#ifndef WISP_GT_PARALLEL_H
#define WISP_GT_PARALLEL_H

#include "regress/gt_model.h"

G_BEGIN_DECLS

typedef enum { GT_SCHED_GPIPE = 0, GT_SCHED_1F1B, GT_SCHED_INTERLEAVED } gt_sched;

typedef struct {
  int tp, pp, mb;             /* tensor, pipeline degree; micro-batch count */
  gt_sched sched;
  /* Interleaved 1F1B (Megatron's virtual pipeline): each rank holds `vpp`
   * chunks of layers / (pp x vpp) layers, chunk c of stage s being
   * virtual stage c x pp + s (stage pp - 1 sends chunk c's output to stage
   * 0's chunk c + 1).  Rank s runs the virtual micro-batches k = 0 ..
   * mb x vpp - 1 (forward k: chunk (k / pp) % vpp, micro-batch
   * (k / (pp vpp)) pp + k % pp; backward k: chunk vpp - 1 - (k / pp) %
   * vpp) with min((pp - s - 1) x 2 + (vpp - 1) x pp, mb x vpp) warm-up
   * forwards, then one forward and one backward alternately, then the
   * remaining backwards.  Needs pp >= 2 and pp dividing mb. */
  int vpp;
  int dp;                     /* data-parallel degree (1): rank = ((d * pp + s) * cp + c) * tp + i */
  /* Context parallelism (Megatron's ring attention, cp_comm_type p2p):
   * each of `cp` ranks holds seq / cp tokens of every sequence (every
   * token-proportional kernel and the TP all-reduces shrink by cp); a
   * layer's attention runs in cp steps, step j attending the local queries
   * to the KV block that arrived j hops around the CP ring (causal,
   * load-balanced: each step a cp^2-th of the whole sequence's attention
   * work), the next block's K and V (2 x seq / cp x b x hidden / tp bf16)
   * sent to the next CP rank and received from the previous one while the
   * step computes; the backward the same with K, V and their gradients
   * (twice the bytes).  Gradients are reduced over the dp x cp ranks.
   * With pp > 1 the ring's sends share the stage sends' stream (1F1B and
   * GPipe; not tested interleaved).  Needs no experts, cp dividing seq. */
  int cp;
  /* Mixture of experts (experts 0: a dense MLP).  The MLP of every layer
   * is `experts` experts (FC1 h x moe_ffn, GeLU, FC2 moe_ffn x h), each
   * token routed to top_k of them by a router GEMM (T x experts x h);
   * experts are split over EP groups of `ep` consecutive data-parallel
   * ranks (ep divides dp; tp must be 1), experts / ep per rank, each
   * replicated dp / ep times.  A layer permutes its tokens, sends them to
   * their experts' ranks (dispatch: an all_to_all_single of T x top_k x h
   * bf16 in the EP group, balanced routing), runs the local experts as
   * grouped GEMMs (every expert's tiles in one kernel, T x top_k x ep /
   * experts tokens each), and sends the results back (combine, the same
   * size); the backward mirrors it. */
  int experts, top_k, moe_ffn, ep;
  /* Megatron's sequence parallelism (with tp > 1): each TP rank holds
   * T / tp tokens between the blocks, so the norms (and a MoE block:
   * router, permutation, dispatch and combine of T / tp x top_k x h,
   * experts, unpermutation) see T / tp tokens; a block's TP all-reduce
   * becomes a reduce-scatter (T x h in) and its first GEMM waits for an
   * all-gather of the T / tp x h shards (in the backward the other way
   * round); with sp_regather also Megatron's weight-gradient re-gather,
   * the embedding's reduce-scatter and the norms' gradient all-reduce;
   * the LM head's GEMM waits for an all-gather; a MoE block has no TP
   * collective (the experts are whole on every TP rank: expert tensor
   * parallelism 1, EP groups over the data-parallel ranks of one TP
   * index).  Needed for MoE with tp > 1. */
  gboolean sequence_parallel;
  /* Under sequence_parallel with tp > 1, what Megatron adds (from
   * NVIDIA/Megatron-LM megatron/core/tensor_parallel/layers.py and
   * distributed/finalize_model_grads.py): each column-parallel linear's
   * (QKV, FC1, the LM head) backward all-gathers its T / tp x h input
   * again for the weight gradient, on the communication stream while the
   * data gradient's GEMM runs, the weight gradient's GEMM waiting for it,
   * and the reduce-scatter of the input's gradient beside the weight
   * gradient's GEMM (what follows waits for both);
   * the token embedding's output is reduce-scattered to the sequence
   * shards (its gradient all-gathered before the embedding's backward);
   * the norms' (and a MoE router's) replicated weights have their
   * gradients all-reduced over TP before the optimizer.  FALSE: none. */
  gboolean sp_regather;
  /* Expert tensor parallelism (Megatron's expert_tensor_parallel_size):
   * 1 (or 0) whole experts on every TP rank; tp (needs sequence
   * parallelism): each expert's FFN split over the TP group, the tokens a
   * rank received in the dispatch all-gathered over the TP group before
   * the experts and their outputs reduce-scattered back before the
   * combine (the backward mirrored); the experts' weights per rank / tp.
   * Other values are refused (gt_par_check). */
  int etp;
  /* TRUE (gt_par_init): gradient reductions overlap the last backward
   * (below); FALSE: all of them are issued after the step's backward, in
   * the same order.  gt_model's network has no link contention (each
   * collective takes its closed form whatever else is in flight), so the
   * MoE job (gt_par_init_moe) does not overlap: no two collectives of a
   * rank run at once, and the truth does not depend on that gap. */
  gboolean overlap_grad_reduce;
  /* Module annotations in the traces (PyTorch's with_modules, Megatron's
   * names): 0 none; 1 python_function "nn.Module: X" ranges around each
   * module's forward launches (GPTModel_0 / LanguageModelEmbedding_0,
   * TransformerBlock_0 / TransformerLayer_i / SelfAttention_i, MLP_i or
   * MoELayer_i, the final norm, ColumnParallelLinear_0; the backward runs
   * outside them, as autograd's); 2 the same with two layers under each
   * TransformerLayer instance (annotations that disagree with the job). */
  int annotate;
  /* A linear patch embedding (a vision model's) instead of the token
   * lookup: one GEMM, T x h over h, with the layers' GEMM kernel, and its
   * weight gradient in the backward; the kernel pattern alone then cannot
   * tell where the first layer starts (it repeats the layer's last GEMM). */
  gboolean patch_embed;
  /* The model. */
  int layers, hidden, ffn, heads, seq, vocab, global_batch;
  /* The GPU. */
  double peak_flops;          /* dense bf16 FLOP/s */
  double hbm_Bps;
  int sms;
  double gemm_eff, attn_eff, hbm_eff;
  int64_t kernel_fixed_ns;
  /* The machine and network (gt_model's fields: alpha, beta, launch costs). */
  gt_params base;
} gt_par_params;

/* With dp > 1, each layer's gradients are all-reduced on a data-parallel
 * stream (FIFO) as soon as the step's last backward of the layer ends (dense
 * weights over the dp ranks of the stage and TP index; experts over the
 * dp / ep replicas of each expert), the embedding's and head's after the
 * backward; the optimizer waits for all of them. */

/* Defaults: 16 layers, hidden 4096, ffn 16384, 32 heads, sequence 2048,
 * vocabulary 32000, global batch 8; an H100-like GPU (989 TFLOP/s, 3.35
 * TB/s, 132 SMs); gt_model's machine with 2 us of host work per launch;
 * TP4 x PP2, 4 micro-batches, 1F1B. */
void gt_par_init(gt_par_params *p);
/* The MoE job of the EP examples: gt_par_init's model and machine with 8
 * layers, 16 experts of ffn 4096, top-2, dp 8 (tp 1, pp 1), ep 4, 2
 * micro-batches of one sequence per rank (global batch 16). */
void gt_par_init_moe(gt_par_params *p);
/* NULL when usable, else a static reason (ranks > GT_MAX_RANKS, degrees
 * that do not divide the model, ...). */
const char *gt_par_check(const gt_par_params *p);
/* Builds, runs and (outdir non-NULL) writes the traces; *step_ns is the
 * true step time (ProfilerStep#2, max over ranks). */
gboolean gt_par_run(const gt_par_params *p, const char *outdir, int64_t *step_ns, GError **error);
/* The job's CCL-Bench workload card (YAML text, g_free); it states
 * pp_transfers_on_tp_stream: gradients, since bwd() sends and receives
 * the gradients on GT_STREAM_COMM, the TP collectives' stream. */
char *gt_par_card(const gt_par_params *p);

G_END_DECLS
#endif
