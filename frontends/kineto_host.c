/* kineto_host.c: the host launch model of a rank's graph (see the
 * comment below and kineto_graph_internal.h): CPU launch and
 * synchronisation calls as chains of CPU nodes tied to the GPU ops.
 */
#include "config.h"

#include "frontends/kineto_graph_internal.h"

#include <stdlib.h>
#include <string.h>

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
  uint32_t n = kt_graph_add_node(g, ET_NODE_COMP, ET_FLAG_CPU_OP | ET_FLAG_DELAY | flags, dur, start, KT_NONE, name);
  kt_graph_add_edge(g, *last, n);
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
    kt_graph_add_edge(x->g, src->node, hg->node);
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
void kt_host_chains(kt_graph *g, const kt_rank *r, sim_time_ps min_gap_ps, uint32_t *anchor,
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
