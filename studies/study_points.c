/* study_points.c: the parallel runner under sweep and search
 * (study_points_run, study_sweep.h): pending points run in worker
 * processes, each point committing its own result file.
 *
 * Every run forks at least one worker, also with one job, so that a point
 * which runs out of memory ends only its worker: GLib's allocation failure
 * cannot be survived inside a process, but the parent, whose memory is
 * untouched, can record that point (r->on_memory: the sweep's `error:`
 * row naming the point and the memory) and start the unfinished points of
 * that worker again in a new round.  Each round removes at least the
 * failed point, so there are at most as many rounds as points.
 *
 * Workers report over one pipe in fixed records of 1 KiB (below PIPE_BUF,
 * so each write is atomic and records never interleave): a point done, a
 * point whose fn failed (the message becomes the run's error), or a point
 * that ran out of memory (written by the hook common/wisp_memory.h calls
 * from the `wisp` command's allocation-failure handler, without
 * allocating).  A worker that dies without a record (a signal, a crash)
 * fails the run as before: finished points are kept, --resume goes on.
 *
 * A worker does not outlive its parent (Linux: PR_SET_PDEATHSIG): a sweep
 * or search killed by SIGTERM, SIGINT sent to it alone, or SIGKILL stops
 * its workers too (each removes its own temporary point file on the way,
 * see wisp_output_cleanup_on_signals), instead of leaving them to run
 * their points to the end and write into a directory the parent's signal
 * handler is removing (wisp search's temporary one).
 */
#include "config.h"
#include "studies/study_sweep.h"
#include "common/wisp_memory.h"
#include "common/wisp_util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <signal.h>
#include <sys/prctl.h>
#endif

enum { REC_DONE = 1, REC_FAILED, REC_MEMORY };

typedef struct {
  int32_t kind;
  int32_t point;
  int32_t code;       /* the WISP_ERROR code of a failure */
  char message[1012]; /* a failure's message, NUL-terminated, cut to fit */
} point_record;

G_STATIC_ASSERT(sizeof(point_record) == 1024 && sizeof(point_record) <= PIPE_BUF);

/* The worker's state for the memory hook: a static record (the hook may
 * not allocate) and the pipe. */
static point_record hook_rec;
static int hook_fd = -1;

static gboolean send_record(int fd, int kind, int point, int code, const char *message)
{
  point_record *rec = kind == REC_MEMORY ? &hook_rec : &(point_record){0};
  memset(rec, 0, sizeof *rec);
  rec->kind = kind;
  rec->point = point;
  rec->code = code;
  if (message)
    g_strlcpy(rec->message, message, sizeof rec->message);
  ssize_t n;
  while ((n = write(fd, rec, sizeof *rec)) < 0 && errno == EINTR)
    ;
  return n == (ssize_t)sizeof *rec;
}

/* The memory hook in a worker: reports the point now running.  Called by
 * the allocation-failure handler just before the process ends; uses only
 * memset, strlen-bounded copying and write. */
static gboolean memory_hook(const char *message, void *ctx)
{
  int point = GPOINTER_TO_INT(ctx);
  return hook_fd >= 0 && send_record(hook_fd, REC_MEMORY, point, 0, message);
}

/* Worker wk of jobs: runs pending[wk], pending[wk + jobs], ... and ends
 * the process. */
static G_GNUC_NORETURN void worker(const study_points_runner *r, const int *pending, int n_pending, int wk, int jobs,
                                   int fd)
{
  hook_fd = fd;
  for (int i = wk; i < n_pending; i += jobs) {
    GError *err = NULL;
    wisp_memory_set_failure_hook(memory_hook, GINT_TO_POINTER(pending[i]));
    if (!r->fn(r->ctx, pending[i], &err)) {
      wisp_memory_set_failure_hook(NULL, NULL);
      send_record(fd, REC_FAILED, pending[i], err->code, err->message);
      g_clear_error(&err);
      close(fd);
      _exit(1);
    }
    wisp_memory_set_failure_hook(NULL, NULL);
    if (r->on_point)
      r->on_point(r->on_point_ctx, pending[i]);
    send_record(fd, REC_DONE, pending[i], 0, NULL);
  }
  close(fd);
  _exit(0);
}

/* Redraws the bar at most 10 times a second (and at the end); *last holds
 * the time of the previous redraw. */
static void progress(int done, int total, double t0, gboolean show, double *last)
{
  if (!show)
    return;
  double now = wisp_wall_seconds();
  if (done < total && now - *last < 0.1)
    return;
  *last = now;
  double el = now - t0, rate = el > 0 ? done / el : 0;
  int width = 30, fill = total ? (int)((int64_t)width * done / total) : width;
  char bar[64];
  for (int i = 0; i < width; i++)
    bar[i] = i < fill ? '#' : '.';
  bar[width] = '\0';
  fprintf(stderr, "\r[%s] %d/%d points  %.1f points/s  ETA %.0f s ", bar, done, total, rate,
          rate > 0 ? (total - done) / rate : 0.0);
  if (done == total)
    fputc('\n', stderr);
  fflush(stderr);
}

/* What one round learned. */
typedef struct {
  GHashTable *settled;  /* points done or recorded as out of memory (point + 1: no NULL key) */
  GArray *memory;       /* point_record of the points that ran out of memory */
  char *failure;        /* the first fn failure's message */
  int failure_code;
  gboolean died;        /* a worker ended without a record, by a signal, or did not start */
  int done;             /* points settled so far (for the progress bar) */
  int reports;          /* failure and memory records: the workers that ended with status 1 on purpose */
} round_state;

/* Reads the workers' records until every worker closed the pipe. */
static void read_records(const study_points_runner *r, int fd, round_state *st, int already, int total, double t0,
                         double *last)
{
  point_record rec;
  size_t have = 0;
  for (;;) {
    ssize_t n = read(fd, (char *)&rec + have, sizeof rec - have);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    have += (size_t)n;
    if (have < sizeof rec)
      continue;
    have = 0;
    rec.message[sizeof rec.message - 1] = '\0';
    if (rec.kind == REC_DONE || rec.kind == REC_MEMORY) {
      g_hash_table_add(st->settled, GINT_TO_POINTER(rec.point + 1));
      st->done++;
      progress(already + st->done, total, t0, r->progress, last);
    }
    if (rec.kind == REC_MEMORY || rec.kind == REC_FAILED)
      st->reports++;
    if (rec.kind == REC_MEMORY)
      g_array_append_val(st->memory, rec);
    else if (rec.kind == REC_FAILED && st->failure == NULL) {
      st->failure = g_strdup(rec.message);
      st->failure_code = rec.code;
    }
  }
}

/* One round: forks the workers, collects their records and exit statuses. */
static void run_round(const study_points_runner *r, const int *pending, int n_pending, int already, int total,
                      double t0, double *last, round_state *st)
{
  int jobs = r->jobs < 1 ? 1 : r->jobs > n_pending ? n_pending : r->jobs;
  int fds[2];
  if (pipe(fds) != 0) {
    st->failure = g_strdup_printf("cannot create a pipe for the workers: %s", g_strerror(errno));
    st->failure_code = WISP_ERROR_IO;
    return;
  }
  fflush(NULL);
  pid_t *pids = g_new0(pid_t, jobs);
  int started = 0;
  pid_t parent = getpid();
  for (int wk = 0; wk < jobs; wk++) {
    pid_t pid = fork();
    if (pid < 0)
      break;
    if (pid == 0) {
#ifdef __linux__
      /* SIGTERM when the parent dies; it may have died before this line. */
      if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent)
        _exit(1);
#endif
      close(fds[0]);
      worker(r, pending, n_pending, wk, jobs, fds[1]);
    }
    pids[started++] = pid;
  }
  close(fds[1]);
  read_records(r, fds[0], st, already, total, t0, last);
  close(fds[0]);
  st->died = started < jobs;
  int ended_1 = 0;
  for (int i = 0; i < started; i++) {
    int ws = 0;
    while (waitpid(pids[i], &ws, 0) < 0 && errno == EINTR)
      ;
    if (WIFEXITED(ws) && WEXITSTATUS(ws) == 1)
      ended_1++;
    else if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
      st->died = TRUE;
  }
  /* Status 1 is a worker's own end after its failure or memory record;
   * more such ends than records is a death without one. */
  if (ended_1 > st->reports)
    st->died = TRUE;
  g_free(pids);
}

gboolean study_points_run(const study_points_runner *r, const int *pending, int n_pending, int total, int already,
                          GError **error)
{
  double t0 = wisp_wall_seconds(), last = 0;
  GArray *todo = g_array_new(FALSE, FALSE, sizeof(int));
  g_array_append_vals(todo, pending, (guint)n_pending);
  gboolean ok = TRUE;
  int settled_before = 0;
  while (ok && todo->len > 0) {
    round_state st = {g_hash_table_new(NULL, NULL), g_array_new(FALSE, FALSE, sizeof(point_record)), NULL, 0,
                      FALSE, settled_before, 0};
    run_round(r, (const int *)(void *)todo->data, (int)todo->len, already, total, t0, &last, &st);
    settled_before = st.done;
    /* The points that ran out of memory get their record in this process. */
    for (guint i = 0; i < st.memory->len && ok; i++) {
      const point_record *m = &g_array_index(st.memory, point_record, i);
      if (r->on_memory == NULL) { /* the run's error, as any failure of fn */
        if (st.failure == NULL) {
          st.failure = g_strdup(m->message);
          st.failure_code = WISP_ERROR_LIMIT;
        }
        break;
      }
      ok = r->on_memory(r->ctx, m->point, m->message, error);
    }
    if (ok && st.failure) {
      g_set_error(error, WISP_ERROR, st.failure_code, "%s", st.failure);
      ok = FALSE;
    } else if (ok && st.died) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_IO,
                  "%s: a worker failed or could not start; finished points are kept, rerun with --resume", r->who);
      ok = FALSE;
    }
    /* The next round: what the workers that ran out of memory left. */
    GArray *next = g_array_new(FALSE, FALSE, sizeof(int));
    for (guint i = 0; ok && i < todo->len; i++)
      if (!g_hash_table_contains(st.settled, GINT_TO_POINTER(g_array_index(todo, int, i) + 1)))
        g_array_append_val(next, g_array_index(todo, int, i));
    if (ok && next->len == todo->len) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: the workers ended without finishing a point; finished "
                  "points are kept, rerun with --resume", r->who);
      ok = FALSE;
    }
    g_array_free(todo, TRUE);
    todo = next;
    g_hash_table_destroy(st.settled);
    g_array_free(st.memory, TRUE);
    g_free(st.failure);
  }
  g_array_free(todo, TRUE);
  return ok;
}
