/* cmd_collbench_opts.c: the options of `wisp collbench` parsed and
 * checked: --op (collectives, sendrecv, the MoE ops), --sizes, --group,
 * the MoE routing options, the default group and the library options
 * applied to the config's library.  Each parser is linear in its text.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>

#include "cli/wisp_cli.h"
#include "cli/wisp_load.h"
#include "cli/cmd_collbench.h"
#include "collectives/coll.h"
#include "collectives/coll_library_report.h"
#include "collectives/libraries/nccl/coll_nccl.h"
#include "collectives/coll_nccltests.h"
#include "common/wisp_json.h"
#include "studies/study.h"

/* The collectives of `--op all`, in table order; names from chakra's
 * collective table (et_coll_short_name). */
static const et_coll_type collbench_ops[] = {
  ET_COLL_ALL_REDUCE, ET_COLL_ALL_GATHER, ET_COLL_REDUCE_SCATTER, ET_COLL_ALL_TO_ALL, ET_COLL_ALL_TO_ALLV,
  ET_COLL_BROADCAST,  ET_COLL_REDUCE,     ET_COLL_GATHER,         ET_COLL_SCATTER,    ET_COLL_BARRIER,
};

/* "all_reduce,broadcast" or "all" (every collective, not the MoE ops);
 * also accepts nccl-tests-style names without underscores ("allreduce"),
 * and moe_dispatch, moe_combine. */
gboolean collbench_parse_ops(const char *text, GArray *ops, GError **error)
{
  gchar **parts = g_strsplit(text, ",", -1);
  gboolean ok = TRUE;
  for (int i = 0; parts[i] && ok; i++) {
    char *p = g_strstrip(parts[i]);
    if (strcmp(p, "all") == 0) {
      for (size_t k = 0; k < G_N_ELEMENTS(collbench_ops); k++)
        g_array_append_val(ops, ((collbench_op){ collbench_ops[k], MOE_NONE }));
      continue;
    }
    if (g_ascii_strcasecmp(p, "sendrecv") == 0) {
      g_array_append_val(ops, ((collbench_op){ ET_COLL_ALL_TO_ALLV, OP_SENDRECV }));
      continue;
    }
    if (g_ascii_strcasecmp(p, "moe_dispatch") == 0 || g_ascii_strcasecmp(p, "moe_combine") == 0) {
      gboolean d = g_ascii_strcasecmp(p, "moe_dispatch") == 0;
      g_array_append_val(ops, ((collbench_op){ ET_COLL_ALL_TO_ALLV, d ? MOE_DISPATCH : MOE_COMBINE }));
      continue;
    }
    gboolean found = FALSE;
    for (size_t k = 0; k < G_N_ELEMENTS(collbench_ops) && !found; k++) {
      const char *name = et_coll_short_name(collbench_ops[k]);
      char *plain = g_strdup(name);
      char *w = plain;
      for (const char *r = name; *r; r++)
        if (*r != '_')
          *w++ = *r;
      *w = '\0';
      if (g_ascii_strcasecmp(p, name) == 0 || g_ascii_strcasecmp(p, plain) == 0) {
        g_array_append_val(ops, ((collbench_op){ collbench_ops[k], MOE_NONE }));
        found = TRUE;
      }
      g_free(plain);
    }
    if (!found) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "--op: unknown collective '%s'; use all_reduce, all_gather, reduce_scatter, all_to_all, "
                  "all_to_allv, broadcast, reduce, gather, scatter, barrier, sendrecv, all, moe_dispatch or moe_combine", p);
      ok = FALSE;
    }
  }
  g_strfreev(parts);
  if (ok && ops->len == 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "--op is empty");
    ok = FALSE;
  }
  return ok;
}

gboolean collbench_parse_sizes(const char *text, GArray *sizes, GError **error)
{
  gchar **parts = g_strsplit(text, ",", -1);
  gboolean ok = TRUE;
  for (int i = 0; parts[i] && ok; i++) {
    const char *why = NULL;
    uint64_t v;
    char *p = g_strstrip(parts[i]);
    if (!wisp_parse_size(p, &v, &why)) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "--sizes: '%s': %s (e.g. 64K,1M,1G)", p,
                  why ? why : "not a size");
      ok = FALSE;
    } else {
      g_array_append_val(sizes, v);
    }
  }
  g_strfreev(parts);
  if (ok && sizes->len == 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "--sizes is empty");
    ok = FALSE;
  }
  return ok;
}

static gboolean parse_int(const char *s, long lo, long hi, long *out)
{
  char *end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
    return FALSE;
  *out = v;
  return TRUE;
}

/* "0-7", "0,2,4", "0-15:4" (start-end:stride); ranks are checked later
 * against the network. */
gboolean collbench_parse_group(const char *text, GArray *ranks, GError **error)
{
  gchar **parts = g_strsplit(text, ",", -1);
  gboolean ok = TRUE;
  for (int i = 0; parts[i] && ok; i++) {
    char *p = g_strstrip(parts[i]);
    long a, b, stride = 1;
    char *colon = strchr(p, ':');
    if (colon) {
      *colon = '\0';
      if (!parse_int(colon + 1, 1, 1 << 24, &stride))
        ok = FALSE;
    }
    char *dash = strchr(p, '-');
    if (ok && dash) {
      *dash = '\0';
      ok = parse_int(p, 0, 1 << 24, &a) && parse_int(dash + 1, 0, 1 << 24, &b) && a <= b;
    } else if (ok) {
      ok = parse_int(p, 0, 1 << 24, &a);
      b = a;
    }
    if (!ok) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "--group: item %d is not a rank, a range A-B or a strided range A-B:S", i + 1);
      break;
    }
    for (long r = a; r <= b; r += stride) {
      int ri = (int)r;
      g_array_append_val(ranks, ri);
    }
  }
  g_strfreev(parts);
  if (ok && ranks->len == 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "--group is empty");
    ok = FALSE;
  }
  return ok;
}

const char *collbench_op_name(et_coll_type t, collbench_moe moe)
{
  if (moe == OP_SENDRECV)
    return "sendrecv";
  if (moe != MOE_NONE)
    return moe == MOE_DISPATCH ? "moe_dispatch" : "moe_combine";
  for (size_t k = 0; k < G_N_ELEMENTS(collbench_ops); k++)
    if (collbench_ops[k] == t)
      return et_coll_short_name(t);
  return "?";
}

/* The MoE options: --moe-zipf and --seed parsed into `mc`, and every MoE
 * count checked against its range.  Returns 0, or 2 after printing what to
 * give instead. */
int collbench_parse_moe(const char *zipf_s, const char *seed_s, collbench_moe_cfg *mc)
{
  if (zipf_s != NULL) {
    char *end = NULL;
    mc->zipf = g_ascii_strtod(zipf_s, &end);
    if (end == zipf_s || *end != '\0' || !isfinite(mc->zipf) || mc->zipf < 0 || mc->zipf > 16) {
      fprintf(stderr, "wisp collbench: --moe-zipf '%s': give a number from 0 to 16 (e.g. 0.25)\n", zipf_s);
      return 2;
    }
  }
  if (seed_s != NULL) {
    char *end = NULL;
    errno = 0;
    mc->seed = g_ascii_strtoull(seed_s, &end, 10);
    if (errno != 0 || end == seed_s || *end != '\0' || seed_s[0] == '-') {
      fprintf(stderr, "wisp collbench: --seed '%s': give a non-negative integer\n", seed_s);
      return 2;
    }
  }
  if (mc->tokens < 1 || mc->tokens > (1 << 24) || mc->topk < 1 || mc->experts < 1 || mc->experts > (1 << 20) ||
      mc->topk > mc->experts || mc->hidden < 1 || mc->hidden > (1 << 24)) {
    fprintf(stderr, "wisp collbench: --moe-tokens (1..16777216), --moe-experts (1..1048576), --moe-topk (1..experts) "
                    "and --moe-hidden (1..16777216) are out of range\n");
    return 2;
  }
  return 0;
}

/* Without --group: ranks 0..n_ranks-1 of `t` (every rank when --ranks was
 * not given, n_ranks == INT_MIN) appended to `ranks`.  Returns 0, or 2 when
 * n_ranks is out of range (0 and negatives included: no fallback). */
int collbench_default_group(const topo *t, const char *network, int n_ranks, GArray *ranks)
{
  int total = topo_n_ranks(t);
  if (n_ranks != INT_MIN && (n_ranks < 1 || n_ranks > total)) {
    fprintf(stderr, "wisp collbench: --ranks %d: give 1..%d (the network %s has %d ranks)\n", n_ranks, total,
            network, total);
    return 2;
  }
  int n = n_ranks != INT_MIN ? n_ranks : total;
  for (int i = 0; i < n; i++)
    g_array_append_val(ranks, i);
  return 0;
}

/* The library options applied to the config's library, the result stored
 * in `pol` and `*lib`: --algo (an NCCL-only name applies to library nccl,
 * others force the policy's algorithm), --library, --proto, the -g of a
 * compared log (log_gpus > 0), each --library-set KEY=VALUE (edited in
 * place) and --warm.  Returns 0, 2 on a
 * bad option, 1 on a bad --library-set value. */
int collbench_apply_library(coll_policy *pol, const char *algo_s, const char *library_s, const char *proto_s,
                                 char **lib_set, gboolean warm, int log_gpus, coll_library_params *lib)
{
  GError *error = NULL;
  *lib = *coll_policy_library(pol);
  int nccl_algo = COLL_NALGO_AUTO;
  if (algo_s) {
    coll_algo a;
    if (coll_nccl_algo_from_name(algo_s, &nccl_algo) && !coll_algo_from_name(algo_s, &a)) {
      /* An NCCL-only name (nvls_tree): applies to library nccl. */
    } else if (!coll_algo_from_name(algo_s, &a)) {
      fprintf(stderr, "wisp collbench: --algo: unknown algorithm '%s'\n", algo_s);
      return 2;
    } else {
      nccl_algo = COLL_NALGO_AUTO;
      coll_policy_force(pol, a);
    }
  }
  if (library_s) {
    coll_library_kind k;
    if (!coll_library_from_name(library_s, &k)) {
      fprintf(stderr, "wisp collbench: --library must be nccl, rccl, ideal, hccl, hccl-zerocopy, stratacl, cann-ep "
                      "or cann-ep-zerocopy, not '%s'\n", library_s);
      return 2;
    }
    if (k != lib->kind)
      coll_library_params_default(k, lib);
  }
  if (nccl_algo != COLL_NALGO_AUTO)
    lib->nccl_algo = nccl_algo;
  if (log_gpus > 0)
    lib->gpus_per_thread = log_gpus; /* nccl-tests -g of the compared log */
  if (proto_s && !coll_proto_from_name(proto_s, &lib->nccl_proto)) {
    fprintf(stderr, "wisp collbench: --proto must be LL, LL128, Simple or auto, not '%s'\n", proto_s);
    return 2;
  }
  for (int i = 0; lib_set && lib_set[i]; i++) {
    char *eq = strchr(lib_set[i], '=');
    if (eq == NULL) {
      fprintf(stderr, "wisp collbench: --library-set '%s': give KEY=VALUE\n", lib_set[i]);
      return 2;
    }
    *eq = '\0';
    if (!coll_library_params_set(lib, lib_set[i], eq + 1, &error))
      return wisp_cli_fail(error);
  }
  if (warm && lib->reg == COLL_REG_JIT)
    lib->reg = COLL_REG_POOL;
  coll_policy_set_library(pol, lib);
  return 0;
}
