/* study_metrics_out.c: the metric catalog written out - the JSON object
 * of `wisp metrics --json` and `wisp simulate --json`, and the terminal
 * table (study_metrics.h).  O(metrics + ranks + collective types).
 */
#include "config.h"
#include "studies/study_metrics.h"

#include <math.h>
#include <string.h>


/* ---- output ---- */

/* A time in ns, null when the input carries no measured times. */
static void json_time(wisp_json *j, const study_metrics *m, const char *key, sim_time_ps t)
{
  if (m->unmeasured_why)
    wisp_json_string(j, key, NULL);
  else
    wisp_json_ns(j, key, t);
}

/* A percentage or ratio, null when unknown. */
static void json_num(wisp_json *j, const char *key, double v, int decimals)
{
  if (isnan(v))
    wisp_json_string(j, key, NULL);
  else
    wisp_json_double(j, key, v, decimals);
}

void study_metrics_json(wisp_json *j, const char *key, const study_metrics *m)
{
  if (m == NULL) {
    wisp_json_string(j, key, NULL);
    return;
  }
  wisp_json_begin_object(j, key);
  wisp_json_string(j, "unmeasured_reason", m->unmeasured_why);
  if (m->unmeasured_why)
    wisp_json_string(j, "steps", NULL);
  else
    wisp_json_int(j, "steps", m->steps);
  json_time(j, m, "avg_step_time_ns", m->avg_step_time);
  json_time(j, m, "step_time_min_ns", m->step_min);
  json_time(j, m, "step_time_max_ns", m->step_max);
  json_num(j, "mfu_pct", m->mfu_pct, 6);
  wisp_json_string(j, "mfu_source", m->mfu_source);
  json_num(j, "compute_bound_pct", m->compute_bound_pct, 4);
  json_num(j, "memory_bound_pct", m->memory_bound_pct, 4);
  json_num(j, "unclassified_pct", m->unclassified_pct, 4);
  wisp_json_string(j, "unclassified_kernel", m->unclassified_kernel);
  json_num(j, "memory_transfer_overhead_pct", m->memory_transfer_overhead_pct, 4);
  json_num(j, "communication_fraction_pct", m->communication_fraction_pct, 4);
  json_time(j, m, "total_communication_time_ns", m->total_communication_time);
  /* Its split (null for a measured trace: the kernels include their waits). */
  const char *split_keys[3] = {"comm_transfer_ns", "straggler_wait_ns", "dependency_wait_ns"};
  const sim_time_ps split[3] = {m->comm_transfer, m->straggler_wait, m->dependency_wait};
  for (int k = 0; k < 3; k++)
    if (m->comm_split)
      wisp_json_ns(j, split_keys[k], split[k]);
    else
      wisp_json_string(j, split_keys[k], NULL);
  json_num(j, "compute_comm_overlap_pct", m->compute_comm_overlap_pct, 4);
  json_num(j, "load_imbalance_ratio", m->load_imbalance_ratio, 6);
  json_num(j, "dominant_kernel_concentration_pct", m->dominant_kernel_concentration_pct, 4);
  wisp_json_string(j, "dominant_kernel", m->dominant_kernel);
  json_num(j, "average_memory_bandwidth_GBps", m->average_memory_bandwidth_GBps, 4);
  json_num(j, "ttft_ns", m->ttft_ns, 3);
  wisp_json_string(j, "ttft_source", m->ttft_why);
  json_num(j, "tpot_ns", m->tpot_ns, 3);
  wisp_json_string(j, "tpot_source", m->tpot_why);
  wisp_json_string(j, "average_memory_bandwidth_source", m->average_memory_bandwidth_source);
  json_num(j, "moe_fraction_pct", m->moe_fraction_pct, 4);
  json_num(j, "mean_sm_coverage_pct", m->mean_sm_coverage_pct, 4);
  json_num(j, "mean_sm_coverage_unweighted_pct", m->mean_sm_coverage_unweighted_pct, 4);
  wisp_json_string(j, "mean_sm_coverage_source", m->mean_sm_coverage_source);
  json_num(j, "bw_peertopeer_pct", m->bw_peertopeer_pct, 4);
  wisp_json_string(j, "bw_peertopeer_source", m->bw_peertopeer_source);
  json_num(j, "straggler", m->straggler, 6);
  if (m->straggler_rank >= 0)
    wisp_json_int(j, "straggler_rank", m->straggler_rank);
  else
    wisp_json_string(j, "straggler_rank", NULL);
  wisp_json_begin_array(j, "collectives");
  for (guint i = 0; i < m->colls->len; i++) {
    const study_metric_coll *c = &g_array_index(m->colls, study_metric_coll, i);
    wisp_json_begin_object(j, NULL);
    wisp_json_string(j, "op", c->op);
    wisp_json_uint(j, "count", c->count);
    wisp_json_uint(j, "sized", c->sized);
    json_num(j, "median_algbw_GBps", c->median_algbw_GBps, 4);
    json_num(j, "median_busbw_GBps", c->median_busbw_GBps, 4);
    wisp_json_double(j, "message_bytes_per_step", c->message_bytes_per_step, 1);
    wisp_json_double(j, "bus_bytes_per_step", c->bus_bytes_per_step, 1);
    wisp_json_end_object(j);
  }
  wisp_json_end_array(j);
  wisp_json_begin_array(j, "ranks");
  for (int r = 0; r < m->n_ranks; r++) {
    const study_metric_rank *x = &m->ranks[r];
    wisp_json_begin_object(j, NULL);
    wisp_json_int(j, "rank", r);
    wisp_json_ns(j, "window_ns", x->window);
    wisp_json_ns(j, "active_ns", x->active);
    wisp_json_ns(j, "compute_ns", x->compute);
    wisp_json_ns(j, "memcpy_ns", x->memcpy);
    wisp_json_ns(j, "comm_ns", x->comm);
    wisp_json_ns(j, "exposed_comm_ns", x->exposed_comm);
    wisp_json_ns(j, "overlapped_comm_ns", x->overlapped_comm);
    wisp_json_ns(j, "idle_ns", x->idle);
    wisp_json_end_object(j);
  }
  wisp_json_end_array(j);
  wisp_json_end_object(j);
}

static void cell_pct(FILE *out, const study_metrics *m, double v, const char *fmt)
{
  if (m == NULL)
    return;
  if (isnan(v))
    fprintf(out, " %14s", "n/a");
  else
    fprintf(out, fmt, v);
}

typedef double (*metric_get)(const study_metrics *m);
static double get_step(const study_metrics *m) { return m->unmeasured_why ? NAN : (double)m->avg_step_time / 1e9; }
static double get_mfu(const study_metrics *m) { return m->mfu_pct; }
static double get_cb(const study_metrics *m) { return m->compute_bound_pct; }
static double get_mb(const study_metrics *m) { return m->memory_bound_pct; }
static double get_unc(const study_metrics *m) { return m->unclassified_pct; }
static double get_mto(const study_metrics *m) { return m->memory_transfer_overhead_pct; }
static double get_cf(const study_metrics *m) { return m->communication_fraction_pct; }
static double get_tct(const study_metrics *m)
{
  return m->unmeasured_why ? NAN : (double)m->total_communication_time / 1e9;
}
static double get_xfer(const study_metrics *m) { return m->comm_split ? (double)m->comm_transfer / 1e9 : NAN; }
static double get_sw(const study_metrics *m) { return m->comm_split ? (double)m->straggler_wait / 1e9 : NAN; }
static double get_dw(const study_metrics *m) { return m->comm_split ? (double)m->dependency_wait / 1e9 : NAN; }
static double get_ovl(const study_metrics *m) { return m->compute_comm_overlap_pct; }
static double get_lir(const study_metrics *m) { return m->load_imbalance_ratio; }
static double get_str(const study_metrics *m) { return m->straggler; }
static double get_dkc(const study_metrics *m) { return m->dominant_kernel_concentration_pct; }
static double get_amb(const study_metrics *m) { return m->average_memory_bandwidth_GBps; }
static double get_moe(const study_metrics *m) { return m->moe_fraction_pct; }
static double get_smc(const study_metrics *m) { return m->mean_sm_coverage_pct; }
static double get_p2p(const study_metrics *m) { return m->bw_peertopeer_pct; }
static double get_ttft(const study_metrics *m) { return m->ttft_ns / 1e6; }
static double get_tpot(const study_metrics *m) { return m->tpot_ns / 1e6; }

static void print_colls(const study_metrics *m, const char *label, FILE *out)
{
  if (m == NULL || m->colls->len == 0)
    return;
  fprintf(out, "\n%s communication per type (median over kernels; bytes per rank and step):\n", label);
  fprintf(out, "  %-16s %8s %8s %14s %14s %16s %16s\n", "op", "count", "sized", "algbw (GB/s)", "busbw (GB/s)",
          "message (B)", "bus (B)");
  for (guint i = 0; i < m->colls->len; i++) {
    const study_metric_coll *c = &g_array_index(m->colls, study_metric_coll, i);
    fprintf(out, "  %-16s %8" G_GUINT64_FORMAT " %8" G_GUINT64_FORMAT, c->op, c->count, c->sized);
    if (isnan(c->median_busbw_GBps))
      fprintf(out, " %14s %14s", "n/a", "n/a");
    else
      fprintf(out, " %14.3f %14.3f", c->median_algbw_GBps, c->median_busbw_GBps);
    fprintf(out, " %16.0f %16.0f\n", c->message_bytes_per_step, c->bus_bytes_per_step);
  }
}

void study_metrics_print(const study_metrics *measured, const study_metrics *simulated, FILE *out)
{
  static const struct { const char *name; metric_get get; const char *fmt; } rows[] = {
    {"avg_step_time (ms)", get_step, " %14.3f"},
    {"mfu (%)", get_mfu, " %14.3f"},
    {"compute_bound (% of compute)", get_cb, " %14.2f"},
    {"memory_bound (% of compute)", get_mb, " %14.2f"},
    {"unclassified (% of compute)", get_unc, " %14.2f"},
    {"memory_transfer_overhead (%)", get_mto, " %14.3f"},
    {"communication_fraction (%)", get_cf, " %14.2f"},
    {"total_communication_time (ms)", get_tct, " %14.3f"},
    {"  transfer (ms)", get_xfer, " %14.3f"},
    {"  straggler_wait (ms)", get_sw, " %14.3f"},
    {"  dependency_wait (ms)", get_dw, " %14.3f"},
    {"compute_comm_overlap (%)", get_ovl, " %14.2f"},
    {"load_imbalance_ratio", get_lir, " %14.4f"},
    {"straggler (fraction)", get_str, " %14.4f"},
    {"dominant_kernel_concentration (%)", get_dkc, " %14.2f"},
    {"average_memory_bandwidth (GB/s)", get_amb, " %14.3f"},
    {"moe_fraction (%)", get_moe, " %14.2f"},
    {"mean_sm_coverage (%)", get_smc, " %14.2f"},
    {"bw_peertopeer (%)", get_p2p, " %14.2f"},
    {"ttft (ms)", get_ttft, " %14.3f"},
    {"tpot (ms)", get_tpot, " %14.3f"},
  };
  /* The label column is as wide as the longest label (33 characters:
   * dominant_kernel_concentration (%), which overflowed a fixed 32 and
   * shifted its row's values one column right). */
  int width = (int)strlen("metric");
  for (guint i = 0; i < G_N_ELEMENTS(rows); i++)
    width = MAX(width, (int)strlen(rows[i].name));
  fprintf(out, "%-*s", width, "metric");
  if (measured)
    fprintf(out, " %14s", "measured");
  if (simulated)
    fprintf(out, " %14s", "simulated");
  fputc('\n', out);
  for (guint i = 0; i < G_N_ELEMENTS(rows); i++) {
    fprintf(out, "%-*s", width, rows[i].name);
    cell_pct(out, measured, measured ? rows[i].get(measured) : 0, rows[i].fmt);
    cell_pct(out, simulated, simulated ? rows[i].get(simulated) : 0, rows[i].fmt);
    fputc('\n', out);
  }
  const study_metrics *any = measured ? measured : simulated;
  if (any && any->unmeasured_why) {
    fprintf(out, "every metric: n/a: %s\n", any->unmeasured_why);
    return;
  }
  if (simulated && simulated->comm_split)
    fprintf(out, "total_communication_time: exposed communication per step and rank (mean), = transfer + "
            "straggler_wait + dependency_wait as in the simulate table%s\n",
            measured ? "; n/a measured: a trace's communication kernels include their waiting" : "");
  /* communication_fraction counts collective kernels whole, their waits
   * included: say how much of the simulated communication is waiting, so
   * 78 % here and a critical path with 0.4 % communication agree. */
  if (simulated && simulated->comm_split && simulated->total_communication_time > 0) {
    sim_time_ps wait = simulated->straggler_wait + simulated->dependency_wait;
    fprintf(out, "communication_fraction: communication kernels' time over active time, waiting for peers "
            "included; of the simulated exposed communication %.1f %% is waiting (straggler_wait + "
            "dependency_wait), which no network shortens\n",
            100.0 * (double)wait / (double)simulated->total_communication_time);
  }
  if (any)
    fprintf(out, "avg_step_time: mean over ranks of each rank's window per step; %s; straggler: (last comm end - "
            "first comm end) / (last comm end - first comm start), a fraction of the communication window\n",
            simulated ? "a simulated window ends with the step (the latest rank's finish), as a rank that "
                        "finishes early waits for the next step, so with the ranks started together the simulated value is the "
                        "step time"
                      : "the step time is the latest rank's finish");
  if (any && any->unclassified_kernel)
    fprintf(out, "unclassified: kernels whose names match no class rule (doc/studies.md \"Kernel classes\"), "
            "neither compute- nor memory-bound by name, e.g. %s\n", any->unclassified_kernel);
  if (any && isnan(any->mfu_pct))
    fprintf(out, "mfu: %s\n", any->mfu_source);
  if (any && any->dominant_kernel)
    fprintf(out, "dominant kernel: %s\n", any->dominant_kernel);
  if (any && isnan(any->average_memory_bandwidth_GBps))
    fprintf(out, "average_memory_bandwidth: n/a: %s\n", any->average_memory_bandwidth_source);
  if (any && isnan(any->mean_sm_coverage_pct))
    fprintf(out, "mean_sm_coverage: n/a: %s\n", any->mean_sm_coverage_source);
  else if (any)
    fprintf(out, "mean_sm_coverage: weighted by kernel time; %.2f %% as a plain mean over kernels (CCL-Bench's "
            "Nsight code)\n", any->mean_sm_coverage_unweighted_pct);
  if (any && isnan(any->bw_peertopeer_pct))
    fprintf(out, "bw_peertopeer: n/a: %s\n", any->bw_peertopeer_source);
  if (any)
    fprintf(out, "ttft: %s%s\ntpot: %s%s\n", isnan(any->ttft_ns) ? "n/a: " : "", any->ttft_why,
            isnan(any->tpot_ns) ? "n/a: " : "", any->tpot_why);
  print_colls(measured, "measured", out);
  print_colls(simulated, "simulated", out);
}
