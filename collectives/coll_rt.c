/* coll_rt.c: the collective runtime's front (coll.h): the runtime object
 * and its hooks (slowdown, ring recurrence), starting a collective or a
 * library point-to-point (plan it: coll_plan.c and the library family's
 * hooks; allocate its state; begin it on the ring recurrence,
 * coll_ring.c, or per transfer, coll_run.c), and measuring one
 * collective alone (collbench).  The only file of the runtime that picks
 * a library family (coll_lib_ops_for); everything below reaches the
 * family through its hooks.
 */
#include "config.h"

#include <string.h>

#include "collectives/coll_run.h"
#include "collectives/libraries/coll_lib_ops.h"

coll_rt *coll_rt_new(sim_engine *sim, net *n, const coll_policy *policy)
{
  coll_rt *c = g_new0(coll_rt, 1);
  c->sim = sim;
  c->n = n;
  c->t = net_get_topo(n);
  c->twohop = g_hash_table_new_full(g_direct_hash, g_direct_equal, (GDestroyNotify)coll_twohop_free, NULL);
  if (policy != NULL) {
    c->pol = *policy;
  } else {
    c->pol.chunks = 1; /* as coll_policy_new_default(): library ideal */
    coll_library_params_default(COLL_LIBRARY_IDEAL, &c->pol.lib);
  }
  c->free_xr = XR_NONE;
  c->ops = coll_lib_ops_for(c->pol.lib.kind);
  if (c->ops->rt_init != NULL)
    c->ops->rt_init(c);
  return c;
}

/* Unfinished collectives are dropped.  Queued events point into the
 * runtime, so this follows sim.h's teardown rule: after the last sim_run,
 * before the net and the engine. */
void coll_rt_free(coll_rt *c)
{
  if (c == NULL)
    return;
  while (c->runs != NULL) {
    coll_run *r = c->runs;
    c->runs = r->next;
    coll_run_free(r);
  }
  g_hash_table_destroy(c->twohop);
  g_free(c->xr);
  g_free(c->work);
  if (c->ops->rt_free != NULL)
    c->ops->rt_free(c);
  g_free(c->ovl_cores);
  g_free(c->ovl_sdma);
  g_free(c->ovl_rate);
  g_free(c->ovl_delta);
  g_free(c->link_stamp);
  coll_symcache_free(c->symcache);
  coll_tree_hops_free(c->tree_hops);
  g_free(c);
}

gboolean coll_rt_set_slowdown_hook(coll_rt *c, coll_slowdown_fn fn, void *ctx)
{
  if (fn == NULL || c->ops->interferes == NULL || !c->ops->interferes(&c->pol.lib))
    return FALSE;
  size_t nr = (size_t)topo_n_ranks(c->t);
  c->ovl_fn = fn;
  c->ovl_ctx = ctx;
  c->ovl_cores = g_new0(int, nr ? nr : 1);
  c->ovl_sdma = g_new0(int, nr ? nr : 1);
  c->ovl_rate = g_new0(uint64_t, nr ? nr : 1);
  c->ovl_delta = g_new0(double, nr ? nr : 1);
  return TRUE;
}

static void run_begin(sim_engine *sim, void *ctx, uint64_t arg)
{
  (void)sim;
  (void)arg;
  coll_run *r = ctx;
  coll_rt *c = r->lib;
  uint32_t n_slots = (uint32_t)r->n * (uint32_t)r->n_chunks;
  /* Slots start in member order; a finished run stays allocated until
   * the loop is over (later kicks of finished slots do nothing). */
  gboolean fin = FALSE;
  if (r->n_steps == 0) {
    /* Nothing to move (one member, or a zero-step plan): all done now. */
    for (int m = 0; m < r->n; m++)
      if (r->done != NULL)
        r->done(c->sim, r->ctx, r->cookie, m);
    coll_run_finish(c, r);
    return;
  }
  if (coll_ring_begin(c, r) || coll_fast_tree_begin(c, r) || coll_fast_begin(c, r))
    return;
  coll_count_alloc(r);
  if (r->held != NULL)
    for (int m = 0; m < r->n; m++)
      if (!r->held[m])
        r->t_begin[m] = sim_now(c->sim);
  for (uint32_t s = 0; s < n_slots; s++)
    if (coll_run_kick(c, r, s))
      fin = TRUE;
  if (fin)
    coll_run_finish(c, r);
}

gboolean coll_desc_check(const topo *t, const coll_desc *d, GError **error)
{
  coll_prim prim;
  int nr = topo_n_ranks(t);
  if (!coll_prim_from_type(d->type, &prim)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED, "collective type %d is not a collective wisp runs",
                (int)d->type);
    return FALSE;
  }
  if (d->n_ranks < 1 || d->n_ranks > 65536) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "a collective needs 1 to 65536 members, this one has %d", d->n_ranks);
    return FALSE;
  }
  gboolean *seen = g_new0(gboolean, nr > 0 ? nr : 1);
  gboolean ok = TRUE;
  for (int i = 0; i < d->n_ranks && ok; i++) {
    int rk = d->ranks[i];
    if (rk < 0 || rk >= nr) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "collective member %d is rank %d, but the network %s has ranks 0..%d", i, rk,
                  topo_source(t), nr - 1);
      ok = FALSE;
    } else if (seen[rk]) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "rank %d appears twice in one collective group", rk);
      ok = FALSE;
    } else {
      seen[rk] = TRUE;
    }
  }
  if (ok && et_coll_rooted(d->type)) {
    if (d->root < 0 || d->root >= nr || !seen[d->root]) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s root %d is not a member of its group; give the root's global rank",
                  coll_prim_name(prim), d->root);
      ok = FALSE;
    }
  }
  if (ok && prim == COLL_PRIM_ALL_TO_ALLV && d->splits == NULL) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "all_to_allv needs per-peer sizes (n_ranks x n_ranks bytes)");
    ok = FALSE;
  }
  g_free(seen);
  return ok;
}

/* A new run of d for the members d->ranks: the root member, the internal
 * byte count D (coll_sched.bytes) from Chakra's comm_size, and for
 * all-to-allv its split matrix (D: the largest a member sends or
 * receives, in *a2av_max).  O(n), all-to-allv O(n^2). */
/* The run's per-slot state: slots, the members' chunk counts and the
 * transfer scratch (the step counters are allocated when the run goes
 * per transfer: run_begin, or a fast path's conversion).  O(n x chunks). */
static void run_alloc(coll_rt *c, coll_run *r)
{
  uint32_t n_slots = (uint32_t)r->n * (uint32_t)r->n_chunks;
  r->slot = g_new0(coll_slot, n_slots);
  if (r->engine)
    r->slot_local_done = g_new0(sim_time_ps, n_slots);
  if (c->pol.reduce_bw > 0)
    r->slot_red = g_new0(uint64_t, n_slots);
  r->chunks_left = g_new(int, r->n);
  for (int m = 0; m < r->n; m++)
    r->chunks_left[m] = r->n_chunks;
  r->members_left = r->n;
  r->scratch = g_new(coll_xfer, 2 * (size_t)r->n + 2);
}

static coll_run *new_run(coll_rt *c, const coll_desc *d, coll_prim prim, coll_done_fn done, void *ctx,
                         uint64_t cookie, gboolean p2p, uint64_t *a2av_max_out)
{
  coll_run *r = g_new0(coll_run, 1);
  r->lib = c;
  r->prim = prim;
  r->p2p = p2p;
  r->n = d->n_ranks;
  r->ranks = g_memdup2(d->ranks, sizeof(int) * (size_t)d->n_ranks);
  r->done = done;
  r->ctx = ctx;
  r->cookie = cookie;
  r->root_member = -1;
  for (int i = 0; i < r->n; i++) {
    g_assert(r->ranks[i] >= 0 && r->ranks[i] < topo_n_ranks(c->t));
    if (r->ranks[i] == d->root)
      r->root_member = i;
  }
  switch (prim) {
  case COLL_PRIM_BROADCAST:
  case COLL_PRIM_REDUCE:
  case COLL_PRIM_GATHER:
  case COLL_PRIM_SCATTER:
    g_assert(r->root_member >= 0);
    break;
  default:
    r->root_member = -1;
  }
  /* Internal D (coll_sched.bytes) from Chakra's comm_size. */
  switch (prim) {
  case COLL_PRIM_ALL_GATHER:
  case COLL_PRIM_GATHER:
  case COLL_PRIM_SCATTER:
    r->bytes = d->bytes * (uint64_t)r->n;
    break;
  case COLL_PRIM_BARRIER:
    r->bytes = 0;
    break;
  default:
    r->bytes = d->bytes;
  }
  uint64_t a2av_max = 0;
  if (prim == COLL_PRIM_ALL_TO_ALLV) {
    g_assert(d->splits != NULL);
    size_t nn = (size_t)r->n * (size_t)r->n;
    r->splits = g_memdup2(d->splits, sizeof(uint64_t) * nn);
    for (int a = 0; a < r->n; a++) {
      uint64_t snd = 0, rcv = 0;
      for (int b = 0; b < r->n; b++) {
        snd += r->splits[(size_t)a * r->n + b];
        rcv += r->splits[(size_t)b * r->n + a];
      }
      a2av_max = MAX(a2av_max, MAX(snd, rcv));
    }
    r->bytes = a2av_max;
  }
  *a2av_max_out = a2av_max;
  return r;
}

static void start_run(coll_rt *c, const coll_desc *d, coll_done_fn done, void *ctx, uint64_t cookie,
                      coll_info *info, gboolean p2p)
{
  coll_prim prim;
  gboolean known = coll_prim_from_type(d->type, &prim);
  g_assert(known);
  g_assert(d->n_ranks >= 1 && d->n_ranks <= 65536);
  if (!p2p && d->two_hop != COLL_TWO_HOP_NONE &&
      coll_twohop_start(c->sim, c->n, c->twohop, d, c->pol.chunks, done, ctx, cookie, info)) {
    if (info != NULL) {
      uint64_t mx = 0;
      for (int a = 0; a < d->n_ranks; a++) {
        uint64_t snd = 0, rcv = 0;
        for (int b = 0; b < d->n_ranks; b++) {
          snd += d->splits[(size_t)a * d->n_ranks + b];
          rcv += d->splits[(size_t)b * d->n_ranks + a];
        }
        mx = MAX(mx, MAX(snd, rcv));
      }
      info->algbw_bytes = coll_algbw_bytes(d->type, mx, d->n_ranks);
      info->busbw_factor = coll_busbw_factor(d->type, d->n_ranks);
    }
    return;
  }
  uint64_t a2av_max = 0;
  coll_run *r = new_run(c, d, prim, done, ctx, cookie, p2p, &a2av_max);
  coll_plan_grid(r, c->t);
  if (c->ops->plan != NULL)
    c->ops->plan(c, r, d, prim, p2p);
  coll_plan_phases(r, &c->pol, c->t);
  coll_plan_chunks(c, r, d, prim);
  run_alloc(c, r);
  if (info != NULL) {
    memset(info, 0, sizeof *info);
    info->nccl_algo = -1;
    info->proto = -1;
    coll_plan_describe(r, c->t, info);
    info->algbw_bytes = coll_algbw_bytes(d->type, prim == COLL_PRIM_ALL_TO_ALLV ? a2av_max : d->bytes, r->n);
    info->busbw_factor = coll_busbw_factor(d->type, r->n);
  }
  if (info != NULL && r->stream) {
    info->nccl_algo = r->nalgo;
    info->proto = r->proto;
    info->host_ps = r->t_host;
  }
  if (c->ops->start != NULL)
    c->ops->start(c, r, d, info);
  r->next = c->runs;
  if (c->runs)
    c->runs->prev = r;
  c->runs = r;
  sim_post_after(c->sim, r->stream ? r->t_base : 0, run_begin, r, 0);
}

void coll_start(coll_rt *c, const coll_desc *d, coll_done_fn done, void *ctx, uint64_t cookie,
                coll_info *info)
{
  start_run(c, d, done, ctx, cookie, info, FALSE);
}

/* A send is the library's broadcast from src over the pair {src, dst}
 * with the direct operator: one step, one transfer, the same
 * registration, staging, SDMA, engine and sigma_sig as a collective's
 * single-peer step (reference §5.1).  The buffer id, when the caller has
 * none, is coll_buffer_p2p's.  O(1) + start_run. */
gboolean coll_p2p_start(coll_rt *c, int src, int dst, uint64_t bytes, uint64_t buffer, gboolean alloc_known,
                        sim_time_ps alloc_time, coll_done_fn done, void *ctx, uint64_t cookie, coll_info *info)
{
  if (!coll_library_has_engine(c->pol.lib.kind))
    return FALSE;
  g_assert(src != dst);
  int ranks[2] = { src, dst };
  if (buffer == 0)
    buffer = coll_buffer_p2p(src, dst, bytes);
  coll_desc d = { .type = ET_COLL_BROADCAST, .bytes = bytes, .ranks = ranks, .n_ranks = 2, .root = src,
                  .buffer = buffer, .alloc_known = alloc_known, .alloc_time = alloc_time };
  start_run(c, &d, done, ctx, cookie, info, TRUE);
  return TRUE;
}

const coll_library_stats *coll_rt_library_stats(const coll_rt *c)
{
  return &c->lstats;
}

gboolean coll_measure(const topo *t, net_tier tier, const coll_policy *policy, const coll_desc *d,
                      sim_time_ps *time_ps, coll_info *info, GError **error)
{
  return coll_measure_lib(t, tier, policy, d, time_ps, info, NULL, error);
}

gboolean coll_measure_lib(const topo *t, net_tier tier, const coll_policy *policy, const coll_desc *d,
                          sim_time_ps *time_ps, coll_info *info, coll_library_stats *stats, GError **error)
{
  if (!coll_desc_check(t, d, error))
    return FALSE;
  sim_engine *sim = sim_engine_new(FALSE);
  net *n = net_new(sim, t, tier);
  coll_rt *c = coll_rt_new(sim, n, policy);
  coll_info own;
  if (info == NULL)
    info = &own;
  coll_start(c, d, NULL, NULL, 0, info);
  sim_run(sim, SIM_TIME_MAX);
  gboolean ok = c->runs == NULL && !sim_time_overflowed(sim);
  if (sim_time_overflowed(sim)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_LIMIT,
                "a collective of %" G_GUINT64_FORMAT " bytes takes past 2^61 ps (about 26.7 days) on this "
                "network, beyond what wisp represents; use a smaller size or faster, lower-latency links", d->bytes);
  } else if (!ok) {
    coll_prim prim = COLL_PRIM_COUNT;
    coll_prim_from_type(d->type, &prim);
    g_set_error(error, WISP_ERROR, WISP_ERROR_DEADLOCK,
                "the %s collective did not finish (internal scheduling error)", coll_prim_name(prim));
  }
  *time_ps = sim_now(sim);
  const coll_library_params *lp = coll_policy_library(policy);
  if (lp->kind == COLL_LIBRARY_NCCL || lp->kind == COLL_LIBRARY_RCCL) {
    /* nccl-tests' (and rccl-tests') timing loop: a host thread launches the iterations back
     * to back (gpus_per_thread kernel launches each, nccl-tests -g) and
     * synchronises once at the end, dividing by the iterations
     * (nccl-tests src/common.cu, BenchTime).  The host and the GPUs form
     * a two-stage pipeline, so an iteration costs the slower stage:
     * max(host launches, GPU time), the GPU time being the simulated time
     * after the launches.  (The first iteration's fill, min / iterations,
     * is left out: under 5 % at nccl-tests' 20 iterations.)  The host
     * stage is the plan's (nccl_plan.c nccl_host_ps: launches and, before
     * NCCL 2.13, the work-FIFO slots of the launched channels). */
    sim_time_ps host = info->host_ps > 0 ? info->host_ps : lp->launch * (sim_time_ps)MAX(lp->gpus_per_thread, 1);
    sim_time_ps gpu = *time_ps > host ? *time_ps - host : 0;
    *time_ps = MAX(host, gpu);
  }
  if (stats != NULL)
    *stats = c->lstats;
  coll_rt_free(c);
  net_free(n);
  sim_engine_free(sim);
  return ok;
}
