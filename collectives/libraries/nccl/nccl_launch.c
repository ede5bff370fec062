/* nccl_launch.c: the host thread's cost of launching one NCCL collective
 * in the NCCL model: how many channels (thread blocks) NCCL launches it
 * on, and what the host pays per launch and per launched channel.  The
 * per-channel term exists in NCCL up to 2.12 only, where the host writes
 * each launched channel's work into that channel's FIFO in pinned host
 * memory before the launch; nccl-tests' -g N makes one thread pay it for
 * N GPUs in a row (nccl_plan.c multiplies).  Sources: [nccl] NVIDIA/nccl
 * at tag v2.9.9-1 (the version the committed AWS p4d log prints) unless a
 * line names another.  Every function is O(1) or O(channels).
 */
#include "config.h"

#include "collectives/libraries/nccl/coll_nccl.h"

/* getAlgoInfo's threads per block and per-thread thresholds [nccl]
 * src/include/devcomm.h NCCL_LL_MAX_NTHREADS 512, NCCL_LL128_MAX_NTHREADS
 * 640, NCCL_SIMPLE_MAX_NTHREADS 512 (ring Simple takes 512 on NVLink,
 * src/graph/tuning.cc simpleDefaultThreads); src/include/comm.h
 * NCCL_LL_THREAD_THRESHOLD 8, NCCL_LL128_THREAD_THRESHOLD 8,
 * NCCL_SIMPLE_THREAD_THRESHOLD 64 bytes, the ring's LL one times the
 * ranks (tuning.cc: threadThresholds[RING][LL] *= nRanks). */
static const int launch_threads[COLL_PROTO_COUNT] = { 512, 640, 512 };
static const int launch_threshold[COLL_PROTO_COUNT] = { 8, 8, 64 };

int coll_nccl_launch_channels(coll_nccl_algo a, coll_proto p, uint64_t s, int n_ranks, int comm_channels)
{
  if (p < 0 || p >= COLL_PROTO_COUNT)
    return MAX(comm_channels, 1);
  uint64_t nc = (uint64_t)MAX(comm_channels, 1), nt = (uint64_t)launch_threads[p];
  uint64_t thr = (uint64_t)launch_threshold[p];
  if (a == COLL_NALGO_RING && p == COLL_PROTO_LL)
    thr *= (uint64_t)MAX(n_ranks, 1);
  /* enqueue.cc getAlgoInfo: while (nBytes < nc * nt * threshold) drop a
   * channel, then halve the threads (in warps of 128) once at one. */
  while (s < nc * nt * thr) {
    if (nc >= 2)
      nc--;
    else if (nt % 128 == 0)
      nt /= 2;
    else
      break;
  }
  return (int)nc;
}

/* The host's cost per launched channel in NCCL <= 2.12, in us.  Per
 * channel and collective, ncclEnqueueCollKernel takes the next slot of
 * that channel's work FIFO (getNextOp, [nccl] src/enqueue.cc): it spins
 * on the slot's `active` flag, which the GPU cleared over PCIe (so the
 * host's read misses its caches), then zeroes the 512-byte slot (struct
 * ncclWork: NCCL_MAX_WORK_ELEMENTS 8 elements of 64 bytes,
 * src/include/devcomm.h) and copies the element in.  The FIFO holds
 * NCCL_MAX_OPS 2048 slots per channel (1 MiB, in host memory allocated by
 * ncclCudaHostCalloc, src/channel.cc), reused only after 2,047 other
 * collectives, so the slot's lines are not cached either: two memory
 * round trips in series per channel, the flag's read and the slot's
 * lines fetched for the stores.  [ASSUMPTION] one round trip = 122 ns,
 * AnandTech's full-random DRAM latency of AMD EPYC Rome (the CPU of DGX
 * A100 and Azure's A100 VMs; anandtech.com/show/14694, "Memory
 * Subsystem: Latency", 128 MB, NPS1).  Not fitted, but not blind
 * either: the SuperBench A100 rows had put it near 0.2 us before this
 * reading; below about 0.17 us the three SuperBench tables it helps
 * fall back (doc/collectives.md "Wave g27h", sensitivity). */
#define NCCL_WORK_SLOT_US (2 * 0.122)
/* The first version without the per-channel FIFO: 2.13 replaced it by
 * one work FIFO per communicator filled in batches ([nccl] tag v2.13.4-1
 * src/enqueue.cc, workFifoSent), whose host cost wisp leaves in the
 * launch. */
#define NCCL_VERSION_BATCHED_FIFO 21300

double coll_nccl_host_launch_us(double launch_us, int nccl_version, int launched_channels)
{
  if (nccl_version <= 0 || nccl_version >= NCCL_VERSION_BATCHED_FIFO)
    return launch_us;
  return launch_us + NCCL_WORK_SLOT_US * (double)MAX(launched_channels, 1);
}
