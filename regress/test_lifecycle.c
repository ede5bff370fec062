/* test_lifecycle.c: the communication library's buffer lifecycle from
 * Kineto [memory] events (frontends/kineto_mem.c, doc/libraries.md §4),
 * end to end: hand-written Kineto traces -> fe_kineto_load -> et_graph
 * (et_comm.buffer / alloc_ps) -> sim_replay_run with `library: stratacl`,
 * whose registration-on-allocation readiness barrier is hit or not
 * depending on the allocation-to-use gap versus the registration time.
 */
#include "config.h"

#include "frontends/fe.h"
#include "frontends/kineto_mem.h"
#include "replay/sim_replay.h"
#include "topologies/topo.h"
#include "collectives/libraries/supernode/coll_library_internal.h"

#include <glib/gstdio.h>
#include <string.h>

#define US SIM_PS_PER_US

static char *tmpdir_new(void)
{
  GError *e = NULL;
  char *d = g_dir_make_tmp("test_lifecycle_XXXXXX", &e);
  g_assert_no_error(e);
  return d;
}

static void rm_dir(const char *dir)
{
  GDir *d = g_dir_open(dir, 0, NULL);
  const char *n;
  while (d && (n = g_dir_read_name(d)) != NULL) {
    char *p = g_build_filename(dir, n, NULL);
    g_unlink(p);
    g_free(p);
  }
  if (d)
    g_dir_close(d);
  g_rmdir(dir);
}

static char *write_file(const char *dir, const char *name, const char *text)
{
  char *p = g_build_filename(dir, name, NULL);
  GError *e = NULL;
  g_assert_true(g_file_set_contents(p, text, -1, &e));
  g_assert_no_error(e);
  return p;
}

static void sep(GString *s)
{
  if (s->str[s->len - 1] != '[')
    g_string_append(s, ", ");
}

/* A [memory] instant (µs timestamps; bytes < 0 frees). */
static void mem(GString *s, int64_t ts_us, int64_t addr, int64_t bytes, int dev_type, int dev_id)
{
  sep(s);
  g_string_append_printf(s, "{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", "
                         "\"pid\": 1, \"tid\": 1, \"ts\": %" G_GINT64_FORMAT ", \"args\": {\"Addr\": %" G_GINT64_FORMAT
                         ", \"Bytes\": %" G_GINT64_FORMAT ", \"Total Allocated\": 0, \"Total Reserved\": 0, "
                         "\"Device Id\": %d, \"Device Type\": %d}}", ts_us, addr, bytes, dev_id, dev_type);
}

/* A launch (CPU, correlation corr) at ts_us and its collective kernel
 * (`coll`: Collective name) of in/out floats on stream 20 of device dev,
 * 10 µs later, 50 µs long. */
static void coll_kernel(GString *s, int64_t ts_us, int corr, const char *coll, int64_t in, int64_t out, int dev)
{
  sep(s);
  g_string_append_printf(s, "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, "
                         "\"tid\": 1, \"ts\": %" G_GINT64_FORMAT ", \"dur\": 5, \"args\": {\"correlation\": %d}}, ",
                         ts_us, corr);
  g_string_append_printf(s, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_Generic\", \"pid\": %d, "
                         "\"tid\": 20, \"ts\": %" G_GINT64_FORMAT ", \"dur\": 50, \"args\": {\"stream\": 20, \"device\": "
                         "%d, \"correlation\": %d, \"Collective name\": \"%s\", \"In msg nelems\": %" G_GINT64_FORMAT
                         ", \"Out msg nelems\": %" G_GINT64_FORMAT ", \"Group size\": 2, \"dtype\": \"Float\", "
                         "\"Process Group Name\": \"0\", \"Process Group Ranks\": \"[0, 1]\"}}", dev, ts_us + 10, dev,
                         corr, coll, in, out);
}

static void allreduce(GString *s, int64_t ts_us, int corr, int64_t nelems, int dev)
{
  coll_kernel(s, ts_us, corr, "allreduce", nelems, nelems, dev);
}

/* A compute kernel on stream 7 (device 0). */
static void gemm(GString *s, int64_t ts_us, int64_t dur_us)
{
  sep(s);
  g_string_append_printf(s, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": 0, \"tid\": 7, \"ts\": %"
                         G_GINT64_FORMAT ", \"dur\": %" G_GINT64_FORMAT ", \"args\": {\"stream\": 7, \"device\": 0}}",
                         ts_us, dur_us);
}

static GString *trace_begin(int rank, int world)
{
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "{\"distributedInfo\": {\"rank\": %d, \"world_size\": %d}, \"traceEvents\": [", rank,
                         world);
  return s;
}

/* ---- the linking rule on one rank ---------------------------------------- */

/* Rank 0 of 2; window starts at the gemm (1000 µs).  Four all-reduces of
 * 1 MiB (262,144 floats; caching-allocator size 1,048,576, a multiple of
 * 512, so only an exact 1 MiB block fits: slack 0 up to 1 MiB):
 *   AR1 launched at 1100: A (1 MiB @900) was freed at 950; B (1 MiB @960)
 *       and C (1 MiB @980) are live -> C (latest), ambiguous; a 1 MiB
 *       block on device 1 (@990) does not count.
 *   AR2 launched at 1300: C freed at 1200, B still live -> B, alone.
 *   AR3 launched at 1500: B freed at 1400, only a 4 MiB block live (@1410)
 *       -> no fit (4 MiB > 1 MiB + 0) -> unlinked.
 *   AR4 has no launch event -> unlinked.
 * Plus a CPU [memory] event (skipped) and a free of an address allocated
 * before the trace. */
static const char *link_trace(void)
{
  static char *text;
  if (text)
    return text;
  GString *s = trace_begin(0, 2);
  mem(s, 900, 0xA000, 1048576, 1, 0);
  mem(s, 905, 0x5000, 64, 0, -1);        /* CPU tensor: skipped */
  mem(s, 950, 0xA000, -1048576, 1, 0);
  mem(s, 960, 0xB000, 1048576, 1, 0);
  mem(s, 970, 0xF000, -4096, 1, 0);      /* allocated before the trace */
  mem(s, 980, 0xC000, 1048576, 1, 0);
  mem(s, 990, 0xD000, 1048576, 1, 1);    /* other device */
  gemm(s, 1000, 50);
  allreduce(s, 1100, 1, 262144, 0);
  mem(s, 1200, 0xC000, -1048576, 1, 0);
  allreduce(s, 1300, 2, 262144, 0);
  mem(s, 1400, 0xB000, -1048576, 1, 0);
  mem(s, 1410, 0xE000, 4194304, 1, 0);
  allreduce(s, 1500, 3, 262144, 0);
  /* AR4: a kernel without its launch (correlation 9 names no runtime call). */
  sep(s);
  g_string_append(s, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce_Sum_f32_RING_LL\", "
                     "\"pid\": 0, \"tid\": 20, \"ts\": 1700, \"dur\": 50, \"args\": {\"stream\": 20, \"device\": 0, "
                     "\"correlation\": 9, \"Collective name\": \"allreduce\", \"In msg nelems\": 262144, \"Out msg "
                     "nelems\": 262144, \"Group size\": 2, \"dtype\": \"Float\", \"Process Group Name\": \"0\", "
                     "\"Process Group Ranks\": \"[0, 1]\"}}");
  g_string_append(s, "]}");
  text = g_string_free(s, FALSE);
  return text;
}

static void test_link_rule(void)
{
  char *dir = tmpdir_new();
  char *p = write_file(dir, "rank0.json", link_trace());
  GError *e = NULL;
  kt_trace *t = kt_trace_read(p, &e);
  g_assert_no_error(e);
  g_assert_cmpuint(t->memory_allocs, ==, 6);
  g_assert_cmpuint(t->memory_frees, ==, 4);
  fe_kineto_options opt;
  fe_kineto_options_init(&opt);
  kt_rank *r = kt_rank_extract(t, 0, 2, &opt, &e);
  g_assert_no_error(e);
  g_assert_cmpuint(r->comms->len, ==, 4);
  kt_buf_link *links = g_new(kt_buf_link, r->comms->len);
  kt_mem_stats st;
  kt_mem_link(r, links, &st);
  /* 9 kept device events (the CPU one is skipped), 4 comms. */
  g_assert_cmpuint(st.mem_events, ==, 9);
  g_assert_cmpuint(st.comms, ==, 4);
  g_assert_cmpuint(st.linked, ==, 2);
  g_assert_cmpuint(st.ambiguous, ==, 1);
  g_assert_cmpuint(st.no_match, ==, 1);
  g_assert_cmpuint(st.no_launch, ==, 1);
  g_assert_cmpuint(st.no_size, ==, 0);
  g_assert_cmpuint(st.unknown_frees, ==, 1);
  /* Comms are in op order = kernel time order: AR1..AR4.  Window start =
   * the gemm at 1000 µs, so C (980 µs) is at -20 µs, B (960) at -40 µs. */
  g_assert_cmpint(r->window_abs + 1000 * US, >, 0);
  g_assert_cmpuint(links[0].buffer, ==, 0xC000);
  g_assert_cmpint(links[0].alloc_ps, ==, -20 * US);
  g_assert_cmpuint(links[1].buffer, ==, 0xB000);
  g_assert_cmpint(links[1].alloc_ps, ==, -40 * US);
  g_assert_cmpuint(links[2].buffer, ==, 0);
  g_assert_cmpuint(links[3].buffer, ==, 0);
  /* The extraction linked them once and kept them: the graph stage copies
   * r->buf_links into the COMM nodes, so they must be these. */
  g_assert_nonnull(r->buf_links);
  for (guint i = 0; i < r->comms->len; i++) {
    g_assert_cmpuint(r->buf_links[i].buffer, ==, links[i].buffer);
    g_assert_cmpint(r->buf_links[i].alloc_ps, ==, links[i].alloc_ps);
  }
  /* The rank's report line says so. */
  gboolean found = FALSE;
  for (guint i = 0; i < r->warnings->len; i++)
    found |= strstr(g_ptr_array_index(r->warnings, i), "2 of 4 communication kernel(s) matched") != NULL;
  g_assert_true(found);
  g_free(links);
  kt_rank_free(r);
  kt_trace_free(t);
  g_unlink(p);
  g_free(p);
  rm_dir(dir);
  g_free(dir);
}

/* Size slack and the output-size fallback.  AR of 4 MiB (1,048,576
 * floats, above 1 MiB: slack 1 MiB) launched at 1100 µs with live blocks
 * X 4 MiB @900, Y 4.5 MiB @910 (fits: <= 5 MiB) and Z 5 MiB + 512 @920
 * (does not fit) -> Y, ambiguous (X fits too).  All-gather of a 1 MiB
 * shard (262,144 floats) on 2 ranks launched at 1300 µs with only a 2 MiB
 * block live (@1200; the 4 MiB-class blocks were freed at 1150) -> no
 * input-sized block, output n*S = 2 MiB -> linked through the output. */
static void test_link_slack_output(void)
{
  GString *s = trace_begin(0, 2);
  mem(s, 900, 0x1000000, 4194304, 1, 0);
  mem(s, 910, 0x2000000, 4194304 + 524288, 1, 0);
  mem(s, 920, 0x3000000, 5242880 + 512, 1, 0);
  gemm(s, 1000, 50);
  allreduce(s, 1100, 1, 1048576, 0);
  mem(s, 1150, 0x1000000, -4194304, 1, 0);
  mem(s, 1150, 0x2000000, -4194304 - 524288, 1, 0);
  mem(s, 1150, 0x3000000, -5242880 - 512, 1, 0);
  mem(s, 1200, 0x4000000, 2097152, 1, 0);
  coll_kernel(s, 1300, 2, "_allgather_base", 262144, 524288, 0);
  g_string_append(s, "]}");
  char *dir = tmpdir_new();
  char *p = write_file(dir, "rank0.json", s->str);
  g_string_free(s, TRUE);
  GError *e = NULL;
  kt_trace *t = kt_trace_read(p, &e);
  g_assert_no_error(e);
  fe_kineto_options opt;
  fe_kineto_options_init(&opt);
  kt_rank *r = kt_rank_extract(t, 0, 2, &opt, &e);
  g_assert_no_error(e);
  g_assert_cmpuint(r->comms->len, ==, 2);
  g_assert_cmpuint(g_array_index(r->comms, kt_comm, 1).bytes, ==, 1048576); /* the shard */
  kt_buf_link links[2];
  kt_mem_stats st;
  kt_mem_link(r, links, &st);
  g_assert_cmpuint(st.linked, ==, 2);
  g_assert_cmpuint(st.ambiguous, ==, 1);
  g_assert_cmpuint(st.by_output, ==, 1);
  g_assert_cmpuint(links[0].buffer, ==, 0x2000000);
  g_assert_cmpint(links[0].alloc_ps, ==, -90 * US);
  g_assert_cmpuint(links[1].buffer, ==, 0x4000000);
  g_assert_cmpint(links[1].alloc_ps, ==, 200 * US);
  kt_rank_free(r);
  kt_trace_free(t);
  g_unlink(p);
  g_free(p);
  rm_dir(dir);
  g_free(dir);
}

/* Malformed [memory] events: never linked, counted by reason, no crash. */
static void test_bad_memory_events(void)
{
  static const char *cases[] = {
    "{\"ph\": \"i\", \"name\": \"[memory]\", \"ts\": 1, \"args\": {\"Bytes\": 512}}",                      /* no Addr */
    "{\"ph\": \"i\", \"name\": \"[memory]\", \"ts\": 1, \"args\": {\"Addr\": \"x\", \"Bytes\": 512}}",      /* bad Addr */
    "{\"ph\": \"i\", \"name\": \"[memory]\", \"ts\": 1, \"args\": {\"Addr\": 5, \"Bytes\": 512, \"Device Type\": 1}}",
    "{\"ph\": \"i\", \"name\": \"[memory]\", \"ts\": 1, \"args\": {\"Addr\": -5, \"Bytes\": 512, \"Device Type\": 1, "
    "\"Device Id\": 0}}",
    "{\"ph\": \"i\", \"name\": \"[memory]\", \"ts\": 1, \"args\": {\"Addr\": 5, \"Bytes\": 0, \"Device Type\": 1, "
    "\"Device Id\": 0}}",
    "{\"ph\": \"i\", \"name\": \"[memory]\", \"ts\": 1, \"args\": {\"Addr\": 5, \"Bytes\": 512, \"Device Type\": 1, "
    "\"Device Id\": 99999999999}}",
    "{\"ph\": \"i\", \"name\": \"[memory]\", \"args\": {\"Addr\": 5, \"Bytes\": 512, \"Device Type\": 1, "
    "\"Device Id\": 0}}", /* no ts */
  };
  char *dir = tmpdir_new();
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    char *text = g_strdup_printf("{\"traceEvents\": [%s]}", cases[i]);
    char *p = write_file(dir, "bad.json", text);
    GError *e = NULL;
    kt_trace *t = kt_trace_read(p, &e);
    g_assert_no_error(e);
    guint kept = 0;
    for (guint k = 0; k < t->events->len; k++)
      kept += g_array_index(t->events, kt_event, k).kind == KT_EV_MEMORY;
    g_assert_cmpuint(kept, ==, 0);
    g_assert_cmpuint(g_hash_table_size(t->skipped), >=, 1);
    kt_trace_free(t);
    g_unlink(p);
    g_free(p);
    g_free(text);
  }
  /* Truncated inside a [memory] event: an error naming the byte offset. */
  char *p = write_file(dir, "cut.json", "{\"traceEvents\": [{\"ph\": \"i\", \"name\": \"[memory]\", \"args\": {\"Addr\": 5");
  GError *e = NULL;
  g_assert_null(kt_trace_read(p, &e));
  g_assert_nonnull(e);
  g_assert_nonnull(strstr(e->message, "byte"));
  g_clear_error(&e);
  g_unlink(p);
  g_free(p);
  rm_dir(dir);
  g_free(dir);
}

/* ---- end to end ---------------------------------------------------------- */

/* Two ranks; each: gemm 1000..1100 µs on stream 7, a [memory] allocation
 * of the all-reduce's 4 MiB buffer (1,048,576 floats) gap_us before the
 * launch at 1100 µs (kernel 1110..1160), unless gap_us < 0 (no memory
 * events at all). */
static char *e2e_trace(int rank, int64_t gap_us)
{
  GString *s = trace_begin(rank, 2);
  if (gap_us >= 0)
    mem(s, 1100 - gap_us, 0x7f0000000000 + rank * 0x100000000, 4194304, 1, 0);
  gemm(s, 1000, 100);
  allreduce(s, 1100, 1, 1048576, 0);
  g_string_append(s, "]}");
  return g_string_free(s, FALSE);
}

typedef struct {
  sim_time_ps alloc_ps;     /* et_comm.alloc_ps of rank 0's all-reduce */
  gboolean has_alloc;
  sim_time_ps use_ps;       /* the collective's start on the replay clock */
  uint64_t hits, known, partial;
  sim_time_ps blocked_max, blocked_sum;
} e2e_out;

static const char *stratacl_pair =
  "schema_version: 1\n"
  "name: pair\n"
  "dims:\n"
  "  - {name: fc, kind: fully_connected, size: 2, bandwidth: 100GB/s, latency: 1us}\n"
  "library:\n"
  "  name: stratacl\n";

static e2e_out run_e2e(int64_t gap_us, int64_t gap1_us, coll_library_params *lp)
{
  char *dir = tmpdir_new();
  for (int r = 0; r < 2; r++) {
    char *text = e2e_trace(r, r == 0 ? gap_us : gap1_us);
    char *name = g_strdup_printf("rank%d.json", r);
    g_free(write_file(dir, name, text));
    g_free(name);
    g_free(text);
  }
  fe_kineto_options opt;
  fe_kineto_options_init(&opt);
  fe_kineto_report rep;
  GError *e = NULL;
  const char *paths[] = { dir };
  et_workload *w = fe_kineto_load(paths, 1, &opt, &rep, &e);
  g_assert_no_error(e);
  g_assert_nonnull(w);
  /* fe_kineto_load links each traced rank's all-reduce to its allocation. */
  for (int r = 0; r < 2; r++)
    g_assert_true((w->ranks[r]->comms[0].buffer != 0) == ((r == 0 ? gap_us : gap1_us) >= 0));
  e2e_out o = { 0 };
  const et_graph *g0 = w->ranks[0];
  g_assert_cmpuint(g0->n_comms, ==, 1);
  o.has_alloc = g0->comms[0].has_alloc;
  o.alloc_ps = g0->comms[0].alloc_ps;
  topo *t = topo_load_string(stratacl_pair, "pair.yaml", &e);
  g_assert_no_error(e);
  g_assert_true(coll_library_params_from_topo(t, lp, &e));
  g_assert_no_error(e);
  sim_replay_options ro = { .compute_slots = 1, .checked = TRUE, .quiet = TRUE };
  sim_result *res = sim_replay_run(w, t, &ro, &e);
  g_assert_no_error(e);
  g_assert_nonnull(res);
  g_assert_cmpuint(res->comms->len, ==, 2);
  const sim_comm_record *rec = &g_array_index(res->comms, sim_comm_record, 0);
  o.use_ps = rec->start;
  o.hits = res->library_stats->hits;
  o.blocked_max = res->library_stats->blocked_max_ps;
  o.blocked_sum = res->library_stats->blocked_sum_ps;
  o.known = res->lifecycle_known;
  o.partial = res->lifecycle_partial;
  sim_result_free(res);
  topo_free(t);
  et_workload_free(w);
  fe_kineto_report_clear(&rep);
  for (int r = 0; r < 2; r++) {
    char *p = g_strdup_printf("%s/rank%d.json", dir, r);
    g_unlink(p);
    g_free(p);
  }
  rm_dir(dir);
  g_free(dir);
  return o;
}

/* StrataCL registration on allocation (reference §4.2-4.4): the buffer's
 * n-1 = 1 map job per member is queued at alloc + t_exp + t_meta and takes
 * job(S) = t_imp + t_map0 + ceil(S / page) * t_pte, so the mappings are
 * ready at alloc + R with R = t_exp + t_meta + job(S) (= jit(S, 2)).  The
 * readiness barrier at first use u blocks max(0, alloc + R - u) on each
 * member.  S is the per-peer size the library registers for an all-reduce
 * of M bytes on 2 ranks (coll_library_io_bytes). */
static void test_e2e_barrier(void)
{
  const uint64_t M = 4194304; /* 1,048,576 floats */
  coll_library_params p;
  coll_library_params_default(COLL_LIBRARY_STRATACL, &p);
  uint64_t in_b, out_b, S;
  g_assert_true(coll_library_io_bytes(ET_COLL_ALL_REDUCE, M, 2, &in_b, &out_b, &S));
  uint64_t pages = (S + p.page - 1) / p.page;
  sim_time_ps R = p.t_exp + p.t_meta + p.t_imp + p.t_map0 + (sim_time_ps)pages * p.t_pte;
  g_assert_cmpint(R, ==, coll_library_jit_ps(&p, S, 2));
  g_test_message("registration time R = %.3f us for %" G_GUINT64_FORMAT " bytes per peer", (double)R / US, S);
  /* Gaps (allocation before launch): 10 µs, far below R, and 10 ms, far
   * above it (R is about 0.1 ms with the reference's defaults). */
  g_assert_cmpint(R, >, 20 * US);
  g_assert_cmpint(R, <, 5000 * US);
  const int64_t gaps[2] = { 10, 10000 };
  gboolean hit[2];
  for (int i = 0; i < 2; i++) {
    coll_library_params lp;
    e2e_out o = run_e2e(gaps[i], gaps[i], &lp);
    g_assert_cmpint(lp.kind, ==, COLL_LIBRARY_STRATACL);
    g_assert_cmpint(lp.t_exp, ==, p.t_exp); /* the run used the defaults R was computed from */
    g_assert_true(o.has_alloc);
    /* Window start = the gemm at 1000 µs; allocation at 1100 - gap µs. */
    g_assert_cmpint(o.alloc_ps, ==, (100 - gaps[i]) * US);
    g_assert_cmpuint(o.known, ==, 1);
    g_assert_cmpuint(o.partial, ==, 0);
    sim_time_ps blocked = MAX(0, o.alloc_ps + R - o.use_ps);
    g_test_message("gap %" G_GINT64_FORMAT " us: use at %.3f us, alloc at %.3f us, expected blocked %.3f us, "
                   "simulated max %.3f us", gaps[i], (double)o.use_ps / US, (double)o.alloc_ps / US,
                   (double)blocked / US, (double)o.blocked_max / US);
    hit[i] = blocked > 0;
    g_assert_cmpuint(o.hits, ==, hit[i] ? 2 : 0); /* both members block equally (own mappers) */
    g_assert_cmpint(o.blocked_max, ==, blocked);
    g_assert_cmpint(o.blocked_sum, ==, 2 * blocked);
  }
  /* The two gaps must fall on both sides of R, or the test proves nothing. */
  g_assert_true(hit[0]);
  g_assert_false(hit[1]);
}

/* Without memory events the synthetic lifecycle applies: allocation
 * gap_min (2.6 s) before first use >> R, so no barrier hit, and no
 * collective counted as known. */
static void test_e2e_synthetic(void)
{
  coll_library_params lp;
  e2e_out o = run_e2e(-1, -1, &lp);
  g_assert_false(o.has_alloc);
  g_assert_cmpuint(o.known, ==, 0);
  g_assert_cmpuint(o.partial, ==, 0);
  g_assert_cmpint(lp.gap_min, >, coll_library_jit_ps(&lp, 4194304, 2));
  g_assert_cmpuint(o.hits, ==, 0);
  /* Only rank 0 has the allocation (10 µs before use, which alone would
   * hit the barrier, test above): coll_desc takes one allocation time for
   * the group, so the collective falls back to the synthetic model, is
   * counted as partial, and does not block. */
  o = run_e2e(10, -1, &lp);
  g_assert_true(o.has_alloc);
  g_assert_cmpuint(o.known, ==, 0);
  g_assert_cmpuint(o.partial, ==, 1);
  g_assert_cmpuint(o.hits, ==, 0);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/lifecycle/link_rule", test_link_rule);
  g_test_add_func("/lifecycle/link_slack_output", test_link_slack_output);
  g_test_add_func("/lifecycle/bad_memory_events", test_bad_memory_events);
  g_test_add_func("/lifecycle/e2e_barrier", test_e2e_barrier);
  g_test_add_func("/lifecycle/e2e_synthetic", test_e2e_synthetic);
  return g_test_run();
}
