/* study_metrics.c: the CCL-Bench metric catalog over an activity timeline
 * (study_metrics.h; definitions and formulas in doc/metrics.md; the
 * timeline is filled by study_activity.c, printed by study_metrics_out.c).
 *
 * The metrics sort each rank's intervals by start and merge them into
 * unions per kind (compute U_k, copies U_m, communication U_c), clipped to
 * the rank's window; every overlap figure is a two-pointer walk over two
 * unions.
 */
#include "config.h"
#include "chakra/et_graph.h"
#include "studies/study_metrics_internal.h"
#include "collectives/coll_facts.h"

#include <math.h>
#include <string.h>

/* ---- interval arithmetic ---- */

typedef struct {
  sim_time_ps s, e;
} span;

static int cmp_span(const void *a, const void *b)
{
  const span *x = a, *y = b;
  return x->s < y->s ? -1 : x->s > y->s ? 1 : (x->e > y->e) - (x->e < y->e);
}

/* Sorts and merges in place; returns the new count.  The sort is left
 * out when the spans are in order already (a stream's kernels end in the
 * order they start, so a replay's timeline usually is): the union does
 * not depend on how equal spans are ordered.  O(n) when in order, else
 * O(n log n). */
static guint merge_spans(span *v, guint n)
{
  if (n == 0)
    return 0;
  guint in_order = 1;
  while (in_order < n && cmp_span(&v[in_order - 1], &v[in_order]) <= 0)
    in_order++;
  if (in_order < n)
    qsort(v, n, sizeof *v, cmp_span);
  guint k = 0;
  for (guint i = 1; i < n; i++) {
    if (v[i].s <= v[k].e) {
      if (v[i].e > v[k].e)
        v[k].e = v[i].e;
    } else {
      v[++k] = v[i];
    }
  }
  return k + 1;
}

static sim_time_ps spans_len(const span *v, guint n)
{
  sim_time_ps t = 0;
  for (guint i = 0; i < n; i++)
    t += v[i].e - v[i].s;
  return t;
}

/* |A n B| of two merged lists. */
static sim_time_ps spans_inter(const span *a, guint na, const span *b, guint nb)
{
  sim_time_ps t = 0;
  guint i = 0, j = 0;
  while (i < na && j < nb) {
    sim_time_ps s = MAX(a[i].s, b[j].s), e = MIN(a[i].e, b[j].e);
    if (e > s)
      t += e - s;
    if (a[i].e < b[j].e)
      i++;
    else
      j++;
  }
  return t;
}

/* ---- the metrics ---- */

typedef struct {
  char op[24];
  GArray *algbw, *busbw;   /* double GB/s of sized intervals */
  uint64_t count;
  double msg_bytes, bus_bytes;
} coll_acc;

static const char *iv_op_name(const act_iv *iv)
{
  if (iv->node_type == ET_NODE_COMM_SEND)
    return "send";
  if (iv->node_type == ET_NODE_COMM_RECV)
    return "recv";
  const char *s = et_coll_short_name((et_coll_type)iv->op);
  return s ? s : "unknown";
}

/* Median with the mean of the two middle values for an even count (Python's
 * statistics.median, which the seed uses); NAN for none.  O(n) expected. */
static double median(GArray *v)
{
  return wisp_median((double *)(void *)v->data, v->len);
}

static int cmp_coll(const void *a, const void *b)
{
  return strcmp(((const study_metric_coll *)a)->op, ((const study_metric_coll *)b)->op);
}

static void add_comm_sample(GHashTable *accs, const act_iv *iv)
{
  const char *name = iv_op_name(iv);
  coll_acc *acc = g_hash_table_lookup(accs, name);
  if (acc == NULL) {
    acc = g_new0(coll_acc, 1);
    g_strlcpy(acc->op, name, sizeof acc->op);
    acc->algbw = g_array_new(FALSE, FALSE, sizeof(double));
    acc->busbw = g_array_new(FALSE, FALSE, sizeof(double));
    g_hash_table_insert(accs, acc->op, acc);
  }
  acc->count++;
  gboolean p2p = iv->node_type != ET_NODE_COMM_COLL;
  uint64_t s = p2p ? iv->bytes : coll_algbw_bytes((et_coll_type)iv->op, iv->bytes, iv->n_ranks);
  double factor = p2p ? 1.0 : coll_busbw_factor((et_coll_type)iv->op, iv->n_ranks);
  acc->msg_bytes += (double)iv->bytes;
  acc->bus_bytes += (double)s * factor;
  if (s > 0 && iv->end > iv->start) {
    /* bytes / ps x 1e12 / 1e9 = GB/s */
    double algbw = (double)s / (double)(iv->end - iv->start) * 1e3;
    g_array_append_val(acc->algbw, algbw);
    double busbw = algbw * factor;
    g_array_append_val(acc->busbw, busbw);
  }
}

static void coll_acc_free(gpointer p)
{
  coll_acc *acc = p;
  g_array_free(acc->algbw, TRUE);
  g_array_free(acc->busbw, TRUE);
  g_free(acc);
}


/* The per-collective-type rows (m->colls, sorted by cmp_coll) from the
 * samples gathered per type: medians of algbw and busbw, bytes per rank
 * and step.  O(samples log samples). */
static void coll_rows(study_metrics *m, GHashTable *accs)
{
  m->colls = g_array_new(FALSE, TRUE, sizeof(study_metric_coll));
  GHashTableIter it;
  gpointer val;
  g_hash_table_iter_init(&it, accs);
  while (g_hash_table_iter_next(&it, NULL, &val)) {
    coll_acc *acc = val;
    study_metric_coll row = {.count = acc->count, .sized = acc->busbw->len};
    g_strlcpy(row.op, acc->op, sizeof row.op);
    row.median_algbw_GBps = median(acc->algbw);
    row.median_busbw_GBps = median(acc->busbw);
    double per = (double)m->n_ranks * m->steps;
    row.message_bytes_per_step = acc->msg_bytes / per;
    row.bus_bytes_per_step = acc->bus_bytes / per;
    g_array_append_val(m->colls, row);
  }
  g_array_sort(m->colls, cmp_coll);
}

/* Per kernel name, its compute time; the sized copies' bytes and time. */
typedef struct {
  GHashTable *by_name;     /* name -> double* ps */
  double compute_ps;
  double copy_bytes, copy_ps;
  double kernel_ps, moe_ps; /* compute (memsets left out) and communication kernels; of those, MoE */
} kernel_acc;

/* Adds the part [s, e) of interval iv that lies in its window.  A copy cut
 * by the window counts the bytes of that part (pro rata).  O(1). */
static void add_kernel_sample(kernel_acc *ka, const act_iv *iv, sim_time_ps s, sim_time_ps e)
{
  if (iv->kind == STUDY_ACT_COMM || (iv->kind == STUDY_ACT_COMPUTE && !(iv->kclass & ACT_MEMSET))) {
    ka->kernel_ps += (double)(e - s);
    if (iv->kclass & ACT_MOE)
      ka->moe_ps += (double)(e - s);
  }
  if (iv->kind == STUDY_ACT_COMPUTE && iv->name) {
    double *t = g_hash_table_lookup(ka->by_name, iv->name);
    if (t == NULL) {
      t = g_new0(double, 1);
      g_hash_table_insert(ka->by_name, (gpointer)iv->name, t);
    }
    *t += (double)(e - s);
    ka->compute_ps += (double)(e - s);
  } else if (iv->n_ranks == 1 && iv->kind != STUDY_ACT_COMM && iv->end > iv->start) {
    ka->copy_bytes += (double)iv->bytes * (double)(e - s) / (double)(iv->end - iv->start);
    ka->copy_ps += (double)(e - s);
  }
}

/* dominant_kernel_concentration and average_memory_bandwidth from the
 * accumulated samples (frees them); the keys wisp does not compute yet get
 * their reason.  O(kernel names). */
static void kernel_metrics(study_metrics *m, kernel_acc *ka)
{
  GHashTableIter it;
  gpointer k, v;
  double best = -1;
  const char *best_name = NULL;
  g_hash_table_iter_init(&it, ka->by_name);
  while (g_hash_table_iter_next(&it, &k, &v))
    if (*(double *)v > best || (*(double *)v == best && strcmp(k, best_name) < 0)) {
      best = *(double *)v;
      best_name = k;
    }
  m->dominant_kernel_concentration_pct = ka->compute_ps > 0 ? 100 * best / ka->compute_ps : NAN;
  m->dominant_kernel = best_name ? g_strdup(best_name) : NULL;
  /* bytes / ps = TB/s; x 1000 = GB/s */
  m->average_memory_bandwidth_GBps = ka->copy_ps > 0 ? 1000 * ka->copy_bytes / ka->copy_ps : NAN;
  m->average_memory_bandwidth_source = ka->copy_ps > 0 ? "bytes of the sized memcpy/memset over their time"
                                       : "no memcpy or memset with a byte count in the window (XLA graphs carry no "
                                         "copy sizes; Kineto and Nsight copies carry theirs)";
  m->moe_fraction_pct = ka->kernel_ps > 0 ? 100 * ka->moe_ps / ka->kernel_ps : NAN;
  g_hash_table_destroy(ka->by_name);
}

/* mean_sm_coverage and bw_peertopeer from the device facts that lie in
 * each rank's window (a grid cut by the window weighs its part).
 * O(grids + samples). */
static void device_metrics(study_metrics *m, const study_activity *a)
{
  double wsum = 0, wdur = 0, usum = 0, psum = 0;
  uint64_t un = 0, pn = 0;
  for (int r = 0; r < a->n_ranks; r++) {
    sim_time_ps lo = a->origin[r], hi = a->origin[r] + a->window[r];
    for (guint i = 0; a->grids && a->grids[r] && i < a->grids[r]->len; i++) {
      const act_grid *x = &g_array_index(a->grids[r], act_grid, i);
      sim_time_ps s = MAX(x->start + lo, lo), e = MIN(x->end + lo, hi);
      if (e <= s)
        continue;
      wsum += x->coverage * (double)(e - s);
      wdur += (double)(e - s);
      usum += x->coverage;
      un++;
    }
    for (guint i = 0; a->p2p && a->p2p[r] && i < a->p2p[r]->len; i++) {
      const act_sample *x = &g_array_index(a->p2p[r], act_sample, i);
      if (x->t + lo >= lo && x->t + lo < hi) {
        psum += x->value;
        pn++;
      }
    }
  }
  m->mean_sm_coverage_pct = wdur > 0 ? 100 * wsum / wdur : NAN;
  m->mean_sm_coverage_unweighted_pct = un ? 100 * usum / (double)un : NAN;
  m->mean_sm_coverage_source = wdur > 0 ? "kernel launch grids over the device's SM count (Nsight)" : a->grid_why;
  m->bw_peertopeer_pct = pn ? psum / (double)pn : NAN;
  m->bw_peertopeer_source = pn ? "NVLink TX Responses User Data [Throughput %] samples (Nsight GPU metrics)"
                                : a->p2p_why;
}

/* Compute kernel time per class (study_kernel_class), and the longest
 * unclassified kernel interval with its name. */
typedef struct {
  double t[3];
  sim_time_ps unnamed_longest;
  const char *unnamed_name;
} class_acc;

static void class_add(class_acc *c, const act_iv *iv, sim_time_ps dur)
{
  int k = (iv->kclass & ACT_UNNAMED) ? STUDY_KERNEL_UNCLASSIFIED : (int)(iv->kclass & 1);
  c->t[k] += (double)dur;
  if (k == STUDY_KERNEL_UNCLASSIFIED && dur > c->unnamed_longest) {
    c->unnamed_longest = dur;
    c->unnamed_name = iv->name;
  }
}

/* compute_bound + memory_bound + unclassified = 100 % of compute kernel
 * time (all NAN without compute). */
static void class_shares(study_metrics *m, const class_acc *c)
{
  double ct = c->t[0] + c->t[1] + c->t[2];
  m->compute_bound_pct = ct > 0 ? 100 * c->t[STUDY_KERNEL_COMPUTE_BOUND] / ct : NAN;
  m->memory_bound_pct = ct > 0 ? 100 * c->t[STUDY_KERNEL_MEMORY_BOUND] / ct : NAN;
  m->unclassified_pct = ct > 0 ? 100 * c->t[STUDY_KERNEL_UNCLASSIFIED] / ct : NAN;
  m->unclassified_kernel = c->unnamed_name;
}

/* TTFT and TPOT until `wisp metrics` measures them (study_metrics_set_latency). */
static const char latency_na[] = "not computed for a replayed window: `wisp metrics` measures it over every vLLM "
                                 "execute_context / SGLang run_batch execution, `wisp utility --latency` replays "
                                 "each one and gives its what-ifs";

study_metrics *study_metrics_compute(const study_activity *a, const study_mfu_input *mfu)
{
  study_metrics *m = g_new0(study_metrics, 1);
  m->n_ranks = a->n_ranks;
  m->steps = a->steps;
  m->ranks = g_new0(study_metric_rank, a->n_ranks);
  m->straggler_rank = -1;
  GHashTable *accs = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, coll_acc_free);
  kernel_acc ka = {g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free), 0, 0, 0, 0, 0};
  double sum_step = 0, sum_mto = 0, sum_frac = 0, sum_ovl = 0, sum_exposed = 0;
  class_acc cls = {{0, 0, 0}, 0, NULL};
  int n_win = 0, n_active = 0, n_comm = 0;
  sim_time_ps act_min = -1, act_max = -1;
  sim_time_ps first_start = -1, last_end = -1, first_end = -1;
  int comm_ranks = 0;
  for (int r = 0; r < a->n_ranks; r++) {
    GArray *v = study_activity_rank_ivs(a, r); /* the spill file's part too */
    sim_time_ps lo = a->origin[r], hi = a->origin[r] + a->window[r];
    study_metric_rank *mr = &m->ranks[r];
    mr->window = a->window[r];
    if (a->window[r] <= 0)
      continue;
    span *sp[3];
    guint n[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++)
      sp[k] = g_new(span, v->len + 1);
    sim_time_ps c_first = -1, c_last = -1;
    for (guint i = 0; i < v->len; i++) {
      const act_iv *iv = &g_array_index(v, act_iv, i);
      sim_time_ps s = MAX(iv->start, lo), e = MIN(iv->end, hi);
      if (e <= s)
        continue;
      sp[iv->kind][n[iv->kind]++] = (span){s, e};
      if (iv->kind == STUDY_ACT_COMPUTE)
        class_add(&cls, iv, e - s);
      add_kernel_sample(&ka, iv, s, e);
      if (iv->kind == STUDY_ACT_COMM) {
        add_comm_sample(accs, iv);
        c_first = c_first < 0 || s < c_first ? s : c_first;
        c_last = MAX(c_last, e);
      }
    }
    for (int k = 0; k < 3; k++)
      n[k] = merge_spans(sp[k], n[k]);
    /* U_km = U_k u U_m: the non-communication kernels. */
    span *km = g_new(span, n[0] + n[1] + 1);
    memcpy(km, sp[STUDY_ACT_COMPUTE], n[0] * sizeof(span));
    memcpy(km + n[0], sp[STUDY_ACT_MEMCPY], n[1] * sizeof(span));
    guint nkm = merge_spans(km, n[0] + n[1]);
    mr->compute = spans_len(sp[STUDY_ACT_COMPUTE], n[0]);
    mr->memcpy = spans_len(sp[STUDY_ACT_MEMCPY], n[1]);
    mr->comm = spans_len(sp[STUDY_ACT_COMM], n[2]);
    sim_time_ps km_len = spans_len(km, nkm);
    mr->overlapped_comm = spans_inter(sp[STUDY_ACT_COMM], n[2], km, nkm);
    mr->exposed_comm = mr->comm - mr->overlapped_comm;
    mr->active = mr->comm + km_len - mr->overlapped_comm;
    mr->idle = mr->window - mr->active;
    sim_time_ps copy_hidden = spans_inter(sp[STUDY_ACT_MEMCPY], n[1], sp[STUDY_ACT_COMPUTE], n[0]);
    for (int k = 0; k < 3; k++)
      g_free(sp[k]);
    g_free(km);

    sim_time_ps step = a->window[r] / a->steps;
    sum_step += (double)step;
    m->step_min = n_win == 0 || step < m->step_min ? step : m->step_min;
    m->step_max = MAX(m->step_max, step);
    n_win++;
    sum_mto += (double)(mr->memcpy - copy_hidden) / (double)mr->window;
    sum_exposed += (double)mr->exposed_comm / a->steps;
    if (mr->active > 0) {
      sum_frac += (double)mr->comm / (double)mr->active;
      act_min = act_min < 0 || mr->active < act_min ? mr->active : act_min;
      act_max = MAX(act_max, mr->active);
      n_active++;
    }
    if (mr->comm > 0) {
      sum_ovl += (double)mr->overlapped_comm / (double)mr->comm;
      n_comm++;
    }
    if (c_last >= 0) {
      comm_ranks++;
      first_start = first_start < 0 || c_first < first_start ? c_first : first_start;
      first_end = first_end < 0 || c_last < first_end ? c_last : first_end;
      if (c_last > last_end) {
        last_end = c_last;
        m->straggler_rank = r;
      }
    }
  }
  m->avg_step_time = n_win ? (sim_time_ps)llround(sum_step / n_win) : 0;
  m->memory_transfer_overhead_pct = n_win ? 100 * sum_mto / n_win : NAN;
  m->total_communication_time = n_win ? (sim_time_ps)llround(sum_exposed / n_win) : 0;
  if (a->comm_split && a->n_ranks > 0) {
    double sum[3] = {0, 0, 0};
    for (int r = 0; r < a->n_ranks; r++)
      for (int k = 0; k < 3; k++)
        sum[k] += (double)a->comm_split[3 * r + k] / a->steps;
    m->comm_split = TRUE;
    m->comm_transfer = (sim_time_ps)llround(sum[0] / a->n_ranks);
    m->straggler_wait = (sim_time_ps)llround(sum[1] / a->n_ranks);
    m->dependency_wait = (sim_time_ps)llround(sum[2] / a->n_ranks);
  }
  m->communication_fraction_pct = n_active ? 100 * sum_frac / n_active : NAN;
  m->compute_comm_overlap_pct = n_comm ? 100 * sum_ovl / n_comm : NAN;
  m->load_imbalance_ratio = n_active && act_min > 0 ? (double)act_max / (double)act_min : NAN;
  class_shares(m, &cls);
  study_metrics_set_latency(m, NAN, NAN, latency_na, "as for ttft");
  m->straggler = comm_ranks >= 2 && last_end > first_start
                     ? (double)(last_end - first_end) / (double)(last_end - first_start) : 0;
  if (comm_ranks < 2)
    m->straggler_rank = -1;
  study_metrics_mfu(m, mfu);
  kernel_metrics(m, &ka);
  device_metrics(m, a);

  coll_rows(m, accs);
  g_hash_table_destroy(accs);
  return m;
}

void study_metrics_free(study_metrics *m)
{
  if (m == NULL)
    return;
  g_free(m->ranks);
  g_free(m->dominant_kernel);
  g_free(m->ttft_why);
  g_free(m->tpot_why);
  g_free(m->unmeasured_why);
  if (m->colls)
    g_array_free(m->colls, TRUE);
  g_free(m);
}

void study_metrics_set_latency(study_metrics *m, double ttft_ns, double tpot_ns, const char *ttft_why,
                               const char *tpot_why)
{
  m->ttft_ns = ttft_ns;
  m->tpot_ns = tpot_ns;
  g_free(m->ttft_why);
  g_free(m->tpot_why);
  m->ttft_why = g_strdup(ttft_why);
  m->tpot_why = g_strdup(tpot_why);
}

study_metrics *study_metrics_unmeasured(int n_ranks, const char *why)
{
  study_metrics *m = g_new0(study_metrics, 1);
  m->n_ranks = n_ranks;
  m->steps = 0;
  m->ranks = g_new0(study_metric_rank, MAX(n_ranks, 1));
  m->colls = g_array_new(FALSE, TRUE, sizeof(study_metric_coll));
  m->unmeasured_why = g_strdup(why);
  m->straggler_rank = -1;
  m->mfu_pct = m->compute_bound_pct = m->memory_bound_pct = m->unclassified_pct = NAN;
  m->memory_transfer_overhead_pct = m->communication_fraction_pct = m->compute_comm_overlap_pct = NAN;
  m->load_imbalance_ratio = m->straggler = m->dominant_kernel_concentration_pct = NAN;
  m->average_memory_bandwidth_GBps = m->moe_fraction_pct = m->mean_sm_coverage_pct = NAN;
  m->mean_sm_coverage_unweighted_pct = m->bw_peertopeer_pct = NAN;
  m->mfu_source = m->average_memory_bandwidth_source = m->mean_sm_coverage_source = m->bw_peertopeer_source =
    m->unmeasured_why;
  study_metrics_set_latency(m, NAN, NAN, why, why);
  return m;
}
