/* kineto_commreg.c: the communication-kernel registry (kineto_commreg.h)
 * and the sizes a workload card gives registry kernels.
 *
 * Sources of the names: DeepEP (deepseek-ai/DeepEP csrc/kernels:
 * intranode.cu, internode.cu, internode_ll.cu, layout.cu; DeepSeek's own
 * build spells the namespace dpsk::ep), NVSHMEM's on-stream collectives,
 * vLLM csrc/custom_all_reduce.cuh (cross_device_reduce_1stage/2stage) and
 * the TensorRT-LLM one-shot/two-shot kernels SGLang uses, MSCCL++ (its
 * mscclpp:: kernels and NCCL shim), PyTorch
 * torch/csrc/distributed/c10d/symm_mem (c10d::symmetric_memory::*),
 * torch_npu's HCCL task names (hcom_<op>_...), NCCL/RCCL (kineto.md §3)
 * and Cambricon CNCL.  Names not seen in a trace at hand are marked so in
 * doc/kineto.md.
 */
#include "config.h"

#include "frontends/kineto_commreg.h"

#include <string.h>

#define A2AV ET_COLL_ALL_TO_ALLV
#define AR ET_COLL_ALL_REDUCE
#define AG ET_COLL_ALL_GATHER
#define RS ET_COLL_REDUCE_SCATTER
#define BC ET_COLL_BROADCAST
#define A2A ET_COLL_ALL_TO_ALL
#define BAR ET_COLL_BARRIER
#define NONE ET_COLL_NONE

/* The table.  First match wins: specific patterns before general ones
 * (notify_dispatch before dispatch, internode_ll before internode). */
static const kt_commreg_entry registry[] = {
  /* NCCL / RCCL (and MSCCL, which runs NCCL's kernel names): kind from the token after Kernel_. */
  { "NCCL", "collective kernel", { "ncclKernel_", NULL }, TRUE, TRUE, NONE, 0, KT_CR_SIZE_ARGS, FALSE },
  { "NCCL", "collective kernel", { "ncclDevKernel_", NULL }, TRUE, TRUE, NONE, 0, KT_CR_SIZE_ARGS, FALSE },
  { "RCCL", "collective kernel", { "rcclKernel_", NULL }, TRUE, TRUE, NONE, 0, KT_CR_SIZE_ARGS, FALSE },
  { "RCCL", "collective kernel", { "rcclDevKernel_", NULL }, TRUE, TRUE, NONE, 0, KT_CR_SIZE_ARGS, FALSE },
  /* DeepEP: synchronisation and layout first, then low-latency, then normal kernels. */
  { "DeepEP", "notify_dispatch (count exchange)", { "::notify_dispatch", NULL }, FALSE, FALSE, BAR, 0,
    KT_CR_SIZE_SYNC, FALSE },
  { "DeepEP", "notify_combine (count exchange)", { "::notify_combine", NULL }, FALSE, FALSE, BAR, 0,
    KT_CR_SIZE_SYNC, FALSE },
  { "DeepEP", "cached_notify (buffer reset barrier)", { "::cached_notify", NULL }, FALSE, FALSE, BAR, 0,
    KT_CR_SIZE_SYNC, FALSE },
  { "DeepEP", "get_dispatch_layout (local)", { "::get_dispatch_layout", NULL }, FALSE, FALSE, NONE, 0,
    KT_CR_SIZE_LOCAL, FALSE },
  { "DeepEP", "clean_low_latency_buffer (local)", { "::clean_low_latency_buffer", NULL }, FALSE, FALSE, NONE, 0,
    KT_CR_SIZE_LOCAL, FALSE },
  { "DeepEP", "low-latency dispatch", { "::internode_ll::dispatch", NULL }, FALSE, FALSE, A2AV, 0,
    KT_CR_SIZE_MOE_DISPATCH, FALSE },
  { "DeepEP", "low-latency combine", { "::internode_ll::combine", NULL }, FALSE, FALSE, A2AV, 0,
    KT_CR_SIZE_MOE_COMBINE, FALSE },
  { "DeepEP", "internode dispatch", { "::internode::dispatch", NULL }, FALSE, FALSE, A2AV, 0,
    KT_CR_SIZE_MOE_DISPATCH, TRUE },
  { "DeepEP", "internode combine", { "::internode::combine", NULL }, FALSE, FALSE, A2AV, 0,
    KT_CR_SIZE_MOE_COMBINE, TRUE },
  { "DeepEP", "intranode dispatch", { "::intranode::dispatch", NULL }, FALSE, FALSE, A2AV, 0,
    KT_CR_SIZE_MOE_DISPATCH, FALSE },
  { "DeepEP", "intranode combine", { "::intranode::combine", NULL }, FALSE, FALSE, A2AV, 0,
    KT_CR_SIZE_MOE_COMBINE, FALSE },
  /* PyTorch symmetric memory (c10d::symmetric_memory::*_kernel). */
  { "PyTorch-SymmMem", "all-to-all", { "symmetric_memory::", "all_to_all" }, FALSE, FALSE, A2AV, 0,
    KT_CR_SIZE_ARGS, FALSE },
  { "PyTorch-SymmMem", "reduce-scatter", { "symmetric_memory::", "reduce_scatter" }, FALSE, FALSE, RS, 0,
    KT_CR_SIZE_ARGS, FALSE },
  { "PyTorch-SymmMem", "all-gather", { "symmetric_memory::", "all_gather" }, FALSE, FALSE, AG, 0,
    KT_CR_SIZE_ARGS, FALSE },
  { "PyTorch-SymmMem", "all-reduce", { "symmetric_memory::", "all_reduce" }, FALSE, FALSE, AR, 0,
    KT_CR_SIZE_TOKENS_HIDDEN, FALSE },
  { "PyTorch-SymmMem", "barrier", { "symmetric_memory::", "barrier" }, FALSE, FALSE, BAR, 0, KT_CR_SIZE_SYNC,
    FALSE },
  /* vLLM / SGLang custom all-reduce (vLLM cross_device_reduce_*, TensorRT-LLM one-/two-shot). */
  { "vLLM-CustomAR", "cross_device_reduce_1stage", { "cross_device_reduce_1stage", NULL }, FALSE, FALSE, AR, 0,
    KT_CR_SIZE_TOKENS_HIDDEN, FALSE },
  { "vLLM-CustomAR", "cross_device_reduce_2stage", { "cross_device_reduce_2stage", NULL }, FALSE, FALSE, AR, 0,
    KT_CR_SIZE_TOKENS_HIDDEN, FALSE },
  { "CustomAR", "one-shot all-reduce", { "oneshot", "allreduce" }, FALSE, FALSE, AR, 0, KT_CR_SIZE_TOKENS_HIDDEN,
    FALSE },
  { "CustomAR", "one-shot all-reduce", { "one_shot", "all_reduce" }, FALSE, FALSE, AR, 0, KT_CR_SIZE_TOKENS_HIDDEN,
    FALSE },
  { "CustomAR", "two-shot all-reduce", { "twoshot", "allreduce" }, FALSE, FALSE, AR, 0, KT_CR_SIZE_TOKENS_HIDDEN,
    FALSE },
  { "CustomAR", "two-shot all-reduce", { "two_shot", "all_reduce" }, FALSE, FALSE, AR, 0, KT_CR_SIZE_TOKENS_HIDDEN,
    FALSE },
  { "CustomAR", "custom_all_reduce", { "custom_all_reduce", NULL }, FALSE, FALSE, AR, 0, KT_CR_SIZE_TOKENS_HIDDEN,
    FALSE },
  /* MSCCL++: typed kernels, then the executor and anything else in its namespace (kind from args). */
  { "MSCCL++", "all-reduce", { "mscclpp", "allreduce" }, FALSE, FALSE, AR, 0, KT_CR_SIZE_TOKENS_HIDDEN, FALSE },
  { "MSCCL++", "all-gather", { "mscclpp", "allgather" }, FALSE, FALSE, AG, 0, KT_CR_SIZE_ARGS, FALSE },
  { "MSCCL++", "reduce-scatter", { "mscclpp", "reducescatter" }, FALSE, FALSE, RS, 0, KT_CR_SIZE_ARGS, FALSE },
  { "MSCCL++", "all-to-all", { "mscclpp", "alltoall" }, FALSE, FALSE, A2A, 0, KT_CR_SIZE_ARGS, FALSE },
  { "MSCCL++", "kernel (kind from args)", { "mscclpp", NULL }, FALSE, FALSE, NONE, 0, KT_CR_SIZE_ARGS, FALSE },
  { "MSCCL", "kernel (kind from args)", { "msccl", NULL }, TRUE, FALSE, NONE, 0, KT_CR_SIZE_ARGS, FALSE },
  /* NVSHMEM collectives (nvshmem[x|i]_<op>..._on_stream kernels). */
  { "NVSHMEM", "all-to-all", { "nvshmem", "alltoall" }, FALSE, FALSE, A2A, 0, KT_CR_SIZE_ARGS, FALSE },
  { "NVSHMEM", "all-gather (fcollect)", { "nvshmem", "fcollect" }, FALSE, FALSE, AG, 0, KT_CR_SIZE_ARGS, FALSE },
  { "NVSHMEM", "all-gather (collect)", { "nvshmem", "collect" }, FALSE, FALSE, AG, 0, KT_CR_SIZE_ARGS, FALSE },
  { "NVSHMEM", "reduce-scatter", { "nvshmem", "reducescatter" }, FALSE, FALSE, RS, 0, KT_CR_SIZE_ARGS, FALSE },
  { "NVSHMEM", "all-reduce", { "nvshmem", "reduce" }, FALSE, FALSE, AR, 0, KT_CR_SIZE_ARGS, FALSE },
  { "NVSHMEM", "broadcast", { "nvshmem", "broadcast" }, FALSE, FALSE, BC, 0, KT_CR_SIZE_ARGS, FALSE },
  { "NVSHMEM", "barrier", { "nvshmem", "barrier" }, FALSE, FALSE, BAR, 0, KT_CR_SIZE_SYNC, FALSE },
  { "NVSHMEM", "sync", { "nvshmem", "sync" }, FALSE, FALSE, BAR, 0, KT_CR_SIZE_SYNC, FALSE },
  /* HCCL (torch_npu traces: hcom_<op>_<id>...). */
  { "HCCL", "all-reduce", { "hcom_allreduce", NULL }, TRUE, FALSE, AR, 0, KT_CR_SIZE_ARGS, FALSE },
  { "HCCL", "all-gather", { "hcom_allgather", NULL }, TRUE, FALSE, AG, 0, KT_CR_SIZE_ARGS, FALSE },
  { "HCCL", "reduce-scatter", { "hcom_reducescatter", NULL }, TRUE, FALSE, RS, 0, KT_CR_SIZE_ARGS, FALSE },
  { "HCCL", "broadcast", { "hcom_broadcast", NULL }, TRUE, FALSE, BC, 0, KT_CR_SIZE_ARGS, FALSE },
  { "HCCL", "all-to-allv", { "hcom_alltoallv", NULL }, TRUE, FALSE, A2AV, 0, KT_CR_SIZE_ARGS, FALSE },
  { "HCCL", "all-to-all", { "hcom_alltoall", NULL }, TRUE, FALSE, A2A, 0, KT_CR_SIZE_ARGS, FALSE },
  { "HCCL", "send", { "hcom_send", NULL }, TRUE, FALSE, NONE, 1, KT_CR_SIZE_ARGS, FALSE },
  { "HCCL", "receive", { "hcom_receive", NULL }, TRUE, FALSE, NONE, 2, KT_CR_SIZE_ARGS, FALSE },
  /* Cambricon CNCL (kind and size from the kernel's Collective name args). */
  { "CNCL", "collective kernel", { "cncl", NULL }, TRUE, FALSE, NONE, 0, KT_CR_SIZE_ARGS, FALSE },
};

#undef A2AV
#undef AR
#undef AG
#undef RS
#undef BC
#undef A2A
#undef BAR
#undef NONE

const kt_commreg_entry *kt_commreg_table(size_t *n)
{
  *n = G_N_ELEMENTS(registry);
  return registry;
}

/* Case-insensitive substring search (ASCII): O(|h| x |n|) worst case. */
static const char *find_ci(const char *h, const char *n)
{
  size_t ln = strlen(n);
  for (; *h; h++)
    if (!g_ascii_strncasecmp(h, n, ln))
      return h;
  return NULL;
}

static gboolean entry_matches(const kt_commreg_entry *e, const char *name)
{
  const char *p;
  if (e->prefix)
    p = g_ascii_strncasecmp(name, e->pat[0], strlen(e->pat[0])) ? NULL : name;
  else
    p = find_ci(name, e->pat[0]);
  if (!p)
    return FALSE;
  return !e->pat[1] || find_ci(p + strlen(e->pat[0]), e->pat[1]) != NULL;
}

const kt_commreg_entry *kt_commreg_lookup(const char *name)
{
  if (!name)
    return NULL;
  for (size_t i = 0; i < G_N_ELEMENTS(registry); i++)
    if (entry_matches(&registry[i], name))
      return &registry[i];
  return NULL;
}

gboolean kt_commreg_looks_like_comm(const char *name)
{
  static const char *const words[] = {
    "dispatch", "combine", "allreduce", "all_reduce", "allgather", "all_gather", "reducescatter", "reduce_scatter",
    "alltoall", "all_to_all", "nvshmem", "sendrecv", "cross_device", "multimem", "broadcast_kernel", "p2p",
  };
  if (!name)
    return FALSE;
  /* CUB's device-wide algorithms carry their policy classes in the kernel
   * name ("cub::DeviceReduceByKeyKernel<cub::DispatchReduceByKey<...>"),
   * which says "Dispatch" without being MoE dispatch: those names are
   * local work (seen in the DLRM traces). */
  gboolean cub = find_ci(name, "cub::") != NULL;
  for (size_t i = 0; i < G_N_ELEMENTS(words); i++)
    if (find_ci(name, words[i]) && !(cub && strcmp(words[i], "dispatch") == 0))
      return TRUE;
  return FALSE;
}

gboolean kt_commreg_cpu_op(const char *n)
{
  return g_str_has_prefix(n, "_C_custom_ar::") || g_str_has_prefix(n, "vllm::all_reduce") ||
         g_str_has_prefix(n, "symm_mem::") || g_str_has_prefix(n, "sgl_kernel::all_reduce") ||
         g_str_has_prefix(n, "trtllm::") || g_str_has_prefix(n, "mscclpp");
}

gboolean kt_commreg_launch_name(const char *n)
{
  /* CNRT (cnrtInvokeKernel, cnrtInvokeKernel_V2/_V3, cnrtInvokeFunction...) and CNDrv (cnInvokeKernel...)
   * launches, and the asynchronous copies and sets of both (cnrtMemcpyAsync, cnMemsetD8Async...). */
  if (!g_str_has_prefix(n, "cn"))
    return FALSE;
  if (strstr(n, "Invoke"))
    return TRUE;
  return (strstr(n, "Memcpy") || strstr(n, "Memset")) && strstr(n, "Async");
}

gboolean kt_commreg_host_sync_name(const char *n)
{
  static const char *const sync[] = { "cnrtQueueSync", "cnrtSyncQueue", "cnrtSyncDevice", "cnQueueSync",
                                      "cnCtxSync", "cnrtNotifierSync", NULL };
  for (int i = 0; sync[i]; i++)
    if (!strcmp(n, sync[i]))
      return TRUE;
  return FALSE;
}

/* The group of size deg holding rank: consecutive ranks [k deg, (k+1) deg)
 * (the usual placement of EP and TP groups), or all of world. */
static int *card_group(int64_t deg, int rank, int world, int *n)
{
  if (deg <= 0 || deg > world || world % deg)
    deg = world;
  int base = (int)(rank / deg * deg);
  int *r = g_new(int, deg);
  for (int i = 0; i < (int)deg; i++)
    r[i] = base + i;
  *n = (int)deg;
  return r;
}

gboolean kt_commreg_card_size(const kt_commreg_entry *e, const fe_workload_card *card, int rank, int world,
                              int **ranks, int *n, uint64_t *bytes, uint64_t **splits, const char **why)
{
  *ranks = NULL;
  *splits = NULL;
  *bytes = 0;
  *n = 0;
  if (!card) {
    *why = "no workload card (--card)";
    return FALSE;
  }
  if (e->size == KT_CR_SIZE_SYNC) {
    *ranks = card_group(card->ep_degree, rank, world, n);
    *why = "synchronisation: no payload, group = EP degree";
    return TRUE;
  }
  if (card->hidden_size <= 0 || card->tokens_per_rank <= 0 || card->dtype_bytes <= 0) {
    *why = "the card lacks workload.model.hidden_size, the tokens per rank (workload.data) or the precision";
    return FALSE;
  }
  uint64_t h = (uint64_t)card->hidden_size, t = (uint64_t)card->tokens_per_rank;
  switch (e->size) {
  case KT_CR_SIZE_TOKENS_HIDDEN:
    *ranks = card_group(card->tp_degree, rank, world, n);
    *bytes = t * h * (uint64_t)card->dtype_bytes;
    *why = "card: tokens_per_rank x hidden_size x precision, group = TP degree";
    return TRUE;
  case KT_CR_SIZE_MOE_DISPATCH:
  case KT_CR_SIZE_MOE_COMBINE: {
    if (card->top_k <= 0) {
      *why = "the card lacks workload.model.moe_top_k";
      return FALSE;
    }
    int b = e->size == KT_CR_SIZE_MOE_DISPATCH && card->dispatch_dtype_bytes > 0 ? card->dispatch_dtype_bytes
                                                                                 : card->dtype_bytes;
    *ranks = card_group(card->ep_degree, rank, world, n);
    /* Balanced routing: the T x k token copies are spread evenly over the
     * EP group's members (self included; it does not cross the network),
     * the remainder one each to the first members. */
    uint64_t copies = t * (uint64_t)card->top_k, q = (uint64_t)*n;
    *splits = g_new(uint64_t, *n);
    for (uint64_t i = 0; i < q; i++)
      (*splits)[i] = (copies / q + (i < copies % q ? 1 : 0)) * h * (uint64_t)b;
    *bytes = copies * h * (uint64_t)b;
    *why = e->size == KT_CR_SIZE_MOE_DISPATCH
             ? "card: tokens_per_rank x moe_top_k x hidden_size x dispatch precision, balanced over the EP group"
             : "card: tokens_per_rank x moe_top_k x hidden_size x precision, balanced over the EP group";
    return TRUE;
  }
  default:
    *why = "the registry entry has no card rule";
    return FALSE;
  }
}

gboolean kt_commreg_two_hop(const kt_commreg_entry *e, const fe_workload_card *card, int group_size, uint8_t *mode,
                            uint32_t *ppm, const char **why)
{
  *mode = ET_TWO_HOP_NONE;
  *ppm = 1000000u;
  *why = NULL;
  if (!e->two_hop || card == NULL || card->top_k <= 0 ||
      (e->size != KT_CR_SIZE_MOE_DISPATCH && e->size != KT_CR_SIZE_MOE_COMBINE))
    return FALSE;
  gboolean disp = e->size == KT_CR_SIZE_MOE_DISPATCH;
  *mode = disp ? ET_TWO_HOP_DISPATCH : ET_TWO_HOP_COMBINE;
  /* The size source of the card rule (kt_commreg_card_size) with the
   * two-hop rule after it, one static sentence per case. */
  static const char *const text[2][2] = {
    { "card: tokens_per_rank x moe_top_k x hidden_size x precision, balanced over the EP group; two-hop "
      "(DeepEP internode combine: scale-up gather, then scale-out), no per-node deduplication: the card lacks "
      "workload.hardware.xpu_spec.count_per_node or it does not divide the EP group",
      "card: tokens_per_rank x moe_top_k x hidden_size x precision, balanced over the EP group; two-hop "
      "(DeepEP internode combine: scale-up gather, then scale-out once per distinct node of a token, "
      "E[nodes] = min(top_k, EP / count_per_node))" },
    { "card: tokens_per_rank x moe_top_k x hidden_size x dispatch precision, balanced over the EP group; "
      "two-hop (DeepEP internode dispatch: scale-out, then scale-up forwarding), no per-node deduplication: "
      "the card lacks workload.hardware.xpu_spec.count_per_node or it does not divide the EP group",
      "card: tokens_per_rank x moe_top_k x hidden_size x dispatch precision, balanced over the EP group; "
      "two-hop (DeepEP internode dispatch: scale-out once per distinct node of a token, E[nodes] = min(top_k, "
      "EP / count_per_node), then scale-up forwarding)" },
  };
  int64_t g = card->gpus_per_node;
  if (g <= 0 || group_size % g != 0) {
    *why = text[disp][0];
    return TRUE;
  }
  int64_t nodes = group_size / g, k = card->top_k;
  if (nodes < k)
    *ppm = (uint32_t)((nodes * 1000000 + k / 2) / k);
  *why = text[disp][1];
  return TRUE;
}

char *kt_commreg_summary(const kt_commreg_entry *const *entries, size_t n, size_t n_other)
{
  if (n == 0 && n_other == 0)
    return NULL;
  uint64_t count[G_N_ELEMENTS(registry)] = { 0 };
  for (size_t i = 0; i < n; i++)
    if (entries[i])
      count[entries[i] - registry]++;
  GString *s = g_string_new(NULL);
  const char *lib = NULL;
  for (size_t i = 0; i < G_N_ELEMENTS(registry); i++) {
    if (!count[i])
      continue;
    gboolean same = lib && !strcmp(lib, registry[i].library);
    if (same)
      g_string_append_printf(s, ", %s %" G_GUINT64_FORMAT, registry[i].what, count[i]);
    else
      g_string_append_printf(s, "%s%s: %s %" G_GUINT64_FORMAT, s->len ? "; " : "", registry[i].library,
                             registry[i].what, count[i]);
    lib = registry[i].library;
  }
  if (n_other)
    g_string_append_printf(s, "%sother (Collective name args only): %" G_GSIZE_FORMAT, s->len ? "; " : "", n_other);
  return g_string_free(s, FALSE);
}
