/* test_consistency_cli.c: issue 17's command-line items through the `wisp`
 * binary ($WISP_BIN): the network-model flag (item 2), sweep errors (9),
 * help texts (10), SVG charts (11) and terminal numbers (12).  Workloads:
 * the bundled example (examples/make_example, 16 ranks) on
 * examples/cluster-2node.yaml, a one-kernel Kineto trace written here, and
 * two ground-truth traces (regress/gt_model.c) for diff.
 */
#include "config.h"
#include <cjson/cJSON.h>

#include "regress/gt_model.h"
#include "regress/test_util.h"

#include <math.h>
#include <string.h>
#include <sys/stat.h>

typedef test_example_env env;

static int wisp_in(const char *cwd, const char *const *args, char **out, char **err)
{
  return test_wisp_run_in(cwd, args, out, err);
}

static gboolean setup(env *v)
{
  return test_example_setup(v, "wisp-ux-XXXXXX");
}

static void teardown(env *v)
{
  test_example_teardown(v);
}

static cJSON *read_json(const char *path)
{
  char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  cJSON *j = cJSON_Parse(text);
  g_assert_nonnull(j);
  g_free(text);
  return j;
}

static char *write_spec(const char *dir, const char *name, const char *workload, const char *cluster,
                        const char *body)
{
  char *path = g_strdup_printf("%s/%s.yaml", dir, name);
  char *text = g_strdup_printf("sweep_version: 1\nname: %s\nworkload: %s\ncluster: %s\n%s", name, workload, cluster,
                               body);
  g_assert_true(g_file_set_contents(path, text, -1, NULL));
  g_free(text);
  return path;
}

/* ---- item 2: one network-model flag ---- */

/* Every command with a tier choice takes --network-model, with --tier as an
 * alias, the same two values and the same message for any other value. */
static void test_network_model(void)
{
  env v;
  if (!setup(&v))
    return;
  char *spec = write_spec(v.dir, "nm", v.example, v.cluster, "axes:\n  - {key: scale_out_bw, values: [25GB/s]}\n");
  char *cal = g_build_filename(v.dir, "cal.yaml", NULL);
  const char *cmds[][8] = {
    {"simulate", v.example, "--network", v.cluster, NULL},
    {"utility", v.example, "--cluster", v.cluster, NULL},
    {"collbench", "--network", v.cluster, NULL},
    {"sweep", spec, NULL},
    {"calibrate", v.example, "-o", cal, NULL},
  };
  for (guint c = 0; c < G_N_ELEMENTS(cmds); c++)
    for (int alias = 0; alias < 2; alias++) {
      GPtrArray *a = g_ptr_array_new();
      for (int i = 0; cmds[c][i]; i++)
        g_ptr_array_add(a, (gpointer)cmds[c][i]);
      g_ptr_array_add(a, (gpointer)(alias ? "--tier" : "--network-model"));
      g_ptr_array_add(a, (gpointer)"quantum");
      g_ptr_array_add(a, NULL);
      char *err = NULL;
      g_assert_cmpint(wisp_in(v.dir, (const char *const *)a->pdata, NULL, &err), ==, 2);
      char *want = g_strdup_printf("wisp %s: unknown --network-model 'quantum' (use analytical or flow)\n", cmds[c][0]);
      g_assert_cmpstr(err, ==, want);
      g_free(want), g_free(err);
      g_ptr_array_free(a, TRUE);
    }

  /* Both spellings select the tier: collbench's header and simulate's report. */
  for (int alias = 0; alias < 2; alias++) {
    char *out = NULL;
    g_assert_cmpint(wisp_in(v.dir, (const char *[]){"collbench", "--network", v.cluster, "--sizes", "1M",
                                                    alias ? "--tier" : "--network-model", "flow", NULL}, &out, NULL),
                    ==, 0);
    g_assert_nonnull(strstr(out, ", tier flow, "));
    g_free(out);
    char *json = g_build_filename(v.dir, "r.json", NULL);
    g_assert_cmpint(wisp_in(v.dir, (const char *[]){"simulate", v.example, "--network", v.cluster, "--json", json,
                                                    alias ? "--tier" : "--network-model", "flow", NULL}, NULL, NULL),
                    ==, 0);
    cJSON *r = read_json(json);
    const cJSON *net = cJSON_GetObjectItemCaseSensitive(r, "network");
    g_assert_cmpstr(cJSON_GetObjectItemCaseSensitive(net, "tier")->valuestring, ==, "flow");
    cJSON_Delete(r);
    g_free(json);
  }

  /* sweep --network-model flow replays every point on the flow tier: its
   * step time equals simulate's on the same config and tier. */
  char *out = NULL, *rjson = g_build_filename(v.dir, "f.json", NULL), *sdir = g_build_filename(v.dir, "sw", NULL);
  g_assert_cmpint(wisp_in(v.dir, (const char *[]){"sweep", spec, "-o", sdir, "--jobs", "1", "--network-model", "flow", NULL},
                          &out, NULL), ==, 0);
  g_assert_cmpint(wisp_in(v.dir, (const char *[]){"simulate", v.example, "--network", v.cluster, "--network-model",
                                                  "flow", "--json", rjson, NULL}, NULL, NULL), ==, 0);
  cJSON *r = read_json(rjson);
  char *jl = g_build_filename(sdir, "nm.jsonl", NULL);
  cJSON *p = read_json(jl);
  g_assert_cmpfloat(cJSON_GetObjectItemCaseSensitive(p, "step_time_ns")->valuedouble, ==,
                    cJSON_GetObjectItemCaseSensitive(r, "step_time_ns")->valuedouble);
  cJSON_Delete(r), cJSON_Delete(p);
  g_free(jl), g_free(out), g_free(rjson), g_free(sdir), g_free(spec), g_free(cal);
  teardown(&v);
}

/* ---- item 9: sweep errors ---- */

/* A point in error prints its reason on the terminal; a sweep where no
 * point finished lists no chart (and writes none).  A bad value alone
 * (0GB/s) is caught before any point runs (test_spec_check_cli); a
 * cluster of 8 ranks for the 16-rank workload fails only when its point
 * runs. */
static void test_sweep_errors(void)
{
  env v;
  if (!setup(&v))
    return;
  char *spec = write_spec(v.dir, "some", v.example, v.cluster,
                          "base: first\naxes:\n  - {key: ranks, values: [16, 8]}\n");
  char *out = NULL, *err = NULL, *sdir = g_build_filename(v.dir, "sw", NULL);
  g_assert_cmpint(wisp_in(v.dir, (const char *[]){"sweep", spec, "-o", sdir, "--jobs", "1", NULL}, &out, &err), ==, 1);
  char *want = g_strdup("wisp sweep: point 1 (ranks=8): error: the cluster places 8 ranks but the workload has 16");
  g_assert_nonnull(strstr(err, want));
  g_assert_nonnull(strstr(out, "1 in error"));
  g_assert_nonnull(strstr(out, "some.svg\n")); /* one point finished: its chart is listed */
  char *svg = NULL, *svg_path = g_build_filename(sdir, "some.svg", NULL);
  g_assert_true(g_file_get_contents(svg_path, &svg, NULL, NULL));
  g_assert_nonnull(strstr(svg, "<title>some: simulated step time (1 point in error not drawn)</title>"));
  g_free(svg), g_free(svg_path);
  g_free(want), g_free(out), g_free(err);

  char *all = write_spec(v.dir, "none", v.example, v.cluster,
                         "base:\n  scale_up_bw: 300GB/s\naxes:\n  - {key: ranks, values: [8, 4]}\n");
  g_assert_cmpint(wisp_in(v.dir, (const char *[]){"sweep", all, "-o", sdir, "--jobs", "1", NULL}, &out, &err), ==, 1);
  g_assert_nonnull(strstr(err, "wisp sweep: point 0 (ranks=8): error: "));
  g_assert_nonnull(strstr(err, "wisp sweep: point 1 (ranks=4): error: "));
  g_assert_null(strstr(out, ".svg"));
  g_assert_nonnull(strstr(out, "  (no chart: no point finished)\n"));
  svg = g_build_filename(sdir, "none.svg", NULL);
  g_assert_false(g_file_test(svg, G_FILE_TEST_EXISTS));
  g_free(svg), g_free(out), g_free(err), g_free(spec), g_free(all), g_free(sdir);
  teardown(&v);
}

/* ---- item 10: help ---- */

static void test_help(void)
{
  const char *src = g_getenv("G_TEST_SRCDIR");
  if (!g_getenv("WISP_BIN") || !src) {
    g_test_skip("WISP_BIN or G_TEST_SRCDIR not set (run through make check)");
    return;
  }
  char *out = NULL;
  g_assert_cmpint(wisp_in(NULL, (const char *[]){"--help", NULL}, &out, NULL), ==, 0);
  g_assert_nonnull(strstr(out, "in a source tree, `man -l doc/wisp.1` and `man -l doc/wisp-COMMAND.1`"));
  g_free(out);
  /* The pages it names exist in the source tree. */
  static const char *const pages[] = {"wisp", "wisp-inspect", "wisp-convert", "wisp-simulate", "wisp-utility",
                                      "wisp-sweep", "wisp-sweep-merge", "wisp-diff", "wisp-calibrate", "wisp-topo",
                                      "wisp-collbench", "wisp-metrics", "wisp-search"};
  for (guint i = 0; i < G_N_ELEMENTS(pages); i++) {
    char *p = g_strdup_printf("%s/doc/%s.1", src, pages[i]);
    g_assert_true(g_file_test(p, G_FILE_TEST_IS_REGULAR));
    g_free(p);
  }
  /* inspect and convert read Kineto and XLA, and their help says so. */
  g_assert_cmpint(wisp_in(NULL, (const char *[]){"inspect", "--help", NULL}, &out, NULL), ==, 0);
  g_assert_nonnull(strstr(out, "inspect [OPTION?] TRACE... - summarize profiler traces (Kineto or XLA)\n"));
  g_assert_nonnull(strstr(out, "XLA profiles (options: `wisp inspect PROFILE --help`)"));
  g_free(out);
  g_assert_cmpint(wisp_in(NULL, (const char *[]){"convert", "--help", NULL}, &out, NULL), ==, 0);
  g_assert_nonnull(strstr(out, "convert [OPTION?] TRACE... -o DIR - convert profiler traces (Kineto or XLA) to Chakra ET\n"));
  g_assert_nonnull(strstr(out, "`wisp convert PROFILE --help`"));
  g_free(out);
  /* Every command with a tier choice lists --network-model. */
  static const char *const tiered[] = {"simulate", "utility", "calibrate", "collbench", "sweep"};
  for (guint i = 0; i < G_N_ELEMENTS(tiered); i++) {
    g_assert_cmpint(wisp_in(NULL, (const char *[]){tiered[i], "--help", NULL}, &out, NULL), ==, 0);
    g_assert_nonnull(strstr(out, "--network-model=MODEL"));
    g_free(out);
  }

  /* quickstart.sh: an unknown action prints the usage before installing or
   * building anything (the build directory it would use is not created). */
  char *tmp = g_dir_make_tmp("wisp-qs-XXXXXX", NULL), *build = g_build_filename(tmp, "build", NULL);
  char *script = g_build_filename(src, "scripts", "quickstart.sh", NULL);
  char **envp = g_environ_setenv(g_get_environ(), "WISP_BUILD_DIR", build, TRUE);
  char *argv[] = {(char *)"sh", script, (char *)"bogus", NULL};
  char *err = NULL;
  int status = 0;
  g_assert_true(g_spawn_sync(NULL, argv, envp, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err, &status, NULL));
  g_assert_true(WIFEXITED(status));
  g_assert_cmpint(WEXITSTATUS(status), ==, 2);
  g_assert_cmpstr(out, ==, "");
  g_assert_cmpstr(err, ==, "usage: scripts/quickstart.sh demo|check\n");
  g_assert_false(g_file_test(build, G_FILE_TEST_EXISTS));
  g_strfreev(envp);
  g_free(out), g_free(err), g_free(script), g_free(build);
  test_rm_rf(tmp);
  g_free(tmp);
}

/* ---- item 11: charts ---- */

/* x of every <text> in svg whose content is label, in document order. */
static double text_x(const char *svg, const char *label)
{
  char *needle = g_strdup_printf("font-size=\"11\">%s</text>", label);
  const char *hit = strstr(svg, needle);
  g_free(needle);
  g_assert_nonnull(hit);
  const char *start = hit;
  while (start > svg && strncmp(start, "<text x=\"", 9) != 0)
    start--;
  return g_ascii_strtod(start + 9, NULL);
}

static int count(const char *hay, const char *needle)
{
  int n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
    n++;
  return n;
}

static void test_charts(void)
{
  env v;
  if (!setup(&v))
    return;
  char *sdir = g_build_filename(v.dir, "sw", NULL), *svg = NULL, *path;

  /* Bandwidths spanning 1000x: a log axis, so each decade is the same
   * width: x(0.5) - x(0.05) = x(5) - x(0.5), and 25 GB/s sits log10(5) of a
   * decade past 5 GB/s.  ring and direct give the same step (the two lines
   * coincide): they differ in dash pattern and marker. */
  char *spec = write_spec(v.dir, "bw", v.example, v.cluster,
                          "axes:\n  - {key: scale_out_bw, values: [0.05GB/s, 0.5GB/s, 5GB/s, 25GB/s, 50GB/s]}\n"
                          "  - {key: algo, values: [ring, direct]}\n");
  g_assert_cmpint(wisp_in(v.dir, (const char *[]){"sweep", spec, "-o", sdir, "--jobs", "1", NULL}, NULL, NULL), ==, 0);
  path = g_build_filename(sdir, "bw.svg", NULL);
  g_assert_true(g_file_get_contents(path, &svg, NULL, NULL));
  g_free(path);
  g_assert_nonnull(strstr(svg, ">scale_out_bw (log scale)</text>"));
  double x1 = text_x(svg, "0.05GB/s"), x2 = text_x(svg, "0.5GB/s"), x3 = text_x(svg, "5GB/s"),
         x4 = text_x(svg, "25GB/s"), x5 = text_x(svg, "50GB/s");
  double decade = x2 - x1;
  g_test_message("log axis: x = %.3f %.3f %.3f %.3f %.3f", x1, x2, x3, x4, x5);
  g_assert_cmpfloat(decade, >, 0);
  g_assert_cmpfloat(fabs((x3 - x2) - decade), <, 1e-3);
  g_assert_cmpfloat(fabs((x4 - x3) - log10(5.0) * decade), <, 1e-3);
  g_assert_cmpfloat(fabs((x5 - x3) - decade), <, 1e-3);
  g_assert_cmpint(count(svg, "<polyline"), ==, 2);
  g_assert_cmpint(count(svg, "stroke-dasharray=\"8,4\""), ==, 2); /* the second line and its legend sample */
  g_assert_cmpint(count(svg, "<circle"), ==, 5 + 1);              /* series 0's markers and legend marker */
  g_assert_cmpint(count(svg, "height=\"7\" fill=\"none\" stroke=\"#ff7f0e\""), ==, 5 + 1); /* series 1: open squares */
  /* The y unit fits the largest step: from the CSV, >= 1000 ms reads in s. */
  char *csv = NULL;
  path = g_build_filename(sdir, "bw.csv", NULL);
  g_assert_true(g_file_get_contents(path, &csv, NULL, NULL));
  g_free(path);
  double max_ns = 0;
  char **lines = g_strsplit(csv, "\n", -1);
  for (char **l = lines + 1; *l && **l; l++) {
    char **f = g_strsplit(*l, ",", -1);
    max_ns = fmax(max_ns, g_ascii_strtod(f[4], NULL)); /* point,label,scale_out_bw,algo,step_time_ns */
    g_strfreev(f);
  }
  g_strfreev(lines);
  g_test_message("largest step %.3f ms", max_ns / 1e6);
  g_assert_cmpfloat(max_ns, >=, 1e9);
  g_assert_nonnull(strstr(svg, ">step time (s)</text>"));
  g_free(csv), g_free(svg), g_free(spec);

  /* 10, 20 and 40 GB/s span 4x: linear, spaced by value. */
  spec = write_spec(v.dir, "lin", v.example, v.cluster, "axes:\n  - {key: scale_out_bw, values: [10GB/s, 20GB/s, 40GB/s]}\n");
  g_assert_cmpint(wisp_in(v.dir, (const char *[]){"sweep", spec, "-o", sdir, "--jobs", "1", NULL}, NULL, NULL), ==, 0);
  path = g_build_filename(sdir, "lin.svg", NULL);
  g_assert_true(g_file_get_contents(path, &svg, NULL, NULL));
  g_free(path);
  g_assert_null(strstr(svg, "log scale"));
  x1 = text_x(svg, "10GB/s"), x2 = text_x(svg, "20GB/s"), x3 = text_x(svg, "40GB/s");
  g_assert_cmpfloat(fabs((x3 - x2) - 2 * (x2 - x1)), <, 1e-3);
  g_assert_nonnull(strstr(svg, ">step time (ms)</text>"));
  g_free(svg), g_free(spec);

  /* utility: ici_bw does not apply to cluster-2node (no torus); its bar is
   * shown as n/a, not dropped. */
  char *u = g_build_filename(v.dir, "u.svg", NULL), *uj = g_build_filename(v.dir, "u.json", NULL);
  g_assert_cmpint(wisp_in(v.dir, (const char *[]){"utility", v.example, "--cluster", v.cluster, "--svg", u, "--json", uj,
                                                  NULL}, NULL, NULL), ==, 0);
  g_assert_true(g_file_get_contents(u, &svg, NULL, NULL));
  cJSON *j = read_json(uj);
  const cJSON *row;
  int n_rows = 0, n_na = 0;
  cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(j, "resources")) {
    const char *res = cJSON_GetObjectItemCaseSensitive(row, "resource")->valuestring;
    char *lab = g_strdup_printf(">%s</text>", res);
    g_assert_nonnull(strstr(svg, lab)); /* every resource has its place on the chart */
    g_free(lab);
    n_rows++;
    n_na += !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(row, "applicable"));
  }
  g_assert_cmpint(n_rows, ==, 5);
  g_assert_cmpint(n_na, ==, 1);
  g_assert_cmpint(count(svg, "font-style=\"italic\">n/a</text>"), ==, n_na);
  cJSON_Delete(j);
  g_free(svg);

  /* All-zero bars: one rank, one kernel, no communication.  Every utility
   * is exactly 0 and the chart says why. */
  char *kdir = g_build_filename(v.dir, "k1", NULL);
  g_assert_cmpint(g_mkdir(kdir, 0755), ==, 0);
  char *kf = g_build_filename(kdir, "rank0.json", NULL);
  g_assert_true(g_file_set_contents(kf, "{\"distributedInfo\": {\"rank\": 0, \"world_size\": 1}, \"traceEvents\": ["
                                        "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, "
                                        "\"ts\": 100, \"dur\": 50, \"args\": {\"stream\": 7}}]}", -1, NULL));
  g_assert_cmpint(wisp_in(v.dir, (const char *[]){"utility", kdir, "--cluster", "dgx-h100", "--svg", u, "--json", uj,
                                                  NULL}, NULL, NULL), ==, 0);
  j = read_json(uj);
  cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(j, "resources"))
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(row, "applicable")))
      g_assert_cmpfloat(cJSON_GetObjectItemCaseSensitive(row, "utility_pct")->valuedouble, ==, 0.0);
  cJSON_Delete(j);
  g_assert_true(g_file_get_contents(u, &svg, NULL, NULL));
  g_assert_nonnull(strstr(svg, ">every utility is 0 %: the step is bound by GPU compute: 100.0 % of the critical "
                               "path (rank 0)</text>"));
  g_free(svg), g_free(kf), g_free(kdir), g_free(u), g_free(uj), g_free(sdir);
  teardown(&v);
}

/* ---- item 12: numbers in the terminal ---- */

/* The simulate table is in ms with 3 decimals for a 91 ms step (five
 * significant digits), and its numbers are the JSON's ns / 10^6. */
static void test_simulate_ms(void)
{
  env v;
  if (!setup(&v))
    return;
  char *json = g_build_filename(v.dir, "a.json", NULL), *out = NULL;
  g_assert_cmpint(wisp_in(v.dir, (const char *[]){"simulate", v.example, "--network", v.cluster, "--json", json, NULL},
                          &out, NULL), ==, 0);
  cJSON *r = read_json(json);
  double step_ns = cJSON_GetObjectItemCaseSensitive(r, "step_time_ns")->valuedouble;
  const cJSON *r0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "ranks"), 0);
  g_assert_true(step_ns >= 1e7 && step_ns < 1e8); /* 10..100 ms: 3 decimals */
  char *head = g_strdup_printf("%6s %12s %12s %15s %12s %17s %18s %15s %12s %19s\n", "rank", "finish_ms",
                               "compute_ms", "exposed_comm_ms", "transfer_ms", "straggler_wait_ms",
                               "dependency_wait_ms", "overlap_comm_ms", "idle_ms", "unexplained_idle_ms");
  g_assert_nonnull(strstr(out, head));
#define R0(k) (cJSON_GetObjectItemCaseSensitive(r0, k)->valuedouble / 1e6)
  char *row = g_strdup_printf("\n%6d %12.3f %12.3f %15.3f %12.3f %17.3f %18.3f %15.3f %12.3f ", 0, R0("finish_ns"),
                              R0("compute_ns"), R0("exposed_comm_ns"), R0("comm_transfer_ns"), R0("straggler_wait_ns"),
                              R0("dependency_wait_ns"), R0("overlapped_comm_ns"),
                              cJSON_GetObjectItemCaseSensitive(r0, "idle_ns")->valuedouble / 1e6);
  g_test_message("expect row: %s", row);
  g_assert_nonnull(strstr(out, row));
  char *step = g_strdup_printf("step time: %.3f ms (%.3f ns), the latest rank finish\n", step_ns / 1e6, step_ns);
  g_assert_nonnull(strstr(out, step));
  g_assert_null(strstr(out, "finish_ns"));
  cJSON_Delete(r);
  g_free(head), g_free(row), g_free(step), g_free(out), g_free(json);
  teardown(&v);
}

/* diff warns when the two reports come from different workloads (here the
 * ground-truth tp traces at bandwidth B and 2B, which differ in every
 * measured duration), and not for the same workload under two paths. */
static void test_diff_workloads(void)
{
  env v;
  if (!setup(&v))
    return;
  /* The example under a second prefix: same content, another source. */
  for (int r = 0; r < 16; r++) {
    char *a = g_strdup_printf("%s.%d.et", v.example, r), *b = g_strdup_printf("%s/copy.%d.et", v.dir, r);
    char *text = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(a, &text, &len, NULL));
    g_assert_true(g_file_set_contents(b, text, (gssize)len, NULL));
    g_free(text), g_free(a), g_free(b);
  }
  char *copy = g_build_filename(v.dir, "copy", NULL);
  char *ja = g_build_filename(v.dir, "a.json", NULL), *jb = g_build_filename(v.dir, "b.json", NULL);
  g_assert_cmpint(wisp_in(v.dir, (const char *[]){"simulate", v.example, "--network", v.cluster, "--json", ja, NULL},
                          NULL, NULL), ==, 0);
  g_assert_cmpint(wisp_in(v.dir, (const char *[]){"simulate", copy, "--network", v.cluster, "--network-model", "flow",
                                                  "--json", jb, NULL}, NULL, NULL), ==, 0);
  char *out = NULL, *err = NULL, *dj = g_build_filename(v.dir, "d.json", NULL);
  g_assert_cmpint(wisp_in(v.dir, (const char *[]){"diff", ja, jb, "--json", dj, NULL}, &out, &err), ==, 0);
  g_assert_null(strstr(err, "WARNING"));
  cJSON *d = read_json(dj);
  g_assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "same_workload")));
  cJSON_Delete(d);
  g_free(out), g_free(err);

  gt_params p;
  gt_params_init(&p, GT_TP);
  gt_result res;
  GError *error = NULL;
  char *b_dir = g_build_filename(v.dir, "B", NULL), *b2_dir = g_build_filename(v.dir, "2B", NULL);
  g_assert_true(gt_run(&p, b_dir, &res, &error));
  g_assert_no_error(error);
  p.bw_scale = 2.0;
  g_assert_true(gt_run(&p, b2_dir, &res, &error));
  g_assert_no_error(error);
  g_assert_cmpint(wisp_in(v.dir, (const char *[]){"simulate", b_dir, "--cluster", "dgx-h100", "--json", ja, NULL}, NULL,
                          NULL), ==, 0);
  g_assert_cmpint(wisp_in(v.dir, (const char *[]){"simulate", b2_dir, "--cluster", "dgx-h100", "--json", jb, NULL},
                          NULL, NULL), ==, 0);
  cJSON *A = read_json(ja), *B = read_json(jb);
  int n = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(A, "workload"), "n_ranks")->valueint;
  g_assert_cmpstr(cJSON_GetObjectItemCaseSensitive(A, "workload_digest_sha256")->valuestring, !=,
                  cJSON_GetObjectItemCaseSensitive(B, "workload_digest_sha256")->valuestring);
  cJSON_Delete(A), cJSON_Delete(B);
  g_assert_cmpint(wisp_in(v.dir, (const char *[]){"diff", ja, jb, "--json", dj, NULL}, &out, &err), ==, 0);
  char *want = g_strdup_printf("wisp: WARNING: the two reports come from different workloads (A: %s, %d ranks; B: %s, "
                               "%d ranks; their content digests differ); the deltas mix the workload change with "
                               "the network change\n", b_dir, n, b2_dir, n);
  g_assert_nonnull(strstr(err, want));
  d = read_json(dj);
  g_assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(d, "same_workload")));
  cJSON_Delete(d);
  g_free(want), g_free(out), g_free(err), g_free(b_dir), g_free(b2_dir), g_free(copy), g_free(ja), g_free(jb),
      g_free(dj);
  teardown(&v);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/cli/network_model", test_network_model);
  g_test_add_func("/cli/sweep_errors", test_sweep_errors);
  g_test_add_func("/cli/help", test_help);
  g_test_add_func("/cli/charts", test_charts);
  g_test_add_func("/cli/simulate_ms", test_simulate_ms);
  g_test_add_func("/cli/diff_workloads", test_diff_workloads);
  return g_test_run();
}
