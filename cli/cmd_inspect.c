/* cmd_inspect.c: `wisp inspect TRACE...` - load PyTorch profiler (Kineto)
 * traces and print what the frontend found, skipped and built, per rank.
 * Exit status 0 on success, 1 on malformed or unusable input (the message
 * names the file and byte offset), 2 on bad usage.
 */
#include "config.h"
#include "cli/wisp_cli.h"
#include "chakra/et_scale.h"
#include "chakra/et_view.h"
#include "frontends/fe.h"
#include "frontends/nsys.h"
#include "cli/wisp_load.h"
#include "chakra/et_io.h"

#include <stdlib.h>
#include <string.h>

/* Shared option parsing of inspect and convert; fills opt, returns FALSE on a usage error.
 * After success, wisp_kineto_cli_options_clear frees what opt owns. */
gboolean wisp_kineto_cli_options(const char *cmd, int *argc, char ***argv, fe_kineto_options *opt, char **out_dir,
                                 char **prefix, gboolean *verbose, int *status);
void wisp_kineto_cli_options_clear(fe_kineto_options *opt);
extern char *wisp_convert_for; /* convert --for TARGET (cmd_convert.c) */

/* inspect's --comm-group (Chakra input only); set by the option parser,
 * freed by wisp_cmd_inspect. */
static char *inspect_comm_group;

/* The per-collective table of a Chakra workload: every communication node
 * of every rank, keyed by (op, group, bytes), with its measured duration.
 * O(nodes) plus a sort per row. */
static GArray *chakra_rows(const et_workload *w)
{
  GHashTable *index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  GArray *rows = g_array_new(FALSE, TRUE, sizeof(fe_coll_row));
  GPtrArray *times = g_ptr_array_new(), *seen = g_ptr_array_new_with_free_func((GDestroyNotify)g_hash_table_unref);
  for (int r = 0; r < w->n_ranks; r++) {
    const et_graph *g = w->ranks[r];
    for (uint32_t i = 0; i < g->n_nodes; i++) {
      et_comm tc;
      const et_comm *m = g->nodes[i].comm == ET_NONE ? NULL : et_workload_traced_comm(w, r, g->nodes[i].comm, &tc);
      if (m == NULL)
        continue;
      const char *op = g->nodes[i].type == ET_NODE_COMM_SEND ? "send" : g->nodes[i].type == ET_NODE_COMM_RECV ? "recv"
                       : et_coll_short_name(m->coll);
      const et_group *grp = m->group == ET_GROUP_WORLD ? NULL : et_workload_group(w, m->group);
      char *key = g_strdup_printf("%s|%u|%" G_GUINT64_FORMAT, op, m->group, m->bytes);
      gpointer hit = g_hash_table_lookup(index, key);
      guint row;
      if (hit == NULL) {
        fe_coll_row x = {0};
        x.op = g_strdup(op);
        x.group = g_strdup(grp ? grp->name : "world");
        x.group_ranks = grp ? grp->n_ranks : w->n_ranks;
        x.bytes = m->bytes;
        x.dtype = g_strdup("-");
        x.size_source = g_strdup("Chakra comm_size");
        g_array_append_val(rows, x);
        g_ptr_array_add(times, g_array_new(FALSE, FALSE, sizeof(sim_time_ps)));
        g_ptr_array_add(seen, g_hash_table_new(g_direct_hash, g_direct_equal));
        row = rows->len - 1;
        g_hash_table_insert(index, key, GUINT_TO_POINTER(row + 1));
      } else {
        row = GPOINTER_TO_UINT(hit) - 1;
        g_free(key);
      }
      g_array_append_val((GArray *)times->pdata[row], g->nodes[i].duration_ps);
      g_hash_table_add(seen->pdata[row], GINT_TO_POINTER(r + 1));
    }
  }
  fe_coll_rows_finish(rows, times, seen);
  g_ptr_array_free(seen, TRUE);
  g_hash_table_destroy(index);
  return rows;
}

/* The parallel layout inferred from the groups (chakra/et_scale.h): what
 * `--scale dp=N` would grow. */
static void print_layout(const et_workload *w)
{
  et_layout l;
  GError *e = NULL;
  if (!et_layout_infer(w, NULL, &l, &e)) {
    g_clear_error(&e);
    return;
  }
  GString *s = g_string_new(NULL);
  et_layout_describe(&l, w, s);
  fputs(s->str, stdout);
  g_string_free(s, TRUE);
  et_layout_clear(&l);
}

/* `wisp inspect` on a Chakra workload (wisp's own convert output among
 * them): ranks, node counts, groups and the per-collective table. */
static int inspect_chakra(const char *path, const char *comm_group, gboolean verbose)
{
  GError *error = NULL;
  et_workload *w = et_workload_load_groups(path, 0, comm_group, &error);
  if (w == NULL) {
    fprintf(stderr, "wisp inspect: error: %s\n", error->message);
    g_error_free(error);
    return 1;
  }
  printf("Chakra ET workload: %s, %d rank(s)%s%s\n", w->source, w->n_ranks, comm_group ? ", groups from " : "",
         comm_group ? comm_group : "");
  printf("  %4s %9s %9s %9s %12s\n", "rank", "nodes", "compute", "comm", "measured_ms");
  for (int r = 0; r < w->n_ranks; r++) {
    const et_graph *g = w->ranks[r];
    uint64_t comp = 0, comm = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
      comp += g->nodes[i].type == ET_NODE_COMP;
      comm += g->nodes[i].comm != ET_NONE;
    }
    char ms[32] = "-";
    if (w->measured_step_ps && w->measured_step_ps[r] >= 0)
      g_snprintf(ms, sizeof ms, "%.3f", (double)w->measured_step_ps[r] / 1e9);
    if (verbose || r < 16 || r == w->n_ranks - 1)
      printf("  %4d %9u %9" G_GUINT64_FORMAT " %9" G_GUINT64_FORMAT " %12s\n", r, g->n_nodes, comp, comm, ms);
    else if (r == 16)
      printf("  ... (%d more ranks: --verbose)\n", w->n_ranks - 17);
  }
  char *shared = et_workload_share_summary(w);
  if (shared) /* ranks equal up to a rank shift keep one graph (chakra/et_share.h) */
    printf("sharing: %s\n", shared);
  g_free(shared);
  printf("groups: %u\n", w->groups->len);
  for (guint k = 0; k < w->groups->len; k++) {
    const et_group *g = et_workload_group(w, k);
    printf("  %s: %d ranks [", g->name, g->n_ranks);
    for (int m = 0; m < g->n_ranks && m < 32; m++)
      printf("%s%d", m ? "," : "", g->ranks[m]);
    printf("%s]%s%s\n", g->n_ranks > 32 ? ",..." : "", g->desc ? " " : "", g->desc ? g->desc : "");
  }
  print_layout(w);
  GArray *rows = chakra_rows(w);
  fe_coll_rows_print(rows, stdout);
  fe_coll_rows_free(rows);
  et_workload_free(w);
  return 0;
}

gboolean wisp_kineto_cli_options(const char *cmd, int *argc, char ***argv, fe_kineto_options *opt, char **out_dir,
                                 char **prefix, gboolean *verbose, int *status)
{
  char *mode = NULL, *steps = NULL, *replicate = NULL, *card = NULL;
  int step = -1;
  double min_gap_ns = 1.0;
  gboolean strict = FALSE, host_launch = TRUE, replicate_missing = FALSE; /* convert --for astra-sim turns it off (cmd_convert.c) */
  GOptionEntry common[] = {
    {"mode", 'm', 0, G_OPTION_ARG_STRING, &mode, "compute model: kernels (default) or gap", "kernels|gap"},
    {"step", 0, 0, G_OPTION_ARG_INT, &step, "use ProfilerStep#N as the window", "N"},
    {"steps", 0, 0, G_OPTION_ARG_STRING, &steps, "steps A to B, every complete step (all), or the whole trace ignoring step markers (whole)", "A..B|all|whole"},
    {"strict", 0, 0, G_OPTION_ARG_NONE, &strict, "unmatched collectives, mismatches and guessed ranks are errors", NULL},
    {"replicate-from", 0, 0, G_OPTION_ARG_STRING, &replicate,
     "synthesize absent ranks from these traced ranks (symmetric assumption; 'all': every traced rank)", "R[,R...]|all"},
    {"replicate-missing", 0, 0, G_OPTION_ARG_NONE, &replicate_missing,
     "synthesize every absent rank from the traced ones (--replicate-from all)", NULL},
    {"min-gap-ns", 0, 0, G_OPTION_ARG_DOUBLE, &min_gap_ns, "idle gaps shorter than this are not emitted (default 1)", "NS"},
    {"card", 0, 0, G_OPTION_ARG_FILENAME, &card, "workload card (CCL-Bench YAML) sizing communication kernels that carry no size (DeepEP, custom all-reduce)", "FILE"},
    {NULL},
  };
  gboolean verb = FALSE;
  GOptionEntry host_off[] = {
    {"no-host-launch", 0, G_OPTION_FLAG_REVERSE, G_OPTION_ARG_NONE, &host_launch,
     "kernels mode: no CPU launch threads in the graph (idle before a GPU op is measured from its stream and cross-stream predecessors only)", NULL},
    {NULL},
  };
  GOptionEntry insp[] = {
    {"comm-group", 0, 0, G_OPTION_ARG_FILENAME, &inspect_comm_group, "Chakra input: communicator groups from FILE instead of the comm_group.json beside the .et files", "FILE"},
    {"verbose", 'v', 0, G_OPTION_ARG_NONE, &verb, "per-rank details: every count the frontend kept, skipped events, graph and host-model figures", NULL},
    {NULL},
  };
  GOptionEntry conv[] = {
    {"output", 'o', 0, G_OPTION_ARG_FILENAME, out_dir, "output directory (created if absent)", "DIR"},
    {"prefix", 'p', 0, G_OPTION_ARG_STRING, prefix, "file prefix (default: trace)", "PREFIX"},
    {"host-launch", 0, 0, G_OPTION_ARG_NONE, &host_launch, "kernels mode: write the launching CPU threads (default)", NULL},
    {"for", 0, 0, G_OPTION_ARG_STRING, &wisp_convert_for, "write for another tool: astra-sim (see wisp-convert(1))", "astra-sim"},
    {NULL},
  };
  GError *error = NULL;
  GOptionContext *ctx = g_option_context_new(out_dir ? "TRACE... -o DIR - convert profiler traces (Kineto or XLA) to Chakra ET"
                                                     : "TRACE... - summarize profiler traces (Kineto or XLA)");
  g_option_context_add_main_entries(ctx, common, NULL);
  g_option_context_add_main_entries(ctx, out_dir ? conv : insp, NULL);
  g_option_context_add_main_entries(ctx, host_off, NULL);
  g_option_context_set_description(ctx, out_dir ?
      "TRACE is a PyTorch profiler (Kineto) trace: a directory of per-rank *.json / *.json.gz files, files, or\n"
      "globs; the rank of each file comes from distributedInfo.rank.  XLA/TPU profiles (*.xplane.pb[.gz],\n"
      "*.trace.json[.gz], or a directory of them) are read too, with the options of\n"
      "`wisp convert PROFILE --help`; the options above are the Kineto ones." :
      "TRACE is per-rank Kineto traces (a directory, files, globs; the rank of each file comes from\n"
      "distributedInfo.rank), XLA profiles (options: `wisp inspect PROFILE --help`), or a Chakra ET prefix or\n"
      "directory.  Concise by default; --verbose adds every per-rank count.");
  gboolean ok = g_option_context_parse(ctx, argc, argv, &error);
  g_option_context_free(ctx);
  if (verbose)
    *verbose = verb;
  if (!ok) {
    fprintf(stderr, "wisp %s: %s\n", cmd, error->message);
    g_error_free(error);
    *status = 2;
    return FALSE;
  }
  /* From here on every exit goes through `out`, which frees the option
   * strings; on success opt->replicate_from is owned by the caller
   * (wisp_kineto_cli_options_clear). */
  gboolean good = FALSE;
  fe_kineto_options_init(opt);
  opt->strict = strict;
  opt->host_launch = host_launch;
  opt->step = step;
  opt->replicate_from = replicate;
  opt->allow_partial = replicate_missing;
  *status = 2;
  if (min_gap_ns < 0 || !wisp_ps_from_ns(min_gap_ns, &opt->min_gap_ps)) {
    fprintf(stderr, "wisp %s: --min-gap-ns must be a non-negative number\n", cmd);
    goto out;
  }
  if (mode && !strcmp(mode, "gap"))
    opt->mode = FE_KINETO_GAP;
  else if (mode && strcmp(mode, "kernels")) {
    fprintf(stderr, "wisp %s: unknown --mode '%s' (use kernels or gap)\n", cmd, mode);
    goto out;
  }
  wisp_load_options sel = WISP_LOAD_OPTIONS_INIT;
  GError *serr = NULL;
  if (!wisp_steps_parse(steps, step, &sel, &serr)) {
    fprintf(stderr, "wisp %s: %s\n", cmd, serr->message);
    g_error_free(serr);
    goto out;
  }
  opt->step = sel.step;
  opt->step_lo = sel.step_lo;
  opt->step_hi = sel.step_hi;
  opt->all_steps = sel.all_steps;
  opt->whole_trace = sel.whole_trace;
  if (*argc < 2) {
    fprintf(stderr, "wisp %s: give at least one TRACE directory or file (see wisp %s --help)\n", cmd, cmd);
    goto out;
  }
  if (card) {
    GError *cerr = NULL;
    cfg_card *doc = cfg_card_load(card, &cerr);
    opt->card = doc ? wisp_card_sizes(doc, &cerr) : NULL;
    cfg_card_free(doc);
    if (opt->card == NULL) {
      fprintf(stderr, "wisp %s: %s\n", cmd, cerr->message);
      g_error_free(cerr);
      goto out;
    }
  }
  good = TRUE;
  *status = 0;
out:
  g_free(mode);
  g_free(steps);
  g_free(card);
  if (!good)
    wisp_kineto_cli_options_clear(opt);
  return good;
}

void wisp_kineto_cli_options_clear(fe_kineto_options *opt)
{
  g_free((char *)opt->replicate_from);
  opt->replicate_from = NULL;
  fe_card_free((fe_workload_card *)opt->card);
  opt->card = NULL;
}

/* `wisp inspect` on Nsight Systems exports: the reader's report, of the
 * steps the options select. */
static int inspect_nsys(const wisp_inputs *in, const fe_kineto_options *kopt)
{
  GError *error = NULL;
  fe_nsys_report rep;
  fe_nsys_report_init(&rep);
  fe_nsys_options opt;
  fe_nsys_options_from_kineto(&opt, kopt);
  et_workload *w = fe_nsys_load_opts((const char *const *)in->files->pdata, (int)in->files->len, &opt, &rep, &error);
  if (w == NULL) {
    fprintf(stderr, "wisp inspect: error: %s\n", error->message);
    g_error_free(error);
    fe_nsys_report_clear(&rep);
    return 1;
  }
  fe_nsys_report_print(&rep, stdout);
  fe_nsys_report_clear(&rep);
  et_workload_free(w);
  return 0;
}

/* `wisp inspect` on PyTorch execution traces alone: the reader's report,
 * then per rank its graph's nodes and collectives. */
static int inspect_pet(const wisp_inputs *in)
{
  GError *error = NULL;
  et_workload *w = NULL;
  if (!wisp_pet_inputs(in, &w, stdout, &error)) {
    fprintf(stderr, "wisp inspect: error: %s\n", error->message);
    g_error_free(error);
    return 1;
  }
  for (int r = 0; r < w->n_ranks; r++) {
    const et_graph *g = w->ranks[r];
    uint64_t bytes = 0;
    for (uint32_t k = 0; k < g->n_comms; k++)
      bytes += g->comms[k].bytes;
    printf("rank %d: %u nodes, %u collectives, %" G_GUINT64_FORMAT " B (%s)\n", r, g->n_nodes, g->n_comms, bytes,
           g->source ? g->source : "-");
  }
  print_layout(w);
  et_workload_free(w);
  return 0;
}

int wisp_cmd_inspect(int argc, char **argv)
{
  fe_kineto_options opt;
  int status = 0;
  gboolean verbose = FALSE;
  if (!wisp_kineto_cli_options("inspect", &argc, &argv, &opt, NULL, NULL, &verbose, &status))
    return status;
  /* A summary works on the ranks that were traced: absent ones are
   * synthesized only for matching, with a warning naming them. */
  opt.allow_partial = TRUE;
  status = 1;
  fe_kineto_report rep;
  GError *error = NULL;
  wisp_inputs in;
  if (!wisp_inputs_resolve((const char *const *)argv + 1, argc - 1, &in, &error)) {
    fprintf(stderr, "wisp inspect: error: %s\n", error->message);
    g_error_free(error);
    wisp_kineto_cli_options_clear(&opt);
    return 1;
  }
  wisp_inputs_print_ignored(&in, stderr);
  if (strcmp(in.kind, "chakra") == 0) {
    status = inspect_chakra(in.files->pdata[0], inspect_comm_group, verbose);
    wisp_inputs_clear(&in);
    wisp_kineto_cli_options_clear(&opt);
    g_clear_pointer(&inspect_comm_group, g_free);
    return status;
  }
  if (inspect_comm_group) {
    fprintf(stderr, "wisp inspect: error: --comm-group applies to Chakra workloads (.et files); %s is %s input\n",
            argv[1], in.kind);
    wisp_inputs_clear(&in);
    wisp_kineto_cli_options_clear(&opt);
    g_clear_pointer(&inspect_comm_group, g_free);
    return 1;
  }
  if (strcmp(in.kind, "nsys") == 0) {
    status = inspect_nsys(&in, &opt);
    wisp_inputs_clear(&in);
    wisp_kineto_cli_options_clear(&opt);
    return status;
  }
  if (strcmp(in.kind, "pytorch_et") == 0) {
    status = inspect_pet(&in);
    wisp_inputs_clear(&in);
    wisp_kineto_cli_options_clear(&opt);
    return status;
  }
  if (strcmp(in.kind, "kineto") != 0) {
    fprintf(stderr, "wisp inspect: error: %s is %s input; inspect reads Kineto traces, XLA profiles, PyTorch "
            "execution traces and Chakra ET\n", argv[1], in.kind);
    wisp_inputs_clear(&in);
    wisp_kineto_cli_options_clear(&opt);
    return 1;
  }
  double t0 = wisp_wall_seconds();
  et_workload *w = fe_kineto_load((const char *const *)in.files->pdata, (int)in.files->len, &opt, &rep, &error);
  /* A failed load prints the error alone: the partial report would show
   * files never read (rank -1, no path, world size 0). */
  if (w)
    fe_kineto_report_print_ex(&rep, verbose, stdout);
  if (w && in.pet_files->len > 0) {
    fputc('\n', stdout);
    if (!wisp_pet_inputs(&in, &w, stdout, &error))
      g_clear_pointer(&w, et_workload_free);
  }
  wisp_inputs_clear(&in);
  double dt = wisp_wall_seconds() - t0;
  uint64_t bytes = 0;
  for (int i = 0; i < rep.n_files; i++)
    bytes += rep.ranks[i].bytes_read;
  if (w)
    print_layout(w);
  if (w)
    printf("\nloaded in %.3f s (%.1f MB/s of JSON)\n", dt, dt > 0 ? (double)bytes / dt / 1e6 : 0.0);
  fe_kineto_report_clear(&rep);
  if (!w) {
    fprintf(stderr, "wisp inspect: error: %s\n", error->message);
    g_error_free(error);
  } else {
    et_workload_free(w);
    status = 0;
  }
  wisp_kineto_cli_options_clear(&opt);
  return status;
}
