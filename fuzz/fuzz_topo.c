/* fuzz_topo.c: libFuzzer harness for the topology loader (topologies/topo_load.c).
 *
 * Each input is the text of a config file (NUL-terminated copy; an embedded
 * NUL ends it) given to topo_load_string_bounded, which detects wisp YAML or
 * ASTRA-sim network.yml by its keys.  The bound is 2^20 links (40 MiB): the
 * default 2^24 admits a 100-byte config (a fully connected dimension of
 * 4,096) that takes 12 s and 790 MB under the sanitizers, past the 10 s
 * per-input timeout, and such inputs test nothing the smaller ones do not.  A topology that loads is then used
 * the way the simulator uses it: the hierarchical view of every dimension,
 * a few routes with their cost (first/last, last/first, first/middle and a
 * repeat to hit the route cache), the bisection bandwidth and, for
 * topologies of at most 4096 nodes and 65,536 links, the text and Graphviz
 * printers (to /dev/null; a fully connected 1,024 has 1 M links, whose
 * printing takes 6 s under the sanitizers).  Errors are expected and must be WISP_ERROR; crashes, leaks,
 * hangs and sanitizer reports are bugs.  Build and run with fuzz/run.sh.
 */
#include "config.h"

#include "topologies/topo.h"
#include "fuzz/fuzz_util.h"

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *null_out;

static void check_route(const topo *t, int a, int b)
{
  uint32_t n = 0;
  const uint32_t *links = topo_route(t, a, b, &n);
  g_assert(a != b || n == 0);
  for (uint32_t i = 0; i < n; i++)
    g_assert(links[i] < topo_n_links(t));
  sim_time_ps lat;
  wisp_bw_Bps bw;
  topo_route_cost(t, a, b, &lat, &bw);
  g_assert(lat >= 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size > 1 << 16)
    return 0; /* configs are small; keep the search on the grammar */
  if (!null_out)
    null_out = fopen("/dev/null", "w");
  char *text = g_strndup((const char *) data, size);
  GError *error = NULL;
  topo *t = topo_load_string_bounded(text, "fuzz.yaml", UINT64_C(1) << 20, &error);
  g_free(text);
  if (!t) {
    g_assert(error != NULL && error->domain == WISP_ERROR);
    g_error_free(error);
    return 0;
  }
  g_assert(error == NULL);
  int n = topo_n_ranks(t);
  g_assert(n >= 1);
  for (int d = 0; d < topo_n_dims(t); d++) {
    int shape[3];
    int axes = topo_dim_shape(t, d, shape);
    g_assert(axes >= 1 && axes <= 3);
    (void) topo_dim_name(t, d);
    (void) topo_dim_kind(t, d);
    g_assert(topo_dim_size(t, d) >= 1);
    g_assert(topo_rank_coord(t, n - 1, d) < topo_dim_size(t, d));
  }
  g_assert(topo_rank_endpoint(t, n - 1) < topo_n_endpoints(t));
  check_route(t, 0, n - 1);
  check_route(t, n - 1, 0);
  check_route(t, 0, n / 2);
  check_route(t, 0, n - 1);
  (void) topo_bisection_bw(t);
  (void) cfg_get_or_default(topo_config(t), "model");
  int line;
  (void) cfg_get(topo_config(t), "collectives.all_reduce", &line);
  if (null_out && topo_n_nodes(t) <= 4096 && topo_n_links(t) <= 1u << 16) {
    topo_print(t, null_out);
    topo_print_dot(t, null_out);
    topo_print_route(t, 0, n - 1, null_out);
  }
  topo_free(t);
  return 0;
}
