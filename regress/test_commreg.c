/* test_commreg.c: the communication-kernel registry
 * (frontends/kineto_commreg.c), workload cards (frontends/fe_card.c) and
 * their use by the Kineto extract stage.
 *
 * Every registry entry is checked by a kernel name of its library (names
 * from the libraries' sources, as cited in kineto_commreg.c).  Sizes are
 * checked on generated two-rank traces: from the card (DeepEP dispatch and
 * combine, a custom all-reduce), from the enclosing CPU op's Input Dims
 * (vLLM's _C_custom_ar::all_reduce), and without any source (replayed at
 * the measured duration, reported).  Expected values are computed in the
 * comments from the card's numbers.
 */
#include "config.h"
#include "regress/test_util.h"

#include "frontends/kineto_commreg.h"
#include "frontends/kineto_rank.h"

#include <glib/gstdio.h>
#include <string.h>

/* ---------- helpers ---------- */

static char *write_file(const char *dir, const char *name, const char *text)
{
  char *p = g_build_filename(dir, name, NULL);
  g_assert_true(g_file_set_contents(p, text, -1, NULL));
  return p;
}

/* Removes dir (one level of files) and frees its name. */
static void rm_tree(char *dir)
{
  GDir *d = g_dir_open(dir, 0, NULL);
  const char *n;
  while (d && (n = g_dir_read_name(d))) {
    char *p = g_build_filename(dir, n, NULL);
    g_unlink(p);
    g_free(p);
  }
  if (d)
    g_dir_close(d);
  g_rmdir(dir);
  g_free(dir);
}

/* One kernel launched by cudaLaunchKernel on thread 1 (launch at ts - 5
 * us, 2 us long), correlation corr, on stream 20 (comm) or 7. */
static void add_kernel(GString *s, const char *name, int ts, int dur, int corr, int stream, const char *extra_args)
{
  char *esc = g_strescape(name, NULL);
  g_string_append_printf(s,
                         ",{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
                         "\"ts\":%d,\"dur\":2,\"args\":{\"correlation\":%d}}"
                         ",{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":0,\"tid\":%d,\"ts\":%d,\"dur\":%d,"
                         "\"args\":{\"correlation\":%d,\"stream\":%d%s}}",
                         ts - 5, corr, esc, stream, ts, dur, corr, stream, extra_args ? extra_args : "");
  g_free(esc);
}

static const char *const DISPATCH = "void deep_ep::internode::dispatch<false, 2, false, 8>(int4*, float*)";
static const char *const COMBINE = "void dpsk::ep::internode::combine<false, 2, __nv_bfloat16>(int4*, float*)";
static const char *const NOTIFY = "void deep_ep::internode::notify_dispatch<false, 2>(int const*, long*)";
static const char *const LAYOUT = "void deep_ep::layout::get_dispatch_layout<256, 32, 8>(long const*, int*)";
static const char *const LOOKALIKE = "my_fused_moe_dispatch_kernel<float>";

/* A two-rank MoE step: notify, dispatch, expert GEMM, combine, plus a
 * layout kernel and a kernel that only looks like communication. */
static char *moe_trace_of(int rank, int world)
{
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "{\"distributedInfo\":{\"rank\":%d,\"world_size\":%d},\"traceEvents\":["
                         "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,"
                         "\"ts\":0,\"dur\":1000,\"args\":{}}", rank, world);
  add_kernel(s, LAYOUT, 10, 5, 101, 7, NULL);
  add_kernel(s, NOTIFY, 20, 10, 102, 20, NULL);
  add_kernel(s, DISPATCH, 40, 100, 103, 20, NULL);
  add_kernel(s, "sm90_gemm_bf16", 150, 200, 104, 7, NULL);
  add_kernel(s, COMBINE, 360, 120, 105, 20, NULL);
  add_kernel(s, LOOKALIKE, 500, 30, 106, 7, NULL);
  g_string_append(s, "]}");
  return g_string_free(s, FALSE);
}

static char *moe_trace(int rank)
{
  return moe_trace_of(rank, 2);
}

static char *moe_dir(void)
{
  char *dir = g_dir_make_tmp("wisp-commreg-XXXXXX", NULL);
  g_assert_nonnull(dir);
  for (int r = 0; r < 2; r++) {
    char *j = moe_trace(r), *n = g_strdup_printf("rank%d.json", r);
    g_free(write_file(dir, n, j));
    g_free(j);
    g_free(n);
  }
  return dir;
}

static uint32_t find_node(const et_graph *g, const char *name)
{
  for (uint32_t i = 0; i < g->n_nodes; i++)
    if (!strcmp(et_node_name(g, i), name))
      return i;
  g_assert_not_reached();
  return 0;
}

static fe_workload_card *card_from(const char *dir, const char *text)
{
  char *p = write_file(dir, "card.yaml", text);
  GError *e = NULL;
  cfg_card *doc = cfg_card_load(p, &e);
  g_assert_no_error(e);
  fe_workload_card *c = fe_card_from_doc(doc, &e);
  g_assert_no_error(e);
  cfg_card_free(doc);
  g_free(p);
  return c;
}

static gboolean has_warning(const fe_kineto_report *r, const char *needle)
{
  for (guint i = 0; i < r->warnings->len; i++)
    if (strstr(g_ptr_array_index(r->warnings, i), needle))
      return TRUE;
  return FALSE;
}

/* ---------- names: one kernel per registry entry ---------- */

static void test_names(void)
{
  static const struct { const char *name, *library; et_coll_type coll; int p2p; kt_cr_size size; } cases[] = {
    { "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", "NCCL", ET_COLL_NONE, 0,
      KT_CR_SIZE_ARGS },
    { "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "NCCL", ET_COLL_NONE, 0, KT_CR_SIZE_ARGS },
    { "rcclKernel_AllReduce_RING_LL", "RCCL", ET_COLL_NONE, 0, KT_CR_SIZE_ARGS },
    { "rcclDevKernel_Generic", "RCCL", ET_COLL_NONE, 0, KT_CR_SIZE_ARGS },
    { "void deep_ep::internode::notify_dispatch<false, 8>(int const*)", "DeepEP", ET_COLL_BARRIER, 0, KT_CR_SIZE_SYNC },
    { "void deep_ep::intranode::notify_combine<8>(void**)", "DeepEP", ET_COLL_BARRIER, 0, KT_CR_SIZE_SYNC },
    { "void dpsk::ep::internode::cached_notify<false>(int, int)", "DeepEP", ET_COLL_BARRIER, 0, KT_CR_SIZE_SYNC },
    { "void dpsk::ep::cuda::get_dispatch_layout<256, 32, 8>(long const*)", "DeepEP", ET_COLL_NONE, 0,
      KT_CR_SIZE_LOCAL },
    { "void deep_ep::internode_ll::clean_low_latency_buffer<32>(int*)", "DeepEP", ET_COLL_NONE, 0, KT_CR_SIZE_LOCAL },
    { "void deep_ep::internode_ll::dispatch<false, 3, 7168>(void*)", "DeepEP", ET_COLL_ALL_TO_ALLV, 0,
      KT_CR_SIZE_MOE_DISPATCH },
    { "void deep_ep::internode_ll::combine<false, 3, 7168>(void*)", "DeepEP", ET_COLL_ALL_TO_ALLV, 0,
      KT_CR_SIZE_MOE_COMBINE },
    { "void dpsk::ep::internode::dispatch<false, 8, true, 8>(int4*)", "DeepEP", ET_COLL_ALL_TO_ALLV, 0,
      KT_CR_SIZE_MOE_DISPATCH },
    { "void dpsk::ep::internode::combine<false, 8, __nv_bfloat16>(int4*)", "DeepEP", ET_COLL_ALL_TO_ALLV, 0,
      KT_CR_SIZE_MOE_COMBINE },
    { "void deep_ep::intranode::dispatch<8, 768, 8192>(int4*)", "DeepEP", ET_COLL_ALL_TO_ALLV, 0,
      KT_CR_SIZE_MOE_DISPATCH },
    { "void deep_ep::intranode::combine<__nv_bfloat16, 8, 768>(void*)", "DeepEP", ET_COLL_ALL_TO_ALLV, 0,
      KT_CR_SIZE_MOE_COMBINE },
    { "void c10d::symmetric_memory::all_to_all_vdev(void*)", "PyTorch-SymmMem", ET_COLL_ALL_TO_ALLV, 0,
      KT_CR_SIZE_ARGS },
    { "void c10d::symmetric_memory::reduce_scatter_kernel<float>(void*)", "PyTorch-SymmMem", ET_COLL_REDUCE_SCATTER,
      0, KT_CR_SIZE_ARGS },
    { "void c10d::symmetric_memory::all_gather_kernel(void*)", "PyTorch-SymmMem", ET_COLL_ALL_GATHER, 0,
      KT_CR_SIZE_ARGS },
    { "void c10d::symmetric_memory::one_shot_all_reduce_kernel<c10::BFloat16, 8>(void*)", "PyTorch-SymmMem",
      ET_COLL_ALL_REDUCE, 0, KT_CR_SIZE_TOKENS_HIDDEN },
    { "void c10d::symmetric_memory::barrier_kernel(void*)", "PyTorch-SymmMem", ET_COLL_BARRIER, 0, KT_CR_SIZE_SYNC },
    { "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*)", "vLLM-CustomAR",
      ET_COLL_ALL_REDUCE, 0, KT_CR_SIZE_TOKENS_HIDDEN },
    { "void vllm::cross_device_reduce_2stage<float, 4>(vllm::RankData*)", "vLLM-CustomAR", ET_COLL_ALL_REDUCE, 0,
      KT_CR_SIZE_TOKENS_HIDDEN },
    { "void tensorrt_llm::oneShotAllReduceKernel<__nv_bfloat16, 8>(AllReduceParams)", "CustomAR",
      ET_COLL_ALL_REDUCE, 0, KT_CR_SIZE_TOKENS_HIDDEN },
    { "void sglang::one_shot_all_reduce<half>(void*)", "CustomAR", ET_COLL_ALL_REDUCE, 0, KT_CR_SIZE_TOKENS_HIDDEN },
    { "void tensorrt_llm::twoShotAllReduceKernel<float, 4>(AllReduceParams)", "CustomAR", ET_COLL_ALL_REDUCE, 0,
      KT_CR_SIZE_TOKENS_HIDDEN },
    { "void sglang::two_shot_all_reduce<half>(void*)", "CustomAR", ET_COLL_ALL_REDUCE, 0, KT_CR_SIZE_TOKENS_HIDDEN },
    { "custom_all_reduce_kernel<bf16>", "CustomAR", ET_COLL_ALL_REDUCE, 0, KT_CR_SIZE_TOKENS_HIDDEN },
    { "void mscclpp::allreduce7<__nv_bfloat16>(void*)", "MSCCL++", ET_COLL_ALL_REDUCE, 0, KT_CR_SIZE_TOKENS_HIDDEN },
    { "void mscclpp::allgather6(void*)", "MSCCL++", ET_COLL_ALL_GATHER, 0, KT_CR_SIZE_ARGS },
    { "void mscclpp::reduceScatterKernel(void*)", "MSCCL++", ET_COLL_REDUCE_SCATTER, 0, KT_CR_SIZE_ARGS },
    { "void mscclpp::alltoallKernel(void*)", "MSCCL++", ET_COLL_ALL_TO_ALL, 0, KT_CR_SIZE_ARGS },
    { "void mscclpp::executionKernel<__nv_bfloat16>(int, void*)", "MSCCL++", ET_COLL_NONE, 0, KT_CR_SIZE_ARGS },
    { "msccl_kernel_Sum_float", "MSCCL", ET_COLL_NONE, 0, KT_CR_SIZE_ARGS },
    { "void nvshmemi_alltoall_on_stream_kernel<int>(int)", "NVSHMEM", ET_COLL_ALL_TO_ALL, 0, KT_CR_SIZE_ARGS },
    { "void nvshmemi_fcollect_on_stream_kernel<float>(int)", "NVSHMEM", ET_COLL_ALL_GATHER, 0, KT_CR_SIZE_ARGS },
    { "void nvshmemi_collect_on_stream_kernel<float>(int)", "NVSHMEM", ET_COLL_ALL_GATHER, 0, KT_CR_SIZE_ARGS },
    { "void nvshmemi_reducescatter_on_stream_kernel<float>(int)", "NVSHMEM", ET_COLL_REDUCE_SCATTER, 0,
      KT_CR_SIZE_ARGS },
    { "void nvshmemi_sum_reduce_on_stream_kernel<float>(int)", "NVSHMEM", ET_COLL_ALL_REDUCE, 0, KT_CR_SIZE_ARGS },
    { "void nvshmemi_broadcast_on_stream_kernel<float>(int)", "NVSHMEM", ET_COLL_BROADCAST, 0, KT_CR_SIZE_ARGS },
    { "void nvshmemi_barrier_on_stream_kernel(int)", "NVSHMEM", ET_COLL_BARRIER, 0, KT_CR_SIZE_SYNC },
    { "void nvshmemi_sync_all_on_stream_kernel(int)", "NVSHMEM", ET_COLL_BARRIER, 0, KT_CR_SIZE_SYNC },
    { "hcom_allReduce__562_0_1", "HCCL", ET_COLL_ALL_REDUCE, 0, KT_CR_SIZE_ARGS },
    { "hcom_allGather__562_1_1", "HCCL", ET_COLL_ALL_GATHER, 0, KT_CR_SIZE_ARGS },
    { "hcom_reduceScatter__562_2_1", "HCCL", ET_COLL_REDUCE_SCATTER, 0, KT_CR_SIZE_ARGS },
    { "hcom_broadcast__562_3_1", "HCCL", ET_COLL_BROADCAST, 0, KT_CR_SIZE_ARGS },
    { "hcom_alltoallv__562_4_1", "HCCL", ET_COLL_ALL_TO_ALLV, 0, KT_CR_SIZE_ARGS },
    { "hcom_alltoall__562_5_1", "HCCL", ET_COLL_ALL_TO_ALL, 0, KT_CR_SIZE_ARGS },
    { "hcom_send__562_6_1", "HCCL", ET_COLL_NONE, 1, KT_CR_SIZE_ARGS },
    { "hcom_receive__562_7_1", "HCCL", ET_COLL_NONE, 2, KT_CR_SIZE_ARGS },
    { "cnclKernel_AllReduce_float", "CNCL", ET_COLL_NONE, 0, KT_CR_SIZE_ARGS },
  };
  size_t n_table;
  const kt_commreg_entry *tab = kt_commreg_table(&n_table);
  gboolean *hit = g_new0(gboolean, n_table);
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    const kt_commreg_entry *e = kt_commreg_lookup(cases[i].name);
    if (!e)
      g_error("'%s' is not in the registry", cases[i].name);
    g_assert_cmpstr(e->library, ==, cases[i].library);
    if (!e->kind_from_name) {
      g_assert_cmpint(e->coll, ==, cases[i].coll);
      g_assert_cmpint(e->p2p, ==, cases[i].p2p);
    }
    g_assert_cmpint(e->size, ==, cases[i].size);
    hit[e - tab] = TRUE;
  }
  /* Every entry of the table is exercised by one of the names above. */
  for (size_t i = 0; i < n_table; i++)
    if (!hit[i])
      g_error("registry entry %zu (%s: %s) has no test name", i, tab[i].library, tab[i].what);
  g_free(hit);
  /* The internode kernels are the two-hop ones; low-latency and intranode are not. */
  g_assert_true(kt_commreg_lookup(DISPATCH)->two_hop);
  g_assert_true(kt_commreg_lookup(COMBINE)->two_hop);
  g_assert_false(kt_commreg_lookup("deep_ep::internode_ll::dispatch<1>")->two_hop);
  /* Compute kernels are not matched; look-alikes are named. */
  g_assert_null(kt_commreg_lookup("volta_sgemm_128x64_nn"));
  g_assert_null(kt_commreg_lookup("void at::native::vectorized_elementwise_kernel<4>(int)"));
  g_assert_null(kt_commreg_lookup(LOOKALIKE));
  g_assert_true(kt_commreg_looks_like_comm(LOOKALIKE));
  g_assert_true(kt_commreg_looks_like_comm("fancy_allreduce_v2"));
  g_assert_false(kt_commreg_looks_like_comm("volta_sgemm_128x64_nn"));
  /* CUB's policy classes say "Dispatch" (a kernel of the DLRM traces): not
   * communication. */
  g_assert_false(kt_commreg_looks_like_comm("void cub::DeviceReduceByKeyKernel<cub::DispatchReduceByKey<long*, "
                                            "long*, cub::ConstantInputIterator<int, int>, int*, int"));
  /* kt_is_comm_kernel_name: registry kernels except local work. */
  g_assert_true(kt_is_comm_kernel_name(DISPATCH));
  g_assert_false(kt_is_comm_kernel_name(LAYOUT));
  /* Cambricon runtime launches and syncs; CPU ops of the libraries. */
  g_assert_true(kt_commreg_launch_name("cnrtInvokeKernel"));
  g_assert_true(kt_commreg_launch_name("cnrtInvokeKernel_V3"));
  g_assert_true(kt_commreg_launch_name("cnInvokeKernel"));
  g_assert_true(kt_commreg_launch_name("cnrtMemcpyAsync"));
  g_assert_true(kt_commreg_launch_name("cnMemsetD32Async"));
  g_assert_false(kt_commreg_launch_name("cnrtMalloc"));
  g_assert_false(kt_commreg_launch_name("cudaLaunchKernel"));
  g_assert_true(kt_commreg_host_sync_name("cnrtQueueSync"));
  g_assert_false(kt_commreg_host_sync_name("cnrtQueueCreate"));
  g_assert_true(kt_commreg_cpu_op("_C_custom_ar::all_reduce"));
  g_assert_true(kt_commreg_cpu_op("symm_mem::one_shot_all_reduce"));
  g_assert_false(kt_commreg_cpu_op("aten::mm"));
}

/* ---------- sizes from a card ---------- */

/* Card: hidden 16, 8 tokens per rank, top-2, EP 2, bf16, dispatch in fp8. */
static const char *const CARD =
  "workload:\n"
  "  model:\n"
  "    precision: bf16\n"
  "    hidden_size: 16\n"
  "    moe_top_k: 2\n"
  "    moe_dispatch_precision: fp8\n"
  "  data:\n"
  "    tokens_per_rank: 8\n"
  "Model-executor:\n"
  "  model_plan_parallelization:\n"
  "    ep: 2\n"
  "    tp: 2\n";

static void test_card_sizes(void)
{
  char *dir = moe_dir();
  fe_workload_card *card = card_from(dir, CARD);
  /* One assumption line: routing not stated, balanced by default. */
  g_assert_cmpuint(card->assumptions->len, ==, 1);
  g_assert_nonnull(strstr(card->assumptions->pdata[0], "balanced"));
  fe_kineto_options opt;
  fe_kineto_options_init(&opt);
  opt.card = card;
  fe_kineto_report rep;
  GError *e = NULL;
  const char *paths[] = { dir };
  et_workload *w = fe_kineto_load(paths, 1, &opt, &rep, &e);
  g_assert_no_error(e);
  for (int r = 0; r < 2; r++) {
    const et_graph *g = w->ranks[r];
    /* Dispatch: 8 tokens x top-2 x hidden 16 x 1 B (fp8) = 256 B sent; balanced over
     * EP 2: 16 copies / 2 = 8 copies = 128 B to each member. */
    uint32_t d = find_node(g, DISPATCH);
    g_assert_cmpint(g->nodes[d].type, ==, ET_NODE_COMM_COLL);
    g_assert_false(g->nodes[d].flags & ET_FLAG_REPLAY);
    const et_comm *c = et_node_comm(g, d);
    g_assert_cmpint(c->coll, ==, ET_COLL_ALL_TO_ALLV);
    g_assert_cmpuint(c->bytes, ==, 256);
    g_assert_cmpuint(g->splits[c->split], ==, 128);
    g_assert_cmpuint(g->splits[c->split + 1], ==, 128);
    /* Internode: two-hop dispatch; the card has no count_per_node, so no
     * per-node deduplication (ratio 1). */
    g_assert_cmpint(c->two_hop, ==, ET_TWO_HOP_DISPATCH);
    g_assert_cmpuint(c->two_hop_ppm, ==, 1000000u);
    /* Combine in bf16: 8 x 2 x 16 x 2 B = 512 B, 256 B per member. */
    c = et_node_comm(g, find_node(g, COMBINE));
    g_assert_cmpint(c->two_hop, ==, ET_TWO_HOP_COMBINE);
    g_assert_cmpuint(c->bytes, ==, 512);
    g_assert_cmpuint(g->splits[c->split], ==, 256);
    /* notify_dispatch: a barrier of the EP group, no payload. */
    uint32_t nt = find_node(g, NOTIFY);
    g_assert_cmpint(g->nodes[nt].type, ==, ET_NODE_COMM_COLL);
    g_assert_cmpint(et_node_comm(g, nt)->coll, ==, ET_COLL_BARRIER);
    /* get_dispatch_layout and the look-alike stay compute at their measured 5 and 30 us. */
    uint32_t l = find_node(g, LAYOUT);
    g_assert_cmpint(g->nodes[l].type, ==, ET_NODE_COMP);
    g_assert_cmpint(g->nodes[l].duration_ps, ==, 5 * SIM_PS_PER_US);
    g_assert_cmpint(g->nodes[find_node(g, LOOKALIKE)].type, ==, ET_NODE_COMP);
  }
  /* Inspect's lines: 3 DeepEP communication kernels by entry, the local
   * layout kernel, and the look-alike named loudly. */
  const fe_kineto_rank_report *k = &rep.ranks[0];
  g_assert_cmpstr(k->comm_libraries, ==,
                  "DeepEP: notify_dispatch (count exchange) 1, internode dispatch 1, internode combine 1");
  g_assert_nonnull(strstr(k->comm_unregistered, "1 DeepEP kernel(s) recognised as local work"));
  g_assert_nonnull(strstr(k->comm_unregistered, "WARNING: 1 kernel(s) look like communication"));
  g_assert_nonnull(strstr(k->comm_unregistered, LOOKALIKE));
  g_assert_cmpuint(k->comm_size_from_card, ==, 2);
  g_assert_cmpuint(k->comm_size_sync, ==, 1);
  g_assert_cmpuint(k->comm_size_unknown, ==, 0);
  g_assert_cmpuint(rep.matched, ==, 3);
  et_workload_free(w);
  fe_kineto_report_clear(&rep);
  fe_card_free(card);
  rm_tree(dir);
}

/* ---------- card groups of synthesized ranks (--replicate-from) ---------- */

/* Rank 0 of 8 traced; EP 4 on nodes of 2 GPUs, top-4.  Every synthesized
 * rank gets the aligned EP block holding it ({4,5,6,7} for rank 5, not
 * rank 0's group shifted by 5), and the two-hop ratio min(1, N / k) with
 * N = 4 / 2 = 2 nodes and k = 4: 500000 ppm. */
static void test_replicated_card_groups(void)
{
  char *dir = g_dir_make_tmp("wisp-commreg-XXXXXX", NULL);
  char *j = moe_trace_of(0, 8);
  g_free(write_file(dir, "rank0.json", j));
  g_free(j);
  fe_workload_card *card = card_from(dir, "workload:\n"
                                          "  model: {precision: bf16, hidden_size: 16, moe_top_k: 4}\n"
                                          "  data: {tokens_per_rank: 8}\n"
                                          "  hardware: {xpu_spec: {count_per_node: 2}}\n"
                                          "Model-executor:\n"
                                          "  model_plan_parallelization: {ep: 4}\n");
  char *tp = g_build_filename(dir, "rank0.json", NULL);
  fe_kineto_options opt;
  fe_kineto_options_init(&opt);
  opt.card = card;
  opt.replicate_from = "0";
  GError *e = NULL;
  const char *paths[] = { tp };
  et_workload *w = fe_kineto_load(paths, 1, &opt, NULL, &e);
  g_assert_no_error(e);
  g_assert_cmpint(w->n_ranks, ==, 8);
  for (int r = 0; r < 8; r++) {
    const et_graph *g = w->ranks[r];
    const et_comm *c = et_node_comm(g, find_node(g, DISPATCH));
    g_assert_cmpint(c->two_hop, ==, ET_TWO_HOP_DISPATCH);
    g_assert_cmpuint(c->two_hop_ppm, ==, 500000u);
    g_assert_cmpuint(c->group, !=, ET_GROUP_WORLD);
    const et_group *grp = et_workload_group(w, c->group);
    g_assert_cmpint(grp->n_ranks, ==, 4);
    for (int k = 0; k < 4; k++)
      g_assert_cmpint(grp->ranks[k], ==, r / 4 * 4 + k);
  }
  et_workload_free(w);
  fe_card_free(card);
  g_free(tp);
  rm_tree(dir);
}

/* ---------- no size source: replayed at the measured duration ---------- */

static void test_unknown_size(void)
{
  char *dir = moe_dir();
  fe_kineto_report rep;
  GError *e = NULL;
  const char *paths[] = { dir };
  et_workload *w = fe_kineto_load(paths, 1, NULL, &rep, &e);
  g_assert_no_error(e);
  for (int r = 0; r < 2; r++) {
    const et_graph *g = w->ranks[r];
    /* Dispatch (100 us) and combine (120 us) keep their measured durations as replayed COMM nodes. */
    uint32_t d = find_node(g, DISPATCH), c = find_node(g, COMBINE);
    g_assert_true(g->nodes[d].flags & ET_FLAG_REPLAY);
    g_assert_cmpint(g->nodes[d].duration_ps, ==, 100 * SIM_PS_PER_US);
    g_assert_true(g->nodes[c].flags & ET_FLAG_REPLAY);
    g_assert_cmpint(g->nodes[c].duration_ps, ==, 120 * SIM_PS_PER_US);
    /* The barrier needs no size: simulated. */
    g_assert_false(g->nodes[find_node(g, NOTIFY)].flags & ET_FLAG_REPLAY);
  }
  /* 2 unsized per rank, counted and said, naming the missing card. */
  g_assert_cmpuint(rep.ranks[0].comm_size_unknown, ==, 2);
  g_assert_cmpuint(rep.ranks[0].comm_replayed, ==, 2);
  g_assert_true(has_warning(&rep, "no workload card (--card)"));
  /* et_workload_unsimulated counts them for every command: 2 ranks x 2 nodes. */
  et_unsimulated u;
  et_workload_unsimulated(w, &u);
  g_assert_cmpuint(u.replayed_nodes, ==, 4);
  et_workload_free(w);
  fe_kineto_report_clear(&rep);
  /* --strict makes it an error. */
  fe_kineto_options opt;
  fe_kineto_options_init(&opt);
  opt.strict = TRUE;
  g_assert_null(fe_kineto_load(paths, 1, &opt, NULL, &e));
  g_assert_nonnull(e);
  g_clear_error(&e);
  rm_tree(dir);
}

/* ---------- sizes from the enclosing CPU op, and from the card (TP) ---------- */

/* A vLLM TP step: cross_device_reduce_1stage launched inside
 * _C_custom_ar::all_reduce (Input Dims [[4, 1024]], c10::BFloat16) when
 * with_cpu_op, else bare. */
static char *custom_ar_trace(int rank, gboolean with_cpu_op)
{
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "{\"distributedInfo\":{\"rank\":%d,\"world_size\":2},\"traceEvents\":["
                         "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,"
                         "\"ts\":0,\"dur\":500,\"args\":{}}", rank);
  if (with_cpu_op)
    g_string_append(s, ",{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"_C_custom_ar::all_reduce\",\"pid\":1,\"tid\":1,"
                       "\"ts\":20,\"dur\":40,\"args\":{\"External id\":77,\"Input Dims\":[[4, 1024], [4, 1024], [], "
                       "[]],\"Input type\":[\"c10::BFloat16\", \"c10::BFloat16\", \"Int\", \"Int\"]}}");
  add_kernel(s, "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 2>(vllm::RankData*, int)", 40, 15, 201, 7,
             ",\"External id\":77");
  g_string_append(s, "]}");
  return g_string_free(s, FALSE);
}

static et_workload *load_custom_ar(gboolean with_cpu_op, const fe_workload_card *card, fe_kineto_report *rep)
{
  char *dir = g_dir_make_tmp("wisp-commreg-XXXXXX", NULL);
  for (int r = 0; r < 2; r++) {
    char *j = custom_ar_trace(r, with_cpu_op), *n = g_strdup_printf("rank%d.json", r);
    g_free(write_file(dir, n, j));
    g_free(j);
    g_free(n);
  }
  fe_kineto_options opt;
  fe_kineto_options_init(&opt);
  opt.card = card;
  GError *e = NULL;
  const char *paths[] = { dir };
  et_workload *w = fe_kineto_load(paths, 1, &opt, rep, &e);
  g_assert_no_error(e);
  rm_tree(dir);
  return w;
}

static void test_custom_ar(void)
{
  fe_kineto_report rep;
  /* From the CPU op: 4 x 1024 elements x 2 B (c10::BFloat16) = 8192 B. */
  et_workload *w = load_custom_ar(TRUE, NULL, &rep);
  const et_graph *g = w->ranks[1];
  uint32_t k = find_node(g, "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 2>(vllm::RankData*, int)");
  g_assert_cmpint(g->nodes[k].type, ==, ET_NODE_COMM_COLL);
  g_assert_cmpint(et_node_comm(g, k)->coll, ==, ET_COLL_ALL_REDUCE);
  g_assert_cmpuint(et_node_comm(g, k)->bytes, ==, 8192);
  g_assert_cmpuint(rep.ranks[1].comm_size_from_cpu_op, ==, 1);
  g_assert_cmpstr(rep.ranks[1].comm_libraries, ==, "vLLM-CustomAR: cross_device_reduce_1stage 1");
  et_workload_free(w);
  fe_kineto_report_clear(&rep);
  /* From the card (no CPU op): tokens 8 x hidden 16 x 2 B (bf16) = 256 B, TP group of 2. */
  char *dir = g_dir_make_tmp("wisp-commreg-XXXXXX", NULL);
  fe_workload_card *card = card_from(dir, CARD);
  rm_tree(dir);
  w = load_custom_ar(FALSE, card, &rep);
  g = w->ranks[0];
  k = find_node(g, "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 2>(vllm::RankData*, int)");
  g_assert_cmpuint(et_node_comm(g, k)->bytes, ==, 256);
  g_assert_false(g->nodes[k].flags & ET_FLAG_REPLAY);
  g_assert_cmpuint(rep.ranks[0].comm_size_from_card, ==, 1);
  et_workload_free(w);
  fe_kineto_report_clear(&rep);
  fe_card_free(card);
}

/* ---------- cards: derived values and errors ---------- */

static void test_card_file(void)
{
  char *dir = g_dir_make_tmp("wisp-commreg-XXXXXX", NULL);
  /* CCL-Bench's own fields only: hidden = 16 heads x 128 = 2048, tokens =
   * 4 x 1024 = 4096, each an assumption line, plus balanced routing. */
  fe_workload_card *c = card_from(dir, "workload:\n  model:\n    precision: bf16\n    model_arch:\n"
                                       "      num_heads: 16\n      head_dim: 128\n  data:\n    batch_size: 4\n    seq_len: 1024\n"
                                       "  hardware:\n    network_topo:\n      bandwidth_gbps:\n        - 200\n");
  g_assert_cmpint(c->hidden_size, ==, 2048);
  g_assert_cmpint(c->tokens_per_rank, ==, 4096);
  g_assert_cmpint(c->dtype_bytes, ==, 2);
  g_assert_cmpint(c->dispatch_dtype_bytes, ==, 2);
  g_assert_cmpuint(c->assumptions->len, ==, 4); /* hidden, tokens, routing, no EP degree */
  fe_card_free(c);
  static const struct { const char *text, *needle; } bad[] = {
    { "workload:\n  model:\n    hidden_size: -3\n", "card.yaml:3: workload.model.hidden_size: expected a whole number from 1" },
    { "workload:\n  model:\n    precision: fp5\n", "card.yaml:3: workload.model.precision: unknown precision" },
    { "workload:\n  model:\n    moe_routing: zipf\n", "card.yaml:3: workload.model.moe_routing: 'zipf' is not" },
    { "- a\n- b\n", "a workload card is a YAML mapping" },
    { "workload: [\n", "malformed YAML" },
    /* Found by the card fuzzer (fuzz/campaigns.md, 2026-12-07 16:57): each
     * count is accepted (<= 2^63 - 1), their product is not:
     * 32 x 2049638230412172400 = 6.6e19 > 9.22e18. */
    { "workload:\n  model:\n    model_arch: {head_dim: 2049638230412172400, num_heads: 32}\n",
      "card.yaml:3: workload.model.model_arch.head_dim: num_heads x head_dim (32 x 2049638230412172400) is past" },
    { "workload:\n  data:\n    batch_size: 3\n    seq_len: 4611686018427387904\n",
      "card.yaml:4: workload.data.seq_len: batch_size x seq_len (3 x 4611686018427387904) is past 2^63 - 1" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    char *p = write_file(dir, "card.yaml", bad[i].text);
    GError *e = NULL;
    cfg_card *doc = cfg_card_load(p, &e);
    g_assert_null(doc ? fe_card_from_doc(doc, &e) : NULL);
    cfg_card_free(doc);
    g_assert_nonnull(e);
    if (!strstr(e->message, bad[i].needle))
      g_error("card %zu: '%s' lacks '%s'", i, e->message, bad[i].needle);
    g_error_free(e);
    g_free(p);
  }
  GError *e = NULL;
  g_assert_null(cfg_card_load("/nonexistent/card.yaml", &e));
  g_assert_error(e, WISP_ERROR, WISP_ERROR_IO);
  g_error_free(e);
  rm_tree(dir);
}

/* ---------- Cambricon launches in the host model ---------- */

static void test_mlu_launch(void)
{
  /* torch_mlu's Kineto writes runtime calls under mlu_runtime (its test
   * traces name cnInvokeKernel) and copies under mlu_memcpy; a launch call
   * with the GPU op's correlation is its launch. */
  const char *json =
    "{\"distributedInfo\":{\"rank\":0,\"world_size\":1},\"traceEvents\":["
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100,"
    "\"args\":{}},"
    "{\"ph\":\"X\",\"cat\":\"mlu_runtime\",\"name\":\"cnInvokeKernel\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":3,"
    "\"args\":{\"correlation\":9}},"
    "{\"ph\":\"X\",\"cat\":\"mlu_runtime\",\"name\":\"cnrtMemcpyAsync\",\"pid\":1,\"tid\":1,\"ts\":8,\"dur\":1,"
    "\"args\":{\"correlation\":11}},"
    "{\"ph\":\"X\",\"cat\":\"mlu_memcpy\",\"name\":\"Memcpy HtoD\",\"pid\":0,\"tid\":3,\"ts\":53,\"dur\":4,"
    "\"args\":{\"correlation\":11,\"stream\":3}},"
    "{\"ph\":\"X\",\"cat\":\"mlu_runtime\",\"name\":\"cnrtQueueSync\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":50,"
    "\"args\":{\"correlation\":10}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"MLUUnion1KernelAdd\",\"pid\":0,\"tid\":3,\"ts\":12,\"dur\":40,"
    "\"args\":{\"correlation\":9,\"stream\":3}}]}";
  char *dir = g_dir_make_tmp("wisp-commreg-XXXXXX", NULL);
  g_free(write_file(dir, "rank0.json", json));
  fe_kineto_report rep;
  GError *e = NULL;
  const char *paths[] = { dir };
  et_workload *w = fe_kineto_load(paths, 1, NULL, &rep, &e);
  g_assert_no_error(e);
  g_assert_cmpuint(rep.ranks[0].launches, ==, 2);
  g_assert_cmpuint(rep.ranks[0].memcpys, ==, 1);
  g_assert_cmpuint(rep.ranks[0].sync_calls, ==, 1);
  g_assert_cmpuint(rep.ranks[0].host_threads, ==, 1);
  et_workload_free(w);
  fe_kineto_report_clear(&rep);
  rm_tree(dir);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/commreg/names", test_names);
  g_test_add_func("/commreg/card_sizes", test_card_sizes);
  g_test_add_func("/commreg/replicated_card_groups", test_replicated_card_groups);
  g_test_add_func("/commreg/unknown_size", test_unknown_size);
  g_test_add_func("/commreg/custom_ar", test_custom_ar);
  g_test_add_func("/commreg/card_file", test_card_file);
  g_test_add_func("/commreg/mlu_launch", test_mlu_launch);
  return g_test_run();
}
