/* cmd_collbench.c: `wisp collbench` simulates collectives alone on a
 * network and prints an nccl-tests-shaped table (size, count, type, redop,
 * root, time, algbw, busbw) with nccl-tests' byte conventions and busbw
 * factors (doc/collectives.md), optionally also as JSON (written
 * atomically).  Each (op, size) runs on a fresh engine, network and
 * collective library, so rows are independent and deterministic.  The
 * pseudo-ops moe_dispatch and moe_combine run one all-to-allv each whose
 * per-peer sizes come from a seeded MoE routing (coll_library_moe_splits,
 * reference §8).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>

#include "cli/wisp_cli.h"
#include "cli/wisp_load.h"
#include "collectives/coll.h"
#include "collectives/coll_library_report.h"
#include "collectives/libraries/nccl/coll_nccl.h"
#include "collectives/coll_nccltests.h"
#include "common/wisp_json.h"
#include "studies/study.h"

#define COLLBENCH_TYPE_BYTES 4 /* rows are reported as float32, as nccl-tests' default */

/* An --op item: a collective, an MoE all-to-allv (reference §8), or
 * nccl-tests' sendrecv (OP_SENDRECV: every rank sends S to rank + 1 and
 * receives S from rank - 1, run as an all-to-allv holding that ring shift;
 * busbw = algbw as nccl-tests' sendrecv.cu). */
typedef enum { MOE_NONE = 0, MOE_DISPATCH, MOE_COMBINE, OP_SENDRECV } collbench_moe;
#define IS_MOE(m) ((m) == MOE_DISPATCH || (m) == MOE_COMBINE)

typedef struct {
  et_coll_type type;
  collbench_moe moe;
} collbench_op;

/* The MoE routing of --op moe_dispatch / moe_combine (reference §8):
 * tokens per rank, top-k of `experts`, hidden size in elements, Zipf
 * skew, routing seed; dispatch moves FP8 (1 B/element), combine BF16
 * (2 B/element), DeepEP's convention [pub: deepseek-ai/DeepEP README]. */
typedef struct {
  int tokens, topk, experts, hidden;
  double zipf;
  uint64_t seed;
} collbench_moe_cfg;

#define MOE_DISPATCH_ELEM_BYTES 1 /* FP8 [pub] */
#define MOE_COMBINE_ELEM_BYTES 2  /* BF16 [pub] */

/* The collectives of `--op all`, in table order; names from chakra's
 * collective table (et_coll_short_name). */
static const et_coll_type collbench_ops[] = {
  ET_COLL_ALL_REDUCE, ET_COLL_ALL_GATHER, ET_COLL_REDUCE_SCATTER, ET_COLL_ALL_TO_ALL, ET_COLL_ALL_TO_ALLV,
  ET_COLL_BROADCAST,  ET_COLL_REDUCE,     ET_COLL_GATHER,         ET_COLL_SCATTER,    ET_COLL_BARRIER,
};

/* "all_reduce,broadcast" or "all" (every collective, not the MoE ops);
 * also accepts nccl-tests-style names without underscores ("allreduce"),
 * and moe_dispatch, moe_combine. */
static gboolean parse_ops(const char *text, GArray *ops, GError **error)
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

static gboolean parse_sizes(const char *text, GArray *sizes, GError **error)
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
static gboolean parse_group(const char *text, GArray *ranks, GError **error)
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

typedef struct {
  et_coll_type type;
  collbench_moe moe;
  uint64_t size;        /* nccl-tests size column: S */
  uint64_t count;
  int root;
  sim_time_ps time_ps;
  double algbw, busbw;  /* GB/s, decimal */
  coll_info info;
  coll_library_stats lstats;
} collbench_row;

/* Converts nccl-tests' size S into Chakra comm_size (AG/gather/scatter:
 * per-rank piece, S rounded down to a multiple of n) and runs it; an MoE
 * op (moe != MOE_NONE) ignores S and runs the all-to-allv of the routing
 * of mc over the group. */
static gboolean run_row(const topo *t, net_tier tier, const coll_policy *pol, const int *ranks, int n,
                        int root, et_coll_type type, collbench_moe moe, const collbench_moe_cfg *mc, uint64_t size,
                        collbench_row *row, GError **error)
{
  uint64_t comm = coll_ncclt_comm_size(type, size, n);
  uint64_t *splits = NULL;
  if (moe == OP_SENDRECV) {
    /* nccl-tests sendrecv: rank i sends S to i+1 (mod n). */
    splits = g_new0(uint64_t, (size_t)n * (size_t)n);
    for (int i = 0; i < n; i++)
      splits[(size_t)i * (size_t)n + (size_t)((i + 1) % n)] = size;
    comm = 0;
  } else if (moe != MOE_NONE) {
    splits = g_new(uint64_t, (size_t)n * (size_t)n);
    uint64_t tb = (uint64_t)mc->hidden * (moe == MOE_DISPATCH ? MOE_DISPATCH_ELEM_BYTES : MOE_COMBINE_ELEM_BYTES);
    coll_library_moe_splits(n, mc->tokens, mc->topk, mc->experts, mc->zipf, tb, mc->seed, moe == MOE_COMBINE,
                            splits);
    comm = 0;
  } else if (type == ET_COLL_ALL_TO_ALLV) {
    /* Uniform per-peer sizes (S/n each, self included as in all-to-all). */
    splits = g_new(uint64_t, (size_t)n * (size_t)n);
    for (size_t i = 0; i < (size_t)n * (size_t)n; i++)
      splits[i] = size / (uint64_t)n;
  }
  coll_desc d = { .type = type, .bytes = comm, .ranks = ranks, .n_ranks = n,
                  .root = et_coll_rooted(type) ? root : -1, .splits = splits };
  row->type = type;
  row->moe = moe;
  row->root = d.root;
  gboolean ok = coll_measure_lib(t, tier, pol, &d, &row->time_ps, &row->info, &row->lstats, error);
  g_free(splits);
  if (!ok)
    return FALSE;
  row->size = row->info.algbw_bytes;
  row->count = row->size / COLLBENCH_TYPE_BYTES;
  double secs = (double)row->time_ps / 1e12;
  row->algbw = secs > 0 ? (double)row->size / secs / 1e9 : 0.0;
  row->busbw = row->algbw * (moe == OP_SENDRECV ? 1.0 : row->info.busbw_factor);
  return TRUE;
}

static void print_row(FILE *out, const collbench_row *r, gboolean lib)
{
  fprintf(out, "%14" G_GUINT64_FORMAT " %13" G_GUINT64_FORMAT " %7s %6s %6d %12.3f %8.2f %8.2f", r->size,
          r->count, "float", et_coll_reduces(r->type) ? "sum" : "none", r->root, (double)r->time_ps / 1e6, r->algbw,
          r->busbw);
  if (lib)
    fprintf(out, " %10.3f %5d %14" G_GUINT64_FORMAT " %10.3f %7.1f", (double)r->info.reg_max_ps / 1e6,
            r->info.barrier_hits, r->info.staging_bytes, (double)r->info.core_makespan_ps / 1e6,
            100 * r->info.core_spread);
  fprintf(out, "  %s\n", r->info.detail);
}

/* Sums the statistics of independent rows (histograms add). */
static void stats_add(coll_library_stats *a, const coll_library_stats *b)
{
  a->ops += b->ops;
  a->hits += b->hits;
  a->blocked_sum_ps += b->blocked_sum_ps;
  a->blocked_max_ps = MAX(a->blocked_max_ps, b->blocked_max_ps);
  for (int i = 0; i < COLL_LIBRARY_HIST; i++)
    a->hist[i] += b->hist[i];
  a->jit_misses += b->jit_misses;
  a->reg_critical_ps += b->reg_critical_ps;
  a->jobs += b->jobs;
  a->remaps += b->remaps;
  a->staging_bytes += b->staging_bytes;
  a->staging_ps += b->staging_ps;
  a->core_occupancy_us += b->core_occupancy_us;
  a->ops_total += b->ops_total;
  a->partitions += b->partitions;
  a->core_spread_sum += b->core_spread_sum;
  a->core_spread_max = MAX(a->core_spread_max, b->core_spread_max);
  a->core_makespan_max_ps = MAX(a->core_makespan_max_ps, b->core_makespan_max_ps);
  a->policy_ps += b->policy_ps;
}

static const char *op_name(et_coll_type t, collbench_moe moe)
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

/* Writes the rows into f and commits it (f is freed either way). */
static gboolean write_json(wisp_afile *f, const char *network, net_tier tier, const int *ranks, int n,
                           const collbench_row *rows, guint n_rows, const topo *t, const coll_library_params *lib,
                           const coll_library_stats *lstats, gboolean compare, const collbench_moe_cfg *mc,
                           gboolean any_moe, GError **error)
{
  wisp_json j;
  wisp_json_init(&j, wisp_afile_stream(f), 3);
  wisp_json_begin_object(&j, NULL);
  wisp_json_int(&j, "version", 1);
  wisp_json_string(&j, "tool", "wisp collbench");
  wisp_json_string(&j, "network", network);
  wisp_json_string(&j, "tier", net_tier_name(tier));
  wisp_json_int(&j, "n_ranks", n);
  wisp_json_begin_array(&j, "group");
  for (int i = 0; i < n; i++)
    wisp_json_int(&j, NULL, ranks[i]);
  wisp_json_end_array(&j);
  wisp_json_begin_array(&j, "results");
  for (guint i = 0; i < n_rows; i++) {
    const collbench_row *r = &rows[i];
    wisp_json_begin_object(&j, NULL);
    wisp_json_string(&j, "op", op_name(r->type, r->moe));
    wisp_json_uint(&j, "size", r->size);
    wisp_json_uint(&j, "count", r->count);
    wisp_json_string(&j, "type", "float");
    wisp_json_string(&j, "redop", et_coll_reduces(r->type) ? "sum" : "none");
    wisp_json_int(&j, "root", r->root);
    wisp_json_double(&j, "time_us", (double)r->time_ps / 1e6, 6);
    wisp_json_ns(&j, "time_ns", r->time_ps);
    wisp_json_double(&j, "algbw_GBps", r->algbw, 6);
    wisp_json_double(&j, "busbw_GBps", r->busbw, 6);
    wisp_json_double(&j, "busbw_factor", r->moe == OP_SENDRECV ? 1.0 : r->info.busbw_factor, 6);
    wisp_json_string(&j, "algorithm", coll_algo_name(r->info.algo));
    wisp_json_string(&j, "plan", r->info.detail);
    if (r->info.nccl_algo >= 0) {
      wisp_json_string(&j, "nccl_algorithm", coll_nccl_algo_name((coll_nccl_algo)r->info.nccl_algo));
      wisp_json_string(&j, "protocol", coll_proto_name((coll_proto)r->info.proto));
    }
    if (coll_library_has_engine(lib->kind)) {
      wisp_json_ns(&j, "reg_max_ns", r->info.reg_max_ps);
      wisp_json_int(&j, "barrier_hits", r->info.barrier_hits);
      wisp_json_int(&j, "jit_misses", r->info.jit_misses);
      wisp_json_uint(&j, "staging_bytes", r->info.staging_bytes);
      wisp_json_ns(&j, "core_makespan_ns", r->info.core_makespan_ps);
      wisp_json_double(&j, "core_spread", r->info.core_spread, 6);
      wisp_json_double(&j, "core_spread_mean", r->info.core_spread_mean, 6);
      wisp_json_uint(&j, "core_units", r->info.core_units);
      wisp_json_int(&j, "core_member", r->info.core_member);
      wisp_json_ns(&j, "policy_ns", r->info.policy_ps);
    }
    wisp_json_end_object(&j);
  }
  wisp_json_end_array(&j);
  if (any_moe) {
    wisp_json_begin_object(&j, "moe");
    wisp_json_int(&j, "tokens", mc->tokens);
    wisp_json_int(&j, "topk", mc->topk);
    wisp_json_int(&j, "experts", mc->experts);
    wisp_json_int(&j, "hidden", mc->hidden);
    wisp_json_double(&j, "zipf", mc->zipf, 6);
    wisp_json_uint(&j, "seed", mc->seed);
    wisp_json_int(&j, "dispatch_elem_bytes", MOE_DISPATCH_ELEM_BYTES);
    wisp_json_int(&j, "combine_elem_bytes", MOE_COMBINE_ELEM_BYTES);
    wisp_json_end_object(&j);
  }
  wisp_json_string(&j, "library", coll_library_name(lib->kind));
  wisp_json_string(&j, "registration", coll_reg_mode_name(lib->reg));
  if (coll_library_has_engine(lib->kind))
    coll_library_json_stats(&j, "library_stats", lstats);
  if (compare && !coll_library_report(NULL, &j, t, tier, lib, ranks, n, error)) {
    wisp_afile_abort(f);
    return FALSE;
  }
  wisp_json_end_object(&j);
  wisp_json_finish(&j);
  return wisp_afile_commit(f, error);
}

static int cmp_dbl(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median_of(GArray *v)
{
  if (v->len == 0)
    return -1;
  qsort(v->data, v->len, sizeof(double), cmp_dbl);
  const double *d = (const double *)(void *)v->data;
  return v->len % 2 ? d[v->len / 2] : (d[v->len / 2 - 1] + d[v->len / 2]) / 2;
}

/* --compare-csv --json: the head of the object (kind collbench_compare),
 * one row per size, and the medians with the commit. */
static wisp_afile *compare_json_open(wisp_json *j, const char *json, const char *csv, int table, const char *test,
                                     const char *network, net_tier tier, int n, const coll_policy *pol,
                                     GError **error)
{
  wisp_afile *jf = wisp_afile_open(json, error);
  if (jf == NULL)
    return NULL;
  wisp_json_init(j, wisp_afile_stream(jf), 2);
  wisp_json_begin_object(j, NULL);
  wisp_json_int(j, "schema_version", 1);
  wisp_json_string(j, "kind", "collbench_compare");
  wisp_json_string(j, "csv", csv);
  wisp_json_int(j, "table", table);
  wisp_json_string(j, "test", test);
  wisp_json_string(j, "network", network);
  wisp_json_string(j, "tier", net_tier_name(tier));
  wisp_json_int(j, "n_ranks", n);
  wisp_json_string(j, "library", coll_library_name(coll_policy_library(pol)->kind));
  wisp_json_begin_array(j, "rows");
  return jf;
}

static void compare_json_row(wisp_json *j, const coll_ncclt_row *rr, const collbench_row *row)
{
  wisp_json_begin_object(j, NULL);
  wisp_json_uint(j, "size_bytes", rr->size);
  wisp_json_double(j, "real_time_us", rr->time_us, 3);
  wisp_json_double(j, "wisp_time_us", (double)row->time_ps / 1e6, 3);
  wisp_json_double(j, "real_busbw_GBps", rr->busbw_GBps, 3);
  wisp_json_double(j, "wisp_busbw_GBps", row->busbw, 3);
  wisp_json_string(j, "algorithm", row->info.detail);
  wisp_json_end_object(j);
}

static gboolean compare_json_close(wisp_json *j, wisp_afile *jf, double mb, double mt, GError **error)
{
  wisp_json_end_array(j);
  if (mb >= 0)
    wisp_json_double(j, "median_busbw_error_pct", 100 * mb, 3);
  if (mt >= 0)
    wisp_json_double(j, "median_time_error_pct", 100 * mt, 3);
  wisp_json_end_object(j);
  wisp_json_finish(j);
  return wisp_afile_commit(jf, error);
}

/* --compare-csv: runs the sizes of one table of a real nccl-tests file
 * (coll_nccltests.h; `test` its binary) on this network and prints real
 * beside simulated with the medians of issue 15's two measures (busbw >=
 * 64 MiB, time <= 64 KiB); --svg also draws real and simulated busbw
 * against the size.  O(rows x one simulated collective). */
static gboolean run_compare(const coll_ncclt_log *log, int table, const char *test, const char *svg,
                            const char *json, const char *network, const topo *t, net_tier tier, const coll_policy *pol, const int *rk,
                            int n, int root, GError **error)
{
  const char *csv = log->path;
  const GArray *rows = log->rows;
  et_coll_type type = ET_COLL_ALL_TO_ALLV;
  collbench_moe variant = coll_ncclt_is_sendrecv(test) ? OP_SENDRECV : MOE_NONE;
  if (variant == MOE_NONE)
    coll_ncclt_op(test, &type); /* compare_load checked that it runs */
  GArray *xs = g_array_new(FALSE, FALSE, sizeof(double)), *yr = g_array_new(FALSE, FALSE, sizeof(double));
  GArray *ys = g_array_new(FALSE, FALSE, sizeof(double));
  GPtrArray *ticks = g_ptr_array_new_with_free_func(g_free);
  GArray *bus_err = g_array_new(FALSE, FALSE, sizeof(double)), *time_err = g_array_new(FALSE, FALSE, sizeof(double));
  gboolean ok = TRUE;
  printf("# wisp collbench --compare-csv %s (table %d, %s): network %s, tier %s, %d ranks, library %s\n", csv, table,
         test, network, net_tier_name(tier), n, coll_library_name(coll_policy_library(pol)->kind));
  /* --json: the same rows for wisp report (kind collbench_compare). */
  wisp_json j;
  wisp_afile *jf = json ? compare_json_open(&j, json, csv, table, test, network, tier, n, pol, error) : NULL;
  if (json && jf == NULL)
    ok = FALSE;
  for (guint i = 0; i < rows->len && ok; i++) {
    const coll_ncclt_row *rr = &g_array_index(rows, coll_ncclt_row, i);
    if (rr->table != table)
      continue;
    if (variant == MOE_NONE && coll_ncclt_comm_size(type, rr->size, n) == 0)
      continue;
    collbench_row row;
    memset(&row, 0, sizeof row);
    /* The log's root (nccl-tests -r) is a position in the group. */
    int rr_root = rr->root >= 0 && rr->root < n ? rk[rr->root] : root;
    if (!run_row(t, tier, pol, rk, n, rr_root, type, variant, NULL, rr->size, &row, error)) {
      ok = FALSE;
      break;
    }
    printf("  %-18s %12" G_GUINT64_FORMAT " %11.2f %11.2f %10.2f %10.2f  %s\n", test, rr->size, rr->time_us,
           (double)row.time_ps / 1e6, rr->busbw_GBps, row.busbw, row.info.detail);
    if (jf)
      compare_json_row(&j, rr, &row);
    if (rr->size >= (64u << 20) && rr->busbw_GBps > 0) {
      double e = fabs(row.busbw - rr->busbw_GBps) / rr->busbw_GBps;
      g_array_append_val(bus_err, e);
    }
    if (rr->size <= (64u << 10) && rr->time_us > 0) {
      double e = fabs((double)row.time_ps / 1e6 - rr->time_us) / rr->time_us;
      g_array_append_val(time_err, e);
    }
    double x = log2((double)rr->size);
    g_array_append_val(xs, x);
    g_array_append_val(yr, rr->busbw_GBps);
    g_array_append_val(ys, row.busbw);
    /* Size labels on every fourth point (8 B, 128 B, 2 KiB, ...). */
    char *lab = NULL;
    if (xs->len % 4 == 1)
      lab = rr->size >= (1u << 30) ? g_strdup_printf("%" G_GUINT64_FORMAT "G", rr->size >> 30)
            : rr->size >= (1u << 20) ? g_strdup_printf("%" G_GUINT64_FORMAT "M", rr->size >> 20)
            : rr->size >= (1u << 10) ? g_strdup_printf("%" G_GUINT64_FORMAT "K", rr->size >> 10)
                                     : g_strdup_printf("%" G_GUINT64_FORMAT, rr->size);
    g_ptr_array_add(ticks, lab);
  }
  if (ok && xs->len == 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: table %d has no row of a non-zero size for %d ranks",
                csv, table, n);
    ok = FALSE;
  }
  if (ok) {
    double mb = median_of(bus_err), mt = median_of(time_err);
    printf("# median |error|: busbw at sizes >= 64 MiB ");
    if (mb >= 0)
      printf("%.1f %% (%u sizes)", 100 * mb, bus_err->len);
    else
      printf("n/a");
    printf("; time at sizes <= 64 KiB ");
    if (mt >= 0)
      printf("%.1f %% (%u sizes)\n", 100 * mt, time_err->len);
    else
      printf("n/a\n");
    if (jf) {
      ok = compare_json_close(&j, jf, mb, mt, error);
      jf = NULL;
    }
  }
  if (jf)
    wisp_afile_abort(jf);
  if (ok && svg != NULL) {
    study_svg_series ser[2] = {
      { "nccl-tests (real)", (const double *)(void *)xs->data, (const double *)(void *)yr->data, (int)xs->len },
      { "wisp", (const double *)(void *)xs->data, (const double *)(void *)ys->data, (int)xs->len },
    };
    char *base = g_path_get_basename(csv);
    char *title = g_strdup_printf("%s (table %d, %d ranks): real vs wisp", base, table, n);
    g_free(base);
    ok = study_svg_line_chart(svg, title, "size S (bytes, log scale)", "bus bandwidth (GB/s)", ser, 2,
                              (const char *const *)ticks->pdata, error);
    g_free(title);
  }
  g_array_free(xs, TRUE);
  g_array_free(yr, TRUE);
  g_array_free(ys, TRUE);
  g_array_free(bus_err, TRUE);
  g_array_free(time_err, TRUE);
  g_ptr_array_free(ticks, TRUE);
  return ok;
}

/* The MoE options: --moe-zipf and --seed parsed into `mc`, and every MoE
 * count checked against its range.  Returns 0, or 2 after printing what to
 * give instead. */
static int parse_moe_options(const char *zipf_s, const char *seed_s, collbench_moe_cfg *mc)
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
static int default_group(const topo *t, const char *network, int n_ranks, GArray *ranks)
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
static int apply_library_options(coll_policy *pol, const char *algo_s, const char *library_s, const char *proto_s,
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
      fprintf(stderr, "wisp collbench: --library must be nccl, ideal, hccl, hccl-zerocopy, stratacl, cann-ep or "
                      "cann-ep-zerocopy, not '%s'\n", library_s);
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

/* The table of one --op item: its header lines, then one row per size (one
 * row for barrier and the MoE ops), each appended to `rows` and summed into
 * `lsum`, `bus_sum` and `bus_n` (busbw of every row but barrier's).  Time:
 * one fresh simulation per row.  Returns 0, or 1 after printing the error. */
static int run_op_table(const topo *t, net_tier tier, const coll_policy *pol, const int *rk, int n, int root,
                        collbench_op op, const collbench_moe_cfg *mc, const GArray *sizes, gboolean show_lib,
                        GArray *rows, coll_library_stats *lsum, double *bus_sum, guint *bus_n)
{
  GError *error = NULL;
  et_coll_type type = op.type;
  collbench_moe moe = op.moe;
  printf("#\n# %s\n", op_name(type, moe));
  if (moe == OP_SENDRECV)
    printf("# point-to-point: every rank sends S to rank + 1 (an all_to_allv holding that shift); busbw = algbw\n");
  if (IS_MOE(moe))
    printf("# all_to_allv of the MoE routing: %d tokens per rank, top-%d of %d experts, Zipf %g, seed %" G_GUINT64_FORMAT
           ", %d B per token (%s)\n", mc->tokens, mc->topk, mc->experts, mc->zipf, mc->seed,
           mc->hidden * (moe == MOE_DISPATCH ? MOE_DISPATCH_ELEM_BYTES : MOE_COMBINE_ELEM_BYTES),
           moe == MOE_DISPATCH ? "FP8" : "BF16");
  printf("# %12s %13s %7s %6s %6s %12s %8s %8s", "size", "count", "type", "redop", "root", "time", "algbw",
         "busbw");
  if (show_lib)
    printf(" %10s %5s %14s %10s %7s", "reg", "hits", "staging", "cores", "spread");
  printf("  %s\n", "algorithm");
  printf("# %12s %13s %7s %6s %6s %12s %8s %8s", "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)");
  if (show_lib)
    printf(" %10s %5s %14s %10s %7s", "(us)", "", "(B)", "(us)", "(%)");
  printf("\n");
  guint n_sizes = type == ET_COLL_BARRIER || IS_MOE(moe) ? 1 : sizes->len;
  for (guint s = 0; s < n_sizes; s++) {
    collbench_row row;
    memset(&row, 0, sizeof row);
    if (!run_row(t, tier, pol, rk, n, root, type, moe, mc, g_array_index(sizes, uint64_t, s), &row, &error))
      return wisp_cli_fail(error);
    print_row(stdout, &row, show_lib);
    stats_add(lsum, &row.lstats);
    if (type != ET_COLL_BARRIER) {
      *bus_sum += row.busbw;
      (*bus_n)++;
    }
    g_array_append_val(rows, row);
  }
  return 0;
}

/* The parsed command line of `wisp collbench` (the option variables of
 * wisp_cmd_collbench, which owns them) and the state of one run. */
typedef struct {
  const char *network, *op, *sizes_s, *group_s, *algo_s, *json, *tier_s, *library_s, *zipf_s, *seed_s, *proto_s,
    *compare_csv, *svg;
  int compare_table;
  char **lib_set;
  gboolean lib_params, compare, warm;
  int n_ranks, root, chunks;
  collbench_moe_cfg mc;
  /* Run state, built by collbench_setup. */
  gboolean any_moe;
  GArray *ops, *sizes, *ranks, *rows;
  topo *t;
  net_tier tier;
  coll_policy *pol;
  coll_library_params lib;
  /* --compare-csv: the log, the table chosen, its binary, and the -g the
   * log says (0: none). */
  coll_ncclt_log *log;
  const coll_ncclt_table *ctab;
  const char *ctest;
  int log_gpus;
} collbench_cli;

/* TRUE when a --library-set item sets KEY. */
static gboolean lib_set_has(char **lib_set, const char *key)
{
  size_t kl = strlen(key);
  for (int i = 0; lib_set && lib_set[i]; i++)
    if (strncmp(lib_set[i], key, kl) == 0 && lib_set[i][kl] == '=')
      return TRUE;
  return FALSE;
}

/* --compare-csv, before the network's group and library are built: loads
 * the log, picks the table (--compare-table, default the first), names
 * its binary (the log's, or --op when the log does not say; they must
 * agree), takes the rank count (unless --ranks or --group give the same
 * count) and -g (unless --library-set gpus_per_thread=N) from the log.
 * Returns 0, 1 or 2. */
static int compare_load(collbench_cli *c)
{
  GError *error = NULL;
  c->log = coll_ncclt_load(c->compare_csv, &error);
  if (c->log == NULL)
    return wisp_cli_fail(error);
  char *list = coll_ncclt_list(c->log);
  int status = 0;
  c->ctab = c->compare_table == 0 ? &g_array_index(c->log->tables, coll_ncclt_table, 0)
                                  : coll_ncclt_find(c->log, c->compare_table);
  const char *want = c->op ? coll_ncclt_binary_of(c->op) : NULL;
  if (c->ctab == NULL) {
    fprintf(stderr, "wisp collbench: %s has no table %d; its tables: %s (give --compare-table N)\n", c->compare_csv,
            c->compare_table, list);
    status = 2;
  } else if (c->op != NULL && want == NULL) {
    fprintf(stderr, "wisp collbench: --op '%s' with --compare-csv names the table's collective: one of all_reduce, "
                    "all_gather, reduce_scatter, all_to_all, broadcast, reduce, gather, scatter, sendrecv\n", c->op);
    status = 2;
  } else if (c->ctab->test[0] && want && strcmp(want, c->ctab->test) != 0) {
    fprintf(stderr, "wisp collbench: --op %s, but table %d of %s is %s (from %s); drop --op\n", c->op,
            c->ctab->table, c->compare_csv, c->ctab->test, c->ctab->test_from);
    status = 2;
  } else if (c->ctab->test[0] == '\0' && want == NULL) {
    fprintf(stderr, "wisp collbench: %s does not say which nccl-tests binary printed table %d (its rows fit %s); "
                    "give --op, e.g. --op all_gather; the file's tables: %s\n", c->compare_csv, c->ctab->table,
            c->ctab->candidates[0] ? c->ctab->candidates : "several", list);
    status = 2;
  }
  int lr = c->ctab ? c->ctab->ranks : 0;
  int given = c->n_ranks != INT_MIN ? c->n_ranks : 0; /* INT_MIN: --ranks not given */
  if (status == 0 && lr > 0 && c->group_s == NULL && given != 0 && given != lr) {
    fprintf(stderr, "wisp collbench: --ranks %d, but table %d of %s ran %d ranks (%s); drop --ranks\n", given,
            c->ctab->table, c->compare_csv, lr, c->ctab->ranks_from);
    status = 2;
  }
  et_coll_type type;
  if (status == 0) {
    c->ctest = c->ctab->test[0] ? c->ctab->test : want;
    if (!coll_ncclt_is_sendrecv(c->ctest) && !coll_ncclt_op(c->ctest, &type)) {
      fprintf(stderr, "wisp collbench: table %d of %s is %s, which wisp does not run (%s); the file's tables: %s\n",
              c->ctab->table, c->compare_csv, c->ctest,
              strcmp(c->ctest, "hypercube_perf") == 0 ? "its exchanges along hypercube dimensions are no collective "
              "wisp models" : strcmp(c->ctest, "alltoallv_perf") == 0 ? "its per-peer sizes are not in the log"
              : "not an nccl-tests binary wisp knows", list);
      status = 2;
    }
  }
  if (status == 0) {
    if (lr > 0 && c->group_s == NULL)
      c->n_ranks = lr;
    if (c->ctab->gpus_per_thread > 0 && !lib_set_has(c->lib_set, "gpus_per_thread"))
      c->log_gpus = c->ctab->gpus_per_thread;
    printf("# nccl-tests table %d of %s: %s (from %s)", c->ctab->table, c->compare_csv, c->ctest,
           c->ctab->test[0] ? c->ctab->test_from : "--op");
    if (lr > 0)
      printf(", %d ranks (from %s)", lr, c->ctab->ranks_from);
    else
      printf(", rank count not in the log (--ranks, else every rank of the network)");
    if (c->log_gpus > 0)
      printf(", -g %d (from %s)", c->log_gpus, c->ctab->gpus_from);
    else
      printf(", -g not in the log");
    printf("\n");
  }
  g_free(list);
  return status;
}

/* Parses the operations, sizes and group, loads the network and builds the
 * policy with the library options applied.  Returns 0, 1 or 2 (exit
 * status); *done is set when the run is over (--library-params). */
static int collbench_setup(collbench_cli *c, int argc, gboolean *done)
{
  GError *error = NULL;
  int status;
  if (c->op != NULL && !parse_ops(c->op, c->ops, &error))
    return wisp_cli_fail(error);
  for (guint o = 0; o < c->ops->len; o++)
    c->any_moe = c->any_moe || IS_MOE(g_array_index(c->ops, collbench_op, o).moe);
  if ((status = parse_moe_options(c->zipf_s, c->seed_s, &c->mc)) != 0)
    return status;
  if (c->network == NULL || argc != 1) {
    fprintf(stderr, "wisp collbench: give " WISP_CLI_NETWORK_USAGE " (--cluster is the same option) and no other arguments (see `wisp collbench --help`)\n");
    return 2;
  }
  if (c->n_ranks != INT_MIN && c->group_s != NULL) {
    fprintf(stderr, "wisp collbench: give either --ranks or --group, not both\n");
    return 2;
  }
  if (c->compare_csv != NULL && (status = compare_load(c)) != 0)
    return status;
  if ((c->op == NULL && !parse_ops("all_reduce", c->ops, &error)) ||
      !parse_sizes(c->sizes_s ? c->sizes_s : "64K,1M,64M,1G", c->sizes, &error) ||
      (c->group_s && !parse_group(c->group_s, c->ranks, &error)))
    return wisp_cli_fail(error);
  c->t = wisp_cli_network_load(c->network, 0, stdout, &error);
  if (c->t == NULL)
    return wisp_cli_fail(error);
  c->tier = net_default_tier(c->t);
  if (c->tier_s && !wisp_cli_network_model(c->tier_s, &c->tier, &error)) {
    fprintf(stderr, "wisp collbench: %s\n", error->message);
    g_clear_error(&error);
    return 2;
  }
  if (c->ctab != NULL && c->ctab->ranks > topo_n_ranks(c->t)) {
    fprintf(stderr, "wisp collbench: table %d of %s ran %d ranks (from %s) but the network %s has %d; give a network "
                    "with at least %d ranks\n", c->ctab->table, c->compare_csv, c->ctab->ranks, c->ctab->ranks_from,
            c->network, topo_n_ranks(c->t), c->ctab->ranks);
    return 2;
  }
  if (c->ctab != NULL && c->ctab->ranks > 0 && c->group_s != NULL && (int)c->ranks->len != c->ctab->ranks) {
    fprintf(stderr, "wisp collbench: --group has %u ranks, but table %d of %s ran %d (from %s)\n", c->ranks->len,
            c->ctab->table, c->compare_csv, c->ctab->ranks, c->ctab->ranks_from);
    return 2;
  }
  if (c->group_s == NULL && (status = default_group(c->t, c->network, c->n_ranks, c->ranks)) != 0)
    return status;
  c->pol = coll_policy_new_from_topo(c->t, &error);
  if (c->pol == NULL)
    return wisp_cli_fail(error);
  if ((status = apply_library_options(c->pol, c->algo_s, c->library_s, c->proto_s, c->lib_set, c->warm, c->log_gpus,
                                      &c->lib)) != 0)
    return status;
  if (c->lib_params) {
    coll_library_print_params(stdout, &c->lib);
    *done = TRUE;
    return 0;
  }
  if (c->chunks != INT_MIN) { /* given: 0 and negatives are refused, not the default */
    if (c->chunks < 1 || c->chunks > 1024) {
      fprintf(stderr, "wisp collbench: --chunks %d: give 1..1024\n", c->chunks);
      return 2;
    }
    coll_policy_set_chunks(c->pol, c->chunks);
  }
  return 0;
}

/* Checks the group, the root and the options that depend on the group,
 * before anything is printed.  Returns 0, 1 or 2. */
static int collbench_check_group(collbench_cli *c)
{
  GError *error = NULL;
  const int *rk = (const int *)(void *)c->ranks->data;
  int n = (int)c->ranks->len;
  if (c->root < 0)
    c->root = rk[0];
  coll_desc probe = { .type = ET_COLL_BROADCAST, .bytes = 0, .ranks = rk, .n_ranks = n, .root = c->root };
  if (!coll_desc_check(c->t, &probe, &error))
    return wisp_cli_fail(error);
  if (c->any_moe && (c->mc.experts < n || c->mc.experts % n != 0)) {
    fprintf(stderr, "wisp collbench: --moe-experts %d must be a positive multiple of the group size %d (experts are "
                    "placed contiguously, E/n per rank)\n", c->mc.experts, n);
    return 2;
  }
  if (c->svg != NULL && c->compare_csv == NULL) {
    fprintf(stderr, "wisp collbench: --svg draws a --compare-csv run; give --compare-csv FILE too\n");
    return 2;
  }
  if (c->compare_csv != NULL && (c->sizes_s != NULL || c->compare)) {
    fprintf(stderr, "wisp collbench: --compare-csv takes the sizes from the file; drop --sizes and --compare\n");
    return 2;
  }
  return 0;
}

/* The tables: the JSON output opened first (an unwritable path fails
 * before the runs), the header, one table per operation, the summary,
 * --compare's report, the JSON.  Returns 0 or 1. */
static int collbench_tables(collbench_cli *c)
{
  GError *error = NULL;
  int status = 0;
  const int *rk = (const int *)(void *)c->ranks->data;
  int n = (int)c->ranks->len;
  wisp_afile *jf = NULL;
  if (c->json) {
    jf = wisp_afile_open(c->json, &error);
    if (jf == NULL)
      return wisp_cli_fail(error);
  }
  gboolean show_lib = coll_library_has_engine(c->lib.kind);
  printf("# wisp collbench: network %s, tier %s, %d ranks, algorithm %s, library %s (registration %s%s)\n",
         c->network, net_tier_name(c->tier), n, c->algo_s ? c->algo_s : "config/auto", coll_library_name(c->lib.kind),
         coll_reg_mode_name(c->lib.reg), c->lib.sdma ? ", SDMA" : "");
  coll_library_stats lsum;
  memset(&lsum, 0, sizeof lsum);
  double t0 = wisp_wall_seconds();
  double bus_sum = 0;
  guint bus_n = 0;
  for (guint o = 0; o < c->ops->len; o++)
    if ((status = run_op_table(c->t, c->tier, c->pol, rk, n, c->root, g_array_index(c->ops, collbench_op, o), &c->mc,
                               c->sizes, show_lib, c->rows, &lsum, &bus_sum, &bus_n)) != 0)
      goto out;
  printf("# Avg bus bandwidth    : %g\n", bus_n ? bus_sum / bus_n : 0.0);
  if (show_lib)
    coll_library_print_stats(stdout, &lsum);
  if (c->compare && !coll_library_report(stdout, NULL, c->t, c->tier, &c->lib, rk, n, &error)) {
    status = wisp_cli_fail(error);
    goto out;
  }
  fprintf(stderr, "wisp: collbench: %u rows in %.3f s\n", c->rows->len, wisp_wall_seconds() - t0);
  if (jf) {
    wisp_afile *f = jf;
    jf = NULL;
    if (!write_json(f, c->network, c->tier, rk, n, (const collbench_row *)(void *)c->rows->data, c->rows->len, c->t,
                    &c->lib, &lsum, c->compare, &c->mc, c->any_moe, &error)) {
      status = wisp_cli_fail(error);
      goto out;
    }
  }
  if (fflush(stdout) != 0) {
    fprintf(stderr, "wisp collbench: cannot write to standard output\n");
    status = 1;
  }
out:
  if (jf)
    wisp_afile_abort(jf);
  return status;
}

/* Runs the parsed command line: setup, checks, then --compare-csv's table
 * or the collbench tables.  Returns the exit status. */
static int collbench_main(collbench_cli *c, int argc)
{
  c->ops = g_array_new(FALSE, FALSE, sizeof(collbench_op));
  c->sizes = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  c->ranks = g_array_new(FALSE, FALSE, sizeof(int));
  c->rows = g_array_new(FALSE, FALSE, sizeof(collbench_row));
  gboolean done = FALSE;
  int status = collbench_setup(c, argc, &done);
  if (status == 0 && !done)
    status = collbench_check_group(c);
  if (status == 0 && !done && c->compare_csv != NULL) {
    GError *error = NULL;
    if (!run_compare(c->log, c->ctab->table, c->ctest, c->svg, c->json, c->network, c->t, c->tier, c->pol,
                     (const int *)(void *)c->ranks->data, (int)c->ranks->len, c->root, &error))
      status = wisp_cli_fail(error);
  } else if (status == 0 && !done) {
    status = collbench_tables(c);
  }
  g_array_free(c->ops, TRUE);
  g_array_free(c->sizes, TRUE);
  g_array_free(c->ranks, TRUE);
  g_array_free(c->rows, TRUE);
  coll_policy_free(c->pol);
  coll_ncclt_log_free(c->log);
  if (c->t)
    topo_free(c->t);
  return status;
}

int wisp_cmd_collbench(int argc, char **argv)
{
  char *network = NULL, *op = NULL, *sizes_s = NULL, *group_s = NULL, *algo_s = NULL, *json = NULL,
       *tier_s = NULL, *library_s = NULL, *zipf_s = NULL, *seed_s = NULL, *proto_s = NULL, *compare_csv = NULL,
       *svg = NULL;
  int compare_table = 0;
  char **lib_set = NULL;
  gboolean lib_params = FALSE, compare = FALSE, warm = FALSE;
  int n_ranks = INT_MIN, root = -1, chunks = INT_MIN; /* INT_MIN: not given */
  /* MoE defaults: HT mode of reference §8 (T = 4096 [sw], top-8 of 256
   * experts [ASSUMPTION: E], h = 7168, Zipf 0.25 [FIT]). */
  collbench_moe_cfg mc = { .tokens = 4096, .topk = 8, .experts = 256, .hidden = 7168, .zipf = 0.25, .seed = 1 };
  GOptionEntry net_entries[WISP_CLI_NETWORK_ENTRIES];
  wisp_cli_network_entries(&network, "network: preset name or file, wisp YAML or ASTRA-sim network.yml", net_entries);
  GOptionEntry entries[] = {
    { "op", 0, 0, G_OPTION_ARG_STRING, &op, "collective(s): all_reduce,... or all (default all_reduce); also moe_dispatch, moe_combine", "OPS" },
    { "sizes", 0, 0, G_OPTION_ARG_STRING, &sizes_s, "nccl-tests sizes S (default 64K,1M,64M,1G)", "LIST" },
    { "ranks", 0, 0, G_OPTION_ARG_INT, &n_ranks, "use ranks 0..N-1 (default: every rank)", "N" },
    { "group", 0, 0, G_OPTION_ARG_STRING, &group_s, "explicit group, e.g. 0-7, 0,4,8,12 or 0-15:4", "RANKS" },
    { "root", 0, 0, G_OPTION_ARG_INT, &root, "root rank of rooted collectives (default: first member)", "RANK" },
    { "algo", 0, 0, G_OPTION_ARG_STRING, &algo_s, "force one algorithm: with library nccl ring, tree, nvls or nvls_tree (like NCCL_ALGO); with ideal ring, direct, ...; default: config/auto", "ALGO" },
    { "proto", 0, 0, G_OPTION_ARG_STRING, &proto_s, "library nccl: force a protocol LL, LL128 or Simple (like NCCL_PROTO); default: the tuner's", "PROTO" },
    { "chunks", 0, 0, G_OPTION_ARG_INT, &chunks, "pipelining chunks (default: config or 1)", "C" },
    { "network-model", 0, 0, G_OPTION_ARG_STRING, &tier_s, WISP_CLI_NETWORK_MODEL_HELP, "MODEL" },
    { "tier", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &tier_s, "same as --network-model", "MODEL" },
    { "json", 0, 0, G_OPTION_ARG_FILENAME, &json, "also write the rows as JSON (atomically)", "FILE" },
    { "library", 0, 0, G_OPTION_ARG_STRING, &library_s, "communication library: nccl, ideal, hccl, hccl-zerocopy, stratacl, cann-ep or cann-ep-zerocopy (default: the config's library:, else nccl for wisp configs and ideal for ASTRA-sim network.yml)", "NAME" },
    { "library-set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &lib_set, "set a library parameter (repeatable), e.g. t_meta=60us", "KEY=VALUE" },
    { "library-params", 0, 0, G_OPTION_ARG_NONE, &lib_params, "print the library parameters with provenance and exit", NULL },
    { "compare", 0, 0, G_OPTION_ARG_NONE, &compare, "print the library comparisons: AllGather, AllReduce, core partitioning and SDMA simulated on the tier beside mode A and the reference's target, MoE dispatch/combine simulated; registration (mode A)", NULL },
    { "warm", 0, 0, G_OPTION_ARG_NONE, &warm, "rows use registered buffers (JIT pays no registration; default: every row is a first use)", NULL },
    { "moe-tokens", 0, 0, G_OPTION_ARG_INT, &mc.tokens, "MoE ops: tokens per rank (default 4096: HT; LL 128)", "T" },
    { "moe-topk", 0, 0, G_OPTION_ARG_INT, &mc.topk, "MoE ops: experts per token (default 8)", "K" },
    { "moe-experts", 0, 0, G_OPTION_ARG_INT, &mc.experts, "MoE ops: experts, a multiple of the group size (default 256)", "E" },
    { "moe-hidden", 0, 0, G_OPTION_ARG_INT, &mc.hidden, "MoE ops: hidden size in elements (default 7168; dispatch 1 B, combine 2 B each)", "H" },
    { "moe-zipf", 0, 0, G_OPTION_ARG_STRING, &zipf_s, "MoE ops: Zipf exponent of expert popularity (default 0.25)", "S" },
    { "seed", 0, 0, G_OPTION_ARG_STRING, &seed_s, "MoE ops: routing seed (default 1)", "N" },
    { "compare-csv", 0, 0, G_OPTION_ARG_FILENAME, &compare_csv, "run the sizes of a real nccl-tests table (raw nccl-tests output, or CSV as in ../shared/data/nccl-tests) and print real beside simulated; ranks and -g come from the log; --op names the collective when the log does not", "FILE" },
    { "compare-table", 0, 0, G_OPTION_ARG_INT, &compare_table, "with --compare-csv: the table number (default: the file's first)", "N" },
    { "svg", 0, 0, G_OPTION_ARG_FILENAME, &svg, "with --compare-csv: also draw real and simulated busbw against the size (SVG)", "FILE" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionContext *ctx = g_option_context_new("- simulate collectives and print an nccl-tests-shaped table");
  g_option_context_set_description(ctx,
    "Sizes are nccl-tests' S (bytes in the algbw numerator): all-gather, gather\n"
    "and scatter use S/n per rank; rows report float32 counts.  busbw = algbw x\n"
    "the nccl-tests factor of the collective (see doc/collectives.md).  Each row\n"
    "runs alone on a fresh simulation.  With library nccl (the default for wisp\n"
    "configs) the algorithm column starts with NCCL's algorithm and protocol\n"
    "(e.g. ring/LL, nvls/Simple) chosen by NCCL's cost model for each size.\n"
    "With a supernode library (hccl, hccl-zerocopy, stratacl, cann-ep*), five\n"
    "more columns: the largest registration wait of a member (us), readiness-\n"
    "barrier hits, staging bytes, and the largest core makespan of a member's\n"
    "full-mesh step (us) with that partition's spread (%) (doc/libraries.md).\n"
    "--op moe_dispatch,moe_combine run one all-to-allv each (sizes ignored):\n"
    "every rank routes T tokens to top-k of E experts (E/n per rank) with\n"
    "Zipf-skewed popularity, one copy per distinct destination rank;\n"
    "dispatch moves H bytes per token (FP8), combine 2H back (BF16).\n");
  g_option_context_add_main_entries(ctx, net_entries, NULL);
  g_option_context_add_main_entries(ctx, entries, NULL);
  GError *error = NULL;
  int status = 0;
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    fprintf(stderr, "wisp collbench: %s (see `wisp collbench --help`)\n", error->message);
    g_clear_error(&error);
    status = 2;
    goto out;
  }
  if (!wisp_output_declare(json, "--json", &error)) {
    fprintf(stderr, "wisp collbench: %s\n", error->message);
    g_clear_error(&error);
    status = 2;
    goto out;
  }
  collbench_cli c = {
    .network = network, .op = op, .sizes_s = sizes_s, .group_s = group_s, .algo_s = algo_s, .json = json,
    .tier_s = tier_s, .library_s = library_s, .zipf_s = zipf_s, .seed_s = seed_s, .proto_s = proto_s,
    .compare_csv = compare_csv, .svg = svg, .compare_table = compare_table, .lib_set = lib_set,
    .lib_params = lib_params, .compare = compare, .warm = warm, .n_ranks = n_ranks, .root = root, .chunks = chunks,
    .mc = mc,
  };
  status = collbench_main(&c, argc);
out:
  g_option_context_free(ctx);
  g_free(network);
  g_free(op);
  g_free(sizes_s);
  g_free(group_s);
  g_free(algo_s);
  g_free(json);
  g_free(tier_s);
  g_free(library_s);
  g_free(zipf_s);
  g_free(seed_s);
  g_free(proto_s);
  g_free(compare_csv);
  g_free(svg);
  g_strfreev(lib_set);
  wisp_output_reset();
  return status;
}
