/* study_sweep.c: runs sweeps (study_sweep.h), resumably and in parallel,
 * and merges sharded outputs.
 *
 * Each finished point is committed as its own small file (CSV row + JSON
 * line) with wisp_write_file_atomic(), so a killed sweep keeps every point
 * it finished and never leaves a half-written row; the final CSV/JSONL are
 * assembled from those files in point order and written atomically too.
 * Output bytes depend only on the spec, the workload and the cluster, never
 * on -j, sharding or resumption.
 *
 * Parallelism uses worker processes (fork): each worker builds its own
 * topologies (route caches are not thread-safe) and shares the parent's
 * loaded workload copy-on-write.  Worker w takes the pending points
 * j, j + jobs, ... (j = w), so the split is deterministic; each reports a
 * finished point with one byte on a pipe, which drives the progress bar.
 */
#include "config.h"
#include "studies/study_sweep.h"
#include "replay/sim_report.h"
#include "common/wisp_json.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void study_sweep_stats_clear(study_sweep_stats *st)
{
  g_free(st->csv_path);
  g_free(st->jsonl_path);
  g_free(st->svg_path);
  if (st->errors)
    g_ptr_array_unref(st->errors);
  memset(st, 0, sizeof *st);
}

/* ---- CSV helpers ---- */

static void csv_field(GString *s, const char *f)
{
  if (strpbrk(f, ",\"\n\r") == NULL) {
    g_string_append(s, f);
    return;
  }
  g_string_append_c(s, '"');
  for (const char *p = f; *p; p++) {
    if (*p == '"')
      g_string_append_c(s, '"');
    g_string_append_c(s, *p);
  }
  g_string_append_c(s, '"');
}

/* Splits one CSV line (RFC 4180 quoting, no embedded newlines). */
static GPtrArray *csv_split(const char *line)
{
  GPtrArray *f = g_ptr_array_new_with_free_func(g_free);
  const char *p = line;
  for (;;) {
    GString *cur = g_string_new(NULL);
    if (*p == '"') {
      p++;
      while (*p) {
        if (*p == '"' && p[1] == '"') {
          g_string_append_c(cur, '"');
          p += 2;
        } else if (*p == '"') {
          p++;
          break;
        } else {
          g_string_append_c(cur, *p++);
        }
      }
    }
    while (*p && *p != ',')
      g_string_append_c(cur, *p++);
    g_ptr_array_add(f, g_string_free(cur, FALSE));
    if (*p != ',')
      break;
    p++;
  }
  return f;
}

/* ---- rows ---- */

static const char *const result_columns[] = {"step_time_ns", "compute_ns", "exposed_comm_ns", "overlapped_comm_ns",
                                             "idle_ns", "utility_pct", "status"};

static char *csv_header(const study_spec *s)
{
  GString *h = g_string_new("point,label");
  for (int a = 0; a < s->n_axes; a++) {
    g_string_append_c(h, ',');
    csv_field(h, s->axes[a].key);
  }
  for (size_t i = 0; i < G_N_ELEMENTS(result_columns); i++)
    g_string_append_printf(h, ",%s", result_columns[i]);
  g_string_append_c(h, '\n');
  return g_string_free(h, FALSE);
}

static const char *point_label(const study_spec *s, int p)
{
  return s->labels->len ? s->labels->pdata[p] : "";
}

typedef struct {
  const study_spec *s;
  const et_workload *w;
  const topo_variant *base;    /* cluster + set */
  sim_replay_options opt;      /* options after set */
  sim_time_ps base_step;
  char *dir;                   /* DIR/NAME.points */
  char *digest;                /* SHA-256 of spec, resolved cluster, options and workload */
} sweep_ctx;

/* Formats point p's CSV row and JSON line into one string (two lines). */
static char *format_point(const sweep_ctx *c, int p, const study_summary *r, const char *err)
{
  const study_spec *s = c->s;
  char nb[32];
  GString *row = g_string_new(NULL);
  g_string_append_printf(row, "%d,", p);
  csv_field(row, point_label(s, p));
  for (int a = 0; a < s->n_axes; a++) {
    g_string_append_c(row, ',');
    csv_field(row, study_spec_value(s, p, a));
  }
  double util = 0;
  if (err == NULL) {
    const sim_time_ps v[5] = {r->step_time, r->compute, r->exposed_comm, r->overlapped_comm, r->idle};
    for (int i = 0; i < 5; i++)
      g_string_append_printf(row, ",%s", wisp_ns_string(v[i], nb));
    util = c->base_step > 0 ? 100.0 * (double)(c->base_step - r->step_time) / (double)c->base_step : 0.0;
    g_string_append_printf(row, ",%.6f,ok\n", util);
  } else {
    g_string_append(row, ",,,,,,,");
    char *msg = g_strdup_printf("error: %s", err);
    g_strdelimit(msg, "\n\r", ' ');
    csv_field(row, msg);
    g_free(msg);
    g_string_append_c(row, '\n');
  }

  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  g_assert(m != NULL);
  wisp_json j;
  wisp_json_init(&j, m, 0);
  wisp_json_begin_object(&j, NULL);
  wisp_json_int(&j, "point", p); /* first: point_done() reads the row's prefix */
  wisp_json_int(&j, "schema_version", STUDY_SCHEMA_VERSION); /* doc/interfaces.md */
  wisp_json_int(&j, "n_points", s->n_points);
  wisp_json_string(&j, "sweep", s->name);
  wisp_json_string(&j, "label", point_label(s, p));
  wisp_json_begin_object(&j, "axes");
  for (int a = 0; a < s->n_axes; a++) {
    const char *k = s->axes[a].key, *v = study_spec_value(s, p, a), *why;
    wisp_json_begin_object(&j, k);
    wisp_json_string(&j, "value", v);
    wisp_bw_Bps bw;
    sim_time_ps t;
    if ((g_str_has_suffix(k, "_bw") || g_str_has_suffix(k, ".bandwidth")) && wisp_parse_bandwidth(v, &bw, &why))
      wisp_json_uint(&j, "Bps", bw);
    else if (g_str_has_suffix(k, "latency") && wisp_parse_time(v, &t, &why))
      wisp_json_ns(&j, "ns", t);
    wisp_json_end_object(&j);
  }
  wisp_json_end_object(&j);
  if (err == NULL) {
    wisp_json_ns(&j, "step_time_ns", r->step_time);
    wisp_json_ns(&j, "compute_ns", r->compute);
    wisp_json_ns(&j, "exposed_comm_ns", r->exposed_comm);
    wisp_json_ns(&j, "overlapped_comm_ns", r->overlapped_comm);
    wisp_json_ns(&j, "idle_ns", r->idle);
    wisp_json_double(&j, "utility_pct", util, 6);
    wisp_json_string(&j, "status", "ok");
  } else {
    wisp_json_string(&j, "status", "error");
    wisp_json_string(&j, "error", err);
  }
  wisp_json_ns(&j, "base_step_ns", c->base_step);
  wisp_json_string(&j, "workload", c->w->source);
  wisp_json_int(&j, "n_ranks", c->w->n_ranks);
  sim_report_json_unsimulated(&j, c->w);
  wisp_json_string(&j, "input_sha256", c->digest);
  wisp_json_string(&j, "wisp_version", PACKAGE_VERSION);
  wisp_json_end_object(&j);
  wisp_json_finish(&j);
  fclose(m);
  g_string_append_len(row, buf, (gssize)len);
  free(buf);
  return g_string_free(row, FALSE);
}

static char *point_file(const sweep_ctx *c, int p)
{
  char name[32];
  g_snprintf(name, sizeof name, "P%07d.row", p);
  return g_build_filename(c->dir, name, NULL);
}

/* --resume after a kill -9: removes the temporary files a killed writer
 * left in the points directory, only names it recognises
 * (P<7 digits>.row.tmp.<6 characters>, what wisp_write_file_atomic makes
 * of a point file).  Returns how many were removed.  O(files in dir). */
static int remove_orphans(const char *dir)
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
static gboolean point_done(const sweep_ctx *c, int p)
{
  char *path = point_file(c, p), *text = NULL;
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

/* Configures point p (cluster + set, then the axes) and simulates it. */
static gboolean run_point(const sweep_ctx *c, int p, GError **error)
{
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
  char *text = format_point(c, p, &r, ok ? NULL : perr->message);
  g_clear_error(&perr);
  char *path = point_file(c, p);
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
static gboolean run_parallel(const sweep_ctx *c, const study_sweep_options *o, const int *pending, int n_pending,
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

/* ---- chart ---- */

/* Step time over the first axis (categorical x, in value order of first
 * appearance), one line per combination of the other axes (at most 10;
 * more are left out and counted in the title). */
/* The number an axis value stands for, and its kind: 1 plain number, 2
 * bandwidth, 3 time, 4 size (units as in configs: "50GB/s", "500ns",
 * "64KiB").  0 when it is none of them (an algorithm name, a label). */
static int axis_number(const char *v, double *out)
{
  char *end;
  double d = g_ascii_strtod(v, &end);
  if (end != v && *end == '\0' && isfinite(d)) {
    *out = d;
    return 1;
  }
  const char *why;
  wisp_bw_Bps bw;
  sim_time_ps t;
  uint64_t sz;
  if (wisp_parse_bandwidth(v, &bw, &why)) {
    *out = (double)bw;
    return 2;
  }
  if (wisp_parse_time(v, &t, &why)) {
    *out = (double)t;
    return 3;
  }
  if (wisp_parse_size(v, &sz, &why)) {
    *out = (double)sz;
    return 4;
  }
  return 0;
}

/* The points of a sweep CSV's chart: x categories (the first axis's
 * values), series keys (the other axes' values, at most 10 series), each
 * point's x index, step time (ms) and series, and its name (label, else
 * axis values); points in error and in further series are counted. */
typedef struct {
  GPtrArray *xs, *names, *pnames;
  GArray *px, *py, *ps;
  int dropped, in_error;
} chart_points;

/* Reads the CSV's point lines (after the header) into cp. */
static void read_chart_points(char **lines, int n_axes, int step_col, int status_col, chart_points *cp)
{
  for (char **l = lines + 1; *l && **l; l++) {
    GPtrArray *f = csv_split(*l);
    if ((int)f->len <= status_col || strcmp(f->pdata[status_col], "ok") != 0) {
      cp->in_error++; /* said in the title, not silently left out */
      g_ptr_array_unref(f);
      continue;
    }
    const char *x = f->pdata[2];
    guint xi;
    if (!g_ptr_array_find_with_equal_func(cp->xs, x, g_str_equal, &xi)) {
      g_ptr_array_add(cp->xs, g_strdup(x));
      xi = cp->xs->len - 1;
    }
    GString *key = g_string_new(NULL);
    for (int a = 1; a < n_axes; a++)
      g_string_append_printf(key, "%s%s", a > 1 ? ", " : "", (char *)f->pdata[2 + a]);
    guint si;
    if (!g_ptr_array_find_with_equal_func(cp->names, key->str, g_str_equal, &si)) {
      if (cp->names->len >= 10) {
        cp->dropped++;
        g_string_free(key, TRUE);
        g_ptr_array_unref(f);
        continue;
      }
      g_ptr_array_add(cp->names, g_strdup(key->str));
      si = cp->names->len - 1;
    }
    g_string_free(key, TRUE);
    double x_v = xi, y_v = g_ascii_strtod(f->pdata[step_col], NULL) / 1e6;
    int s_v = (int)si;
    g_array_append_val(cp->px, x_v);
    g_array_append_val(cp->py, y_v);
    g_array_append_val(cp->ps, s_v);
    /* Point name for the one-series fallback below: its label, else all its axis values. */
    GString *pn = g_string_new(f->pdata[1]);
    if (pn->len == 0)
      for (int a = 0; a < n_axes; a++)
        g_string_append_printf(pn, "%s%s", a ? " " : "", (char *)f->pdata[2 + a]);
    g_ptr_array_add(cp->pnames, g_string_free(pn, FALSE));
    g_ptr_array_unref(f);
  }
}

/* One series per key of cp->names, holding its points in order; *sx and
 * *sy get the arrays the series point into (the caller frees them). */
static study_svg_series *split_series(const chart_points *cp, double ***sx_out, double ***sy_out)
{
  const GArray *px = cp->px, *py = cp->py, *ps = cp->ps;
  int ns = (int)cp->names->len;
  study_svg_series *series = g_new0(study_svg_series, ns ? ns : 1);
  double **sx = g_new0(double *, ns ? ns : 1), **sy = g_new0(double *, ns ? ns : 1);
  for (int i = 0; i < ns; i++) {
    sx[i] = g_new0(double, px->len);
    sy[i] = g_new0(double, px->len);
    series[i].label = cp->names->pdata[i];
  }
  for (guint k = 0; k < px->len; k++) {
    int si = g_array_index(ps, int, k);
    sx[si][series[si].n] = g_array_index(px, double, k);
    sy[si][series[si].n] = g_array_index(py, double, k);
    series[si].n++;
  }
  for (int i = 0; i < ns; i++) {
    series[i].x = sx[i];
    series[i].y = sy[i];
  }
  *sx_out = sx;
  *sy_out = sy;
  return series;
}

static gboolean chart_from_csv(const char *csv, const char *title, const char *path, gboolean *written,
                               GError **error)
{
  char **lines = g_strsplit(csv, "\n", -1);
  gboolean ok = TRUE;
  *written = FALSE;
  if (lines[0] == NULL || lines[1] == NULL) {
    g_strfreev(lines);
    return TRUE;
  }
  GPtrArray *hdr = csv_split(lines[0]);
  int step_col = -1, status_col = -1;
  for (guint i = 0; i < hdr->len; i++) {
    if (strcmp(hdr->pdata[i], "step_time_ns") == 0)
      step_col = (int)i;
    if (strcmp(hdr->pdata[i], "status") == 0)
      status_col = (int)i;
  }
  int n_axes = step_col - 2;
  if (n_axes < 1 || status_col < 0) {
    g_ptr_array_unref(hdr);
    g_strfreev(lines);
    return TRUE;
  }
  chart_points cpts = {
    .xs = g_ptr_array_new_with_free_func(g_free), .names = g_ptr_array_new_with_free_func(g_free),
    .pnames = g_ptr_array_new_with_free_func(g_free), .px = g_array_new(FALSE, FALSE, sizeof(double)),
    .py = g_array_new(FALSE, FALSE, sizeof(double)), .ps = g_array_new(FALSE, FALSE, sizeof(int)),
  };
  read_chart_points(lines, n_axes, step_col, status_col, &cpts);
  GPtrArray *xs = cpts.xs, *names = cpts.names, *pnames = cpts.pnames;
  GArray *px = cpts.px, *py = cpts.py, *ps = cpts.ps;
  int dropped = cpts.dropped, in_error = cpts.in_error;
  /* Zipped sweeps (every combination of the other axes occurs once) read
   * better as one line over the points, labelled by point. */
  gboolean one_line = names->len > 1 && names->len == px->len;
  if (one_line) {
    g_ptr_array_set_size(names, 0);
    g_ptr_array_add(names, g_strdup("step time"));
    g_ptr_array_set_size(xs, 0);
    for (guint k = 0; k < px->len; k++) {
      g_array_index(px, double, k) = k;
      g_array_index(ps, int, k) = 0;
      g_ptr_array_add(xs, g_strdup(pnames->pdata[k]));
    }
  }
  /* A numeric first axis (numbers, bandwidths, times or sizes, all of one
   * kind) is spaced by value, on a log scale when its values span more than
   * 10x; other axes stay categories in the order they appear. */
  int kind = -1;
  double *xv = g_new0(double, xs->len + 1), vmin = INFINITY, vmax = -INFINITY;
  for (guint i = 0; !one_line && i < xs->len && kind != 0; i++) {
    int k = axis_number(xs->pdata[i], &xv[i]);
    kind = kind < 0 || kind == k ? k : 0;
    vmin = fmin(vmin, xv[i]);
    vmax = fmax(vmax, xv[i]);
  }
  gboolean numeric = kind > 0 && xs->len > 1;
  study_svg_line_opts lopt = {.y_ms_quantity = "step time"};
  if (numeric) {
    for (guint k = 0; k < px->len; k++)
      g_array_index(px, double, k) = xv[(int)g_array_index(px, double, k)];
    lopt.tick_x = xv;
    lopt.tick_labels = (const char *const *)xs->pdata;
    lopt.n_ticks = (int)xs->len;
    lopt.log_x = vmin > 0 && vmax > 10 * vmin;
  }
  int ns = (int)names->len;
  double **sx, **sy;
  study_svg_series *series = split_series(&cpts, &sx, &sy);
  /* Tick labels follow series 0's points (all categories when it covers them). */
  const char **ticks = g_new0(const char *, px->len + 1);
  for (int k = 0; !numeric && ns > 0 && k < series[0].n; k++)
    ticks[k] = xs->pdata[(int)series[0].x[k]];
  /* The legend shows the other axes' values; their keys go into the title. */
  GString *t = g_string_new(title);
  if (!one_line && n_axes > 1) {
    g_string_append(t, "; lines: ");
    for (int a = 1; a < n_axes; a++)
      g_string_append_printf(t, "%s%s", a > 1 ? ", " : "", (char *)hdr->pdata[2 + a]);
  }
  if (dropped)
    g_string_append_printf(t, " (%d points in further lines not drawn)", dropped);
  if (in_error)
    g_string_append_printf(t, " (%d point%s in error not drawn)", in_error, in_error > 1 ? "s" : "");
  *written = ns > 0;
  if (ns > 0)
    ok = study_svg_line_chart_opts(path, t->str, one_line ? "point" : (const char *)hdr->pdata[2], "step time (ms)",
                                   series, ns, ticks, &lopt, error);
  g_free(xv);
  g_string_free(t, TRUE);
  g_free(ticks);
  for (int i = 0; i < ns; i++) {
    g_free(sx[i]);
    g_free(sy[i]);
  }
  g_free(sx);
  g_free(sy);
  g_free(series);
  g_array_free(px, TRUE);
  g_array_free(py, TRUE);
  g_array_free(ps, TRUE);
  g_ptr_array_unref(xs);
  g_ptr_array_unref(names);
  g_ptr_array_unref(pnames);
  g_ptr_array_unref(hdr);
  g_strfreev(lines);
  return ok;
}

/* ---- run ---- */

/* The utility reference point: the base with the spec's base values (or
 * every axis's first value with base: first) applied, simulated.  *bs
 * gets its summary. */
static gboolean sweep_base_point(const sweep_ctx *c, study_summary *bs, GError **error)
{
  const study_spec *s = c->s;
  topo_variant *ref = topo_variant_copy(c->base);
  sim_replay_options ref_opt = c->opt;
  gboolean ok = TRUE;
  if (s->base_first) {
    for (int a = 0; a < s->n_axes && ok; a++)
      ok = study_spec_apply(s->axes[a].key, study_spec_value(s, 0, a), ref, &ref_opt, error);
  } else {
    for (guint i = 0; i < s->base_keys->len && ok; i++)
      ok = study_spec_apply(s->base_keys->pdata[i], s->base_values->pdata[i], ref, &ref_opt, error);
  }
  ok = ok && study_run_point(c->w, ref, &ref_opt, bs, error);
  topo_variant_free(ref);
  return ok;
}

/* Rows are reused (--resume) and merged only when they come from the same
 * inputs: the spec's bytes, the resolved cluster with `set` applied (the
 * YAML minus its first line, which names the local path), the run options
 * and the workload's content.  Returns their SHA-256. */
static char *sweep_digest(const sweep_ctx *c)
{
  const study_spec *s = c->s;
  GChecksum *ck = g_checksum_new(G_CHECKSUM_SHA256);
  char *yaml = topo_variant_to_yaml(c->base), *wd = study_workload_digest(c->w);
  const char *body = strchr(yaml, '\n');
  char *opts = g_strdup_printf("slots=%u algo=%d:%d tier=%d:%d", c->opt.compute_slots, c->opt.has_algo,
                               (int)c->opt.algo, c->opt.has_tier, (int)c->opt.tier);
  g_checksum_update(ck, (const guchar *)s->digest, -1);
  g_checksum_update(ck, (const guchar *)(body ? body : yaml), -1);
  g_checksum_update(ck, (const guchar *)opts, -1);
  if (c->opt.measured_starts) /* only when set, so sweeps starting together keep their digests */
    g_checksum_update(ck, (const guchar *)"starts=measured", -1);
  if (sim_levers_active(&c->opt.levers)) {
    /* Only when set, so sweeps without levers keep their digests. */
    char *lv = sim_levers_describe(&c->opt.levers);
    g_checksum_update(ck, (const guchar *)lv, -1);
    g_free(lv);
  }
  g_checksum_update(ck, (const guchar *)wd, -1);
  char *digest = g_strdup(g_checksum_get_string(ck));
  g_checksum_free(ck);
  g_free(yaml);
  g_free(wd);
  g_free(opts);
  return digest;
}

/* The reason of a point in error, for the terminal: "point P (key=value
 * ...): error: ..." from its CSV row (the text up to nl), appended to
 * st->errors. */
static void note_point_error(const study_spec *s, int p, const char *text, const char *nl, study_sweep_stats *st)
{
  char *row = g_strndup(text, (gsize)(nl - text));
  GPtrArray *f = csv_split(row);
  GString *why = g_string_new(NULL);
  g_string_append_printf(why, "point %d (", p);
  for (int a = 0; a < s->n_axes && 2 + a < (int)f->len; a++)
    g_string_append_printf(why, "%s%s=%s", a ? " " : "", s->axes[a].key, (char *)f->pdata[2 + a]);
  g_string_append_printf(why, "): %s", f->len ? (char *)f->pdata[f->len - 1] : "error");
  if (st->errors == NULL)
    st->errors = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(st->errors, g_string_free(why, FALSE));
  g_ptr_array_unref(f);
  g_free(row);
}

/* Assembles this shard's outputs from the row files, in point order (the
 * points in `mine`): NAME[.shard-K-of-N].csv and .jsonl, and the chart
 * when not sharded; counts the points in error. */
static gboolean sweep_assemble(const sweep_ctx *c, const study_sweep_options *o, const GArray *mine, int shard_k,
                               int shard_n, study_sweep_stats *st, GError **error)
{
  const study_spec *s = c->s;
  gboolean ok = TRUE;
  GString *csv = g_string_new(NULL), *jsonl = g_string_new(NULL);
  char *h = csv_header(s);
  g_string_append(csv, h);
  g_free(h);
  for (guint i = 0; i < mine->len && ok; i++) {
    int p = g_array_index(mine, int, i);
    char *path = point_file(c, p), *text = NULL;
    if (!point_done(c, p) || !g_file_get_contents(path, &text, NULL, NULL)) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: the row of point %d is missing or incomplete; rerun "
                  "with --resume", path, p);
      ok = FALSE;
    } else {
      char *nl = strchr(text, '\n');
      g_string_append_len(csv, text, nl - text + 1);
      g_string_append(jsonl, nl + 1);
      if (strstr(nl + 1, "\"status\": \"error\"")) {
        st->failed++;
        note_point_error(s, p, text, nl, st);
      }
    }
    g_free(text);
    g_free(path);
  }
  char *stem = shard_n > 1 ? g_strdup_printf("%s.shard-%d-of-%d", s->name, shard_k, shard_n) : g_strdup(s->name);
  char *prefix = g_build_filename(o->out_dir, stem, NULL);
  g_free(stem);
  st->csv_path = g_strconcat(prefix, ".csv", NULL);
  st->jsonl_path = g_strconcat(prefix, ".jsonl", NULL);
  ok = ok && wisp_write_file_atomic(st->csv_path, csv->str, csv->len, error) &&
       wisp_write_file_atomic(st->jsonl_path, jsonl->str, jsonl->len, error);
  if (ok && shard_n == 1) {
    st->svg_path = g_strconcat(prefix, ".svg", NULL);
    char *title = g_strdup_printf("%s: simulated step time", s->name);
    gboolean written = FALSE;
    ok = chart_from_csv(csv->str, title, st->svg_path, &written, error);
    if (!written) /* no point finished: there is nothing to draw, and no chart to list */
      g_clear_pointer(&st->svg_path, g_free);
    g_free(title);
  }
  g_free(prefix);
  g_string_free(csv, TRUE);
  g_string_free(jsonl, TRUE);
  return ok;
}

gboolean study_sweep_run(const study_spec *s, const et_workload *w, const study_sweep_options *o,
                         study_sweep_stats *st, GError **error)
{
  memset(st, 0, sizeof *st);
  double t0 = wisp_wall_seconds();
  int shard_n = o->shard_n > 1 ? o->shard_n : 1, shard_k = shard_n > 1 ? o->shard_k : 1;
  if (shard_k < 1 || shard_k > shard_n) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "--shard %d/%d: K must be between 1 and N", shard_k, shard_n);
    return FALSE;
  }
  sweep_ctx c = {.s = s, .w = w};
  c.opt = (sim_replay_options){.compute_slots = 0}; /* each rank's measured concurrency unless swept */
  c.opt.has_tier = o->has_tier;
  c.opt.tier = o->tier;
  c.opt.levers = o->levers;
  c.opt.has_algo = o->has_algo;
  c.opt.algo = o->algo;
  c.opt.compute_slots = o->compute_slots;
  c.opt.measured_starts = o->measured_starts;
  char *cluster_path = NULL;
  topo_variant *base = study_cluster_open(s->cluster, w->n_ranks, &cluster_path, NULL, error);
  g_free(cluster_path);
  if (base == NULL)
    return FALSE;
  for (guint i = 0; i < s->set_keys->len; i++)
    if (!study_spec_apply(s->set_keys->pdata[i], s->set_values->pdata[i], base, &c.opt, error)) {
      g_prefix_error(error, "%s: set: ", s->path);
      topo_variant_free(base);
      return FALSE;
    }
  c.base = base;

  /* The utility reference point. */
  study_summary bs;
  gboolean ok = sweep_base_point(&c, &bs, error);
  if (!ok) {
    g_prefix_error(error, "%s: the base point: ", s->path);
    topo_variant_free(base);
    return FALSE;
  }
  c.base_step = bs.step_time;
  st->base_step = bs.step_time;
  c.digest = sweep_digest(&c);

  char *pdir_name = g_strdup_printf("%s.points", s->name);
  c.dir = g_build_filename(o->out_dir, pdir_name, NULL);
  g_free(pdir_name);
  if (g_mkdir_with_parents(c.dir, 0777) != 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "cannot create %s: %s", c.dir, g_strerror(errno));
    ok = FALSE;
    goto out;
  }
  if (o->resume)
    st->orphans_removed = remove_orphans(c.dir);
  GArray *mine = g_array_new(FALSE, FALSE, sizeof(int)), *pending = g_array_new(FALSE, FALSE, sizeof(int));
  for (int p = shard_k - 1; p < s->n_points; p += shard_n) {
    g_array_append_val(mine, p);
    if (o->resume && point_done(&c, p))
      st->skipped++;
    else
      g_array_append_val(pending, p);
  }
  st->total = (int)mine->len;
  ok = run_parallel(&c, o, (int *)(void *)pending->data, (int)pending->len, st->total, st->skipped, error);
  st->run = ok ? (int)pending->len : 0;

  if (ok)
    ok = sweep_assemble(&c, o, mine, shard_k, shard_n, st, error);
  g_array_free(mine, TRUE);
  g_array_free(pending, TRUE);
out:
  g_free(c.dir);
  g_free(c.digest);
  topo_variant_free(base);
  st->wall_seconds = wisp_wall_seconds() - t0;
  return ok;
}

/* ---- merge ---- */

static int row_point(const char *line)
{
  char *end;
  long p = strtol(line, &end, 10);
  return end != line && *end == ',' && p >= 0 && p < STUDY_MAX_POINTS ? (int)p : -1;
}

/* Extracts a string value "key": "..." (no escapes needed: digests, names
 * without quotes) or an integer "key": N from a JSON line. */
static char *json_field(const char *line, const char *key)
{
  char *pat = g_strdup_printf("\"%s\": ", key);
  const char *p = strstr(line, pat);
  g_free(pat);
  if (p == NULL)
    return NULL;
  p += strlen(key) + 4;
  if (*p == '"') {
    const char *e = strchr(p + 1, '"');
    return e ? g_strndup(p + 1, (gsize)(e - p - 1)) : NULL;
  }
  const char *e = p;
  while (*e && *e != ',' && *e != '}')
    e++;
  return g_strndup(p, (gsize)(e - p));
}

gboolean study_sweep_merge(const char *out_prefix, char **inputs, int n_inputs, GError **error)
{
  return study_sweep_merge_full(out_prefix, inputs, n_inputs, NULL, error);
}

/* What sweep-merge gathers from its inputs: the CSV header, the inputs'
 * digest and point count (every row must agree), and the rows by point. */
typedef struct {
  char *header, *digest;
  int n_points;
  GHashTable *csv_rows, *json_rows;
} merge_state;

/* The CSV lines cl of input cp: the header (the same in every input, the
 * first input is `first`) and each row by its point, once. */
static gboolean merge_csv_rows(merge_state *m, char **cl, const char *cp, const char *first, GError **error)
{
  gboolean ok = TRUE;
  if (cl[0] == NULL || !*cl[0]) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s: empty file; not a sweep CSV", cp);
    ok = FALSE;
  } else if (m->header && strcmp(m->header, cl[0]) != 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: its header differs from %s's; the shards come "
                "from different sweeps", cp, first);
    ok = FALSE;
  } else if (!m->header) {
    m->header = g_strdup(cl[0]);
  }
  for (char **l = cl + 1; ok && *l && **l; l++) {
    int p = row_point(*l);
    if (p < 0) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s:%d: not a sweep row (it must start with the point "
                  "number)", cp, (int)(l - cl) + 1);
      ok = FALSE;
    } else if (g_hash_table_contains(m->csv_rows, GINT_TO_POINTER(p))) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: point %d appears in two inputs; shards must not "
                  "overlap", cp, p);
      ok = FALSE;
    } else {
      g_hash_table_insert(m->csv_rows, GINT_TO_POINTER(p), g_strconcat(*l, "\n", NULL));
    }
  }
  return ok;
}

/* The JSON lines jl of input jp: each row by its point, once, all from the
 * same inputs (input_sha256 and n_points agree). */
/* Field `col` (0-based) of a CSV line, double quotes honoured; NULL when
 * the line is shorter.  O(line length). */
static char *csv_column(const char *line, int col)
{
  GString *f = g_string_new(NULL);
  gboolean quoted = FALSE;
  int c = 0;
  for (const char *p = line; *p && *p != '\n'; p++) {
    if (*p == '"') {
      quoted = !quoted;
    } else if (*p == ',' && !quoted) {
      if (c++ == col)
        return g_string_free(f, FALSE);
      g_string_truncate(f, 0);
    } else {
      g_string_append_c(f, *p);
    }
  }
  if (c == col)
    return g_string_free(f, FALSE);
  g_string_free(f, TRUE);
  return NULL;
}

/* The CSV row and the JSON line of one point carry the same figures (a
 * shard whose two files disagree was edited or mixed up by hand): the
 * *_ns and utility_pct columns of the header are compared as text, both
 * being printed by the same formatter.  FALSE with an error naming both
 * files.  O(columns x line length). */
static gboolean rows_agree(const merge_state *m, int p, const char *jrow, const char *cp, const char *jp, int jline,
                           GError **error)
{
  const char *crow = g_hash_table_lookup(m->csv_rows, GINT_TO_POINTER(p));
  if (crow == NULL || m->header == NULL)
    return TRUE;
  gboolean ok = TRUE;
  char *name = NULL;
  for (int col = 0; ok && (name = csv_column(m->header, col)) != NULL; col++) {
    if (g_str_has_suffix(name, "_ns") || strcmp(name, "utility_pct") == 0) {
      char *cv = csv_column(crow, col), *jv = json_field(jrow, name);
      if (cv && jv && strcmp(cv, jv) != 0) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s:%d: point %d has %s %s but %s says %s; the shard's "
                    "CSV and JSON lines disagree (edited or mixed up): rerun that shard", jp, jline, p, name, jv, cp,
                    cv);
        ok = FALSE;
      }
      g_free(cv);
      g_free(jv);
    }
    g_free(name);
  }
  return ok;
}

static gboolean merge_json_rows(merge_state *m, char **jl, const char *jp, const char *cp, GError **error)
{
  gboolean ok = TRUE;
  for (char **l = jl; ok && *l && **l; l++) {
    char *ps = json_field(*l, "point"), *ns = json_field(*l, "n_points"), *dg = json_field(*l, "input_sha256");
    int p = ps ? atoi(ps) : -1, n = ns ? atoi(ns) : -1;
    if (!ps || !ns || !dg || p < 0 || n <= 0 || p >= n) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s:%d: not a sweep JSON line (point, n_points and "
                  "input_sha256 are required)", jp, (int)(l - jl) + 1);
      ok = FALSE;
    } else if ((m->digest && strcmp(m->digest, dg) != 0) || (m->n_points >= 0 && n != m->n_points)) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s:%d: this row comes from other inputs (another spec, "
                  "cluster or workload: input_sha256 or n_points differ)", jp, (int)(l - jl) + 1);
      ok = FALSE;
    } else if (g_hash_table_contains(m->json_rows, GINT_TO_POINTER(p))) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: point %d appears twice", jp, p);
      ok = FALSE;
    } else if (!rows_agree(m, p, *l, cp, jp, (int)(l - jl) + 1, error)) {
      ok = FALSE;
    } else {
      if (!m->digest)
        m->digest = g_strdup(dg);
      m->n_points = n;
      g_hash_table_insert(m->json_rows, GINT_TO_POINTER(p), g_strconcat(*l, "\n", NULL));
    }
    g_free(ps);
    g_free(ns);
    g_free(dg);
  }
  return ok;
}

gboolean study_sweep_merge_full(const char *out_prefix, char **inputs, int n_inputs, gboolean *svg_written,
                                GError **error)
{
  gboolean drawn = FALSE;
  if (svg_written)
    *svg_written = FALSE;
  merge_state m = {
    .n_points = -1,
    .csv_rows = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free),
    .json_rows = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free),
  };
  gboolean ok = TRUE;
  for (int i = 0; i < n_inputs && ok; i++) {
    char *prefix = g_strdup(inputs[i]);
    if (g_str_has_suffix(prefix, ".csv"))
      prefix[strlen(prefix) - 4] = '\0';
    else if (g_str_has_suffix(prefix, ".jsonl"))
      prefix[strlen(prefix) - 6] = '\0';
    char *cp = g_strconcat(prefix, ".csv", NULL), *jp = g_strconcat(prefix, ".jsonl", NULL);
    char *ct = NULL, *jt = NULL;
    if (!g_file_get_contents(cp, &ct, NULL, error) || !g_file_get_contents(jp, &jt, NULL, error)) {
      ok = FALSE;
    } else {
      char **cl = g_strsplit(ct, "\n", -1), **jl = g_strsplit(jt, "\n", -1);
      /* Noted as inputs: -o naming a shard is refused, as every command
       * refuses to write over what it reads. */
      wisp_input_note(cp);
      wisp_input_note(jp);
      ok = merge_csv_rows(&m, cl, cp, inputs[0], error) && merge_json_rows(&m, jl, jp, cp, error);
      g_strfreev(cl);
      g_strfreev(jl);
    }
    g_free(ct);
    g_free(jt);
    g_free(cp);
    g_free(jp);
    g_free(prefix);
  }
  if (ok && m.n_points < 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "the inputs hold no sweep rows");
    ok = FALSE;
  }
  GString *missing = g_string_new(NULL);
  int n_missing = 0;
  for (int p = 0; ok && p < m.n_points; p++)
    if (!g_hash_table_contains(m.csv_rows, GINT_TO_POINTER(p)) || !g_hash_table_contains(m.json_rows, GINT_TO_POINTER(p))) {
      if (n_missing++ < 20)
        g_string_append_printf(missing, "%s%d", missing->len ? ", " : "", p);
    }
  if (ok && (n_missing || (int)g_hash_table_size(m.csv_rows) != m.n_points)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "the shards cover %u of %d points; missing: %s%s (run the missing shards, then merge again)",
                g_hash_table_size(m.csv_rows), m.n_points, missing->str, n_missing > 20 ? ", ..." : "");
    ok = FALSE;
  }
  g_string_free(missing, TRUE);
  if (ok) {
    GString *csv = g_string_new(m.header), *jsonl = g_string_new(NULL);
    g_string_append_c(csv, '\n');
    for (int p = 0; p < m.n_points; p++) {
      g_string_append(csv, g_hash_table_lookup(m.csv_rows, GINT_TO_POINTER(p)));
      g_string_append(jsonl, g_hash_table_lookup(m.json_rows, GINT_TO_POINTER(p)));
    }
    char *cp = g_strconcat(out_prefix, ".csv", NULL), *jp = g_strconcat(out_prefix, ".jsonl", NULL),
         *sp = g_strconcat(out_prefix, ".svg", NULL);
    char *base = g_path_get_basename(out_prefix);
    char *title = g_strdup_printf("%s: simulated step time", base);
    ok = wisp_write_file_atomic(cp, csv->str, csv->len, error) &&
         wisp_write_file_atomic(jp, jsonl->str, jsonl->len, error) && chart_from_csv(csv->str, title, sp, &drawn, error);
    if (svg_written)
      *svg_written = drawn;
    g_free(title);
    g_free(base);
    g_free(cp);
    g_free(jp);
    g_free(sp);
    g_string_free(csv, TRUE);
    g_string_free(jsonl, TRUE);
  }
  g_free(m.header);
  g_free(m.digest);
  g_hash_table_destroy(m.csv_rows);
  g_hash_table_destroy(m.json_rows);
  return ok;
}
