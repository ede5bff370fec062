/* allreduce_et.h: the one-all-reduce Chakra workload that CLI tests
 * (test_hostile_cli, test_hostile_input_cli, test_hostile_output_cli,
 * test_input_cli) write, in one place (header only; the test links
 * chakra/libwisp_et.la).  Each of n ranks runs one world all-reduce of
 * `bytes` measured at 10 us, then, when gemm_us > 0, a gemm of gemm_us;
 * written as DIR/PREFIX.<rank>.et.  Aborts the test on any error.
 * O(n). */
#ifndef WISP_REGRESS_ALLREDUCE_ET_H
#define WISP_REGRESS_ALLREDUCE_ET_H

#include "chakra/et_io.h"

#include <glib.h>

G_GNUC_UNUSED static void test_write_allreduce(const char *dir, const char *prefix, int n, uint64_t bytes,
                                                  int gemm_us)
{
  et_workload *w = et_workload_new(n, "cli");
  for (int r = 0; r < n; r++) {
    et_builder *b = et_builder_new("cli");
    uint32_t i = et_builder_add_node(b, 0, ET_NODE_COMM_COLL, "all_reduce", 10 * SIM_PS_PER_US, 0);
    et_comm c = { .bytes = bytes, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = -1, .dst = -1, .tag = -1,
                  .root = -1, .coll = ET_COLL_ALL_REDUCE };
    et_builder_set_comm(b, i, &c, NULL, NULL, 0);
    if (gemm_us > 0)
      et_builder_add_node(b, 1, ET_NODE_COMP, "gemm", gemm_us * SIM_PS_PER_US, 0);
    GError *error = NULL;
    w->ranks[r] = et_builder_finish(b, 0, &error);
    g_assert_no_error(error);
  }
  GError *error = NULL;
  g_assert_true(et_workload_write(w, dir, prefix, &error));
  g_assert_no_error(error);
  et_workload_free(w);
}

#endif
