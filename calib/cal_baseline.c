/* cal_baseline.c: baseline fidelity of a replay against its trace (see
 * cal.h).  One pass over the communication records plus a sort of the
 * (op, size class) rows: O(R + B log B) for R records and B rows.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "calib/cal.h"
#include "replay/sim_comms.h"
#include "replay/sim_report.h"
#include "chakra/et_scale.h"

/* Bins: 0 = below 1 KiB; bin k (1..10) = [4^(k-1) KiB, 4^k KiB); 11 = 1 GiB
 * and more. */
int cal_size_bin(uint64_t bytes)
{
  if (bytes < 1024)
    return 0;
  int bin = 1;
  uint64_t hi = 4096;
  while (bin < CAL_SIZE_BINS - 1 && bytes >= hi) {
    bin++;
    hi *= 4;
  }
  return bin;
}

const char *cal_size_bin_label(int bin)
{
  static const char *const labels[CAL_SIZE_BINS] = {
    "<1KiB", "1KiB-4KiB", "4KiB-16KiB", "16KiB-64KiB", "64KiB-256KiB", "256KiB-1MiB",
    "1MiB-4MiB", "4MiB-16MiB", "16MiB-64MiB", "64MiB-256MiB", "256MiB-1GiB", ">=1GiB",
  };
  return bin >= 0 && bin < CAL_SIZE_BINS ? labels[bin] : "?";
}

static const char *rec_op(const sim_comm_record *c)
{
  if (c->node_type == ET_NODE_COMM_SEND)
    return "send";
  if (c->node_type == ET_NODE_COMM_RECV)
    return "recv";
  return et_coll_short_name((et_coll_type)c->op);
}

typedef struct {
  uint32_t group;
  uint8_t op, node_type;
  uint64_t bytes;
  sim_time_ps start, end, meas; /* end: max over members; meas: min > 0 */
  uint64_t records;
  double rec_sum_abs;
} inst_acc;

static guint inst_hash(gconstpointer p)
{
  const inst_acc *a = p;
  uint64_t h = (uint64_t)a->start * 0x9e3779b97f4a7c15ull ^ a->bytes * 0xc2b2ae3d27d4eb4full ^
               ((uint64_t)a->group << 8 | a->op) * 0x165667b19e3779f9ull;
  return (guint)(h ^ (h >> 32));
}

static gboolean inst_equal(gconstpointer p, gconstpointer q)
{
  const inst_acc *a = p, *b = q;
  return a->group == b->group && a->op == b->op && a->node_type == b->node_type && a->bytes == b->bytes &&
         a->start == b->start;
}

static int cmp_inst(const void *p, const void *q)
{
  const inst_acc *a = *(inst_acc *const *)p, *b = *(inst_acc *const *)q;
  if (a->start != b->start)
    return a->start < b->start ? -1 : 1;
  if (a->group != b->group)
    return a->group < b->group ? -1 : 1;
  if (a->op != b->op)
    return a->op < b->op ? -1 : 1;
  if (a->node_type != b->node_type)
    return a->node_type < b->node_type ? -1 : 1;
  return a->bytes < b->bytes ? -1 : a->bytes > b->bytes;
}

static const char *inst_op(const inst_acc *a)
{
  sim_comm_record c = { .op = a->op, .node_type = a->node_type };
  return rec_op(&c);
}

typedef struct {
  cal_baseline_row row;
  double sum_abs, sum, rec_sum_abs;
} row_acc;

static int cmp_rows(const void *a, const void *b)
{
  const cal_baseline_row *x = a, *y = b;
  int c = strcmp(x->op, y->op);
  if (c)
    return c;
  return x->bin - y->bin;
}

/* Each communication record against its own kernel (counts, mean and
 * worst |error| into out), gathered into instances by (group, start, op,
 * type, bytes): every member of one instance shares the time its data
 * started moving.  Returns the instances (inst_acc, owned by the table).
 * The records come in report order from memory or the run's temporary
 * file (replay/sim_comms.h), only those with a measured duration; the
 * others are counted by the run's fold.  O(records kept). */
typedef struct {
  GHashTable *insts;
  cal_baseline *out;
  double sum_abs, worst;
} gather_ctx;

static void gather_one(void *ctx, const sim_comm_record *c)
{
  gather_ctx *g = ctx;
  cal_baseline *out = g->out;
  out->comms_measured++;
  double err = 100.0 * (double)((c->end - c->start) - c->measured) / (double)c->measured;
  g->sum_abs += fabs(err);
  if (fabs(err) > fabs(g->worst))
    g->worst = err;
  inst_acc key = { .group = c->group, .op = c->op, .node_type = c->node_type, .bytes = c->bytes,
                   .start = c->start };
  inst_acc *a = g_hash_table_lookup(g->insts, &key);
  if (a == NULL) {
    a = g_new(inst_acc, 1);
    *a = key;
    a->end = c->end;
    a->meas = c->measured;
    g_hash_table_add(g->insts, a);
  }
  a->end = MAX(a->end, c->end);
  a->meas = MIN(a->meas, c->measured);
  a->records++;
  a->rec_sum_abs += fabs(err);
}

static GHashTable *gather_instances(const sim_result *r, cal_baseline *out)
{
  gather_ctx g = { g_hash_table_new_full(inst_hash, inst_equal, g_free, NULL), out, 0, 0 };
  out->comms = r->comm_fold != NULL ? sim_comms_records(r->comm_fold) : (r->comms ? r->comms->len : 0);
  GError *error = NULL;
  if (!sim_comms_foreach(r, TRUE, gather_one, &g, &error)) {
    /* The run's own temporary file failed to read back: say so rather
     * than report a partial comparison as complete. */
    g_printerr("wisp: baseline fidelity of the collectives is incomplete: %s\n", error->message);
    g_error_free(error);
  }
  if (out->comms_measured) {
    out->mean_abs_pct = g.sum_abs / (double)out->comms_measured;
    out->worst_pct = g.worst;
  }
  return g.insts;
}

/* The instances in a defined order, their errors, and one row per (op,
 * size class) with its means, worst and totals, sorted (cmp_rows).
 * O(instances log instances). */
static void instance_rows(GHashTable *insts, cal_baseline *out)
{
  /* Instances in a defined order, then rows. */
  guint ni = 0;
  inst_acc **list = (inst_acc **)g_hash_table_get_keys_as_array(insts, &ni);
  if (ni > 1)
    qsort(list, ni, sizeof *list, cmp_inst);
  GHashTable *idx = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  GArray *acc = g_array_new(FALSE, FALSE, sizeof(row_acc));
  double isum = 0, iworst = 0;
  for (guint k = 0; k < ni; k++) {
    const inst_acc *a = list[k];
    sim_time_ps sim = a->end - a->start;
    double err = 100.0 * (double)(sim - a->meas) / (double)a->meas;
    isum += fabs(err);
    if (fabs(err) > fabs(iworst))
      iworst = err;
    int bin = cal_size_bin(a->bytes);
    char *rk = g_strdup_printf("%s|%d", inst_op(a), bin);
    gpointer v = g_hash_table_lookup(idx, rk);
    row_acc *ra;
    if (v == NULL) {
      row_acc z = { 0 };
      g_strlcpy(z.row.op, inst_op(a), sizeof z.row.op);
      z.row.bin = bin;
      g_array_append_val(acc, z);
      g_hash_table_insert(idx, rk, GUINT_TO_POINTER(acc->len));
      ra = &g_array_index(acc, row_acc, acc->len - 1);
    } else {
      g_free(rk);
      ra = &g_array_index(acc, row_acc, GPOINTER_TO_UINT(v) - 1);
    }
    ra->row.count++;
    ra->sum_abs += fabs(err);
    ra->sum += err;
    if (fabs(err) > fabs(ra->row.worst_pct))
      ra->row.worst_pct = err;
    ra->row.sim_total += sim;
    ra->row.meas_total += a->meas;
    ra->row.records += a->records;
    ra->rec_sum_abs += a->rec_sum_abs;
  }
  out->instances = ni;
  if (ni) {
    out->inst_mean_abs_pct = isum / ni;
    out->inst_worst_pct = iworst;
  }
  g_free(list);
  g_hash_table_destroy(idx);
  out->rows = g_array_sized_new(FALSE, FALSE, sizeof(cal_baseline_row), acc->len);
  for (guint k = 0; k < acc->len; k++) {
    row_acc *a = &g_array_index(acc, row_acc, k);
    a->row.mean_abs_pct = a->sum_abs / (double)a->row.count;
    a->row.mean_pct = a->sum / (double)a->row.count;
    a->row.rec_mean_abs_pct = a->rec_sum_abs / (double)a->row.records;
    g_array_append_val(out->rows, a->row);
  }
  g_array_free(acc, TRUE);
  if (out->rows->len > 1)
    qsort(out->rows->data, out->rows->len, sizeof(cal_baseline_row), cmp_rows);
}

void cal_baseline_compute(const sim_result *r, const et_workload *w, cal_baseline *out)
{
  memset(out, 0, sizeof *out);
  out->sim_step = r->step_time;
  out->meas_step = -1;
  out->meas_step_rank = -1;
  out->step_err_pct = NAN;
  out->mean_abs_pct = out->worst_pct = NAN;
  out->inst_mean_abs_pct = out->inst_worst_pct = NAN;
  if (w)
    out->meas_step = sim_report_measured_end(w, r->measured_starts, &out->meas_step_rank);
  out->measured_starts = r->measured_starts;
  /* How far apart the ranks' measured windows start and end on the common
   * clock (when the workload knows it). */
  out->start_skew = out->end_skew = -1;
  out->first_start_rank = out->last_start_rank = -1;
  sim_start_skew sk;
  if (w && sim_report_start_skew(w, &sk)) {
    out->start_skew = sk.start_skew;
    out->end_skew = sk.end_skew;
    out->span_from_last_start = sk.last_start_to_last_end;
    out->first_start_rank = sk.first_rank;
    out->last_start_rank = sk.last_rank;
  }
  if (out->meas_step <= 0) {
    out->meas_step = -1;
    out->meas_step_rank = -1;
  } else {
    out->step_err_pct = 100.0 * (double)(out->sim_step - out->meas_step) / (double)out->meas_step;
  }
  GHashTable *insts = gather_instances(r, out);
  instance_rows(insts, out);
  g_hash_table_destroy(insts);
}

void cal_baseline_clear(cal_baseline *b)
{
  if (b->rows)
    g_array_free(b->rows, TRUE);
  b->rows = NULL;
}

void cal_print_baseline(const sim_result *r, const et_workload *w, FILE *out)
{
  cal_baseline b;
  cal_baseline_compute(r, w, &b);
  /* Milliseconds with nanosecond digits, the unit of the tables beside. */
#define MS(t) ((double)(t) / 1e9)
  if (b.meas_step < 0)
    fprintf(out, "baseline: simulated step %.6f ms, measured step unknown (the workload carries no measured "
            "step time)\n", MS(b.sim_step));
  else
    fprintf(out, "baseline: simulated step %.6f ms vs measured %.6f ms (%s, rank %d): error %+.2f %%\n",
            MS(b.sim_step), MS(b.meas_step),
            b.measured_starts ? "latest end from the earliest start; ranks started at their measured starts"
                              : "max over ranks", b.meas_step_rank, b.step_err_pct);
  if (b.start_skew > 0) {
    fprintf(out, "  measured windows start up to %.6f ms apart (rank %d first, rank %d last) and end up to %.6f ms "
            "apart; %s\n", MS(b.start_skew), b.first_start_rank, b.last_start_rank, MS(b.end_skew),
            b.measured_starts ? "the replay started each rank at its measured start"
                              : "the replay starts every rank together, so a rank that started early replays "
                                "without the wait for the late ones (--starts measured replays the measured starts)");
    if (!b.measured_starts)
      fprintf(out, "  measured time from the last start to the last end: %.6f ms\n", MS(b.span_from_last_start));
  }
#undef MS
  if (b.comms_measured == 0) {
    fprintf(out, "  collectives: %" G_GUINT64_FORMAT " records, none with a measured duration\n", b.comms);
    cal_baseline_clear(&b);
    return;
  }
  fprintf(out, "  collectives: %" G_GUINT64_FORMAT " instances (shortest member kernel vs simulated end - start): "
          "mean |error| %.2f %%, worst %+.2f %%\n", b.instances, b.inst_mean_abs_pct, b.inst_worst_pct);
  fprintf(out, "  records: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " measured (each member's kernel, which "
          "includes waiting for peers): mean |error| %.2f %%, worst %+.2f %%\n", b.comms_measured, b.comms,
          b.mean_abs_pct, b.worst_pct);
  fprintf(out, "  %-16s %-14s %5s %11s %10s %10s %14s %14s %8s %11s\n", "op", "size", "inst", "mean|err|",
          "mean err", "worst", "sim_total_us", "meas_total_us", "records", "rec|err|");
  for (guint k = 0; k < b.rows->len; k++) {
    const cal_baseline_row *row = &g_array_index(b.rows, cal_baseline_row, k);
    fprintf(out, "  %-16s %-14s %5" G_GUINT64_FORMAT " %9.2f %% %+8.2f %% %+8.2f %% %14.3f %14.3f %8"
            G_GUINT64_FORMAT " %9.2f %%\n", row->op, cal_size_bin_label(row->bin), row->count, row->mean_abs_pct,
            row->mean_pct, row->worst_pct, (double)row->sim_total / 1e6, (double)row->meas_total / 1e6,
            row->records, row->rec_mean_abs_pct);
  }
  cal_baseline_clear(&b);
}

void cal_baseline_json(const sim_result *r, const et_workload *w, wisp_json *j, const char *key)
{
  cal_baseline b;
  cal_baseline_compute(r, w, &b);
  wisp_json_begin_object(j, key);
  wisp_json_ns(j, "simulated_step_ns", b.sim_step);
  if (b.meas_step >= 0) {
    wisp_json_ns(j, "measured_step_ns", b.meas_step);
    wisp_json_int(j, "measured_step_rank", b.meas_step_rank);
  } else {
    wisp_json_string(j, "measured_step_ns", NULL);
  }
  wisp_json_double(j, "step_error_pct", b.step_err_pct, 4);
  wisp_json_bool(j, "measured_starts", b.measured_starts);
  if (b.start_skew >= 0) {
    wisp_json_ns(j, "measured_start_skew_ns", b.start_skew);
    wisp_json_ns(j, "measured_end_skew_ns", b.end_skew);
    wisp_json_ns(j, "measured_last_start_to_last_end_ns", b.span_from_last_start);
  } else {
    wisp_json_string(j, "measured_start_skew_ns", NULL);
  }
  wisp_json_uint(j, "comm_records", b.comms);
  wisp_json_uint(j, "comm_records_measured", b.comms_measured);
  wisp_json_double(j, "comm_mean_abs_error_pct", b.mean_abs_pct, 4);
  wisp_json_double(j, "comm_worst_error_pct", b.worst_pct, 4);
  wisp_json_uint(j, "comm_instances", b.instances);
  wisp_json_double(j, "instance_mean_abs_error_pct", b.inst_mean_abs_pct, 4);
  wisp_json_double(j, "instance_worst_error_pct", b.inst_worst_pct, 4);
  wisp_json_string(j, "size_classes", "powers of 4 from 1 KiB: <1KiB, [1,4) KiB, [4,16) KiB, ..., >=1GiB");
  wisp_json_begin_array(j, "by_type_and_size");
  for (guint k = 0; k < b.rows->len; k++) {
    const cal_baseline_row *row = &g_array_index(b.rows, cal_baseline_row, k);
    wisp_json_begin_object(j, NULL);
    wisp_json_string(j, "op", row->op);
    wisp_json_string(j, "size_class", cal_size_bin_label(row->bin));
    wisp_json_uint(j, "instances", row->count);
    wisp_json_double(j, "mean_abs_error_pct", row->mean_abs_pct, 4);
    wisp_json_double(j, "mean_error_pct", row->mean_pct, 4);
    wisp_json_double(j, "worst_error_pct", row->worst_pct, 4);
    wisp_json_ns(j, "simulated_total_ns", row->sim_total);
    wisp_json_ns(j, "measured_total_ns", row->meas_total);
    wisp_json_uint(j, "records", row->records);
    wisp_json_double(j, "record_mean_abs_error_pct", row->rec_mean_abs_pct, 4);
    wisp_json_end_object(j);
  }
  wisp_json_end_array(j);
  wisp_json_end_object(j);
  cal_baseline_clear(&b);
}

gboolean cal_write_baseline_json(const sim_result *r, const et_workload *w, const char *path, GError **error)
{
  wisp_afile *f = wisp_afile_open(path, error);
  if (f == NULL)
    return FALSE;
  wisp_json j;
  wisp_json_init(&j, wisp_afile_stream(f), 3);
  wisp_json_begin_object(&j, NULL);
  wisp_json_int(&j, "schema_version", 1);
  wisp_json_string(&j, "workload", w && w->source ? w->source : NULL);
  cal_baseline_json(r, w, &j, "baseline");
  wisp_json_end_object(&j);
  wisp_json_finish(&j);
  return wisp_afile_commit(f, error);
}

gboolean cal_check_baseline(const sim_result *r, const et_workload *w, double max_pct, GError **error)
{
  cal_baseline b;
  cal_baseline_compute(r, w, &b);
  cal_baseline_clear(&b);
  if (b.meas_step < 0 && w && w->scale) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "--check-baseline %.2f: a scaled job (--scale) has no measured step (the trace measured %d "
                "ranks), so the baseline cannot be checked; check it without --scale", max_pct,
                et_scale_traced_ranks(w->scale));
    return FALSE;
  }
  if (b.meas_step < 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "--check-baseline %.2f: %s has no measured step time, so the baseline cannot be checked; "
                "use a profiler trace with ProfilerStep annotations or drop --check-baseline",
                max_pct, w && w->source ? w->source : "the workload");
    return FALSE;
  }
  if (!(fabs(b.step_err_pct) <= max_pct)) {
    char *advice = sim_report_baseline_advice(w, r->measured_starts);
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "--check-baseline %.2f: baseline step error %+.2f %% exceeds the bound (simulated %.6f ms, "
                "measured %.6f ms on rank %d); %s",
                max_pct, b.step_err_pct, (double)b.sim_step / 1e9, (double)b.meas_step / 1e9, b.meas_step_rank,
                advice);
    g_free(advice);
    return FALSE;
  }
  return TRUE;
}
