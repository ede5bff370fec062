/* gt_ports.c: the ground-truth model's port contention
 * (gt_params.port_contention; gt_model.h).
 *
 * Each rank has one port per tier (scale-up: its NVLink; scale-out: its
 * NIC) and direction (egress, ingress).  A collective uses the egress and
 * ingress of every member on its tier, a send/recv the sender's egress
 * and the receiver's ingress.  A transfer's closed-form time T (gt_coll_ns,
 * gt_p2p_ns) is its latency L (the alpha steps) plus its bandwidth work
 * W = T - L, the time its bytes take at a port's full bandwidth.  Ports
 * are shared max-min fairly (a fluid model, as NVLink and NIC interleave
 * the packets of concurrent transfers): each active transfer drains its
 * W at the rate progressive filling gives it (at most 1: the full port),
 * and ends L after W is drained.  A transfer that never shared a port
 * ends exactly T after it became ready.
 *
 * gt_model.c's resolver hands a transfer here when every member has
 * started (gt_ports_ready) instead of ending it at once, and, when
 * nothing else can be resolved, calls gt_ports_advance: the fluid clock
 * runs to the earlier of the next ready transfer (which joins the active
 * ones) and the next transfer to drain (whose end is then known, and the
 * resolver resumes).  This is exact: at that point every unresolved op
 * waits, through its stream, events, host or partners, for the end of an
 * active or ready transfer, so a transfer not yet ready becomes ready no
 * earlier than the clock's next completion.
 *
 * Cost: each event recomputes the rates by progressive filling, O(A^2 x M)
 * for A active transfers of at most M ports (A is a handful: the
 * transfers in flight at once).
 */
#include "config.h"

#include "regress/gt_model_internal.h"

#include <math.h>
#include <string.h>

/* An active transfer: its ports (rank, tier, direction), the work left in
 * full-bandwidth nanoseconds, its latency, its current rate and whether it
 * ever ran below the full rate. */
typedef struct {
  transfer t;
  int ports[2 * GT_MAX_RANKS][3];
  int n_ports;
  double left_ns, rate;
  double start_ns;         /* the fluid clock when it became active */
  int64_t latency_ns, closed_ns;
  gboolean shared;
} active;

void gt_ports_ready(gt_job *j, int rank, int32_t a, int32_t b, int64_t ready_ns)
{
  if (!j->ready) {
    j->ready = g_array_new(FALSE, FALSE, sizeof(transfer));
    j->active = g_array_new(FALSE, FALSE, sizeof(active));
  }
  transfer t = { ready_ns, rank, a, b };
  g_array_append_val(j->ready, t);
}

/* Activates transfer t: its ports, closed form and latency. */
static void activate(gt_job *j, const transfer *t)
{
  active x = { .t = *t, .start_ns = j->clock_ns };
  int64_t alpha;
  uint64_t beta;
  if (t->rank >= 0) {
    const op *s = &g_array_index(j->r[t->rank].ops, op, t->a);
    int tier = gt_same_node(j, t->rank, s->peer) ? 0 : 1;
    alpha = tier ? j->p.alpha_out_ns : j->p.alpha_ns;
    beta = tier ? j->beta_out : j->beta;
    x.closed_ns = gt_p2p_ns(s->bytes, alpha, beta);
    x.latency_ns = x.closed_ns - gt_p2p_ns(s->bytes, 0, beta);
    int p[2][3] = { { t->rank, tier, 0 }, { s->peer, tier, 1 } };
    memcpy(x.ports, p, sizeof p);
    x.n_ports = 2;
  } else {
    const group *g = g_ptr_array_index(j->groups, t->a);
    const instance *in = &g_array_index(g->insts, instance, t->b);
    gt_group_tier(j, g, &alpha, &beta);
    int tier = alpha == j->p.alpha_ns && beta == j->beta ? 0 : 1;
    x.closed_ns = gt_coll_ns((gt_kernel_kind)in->kind, in->bytes, g->n, alpha, beta);
    x.latency_ns = x.closed_ns - gt_coll_ns((gt_kernel_kind)in->kind, in->bytes, g->n, 0, beta);
    for (int i = 0; i < g->n; i++)
      for (int d = 0; d < 2; d++, x.n_ports++) {
        x.ports[x.n_ports][0] = g->ranks[i];
        x.ports[x.n_ports][1] = tier;
        x.ports[x.n_ports][2] = d;
      }
  }
  x.left_ns = (double)(x.closed_ns - x.latency_ns);
  g_array_append_val(j->active, x);
}

static gboolean same_port(const int a[3], const int b[3])
{
  return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
}

/* Max-min fair rates by progressive filling: every unfrozen transfer
 * rises by the smallest equal share left on any port it crosses, and the
 * transfers on a port that fills are frozen.  A port's users are the
 * transfers that cross it; its capacity is 1. */
static void fair_rates(gt_job *j)
{
  guint n = j->active->len;
  gboolean *frozen = g_new0(gboolean, n ? n : 1);
  for (guint k = 0; k < n; k++)
    g_array_index(j->active, active, k).rate = 0.0;
  for (guint left = n; left > 0;) {
    /* The bottleneck: the port with the least capacity left per unfrozen user. */
    double inc = 1.0;
    for (guint k = 0; k < n; k++) {
      const active *x = &g_array_index(j->active, active, k);
      for (int p = 0; !frozen[k] && p < x->n_ports; p++) {
        double used = 0.0;
        int users = 0;
        for (guint m = 0; m < n; m++) {
          const active *y = &g_array_index(j->active, active, m);
          for (int q = 0; q < y->n_ports; q++)
            if (same_port(x->ports[p], y->ports[q])) {
              used += y->rate;
              users += !frozen[m];
            }
        }
        inc = MIN(inc, (1.0 - used) / users);
      }
    }
    for (guint k = 0; k < n; k++)
      if (!frozen[k])
        g_array_index(j->active, active, k).rate += inc;
    /* Freeze whatever crosses a full port. */
    for (guint k = 0; k < n; k++) {
      const active *x = &g_array_index(j->active, active, k);
      for (int p = 0; !frozen[k] && p < x->n_ports; p++) {
        double used = 0.0;
        for (guint m = 0; m < n; m++) {
          const active *y = &g_array_index(j->active, active, m);
          for (int q = 0; q < y->n_ports; q++)
            used += same_port(x->ports[p], y->ports[q]) ? y->rate : 0.0;
        }
        if (used >= 1.0 - 1e-12 || x->rate >= 1.0 - 1e-12) {
          frozen[k] = TRUE;
          left--;
        }
      }
    }
  }
  g_free(frozen);
}

/* Ends active transfer k at fluid time now_ns: every member's op. */
static void finish(gt_job *j, guint k, double now_ns)
{
  const active *x = &g_array_index(j->active, active, k);
  const transfer *t = &x->t;
  int64_t end = x->shared ? llround(now_ns) + x->latency_ns : llround(x->start_ns) + x->closed_ns;
  if (t->rank >= 0) {
    op *s = &g_array_index(j->r[t->rank].ops, op, t->a);
    s->end_ns = g_array_index(j->r[s->peer].ops, op, t->b).end_ns = end;
  } else {
    const group *g = g_ptr_array_index(j->groups, t->a);
    for (int i = 0; i < g->n; i++) {
      int32_t oi = g_array_index(g->inst_ops, int32_t, (guint)t->b * (guint)g->n + (guint)i);
      g_array_index(j->r[g->ranks[i]].ops, op, oi).end_ns = end;
    }
  }
  g_array_remove_index(j->active, k);
}

/* Drains every active transfer for dt_ns at its rate. */
static void drain(gt_job *j, double dt_ns)
{
  for (guint k = 0; k < j->active->len; k++) {
    active *x = &g_array_index(j->active, active, k);
    x->left_ns = MAX(0.0, x->left_ns - x->rate * dt_ns);
  }
}

gboolean gt_ports_advance(gt_job *j)
{
  while (j->ready && (j->ready->len || j->active->len)) {
    fair_rates(j);
    guint r = 0, d = 0;
    double t_ready = INFINITY, t_done = INFINITY;
    for (guint k = 0; k < j->ready->len; k++) {
      double t = MAX((double)g_array_index(j->ready, transfer, k).ready_ns, j->clock_ns);
      if (t < t_ready)
        t_ready = t, r = k;
    }
    for (guint k = 0; k < j->active->len; k++) {
      active *x = &g_array_index(j->active, active, k);
      x->shared = x->shared || x->rate < 1.0 - 1e-9;
      double t = j->clock_ns + x->left_ns / x->rate;
      if (t < t_done)
        t_done = t, d = k;
    }
    if (t_ready <= t_done) { /* the next transfer joins before any drains */
      drain(j, t_ready - j->clock_ns);
      j->clock_ns = t_ready;
      transfer t = g_array_index(j->ready, transfer, r);
      g_array_remove_index(j->ready, r); /* keeps the others in the order they became ready */
      activate(j, &t);
      continue;
    }
    drain(j, t_done - j->clock_ns);
    j->clock_ns = t_done;
    finish(j, d, t_done);
    return TRUE;
  }
  return FALSE;
}
