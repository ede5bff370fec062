/* study_jobs.c: several jobs on one fabric (study.h, doc/studies.md
 * "Several jobs on one fabric").
 *
 * The jobs become one cluster workload whose rank r is cluster rank r:
 * each job's graphs are copied onto the ranks its placement names, with
 * every rank they mention mapped, and its communicators renamed so they
 * never meet another job's.  One replay of that workload runs the jobs at
 * once, sharing links under whichever tier the network uses; a replay with
 * only one job's graphs (the others' ranks empty) is that job alone on the
 * same placement.  The difference is the slowdown from sharing. */
#include "config.h"
#include "chakra/et_view.h"
#include "studies/study.h"

#include <stdlib.h>
#include <string.h>

/* A non-negative integer filling [s, e). */
static gboolean parse_int(const char *s, const char *e, int *out)
{
  if (s == e)
    return FALSE;
  long v = 0;
  for (const char *p = s; p < e; p++) {
    if (*p < '0' || *p > '9' || v > G_MAXINT / 10)
      return FALSE;
    v = v * 10 + (*p - '0');
  }
  *out = (int)v;
  return TRUE;
}

gboolean study_jobs_parse_place(const char *spec, int **out, int *n, GError **error)
{
  GArray *a = g_array_new(FALSE, FALSE, sizeof(int));
  char **items = g_strsplit(spec ? spec : "", ",", -1);
  gboolean ok = TRUE;
  if (items[0] == NULL) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "empty placement: give cluster ranks as R, A-B or A-B:STEP "
                "items, e.g. 0-7 or 0-15:2 or 0-3,8-11");
    ok = FALSE;
  }
  for (char **it = items; ok && *it; it++) {
    const char *s = g_strstrip(*it), *end = s + strlen(s);
    const char *dash = strchr(s, '-'), *colon = strchr(s, ':');
    int lo = 0, hi = 0, step = 1;
    if (dash == NULL) {
      ok = colon == NULL && parse_int(s, end, &lo);
      hi = lo;
    } else {
      const char *hi_end = colon ? colon : end;
      ok = parse_int(s, dash, &lo) && parse_int(dash + 1, hi_end, &hi) && hi >= lo &&
           (colon == NULL || (parse_int(colon + 1, end, &step) && step >= 1));
    }
    if (!ok) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "placement '%s': item '%s' is not R, A-B or A-B:STEP "
                  "(cluster ranks, e.g. 0-7 or 0-15:2 or 0-3,8-11)", spec, s);
      break;
    }
    for (long r = lo; r <= hi; r += step) {
      int v = (int)r;
      g_array_append_val(a, v);
    }
  }
  g_strfreev(items);
  if (!ok) {
    g_array_free(a, TRUE);
    return FALSE;
  }
  *n = (int)a->len;
  *out = (int *)(void *)g_array_free(a, FALSE);
  return TRUE;
}

/* Checks every placement against the jobs and the cluster and reports
 * every problem at once, one line each (a job whose placement has the
 * wrong length, each job's first rank outside the network and how many,
 * each pair of jobs sharing ranks, the first one and how many).
 * O(ranks + jobs^2) time, O(ranks + jobs^2) memory. */
static gboolean check_places(const study_job *jobs, int n_jobs, int n_ranks, GError **error)
{
  int *owner = g_new(int, n_ranks > 0 ? n_ranks : 1);
  for (int r = 0; r < n_ranks; r++)
    owner[r] = -1;
  GString *msg = g_string_new(NULL);
  int problems = 0;
  /* shared[i * n_jobs + j]: ranks job j placed where job i already was. */
  int *shared = g_new0(int, (gsize)n_jobs * (gsize)n_jobs), *first = g_new0(int, (gsize)n_jobs * (gsize)n_jobs);
  for (int j = 0; j < n_jobs; j++) {
    if (jobs[j].n_place != jobs[j].w->n_ranks) {
      g_string_append_printf(msg, "\n  job %s has %d ranks but its placement lists %d cluster ranks; list one per "
                             "rank", jobs[j].name, jobs[j].w->n_ranks, jobs[j].n_place);
      problems++;
      continue;
    }
    int outside = 0, first_out = 0, first_c = 0;
    for (int r = 0; r < jobs[j].w->n_ranks; r++) {
      int c = jobs[j].place[r];
      if (c < 0 || c >= n_ranks) {
        if (outside++ == 0)
          first_out = r, first_c = c;
      } else if (owner[c] >= 0) {
        if (shared[owner[c] * n_jobs + j]++ == 0)
          first[owner[c] * n_jobs + j] = c;
      } else {
        owner[c] = j;
      }
    }
    if (outside) {
      g_string_append_printf(msg, "\n  job %s: rank %d is placed on cluster rank %d, but the network has ranks 0 to "
                             "%d (%d rank%s outside)", jobs[j].name, first_out, first_c, n_ranks - 1, outside,
                             outside == 1 ? "" : "s");
      problems++;
    }
  }
  for (int i = 0; i < n_jobs; i++)
    for (int j = 0; j < n_jobs; j++)
      if (shared[i * n_jobs + j]) {
        g_string_append_printf(msg, "\n  jobs %s and %s are both placed on cluster rank %d (%d shared rank%s); give "
                               "each job its own ranks", jobs[i].name, jobs[j].name, first[i * n_jobs + j],
                               shared[i * n_jobs + j], shared[i * n_jobs + j] == 1 ? "" : "s");
        problems++;
      }
  g_free(shared);
  g_free(first);
  g_free(owner);
  if (problems == 1)
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s", msg->str + 3);
  else if (problems > 1)
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%d problems with the jobs' placements:%s", problems,
                msg->str);
  g_string_free(msg, TRUE);
  return problems == 0;
}

et_workload *study_jobs_merge(const study_job *jobs, int n_jobs, int n_ranks, int only, GError **error)
{
  if (n_jobs < 1 || n_ranks < 1) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "a multi-job study needs at least one job and one rank");
    return NULL;
  }
  if (!check_places(jobs, n_jobs, n_ranks, error))
    return NULL;
  GString *src = g_string_new(NULL);
  for (int j = 0; j < n_jobs; j++)
    if (only < 0 || only == j)
      g_string_append_printf(src, "%s%s", src->len ? " + " : "", jobs[j].name);
  et_workload *m = et_workload_new(n_ranks, src->str);
  g_string_free(src, TRUE);
  gboolean ok = TRUE;
  for (int j = 0; j < n_jobs && ok; j++) {
    if (only >= 0 && only != j)
      continue;
    const study_job *job = &jobs[j];
    const et_workload *w = job->w;
    /* Groups: the job's, renamed and mapped, then its world. */
    guint ng = w->groups->len;
    uint32_t *gmap = g_new(uint32_t, ng + 1);
    for (guint k = 0; k < ng && ok; k++) {
      const et_group *g = et_workload_group(w, k);
      int *ranks = g_new(int, g->n_ranks);
      for (int i = 0; i < g->n_ranks; i++)
        ranks[i] = job->place[g->ranks[i]];
      char *name = g_strdup_printf("%s/%s", job->name, g->name);
      gmap[k] = et_workload_add_group(m, name, g->desc, ranks, g->n_ranks);
      if (gmap[k] == ET_NONE) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "job %s: communicator '%s' clashes with another job's; "
                    "give the jobs distinct names", job->name, name);
        ok = FALSE;
      }
      g_free(name);
      g_free(ranks);
    }
    char *wname = g_strdup_printf("%s/world", job->name);
    gmap[ng] = ok ? et_workload_add_group(m, wname, "world", job->place, w->n_ranks) : ET_NONE;
    if (ok && gmap[ng] == ET_NONE) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "job %s: communicator '%s' clashes with another job's; "
                  "give the jobs distinct names", job->name, wname);
      ok = FALSE;
    }
    g_free(wname);
    for (int r = 0; r < w->n_ranks && ok; r++) {
      et_graph *g = et_graph_copy(w->ranks[r]);
      for (uint32_t c = 0; c < g->n_comms; c++) {
        et_comm *x = &g->comms[c], tc;
        *x = *et_workload_traced_comm(w, r, c, &tc); /* the rank's own record when it shares a graph */
        x->group = x->group == ET_GROUP_WORLD ? gmap[ng] : gmap[x->group];
        if (x->src >= 0 && x->src < w->n_ranks)
          x->src = job->place[x->src];
        if (x->dst >= 0 && x->dst < w->n_ranks)
          x->dst = job->place[x->dst];
        if (x->root >= 0 && x->root < w->n_ranks)
          x->root = job->place[x->root];
      }
      m->ranks[job->place[r]] = g;
    }
    g_free(gmap);
  }
  /* Ranks no job uses run nothing: one METADATA node (it finishes at 0;
   * a graph needs a node). */
  for (int r = 0; r < n_ranks && ok; r++) {
    if (m->ranks[r] != NULL)
      continue;
    et_builder *b = et_builder_new("(idle cluster rank)");
    et_builder_add_node(b, 1, ET_NODE_METADATA, "idle cluster rank", 0, 0);
    m->ranks[r] = et_builder_finish(b, 0, error);
    ok = m->ranks[r] != NULL;
  }
  if (!ok) {
    et_workload_free(m);
    return NULL;
  }
  return m;
}

/* The job's step in run r: the latest finish of its ranks. */
static sim_time_ps job_step(const study_job *job, const sim_result *r)
{
  sim_time_ps t = 0;
  for (int k = 0; k < job->w->n_ranks; k++)
    t = MAX(t, r->ranks[job->place[k]].finish);
  return t;
}

gboolean study_jobs_run(const study_job *jobs, int n_jobs, const topo *t, const sim_replay_options *opt,
                        study_job_result *out, sim_result **together, et_workload **merged, GError **error)
{
  int n_ranks = topo_n_ranks(t);
  sim_replay_options o = opt ? *opt : (sim_replay_options){0};
  sim_result *shared = NULL;
  et_workload *shared_w = NULL;
  gboolean ok = TRUE;
  for (int j = -1; j < n_jobs && ok; j++) {
    et_workload *m = study_jobs_merge(jobs, n_jobs, n_ranks, j, error);
    if (m == NULL) {
      ok = FALSE;
      break;
    }
    /* Only the shared run keeps the caller's observer and critical path
     * (the alone runs give step times only). */
    sim_replay_options oj = o;
    if (j >= 0) {
      oj.observer = NULL;
      oj.critical_path = FALSE;
      oj.quiet = TRUE;
    }
    sim_result *r = sim_replay_run(m, t, &oj, error);
    if (r == NULL) {
      g_prefix_error(error, "%s: ", j < 0 ? "jobs together" : jobs[j].name);
      et_workload_free(m);
      ok = FALSE;
      break;
    }
    if (j < 0) {
      for (int k = 0; k < n_jobs; k++)
        out[k].together = job_step(&jobs[k], r);
      shared = r;
      shared_w = m;
      continue;
    }
    out[j].alone = job_step(&jobs[j], r);
    out[j].slowdown_pct =
        out[j].alone > 0 ? 100.0 * (double)(out[j].together - out[j].alone) / (double)out[j].alone : 0.0;
    sim_result_free(r);
    et_workload_free(m);
  }
  if (ok && together != NULL) {
    *together = shared;
    shared = NULL;
    if (merged != NULL) {
      *merged = shared_w;
      shared_w = NULL;
    }
  }
  sim_result_free(shared);
  et_workload_free(shared_w);
  return ok;
}
