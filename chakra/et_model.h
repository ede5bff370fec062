/* et_model.h: the model read out of a traced transformer job (issue 32).
 *
 * What a re-partitioning needs from a trace is one layer's forward and
 * backward (its kernels in order, with their measured times, and its
 * tensor-parallel collectives), what the first and last pipeline stages
 * run around the layers (embedding, LM head and loss) and the per-step
 * tail (optimizer, step-closing collectives).  et_model_read finds them
 * in the traced graphs:
 *
 *   - the pipeline: the first-stage rank is rank 0; each stage's next one
 *     is where its first send goes, until a rank whose first send goes
 *     back (the last stage); the stage count must equal the card's pp;
 *     a rank 0 that sends nothing is one stage (pp 1: card pp must be 1),
 *     read as below with the first micro-batch's forward ending where
 *     the layers stop repeating, the head (LM head, loss, their
 *     backward) between the forward and backward layers;
 *   - MoE layers (card num_experts): the all-to-alls of the EP group are
 *     the dispatch and combine; the kernels between the two of a layer's
 *     forward (and of its backward) are the local experts' work;
 *   - the layer: on the first stage, the forward of the first micro-batch
 *     is its GPU operations (kernels, collectives in time order) before
 *     its first send; its last L_s = num_layers / pp chunks of equal
 *     length P (P as large as fits) must be identical kernel for kernel
 *     (names, collective types): that chunk is the layer's forward, what
 *     precedes it the embedding; the backward is found the same way in the
 *     operations after the first stage's last receive (its first L_s
 *     chunks); what follows is the embedding's backward (kernels the rank
 *     runs once per micro-batch) and the step tail (the others);
 *   - the head: on the last stage, the operations between its last receive
 *     and the next send are the layers' forward, the head (LM head, loss
 *     and their backward) and the layers' backward; the head's backward
 *     starts at its first kernel named bwd/backward/grad (head_bwd; none:
 *     the whole head is replayed with the forward);
 *     (names compare without their digits: "fwd_mb0_layer3" is
 *     "fwd_mb1_layer4"; data-parallel gradient reductions are left out);
 *   - roles: kernels are classed by name (GEMM: gemm/xmma/cutlass/
 *     cublas; attention: flash/fmha/attention/sdpa; elementwise otherwise,
 *     replicated across TP when named norm/embedding/indexSelect, sharded
 *     otherwise); a layer of four forward and eight backward GEMMs is
 *     Megatron's (QKV, projection, FC1, FC2; each data then weight
 *     gradient, in reverse), which gives every GEMM its shape; a head
 *     with three GEMMs is Megatron's vocabulary-parallel output layer
 *     (logits, their data and weight gradients); a GEMM's output tile is
 *     read from its name when it has one (cuBLAS tilesizeMxNxK, CUTLASS
 *     _MxN_), for the tile waves of et_model_gemm_s;
 *   - the kernel floor (the fixed time of a kernel that does not scale
 *     with its work: launch to first work, tail): with GEMM roles and no
 *     kernel_floor_us on the card, the least-squares line through the
 *     layer's twelve GEMMs, measured time against roofline time of their
 *     shapes; its intercept is the floor when the line fits (relative rms
 *     residual at most 2 %, intercept between 0 and the shortest GEMM,
 *     positive slope), else the card's default is kept and the reason
 *     printed.  Shape-dependent efficiency (tile quantisation) that is not
 *     the same fraction for all twelve shows as residual (tile waves are
 *     in the roofline time when the tile and SM count are known), so a
 *     trace whose GEMMs do not follow one efficiency falls back;
 *
 * Context parallelism (card cp > 1): the ring's sends and receives (of
 * a group with the cp dimension) are not the pipeline's and are left out
 * of the operations; a layer's cp consecutive attention kernels are its
 * ring steps, read as one attention op (ring = cp, the steps' mean time).
 *
 * Streams: when a TP collective on rank 0 directly follows a pipeline
 * transfer on its stream (its parent, or its parent through the idle
 * node between them), or a transfer follows a TP collective, and no
 * transfer of that direction overlaps a TP collective in measured time
 * (an event between two streams links them too, but two streams' work
 * overlaps; without measured times, as in a Chakra ET, never), the two
 * share one queue (tp_queue: the direction, activations or gradients);
 * the re-partitioned job keeps them in one FIFO.  Where the trace shows
 * no timed transfer (one stage, a Chakra ET) the card's
 * pp_transfers_on_tp_stream gives tp_queue (et_model_card.tp_stream).
 *
 * Collectives beside a kernel: a collective that ran beside the kernel
 * before or after it in every instance (et_mop.concurrent; Megatron's
 * sequence-parallel re-gather beside the data gradient's GEMM) is
 * replayed beside it; the idle before the next operation is measured
 * from the later end of the two.
 *
 * Data-parallel gradient reductions: when rank 0's first collective in a
 * data-parallel group starts after its last backward's layers, the
 * reductions are read as issued after the backward (dp_after), else as
 * overlapping it.
 *
 * Durations are the means over the instances found, and so is the idle
 * before each operation (from the end of the kernel or collective before
 * it: stream gaps, event hand-offs; sends and receives do not count).  Cost: O(operations
 * of the two ranks x log) plus O(n^2 / L_s) comparisons for the layer
 * period (n: operations in one micro-batch's pass).
 */
#ifndef WISP_ET_MODEL_H
#define WISP_ET_MODEL_H

#include "chakra/et_graph.h"
#include "chakra/et_scale.h"

G_BEGIN_DECLS

typedef enum { ET_SCHED_1F1B = 0, ET_SCHED_GPIPE, ET_SCHED_INTERLEAVED } et_sched;
const char *et_sched_name(et_sched s);

/* The card's model, layout and hardware, filled by the CLI (chakra sits
 * below config); 0 = absent. */
typedef struct {
  int layers, hidden, ffn, heads, seq, vocab, global_batch, dtype_bytes;
  int tp, pp, dp, mb;          /* the traced layout; mb = micro-batch count */
  int ep;                      /* the traced expert-parallel degree (1: none; divides dp) */
  int cp;                      /* the traced context-parallel degree (1: none): seq / cp tokens per rank */
  int sp;                      /* the card's sequence_parallel (1 true): Megatron's sequence parallelism, for the
                                  traced job and the new one alike */
  int grads_after;             /* the card's overlap_grad_reduce: 1 false (reductions after the backward),
                                  0 true, -1 absent (Megatron's overlap assumed when the trace has none) */
  int experts, top_k, moe_ffn; /* MoE: experts per layer, experts per token, expert FFN size (0: dense) */
  int etp;                     /* the card's expert_tensor_parallel_size (0: absent): 1, or the traced tp (> 1,
                                  with sequence parallelism: tied to tp, the new job's is its tp); others refused */
  int gpus_per_node;           /* xpu_spec.count_per_node (0: unknown): two-hop all-to-all deduplication */
  int zero;                    /* ZeRO stage 0..3 over the DP group (FSDP: 3): optimizer states, + gradients,
                                  + weights sharded */
  int recompute;               /* activation recomputation: 0 none, 1 selective (attention), 2 full (per layer) */
  int tp_stream;               /* the card's pp_transfers_on_tp_stream, for a trace that cannot show it: 0 absent,
                                  1 none, 2 activations, 3 gradients, 4 both (et_model.tp_queue) */
  int sched;                   /* et_sched, -1 = absent */
  int vpp;                     /* interleaved 1F1B: layer chunks per rank (0: absent) */
  const char *cp_comm;         /* the card's cp_comm_type when it is not Megatron's ring (p2p): all_gather,
                                  a2a or a2a+p2p (static); NULL: p2p or absent */
  double peak_flops, hbm_Bps, hbm_bytes; /* per GPU */
  int sms;                     /* streaming multiprocessors per GPU (0: unknown): GEMM tile waves */
  sim_time_ps kernel_floor_ps; /* a kernel's fixed time (launch to first work, tail), not rescaled */
  gboolean kernel_floor_given; /* the card states kernel_floor_us (else kernel_floor_ps is the default, used
                                  when the trace's GEMMs do not give one: et_model.kernel_floor_ps) */
  char *hw;                    /* the GPU's name, g_free */
  char *source;                /* the card's path, g_free */
  char *missing;               /* keys the card lacks, comma-separated, g_free (NULL: none) */
} et_model_card;
void et_model_card_clear(et_model_card *c);

typedef enum {
  ET_KC_GEMM = 0,
  ET_KC_ATTN,
  ET_KC_ELEM_SHARD,            /* elementwise over a TP shard */
  ET_KC_ELEM_REPL,             /* elementwise over the whole activation (norms, embedding) */
  ET_KC_TP_COLL,               /* the TP all-reduce of the activations */
  ET_KC_OTHER_COLL,            /* a collective in another group (kept as traced) */
  ET_KC_EP_COLL,               /* the MoE dispatch / combine all-to-all of the EP group */
} et_kclass;
const char *et_kclass_name(et_kclass c);

typedef struct {
  et_kclass cls;
  char *name;
  sim_time_ps dur_ps;          /* compute: mean measured duration */
  sim_time_ps gap_ps;          /* mean measured idle before it on the rank's chain (launch and
                                  stream gaps, event hand-offs), kept unscaled */
  double gemm_m, gemm_n, gemm_k; /* traced GEMM shape when known, else 0 */
  int gemm_shard_dim;          /* 1: N is sharded by tp, 2: K is, 3: M is (weight gradients), 0: unknown */
  int tile_m, tile_n;          /* GEMMs: the output tile the kernel's name gives (cuBLAS "tilesize128x128x64",
                                  CUTLASS "_128x256_"), 0: not named */
  uint8_t coll;                /* et_coll_type of collectives */
  uint64_t bytes;              /* collectives: traced size */
  uint32_t group;              /* other collectives: the traced group */
  gboolean expert;             /* a kernel between a layer's dispatch and combine: the local experts' work */
  int ring;                    /* attention traced as cp ring steps: this op stands for all of them (their
                                  mean duration), the next ring - 1 attention ops are skipped (0: one kernel) */
  uint8_t two_hop;             /* EP collectives: the traced et_comm.two_hop mode */
  gboolean tp_only;            /* a collective of a group spanning TP alone (not also PP, DP, ...) */
  int concurrent;              /* a collective that ran beside a kernel in every instance (Megatron's
                                  sequence-parallel re-gather beside the data gradient's GEMM): 1 the kernel
                                  before it (started before the collective, ended after its start), 2 the one
                                  after it (started before the collective ended); the operation after the pair
                                  waits for both.  0: none */
} et_mop;

typedef struct {
  et_mop *ops;
  int n;
} et_mseq;

typedef struct {
  et_mseq layer_fwd, layer_bwd, embed_fwd, embed_bwd, head, head_bwd, tail;
  int tp, pp, mb, layers_per_stage;
  double tokens_per_mb;        /* traced micro-batch tokens */
  sim_time_ps optimizer_ps;    /* the tail's elementwise time on rank 0 */
  sim_time_ps kernel_floor_ps; /* the fixed time per kernel re-partitioning keeps: the card's kernel_floor_us
                                  when given, else fitted from the layer's GEMMs when they fit a line, else
                                  the card's default (how says which) */
  double rank0_params;         /* parameters of traced rank 0 (card arithmetic) */
  int tp_queue;                /* bits 1 << k: rank 0's TP collectives share a stream (one FIFO) with its
                                  activation sends (k = 1), activation receives (2), gradient sends (3) or
                                  gradient receives (4) (traced stream order) */
  gboolean dp_after;           /* the traced DP gradient reductions start after the last backward's layers
                                  (FALSE: they overlap it, or none traced: Megatron's overlap assumed) */
  GString *how;                /* "model: ..." lines: what was identified and how */
} et_model;

/* Reads the model of w (its layout l, the card c).  Errors name what is
 * missing (a card key, a pipeline of one stage, no repeating layer).
 * Caller frees with et_model_clear. */
gboolean et_model_read(const et_workload *w, const et_layout *l, const et_model_card *c, et_model *out,
                       GError **error);
void et_model_clear(et_model *m);

/* A GEMM's time at the roofline, in seconds, for output M x N over K:
 * max(FLOPs / peak, bytes of the three bf16 matrices / HBM bandwidth),
 * where with the GPU's SM count (c->sms) and the tile o's name gives, the
 * FLOPs are those of whole waves: ceil(ceil(M / tm) ceil(N / tn) / sms)
 * x sms tiles of tm x tn x K (a partly filled last wave costs a full
 * one: small GEMMs lose efficiency).  O(1). */
double et_model_gemm_s(const et_model_card *c, const et_mop *o, double m, double n, double k);

/* Whether the layer's forward has an attention kernel (flash, fmha,
 * attention, sdpa): what re-partitioning the sequence (cp) rescales. */
gboolean et_model_has_attention(const et_model *m);

/* Parameters per rank of stage s of pp stages at tensor degree tp and
 * expert degree ep: layers' shards (dense: 4h^2 + 2hf per layer / tp;
 * MoE: 4h^2 / tp + h E (router) + E / ep x 2 h f_e / etp), plus the
 * vocabulary-parallel embedding on the first stage and the LM head on the
 * last (V h / tp); s = -1: the layers' alone. */
double et_model_rank_params(const et_model_card *c, int tp, int pp, int ep, int s);
/* One layer's parameters on a rank: dense (reduced over the DP group) and
 * experts' (over the expert-DP group of dp / ep replicas; / the expert
 * tensor-parallel degree, et_model_etp). */
double et_model_layer_dense_params(const et_model_card *c, int tp);
double et_model_layer_expert_params(const et_model_card *c, int tp, int ep);
/* The expert tensor-parallel degree of a job with tensor degree tp: tp
 * when the card's expert_tensor_parallel_size ties it to tp (> 1: it
 * equals the traced tp), else 1. */
int et_model_etp(const et_model_card *c, int tp);
/* Whether the card's expert_tensor_parallel_size is modelled: absent, 1,
 * or the traced tp under sequence parallelism. */
gboolean et_model_etp_modelled(const et_model_card *c);

G_END_DECLS
#endif
