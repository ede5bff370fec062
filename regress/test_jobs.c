/* test_jobs.c: several jobs on one fabric (studies/study_jobs.c) against
 * hand-computed step times.
 *
 * Cluster: a fat tree of 4 hosts on 2 leaves (2 hosts each), 1 spine,
 * oversubscription 2: host links B = 100 GB/s, each leaf-spine link
 * 2 B / (1 spine x 2) = B, latency lat = 1 us per link.  Cluster ranks 0, 1
 * sit on leaf 0 and 2, 3 on leaf 1.
 *
 * Each job is 2 ranks running one all-reduce of S = 100 MB (ideal library,
 * ring): 2 (N - 1) = 2 steps, in each of which both members send S / 2 to
 * the other at once.  Let x = (S / 2) / B = 0.5 ms.
 *  - Contiguous (A on 0, 1; B on 2, 3): each pair stays on its leaf (route
 *    host-leaf-host, 2 links), nothing is shared:
 *      alone = together = 2 (2 lat + x) = 1.004 ms, slowdown 0.
 *  - Interleaved (A on 0, 2; B on 1, 3): both pairs cross the one spine
 *    (4 links) and share leaf 0's and leaf 1's uplinks (and the spine's
 *    downlinks) in both directions; alone 2 (4 lat + x) = 1.008 ms.
 *      flow tier (max-min): the two transfers on a shared link get B / 2
 *      each, so every step takes 4 lat + 2x, together 2 (4 lat + 2x)
 *      = 2.008 ms for both jobs: slowdown (2.008 - 1.008) / 1.008.
 *      analytical tier (each link a FIFO server, A's transfers queued
 *      first because A's last member issues first): step 1 of A ends at
 *      x + 4 lat, B's at 2x + 4 lat (queued behind A's S / 2 on the
 *      uplink); A's step 2 issues at x + 4 lat < 2x, waits for B's bytes
 *      on the uplink and ends at 3x + 4 lat; B's issues at 2x + 4 lat,
 *      behind A's second transfer (served until 3x), ends at 4x + 4 lat.
 *      Together A = 3x + 4 lat = 1.504 ms, B = 4x + 4 lat = 2.004 ms: the
 *      uplink carried 2 S = 4x of bytes, the work-conserving bound. */
#include "config.h"
#include "studies/study.h"

#include <math.h>
#include <string.h>

static const char *fat_tree_yaml =
  "schema_version: 1\nlibrary: {name: ideal}\nname: ft4\n"
  "dims:\n  - {name: fabric, kind: fat_tree, size: 4, leaves: 2, spines: 1, oversubscription: 2,"
  " bandwidth: 100GB/s, latency: 1us}\n";

static et_workload *pair_allreduce(const char *name, uint64_t bytes)
{
  et_workload *w = et_workload_new(2, name);
  for (int r = 0; r < 2; r++) {
    et_builder *b = et_builder_new("synthetic");
    uint32_t x = et_builder_add_node(b, 1, ET_NODE_COMM_COLL, "all_reduce", 0, 0);
    et_comm c = {.bytes = bytes, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = -1, .dst = -1, .tag = -1,
                 .root = -1, .coll = ET_COLL_ALL_REDUCE};
    et_builder_set_comm(b, x, &c, NULL, NULL, 0);
    GError *error = NULL;
    w->ranks[r] = et_builder_finish(b, 0, &error);
    g_assert_no_error(error);
  }
  GError *error = NULL;
  g_assert_true(et_workload_resolve_groups(w, &error));
  return w;
}

static void run_two(const char *place_a, const char *place_b, net_tier tier, study_job_result res[2],
                    sim_result **together)
{
  GError *error = NULL;
  topo *t = topo_load_string(fat_tree_yaml, "ft4.yaml", &error);
  g_assert_no_error(error);
  study_job jobs[2] = {{.name = (char *)"A"}, {.name = (char *)"B"}};
  const char *places[2] = {place_a, place_b};
  for (int j = 0; j < 2; j++) {
    jobs[j].w = pair_allreduce(jobs[j].name, 100000000);
    g_assert_true(study_jobs_parse_place(places[j], &jobs[j].place, &jobs[j].n_place, &error));
  }
  sim_replay_options opt = {.checked = TRUE, .quiet = TRUE, .has_tier = TRUE, .tier = tier, .has_algo = TRUE,
                            .algo = COLL_ALGO_RING};
  et_workload *merged = NULL;
  gboolean ok = study_jobs_run(jobs, 2, t, &opt, res, together, &merged, &error);
  g_assert_no_error(error);
  g_assert_true(ok);
  /* The shared run's workload: the cluster's 4 ranks, both jobs' worlds. */
  g_assert_cmpint(merged->n_ranks, ==, 4);
  g_assert_nonnull(g_hash_table_lookup(merged->group_index, "A/world"));
  g_assert_nonnull(g_hash_table_lookup(merged->group_index, "B/world"));
  et_workload_free(merged);
  for (int j = 0; j < 2; j++) {
    et_workload_free(jobs[j].w);
    g_free(jobs[j].place);
  }
  topo_free(t);
}

#define US SIM_PS_PER_US

static void test_contiguous(void)
{
  for (int tier = 0; tier < 2; tier++) {
    study_job_result res[2];
    sim_result *r = NULL;
    run_two("0-1", "2,3", tier ? NET_TIER_FLOW : NET_TIER_ANALYTICAL, res, &r);
    const sim_time_ps expect = 2 * (2 * US + 500 * US);
    for (int j = 0; j < 2; j++) {
      g_test_message("contiguous, %s: job %d alone %.3f us together %.3f us, expect %.3f us both",
                     tier ? "flow" : "analytical", j, (double)res[j].alone / 1e6, (double)res[j].together / 1e6,
                     (double)expect / 1e6);
      g_assert_cmpint(res[j].alone, ==, expect);
      g_assert_cmpint(res[j].together, ==, expect);
      g_assert_cmpfloat(res[j].slowdown_pct, ==, 0.0);
    }
    g_assert_cmpint(r->step_time, ==, expect);
    sim_result_free(r);
  }
}

static void test_interleaved(void)
{
  const sim_time_ps x = 500 * US, lat4 = 4 * US, alone = 2 * (lat4 + x);
  study_job_result res[2];
  sim_result *r = NULL;
  run_two("0,2", "1-3:2", NET_TIER_FLOW, res, &r);
  for (int j = 0; j < 2; j++) {
    g_test_message("interleaved, flow: job %d alone %.3f us together %.3f us, expect %.3f and %.3f us", j,
                   (double)res[j].alone / 1e6, (double)res[j].together / 1e6, (double)alone / 1e6,
                   (double)(2 * (lat4 + 2 * x)) / 1e6);
    g_assert_cmpint(res[j].alone, ==, alone);
    g_assert_cmpint(res[j].together, ==, 2 * (lat4 + 2 * x));
    g_assert_cmpfloat_with_epsilon(res[j].slowdown_pct, 100.0 * 1000.0 / 1008.0, 1e-9);
  }
  sim_result_free(r);

  run_two("0,2", "1,3", NET_TIER_ANALYTICAL, res, &r);
  const sim_time_ps expect[2] = {3 * x + lat4, 4 * x + lat4};
  for (int j = 0; j < 2; j++) {
    g_test_message("interleaved, analytical: job %d alone %.3f us together %.3f us, expect %.3f and %.3f us", j,
                   (double)res[j].alone / 1e6, (double)res[j].together / 1e6, (double)alone / 1e6,
                   (double)expect[j] / 1e6);
    g_assert_cmpint(res[j].alone, ==, alone);
    g_assert_cmpint(res[j].together, ==, expect[j]);
  }
  /* The shared run's straggler wait: no member waits (each job's two
   * members issue at 0). */
  for (int k = 0; k < 4; k++)
    g_assert_cmpint(r->ranks[k].coll_wait, ==, 0);
  sim_result_free(r);
}

/* Placements: the forms, and the errors a user can make. */
static void test_place_errors(void)
{
  int *p = NULL, n = 0;
  GError *error = NULL;
  g_assert_true(study_jobs_parse_place("0-3,8-11, 16-22:2 ,30", &p, &n, &error));
  const int expect[] = {0, 1, 2, 3, 8, 9, 10, 11, 16, 18, 20, 22, 30};
  g_assert_cmpint(n, ==, G_N_ELEMENTS(expect));
  for (int i = 0; i < n; i++)
    g_assert_cmpint(p[i], ==, expect[i]);
  g_free(p);
  static const char *const bad[] = {"", "a", "3-1", "0-4:0", "1:2", "0-", "-3", "0,,1"};
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_assert_false(study_jobs_parse_place(bad[i], &p, &n, &error));
    g_assert_nonnull(strstr(error->message, "A-B:STEP"));
    g_clear_error(&error);
  }
  et_workload *w = pair_allreduce("A", 1000);
  int two[2] = {0, 1}, three[3] = {0, 1, 2}, far[2] = {2, 4};
  study_job jobs[2] = {{.name = (char *)"A", .w = w, .place = two, .n_place = 2},
                       {.name = (char *)"B", .w = w, .place = two, .n_place = 2}};
  g_assert_null(study_jobs_merge(jobs, 2, 4, -1, &error));
  g_assert_nonnull(strstr(error->message, "both placed on cluster rank 0"));
  g_clear_error(&error);
  jobs[1].place = three;
  jobs[1].n_place = 3;
  g_assert_null(study_jobs_merge(jobs, 2, 4, -1, &error));
  g_assert_nonnull(strstr(error->message, "has 2 ranks but its placement lists 3"));
  g_clear_error(&error);
  jobs[1].place = far;
  jobs[1].n_place = 2;
  g_assert_null(study_jobs_merge(jobs, 2, 4, -1, &error));
  g_assert_nonnull(strstr(error->message, "cluster rank 4"));
  g_clear_error(&error);
  et_workload_free(w);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/jobs/contiguous", test_contiguous);
  g_test_add_func("/jobs/interleaved", test_interleaved);
  g_test_add_func("/jobs/place_errors", test_place_errors);
  return g_test_run();
}
