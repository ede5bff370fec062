/* sim_engine.c: wisp's discrete-event engine (see sim.h).
 *
 * The queue is a monotone radix heap with 8-bit digits.  A discrete-event
 * simulation never schedules before `now`, so every key pushed is at least
 * the time `last` of the most recently popped event; a radix heap exploits
 * that.  An entry with time t is kept in
 *   - the FIFO `eq` when t == last, or
 *   - bucket (L, d) of level L = 0..7, where byte L is the most significant
 *     byte in which t differs from last and d is t's value in byte L.
 * Keys in level L exceed every key in levels below it, and within a level
 * bucket d < d' holds smaller keys, so the minimum lies in `eq` or in the
 * lowest non-empty bucket, found through a 256-bit occupancy mask per level.
 * When `eq` is empty, that bucket's minimum m (tracked on push, so no scan
 * is needed) becomes `last`, and the bucket's entries are re-placed; each
 * of them shares bytes L..7 with m, so each moves to eq or to a level below
 * L.
 *
 * Cost: push O(1); pop amortized O(1): an entry moves at most once per
 * level (8 moves) over its life, and each move is a sequential append.
 * This beats an O(log n) binary or 4-ary heap by a wide margin on large
 * queues, whose bottom levels are memory-latency bound (measured in
 * bench/bench_engine.c; see its notes).
 *
 * Determinism (ties run in scheduling order).  Claim: entries with equal
 * time always sit in the same bucket, in scheduling order.  Equal times give
 * equal placement against the same `last`; an entry scheduled later is
 * appended behind an earlier one that is already in that bucket; a
 * re-placement moves a whole bucket in array order (stable) and sends equal
 * times to one destination; `eq` is consumed from its head.  So the FIFO
 * order of equal times is never broken.  Each entry also carries its
 * insertion sequence number, used only by the checker to verify this.
 *
 * Pushes must not precede `last`.  A bucket is re-placed only when its
 * minimum lies at or before the run's bound, so `last` equals the time of
 * the event about to run, or passes `now` only onto cancelled events; by
 * the time sim_run returns (or a handler runs) last <= now again, so any
 * later push at or after `now` is valid.  The clock itself only moves to
 * events that run (or to a bounded run's `until`).
 *
 * Entries carry their payload (handler, context, argument) inline, so a
 * pop touches only the sequentially read bucket; a separate pool record
 * would cost one random memory access per event, which is the dominant cost
 * on large queues.  An event scheduled with a handle (sim_schedule_*) also
 * owns a slot; events posted without one (sim_post_*) do not, and their pop
 * touches nothing else.  Handles are (generation << 32 | slot), and slots
 * are recycled through a free list.  The
 * slot's generation is bumped when the event runs or is cancelled, so a
 * stale handle is rejected.  Cancellation is lazy: the slot's bit is set in
 * a `cancelled` bitmap (one bit per slot, small enough to stay in cache) and
 * the entry, now a tombstone, is discarded when it is reached, which also
 * frees its slot; when tombstones exceed half the queue every bucket is
 * filtered in O(n), so memory stays within about twice the live events.
 * Buckets are lists of 4 KiB blocks recycled through a small free list, so
 * memory follows the queued entries (40 bytes each) plus at most one
 * partial block per bucket.
 */
#include "config.h"
#include "simcore/sim.h"
#include "simcore/sim_internal.h"

/* A block and its header fill 4 KiB at most (sim_internal.h). */
G_STATIC_ASSERT(sizeof(sim_qent) == 40 && sizeof(sim_block) <= 4096);

#include <stdlib.h>
#include <string.h>

static inline gboolean is_cancelled(const sim_engine *sim, uint32_t slot)
{
  return (sim->cancelled[slot >> 6] >> (slot & 63)) & 1;
}

static void check_or_abort(const sim_engine *sim)
{
  const char *why = NULL;
  if (!sim_check_invariants(sim, &why))
    g_error("sim: engine invariant violated: %s", why);
}

/* ---- buckets ---- */

static sim_block *block_get(sim_engine *sim)
{
  sim_block *b = sim->free_blocks;
  if (b != NULL) {
    sim->free_blocks = b->next;
    sim->n_free_blocks--;
  } else {
    b = g_new(sim_block, 1);
  }
  b->next = NULL;
  b->n = 0;
  return b;
}

static void block_put(sim_engine *sim, sim_block *b)
{
  if (sim->n_free_blocks >= SIM_FREE_BLOCKS) {
    g_free(b);
    return;
  }
  b->next = sim->free_blocks;
  sim->free_blocks = b;
  sim->n_free_blocks++;
}

/* Reserves the next entry of bucket b for an event at time t and returns
 * it for the caller to fill (filling in place avoids building a 40-byte
 * temporary, whose copy stalls store forwarding on the hot path). */
static inline sim_qent *bucket_append(sim_engine *sim, sim_bucket *b, int64_t t)
{
  sim_block *k = b->tail;
  if (G_UNLIKELY(k == NULL || k->n == SIM_BLOCK_ENTRIES)) {
    sim_block *nb = block_get(sim);
    if (k == NULL)
      b->head = nb;
    else
      k->next = nb;
    b->tail = k = nb;
  }
  if (b->len++ == 0 || t < b->min)
    b->min = t;
  return &k->e[k->n++];
}

static inline void bucket_push(sim_engine *sim, sim_bucket *b, const sim_qent *e)
{
  *bucket_append(sim, b, e->t) = *e;
}

/* Detaches a bucket's blocks; the caller drains them from index `pos` of
 * the first block and returns each with block_put. */
static sim_block *bucket_detach(sim_bucket *b, uint32_t *pos)
{
  sim_block *h = b->head;
  *pos = b->head_pos;
  b->head = b->tail = NULL;
  b->len = 0;
  b->head_pos = 0;
  return h;
}

/* Removes the first entry of a non-empty FIFO bucket. */
static inline sim_qent bucket_pop_front(sim_engine *sim, sim_bucket *b)
{
  sim_block *h = b->head;
  sim_qent e = h->e[b->head_pos++];
  b->len--;
  if (b->head_pos == h->n) {
    if (h == b->tail) { /* the bucket is now empty: reuse its only block */
      h->n = 0;
    } else {
      b->head = h->next;
      block_put(sim, h);
    }
    b->head_pos = 0;
  }
  return e;
}

/* Level and digit of time t against `last` (t != last). */
static inline void placement(int64_t t, int64_t last, int *level, int *digit)
{
  uint64_t x = (uint64_t)t ^ (uint64_t)last;
  int L = (63 - __builtin_clzll(x)) >> 3;
  *level = L;
  *digit = (int)(((uint64_t)t >> (8 * L)) & 0xff);
}

/* The bucket an event at time t belongs in (marking it occupied). */
static inline sim_bucket *bucket_for(sim_engine *sim, int64_t t)
{
  if (t == sim->last)
    return &sim->eq;
  int L, d;
  placement(t, sim->last, &L, &d);
  sim->mask[L][d >> 6] |= UINT64_C(1) << (d & 63);
  sim->level_mask |= 1u << L;
  return &sim->bucket[L][d];
}

static inline void place(sim_engine *sim, const sim_qent *e)
{
  bucket_push(sim, bucket_for(sim, e->t), e);
}

/* The lowest non-empty bucket, or FALSE when every bucket is empty. */
static inline gboolean lowest_bucket(const sim_engine *sim, int *level, int *digit)
{
  if (sim->level_mask == 0)
    return FALSE;
  int L = __builtin_ctz(sim->level_mask);
  for (int w = 0; w < SIM_DIGITS / 64; w++) {
    if (sim->mask[L][w]) {
      *level = L;
      *digit = w * 64 + __builtin_ctzll(sim->mask[L][w]);
      return TRUE;
    }
  }
  g_assert_not_reached();
}

static inline void mark_empty(sim_engine *sim, int L, int d)
{
  sim->mask[L][d >> 6] &= ~(UINT64_C(1) << (d & 63));
  gboolean any = FALSE;
  for (int w = 0; w < SIM_DIGITS / 64; w++)
    any |= sim->mask[L][w] != 0;
  if (!any)
    sim->level_mask &= ~(1u << L);
}

static inline void slot_free(sim_engine *sim, uint32_t slot);

static inline gboolean is_tombstone(const sim_engine *sim, const sim_qent *e)
{
  return e->slot != SIM_NO_SLOT && is_cancelled(sim, e->slot);
}

/* Drops a tombstone that has been taken out of the queue. */
static inline void drop_tombstone(sim_engine *sim, const sim_qent *e)
{
  slot_free(sim, e->slot);
  sim->tombstones--;
  sim->queued--;
}

/* Empties bucket (L, d) into its lower buckets (or eq) against the current
 * `last`, dropping tombstones. */
static void redistribute(sim_engine *sim, int L, int d)
{
  uint32_t pos;
  sim_block *k = bucket_detach(&sim->bucket[L][d], &pos);
  mark_empty(sim, L, d);
  while (k) {
    for (uint32_t i = pos; i < k->n; i++) {
      if (is_tombstone(sim, &k->e[i]))
        drop_tombstone(sim, &k->e[i]);
      else
        place(sim, &k->e[i]);
    }
    sim_block *next = k->next;
    block_put(sim, k);
    k = next;
    pos = 0;
  }
}

/* Makes `eq` hold the earliest entries if they lie at or before `until`.
 * Returns FALSE (queue unchanged) when the queue is empty or its earliest
 * entry lies after `until`.  The lowest bucket's minimum (kept on push, so
 * no scan is needed) becomes `last`.  When that minimum belongs to a
 * cancelled event, `last` can pass `now` for a while; sim_run restores
 * last <= now before it returns (see there), so a later push is valid. */
static gboolean refill(sim_engine *sim, sim_time_ps until)
{
  int L, d;
  while (sim->eq.len == 0) {
    if (!lowest_bucket(sim, &L, &d))
      return FALSE;
    int64_t m = sim->bucket[L][d].min;
    if (m > until)
      return FALSE;
    /* Every entry shares bytes L..7 with m, so it goes to eq or below level
     * L, never back into the bucket being drained. */
    sim->last = m;
    redistribute(sim, L, d);
  }
  return sim->eq.head->e[sim->eq.head_pos].t <= until;
}

/* ---- slots ---- */

/* Returns a slot to the free list and clears its cancelled bit. */
static inline void slot_free(sim_engine *sim, uint32_t slot)
{
  sim->cancelled[slot >> 6] &= ~(UINT64_C(1) << (slot & 63));
  sim->next_free[slot] = sim->free_head;
  sim->free_head = slot;
}

static inline uint32_t slot_alloc(sim_engine *sim)
{
  uint32_t slot = sim->free_head;
  if (G_LIKELY(slot != SIM_NO_SLOT)) {
    sim->free_head = sim->next_free[slot];
    return slot;
  }
  if (sim->n_slots == sim->slot_cap) {
    g_assert(sim->slot_cap < SIM_NO_SLOT / 2);
    uint32_t cap = sim->slot_cap ? sim->slot_cap * 2 : 64;
    sim->gen = g_renew(uint32_t, sim->gen, cap);
    sim->next_free = g_renew(uint32_t, sim->next_free, cap);
    sim->cancelled = g_renew(uint64_t, sim->cancelled, cap / 64);
    memset(sim->cancelled + sim->slot_cap / 64, 0, (cap - sim->slot_cap) / 64 * sizeof(uint64_t));
    sim->slot_cap = cap;
  }
  slot = sim->n_slots++;
  sim->gen[slot] = 1;
  return slot;
}

static inline void gen_bump(sim_engine *sim, uint32_t slot)
{
  if (++sim->gen[slot] == 0) /* keep handles non-zero (SIM_EVENT_NONE is 0) */
    sim->gen[slot] = 1;
}

/* ---- maintenance ---- */

/* Drops tombstones from one bucket, keeping order. */
static void bucket_filter(sim_engine *sim, sim_bucket *b)
{
  uint32_t pos;
  sim_block *k = bucket_detach(b, &pos);
  while (k) {
    for (uint32_t i = pos; i < k->n; i++) {
      if (is_tombstone(sim, &k->e[i]))
        drop_tombstone(sim, &k->e[i]);
      else
        bucket_push(sim, b, &k->e[i]);
    }
    sim_block *next = k->next;
    block_put(sim, k);
    k = next;
    pos = 0;
  }
}

/* Drops every tombstone.  O(queued + 2048 buckets). */
static void queue_compact(sim_engine *sim)
{
  bucket_filter(sim, &sim->eq);
  for (int L = 0; L < SIM_LEVELS; L++) {
    if (!(sim->level_mask & (1u << L)))
      continue;
    for (int d = 0; d < SIM_DIGITS; d++) {
      sim_bucket *b = &sim->bucket[L][d];
      if (b->len == 0)
        continue;
      bucket_filter(sim, b);
      if (b->len == 0)
        mark_empty(sim, L, d);
    }
  }
  g_assert(sim->tombstones == 0);
}

static void bucket_free_blocks(sim_bucket *b)
{
  for (sim_block *k = b->head, *next; k; k = next) {
    next = k->next;
    g_free(k);
  }
}

/* ---- public API ---- */

sim_engine *sim_engine_new(gboolean checked)
{
  sim_engine *sim = g_new0(sim_engine, 1);
  sim->free_head = SIM_NO_SLOT;
  sim->checked = checked;
  return sim;
}

void sim_engine_free(sim_engine *sim)
{
  if (sim == NULL)
    return;
  bucket_free_blocks(&sim->eq);
  for (int L = 0; L < SIM_LEVELS; L++)
    for (int d = 0; d < SIM_DIGITS; d++)
      bucket_free_blocks(&sim->bucket[L][d]);
  for (sim_block *k = sim->free_blocks, *next; k; k = next) {
    next = k->next;
    g_free(k);
  }
  g_free(sim->gen);
  g_free(sim->next_free);
  g_free(sim->cancelled);
  g_free(sim);
}

sim_time_ps sim_now(const sim_engine *sim)
{
  return sim->now;
}

/* Queues an entry; slot is SIM_NO_SLOT for events posted without a handle. */
static inline void enqueue(sim_engine *sim, sim_time_ps t, sim_handler fn, void *ctx, uint64_t arg, uint32_t slot)
{
  g_assert(fn != NULL);
  g_assert(t >= sim->now); /* scheduling into the past is a caller bug */
  g_assert(t >= sim->last); /* holds whenever handlers run and after sim_run */
  sim_qent *e = bucket_append(sim, bucket_for(sim, t), t);
  e->t = t;
  e->fn = fn;
  e->ctx = ctx;
  e->arg = arg;
  e->slot = slot;
  e->seq = sim->next_seq++;
  sim->queued++;
  size_t pending = sim->queued - sim->tombstones;
  if (pending > sim->max_pending)
    sim->max_pending = pending;
  if (G_UNLIKELY(sim->checked))
    check_or_abort(sim);
}

/* An event that would fall at or past SIM_TIME_LIMIT (or a negative delay,
 * which only a wrapped computation produces) means the input asked for a
 * time the engine cannot represent: see sim.h.  O(1). */
void sim_flag_overflow(sim_engine *sim)
{
  sim->overflow = TRUE;
  sim->stop = TRUE;
}

sim_event_id sim_schedule_at(sim_engine *sim, sim_time_ps t, sim_handler fn, void *ctx, uint64_t arg)
{
  if (G_UNLIKELY(t >= SIM_TIME_LIMIT)) {
    sim_flag_overflow(sim);
    return SIM_EVENT_NONE;
  }
  uint32_t slot = slot_alloc(sim);
  enqueue(sim, t, fn, ctx, arg, slot);
  return ((uint64_t)sim->gen[slot] << 32) | slot;
}

void sim_post_at(sim_engine *sim, sim_time_ps t, sim_handler fn, void *ctx, uint64_t arg)
{
  if (G_UNLIKELY(t >= SIM_TIME_LIMIT)) {
    sim_flag_overflow(sim);
    return;
  }
  enqueue(sim, t, fn, ctx, arg, SIM_NO_SLOT);
}

void sim_post_after(sim_engine *sim, sim_time_ps delay, sim_handler fn, void *ctx, uint64_t arg)
{
  if (G_UNLIKELY(delay < 0 || delay >= SIM_TIME_LIMIT - sim->now)) {
    sim_flag_overflow(sim);
    return;
  }
  enqueue(sim, sim->now + delay, fn, ctx, arg, SIM_NO_SLOT);
}

sim_event_id sim_schedule_after(sim_engine *sim, sim_time_ps delay, sim_handler fn, void *ctx, uint64_t arg)
{
  if (G_UNLIKELY(delay < 0 || delay >= SIM_TIME_LIMIT - sim->now)) {
    sim_flag_overflow(sim);
    return SIM_EVENT_NONE;
  }
  return sim_schedule_at(sim, sim->now + delay, fn, ctx, arg);
}

gboolean sim_time_overflowed(const sim_engine *sim)
{
  return sim->overflow;
}

gboolean sim_cancel(sim_engine *sim, sim_event_id id)
{
  uint32_t slot = (uint32_t)id;
  uint32_t gen = (uint32_t)(id >> 32);
  if (id == SIM_EVENT_NONE || slot >= sim->n_slots)
    return FALSE;
  if (sim->gen[slot] != gen)
    return FALSE; /* already ran, already cancelled, or never issued */
  sim->cancelled[slot >> 6] |= UINT64_C(1) << (slot & 63);
  gen_bump(sim, slot);
  sim->tombstones++;
  if (sim->tombstones >= SIM_COMPACT_MIN && sim->tombstones * 2 > sim->queued)
    queue_compact(sim);
  if (G_UNLIKELY(sim->checked))
    check_or_abort(sim);
  return TRUE;
}

uint64_t sim_run(sim_engine *sim, sim_time_ps until)
{
  uint64_t done = 0;
  sim->stop = FALSE;
  while (!sim->overflow && sim->queued > 0 && refill(sim, until)) {
    sim_qent e = bucket_pop_front(sim, &sim->eq);
    sim->queued--;
    if (e.slot != SIM_NO_SLOT) {
      if (is_cancelled(sim, e.slot)) { /* a tombstone */
        sim->tombstones--;
        slot_free(sim, e.slot);
        if (G_UNLIKELY(sim->checked))
          check_or_abort(sim);
        continue;
      }
      gen_bump(sim, e.slot);
      slot_free(sim, e.slot);
    }
    sim->now = e.t;
    if (G_UNLIKELY(sim->checked))
      check_or_abort(sim);
    e.fn(sim, e.ctx, e.arg);
    done++;
    if (sim->stop || sim->overflow)
      break;
  }
  sim->processed += done;
  /* A bounded run that ran out of events before `until` leaves the clock
   * at `until`, so the caller can schedule relative to the bound. */
  if (!sim->stop && until != SIM_TIME_MAX && until > sim->now)
    sim->now = until;
  /* `last` may have moved past `now` onto cancelled events only.  Then
   * either the run was bounded (the clock is now `until`, at or after every
   * minimum taken) or it drained the queue, and an empty queue can take any
   * base: in both cases last <= now holds again. */
  if (sim->queued == 0)
    sim->last = sim->now;
  g_assert(sim->last <= sim->now);
  sim->stop = FALSE;
  return done;
}

void sim_stop(sim_engine *sim)
{
  sim->stop = TRUE;
}

size_t sim_pending(const sim_engine *sim)
{
  return sim->queued - sim->tombstones;
}

uint64_t sim_events_processed(const sim_engine *sim)
{
  return sim->processed;
}

size_t sim_max_pending(const sim_engine *sim)
{
  return sim->max_pending;
}

/* Checks one queued entry against the placement rules and, through
 * `last_seq` (time -> sequence of the previous entry of that time in the
 * same container), the FIFO order of equal times. */
static const char *check_entry(const sim_engine *sim, const sim_qent *e, int L, int d, guint8 *seen,
                               size_t *tomb, size_t *with_slot, GHashTable *last_seq)
{
  if (e->fn == NULL)
    return "a queued entry has no handler";
  if (e->slot != SIM_NO_SLOT) {
    if (e->slot >= sim->n_slots)
      return "a queued entry names a slot that was never allocated";
    if (seen[e->slot])
      return "a slot is queued twice";
    seen[e->slot] = 1;
    (*with_slot)++;
    if (is_cancelled(sim, e->slot))
      (*tomb)++;
    if (sim->gen[e->slot] == 0)
      return "a slot has generation 0";
  }
  if (e->t < sim->now)
    return "a queued event lies before the current time";
  if (e->t < sim->last)
    return "a queued event lies before the radix base";
  if (L < 0) {
    if (e->t != sim->last)
      return "an entry of the equal-time FIFO differs from the last popped time";
  } else {
    int pl, pd;
    if (e->t == sim->last)
      return "an entry equal to the last popped time sits in a level bucket";
    placement(e->t, sim->last, &pl, &pd);
    if (pl != L || pd != d)
      return "an entry sits in the wrong radix bucket for its time";
  }
  /* Sequence numbers wrap, so compare their difference. */
  gpointer prev = g_hash_table_lookup(last_seq, &e->t);
  if (prev && (int32_t)(e->seq - (uint32_t)(GPOINTER_TO_SIZE(prev) - 1)) <= 0)
    return "entries with equal times are out of scheduling order";
  g_hash_table_replace(last_seq, (gpointer)&e->t, GSIZE_TO_POINTER((gsize)e->seq + 1));
  return NULL;
}

gboolean sim_check_invariants(const sim_engine *sim, const char **why)
{
  const char *dummy;
  if (why == NULL)
    why = &dummy;
  *why = NULL;
  guint8 *seen = g_new0(guint8, (gsize)sim->n_slots + 1);
  GHashTable *last_seq = g_hash_table_new(g_int64_hash, g_int64_equal);
  gboolean ok = FALSE;
  size_t tomb = 0, count = 0, with_slot = 0;
  /* Equal times cannot occur in two containers (placement is a function of
   * the time), so FIFO order is checked per container.  O(queued). */
  for (const sim_block *k = sim->eq.head; k; k = k->next)
    for (uint32_t i = k == sim->eq.head ? sim->eq.head_pos : 0; i < k->n; i++) {
      if ((*why = check_entry(sim, &k->e[i], -1, -1, seen, &tomb, &with_slot, last_seq)) != NULL)
        goto out;
      count++;
    }
  for (int L = 0; L < SIM_LEVELS; L++) {
    gboolean level_any = FALSE;
    for (int d = 0; d < SIM_DIGITS; d++) {
      const sim_bucket *b = &sim->bucket[L][d];
      gboolean bit = (sim->mask[L][d >> 6] >> (d & 63)) & 1;
      if (bit != (b->len > 0)) {
        *why = "a bucket's occupancy bit disagrees with its contents";
        goto out;
      }
      level_any |= bit;
      g_hash_table_remove_all(last_seq);
      for (const sim_block *k = b->head; k; k = k->next)
        for (uint32_t i = 0; i < k->n; i++) {
          if ((*why = check_entry(sim, &k->e[i], L, d, seen, &tomb, &with_slot, last_seq)) != NULL)
            goto out;
          count++;
        }
    }
    if (level_any != (gboolean)((sim->level_mask >> L) & 1)) {
      *why = "a level's occupancy bit disagrees with its buckets";
      goto out;
    }
  }
  if (count != sim->queued) {
    *why = "the queued-entry count does not match the buckets";
    goto out;
  }
  if (tomb != sim->tombstones) {
    *why = "the tombstone count does not match the cancelled entries in the queue";
    goto out;
  }
  size_t nfree = 0;
  for (uint32_t s = sim->free_head; s != SIM_NO_SLOT; s = sim->next_free[s]) {
    if (s >= sim->n_slots) {
      *why = "the free list names a slot that was never allocated";
      goto out;
    }
    if (seen[s]) {
      *why = "a slot is both queued and free, or the free list has a cycle";
      goto out;
    }
    seen[s] = 1;
    if (is_cancelled(sim, s)) {
      *why = "a free slot is marked cancelled";
      goto out;
    }
    nfree++;
  }
  if (nfree + with_slot != sim->n_slots) {
    *why = "some slots are neither queued nor free (leaked)";
    goto out;
  }
  ok = TRUE;
out:
  g_free(seen);
  g_hash_table_destroy(last_seq);
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
