/* sim_engine.c: wisp's discrete-event engine (see sim.h).
 *
 * Data layout.  The queue is an array-backed 4-ary min-heap of 16-byte keys.
 * A key is one unsigned 128-bit integer: the event time in the high 64 bits,
 * the insertion sequence number in bits 32..63 and the pool slot in bits
 * 0..31.  Comparing two keys is therefore one 128-bit unsigned comparison
 * that orders by (time, sequence); the slot never decides because sequence
 * numbers of queued events are unique.  Times are never negative (the clock
 * starts at 0 and nothing is scheduled into the past), so the unsigned
 * comparison is exact.  The heap array is 64-byte aligned and shifted by
 * three entries so the four children of a node (indices 4i+1..4i+4) share
 * one cache line.
 *
 * The payload of an event (handler, context, argument) lives in a pool of
 * 32-byte records threaded by a free list; a steady-state run reuses freed
 * records and does not allocate.  A handle is (generation << 32 | slot): the
 * record's generation is bumped when the event runs or is cancelled, so a
 * stale handle no longer matches (a slot would have to be reused 2^32 times
 * between the two calls for a stale handle to match again).
 *
 * Cancellation is lazy: sim_cancel() marks the record (handler = NULL) in
 * O(1) and leaves a tombstone key in the heap; tombstones are discarded when
 * they reach the top.  When tombstones make up more than half the heap it is
 * compacted and rebuilt in O(n), so memory stays within twice the number of
 * pending events and the amortized cost of a cancel is O(1).  Not keeping a
 * heap-position back-pointer per record saves a scattered memory write per
 * heap level on every push and pop, which is where a large queue spends its
 * time.
 *
 * Sequence numbers are 32 bits.  When the counter is exhausted, the queue is
 * sorted by key (a sorted array is a valid heap) and renumbered 0..n-1, which
 * keeps the relative order of all queued events; this costs O(n log n) once
 * per roughly 4 billion schedulings.
 */
#include "config.h"
#include "simcore/sim.h"
#include "simcore/sim_private.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef unsigned __int128 sim_key;

/* One pooled event.  fn == NULL marks a free record or a cancelled event
 * whose key is still in the heap (a tombstone). */
typedef struct {
  sim_handler fn;
  void *ctx;
  uint64_t arg;
  uint32_t gen;       /* generation of the handle that names this record */
  uint32_t next_free; /* free-list link, valid while the record is free */
} sim_event_rec;

#define SIM_NO_SLOT UINT32_MAX
#define SIM_HEAP_SHIFT 3 /* entries before heap[0] so sibling groups align */
#define SIM_COMPACT_MIN 32

struct sim_engine {
  sim_key *heap;      /* heap[0] is the earliest event */
  void *heap_block;   /* the aligned allocation holding heap */
  size_t heap_len;
  size_t heap_cap;
  size_t tombstones;  /* cancelled keys still in the heap */

  sim_event_rec *pool;
  uint32_t pool_len;  /* records ever handed out (free or busy) */
  uint32_t pool_cap;
  uint32_t free_head;

  uint32_t next_seq;
  sim_time_ps now;
  uint64_t processed;
  size_t max_pending;
  gboolean checked;
  gboolean stop;
};

static inline sim_key key_make(sim_time_ps t, uint32_t seq, uint32_t slot)
{
  return ((sim_key)(uint64_t)t << 64) | ((sim_key)seq << 32) | slot;
}

static inline sim_time_ps key_time(sim_key k)
{
  return (sim_time_ps)(uint64_t)(k >> 64);
}

static inline uint32_t key_seq(sim_key k)
{
  return (uint32_t)((uint64_t)k >> 32);
}

static inline uint32_t key_slot(sim_key k)
{
  return (uint32_t)k;
}

static void check_or_abort(const sim_engine *sim)
{
  const char *why = NULL;
  if (!sim_check_invariants(sim, &why))
    g_error("sim: engine invariant violated: %s", why);
}

/* ---- heap ---- */

/* Moves `x` up from the hole at index i.  O(log4 n). */
static inline void sift_up(sim_key *h, size_t i, sim_key x)
{
  while (i > 0) {
    size_t p = (i - 1) / 4;
    if (h[p] < x)
      break;
    h[i] = h[p];
    i = p;
  }
  h[i] = x;
}

/* Index of the smallest of the four keys h[c..c+3], chosen without
 * data-dependent branches (the comparisons become flag arithmetic), because
 * which child is smallest is unpredictable and a mispredicted branch costs
 * more than the comparisons themselves. */
static inline size_t min_of_four(const sim_key *h, size_t c)
{
  size_t a = c + (size_t)(h[c + 1] < h[c]);
  size_t b = c + 2 + (size_t)(h[c + 3] < h[c + 2]);
  size_t mask = (size_t)0 - (size_t)(h[b] < h[a]);
  return a ^ ((a ^ b) & mask);
}

/* Index of the smallest child of node i in a heap of n > 4i+1 entries. */
static inline size_t min_child(const sim_key *h, size_t n, size_t i)
{
  size_t c = 4 * i + 1;
  if (G_LIKELY(c + 3 < n))
    return min_of_four(h, c);
  size_t m = c;
  for (size_t j = c + 1; j < n; j++)
    if (h[j] < h[m])
      m = j;
  return m;
}

/* Moves `x` down from the hole at index i until both heap conditions hold.
 * O(log4 n) levels, 3 comparisons per level to pick the child plus one
 * against x. */
static inline void sift_down(sim_key *h, size_t n, size_t i, sim_key x)
{
  while (4 * i + 1 < n) {
    size_t m = min_child(h, n, i);
    if (x < h[m])
      break;
    h[i] = h[m];
    i = m;
  }
  h[i] = x;
}

/* Removes the root of a heap of n + 1 entries whose last entry is x = h[n]
 * ("bottom-up" deletion): the hole left by the root first walks down to a
 * leaf along the smaller children without comparing against x, then x moves
 * up from there.  The last entry of a heap usually belongs near the bottom,
 * so this saves the comparison with x on every level and the unpredictable
 * branch that goes with it.  O(log4 n). */
static inline void delete_root(sim_key *h, size_t n, sim_key x)
{
  size_t i = 0;
  while (4 * i + 1 < n) {
    /* The grandchildren of i are four cache lines (16i+5 .. 16i+20); asking
     * for them now lets the next level's memory access overlap this one's,
     * which matters once the heap is larger than the caches.  Only full
     * grandchild groups are fetched, so no address lies past the end. */
    if (16 * i + 20 < n) {
      __builtin_prefetch(&h[16 * i + 5]);
      __builtin_prefetch(&h[16 * i + 9]);
      __builtin_prefetch(&h[16 * i + 13]);
      __builtin_prefetch(&h[16 * i + 17]);
    }
    size_t m = min_child(h, n, i);
    h[i] = h[m];
    i = m;
  }
  sift_up(h, i, x);
}

/* Allocates `bytes` aligned to 64 bytes; blocks of 2 MiB and more are
 * aligned to 2 MiB and offered to the kernel as transparent huge pages,
 * because a large queue is read at random and would otherwise miss the TLB
 * on most heap levels.  Aborts when memory is exhausted, like g_malloc. */
static void *big_alloc(size_t bytes)
{
  size_t align = bytes >= ((size_t)2 << 20) ? ((size_t)2 << 20) : 64;
  bytes = (bytes + align - 1) & ~(align - 1);
  void *p = aligned_alloc(align, bytes);
  if (p == NULL)
    g_error("sim: out of memory allocating %zu bytes for the event queue", bytes);
#ifdef MADV_HUGEPAGE
  if (align > 64)
    (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
  return p;
}

/* Grows the heap array to at least `need` entries (amortized O(1) per push). */
static void heap_reserve(sim_engine *sim, size_t need)
{
  if (need <= sim->heap_cap)
    return;
  size_t cap = sim->heap_cap ? sim->heap_cap : 64;
  while (cap < need) {
    g_assert(cap <= SIZE_MAX / 2 / sizeof(sim_key));
    cap *= 2;
  }
  void *block = big_alloc((cap + SIM_HEAP_SHIFT) * sizeof(sim_key));
  sim_key *h = (sim_key *)block + SIM_HEAP_SHIFT;
  if (sim->heap_len > 0)
    memcpy(h, sim->heap, sim->heap_len * sizeof(sim_key));
  free(sim->heap_block);
  sim->heap_block = block;
  sim->heap = h;
  sim->heap_cap = cap;
}

/* ---- pool ---- */

static inline void slot_free(sim_engine *sim, uint32_t slot)
{
  sim_event_rec *r = &sim->pool[slot];
  r->fn = NULL;
  r->next_free = sim->free_head;
  sim->free_head = slot;
}

static inline uint32_t slot_alloc(sim_engine *sim)
{
  uint32_t slot = sim->free_head;
  if (G_LIKELY(slot != SIM_NO_SLOT)) {
    sim->free_head = sim->pool[slot].next_free;
    return slot;
  }
  if (sim->pool_len == sim->pool_cap) {
    g_assert(sim->pool_cap < SIM_NO_SLOT / 2);
    uint32_t cap = sim->pool_cap ? sim->pool_cap * 2 : 64;
    sim_event_rec *pool = big_alloc((size_t)cap * sizeof(sim_event_rec));
    if (sim->pool_len > 0)
      memcpy(pool, sim->pool, (size_t)sim->pool_len * sizeof(sim_event_rec));
    free(sim->pool);
    sim->pool = pool;
    sim->pool_cap = cap;
  }
  slot = sim->pool_len++;
  sim->pool[slot].gen = 1;
  return slot;
}

static inline void gen_bump(sim_event_rec *r)
{
  r->gen++;
  if (r->gen == 0) /* keep handles non-zero (SIM_EVENT_NONE is 0) */
    r->gen = 1;
}

/* ---- maintenance ---- */

/* Drops every tombstone and rebuilds the heap bottom-up.  O(n). */
static void heap_compact(sim_engine *sim)
{
  size_t w = 0;
  for (size_t i = 0; i < sim->heap_len; i++) {
    sim_key k = sim->heap[i];
    if (sim->pool[key_slot(k)].fn == NULL)
      slot_free(sim, key_slot(k));
    else
      sim->heap[w++] = k;
  }
  sim->heap_len = w;
  sim->tombstones = 0;
  if (w > 1) {
    for (size_t i = (w - 2) / 4 + 1; i-- > 0;)
      sift_down(sim->heap, w, i, sim->heap[i]);
  }
}

static int key_cmp(const void *a, const void *b)
{
  sim_key x = *(const sim_key *)a, y = *(const sim_key *)b;
  return x < y ? -1 : x > y;
}

/* Renumbers the queued events 0..n-1 in their current order so sequence
 * numbers can restart.  O(n log n). */
static void seq_renumber(sim_engine *sim)
{
  heap_compact(sim);
  qsort(sim->heap, sim->heap_len, sizeof(sim_key), key_cmp);
  for (size_t i = 0; i < sim->heap_len; i++) {
    sim_key k = sim->heap[i];
    sim->heap[i] = key_make(key_time(k), (uint32_t)i, key_slot(k));
  }
  sim->next_seq = (uint32_t)sim->heap_len;
}

/* ---- public API ---- */

sim_engine *sim_engine_new(gboolean checked)
{
  sim_engine *sim = g_new0(sim_engine, 1);
  sim->free_head = SIM_NO_SLOT;
  sim->checked = checked;
  heap_reserve(sim, 64);
  return sim;
}

void sim_engine_free(sim_engine *sim)
{
  if (sim == NULL)
    return;
  free(sim->heap_block);
  free(sim->pool);
  g_free(sim);
}

sim_time_ps sim_now(const sim_engine *sim)
{
  return sim->now;
}

sim_event_id sim_schedule_at(sim_engine *sim, sim_time_ps t, sim_handler fn, void *ctx, uint64_t arg)
{
  g_assert(fn != NULL);
  g_assert(t >= sim->now); /* scheduling into the past is a caller bug */
  if (G_UNLIKELY(sim->next_seq == UINT32_MAX))
    seq_renumber(sim);
  if (G_UNLIKELY(sim->heap_len == sim->heap_cap))
    heap_reserve(sim, sim->heap_len + 1);
  uint32_t slot = slot_alloc(sim);
  sim_event_rec *r = &sim->pool[slot];
  r->fn = fn;
  r->ctx = ctx;
  r->arg = arg;
  sift_up(sim->heap, sim->heap_len, key_make(t, sim->next_seq++, slot));
  sim->heap_len++;
  size_t pending = sim->heap_len - sim->tombstones;
  if (pending > sim->max_pending)
    sim->max_pending = pending;
  if (G_UNLIKELY(sim->checked))
    check_or_abort(sim);
  return ((uint64_t)r->gen << 32) | slot;
}

sim_event_id sim_schedule_after(sim_engine *sim, sim_time_ps delay, sim_handler fn, void *ctx, uint64_t arg)
{
  g_assert(delay >= 0);
  g_assert(delay <= SIM_TIME_MAX - sim->now);
  return sim_schedule_at(sim, sim->now + delay, fn, ctx, arg);
}

gboolean sim_cancel(sim_engine *sim, sim_event_id id)
{
  uint32_t slot = (uint32_t)id;
  uint32_t gen = (uint32_t)(id >> 32);
  if (id == SIM_EVENT_NONE || slot >= sim->pool_len)
    return FALSE;
  sim_event_rec *r = &sim->pool[slot];
  if (r->fn == NULL || r->gen != gen)
    return FALSE; /* already ran, already cancelled, or never issued */
  r->fn = NULL;
  gen_bump(r);
  sim->tombstones++;
  if (sim->tombstones >= SIM_COMPACT_MIN && sim->tombstones * 2 > sim->heap_len)
    heap_compact(sim);
  if (G_UNLIKELY(sim->checked))
    check_or_abort(sim);
  return TRUE;
}

uint64_t sim_run(sim_engine *sim, sim_time_ps until)
{
  uint64_t done = 0;
  sim->stop = FALSE;
  while (sim->heap_len > 0) {
    sim_key top = sim->heap[0];
    sim_time_ps t = key_time(top);
    if (t > until)
      break;
    size_t n = --sim->heap_len;
    if (n > 0) {
      delete_root(sim->heap, n, sim->heap[n]);
      /* The next event's record is needed soon; start fetching it now. */
      __builtin_prefetch(&sim->pool[key_slot(sim->heap[0])]);
    }
    uint32_t slot = key_slot(top);
    sim_event_rec *r = &sim->pool[slot];
    sim_handler fn = r->fn;
    if (fn == NULL) { /* a cancelled event */
      sim->tombstones--;
      slot_free(sim, slot);
      if (G_UNLIKELY(sim->checked))
        check_or_abort(sim);
      continue;
    }
    void *ctx = r->ctx;
    uint64_t arg = r->arg;
    gen_bump(r);
    slot_free(sim, slot);
    sim->now = t;
    if (G_UNLIKELY(sim->checked))
      check_or_abort(sim);
    fn(sim, ctx, arg);
    done++;
    if (sim->stop)
      break;
  }
  sim->processed += done;
  /* A bounded run that ran out of events before `until` leaves the clock
   * at `until`, so the caller can schedule relative to the bound. */
  if (!sim->stop && until != SIM_TIME_MAX && until > sim->now)
    sim->now = until;
  sim->stop = FALSE;
  return done;
}

void sim_stop(sim_engine *sim)
{
  sim->stop = TRUE;
}

size_t sim_pending(const sim_engine *sim)
{
  return sim->heap_len - sim->tombstones;
}

uint64_t sim_events_processed(const sim_engine *sim)
{
  return sim->processed;
}

size_t sim_max_pending(const sim_engine *sim)
{
  return sim->max_pending;
}

gboolean sim_check_invariants(const sim_engine *sim, const char **why)
{
  const char *dummy;
  if (why == NULL)
    why = &dummy;
  *why = NULL;
  if (sim->heap_len > sim->heap_cap) {
    *why = "heap length exceeds its capacity";
    return FALSE;
  }
  if (((uintptr_t)(sim->heap + 1) & 63) != 0) {
    *why = "heap sibling groups are not cache-line aligned";
    return FALSE;
  }
  /* Each pool slot is either in the heap exactly once or on the free list
   * exactly once. */
  guint8 *seen = g_new0(guint8, (gsize)sim->pool_len + 1);
  gboolean ok = FALSE;
  size_t tomb = 0;
  for (size_t i = 0; i < sim->heap_len; i++) {
    sim_key k = sim->heap[i];
    if (i > 0 && !(sim->heap[(i - 1) / 4] < k)) {
      *why = "a heap entry is earlier than its parent (heap order broken)";
      goto out;
    }
    uint32_t slot = key_slot(k);
    if (slot >= sim->pool_len) {
      *why = "a heap entry names a pool slot that was never allocated";
      goto out;
    }
    if (seen[slot]) {
      *why = "a pool slot appears twice in the heap";
      goto out;
    }
    seen[slot] = 1;
    if (key_seq(k) >= sim->next_seq) {
      *why = "a heap entry has a sequence number not yet issued";
      goto out;
    }
    if (key_time(k) < sim->now) {
      *why = "a queued event lies before the current time";
      goto out;
    }
    if (sim->pool[slot].fn == NULL)
      tomb++;
    else if (sim->pool[slot].gen == 0) {
      *why = "a pending event has generation 0";
      goto out;
    }
  }
  if (tomb != sim->tombstones) {
    *why = "the tombstone count does not match the cancelled entries in the heap";
    goto out;
  }
  size_t nfree = 0;
  for (uint32_t s = sim->free_head; s != SIM_NO_SLOT; s = sim->pool[s].next_free) {
    if (s >= sim->pool_len) {
      *why = "the free list names a slot that was never allocated";
      goto out;
    }
    if (seen[s]) {
      *why = "a slot is both queued and free, or the free list has a cycle";
      goto out;
    }
    seen[s] = 1;
    if (sim->pool[s].fn != NULL) {
      *why = "a free pool record still has a handler";
      goto out;
    }
    nfree++;
  }
  if (nfree + sim->heap_len != sim->pool_len) {
    *why = "some pool records are neither queued nor free (leaked)";
    goto out;
  }
  ok = TRUE;
out:
  g_free(seen);
  return ok;
}

void sim_print_speed(const sim_engine *sim, double wall_seconds, FILE *out)
{
  uint64_t n = sim->processed;
  if (wall_seconds > 0)
    fprintf(out, "wisp: %" G_GUINT64_FORMAT " events in %.3f s (%.0f events/s)\n", n, wall_seconds,
            (double)n / wall_seconds);
  else
    fprintf(out, "wisp: %" G_GUINT64_FORMAT " events in %.3f s (- events/s)\n", n, 0.0);
}

/* ---- test hooks (sim_private.h) ---- */

void sim_debug_set_next_seq(sim_engine *sim, uint32_t seq)
{
  g_assert(seq >= sim->next_seq);
  sim->next_seq = seq;
}

size_t sim_debug_queued_keys(const sim_engine *sim)
{
  return sim->heap_len;
}

void sim_debug_swap_first_last(sim_engine *sim)
{
  g_assert(sim->heap_len >= 2);
  sim_key k = sim->heap[0];
  sim->heap[0] = sim->heap[sim->heap_len - 1];
  sim->heap[sim->heap_len - 1] = k;
}
