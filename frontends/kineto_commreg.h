/* kineto_commreg.h: the communication-kernel registry (private to the
 * Kineto frontend's extract stage, exposed for tests).
 *
 * One table (kineto_commreg.c, documented in doc/kineto.md,
 * "Communication-kernel registry") maps kernel name patterns of every
 * communication library wisp knows to a library, a collective type and a
 * rule for finding the size when the kernel does not carry it.  Adding a
 * library is one table entry plus a test (regress/test_commreg.c).
 *
 * Matching is case-insensitive on the kernel's full name (demangled C++
 * names start with "void ..." and carry template arguments, so patterns
 * are substrings, or prefixes when marked).  The first matching entry
 * wins; entries are ordered most specific first.  A lookup costs
 * O(entries x name length); the extract stage caches it per interned name,
 * so a trace pays it once per distinct kernel name.
 */
#ifndef WISP_KINETO_COMMREG_H
#define WISP_KINETO_COMMREG_H

#include "chakra/et_graph.h"
#include "frontends/fe.h"

G_BEGIN_DECLS

/* How a registry kernel's size is found when neither its args nor a
 * linked CPU op (the generic rules of doc/kineto.md) give one. */
typedef enum {
  KT_CR_SIZE_ARGS = 0,     /* kernel args / CPU ops only; else unknown size */
  KT_CR_SIZE_MOE_DISPATCH, /* card: tokens x top-k x hidden x dispatch dtype, split by routing over the EP group */
  KT_CR_SIZE_MOE_COMBINE,  /* card: the same volume in the reverse direction, combine dtype */
  KT_CR_SIZE_TOKENS_HIDDEN,/* card: tokens x hidden x dtype (a tensor-parallel activation all-reduce) */
  KT_CR_SIZE_SYNC,         /* a small synchronisation: a barrier of the group, no payload */
  KT_CR_SIZE_LOCAL,        /* recognised, but local work (no communication): kept as compute */
} kt_cr_size;

typedef struct {
  const char *library;     /* "NCCL", "DeepEP", ... */
  const char *what;        /* short description for reports: "internode dispatch" */
  const char *pat[2];      /* case-insensitive substrings that must occur in order (pat[1] may be NULL) */
  gboolean prefix;         /* pat[0] must start the name */
  gboolean kind_from_name; /* kind from the NCCL-style token after "Kernel_" (kt_coll_from_kernel) */
  et_coll_type coll;       /* kind when !kind_from_name (ET_COLL_NONE with p2p for send/recv; */
  int p2p;                 /*   ET_COLL_NONE, p2p 0: only from Collective name or CPU ops) */
  kt_cr_size size;
  gboolean two_hop;        /* scale-out to the same local index, then scale-up forwarding (DeepEP internode) */
} kt_commreg_entry;

/* The registry entry of a kernel name, or NULL. */
const kt_commreg_entry *kt_commreg_lookup(const char *kernel_name);
/* The whole table (n entries) for documentation and tests. */
const kt_commreg_entry *kt_commreg_table(size_t *n);
/* A kernel name that looks like communication (dispatch, combine,
 * allreduce, alltoall, nvshmem, ...) without a registry entry: such kernels
 * are counted and named by `wisp inspect` so that a new library is noticed
 * rather than silently replayed as compute. */
gboolean kt_commreg_looks_like_comm(const char *kernel_name);
/* A CPU-side op whose Input Dims size a registry kernel (vLLM's
 * _C_custom_ar::all_reduce, symm_mem::*, ...): the parser keeps it like
 * nccl:* ops. */
gboolean kt_commreg_cpu_op(const char *name);
/* A runtime call that launches device work in a runtime wisp knows only by
 * name (Cambricon CNRT/CNDrv: cnrtInvokeKernel*, cnInvokeKernel*,
 * cnrtMemcpyAsync, ...), for the host launch model. */
gboolean kt_commreg_launch_name(const char *name);
/* A host synchronisation call of such a runtime (cnrtQueueSync,
 * cnrtSyncQueue, cnrtSyncDevice, cnQueueSync, cnCtxSync). */
gboolean kt_commreg_host_sync_name(const char *name);

/* Group and size of a registry kernel from a workload card.  Fills
 * *ranks (g_malloc'd, *n members: the EP or TP group holding rank, or all
 * of world when the card gives no degree), *bytes (the per-rank size in
 * Chakra's comm_size sense) and, for the MoE all-to-allv, *splits (per
 * member bytes sent, g_malloc'd; NULL otherwise).  *why names the card
 * fields used.  FALSE when the card lacks a field the rule needs (then
 * *why names it). */
gboolean kt_commreg_card_size(const kt_commreg_entry *e, const fe_workload_card *card, int rank, int world,
                              int **ranks, int *n, uint64_t *bytes, uint64_t **splits, const char **why);

/* The two-hop marking of a card-sized registry all_to_allv (DeepEP's
 * internode dispatch and combine, e->two_hop): *mode = ET_TWO_HOP_DISPATCH
 * or ET_TWO_HOP_COMBINE (0 for other entries: FALSE) and *ppm the scale-out
 * deduplication ratio in millionths.  Balanced routing sends a token's k
 * copies to E[nodes] = min(k, N) distinct nodes of the N = EP degree /
 * count_per_node nodes (the per-node balanced assumption: the copies
 * spread over as many nodes as they can), where the flat splits count k/N
 * copies per node; the ratio is E[nodes] / k = min(1, N / k).  Without
 * count_per_node (or when it does not divide the EP degree) the ratio is 1
 * (no deduplication).  *why names the rule.  O(1). */
gboolean kt_commreg_two_hop(const kt_commreg_entry *e, const fe_workload_card *card, int group_size, uint8_t *mode,
                            uint32_t *ppm, const char **why);

/* "NCCL: collective kernel 3; DeepEP: internode dispatch 8, ...": the
 * communication kernels by library and entry in table order (entries[i]
 * is a kernel's entry or NULL), plus n_other kernels known only by their
 * Collective name; NULL when there are none.  g_free the result.
 * O(n + table). */
char *kt_commreg_summary(const kt_commreg_entry *const *entries, size_t n, size_t n_other);

G_END_DECLS
#endif
