/* test_net_aggregate.c: the flow tier's aggregation of symmetric flows
 * (net/net_flow.c, "Aggregation"; issue 30 item 2) against the exact per-flow
 * solution (net_set_flow_aggregation(n, FALSE)) of the same workload.
 *
 * The workload: every rank of a job runs a chain of STEPS transfers of the
 * job's size to the rank `shift` places on within the job (shift 1: a ring
 * step; N/2: every transfer crosses the fabric's middle), each issued when
 * the rank's previous one has completed; several jobs may share the
 * fabric, and competing transfers (random endpoints and sizes from a
 * fixed hash) may be injected at fixed times mid-run, which splits the
 * aggregates they touch.  Each transfer's completion is recorded by its
 * index (job, rank, step), so the two runs compare transfer by transfer.
 *
 * Checks, per case: every transfer completes in both runs; the largest
 * error of a transfer's duration (issue to completion) relative to the
 * exact one is at most 1 % (the issue's bound) -- the aggregation is
 * exact in the mathematics (net_flow.c), so the observed errors are the
 * solver's floating-point rounding, and the test prints them; the last
 * completion agrees within 1 %; and aggregation did happen where the
 * traffic is symmetric (the count of transfers carried by aggregates), so
 * the comparison is not between two per-flow runs.
 */
#include "config.h"

#include "net/net.h"

#include <math.h>
#include <string.h>

typedef struct {
  int first, n;          /* the job's ranks: first .. first + n - 1 */
  int shift;
  uint64_t bytes;
  sim_time_ps start;     /* its first transfers are issued then */
} job;

typedef struct {
  net *n;
  const job *jobs;
  int n_jobs, steps;
  int *base;             /* per job: index of its first transfer */
  sim_time_ps *issue, *done;
  uint64_t injected;
} run_ctx;

static void on_done(sim_engine *sim, void *ctx, uint64_t cookie);
static void send_step(run_ctx *c, int j, int r, int s, sim_time_ps now);

/* Job `arg` starts: every rank issues its first transfer. */
static void on_job_start(sim_engine *sim, void *ctx, uint64_t arg)
{
  run_ctx *c = ctx;
  for (int r = 0; r < c->jobs[arg].n; r++)
    send_step(c, (int)arg, r, 0, sim_now(sim));
}

/* Transfer (j, r, s): cookie base[j] + r * steps + s. */
static void send_step(run_ctx *c, int j, int r, int s, sim_time_ps now)
{
  const job *jb = &c->jobs[j];
  uint64_t cookie = (uint64_t)c->base[j] + (uint64_t)r * (uint64_t)c->steps + (uint64_t)s;
  c->issue[cookie] = now;
  int src = jb->first + r, dst = jb->first + (r + jb->shift) % jb->n;
  net_send(c->n, src, dst, jb->bytes, on_done, c, cookie);
}

static void on_done(sim_engine *sim, void *ctx, uint64_t cookie)
{
  run_ctx *c = ctx;
  c->done[cookie] = sim_now(sim);
  if (cookie >= (uint64_t)c->base[c->n_jobs])
    return; /* an injected transfer */
  int j = 0;
  while (cookie >= (uint64_t)c->base[j + 1])
    j++;
  uint64_t k = cookie - (uint64_t)c->base[j];
  int r = (int)(k / (uint64_t)c->steps), s = (int)(k % (uint64_t)c->steps);
  if (s + 1 < c->steps)
    send_step(c, j, r, s + 1, sim_now(sim));
}

/* Injected transfer `arg` (0-based): endpoints and size from a hash. */
static void on_inject(sim_engine *sim, void *ctx, uint64_t arg)
{
  run_ctx *c = ctx;
  int n_ranks = topo_n_ranks(net_get_topo(c->n));
  uint64_t h = wisp_mix64(arg + 1);
  int src = (int)(h % (uint64_t)n_ranks), dst = (int)((h >> 20) % (uint64_t)n_ranks);
  uint64_t bytes = 65536 + (h >> 40) % 4194304;
  uint64_t cookie = (uint64_t)c->base[c->n_jobs] + arg;
  c->issue[cookie] = sim_now(sim);
  net_send(c->n, src, dst, bytes, on_done, c, cookie);
}

typedef struct {
  sim_time_ps *issue, *done;
  size_t n;
  uint64_t aggregated, splits;
  net_agg_stats st;
} outcome;

/* Runs the workload with aggregation on or off; inject transfers at
 * inject_every ps apart (0: none).  The caller frees the arrays. */
static outcome run(const topo *t, const job *jobs, int n_jobs, int steps, int inject, sim_time_ps inject_every,
                   gboolean aggregate)
{
  sim_engine *sim = sim_engine_new(FALSE);
  net *n = net_new(sim, t, NET_TIER_FLOW);
  net_set_flow_aggregation(n, aggregate);
  run_ctx c = { n, jobs, n_jobs, steps, g_new0(int, n_jobs + 1), NULL, NULL, 0 };
  for (int j = 0; j < n_jobs; j++)
    c.base[j + 1] = c.base[j] + jobs[j].n * steps;
  size_t total = (size_t)c.base[n_jobs] + (size_t)inject;
  c.issue = g_new0(sim_time_ps, total);
  c.done = g_new(sim_time_ps, total);
  for (size_t k = 0; k < total; k++)
    c.done[k] = -1;
  for (int j = 0; j < n_jobs; j++)
    sim_schedule_at(sim, jobs[j].start, on_job_start, &c, (uint64_t)j);
  for (int k = 0; k < inject; k++)
    sim_schedule_at(sim, inject_every * (k + 1), on_inject, &c, (uint64_t)k);
  sim_run(sim, SIM_TIME_MAX);
  outcome o = { c.issue, c.done, total, 0, 0, { 0 } };
  uint64_t aggs;
  net_get_aggregation_stats(n, &aggs, &o.aggregated, &o.splits);
  net_get_agg_stats(n, &o.st);
  /* The counters add up: every flow either rode an aggregate or entered
   * alone for one of the four reasons. */
  if (aggregate)
    g_assert_cmpuint(o.st.flows_entered, ==,
                     o.st.aggregated + o.st.alone + o.st.busy + o.st.mixed + o.st.uneven);
  g_assert_cmpuint(o.st.aggregated, ==, o.aggregated);
  net_free(n);
  sim_engine_free(sim);
  g_free(c.base);
  return o;
}

static topo *load(const char *yaml)
{
  GError *err = NULL;
  topo *t = topo_load_string(yaml, "test_net_aggregate.yaml", &err);
  g_assert_no_error(err);
  return t;
}

/* Runs both and checks the bounds in the top comment; min_aggregated:
 * transfers that aggregates must have carried. */
static void compare(const char *name, const char *yaml, const job *jobs, int n_jobs, int steps, int inject,
                    sim_time_ps inject_every, uint64_t min_aggregated)
{
  topo *t = load(yaml);
  outcome exact = run(t, jobs, n_jobs, steps, inject, inject_every, FALSE);
  outcome agg = run(t, jobs, n_jobs, steps, inject, inject_every, TRUE);
  g_assert_cmpuint(exact.aggregated, ==, 0);
  double worst = 0;
  sim_time_ps last_e = 0, last_a = 0;
  for (size_t k = 0; k < exact.n; k++) {
    g_assert_cmpint(exact.done[k], >=, 0);
    g_assert_cmpint(agg.done[k], >=, 0);
    sim_time_ps de = exact.done[k] - exact.issue[k], da = agg.done[k] - agg.issue[k];
    g_assert_cmpint(de, >, 0);
    double err = fabs((double)(da - de)) / (double)de;
    worst = MAX(worst, err);
    last_e = MAX(last_e, exact.done[k]);
    last_a = MAX(last_a, agg.done[k]);
  }
  double step_err = fabs((double)(last_a - last_e)) / (double)last_e;
  g_test_message("%s: %zu transfers, %" G_GUINT64_FORMAT " carried by %" G_GUINT64_FORMAT
                 " aggregates, %" G_GUINT64_FORMAT " aggregates split; one by one: %" G_GUINT64_FORMAT
                 " alone, %" G_GUINT64_FORMAT " busy, %" G_GUINT64_FORMAT " mixed, %" G_GUINT64_FORMAT
                 " uneven; worst transfer error %.3g %%, last completion %.3g %% (%" G_GINT64_FORMAT " ps exact)",
                 name, exact.n, agg.aggregated, agg.st.aggregates, agg.splits, agg.st.alone, agg.st.busy,
                 agg.st.mixed, agg.st.uneven, 100 * worst, 100 * step_err, last_e);
  g_assert_cmpfloat(worst, <=, 0.01);
  g_assert_cmpfloat(step_err, <=, 0.01);
  g_assert_cmpuint(agg.aggregated, >=, min_aggregated);
  g_free(exact.issue);
  g_free(exact.done);
  g_free(agg.issue);
  g_free(agg.done);
  topo_free(t);
}

/* A non-blocking 1,024-endpoint fat tree (32 leaves, 32 spines). */
static const char *ft1024 = "schema_version: 1\n"
                            "dims:\n"
                            "  - {name: fabric, kind: fat_tree, size: 1024, leaves: 32, bandwidth: 50GB/s, "
                            "latency: 1us}\n";
/* The same, 2:1 oversubscribed at the leaves. */
static const char *ft1024_os = "schema_version: 1\n"
                               "dims:\n"
                               "  - {name: fabric, kind: fat_tree, size: 1024, leaves: 32, oversubscription: 2, "
                               "bandwidth: 50GB/s, latency: 1us}\n";
/* 8-GPU nodes under a 4:1 oversubscribed fat tree of 32 nodes (256 ranks). */
static const char *nodes256 = "schema_version: 1\n"
                              "dims:\n"
                              "  - {name: node, kind: switch, size: 8, bandwidth: 450GB/s, latency: 500ns}\n"
                              "  - {name: fabric, kind: fat_tree, size: 32, leaves: 4, oversubscription: 4, "
                              "bandwidth: 50GB/s, latency: 2us}\n";

/* Ring steps (shift 1) over 1,024 ranks: within a leaf the flows are
 * symmetric; every step aggregates (at least the intra-leaf class of
 * 1,024 - 32 transfers per step). */
static void test_ring_uniform(void)
{
  job j = { 0, 1024, 1, 1048576 };
  compare("ring, 1024, non-blocking", ft1024, &j, 1, 6, 0, 0, 6 * (1024 - 32));
}

/* Shift N/2 on the oversubscribed tree: every transfer crosses the
 * spines, which the flows share. */
static void test_uniform_oversubscribed(void)
{
  job j = { 0, 1024, 512, 4194304 };
  compare("shift 512, 1024, 2:1", ft1024_os, &j, 1, 4, 0, 0, 0);
}

/* Ring steps on the oversubscribed tree with competing transfers injected
 * every 20 us (they split the aggregates they touch). */
static void test_ring_oversubscribed_injected(void)
{
  job j = { 0, 1024, 1, 1048576 };
  compare("ring + injected, 1024, 2:1", ft1024_os, &j, 1, 6, 40, 20 * SIM_PS_PER_US, 1024);
}

/* Several jobs on one fabric: two rings of different sizes and a
 * shifted job, with injected traffic, on 8-GPU nodes. */
static void test_several_jobs(void)
{
  job jobs[3] = { { 0, 64, 1, 2097152 }, { 64, 128, 1, 524288 }, { 192, 64, 8, 1048576 } };
  compare("three jobs + injected, 256 ranks on nodes", nodes256, jobs, 3, 8, 16, 15 * SIM_PS_PER_US, 64);
}

/* Overlapping collectives on the same ranks, as a training step's
 * per-layer gradient all-reduces: four rings over all 1,024 ranks of the
 * 2:1 tree, started 0, 7, 15 and 31 us apart with two sizes, so their
 * steps are in flight together on the same links, offset in time.  Each
 * step's classes ride the bundles the first ring's made (net_flow.c,
 * "Aggregation"): nearly every transfer is carried by an aggregate.
 * Before bundles, a class on links another ring's aggregate held fell
 * back to per-flow (and split that aggregate). */
static void test_overlapping_rings(void)
{
  job jobs[4] = { { 0, 1024, 1, 1048576, 0 },
                  { 0, 1024, 1, 1048576, 7 * SIM_PS_PER_US },
                  { 0, 1024, 1, 524288, 15 * SIM_PS_PER_US },
                  { 0, 1024, 1, 1048576, 31 * SIM_PS_PER_US } };
  compare("four overlapping rings, 1024, 2:1", ft1024_os, jobs, 4, 6, 0, 0, 4 * 6 * 1024 * 95 / 100);
}

/* A ring on half the ranks (0..511) starting while a ring on all 1,024
 * runs: its classes cover only part of the links of the bundle's
 * positions (they would load them unevenly), so they must not ride the
 * bundle; they enter flow by flow and dissolve it.  Mixed with a shifted
 * job on the same ranks, whose routes cross the bundle's positions. */
static void test_nested_rings(void)
{
  job jobs[3] = { { 0, 1024, 1, 1048576, 0 },
                  { 0, 512, 1, 1048576, 9 * SIM_PS_PER_US },
                  { 0, 1024, 256, 262144, 40 * SIM_PS_PER_US } };
  compare("nested rings + shift, 1024, 2:1", ft1024_os, jobs, 3, 5, 0, 0, 1024);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/net_aggregate/ring_uniform", test_ring_uniform);
  g_test_add_func("/net_aggregate/uniform_oversubscribed", test_uniform_oversubscribed);
  g_test_add_func("/net_aggregate/ring_oversubscribed_injected", test_ring_oversubscribed_injected);
  g_test_add_func("/net_aggregate/several_jobs", test_several_jobs);
  g_test_add_func("/net_aggregate/overlapping_rings", test_overlapping_rings);
  g_test_add_func("/net_aggregate/nested_rings", test_nested_rings);
  return g_test_run();
}
