/* supernode_cost.c: the supernode family's closed forms (mode A,
 * doc/libraries.md): the tiered fabric view of a group, the cost of one
 * operation per operator (ring, halving-doubling, full mesh with its
 * fan-out throughput), the per-rank data volumes, and the interference
 * of collectives with compute on the same rank (§7).  Cost: O(n) per
 * fabric, O(1) to O(n) per operation.
 * References to "§" are sections of ../shared/reference/supernode-model.md.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "collectives/coll_facts.h"
#include "collectives/libraries/supernode/coll_library_internal.h"

const char *coll_libop_name(coll_libop op)
{
  switch (op) {
  case COLL_LIBOP_RING: return "ring";
  case COLL_LIBOP_RHD: return "rhd";
  case COLL_LIBOP_FULL_MESH: return "full_mesh";
  }
  return "?";
}

static coll_tier dim_tier(int d)
{
  return d >= COLL_TIER_SCALEOUT ? COLL_TIER_SCALEOUT : (coll_tier)d;
}

coll_library_fabric *coll_library_fabric_new(const topo *t, const coll_library_params *p, const int *ranks, int n)
{
  coll_library_fabric *f = g_new0(coll_library_fabric, 1);
  f->n = n;
  f->nd = topo_n_dims(t);
  f->coord = g_new(int, (size_t)n * (size_t)(f->nd > 0 ? f->nd : 1));
  for (int i = 0; i < n; i++)
    for (int d = 0; d < f->nd; d++)
      f->coord[(size_t)i * f->nd + d] = topo_rank_coord(t, ranks[i], d);
  /* Per-tier cost from the topology: rank 0 to the first rank that
   * differs from it in that dimension only.  O(ranks * dims) once. */
  int nr = topo_n_ranks(t);
  for (int d = 0; d < f->nd && d <= COLL_TIER_SCALEOUT; d++) {
    for (int r = 1; r < nr; r++) {
      gboolean only = TRUE;
      for (int e = 0; e < f->nd && only; e++)
        if ((topo_rank_coord(t, r, e) != topo_rank_coord(t, 0, e)) != (e == d))
          only = FALSE;
      if (only) {
        topo_route_cost(t, 0, r, &f->alpha[d], &f->beta[d]);
        break;
      }
    }
  }
  for (int k = 0; k < COLL_TIER_COUNT; k++) {
    if (p->alpha[k] > 0)
      f->alpha[k] = p->alpha[k];
    if (p->beta[k] > 0)
      f->beta[k] = p->beta[k];
    if (f->beta[k] == 0) /* tier absent from the topology: never used, keep it finite */
      f->beta[k] = p->b_port;
  }
  return f;
}

void coll_library_fabric_free(coll_library_fabric *f)
{
  if (f == NULL)
    return;
  g_free(f->coord);
  g_free(f);
}

coll_tier coll_library_fabric_tier(const coll_library_fabric *f, int a, int b)
{
  for (int d = f->nd - 1; d >= 0; d--)
    if (f->coord[(size_t)a * f->nd + d] != f->coord[(size_t)b * f->nd + d])
      return dim_tier(d);
  return COLL_TIER_D2D;
}

sim_time_ps coll_library_fabric_alpha(const coll_library_fabric *f, coll_tier t)
{
  return f->alpha[t];
}

wisp_bw_Bps coll_library_fabric_beta(const coll_library_fabric *f, coll_tier t)
{
  return f->beta[t];
}

/* ---- mode A operators (§5) --------------------------------------------- */

coll_libop coll_library_default_op(const coll_library_params *p, et_coll_type type)
{
  if (p->kind == COLL_LIBRARY_STRATACL || type == ET_COLL_ALL_TO_ALL || type == ET_COLL_BROADCAST)
    return COLL_LIBOP_FULL_MESH;
  if (type == ET_COLL_ALL_REDUCE)
    return COLL_LIBOP_RHD;   /* [ASSUMPTION] §5.1 */
  return COLL_LIBOP_RING;    /* [sw] */
}

/* Ring over the members in communicator order: mean hop alpha, minimum
 * hop beta (§5.2).  O(n). */
static void ring_hops(const coll_library_fabric *f, sim_time_ps *alpha_mean, wisp_bw_Bps *beta_min)
{
  sim_time_ps sum = 0;
  wisp_bw_Bps bmin = 0;
  for (int i = 0; i < f->n; i++) {
    coll_tier t = coll_library_fabric_tier(f, i, (i + 1) % f->n);
    sum += f->alpha[t];
    if (bmin == 0 || f->beta[t] < bmin)
      bmin = f->beta[t];
  }
  *alpha_mean = (sum + f->n / 2) / f->n;
  *beta_min = bmin;
}

/* Ring with `steps` steps of `piece` bytes. */
static void ring_cost(const coll_library_params *p, const coll_library_fabric *f, int steps, uint64_t piece,
                      coll_library_cost *c)
{
  sim_time_ps am;
  wisp_bw_Bps bm;
  ring_hops(f, &am, &bm);
  c->sync_ps = (sim_time_ps)steps * (p->sigma_sig + am);
  c->alg_ps = c->sync_ps + (sim_time_ps)steps * wisp_transfer_ps(piece, bm);
}

/* Recursive halving then doubling, far partner first; each step's tier is
 * the worst over members.  Needs a power-of-two n (else ring). */
static void rhd_cost(const coll_library_params *p, const coll_library_fabric *f, uint64_t m, coll_library_cost *c)
{
  int n = f->n;
  c->sync_ps = 0;
  c->alg_ps = 0;
  uint64_t size = m;
  for (int d = n / 2; d >= 1; d /= 2) {
    size = (size + 1) / 2;
    coll_tier t = COLL_TIER_D2D;
    for (int a = 0; a < n; a++)
      t = MAX(t, coll_library_fabric_tier(f, a, a ^ d));
    sim_time_ps fixed = p->sigma_sig + f->alpha[t];
    c->sync_ps += 2 * fixed;
    c->alg_ps += 2 * (fixed + wisp_transfer_ps(size, f->beta[t]));
  }
}

double coll_library_g_inf(const coll_library_params *p, int n)
{
  double g = p->g_inf0 + p->g_inf_slope * log2((double)n / 32.0);
  return CLAMP(g, 0.0, 0.99);
}

wisp_bw_Bps coll_library_fm_bw(const coll_library_params *p, int n, wisp_bw_Bps beta_ring_min, int n_ub, int fanout,
                               uint64_t m)
{
  g_assert(n_ub >= 1 && fanout >= n_ub);
  double g = coll_library_g_inf(p, n);
  double b_inf = (1.0 - g) * (double)beta_ring_min * (double)n_ub / (double)fanout;
  double bfm = b_inf + ((double)p->b_port - b_inf) * exp(-(double)m / (double)p->s_c);
  wisp_bw_Bps bw = (wisp_bw_Bps)llround(bfm);
  return bw > 0 ? bw : 1;
}

/* Full mesh with per-peer message m at every member (§5.2); the worst
 * member decides.  Members are scanned exhaustively up to 512, beyond
 * that the first and last member (symmetric placements).  The core term
 * (partitioner makespan) is computed for member 0 and added to the max
 * only with core_term (fm_core_term, or a2a_core_term for all-to-all, as
 * in the event model). */
static void fm_cost(const coll_library_params *p, const coll_library_fabric *f, uint64_t m, gboolean core_term,
                    coll_library_cost *c)
{
  int n = f->n;
  sim_time_ps am;
  wisp_bw_Bps bring;
  ring_hops(f, &am, &bring);
  sim_time_ps worst = 0, worst_fixed = 0;
  for (int a = 0; a < n; a++) {
    if (n > 512 && a != 0 && a != n - 1)
      continue;
    int n_ub = 0, n_sio = 0;
    coll_tier tmax = COLL_TIER_D2D;
    for (int b = 0; b < n; b++) {
      if (b == a)
        continue;
      coll_tier t = coll_library_fabric_tier(f, a, b);
      if (t == COLL_TIER_D2D)
        n_sio++;
      else
        n_ub++;
      if (f->alpha[t] > f->alpha[tmax])
        tmax = t;
    }
    sim_time_ps amax = f->alpha[tmax];
    sim_time_ps fixed = p->sigma_sig + 2 * amax; /* sigma_fm + alpha_max */
    sim_time_ps body = wisp_transfer_ps((uint64_t)n_sio * m, p->b_sio);
    if (n_ub > 0) {
      wisp_bw_Bps bw = coll_library_fm_bw(p, n, bring, n_ub, n - 1, m);
      body = MAX(body, wisp_transfer_ps((uint64_t)n_ub * m, bw));
    }
    if (fixed + body > worst) {
      worst = fixed + body;
      worst_fixed = fixed;
    }
  }
  /* Partitioned core work of member 0. */
  coll_library_peer_load *ld = g_new(coll_library_peer_load, n > 1 ? n - 1 : 1);
  int k = 0;
  for (int b = 1; b < n; b++)
    ld[k++] = (coll_library_peer_load){ b, coll_library_fabric_tier(f, 0, b), m };
  coll_library_partition part;
  coll_library_partition_run(p, f, ld, k, p->cores, p->balanced, &part);
  g_free(ld);
  c->core_makespan_ps = part.makespan_ps;
  c->core_spread = part.spread;
  if (core_term && part.makespan_ps + worst_fixed > worst)
    worst = part.makespan_ps + worst_fixed;
  c->sync_ps = worst_fixed;
  c->alg_ps = worst;
}

gboolean coll_library_interferes(const coll_library_params *p)
{
  return coll_library_has_engine(p->kind) && (p->kappa_core > 0 || p->kappa_hbm > 0 || p->delta_sdma > 0);
}

double coll_library_interference(const coll_library_params *p, int cores, uint64_t stage_Bps, int n_sdma)
{
  if (!coll_library_has_engine(p->kind))
    return 0.0;
  double d = 0.0;
  if (cores > 0 && p->c_aiv > 0)
    d += p->kappa_core * (double)MIN(cores, p->c_aiv) / (double)p->c_aiv;
  if (stage_Bps > 0 && p->b_hbm > 0)
    d += p->kappa_hbm * (double)MIN(stage_Bps, p->b_hbm) / (double)p->b_hbm;
  if (n_sdma > 0)
    d += (double)n_sdma * p->delta_sdma;
  return d;
}

gboolean coll_library_io_bytes(et_coll_type type, uint64_t m, int n, uint64_t *in_b, uint64_t *out_b,
                               uint64_t *per_peer)
{
  uint64_t nn = n > 0 ? (uint64_t)n : 1;
  switch (type) {
  case ET_COLL_ALL_GATHER:
  case ET_COLL_GATHER:
    *in_b = m;
    *out_b = nn * m;
    *per_peer = m;
    return TRUE;
  case ET_COLL_SCATTER:
    *in_b = nn * m;
    *out_b = m;
    *per_peer = m;
    return TRUE;
  case ET_COLL_REDUCE_SCATTER:
  case ET_COLL_REDUCE_SCATTER_BLOCK:
    *in_b = m;
    *out_b = m / nn;
    *per_peer = (m + nn - 1) / nn;
    return TRUE;
  case ET_COLL_ALL_REDUCE:
  case ET_COLL_ALL_TO_ALL:
  case ET_COLL_ALL_TO_ALLV:
    *in_b = m;
    *out_b = m;
    *per_peer = (m + nn - 1) / nn;
    return TRUE;
  case ET_COLL_BROADCAST:
  case ET_COLL_REDUCE:
    *in_b = m;
    *out_b = m;
    *per_peer = m;
    return TRUE;
  default:
    return FALSE;
  }
}

gboolean coll_library_op_cost(const coll_library_params *p, const coll_library_fabric *f, et_coll_type type,
                              uint64_t m, coll_libop op, sim_time_ps reg_ps, coll_library_cost *out)
{
  memset(out, 0, sizeof *out);
  int n = f->n;
  if (n < 2)
    return FALSE;
  uint64_t in_b, out_b, per_peer;
  if (!coll_library_io_bytes(type, m, n, &in_b, &out_b, &per_peer))
    return FALSE;
  if (type == ET_COLL_ALL_TO_ALL || type == ET_COLL_BROADCAST)
    op = COLL_LIBOP_FULL_MESH; /* the only operator of mode A for these */
  else if (type != ET_COLL_ALL_GATHER && type != ET_COLL_REDUCE_SCATTER &&
           type != ET_COLL_REDUCE_SCATTER_BLOCK && type != ET_COLL_ALL_REDUCE)
    return FALSE;
  if (op == COLL_LIBOP_RHD && (type != ET_COLL_ALL_REDUCE || !wisp_is_pow2(n)))
    op = COLL_LIBOP_RING;
  out->op = op;
  switch (op) {
  case COLL_LIBOP_RING:
    if (type == ET_COLL_ALL_GATHER)
      ring_cost(p, f, n - 1, m, out);
    else if (type == ET_COLL_ALL_REDUCE)
      ring_cost(p, f, 2 * (n - 1), per_peer, out);
    else
      ring_cost(p, f, n - 1, per_peer, out);
    break;
  case COLL_LIBOP_RHD:
    rhd_cost(p, f, m, out);
    break;
  case COLL_LIBOP_FULL_MESH:
    if (type == ET_COLL_BROADCAST) {
      /* Every member loads the whole buffer from the root: the root's UB
       * port serves n - 1 readers. */
      fm_cost(p, f, m, p->fm_core_term, out);
    } else if (type == ET_COLL_ALL_REDUCE) {
      fm_cost(p, f, per_peer, p->fm_core_term, out); /* RS then AG of M/N: twice (§5.2) */
      out->alg_ps *= 2;
      out->sync_ps *= 2;
      out->core_makespan_ps *= 2;
    } else {
      fm_cost(p, f, per_peer, type == ET_COLL_ALL_TO_ALL ? p->a2a_core_term : p->fm_core_term, out);
    }
    break;
  }
  out->time_ps = out->alg_ps;
  /* Staging (§5.4): copy-in + copy-out through the bounded buffer. */
  if (p->reg == COLL_REG_STAGING) {
    out->staging_bytes = in_b + out_b;
    uint64_t big = MAX(in_b, out_b);
    out->staging_rounds = (int)(big == 0 ? 1 : (big - 1) / p->buffsize + 1);
    sim_time_ps copy = wisp_transfer_ps(out->staging_bytes, p->b_copy);
    out->staging_ps = 2 * p->t_copy0 + coll_library_ps_from_us((double)copy / 1e6 * (1.0 - p->overlap));
    out->time_ps += out->staging_ps + (sim_time_ps)(out->staging_rounds - 1) * out->sync_ps;
  }
  out->reg_ps = reg_ps;
  out->time_ps += reg_ps;
  /* Engine (§7). */
  sim_time_ps busy = out->time_ps;
  double occ = (double)p->cores * (double)busy / 1e6;
  if (p->sdma) {
    uint64_t n_desc = (uint64_t)(n - 1) * (per_peer == 0 ? 1 : (per_peer - 1) / p->desc_bytes + 1);
    if (type == ET_COLL_ALL_REDUCE)
      n_desc *= 2;
    uint64_t rounds = (n_desc + (uint64_t)p->cores - 1) / (uint64_t)p->cores;
    out->sdma_submit_ps = (sim_time_ps)rounds * p->t_desc + p->t_db;
    sim_time_ps fixed = out->sync_ps;
    sim_time_ps body = out->alg_ps - fixed;
    sim_time_ps slowed = coll_library_ps_from_us((double)body / 1e6 * (1.0 + p->eps_sdma));
    out->time_ps += out->sdma_submit_ps + (slowed - body) + (p->sdma_poll ? 0 : p->t_notify);
    occ = (double)p->cores * (double)out->sdma_submit_ps / 1e6;
    if (p->sdma_poll)
      occ += (double)p->c_poll * (double)out->time_ps / 1e6;
  }
  out->core_occupancy_us = occ;
  double secs = (double)out->time_ps / 1e12;
  uint64_t s_alg = coll_algbw_bytes(type, m, n);
  out->busbw_GBps = secs > 0 ? (double)s_alg / secs / 1e9 * coll_busbw_factor(type, n) : 0.0;
  return TRUE;
}
