/* test_coll_sched.c: the collectives' pure logic — step schedules, the
 * nccl-tests conventions, names and the tuner — checked without a network.
 *
 * The schedule checker runs every position of a phase as the state
 * machine coll_run.c uses (start a step: issue its sends; finish it once the
 * transfers addressed to it arrived), with instantaneous delivery.  It
 * proves that every transfer is addressed to a step that expects exactly
 * that many receives (no lost or surplus messages) and that the schedule
 * cannot deadlock; byte totals are compared with closed forms.
 */
#include "config.h"

#include "collectives/coll_internal.h"

typedef struct {
  uint64_t sent_bytes;   /* bytes sent by position 0 */
  uint64_t total_bytes;  /* bytes sent by all positions */
  uint64_t transfers;
} sched_totals;

static uint64_t a2av_fn(const void *ctx, int a, int b)
{
  (void)ctx;
  /* An irregular matrix with zeros: (a + 2b) mod 5 * 100 bytes. */
  return (uint64_t)((a + 2 * b) % 5) * 100u;
}

/* Runs the schedule to completion; fails the test on any mismatch. */
static sched_totals run_sched(const coll_sched *s)
{
  sched_totals tot = { 0, 0, 0 };
  int q = s->q;
  uint32_t n = coll_sched_n_steps(s);
  uint32_t *cur = g_new0(uint32_t, q);
  uint32_t *need = g_new0(uint32_t, q);
  gboolean *started = g_new0(gboolean, q);
  uint32_t *cnt = g_new0(uint32_t, (size_t)q * (n + 1));
  coll_xfer *out = g_new(coll_xfer, 2 * (size_t)q + 2);
  gboolean progress = TRUE;
  while (progress) {
    progress = FALSE;
    for (int p = 0; p < q; p++) {
      while (cur[p] < n) {
        if (!started[p]) {
          uint32_t nr = 0;
          uint64_t red = 0;
          uint32_t nx = coll_sched_step(s, p, cur[p], out, &nr, &red);
          for (uint32_t i = 0; i < nx; i++) {
            g_assert_cmpint(out[i].peer, >=, 0);
            g_assert_cmpint(out[i].peer, <, q);
            g_assert_cmpint(out[i].peer, !=, p);
            g_assert_cmpuint(out[i].recv_step, <, n);
            /* A message for a step the receiver already finished would be lost. */
            g_assert_cmpuint(out[i].recv_step, >=, cur[out[i].peer]);
            cnt[(size_t)out[i].peer * (n + 1) + out[i].recv_step]++;
            tot.total_bytes += out[i].bytes;
            tot.transfers++;
            if (p == 0)
              tot.sent_bytes += out[i].bytes;
          }
          need[p] = nr;
          started[p] = TRUE;
          progress = TRUE;
        }
        uint32_t got = cnt[(size_t)p * (n + 1) + cur[p]];
        g_assert_cmpuint(got, <=, need[p]);
        if (got < need[p])
          break;
        cur[p]++;
        started[p] = FALSE;
        progress = TRUE;
      }
    }
  }
  for (int p = 0; p < q; p++)
    g_assert_cmpuint(cur[p], ==, n); /* no deadlock: everyone finished */
  g_free(cur);
  g_free(need);
  g_free(started);
  g_free(cnt);
  g_free(out);
  return tot;
}

/* Every supported (primitive, algorithm) pair, every q from 1 to 33 and a
 * few roots: schedules match and terminate. */
static void test_all_schedules_consistent(void)
{
  for (int prim = 0; prim < COLL_PRIM_COUNT; prim++) {
    for (int a = COLL_ALGO_RING; a < COLL_ALGO_HIERARCHICAL; a++) {
      if (!coll_algo_supports((coll_algo)a, (coll_prim)prim))
        continue;
      for (int q = 1; q <= 33; q++) {
        for (int tree = 0; tree < 2; tree++) {
          coll_sched s = { .prim = (coll_prim)prim, .algo = (coll_algo)a, .q = q, .root = -1, .tree = tree,
                           .bytes = 1000003, .a2av = a2av_fn };
          if (prim == COLL_PRIM_BROADCAST || prim == COLL_PRIM_REDUCE || prim == COLL_PRIM_GATHER ||
              prim == COLL_PRIM_SCATTER)
            s.root = q / 3;
          run_sched(&s);
        }
      }
    }
  }
}

/* Byte volumes per member against the textbook closed forms (D = 2^20
 * divisible by every q used). */
static void test_volumes(void)
{
  const uint64_t D = 1u << 20;
  for (int q = 2; q <= 16; q *= 2) {
    /* Ring all-reduce: 2(q-1) steps of D/q each. */
    coll_sched s = { .prim = COLL_PRIM_ALL_REDUCE, .algo = COLL_ALGO_RING, .q = q, .root = -1, .bytes = D };
    g_assert_cmpuint(coll_sched_n_steps(&s), ==, 2u * (q - 1));
    g_assert_cmpuint(run_sched(&s).sent_bytes, ==, 2u * (q - 1) * (D / q));
    /* Bidirectional ring: same volume, half each way. */
    s.algo = COLL_ALGO_RING_BIDIR;
    g_assert_cmpuint(run_sched(&s).sent_bytes, ==, 2u * (q - 1) * (D / q));
    /* Direct all-reduce: RS + AG, (q-1) pieces each, 2 steps. */
    s.algo = COLL_ALGO_DIRECT;
    g_assert_cmpuint(coll_sched_n_steps(&s), ==, 2);
    g_assert_cmpuint(run_sched(&s).sent_bytes, ==, 2u * (q - 1) * (D / q));
    /* Halving-doubling: 2 log2 q steps, 2(q-1)/q D sent. */
    s.algo = COLL_ALGO_HALVING_DOUBLING;
    g_assert_cmpuint(coll_sched_n_steps(&s), ==, 2u * (uint32_t)g_bit_storage((gulong)q - 1));
    g_assert_cmpuint(run_sched(&s).sent_bytes, ==, 2u * (q - 1) * (D / q));
    /* Pairwise all-to-all: q-1 steps of D/q. */
    coll_sched a = { .prim = COLL_PRIM_ALL_TO_ALL, .algo = COLL_ALGO_PAIRWISE, .q = q, .root = -1, .bytes = D };
    g_assert_cmpuint(run_sched(&a).sent_bytes, ==, (q - 1) * (D / q));
    /* Direct all-gather: own piece D/q to q-1 peers. */
    coll_sched g = { .prim = COLL_PRIM_ALL_GATHER, .algo = COLL_ALGO_DIRECT, .q = q, .root = -1, .bytes = D };
    g_assert_cmpuint(run_sched(&g).total_bytes, ==, (uint64_t)q * (q - 1) * (D / q));
  }
  /* Non-power-of-two halving-doubling all-reduce, q = 6: P = 4, r = 2;
   * the 2 extras fold D into partners and get D back (4D), and the 4
   * survivors exchange 2(P-1)/P D each (4 * 1.5 D = 6D): 10 D in total. */
  coll_sched h = { .prim = COLL_PRIM_ALL_REDUCE, .algo = COLL_ALGO_HALVING_DOUBLING, .q = 6, .root = -1, .bytes = D };
  g_assert_cmpuint(coll_sched_n_steps(&h), ==, 2 * 2 + 2);
  g_assert_cmpuint(run_sched(&h).total_bytes, ==, 10 * D);
  /* Double binary tree all-reduce, one tree, q = 7: every non-root sends
   * D up and receives D down: 6 up + 6 down = 12 transfers of D. */
  coll_sched t = { .prim = COLL_PRIM_ALL_REDUCE, .algo = COLL_ALGO_DOUBLE_BINARY_TREE, .q = 7, .root = -1, .bytes = D };
  sched_totals tt = run_sched(&t);
  g_assert_cmpuint(tt.transfers, ==, 12);
  g_assert_cmpuint(tt.total_bytes, ==, 12 * D);
  /* Ring broadcast from root 2 on q = 5: a chain of 4 transfers of D. */
  coll_sched b = { .prim = COLL_PRIM_BROADCAST, .algo = COLL_ALGO_RING, .q = 5, .root = 2, .bytes = D };
  tt = run_sched(&b);
  g_assert_cmpuint(tt.transfers, ==, 4);
  g_assert_cmpuint(tt.total_bytes, ==, 4 * D);
  /* Uneven pieces: ring all-gather of D = 10 bytes over q = 4 (pieces
   * 3,3,2,2): each piece crosses q-1 = 3 links, 3 * 10 = 30 bytes. */
  coll_sched u = { .prim = COLL_PRIM_ALL_GATHER, .algo = COLL_ALGO_RING, .q = 4, .root = -1, .bytes = 10 };
  g_assert_cmpuint(run_sched(&u).total_bytes, ==, 30);
  /* All-to-allv direct: total bytes = sum of the off-diagonal matrix. */
  coll_sched v = { .prim = COLL_PRIM_ALL_TO_ALLV, .algo = COLL_ALGO_DIRECT, .q = 5, .root = -1, .a2av = a2av_fn };
  uint64_t expect = 0;
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 5; j++)
      if (i != j)
        expect += a2av_fn(NULL, i, j);
  g_assert_cmpuint(run_sched(&v).total_bytes, ==, expect);
  v.algo = COLL_ALGO_PAIRWISE;
  g_assert_cmpuint(run_sched(&v).total_bytes, ==, expect);
}

/* Ring step semantics (doc/collectives.md): at step k position i sends to
 * i+1, and the message is counted at the receiver's step k. */
static void test_ring_step_semantics(void)
{
  coll_sched s = { .prim = COLL_PRIM_ALL_REDUCE, .algo = COLL_ALGO_RING, .q = 8, .root = -1, .bytes = 8000 };
  coll_xfer out[16];
  for (int p = 0; p < 8; p++) {
    for (uint32_t k = 0; k < 14; k++) {
      uint32_t nr;
      uint64_t red;
      g_assert_cmpuint(coll_sched_step(&s, p, k, out, &nr, &red), ==, 1);
      g_assert_cmpint(out[0].peer, ==, (p + 1) % 8);
      g_assert_cmpuint(out[0].recv_step, ==, k);
      g_assert_cmpuint(out[0].bytes, ==, 1000);
      g_assert_cmpuint(nr, ==, 1);
      /* Reduce-scatter half reduces the received piece, all-gather half does not. */
      g_assert_cmpuint(red, ==, k < 7 ? 1000 : 0);
    }
  }
}

/* coll_sched_next_busy against the schedule itself: for the ring chains
 * of the rooted primitives (broadcast, scatter, reduce, gather) it must
 * be exactly the first step j >= k at which coll_sched_step writes a
 * transfer, expects a receive or reduces (the phase's step count when
 * there is none), for every q, root, position and k, 0-byte pieces
 * included (a transfer of 0 bytes is still a step that moves); for the
 * other schedules it must be k (nothing skipped). */
static void test_next_busy(void)
{
  const coll_prim rooted[] = { COLL_PRIM_BROADCAST, COLL_PRIM_SCATTER, COLL_PRIM_REDUCE, COLL_PRIM_GATHER };
  const int qs[] = { 2, 3, 5, 8, 13 };
  coll_xfer out[64];
  for (size_t a = 0; a < 2; a++)
    for (size_t i = 0; i < G_N_ELEMENTS(rooted); i++)
      for (size_t iq = 0; iq < G_N_ELEMENTS(qs); iq++)
        for (int root = 0; root < qs[iq]; root += 2)
          for (uint64_t bytes = 0; bytes <= 4096; bytes += 4096) {
            int q = qs[iq];
            coll_sched s = { .prim = rooted[i], .algo = a ? COLL_ALGO_RING_BIDIR : COLL_ALGO_RING, .q = q,
                             .root = root, .bytes = bytes };
            uint32_t n = coll_sched_n_steps(&s);
            for (int p = 0; p < q; p++)
              for (uint32_t k = 0; k <= n; k++) {
                uint32_t first = n;
                for (uint32_t j = n; j-- > k;) {
                  uint32_t nr;
                  uint64_t red;
                  if (coll_sched_step(&s, p, j, out, &nr, &red) > 0 || nr > 0 || red > 0)
                    first = j;
                }
                g_assert_cmpuint(coll_sched_next_busy(&s, p, k), ==, first);
              }
          }
  coll_sched ar = { .prim = COLL_PRIM_ALL_REDUCE, .algo = COLL_ALGO_RING, .q = 8, .root = -1, .bytes = 8000 };
  coll_sched tree = { .prim = COLL_PRIM_BROADCAST, .algo = COLL_ALGO_DOUBLE_BINARY_TREE, .q = 8, .root = 0,
                      .bytes = 8000 };
  for (uint32_t k = 0; k < coll_sched_n_steps(&ar); k++)
    g_assert_cmpuint(coll_sched_next_busy(&ar, 3, k), ==, k);
  for (uint32_t k = 0; k < coll_sched_n_steps(&tree); k++)
    g_assert_cmpuint(coll_sched_next_busy(&tree, 5, k), ==, k);
}

/* conventions.md §1 table. */
static void test_busbw(void)
{
  g_assert_cmpfloat_with_epsilon(coll_busbw_factor(ET_COLL_ALL_REDUCE, 8), 2.0 * 7 / 8, 1e-15);
  g_assert_cmpfloat_with_epsilon(coll_busbw_factor(ET_COLL_REDUCE_SCATTER, 8), 7.0 / 8, 1e-15);
  g_assert_cmpfloat_with_epsilon(coll_busbw_factor(ET_COLL_ALL_GATHER, 4), 3.0 / 4, 1e-15);
  g_assert_cmpfloat_with_epsilon(coll_busbw_factor(ET_COLL_ALL_TO_ALL, 16), 15.0 / 16, 1e-15);
  g_assert_cmpfloat_with_epsilon(coll_busbw_factor(ET_COLL_ALL_TO_ALLV, 2), 0.5, 1e-15);
  g_assert_cmpfloat_with_epsilon(coll_busbw_factor(ET_COLL_GATHER, 4), 0.75, 1e-15);
  g_assert_cmpfloat_with_epsilon(coll_busbw_factor(ET_COLL_SCATTER, 4), 0.75, 1e-15);
  g_assert_cmpfloat(coll_busbw_factor(ET_COLL_BROADCAST, 8), ==, 1.0);
  g_assert_cmpfloat(coll_busbw_factor(ET_COLL_REDUCE, 8), ==, 1.0);
  g_assert_cmpfloat(coll_busbw_factor(ET_COLL_BARRIER, 8), ==, 0.0);
  g_assert_cmpfloat(coll_busbw_factor(ET_COLL_ALL_REDUCE, 1), ==, 0.0); /* 2(1-1)/1 */
  /* S from Chakra comm_size: AG is a per-rank shard, so S = n * comm_size;
   * RS is the full input, S = comm_size. */
  g_assert_cmpuint(coll_algbw_bytes(ET_COLL_ALL_GATHER, 1000, 8), ==, 8000);
  g_assert_cmpuint(coll_algbw_bytes(ET_COLL_REDUCE_SCATTER, 8000, 8), ==, 8000);
  g_assert_cmpuint(coll_algbw_bytes(ET_COLL_ALL_REDUCE, 4096, 8), ==, 4096);
  g_assert_cmpuint(coll_algbw_bytes(ET_COLL_ALL_TO_ALL, 4096, 8), ==, 4096);
  g_assert_cmpuint(coll_algbw_bytes(ET_COLL_BROADCAST, 4096, 8), ==, 4096);
  g_assert_cmpuint(coll_algbw_bytes(ET_COLL_GATHER, 100, 4), ==, 400);
  g_assert_cmpuint(coll_algbw_bytes(ET_COLL_BARRIER, 100, 4), ==, 0);
  /* nccl-tests' S back to comm_size: the inverse for the piece types. */
  g_assert_cmpuint(coll_ncclt_comm_size(ET_COLL_ALL_GATHER, 8000, 8), ==, 1000);
  g_assert_cmpuint(coll_ncclt_comm_size(ET_COLL_SCATTER, 400, 4), ==, 100);
  g_assert_cmpuint(coll_ncclt_comm_size(ET_COLL_ALL_REDUCE, 4096, 8), ==, 4096);
  g_assert_cmpuint(coll_ncclt_comm_size(ET_COLL_BARRIER, 4096, 8), ==, 0);
}

/* Chakra's table of collective facts (et_coll_info): the rooted and
 * reducing sets as MPI/NCCL define the operations (MPI 4.0 ch. 6:
 * MPI_Bcast, MPI_Reduce, MPI_Gather, MPI_Scatter take a root; Allreduce,
 * Reduce, Reduce_scatter(_block) reduce), and names round-trip. */
static void test_facts_table(void)
{
  static const et_coll_type all[] = {
    ET_COLL_ALL_REDUCE, ET_COLL_REDUCE, ET_COLL_ALL_GATHER, ET_COLL_GATHER, ET_COLL_SCATTER, ET_COLL_BROADCAST,
    ET_COLL_ALL_TO_ALL, ET_COLL_REDUCE_SCATTER, ET_COLL_REDUCE_SCATTER_BLOCK, ET_COLL_BARRIER, ET_COLL_ALL_TO_ALLV,
  };
  for (size_t i = 0; i < G_N_ELEMENTS(all); i++) {
    et_coll_type t = all[i];
    const et_coll_info *ci = et_coll_info_of(t);
    g_assert_nonnull(ci);
    g_assert_cmpint(ci->type, ==, t);
    gboolean rooted = t == ET_COLL_BROADCAST || t == ET_COLL_REDUCE || t == ET_COLL_GATHER || t == ET_COLL_SCATTER;
    gboolean reduces = t == ET_COLL_ALL_REDUCE || t == ET_COLL_REDUCE || t == ET_COLL_REDUCE_SCATTER ||
                       t == ET_COLL_REDUCE_SCATTER_BLOCK;
    g_assert_cmpint(et_coll_rooted(t), ==, rooted);
    g_assert_cmpint(et_coll_reduces(t), ==, reduces);
    et_coll_type back = ET_COLL_NONE;
    g_assert_true(et_coll_from_short_name(et_coll_short_name(t), &back));
    g_assert_cmpint(back, ==, t);
    /* The size rule and coll_algbw_bytes agree: S = n x comm_size exactly
     * for the piece types (all-gather, gather, scatter). */
    gboolean piece = t == ET_COLL_ALL_GATHER || t == ET_COLL_GATHER || t == ET_COLL_SCATTER;
    g_assert_cmpint(ci->size_rule == ET_COLL_SIZE_PIECE, ==, piece);
  }
  g_assert_null(et_coll_info_of((et_coll_type)42));
  g_assert_false(et_coll_rooted((et_coll_type)42));
  g_assert_cmpstr(et_coll_type_name((et_coll_type)42), ==, "UNKNOWN");
  g_assert_cmpstr(et_coll_short_name(ET_COLL_REDUCE_SCATTER), ==, "reduce_scatter");
  g_assert_cmpstr(et_coll_type_name(ET_COLL_ALL_TO_ALLV), ==, "ALL_TO_ALLV");
}

static void test_names(void)
{
  for (int a = 0; a < COLL_ALGO_COUNT; a++) {
    coll_algo b;
    g_assert_true(coll_algo_from_name(coll_algo_name((coll_algo)a), &b));
    g_assert_cmpint(b, ==, a);
  }
  coll_algo b;
  g_assert_true(coll_algo_from_name("halvingDoubling", &b)); /* ASTRA-sim spelling */
  g_assert_cmpint(b, ==, COLL_ALGO_HALVING_DOUBLING);
  g_assert_false(coll_algo_from_name("bogus", &b));
  g_assert_false(coll_algo_from_name(NULL, &b));
  g_assert_cmpstr(coll_algo_name(COLL_ALGO_COUNT), ==, "invalid");
}

/* Tuner thresholds as documented in doc/collectives.md.  The last
 * argument says whether the tier shares link bandwidth (flow). */
static void test_tuner(void)
{
  /* Fully connected: direct (dedicated link per pair) on both tiers. */
  g_assert_cmpint(coll_tune(COLL_PRIM_ALL_REDUCE, TOPO_KIND_FULLY_CONNECTED, 8, 1 << 30, FALSE, FALSE), ==, COLL_ALGO_DIRECT);
  g_assert_cmpint(coll_tune(COLL_PRIM_ALL_TO_ALL, TOPO_KIND_FULLY_CONNECTED, 8, 1 << 30, FALSE, FALSE), ==, COLL_ALGO_DIRECT);
  /* Switch: NVLS only when enabled. */
  g_assert_cmpint(coll_tune(COLL_PRIM_ALL_REDUCE, TOPO_KIND_SWITCH, 8, 1 << 20, TRUE, FALSE), ==, COLL_ALGO_NVLS);
  /* Direct on a switch up to 16 members when the tier shares the uplink... */
  g_assert_cmpint(coll_tune(COLL_PRIM_ALL_REDUCE, TOPO_KIND_SWITCH, 16, 1 << 20, FALSE, TRUE), ==, COLL_ALGO_DIRECT);
  /* ...but not on the analytical tier unless latency-bound (pieces < 8 KiB). */
  g_assert_cmpint(coll_tune(COLL_PRIM_ALL_REDUCE, TOPO_KIND_SWITCH, 16, 1 << 20, FALSE, FALSE), ==, COLL_ALGO_HALVING_DOUBLING);
  g_assert_cmpint(coll_tune(COLL_PRIM_ALL_REDUCE, TOPO_KIND_SWITCH, 16, 16 * 8192 - 16, FALSE, FALSE), ==, COLL_ALGO_DIRECT);
  g_assert_cmpint(coll_tune(COLL_PRIM_ALL_REDUCE, TOPO_KIND_SWITCH, 32, 1 << 30, FALSE, TRUE), ==, COLL_ALGO_HALVING_DOUBLING);
  /* Non-power-of-two above 1 MiB: ring (folding costs two full-size transfers). */
  g_assert_cmpint(coll_tune(COLL_PRIM_ALL_REDUCE, TOPO_KIND_SWITCH, 24, (1 << 20) + 1, FALSE, TRUE), ==, COLL_ALGO_RING);
  g_assert_cmpint(coll_tune(COLL_PRIM_ALL_REDUCE, TOPO_KIND_SWITCH, 24, 1 << 20, FALSE, TRUE), ==, COLL_ALGO_HALVING_DOUBLING);
  /* Ring: bidirectional ring for bandwidth-bound sizes, tree when each
   * piece is under 8 KiB (64 KiB / 8 = 8 KiB is not under). */
  g_assert_cmpint(coll_tune(COLL_PRIM_ALL_REDUCE, TOPO_KIND_RING, 8, 64 * 1024, FALSE, FALSE), ==, COLL_ALGO_RING_BIDIR);
  g_assert_cmpint(coll_tune(COLL_PRIM_ALL_REDUCE, TOPO_KIND_RING, 8, 64 * 1024 - 8, FALSE, FALSE), ==, COLL_ALGO_DOUBLE_BINARY_TREE);
  g_assert_cmpint(coll_tune(COLL_PRIM_ALL_REDUCE, TOPO_KIND_RING_UNI, 8, 1 << 30, FALSE, FALSE), ==, COLL_ALGO_RING);
  g_assert_cmpint(coll_tune(COLL_PRIM_ALL_TO_ALL, TOPO_KIND_RING, 8, 1 << 30, FALSE, TRUE), ==, COLL_ALGO_PAIRWISE);
  g_assert_cmpint(coll_tune(COLL_PRIM_ALL_TO_ALL, TOPO_KIND_SWITCH, 8, 1 << 30, FALSE, TRUE), ==, COLL_ALGO_DIRECT);
  g_assert_cmpint(coll_tune(COLL_PRIM_ALL_TO_ALL, TOPO_KIND_SWITCH, 8, 1 << 30, FALSE, FALSE), ==, COLL_ALGO_PAIRWISE);
  g_assert_cmpint(coll_tune(COLL_PRIM_GATHER, TOPO_KIND_SWITCH, 8, 1 << 30, FALSE, FALSE), ==, COLL_ALGO_RING);
  g_assert_cmpint(coll_tune(COLL_PRIM_GATHER, TOPO_KIND_SWITCH, 8, 1 << 30, FALSE, TRUE), ==, COLL_ALGO_DIRECT);
  /* Every tuner answer is defined for its primitive. */
  const topo_kind kinds[] = { TOPO_KIND_RING_UNI, TOPO_KIND_RING, TOPO_KIND_FULLY_CONNECTED, TOPO_KIND_SWITCH,
                              TOPO_KIND_TORUS2D, TOPO_KIND_TORUS3D, TOPO_KIND_FAT_TREE, TOPO_KIND_GRAPH };
  for (int p = 0; p < COLL_PRIM_COUNT; p++)
    for (size_t k = 0; k < G_N_ELEMENTS(kinds); k++)
      for (int q = 2; q <= 130; q += 7)
        for (uint64_t b = 1; b <= (1ull << 32); b <<= 4)
          for (int sh = 0; sh < 2; sh++)
            g_assert_true(coll_algo_supports(coll_tune((coll_prim)p, kinds[k], q, b, TRUE, sh), (coll_prim)p));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/coll/sched/consistent", test_all_schedules_consistent);
  g_test_add_func("/coll/sched/volumes", test_volumes);
  g_test_add_func("/coll/sched/ring-steps", test_ring_step_semantics);
  g_test_add_func("/coll/sched/next-busy", test_next_busy);
  g_test_add_func("/coll/busbw", test_busbw);
  g_test_add_func("/coll/facts-table", test_facts_table);
  g_test_add_func("/coll/names", test_names);
  g_test_add_func("/coll/tuner", test_tuner);
  return g_test_run();
}
