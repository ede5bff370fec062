/* et_view.h: the one accessor through which readers see a workload's
 * communication records as each rank issues them, whatever the loader
 * composed (a traced workload, ranks sharing graphs, a scaled job).
 *
 * The graph module (et_graph.h) knows nothing of sharing or scaling; the
 * loader composes load -> share (et_share.h) -> scale (et_scale.h), and
 * this view sits above all three: it asks the scale for its counterpart
 * and its traced share, then the share, then the scale to translate.
 */
#ifndef WISP_ET_VIEW_H
#define WISP_ET_VIEW_H

#include "chakra/et_graph.h"
#include "chakra/et_share.h"
#include "chakra/et_scale.h"

G_BEGIN_DECLS

/* The slow path of et_workload_comm: translation by sharing, then by
 * scaling; c itself when the workload neither shares nor scales. */
const et_comm *et_workload_comm_translated(const et_workload *w, int rank, const et_comm *c, et_comm *tmp);

/* Rank `rank`'s communication record `comm` (an index into its graph's
 * comms[]) as that rank issues it: for a traced workload with its own
 * graph the graph's own record; for a rank sharing another rank's graph
 * (chakra/et_share.h) a copy in *tmp with peers, group and root
 * translated to the rank; for a scaled one a copy in *tmp with the group
 * index, peers, root and size translated for the rank's replica (after
 * its traced counterpart's sharing translation).  O(1) (O(log groups)
 * for a shared rank's group, O(group size) for a shared rank's root in a
 * mapped group). */
static inline const et_comm *et_workload_comm(const et_workload *w, int rank, uint32_t comm, et_comm *tmp)
{
  const et_comm *c = &w->ranks[rank]->comms[comm];
  if (G_LIKELY(w->scale == NULL && w->share == NULL))
    return c;
  return et_workload_comm_translated(w, rank, c, tmp);
}

/* Rank `rank`'s record `comm` as its traced rank issues it: the sharing
 * translation only.  For a workload that is not scaled this is
 * et_workload_comm(); for a scaled one it is the traced counterpart's own
 * record (group, peers and root of the trace, not of the replica), which
 * is what reports about the traced graph (fingerprints, critical-path
 * labels, calibration, inspect's tables) have always shown.  O(1) as
 * et_share_translate. */
const et_comm *et_workload_traced_comm(const et_workload *w, int rank, uint32_t comm, et_comm *tmp);

/* "N ranks share M distinct graphs" of workload w (a scaled workload
 * counts its traced graphs); NULL when every rank has its own graph.
 * g_free the result. */
char *et_workload_share_summary(const et_workload *w);

G_END_DECLS
#endif
