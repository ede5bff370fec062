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

#include "chakra/et_io.h"
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

static gboolean have_bin(void)
{
  if (g_getenv("WISP_BIN") && g_getenv("G_TEST_SRCDIR"))
    return TRUE;
  g_test_skip("WISP_BIN or G_TEST_SRCDIR not set (run through make check)");
  return FALSE;
}

/* Asserts that text contains line (golden check; prints both on failure). */
static void expect_has(const char *text, const char *line)
{
  if (strstr(text ? text : "", line) == NULL) {
    g_test_message("expected to find:\n%s\nin:\n%s", line, text ? text : "(null)");
    g_assert_nonnull(strstr(text ? text : "", line));
  }
}

static char *src_path(const char *rel)
{
  return g_build_filename(g_getenv("G_TEST_SRCDIR"), rel, NULL);
}

/* n ranks, one world all-reduce of `bytes` per rank measured at 10 us. */
static void write_allreduce(const char *dir, const char *prefix, int n, uint64_t bytes)
{
  et_workload *w = et_workload_new(n, "cli");
  for (int r = 0; r < n; r++) {
    et_builder *b = et_builder_new("cli");
    uint32_t i = et_builder_add_node(b, 0, ET_NODE_COMM_COLL, "all_reduce", 10 * SIM_PS_PER_US, 0);
    et_comm c = { .bytes = bytes, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = -1, .dst = -1, .tag = -1,
                  .root = -1, .coll = ET_COLL_ALL_REDUCE };
    et_builder_set_comm(b, i, &c, NULL, NULL, 0);
    GError *error = NULL;
    w->ranks[r] = et_builder_finish(b, 0, &error);
    g_assert_no_error(error);
  }
  GError *error = NULL;
  g_assert_true(et_workload_write(w, dir, prefix, &error));
  g_assert_no_error(error);
  et_workload_free(w);
}

/* Item 1: a preset by name or path, a wisp YAML and an ASTRA-sim
 * network.yml are accepted by topo, collbench and simulate; a preset is
 * resized to the workload and the resize is printed. */
static void test_network_spellings(void)
{
  if (!have_bin())
    return;
  char *tmp = g_dir_make_tmp("wisp-net-cli-XXXXXX", NULL);
  write_allreduce(tmp, "w", 8, 1 << 20);
  char *preset = src_path("presets/dgx-h100.yaml"), *astra = src_path("examples/networks/astra-fc4-switch2.yml");
  char *wisp_yaml = src_path("examples/networks/dgx1-v100.yaml");
  char *out = NULL, *err = NULL;

  /* wisp topo PRESET-FILE: before the fix "unknown key 'preset_version'". */
  const char *a1[] = {"topo", preset, NULL};
  g_assert_cmpint(wisp2(a1, &out, &err), ==, 0);
  expect_has(out, "topology dgx-h100\n");
  g_free(out);
  g_free(err);
  const char *a2[] = {"topo", "dgx-h100", NULL};
  g_assert_cmpint(wisp2(a2, &out, &err), ==, 0);
  expect_has(out, "topology dgx-h100\n");
  g_free(out);
  g_free(err);

  /* collbench --network NAME: the preset's nominal 8 x 4 = 32 ranks. */
  const char *a3[] = {"collbench", "--network", "dgx-h100", "--sizes", "1M", NULL};
  g_assert_cmpint(wisp2(a3, &out, &err), ==, 0);
  expect_has(out, "# wisp collbench: network dgx-h100, tier analytical, 32 ranks,");
  g_free(out);
  g_free(err);

  /* simulate --network PRESET-FILE on 8 ranks: the 'ib' tier of 4 nodes
   * shrinks to 8 / 8 = 1 node, and the command says so. */
  char *expect = g_strdup_printf("network %s: preset resized from 32 to the workload's 8 ranks (tier 'ib' 4 -> 1)\n",
                                 preset);
  const char *a4[] = {"simulate", tmp, "--network", preset, NULL};
  g_assert_cmpint(wisp2(a4, &out, &err), ==, 0);
  expect_has(out, expect);
  g_free(out);
  g_free(err);
  g_free(expect);
  /* --cluster is the same option. */
  const char *a5[] = {"simulate", tmp, "--cluster", "dgx-h100", NULL};
  g_assert_cmpint(wisp2(a5, &out, &err), ==, 0);
  expect_has(out, "network dgx-h100: preset resized from 32 to the workload's 8 ranks (tier 'ib' 4 -> 1)\n");
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
  expect_has(out, expect);
  g_free(expect);
  g_free(out);
  g_free(err);
  const char *a8[] = {"utility", tmp, "--network", preset, "-r", "scale_up_bw", NULL};
  g_assert_cmpint(wisp2(a8, &out, &err), ==, 0);
  g_free(out);
  g_free(err);

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
  if (!have_bin())
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
  expect_has(err, "wisp: steps: ProfilerStep#2..#4 (--steps all: 3 step(s) of 5 on rank 0; dropped as incomplete: "
                  "#5 (cut by the trace's end: nothing in the trace ends after its marker), #1 (launched no GPU "
                  "work))\n");
  expect_has(out, "measured step time: 300000.000 ns");
  g_free(out);
  g_free(err);
  /* The same trace with a CPU op after step 5: only #1 is dropped. */
  const char *a2[] = {"simulate", full, "--network", "dgx-h100", "--steps", "all", NULL};
  g_assert_cmpint(wisp2(a2, &out, &err), ==, 0);
  expect_has(err, "wisp: steps: ProfilerStep#2..#5 (--steps all: 4 step(s) of 5 on rank 0; dropped as incomplete: "
                  "#1 (launched no GPU work))\n");
  expect_has(out, "measured step time: 400000.000 ns");
  g_free(out);
  g_free(err);
  /* --steps A..B on utility: #2..#3 = 200 us, nothing dropped. */
  const char *a3[] = {"utility", full, "--network", "dgx-h100", "--steps", "2..3", "-r", "latency", NULL};
  g_assert_cmpint(wisp2(a3, &out, &err), ==, 0);
  expect_has(err, "wisp: steps: ProfilerStep#2..#3 (--steps 2..3: 2 step(s) of 5 on rank 0; none dropped)\n");
  expect_has(out, "measured step time:             0.200000 ms");
  g_free(out);
  g_free(err);
  /* inspect: the default is the last complete step (#4 on the cut trace),
   * --step N one step, --steps whole the whole trace. */
  const char *a4[] = {"inspect", cut, NULL};
  g_assert_cmpint(wisp2(a4, &out, &err), ==, 0);
  expect_has(out, "window: last complete ProfilerStep (#4 on rank 0; dropped as incomplete: #5 (cut by the trace's "
                  "end: nothing in the trace ends after its marker))\n");
  g_free(out);
  g_free(err);
  const char *a5[] = {"inspect", cut, "--step", "3", NULL};
  g_assert_cmpint(wisp2(a5, &out, &err), ==, 0);
  expect_has(out, "window: ProfilerStep#3 (--step)\n");
  g_free(out);
  g_free(err);
  const char *a6[] = {"inspect", cut, "--steps", "whole", NULL};
  g_assert_cmpint(wisp2(a6, &out, &err), ==, 0);
  expect_has(out, "window: whole trace (ProfilerStep ranges ignored on request)\n");
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
    expect_has(err, want);
    g_free(want);
    g_free(out);
    g_free(err);
  }
  /* sweep takes them too (checked before the spec's workload is read). */
  const char *a8[] = {"sweep", "--help", NULL};
  g_assert_cmpint(wisp2(a8, &out, &err), ==, 0);
  expect_has(out, "--steps=A..B|all|whole");
  g_free(out);
  g_free(err);
  /* A range with no step in it names the trace's steps. */
  const char *a9[] = {"simulate", cut, "--network", "dgx-h100", "--steps", "7..9", NULL};
  g_assert_cmpint(wisp2(a9, &out, &err), ==, 1);
  char *want = g_strdup_printf("wisp: error: %s: --steps 7..9: no ProfilerStep in that range (the trace has steps "
                               "1..5)\n", cut);
  expect_has(err, want);
  g_free(want);
  g_free(out);
  g_free(err);
  /* calibrate: every complete step by default (the note says so). */
  const char *a10[] = {"calibrate", full, "--cluster", "dgx-h100", "-o", cut, NULL};
  wisp2(a10, &out, &err);
  expect_has(err, "wisp: steps: ProfilerStep#2..#5 (--steps all: 4 step(s) of 5 on rank 0; dropped as incomplete: "
                  "#1 (launched no GPU work))\n");
  g_free(out);
  g_free(err);
  test_rm_rf(tmp);
  g_free(tmp);
  g_free(cut);
  g_free(full);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/input_cli/network_spellings", test_network_spellings);
  g_test_add_func("/input_cli/steps", test_steps);
  return g_test_run();
}
