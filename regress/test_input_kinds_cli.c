/* test_input_kinds_cli.c: every command that reads a workload - inspect,
 * convert, metrics, simulate, utility, sweep, calibrate - on a PyTorch
 * execution trace alone and on an Nsight Systems export (issue 31 item 4),
 * through the `wisp` binary ($WISP_BIN, set by `make check`).
 *
 * Inputs, written by the test:
 *  - et/job_0.json, et/job_1.json: a two-rank PyTorch execution trace
 *    (schema 1.0.1) whose only collective is a world all-reduce of one
 *    262144-float tensor: 262144 x 4 = 1048576 bytes per rank; no durations.
 *  - node.sqlite: an Nsight export after NVIDIA's documented schema (no
 *    public NCCL export exists; ../shared/data/README.md) with two H100s of
 *    132 SMs; per device a gemm [0, 100] us of 132 blocks, a 4096-byte HtoD
 *    memcpy [100, 110] us and an NCCL all-reduce [120, 170] us of 8 blocks.
 *    The window is 170 us; the all-reduce has no size, so it replays at its
 *    measured 50 us and the step is the measured 170 us whatever the
 *    network; average_memory_bandwidth = 4096 B / 10000 ns = 0.4096 GB/s;
 *    mean_sm_coverage = (100 x 1 + 50 x 8/132) / 150 x 100 = 68.6869 %.
 * Each check names the line or key the command prints.
 */
#include "config.h"

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "regress/test_util.h"

#include <string.h>

typedef struct {
  char *dir, *et, *ns;
} kinds_env;

#define T(id, n) "[" #id ", " #id ", 0, " #n ", 4, \"cuda:0\"]"

static const char et_text[] =
  "{\"schema\": \"1.0.1\", \"pid\": 42, \"time\": \"now\", \"nodes\": ["
  "{\"name\": \"[pytorch|profiler|execution_graph|process]\", \"id\": 1, \"rf_id\": 101, \"parent\": 1, \"tid\": 0, "
  "\"inputs\": [], \"input_types\": [], \"outputs\": [], \"output_types\": []},"
  "{\"name\": \"[pytorch|profiler|execution_graph|thread]\", \"id\": 2, \"rf_id\": 102, \"parent\": 1, \"tid\": 1, "
  "\"inputs\": [], \"input_types\": [], \"outputs\": [], \"output_types\": []},"
  "{\"name\": \"aten::mm\", \"id\": 3, \"rf_id\": 103, \"parent\": 2, \"tid\": 1, \"inputs\": [" T(10, 1000) "], "
  "\"input_types\": [\"Tensor(float)\"], \"outputs\": [" T(11, 262144) "], \"output_types\": [\"Tensor(float)\"]},"
  "{\"name\": \"c10d::allreduce_\", \"id\": 4, \"rf_id\": 104, \"parent\": 2, \"tid\": 1, \"inputs\": [["
  T(11, 262144) "]], \"input_types\": [\"GenericList[Tensor(float)]\"], \"outputs\": [], \"output_types\": []},"
  "{\"name\": \"record_param_comms\", \"id\": 5, \"rf_id\": 105, \"parent\": 4, \"tid\": 1, \"inputs\": [["
  T(11, 262144) "], 7, 1234, 0, \"allreduce\", [], []], \"input_types\": [\"GenericList[Tensor(float)]\", \"Int\", "
  "\"Int\", \"Int\", \"String\", \"GenericList[]\", \"GenericList[]\"], \"outputs\": [[" T(11, 262144) "]], "
  "\"output_types\": [\"GenericList[Tensor(float)]\"]}]}\n";

static void exec_sql(sqlite3 *db, const char *sql)
{
  char *msg = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
    g_error("%s: %s", sql, msg);
}

static gboolean kinds_setup(kinds_env *v)
{
  if (!g_getenv("WISP_BIN")) {
    g_test_skip("WISP_BIN not set (run through make check)");
    return FALSE;
  }
  v->dir = g_dir_make_tmp("wisp-kinds-XXXXXX", NULL);
  v->et = g_build_filename(v->dir, "et", NULL);
  g_assert_cmpint(g_mkdir(v->et, 0755), ==, 0);
  for (int r = 0; r < 2; r++) {
    char *p = g_strdup_printf("%s/job_%d.json", v->et, r);
    g_assert_true(g_file_set_contents(p, et_text, -1, NULL));
    g_free(p);
  }
  v->ns = g_build_filename(v->dir, "node.sqlite", NULL);
  sqlite3 *db = NULL;
  g_assert_cmpint(sqlite3_open(v->ns, &db), ==, SQLITE_OK);
  exec_sql(db, "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
               "INSERT INTO StringIds VALUES (1, 'volta_sgemm_128x64_nn'), "
               "(2, 'ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)');"
               "CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT, smCount INTEGER);"
               "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, "
               "streamId INTEGER, correlationId INTEGER, demangledName INTEGER, gridX INTEGER, gridY INTEGER, "
               "gridZ INTEGER);"
               "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER, "
               "streamId INTEGER, correlationId INTEGER, bytes INTEGER, copyKind INTEGER);");
  for (int d = 0; d < 2; d++) {
    int64_t t0 = 1000000000 + d * 7; /* a shared session clock, ns */
    char *sql = g_strdup_printf(
      "INSERT INTO TARGET_INFO_GPU VALUES (%d, 'NVIDIA H100 80GB HBM3', 132);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %d, 7, 1, 1, 132, 1, 1);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %d, 20, 2, 2, 8, 1, 1);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %d, 7, 3, 4096, 1);",
      d, t0, t0 + 100000, d, t0 + 120000, t0 + 170000, d, t0 + 100000, t0 + 110000, d);
    exec_sql(db, sql);
    g_free(sql);
  }
  sqlite3_close(db);
  return TRUE;
}

static void kinds_clear(kinds_env *v)
{
  test_rm_rf(v->dir);
  g_free(v->dir);
  g_free(v->et);
  g_free(v->ns);
}

/* Runs wisp in the test directory; the exit status, out and err (g_free). */
static int run(const kinds_env *v, const char *const *args, char **out, char **err)
{
  return test_wisp_run_in(v->dir, args, out, err);
}

static void must_contain(const char *text, const char *want)
{
  if (text == NULL || strstr(text, want) == NULL)
    g_error("expected '%s' in:\n%s", want, text ? text : "(nothing)");
}

static double jnum(const cJSON *o, const char *key)
{
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
  g_assert_true(cJSON_IsNumber(x));
  return x->valuedouble;
}

static cJSON *run_json(const kinds_env *v, const char *const *args)
{
  char *out = NULL, *err = NULL;
  int st = run(v, args, &out, &err);
  if (st != 0)
    g_error("%s exited %d:\n%s", args[0], st, err);
  cJSON *d = cJSON_Parse(out);
  g_assert_nonnull(d);
  g_free(out);
  g_free(err);
  return d;
}

static void test_et(void)
{
  kinds_env v;
  if (!kinds_setup(&v))
    return;
  char *out = NULL, *err = NULL;
  /* inspect: the bytes of the one all-reduce per rank, 262144 x 4. */
  g_assert_cmpint(run(&v, (const char *[]){"inspect", "et", NULL}, &out, &err), ==, 0);
  must_contain(out, "rank 0: 2 nodes, 1 collectives, 1048576 B");
  must_contain(out, "durations: unknown");
  g_free(out);
  g_free(err);
  /* convert: a Chakra set that inspect reads back with the same bytes. */
  g_assert_cmpint(run(&v, (const char *[]){"convert", "et", "-o", "conv", NULL}, &out, &err), ==, 0);
  must_contain(out, "wrote 2 ranks");
  g_free(out);
  g_free(err);
  g_assert_cmpint(run(&v, (const char *[]){"inspect", "conv", NULL}, &out, &err), ==, 0);
  must_contain(out, "1048576");
  g_free(out);
  g_free(err);
  /* metrics: no measured window in an execution trace alone: every key
   * n/a with the reason. */
  g_assert_cmpint(run(&v, (const char *[]){"metrics", "et", NULL}, &out, &err), ==, 0);
  must_contain(out, "every metric: n/a: a PyTorch execution trace alone records no timestamps or durations");
  g_free(out);
  g_free(err);
  /* simulate: compute takes 0 s, so the step is the all-reduce alone. */
  cJSON *d = run_json(&v, (const char *[]){"simulate", "et", "--network", "dgx-h100", "--json", "-", NULL});
  double step = jnum(d, "step_time_ns");
  g_assert_cmpfloat(step, >, 0);
  const cJSON *rk;
  cJSON_ArrayForEach(rk, cJSON_GetObjectItemCaseSensitive(d, "ranks"))
    g_assert_cmpfloat(jnum(rk, "compute_ns"), ==, 0);
  cJSON_Delete(d);
  /* utility: doubling the scale-up bandwidth cannot slow the step down. */
  d = run_json(&v, (const char *[]){"utility", "et", "--network", "dgx-h100", "--json", "-", NULL});
  const cJSON *res;
  gboolean seen = FALSE;
  cJSON_ArrayForEach(res, cJSON_GetObjectItemCaseSensitive(d, "resources"))
    if (strcmp(cJSON_GetObjectItemCaseSensitive(res, "resource")->valuestring, "scale_up_bw") == 0) {
      seen = TRUE;
      g_assert_cmpfloat(jnum(res, "step_time_2x_ns"), <=, step);
    }
  g_assert_true(seen);
  cJSON_Delete(d);
  /* sweep: two points; the faster NVLink is not slower. */
  char *spec = g_build_filename(v.dir, "sw.yaml", NULL);
  g_assert_true(g_file_set_contents(spec, "sweep_version: 1\nname: x\ncluster: dgx-h100\naxes:\n"
                                    "  - {key: scale_up_bw, values: [450GB/s, 900GB/s]}\n", -1, NULL));
  g_assert_cmpint(run(&v, (const char *[]){"sweep", spec, "-w", "et", "-o", "sw", "--jobs", "1", "--no-progress", NULL},
                      &out, &err), ==, 0);
  must_contain(out, "2 points (2 simulated");
  g_free(out);
  g_free(err);
  /* calibrate: nothing measured to fit. */
  g_assert_cmpint(run(&v, (const char *[]){"calibrate", "et", "--cluster", "dgx-h100", "-o", "cal.yaml", NULL}, &out,
                      &err), ==, 1);
  must_contain(err, "no communication kernel can be used for calibration");
  must_contain(err, "no measured duration");
  g_free(out);
  g_free(err);
  g_free(spec);
  kinds_clear(&v);
}

static void test_nsys(void)
{
  kinds_env v;
  if (!kinds_setup(&v))
    return;
  char *out = NULL, *err = NULL;
  g_assert_cmpint(run(&v, (const char *[]){"inspect", "node.sqlite", NULL}, &out, &err), ==, 0);
  must_contain(out, "rank(s) 0..1 (NVIDIA H100 80GB HBM3); 4 kernels (2 communication");
  must_contain(out, "2 memcpys (8192 B)");
  must_contain(out, "window 0.170 ms");
  g_free(out);
  g_free(err);
  g_assert_cmpint(run(&v, (const char *[]){"convert", "node.sqlite", "-o", "conv", NULL}, &out, &err), ==, 0);
  must_contain(out, "wrote 2 ranks");
  g_free(out);
  g_free(err);
  /* metrics: the values worked out at the top. */
  cJSON *d = run_json(&v, (const char *[]){"metrics", "node.sqlite", "--json", "-", NULL});
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(d, "measured");
  g_assert_cmpfloat(jnum(m, "avg_step_time_ns"), ==, 170000);
  g_assert_cmpfloat_with_epsilon(jnum(m, "average_memory_bandwidth_GBps"), 0.4096, 1e-4);
  g_assert_cmpfloat_with_epsilon(jnum(m, "mean_sm_coverage_pct"), (100 + 50 * 8.0 / 132) / 150 * 100, 1e-4);
  g_assert_cmpfloat(jnum(m, "moe_fraction_pct"), ==, 0);
  cJSON_Delete(d);
  /* simulate: the all-reduce has no size and replays as measured: 170 us. */
  d = run_json(&v, (const char *[]){"simulate", "node.sqlite", "--network", "dgx-h100", "--json", "-", NULL});
  g_assert_cmpfloat(jnum(d, "step_time_ns"), ==, 170000);
  g_assert_cmpfloat(jnum(d, "measured_step_ns"), ==, 170000);
  cJSON_Delete(d);
  /* utility: nothing responds to the network, so doubling gives 0 %. */
  d = run_json(&v, (const char *[]){"utility", "node.sqlite", "--network", "dgx-h100", "--json", "-", NULL});
  const cJSON *res;
  cJSON_ArrayForEach(res, cJSON_GetObjectItemCaseSensitive(d, "resources"))
    if (strcmp(cJSON_GetObjectItemCaseSensitive(res, "resource")->valuestring, "scale_up_bw") == 0)
      g_assert_cmpfloat(jnum(res, "utility_pct"), ==, 0);
  cJSON_Delete(d);
  char *spec = g_build_filename(v.dir, "sw.yaml", NULL);
  g_assert_true(g_file_set_contents(spec, "sweep_version: 1\nname: x\ncluster: dgx-h100\naxes:\n"
                                    "  - {key: scale_up_bw, values: [450GB/s, 900GB/s]}\n", -1, NULL));
  g_assert_cmpint(run(&v, (const char *[]){"sweep", spec, "-w", "node.sqlite", "-o", "sw", "--jobs", "1",
                                           "--no-progress", NULL}, &out, &err), ==, 0);
  must_contain(out, "base point simulated 0.170000 ms vs measured 0.170000 ms: error +0.00 %");
  g_free(out);
  g_free(err);
  g_assert_cmpint(run(&v, (const char *[]){"calibrate", "node.sqlite", "--cluster", "dgx-h100", "-o", "cal.yaml",
                                           NULL}, &out, &err), ==, 1);
  must_contain(err, "no communication kernel can be used for calibration");
  g_free(out);
  g_free(err);
  g_free(spec);
  kinds_clear(&v);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/input_kinds/pytorch_et", test_et);
  g_test_add_func("/input_kinds/nsys", test_nsys);
  return g_test_run();
}
