/* wisp_par.h: running independent jobs on worker threads, deterministically.
 *
 * Used wherever per-file or per-rank work is independent (Kineto parsing,
 * extraction and graph building; writing Chakra rank files).  The result
 * never depends on timing: jobs are taken in index order and none is
 * started above an index that has failed, so every job below the lowest
 * failure runs to completion and the lowest failure is found however the
 * workers interleave.  No globals: the shared state lives in the call.
 */
#ifndef WISP_PAR_H
#define WISP_PAR_H

#include "common/wisp_util.h"

G_BEGIN_DECLS

/* The worker count when the caller asks for none: WISP_THREADS when set (a
 * whole number from 1 to 4096; anything else is the user's to fix and a
 * WISP_ERROR_INVALID naming the value), else the number of processors. */
gboolean wisp_threads_default(int *threads, GError **error);

/* One job: index i of the run; returns FALSE when it failed (its error is
 * the caller's to keep, e.g. in a per-index slot).  first_failed is the
 * lowest failed index so far (read it with g_atomic_int_get), for a long
 * job that wants to give up when a lower one has failed. */
typedef gboolean (*wisp_job_fn)(void *ctx, int i, const gint *first_failed);

/* Runs job(ctx, i, ...) for i = 0 .. n-1 on min(threads, n) workers, the
 * calling thread being one of them (threads <= 1: in order in the calling
 * thread, stopping at the first failure).  A worker thread that cannot be
 * created only means fewer workers.  Returns the lowest failed index, or n
 * when every job succeeded.  O(1) shared work per job. */
int wisp_run_jobs(int n, int threads, wisp_job_fn job, void *ctx);

G_END_DECLS
#endif
