/* test_nsys.c: the Nsight Systems SQLite frontend (frontends/nsys.h).
 *
 * 1. The two real exports in ../shared/data/nsys (README: Perlmutter A100,
 *    pipit test data, MIT; no NCCL), of two schema versions: every count
 *    and the window are computed here independently, by SQL on the raw
 *    file, and compared with the reader's report and graph.
 * 2. No public multi-GPU NCCL export exists (../shared/data/README.md), so
 *    the test builds small ones that follow NVIDIA's documented export
 *    schema (the tables and columns the reader checks, doc/nsys.md): one
 *    file per rank, and one file holding two devices.  Per device: a gemm
 *    kernel [0, 100] us on stream 7, an NCCL all-reduce kernel [120, 170] us
 *    on stream 20, an NVTX range "ncclAllReduce" around its launch and a
 *    4096-byte HtoD memcpy [100, 110] us on stream 7.  Expected graph: stream
 *    7 gemm, idle 0 us skipped (the copy starts when the gemm ends), memcpy;
 *    stream 20 idle 120 us then the all-reduce, a COMM node replayed at its
 *    measured 50 us (no size in the export): 4 nodes, window 170 us.
 * 3. Schema differences fail naming the table and column.
 * 4. NCCL's NVTX payloads (/nsys/nccl_sizes): no public export with NCCL
 *    2.19+ payloads exists either, so the test builds two-rank exports
 *    following NVIDIA's documented schema (NVTX_EVENTS globalTid, jsonText,
 *    jsonTextId; the runtime table's globalTid and correlationId) with
 *    NCCL's payload entry names (NCCL src/include/nvtx_payload_schemas.h),
 *    the decoded payload as a JSON object: an all-reduce of 8 MiB and a
 *    reduce-scatter of recvcount 1 MiB inside their call's ranges, and an
 *    all-gather launched in ncclGroupEnd (no payload).
 */
#include "config.h"

#include "frontends/nsys_internal.h"
#include "studies/study_metrics.h"
#include "regress/test_util.h"
#include "regress/test_sqlite.h"

#include <math.h>
#include <sqlite3.h>
#include <string.h>




/* The measured metrics of the exports, with their device facts (what
 * `wisp metrics` does, cli/cmd_metrics.c), the step selection opt (NULL:
 * the defaults); rep (may be NULL) receives the load's report. */
static study_metrics *measure_opts(const char *const *paths, int n, const fe_nsys_options *opt, fe_nsys_report *rep,
                                   et_workload **wout)
{
  GError *error = NULL;
  et_workload *w = fe_nsys_load_opts(paths, n, opt, rep, &error);
  g_assert_no_error(error);
  fe_nsys_facts f;
  g_assert_true(fe_nsys_facts_load_opts(paths, n, opt, &f, &error));
  g_assert_no_error(error);
  g_assert_cmpint(f.n_ranks, ==, w->n_ranks); /* the same ranks as the graphs */
  study_activity *a = study_activity_new(w);
  g_assert_true(study_activity_add_measured(a, w, &error));
  study_activity_add_nsys_facts(a, &f);
  study_metrics *m = study_metrics_compute(a, NULL);
  study_activity_free(a);
  fe_nsys_facts_clear(&f);
  *wout = w;
  return m;
}

static study_metrics *measure_with_facts(const char *const *paths, int n, et_workload **wout)
{
  return measure_opts(paths, n, NULL, NULL, wout);
}

static void test_real(void)
{
  const char *sd = g_getenv("WISP_SHARED_DATA");
  const char *names[] = {"nsys/perlmutter-cloverleaf-cuda.sqlite", "nsys/saxpy-mpi-cuda_nsys_perlmutter0.sqlite"};
  for (int k = 0; k < 2; k++) {
    char *p = sd ? g_build_filename(sd, names[k], NULL) : NULL;
    if (!p || !g_file_test(p, G_FILE_TEST_EXISTS)) {
      g_test_skip("WISP_SHARED_DATA/nsys/*.sqlite not found (make check sets WISP_SHARED_DATA)");
      g_free(p);
      return;
    }
    g_assert_true(fe_nsys_is_export(p));
    fe_nsys_report rep;
    fe_nsys_report_init(&rep);
    GError *error = NULL;
    const char *paths[] = {p};
    et_workload *w = fe_nsys_load(paths, 1, &rep, &error);
    g_assert_no_error(error);
    const fe_nsys_file_report *f = &g_array_index(rep.files, fe_nsys_file_report, 0);
    g_assert_cmpint(w->n_ranks, ==, 1); /* one device in each (README) */
    g_assert_cmpuint(f->kernels, ==, sql_int(p, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"));
    g_assert_cmpuint(f->memcpys, ==, sql_int(p, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY"));
    g_assert_cmpuint(f->memcpy_bytes, ==, sql_int(p, "SELECT sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY"));
    g_assert_cmpuint(f->runtime_calls, ==, sql_int(p, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME"));
    int64_t lo = sql_int(p, "SELECT min(s) FROM (SELECT min(start) s FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL "
                         "SELECT min(start) FROM CUPTI_ACTIVITY_KIND_MEMCPY)");
    int64_t hi = sql_int(p, "SELECT max(e) FROM (SELECT max(end) e FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL "
                         "SELECT max(end) FROM CUPTI_ACTIVITY_KIND_MEMCPY)");
    g_assert_cmpint(w->measured_step_ps[0], ==, (hi - lo) * 1000);
    if (k == 0) { /* README: 1,312 kernels, 3,048 runtime calls, export schema 3.13.2 */
      g_assert_cmpuint(f->kernels, ==, 1312);
      g_assert_cmpuint(f->runtime_calls, ==, 3048);
      g_assert_cmpstr(f->export_version, ==, "3.13.2");
    } else { /* README: 5 kernels, 95 runtime calls, the older schema */
      g_assert_cmpuint(f->kernels, ==, 5);
      g_assert_cmpuint(f->runtime_calls, ==, 95);
      g_assert_nonnull(strstr(f->export_version, "no META_DATA_EXPORT"));
    }
    /* Every GPU op is one node at its measured duration: the busy time
     * sums to the raw file's kernel + memcpy durations. */
    int64_t busy = sql_int(p, "SELECT (SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL) + "
                           "(SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_MEMCPY)");
    sim_time_ps sum = 0;
    const et_graph *g = w->ranks[0];
    for (uint32_t i = 0; i < g->n_nodes; i++)
      if (!(g->nodes[i].flags & ET_FLAG_DELAY))
        sum += g->nodes[i].duration_ps;
    g_assert_cmpint(sum, ==, busy * 1000);
    /* The metrics on the measured timeline, against SQL on the raw file:
     * average_memory_bandwidth = sum(bytes) / sum(end - start) over the
     * copies (bytes per ns = GB/s); dominant_kernel_concentration = the
     * largest per-name kernel time over all kernel time (one stream per
     * device here, so no kernel overlaps another and the window holds all). */
    study_activity *a = study_activity_new(w);
    g_assert_true(study_activity_add_measured(a, w, &error));
    study_metrics *m = study_metrics_compute(a, NULL);
    double bw = (double)sql_int(p, "SELECT sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY") /
                (double)sql_int(p, "SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_MEMCPY");
    g_assert_cmpfloat_with_epsilon(m->average_memory_bandwidth_GBps, bw, 1e-9 * bw);
    double dk = 100.0 * (double)sql_int(p, "SELECT max(t) FROM (SELECT sum(end - start) t FROM "
                                        "CUPTI_ACTIVITY_KIND_KERNEL GROUP BY demangledName)") /
                (double)sql_int(p, "SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL");
    g_assert_cmpfloat_with_epsilon(m->dominant_kernel_concentration_pct, dk, 1e-9 * dk);
    g_test_message("%s: average_memory_bandwidth %.3f GB/s, dominant kernel %.2f %% (%s)", names[k],
                   m->average_memory_bandwidth_GBps, m->dominant_kernel_concentration_pct, m->dominant_kernel);
    /* No MoE kernel in either (stencil and saxpy codes): moe_fraction 0. */
    g_assert_cmpfloat(m->moe_fraction_pct, ==, 0);
    /* mean_sm_coverage, through the facts: per kernel min(gridX gridY gridZ
     * / smCount, 1), weighted by (end - start); and CCL-Bench's plain mean.
     * One device and one SM count (108, A100) in each file. */
    et_workload *w2 = NULL;
    study_metrics *m2 = measure_with_facts(paths, 1, &w2);
    const char *cov = "min(1.0, 1.0 * gridX * gridY * gridZ / (SELECT smCount FROM TARGET_INFO_GPU LIMIT 1))";
    char *wq = g_strdup_printf("SELECT 100.0 * sum(%s * (end - start)) / sum(end - start) FROM "
                               "CUPTI_ACTIVITY_KIND_KERNEL", cov);
    char *uq = g_strdup_printf("SELECT 100.0 * avg(%s) FROM CUPTI_ACTIVITY_KIND_KERNEL", cov);
    double wcov = sql_double(p, wq), ucov = sql_double(p, uq);
    g_assert_cmpfloat_with_epsilon(m2->mean_sm_coverage_pct, wcov, 1e-9 * wcov);
    g_assert_cmpfloat_with_epsilon(m2->mean_sm_coverage_unweighted_pct, ucov, 1e-9 * ucov);
    g_assert_true(isnan(m2->bw_peertopeer_pct)); /* no GPU_METRICS table in these exports */
    g_test_message("%s: mean_sm_coverage %.4f %% (plain mean %.4f %%)", names[k], m2->mean_sm_coverage_pct,
                   m2->mean_sm_coverage_unweighted_pct);
    g_free(wq);
    g_free(uq);
    study_metrics_free(m2);
    et_workload_free(w2);
    study_metrics_free(m);
    study_activity_free(a);
    et_workload_free(w);
    fe_nsys_report_clear(&rep);
    g_free(p);
  }
}

/* Writes a synthetic export with the given devices (see the top). */
static void write_export(const char *path, int n_devices, gboolean drop_stream)
{
  sqlite3 *db = NULL;
  g_assert_cmpint(sqlite3_open(path, &db), ==, SQLITE_OK);
  exec_sql(db, "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
               "INSERT INTO StringIds VALUES (1, 'volta_sgemm_128x64_nn'), "
               "(2, 'ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)'), "
               "(3, 'cudaLaunchKernel_v7000'), (4, 'ncclAllReduce');"
               "CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);"
               "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.13.2');"
               "CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT);"
               "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER, "
               "correlationId INTEGER, nameId INTEGER);"
               "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT, textId INTEGER, "
               "globalTid INTEGER);"
               "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER, "
               "streamId INTEGER, correlationId INTEGER, bytes INTEGER, copyKind INTEGER);");
  exec_sql(db, drop_stream ? "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, "
                             "correlationId INTEGER, demangledName INTEGER);"
                           : "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, "
                             "streamId INTEGER, correlationId INTEGER, demangledName INTEGER, gridX INTEGER);");
  for (int d = 0; d < n_devices && !drop_stream; d++) {
    int64_t t0 = 1000000000 + d * 7; /* a shared session clock, in ns */
    char *sql = g_strdup_printf(
      "INSERT INTO TARGET_INFO_GPU VALUES (%d, 'NVIDIA H100 80GB HBM3');"
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %d, 7, 1, 1, 132);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %d, 20, 2, 2, 8);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %d, 7, 3, 4096, 1);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", 1, 2, 3);"
      "INSERT INTO NVTX_EVENTS VALUES (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", 59, NULL, 4, 1);",
      d, t0, t0 + 100000, d, t0 + 120000, t0 + 170000, d, t0 + 100000, t0 + 110000, d, t0 + 110000, t0 + 112000,
      t0 + 109000, t0 + 113000);
    exec_sql(db, sql);
    g_free(sql);
  }
  sqlite3_close(db);
}

static void check_rank(const et_graph *g)
{
  g_assert_cmpuint(g->n_nodes, ==, 4); /* gemm, memcpy; idle, all-reduce */
  uint32_t comm = 0, delays = 0;
  for (uint32_t i = 0; i < g->n_nodes; i++) {
    const et_node *n = &g->nodes[i];
    if (n->type == ET_NODE_COMM_COLL) {
      comm++;
      g_assert_true(n->flags & ET_FLAG_REPLAY); /* no size in the export */
      g_assert_cmpint(n->duration_ps, ==, 50 * 1000000);
      g_assert_cmpint(n->start_ps, ==, 120 * 1000000);
      g_assert_cmpint(et_node_comm(g, i)->coll, ==, ET_COLL_ALL_REDUCE);
    }
    if (n->flags & ET_FLAG_DELAY) {
      delays++;
      g_assert_cmpint(n->duration_ps, ==, 120 * 1000000);
    }
  }
  g_assert_cmpuint(comm, ==, 1);
  g_assert_cmpuint(delays, ==, 1);
}

static void test_nccl(void)
{
  char *dir = g_dir_make_tmp("wisp-nsys-XXXXXX", NULL);
  char *r0 = g_build_filename(dir, "rank0.sqlite", NULL), *r1 = g_build_filename(dir, "rank1.sqlite", NULL);
  char *node = g_build_filename(dir, "node.sqlite", NULL);
  write_export(r0, 1, FALSE);
  write_export(r1, 1, FALSE);
  write_export(node, 2, FALSE);
  const char *two[] = {r0, r1}, *one[] = {node};
  for (int k = 0; k < 2; k++) {
    fe_nsys_report rep;
    fe_nsys_report_init(&rep);
    GError *error = NULL;
    et_workload *w = fe_nsys_load(k ? one : two, k ? 1 : 2, &rep, &error);
    g_assert_no_error(error);
    g_assert_cmpint(w->n_ranks, ==, 2);
    for (int r = 0; r < 2; r++) {
      check_rank(w->ranks[r]);
      g_assert_cmpint(w->measured_step_ps[r], ==, 170 * 1000000);
    }
    const fe_nsys_file_report *f = &g_array_index(rep.files, fe_nsys_file_report, 0);
    g_assert_cmpuint(f->comm_kernels, ==, k ? 2 : 1);
    g_assert_cmpuint(f->nvtx_nccl_ranges, ==, k ? 2 : 1);
    g_assert_cmpuint(f->launches, ==, k ? 2 : 1);
    g_assert_cmpuint(f->memcpy_bytes, ==, k ? 8192 : 4096);
    g_assert_cmpstr(f->device_name, ==, "NVIDIA H100 80GB HBM3");
    et_workload_free(w);
    fe_nsys_report_clear(&rep);
  }
  test_rm_rf(dir);
  g_free(dir);
  g_free(r0);
  g_free(r1);
  g_free(node);
}

static void expect_fail(const char *path, const char *want)
{
  GError *error = NULL;
  const char *paths[] = {path};
  et_workload *w = fe_nsys_load(paths, 1, NULL, &error);
  g_assert_null(w);
  g_assert_nonnull(error);
  if (!strstr(error->message, want) || !strstr(error->message, path))
    g_error("expected '%s' and the path in: %s", want, error->message);
  g_error_free(error);
}

static void test_schema(void)
{
  char *dir = g_dir_make_tmp("wisp-nsys-bad-XXXXXX", NULL);
  char *p = g_build_filename(dir, "bad.sqlite", NULL);
  write_export(p, 0, TRUE);
  expect_fail(p, "table CUPTI_ACTIVITY_KIND_KERNEL has no column streamId");
  g_unlink(p);
  sqlite3 *db = NULL;
  g_assert_cmpint(sqlite3_open(p, &db), ==, SQLITE_OK);
  exec_sql(db, "CREATE TABLE StringIds (id INTEGER, value TEXT);");
  sqlite3_close(db);
  expect_fail(p, "no table CUPTI_ACTIVITY_KIND_KERNEL");
  g_unlink(p);
  write_export(p, 0, FALSE);
  expect_fail(p, "holds no kernel, memcpy or memset");
  g_assert_true(g_file_set_contents(p, "not a database at all, but long enough", -1, NULL));
  g_assert_false(fe_nsys_is_export(p));
  expect_fail(p, "not a readable SQLite database");
  test_rm_rf(dir);
  g_free(dir);
  g_free(p);
}

/* Device facts on a documented-schema export built here (no public NCCL
 * export has them): write_export's two devices, plus gridY/gridZ, the SM
 * count and GPU metrics samples.  Per device: the gemm [0, 100] us has 132
 * blocks on 132 SMs (coverage 1), the all-reduce [120, 170] us 8 blocks
 * (8/132).  mean_sm_coverage = (100 x 1 + 50 x 8/132) / 150 x 100 =
 * 68.6869 %; plain mean (1 + 8/132) / 2 x 100 = 53.0303 %.  NVLink TX
 * samples at 50 us (10 %) and 150 us (30 %) in the window, 500 us (99 %)
 * after it, and an "SM Active" sample that is not the counter: bw_peertopeer
 * = (10 + 30) / 2 = 20 %. */
static void test_facts(void)
{
  char *dir = g_dir_make_tmp("wisp-nsys-facts-XXXXXX", NULL);
  char *p = g_build_filename(dir, "node.sqlite", NULL);
  write_export(p, 2, FALSE);
  sqlite3 *db = NULL;
  g_assert_cmpint(sqlite3_open(p, &db), ==, SQLITE_OK);
  exec_sql(db, "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL ADD COLUMN gridY INTEGER DEFAULT 1;"
               "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL ADD COLUMN gridZ INTEGER DEFAULT 1;"
               "ALTER TABLE TARGET_INFO_GPU ADD COLUMN smCount INTEGER DEFAULT 132;"
               "CREATE TABLE TARGET_INFO_GPU_METRICS (typeId INTEGER, metricId INTEGER, metricName TEXT);"
               "INSERT INTO TARGET_INFO_GPU_METRICS VALUES (256, 5, 'NVLink TX Responses User Data [Throughput %]'),"
               " (256, 6, 'SM Active');"
               "CREATE TABLE GPU_METRICS (timestamp INTEGER, typeId INTEGER, metricId INTEGER, value INTEGER);");
  for (int d = 0; d < 2; d++) {
    int64_t t0 = 1000000000 + d * 7; /* write_export's clock */
    char *sql = g_strdup_printf("INSERT INTO GPU_METRICS VALUES (%" G_GINT64_FORMAT ", %d, 5, 10), (%" G_GINT64_FORMAT
                                ", %d, 5, 30), (%" G_GINT64_FORMAT ", %d, 5, 99), (%" G_GINT64_FORMAT ", %d, 6, 77);",
                                t0 + 50000, 256 | d, t0 + 150000, 256 | d, t0 + 500000, 256 | d, t0 + 60000, 256 | d);
    exec_sql(db, sql);
    g_free(sql);
  }
  sqlite3_close(db);
  const char *paths[] = {p};
  et_workload *w = NULL;
  study_metrics *m = measure_with_facts(paths, 1, &w);
  g_assert_cmpfloat_with_epsilon(m->mean_sm_coverage_pct, (100.0 + 50.0 * 8 / 132) / 150 * 100, 1e-9);
  g_assert_cmpfloat_with_epsilon(m->mean_sm_coverage_unweighted_pct, (1 + 8.0 / 132) / 2 * 100, 1e-9);
  g_assert_cmpfloat_with_epsilon(m->bw_peertopeer_pct, 20.0, 1e-12);
  /* No MoE kernel: a gemm and an NCCL all-reduce. */
  g_assert_cmpfloat(m->moe_fraction_pct, ==, 0);
  study_metrics_free(m);
  et_workload_free(w);
  test_rm_rf(dir);
  g_free(dir);
  g_free(p);
}

/* moe_fraction on a one-device export: fused_moe_kernel [0, 30] us,
 * a gemm [30, 100] us, DeepEP's internode dispatch [100, 140] us (a
 * registry MoE dispatch), a memset [140, 150] us (not a kernel).  MoE time
 * 30 + 40 = 70 us of 140 us of kernels: 50 %. */
static void test_moe(void)
{
  char *dir = g_dir_make_tmp("wisp-nsys-moe-XXXXXX", NULL);
  char *p = g_build_filename(dir, "moe.sqlite", NULL);
  sqlite3 *db = NULL;
  g_assert_cmpint(sqlite3_open(p, &db), ==, SQLITE_OK);
  exec_sql(db, "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
               "INSERT INTO StringIds VALUES (1, 'fused_moe_kernel'), (2, 'sm90_xmma_gemm_bf16bf16_bf16f32'), "
               "(3, 'void deep_ep::internode::dispatch<true, 8, 2>(void*, int)');"
               "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, "
               "streamId INTEGER, demangledName INTEGER);"
               "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000000, 1030000, 0, 7, 1), (1030000, 1100000, 0, 7, 2), "
               "(1100000, 1140000, 0, 8, 3);"
               "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER, end INTEGER, deviceId INTEGER, "
               "streamId INTEGER, bytes INTEGER);"
               "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (1140000, 1150000, 0, 7, 64);");
  sqlite3_close(db);
  const char *paths[] = {p};
  et_workload *w = NULL;
  study_metrics *m = measure_with_facts(paths, 1, &w);
  g_assert_cmpfloat_with_epsilon(m->moe_fraction_pct, 50.0, 1e-9);
  g_assert_true(isnan(m->mean_sm_coverage_pct)); /* no grid columns */
  g_assert_nonnull(strstr(m->mean_sm_coverage_source, "gridX"));
  study_metrics_free(m);
  et_workload_free(w);
  test_rm_rf(dir);
  g_free(dir);
  g_free(p);
}

/* A one-device export per rank for /nsys/nccl_sizes (see the top); comm
 * is the NCCL communicator ID its payloads carry.  Times in us from a
 * session clock at 1 s:
 *   gemm [0, 100] stream 7 (corr 1);
 *   all-reduce kernel [120, 170] stream 20 (corr 2), launched [110, 112] in
 *     the range ncclAllReduce [109, 113] (jsonText: 8388608 bytes);
 *   reduce-scatter kernel [200, 240] (corr 3), launched [190, 192] in
 *     ncclReduceScatter [189, 193] (payload through jsonTextId: 1048576);
 *   all-gather kernel [260, 280] (corr 4), launched [250, 252] in
 *     ncclGroupEnd [249, 253] (no payload: grouped calls launch there). */
static void write_payload_export(const char *path, int comm)
{
  sqlite3 *db = NULL;
  g_assert_cmpint(sqlite3_open(path, &db), ==, SQLITE_OK);
  char *sql = g_strdup_printf(
    "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
    "INSERT INTO StringIds VALUES (1, 'volta_sgemm_128x64_nn'), "
    "(2, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)'), "
    "(3, 'ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)'), "
    "(4, 'ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)'), (5, 'cudaLaunchKernel_v7000'), "
    "(10, '{\"NCCL communicator ID\": %d, \"Message size [bytes]\": 1048576, \"Reduction operation\": \"ncclSum\"}');"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER, "
    "correlationId INTEGER, nameId INTEGER);"
    "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT, textId INTEGER, "
    "globalTid INTEGER, jsonText TEXT, jsonTextId INTEGER);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER, "
    "correlationId INTEGER, demangledName INTEGER);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000000000, 1000100000, 0, 7, 1, 1), "
    "(1000120000, 1000170000, 0, 20, 2, 2), (1000200000, 1000240000, 0, 20, 3, 3), "
    "(1000260000, 1000280000, 0, 20, 4, 4);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1000110000, 1000112000, 9, 2, 5), "
    "(1000190000, 1000192000, 9, 3, 5), (1000250000, 1000252000, 9, 4, 5);"
    "INSERT INTO NVTX_EVENTS VALUES (1000109000, 1000113000, 59, 'ncclAllReduce', NULL, 9, "
    "'{\"NCCL communicator ID\": %d, \"Message size [bytes]\": 8388608, \"Reduction operation\": \"ncclSum\"}', NULL), "
    "(1000189000, 1000193000, 59, 'ncclReduceScatter', NULL, 9, NULL, 10), "
    "(1000249000, 1000253000, 59, 'ncclGroupEnd', NULL, 9, NULL, NULL);", comm, comm);
  exec_sql(db, sql);
  g_free(sql);
  sqlite3_close(db);
}

/* The all-reduce and the reduce-scatter take their sizes from the
 * payloads and, their communicator being on both ranks, become world
 * collectives that the replay simulates: all-reduce comm_size = the
 * message size, 8388608 B; reduce-scatter: NCCL passes recvcount x type
 * size, Chakra's comm_size is the full input, 2 ranks x 1048576 =
 * 2097152 B.  The all-gather, launched outside any sized range, stays
 * replayed at its measured 20 us.  With different communicator IDs on the
 * two ranks, no communicator spans the load: the sized kernels are
 * replayed too, and counted so. */
static void test_nccl_sizes(void)
{
  char *dir = g_dir_make_tmp("wisp-nsys-pl-XXXXXX", NULL);
  char *r0 = g_build_filename(dir, "rank0.sqlite", NULL), *r1 = g_build_filename(dir, "rank1.sqlite", NULL);
  for (int other = 0; other < 2; other++) {
    write_payload_export(r0, 77);
    write_payload_export(r1, other ? 78 : 77);
    const char *two[] = {r0, r1};
    fe_nsys_report rep;
    fe_nsys_report_init(&rep);
    GError *error = NULL;
    et_workload *w = fe_nsys_load(two, 2, &rep, &error);
    g_assert_no_error(error);
    for (int r = 0; r < 2; r++) {
      const fe_nsys_file_report *f = &g_array_index(rep.files, fe_nsys_file_report, r);
      g_assert_cmpuint(f->nvtx_sized_ranges, ==, 2);
      g_assert_cmpuint(f->comm_kernels, ==, 3);
      g_assert_cmpuint(f->comm_sized, ==, other ? 0 : 2);
      g_assert_cmpuint(f->comm_sized_not_world, ==, other ? 2 : 0);
      g_assert_cmpuint(f->comm_replayed, ==, other ? 3 : 1);
      const et_graph *g = w->ranks[r];
      int seen = 0;
      for (uint32_t i = 0; i < g->n_nodes; i++) {
        const et_node *n = &g->nodes[i];
        if (n->type != ET_NODE_COMM_COLL)
          continue;
        const et_comm *c = et_node_comm(g, i);
        seen++;
        if (c->coll == ET_COLL_ALL_GATHER || other) {
          g_assert_true(n->flags & ET_FLAG_REPLAY);
          g_assert_cmpuint(c->bytes, ==, 0);
          continue;
        }
        g_assert_false(n->flags & ET_FLAG_REPLAY);
        g_assert_cmpuint(c->group, ==, ET_GROUP_WORLD);
        g_assert_cmpuint(c->bytes, ==, c->coll == ET_COLL_ALL_REDUCE ? 8388608u : 2u * 1048576u);
      }
      g_assert_cmpint(seen, ==, 3);
    }
    et_workload_free(w);
    fe_nsys_report_clear(&rep);
    g_assert_cmpint(g_unlink(r0), ==, 0);
    g_assert_cmpint(g_unlink(r1), ==, 0);
  }
  ns_payload pl;
  g_assert_true(ns_payload_parse("{\"Message size [bytes]\": \"4096\"}", &pl)); /* a quoted number too */
  g_assert_cmpuint(pl.bytes, ==, 4096);
  g_assert_false(pl.has_comm);
  g_assert_false(ns_payload_parse("{\"Message size [bytes]\": -1}", &pl));
  g_assert_false(ns_payload_parse("{\"NCCL communicator ID\": 5}", &pl));
  test_rm_rf(dir);
  g_free(dir);
  g_free(r0);
  g_free(r1);
}

/* NVTX step windows (nsys_steps.c, /nsys/steps): one node export with two
 * processes (pid 100 on device 0, pid 101 on device 1; globalTid and
 * globalPid carry the pid in bits 24..47 as nsys writes them) and the same
 * correlationIds 1..3 in both.  Device 0, in us from a session clock at
 * 1 s: ProfilerStep#1 [0, 100), #2 [100, 200), #3 [200, 300) (named
 * "ProfilerStep#3, op_id = 12", as PyTorch's NVTX ranges may be), #4
 * [300, 310) without GPU work, and a range "ProfilerStep#x" that is no
 * marker; kernels (launch -> run, blocks of 132 SMs):
 *   k1 launched [10, 12], runs [50, 80], 132 blocks (coverage 1);
 *   k2 launched [190, 192] in step 2, runs [205, 260] (in step 3's time), 66 blocks (0.5);
 *   k3 launched [210, 212], runs [265, 290], 33 blocks (0.25).
 * Device 1: everything 40 us later (pid 101).
 * Expected windows (the launch decides the step; the window ends at the
 * later of the marker's end and its ops' end):
 *   default = #3 (the last with GPU work; #4 has none): [200, 300), k3 only
 *     (k2 runs inside it but was launched in #2): 100 us, idle 65 us + 25;
 *     mean_sm_coverage 25 %;
 *   --step 2: [100, max(200, 260)) = 160 us, k2 only;
 *   --steps all: #1..#3 (#4 dropped from the end): 300 us, 3 kernels;
 *     coverage (30 x 1 + 55 x 0.5 + 25 x 0.25) / 110 = 57.9545 %;
 *   --steps whole: [50, 290) = 240 us, 3 kernels.
 * Device 1 gives the same figures only if the launches are joined within
 * its process (a join on correlationId alone anchors its k3 at device 0's
 * 210 us, outside its #3 [240, 340)) and its markers are its own. */
static void write_steps_export(const char *path)
{
  sqlite3 *db = NULL;
  g_assert_cmpint(sqlite3_open(path, &db), ==, SQLITE_OK);
  exec_sql(db, "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
               "INSERT INTO StringIds VALUES (1, 'sm90_xmma_gemm_bf16'), (2, 'cudaLaunchKernel_v7000'), "
               "(3, 'ProfilerStep#3, op_id = 12');"
               "CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT, smCount INTEGER);"
               "INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H100 80GB HBM3', 132), (1, 'NVIDIA H100 80GB HBM3', 132);"
               "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER, "
               "correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, gridX INTEGER, gridY INTEGER, "
               "gridZ INTEGER);"
               "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER, "
               "correlationId INTEGER, nameId INTEGER);"
               "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT, textId INTEGER, "
               "globalTid INTEGER);");
  for (int d = 0; d < 2; d++) {
    int64_t t = 1000000000 + d * 40000, pid = (int64_t)(100 + d) << 24, tid = pid | 7;
    char *sql = g_strdup_printf(
      "INSERT INTO NVTX_EVENTS VALUES (%1$" G_GINT64_FORMAT ", %1$" G_GINT64_FORMAT " + 100000, 59, 'ProfilerStep#1', "
      "NULL, %2$" G_GINT64_FORMAT "), (%1$" G_GINT64_FORMAT " + 100000, %1$" G_GINT64_FORMAT " + 200000, 59, "
      "'ProfilerStep#2', NULL, %2$" G_GINT64_FORMAT "), (%1$" G_GINT64_FORMAT " + 200000, %1$" G_GINT64_FORMAT
      " + 300000, 59, NULL, 3, %2$" G_GINT64_FORMAT "), (%1$" G_GINT64_FORMAT " + 300000, %1$" G_GINT64_FORMAT
      " + 310000, 59, 'ProfilerStep#4', NULL, %2$" G_GINT64_FORMAT "), (%1$" G_GINT64_FORMAT ", %1$" G_GINT64_FORMAT
      " + 310000, 59, 'ProfilerStep#x', NULL, %2$" G_GINT64_FORMAT ");"
      "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (%1$" G_GINT64_FORMAT " + 10000, %1$" G_GINT64_FORMAT " + 12000, "
      "%2$" G_GINT64_FORMAT ", 1, 2), (%1$" G_GINT64_FORMAT " + 190000, %1$" G_GINT64_FORMAT " + 192000, %2$"
      G_GINT64_FORMAT ", 2, 2), (%1$" G_GINT64_FORMAT " + 210000, %1$" G_GINT64_FORMAT " + 212000, %2$" G_GINT64_FORMAT
      ", 3, 2);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (%1$" G_GINT64_FORMAT " + 50000, %1$" G_GINT64_FORMAT " + 80000, "
      "%3$d, 7, 1, %4$" G_GINT64_FORMAT ", 1, 132, 1, 1), (%1$" G_GINT64_FORMAT " + 205000, %1$" G_GINT64_FORMAT
      " + 260000, %3$d, 7, 2, %4$" G_GINT64_FORMAT ", 1, 66, 1, 1), (%1$" G_GINT64_FORMAT " + 265000, %1$"
      G_GINT64_FORMAT " + 290000, %3$d, 7, 3, %4$" G_GINT64_FORMAT ", 1, 33, 1, 1);", t, tid, d, pid);
    exec_sql(db, sql);
    g_free(sql);
  }
  sqlite3_close(db);
}

static void test_steps(void)
{
  char *dir = g_dir_make_tmp("wisp-nsys-steps-XXXXXX", NULL);
  char *p = g_build_filename(dir, "node.sqlite", NULL);
  write_steps_export(p);
  struct { int step, lo, hi; gboolean all, whole; int64_t window_us; uint32_t kernels; int steps; double cov; } cases[] = {
    {-1, -1, -1, FALSE, FALSE, 100, 1, 1, 25.0},
    {2, -1, -1, FALSE, FALSE, 160, 1, 1, 50.0},
    {-1, -1, -1, TRUE, FALSE, 300, 3, 3, 100.0 * (30 + 55 * 0.5 + 25 * 0.25) / 110},
    {-1, 1, 2, FALSE, FALSE, 260, 2, 2, 100.0 * (30 + 55 * 0.5) / 85},
    {-1, -1, -1, FALSE, TRUE, 240, 3, 1, 100.0 * (30 + 55 * 0.5 + 25 * 0.25) / 110},
  };
  for (size_t k = 0; k < G_N_ELEMENTS(cases); k++) {
    fe_nsys_options opt;
    fe_nsys_options_init(&opt);
    opt.step = cases[k].step;
    opt.step_lo = cases[k].lo;
    opt.step_hi = cases[k].hi;
    opt.all_steps = cases[k].all;
    opt.whole_trace = cases[k].whole;
    fe_nsys_report rep;
    et_workload *w = NULL;
    const char *paths[] = {p};
    fe_nsys_report_init(&rep);
    study_metrics *m = measure_opts(paths, 1, &opt, &rep, &w);
    g_assert_cmpint(w->n_ranks, ==, 2);
    g_assert_cmpint(rep.steps_in_window, ==, cases[k].steps);
    g_assert_false(rep.inference_markers);
    const fe_nsys_file_report *f = &g_array_index(rep.files, fe_nsys_file_report, 0);
    g_assert_cmpuint(f->step_markers, ==, 8); /* #1..#4 per process; "ProfilerStep#x" is none */
    g_assert_cmpint(f->step_first, ==, 1);
    g_assert_cmpint(f->step_last, ==, 4);
    g_assert_cmpuint(f->kernels, ==, 2 * cases[k].kernels);
    for (int r = 0; r < 2; r++) {
      g_assert_cmpint(w->measured_step_ps[r], ==, cases[k].window_us * 1000000);
      uint32_t kn = 0;
      for (uint32_t i = 0; i < w->ranks[r]->n_nodes; i++)
        kn += !(w->ranks[r]->nodes[i].flags & ET_FLAG_DELAY);
      g_assert_cmpuint(kn, ==, cases[k].kernels);
    }
    g_assert_cmpfloat_with_epsilon(m->mean_sm_coverage_pct, cases[k].cov, 1e-9);
    study_metrics_free(m);
    et_workload_free(w);
    fe_nsys_report_clear(&rep);
  }
  /* A step the export does not have: the message the latency loop stops on. */
  fe_nsys_options opt;
  fe_nsys_options_init(&opt);
  opt.step = 9;
  GError *error = NULL;
  const char *paths[] = {p};
  g_assert_null(fe_nsys_load_opts(paths, 1, &opt, NULL, &error));
  g_assert_nonnull(strstr(error->message, ": no ProfilerStep#9 (the export's NVTX step ranges are #1..#4)"));
  g_clear_error(&error);
  test_rm_rf(dir);
  g_free(dir);
  g_free(p);
}

/* NCCL sizes in a node export of two processes (/nsys/nccl_sizes_pids):
 * CUPTI numbers correlations per process, so both processes' all-reduce
 * kernels have correlationId 2; process 100 (device 0) launched its
 * all-reduce inside an ncclAllReduce range of 8388608 bytes, process 101
 * (device 1) inside one of 4194304 bytes (same communicator 77).  Each
 * rank's kernel must take its own process's size: 8388608 on rank 0,
 * 4194304 on rank 1 (a join on correlationId alone gives both the same). */
static void test_nccl_sizes_pids(void)
{
  char *dir = g_dir_make_tmp("wisp-nsys-pid-XXXXXX", NULL), *p = g_build_filename(dir, "node.sqlite", NULL);
  sqlite3 *db = NULL;
  g_assert_cmpint(sqlite3_open(p, &db), ==, SQLITE_OK);
  exec_sql(db, "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
               "INSERT INTO StringIds VALUES (1, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)');"
               "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER, "
               "correlationId INTEGER, globalPid INTEGER, demangledName INTEGER);"
               "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER, "
               "correlationId INTEGER, nameId INTEGER);"
               "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT, textId INTEGER, "
               "globalTid INTEGER, jsonText TEXT);");
  for (int d = 0; d < 2; d++) {
    int64_t pid = (int64_t)(100 + d) << 24, tid = pid | 7, t = 1000000000 + d * 3000;
    char *sql = g_strdup_printf(
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (%1$" G_GINT64_FORMAT " + 120000, %1$" G_GINT64_FORMAT
      " + 170000, %2$d, 20, 2, %3$" G_GINT64_FORMAT ", 1);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (%1$" G_GINT64_FORMAT " + 110000, %1$" G_GINT64_FORMAT
      " + 112000, %4$" G_GINT64_FORMAT ", 2, 1);"
      "INSERT INTO NVTX_EVENTS VALUES (%1$" G_GINT64_FORMAT " + 109000, %1$" G_GINT64_FORMAT " + 113000, 59, "
      "'ncclAllReduce', NULL, %4$" G_GINT64_FORMAT ", '{\"NCCL communicator ID\": 77, \"Message size [bytes]\": "
      "%5$d}');", t, d, pid, tid, d ? 4194304 : 8388608);
    exec_sql(db, sql);
    g_free(sql);
  }
  sqlite3_close(db);
  const char *paths[] = {p};
  GError *error = NULL;
  et_workload *w = fe_nsys_load(paths, 1, NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpint(w->n_ranks, ==, 2);
  for (int r = 0; r < 2; r++) {
    const et_graph *g = w->ranks[r];
    int seen = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++)
      if (g->nodes[i].type == ET_NODE_COMM_COLL) {
        seen++;
        g_assert_false(g->nodes[i].flags & ET_FLAG_REPLAY);
        g_assert_cmpuint(et_node_comm(g, i)->bytes, ==, r ? 4194304u : 8388608u);
      }
    g_assert_cmpint(seen, ==, 1);
  }
  et_workload_free(w);
  test_rm_rf(dir);
  g_free(dir);
  g_free(p);
}

/* The facts of the export at p fail with an error naming p and holding
 * want. */
static void expect_facts_error(const char *p, const char *want)
{
  const char *paths[] = {p};
  fe_nsys_facts f;
  GError *error = NULL;
  g_assert_false(fe_nsys_facts_load(paths, 1, &f, &error));
  g_assert_nonnull(error);
  g_assert_nonnull(strstr(error->message, p));
  g_assert_nonnull(strstr(error->message, want));
  g_clear_error(&error);
}

/* Fuzz finding (fuzz_nsys, this wave's 120 s run, crash-40aa68e5...): on
 * a malformed export the SM count query failed for every device, and the
 * second failure set the GError over the first (GLib's warning, an abort
 * under the fuzzer).  Deterministic stand-in: TARGET_INFO_GPU a view whose
 * rows raise an error when read (abs of the smallest integer overflows),
 * two devices.  The facts fail once, with the file and the query. */
static void test_facts_error(void)
{
  char *dir = g_dir_make_tmp("wisp-nsys-ferr-XXXXXX", NULL), *p = g_build_filename(dir, "bad.sqlite", NULL);
  test_nsys_export(p, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 2000, 1, 7, 2, 1, 1, 1, 1);"
                      "CREATE VIEW TARGET_INFO_GPU AS SELECT 0 AS id, 'x' AS name, abs(-9223372036854775807 - 1) AS "
                      "smCount;");
  expect_facts_error(p, "TARGET_INFO_GPU");
  test_rm_rf(dir);
  g_free(dir);
  g_free(p);
}

/* The facts read alone (the library entry point the fuzzer drives; the
 * CLI loads the graphs first, which refuse the same rows): a kernel start
 * of 2^63 - 1 ns was subtracted and multiplied by 1000 unchecked (signed
 * overflow in grid_row), a memset start 'abc' read as 0.  Both are now the
 * reader's error naming the table, the row (in the query's order) and the
 * field. */
static void test_facts_times(void)
{
  char *dir = g_dir_make_tmp("wisp-nsys-ftime-XXXXXX", NULL), *p = g_build_filename(dir, "t.sqlite", NULL);
  const struct { const char *sql, *want; } cases[] = {
    {"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (9223372036854775807, 1, 0, 7, 2, 1, 1, 1, 1);",
     "table CUPTI_ACTIVITY_KIND_KERNEL, row 2: start is '9223372036854775807', not a time in ns"},
    {"CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER, "
     "bytes INTEGER); INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES ('abc', 3000, 0, 7, 64);",
     "table CUPTI_ACTIVITY_KIND_MEMSET, row 1: start is 'abc', not a time in ns"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    test_nsys_export(p, cases[i].sql);
    expect_facts_error(p, cases[i].want);
  }
  test_rm_rf(dir);
  g_free(dir);
  g_free(p);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/nsys/real", test_real);
  g_test_add_func("/nsys/nccl", test_nccl);
  g_test_add_func("/nsys/nccl_sizes", test_nccl_sizes);
  g_test_add_func("/nsys/schema", test_schema);
  g_test_add_func("/nsys/facts", test_facts);
  g_test_add_func("/nsys/moe", test_moe);
  g_test_add_func("/nsys/steps", test_steps);
  g_test_add_func("/nsys/facts_times", test_facts_times);
  g_test_add_func("/nsys/nccl_sizes_pids", test_nccl_sizes_pids);
  g_test_add_func("/nsys/facts_error", test_facts_error);
  return g_test_run();
}
