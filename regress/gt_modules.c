/* gt_modules.c: the module ranges a ground-truth trace writes (PyTorch's
 * with_modules: python_function "nn.Module: X" around a module's forward
 * on the thread that runs it), from the module path of each launch
 * (gt_job_set_module; gt_model_internal.h, gt_module_spans).
 *
 * Per thread, in program order, the launches' paths are compared
 * component by component: a component the next launch shares stays open,
 * the others close at the end of the last launch inside them and the new
 * ones open at the next launch's start, so the ranges nest.  A launch
 * without a path closes every range.  O(launches x path depth).
 */
#include "config.h"
#include "regress/gt_model_internal.h"

#include <string.h>

#define MAX_DEPTH 16

typedef struct {
  const gt_job *j;
  int thread;
  GArray *out;
  char *open[MAX_DEPTH];       /* the open components (g_strndup) */
  int64_t since[MAX_DEPTH];
  int n;
  int64_t last_end;
} walk;

static void close_to(walk *w, int depth)
{
  while (w->n > depth) {
    w->n--;
    gt_module_span s = { w->since[w->n], w->last_end - w->since[w->n], w->thread,
                         g_string_chunk_insert_const(w->j->names, w->open[w->n]) };
    g_array_append_val(w->out, s);
    g_free(w->open[w->n]);
  }
}

/* The launch a: keep the components it shares, close the rest, open its own. */
static void visit(walk *w, const action *a)
{
  char **parts = a->module ? g_strsplit(a->module, "/", MAX_DEPTH) : NULL;
  int n = parts ? (int)g_strv_length(parts) : 0, common = 0;
  while (common < n && common < w->n && !strcmp(parts[common], w->open[common]))
    common++;
  close_to(w, common);
  for (int k = common; k < n; k++) {
    w->open[k] = g_strdup(parts[k]);
    w->since[k] = a->start_ns;
  }
  w->n = n;
  w->last_end = a->end_ns;
  g_strfreev(parts);
}

GArray *gt_module_spans(const gt_job *j, int rank)
{
  const rank_state *rs = &j->r[rank];
  GArray *out = g_array_new(FALSE, FALSE, sizeof(gt_module_span));
  for (int t = 0; t < GT_MAX_THREADS; t++) {
    if (!rs->thread_acts[t])
      continue;
    walk w = { .j = j, .thread = t, .out = out };
    for (guint i = 0; i < rs->thread_acts[t]->len; i++) {
      const action *a = &g_array_index(rs->actions, action, g_array_index(rs->thread_acts[t], int32_t, i));
      if (a->kind == A_LAUNCH)
        visit(&w, a);
    }
    close_to(&w, 0);
  }
  return out;
}
