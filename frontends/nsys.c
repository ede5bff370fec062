/* nsys.c: Nsight Systems SQLite exports to an et_workload (nsys.h).
 *
 * Tables read (NVIDIA's documented export schema): CUPTI_ACTIVITY_KIND_KERNEL
 * (start, end in ns; deviceId, streamId, demangledName -> StringIds),
 * CUPTI_ACTIVITY_KIND_MEMCPY / _MEMSET (start, end, deviceId, streamId,
 * bytes), CUPTI_ACTIVITY_KIND_RUNTIME (nameId -> StringIds: counted),
 * NVTX_EVENTS (text or textId: counted), TARGET_INFO_GPU (id, name) and
 * META_DATA_EXPORT (name, value: the export schema version; absent in older
 * exports).  Every query is prepared once per file; the file is opened
 * read-only and never written.
 */
#include "frontends/nsys_internal.h"
#include "frontends/kineto_rank.h"

#include <string.h>

typedef struct {
  int64_t start, end;
  int64_t stream;
  uint64_t bytes;
  char *name;              /* owned */
  uint8_t kind;            /* 0 kernel, 1 memcpy, 2 memset */
  gboolean sized;          /* a kernel launched inside an NCCL call's NVTX range with a size (pl) */
  int64_t corr;            /* kernel: correlationId, -1 when the table has none */
  int64_t anchor, pid;     /* the step windows' anchor and process (nsys_steps.c) */
  ns_payload pl;
} ns_op;

typedef struct {
  const char *path;
  sqlite3 *db;
  fe_nsys_file_report *fr;
  const fe_nsys_options *opt;
  GError **error;
} ns_file;

void fe_nsys_report_init(fe_nsys_report *r)
{
  memset(r, 0, sizeof *r);
  r->files = g_array_new(FALSE, TRUE, sizeof(fe_nsys_file_report));
  r->warnings = g_ptr_array_new_with_free_func(g_free);
}

void fe_nsys_report_clear(fe_nsys_report *r)
{
  for (guint i = 0; r->files && i < r->files->len; i++) {
    fe_nsys_file_report *f = &g_array_index(r->files, fe_nsys_file_report, i);
    g_free(f->path);
    g_free(f->export_version);
    g_free(f->device_name);
  }
  if (r->files)
    g_array_free(r->files, TRUE);
  if (r->warnings)
    g_ptr_array_free(r->warnings, TRUE);
  memset(r, 0, sizeof *r);
}

void fe_nsys_report_print(const fe_nsys_report *r, FILE *out)
{
  fprintf(out, "Nsight Systems exports: %u file(s), %d rank(s)\n", r->files->len, r->n_ranks);
  for (guint i = 0; i < r->files->len; i++) {
    const fe_nsys_file_report *f = &g_array_index(r->files, fe_nsys_file_report, i);
    fprintf(out, "  %s: export schema %s; rank(s) %d..%d (%s); %" G_GUINT64_FORMAT " kernels (%" G_GUINT64_FORMAT
            " communication: %" G_GUINT64_FORMAT " sized from NCCL's NVTX payloads, %" G_GUINT64_FORMAT " replayed at "
            "their measured time), %"
            G_GUINT64_FORMAT " memcpys (%" G_GUINT64_FORMAT " B), %" G_GUINT64_FORMAT " memsets; runtime calls %"
            G_GUINT64_FORMAT " (launches %" G_GUINT64_FORMAT ", syncs %" G_GUINT64_FORMAT "); NVTX ranges %"
            G_GUINT64_FORMAT " (NCCL %" G_GUINT64_FORMAT "); window %.3f ms\n", f->path, f->export_version,
            f->first_rank, f->first_rank + f->n_devices - 1, f->device_name ? f->device_name : "device unnamed",
            f->kernels, f->comm_kernels, f->comm_sized, f->comm_replayed, f->memcpys, f->memcpy_bytes, f->memsets, f->runtime_calls,
            f->launches, f->syncs, f->nvtx_ranges, f->nvtx_nccl_ranges, (double)f->window_ps / 1e9);
  }
  for (guint i = 0; i < r->files->len; i++) {
    const fe_nsys_file_report *f = &g_array_index(r->files, fe_nsys_file_report, i);
    if (f->comm_kernels && f->sizes_why)
      fprintf(out, "  %s: no NCCL sizes: %s\n", f->path, f->sizes_why);
    if (f->step_markers && f->step_used_first >= 0)
      fprintf(out, "  %s: steps: %s #%" G_GINT64_FORMAT "..#%" G_GINT64_FORMAT " of #%" G_GINT64_FORMAT "..#%"
              G_GINT64_FORMAT " (%" G_GUINT64_FORMAT " NVTX step ranges; --step N, --steps A..B|all|whole)\n", f->path,
              f->inference_markers ? "model executions (vLLM/SGLang NVTX ranges, numbered by start time)"
                                   : "ProfilerStep", f->step_used_first, f->step_used_last, f->step_first, f->step_last,
              f->step_markers);
    else if (f->step_markers)
      fprintf(out, "  %s: %" G_GUINT64_FORMAT " NVTX step ranges ignored (--steps whole): the whole export is the "
              "window\n", f->path, f->step_markers);
    if (f->comm_sized_not_world)
      fprintf(out, "  %s: %" G_GUINT64_FORMAT " sized communication kernel(s) on a communicator not seen on every "
              "rank of the load: replayed at their measured time\n", f->path, f->comm_sized_not_world);
  }
  for (guint i = 0; i < r->warnings->len; i++)
    fprintf(out, "warning: %s\n", (const char *)r->warnings->pdata[i]);
}

gboolean fe_nsys_is_export(const char *path)
{
  if (!g_str_has_suffix(path, ".sqlite") && !g_str_has_suffix(path, ".db"))
    return FALSE;
  FILE *f = fopen(path, "rb");
  char head[16] = {0};
  gboolean ok = f && fread(head, 1, 16, f) == 16 && memcmp(head, "SQLite format 3", 16) == 0;
  if (f)
    fclose(f);
  return ok;
}

/* Whether table t exists; when it does, every column in cols (NULL-ended)
 * must too, else the error names the first missing one.  *present says
 * whether the table exists.  O(columns). */
static gboolean check_table(ns_file *nf, const char *t, const char *const *cols, gboolean required, gboolean *present)
{
  char *sql = g_strdup_printf("PRAGMA table_info(\"%s\")", t);
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(nf->db, sql, -1, &st, NULL);
  g_free(sql);
  GHashTable *have = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  while (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    g_hash_table_add(have, g_strdup((const char *)sqlite3_column_text(st, 1)));
  sqlite3_finalize(st);
  gboolean ok = TRUE;
  *present = g_hash_table_size(have) > 0;
  if (rc != SQLITE_OK) {
    g_set_error(nf->error, WISP_ERROR, WISP_ERROR_INVALID, "%s: not a readable SQLite database: %s", nf->path,
                sqlite3_errmsg(nf->db));
    ok = FALSE;
  } else if (!*present && required) {
    g_set_error(nf->error, WISP_ERROR, WISP_ERROR_INVALID, "%s: no table %s: not an Nsight Systems export with CUDA "
                "traces (`nsys profile --trace=cuda ...`, then `nsys export --type sqlite`)", nf->path, t);
    ok = FALSE;
  }
  for (int i = 0; ok && *present && cols[i]; i++)
    if (!g_hash_table_contains(have, cols[i])) {
      g_set_error(nf->error, WISP_ERROR, WISP_ERROR_INVALID, "%s: table %s has no column %s (an export schema "
                  "wisp does not read; doc/nsys.md lists the columns read)", nf->path, t, cols[i]);
      ok = FALSE;
    }
  g_hash_table_destroy(have);
  return ok;
}

/* Runs sql, calling row() per result row; FALSE with the error on failure.
 * After a failed query the file's error is set and later queries are not
 * run (the first error is the one reported; a malformed database fails
 * every query). */
static gboolean query(ns_file *nf, const char *sql, void (*row)(sqlite3_stmt *, gpointer), gpointer data)
{
  if (nf->error && *nf->error)
    return FALSE;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(nf->db, sql, -1, &st, NULL);
  if (rc == SQLITE_OK)
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
      row(st, data);
  if (rc != SQLITE_DONE && rc != SQLITE_OK)
    g_set_error(nf->error, WISP_ERROR, WISP_ERROR_INVALID, "%s: query failed: %s (%s)", nf->path,
                sqlite3_errmsg(nf->db), sql);
  sqlite3_finalize(st);
  return rc == SQLITE_DONE || rc == SQLITE_OK;
}

typedef struct {
  GArray *ops;             /* ns_op */
  GArray *devices;         /* int64_t device ids */
  GArray *op_device;       /* int64_t per op */
  uint8_t kind;
  GArray *markers;         /* ns_marker: the NVTX step ranges (nsys_steps.c), NULL before they are read */
  int64_t row;             /* rows of the current table read so far */
  char *bad;               /* the first row whose times cannot be read, NULL when none */
} op_rows;

/* TRUE when why (a value's check: ns_time_why, ns_int_why) is NULL; else
 * the reason, kept in o->bad for the first such row with its table and
 * row, and FALSE (a start of 2^63 - 1 ns wrapped when turned into ps and
 * the op vanished with a GLib critical; a copy of 'abc' or -5 bytes read
 * as 0 and one of 1e300 as 2^63 - 1). */
static gboolean value_ok(char *why, op_rows *o)
{
  static const char *const tables[] = {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                                       "CUPTI_ACTIVITY_KIND_MEMSET"};
  if (why == NULL)
    return TRUE;
  if (o->bad == NULL)
    o->bad = g_strdup_printf("table %s, row %" G_GINT64_FORMAT ": %s; the export is damaged", tables[o->kind], o->row,
                             why);
  g_free(why);
  return FALSE;
}

static void op_row(sqlite3_stmt *st, gpointer data)
{
  op_rows *o = data;
  ns_op op = {0};
  o->row++;
  if (!value_ok(ns_time_why(st, 0, "start"), o) || !value_ok(ns_time_why(st, 1, "end"), o) ||
      (o->kind != 0 && !value_ok(ns_int_why(st, 4, "bytes", 0, (int64_t)WISP_MAX_BYTES, "a byte count"), o)))
    return;
  op.start = sqlite3_column_int64(st, 0);
  op.end = sqlite3_column_int64(st, 1);
  int64_t dev = sqlite3_column_int64(st, 2);
  op.stream = sqlite3_column_int64(st, 3);
  op.kind = o->kind;
  op.corr = -1;
  if (o->kind == 0) {
    const unsigned char *n = sqlite3_column_text(st, 4);
    op.name = g_strdup(n ? (const char *)n : "(unnamed kernel)");
    op.corr = sqlite3_column_int64(st, 5);
  } else {
    op.bytes = (uint64_t)sqlite3_column_int64(st, 4); /* checked: [0, 2^50] */
    static const char *const kinds[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD",
                                        "HtoH", "PtoP"};
    int64_t ck = sqlite3_column_int64(st, 5);
    op.name = o->kind == 1 ? g_strdup_printf("Memcpy %s", ck >= 0 && ck < 11 ? kinds[ck] : "Unknown")
                           : g_strdup("Memset");
  }
  if (op.end < op.start)
    op.end = op.start;
  op.anchor = sqlite3_column_int64(st, 6);
  op.pid = sqlite3_column_int64(st, 7);
  g_array_append_val(o->ops, op);
  g_array_append_val(o->op_device, dev);
  gboolean seen = FALSE;
  for (guint i = 0; i < o->devices->len && !seen; i++)
    seen = g_array_index(o->devices, int64_t, i) == dev;
  if (!seen)
    g_array_append_val(o->devices, dev);
}

static void count_row(sqlite3_stmt *st, gpointer data)
{
  uint64_t *c = data;
  for (int i = 0; i < sqlite3_column_count(st); i++)
    c[i] = (uint64_t)MAX(sqlite3_column_int64(st, i), 0);
}

static void text_row(sqlite3_stmt *st, gpointer data)
{
  char **s = data;
  const unsigned char *t = sqlite3_column_text(st, 0);
  if (*s == NULL && t)
    *s = g_strdup((const char *)t);
}

/* Sizes of NCCL kernels from NCCL's NVTX payloads (nsys_nvtx.c), when
 * the export has the columns that join them: kernel and runtime
 * correlationId, runtime and NVTX globalTid, NVTX jsonText.  Otherwise the
 * report says which is missing.  O(ops + ranges log ranges). */
static gboolean nccl_sizes(ns_file *nf, op_rows *o, gboolean has_corr)
{
  static const char *const rt[] = {"globalTid", "correlationId", NULL};
  static const char *const nv[] = {"globalTid", "jsonText", NULL};
  static const char *const nvid[] = {"jsonTextId", NULL};
  fe_nsys_file_report *fr = nf->fr;
  if (!has_corr || !ns_has_columns(nf->db, "CUPTI_ACTIVITY_KIND_RUNTIME", rt) ||
      !ns_has_columns(nf->db, "NVTX_EVENTS", nv)) {
    fr->sizes_why = !has_corr ? "the kernel table has no correlationId"
                    : !ns_has_columns(nf->db, "CUPTI_ACTIVITY_KIND_RUNTIME", rt)
                        ? "no CUPTI_ACTIVITY_KIND_RUNTIME with globalTid and correlationId (trace cuda)"
                        : "no NVTX_EVENTS with globalTid and jsonText (trace nvtx; NCCL 2.19 or later writes the "
                          "payloads)";
    return TRUE;
  }
  static const char *const kpid[] = {"globalPid", NULL};
  gboolean by_pid = ns_has_columns(nf->db, "CUPTI_ACTIVITY_KIND_KERNEL", kpid);
  GHashTable *by_corr = ns_nvtx_nccl_sizes(nf->db, nf->path, ns_has_columns(nf->db, "NVTX_EVENTS", nvid), by_pid,
                                           &fr->nvtx_sized_ranges, nf->error);
  if (by_corr == NULL)
    return FALSE;
  if (fr->nvtx_sized_ranges == 0)
    fr->sizes_why = "no NVTX range carries NCCL's \"" NS_NCCL_SIZE_KEY "\" payload";
  for (guint i = 0; i < o->ops->len; i++) {
    ns_op *op = &g_array_index(o->ops, ns_op, i);
    int64_t key = ns_launch_key(by_pid ? op->pid : -1, op->corr);
    const ns_payload *p = op->kind == 0 && op->corr >= 0 ? g_hash_table_lookup(by_corr, &key) : NULL;
    if (p) {
      op->pl = *p;
      op->sized = TRUE;
    }
  }
  g_hash_table_destroy(by_corr);
  return TRUE;
}

/* query() over GPU op rows (table kind o->kind); FALSE with the error
 * naming the file, table, row and field when a row's times are unusable. */
static gboolean ops_query(ns_file *nf, const char *sql, op_rows *o)
{
  o->row = 0;
  if (!query(nf, sql, op_row, o))
    return FALSE;
  if (o->bad) {
    g_set_error(nf->error, WISP_ERROR, WISP_ERROR_INVALID, "%s: %s", nf->path, o->bad);
    return FALSE;
  }
  return TRUE;
}

static gboolean read_ops(ns_file *nf, op_rows *o, gboolean m, gboolean ms);

/* The schema check and the counted tables; then the step markers and the
 * GPU ops. */
static gboolean read_file(ns_file *nf, op_rows *o)
{
  static const char *const kcols[] = {"start", "end", "deviceId", "streamId", "demangledName", NULL};
  static const char *const scols[] = {"id", "value", NULL};
  static const char *const mcols[] = {"start", "end", "deviceId", "streamId", "bytes", "copyKind", NULL};
  static const char *const mscols[] = {"start", "end", "deviceId", "streamId", "bytes", NULL};
  static const char *const rcols[] = {"start", "end", "nameId", NULL};
  static const char *const ncols[] = {"start", "end", "text", "textId", NULL};
  static const char *const gcols[] = {"id", "name", NULL};
  static const char *const ecols[] = {"name", "value", NULL};
  gboolean k, s, m, ms, rt, nv, gpu, meta;
  if (!check_table(nf, "CUPTI_ACTIVITY_KIND_KERNEL", kcols, TRUE, &k) ||
      !check_table(nf, "StringIds", scols, TRUE, &s) ||
      !check_table(nf, "CUPTI_ACTIVITY_KIND_MEMCPY", mcols, FALSE, &m) ||
      !check_table(nf, "CUPTI_ACTIVITY_KIND_MEMSET", mscols, FALSE, &ms) ||
      !check_table(nf, "CUPTI_ACTIVITY_KIND_RUNTIME", rcols, FALSE, &rt) ||
      !check_table(nf, "NVTX_EVENTS", ncols, FALSE, &nv) || !check_table(nf, "TARGET_INFO_GPU", gcols, FALSE, &gpu) ||
      !check_table(nf, "META_DATA_EXPORT", ecols, FALSE, &meta))
    return FALSE;
  fe_nsys_file_report *fr = nf->fr;
  if (meta)
    query(nf, "SELECT value FROM META_DATA_EXPORT WHERE name = 'EXPORT_SCHEMA_VERSION'", text_row,
          &fr->export_version);
  if (fr->export_version == NULL)
    fr->export_version = g_strdup("unknown (an older export: no META_DATA_EXPORT)");
  if (gpu)
    query(nf, "SELECT name FROM TARGET_INFO_GPU ORDER BY id", text_row, &fr->device_name);
  uint64_t c[3] = {0};
  if (rt && query(nf, "SELECT count(*), sum(s.value LIKE '%Launch%'), sum(s.value LIKE '%Synchronize%') FROM "
                  "CUPTI_ACTIVITY_KIND_RUNTIME r LEFT JOIN StringIds s ON s.id = r.nameId", count_row, c)) {
    fr->runtime_calls = c[0];
    fr->launches = c[1];
    fr->syncs = c[2];
  }
  memset(c, 0, sizeof c);
  if (nv && query(nf, "SELECT count(*), sum(coalesce(n.text, s.value) LIKE 'nccl%') FROM NVTX_EVENTS n LEFT JOIN "
                  "StringIds s ON s.id = n.textId WHERE n.end IS NOT NULL", count_row, c)) {
    fr->nvtx_ranges = c[0];
    fr->nvtx_nccl_ranges = c[1];
  }
  if (nf->error && *nf->error)
    return FALSE;
  gboolean inference = FALSE;
  if ((o->markers = ns_step_markers(nf->db, nf->path, nf->opt->executions, &inference, nf->error)) == NULL)
    return FALSE;
  fr->step_markers = o->markers->len;
  fr->inference_markers = inference;
  return read_ops(nf, o, m, ms);
}

/* SQL for one GPU op table: the columns op_row reads, the process, and
 * the anchor only when the export has step markers to place ops in. */
static char *ops_sql(ns_file *nf, const op_rows *o, const char *cols, const char *table, const char *join)
{
  gboolean steps = o->markers->len > 0 && !nf->opt->whole_trace;
  char *ajoin = NULL;
  char *anchor = steps ? ns_anchor_sql(nf->db, table, "k", &ajoin) : g_strdup("k.start");
  char *pid = ns_pid_sql(nf->db, table, "k"); /* the step windows' and the NCCL sizes' process */
  char *sql = g_strdup_printf("SELECT %s, %s, %s FROM %s k%s%s", cols, anchor, pid, table, join, ajoin ? ajoin : "");
  g_free(anchor);
  g_free(ajoin);
  g_free(pid);
  return sql;
}

/* The GPU ops: kernels (with their NCCL sizes), memcpys, memsets. */
static gboolean read_ops(ns_file *nf, op_rows *o, gboolean m, gboolean ms)
{
  o->kind = 0;
  static const char *const corr[] = {"correlationId", NULL};
  gboolean has_corr = ns_has_columns(nf->db, "CUPTI_ACTIVITY_KIND_KERNEL", corr);
  char *sql = ops_sql(nf, o, has_corr ? "k.start, k.end, k.deviceId, k.streamId, s.value, k.correlationId"
                                      : "k.start, k.end, k.deviceId, k.streamId, s.value, -1",
                      "CUPTI_ACTIVITY_KIND_KERNEL", " LEFT JOIN StringIds s ON s.id = k.demangledName");
  gboolean ok = ops_query(nf, sql, o) && nccl_sizes(nf, o, has_corr);
  g_free(sql);
  o->kind = 1;
  if (ok && m) {
    sql = ops_sql(nf, o, "k.start, k.end, k.deviceId, k.streamId, k.bytes, k.copyKind", "CUPTI_ACTIVITY_KIND_MEMCPY",
                  "");
    ok = ops_query(nf, sql, o);
    g_free(sql);
  }
  o->kind = 2;
  if (ok && ms) {
    sql = ops_sql(nf, o, "k.start, k.end, k.deviceId, k.streamId, k.bytes, 0", "CUPTI_ACTIVITY_KIND_MEMSET", "");
    ok = ops_query(nf, sql, o);
    g_free(sql);
  }
  return ok;
}

static int cmp_op(gconstpointer a, gconstpointer b)
{
  const ns_op *x = *(ns_op *const *)a, *y = *(ns_op *const *)b;
  if (x->stream != y->stream)
    return x->stream < y->stream ? -1 : 1;
  return x->start < y->start ? -1 : x->start > y->start;
}

/* The communicators every rank of the load takes part in, as far as the
 * sized NCCL kernels show them (comm id -> the ranks seen), and the load's
 * rank count: a collective on such a communicator is a world collective. */
typedef struct {
  GHashTable *world;       /* uint64_t* comm ids spanning every rank */
  int n_ranks;
} ns_comms;

/* Chakra's comm_size from NCCL's "Message size [bytes]" on a world
 * communicator of n ranks (NCCL src/collectives.cc): all-reduce, broadcast,
 * reduce and all-gather (sendcount, the per-rank shard) as they are;
 * reduce-scatter passes recvcount (Chakra: the full input, n times it);
 * all-to-all passes the per-peer count (Chakra: the send buffer, n times
 * it). */
static uint64_t chakra_bytes(et_coll_type coll, uint64_t bytes, int n)
{
  return coll == ET_COLL_REDUCE_SCATTER || coll == ET_COLL_ALL_TO_ALL ? bytes * (uint64_t)n : bytes;
}

/* A communication kernel's node: with a size on a world communicator it is
 * simulated; otherwise replayed at its measured duration. */
static void comm_node(et_builder *b, uint32_t n, const ns_op *op, et_coll_type coll, const ns_comms *cm,
                      fe_nsys_file_report *fr)
{
  et_comm c = {.coll = (uint8_t)coll, .src = -1, .dst = -1, .tag = -1, .root = -1};
  if (op->sized && op->pl.has_comm && cm->world && g_hash_table_contains(cm->world, &op->pl.comm)) {
    c.group = ET_GROUP_WORLD;
    c.bytes = chakra_bytes(coll, op->pl.bytes, cm->n_ranks);
    fr->comm_sized++;
  } else {
    fr->comm_replayed++;
    fr->comm_sized_not_world += op->sized;
  }
  et_builder_set_comm(b, n, &c, NULL, NULL, 0);
  fr->comm_kernels++;
}

static gboolean simulated_comm(const ns_op *op, const ns_comms *cm)
{
  return op->sized && op->pl.has_comm && cm->world && g_hash_table_contains(cm->world, &op->pl.comm);
}

/* One device's graph: per stream, [delay] op [delay] op ...  The ops are
 * sorted by (stream, start); ids count from 1.  O(ops log ops). */
static et_graph *device_graph(const char *source, GPtrArray *ops, const ns_comms *cm, fe_nsys_file_report *fr,
                              const ns_window *win, sim_time_ps *window, GError **error)
{
  g_ptr_array_sort(ops, cmp_op);
  int64_t t0 = INT64_MAX, t1 = INT64_MIN;
  for (guint i = 0; i < ops->len; i++) {
    const ns_op *op = ops->pdata[i];
    t0 = MIN(t0, op->start);
    t1 = MAX(t1, op->end);
  }
  if (win->have) { /* the step window (nsys_steps.c): its ops start at or after ws */
    t0 = win->ws;
    t1 = win->we;
  }
  et_builder *b = et_builder_new(source);
  et_builder_set_version(b, "nsys-sqlite");
  uint64_t id = 1, prev = 0;
  int64_t prev_stream = INT64_MIN, prev_end = t0;
  for (guint i = 0; i < ops->len; i++) {
    const ns_op *op = ops->pdata[i];
    if (op->stream != prev_stream) {
      prev = 0;
      prev_end = t0;
      prev_stream = op->stream;
    }
    if (op->start > prev_end) { /* the stream's idle time, kept as a delay */
      uint32_t d = et_builder_add_node(b, id, ET_NODE_COMP, "idle", (op->start - prev_end) * 1000, ET_FLAG_DELAY);
      if (prev)
        et_builder_add_dep(b, d, prev, FALSE, TRUE);
      prev = id++;
    }
    et_coll_type coll = ET_COLL_NONE;
    int p2p = 0;
    const kt_commreg_entry *e = op->kind == 0 ? kt_commreg_lookup(op->name) : NULL;
    gboolean comm = e && e->kind_from_name && kt_coll_from_kernel(op->name, &coll, &p2p) && p2p == 0;
    if (e && !comm)
      fr->p2p_as_compute++;
    gboolean replay = comm && !simulated_comm(op, cm);
    uint32_t n = et_builder_add_node(b, id, comm ? ET_NODE_COMM_COLL : ET_NODE_COMP, op->name,
                                     (op->end - op->start) * 1000, (uint8_t)(ET_FLAG_HAS_START | (replay ? ET_FLAG_REPLAY : 0)));
    et_builder_set_start(b, n, (op->start - t0) * 1000);
    if (op->kind != 0) /* the bytes a copy or memset moved (tensor_size; doc/metrics.md) */
      et_builder_set_comp_attrs(b, n, 0, TRUE, op->bytes);
    if (comm)
      comm_node(b, n, op, coll, cm, fr);
    if (prev)
      et_builder_add_dep(b, n, prev, FALSE, TRUE);
    prev = id++;
    prev_end = MAX(prev_end, op->end);
  }
  *window = ops->len || win->have ? (t1 - t0) * 1000 : 0;
  return et_builder_finish(b, 0, error);
}

static int cmp_i64(gconstpointer a, gconstpointer b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* One file's GPU ops into o, its devices sorted; the report's counts
 * from its tables.  FALSE with the error naming the file. */
static gboolean read_export(const char *path, const fe_nsys_options *opt, fe_nsys_file_report *fr, op_rows *o,
                            GError **error)
{
  ns_file nf = {path, NULL, fr, opt, error};
  wisp_input_note(path); /* no output may replace it */
  if (sqlite3_open_v2(path, &nf.db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot open as SQLite: %s", path,
                nf.db ? sqlite3_errmsg(nf.db) : "out of memory");
    sqlite3_close(nf.db);
    return FALSE;
  }
  gboolean ok = read_file(&nf, o);
  sqlite3_close(nf.db);
  if (ok && o->ops->len == 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: the export holds no kernel, memcpy or memset: nothing "
                "ran on a GPU while it was profiled", path);
    ok = FALSE;
  }
  g_array_sort(o->devices, cmp_i64);
  return ok;
}

static void rows_clear(op_rows *o)
{
  for (guint i = 0; o->ops && i < o->ops->len; i++)
    g_free(g_array_index(o->ops, ns_op, i).name);
  if (o->ops)
    g_array_free(o->ops, TRUE);
  if (o->devices)
    g_array_free(o->devices, TRUE);
  if (o->op_device)
    g_array_free(o->op_device, TRUE);
  if (o->markers)
    g_array_free(o->markers, TRUE);
  g_free(o->bad);
}

/* The communicators of the sized NCCL kernels seen on every one of the
 * n_ranks ranks (files in order, devices in id order within a file).
 * O(ops). */
static GHashTable *world_comms(const op_rows *rows, int n_files, int n_ranks)
{
  GHashTable *seen = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, (GDestroyNotify)g_hash_table_destroy);
  for (int f = 0, base = 0; f < n_files; base += (int)rows[f].devices->len, f++)
    for (guint i = 0; i < rows[f].ops->len; i++) {
      const ns_op *op = &g_array_index(rows[f].ops, ns_op, i);
      if (!op->sized || !op->pl.has_comm)
        continue;
      int64_t dev = g_array_index(rows[f].op_device, int64_t, i);
      int rank = base;
      while (g_array_index(rows[f].devices, int64_t, rank - base) != dev)
        rank++;
      GHashTable *ranks = g_hash_table_lookup(seen, &op->pl.comm);
      if (ranks == NULL) {
        int64_t *k = g_new(int64_t, 1);
        *k = (int64_t)op->pl.comm;
        ranks = g_hash_table_new(g_direct_hash, g_direct_equal);
        g_hash_table_insert(seen, k, ranks);
      }
      g_hash_table_add(ranks, GINT_TO_POINTER(rank + 1));
    }
  GHashTable *world = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, seen);
  while (g_hash_table_iter_next(&it, &k, &v))
    if ((int)g_hash_table_size(v) == n_ranks)
      g_hash_table_add(world, g_memdup2(k, sizeof(int64_t)));
  g_hash_table_destroy(seen);
  return world;
}

/* Device dev's ops of its step window (all of them without one), counted
 * in the file's report; *win the window.  FALSE with the error when the
 * steps asked for are absent.  O(ops log ops + markers log ops). */
static GPtrArray *device_ops(const char *path, op_rows *o, int64_t dev, const fe_nsys_options *opt,
                             fe_nsys_file_report *fr, ns_window *win, GError **error)
{
  GArray *sp = g_array_new(FALSE, FALSE, sizeof(ns_span));
  for (guint i = 0; i < o->ops->len; i++)
    if (g_array_index(o->op_device, int64_t, i) == dev) {
      const ns_op *op = &g_array_index(o->ops, ns_op, i);
      ns_span x = {op->pid, op->anchor, op->end};
      g_array_append_val(sp, x);
    }
  gboolean ok = ns_step_window(o->markers, (const ns_span *)(void *)sp->data, sp->len, opt, path, win, error);
  g_array_free(sp, TRUE);
  if (!ok)
    return NULL;
  GPtrArray *ops = g_ptr_array_new();
  for (guint i = 0; i < o->ops->len; i++) {
    ns_op *op = &g_array_index(o->ops, ns_op, i);
    if (g_array_index(o->op_device, int64_t, i) != dev || (win->have && (op->anchor < win->ws || op->anchor >= win->wa)))
      continue;
    g_ptr_array_add(ops, op);
    fr->kernels += op->kind == 0;
    fr->memcpys += op->kind == 1;
    fr->memsets += op->kind == 2;
    fr->memcpy_bytes += op->kind == 1 ? op->bytes : 0;
    fr->memset_bytes += op->kind == 2 ? op->bytes : 0;
  }
  if (fr->n_devices == 0) {
    fr->step_first = win->first;
    fr->step_last = win->last;
    fr->step_used_first = win->have ? win->used_first : -1;
    fr->step_used_last = win->have ? win->used_last : -1;
  }
  return ops;
}

/* One file's devices' graphs appended to graphs; *n_steps the most steps
 * a device's window spans. */
static gboolean build_file(const char *path, const fe_nsys_options *opt, fe_nsys_file_report *fr, op_rows *o,
                           const ns_comms *cm, GPtrArray *graphs, GArray *windows, int *n_steps, GError **error)
{
  gboolean ok = TRUE;
  for (guint d = 0; ok && d < o->devices->len; d++) {
    int64_t dev = g_array_index(o->devices, int64_t, d);
    ns_window win;
    GPtrArray *ops = device_ops(path, o, dev, opt, fr, &win, error);
    if (ops == NULL)
      return FALSE;
    *n_steps = MAX(*n_steps, win.have ? win.n_steps : 1);
    char *src = g_strdup_printf("%s (device %" G_GINT64_FORMAT ")", path, dev);
    sim_time_ps span = 0;
    et_graph *g = device_graph(src, ops, cm, fr, &win, &span, error);
    g_free(src);
    g_ptr_array_free(ops, TRUE);
    if ((ok = g != NULL)) {
      g_ptr_array_add(graphs, g);
      g_array_append_val(windows, span);
      fr->window_ps = MAX(fr->window_ps, span);
      fr->n_devices++;
    }
  }
  return ok;
}

et_workload *fe_nsys_load(const char *const *paths, int n_paths, fe_nsys_report *report, GError **error)
{
  return fe_nsys_load_opts(paths, n_paths, NULL, report, error);
}

et_workload *fe_nsys_load_opts(const char *const *paths, int n_paths, const fe_nsys_options *opt,
                               fe_nsys_report *report, GError **error)
{
  fe_nsys_options defaults;
  fe_nsys_options_init(&defaults);
  opt = opt ? opt : &defaults;
  fe_nsys_report local;
  fe_nsys_report *rep = report ? report : &local;
  if (!report)
    fe_nsys_report_init(&local);
  GPtrArray *graphs = g_ptr_array_new();
  GArray *windows = g_array_new(FALSE, FALSE, sizeof(sim_time_ps));
  gboolean ok = TRUE;
  /* Read every file first: a collective is a world collective when its
   * communicator is seen on every rank of the load. */
  op_rows *rows = g_new0(op_rows, n_paths);
  int n_ranks = 0, n_read = 0;
  for (int i = 0; ok && i < n_paths; i++, n_read++) {
    fe_nsys_file_report fr = {0};
    fr.step_first = fr.step_last = fr.step_used_first = fr.step_used_last = -1;
    fr.path = g_strdup(paths[i]);
    rows[i] = (op_rows){g_array_new(FALSE, FALSE, sizeof(ns_op)), g_array_new(FALSE, FALSE, sizeof(int64_t)),
                        g_array_new(FALSE, FALSE, sizeof(int64_t)), 0};
    ok = read_export(paths[i], opt, &fr, &rows[i], error);
    rep->inference_markers |= fr.inference_markers;
    n_ranks += ok ? (int)rows[i].devices->len : 0;
    g_array_append_val(rep->files, fr);
  }
  ns_comms cm = {ok ? world_comms(rows, n_paths, n_ranks) : NULL, n_ranks};
  rep->steps_in_window = 1;
  for (int i = 0; ok && i < n_paths; i++) {
    fe_nsys_file_report *fr = &g_array_index(rep->files, fe_nsys_file_report, i);
    fr->first_rank = (int)graphs->len;
    ok = build_file(paths[i], opt, fr, &rows[i], &cm, graphs, windows, &rep->steps_in_window, error);
  }
  for (int i = 0; i < n_read; i++)
    rows_clear(&rows[i]);
  g_free(rows);
  if (cm.world)
    g_hash_table_destroy(cm.world);
  et_workload *w = NULL;
  if (ok) {
    w = et_workload_new((int)graphs->len, n_paths == 1 ? paths[0] : "(Nsight Systems exports)");
    for (guint r = 0; r < graphs->len; r++) {
      w->ranks[r] = graphs->pdata[r];
      w->measured_step_ps[r] = g_array_index(windows, sim_time_ps, r);
    }
    rep->n_ranks = w->n_ranks;
    ok = et_workload_resolve_groups(w, error);
    uint64_t replayed = 0;
    for (guint i = 0; i < rep->files->len; i++)
      replayed += g_array_index(rep->files, fe_nsys_file_report, i).comm_replayed;
    if (replayed)
      g_ptr_array_add(rep->warnings, g_strdup_printf("%" G_GUINT64_FORMAT " communication kernel(s) carry no size "
                      "from NCCL's NVTX payloads on a world communicator and are replayed at their measured duration",
                      replayed));
    g_ptr_array_add(rep->warnings, g_strdup("CUDA runtime launches and synchronisations are counted, not modelled: "
                    "each GPU stream replays its measured order and idle time"));
  } else {
    for (guint r = 0; r < graphs->len; r++)
      et_graph_free(graphs->pdata[r]);
  }
  if (!ok && w) {
    et_workload_free(w);
    w = NULL;
  }
  g_ptr_array_free(graphs, TRUE);
  g_array_free(windows, TRUE);
  if (!report)
    fe_nsys_report_clear(&local);
  return w;
}
