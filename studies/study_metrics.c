/* study_metrics.c: the CCL-Bench metric catalog over an activity timeline
 * (study_metrics.h; definitions and formulas in doc/metrics.md).
 *
 * The timeline keeps one 32-byte record per GPU interval.  The metrics sort
 * each rank's intervals by start and merge them into unions per kind
 * (compute U_k, copies U_m, communication U_c), clipped to the rank's
 * window; every overlap figure is a two-pointer walk over two unions.
 */
#include "config.h"
#include "chakra/et_scale.h"
#include "studies/study_metrics.h"
#include "collectives/coll_facts.h"
#include "replay/sim_levers.h"

#include <math.h>
#include <string.h>

typedef struct {
  sim_time_ps start, end;
  uint64_t bytes;          /* Chakra comm_size (communication); copy bytes (memory copy, when sized) */
  const char *name;        /* kernel name (compute and memory copy): the graph's string pool */
  int32_t n_ranks;         /* members of the communicator (communication); 1 = a sized copy */
  uint8_t kind;            /* study_act_kind */
  uint8_t kclass;          /* study_kernel_class (compute only) */
  uint8_t op;              /* et_coll_type, ET_COLL_NONE for send/recv */
  uint8_t node_type;       /* et_node_type */
} act_iv;

/* Catalog keys wisp does not compute yet, each with the reason printed as
 * n/a (issue 31 item 3). */
static const struct { const char *key, *reason; } study_metrics_not_computed[] = {
  {"moe_fraction", "not computed yet (expert compute, routing and dispatch/combine time through the registry)"},
  {"mean_sm_coverage", "not computed yet (needs kernel grid sizes and the SM count; Nsight exports carry them, the "
                       "graph does not keep them)"},
  {"bw_peertopeer", "not computed yet (needs peer-to-peer copy counters; none of the inputs' graphs keep them)"},
  {"ttft", "not computed yet (inference prefill steps are not told apart from decode steps)"},
  {"tpot", "not computed yet (inference decode steps are not told apart from prefill steps)"},
};

struct study_activity {
  const et_workload *w;
  int n_ranks, steps;
  GArray **ivs;            /* per rank: act_iv */
  sim_time_ps *origin;     /* window start on the common clock */
  sim_time_ps *window;     /* window length */
  sim_replay_observer obs;
  sim_replay_observer next;
};

/* ---- classification ---- */

static gboolean contains_ci(const char *hay, const char *needle)
{
  size_t n = strlen(needle);
  for (const char *p = hay; *p; p++)
    if (g_ascii_strncasecmp(p, needle, n) == 0)
      return TRUE;
  return FALSE;
}

study_kernel_class study_kernel_class_of(const char *name)
{
  /* One set of name rules (replay/sim_levers.c, doc/studies.md "Kernel
   * classes"): the gemm class is compute-bound, elementwise and
   * communication-adjacent kernels are memory-bound. */
  return sim_kernel_classify(name) == SIM_KERNEL_GEMM ? STUDY_KERNEL_COMPUTE_BOUND : STUDY_KERNEL_MEMORY_BOUND;
}

gboolean study_is_memcpy_name(const char *name)
{
  return name && (contains_ci(name, "memcpy") || g_str_has_prefix(name, "copy-start") ||
                  g_str_has_prefix(name, "copy-done"));
}

/* ---- the timeline ---- */

study_activity *study_activity_new(const et_workload *w)
{
  study_activity *a = g_new0(study_activity, 1);
  a->w = w;
  a->n_ranks = w->n_ranks;
  a->steps = 1;
  a->ivs = g_new0(GArray *, w->n_ranks);
  for (int r = 0; r < w->n_ranks; r++)
    a->ivs[r] = g_array_new(FALSE, FALSE, sizeof(act_iv));
  a->origin = g_new0(sim_time_ps, w->n_ranks);
  a->window = g_new0(sim_time_ps, w->n_ranks);
  return a;
}

void study_activity_free(study_activity *a)
{
  if (a == NULL)
    return;
  for (int r = 0; r < a->n_ranks; r++)
    g_array_free(a->ivs[r], TRUE);
  g_free(a->ivs);
  g_free(a->origin);
  g_free(a->window);
  g_free(a);
}

void study_activity_set_steps(study_activity *a, int steps)
{
  a->steps = steps > 0 ? steps : 1;
}

void study_activity_add(study_activity *a, int rank, const et_graph *g, uint32_t node, sim_time_ps start,
                        sim_time_ps end)
{
  const et_node *n = &g->nodes[node];
  if (rank < 0 || rank >= a->n_ranks || end <= start || (n->flags & (ET_FLAG_CPU_OP | ET_FLAG_DELAY)))
    return;
  act_iv iv = {.start = start, .end = end, .op = ET_COLL_NONE, .node_type = n->type};
  switch (n->type) {
  case ET_NODE_COMP: {
    const char *name = et_node_name(g, node);
    iv.kind = study_is_memcpy_name(name) ? STUDY_ACT_MEMCPY : STUDY_ACT_COMPUTE;
    iv.kclass = (uint8_t)study_kernel_class_of(name);
    iv.name = name;
    const et_comp_attr *ca = g->n_comp_attrs ? et_graph_comp_attr(g, node) : NULL;
    if (ca && ca->has_tensor_size && (iv.kind == STUDY_ACT_MEMCPY || g_str_has_prefix(name, "Memset"))) {
      iv.bytes = ca->tensor_size; /* the bytes a copy or memset moved (Nsight exports) */
      iv.n_ranks = 1;
    }
    break;
  }
  case ET_NODE_COMM_COLL:
  case ET_NODE_COMM_SEND:
  case ET_NODE_COMM_RECV: {
    et_comm tc;
    const et_comm *c = n->comm == ET_NONE ? NULL
                       : a->w ? et_workload_traced_comm(a->w, rank, n->comm, &tc) : et_node_comm(g, node);
    iv.kind = STUDY_ACT_COMM;
    if (c) {
      iv.bytes = c->bytes;
      iv.op = n->type == ET_NODE_COMM_COLL ? c->coll : ET_COLL_NONE;
      const et_group *grp = c->group == ET_GROUP_WORLD ? NULL : et_workload_group(a->w, c->group);
      iv.n_ranks = n->type != ET_NODE_COMM_COLL ? 2 : grp ? grp->n_ranks : a->w->n_ranks;
    }
    break;
  }
  default:
    return;
  }
  g_array_append_val(a->ivs[rank], iv);
}

gboolean study_activity_add_measured(study_activity *a, const et_workload *w, GError **error)
{
  gboolean any = FALSE;
  for (int r = 0; r < w->n_ranks; r++)
    any |= w->measured_step_ps && w->measured_step_ps[r] > 0;
  if (!any) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: the workload carries no measured step window (a generated or converted-without-times set); "
                "the metrics of a measured run need a Kineto or XLA trace (simulate --json gives the simulated "
                "run's metrics)", w->source ? w->source : "workload");
    return FALSE;
  }
  for (int r = 0; r < w->n_ranks; r++) {
    const et_graph *g = w->ranks[r];
    sim_time_ps origin = w->measured_start_ps ? w->measured_start_ps[r] : 0;
    a->origin[r] = origin;
    a->window[r] = w->measured_step_ps[r] > 0 ? w->measured_step_ps[r] : 0;
    for (uint32_t i = 0; g && i < g->n_nodes; i++)
      if (g->nodes[i].flags & ET_FLAG_HAS_START)
        study_activity_add(a, r, g, i, origin + g->nodes[i].start_ps,
                           origin + g->nodes[i].start_ps + g->nodes[i].duration_ps);
  }
  return TRUE;
}

static void obs_node_done(void *ctx, int rank, const et_graph *g, uint32_t node, sim_time_ps start, sim_time_ps end)
{
  study_activity *a = ctx;
  study_activity_add(a, rank, g, node, start, end);
  if (a->next.node_done)
    a->next.node_done(a->next.ctx, rank, g, node, start, end);
}

static void obs_comm_done(void *ctx, const sim_comm_record *rec)
{
  study_activity *a = ctx;
  if (a->next.comm_done)
    a->next.comm_done(a->next.ctx, rec);
}

const sim_replay_observer *study_activity_observer(study_activity *a, const sim_replay_observer *next)
{
  if (next)
    a->next = *next;
  a->obs.node_done = obs_node_done;
  a->obs.comm_done = obs_comm_done;
  a->obs.ctx = a;
  return &a->obs;
}

void study_activity_set_replay_windows(study_activity *a, const sim_result *r, const et_workload *w)
{
  for (int k = 0; k < r->n_ranks && k < a->n_ranks; k++) {
    int rank = r->ranks[k].rank;
    if (rank < 0 || rank >= a->n_ranks)
      continue;
    sim_time_ps origin = r->measured_starts && w->measured_start_ps ? w->measured_start_ps[rank] : 0;
    a->origin[rank] = origin;
    a->window[rank] = r->ranks[k].finish > origin ? r->ranks[k].finish - origin : 0;
  }
}

/* ---- workload cards ---- */

double study_peak_tflops_of(const char *hw_model)
{
  static const struct { const char *name; double tflops; } peaks[] = {
    {"nvidia_a100", 312.0}, {"nvidia_h100", 989.0}, {"tpu_v6e", 918.0},
  };
  for (guint i = 0; hw_model && i < G_N_ELEMENTS(peaks); i++)
    if (g_ascii_strcasecmp(hw_model, peaks[i].name) == 0)
      return peaks[i].tflops;
  return 0;
}

/* A required count or number of the MFU model; the error of a missing one
 * names every key MFU needs. */
static gboolean mfu_need(const cfg_card *doc, const char *key, gboolean count, double *out, GError **error)
{
  gboolean found = FALSE;
  int64_t n = 0;
  if (count ? !cfg_card_count(doc, key, G_MAXINT32, &n, &found, error)
            : !cfg_card_number(doc, key, out, &found, error))
    return FALSE;
  if (!found)
    return cfg_card_fail(doc, key, WISP_ERROR_INVALID, error, "missing (MFU needs workload.model.model_arch."
                         "{num_params, num_layers, head_dim, num_heads} and workload.data.{batch_size, seq_len})");
  if (count)
    *out = (double)n;
  return TRUE;
}

gboolean study_card_from_doc(const cfg_card *doc, study_card *out, GError **error)
{
  memset(out, 0, sizeof *out);
  out->training = TRUE;
  if (!cfg_card_has(doc, "workload.model.model_arch")) {
    /* Not an MFU card: MFU says so, the other uses of --card go on. */
    out->no_model = TRUE;
    return TRUE;
  }
  static const char *const phases[] = {"training", "inference", NULL};
  const char *phase = NULL, *hw = NULL;
  int64_t total = 0;
  gboolean ok =
    mfu_need(doc, "workload.model.model_arch.num_params", FALSE, &out->num_params, error) &&
    cfg_card_number(doc, "workload.model.model_arch.num_params_embedding", &out->num_params_embedding, NULL,
                    error) &&
    mfu_need(doc, "workload.model.model_arch.num_layers", TRUE, &out->num_layers, error) &&
    mfu_need(doc, "workload.model.model_arch.head_dim", TRUE, &out->head_dim, error) &&
    mfu_need(doc, "workload.model.model_arch.num_heads", TRUE, &out->num_heads, error) &&
    mfu_need(doc, "workload.data.batch_size", TRUE, &out->batch_size, error) &&
    mfu_need(doc, "workload.data.seq_len", TRUE, &out->seq_len, error) &&
    cfg_card_count(doc, "workload.hardware.xpu_spec.total_count", G_MAXINT32, &total, NULL, error);
  out->num_params_active = out->num_params;
  ok = ok &&
       cfg_card_number(doc, "workload.model.model_arch.num_params_active", &out->num_params_active, NULL, error) &&
       cfg_card_choice(doc, "workload.model.phase", phases, &phase, NULL, error);
  if (!ok)
    return FALSE;
  /* Parameter counts in [1, 10^15] (the largest published models hold a few
   * 10^12): 1e300 would print a 290-digit MFU.  Embedding and active counts
   * lie within the total. */
  static const char *const pkeys[] = {"workload.model.model_arch.num_params",
                                      "workload.model.model_arch.num_params_active",
                                      "workload.model.model_arch.num_params_embedding"};
  const double pvals[] = {out->num_params, out->num_params_active, out->num_params_embedding};
  for (int k = 0; k < 3; k++) {
    double lo = k == 2 ? 0.0 : 1.0, hi = k == 0 ? 1e15 : out->num_params;
    if (!(pvals[k] >= lo && pvals[k] <= hi))
      return cfg_card_fail(doc, pkeys[k], WISP_ERROR_INVALID, error, "%g is out of range: give a parameter count "
                           "from %g to %g%s", pvals[k], lo, hi, k ? " (at most num_params)" : "");
  }
  out->total_count = (int)total;
  out->training = phase == NULL || strcmp(phase, "training") == 0;
  if ((hw = cfg_card_get(doc, "workload.hardware.xpu_spec.model", NULL)) != NULL) {
    out->hw_model = g_strdup(hw);
    out->peak_tflops = study_peak_tflops_of(out->hw_model);
  }
  return TRUE;
}

void study_card_clear(study_card *c)
{
  g_free(c->hw_model);
  c->hw_model = NULL;
}

double study_card_flop_per_token(const study_card *c)
{
  double dense = c->num_params_active - c->num_params_embedding;
  double attn = c->num_layers * c->head_dim * c->num_heads * c->seq_len;
  return c->training ? 6 * dense + 12 * attn : 2 * dense + 4 * attn;
}

/* ---- interval arithmetic ---- */

typedef struct {
  sim_time_ps s, e;
} span;

static int cmp_span(const void *a, const void *b)
{
  const span *x = a, *y = b;
  return x->s < y->s ? -1 : x->s > y->s ? 1 : (x->e > y->e) - (x->e < y->e);
}

/* Sorts and merges in place; returns the new count. */
static guint merge_spans(span *v, guint n)
{
  if (n == 0)
    return 0;
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

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median with the mean of the two middle values for an even count (Python's
 * statistics.median, which the seed uses); NAN for none. */
static double median(GArray *v)
{
  if (v->len == 0)
    return NAN;
  qsort(v->data, v->len, sizeof(double), cmp_double);
  double *d = (double *)v->data;
  return v->len % 2 ? d[v->len / 2] : (d[v->len / 2 - 1] + d[v->len / 2]) / 2;
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

static void compute_mfu(study_metrics *m, const study_mfu_input *in)
{
  m->mfu_pct = NAN;
  m->mfu_source = "no workload card (--card) or model_flops";
  if (in == NULL || m->avg_step_time <= 0)
    return;
  double step_s = (double)m->avg_step_time * 1e-12;
  double peak = in->peak_tflops > 0 ? in->peak_tflops : in->card ? in->card->peak_tflops : 0;
  if (in->card && in->card->no_model && in->model_flops == 0) {
    m->mfu_source = "the workload card has no workload.model.model_arch (num_params, num_layers, head_dim, num_heads)";
    return;
  }
  study_mfu_input flops_only = {NULL, in->model_flops, in->peak_tflops};
  if (in->card && in->card->no_model)
    in = &flops_only;
  if (in->card == NULL && in->model_flops == 0)
    return;
  if (peak <= 0) {
    m->mfu_source = "unknown peak: give hardware.xpu_spec.model (nvidia_a100, nvidia_h100, tpu_v6e) or --peak-tflops";
    return;
  }
  if (in->card) {
    const study_card *c = in->card;
    double world = c->total_count > 0 ? c->total_count : m->n_ranks;
    double tokens_per_s = c->batch_size * c->seq_len / step_s;
    m->mfu_pct = study_card_flop_per_token(c) * tokens_per_s / (world * peak * 1e12) * 100;
    m->mfu_source = "card";
  } else {
    /* Per chip and step: model_flops / (chips x steps), over the step time. */
    double per_chip_step = (double)in->model_flops / ((double)m->n_ranks * m->steps);
    m->mfu_pct = per_chip_step / step_s / (peak * 1e12) * 100;
    m->mfu_source = "model_flops";
  }
  /* Above 100 % the card's (or model_flops') FLOPs are more than the peak
   * could do in the measured step: the figure would be meaningless. */
  if (m->mfu_pct > 100) {
    m->mfu_source = in->card ? "above 100 %: the card does not describe this trace (its model and batch "
                    "need more FLOPs than the devices' peak allows in the step)" : "above 100 %: model_flops does "
                    "not describe this trace (more FLOPs than the devices' peak allows in the step)";
    m->mfu_pct = NAN;
  }
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
} kernel_acc;

/* Adds the part [s, e) of interval iv that lies in its window.  A copy cut
 * by the window counts the bytes of that part (pro rata).  O(1). */
static void add_kernel_sample(kernel_acc *ka, const act_iv *iv, sim_time_ps s, sim_time_ps e)
{
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
                                       : "no memcpy or memset with a byte count (Kineto and XLA graphs do not "
                                         "carry copy sizes yet; Nsight exports do)";
  g_hash_table_destroy(ka->by_name);
}

study_metrics *study_metrics_compute(const study_activity *a, const study_mfu_input *mfu)
{
  study_metrics *m = g_new0(study_metrics, 1);
  m->n_ranks = a->n_ranks;
  m->steps = a->steps;
  m->ranks = g_new0(study_metric_rank, a->n_ranks);
  m->straggler_rank = -1;
  GHashTable *accs = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, coll_acc_free);
  kernel_acc ka = {g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free), 0, 0, 0};
  double sum_step = 0, sum_mto = 0, sum_frac = 0, sum_ovl = 0, sum_exposed = 0;
  double class_t[2] = {0, 0};
  int n_win = 0, n_active = 0, n_comm = 0;
  sim_time_ps act_min = -1, act_max = -1;
  sim_time_ps first_start = -1, last_end = -1, first_end = -1;
  int comm_ranks = 0;
  for (int r = 0; r < a->n_ranks; r++) {
    GArray *v = a->ivs[r];
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
        class_t[iv->kclass] += (double)(e - s);
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
  m->communication_fraction_pct = n_active ? 100 * sum_frac / n_active : NAN;
  m->compute_comm_overlap_pct = n_comm ? 100 * sum_ovl / n_comm : NAN;
  m->load_imbalance_ratio = n_active && act_min > 0 ? (double)act_max / (double)act_min : NAN;
  double ct = class_t[0] + class_t[1];
  m->compute_bound_pct = ct > 0 ? 100 * class_t[STUDY_KERNEL_COMPUTE_BOUND] / ct : NAN;
  m->memory_bound_pct = ct > 0 ? 100 * class_t[STUDY_KERNEL_MEMORY_BOUND] / ct : NAN;
  m->straggler = comm_ranks >= 2 && last_end > first_start
                     ? (double)(last_end - first_end) / (double)(last_end - first_start) : 0;
  if (comm_ranks < 2)
    m->straggler_rank = -1;
  compute_mfu(m, mfu);
  kernel_metrics(m, &ka);

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
  if (m->colls)
    g_array_free(m->colls, TRUE);
  g_free(m);
}

/* ---- output ---- */

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
  wisp_json_int(j, "steps", m->steps);
  wisp_json_ns(j, "avg_step_time_ns", m->avg_step_time);
  wisp_json_ns(j, "step_time_min_ns", m->step_min);
  wisp_json_ns(j, "step_time_max_ns", m->step_max);
  json_num(j, "mfu_pct", m->mfu_pct, 6);
  wisp_json_string(j, "mfu_source", m->mfu_source);
  json_num(j, "compute_bound_pct", m->compute_bound_pct, 4);
  json_num(j, "memory_bound_pct", m->memory_bound_pct, 4);
  json_num(j, "memory_transfer_overhead_pct", m->memory_transfer_overhead_pct, 4);
  json_num(j, "communication_fraction_pct", m->communication_fraction_pct, 4);
  wisp_json_ns(j, "total_communication_time_ns", m->total_communication_time);
  json_num(j, "compute_comm_overlap_pct", m->compute_comm_overlap_pct, 4);
  json_num(j, "load_imbalance_ratio", m->load_imbalance_ratio, 6);
  json_num(j, "dominant_kernel_concentration_pct", m->dominant_kernel_concentration_pct, 4);
  wisp_json_string(j, "dominant_kernel", m->dominant_kernel);
  json_num(j, "average_memory_bandwidth_GBps", m->average_memory_bandwidth_GBps, 4);
  wisp_json_string(j, "average_memory_bandwidth_source", m->average_memory_bandwidth_source);
  for (guint i = 0; i < G_N_ELEMENTS(study_metrics_not_computed); i++) {
    char *na_key = g_strdup_printf("%s_na_reason", study_metrics_not_computed[i].key);
    wisp_json_string(j, na_key, study_metrics_not_computed[i].reason);
    g_free(na_key);
  }
  wisp_json_double(j, "straggler", m->straggler, 6);
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
static double get_step(const study_metrics *m) { return (double)m->avg_step_time / 1e9; }
static double get_mfu(const study_metrics *m) { return m->mfu_pct; }
static double get_cb(const study_metrics *m) { return m->compute_bound_pct; }
static double get_mb(const study_metrics *m) { return m->memory_bound_pct; }
static double get_mto(const study_metrics *m) { return m->memory_transfer_overhead_pct; }
static double get_cf(const study_metrics *m) { return m->communication_fraction_pct; }
static double get_tct(const study_metrics *m) { return (double)m->total_communication_time / 1e9; }
static double get_ovl(const study_metrics *m) { return m->compute_comm_overlap_pct; }
static double get_lir(const study_metrics *m) { return m->load_imbalance_ratio; }
static double get_str(const study_metrics *m) { return m->straggler; }
static double get_dkc(const study_metrics *m) { return m->dominant_kernel_concentration_pct; }
static double get_amb(const study_metrics *m) { return m->average_memory_bandwidth_GBps; }

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
    {"memory_transfer_overhead (%)", get_mto, " %14.3f"},
    {"communication_fraction (%)", get_cf, " %14.2f"},
    {"total_communication_time (ms)", get_tct, " %14.3f"},
    {"compute_comm_overlap (%)", get_ovl, " %14.2f"},
    {"load_imbalance_ratio", get_lir, " %14.4f"},
    {"straggler", get_str, " %14.4f"},
    {"dominant_kernel_concentration (%)", get_dkc, " %14.2f"},
    {"average_memory_bandwidth (GB/s)", get_amb, " %14.3f"},
  };
  fprintf(out, "%-32s", "metric");
  if (measured)
    fprintf(out, " %14s", "measured");
  if (simulated)
    fprintf(out, " %14s", "simulated");
  fputc('\n', out);
  for (guint i = 0; i < G_N_ELEMENTS(rows); i++) {
    fprintf(out, "%-32s", rows[i].name);
    cell_pct(out, measured, measured ? rows[i].get(measured) : 0, rows[i].fmt);
    cell_pct(out, simulated, simulated ? rows[i].get(simulated) : 0, rows[i].fmt);
    fputc('\n', out);
  }
  const study_metrics *any = measured ? measured : simulated;
  if (any && isnan(any->mfu_pct))
    fprintf(out, "mfu: %s\n", any->mfu_source);
  if (any && any->dominant_kernel)
    fprintf(out, "dominant kernel: %s\n", any->dominant_kernel);
  if (any && isnan(any->average_memory_bandwidth_GBps))
    fprintf(out, "average_memory_bandwidth: n/a: %s\n", any->average_memory_bandwidth_source);
  for (guint i = 0; i < G_N_ELEMENTS(study_metrics_not_computed); i++)
    fprintf(out, "%s: n/a: %s\n", study_metrics_not_computed[i].key, study_metrics_not_computed[i].reason);
  print_colls(measured, "measured", out);
  print_colls(simulated, "simulated", out);
}
