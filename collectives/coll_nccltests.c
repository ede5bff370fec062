/* coll_nccltests.c: nccl-tests result files, CSV or raw output (see
 * coll_nccltests.h).  One pass over the lines, then one pass over the
 * tables to settle what each says about its run.  Time O(file size),
 * memory O(rows + tables).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/coll_nccltests.h"
#include "common/wisp_util.h"

/* The binaries of nccl-tests (the src/ files of NVIDIA/nccl-tests) with the
 * collective wisp runs for each (ET_COLL_NONE: none, or point-to-point). */
static const struct {
  const char *name, *op;
  et_coll_type t;
  gboolean runs;
} ncclt_bins[] = {
  { "all_reduce_perf", "all_reduce", ET_COLL_ALL_REDUCE, TRUE },
  { "all_gather_perf", "all_gather", ET_COLL_ALL_GATHER, TRUE },
  { "reduce_scatter_perf", "reduce_scatter", ET_COLL_REDUCE_SCATTER, TRUE },
  { "reduce_perf", "reduce", ET_COLL_REDUCE, TRUE },
  { "broadcast_perf", "broadcast", ET_COLL_BROADCAST, TRUE },
  { "alltoall_perf", "all_to_all", ET_COLL_ALL_TO_ALL, TRUE },
  { "gather_perf", "gather", ET_COLL_GATHER, TRUE },
  { "scatter_perf", "scatter", ET_COLL_SCATTER, TRUE },
  { "sendrecv_perf", "sendrecv", ET_COLL_NONE, FALSE },
  { "hypercube_perf", "hypercube", ET_COLL_NONE, FALSE },
  { "alltoallv_perf", "all_to_allv", ET_COLL_NONE, FALSE },
};

gboolean coll_ncclt_op(const char *test, et_coll_type *type)
{
  for (size_t i = 0; i < G_N_ELEMENTS(ncclt_bins); i++)
    if (ncclt_bins[i].runs && strcmp(test, ncclt_bins[i].name) == 0) {
      *type = ncclt_bins[i].t;
      return TRUE;
    }
  return FALSE;
}

gboolean coll_ncclt_is_sendrecv(const char *test)
{
  return strcmp(test, "sendrecv_perf") == 0;
}

const char *coll_ncclt_binary_of(const char *op_name)
{
  for (size_t i = 0; i < G_N_ELEMENTS(ncclt_bins); i++)
    if (g_ascii_strcasecmp(op_name, ncclt_bins[i].op) == 0 || g_ascii_strcasecmp(op_name, ncclt_bins[i].name) == 0)
      return ncclt_bins[i].name;
  if (g_ascii_strcasecmp(op_name, "allreduce") == 0)
    return "all_reduce_perf";
  if (g_ascii_strcasecmp(op_name, "allgather") == 0)
    return "all_gather_perf";
  if (g_ascii_strcasecmp(op_name, "reducescatter") == 0)
    return "reduce_scatter_perf";
  if (g_ascii_strcasecmp(op_name, "alltoall") == 0)
    return "alltoall_perf";
  return NULL;
}

/* Bytes per element of nccl-tests' type names (src/common.cu test_typenames);
 * 0 for a name it does not print. */
static int ncclt_type_bytes(const char *type)
{
  static const struct {
    const char *n;
    int b;
  } ty[] = { { "int8", 1 },    { "uint8", 1 },   { "int32", 4 },    { "uint32", 4 }, { "int64", 8 },
             { "uint64", 8 },  { "half", 2 },    { "float", 4 },    { "double", 8 }, { "bfloat16", 2 },
             { "f8e4m3", 1 },  { "f8e5m2", 1 },  { "fp8_e4m3", 1 }, { "fp8_e5m2", 1 } };
  for (size_t i = 0; i < G_N_ELEMENTS(ty); i++)
    if (strcmp(type, ty[i].n) == 0)
      return ty[i].b;
  return 0;
}

/* ---- checked fields ---- */

static gboolean field_u64(const char *path, int line, const char *name, const char *s, uint64_t *out, GError **error)
{
  const char *p = s;
  uint64_t v = 0;
  gboolean ok = *p != '\0';
  for (; *p && ok; p++) {
    if (*p < '0' || *p > '9' || v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
      ok = FALSE;
    else
      v = v * 10 + (uint64_t)(*p - '0');
  }
  if (!ok) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE,
                "%s:%d: %s '%s' is not a count (a non-negative decimal integer); fix or remove the line", path, line,
                name, s);
    return FALSE;
  }
  *out = v;
  return TRUE;
}

static gboolean field_double(const char *path, int line, const char *name, const char *s, gboolean positive,
                             double *out, GError **error)
{
  char *end = NULL;
  double v = g_ascii_strtod(s, &end);
  if (end == s || *end != '\0' || !isfinite(v) || v < 0 || (positive && v == 0)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s:%d: %s '%s' is not a finite %s number; fix or remove the "
                "line", path, line, name, s, positive ? "positive" : "non-negative");
    return FALSE;
  }
  *out = v;
  return TRUE;
}

static gboolean field_root(const char *path, int line, const char *s, int *out, GError **error)
{
  char *end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < -1 || v > (1 << 24)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s:%d: root '%s' is not -1 or a rank; fix or remove the line",
                path, line, s);
    return FALSE;
  }
  *out = (int)v;
  return TRUE;
}

/* ---- columns ---- */

enum { C_TEST, C_TABLE, C_SIZE, C_COUNT, C_TYPE, C_REDOP, C_ROOT, C_TIME, C_ALGBW, C_BUSBW, C_N };

typedef struct {
  int at[C_N];          /* field index of each column, -1 when absent */
  int n_fields;         /* fields a row needs */
} ncclt_cols;

static const char *const col_names[C_N] = { "test", "table", "size_bytes", "count", "type", "redop", "root",
                                            "oop_time_us", "oop_algbw_GBps", "oop_busbw_GBps" };

/* The raw output's standard columns (nccl-tests >= 2.10): size count type
 * redop root time algbw busbw. */
static void cols_raw_default(ncclt_cols *c)
{
  static const int at[C_N] = { -1, -1, 0, 1, 2, 3, 4, 5, 6, 7 };
  memcpy(c->at, at, sizeof at);
  c->n_fields = 8;
}

/* Maps the named fields of a header (CSV names, or the raw output's
 * "size count type redop root time algbw busbw") onto the columns; the
 * first occurrence counts (out-of-place before in-place). */
static void cols_from_names(ncclt_cols *c, gchar **f, gboolean raw)
{
  static const char *const raw_names[C_N] = { "", "", "size", "count", "type", "redop", "root", "time", "algbw",
                                              "busbw" };
  static const char *const plain[C_N] = { "", "", "size", "", "", "", "", "time_us", "algbw_GBps", "busbw_GBps" };
  for (int k = 0; k < C_N; k++)
    c->at[k] = -1;
  c->n_fields = 0;
  for (int i = 0; f[i]; i++) {
    const char *name = g_strstrip(f[i]);
    for (int k = 0; k < C_N; k++) {
      gboolean m = raw ? strcmp(name, raw_names[k]) == 0
                       : (strcmp(name, col_names[k]) == 0 || (plain[k][0] && strcmp(name, plain[k]) == 0));
      if (m && c->at[k] < 0) {
        c->at[k] = i;
        c->n_fields = MAX(c->n_fields, i + 1);
      }
    }
  }
}

/* ---- reading ---- */

typedef struct {
  const char *path;
  coll_ncclt_log *log;
  ncclt_cols cols;
  gboolean have_header;       /* CSV: the header line was seen */
  int cur;                    /* raw: index of the current table in log->tables, -1 none */
  int block;                  /* header blocks ("# nThread") seen */
  GPtrArray *mentions;        /* distinct binary names in the comments */
  int cmd_gpus;               /* "-g N" on a command line in the comments, 0 none */
} ncclt_reader;

static coll_ncclt_table *table_at(ncclt_reader *r, int number, int line)
{
  GArray *ts = r->log->tables;
  for (guint i = 0; i < ts->len; i++)
    if (g_array_index(ts, coll_ncclt_table, i).table == number)
      return &g_array_index(ts, coll_ncclt_table, i);
  coll_ncclt_table t;
  memset(&t, 0, sizeof t);
  t.table = number;
  t.first_line = line;
  g_array_append_val(ts, t);
  return &g_array_index(ts, coll_ncclt_table, ts->len - 1);
}

/* Removes every mpirun tag "[a,b]<stdout>:" / "<stderr>:" from l. */
static void strip_tags(GString *l)
{
  for (;;) {
    char *p = strchr(l->str, '[');
    gboolean cut = FALSE;
    while (p != NULL && !cut) {
      char *q = strchr(p, ']');
      if (q && (g_str_has_prefix(q + 1, "<stdout>:") || g_str_has_prefix(q + 1, "<stderr>:"))) {
        g_string_erase(l, p - l->str, (q + 10) - p);
        cut = TRUE;
      } else {
        p = strchr(p + 1, '[');
      }
    }
    if (!cut)
      return;
  }
}

/* A comment line: header blocks, rank lines, binary names, -g. */
static void read_comment(ncclt_reader *r, const char *c, int line)
{
  while (*c == '#' || *c == ' ' || *c == '\t')
    c++;
  const char *start = "Collective test starting:";
  gboolean starting = g_str_has_prefix(c, start), nthread = g_str_has_prefix(c, "nThread ");
  if (r->log->raw && (starting || nthread)) {
    /* A new table, unless this nThread line follows its own
     * "Collective test starting" line (nccl-tests >= 2.14 prints both). */
    coll_ncclt_table *cur = r->cur >= 0 ? &g_array_index(r->log->tables, coll_ncclt_table, r->cur) : NULL;
    if (!(nthread && cur && cur->n_rows == 0 && cur->gpus_per_thread == 0 && cur->test[0])) {
      table_at(r, (int)r->log->tables->len + 1, line);
      r->cur = (int)r->log->tables->len - 1;
    }
  } else if (nthread) {
    r->block++;
  }
  coll_ncclt_table *t = NULL;
  if (r->log->raw && r->cur >= 0)
    t = &g_array_index(r->log->tables, coll_ncclt_table, r->cur);
  else if (!r->log->raw && r->block > 0)
    t = table_at(r, r->block, 0);
  if (starting && t) {
    char *name = g_strstrip(g_strdup(c + strlen(start)));
    char *base = g_path_get_basename(name);
    g_strlcpy(t->test, base, sizeof t->test);
    g_strlcpy(t->test_from, "the log's header", sizeof t->test_from);
    g_free(base);
    g_free(name);
  }
  int g = 0;
  if (nthread && t && sscanf(c, "nThread %*d nGpus %d", &g) == 1 && g > 0 && g <= 4096) {
    t->gpus_per_thread = g;
    g_strlcpy(t->gpus_from, "nGpus of the log's header", sizeof t->gpus_from);
  }
  /* "Rank N Group G Pid ..." (older versions: "Rank N Pid ..."). */
  if (t && g_str_has_prefix(c, "Rank ") && (strstr(c, " Group ") != NULL || strstr(c, " Pid ") != NULL)) {
    t->ranks++;
    g_snprintf(t->ranks_from, sizeof t->ranks_from, "%d rank lines of the log", t->ranks);
  }
  /* Binary names and "-g N" on a quoted command line. */
  for (size_t i = 0; i < G_N_ELEMENTS(ncclt_bins); i++) {
    const char *hit = strstr(c, ncclt_bins[i].name);
    if (hit == NULL || (hit > c && (g_ascii_isalnum(hit[-1]) || hit[-1] == '_')))
      continue;
    gboolean seen = FALSE;
    for (guint k = 0; k < r->mentions->len; k++)
      seen = seen || strcmp(g_ptr_array_index(r->mentions, k), ncclt_bins[i].name) == 0;
    if (!seen)
      g_ptr_array_add(r->mentions, (gpointer)ncclt_bins[i].name);
    const char *gp = strstr(hit, " -g ");
    if (gp && sscanf(gp, " -g %d", &g) == 1 && g > 0 && g <= 4096)
      r->cmd_gpus = g;
  }
  /* A quoted command whose binary is a placeholder: nccl-tests' -b/-e. */
  const char *gp = strstr(c, " -g ");
  if (gp && (strstr(c, " -b ") || strstr(c, " -e ")) && sscanf(gp, " -g %d", &g) == 1 && g > 0 && g <= 4096)
    r->cmd_gpus = g;
}

/* Parses the fields of one data row into *row; the table number is set
 * by the caller for raw output, `test` is the table's binary when known.
 * hypercube_perf prints an empty redop (nccl-tests src/hypercube.cu passes
 * ""), so its rows lack that field and the later ones move one left. */
static gboolean read_fields(ncclt_reader *r, gchar **f, int line, const char *test, coll_ncclt_row *row,
                            GError **error)
{
  ncclt_cols shifted = r->cols;
  const ncclt_cols *c = &r->cols;
  const char *path = r->path;
  if (c->at[C_TEST] >= 0)
    test = g_strstrip(f[c->at[C_TEST]]);
  if (test != NULL && strcmp(test, "hypercube_perf") == 0 && c->at[C_REDOP] >= 0) {
    for (int k = 0; k < C_N; k++)
      if (shifted.at[k] > c->at[C_REDOP])
        shifted.at[k]--;
    shifted.at[C_REDOP] = -1;
    c = &shifted;
  }
  row->line = line;
  row->root = -1;
  row->algbw_GBps = -1;
  if (c->at[C_TEST] >= 0)
    g_strlcpy(row->test, g_strstrip(f[c->at[C_TEST]]), sizeof row->test);
  if (c->at[C_TABLE] >= 0) {
    uint64_t tb = 0;
    if (!field_u64(path, line, "table", g_strstrip(f[c->at[C_TABLE]]), &tb, error))
      return FALSE;
    if (tb < 1 || tb > 100000) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s:%d: table %" G_GUINT64_FORMAT " is out of range "
                  "(1..100000)", path, line, tb);
      return FALSE;
    }
    row->table = (int)tb;
  }
  if (!field_u64(path, line, "size_bytes", g_strstrip(f[c->at[C_SIZE]]), &row->size, error))
    return FALSE;
  if (row->size > COLL_NCCLT_MAX_SIZE) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s:%d: size_bytes %" G_GUINT64_FORMAT " exceeds 2^50 B (1 "
                "PiB), beyond any nccl-tests run; fix or remove the line", path, line, row->size);
    return FALSE;
  }
  if (c->at[C_COUNT] >= 0 && !field_u64(path, line, "count", g_strstrip(f[c->at[C_COUNT]]), &row->count, error))
    return FALSE;
  if (c->at[C_TYPE] >= 0)
    g_strlcpy(row->type, g_strstrip(f[c->at[C_TYPE]]), sizeof row->type);
  if (c->at[C_REDOP] >= 0)
    g_strlcpy(row->redop, g_strstrip(f[c->at[C_REDOP]]), sizeof row->redop);
  if (c->at[C_ROOT] >= 0 && !field_root(path, line, g_strstrip(f[c->at[C_ROOT]]), &row->root, error))
    return FALSE;
  if (!field_double(path, line, "time_us", g_strstrip(f[c->at[C_TIME]]), TRUE, &row->time_us, error) ||
      !field_double(path, line, "busbw_GBps", g_strstrip(f[c->at[C_BUSBW]]), FALSE, &row->busbw_GBps, error))
    return FALSE;
  gboolean hyper = c == &shifted; /* its algbw is S (n-1)/n / t, not S / t */
  if (c->at[C_ALGBW] >= 0) {
    if (!field_double(path, line, "algbw_GBps", g_strstrip(f[c->at[C_ALGBW]]), FALSE, &row->algbw_GBps, error))
      return FALSE;
    /* nccl-tests prints algbw = S / t with 2 decimals and t with 3 significant
     * digits at worst ("1.2e+05"): allow that rounding, nothing more. */
    double want = (double)row->size / row->time_us / 1e3;
    if (!hyper && fabs(row->algbw_GBps - want) > 0.011 + 0.1 * want) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s:%d: algbw %.2f GB/s disagrees with size / time = %"
                  G_GUINT64_FORMAT " B / %g us = %.2f GB/s; the columns may be shifted or the line damaged", path,
                  line, row->algbw_GBps, row->size, row->time_us, want);
      return FALSE;
    }
  }
  return TRUE;
}

/* A CSV line: the header (a line naming the column "test" or
 * "size_bytes"), or a row. */
static gboolean read_csv_line(ncclt_reader *r, const char *l, int line, GError **error)
{
  gchar **f = g_strsplit(l, ",", -1);
  gboolean ok = TRUE, names = FALSE;
  for (int i = 0; f[i] && !names; i++) {
    const char *x = g_strstrip(f[i]);
    names = strcmp(x, "test") == 0 || strcmp(x, "size_bytes") == 0;
  }
  if (names) {
    cols_from_names(&r->cols, f, FALSE);
    GString *miss = g_string_new(NULL);
    const int req[] = { C_TEST, C_TABLE, C_SIZE, C_TIME, C_BUSBW };
    for (size_t k = 0; k < G_N_ELEMENTS(req); k++)
      if (r->cols.at[req[k]] < 0)
        g_string_append_printf(miss, "%s%s", miss->len ? ", " : "", col_names[req[k]]);
    if (miss->len) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s:%d: the header lacks the column(s) %s (expected "
                  "test,table,size_bytes,count,type,redop,root,oop_time_us,oop_algbw_GBps,oop_busbw_GBps,...)",
                  r->path, line, miss->str);
      ok = FALSE;
    }
    g_string_free(miss, TRUE);
    r->have_header = TRUE;
  } else if (!r->have_header) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s:%d: a CSV row before the header line (give the header "
                "test,table,size_bytes,count,type,redop,root,oop_time_us,oop_algbw_GBps,oop_busbw_GBps first)",
                r->path, line);
    ok = FALSE;
  } else if ((int)g_strv_length(f) < r->cols.n_fields - (g_str_has_prefix(l, "hypercube_perf,") ? 1 : 0)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s:%d: %u fields where the header names %d", r->path, line,
                g_strv_length(f), r->cols.n_fields);
    ok = FALSE;
  } else {
    coll_ncclt_row row;
    memset(&row, 0, sizeof row);
    ok = read_fields(r, f, line, NULL, &row, error);
    if (ok && row.size > 0) {
      coll_ncclt_table *t = table_at(r, row.table, line);
      if (t->n_rows++ == 0) {
        t->first_line = line;
        if (t->test[0] == '\0') {
          g_strlcpy(t->test, row.test, sizeof t->test);
          g_strlcpy(t->test_from, "the CSV's test column", sizeof t->test_from);
        }
      }
      g_array_append_val(r->log->rows, row);
    }
  }
  g_strfreev(f);
  return ok;
}

/* A raw line that is not a comment: a data row when its first field is a
 * number (a decimal integer in any real output; a signed or exponent form
 * such as -1048576 or 1e30 is a row whose size the field check refuses,
 * not a line to skip), else skipped. */
static gboolean read_raw_line(ncclt_reader *r, const char *l, int line, GError **error)
{
  gchar **f = g_strsplit_set(l, " \t", -1);
  GPtrArray *w = g_ptr_array_new();
  for (int i = 0; f[i]; i++)
    if (f[i][0] != '\0')
      g_ptr_array_add(w, f[i]);
  g_ptr_array_add(w, NULL);
  gchar **fields = (gchar **)w->pdata;
  gboolean ok = TRUE, digits = fields[0] != NULL;
  for (const char *p = fields[0]; p && *p && digits; p++)
    digits = *p >= '0' && *p <= '9';
  if (!digits && fields[0] != NULL) {
    char *end = NULL;
    (void)g_ascii_strtod(fields[0], &end);
    digits = end != fields[0] && *end == '\0' && (g_ascii_isdigit(fields[0][0]) || fields[0][0] == '-' ||
                                                   fields[0][0] == '+' || fields[0][0] == '.');
  }
  if (digits) {
    if ((int)w->len - 1 < r->cols.n_fields) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s:%d: a data row with %u fields where the columns need %d "
                  "(size count type redop root time algbw busbw); the line is cut or damaged", r->path, line,
                  w->len - 1, r->cols.n_fields);
      ok = FALSE;
    } else {
      coll_ncclt_row row;
      memset(&row, 0, sizeof row);
      const char *tt = r->cur >= 0 ? g_array_index(r->log->tables, coll_ncclt_table, r->cur).test : NULL;
      ok = read_fields(r, fields, line, tt, &row, error);
      if (ok && r->cur < 0) {
        table_at(r, 1, line);
        r->cur = 0;
      }
      coll_ncclt_table *t = ok ? &g_array_index(r->log->tables, coll_ncclt_table, r->cur) : NULL;
      if (ok && row.size > 0) {
        row.table = t->table;
        g_strlcpy(row.test, t->test, sizeof row.test);
        if (t->n_rows++ == 0)
          t->first_line = line;
        g_array_append_val(r->log->rows, row);
      }
    }
  }
  g_ptr_array_free(w, TRUE);
  g_strfreev(f);
  return ok;
}

/* The binaries whose rows look like `row` (see the file comment), as a
 * NULL-terminated list of at most 3 names. */
static void infer_candidates(const coll_ncclt_row *row, int n, double factor, const char *out[3])
{
  int eb = ncclt_type_bytes(row->type);
  gboolean per_rank = row->count > 0 && eb > 0 ? (uint64_t)eb * row->count < row->size
                                               : row->count > 0 && row->count * 8 < row->size;
  gboolean reduces = row->redop[0] != '\0' && strcmp(row->redop, "none") != 0;
  int k = 0;
  if (row->root >= 0)
    out[k++] = reduces ? "reduce_perf" : per_rank ? "gather_perf" : "broadcast_perf";
  if (row->root >= 0 && !reduces && per_rank)
    out[k++] = "scatter_perf";
  if (row->root < 0 && per_rank)
    out[k++] = reduces ? "reduce_scatter_perf" : "all_gather_perf";
  if (row->root < 0 && per_rank && !reduces)
    out[k++] = "alltoall_perf";
  if (row->root < 0 && !per_rank) {
    /* all_reduce's busbw factor 2(n-1)/n is 1 only at n = 2; sendrecv's is 1. */
    gboolean ar_possible = reduces && (factor < 0 || factor > 1.05 || n == 2 || n == 0);
    gboolean sr_possible = factor < 0 || fabs(factor - 1) <= 0.05;
    if (ar_possible)
      out[k++] = "all_reduce_perf";
    if (sr_possible)
      out[k++] = "sendrecv_perf";
  }
  out[k] = NULL;
}

/* Settles the name, ranks and -g of table t from its rows. */
static void settle_table(ncclt_reader *r, coll_ncclt_table *t)
{
  const coll_ncclt_row *big = NULL;
  for (guint i = 0; i < r->log->rows->len; i++) {
    const coll_ncclt_row *row = &g_array_index(r->log->rows, coll_ncclt_row, i);
    if (row->table == t->table && (big == NULL || row->size > big->size))
      big = row;
  }
  double factor = big && big->algbw_GBps > 0.5 ? big->busbw_GBps / big->algbw_GBps : -1;
  if (t->test[0] == '\0' && r->mentions->len == 1) {
    g_strlcpy(t->test, g_ptr_array_index(r->mentions, 0), sizeof t->test);
    g_strlcpy(t->test_from, "the only binary the log names", sizeof t->test_from);
  }
  if (t->test[0] == '\0' && big != NULL) {
    const char *c[4] = { NULL };
    infer_candidates(big, t->ranks, factor, c);
    if (c[0] != NULL && c[1] == NULL) {
      g_strlcpy(t->test, c[0], sizeof t->test);
      g_strlcpy(t->test_from, "its columns (redop, root, count)", sizeof t->test_from);
    } else if (c[0] != NULL) {
      g_snprintf(t->candidates, sizeof t->candidates, "%s or %s%s%s", c[0], c[1], c[2] ? " or " : "",
                 c[2] ? c[2] : "");
    }
  }
  if (t->gpus_per_thread == 0 && r->cmd_gpus > 0) {
    t->gpus_per_thread = r->cmd_gpus;
    g_strlcpy(t->gpus_from, "-g of the command in the log", sizeof t->gpus_from);
  }
  if (t->ranks > 0 || big == NULL)
    return;
  et_coll_type type;
  int eb = ncclt_type_bytes(big->type);
  gboolean per_rank_count = coll_ncclt_op(t->test, &type) && type != ET_COLL_ALL_REDUCE &&
                            type != ET_COLL_BROADCAST && type != ET_COLL_REDUCE;
  if (per_rank_count && big->count > 0 && eb > 0 && big->size % ((uint64_t)eb * big->count) == 0) {
    /* Per-rank collectives print count = S / (n x element size). */
    t->ranks = (int)(big->size / ((uint64_t)eb * big->count));
    g_strlcpy(t->ranks_from, "size / count of its rows", sizeof t->ranks_from);
  } else if (strcmp(t->test, "all_reduce_perf") == 0 && factor > 1.0 && factor < 2.0) {
    t->ranks = (int)lround(2.0 / (2.0 - factor));
    g_strlcpy(t->ranks_from, "busbw / algbw = 2(n-1)/n", sizeof t->ranks_from);
  }
}

static gboolean read_lines(ncclt_reader *r, gchar **lines, GError **error)
{
  gboolean ok = TRUE;
  for (int i = 0; lines[i] && ok; i++) {
    GString *l = g_string_new(lines[i]);
    strip_tags(l);
    g_strstrip(l->str);
    const char *s = l->str;
    if (s[0] == '#') {
      if (r->log->raw) {
        const char *c = s;
        while (*c == '#' || *c == ' ')
          c++;
        if (g_str_has_prefix(c, "size ") && strstr(c, "count") && strstr(c, "time")) {
          gchar **f = g_strsplit_set(c, " \t", -1);
          GPtrArray *w = g_ptr_array_new();
          for (int k = 0; f[k]; k++)
            if (f[k][0])
              g_ptr_array_add(w, f[k]);
          g_ptr_array_add(w, NULL);
          cols_from_names(&r->cols, (gchar **)w->pdata, TRUE);
          if (r->cols.at[C_SIZE] < 0 || r->cols.at[C_TIME] < 0 || r->cols.at[C_BUSBW] < 0)
            cols_raw_default(&r->cols);
          g_ptr_array_free(w, TRUE);
          g_strfreev(f);
        }
      }
      read_comment(r, s, i + 1);
    } else if (s[0] != '\0') {
      ok = r->log->raw ? read_raw_line(r, s, i + 1, error) : read_csv_line(r, s, i + 1, error);
    }
    g_string_free(l, TRUE);
  }
  return ok;
}

coll_ncclt_log *coll_ncclt_load(const char *path, GError **error)
{
  char *text = NULL;
  GError *e = NULL;
  wisp_input_note(path); /* no output may replace it (collbench --svg, calibrate -o) */
  if (!g_file_get_contents(path, &text, NULL, &e)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot read the nccl-tests file (%s)", path, e->message);
    g_error_free(e);
    return NULL;
  }
  coll_ncclt_log *log = g_new0(coll_ncclt_log, 1);
  log->path = g_strdup(path);
  log->rows = g_array_new(FALSE, TRUE, sizeof(coll_ncclt_row));
  log->tables = g_array_new(FALSE, TRUE, sizeof(coll_ncclt_table));
  gchar **lines = g_strsplit(text, "\n", -1);
  g_free(text);
  /* CSV when a line (tags removed) starts "test," or a data line has commas. */
  log->raw = TRUE;
  for (int i = 0; lines[i] && log->raw; i++) {
    GString *l = g_string_new(lines[i]);
    strip_tags(l);
    g_strstrip(l->str);
    if (l->str[0] != '#' && (g_str_has_prefix(l->str, "test,") || strchr(l->str, ',') != NULL))
      log->raw = FALSE;
    g_string_free(l, TRUE);
  }
  ncclt_reader r = { .path = path, .log = log, .cur = -1, .mentions = g_ptr_array_new() };
  cols_raw_default(&r.cols);
  gboolean ok = read_lines(&r, lines, error);
  g_strfreev(lines);
  /* Header blocks without rows (a CSV comment block for a table that has
   * none, a raw header of a run that printed nothing) are dropped. */
  for (guint i = 0; ok && i < log->tables->len;) {
    if (g_array_index(log->tables, coll_ncclt_table, i).n_rows == 0)
      g_array_remove_index(log->tables, i);
    else
      settle_table(&r, &g_array_index(log->tables, coll_ncclt_table, i++));
  }
  g_ptr_array_free(r.mentions, TRUE);
  /* A table whose rows cannot tell its rank count (broadcast, reduce,
   * sendrecv) takes the count of the file's other tables when they all
   * agree: one log, one job. */
  int common = 0;
  for (guint i = 0; ok && i < log->tables->len; i++) {
    int k = g_array_index(log->tables, coll_ncclt_table, i).ranks;
    common = k == 0 ? common : common == 0 || common == k ? k : -1;
  }
  for (guint i = 0; ok && common > 0 && i < log->tables->len; i++) {
    coll_ncclt_table *t = &g_array_index(log->tables, coll_ncclt_table, i);
    if (t->ranks == 0) {
      t->ranks = common;
      g_strlcpy(t->ranks_from, "the file's other tables", sizeof t->ranks_from);
    }
  }
  if (ok && log->rows->len == 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: no nccl-tests data row (expected the output of an nccl-tests binary, or CSV lines "
                "test,table,size_bytes,count,type,redop,root,oop_time_us,oop_algbw_GBps,oop_busbw_GBps,...)", path);
    ok = FALSE;
  }
  if (!ok) {
    coll_ncclt_log_free(log);
    return NULL;
  }
  return log;
}

void coll_ncclt_log_free(coll_ncclt_log *log)
{
  if (log == NULL)
    return;
  g_array_free(log->rows, TRUE);
  g_array_free(log->tables, TRUE);
  g_free(log->path);
  g_free(log);
}

const coll_ncclt_table *coll_ncclt_find(const coll_ncclt_log *log, int table)
{
  for (guint i = 0; i < log->tables->len; i++)
    if (g_array_index(log->tables, coll_ncclt_table, i).table == table)
      return &g_array_index(log->tables, coll_ncclt_table, i);
  return NULL;
}

char *coll_ncclt_list(const coll_ncclt_log *log)
{
  GString *s = g_string_new(NULL);
  for (guint i = 0; i < log->tables->len; i++) {
    const coll_ncclt_table *t = &g_array_index(log->tables, coll_ncclt_table, i);
    g_string_append_printf(s, "%s%d %s", i ? ", " : "", t->table,
                           t->test[0] ? t->test : t->candidates[0] ? t->candidates : "(collective unknown)");
    if (t->ranks > 0 && t->gpus_per_thread > 0)
      g_string_append_printf(s, " (%d ranks, -g %d)", t->ranks, t->gpus_per_thread);
    else if (t->ranks > 0)
      g_string_append_printf(s, " (%d ranks)", t->ranks);
    else if (t->gpus_per_thread > 0)
      g_string_append_printf(s, " (-g %d)", t->gpus_per_thread);
  }
  return g_string_free(s, FALSE);
}

GArray *coll_ncclt_read(const char *path, GError **error)
{
  coll_ncclt_log *log = coll_ncclt_load(path, error);
  if (log == NULL)
    return NULL;
  GArray *rows = log->rows;
  log->rows = NULL;
  g_array_free(log->tables, TRUE);
  g_free(log->path);
  g_free(log);
  return rows;
}
