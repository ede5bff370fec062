/* topo_print.c: human summary (`wisp topo`), Graphviz output and the
 * bisection bandwidth.  Output is deterministic: it depends only on the
 * topology, never on hash order or addresses. */
#include "config.h"
#include "topologies/topo_internal.h"

#include <string.h>

/* Saturating arithmetic for summary figures: a sum or product that does
 * not fit in 64 bits prints as the maximum instead of wrapping. */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
  unsigned __int128 p = (unsigned __int128)a * b;
  return p > UINT64_MAX ? UINT64_MAX : (uint64_t)p;
}

/* Bisection of one group of dimension d: the capacity, in one direction,
 * of the links from the members with coordinate < floor(n/2) (half A) to
 * the others (half B).  Closed forms per kind (bw = endpoint link):
 *   ring (n >= 3): 2 bw (the two cables that close the arcs); ring with
 *     n = 2 and ring_uni: bw;
 *   fully_connected: |A| |B| bw;
 *   switch: min(|A|, |B|) bw (a non-blocking crossbar, limited by the
 *     smaller side's links);
 *   torus: cut across the largest axis k: 2 (n / k) bw for k >= 3, (n / 2) bw
 *     for k = 2;
 *   fat_tree: min(|A| bw, L_A S up, L_B S up, |B| bw) with L_A = floor(L/2)
 *     leaves on side A (L = 1: the switch formula). */
static wisp_bw_Bps dim_bisection(const topo_dim *d)
{
  uint64_t n = (uint64_t)d->size, a = n / 2, b = n - a;
  switch (d->kind) {
  case TOPO_KIND_RING:
    return n >= 3 ? sat_mul(2, d->bw) : d->bw;
  case TOPO_KIND_RING_UNI:
    return d->bw;
  case TOPO_KIND_FULLY_CONNECTED:
    return sat_mul(sat_mul(a, b), d->bw);
  case TOPO_KIND_SWITCH:
    return sat_mul(MIN(a, b), d->bw);
  case TOPO_KIND_TORUS2D:
  case TOPO_KIND_TORUS3D: {
    int k = 0;
    for (int i = 1; i < d->n_axes; i++)
      if (d->shape[i] > d->shape[k])
        k = i;
    uint64_t lines = n / (uint64_t)d->shape[k];
    return sat_mul(sat_mul(d->shape[k] >= 3 ? 2 : 1, lines), d->bw);
  }
  case TOPO_KIND_FAT_TREE: {
    if (d->leaves < 2)
      return sat_mul(MIN(a, b), d->bw);
    uint64_t h = n / (uint64_t)d->leaves, la = (uint64_t)d->leaves / 2, lb = (uint64_t)d->leaves - la;
    uint64_t up = sat_mul((uint64_t)d->spines, d->up_bw);
    uint64_t x = MIN(sat_mul(la * h, d->bw), sat_mul(la, up));
    return MIN(x, MIN(sat_mul(lb, up), sat_mul(lb * h, d->bw)));
  }
  case TOPO_KIND_GRAPH:
    return 0;
  }
  return 0;
}

wisp_bw_Bps topo_bisection_bw(const topo *t)
{
  if (t->format == TOPO_FORMAT_GRAPH)
    return 0;
  for (int di = t->n_dims - 1; di >= 0; di--) {
    const topo_dim *d = &t->dims[di];
    if (d->size < 2)
      continue;
    if (d->fabric != NULL) {
      /* Halves split by this level's coordinate: each endpoint of a half
       * crosses through its own port and lanes up to this level. */
      wisp_bw_Bps bw = d->bw;
      for (int k = t->fabric_first; k < di; k++)
        bw = MIN(bw, t->dims[k].bw);
      return sat_mul((uint64_t)t->n_endpoints / 2, bw);
    }
    return sat_mul(d->n_groups, dim_bisection(d));
  }
  return 0;
}

static void print_bw(FILE *out, wisp_bw_Bps bw)
{
  char *s = wisp_format_bandwidth(bw);
  fputs(s, out);
  g_free(s);
}

static void print_time(FILE *out, sim_time_ps t)
{
  char *s = wisp_format_time(t);
  fputs(s, out);
  g_free(s);
}

typedef struct {
  uint16_t tier;
  wisp_bw_Bps bw;
  sim_time_ps lat;
  uint64_t count;
} link_class;

static int cmp_class(const void *a, const void *b)
{
  const link_class *x = a, *y = b;
  if (x->tier != y->tier)
    return x->tier < y->tier ? -1 : 1;
  if (x->bw != y->bw)
    return x->bw > y->bw ? -1 : 1;
  if (x->lat != y->lat)
    return x->lat < y->lat ? -1 : 1;
  return 0;
}

static const char *tier_name(const topo *t, uint16_t tier)
{
  return tier < t->n_dims ? t->dims[tier].name : "?";
}

/* Describes the route between two endpoints: hops, latency, bottleneck (of
 * one stream alone, as topo_route_cost) and the tiers crossed. */
static void print_route_summary(const topo *t, uint32_t a, uint32_t b, FILE *out)
{
  GArray *r = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  topo_route_endpoints(t, a, b, r);
  sim_time_ps lat = 0;
  wisp_bw_Bps bw = UINT64_MAX;
  guint64 tiers = 0;
  for (guint i = 0; i < r->len; i++) {
    const topo_link *l = topo_get_link(t, g_array_index(r, uint32_t, i));
    lat = (sim_time_ps)MIN((uint64_t)SIM_TIME_MAX, sat_add((uint64_t)lat, (uint64_t)l->latency));
    bw = MIN(bw, topo_link_rate(t, l));
    if (l->tier < 64)
      tiers |= G_GUINT64_CONSTANT(1) << l->tier;
  }
  fprintf(out, "%u hop%s, ", r->len, r->len == 1 ? "" : "s");
  print_time(out, lat);
  fputs(", bottleneck ", out);
  print_bw(out, r->len ? bw : 0);
  fputs(", tiers ", out);
  gboolean first = TRUE;
  for (int d = 0; d < t->n_dims && d < 64; d++)
    if (tiers & (G_GUINT64_CONSTANT(1) << d)) {
      fprintf(out, "%s%s", first ? "" : "+", t->dims[d].name);
      first = FALSE;
    }
  fputc('\n', out);
  g_array_free(r, TRUE);
}

/* The dimensions, innermost first: kind, size and shape, fat-tree and
 * fabric details, link bandwidth and latency (with ASTRA-sim's GB/s
 * reading).  O(dims). */
static void print_dims(const topo *t, FILE *out)
{
  fprintf(out, "dimensions (innermost first):\n");
  for (int di = 0; di < t->n_dims; di++) {
    const topo_dim *d = &t->dims[di];
    fprintf(out, "  %d %s: %s, size %d", di, d->name, topo_kind_name(d->kind), d->size);
    if (d->kind == TOPO_KIND_TORUS2D || d->kind == TOPO_KIND_TORUS3D) {
      fprintf(out, " (shape %d", d->shape[0]);
      for (int a = 1; a < d->n_axes; a++)
        fprintf(out, "x%d", d->shape[a]);
      fputc(')', out);
    }
    if (d->kind == TOPO_KIND_FAT_TREE && d->leaves >= 2)
      fprintf(out, " (%d leaves, %d spines, oversubscription %g, leaf-spine link ", d->leaves, d->spines,
              d->oversub);
    if (d->kind == TOPO_KIND_FAT_TREE && d->leaves >= 2) {
      print_bw(out, d->up_bw);
      fputc(')', out);
    }
    if (d->kind == TOPO_KIND_FAT_TREE && d->leaves < 2)
      fputs(" (1 leaf: a single switch; spines and oversubscription unused)", out);
    if (d->fabric != NULL) {
      uint32_t nsw = t->n_endpoints / d->fabric_span;
      fprintf(out, " (fabric '%s' level %d: %u switch%s of %u endpoints, %s per endpoint ", d->fabric,
              d->fabric_level, nsw, nsw == 1 ? "" : "es", d->fabric_span, d->fabric_level == 0 ? "port" : "lane");
      print_bw(out, d->bw);
      if (d->stream_bw > 0) {
        fputs(", one stream ", out);
        print_bw(out, d->stream_bw);
      }
      fputs(", latency ", out);
      print_time(out, d->latency);
      fputs(")\n", out);
      continue;
    }
    fprintf(out, ", %u group%s, link ", d->n_groups, d->n_groups == 1 ? "" : "s");
    print_bw(out, d->bw);
    if (d->stream_bw > 0) {
      fputs(" (one stream ", out);
      print_bw(out, d->stream_bw);
      fputc(')', out);
    }
    fputs(", latency ", out);
    print_time(out, d->latency);
    if (t->format == TOPO_FORMAT_ASTRA)
      fprintf(out, " [ASTRA-sim bandwidth %g \"GB/s\" read as GiB/s = %" G_GUINT64_FORMAT " B/s]", d->astra_value,
              d->bw);
    fputc('\n', out);
  }
}

/* The directed links grouped by (tier, bandwidth, latency), in class
 * order.  O(links x classes). */
static void print_link_classes(const topo *t, FILE *out)
{
  /* Links grouped by (tier, bandwidth, latency). */
  GArray *classes = g_array_new(FALSE, FALSE, sizeof(link_class));
  for (guint i = 0; i < t->links->len; i++) {
    const topo_link *l = topo_get_link(t, i);
    gboolean found = FALSE;
    for (guint k = 0; k < classes->len; k++) {
      link_class *c = &g_array_index(classes, link_class, k);
      if (c->tier == l->tier && c->bw == l->bw && c->lat == l->latency) {
        c->count++;
        found = TRUE;
        break;
      }
    }
    if (!found) {
      link_class c = {.tier = l->tier, .bw = l->bw, .lat = l->latency, .count = 1};
      g_array_append_val(classes, c);
    }
  }
  if (classes->len > 1) /* a topology without links has no array (qsort needs one) */
    qsort(classes->data, classes->len, sizeof(link_class), cmp_class);
  fprintf(out, "links per tier:\n");
  for (guint k = 0; k < classes->len; k++) {
    link_class *c = &g_array_index(classes, link_class, k);
    fprintf(out, "  %s: %" G_GUINT64_FORMAT " links, ", tier_name(t, c->tier), c->count);
    print_bw(out, c->bw);
    fputs(", ", out);
    print_time(out, c->lat);
    fputc('\n', out);
  }
  g_array_free(classes, TRUE);
}

/* The injection bandwidth per endpoint (the sum of its out-links; a range
 * when endpoints differ) and the bisection bandwidth with the cut it is
 * taken across.  O(links) plus topo_bisection_bw. */
static void print_injection_bisection(const topo *t, FILE *out)
{
  /* Injection bandwidth: sum of an endpoint's out-link bandwidths. */
  wisp_bw_Bps inj_min = UINT64_MAX, inj_max = 0;
  for (uint32_t e = 0; e < t->n_endpoints; e++) {
    wisp_bw_Bps s = 0;
    for (uint32_t k = t->out_off[e]; k < t->out_off[e + 1]; k++)
      s = sat_add(s, topo_get_link(t, t->out_link[k])->bw);
    inj_min = MIN(inj_min, s);
    inj_max = MAX(inj_max, s);
  }
  fputs("injection bandwidth per endpoint (sum of its out-links): ", out);
  print_bw(out, inj_min);
  if (inj_max != inj_min) {
    fputs(" .. ", out);
    print_bw(out, inj_max);
  }
  fputc('\n', out);
  wisp_bw_Bps bis = topo_bisection_bw(t);
  if (t->format == TOPO_FORMAT_GRAPH) {
    fputs("bisection bandwidth: not computed for explicit graphs\n", out);
  } else if (bis == 0) {
    fputs("bisection bandwidth: none (a single endpoint)\n", out);
  } else {
    int o = t->n_dims - 1;
    while (t->dims[o].size < 2)
      o--;
    fputs("bisection bandwidth (one direction): ", out);
    print_bw(out, bis);
    const topo_dim *d = &t->dims[o];
    if (d->fabric != NULL)
      fprintf(out, "\n  = %u endpoints x the narrowest of their port and lanes up to fabric '%s' level %d ('%s'), "
              "halves split at coordinate %d\n", t->n_endpoints / 2, d->fabric, d->fabric_level, d->name, d->size / 2);
    else
      fprintf(out, "\n  = %u group%s x cut of '%s' (%s, size %d) between ", d->n_groups, d->n_groups == 1 ? "" : "s",
              d->name, topo_kind_name(d->kind), d->size);
    if (d->fabric != NULL)
      ;
    else if (d->kind == TOPO_KIND_TORUS2D || d->kind == TOPO_KIND_TORUS3D) {
      int k = 0;
      for (int i = 1; i < d->n_axes; i++)
        if (d->shape[i] > d->shape[k])
          k = i;
      fprintf(out, "axis-%d coordinates < %d and >= %d (the largest axis)\n", k, d->shape[k] / 2, d->shape[k] / 2);
    } else {
      fprintf(out, "coordinates < %d and >= %d\n", d->size / 2, d->size / 2);
    }
  }
}

/* The rank pair classes from endpoint 0: to its neighbour and to the
 * farthest endpoint along each dimension (scan capped at 4096
 * coordinates), then to the last endpoint; for graphs, to endpoints 1 and
 * the last.  O(dims x 4096 routes). */
static void print_pair_classes(const topo *t, FILE *out)
{
  /* Pair classes: from endpoint 0 to its neighbour and to the farthest
   * endpoint along each dimension, then to the last endpoint. */
  fprintf(out, "rank pair classes (from endpoint 0):\n");
  if (t->format == TOPO_FORMAT_GRAPH) {
    if (t->n_endpoints >= 2) {
      fprintf(out, "  to %s: ", t->node_names[1]);
      print_route_summary(t, 0, 1, out);
      fprintf(out, "  to %s: ", t->node_names[t->n_endpoints - 1]);
      print_route_summary(t, 0, t->n_endpoints - 1, out);
    }
    return;
  }
  GArray *r = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  for (int di = 0; di < t->n_dims; di++) {
    const topo_dim *d = &t->dims[di];
    if (d->size < 2)
      continue;
    fprintf(out, "  differing in dim %d (%s) only, neighbour: ", di, d->name);
    print_route_summary(t, 0, d->stride, out);
    /* Farthest by hops (first such coordinate); capped scan for huge dims. */
    uint32_t best = 1, best_hops = 0;
    int limit = d->size <= 4096 ? d->size : 4096;
    for (int k = 1; k < limit; k++) {
      g_array_set_size(r, 0);
      topo_route_endpoints(t, 0, (uint32_t)k * d->stride, r);
      if (r->len > best_hops) {
        best_hops = r->len;
        best = (uint32_t)k;
      }
    }
    if (best != 1) {
      fprintf(out, "  differing in dim %d (%s) only, farthest (coordinate ", di, d->name);
      if (d->kind == TOPO_KIND_TORUS2D || d->kind == TOPO_KIND_TORUS3D) {
        uint32_t rest = best;
        for (int a = 0; a < d->n_axes; a++) {
          fprintf(out, "%s%u", a ? "," : "(", rest % (uint32_t)d->shape[a]);
          rest /= (uint32_t)d->shape[a];
        }
        fputc(')', out);
      } else {
        fprintf(out, "%u", best);
      }
      fputs("): ", out);
      print_route_summary(t, 0, best * d->stride, out);
    }
  }
  g_array_free(r, TRUE);
  if (t->n_dims >= 2 && t->n_endpoints >= 2) {
    fprintf(out, "  to the last endpoint %u (all dims differ): ", t->n_endpoints - 1);
    print_route_summary(t, 0, t->n_endpoints - 1, out);
  }
}

void topo_print(const topo *t, FILE *out)
{
  static const char *formats[] = {"wisp YAML (dims)", "wisp YAML (graph)", "ASTRA-sim network.yml"};
  fprintf(out, "topology %s\n", t->name ? t->name : "(unnamed)");
  fprintf(out, "  source: %s (%s)\n", t->source, formats[t->format]);
  /* The net section of the config the topology was built from, echoed
   * as written (the document has validated it; net/net.h reads it). */
  const char *model = t->config ? cfg_get_or_default(t->config, "model") : "analytical";
  sim_time_ps quantum = 0;
  fprintf(out, "  model: %s\n", model);
  if (t->config && cfg_get_time(t->config, "flow_quantum", &quantum) && quantum > 0) {
    char *q = wisp_format_time(quantum);
    fprintf(out, "  flow_quantum: %s (flow tier approximate mode: solves at least this far apart; 0 = exact)\n", q);
    g_free(q);
  }
  uint32_t n_sw = t->n_nodes - t->n_endpoints;
  fprintf(out, "  endpoints: %u, switches: %u, directed links: %u, ranks: %d (placement %s)\n", t->n_endpoints, n_sw,
          t->links->len, t->n_ranks, t->contiguous ? "contiguous" : "explicit");
  if (!t->contiguous) {
    /* The first 32 entries; the rest are counted, not dropped silently. */
    int shown = MIN(t->n_ranks, 32);
    fputs("  placement (rank:endpoint):", out);
    for (int r = 0; r < shown; r++)
      fprintf(out, " %d:%u", r, t->rank_ep[r]);
    if (shown < t->n_ranks)
      fprintf(out, " ... (%d more ranks)", t->n_ranks - shown);
    fputc('\n', out);
  }
  if (t->format != TOPO_FORMAT_GRAPH)
    print_dims(t, out);
  print_link_classes(t, out);
  print_injection_bisection(t, out);
  print_pair_classes(t, out);
}

static void dot_escape(FILE *out, const char *s)
{
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      fputc('\\', out);
    fputc(*s, out);
  }
}

void topo_print_dot(const topo *t, FILE *out)
{
  fputs("digraph \"", out);
  dot_escape(out, t->name ? t->name : "topology");
  fputs("\" {\n", out);
  for (uint32_t n = 0; n < t->n_nodes; n++) {
    char *label = topo_node_label(t, n);
    fprintf(out, "  n%u [label=\"", n);
    dot_escape(out, label);
    fprintf(out, "\", shape=%s];\n", n < t->n_endpoints ? "box" : "ellipse");
    g_free(label);
  }
  /* A pair of opposite links with equal bandwidth and latency is drawn as
   * one two-headed edge; others as single arrows. */
  for (uint32_t i = 0; i < t->links->len; i++) {
    const topo_link *l = topo_get_link(t, i);
    uint32_t rev = topo_find_link(t, l->dst, l->src);
    const topo_link *r = rev != UINT32_MAX ? topo_get_link(t, rev) : NULL;
    gboolean both = r && r->bw == l->bw && r->latency == l->latency && r->tier == l->tier;
    if (both && l->src > l->dst)
      continue;
    char *bw = wisp_format_bandwidth(l->bw);
    fprintf(out, "  n%u -> n%u [label=\"", l->src, l->dst);
    dot_escape(out, tier_name(t, l->tier));
    fprintf(out, " %s\"%s];\n", bw, both ? ", dir=both" : "");
    g_free(bw);
  }
  fputs("}\n", out);
}

void topo_print_route(const topo *t, int src_rank, int dst_rank, FILE *out)
{
  uint32_t n;
  const uint32_t *r = topo_route(t, src_rank, dst_rank, &n);
  sim_time_ps lat;
  wisp_bw_Bps bw;
  topo_route_cost(t, src_rank, dst_rank, &lat, &bw);
  fprintf(out, "route rank %d -> rank %d (endpoint %u -> %u): %u hop%s, ", src_rank, dst_rank,
          t->rank_ep[src_rank], t->rank_ep[dst_rank], n, n == 1 ? "" : "s");
  print_time(out, lat);
  fputs(", bottleneck ", out);
  print_bw(out, bw);
  fputc('\n', out);
  for (uint32_t i = 0; i < n; i++) {
    const topo_link *l = topo_get_link(t, r[i]);
    char *a = topo_node_label(t, l->src), *b = topo_node_label(t, l->dst);
    fprintf(out, "  link %u: %s -> %s, tier %s, ", r[i], a, b, tier_name(t, l->tier));
    print_bw(out, l->bw);
    fputs(", ", out);
    print_time(out, l->latency);
    fputc('\n', out);
    g_free(a);
    g_free(b);
  }
}
