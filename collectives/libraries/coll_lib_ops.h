/* coll_lib_ops.h: the library families' hooks on the collective runtime
 * (not installed; the table's layout is coll_run.h's coll_lib_ops).  One
 * table per family: nccl/ (nccl_plan.c), rccl/ (rccl_plan.c: NCCL's plan
 * with RCCL's tuner), supernode/ (supernode_run.c);
 * the ideal library has no hooks.  Only the runtime's front
 * (collectives/coll_rt.c) picks a table; the plan and the run reach the
 * family through it.
 */
#ifndef WISP_COLL_LIB_OPS_H
#define WISP_COLL_LIB_OPS_H

#include "collectives/coll_run.h"

G_BEGIN_DECLS

extern const coll_lib_ops coll_nccl_ops;
extern const coll_lib_ops coll_rccl_ops;
extern const coll_lib_ops coll_supernode_ops;
extern const coll_lib_ops coll_ideal_ops;

/* The table of library kind k's family (never NULL).  O(1). */
const coll_lib_ops *coll_lib_ops_for(coll_library_kind k);

G_END_DECLS
#endif
