/* study_why.c: the why-line of each utility row (`wisp utility`, issue 29
 * item 2): the bound that limits that resource, read from the baseline's
 * critical path, so each sentence explains its own row.
 *
 * The path's simulated communication is split by the widest tier each
 * communication crosses (its members' coordinates differ in that tier and
 * none beyond it; send/recv: the two peers).  On a hierarchical fabric a
 * communication that crosses tier d also uses every tier inside d, so the
 * path time a tier's bandwidth can act on is the communication whose
 * widest tier is d or beyond: an upper bound of what doubling it removes
 * while the schedule stays the same.  Explicit graphs have no tiers: all
 * communication counts for every tier.
 *
 * Cost: one topology build plus O(path segments x group size x tiers).
 */
#include "config.h"
#include "studies/study.h"
#include "chakra/et_view.h"
#include "replay/sim_critical.h"
#include "replay/sim_levers.h"

#include <math.h>
#include <string.h>

/* Path communication time by widest tier: by_tier[d] (n_dims entries),
 * its total and the number of communications on the path. */
typedef struct {
  int n_dims;
  gboolean tiered;
  sim_time_ps by_tier[16];
  sim_time_ps total;
  unsigned count;
} why_tiers;

static double pct(sim_time_ps a, sim_time_ps T)
{
  return T > 0 ? 100.0 * (double)a / (double)T : 0.0;
}

/* The widest tier the members of one communication span (0 when all
 * share every coordinate). */
static int widest_tier(const topo *t, int n_dims, const int *ranks, int n)
{
  for (int d = n_dims - 1; d > 0; d--)
    for (int k = 1; k < n; k++)
      if (topo_rank_coord(t, ranks[k], d) != topo_rank_coord(t, ranks[0], d))
        return d;
  return 0;
}

static void tiers_of_path(const sim_critical_path *p, const et_workload *w, const topo_variant *base, why_tiers *wt)
{
  memset(wt, 0, sizeof *wt);
  wt->n_dims = MIN(topo_variant_n_dims(base), (int)G_N_ELEMENTS(wt->by_tier));
  topo *t = topo_variant_is_graph(base) ? NULL : topo_variant_build(base, NULL);
  wt->tiered = t != NULL && topo_n_dims(t) == wt->n_dims;
  int *all = NULL;
  for (guint i = 0; i < p->segments->len; i++) {
    const sim_crit_segment *s = &g_array_index(p->segments, sim_crit_segment, i);
    if (s->category != SIM_CRIT_COMM)
      continue;
    sim_time_ps len = s->end - s->start;
    wt->total += len;
    wt->count++;
    if (!wt->tiered)
      continue;
    const et_graph *g = w->ranks[s->rank];
    const et_node *nd = &g->nodes[s->node];
    et_comm tmp;
    const et_comm *c = nd->comm == ET_NONE ? NULL : et_workload_comm(w, s->rank, nd->comm, &tmp);
    int d = 0;
    if (c && nd->type != ET_NODE_COMM_COLL) {
      int pair[2] = {c->src >= 0 ? c->src : s->rank, c->dst >= 0 ? c->dst : s->rank};
      d = widest_tier(t, wt->n_dims, pair, 2);
    } else if (c && c->group != ET_GROUP_WORLD) {
      const et_group *gr = et_workload_group(w, c->group);
      d = widest_tier(t, wt->n_dims, gr->ranks, gr->n_ranks);
    } else if (c) {
      if (all == NULL) {
        all = g_new(int, (gsize)w->n_ranks);
        for (int r = 0; r < w->n_ranks; r++)
          all[r] = r;
      }
      d = widest_tier(t, wt->n_dims, all, w->n_ranks);
    }
    wt->by_tier[d] += len;
  }
  g_free(all);
  if (t)
    topo_free(t);
}

/* Path communication whose widest tier is lo or beyond. */
static sim_time_ps from_tier(const why_tiers *wt, int lo)
{
  if (!wt->tiered)
    return wt->total;
  sim_time_ps s = 0;
  for (int d = MAX(lo, 0); d < wt->n_dims; d++)
    s += wt->by_tier[d];
  return s;
}

/* The largest category of the path, as the bound sentence names it. */
static void top_category(const sim_critical_path *p, GString *s)
{
  int best = 0;
  for (int c = 1; c < SIM_CRIT_N_CATEGORIES; c++)
    if (p->by_category[c] > p->by_category[best])
      best = c;
  g_string_append_printf(s, "the step is bound by %s (%.1f %% of the path)",
                         sim_crit_headline_name((sim_crit_category)best), pct(p->by_category[best], p->step_time));
}

/* The innermost tier a network row acts on, and whether it acts on what
 * crosses beyond that tier (domain/size rows) rather than what uses it;
 * -1 for a row that is not a network row. */
static int row_tier(const char *res, const topo_variant *base, gboolean *beyond, char **label)
{
  int nd = topo_variant_n_dims(base), so = topo_variant_scale_out_dim(base);
  *beyond = FALSE;
  int d = -1;
  if (strcmp(res, "scale_out_bw") == 0) {
    d = so;
  } else if (strcmp(res, "scale_up_bw") == 0 || strcmp(res, "latency") == 0) {
    d = 0;
  } else if (strcmp(res, "ici_bw") == 0) {
    for (int k = nd - 1; k >= 0; k--)
      if (topo_variant_dim_kind(base, k) == TOPO_KIND_TORUS2D || topo_variant_dim_kind(base, k) == TOPO_KIND_TORUS3D)
        d = k;
  } else if (strcmp(res, "scale_up_domain") == 0) {
    d = topo_variant_domain_dim(base);
    *beyond = TRUE;
  } else if (g_str_has_prefix(res, "bw:") || g_str_has_prefix(res, "lat:") || g_str_has_prefix(res, "size:")) {
    d = topo_variant_find_dim(base, strchr(res, ':') + 1);
    *beyond = res[0] == 's';
  }
  if (d >= 0)
    *label = g_strdup(topo_variant_dim_name(base, d));
  return d;
}

/* The best utility among the applicable bandwidth rows, and its name. */
static double best_bw_row(const study_utility_result *u, const char **name)
{
  double best = -INFINITY;
  for (guint i = 0; i < u->rows->len; i++) {
    const study_utility_row *r = &g_array_index(u->rows, study_utility_row, i);
    if (r->applicable && (strstr(r->resource, "_bw") || g_str_has_prefix(r->resource, "bw:")) &&
        r->utility_pct > best) {
      best = r->utility_pct;
      *name = r->resource;
    }
  }
  return best;
}

/* When waiting for peers is most of the ranks' exposed communication, a
 * clause saying so: bandwidth does not shorten a wait.  Nothing else. */
static void waiting_clause(const study_summary *b, GString *s)
{
  sim_time_ps wait = b->straggler_wait + b->dependency_wait;
  if (b->exposed_comm <= 0 || 2 * wait <= b->exposed_comm)
    return;
  g_string_append_printf(s, "; %.1f %% of the ranks' exposed communication is waiting for peers (%s), which no "
                         "bandwidth shortens", pct(wait, b->exposed_comm),
                         b->straggler_wait >= b->dependency_wait ? "straggler waits: members issuing late"
                                                                 : "dependency waits: receives waiting for their "
                                                                   "sender");
}

/* The latency row's verdict from its utility L, the best bandwidth row's
 * B and the path's communication share C (all % of T).  Latency-bound
 * when halving latency removes more than doubling any bandwidth and at
 * least WHY_MATTERS_PCT of T; bandwidth-bound when the best bandwidth row
 * is at least as large and at least that; else neither.  A host-bound
 * step whose rows all round to zero is neither (not latency-bound because
 * 0.04 beats 0.00, nor bandwidth-bound because 0.00 ties 0.00), while a
 * 1,024-rank all-to-all whose latency row is 4 % against 0.3 % is
 * latency-bound.  When
 * the links explain less than half of the path's communication, the
 * sentence says so: if time is linear in latency and in 1 / bandwidth,
 * the latency term is about 2 L and the bandwidth term 2 B, and the rest
 * is the library's fixed per-step costs, which no link change shortens
 * (DLRM at dp=256 on dgx-a100: an all-to-all of 24 KiB over 256 ranks
 * takes 4.04 ms in collbench and still 3.57 ms with every link latency
 * 0). */
#define WHY_MATTERS_PCT 1.0
static void latency_verdict(double L, const char *bn, double B, double C, GString *s)
{
  if (L > B && L >= WHY_MATTERS_PCT)
    g_string_append_printf(s, ": latency-bound, halving latency helps more than doubling any bandwidth (best: "
                           "%s %.2f %%)", bn, B);
  else if (MAX(L, B) < WHY_MATTERS_PCT) /* 0.00 against 0.00 is neither, whichever is larger */
    g_string_append_printf(s, ": neither latency nor bandwidth bounds the step (best bandwidth row: %s %.2f %%)",
                           bn, B);
  else
    g_string_append_printf(s, ": bandwidth-bound more than latency-bound (%s removed %.2f %%)", bn, B);
  double links = 2.0 * (MAX(L, 0.0) + MAX(B, 0.0));
  if (L >= WHY_MATTERS_PCT && links < 0.5 * C)
    g_string_append_printf(s, "; the links explain about 2 x (%.2f + %.2f) = %.1f %% of T (latency and bandwidth "
                           "terms, if time is linear in each); the other %.1f %% of the path's communication responds to "
                           "neither: fixed costs of the communication library (its per-step latencies)", L, MAX(B, 0.0),
                           links, C - links);
}

/* A network row: what of the path it can act on, what it removed. */
static void network_why(const study_utility_result *u, const study_utility_row *r, const why_tiers *wt,
                        const topo_variant *base, GString *s)
{
  const sim_critical_path *p = u->baseline_critical;
  const sim_time_ps T = p->step_time;
  gboolean beyond = FALSE;
  char *tier = NULL;
  int d = row_tier(r->resource, base, &beyond, &tier);
  gboolean lat = strcmp(r->resource, "latency") == 0 || g_str_has_prefix(r->resource, "lat:");
  sim_time_ps on = lat && strcmp(r->resource, "latency") == 0 ? wt->total : from_tier(wt, beyond ? d + 1 : d);
  /* ms with six decimals, as the communication and critical-path lines
   * print the same times (it was "56.0673 us" beside "0.056067 ms"). */
  char *ton = g_strdup_printf("%.6f ms", (double)on / 1e9);
  if (on == 0 && (tier == NULL || strcmp(r->resource, "latency") == 0)) {
    g_string_append(s, "not network-bound: no simulated communication is on the critical path; ");
    top_category(p, s);
  } else if (on == 0) {
    g_string_append_printf(s, "not bound by tier '%s': no communication on the critical path %s it; ", tier,
                           beyond ? "crosses beyond" : "uses");
    top_category(p, s);
  } else if (lat) {
    g_string_append_printf(s, "the path holds %u communication%s (%s, %.1f %% of T), each paying latency; halving %s "
                           "removed %.2f %% of T", wt->count, wt->count == 1 ? "" : "s", ton, pct(on, T),
                           tier && g_str_has_prefix(r->resource, "lat:") ? "that tier's latency" : "every latency",
                           r->utility_pct);
    const char *bn = NULL;
    double bb = best_bw_row(u, &bn);
    if (bn)
      latency_verdict(r->utility_pct, bn, bb, pct(on, T), s);
  } else {
    g_string_append_printf(s, "%s of communication on the critical path (%.1f %% of T) %s tier '%s', the most "
                           "this change can remove while the schedule stays the same; it removed %.2f %% of T",
                           ton, pct(on, T), beyond ? "crosses beyond" : "uses", tier ? tier : "?",
                           r->utility_pct);
    if (!beyond && r->utility_pct < 0.5 * pct(on, T))
      g_string_append(s, " (the rest is latency, the library's fixed costs, other tiers or waiting that moves "
                         "elsewhere)");
  }
  if (!lat)
    waiting_clause(&u->baseline, s);
  g_free(ton);
  g_free(tier);
}

char *study_utility_comm_lines(const study_utility_result *u)
{
  const study_summary *b = &u->baseline;
  if (b->exposed_comm <= 0 && b->overlapped_comm <= 0)
    return NULL;
  /* Milliseconds, as every other time of the utility output. */
#define MS(t) ((double)(t) / 1e9)
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "communication (mean over ranks, the simulate table's columns): exposed %.6f ms = "
                         "transfer %.6f ms + straggler wait %.6f ms + dependency wait %.6f ms; overlapped with "
                         "compute %.6f ms\n", MS(b->exposed_comm), MS(b->comm_transfer), MS(b->straggler_wait),
                         MS(b->dependency_wait), MS(b->overlapped_comm));
  if (b->most_exposed_rank >= 0) {
    const sim_rank_stats *m = &b->most_exposed;
    sim_time_ps wait = m->straggler_wait + m->dependency_wait;
    g_string_append_printf(s, "  most exposed: rank %d, %.6f ms, of which %.6f ms (%.1f %%) waiting for peers",
                           b->most_exposed_rank, MS(m->exposed_comm), MS(wait), pct(wait, m->exposed_comm));
    /* Whom they wait for: the rank that issued last most often. */
    if (m->straggler_wait > 0 && b->last_issuer >= 0 && b->last_issuer != b->most_exposed_rank)
      g_string_append_printf(s, " (for rank %d, which issued last in %" G_GUINT64_FORMAT " of its %" G_GUINT64_FORMAT
                             " collectives)", b->last_issuer, b->last_issuer_stats.coll_last,
                             b->last_issuer_stats.colls);
    const sim_critical_path *p = u->baseline_critical;
    if (p)
      g_string_append_printf(s, "; a faster network shortens transfer only: %.6f ms on the critical path (%.1f %% "
                             "of T)", MS(p->by_category[SIM_CRIT_COMM]), pct(p->by_category[SIM_CRIT_COMM], p->step_time));
    g_string_append_c(s, '\n');
  }
#undef MS
  return g_string_free(s, FALSE);
}

/* The path's time in GPU kernels of class k: its compute segments whose
 * node is a kernel (not a CPU node, delay or replayed op) of that class,
 * as the lever picks them.  O(path segments x name length). */
static sim_time_ps path_class_time(const sim_critical_path *p, const et_workload *w, sim_kernel_class k)
{
  sim_time_ps t = 0;
  for (guint i = 0; i < p->segments->len; i++) {
    const sim_crit_segment *x = &g_array_index(p->segments, sim_crit_segment, i);
    const et_graph *g = w->ranks[x->rank];
    const et_node *n = &g->nodes[x->node];
    if (x->category == SIM_CRIT_COMPUTE && n->type == ET_NODE_COMP &&
        !(n->flags & (ET_FLAG_CPU_OP | ET_FLAG_DELAY | ET_FLAG_REPLAY)) &&
        sim_kernel_classify(et_node_name(g, x->node)) == k)
      t += x->end - x->start;
  }
  return t;
}

/* A lever row (compute, compute:CLASS, host): the path's share of what it
 * halves (for a class, that class's kernels on the path, not all compute). */
static void lever_why(const study_utility_result *u, const study_utility_row *r, const et_workload *w, GString *s)
{
  const sim_critical_path *p = u->baseline_critical;
  gboolean host = strcmp(r->resource, "host") == 0;
  sim_crit_category c = host ? SIM_CRIT_HOST : SIM_CRIT_COMPUTE;
  sim_kernel_class k;
  if (g_str_has_prefix(r->resource, "compute:") && sim_kernel_class_from_name(r->resource + 8, &k))
    g_string_append_printf(s, "%s kernels are %.2f %% of the critical path (GPU compute in all: %.2f %%)",
                           sim_kernel_class_name(k), pct(path_class_time(p, w, k), p->step_time),
                           pct(p->by_category[c], p->step_time));
  else
    g_string_append_printf(s, "%s is %.2f %% of the critical path", sim_crit_headline_name(c),
                           pct(p->by_category[c], p->step_time));
  g_string_append_printf(s, "; halving it removed %.2f %% of T", r->utility_pct);
}

GPtrArray *study_utility_why(const study_utility_result *u, const et_workload *w, const topo_variant *base)
{
  GPtrArray *lines = g_ptr_array_new_with_free_func(g_free);
  if (u->baseline_critical == NULL || u->baseline_critical->step_time <= 0) {
    for (guint i = 0; i < u->rows->len; i++)
      g_ptr_array_add(lines, NULL);
    return lines;
  }
  why_tiers wt;
  tiers_of_path(u->baseline_critical, w, base, &wt);
  for (guint i = 0; i < u->rows->len; i++) {
    const study_utility_row *r = &g_array_index(u->rows, study_utility_row, i);
    if (!r->applicable) {
      g_ptr_array_add(lines, NULL);
      continue;
    }
    GString *s = g_string_new(NULL);
    if (strcmp(r->resource, "compute") == 0 || strcmp(r->resource, "host") == 0 ||
        g_str_has_prefix(r->resource, "compute:"))
      lever_why(u, r, w, s);
    else
      network_why(u, r, &wt, base, s);
    g_ptr_array_add(lines, g_string_free(s, FALSE));
  }
  return lines;
}
