/* bench_engine.c: the classic "hold" benchmark for wisp's event queue.
 *
 * The queue is filled with P pending events; then every event, when it runs,
 * schedules exactly one new event a random increment later, so the queue
 * holds P events throughout while N events are processed.  Increments are
 * uniform on [0, 2 * mean] (default) or exponential with the same mean,
 * drawn from a fixed-seed xorshift64* generator, so every run processes the
 * same events in the same order and prints the same final clock.
 *
 * Usage: bench_engine [EVENTS [PENDING [uniform|exp]]]
 *   defaults: 100000000 events, 1000000 pending, uniform increments.
 * Prints events/s of the run phase (by wall clock and by process CPU time,
 * the latter less disturbed by other jobs) and the peak resident set size
 * (VmHWM from /proc/self/status).
 */
#include "config.h"
#include "bench/bench_util.h"
#include "simcore/sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_MEAN_PS INT64_C(1000000) /* mean increment: 1 us */

typedef struct {
  uint64_t rng;       /* xorshift64* state, never 0 */
  uint64_t remaining; /* events still to process before stopping */
  gboolean exponential;
} hold_state;

/* xorshift64* (Marsaglia's xorshift with a multiplicative output step):
 * period 2^64 - 1, plenty for a benchmark; not for statistics. */
static inline uint64_t rng_next(uint64_t *s)
{
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * UINT64_C(2685821657736338717);
}

static inline sim_time_ps hold_increment(hold_state *h)
{
  uint64_t r = rng_next(&h->rng);
  if (!h->exponential)
    return (sim_time_ps)(r % (uint64_t)(2 * BENCH_MEAN_PS + 1));
  /* Inverse transform of a uniform in (0, 1]: -mean * ln(u). */
  double u = ((double)(r >> 11) + 1.0) * (1.0 / 9007199254740992.0);
  return (sim_time_ps)llround(-log(u) * (double)BENCH_MEAN_PS);
}

static void hold_event(sim_engine *sim, void *ctx, uint64_t arg)
{
  hold_state *h = ctx;
  if (--h->remaining == 0) {
    sim_stop(sim);
    return;
  }
  sim_post_after(sim, hold_increment(h), hold_event, h, arg + 1);
}

static gboolean parse_count(const char *s, uint64_t *out)
{
  char *end = NULL;
  guint64 v = g_ascii_strtoull(s, &end, 10);
  if (end == s || *end != '\0' || v == 0)
    return FALSE;
  *out = v;
  return TRUE;
}

int main(int argc, char **argv)
{
  uint64_t events = 100000000, pending = 1000000;
  hold_state h = {.rng = UINT64_C(0x9E3779B97F4A7C15), .exponential = FALSE};
  if (argc > 4 || (argc > 1 && !parse_count(argv[1], &events)) ||
      (argc > 2 && !parse_count(argv[2], &pending)) ||
      (argc > 3 && strcmp(argv[3], "uniform") != 0 && strcmp(argv[3], "exp") != 0)) {
    fprintf(stderr, "usage: %s [EVENTS [PENDING [uniform|exp]]] (positive integers)\n", argv[0]);
    return 2;
  }
  if (argc > 3)
    h.exponential = strcmp(argv[3], "exp") == 0;
  h.remaining = events;

  sim_engine *sim = sim_engine_new(FALSE);
  double t0 = wisp_wall_seconds();
  for (uint64_t i = 0; i < pending; i++)
    sim_post_at(sim, hold_increment(&h), hold_event, &h, 0);
  double t1 = wisp_wall_seconds(), c1 = bench_cpu_seconds();
  uint64_t done = sim_run(sim, SIM_TIME_MAX);
  double t2 = wisp_wall_seconds(), c2 = bench_cpu_seconds();

  printf("bench_engine: hold model, %" G_GUINT64_FORMAT " pending, %s increments (mean %" G_GINT64_FORMAT " ps)\n",
         pending, h.exponential ? "exponential" : "uniform", BENCH_MEAN_PS);
  printf("fill: %" G_GUINT64_FORMAT " events in %.3f s\n", pending, t1 - t0);
  printf("run: %" G_GUINT64_FORMAT " events in %.3f s = %.2f M events/s (%.1f ns/event)\n", done, t2 - t1,
         (double)done / (t2 - t1) / 1e6, (t2 - t1) * 1e9 / (double)done);
  printf("run (CPU time): %.3f s = %.2f M events/s\n", c2 - c1, (double)done / (c2 - c1) / 1e6);
  printf("final clock: %" G_GINT64_FORMAT " ps, still pending: %zu, max pending: %zu\n", sim_now(sim),
         sim_pending(sim), sim_max_pending(sim));
  printf("peak RSS (VmHWM): %ld KiB\n", bench_status_kib("VmHWM"));
  sim_print_speed(sim, t2 - t1, stdout);
  sim_engine_free(sim);
  return done == events ? 0 : 1;
}
