/* test_sensitivity_sign.c: the sign of every what-if on the shipped
 * presets.  A what-if that improves one tier (its latency halved, or its
 * bandwidth doubled) must never make a collective slower while NCCL runs
 * the same (algorithm, protocol) as before: with the choice held, time is
 * a sum of latencies and of bytes over shares of bandwidth, each of which
 * can only shrink.  (With the choice free, NCCL's tuner may switch to a
 * schedule that is slower on the machine, as the real library does: on
 * dgx-h100 at 32 ranks, bandwidth doubled, a 16 MiB broadcast switches
 * from ring/LL128 to ring/Simple, 129.0 -> 143.5 us; that is the tuner's
 * call, not a sign error, so it is not checked here.)
 *
 * The bug this guards against: the NCCL plan took the route latency off
 * its per-hop latency once per step NCCL's model counts, more than the
 * simulation charges, so lower latency made collectives slower (32
 * dgx-a100 nodes, 24 KiB all-reduce: 81.9 us at latency 0, 61.9 us at
 * 1 us; test_coll_nccl /coll/nccl/latency-monotone has that case).
 *
 * Cases: the presets dgx-a100, dgx-h100, perlmutter and gb200-nvl72, 32
 * ranks each (perlmutter's 16); every tier alone; all-reduce, all-gather, reduce-scatter,
 * all-to-all and broadcast at 8 KiB, 1 MiB and 64 MiB; both network
 * tiers (analytical and flow).  Needs G_TEST_SRCDIR (make check). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "collectives/coll.h"
#include "collectives/libraries/nccl/coll_nccl.h"
#include "test_util.h"

/* The preset's text with dims entry `dim` changed: its latency halved
 * (lat) or its bandwidth doubled (!lat).  The entries are the lines that
 * start with "  - {name:" in the order they appear. */
static char *vary(const char *text, int dim, gboolean lat)
{
  GString *out = g_string_new(NULL);
  char **lines = g_strsplit(text, "\n", -1);
  int k = -1;
  for (int i = 0; lines[i]; i++) {
    const char *ln = lines[i];
    if (g_str_has_prefix(ln, "  - {name:"))
      k++;
    const char *key = lat ? "latency: " : "bandwidth: ";
    const char *p = (k == dim && g_str_has_prefix(ln, "  - {name:")) ? strstr(ln, key) : NULL;
    if (p == NULL) {
      g_string_append(out, ln);
    } else {
      p += strlen(key);
      char *end = NULL;
      double v = g_ascii_strtod(p, &end);
      g_assert_true(end != p && v > 0);
      g_string_append_len(out, ln, p - ln);
      char num[64];
      g_ascii_formatd(num, sizeof num, "%.6g", lat ? v / 2 : v * 2);
      g_string_append(out, num);
      g_string_append(out, end);
    }
    if (lines[i + 1])
      g_string_append_c(out, '\n');
  }
  g_strfreev(lines);
  return g_string_free(out, FALSE);
}

/* One collective's time on `t` (tier), NCCL's choice forced to
 * (algo, proto) unless they are AUTO; the choice made into *info. */
static sim_time_ps measure(const topo *t, net_tier tier, int algo, int proto, const coll_desc *d, coll_info *info)
{
  GError *error = NULL;
  coll_policy *pol = coll_policy_new_from_topo(t, &error);
  g_assert_no_error(error);
  coll_library_params lib = *coll_policy_library(pol);
  g_assert_cmpint(lib.kind, ==, COLL_LIBRARY_NCCL);
  lib.nccl_algo = algo;
  lib.nccl_proto = proto;
  coll_policy_set_library(pol, &lib);
  sim_time_ps ps = 0;
  g_assert_true(coll_measure(t, tier, pol, d, &ps, info, &error));
  g_assert_no_error(error);
  coll_policy_free(pol);
  return ps;
}

static void test_preset(gconstpointer data)
{
  const char *name = data;
  if (g_getenv("G_TEST_SRCDIR") == NULL) {
    g_test_skip("G_TEST_SRCDIR not set (run through make check)");
    return;
  }
  char *file = g_strconcat(name, ".yaml", NULL);
  char *path = g_build_filename(g_getenv("G_TEST_SRCDIR"), "presets", file, NULL);
  char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  static const et_coll_type ops[] = { ET_COLL_ALL_REDUCE, ET_COLL_ALL_GATHER, ET_COLL_REDUCE_SCATTER,
                                      ET_COLL_ALL_TO_ALL, ET_COLL_BROADCAST };
  static const uint64_t sizes[] = { 8192, 1u << 20, 64u << 20 };
  int ranks[32];
  for (int i = 0; i < 32; i++)
    ranks[i] = i;
  GError *error = NULL;
  topo *t0 = topo_load_string(text, path, &error);
  g_assert_no_error(error);
  int n_dims = topo_n_dims(t0), n = MIN(32, topo_n_ranks(t0));
  unsigned checked = 0;
  for (int tier = NET_TIER_ANALYTICAL; tier <= NET_TIER_FLOW; tier++)
    for (int dim = 0; dim < n_dims; dim++)
      for (int lat = 0; lat < 2; lat++) {
        char *vt = vary(text, dim, lat);
        topo *t1 = topo_load_string(vt, path, &error);
        g_assert_no_error(error);
        for (size_t o = 0; o < G_N_ELEMENTS(ops); o++)
          for (size_t s = 0; s < G_N_ELEMENTS(sizes); s++) {
            coll_desc d = { .type = ops[o], .bytes = sizes[s], .ranks = ranks, .n_ranks = n,
                            .root = ops[o] == ET_COLL_BROADCAST ? 0 : -1 };
            coll_info info;
            sim_time_ps base = measure(t0, (net_tier)tier, COLL_NALGO_AUTO, COLL_PROTO_AUTO, &d, &info);
            coll_info info1;
            sim_time_ps better = measure(t1, (net_tier)tier, info.nccl_algo, info.proto, &d, &info1);
            g_assert_cmpint(info1.nccl_algo, ==, info.nccl_algo);
            g_assert_cmpint(info1.proto, ==, info.proto);
            if (better > base)
              (getenv("SENS_ALL") ? g_test_message : g_test_fail_printf)("%s, %s tier, %s of tier %s %s: %s of %" G_GUINT64_FORMAT " B got slower with the "
                                 "same choice (%s): %.3f -> %.3f us", name, net_tier_name((net_tier)tier),
                                 lat ? "latency" : "bandwidth", topo_dim_name(t0, dim), lat ? "halved" : "doubled",
                                 et_coll_type_name(ops[o]), sizes[s], info.detail, base / 1e6, better / 1e6);
            checked++;
          }
        topo_free(t1);
        g_free(vt);
      }
  g_test_message("%s: %u cases (tier x tier's dims x {latency/2, bandwidth x2} x 5 collectives x 3 sizes)", name,
                 checked);
  topo_free(t0);
  g_free(text);
  g_free(path);
  g_free(file);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_data_func("/sensitivity-sign/dgx-a100", "dgx-a100", test_preset);
  g_test_add_data_func("/sensitivity-sign/dgx-h100", "dgx-h100", test_preset);
  g_test_add_data_func("/sensitivity-sign/perlmutter", "perlmutter", test_preset);
  g_test_add_data_func("/sensitivity-sign/gb200-nvl72", "gb200-nvl72", test_preset);
  return g_test_run();
}
