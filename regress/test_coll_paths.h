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
  /* Sent from an event the collective's start precedes (run_rooted posts
   * it at 0 after the start, and it posts the send at comp_at): at an
   * instant where the collective also has events, the send comes after
   * those it scheduled at its start. */
  gboolean late;
  sim_time_ps late_at;
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

static void comp_post(sim_engine *sim, void *ctx, uint64_t arg)
{
  (void)arg;
  competitor *x = ctx;
  sim_post_at(sim, x->late_at, comp_start, x, 0);
}

/* A collective started later from an event (sim_post_at(sim, t,
 * start_late, &ls, 0)), its members' done times into ls->log. */
typedef struct {
  coll_rt *c;
  coll_desc d;
  done_log *log;
} late_start;

static G_GNUC_UNUSED void start_late(sim_engine *sim, void *ctx, uint64_t arg)
{
  (void)sim;
  (void)arg;
  late_start *ls = ctx;
  coll_start(ls->c, &ls->d, on_done, ls->log, 0, NULL);
}

/* Runs the engine to the end, requires every one of the n done times
 * set, reads the transfer count, every link's bytes and the path
 * counters, and frees the runtime, the policy, the net and the engine. */
static G_GNUC_UNUSED void finish_run(sim_engine *sim, net *nt, coll_rt *c, coll_policy *pol, const sim_time_ps *times,
                                     int n, uint64_t *transfers, uint64_t *bytes, coll_ring_stats *st)
{
  sim_run(sim, SIM_TIME_MAX);
  for (int i = 0; i < n; i++)
    g_assert_cmpint(times[i], >=, 0);
  *transfers = net_transfers(nt);
  for (uint32_t l = 0; l < topo_n_links(net_get_topo(nt)); l++)
    bytes[l] = net_link_bytes(nt, l);
  *st = *coll_rt_ring_stats(c);
  coll_rt_free(c);
  coll_policy_free(pol);
  net_free(nt);
  sim_engine_free(sim);
}

/* Two all-reduces under pol (which it frees): 8 MiB over ranks 0..7 at 0
 * and 4 MiB over b0..b0+7 started at late_at, and a competitor 2 -> 6 of
 * 1 MiB at comp_at; fast 0 keeps every run per transfer.  Fills the 16
 * done times, the transfer count, every link's bytes and the path
 * counters.  O(run). */
static G_GNUC_UNUSED void concurrent_run(const topo *t, coll_policy *pol, int fast, int b0, sim_time_ps late_at,
                                         sim_time_ps comp_at, sim_time_ps *times, uint64_t *transfers,
                                         uint64_t *bytes, coll_ring_stats *st)
{
  sim_engine *sim = sim_engine_new(TRUE);
  net *nt = net_new(sim, t, NET_TIER_ANALYTICAL);
  coll_rt *c = coll_rt_new(sim, nt, pol);
  coll_rt_set_ring_recurrence(c, fast ? 2 : 0);
  int ga[8], gb[8];
  for (int i = 0; i < 8; i++) {
    ga[i] = i;
    gb[i] = b0 + i;
    times[i] = times[8 + i] = -1;
  }
  done_log la = { times, 8 }, lb = { times + 8, 8 };
  coll_desc da = { .type = ET_COLL_ALL_REDUCE, .bytes = 8 << 20, .ranks = ga, .n_ranks = 8, .root = -1 };
  late_start ls = { c, { .type = ET_COLL_ALL_REDUCE, .bytes = 4 << 20, .ranks = gb, .n_ranks = 8, .root = -1 }, &lb };
  competitor cx = { .n = nt, .src = 2, .dst = 6, .bytes = 1 << 20, .done = -1 };
  coll_start(c, &da, on_done, &la, 0, NULL);
  sim_post_at(sim, late_at, start_late, &ls, 0);
  sim_post_at(sim, comp_at, comp_start, &cx, 0);
  finish_run(sim, nt, c, pol, times, 16, transfers, bytes, st);
}

typedef struct {
  sim_time_ps *t;          /* per member */
  uint64_t transfers;
  uint64_t *link_bytes;
  coll_ring_stats st;
  sim_time_ps comp_done;
  sim_time_ps *link_at;    /* seq_run (test_coll_fast_tree.c): every link's FIFO state at the end, else NULL */
  uint64_t *link_rem;
} coll_path_result;

/* One collective at time 0, with a competitor (comp != NULL) sent at
 * comp_at: 0 before the collective starts, > 0 at that time,
 * RUN_AFTER_START at 0 in an event after the collective's first (the
 * ideal ring has issued its first step then). */
#define RUN_AFTER_START (-2)
/* fast: 1 every ring of 2 or more members takes the recurrence, 0 none,
 * -1 the default (COLL_RING_RECURRENCE_MIN). */
/* root: the root's global rank for rooted types (run_rooted), else -1. */
static coll_path_result run_rooted(const topo *t, const coll_policy *pol, et_coll_type type, uint64_t bytes,
                                   const int *ranks, int n, int root, int fast, const competitor *comp,
                                   sim_time_ps comp_at)
{
  sim_engine *sim = sim_engine_new(TRUE);
  net *nt = net_new(sim, t, NET_TIER_ANALYTICAL);
  coll_rt *c = coll_rt_new(sim, nt, pol);
  if (fast >= 0)
    coll_rt_set_ring_recurrence(c, fast ? 2 : 0); /* the same switch turns the fast path on or off */
  coll_path_result res = { g_new(sim_time_ps, n), 0, NULL, { 0 }, -1 };
  for (int i = 0; i < n; i++)
    res.t[i] = -1;
  done_log log = { res.t, n };
  competitor cx = { 0 };
  if (comp != NULL) {
    cx = *comp;
    cx.n = nt;
    cx.done = -1;
    if (comp_at == 0)
      comp_start(sim, &cx, 0); /* before the collective: its links are busy when it starts */
    else if (comp_at > 0 && !cx.late)
      sim_post_at(sim, comp_at, comp_start, &cx, 0);
  }
  coll_desc d = { .type = type, .bytes = bytes, .ranks = ranks, .n_ranks = n, .root = root };
  coll_start(c, &d, on_done, &log, 0, NULL);
  if (comp != NULL && comp_at == RUN_AFTER_START)
    sim_post_at(sim, 0, comp_start, &cx, 0); /* at 0, after the collective's first event */
  if (comp != NULL && comp_at > 0 && cx.late) {
    cx.late_at = comp_at;
    sim_post_at(sim, 0, comp_post, &cx, 0);
  }
  sim_run(sim, SIM_TIME_MAX);
  for (int i = 0; i < n; i++)
    g_assert_cmpint(res.t[i], >=, 0);
  res.transfers = net_transfers(nt);
  uint32_t nl = topo_n_links(t);
  res.link_bytes = g_new(uint64_t, nl ? nl : 1);
  for (uint32_t l = 0; l < nl; l++)
    res.link_bytes[l] = net_link_bytes(nt, l);
  res.st = *coll_rt_ring_stats(c);
  res.comp_done = cx.done;
  coll_rt_free(c);
  net_free(nt);
  sim_engine_free(sim);
  return res;
}

static G_GNUC_UNUSED coll_path_result run(const topo *t, const coll_policy *pol, et_coll_type type, uint64_t bytes,
                                          const int *ranks, int n, int fast, const competitor *comp,
                                          sim_time_ps comp_at)
{
  return run_rooted(t, pol, type, bytes, ranks, n, -1, fast, comp, comp_at);
}

#endif
