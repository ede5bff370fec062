/* test_cal_workload.h: the calibration CLI tests' Chakra workload, shared
 * by test_cal_cli.c and test_input_cli.c (both link chakra).  Header-only,
 * like test_util.h. */
#ifndef WISP_TEST_CAL_WORKLOAD_H
#define WISP_TEST_CAL_WORKLOAD_H

#include <math.h>

#include "chakra/et_io.h"

/* Writes DIR/trace.<r>.et for 8 ranks: world all-reduces of 1, 4, 16 and
 * 64 MiB measured at T = 14 x 2 us + 1.75 S / 100 GB/s (ring, n = 8:
 * 2(n-1) = 14 steps, bus bytes 2(n-1)/n S = 1.75 S), or zero-byte ones. */
static void test_write_cal_workload(const char *dir, gboolean zero_bytes)
{
  et_workload *w = et_workload_new(8, "cli");
  for (int r = 0; r < 8; r++) {
    et_builder *b = et_builder_new("cli");
    sim_time_ps clock = 0;
    for (int k = 0; k < 4; k++) {
      uint64_t s = zero_bytes ? 0 : (uint64_t)1048576 << (2 * k);
      sim_time_ps d = (sim_time_ps)llround(14 * 2e6 + 1.75 * (double)s * 1e12 / 100e9);
      uint32_t i = et_builder_add_node(b, (uint64_t)k, ET_NODE_COMM_COLL, "all_reduce", d, 0);
      et_builder_set_start(b, i, clock);
      clock += d + SIM_PS_PER_US;
      et_comm c = { .bytes = s, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = -1, .dst = -1, .tag = -1,
                    .root = -1, .coll = ET_COLL_ALL_REDUCE };
      et_builder_set_comm(b, i, &c, NULL, NULL, 0);
      if (k > 0)
        et_builder_add_dep(b, i, (uint64_t)(k - 1), TRUE, FALSE);
    }
    GError *error = NULL;
    w->ranks[r] = et_builder_finish(b, 0, &error);
    g_assert_no_error(error);
  }
  GError *error = NULL;
  g_assert_true(et_workload_write(w, dir, "trace", &error));
  g_assert_no_error(error);
  et_workload_free(w);
}

#endif
