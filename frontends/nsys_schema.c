/* nsys_schema.c: the schema probe every part of the Nsight Systems reader
 * uses (nsys_internal.h): whether a table exists with given columns.  The
 * export's tables and columns differ between nsys releases, so each
 * optional feature (NCCL sizes, step windows, launch grids, GPU metrics)
 * asks before it queries.  O(columns of the table) per call.
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
