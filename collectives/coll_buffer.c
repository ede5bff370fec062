/* coll_buffer.c: the buffer lifecycle of collectives and point-to-point
 * transfers: the identity of the buffer a collective uses (named by the
 * members' nodes, or derived from the collective) and its allocation time
 * when the trace knows it.  The library families key their registration
 * caches on these identities.  O(members) per collective.
 */
#include "config.h"

#include "collectives/coll_run.h"

/* Identity of a buffer the replay did not name: (type, bytes, group).
 * O(n). */
uint64_t coll_buffer_derived(const coll_desc *d)
{
  uint64_t h = wisp_mix64((uint64_t)d->type * 1000003u ^ d->bytes);
  for (int i = 0; i < d->n_ranks; i++)
    h = wisp_mix64(h ^ (uint64_t)(uint32_t)d->ranks[i]);
  return h | 1u; /* never 0 */
}

/* A point-to-point buffer the caller did not name hashes (src, dst,
 * bytes) with a tag, so that it never equals a derived collective buffer.
 * O(1). */
uint64_t coll_buffer_p2p(int src, int dst, uint64_t bytes)
{
  return wisp_mix64(wisp_mix64(UINT64_C(0x7032702070327032) ^ bytes) ^
                    ((uint64_t)(uint32_t)src << 32 | (uint32_t)dst)) | 1u;
}

/* Buffer lifecycle from the members' nodes (coll.h).
 * Moved from the replay (issue 16): the hashes are the library model's
 * business.  The collective's hash is splitmix64 stepped over the members'
 * buffer ids; the point-to-point one mixes the two ids with
 * wisp_mix64.  Both must stay as they are: they key the library's
 * registration cache, so changing them changes hit/miss figures. */
coll_lifecycle coll_desc_set_lifecycle(coll_desc *d, coll_member_comm_fn member, void *ctx, sim_time_ps now)
{
  uint64_t h = UINT64_C(0x9e3779b97f4a7c15);
  sim_time_ps latest = INT64_MIN;
  int with = 0;
  for (int k = 0; k < d->n_ranks; k++) {
    const et_comm *c = member(ctx, k);
    if (c == NULL || !c->has_alloc || c->buffer == 0)
      continue;
    with++;
    latest = MAX(latest, c->alloc_ps);
    h = wisp_mix64(h + c->buffer); /* a splitmix64 step over (h, member buffer) */
  }
  if (with == 0)
    return COLL_LIFECYCLE_NONE;
  if (with < d->n_ranks)
    return COLL_LIFECYCLE_PARTIAL;
  d->buffer = h != 0 ? h : 1;
  d->alloc_known = TRUE;
  d->alloc_time = MIN(latest, now);
  return COLL_LIFECYCLE_KNOWN;
}

gboolean coll_p2p_lifecycle(const et_comm *send, const et_comm *recv, sim_time_ps now, uint64_t *buffer,
                            sim_time_ps *alloc_time)
{
  gboolean known = send->has_alloc && recv->has_alloc && send->buffer != 0 && recv->buffer != 0;
  *buffer = known ? wisp_mix64(send->buffer ^ wisp_mix64(recv->buffer)) | 1u : 0;
  *alloc_time = known ? MIN(MAX(send->alloc_ps, recv->alloc_ps), now) : 0;
  return known;
}
