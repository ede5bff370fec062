/* test_levers_cli.c: the levers and several jobs through the `wisp`
 * binary: --slow-rank and --slow-ranks on simulate, utility and sweep, the
 * sweep keys, the straggler wait in the simulate table and JSON, and
 * `simulate --job`, each against hand-computed values.
 *
 * Workload (written as Chakra files): 4 ranks of data parallelism, L = 2
 * layers of a GEMM (Cg = 300 us) and an elementwise kernel (Ce = 100 us)
 * then an all-reduce of S = 8 MiB over the world, nothing overlapped.
 * Network: one switch of 4 at B = 100 GB/s, 1 us per link, the ideal
 * library, ring all-reduce:
 *   A = 2 (N - 1) (2 us + (S / N) / B) = 6 (2 us + 20.97152 us) = 137.82912 us
 *   T = L (Cg + Ce + A) = 2 x 537.82912 us = 1075.65824 us. */
#include "config.h"
#include "chakra/et_io.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "regress/test_util.h"

#define US SIM_PS_PER_US

static const char *switch4 =
  "schema_version: 1\nlibrary: {name: ideal}\nname: sw4\n"
  "dims:\n  - {name: net, kind: switch, size: 4, bandwidth: 100GB/s, latency: 1us}\n";

static const char *ft4 =
  "schema_version: 1\nlibrary: {name: ideal}\nname: ft4\nmodel: flow\n"
  "dims:\n  - {name: fabric, kind: fat_tree, size: 4, leaves: 2, spines: 1, oversubscription: 2,"
  " bandwidth: 100GB/s, latency: 1us}\n";

/* n ranks, `layers` x (gemm -> elementwise -> all-reduce of bytes), a
 * chain per rank; written to dir/prefix.<r>.et. */
static void write_dp(const char *dir, const char *prefix, int n, int layers, sim_time_ps cg, sim_time_ps ce,
                     uint64_t bytes)
{
  et_workload *w = et_workload_new(n, "dp");
  for (int r = 0; r < n; r++) {
    et_builder *b = et_builder_new("synthetic");
    uint64_t id = 0;
    for (int l = 0; l < layers; l++) {
      const sim_time_ps d[2] = {cg, ce};
      const char *names[2] = {"sm90_xmma_gemm", "vectorized_elementwise_kernel"};
      for (int k = 0; k < 2; k++) {
        if (d[k] == 0)
          continue;
        uint32_t x = et_builder_add_node(b, ++id, ET_NODE_COMP, names[k], d[k], 0);
        if (id > 1)
          et_builder_add_dep(b, x, id - 1, TRUE, FALSE);
      }
      uint32_t x = et_builder_add_node(b, ++id, ET_NODE_COMM_COLL, "all_reduce", 0, 0);
      et_comm c = {.bytes = bytes, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = -1, .dst = -1, .tag = -1,
                   .root = -1, .coll = ET_COLL_ALL_REDUCE};
      et_builder_set_comm(b, x, &c, NULL, NULL, 0);
      if (id > 1)
        et_builder_add_dep(b, x, id - 1, TRUE, FALSE);
    }
    GError *e = NULL;
    w->ranks[r] = et_builder_finish(b, 0, &e);
    g_assert_no_error(e);
  }
  GError *e = NULL;
  g_assert_true(et_workload_resolve_groups(w, &e));
  g_assert_true(et_workload_write(w, dir, prefix, &e));
  g_assert_no_error(e);
  et_workload_free(w);
}

typedef struct {
  char *dir, *wl, *net, *ft;
} env;

static gboolean setup(env *v)
{
  if (g_getenv("WISP_BIN") == NULL) {
    g_test_skip("WISP_BIN not set (run through make check)");
    return FALSE;
  }
  v->dir = g_dir_make_tmp("wisp-levers-XXXXXX", NULL);
  write_dp(v->dir, "dp", 4, 2, 300 * US, 100 * US, 8ull << 20);
  v->wl = g_build_filename(v->dir, "dp", NULL);
  v->net = g_build_filename(v->dir, "sw4.yaml", NULL);
  v->ft = g_build_filename(v->dir, "ft4.yaml", NULL);
  g_assert_true(g_file_set_contents(v->net, switch4, -1, NULL));
  g_assert_true(g_file_set_contents(v->ft, ft4, -1, NULL));
  return TRUE;
}

static void teardown(env *v)
{
  test_rm_rf(v->dir);
  g_free(v->dir), g_free(v->wl), g_free(v->net), g_free(v->ft);
}

static double num(const cJSON *o, const char *k)
{
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
  g_assert_nonnull(x);
  return x->valuedouble;
}

static const double A_us = 6 * (2 + 20.97152), T_us = 2 * (400 + 6 * (2 + 20.97152));

/* simulate --slow-rank 2=1.2: T_s = L (1.2 (Cg + Ce) + A) = T + 160 us;
 * ranks 0, 1, 3 wait 80 us in each of the 2 all-reduces (160 us), rank 2
 * waits 0 and issues last in both.  The table's straggler_wait_ms column
 * shows 0.160 ms on rank 0. */
static void test_simulate_slow_rank(void)
{
  env v;
  if (!setup(&v))
    return;
  char *json = g_build_filename(v.dir, "s.json", NULL), *out = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){"simulate", v.wl, "--network", v.net, "--algo", "ring",
                                                  "--slow-rank", "2=1.2", "--json", json, NULL}, &out), ==, 0);
  cJSON *r = load_json(json);
  g_test_message("step %.3f ns, expect %.3f", num(r, "step_time_ns"), (T_us + 160) * 1e3);
  g_assert_cmpfloat(fabs(num(r, "step_time_ns") - (T_us + 160) * 1e3), <, 1e-3);
  const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(r, "ranks");
  for (int k = 0; k < 4; k++) {
    const cJSON *x = cJSON_GetArrayItem(ranks, k);
    /* Nothing runs beside the all-reduces: every wait is exposed, so the
     * exposed straggler wait equals the collective wait. */
    g_assert_cmpfloat(num(x, "straggler_wait_ns"), ==, k == 2 ? 0.0 : 160000.0);
    g_assert_cmpfloat(num(x, "collective_wait_ns"), ==, k == 2 ? 0.0 : 160000.0);
    g_assert_cmpfloat(num(x, "collectives"), ==, 2);
    g_assert_cmpfloat(num(x, "last_arrivals"), ==, k == 2 ? 2 : 0);
  }
  g_assert_cmpfloat(num(cJSON_GetArrayItem(ranks, 2), "compute_factor"), ==, 1.2);
  g_assert_nonnull(strstr(out, "straggler_wait_ms"));
  g_assert_nonnull(strstr(out, "collective wait: ranks waited 0.480000 ms in all"));
  g_assert_nonnull(strstr(out, "rank 2 issued last in 2 of its 2 collectives"));
  cJSON_Delete(r);
  g_free(out);
  /* Errors: a rank outside the workload, a bad spelling. */
  char *err = NULL;
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"simulate", v.wl, "--network", v.net, "--slow-rank", "4=2",
                                                         NULL}, NULL, &err), ==, 1);
  g_assert_nonnull(strstr(err, "slow rank 4=2: the workload has ranks 0 to 3 only"));
  g_free(err);
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"simulate", v.wl, "--network", v.net, "--slow-ranks",
                                                         "normal:sigma=1", NULL}, NULL, &err), ==, 2);
  g_assert_nonnull(strstr(err, "--slow-ranks: slow ranks 'normal:sigma=1': give lognormal:sigma=S"));
  g_free(err);
  g_free(json);
  teardown(&v);
}

/* utility --resource compute,host with a straggler on every run: the
 * baseline is T_s = T + 160 us (above); compute 2x halves every kernel,
 * the straggler's too, so each layer lasts 1.2 x (Cg + Ce) / 2 + A =
 * 240 us + A and T_2x = 2 (240 us + A); host: the workload has no CPU
 * node, so the row is not applicable (no T_2x, no utility), not 0 %. */
static void test_utility_levers_cli(void)
{
  env v;
  if (!setup(&v))
    return;
  char *json = g_build_filename(v.dir, "u.json", NULL), *out = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){"utility", v.wl, "--cluster", v.net, "--algo", "ring",
                                                  "--resource", "compute,host", "--slow-rank", "2=1.2", "--json",
                                                  json, NULL}, &out), ==, 0);
  cJSON *u = load_json(json);
  g_assert_cmpfloat(fabs(num(u, "baseline_step_ns") - (T_us + 160) * 1e3), <, 1e-3);
  const cJSON *res = cJSON_GetObjectItemCaseSensitive(u, "resources");
  const double t2x[1] = {2 * (240 + A_us) * 1e3};
  const cJSON *h = cJSON_GetArrayItem(res, 1);
  g_assert_cmpstr(cJSON_GetObjectItemCaseSensitive(h, "resource")->valuestring, ==, "host");
  g_assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(h, "applicable")));
  g_assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(h, "utility_pct")));
  g_assert_nonnull(strstr(out, "not applicable: the workload has no host/CPU nodes to halve"));
  for (int k = 0; k < 1; k++) {
    const cJSON *x = cJSON_GetArrayItem(res, k);
    g_test_message("%s: T_2x %.3f ns, expect %.3f", cJSON_GetObjectItemCaseSensitive(x, "resource")->valuestring,
                   num(x, "step_time_2x_ns"), t2x[k]);
    g_assert_cmpfloat(fabs(num(x, "step_time_2x_ns") - t2x[k]), <, 1e-3);
    g_assert_cmpfloat(fabs(num(x, "utility_pct") - 100.0 * ((T_us + 160) * 1e3 - t2x[k]) / ((T_us + 160) * 1e3)),
                      <, 1e-6);
  }
  g_assert_nonnull(strstr(out, "compute x2 faster"));
  cJSON_Delete(u);
  g_free(out);
  g_free(json);
  teardown(&v);
}

/* A sweep over the straggler and the compute speedup (grid, 4 points):
 *   slow_rank none, compute 1: T              = 1075.65824 us
 *   slow_rank none, compute 2: 2 (200 + A)    =  675.65824 us
 *   slow_rank 2=1.2, compute 1: T + 160 us    = 1235.65824 us
 *   slow_rank 2=1.2, compute 2x: 2 (240 + A)  =  755.65824 us */
static void test_sweep_axes(void)
{
  env v;
  if (!setup(&v))
    return;
  char *spec = g_build_filename(v.dir, "s.yaml", NULL), *outd = g_build_filename(v.dir, "out", NULL);
  char *text = g_strdup_printf("sweep_version: 1\nname: strag\nworkload: dp\ncluster: sw4.yaml\nset: {algo: ring}\n"
                               "axes:\n  - {key: slow_rank, values: [none, \"2=1.2\"]}\n"
                               "  - {key: compute, values: [1, 2x]}\n");
  g_assert_true(g_file_set_contents(spec, text, -1, NULL));
  g_assert_cmpint(test_wisp_run((const char *[]){"sweep", spec, "-o", outd, "--jobs", "1", "--no-progress", NULL}, NULL),
                  ==, 0);
  char *jl = g_build_filename(outd, "strag.jsonl", NULL), *lines = NULL;
  g_assert_true(g_file_get_contents(jl, &lines, NULL, NULL));
  char **ls = g_strsplit(lines, "\n", -1);
  const double expect[4] = {T_us, 2 * (200 + A_us), T_us + 160, 2 * (240 + A_us)};
  for (int p = 0; p < 4; p++) {
    cJSON *x = cJSON_Parse(ls[p]);
    g_assert_nonnull(x);
    g_test_message("point %d: %.3f ns, expect %.3f", p, num(x, "step_time_ns"), expect[p] * 1e3);
    g_assert_cmpfloat(fabs(num(x, "step_time_ns") - expect[p] * 1e3), <, 1e-3);
    cJSON_Delete(x);
  }
  g_strfreev(ls);
  g_free(lines);
  /* The whole sweep with --slow-rank: every point gets the straggler. */
  char *outd2 = g_build_filename(v.dir, "out2", NULL);
  g_assert_true(g_file_set_contents(spec, "sweep_version: 1\nname: c\nworkload: dp\ncluster: sw4.yaml\n"
                                    "set: {algo: ring}\naxes:\n  - {key: \"compute:gemm\", values: [1, 3]}\n", -1,
                                    NULL));
  g_assert_cmpint(test_wisp_run((const char *[]){"sweep", spec, "-o", outd2, "--jobs", "1", "--no-progress",
                                                  "--slow-rank", "2=1.2", NULL}, NULL), ==, 0);
  char *jl2 = g_build_filename(outd2, "c.jsonl", NULL);
  g_assert_true(g_file_get_contents(jl2, &lines, NULL, NULL));
  ls = g_strsplit(lines, "\n", -1);
  /* gemm 3x faster on a straggler: per layer 1.2 (100 + 100) us + A. */
  const double e2[2] = {T_us + 160, 2 * (240 + A_us)};
  for (int p = 0; p < 2; p++) {
    cJSON *x = cJSON_Parse(ls[p]);
    g_test_message("compute:gemm point %d: %.3f ns, expect %.3f", p, num(x, "step_time_ns"), e2[p] * 1e3);
    g_assert_cmpfloat(fabs(num(x, "step_time_ns") - e2[p] * 1e3), <, 1e-3);
    cJSON_Delete(x);
  }
  g_strfreev(ls);
  g_free(lines);
  g_free(jl), g_free(jl2), g_free(text), g_free(spec), g_free(outd), g_free(outd2);
  teardown(&v);
}

/* simulate --job: the interleaved case of test_jobs.c through the binary
 * (flow tier, alone 1.008 ms, together 2.008 ms, slowdown 1000 / 1008). */
static void test_simulate_jobs(void)
{
  env v;
  if (!setup(&v))
    return;
  write_dp(v.dir, "pair", 2, 1, 0, 0, 100000000);
  char *pair = g_build_filename(v.dir, "pair", NULL), *json = g_build_filename(v.dir, "j.json", NULL), *out = NULL;
  char *ja = g_strdup_printf("train=%s@0,2", pair), *jb = g_strdup_printf("%s@1-3:2", pair);
  g_assert_cmpint(test_wisp_run((const char *[]){"simulate", "--job", ja, "--job", jb, "--network", v.ft, "--algo",
                                                  "ring", "--json", json, NULL}, &out), ==, 0);
  cJSON *r = load_json(json);
  const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(r, "jobs");
  g_assert_cmpint(cJSON_GetArraySize(jobs), ==, 2);
  static const char *const names[2] = {"train", "B"};
  for (int k = 0; k < 2; k++) {
    const cJSON *x = cJSON_GetArrayItem(jobs, k);
    g_assert_cmpstr(cJSON_GetObjectItemCaseSensitive(x, "name")->valuestring, ==, names[k]);
    g_assert_cmpfloat(num(x, "step_alone_ns"), ==, 1008000.0);
    g_assert_cmpfloat(num(x, "step_together_ns"), ==, 2008000.0);
    g_assert_cmpfloat(fabs(num(x, "slowdown_pct") - 100.0 * 1000 / 1008), <, 1e-5);
    g_assert_cmpint(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(x, "placement")), ==, 2);
  }
  g_assert_cmpfloat(num(r, "step_time_ns"), ==, 2008000.0);
  g_assert_nonnull(strstr(out, "2 jobs on one fabric"));
  cJSON_Delete(r);
  g_free(out);
  /* Overlapping placements and a WORKLOAD beside --job are refused. */
  char *err = NULL;
  char *jc = g_strdup_printf("%s@2,3", pair);
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"simulate", "--job", ja, "--job", jc, "--network", v.ft,
                                                         NULL}, NULL, &err), ==, 1);
  g_assert_nonnull(strstr(err, "jobs train and B are both placed on cluster rank 2"));
  g_free(err);
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"simulate", pair, "--job", ja, "--network", v.ft, NULL},
                                   NULL, &err), ==, 2);
  g_assert_nonnull(strstr(err, "no WORKLOAD argument"));
  g_free(err);
  g_free(pair), g_free(json), g_free(ja), g_free(jb), g_free(jc);
  teardown(&v);
}

/* examples/multi-job/run.sh runs (it is part of the documentation): the
 * contiguous placement shares no link (slowdown 0 on both models, the
 * jobs on disjoint leaf pairs), the interleaved one slows both jobs. */
static void test_example_script(void)
{
  const char *src = g_getenv("G_TEST_SRCDIR"), *bin = g_getenv("WISP_BIN");
  if (src == NULL || bin == NULL) {
    g_test_skip("G_TEST_SRCDIR or WISP_BIN not set (run through make check)");
    return;
  }
  char *dir = g_dir_make_tmp("wisp-multijob-XXXXXX", NULL), *script = g_build_filename(src, "examples", "multi-job",
                                                                                         "run.sh", NULL);
  char **envp = g_environ_setenv(g_get_environ(), "WISP_DEMO_DIR", dir, TRUE);
  char *argv[] = {(char *)"sh", script, (char *)bin, NULL}, *out = NULL;
  int status = 1;
  g_assert_true(g_spawn_sync(NULL, argv, envp, G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out,
                             NULL, &status, NULL));
  g_test_message("%s", out);
  g_assert_true(g_spawn_check_wait_status(status, NULL));
  char **blocks = g_strsplit(out, "== ", -1);
  int seen = 0;
  for (char **b = blocks; *b; b++) {
    if (!g_str_has_prefix(*b, "contiguous") && !g_str_has_prefix(*b, "interleaved"))
      continue;
    seen++;
    gboolean contiguous = g_str_has_prefix(*b, "contiguous");
    char **lines = g_strsplit(*b, "\n", -1);
    for (char **p = lines; *p; p++) {
      if (!g_str_has_prefix(*p, "A ") && !g_str_has_prefix(*p, "B "))
        continue;
      double alone, together, slow;
      g_assert_cmpint(sscanf(*p + 1, "%*d %*s %lf %lf %lf", &alone, &together, &slow), ==, 3);
      if (contiguous)
        g_assert_cmpfloat(slow, ==, 0.0);
      else
        g_assert_cmpfloat(slow, >, 10.0);
    }
    g_strfreev(lines);
  }
  g_assert_cmpint(seen, ==, 4);
  g_strfreev(blocks);
  g_strfreev(envp);
  test_rm_rf(dir);
  g_free(dir), g_free(script), g_free(out);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/levers_cli/simulate_slow_rank", test_simulate_slow_rank);
  g_test_add_func("/levers_cli/utility", test_utility_levers_cli);
  g_test_add_func("/levers_cli/sweep_axes", test_sweep_axes);
  g_test_add_func("/levers_cli/simulate_jobs", test_simulate_jobs);
  g_test_add_func("/levers_cli/example_script", test_example_script);
  return g_test_run();
}
