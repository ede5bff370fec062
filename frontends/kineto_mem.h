/* kineto_mem.h: Kineto [memory] events and the buffer each communication
 * kernel uses (input of the communication library's buffer lifecycle,
 * doc/libraries.md "Buffer lifecycle from traces").
 *
 * The parser (kineto_classify.c) keeps every [memory] instant that names a
 * device allocation as a kt_event of kind KT_EV_MEMORY (kineto_trace.h).
 *
 * Linking rule (a heuristic, because Kineto records no buffer address on
 * kernels or on record_param_comms): the buffer of a communication kernel
 * is the most recent allocation on the kernel's device that is still live
 * when the kernel is launched (CPU time of its launch) and whose size fits
 * the collective's input: Bytes in [S, round512(S) + slack] with S the
 * Chakra comm_size, round512 the caching allocator's 512-byte rounding and
 * slack 1 MiB for requests above 1 MiB (an unsplit large-pool block), else 0
 * (pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp).  When no input-sized
 * allocation fits, the output size (all-gather n*S, reduce-scatter S/n) is
 * tried.  Kernels without a launch, without a size or without a fitting
 * live allocation stay unlinked (and use the synthetic lifecycle); a
 * kernel with several fitting candidates is linked to the latest and
 * counted as ambiguous.
 */
#ifndef WISP_KINETO_MEM_H
#define WISP_KINETO_MEM_H

#include "frontends/kineto_rank.h"

G_BEGIN_DECLS

typedef struct {
  uint64_t mem_events;     /* kept [memory] events (allocations + frees) */
  uint64_t comms;          /* communication kernels considered */
  uint64_t linked;         /* of them linked to an allocation */
  uint64_t ambiguous;      /* linked, but more than one allocation fitted */
  uint64_t by_output;      /* linked through the output size */
  uint64_t no_launch;      /* unlinked: the kernel has no launch event (no CPU time) */
  uint64_t no_size;        /* unlinked: comm_size 0 */
  uint64_t no_match;       /* unlinked: no live allocation of a fitting size */
  uint64_t unknown_frees;  /* frees of addresses allocated before the trace */
} kt_mem_stats;

/* Links every kt_comm of r (out: r->comms->len entries, written) by the
 * rule above.  O((M + C) log M) for M memory events and C communication
 * kernels, plus the candidates examined per kernel; memory O(M).
 * kt_rank_extract calls it once per rank and keeps the result in
 * kt_rank.buf_links, which the graph stage copies into the COMM nodes
 * (kineto.c). */
void kt_mem_link(const kt_rank *r, kt_buf_link *out, kt_mem_stats *st);
/* The report line for a rank, or NULL when its trace has no kept memory
 * events (then every collective uses the synthetic lifecycle). */
char *kt_mem_summary(int rank, const kt_mem_stats *st);

G_END_DECLS
#endif
