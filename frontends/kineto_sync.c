/* kineto_sync.c: the cross-stream dependencies of one rank: edges from
 * stream and event synchronisation, cuda_sync targets and waits inferred
 * from the timeline, kept only when the measured timeline agrees.
 * O(ops (streams + 1) log n + edges). */
#include "config.h"

#include "frontends/kineto_extract_internal.h"

#include <stdlib.h>
#include <string.h>

int kt_cmp_i64(const void *a, const void *b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static void add_sync_edge(kt_xctx *c, uint32_t parent, uint32_t child)
{
  if (parent == KT_NONE || child == KT_NONE || parent == child)
    return;
  const kt_op *p = &g_array_index(c->r->ops, kt_op, parent), *q = &g_array_index(c->r->ops, kt_op, child);
  if (p->stream == q->stream)
    return; /* already ordered by the stream */
  if (p->end > q->start) {
    /* The measured timeline contradicts the edge: keep the measured overlap. */
    c->r->inconsistent_sync_edges++;
    return;
  }
  kt_edge e = { parent, child };
  g_array_append_val(c->r->sync_edges, e);
}

uint32_t kt_stream_upper(const kt_rank *r, uint32_t s, sim_time_ps t)
{
  uint32_t lo = r->stream_first[s], hi = r->stream_first[s + 1];
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (g_array_index(r->ops, kt_op, mid).start <= t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Ops of stream s are [first[s], first[s+1]) in start order, which is
 * their issue order (a stream is FIFO).  The index of the first op of s
 * issued at or after t (first[s+1] when none): a binary search. */
static uint32_t first_issued_from(kt_xctx *c, uint32_t s, sim_time_ps t)
{
  const uint32_t *first = c->r->stream_first;
  uint32_t lo = first[s], hi = first[s + 1];
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (kt_op_issued(c->r, &g_array_index(c->r->ops, kt_op, mid)) < t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* The dense stream index of (device, stream), or -1. */
static int64_t stream_index(const kt_rank *r, int32_t device, int32_t stream)
{
  int64_t key = (int64_t)(((uint64_t)(uint32_t)device << 32) | (uint32_t)stream);
  int64_t *found = r->n_streams ? bsearch(&key, r->stream_keys, r->n_streams, sizeof(int64_t), kt_cmp_i64) : NULL;
  return found ? found - r->stream_keys : -1;
}

/* cuda_sync events ("Stream Wait Event": args stream = the waiting stream,
 * wait_on_stream = the stream the event was recorded on,
 * wait_on_cuda_event_record_corr_id = the cudaEventRecord's correlation).
 * Their timestamps are those of the API call on the CPU, which may run far
 * ahead of the GPU.  Producer: the last op issued on wait_on_stream before
 * the cudaEventRecord call (when wait_on_stream is absent, the last op the
 * recording thread launched before it); consumer: the first op issued on
 * the waiting stream at or after the wait call.  Binary searches:
 * O(log n) per sync event. */
static void cuda_sync_edges(kt_xctx *c, GHashTable *threads)
{
  const uint32_t *first = c->r->stream_first;
  kt_trace *t = c->t;
  kt_rank *r = c->r;
  for (guint i = 0; i < t->events->len; i++) {
    const kt_event *e = kt_x_ev(t, i);
    if (e->kind != KT_EV_CUDA_SYNC || e->aux == KT_ABSENT || e->stream < 0)
      continue;
    gpointer rv = g_hash_table_lookup(c->record_by_corr, &e->aux);
    if (!rv)
      continue;
    const kt_event *rec = kt_x_ev(t, GPOINTER_TO_UINT(rv) - 1);
    uint32_t prod = KT_NONE;
    int64_t ps = e->wait_stream >= 0 ? stream_index(r, e->device, e->wait_stream) : -1;
    if (ps >= 0) {
      uint32_t k = first_issued_from(c, (uint32_t)ps, rec->ts - r->window_abs);
      if (k > first[ps])
        prod = k - 1;
    } else {
      gint64 key = kt_thread_key(rec);
      GArray *a = g_hash_table_lookup(threads, &key);
      if (a) {
        guint lo = 0, hi = a->len;
        while (lo < hi) {
          guint mid = (lo + hi) / 2;
          if (kt_x_ev(t, g_array_index(a, uint32_t, mid))->ts <= rec->ts)
            lo = mid + 1;
          else
            hi = mid;
        }
        for (guint k = lo; k-- > 0 && prod == KT_NONE;) {
          uint32_t ei = g_array_index(a, uint32_t, k);
          if (kt_x_ev(t, ei)->kind == KT_EV_LAUNCH)
            prod = c->op_of_event[ei];
        }
      }
    }
    int64_t ws = stream_index(r, e->device, e->stream);
    uint32_t cons = KT_NONE;
    if (ws >= 0) {
      uint32_t k = first_issued_from(c, (uint32_t)ws, e->ts - r->window_abs);
      if (k < first[ws + 1])
        cons = k;
    }
    add_sync_edge(c, prod, cons);
  }
}

/* How close (ps) the end of an op on another stream must be to the start of
 * a waiting op for the wait to be attributed to it: GPU event waits resolve
 * within microseconds. */
#define KT_INFER_WAIT_TOL_PS (20 * SIM_PS_PER_US)
/* Only idle this long is worth an inferred edge: shorter gaps after a
 * launch are the launch's own latency (a few microseconds). */
#define KT_INFER_MIN_IDLE_PS (10 * SIM_PS_PER_US)

/* The producer of a stream wait the record/wait pairs do not explain, for
 * op x that started at least KT_INFER_MIN_IDLE_PS after its stream
 * predecessor, its launch and ready[x] (the end of its cross-stream parents
 * found so far) ended: the op on another stream that ended last at or
 * before x's start, at most KT_INFER_WAIT_TOL_PS before it, and later than
 * all of those, so that it explains x's wait.
 * KT_NONE when no op does.  first[] indexes the ops of each stream (sorted
 * by start, FIFO, so ends are monotone); a binary search and a walk back
 * of at most 16 ops per stream: O(streams log n). */
static uint32_t infer_producer(kt_xctx *c, const sim_time_ps *ready, uint32_t x)
{
  const uint32_t *first = c->r->stream_first;
  const kt_rank *r = c->r;
  const kt_op *op = &g_array_index(r->ops, kt_op, x);
  sim_time_ps explained = ready[x];
  if (x > first[op->stream])
    explained = MAX(explained, g_array_index(r->ops, kt_op, x - 1).end);
  if (op->launch != KT_NONE)
    explained = MAX(explained, kt_x_ev(c->t, op->launch)->ts - r->window_abs);
  uint32_t best = KT_NONE;
  sim_time_ps best_end = explained;
  if (op->start - explained < KT_INFER_MIN_IDLE_PS)
    return KT_NONE;
  for (uint32_t s = 0; s < r->n_streams; s++) {
    if (s == op->stream)
      continue;
    for (uint32_t k = kt_stream_upper(r, s, op->start), steps = 0; k-- > first[s] && steps < 16; steps++) {
      sim_time_ps end = g_array_index(r->ops, kt_op, k).end;
      if (end > op->start)
        continue;
      if (end > best_end && op->start - end <= KT_INFER_WAIT_TOL_PS) {
        best = k;
        best_end = end;
      }
      break;
    }
  }
  return best;
}

/* Waits the record/wait pairs cannot place.  Traces without
 * cudaEventRecord calls (older Kineto versions did not record them) show a
 * cudaStreamWaitEvent but not what it waits for, nor on which stream; and
 * the waiting op is often launched by another thread than the wait (DDP's
 * gradient hooks wait on a background thread, the optimizer launches on
 * the main one), which the per-thread pairing cannot see.  So the edge is
 * inferred from the timeline: an op x whose start its stream predecessor,
 * launch and known cross-stream parents do not explain, and which starts
 * right after an op p on another stream ended (infer_producer), depends on
 * p when some thread made a cudaStreamWaitEvent call after p was issued
 * and before x was.  waits: the times of every wait call, sorted.  Counted
 * in kt_rank.inferred_sync_edges.  O(ops (streams + 1) log n + edges). */
static void infer_wait_edges(kt_xctx *c, const GArray *waits)
{
  kt_rank *r = c->r;
  sim_time_ps *ready = g_new0(sim_time_ps, r->ops->len ? r->ops->len : 1);
  for (guint i = 0; i < r->sync_edges->len; i++) {
    kt_edge e = g_array_index(r->sync_edges, kt_edge, i);
    ready[e.child] = MAX(ready[e.child], g_array_index(r->ops, kt_op, e.parent).end);
  }
  for (guint x = 0; x < r->ops->len; x++) {
    uint32_t p = infer_producer(c, ready, x);
    if (p == KT_NONE)
      continue;
    sim_time_ps from = kt_op_issued(c->r, &g_array_index(r->ops, kt_op, p));
    sim_time_ps to = kt_op_issued(c->r, &g_array_index(r->ops, kt_op, x));
    guint lo = 0, hi = waits->len;
    while (lo < hi) {
      guint mid = (lo + hi) / 2;
      if (g_array_index(waits, sim_time_ps, mid) < from)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo == waits->len || g_array_index(waits, sim_time_ps, lo) > to)
      continue;
    guint before = r->sync_edges->len;
    add_sync_edge(c, p, x);
    r->inferred_sync_edges += r->sync_edges->len - before;
  }
  g_free(ready);
}

/* Cross-stream dependencies from record/wait pairs, cuda_sync events and
 * host synchronisation (see kineto.md §8); without cuda_sync events, the
 * waits the pairs cannot place are inferred from the timeline
 * (infer_wait_edges). */
void kt_x_sync_edges(kt_xctx *c)
{
  kt_trace *t = c->t;
  kt_rank *r = c->r;
  /* Per-thread host call sequences, ts-ordered. */
  GHashTable *threads = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, (GDestroyNotify)g_array_unref);
  gboolean have_cuda_sync = FALSE;
  for (guint i = 0; i < t->events->len; i++) {
    const kt_event *e = kt_x_ev(t, i);
    if (e->kind == KT_EV_CUDA_SYNC)
      have_cuda_sync = TRUE;
    if (e->kind != KT_EV_LAUNCH && e->kind != KT_EV_RECORD && e->kind != KT_EV_WAIT && e->kind != KT_EV_HOST_SYNC)
      continue;
    gint64 *k = kt_x_thread_key(e);
    GArray *a = g_hash_table_lookup(threads, k);
    if (!a) {
      a = g_array_new(FALSE, FALSE, sizeof(uint32_t));
      g_hash_table_insert(threads, k, a);
    } else {
      g_free(k);
    }
    uint32_t idx = i;
    g_array_append_val(a, idx);
  }
  /* Deterministic thread order. */
  GList *keys = g_list_sort(g_hash_table_get_keys(threads), (GCompareFunc)kt_cmp_i64);
  uint32_t *last_on_stream = g_new(uint32_t, r->n_streams ? r->n_streams : 1);
  for (GList *l = keys; l; l = l->next) {
    GArray *a = g_hash_table_lookup(threads, l->data);
    kt_x_sort_by_ts(t, a);
    uint32_t last_op = KT_NONE, recorded = KT_NONE, waiting = KT_NONE;
    gboolean host_sync = FALSE;
    for (uint32_t s = 0; s < r->n_streams; s++)
      last_on_stream[s] = KT_NONE;
    for (guint i = 0; i < a->len; i++) {
      uint32_t ei = g_array_index(a, uint32_t, i);
      const kt_event *e = kt_x_ev(t, ei);
      switch (e->kind) {
      case KT_EV_LAUNCH: {
        uint32_t op = c->op_of_event[ei];
        if (op == KT_NONE)
          break;
        if (waiting != KT_NONE && !have_cuda_sync) {
          add_sync_edge(c, waiting, op);
          waiting = KT_NONE;
        }
        if (host_sync) {
          for (uint32_t s = 0; s < r->n_streams; s++)
            add_sync_edge(c, last_on_stream[s], op);
          host_sync = FALSE;
        }
        last_op = op;
        last_on_stream[g_array_index(r->ops, kt_op, op).stream] = op;
        break;
      }
      case KT_EV_RECORD:
        recorded = last_op;
        break;
      case KT_EV_WAIT:
        waiting = recorded;
        break;
      case KT_EV_HOST_SYNC:
        host_sync = TRUE;
        break;
      default:
        break;
      }
    }
  }
  g_free(last_on_stream);
  if (!have_cuda_sync) {
    GArray *waits = g_array_new(FALSE, FALSE, sizeof(sim_time_ps));
    for (guint i = 0; i < t->events->len; i++)
      if (kt_x_ev(t, i)->kind == KT_EV_WAIT) {
        sim_time_ps at = kt_x_ev(t, i)->ts - r->window_abs;
        g_array_append_val(waits, at);
      }
    g_array_sort(waits, kt_cmp_i64);
    if (waits->len)
      infer_wait_edges(c, waits);
    g_array_free(waits, TRUE);
  }
  if (have_cuda_sync)
    cuda_sync_edges(c, threads);
  g_list_free(keys);
  g_hash_table_destroy(threads);
}
