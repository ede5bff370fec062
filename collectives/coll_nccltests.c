/* coll_nccltests.c: nccl-tests result files (see coll_nccltests.h). */
#include "config.h"

#include <string.h>

#include "collectives/coll_nccltests.h"
#include <stdlib.h>

#include "common/wisp_util.h"

GArray *coll_ncclt_read(const char *path, GError **error)
{
  char *text = NULL;
  GError *e = NULL;
  if (!g_file_get_contents(path, &text, NULL, &e)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot read the nccl-tests file (%s)", path, e->message);
    g_error_free(e);
    return NULL;
  }
  GArray *rows = g_array_new(FALSE, TRUE, sizeof(coll_ncclt_row));
  gchar **lines = g_strsplit(text, "\n", -1);
  static const char tag[] = "[1,0]<stdout>:";
  for (int i = 0; lines[i]; i++) {
    GString *l = g_string_new(lines[i]);
    char *p;
    while ((p = strstr(l->str, tag)) != NULL)
      g_string_erase(l, p - l->str, (gssize)strlen(tag));
    g_strstrip(l->str);
    if (l->str[0] == '\0' || l->str[0] == '#' || g_str_has_prefix(l->str, "test,")) {
      g_string_free(l, TRUE);
      continue;
    }
    gchar **f = g_strsplit(l->str, ",", -1);
    if (g_strv_length(f) >= 10) {
      coll_ncclt_row r = { 0 };
      g_strlcpy(r.test, f[0], sizeof r.test);
      r.table = atoi(f[1]);
      r.size = g_ascii_strtoull(f[2], NULL, 10);
      r.time_us = g_ascii_strtod(f[7], NULL);
      r.busbw_GBps = g_ascii_strtod(f[9], NULL);
      if (r.size > 0)
        g_array_append_val(rows, r);
    }
    g_strfreev(f);
    g_string_free(l, TRUE);
  }
  g_strfreev(lines);
  g_free(text);
  if (rows->len == 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: no nccl-tests data row (expected lines test,table,size_bytes,count,type,redop,root,time_us,"
                "algbw_GBps,busbw_GBps,...)", path);
    g_array_free(rows, TRUE);
    return NULL;
  }
  return rows;
}

gboolean coll_ncclt_op(const char *test, et_coll_type *type)
{
  static const struct {
    const char *name;
    et_coll_type t;
  } ops[] = {
    { "all_reduce_perf", ET_COLL_ALL_REDUCE }, { "all_gather_perf", ET_COLL_ALL_GATHER },
    { "reduce_scatter_perf", ET_COLL_REDUCE_SCATTER }, { "reduce_perf", ET_COLL_REDUCE },
    { "broadcast_perf", ET_COLL_BROADCAST }, { "alltoall_perf", ET_COLL_ALL_TO_ALL },
    { "gather_perf", ET_COLL_GATHER }, { "scatter_perf", ET_COLL_SCATTER },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(ops); i++)
    if (strcmp(test, ops[i].name) == 0) {
      *type = ops[i].t;
      return TRUE;
    }
  return FALSE;
}

uint64_t coll_ncclt_comm_size(et_coll_type type, uint64_t size, int n)
{
  if (type == ET_COLL_ALL_GATHER || type == ET_COLL_GATHER || type == ET_COLL_SCATTER)
    return size / (uint64_t)MAX(n, 1);
  return size;
}
