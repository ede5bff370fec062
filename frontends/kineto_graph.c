/* kineto_graph.c: cross-rank matching of collectives and per-rank graph
 * construction.
 *
 * Matching is per communicator (process group name + member set): every
 * member's instances are ordered by `Seq` when every instance carries one,
 * else by GPU start time, and the k-th instances are paired.  A tuple is
 * verified for kind, dtype and size; instances that cannot be paired are
 * dropped on the ranks that have them (replayed as compute at their
 * measured duration) and reported with the reason.  Cost O(C log C) for C
 * communication ops in total.
 *
 * Graphs (kernels mode): one node per GPU op at its measured duration, in
 * per-stream chains; idle time on a stream becomes an ET_FLAG_DELAY node on
 * that stream (leading idle from the window start included); a trailing
 * delay closes the window; cross-stream edges come from synchronisation
 * (kineto_extract.c) and were only kept when the measured timeline agrees,
 * so measured compute/communication overlap is preserved.  Gap mode keeps
 * only the communications, chained in start order, with the time between
 * them as compute.  O(N) nodes and edges per rank.
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

/* Send/recv: pair the k-th send a->b with the k-th recv on b from a. */
static void match_p2p(const kt_rank *const *ranks, kt_rank_match *out, int n_ranks, kt_group *g, uint32_t gi,
                      GPtrArray *warnings, kt_match_stats *st)
{
  for (int ri = 0; ri < g->n_ranks; ri++) {
    int a = g->ranks[ri];
    if (a < 0 || a >= n_ranks || !ranks[a])
      continue;
    const kt_rank *ra = ranks[a];
    guint k = 0;
    for (guint i = 0; i < ra->comms->len; i++) {
      const kt_comm *s = comm_of(ra, i);
      kt_comm_match *sm = &out[a].comms[i];
      if (s->p2p != 1 || strcmp(s->group_key, g->key) || sm->status)
        continue;
      int b = s->peer;
      const kt_rank *rb = b >= 0 && b < n_ranks ? ranks[b] : NULL;
      const kt_comm *rv = NULL;
      kt_comm_match *rvm = NULL;
      if (rb)
        for (guint j = 0; j < rb->comms->len && !rv; j++) {
          const kt_comm *x = comm_of(rb, j);
          if (x->p2p == 2 && !out[b].comms[j].status && x->peer == a && !strcmp(x->group_key, g->key)) {
            rv = x;
            rvm = &out[b].comms[j];
          }
        }
      if (!rv) {
        char *d = g_strdup_printf("send #%u from rank %d to %s has no matching recv", k, a,
                                  b < 0 ? "an unknown peer" : "its peer");
        g_ptr_array_add(warnings, g_strdup_printf("dropped: %s (replayed as compute)", d));
        drop(&out[a], i, b < 0 ? "peer rank unknown" : "no matching recv", d, st);
      } else {
        sm->status = rvm->status = KT_COMM_MATCHED;
        sm->group = rvm->group = gi;
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
      k++;
    }
  }
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

/* ---- graphs ---- */

/* See kineto_graph.h.  The events kt_graph_build reads are those of the
 * ops (names), their launch calls (host_calls, host_chains) and the host
 * synchronisation calls (host_calls scans them all). */
void kt_rank_shrink(kt_rank *r)
{
  kt_trace *t = r->trace;
  guint n = t->events->len;
  uint8_t *keep = g_new0(uint8_t, n ? n : 1);
  for (guint i = 0; i < n; i++)
    keep[i] = g_array_index(t->events, kt_event, i).kind == KT_EV_HOST_SYNC;
  for (guint i = 0; i < r->ops->len; i++) {
    const kt_op *op = &g_array_index(r->ops, kt_op, i);
    keep[op->ev] = 1;
    if (op->launch != KT_NONE)
      keep[op->launch] = 1;
  }
  uint32_t *remap = kt_trace_compact(t, keep);
  for (guint i = 0; i < r->ops->len; i++) {
    kt_op *op = &g_array_index(r->ops, kt_op, i);
    op->ev = remap[op->ev];
    if (op->launch != KT_NONE)
      op->launch = remap[op->launch];
  }
  for (guint i = 0; i < r->sync_targets->len; i++) { /* host syncs are kept, in order */
    kt_sync_target *st = &g_array_index(r->sync_targets, kt_sync_target, i);
    st->ev = remap[st->ev];
  }
  g_free(remap);
  g_free(keep);
}

void kt_graph_free(kt_graph *g)
{
  if (!g)
    return;
  if (g->names)
    g_string_chunk_free(g->names);
  g_array_free(g->nodes, TRUE);
  g_array_free(g->edges, TRUE);
  g_free(g);
}

static uint32_t add_node(kt_graph *g, et_node_type type, uint8_t flags, sim_time_ps dur, sim_time_ps start,
                         uint32_t op, const char *name)
{
  kt_node n = { (uint8_t)type, flags, dur, start, op, name };
  g_array_append_val(g->nodes, n);
  return g->nodes->len - 1;
}

static void add_edge(kt_graph *g, uint32_t parent, uint32_t child)
{
  if (parent == KT_NONE || child == KT_NONE)
    return;
  kt_edge e = { parent, child };
  g_array_append_val(g->edges, e);
}

typedef struct {
  sim_time_ps s, e;
} span;

static int cmp_span(const void *a, const void *b)
{
  const span *x = a, *y = b;
  return x->s < y->s ? -1 : x->s > y->s;
}

/* Boundaries (time, +1 open / -1 close) in time order, closes first. */
static int cmp_boundary(const void *a, const void *b)
{
  const span *x = a, *y = b;
  if (x->s != y->s)
    return x->s < y->s ? -1 : 1;
  return x->e < y->e ? -1 : x->e > y->e;
}

static sim_time_ps union_length(GArray *spans)
{
  g_array_sort(spans, cmp_span);
  sim_time_ps total = 0, cs = 0, ce = -1;
  gboolean open = FALSE;
  for (guint i = 0; i < spans->len; i++) {
    span *x = &g_array_index(spans, span, i);
    if (!open || x->s > ce) {
      if (open)
        total += ce - cs;
      cs = x->s;
      ce = x->e;
      open = TRUE;
    } else if (x->e > ce) {
      ce = x->e;
    }
  }
  if (open)
    total += ce - cs;
  return total;
}

/* The largest number of spans open at one instant (a span ending when
 * another starts does not overlap it).  Sorts the 2n boundaries: O(n log n). */
static uint32_t max_concurrency(GArray *spans)
{
  GArray *ev = g_array_sized_new(FALSE, FALSE, sizeof(span), spans->len * 2);
  for (guint i = 0; i < spans->len; i++) {
    const span *x = &g_array_index(spans, span, i);
    if (x->e <= x->s)
      continue;
    span open = { x->s, 1 }, close = { x->e, -1 };
    g_array_append_val(ev, open);
    g_array_append_val(ev, close);
  }
  g_array_sort(ev, cmp_boundary);
  int64_t cur = 0, best = 0;
  for (guint i = 0; i < ev->len; i++) {
    cur += g_array_index(ev, span, i).e;
    best = MAX(best, cur);
  }
  g_array_free(ev, TRUE);
  return (uint32_t)best;
}

/* ET_FLAG_REPLAY for a matched communication that cannot be simulated
 * (some member has no size): every member replays its measured kernel. */
static uint8_t replay_flag(const kt_comm_match *m)
{
  return m && m->status == KT_COMM_MATCHED && m->replay ? ET_FLAG_REPLAY : 0;
}

/* The node type of an op: COMP unless it is a matched communication c
 * (verdict m); both NULL for an op that is not communication. */
static et_node_type node_type_of(const kt_comm *c, const kt_comm_match *m)
{
  if (!c || m->status != KT_COMM_MATCHED)
    return ET_NODE_COMP;
  return c->p2p == 1 ? ET_NODE_COMM_SEND : c->p2p == 2 ? ET_NODE_COMM_RECV : ET_NODE_COMM_COLL;
}

/* "idle_dev<D>_stream<S>", stored once per stream. */
static const char *made_name(kt_graph *g, int64_t key)
{
  char buf[64];
  g_snprintf(buf, sizeof buf, "idle_dev%d_stream%d", (int)(int32_t)(uint32_t)((uint64_t)key >> 32),
             (int)(int32_t)(uint32_t)key);
  return g_string_chunk_insert_const(g->names, buf);
}

/* ---- host launch model ----
 *
 * With host_launch, every CPU thread that launches GPU work in the window
 * becomes a chain of CPU nodes in time order: the time before each call
 * (a delay), each launch call at its measured duration, and each host
 * synchronisation call (cudaStreamSynchronize, cudaDeviceSynchronize, ...).
 * All are COMP nodes flagged CPU_OP and DELAY: they take their time but
 * hold no compute slot, so threads do not serialise each other.
 *
 * A GPU op depends on the CPU node that ends where its launch call begins
 * (the kernel cannot start before the call is made), and the idle time
 * before it on its stream is measured from the later of its stream
 * predecessor's end and that launch start; so the baseline replays the
 * measured start, and when the GPU gets faster an op waits for its launch
 * (launch-bound) instead of starting a fixed gap after its predecessor.
 * A host synchronisation call depends on the last op launched on each
 * stream by its thread before it (those that ended before the call
 * returned) and lasts from the later of its start and their end to its
 * measured end; so the CPU waits for the GPU, and launches after a sync
 * move when the GPU work before it does.  Only edges that agree with the
 * measured timeline are added, so the model keeps the graph acyclic.
 * O((ops + sync calls) log) for sorting, O(streams) per sync call. */

typedef struct {
  int64_t thread;          /* kt_thread_key */
  sim_time_ps start, dur;  /* relative to the window start */
  uint32_t ev;             /* the call's event */
  uint32_t op;             /* launched op, KT_NONE for a sync call */
  uint8_t other;           /* 0 on the step marker's thread, 1 on any other */
} host_call;

/* The step thread's calls first, then each other thread's, in time order. */
static int cmp_host_call(const void *a, const void *b)
{
  const host_call *x = a, *y = b;
  if (x->other != y->other)
    return x->other < y->other ? -1 : 1;
  if (x->thread != y->thread)
    return x->thread < y->thread ? -1 : 1;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  if (x->ev != y->ev)
    return x->ev < y->ev ? -1 : 1;
  return x->op < y->op ? -1 : x->op > y->op;
}

/* Runtime calls that return only when the copy they launch has ended. */
static gboolean is_blocking_copy(const char *name)
{
  return !strcmp(name, "cudaMemcpy") || !strcmp(name, "hipMemcpy") || !strcmp(name, "hipMemcpyWithStream");
}

/* Clips a call to the window (the measured step may end inside it). */
static void clip_call(host_call *c, sim_time_ps window_ps)
{
  c->dur = c->start <= window_ps ? MIN(c->dur, window_ps - c->start) : 0;
}

/* Appends a CPU node (measured start `start`, `dur`) to the thread's chain
 * after *last and makes it the chain's end. */
static uint32_t chain_add(kt_graph *g, uint32_t *last, uint8_t flags, sim_time_ps dur, sim_time_ps start,
                          const char *name)
{
  uint32_t n = add_node(g, ET_NODE_COMP, ET_FLAG_CPU_OP | ET_FLAG_DELAY | flags, dur, start, KT_NONE, name);
  add_edge(g, *last, n);
  *last = n;
  g->host_nodes++;
  return n;
}

/* "host_thread<tid>", stored once per thread. */
static const char *host_name(kt_graph *g, int64_t tid)
{
  char buf[48];
  g_snprintf(buf, sizeof buf, "host_thread%" G_GINT64_FORMAT, tid);
  return g_string_chunk_insert_const(g->names, buf);
}

/* Whether a host synchronisation call waits for the whole device (every
 * stream, whichever thread launched its work) rather than for one stream or
 * event, which the trace does not name. */
static gboolean is_device_sync(const char *name)
{
  return !strcmp(name, "cudaDeviceSynchronize") || !strcmp(name, "hipDeviceSynchronize") ||
         !strcmp(name, "cuCtxSynchronize");
}

/* The end of a thread's CPU chain: its last node and that node's measured end. */
typedef struct {
  uint32_t node;
  sim_time_ps end;
} chain_end;

/* The calls of the host model in (thread, time) order: every launch in
 * the window (launches before it counted, without anchor) and every host
 * synchronisation call, clipped to the window.  Sets anchor / anchor_t to
 * none for every op.  O(E + n log n). */
static GArray *host_calls(kt_graph *g, const kt_rank *r, uint32_t *anchor, sim_time_ps *anchor_t)
{
  const kt_trace *t = r->trace;
  GArray *calls = g_array_new(FALSE, FALSE, sizeof(host_call));
  for (guint i = 0; i < r->ops->len; i++) {
    const kt_op *op = &g_array_index(r->ops, kt_op, i);
    anchor[i] = KT_NONE;
    anchor_t[i] = 0;
    if (op->launch == KT_NONE)
      continue;
    kt_event_slim e = kt_trace_event(t, op->launch);
    host_call c = { kt_slim_thread_key(&e), e.ts - r->window_abs, e.dur, op->launch, i, 1 };
    c.other = !r->have_step_thread || c.thread != r->step_thread;
    if (c.start < 0) {
      g->launched_before_window++;
      continue;
    }
    clip_call(&c, r->window_ps);
    g_array_append_val(calls, c);
  }
  for (uint32_t i = 0, n = kt_trace_n_events(t); i < n; i++) {
    kt_event_slim ev = kt_trace_event(t, i);
    const kt_event_slim *e = &ev;
    sim_time_ps start = e->ts - r->window_abs;
    if (e->kind != KT_EV_HOST_SYNC || start < 0 || start > r->window_ps)
      continue;
    host_call c = { kt_slim_thread_key(e), start, e->dur, i, KT_NONE, 1 };
    c.other = !r->have_step_thread || c.thread != r->step_thread;
    clip_call(&c, r->window_ps); /* a sync still waiting when the step ended */
    g_array_append_val(calls, c);
  }
  g_array_sort(calls, cmp_host_call);
  return calls;
}

/* Where the chain of a thread whose first call is c begins: another thread
 * (an autograd or hook thread) starts work the step thread hands it, so
 * its chain begins after the step thread's last node (main_nodes, in
 * order) that ended before its first call, not at the window's start, and
 * moves when the step thread does.  A binary search. */
static void thread_start(kt_graph *g, const host_call *c, const GArray *main_nodes, uint32_t *last,
                         sim_time_ps *cursor)
{
  guint lo = 0, hi = c->other ? main_nodes->len : 0;
  while (lo < hi) {
    guint mid = (lo + hi) / 2;
    if (g_array_index(main_nodes, chain_end, mid).end <= c->start)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo > 0) {
    chain_end m = g_array_index(main_nodes, chain_end, lo - 1);
    *last = m.node;
    *cursor = m.end;
    g->host_forks++;
  }
}

/* The node name of a sync call: the call, and for a stream or event sync
 * what it waits for and how that was found, so the critical path says
 * which syncs were stated and which inferred ("cudaStreamSynchronize
 * [stream 20: inferred]"); device-wide syncs keep the call's name. */
static const char *sync_name(kt_graph *g, const kt_rank *r, const kt_event_slim *e, kt_sync_how how,
                             const uint32_t *target)
{
  const char *call = kt_str(r->trace, e->name);
  if (how == KT_SYNC_DEVICE)
    return call;
  static const char *const label[KT_SYNC_N] = { "", "stated", "inferred", "did not wait, own launches assumed",
                                                "unresolved, own launches assumed" };
  char buf[160];
  int64_t stream = -1;
  for (uint32_t s = 0; s < r->n_streams && how <= KT_SYNC_INFERRED; s++)
    if (target[s] != KT_NONE)
      stream = stream < 0 ? (int64_t)(uint32_t)r->stream_keys[s] : -2;
  if (stream >= 0)
    g_snprintf(buf, sizeof buf, "%s [stream %" G_GINT64_FORMAT ": %s]", call, stream, label[how]);
  else
    g_snprintf(buf, sizeof buf, "%s [%s%s]", call, stream == -2 ? "every stream: " : "", label[how]);
  return g_string_chunk_insert_const(g->names, buf);
}

/* A sync call c (event e) waits for the GPU work it actually waited on,
 * whoever launched it (kt_sync_resolve, kineto_threads.h): a device-wide
 * sync for every stream's last op issued before it; a stream or event
 * sync for the stream a cuda_sync event names, else for the stream whose
 * op ended just before the call returned; only when neither shows, for
 * the last op this thread launched on each stream (last_on_stream).  It
 * lasts from the later of its start and that work's end to its measured
 * end (its return overhead), so in a what-if it returns when the simulated
 * work ends plus that overhead.  Appends its node to the chain (*last) and
 * its waits; returns the new cursor. */
static sim_time_ps sync_call(kt_graph *g, const kt_rank *r, const host_call *c, const kt_event_slim *e,
                             const uint32_t *last_on_stream, uint32_t *last, sim_time_ps cursor, GArray *waits,
                             uint32_t *target)
{
  const kt_trace *t = r->trace;
  sim_time_ps end = c->start + c->dur, gpu_done = 0;
  guint first_wait = waits->len;
  kt_sync_how how = kt_sync_resolve(r, c->ev, is_device_sync(kt_str(t, e->name)), c->start, end, last_on_stream,
                                    target);
  if (how == KT_SYNC_UNRESOLVED && !g->sync_by_how[how])
    g->first_unresolved_ps = c->start;
  g->sync_by_how[how]++;
  for (uint32_t s = 0; s < r->n_streams; s++) {
    uint32_t o = target[s];
    if (o == KT_NONE || g_array_index(r->ops, kt_op, o).end > end)
      continue;
    gpu_done = MAX(gpu_done, g_array_index(r->ops, kt_op, o).end);
    kt_edge w = { o, KT_NONE };
    g_array_append_val(waits, w);
  }
  sim_time_ps from = MAX(cursor, gpu_done);
  uint32_t n = chain_add(g, last, ET_FLAG_HAS_START, end > from ? end - from : 0, from, sync_name(g, r, e, how, target));
  for (guint q = first_wait; q < waits->len; q++)
    g_array_index(waits, kt_edge, q).child = n;
  g->sync_waits += waits->len - first_wait;
  return MAX(from, end);
}

/* The state of building the CPU chains (host_chains): the chain being
 * built (its last node, measured cursor, the anchor of its last launch,
 * the last op it launched per stream) and what all chains collect. */
typedef struct {
  kt_graph *g;
  const kt_rank *r;
  sim_time_ps min_gap_ps;
  uint32_t *anchor;        /* per op: the CPU node its launch waits for */
  sim_time_ps *anchor_t;   /* and that node's measured end */
  GArray *waits;           /* kt_edge (op, sync node) */
  GArray *ends;            /* chain_end per thread */
  GArray *main_nodes;      /* chain_end: the step thread's chain, in order */
  GArray *spans;           /* kt_call_span: every call node, for join inference */
  GArray *gaps;            /* host_gap: CPU gaps between two calls of a thread */
  uint32_t *last_on_stream, *target;
  uint32_t last, launch_anchor;
  sim_time_ps cursor, launch_anchor_t;
  gboolean had_call;       /* the current thread made a call already */
} chain_state;

/* A CPU gap between two calls of a thread: its delay node and measured
 * interval. */
typedef struct {
  uint32_t node;
  int64_t thread;
  sim_time_ps g0, g1;
} host_gap;

/* A launch call c (event e) of the current chain: its node, anchor and,
 * for a blocking copy (cudaMemcpy, hipMemcpy), the wait for its copy; a
 * call nested in the previous one adds only its part past the chain's end. */
static void launch_call(chain_state *x, const host_call *c, const kt_event_slim *e)
{
  kt_graph *g = x->g;
  const kt_trace *t = x->r->trace;
  const kt_op *op = &g_array_index(x->r->ops, kt_op, c->op);
  if (c->start < x->cursor) {
    /* A call nested in (or overlapping) the previous one on this thread,
     * e.g. a runtime call made inside another: its launch began after the
     * enclosing call's anchor, and only the part past the chain's end is
     * added, so the chain keeps the measured times. */
    x->anchor[c->op] = x->launch_anchor;
    x->anchor_t[c->op] = x->launch_anchor_t;
    g->host_overlaps++;
    x->last_on_stream[op->stream] = c->op;
    if (c->start + c->dur > x->cursor) {
      chain_add(g, &x->last, ET_FLAG_HAS_START, c->start + c->dur - x->cursor, x->cursor, kt_str(t, e->name));
      x->cursor = c->start + c->dur;
    }
    return;
  }
  x->launch_anchor = x->anchor[c->op] = x->last;
  x->launch_anchor_t = x->anchor_t[c->op] = x->cursor;
  /* A blocking copy returns when its copy has ended: like a sync call it
   * waits for that op and lasts from the later of its start and the
   * copy's end to its measured end. */
  sim_time_ps from = c->start, end = c->start + c->dur;
  gboolean blocking = is_blocking_copy(kt_str(t, e->name)) && op->end <= end;
  if (blocking)
    from = MAX(from, op->end);
  uint32_t n = chain_add(g, &x->last, ET_FLAG_HAS_START, end - from, from, kt_str(t, e->name));
  if (blocking) {
    kt_edge w = { c->op, n };
    g_array_append_val(x->waits, w);
    g->sync_waits++;
  }
  x->cursor = MAX(x->cursor, end);
  x->last_on_stream[op->stream] = c->op;
}

/* Call k of calls (event e) on the current chain: the gap before it, then
 * the call's node; records the gap and the call's span. */
static void chain_call(chain_state *x, const GArray *calls, guint k, const kt_event_slim *e)
{
  const host_call *c = &g_array_index(calls, host_call, k);
  kt_graph *g = x->g;
  if (k > 0 && c->op != KT_NONE && c->ev == g_array_index(calls, host_call, k - 1).ev &&
      c->thread == g_array_index(calls, host_call, k - 1).thread) {
    /* One call launching several ops (cudaGraphLaunch): same anchor. */
    x->anchor[c->op] = x->launch_anchor;
    x->anchor_t[c->op] = x->launch_anchor_t;
    x->last_on_stream[g_array_index(x->r->ops, kt_op, c->op).stream] = c->op;
    return;
  }
  if (c->start > x->cursor) {
    if (c->start - x->cursor >= x->min_gap_ps) {
      uint32_t d = chain_add(g, &x->last, 0, c->start - x->cursor, x->cursor, host_name(g, e->tid));
      host_gap hg = { d, c->thread, x->cursor, c->start };
      if (x->had_call)
        g_array_append_val(x->gaps, hg);
    }
    x->cursor = c->start;
  }
  uint32_t before = x->last;
  if (c->op != KT_NONE)
    launch_call(x, c, e);
  else
    x->cursor = sync_call(g, x->r, c, e, x->last_on_stream, &x->last, x->cursor, x->waits, x->target);
  x->had_call = TRUE;
  if (x->last != before) {
    kt_call_span sp = { c->thread, e->tid, c->start, c->start + c->dur, x->last };
    g_array_append_val(x->spans, sp);
  }
}

static int cmp_span_thread(const void *a, const void *b)
{
  const kt_call_span *x = a, *y = b;
  if (x->thread != y->thread)
    return x->thread < y->thread ? -1 : 1;
  return x->start < y->start ? -1 : x->start > y->start;
}

/* Cross-thread joins (kineto_threads.h): a gap of one thread that another
 * thread's last call explains starts at that call's end instead of the
 * thread's previous node, and keeps only the time after it as host work,
 * so the joining thread moves when the joined one does.  O(gaps threads
 * log n). */
static void infer_joins(chain_state *x)
{
  g_array_sort(x->spans, cmp_span_thread);
  for (guint i = 0; i < x->gaps->len; i++) {
    const host_gap *hg = &g_array_index(x->gaps, host_gap, i);
    const kt_call_span *src = kt_join_source(x->spans, hg->thread, hg->g0, hg->g1);
    if (!src)
      continue;
    char buf[96];
    kt_node *d = &g_array_index(x->g->nodes, kt_node, hg->node);
    g_snprintf(buf, sizeof buf, "%s [after a join on host_thread%" G_GINT64_FORMAT ": inferred]", d->name, src->tid);
    d->name = g_string_chunk_insert_const(x->g->names, buf);
    d->start = src->end;
    d->dur = hg->g1 - src->end;
    add_edge(x->g, src->node, hg->node);
    x->g->joins++;
  }
}

/* Builds the CPU chains.  anchor[i] / anchor_t[i]: the CPU node a GPU op
 * waits for and the measured time it ends (its launch start); waits: pairs
 * (op, sync node) for the edges op -> sync, added once the op nodes exist;
 * ends: each thread's last node and its measured end.  The thread of the
 * step marker gets a last CPU node up to the marker's end: the host work
 * after its last runtime call (an optimizer's Python, logging) is part of
 * the step and keeps its measured length.  Then the joins between threads
 * are inferred (infer_joins). */
static void host_chains(kt_graph *g, const kt_rank *r, sim_time_ps min_gap_ps, uint32_t *anchor,
                        sim_time_ps *anchor_t, GArray *waits, GArray *ends)
{
  const kt_trace *t = r->trace;
  GArray *calls = host_calls(g, r, anchor, anchor_t);
  uint32_t ns = r->n_streams ? r->n_streams : 1;
  chain_state x = { .g = g, .r = r, .min_gap_ps = min_gap_ps, .anchor = anchor, .anchor_t = anchor_t,
                    .waits = waits, .ends = ends, .last = KT_NONE, .launch_anchor = KT_NONE };
  x.main_nodes = g_array_new(FALSE, FALSE, sizeof(chain_end));
  x.spans = g_array_new(FALSE, FALSE, sizeof(kt_call_span));
  x.gaps = g_array_new(FALSE, FALSE, sizeof(host_gap));
  x.last_on_stream = g_new(uint32_t, ns);
  x.target = g_new(uint32_t, ns);
  for (guint k = 0; k < calls->len; k++) {
    const host_call *c = &g_array_index(calls, host_call, k);
    kt_event_slim ev = kt_trace_event(t, c->ev);
    if (k == 0 || c->thread != g_array_index(calls, host_call, k - 1).thread) {
      x.last = KT_NONE;
      x.cursor = 0;
      x.had_call = FALSE;
      for (uint32_t s = 0; s < r->n_streams; s++)
        x.last_on_stream[s] = KT_NONE;
      g->host_threads++;
      thread_start(g, c, x.main_nodes, &x.last, &x.cursor);
    }
    chain_call(&x, calls, k, &ev);
    if (k + 1 == calls->len || g_array_index(calls, host_call, k + 1).thread != c->thread) {
      /* The thread's last call: the step thread keeps its CPU time up to
       * the step marker's end. */
      if (r->have_step_thread && c->thread == r->step_thread && r->step_cpu_end_ps > x.cursor &&
          r->step_cpu_end_ps - x.cursor >= min_gap_ps) {
        chain_add(g, &x.last, 0, r->step_cpu_end_ps - x.cursor, x.cursor, host_name(g, ev.tid));
        x.cursor = r->step_cpu_end_ps;
        g->host_step_tail = TRUE;
      }
      chain_end ce = { x.last, x.cursor };
      if (x.last != KT_NONE)
        g_array_append_val(ends, ce);
    }
    if (!c->other && x.last != KT_NONE) {
      chain_end m = { x.last, x.cursor };
      g_array_append_val(x.main_nodes, m);
    }
  }
  infer_joins(&x);
  g_array_free(x.main_nodes, TRUE);
  g_array_free(x.spans, TRUE);
  g_array_free(x.gaps, TRUE);
  g_free(x.last_on_stream);
  g_free(x.target);
  g_array_free(calls, TRUE);
}

/* Cross-stream parents of every op (r->sync_edges by child): a CSR index,
 * parent[first[i] .. first[i+1]) for op i.  O(ops + edges). */
typedef struct {
  uint32_t *first, *parent;
} sync_index;

static void sync_index_build(sync_index *x, const kt_rank *r)
{
  guint n = r->ops->len, ne = r->sync_edges->len;
  x->first = g_new0(uint32_t, n + 1);
  x->parent = g_new(uint32_t, ne ? ne : 1);
  for (guint i = 0; i < ne; i++)
    x->first[g_array_index(r->sync_edges, kt_edge, i).child + 1]++;
  for (guint i = 0; i < n; i++)
    x->first[i + 1] += x->first[i];
  uint32_t *fill = g_memdup2(x->first, sizeof(uint32_t) * (n + 1));
  for (guint i = 0; i < ne; i++) {
    kt_edge e = g_array_index(r->sync_edges, kt_edge, i);
    x->parent[fill[e.child]++] = e.parent;
  }
  g_free(fill);
}

static void sync_index_free(sync_index *x)
{
  g_free(x->first);
  g_free(x->parent);
}

/* One modelled predecessor of a GPU op: a node of the graph (or an op whose
 * node is made later, for cross-stream parents) and its measured end. */
typedef struct {
  uint32_t node, op;       /* exactly one is set, the other KT_NONE */
  sim_time_ps end;
  gboolean launch;         /* the CPU node before the op's launch call */
} pred;

/* Adds the idle time and edges in front of node `child` (measured start
 * `start`).  It is ready, on the measured timeline, when the latest of its
 * predecessors ended (time 0 without any); only the time from there to its
 * measured start is unexplained, and becomes an ET_FLAG_DELAY node after
 * that binding predecessor alone (the first of the latest, in the order
 * given).  The other predecessors point at the child directly, so when one
 * of them ends earlier in a what-if the child moves with it: measured
 * waiting is derived from the dependencies, never replayed.  Edges from ops
 * whose nodes do not exist yet go to `pending` (op -> node).  O(np). */
static void place_idle(kt_graph *g, const pred *p, int np, sim_time_ps start, sim_time_ps min_gap_ps,
                       const char *idle_name, uint32_t child, GArray *pending)
{
  int bind = -1;
  sim_time_ps ready = 0;
  for (int k = 0; k < np; k++)
    if (bind < 0 || p[k].end > ready) {
      bind = k;
      ready = p[k].end;
    }
  sim_time_ps gap = start - ready;
  uint32_t d = KT_NONE;
  if (gap > 0 && gap >= min_gap_ps) {
    d = add_node(g, ET_NODE_COMP, ET_FLAG_DELAY, gap, ready, KT_NONE, idle_name);
    add_edge(g, d, child);
    g->gap_nodes++;
    if (bind >= 0 && p[bind].launch)
      g->launch_lag_ps += gap;
    else
      g->unexplained_idle_ps += gap;
  }
  for (int k = 0; k < np; k++) {
    uint32_t to = k == bind && d != KT_NONE ? d : child;
    if (p[k].node != KT_NONE) {
      add_edge(g, p[k].node, to);
    } else {
      kt_edge e = { p[k].op, to };
      g_array_append_val(pending, e);
    }
  }
}

/* Kernels mode: one node per GPU op at its measured duration, in per-stream
 * chains, with launch anchors (host model), cross-stream edges, host
 * synchronisation waits and the derived idle of place_idle.  The time from
 * the latest stream or thread end to the window's end is the unexplained
 * step tail. */
static void build_kernels(kt_graph *g, const kt_rank *r, const kt_rank_match *rm, sim_time_ps min_gap_ps,
                          gboolean host_launch, GArray *rep)
{
  const kt_trace *t = r->trace;
  guint nops = r->ops->len;
  uint32_t *node_of_op = g_new(uint32_t, nops ? nops : 1);
  uint32_t *anchor = NULL;
  sim_time_ps *anchor_t = NULL;
  GArray *waits = g_array_new(FALSE, FALSE, sizeof(kt_edge));
  GArray *ends = g_array_new(FALSE, FALSE, sizeof(chain_end));
  GArray *pending = g_array_new(FALSE, FALSE, sizeof(kt_edge));
  if (host_launch) {
    anchor = g_new(uint32_t, nops ? nops : 1);
    anchor_t = g_new(sim_time_ps, nops ? nops : 1);
    host_chains(g, r, min_gap_ps, anchor, anchor_t, waits, ends);
  }
  sync_index sx;
  sync_index_build(&sx, r);
  GArray *compute = g_array_new(FALSE, FALSE, sizeof(span));
  GArray *preds = g_array_new(FALSE, FALSE, sizeof(pred));
  uint32_t prev = KT_NONE;
  sim_time_ps prev_end = 0;
  for (guint i = 0; i < nops; i++) {
    const kt_op *op = &g_array_index(r->ops, kt_op, i);
    if (i == 0 || g_array_index(r->ops, kt_op, i - 1).stream != op->stream) {
      if (prev != KT_NONE) {
        chain_end ce = { prev, prev_end };
        g_array_append_val(ends, ce);
      }
      prev = KT_NONE;
      prev_end = 0;
    }
    /* Predecessors in tie order: stream predecessor, launch, cross-stream. */
    g_array_set_size(preds, 0);
    if (prev != KT_NONE) {
      pred p = { prev, KT_NONE, prev_end, FALSE };
      g_array_append_val(preds, p);
    }
    uint32_t a = anchor ? anchor[i] : KT_NONE;
    if (a != KT_NONE && anchor_t[i] > op->start)
      g->launch_inversions++; /* measured to start before its launch: keep the measured start */
    else if (a != KT_NONE) {
      pred p = { a, KT_NONE, anchor_t[i], TRUE };
      g_array_append_val(preds, p);
    }
    for (uint32_t k = sx.first[i]; k < sx.first[i + 1]; k++) {
      uint32_t po = sx.parent[k];
      pred p = { KT_NONE, po, g_array_index(r->ops, kt_op, po).end, FALSE };
      g_array_append_val(preds, p);
      g->cross_edges++;
    }
    kt_event_slim e = kt_trace_event(t, op->ev);
    const kt_comm *c = op->comm == KT_NONE ? NULL : &g_array_index(r->comms, kt_comm, op->comm);
    const kt_comm_match *cm = op->comm == KT_NONE ? NULL : &rm->comms[op->comm];
    et_node_type type = node_type_of(c, cm);
    uint32_t n = add_node(g, type, ET_FLAG_HAS_START | replay_flag(cm), op->end - op->start, op->start, i,
                          kt_str(t, e.name));
    node_of_op[i] = n;
    place_idle(g, (const pred *)preds->data, (int)preds->len, op->start, min_gap_ps,
               made_name(g, r->stream_keys[op->stream]), n, pending);
    prev = n;
    prev_end = MAX(prev_end, op->end);
    span s = { op->start, op->end };
    g_array_append_val(rep, s);
    if (type == ET_NODE_COMP)
      g_array_append_val(compute, s);
  }
  if (prev != KT_NONE) {
    chain_end ce = { prev, prev_end };
    g_array_append_val(ends, ce);
  }
  g->compute_slots = MIN(max_concurrency(compute), ET_MAX_COMPUTE_SLOTS);
  for (guint i = 0; i < pending->len; i++) {
    kt_edge pe = g_array_index(pending, kt_edge, i);
    add_edge(g, node_of_op[pe.parent], pe.child);
  }
  for (guint i = 0; i < waits->len; i++) {
    kt_edge w = g_array_index(waits, kt_edge, i);
    add_edge(g, node_of_op[w.parent], w.child);
  }
  /* The tail: the time from the latest stream or thread end to the
   * window's end, after every one of those ends (the step is over when all
   * its work is, whichever finishes last in a what-if). */
  sim_time_ps latest = 0;
  for (guint i = 0; i < ends->len; i++)
    latest = MAX(latest, g_array_index(ends, chain_end, i).end);
  if (ends->len && r->window_ps > latest && r->window_ps - latest >= min_gap_ps) {
    uint32_t d = add_node(g, ET_NODE_COMP, ET_FLAG_DELAY, r->window_ps - latest, latest, KT_NONE, "idle_step_tail");
    for (guint i = 0; i < ends->len; i++)
      add_edge(g, g_array_index(ends, chain_end, i).node, d);
    g->gap_nodes++;
    g->unexplained_idle_ps += r->window_ps - latest;
  }
  sync_index_free(&sx);
  g_array_free(preds, TRUE);
  g_array_free(compute, TRUE);
  g_array_free(pending, TRUE);
  g_array_free(waits, TRUE);
  g_array_free(ends, TRUE);
  g_free(anchor);
  g_free(anchor_t);
  g_free(node_of_op);
}

/* Gap mode: matched communications in start order, the time between them
 * replayed as compute (CCL-Bench's model: a serial chain, W16). */
static void build_gaps(kt_graph *g, const kt_rank *r, const kt_rank_match *rm, sim_time_ps min_gap_ps, GArray *rep)
{
  const kt_trace *t = r->trace;
  GArray *order = g_array_new(FALSE, FALSE, sizeof(span));
  for (guint i = 0; i < r->ops->len; i++) {
    const kt_op *op = &g_array_index(r->ops, kt_op, i);
    if (op->comm != KT_NONE && rm->comms[op->comm].status == KT_COMM_MATCHED) {
      span s = { op->start, (sim_time_ps)i };
      g_array_append_val(order, s);
    }
  }
  g_array_sort(order, cmp_span);
  uint32_t prev = KT_NONE;
  sim_time_ps cursor = 0;
  for (guint k = 0; k < order->len; k++) {
    uint32_t i = (uint32_t)g_array_index(order, span, k).e;
    const kt_op *op = &g_array_index(r->ops, kt_op, i);
    if (op->start - cursor >= min_gap_ps && op->start > cursor) {
      uint32_t d = add_node(g, ET_NODE_COMP, 0, op->start - cursor, cursor, KT_NONE, "compute_gap");
      add_edge(g, prev, d);
      prev = d;
      g->gap_nodes++;
    }
    kt_event_slim e = kt_trace_event(t, op->ev);
    const kt_comm *c = &g_array_index(r->comms, kt_comm, op->comm);
    const kt_comm_match *cm = &rm->comms[op->comm];
    uint32_t n = add_node(g, node_type_of(c, cm), ET_FLAG_HAS_START | replay_flag(cm), op->end - op->start, op->start,
                          i, kt_str(t, e.name));
    add_edge(g, prev, n);
    prev = n;
    cursor = MAX(cursor, op->end);
    span s = { op->start, op->end };
    g_array_append_val(rep, s);
  }
  if (r->window_ps > cursor && r->window_ps - cursor >= min_gap_ps) {
    uint32_t d = add_node(g, ET_NODE_COMP, 0, r->window_ps - cursor, cursor, KT_NONE, "compute_gap");
    add_edge(g, prev, d);
    g->gap_nodes++;
  }
  g_array_free(order, TRUE);
}

kt_graph *kt_graph_build(const kt_rank *r, const kt_rank_match *rm, fe_kineto_mode mode, sim_time_ps min_gap_ps,
                         gboolean host_launch)
{
  kt_graph *g = g_new0(kt_graph, 1);
  g->names = g_string_chunk_new(1024);
  g->nodes = g_array_new(FALSE, FALSE, sizeof(kt_node));
  g->edges = g_array_new(FALSE, FALSE, sizeof(kt_edge));
  GArray *all = g_array_new(FALSE, FALSE, sizeof(span));
  GArray *rep = g_array_new(FALSE, FALSE, sizeof(span));
  for (guint i = 0; i < r->ops->len; i++) {
    const kt_op *op = &g_array_index(r->ops, kt_op, i);
    span s = { op->start, op->end };
    g_array_append_val(all, s);
  }
  g->gpu_busy_ps = union_length(all);
  if (mode == FE_KINETO_KERNELS)
    build_kernels(g, r, rm, min_gap_ps, host_launch, rep);
  else
    build_gaps(g, r, rm, min_gap_ps, rep);
  g->node_busy_ps = union_length(rep);
  g_array_free(all, TRUE);
  g_array_free(rep, TRUE);
  g->cycle_edges_dropped = kt_graph_break_cycles(g);
  return g;
}

static int cmp_edge(const void *a, const void *b)
{
  const kt_edge *x = a, *y = b;
  if (x->child != y->child)
    return x->child < y->child ? -1 : 1;
  return x->parent < y->parent ? -1 : x->parent > y->parent;
}

uint64_t kt_graph_break_cycles(kt_graph *g)
{
  uint32_t n = g->nodes->len;
  uint64_t dropped = 0;
  /* Remove duplicate edges and self loops first (a self loop is a cycle). */
  g_array_sort(g->edges, cmp_edge);
  guint w = 0;
  for (guint i = 0; i < g->edges->len; i++) {
    kt_edge e = g_array_index(g->edges, kt_edge, i);
    if (e.parent == e.child) {
      dropped++;
      continue;
    }
    if (w > 0 && !cmp_edge(&e, &g_array_index(g->edges, kt_edge, w - 1)))
      continue;
    g_array_index(g->edges, kt_edge, w++) = e;
  }
  g_array_set_size(g->edges, w);
  for (;;) {
    guint ne = g->edges->len;
    uint32_t *indeg = g_new0(uint32_t, n ? n : 1);
    uint32_t *first = g_new0(uint32_t, n + 1);  /* CSR of children by parent */
    uint32_t *child = g_new(uint32_t, ne ? ne : 1);
    for (guint i = 0; i < ne; i++) {
      kt_edge e = g_array_index(g->edges, kt_edge, i);
      indeg[e.child]++;
      first[e.parent + 1]++;
    }
    for (uint32_t i = 0; i < n; i++)
      first[i + 1] += first[i];
    uint32_t *fill = g_memdup2(first, sizeof(uint32_t) * (n + 1));
    for (guint i = 0; i < ne; i++) {
      kt_edge e = g_array_index(g->edges, kt_edge, i);
      child[fill[e.parent]++] = e.child;
    }
    uint32_t *queue = g_new(uint32_t, n ? n : 1);
    uint32_t qh = 0, qt = 0;
    for (uint32_t i = 0; i < n; i++)
      if (!indeg[i])
        queue[qt++] = i;
    while (qh < qt) {
      uint32_t u = queue[qh++];
      for (uint32_t k = first[u]; k < first[u + 1]; k++)
        if (--indeg[child[k]] == 0)
          queue[qt++] = child[k];
    }
    gboolean acyclic = qt == n;
    if (!acyclic) {
      /* Every unfinished node has an unfinished parent, so walking parents
       * from one must close a cycle.  Drop the cycle edge that points
       * furthest back in node order (nodes were created in time order, so
       * it is the edge most at odds with the timeline). */
      uint32_t *seen_at = g_new(uint32_t, n ? n : 1);
      for (uint32_t i = 0; i < n; i++)
        seen_at[i] = UINT32_MAX;
      GArray *path = g_array_new(FALSE, FALSE, sizeof(guint)); /* edge indices walked */
      uint32_t u = 0;
      while (!indeg[u])
        u++;
      uint32_t steps = 0;
      while (seen_at[u] == UINT32_MAX) {
        seen_at[u] = steps++;
        /* Edges are sorted by child: binary search the first edge into u. */
        guint lo = 0, hi = ne;
        while (lo < hi) {
          guint mid = (lo + hi) / 2;
          if (g_array_index(g->edges, kt_edge, mid).child < u)
            lo = mid + 1;
          else
            hi = mid;
        }
        guint pick = G_MAXUINT;
        for (guint i = lo; i < ne && g_array_index(g->edges, kt_edge, i).child == u; i++)
          if (indeg[g_array_index(g->edges, kt_edge, i).parent]) {
            pick = i;
            break;
          }
        g_assert(pick != G_MAXUINT);
        g_array_append_val(path, pick);
        u = g_array_index(g->edges, kt_edge, pick).parent;
      }
      guint victim = G_MAXUINT;
      int64_t worst = INT64_MIN;
      for (guint k = seen_at[u]; k < path->len; k++) {
        guint i = g_array_index(path, guint, k);
        kt_edge e = g_array_index(g->edges, kt_edge, i);
        int64_t back = (int64_t)e.parent - (int64_t)e.child;
        if (back > worst || (back == worst && i < victim)) {
          worst = back;
          victim = i;
        }
      }
      g_array_free(path, TRUE);
      g_free(seen_at);
      g_array_remove_index(g->edges, victim);
      dropped++;
    }
    g_free(indeg);
    g_free(first);
    g_free(fill);
    g_free(child);
    g_free(queue);
    if (acyclic)
      return dropped;
  }
}
