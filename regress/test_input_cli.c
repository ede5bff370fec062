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

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/input_cli/network_spellings", test_network_spellings);
  return g_test_run();
}
