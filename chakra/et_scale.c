/* et_scale.c: parallel layout inference and data-parallel scaling of a
 * workload with shared graphs (see et_scale.h for the rules). */
#include "config.h"
#include "chakra/et_scale.h"
#include "common/wisp_memory.h"

#include <string.h>

static const char *const dim_names[ET_N_DIMS] = {"tp", "cp", "ep", "pp", "dp"};

const char *et_dim_name(et_dim d)
{
  return d < ET_N_DIMS ? dim_names[d] : "?";
}

struct et_scale {
  int n_traced;            /* ranks of the traced job */
  int factor;              /* K: replicas */
  et_placement placement;
  uint32_t n_traced_groups;
  uint32_t *rep_base;      /* per traced group: ET_NONE when it grows, else the index of its replica 1
                              (replica k >= 1 at rep_base + k - 1; replica 0 keeps the traced index) */
  char *summary;
  et_graph **graphs;       /* the traced graphs, owned (n_traced) */
  et_share *share;         /* the traced workload's sharing, owned, or NULL */
};

/* The scaled workload's owner hook (et_graph.h): the graphs are its scale's. */
static void scale_free_graphs(et_workload *w)
{
  et_scale_free(w->scale);
}

void et_scale_free(et_scale *s)
{
  if (s == NULL)
    return;
  if (s->share)
    et_share_free(s->share, s->graphs);
  else
    for (int c = 0; s->graphs && c < s->n_traced; c++)
      et_graph_free(s->graphs[c]);
  g_free(s->graphs);
  g_free(s->rep_base);
  g_free(s->summary);
  g_free(s);
}

int et_scale_traced_ranks(const et_scale *s) { return s->n_traced; }
const char *et_scale_summary(const et_scale *s) { return s->summary; }
const et_share *et_scale_share(const et_scale *s) { return s->share; }

int et_scale_counterpart(const et_scale *s, int r)
{
  return s->placement == ET_PLACE_OUTER ? r % s->n_traced : r / s->factor;
}

int et_scale_replica(const et_scale *s, int r)
{
  return s->placement == ET_PLACE_OUTER ? r / s->n_traced : r % s->factor;
}

/* New rank of traced rank c in replica k. */
static int rank_of(const et_scale *s, int c, int k)
{
  return s->placement == ET_PLACE_OUTER ? k * s->n_traced + c : c * s->factor + k;
}

void et_scale_translate(const et_scale *s, int rank, const et_comm *c, et_comm *tmp)
{
  *tmp = *c;
  int k = et_scale_replica(s, rank);
  gboolean grows = c->group == ET_GROUP_WORLD ||
                   (c->group < s->n_traced_groups && s->rep_base[c->group] == ET_NONE);
  if (!grows && k > 0 && c->group < s->n_traced_groups)
    tmp->group = s->rep_base[c->group] + (uint32_t)k - 1;
  if (c->src >= 0 && c->src < s->n_traced)
    tmp->src = rank_of(s, c->src, k);
  if (c->dst >= 0 && c->dst < s->n_traced)
    tmp->dst = rank_of(s, c->dst, k);
  if (c->root >= 0 && c->root < s->n_traced)
    tmp->root = rank_of(s, c->root, grows ? 0 : k);
  if (grows) {
    const et_coll_info *ci = et_coll_info_of((et_coll_type)c->coll);
    if (ci != NULL && ci->size_rule == ET_COLL_SIZE_PIECE)
      tmp->bytes = (c->bytes + (uint64_t)s->factor - 1) / (uint64_t)s->factor;
  }
}

/* ---- layout ---- */

/* Dimension bits named by a group's description or name: words split on
 * non-alphanumerics, e.g. "mesh_tp" -> tp, "dp_shard_cp" -> dp + cp. */
static unsigned dims_of_words(const char *text)
{
  if (text == NULL)
    return 0;
  static const struct { const char *word; et_dim d; } words[] = {
    {"tp", ET_DIM_TP}, {"tensor", ET_DIM_TP}, {"mp", ET_DIM_TP},
    {"cp", ET_DIM_CP}, {"context", ET_DIM_CP},
    {"ep", ET_DIM_EP}, {"expert", ET_DIM_EP}, {"moe", ET_DIM_EP},
    {"pp", ET_DIM_PP}, {"pipe", ET_DIM_PP}, {"pipeline", ET_DIM_PP},
    {"dp", ET_DIM_DP}, {"data", ET_DIM_DP}, {"fsdp", ET_DIM_DP}, {"shard", ET_DIM_DP},
    {"replicate", ET_DIM_DP}, {"ddp", ET_DIM_DP}, {"hsdp", ET_DIM_DP},
  };
  unsigned bits = 0;
  char *low = g_ascii_strdown(text, -1);
  char **toks = g_regex_split_simple("[^a-z0-9]+", low, 0, 0);
  for (int i = 0; toks[i]; i++)
    for (size_t k = 0; k < G_N_ELEMENTS(words); k++)
      if (strcmp(toks[i], words[k].word) == 0)
        bits |= ET_DIM_BIT(words[k].d);
  g_strfreev(toks);
  g_free(low);
  return bits;
}

/* Card coordinates, torchtitan's mesh order [pp, dp_replicate, dp_shard,
 * cp, tp] (tp innermost): the dimension bits in which ranks a and b differ. */
static unsigned card_diff(const et_card *c, int a, int b)
{
  const int sizes[5] = {c->tp, c->cp, c->dp_shard, c->dp_replicate, c->pp};
  const et_dim dims[5] = {ET_DIM_TP, ET_DIM_CP, ET_DIM_DP, ET_DIM_DP, ET_DIM_PP};
  unsigned bits = 0;
  for (int i = 0; i < 5; i++) {
    int s = MAX(sizes[i], 1);
    if (a % s != b % s)
      bits |= ET_DIM_BIT(dims[i]);
    a /= s;
    b /= s;
  }
  return bits;
}

static void set_degree(et_layout *l, et_dim d, int v, char *from)
{
  l->degree[d] = v;
  g_free(l->from[d]);
  l->from[d] = from;
}

gboolean et_layout_infer(const et_workload *w, const et_card *card, et_layout *out, GError **error)
{
  memset(out, 0, sizeof *out);
  int n = w->n_ranks;
  if (card != NULL) {
    long prod = (long)MAX(card->tp, 1) * MAX(card->cp, 1) * MAX(card->pp, 1) * MAX(card->dp_shard, 1) *
                MAX(card->dp_replicate, 1);
    if (prod != n) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s: the card's parallel sizes multiply to %ld (dp_replicate %d x dp_shard %d x tp %d x pp %d x "
                  "cp %d) but the workload has %d ranks; fix model_plan_parallelization or pass the card of this trace",
                  card->source ? card->source : "card", prod, MAX(card->dp_replicate, 1), MAX(card->dp_shard, 1),
                  MAX(card->tp, 1), MAX(card->pp, 1), MAX(card->cp, 1), n);
      return FALSE;
    }
  }
  out->n_groups = (int)w->groups->len;
  out->group_dims = g_new0(uint8_t, out->n_groups ? out->n_groups : 1);
  out->tp_contiguous = TRUE;
  int size_of[ET_N_DIMS] = {0};
  const char *named_by[ET_N_DIMS] = {0};
  for (int k = 0; k < out->n_groups; k++) {
    const et_group *grp = et_workload_group(w, (uint32_t)k);
    unsigned bits = dims_of_words(grp->desc);
    if (bits == 0)
      bits = dims_of_words(grp->name);
    if (bits == 0 && card != NULL)
      for (int m = 1; m < grp->n_ranks; m++)
        bits |= card_diff(card, grp->ranks[0], grp->ranks[m]);
    if (bits == 0 && grp->n_ranks == n && n > 1)
      bits = ET_DIM_WORLD_BIT;
    out->group_dims[k] = (uint8_t)bits;
    for (int d = 0; d < ET_N_DIMS; d++)
      if (bits == ET_DIM_BIT(d)) {
        size_of[d] = MAX(size_of[d], grp->n_ranks);
        if (named_by[d] == NULL)
          named_by[d] = grp->desc ? grp->desc : grp->name;
      }
    if (bits == ET_DIM_BIT(ET_DIM_TP))
      for (int m = 1; m < grp->n_ranks; m++)
        if (grp->ranks[m] != grp->ranks[0] + m)
          out->tp_contiguous = FALSE;
  }
  if (card != NULL) {
    const int cd[ET_N_DIMS] = {card->tp, card->cp, card->ep, card->pp, MAX(card->dp_replicate, 1) * MAX(card->dp_shard, 1)};
    for (int d = 0; d < ET_N_DIMS; d++) {
      /* A group named for one dimension must have the card's size for it. */
      if (size_of[d] > 0 && size_of[d] != MAX(cd[d], 1)) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                    "%s: the card gives %s %d but the trace's groups named '%s' have %d ranks; pass the card of "
                    "this trace or drop --card", card->source ? card->source : "card", dim_names[d], MAX(cd[d], 1),
                    named_by[d], size_of[d]);
        et_layout_clear(out);
        return FALSE;
      }
      set_degree(out, d, MAX(cd[d], 1), g_strdup_printf("card %s", card->source ? card->source : ""));
    }
    return TRUE;
  }
  for (int d = 0; d < ET_N_DIMS; d++)
    if (size_of[d] > 0)
      set_degree(out, d, size_of[d], g_strdup_printf("groups named '%s'", named_by[d]));
  /* The data-parallel (else the pipeline) degree is what the others leave. */
  long known = 1;
  for (int d = 0; d < ET_N_DIMS; d++)
    if (d != ET_DIM_EP && out->degree[d] > 0)
      known *= out->degree[d];
  et_dim rest = out->degree[ET_DIM_DP] == 0 ? ET_DIM_DP : ET_DIM_PP;
  if (out->degree[rest] == 0 && known > 0 && n % known == 0)
    set_degree(out, rest, (int)(n / known),
               g_strdup_printf("the factor of the %d ranks the other degrees leave%s", n,
                               rest == ET_DIM_DP ? " (no group names data parallelism)" : ""));
  for (int d = 0; d < ET_N_DIMS; d++)
    if (out->degree[d] == 0)
      set_degree(out, d, 1, g_strdup("assumed 1 (no group names it)"));
  return TRUE;
}

void et_layout_clear(et_layout *l)
{
  for (int d = 0; d < ET_N_DIMS; d++)
    g_free(l->from[d]);
  g_free(l->group_dims);
  memset(l, 0, sizeof *l);
}

static void dims_label(unsigned bits, GString *s)
{
  if (bits == 0) {
    g_string_append(s, "unknown");
    return;
  }
  if (bits & ET_DIM_WORLD_BIT) {
    g_string_append(s, "world");
    return;
  }
  gboolean first = TRUE;
  for (int d = 0; d < ET_N_DIMS; d++)
    if (bits & ET_DIM_BIT(d)) {
      g_string_append_printf(s, "%s%s", first ? "" : "+", dim_names[d]);
      first = FALSE;
    }
}

void et_layout_describe(const et_layout *l, const et_workload *w, GString *out)
{
  g_string_append_printf(out, "layout: %d ranks =", w->n_ranks);
  for (int d = ET_N_DIMS - 1; d >= 0; d--)
    if (d != ET_DIM_EP)
      g_string_append_printf(out, "%s %s %d", d == ET_N_DIMS - 1 ? "" : " x", dim_names[d], l->degree[d]);
  g_string_append_printf(out, " (ep %d)\n", l->degree[ET_DIM_EP]);
  /* Found degrees one line each; the assumed ones together. */
  GString *assumed = g_string_new(NULL);
  for (int d = 0; d < ET_N_DIMS; d++) {
    if (l->from[d] && g_str_has_prefix(l->from[d], "assumed"))
      g_string_append_printf(assumed, "%s%s", assumed->len ? ", " : "", dim_names[d]);
    else
      g_string_append_printf(out, "  %s %d: %s\n", dim_names[d], l->degree[d], l->from[d] ? l->from[d] : "");
  }
  if (assumed->len)
    g_string_append_printf(out, "  %s: 1 each, assumed (no group names them)\n", assumed->str);
  g_string_free(assumed, TRUE);
  /* Groups per kind: count, size range, stride of the first one. */
  for (int pass = 0; pass < 256; pass++) {
    int count = 0, lo = 0, hi = 0;
    const et_group *first = NULL;
    for (int k = 0; k < l->n_groups; k++) {
      if (l->group_dims[k] != pass)
        continue;
      const et_group *grp = et_workload_group(w, (uint32_t)k);
      if (count++ == 0) {
        first = grp;
        lo = hi = grp->n_ranks;
      }
      lo = MIN(lo, grp->n_ranks);
      hi = MAX(hi, grp->n_ranks);
    }
    if (count == 0)
      continue;
    g_string_append(out, "  groups ");
    dims_label((unsigned)pass, out);
    g_string_append_printf(out, ": %d of %d", count, lo);
    if (hi != lo)
      g_string_append_printf(out, "..%d", hi);
    g_string_append_printf(out, " ranks, e.g. '%s'%s%s%s", first->name, first->desc ? " (" : "",
                           first->desc ? first->desc : "", first->desc ? ")" : "");
    if (first->n_ranks > 1)
      g_string_append_printf(out, ", stride %d", first->ranks[1] - first->ranks[0]);
    g_string_append_c(out, '\n');
  }
  if (l->degree[ET_DIM_TP] > 1)
    g_string_append_printf(out, "  tp groups %s consecutive ranks%s\n", l->tp_contiguous ? "are" : "are not",
                           l->tp_contiguous ? " (inside the scale-up domain when it holds tp ranks)" : "");
}

/* ---- scaling ---- */

/* One KEY=V of a --scale spec into rq. */
static gboolean scale_item(const char *spec, const char *item, et_scale_request *rq, GError **error)
{
  const char *eq = strchr(item, '=');
  if (eq == NULL) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "--scale '%s': expected DIM=N, e.g. --scale dp=64 or --scale tp=2,pp=4,mb=8", spec);
    return FALSE;
  }
  char *dim = g_strndup(item, (gsize)(eq - item));
  const char *val = eq + 1;
  gboolean ok = FALSE;
  if (strcmp(dim, "sched") == 0) {
    ok = strcmp(val, "1f1b") == 0 || strcmp(val, "gpipe") == 0 || strcmp(val, "interleaved_1f1b") == 0;
    if (ok) /* et_sched (chakra/et_model.h) */
      rq->sched = strcmp(val, "gpipe") == 0 ? 1 : strcmp(val, "interleaved_1f1b") == 0 ? 2 : 0;
    else
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "--scale %s: sched must be gpipe, 1f1b or interleaved_1f1b",
                  spec);
  } else if (strcmp(dim, "dp") && strcmp(dim, "tp") && strcmp(dim, "pp") && strcmp(dim, "mb") && strcmp(dim, "ep") &&
             strcmp(dim, "mbs") && strcmp(dim, "vpp") && strcmp(dim, "cp")) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "--scale %s: '%s' is not a parallel dimension (dp, tp, pp, ep, cp, mb, mbs, sched, vpp)", spec, dim);
  } else {
    char *end = NULL;
    gint64 v = g_ascii_strtoll(val, &end, 10);
    if (end == val || *end != '\0' || v < 1 || v > (1 << 24)) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "--scale %s: %s must be a whole number from 1 to %d, e.g. --scale %s=4", spec, dim, 1 << 24, dim);
    } else {
      int *dst = strcmp(dim, "dp") == 0 ? &rq->dp : strcmp(dim, "tp") == 0 ? &rq->tp : strcmp(dim, "pp") == 0 ? &rq->pp
                 : strcmp(dim, "ep") == 0 ? &rq->ep : strcmp(dim, "mbs") == 0 ? &rq->mbs
                 : strcmp(dim, "vpp") == 0 ? &rq->vpp : strcmp(dim, "cp") == 0 ? &rq->cp : &rq->mb;
      *dst = (int)v;
      ok = TRUE;
    }
  }
  g_free(dim);
  return ok;
}

gboolean et_scale_parse(const char *spec, et_scale_request *rq, GError **error)
{
  rq->dp = rq->tp = rq->pp = rq->mb = rq->ep = rq->mbs = rq->vpp = rq->cp = 0;
  rq->sched = -1;
  if (spec == NULL || *spec == '\0')
    return TRUE;
  char **items = g_strsplit(spec, ",", -1);
  gboolean ok = TRUE;
  for (int i = 0; ok && items[i]; i++)
    ok = scale_item(spec, items[i], rq, error);
  g_strfreev(items);
  if (ok && rq->vpp > 0 && rq->sched < 0) /* vpp= alone: interleaved 1F1B */
    rq->sched = 2;
  return ok;
}

gboolean et_placement_parse(const char *s, et_placement *out, GError **error)
{
  if (s == NULL || strcmp(s, "outer") == 0) {
    *out = ET_PLACE_OUTER;
    return TRUE;
  }
  if (strcmp(s, "inner") == 0) {
    *out = ET_PLACE_INNER;
    return TRUE;
  }
  g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
              "--placement '%s': use outer (replicas of the traced world side by side: the trace's TP/PP placement "
              "inside each, DP across) or inner (a rank's data-parallel replicas on consecutive ranks)", s);
  return FALSE;
}

/* Whether group g (or the world, g = ET_GROUP_WORLD) spans data parallelism. */
static gboolean group_grows(const et_layout *l, uint32_t g)
{
  if (g == ET_GROUP_WORLD)
    return TRUE;
  unsigned bits = l->group_dims[g];
  return (bits & (ET_DIM_BIT(ET_DIM_DP) | ET_DIM_WORLD_BIT)) != 0;
}

/* All-to-all-v tables name the traced members: an error when one is
 * issued on a group that grows.  O(records). */
static gboolean refuse_grown_a2av(const et_workload *w, const et_layout *l, GError **error)
{
  for (int r = 0; r < w->n_ranks; r++) {
    const et_graph *g = w->ranks[r];
    for (uint32_t c = 0; c < g->n_comms; c++) {
      et_comm tc;
      const et_comm *cm = &g->comms[c];
      if (w->share != NULL) { /* w is not scaled (checked by the caller): its sharing translation only */
        et_share_translate(w->share, r, cm, &tc);
        cm = &tc;
      }
      if (cm->coll == ET_COLL_ALL_TO_ALLV && group_grows(l, cm->group)) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED,
                    "%s: rank %d issues an all-to-all-v on group '%s', which spans data parallelism and would grow; "
                    "its per-peer sizes cannot be re-spread; scale a trace whose all-to-all-v stays inside a replica",
                    w->source, r, et_workload_group_name(w, cm->group));
        return FALSE;
      }
    }
  }
  return TRUE;
}

/* A lower bound of the replay's memory for N ranks, checked before anything
 * of that size is allocated; names the work for a later allocation failure
 * (common/wisp_memory.h).  O(1). */
static gboolean scale_fits(int N, int dp, GError **error)
{
  char work[64];
  g_snprintf(work, sizeof work, "%d ranks (--scale dp=%d)", N, dp);
  if (!wisp_memory_check((uint64_t)N * WISP_MEMORY_PER_RANK_BYTES, work, error))
    return FALSE;
  wisp_memory_set_context(work);
  return TRUE;
}

et_workload *et_workload_scale(et_workload *w, const et_layout *l, const et_scale_request *rq, GError **error)
{
  int n = w->n_ranks, D = l->degree[ET_DIM_DP];
  if (w->scale != NULL) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: the workload is already scaled", w->source);
    return NULL;
  }
  if (rq->dp < D || rq->dp % D != 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "--scale dp=%d: the traced job has data-parallel degree %d (%s); the new degree must be a multiple "
                "of it, e.g. dp=%d or dp=%d", rq->dp, D, l->from[ET_DIM_DP], D * 2, D * 8);
    return NULL;
  }
  int K = rq->dp / D;
  if ((gint64)n * K > (1 << 24)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_LIMIT, "--scale dp=%d: %d x %d ranks exceeds wisp's limit of %d ranks",
                rq->dp, n, K, 1 << 24);
    return NULL;
  }
  for (int k = 0; k < l->n_groups; k++)
    if (l->group_dims[k] == 0) {
      const et_group *grp = et_workload_group(w, (uint32_t)k);
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s: group '%s' (%d ranks) names no parallel dimension, so it is unknown whether it grows with "
                  "dp; describe the job with --card FILE (a CCL-Bench workload card) or name the group "
                  "(e.g. 'mesh_dp', 'tp')", w->source, grp->name, grp->n_ranks);
      return NULL;
    }
  if (K > 1 && !refuse_grown_a2av(w, l, error))
    return NULL;
  int N = n * K;
  g_assert(N > 0);
  if (!scale_fits(N, rq->dp, error))
    return NULL;
  et_scale *s = g_new0(et_scale, 1);
  s->n_traced = n;
  s->factor = K;
  s->placement = rq->placement;
  s->n_traced_groups = w->groups->len;
  s->rep_base = g_new(uint32_t, s->n_traced_groups ? s->n_traced_groups : 1);

  char *src = g_strdup_printf("%s (scaled dp %d -> %d)", w->source, D, rq->dp);
  et_workload *o = et_workload_new(N, src);
  g_free(src);
  o->scale = s;
  o->free_graphs = scale_free_graphs;
  for (int r = 0; r < N; r++) {
    int c = et_scale_counterpart(s, r);
    o->ranks[r] = w->ranks[c];
    o->measured_step_ps[r] = w->measured_step_ps[c];
  }
  if (w->measured_start_ps) {
    o->measured_start_ps = g_new(sim_time_ps, (gsize)(guint)N);
    for (int r = 0; r < N; r++)
      o->measured_start_ps[r] = w->measured_start_ps[et_scale_counterpart(s, r)];
  }
  /* Traced groups keep their indices (replica 0, or grown); replicas 1..K-1
   * of the others follow. */
  int n_grown = 0, n_rep = 0;
  int *buf = g_new(int, (gsize)(guint)N);
  for (uint32_t g = 0; g < s->n_traced_groups; g++) {
    const et_group *grp = et_workload_group(w, g);
    int m = 0;
    gboolean grows = group_grows(l, g);
    if (grows) {
      for (int k = 0; k < K; k++)
        for (int i = 0; i < grp->n_ranks; i++)
          buf[m++] = rank_of(s, grp->ranks[i], k);
      n_grown++;
    } else {
      for (int i = 0; i < grp->n_ranks; i++)
        buf[m++] = rank_of(s, grp->ranks[i], 0);
      n_rep++;
    }
    uint32_t idx = et_workload_add_group(o, grp->name, grp->desc, buf, m);
    g_assert(idx == g);
    s->rep_base[g] = grows ? ET_NONE : 0;
  }
  for (uint32_t g = 0; g < s->n_traced_groups; g++) {
    if (s->rep_base[g] == ET_NONE)
      continue;
    const et_group *grp = et_workload_group(w, g);
    s->rep_base[g] = o->groups->len;
    for (int k = 1; k < K; k++) {
      for (int i = 0; i < grp->n_ranks; i++)
        buf[i] = rank_of(s, grp->ranks[i], k);
      char *name = g_strdup_printf("%s@replica%d", grp->name, k);
      uint32_t idx = et_workload_add_group(o, name, grp->desc, buf, grp->n_ranks);
      g_assert(idx != ET_NONE);
      g_free(name);
    }
  }
  g_free(buf);
  GString *sum = g_string_new(NULL);
  et_layout_describe(l, w, sum);
  g_string_append_printf(sum,
    "scaled: dp %d -> %d: %d traced ranks -> %d ranks (%d replicas of the traced world), each rank replaying its "
    "traced counterpart's graph (shared)\n"
    "  placement %s: %s\n"
    "  groups: %d spanning dp grown %dx (with the world); %d others replicated, %u groups in all\n"
    "  sizes in grown groups: all-reduce, reduce-scatter, all-to-all, broadcast, reduce keep comm_size; all-gather, "
    "gather, scatter keep the whole S, so each member's piece is comm_size / %d (rounded up)\n"
    "  compute, point-to-point and the other groups' collectives are the counterpart's, unchanged",
    D, rq->dp, n, N, K, rq->placement == ET_PLACE_OUTER ? "outer" : "inner",
    rq->placement == ET_PLACE_OUTER ? "replica k holds ranks k*n..k*n+n-1, the trace's own TP/PP placement inside "
                                      "each (TP in the scale-up domain first, then PP), DP across replicas"
                                    : "traced rank c's replicas are ranks c*K..c*K+K-1 (DP first)",
    n_grown, K, n_rep, o->groups->len, K);
  s->summary = g_string_free(sum, FALSE);
  /* The graphs now belong to o's scale; w is freed without them. */
  s->graphs = g_memdup2(w->ranks, sizeof(et_graph *) * (size_t)n);
  s->share = w->share;
  et_share_detach(w);
  for (int r = 0; r < n; r++)
    w->ranks[r] = NULL;
  et_workload_free(w);
  return o;
}
