/* nsys_nvtx.c: NCCL's NVTX payloads in an Nsight Systems export
 * (nsys_internal.h, doc/nsys.md "NCCL sizes").
 *
 * NCCL (2.19 and later, src/include/nvtx_payload_schemas.h) annotates each
 * collective call with an NVTX range named after the call (ncclAllReduce,
 * ...) whose extended payload carries the entries "NCCL communicator ID"
 * and "Message size [bytes]".  The export keeps the decoded payload as JSON
 * text in NVTX_EVENTS (jsonText, or jsonTextId into StringIds).  A kernel
 * belongs to the call whose range, on the launching thread, encloses its
 * launch: CUPTI_ACTIVITY_KIND_RUNTIME's row with the kernel's correlationId
 * gives the thread (globalTid) and the launch time (NVIDIA's documented
 * recipe "Correlate CUDA kernel launches with CUDA API kernel launches").
 * A kernel launched outside any such range (inside ncclGroupEnd for
 * grouped calls) keeps no size.  Launches are keyed by (process,
 * correlationId) when the kernel table has globalPid: a node export of
 * several processes repeats correlationIds.
 *
 * Time O((R + L) log R) for R payload ranges and L runtime calls; memory
 * O(R + sized launches).
 */
#include "frontends/nsys_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  int64_t tid, start, end;
  ns_payload p;
} pl_range;

/* The number after "key": in a JSON object text (a quoted number too);
 * FALSE when the key or a number is absent.  O(length). */
static gboolean json_number(const char *text, const char *key, uint64_t *out)
{
  char *quoted = g_strdup_printf("\"%s\"", key);
  const char *p = strstr(text, quoted);
  size_t n = strlen(quoted);
  g_free(quoted);
  if (p == NULL)
    return FALSE;
  p += n;
  while (*p == ' ' || *p == '\t' || *p == ':' || *p == '"')
    p++;
  if (!g_ascii_isdigit(*p))
    return FALSE;
  char *end = NULL;
  guint64 v = g_ascii_strtoull(p, &end, 10);
  if (end == p)
    return FALSE;
  *out = v;
  return TRUE;
}

gboolean ns_payload_parse(const char *json, ns_payload *out)
{
  memset(out, 0, sizeof *out);
  if (json == NULL || !json_number(json, NS_NCCL_SIZE_KEY, &out->bytes))
    return FALSE;
  out->has_comm = json_number(json, NS_NCCL_COMM_KEY, &out->comm);
  return TRUE;
}

static int cmp_range(gconstpointer a, gconstpointer b)
{
  const pl_range *x = a, *y = b;
  if (x->tid != y->tid)
    return x->tid < y->tid ? -1 : 1;
  return x->start < y->start ? -1 : x->start > y->start;
}

/* A row's text column, or "" when NULL. */
static const char *col_text(sqlite3_stmt *st, int i)
{
  const unsigned char *t = sqlite3_column_text(st, i);
  return t ? (const char *)t : "";
}

/* Runs sql; FALSE with the error naming path on failure. */
static gboolean run(sqlite3 *db, const char *path, const char *sql, sqlite3_stmt **st, GError **error)
{
  if (sqlite3_prepare_v2(db, sql, -1, st, NULL) == SQLITE_OK)
    return TRUE;
  g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: query failed: %s (%s)", path, sqlite3_errmsg(db), sql);
  sqlite3_finalize(*st);
  *st = NULL;
  return FALSE;
}

/* The ranges carrying NCCL's size entry, sorted by (thread, start). */
static GArray *payload_ranges(sqlite3 *db, const char *path, gboolean json_id, GError **error)
{
  const char *sql = json_id ? "SELECT n.globalTid, n.start, n.end, coalesce(n.jsonText, j.value) FROM NVTX_EVENTS n "
                              "LEFT JOIN StringIds j ON j.id = n.jsonTextId WHERE n.end IS NOT NULL AND "
                              "coalesce(n.jsonText, j.value) LIKE '%Message size [bytes]%'"
                            : "SELECT globalTid, start, end, jsonText FROM NVTX_EVENTS WHERE end IS NOT NULL AND "
                              "jsonText LIKE '%Message size [bytes]%'";
  sqlite3_stmt *st = NULL;
  if (!run(db, path, sql, &st, error))
    return NULL;
  GArray *r = g_array_new(FALSE, FALSE, sizeof(pl_range));
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    pl_range x = {sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2), {0}};
    if (ns_payload_parse(col_text(st, 3), &x.p))
      g_array_append_val(r, x);
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: reading NVTX_EVENTS failed: %s", path,
                sqlite3_errmsg(db));
    g_array_free(r, TRUE);
    return NULL;
  }
  g_array_sort(r, cmp_range);
  return r;
}

/* The range of thread tid enclosing [s, e]: the thread's latest range
 * starting at or before s, when it ends at or after e (binary search).
 * NCCL's sized ranges are its API calls, which do not nest in one
 * another, so the latest one is the only candidate.  NULL when none. */
static const pl_range *enclosing(const GArray *r, int64_t tid, int64_t s, int64_t e)
{
  guint lo = 0, hi = r->len;
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    const pl_range *m = &g_array_index(r, pl_range, mid);
    if (m->tid < tid || (m->tid == tid && m->start <= s))
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0)
    return NULL;
  const pl_range *x = &g_array_index(r, pl_range, lo - 1);
  return x->tid == tid && x->end >= e ? x : NULL;
}

GHashTable *ns_nvtx_nccl_sizes(sqlite3 *db, const char *path, gboolean json_id, gboolean by_pid, uint64_t *n_ranges,
                               GError **error)
{
  GHashTable *by_corr = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
  GArray *r = payload_ranges(db, path, json_id, error);
  if (r == NULL) {
    g_hash_table_destroy(by_corr);
    return NULL;
  }
  *n_ranges = r->len;
  sqlite3_stmt *st = NULL;
  gboolean ok = r->len == 0 || run(db, path, "SELECT globalTid, start, end, correlationId FROM "
                                   "CUPTI_ACTIVITY_KIND_RUNTIME", &st, error);
  int rc = SQLITE_DONE;
  while (ok && r->len && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    const pl_range *x = enclosing(r, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                                  sqlite3_column_int64(st, 2));
    if (x == NULL)
      continue;
    int64_t *k = g_new(int64_t, 1);
    *k = ns_launch_key(by_pid ? (sqlite3_column_int64(st, 0) >> 24) & 0xffffff : -1, sqlite3_column_int64(st, 3));
    ns_payload *v = g_new(ns_payload, 1);
    *v = x->p;
    g_hash_table_replace(by_corr, k, v);
  }
  if (ok && rc != SQLITE_DONE) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: reading CUPTI_ACTIVITY_KIND_RUNTIME failed: %s", path,
                sqlite3_errmsg(db));
    ok = FALSE;
  }
  sqlite3_finalize(st);
  g_array_free(r, TRUE);
  if (!ok) {
    g_hash_table_destroy(by_corr);
    return NULL;
  }
  return by_corr;
}
