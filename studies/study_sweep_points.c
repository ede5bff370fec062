/* study_sweep_points.c: runs a sweep's pending points, each committed
 * as its own row file, in worker processes, with the progress bar; finds
 * the points a killed run finished (--resume).  See study_sweep.c for
 * the file scheme and the deterministic split of points over workers.
 */
#include "config.h"
#include "studies/study_sweep_internal.h"
#include "common/wisp_memory.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

char *study_sweep_point_file(const sweep_ctx *c, int p)
{
  char name[32];
  g_snprintf(name, sizeof name, "P%07d.row", p);
  return g_build_filename(c->dir, name, NULL);
}

/* --resume after a kill -9: removes the temporary files a killed writer
 * left in the points directory, only names it recognises
 * (P<7 digits>.row.tmp.<6 characters>, what wisp_write_file_atomic makes
 * of a point file).  Returns how many were removed.  O(files in dir). */
int study_sweep_remove_orphans(const char *dir)
{
  GDir *d = g_dir_open(dir, 0, NULL);
  int n = 0;
  const char *name;
  while (d && (name = g_dir_read_name(d)) != NULL) {
    size_t len = strlen(name);
    gboolean ours = len == 23 && name[0] == 'P' && g_str_has_prefix(name + 8, ".row.tmp.");
    for (int i = 1; ours && i < 8; i++)
      ours = g_ascii_isdigit(name[i]);
    if (ours) {
      char *path = g_build_filename(dir, name, NULL);
      n += g_unlink(path) == 0;
      g_free(path);
    }
  }
  if (d)
    g_dir_close(d);
  return n;
}

/* TRUE when point p's row file exists, is complete and belongs to this
 * spec (same digest, same point). */
gboolean study_sweep_point_done(const sweep_ctx *c, int p)
{
  char *path = study_sweep_point_file(c, p), *text = NULL;
  gboolean ok = FALSE;
  if (g_file_get_contents(path, &text, NULL, NULL)) {
    char *want_digest = g_strdup_printf("\"input_sha256\": \"%s\"", c->digest);
    char *want_point = g_strdup_printf("{\"point\": %d,", p);
    char *nl = strchr(text, '\n');
    ok = nl && g_str_has_prefix(nl + 1, want_point) && strstr(nl + 1, want_digest) && g_str_has_suffix(text, "}\n");
    g_free(want_digest);
    g_free(want_point);
  }
  g_free(text);
  g_free(path);
  return ok;
}

/* Configures point p (cluster + set, then the axes) and simulates it.
 * The point names the work for an allocation that fails in it
 * (common/wisp_memory.h): that ends the worker with the message, the
 * points already committed stay, and --resume goes on. */
static gboolean run_point(const sweep_ctx *c, int p, GError **error)
{
  char work[192];
  g_snprintf(work, sizeof work, "point %d of the sweep %.40s (a replay of %d ranks of %.80s)", p, c->s->name,
             c->w->n_ranks, c->w->source ? c->w->source : "the workload");
  wisp_memory_set_context(work);
  topo_variant *v = topo_variant_copy(c->base);
  sim_replay_options opt = c->opt;
  GError *perr = NULL;
  gboolean ok = TRUE;
  for (int a = 0; a < c->s->n_axes && ok; a++) {
    if (!study_spec_apply(c->s->axes[a].key, study_spec_value(c->s, p, a), v, &opt, &perr))
      ok = FALSE;
  }
  study_summary r = {0};
  if (ok)
    ok = study_run_point(c->w, v, &opt, &r, &perr);
  topo_variant_free(v);
  char *text = study_sweep_format_point(c, p, &r, ok ? NULL : perr->message);
  g_clear_error(&perr);
  char *path = study_sweep_point_file(c, p);
  gboolean written = wisp_write_file_atomic(path, text, strlen(text), error);
  g_free(path);
  g_free(text);
  return written;
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

/* Runs the pending points with `jobs` worker processes. */
gboolean study_sweep_run_points(const sweep_ctx *c, const study_sweep_options *o, const int *pending, int n_pending,
                                int total, int already, GError **error)
{
  double t0 = wisp_wall_seconds(), last = 0;
  int jobs = o->jobs > n_pending ? n_pending : o->jobs;
  if (jobs <= 1) {
    for (int i = 0; i < n_pending; i++) {
      if (!run_point(c, pending[i], error))
        return FALSE;
      if (o->on_point)
        o->on_point(o->on_point_ctx, pending[i]);
      progress(already + i + 1, total, t0, o->progress, &last);
    }
    return TRUE;
  }
  int fds[2];
  if (pipe(fds) != 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "cannot create a pipe for the workers: %s", g_strerror(errno));
    return FALSE;
  }
  fflush(NULL);
  pid_t *pids = g_new0(pid_t, jobs);
  int started = 0;
  for (int wk = 0; wk < jobs; wk++) {
    pid_t pid = fork();
    if (pid < 0)
      break;
    if (pid == 0) {
      close(fds[0]);
      int status = 0;
      for (int i = wk; i < n_pending; i += jobs) {
        GError *err = NULL;
        if (!run_point(c, pending[i], &err)) {
          fprintf(stderr, "wisp sweep: worker %d: %s\n", wk, err->message);
          g_clear_error(&err);
          status = 1;
          break;
        }
        if (o->on_point)
          o->on_point(o->on_point_ctx, pending[i]);
        ssize_t wr = write(fds[1], "x", 1);
        (void)wr;
      }
      close(fds[1]);
      _exit(status);
    }
    pids[started++] = pid;
  }
  close(fds[1]);
  int done = 0;
  char buf[256];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) != 0) {
    if (n < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    done += (int)n;
    progress(already + done, total, t0, o->progress, &last);
  }
  close(fds[0]);
  gboolean ok = started == jobs;
  for (int i = 0; i < started; i++) {
    int st = 0;
    while (waitpid(pids[i], &st, 0) < 0 && errno == EINTR)
      ;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
      ok = FALSE;
  }
  g_free(pids);
  if (!ok)
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO,
                "a sweep worker failed or could not start; finished points are kept, rerun with --resume");
  return ok;
}
