/* test_repart.h: what the re-partitioning tests share (test_repartition,
 * test_repartition_annot, test_repartition_sp): running a ground-truth
 * job with its card beside its traces, and the step time of a
 * `wisp simulate --json` report.  Header-only, for tests. */
#ifndef WISP_TEST_REPART_H
#define WISP_TEST_REPART_H

#include <cjson/cJSON.h>

#include "regress/gt_parallel.h"

/* Runs p; with dir, writes its traces and card.yaml there.  Its true step (ns). */
G_GNUC_UNUSED static int64_t test_repart_run(const gt_par_params *p, const char *dir)
{
  int64_t step = 0;
  GError *error = NULL;
  g_assert_true(gt_par_run(p, dir, &step, &error));
  g_assert_no_error(error);
  if (dir) {
    char *card = gt_par_card(p), *path = g_build_filename(dir, "card.yaml", NULL);
    g_assert_true(g_file_set_contents(path, card, -1, NULL));
    g_free(card);
    g_free(path);
  }
  return step;
}

/* step_time_ns of a --json report. */
G_GNUC_UNUSED static double test_repart_step(const char *json)
{
  char *text = NULL;
  g_assert_true(g_file_get_contents(json, &text, NULL, NULL));
  cJSON *o = cJSON_Parse(text);
  g_assert_nonnull(o);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "step_time_ns");
  g_assert_nonnull(v);
  double ns = cJSON_IsString(v) ? g_ascii_strtod(v->valuestring, NULL) : v->valuedouble;
  cJSON_Delete(o);
  g_free(text);
  return ns;
}

#endif
