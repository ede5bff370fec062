/* coll_library.c: the catalog of communication libraries (see
 * coll_library.h and doc/libraries.md): their names, which have an
 * engine, and their parameters with provenance, defaults per library and
 * the config's library section.  The models themselves live per family:
 * nccl/ (the tuner and NCCL's plan), supernode/ (fabric, closed forms,
 * registration, core partitioning and the engine on the run).
 * References to "§" are sections of ../shared/reference/supernode-model.md.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/libraries/coll_library.h"
#include "collectives/libraries/nccl/coll_nccl.h"

/* ---- names ------------------------------------------------------------- */

static const char *const library_names[COLL_LIBRARY_COUNT] = { "nccl",    "hccl",             "hccl-zerocopy",
                                                                "stratacl", "cann-ep", "cann-ep-zerocopy",
                                                                "ideal",    "rccl" };

gboolean coll_library_has_engine(coll_library_kind k)
{
  return k != COLL_LIBRARY_NCCL && k != COLL_LIBRARY_IDEAL && k != COLL_LIBRARY_RCCL;
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
  P("nccl_version", PT_INT, nccl_version, "NCCL_VERSION_CODE", "[pub] the log's NCCL version line", "nccl: NCCL_VERSION_CODE of the library that ran (20909 = 2.9.9); below 21300 (2.13) the host also fills one work-FIFO slot per launched channel (0.244 us each, paid with the launch); 0 = the version the tuner follows (2.29)"),
  P("net_overhead", PT_TIME, net_overhead, "time", "[nccl] getNetOverhead (x86 Intel)", "nccl: host cost of a network post (NCCL_NET_OVERHEAD)"),
  P("net_latency", PT_TIME, net_latency, "time", "[nccl] graph latencyInter (IB: 0)", "nccl: the network latency a net plugin reports to NCCL's tuner (graph latencyInter), added to every network hop of the tuner's cost model; steers the algorithm choice only (the topology's latencies are simulated)"),
  P("step_latency_scale", PT_DOUBLE, step_latency_scale, "ratio", "[FIT] wisp calibrate --nccl-tests; 1 = NCCL's tables", "nccl: multiplies NCCL's per-step (per-hop) latencies in the simulated time (the per-step overhead of a calibrated config); the tuner's choice keeps NCCL's figures"),
  P("net_efficiency", PT_DOUBLE, net_efficiency, "0..1", "[FIT] wisp calibrate --nccl-tests; 0 = not measured", "nccl: measured share of the scale-out tier's line rate the network transfers achieve (a calibrated config's effective NIC bandwidth = the tier's bandwidth x this); NCCL's topology search, channels and choice keep the line rate; 0: not measured, the ring graph's quantised speed (the search's bwInter) stands for it"),
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
  p->buffsize = k == COLL_LIBRARY_NCCL || k == COLL_LIBRARY_RCCL ? 4u << 20 : 200u << 20; /* rccl: [rccl] the same */
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
  /* rccl: one xGMI link of MI300X moves 64 GB/s per direction (AMD
   * Instinct MI300X datasheet: 7 links, 896 GB/s peer bandwidth in both
   * directions); RCCL's own view of it is 48 GB/s (coll_rccl.h). */
  if (k == COLL_LIBRARY_RCCL)
    p->nvlink_link_bw = 64000000000u;
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
  p->step_latency_scale = 1.0;         /* NCCL's own per-hop figures */
  p->net_efficiency = 0.0;             /* not measured (spec-only) */
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
      ((strcmp(key, "p_remap") == 0 || strcmp(key, "overlap") == 0 || strcmp(key, "net_efficiency") == 0) &&
       *(double *)(void *)base > 1.0)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "library parameter %s: '%s' is out of range (%s)", key,
                value, d->type == PT_DOUBLE ? "0..1" : "must be positive");
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
                "%s:%d: library.name '%s' is not a known library; use nccl, rccl, ideal, hccl, hccl-zerocopy, "
                "stratacl, cann-ep or cann-ep-zerocopy",
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
