/* coll_lib_ops.c: which family's hooks a library kind runs with (see
 * coll_lib_ops.h): nccl the NCCL model, rccl NCCL's plan with RCCL's tuner, ideal none (wisp's algorithms
 * alone), every library with an engine the supernode family.  O(1).
 */
#include "config.h"

#include "collectives/libraries/coll_lib_ops.h"

/* The ideal library runs wisp's algorithms alone: no hooks. */
const coll_lib_ops coll_ideal_ops = { .family = "ideal" };

const coll_lib_ops *coll_lib_ops_for(coll_library_kind k)
{
  if (k == COLL_LIBRARY_NCCL)
    return &coll_nccl_ops;
  if (k == COLL_LIBRARY_RCCL)
    return &coll_rccl_ops;
  if (coll_library_has_engine(k))
    return &coll_supernode_ops;
  return &coll_ideal_ops;
}
