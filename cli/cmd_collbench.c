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
#include "cli/cmd_collbench.h"
#include "collectives/coll.h"
#include "collectives/coll_library_report.h"
#include "collectives/libraries/nccl/coll_nccl.h"
#include "collectives/coll_nccltests.h"
#include "common/wisp_json.h"
#include "studies/study.h"

/* Parses the operations, sizes and group, loads the network and builds the
 * policy with the library options applied.  Returns 0, 1 or 2 (exit
 * status); *done is set when the run is over (--library-params). */
static int collbench_setup(collbench_cli *c, int argc, gboolean *done)
{
  GError *error = NULL;
  int status;
  if (c->op != NULL && !collbench_parse_ops(c->op, c->ops, &error))
    return wisp_cli_fail(error);
  for (guint o = 0; o < c->ops->len; o++)
    c->any_moe = c->any_moe || IS_MOE(g_array_index(c->ops, collbench_op, o).moe);
  if ((status = collbench_parse_moe(c->zipf_s, c->seed_s, &c->mc)) != 0)
    return status;
  if (c->network == NULL || argc != 1) {
    fprintf(stderr, "wisp collbench: give " WISP_CLI_NETWORK_USAGE " (--cluster is the same option) and no other arguments (see `wisp collbench --help`)\n");
    return 2;
  }
  if (c->n_ranks != INT_MIN && c->group_s != NULL) {
    fprintf(stderr, "wisp collbench: give either --ranks or --group, not both\n");
    return 2;
  }
  if (c->compare_csv != NULL && (status = collbench_compare_load(c)) != 0)
    return status;
  if ((c->op == NULL && !collbench_parse_ops("all_reduce", c->ops, &error)) ||
      !collbench_parse_sizes(c->sizes_s ? c->sizes_s : "64K,1M,64M,1G", c->sizes, &error) ||
      (c->group_s && !collbench_parse_group(c->group_s, c->ranks, &error)))
    return wisp_cli_fail(error);
  c->t = wisp_cli_network_load_system(c->network, c->system, 0, stdout, &error);
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
  if (c->group_s == NULL && (status = collbench_default_group(c->t, c->network, c->n_ranks, c->ranks)) != 0)
    return status;
  c->pol = coll_policy_new_from_topo(c->t, &error);
  if (c->pol == NULL)
    return wisp_cli_fail(error);
  if ((status = collbench_apply_library(c->pol, c->algo_s, c->library_s, c->proto_s, c->lib_set, c->warm, c->log_gpus,
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
    if ((status = collbench_op_table(c->t, c->tier, c->pol, rk, n, c->root, g_array_index(c->ops, collbench_op, o), &c->mc,
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
    if (!collbench_write_json(f, c->network, c->tier, rk, n, (const collbench_row *)(void *)c->rows->data, c->rows->len, c->t,
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
    if (!collbench_compare_run(c->log, c->ctab->table, c->ctest, c->svg, c->json, c->network, c->t, c->tier, c->pol,
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
       *svg = NULL, *html = NULL, *tmp_json = NULL, *system = NULL;
  int compare_table = 0;
  char **lib_set = NULL;
  gboolean lib_params = FALSE, compare = FALSE, warm = FALSE;
  int n_ranks = INT_MIN, root = -1, chunks = INT_MIN; /* INT_MIN: not given */
  /* MoE defaults: HT mode of reference §8 (T = 4096 [sw], top-8 of 256
   * experts [ASSUMPTION: E], h = 7168, Zipf 0.25 [FIT]). */
  collbench_moe_cfg mc = { .tokens = 4096, .topk = 8, .experts = 256, .hidden = 7168, .zipf = 0.25, .seed = 1 };
  GOptionEntry net_entries[WISP_CLI_NETWORK_SYSTEM_ENTRIES];
  wisp_cli_network_system_entries(&network, &system, "network: preset name or file, wisp YAML or ASTRA-sim "
                                  "network.yml", net_entries);
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
    WISP_CLI_HTML_ENTRY(html),
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
  if (html && lib_params) {
    fprintf(stderr, "wisp collbench: --library-params prints the parameters and exits; drop --html\n");
    status = 2;
    goto out;
  }
  if (!wisp_cli_html_prepare(html, &json, &tmp_json, &error) || !wisp_output_declare(json, "--json", &error) ||
      !wisp_output_declare(svg, "--svg", &error)) {
    fprintf(stderr, "wisp collbench: %s\n", error->message);
    g_clear_error(&error);
    status = 2;
    goto out;
  }
  collbench_cli c = {
    .network = network, .op = op, .sizes_s = sizes_s, .group_s = group_s, .algo_s = algo_s, .json = json,
    .tier_s = tier_s, .library_s = library_s, .zipf_s = zipf_s, .seed_s = seed_s, .proto_s = proto_s,
    .compare_csv = compare_csv, .svg = svg, .system = system, .compare_table = compare_table, .lib_set = lib_set,
    .lib_params = lib_params, .compare = compare, .warm = warm, .n_ranks = n_ranks, .root = root, .chunks = chunks,
    .mc = mc,
  };
  status = collbench_main(&c, argc);
  if (status == 0 && html && !wisp_cli_write_html(json, tmp_json, html, &error))
    status = wisp_cli_fail(error);
out:
  wisp_cli_html_done(tmp_json);
  g_free(html);
  g_option_context_free(ctx);
  g_free(network);
  g_free(system);
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
