/* sim_report.h: the human summary and the versioned JSON report of a run.
 *
 * JSON schema (schema_version 1; times are decimal nanoseconds with
 * picosecond precision, sizes in bytes, bandwidths in decimal GB/s):
 *   schema_version, wisp_version, workload{source,n_ranks}, network{source,tier},
 *   step_time_ns, mean_finish_ns, measured_step_ns (null when unknown), events, assumed_roots,
 *   collectives_held (only when > 0: calls that waited for an earlier call of their group on their rank),
 *   unsimulated_communication {replayed_ops, replayed_ranks, replayed_measured_ns, zero_byte_collectives},
 *   ranks[]       {rank, finish_ns, compute_ns, exposed_comm_ns, overlapped_comm_ns, idle_ns,
 *                  unexplained_idle_ns, launch_lag_ns (GPU idle kept as fixed delays, et_graph_fixed_idle),
 *                  nodes, compute_slots}
 *   collectives[] {rank, node_id, op, group, n_ranks, peer, bytes, algorithm, issue_ns, start_ns,
 *                  end_ns, time_us, algbw_GBps, busbw_GBps, measured_ns}
 *   groups[]      {group, n_ranks, ops, bytes}   (bytes summed over members' records)
 *   op_types[]    {op, count, bytes}
 *   links[]       {link, src, dst, tier, bytes, bandwidth_GBps, utilization}: links that carried bytes,
 *                 by link index; utilization = bytes / (bandwidth x step time)
 *   busiest_links[] the SIM_REPORT_TOP_LINKS links of highest utilization (same fields; ties by index)
 *   critical_path (only when the run recorded it, sim_replay_options.critical_path; replay/sim_critical.h):
 *                 {end_rank, step_time_ns, nodes (on the path),
 *                  by_category {compute_ns, host_ns, idle_ns, communication_ns, communication_replayed_ns,
 *                               other_ns} (sums to step_time_ns),
 *                  communication[] {group, op, time_ns}  (path time per pair, largest first),
 *                  ranks[] {rank, time_ns}  (path time per rank, ranks with path time only),
 *                  stragglers[] {rank, waited_ns, at}  (waits attributed to rank; at = communications),
 *                  bound (one sentence),
 *                  segments[] {rank, category, start_ns, end_ns, nodes, first, last}  (merged runs, time order)}
 * collectives[] is ordered by (end_ns, rank, node_id).
 */
#ifndef WISP_SIM_REPORT_H
#define WISP_SIM_REPORT_H

#include "replay/sim_replay.h"
#include "common/wisp_json.h"

G_BEGIN_DECLS

#define WISP_REPORT_SCHEMA_VERSION 1
/* Links listed in busiest_links[] of the JSON report. */
#define SIM_REPORT_TOP_LINKS 10

/* Writes the JSON report atomically to path. */
gboolean sim_report_write_json(const sim_result *r, const et_workload *w, const topo *t,
                               const char *path, GError **error);
/* The same, letting a higher layer (e.g. calibration's baseline fidelity)
 * add keys to the top-level object through `extra`. */
typedef void (*sim_report_extra_fn)(wisp_json *j, void *ctx);
gboolean sim_report_write_json_ext(const sim_result *r, const et_workload *w, const topo *t, const char *path,
                                   sim_report_extra_fn extra, void *ctx, GError **error);
/* Prints the human summary: per-rank table (at most max_ranks rows) and the step time. */
void sim_report_print_summary(const sim_result *r, const et_workload *w, const topo *t, FILE *out,
                              int max_ranks);

/* The communication the workload replays at its measured duration instead
 * of simulating it, and its zero-byte collectives (et_workload_unsimulated):
 * the JSON object "unsimulated_communication" {replayed_ops,
 * replayed_ranks, replayed_measured_ns, zero_byte_collectives}, and the
 * WARNING lines of the summary (nothing when there is none). */
void sim_report_json_unsimulated(wisp_json *j, const et_workload *w);
void sim_report_print_unsimulated(const et_workload *w, FILE *out);

/* One line (when r->interference): compute time that library
 * communication added by slowing compute on the same cores, in all ranks
 * and as a share of compute time, the mean slowdown of the compute that
 * ran beside it, and the rank with the most.  The JSON report has
 * interference_ns and interfered_compute_ns per rank then. */
/* One line: the straggler wait summed over ranks (sim_rank_stats.coll_wait),
 * the rank that waited most and the one that issued last most often;
 * nothing when the run had no collective.  A second line lists the ranks
 * whose compute a lever scaled.  O(ranks). */
void sim_report_print_straggler(const sim_result *r, FILE *out);
void sim_report_print_interference(const sim_result *r, FILE *out);

/* How far apart the ranks' measured windows start and end on the traces'
 * common clock (et_workload.measured_start_ps): FALSE when the workload
 * does not know.  O(ranks). */
typedef struct {
  sim_time_ps start_skew, end_skew;  /* latest minus earliest start, and end */
  sim_time_ps last_start_to_last_end;
  int first_rank, last_rank;         /* the earliest and the latest to start */
} sim_start_skew;
gboolean sim_report_start_skew(const et_workload *w, sim_start_skew *out);

/* Measured step time of the workload (max over ranks), or -1 when unknown
 * or when the workload is a scaled job (--scale: no measurement exists at
 * that size). */
sim_time_ps sim_report_measured_step(const et_workload *w);
/* What a replay's step compares with: the measured step (max over ranks of
 * the windows) when every rank starts at 0, or, with measured_starts, the
 * latest measured end relative to the earliest start (max over ranks of
 * start + window).  -1 when unknown; *rank (may be NULL) gets the rank. */
sim_time_ps sim_report_measured_end(const et_workload *w, gboolean measured_starts, int *rank);
/* What to try when a baseline misses the measured step (--check-baseline),
 * naming the option that would help: "--starts measured" when the ranks'
 * measured windows start apart and the run started them together, else
 * calibrating the network.  g_free. */
char *sim_report_baseline_advice(const et_workload *w, gboolean measured_starts);
/* Op name for a record: the collective's short name, or "send"/"recv". */
const char *sim_report_op_name(const sim_comm_record *c);

G_END_DECLS
#endif
