/* kineto_threads.c: sync targets and cross-thread joins of the Kineto
 * frontend (kineto_threads.h).  It reads a kt_rank and its trace and calls
 * nothing in the other kineto files (its own binary searches), so the
 * stages that call it stay acyclic. */
#include "config.h"

#include "frontends/kineto_threads.h"

#include <string.h>

static const kt_op *op_at(const kt_rank *r, uint32_t i) { return &g_array_index(r->ops, kt_op, i); }

/* The last op of stream s issued before t (ops of a stream are in start
 * order, which is their issue order: FIFO), KT_NONE when none: a binary
 * search, O(log n). */
static uint32_t last_issued_before(const kt_rank *r, uint32_t s, sim_time_ps t)
{
  uint32_t lo = r->stream_first[s], hi = r->stream_first[s + 1];
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (kt_op_issued(r, op_at(r, mid)) < t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo > r->stream_first[s] ? lo - 1 : KT_NONE;
}

/* The dense stream index of (device, stream), or -1: a binary search. */
static int64_t stream_of(const kt_rank *r, int32_t device, int32_t stream)
{
  int64_t key = (int64_t)(((uint64_t)(uint32_t)device << 32) | (uint32_t)stream);
  uint32_t lo = 0, hi = r->n_streams;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (r->stream_keys[mid] < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < r->n_streams && r->stream_keys[lo] == key ? (int64_t)lo : -1;
}

static int cmp_target(const void *a, const void *b)
{
  uint32_t x = ((const kt_sync_target *)a)->ev, y = ((const kt_sync_target *)b)->ev;
  return x < y ? -1 : x > y;
}

void kt_sync_targets_extract(kt_rank *r)
{
  const kt_trace *t = r->trace;
  GHashTable *sync_by_corr = g_hash_table_new(g_int64_hash, g_int64_equal), *rec_by_corr = NULL;
  for (guint i = 0; i < t->events->len; i++) {
    kt_event *e = &g_array_index(t->events, kt_event, i);
    if (e->kind == KT_EV_HOST_SYNC && e->correlation != KT_ABSENT)
      g_hash_table_insert(sync_by_corr, &e->correlation, GUINT_TO_POINTER(i + 1));
  }
  for (guint i = 0; i < t->events->len; i++) {
    const kt_event *e = &g_array_index(t->events, kt_event, i);
    if (e->kind != KT_EV_CUDA_SYNC || e->correlation == KT_ABSENT)
      continue;
    const char *name = kt_str(t, e->name);
    gboolean dev = !strcmp(name, "Context Sync"), evs = !strcmp(name, "Event Sync");
    if (!dev && !evs && strcmp(name, "Stream Sync"))
      continue;
    gpointer v = g_hash_table_lookup(sync_by_corr, &e->correlation);
    if (!v)
      continue;
    uint32_t call = GPOINTER_TO_UINT(v) - 1;
    kt_sync_target st = { call, KT_NONE, (uint8_t)dev };
    sim_time_ps at = g_array_index(t->events, kt_event, call).ts - r->window_abs;
    int64_t s = evs ? (e->wait_stream >= 0 ? stream_of(r, e->device, e->wait_stream) : -1)
                    : stream_of(r, e->device, e->stream);
    if (evs && e->aux != KT_ABSENT) {
      /* An event sync waits for the ops before the cudaEventRecord it names. */
      if (!rec_by_corr) {
        rec_by_corr = g_hash_table_new(g_int64_hash, g_int64_equal);
        for (guint k = 0; k < t->events->len; k++) {
          kt_event *q = &g_array_index(t->events, kt_event, k);
          if (q->kind == KT_EV_RECORD && q->correlation != KT_ABSENT)
            g_hash_table_insert(rec_by_corr, &q->correlation, GUINT_TO_POINTER(k + 1));
        }
      }
      gpointer rv = g_hash_table_lookup(rec_by_corr, &e->aux);
      if (rv)
        at = g_array_index(t->events, kt_event, GPOINTER_TO_UINT(rv) - 1).ts - r->window_abs;
    }
    if (!dev && s < 0)
      continue; /* a stream with no op in the window: nothing to wait for */
    if (!dev)
      st.op = last_issued_before(r, (uint32_t)s, at);
    g_array_append_val(r->sync_targets, st);
  }
  g_array_sort(r->sync_targets, cmp_target);
  g_hash_table_destroy(sync_by_corr);
  if (rec_by_corr)
    g_hash_table_destroy(rec_by_corr);
}

static const kt_sync_target *stated(const kt_rank *r, uint32_t ev)
{
  kt_sync_target key = { ev, 0, 0 };
  return r->sync_targets->len ? bsearch(&key, r->sync_targets->data, r->sync_targets->len, sizeof key, cmp_target)
                              : NULL;
}

/* The last op of stream s that a device-wide synchronisation call
 * [start, end] waited for: issued before the call began and ended before
 * it returned.  Stream order is FIFO, so after the binary search the walk
 * back is short; it is bounded at 16 steps. */
static uint32_t device_op(const kt_rank *r, uint32_t s, sim_time_ps start, sim_time_ps end)
{
  uint32_t k = last_issued_before(r, s, start);
  for (uint32_t steps = 0; k != KT_NONE && k >= r->stream_first[s] && steps < 16; steps++, k--) {
    if (op_at(r, k)->end <= end)
      return k;
    if (k == r->stream_first[s])
      break;
  }
  return KT_NONE;
}

kt_sync_how kt_sync_resolve(const kt_rank *r, uint32_t ev, gboolean device, sim_time_ps start, sim_time_ps end,
                            const uint32_t *own_last, uint32_t *out)
{
  for (uint32_t s = 0; s < r->n_streams; s++)
    out[s] = KT_NONE;
  const kt_sync_target *st = stated(r, ev);
  if (device || (st && st->device)) {
    for (uint32_t s = 0; s < r->n_streams; s++)
      out[s] = device_op(r, s, start, end);
    return st ? KT_SYNC_STATED : KT_SYNC_DEVICE;
  }
  if (st) {
    if (st->op != KT_NONE && op_at(r, st->op)->end <= end)
      out[op_at(r, st->op)->stream] = st->op;
    return KT_SYNC_STATED;
  }
  /* The timeline: the stream whose last op issued before the call ended
   * last while the call ran, at most KT_SYNC_TOL_PS or half the call
   * before it returned (a slow return: the call still waited longer than
   * it took to return). */
  uint32_t best = KT_NONE;
  for (uint32_t s = 0; s < r->n_streams; s++) {
    uint32_t k = last_issued_before(r, s, start);
    if (k == KT_NONE)
      continue;
    sim_time_ps e = op_at(r, k)->end;
    if (e >= start && e <= end && (best == KT_NONE || e > op_at(r, best)->end))
      best = k;
  }
  if (best != KT_NONE && end - op_at(r, best)->end > MAX(KT_SYNC_TOL_PS, (end - start) / 2))
    best = KT_NONE;
  if (best != KT_NONE) {
    out[op_at(r, best)->stream] = best;
    return KT_SYNC_INFERRED;
  }
  for (uint32_t s = 0; s < r->n_streams; s++)
    if (own_last[s] != KT_NONE && op_at(r, own_last[s])->end <= end)
      out[s] = own_last[s];
  return end - start > KT_SYNC_TOL_PS ? KT_SYNC_UNRESOLVED : KT_SYNC_ASSUMED;
}

/* First span of thread `thread` at or after index lo with start >= t in
 * [lo, hi) (spans of one thread sorted by start). */
static guint first_from(const GArray *spans, guint lo, guint hi, sim_time_ps t)
{
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    if (g_array_index(spans, kt_call_span, mid).start < t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

const kt_call_span *kt_join_source(const GArray *spans, int64_t thread, sim_time_ps g0, sim_time_ps g1)
{
  const kt_call_span *best = NULL;
  sim_time_ps best_end = -1;
  if (g1 - g0 < KT_JOIN_MIN_GAP_PS)
    return NULL;
  for (guint a = 0; a < spans->len;) {
    int64_t u = g_array_index(spans, kt_call_span, a).thread;
    guint b = a;
    while (b < spans->len && g_array_index(spans, kt_call_span, b).thread == u)
      b++;
    if (u != thread) {
      /* The thread's last call starting at or before g1 must end inside
       * the gap, and nothing of it may run between that end and g1. */
      guint k = first_from(spans, a, b, g1 + 1);
      const kt_call_span *c = k > a ? &g_array_index(spans, kt_call_span, k - 1) : NULL;
      if (c && c->end >= g0 && c->end <= g1 && c->end > best_end) {
        guint f = first_from(spans, a, b, g0);
        gboolean inside = f < k && (f == a || g_array_index(spans, kt_call_span, f - 1).end <= g0);
        sim_time_ps rest = g1 - c->end;
        if (rest <= KT_JOIN_TOL_PS || (inside && 2 * rest <= g1 - g0)) {
          best = c;
          best_end = c->end;
        }
      }
    }
    a = b;
  }
  return best;
}

const char *kt_sync_how_name(kt_sync_how h)
{
  static const char *const n[KT_SYNC_N] = { "device-wide", "stated by cuda_sync events", "inferred from the timeline",
                                            "did not wait: own launches assumed",
                                            "unresolved: waited for nothing in the trace, own launches assumed" };
  return h < KT_SYNC_N ? n[h] : "?";
}
