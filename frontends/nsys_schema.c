/* nsys_schema.c: the schema probe and the time check every part of the
 * Nsight Systems reader uses (nsys_internal.h): whether a table exists
 * with given columns (the export's tables and columns differ between nsys
 * releases, so each optional feature -- NCCL sizes, step windows, launch
 * grids, GPU metrics -- asks before it queries; O(columns of the table)
 * per call), and whether a column of a row is a usable time or count
 * (O(1)).
 */
#include "frontends/nsys_internal.h"

gboolean ns_has_columns(sqlite3 *db, const char *t, const char *const *cols)
{
  char *sql = g_strdup_printf("PRAGMA table_info(\"%s\")", t);
  sqlite3_stmt *st = NULL;
  GHashTable *have = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK)
    while (sqlite3_step(st) == SQLITE_ROW)
      g_hash_table_add(have, g_strdup((const char *)sqlite3_column_text(st, 1)));
  sqlite3_finalize(st);
  g_free(sql);
  gboolean ok = g_hash_table_size(have) > 0;
  for (int i = 0; ok && cols[i]; i++)
    ok = g_hash_table_contains(have, cols[i]);
  g_hash_table_destroy(have);
  return ok;
}

char *ns_int_why(sqlite3_stmt *st, int i, const char *name, int64_t lo, int64_t hi, const char *what)
{
  int64_t v = sqlite3_column_int64(st, i);
  if (sqlite3_column_type(st, i) == SQLITE_INTEGER && v >= lo && v <= hi)
    return NULL;
  const unsigned char *t = sqlite3_column_text(st, i);
  return g_strdup_printf("%s is %s%.40s%s, not %s from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT, name,
                         t ? "'" : "", t ? (const char *)t : "NULL", t ? "'" : "", what, lo, hi);
}

char *ns_time_why(sqlite3_stmt *st, int i, const char *name)
{
  char *why = ns_int_why(st, i, name, 0, NS_MAX_NS, "a time in ns");
  if (why == NULL)
    return NULL;
  char *full = g_strconcat(why, " (2^61 ps, the engine's range)", NULL);
  g_free(why);
  return full;
}
