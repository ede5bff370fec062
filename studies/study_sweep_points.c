/* study_sweep_points.c: runs a sweep's pending points, each committed
 * as its own row file, through the worker runner of study_points.c; finds
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
 * (common/wisp_memory.h): that ends the worker, and the runner
 * (study_points.c) has the sweep record the point with the message
 * (point_out_of_memory below). */
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

/* Adapts run_point to the generic runner. */
static gboolean sweep_point_fn(void *ctx, int p, GError **error)
{
  return run_point(ctx, p, error);
}

/* Point p's worker ran out of memory: its row is an error row with the
 * message, which names the point and the memory ("not enough memory for
 * point 7 of the sweep S (a replay of N ranks of W): needs more than ...").
 * Runs in the sweep's own process. */
static gboolean point_out_of_memory(void *ctx, int p, const char *message, GError **error)
{
  const sweep_ctx *c = ctx;
  study_summary r = {0};
  char *text = study_sweep_format_point(c, p, &r, message);
  char *path = study_sweep_point_file(c, p);
  gboolean written = wisp_write_file_atomic(path, text, strlen(text), error);
  g_free(path);
  g_free(text);
  return written;
}

gboolean study_sweep_run_points(const sweep_ctx *c, const study_sweep_options *o, const int *pending, int n_pending,
                                int total, int already, GError **error)
{
  study_points_runner r = {.fn = sweep_point_fn, .on_memory = point_out_of_memory, .ctx = (void *)c,
                           .jobs = o->jobs, .progress = o->progress, .on_point = o->on_point, .on_point_ctx = o->on_point_ctx, .who = "wisp sweep"};
  return study_points_run(&r, pending, n_pending, total, already, error);
}
