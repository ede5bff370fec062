/* coll_sched.c: per-member step schedules of every algorithm, and the
 * automatic algorithm tuner.  Pure functions of (primitive, algorithm, q,
 * bytes, position, step): no simulation state, so they are tested directly.
 *
 * Conventions (see doc/collectives.md): positions 0..q-1 index the
 * sub-group in ring order; piece j of D bytes is coll_piece(D, q, j).  Every
 * function below costs O(transfers written).
 */
#include "config.h"

#include "collectives/coll_internal.h"

static const char *const coll_algo_names[COLL_ALGO_COUNT] = {
  [COLL_ALGO_AUTO] = "auto",
  [COLL_ALGO_RING] = "ring",
  [COLL_ALGO_RING_BIDIR] = "ring_bidir",
  [COLL_ALGO_DIRECT] = "direct",
  [COLL_ALGO_HALVING_DOUBLING] = "halving_doubling",
  [COLL_ALGO_DOUBLE_BINARY_TREE] = "double_binary_tree",
  [COLL_ALGO_PAIRWISE] = "pairwise",
  [COLL_ALGO_NVLS] = "nvls",
  [COLL_ALGO_HIERARCHICAL] = "hierarchical",
};

const char *coll_algo_name(coll_algo a)
{
  if ((int)a < 0 || a >= COLL_ALGO_COUNT)
    return "invalid";
  return coll_algo_names[a];
}

/* Accepts the canonical names plus the spellings ASTRA-sim's system.json
 * uses (halvingDoubling, doubleBinaryTree, oneRing, ...), case-insensitive. */
gboolean coll_algo_from_name(const char *s, coll_algo *out)
{
  static const struct { const char *name; coll_algo a; } aliases[] = {
    { "ring_bidir", COLL_ALGO_RING_BIDIR }, { "bidir_ring", COLL_ALGO_RING_BIDIR },
    { "bidirectional_ring", COLL_ALGO_RING_BIDIR }, { "oneRing", COLL_ALGO_RING },
    { "halvingDoubling", COLL_ALGO_HALVING_DOUBLING }, { "oneHalvingDoubling", COLL_ALGO_HALVING_DOUBLING },
    { "hd", COLL_ALGO_HALVING_DOUBLING }, { "rhd", COLL_ALGO_HALVING_DOUBLING },
    { "doubleBinaryTree", COLL_ALGO_DOUBLE_BINARY_TREE }, { "dbt", COLL_ALGO_DOUBLE_BINARY_TREE },
    { "tree", COLL_ALGO_DOUBLE_BINARY_TREE }, { "oneDirect", COLL_ALGO_DIRECT },
    { "full_mesh", COLL_ALGO_DIRECT }, { "fullmesh", COLL_ALGO_DIRECT },
    { "in_switch", COLL_ALGO_NVLS }, { "hier", COLL_ALGO_HIERARCHICAL },
  };
  if (s == NULL)
    return FALSE;
  for (int a = 0; a < COLL_ALGO_COUNT; a++) {
    if (g_ascii_strcasecmp(s, coll_algo_names[a]) == 0) {
      *out = (coll_algo)a;
      return TRUE;
    }
  }
  for (size_t i = 0; i < G_N_ELEMENTS(aliases); i++) {
    if (g_ascii_strcasecmp(s, aliases[i].name) == 0) {
      *out = aliases[i].a;
      return TRUE;
    }
  }
  return FALSE;
}

gboolean coll_prim_from_type(et_coll_type type, coll_prim *out)
{
  switch (type) {
  case ET_COLL_ALL_REDUCE: *out = COLL_PRIM_ALL_REDUCE; return TRUE;
  case ET_COLL_REDUCE: *out = COLL_PRIM_REDUCE; return TRUE;
  case ET_COLL_ALL_GATHER: *out = COLL_PRIM_ALL_GATHER; return TRUE;
  case ET_COLL_GATHER: *out = COLL_PRIM_GATHER; return TRUE;
  case ET_COLL_SCATTER: *out = COLL_PRIM_SCATTER; return TRUE;
  case ET_COLL_BROADCAST: *out = COLL_PRIM_BROADCAST; return TRUE;
  case ET_COLL_ALL_TO_ALL: *out = COLL_PRIM_ALL_TO_ALL; return TRUE;
  case ET_COLL_REDUCE_SCATTER:
  case ET_COLL_REDUCE_SCATTER_BLOCK: *out = COLL_PRIM_REDUCE_SCATTER; return TRUE;
  case ET_COLL_BARRIER: *out = COLL_PRIM_BARRIER; return TRUE;
  case ET_COLL_ALL_TO_ALLV: *out = COLL_PRIM_ALL_TO_ALLV; return TRUE;
  default: return FALSE;
  }
}

const char *coll_prim_name(coll_prim p)
{
  static const char *const names[COLL_PRIM_COUNT] = {
    "all_reduce", "reduce_scatter", "all_gather", "all_to_all", "all_to_allv",
    "broadcast", "reduce", "gather", "scatter", "barrier",
  };
  return (int)p >= 0 && p < COLL_PRIM_COUNT ? names[p] : "invalid";
}

gboolean coll_algo_supports(coll_algo a, coll_prim p)
{
  switch (p) {
  case COLL_PRIM_ALL_REDUCE:
    return a == COLL_ALGO_RING || a == COLL_ALGO_RING_BIDIR || a == COLL_ALGO_DIRECT ||
           a == COLL_ALGO_HALVING_DOUBLING || a == COLL_ALGO_DOUBLE_BINARY_TREE || a == COLL_ALGO_NVLS;
  case COLL_PRIM_REDUCE_SCATTER:
  case COLL_PRIM_ALL_GATHER:
    return a == COLL_ALGO_RING || a == COLL_ALGO_RING_BIDIR || a == COLL_ALGO_DIRECT ||
           a == COLL_ALGO_HALVING_DOUBLING || a == COLL_ALGO_NVLS;
  case COLL_PRIM_ALL_TO_ALL:
    return a == COLL_ALGO_RING || a == COLL_ALGO_DIRECT || a == COLL_ALGO_PAIRWISE;
  case COLL_PRIM_ALL_TO_ALLV:
    return a == COLL_ALGO_DIRECT || a == COLL_ALGO_PAIRWISE;
  case COLL_PRIM_BROADCAST:
  case COLL_PRIM_REDUCE:
    return a == COLL_ALGO_RING || a == COLL_ALGO_DIRECT || a == COLL_ALGO_DOUBLE_BINARY_TREE;
  case COLL_PRIM_GATHER:
  case COLL_PRIM_SCATTER:
    return a == COLL_ALGO_RING || a == COLL_ALGO_DIRECT;
  case COLL_PRIM_BARRIER:
    return a == COLL_ALGO_RING || a == COLL_ALGO_DIRECT || a == COLL_ALGO_HALVING_DOUBLING;
  default:
    return FALSE;
  }
}

static inline int mod_q(int64_t a, int q)
{
  int64_t r = a % q;
  return (int)(r < 0 ? r + q : r);
}

/* Sum of the first n pieces of D cut into q pieces. */
static inline uint64_t first_pieces(uint64_t d, int q, int n)
{
  uint64_t rem = d % (uint64_t)q;
  return (uint64_t)n * (d / (uint64_t)q) + MIN((uint64_t)n, rem);
}

/* floor(D * num / den) without overflow. */
static inline uint64_t muldiv(uint64_t d, uint64_t num, uint64_t den)
{
  return (uint64_t)(((unsigned __int128)d * num) / den);
}

static inline int floor_log2(int q)
{
  int l = 0;
  while ((2 << l) <= q)
    l++;
  return l;
}

static inline int ceil_log2(int q)
{
  int l = 0;
  while ((1 << l) < q)
    l++;
  return l;
}

/* --- halving-doubling helpers: P = 2^floor(log2 q) survivors, r = q - P
 * extras; extras are the odd positions below 2r and fold into pos - 1. */
typedef struct {
  int P, r, L, f;
} hd_shape;

static hd_shape hd_shape_of(int q)
{
  hd_shape h;
  h.L = floor_log2(q);
  h.P = 1 << h.L;
  h.r = q - h.P;
  h.f = h.r > 0;
  return h;
}

static int hd_v(const hd_shape *h, int p)
{
  if (p < 2 * h->r)
    return (p % 2 == 0) ? p / 2 : -1;
  return p - h->r;
}

static int hd_pos(const hd_shape *h, int v)
{
  return v < h->r ? 2 * v : v + h->r;
}

/* --- binary trees for DOUBLE_BINARY_TREE: label 0 is the root; tree 0 labels
 * position p as (p - root) mod q, tree 1 mirrors it, (q - label) mod q, so
 * interior nodes of one tree are (mostly) leaves of the other. */
static int tree_label(const coll_sched *s, int p)
{
  int root = s->root < 0 ? 0 : s->root;
  int l = mod_q(p - root, s->q);
  return s->tree ? mod_q(-l, s->q) : l;
}

static int tree_pos(const coll_sched *s, int label)
{
  int root = s->root < 0 ? 0 : s->root;
  int l = s->tree ? mod_q(-label, s->q) : label;
  return mod_q(l + root, s->q);
}

static int tree_children(const coll_sched *s, int label, int *c)
{
  int n = 0;
  for (int i = 1; i <= 2; i++) {
    int64_t ch = 2 * (int64_t)label + i;
    if (ch < s->q)
      c[n++] = (int)ch;
  }
  return n;
}

uint32_t coll_sched_n_steps(const coll_sched *s)
{
  int q = s->q;
  if (q <= 1)
    return 0;
  hd_shape h = hd_shape_of(q);
  switch (s->algo) {
  case COLL_ALGO_RING:
  case COLL_ALGO_RING_BIDIR:
    return (uint32_t)((s->prim == COLL_PRIM_ALL_REDUCE ? 2 : 1) * (q - 1));
  case COLL_ALGO_DIRECT:
    return s->prim == COLL_PRIM_ALL_REDUCE ? 2 : 1;
  case COLL_ALGO_NVLS:
    return 1;
  case COLL_ALGO_PAIRWISE:
    return (uint32_t)(q - 1);
  case COLL_ALGO_HALVING_DOUBLING:
    if (s->prim == COLL_PRIM_BARRIER)
      return (uint32_t)ceil_log2(q);
    return (uint32_t)((s->prim == COLL_PRIM_ALL_REDUCE ? 2 : 1) * h.L + 2 * h.f);
  case COLL_ALGO_DOUBLE_BINARY_TREE:
    return s->prim == COLL_PRIM_ALL_REDUCE ? 4 : 2;
  default:
    g_assert_not_reached();
  }
  return 0;
}

static inline void emit(coll_xfer *out, uint32_t *n, int peer, uint64_t bytes, uint32_t step)
{
  out[*n].peer = peer;
  out[*n].bytes = bytes;
  out[*n].recv_step = step;
  (*n)++;
}

/* Ring reduce-scatter step k: send piece (p-k-1) to p+1; after q-1 steps
 * position p holds piece p fully reduced. */
static uint32_t ring_rs(const coll_sched *s, int p, uint32_t k, uint32_t step, coll_xfer *out,
                        uint32_t *n_recv, uint64_t *red, gboolean bidir)
{
  int q = s->q;
  uint32_t n = 0;
  uint64_t snd = coll_piece(s->bytes, q, mod_q(p - (int64_t)k - 1, q));
  uint64_t rcv = coll_piece(s->bytes, q, mod_q(p - (int64_t)k - 2, q));
  if (!bidir) {
    emit(out, &n, mod_q(p + 1, q), snd, step);
    *n_recv = 1;
    *red = rcv;
    return n;
  }
  /* Bidirectional: the first half of every piece goes clockwise, the
   * second half counter-clockwise with the mirrored piece order. */
  uint64_t snd2 = coll_piece(s->bytes, q, mod_q(p + (int64_t)k + 1, q));
  uint64_t rcv2 = coll_piece(s->bytes, q, mod_q(p + (int64_t)k + 2, q));
  emit(out, &n, mod_q(p + 1, q), snd - snd / 2, step);
  emit(out, &n, mod_q(p - 1, q), snd2 / 2, step);
  *n_recv = 2;
  *red = (rcv - rcv / 2) + rcv2 / 2;
  return n;
}

/* Ring all-gather step k: forward piece (p-k) to p+1. */
static uint32_t ring_ag(const coll_sched *s, int p, uint32_t k, uint32_t step, coll_xfer *out,
                        uint32_t *n_recv, gboolean bidir)
{
  int q = s->q;
  uint32_t n = 0;
  uint64_t snd = coll_piece(s->bytes, q, mod_q(p - (int64_t)k, q));
  if (!bidir) {
    emit(out, &n, mod_q(p + 1, q), snd, step);
    *n_recv = 1;
    return n;
  }
  uint64_t snd2 = coll_piece(s->bytes, q, mod_q(p + (int64_t)k, q));
  emit(out, &n, mod_q(p + 1, q), snd - snd / 2, step);
  emit(out, &n, mod_q(p - 1, q), snd2 / 2, step);
  *n_recv = 2;
  return n;
}

static uint32_t sched_ring(const coll_sched *s, int p, uint32_t k, coll_xfer *out,
                           uint32_t *n_recv, uint64_t *red)
{
  int q = s->q;
  uint32_t n = 0;
  gboolean bidir = s->algo == COLL_ALGO_RING_BIDIR;
  switch (s->prim) {
  case COLL_PRIM_ALL_REDUCE:
    if (k < (uint32_t)(q - 1))
      return ring_rs(s, p, k, k, out, n_recv, red, bidir);
    return ring_ag(s, p, k - (uint32_t)(q - 1), k, out, n_recv, bidir);
  case COLL_PRIM_REDUCE_SCATTER:
    return ring_rs(s, p, k, k, out, n_recv, red, bidir);
  case COLL_PRIM_ALL_GATHER:
    return ring_ag(s, p, k, k, out, n_recv, bidir);
  case COLL_PRIM_ALL_TO_ALL: {
    /* Store-and-forward: at step k a member forwards the q-1-k pieces that
     * still have to travel further clockwise. */
    emit(out, &n, mod_q(p + 1, q), first_pieces(s->bytes, q, q - 1 - (int)k), k);
    *n_recv = 1;
    return n;
  }
  case COLL_PRIM_BARRIER:
    emit(out, &n, mod_q(p + 1, q), 0, k);
    *n_recv = 1;
    return n;
  case COLL_PRIM_BROADCAST:
  case COLL_PRIM_SCATTER: {
    /* Chain from the root: u = distance from the root along the ring. */
    int u = mod_q(p - s->root, q);
    if (u == (int)k) {
      uint64_t b = s->prim == COLL_PRIM_BROADCAST ? s->bytes
                                                  : first_pieces(s->bytes, q, q - 1 - (int)k);
      emit(out, &n, mod_q(p + 1, q), b, k);
    }
    if (u == (int)k + 1)
      *n_recv = 1;
    return n;
  }
  case COLL_PRIM_REDUCE:
  case COLL_PRIM_GATHER: {
    /* Chain towards the root: u = q-1 at the root, 0 at root+1. */
    int u = mod_q(p - s->root - 1, q);
    if (u == (int)k) {
      uint64_t b = s->prim == COLL_PRIM_REDUCE ? s->bytes : first_pieces(s->bytes, q, (int)k + 1);
      emit(out, &n, mod_q(p + 1, q), b, k);
    }
    if (u == (int)k + 1) {
      *n_recv = 1;
      *red = s->prim == COLL_PRIM_REDUCE ? s->bytes : 0;
    }
    return n;
  }
  default:
    g_assert_not_reached();
  }
  return n;
}

static uint32_t sched_direct(const coll_sched *s, int p, uint32_t k, coll_xfer *out,
                             uint32_t *n_recv, uint64_t *red)
{
  int q = s->q;
  uint32_t n = 0;
  coll_prim prim = s->prim;
  if (prim == COLL_PRIM_ALL_REDUCE)
    prim = k == 0 ? COLL_PRIM_REDUCE_SCATTER : COLL_PRIM_ALL_GATHER;
  switch (prim) {
  case COLL_PRIM_REDUCE_SCATTER:
    for (int j = 1; j < q; j++)
      emit(out, &n, mod_q(p + j, q), coll_piece(s->bytes, q, mod_q(p + j, q)), k);
    *n_recv = (uint32_t)(q - 1);
    *red = (uint64_t)(q - 1) * coll_piece(s->bytes, q, p);
    return n;
  case COLL_PRIM_ALL_GATHER:
    for (int j = 1; j < q; j++)
      emit(out, &n, mod_q(p + j, q), coll_piece(s->bytes, q, p), k);
    *n_recv = (uint32_t)(q - 1);
    return n;
  case COLL_PRIM_ALL_TO_ALL:
    for (int j = 1; j < q; j++)
      emit(out, &n, mod_q(p + j, q), coll_piece(s->bytes, q, mod_q(p + j, q)), k);
    *n_recv = (uint32_t)(q - 1);
    return n;
  case COLL_PRIM_ALL_TO_ALLV: {
    /* Zero-byte pairs are skipped, as communication libraries do. */
    uint32_t r = 0;
    for (int j = 1; j < q; j++) {
      int peer = mod_q(p + j, q);
      uint64_t b = s->a2av(s->a2av_ctx, p, peer);
      if (b > 0)
        emit(out, &n, peer, b, k);
      if (s->a2av(s->a2av_ctx, peer, p) > 0)
        r++;
    }
    *n_recv = r;
    return n;
  }
  case COLL_PRIM_BARRIER:
    for (int j = 1; j < q; j++)
      emit(out, &n, mod_q(p + j, q), 0, k);
    *n_recv = (uint32_t)(q - 1);
    return n;
  case COLL_PRIM_BROADCAST:
  case COLL_PRIM_SCATTER:
    if (p == s->root) {
      for (int j = 1; j < q; j++) {
        int peer = mod_q(p + j, q);
        emit(out, &n, peer, prim == COLL_PRIM_BROADCAST ? s->bytes : coll_piece(s->bytes, q, peer), k);
      }
    } else {
      *n_recv = 1;
    }
    return n;
  case COLL_PRIM_REDUCE:
  case COLL_PRIM_GATHER:
    if (p != s->root) {
      emit(out, &n, s->root, prim == COLL_PRIM_REDUCE ? s->bytes : coll_piece(s->bytes, q, p), k);
    } else {
      *n_recv = (uint32_t)(q - 1);
      *red = prim == COLL_PRIM_REDUCE ? (uint64_t)(q - 1) * s->bytes : 0;
    }
    return n;
  default:
    g_assert_not_reached();
  }
  return n;
}

static uint32_t sched_hd(const coll_sched *s, int p, uint32_t k, coll_xfer *out,
                         uint32_t *n_recv, uint64_t *red)
{
  int q = s->q;
  uint32_t n = 0;
  if (s->prim == COLL_PRIM_BARRIER) {
    /* Dissemination: at step k send to p + 2^k, receive from p - 2^k. */
    emit(out, &n, mod_q(p + ((int64_t)1 << k), q), 0, k);
    *n_recv = 1;
    return n;
  }
  hd_shape h = hd_shape_of(q);
  uint32_t last = coll_sched_n_steps(s) - 1;
  int v = hd_v(&h, p);
  if (h.f && k == 0) {
    /* Fold: every extra position hands its data to its even neighbour. */
    if (v < 0) {
      uint64_t b = s->prim == COLL_PRIM_ALL_GATHER ? coll_piece(s->bytes, q, p) : s->bytes;
      emit(out, &n, p - 1, b, k);
    } else if (p < 2 * h.r) {
      *n_recv = 1;
      *red = s->prim == COLL_PRIM_ALL_GATHER ? 0 : s->bytes;
    }
    return n;
  }
  if (h.f && k == last) {
    /* Unfold: the survivor returns the extra's result. */
    if (v >= 0 && p < 2 * h.r) {
      uint64_t b = s->prim == COLL_PRIM_REDUCE_SCATTER ? coll_piece(s->bytes, q, p + 1) : s->bytes;
      emit(out, &n, p + 1, b, k);
    } else if (v < 0) {
      *n_recv = 1;
    }
    return n;
  }
  if (v < 0)
    return 0; /* extras idle in the power-of-two core */
  int st = (int)k - h.f;
  gboolean halving;
  if (s->prim == COLL_PRIM_ALL_REDUCE) {
    halving = st < h.L;
    if (!halving)
      st -= h.L;
  } else {
    halving = s->prim == COLL_PRIM_REDUCE_SCATTER;
  }
  uint64_t dist = halving ? (uint64_t)h.P >> (st + 1) : (uint64_t)1 << st;
  int partner = hd_pos(&h, v ^ (int)dist);
  uint64_t b = muldiv(s->bytes, dist, (uint64_t)h.P);
  emit(out, &n, partner, b, k);
  *n_recv = 1;
  if (halving)
    *red = b;
  return n;
}

static uint32_t sched_tree(const coll_sched *s, int p, uint32_t k, coll_xfer *out,
                           uint32_t *n_recv, uint64_t *red)
{
  uint32_t n = 0;
  int label = tree_label(s, p);
  int ch[2];
  int nch = tree_children(s, label, ch);
  /* AR steps: 0 receive from children, 1 send to parent, 2 receive from
   * parent, 3 send to children.  REDUCE uses 0-1, BROADCAST 2-3 renumbered
   * to 0-1. */
  uint32_t phase = k;
  uint32_t base = 0;
  if (s->prim == COLL_PRIM_BROADCAST) {
    phase = k + 2;
    base = 2;
  }
  switch (phase) {
  case 0:
    *n_recv = (uint32_t)nch;
    *red = (uint64_t)nch * s->bytes;
    break;
  case 1:
    if (label != 0)
      emit(out, &n, tree_pos(s, (label - 1) / 2), s->bytes, 0);
    break;
  case 2:
    if (label != 0)
      *n_recv = 1;
    break;
  case 3:
    for (int i = 0; i < nch; i++)
      emit(out, &n, tree_pos(s, ch[i]), s->bytes, 2 - base);
    break;
  default:
    g_assert_not_reached();
  }
  return n;
}

static uint32_t sched_pairwise(const coll_sched *s, int p, uint32_t k, coll_xfer *out,
                               uint32_t *n_recv)
{
  int q = s->q;
  uint32_t n = 0;
  int to = mod_q(p + (int64_t)k + 1, q);
  int from = mod_q(p - (int64_t)k - 1, q);
  if (s->prim == COLL_PRIM_ALL_TO_ALLV) {
    uint64_t b = s->a2av(s->a2av_ctx, p, to);
    if (b > 0)
      emit(out, &n, to, b, k);
    *n_recv = s->a2av(s->a2av_ctx, from, p) > 0 ? 1 : 0;
    return n;
  }
  emit(out, &n, to, coll_piece(s->bytes, q, to), k);
  *n_recv = 1;
  return n;
}

uint32_t coll_sched_step(const coll_sched *s, int pos, uint32_t k, coll_xfer *out,
                         uint32_t *n_recv, uint64_t *reduce_bytes)
{
  g_assert(pos >= 0 && pos < s->q);
  g_assert(k < coll_sched_n_steps(s));
  *n_recv = 0;
  *reduce_bytes = 0;
  switch (s->algo) {
  case COLL_ALGO_RING:
  case COLL_ALGO_RING_BIDIR:
    return sched_ring(s, pos, k, out, n_recv, reduce_bytes);
  case COLL_ALGO_DIRECT:
    return sched_direct(s, pos, k, out, n_recv, reduce_bytes);
  case COLL_ALGO_NVLS: {
    /* In-switch reduction (NVLS): each member's link carries about
     * D (1 + 1/q) bytes each way (the switch reads every member's
     * contribution, D up and D/q down for the reduced slice, then
     * multicasts: D/q up, D down).  Modelled as one transfer of
     * D + D/q bytes to the next member, so that every uplink and downlink
     * carries exactly one transfer on either tier; no local reduction. */
    uint32_t n = 0;
    if (s->prim == COLL_PRIM_ALL_REDUCE)
      emit(out, &n, mod_q(pos + 1, s->q), s->bytes + coll_piece(s->bytes, s->q, pos), k);
    else if (s->nvls_paired)
      /* RS then AG of one plan (NCCL's NVLS-tree: multimem reduce, the
       * network, multimem store): the RS loads the uplink with D and the
       * downlink with D/q, the AG the reverse, so the pair loads each
       * direction with D + D/q, as the all-reduce step; each phase of the
       * pair carries half of that on both directions. */
      emit(out, &n, mod_q(pos + 1, s->q), (s->bytes + coll_piece(s->bytes, s->q, pos) + 1) / 2, k);
    else /* RS: the switch reads the q-1 remote shares; AG: it multicasts them */
      emit(out, &n, mod_q(pos + 1, s->q), s->bytes - coll_piece(s->bytes, s->q, pos), k);
    *n_recv = 1;
    return n;
  }
  case COLL_ALGO_HALVING_DOUBLING:
    return sched_hd(s, pos, k, out, n_recv, reduce_bytes);
  case COLL_ALGO_DOUBLE_BINARY_TREE:
    return sched_tree(s, pos, k, out, n_recv, reduce_bytes);
  case COLL_ALGO_PAIRWISE:
    return sched_pairwise(s, pos, k, out, n_recv);
  default:
    g_assert_not_reached();
  }
  return 0;
}

uint32_t coll_sched_next_busy(const coll_sched *s, int pos, uint32_t k)
{
  uint32_t n = coll_sched_n_steps(s);
  if (k >= n)
    return n;
  if (s->algo != COLL_ALGO_RING && s->algo != COLL_ALGO_RING_BIDIR)
    return k; /* every step may move data */
  int u;
  switch (s->prim) {
  case COLL_PRIM_BROADCAST:
  case COLL_PRIM_SCATTER:
    u = mod_q(pos - s->root, s->q); /* sched_ring: receives at u - 1, sends at u */
    break;
  case COLL_PRIM_REDUCE:
  case COLL_PRIM_GATHER:
    u = mod_q(pos - s->root - 1, s->q);
    break;
  default:
    return k;
  }
  if (u >= 1 && k <= (uint32_t)(u - 1))
    return (uint32_t)(u - 1);
  if (k <= (uint32_t)u && (uint32_t)u < n)
    return (uint32_t)u;
  return n;
}

/* Thresholds of the tuner, explained in doc/collectives.md. */
#define COLL_TUNE_LATENCY_PIECE (8u * 1024u)  /* per-member piece below which steps are latency-bound */
#define COLL_TUNE_DIRECT_MAX_Q 16             /* largest switch group that uses direct */
#define COLL_TUNE_A2A_DIRECT_MAX_Q 64         /* largest group that uses direct all-to-all */
#define COLL_TUNE_HD_FOLD_MAX (1024u * 1024u) /* non-power-of-two HD only below this size */

coll_algo coll_tune(coll_prim p, topo_kind k, int q, uint64_t bytes, gboolean nvls_ok, gboolean shared_links)
{
  gboolean ring_kind = k == TOPO_KIND_RING || k == TOPO_KIND_RING_UNI || k == TOPO_KIND_TORUS2D ||
                       k == TOPO_KIND_TORUS3D;
  gboolean fc = k == TOPO_KIND_FULLY_CONNECTED;
  gboolean sw = k == TOPO_KIND_SWITCH;
  gboolean bidir = k != TOPO_KIND_RING_UNI;
  gboolean small = q > 0 && bytes / (uint64_t)q < COLL_TUNE_LATENCY_PIECE;
  switch (p) {
  case COLL_PRIM_ALL_REDUCE:
  case COLL_PRIM_REDUCE_SCATTER:
  case COLL_PRIM_ALL_GATHER:
    if (q <= 2 || fc)
      return COLL_ALGO_DIRECT;
    if (sw) {
      if (p == COLL_PRIM_ALL_REDUCE && nvls_ok)
        return COLL_ALGO_NVLS;
      if (q <= COLL_TUNE_DIRECT_MAX_Q && (small || shared_links))
        return COLL_ALGO_DIRECT;
      if (wisp_is_pow2(q) || bytes <= COLL_TUNE_HD_FOLD_MAX)
        return COLL_ALGO_HALVING_DOUBLING;
      return COLL_ALGO_RING;
    }
    if (small && q >= 8) {
      if (p == COLL_PRIM_ALL_REDUCE)
        return COLL_ALGO_DOUBLE_BINARY_TREE;
      if (wisp_is_pow2(q))
        return COLL_ALGO_HALVING_DOUBLING;
    }
    if (ring_kind && bidir)
      return COLL_ALGO_RING_BIDIR;
    return COLL_ALGO_RING;
  case COLL_PRIM_ALL_TO_ALL:
  case COLL_PRIM_ALL_TO_ALLV:
    if (fc || (shared_links && !ring_kind && q <= COLL_TUNE_A2A_DIRECT_MAX_Q))
      return COLL_ALGO_DIRECT;
    return COLL_ALGO_PAIRWISE;
  case COLL_PRIM_BROADCAST:
  case COLL_PRIM_REDUCE:
    if (fc || (sw && shared_links && q <= COLL_TUNE_DIRECT_MAX_Q))
      return COLL_ALGO_DIRECT;
    return COLL_ALGO_DOUBLE_BINARY_TREE;
  case COLL_PRIM_GATHER:
  case COLL_PRIM_SCATTER:
    if (fc || shared_links)
      return COLL_ALGO_DIRECT;
    return COLL_ALGO_RING;
  case COLL_PRIM_BARRIER:
    if ((fc || sw) && q <= COLL_TUNE_DIRECT_MAX_Q)
      return COLL_ALGO_DIRECT;
    return COLL_ALGO_HALVING_DOUBLING;
  default:
    g_assert_not_reached();
  }
  return COLL_ALGO_RING;
}
