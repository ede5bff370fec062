/* et_repart.c: building a re-partitioned transformer job from the model
 * read out of its trace (see et_repart.h for the rules). */
#include "config.h"
#include "chakra/et_repart.h"

#include <math.h>
#include <string.h>

/* The request with every 0 resolved to the traced value. */
static et_repart_request resolved(const et_model_card *c, const et_repart_request *rq)
{
  et_repart_request r = *rq;
  r.tp = r.tp ? r.tp : c->tp;
  r.pp = r.pp ? r.pp : c->pp;
  r.dp = r.dp ? r.dp : c->dp;
  r.ep = r.ep ? r.ep : MAX(c->ep, 1);
  r.cp = r.cp ? r.cp : MAX(c->cp, 1);
  if (r.batch == 0 && r.mbs > 0 && r.mb == 0) { /* the count from the size */
    r.mb = MAX(c->global_batch / MAX(r.dp * r.mbs, 1), 1);
    r.batch = c->global_batch;
  } else if (r.batch == 0) {
    r.mb = r.mb ? r.mb : c->mb;
    r.batch = r.mbs > 0 ? r.dp * r.mb * r.mbs : c->global_batch;
  }
  if (r.sched < 0)
    r.sched = c->sched >= 0 ? c->sched : ET_SCHED_1F1B;
  if (r.sched == ET_SCHED_INTERLEAVED && r.vpp == 0)
    r.vpp = c->vpp > 0 ? c->vpp : 2;
  if (r.sched != ET_SCHED_INTERLEAVED)
    r.vpp = 1;
  return r;
}

/* Why a card's context parallelism other than Megatron's ring is refused
 * (cp_comm: all_gather, a2a or a2a+p2p). */
static const char *cp_comm_why(const char *cp_comm)
{
  if (strcmp(cp_comm, "all_gather") == 0)
    return "context parallelism is modelled as Megatron's ring attention (cp_comm_type p2p: KV blocks passed around "
           "the CP ring, overlapping the attention steps); the card's cp_comm_type all_gather (K and V all-gathered "
           "over the CP group before attention, Llama 3's) is not modelled";
  if (strcmp(cp_comm, "a2a") == 0)
    return "context parallelism is modelled as Megatron's ring attention (cp_comm_type p2p: KV blocks passed around "
           "the CP ring, overlapping the attention steps); the card's cp_comm_type a2a (DeepSpeed-Ulysses: "
           "all-to-alls that trade the sequence split for a head split around attention) is not modelled";
  return "context parallelism is modelled as Megatron's ring attention (cp_comm_type p2p: KV blocks passed around the "
         "CP ring, overlapping the attention steps); the card's cp_comm_type a2a+p2p (Ulysses all-to-alls inside, a "
         "ring across) is not modelled";
}

gboolean et_repart_check(const et_model_card *c, const et_repart_request *rq0, GError **error)
{
  et_repart_request rq = resolved(c, rq0);
  int f = c->ffn > 0 ? c->ffn : 4 * c->hidden;
  const char *why = NULL;
  if (c->layers % rq.pp)
    why = "pp must divide num_layers";
  else if (c->heads % rq.tp || c->hidden % rq.tp || f % rq.tp || c->vocab % rq.tp)
    why = "tp must divide the heads, hidden size, ffn size and vocabulary";
  else if (rq.batch % (rq.dp * rq.mb) || (rq.mbs > 0 && rq.batch != rq.dp * rq.mb * rq.mbs))
    why = rq.mbs > 0 ? "dp x mbs must divide the global batch (batch_size); give mb= as well for a new global "
                       "batch of dp x mb x mbs sequences"
                     : "dp x mb must divide the global batch (batch_size)";
  else if (rq.cp > 1 && (c->seq % rq.cp || c->experts > 0))
    why = "cp must divide seq_len, and context parallelism is modelled for dense models only (no num_experts)";
  else if ((rq.cp > 1 || c->cp > 1) && c->cp_comm)
    why = cp_comm_why(c->cp_comm);
  else if (!et_model_etp_modelled(c))
    why = "the card's expert_tensor_parallel_size is neither 1 nor the traced tp under sequence parallelism "
          "(Megatron's expert tensor parallelism with its own degree: each expert's FFN sharded over an expert-TP "
          "group other than the TP group, with Megatron's expert rank layout, TP x EP x DP over the same ranks), "
          "which is not modelled: wisp re-partitions MoE with whole experts per rank (1) or with the experts split "
          "over the TP group (expert_tensor_parallel_size = tp, sequence_parallel: true); missing are the "
          "expert-TP group apart from TP, its collectives and rank layout, and a ground truth to check them";
  else if (c->tp == 1 && rq.tp > 1)
    why = c->sp ? "the card says sequence_parallel, but the trace has tp 1: it shows no TP all-gathers and "
                  "reduce-scatters to re-size (trace a configuration with tp > 1)"
                : "the trace has tp 1: it shows no TP all-reduces (where a layer has them, on which stream) to re-size "
                  "for tp > 1 (trace a configuration with tp > 1)";
  else if (rq.ep > 1 && c->experts == 0)
    why = "ep > 1 needs a MoE model (the card's model_arch.num_experts)";
  else if (rq.dp % rq.ep || (c->experts > 0 && c->experts % rq.ep))
    why = "ep must divide dp (experts are split over data-parallel ranks) and the experts";
  else if (rq.sched == ET_SCHED_INTERLEAVED && (rq.vpp < 2 || rq.pp < 2 || rq.mb % rq.pp || c->layers % (rq.pp * rq.vpp)))
    why = "interleaved 1F1B needs vpp >= 2, pp >= 2 dividing the micro-batches, and pp x vpp dividing num_layers";
  if (why)
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "tp %d pp %d dp %d ep %d mb %d: %s (%d layers, %d heads, "
                "hidden %d, ffn %d, vocabulary %d, batch %d, %d experts)", rq.tp, rq.pp, rq.dp, rq.ep, rq.mb, why,
                c->layers, c->heads, c->hidden, f, c->vocab, rq.batch, c->experts);
  return why == NULL;
}

/* Bytes per parameter of the dense and the experts' weights, gradients
 * and Adam states on a rank under the card's ZeRO stage. */
static double state_bytes(const et_model_card *c, int dp, int ep, gboolean expert)
{
  double n = expert ? MAX(dp / MAX(ep, 1), 1) : dp;
  return 2.0 / (c->zero >= 3 ? n : 1) + 2.0 / (c->zero >= 2 ? n : 1) + 12.0 / (c->zero >= 1 ? n : 1);
}

/* The parameters whose optimizer step a rank of stage st runs. */
static double opt_params(const et_model_card *c, int tp, int pp, int dp, int ep, int st)
{
  double ex = (double)c->layers / pp * et_model_layer_expert_params(c, tp, ep);
  double de = et_model_rank_params(c, tp, pp, ep, st) - ex;
  if (c->zero < 1)
    return de + ex;
  return de / dp + ex / MAX(dp / MAX(ep, 1), 1);
}

void et_repart_memory_of(const et_model_card *c, const et_repart_request *rq0, et_repart_memory *out)
{
  et_repart_request rq = resolved(c, rq0);
  memset(out, 0, sizeof *out);
  double b = (double)rq.batch / rq.dp / rq.mb, s = (double)c->seq / rq.cp, h = c->hidden, a = c->heads, t = rq.tp;
  double full = s * b * h * (10.0 + 24.0 / t + 5.0 * a * s / (h * t));
  double per_layer = c->recompute == 2 ? 2.0 * s * b * h : c->recompute == 1 ? s * b * h * (10.0 + 24.0 / t) : full;
  for (int st = 0; st < rq.pp; st++) {
    double params = et_model_rank_params(c, rq.tp, rq.pp, rq.ep, st);
    double ex = (double)c->layers / rq.pp * et_model_layer_expert_params(c, rq.tp, rq.ep);
    int in_flight = rq.sched == ET_SCHED_GPIPE ? rq.mb : MIN(rq.pp - st, rq.mb);
    if (rq.sched == ET_SCHED_INTERLEAVED) /* chunk passes, each of layers / (pp vpp) layers */
      in_flight = MIN(2 * (rq.pp - st - 1) + (rq.vpp - 1) * rq.pp + 1, rq.mb * rq.vpp);
    double act = in_flight * ((double)c->layers / rq.pp / rq.vpp) * per_layer + (c->recompute == 2 ? full : 0.0);
    double w = (params - ex) * state_bytes(c, rq.dp, rq.ep, FALSE) + ex * state_bytes(c, rq.dp, rq.ep, TRUE);
    if (w + act > out->total_bytes) {
      out->params = params;
      out->weights_bytes = w;
      out->act_bytes = act;
      out->total_bytes = w + act;
      out->worst_stage = st;
    }
  }
  out->hbm_bytes = c->hbm_bytes;
  out->fits = c->hbm_bytes <= 0 || out->total_bytes <= c->hbm_bytes;
}

/* ---- one rank's graph ---- */

typedef struct {
  const et_model *m;
  const et_model_card *c;
  et_repart_request rq;
  double shard, tokens;        /* tp / tp', tokens' / tokens */
  double seq_shard;            /* the sequence being emitted: tp / tp' under sequence parallelism (tokens per rank
                                  of norms, experts, dispatch and combine), else 1 */
  et_builder *b;
  uint64_t next_id, chain, q_act, q_grad, q_dp;
  uint64_t q_act_recv, q_grad_recv; /* interleaved: receives queue apart from sends (batched p2p) */
  uint64_t q_cp_send, q_cp_recv;    /* the CP ring's sends and receives */
  int cp_next, cp_prev, cp_tag;
  int rank, stage, prev, next;
  int first, last;             /* ranks of stage 0 and pp - 1 (same d, i): interleaving's wrap-around */
  char tp_pg[48], dp_pg[48], ep_pg[48], edp_pg[48];
  GArray *dp_ids;              /* the gradient all-reduces in flight (uint64_t ids) */
} rb;

static uint64_t node_flags(rb *g, et_node_type type, const char *name, sim_time_ps dur, uint64_t dep1,
                           uint64_t dep2, uint8_t flags)
{
  uint64_t id = ++g->next_id;
  uint32_t n = et_builder_add_node(g->b, id, type, name, dur, flags);
  if (dep1)
    et_builder_add_dep(g->b, n, dep1, TRUE, TRUE);
  if (dep2 && dep2 != dep1)
    et_builder_add_dep(g->b, n, dep2, TRUE, TRUE);
  return id;
}

static uint64_t node(rb *g, et_node_type type, const char *name, sim_time_ps dur, uint64_t dep1, uint64_t dep2)
{
  return node_flags(g, type, name, dur, dep1, dep2, 0);
}

/* The measured idle before a traced operation, as a delay on the chain. */
static void gap(rb *g, const et_mop *o)
{
  if (o->gap_ps > 0)
    g->chain = node_flags(g, ET_NODE_COMP, "gap", o->gap_ps, g->chain, 0, ET_FLAG_DELAY);
}

/* A traced kernel's time in the new configuration: its fixed floor, plus
 * the rest rescaled. */
static sim_time_ps new_dur(const rb *g, const et_mop *o)
{
  double f;
  if (o->expert) {
    f = g->tokens * g->seq_shard; /* the rank's routed token copies: tokens x top-k, whatever the experts per rank */
  } else if (o->cls == ET_KC_GEMM && o->gemm_shard_dim) {
    double m = o->gemm_m, n = o->gemm_n, k = o->gemm_k, m2 = m, n2 = n, k2 = k;
    if (o->gemm_shard_dim == 1)
      n2 *= g->shard, m2 *= g->tokens;
    else if (o->gemm_shard_dim == 2)
      k2 *= g->shard, m2 *= g->tokens;
    else
      m2 *= g->shard, k2 *= g->tokens;
    f = et_model_gemm_s(g->c, o, m2, n2, k2) / et_model_gemm_s(g->c, o, m, n, k);
  } else if (o->cls == ET_KC_ELEM_REPL) {
    f = g->tokens * g->seq_shard;
  } else {
    f = g->shard * g->tokens;
  }
  sim_time_ps floor = MIN(o->dur_ps, g->m->kernel_floor_ps);
  return floor + (sim_time_ps)llround((double)(o->dur_ps - floor) * f);
}

static void coll_hop(rb *g, const char *name, et_coll_type type, uint64_t bytes, const char *pg, uint8_t two_hop)
{
  g->chain = node(g, ET_NODE_COMM_COLL, name, 0, g->chain, 0);
  et_comm cm = {.bytes = bytes, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = -1, .dst = -1, .tag = -1,
                .root = -1, .coll = type, .two_hop = two_hop, .two_hop_ppm = 1000000u};
  /* The registry's two-hop deduplication (kt_commreg_two_hop): a token's
   * top-k copies reach min(k, nodes) distinct nodes of the EP group. */
  int gpn = g->c->gpus_per_node, k = g->c->top_k;
  if (two_hop && gpn > 0 && g->rq.ep % gpn == 0 && k > 0 && g->rq.ep / gpn < k)
    cm.two_hop_ppm = (uint32_t)((g->rq.ep / gpn * 1000000 + k / 2) / k);
  et_builder_set_comm(g->b, (uint32_t)(g->chain - 1), &cm, pg, NULL, 0);
}

static void coll(rb *g, const char *name, et_coll_type type, uint64_t bytes, const char *pg)
{
  coll_hop(g, name, type, bytes, pg, 0);
}

/* One send or receive of the CP ring (tags from 3,000,000 in issue
 * order, the same on every member of the ring). */
static uint64_t ring_p2p(rb *g, gboolean send, uint64_t bytes)
{
  uint64_t *q = send ? &g->q_cp_send : &g->q_cp_recv;
  uint64_t id = node(g, send ? ET_NODE_COMM_SEND : ET_NODE_COMM_RECV, send ? "cp_send_kv" : "cp_recv_kv", 0, *q,
                     send ? g->chain : 0);
  et_comm cm = {.bytes = bytes, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = send ? g->rank : g->cp_prev,
                .dst = send ? g->cp_next : g->rank, .tag = 3000000 + g->cp_tag / 2, .root = -1, .coll = ET_COLL_NONE};
  g->cp_tag++;
  et_builder_set_comm(g->b, (uint32_t)(id - 1), &cm, NULL, NULL, 0);
  *q = id;
  return id;
}

/* The traced attention o (one kernel, or o->ring steps of a traced ring)
 * as the new configuration's: one kernel at cp 1, else cp ring steps
 * (et_repart.h), the KV exchange overlapping each step but the last. */
static void attention(rb *g, const et_mop *o, gboolean backward)
{
  int cp = g->rq.cp, c0 = MAX(o->ring, 1);
  double f = g->shard * g->tokens * c0 / cp;
  sim_time_ps floor = MIN(o->dur_ps, g->m->kernel_floor_ps);
  sim_time_ps dur = floor + (sim_time_ps)llround((double)(o->dur_ps - floor) * f);
  uint64_t kv = (uint64_t)llround(2.0 * g->m->tokens_per_mb * g->tokens * g->c->hidden / g->rq.tp *
                                  g->c->dtype_bytes * (backward ? 2 : 1));
  for (int j = 0; j < cp; j++) {
    uint64_t recv = 0;
    if (j + 1 < cp) {
      ring_p2p(g, TRUE, kv);
      recv = ring_p2p(g, FALSE, kv);
    }
    g->chain = node(g, ET_NODE_COMP, o->name, dur, g->chain, 0);
    if (recv)
      g->chain = node(g, ET_NODE_COMP, "wait_kv", 0, g->chain, recv);
  }
}

/* The TP collective just added (the chain's head) joins the gradient
 * queue (and / or the activation queue) when the trace showed it on one
 * stream with that direction's sends or receives (et_model.tp_queue): it
 * starts after the queue's last transfer, and the queue's next one after
 * it.  The queue holds what et_repart.h says (1F1B: both sends and
 * receives of the direction; interleaved: its sends). */
static void tp_queue(rb *g)
{
  int t = g->m->tp_queue;
  uint64_t *qs[2] = {(t & (8 | 16)) ? &g->q_grad : NULL, (t & (2 | 4)) ? &g->q_act : NULL};
  for (int k = 0; k < 2; k++)
    if (qs[k]) {
      if (*qs[k])
        et_builder_add_dep(g->b, (uint32_t)(g->chain - 1), *qs[k], TRUE, TRUE);
      *qs[k] = g->chain;
    }
}

/* The median idle before a compute kernel that follows a compute kernel
 * in q (0: none): how the sequence's kernels follow each other with no
 * collective between them.  O(n^2) for n operations (a layer's handful). */
static sim_time_ps kernel_to_kernel_gap(const et_mseq *q)
{
  sim_time_ps v[64];
  int n = 0;
  for (int i = 1; i < q->n && n < (int)G_N_ELEMENTS(v); i++)
    if (q->ops[i].cls <= ET_KC_ELEM_REPL && q->ops[i - 1].cls <= ET_KC_ELEM_REPL)
      v[n++] = q->ops[i].gap_ps;
  for (int i = 1; i < n; i++)
    for (int k = i; k > 0 && v[k - 1] > v[k]; k--) {
      sim_time_ps t = v[k];
      v[k] = v[k - 1];
      v[k - 1] = t;
    }
  return n ? v[n / 2] : 0;
}

static void emit(rb *g, const et_mseq *q)
{
  /* A collective that vanishes (tp 1, ep 1) takes the idle measured after
   * it with it (the hand-off back from its stream): the next kernel
   * follows the one before as q's kernels follow each other. */
  gboolean dropped = FALSE;
  sim_time_ps k2k = -1;
  uint64_t last_in = 0; /* the chain before the last kernel emitted (0: the last op was none) */
  uint64_t beside = 0;  /* a collective the next kernel runs beside (et_mop.concurrent 2): joined after it */
  /* Sequence parallelism: every sequence but the embedding's holds tokens / tp per rank. */
  g->seq_shard = g->c->sp && q != &g->m->embed_fwd && q != &g->m->embed_bwd ? g->shard : 1.0;
  for (int i = 0; i < q->n; i++) {
    const et_mop *o = &q->ops[i];
    gboolean keep = (o->cls != ET_KC_TP_COLL || g->rq.tp > 1) && (o->cls != ET_KC_EP_COLL || g->rq.ep > 1);
    if (keep && dropped && o->cls <= ET_KC_ELEM_REPL) {
      if (k2k < 0)
        k2k = kernel_to_kernel_gap(q);
      et_mop follow = *o;
      follow.gap_ps = MIN(o->gap_ps, k2k);
      gap(g, &follow);
    } else if (keep) {
      gap(g, o);
    }
    dropped = !keep;
    if (o->cls == ET_KC_ATTN && (o->ring > 1 || g->rq.cp > 1)) {
      attention(g, o, q == &g->m->layer_bwd);
      i += MAX(o->ring, 1) - 1; /* the traced ring's other steps */
    } else if (o->cls == ET_KC_EP_COLL) { /* dispatch / combine: tokens x top-k x hidden x dtype, balanced */
      if (g->rq.ep > 1)
        coll_hop(g, o->name, ET_COLL_ALL_TO_ALL, (uint64_t)llround((double)o->bytes * g->tokens * g->seq_shard),
                 g->ep_pg, o->two_hop);
    } else if (o->cls == ET_KC_TP_COLL) {
      if (g->rq.tp > 1) {
        /* An all-gather's size is its per-rank shard (T / tp x h: also x tp / tp'), the others' the whole.
         * A concurrent one starts with the kernel before it, and what follows waits for both. */
        double f = g->tokens * (o->coll == ET_COLL_ALL_GATHER ? g->shard : 1.0);
        uint64_t after = g->chain;
        if (o->concurrent == 1 && last_in)
          g->chain = last_in;
        coll(g, o->name, (et_coll_type)o->coll, (uint64_t)llround((double)o->bytes * f), g->tp_pg);
        tp_queue(g);
        if (o->concurrent == 1 && last_in)
          g->chain = node(g, ET_NODE_COMP, "join", 0, g->chain, after);
        else if (o->concurrent == 2)
          beside = g->chain, g->chain = after;
      }
    } else if (o->cls == ET_KC_OTHER_COLL) {
      coll(g, o->name, (et_coll_type)o->coll, o->bytes, NULL);
    } else {
      last_in = g->chain;
      g->chain = node(g, ET_NODE_COMP, o->name, new_dur(g, o), g->chain, 0);
      if (beside)
        g->chain = node(g, ET_NODE_COMP, "join", 0, g->chain, beside);
      beside = 0;
      continue;
    }
    last_in = 0;
  }
}

static uint64_t act_bytes(const rb *g)
{
  return (uint64_t)llround(g->m->tokens_per_mb * g->tokens) * (uint64_t)g->c->hidden * (uint64_t)g->c->dtype_bytes;
}

/* A send (after the chain) or a receive (the chain waits) of one
 * direction's queue; tag = micro-batch (+ 1,000,000 for gradients). */
static void p2p(rb *g, gboolean send, int peer, int mb, int chunk, gboolean grad)
{
  uint64_t *q = grad ? &g->q_grad : &g->q_act;
  if (!send && g->rq.vpp > 1) /* a cycle of stages: a receive must not wait behind a send */
    q = grad ? &g->q_grad_recv : &g->q_act_recv;
  char name[64];
  g_snprintf(name, sizeof name, "%s_%s_mb%d_c%d", send ? "send" : "recv", grad ? "grad" : "act", mb, chunk);
  uint64_t id = node(g, send ? ET_NODE_COMM_SEND : ET_NODE_COMM_RECV, name, 0, *q, send ? g->chain : 0);
  et_comm cm = {.bytes = act_bytes(g), .group = ET_GROUP_WORLD, .split = ET_NONE, .src = send ? g->rank : peer,
                .dst = send ? peer : g->rank, .tag = mb + chunk * 100000 + (grad ? 1000000 : 0), .root = -1, .coll = ET_COLL_NONE};
  et_builder_set_comm(g->b, (uint32_t)(id - 1), &cm, NULL, NULL, 0);
  *q = id;
  if (!send) { /* the chain's next node waits for the receive */
    uint64_t join = node(g, ET_NODE_COMP, "wait_recv", 0, g->chain, id);
    g->chain = join;
  }
}

/* The rank chunk c's forward receives from and sends to (-1: the
 * embedding, the head). */
static int from_rank(const rb *g, int c)
{
  return g->prev >= 0 ? g->prev : c > 0 ? g->last : -1;
}

static int to_rank(const rb *g, int c)
{
  return g->next >= 0 ? g->next : c + 1 < g->rq.vpp ? g->first : -1;
}

/* Forward of micro-batch mb through the rank's chunk c. */
static void fwd(rb *g, int mb, int c)
{
  int from = from_rank(g, c), to = to_rank(g, c);
  if (from >= 0)
    p2p(g, FALSE, from, mb, c, FALSE);
  else
    emit(g, &g->m->embed_fwd);
  for (int l = 0; l < g->c->layers / g->rq.pp / g->rq.vpp; l++)
    emit(g, &g->m->layer_fwd);
  if (to >= 0)
    p2p(g, TRUE, to, mb, c + (g->next < 0), FALSE);
  else
    emit(g, &g->m->head);
}

/* The gradient all-reduce of grad_params parameters in the DP group, off
 * the chain: it overlaps what follows; the step tail waits for it. */
static void dp_reduce(rb *g, const char *name, double grad_params, const char *pg)
{
  if (grad_params <= 0)
    return;
  uint64_t id = node(g, ET_NODE_COMM_COLL, name, 0, g->chain, g->q_dp);
  g->q_dp = id; /* one stream: the reductions run one after the other */
  et_comm cm = {.bytes = (uint64_t)llround(grad_params) * (uint64_t)g->c->dtype_bytes, .group = ET_GROUP_WORLD,
                .split = ET_NONE, .src = -1, .dst = -1, .tag = -1, .root = -1, .coll = ET_COLL_ALL_REDUCE};
  et_builder_set_comm(g->b, (uint32_t)(id - 1), &cm, pg, NULL, 0);
  g_array_append_val(g->dp_ids, id);
}

/* One layer's gradient reductions: dense over the DP group, experts' over
 * their replicas. */
static void layer_reduce(rb *g)
{
  if (g->rq.dp * g->rq.cp > 1)
    dp_reduce(g, "dp_allreduce_layer_grads", et_model_layer_dense_params(g->c, g->rq.tp), g->dp_pg);
  if (g->rq.dp / g->rq.ep > 1)
    dp_reduce(g, "edp_allreduce_expert_grads", et_model_layer_expert_params(g->c, g->rq.tp, g->rq.ep), g->edp_pg);
}

/* Backward of micro-batch mb; in the step's last one (last), with dp > 1,
 * each layer's gradients are all-reduced as soon as they are final. */
static void bwd(rb *g, int mb, int c, gboolean last)
{
  int from = from_rank(g, c), to = to_rank(g, c);
  if (to >= 0)
    p2p(g, FALSE, to, mb, c + (g->next < 0), TRUE);
  else
    emit(g, &g->m->head_bwd);
  for (int l = 0; l < g->c->layers / g->rq.pp / g->rq.vpp; l++) {
    emit(g, &g->m->layer_bwd);
    if (last && !g->m->dp_after)
      layer_reduce(g);
  }
  if (from >= 0)
    p2p(g, TRUE, from, mb, c, TRUE);
  else
    emit(g, &g->m->embed_bwd);
}

static void tail(rb *g)
{
  double params = et_model_rank_params(g->c, g->rq.tp, g->rq.pp, g->rq.ep, g->stage);
  for (int l = 0; g->m->dp_after && l < g->c->layers / g->rq.pp; l++)
    layer_reduce(g);
  if (g->dp_ids->len > 0 || g->rq.dp * g->rq.cp > 1) { /* the embedding's and head's gradients, then wait for all */
    double rest = params - et_model_rank_params(g->c, g->rq.tp, g->rq.pp, g->rq.ep, -1);
    if (g->rq.dp * g->rq.cp > 1)
      dp_reduce(g, "dp_allreduce_embedding_grads", rest, g->dp_pg);
    g->chain = node(g, ET_NODE_COMP, "wait_grads", 0, g->chain, 0);
    for (guint i = 0; i < g->dp_ids->len; i++)
      et_builder_add_dep(g->b, (uint32_t)(g->chain - 1), g_array_index(g->dp_ids, uint64_t, i), TRUE, TRUE);
  }
  double f = opt_params(g->c, g->rq.tp, g->rq.pp, g->rq.dp, g->rq.ep, g->stage) /
             opt_params(g->c, g->c->tp, g->c->pp, g->c->dp, MAX(g->c->ep, 1), 0);
  for (int i = 0; i < g->m->tail.n; i++) {
    const et_mop *o = &g->m->tail.ops[i];
    if (o->cls == ET_KC_TP_COLL && o->tp_only) { /* replicated weights' gradients (sequence-parallel norms) */
      if (g->rq.tp > 1)
        coll(g, o->name, (et_coll_type)o->coll, (uint64_t)llround((double)o->bytes * g->c->pp / g->rq.pp), g->tp_pg);
    } else if (o->cls == ET_KC_TP_COLL || o->cls == ET_KC_OTHER_COLL) {
      emit(g, &(et_mseq){(et_mop *)o, 1});
    }
    else
      g->chain = node(g, ET_NODE_COMP, o->name, (sim_time_ps)llround((double)o->dur_ps * f), g->chain, 0);
  }
}

static et_graph *build_rank(rb *g, GError **error)
{
  g->b = et_builder_new("repartition");
  g->dp_ids = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  int m = g->rq.mb * g->rq.vpp, pp = g->rq.pp, v = g->rq.vpp;
  int warm = g->rq.sched == ET_SCHED_GPIPE ? m : MIN(pp - g->stage - 1, m);
  if (g->rq.sched == ET_SCHED_INTERLEAVED)
    warm = MIN(2 * (pp - g->stage - 1) + (v - 1) * pp, m);
  /* Virtual micro-batch k: micro-batch (k / (pp v)) pp + k % pp (k itself
   * without interleaving), chunk (k / pp) % v forward, v - 1 - that backward. */
#define VMB(k) (v == 1 ? (k) : ((k) / (pp * v)) * pp + (k) % pp)
#define VCH(k) (v == 1 ? 0 : ((k) / pp) % v)
  for (int i = 0; i < warm; i++)
    fwd(g, VMB(i), VCH(i));
  for (int i = 0; i < m - warm; i++) {
    fwd(g, VMB(warm + i), VCH(warm + i));
    bwd(g, VMB(i), v - 1 - VCH(i), VMB(i) == g->rq.mb - 1);
  }
  for (int i = m - warm; i < m; i++)
    bwd(g, VMB(i), v - 1 - VCH(i), VMB(i) == g->rq.mb - 1);
#undef VMB
#undef VCH
  tail(g);
  g_array_free(g->dp_ids, TRUE);
  return et_builder_finish(g->b, ET_BUILD_STRICT, error);
}

/* Rank (d, s, c, i) of the new job. */
static int rank_at(const et_repart_request *rq, int d, int s, int c, int i)
{
  return ((d * rq->pp + s) * rq->cp + c) * rq->tp + i;
}

static void add_groups(et_workload *w, const et_repart_request *rq)
{
  int *mem = g_new(int, MAX(rq->tp, rq->dp * rq->cp));
  char name[48];
  for (int s = 0; rq->ep > 1 && s < rq->pp; s++) /* EP: ep consecutive data-parallel ranks */
    for (int i = 0; i < rq->tp; i++)
      for (int b = 0; b < rq->dp / rq->ep; b++) {
        for (int k = 0; k < rq->ep; k++)
          mem[k] = ((b * rq->ep + k) * rq->pp + s) * rq->tp + i;
        g_snprintf(name, sizeof name, "ep.%d.%d.%d", s, i, b);
        et_workload_add_group(w, name, "ep", mem, rq->ep);
      }
  for (int s = 0; rq->dp / rq->ep > 1 && rq->ep > 1 && s < rq->pp; s++) /* expert DP: one expert's replicas */
    for (int i = 0; i < rq->tp; i++)
      for (int k = 0; k < rq->ep; k++) {
        for (int b = 0; b < rq->dp / rq->ep; b++)
          mem[b] = ((b * rq->ep + k) * rq->pp + s) * rq->tp + i;
        g_snprintf(name, sizeof name, "edp.%d.%d.%d", s, i, k);
        et_workload_add_group(w, name, "expert_dp", mem, rq->dp / rq->ep);
      }
  for (int d = 0; rq->tp > 1 && d < rq->dp; d++)
    for (int s = 0; s < rq->pp; s++)
      for (int c = 0; c < rq->cp; c++) {
        for (int i = 0; i < rq->tp; i++)
          mem[i] = rank_at(rq, d, s, c, i);
        g_snprintf(name, sizeof name, "tp.%d.%d.%d", d, s, c);
        et_workload_add_group(w, name, "tp", mem, rq->tp);
      }
  for (int s = 0; rq->dp * rq->cp > 1 && s < rq->pp; s++) /* the gradients' group: dp x cp */
    for (int i = 0; i < rq->tp; i++) {
      for (int k = 0; k < rq->dp * rq->cp; k++)
        mem[k] = rank_at(rq, k / rq->cp, s, k % rq->cp, i);
      g_snprintf(name, sizeof name, "dp.%d.%d", s, i);
      et_workload_add_group(w, name, rq->cp > 1 ? "dp_cp" : "dp", mem, rq->dp * rq->cp);
    }
  g_free(mem);
}

static void describe(const et_model *m, const et_model_card *c, const et_repart_request *rq,
                     const et_repart_memory *mem, GString *how)
{
  g_string_append_printf(how, "repartition: tp %d -> %d, pp %d -> %d, dp %d -> %d, micro-batches %d -> %d (%.0f -> "
                         "%.0f tokens each), schedule %s; %d ranks\n", m->tp, rq->tp, m->pp, rq->pp, c->dp, rq->dp,
                         m->mb, rq->mb, m->tokens_per_mb, (double)rq->batch / rq->dp / rq->mb * c->seq,
                         et_sched_name(rq->sched), rq->tp * rq->pp * rq->dp * rq->cp);
  if (rq->sched == ET_SCHED_INTERLEAVED)
    g_string_append_printf(how, "repartition: interleaved 1F1B: %d chunks of %d layers per rank (virtual stage c x pp "
                           "+ s; stage %d sends chunk c's activations to stage 0's chunk c + 1), Megatron's order of "
                           "virtual micro-batches with 2 (pp - s - 1) + (vpp - 1) pp warm-up forwards\n", rq->vpp,
                           c->layers / rq->pp / rq->vpp, rq->pp - 1);
  g_string_append_printf(how, "repartition: kernels rescaled by class: GEMMs of known shape by the roofline of %s "
                         "(%.0f TFLOP/s, %.0f GB/s HBM), other GEMMs and attention by FLOPs per shard, elementwise by "
                         "elements per shard (norms and embedding: per token), each above a fixed %.1f us per kernel; "
                         "the measured idle before each operation kept; TP all-reduces, activations and their "
                         "gradients: tokens x hidden %d x %d B\n", c->hw ? c->hw : "the GPU", c->peak_flops / 1e12,
                         c->hbm_Bps / 1e9, (double)m->kernel_floor_ps / 1e6, c->hidden, c->dtype_bytes);
  static const char *const rc[] = {"no", "selective", "full"};
  g_string_append_printf(how, "repartition: memory per GPU (stage %d, the most loaded): %.2f GB weights, gradients "
                         "and Adam states (%.0f M parameters x 16 B, ZeRO stage %d over the DP group) + %.2f GB "
                         "activations (%s recomputation) = %.2f GB of %.0f GB HBM\n", mem->worst_stage,
                         mem->weights_bytes / 1e9, mem->params / 1e6, c->zero, mem->act_bytes / 1e9,
                         rc[CLAMP(c->recompute, 0, 2)], mem->total_bytes / 1e9, mem->hbm_bytes / 1e9);
  if (c->zero >= 2)
    g_string_append_printf(how, "repartition: ZeRO stage %d counts in the memory only: the gradients stay "
                           "all-reduced%s (their time as such), the optimizer's time follows the parameters per "
                           "rank\n", c->zero, c->zero >= 3 ? ", and FSDP's per-layer weight all-gathers before the "
                           "forward and backward are not added" : "");
  if (rq->batch != c->global_batch)
    g_string_append_printf(how, "repartition: global batch %d -> %d sequences (dp %d x mb %d x mbs %d): the step "
                           "processes %.2fx the traced tokens\n", c->global_batch, rq->batch, rq->dp, rq->mb, rq->mbs,
                           (double)rq->batch / c->global_batch);
  if (c->experts > 0)
    g_string_append_printf(how, "repartition: MoE: ep %d -> %d: %d experts per rank (%d x 2 x %d x %d parameters), "
                           "dispatch and combine all-to-alls of tokens x top-%d x hidden %d x %d B (the registry's MoE "
                           "sizing, balanced) in EP groups of %d consecutive data-parallel ranks; expert gradients "
                           "all-reduced over %d replicas\n", c->ep, rq->ep, c->experts / rq->ep, c->experts / rq->ep,
                           c->hidden, c->moe_ffn, c->top_k, c->hidden, c->dtype_bytes, rq->ep, rq->dp / rq->ep);
  if (c->sp && (rq->tp > 1 || c->tp > 1))
    g_string_append_printf(how, "repartition: sequence parallelism (card): tp %d -> %d; the norms%s see tokens / tp "
                           "(%.0f per rank and micro-batch), the TP all-gathers are re-sized to tokens / tp x hidden %d "
                           "x %d B per rank and the reduce-scatters to tokens x hidden x %d B, where the trace has them "
                           "(the embedding keeps all tokens)%s\n", c->tp, rq->tp, c->experts > 0 ? ", router, "
                           "permutation, experts and the dispatch and combine all-to-alls" : "",
                           (double)rq->batch / rq->dp / rq->mb * c->seq / MAX(rq->cp, 1) / rq->tp, c->hidden, c->dtype_bytes, c->dtype_bytes,
                           c->experts == 0 ? "" : c->etp > 1
                           ? "; experts split over the TP group (expert_tensor_parallel_size = tp: the tokens a rank "
                             "received all-gathered over TP before them, their outputs reduce-scattered after, their "
                             "weights / tp), EP groups of ep consecutive data-parallel ranks per TP index"
                           : "; experts whole on every TP rank (expert_tensor_parallel_size 1), EP groups of ep "
                             "consecutive data-parallel ranks per TP index");
  if (c->experts > 0 && (rq->tp > 1 || c->tp > 1) && c->etp == 0)
    g_string_append(how, "repartition: MoE with tp > 1: the card has no expert_tensor_parallel_size; expert tensor "
                         "parallelism 1 is assumed (Megatron sets it to tp when unset: say so on the card, "
                         "expert_tensor_parallel_size equal to tp, with sequence_parallel)\n");
  if (!c->sp && c->experts > 0 && (rq->tp > 1 || c->tp > 1))
    g_string_append_printf(how, "repartition: MoE with tp %d: the router is scaled as a TP-sharded GEMM, the experts "
                           "are not split over TP (expert tensor parallelism 1, no sequence parallelism): every TP rank "
                           "dispatches, runs and combines all its micro-batch's routed tokens and holds its experts "
                           "whole; not checked against a ground truth (the twin runs MoE with tp > 1 under sequence parallelism "
                           "only: a card saying sequence_parallel: true gets that model)\n", rq->tp);
  if (rq->cp > 1 || c->cp > 1)
    g_string_append_printf(how, "repartition: CP: cp %d -> %d (ring attention, Megatron's cp_comm_type p2p): %d "
                           "tokens of each sequence per rank; a layer's attention in %d steps of the traced "
                           "attention x %d/%d, each overlapping the KV block's send to the next CP rank (2 x tokens x "
                           "hidden / tp x %d B; backward with the gradients: 2x); gradients reduced over dp x cp = %d "
                           "ranks\n", MAX(c->cp, 1), rq->cp, c->seq / rq->cp, rq->cp, MAX(c->cp, 1), rq->cp,
                           c->dtype_bytes, rq->dp * rq->cp);
  if (rq->dp > 1)
    g_string_append(how, "repartition: DP: each layer's gradients (4h^2 + 2hf parameters / tp, bf16) are all-reduced "
                         "as soon as the step's last backward of the layer ends, overlapping the rest; the "
                         "embedding's and head's after the backward; the optimizer waits for all\n");
}

et_workload *et_repart_build(const char *source, const et_model *m, const et_model_card *c,
                             const et_repart_request *rq0, GString *how, GError **error)
{
  et_repart_request rq = resolved(c, rq0);
  if (!et_repart_check(c, &rq, error))
    return NULL;
  if (rq.cp != MAX(c->cp, 1) && !et_model_has_attention(m)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED,
                "cp %d: re-partitioning the sequence needs the layer's attention kernel (a name with flash, fmha, "
                "attention or sdpa), and the layer read from %s has none; give a trace whose attention kernels are "
                "named", rq.cp, source);
    return NULL;
  }
  et_repart_memory mem;
  et_repart_memory_of(c, &rq, &mem);
  if (!mem.fits) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED,
                "tp %d pp %d dp %d mb %d does not fit in memory: stage %d needs %.2f GB (%.2f GB weights, gradients "
                "and Adam states for %.0f M parameters, %.2f GB activations of the micro-batches in flight under %s) "
                "of %.0f GB HBM", rq.tp, rq.pp, rq.dp, rq.mb, mem.worst_stage, mem.total_bytes / 1e9,
                mem.weights_bytes / 1e9, mem.params / 1e6, mem.act_bytes / 1e9, et_sched_name(rq.sched),
                mem.hbm_bytes / 1e9);
    return NULL;
  }
  int n = rq.tp * rq.pp * rq.dp * rq.cp, sp = rq.tp * rq.cp; /* sp: rank distance between stages */
  char *src = g_strdup_printf("%s (repartitioned: tp %d pp %d dp %d mb %d)", source, rq.tp, rq.pp, rq.dp, rq.mb);
  et_workload *w = et_workload_new(n, src);
  g_free(src);
  add_groups(w, &rq);
  for (int r = 0; r < n; r++) {
    int i = r % rq.tp, cc = (r / rq.tp) % rq.cp, s = (r / sp) % rq.pp, d = r / (sp * rq.pp);
    rb g = {.m = m, .c = c, .rq = rq, .shard = (double)m->tp / rq.tp,
            .tokens = (double)rq.batch / rq.dp / rq.mb * c->seq / rq.cp / m->tokens_per_mb, .rank = r, .stage = s,
            .prev = s > 0 ? r - sp : -1, .next = s + 1 < rq.pp ? r + sp : -1, .first = r - s * sp,
            .last = r + (rq.pp - 1 - s) * sp, .cp_next = rank_at(&rq, d, s, (cc + 1) % rq.cp, i),
            .cp_prev = rank_at(&rq, d, s, (cc + rq.cp - 1) % rq.cp, i)};
    g_snprintf(g.tp_pg, sizeof g.tp_pg, "tp.%d.%d.%d", d, s, cc);
    g_snprintf(g.dp_pg, sizeof g.dp_pg, "dp.%d.%d", s, i);
    g_snprintf(g.ep_pg, sizeof g.ep_pg, "ep.%d.%d.%d", s, i, d / rq.ep);
    /* ep 1: every expert on every rank, reduced over the whole DP group */
    if (rq.ep > 1)
      g_snprintf(g.edp_pg, sizeof g.edp_pg, "edp.%d.%d.%d", s, i, d % rq.ep);
    else
      g_strlcpy(g.edp_pg, g.dp_pg, sizeof g.edp_pg);
    if ((w->ranks[r] = build_rank(&g, error)) == NULL) {
      et_workload_free(w);
      return NULL;
    }
  }
  if (!et_workload_resolve_groups(w, error)) {
    et_workload_free(w);
    return NULL;
  }
  describe(m, c, &rq, &mem, how);
  return w;
}
