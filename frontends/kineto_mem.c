/* kineto_mem.c: links communication kernels to the [memory] allocation of
 * their buffer (rule and limits in kineto_mem.h and doc/libraries.md).
 *
 * One sweep over the memory events in time order keeps the live
 * allocations in a hash table by (device, Addr) and in a balanced tree by
 * (device, Bytes, time) so that the size-fitting candidates of a kernel are
 * a range scan.  Kernels are visited in the order of their launch times.
 */
#include "config.h"

#include "frontends/kineto_mem.h"

#include <stdlib.h>
#include <string.h>

#define MEM_ROUND 512u                      /* caching allocator's rounding (kMinBlockSize) */
#define MEM_SMALL (UINT64_C(1) << 20)       /* kSmallSize: larger blocks may stay unsplit */

typedef struct {
  int32_t dev;
  int64_t addr;
  uint64_t bytes;
  sim_time_ps ts;
  uint32_t order;          /* position in the sorted event list (tie breaker) */
} live_rec;

typedef struct {
  sim_time_ps ts;
  uint32_t order, idx;     /* tie breaker (file position or comm index), payload */
} tkey;

static int cmp_tkey(const void *a, const void *b)
{
  const tkey *x = a, *y = b;
  if (x->ts != y->ts)
    return x->ts < y->ts ? -1 : 1;
  return x->order < y->order ? -1 : x->order > y->order;
}

static guint live_hash(gconstpointer p)
{
  const live_rec *r = p;
  return g_int64_hash(&r->addr) ^ (guint)r->dev * 0x9e3779b1u;
}

static gboolean live_equal(gconstpointer a, gconstpointer b)
{
  const live_rec *x = a, *y = b;
  return x->dev == y->dev && x->addr == y->addr;
}

static gint live_cmp(gconstpointer a, gconstpointer b, gpointer unused)
{
  (void)unused;
  const live_rec *x = a, *y = b;
  if (x->dev != y->dev)
    return x->dev < y->dev ? -1 : 1;
  if (x->bytes != y->bytes)
    return x->bytes < y->bytes ? -1 : 1;
  if (x->ts != y->ts)
    return x->ts < y->ts ? -1 : 1;
  if (x->order != y->order)
    return x->order < y->order ? -1 : 1;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static const kt_event *ev_at(const kt_trace *t, uint32_t i) { return &g_array_index(t->events, kt_event, i); }

/* Latest live allocation on dev with lo <= Bytes <= hi; *n is 0, 1 or 2
 * (two or more fit).  Within one Bytes value the tree is ordered by time,
 * so each distinct size in the range costs two O(log M) searches, however
 * many blocks of that size are live. */
static const live_rec *best_fit(GTree *tree, int32_t dev, uint64_t lo, uint64_t hi, uint64_t *n)
{
  const live_rec *best = NULL;
  *n = 0;
  uint64_t b = lo;
  for (;;) {
    live_rec probe = { .dev = dev, .addr = INT64_MIN, .bytes = b, .ts = INT64_MIN, .order = 0 };
    GTreeNode *first = g_tree_lower_bound(tree, &probe);
    if (first == NULL)
      break;
    const live_rec *c = g_tree_node_key(first);
    if (c->dev != dev || c->bytes > hi)
      break;
    GTreeNode *after = NULL;
    if (c->bytes < UINT64_MAX) {
      live_rec next = { .dev = dev, .addr = INT64_MIN, .bytes = c->bytes + 1, .ts = INT64_MIN, .order = 0 };
      after = g_tree_lower_bound(tree, &next);
    }
    GTreeNode *last = after != NULL ? g_tree_node_previous(after) : g_tree_node_last(tree);
    const live_rec *l = g_tree_node_key(last);
    *n += last != first ? 2 : 1;
    if (best == NULL || l->ts > best->ts || (l->ts == best->ts && l->order > best->order))
      best = l;
    if (c->bytes >= hi)
      break;
    b = c->bytes + 1;
  }
  if (*n > 2)
    *n = 2;
  return best;
}

static uint64_t fit_hi(uint64_t s)
{
  uint64_t r = s < MEM_ROUND ? MEM_ROUND : (s + MEM_ROUND - 1) / MEM_ROUND * MEM_ROUND;
  return r > MEM_SMALL ? r + MEM_SMALL : r;
}

void kt_mem_link(const kt_rank *r, kt_buf_link *out, kt_mem_stats *st)
{
  const kt_trace *t = r->trace;
  memset(st, 0, sizeof *st);
  guint nc = r->comms->len;
  for (guint i = 0; i < nc; i++)
    out[i] = (kt_buf_link){ 0, 0 };
  st->comms = nc;
  if (t->memory_allocs == 0 && t->memory_frees == 0)
    return; /* no [memory] events at all: skip the scan */
  GArray *mem = g_array_new(FALSE, FALSE, sizeof(tkey));
  for (guint i = 0; i < t->events->len; i++) {
    const kt_event *e = ev_at(t, i);
    if (e->kind == KT_EV_MEMORY) {
      tkey k = { e->ts, e->file_index, i };
      g_array_append_val(mem, k);
    }
  }
  st->mem_events = mem->len;
  if (mem->len == 0) {
    g_array_free(mem, TRUE);
    return; /* nothing to link: the synthetic lifecycle applies to all */
  }
  g_array_sort(mem, cmp_tkey);
  GArray *q = g_array_new(FALSE, FALSE, sizeof(tkey));
  for (guint i = 0; i < nc; i++) {
    const kt_comm *c = &g_array_index(r->comms, kt_comm, i);
    const kt_op *op = &g_array_index(r->ops, kt_op, c->op);
    if (op->launch == KT_NONE) {
      st->no_launch++;
      continue;
    }
    if (c->bytes == 0) {
      st->no_size++;
      continue;
    }
    tkey k = { ev_at(t, op->launch)->ts, i, i };
    g_array_append_val(q, k);
  }
  g_array_sort(q, cmp_tkey);
  GHashTable *live = g_hash_table_new_full(live_hash, live_equal, NULL, g_free);
  GTree *tree = g_tree_new_full(live_cmp, NULL, NULL, NULL);
  guint m = 0;
  for (guint qi = 0; qi < q->len; qi++) {
    const tkey *qk = &g_array_index(q, tkey, qi);
    /* Apply every memory event up to the launch (inclusive). */
    for (; m < mem->len && g_array_index(mem, tkey, m).ts <= qk->ts; m++) {
      const kt_event *e = ev_at(t, g_array_index(mem, tkey, m).idx);
      live_rec key = { .dev = e->device, .addr = e->correlation };
      live_rec *old = g_hash_table_lookup(live, &key);
      if (old != NULL) {
        g_tree_remove(tree, old);
        g_hash_table_remove(live, old); /* frees old */
      } else if (e->aux < 0) {
        st->unknown_frees++;
      }
      if (e->aux > 0) {
        live_rec *n = g_new(live_rec, 1);
        *n = (live_rec){ .dev = e->device, .addr = e->correlation, .bytes = (uint64_t)e->aux, .ts = e->ts,
                         .order = m };
        g_hash_table_add(live, n);
        g_tree_insert(tree, n, n);
      }
    }
    const kt_comm *c = &g_array_index(r->comms, kt_comm, qk->idx);
    int32_t dev = ev_at(t, g_array_index(r->ops, kt_op, c->op).ev)->device;
    uint64_t n = 0;
    const live_rec *b = best_fit(tree, dev, c->bytes, fit_hi(c->bytes), &n);
    if (b == NULL && !c->p2p && c->n_ranks > 1) {
      uint64_t o = 0;
      if (c->coll == ET_COLL_ALL_GATHER && c->bytes <= UINT64_MAX / (uint64_t)c->n_ranks)
        o = c->bytes * (uint64_t)c->n_ranks;
      else if (c->coll == ET_COLL_REDUCE_SCATTER)
        o = c->bytes / (uint64_t)c->n_ranks;
      if (o > 0 && (b = best_fit(tree, dev, o, fit_hi(o), &n)) != NULL)
        st->by_output++;
    }
    if (b == NULL) {
      st->no_match++;
      continue;
    }
    st->linked++;
    st->ambiguous += n > 1;
    out[qk->idx].buffer = (uint64_t)b->addr;
    out[qk->idx].alloc_ps = b->ts - r->window_abs;
  }
  g_tree_destroy(tree);
  g_hash_table_destroy(live);
  g_array_free(q, TRUE);
  g_array_free(mem, TRUE);
}

char *kt_mem_summary(int rank, const kt_mem_stats *st)
{
  if (st->mem_events == 0)
    return NULL;
  return g_strdup_printf("rank %d: [memory] events: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " communication "
                         "kernel(s) matched to the latest live allocation of a fitting size on their device (a "
                         "heuristic, see doc/libraries.md; %" G_GUINT64_FORMAT " ambiguous, %" G_GUINT64_FORMAT
                         " through the output size); unlinked: %" G_GUINT64_FORMAT " without a launch, %"
                         G_GUINT64_FORMAT " without a size, %" G_GUINT64_FORMAT " without a fitting live "
                         "allocation (these use the synthetic lifecycle); %" G_GUINT64_FORMAT " free(s) of "
                         "buffers allocated before the trace", rank, st->linked, st->comms, st->ambiguous,
                         st->by_output, st->no_launch, st->no_size, st->no_match, st->unknown_frees);
}
