/* cmd_search.c: `wisp search WORKLOAD --card CARD --cluster C`: the
 * parallel configurations of a traced job, simulated and ranked
 * (studies/study_search.h; doc/repartition.md). */
#include "config.h"
#include "cli/wisp_cli.h"
#include "cli/wisp_load.h"
#include "cli/wisp_repart.h"
#include "studies/study.h"
#include "studies/study_search.h"
#include "config/cfg_card.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
  char *cluster, *objective, *json, *svg, *out_dir, *shard, *schedules;
  char *html, *tmp_json; /* --html, and the temporary JSON it reads when --json is not given */
  int max_gpus, max_tp, max_cp, jobs, shard_k, shard_n;
  gboolean resume, no_progress;
  double weight;
} search_args;

/* The digest the point files carry (--resume and shards reuse a point
 * only from the same inputs): the workload's content, the card's and the
 * cluster's bytes (or the preset name) and the replay options. */
static char *search_digest(const et_workload *w, const wisp_load_options *lo, const char *cluster,
                           const sim_replay_options *opt)
{
  GChecksum *ck = g_checksum_new(G_CHECKSUM_SHA256);
  char *wd = study_workload_digest(w), *text = NULL;
  gsize len = 0;
  g_checksum_update(ck, (const guchar *)wd, -1);
  if (g_file_get_contents(cfg_card_path(lo->card), &text, &len, NULL))
    g_checksum_update(ck, (const guchar *)text, (gssize)len);
  g_free(text);
  text = NULL;
  g_checksum_update(ck, (const guchar *)cluster, -1);
  if (g_file_test(cluster, G_FILE_TEST_IS_REGULAR) && g_file_get_contents(cluster, &text, &len, NULL))
    g_checksum_update(ck, (const guchar *)text, (gssize)len);
  g_free(text);
  char *opts = g_strdup_printf("slots=%u algo=%d:%d tier=%d:%d starts=%d", opt->compute_slots, opt->has_algo,
                               (int)opt->algo, opt->has_tier, (int)opt->tier, opt->measured_starts);
  g_checksum_update(ck, (const guchar *)opts, -1);
  if (sim_levers_active(&opt->levers)) {
    char *lv = sim_levers_describe(&opt->levers);
    g_checksum_update(ck, (const guchar *)lv, -1);
    g_free(lv);
  }
  char *digest = g_strdup(g_checksum_get_string(ck));
  g_checksum_free(ck);
  g_free(wd);
  g_free(opts);
  return digest;
}

/* A comma list of schedules (gpipe, 1f1b, interleaved_1f1b) into
 * scheds[3]; FALSE on an unknown or repeated name. */
static gboolean parse_schedules(const char *list, int *scheds, int *n)
{
  char **it = g_strsplit(list, ",", -1);
  gboolean ok = TRUE;
  *n = 0;
  for (int i = 0; ok && it[i]; i++) {
    int s = strcmp(it[i], "1f1b") == 0 ? ET_SCHED_1F1B : strcmp(it[i], "gpipe") == 0 ? ET_SCHED_GPIPE
            : strcmp(it[i], "interleaved_1f1b") == 0 ? ET_SCHED_INTERLEAVED : -1;
    for (int k = 0; k < *n && s >= 0; k++)
      s = scheds[k] == s ? -1 : s;
    ok = s >= 0 && *n < 3;
    if (ok)
      scheds[(*n)++] = s;
  }
  g_strfreev(it);
  return ok && *n > 0;
}

/* The model of the loaded workload: its layout from the card, the card's
 * model, then the layers read from the trace (printed). */
static gboolean read_model(const et_workload *w, const cfg_card *card, et_layout *l, et_model_card *c, et_model *m,
                           GError **error)
{
  et_card lc;
  if (!wisp_card_layout(card, TRUE, &lc, error))
    return FALSE;
  gboolean ok = et_layout_infer(w, &lc, l, error);
  g_free(lc.source);
  if (!ok)
    return FALSE;
  if (!wisp_card_model(card, l, c, error))
    return FALSE;
  if (!et_model_read(w, l, c, m, error))
    return FALSE;
  fprintf(stderr, "%s", m->how->str);
  return TRUE;
}

static int search_main(search_args *a, wisp_load_options *lo, sim_replay_options *opt, const char *const *paths,
                       int n)
{
  GError *error = NULL;
  et_layout l = {0};
  et_model_card c = {0};
  et_model m = {0};
  study_search_result *r = NULL;
  int status = 0;
  et_workload *w = wisp_load_workload_paths(paths, n, lo, &error);
  if (w == NULL || !wisp_cli_network_exists(a->cluster, &error) || !wisp_output_check(&error) ||
      !read_model(w, lo->card, &l, &c, &m, &error)) {
    status = wisp_cli_fail(error);
    goto out;
  }
  char *digest = search_digest(w, lo, a->cluster, opt);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  study_search_opts so = {.cluster = a->cluster, .max_gpus = a->max_gpus > 0 ? a->max_gpus : w->n_ranks,
                          .max_tp = a->max_tp, .max_cp = a->max_cp,
                          .weight = strcmp(a->objective, "composite") == 0 ? a->weight : -1,
                          .jobs = a->jobs > 0 ? a->jobs : (cores > 0 ? (int)cores : 1), .points_dir = a->out_dir,
                          .resume = a->resume, .progress = !a->no_progress && isatty(2), .shard_k = a->shard_k,
                          .shard_n = a->shard_n, .digest = digest};
  if (a->schedules)
    parse_schedules(a->schedules, so.scheds, &so.n_scheds); /* checked at option time */
  r = study_search_run(&m, &c, opt, &so, &error);
  g_free(digest);
  if (r == NULL) {
    status = wisp_cli_fail(error);
    goto out;
  }
  if (r->missing > 0) {
    printf("search: shard %d/%d: %d configurations simulated now, %d kept from %s; %d of %u configurations "
           "(other shards) have no result yet; rank them all with --resume -o %s once every shard has run\n",
           a->shard_k, a->shard_n, r->run_now, r->kept, a->out_dir, r->missing, r->points->len, a->out_dir);
    goto out;
  }
  study_search_print(r, &c, stdout);
  if ((a->json && !study_search_write_json(r, &c, a->json, &error)) ||
      (a->svg && !study_search_svg(r, a->svg, &error)) ||
      (a->html && !wisp_cli_write_html(a->json, a->tmp_json, a->html, &error)))
    status = wisp_cli_fail(error);
out:
  study_search_result_free(r);
  et_model_clear(&m);
  et_model_card_clear(&c);
  et_layout_clear(&l);
  if (w)
    et_workload_free(w);
  return status;
}

int wisp_cmd_search(int argc, char **argv)
{
  search_args a = {.max_tp = 8, .max_cp = 1, .weight = 0.5};
  wisp_cli_common common;
  GOptionEntry common_entries[WISP_CLI_COMMON_ENTRIES];
  wisp_cli_common_entries(&common, common_entries);
  GOptionEntry net_entries[WISP_CLI_NETWORK_ENTRIES];
  wisp_cli_network_entries(&a.cluster, "network: preset name (resized to each configuration's GPUs) or file",
                           net_entries);
  GOptionEntry entries[] = {
    {"max-gpus", 0, 0, G_OPTION_ARG_INT, &a.max_gpus, "GPUs available (default: the traced job's)", "N"},
    {"max-tp", 0, 0, G_OPTION_ARG_INT, &a.max_tp, "largest tensor-parallel degree (the scale-up domain; default 8)",
     "N"},
    {"max-cp", 0, 0, G_OPTION_ARG_INT, &a.max_cp, "largest context-parallel degree (ring attention; dense cards; "
     "default 1: no cp axis)", "N"},
    {"objective", 0, 0, G_OPTION_ARG_STRING, &a.objective, "rank by step time (default) or CCL-Bench's composite "
     "w T0/T + (1 - w) N0/N", "step|composite"},
    {"weight", 0, 0, G_OPTION_ARG_DOUBLE, &a.weight, "the composite's w, 0..1 (default 0.5)", "W"},
    {"json", 'j', 0, G_OPTION_ARG_FILENAME, &a.json, "write every point as JSON to FILE (atomically)", "FILE"},
    {"svg", 0, 0, G_OPTION_ARG_FILENAME, &a.svg, "write step time against GPUs with the Pareto front (SVG)", "FILE"},
    WISP_CLI_HTML_ENTRY(a.html),
    {"output", 'o', 0, G_OPTION_ARG_FILENAME, &a.out_dir, "keep each configuration's result in DIR (for --resume and "
     "--shard; default: a temporary directory)", "DIR"},
    {"jobs", 0, 0, G_OPTION_ARG_INT, &a.jobs, "worker processes (default: all cores)", "N"},
    {"resume", 0, 0, G_OPTION_ARG_NONE, &a.resume, "keep configurations already finished in DIR", NULL},
    {"shard", 0, 0, G_OPTION_ARG_STRING, &a.shard, "run only shard K of N (configurations p with p % N == K-1) into "
     "DIR; then rank all with --resume", "K/N"},
    {"no-progress", 0, 0, G_OPTION_ARG_NONE, &a.no_progress, "no progress bar even on a terminal", NULL},
    {"schedules", 0, 0, G_OPTION_ARG_STRING, &a.schedules, "pipeline schedules to enumerate, a comma list (default: "
     "the card's pipeline_schedule; interleaved_1f1b with the card's vpp, else 2)", "1f1b,gpipe,interleaved_1f1b"},
    {NULL},
  };
  GError *error = NULL;
  GOptionContext *ctx = g_option_context_new("WORKLOAD... - simulate and rank the job's parallel configurations");
  g_option_context_add_main_entries(ctx, net_entries, NULL);
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_add_main_entries(ctx, common_entries, NULL);
  g_option_context_set_description(ctx, "Needs --card (the model: layers, heads, sizes, batch, micro-batches, GPU).\n"
                                   "Example: wisp search build/demo/workload/llm --card examples/cards/example-llm.yaml "
                                   "--network dgx-a100 --svg front.svg\n"
                                   "Sharded (Slurm): each task runs --shard K/N -o DIR; then one run with --resume -o DIR ranks them.");
  int status = 2;
  sim_replay_options opt = {0};
  wisp_load_options lo;
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    fprintf(stderr, "wisp search: %s\n", error->message);
  } else if (argc < 2 || a.cluster == NULL || common.scale.card == NULL) {
    fprintf(stderr, "wisp search: give a WORKLOAD, --card CARD and " WISP_CLI_NETWORK_USAGE
            " (--cluster is the same option) (see wisp search --help)\n");
  } else if (common.scale.scale) {
    fprintf(stderr, "wisp search: --scale is not an option of search (it enumerates the configurations itself)\n");
  } else if (a.objective && strcmp(a.objective, "step") && strcmp(a.objective, "composite")) {
    fprintf(stderr, "wisp search: --objective %s: use step or composite\n", a.objective);
  } else if (a.weight < 0 || a.weight > 1 || a.max_tp < 1 || a.max_cp < 1 || a.max_gpus < 0 || a.jobs < 0) {
    fprintf(stderr, "wisp search: --weight must be in 0..1, --max-tp >= 1, --max-cp >= 1, --max-gpus >= 1, "
            "--jobs >= 1\n");
  } else if (a.shard && !wisp_cli_parse_shard(a.shard, &a.shard_k, &a.shard_n)) {
    fprintf(stderr, "wisp search: --shard takes K/N with 1 <= K <= N, e.g. 2/8 (got '%s')\n", a.shard);
  } else if (a.schedules && !parse_schedules(a.schedules, (int[3]){0}, &(int){0})) {
    fprintf(stderr, "wisp search: --schedules %s: give a comma list of distinct 1f1b, gpipe, interleaved_1f1b\n",
            a.schedules);
  } else if ((a.shard || a.resume) && a.out_dir == NULL) {
    fprintf(stderr, "wisp search: --%s needs -o DIR (where the configurations' results are kept)\n",
            a.shard ? "shard" : "resume");
  } else if (!wisp_cli_html_prepare(a.html, &a.json, &a.tmp_json, &error) ||
             !wisp_output_declare(a.json, "--json", &error) || !wisp_output_declare(a.svg, "--svg", &error) ||
             !wisp_cli_common_resolve(&common, &lo, &opt, &error)) {
    fprintf(stderr, "wisp search: %s\n", error->message);
  } else {
    if (a.objective == NULL)
      a.objective = g_strdup("step");
    status = search_main(&a, &lo, &opt, (const char *const *)argv + 1, argc - 1);
  }
  g_clear_error(&error);
  g_option_context_free(ctx);
  g_free(a.cluster);
  g_free(a.objective);
  wisp_cli_html_done(a.tmp_json);
  g_free(a.html);
  g_free(a.json);
  g_free(a.svg);
  g_free(a.out_dir);
  g_free(a.shard);
  g_free(a.schedules);
  wisp_cli_common_clear(&common);
  wisp_output_reset();
  return status;
}
