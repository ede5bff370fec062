/* cmd_collbench.h: the parts of `wisp collbench` shared by its files
 * (cli/cmd_collbench*.c, private to the command): the --op items, the MoE
 * routing options, one result row and the parsed command line, with the
 * functions of each file.  cmd_collbench_opts.c parses options,
 * cmd_collbench_rows.c runs and prints rows (and their JSON),
 * cmd_collbench_compare.c runs a real nccl-tests table beside wisp's, and
 * cmd_collbench.c ties them into the command.
 */
#ifndef WISP_CMD_COLLBENCH_H
#define WISP_CMD_COLLBENCH_H

#include "collectives/coll.h"
#include "collectives/coll_library_report.h"
#include "collectives/coll_nccltests.h"
#include "common/wisp_util.h"

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

/* The parsed command line of `wisp collbench` (the option variables of
 * wisp_cmd_collbench, which owns them) and the state of one run. */
typedef struct {
  const char *network, *op, *sizes_s, *group_s, *algo_s, *json, *tier_s, *library_s, *zipf_s, *seed_s, *proto_s,
    *compare_csv, *svg, *system;
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

/* cmd_collbench_opts.c */
/* "all_reduce,broadcast" or "all" (every collective, not the MoE ops);
 * also accepts nccl-tests-style names without underscores ("allreduce"),
 * and moe_dispatch, moe_combine. */
gboolean collbench_parse_ops(const char *text, GArray *ops, GError **error);
gboolean collbench_parse_sizes(const char *text, GArray *sizes, GError **error);
/* "0-7", "0,2,4", "0-15:4" (start-end:stride); ranks are checked later
 * against the network. */
gboolean collbench_parse_group(const char *text, GArray *ranks, GError **error);
const char *collbench_op_name(et_coll_type t, collbench_moe moe);
/* The MoE options: --moe-zipf and --seed parsed into `mc`, and every MoE
 * count checked against its range.  Returns 0, or 2 after printing what to
 * give instead. */
int collbench_parse_moe(const char *zipf_s, const char *seed_s, collbench_moe_cfg *mc);
/* Without --group: ranks 0..n_ranks-1 of `t` (every rank when --ranks was
 * not given, n_ranks == INT_MIN) appended to `ranks`.  Returns 0, or 2 when
 * n_ranks is out of range (0 and negatives included: no fallback). */
int collbench_default_group(const topo *t, const char *network, int n_ranks, GArray *ranks);
/* The library options applied to the config's library, the result stored
 * in `pol` and `*lib`: --algo (an NCCL-only name applies to library nccl,
 * others force the policy's algorithm), --library, --proto, the -g of a
 * compared log (log_gpus > 0), each --library-set KEY=VALUE (edited in
 * place) and --warm.  Returns 0, 2 on a
 * bad option, 1 on a bad --library-set value. */
int collbench_apply_library(coll_policy *pol, const char *algo_s, const char *library_s, const char *proto_s,
                                 char **lib_set, gboolean warm, int log_gpus, coll_library_params *lib);

/* cmd_collbench_rows.c */
/* Converts nccl-tests' size S into Chakra comm_size (AG/gather/scatter:
 * per-rank piece, S rounded down to a multiple of n) and runs it; an MoE
 * op (moe != MOE_NONE) ignores S and runs the all-to-allv of the routing
 * of mc over the group. */
gboolean collbench_run_row(const topo *t, net_tier tier, const coll_policy *pol, const int *ranks, int n,
                        int root, et_coll_type type, collbench_moe moe, const collbench_moe_cfg *mc, uint64_t size,
                        collbench_row *row, GError **error);
/* Writes the rows into f and commits it (f is freed either way). */
gboolean collbench_write_json(wisp_afile *f, const char *network, net_tier tier, const int *ranks, int n,
                           const collbench_row *rows, guint n_rows, const topo *t, const coll_library_params *lib,
                           const coll_library_stats *lstats, gboolean compare, const collbench_moe_cfg *mc,
                           gboolean any_moe, GError **error);
/* The table of one --op item: its header lines, then one row per size (one
 * row for barrier and the MoE ops), each appended to `rows` and summed into
 * `lsum`, `bus_sum` and `bus_n` (busbw of every row but barrier's).  Time:
 * one fresh simulation per row.  Returns 0, or 1 after printing the error. */
int collbench_op_table(const topo *t, net_tier tier, const coll_policy *pol, const int *rk, int n, int root,
                        collbench_op op, const collbench_moe_cfg *mc, const GArray *sizes, gboolean show_lib,
                        GArray *rows, coll_library_stats *lsum, double *bus_sum, guint *bus_n);

/* cmd_collbench_compare.c */
/* --compare-csv: runs the sizes of one table of a real nccl-tests file
 * (coll_nccltests.h; `test` its binary) on this network and prints real
 * beside simulated with the medians of issue 15's two measures (busbw >=
 * 64 MiB, time <= 64 KiB); --svg also draws real and simulated busbw
 * against the size; --json (json non-NULL) writes the rows for wisp
 * report.  O(rows x one simulated collective). */
gboolean collbench_compare_run(const coll_ncclt_log *log, int table, const char *test, const char *svg, const char *json,
                            const char *network, const topo *t, net_tier tier, const coll_policy *pol, const int *rk,
                            int n, int root, GError **error);
/* --compare-csv, before the network's group and library are built: loads
 * the log, picks the table (--compare-table, default the first), names
 * its binary (the log's, or --op when the log does not say; they must
 * agree), takes the rank count (unless --ranks or --group give the same
 * count) and -g (unless --library-set gpus_per_thread=N) from the log.
 * Returns 0, 1 or 2. */
int collbench_compare_load(collbench_cli *c);

#endif
