/* cmd_search.c: `wisp search WORKLOAD --card CARD --cluster C`: the
 * parallel configurations of a traced job, simulated and ranked
 * (studies/study_search.h; doc/repartition.md). */
#include "config.h"
#include "cli/wisp_cli.h"
#include "cli/wisp_load.h"
#include "cli/wisp_repart.h"
#include "studies/study.h"
#include "studies/study_search.h"

#include <string.h>

typedef struct {
  char *cluster, *objective, *json, *svg;
  int max_gpus, max_tp;
  double weight;
} search_args;

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
  study_search_opts so = {.cluster = a->cluster, .max_gpus = a->max_gpus > 0 ? a->max_gpus : w->n_ranks,
                          .max_tp = a->max_tp, .weight = strcmp(a->objective, "composite") == 0 ? a->weight : -1};
  if ((r = study_search_run(&m, &c, opt, &so, &error)) == NULL) {
    status = wisp_cli_fail(error);
    goto out;
  }
  study_search_print(r, &c, stdout);
  if ((a->json && !study_search_write_json(r, &c, a->json, &error)) ||
      (a->svg && !study_search_svg(r, a->svg, &error)))
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
  search_args a = {.max_tp = 8, .weight = 0.5};
  wisp_cli_common common;
  GOptionEntry common_entries[WISP_CLI_COMMON_ENTRIES];
  wisp_cli_common_entries(&common, common_entries);
  GOptionEntry entries[] = {
    {"cluster", 'c', 0, G_OPTION_ARG_FILENAME, &a.cluster, "network: preset name (resized to each configuration's "
     "GPUs) or file", "PRESET|CONFIG"},
    {"network", 'n', 0, G_OPTION_ARG_FILENAME, &a.cluster, "same as --cluster", "CONFIG"},
    {"max-gpus", 0, 0, G_OPTION_ARG_INT, &a.max_gpus, "GPUs available (default: the traced job's)", "N"},
    {"max-tp", 0, 0, G_OPTION_ARG_INT, &a.max_tp, "largest tensor-parallel degree (the scale-up domain; default 8)",
     "N"},
    {"objective", 0, 0, G_OPTION_ARG_STRING, &a.objective, "rank by step time (default) or CCL-Bench's composite "
     "w T0/T + (1 - w) N0/N", "step|composite"},
    {"weight", 0, 0, G_OPTION_ARG_DOUBLE, &a.weight, "the composite's w, 0..1 (default 0.5)", "W"},
    {"json", 'j', 0, G_OPTION_ARG_FILENAME, &a.json, "write every point as JSON to FILE (atomically)", "FILE"},
    {"svg", 0, 0, G_OPTION_ARG_FILENAME, &a.svg, "write step time against GPUs with the Pareto front (SVG)", "FILE"},
    {NULL},
  };
  GError *error = NULL;
  GOptionContext *ctx = g_option_context_new("WORKLOAD... - simulate and rank the job's parallel configurations");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_add_main_entries(ctx, common_entries, NULL);
  g_option_context_set_description(ctx, "Needs --card (the model: layers, heads, sizes, batch, micro-batches, GPU).\n"
                                   "Example: wisp search build/demo/workload/llm --card examples/cards/example-llm.yaml "
                                   "--cluster dgx-a100 --svg front.svg");
  int status = 2;
  sim_replay_options opt = {0};
  wisp_load_options lo;
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    fprintf(stderr, "wisp search: %s\n", error->message);
  } else if (argc < 2 || a.cluster == NULL || common.scale.card == NULL) {
    fprintf(stderr, "wisp search: give a WORKLOAD, --card CARD and --cluster PRESET|CONFIG (see wisp search --help)\n");
  } else if (common.scale.scale) {
    fprintf(stderr, "wisp search: --scale is not an option of search (it enumerates the configurations itself)\n");
  } else if (a.objective && strcmp(a.objective, "step") && strcmp(a.objective, "composite")) {
    fprintf(stderr, "wisp search: --objective %s: use step or composite\n", a.objective);
  } else if (a.weight < 0 || a.weight > 1 || a.max_tp < 1 || a.max_gpus < 0) {
    fprintf(stderr, "wisp search: --weight must be in 0..1, --max-tp >= 1, --max-gpus >= 1\n");
  } else if (!wisp_output_declare(a.json, "--json", &error) || !wisp_output_declare(a.svg, "--svg", &error) ||
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
  g_free(a.json);
  g_free(a.svg);
  wisp_cli_common_clear(&common);
  wisp_output_reset();
  return status;
}
