/* nsys_facts.c: per-device facts of Nsight Systems exports that the graph
 * does not keep (nsys.h, fe_nsys_facts): each kernel's launch grid with
 * the device's SM count, and the NVLink throughput samples of the GPU
 * metrics sampler.  The metric catalog reads them for mean_sm_coverage and
 * bw_peertopeer (doc/metrics.md).
 *
 * Ranks and clocks are the ones fe_nsys_load_opts gives: files in order,
 * the devices of a file in id order (the devices its kernels, copies and
 * memsets ran on), times in ps from the device's step window's start
 * (nsys_steps.c), else from its first GPU op.  Tables
 * and columns (NVIDIA's documented export schema): CUPTI_ACTIVITY_KIND_KERNEL
 * gridX/gridY/gridZ, TARGET_INFO_GPU smCount (matched by cuDevice, else
 * by id, else the one count all GPUs share), GPU_METRICS (timestamp,
 * typeId, metricId, value) with TARGET_INFO_GPU_METRICS (metricId,
 * metricName); a sample's device is typeId & 0xff (the rule CCL-Bench's
 * bandwidth_utilization_peertopeer tool uses).  A missing optional table or
 * column leaves the fact absent; the metric then says why.  Time
 * O(rows) per file; memory 24 bytes per kernel and 16 per sample.
 */
#include "frontends/nsys_internal.h"

#include <sqlite3.h>
#include <string.h>

/* The counter bw_peertopeer reads (CCL-Bench's choice). */
#define NSYS_P2P_METRIC "NVLink TX Responses User Data [Throughput %]"

typedef struct {
  const char *path;
  sqlite3 *db;
  GError **error;
  char *bad;               /* the first unusable value a row gave (the row callbacks set it), NULL when none */
} facts_file;

/* Runs sql and hands each row to row(); FALSE with the error (file and
 * query) on failure, or naming the first unusable value a row gave. */
static gboolean facts_query(facts_file *ff, const char *sql, void (*row)(sqlite3_stmt *, gpointer), gpointer data)
{
  if ((ff->error && *ff->error) || ff->bad)
    return FALSE; /* the first failure is the one reported (a malformed file fails every query) */
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(ff->db, sql, -1, &st, NULL);
  if (rc == SQLITE_OK)
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
      row(st, data);
  gboolean ok = rc == SQLITE_DONE || rc == SQLITE_OK;
  if (!ok)
    g_set_error(ff->error, WISP_ERROR, WISP_ERROR_INVALID, "%s: query failed: %s (%s)", ff->path,
                sqlite3_errmsg(ff->db), sql);
  else if (ff->bad)
    g_set_error(ff->error, WISP_ERROR, WISP_ERROR_INVALID, "%s: %s; the export is damaged", ff->path, ff->bad);
  sqlite3_finalize(st);
  return ok && ff->bad == NULL;
}

/* TRUE when why (a value's check of a row of table: ns_time_why,
 * ns_int_why; row counts from 1 in the query's order) is NULL; else FALSE,
 * the first such value kept in ff->bad.  Every time this file turns into
 * ps passes here, so a hostile export read without fe_nsys_load (which
 * checks the op rows first) cannot overflow the conversion.  O(1). */
static gboolean facts_value_ok(facts_file *ff, char *why, const char *table, int64_t row)
{
  if (why == NULL)
    return TRUE;
  if (ff->bad == NULL)
    ff->bad = g_strdup_printf("table %s, row %" G_GINT64_FORMAT ": %s", table, row, why);
  g_free(why);
  return FALSE;
}

/* The GPU op tables, in the order file_devices queries them. */
static const char *const op_tables[] = {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                                        "CUPTI_ACTIVITY_KIND_MEMSET"};

typedef struct {
  GArray *ids, *t0;        /* int64_t device ids (ascending) and their first GPU op start, ns */
  GArray *lo, *hi;         /* int64_t: the anchors [lo, hi) of the device's step window's kernels (ns) */
  facts_file *ff;
  int64_t rows[G_N_ELEMENTS(op_tables)]; /* rows of each op table read so far */
} dev_rows;

/* Each GPU op row (deviceId, start, table index), read as fe_nsys_load
 * reads them, so that the devices and their first starts are the
 * reader's exactly; a start that is not a usable time fails the read, as
 * it fails fe_nsys_load.  O(devices) per row. */
static void dev_row(sqlite3_stmt *st, gpointer data)
{
  dev_rows *d = data;
  int64_t tb = sqlite3_column_int64(st, 2);
  if (tb < 0 || tb >= (int64_t)G_N_ELEMENTS(op_tables) ||
      !facts_value_ok(d->ff, ns_time_why(st, 1, "start"), op_tables[tb], ++d->rows[tb]))
    return;
  int64_t id = sqlite3_column_int64(st, 0), t = sqlite3_column_int64(st, 1);
  for (guint i = 0; i < d->ids->len; i++)
    if (g_array_index(d->ids, int64_t, i) == id) {
      int64_t *t0 = &g_array_index(d->t0, int64_t, i);
      *t0 = MIN(*t0, t);
      return;
    }
  guint k = 0; /* keep the ids ascending */
  while (k < d->ids->len && g_array_index(d->ids, int64_t, k) < id)
    k++;
  g_array_insert_val(d->ids, k, id);
  g_array_insert_val(d->t0, k, t);
  int64_t lo = INT64_MIN, hi = INT64_MAX;
  g_array_insert_val(d->lo, k, lo);
  g_array_insert_val(d->hi, k, hi);
}

static void int_row(sqlite3_stmt *st, gpointer data)
{
  int64_t *v = data;
  if (sqlite3_column_type(st, 0) != SQLITE_NULL)
    *v = sqlite3_column_int64(st, 0);
}

/* Device index of id in d, -1 when none.  O(devices). */
static int dev_index(const dev_rows *d, int64_t id)
{
  for (guint i = 0; i < d->ids->len; i++)
    if (g_array_index(d->ids, int64_t, i) == id)
      return (int)i;
  return -1;
}

typedef struct {
  const dev_rows *dev;
  fe_nsys_facts *f;
  int first_rank;
  int64_t row;             /* rows of the current query read so far */
} grid_rows;

/* Whether the kernel row's gridX, gridY, gridZ (columns 3..5) are launch
 * dimensions, integers from 1 to 2^31 - 1 (CUDA's largest gridX); else
 * FALSE with the first bad one in ff->bad ('abc' read as 0 blocks and gave
 * a silent 0 % SM coverage).  O(1). */
static gboolean grid_ok(grid_rows *g, sqlite3_stmt *st)
{
  static const char *const dims[] = {"gridX", "gridY", "gridZ"};
  for (int d = 0; d < 3; d++)
    if (!facts_value_ok(g->dev->ff, ns_int_why(st, 3 + d, dims[d], 1, G_MAXINT32, "a grid dimension"), op_tables[0],
                        g->row))
      return FALSE;
  return TRUE;
}

static void grid_row(sqlite3_stmt *st, gpointer data)
{
  grid_rows *g = data;
  g->row++;
  if (!facts_value_ok(g->dev->ff, ns_time_why(st, 0, "start"), op_tables[0], g->row) ||
      !facts_value_ok(g->dev->ff, ns_time_why(st, 1, "end"), op_tables[0], g->row) || !grid_ok(g, st))
    return;
  int k = dev_index(g->dev, sqlite3_column_int64(st, 2));
  if (k < 0)
    return;
  int64_t t0 = g_array_index(g->dev->t0, int64_t, k), anchor = sqlite3_column_int64(st, 6);
  if (anchor < g_array_index(g->dev->lo, int64_t, k) || anchor >= g_array_index(g->dev->hi, int64_t, k))
    return; /* launched outside the step window: not in the device's graph either */
  int64_t s = sqlite3_column_int64(st, 0), e = sqlite3_column_int64(st, 1);
  fe_nsys_grid x = {(s - t0) * 1000, (MAX(e, s) - t0) * 1000,
                    (double)sqlite3_column_int64(st, 3) * (double)sqlite3_column_int64(st, 4) *
                      (double)sqlite3_column_int64(st, 5)};
  g_array_append_val(g->f->grids[g->first_rank + k], x);
}

/* One NVLink sample (timestamp, device, value).  Its timestamp must be a
 * usable time, as the op rows' (one near 2^63 ns wrapped when turned into
 * ps and could land inside the window: a silent wrong bw_peertopeer), and
 * its value a percentage from 0 to 100 (text reads as 0; 1e308 gave a
 * 300-digit bw_peertopeer; NVIDIA documents its GPU performance monitor
 * percentages as 0.0 - 100.0, NVML nvmlGpmMetricId_t).  The query orders
 * the samples by device and time, so a bad one is named by its device. */
static void sample_row(sqlite3_stmt *st, gpointer data)
{
  grid_rows *g = data;
  facts_file *ff = g->dev->ff;
  int64_t dev = sqlite3_column_int64(st, 1);
  int vt = sqlite3_column_type(st, 2);
  char *why = ns_time_why(st, 0, "timestamp");
  double pct = sqlite3_column_double(st, 2);
  if (why == NULL && !((vt == SQLITE_INTEGER || vt == SQLITE_FLOAT) && pct >= 0 && pct <= 100)) {
    const unsigned char *v = sqlite3_column_text(st, 2);
    why = g_strdup_printf("value is %s%.40s%s, not a throughput percentage (a number from 0 to 100)", v ? "'" : "",
                          v ? (const char *)v : "NULL", v ? "'" : "");
  }
  if (why) {
    if (ff->bad == NULL)
      ff->bad = g_strdup_printf("table GPU_METRICS, a sample of device %" G_GINT64_FORMAT " (%s): %s", dev,
                                NSYS_P2P_METRIC, why);
    g_free(why);
    return;
  }
  int k = dev_index(g->dev, dev);
  if (k < 0)
    return;
  fe_nsys_sample x = {(sqlite3_column_int64(st, 0) - g_array_index(g->dev->t0, int64_t, k)) * 1000, pct};
  g_array_append_val(g->f->p2p[g->first_rank + k], x);
}

/* The SM count of device id: TARGET_INFO_GPU's row with cuDevice = id
 * (else id = id), else the count every GPU of the file shares; 0 unknown. */
static int sm_count_of(facts_file *ff, int64_t id)
{
  static const char *const with_cu[] = {"smCount", "cuDevice", NULL}, *const with_id[] = {"smCount", "id", NULL};
  gboolean cu = ns_has_columns(ff->db, "TARGET_INFO_GPU", with_cu);
  if (!cu && !ns_has_columns(ff->db, "TARGET_INFO_GPU", with_id))
    return 0;
  int64_t n = 0;
  char *sql = g_strdup_printf("SELECT smCount FROM TARGET_INFO_GPU WHERE %s = %" G_GINT64_FORMAT " LIMIT 1",
                              cu ? "cuDevice" : "id", id);
  gboolean ok = facts_query(ff, sql, int_row, &n);
  g_free(sql);
  if (ok && n <= 0)
    ok = facts_query(ff, "SELECT CASE WHEN min(smCount) = max(smCount) THEN min(smCount) END FROM TARGET_INFO_GPU",
                     int_row, &n);
  return ok && n > 0 && n < G_MAXINT32 ? (int)n : 0;
}

/* The devices of the file, as fe_nsys_load numbers them, with their t0. */
static gboolean file_devices(facts_file *ff, dev_rows *d)
{
  static const char *const cols[] = {"start", "deviceId", NULL};
  GString *sql = g_string_new("SELECT deviceId, start, 0 FROM CUPTI_ACTIVITY_KIND_KERNEL");
  if (ns_has_columns(ff->db, "CUPTI_ACTIVITY_KIND_MEMCPY", cols))
    g_string_append(sql, " UNION ALL SELECT deviceId, start, 1 FROM CUPTI_ACTIVITY_KIND_MEMCPY");
  if (ns_has_columns(ff->db, "CUPTI_ACTIVITY_KIND_MEMSET", cols))
    g_string_append(sql, " UNION ALL SELECT deviceId, start, 2 FROM CUPTI_ACTIVITY_KIND_MEMSET");
  gboolean ok = facts_query(ff, sql->str, dev_row, d);
  g_string_free(sql, TRUE);
  return ok;
}

static void span_row(sqlite3_stmt *st, gpointer data)
{
  ns_span x = {sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 2)};
  g_array_append_val((GArray *)data, x);
}

/* Moves each device's t0 to its step window's start when the export has
 * NVTX step markers (nsys_steps.c), the clock fe_nsys_load_opts gives the
 * device's graph.  O(GPU ops log GPU ops) per device. */
static gboolean step_clocks(facts_file *ff, const fe_nsys_options *opt, dev_rows *d)
{
  static const char *const cols[] = {"start", "deviceId", NULL};
  static const char *const tables[] = {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                                       "CUPTI_ACTIVITY_KIND_MEMSET"};
  gboolean inference = FALSE, ok = TRUE;
  GArray *markers = ns_step_markers(ff->db, ff->path, opt->executions, &inference, ff->error);
  if (markers == NULL)
    return FALSE;
  for (guint k = 0; ok && markers->len && !opt->whole_trace && k < d->ids->len; k++) {
    GArray *sp = g_array_new(FALSE, FALSE, sizeof(ns_span));
    for (size_t t = 0; ok && t < G_N_ELEMENTS(tables); t++) {
      if (!ns_has_columns(ff->db, tables[t], cols))
        continue;
      char *join = NULL, *anchor = ns_anchor_sql(ff->db, tables[t], "k", &join);
      char *pid = ns_pid_sql(ff->db, tables[t], "k");
      char *sql = g_strdup_printf("SELECT %s, %s, k.end FROM %s k%s WHERE k.deviceId = %" G_GINT64_FORMAT, anchor, pid,
                                  tables[t], join, g_array_index(d->ids, int64_t, k));
      ok = facts_query(ff, sql, span_row, sp);
      g_free(sql);
      g_free(anchor);
      g_free(join);
      g_free(pid);
    }
    ns_window w;
    if (ok && (ok = ns_step_window(markers, (const ns_span *)(void *)sp->data, sp->len, opt, ff->path, &w,
                                   ff->error)) && w.have) {
      g_array_index(d->t0, int64_t, k) = g_array_index(d->lo, int64_t, k) = w.ws;
      g_array_index(d->hi, int64_t, k) = w.wa;
    }
    g_array_free(sp, TRUE);
  }
  g_array_free(markers, TRUE);
  return ok;
}

/* One file's facts, its devices appended as ranks first_rank... */
static gboolean facts_file_read(facts_file *ff, const fe_nsys_options *opt, fe_nsys_facts *f)
{
  static const char *const gcols[] = {"start", "end", "deviceId", "gridX", "gridY", "gridZ", NULL};
  static const char *const mcols[] = {"timestamp", "typeId", "metricId", "value", NULL};
  static const char *const ncols[] = {"metricId", "metricName", NULL};
  dev_rows d = {g_array_new(FALSE, FALSE, sizeof(int64_t)), g_array_new(FALSE, FALSE, sizeof(int64_t)),
                g_array_new(FALSE, FALSE, sizeof(int64_t)), g_array_new(FALSE, FALSE, sizeof(int64_t)), ff, {0}};
  gboolean ok = file_devices(ff, &d) && step_clocks(ff, opt, &d);
  int first = f->n_ranks;
  if (ok) {
    f->n_ranks += (int)d.ids->len;
    f->sm_count = g_renew(int, f->sm_count, f->n_ranks);
    f->grids = g_renew(GArray *, f->grids, f->n_ranks);
    f->p2p = g_renew(GArray *, f->p2p, f->n_ranks);
    for (int r = first; r < f->n_ranks; r++) {
      f->sm_count[r] = sm_count_of(ff, g_array_index(d.ids, int64_t, r - first));
      f->grids[r] = g_array_new(FALSE, FALSE, sizeof(fe_nsys_grid));
      f->p2p[r] = g_array_new(FALSE, FALSE, sizeof(fe_nsys_sample));
    }
    ok = !(ff->error && *ff->error); /* an SM count query failed */
  }
  grid_rows g = {&d, f, first, 0};
  if (ok && ns_has_columns(ff->db, "CUPTI_ACTIVITY_KIND_KERNEL", gcols)) {
    f->have_grids = TRUE;
    gboolean windows = FALSE; /* any device with a step window: its kernels are filtered by their launch */
    for (guint k = 0; k < d.ids->len; k++)
      windows |= g_array_index(d.lo, int64_t, k) != INT64_MIN;
    char *join = NULL, *anchor = windows ? ns_anchor_sql(ff->db, "CUPTI_ACTIVITY_KIND_KERNEL", "k", &join)
                                         : g_strdup("k.start");
    char *sql = g_strdup_printf("SELECT k.start, k.end, k.deviceId, k.gridX, k.gridY, k.gridZ, %s FROM "
                                "CUPTI_ACTIVITY_KIND_KERNEL k%s", anchor, join ? join : "");
    ok = facts_query(ff, sql, grid_row, &g);
    g_free(sql);
    g_free(anchor);
    g_free(join);
  }
  if (ok && ns_has_columns(ff->db, "GPU_METRICS", mcols) && ns_has_columns(ff->db, "TARGET_INFO_GPU_METRICS", ncols)) {
    f->have_gpu_metrics = TRUE;
    ok = facts_query(ff, "SELECT m.timestamp, m.typeId & 255, m.value FROM GPU_METRICS m WHERE m.metricId IN "
                     "(SELECT metricId FROM TARGET_INFO_GPU_METRICS WHERE metricName = '" NSYS_P2P_METRIC "') "
                     "ORDER BY m.typeId & 255, m.timestamp", sample_row, &g);
  }
  g_array_free(d.ids, TRUE);
  g_array_free(d.t0, TRUE);
  g_array_free(d.lo, TRUE);
  g_array_free(d.hi, TRUE);
  return ok;
}

gboolean fe_nsys_facts_load(const char *const *paths, int n_paths, fe_nsys_facts *f, GError **error)
{
  return fe_nsys_facts_load_opts(paths, n_paths, NULL, f, error);
}

gboolean fe_nsys_facts_load_opts(const char *const *paths, int n_paths, const fe_nsys_options *opt, fe_nsys_facts *f,
                                 GError **error)
{
  fe_nsys_options defaults;
  fe_nsys_options_init(&defaults);
  opt = opt ? opt : &defaults;
  memset(f, 0, sizeof *f);
  gboolean ok = TRUE;
  for (int i = 0; ok && i < n_paths; i++) {
    facts_file ff = {paths[i], NULL, error, NULL};
    wisp_input_note(paths[i]); /* no output may replace it */
    if (sqlite3_open_v2(paths[i], &ff.db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot open as SQLite: %s", paths[i],
                  ff.db ? sqlite3_errmsg(ff.db) : "out of memory");
      ok = FALSE;
    } else {
      ok = facts_file_read(&ff, opt, f);
    }
    sqlite3_close(ff.db);
    g_free(ff.bad);
  }
  if (!ok)
    fe_nsys_facts_clear(f);
  return ok;
}

void fe_nsys_facts_clear(fe_nsys_facts *f)
{
  for (int r = 0; r < f->n_ranks; r++) {
    if (f->grids && f->grids[r])
      g_array_free(f->grids[r], TRUE);
    if (f->p2p && f->p2p[r])
      g_array_free(f->p2p[r], TRUE);
  }
  g_free(f->sm_count);
  g_free(f->grids);
  g_free(f->p2p);
  memset(f, 0, sizeof *f);
}
