/* test_sim.c: tests of the discrete-event engine (simcore/sim.h).
 *
 * The expected order of events always comes from the documented rule, not
 * from a previous run: events run by increasing time, and events with equal
 * times run in the order they were scheduled.  Where a test needs the whole
 * expected sequence it computes it independently (a stable sort of the
 * scheduled (time, insertion index) pairs, or a brute-force minimum over a
 * list of live events).
 */
#include "config.h"
#include "simcore/sim.h"
#include "simcore/sim_testhooks.h"

#include <stdlib.h>
#include <string.h>

/* One executed event as a handler saw it. */
typedef struct {
  sim_time_ps t;
  uint64_t arg;
} trace_rec;

static void record_handler(sim_engine *sim, void *ctx, uint64_t arg)
{
  GArray *trace = ctx;
  trace_rec r = {sim_now(sim), arg};
  g_array_append_val(trace, r);
}

static GArray *trace_new(void)
{
  return g_array_new(FALSE, FALSE, sizeof(trace_rec));
}

static trace_rec trace_at(GArray *trace, guint i)
{
  return g_array_index(trace, trace_rec, i);
}

/* ---- ordering ---- */

/* 1000 events at one time must run in scheduling order (the tie rule), so
 * the i-th executed event carries argument i. */
static void test_ties_in_insertion_order(void)
{
  sim_engine *sim = sim_engine_new(TRUE);
  GArray *trace = trace_new();
  for (uint64_t i = 0; i < 1000; i++)
    sim_schedule_at(sim, 5000, record_handler, trace, i);
  g_assert_cmpuint(sim_run(sim, SIM_TIME_MAX), ==, 1000);
  g_assert_cmpuint(trace->len, ==, 1000);
  for (guint i = 0; i < trace->len; i++) {
    g_assert_cmpint(trace_at(trace, i).t, ==, 5000);
    g_assert_cmpuint(trace_at(trace, i).arg, ==, i);
  }
  g_array_free(trace, TRUE);
  sim_engine_free(sim);
}

typedef struct {
  sim_time_ps t;
  uint64_t idx;
} sched_rec;

static int sched_cmp(const void *a, const void *b)
{
  const sched_rec *x = a, *y = b;
  if (x->t != y->t)
    return x->t < y->t ? -1 : 1;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Events scheduled at scrambled times, many of them equal (times are drawn
 * from only 50 values for 3000 events), must come out in the order of a
 * sort by (time, insertion index), computed here with qsort. */
static void test_scrambled_come_out_sorted(void)
{
  GRand *rng = g_rand_new_with_seed(12345);
  sim_engine *sim = sim_engine_new(FALSE);
  GArray *trace = trace_new();
  enum { N = 3000 };
  sched_rec *expect = g_new(sched_rec, N);
  for (uint64_t i = 0; i < N; i++) {
    sim_time_ps t = (sim_time_ps)g_rand_int_range(rng, 0, 50) * 1000;
    expect[i] = (sched_rec){t, i};
    sim_schedule_at(sim, t, record_handler, trace, i);
  }
  qsort(expect, N, sizeof(sched_rec), sched_cmp);
  g_assert_cmpuint(sim_run(sim, SIM_TIME_MAX), ==, N);
  g_assert_cmpuint(trace->len, ==, N);
  for (guint i = 0; i < N; i++) {
    g_assert_cmpint(trace_at(trace, i).t, ==, expect[i].t);
    g_assert_cmpuint(trace_at(trace, i).arg, ==, expect[i].idx);
  }
  /* The last event runs at the largest drawn time, so the clock ends there. */
  g_assert_cmpint(sim_now(sim), ==, expect[N - 1].t);
  g_free(expect);
  g_array_free(trace, TRUE);
  sim_engine_free(sim);
  g_rand_free(rng);
}

/* ---- random schedules with cancels, checked against a brute-force model ---- */

typedef struct {
  sim_time_ps t;
  uint64_t idx;
  sim_event_id id;
  gboolean live;
} model_ev;

typedef struct {
  GArray *evs; /* model_ev, indexed by insertion index */
  GRand *rng;
  guint64 ran;
  guint64 cancelled;
} model;

/* The handler checks that the engine picked the event the rule demands:
 * among live model events, the minimum by (time, insertion index).  The scan
 * is O(n); the test keeps n small. */
static void model_handler(sim_engine *sim, void *ctx, uint64_t arg)
{
  model *m = ctx;
  const char *why = NULL;
  g_assert_true(sim_check_invariants(sim, &why));
  g_assert_null(why);
  model_ev *best = NULL;
  for (guint i = 0; i < m->evs->len; i++) {
    model_ev *e = &g_array_index(m->evs, model_ev, i);
    if (e->live && (best == NULL || e->t < best->t || (e->t == best->t && e->idx < best->idx)))
      best = e;
  }
  g_assert_nonnull(best);
  g_assert_cmpuint(arg, ==, best->idx);
  g_assert_cmpint(sim_now(sim), ==, best->t);
  best->live = FALSE;
  m->ran++;
}

static void model_schedule(sim_engine *sim, model *m)
{
  /* Delays from a small range make equal times common. */
  sim_time_ps t = sim_now(sim) + g_rand_int_range(m->rng, 0, 20);
  model_ev e = {t, m->evs->len, 0, TRUE};
  e.id = sim_schedule_at(sim, t, model_handler, m, e.idx);
  g_assert_cmpuint(e.id, !=, SIM_EVENT_NONE);
  g_array_append_val(m->evs, e);
}

static size_t model_live(model *m)
{
  size_t n = 0;
  for (guint i = 0; i < m->evs->len; i++)
    n += g_array_index(m->evs, model_ev, i).live;
  return n;
}

/* Random interleaving of schedules, cancels (of live and of already-run or
 * cancelled events) and bounded runs, in checked mode, so the heap
 * invariant is verified after every push, pop and cancel.  The pending
 * count must always equal the model's count of live events. */
static void test_random_with_cancels(void)
{
  model m = {g_array_new(FALSE, FALSE, sizeof(model_ev)), g_rand_new_with_seed(777), 0, 0};
  sim_engine *sim = sim_engine_new(TRUE);
  guint64 stale_rejected = 0;
  for (int round = 0; round < 400; round++) {
    int op = g_rand_int_range(m.rng, 0, 10);
    if (op < 5) {
      for (int k = g_rand_int_range(m.rng, 1, 8); k > 0; k--)
        model_schedule(sim, &m);
    } else if (op < 8 && m.evs->len > 0) {
      guint pick = g_rand_int_range(m.rng, 0, m.evs->len);
      model_ev *e = &g_array_index(m.evs, model_ev, pick);
      /* Cancel succeeds exactly when the model says the event is live. */
      gboolean was_live = e->live;
      g_assert_cmpint(sim_cancel(sim, e->id), ==, was_live);
      if (was_live) {
        e->live = FALSE;
        m.cancelled++;
      } else {
        stale_rejected++;
      }
    } else {
      sim_time_ps until = sim_now(sim) + g_rand_int_range(m.rng, 0, 30);
      sim_run(sim, until);
      /* A bounded run that was not stopped leaves the clock at the bound. */
      g_assert_cmpint(sim_now(sim), ==, until);
    }
    g_assert_cmpuint(sim_pending(sim), ==, model_live(&m));
    const char *why = NULL;
    g_assert_true(sim_check_invariants(sim, &why));
  }
  sim_run(sim, SIM_TIME_MAX);
  /* Every scheduled event either ran or was cancelled, never both. */
  g_assert_cmpuint(m.ran + m.cancelled, ==, m.evs->len);
  g_assert_cmpuint(sim_events_processed(sim), ==, m.ran);
  g_assert_cmpuint(sim_pending(sim), ==, 0);
  /* The random mix must actually have exercised both cancel outcomes. */
  g_assert_cmpuint(m.cancelled, >, 0);
  g_assert_cmpuint(stale_rejected, >, 0);
  sim_engine_free(sim);
  g_rand_free(m.rng);
  g_array_free(m.evs, TRUE);
}

/* Cancelling most of a large queue compacts it: the keys kept in memory stay
 * within twice the live events (or the 32-tombstone floor below which the
 * engine does not bother), and the survivors still run in order. */
static void test_cancel_compacts(void)
{
  sim_engine *sim = sim_engine_new(FALSE);
  GArray *trace = trace_new();
  enum { N = 1000 };
  sim_event_id *ids = g_new(sim_event_id, N);
  /* Times run backwards (N - i) so the heap is not trivially sorted. */
  for (uint64_t i = 0; i < N; i++)
    ids[i] = sim_schedule_at(sim, (sim_time_ps)(N - i), record_handler, trace, i);
  for (guint i = 0; i < N; i++) {
    if (i % 10 != 0) {
      g_assert_true(sim_cancel(sim, ids[i]));
      size_t live = sim_pending(sim), keys = sim_debug_queued_keys(sim);
      g_assert_cmpuint(keys, <=, MAX(2 * live, live + 31));
    }
  }
  const char *why = NULL;
  g_assert_true(sim_check_invariants(sim, &why));
  /* Survivors: i = 0, 10, ..., 990 -> 100 events, at times N - i, so they
   * run with i decreasing: 990 first (time 10), 0 last (time 1000). */
  g_assert_cmpuint(sim_pending(sim), ==, 100);
  g_assert_cmpuint(sim_run(sim, SIM_TIME_MAX), ==, 100);
  for (guint k = 0; k < 100; k++) {
    uint64_t i = 990 - 10 * (uint64_t)k;
    g_assert_cmpuint(trace_at(trace, k).arg, ==, i);
    g_assert_cmpint(trace_at(trace, k).t, ==, (sim_time_ps)(N - i));
  }
  g_free(ids);
  g_array_free(trace, TRUE);
  sim_engine_free(sim);
}

/* ---- run-until, stop, cancel ---- */

static void test_run_until(void)
{
  sim_engine *sim = sim_engine_new(TRUE);
  GArray *trace = trace_new();
  sim_schedule_at(sim, 10, record_handler, trace, 1);
  sim_schedule_at(sim, 20, record_handler, trace, 2);
  sim_schedule_at(sim, 30, record_handler, trace, 3);
  /* The bound is inclusive: events at 10 and 20 run, the one at 30 stays. */
  g_assert_cmpuint(sim_run(sim, 20), ==, 2);
  g_assert_cmpint(sim_now(sim), ==, 20);
  g_assert_cmpuint(sim_pending(sim), ==, 1);
  /* Nothing lies in (20, 25]; the clock still advances to the bound. */
  g_assert_cmpuint(sim_run(sim, 25), ==, 0);
  g_assert_cmpint(sim_now(sim), ==, 25);
  /* Scheduling relative to the advanced clock: 25 + 3 = 28, before 30. */
  sim_schedule_after(sim, 3, record_handler, trace, 4);
  g_assert_cmpuint(sim_run(sim, SIM_TIME_MAX), ==, 2);
  g_assert_cmpuint(trace->len, ==, 4);
  g_assert_cmpuint(trace_at(trace, 2).arg, ==, 4);
  g_assert_cmpint(trace_at(trace, 2).t, ==, 28);
  g_assert_cmpuint(trace_at(trace, 3).arg, ==, 3);
  /* An unbounded run leaves the clock at the last event (30). */
  g_assert_cmpint(sim_now(sim), ==, 30);
  g_assert_cmpuint(sim_events_processed(sim), ==, 4);
  g_array_free(trace, TRUE);
  sim_engine_free(sim);
}

static void stop_handler(sim_engine *sim, void *ctx, uint64_t arg)
{
  record_handler(sim, ctx, arg);
  sim_stop(sim);
}

static void test_stop(void)
{
  sim_engine *sim = sim_engine_new(TRUE);
  GArray *trace = trace_new();
  sim_schedule_at(sim, 10, stop_handler, trace, 1);
  sim_schedule_at(sim, 10, record_handler, trace, 2);
  sim_schedule_at(sim, 20, record_handler, trace, 3);
  /* The first handler stops the run: exactly one event processed, the clock
   * stays at its time even though the bound (100) lies beyond. */
  g_assert_cmpuint(sim_run(sim, 100), ==, 1);
  g_assert_cmpint(sim_now(sim), ==, 10);
  g_assert_cmpuint(sim_pending(sim), ==, 2);
  /* A later run continues with the remaining two. */
  g_assert_cmpuint(sim_run(sim, SIM_TIME_MAX), ==, 2);
  g_assert_cmpuint(trace->len, ==, 3);
  g_assert_cmpuint(trace_at(trace, 1).arg, ==, 2);
  g_assert_cmpuint(trace_at(trace, 2).arg, ==, 3);
  g_array_free(trace, TRUE);
  sim_engine_free(sim);
}

static void test_cancel_and_stale_handles(void)
{
  sim_engine *sim = sim_engine_new(TRUE);
  GArray *trace = trace_new();
  sim_event_id a = sim_schedule_at(sim, 10, record_handler, trace, 1);
  sim_event_id b = sim_schedule_at(sim, 20, record_handler, trace, 2);
  g_assert_cmpuint(a, !=, SIM_EVENT_NONE);
  g_assert_cmpuint(a, !=, b);
  g_assert_true(sim_cancel(sim, a));
  g_assert_false(sim_cancel(sim, a)); /* already cancelled */
  g_assert_cmpuint(sim_pending(sim), ==, 1);
  g_assert_cmpuint(sim_run(sim, SIM_TIME_MAX), ==, 1);
  g_assert_false(sim_cancel(sim, b)); /* already ran */
  g_assert_false(sim_cancel(sim, SIM_EVENT_NONE));
  g_assert_false(sim_cancel(sim, ((sim_event_id)1 << 32) | 123456)); /* never issued */
  /* The freed records are reused; the old handles must not name the new
   * events. */
  sim_event_id c = sim_schedule_at(sim, 30, record_handler, trace, 3);
  sim_event_id d = sim_schedule_at(sim, 40, record_handler, trace, 4);
  g_assert_false(sim_cancel(sim, a));
  g_assert_false(sim_cancel(sim, b));
  g_assert_cmpuint(sim_pending(sim), ==, 2);
  g_assert_cmpuint(c, !=, a);
  g_assert_cmpuint(c, !=, b);
  g_assert_cmpuint(d, !=, a);
  g_assert_cmpuint(d, !=, b);
  g_assert_cmpuint(sim_run(sim, SIM_TIME_MAX), ==, 2);
  /* Only events 2, 3 and 4 ever ran. */
  g_assert_cmpuint(trace->len, ==, 3);
  g_assert_cmpuint(trace_at(trace, 0).arg, ==, 2);
  g_assert_cmpuint(trace_at(trace, 1).arg, ==, 3);
  g_assert_cmpuint(trace_at(trace, 2).arg, ==, 4);
  g_array_free(trace, TRUE);
  sim_engine_free(sim);
}

/* ---- handlers that schedule ---- */

typedef struct {
  GArray *trace;
} zero_ctx;

static void zero_delay_parent(sim_engine *sim, void *ctx, uint64_t arg)
{
  zero_ctx *z = ctx;
  record_handler(sim, z->trace, arg);
  sim_schedule_after(sim, 0, record_handler, z->trace, 3);
}

/* A (arg 1) and B (arg 2) are queued for time 10; A schedules C (arg 3) with
 * zero delay.  C was scheduled after B, so the tie rule runs it after B:
 * expected 1, 2, 3, all at time 10. */
static void test_zero_delay_after_queued(void)
{
  sim_engine *sim = sim_engine_new(TRUE);
  zero_ctx z = {trace_new()};
  sim_schedule_at(sim, 10, zero_delay_parent, &z, 1);
  sim_schedule_at(sim, 10, record_handler, z.trace, 2);
  g_assert_cmpuint(sim_run(sim, SIM_TIME_MAX), ==, 3);
  for (guint i = 0; i < 3; i++) {
    g_assert_cmpuint(trace_at(z.trace, i).arg, ==, i + 1);
    g_assert_cmpint(trace_at(z.trace, i).t, ==, 10);
  }
  g_array_free(z.trace, TRUE);
  sim_engine_free(sim);
}

/* A self-scheduling random workload: each event records itself and, while
 * the budget lasts, schedules 0-2 children with random delays in [0, 5] ps
 * (so ties are frequent).  The trace depends only on the seed. */
typedef struct {
  GRand *rng;
  GArray *trace;
  uint64_t next_arg;
  int budget;
} chain_ctx;

static void chain_handler(sim_engine *sim, void *ctx, uint64_t arg)
{
  chain_ctx *c = ctx;
  record_handler(sim, c->trace, arg);
  int kids = g_rand_int_range(c->rng, 0, 3);
  for (int k = 0; k < kids && c->budget > 0; k++, c->budget--)
    sim_schedule_after(sim, g_rand_int_range(c->rng, 0, 6), chain_handler, c, c->next_arg++);
}

static GArray *chain_run(guint32 seed)
{
  chain_ctx c = {g_rand_new_with_seed(seed), trace_new(), 0, 5000};
  sim_engine *sim = sim_engine_new(FALSE);
  for (int i = 0; i < 20; i++)
    sim_schedule_at(sim, g_rand_int_range(c.rng, 0, 10), chain_handler, &c, c.next_arg++);
  sim_run(sim, SIM_TIME_MAX);
  /* 20 seeds plus at most 5000 children; the events run = the events made. */
  g_assert_cmpuint(c.trace->len, ==, c.next_arg);
  sim_engine_free(sim);
  g_rand_free(c.rng);
  return c.trace;
}

static gboolean traces_equal(GArray *a, GArray *b)
{
  return a->len == b->len && memcmp(a->data, b->data, (size_t)a->len * sizeof(trace_rec)) == 0;
}

static void test_determinism(void)
{
  GArray *a = chain_run(42), *b = chain_run(42), *c = chain_run(43);
  g_assert_cmpuint(a->len, >, 1000); /* the workload is not trivial */
  g_assert_true(traces_equal(a, b)); /* same seed: identical trace */
  g_assert_false(traces_equal(a, c)); /* another seed: the comparison can fail */
  /* The trace is in time order (the engine never runs backwards). */
  for (guint i = 1; i < a->len; i++)
    g_assert_cmpint(trace_at(a, i - 1).t, <=, trace_at(a, i).t);
  g_array_free(a, TRUE);
  g_array_free(b, TRUE);
  g_array_free(c, TRUE);
}

/* Two engines interleaved in one process share nothing: each keeps its own
 * clock, queue and counters. */
static void test_two_engines(void)
{
  sim_engine *s1 = sim_engine_new(TRUE), *s2 = sim_engine_new(TRUE);
  GArray *t1 = trace_new(), *t2 = trace_new();
  for (uint64_t i = 0; i < 50; i++) {
    sim_schedule_at(s1, (sim_time_ps)(100 - i), record_handler, t1, i);
    sim_schedule_at(s2, (sim_time_ps)(1000 + i), record_handler, t2, 100 + i);
  }
  g_assert_cmpuint(sim_run(s1, 75), ==, 25); /* times 51..75: i = 49..25 */
  g_assert_cmpint(sim_now(s1), ==, 75);
  g_assert_cmpint(sim_now(s2), ==, 0);
  g_assert_cmpuint(sim_pending(s2), ==, 50);
  g_assert_cmpuint(sim_events_processed(s2), ==, 0);
  g_assert_cmpuint(sim_run(s2, SIM_TIME_MAX), ==, 50);
  g_assert_cmpuint(sim_run(s1, SIM_TIME_MAX), ==, 25);
  g_assert_cmpint(sim_now(s1), ==, 100);  /* i = 0 at time 100 is last */
  g_assert_cmpint(sim_now(s2), ==, 1049); /* i = 49 at 1000 + 49 is last */
  for (guint k = 0; k < 50; k++) {
    g_assert_cmpuint(trace_at(t1, k).arg, ==, 49 - k);
    g_assert_cmpuint(trace_at(t2, k).arg, ==, 100 + k);
  }
  g_array_free(t1, TRUE);
  g_array_free(t2, TRUE);
  sim_engine_free(s1);
  sim_engine_free(s2);
}

/* ---- counters, internals, output ---- */

static void test_counters(void)
{
  sim_engine *sim = sim_engine_new(FALSE);
  GArray *trace = trace_new();
  for (uint64_t i = 0; i < 7; i++)
    sim_schedule_at(sim, (sim_time_ps)i, record_handler, trace, i);
  g_assert_cmpuint(sim_pending(sim), ==, 7);
  g_assert_cmpuint(sim_max_pending(sim), ==, 7);
  sim_run(sim, 2); /* times 0, 1, 2 */
  g_assert_cmpuint(sim_events_processed(sim), ==, 3);
  g_assert_cmpuint(sim_pending(sim), ==, 4);
  sim_schedule_at(sim, 50, record_handler, trace, 7);
  /* 5 pending now, the maximum stays the earlier 7. */
  g_assert_cmpuint(sim_max_pending(sim), ==, 7);
  sim_run(sim, SIM_TIME_MAX);
  g_assert_cmpuint(sim_events_processed(sim), ==, 8);
  g_array_free(trace, TRUE);
  sim_engine_free(sim);
}

/* The 32-bit insertion counter wraps after 2^32 schedulings.  Order among
 * equal times never depends on it (the queue keeps ties in FIFO order); the
 * checker compares sequence numbers modulo 2^32.  Ties scheduled on both
 * sides of the wrap must keep their order and pass the checked mode. */
static void test_sequence_wrap(void)
{
  sim_engine *sim = sim_engine_new(TRUE);
  GArray *trace = trace_new();
  sim_debug_set_next_seq(sim, UINT32_MAX - 2);
  for (uint64_t i = 0; i < 10; i++) /* the counter wraps after the third */
    sim_schedule_at(sim, 100, record_handler, trace, i);
  sim_schedule_at(sim, 50, record_handler, trace, 10);
  g_assert_cmpuint(sim_run(sim, SIM_TIME_MAX), ==, 11);
  /* Event 10 is earliest (time 50); then the ten ties in insertion order. */
  g_assert_cmpuint(trace_at(trace, 0).arg, ==, 10);
  for (guint k = 1; k < 11; k++)
    g_assert_cmpuint(trace_at(trace, k).arg, ==, k - 1);
  g_array_free(trace, TRUE);
  sim_engine_free(sim);
}

/* The checker is not vacuous: swapping the earliest and latest entries of a
 * valid queue puts both in the wrong radix bucket and must be reported. */
static void test_checker_detects_corruption(void)
{
  sim_engine *sim = sim_engine_new(FALSE);
  GArray *trace = trace_new();
  for (uint64_t i = 0; i < 10; i++)
    sim_schedule_at(sim, (sim_time_ps)i, record_handler, trace, i);
  const char *why = NULL;
  g_assert_true(sim_check_invariants(sim, &why));
  sim_debug_swap_first_last(sim);
  g_assert_false(sim_check_invariants(sim, &why));
  g_assert_nonnull(why);
  g_test_message("checker said: %s", why);
  sim_debug_swap_first_last(sim); /* restore so the engine frees cleanly */
  g_assert_true(sim_check_invariants(sim, &why));
  g_array_free(trace, TRUE);
  sim_engine_free(sim);
}

static void test_schedule_into_past_asserts(void)
{
  if (g_test_subprocess()) {
    sim_engine *sim = sim_engine_new(FALSE);
    GArray *trace = trace_new();
    sim_schedule_at(sim, 10, record_handler, trace, 0);
    sim_run(sim, SIM_TIME_MAX);
    sim_schedule_at(sim, 9, record_handler, trace, 1); /* now is 10 */
    return;
  }
  g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_failed();
  g_test_trap_assert_stderr("*t >= sim->now*");
}

static void test_print_speed(void)
{
  sim_engine *sim = sim_engine_new(FALSE);
  GArray *trace = trace_new();
  for (uint64_t i = 0; i < 4; i++)
    sim_schedule_at(sim, (sim_time_ps)i, record_handler, trace, i);
  sim_run(sim, SIM_TIME_MAX);
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  g_assert_nonnull(out);
  /* 4 events in 2 s: 4 / 2 = 2 events/s. */
  sim_print_speed(sim, 2.0, out);
  fclose(out);
  g_assert_cmpstr(buf, ==, "wisp: 4 events in 2.000 s (2 events/s)\n");
  free(buf);
  g_array_free(trace, TRUE);
  sim_engine_free(sim);
}


/* Radix-specific orders: times spread over every byte of the 63-bit range
 * (so entries sit in all eight levels and move down several times), mixed
 * handle and posted events, ties split across redistributions.  Expected:
 * the stable sort of (time, insertion index), computed independently. */
static void test_radix_levels_and_ties(void)
{
  sim_engine *sim = sim_engine_new(TRUE);
  GArray *trace = trace_new();
  GRand *rng = g_rand_new_with_seed(42);
  enum { N = 3000 };
  sim_time_ps *times = g_new(sim_time_ps, N);
  for (int i = 0; i < N; i++) {
    int shift = g_rand_int_range(rng, 0, 62);  /* below 2^61, SIM_TIME_LIMIT: times past it stop the run */
    sim_time_ps t = (sim_time_ps)(((uint64_t)g_rand_int(rng) << 31 ^ g_rand_int(rng)) & ((UINT64_C(1) << shift) - 1));
    if (i % 7 == 0 && i > 0)
      t = times[i - 1];                          /* ties */
    times[i] = t;
    if (i % 2)
      sim_post_at(sim, t, record_handler, trace, (uint64_t)i);
    else
      sim_schedule_at(sim, t, record_handler, trace, (uint64_t)i);
  }
  g_assert_cmpuint(sim_run(sim, SIM_TIME_MAX), ==, N);
  /* Independent expectation: insertion sort of indices by (time, index). */
  int *order = g_new(int, N);
  for (int i = 0; i < N; i++) {
    int j = i;
    while (j > 0 && times[order[j - 1]] > times[i]) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = i;
  }
  for (int k = 0; k < N; k++) {
    g_assert_cmpuint(trace_at(trace, k).arg, ==, (uint64_t)order[k]);
    g_assert_cmpint(trace_at(trace, k).t, ==, times[order[k]]);
  }
  g_free(order);
  g_free(times);
  g_rand_free(rng);
  g_array_free(trace, TRUE);
  sim_engine_free(sim);
}

/* A bounded run leaves later events queued; scheduling exactly at the new
 * clock afterwards is valid and runs before the later event.  Cancelling
 * the only event empties the queue; the clock may move to the cancelled
 * time (never past a live event) and new events can still be scheduled. */
static void test_radix_bounds(void)
{
  sim_engine *sim = sim_engine_new(TRUE);
  GArray *trace = trace_new();
  sim_post_at(sim, 1000, record_handler, trace, 1);
  sim_post_at(sim, 5000, record_handler, trace, 2);
  g_assert_cmpuint(sim_run(sim, 2000), ==, 1);
  g_assert_cmpint(sim_now(sim), ==, 2000);
  sim_post_at(sim, 2000, record_handler, trace, 3);   /* exactly now */
  sim_event_id id = sim_schedule_at(sim, 3000, record_handler, trace, 4);
  g_assert_true(sim_cancel(sim, id));
  g_assert_cmpuint(sim_run(sim, SIM_TIME_MAX), ==, 2);
  g_assert_cmpuint(trace_at(trace, 1).arg, ==, 3);
  g_assert_cmpuint(trace_at(trace, 2).arg, ==, 2);
  g_assert_cmpint(sim_now(sim), ==, 5000);
  id = sim_schedule_at(sim, 7000, record_handler, trace, 5);
  g_assert_true(sim_cancel(sim, id));
  g_assert_cmpuint(sim_run(sim, SIM_TIME_MAX), ==, 0);
  g_assert_cmpuint(sim_pending(sim), ==, 0);
  sim_post_at(sim, sim_now(sim), record_handler, trace, 6);
  g_assert_cmpuint(sim_run(sim, SIM_TIME_MAX), ==, 1);
  g_assert_cmpuint(trace->len, ==, 4);
  g_array_free(trace, TRUE);
  sim_engine_free(sim);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/sim/order/ties", test_ties_in_insertion_order);
  g_test_add_func("/sim/order/scrambled", test_scrambled_come_out_sorted);
  g_test_add_func("/sim/order/zero-delay", test_zero_delay_after_queued);
  g_test_add_func("/sim/order/sequence-wrap", test_sequence_wrap);
  g_test_add_func("/sim/heap/random-with-cancels", test_random_with_cancels);
  g_test_add_func("/sim/heap/cancel-compacts", test_cancel_compacts);
  g_test_add_func("/sim/heap/checker-detects", test_checker_detects_corruption);
  g_test_add_func("/sim/run/until", test_run_until);
  g_test_add_func("/sim/run/stop", test_stop);
  g_test_add_func("/sim/cancel/stale", test_cancel_and_stale_handles);
  g_test_add_func("/sim/engines/two", test_two_engines);
  g_test_add_func("/sim/determinism", test_determinism);
  g_test_add_func("/sim/counters", test_counters);
  g_test_add_func("/sim/past-asserts", test_schedule_into_past_asserts);
  g_test_add_func("/sim/print-speed", test_print_speed);
  g_test_add_func("/sim/radix/levels-and-ties", test_radix_levels_and_ties);
  g_test_add_func("/sim/radix/bounds", test_radix_bounds);
  return g_test_run();
}
