/* test_kineto.c: the Kineto frontend (frontends/kineto*.c).
 *
 * Synthetic inputs are built in the test (acceptance vector A1 of
 * ../shared/reference/kineto.md §11, written here from its generator);
 * real traces come from $WISP_SHARED_DATA and their expected counts are
 * computed independently of the frontend by regular expressions over the
 * raw JSON text (see each test).
 */
#include "config.h"
#include "regress/test_util.h"

#include "chakra/et_io.h"
#include "frontends/kineto_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <zlib.h>

/* ---------- helpers ---------- */

static char *tmpdir_new(void)
{
  char *d = g_dir_make_tmp("wisp-kineto-XXXXXX", NULL);
  g_assert_nonnull(d);
  return d;
}

static char *write_file(const char *dir, const char *name, const char *text)
{
  char *p = g_build_filename(dir, name, NULL);
  g_assert_true(g_file_set_contents(p, text, -1, NULL));
  return p;
}

static const char *shared_data(void)
{
  const char *d = g_getenv("WISP_SHARED_DATA");
  if (!d || !g_file_test(d, G_FILE_TEST_IS_DIR))
    return NULL;
  return d;
}

static char *read_gz(const char *path)
{
  gzFile f = gzopen(path, "rb");
  g_assert_nonnull(f);
  GString *s = g_string_new("");
  char buf[65536];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0)
    g_string_append_len(s, buf, n);
  gzclose(f);
  return g_string_free(s, FALSE);
}

static gboolean report_has_warning(const fe_kineto_report *r, const char *needle)
{
  for (guint i = 0; i < r->warnings->len; i++)
    if (strstr(g_ptr_array_index(r->warnings, i), needle))
      return TRUE;
  return FALSE;
}

/* ---------- tables ---------- */

static void test_tables(void)
{
  /* kineto.md §5: c10 ScalarType element sizes and C++ type names. */
  g_assert_cmpint(kt_dtype_size("Long"), ==, 8);
  g_assert_cmpint(kt_dtype_size("BFloat16"), ==, 2);
  g_assert_cmpint(kt_dtype_size("Byte"), ==, 1);
  g_assert_cmpint(kt_dtype_size("Bool"), ==, 1);
  g_assert_cmpint(kt_dtype_size("ComplexDouble"), ==, 16);
  g_assert_cmpint(kt_dtype_size("QInt32"), ==, 4);
  g_assert_cmpint(kt_dtype_size("Float8_e4m3fnuz"), ==, 1);
  g_assert_cmpint(kt_dtype_size("UInt64"), ==, 8);
  g_assert_cmpint(kt_dtype_size("Float4_e2m1fn_x2"), ==, 1);
  g_assert_cmpint(kt_dtype_size("long int"), ==, 8);
  g_assert_cmpint(kt_dtype_size("long"), ==, 8);
  g_assert_cmpint(kt_dtype_size("c10::Float8_e4m3fn"), ==, 1);
  g_assert_cmpint(kt_dtype_size("c10::complex<double>"), ==, 16);
  g_assert_cmpint(kt_dtype_size("Foo"), ==, 0);   /* unknown: no silent default */
  /* kineto.md §3: every naming variant, case-insensitive. */
  g_assert_true(kt_is_comm_kernel_name("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"));
  g_assert_true(kt_is_comm_kernel_name("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"));
  g_assert_true(kt_is_comm_kernel_name("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"));
  g_assert_true(kt_is_comm_kernel_name("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)"));
  g_assert_true(kt_is_comm_kernel_name("rcclKernel_AllReduce_RING_LL"));
  g_assert_true(kt_is_comm_kernel_name("NCCLDEVKERNEL_SendRecv"));
  g_assert_true(kt_is_comm_kernel_name("cross_device_reduce_1stage<float, 8>"));
  g_assert_false(kt_is_comm_kernel_name("volta_sgemm_128x64_nn"));
  g_assert_false(kt_is_comm_kernel_name("ncclSomethingElse"));
  et_coll_type c;
  int p2p;
  g_assert_true(kt_coll_from_kernel("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(x)", &c, &p2p));
  g_assert_cmpint(c, ==, ET_COLL_ALL_TO_ALL);
  g_assert_true(kt_coll_from_kernel("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(x)", &c, &p2p));
  g_assert_cmpint(c, ==, ET_COLL_REDUCE_SCATTER);
  g_assert_true(kt_coll_from_kernel("ncclDevKernel_Reduce_Sum_f32_RING_LL(x)", &c, &p2p));
  g_assert_cmpint(c, ==, ET_COLL_REDUCE);
  g_assert_true(kt_coll_from_kernel("ncclKernel_Broadcast_RING_LL_Sum_int8_t(x)", &c, &p2p));
  g_assert_cmpint(c, ==, ET_COLL_BROADCAST);
  g_assert_false(kt_coll_from_kernel("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", &c, &p2p));
  g_assert_true(kt_coll_from_arg("allgather_into_tensor_coalesced", &c, &p2p));
  g_assert_cmpint(c, ==, ET_COLL_ALL_GATHER);
  g_assert_true(kt_coll_from_arg("_reduce_scatter_base", &c, &p2p));
  g_assert_cmpint(c, ==, ET_COLL_REDUCE_SCATTER);
  g_assert_true(kt_coll_from_arg("all_to_allv", &c, &p2p));
  g_assert_cmpint(c, ==, ET_COLL_ALL_TO_ALLV);
  g_assert_true(kt_coll_from_arg("recv", &c, &p2p));
  g_assert_cmpint(p2p, ==, 2);
  g_assert_false(kt_coll_from_arg("wait", &c, &p2p));
  g_assert_true(kt_coll_from_cpu_op("c10d::allreduce_", &c, &p2p));
  g_assert_cmpint(c, ==, ET_COLL_ALL_REDUCE);
  g_assert_true(kt_coll_from_cpu_op("c10d::alltoall_base_", &c, &p2p));
  g_assert_cmpint(c, ==, ET_COLL_ALL_TO_ALL);
  g_assert_true(kt_coll_from_cpu_op("nccl:_all_gather_base", &c, &p2p));
  g_assert_cmpint(c, ==, ET_COLL_ALL_GATHER);
}

/* kineto.md §6: Process Group Ranks forms. */
static void test_ranks(void)
{
  int *r, n;
  gboolean trunc;
  const char *why;
  g_assert_true(kt_parse_ranks("[0, 4, 8, 12]", 4, 128, &r, &n, &trunc, &why));
  g_assert_cmpint(n, ==, 4);
  g_assert_cmpint(r[3], ==, 12);
  g_free(r);
  /* Elided with stride 4: 0..124 step 4 = 32 members (W9: not stride 1). */
  g_assert_true(kt_parse_ranks("[0, 4, ..., 124]", 32, 128, &r, &n, &trunc, &why));
  g_assert_cmpint(n, ==, 32);
  g_assert_cmpint(r[1], ==, 4);
  g_assert_cmpint(r[31], ==, 124);
  g_free(r);
  g_assert_true(kt_parse_ranks("[0, 1, ..., 31]", KT_ABSENT, 128, &r, &n, &trunc, &why));
  g_assert_cmpint(n, ==, 32);
  g_free(r);
  /* Count 32 contradicts Group size 31. */
  g_assert_false(kt_parse_ranks("[0, 4, ..., 124]", 31, 128, &r, &n, &trunc, &why));
  g_assert_false(trunc);
  /* 10 is not on 0, 3, 6, 9, ... */
  g_assert_false(kt_parse_ranks("[0, 3, ..., 10]", KT_ABSENT, 128, &r, &n, &trunc, &why));
  /* PyTorch's cut list: members beyond the 30th are unknown. */
  g_assert_false(kt_parse_ranks("[0, 1, 2, 29, ...]", 64, 128, &r, &n, &trunc, &why));
  g_assert_true(trunc);
  g_assert_false(kt_parse_ranks("[a]", 1, 128, &r, &n, &trunc, &why));
  /* Members must be below the world size (128 here): an elided list is
   * refused before it would be expanded to 10^8 members, and an explicit
   * list naming rank 128 is refused too. */
  g_assert_false(kt_parse_ranks("[0, 1, ..., 99999999]", 100000000, 128, &r, &n, &trunc, &why));
  g_assert_false(trunc);
  g_assert_nonnull(strstr(why, "world size"));
  g_assert_false(kt_parse_ranks("[0, 128]", 2, 128, &r, &n, &trunc, &why));
  g_assert_nonnull(strstr(why, "world size"));
  g_assert_true(kt_parse_ranks("[0, 127]", 2, 128, &r, &n, &trunc, &why));
  g_free(r);
  g_assert_false(kt_parse_ranks("[0, 1", 2, 128, &r, &n, &trunc, &why));
  GArray *l = g_array_new(FALSE, FALSE, sizeof(gint64));
  g_assert_true(kt_parse_int_list("[3, 5, 7]", l));
  g_assert_cmpuint(l->len, ==, 3);
  g_assert_false(kt_parse_int_list("[1, 2, ...]", l));
  g_array_free(l, TRUE);
}

/* ---------- acceptance vector A1 (kineto.md §11) ---------- */

static void ev(GString *s, const char *name, const char *ts, const char *dur, int stream, const char *args,
               const char *cat)
{
  g_string_append_printf(s, "%s{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": 0, \"tid\": %d, \"ts\": %s, "
                         "\"dur\": %s, \"args\": {\"stream\": %d, \"device\": 0%s%s}}",
                         s->str[s->len - 1] == '[' ? "" : ", ", cat ? cat : "kernel", name, stream, ts, dur, stream,
                         args ? ", " : "", args ? args : "");
}

static char *a1_json(int r)
{
  GString *s = g_string_new("{\"distributedInfo\": {\"rank\": ");
  g_string_append_printf(s, "%d, \"world_size\": 2}, \"traceEvents\": [", r);
  g_string_append(s, "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#3\", \"pid\": 0, \"tid\": 1, "
                     "\"ts\": 0, \"dur\": 400, \"args\": {}}");
  ev(s, "gemm_A", "0", "100", 7, NULL, NULL);
  ev(s, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", "10", "50", 20,
     "\"Collective name\": \"allreduce\", \"In msg nelems\": 1048576, \"Out msg nelems\": 1048576, \"Group size\": 2, "
     "\"dtype\": \"BFloat16\", \"Process Group Name\": \"0\", \"Process Group Ranks\": \"[0, 1]\", \"External id\": 11",
     NULL);
  ev(s, "gemm_B", "100", "50", 7, NULL, NULL);
  char *a = g_strdup_printf("\"Collective name\": \"all_to_allv\", \"In msg nelems\": %d, \"Out msg nelems\": %d, "
                            "\"Group size\": 2, \"dtype\": \"BFloat16\", \"Process Group Ranks\": \"[0, 1]\", "
                            "\"External id\": 12", 1000 * (r + 1), 1000 * (r + 1));
  ev(s, "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)", "200", "30", 20, a, NULL);
  g_free(a);
  ev(s, "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)", "240", "5", 20,
     "\"Collective name\": \"all_to_allv\", \"In msg nelems\": 8, \"Out msg nelems\": 8, \"Group size\": 2, "
     "\"dtype\": \"Long\", \"Process Group Ranks\": \"[0, 1]\", \"External id\": 13", NULL);
  ev(s, "Memcpy DtoD (Device -> Device)", "250", "20", 7, NULL, "gpu_memcpy");
  ev(s, "gemm_C", "300", "40", 7, NULL, NULL);
  if (r == 0)
    ev(s, "ncclDevKernel_AllGather_RING_LL", "350", "10", 21,
       "\"Collective name\": \"_allgather_base\", \"In msg nelems\": 10, \"Out msg nelems\": 20, \"dtype\": \"Float\", "
       "\"Process Group Ranks\": \"[0, 1]\", \"External id\": 14", NULL);
  g_string_append(s, "]}");
  return g_string_free(s, FALSE);
}

static uint32_t find_node(const et_graph *g, const char *name)
{
  for (uint32_t i = 0; i < g->n_nodes; i++)
    if (!strcmp(et_node_name(g, i), name))
      return i;
  g_error("node %s not found", name);
  return ET_NONE;
}

/* Is there a path a -> ... -> b?  (DFS over children; graphs here are tiny.) */
static gboolean reaches(const et_graph *g, uint32_t a, uint32_t b)
{
  if (a == b)
    return TRUE;
  for (uint32_t k = g->nodes[a].children; k < g->nodes[a + 1].children; k++)
    if (reaches(g, g->child_index[k], b))
      return TRUE;
  return FALSE;
}

static void test_a1(void)
{
  char *dir = tmpdir_new();
  for (int r = 0; r < 2; r++) {
    char *j = a1_json(r), *name = g_strdup_printf("rank%d_trace.json", r);
    g_free(write_file(dir, name, j));
    g_free(j);
    g_free(name);
  }
  fe_kineto_options opt;
  fe_kineto_options_init(&opt);
  fe_kineto_report rep;
  GError *e = NULL;
  const char *paths[] = { dir };
  et_workload *w = fe_kineto_load(paths, 1, &opt, &rep, &e);
  g_assert_no_error(e);
  g_assert_nonnull(w);
  g_assert_cmpint(w->n_ranks, ==, 2);
  /* Groups keyed by (pg name, ranks): ("0",[0,1]) for the all-reduce and
   * ("",[0,1]) for the unnamed all_to_allv / all-gather: two communicators. */
  g_assert_cmpuint(w->groups->len, ==, 2);
  /* Matched: AR + 2 all_to_allv = 3 tuples; the rank-0-only all-gather is
   * dropped with the reason "present on rank 0 only" (W7). */
  g_assert_cmpuint(rep.matched, ==, 3);
  g_assert_cmpuint(rep.dropped, ==, 1);
  g_assert_true(report_has_warning(&rep, "present on rank 0 only"));
  /* all_to_allv imbalance: 1000*2 B on rank 0 vs 2000*2 B on rank 1 (W12);
   * the 8-element Long exchange is balanced. */
  g_assert_cmpuint(rep.imbalanced_a2av, ==, 1);
  g_assert_true(report_has_warning(&rep, "2000, 4000"));
  /* Window = ProfilerStep#3 = [0, 400) µs: measured step 400 µs. */
  g_assert_cmpint(w->measured_step_ps[0], ==, 400 * SIM_PS_PER_US);
  g_assert_cmpint(rep.ranks[0].step_used, ==, 3);
  const et_graph *g0 = w->ranks[0];
  uint32_t ga = find_node(g0, "gemm_A");
  g_assert_cmpint(g0->nodes[ga].start_ps, ==, 0);  /* rank 0 starts at t = 0 with gemm_A */
  g_assert_cmpint(g0->nodes[ga].duration_ps, ==, 100 * SIM_PS_PER_US);
  /* The memcpy is GPU work on stream 7 (between gemm_B and gemm_C). */
  uint32_t mc = find_node(g0, "Memcpy DtoD (Device -> Device)");
  g_assert_cmpint(g0->nodes[mc].type, ==, ET_NODE_COMP);
  g_assert_true(reaches(g0, find_node(g0, "gemm_B"), mc));
  g_assert_true(reaches(g0, mc, find_node(g0, "gemm_C")));
  /* AR sized 1048576 x 2 B; the AR on stream 20 overlaps gemm_A: no path either way. */
  uint32_t ar = find_node(g0, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)");
  g_assert_cmpint(g0->nodes[ar].type, ==, ET_NODE_COMM_COLL);
  const et_comm *c = et_node_comm(g0, ar);
  g_assert_cmpuint(c->bytes, ==, 2097152);
  g_assert_cmpint(c->coll, ==, ET_COLL_ALL_REDUCE);
  g_assert_false(reaches(g0, ga, ar));
  g_assert_false(reaches(g0, ar, ga));
  /* The all_to_allv keeps rank 1's own size 2000 x 2 B. */
  const et_graph *g1 = w->ranks[1];
  uint32_t n1 = 0, a2a_bytes = 0;
  for (uint32_t i = 0; i < g1->n_nodes; i++)
    if (g1->nodes[i].type == ET_NODE_COMM_COLL && et_node_comm(g1, i)->coll != ET_COLL_ALL_REDUCE && !n1++)
      a2a_bytes = (uint32_t)et_node_comm(g1, i)->bytes;
  g_assert_cmpuint(a2a_bytes, ==, 4000);
  /* The dropped all-gather stays as a COMP node with its measured 10 µs. */
  uint32_t ag = find_node(g0, "ncclDevKernel_AllGather_RING_LL");
  g_assert_cmpint(g0->nodes[ag].type, ==, ET_NODE_COMP);
  g_assert_cmpint(g0->nodes[ag].duration_ps, ==, 10 * SIM_PS_PER_US);
  /* Idle time on stream 7 between gemm_B (ends 150) and the memcpy (250): a 100 µs delay node. */
  gboolean found_gap = FALSE;
  for (uint32_t i = 0; i < g0->n_nodes; i++)
    if ((g0->nodes[i].flags & ET_FLAG_DELAY) && g0->nodes[i].start_ps == 150 * SIM_PS_PER_US &&
        g0->nodes[i].duration_ps == 100 * SIM_PS_PER_US)
      found_gap = TRUE;
  g_assert_true(found_gap);
  /* --strict turns the dropped all-gather into an error. */
  fe_kineto_report rep2;
  opt.strict = TRUE;
  g_assert_null(fe_kineto_load(paths, 1, &opt, &rep2, &e));
  g_assert_error(e, WISP_ERROR, WISP_ERROR_INVALID);
  g_assert_nonnull(strstr(e->message, "rank 0 only"));
  g_clear_error(&e);
  /* The failed load's report holds what parsing found and says that the
   * rest was not done, instead of printing zero steps, groups and matches. */
  g_assert_true(rep.complete);
  g_assert_false(rep2.complete);
  char *text = NULL;
  size_t text_len = 0;
  FILE *mem = open_memstream(&text, &text_len);
  fe_kineto_report_print(&rep2, mem);
  fclose(mem);
  g_assert_nonnull(strstr(text, "not analysed further"));
  g_assert_null(strstr(text, "steps:"));
  g_assert_null(strstr(text, "groups:"));
  g_assert_null(strstr(text, "matching:"));
  free(text);
  fe_kineto_report_clear(&rep2);
  /* Writing: OUT/trace.<r>.et + comm_group.json, read back with the same nodes. */
  char *out = g_build_filename(dir, "out", NULL);
  g_assert_cmpint(g_mkdir(out, 0755), ==, 0);
  g_assert_true(et_workload_write(w, out, "trace", &e));
  g_assert_no_error(e);
  char *cg = g_build_filename(out, "comm_group.json", NULL);
  g_assert_true(g_file_test(cg, G_FILE_TEST_EXISTS));
  g_free(cg);
  g_assert_true(fe_kineto_looks_like_trace(dir));
  g_assert_false(fe_kineto_looks_like_trace(out));     /* .et files + comm_group.json */
  char *prefix = g_build_filename(out, "trace", NULL);
  et_workload *back = et_workload_load(prefix, 0, &e);
  g_assert_no_error(e);
  g_assert_cmpint(back->n_ranks, ==, 2);
  g_assert_cmpuint(back->ranks[0]->n_nodes, ==, w->ranks[0]->n_nodes);
  g_assert_cmpuint(back->groups->len, ==, 2);
  et_workload_free(back);
  g_free(prefix);
  g_free(out);
  et_workload_free(w);
  fe_kineto_report_clear(&rep);
  test_rm_rf(dir);
  g_free(dir);
}

/* Gap mode on A1: rank 1 = lead gap 10 µs, AR(50), gap 140 µs (60 -> 200),
 * a2av(30), gap 10 µs (230 -> 240), a2av(5), trailing gap 155 µs (245 -> 400). */
static void test_a1_gap_mode(void)
{
  char *dir = tmpdir_new();
  for (int r = 0; r < 2; r++) {
    char *j = a1_json(r), *name = g_strdup_printf("rank%d_trace.json", r);
    g_free(write_file(dir, name, j));
    g_free(j);
    g_free(name);
  }
  fe_kineto_options opt;
  fe_kineto_options_init(&opt);
  opt.mode = FE_KINETO_GAP;
  GError *e = NULL;
  const char *paths[] = { dir };
  et_workload *w = fe_kineto_load(paths, 1, &opt, NULL, &e);
  g_assert_no_error(e);
  const et_graph *g = w->ranks[1];
  static const sim_time_ps want[] = { 10, 50, 140, 30, 10, 5, 155 };
  g_assert_cmpuint(g->n_nodes, ==, G_N_ELEMENTS(want));
  for (uint32_t i = 0; i < g->n_nodes; i++)
    g_assert_cmpint(g->nodes[i].duration_ps, ==, want[i] * SIM_PS_PER_US);
  et_workload_free(w);
  test_rm_rf(dir);
  g_free(dir);
}

/* Durations keep sub-µs precision: 12.3456789 µs = 12,345,678.9 ps -> 12,345,679 ps. */
static void test_precision(void)
{
  /* distributedInfo after traceEvents: any key order is valid. */
  const char *j = "{\"traceEvents\": ["
                  "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, "
                  "\"ts\": 1694128201436272.001, \"dur\": 12.3456789, \"args\": {\"stream\": 7}}], "
                  "\"baseTimeNanoseconds\": 1694128200000000000, "
                  "\"distributedInfo\": {\"rank\": 0, \"world_size\": 1}}";
  char *dir = tmpdir_new();
  char *p = write_file(dir, "t.json", j);
  GError *e = NULL;
  const char *paths[] = { p };
  et_workload *w = fe_kineto_load(paths, 1, NULL, NULL, &e);
  g_assert_no_error(e);
  g_assert_cmpuint(w->ranks[0]->n_nodes, ==, 1);
  g_assert_cmpint(w->ranks[0]->nodes[0].duration_ps, ==, 12345679);
  et_workload_free(w);
  g_free(p);
  test_rm_rf(dir);
  g_free(dir);
}

/* Record/wait inference (kineto.md §8): gemm_A launched, cudaEventRecord,
 * cudaStreamWaitEvent, AR launched.  When the AR starts after gemm_A ends
 * the edge is added; when it ran under gemm_A the edge contradicts the
 * measurement and is not added (overlap preserved). */
static void test_sync_edges(void)
{
  /* Variants 2 and 3 add a cuda_sync "Stream Wait Event" (kineto.md §8): it
   * replaces the record/wait heuristic, so the edge exists only when its
   * wait_on_cuda_event_record_corr_id names the cudaEventRecord (corr 2). */
  for (int v = 0; v < 4; v++) {
    int overlap = v == 1;
    const char *ar_ts = overlap ? "10" : "120";
    const char *sync = v == 2 ? ", {\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"Stream Wait Event\", "
                                "\"pid\": 0, \"tid\": 20, \"ts\": 5, \"dur\": 0, \"args\": {\"device\": 0, "
                                "\"stream\": 20, \"wait_on_stream\": 7, \"wait_on_cuda_event_record_corr_id\": 2}}"
                     : v == 3 ? ", {\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"Stream Wait Event\", "
                                "\"pid\": 0, \"tid\": 20, \"ts\": 5, \"dur\": 0, \"args\": {\"device\": 0, "
                                "\"stream\": 20, \"wait_on_stream\": 7, \"wait_on_cuda_event_record_corr_id\": 99}}"
                              : "";
    gboolean edge = v == 0 || v == 2;
    char *j = g_strdup_printf(
        "{\"distributedInfo\": {\"rank\": 0, \"world_size\": 1}, \"traceEvents\": ["
        "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 5, \"tid\": 5, \"ts\": 0, "
        "\"dur\": 1, \"args\": {\"correlation\": 1}},"
        "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaEventRecord\", \"pid\": 5, \"tid\": 5, \"ts\": 2, "
        "\"dur\": 1, \"args\": {\"correlation\": 2}},"
        "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaStreamWaitEvent\", \"pid\": 5, \"tid\": 5, "
        "\"ts\": 4, \"dur\": 1, \"args\": {\"correlation\": 3}},"
        "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 5, \"tid\": 5, \"ts\": 6, "
        "\"dur\": 1, \"args\": {\"correlation\": 4}},"
        "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm_A\", \"pid\": 0, \"tid\": 7, \"ts\": 0, \"dur\": 100, "
        "\"args\": {\"stream\": 7, \"correlation\": 1}},"
        "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce_Sum_f32_RING_LL\", \"pid\": 0, "
        "\"tid\": 20, \"ts\": %s, \"dur\": 50, \"args\": {\"stream\": 20, \"correlation\": 4, \"Collective name\": "
        "\"allreduce\", \"In msg nelems\": 4, \"dtype\": \"Float\", \"Process Group Ranks\": \"[0]\"}}%s]}", ar_ts,
        sync);
    char *dir = tmpdir_new();
    char *p = write_file(dir, "t.json", j);
    fe_kineto_report rep;
    GError *e = NULL;
    const char *paths[] = { p };
    et_workload *w = fe_kineto_load(paths, 1, NULL, &rep, &e);
    g_assert_no_error(e);
    const et_graph *g = w->ranks[0];
    uint32_t a = find_node(g, "gemm_A"), b = find_node(g, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    g_assert_cmpint(reaches(g, a, b), ==, edge);
    g_assert_cmpuint(rep.ranks[0].cross_stream_edges, ==, edge ? 1 : 0);
    g_assert_cmpuint(rep.ranks[0].inconsistent_sync_edges, ==, overlap ? 1 : 0);
    g_assert_cmpuint(et_node_comm(g, b)->bytes, ==, 16); /* 4 x Float */
    et_workload_free(w);
    fe_kineto_report_clear(&rep);
    g_free(p);
    g_free(j);
    test_rm_rf(dir);
    g_free(dir);
  }
}

/* Cycle breaking (W18, vector A5's requirement): 0->1->2->0 plus 2->3. The
 * dropped edge is the one pointing furthest back in node order, 2->0; the
 * self loop 3->3 is dropped too; 0->1, 1->2, 2->3 survive. */
static void test_cycles(void)
{
  kt_graph g = { 0 };
  g.nodes = g_array_new(FALSE, TRUE, sizeof(kt_node));
  g.edges = g_array_new(FALSE, FALSE, sizeof(kt_edge));
  g_array_set_size(g.nodes, 4);
  kt_edge es[] = { { 0, 1 }, { 1, 2 }, { 2, 0 }, { 2, 3 }, { 3, 3 } };
  g_array_append_vals(g.edges, es, G_N_ELEMENTS(es));
  g_assert_cmpuint(kt_graph_break_cycles(&g), ==, 2);
  g_assert_cmpuint(g.edges->len, ==, 3);
  for (guint i = 0; i < g.edges->len; i++) {
    kt_edge e = g_array_index(g.edges, kt_edge, i);
    g_assert_true(e.parent < e.child);
  }
  g_array_free(g.nodes, TRUE);
  g_array_free(g.edges, TRUE);
}

/* A kernel event on stream 20 with the given args (a small JSON helper). */
static void kern(GString *s, const char *name, int ts, int dur, const char *args)
{
  g_string_append_printf(s, "%s{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": 20, "
                         "\"ts\": %d, \"dur\": %d, \"args\": {\"stream\": 20, %s}}",
                         s->str[s->len - 1] == '[' ? "" : ", ", name, ts, dur, args);
}

static et_workload *load_strings(char **json, int n, fe_kineto_options *opt, fe_kineto_report *rep, char **dir_out)
{
  char *dir = tmpdir_new();
  for (int r = 0; r < n; r++) {
    char *name = g_strdup_printf("rank%d.json", r);
    g_free(write_file(dir, name, json[r]));
    g_free(name);
  }
  GError *e = NULL;
  const char *paths[] = { dir };
  et_workload *w = fe_kineto_load(paths, 1, opt, rep, &e);
  g_assert_no_error(e);
  *dir_out = dir;
  return w;
}

/* Seq matching, truncated group lists and P2P peers (kineto.md §4, §6). */
static void test_groups_seq_p2p(void)
{
  char *json[2];
  /* (1) Seq: rank 0 has all-reduces Seq 1 and 2, rank 1 only Seq 2.  By
   * order, r0#1 would pair with r1's Seq 2; by Seq, r0's Seq 1 is dropped
   * ("present on rank 0 only") and the two Seq 2 instances match. */
  for (int r = 0; r < 2; r++) {
    GString *s = g_string_new("");
    g_string_append_printf(s, "{\"distributedInfo\": {\"rank\": %d, \"world_size\": 2}, \"traceEvents\": [", r);
    const char *ar = "\"Collective name\": \"allreduce\", \"In msg nelems\": %d, \"dtype\": \"Float\", "
                     "\"Process Group Name\": \"0\", \"Process Group Ranks\": \"[0, 1]\", \"Seq\": %d";
    if (r == 0) {
      char *a = g_strdup_printf(ar, 100, 1);
      kern(s, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 10, 5, a);
      g_free(a);
    }
    char *a = g_strdup_printf(ar, 200, 2);
    kern(s, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 30, 5, a);
    g_free(a);
    /* (3) P2P: rank 0 sends 16 floats to rank 1. */
    kern(s, r == 0 ? "ncclDevKernel_SendRecv" : "ncclDevKernel_SendRecv", 50, 5,
         r == 0 ? "\"Collective name\": \"send\", \"In msg nelems\": 16, \"dtype\": \"Float\", "
                  "\"Process Group Ranks\": \"[0, 1]\", \"Dst Rank\": 1"
                : "\"Collective name\": \"recv\", \"Out msg nelems\": 16, \"dtype\": \"Float\", "
                  "\"Process Group Ranks\": \"[0, 1]\", \"Src Rank\": 0");
    g_string_append(s, "]}");
    json[r] = g_string_free(s, FALSE);
  }
  fe_kineto_options opt;
  fe_kineto_options_init(&opt);
  fe_kineto_report rep;
  char *dir;
  et_workload *w = load_strings(json, 2, &opt, &rep, &dir);
  g_assert_cmpuint(rep.matched, ==, 2);   /* Seq 2 all-reduce + the send/recv pair */
  g_assert_cmpuint(rep.dropped, ==, 1);
  g_assert_cmpuint(rep.mismatches, ==, 0); /* ordinal pairing would have paired 400 B with 800 B */
  g_assert_true(report_has_warning(&rep, "present on rank 0 only"));
  const et_graph *g0 = w->ranks[0], *g1 = w->ranks[1];
  gboolean send_ok = FALSE, recv_ok = FALSE, ar_ok = FALSE;
  for (uint32_t i = 0; i < g0->n_nodes; i++) {
    const et_comm *c = et_node_comm(g0, i);
    if (g0->nodes[i].type == ET_NODE_COMM_SEND)
      send_ok = c->src == 0 && c->dst == 1 && c->bytes == 64;
    if (g0->nodes[i].type == ET_NODE_COMM_COLL)
      ar_ok = c->bytes == 800;  /* the Seq 2 instance: 200 x 4 B */
  }
  for (uint32_t i = 0; i < g1->n_nodes; i++)
    if (g1->nodes[i].type == ET_NODE_COMM_RECV)
      recv_ok = et_node_comm(g1, i)->src == 0 && et_node_comm(g1, i)->dst == 1;
  g_assert_true(send_ok && recv_ok && ar_ok);
  et_workload_free(w);
  fe_kineto_report_clear(&rep);
  test_rm_rf(dir);
  g_free(dir);
  g_free(json[0]);
  g_free(json[1]);

  /* (2) A 32-member group whose Process Group Ranks PyTorch cut after 30
   * values: members come from record_param_comms' Global rank start 0 /
   * stride 1 / Group size 32, linked through External id 5. */
  GString *s = g_string_new("{\"distributedInfo\": {\"rank\": 0, \"world_size\": 32}, \"traceEvents\": [");
  g_string_append(s, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"pid\": 1, \"tid\": 1, "
                     "\"ts\": 0, \"dur\": 5, \"args\": {\"External id\": 5, \"Global rank start\": 0, "
                     "\"Global rank stride\": 1, \"Group size\": 32}}");
  GString *ranks = g_string_new("[");
  for (int i = 0; i < 30; i++)
    g_string_append_printf(ranks, "%d, ", i);
  g_string_append(ranks, "...]");
  char *a = g_strdup_printf("\"External id\": 5, \"Collective name\": \"allreduce\", \"In msg nelems\": 10, "
                            "\"dtype\": \"Float\", \"Process Group Name\": \"7\", \"Process Group Ranks\": \"%s\"",
                            ranks->str);
  kern(s, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 1, 5, a);
  g_free(a);
  g_string_free(ranks, TRUE);
  g_string_append(s, "]}");
  json[0] = g_string_free(s, FALSE);
  fe_kineto_options_init(&opt);
  opt.replicate_from = "0";
  w = load_strings(json, 1, &opt, &rep, &dir);
  g_assert_cmpuint(w->groups->len, ==, 1);
  const et_group *grp = et_workload_group(w, 0);
  g_assert_cmpint(grp->n_ranks, ==, 32);
  g_assert_cmpint(grp->ranks[31], ==, 31);
  g_assert_cmpuint(rep.matched, ==, 1);
  et_workload_free(w);
  fe_kineto_report_clear(&rep);
  test_rm_rf(dir);
  g_free(dir);
  g_free(json[0]);
}

/* The node type of rank r's op op_idx in g (kernels mode: one node per op). */
static int node_type_of_op(const kt_graph *g, uint32_t op_idx)
{
  for (guint i = 0; i < g->nodes->len; i++)
    if (g_array_index(g->nodes, kt_node, i).op == op_idx)
      return g_array_index(g->nodes, kt_node, i).type;
  return -1;
}

/* The stages through their own API (issue 16): matching reads the ranks
 * and returns its verdicts, and graph building takes its node types from
 * those verdicts.  The traces are case (1) of test_groups_seq_p2p: rank 0
 * has all-reduces Seq 1 (10 us) and Seq 2 (30 us) and a send (50 us), rank
 * 1 the Seq 2 all-reduce (30 us) and the recv (50 us), all on one stream,
 * so the comms of each rank are in that order.  Expected by hand: groups
 * in first-seen order "0|0,1" (index 0) then "|0,1" (the pair, no name,
 * index 1); Seq 1 dropped "present on a subset of the group"; the Seq 2
 * tuple and the pair matched (2 matched, 1 dropped); one clock sample per
 * rank for the Seq 2 all-reduce, 0 ps because both kernels end at 35 us
 * on the common clock. */
static void test_match_stage(void)
{
  char *dir = tmpdir_new();
  kt_trace *t[2];
  kt_rank *r[2];
  GArray *before[2];
  fe_kineto_options opt;
  fe_kineto_options_init(&opt);
  for (int k = 0; k < 2; k++) {
    GString *s = g_string_new("");
    g_string_append_printf(s, "{\"distributedInfo\": {\"rank\": %d, \"world_size\": 2}, \"traceEvents\": [", k);
    const char *ar = "\"Collective name\": \"allreduce\", \"In msg nelems\": %d, \"dtype\": \"Float\", "
                     "\"Process Group Name\": \"0\", \"Process Group Ranks\": \"[0, 1]\", \"Seq\": %d";
    if (k == 0) {
      char *a = g_strdup_printf(ar, 100, 1);
      kern(s, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 10, 5, a);
      g_free(a);
    }
    char *a = g_strdup_printf(ar, 200, 2);
    kern(s, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 30, 5, a);
    g_free(a);
    kern(s, "ncclDevKernel_SendRecv", 50, 5,
         k == 0 ? "\"Collective name\": \"send\", \"In msg nelems\": 16, \"dtype\": \"Float\", "
                  "\"Process Group Ranks\": \"[0, 1]\", \"Dst Rank\": 1"
                : "\"Collective name\": \"recv\", \"Out msg nelems\": 16, \"dtype\": \"Float\", "
                  "\"Process Group Ranks\": \"[0, 1]\", \"Src Rank\": 0");
    g_string_append(s, "]}");
    char *name = g_strdup_printf("rank%d.json", k);
    char *path = write_file(dir, name, s->str);
    GError *e = NULL;
    t[k] = kt_trace_read(path, &e);
    g_assert_no_error(e);
    r[k] = kt_rank_extract(t[k], k, 2, &opt, &e);
    g_assert_no_error(e);
    before[k] = g_array_copy(r[k]->comms);
    g_free(path);
    g_free(name);
    g_string_free(s, TRUE);
  }
  g_assert_cmpuint(r[0]->comms->len, ==, 3);
  g_assert_cmpuint(r[1]->comms->len, ==, 2);
  GPtrArray *warnings = g_ptr_array_new_with_free_func(g_free);
  GError *e = NULL;
  kt_match *m = kt_match_ranks((const kt_rank *const *)r, 2, FALSE, warnings, &e);
  g_assert_no_error(e);
  g_assert_nonnull(m);
  /* The ranks were only read: their comms are byte for byte as extracted. */
  for (int k = 0; k < 2; k++)
    g_assert_cmpmem(before[k]->data, before[k]->len * sizeof(kt_comm), r[k]->comms->data,
                    r[k]->comms->len * sizeof(kt_comm));
  g_assert_cmpuint(m->stats.matched, ==, 2);
  g_assert_cmpuint(m->stats.dropped, ==, 1);
  g_assert_cmpuint(m->groups->len, ==, 2);
  const kt_comm_match *c0 = m->ranks[0].comms, *c1 = m->ranks[1].comms;
  g_assert_cmpuint(m->ranks[0].n_comms, ==, 3);
  g_assert_cmpuint(m->ranks[1].n_comms, ==, 2);
  g_assert_cmpint(c0[0].status, ==, KT_COMM_DROPPED);
  g_assert_cmpstr(c0[0].drop_reason, ==, "present on a subset of the group");
  g_assert_cmpint(c0[1].status, ==, KT_COMM_MATCHED);
  g_assert_cmpuint(c0[1].group, ==, 0);
  g_assert_cmpint(c0[2].status, ==, KT_COMM_MATCHED);
  g_assert_cmpuint(c0[2].group, ==, 1);
  g_assert_cmpint(c1[0].status, ==, KT_COMM_MATCHED);
  g_assert_cmpuint(c1[0].group, ==, 0);
  g_assert_cmpint(c1[1].status, ==, KT_COMM_MATCHED);
  g_assert_cmpuint(c1[1].group, ==, 1);
  for (int k = 0; k < 2; k++) {
    g_assert_nonnull(m->ranks[k].clock_dev);
    g_assert_cmpuint(m->ranks[k].clock_dev->len, ==, 1);
    g_assert_cmpint(g_array_index(m->ranks[k].clock_dev, int64_t, 0), ==, 0);
  }
  /* Graph building takes the node types from the verdicts it is given. */
  uint32_t op_of[3];
  for (int i = 0; i < 3; i++)
    op_of[i] = g_array_index(r[0]->comms, kt_comm, i).op;
  kt_graph *g = kt_graph_build(r[0], &m->ranks[0], FE_KINETO_KERNELS, SIM_PS_PER_NS, FALSE);
  g_assert_cmpint(node_type_of_op(g, op_of[0]), ==, ET_NODE_COMP);
  g_assert_cmpint(node_type_of_op(g, op_of[1]), ==, ET_NODE_COMM_COLL);
  g_assert_cmpint(node_type_of_op(g, op_of[2]), ==, ET_NODE_COMM_SEND);
  kt_graph_free(g);
  kt_comm_match flipped[3];
  memcpy(flipped, c0, sizeof flipped);
  flipped[1].status = KT_COMM_DROPPED;
  kt_rank_match rm = { flipped, 3, NULL };
  g = kt_graph_build(r[0], &rm, FE_KINETO_KERNELS, SIM_PS_PER_NS, FALSE);
  g_assert_cmpint(node_type_of_op(g, op_of[1]), ==, ET_NODE_COMP);
  g_assert_cmpint(node_type_of_op(g, op_of[2]), ==, ET_NODE_COMM_SEND);
  kt_graph_free(g);
  kt_match_free(m);
  g_ptr_array_free(warnings, TRUE);
  for (int k = 0; k < 2; k++) {
    g_array_free(before[k], TRUE);
    kt_rank_free(r[k]);
    kt_trace_free(t[k]);
  }
  test_rm_rf(dir);
  g_free(dir);
}

/* Regression: a replicated rank shared its source's list of dropped steps,
 * and both were freed (free(): invalid pointer, an abort) when a traced
 * rank had a step dropped as incomplete and absent ranks were synthesized.
 * Rank 0 of 2: ProfilerStep#1 (0..100 us) with an all-reduce, #2
 * (100..200 us) with no GPU work, a later CPU op (300 us) so that #2 is not
 * cut by the trace's end; --steps all drops #2 ("launched no GPU work"),
 * and --replicate-from 0 synthesizes rank 1. */
static void test_replicate_dropped_steps(void)
{
  char *json[1];
  json[0] = g_strdup(
    "{\"distributedInfo\": {\"rank\": 0, \"world_size\": 2}, \"traceEvents\": ["
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"ProfilerStep#1\", \"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 100},"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"ProfilerStep#2\", \"pid\": 1, \"tid\": 1, \"ts\": 100, \"dur\": 100},"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce_Sum_f32_RING_LL\", \"pid\": 0, "
    "\"tid\": 20, \"ts\": 10, \"dur\": 20, \"args\": {\"stream\": 20, \"Collective name\": \"allreduce\", "
    "\"In msg nelems\": 256, \"dtype\": \"Float\", \"Process Group Name\": \"0\", \"Process Group Ranks\": \"[0, 1]\"}},"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"later\", \"pid\": 1, \"tid\": 1, \"ts\": 300, \"dur\": 10}]}");
  fe_kineto_options opt;
  fe_kineto_options_init(&opt);
  opt.all_steps = TRUE;
  opt.replicate_from = "0";
  fe_kineto_report rep;
  char *dir;
  et_workload *w = load_strings(json, 1, &opt, &rep, &dir);
  g_assert_nonnull(w);
  g_assert_cmpint(w->n_ranks, ==, 2);
  g_assert_cmpint(rep.n_missing, ==, 1);
  g_assert_cmpstr(rep.ranks[0].steps_dropped, ==, "#2 (launched no GPU work)");
  g_assert_cmpuint(rep.matched, ==, 1); /* the all-reduce, with its replica */
  et_workload_free(w);
  fe_kineto_report_clear(&rep);
  test_rm_rf(dir);
  g_free(dir);
  g_free(json[0]);
}

/* Size keys (regression): CCL-Bench's mock trace generator writes the element
 * type under "Data Type" instead of "dtype"; it is read as the same field.  A
 * communication kernel with a count but no element type anywhere has no size:
 * it is counted, and a warning says its comm_size is 0 (it used to be counted
 * only, with no warning).  One rank, group [0], two all-reduces by Seq:
 *   Seq 1: 1000 elements of "Data Type" BFloat16 = 1000 x 2 B (c10 BFloat16) = 2000 B;
 *   Seq 2: 10 elements, no dtype key: size unknown, 0 B. */
static void test_size_keys(void)
{
  GString *s = g_string_new("{\"distributedInfo\": {\"rank\": 0, \"world_size\": 1}, \"traceEvents\": [");
  kern(s, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 10, 5,
       "\"Collective name\": \"all_reduce\", \"In msg nelems\": 1000, \"Out msg nelems\": 1000, "
       "\"Data Type\": \"BFloat16\", \"Process Group Ranks\": \"[0]\", \"Seq\": 1");
  kern(s, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 30, 5,
       "\"Collective name\": \"all_reduce\", \"In msg nelems\": 10, \"Out msg nelems\": 10, "
       "\"Process Group Ranks\": \"[0]\", \"Seq\": 2");
  g_string_append(s, "]}");
  char *json[1] = { g_string_free(s, FALSE) };
  fe_kineto_options opt;
  fe_kineto_options_init(&opt);
  opt.whole_trace = TRUE;
  fe_kineto_report rep;
  char *dir;
  et_workload *w = load_strings(json, 1, &opt, &rep, &dir);
  g_assert_cmpint(rep.n_files, ==, 1);
  g_assert_cmpuint(rep.ranks[0].comm_kernels, ==, 2);
  g_assert_cmpuint(rep.ranks[0].comm_size_from_args, ==, 1);
  g_assert_cmpuint(rep.ranks[0].comm_size_unknown, ==, 1);
  g_assert_cmpuint(rep.ranks[0].comm_bytes, ==, 2000);
  g_assert_true(report_has_warning(&rep, "1 communication kernel(s) have no size"));
  const et_graph *g = w->ranks[0];
  uint64_t sizes[2] = { 1, 1 };
  int n = 0;
  for (uint32_t i = 0; i < g->n_nodes; i++)
    if (g->nodes[i].type == ET_NODE_COMM_COLL && n < 2)
      sizes[n++] = et_node_comm(g, i)->bytes;
  g_assert_cmpint(n, ==, 2);
  g_assert_cmpuint(sizes[0], ==, 2000); /* earlier kernel (ts 10) first */
  g_assert_cmpuint(sizes[1], ==, 0);
  et_workload_free(w);
  fe_kineto_report_clear(&rep);
  test_rm_rf(dir);
  g_free(dir);
  g_free(json[0]);
}

/* Step markers numbered by time (kineto.md §7): three marker ranges at 0,
 * 100 and 200 µs (50 µs each) are numbered 0..2.  Each launches GPU work
 * and the decoy ends after the last, so all three are complete (issue 17:
 * steps are dropped only when shown incomplete) and the default window is
 * the last one, step 2 = [200, 250) µs; only the kernel that starts in it
 * (at 210 µs, 20 µs long) is kept: measured step 50 µs.  A decoy event at
 * 300 µs (category cat, name decoy) must not be a step. */
static void check_timed_steps(const char *cat, const char *const names[3], const char *decoy)
{
  GString *s = g_string_new("{\"distributedInfo\": {\"rank\": 0, \"world_size\": 1}, \"traceEvents\": [");
  for (int k = 0; k < 3; k++) {
    g_string_append_printf(s, "%s{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", "
                           "\"pid\": 1, \"tid\": 1, \"ts\": %d, \"dur\": 50}", k ? ", " : "", cat, names[k], 100 * k);
    g_string_append_printf(s, ", {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k%d\", \"pid\": 0, \"tid\": 7, "
                           "\"ts\": %d, \"dur\": 20, \"args\": {\"stream\": 7}}", k, 100 * k + 10);
  }
  g_string_append_printf(s, ", {\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": 1, \"tid\": 1, "
                         "\"ts\": 300, \"dur\": 50}", cat, decoy);
  g_string_append(s, "]}");
  char *json[1] = { g_string_free(s, FALSE) };
  fe_kineto_options opt;
  fe_kineto_options_init(&opt);
  fe_kineto_report rep;
  char *dir;
  et_workload *w = load_strings(json, 1, &opt, &rep, &dir);
  g_assert_cmpint(rep.ranks[0].n_steps, ==, 3);
  g_assert_cmpint(rep.ranks[0].step_used, ==, 2);
  g_assert_null(rep.ranks[0].steps_dropped);
  g_assert_cmpint(w->measured_step_ps[0], ==, 50 * SIM_PS_PER_US);
  const et_graph *g = w->ranks[0];
  uint32_t k2 = find_node(g, "k2");
  g_assert_cmpint(g->nodes[k2].start_ps, ==, 10 * SIM_PS_PER_US);
  for (uint32_t i = 0; i < g->n_nodes; i++)
    g_assert_true(strcmp(et_node_name(g, i), "k0") && strcmp(et_node_name(g, i), "k1"));
  et_workload_free(w);
  fe_kineto_report_clear(&rep);
  test_rm_rf(dir);
  g_free(dir);
  g_free(json[0]);
}

/* vLLM: user_annotation named execute_context_*. */
static void test_vllm_steps(void)
{
  static const char *const names[3] = { "execute_context_0(0)", "execute_context_1(7)", "execute_context_2(14)" };
  check_timed_steps("user_annotation", names, "execute_model");
}

/* SGLang: python_function named run_batch or ending in ": run_batch" (a
 * source location before it); "...: run_batch_inner" is not a step. */
static void test_sglang_steps(void)
{
  static const char *const names[3] = { "sglang/srt/managers/scheduler.py(812): run_batch", "run_batch",
                                        "scheduler.py(812): run_batch" };
  check_timed_steps("python_function", names, "scheduler.py(900): run_batch_inner");
}

/* ---------- real traces ---------- */

/* hta/nccl_parser_config: README says 21 NCCL kernels (15 AllReduce, 6
 * Broadcast) with full args.  Expected counts and bytes are recomputed here
 * from the raw text: for every kernel event whose name starts with
 * ncclKernel_, the args block's "In msg nelems" x element size of its dtype. */
static void test_nccl_data(void)
{
  const char *d = shared_data();
  if (!d) {
    g_test_skip("WISP_SHARED_DATA not set or absent: hta/nccl_parser_config test skipped");
    return;
  }
  char *path = g_build_filename(d, "hta/nccl_parser_config/nccl_data.json.gz", NULL);
  char *text = read_gz(path);
  GRegex *re = g_regex_new("\"cat\": \"kernel\", \"name\": \"ncclKernel_(\\w+?)_[^}]*?\"dtype\": \"(\\w+)\"", 0, 0, NULL);
  GRegex *ne = g_regex_new("\"In msg nelems\": (\\d+)", 0, 0, NULL);
  GMatchInfo *mi;
  guint n_ar = 0, n_bc = 0;
  guint64 bytes = 0;
  g_regex_match(re, text, 0, &mi);
  while (g_match_info_matches(mi)) {
    char *op = g_match_info_fetch(mi, 1), *dt = g_match_info_fetch(mi, 2), *all = g_match_info_fetch(mi, 0);
    n_ar += !strcmp(op, "AllReduce");
    n_bc += !strcmp(op, "Broadcast");
    GMatchInfo *m2;
    g_assert_true(g_regex_match(ne, all, 0, &m2));
    char *num = g_match_info_fetch(m2, 1);
    /* c10 element sizes of the dtypes present: Float 4, Long 8. */
    int sz = !strcmp(dt, "Float") ? 4 : !strcmp(dt, "Long") ? 8 : -1;
    g_assert_cmpint(sz, >, 0);
    bytes += g_ascii_strtoull(num, NULL, 10) * (guint64)sz;
    g_free(num);
    g_match_info_free(m2);
    g_free(op);
    g_free(dt);
    g_free(all);
    g_match_info_next(mi, NULL);
  }
  g_match_info_free(mi);
  g_regex_unref(re);
  g_regex_unref(ne);
  g_free(text);
  g_assert_cmpuint(n_ar, ==, 15); /* the README's numbers, recomputed */
  g_assert_cmpuint(n_bc, ==, 6);
  fe_kineto_options opt;
  fe_kineto_options_init(&opt);
  opt.whole_trace = TRUE;      /* count every kernel, not one step */
  opt.replicate_from = "0";    /* rank 0 of 2: rank 1 synthesized */
  fe_kineto_report rep;
  GError *e = NULL;
  const char *paths[] = { path };
  et_workload *w = fe_kineto_load(paths, 1, &opt, &rep, &e);
  g_assert_no_error(e);
  const fe_kineto_rank_report *rr = &rep.ranks[0];
  g_assert_cmpuint(rr->events_read, ==, 40573);  /* README */
  g_assert_cmpuint(rr->kernels, ==, 2700);        /* README */
  g_assert_cmpuint(rr->comm_by_type[ET_COLL_ALL_REDUCE], ==, n_ar);
  g_assert_cmpuint(rr->comm_by_type[ET_COLL_BROADCAST], ==, n_bc);
  g_assert_cmpuint(rr->comm_size_from_args, ==, n_ar + n_bc);
  g_assert_cmpuint(rr->comm_bytes, ==, bytes);
  g_assert_cmpuint(rr->comm_dropped, ==, 0);
  g_assert_cmpint(rr->n_steps, ==, 3);           /* ProfilerStep#4..6 */
  g_assert_cmpint(rr->step_first, ==, 4);
  g_assert_cmpint(rr->step_last, ==, 6);
  g_assert_true(report_has_warning(&rep, "synthesized from rank(s) 0"));
  /* pg_config: the group is pg "0" default_pg over [0, 1]. */
  g_assert_cmpuint(w->groups->len, ==, 1);
  const et_group *grp = et_workload_group(w, 0);
  g_assert_cmpint(grp->n_ranks, ==, 2);
  g_assert_nonnull(strstr(grp->desc, "default_pg"));
  et_workload_free(w);
  fe_kineto_report_clear(&rep);
  /* Default window: the last complete step, #6 of 4..6 (issue 17: a step is
   * dropped only when shown incomplete; #6 launches GPU work and the trace
   * goes on for about 17 ms after its marker ends, so it is complete). */
  fe_kineto_options_init(&opt);
  opt.replicate_from = "0";
  w = fe_kineto_load(paths, 1, &opt, &rep, &e);
  g_assert_no_error(e);
  g_assert_cmpint(rep.ranks[0].step_used, ==, 6);
  g_assert_cmpint(rep.ranks[0].n_steps_used, ==, 1);
  g_assert_null(rep.ranks[0].steps_dropped);
  g_assert_cmpuint(rep.ranks[0].comm_kernels, <, n_ar + n_bc);
  et_workload_free(w);
  fe_kineto_report_clear(&rep);
  /* --steps all: all three steps, none dropped. */
  fe_kineto_options_init(&opt);
  opt.replicate_from = "0";
  opt.all_steps = TRUE;
  w = fe_kineto_load(paths, 1, &opt, &rep, &e);
  g_assert_no_error(e);
  g_assert_cmpint(rep.ranks[0].step_used_first, ==, 4);
  g_assert_cmpint(rep.ranks[0].step_used, ==, 6);
  g_assert_cmpint(rep.ranks[0].n_steps_used, ==, 3);
  g_assert_cmpstr(rep.step_note, ==, "ProfilerStep#4..#6 (--steps all: 3 step(s) of 3 on rank 0; none dropped)");
  et_workload_free(w);
  fe_kineto_report_clear(&rep);
  /* Without --replicate-from, a missing rank is an error that says how to proceed. */
  g_assert_null(fe_kineto_load(paths, 1, NULL, NULL, &e));
  g_assert_error(e, WISP_ERROR, WISP_ERROR_INVALID);
  g_assert_nonnull(strstr(e->message, "--replicate-from"));
  g_clear_error(&e);
  g_free(path);
}

/* param/dlrm_kineto.tar.gz: 8 ranks, per rank 3 AllReduce + 5 SendRecv
 * kernels whose sizes come only from CPU-side nccl:* ops.  Expected bytes
 * per rank = sum over the file's nccl:all_reduce / nccl:all_to_all ops of
 * Input Dims[0][0] x sizeof(Input type[0]), recomputed from the raw text. */
static void test_dlrm(void)
{
  const char *d = shared_data();
  if (!d) {
    g_test_skip("WISP_SHARED_DATA not set or absent: DLRM test skipped");
    return;
  }
  char *tar = g_build_filename(d, "param/dlrm_kineto.tar.gz", NULL);
  char *dir = tmpdir_new();
  test_untar(tar, dir);
  char *tdir = g_build_filename(dir, "dlrm_kineto", NULL);
  fe_kineto_report rep;
  GError *e = NULL;
  const char *paths[] = { tdir };
  et_workload *w = fe_kineto_load(paths, 1, NULL, &rep, &e);
  g_assert_no_error(e);
  g_assert_cmpint(w->n_ranks, ==, 8);
  g_assert_cmpint(rep.n_files, ==, 8);
  /* 8 communications per rank, all matched across the 8 ranks. */
  g_assert_cmpuint(rep.matched, ==, 8);
  g_assert_cmpuint(rep.dropped, ==, 0);
  g_assert_cmpuint(rep.mismatches, ==, 0);
  /* Clock check: the 8 ranks ran on one 8x V100 machine (../shared/data/README.md), one clock, so
   * the kernels of each collective end together up to the traces' 1 us
   * timestamp resolution and NCCL's exit jitter: every rank has 8 matched
   * collectives and the medians agree within 10 us (measured: 2 us). */
  g_assert_cmpint(rep.clock_ranks, ==, 8);
  g_assert_cmpuint(rep.clock_samples_min, ==, 8);
  g_test_message("DLRM clock spread: %" G_GINT64_FORMAT " ps", rep.clock_spread_ps);
  g_assert_cmpint(rep.clock_spread_ps, <=, 10 * SIM_PS_PER_US);
  GRegex *re = g_regex_new("\"name\": \"nccl:(all_reduce|all_to_all)\"[^}]*\"Input Dims\": \\[\\[(\\d+)\\]\\], "
                           "\"Input type\": \\[\"([^\"]+)\"\\]", 0, 0, NULL);
  for (int i = 0; i < rep.n_files; i++) {
    const fe_kineto_rank_report *rr = &rep.ranks[i];
    char *text;
    g_assert_true(g_file_get_contents(rr->path, &text, NULL, NULL));
    GMatchInfo *mi;
    guint64 bytes = 0;
    guint n = 0;
    g_regex_match(re, text, 0, &mi);
    while (g_match_info_matches(mi)) {
      char *num = g_match_info_fetch(mi, 2), *ty = g_match_info_fetch(mi, 3);
      /* Element sizes of the C++ names seen here: float 4, int 4, long int 8. */
      int sz = !strcmp(ty, "long int") ? 8 : (!strcmp(ty, "float") || !strcmp(ty, "int")) ? 4 : -1;
      g_assert_cmpint(sz, >, 0);
      bytes += g_ascii_strtoull(num, NULL, 10) * (guint64)sz;
      n++;
      g_free(num);
      g_free(ty);
      g_match_info_next(mi, NULL);
    }
    g_match_info_free(mi);
    g_free(text);
    g_assert_cmpuint(n, ==, 8);
    g_assert_cmpstr(rr->rank_source, ==, "distributedInfo.rank");
    g_assert_cmpuint(rr->comm_by_type[ET_COLL_ALL_REDUCE], ==, 3);
    g_assert_cmpuint(rr->comm_by_type[ET_COLL_ALL_TO_ALL], ==, 5);
    g_assert_cmpuint(rr->comm_size_from_cpu_op, ==, 8);
    g_assert_cmpuint(rr->comm_bytes, ==, bytes);
    g_assert_cmpuint(rr->comm_matched, ==, 8);
    g_assert_cmpint(rr->step_used, ==, 10);
    g_assert_cmpint(w->measured_step_ps[rr->rank], >, 0);
  }
  /* Rank 2's first all-reduce is 394,241 floats = 1,576,964 B (kineto.md §4.1). */
  const et_graph *g2 = w->ranks[2];
  gboolean seen = FALSE;
  for (uint32_t i = 0; i < g2->n_nodes; i++)
    if (g2->nodes[i].comm != ET_NONE && et_node_comm(g2, i)->bytes == 1576964)
      seen = TRUE;
  g_assert_true(seen);
  g_regex_unref(re);
  et_workload_free(w);
  fe_kineto_report_clear(&rep);
  test_rm_rf(dir);
  g_free(dir);
  g_free(tdir);
  g_free(tar);
}

/* Edge-case fixtures: documented errors and warnings, never crashes. */
static void test_edge_cases(void)
{
  const char *d = shared_data();
  if (!d) {
    g_test_skip("WISP_SHARED_DATA not set or absent: edge-case fixtures skipped");
    return;
  }
  static const struct {
    const char *path;
    int code;          /* -1 = loads */
    const char *text;  /* in the error, or in a warning when it loads */
  } cases[] = {
    { "hta/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", WISP_ERROR_UNSUPPORTED, "CPU-only trace (backend gloo)" },
    { "hta/distributed_info_unavailable/distributed_info_not_found.json.gz", WISP_ERROR_UNSUPPORTED, "CPU-only" },
    { "hta/rank_unavailable/rank_not_found.json.gz", WISP_ERROR_UNSUPPORTED, "CPU-only" },
    { "hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz", -1, "launched no GPU work" },
    { "tracelens/h100/gaunernst_bert-small-uncased__1016001.json.gz", -1, "no distributedInfo" },
    { "hta/trace_filter", WISP_ERROR_INVALID, "126 of 128 ranks have no trace" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    char *p = g_build_filename(d, cases[i].path, NULL);
    const char *paths[] = { p };
    fe_kineto_report rep;
    GError *e = NULL;
    et_workload *w = fe_kineto_load(paths, 1, NULL, &rep, &e);
    if (cases[i].code < 0) {
      g_assert_no_error(e);
      g_assert_nonnull(w);
      if (!report_has_warning(&rep, cases[i].text))
        g_error("%s: no warning containing '%s'", p, cases[i].text);
      g_assert_cmpuint(rep.ranks[0].comm_kernels, ==, 0);
    } else {
      g_assert_null(w);
      g_assert_error(e, WISP_ERROR, cases[i].code);
      if (!strstr(e->message, cases[i].text))
        g_error("%s: error '%s' lacks '%s'", p, e->message, cases[i].text);
      g_clear_error(&e);
    }
    et_workload_free(w);
    fe_kineto_report_clear(&rep);
    g_free(p);
  }
  /* AMD MI250: 14 kernels + 2 memcpy in the file (grep of "cat": "kernel" /
   * "gpu_memcpy"), HIP launch names recognised: 12 hipLaunchKernel + 2
   * hipExtModuleLaunchKernel + 2 hipMemcpyWithStream = 16 launches. */
  char *p = g_build_filename(d, "hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz", NULL);
  const char *paths[] = { p };
  fe_kineto_report rep;
  GError *e = NULL;
  et_workload *w = fe_kineto_load(paths, 1, NULL, &rep, &e);
  g_assert_no_error(e);
  g_assert_cmpuint(rep.ranks[0].kernels, ==, 14);
  g_assert_cmpuint(rep.ranks[0].memcpys, ==, 2);
  g_assert_cmpuint(rep.ranks[0].launches, ==, 16);
  g_assert_cmpint(rep.ranks[0].step_used, ==, 1);
  et_workload_free(w);
  fe_kineto_report_clear(&rep);
  g_free(p);
}

/* Malformed input: every truncation of a valid trace, bad escapes and
 * non-trace JSON give WISP_ERROR_PARSE / INVALID naming the byte offset. */
static void test_malformed(void)
{
  char *full = a1_json(0);
  size_t n = strlen(full);
  char *dir = tmpdir_new();
  char *p = g_build_filename(dir, "rank0.json", NULL);
  const char *paths[] = { p };
  for (size_t cut = 0; cut < n; cut += (cut < 200 ? 1 : 7)) {
    g_assert_true(g_file_set_contents(p, full, (gssize)cut, NULL));
    GError *e = NULL;
    et_workload *w = fe_kineto_load(paths, 1, NULL, NULL, &e);
    g_assert_null(w);
    g_assert_nonnull(e);
    g_assert_true(e->code == WISP_ERROR_PARSE);
    g_assert_nonnull(strstr(e->message, "byte "));
    g_error_free(e);
  }
  static const struct { const char *json; int code; const char *text; } bad[] = {
    { "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\\qb\"}]}", WISP_ERROR_PARSE, "byte 39:" }, /* the backslash is at offset 39 */
    { "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1e999999}]}", WISP_ERROR_PARSE, "out of range" },
    { "{\"traceEvents\": [{\"ph\": \"X\", \"dur\": -5}]}", WISP_ERROR_PARSE, "negative" },
    { "{\"traceEvents\": 5}", WISP_ERROR_PARSE, "not an array" },
    { "42", WISP_ERROR_PARSE, "not a Kineto trace" },
    { "{\"schemaVersion\": 1}", WISP_ERROR_INVALID, "no traceEvents" },
    { "{\"traceEvents\": []} []", WISP_ERROR_PARSE, "after the end" },
    /* Groups naming ranks beyond the world size (1 here, 32 in the last):
     * refused before anything is expanded or allocated for them. */
    { "{\"distributedInfo\": {\"rank\": 0, \"world_size\": 1}, \"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", "
      "\"name\": \"ncclDevKernel_AllReduce_Sum_f32_RING_LL\", \"ts\": 0, \"dur\": 1, \"args\": {\"stream\": 7, "
      "\"Collective name\": \"allreduce\", \"In msg nelems\": 1, \"dtype\": \"Float\", \"Group size\": 100000000, "
      "\"Process Group Ranks\": \"[0, 1, ..., 99999999]\"}}]}", WISP_ERROR_INVALID, "beyond the job's world size" },
    { "{\"distributedInfo\": {\"rank\": 0, \"world_size\": 1, \"pg_config\": [{\"pg_name\": \"3\", \"ranks\": [0, 9]}]}, "
      "\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce_Sum_f32_RING_LL\", "
      "\"ts\": 0, \"dur\": 1, \"args\": {\"stream\": 7, \"Collective name\": \"allreduce\", \"In msg nelems\": 1, "
      "\"dtype\": \"Float\", \"Process Group Name\": \"3\"}}]}", WISP_ERROR_INVALID, "group '3' names rank 9" },
    { "{\"distributedInfo\": {\"rank\": 0, \"world_size\": 32}, \"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", "
      "\"name\": \"record_param_comms\", \"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 5, \"args\": {\"External id\": 5, "
      "\"Global rank start\": 0, \"Global rank stride\": 2, \"Group size\": 32}}, {\"ph\": \"X\", \"cat\": \"kernel\", "
      "\"name\": \"ncclDevKernel_AllReduce_Sum_f32_RING_LL\", \"ts\": 1, \"dur\": 5, \"args\": {\"stream\": 7, "
      "\"External id\": 5, \"Collective name\": \"allreduce\", \"In msg nelems\": 10, \"dtype\": \"Float\", "
      "\"Process Group Name\": \"7\", \"Process Group Ranks\": \"[0, 2, 4, 6, ...]\"}}]}",
      WISP_ERROR_INVALID, "stride 2 and Group size 32 name ranks beyond the job's world size 32" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_assert_true(g_file_set_contents(p, bad[i].json, -1, NULL));
    GError *e = NULL;
    g_assert_null(fe_kineto_load(paths, 1, NULL, NULL, &e));
    g_assert_error(e, WISP_ERROR, bad[i].code);
    if (!strstr(e->message, bad[i].text))
      g_error("%s: '%s' lacks '%s'", bad[i].json, e->message, bad[i].text);
    g_error_free(e);
    /* Without a GError the load fails all the same. */
    g_assert_null(fe_kineto_load(paths, 1, NULL, NULL, NULL));
    /* And so does the extraction stage itself: a fatal error in a
     * communication kernel's description (the last three inputs) once
     * passed for a skipped kernel when the caller gave no GError, and the
     * rank was extracted without that collective. */
    if (i >= G_N_ELEMENTS(bad) - 3) {
      kt_trace *t = kt_trace_read(p, NULL);
      g_assert_nonnull(t);
      int world = i == G_N_ELEMENTS(bad) - 1 ? 32 : 1;
      fe_kineto_options o;
      fe_kineto_options_init(&o);
      kt_rank *r = kt_rank_extract(t, 0, world, &o, NULL);
      if (r != NULL)
        g_error("%s: extraction without a GError succeeded", bad[i].json);
      kt_trace_free(t);
    }
  }
  /* Deeply nested args (100,000 levels) are skipped without recursion. */
  GString *deep = g_string_new("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 0, "
                               "\"dur\": 1, \"args\": {\"x\": ");
  for (int i = 0; i < 100000; i++)
    g_string_append_c(deep, '[');
  for (int i = 0; i < 100000; i++)
    g_string_append_c(deep, ']');
  g_string_append(deep, "}}]}");
  g_assert_true(g_file_set_contents(p, deep->str, (gssize)deep->len, NULL));
  GError *e = NULL;
  et_workload *w = fe_kineto_load(paths, 1, NULL, NULL, &e);
  g_assert_no_error(e);
  g_assert_cmpuint(w->ranks[0]->n_nodes, ==, 1);
  et_workload_free(w);
  g_string_free(deep, TRUE);
  g_free(full);
  g_free(p);
  test_rm_rf(dir);
  g_free(dir);
}

/* ---------- parallel parsing (fe_kineto_options.threads) ---------- */

/* Rank file i of the parallel test (8 files, world 8).  distributedInfo.rank
 * is 7 - i while the file is named rank<i>, so every file gives one
 * file-name warning at identification; the earlier files are the larger
 * ((8 - i) x 1000 compute kernels) so that with several workers the later
 * files finish first.  Then, on the file's rank q: an all-reduce over all 8
 * ranks (4096 floats), one in the pair group [2(q/2), 2(q/2)+1] of
 * (q/2 + 1) x 256 floats, and for odd q a communication kernel without
 * element type in the group [q] (no size: one extraction warning). */
static char *par_json(int i)
{
  int q = 7 - i, p = q / 2;
  GString *s = g_string_new("");
  g_string_append_printf(s, "{\"distributedInfo\": {\"rank\": %d, \"world_size\": 8}, \"traceEvents\": [", q);
  int ts = 0;
  for (int k = 0; k < (8 - i) * 1000; k++, ts += 10) {
    char *a = g_strdup_printf("\"External id\": %d", k + 1);
    kern(s, k % 3 ? "gemm_A" : "gemm_B", ts, 4 + k % 5, a);
    g_free(a);
  }
  kern(s, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", ts + 10, 5,
       "\"Collective name\": \"allreduce\", \"In msg nelems\": 4096, \"dtype\": \"Float\", "
       "\"Process Group Name\": \"0\", \"Process Group Ranks\": \"[0, 1, 2, 3, 4, 5, 6, 7]\", \"Seq\": 1");
  char *a = g_strdup_printf("\"Collective name\": \"allreduce\", \"In msg nelems\": %d, \"dtype\": \"Float\", "
                            "\"Process Group Name\": \"p%d\", \"Process Group Ranks\": \"[%d, %d]\", \"Seq\": 1",
                            (p + 1) * 256, p, 2 * p, 2 * p + 1);
  kern(s, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", ts + 30, 5, a);
  g_free(a);
  if (q % 2) {
    a = g_strdup_printf("\"Collective name\": \"allreduce\", \"In msg nelems\": 10, \"Process Group Name\": \"s%d\", "
                        "\"Process Group Ranks\": \"[%d]\", \"Seq\": 1", q, q);
    kern(s, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", ts + 50, 5, a);
    g_free(a);
  }
  g_string_append(s, "]}");
  return g_string_free(s, FALSE);
}

static int cmp_strp(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every file of dir, sorted by name, as "name\n<size>\n<bytes>" records. */
static GString *dir_bytes(const char *dir)
{
  GDir *d = g_dir_open(dir, 0, NULL);
  g_assert_nonnull(d);
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  const char *e;
  while ((e = g_dir_read_name(d)))
    g_ptr_array_add(names, g_strdup(e));
  g_dir_close(d);
  g_ptr_array_sort(names, (GCompareFunc)cmp_strp);
  GString *out = g_string_new("");
  for (guint i = 0; i < names->len; i++) {
    char *p = g_build_filename(dir, (char *)g_ptr_array_index(names, i), NULL), *text;
    gsize len;
    g_assert_true(g_file_get_contents(p, &text, &len, NULL));
    g_string_append_printf(out, "%s\n%" G_GSIZE_FORMAT "\n", (char *)g_ptr_array_index(names, i), len);
    g_string_append_len(out, text, (gssize)len);
    g_free(text);
    g_free(p);
  }
  g_ptr_array_free(names, TRUE);
  return out;
}

/* Loads paths with `threads` workers; returns the printed report (or
 * "error <code>: <message>") and, when it loads, the written .et files. */
static char *par_load(const char *const *paths, int n_paths, int threads, const char *outdir, GString **et_bytes)
{
  fe_kineto_options opt;
  fe_kineto_options_init(&opt);
  opt.threads = threads;
  fe_kineto_report rep;
  GError *e = NULL;
  et_workload *w = fe_kineto_load(paths, n_paths, &opt, &rep, &e);
  char *text;
  if (!w) {
    g_assert_nonnull(e);
    text = g_strdup_printf("error %d: %s", e->code, e->message);
    g_error_free(e);
    *et_bytes = NULL;
  } else {
    g_assert_no_error(e);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    g_assert_nonnull(f);
    fe_kineto_report_print(&rep, f);
    fclose(f);
    text = g_strndup(buf, len);
    free(buf);
    g_assert_cmpint(g_mkdir_with_parents(outdir, 0755), ==, 0);
    g_assert_true(et_workload_write(w, outdir, "trace", &e));
    g_assert_no_error(e);
    *et_bytes = dir_bytes(outdir);
    et_workload_free(w);
  }
  fe_kineto_report_clear(&rep);
  return text;
}

/* The parallel path gives the sequential path's output byte for byte: the
 * same report (warnings in file order), the same .et files and, on bad
 * input, the error of the first failing file in input order. */
static void test_parallel(void)
{
  char *dir = tmpdir_new(), *paths[8];
  for (int i = 0; i < 8; i++) {
    char *j = par_json(i), *name = g_strdup_printf("rank%d_trace.json", i);
    paths[i] = write_file(dir, name, j);
    g_free(j);
    g_free(name);
  }
  char *out1 = g_build_filename(dir, "out1", NULL), *out4 = g_build_filename(dir, "out4", NULL);
  GString *et1, *et4;
  const char *in[] = { dir };
  char *rep1 = par_load(in, 1, 1, out1, &et1);
  g_assert_nonnull(et1);
  /* Expected from par_json: 8 ranks, 1 + 4 + 4 = 9 communication groups
   * (world, pairs, odd-rank singletons), one instance each, all matched. */
  g_assert_nonnull(strstr(rep1, "8 file(s), world size 8"));
  g_assert_nonnull(strstr(rep1, "groups: 9"));
  g_assert_nonnull(strstr(rep1, "matching: 9 matched, 0 dropped"));
  /* Warnings: the 8 file-name warnings in file order, then the 4 size
   * warnings of files 0, 2, 4, 6 (odd ranks 7, 5, 3, 1) in file order, then
   * the clock check's: every file starts at ts 0 but file i's collectives
   * come after (8 - i) x 1000 kernels, so shared collectives end tens of
   * milliseconds apart on the ranks' clocks. */
  const char *pos = strstr(rep1, "warnings (13):");
  g_assert_nonnull(pos);
  for (int i = 0; i < 8; i++) {
    char *w = g_strdup_printf("rank%d_trace.json: file name says rank %d but distributedInfo.rank is %d", i, i,
                              7 - i);
    const char *at = strstr(pos, w);
    if (!at)
      g_error("warning '%s' missing or out of order in:\n%s", w, rep1);
    pos = at;
    g_free(w);
  }
  for (int i = 0; i < 8; i += 2) {
    char *w = g_strdup_printf("rank %d: 1 communication kernel(s) have no size", 7 - i);
    const char *at = strstr(pos + 1, w);
    if (!at)
      g_error("size warning of file %d missing or out of order in:\n%s", i, rep1);
    pos = at;
    g_free(w);
  }
  g_assert_nonnull(strstr(pos, "rank clocks disagree"));
  /* 4 workers (fewer than the files, so workers take several) and 8, five
   * times each to meet different schedules. */
  for (int rep = 0; rep < 5; rep++)
    for (int t = 4; t <= 8; t += 4) {
      test_rm_rf(out4);
      char *rep4 = par_load(in, 1, t, out4, &et4);
      g_assert_cmpstr(rep4, ==, rep1);
      g_assert_nonnull(et4);
      g_assert_cmpuint(et4->len, ==, et1->len);
      g_assert_true(memcmp(et4->str, et1->str, et1->len) == 0);
      g_string_free(et4, TRUE);
      g_free(rep4);
    }
  g_assert_cmpuint(et1->len, >, 8 * 1000);  /* 8 .et files with at least 1000 nodes each were compared */
  g_string_free(et1, TRUE);
  g_free(rep1);

  /* Errors.  Files 2 and 5 cut in the middle: file 5 is smaller and fails
   * first in time with several workers, yet file 2's error is the one
   * reported, as when reading one after another. */
  for (int i = 2; i <= 5; i += 3) {
    char *j = par_json(i);
    g_assert_true(g_file_set_contents(paths[i], j, (gssize)(strlen(j) / 2), NULL));
    g_free(j);
  }
  const char *files[8];
  for (int i = 0; i < 8; i++)
    files[i] = paths[i];
  char *err1 = par_load(files, 8, 1, out1, &et1);
  g_assert_null(et1);
  char *want = g_strdup_printf("error %d: %s", WISP_ERROR_PARSE, paths[2]);
  if (!g_str_has_prefix(err1, want))
    g_error("'%s' is not file 2's parse error", err1);
  g_free(want);
  for (int rep = 0; rep < 5; rep++) {
    char *err4 = par_load(files, 8, 4, out4, &et4);
    g_assert_cmpstr(err4, ==, err1);
    g_free(err4);
  }
  g_free(err1);
  /* Extraction errors come after every parse, in file order: with file 2
   * parsing again and files 3 and 6 CPU-only (no GPU op), file 3 is named;
   * file 5 still fails to parse, so its parse error comes first. */
  for (int i = 2; i <= 6; i++) {
    if (i == 4)
      continue;
    char *j = i == 2 || i == 5 ? par_json(i)
                               : g_strdup_printf("{\"distributedInfo\": {\"rank\": %d, \"world_size\": 8}, "
                                                 "\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": "
                                                 "\"aten::mm\", \"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 5}]}", 7 - i);
    g_assert_true(g_file_set_contents(paths[i], j, i == 5 ? (gssize)(strlen(j) / 3) : -1, NULL));
    g_free(j);
  }
  err1 = par_load(files, 8, 1, out1, &et1);
  want = g_strdup_printf("error %d: %s", WISP_ERROR_PARSE, paths[5]);
  if (!g_str_has_prefix(err1, want))
    g_error("'%s' is not file 5's parse error", err1);
  g_free(want);
  char *err4 = par_load(files, 8, 4, out4, &et4);
  g_assert_cmpstr(err4, ==, err1);
  g_free(err4);
  g_free(err1);
  char *j5 = par_json(5);
  g_assert_true(g_file_set_contents(paths[5], j5, -1, NULL));
  g_free(j5);
  err1 = par_load(files, 8, 1, out1, &et1);
  want = g_strdup_printf("error %d: %s: no GPU kernels", WISP_ERROR_UNSUPPORTED, paths[3]);
  if (!g_str_has_prefix(err1, want))
    g_error("'%s' is not file 3's CPU-only error", err1);
  g_free(want);
  for (int rep = 0; rep < 5; rep++) {
    err4 = par_load(files, 8, 4, out4, &et4);
    g_assert_cmpstr(err4, ==, err1);
    g_free(err4);
  }
  g_free(err1);

  for (int i = 0; i < 8; i++)
    g_free(paths[i]);
  g_free(out1);
  g_free(out4);
  test_rm_rf(dir);
  g_free(dir);
}

/* WISP_THREADS (used when opt.threads is 0) must be a whole number from 1
 * to 4096; anything else is an error naming the variable.  Runs in a
 * subprocess: setenv is only safe before any thread has been created. */
static void test_threads_env(void)
{
  if (g_test_subprocess()) {
    g_setenv("WISP_THREADS", "two", TRUE);
    char *dir = tmpdir_new();
    for (int r = 0; r < 2; r++) {
      char *j = a1_json(r), *name = g_strdup_printf("rank%d.json", r);
      g_free(write_file(dir, name, j));
      g_free(name);
      g_free(j);
    }
    const char *paths[] = { dir };
    fe_kineto_options opt;
    fe_kineto_options_init(&opt);
    GError *e = NULL;
    g_assert_null(fe_kineto_load(paths, 1, &opt, NULL, &e));
    g_assert_error(e, WISP_ERROR, WISP_ERROR_INVALID);
    g_assert_nonnull(strstr(e->message, "WISP_THREADS='two'"));
    g_clear_error(&e);
    /* opt.threads wins over the variable. */
    opt.threads = 2;
    et_workload *w = fe_kineto_load(paths, 1, &opt, NULL, &e);
    g_assert_no_error(e);
    et_workload_free(w);
    g_setenv("WISP_THREADS", "3", TRUE);
    opt.threads = 0;
    w = fe_kineto_load(paths, 1, &opt, NULL, &e);
    g_assert_no_error(e);
    et_workload_free(w);
    test_rm_rf(dir);
    g_free(dir);
    return;
  }
  g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed();
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/kineto/tables", test_tables);
  g_test_add_func("/kineto/ranks", test_ranks);
  g_test_add_func("/kineto/a1", test_a1);
  g_test_add_func("/kineto/a1_gap_mode", test_a1_gap_mode);
  g_test_add_func("/kineto/precision", test_precision);
  g_test_add_func("/kineto/sync_edges", test_sync_edges);
  g_test_add_func("/kineto/cycles", test_cycles);
  g_test_add_func("/kineto/groups_seq_p2p", test_groups_seq_p2p);
  g_test_add_func("/kineto/match_stage", test_match_stage);
  g_test_add_func("/kineto/replicate_dropped_steps", test_replicate_dropped_steps);
  g_test_add_func("/kineto/size_keys", test_size_keys);
  g_test_add_func("/kineto/vllm_steps", test_vllm_steps);
  g_test_add_func("/kineto/sglang_steps", test_sglang_steps);
  g_test_add_func("/kineto/nccl_data", test_nccl_data);
  g_test_add_func("/kineto/dlrm", test_dlrm);
  g_test_add_func("/kineto/edge_cases", test_edge_cases);
  g_test_add_func("/kineto/malformed", test_malformed);
  g_test_add_func("/kineto/parallel", test_parallel);
  g_test_add_func("/kineto/threads_env", test_threads_env);
  return g_test_run();
}
