/* nccl_chunks.c: how NCCL cuts a collective into pipeline pieces (see
 * coll_nccl.h): the slice of one channel step per protocol, the tree's
 * chunk, and the NVLS and NVLS-tree loop sizes of calcCollChunking
 * (src/enqueue.cc).  [nccl] means NVIDIA/nccl at commit 5067397 (master of
 * 2026-06-11).  The tuner (nccl_tuner.c) chooses algorithm and protocol;
 * these sizes are what the plan (nccl_plan.c) then sends.  Every function
 * is O(1) except the NVLS ladders, O(rungs) = O(3).
 */
#include "config.h"

#include "collectives/libraries/nccl/coll_nccl.h"

/* NCCL_STEPS and the LL/LL128 buffer sizes [nccl] src/include/device.h:
 * LL: NCCL_LL_LINES_PER_THREAD (8) x NCCL_LL_MAX_NTHREADS (512) x
 * NCCL_STEPS lines of 16 bytes = 512 KiB; LL128:
 * NCCL_LL128_ELEMS_PER_THREAD (120) x NCCL_LL128_MAX_NTHREADS (640) x
 * NCCL_STEPS x 8 bytes = 4,915,200 bytes.  Slice steps [nccl]
 * src/include/collectives.h (BROADCAST_/REDUCE_SLICESTEPS 1, others
 * NCCL_STEPS / 4). */
#define NCCL_STEPS COLL_NCCL_FIFO_SLOTS
#define NCCL_LL_BUFF_BYTES (8u * 512u * NCCL_STEPS * 16u)
#define NCCL_LL128_BUFF_BYTES (120u * 640u * NCCL_STEPS * 8u)

uint64_t coll_nccl_slice_bytes(coll_nccl_func f, coll_nccl_algo a, coll_proto p, uint64_t buffsize)
{
  switch (p) {
  case COLL_PROTO_LL:
    return NCCL_LL_BUFF_BYTES / NCCL_STEPS / 2;
  case COLL_PROTO_LL128:
    return (uint64_t)NCCL_LL128_BUFF_BYTES / NCCL_STEPS / 16 * 15;
  default: {
    uint64_t step = MAX(buffsize, (uint64_t)NCCL_STEPS) / NCCL_STEPS;
    gboolean one = f == COLL_NFUNC_BROADCAST || f == COLL_NFUNC_REDUCE || a != COLL_NALGO_RING;
    return one ? step : step * (NCCL_STEPS / 4);
  }
  }
}

uint64_t coll_nccl_tree_chunk_bytes(coll_proto p, uint64_t buffsize, uint64_t s, int nch, int depth)
{
  uint64_t chunk = coll_nccl_slice_bytes(COLL_NFUNC_ALL_REDUCE, COLL_NALGO_TREE, p, buffsize);
  if (p != COLL_PROTO_SIMPLE)
    return chunk;
  uint64_t per = (uint64_t)MAX(nch, 1), d = (uint64_t)MAX(depth, 1);
  while (s / (per * chunk) < d * 8 && chunk > 131072)
    chunk /= 2;
  while (s / (per * chunk) < d * 4 && chunk > 65536)
    chunk /= 2;
  while (s / (per * chunk) < d && chunk > 32768)
    chunk /= 2;
  return chunk;
}

/* NCCL's NVLS CTAs per GPU [nccl] src/transport/nvls.cc NVLS_NCHANNELS_SM90
 * (16), NVLS_NCHANNELS_SM100_NVL (24, one node), NVLS_NCHANNELS_SM100 (32,
 * several nodes); the chunk
 * NCCL_NVLS_CHUNKSIZE (128 KiB) [nccl] same file. */
#define NCCL_NVLS_NCHANNELS_SM90 16
#define NCCL_NVLS_NCHANNELS_SM100_NVL 24
#define NCCL_NVLS_NCHANNELS_SM100 32
#define NCCL_NVLS_CHUNK (128u * 1024u)

/* calcCollChunking's ladder for NVLS and NVLS-tree (src/enqueue.cc): for
 * each rung {factor, size} in turn, the chunk drops to `size` when one
 * CTA's share holds fewer than factor x concurrentOps (the heads) chunks
 * and the chunk is larger.  O(rungs). */
typedef struct {
  uint64_t factor, size;
} nvls_rung;

static uint64_t nvls_chunk(uint64_t per_ch, uint64_t ops, uint64_t chunk, const nvls_rung *rung, int n)
{
  for (int i = 0; i < n; i++)
    if (per_ch < rung[i].factor * ops * chunk && chunk > rung[i].size)
      chunk = rung[i].size;
  return chunk;
}

/* One-node NVLS: calcCollChunking's NVLS branch on NVLS_NCHANNELS_SM90 (16)
 * or, on one Blackwell node, NVLS_NCHANNELS_SM100_NVL (24) CTAs
 * (src/transport/nvls.cc). */
uint64_t coll_nccl_nvls_loop_bytes(int sm, int heads, uint64_t s)
{
  static const nvls_rung rungs[] = { { 64, 65536 }, { 8, 32768 }, { 2, 16384 } };
  uint64_t ctas = sm >= 100 ? NCCL_NVLS_NCHANNELS_SM100_NVL : NCCL_NVLS_NCHANNELS_SM90;
  uint64_t ops = (uint64_t)MAX(heads, 1);
  return nvls_chunk(s / ctas, ops, NCCL_NVLS_CHUNK, rungs, 3) * ops * ctas;
}

/* NVLS-tree: NCCL_NVLS_CHUNKSIZE capped by the tree's maximum chunk, 64 KiB
 * on >= 4 nodes (nvls.cc ncclNvlsTuning, NCCL_NVLSTREE_MAX_CHUNKSIZE
 * default), shrunk as calcCollChunking's NVLS_TREE branch (src/enqueue.cc,
 * per CTA, concurrentOps = the heads), times the heads and the CTAs.  Not
 * modelled: ncclNvlsTreeSm100Tuning's NIC-dependent chunks and CTAs. */
uint64_t coll_nccl_nvls_tree_loop_bytes(int sm, int heads, int nodes, uint64_t s)
{
  static const nvls_rung rungs[] = { { 32, 262144 }, { 16, 131072 }, { 4, 65536 }, { 1, 32768 } };
  uint64_t ctas = sm >= 100 ? NCCL_NVLS_NCHANNELS_SM100 : NCCL_NVLS_NCHANNELS_SM90;
  uint64_t ops = (uint64_t)MAX(heads, 1);
  uint64_t chunk = nodes >= 4 ? 65536 : NCCL_NVLS_CHUNK;
  return nvls_chunk(s / ctas, ops, chunk, rungs, 4) * ops * ctas;
}
