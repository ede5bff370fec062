/* fuzz_nsys.c: libFuzzer harness for the Nsight Systems SQLite reader
 * (frontends/nsys.c).
 *
 * Each input is written to a file named *.sqlite (libsqlite3 reads files,
 * not memory) and loaded: the schema check, the queries and the graph
 * building see the fuzzed database.  libsqlite3 itself validates the file
 * format; what this finds is wisp's handling of odd schemas and values
 * (missing columns, NULLs, text where numbers are expected, negative or
 * reversed times).  Errors are expected and must be WISP_ERROR; crashes,
 * leaks, hangs and sanitizer reports are bugs.  Build and run with
 * fuzz/run.sh.
 */
#include "config.h"

#include "frontends/nsys.h"
#include "fuzz/fuzz_util.h"

#include <stdint.h>
#include <stddef.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The facts' promises (nsys_facts.c): every time read is in [0, 2^61 ps]
 * before its origin is subtracted, so a grid or sample time lies within
 * +-2^61 ps and a grid ends at or after its start, with at least one
 * block; every sample is a percentage from 0 to 100. */
static void check_facts(const fe_nsys_facts *f)
{
  for (int r = 0; r < f->n_ranks; r++) {
    for (guint i = 0; i < f->grids[r]->len; i++) {
      const fe_nsys_grid *x = &g_array_index(f->grids[r], fe_nsys_grid, i);
      g_assert(x->start >= -SIM_TIME_LIMIT && x->start <= SIM_TIME_LIMIT && x->end >= x->start &&
               x->end <= SIM_TIME_LIMIT && x->blocks >= 1);
    }
    for (guint i = 0; i < f->p2p[r]->len; i++) {
      const fe_nsys_sample *x = &g_array_index(f->p2p[r], fe_nsys_sample, i);
      g_assert(x->t >= -SIM_TIME_LIMIT && x->t <= SIM_TIME_LIMIT && x->value >= 0 && x->value <= 100);
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *path = fuzz_path("in.sqlite");
  fuzz_write(path, data, size);
  GError *error = NULL;
  const char *paths[] = {path};
  fe_nsys_report rep;
  fe_nsys_report_init(&rep);
  et_workload *w = fe_nsys_load(paths, 1, &rep, &error);
  g_assert(w != NULL || (error != NULL && error->domain == WISP_ERROR));
  /* The device facts the metrics read (nsys_facts.c) from the same bytes:
   * a clean result or a wisp error, never a crash; on a loadable export
   * they name as many ranks as the graphs. */
  fe_nsys_facts f;
  GError *ferr = NULL;
  if (fe_nsys_facts_load(paths, 1, &f, &ferr)) {
    g_assert(w == NULL || f.n_ranks == w->n_ranks);
    check_facts(&f);
    fe_nsys_facts_clear(&f);
  } else {
    g_assert(ferr != NULL && ferr->domain == WISP_ERROR);
  }
  g_clear_error(&ferr);
  et_workload_free(w);
  g_clear_error(&error);
  fe_nsys_report_clear(&rep);
  /* The step windows (nsys_steps.c) with every step and the steps taken
   * as model executions: the graphs and the facts on the same clock. */
  fe_nsys_options opt;
  fe_nsys_options_init(&opt);
  opt.all_steps = TRUE;
  opt.executions = TRUE;
  w = fe_nsys_load_opts(paths, 1, &opt, NULL, &error);
  g_assert(w != NULL || (error != NULL && error->domain == WISP_ERROR));
  if (fe_nsys_facts_load_opts(paths, 1, &opt, &f, &ferr)) {
    g_assert(w == NULL || f.n_ranks == w->n_ranks);
    check_facts(&f);
    fe_nsys_facts_clear(&f);
  }
  g_clear_error(&ferr);
  et_workload_free(w);
  g_clear_error(&error);
  g_free(path);
  return 0;
}
