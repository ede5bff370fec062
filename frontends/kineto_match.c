/* kineto_match.c: cross-rank matching of collectives (the per-rank graphs
 * are kineto_graph.c).
 *
 * Matching is per communicator (process group name + member set): every
 * member's instances are ordered by `Seq` when every instance carries one,
 * else by GPU start time, and the k-th instances are paired.  A tuple is
 * verified for kind, dtype and size; instances that cannot be paired are
 * dropped on the ranks that have them (replayed as compute at their
 * measured duration) and reported with the reason.  Cost O(C log C) for C
 * communication ops in total.
 */
#include "config.h"

#include "frontends/kineto_graph.h"
#include "frontends/kineto_threads.h"

#include <stdlib.h>
#include <string.h>

void kt_group_free(gpointer p)
{
  kt_group *g = p;
  g_free(g->key);
  g_free(g->pg_name);
  g_free(g->desc);
  g_free(g->name_or_key);
  g_free(g->ranks);
  g_free(g);
}

typedef struct {
  int64_t seq;
  sim_time_ps start;
  uint32_t comm;
} inst;

static int cmp_inst_time(const void *a, const void *b)
{
  const inst *x = a, *y = b;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return x->comm < y->comm ? -1 : x->comm > y->comm;
}

static int cmp_inst_seq(const void *a, const void *b)
{
  const inst *x = a, *y = b;
  if (x->seq != y->seq)
    return x->seq < y->seq ? -1 : 1;
  return cmp_inst_time(a, b);
}

static const kt_comm *comm_of(const kt_rank *r, uint32_t i) { return &g_array_index(r->comms, kt_comm, i); }

static const char *coll_label(const kt_comm *c)
{
  return c->p2p == 1 ? "send" : c->p2p == 2 ? "recv" : et_coll_short_name(c->coll);
}

/* Marks communication ci of a rank (its verdicts rm) dropped, once. */
static void drop(kt_rank_match *rm, uint32_t ci, const char *reason, char *detail, kt_match_stats *st)
{
  kt_comm_match *c = &rm->comms[ci];
  if (c->status == KT_COMM_DROPPED) {
    g_free(detail);
    return;
  }
  c->status = KT_COMM_DROPPED;
  c->drop_reason = reason;
  g_free(c->drop_detail);
  c->drop_detail = detail;
  st->dropped++;
}

/* Instances of group `key` on rank r, in matching order. */
static GArray *instances(const kt_rank *r, const char *key, gboolean *all_seq)
{
  GArray *a = g_array_new(FALSE, FALSE, sizeof(inst));
  for (guint i = 0; i < r->comms->len; i++) {
    const kt_comm *c = comm_of(r, i);
    if (strcmp(c->group_key, key) || c->p2p)
      continue;
    inst x = { c->seq, g_array_index(r->ops, kt_op, c->op).start, i };
    if (c->seq == KT_ABSENT)
      *all_seq = FALSE;
    g_array_append_val(a, x);
  }
  return a;
}

/* Clock check for one matched collective: each member's kernel end on a
 * common scale (its own window start and trace origin, the first member's
 * origin as zero; origins differ by whole microseconds), the median of
 * them, and each member's deviation from it appended to its clock_dev in
 * out.
 * Collectives end together on every member (the last byte arrives), so
 * persistent deviations are clock offsets.  O(m log m) for m members. */
static void clock_sample(const kt_rank *const *ranks, kt_rank_match *out, const kt_group *g, const uint32_t *comm_idx)
{
  int m = g->n_ranks;
  int64_t *end = g_new(int64_t, m), *sorted = g_new(int64_t, m);
  const kt_trace *t0 = ranks[g->ranks[0]]->trace;
  for (int i = 0; i < m; i++) {
    const kt_rank *r = ranks[g->ranks[i]];
    const kt_op *op = &g_array_index(r->ops, kt_op, comm_of(r, comm_idx[i])->op);
    /* Origins more than 26 days apart (2^61 ps) are not compared, which
     * keeps every sum and difference below within int64. */
    const int64_t lim_us = (INT64_C(1) << 61) / SIM_PS_PER_US;
    int64_t d_us;
    if (__builtin_sub_overflow(r->trace->origin_us, t0->origin_us, &d_us) || d_us > lim_us || d_us < -lim_us) {
      g_free(end);
      g_free(sorted);
      return;
    }
    end[i] = sorted[i] = d_us * SIM_PS_PER_US + r->window_abs + op->end;
  }
  qsort(sorted, (size_t)m, sizeof(int64_t), kt_cmp_i64);
  int64_t med = sorted[m / 2];
  for (int i = 0; i < m; i++) {
    kt_rank_match *rm = &out[g->ranks[i]];
    if (!rm->clock_dev)
      rm->clock_dev = g_array_new(FALSE, FALSE, sizeof(int64_t));
    int64_t d = end[i] - med;
    g_array_append_val(rm->clock_dev, d);
  }
  g_free(end);
  g_free(sorted);
}

/* The k-th tuple of a group's matching: member i's instance is
 * L[i][pos[i]]. */
typedef struct {
  const kt_rank *const *ranks;
  kt_rank_match *out;
  kt_group *g;
  uint32_t gi;
  int m;
  GArray **L;
  const guint *pos;
} tuple_ctx;

/* Member i's communication index in the tuple, and the communication. */
static uint32_t tuple_idx(const tuple_ctx *x, int i) { return g_array_index(x->L[i], inst, x->pos[i]).comm; }
static const kt_comm *tuple_comm(const tuple_ctx *x, int i) { return comm_of(x->ranks[x->g->ranks[i]], tuple_idx(x, i)); }

/* Kinds differ across the members: every member's instance is dropped.
 * Returns the message (the caller frees it). */
static char *drop_kinds(const tuple_ctx *x, guint k, GPtrArray *warnings, kt_match_stats *st)
{
  st->mismatches++;
  GString *d = g_string_new("");
  for (int i = 0; i < x->m; i++)
    g_string_append_printf(d, "%srank %d %s", i ? ", " : "", x->g->ranks[i], coll_label(tuple_comm(x, i)));
  char *msg = g_strdup_printf("instance #%u of group %s: kinds differ (%s)", k, x->g->name_or_key, d->str);
  g_string_free(d, TRUE);
  g_ptr_array_add(warnings, g_strdup_printf("dropped: %s (replayed as compute)", msg));
  for (int i = 0; i < x->m; i++)
    drop(&x->out[x->g->ranks[i]], tuple_idx(x, i), "kind mismatch across ranks", g_strdup(msg), st);
  return msg;
}

/* The tuple is matched: every member's verdict, the group's totals and a
 * clock sample.  unsized: a member without a size (every member replays
 * its measured kernel), or -1. */
static void record_tuple(const tuple_ctx *x, int unsized, kt_match_stats *st)
{
  uint32_t *members = g_new(uint32_t, x->m);
  for (int i = 0; i < x->m; i++) {
    members[i] = tuple_idx(x, i);
    kt_comm_match *mc = &x->out[x->g->ranks[i]].comms[members[i]];
    mc->status = KT_COMM_MATCHED;
    mc->group = x->gi;
    mc->replay = unsized >= 0;
    x->g->bytes += tuple_comm(x, i)->bytes;
  }
  if (unsized >= 0)
    st->replayed++;
  if (x->m > 1)
    clock_sample(x->ranks, x->out, x->g, members);
  g_free(members);
  x->g->n_ops++;
  st->matched++;
}

/* Verifies the k-th tuple present on every member for kind, dtype and
 * size, then drops it (kinds differ) or records it as matched (with a
 * warning when sizes or dtypes differ, or an all-to-all is imbalanced).
 * FALSE (error set) under strict on any mismatch or a member without a
 * size. */
static gboolean match_tuple(const tuple_ctx *x, guint k, gboolean strict, GPtrArray *warnings, kt_match_stats *st,
                            GError **error)
{
  const kt_group *g = x->g;
  int m = x->m;
  const kt_comm *c0 = tuple_comm(x, 0);
  gboolean type_ok = TRUE, size_ok = TRUE, dtype_ok = TRUE;
  uint64_t bmin = c0->bytes, bmax = c0->bytes;
  int unsized = c0->unsized ? g->ranks[0] : -1; /* a member without a size, or -1 */
  for (int i = 1; i < m; i++) {
    const kt_comm *c = tuple_comm(x, i);
    if (c->unsized && unsized < 0)
      unsized = g->ranks[i];
    gboolean a2a0 = c0->coll == ET_COLL_ALL_TO_ALL || c0->coll == ET_COLL_ALL_TO_ALLV;
    gboolean a2a = c->coll == ET_COLL_ALL_TO_ALL || c->coll == ET_COLL_ALL_TO_ALLV;
    if (!(c->coll == c0->coll || (a2a && a2a0)))
      type_ok = FALSE;
    if ((c->dtype == NULL) != (c0->dtype == NULL) || (c->dtype && c0->dtype && strcmp(c->dtype, c0->dtype) &&
                                                      c->dsize != c0->dsize))
      dtype_ok = FALSE;
    bmin = MIN(bmin, c->bytes);
    bmax = MAX(bmax, c->bytes);
  }
  gboolean a2a = c0->coll == ET_COLL_ALL_TO_ALL || c0->coll == ET_COLL_ALL_TO_ALLV;
  if (bmin != bmax && !a2a && unsized < 0)
    size_ok = FALSE;
  if (type_ok && unsized >= 0 && strict) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "--strict: %s #%u of group %s has no size on rank %d (no In/Out msg nelems with a dtype and no "
                "Input Dims on a linked CPU op), so it cannot be simulated; drop --strict to replay it at its "
                "measured duration", coll_label(c0), k, g->name_or_key, unsized);
    return FALSE;
  }
  if (!type_ok) {
    char *msg = drop_kinds(x, k, warnings, st);
    if (strict)
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "--strict: %s", msg);
    g_free(msg);
    return !strict;
  }
  if (!size_ok || !dtype_ok) {
    st->mismatches++;
    char *msg = g_strdup_printf("instance #%u (%s) of group %s: %s differ across ranks (%" G_GUINT64_FORMAT
                                "..%" G_GUINT64_FORMAT " B); per-rank sizes kept", k, coll_label(c0),
                                g->name_or_key, !dtype_ok ? "dtypes" : "sizes", bmin, bmax);
    g_ptr_array_add(warnings, msg);
    if (strict) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "--strict: %s", msg);
      return FALSE;
    }
  } else if (a2a && bmin != bmax) {
    st->imbalanced_a2av++;
    GString *d = g_string_new("");
    for (int i = 0; i < m && i < 8; i++)
      g_string_append_printf(d, "%s%" G_GUINT64_FORMAT, i ? ", " : "", tuple_comm(x, i)->bytes);
    g_ptr_array_add(warnings, g_strdup_printf("imbalanced all_to_all(v) #%u of group %s: bytes per rank %s%s "
                                              "(per-rank sizes kept)", k, g->name_or_key, d->str,
                                              m > 8 ? ", ..." : ""));
    g_string_free(d, TRUE);
  }
  record_tuple(x, unsized, st);
  return TRUE;
}

/* Matches the collectives (not send/recv) of group g, index gi: every
 * member's instances in Seq order when all carry one, else in start
 * order, the k-th of each member forming the k-th tuple; an instance
 * present on some members only is dropped where it is.  FALSE (error set)
 * under strict on any mismatch. */
static gboolean match_group(const kt_rank *const *ranks, kt_rank_match *out, int n_ranks, kt_group *g, uint32_t gi,
                            gboolean strict, GPtrArray *warnings, kt_match_stats *st, GError **error)
{
  int m = g->n_ranks > 0 ? g->n_ranks : 0;
  GArray **L = g_new0(GArray *, (size_t)m + 1);
  gboolean all_seq = TRUE;
  for (int i = 0; i < m; i++) {
    int rk = g->ranks[i];
    L[i] = rk >= 0 && rk < n_ranks && ranks[rk] ? instances(ranks[rk], g->key, &all_seq)
                                                 : g_array_new(FALSE, FALSE, sizeof(inst));
  }
  for (int i = 0; i < m; i++)
    g_array_sort(L[i], all_seq ? cmp_inst_seq : cmp_inst_time);
  guint maxlen = 0;
  for (int i = 0; i < m; i++)
    maxlen = MAX(maxlen, L[i]->len);
  guint *pos = g_new0(guint, (size_t)m + 1);
  gboolean ok = TRUE;
  for (guint k = 0; k < maxlen; k++) {
    /* With Seq: the tuple is the smallest pending Seq; members lacking it drop theirs. */
    int64_t want = KT_ABSENT;
    if (all_seq) {
      for (int i = 0; i < m; i++)
        if (pos[i] < L[i]->len) {
          int64_t s = g_array_index(L[i], inst, pos[i]).seq;
          if (want == KT_ABSENT || s < want)
            want = s;
        }
      if (want == KT_ABSENT)
        break;
    }
    int have = 0;
    GString *who = g_string_new("");
    for (int i = 0; i < m; i++) {
      gboolean h = pos[i] < L[i]->len && (!all_seq || g_array_index(L[i], inst, pos[i]).seq == want);
      if (h) {
        have++;
        g_string_append_printf(who, "%s%d", who->len ? ", " : "", g->ranks[i]);
      }
    }
    if (have == 0) {
      g_string_free(who, TRUE);
      break;
    }
    if (have < m) {
      /* Present on some members only. */
      for (int i = 0; i < m; i++) {
        gboolean h = pos[i] < L[i]->len && (!all_seq || g_array_index(L[i], inst, pos[i]).seq == want);
        if (!h)
          continue;
        const kt_comm *c = comm_of(ranks[g->ranks[i]], g_array_index(L[i], inst, pos[i]).comm);
        char *d = g_strdup_printf("%s #%u of group %s present on rank%s %s only", coll_label(c), k, g->name_or_key,
                                  have > 1 ? "s" : "", who->str);
        g_ptr_array_add(warnings, g_strdup_printf("dropped: %s (replayed as compute)", d));
        drop(&out[g->ranks[i]], g_array_index(L[i], inst, pos[i]).comm, "present on a subset of the group", d, st);
        pos[i]++;
      }
      g_string_free(who, TRUE);
      if (strict) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "--strict: %s",
                    (char *)g_ptr_array_index(warnings, warnings->len - 1));
        ok = FALSE;
        break;
      }
      continue;
    }
    g_string_free(who, TRUE);
    tuple_ctx x = { ranks, out, g, gi, m, L, pos };
    if (!match_tuple(&x, k, strict, warnings, st, error)) {
      ok = FALSE;
      break;
    }
    for (int i = 0; i < m; i++)
      pos[i]++;
  }
  for (int i = 0; i < m; i++)
    g_array_free(L[i], TRUE);
  g_free(L);
  g_free(pos);
  return ok;
}

/* The point-to-point ops of group `key` on rank r, in the order the rank
 * issued them (its launch calls; without one, the GPU start).  NCCL pairs
 * a peer's sends and receives in issue order whatever streams they run
 * on: a receive posted early on a stream of its own starts before an
 * earlier-issued one that waits behind its stream, and ordering by start
 * would pair it with the wrong send.  O(n log n). */
static GArray *p2p_in_issue_order(const kt_rank *r, const char *key)
{
  GArray *a = g_array_new(FALSE, FALSE, sizeof(inst));
  for (guint i = 0; i < r->comms->len; i++) {
    const kt_comm *c = comm_of(r, i);
    if (!c->p2p || strcmp(c->group_key, key))
      continue;
    inst x = { c->seq, kt_op_issued(r, &g_array_index(r->ops, kt_op, c->op)), i };
    g_array_append_val(a, x);
  }
  if (a->len > 1) /* qsort of an empty GArray would pass its NULL data */
    qsort(a->data, a->len, sizeof(inst), cmp_inst_time);
  return a;
}

static void free_array(gpointer p) { g_array_free(p, TRUE); }

/* Rank b's point-to-point ops of group g in issue order, built once per
 * rank and group (lists: rank -> GArray of inst). */
static GArray *p2p_list(GHashTable *lists, const kt_rank *const *ranks, int b, const kt_group *g)
{
  GArray *l = g_hash_table_lookup(lists, GINT_TO_POINTER(b));
  if (!l) {
    l = p2p_in_issue_order(ranks[b], g->key);
    g_hash_table_insert(lists, GINT_TO_POINTER(b), l);
  }
  return l;
}

/* The receive on rank b from rank a that pairs with a's next send: the
 * first unmatched one in b's issue order from the (b, a) cursor on, which
 * moves past it (cursor: b * world + a -> next position + 1).  Amortised
 * O(1) per receive over the group.  Returns its index in b's comms or
 * KT_NONE. */
static uint32_t next_recv(GHashTable *cursor, const GArray *lb, const kt_rank *rb, const kt_rank_match *mb, int a,
                          int b, int world)
{
  int64_t key = (int64_t)b * world + a;
  guint pos = GPOINTER_TO_UINT(g_hash_table_lookup(cursor, &key));
  pos = pos ? pos - 1 : 0;
  for (; pos < lb->len; pos++) {
    uint32_t j = g_array_index(lb, inst, pos).comm;
    const kt_comm *x = comm_of(rb, j);
    if (x->p2p == 2 && x->peer == a && !mb->comms[j].status) {
      g_hash_table_insert(cursor, g_memdup2(&key, sizeof key), GUINT_TO_POINTER(pos + 2));
      return j;
    }
  }
  g_hash_table_insert(cursor, g_memdup2(&key, sizeof key), GUINT_TO_POINTER(pos + 1));
  return KT_NONE;
}

/* Marks the pair (send i on rank a, receive j on rank b) matched in group
 * gi, tagged with the send's index on a (unique among a's sends to b, so
 * the replay's (source, destination, tag) FIFO holds one pair). */
static void pair_p2p(const kt_rank *ra, kt_rank_match *out, int a, uint32_t i, const kt_rank *rb, int b, uint32_t j,
                     kt_group *g, uint32_t gi, guint k, GPtrArray *warnings, kt_match_stats *st)
{
  const kt_comm *s = comm_of(ra, i), *rv = comm_of(rb, j);
  kt_comm_match *sm = &out[a].comms[i], *rvm = &out[b].comms[j];
  sm->status = rvm->status = KT_COMM_MATCHED;
  sm->group = rvm->group = gi;
  sm->tag = rvm->tag = (int32_t)MIN(i, (uint32_t)INT32_MAX);
  sm->replay = rvm->replay = s->unsized || rv->unsized;
  st->replayed += sm->replay;
  g->n_ops++;
  g->bytes += s->bytes;
  st->matched++;
  if (s->bytes != rv->bytes) {
    st->mismatches++;
    g_ptr_array_add(warnings, g_strdup_printf("send #%u rank %d -> %d: %" G_GUINT64_FORMAT " B sent, %"
                                              G_GUINT64_FORMAT " B received", k, a, b, s->bytes, rv->bytes));
  }
}

/* Send/recv: pair the k-th send a->b with the k-th recv on b from a, both
 * in their ranks' issue order (p2p_in_issue_order).  O(P log P) for P
 * point-to-point ops of the group. */
static void match_p2p(const kt_rank *const *ranks, kt_rank_match *out, int n_ranks, kt_group *g, uint32_t gi,
                      GPtrArray *warnings, kt_match_stats *st)
{
  GHashTable *lists = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, free_array);
  GHashTable *cursor = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  for (int ri = 0; ri < g->n_ranks; ri++) {
    int a = g->ranks[ri];
    if (a < 0 || a >= n_ranks || !ranks[a])
      continue;
    const kt_rank *ra = ranks[a];
    const GArray *la = p2p_list(lists, ranks, a, g);
    guint k = 0;
    for (guint q = 0; q < la->len; q++) {
      uint32_t i = g_array_index(la, inst, q).comm;
      const kt_comm *s = comm_of(ra, i);
      if (s->p2p != 1 || out[a].comms[i].status)
        continue;
      int b = s->peer;
      const kt_rank *rb = b >= 0 && b < n_ranks ? ranks[b] : NULL;
      uint32_t j = rb ? next_recv(cursor, p2p_list(lists, ranks, b, g), rb, &out[b], a, b, n_ranks) : KT_NONE;
      if (j == KT_NONE) {
        char *d = g_strdup_printf("send #%u from rank %d to %s has no matching recv", k, a,
                                  b < 0 ? "an unknown peer" : "its peer");
        g_ptr_array_add(warnings, g_strdup_printf("dropped: %s (replayed as compute)", d));
        drop(&out[a], i, b < 0 ? "peer rank unknown" : "no matching recv", d, st);
      } else
        pair_p2p(ra, out, a, i, rb, b, j, g, gi, k, warnings, st);
      k++;
    }
  }
  g_hash_table_destroy(cursor);
  g_hash_table_destroy(lists);
  for (int ri = 0; ri < g->n_ranks; ri++) {
    int a = g->ranks[ri];
    if (a < 0 || a >= n_ranks || !ranks[a])
      continue;
    for (guint i = 0; i < ranks[a]->comms->len; i++) {
      const kt_comm *x = comm_of(ranks[a], i);
      if (x->p2p == 2 && !out[a].comms[i].status && !strcmp(x->group_key, g->key)) {
        char *d = g_strdup_printf("recv on rank %d has no matching send", a);
        g_ptr_array_add(warnings, g_strdup_printf("dropped: %s (replayed as compute)", d));
        drop(&out[a], i, x->peer < 0 ? "peer rank unknown" : "no matching send", d, st);
      }
    }
  }
}

void kt_match_free(kt_match *m)
{
  if (!m)
    return;
  for (int rk = 0; rk < m->n_ranks; rk++) {
    kt_rank_match *rm = &m->ranks[rk];
    for (guint i = 0; i < rm->n_comms; i++)
      g_free(rm->comms[i].drop_detail);
    g_free(rm->comms);
    if (rm->clock_dev)
      g_array_free(rm->clock_dev, TRUE);
  }
  g_free(m->ranks);
  g_ptr_array_free(m->groups, TRUE);
  g_free(m);
}

/* The groups of every rank's communication, in first-seen order over ranks
 * and their ops.  O(C) hash lookups for C communication ops. */
static void collect_groups(const kt_rank *const *ranks, int n_ranks, GPtrArray *groups)
{
  GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
  for (int rk = 0; rk < n_ranks; rk++) {
    const kt_rank *r = ranks[rk];
    if (!r)
      continue;
    for (guint i = 0; i < r->comms->len; i++) {
      const kt_comm *c = comm_of(r, i);
      if (g_hash_table_contains(seen, c->group_key))
        continue;
      kt_group *g = g_new0(kt_group, 1);
      g->key = g_strdup(c->group_key);
      g->pg_name = g_strdup(c->pg_name);
      g->desc = g_strdup(c->pg_desc);
      g->n_ranks = c->n_ranks;
      g->ranks = g_memdup2(c->ranks, sizeof(int) * (gsize)c->n_ranks);
      g->name_or_key = g_strdup_printf("%u (pg \"%s\", ranks %s)", groups->len + 1, c->pg_name ? c->pg_name : "",
                                       strchr(c->group_key, '|') + 1);
      g_ptr_array_add(groups, g);
      g_hash_table_insert(seen, g->key, g);
    }
  }
  g_hash_table_destroy(seen);
}

kt_match *kt_match_ranks(const kt_rank *const *ranks, int n_ranks, gboolean strict, GPtrArray *warnings,
                         GError **error)
{
  kt_match *m = g_new0(kt_match, 1);
  m->n_ranks = n_ranks;
  m->ranks = g_new0(kt_rank_match, n_ranks > 0 ? n_ranks : 1);
  m->groups = g_ptr_array_new_with_free_func(kt_group_free);
  for (int rk = 0; rk < n_ranks; rk++)
    if (ranks[rk]) {
      m->ranks[rk].n_comms = ranks[rk]->comms->len;
      m->ranks[rk].comms = g_new0(kt_comm_match, ranks[rk]->comms->len ? ranks[rk]->comms->len : 1);
    }
  kt_match_stats *st = &m->stats;
  GPtrArray *groups = m->groups;
  collect_groups(ranks, n_ranks, groups);
  for (guint gi = 0; gi < groups->len; gi++) {
    kt_group *g = g_ptr_array_index(groups, gi);
    for (int i = 0; i < g->n_ranks; i++)
      if (g->ranks[i] < 0 || g->ranks[i] >= n_ranks) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                    "group %s lists rank %d, outside the world of %d ranks", g->name_or_key, g->ranks[i], n_ranks);
        kt_match_free(m);
        return NULL;
      }
    if (!match_group(ranks, m->ranks, n_ranks, g, gi, strict, warnings, st, error)) {
      kt_match_free(m);
      return NULL;
    }
    match_p2p(ranks, m->ranks, n_ranks, g, gi, warnings, st);
  }
  if (strict && st->dropped) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "--strict: %" G_GUINT64_FORMAT
                " communication instances could not be matched across ranks (first: %s)", st->dropped,
                warnings->len ? (char *)g_ptr_array_index(warnings, 0) : "?");
    kt_match_free(m);
    return NULL;
  }
  return m;
}
