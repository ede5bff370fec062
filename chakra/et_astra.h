/* et_astra.h: rewriting a workload so that ASTRA-sim replays it the way
 * wisp does (`wisp convert --for astra-sim`).
 *
 * ASTRA-sim's analytical frontend (astra-sim/astra-sim@518bd51,
 * astra-sim/workload/HardwareResource.cc and Workload.cc; see
 * doc/kineto.md and the reference astra-sim-compat.md §6) differs from
 * wisp's replay in ways a Chakra file can only work around:
 *   - per rank at most one GPU COMP node and one COMM node (SEND or
 *     collective; RECV takes no slot) run at once, and CPU nodes break its
 *     statistics;
 *   - wisp_delay is ignored, so an idle-gap node is compute that holds the
 *     compute slot, and gaps of several streams run one after another;
 *   - COMP durations are whole microseconds (duration_micros);
 *   - only pg_name "" or "0" (or none) is the all-rank group without a
 *     comm_group file.
 * et_astra_transform therefore first computes the baseline timeline: every
 * node as soon as its parents end, at its duration, gap nodes included
 * (wisp's replay of the graph without slot limits; for graphs from traces
 * this is the measured timeline as the graph serialises it).  It then
 * writes, per rank, one compute chain (every GPU COMP node in baseline
 * start order) and one communication chain (collectives and SENDs, in the
 * same order), and re-derives every idle gap against those chains: a node
 * is ready when the latest of its modelled predecessors (its graph parents
 * through removed gap and CPU nodes, plus its chain predecessor) ends on
 * the baseline timeline, and only the time from there to its baseline
 * start becomes a gap node, in the node's own chain, where the slot was
 * idle, so a single-slot feeder honours it.  Compute gaps are COMP nodes; gaps
 * in the communication chain are BROADCAST collectives with wisp_replay
 * (ASTRA-sim replays BROADCAST for duration_micros without peers; wisp
 * replays a wisp_replay node for its duration).  Gaps before RECV nodes
 * cannot be placed in a slot and are dropped (counted).  COMP durations,
 * gaps included, are rounded to whole microseconds with the rounding error
 * carried along each chain, so a chain's total stays within 0.5 us of the
 * measured one and both tools read the same durations.  The graphs carry
 * wisp_compute_slots = 1.  Collectives over every rank in rank order lose
 * their pg_name; other groups keep theirs (comm_group.json is then still
 * needed).  Communication wisp replays at its measured duration (no
 * usable size or group) becomes a BROADCAST with wisp_replay in the
 * communication chain, rounded like the gaps there.
 *
 * What the target cannot express is measured and reported: compute (and
 * communication) that ran concurrently on several streams is serialised;
 * the report gives that time per rank as sum(durations) - |union of
 * intervals| of each chain on the baseline timeline.
 *
 * Measured start times are not needed (written through when present).
 * Time O(N log N + E) per rank for N nodes and E edges (sorting each
 * chain), plus the kept-ancestor lists through removed nodes (their total
 * size, small when removed nodes have few parents); memory likewise.
 */
#ifndef WISP_ET_ASTRA_H
#define WISP_ET_ASTRA_H

#include "chakra/et_graph.h"

#include <stdio.h>

G_BEGIN_DECLS

typedef struct {
  int n_ranks;
  uint64_t removed_gap_nodes;     /* idle-gap (ET_FLAG_DELAY) nodes of the input */
  uint64_t removed_cpu_nodes;     /* CPU nodes contracted away (edges kept through them) */
  sim_time_ps removed_cpu_ps;     /* their summed durations */
  uint64_t comp_gaps, comm_gaps;  /* gap nodes written in the compute / communication chains */
  uint64_t dropped_recv_gaps;     /* gaps before RECV nodes, which have no slot */
  sim_time_ps dropped_recv_gap_ps;
  uint64_t replay_comm_as_broadcast; /* replayed communication written as replayed BROADCASTs */
  uint64_t world_collectives;     /* collectives written without pg_name */
  uint64_t group_collectives;     /* collectives that keep a sub-world pg_name */
  /* Concurrent time serialised, the worst rank and the sum over ranks. */
  sim_time_ps comp_serialised_max_ps, comm_serialised_max_ps;
  int comp_serialised_rank, comm_serialised_rank;
  sim_time_ps comp_serialised_sum_ps, comm_serialised_sum_ps;
  uint32_t max_measured_slots;    /* most compute nodes the profile ran at once on one rank */
  sim_time_ps max_step_ps;        /* longest measured step (for percentages); -1 when unknown */
  sim_time_ps rounding_max_ps;    /* worst |written - measured| total compute time of one rank */
} et_astra_report;

/* Returns a new workload rewritten as described above (w is not changed);
 * rep (may be NULL) is filled.  The measured steps and starts are copied.
 * Errors: a rank without a graph, or a graph the builder rejects.  O(sum over ranks of N log N + E). */
et_workload *et_astra_transform(const et_workload *w, et_astra_report *rep, GError **error);

/* Prints what the rewrite changed and what ASTRA-sim cannot express, one
 * item per line, each starting with "note: " (deterministic). */
void et_astra_report_print(const et_astra_report *rep, FILE *out);

G_END_DECLS
#endif
