/* test_et_share.c: ranks sharing one graph up to a rank shift
 * (chakra/et_share.h, issue 18 part 2).
 *
 * The workloads are built here, written as Chakra files and loaded with
 * and without sharing (ET_LOAD_NO_SHARE).  Expected distinct-graph counts
 * follow from how the ranks were built: a ring whose rank r sends to r+1,
 * receives from r-1, reduces over the world, broadcasts in its node
 * (root: the node's first rank) and reduces with its counterpart in the
 * other node is one graph up to the shift; changing one rank's node
 * duration, one peer or one group makes that rank a graph of its own.
 * Sharing must not change what any reader sees: every record read through
 * et_workload_comm, every rank's replayed finish time (to the picosecond)
 * and the files written back are compared with the unshared load, also
 * after scaling the shared workload to dp=4.  Ranks whose files are
 * byte-identical (V_PAIR: rank r names the pair group dp_(r mod 8), so
 * ranks r and r + 8 write the same file) take the shared graph without a
 * parse (et_share_offer_same); their records, through the group map of
 * their twin, must again equal the unshared load's.  The loader keeps
 * the bytes of distinct files up to 64 KiB each and 1 MiB in all to
 * compare twins in memory (chakra/et_load.c); larger files, and files
 * past the budget, are compared by reading both again: /et_share/large
 * and /et_share/budget load twins on each path and against the unshared
 * load. */
#include "config.h"
#include "chakra/et_io.h"
#include "chakra/et_scale.h"
#include "chakra/et_view.h"
#include "chakra/et_share.h"
#include "replay/sim_replay.h"
#include "regress/test_util.h"

#define N 16
#define STEPS 3

enum { V_RING = 0, V_DP, V_DURATION, V_PEER, V_GROUP, V_PAIR };

static void fail_on(GError *e)
{
  if (e)
    g_error("%s", e->message);
}

static void add_comm(et_builder *b, uint32_t node, uint8_t coll, uint64_t bytes, int src, int dst, int tag, int root,
                     const char *pg)
{
  et_comm c = {.bytes = bytes, .group = ET_GROUP_WORLD, .pg_name = ET_NONE, .split = ET_NONE, .src = src,
               .dst = dst, .tag = tag, .root = root, .coll = coll};
  et_builder_set_comm(b, node, &c, pg, NULL, 0);
}

/* Rank r of variant v (the mutations apply to rank 5 only). */
static et_graph *make_rank(int r, int v)
{
  et_builder *b = et_builder_new("share-test");
  uint64_t id = 1, prev = 0;
  char node_pg[16], pair_pg[16];
  g_snprintf(node_pg, sizeof node_pg, "tp_%d", r / 8);
  g_snprintf(pair_pg, sizeof pair_pg, "dp_%d", r % 8);
  for (int s = 0; s < STEPS; s++) {
    sim_time_ps dur = (v == V_DURATION && r == 5 && s == 1) ? 11 * SIM_PS_PER_US : 10 * SIM_PS_PER_US;
    uint32_t c = et_builder_add_node(b, id, ET_NODE_COMP, "gemm", dur, 0);
    if (prev)
      et_builder_add_dep(b, c, prev, TRUE, FALSE);
    uint64_t cid = id++;
    uint64_t last = cid;
    if (v != V_DP && v != V_PAIR) {
      uint32_t snd = et_builder_add_node(b, id, ET_NODE_COMM_SEND, "send", 0, 0);
      int dst = (v == V_PEER && r == 5) ? (r + 2) % N : (r + 1) % N;
      add_comm(b, snd, ET_COLL_NONE, 65536, r, dst, s, -1, NULL);
      et_builder_add_dep(b, snd, cid, TRUE, FALSE);
      uint64_t sid = id++;
      uint32_t rcv = et_builder_add_node(b, id, ET_NODE_COMM_RECV, "recv", 0, 0);
      add_comm(b, rcv, ET_COLL_NONE, 65536, (r + N - 1) % N, r, s, -1, NULL);
      et_builder_add_dep(b, rcv, cid, TRUE, FALSE);
      uint64_t rid = id++;
      uint32_t j = et_builder_add_node(b, id, ET_NODE_COMP, "join", SIM_PS_PER_US, 0);
      et_builder_add_dep(b, j, sid, TRUE, FALSE);
      et_builder_add_dep(b, j, rid, TRUE, FALSE);
      last = id++;
    }
    if (v == V_PAIR) {
      /* Only the pair group, with a root: ranks r and r + 8 are alike. */
      uint32_t bc = et_builder_add_node(b, id, ET_NODE_COMM_COLL, "broadcast", 0, 0);
      add_comm(b, bc, ET_COLL_BROADCAST, 1 << 18, -1, -1, -1, r % 8, pair_pg);
      et_builder_add_dep(b, bc, last, TRUE, FALSE);
      prev = id++;
      continue;
    }
    uint32_t ar = et_builder_add_node(b, id, ET_NODE_COMM_COLL, "all_reduce", 0, 0);
    add_comm(b, ar, ET_COLL_ALL_REDUCE, 1 << 20, -1, -1, -1, -1, (v == V_GROUP && r == 5) ? "all" : NULL);
    et_builder_add_dep(b, ar, last, TRUE, FALSE);
    last = id++;
    if (v != V_DP) {
      uint32_t bc = et_builder_add_node(b, id, ET_NODE_COMM_COLL, "broadcast", 0, 0);
      add_comm(b, bc, ET_COLL_BROADCAST, 1 << 18, -1, -1, -1, (r / 8) * 8, node_pg);
      et_builder_add_dep(b, bc, last, TRUE, FALSE);
      last = id++;
      uint32_t pr = et_builder_add_node(b, id, ET_NODE_COMM_COLL, "all_reduce", 0, 0);
      add_comm(b, pr, ET_COLL_ALL_REDUCE, 1 << 19, -1, -1, -1, -1, pair_pg);
      et_builder_add_dep(b, pr, last, TRUE, FALSE);
      last = id++;
    }
    prev = last;
  }
  GError *e = NULL;
  et_graph *g = et_builder_finish(b, 0, &e);
  fail_on(e);
  return g;
}

static et_workload *make_workload(int v)
{
  et_workload *w = et_workload_new(N, "share-test");
  int m[N];
  for (int k = 0; k < 2; k++) {
    char name[16];
    for (int i = 0; i < 8; i++)
      m[i] = 8 * k + i;
    g_snprintf(name, sizeof name, "tp_%d", k);
    g_assert_cmpuint(et_workload_add_group(w, name, NULL, m, 8), !=, ET_NONE);
  }
  for (int k = 0; k < 8; k++) {
    char name[16];
    m[0] = k, m[1] = k + 8;
    g_snprintf(name, sizeof name, "dp_%d", k);
    g_assert_cmpuint(et_workload_add_group(w, name, NULL, m, 2), !=, ET_NONE);
  }
  for (int i = 0; i < N; i++)
    m[i] = i;
  g_assert_cmpuint(et_workload_add_group(w, "all", NULL, m, N), !=, ET_NONE);
  for (int r = 0; r < N; r++)
    w->ranks[r] = make_rank(r, v);
  GError *e = NULL;
  g_assert_true(et_workload_resolve_groups(w, &e));
  fail_on(e);
  return w;
}

/* Writes w to a new temporary directory; returns it (g_free). */
static char *write_tmp(const et_workload *w)
{
  GError *e = NULL;
  char *dir = g_dir_make_tmp("wisp-test-share-XXXXXX", &e);
  fail_on(e);
  g_assert_true(et_workload_write(w, dir, "w", &e));
  fail_on(e);
  return dir;
}

static et_workload *load(const char *dir, gboolean share)
{
  GError *e = NULL;
  char *prefix = g_build_filename(dir, "w", NULL);
  et_workload *w = et_workload_load(prefix, share ? 0 : ET_LOAD_NO_SHARE, &e);
  fail_on(e);
  g_free(prefix);
  return w;
}

/* Every record of every rank, read through et_workload_comm, is the same
 * in a and b (pg_name: present or not; its offset is per string pool). */
static void assert_same_records(const et_workload *a, const et_workload *b)
{
  g_assert_cmpint(a->n_ranks, ==, b->n_ranks);
  for (int r = 0; r < a->n_ranks; r++) {
    g_assert_cmpuint(a->ranks[r]->n_comms, ==, b->ranks[r]->n_comms);
    for (uint32_t k = 0; k < a->ranks[r]->n_comms; k++) {
      et_comm ta, tb;
      const et_comm *x = et_workload_comm(a, r, k, &ta), *y = et_workload_comm(b, r, k, &tb);
      g_assert_cmpuint(x->bytes, ==, y->bytes);
      g_assert_cmpuint(x->group, ==, y->group);
      g_assert_cmpint(x->src, ==, y->src);
      g_assert_cmpint(x->dst, ==, y->dst);
      g_assert_cmpint(x->tag, ==, y->tag);
      g_assert_cmpint(x->root, ==, y->root);
      g_assert_cmpint(x->coll, ==, y->coll);
      g_assert_cmpint(x->pg_name == ET_NONE, ==, y->pg_name == ET_NONE);
    }
  }
}

static topo *test_topo(void)
{
  GError *e = NULL;
  topo *t = topo_load_string("schema_version: 1\nname: t\nmodel: analytical\nlibrary: {name: ideal}\ndims:\n"
                             "  - {name: node, kind: switch, size: 8, bandwidth: 100GB/s, latency: 1us}\n"
                             "  - {name: net, kind: switch, size: 4, bandwidth: 25GB/s, latency: 2us}\n",
                             "t.yaml", &e);
  fail_on(e);
  return t;
}

/* Replays a and b on the same cluster: every rank finishes at the same
 * picosecond, with the same event count. */
static void assert_same_replay(const et_workload *a, const et_workload *b)
{
  topo *t = test_topo();
  sim_replay_options opt = {.quiet = TRUE};
  GError *e = NULL;
  sim_result *ra = sim_replay_run(a, t, &opt, &e);
  fail_on(e);
  sim_result *rb = sim_replay_run(b, t, &opt, &e);
  fail_on(e);
  g_assert_cmpint(ra->n_ranks, ==, rb->n_ranks);
  for (int r = 0; r < ra->n_ranks; r++) {
    if (r == 0)
      g_test_message("rank 0 finish: shared %" G_GINT64_FORMAT " ps, unshared %" G_GINT64_FORMAT " ps",
                     (gint64)ra->ranks[r].finish, (gint64)rb->ranks[r].finish);
    g_assert_cmpint(ra->ranks[r].finish, ==, rb->ranks[r].finish);
    g_assert_cmpint(ra->ranks[r].exposed_comm, ==, rb->ranks[r].exposed_comm);
  }
  g_assert_cmpint(ra->step_time, ==, rb->step_time);
  g_assert_cmpuint(ra->events, ==, rb->events);
  g_assert_cmpuint(ra->comms->len, ==, rb->comms->len);
  g_assert_cmpint(ra->step_time, >, 0);
  sim_result_free(ra);
  sim_result_free(rb);
  topo_free(t);
}

/* The files of every rank (and comm_group*.json) in dirs a and b are
 * byte-identical. */
static void assert_same_files(const char *a, const char *b)
{
  GDir *d = g_dir_open(a, 0, NULL);
  g_assert_nonnull(d);
  const char *e;
  guint files = 0;
  while ((e = g_dir_read_name(d)) != NULL) {
    char *pa = g_build_filename(a, e, NULL), *pb = g_build_filename(b, e, NULL);
    char *ca = NULL, *cb = NULL;
    gsize la = 0, lb = 0;
    g_assert_true(g_file_get_contents(pa, &ca, &la, NULL));
    g_assert_true(g_file_get_contents(pb, &cb, &lb, NULL));
    g_assert_cmpmem(ca, la, cb, lb);
    files++;
    g_free(ca), g_free(cb), g_free(pa), g_free(pb);
  }
  g_dir_close(d);
  g_assert_cmpuint(files, ==, test_dir_entries(b));
  g_assert_cmpuint(files, >=, N);
}

/* Loads variant v shared and unshared; checks the distinct count and the
 * canonical rank of every rank, then that records agree; returns the
 * shared load (and the unshared one in *plain, the directory in *dir). */
static et_workload *check_variant(int v, int want_distinct, int odd_rank, et_workload **plain, char **dir)
{
  et_workload *built = make_workload(v);
  *dir = write_tmp(built);
  /* Sharing in memory finds the same classes as the loader. */
  g_assert_cmpint(et_workload_share(built), ==, want_distinct);
  et_workload *s = load(*dir, TRUE), *u = load(*dir, FALSE);
  g_assert_null(u->share);
  g_assert_nonnull(s->share);
  g_test_message("variant %d: %d distinct graph(s), want %d", v, et_share_distinct(s->share), want_distinct);
  g_assert_cmpint(et_share_distinct(s->share), ==, want_distinct);
  for (int r = 0; r < N; r++) {
    int want = (r == odd_rank) ? r : (odd_rank == 0 && r > 0 ? 1 : 0);
    g_assert_cmpint(et_share_canonical(s->share, r), ==, want);
    g_assert_cmpint(et_share_canonical(built->share, r), ==, want);
  }
  char *sum = et_workload_share_summary(s);
  char *want_sum = g_strdup_printf("%d ranks share %d distinct graph%s", N, want_distinct, want_distinct == 1 ? "" : "s");
  g_assert_cmpstr(sum, ==, want_sum);
  g_free(sum), g_free(want_sum);
  assert_same_records(s, u);
  assert_same_records(built, u);
  et_workload_free(built);
  *plain = u;
  return s;
}

/* A ring with world, node and pair collectives: one graph for 16 ranks;
 * same replay and the same files written back. */
static void test_ring(void)
{
  et_workload *u;
  char *dir;
  et_workload *s = check_variant(V_RING, 1, -1, &u, &dir);
  assert_same_replay(s, u);
  GError *e = NULL;
  char *da = g_dir_make_tmp("wisp-test-share-a-XXXXXX", &e), *db = g_dir_make_tmp("wisp-test-share-b-XXXXXX", &e);
  fail_on(e);
  g_assert_true(et_workload_write_threads(s, da, "w", 2, &e));
  fail_on(e);
  g_assert_true(et_workload_write_threads(u, db, "w", 1, &e));
  fail_on(e);
  assert_same_files(da, db);
  assert_same_files(da, dir); /* and the files it was loaded from */
  test_rm_rf(da), test_rm_rf(db), test_rm_rf(dir);
  g_free(da), g_free(db), g_free(dir);
  et_workload_free(s);
  et_workload_free(u);
}

/* The ring scaled to dp=4 (two replicas of the 16 ranks) from the shared
 * and the unshared load: the sharing translation, then the scaling one,
 * give every new rank the same records and the same replay. */
static void test_scaled(void)
{
  et_workload *u;
  char *dir;
  et_workload *s = check_variant(V_RING, 1, -1, &u, &dir);
  et_workload *scaled[2];
  et_workload *in[2] = {s, u};
  for (int k = 0; k < 2; k++) {
    GError *e = NULL;
    et_layout l;
    g_assert_true(et_layout_infer(in[k], NULL, &l, &e));
    fail_on(e);
    g_assert_cmpint(l.degree[ET_DIM_DP], ==, 2); /* dp_* groups of 2 */
    et_scale_request rq = {.dp = 4, .placement = ET_PLACE_OUTER};
    scaled[k] = et_workload_scale(in[k], &l, &rq, &e);
    fail_on(e);
    et_layout_clear(&l);
    g_assert_cmpint(scaled[k]->n_ranks, ==, 2 * N);
  }
  char *sum = et_workload_share_summary(scaled[0]);
  g_assert_cmpstr(sum, ==, "16 traced ranks share 1 distinct graph");
  g_free(sum);
  assert_same_records(scaled[0], scaled[1]);
  assert_same_replay(scaled[0], scaled[1]);
  test_rm_rf(dir);
  g_free(dir);
  et_workload_free(scaled[0]);
  et_workload_free(scaled[1]);
}

/* Identical data-parallel ranks (compute and a world all-reduce). */
static void test_dp(void)
{
  et_workload *u;
  char *dir;
  et_workload *s = check_variant(V_DP, 1, -1, &u, &dir);
  assert_same_replay(s, u);
  test_rm_rf(dir);
  g_free(dir);
  et_workload_free(s);
  et_workload_free(u);
}

/* One rank differs: a node's duration, a peer that is not the shift, a
 * group instead of the world.  Rank 5 keeps its own graph; the others
 * share rank 0's. */
static void test_differs(void)
{
  static const int variants[] = {V_DURATION, V_PEER, V_GROUP};
  for (guint k = 0; k < G_N_ELEMENTS(variants); k++) {
    et_workload *u;
    char *dir;
    et_workload *s = check_variant(variants[k], 2, 5, &u, &dir);
    if (variants[k] == V_DURATION) /* the others do not match their peers' operations */
      assert_same_replay(s, u);
    test_rm_rf(dir);
    g_free(dir);
    et_workload_free(s);
    et_workload_free(u);
  }
}

/* Byte-identical rank files: rank r + 8 repeats rank r's file (V_PAIR),
 * so the loader gives it its twin's shared graph and group map without
 * parsing it; every record and the replay equal the unshared load's.
 * The shortcut's own refusals: a graph with peers (the ring), and a
 * file copied to a rank outside the group it names, whose load must
 * fail as without sharing (the parse reports it). */
static void test_same_bytes(void)
{
  et_workload *u;
  char *dir;
  et_workload *s = check_variant(V_PAIR, 1, -1, &u, &dir);
  assert_same_replay(s, u);
  et_workload_free(s);
  et_workload_free(u);
  /* Rank 1's file (group dp_1 = {1, 9}) as rank 8's. */
  char *f1 = g_build_filename(dir, "w.1.et", NULL), *f8 = g_build_filename(dir, "w.8.et", NULL);
  char *bytes = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(f1, &bytes, &len, NULL));
  g_assert_true(g_file_set_contents(f8, bytes, (gssize)len, NULL));
  char *prefix = g_build_filename(dir, "w", NULL);
  GError *es = NULL, *eu = NULL;
  g_assert_null(et_workload_load(prefix, 0, &es));
  g_assert_null(et_workload_load(prefix, ET_LOAD_NO_SHARE, &eu));
  g_assert_nonnull(es);
  g_assert_nonnull(eu);
  g_assert_cmpstr(es->message, ==, eu->message);
  g_assert_nonnull(strstr(es->message, "which does not contain rank 8"));
  g_error_free(es), g_error_free(eu);
  g_free(bytes), g_free(f1), g_free(f8), g_free(prefix);
  test_rm_rf(dir);
  g_free(dir);
  /* The ring names peers: rank 1 is not rank 0's graph whatever its
   * file holds, so the shortcut refuses it (et_share_offer shares it). */
  et_workload *w = make_workload(V_RING);
  et_share_attach(w);
  g_assert_false(et_share_offer(w, 0));
  g_assert_false(et_share_offer_same(w, 1, 0));
  g_assert_cmpint(et_share_canonical(w->share, 1), ==, 1);
  g_assert_true(et_share_offer(w, 1));
  g_assert_cmpint(et_share_canonical(w->share, 1), ==, 0);
  et_share_seal(w->share);
  et_workload_free(w);
}

/* A world all-reduce after `nodes` compute nodes whose durations follow
 * `seed` (one more picosecond on the last node for a seed of 1000 + k, the
 * same file length as seed k). */
static et_graph *make_long_rank(int nodes, int seed)
{
  et_builder *b = et_builder_new("share-long");
  for (int i = 0; i < nodes; i++) {
    sim_time_ps dur = (sim_time_ps)(1000 + (seed % 1000) * 7 + i) * SIM_PS_PER_US;
    if (i == nodes - 1 && seed >= 1000)
      dur += 1;
    uint32_t c = et_builder_add_node(b, (uint64_t)i + 1, ET_NODE_COMP, "gemm", dur, 0);
    if (i > 0)
      et_builder_add_dep(b, c, (uint64_t)i, TRUE, FALSE); /* on the node before (ids count from 1) */
  }
  uint32_t ar = et_builder_add_node(b, (uint64_t)nodes + 1, ET_NODE_COMM_COLL, "all_reduce", 0, 0);
  add_comm(b, ar, ET_COLL_ALL_REDUCE, 1 << 20, -1, -1, -1, -1, NULL);
  et_builder_add_dep(b, ar, (uint64_t)nodes, TRUE, FALSE);
  GError *e = NULL;
  et_graph *g = et_builder_finish(b, 0, &e);
  fail_on(e);
  return g;
}

/* Writes n ranks of `nodes` compute nodes, rank r with seed seed_of[r];
 * loads them shared and unshared and checks the distinct count, that
 * every rank's file is more than (above) or at most (!above) `limit`
 * bytes long (the path the test means to take) and that the records and
 * the replay agree. */
static void check_long(int n, int nodes, const int *seed_of, int want_distinct, gsize limit, gboolean above,
                       gsize *total_distinct)
{
  et_workload *w = et_workload_new(n, "share-long");
  for (int r = 0; r < n; r++)
    w->ranks[r] = make_long_rank(nodes, seed_of[r]);
  GError *e = NULL;
  g_assert_true(et_workload_resolve_groups(w, &e));
  fail_on(e);
  char *dir = write_tmp(w);
  *total_distinct = 0;
  for (int r = 0; r < n; r++) {
    char *name = g_strdup_printf("w.%d.et", r), *f = g_build_filename(dir, name, NULL);
    GStatBuf st;
    g_assert_cmpint(g_stat(f, &st), ==, 0);
    g_test_message("rank %d: %" G_GINT64_FORMAT " bytes", r, (gint64)st.st_size);
    g_assert_true(above ? (gsize)st.st_size > limit : (gsize)st.st_size <= limit);
    gboolean first = TRUE;
    for (int k = 0; k < r; k++)
      first = first && seed_of[k] != seed_of[r];
    if (first)
      *total_distinct += (gsize)st.st_size;
    g_free(name), g_free(f);
  }
  et_workload *s = load(dir, TRUE), *u = load(dir, FALSE);
  g_assert_cmpint(et_share_distinct(s->share), ==, want_distinct);
  for (int r = 0; r < n; r++) {
    int c = 0;
    while (seed_of[c] != seed_of[r])
      c++;
    g_assert_cmpint(et_share_canonical(s->share, r), ==, c); /* the first rank with its file */
  }
  assert_same_records(s, u);
  assert_same_replay(s, u);
  et_workload_free(s), et_workload_free(u), et_workload_free(w);
  test_rm_rf(dir);
  g_free(dir);
}

/* Files over one 64 KiB block are not kept: ranks 0-2 twins, rank 3 the
 * same length but its last duration 1 ps longer (its last block differs). */
static void test_large(void)
{
  const int seeds[4] = {5, 5, 5, 1005};
  gsize total = 0;
  check_long(4, 2500, seeds, 2, 65536, TRUE, &total);
}

/* Twenty distinct files of at most 64 KiB but more than 1 MiB in all:
 * the last ones are not kept, so ranks 20-31 (twins of ranks 8-19) are
 * compared in memory for the first and by reading again for the last. */
static void test_budget(void)
{
  int seeds[32];
  for (int r = 0; r < 32; r++)
    seeds[r] = r < 20 ? r : r - 12;
  gsize total = 0;
  check_long(32, 1300, seeds, 20, 65536, FALSE, &total);
  g_test_message("distinct files: %" G_GSIZE_FORMAT " bytes", total);
  g_assert_cmpuint(total, >, 1u << 20); /* past the loader's budget (et_load.c ET_LOAD_KEEP) */
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/et_share/ring", test_ring);
  g_test_add_func("/et_share/dp", test_dp);
  g_test_add_func("/et_share/scaled", test_scaled);
  g_test_add_func("/et_share/differs", test_differs);
  g_test_add_func("/et_share/same_bytes", test_same_bytes);
  g_test_add_func("/et_share/large", test_large);
  g_test_add_func("/et_share/budget", test_budget);
  return g_test_run();
}
