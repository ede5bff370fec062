/* sim_levers.h: compute, host and straggler levers of a replay (prefix
 * sim_levers_, sim_kernel_).
 *
 * A lever changes the workload the replay runs, node by node, as the node
 * starts: its recorded duration is multiplied by a factor.  No formula
 * stands beside the simulation: a what-if "compute 2x faster" is the
 * replay of the same graphs with every GPU kernel running half as long,
 * so waits, overlap and the network respond as they would.
 *
 *  - compute: every GPU kernel (COMP node that is neither is_cpu_op nor an
 *    idle gap, ET_FLAG_DELAY) runs `speedup` times faster;
 *  - compute:CLASS: only the kernels of one class (sim_kernel_classify:
 *    gemm, elementwise, comm_adjacent; rules in doc/studies.md "Kernel
 *    classes");
 *  - host: every CPU node (is_cpu_op: the host launch model's launch
 *    calls, host gaps and sync return overheads, doc/kineto.md) runs
 *    `speedup` times faster;
 *  - slow ranks: rank R's GPU kernels take F times as long (F > 1 a
 *    straggler), given one by one (R=F) and/or drawn per rank from a
 *    seeded distribution (lognormal or uniform).
 * Idle gaps (ET_FLAG_DELAY without is_cpu_op: measured idle no modelled
 * dependency explains) and communication replayed for its measured time
 * are never changed.
 *
 * The struct is a plain value (no pointers), so replay options carrying it
 * copy freely (sweeps copy options per point); all zero means no change.
 */
#ifndef WISP_SIM_LEVERS_H
#define WISP_SIM_LEVERS_H

#include "chakra/et_graph.h"

G_BEGIN_DECLS

typedef enum {
  SIM_KERNEL_GEMM,          /* matrix multiply, convolution and attention kernels */
  SIM_KERNEL_ELEMENTWISE,   /* memory-bound kernels: everything else */
  SIM_KERNEL_COMM_ADJACENT, /* kernels that prepare or finish communication (packing, copies into
                               collective buffers, MoE dispatch/combine, communication kernels
                               recorded as compute) */
  SIM_KERNEL_CLASS_COUNT
} sim_kernel_class;

/* "gemm", "elementwise", "comm_adjacent". */
const char *sim_kernel_class_name(sim_kernel_class c);
gboolean sim_kernel_class_from_name(const char *s, sim_kernel_class *out);
/* The class of a GPU kernel by its name (case-insensitive substring rules,
 * the one place they live; doc/studies.md "Kernel classes"):
 * comm_adjacent first, then gemm, else elementwise.  O(length of name). */
sim_kernel_class sim_kernel_classify(const char *name);
/* Whether the name matches a rule of some class, the elementwise class's
 * own names included (normalisation, activations, reductions, copies,
 * optimizer, ...; doc/studies.md "Kernel classes").  A kernel that matches
 * none is still elementwise for the levers, but its name does not say it
 * is: the metrics call it unclassified.  O(length of name x rules). */
gboolean sim_kernel_named(const char *name);

#define SIM_LEVERS_MAX_SLOW 64

typedef enum { SIM_SLOW_DIST_NONE, SIM_SLOW_DIST_LOGNORMAL, SIM_SLOW_DIST_UNIFORM } sim_slow_dist;

typedef struct {
  double compute;                     /* speedup of every GPU kernel; 0 = unchanged */
  double kernel[SIM_KERNEL_CLASS_COUNT]; /* speedup per class; 0 = unchanged (multiplies with compute) */
  double host;                        /* speedup of CPU nodes; 0 = unchanged */
  int n_slow;                         /* explicit slowdowns */
  int slow_rank[SIM_LEVERS_MAX_SLOW];
  double slow_factor[SIM_LEVERS_MAX_SLOW];
  sim_slow_dist dist;                 /* per-rank factors drawn from a distribution */
  double dist_param;                  /* lognormal: sigma; uniform: max (factor in [1, 1 + max)) */
  uint64_t seed;
} sim_levers;

/* TRUE when some lever changes a duration. */
gboolean sim_levers_active(const sim_levers *l);
/* Sets the speedup of a utility resource / sweep key: "compute",
 * "compute:CLASS" or "host"; speedup > 0. */
gboolean sim_levers_set_speedup(sim_levers *l, const char *key, double speedup, GError **error);
/* Adds "R=F" (rank R, factor F > 0; a later R=F for the same rank
 * replaces it); "none" clears the explicit slowdowns. */
gboolean sim_levers_add_slow_rank(sim_levers *l, const char *spec, GError **error);
/* "lognormal:sigma=S[,seed=N]", "uniform:max=M[,seed=N]" or "none". */
gboolean sim_levers_set_slow_ranks(sim_levers *l, const char *spec, GError **error);
/* Per-rank compute factors (explicit slowdowns times the distribution's
 * draw): n_ranks doubles (g_free), or NULL when every factor is 1.  Rank
 * r's draw depends on (seed, r) only, so a rank keeps its factor at any
 * rank count.  Explicit ranks >= n_ranks are an error.  O(n_ranks). */
double *sim_levers_rank_factors(const sim_levers *l, int n_ranks, GError **error);
/* The factor a node's duration is multiplied by on rank `rank`
 * (rank_factor: that rank's entry of sim_levers_rank_factors, 1 when
 * none); klass is the kernel's class (only read for GPU kernels). */
double sim_levers_node_factor(const sim_levers *l, const et_node *n, sim_kernel_class klass, double rank_factor);
/* One line describing the active levers ("compute x2; slow rank 3 x1.2"),
 * "" when none (g_free). */
char *sim_levers_describe(const sim_levers *l);

G_END_DECLS
#endif
