/* supernode_register.c: the supernode family's buffer registration
 * (§4): the mapper's closed forms (JIT, RDMA-style), the registration
 * state of a run (one FIFO mapper per rank, per buffer and rank the time
 * its mappings are ready; JIT and ROA), the synthetic buffer lifecycle,
 * and the blocked-time statistics.
 * References to "§" are sections of ../shared/reference/supernode-model.md.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "collectives/libraries/supernode/coll_library_internal.h"

/* ---- registration closed forms (§4.3) ---------------------------------- */

sim_time_ps coll_library_job_ps(const coll_library_params *p, uint64_t bytes)
{
  uint64_t pages = bytes == 0 ? 0 : (bytes - 1) / p->page + 1;
  return p->t_imp + p->t_map0 + (sim_time_ps)pages * p->t_pte;
}

sim_time_ps coll_library_jit_ps(const coll_library_params *p, uint64_t bytes, int n)
{
  return p->t_exp + p->t_meta + (sim_time_ps)(n > 1 ? n - 1 : 0) * coll_library_job_ps(p, bytes);
}

sim_time_ps coll_library_jit_handle_ps(const coll_library_params *p, int n)
{
  return p->t_exp + (sim_time_ps)(n > 1 ? n - 1 : 0) * p->t_imp;
}

sim_time_ps coll_library_rdma_ps(const coll_library_params *p, uint64_t bytes, int n)
{
  sim_time_ps ub = coll_library_jit_ps(p, bytes, n) - p->t_meta;
  return coll_library_ps_from_us((double)ub / 1e6 * p->k_rdma);
}

/* ---- stats ------------------------------------------------------------- */

void coll_library_stats_add_blocked(coll_library_stats *s, sim_time_ps blocked)
{
  if (blocked <= 0)
    return;
  s->hits++;
  s->blocked_sum_ps += blocked;
  s->blocked_max_ps = MAX(s->blocked_max_ps, blocked);
  uint64_t ns = (uint64_t)blocked / 1000u;
  int b = 0;
  while (ns > 1 && b < COLL_LIBRARY_HIST - 1) {
    ns >>= 1;
    b++;
  }
  s->hist[b]++;
}

sim_time_ps coll_library_stats_blocked_pct(const coll_library_stats *s, double q)
{
  if (s->hits == 0)
    return 0;
  uint64_t want = (uint64_t)ceil(q * (double)s->hits);
  if (want < 1)
    want = 1;
  uint64_t acc = 0;
  for (int b = 0; b < COLL_LIBRARY_HIST; b++) {
    acc += s->hist[b];
    if (acc >= want) {
      sim_time_ps edge = (sim_time_ps)(UINT64_C(1) << (b + 1)) * SIM_PS_PER_NS;
      return MIN(edge, s->blocked_max_ps);
    }
  }
  return s->blocked_max_ps;
}

/* ---- registration state (§4.2-4.4) ------------------------------------- */

/* Ready times may be negative (allocations before the trace's time 0). */
#define REG_UNMAPPED INT64_MIN

typedef struct {
  uint64_t bytes;
  int n;
  sim_time_ps alloc_at;  /* last (re)allocation, -1 unknown */
  uint32_t uses;
  sim_time_ps last_use;
  sim_time_ps *ready;   /* per member; REG_UNMAPPED: not mapped, not queued */
  uint64_t *mapped;     /* per member: the bytes of the region it mapped (JIT's key, with owner and va) */
} reg_buf;

struct coll_library_reg {
  coll_library_params p;
  int n_ranks;
  sim_time_ps *mapper_free; /* per global rank: the mapper is busy until then */
  GHashTable *bufs;         /* uint64 key -> reg_buf* */
};

static void reg_buf_free(gpointer v)
{
  reg_buf *b = v;
  g_free(b->ready);
  g_free(b->mapped);
  g_free(b);
}

coll_library_reg *coll_library_reg_new(const coll_library_params *p, int n_ranks_total)
{
  coll_library_reg *r = g_new0(coll_library_reg, 1);
  r->p = *p;
  r->n_ranks = n_ranks_total;
  /* Mappers idle since "forever": synthetic allocations may lie before
   * the trace's time 0 (buffers allocated before profiling began). */
  r->mapper_free = g_new(sim_time_ps, n_ranks_total > 0 ? n_ranks_total : 1);
  for (int i = 0; i < (n_ranks_total > 0 ? n_ranks_total : 1); i++)
    r->mapper_free[i] = -(INT64_C(1) << 62);
  r->bufs = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, reg_buf_free);
  return r;
}

void coll_library_reg_free(coll_library_reg *r)
{
  if (r == NULL)
    return;
  g_hash_table_destroy(r->bufs);
  g_free(r->mapper_free);
  g_free(r);
}

static reg_buf *reg_get(coll_library_reg *r, uint64_t buffer, uint64_t bytes, int n, gboolean *created)
{
  reg_buf *b = g_hash_table_lookup(r->bufs, &buffer);
  *created = FALSE;
  if (b == NULL || b->n != n) {
    b = g_new0(reg_buf, 1);
    b->n = n;
    b->bytes = bytes;
    b->alloc_at = REG_UNMAPPED;
    b->ready = g_new(sim_time_ps, n);
    b->mapped = g_new0(uint64_t, n);
    for (int i = 0; i < n; i++)
      b->ready[i] = REG_UNMAPPED;
    uint64_t *k = g_new(uint64_t, 1);
    *k = buffer;
    g_hash_table_replace(r->bufs, k, b);
    *created = TRUE;
  }
  return b;
}

/* Queues the n - 1 map jobs of one member on its rank's mapper at t0 and
 * returns when they are done. */
static sim_time_ps reg_enqueue(coll_library_reg *r, int rank, int n, uint64_t bytes, sim_time_ps t0)
{
  g_assert(rank >= 0 && rank < r->n_ranks);
  sim_time_ps start = MAX(r->mapper_free[rank], t0);
  sim_time_ps done = start + (sim_time_ps)(n > 1 ? n - 1 : 0) * coll_library_job_ps(&r->p, bytes);
  r->mapper_free[rank] = done;
  return done;
}

void coll_library_reg_alloc(coll_library_reg *r, uint64_t buffer, uint64_t bytes, const int *ranks, int n,
                            sim_time_ps t)
{
  gboolean created;
  reg_buf *b = reg_get(r, buffer, bytes, n, &created);
  b->bytes = bytes;
  b->alloc_at = t;
  for (int i = 0; i < n; i++) {
    if (r->p.reg == COLL_REG_ROA)
      b->ready[i] = reg_enqueue(r, ranks[i], n, bytes, t + r->p.t_exp + r->p.t_meta);
    else
      b->ready[i] = REG_UNMAPPED;
  }
}

sim_time_ps coll_library_reg_use(coll_library_reg *r, uint64_t buffer, uint64_t bytes, int member, int rank, int n,
                                 sim_time_ps t, coll_library_stats *stats)
{
  if (r->p.reg != COLL_REG_JIT && r->p.reg != COLL_REG_ROA)
    return t;
  gboolean created;
  reg_buf *b = reg_get(r, buffer, bytes, n, &created);
  g_assert(member >= 0 && member < n);
  stats->ops++;
  if (r->p.reg == COLL_REG_JIT) {
    /* Each member keys its own mapping: a size change is a miss for every
     * member, not only for the first one to see it. */
    if (b->ready[member] != REG_UNMAPPED && b->mapped[member] == bytes)
      return MAX(t, b->ready[member]);
    /* Cache miss: a new region (owner, va, bytes). */
    b->bytes = bytes;
    b->mapped[member] = bytes;
    b->ready[member] = reg_enqueue(r, rank, n, bytes, t + r->p.t_exp + r->p.t_meta);
    stats->jit_misses++;
    stats->jobs += (uint64_t)(n - 1);
    stats->reg_critical_ps += b->ready[member] - t;
    return b->ready[member];
  }
  /* ROA: Phase-2 readiness barrier; never enqueued => enqueue now. */
  if (b->ready[member] == REG_UNMAPPED)
    b->ready[member] = reg_enqueue(r, rank, n, bytes, t + r->p.t_exp + r->p.t_meta);
  sim_time_ps blocked = MAX(0, b->ready[member] - t);
  coll_library_stats_add_blocked(stats, blocked);
  stats->reg_critical_ps += blocked;
  return t + blocked + r->p.t_chk;
}

gboolean coll_library_reg_known(coll_library_reg *r, uint64_t buffer, uint64_t bytes, const int *ranks, int n,
                                sim_time_ps t, coll_library_stats *stats)
{
  if (r->p.reg != COLL_REG_JIT && r->p.reg != COLL_REG_ROA)
    return FALSE;
  reg_buf *b = g_hash_table_lookup(r->bufs, &buffer);
  if (b != NULL && b->n == n && b->alloc_at == t)
    return FALSE;
  coll_library_reg_alloc(r, buffer, bytes, ranks, n, t);
  if (r->p.reg == COLL_REG_ROA)
    stats->jobs += (uint64_t)n * (uint64_t)(n - 1);
  return TRUE;
}

gboolean coll_library_reg_synthetic(coll_library_reg *r, uint64_t buffer, uint64_t bytes, const int *ranks,
                                    int n, sim_time_ps t, coll_library_stats *stats)
{
  if (r->p.reg != COLL_REG_JIT && r->p.reg != COLL_REG_ROA)
    return FALSE;
  reg_buf *b = g_hash_table_lookup(r->bufs, &buffer);
  gboolean happened = FALSE;
  if (b == NULL || b->n != n) {
    coll_library_reg_alloc(r, buffer, bytes, ranks, n, t - r->p.gap_min); /* may precede time 0 */
    b = g_hash_table_lookup(r->bufs, &buffer);
    if (r->p.reg == COLL_REG_ROA)
      stats->jobs += (uint64_t)n * (uint64_t)(n - 1);
    happened = TRUE;
  } else {
    uint64_t st = wisp_mix64(r->p.seed ^ wisp_mix64(buffer ^ wisp_mix64(b->uses)));
    double u = coll_library_uniform(&st);
    if (u < r->p.p_remap) {
      double v = coll_library_uniform(&st);
      sim_time_ps gap = r->p.gap_remap_lo +
                        (sim_time_ps)llround(v * (double)(r->p.gap_remap_hi - r->p.gap_remap_lo));
      sim_time_ps at = MAX(t - gap, b->last_use);
      uint32_t uses = b->uses;
      coll_library_reg_alloc(r, buffer, bytes, ranks, n, at);
      b = g_hash_table_lookup(r->bufs, &buffer);
      b->uses = uses;
      if (r->p.reg == COLL_REG_ROA)
        stats->jobs += (uint64_t)n * (uint64_t)(n - 1);
      stats->remaps++;
      happened = TRUE;
    }
  }
  b->uses++;
  b->last_use = t;
  return happened;
}
