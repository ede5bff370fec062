/* et_model.c: reading a transformer's layers, roles and stages out of a
 * traced workload (see et_model.h for the rules). */
#include "config.h"
#include "chakra/et_model_internal.h"

#include <math.h>
#include <string.h>

const char *et_sched_name(et_sched s)
{
  return s == ET_SCHED_GPIPE ? "gpipe" : s == ET_SCHED_INTERLEAVED ? "interleaved_1f1b" : "1f1b";
}

const char *et_kclass_name(et_kclass c)
{
  static const char *const names[] = {"gemm", "attention", "elementwise (sharded)", "elementwise (replicated)",
                                      "tp collective", "other collective", "ep all-to-all"};
  return c <= ET_KC_EP_COLL ? names[c] : "?";
}

void et_model_card_clear(et_model_card *c)
{
  g_free(c->hw);
  g_free(c->source);
  g_free(c->missing);
  memset(c, 0, sizeof *c);
}

static void mseq_clear(et_mseq *s)
{
  for (int i = 0; i < s->n; i++)
    g_free(s->ops[i].name);
  g_free(s->ops);
  memset(s, 0, sizeof *s);
}

void et_model_clear(et_model *m)
{
  mseq_clear(&m->layer_fwd);
  mseq_clear(&m->layer_bwd);
  mseq_clear(&m->embed_fwd);
  mseq_clear(&m->embed_bwd);
  mseq_clear(&m->head);
  mseq_clear(&m->head_bwd);
  mseq_clear(&m->tail);
  if (m->how)
    g_string_free(m->how, TRUE);
  memset(m, 0, sizeof *m);
}

double et_model_layer_dense_params(const et_model_card *c, int tp)
{
  double h = c->hidden, f = c->ffn > 0 ? c->ffn : 4.0 * c->hidden;
  return c->experts > 0 ? 4.0 * h * h / tp + h * c->experts : (4.0 * h * h + 2.0 * h * f) / tp;
}

int et_model_etp(const et_model_card *c, int tp)
{
  return c->etp > 1 ? tp : 1;
}

gboolean et_model_etp_modelled(const et_model_card *c)
{
  return c->experts == 0 || c->etp <= 1 || (c->etp == c->tp && c->sp);
}

double et_model_layer_expert_params(const et_model_card *c, int tp, int ep)
{
  return c->experts > 0 ? (double)c->experts / ep * 2.0 * c->hidden * c->moe_ffn / et_model_etp(c, tp) : 0.0;
}

double et_model_rank_params(const et_model_card *c, int tp, int pp, int ep, int s)
{
  double h = c->hidden;
  double n = (double)c->layers / pp * (et_model_layer_dense_params(c, tp) + et_model_layer_expert_params(c, tp, ep));
  if (s == 0)
    n += (double)c->vocab * h / tp;
  if (s == pp - 1 && s >= 0)
    n += (double)c->vocab * h / tp;
  return n;
}

/* ---- one rank's GPU operations in time order ---- */

typedef et_model_gop gop;

static int cmp_gop(const void *pa, const void *pb)
{
  const gop *a = pa, *b = pb;
  if (a->start != b->start)
    return a->start < b->start ? -1 : 1;
  return a->node < b->node ? -1 : a->node > b->node;
}

/* Kernels (not CPU, not idle gaps) and communication of rank r's graph in
 * time order (measured starts, else node order; receives at their ends),
 * without the collectives of data-parallel groups (the gradient
 * reductions, which the re-partitioned job rebuilds from the card):
 * O(nodes log nodes). */
static GArray *rank_ops(const et_graph *g, const et_layout *l)
{
  GArray *a = g_array_new(FALSE, FALSE, sizeof(gop));
  for (uint32_t i = 0; i < g->n_nodes; i++) {
    const et_node *n = &g->nodes[i];
    gboolean comp = n->type == ET_NODE_COMP && !(n->flags & (ET_FLAG_CPU_OP | ET_FLAG_DELAY));
    gboolean comm = n->type == ET_NODE_COMM_COLL || n->type == ET_NODE_COMM_SEND || n->type == ET_NODE_COMM_RECV;
    if (et_model_dp_coll(g, l, i) || et_model_cp_p2p(g, l, i)) /* gradient reductions, the CP ring: not the layers' own order */
      comm = FALSE;
    if (comp || comm) {
      /* A receive is placed where its data arrived (its end): it is
       * posted early and waits, while the previous work finishes. */
      gop o = {i, (n->flags & ET_FLAG_HAS_START) ? n->start_ps : (sim_time_ps)i};
      if ((n->flags & ET_FLAG_HAS_START) && n->type == ET_NODE_COMM_RECV)
        o.start += n->duration_ps;
      g_array_append_val(a, o);
    }
  }
  g_array_sort(a, cmp_gop);
  return a;
}

static et_node_type op_type(const et_graph *g, const gop *o) { return (et_node_type)g->nodes[o->node].type; }

/* Two operations are the same step of a pattern when both are kernels of
 * one name or both collectives of one type in groups of one kind. */
static gboolean same_op(const et_graph *g, const gop *a, const gop *b)
{
  et_node_type ta = op_type(g, a), tb = op_type(g, b);
  if (ta != tb)
    return FALSE;
  if (ta == ET_NODE_COMP)
    return et_model_name_eq(et_node_name(g, a->node), et_node_name(g, b->node));
  const et_comm *ca = et_node_comm(g, a->node), *cb = et_node_comm(g, b->node);
  return ca->coll == cb->coll && ca->bytes == cb->bytes;
}

/* The first operation of type t at or after index from (-1 when none). */
static int find_type(const et_graph *g, const GArray *a, int from, et_node_type t)
{
  for (int i = MAX(from, 0); i < (int)a->len; i++)
    if (op_type(g, &g_array_index(a, gop, i)) == t)
      return i;
  return -1;
}

static int find_last_type(const et_graph *g, const GArray *a, et_node_type t)
{
  for (int i = (int)a->len - 1; i >= 0; i--)
    if (op_type(g, &g_array_index(a, gop, i)) == t)
      return i;
  return -1;
}

/* Whether ops[lo + k*p .. lo + k*p + p) are identical for k = 0..reps-1. */
static gboolean periodic(const et_graph *g, const GArray *a, int lo, int p, int reps)
{
  for (int k = 1; k < reps; k++)
    for (int i = 0; i < p; i++)
      if (!same_op(g, &g_array_index(a, gop, lo + i), &g_array_index(a, gop, lo + k * p + i)))
        return FALSE;
  return TRUE;
}

/* The layer pattern in ops[lo, hi): the offset e (at most a quarter of
 * the range: what precedes the layers) and period p whose ls repetitions
 * cover the most operations; FALSE when no p >= 1 repeats.  Operations of
 * the next micro-batch that started before this one's last (a kernel
 * launched ahead of a send) fall outside the repetitions.  With late, of
 * offsets that cover as many the last wins: when the operation before the
 * layers equals the layer's last (a patch embedding's GEMM before layers
 * ending in that GEMM, or the embedding's sequence-parallel reduce-scatter
 * before layers ending in one), the earlier reading is a layer rotated by
 * one, which leaves the last layer's end to the next micro-batch; a
 * first stage's layers run up to its send.  Without late, a later
 * offset wins a tie only over a reading whose layer would open with a
 * reduction (all-reduce, reduce-scatter): a reduction closes a
 * tensor-parallel block, it never opens a layer (the embedding's
 * sequence-parallel reduce-scatter before layers ending in one).
 * O(range^3 / ls) comparisons at worst, far less in practice (a mismatch
 * ends a candidate at once). */
static gboolean reduces(const et_graph *g, const GArray *a, int i)
{
  const gop *o = &g_array_index(a, gop, i);
  if (op_type(g, o) != ET_NODE_COMM_COLL)
    return FALSE;
  et_coll_type c = (et_coll_type)et_node_comm(g, o->node)->coll;
  return c == ET_COLL_ALL_REDUCE || c == ET_COLL_REDUCE_SCATTER;
}

static gboolean best_period(const et_graph *g, const GArray *a, int lo, int hi, int ls, gboolean late, int *e_out,
                            int *p_out)
{
  int best = 0, n = hi - lo;
  for (int e = 0; e <= n / 4; e++)
    for (int p = (n - e) / ls; p >= 1 && (p * ls > best || (p * ls == best && (late || reduces(g, a, lo + *e_out))));
         p--)
      if (periodic(g, a, lo + e, p, ls)) {
        best = p * ls;
        *e_out = e;
        *p_out = p;
      }
  return best > 0;
}

/* The ls layers in ops[lo, hi) (a first forward; *e_out relative to lo,
 * *p_out operations each): from the module annotations when they name ls
 * layer instances of identical operations, else from the kernel pattern
 * (best_period; late: hi is the stage's send, so the layers run up to
 * it; a one-stage range holds the head after them, whose norm, all-gather
 * and GEMM look like a layer's start, so there the first reading stays);
 * the other source is compared, and what was used and any
 * disagreement appended to how.  FALSE when neither gives the layers.
 * O(best_period + range x path length). */
static gboolean find_layers(const et_graph *g, const GArray *a, int lo, int hi, int ls, gboolean late,
                            GString *how, int *e_out, int *p_out)
{
  int e = 0, p = 0;
  gboolean pat = best_period(g, a, lo, hi, ls, late, &e, &p);
  et_annot_layers an;
  et_model_annot_layers(g, a, lo, hi, &an);
  if (an.n == 0) {
    g_string_append_printf(how, "model: layers from the kernel pattern (%s)\n", an.annotated
                           ? "the module annotations name no layer: TransformerLayer, DecoderLayer, TransformerBlock, "
                             "Block or layers.N"
                           : "the trace has no module annotations");
  } else {
    char *why = an.why ? g_strdup(an.why) : NULL;
    if (!why && an.n != ls)
      why = g_strdup_printf("they name %d %s instances in rank 0's first forward, where the card's num_layers "
                            "gives %d%s", an.n, an.cls, ls, pat ? " and the kernel pattern finds them" : "");
    if (!why && !periodic(g, a, an.first, an.per, ls))
      why = g_strdup("the annotated layers differ kernel for kernel");
    if (!why) {
      g_string_append_printf(how, "model: layers from module annotations: %d %s instances of %d operations from "
                             "operation %d of rank 0's first forward (annotated operations on rank 0: ", an.n, an.cls,
                             an.per, an.first);
      et_model_annot_roles(g, a, 0, (int)a->len, how);
      if (pat && e == an.first - lo && p == an.per)
        g_string_append(how, "), as the kernel pattern and the card's num_layers\n");
      else if (pat)
        g_string_append_printf(how, "); the kernel pattern disagrees (%d repetitions of %d operations from operation "
                               "%d): the annotations are used\n", ls, p, lo + e);
      else
        g_string_append_printf(how, "); the kernel pattern finds no %d identical layers: the annotations are used\n",
                               ls);
      e = an.first - lo;
      p = an.per;
      pat = TRUE;
    } else {
      g_string_append_printf(how, "model: warning: the module annotations disagree and are not used: %s; the layers "
                             "come from the kernel pattern and the card (if the annotations are right, check the "
                             "card's num_layers and pp)\n", why);
    }
    g_free(why);
  }
  g_free(an.cls);
  *e_out = e;
  *p_out = p;
  return pat;
}

/* ---- building the sequences ---- */

typedef struct {
  const et_workload *w;
  const et_layout *l;
  const et_model_card *c;
  et_model *m;
} rd;

static et_kclass class_of_name(const char *name)
{
  char *low = g_ascii_strdown(name, -1);
  et_kclass k = ET_KC_ELEM_SHARD;
  if (strstr(low, "gemm") || strstr(low, "xmma") || strstr(low, "cutlass") || strstr(low, "cublas"))
    k = ET_KC_GEMM;
  else if (strstr(low, "flash") || strstr(low, "fmha") || strstr(low, "attention") || strstr(low, "sdpa"))
    k = ET_KC_ATTN;
  else if (strstr(low, "norm") || strstr(low, "embedding") || strstr(low, "indexselect"))
    k = ET_KC_ELEM_REPL;
  g_free(low);
  return k;
}

/* The idle before ops[idx]: its start minus the end of the kernel,
 * collective or receive (placed at its end) before it (0 when none or
 * overlapping); when that is a collective, the kernel before it may have
 * run beside it and ended later (et_mop.concurrent), so the later end of
 * the two counts.  O(sends skipped). */
static sim_time_ps gap_before(const et_graph *g, const GArray *a, int idx)
{
  sim_time_ps end = -1;
  for (int j = idx - 1; j >= 0; j--) {
    const gop *o = &g_array_index(a, gop, j);
    et_node_type t = op_type(g, o);
    if (t == ET_NODE_COMM_SEND)
      continue;
    sim_time_ps e = t == ET_NODE_COMM_RECV ? o->start : o->start + g->nodes[o->node].duration_ps;
    end = MAX(end, e);
    if (t != ET_NODE_COMM_COLL || end != e)
      break;
  }
  sim_time_ps gap = end < 0 ? 0 : g_array_index(a, gop, idx).start - end;
  return gap > 0 ? gap : 0;
}

/* Whether collective i of the p-long pattern at ops[lo] ran beside the
 * kernel before it (1) or after it (2) in each of its reps instances
 * (et_mop.concurrent; 0: neither).  O(reps). */
static int concurrent(const et_graph *g, const GArray *a, int lo, int p, int reps, int i)
{
  int with[2] = {i > 0, i + 1 < p};
  for (int k = 0; k < reps; k++) {
    const gop *c = &g_array_index(a, gop, lo + k * p + i);
    sim_time_ps ce = c->start + g->nodes[c->node].duration_ps;
    for (int s = 0; s < 2; s++) {
      const gop *o = with[s] ? &g_array_index(a, gop, lo + k * p + i + (s ? 1 : -1)) : NULL;
      with[s] = o && op_type(g, o) == ET_NODE_COMP &&
                (s ? o->start < ce : c->start < o->start + g->nodes[o->node].duration_ps);
    }
  }
  return with[0] ? 1 : with[1] ? 2 : 0;
}

/* Appends to s the mean of `reps` instances of a p-long pattern starting
 * at ops[lo] (instances every p operations). */
static void take(const rd *d, const et_graph *g, const GArray *a, int lo, int p, int reps, et_mseq *s)
{
  s->ops = g_new0(et_mop, p);
  s->n = p;
  for (int i = 0; i < p; i++) {
    const gop *o = &g_array_index(a, gop, lo + i);
    et_mop *m = &s->ops[i];
    m->name = g_strdup(et_node_name(g, o->node));
    sim_time_ps gaps = 0;
    for (int k = 0; k < reps; k++)
      gaps += gap_before(g, a, lo + k * p + i);
    m->gap_ps = gaps / reps;
    if (op_type(g, o) == ET_NODE_COMP) {
      m->cls = class_of_name(m->name);
      sim_time_ps sum = 0;
      for (int k = 0; k < reps; k++)
        sum += g->nodes[g_array_index(a, gop, lo + k * p + i).node].duration_ps;
      m->dur_ps = sum / reps;
    } else {
      const et_comm *c = et_node_comm(g, o->node);
      unsigned dims = c->group != ET_GROUP_WORLD && c->group < (uint32_t)d->l->n_groups ? d->l->group_dims[c->group]
                                                                                        : 0;
      gboolean ep = (dims & ET_DIM_BIT(ET_DIM_EP)) && !(dims & ET_DIM_BIT(ET_DIM_DP)) &&
                    (c->coll == ET_COLL_ALL_TO_ALL || c->coll == ET_COLL_ALL_TO_ALLV);
      m->cls = (dims & ET_DIM_BIT(ET_DIM_TP)) ? ET_KC_TP_COLL : ep ? ET_KC_EP_COLL : ET_KC_OTHER_COLL;
      m->tp_only = dims == ET_DIM_BIT(ET_DIM_TP);
      m->two_hop = c->two_hop;
      m->coll = c->coll;
      m->bytes = c->bytes;
      m->group = c->group;
      m->concurrent = op_type(g, o) == ET_NODE_COMM_COLL ? concurrent(g, a, lo, p, reps, i) : 0;
    }
  }
}

/* The stages: rank 0 first, then where each first send goes, until a send
 * goes back (1F1B: the last stage's first send is a gradient; interleaved:
 * the last stage feeds stage 0's next chunk). */
static gboolean find_stages(const rd *d, int *last_rank, int *stages, GError **error)
{
  int prev = -1, r = 0, n = 1;
  for (;;) {
    const et_graph *g = d->w->ranks[r];
    GArray *a = rank_ops(g, d->l);
    int i = find_type(g, a, 0, ET_NODE_COMM_SEND);
    int dst = i < 0 ? -1 : et_node_comm(g, g_array_index(a, gop, i).node)->dst;
    g_array_free(a, TRUE);
    if (dst < 0 || dst == prev || dst == 0 || n > d->w->n_ranks)
      break;
    prev = r;
    r = dst;
    n++;
  }
  *last_rank = r;
  *stages = n;
  if (n < 2 && d->c->pp == 1)
    return TRUE;
  if (n < 2) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED,
                "%s: the traced job has one pipeline stage (rank 0 sends nothing), the card (%s) says pp %d",
                d->w->source, d->c->source, d->c->pp);
    return FALSE;
  }
  if (n != d->c->pp) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: the sends from rank 0 pass %d pipeline stages, the card (%s) says pp %d", d->w->source, n,
                d->c->source, d->c->pp);
    return FALSE;
  }
  return TRUE;
}

static void read_after_layers(const rd *d, const et_graph *g, const GArray *a, int lo, int q, const char *where);

/* First stage: the layer's forward (and the embedding before it) from the
 * first micro-batch's forward, the layer's backward (and what follows)
 * from the operations after the last receive. */
static gboolean read_first_stage(const rd *d, GError **error)
{
  et_model *m = d->m;
  const et_graph *g = d->w->ranks[0];
  GArray *a = rank_ops(g, d->l);
  int ls = m->layers_per_stage, send = find_type(g, a, 0, ET_NODE_COMM_SEND);
  int e = 0, p = 0;
  if (send < 0 || !find_layers(g, a, 0, send, ls, TRUE, m->how, &e, &p)) {
    g_array_free(a, TRUE);
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: rank 0's first forward (%d operations before its first send) does not hold %d identical "
                "layers (num_layers %d / pp %d from %s); is num_layers right?", d->w->source, send, ls,
                d->c->layers, d->c->pp, d->c->source);
    return FALSE;
  }
  take(d, g, a, e, p, ls, &m->layer_fwd);
  if (e > 0)
    take(d, g, a, 0, e, 1, &m->embed_fwd);
  g_string_append_printf(m->how, "model: layer forward: %d operations repeating %d times on rank 0 before its first "
                         "send (the card's num_layers %d / pp %d%s), %d before them (embedding), %d after (the next "
                         "micro-batch's, started early)\n", p, ls, d->c->layers, d->c->pp,
                         d->c->sched == ET_SCHED_INTERLEAVED ? " / vpp: one chunk" : "", e, send - e - p * ls);
  int recv = find_last_type(g, a, ET_NODE_COMM_RECV);
  int n = (int)a->len - recv - 1;
  int eb = 0, q = 0;
  if (recv < 0 || !best_period(g, a, recv + 1, (int)a->len, ls, FALSE, &eb, &q) || eb != 0) {
    g_array_free(a, TRUE);
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: rank 0's last backward (%d operations after its last receive) does not start with %d identical "
                "layers", d->w->source, n, ls);
    return FALSE;
  }
  take(d, g, a, recv + 1, q, ls, &m->layer_bwd);
  int next = et_node_comm(g, g_array_index(a, gop, send).node)->dst;
  et_model_card_tp_queue(m, d->c, et_model_read_tp_queue(m, g, d->l, d->c, next));
  read_after_layers(d, g, a, recv + 1 + q * ls, q, "after its last receive");
  g_array_free(a, TRUE);
  return TRUE;
}

/* After the last backward's layers (ops[lo ..]): kernels the rank runs
 * once per micro-batch are the embedding's backward, the rest the step's
 * tail.  q: the layer backward's length (for the description). */
static void read_after_layers(const rd *d, const et_graph *g, const GArray *a, int lo, int q, const char *where)
{
  et_model *m = d->m;
  int ls = m->layers_per_stage, rest = (int)a->len - lo;
  GHashTable *count = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint i = 0; i < a->len; i++) {
    const char *nm = et_node_name(g, g_array_index(a, gop, i).node);
    g_hash_table_insert(count, (gpointer)nm, GINT_TO_POINTER(GPOINTER_TO_INT(g_hash_table_lookup(count, nm)) + 1));
  }
  /* A TP collective right before such a kernel belongs to it (under
   * sequence parallelism, the all-gather of the gradient of the
   * embedding's reduce-scatter). */
  int n_emb = 0;
#define PER_MB(k) (lo + (k) < (int)a->len && op_type(g, &g_array_index(a, gop, lo + (k))) == ET_NODE_COMP && \
                   GPOINTER_TO_INT(g_hash_table_lookup(count, et_node_name(g, g_array_index(a, gop, lo + (k)).node))) \
                     >= m->mb)
  while (n_emb < rest &&
         (PER_MB(n_emb) || (et_model_tp_coll(g, d->l, g_array_index(a, gop, lo + n_emb).node) && PER_MB(n_emb + 1))))
    n_emb++;
#undef PER_MB
  g_hash_table_destroy(count);
  if (n_emb > 0)
    take(d, g, a, lo, n_emb, 1, &m->embed_bwd);
  if (rest > n_emb)
    take(d, g, a, lo + n_emb, rest - n_emb, 1, &m->tail);
  /* The gradient reductions: before the last layer backward's end or after. */
  sim_time_ps cut = lo > 0 ? g_array_index(a, gop, lo - 1).start : 0, first = -1;
  for (uint32_t i = 0; i < g->n_nodes; i++)
    if (et_model_dp_coll(g, d->l, i) && (g->nodes[i].flags & ET_FLAG_HAS_START) && (first < 0 || g->nodes[i].start_ps < first))
      first = g->nodes[i].start_ps;
  m->dp_after = first < 0 ? d->c->grads_after == 1 : first >= cut;
  g_string_append_printf(m->how, "model: data-parallel gradient reductions: %s\n",
                         first < 0 ? (m->dp_after ? "none traced; the card's overlap_grad_reduce false: issued "
                                                    "after the backward"
                                                  : "none traced; Megatron's overlap with the last backward assumed")
                         : m->dp_after ? "issued after the last backward's layers (none overlaps them)"
                                       : "overlapping the last backward's layers");
  for (int i = 0; i < m->tail.n; i++)
    if (m->tail.ops[i].cls == ET_KC_ELEM_SHARD || m->tail.ops[i].cls == ET_KC_ELEM_REPL)
      m->optimizer_ps += m->tail.ops[i].dur_ps;
  g_string_append_printf(m->how, "model: layer backward: %d operations repeating %d times on rank 0 %s, then %d "
                         "per micro-batch (embedding backward) and %d once per step (optimizer: %.3f us for %.0f "
                         "parameters on rank 0)\n", q, ls, where, n_emb, rest - n_emb, (double)m->optimizer_ps / 1e6,
                         m->rank0_params);
}

/* Splits m->head at its first kernel named like a backward one (bwd,
 * backward, grad): what follows is the head's backward.  O(head). */
static void split_head(et_model *m)
{
  int at = -1;
  for (int i = 0; i < m->head.n && at < 0; i++) {
    char *low = g_ascii_strdown(m->head.ops[i].name, -1);
    if (strstr(low, "bwd") || strstr(low, "backward") || strstr(low, "grad"))
      at = i;
    g_free(low);
  }
  if (at <= 0)
    return;
  m->head_bwd.n = m->head.n - at;
  m->head_bwd.ops = g_new0(et_mop, m->head_bwd.n);
  memcpy(m->head_bwd.ops, m->head.ops + at, sizeof(et_mop) * (size_t)m->head_bwd.n);
  m->head.n = at;
}

/* Whether ops[at ..] hold reps copies of the pattern q (by name). */
static gboolean matches(const et_graph *g, const GArray *a, int at, const et_mseq *q, int reps)
{
  if (at < 0 || at + q->n * reps > (int)a->len)
    return FALSE;
  for (int i = 0; i < q->n * reps; i++)
    if (!et_model_name_eq(et_node_name(g, g_array_index(a, gop, at + i).node), q->ops[i % q->n].name))
      return FALSE;
  return TRUE;
}

/* Last stage: its operations without sends and receives (which interleave
 * with the micro-batches' kernels in time); the last run of the layers'
 * forward, then the head, then the layers' backward. */
static gboolean read_last_stage(const rd *d, int rank, GError **error)
{
  et_model *m = d->m;
  const et_graph *g = d->w->ranks[rank];
  GArray *all = rank_ops(g, d->l), *a = g_array_new(FALSE, FALSE, sizeof(gop));
  for (guint i = 0; i < all->len; i++) {
    et_node_type t = op_type(g, &g_array_index(all, gop, i));
    if (t != ET_NODE_COMM_SEND && t != ET_NODE_COMM_RECV)
      g_array_append_val(a, g_array_index(all, gop, i));
  }
  g_array_free(all, TRUE);
  int ls = m->layers_per_stage, fw = m->layer_fwd.n * ls, at = -1, end = -1;
  for (int i = (int)a->len - fw; i >= 0 && at < 0; i--)
    if (matches(g, a, i, &m->layer_fwd, ls))
      at = i;
  for (int k = at < 0 ? (int)a->len : at + fw; k < (int)a->len && end < 0; k++)
    if (matches(g, a, k, &m->layer_bwd, ls))
      end = k;
  if (at < 0 || end < 0) {
    g_array_free(a, TRUE);
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: the last stage (rank %d) does not run the first stage's %d layers forward then backward (a "
                "different layer pattern per stage is not supported)", d->w->source, rank, ls);
    return FALSE;
  }
  int nh = end - at - fw;
  if (nh > 0)
    take(d, g, a, at + fw, nh, 1, &m->head);
  split_head(m);
  g_string_append_printf(m->how, "model: head: %d operations on the last stage (rank %d) between its last layers' "
                         "forward and their backward (LM head, loss and their backward): %d replayed after the "
                         "forward, %d (from the first named bwd/backward/grad) before the backward\n", nh, rank,
                         m->head.n, m->head_bwd.n);
  g_array_free(a, TRUE);
  return TRUE;
}

/* One stage: the backward's run found at ops[at ..] (period q) may start
 * a few operations early, taking the head's last ones (its final norm's
 * gradient looks like a layer's).  The backward runs the forward in
 * reverse, so its layer ends with the gradient of the forward layer's
 * first kernel: the first shift s < q whose run still repeats and whose
 * period ends with a kernel of that class (0 when none).  O(q^2 ls). */
static int backward_shift(const rd *d, const et_graph *g, const GArray *a, int at, int q)
{
  int ls = d->m->layers_per_stage;
  if (d->m->layer_fwd.n == 0)
    return 0;
  et_kclass want = d->m->layer_fwd.ops[0].cls;
  for (int s = 0; s < q && at + s + q * ls <= (int)a->len && periodic(g, a, at + s, q, ls); s++) {
    const gop *o = &g_array_index(a, gop, at + s + q - 1);
    if (op_type(g, o) == ET_NODE_COMP && class_of_name(et_node_name(g, o->node)) == want)
      return s;
  }
  return 0;
}

/* One stage (pp 1): on rank 0, the first micro-batch's forward layers
 * (and the embedding before them) from the start, then the head and the
 * backward layers (the next repeating run), the embedding's backward and
 * the tail after the step's last run of backward layers.  The search
 * range is one micro-batch's share of the operations. */
static gboolean read_single_stage(const rd *d, GError **error)
{
  et_model *m = d->m;
  const et_graph *g = d->w->ranks[0];
  GArray *a = rank_ops(g, d->l);
  int ls = m->layers_per_stage, per_mb = (int)a->len / MAX(m->mb, 1);
  int e = 0, p = 0, h = 0, q = 0, fend = 0, last = -1;
  gboolean ok = find_layers(g, a, 0, per_mb, ls, FALSE, m->how, &e, &p);
  if (ok) {
    fend = e + p * ls;
    ok = best_period(g, a, fend, per_mb, ls, FALSE, &h, &q);
  }
  if (!ok) {
    g_array_free(a, TRUE);
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: rank 0's first micro-batch (%d operations: the step's / %d micro-batches) does not hold %d "
                "identical layers forward and then backward (num_layers %d from %s); is num_layers right?",
                d->w->source, per_mb, m->mb, ls, d->c->layers, d->c->source);
    return FALSE;
  }
  take(d, g, a, e, p, ls, &m->layer_fwd);
  if (e > 0)
    take(d, g, a, 0, e, 1, &m->embed_fwd);
  h += backward_shift(d, g, a, fend + h, q);
  if (h > 0)
    take(d, g, a, fend, h, 1, &m->head);
  split_head(m);
  take(d, g, a, fend + h, q, ls, &m->layer_bwd);
  for (int k = (int)a->len - q * ls; k >= 0 && last < 0; k--)
    if (matches(g, a, k, &m->layer_bwd, ls))
      last = k;
  g_string_append_printf(m->how, "model: one pipeline stage (rank 0 sends nothing; card pp 1): layer forward: %d "
                         "operations repeating %d times from the step's start, %d before them (embedding); head: %d "
                         "operations between the forward and backward layers (LM head, loss and their backward)\n",
                         p, ls, e, h);
  read_after_layers(d, g, a, last + q * ls, q, "(the step's last run)");
  g_array_free(a, TRUE);
  return TRUE;
}

/* MoE: the kernels between the first two EP all-to-alls of a sequence
 * (dispatch and combine, or their gradients) are the experts'; FALSE when
 * the sequence has fewer than two. */
static gboolean mark_experts(et_mseq *q)
{
  int first = -1, second = -1;
  for (int i = 0; i < q->n && second < 0; i++)
    if (q->ops[i].cls == ET_KC_EP_COLL) {
      if (first < 0)
        first = i;
      else
        second = i;
    }
  for (int i = first + 1; second > 0 && i < second; i++)
    q->ops[i].expert = q->ops[i].cls != ET_KC_TP_COLL && q->ops[i].cls != ET_KC_OTHER_COLL;
  return second > 0;
}

/* CP: the first run of cp consecutive attention ops becomes one op
 * standing for the ring (ring = cp, their mean duration); FALSE when
 * there is no such run.  O(n). */
static gboolean mark_ring(et_mseq *q, int cp)
{
  for (int i = 0; i + cp <= q->n; i++) {
    int k = 0;
    while (k < cp && q->ops[i + k].cls == ET_KC_ATTN)
      k++;
    if (k < cp)
      continue;
    sim_time_ps sum = 0;
    for (k = 0; k < cp; k++)
      sum += q->ops[i + k].dur_ps;
    q->ops[i].dur_ps = sum / cp;
    q->ops[i].ring = cp;
    return TRUE;
  }
  return FALSE;
}

static void describe_layer(et_model *m)
{
  int n[ET_KC_EP_COLL + 1] = {0};
  sim_time_ps t[ET_KC_EP_COLL + 1] = {0};
  for (int s = 0; s < 2; s++) {
    const et_mseq *q = s ? &m->layer_bwd : &m->layer_fwd;
    for (int i = 0; i < q->n; i++) {
      n[q->ops[i].cls]++;
      t[q->ops[i].cls] += q->ops[i].dur_ps;
    }
  }
  g_string_append(m->how, "model: one layer (forward + backward):");
  for (int k = 0; k <= ET_KC_EP_COLL; k++)
    if (n[k])
      g_string_append_printf(m->how, " %d %s%s", n[k], et_kclass_name(k), k >= ET_KC_TP_COLL ? "" : "");
  g_string_append_printf(m->how, "; compute %.3f us (gemm %.3f, attention %.3f, elementwise %.3f)\n",
                         (double)(t[0] + t[1] + t[2] + t[3]) / 1e6, (double)t[0] / 1e6, (double)t[1] / 1e6,
                         (double)(t[2] + t[3]) / 1e6);
}

gboolean et_model_has_attention(const et_model *m)
{
  for (int i = 0; i < m->layer_fwd.n; i++)
    if (m->layer_fwd.ops[i].cls == ET_KC_ATTN)
      return TRUE;
  return FALSE;
}

gboolean et_model_read(const et_workload *w, const et_layout *l, const et_model_card *c, et_model *out,
                       GError **error)
{
  memset(out, 0, sizeof *out);
  if (c->missing) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: reading the model needs the card's %s", c->source ? c->source : "(no --card)", c->missing);
    return FALSE;
  }
  /* Interleaved: the reader sees one chunk of layers between transfers. */
  int chunks = c->sched == ET_SCHED_INTERLEAVED ? c->vpp : 1;
  if (c->sched == ET_SCHED_INTERLEAVED && (c->vpp < 2 || c->pp < 2)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: the traced job runs interleaved 1F1B (pipeline_schedule), which needs pp >= 2 and the card's vpp "
                "(layer chunks per rank) >= 2; the card says pp %d, vpp %d", c->source, c->pp, c->vpp);
    return FALSE;
  }
  if (c->layers % (c->pp * chunks) != 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: num_layers %d is not a multiple of pp %d x vpp %d",
                c->source, c->layers, c->pp, chunks);
    return FALSE;
  }
  out->how = g_string_new(NULL);
  out->tp = c->tp;
  out->pp = c->pp;
  out->mb = c->mb;
  out->layers_per_stage = c->layers / c->pp / chunks;
  out->tokens_per_mb = (double)c->global_batch / c->dp / c->mb * c->seq / MAX(c->cp, 1);
  out->rank0_params = et_model_rank_params(c, c->tp, c->pp, c->ep, 0);
  rd d = {w, l, c, out};
  int last = 0, stages = 0;
  if (!find_stages(&d, &last, &stages, error) ||
      (stages == 1 ? !read_single_stage(&d, error)
                   : !read_first_stage(&d, error) || !read_last_stage(&d, last, error))) {
    et_model_clear(out);
    return FALSE;
  }
  if (stages == 1)
    et_model_card_tp_queue(out, c, 0);
  if (c->experts > 0 && !(mark_experts(&out->layer_fwd) && mark_experts(&out->layer_bwd))) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED,
                "%s: the card says %d experts, but a layer's forward or backward has no pair of all-to-alls in an "
                "expert-parallel group (dispatch and combine); a trace with ep >= 2 and groups named ep/expert/moe "
                "(or the card's ep) is needed to find the experts' kernels", w->source, c->experts);
    et_model_clear(out);
    return FALSE;
  }
  if (c->experts > 0)
    g_string_append_printf(out->how, "model: MoE: %d experts, top-%d, expert ffn %d (card), ep %d traced; the kernels "
                           "between a layer's two EP all-to-alls (dispatch and combine, and their gradients) are "
                           "the local experts' work\n", c->experts, c->top_k, c->moe_ffn, c->ep);
  g_string_prepend(out->how, "");
  g_string_append_printf(out->how, "model: %d pipeline stages found by following rank 0's sends (last stage: rank "
                         "%d), as the card's pp; %d micro-batches of %.0f tokens (card)\n", stages, last, c->mb,
                         out->tokens_per_mb);
  gboolean roles = et_model_gemm_roles(out, c);
  if (roles)
    g_string_append(out->how, "model: GEMM roles: 4 forward and 8 backward GEMMs per layer = Megatron's QKV, "
                              "projection, FC1, FC2 (shapes from the card's hidden and ffn sizes)\n");
  else
    g_string_append(out->how, "model: GEMM roles unknown (not 4 forward / 8 backward per layer): GEMMs scale by "
                              "their FLOPs alone\n");
  if (c->cp > 1 && c->cp_comm) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED,
                "%s: the card says cp %d with cp_comm_type %s; only Megatron's ring attention (cp_comm_type p2p) is "
                "read", w->source, c->cp, c->cp_comm);
    et_model_clear(out);
    return FALSE;
  }
  if (c->cp > 1 && !(mark_ring(&out->layer_fwd, c->cp) && mark_ring(&out->layer_bwd, c->cp))) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED,
                "%s: the card says cp %d, but a layer's forward or backward does not have %d consecutive attention "
                "kernels (ring attention's steps); only Megatron's ring (cp_comm_type p2p) is read", w->source, c->cp,
                c->cp);
    et_model_clear(out);
    return FALSE;
  }
  if (c->cp > 1)
    g_string_append_printf(out->how, "model: context parallelism: cp %d traced (card); a layer's %d consecutive "
                           "attention kernels are ring attention's steps (their sends and receives in the CP group "
                           "left out), %.0f tokens per rank and micro-batch\n", c->cp, c->cp, out->tokens_per_mb);
  describe_layer(out);
  et_model_fit_floor(out, c, roles);
  return TRUE;
}
