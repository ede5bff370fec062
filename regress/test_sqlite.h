/* test_sqlite.h: SQL on the Nsight exports the tests build or read, for
 * the expected values computed independently from the raw file
 * (test_nsys, test_profiles_cli), and the one-kernel export the hostile
 * input tests start from (test_nsys, test_hostile_input_cli,
 * test_hostile_types_cli).  Static helpers, header only. */
#ifndef WISP_TEST_SQLITE_H
#define WISP_TEST_SQLITE_H

#include <glib.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <stdint.h>

/* Runs sql on db; a failure ends the test with the statement. */
G_GNUC_UNUSED static void exec_sql(sqlite3 *db, const char *sql)
{
  char *msg = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
    g_error("%s: %s", sql, msg);
}

/* A one-device Nsight Systems export at path (any file there replaced):
 * StringIds 1 = 'volta_sgemm_128x64_nn' and CUPTI_ACTIVITY_KIND_KERNEL
 * (start, end, deviceId, streamId, correlationId, demangledName, gridX,
 * gridY, gridZ) holding that kernel over [1000, 101000] ns on device 0,
 * stream 7, correlation 1, 132 x 1 x 1 blocks; then `sql` (NULL: none),
 * e.g. more rows or tables. */
G_GNUC_UNUSED static void test_nsys_export(const char *path, const char *sql)
{
  g_unlink(path);
  sqlite3 *db = NULL;
  g_assert_cmpint(sqlite3_open(path, &db), ==, SQLITE_OK);
  exec_sql(db, "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
               "INSERT INTO StringIds VALUES (1, 'volta_sgemm_128x64_nn');"
               "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, "
               "streamId INTEGER, correlationId INTEGER, demangledName INTEGER, gridX INTEGER, gridY INTEGER, "
               "gridZ INTEGER);"
               "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 101000, 0, 7, 1, 1, 132, 1, 1);");
  if (sql)
    exec_sql(db, sql);
  sqlite3_close(db);
}

/* The first column of the first row of sql on the file at path, read-only. */
G_GNUC_UNUSED static sqlite3_stmt *sql_row(const char *path, const char *sql, sqlite3 **db)
{
  g_assert_cmpint(sqlite3_open_v2(path, db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  sqlite3_stmt *st = NULL;
  g_assert_cmpint(sqlite3_prepare_v2(*db, sql, -1, &st, NULL), ==, SQLITE_OK);
  g_assert_cmpint(sqlite3_step(st), ==, SQLITE_ROW);
  return st;
}

/* One SQL integer from the raw file. */
G_GNUC_UNUSED static int64_t sql_int(const char *path, const char *sql)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *st = sql_row(path, sql, &db);
  int64_t v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

/* One SQL number from the raw file. */
G_GNUC_UNUSED static double sql_double(const char *path, const char *sql)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *st = sql_row(path, sql, &db);
  double v = sqlite3_column_double(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

#endif
