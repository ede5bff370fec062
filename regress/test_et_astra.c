/* test_et_astra.c: et_astra_transform (`wisp convert --for astra-sim`) on
 * hand-built graphs whose rewrite is worked out by hand below: chains,
 * re-derived gaps, serialised overlap, rounding with carried error, the
 * default group, and a write/read round trip of the result.
 */
#include "config.h"

#include "chakra/et_astra.h"
#include "chakra/et_io.h"
#include "regress/test_util.h"

#define US SIM_PS_PER_US

/* Index of the node with Chakra id `id` (asserts it exists). */
static uint32_t node_of(const et_graph *g, uint64_t id)
{
  for (uint32_t i = 0; i < g->n_nodes; i++)
    if (g->nodes[i].id == id)
      return i;
  g_assert_not_reached();
}

/* Whether p is a parent of c. */
static gboolean has_parent(const et_graph *g, uint32_t c, uint32_t p)
{
  for (uint32_t k = g->nodes[c].parents; k < g->nodes[c + 1].parents; k++)
    if (ET_EDGE_INDEX(g->parent_edges[k]) == p)
      return TRUE;
  return FALSE;
}

/* The only gap node (name "idle_gap") of type t whose single child is c. */
static uint32_t gap_before(const et_graph *g, uint32_t c, et_node_type t)
{
  uint32_t found = ET_NONE;
  for (uint32_t k = g->nodes[c].parents; k < g->nodes[c + 1].parents; k++) {
    uint32_t p = ET_EDGE_INDEX(g->parent_edges[k]);
    if (g->nodes[p].type == t && strcmp(et_node_name(g, p), "idle_gap") == 0) {
      g_assert_cmpuint(found, ==, ET_NONE);
      found = p;
    }
  }
  g_assert_cmpuint(found, !=, ET_NONE);
  return found;
}

static uint32_t add(et_builder *b, uint64_t id, et_node_type t, const char *name, sim_time_ps start, sim_time_ps dur,
                    uint8_t flags)
{
  uint32_t n = et_builder_add_node(b, id, t, name, dur, flags);
  et_builder_set_start(b, n, start);
  return n;
}

static void set_ar(et_builder *b, uint32_t n)
{
  et_comm c = {.bytes = 1024, .group = ET_GROUP_WORLD, .pg_name = ET_NONE, .split = ET_NONE, .src = -1, .dst = -1,
               .tag = -1, .root = -1, .coll = ET_COLL_ALL_REDUCE};
  et_builder_set_comm(b, n, &c, NULL, NULL, 0);
}

/* One rank, times in us on the baseline timeline (each node when its
 * parents end, as wisp replays the graph; the leading delays LB and LX
 * place B and X the way the Kineto frontend places a stream's first op):
 *   A COMP [0, 10) stream 1;  LB delay [0, 5), B COMP [5, 15) stream 2
 *   (runs beside A);  D delay [15, 20) after B;  C COMP [20, 23) after D
 *   and A;  LX delay [0, 2), X all-reduce [2, 6);  E delay [23, 30) after
 *   C, Y all-reduce [30, 32) after E.
 * Expected rewrite:
 *   compute chain A -> B -> gap -> C: B's chain predecessor A ends at 10 > 5,
 *     so no gap and the 5 us overlap is serialised (10 + 10 + 3 - |[0,15) u
 *     [20,23)| = 23 - 18 = 5 us); C is ready at max(B 15, A 10) = 15, so a
 *     5 us COMP gap after B (the binding predecessor) replaces D;
 *   communication chain: X has no kept predecessor, so a 2 us BROADCAST gap
 *     with no parent; Y is ready at max(C 23, X 6) = 23, so a 7 us gap
 *     after C that also waits for X;
 *   no tail (the window ends with Y at 32); both collectives span every
 *   rank and carry no pg_name; wisp_compute_slots = 1. */
static void test_chains_and_gaps(void)
{
  et_builder *b = et_builder_new("hand");
  add(b, 1, ET_NODE_COMP, "A", 0, 10 * US, 0);
  add(b, 11, ET_NODE_COMP, "LB", 0, 5 * US, ET_FLAG_DELAY);
  uint32_t nb0 = add(b, 2, ET_NODE_COMP, "B", 5 * US, 10 * US, 0);
  et_builder_add_dep(b, nb0, 11, TRUE, FALSE);
  uint32_t d = add(b, 3, ET_NODE_COMP, "D", 15 * US, 5 * US, ET_FLAG_DELAY);
  et_builder_add_dep(b, d, 2, TRUE, FALSE);
  uint32_t c = add(b, 4, ET_NODE_COMP, "C", 20 * US, 3 * US, 0);
  et_builder_add_dep(b, c, 3, TRUE, FALSE);
  et_builder_add_dep(b, c, 1, TRUE, FALSE);
  add(b, 12, ET_NODE_COMP, "LX", 0, 2 * US, ET_FLAG_DELAY);
  uint32_t x0 = add(b, 5, ET_NODE_COMM_COLL, "X", 2 * US, 4 * US, 0);
  set_ar(b, x0);
  et_builder_add_dep(b, x0, 12, TRUE, FALSE);
  uint32_t e = add(b, 13, ET_NODE_COMP, "E", 23 * US, 7 * US, ET_FLAG_DELAY);
  et_builder_add_dep(b, e, 4, TRUE, FALSE);
  uint32_t y = add(b, 6, ET_NODE_COMM_COLL, "Y", 30 * US, 2 * US, 0);
  set_ar(b, y);
  et_builder_add_dep(b, y, 13, TRUE, FALSE);
  et_builder_set_compute_slots(b, 2);
  GError *error = NULL;
  et_workload *w = et_workload_new(1, "hand");
  w->ranks[0] = et_builder_finish(b, 0, &error);
  g_assert_no_error(error);
  w->measured_step_ps[0] = 32 * US;
  g_assert_true(et_workload_resolve_groups(w, &error));

  et_astra_report rep;
  et_workload *a = et_astra_transform(w, &rep, &error);
  g_assert_no_error(error);
  g_assert_nonnull(a);
  const et_graph *g = a->ranks[0];
  g_assert_cmpuint(g->compute_slots, ==, 1);
  g_assert_cmpuint(g->n_nodes, ==, 5 + 3); /* A B C X Y and three gaps; LB, D, LX and E are gone */
  uint32_t na = node_of(g, 1), nb = node_of(g, 2), nc = node_of(g, 4), nx = node_of(g, 5), ny = node_of(g, 6);
  g_assert_true(has_parent(g, nb, na));
  uint32_t gc = gap_before(g, nc, ET_NODE_COMP);
  g_assert_cmpint(g->nodes[gc].duration_ps, ==, 5 * US);
  g_assert_cmpuint(et_node_n_parents(g, gc), ==, 1);
  g_assert_true(has_parent(g, gc, nb));
  g_assert_true(has_parent(g, nc, na)); /* the other modelled parent stays */
  uint32_t gx = gap_before(g, nx, ET_NODE_COMM_COLL);
  g_assert_cmpint(g->nodes[gx].duration_ps, ==, 2 * US);
  g_assert_cmpuint(et_node_n_parents(g, gx), ==, 0);
  g_assert_true(g->nodes[gx].flags & ET_FLAG_REPLAY);
  g_assert_cmpuint(et_node_comm(g, gx)->coll, ==, ET_COLL_BROADCAST);
  uint32_t gy = gap_before(g, ny, ET_NODE_COMM_COLL);
  g_assert_cmpint(g->nodes[gy].duration_ps, ==, 7 * US);
  g_assert_true(has_parent(g, gy, nc));
  g_assert_true(has_parent(g, gy, nx));
  for (uint32_t i = 0; i < g->n_nodes; i++) {
    g_assert_false(g->nodes[i].flags & ET_FLAG_CPU_OP);
    if (g->nodes[i].flags & ET_FLAG_DELAY) /* only the communication-chain gaps */
      g_assert_cmpuint(g->nodes[i].type, ==, ET_NODE_COMM_COLL);
    const et_comm *cm = et_node_comm(g, i);
    if (cm)
      g_assert_cmpuint(cm->pg_name, ==, ET_NONE);
  }
  g_assert_cmpuint(rep.removed_gap_nodes, ==, 4);
  g_assert_cmpuint(rep.comp_gaps, ==, 1);
  g_assert_cmpuint(rep.comm_gaps, ==, 2);
  g_assert_cmpint(rep.comp_serialised_max_ps, ==, 5 * US);
  g_assert_cmpint(rep.comm_serialised_max_ps, ==, 0);
  g_assert_cmpuint(rep.world_collectives, ==, 2);
  g_assert_cmpuint(rep.group_collectives, ==, 0);
  g_assert_cmpint(rep.rounding_max_ps, ==, 0);
  g_assert_cmpint(a->measured_step_ps[0], ==, 32 * US);

  /* Written and read back: same nodes, no comm_group.json, slots 1. */
  char *dir = g_dir_make_tmp("wisp-astra-XXXXXX", NULL);
  g_assert_true(et_workload_write(a, dir, "t", &error));
  g_assert_no_error(error);
  char *cg = g_build_filename(dir, "comm_group.json", NULL);
  g_assert_false(g_file_test(cg, G_FILE_TEST_EXISTS));
  char *prefix = g_build_filename(dir, "t", NULL);
  et_workload *back = et_workload_load(prefix, 0, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(back->ranks[0]->n_nodes, ==, g->n_nodes);
  g_assert_cmpuint(back->ranks[0]->compute_slots, ==, 1);
  /* The communication-chain gaps come back as idle gaps (wisp_delay), not
   * as communication: two COMP delay nodes of 2 and 7 us. */
  sim_time_ps gaps_ps = 0;
  int n_gaps = 0;
  for (uint32_t i = 0; i < back->ranks[0]->n_nodes; i++)
    if (back->ranks[0]->nodes[i].flags & ET_FLAG_DELAY) {
      g_assert_cmpuint(back->ranks[0]->nodes[i].type, ==, ET_NODE_COMP);
      g_assert_cmpuint(back->ranks[0]->nodes[i].comm, ==, ET_NONE);
      gaps_ps += back->ranks[0]->nodes[i].duration_ps;
      n_gaps++;
    }
  g_assert_cmpint(n_gaps, ==, 2);
  g_assert_cmpint(gaps_ps, ==, 9 * US);
  g_assert_cmpint(back->measured_step_ps[0], ==, 32 * US);
  et_workload_free(back);
  test_rm_rf(dir);
  g_free(prefix);
  g_free(cg);
  g_free(dir);
  et_workload_free(a);
  et_workload_free(w);
}

/* Three back-to-back 0.4 us kernels: rounded with the error carried they
 * become 0, 1 and 0 us (0.4 -> 0 carry 0.4; 0.8 -> 1 carry -0.2; 0.2 -> 0),
 * 1 us in all against 1.2 us measured; without the carry all three would
 * be 0.  A sub-world group keeps its pg_name. */
static void test_rounding_and_groups(void)
{
  et_workload *w = et_workload_new(2, "hand2");
  int pair[] = {1, 0}; /* both ranks, but not in rank order: not the default group */
  et_workload_add_group(w, "pair", NULL, pair, 2);
  GError *error = NULL;
  for (int r = 0; r < 2; r++) {
    et_builder *b = et_builder_new("hand2");
    for (int k = 0; k < 3; k++) {
      uint32_t n = add(b, (uint64_t)k + 1, ET_NODE_COMP, "k", k * 400000, 400000, 0);
      if (k)
        et_builder_add_dep(b, n, (uint64_t)k, TRUE, FALSE);
    }
    uint32_t x = add(b, 10, ET_NODE_COMM_COLL, "ar", 1200000, 1 * US, 0);
    et_comm cm = {.bytes = 64, .group = ET_GROUP_WORLD, .pg_name = ET_NONE, .split = ET_NONE, .src = -1, .dst = -1,
                  .tag = -1, .root = -1, .coll = ET_COLL_ALL_REDUCE};
    et_builder_set_comm(b, x, &cm, "pair", NULL, 0);
    et_builder_add_dep(b, x, 3, TRUE, FALSE);
    w->ranks[r] = et_builder_finish(b, 0, &error);
    g_assert_no_error(error);
  }
  g_assert_true(et_workload_resolve_groups(w, &error));
  et_astra_report rep;
  et_workload *a = et_astra_transform(w, &rep, &error);
  g_assert_no_error(error);
  const et_graph *g = a->ranks[0];
  g_assert_cmpint(g->nodes[node_of(g, 1)].duration_ps, ==, 0);
  g_assert_cmpint(g->nodes[node_of(g, 2)].duration_ps, ==, 1 * US);
  g_assert_cmpint(g->nodes[node_of(g, 3)].duration_ps, ==, 0);
  g_assert_cmpint(rep.rounding_max_ps, ==, 200000);
  g_assert_cmpuint(rep.group_collectives, ==, 2);
  g_assert_cmpuint(rep.world_collectives, ==, 0);
  const et_comm *cm = et_node_comm(g, node_of(g, 10));
  g_assert_cmpuint(cm->pg_name, !=, ET_NONE);
  g_assert_cmpstr(g->strings + cm->pg_name, ==, "pair");
  g_assert_cmpuint(a->groups->len, ==, 1);
  et_workload_free(a);
  et_workload_free(w);
}

/* No measured starts (a hand-written .et file): the baseline timeline
 * places them.  K1 [0, 3), delay [3, 5) after K1, K2 [5, 6) after the
 * delay; a kernel K3 [0, 4) without parents on another stream.  Chain by
 * baseline start: K1 (0), K3 (0, higher index), K2 (5).  K3 follows K1
 * (serialised: 3 + 4 + 1 - |[0, 4) u [5, 6)| = 8 - 5 = 3 us); K2 is ready
 * at max(K1 3, K3 4) = 4, so a 1 us gap after K3, its chain predecessor
 * and the latest.  The measured 2 us delay does not survive as such: K3
 * ran during it.  A replayed all-reduce R (1.5 us, no size) becomes a
 * replayed BROADCAST of 2 us (1.5 rounded half up) in the communication
 * chain. */
static void test_no_starts(void)
{
  et_builder *b = et_builder_new("nostart");
  et_builder_add_node(b, 1, ET_NODE_COMP, "K1", 3 * US, 0);
  uint32_t d = et_builder_add_node(b, 2, ET_NODE_COMP, "delay", 2 * US, ET_FLAG_DELAY);
  et_builder_add_dep(b, d, 1, TRUE, FALSE);
  uint32_t k2 = et_builder_add_node(b, 3, ET_NODE_COMP, "K2", 1 * US, 0);
  et_builder_add_dep(b, k2, 2, TRUE, FALSE);
  et_builder_add_node(b, 4, ET_NODE_COMP, "K3", 4 * US, 0);
  uint32_t rr = et_builder_add_node(b, 5, ET_NODE_COMM_COLL, "R", 1500000, ET_FLAG_REPLAY);
  et_comm rc = {.bytes = 0, .group = ET_GROUP_WORLD, .pg_name = ET_NONE, .split = ET_NONE, .src = -1, .dst = -1,
                .tag = -1, .root = -1, .coll = ET_COLL_ALL_REDUCE};
  et_builder_set_comm(b, rr, &rc, NULL, NULL, 0);
  GError *error = NULL;
  et_workload *w = et_workload_new(1, "nostart");
  w->ranks[0] = et_builder_finish(b, 0, &error);
  g_assert_no_error(error);
  et_astra_report rep;
  et_workload *a = et_astra_transform(w, &rep, &error);
  g_assert_no_error(error);
  const et_graph *g = a->ranks[0];
  uint32_t n1 = node_of(g, 1), n2 = node_of(g, 3), n3 = node_of(g, 4);
  g_assert_true(has_parent(g, n3, n1));
  uint32_t gp = gap_before(g, n2, ET_NODE_COMP);
  g_assert_cmpint(g->nodes[gp].duration_ps, ==, 1 * US);
  g_assert_true(has_parent(g, gp, n3));
  g_assert_true(has_parent(g, n2, n1)); /* K2's own parent, through the removed delay */
  g_assert_cmpint(rep.comp_serialised_max_ps, ==, 3 * US);
  g_assert_cmpuint(rep.comp_gaps, ==, 1);
  uint32_t nr = node_of(g, 5);
  g_assert_cmpuint(g->nodes[nr].type, ==, ET_NODE_COMM_COLL);
  g_assert_true(g->nodes[nr].flags & ET_FLAG_REPLAY);
  g_assert_cmpuint(et_node_comm(g, nr)->coll, ==, ET_COLL_BROADCAST);
  g_assert_cmpint(g->nodes[nr].duration_ps, ==, 2 * US);
  g_assert_cmpuint(rep.replay_comm_as_broadcast, ==, 1);
  g_assert_cmpuint(rep.comm_gaps, ==, 0);
  et_workload_free(a);
  et_workload_free(w);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/et-astra/chains-and-gaps", test_chains_and_gaps);
  g_test_add_func("/et-astra/rounding-and-groups", test_rounding_and_groups);
  g_test_add_func("/et-astra/no-starts", test_no_starts);
  return g_test_run();
}
