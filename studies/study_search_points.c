/* study_search_points.c: one point of `wisp search` simulated and its
 * result kept in a file of its own (study_search.h: resume and shards
 * read these files back).  A point file is five text lines:
 *
 *   wisp search point 1
 *   input_sha256 <the inputs' digest>
 *   point P dp D tp T pp S ep E mb M sched NAME
 *   status simulated|does_not_fit|failed
 *   step_time_ps N | reason TEXT (newlines made spaces)
 *
 * written atomically (wisp_write_file_atomic), so a killed run leaves
 * either the whole file or none. */
#include "config.h"
#include "studies/study_search_internal.h"
#include "studies/study.h"

#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

static char *point_file(const char *dir, int p)
{
  char name[32];
  g_snprintf(name, sizeof name, "P%07d.point", p);
  return g_build_filename(dir, name, NULL);
}

static char *point_line(int p, const study_search_point *pt)
{
  return g_strdup_printf("point %d dp %d tp %d pp %d ep %d cp %d mb %d sched %s", p, pt->rq.dp, pt->rq.tp,
                         pt->rq.pp, pt->rq.ep, MAX(pt->rq.cp, 1), pt->rq.mb, et_sched_name((et_sched)pt->rq.sched));
}

static const char *status_word(study_point_status s)
{
  return s == STUDY_PT_SIMULATED ? "simulated" : s == STUDY_PT_NO_MEMORY ? "does_not_fit" : "failed";
}

/* Builds and replays the point on the cluster fitted to its GPUs: the
 * status, the step or the reason land in *p.  FALSE only when the
 * cluster cannot be opened. */
static gboolean simulate(const study_search_ctx *sc, study_search_point *p, GError **error)
{
  GError *e = NULL;
  GString *how = g_string_new(NULL);
  et_workload *w = et_repart_build("search", sc->m, sc->c, &p->rq, how, &e);
  g_string_free(how, TRUE);
  if (w == NULL) {
    p->status = e->code == WISP_ERROR_UNSUPPORTED ? STUDY_PT_NO_MEMORY : STUDY_PT_FAILED;
    p->why = g_strdup(e->message);
    g_error_free(e);
    return TRUE;
  }
  char *resolved = NULL, *notes = NULL;
  topo_variant *v = study_cluster_open(sc->o->cluster, w->n_ranks, &resolved, &notes, error);
  g_free(resolved);
  g_free(notes);
  if (v == NULL) {
    et_workload_free(w);
    return FALSE;
  }
  study_summary s;
  if (study_run_point(w, v, sc->opt, &s, &e)) {
    p->status = STUDY_PT_SIMULATED;
    p->step = s.step_time;
  } else {
    p->status = STUDY_PT_FAILED;
    p->why = g_strdup(e->message);
    g_error_free(e);
  }
  topo_variant_free(v);
  et_workload_free(w);
  return TRUE;
}

gboolean study_search_point_run(void *ctx, int p, GError **error)
{
  const study_search_ctx *sc = ctx;
  study_search_point pt = g_array_index(sc->points, study_search_point, p);
  pt.why = NULL;
  if (!simulate(sc, &pt, error))
    return FALSE;
  char *line = point_line(p, &pt);
  GString *t = g_string_new(NULL);
  g_string_append_printf(t, "wisp search point 1\ninput_sha256 %s\n%s\nstatus %s\n", sc->o->digest, line,
                         status_word(pt.status));
  if (pt.status == STUDY_PT_SIMULATED) {
    g_string_append_printf(t, "step_time_ps %" G_GINT64_FORMAT "\n", (gint64)pt.step);
  } else {
    g_strdelimit(pt.why, "\r\n", ' ');
    g_string_append_printf(t, "reason %s\n", pt.why);
  }
  char *path = point_file(sc->dir, p);
  gboolean ok = wisp_write_file_atomic(path, t->str, t->len, error);
  g_free(path);
  g_free(line);
  g_free(pt.why);
  g_string_free(t, TRUE);
  return ok;
}

/* Parses the five lines of a point file into pt; FALSE when they do not
 * match the digest and the configuration. */
static gboolean parse_point(char **l, const char *digest, const char *want, study_search_point *pt)
{
  if (g_strv_length(l) < 5 || strcmp(l[0], "wisp search point 1") || !g_str_has_prefix(l[1], "input_sha256 ") ||
      strcmp(l[1] + 13, digest) || strcmp(l[2], want) || !g_str_has_prefix(l[3], "status "))
    return FALSE;
  const char *st = l[3] + 7;
  if (strcmp(st, "simulated") == 0 && g_str_has_prefix(l[4], "step_time_ps ")) {
    char *end;
    gint64 v = g_ascii_strtoll(l[4] + 13, &end, 10);
    if (*end || v <= 0)
      return FALSE;
    pt->status = STUDY_PT_SIMULATED;
    pt->step = (sim_time_ps)v;
    return TRUE;
  }
  if ((strcmp(st, "does_not_fit") && strcmp(st, "failed")) || !g_str_has_prefix(l[4], "reason "))
    return FALSE;
  pt->status = strcmp(st, "failed") == 0 ? STUDY_PT_FAILED : STUDY_PT_NO_MEMORY;
  g_free(pt->why);
  pt->why = g_strdup(l[4] + 7);
  return TRUE;
}

gboolean study_search_point_read(const study_search_ctx *sc, int p)
{
  study_search_point *pt = &g_array_index(sc->points, study_search_point, p);
  char *path = point_file(sc->dir, p), *text = NULL, *want = point_line(p, pt);
  gboolean ok = FALSE;
  if (g_file_get_contents(path, &text, NULL, NULL) && g_str_has_suffix(text, "\n")) {
    char **l = g_strsplit(text, "\n", 7);
    ok = parse_point(l, sc->o->digest, want, pt);
    g_strfreev(l);
  }
  g_free(text);
  g_free(want);
  g_free(path);
  return ok;
}

void study_search_points_remove(const char *dir, int n)
{
  for (int p = 0; p < n; p++) {
    char *path = point_file(dir, p);
    g_unlink(path);
    g_free(path);
  }
  g_rmdir(dir);
}
