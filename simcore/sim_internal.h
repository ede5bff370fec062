/* sim_internal.h: the discrete-event engine's data layout (sim_engine.c
 * describes the radix heap it implements).  Not installed: shared only by
 * sim_engine.c and the test hooks (sim_testhooks.c), which must reach the
 * queue's entries. */
#ifndef WISP_SIM_INTERNAL_H
#define WISP_SIM_INTERNAL_H

#include "simcore/sim.h"

G_BEGIN_DECLS

/* A queued event: 40 bytes, payload inline (no padding: a block of
 * SIM_BLOCK_ENTRIES of them and its header fill 4 KiB; the queue holds
 * one per transfer in flight, millions in a large NCCL job). */
typedef struct {
  int64_t t;
  sim_handler fn;
  void *ctx;
  uint64_t arg;
  uint32_t slot;      /* names the event for cancellation */
  uint32_t seq;       /* insertion sequence, for the checker only */
} sim_qent;

/* Buckets are singly linked lists of 4 KiB blocks drawn from a per-engine
 * free list: appending and draining are sequential, nothing is ever copied
 * to grow, and memory follows the live entries (plus at most one partial
 * block per bucket and SIM_FREE_BLOCKS spare blocks). */
#define SIM_BLOCK_ENTRIES 102
#define SIM_FREE_BLOCKS 256

typedef struct sim_block {
  struct sim_block *next;
  uint32_t n;          /* entries written */
  uint32_t pad;
  sim_qent e[SIM_BLOCK_ENTRIES];
} sim_block;

typedef struct {
  sim_block *head, *tail;
  size_t len;          /* entries not yet consumed (tombstones included) */
  int64_t min;         /* smallest time pushed since the bucket was last drained */
  uint32_t head_pos;   /* entries already consumed from head (eq only) */
} sim_bucket;

#define SIM_NO_SLOT UINT32_MAX
#define SIM_COMPACT_MIN 32
#define SIM_LEVELS 8
#define SIM_DIGITS 256

struct sim_engine {
  sim_bucket eq;       /* entries with t == last, consumed from the head */
  sim_bucket bucket[SIM_LEVELS][SIM_DIGITS];
  uint64_t mask[SIM_LEVELS][SIM_DIGITS / 64];
  uint32_t level_mask; /* bit L set when level L has a non-empty bucket */
  int64_t last;
  size_t queued;       /* entries in the queue, tombstones included */
  size_t tombstones;
  sim_block *free_blocks;
  uint32_t n_free_blocks;

  /* Slots: one per pending event (tombstones included until reached). */
  uint32_t *gen;       /* generation of the handle naming the slot, never 0 */
  uint32_t *next_free; /* free-list links */
  uint64_t *cancelled; /* bitmap: the slot's queued entry is a tombstone */
  uint32_t n_slots, slot_cap;
  uint32_t free_head;

  uint32_t next_seq;
  sim_time_ps now;
  uint64_t processed;
  size_t max_pending;
  gboolean checked;
  gboolean stop;
  gboolean overflow; /* an event was asked for at or past SIM_TIME_MAX (sticky) */
};

G_END_DECLS
#endif
