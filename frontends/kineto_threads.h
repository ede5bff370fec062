/* kineto_threads.h: what host synchronisation calls wait for and which CPU
 * threads join which (private to frontends/kineto*.c; exposed for tests).
 *
 * A CPU thread of a PyTorch job waits in two ways the trace does not
 * always spell out:
 *   - a host synchronisation call (cudaStreamSynchronize,
 *     cudaEventSynchronize, ...) waits for the streams it names, whoever
 *     launched their work.  With cuda_sync events ("Stream Sync", "Event
 *     Sync", "Context Sync", the call's correlation) the trace states the
 *     stream; without them the stream is inferred from the timeline: the
 *     one whose last op issued before the call ended last while the call
 *     ran, at most KT_SYNC_TOL_PS (or half the call) before it returned.  A device synchronisation
 *     waits for every stream by definition.
 *   - a thread blocked in a call that is not a runtime call (the main
 *     thread in backward() while the autograd thread launches the backward
 *     pass and DDP's hooks, a Work.wait(), a queue get) shows as a gap in
 *     its calls.  No Kineto event states such a join; it is inferred when
 *     another launching thread's last call before the gap's end ended
 *     inside the gap, that thread then stayed idle until the gap's end, and
 *     either the gap ended at most KT_JOIN_TOL_PS after that call or the
 *     other thread's calls all lie inside the gap (it was handed work when
 *     the gap began and the waiting thread resumed after it finished) and
 *     the time after its last call is at most half the gap.
 *
 * Stage 2 (kt_sync_targets_extract) reads the full event table once;
 * stage 3 (the host launch model of kineto_graph.c) calls kt_sync_resolve
 * per sync call and kt_join_source per CPU gap.
 */
#ifndef WISP_KINETO_THREADS_H
#define WISP_KINETO_THREADS_H

#include "frontends/kineto_rank.h"

G_BEGIN_DECLS

/* A synchronisation call returns within this long after the op it waited
 * for ended (the return overhead is a few microseconds). */
#define KT_SYNC_TOL_PS (20 * SIM_PS_PER_US)
/* A gap shorter than KT_JOIN_MIN_GAP_PS is host work, never a join (a
 * thread's ordinary Python between two calls often ends within
 * microseconds of another thread's call by chance); a joining thread
 * resumes within KT_JOIN_TOL_PS of the joined thread's last call. */
#define KT_JOIN_MIN_GAP_PS (50 * SIM_PS_PER_US)
#define KT_JOIN_TOL_PS (20 * SIM_PS_PER_US)

/* How a host synchronisation call's target was found. */
typedef enum {
  KT_SYNC_DEVICE = 0,  /* a device synchronisation: every stream (the API says so) */
  KT_SYNC_STATED,      /* a cuda_sync event names the stream (or the device) */
  KT_SYNC_INFERRED,    /* from the timeline: the stream whose op ended just before the call returned */
  KT_SYNC_ASSUMED,     /* the call did not wait (nothing ended while it ran): the ops its own thread launched */
  KT_SYNC_UNRESOLVED,  /* it waited, but for nothing the trace shows: the ops its own thread launched */
  KT_SYNC_N
} kt_sync_how;

/* Fills r->sync_targets from the cuda_sync events of r's trace (full event
 * table; before kt_rank_shrink): for every "Stream Sync" / "Event Sync" /
 * "Context Sync" whose correlation is a host synchronisation call's, the
 * op that call waited for (the last op of the named stream issued before
 * the call; for an event, before the cudaEventRecord it names) or the
 * whole device.  O(E + S log n) for E events and S sync events. */
void kt_sync_targets_extract(kt_rank *r);

/* The ops the host synchronisation call `ev` ([start, end] relative to the
 * window; device: a device-wide call by its name) waited for, one per
 * stream in out[0 .. r->n_streams) (KT_NONE for none), each ended by
 * `end`; own_last[s]: the last op the calling thread launched on stream s
 * before the call (the fallback).  Returns how the target was found.
 * O(streams log n). */
kt_sync_how kt_sync_resolve(const kt_rank *r, uint32_t ev, gboolean device, sim_time_ps start, sim_time_ps end,
                            const uint32_t *own_last, uint32_t *out);

/* One call node of a CPU thread's chain, for join inference. */
typedef struct {
  int64_t thread;
  int64_t tid;             /* the trace's tid (names) */
  sim_time_ps start, end;  /* measured, relative to the window */
  uint32_t node;           /* its graph node */
} kt_call_span;

/* The call node of another thread that a gap [g0, g1] of `thread` joined
 * (the rule above), KT_NONE when none; *end: its measured end.  spans:
 * every thread's call nodes sorted by (thread, start).  O(threads log n). */
const kt_call_span *kt_join_source(const GArray *spans, int64_t thread, sim_time_ps g0, sim_time_ps g1);

const char *kt_sync_how_name(kt_sync_how h);

G_END_DECLS
#endif
