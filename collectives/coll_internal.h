/* coll_internal.h: the pure scheduling logic behind coll.h, exposed to the
 * collectives module and its tests only (not installed).
 *
 * A collective is planned as a sequence of phases; each phase runs one
 * primitive (all-reduce, reduce-scatter, ...) with one algorithm inside a
 * sub-group of q members (one grid dimension of the group, or the whole
 * group).  A phase is a fixed number of steps, the same for every member of
 * the sub-group; coll_sched_step() says, for one member position and one
 * step, which transfers the member issues and how many it must receive
 * before the step is complete.  Steps without transfers complete at once.
 */
#ifndef WISP_COLL_INTERNAL_H
#define WISP_COLL_INTERNAL_H

#include "collectives/coll.h"

G_BEGIN_DECLS

#define COLL_MAX_DIMS 8

/* DeepEP's two-hop all-to-all (coll_twohop.c).  coll_twohop_start runs d
 * (an ALL_TO_ALLV with d->two_hop set) as scale-out and scale-up hops over
 * nw and returns TRUE, or returns FALSE and does nothing when the topology
 * has no node structure or a relay is not a member (the caller then runs
 * the flat all-to-all).  chunks (the policy's, 1..1024) cuts every per
 * node pair hop into pieces sent one after the other, each forwarded as
 * soon as it has arrived (DeepEP streams tokens in chunks); 1 = the whole
 * hop.  The run adds itself to `live` (a set whose value
 * destroy function is coll_twohop_free) and removes itself when its last
 * member has finished. */
typedef struct coll_twohop coll_twohop;
gboolean coll_twohop_start(sim_engine *sim, net *nw, GHashTable *live, const coll_desc *d, int chunks,
                           coll_done_fn done, void *ctx, uint64_t cookie, coll_info *info);
void coll_twohop_free(coll_twohop *h);

typedef enum {
  COLL_PRIM_ALL_REDUCE = 0,
  COLL_PRIM_REDUCE_SCATTER,
  COLL_PRIM_ALL_GATHER,
  COLL_PRIM_ALL_TO_ALL,
  COLL_PRIM_ALL_TO_ALLV,
  COLL_PRIM_BROADCAST,
  COLL_PRIM_REDUCE,
  COLL_PRIM_GATHER,
  COLL_PRIM_SCATTER,
  COLL_PRIM_BARRIER,
  COLL_PRIM_COUNT
} coll_prim;

/* Maps a Chakra collective type onto a primitive (REDUCE_SCATTER_BLOCK is a
 * reduce-scatter); returns FALSE for ET_COLL_NONE and unknown values. */
gboolean coll_prim_from_type(et_coll_type type, coll_prim *out);
const char *coll_prim_name(coll_prim p);

/* One transfer issued by a member in a step. */
typedef struct {
  int peer;          /* position of the receiver in the sub-group */
  uint64_t bytes;
  uint32_t recv_step; /* step of the receiver (within the phase) that counts it */
} coll_xfer;

/* One phase of one chunk, seen from the sub-group. */
typedef struct {
  coll_prim prim;
  coll_algo algo;     /* concrete: never AUTO or HIERARCHICAL */
  int q;              /* sub-group size, >= 1 */
  int root;           /* root position for rooted primitives, else -1 */
  int tree;           /* DOUBLE_BINARY_TREE: which of the two trees (0 or 1) */
  uint64_t bytes;     /* D: AR/RS/REDUCE/BCAST: the vector; AG/GATHER/SCATTER:
                         the full output (q pieces); A2A: per-member send buffer */
  /* ALL_TO_ALLV: bytes from position a to position b are
   * a2av(a2av_ctx, a, b); NULL otherwise. */
  uint64_t (*a2av)(const void *a2av_ctx, int a, int b);
  const void *a2av_ctx;
  /* NVLS reduce-scatter and all-gather of one plan that has both (NCCL's
   * NVLS-tree): each carries half of the pair's per-direction load (see
   * coll_sched_step). */
  gboolean nvls_paired;
} coll_sched;

/* Whether algorithm a is defined for primitive p (NVLS additionally needs
 * a switch dimension, checked by the planner). */
gboolean coll_algo_supports(coll_algo a, coll_prim p);

/* Number of steps of the phase: equal for every position. */
uint32_t coll_sched_n_steps(const coll_sched *s);

/* Writes the transfers of position pos at step k into out (capacity at
 * least 2*q) and returns how many; *n_recv receives the number of
 * transfers pos must receive at step k and *reduce_bytes the bytes it
 * reduces locally in that step (for the optional reduction cost).
 * Cost: O(number of transfers written), except ALL_TO_ALL ring forwarding
 * which is O(1) per transfer as well. */
uint32_t coll_sched_step(const coll_sched *s, int pos, uint32_t k, coll_xfer *out,
                         uint32_t *n_recv, uint64_t *reduce_bytes);

/* The first step k' >= k at which position pos may send, receive or
 * reduce (coll_sched_step writes nothing at the steps before it), or the
 * phase's step count when none is left.  Exact for the chains of the
 * rooted primitives on a ring (broadcast, scatter, reduce, gather: each
 * position moves data at two steps of q - 1); k itself for every other
 * schedule.  O(1). */
uint32_t coll_sched_next_busy(const coll_sched *s, int pos, uint32_t k);

/* The tuner (see doc/collectives.md "Automatic selection"): the algorithm
 * for one phase of primitive p over q members of a dimension of kind k,
 * with D bytes per member (coll_sched.bytes).  nvls_ok says whether the
 * config allows in-switch reduction; shared_links whether the network
 * tier shares link bandwidth between concurrent transfers (flow tier).
 * Without sharing, algorithms that put several concurrent transfers on
 * one link (direct on a switch, direct all-to-all) would be credited with
 * bandwidth the hardware does not have, so they are only chosen where
 * every transfer has its own link (fully connected) or where the step is
 * latency-bound. */
coll_algo coll_tune(coll_prim p, topo_kind k, int q, uint64_t bytes, gboolean nvls_ok, gboolean shared_links);

/* Policy internals, shared by the planner. */
struct coll_policy {
  coll_algo algo[COLL_PRIM_COUNT][COLL_MAX_DIMS]; /* per topology dimension */
  int n_algo[COLL_PRIM_COUNT];   /* 0: auto; 1: same for every dimension */
  int chunks;                    /* pipelining chunks per collective, >= 1 */
  wisp_bw_Bps reduce_bw;         /* local reduction bandwidth, 0 = free */
  gboolean in_switch_reduction;  /* switch dimensions may reduce (NVLS) */
  coll_library_params lib;       /* library model; kind nccl = none */
};

G_END_DECLS
#endif
