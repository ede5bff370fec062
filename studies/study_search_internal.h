/* study_search_internal.h: what the files of `wisp search` share (not
 * installed).  study_search.c enumerates, runs and ranks;
 * study_search_points.c simulates one point and keeps its result file;
 * study_search_out.c prints and writes the outputs.  Calls go from the
 * first to the others, never back. */
#ifndef STUDY_SEARCH_INTERNAL_H
#define STUDY_SEARCH_INTERNAL_H

#include "studies/study_search.h"

G_BEGIN_DECLS

/* One search run: the model, the card, the replay options, the search
 * options, the enumerated points (index = point number) and the
 * directory of the point files. */
typedef struct {
  const et_model *m;
  const et_model_card *c;
  const sim_replay_options *opt;
  const study_search_opts *o;
  GArray *points;              /* study_search_point */
  const char *dir;
} study_search_ctx;

/* Simulates point p of ctx (a study_search_ctx) and commits its result
 * file; FALSE only when the cluster cannot be opened or the file cannot
 * be written (a configuration that does not fit or fails is a result). */
gboolean study_search_point_run(void *ctx, int p, GError **error);
/* Reads point p's result file into the point (status, step, reason):
 * FALSE when it is missing, incomplete, or from other inputs or another
 * configuration.  O(file). */
gboolean study_search_point_read(const study_search_ctx *sc, int p);
/* Removes the point files of the n points and the directory (a
 * temporary directory's cleanup). */
void study_search_points_remove(const char *dir, int n);

G_END_DECLS
#endif
