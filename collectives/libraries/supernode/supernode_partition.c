/* supernode_partition.c: the supernode family's core partitioning
 * (§6): per-peer loads cut into units and assigned to a rank's cores (LPT
 * with a fan-out cap, or naive fixed groups), with each load's finish
 * time; the deterministic draws and the MoE dispatch generator used to
 * calibrate it.
 * References to "§" are sections of ../shared/reference/supernode-model.md.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/coll_facts.h"
#include "collectives/libraries/supernode/coll_library_internal.h"

/* ---- partitioning (§6) ------------------------------------------------- */

sim_time_ps coll_library_unit_ps(const coll_library_params *p, const coll_library_fabric *f, coll_tier t,
                                 uint64_t bytes)
{
  wisp_bw_Bps core = f->beta[t] / (wisp_bw_Bps)p->c_sat;
  return f->alpha[t] + wisp_transfer_ps(bytes, core > 0 ? core : 1);
}

typedef struct {
  sim_time_ps cost;
  uint32_t j;
  int peer;      /* index into loads */
} unit_rec;

static int unit_cmp(const void *a, const void *b)
{
  const unit_rec *x = a, *y = b;
  if (x->cost != y->cost)
    return x->cost > y->cost ? -1 : 1;
  if (x->j != y->j)
    return x->j < y->j ? -1 : 1;
  return (x->peer > y->peer) - (x->peer < y->peer);
}

/* Units per partition at most (65536: 32 GiB of 512 KiB units per member
 * and step).  The event model partitions every full-mesh step of every
 * simulated collective, so the bound keeps a 512-member 1 GiB all-gather
 * (511 GiB per member) at about 1.6 M core probes. */
#define PART_MAX_UNITS UINT64_C(65536)

static void partition_summary(const sim_time_ps *load, int cores, coll_library_partition *out)
{
  out->makespan_ps = 0;
  out->min_ps = 0;
  out->active = 0;
  for (int c = 0; c < cores; c++) {
    if (load[c] <= 0)
      continue;
    if (out->active == 0 || load[c] < out->min_ps)
      out->min_ps = load[c];
    out->makespan_ps = MAX(out->makespan_ps, load[c]);
    out->active++;
  }
  out->spread = out->makespan_ps > 0 ? (double)(out->makespan_ps - out->min_ps) / (double)out->makespan_ps : 0.0;
}

void coll_library_partition_run(const coll_library_params *p, const coll_library_fabric *f,
                                const coll_library_peer_load *loads, int n_loads, int cores, gboolean balanced,
                                coll_library_partition *out)
{
  coll_library_partition_finish(p, f, loads, n_loads, cores, balanced, out, NULL);
}

void coll_library_partition_finish(const coll_library_params *p, const coll_library_fabric *f,
                                   const coll_library_peer_load *loads, int n_loads, int cores, gboolean balanced,
                                   coll_library_partition *out, sim_time_ps *finish)
{
  g_assert(cores >= 1);
  memset(out, 0, sizeof *out);
  sim_time_ps *load = g_new0(sim_time_ps, cores);
  if (finish != NULL)
    memset(finish, 0, sizeof *finish * (size_t)(n_loads > 0 ? n_loads : 0));
  uint64_t s = p->unit_bytes;
  uint64_t n_units = 0, total = 0;
  for (int i = 0; i < n_loads; i++)
    total += loads[i].bytes;
  /* Bound the work: beyond PART_MAX_UNITS units the unit grows (a
   * coarser partition of gigantic inputs; the R-PART targets stay below:
   * 3968 units for 31 x 128 MiB). */
  if (total / s > PART_MAX_UNITS)
    s = total / PART_MAX_UNITS + 1;
  for (int i = 0; i < n_loads; i++)
    n_units += loads[i].bytes == 0 ? 0 : (loads[i].bytes - 1) / s + 1;
  out->units = n_units;
  if (balanced) {
    unit_rec *u = g_new(unit_rec, n_units ? n_units : 1);
    size_t k = 0;
    for (int i = 0; i < n_loads; i++) {
      uint64_t left = loads[i].bytes;
      for (uint32_t j = 0; left > 0; j++) {
        uint64_t b = MIN(s, left);
        left -= b;
        u[k++] = (unit_rec){ coll_library_unit_ps(p, f, loads[i].tier, b), j, i };
      }
    }
    qsort(u, k, sizeof *u, unit_cmp);
    uint32_t *stripe = g_new0(uint32_t, cores);
    /* fan[(stripe, peer)]: cores whose stripe-th unit reads that peer. */
    GHashTable *fan = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (size_t x = 0; x < k; x++) {
      int cap = p->fanout_cap[loads[u[x].peer].tier];
      int best = -1, any = 0;
      for (int c = 0; c < cores; c++) {
        if (load[c] < load[any])
          any = c;
        if (cap > 0) {
          guintptr key = ((guintptr)stripe[c] * (guintptr)(n_loads + 1) + (guintptr)u[x].peer) + 1;
          if (GPOINTER_TO_UINT(g_hash_table_lookup(fan, (gpointer)key)) >= (guint)cap)
            continue;
        }
        if (best < 0 || load[c] < load[best])
          best = c;
      }
      int c = best >= 0 ? best : any;
      guintptr key = ((guintptr)stripe[c] * (guintptr)(n_loads + 1) + (guintptr)u[x].peer) + 1;
      guint cnt = GPOINTER_TO_UINT(g_hash_table_lookup(fan, (gpointer)key));
      g_hash_table_insert(fan, (gpointer)key, GUINT_TO_POINTER(cnt + 1));
      load[c] += u[x].cost;
      stripe[c]++;
      if (finish != NULL)
        finish[u[x].peer] = MAX(finish[u[x].peer], load[c]);
    }
    g_hash_table_destroy(fan);
    g_free(stripe);
    g_free(u);
  } else {
    /* Naive (§6): a fixed core group per peer; a core serves its peers
     * in peer order. */
    int np = n_loads;
    for (int i = 0; i < np; i++) {
      if (cores >= np) {
        int g = 0;
        for (int c = i; c < cores; c += np)
          g++;
        int idx = 0;
        for (int c = i; c < cores; c += np, idx++) {
          uint64_t share = coll_piece(loads[i].bytes, g, idx);
          for (uint64_t left = share; left > 0;) {
            uint64_t b = MIN(s, left);
            left -= b;
            load[c] += coll_library_unit_ps(p, f, loads[i].tier, b);
          }
          if (finish != NULL && share > 0)
            finish[i] = MAX(finish[i], load[c]);
        }
      } else {
        int c = i % cores;
        for (uint64_t left = loads[i].bytes; left > 0;) {
          uint64_t b = MIN(s, left);
          left -= b;
          load[c] += coll_library_unit_ps(p, f, loads[i].tier, b);
        }
        if (finish != NULL && loads[i].bytes > 0)
          finish[i] = load[c];
      }
    }
  }
  partition_summary(load, cores, out);
  double U = (double)n_units;
  if (U > 0)
    out->policy_ps = balanced ? coll_library_ps_from_us(p->k_pol_ns * (U * log2(U) + U * log2((double)cores)) / 1e3) : 0;
  g_free(load);
}

/* ---- deterministic random numbers -------------------------------------- */

double coll_library_uniform(uint64_t *state)
{
  *state = wisp_mix64(*state);
  return (double)(*state >> 11) * (1.0 / 9007199254740992.0);
}

/* Expert popularity (reference §6/§8): w_e ~ 1 / rank(e)^s over a random
 * permutation drawn from *st; writes the cumulative weights (experts
 * entries) and returns their total.  O(E). */
static double moe_popularity(int experts, double zipf_s, uint64_t *st, double *cdf)
{
  int *perm = g_new(int, experts);
  for (int e = 0; e < experts; e++)
    perm[e] = e;
  for (int e = experts - 1; e > 0; e--) {
    int j = (int)(coll_library_uniform(st) * (double)(e + 1));
    int tmp = perm[e];
    perm[e] = perm[j];
    perm[j] = tmp;
  }
  double acc = 0;
  for (int e = 0; e < experts; e++) {
    acc += 1.0 / pow((double)(perm[e] + 1), zipf_s);
    cdf[e] = acc;
  }
  g_free(perm);
  return acc;
}

/* Routes `tokens` tokens of member src: each samples top_k distinct
 * experts by weight (stream *st) and adds token_bytes to bytes[m] once per
 * distinct destination member m != src.  bytes has n entries (added to).
 * O(T k (k + log E)). */
static void moe_route(const double *cdf, double acc, int experts, int n, int src, int tokens, int top_k,
                      uint64_t token_bytes, uint64_t *st, uint64_t *bytes)
{
  int *last = g_new(int, n);
  int *chosen = g_new(int, top_k);
  for (int m = 0; m < n; m++)
    last[m] = -1;
  int per = experts / n;
  for (int tk = 0; tk < tokens; tk++) {
    int got = 0;
    while (got < top_k) {
      double x = coll_library_uniform(st) * acc;
      int lo = 0, hi = experts - 1;
      while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (cdf[mid] > x)
          hi = mid;
        else
          lo = mid + 1;
      }
      gboolean dup = FALSE;
      for (int i = 0; i < got; i++)
        dup = dup || chosen[i] == lo;
      if (!dup)
        chosen[got++] = lo;
    }
    for (int i = 0; i < top_k; i++) {
      int m = chosen[i] / per;
      if (m != src && last[m] != tk) {
        last[m] = tk;
        bytes[m] += token_bytes;
      }
    }
  }
  g_free(last);
  g_free(chosen);
}

void coll_library_moe_dispatch(const coll_library_fabric *f, int src, int tokens, int top_k, int experts,
                               double zipf_s, uint64_t token_bytes, uint64_t seed, coll_library_peer_load *out)
{
  int n = f->n;
  g_assert(experts >= n && experts % n == 0 && top_k <= experts);
  uint64_t st = seed;
  double *cdf = g_new(double, experts);
  double acc = moe_popularity(experts, zipf_s, &st, cdf);
  uint64_t *bytes = g_new0(uint64_t, n);
  moe_route(cdf, acc, experts, n, src, tokens, top_k, token_bytes, &st, bytes);
  int k = 0;
  for (int m = 0; m < n; m++)
    if (m != src)
      out[k++] = (coll_library_peer_load){ m, coll_library_fabric_tier(f, src, m), bytes[m] };
  g_free(cdf);
  g_free(bytes);
}

void coll_library_moe_splits(int n, int tokens, int top_k, int experts, double zipf_s, uint64_t token_bytes,
                             uint64_t seed, gboolean combine, uint64_t *splits)
{
  g_assert(n >= 1 && experts >= n && experts % n == 0 && top_k >= 1 && top_k <= experts);
  uint64_t st = seed;
  double *cdf = g_new(double, experts);
  double acc = moe_popularity(experts, zipf_s, &st, cdf);
  uint64_t *row = g_new(uint64_t, n);
  memset(splits, 0, sizeof *splits * (size_t)n * (size_t)n);
  for (int a = 0; a < n; a++) {
    uint64_t sa = seed ^ wisp_mix64((uint64_t)a + 1);
    memset(row, 0, sizeof *row * (size_t)n);
    moe_route(cdf, acc, experts, n, a, tokens, top_k, token_bytes, &sa, row);
    for (int b = 0; b < n; b++) {
      if (combine)
        splits[(size_t)b * (size_t)n + (size_t)a] = row[b];
      else
        splits[(size_t)a * (size_t)n + (size_t)b] = row[b];
    }
  }
  g_free(row);
  g_free(cdf);
}
