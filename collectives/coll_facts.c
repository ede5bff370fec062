/* coll_facts.c: nccl-tests' algbw/busbw conventions over chakra's table of
 * collective facts (see coll_facts.h).  O(1) per call. */
#include "config.h"

#include "collectives/coll_facts.h"

uint64_t coll_algbw_bytes(et_coll_type type, uint64_t comm_size, int n_ranks)
{
  const et_coll_info *ci = et_coll_info_of(type);
  uint64_t n = n_ranks > 0 ? (uint64_t)n_ranks : 0;
  if (ci == NULL)
    return comm_size;
  switch (ci->size_rule) {
  case ET_COLL_SIZE_PIECE:   /* comm_size = per-rank piece; S = count * n */
    return comm_size * n;
  case ET_COLL_SIZE_NONE:
    return 0;
  default:                   /* AR, RS (full input), A2A (send buffer), A2AV (per-rank max), BCAST, REDUCE */
    return comm_size;
  }
}

double coll_busbw_factor(et_coll_type type, int n_ranks)
{
  const et_coll_info *ci = et_coll_info_of(type);
  if (n_ranks <= 0 || ci == NULL)
    return 0.0;
  double n = (double)n_ranks;
  switch (ci->bus_rule) {
  case ET_COLL_BUS_TWICE_NM1:
    return 2.0 * (n - 1.0) / n;
  case ET_COLL_BUS_NM1:
    return (n - 1.0) / n;
  case ET_COLL_BUS_ONE:
    return 1.0;
  default:                   /* barrier moves no data */
    return 0.0;
  }
}

uint64_t coll_ncclt_comm_size(et_coll_type type, uint64_t size, int n)
{
  const et_coll_info *ci = et_coll_info_of(type);
  if (ci != NULL && ci->size_rule == ET_COLL_SIZE_PIECE)
    return size / (uint64_t)MAX(n, 1);
  if (ci != NULL && ci->size_rule == ET_COLL_SIZE_NONE)
    return 0;
  return size;
}
