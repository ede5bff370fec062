/* test_coll_paths.h: the harness the collective path tests share
 * (test_coll_ring.c, test_coll_fast.c): a done-time log per member, a
 * topology from YAML, competing traffic, and run(), which runs one
 * collective on tier A and returns every member's done time, the transfer
 * count and the bytes on every link, so a test can compare two paths.
 * Static functions in a header, as test_util.h; include it once per test
 * program. */
#ifndef WISP_TEST_COLL_PATHS_H
#define WISP_TEST_COLL_PATHS_H

#include "collectives/coll.h"

typedef struct {
  sim_time_ps *t;
  int n;
} done_log;

static void on_done(sim_engine *sim, void *ctx, uint64_t cookie, int member)
{
  (void)cookie;
  done_log *log = ctx;
  g_assert_cmpint(log->t[member], ==, -1);
  log->t[member] = sim_now(sim);
}

static topo *load(const char *yaml)
{
  GError *err = NULL;
  topo *t = topo_load_string(yaml, "test.yaml", &err);
  g_assert_no_error(err);
  g_assert_nonnull(t);
  return t;
}

/* Competing traffic: a send of `bytes` from rank src to dst at time at. */
typedef struct {
  net *n;
  int src, dst;
  uint64_t bytes;
  sim_time_ps done;
} competitor;

static void comp_done(sim_engine *sim, void *ctx, uint64_t cookie)
{
  (void)cookie;
  ((competitor *)ctx)->done = sim_now(sim);
}

static void comp_start(sim_engine *sim, void *ctx, uint64_t arg)
{
  (void)sim;
  (void)arg;
  competitor *x = ctx;
  net_send(x->n, x->src, x->dst, x->bytes, comp_done, x, 0);
}

typedef struct {
  sim_time_ps *t;          /* per member */
  uint64_t transfers;
  uint64_t *link_bytes;
  coll_ring_stats st;
  sim_time_ps comp_done;
} coll_path_result;

/* One collective at time 0, with a competitor (comp != NULL) sent at
 * comp_at: 0 before the collective starts, > 0 at that time,
 * RUN_AFTER_START at 0 in an event after the collective's first (the
 * ideal ring has issued its first step then). */
#define RUN_AFTER_START (-2)
/* fast: 1 every ring of 2 or more members takes the recurrence, 0 none,
 * -1 the default (COLL_RING_RECURRENCE_MIN). */
static coll_path_result run(const topo *t, const coll_policy *pol, et_coll_type type, uint64_t bytes, const int *ranks,
                       int n, int fast, const competitor *comp, sim_time_ps comp_at)
{
  sim_engine *sim = sim_engine_new(TRUE);
  net *nt = net_new(sim, t, NET_TIER_ANALYTICAL);
  coll_rt *c = coll_rt_new(sim, nt, pol);
  if (fast >= 0)

#endif
