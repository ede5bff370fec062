/* test_profiles_cli.c: the profiles users already have, through the `wisp`
 * binary ($WISP_BIN, set by `make check`): issue 31's done-when, that
 * inspect, simulate and utility run on the DLRM job's PyTorch execution
 * traces with and without the Kineto half and on Nsight SQLite exports
 * (the two real ones and a built NCCL one), and TTFT/TPOT from step
 * markers an Nsight export carries as NVTX ranges or from a card that says
 * the trace is inference.
 *
 * Nsight exports built here follow NVIDIA's documented export schema (no
 * public multi-GPU NCCL export exists; ../shared/data/README.md).  Times
 * are in us from a session clock at 1 s; globalTid / globalPid carry the
 * process id in bits 24..47 as nsys writes them.
 *
 * The NCCL node export (write_nccl_node; also the fuzz seed
 * fuzz/corpus/nsys/seed-nccl-node.sqlite, written by this function: run
 * the test with WISP_WRITE_NSYS_SEED=PATH to regenerate it): two devices
 * of two processes (pid 100, 101), per device a gemm [0, 100] on stream 7
 * with 132 blocks, an HtoD memcpy of 4096 B [100, 110], an NCCL all-reduce
 * kernel [120, 170] on stream 20 launched [110, 112] inside the NVTX range
 * ncclAllReduce [109, 113] whose payload (NCCL 2.19+, decoded as JSON) says
 * communicator 77, 8388608 bytes, and a ProfilerStep#1 range [0, 180).
 * Expected: 2 NCCL kernels, both sized and simulated (communicator 77 is
 * on both ranks); the step window [0, max(180, 170)) = 180 us measured.
 */
#include "config.h"

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "regress/test_util.h"
#include "regress/test_sqlite.h"

#include <math.h>
#include <string.h>


static sqlite3 *open_new(const char *path)
{
  sqlite3 *db = NULL;
  g_unlink(path);
  g_assert_cmpint(sqlite3_open(path, &db), ==, SQLITE_OK);
  return db;
}

static void write_nccl_node(const char *path)
{
  sqlite3 *db = open_new(path);
  exec_sql(db, "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
               "INSERT INTO StringIds VALUES (1, 'sm90_xmma_gemm_bf16bf16_bf16f32'), "
               "(2, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)'), "
               "(3, 'cudaLaunchKernel_v7000');"
               "CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);"
               "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.13.2');"
               "CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT, smCount INTEGER);"
               "INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H100 80GB HBM3', 132), (1, 'NVIDIA H100 80GB HBM3', 132);"
               "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER, "
               "correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, gridX INTEGER, gridY INTEGER, "
               "gridZ INTEGER);"
               "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER, "
               "correlationId INTEGER, globalPid INTEGER, bytes INTEGER, copyKind INTEGER);"
               "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER, "
               "correlationId INTEGER, nameId INTEGER);"
               "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT, textId INTEGER, "
               "globalTid INTEGER, jsonText TEXT, jsonTextId INTEGER);");
  for (int d = 0; d < 2; d++) {
    int64_t t = 1000000000, pid = (int64_t)(100 + d) << 24, tid = pid | 7;
    char *sql = g_strdup_printf(
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (%1$" G_GINT64_FORMAT ", %1$" G_GINT64_FORMAT " + 100000, %2$d, 7, "
      "1, %3$" G_GINT64_FORMAT ", 1, 132, 1, 1), (%1$" G_GINT64_FORMAT " + 120000, %1$" G_GINT64_FORMAT " + 170000, "
      "%2$d, 20, 2, %3$" G_GINT64_FORMAT ", 2, 8, 1, 1);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (%1$" G_GINT64_FORMAT " + 100000, %1$" G_GINT64_FORMAT
      " + 110000, %2$d, 7, 3, %3$" G_GINT64_FORMAT ", 4096, 1);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (%1$" G_GINT64_FORMAT " + 110000, %1$" G_GINT64_FORMAT
      " + 112000, %4$" G_GINT64_FORMAT ", 2, 3);"
      "INSERT INTO NVTX_EVENTS VALUES (%1$" G_GINT64_FORMAT " + 109000, %1$" G_GINT64_FORMAT " + 113000, 59, "
      "'ncclAllReduce', NULL, %4$" G_GINT64_FORMAT ", '{\"NCCL communicator ID\": 77, \"Message size [bytes]\": "
      "8388608, \"Reduction operation\": \"ncclSum\"}', NULL), (%1$" G_GINT64_FORMAT ", %1$" G_GINT64_FORMAT
      " + 180000, 59, 'ProfilerStep#1', NULL, %4$" G_GINT64_FORMAT ", NULL, NULL);", t, d, pid, tid);
    exec_sql(db, sql);
    g_free(sql);
  }
  sqlite3_close(db);
}

/* A one-device serving export: four step ranges named names[k] (on the
 * launching thread of pid 100) [0, 100), [100, 130), [130, 160),
 * [160, 200), each launching a kernel at its start + 2 us that runs from
 * its start + 5 us to its end - 5 us: every execution's window is its
 * range. */
static void write_serve_export(const char *path, const char *const *names)
{
  sqlite3 *db = open_new(path);
  exec_sql(db, "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
               "INSERT INTO StringIds VALUES (1, 'fused_moe_kernel'), (2, 'cudaLaunchKernel_v7000');"
               "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER, "
               "correlationId INTEGER, globalPid INTEGER, demangledName INTEGER);"
               "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER, "
               "correlationId INTEGER, nameId INTEGER);"
               "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT, textId INTEGER, "
               "globalTid INTEGER);");
  static const int64_t s[4] = {0, 100, 130, 160}, e[4] = {100, 130, 160, 200};
  int64_t t = 1000000000, pid = (int64_t)100 << 24, tid = pid | 7;
  for (int k = 0; k < 4; k++) {
    char *sql = g_strdup_printf(
      "INSERT INTO NVTX_EVENTS VALUES (%1$" G_GINT64_FORMAT ", %2$" G_GINT64_FORMAT ", 59, '%3$s', NULL, %4$"
      G_GINT64_FORMAT ");"
      "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (%1$" G_GINT64_FORMAT " + 2000, %1$" G_GINT64_FORMAT " + 3000, %4$"
      G_GINT64_FORMAT ", %5$d, 2);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (%1$" G_GINT64_FORMAT " + 5000, %2$" G_GINT64_FORMAT " - 5000, 0, "
      "7, %5$d, %6$" G_GINT64_FORMAT ", 1);", t + s[k] * 1000, t + e[k] * 1000, names[k], tid, k + 1, pid);
    exec_sql(db, sql);
    g_free(sql);
  }
  sqlite3_close(db);
}

/* CCL-Bench's inference_latency rule on one rank, from the raw file: the
 * step ranges' durations in start order (SQL); TTFT = the first, TPOT =
 * the mean of the 2nd .. second-to-last (more than two), in ns. */
static void raw_latency(const char *path, double *ttft, double *tpot)
{
  sqlite3 *db = NULL;
  g_assert_cmpint(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  sqlite3_stmt *st = NULL;
  g_assert_cmpint(sqlite3_prepare_v2(db, "SELECT end - start FROM NVTX_EVENTS ORDER BY start", -1, &st, NULL), ==,
                  SQLITE_OK);
  double d[8];
  int n = 0;
  while (n < 8 && sqlite3_step(st) == SQLITE_ROW)
    d[n++] = (double)sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  g_assert_cmpint(n, ==, 4);
  *ttft = d[0];
  *tpot = (d[1] + d[2]) / 2; /* n = 4: the last is dropped */
}

static cJSON *run_json(const char *const *args)
{
  char *out = NULL, *err = NULL;
  int st = test_wisp_run_in(NULL, args, &out, &err);
  if (st != 0)
    g_error("wisp %s exited %d:\n%s", args[0], st, err);
  cJSON *d = cJSON_Parse(out);
  g_assert_nonnull(d);
  g_free(out);
  g_free(err);
  return d;
}

static double jnum(const cJSON *o, const char *key)
{
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!cJSON_IsNumber(x))
    g_error("%s is not a number", key);
  return x->valuedouble;
}

static const char *jstr(const cJSON *o, const char *key)
{
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(x) ? x->valuestring : "";
}

/* TTFT and TPOT of an Nsight export: vLLM execute_context ranges as
 * they are; ProfilerStep ranges only with a card whose phase is
 * inference (without one: n/a, the reason naming the export kind); the
 * values equal the rule on the raw ranges (100 us and 30 us here), in
 * `wisp metrics` and in `wisp utility --latency`'s measured column. */
static void test_nsys_latency(void)
{
  if (!test_have_bin())
    return;
  char *dir = g_dir_make_tmp("wisp-prof-lat-XXXXXX", NULL);
  char *vllm = g_build_filename(dir, "vllm.sqlite", NULL), *steps = g_build_filename(dir, "steps.sqlite", NULL);
  char *card = g_build_filename(dir, "card.yaml", NULL);
  const char *vnames[4] = {"execute_context_4(512)_generation_0(0)", "execute_context_4(4)_generation_4(4)",
                           "execute_context_4(4)_generation_4(4)", "execute_context_4(4)_generation_4(4)"};
  const char *pnames[4] = {"ProfilerStep#11", "ProfilerStep#12", "ProfilerStep#13", "ProfilerStep#14"};
  write_serve_export(vllm, vnames);
  write_serve_export(steps, pnames);
  g_assert_true(g_file_set_contents(card, "version: 1\nworkload:\n  model:\n    phase: inference\n", -1, NULL));
  double ttft, tpot;
  raw_latency(vllm, &ttft, &tpot);
  g_assert_cmpfloat(ttft, ==, 100000); /* the ranges written above */
  g_assert_cmpfloat(tpot, ==, 30000);
  for (int k = 0; k < 3; k++) {
    const char *in = k == 0 ? vllm : steps;
    cJSON *d = k == 2 ? run_json((const char *[]){"metrics", in, "--card", card, "--json", "-", NULL})
                      : run_json((const char *[]){"metrics", in, "--json", "-", NULL});
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(d, "measured");
    if (k == 1) { /* ProfilerStep ranges without a card: one window, no executions */
      g_assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(m, "ttft_ns")));
      test_expect_has(jstr(m, "ttft_source"), "an Nsight export without vLLM execute_context_*");
      g_assert_cmpfloat(jnum(m, "avg_step_time_ns"), ==, 40000); /* the last step with GPU work, #14 */
    } else {
      g_assert_cmpfloat_with_epsilon(jnum(m, "ttft_ns"), ttft, 1e-6);
      g_assert_cmpfloat_with_epsilon(jnum(m, "tpot_ns"), tpot, 1e-6);
      test_expect_has(jstr(m, "ttft_source"), "over 4 model executions");
    }
    cJSON_Delete(d);
  }
  /* inspect and simulate take the same step selection. */
  char *out = NULL, *err = NULL;
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"inspect", steps, "--step", "12", NULL}, &out, &err), ==, 0);
  test_expect_has(out, "steps: ProfilerStep #12..#12 of #11..#14 (4 NVTX step ranges");
  g_free(out);
  g_free(err);
  /* convert keeps the step asked for: #12 [100, 130) us is the Chakra set's measured window. */
  char *conv = g_build_filename(dir, "conv", NULL);
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"convert", steps, "--step", "12", "-o", conv, NULL}, &out,
                                   &err), ==, 0);
  g_free(out);
  g_free(err);
  cJSON *d = run_json((const char *[]){"metrics", conv, "--json", "-", NULL});
  g_assert_cmpfloat(jnum(cJSON_GetObjectItemCaseSensitive(d, "measured"), "avg_step_time_ns"), ==, 30000);
  cJSON_Delete(d);
  g_free(conv);
  d = run_json((const char *[]){"simulate", steps, "--network", "dgx-h100", "--steps", "all", "--json", "-", NULL});
  g_assert_cmpfloat(jnum(d, "measured_step_ns"), ==, 200000); /* #11..#14: [0, 200) us */
  cJSON_Delete(d);
  d = run_json((const char *[]){"utility", vllm, "--network", "dgx-h100", "--latency", "--json", "-", NULL});
  g_assert_cmpfloat_with_epsilon(jnum(d, "measured_ttft_ns"), ttft, 1e-6);
  g_assert_cmpfloat_with_epsilon(jnum(d, "measured_tpot_ns"), tpot, 1e-6);
  cJSON_Delete(d);
  test_rm_rf(dir);
  g_free(dir);
  g_free(vllm);
  g_free(steps);
  g_free(card);
}

/* A Kineto trace whose steps are ProfilerStep#5..#8 (a generate loop
 * stepping the profiler per token): with a card whose phase is inference
 * they are the model executions.  Steps [0, 100), [100, 130), [130, 160),
 * [160, 200) us, each launching a kernel that ends inside it: TTFT 100 us,
 * TPOT (30 + 30) / 2 = 30 us; without the card n/a with the reason. */
static void test_kineto_card_latency(void)
{
  if (!test_have_bin())
    return;
  char *dir = g_dir_make_tmp("wisp-prof-kt-XXXXXX", NULL);
  char *trace = g_build_filename(dir, "rank0.json", NULL), *card = g_build_filename(dir, "card.yaml", NULL);
  static const int s[4] = {0, 100, 130, 160}, e[4] = {100, 130, 160, 200};
  GString *j = g_string_new("{\"distributedInfo\": {\"rank\": 0, \"world_size\": 1}, \"traceEvents\": [\n");
  for (int k = 0; k < 4; k++)
    g_string_append_printf(j,
      "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%d\", \"pid\": 5, \"tid\": 5, \"ts\": %d, "
      "\"dur\": %d},\n"
      "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 5, \"tid\": 5, \"ts\": %d, "
      "\"dur\": 1, \"args\": {\"correlation\": %d}},\n"
      "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"fused_moe_kernel\", \"pid\": 0, \"tid\": 7, \"ts\": %d, "
      "\"dur\": %d, \"args\": {\"stream\": 7, \"correlation\": %d}},\n",
      5 + k, s[k], e[k] - s[k], s[k] + 2, k + 1, s[k] + 5, e[k] - s[k] - 10, k + 1);
  g_string_append(j, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::empty\", \"pid\": 5, \"tid\": 5, "
                     "\"ts\": 210, \"dur\": 1}\n]}\n");
  g_assert_true(g_file_set_contents(trace, j->str, -1, NULL));
  g_string_free(j, TRUE);
  g_assert_true(g_file_set_contents(card, "version: 1\nworkload:\n  model:\n    phase: inference\n", -1, NULL));
  cJSON *d = run_json((const char *[]){"metrics", trace, "--card", card, "--json", "-", NULL});
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(d, "measured");
  g_assert_cmpfloat_with_epsilon(jnum(m, "ttft_ns"), 100000, 1e-6);
  g_assert_cmpfloat_with_epsilon(jnum(m, "tpot_ns"), 30000, 1e-6);
  cJSON_Delete(d);
  d = run_json((const char *[]){"metrics", trace, "--json", "-", NULL});
  m = cJSON_GetObjectItemCaseSensitive(d, "measured");
  g_assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(m, "ttft_ns")));
  test_expect_has(jstr(m, "ttft_source"), "nor ProfilerStep steps with a card whose workload.model.phase is inference");
  cJSON_Delete(d);
  test_rm_rf(dir);
  g_free(dir);
  g_free(trace);
  g_free(card);
}

/* The built NCCL node export (see the top) and its copy in the fuzz
 * corpus: inspect counts the sized kernels, simulate replays the step
 * window's 180 us measured with the all-reduce simulated at 8 MiB (so the
 * network matters: doubling the scale-up bandwidth does not slow it), and
 * the corpus seed reads the same. */
static void test_nsys_nccl(void)
{
  if (!test_have_bin())
    return;
  char *dir = g_dir_make_tmp("wisp-prof-nccl-XXXXXX", NULL), *p = g_build_filename(dir, "node.sqlite", NULL);
  write_nccl_node(p);
  const char *keep = g_getenv("WISP_WRITE_NSYS_SEED");
  if (keep)
    write_nccl_node(keep);
  char *seed = g_build_filename(g_getenv("G_TEST_SRCDIR"), "fuzz", "corpus", "nsys", "seed-nccl-node.sqlite", NULL);
  g_assert_true(g_file_test(seed, G_FILE_TEST_EXISTS)); /* the fuzzer starts from it (fuzz/run.sh copies the corpus) */
  for (int k = 0; k < 2; k++) {
    const char *in = k ? seed : p;
    char *out = NULL, *err = NULL;
    g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"inspect", in, NULL}, &out, &err), ==, 0);
    test_expect_has(out, "rank(s) 0..1 (NVIDIA H100 80GB HBM3); 4 kernels (2 communication: 2 sized from NCCL's NVTX "
                    "payloads, 0 replayed at their measured time), 2 memcpys (8192 B)");
    test_expect_has(out, "steps: ProfilerStep #1..#1 of #1..#1");
    g_free(out);
    g_free(err);
  }
  cJSON *d = run_json((const char *[]){"simulate", p, "--network", "dgx-h100", "--json", "-", NULL});
  g_assert_cmpfloat(jnum(d, "measured_step_ns"), ==, 180000);
  double step = jnum(d, "step_time_ns");
  g_assert_cmpfloat(step, >, 0);
  cJSON_Delete(d);
  d = run_json((const char *[]){"utility", p, "--network", "dgx-h100", "--json", "-", NULL});
  const cJSON *res;
  gboolean seen = FALSE;
  cJSON_ArrayForEach(res, cJSON_GetObjectItemCaseSensitive(d, "resources"))
    if (strcmp(jstr(res, "resource"), "scale_up_bw") == 0) {
      seen = TRUE;
      g_assert_cmpfloat(jnum(res, "step_time_2x_ns"), <=, step);
    }
  g_assert_true(seen);
  cJSON_Delete(d);
  test_rm_rf(dir);
  g_free(dir);
  g_free(p);
  g_free(seed);
}

/* The resource row of a utility report. */
static const cJSON *resource_row(const cJSON *d, const char *name)
{
  const cJSON *res;
  cJSON_ArrayForEach(res, cJSON_GetObjectItemCaseSensitive(d, "resources"))
    if (strcmp(jstr(res, "resource"), name) == 0)
      return res;
  g_error("no resource %s", name);
}

/* The 8-rank DLRM job (../shared/data/param, README: one DGX-1, 3
 * all-reduce + 5 all-to-all per rank) on the DGX-1 config: the PyTorch
 * execution traces alone, the Kineto traces alone, and both side by side.
 *  - alone: inspect gives rank 0's 8 collectives of 2549700 B (the sum
 *    written out in test_pyt_et /pyt-et/dlrm) and durations unknown;
 *    simulate has no compute (an execution trace records no duration) and
 *    utility's scale-up doubling cannot slow it;
 *  - both: all 64 collectives linked with equal sizes; every stated
 *    dependency was already inferred from the timeline (inspect counts
 *    them), so simulate and utility give the Kineto-alone step and
 *    utilities exactly: the execution trace adds the all_to_allv splits,
 *    which the analytical tier prices as the uniform all-to-all of the
 *    same total. */
static void test_dlrm(void)
{
  if (!test_have_bin())
    return;
  char *tmp = test_dlrm_halves("wisp-prof-dlrm-XXXXXX");
  if (tmp == NULL)
    return;
  char *kin = g_build_filename(tmp, "dlrm_kineto", NULL), *et = g_build_filename(tmp, "dlrm_pytorch_et", NULL);
  char *both = g_build_filename(tmp, "both", NULL);
  char *net = g_build_filename(g_getenv("G_TEST_SRCDIR"), "examples", "networks", "dgx1-v100.yaml", NULL);
  g_assert_cmpint(g_mkdir(both, 0755), ==, 0);
  const char *dirs[2] = {kin, et};
  for (int i = 0; i < 2; i++) { /* both halves in one directory, as Chakra's collection layout keeps them */
    GDir *dh = g_dir_open(dirs[i], 0, NULL);
    const char *e;
    while (dh && (e = g_dir_read_name(dh))) {
      char *from = g_build_filename(dirs[i], e, NULL), *to = g_build_filename(both, e, NULL), *text = NULL;
      gsize len = 0;
      g_assert_true(g_file_get_contents(from, &text, &len, NULL));
      g_assert_true(g_file_set_contents(to, text, (gssize)len, NULL));
      g_free(text);
      g_free(from);
      g_free(to);
    }
    if (dh)
      g_dir_close(dh);
  }
  char *out = NULL, *err = NULL;
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"inspect", et, NULL}, &out, &err), ==, 0);
  test_expect_has(out, "8 rank(s), schema 1.0.1; 13400 nodes, 64 collectives");
  test_expect_has(out, "rank 0: 239 nodes, 8 collectives, 2549700 B");
  test_expect_has(out, "durations: unknown");
  g_free(out);
  g_free(err);
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"inspect", both, NULL}, &out, &err), ==, 0);
  test_expect_has(out, "64 collective(s) linked, sizes equal 64, sizes differ 0, kinds differ 0");
  test_expect_has(out, "states: 16; already inferred from the timeline 16, added 0, contradicted");
  g_free(out);
  g_free(err);
  cJSON *s_et = run_json((const char *[]){"simulate", et, "--network", net, "--json", "-", NULL});
  const cJSON *rk;
  cJSON_ArrayForEach(rk, cJSON_GetObjectItemCaseSensitive(s_et, "ranks"))
    g_assert_cmpfloat(jnum(rk, "compute_ns"), ==, 0);
  double t_et = jnum(s_et, "step_time_ns");
  g_assert_cmpfloat(t_et, >, 0);
  cJSON *u_et = run_json((const char *[]){"utility", et, "--network", net, "--json", "-", NULL});
  g_assert_cmpfloat(jnum(resource_row(u_et, "scale_up_bw"), "step_time_2x_ns"), <=, t_et);
  cJSON *s_k = run_json((const char *[]){"simulate", kin, "--network", net, "--json", "-", NULL});
  cJSON *s_b = run_json((const char *[]){"simulate", both, "--network", net, "--json", "-", NULL});
  cJSON *u_k = run_json((const char *[]){"utility", kin, "--network", net, "--json", "-", NULL});
  cJSON *u_b = run_json((const char *[]){"utility", both, "--network", net, "--json", "-", NULL});
  g_assert_cmpfloat(jnum(s_b, "step_time_ns"), ==, jnum(s_k, "step_time_ns"));
  g_assert_cmpfloat(jnum(s_b, "measured_step_ns"), ==, jnum(s_k, "measured_step_ns"));
  g_assert_cmpfloat(jnum(resource_row(u_b, "scale_up_bw"), "utility_pct"), ==,
                    jnum(resource_row(u_k, "scale_up_bw"), "utility_pct"));
  g_test_message("DLRM on DGX-1: step ET alone %.0f ns, Kineto %.0f ns, both %.0f ns (measured %.0f ns); scale_up_bw "
                 "utility ET alone %.4f %%, Kineto %.4f %%, both %.4f %%", t_et, jnum(s_k, "step_time_ns"),
                 jnum(s_b, "step_time_ns"), jnum(s_k, "measured_step_ns"),
                 jnum(resource_row(u_et, "scale_up_bw"), "utility_pct"),
                 jnum(resource_row(u_k, "scale_up_bw"), "utility_pct"),
                 jnum(resource_row(u_b, "scale_up_bw"), "utility_pct"));
  cJSON_Delete(s_et);
  cJSON_Delete(u_et);
  cJSON_Delete(s_k);
  cJSON_Delete(s_b);
  cJSON_Delete(u_k);
  cJSON_Delete(u_b);
  test_rm_rf(tmp);
  g_free(tmp);
  g_free(kin);
  g_free(et);
  g_free(both);
  g_free(net);
}


/* The two real exports (../shared/data/nsys, Perlmutter A100, no NCCL):
 * inspect's kernel count equals SQL on the raw file; simulate replays the
 * window (first GPU op to last, SQL) with 0 % error (every GPU op
 * replays as measured; no step ranges: saxpy's NVTX ranges are MPI calls
 * and a user range "saxpy", none a step marker); utility's doubling
 * changes nothing (no communication). */
static void test_nsys_real(void)
{
  if (!test_have_bin())
    return;
  const char *sd = g_getenv("WISP_SHARED_DATA");
  const char *names[2] = {"nsys/perlmutter-cloverleaf-cuda.sqlite", "nsys/saxpy-mpi-cuda_nsys_perlmutter0.sqlite"};
  for (int i = 0; i < 2; i++) {
    char *p = sd ? g_build_filename(sd, names[i], NULL) : NULL;
    if (!p || !g_file_test(p, G_FILE_TEST_EXISTS)) {
      g_test_skip("WISP_SHARED_DATA/nsys/*.sqlite not found (make check sets WISP_SHARED_DATA)");
      g_free(p);
      return;
    }
    char *out = NULL, *err = NULL;
    g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"inspect", p, NULL}, &out, &err), ==, 0);
    char *want = g_strdup_printf("%" G_GINT64_FORMAT " kernels (0 communication",
                                 sql_int(p, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"));
    test_expect_has(out, want);
    g_free(want);
    g_free(out);
    g_free(err);
    int64_t win = sql_int(p, "SELECT max(e) - min(s) FROM (SELECT start s, end e FROM CUPTI_ACTIVITY_KIND_KERNEL "
                          "UNION ALL SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY)");
    cJSON *d = run_json((const char *[]){"simulate", p, "--network", "dgx-a100", "--json", "-", NULL});
    g_assert_cmpfloat(jnum(d, "measured_step_ns"), ==, (double)win);
    g_assert_cmpfloat(jnum(d, "step_time_ns"), ==, (double)win);
    cJSON_Delete(d);
    d = run_json((const char *[]){"utility", p, "--network", "dgx-a100", "--json", "-", NULL});
    g_assert_cmpfloat(jnum(resource_row(d, "scale_up_bw"), "utility_pct"), ==, 0);
    cJSON_Delete(d);
    g_free(p);
  }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/profiles_cli/nsys_latency", test_nsys_latency);
  g_test_add_func("/profiles_cli/kineto_card_latency", test_kineto_card_latency);
  g_test_add_func("/profiles_cli/nsys_nccl", test_nsys_nccl);
  g_test_add_func("/profiles_cli/dlrm", test_dlrm);
  g_test_add_func("/profiles_cli/nsys_real", test_nsys_real);
  return g_test_run();
}
