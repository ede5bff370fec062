/* sim_testhooks.h: test hooks into the discrete-event engine.  Not
 * installed and not for simulation code: the hooks live in the test-only
 * library simcore/libwisp_testhooks.la (sim_testhooks.c), not in libwisp;
 * regress/test_sim.c uses them to reach states that take billions of
 * events to reach otherwise. */
#ifndef WISP_SIM_TESTHOOKS_H
#define WISP_SIM_TESTHOOKS_H

#include "simcore/sim.h"

G_BEGIN_DECLS

/* Sets the next insertion sequence number, so a test can exercise the
 * 32-bit counter's wrap (call it before scheduling anything). */
void sim_debug_set_next_seq(sim_engine *sim, uint32_t seq);

/* Keys physically in the queue, including cancelled events not yet
 * discarded (sim_pending() counts only live events). */
size_t sim_debug_queued_keys(const sim_engine *sim);

/* Swaps the first and last queue entries (the head of the equal-time FIFO
 * or lowest bucket, and the tail of the highest bucket), which breaks their
 * placement when their times differ, so a test can show that
 * sim_check_invariants() notices. */
void sim_debug_swap_first_last(sim_engine *sim);

G_END_DECLS
#endif
