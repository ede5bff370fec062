/* make_dp.c: generates a data-parallel training step of N ranks as Chakra
 * ET files (used by examples/multi-job/run.sh and the multi-job tests).
 *
 * Every rank runs L = 8 layers forward (1 ms each), then backward in
 * reverse (2 ms each); each layer's gradients (64 MiB, bf16 shards of a
 * ~34 M-parameter layer) are all-reduced over the world as soon as its
 * backward ends, overlapping the remaining backward compute; the optimizer
 * step (1 ms) waits for every all-reduce.  Round figures for an A100-class
 * GPU: the workload is synthetic.
 *
 * Usage: make_dp OUTDIR PREFIX N_RANKS
 */
#include "config.h"
#include "chakra/et_io.h"

#include <stdio.h>
#include <stdlib.h>

enum { L = 8 };

static const uint64_t grad_bytes = 64ull << 20;
static const sim_time_ps fwd_ps = 1000 * SIM_PS_PER_US, bwd_ps = 2000 * SIM_PS_PER_US,
                         opt_ps = 1000 * SIM_PS_PER_US;

static et_graph *make_rank(GError **error)
{
  et_builder *b = et_builder_new("examples/make_dp");
  et_builder_set_version(b, "0.0.4");
  uint64_t id = 0, last = 0, ar[L];
  char name[64];
  for (int l = 0; l < L; l++) {
    g_snprintf(name, sizeof name, "fwd_gemm_layer%d", l);
    uint32_t n = et_builder_add_node(b, ++id, ET_NODE_COMP, name, fwd_ps, 0);
    if (last)
      et_builder_add_dep(b, n, last, TRUE, FALSE);
    last = id;
  }
  for (int l = L - 1; l >= 0; l--) {
    g_snprintf(name, sizeof name, "bwd_gemm_layer%d", l);
    uint32_t n = et_builder_add_node(b, ++id, ET_NODE_COMP, name, bwd_ps, 0);
    et_builder_add_dep(b, n, last, TRUE, FALSE);
    last = id;
    g_snprintf(name, sizeof name, "dp_allreduce_grad_layer%d", l);
    n = et_builder_add_node(b, ++id, ET_NODE_COMM_COLL, name, 0, 0);
    et_comm c = {.bytes = grad_bytes, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = -1, .dst = -1,
                 .tag = -1, .root = -1, .coll = ET_COLL_ALL_REDUCE};
    et_builder_set_comm(b, n, &c, NULL, NULL, 0);
    et_builder_add_dep(b, n, last, TRUE, FALSE);
    ar[l] = id;
  }
  uint32_t n = et_builder_add_node(b, ++id, ET_NODE_COMP, "optimizer_step", opt_ps, 0);
  et_builder_add_dep(b, n, last, TRUE, FALSE);
  for (int l = 0; l < L; l++)
    et_builder_add_dep(b, n, ar[l], TRUE, FALSE);
  return et_builder_finish(b, ET_BUILD_STRICT, error);
}

int main(int argc, char **argv)
{
  int n = argc == 4 ? atoi(argv[3]) : 0;
  if (n < 1 || n > 65536) {
    fprintf(stderr, "usage: make_dp OUTDIR PREFIX N_RANKS (1 to 65536)\n");
    return 2;
  }
  GError *error = NULL;
  et_workload *w = et_workload_new(n, "examples/make_dp");
  for (int r = 0; r < n; r++)
    if ((w->ranks[r] = make_rank(&error)) == NULL) {
      fprintf(stderr, "make_dp: %s\n", error->message);
      return 1;
    }
  if (!et_workload_resolve_groups(w, &error) || !et_workload_write(w, argv[1], argv[2], &error)) {
    fprintf(stderr, "make_dp: %s\n", error->message);
    return 1;
  }
  et_workload_free(w);
  return 0;
}
