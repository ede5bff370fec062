/* make_example.c: generates the bundled example workload, a synthetic
 * training step of a 16-rank transformer job, written as Chakra ET files.
 *
 * Parallelism: tensor parallel TP = 4, pipeline parallel PP = 2, data
 * parallel DP = 2, rank = dp * 8 + pp * 4 + tp, so with 8 GPUs per node the
 * TP groups and the pipeline neighbours are inside a node and the DP pairs
 * (r, r + 8) cross the scale-out network.
 *
 * Each rank runs a GPipe schedule of M micro-batches over L layers per
 * stage: forward compute and a TP all-reduce of the activations per layer,
 * a send/recv of activations between the two stages, then the backward pass
 * in reverse with a TP all-reduce per layer, and per-layer DP all-reduces of
 * the gradients that start as soon as the last micro-batch's backward of the
 * layer is done, overlapping the remaining backward compute.  An optimizer
 * step waits for every gradient all-reduce.
 *
 * Sizes follow 8 layers of a Llama-7B-like model (hidden 4096, sequence
 * 4096, micro-batch 1, bf16): activations 4096 * 4096 * 2 B = 32 MiB per TP
 * all-reduce; one layer has about 202 M parameters, so its TP shard's bf16
 * gradients are about 101 MB (we use 96 MiB).  Compute times are round
 * figures for an A100-class GPU.  The workload is synthetic: it exists so a
 * new user can run a what-if study without a trace of their own.
 *
 * Usage: make_example OUTDIR PREFIX
 */
#include "config.h"
#include "chakra/et_io.h"

#include <stdio.h>
#include <stdlib.h>

enum { TP = 4, PP = 2, DP = 2, M = 4, L = 4, N_RANKS = TP * PP * DP };

static const uint64_t act_bytes = 32ull << 20;   /* 32 MiB TP all-reduce */
static const uint64_t p2p_bytes = 32ull << 20;   /* activations between stages */
static const uint64_t grad_bytes = 96ull << 20;  /* per layer, DP all-reduce */
static const sim_time_ps fwd_ps = 1200 * SIM_PS_PER_US;   /* per layer per micro-batch */
static const sim_time_ps bwd_ps = 2400 * SIM_PS_PER_US;
static const sim_time_ps opt_ps = 3000 * SIM_PS_PER_US;

typedef struct {
  et_builder *b;
  uint64_t next_id;
  uint64_t last;     /* id of the previous node on the compute chain, 0 = none */
} chain;

static uint64_t add(chain *c, et_node_type type, const char *name, sim_time_ps dur)
{
  uint64_t id = ++c->next_id;
  uint32_t n = et_builder_add_node(c->b, id, type, name, dur, 0);
  if (c->last)
    et_builder_add_dep(c->b, n, c->last, TRUE, TRUE);
  return id;
}

static uint32_t index_of(uint64_t id)
{
  return (uint32_t)(id - 1); /* ids are 1.. in insertion order */
}

static void set_coll(chain *c, uint64_t id, et_coll_type type, uint64_t bytes, const char *pg)
{
  et_comm comm = {.bytes = bytes, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = -1, .dst = -1,
                  .tag = -1, .root = -1, .coll = type};
  et_builder_set_comm(c->b, index_of(id), &comm, pg, NULL, 0);
}

static void set_p2p(chain *c, uint64_t id, int src, int dst, int tag, uint64_t bytes)
{
  et_comm comm = {.bytes = bytes, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = src, .dst = dst,
                  .tag = tag, .root = -1, .coll = ET_COLL_NONE};
  et_builder_set_comm(c->b, index_of(id), &comm, NULL, NULL, 0);
}

static et_graph *make_rank(int rank, GError **error)
{
  int dp = rank / 8, pp = (rank / 4) % 2, tp = rank % 4;
  char tp_group[16], dp_group[16];
  g_snprintf(tp_group, sizeof tp_group, "%d", 1 + dp * PP + pp);          /* ids 1..4 */
  g_snprintf(dp_group, sizeof dp_group, "%d", 1 + DP * PP + pp * TP + tp); /* ids 5..12 */
  chain c = {.b = et_builder_new("examples/make_example")};
  et_builder_set_version(c.b, "0.0.4");
  char name[64];
  int peer = pp == 0 ? rank + 4 : rank - 4;

  /* Forward: stage 1 receives each micro-batch from stage 0. */
  for (int m = 0; m < M; m++) {
    if (pp == 1) {
      g_snprintf(name, sizeof name, "recv_act_mb%d", m);
      c.last = add(&c, ET_NODE_COMM_RECV, name, 0);
      set_p2p(&c, c.last, peer, rank, 100 + m, p2p_bytes);
    }
    for (int l = 0; l < L; l++) {
      g_snprintf(name, sizeof name, "fwd_mb%d_layer%d", m, pp * L + l);
      c.last = add(&c, ET_NODE_COMP, name, fwd_ps);
      g_snprintf(name, sizeof name, "tp_allreduce_fwd_mb%d_layer%d", m, pp * L + l);
      c.last = add(&c, ET_NODE_COMM_COLL, name, 0);
      set_coll(&c, c.last, ET_COLL_ALL_REDUCE, act_bytes, tp_group);
    }
    if (pp == 0) {
      g_snprintf(name, sizeof name, "send_act_mb%d", m);
      c.last = add(&c, ET_NODE_COMM_SEND, name, 0);
      set_p2p(&c, c.last, rank, peer, 100 + m, p2p_bytes);
    }
  }
  /* Backward in reverse micro-batch order; stage 0 receives gradients. */
  uint64_t dp_ids[L];
  int n_dp = 0;
  for (int m = M - 1; m >= 0; m--) {
    if (pp == 0) {
      g_snprintf(name, sizeof name, "recv_grad_mb%d", m);
      c.last = add(&c, ET_NODE_COMM_RECV, name, 0);
      set_p2p(&c, c.last, peer, rank, 200 + m, p2p_bytes);
    }
    for (int l = L - 1; l >= 0; l--) {
      g_snprintf(name, sizeof name, "bwd_mb%d_layer%d", m, pp * L + l);
      c.last = add(&c, ET_NODE_COMP, name, bwd_ps);
      uint64_t bwd = c.last;
      g_snprintf(name, sizeof name, "tp_allreduce_bwd_mb%d_layer%d", m, pp * L + l);
      c.last = add(&c, ET_NODE_COMM_COLL, name, 0);
      set_coll(&c, c.last, ET_COLL_ALL_REDUCE, act_bytes, tp_group);
      if (m == 0) {
        /* The layer's gradients are final: reduce them across DP off the chain. */
        uint64_t keep = c.last;
        c.last = bwd;
        g_snprintf(name, sizeof name, "dp_allreduce_grad_layer%d", pp * L + l);
        dp_ids[n_dp++] = add(&c, ET_NODE_COMM_COLL, name, 0);
        set_coll(&c, dp_ids[n_dp - 1], ET_COLL_ALL_REDUCE, grad_bytes, dp_group);
        c.last = keep;
      }
    }
    if (pp == 1) {
      g_snprintf(name, sizeof name, "send_grad_mb%d", m);
      c.last = add(&c, ET_NODE_COMM_SEND, name, 0);
      set_p2p(&c, c.last, rank, peer, 200 + m, p2p_bytes);
    }
  }
  uint64_t opt = add(&c, ET_NODE_COMP, "optimizer_step", opt_ps);
  for (int k = 0; k < n_dp; k++)
    et_builder_add_dep(c.b, index_of(opt), dp_ids[k], TRUE, TRUE);
  return et_builder_finish(c.b, ET_BUILD_STRICT, error);
}

int main(int argc, char **argv)
{
  if (argc != 3) {
    fprintf(stderr, "usage: make_example OUTDIR PREFIX\n");
    return 2;
  }
  GError *error = NULL;
  et_workload *w = et_workload_new(N_RANKS, "examples/make_example");
  for (int r = 0; r < N_RANKS; r++) {
    w->ranks[r] = make_rank(r, &error);
    if (w->ranks[r] == NULL) {
      fprintf(stderr, "make_example: %s\n", error->message);
      return 1;
    }
  }
  /* TP groups 1..4 (dp, pp), DP groups 5..12 (pp, tp). */
  for (int dp = 0; dp < DP; dp++)
    for (int pp = 0; pp < PP; pp++) {
      int ranks[TP];
      for (int tp = 0; tp < TP; tp++)
        ranks[tp] = dp * 8 + pp * 4 + tp;
      char id[16];
      g_snprintf(id, sizeof id, "%d", 1 + dp * PP + pp);
      et_workload_add_group(w, id, "tp", ranks, TP);
    }
  for (int pp = 0; pp < PP; pp++)
    for (int tp = 0; tp < TP; tp++) {
      int ranks[DP];
      for (int dp = 0; dp < DP; dp++)
        ranks[dp] = dp * 8 + pp * 4 + tp;
      char id[16];
      g_snprintf(id, sizeof id, "%d", 1 + DP * PP + pp * TP + tp);
      et_workload_add_group(w, id, "dp", ranks, DP);
    }
  if (!et_workload_resolve_groups(w, &error) || !et_workload_write(w, argv[1], argv[2], &error)) {
    fprintf(stderr, "make_example: %s\n", error->message);
    return 1;
  }
  et_workload_free(w);
  return 0;
}
