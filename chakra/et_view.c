/* et_view.c: a workload's communication records as each rank issues them
 * (see et_view.h): the share's and the scale's translations composed.
 * Each accessor is O(1) (see et_share_translate, et_scale_translate). */
#include "config.h"
#include "chakra/et_view.h"

const et_comm *et_workload_comm_translated(const et_workload *w, int rank, const et_comm *c, et_comm *tmp)
{
  if (w->scale != NULL) {
    const et_share *sh = et_scale_share(w->scale);
    if (sh != NULL) {
      et_comm a;
      et_share_translate(sh, et_scale_counterpart(w->scale, rank), c, &a);
      et_scale_translate(w->scale, rank, &a, tmp);
    } else {
      et_scale_translate(w->scale, rank, c, tmp);
    }
    return tmp;
  }
  if (w->share != NULL) {
    et_share_translate(w->share, rank, c, tmp);
    return tmp;
  }
  return c;
}

const et_comm *et_workload_traced_comm(const et_workload *w, int rank, uint32_t comm, et_comm *tmp)
{
  const et_comm *c = &w->ranks[rank]->comms[comm];
  const et_share *s = w->scale ? et_scale_share(w->scale) : w->share;
  if (G_LIKELY(s == NULL))
    return c;
  et_share_translate(s, w->scale ? et_scale_counterpart(w->scale, rank) : rank, c, tmp);
  return tmp;
}

char *et_workload_share_summary(const et_workload *w)
{
  return et_share_summary(w->scale ? et_scale_share(w->scale) : w->share, w->scale != NULL);
}
