/* cal_fit.c: collective instances from measured kernels and the
 * per-class least-squares alpha-beta fit (see cal.h and
 * doc/calibration.md).
 */
#include "config.h"
#include "chakra/et_view.h"

#include <math.h>
#include <string.h>

#include "calib/cal.h"
#include "collectives/coll.h"

const char *cal_class_name(cal_class c)
{
  return c == CAL_CLASS_INTRA ? "intra-node" : c == CAL_CLASS_INTER ? "inter-node" : "?";
}

const char *cal_exclusion_text(cal_exclusion e)
{
  switch (e) {
  case CAL_USED: return "used";
  case CAL_EX_P2P: return "point-to-point send/recv (its duration includes the peer's wait; not fitted)";
  case CAL_EX_CPU_OP: return "replayed for its measured duration, not simulated (a CPU-side op, no usable size, or group members missing from the trace)";
  case CAL_EX_UNSUPPORTED: return "barrier or unknown collective type (no bytes model)";
  case CAL_EX_ZERO_BYTES: return "zero bytes (size unknown or empty)";
  case CAL_EX_NO_DURATION: return "no measured duration";
  case CAL_EX_SINGLE_RANK: return "group of one rank (nothing crosses the network)";
  case CAL_EX_MISMATCH: return "members disagree on type or size (matching failed)";
  case CAL_EX_OVERLAP: return "overlapped with other communication on the same rank (every traced member)";
  default: return "?";
  }
}

void cal_options_init(cal_options *opt)
{
  memset(opt, 0, sizeof *opt);
  opt->domain_size = 8;
  for (int c = 0; c < CAL_N_CLASSES; c++) {
    opt->prior_alpha_ps[c] = 1e6;     /* 1 us per step */
    opt->prior_beta_Bps[c] = 25e9;    /* 25 GB/s */
  }
  opt->loss = CAL_LOSS_RELATIVE;
}

/* Ring step counts: all-reduce is a reduce-scatter then an all-gather,
 * 2(n-1) steps; every other modelled collective takes n-1 steps (a
 * pipelined chain for broadcast and reduce).  0 for unmodelled types. */
static double model_steps(et_coll_type op, int n)
{
  switch (op) {
  case ET_COLL_ALL_REDUCE:
    return 2.0 * (n - 1);
  case ET_COLL_REDUCE_SCATTER:
  case ET_COLL_REDUCE_SCATTER_BLOCK:
  case ET_COLL_ALL_GATHER:
  case ET_COLL_ALL_TO_ALL:
  case ET_COLL_ALL_TO_ALLV:
  case ET_COLL_BROADCAST:
  case ET_COLL_REDUCE:
  case ET_COLL_GATHER:
  case ET_COLL_SCATTER:
    return (double)(n - 1);
  default:
    return 0.0;
  }
}

/* ---------------------------------------------------------------- */

typedef struct {
  uint32_t gslot, seq;     /* sort key */
  uint32_t group;
  uint8_t op;
  uint64_t bytes;
  int n;
  gboolean mismatch;
  int seen, with_duration, overlapped;
  sim_time_ps best;        /* shortest usable duration, 0 = none */
  int best_rank;
  uint64_t best_node;
  int first_rank;
  uint64_t first_node;
  uint64_t a2av_off_max;   /* largest off-diagonal bytes of a member (ALL_TO_ALLV) */
  gboolean a2av_have;
} cal_inst;

typedef struct {
  uint32_t node;
  sim_time_ps start;
} order_ent;

static int cmp_order(const void *a, const void *b)
{
  const order_ent *x = a, *y = b;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return x->node < y->node ? -1 : x->node > y->node;
}

static int cmp_inst(const void *a, const void *b)
{
  const cal_inst *x = *(cal_inst *const *)a, *y = *(cal_inst *const *)b;
  if (x->gslot != y->gslot)
    return x->gslot < y->gslot ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Marks the communication nodes of g whose measured interval intersects
 * another communication node's (both with a measured start and a positive
 * duration).  After sorting by start, node i overlaps an earlier one iff
 * start_i < max(end of earlier), and a later one iff start_{i+1} < end_i.
 * O(m log m) for m communication nodes. */
static void mark_overlaps(const et_graph *g, gboolean *overlapped)
{
  GArray *ents = g_array_new(FALSE, FALSE, sizeof(order_ent));
  for (uint32_t i = 0; i < g->n_nodes; i++) {
    const et_node *n = &g->nodes[i];
    if (n->type < ET_NODE_COMM_SEND || n->type > ET_NODE_COMM_COLL)
      continue;
    if (!(n->flags & ET_FLAG_HAS_START) || n->duration_ps <= 0)
      continue;
    order_ent e = { i, n->start_ps };
    g_array_append_val(ents, e);
  }
  if (ents->len > 1)
    qsort(ents->data, ents->len, sizeof(order_ent), cmp_order);
  sim_time_ps max_end = INT64_MIN;
  for (guint k = 0; k < ents->len; k++) {
    const order_ent *e = &g_array_index(ents, order_ent, k);
    sim_time_ps end = e->start + g->nodes[e->node].duration_ps;
    if (k > 0 && e->start < max_end)
      overlapped[e->node] = TRUE;
    if (k + 1 < ents->len && g_array_index(ents, order_ent, k + 1).start < end)
      overlapped[e->node] = TRUE;
    if (end > max_end)
      max_end = end;
  }
  g_array_free(ents, TRUE);
}

static int member_index(const et_group *grp, int rank)
{
  if (grp == NULL)
    return rank;
  for (int k = 0; k < grp->n_ranks; k++)
    if (grp->ranks[k] == rank)
      return k;
  return -1;
}

static int domain_of(const cal_options *opt, int rank)
{
  if (opt->rank_domain)
    return opt->rank_domain[rank];
  return opt->domain_size > 0 ? rank / opt->domain_size : 0;
}

static void add_excluded_node(cal_fit *f, const et_workload *w, const et_graph *g, int rank, uint32_t i,
                              cal_exclusion why)
{
  const et_node *n = &g->nodes[i];
  et_comm tc;
  const et_comm *c = n->comm == ET_NONE ? NULL : et_workload_traced_comm(w, rank, n->comm, &tc);
  cal_point p = { 0 };
  p.rank = rank;
  p.node_id = n->id;
  p.group = c ? c->group : ET_GROUP_WORLD;
  p.op = c ? c->coll : ET_COLL_NONE;
  p.excluded = (uint8_t)why;
  p.bytes = c ? c->bytes : 0;
  p.measured = n->duration_ps;
  p.members_seen = 1;
  p.predicted_ps = NAN;
  p.residual_pct = NAN;
  g_array_append_val(f->points, p);
  f->excluded[why]++;
}

/* Builds the instances of every rank's collectives, keyed by (group,
 * per-group order), as the replay matches them. */
static GPtrArray *collect_instances(const et_workload *w, cal_fit *f)
{
  GHashTable *by_key = g_hash_table_new(g_int64_hash, g_int64_equal);
  GPtrArray *insts = g_ptr_array_new();
  uint32_t n_groups = w->groups ? w->groups->len : 0;
  uint32_t *seq = g_new(uint32_t, n_groups + 1);
  GPtrArray *keys = g_ptr_array_new_with_free_func(g_free);
  for (int r = 0; r < w->n_ranks; r++) {
    const et_graph *g = w->ranks[r];
    if (g == NULL)
      continue;
    memset(seq, 0, sizeof(uint32_t) * (n_groups + 1));
    gboolean *overlapped = g_new0(gboolean, g->n_nodes);
    mark_overlaps(g, overlapped);
    /* Issue order: measured start when every collective has one, else
     * node order. */
    GArray *order = g_array_new(FALSE, FALSE, sizeof(order_ent));
    gboolean all_start = TRUE;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
      const et_node *n = &g->nodes[i];
      if (n->type < ET_NODE_COMM_SEND || n->type > ET_NODE_COMM_COLL)
        continue;
      f->comm_nodes++;
      if (n->type != ET_NODE_COMM_COLL) {
        add_excluded_node(f, w, g, r, i, CAL_EX_P2P);
        continue;
      }
      if (n->flags & ET_FLAG_REPLAY) {
        add_excluded_node(f, w, g, r, i, CAL_EX_CPU_OP);
        continue;
      }
      if (!(n->flags & ET_FLAG_HAS_START)) {
        all_start = FALSE;
        f->unchecked_overlap++;
      }
      order_ent e = { i, n->start_ps };
      g_array_append_val(order, e);
    }
    if (all_start && order->len > 1)
      qsort(order->data, order->len, sizeof(order_ent), cmp_order);
    for (guint k = 0; k < order->len; k++) {
      uint32_t i = g_array_index(order, order_ent, k).node;
      const et_node *n = &g->nodes[i];
      et_comm tc;
      const et_comm *c = et_workload_traced_comm(w, r, n->comm, &tc);
      uint32_t gslot = c->group == ET_GROUP_WORLD ? 0 : c->group + 1;
      g_assert(gslot <= n_groups);
      uint64_t key = ((uint64_t)gslot << 32) | seq[gslot];
      cal_inst *in = g_hash_table_lookup(by_key, &key);
      if (in == NULL) {
        in = g_new0(cal_inst, 1);
        in->gslot = gslot;
        in->seq = seq[gslot];
        in->group = c->group;
        in->op = c->coll;
        in->bytes = c->bytes;
        const et_group *grp = c->group == ET_GROUP_WORLD ? NULL : et_workload_group(w, c->group);
        in->n = grp ? grp->n_ranks : w->n_ranks;
        in->first_rank = r;
        in->first_node = n->id;
        in->best_rank = -1;
        uint64_t *kp = g_new(uint64_t, 1);
        *kp = key;
        g_ptr_array_add(keys, kp);
        g_hash_table_insert(by_key, kp, in);
        g_ptr_array_add(insts, in);
      } else if (in->op != c->coll || in->bytes != c->bytes) {
        in->mismatch = TRUE;
      }
      seq[gslot]++;
      in->seen++;
      if (c->coll == ET_COLL_ALL_TO_ALLV && c->split != ET_NONE && g->split_width > 0) {
        const et_group *grp = c->group == ET_GROUP_WORLD ? NULL : et_workload_group(w, c->group);
        int self = member_index(grp, r);
        uint64_t off = 0;
        for (uint32_t s = 0; s < g->split_width; s++)
          if ((int)s != self)
            off += g->splits[c->split + s];
        in->a2av_have = TRUE;
        in->a2av_off_max = MAX(in->a2av_off_max, off);
      }
      if (n->duration_ps <= 0)
        continue;
      in->with_duration++;
      if (overlapped[i]) {
        in->overlapped++;
        continue;
      }
      if (in->best_rank < 0 || n->duration_ps < in->best) {
        in->best = n->duration_ps;
        in->best_rank = r;
        in->best_node = n->id;
      }
    }
    g_array_free(order, TRUE);
    g_free(overlapped);
  }
  g_free(seq);
  g_hash_table_destroy(by_key);
  g_ptr_array_free(keys, TRUE);
  g_ptr_array_sort(insts, cmp_inst);
  return insts;
}

static cal_exclusion judge(const cal_inst *in)
{
  if (model_steps((et_coll_type)in->op, 2) <= 0.0)
    return CAL_EX_UNSUPPORTED;
  if (in->n <= 1)
    return CAL_EX_SINGLE_RANK;
  if (in->mismatch)
    return CAL_EX_MISMATCH;
  /* All-to-allv moves its off-diagonal splits; everything else its size. */
  if (in->a2av_have ? in->a2av_off_max == 0 : in->bytes == 0)
    return CAL_EX_ZERO_BYTES;
  if (in->with_duration == 0)
    return CAL_EX_NO_DURATION;
  if (in->best_rank < 0)
    return CAL_EX_OVERLAP;
  return CAL_USED;
}

/* ---- least squares ---- */

typedef struct {
  double a, b, c, d, e;    /* sums w*x1^2, w*x1*x2, w*x2^2, w*x1*y, w*x2*y */
  int n;
  double x2max, y_at_x2max; /* largest bytes term and its measured time */
} normal_eq;

/* Solves the 2x2 normal equations for (alpha, g = 1/beta in ps per byte),
 * with the fallbacks described in doc/calibration.md; the fit's note says
 * which were taken. */
static void solve_class(cal_class_fit *cf, const normal_eq *q, double prior_alpha, double prior_beta)
{
  GString *note = g_string_new(NULL);
  double prior_g = prior_beta > 0 ? 1e12 / prior_beta : 0.0;
  double det = q->a * q->c - q->b * q->b;
  double alpha, gg;
  /* Relative test: det / (a c) = 1 - cos^2 of the angle between the two
   * weighted columns; below 1e-9 they are parallel for all practical
   * purposes (e.g. every point has the same bytes per step). */
  gboolean singular = q->n < 2 || !(det > 1e-9 * q->a * q->c);
  if (singular) {
    alpha = prior_alpha;
    gg = (q->e - q->b * alpha) / q->c;
    g_string_append_printf(note,
                           "%s: alpha and beta cannot be separated; alpha fixed to the cluster prior "
                           "(%.3f ns per step) and beta fitted. Add collectives of other sizes to fit both.",
                           q->n < 2 ? "one point only" : "every point has the same bytes per step (one distinct size)",
                           prior_alpha / 1e3);
    cf->alpha_from_prior = TRUE;
    if (!(gg > 0)) {
      alpha = 0.0;
      gg = q->e / q->c;
      g_string_append(note, " The measured times are below the prior latency alone, so alpha was set to 0.");
      cf->alpha_from_prior = FALSE;
      cf->alpha_clamped = TRUE;
    }
  } else {
    alpha = (q->d * q->c - q->b * q->e) / det;
    gg = (q->a * q->e - q->b * q->d) / det;
    /* A bandwidth term below a millionth of the largest point's time is
     * rounding noise, not a bandwidth. */
    if (!(gg * q->x2max > 1e-6 * q->y_at_x2max)) {
      /* Time does not grow with size: keep the prior bandwidth. */
      gg = prior_g;
      alpha = (q->d - q->b * gg) / q->a;
      cf->beta_from_prior = TRUE;
      g_string_append_printf(note,
                             "the fitted time does not grow with size, so beta cannot be fitted; beta kept "
                             "at the cluster prior (%.3f GB/s) and alpha refitted.",
                             prior_beta / 1e9);
    }
    if (alpha < 0) {
      g_string_append_printf(note, "%salpha fitted negative (%.3f ns); clamped to 0 and beta refitted.",
                             note->len ? " " : "", alpha / 1e3);
      alpha = 0.0;
      if (!cf->beta_from_prior)
        gg = q->e / q->c;
      cf->alpha_clamped = TRUE;
    }
  }
  cf->fitted = TRUE;
  cf->alpha_ps = alpha;
  cf->beta_Bps = gg > 0 ? 1e12 / gg : prior_beta;
  cf->note = note->len ? g_string_free(note, FALSE) : (g_string_free(note, TRUE), NULL);
}

static int cmp_u64(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The calibration point of one collective instance: its group, size and
 * best measured duration, the exclusion judged for it, and its class
 * (inter-node when the group spans more than one scale-up domain). */
static cal_point point_of(const cal_inst *in, const et_workload *w, const cal_options *opt)
{
  cal_point p = { 0 };
  p.group = in->group;
  p.seq = in->seq;
  p.op = in->op;
  p.n = in->n;
  p.bytes = in->bytes;
  p.members_seen = in->seen;
  p.members_overlapped = in->overlapped;
  p.predicted_ps = NAN;
  p.residual_pct = NAN;
  cal_exclusion why = judge(in);
  p.excluded = (uint8_t)why;
  p.rank = in->best_rank >= 0 ? in->best_rank : in->first_rank;
  p.node_id = in->best_rank >= 0 ? in->best_node : in->first_node;
  p.measured = in->best;
  /* Class from the group's ranks. */
  const et_group *grp = in->group == ET_GROUP_WORLD ? NULL : et_workload_group(w, in->group);
  int d0 = in->n > 0 ? domain_of(opt, grp ? grp->ranks[0] : 0) : 0;
  p.cls = CAL_CLASS_INTRA;
  for (int m = 1; m < in->n; m++)
    if (domain_of(opt, grp ? grp->ranks[m] : m) != d0) {
      p.cls = CAL_CLASS_INTER;
      break;
    }
  return p;
}

/* The error when no collective can be used: the counts of each exclusion. */
static void no_points_error(const cal_fit *f, const et_workload *w, GError **error)
{
  GString *why = g_string_new(NULL);
  for (int e = 1; e < CAL_EX_COUNT; e++)
    if (f->excluded[e])
      g_string_append_printf(why, "; %" G_GUINT64_FORMAT " %s", f->excluded[e],
                             cal_exclusion_text((cal_exclusion)e));
  g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
              "%s: no communication kernel can be used for calibration (%" G_GUINT64_FORMAT
              " communication nodes, %" G_GUINT64_FORMAT " collective instances%s); calibration needs "
              "collectives with a size and a measured duration, e.g. NCCL kernels from a Kineto trace",
              w->source ? w->source : "workload", f->comm_nodes, f->instances,
              why->len ? why->str : "");
  g_string_free(why, TRUE);
}

/* Fits class cls on the used points: weighted least squares of T = steps
 * x alpha + bus_bytes / beta (solve_class, priors where the data cannot
 * separate them), then each point's prediction and residual and the
 * class's rms and worst errors.  O(points log points). */
static void fit_class(cal_fit *f, GArray *used, const cal_options *opt, int cls)
{
  cal_class_fit *cf = &f->cls[cls];
  normal_eq q = { 0 };
  uint64_t *sizes = g_new(uint64_t, used->len);
  int ns = 0;
  for (guint k = 0; k < used->len; k++) {
    const cal_point *p = &g_array_index(used, cal_point, k);
    if (p->cls != cls)
      continue;
    double y = (double)p->measured;
    double wgt = opt->loss == CAL_LOSS_RELATIVE ? 1.0 / (y * y) : 1.0;
    q.a += wgt * p->steps * p->steps;
    q.b += wgt * p->steps * p->bus_bytes;
    q.c += wgt * p->bus_bytes * p->bus_bytes;
    q.d += wgt * p->steps * y;
    q.e += wgt * p->bus_bytes * y;
    q.n++;
    if (p->bus_bytes > q.x2max) {
      q.x2max = p->bus_bytes;
      q.y_at_x2max = y;
    }
    sizes[ns++] = p->bytes;
  }
  if (ns > 1)
    qsort(sizes, (size_t)ns, sizeof(uint64_t), cmp_u64);
  cf->n_points = q.n;
  for (int k = 0; k < ns; k++)
    if (k == 0 || sizes[k] != sizes[k - 1])
      cf->n_sizes++;
  g_free(sizes);
  if (q.n == 0) {
    cf->alpha_ps = opt->prior_alpha_ps[cls];
    cf->beta_Bps = opt->prior_beta_Bps[cls];
    cf->note = g_strdup("no usable collective in this class; the cluster's values are kept");
    return;
  }
  solve_class(cf, &q, opt->prior_alpha_ps[cls], opt->prior_beta_Bps[cls]);
  double ss_rel = 0, ss_abs = 0, worst = 0;
  for (guint k = 0; k < used->len; k++) {
    cal_point *p = &g_array_index(used, cal_point, k);
    if (p->cls != cls)
      continue;
    p->predicted_ps = p->steps * cf->alpha_ps + p->bus_bytes * 1e12 / cf->beta_Bps;
    double d = p->predicted_ps - (double)p->measured;
    p->residual_pct = 100.0 * d / (double)p->measured;
    ss_rel += p->residual_pct * p->residual_pct;
    ss_abs += d * d;
    if (fabs(p->residual_pct) > fabs(worst))
      worst = p->residual_pct;
  }
  cf->rms_rel_pct = sqrt(ss_rel / q.n);
  cf->rms_abs_ps = sqrt(ss_abs / q.n);
  cf->max_rel_pct = worst;
}

cal_fit *cal_fit_workload(const et_workload *w, const cal_options *opt, GError **error)
{
  g_return_val_if_fail(w != NULL && opt != NULL, NULL);
  cal_fit *f = g_new0(cal_fit, 1);
  f->textbook = TRUE;
  f->points = g_array_new(FALSE, FALSE, sizeof(cal_point));
  f->loss = opt->loss;
  GPtrArray *insts = collect_instances(w, f);
  f->instances = insts->len;
  /* collect_instances() appended the node-level exclusions; they go last. */
  GArray *node_excl = f->points;
  f->points = g_array_new(FALSE, FALSE, sizeof(cal_point));
  GArray *used = g_array_new(FALSE, FALSE, sizeof(cal_point));
  GArray *excl = g_array_new(FALSE, FALSE, sizeof(cal_point));
  for (guint k = 0; k < insts->len; k++) {
    const cal_inst *in = g_ptr_array_index(insts, k);
    cal_point p = point_of(in, w, opt);
    if (p.excluded != CAL_USED) {
      f->excluded[p.excluded]++;
      g_array_append_val(excl, p);
      continue;
    }
    p.steps = model_steps((et_coll_type)in->op, in->n);
    if (in->op == ET_COLL_ALL_TO_ALLV && in->a2av_have)
      p.bus_bytes = (double)in->a2av_off_max;
    else
      p.bus_bytes = coll_busbw_factor((et_coll_type)in->op, in->n) *
                    (double)coll_algbw_bytes((et_coll_type)in->op, in->bytes, in->n);
    g_array_append_val(used, p);
  }
  for (guint k = 0; k < insts->len; k++)
    g_free(g_ptr_array_index(insts, k));
  g_ptr_array_free(insts, TRUE);

  if (used->len == 0) {
    no_points_error(f, w, error);
    g_array_free(used, TRUE);
    g_array_free(excl, TRUE);
    g_array_free(node_excl, TRUE);
    cal_fit_free(f);
    return NULL;
  }
  for (int cls = 0; cls < CAL_N_CLASSES; cls++)
    fit_class(f, used, opt, cls);
  g_array_append_vals(f->points, used->data, used->len);
  g_array_append_vals(f->points, excl->data, excl->len);
  g_array_append_vals(f->points, node_excl->data, node_excl->len);
  g_array_free(used, TRUE);
  g_array_free(excl, TRUE);
  g_array_free(node_excl, TRUE);
  return f;
}

void cal_fit_free(cal_fit *f)
{
  if (f == NULL)
    return;
  for (int c = 0; c < CAL_N_CLASSES; c++)
    g_free(f->cls[c].note);
  if (f->points)
    g_array_free(f->points, TRUE);
  g_free(f);
}

/* ---- output ---- */

static const char *op_label(uint8_t op)
{
  return op == ET_COLL_NONE ? "send/recv" : et_coll_short_name((et_coll_type)op);
}

static void group_label(uint32_t group, char buf[16])
{
  if (group == ET_GROUP_WORLD)
    g_strlcpy(buf, "world", 16);
  else
    g_snprintf(buf, 16, "%u", group);
}

void cal_fit_print(const cal_fit *f, gboolean per_point, FILE *out)
{
  uint64_t used = 0;
  for (guint k = 0; k < f->points->len; k++)
    if (g_array_index(f->points, cal_point, k).excluded == CAL_USED)
      used++;
  fprintf(out, "calibration: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " collective instances used, from %"
          G_GUINT64_FORMAT " communication nodes (loss: %s; model T = steps x alpha + bus_bytes / beta)\n",
          used, f->instances, f->comm_nodes, f->loss == CAL_LOSS_RELATIVE ? "relative" : "absolute");
  fprintf(out, "  %-10s %6s %5s %14s %14s %9s %9s %12s\n", "class", "points", "sizes", "alpha/step",
          "beta", "rms err", "worst", "rms abs");
  for (int c = 0; c < CAL_N_CLASSES; c++) {
    const cal_class_fit *cf = &f->cls[c];
    if (!cf->fitted) {
      fprintf(out, "  %-10s %6d %5d %11.4f us %9.3f GB/s   (prior kept)\n", cal_class_name((cal_class)c), 0, 0,
              cf->alpha_ps / 1e6, cf->beta_Bps / 1e9);
    } else {
      fprintf(out, "  %-10s %6d %5d %11.4f us %9.3f GB/s %7.3f %% %7.3f %% %9.3f us\n",
              cal_class_name((cal_class)c), cf->n_points, cf->n_sizes, cf->alpha_ps / 1e6, cf->beta_Bps / 1e9,
              cf->rms_rel_pct, cf->max_rel_pct, cf->rms_abs_ps / 1e6);
    }
    if (cf->note)
      fprintf(out, "    note (%s): %s\n", cal_class_name((cal_class)c), cf->note);
  }
  gboolean any = FALSE;
  for (int e = 1; e < CAL_EX_COUNT; e++)
    if (f->excluded[e]) {
      if (!any)
        fprintf(out, "  excluded:\n");
      any = TRUE;
      fprintf(out, "    %6" G_GUINT64_FORMAT "  %s\n", f->excluded[e], cal_exclusion_text((cal_exclusion)e));
    }
  if (!any)
    fprintf(out, "  excluded: none\n");
  if (f->unchecked_overlap)
    fprintf(out, "  %" G_GUINT64_FORMAT " collective nodes have no measured start: their overlap with other "
            "communication was not checked\n", f->unchecked_overlap);
  if (!per_point)
    return;
  fprintf(out, "  %-4s %-10s %-14s %-6s %4s %14s %8s %16s %14s %14s %9s  %s\n", "#", "class", "op", "group", "n",
          "bytes", "steps", "bus_bytes", "measured_us", "predicted_us", "resid", "rank:node / reason");
  for (guint k = 0; k < f->points->len; k++) {
    const cal_point *p = &g_array_index(f->points, cal_point, k);
    char grp[16];
    group_label(p->group, grp);
    if (p->excluded == CAL_USED)
      fprintf(out, "  %-4u %-10s %-14s %-6s %4d %14" G_GUINT64_FORMAT " %8.0f %16.0f %14.3f %14.3f %8.3f%%  %d:%"
              G_GUINT64_FORMAT "\n", k, cal_class_name((cal_class)p->cls), op_label(p->op), grp, p->n, p->bytes,
              p->steps, p->bus_bytes, (double)p->measured / 1e6, p->predicted_ps / 1e6, p->residual_pct, p->rank,
              p->node_id);
    else
      fprintf(out, "  %-4u %-10s %-14s %-6s %4d %14" G_GUINT64_FORMAT " %8s %16s %14.3f %14s %9s  %d:%"
              G_GUINT64_FORMAT " excluded: %s\n", k, p->op == ET_COLL_NONE ? "-" : cal_class_name((cal_class)p->cls),
              op_label(p->op), grp, p->n, p->bytes, "-", "-", (double)p->measured / 1e6, "-", "-", p->rank,
              p->node_id, cal_exclusion_text((cal_exclusion)p->excluded));
  }
}

void cal_fit_json(const cal_fit *f, wisp_json *j, const char *key)
{
  wisp_json_begin_object(j, key);
  wisp_json_string(j, "loss", f->loss == CAL_LOSS_RELATIVE ? "relative" : "absolute");
  wisp_json_uint(j, "comm_nodes", f->comm_nodes);
  wisp_json_uint(j, "instances", f->instances);
  wisp_json_begin_array(j, "classes");
  for (int c = 0; c < CAL_N_CLASSES; c++) {
    const cal_class_fit *cf = &f->cls[c];
    wisp_json_begin_object(j, NULL);
    wisp_json_string(j, "class", cal_class_name((cal_class)c));
    wisp_json_bool(j, "fitted", cf->fitted);
    wisp_json_int(j, "points", cf->n_points);
    wisp_json_int(j, "sizes", cf->n_sizes);
    wisp_json_double(j, "alpha_ns", cf->alpha_ps / 1e3, 3);
    wisp_json_double(j, "beta_GBps", cf->beta_Bps / 1e9, 6);
    wisp_json_bool(j, "alpha_from_prior", cf->alpha_from_prior);
    wisp_json_bool(j, "beta_from_prior", cf->beta_from_prior);
    if (cf->fitted) {
      wisp_json_double(j, "rms_rel_pct", cf->rms_rel_pct, 4);
      wisp_json_double(j, "worst_rel_pct", cf->max_rel_pct, 4);
    }
    const cal_tier_refit *rf = &f->refit[c];
    if (rf->points > 0) {
      wisp_json_begin_object(j, "simulator_refit");
      wisp_json_bool(j, "applied", rf->done);
      wisp_json_int(j, "points", rf->points);
      wisp_json_double(j, "link_latency_ns", rf->latency_ps / 1e3, 3);
      wisp_json_double(j, "link_bandwidth_GBps", rf->bw_Bps / 1e9, 6);
      wisp_json_double(j, "rms_before_pct", rf->rms_before_pct, 4);
      wisp_json_double(j, "rms_after_pct", rf->rms_after_pct, 4);
      wisp_json_end_object(j);
    }
    wisp_json_string(j, "note", cf->note);
    wisp_json_end_object(j);
  }
  wisp_json_end_array(j);
  wisp_json_begin_object(j, "excluded");
  for (int e = 1; e < CAL_EX_COUNT; e++)
    wisp_json_uint(j, cal_exclusion_text((cal_exclusion)e), f->excluded[e]);
  wisp_json_end_object(j);
  wisp_json_uint(j, "unchecked_overlap", f->unchecked_overlap);
  wisp_json_begin_array(j, "points");
  for (guint k = 0; k < f->points->len; k++) {
    const cal_point *p = &g_array_index(f->points, cal_point, k);
    char grp[16];
    group_label(p->group, grp);
    wisp_json_begin_object(j, NULL);
    wisp_json_string(j, "class", cal_class_name((cal_class)p->cls));
    wisp_json_string(j, "op", op_label(p->op));
    wisp_json_string(j, "group", grp);
    wisp_json_int(j, "n", p->n);
    wisp_json_uint(j, "bytes", p->bytes);
    wisp_json_int(j, "rank", p->rank);
    wisp_json_uint(j, "node", p->node_id);
    wisp_json_ns(j, "measured_ns", p->measured);
    wisp_json_string(j, "excluded", p->excluded ? cal_exclusion_text((cal_exclusion)p->excluded) : NULL);
    if (p->excluded == CAL_USED) {
      wisp_json_double(j, "steps", p->steps, 0);
      wisp_json_double(j, "bus_bytes", p->bus_bytes, 1);
      wisp_json_double(j, "predicted_ns", p->predicted_ps / 1e3, 3);
      wisp_json_double(j, "residual_pct", p->residual_pct, 4);
    }
    wisp_json_end_object(j);
  }
  wisp_json_end_array(j);
  wisp_json_end_object(j);
}
