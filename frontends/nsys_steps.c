/* nsys_steps.c: step windows of Nsight Systems exports from NVTX ranges
 * (nsys_internal.h, doc/nsys.md "Steps").
 *
 * A step marker is an NVTX range (NVTX_EVENTS with an end; text or textId
 * -> StringIds) named as the PyTorch profiler names its steps and model
 * executions, which reach NVTX when PyTorch's record_function ranges are
 * emitted as NVTX (torch.autograd.profiler.emit_nvtx, nsys
 * --pytorch=autograd-nvtx; PyTorch may append ", op_id = ..." or
 * ", sizes = [...]" after the name): "ProfilerStep#N" is step N; vLLM's
 * "execute_context_..." and SGLang's "run_batch" are model executions,
 * numbered 0.. by start time as the Kineto frontend numbers them.
 *
 * A GPU op belongs to the step whose range, on the op's process, encloses
 * its anchor: the start of the CUDA runtime call that launched it
 * (correlationId, the same process) when the export has the columns, else
 * its own start.  The window of a device runs from its first step's
 * start to the later of its last step's end and the end of the GPU work
 * anchored in the steps; its markers are those of the process that ran
 * its ops (globalTid / globalPid bits 24..47, NVIDIA's documented
 * encoding), or every marker of the file when the export cannot say.
 * Selection as for Kineto traces: --step N, --steps A..B, --steps all
 * (steps without GPU work dropped from the ends), --steps whole (markers
 * ignored), else the last step with GPU work.
 *
 * Time O(R log R + S log S + M log S) for R NVTX ranges, S GPU ops and M
 * markers of a device; memory O(R + S).
 */
#include "frontends/nsys_internal.h"

#include <stdlib.h>
#include <string.h>

void fe_nsys_options_init(fe_nsys_options *o)
{
  memset(o, 0, sizeof *o);
  o->step = o->step_lo = o->step_hi = -1;
}

void fe_nsys_options_from_kineto(fe_nsys_options *o, const fe_kineto_options *k)
{
  *o = (fe_nsys_options){k->step, k->step_lo, k->step_hi, k->all_steps, k->whole_trace, k->card && k->card->inference};
}

/* The step number of an NVTX range's name: N for "ProfilerStep#N", -1 for
 * a model execution, -2 when the name is no step marker.  O(length). */
static int64_t marker_number(const char *name)
{
  static const char step[] = "ProfilerStep#";
  if (g_str_has_prefix(name, step)) {
    const char *p = name + sizeof step - 1;
    char *end = NULL;
    if (!g_ascii_isdigit(*p))
      return -2;
    guint64 n = g_ascii_strtoull(p, &end, 10);
    return (*end == '\0' || *end == ',') && n < G_MAXINT32 ? (int64_t)n : -2;
  }
  if (g_str_has_prefix(name, "execute_context_"))
    return -1;
  size_t n = strcspn(name, ",");
  if (n >= 9 && strncmp(name + n - 9, "run_batch", 9) == 0 && (n == 9 || name[n - 10] == ':' || name[n - 10] == ' '))
    return -1;
  return -2;
}

static int cmp_marker(gconstpointer a, gconstpointer b)
{
  const ns_marker *x = a, *y = b;
  if (x->n != y->n)
    return x->n < y->n ? -1 : 1;
  return x->start < y->start ? -1 : x->start > y->start;
}

static int cmp_marker_start(gconstpointer a, gconstpointer b)
{
  const ns_marker *x = a, *y = b;
  return x->start < y->start ? -1 : x->start > y->start;
}

GArray *ns_step_markers(sqlite3 *db, const char *path, gboolean executions, gboolean *inference, GError **error)
{
  static const char *const cols[] = {"start", "end", "text", "textId", NULL};
  static const char *const tid[] = {"globalTid", NULL};
  GArray *m = g_array_new(FALSE, FALSE, sizeof(ns_marker));
  *inference = FALSE;
  if (!ns_has_columns(db, "NVTX_EVENTS", cols))
    return m;
  char *sql = g_strdup_printf("SELECT n.start, n.end, coalesce(n.text, s.value), %s FROM NVTX_EVENTS n LEFT JOIN "
                              "StringIds s ON s.id = n.textId WHERE n.end IS NOT NULL AND "
                              "(coalesce(n.text, s.value) LIKE 'ProfilerStep#%%' OR coalesce(n.text, s.value) LIKE "
                              "'execute_context_%%' OR coalesce(n.text, s.value) LIKE '%%run_batch%%')",
                              ns_has_columns(db, "NVTX_EVENTS", tid) ? "(n.globalTid >> 24) & 16777215" : "-1");
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  gboolean numbered = FALSE, unnumbered = FALSE;
  char *bad = NULL; /* the first marker whose times are unusable */
  if (rc == SQLITE_OK)
    rc = SQLITE_ROW;
  while (rc == SQLITE_ROW && bad == NULL && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    const unsigned char *t = sqlite3_column_text(st, 2);
    int64_t n = t ? marker_number((const char *)t) : -2;
    if (n == -2)
      continue;
    /* A step's start becomes the device's clock origin: a start near
     * -2^63 or 2^63 ns wrapped every time turned into ps (a silent wrong
     * step time); text read as 0.  Reversed ranges are skipped, as before. */
    char *why = ns_time_why(st, 0, "start");
    why = why ? why : ns_time_why(st, 1, "end");
    if (why) {
      bad = g_strdup_printf("table NVTX_EVENTS, the step range '%.60s': %s", (const char *)t, why);
      g_free(why);
      continue;
    }
    if (sqlite3_column_int64(st, 1) < sqlite3_column_int64(st, 0))
      continue;
    ns_marker x = {sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), n};
    numbered |= n >= 0 && !executions;
    unnumbered |= n < 0 || executions;
    g_array_append_val(m, x);
  }
  sqlite3_finalize(st);
  if (bad || rc != SQLITE_DONE) {
    if (bad)
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: %s; the export is damaged", path, bad);
    else
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: reading the NVTX step ranges failed: %s (%s)", path,
                  sqlite3_errmsg(db), sql);
    g_free(bad);
    g_free(sql);
    g_array_free(m, TRUE);
    return NULL;
  }
  g_free(sql);
  if (unnumbered && numbered) { /* model executions win over ProfilerStep ranges */
    for (guint i = m->len; i-- > 0;)
      if (g_array_index(m, ns_marker, i).n >= 0)
        g_array_remove_index(m, i);
  }
  if (unnumbered) { /* numbered by start time, per process */
    g_array_sort(m, cmp_marker_start);
    GHashTable *count = g_hash_table_new(g_int64_hash, g_int64_equal);
    for (guint i = 0; i < m->len; i++) {
      ns_marker *x = &g_array_index(m, ns_marker, i);
      x->n = GPOINTER_TO_INT(g_hash_table_lookup(count, &x->pid));
      g_hash_table_replace(count, &x->pid, GINT_TO_POINTER((int)x->n + 1));
    }
    g_hash_table_destroy(count);
  }
  g_array_sort(m, cmp_marker);
  *inference = unnumbered;
  return m;
}

char *ns_anchor_sql(sqlite3 *db, const char *table, const char *alias, char **join)
{
  static const char *const rt[] = {"start", "correlationId", "globalTid", NULL};
  static const char *const op_pid[] = {"correlationId", "globalPid", NULL};
  static const char *const op_corr[] = {"correlationId", NULL};
  if (!ns_has_columns(db, "CUPTI_ACTIVITY_KIND_RUNTIME", rt) || !ns_has_columns(db, table, op_corr)) {
    *join = g_strdup("");
    return g_strdup_printf("%s.start", alias);
  }
  /* The launches grouped once (one row per correlation and process), joined
   * through SQLite's automatic index: O((R + K) log R).  A correlated
   * subquery per op scans the runtime table each time (O(K x R): minutes on
   * 10^5 rows). */
  gboolean pid = ns_has_columns(db, table, op_pid);
  *join = g_strdup_printf(" LEFT JOIN (SELECT correlationId c, (globalTid >> 24) & 16777215 p, min(start) s FROM "
                          "CUPTI_ACTIVITY_KIND_RUNTIME GROUP BY c%s) l ON l.c = %s.correlationId%s%s%s", pid ? ", p" : "",
                          alias, pid ? " AND l.p = ((" : "", pid ? alias : "", pid ? ".globalPid >> 24) & 16777215)" : "");
  return g_strdup_printf("coalesce(l.s, %s.start)", alias);
}

char *ns_pid_sql(sqlite3 *db, const char *table, const char *alias)
{
  static const char *const cols[] = {"globalPid", NULL};
  return ns_has_columns(db, table, cols) ? g_strdup_printf("((%s.globalPid >> 24) & 16777215)", alias)
                                         : g_strdup("-1");
}

/* The markers of process pid (every marker when pid < 0 or the process
 * has none), steps of one number merged (the earliest start, the latest
 * end: several threads of the process may mark the step).  Sorted by
 * number.  O(M). */
static GArray *device_markers(const GArray *all, int64_t pid)
{
  gboolean own = FALSE;
  for (guint i = 0; pid >= 0 && i < all->len && !own; i++)
    own = g_array_index(all, ns_marker, i).pid == pid;
  GArray *m = g_array_new(FALSE, FALSE, sizeof(ns_marker));
  for (guint i = 0; i < all->len; i++) {
    const ns_marker *x = &g_array_index(all, ns_marker, i);
    if (own && x->pid != pid)
      continue;
    ns_marker *last = m->len ? &g_array_index(m, ns_marker, m->len - 1) : NULL;
    if (last && last->n == x->n) {
      last->start = MIN(last->start, x->start);
      last->end = MAX(last->end, x->end);
    } else {
      g_array_append_val(m, *x);
    }
  }
  return m;
}

/* Whether any of the n sorted anchors lies in [s, e).  O(log n). */
static gboolean has_gpu(const int64_t *a, guint n, int64_t s, int64_t e)
{
  guint lo = 0, hi = n;
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    if (a[mid] < s)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && a[lo] < e;
}

static int cmp_i64(gconstpointer a, gconstpointer b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* The selected markers [*lo, *hi] of the n sorted ones; FALSE with the
 * error naming the file when the steps asked for are absent. */
static gboolean pick(const ns_marker *m, guint n, const int64_t *anchors, guint ns, const fe_nsys_options *opt,
                     const char *path, guint *lo, guint *hi, GError **error)
{
  *lo = 0;
  *hi = n - 1;
  if (opt->step >= 0 || opt->step_lo >= 0) {
    int64_t a = opt->step >= 0 ? opt->step : opt->step_lo, b = opt->step >= 0 ? opt->step : opt->step_hi;
    while (*lo < n && m[*lo].n < a)
      (*lo)++;
    guint k = *lo;
    while (k < n && m[k].n <= b)
      k++;
    if (k == *lo) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: no ProfilerStep#%" G_GINT64_FORMAT "%s (the export's "
                  "NVTX step ranges are #%" G_GINT64_FORMAT "..#%" G_GINT64_FORMAT ")", path, a,
                  a == b ? "" : " or later in the range asked for", m[0].n, m[n - 1].n);
      return FALSE;
    }
    *hi = k - 1;
    return TRUE;
  }
  while (*hi > 0 && !has_gpu(anchors, ns, m[*hi].start, m[*hi].end))
    (*hi)--;
  if (!opt->all_steps)
    *lo = *hi;
  while (*lo < *hi && !has_gpu(anchors, ns, m[*lo].start, m[*lo].end))
    (*lo)++;
  return TRUE;
}

gboolean ns_step_window(const GArray *markers, const ns_span *sp, guint n_sp, const fe_nsys_options *opt,
                        const char *path, ns_window *w, GError **error)
{
  memset(w, 0, sizeof *w);
  w->first = w->last = w->used_first = w->used_last = -1;
  int64_t pid = n_sp ? sp[0].pid : -1;
  GArray *m = device_markers(markers, pid);
  if (m->len == 0 || opt->whole_trace) {
    if (m->len) {
      w->first = g_array_index(m, ns_marker, 0).n;
      w->last = g_array_index(m, ns_marker, m->len - 1).n;
    }
    g_array_free(m, TRUE);
    if (opt->step >= 0 || opt->step_lo >= 0) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: a step was asked for, but the export has no "
                  "ProfilerStep#N, execute_context_* or run_batch NVTX range (doc/nsys.md \"Steps\")", path);
      return FALSE;
    }
    return TRUE;
  }
  const ns_marker *mk = (const ns_marker *)(void *)m->data;
  w->first = mk[0].n;
  w->last = mk[m->len - 1].n;
  GArray *anchors = g_array_sized_new(FALSE, FALSE, sizeof(int64_t), n_sp);
  for (guint i = 0; i < n_sp; i++)
    g_array_append_val(anchors, sp[i].anchor);
  g_array_sort(anchors, cmp_i64);
  guint lo, hi;
  gboolean ok = pick(mk, m->len, (const int64_t *)(void *)anchors->data, n_sp, opt, path, &lo, &hi, error);
  g_array_free(anchors, TRUE);
  if (ok) {
    w->have = TRUE;
    w->used_first = mk[lo].n;
    w->used_last = mk[hi].n;
    w->n_steps = (int)(hi - lo + 1);
    w->ws = mk[lo].start;
    w->wa = MAX(mk[hi].end, w->ws + 1);
    w->we = w->wa;
    for (guint i = 0; i < n_sp; i++)
      if (sp[i].anchor >= w->ws && sp[i].anchor < w->wa)
        w->we = MAX(w->we, sp[i].end);
  }
  g_array_free(m, TRUE);
  return ok;
}
