/* sim_testhooks.c: test hooks into the discrete-event engine (declared in
 * sim_testhooks.h).  Built into the test-only library
 * simcore/libwisp_testhooks.la, which is not installed and is linked only
 * by the tests that use it (regress/test_sim); libwisp does not export
 * these symbols. */
#include "config.h"
#include "simcore/sim_internal.h"
#include "simcore/sim_testhooks.h"


void sim_debug_set_next_seq(sim_engine *sim, uint32_t seq)
{
  sim->next_seq = seq;
}

size_t sim_debug_queued_keys(const sim_engine *sim)
{
  return sim->queued;
}

/* Pointers to the first queued entry (eq head or lowest bucket) and the
 * last one (highest non-empty bucket's tail). */
static void first_last(sim_engine *sim, sim_qent **first, sim_qent **last)
{
  *first = *last = NULL;
  if (sim->eq.len > 0) {
    *first = &sim->eq.head->e[sim->eq.head_pos];
    *last = &sim->eq.tail->e[sim->eq.tail->n - 1];
  }
  for (int L = 0; L < SIM_LEVELS; L++)
    for (int d = 0; d < SIM_DIGITS; d++) {
      sim_bucket *b = &sim->bucket[L][d];
      if (b->len == 0)
        continue;
      if (*first == NULL)
        *first = &b->head->e[0];
      *last = &b->tail->e[b->tail->n - 1];
    }
}

void sim_debug_swap_first_last(sim_engine *sim)
{
  sim_qent *a, *b;
  first_last(sim, &a, &b);
  g_assert(a != NULL && b != NULL && a != b);
  sim_qent x = *a;
  *a = *b;
  *b = x;
}
