/* cmd_sweep_merge.c: `wisp sweep-merge -o PREFIX SHARD...`: joins sharded
 * sweep outputs into the unsharded files (studies/study_sweep.c). */
#include "config.h"
#include "cli/wisp_cli.h"
#include "studies/study_sweep.h"

int wisp_cmd_sweep_merge(int argc, char **argv)
{
  char *out = NULL;
  gboolean svg = FALSE;
  GOptionEntry entries[] = {
    {"output", 'o', 0, G_OPTION_ARG_FILENAME, &out, "write PREFIX.csv, PREFIX.jsonl and PREFIX.svg", "PREFIX"},
    {NULL},
  };
  GError *error = NULL;
  GOptionContext *ctx = g_option_context_new("SHARD... - merge the outputs of wisp sweep --shard K/N runs");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(ctx,
      "Each SHARD is a prefix (DIR/NAME.shard-K-of-N) or its .csv/.jsonl file.  Every point must appear once.\n"
      "Example: wisp sweep-merge -o out/ccl DIR1/ccl.shard-1-of-2 DIR2/ccl.shard-2-of-2");
  int status = 0;
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    fprintf(stderr, "wisp sweep-merge: %s\n", error->message);
    g_clear_error(&error);
    status = 2;
  } else if (out == NULL || argc < 2) {
    fprintf(stderr, "wisp sweep-merge: give -o PREFIX and at least one shard (see wisp sweep-merge --help)\n");
    status = 2;
  } else if (!study_sweep_merge_full(out, argv + 1, argc - 1, &svg, &error)) {
    status = wisp_cli_fail(error);
  } else if (svg) {
    printf("merged %d shards into %s.csv, %s.jsonl, %s.svg\n", argc - 1, out, out, out);
  } else {
    printf("merged %d shards into %s.csv, %s.jsonl (no chart: no point finished)\n", argc - 1, out, out);
  }
  g_option_context_free(ctx);
  g_free(out);
  return status;
}
