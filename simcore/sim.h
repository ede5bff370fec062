/* sim.h: wisp's discrete-event engine.
 *
 * One clock, one queue.  Time is an integer count of picoseconds.  Events are
 * totally ordered by (time, insertion sequence): two events at the same time
 * run in the order they were scheduled, so every run is deterministic.  The
 * queue is a monotone radix heap (events are never scheduled before `now`):
 * push O(1), pop amortized O(1) (at most 8 moves per event), cancel O(1)
 * amortized (the entry stays as a tombstone until reached or the queue is
 * compacted); see sim_engine.c for the structure and the proof that ties
 * keep their order.  Bucket arrays and handle slots are reused, so a
 * steady-state run rarely allocates.  There is no global state: every call
 * takes the engine, and several engines can live in one process.
 *
 * A handler receives the engine, the context pointer given at scheduling and
 * one 64-bit argument.  Handlers may schedule and cancel events freely.
 *
 * Handles: schedule with sim_schedule_at/after only when the event may be
 * cancelled, and keep the handle; every other event is posted
 * (sim_post_at/after), which costs no handle slot.
 *
 * Teardown (the one rule every user of the engine follows): a model that
 * schedules events whose context points into its own state (net/, the
 * collectives, the replay) is freed after the last sim_run() has returned
 * and before the engine, in the reverse order of creation.  No handler
 * runs after that last sim_run, so events still queued are simply dropped
 * by sim_engine_free(); a model's free function may also withdraw its
 * events with sim_cancel() (net_free does), but it must not schedule any.
 * Freeing a model while a later sim_run() could still reach its events is
 * a use after free.  A free function touches the engine only to withdraw
 * events its model still has queued, so a model with none queued (all its
 * work finished) may be read and freed after the engine is gone, for its
 * statistics (regress/test_net.c keeps a net that way).
 */
#ifndef WISP_SIM_H
#define WISP_SIM_H

#include "common/wisp_util.h"

G_BEGIN_DECLS

typedef struct sim_engine sim_engine;
typedef void (*sim_handler)(sim_engine *sim, void *ctx, uint64_t arg);

/* A handle names a pending event so it can be cancelled.  Handles are never
 * reused while the event is pending; a stale handle is detected. */
typedef uint64_t sim_event_id;
#define SIM_EVENT_NONE ((sim_event_id)0)

/* checked = TRUE verifies the queue invariants after every push and pop (slow;
 * for tests and --check runs). */
sim_engine *sim_engine_new(gboolean checked);
/* Frees the engine and drops the events still queued without running
 * them; free its users first (teardown rule above). */
void sim_engine_free(sim_engine *sim);

sim_time_ps sim_now(const sim_engine *sim);

/* Schedule fn(sim, ctx, arg) at absolute time t >= sim_now(sim) (scheduling
 * into the past is a programming error and asserts). */
sim_event_id sim_schedule_at(sim_engine *sim, sim_time_ps t, sim_handler fn, void *ctx, uint64_t arg);
sim_event_id sim_schedule_after(sim_engine *sim, sim_time_ps delay, sim_handler fn, void *ctx, uint64_t arg);

/* Like sim_schedule_at/after but without a handle: the event cannot be
 * cancelled, and posting it touches no per-event bookkeeping, which makes it
 * the cheapest way to schedule.  Use it for every event that is never
 * cancelled. */
void sim_post_at(sim_engine *sim, sim_time_ps t, sim_handler fn, void *ctx, uint64_t arg);
void sim_post_after(sim_engine *sim, sim_time_ps delay, sim_handler fn, void *ctx, uint64_t arg);

/* Times at or past SIM_TIME_LIMIT (2^61 ps, about 26.7 days of simulated
 * time) are not scheduled.  Asking for one (sim_*_at with t >= the limit,
 * sim_*_after with a negative delay or one reaching it) is not an assertion:
 * the event is dropped (the _schedule_ calls return SIM_EVENT_NONE), the run
 * stops after the current handler and sim_time_overflowed() stays TRUE, so
 * the caller reports that the input's sizes or times are out of range. */
gboolean sim_time_overflowed(const sim_engine *sim);
/* Sets that flag (and stops the run) from a model layer whose own time
 * arithmetic would pass the range (net's transfer times). */
void sim_flag_overflow(sim_engine *sim);

/* Remove a pending event; returns FALSE when it already ran or was cancelled. */
gboolean sim_cancel(sim_engine *sim, sim_event_id id);

/* Run until the queue is empty, sim_stop() is called, or the next event lies
 * after `until` (pass SIM_TIME_MAX for no bound).  Returns the number of
 * events processed by this call.  The bound is inclusive (events at `until`
 * run); events after it stay queued for a later sim_run.  Unless stopped, a
 * bounded run leaves the clock at `until`, so sim_schedule_after() then
 * counts from the bound; an unbounded run leaves it at the last event. */
uint64_t sim_run(sim_engine *sim, sim_time_ps until);
void sim_stop(sim_engine *sim);

size_t sim_pending(const sim_engine *sim);
uint64_t sim_events_processed(const sim_engine *sim);
size_t sim_max_pending(const sim_engine *sim);

/* Verify the queue invariants (every entry in the radix bucket its time
 * selects, equal times in scheduling order) and the slot bookkeeping (every
 * slot queued once or free once; cancelled-event count); O(n).  Returns FALSE and
 * describes the first violation in *why (static string) when broken. */
gboolean sim_check_invariants(const sim_engine *sim, const char **why);

/* Print "wisp: N events in X s (Y events/s)" to `out`: called at the end of
 * every simulation run. */
void sim_print_speed(const sim_engine *sim, double wall_seconds, FILE *out);

G_END_DECLS
#endif
