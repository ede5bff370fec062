/* coll_facts.h: nccl-tests' conventions and the size arithmetic every
 * collective layer shares, as one leaf (it depends on chakra's collective
 * table, et_coll_info in chakra/et_graph.h, and on nothing else of wisp).
 * The runtime (coll_rt.c, coll_run.c, ...), the library models (collectives/libraries/), the
 * calibration and `wisp collbench` all call these instead of keeping their
 * own copies.  Conventions: nccl-tests doc/PERFORMANCE.md and
 * ../shared/reference (conventions.md section 1).  Every function is O(1).
 */
#ifndef WISP_COLL_FACTS_H
#define WISP_COLL_FACTS_H

#include <glib.h>
#include <stdint.h>

#include "chakra/et_graph.h"

G_BEGIN_DECLS

/* nccl-tests' S: the bytes algbw divides by time, for Chakra comm_size
 * comm_size over n_ranks members (et_coll_info.size_rule: a piece per rank
 * gives S = n x comm_size, no data gives 0, else S = comm_size; types
 * outside the table count as whole). */
uint64_t coll_algbw_bytes(et_coll_type type, uint64_t comm_size, int n_ranks);

/* nccl-tests' busbw factor for n_ranks members (et_coll_info.bus_rule):
 * 2 (n - 1) / n, (n - 1) / n, 1 or 0; 0 for n_ranks <= 0 and unknown types. */
double coll_busbw_factor(et_coll_type type, int n_ranks);

/* The inverse of coll_algbw_bytes: Chakra comm_size of nccl-tests' S for n
 * ranks (S / n for all-gather, gather and scatter, 0 for barrier, else S;
 * n < 1 counts as 1). */
uint64_t coll_ncclt_comm_size(et_coll_type type, uint64_t size, int n);

/* Size of piece j when D bytes are cut into q pieces: the first D mod q
 * pieces get one byte more. */
static inline uint64_t coll_piece(uint64_t d, int q, int j)
{
  return d / (uint64_t)q + ((uint64_t)j < d % (uint64_t)q ? 1u : 0u);
}

G_END_DECLS
#endif
