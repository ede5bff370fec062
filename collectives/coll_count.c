/* coll_count.c: the per-transfer path's step counters in bounded memory
 * (issue 30 item 2).  A slot (member, chunk) counts the receives that
 * arrived for each of its steps and, with NCCL's step pipeline, its
 * sends of each step still in flight.  Kept densely that is 2 bytes per
 * slot and step and counter: a 2,048-member ring all-reduce (4,094 steps)
 * holds 16.8 MB of them, the flow tier's scaled job 64 such runs at
 * once (1,073 MB), a 144-member ring broadcast cut into 16,384 chunks
 * 1.35 GB.
 *
 * A slot only ever reads its receives of its current step cur, and a
 * receive of step k arrives while the slot is at or before k (the slot
 * leaves k only when all of k's receives are in).  Sends are counted at
 * cur and read behind it (the FIFO window's gate, a few chunks back).
 * So each slot keeps COLL_COUNT_WIN receive counters for the steps cur
 * .. cur + WIN - 1 and COLL_COUNT_WIN send counters for cur - WIN + 1 ..
 * cur, at index step mod WIN; a count outside its window (a sender far
 * ahead of its receiver, a send still in flight long after its step)
 * goes to a hash table per kind (the spill), from which the window takes it when
 * the slot reaches it.  Reads and updates are O(1) (the spill: O(1)
 * expected, one hash lookup, and only when a count leaves or enters the
 * window, or a read falls outside it while the spill is not empty).
 * Plans of at most 2 x COLL_COUNT_WIN steps, and every run converted from
 * a fast path (the conversions write the dense arrays, coll_run_alloc_
 * counters), keep the dense form (r->recv != NULL), which costs no more
 * there.  A short plan that goes per transfer from its start keeps its
 * dense counters in half a byte each, a slot's receives and sends of one
 * step in one byte (r->cnt4: NCCL's tree plan counts at most 2 per slot
 * and step), widens them to one byte each the first time a count would
 * pass 15 (coll_count_widen4; r->recv8, r->sent8) and to two bytes the
 * first time one would pass 255 (coll_count_widen): 4 bytes per slot
 * instead of 16 for the 2 M slots of a 2,048-member NCCL tree run of 4
 * steps.
 */
#include "config.h"

#include "collectives/coll_run.h"

/* The spill's key: the counter kind (0 receives, 1 sends), the slot and
 * the step. */
static gint64 *spill_key(int kind, uint32_t s, uint32_t k)
{
  gint64 *key = g_new(gint64, 1);
  *key = (gint64)(((uint64_t)kind << 62) | ((uint64_t)s << 31) | k);
  return key;
}

/* A mixing hash of the key (g_int64_hash folds the halves, which puts
 * the keys of a slot's neighbours at one value).  O(1). */
static guint spill_hash(gconstpointer p)
{
  uint64_t x = (uint64_t)*(const gint64 *)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return (guint)x;
}

static gint64 spill_id(int kind, uint32_t s, uint32_t k)
{
  return (gint64)(((uint64_t)kind << 62) | ((uint64_t)s << 31) | k);
}

uint32_t coll_count_spill_get(const coll_run *r, int kind, uint32_t s, uint32_t k)
{
  GHashTable *h = r->count_spill[kind];
  if (h == NULL || g_hash_table_size(h) == 0)
    return 0;
  gint64 id = spill_id(kind, s, k);
  return GPOINTER_TO_UINT(g_hash_table_lookup(h, &id));
}

uint32_t coll_count_spill_add(coll_run *r, int kind, uint32_t s, uint32_t k, int delta)
{
  if (r->count_spill[kind] == NULL)
    r->count_spill[kind] = g_hash_table_new_full(spill_hash, g_int64_equal, g_free, NULL);
  GHashTable *h = r->count_spill[kind];
  gint64 id = spill_id(kind, s, k);
  int64_t v = (int64_t)GPOINTER_TO_UINT(g_hash_table_lookup(h, &id)) + delta;
  g_assert(v >= 0 && v < UINT16_MAX);
  if (v == 0)
    g_hash_table_remove(h, &id);
  else
    g_hash_table_replace(h, spill_key(kind, s, k), GUINT_TO_POINTER((guint)v));
  return (uint32_t)v;
}

/* Takes the spilled receives of (s, k) out of the spill.  O(1) expected;
 * nothing when no receive is spilled. */
static uint16_t spill_take(coll_run *r, uint32_t s, uint32_t k)
{
  GHashTable *h = r->count_spill[0];
  if (h == NULL || g_hash_table_size(h) == 0)
    return 0;
  gint64 id = spill_id(0, s, k);
  guint v = GPOINTER_TO_UINT(g_hash_table_lookup(h, &id));
  if (v != 0)
    g_hash_table_remove(h, &id);
  return (uint16_t)v;
}

/* The dense receive (and NCCL send) counters: short plans, and the
 * fast paths' conversions, which write them directly.  O(members x
 * chunks x steps). */
void coll_run_alloc_counters(coll_run *r)
{
  size_t n = (size_t)r->n * (size_t)r->n_chunks * (r->n_steps ? r->n_steps : 1);
  if (r->recv == NULL)
    r->recv = g_new0(uint16_t, n);
  if (r->step_pipe && r->sent == NULL)
    r->sent = g_new0(uint16_t, n);
}

void coll_count_alloc(coll_run *r)
{
  if (r->cnt4 != NULL || r->recv8 != NULL || r->recv_win != NULL)
    return;
  if (r->n_steps <= 2 * COLL_COUNT_WIN) {
    /* Every count starts at 0 here (a declining fast path leaves its
     * dense counters zeroed): half a byte each until one reaches 15. */
    size_t n = (size_t)r->n * (size_t)r->n_chunks * (r->n_steps ? r->n_steps : 1);
    g_free(r->recv);
    g_free(r->sent);
    r->recv = r->sent = NULL;
    r->cnt4 = g_new0(uint8_t, n);
    return;
  }
  if (r->recv != NULL)
    return; /* a declining fast path's zeroed dense counters: kept */
  size_t n = (size_t)r->n * (size_t)r->n_chunks * COLL_COUNT_WIN;
  r->recv_win = g_new0(uint16_t, n);
  if (r->step_pipe)
    r->sent_win = g_new0(uint16_t, n);
}

void coll_count_widen(coll_run *r)
{
  size_t n = (size_t)r->n * (size_t)r->n_chunks * (r->n_steps ? r->n_steps : 1);
  g_assert(r->recv8 != NULL && r->recv == NULL && r->sent == NULL);
  r->recv = g_new(uint16_t, n);
  for (size_t i = 0; i < n; i++)
    r->recv[i] = r->recv8[i];
  g_free(r->recv8);
  r->recv8 = NULL;
  if (r->sent8 != NULL) {
    r->sent = g_new(uint16_t, n);
    for (size_t i = 0; i < n; i++)
      r->sent[i] = r->sent8[i];
    g_free(r->sent8);
    r->sent8 = NULL;
  }
}

void coll_count_widen4(coll_run *r)
{
  size_t n = (size_t)r->n * (size_t)r->n_chunks * (r->n_steps ? r->n_steps : 1);
  g_assert(r->cnt4 != NULL && r->recv8 == NULL && r->recv == NULL);
  r->recv8 = g_new(uint8_t, n);
  for (size_t i = 0; i < n; i++)
    r->recv8[i] = r->cnt4[i] & 15u;
  if (r->step_pipe) {
    r->sent8 = g_new(uint8_t, n);
    for (size_t i = 0; i < n; i++)
      r->sent8[i] = r->cnt4[i] >> 4;
  }
  g_free(r->cnt4);
  r->cnt4 = NULL;
}

void coll_count_narrow(coll_run *r)
{
  size_t n = (size_t)r->n * (size_t)r->n_chunks * (r->n_steps ? r->n_steps : 1);
  if (r->recv == NULL || r->cnt4 != NULL || r->n_steps > 2 * COLL_COUNT_WIN)
    return;
  for (size_t i = 0; i < n; i++)
    if (r->recv[i] > 15u || (r->sent != NULL && r->sent[i] > 15u))
      return;
  r->cnt4 = g_new(uint8_t, n);
  for (size_t i = 0; i < n; i++)
    r->cnt4[i] = (uint8_t)(r->recv[i] | (r->sent != NULL ? r->sent[i] << 4 : 0));
  g_free(r->recv);
  g_free(r->sent);
  r->recv = r->sent = NULL;
}

void coll_recv_inc_wide(coll_run *r, uint32_t s, uint32_t k)
{
  uint16_t *cnt;
  if (r->cnt4 != NULL)
    coll_count_widen4(r);
  if (r->recv8 != NULL && r->recv8[(size_t)s * r->n_steps + k] < UINT8_MAX) {
    r->recv8[(size_t)s * r->n_steps + k]++;
    return;
  }
  if (r->recv8 != NULL)
    coll_count_widen(r);
  if (r->recv != NULL) {
    cnt = &r->recv[(size_t)s * r->n_steps + k];
  } else {
    g_assert(k >= r->slot[s].cur);
    if (k - r->slot[s].cur >= COLL_COUNT_WIN) {
      coll_count_spill_add(r, 0, s, k, 1);
      return;
    }
    cnt = &r->recv_win[(size_t)s * COLL_COUNT_WIN + (k & (COLL_COUNT_WIN - 1))];
  }
  g_assert(*cnt < UINT16_MAX);
  (*cnt)++;
}

uint32_t coll_sent_add_wide(coll_run *r, uint32_t s, uint32_t k, int delta)
{
  uint16_t *cnt;
  if (r->cnt4 != NULL)
    coll_count_widen4(r);
  if (r->sent8 != NULL) {
    uint8_t *c8 = &r->sent8[(size_t)s * r->n_steps + k];
    if (delta < 0 || *c8 < UINT8_MAX) {
      g_assert(delta > 0 || *c8 > 0);
      *c8 = (uint8_t)(*c8 + delta);
      return *c8;
    }
    coll_count_widen(r);
  }
  if (r->sent != NULL) {
    cnt = &r->sent[(size_t)s * r->n_steps + k];
  } else {
    g_assert(k <= r->slot[s].cur);
    if (r->slot[s].cur - k >= COLL_COUNT_WIN)
      return coll_count_spill_add(r, 1, s, k, delta);
    cnt = &r->sent_win[(size_t)s * COLL_COUNT_WIN + (k & (COLL_COUNT_WIN - 1))];
  }
  g_assert(delta > 0 ? *cnt < UINT16_MAX : *cnt > 0);
  *cnt = (uint16_t)(*cnt + delta);
  return *cnt;
}

void coll_count_pass(coll_run *r, uint32_t s, uint32_t k)
{
  if (r->recv != NULL || r->recv8 != NULL || r->cnt4 != NULL)
    return;
  size_t base = (size_t)s * COLL_COUNT_WIN;
  r->recv_win[base + (k & (COLL_COUNT_WIN - 1))] = spill_take(r, s, k + COLL_COUNT_WIN);
  if (r->sent_win != NULL) {
    /* The entry of step k + 1 held step k + 1 - WIN: its sends still in
     * flight leave the window. */
    uint16_t *e = &r->sent_win[base + ((k + 1) & (COLL_COUNT_WIN - 1))];
    if (*e != 0) {
      coll_count_spill_add(r, 1, s, k + 1 - COLL_COUNT_WIN, *e);
      *e = 0;
    }
  }
}

void coll_count_jump(coll_run *r, uint32_t s, uint32_t k, uint32_t k2)
{
  if (r->recv != NULL || r->recv8 != NULL || r->cnt4 != NULL)
    return;
  if (k2 - k <= COLL_COUNT_WIN) {
    for (uint32_t j = k; j < k2; j++)
      coll_count_pass(r, s, j);
    return;
  }
  /* Every entry changes step: the receive window is the spill's for
   * k2 .. k2 + WIN - 1 (the steps left behind received nothing), and the
   * sends still in flight of k - WIN + 1 .. k leave the window. */
  size_t base = (size_t)s * COLL_COUNT_WIN;
  for (uint32_t j = k2; j < k2 + COLL_COUNT_WIN; j++)
    r->recv_win[base + (j & (COLL_COUNT_WIN - 1))] = spill_take(r, s, j);
  if (r->sent_win != NULL)
    for (uint32_t j = k + 1 - COLL_COUNT_WIN; j != k + 1; j++) {
      uint16_t *e = &r->sent_win[base + (j & (COLL_COUNT_WIN - 1))];
      if (*e != 0) {
        coll_count_spill_add(r, 1, s, j, *e);
        *e = 0;
      }
    }
}

void coll_count_free(coll_run *r)
{
  g_free(r->recv);
  g_free(r->sent);
  g_free(r->cnt4);
  g_free(r->recv8);
  g_free(r->sent8);
  g_free(r->recv_win);
  g_free(r->sent_win);
  for (int i = 0; i < 2; i++)
    if (r->count_spill[i] != NULL)
      g_hash_table_destroy(r->count_spill[i]);
}
