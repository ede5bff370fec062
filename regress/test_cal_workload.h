/* test_cal_workload.h: the calibration tests' Chakra workloads, shared by
 * test_cal_cli.c, test_input_cli.c and test_cal_share.c (all link
 * chakra).  Header-only, like test_util.h. */
#ifndef WISP_TEST_CAL_WORKLOAD_H
#define WISP_TEST_CAL_WORKLOAD_H

#include <math.h>

#include "chakra/et_io.h"

/* One rank's chain of n world all-reduces: the k-th of bytes[k], measured
 * at dur[k], node id k, after node k-1, started 1 us after it ends; the
 * graph (asserts on error), *end_ps = the last end + 1 us. */
static G_GNUC_UNUSED et_graph *test_cal_allreduce_chain(const uint64_t *bytes, const sim_time_ps *dur, int n,
                                                        sim_time_ps *end_ps)
{
  et_builder *b = et_builder_new("cli");
  sim_time_ps clock = 0;
  for (int k = 0; k < n; k++) {
    uint32_t i = et_builder_add_node(b, (uint64_t)k, ET_NODE_COMM_COLL, "all_reduce", dur[k], 0);
    et_builder_set_start(b, i, clock);
    clock += dur[k] + SIM_PS_PER_US;
    et_comm c = { .bytes = bytes[k], .group = ET_GROUP_WORLD, .split = ET_NONE, .src = -1, .dst = -1, .tag = -1,
                  .root = -1, .coll = ET_COLL_ALL_REDUCE };
    et_builder_set_comm(b, i, &c, NULL, NULL, 0);
    if (k > 0)
      et_builder_add_dep(b, i, (uint64_t)(k - 1), TRUE, FALSE);
  }
  GError *error = NULL;
  et_graph *g = et_builder_finish(b, 0, &error);
  g_assert_no_error(error);
  *end_ps = clock;
  return g;
}

/* Writes DIR/trace.<r>.et for 8 ranks: world all-reduces of 1, 4, 16 and
 * 64 MiB measured at T = 14 x 2 us + 1.75 S / 100 GB/s (ring, n = 8:
 * 2(n-1) = 14 steps, bus bytes 2(n-1)/n S = 1.75 S), or zero-byte ones. */
static G_GNUC_UNUSED void test_write_cal_workload(const char *dir, gboolean zero_bytes)
{
  et_workload *w = et_workload_new(8, "cli");
  uint64_t s[4];
  sim_time_ps d[4], end = 0;
  for (int k = 0; k < 4; k++) {
    s[k] = zero_bytes ? 0 : (uint64_t)1048576 << (2 * k);
    d[k] = (sim_time_ps)llround(14 * 2e6 + 1.75 * (double)s[k] * 1e12 / 100e9);
  }
  for (int r = 0; r < 8; r++)
    w->ranks[r] = test_cal_allreduce_chain(s, d, 4, &end);
  GError *error = NULL;
  g_assert_true(et_workload_write(w, dir, "trace", &error));
  g_assert_no_error(error);
  et_workload_free(w);
}

#endif
