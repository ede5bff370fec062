/* cmd_collbench_rows.c: one row of `wisp collbench` (an nccl-tests size
 * run on a fresh engine, network and library), the table of one --op item
 * and the JSON of every row (written atomically).  Each row costs one
 * simulated collective.
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

/* Converts nccl-tests' size S into Chakra comm_size (AG/gather/scatter:
 * per-rank piece, S rounded down to a multiple of n) and runs it; an MoE
 * op (moe != MOE_NONE) ignores S and runs the all-to-allv of the routing
 * of mc over the group. */
gboolean collbench_run_row(const topo *t, net_tier tier, const coll_policy *pol, const int *ranks, int n,
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

/* Writes the rows into f and commits it (f is freed either way). */
gboolean collbench_write_json(wisp_afile *f, const char *network, net_tier tier, const int *ranks, int n,
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
    wisp_json_string(&j, "op", collbench_op_name(r->type, r->moe));
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

/* The table of one --op item: its header lines, then one row per size (one
 * row for barrier and the MoE ops), each appended to `rows` and summed into
 * `lsum`, `bus_sum` and `bus_n` (busbw of every row but barrier's).  Time:
 * one fresh simulation per row.  Returns 0, or 1 after printing the error. */
int collbench_op_table(const topo *t, net_tier tier, const coll_policy *pol, const int *rk, int n, int root,
                        collbench_op op, const collbench_moe_cfg *mc, const GArray *sizes, gboolean show_lib,
                        GArray *rows, coll_library_stats *lsum, double *bus_sum, guint *bus_n)
{
  GError *error = NULL;
  et_coll_type type = op.type;
  collbench_moe moe = op.moe;
  printf("#\n# %s\n", collbench_op_name(type, moe));
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
    if (!collbench_run_row(t, tier, pol, rk, n, root, type, moe, mc, g_array_index(sizes, uint64_t, s), &row, &error))
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
