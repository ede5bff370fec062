/* et_repart.h: a traced transformer job re-partitioned (issue 32): new
 * tensor, pipeline and data-parallel degrees, micro-batch count and
 * pipeline schedule, built as a new workload from the model read out of
 * the trace (chakra/et_model.h).
 *
 * The new job has dp x pp x tp ranks, rank = (d * pp + s) * tp + i (TP
 * innermost, then the stages, DP outermost).  Rank (d, s, i) runs, per
 * micro-batch and in the schedule's order (GPipe: every forward, then
 * every backward; 1F1B: pp - s - 1 warm-up forwards, then one forward
 * and one backward alternately, then the remaining backwards), the
 * forward [receive the activations from stage s-1 | the embedding], its
 * num_layers / pp layers, [send to stage s+1 | the head], and the
 * backward [receive the gradient from s+1], the layers, [send to s-1 |
 * the embedding's backward]; interleaved 1F1B (Megatron's virtual
 * pipeline, vpp chunks of num_layers / (pp x vpp) layers per rank, chunk c
 * of stage s being virtual stage c x pp + s; stage pp - 1 sends chunk c's
 * output to stage 0's chunk c + 1): the virtual micro-batches k = 0 ..
 * mb x vpp - 1, forward k on chunk (k / pp) % vpp of micro-batch
 * (k / (pp vpp)) pp + k % pp, backward k on chunk vpp - 1 - (k / pp) % vpp,
 * with min(2 (pp - s - 1) + (vpp - 1) pp, mb vpp) warm-up forwards (the
 * embedding on virtual stage 0, the head on the last; needs pp >= 2
 * dividing mb, pp x vpp dividing the layers); with dp > 1, each layer's bf16 gradients
 * are all-reduced in the DP group as soon as the step's last backward of
 * the layer ends (overlapping the rest), the embedding's and head's after
 * the backward; then the step tail (the optimizer, the step's other collectives).
 *
 * Every kernel is the traced one rescaled by its class: a GEMM whose shape
 * is known by the roofline ratio max(F'/P, B'/W) / max(F/P, B/W) (F the
 * FLOPs, B the bytes of the three matrices, P the GPU's peak FLOP/s, W its
 * HBM bandwidth: a GEMM that becomes memory-bound loses efficiency), any
 * other GEMM and attention by their FLOPs (x tp/tp' x tokens'/tokens),
 * sharded elementwise kernels by their elements (the same factor),
 * replicated ones by tokens alone, the optimizer by the parameters per
 * rank; a kernel's first kernel_floor_ps (launch to first work and the
 * tail, which no shard shrinks) is not rescaled, and the idle measured
 * before each operation is kept.  The TP all-reduce carries tokens' x hidden x dtype bytes; the
 * activations and their gradients between stages the same.  Sends and
 * receives of one direction queue behind each other (one stream per
 * direction; interleaved: receives on a queue of their own, as Megatron
 * batches each receive with its send, else the wrap-around would
 * deadlock); the compute chain waits for the TP all-reduces.
 *
 * MoE (the card's num_experts; et_model.h): experts are split over EP
 * groups of ep consecutive data-parallel ranks (rank (d, s, i) is in EP
 * block d / ep), experts / ep per rank, replicated dp / ep times.  The
 * dispatch and combine all-to-alls (and their gradients) carry the
 * registry's MoE size, tokens x top-k x hidden x dtype per rank (the
 * traced size x tokens' / tokens), balanced over the new EP group, with
 * the traced two-hop mode (DeepEP internode) kept and its scale-out
 * deduplication min(1, nodes / top-k) recomputed for the new group when
 * the card gives count_per_node; the experts' kernels scale by the
 * rank's routed tokens (tokens x top-k: the same whatever the experts per
 * rank); with ep 1 the all-to-alls vanish.  With dp / ep > 1 each layer's
 * expert gradients (E / ep x 2 h f_e) are all-reduced over the expert's
 * replicas, like the dense ones over the DP group.
 *
 * Context parallelism (cp, Megatron's ring attention, cp_comm_type p2p):
 * rank = ((d * pp + s) * cp + c) * tp + i; each CP rank holds seq / cp
 * tokens of every sequence, so every token-proportional kernel, the TP
 * all-reduces and the activations between stages shrink by cp; a layer's
 * attention becomes cp steps, each the traced attention x tp / tp' x
 * tokens' / tokens x cp_traced / cp' (a cp'^2-th of the sequence's causal
 * work, load-balanced), step j + 1 waiting for the KV block (2 x tokens' x
 * hidden / tp' x dtype; backward: K, V and their gradients, twice that)
 * that step j sent to the next CP rank (c + 1 mod cp) and received from
 * the previous one while it computed.  Gradients are reduced over the
 * dp x cp ranks of a (stage, TP index).  Dense models only.
 *
 * Memory per GPU: weights and gradients (bf16, 2 + 2 bytes per parameter)
 * and Adam's fp32 master weights and moments (12 bytes), with the card's
 * ZeRO stage dividing the optimizer states (stage >= 1), the gradients
 * (>= 2) and the weights (3, FSDP) by the data-parallel degree (experts'
 * by their dp / ep replicas); activations of the micro-batches in flight
 * (GPipe: all; 1F1B: pp - s on stage s; interleaved: the warm-up's
 * chunk passes + 1, each of num_layers / (pp vpp) layers) per layer at Megatron's
 * s b h (10 + 24 / tp + 5 a s / (h tp)) bytes without recomputation,
 * s b h (10 + 24 / tp) with selective recomputation (attention's scores
 * recomputed), 2 s b h (the layer's input) with full recomputation plus
 * one layer's full set while it is recomputed.  Only the memory follows
 * ZeRO and recomputation: the step's kernels are the trace's (a traced
 * recomputation stays in the backward), the gradient reductions stay
 * all-reduces (ZeRO-1/2's reduce-scatter + all-gather move the same
 * bytes), and FSDP's weight all-gathers are not added.  The optimizer's
 * time scales with the parameters it updates on the rank.  A
 * configuration over the GPU's HBM is refused, with the figures.
 */
#ifndef WISP_ET_REPART_H
#define WISP_ET_REPART_H

#include "chakra/et_model.h"

G_BEGIN_DECLS

typedef struct {
  int tp, pp, dp, mb;          /* 0 = as traced */
  int ep;                      /* expert-parallel degree (divides dp); 0 = as traced */
  int mbs;                     /* sequences per micro-batch; 0 = global batch / dp / mb.  With mb also given the
                                  global batch becomes dp x mb x mbs */
  int batch;                   /* resolved global batch (sequences); set by the library, 0 in requests */
  int sched;                   /* et_sched; -1 = the card's, else 1f1b */
  int vpp;                     /* interleaved: layer chunks per rank; 0 = the card's, else 2 */
  int cp;                      /* context-parallel degree (ring attention); 0 = as traced */
} et_repart_request;

typedef struct {
  double params;               /* on the most loaded rank */
  double weights_bytes, act_bytes, total_bytes, hbm_bytes;
  int worst_stage;
  gboolean fits;
} et_repart_memory;

/* Memory of the most loaded rank of a configuration: O(pp). */
void et_repart_memory_of(const et_model_card *c, const et_repart_request *rq, et_repart_memory *out);

/* Whether a configuration is valid for the model (degrees divide the
 * layers, heads, hidden, ffn, vocabulary and batch); FALSE with a reason. */
gboolean et_repart_check(const et_model_card *c, const et_repart_request *rq, GError **error);

/* Builds the re-partitioned workload from the model m (read from a
 * traced workload named source); how gets "repartition: ..." lines (every
 * assumption).  NULL with an error when the configuration is invalid or
 * does not fit in memory (WISP_ERROR_UNSUPPORTED, with the figures).
 * O(new ranks x micro-batches x layers x layer operations). */
et_workload *et_repart_build(const char *source, const et_model *m, const et_model_card *c,
                             const et_repart_request *rq, GString *how, GError **error);

G_END_DECLS
#endif
