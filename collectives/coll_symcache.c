/* coll_symcache.c: the fast paths' results per plan (issue 30): the
 * symmetric mode (coll_fast.c, fast_symmetric) asks, for every
 * collective, whether every member's every step is alike, which costs
 * one schedule query per member and step (O(q^2) per step for direct),
 * and the tree replay (coll_fast_tree.c) replays every transfer of a
 * tree plan.  A training job runs the same collective over the same
 * group thousands of times, so the answer (the symmetric mode's verdict
 * and per-step shapes; the tree replay's result on idle links, relative
 * to its start) is kept per plan and kind and reused.
 *
 * The answers depend only on what the schedule queries and the replay
 * read (coll_member_sched, coll_sched_step, coll_pos_member,
 * coll_pair_is_inter, coll_pipe_gate_open, fast_wire): the primitive,
 * the byte count, the root, the chunks and lanes, the phases, the grid
 * (gsize, gstride, gidx, gmember), the ranks, the lane orders (lperm;
 * linv is its inverse), the streamed flag and the protocol's inflation,
 * the step pipeline and its FIFO window, the NVLS pairing, the flat
 * kind, whether a reduction is charged, and the runtime's topology and
 * policy (fixed per runtime).  The key holds all of them, the arrays
 * compared in full, so a hit returns exactly what the queries would.
 * Runs with per-peer sizes (splits) are never cached.  Lookup and store:
 * O(n + lanes n) hashing and comparison.  Memory: at most
 * COLL_SYMCACHE_MAX_INTS ints of keys and kept results (about 16 MiB);
 * the table is emptied when a store would pass it.
 */
#include "config.h"

#include <string.h>

#include "collectives/coll_run.h"

#define COLL_SYMCACHE_MAX_INTS ((size_t)4 << 20)

/* One plan, a kind of result and the result. */
typedef struct {
  int kind;         /* coll_memo_kind */
  coll_prim prim;
  int n, root_member, n_chunks, lanes, n_g, n_phases;
  gboolean step_pipe, red;
  int fifo_chunks;
  uint64_t bytes;
  uint32_t n_steps;
  gboolean stream, nvls_paired;
  topo_kind flat_kind;
  double inv_eff_intra, inv_eff_inter;
  sim_time_ps wire_ref_intra, wire_ref_inter;
  int gsize[COLL_MAX_DIMS], gstride[COLL_MAX_DIMS];
  coll_phase ph[2 * COLL_MAX_DIMS];
  int *ints;        /* ranks, gidx, gmember (3n), then lperm (lanes n) when the run has one */
  size_t n_ints;
  guint hash;
  void *data;       /* the result (size bytes; NULL when empty) */
  size_t size;
} symcache_key;

struct coll_symcache {
  GHashTable *tab;  /* symcache_key -> itself */
  size_t ints;      /* ints held by the keys */
};

static guint key_hash(gconstpointer p)
{
  return ((const symcache_key *)p)->hash;
}

static gboolean phases_equal(const symcache_key *a, const symcache_key *b)
{
  for (int i = 0; i < a->n_phases; i++) {
    const coll_phase *x = &a->ph[i], *y = &b->ph[i];
    if (x->prim != y->prim || x->algo != y->algo || x->g != y->g || x->div != y->div || x->step0 != y->step0 ||
        x->n_steps != y->n_steps)
      return FALSE;
  }
  return TRUE;
}

static gboolean key_equal(gconstpointer pa, gconstpointer pb)
{
  const symcache_key *a = pa, *b = pb;
  return a->hash == b->hash && a->kind == b->kind && a->n_ints == b->n_ints && a->step_pipe == b->step_pipe &&
         a->red == b->red && a->fifo_chunks == b->fifo_chunks && a->prim == b->prim && a->n == b->n && a->root_member == b->root_member &&
         a->n_chunks == b->n_chunks && a->lanes == b->lanes && a->n_g == b->n_g && a->n_phases == b->n_phases &&
         a->bytes == b->bytes && a->n_steps == b->n_steps && a->stream == b->stream &&
         a->nvls_paired == b->nvls_paired && a->flat_kind == b->flat_kind &&
         a->inv_eff_intra == b->inv_eff_intra && a->inv_eff_inter == b->inv_eff_inter &&
         a->wire_ref_intra == b->wire_ref_intra && a->wire_ref_inter == b->wire_ref_inter &&
         memcmp(a->gsize, b->gsize, sizeof a->gsize) == 0 && memcmp(a->gstride, b->gstride, sizeof a->gstride) == 0 &&
         phases_equal(a, b) && memcmp(a->ints, b->ints, sizeof *a->ints * a->n_ints) == 0;
}

static void key_free(gpointer p)
{
  symcache_key *k = p;
  g_free(k->ints);
  g_free(k->data);
  g_free(k);
}

/* The ints of run r's key (key_fill).  O(1). */
static size_t key_ints(const coll_run *r)
{
  return 3 * (size_t)r->n + (r->lperm != NULL ? (size_t)r->lanes * (size_t)r->n : 0);
}

/* The key of run r for results of `kind`, its arrays borrowed from ints
 * (key_ints(r) of them, filled here).  O(n + lanes n). */
static void key_fill(const coll_run *r, int kind, symcache_key *k, int *ints)
{
  memset(k, 0, sizeof *k);
  k->kind = kind;
  k->prim = r->prim;
  k->n = r->n;
  k->root_member = r->root_member;
  k->n_chunks = r->n_chunks;
  k->lanes = r->lanes;
  k->n_g = r->n_g;
  k->n_phases = r->n_phases;
  k->step_pipe = r->step_pipe;
  k->fifo_chunks = r->step_pipe ? r->fifo_chunks : 0;
  k->red = r->slot_red != NULL;
  k->bytes = r->bytes;
  k->n_steps = r->n_steps;
  k->stream = r->stream;
  k->nvls_paired = r->nvls_paired;
  k->flat_kind = r->flat_kind;
  k->inv_eff_intra = r->stream ? r->inv_eff_intra : 0;
  k->inv_eff_inter = r->stream ? r->inv_eff_inter : 0;
  k->wire_ref_intra = r->wire_ref_intra;
  k->wire_ref_inter = r->wire_ref_inter;
  for (int i = 0; i < r->n_g && i < COLL_MAX_DIMS; i++) {
    k->gsize[i] = r->gsize[i];
    k->gstride[i] = r->gstride[i];
  }
  for (int i = 0; i < r->n_phases; i++)
    k->ph[i] = r->ph[i];
  size_t n = (size_t)r->n;
  memcpy(ints, r->ranks, sizeof *ints * n);
  memcpy(ints + n, r->gidx, sizeof *ints * n);
  memcpy(ints + 2 * n, r->gmember, sizeof *ints * n);
  k->n_ints = key_ints(r);
  if (r->lperm != NULL)
    memcpy(ints + 3 * n, r->lperm, sizeof *ints * (k->n_ints - 3 * n));
  k->ints = ints;
  guint h = (guint)r->n * 2654435761u ^ (guint)r->bytes ^ (guint)(r->bytes >> 32) ^ (guint)r->prim << 24;
  h ^= (guint)r->n_steps * 40503u ^ (guint)kind * 0x9e3779b9u;
  for (size_t i = 0; i < k->n_ints; i++)
    h = h * 31u + (guint)ints[i];
  k->hash = h;
}

/* Whether run r can be looked up at all (its arrays exist, no per-peer
 * sizes).  O(1). */
static gboolean cacheable(const coll_run *r)
{
  return r->splits == NULL && r->gidx != NULL && r->gmember != NULL && r->n > 0 &&
         r->n_phases <= 2 * COLL_MAX_DIMS;
}

gboolean coll_memo_get(coll_rt *c, const coll_run *r, int kind, const void **data, size_t *size)
{
  if (c->symcache == NULL || !cacheable(r))
    return FALSE;
  int *ints = g_new(int, key_ints(r));
  symcache_key k;
  key_fill(r, kind, &k, ints);
  const symcache_key *hit = g_hash_table_lookup(c->symcache->tab, &k);
  g_free(ints);
  if (hit == NULL)
    return FALSE;
  *data = hit->data;
  *size = hit->size;
  return TRUE;
}

void coll_memo_put(coll_rt *c, const coll_run *r, int kind, const void *data, size_t size)
{
  if (!cacheable(r))
    return;
  if (c->symcache == NULL) {
    c->symcache = g_new0(coll_symcache, 1);
    c->symcache->tab = g_hash_table_new_full(key_hash, key_equal, key_free, NULL);
  }
  coll_symcache *sc = c->symcache;
  size_t need = key_ints(r) + (size + sizeof(int) - 1) / sizeof(int);
  if (sc->ints + need > COLL_SYMCACHE_MAX_INTS) {
    g_hash_table_remove_all(sc->tab);
    sc->ints = 0;
  }
  symcache_key *k = g_new(symcache_key, 1);
  key_fill(r, kind, k, g_new(int, key_ints(r)));
  k->size = size;
  k->data = size > 0 ? g_memdup2(data, size) : NULL;
  if (!g_hash_table_add(sc->tab, k))
    return; /* an equal key was there (it is replaced: same answer) */
  sc->ints += need;
}

gboolean coll_symcache_lookup(coll_rt *c, const coll_run *r, void *shapes, size_t shape_size, gboolean *verdict)
{
  const void *data = NULL;
  size_t size = 0;
  if (!coll_memo_get(c, r, COLL_MEMO_SYMMETRIC, &data, &size) || (size > 0 && size != shape_size * r->n_steps))
    return FALSE;
  *verdict = size > 0; /* a TRUE verdict keeps its n_steps > 0 shapes */
  if (size > 0)
    memcpy(shapes, data, size);
  return TRUE;
}

void coll_symcache_store(coll_rt *c, const coll_run *r, const void *shapes, size_t shape_size, gboolean verdict)
{
  coll_memo_put(c, r, COLL_MEMO_SYMMETRIC, verdict ? shapes : NULL, verdict ? shape_size * r->n_steps : 0);
}

void coll_symcache_free(coll_symcache *sc)
{
  if (sc == NULL)
    return;
  g_hash_table_destroy(sc->tab);
  g_free(sc);
}
