/* coll_library.c: the communication-library model (see coll_library.h and
 * doc/libraries.md): parameters with provenance, the tiered fabric view of
 * a group, mode-A closed forms per operation, the registration state
 * machine with one FIFO mapper per rank, the synthetic buffer lifecycle,
 * LPT core partitioning with a fan-out cap, and the MoE dispatch generator
 * used to calibrate it.  References to "§" are sections of
 * ../shared/reference/supernode-model.md.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/coll_facts.h"
#include "collectives/libraries/coll_library_internal.h"
#include "collectives/libraries/coll_nccl.h"

/* ---- names ------------------------------------------------------------- */

static const char *const library_names[COLL_LIBRARY_COUNT] = { "nccl",    "hccl",             "hccl-zerocopy",
                                                                "stratacl", "cann-ep", "cann-ep-zerocopy",
                                                                "ideal" };

gboolean coll_library_has_engine(coll_library_kind k)
{
  return k != COLL_LIBRARY_NCCL && k != COLL_LIBRARY_IDEAL;
}

coll_library_kind coll_library_default_for(const topo *t)
{
  const cfg_doc *doc = t != NULL ? topo_config(t) : NULL;
  return doc != NULL && cfg_doc_format(doc) == CFG_FORMAT_ASTRA ? COLL_LIBRARY_IDEAL : COLL_LIBRARY_NCCL;
}

const char *coll_library_name(coll_library_kind k)
{
  return (int)k >= 0 && k < COLL_LIBRARY_COUNT ? library_names[k] : "?";
}

gboolean coll_library_from_name(const char *s, coll_library_kind *out)
{
  for (int i = 0; i < COLL_LIBRARY_COUNT; i++)
    if (g_ascii_strcasecmp(s, library_names[i]) == 0) {
      *out = (coll_library_kind)i;
      return TRUE;
    }
  if (g_ascii_strcasecmp(s, "hccl_zerocopy") == 0 || g_ascii_strcasecmp(s, "hccl-zc") == 0) {
    *out = COLL_LIBRARY_HCCL_ZEROCOPY;
    return TRUE;
  }
  if (g_ascii_strcasecmp(s, "cann_ep") == 0) {
    *out = COLL_LIBRARY_CANN_EP;
    return TRUE;
  }
  if (g_ascii_strcasecmp(s, "cann_ep_zerocopy") == 0 || g_ascii_strcasecmp(s, "cann-ep-zc") == 0) {
    *out = COLL_LIBRARY_CANN_EP_ZEROCOPY;
    return TRUE;
  }
  return FALSE;
}

static const char *const reg_names[] = { "none", "staging", "jit", "pool", "roa" };

const char *coll_reg_mode_name(coll_reg_mode m)
{
  return (int)m >= 0 && m <= COLL_REG_ROA ? reg_names[m] : "?";
}

const char *coll_libop_name(coll_libop op)
{
  switch (op) {
  case COLL_LIBOP_RING: return "ring";
  case COLL_LIBOP_RHD: return "rhd";
  case COLL_LIBOP_FULL_MESH: return "full_mesh";
  }
  return "?";
}

/* ---- parameters -------------------------------------------------------- */

typedef enum { PT_TIME, PT_BW, PT_SIZE, PT_DOUBLE, PT_INT, PT_BOOL, PT_REG, PT_U64, PT_NALGO, PT_PROTO } ptype;

typedef struct {
  coll_library_param_info info;
  ptype type;
  size_t off;
} pdesc;

#define P(name, type, field, unit, tag, meaning) \
  { { name, unit, tag, meaning }, type, offsetof(coll_library_params, field) }

/* The single list of parameters: config keys, units, provenance tags and
 * meaning (doc/libraries.md is generated from it by collbench
 * --library-params). */
static const pdesc params[] = {
  P("registration", PT_REG, reg, "mode", "[paper]", "staging, jit, pool, roa or none; default from the name (hccl, cann-ep staging; hccl-zerocopy, cann-ep-zerocopy jit; stratacl roa)"),
  P("alpha_d2d", PT_TIME, alpha[COLL_TIER_D2D], "time", "[paper] Table 1", "die-to-die latency; 0 = topology route cost (CM384: 0.2 us)"),
  P("alpha_intra", PT_TIME, alpha[COLL_TIER_INTRA], "time", "[paper] Table 1", "intra-node latency; 0 = topology (CM384: 0.7 us)"),
  P("alpha_inter", PT_TIME, alpha[COLL_TIER_INTER], "time", "[paper] Table 1", "inter-node latency; 0 = topology (CM384: 2.1 us)"),
  P("alpha_scaleout", PT_TIME, alpha[COLL_TIER_SCALEOUT], "time", "[ASSUMPTION]", "scale-out latency; 0 = topology"),
  P("beta_d2d", PT_BW, beta[COLL_TIER_D2D], "bandwidth", "[paper] Table 1", "die-to-die bandwidth; 0 = topology (CM384: 210 GB/s)"),
  P("beta_intra", PT_BW, beta[COLL_TIER_INTRA], "bandwidth", "[paper] Table 1", "intra-node bandwidth; 0 = topology (CM384: 170 GB/s)"),
  P("beta_inter", PT_BW, beta[COLL_TIER_INTER], "bandwidth", "[paper] Table 1", "inter-node bandwidth; 0 = topology (CM384: 150 GB/s)"),
  P("beta_scaleout", PT_BW, beta[COLL_TIER_SCALEOUT], "bandwidth", "[pub]", "scale-out bandwidth; 0 = topology"),
  P("b_port", PT_BW, b_port, "bandwidth", "[DERIVED] 392/2", "UB port per die and direction"),
  P("b_sio", PT_BW, b_sio, "bandwidth", "[paper]", "die-to-die SIO per direction"),
  P("c_aiv", PT_INT, c_aiv, "cores", "[paper]/[sw]", "AIV cores per die"),
  P("c_sat", PT_INT, c_sat, "cores", "[sw]", "cores that saturate a link (per-core rate beta/c_sat)"),
  P("cores", PT_INT, cores, "cores", "[sw]", "cores a communication op uses (24 of 48 reach 95 % of UB)"),
  P("sigma_sig", PT_TIME, sigma_sig, "time", "[FIT] 77 % ring sync at 64 KiB", "per-step synchronisation (valid 1.0-1.3 us)"),
  P("g_inf0", PT_DOUBLE, g_inf0, "ratio", "[paper] ~6 %", "large-message full-mesh deficit vs ring at 32 ranks"),
  P("g_inf_slope", PT_DOUBLE, g_inf_slope, "ratio/doubling", "[FIT] < 10 % at 256", "growth of the deficit per doubling of N"),
  P("s_c", PT_SIZE, s_c, "bytes", "[FIT] crossover (8, 16] MiB", "fan-out contention scale of B_fm(m)"),
  P("fm_core_term", PT_BOOL, fm_core_term, "bool", "[ASSUMPTION] (§5.3 omits it)", "add the per-core makespan (and policy time) to full-mesh all-gather, reduce-scatter, all-reduce"),
  P("a2a_core_term", PT_BOOL, a2a_core_term, "bool", "[ASSUMPTION] (§8 tells the MoE libraries apart by their partitioning)", "add the per-core makespan (and policy time) to full-mesh all-to-all(v): MoE dispatch/combine"),
  P("b_copy", PT_BW, b_copy, "bandwidth", "[FIT] > 30 % above 8 MiB", "staging copy bandwidth (hccl)"),
  P("buffsize", PT_SIZE, buffsize, "bytes", "[pub] HCCL_BUFFSIZE; [nccl] DEFAULT_BUFFSIZE", "staging buffer, larger ops run in rounds; nccl: NCCL_BUFFSIZE, the Simple protocol's buffer per connection (slices of buffsize / 8)"),
  P("overlap", PT_DOUBLE, overlap, "0..1", "[ASSUMPTION] hccl 0; [FIT] cann-ep 0.75 (+8.8 % HT / +25.3 % LL)", "share of staging copies hidden behind transfers (omega)"),
  P("t_copy0", PT_TIME, t_copy0, "time", "[ASSUMPTION] cann-ep 5 us; hccl 0 (§5.4 has none)", "fixed cost of each staging copy (copy-in, copy-out)"),
  P("t_exp", PT_TIME, t_exp, "time", "[ASSUMPTION] in Fig. 5a", "export a handle (once per registration)"),
  P("t_imp", PT_TIME, t_imp, "time", "[ASSUMPTION] in Fig. 5a", "import a handle (per peer region)"),
  P("t_map0", PT_TIME, t_map0, "time", "[ASSUMPTION] in Fig. 5a", "fixed part of one map job"),
  P("t_pte", PT_TIME, t_pte, "time", "[ASSUMPTION] in Fig. 5a", "page-table update per page"),
  P("page", PT_SIZE, page, "bytes", "[ASSUMPTION]", "mapping page size P_pg"),
  P("k_rdma", PT_DOUBLE, k_rdma, "ratio", "[sw]", "RDMA registration / UB registration"),
  P("t_meta", PT_TIME, t_meta, "time", "[paper]", "metadata broadcast: 7.5 us CPU-direct, 60 us NPU relay"),
  P("t_chk", PT_TIME, t_chk, "time", "[ASSUMPTION]", "readiness check at first use (ROA)"),
  P("gap_min", PT_TIME, gap_min, "time", "[paper]", "synthetic: allocation before first use"),
  P("p_remap", PT_DOUBLE, p_remap, "probability", "[paper] upper bound", "synthetic: remap probability per later use"),
  P("gap_remap_lo", PT_TIME, gap_remap_lo, "time", "[ASSUMPTION]", "synthetic: remap-to-use gap, lower bound"),
  P("gap_remap_hi", PT_TIME, gap_remap_hi, "time", "[ASSUMPTION]", "synthetic: remap-to-use gap, upper bound"),
  P("seed", PT_U64, seed, "integer", "-", "synthetic lifecycle seed"),
  P("balanced", PT_BOOL, balanced, "bool", "[paper]", "LPT core partitioning (stratacl) vs naive fixed core groups (the others)"),
  P("unit_bytes", PT_SIZE, unit_bytes, "bytes", "[FIT]", "partitioning unit S_t (all tiers)"),
  P("fanout_d2d", PT_INT, fanout_cap[COLL_TIER_D2D], "cores", "[ASSUMPTION]", "fan-out cap H (0 = unlimited)"),
  P("fanout_intra", PT_INT, fanout_cap[COLL_TIER_INTRA], "cores", "[ASSUMPTION]", "fan-out cap H, intra-node"),
  P("fanout_inter", PT_INT, fanout_cap[COLL_TIER_INTER], "cores", "[ASSUMPTION]", "fan-out cap H, inter-node"),
  P("fanout_scaleout", PT_INT, fanout_cap[COLL_TIER_SCALEOUT], "cores", "[ASSUMPTION]", "fan-out cap H, scale-out"),
  P("k_pol", PT_DOUBLE, k_pol_ns, "ns", "[DERIVED] 40 us run", "policy generation cost factor"),
  P("sdma", PT_BOOL, sdma, "bool", "[paper]", "offload transfers to SDMA (cores released)"),
  P("sdma_poll", PT_BOOL, sdma_poll, "bool", "[ASSUMPTION]", "completion mode I (c_poll cores poll) instead of II (notify)"),
  P("eps_sdma", PT_DOUBLE, eps_sdma, "ratio", "[paper] +9 %", "SDMA transfer slowdown"),
  P("t_desc", PT_TIME, t_desc, "time", "[DERIVED] 90 us / 3968 desc / 24 cores", "descriptor submission"),
  P("t_db", PT_TIME, t_db, "time", "[ASSUMPTION]", "doorbell"),
  P("t_notify", PT_TIME, t_notify, "time", "[ASSUMPTION]", "mode II notification to the consumer"),
  P("c_poll", PT_INT, c_poll, "cores", "[ASSUMPTION]", "cores polling in mode I"),
  P("desc_bytes", PT_SIZE, desc_bytes, "bytes", "[ASSUMPTION]", "bytes per SDMA descriptor"),
  P("kappa_core", PT_DOUBLE, kappa_core, "ratio", "[FIT] delta 0.13 at 24/48 cores", "compute slowdown per share of AIV cores a collective uses (cores / c_aiv)"),
  P("kappa_hbm", PT_DOUBLE, kappa_hbm, "ratio", "[FIT] +0.12 at 121 GB/s staging", "compute slowdown per share of b_hbm taken by staging copies"),
  P("b_hbm", PT_BW, b_hbm, "bandwidth", "[sw]/[CM384]", "HBM bandwidth per die"),
  P("delta_sdma", PT_DOUBLE, delta_sdma, "ratio", "[ASSUMPTION] 0.02-0.03", "residual compute slowdown of an SDMA collective (replaces the core term)"),
  P("sm", PT_INT, sm, "x10", "[pub] GPU datasheet", "nccl: GPU compute capability x 10 (70 Volta, 80 Ampere, 90 Hopper, 100 Blackwell); picks NCCL's per-architecture tables"),
  P("nvlink_link_bw", PT_BW, nvlink_link_bw, "bandwidth", "[pub] NVLink 3/4: 25 GB/s, NVLink 5: 50 GB/s per link", "nccl: raw rate of one NVLink link per direction; 0 = from sm"),
  P("algo", PT_NALGO, nccl_algo, "name", "-", "nccl: force an algorithm like NCCL_ALGO: ring, tree, nvls, nvls_tree or auto"),
  P("proto", PT_PROTO, nccl_proto, "name", "-", "nccl: force a protocol like NCCL_PROTO: LL, LL128, Simple or auto"),
  P("channels", PT_INT, channels, "channels", "[nccl] search.cc", "nccl: ring/tree channels; 0 = 16 on NVLink, 2 per 50 GB/s of NIC otherwise"),
  P("launch", PT_TIME, launch, "time", "[ASSUMPTION] order of a CUDA kernel launch", "nccl: host cost of launching one collective kernel; paid gpus_per_thread times"),
  P("gpus_per_thread", PT_INT, gpus_per_thread, "GPUs", "-", "nccl: GPUs one host thread drives (nccl-tests -g); their launches are serial"),
  P("net_overhead", PT_TIME, net_overhead, "time", "[nccl] getNetOverhead (x86 Intel)", "nccl: host cost of a network post (NCCL_NET_OVERHEAD)"),
  P("net_latency", PT_TIME, net_latency, "time", "[nccl] graph latencyInter (IB: 0)", "nccl: the network latency a net plugin reports to NCCL's tuner (graph latencyInter), added to every network hop of the tuner's cost model; steers the algorithm choice only (the topology's latencies are simulated)"),
};

size_t coll_library_param_count(void)
{
  return G_N_ELEMENTS(params);
}

const coll_library_param_info *coll_library_param_at(size_t i)
{
  g_return_val_if_fail(i < G_N_ELEMENTS(params), NULL);
  return &params[i].info;
}

void coll_library_params_default(coll_library_kind k, coll_library_params *p)
{
  memset(p, 0, sizeof *p);
  p->kind = k;
  switch (k) {
  case COLL_LIBRARY_HCCL: p->reg = COLL_REG_STAGING; break;
  case COLL_LIBRARY_HCCL_ZEROCOPY: p->reg = COLL_REG_JIT; break;
  case COLL_LIBRARY_STRATACL: p->reg = COLL_REG_ROA; break;
  case COLL_LIBRARY_CANN_EP: p->reg = COLL_REG_STAGING; break;
  case COLL_LIBRARY_CANN_EP_ZEROCOPY: p->reg = COLL_REG_JIT; break;
  default: p->reg = COLL_REG_NONE; break;
  }
  /* alpha/beta 0: from the topology (cloudmatrix384.yaml carries Table 1). */
  p->b_port = 196000000000u;           /* [DERIVED] 392 GB/s / 2 */
  p->b_sio = 210000000000u;            /* [paper] */
  p->c_aiv = 48;                       /* [paper]/[sw] */
  p->c_sat = 24;                       /* [sw] */
  p->cores = 24;                       /* [sw] */
  p->sigma_sig = 1 * SIM_PS_PER_US;    /* [FIT] */
  p->g_inf0 = 0.06;                    /* [paper] */
  p->g_inf_slope = 0.012;              /* [FIT] */
  p->s_c = 4u << 20;                   /* [FIT] */
  p->fm_core_term = FALSE;             /* [ASSUMPTION] as §5.3 */
  p->a2a_core_term = TRUE;             /* §8: CANN-EP-zc = full mesh + naive core groups, StrataCL + LPT */
  p->b_copy = 500000000000u;           /* [FIT] */
  /* [pub] HCCL_BUFFSIZE = 200 (HCCL's MB = 2^20 B); nccl: NCCL_BUFFSIZE,
   * [nccl] src/init.cc DEFAULT_BUFFSIZE (1 << 22). */
  p->buffsize = k == COLL_LIBRARY_NCCL ? 4u << 20 : 200u << 20;
  p->overlap = k == COLL_LIBRARY_CANN_EP ? 0.75 : 0.0; /* [FIT] §8 omega; hccl [ASSUMPTION] 0 */
  p->t_copy0 = k == COLL_LIBRARY_CANN_EP ? 5 * SIM_PS_PER_US : 0; /* [ASSUMPTION] §8; §5.4 has none */
  p->t_exp = 20 * SIM_PS_PER_US;       /* [ASSUMPTION] */
  p->t_imp = 80 * SIM_PS_PER_US;       /* [ASSUMPTION] */
  p->t_map0 = 5 * SIM_PS_PER_US;       /* [ASSUMPTION] */
  p->t_pte = 4600 * SIM_PS_PER_NS;     /* [ASSUMPTION] */
  p->page = 2u << 20;                  /* [ASSUMPTION] */
  p->k_rdma = 9.0;                     /* [sw] */
  p->t_meta = 7500 * SIM_PS_PER_NS;    /* [paper] CPU-direct */
  p->t_chk = 500 * SIM_PS_PER_NS;      /* [ASSUMPTION] */
  p->gap_min = 2600000 * SIM_PS_PER_US;/* [paper] 2.6 s */
  p->p_remap = 0.04;                   /* [paper] */
  p->gap_remap_lo = 10000 * SIM_PS_PER_US; /* [ASSUMPTION] 10 ms */
  p->gap_remap_hi = 50000 * SIM_PS_PER_US; /* [ASSUMPTION] 50 ms */
  p->seed = 1;
  p->balanced = k == COLL_LIBRARY_STRATACL; /* [paper] */
  p->unit_bytes = 512u << 10;          /* [FIT] */
  p->fanout_cap[COLL_TIER_D2D] = 0;    /* [ASSUMPTION] unlimited */
  p->fanout_cap[COLL_TIER_INTRA] = 8;  /* [ASSUMPTION] */
  p->fanout_cap[COLL_TIER_INTER] = 4;  /* [ASSUMPTION] */
  p->fanout_cap[COLL_TIER_SCALEOUT] = 4; /* [ASSUMPTION] */
  p->k_pol_ns = 0.6;                   /* [DERIVED] */
  p->sdma = FALSE;
  p->sdma_poll = FALSE;                /* [ASSUMPTION] mode II */
  p->eps_sdma = 0.09;                  /* [paper] */
  p->t_desc = 540 * SIM_PS_PER_NS;     /* [DERIVED] */
  p->t_db = 1 * SIM_PS_PER_US;         /* [ASSUMPTION] */
  p->t_notify = 5 * SIM_PS_PER_US;     /* [ASSUMPTION] */
  p->c_poll = 1;                       /* [ASSUMPTION] */
  p->desc_bytes = 1u << 20;            /* [ASSUMPTION] */
  /* Interference (§7).  kappa_hbm: 0.12 at the staging rate of a 32-rank
   * large AllGather through hccl, (1 + N) M / T with T = (N - 1) M /
   * beta_inter + (1 + N) M / b_copy: 33 / (31 / 150 + 33 / 500) GB/s =
   * 121.03 GB/s, 7.56 % of b_hbm, so 0.12 / 0.07564 = 1.586 [FIT]. */
  p->kappa_core = 0.26;                /* [FIT] 0.13 at 24 of 48 cores */
  p->kappa_hbm = 1.586;                /* [FIT] */
  p->b_hbm = 1600000000000u;           /* [sw]/[CM384] 1.6 TB/s per die */
  p->delta_sdma = 0.025;               /* [ASSUMPTION] middle of 0.02-0.03 */
  /* NCCL model (doc/collectives.md "The NCCL model"). */
  p->sm = 90;                          /* [ASSUMPTION] Hopper when the config does not say */
  p->nvlink_link_bw = 0;               /* from sm */
  p->nccl_algo = COLL_NALGO_AUTO;
  p->nccl_proto = COLL_PROTO_AUTO;
  p->channels = 0;                     /* derived */
  /* [ASSUMPTION] a CUDA kernel launch costs a few microseconds of host
   * time; 4 us is the low end of the 4-6 us reported for launch plus
   * submission in public measurements (susun-blog.com "pegainfer (3)",
   * RTX 5070 Ti, CUDA 13).  Not fitted to the nccl-tests tables. */
  p->launch = 4 * SIM_PS_PER_US;
  p->gpus_per_thread = 1;
  p->net_overhead = 1 * SIM_PS_PER_US; /* [nccl] getNetOverhead: 1 us on x86 Intel */
  p->net_latency = 0;                  /* [nccl] IB plugin reports latency 0 */
}

static const pdesc *find_param(const char *key)
{
  for (size_t i = 0; i < G_N_ELEMENTS(params); i++)
    if (strcmp(params[i].info.name, key) == 0)
      return &params[i];
  return NULL;
}

static gboolean parse_bool(const char *v, gboolean *out)
{
  if (g_ascii_strcasecmp(v, "true") == 0 || g_ascii_strcasecmp(v, "yes") == 0 || strcmp(v, "1") == 0 ||
      g_ascii_strcasecmp(v, "on") == 0) {
    *out = TRUE;
    return TRUE;
  }
  if (g_ascii_strcasecmp(v, "false") == 0 || g_ascii_strcasecmp(v, "no") == 0 || strcmp(v, "0") == 0 ||
      g_ascii_strcasecmp(v, "off") == 0) {
    *out = FALSE;
    return TRUE;
  }
  return FALSE;
}

gboolean coll_library_params_set(coll_library_params *p, const char *key, const char *value, GError **error)
{
  const pdesc *d = find_param(key);
  if (d == NULL) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "unknown library parameter '%s'; `wisp collbench --library-params` lists them", key);
    return FALSE;
  }
  char *base = (char *)p + d->off;
  const char *why = NULL;
  gboolean ok = TRUE;
  switch (d->type) {
  case PT_TIME: {
    sim_time_ps v;
    ok = wisp_parse_time(value, &v, &why) && v >= 0;
    if (ok)
      *(sim_time_ps *)(void *)base = v;
    break;
  }
  case PT_BW: {
    wisp_bw_Bps v;
    ok = wisp_parse_bandwidth(value, &v, &why);
    if (ok)
      *(wisp_bw_Bps *)(void *)base = v;
    break;
  }
  case PT_SIZE: {
    uint64_t v;
    ok = wisp_parse_size(value, &v, &why);
    if (ok)
      *(uint64_t *)(void *)base = v;
    break;
  }
  case PT_U64: {
    char *end = NULL;
    errno = 0;
    guint64 v = g_ascii_strtoull(value, &end, 10);
    ok = errno == 0 && end != value && *end == '\0';
    if (ok)
      *(uint64_t *)(void *)base = v;
    break;
  }
  case PT_DOUBLE: {
    char *end = NULL;
    double v = g_ascii_strtod(value, &end);
    ok = end != value && *end == '\0' && isfinite(v) && v >= 0;
    if (ok)
      *(double *)(void *)base = v;
    break;
  }
  case PT_INT: {
    char *end = NULL;
    errno = 0;
    long v = strtol(value, &end, 10);
    ok = errno == 0 && end != value && *end == '\0' && v >= 0 && v <= 1 << 20;
    if (ok)
      *(int *)(void *)base = (int)v;
    break;
  }
  case PT_BOOL:
    ok = parse_bool(value, (gboolean *)(void *)base);
    break;
  case PT_NALGO:
    ok = coll_nccl_algo_from_name(value, (int *)(void *)base) &&
         (*(int *)(void *)base == COLL_NALGO_AUTO || *(int *)(void *)base == COLL_NALGO_RING ||
          *(int *)(void *)base == COLL_NALGO_TREE || *(int *)(void *)base == COLL_NALGO_NVLS ||
          *(int *)(void *)base == COLL_NALGO_NVLS_TREE);
    break;
  case PT_PROTO:
    ok = coll_proto_from_name(value, (int *)(void *)base);
    break;
  case PT_REG: {
    ok = FALSE;
    for (int i = 0; i <= COLL_REG_ROA; i++)
      if (g_ascii_strcasecmp(value, reg_names[i]) == 0) {
        *(coll_reg_mode *)(void *)base = (coll_reg_mode)i;
        ok = TRUE;
      }
    break;
  }
  }
  if (!ok) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "library parameter %s: '%s' is not a valid %s%s%s", key,
                value, d->info.unit, why ? ": " : "", why ? why : "");
    return FALSE;
  }
  /* Cross-field sanity that would otherwise give nonsense (division by
   * zero, empty ranges). */
  if ((d->type == PT_INT && (strcmp(key, "c_sat") == 0 || strcmp(key, "cores") == 0) && *(int *)(void *)base < 1) ||
      ((strcmp(key, "b_copy") == 0 || strcmp(key, "b_port") == 0 || strcmp(key, "b_sio") == 0 ||
        strcmp(key, "b_hbm") == 0) &&
       *(wisp_bw_Bps *)(void *)base == 0) ||
      ((strcmp(key, "page") == 0 || strcmp(key, "unit_bytes") == 0 || strcmp(key, "s_c") == 0 ||
        strcmp(key, "buffsize") == 0 || strcmp(key, "desc_bytes") == 0) && *(uint64_t *)(void *)base == 0) ||
      ((strcmp(key, "p_remap") == 0 || strcmp(key, "overlap") == 0) && *(double *)(void *)base > 1.0)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "library parameter %s: '%s' is out of range (%s)", key,
                value, strcmp(key, "p_remap") == 0 || strcmp(key, "overlap") == 0 ? "0..1" : "must be positive");
    return FALSE;
  }
  return TRUE;
}

char *coll_library_param_value(const coll_library_params *p, const char *name)
{
  const pdesc *d = find_param(name);
  if (d == NULL)
    return NULL;
  const char *base = (const char *)p + d->off;
  switch (d->type) {
  case PT_TIME: {
    sim_time_ps v = *(const sim_time_ps *)(const void *)base;
    if (v == 0)
      return g_strdup(g_str_has_prefix(name, "alpha_") ? "0 (topology)" : "0");
    return wisp_format_time(v);
  }
  case PT_BW: {
    wisp_bw_Bps v = *(const wisp_bw_Bps *)(const void *)base;
    return v == 0 ? g_strdup("0 (topology)") : g_strdup_printf("%g GB/s", (double)v / 1e9);
  }
  case PT_SIZE:
    return wisp_format_size(*(const uint64_t *)(const void *)base);
  case PT_U64:
    return g_strdup_printf("%" G_GUINT64_FORMAT, *(const uint64_t *)(const void *)base);
  case PT_DOUBLE:
    return g_strdup_printf("%g", *(const double *)(const void *)base);
  case PT_INT:
    return g_strdup_printf("%d", *(const int *)(const void *)base);
  case PT_BOOL:
    return g_strdup(*(const gboolean *)(const void *)base ? "true" : "false");
  case PT_REG:
    return g_strdup(coll_reg_mode_name(*(const coll_reg_mode *)(const void *)base));
  case PT_NALGO: {
    int a = *(const int *)(const void *)base;
    return g_strdup(a == COLL_NALGO_AUTO ? "auto" : coll_nccl_algo_name((coll_nccl_algo)a));
  }
  case PT_PROTO: {
    int pr = *(const int *)(const void *)base;
    return g_strdup(pr == COLL_PROTO_AUTO ? "auto" : coll_proto_name((coll_proto)pr));
  }
  }
  return NULL;
}

gboolean coll_library_params_from_topo(const topo *t, coll_library_params *p, GError **error)
{
  return coll_library_params_from_config(topo_config(t), t, p, error);
}

gboolean coll_library_params_from_config(const cfg_doc *doc, const topo *t, coll_library_params *p, GError **error)
{
  int line = 0;
  coll_library_kind k = coll_library_default_for(t);
  const char *v = doc ? cfg_get(doc, "library.name", &line) : NULL;
  if (v != NULL && !coll_library_from_name(v, &k)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s:%d: library.name '%s' is not a known library; use nccl, ideal, hccl, hccl-zerocopy, stratacl, "
                "cann-ep or cann-ep-zerocopy",
                cfg_source(doc), line, v);
    return FALSE;
  }
  coll_library_params_default(k, p);
  if (doc == NULL)
    return TRUE;
  /* Unknown keys are errors (a typo must not silently keep a default).
   * Keys are checked in sorted order so the message is deterministic. */
  GPtrArray *keys = cfg_keys(doc, "library.");
  for (guint i = 0; i < keys->len; i++) {
    const char *key = keys->pdata[i];
    if (strcmp(key, "library.name") == 0 || find_param(key + strlen("library.")) != NULL)
      continue;
    cfg_get(doc, key, &line);
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s:%d: unknown key '%s'; `wisp collbench --library-params` lists the library parameters",
                cfg_source(doc), line, key);
    g_ptr_array_unref(keys);
    return FALSE;
  }
  g_ptr_array_unref(keys);
  for (size_t i = 0; i < G_N_ELEMENTS(params); i++) {
    char *key = g_strdup_printf("library.%s", params[i].info.name);
    v = cfg_get(doc, key, &line);
    g_free(key);
    GError *e = NULL;
    if (v != NULL && !coll_library_params_set(p, params[i].info.name, v, &e)) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s:%d: %s", cfg_source(doc), line, e->message);
      g_error_free(e);
      return FALSE;
    }
  }
  return TRUE;
}

/* ---- fabric ------------------------------------------------------------ */

struct coll_library_fabric {
  int n, nd;
  int *coord;          /* n * nd */
  sim_time_ps alpha[COLL_TIER_COUNT];
  wisp_bw_Bps beta[COLL_TIER_COUNT];
};

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

static sim_time_ps ps_from_us_d(double us)
{
  sim_time_ps v = 0;
  gboolean ok = wisp_ps_from_us(us, &v);
  g_assert(ok);
  return v;
}

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
  return ps_from_us_d((double)ub / 1e6 * p->k_rdma);
}

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
    out->policy_ps = balanced ? ps_from_us_d(p->k_pol_ns * (U * log2(U) + U * log2((double)cores)) / 1e3) : 0;
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
    out->staging_ps = 2 * p->t_copy0 + ps_from_us_d((double)copy / 1e6 * (1.0 - p->overlap));
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
    sim_time_ps slowed = ps_from_us_d((double)body / 1e6 * (1.0 + p->eps_sdma));
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
