/* test_input_cli.c: issue 17's input items end to end through the `wisp`
 * binary ($WISP_BIN, set by `make check`): one network spelling on every
 * command (presets by name or path, wisp YAML, ASTRA-sim network.yml),
 * step selection, --comm-group, several inputs as one workload, inspect's
 * output and calibrate's cluster.  Each test checks the exact message or
 * output line the command prints.
 *
 * Workloads are written by the test itself (Chakra through chakra/et_io.h,
 * Kineto JSON as text), so nothing depends on ../shared/data except the
 * DLRM checks, which skip visibly when the data is absent.
 */
#include "config.h"

#include <cjson/cJSON.h>

#include "chakra/et_io.h"
#include "regress/allreduce_et.h"
#include "regress/test_cal_workload.h"
#include "regress/test_util.h"

#include <math.h>
#include <string.h>

/* Runs wisp with args (NULL-terminated); returns the exit status and the
 * standard output and error (g_free both). */
static int wisp2(const char *const *args, char **out, char **err)
{
  const char *bin = g_getenv("WISP_BIN");
  GPtrArray *a = g_ptr_array_new();
  g_ptr_array_add(a, (gpointer)bin);
  for (const char *const *p = args; *p; p++)
    g_ptr_array_add(a, (gpointer)*p);
  g_ptr_array_add(a, NULL);
  int status = 0;
  GError *error = NULL;
  if (!g_spawn_sync(NULL, (char **)a->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, out, err, &status, &error))
    g_error("cannot run %s: %s", bin, error->message);
  g_ptr_array_free(a, TRUE);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static char *src_path(const char *rel)
{
  return g_build_filename(g_getenv("G_TEST_SRCDIR"), rel, NULL);
}

/* Item 1: a preset by name or path, a wisp YAML and an ASTRA-sim
 * network.yml are accepted by topo, collbench and simulate; a preset is
 * resized to the workload and the resize is printed. */
static void test_network_spellings(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-net-cli-XXXXXX", NULL);
  test_write_allreduce(tmp, "w", 8, 1 << 20, 0);
  char *preset = src_path("presets/dgx-h100.yaml"), *astra = src_path("examples/networks/astra-fc4-switch2.yml");
  char *wisp_yaml = src_path("examples/networks/dgx1-v100.yaml");
  char *out = NULL, *err = NULL;

  /* wisp topo PRESET-FILE: before the fix "unknown key 'preset_version'". */
  const char *a1[] = {"topo", preset, NULL};
  g_assert_cmpint(wisp2(a1, &out, &err), ==, 0);
  test_expect_has(out, "topology dgx-h100\n");
  g_free(out);
  g_free(err);
  const char *a2[] = {"topo", "dgx-h100", NULL};
  g_assert_cmpint(wisp2(a2, &out, &err), ==, 0);
  test_expect_has(out, "topology dgx-h100\n");
  g_free(out);
  g_free(err);

  /* collbench --network NAME: the preset's nominal 8 x 4 = 32 ranks. */
  const char *a3[] = {"collbench", "--network", "dgx-h100", "--sizes", "1M", NULL};
  g_assert_cmpint(wisp2(a3, &out, &err), ==, 0);
  test_expect_has(out, "# wisp collbench: network dgx-h100, tier analytical, 32 ranks,");
  g_free(out);
  g_free(err);

  /* simulate --network PRESET-FILE on 8 ranks: the 'ib' tier of 4 nodes
   * shrinks to 8 / 8 = 1 node, and the command says so. */
  char *expect = g_strdup_printf("network %s: preset resized from 32 to the workload's 8 ranks (tier 'ib' 4 -> 1)\n",
                                 preset);
  const char *a4[] = {"simulate", tmp, "--network", preset, NULL};
  g_assert_cmpint(wisp2(a4, &out, &err), ==, 0);
  test_expect_has(out, expect);
  g_free(out);
  g_free(err);
  g_free(expect);
  /* --cluster is the same option. */
  const char *a5[] = {"simulate", tmp, "--cluster", "dgx-h100", NULL};
  g_assert_cmpint(wisp2(a5, &out, &err), ==, 0);
  test_expect_has(out, "network dgx-h100: preset resized from 32 to the workload's 8 ranks (tier 'ib' 4 -> 1)\n");
  g_free(out);
  g_free(err);
  /* A wisp YAML and an ASTRA-sim network.yml (4 x 2 = 8 NPUs) as they are. */
  const char *a6[] = {"simulate", tmp, "--network", wisp_yaml, NULL};
  g_assert_cmpint(wisp2(a6, &out, &err), ==, 0);
  g_assert_null(strstr(out, "resized"));
  g_free(out);
  g_free(err);
  const char *a7[] = {"simulate", tmp, "--network", astra, NULL};
  g_assert_cmpint(wisp2(a7, &out, &err), ==, 0);
  expect = g_strdup_printf("network %s (analytical tier)", astra);
  test_expect_has(out, expect);
  g_free(expect);
  g_free(out);
  g_free(err);
  const char *a8[] = {"utility", tmp, "--network", preset, "-r", "scale_up_bw", NULL};
  g_assert_cmpint(wisp2(a8, &out, &err), ==, 0);
  g_free(out);
  g_free(err);

  /* An unknown name fails before the workload is read, on every command,
   * and lists the presets. */
  const char *cmds[][6] = {
    {"topo", "no-such-net", NULL},
    {"collbench", "--network", "no-such-net", NULL},
    {"simulate", tmp, "--network", "no-such-net", NULL},
    {"utility", tmp, "--cluster", "no-such-net", NULL},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cmds); i++) {
    g_assert_cmpint(wisp2(cmds[i], &out, &err), ==, 1);
    test_expect_has(err, "wisp: error: network 'no-such-net' is neither a file nor a preset (looked in: ");
    test_expect_has(err, "presets available: cloudmatrix384, ");
    test_expect_has(err, ", dgx-h100, dgx-h200, ");
    g_free(out);
    g_free(err);
  }
  test_rm_rf(tmp);
  g_free(tmp);
  g_free(preset);
  g_free(astra);
  g_free(wisp_yaml);
}

/* One rank's Kineto trace with ProfilerStep#1..#5 of 100 us each (step k
 * over [100(k-1), 100k) us).  Steps 2..5 each hold one 40 us kernel;
 * step 1 launches no GPU work, and with `cut` nothing ends after step 5's
 * marker (the trace stops inside it); without it a last CPU op ends 50 us
 * after the marker. */
static char *steps_trace(gboolean cut)
{
  GString *s = g_string_new("{\"distributedInfo\": {\"rank\": 0, \"world_size\": 1}, \"traceEvents\": [");
  for (int k = 1; k <= 5; k++) {
    g_string_append_printf(s, "%s{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%d\", "
                           "\"pid\": 0, \"tid\": 1, \"ts\": %d, \"dur\": 100, \"args\": {}}",
                           k > 1 ? ", " : "", k, 100 * (k - 1));
    if (k > 1)
      g_string_append_printf(s, ", {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm_%d\", \"pid\": 0, "
                             "\"tid\": 7, \"ts\": %d, \"dur\": 40, \"args\": {\"stream\": 7, \"device\": 0}}", k,
                             100 * (k - 1) + 10);
  }
  if (!cut)
    g_string_append(s, ", {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"profiler_stop\", \"pid\": 0, \"tid\": 1, "
                       "\"ts\": 520, \"dur\": 30, \"args\": {}}");
  g_string_append(s, "]}");
  return g_string_free(s, FALSE);
}

/* Item 3: --step N, --steps A..B, --steps all and --steps whole on every
 * trace-reading command; a step is dropped only when shown incomplete and
 * the command says which and why; calibrate takes every complete step by
 * default. */
static void test_steps(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-steps-cli-XXXXXX", NULL);
  char *cut = g_build_filename(tmp, "cut.json", NULL), *full = g_build_filename(tmp, "full.json", NULL);
  char *t1 = steps_trace(TRUE), *t2 = steps_trace(FALSE);
  g_assert_true(g_file_set_contents(cut, t1, -1, NULL));
  g_assert_true(g_file_set_contents(full, t2, -1, NULL));
  g_free(t1);
  g_free(t2);
  char *out = NULL, *err = NULL;
  /* --steps all on the cut trace: #5 is cut, #1 has no GPU work; the
   * window is #2..#4 = [100, 400) us, a measured step of 300 us. */
  const char *a1[] = {"simulate", cut, "--network", "dgx-h100", "--steps", "all", NULL};
  g_assert_cmpint(wisp2(a1, &out, &err), ==, 0);
  test_expect_has(err, "wisp: steps: ProfilerStep#2..#4 (--steps all: 3 step(s) of 5 on rank 0; dropped as incomplete: "
                  "#5 (cut by the trace's end: nothing in the trace ends after its marker), #1 (launched no GPU "
                  "work))\n");
  test_expect_has(out, "measured step time: 0.300000 ms");
  g_free(out);
  g_free(err);
  /* The same trace with a CPU op after step 5: only #1 is dropped. */
  const char *a2[] = {"simulate", full, "--network", "dgx-h100", "--steps", "all", NULL};
  g_assert_cmpint(wisp2(a2, &out, &err), ==, 0);
  test_expect_has(err, "wisp: steps: ProfilerStep#2..#5 (--steps all: 4 step(s) of 5 on rank 0; dropped as incomplete: "
                  "#1 (launched no GPU work))\n");
  test_expect_has(out, "measured step time: 0.400000 ms");
  g_free(out);
  g_free(err);
  /* --steps A..B on utility: #2..#3 = 200 us, nothing dropped. */
  const char *a3[] = {"utility", full, "--network", "dgx-h100", "--steps", "2..3", "-r", "latency", NULL};
  g_assert_cmpint(wisp2(a3, &out, &err), ==, 0);
  test_expect_has(err, "wisp: steps: ProfilerStep#2..#3 (--steps 2..3: 2 step(s) of 5 on rank 0; none dropped)\n");
  test_expect_has(out, "measured step time:             0.200000 ms");
  g_free(out);
  g_free(err);
  /* inspect: the default is the last complete step (#4 on the cut trace),
   * --step N one step, --steps whole the whole trace. */
  const char *a4[] = {"inspect", cut, NULL};
  g_assert_cmpint(wisp2(a4, &out, &err), ==, 0);
  test_expect_has(out, "window: last complete ProfilerStep (#4 on rank 0; dropped as incomplete: #5 (cut by the trace's "
                  "end: nothing in the trace ends after its marker))\n");
  g_free(out);
  g_free(err);
  const char *a5[] = {"inspect", cut, "--step", "3", NULL};
  g_assert_cmpint(wisp2(a5, &out, &err), ==, 0);
  test_expect_has(out, "window: ProfilerStep#3 (--step)\n");
  g_free(out);
  g_free(err);
  const char *a6[] = {"inspect", cut, "--steps", "whole", NULL};
  g_assert_cmpint(wisp2(a6, &out, &err), ==, 0);
  test_expect_has(out, "window: whole trace (ProfilerStep ranges ignored on request)\n");
  g_free(out);
  g_free(err);
  /* One error for a malformed value, on every command. */
  const char *cmds[] = {"simulate", "utility", "calibrate", "inspect", "convert", "sweep"};
  for (size_t i = 0; i < G_N_ELEMENTS(cmds); i++) {
    /* Enough arguments for each command to reach its option check. */
    const char *a7[] = {cmds[i], cut, "--steps", "3-4", "--network", "dgx-h100", NULL, NULL, NULL};
    if (strcmp(cmds[i], "calibrate") == 0) {
      a7[4] = "--cluster";
      a7[6] = "-o";
      a7[7] = tmp;
    } else if (strcmp(cmds[i], "convert") == 0) {
      a7[4] = "-o";
      a7[5] = tmp;
    } else if (strcmp(cmds[i], "inspect") == 0 || strcmp(cmds[i], "sweep") == 0) {
      a7[4] = NULL;
    }
    g_assert_cmpint(wisp2(a7, &out, &err), ==, 2);
    char *want = g_strdup_printf("wisp %s: --steps takes A..B (step numbers, A <= B, e.g. 10..12), all or whole, "
                                 "not '3-4'\n", cmds[i]);
    test_expect_has(err, want);
    g_free(want);
    g_free(out);
    g_free(err);
  }
  /* sweep takes them too (checked before the spec's workload is read). */
  const char *a8[] = {"sweep", "--help", NULL};
  g_assert_cmpint(wisp2(a8, &out, &err), ==, 0);
  test_expect_has(out, "--steps=A..B|all|whole");
  g_free(out);
  g_free(err);
  /* A range with no step in it names the trace's steps. */
  const char *a9[] = {"simulate", cut, "--network", "dgx-h100", "--steps", "7..9", NULL};
  g_assert_cmpint(wisp2(a9, &out, &err), ==, 1);
  char *want = g_strdup_printf("wisp: error: %s: --steps 7..9: no ProfilerStep in that range (the trace has steps "
                               "1..5)\n", cut);
  test_expect_has(err, want);
  g_free(want);
  g_free(out);
  g_free(err);
  /* XLA profiles (inspect/convert have their own reader) spell it the
   * same; a profile is one step or all of it. */
  const char *sd = g_getenv("WISP_SHARED_DATA");
  char *xp = sd ? g_build_filename(sd, "xprof/test_xplanes/tpu_inference_2.xplane.pb", NULL) : NULL;
  if (xp && g_file_test(xp, G_FILE_TEST_EXISTS)) {
    const char *a11[] = {"inspect", xp, "--steps", "3-4", NULL};
    g_assert_cmpint(wisp2(a11, &out, &err), ==, 2);
    test_expect_has(err, "wisp inspect: --steps takes A..B (step numbers, A <= B, e.g. 10..12), all or whole, not '3-4'\n");
    g_free(out);
    g_free(err);
    const char *a12[] = {"inspect", xp, "--steps", "all", NULL};
    g_assert_cmpint(wisp2(a12, &out, &err), ==, 0);
    g_free(out);
    g_free(err);
  } else {
    g_test_message("SKIP: WISP_SHARED_DATA/xprof/test_xplanes/tpu_inference_2.xplane.pb absent; XLA --steps unchecked");
  }
  g_free(xp);
  /* calibrate: every complete step by default (the note says so). */
  const char *a10[] = {"calibrate", full, "--cluster", "dgx-h100", "-o", cut, NULL};
  wisp2(a10, &out, &err);
  test_expect_has(err, "wisp: steps: ProfilerStep#2..#5 (--steps all: 4 step(s) of 5 on rank 0; dropped as incomplete: "
                  "#1 (launched no GPU work))\n");
  g_free(out);
  g_free(err);
  test_rm_rf(tmp);
  g_free(tmp);
  g_free(cut);
  g_free(full);
}

/* A one-rank Kineto trace whose deviceProperties name `device`. */
static char *device_trace(const char *device)
{
  char *steps = steps_trace(FALSE);
  char *t = g_strdup_printf("{\"deviceProperties\": [{\"id\": 0, \"name\": \"%s\"}], %s", device, steps + 1);
  g_free(steps);
  return t;
}

/* Item 8: calibrate's cluster comes from --cluster or the trace's device,
 * never a silent dgx-h100; ranks inside one node (node_dims) are
 * intra-node; the YAML has human units and a name of its own. */
static void test_calibrate_cluster(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-cal-cluster-XXXXXX", NULL);
  char *et = g_build_filename(tmp, "et", NULL), *yaml = g_build_filename(tmp, "cal.yaml", NULL);
  char *v100 = g_build_filename(tmp, "v100.json", NULL), *h100 = g_build_filename(tmp, "h100.json", NULL);
  g_assert_cmpint(g_mkdir(et, 0755), ==, 0);
  test_write_cal_workload(et, FALSE);
  char *t = device_trace("Tesla V100-SXM2-32GB");
  g_assert_true(g_file_set_contents(v100, t, -1, NULL));
  g_free(t);
  t = device_trace("NVIDIA H100 80GB HBM3");
  g_assert_true(g_file_set_contents(h100, t, -1, NULL));
  g_free(t);
  char *out = NULL, *err = NULL;
  /* A V100 trace: no preset models it, so --network is required. */
  const char *a1[] = {"calibrate", v100, "-o", yaml, NULL};
  g_assert_cmpint(wisp2(a1, &out, &err), ==, 2);
  test_expect_has(err, "wisp calibrate: the trace ran on 'Tesla V100-SXM2-32GB', which no shipped preset models; give "
                  "--network PRESET|CONFIG (a preset name or file, a wisp YAML or an ASTRA-sim network.yml; for a "
                  "DGX-1, examples/networks/dgx1-v100.yaml)\n");
  g_assert_false(g_file_test(yaml, G_FILE_TEST_EXISTS));
  g_free(out);
  g_free(err);
  /* A Chakra workload names no device. */
  const char *a2[] = {"calibrate", et, "-o", yaml, NULL};
  g_assert_cmpint(wisp2(a2, &out, &err), ==, 2);
  test_expect_has(err, "wisp calibrate: the trace does not name its device, so no cluster can be chosen for it; give "
                  "--network PRESET|CONFIG");
  g_free(out);
  g_free(err);
  /* An H100 trace gets dgx-h100, and says why (this trace has no
   * collective, so the fit itself then fails). */
  char *preset = src_path("presets/dgx-h100.yaml");
  const char *a3[] = {"calibrate", h100, "-o", yaml, NULL};
  g_assert_cmpint(wisp2(a3, &out, &err), ==, 1);
  char *want = g_strdup_printf("cluster: %s (chosen for the trace's device 'NVIDIA H100 80GB HBM3'; give --network "
                               "for another)", preset);
  test_expect_has(out, want);
  g_free(want);
  g_free(out);
  g_free(err);
  /* 8 GPUs of one DGX-1 (quads x cross links, node_dims: 2): every
   * collective is intra-node; alpha 2 us per step and beta 100 GB/s come
   * back exactly (the durations are the closed form above). */
  char *dgx1 = src_path("examples/networks/dgx1-v100.yaml");
  /* --library ideal: the textbook schedules the fit assumes (the config
   * names no library, so NCCL's would be kept otherwise). */
  const char *a4[] = {"calibrate", et, "--cluster", dgx1, "-o", yaml, "--summary", "--no-baseline", "--library",
                      "ideal", NULL};
  g_assert_cmpint(wisp2(a4, &out, &err), ==, 0);
  test_expect_has(out, "  intra-node      4     4      2.0000 us   100.000 GB/s");
  test_expect_has(out, "  inter-node      0     0");
  g_free(out);
  g_free(err);
  char *text = NULL;
  g_assert_true(g_file_get_contents(yaml, &text, NULL, NULL));
  g_test_message("calibrated config:\n%s", text);
  test_expect_has(text, "\nname: \"dgx1-v100-calibrated\"\n");
  test_expect_has(text, "node_dims: 2\n");
  /* The fit describes the node, so both tiers inside it get it; the
   * refit against the simulator's plan on quads x cross reproduces every
   * point (rms 0.000 %) with 100 GB/s and 3.5 us per link (golden output
   * of that refit; the direct mapping alpha / 1 hop = 2 us is 14.4 % off).
   * Human units, no integer "B/s" / "ps" values. */
  test_expect_has(text, "# intra-node: alpha 2000.000 ns/step, beta 100.000000 GB/s from 4 collectives (4 sizes), rms "
                   "error 0.000 %\n");
  test_expect_has(text, "link values refitted against the simulator (rms 14.364 % -> 0.000 %)\n");
  test_expect_has(text, "  - {name: \"quad\", kind: fully_connected, size: 4, bandwidth: 100GB/s, latency: 3.5us}\n"
                   "  - {name: \"cross\", kind: fully_connected, size: 2, bandwidth: 100GB/s, latency: 3.5us}\n");
  g_assert_null(strstr(text, "0B/s"));
  g_assert_null(strstr(text, "0ps"));
  g_free(text);
  /* The same workload on dgx-h100 (nvlink x ib, 1 node for 8 ranks):
   * "bandwidth: 100GB/s, latency: 1us" on nvlink (alpha 2 us / 2 switch
   * traversals), exact in 4 significant digits. */
  const char *a5[] = {"calibrate", et, "--cluster", "dgx-h100", "-o", yaml, "--summary", "--no-baseline", "--library",
                      "ideal", NULL};
  g_assert_cmpint(wisp2(a5, &out, &err), ==, 0);
  g_free(out);
  g_free(err);
  g_assert_true(g_file_get_contents(yaml, &text, NULL, NULL));
  test_expect_has(text, "\nname: \"dgx-h100-calibrated\"\n");
  test_expect_has(text, "  - {name: \"nvlink\", kind: switch, size: 8, bandwidth: 100GB/s, latency: 1us}\n");
  g_free(text);
  g_free(dgx1);
  g_free(preset);
  test_rm_rf(tmp);
  g_free(tmp);
  g_free(et);
  g_free(yaml);
  g_free(v100);
  g_free(h100);
}

/* 4 ranks; ranks 0 and 1 all-reduce 1 MiB in group "1" (pg_name), ranks 2
 * and 3 compute for 10 us.  No comm_group.json is written. */
static void write_group_workload(const char *dir)
{
  et_workload *w = et_workload_new(4, "cli");
  for (int r = 0; r < 4; r++) {
    et_builder *b = et_builder_new("cli");
    if (r < 2) {
      uint32_t i = et_builder_add_node(b, 0, ET_NODE_COMM_COLL, "all_reduce", 10 * SIM_PS_PER_US, 0);
      et_comm c = { .bytes = 1 << 20, .split = ET_NONE, .src = -1, .dst = -1, .tag = -1, .root = -1,
                    .coll = ET_COLL_ALL_REDUCE };
      et_builder_set_comm(b, i, &c, "1", NULL, 0);
    } else {
      et_builder_add_node(b, 0, ET_NODE_COMP, "gemm", 10 * SIM_PS_PER_US, 0);
    }
    GError *error = NULL;
    w->ranks[r] = et_builder_finish(b, 0, &error);
    g_assert_no_error(error);
  }
  GError *error = NULL;
  g_assert_true(et_workload_write(w, dir, "w", &error));
  g_assert_no_error(error);
  et_workload_free(w);
}

/* Item 4: --comm-group FILE (and ASTRA-sim's --comm-group-configuration)
 * on every command that reads Chakra workloads. */
static void test_comm_group(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-cg-cli-XXXXXX", NULL);
  char *et = g_build_filename(tmp, "et", NULL), *cg = g_build_filename(tmp, "groups.json", NULL);
  g_assert_cmpint(g_mkdir(et, 0755), ==, 0);
  write_group_workload(et);
  g_assert_true(g_file_set_contents(cg, "{\"1\": [0, 1]}\n", -1, NULL));
  char *out = NULL, *err = NULL, *json = g_build_filename(tmp, "r.json", NULL);
  char *cal = g_build_filename(tmp, "cal.yaml", NULL);
  /* Without the groups, the error says where they can come from. */
  const char *a0[] = {"simulate", et, "--network", "dgx-h100", NULL};
  g_assert_cmpint(wisp2(a0, &out, &err), ==, 1);
  test_expect_has(err, "(\"all_reduce\"): pg_name \"1\" is not a known communicator (0 group(s) defined, e.g. in "
                  "comm_group.json); add the group (comm_group.json beside the .et files, or --comm-group FILE) or "
                  "fix pg_name\n");
  g_free(out);
  g_free(err);
  /* With --comm-group (or ASTRA-sim's --comm-group-configuration) from
   * another directory: the report's group "1" has the file's 2 ranks. */
  const char *opts[] = {"--comm-group", "--comm-group-configuration"};
  for (size_t i = 0; i < G_N_ELEMENTS(opts); i++) {
    const char *a1[] = {"simulate", et, "--network", "dgx-h100", opts[i], cg, "--json", json, NULL};
    g_assert_cmpint(wisp2(a1, &out, &err), ==, 0);
    g_free(out);
    g_free(err);
    char *text = NULL;
    g_assert_true(g_file_get_contents(json, &text, NULL, NULL));
    cJSON *d = cJSON_Parse(text);
    g_free(text);
    const cJSON *groups = cJSON_GetObjectItemCaseSensitive(d, "groups");
    g_assert_cmpint(cJSON_GetArraySize(groups), ==, 1);
    const cJSON *g0 = cJSON_GetArrayItem(groups, 0);
    g_assert_cmpstr(cJSON_GetObjectItemCaseSensitive(g0, "group")->valuestring, ==, "1");
    g_assert_cmpint(cJSON_GetObjectItemCaseSensitive(g0, "n_ranks")->valueint, ==, 2);
    cJSON_Delete(d);
  }
  /* utility, calibrate and sweep take it too (they load the workload). */
  const char *a2[] = {"utility", et, "--network", "dgx-h100", "-r", "latency", "--comm-group", cg, NULL};
  g_assert_cmpint(wisp2(a2, &out, &err), ==, 0);
  g_free(out);
  g_free(err);
  const char *a3[] = {"calibrate", et, "--cluster", "dgx-h100", "-o", cal, "--comm-group", cg, NULL};
  g_assert_cmpint(wisp2(a3, &out, &err), ==, 0);
  test_expect_has(out, "intra-node      1     1");
  g_free(out);
  g_free(err);
  const char *a4[] = {"sweep", "--help", NULL};
  g_assert_cmpint(wisp2(a4, &out, &err), ==, 0);
  test_expect_has(out, "--comm-group=FILE");
  g_free(out);
  g_free(err);
  /* A missing file, and a Kineto input, are errors that say so. */
  const char *a5[] = {"simulate", et, "--network", "dgx-h100", "--comm-group", "no-such.json", NULL};
  g_assert_cmpint(wisp2(a5, &out, &err), ==, 1);
  test_expect_has(err, "wisp: error: no-such.json: no such file (--comm-group names the comm_group.json to use)\n");
  g_free(out);
  g_free(err);
  char *kin = g_build_filename(tmp, "k.json", NULL), *t = steps_trace(FALSE);
  g_assert_true(g_file_set_contents(kin, t, -1, NULL));
  g_free(t);
  const char *a6[] = {"simulate", kin, "--network", "dgx-h100", "--comm-group", cg, NULL};
  g_assert_cmpint(wisp2(a6, &out, &err), ==, 1);
  char *want = g_strdup_printf("wisp: error: %s: --comm-group %s applies to Chakra workloads (.et files); a Kineto "
                               "input carries its own process groups\n", kin, cg);
  test_expect_has(err, want);
  g_free(want);
  g_free(out);
  g_free(err);
  g_free(kin);
  g_free(json);
  g_free(cal);
  test_rm_rf(tmp);
  g_free(tmp);
  g_free(et);
  g_free(cg);
}

/* steps_trace(FALSE) as rank `rank` of a 2-rank job. */
static char *rank_trace(int rank)
{
  char *t = steps_trace(FALSE);
  char *from = strstr(t, "\"rank\": 0, \"world_size\": 1");
  g_assert_nonnull(from);
  char *out = g_strdup_printf("%.*s\"rank\": %d, \"world_size\": 2%s", (int)(from - t), t, rank,
                              from + strlen("\"rank\": 0, \"world_size\": 1"));
  g_free(t);
  return out;
}

/* Item 5: several paths or globs are one workload; a directory's files of
 * the recognised kind are taken and the rest listed with the reason; a
 * path with nothing usable names every input kind tried. */
static void test_several_inputs(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-inputs-cli-XXXXXX", NULL);
  char *dir = g_build_filename(tmp, "run", NULL), *empty = g_build_filename(tmp, "empty", NULL);
  g_assert_cmpint(g_mkdir(dir, 0755), ==, 0);
  g_assert_cmpint(g_mkdir(empty, 0755), ==, 0);
  char *k0 = g_build_filename(dir, "kineto_0.json", NULL), *k1 = g_build_filename(dir, "kineto_1.json", NULL);
  char *et0 = g_build_filename(dir, "et_0.json", NULL), *txt = g_build_filename(dir, "README.txt", NULL);
  for (int r = 0; r < 2; r++) {
    char *t = rank_trace(r);
    g_assert_true(g_file_set_contents(r ? k1 : k0, t, -1, NULL));
    g_free(t);
  }
  /* A PyTorch execution trace as the Chakra collection layout has it. */
  g_assert_true(g_file_set_contents(et0, "{\"schema\": \"1.0.2-chakra.0.0.4\", \"pid\": 1, \"nodes\": []}", -1, NULL));
  g_assert_true(g_file_set_contents(txt, "notes\n", -1, NULL));
  char *out = NULL, *err = NULL, *want = NULL;
  /* The directory: the two Kineto traces, and the execution trace beside
   * them is linked with them (frontends/pyt_et.h), which needs one per
   * rank: refused, saying so. */
  const char *a1[] = {"simulate", dir, "--network", "dgx-h100", NULL};
  g_assert_cmpint(wisp2(a1, &out, &err), ==, 1);
  test_expect_has(err, "1 execution trace(s) beside a 2-rank Kineto workload; give one per rank (or none)");
  g_free(out);
  g_free(err);
  /* Without it: the two Kineto traces, the rest listed. */
  g_unlink(et0);
  g_assert_cmpint(wisp2(a1, &out, &err), ==, 0);
  want = g_strdup_printf("wisp: ignored 1 file(s): not a workload file (Chakra .et, Kineto *.json[.gz], XPlane "
                         "*.xplane.pb, XProf *.trace.json[.gz], Nsight Systems *.sqlite): %s\n", txt);
  test_expect_has(err, want);
  g_free(want);
  want = g_strdup_printf("workload %s: 2 ranks;", dir);
  test_expect_has(out, want);
  g_free(want);
  g_free(out);
  g_free(err);
  /* Two files, and a glob the shell did not expand, on utility and
   * calibrate as on simulate. */
  char *glob = g_build_filename(dir, "kineto_*.json", NULL);
  const char *a2[] = {"simulate", k0, k1, "--network", "dgx-h100", NULL};
  g_assert_cmpint(wisp2(a2, &out, &err), ==, 0);
  test_expect_has(out, ": 2 ranks;");
  g_free(out);
  g_free(err);
  const char *a3[] = {"utility", glob, "--network", "dgx-h100", "-r", "latency", NULL};
  g_assert_cmpint(wisp2(a3, &out, &err), ==, 0);
  want = g_strdup_printf("workload %s: 2 ranks", glob);
  test_expect_has(out, want);
  g_free(want);
  g_free(out);
  g_free(err);
  const char *a4[] = {"inspect", glob, NULL};
  g_assert_cmpint(wisp2(a4, &out, &err), ==, 0);
  test_expect_has(out, "Kineto traces: 2 file(s), world size 2\n");
  g_free(out);
  g_free(err);
  /* Nothing usable: every kind tried is named. */
  const char *tried = "tried a Chakra ET prefix or directory (%s.0.et, or DIR/PREFIX.N.et), Kineto traces (*.json, "
                      "*.json.gz with \"traceEvents\"), XPlane profiles (*.xplane.pb[.gz]) and XProf JSON "
                      "(*.trace.json[.gz])";
  char *t2 = g_strdup_printf(tried, empty);
  want = g_strdup_printf("wisp: error: %s: no workload found; %s; the directory holds no files\n", empty, t2);
  const char *a5[] = {"simulate", empty, "--network", "dgx-h100", NULL};
  g_assert_cmpint(wisp2(a5, &out, &err), ==, 1);
  test_expect_has(err, want);
  g_free(want);
  g_free(t2);
  g_free(out);
  g_free(err);
  char *missing = g_build_filename(tmp, "nothing", NULL);
  t2 = g_strdup_printf(tried, missing);
  want = g_strdup_printf("wisp: error: %s: no such file or directory, and no workload found; %s\n", missing, t2);
  const char *a6[] = {"simulate", missing, "--network", "dgx-h100", NULL};
  g_assert_cmpint(wisp2(a6, &out, &err), ==, 1);
  test_expect_has(err, want);
  g_free(want);
  g_free(t2);
  g_free(out);
  g_free(err);
  g_free(missing);
  /* A directory holding only what is ignored says what it holds. */
  g_unlink(k0);
  g_unlink(k1);
  const char *a7[] = {"simulate", dir, "--network", "dgx-h100", NULL};
  g_assert_cmpint(wisp2(a7, &out, &err), ==, 1);
  want = g_strdup_printf("; 1 file(s) ignored: not a workload file (Chakra .et, Kineto *.json[.gz], XPlane "
                         "*.xplane.pb, XProf *.trace.json[.gz], Nsight Systems *.sqlite) (%s)", txt);
  test_expect_has(err, want);
  g_free(want);
  g_free(out);
  g_free(err);
  test_rm_rf(tmp);
  g_free(tmp);
  g_free(dir);
  g_free(empty);
  g_free(k0);
  g_free(k1);
  g_free(et0);
  g_free(txt);
  g_free(glob);
}

/* Rank `rank` of 2: ProfilerStep#1 over [0, 400) us, a 100 us gemm, then
 * one bf16 all-reduce of 1,048,576 elements (2,097,152 bytes) in process
 * group "0" with NCCL kernel args, 50 us on rank 0 and 70 us on rank 1. */
static char *coll_trace(int rank)
{
  return g_strdup_printf(
    "{\"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\"}], "
    "\"distributedInfo\": {\"rank\": %d, \"world_size\": 2}, \"traceEvents\": ["
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 0, \"tid\": 1, \"ts\": 0, "
    "\"dur\": 400, \"args\": {}}, "
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": 0, \"tid\": 7, \"ts\": 10, \"dur\": 100, "
    "\"args\": {\"stream\": 7, \"device\": 0}}, "
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned "
    "long, ncclWork*)\", \"pid\": 0, \"tid\": 20, \"ts\": 120, \"dur\": %d, \"args\": {\"stream\": 20, \"device\": 0, "
    "\"Collective name\": \"allreduce\", \"In msg nelems\": 1048576, \"Out msg nelems\": 1048576, \"Group size\": 2, "
    "\"dtype\": \"BFloat16\", \"Process Group Name\": \"0\", \"Process Group Ranks\": \"[0, 1]\"}}, "
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"profiler_stop\", \"pid\": 0, \"tid\": 1, \"ts\": 450, "
    "\"dur\": 10, \"args\": {}}]}", rank, rank ? 70 : 50);
}

static int count_lines(const char *s)
{
  int n = 0;
  for (; s && *s; s++)
    n += *s == '\n';
  return n;
}

/* Item 6: inspect on a partial rank set, the per-collective table, the
 * concise default and --verbose, .et input (wisp's own convert output) and
 * a truncated file. */
static void test_inspect(void)
{
  if (!test_have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-inspect-cli-XXXXXX", NULL);
  char *dir = g_build_filename(tmp, "traces", NULL), *et = g_build_filename(tmp, "et", NULL);
  g_assert_cmpint(g_mkdir(dir, 0755), ==, 0);
  char *f[2];
  for (int r = 0; r < 2; r++) {
    char *name = g_strdup_printf("rank%d.json", r), *t = coll_trace(r);
    f[r] = g_build_filename(dir, name, NULL);
    g_assert_true(g_file_set_contents(f[r], t, -1, NULL));
    g_free(name);
    g_free(t);
  }
  char *out = NULL, *err = NULL;
  /* The table: one all-reduce per rank, 50 and 70 us: min 50, (lower)
   * median 50, max 70; 2,097,152 bytes = 1,048,576 x 2 (bf16). */
  const char *row = "  all_reduce       1     2        2097152 BFloat16        1     50.000     50.000     70.000  "
                    "kernel args (In/Out msg nelems x dtype)\n";
  const char *a1[] = {"inspect", dir, NULL};
  g_assert_cmpint(wisp2(a1, &out, &err), ==, 0);
  g_test_message("inspect (concise):\n%s", out);
  test_expect_has(out, "Kineto traces: 2 file(s), world size 2\n");
  test_expect_has(out, "device: NVIDIA H100 80GB HBM3\n");
  test_expect_has(out, "  op           group ranks          bytes dtype       calls     min_us  median_us     max_us  "
                  "size from\n");
  test_expect_has(out, row);
  test_expect_has(out, "(per-rank details: --verbose)\n");
  g_assert_null(strstr(out, "  read: "));
  int concise = count_lines(out);
  g_free(out);
  g_free(err);
  const char *a2[] = {"inspect", dir, "--verbose", NULL};
  g_assert_cmpint(wisp2(a2, &out, &err), ==, 0);
  test_expect_has(out, "  read: ");
  test_expect_has(out, row);
  g_test_message("inspect: %d lines, --verbose: %d lines", concise, count_lines(out));
  g_assert_cmpint(concise, <, count_lines(out));
  g_free(out);
  g_free(err);
  /* One rank of two: a summary with a warning naming the missing rank. */
  const char *a3[] = {"inspect", f[1], NULL};
  g_assert_cmpint(wisp2(a3, &out, &err), ==, 0);
  test_expect_has(out, "Kineto traces: 1 file(s), world size 2 (no trace for rank(s) 0)\n");
  test_expect_has(out, "  the traces cover 1 of 2 ranks (missing: 0); the absent ranks are synthesized from the traced ones "
                  "only to match collectives (symmetric assumption), and the figures are the traced ranks' own\n");
  test_expect_has(out, "  all_reduce       1     2        2097152 BFloat16        1     70.000     70.000     70.000  ");
  g_free(out);
  g_free(err);
  /* convert no longer repeats the report on stderr; inspect reads its
   * output (the comm_group.json beside it, or --comm-group). */
  const char *a4[] = {"convert", dir, "-o", et, NULL};
  g_assert_cmpint(wisp2(a4, &out, &err), ==, 0);
  g_assert_null(strstr(err, "Kineto traces:"));
  g_assert_null(strstr(err, "rank 0 "));
  g_free(out);
  g_free(err);
  const char *a5[] = {"inspect", et, NULL};
  g_assert_cmpint(wisp2(a5, &out, &err), ==, 0);
  char *want = g_strdup_printf("Chakra ET workload: %s/trace, 2 rank(s)\n", et);
  test_expect_has(out, want);
  g_free(want);
  test_expect_has(out, "  all_reduce       1     2        2097152 -               1     50.000     50.000     70.000  "
                  "Chakra comm_size\n");
  g_free(out);
  g_free(err);
  char *cg = g_build_filename(et, "comm_group.json", NULL), *cg2 = g_build_filename(tmp, "groups.json", NULL);
  g_assert_cmpint(g_rename(cg, cg2), ==, 0);
  const char *a6[] = {"inspect", et, "--comm-group", cg2, NULL};
  g_assert_cmpint(wisp2(a6, &out, &err), ==, 0);
  test_expect_has(out, "groups: 1\n  1: 2 ranks [0,1]");
  g_free(out);
  g_free(err);
  /* A truncated trace: the error alone, no report of unread files. */
  char *text = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(f[1], &text, &len, NULL));
  g_assert_true(g_file_set_contents(f[1], text, (gssize)(len / 2), NULL));
  g_free(text);
  const char *a7[] = {"inspect", dir, NULL};
  g_assert_cmpint(wisp2(a7, &out, &err), ==, 1);
  g_assert_cmpstr(out, ==, "");
  want = g_strdup_printf("wisp inspect: error: %s: byte ", f[1]);
  test_expect_has(err, want);
  g_free(want);
  g_assert_null(strstr(err, "(null)"));
  g_free(out);
  g_free(err);
  test_rm_rf(tmp);
  g_free(tmp);
  g_free(dir);
  g_free(et);
  g_free(cg);
  g_free(cg2);
  g_free(f[0]);
  g_free(f[1]);
}

/* The examples on the real 8 x V100 DLRM traces (../shared/data,
 * README: one DGX-1, 8 ranks, ProfilerStep#10 only, 3 all-reduce + 5
 * all-to-all per rank): calibrate refuses to guess the cluster, classes
 * all 8 collectives intra-node on the DGX-1 config, uses the one complete
 * step; inspect stays short; the directory with the PyTorch execution
 * traces beside the Kineto ones loads.  Skips visibly without the data. */
static void test_dlrm(void)
{
  if (!test_have_bin())
    return;
  const char *sd = g_getenv("WISP_SHARED_DATA");
  char *tmp = test_dlrm_halves("wisp-dlrm-cli-XXXXXX");
  if (tmp == NULL)
    return;
  char *dir = g_build_filename(tmp, "dlrm_kineto", NULL), *yaml = g_build_filename(tmp, "cal.yaml", NULL);
  char *dgx1 = src_path("examples/networks/dgx1-v100.yaml");
  char *out = NULL, *err = NULL, *want = NULL;
  const char *a1[] = {"calibrate", dir, "-o", yaml, NULL};
  g_assert_cmpint(wisp2(a1, &out, &err), ==, 2);
  test_expect_has(err, "wisp calibrate: the trace ran on 'Tesla V100-SXM2-32GB', which no shipped preset models");
  g_free(out);
  g_free(err);
  const char *a2[] = {"calibrate", dir, "--steps", "all", "--cluster", dgx1, "-o", yaml, "--summary", NULL};
  g_assert_cmpint(wisp2(a2, &out, &err), ==, 0);
  g_test_message("calibrate --steps all on DLRM (DGX-1):\n%s", out);
  test_expect_has(err, "wisp: steps: ProfilerStep#10 (--steps all: 1 step(s) of 1 on rank 0; none dropped)\n");
  /* 8 instances of 7 sizes (doc/calibration.md §7), all inside the DGX-1. */
  test_expect_has(out, "  intra-node      8     7");
  test_expect_has(out, "  inter-node      0     0");
  g_free(out);
  g_free(err);
  char *text = NULL;
  g_assert_true(g_file_get_contents(yaml, &text, NULL, NULL));
  test_expect_has(text, "\nname: \"dgx1-v100-calibrated\"\n");
  g_free(text);
  const char *a3[] = {"inspect", dir, NULL};
  g_assert_cmpint(wisp2(a3, &out, &err), ==, 0);
  int lines = count_lines(out);
  g_test_message("inspect on 8 DLRM ranks: %d lines (217 before issue 17)", lines);
  /* Header 3, table head + 8 ranks, groups 2, matching 1, collectives
   * 2 + 7 rows, the --verbose hint, the inferred layout 4 (degrees, dp,
   * the assumed ones, the world group; chakra/et_scale.h), the
   * communication kernels by library (NCCL, once for the 8 files;
   * frontends/kineto.c print_library_lines), a blank and the load time:
   * 32. */
  g_assert_cmpint(lines, ==, 32);
  g_free(out);
  g_free(err);
  /* The PyTorch execution traces beside the Kineto ones (the Chakra
   * collection layout) are linked with them (frontends/pyt_et.h; the
   * figures are checked in regress/test_pyt_et). */
  char *pet = g_build_filename(tmp, "dlrm_pytorch_et", NULL);
  GDir *d = g_dir_open(pet, 0, NULL);
  const char *e;
  int moved = 0;
  while (d && (e = g_dir_read_name(d))) {
    char *from = g_build_filename(pet, e, NULL), *to = g_build_filename(dir, e, NULL);
    g_assert_cmpint(g_rename(from, to), ==, 0);
    moved++;
    g_free(from);
    g_free(to);
  }
  if (d)
    g_dir_close(d);
  g_assert_cmpint(moved, ==, 8);
  const char *a4[] = {"simulate", dir, "--network", dgx1, NULL};
  g_assert_cmpint(wisp2(a4, &out, &err), ==, 0);
  test_expect_has(err, "wisp: linked with Kineto: 64 collective(s) linked, sizes equal 64, sizes differ 0, kinds differ 0");
  /* These Kineto files (PyTorch of 2023) carry no Record function id, so
   * the rf_id join (pyt_et_rfid.c) falls back to position, and says so. */
  test_expect_has(err, "no rf_id join (linked by position instead): ");
  test_expect_has(err, "carries no \"Record function id\" (PyTorch before 2.1 writes none)");
  test_expect_has(err, "8 of 8 collective(s) linked by position to the Kineto graph's 8, 8 of equal size");
  test_expect_has(out, ": 8 ranks;");
  g_free(out);
  g_free(err);
  /* HTA's A100 rank (README: 21 NCCL kernels, ProfilerStep#4..6): the
   * dgx-a100 preset is chosen for its device, and the default --steps all
   * fits all 21 calls (the former one-step default used 7). */
  char *nccl = g_build_filename(sd, "hta/nccl_parser_config/nccl_data.json.gz", NULL);
  char *a100 = src_path("presets/dgx-a100.yaml");
  if (g_file_test(a100, G_FILE_TEST_EXISTS)) {
    const char *a5[] = {"calibrate", nccl, "--replicate-from", "0", "-o", yaml, "--summary", "--no-baseline", NULL};
    g_assert_cmpint(wisp2(a5, &out, &err), ==, 0);
    want = g_strdup_printf("cluster: %s (chosen for the trace's device 'NVIDIA A100-PG509-200'; give --network for "
                           "another); preset resized from 32 to the workload's 2 ranks", a100);
    test_expect_has(out, want);
    g_free(want);
    test_expect_has(err, "wisp: steps: ProfilerStep#4..#6 (--steps all: 3 step(s) of 3 on rank 0; none dropped)\n");
    test_expect_has(out, "calibration: 21 of 21 collective instances used");
    g_free(out);
    g_free(err);
  } else {
    g_test_message("SKIP: presets/dgx-a100.yaml absent; the A100 default is unchecked");
  }
  g_free(nccl);
  g_free(a100);
  test_rm_rf(tmp);
  g_free(tmp);
  g_free(dir);
  g_free(pet);
  g_free(yaml);
  g_free(dgx1);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/input_cli/network_spellings", test_network_spellings);
  g_test_add_func("/input_cli/steps", test_steps);
  g_test_add_func("/input_cli/calibrate_cluster", test_calibrate_cluster);
  g_test_add_func("/input_cli/comm_group", test_comm_group);
  g_test_add_func("/input_cli/several_inputs", test_several_inputs);
  g_test_add_func("/input_cli/inspect", test_inspect);
  g_test_add_func("/input_cli/dlrm", test_dlrm);
  return g_test_run();
}
