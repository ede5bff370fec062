/* wisp_par.c: see wisp_par.h. */
#include "config.h"

#include "common/wisp_par.h"

gboolean wisp_threads_default(int *threads, GError **error)
{
  const char *env = g_getenv("WISP_THREADS");
  if (env && *env) {
    guint64 v;
    if (!g_ascii_string_to_unsigned(env, 10, 1, 4096, &v, NULL)) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "WISP_THREADS='%s': expected a whole number of worker threads from 1 to 4096 (1 = one file or "
                  "rank after another); unset it for one per core", env);
      return FALSE;
    }
    *threads = (int)v;
    return TRUE;
  }
  *threads = MAX(1, (int)g_get_num_processors());
  return TRUE;
}

typedef struct {
  int n;
  wisp_job_fn job;
  void *ctx;
  gint next;          /* next index to take */
  gint first_failed;  /* lowest failed index, n when none failed */
} job_run;

/* Takes indices in increasing order until none is left or the next one is
 * above a failed one; a failure lowers first_failed (compare-and-swap: it
 * only ever decreases). */
static gpointer worker(gpointer data)
{
  job_run *jr = data;
  for (;;) {
    int i = g_atomic_int_add(&jr->next, 1);
    if (i >= jr->n || i > g_atomic_int_get(&jr->first_failed))
      break;
    if (jr->job(jr->ctx, i, &jr->first_failed))
      continue;
    int cur = g_atomic_int_get(&jr->first_failed);
    while (i < cur && !g_atomic_int_compare_and_exchange(&jr->first_failed, cur, i))
      cur = g_atomic_int_get(&jr->first_failed);
  }
  return NULL;
}

int wisp_run_jobs(int n, int threads, wisp_job_fn job, void *ctx)
{
  job_run jr = { .n = n, .job = job, .ctx = ctx, .next = 0, .first_failed = n };
  int nt = MAX(1, MIN(threads, n));
  GThread **th = g_new0(GThread *, nt);
  for (int k = 1; k < nt; k++)
    th[k] = g_thread_try_new("wisp-worker", worker, &jr, NULL);
  worker(&jr);
  for (int k = 1; k < nt; k++)
    if (th[k])
      g_thread_join(th[k]);
  g_free(th);
  return g_atomic_int_get(&jr.first_failed);
}
