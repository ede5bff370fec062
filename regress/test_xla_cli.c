/* test_xla_cli.c: `wisp inspect` / `wisp convert` for XLA profiles
 * (cli/cmd_xla.c), called as functions.  The conversion of the real
 * profile is read back with the Chakra reader: the round trip must keep
 * 4 ranks with 3 all-reduce of 5*1024*1024*256*4 B each (doc/xla.md). */
#include "config.h"
#include "regress/test_util.h"

#include "chakra/et_io.h"
#include "frontends/xla.h"

#include <glib/gstdio.h>
#include <string.h>

static char *real_path(void)
{
  const char *d = g_getenv("WISP_SHARED_DATA");
  char *p = d ? g_build_filename(d, "xprof", "test_xplanes", "tpu_inference_2.xplane.pb", NULL) : NULL;
  if (p && !g_file_test(p, G_FILE_TEST_EXISTS)) {
    g_free(p);
    p = NULL;
  }
  return p;
}

static void test_usage(void)
{
  char *a1[] = {"inspect", NULL};
  g_assert_cmpint(wisp_xla_inspect(1, a1), ==, 2);          /* no profile given */
  char *a2[] = {"convert", "x.xplane.pb", NULL};
  g_assert_cmpint(wisp_xla_convert(2, a2), ==, 2);          /* no -o */
  char *a3[] = {"inspect", "--step", "-4", "x.xplane.pb", NULL};
  g_assert_cmpint(wisp_xla_inspect(4, a3), ==, 2);
  char *a4[] = {"inspect", "/nonexistent/a.xplane.pb", NULL};
  g_assert_cmpint(wisp_xla_inspect(2, a4), ==, 1);          /* missing input */
  /* dispatch: XLA inputs are recognised, Kineto's *.pt.trace.json are not */
  char *d1[] = {"inspect", "--strict", "h0.xplane.pb.gz", NULL};
  g_assert_true(fe_xla_wants(3, d1));
  char *d2[] = {"inspect", "w0.pt.trace.json.gz", NULL};
  g_assert_false(fe_xla_wants(2, d2));
  char *d3[] = {"inspect", "host.trace.json.gz", NULL};
  g_assert_true(fe_xla_wants(2, d3));
}

static void test_real_convert(void)
{
  char *path = real_path();
  if (!path) {
    test_skip_absent("xprof/test_xplanes/tpu_inference_2.xplane.pb");
    return;
  }
  char *dir = g_dir_make_tmp("wisp-test-xla-cli-XXXXXX", NULL);
  char *in = g_build_filename(dir, "in", NULL);
  char *out = g_build_filename(dir, "out", NULL);
  g_assert_cmpint(g_mkdir(in, 0755), ==, 0);
  /* A directory input: its *.xplane.pb files are used. */
  char *link = g_build_filename(in, "host0.xplane.pb", NULL);
  g_assert_cmpint(symlink(path, link), ==, 0);
  g_assert_true(fe_xla_wants(2, (char *[]){"convert", in, NULL}));
  char *args[] = {"convert", "-o", out, in, NULL};
  g_assert_cmpint(wisp_xla_convert(4, args), ==, 0);
  GError *err = NULL;
  et_workload *w = et_workload_load(out, 0, &err);
  g_assert_no_error(err);
  g_assert_cmpint(w->n_ranks, ==, 4);
  const uint64_t want = UINT64_C(5) * 1024 * 1024 * 256 * 4;
  for (int r = 0; r < 4; r++) {
    int n = 0;
    for (uint32_t i = 0; i < w->ranks[r]->n_nodes; i++) {
      const et_comm *cm = et_node_comm(w->ranks[r], i);
      if (cm) {
        g_assert_cmpint(cm->coll, ==, ET_COLL_ALL_REDUCE);
        g_assert_cmpuint(cm->bytes, ==, want);
        n++;
      }
    }
    g_assert_cmpint(n, ==, 3);
  }
  et_workload_free(w);
  /* --for astra-sim: one compute slot, whole-us compute, and the three
   * all-reduces, which this profile replays (its replica groups are
   * incomplete), as replayed BROADCASTs of whole microseconds (ASTRA-sim
   * replays BROADCAST for duration_micros; the rewrite itself is checked
   * in regress/test_et_astra). */
  char *aout = g_build_filename(dir, "astra", NULL);
  char *aargs[] = {"convert", "-o", aout, "--for", "astra-sim", in, NULL};
  g_assert_cmpint(wisp_xla_convert(6, aargs), ==, 0);
  w = et_workload_load(aout, 0, &err);
  g_assert_no_error(err);
  g_assert_cmpint(w->n_ranks, ==, 4);
  for (int r = 0; r < 4; r++) {
    int n = 0;
    g_assert_cmpuint(w->ranks[r]->compute_slots, ==, 1);
    for (uint32_t i = 0; i < w->ranks[r]->n_nodes; i++) {
      if (strcmp(et_node_name(w->ranks[r], i), "all-reduce") == 0) {
        const et_comm *cm = et_node_comm(w->ranks[r], i);
        g_assert_nonnull(cm);
        g_assert_cmpuint(cm->coll, ==, ET_COLL_BROADCAST);
        g_assert_true(w->ranks[r]->nodes[i].flags & ET_FLAG_REPLAY);
        g_assert_cmpint(w->ranks[r]->nodes[i].duration_ps % SIM_PS_PER_US, ==, 0);
        n++;
      }
      if (w->ranks[r]->nodes[i].type == ET_NODE_COMP)
        g_assert_cmpint(w->ranks[r]->nodes[i].duration_ps % SIM_PS_PER_US, ==, 0);
    }
    g_assert_cmpint(n, ==, 3);
  }
  et_workload_free(w);
  test_rm_rf(aout);
  g_free(aout);
  char *iargs[] = {"inspect", link, NULL};
  g_assert_cmpint(wisp_xla_inspect(2, iargs), ==, 0);
  /* strict fails on the incomplete groups */
  char *sargs[] = {"inspect", "--strict", link, NULL};
  g_assert_cmpint(wisp_xla_inspect(3, sargs), ==, 1);
  /* clean up */
  GDir *d = g_dir_open(out, 0, NULL);
  const char *e;
  while ((e = g_dir_read_name(d))) {
    char *f = g_build_filename(out, e, NULL);
    g_unlink(f);
    g_free(f);
  }
  g_dir_close(d);
  g_rmdir(out);
  g_unlink(link);
  g_rmdir(in);
  g_rmdir(dir);
  g_free(link);
  g_free(in);
  g_free(out);
  g_free(dir);
  g_free(path);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/xla-cli/usage", test_usage);
  g_test_add_func("/xla-cli/real-convert", test_real_convert);
  return g_test_run();
}
