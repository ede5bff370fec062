/* sim_report.c: human and JSON output of a replay (see sim_report.h). */
#include "config.h"
#include "replay/sim_report.h"
#include "chakra/et_scale.h"
#include "replay/sim_critical.h"
#include "replay/sim_comms.h"
#include "common/wisp_json.h"
#include "collectives/coll_library_report.h"
#include "collectives/libraries/nccl/coll_nccl.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

gboolean sim_report_start_skew(const et_workload *w, sim_start_skew *out)
{
  memset(out, 0, sizeof *out);
  out->first_rank = out->last_rank = -1;
  if (w->measured_start_ps == NULL || w->measured_step_ps == NULL)
    return FALSE;
  sim_time_ps s_lo = 0, s_hi = 0, e_lo = 0, e_hi = 0;
  for (int k = 0; k < w->n_ranks; k++) {
    sim_time_ps s = w->measured_start_ps[k], e = s + w->measured_step_ps[k];
    if (k == 0 || s < s_lo) {
      s_lo = s;
      out->first_rank = k;
    }
    if (k == 0 || s > s_hi) {
      s_hi = s;
      out->last_rank = k;
    }
    e_lo = k == 0 ? e : MIN(e_lo, e);
    e_hi = k == 0 ? e : MAX(e_hi, e);
  }
  out->start_skew = s_hi - s_lo;
  out->end_skew = e_hi - e_lo;
  out->last_start_to_last_end = e_hi - s_hi;
  return TRUE;
}

sim_time_ps sim_report_measured_step(const et_workload *w)
{
  return sim_report_measured_end(w, FALSE, NULL);
}

sim_time_ps sim_report_measured_end(const et_workload *w, gboolean measured_starts, int *rank)
{
  sim_time_ps best = -1;
  int at = -1;
  /* A scaled job (--scale) never ran: its ranks replay the traced ranks'
   * graphs, but the traced step was measured at the traced size, so no
   * measurement of this job exists to compare with (issue 29 item 3). */
  if (w->scale != NULL || w->measured_step_ps == NULL || (measured_starts && w->measured_start_ps == NULL))
    return -1;
  for (int r = 0; r < w->n_ranks; r++) {
    if (w->measured_step_ps[r] < 0)
      continue;
    sim_time_ps end = w->measured_step_ps[r] + (measured_starts ? w->measured_start_ps[r] : 0);
    if (end > best) {
      best = end;
      at = r;
    }
  }
  if (rank)
    *rank = at;
  return best;
}

char *sim_report_baseline_advice(const et_workload *w, gboolean measured_starts)
{
  sim_start_skew sk;
  if (!measured_starts && sim_report_start_skew(w, &sk) && sk.start_skew > 0) {
    char *t = wisp_format_time(sk.start_skew);
    char *a = g_strdup_printf("replay the ranks' measured starts with --starts measured (their measured windows "
                              "start up to %s apart, rank %d first, rank %d last; this run started them together)",
                              t, sk.first_rank, sk.last_rank);
    g_free(t);
    return a;
  }
  return g_strdup("calibrate the network (wisp calibrate) or check the trace");
}

const char *sim_report_op_name(const sim_comm_record *c)
{
  if (c->node_type == ET_NODE_COMM_SEND)
    return "send";
  if (c->node_type == ET_NODE_COMM_RECV)
    return "recv";
  return et_coll_short_name(c->op);
}

static const char *group_name(const et_workload *w, uint32_t g)
{
  return et_workload_group_name(w, g);
}

/* algbw in decimal GB/s: bytes / seconds / 1e9 = bytes * 1000 / ps. */
static double algbw_GBps(const sim_comm_record *c)
{
  sim_time_ps d = c->end - c->start;
  return d > 0 ? (double)c->algbw_bytes * 1000.0 / (double)d : 0.0;
}

/* Utilization of link l over the run: bytes / (bandwidth x step time), the
 * fraction of its capacity the run used (0 when the step time is 0). */
static double link_util(const sim_result *r, const topo *t, uint32_t l)
{
  const topo_link *k = topo_get_link(t, l);
  if (r->step_time <= 0 || k->bw == 0)
    return 0.0;
  return (double)r->link_bytes[l] * 1e12 / ((double)k->bw * (double)r->step_time);
}

/* The n busiest links by utilization (ties: lower link index first), as
 * link indices in *out (g_free); returns how many (<= n, only links that
 * carried bytes).  O(L log L). */
typedef struct {
  double u;
  uint32_t l;
} link_rank;

static int cmp_link_rank(const void *a, const void *b)
{
  const link_rank *x = a, *y = b;
  if (x->u != y->u)
    return x->u > y->u ? -1 : 1;
  return x->l < y->l ? -1 : x->l > y->l;
}

static uint32_t busiest_links(const sim_result *r, const topo *t, uint32_t n, uint32_t **out)
{
  uint32_t m = 0, nl = r->link_bytes && r->n_links == topo_n_links(t) ? r->n_links : 0;
  link_rank *v = g_new(link_rank, nl ? nl : 1);
  for (uint32_t l = 0; l < nl; l++)
    if (r->link_bytes[l] > 0)
      v[m++] = (link_rank){link_util(r, t, l), l};
  qsort(v, m, sizeof *v, cmp_link_rank);
  if (m > n)
    m = n;
  *out = g_new(uint32_t, m ? m : 1);
  for (uint32_t i = 0; i < m; i++)
    (*out)[i] = v[i].l;
  g_free(v);
  return m;
}

static void write_link(wisp_json *j, const sim_result *r, const topo *t, uint32_t l)
{
  const topo_link *k = topo_get_link(t, l);
  wisp_json_begin_object(j, NULL);
  wisp_json_uint(j, "link", l);
  wisp_json_uint(j, "src", k->src);
  wisp_json_uint(j, "dst", k->dst);
  wisp_json_string(j, "tier", k->tier < topo_n_dims(t) ? topo_dim_name(t, k->tier) : "");
  wisp_json_uint(j, "bytes", r->link_bytes[l]);
  wisp_json_double(j, "bandwidth_GBps", (double)k->bw / 1e9, 6);
  wisp_json_double(j, "utilization", link_util(r, t, l), 6);
  wisp_json_end_object(j);
}

/* links[]: every link that carried bytes, by index; busiest_links[]: the
 * top SIM_REPORT_TOP_LINKS by utilization. */
static void write_links(wisp_json *j, const sim_result *r, const topo *t)
{
  gboolean have = r->link_bytes && r->n_links == topo_n_links(t);
  wisp_json_begin_array(j, "links");
  for (uint32_t l = 0; have && l < r->n_links; l++)
    if (r->link_bytes[l] > 0)
      write_link(j, r, t, l);
  wisp_json_end_array(j);
  uint32_t *top = NULL, n = have ? busiest_links(r, t, SIM_REPORT_TOP_LINKS, &top) : 0;
  wisp_json_begin_array(j, "busiest_links");
  for (uint32_t i = 0; i < n; i++)
    write_link(j, r, t, top[i]);
  wisp_json_end_array(j);
  g_free(top);
}

gboolean sim_report_write_json(const sim_result *r, const et_workload *w, const topo *t,
                               const char *path, GError **error)
{
  return sim_report_write_json_ext(r, w, t, path, NULL, NULL, error);
}

/* The report's scalar head: versions, inputs, step times, counts. */
static void write_head(wisp_json *j, const sim_result *r, const et_workload *w, const topo *t)
{
  wisp_json_int(j, "schema_version", WISP_REPORT_SCHEMA_VERSION);
  wisp_json_string(j, "wisp_version", PACKAGE_VERSION);
  wisp_json_begin_object(j, "workload");
  wisp_json_string(j, "source", w->source);
  wisp_json_int(j, "n_ranks", w->n_ranks);
  if (w->scale) { /* --scale: the traced job and the assumptions (chakra/et_scale.h) */
    wisp_json_int(j, "traced_ranks", et_scale_traced_ranks(w->scale));
    wisp_json_string(j, "scaling", et_scale_summary(w->scale));
  }
  wisp_json_end_object(j);
  wisp_json_begin_object(j, "network");
  wisp_json_string(j, "source", topo_source(t));
  wisp_json_string(j, "tier", net_tier_name(r->tier));
  wisp_json_end_object(j);
  wisp_json_ns(j, "step_time_ns", r->step_time);
  sim_time_ps sum = 0;
  for (int k = 0; k < r->n_ranks; k++)
    sum += r->ranks[k].finish;
  wisp_json_ns(j, "mean_finish_ns", r->n_ranks ? sum / r->n_ranks : 0);
  sim_time_ps measured = sim_report_measured_end(w, r->measured_starts, NULL);
  if (measured >= 0)
    wisp_json_ns(j, "measured_step_ns", measured);
  else
    wisp_json_string(j, "measured_step_ns", NULL);
  wisp_json_uint(j, "events", r->events);
  wisp_json_uint(j, "assumed_roots", r->assumed_roots);
  if (r->collectives_held > 0) /* present only when some call waited, so other runs' documents are unchanged */
    wisp_json_uint(j, "collectives_held", r->collectives_held);
  sim_report_json_unsimulated(j, w);
}

/* ranks[]: the per-rank accounting. */
static void write_ranks(wisp_json *j, const sim_result *r, const et_workload *w)
{
  wisp_json_begin_array(j, "ranks");
  for (int k = 0; k < r->n_ranks; k++) {
    const sim_rank_stats *s = &r->ranks[k];
    wisp_json_begin_object(j, NULL);
    wisp_json_int(j, "rank", s->rank);
    wisp_json_ns(j, "finish_ns", s->finish);
    wisp_json_ns(j, "compute_ns", s->compute);
    wisp_json_ns(j, "exposed_comm_ns", s->exposed_comm);
    wisp_json_ns(j, "overlapped_comm_ns", s->overlapped_comm);
    wisp_json_ns(j, "idle_ns", s->idle);
    sim_time_ps lag, unexplained;
    et_graph_fixed_idle(w->ranks[k], &lag, &unexplained);
    wisp_json_ns(j, "unexplained_idle_ns", unexplained);
    wisp_json_ns(j, "launch_lag_ns", lag);
    wisp_json_uint(j, "nodes", s->nodes);
    wisp_json_uint(j, "compute_slots", s->compute_slots);
    if (r->interference) {
      wisp_json_ns(j, "interference_ns", s->interference);
      wisp_json_ns(j, "interfered_compute_ns", s->interfered_compute);
    }
    /* The accounting of exposed communication (sim_rank_stats). */
    wisp_json_ns(j, "comm_transfer_ns", s->comm_transfer);
    wisp_json_ns(j, "straggler_wait_ns", s->straggler_wait);
    wisp_json_ns(j, "dependency_wait_ns", s->dependency_wait);
    /* Straggler cost as HTA counts it (doc/studies.md "Straggler wait"):
     * every collective's wait, hidden under compute or not. */
    wisp_json_ns(j, "collective_wait_ns", s->coll_wait);
    wisp_json_uint(j, "collectives", s->colls);
    wisp_json_uint(j, "last_arrivals", s->coll_last);
    if (s->compute_factor != 1.0)
      wisp_json_double(j, "compute_factor", s->compute_factor, 6);
    wisp_json_end_object(j);
  }
  wisp_json_end_array(j);
}

/* collectives[]: one object per communication record, in record order
 * (from memory or the run's temporary file, sim_comms.h; empty when the
 * run kept only the measured records). */
typedef struct {
  wisp_json *j;
  const et_workload *w;
} comm_writer;

static void write_comm(void *ctx, const sim_comm_record *c)
{
  comm_writer *cw = ctx;
  wisp_json *j = cw->j;
  wisp_json_begin_object(j, NULL);
  wisp_json_int(j, "rank", c->rank);
  wisp_json_uint(j, "node_id", c->node_id);
  wisp_json_string(j, "op", sim_report_op_name(c));
  wisp_json_string(j, "group", group_name(cw->w, c->group));
  wisp_json_int(j, "n_ranks", c->n_ranks);
  wisp_json_int(j, "peer", c->peer);
  wisp_json_uint(j, "bytes", c->bytes);
  wisp_json_string(j, "algorithm", coll_algo_name(c->algo));
  if (c->nccl_algo >= 0) {
    /* library nccl: the tuner's choice, as collbench's JSON */
    wisp_json_string(j, "nccl_algorithm", coll_nccl_algo_name((coll_nccl_algo)c->nccl_algo));
    wisp_json_string(j, "protocol", coll_proto_name((coll_proto)c->proto));
  }
  wisp_json_ns(j, "issue_ns", c->issue);
  wisp_json_ns(j, "start_ns", c->start);
  wisp_json_ns(j, "end_ns", c->end);
  wisp_json_double(j, "time_us", (double)(c->end - c->start) / 1e6, 6);
  double a = algbw_GBps(c);
  wisp_json_double(j, "algbw_GBps", a, 6);
  wisp_json_double(j, "busbw_GBps", a * c->busbw_factor, 6);
  wisp_json_ns(j, "measured_ns", c->measured);
  wisp_json_end_object(j);
}

static gboolean write_comms(wisp_json *j, const sim_result *r, const et_workload *w, GError **error)
{
  comm_writer cw = {j, w};
  wisp_json_begin_array(j, "collectives");
  gboolean ok = !sim_comms_has_all(r) || sim_comms_foreach(r, FALSE, write_comm, &cw, error);
  wisp_json_end_array(j);
  return ok;
}

/* groups[] and op_types[]: traffic per group and per op type, in a
 * deterministic order (group index then world; op code then send, recv). */
static void write_traffic(wisp_json *j, const sim_result *r, const et_workload *w)
{
  guint n_groups = w->groups->len;
  sim_comms *owned;
  const sim_comms *f = sim_comms_of(r, n_groups, &owned);
  wisp_json_begin_array(j, "groups");
  for (guint gi = 0; gi <= n_groups; gi++) {
    if (sim_comms_group_ops(f, gi) == 0)
      continue;
    wisp_json_begin_object(j, NULL);
    wisp_json_string(j, "group", et_workload_group_name(w, gi == n_groups ? ET_GROUP_WORLD : gi));
    wisp_json_int(j, "n_ranks", gi == n_groups ? w->n_ranks : et_workload_group(w, gi)->n_ranks);
    wisp_json_uint(j, "ops", sim_comms_group_ops(f, gi));
    wisp_json_uint(j, "bytes", sim_comms_group_bytes(f, gi));
    wisp_json_end_object(j);
  }
  wisp_json_end_array(j);
  wisp_json_begin_array(j, "op_types");
  for (int op = 0; op < 256; op++) {
    if (sim_comms_op_count(f, op) == 0)
      continue;
    wisp_json_begin_object(j, NULL);
    wisp_json_string(j, "op", et_coll_short_name(op));
    wisp_json_uint(j, "count", sim_comms_op_count(f, op));
    wisp_json_uint(j, "bytes", sim_comms_op_bytes(f, op));
    wisp_json_end_object(j);
  }
  for (int s = 0; s < 2; s++) {
    if (sim_comms_p2p_count(f, s) == 0)
      continue;
    wisp_json_begin_object(j, NULL);
    wisp_json_string(j, "op", s ? "recv" : "send");
    wisp_json_uint(j, "count", sim_comms_p2p_count(f, s));
    wisp_json_uint(j, "bytes", sim_comms_p2p_bytes(f, s));
    wisp_json_end_object(j);
  }
  wisp_json_end_array(j);
  sim_comms_free(owned);
}

gboolean sim_report_write_json_ext(const sim_result *r, const et_workload *w, const topo *t, const char *path,
                                   sim_report_extra_fn extra, void *ctx, GError **error)
{
  wisp_afile *f = wisp_afile_open(path, error);
  if (f == NULL)
    return FALSE;
  FILE *out = wisp_afile_stream(f);
  wisp_json j;
  wisp_json_init(&j, out, 3);
  wisp_json_begin_object(&j, NULL);
  write_head(&j, r, w, t);
  write_ranks(&j, r, w);
  if (!write_comms(&j, r, w, error)) { /* the file is dropped half written */
    wisp_afile_abort(f);
    return FALSE;
  }
  write_traffic(&j, r, w);
  write_links(&j, r, t);
  wisp_json_string(&j, "library", coll_library_name(r->library));
  if (r->library_stats != NULL) {
    coll_library_json_stats(&j, "library_stats", r->library_stats);
    wisp_json_uint(&j, "lifecycle_known", r->lifecycle_known);
    wisp_json_uint(&j, "lifecycle_partial", r->lifecycle_partial);
  }
  if (r->critical)
    sim_crit_write_json(&j, "critical_path", r->critical, w, TRUE);
  if (extra)
    extra(&j, ctx);
  wisp_json_end_object(&j);
  wisp_json_finish(&j);
  return wisp_afile_commit(f, error);
}

void sim_report_json_unsimulated(wisp_json *j, const et_workload *w)
{
  et_unsimulated u;
  et_workload_unsimulated(w, &u);
  wisp_json_begin_object(j, "unsimulated_communication");
  wisp_json_uint(j, "replayed_ops", u.replayed_nodes);
  wisp_json_int(j, "replayed_ranks", u.replayed_ranks);
  wisp_json_ns(j, "replayed_measured_ns", u.replayed_ps);
  wisp_json_uint(j, "zero_byte_collectives", u.zero_byte_collectives);
  wisp_json_end_object(j);
}

void sim_report_print_unsimulated(const et_workload *w, FILE *out)
{
  et_unsimulated u;
  et_workload_unsimulated(w, &u);
  if (u.replayed_nodes)
    fprintf(out, "WARNING: %" G_GUINT64_FORMAT " communication op(s) on %d rank(s) were not simulated but replayed at "
            "their measured duration (%.6f ms in all; no usable size, group members missing from the trace, or "
            "CPU-side ops): that time does not respond to the network; --strict makes this an error, "
            "--replicate-missing completes partial groups\n", u.replayed_nodes, u.replayed_ranks,
            (double)u.replayed_ps / 1e9);
  if (u.zero_byte_collectives)
    fprintf(out, "WARNING: %" G_GUINT64_FORMAT " collective(s) of 0 bytes: only their latency was simulated; "
            "--strict makes this an error\n", u.zero_byte_collectives);
}

void sim_report_print_straggler(const sim_result *r, FILE *out)
{
  sim_time_ps total = 0;
  uint64_t colls = 0;
  int worst = -1, last = -1;
  gboolean slowed = FALSE;
  for (int k = 0; k < r->n_ranks; k++) {
    const sim_rank_stats *s = &r->ranks[k];
    total += s->coll_wait;
    colls += s->colls;
    slowed = slowed || s->compute_factor != 1.0;
    if (s->coll_wait > 0 && (worst < 0 || s->coll_wait > r->ranks[worst].coll_wait))
      worst = k;
    if (s->coll_last > 0 && (last < 0 || s->coll_last > r->ranks[last].coll_last))
      last = k;
  }
  if (colls == 0)
    return;
  sim_time_ps exposed = 0;
  for (int k = 0; k < r->n_ranks; k++)
    exposed += r->ranks[k].straggler_wait;
  fprintf(out, "collective wait: ranks waited %.6f ms in all for other members inside collectives (issue to the last "
          "member's issue), %.6f ms of it with nothing else running (the straggler_wait_ms column)",
          (double)total / 1e9, (double)exposed / 1e9);
  if (worst >= 0)
    fprintf(out, "; most on rank %d (%.6f ms, %.6f ms exposed)", worst, (double)r->ranks[worst].coll_wait / 1e9,
            (double)r->ranks[worst].straggler_wait / 1e9);
  if (last >= 0)
    fprintf(out, "; rank %d issued last in %" G_GUINT64_FORMAT " of its %" G_GUINT64_FORMAT " collectives", last,
            r->ranks[last].coll_last, r->ranks[last].colls);
  fputc('\n', out);
  if (slowed) {
    fprintf(out, "compute factors (levers):");
    int shown = 0;
    for (int k = 0; k < r->n_ranks && shown < 8; k++)
      if (r->ranks[k].compute_factor != 1.0) {
        fprintf(out, " rank %d x%.4f", k, r->ranks[k].compute_factor);
        shown++;
      }
    fprintf(out, "%s\n", shown == 8 ? " ... (see --json)" : "");
  }
}

void sim_report_print_interference(const sim_result *r, FILE *out)
{
  sim_time_ps added = 0, under = 0, compute = 0;
  int worst = -1;
  for (int k = 0; k < r->n_ranks; k++) {
    const sim_rank_stats *s = &r->ranks[k];
    added += s->interference;
    under += s->interfered_compute;
    compute += s->compute;
    if (s->interference > 0 && (worst < 0 || s->interference > r->ranks[worst].interference))
      worst = k;
  }
  fprintf(out, "interference: communication on the compute cores added %.6f ms of compute in all ranks (%.2f %% of "
          "compute time)", (double)added / 1e9, compute > 0 ? 100.0 * (double)added / (double)compute : 0.0);
  if (under > 0)
    fprintf(out, "; compute beside it ran %.2f %% slower (%.6f ms of work)", 100.0 * (double)added / (double)under,
            (double)under / 1e9);
  if (worst >= 0)
    fprintf(out, "; most on rank %d (+%.6f ms)", worst, (double)r->ranks[worst].interference / 1e9);
  fputc('\n', out);
}

/* Library nccl: one line naming the algorithm and protocol NCCL's tuner
 * chose for the collectives, per collective type, with the number of
 * collectives (each counted once, not once per member: a record stands
 * for 1 / n_ranks of its collective) and the size range, from the
 * records' fold (sim_comms.h).  Nothing when no record carries a choice.
 * O(distinct choices log distinct choices). */
typedef sim_comms_choice nccl_choice;

static int cmp_choice(const void *a, const void *b)
{
  const nccl_choice *x = a, *y = b;
  if (x->op != y->op)
    return x->op - y->op;
  if (x->lo != y->lo)
    return x->lo < y->lo ? -1 : 1;
  if (x->algo != y->algo)
    return x->algo - y->algo;
  return x->proto - y->proto;
}

static void print_nccl_choices(const sim_result *r, const et_workload *w, FILE *out)
{
  sim_comms *owned;
  const sim_comms *f = sim_comms_of(r, w->groups->len, &owned);
  guint n;
  const sim_comms_choice *folded = sim_comms_choices(f, &n);
  GArray *ch = g_array_new(FALSE, FALSE, sizeof(nccl_choice));
  g_array_append_vals(ch, folded, n);
  sim_comms_free(owned);
  if (ch->len > 0) {
    g_array_sort(ch, cmp_choice);
    fprintf(out, "NCCL algorithm/protocol chosen (library nccl; each collective counted once, not per member):");
    for (guint i = 0; i < ch->len; i++) {
      const nccl_choice *x = &g_array_index(ch, nccl_choice, i);
      char lo[32], hi[32];
      g_snprintf(lo, sizeof lo, "%" G_GUINT64_FORMAT, x->lo);
      g_snprintf(hi, sizeof hi, "%" G_GUINT64_FORMAT, x->hi);
      /* "N collectives", never "xN": the count stands beside other counts
       * (issue 29 item 9: "x160" read as a factor beside 576 records). */
      fprintf(out, "%s %s %s/%s for %.0f collective%s of %s%s%s B", i > 0 ? ";" : "",
              et_coll_short_name((et_coll_type)x->op), coll_nccl_algo_name((coll_nccl_algo)x->algo),
              coll_proto_name((coll_proto)x->proto), x->count, x->count == 1.0 ? "" : "s", lo,
              x->lo != x->hi ? "-" : "", x->lo != x->hi ? hi : "");
    }
    fprintf(out, "\n");
  }
  g_array_free(ch, TRUE);
}

/* Decimals for the terminal's millisecond columns: enough for five
 * significant digits of the step time, at least 3 (microseconds) and at
 * most 6 (nanoseconds).  The JSON report keeps every picosecond. */
static int ms_decimals(sim_time_ps step)
{
  int d = 3;
  for (sim_time_ps lim = SIM_PS_PER_S / 100; d < 6 && step > 0 && step < lim; lim /= 10)
    d++;
  return d;
}

static void print_ms(FILE *out, int width, int decimals, sim_time_ps t)
{
  fprintf(out, " %*.*f", width, decimals, (double)t / 1e9);
}

void sim_report_print_summary(const sim_result *r, const et_workload *w, const topo *t, FILE *out,
                              int max_ranks)
{
  fprintf(out, "workload %s: %d ranks; network %s (%s tier)\n", w->source, w->n_ranks, topo_source(t),
          net_tier_name(r->tier));
  if (w->scale) /* a scaled job: its layout and every assumption (chakra/et_scale.h) */
    fprintf(out, "%s\n", et_scale_summary(w->scale));
  int dec = ms_decimals(r->step_time);
  /* One accounting (sim_rank_stats): finish = compute + exposed + idle and
   * exposed = transfer + straggler wait + dependency wait, column by column. */
  fprintf(out, "%6s %12s %12s %15s %12s %17s %18s %15s %12s %19s\n", "rank", "finish_ms", "compute_ms",
          "exposed_comm_ms", "transfer_ms", "straggler_wait_ms", "dependency_wait_ms", "overlap_comm_ms", "idle_ms",
          "unexplained_idle_ms");
  /* Each rank's fixed GPU idle, once: the table shows it, the line below
   * names the rank with the most (the part of the replay that keeps its
   * measured length whatever the what-if) and sums the launch lag. */
  sim_time_ps *unexplained = g_new(sim_time_ps, r->n_ranks ? r->n_ranks : 1);
  int worst = -1;
  sim_time_ps worst_ps = 0, lag_sum = 0;
  for (int k = 0; k < r->n_ranks; k++) {
    sim_time_ps lag;
    et_graph_fixed_idle(w->ranks[k], &lag, &unexplained[k]);
    lag_sum += lag;
    if (unexplained[k] > worst_ps) {
      worst_ps = unexplained[k];
      worst = k;
    }
  }
  for (int k = 0; k < r->n_ranks; k++) {
    if (max_ranks >= 0 && k >= max_ranks) {
      fprintf(out, "   ... %d more ranks (see --json)\n", r->n_ranks - k);
      break;
    }
    const sim_rank_stats *s = &r->ranks[k];
    fprintf(out, "%6d", s->rank);
    print_ms(out, 12, dec, s->finish);
    print_ms(out, 12, dec, s->compute);
    print_ms(out, 15, dec, s->exposed_comm);
    print_ms(out, 12, dec, s->comm_transfer);
    print_ms(out, 17, dec, s->straggler_wait);
    print_ms(out, 18, dec, s->dependency_wait);
    print_ms(out, 15, dec, s->overlapped_comm);
    print_ms(out, 12, dec, s->idle);
    print_ms(out, 19, dec, unexplained[k]);
    fputc('\n', out);
  }
  g_free(unexplained);
  fprintf(out, "  finish = compute + exposed_comm + idle; exposed_comm (communication with no compute beside it) = "
          "transfer (data moving) + straggler_wait (a collective waiting for a member that issued late) + "
          "dependency_wait (a send/receive waiting for its partner, e.g. a pipeline stage's input)\n");
  if (worst >= 0) {
    sim_time_ps step = w->measured_step_ps && w->measured_step_ps[worst] > 0 ? w->measured_step_ps[worst]
                                                                              : r->ranks[worst].finish;
    fprintf(out, "unexplained GPU idle (replayed as fixed delays): at most %.6f ms, %.1f %% of the step, on rank %d",
            (double)worst_ps / 1e9, step > 0 ? 100.0 * (double)worst_ps / (double)step : 0.0, worst);
    if (lag_sum)
      fprintf(out, "; launch lag %.6f ms in all ranks (kept after the launch calls)", (double)lag_sum / 1e9);
    fputc('\n', out);
  }
  sim_report_print_unsimulated(w, out);
  char buf[32];
  fprintf(out, "step time: %.*f ms (%s ns), the latest rank finish\n", dec, (double)r->step_time / 1e9,
          wisp_ns_string(r->step_time, buf));
  unsigned lo = UINT_MAX, hi = 0;
  for (int k = 0; k < r->n_ranks; k++) {
    lo = MIN(lo, r->ranks[k].compute_slots);
    hi = MAX(hi, r->ranks[k].compute_slots);
  }
  if (hi > 1) {
    if (lo == hi)
      fprintf(out, "compute slots: %u per rank\n", hi);
    else
      fprintf(out, "compute slots: %u to %u per rank\n", lo, hi);
  }
  if (r->library_stats != NULL) {
    fprintf(out, "communication library: %s\n", coll_library_name(r->library));
    coll_library_print_stats(out, r->library_stats);
    fprintf(out, "buffer lifecycle: %" G_GUINT64_FORMAT " collective(s) with measured allocations, %" G_GUINT64_FORMAT
            " with allocations on some members only (synthetic model used), the rest synthetic\n",
            r->lifecycle_known, r->lifecycle_partial);
  }
  if (r->interference)
    sim_report_print_interference(r, out);
  sim_report_print_straggler(r, out);
  print_nccl_choices(r, w, out);
  if (r->assumed_roots > 0)
    fprintf(out, "note: %" G_GUINT64_FORMAT " rooted collective call(s) carried no root in the input; each used the "
            "first member of its group\n", r->assumed_roots);
  if (r->collectives_held > 0)
    fprintf(out, "note: %" G_GUINT64_FORMAT " collective call(s) became ready before an earlier call of their group "
            "on the same rank and waited for it: calls meet in each rank's program order, as a communicator "
            "requires\n", r->collectives_held);
  uint32_t *top = NULL;
  uint32_t n_top = r->link_bytes && r->n_links == topo_n_links(t) ? busiest_links(r, t, 5, &top) : 0;
  if (n_top > 0) {
    /* One unit for the bytes on every run (MiB, 3 decimals), so two runs'
     * lines compare without converting (issue 29 item 9). */
    fprintf(out, "busiest links (MiB moved; utilization = bytes / (bandwidth x step time)):\n");
    for (uint32_t i = 0; i < n_top; i++) {
      const topo_link *k = topo_get_link(t, top[i]);
      char *bw = wisp_format_bandwidth(k->bw);
      fprintf(out, "  link %u (%s, node %u -> %u, %s): %.3f MiB, %.2f %%\n", top[i],
              k->tier < topo_n_dims(t) ? topo_dim_name(t, k->tier) : "?", k->src, k->dst, bw,
              (double)r->link_bytes[top[i]] / 1048576.0, 100.0 * link_util(r, t, top[i]));
      g_free(bw);
    }
  }
  g_free(top);
  sim_time_ps measured = sim_report_measured_end(w, r->measured_starts, NULL);
  if (measured > 0) {
    double err = 100.0 * (double)(r->step_time - measured) / (double)measured;
    fprintf(out, "measured step time: %.6f ms; simulated baseline error %+.2f %%\n", (double)measured / 1e9, err);
  }
}
