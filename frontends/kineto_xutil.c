/* kineto_xutil.c: the helpers the extraction's files share (see
 * kineto_extract_internal.h).  O(n log n) for the sort, O(1) else. */
#include "config.h"

#include "frontends/kineto_extract_internal.h"

#include <stdlib.h>
#include <string.h>

gint64 *kt_x_thread_key(const kt_event *e)
{
  gint64 *k = g_new(gint64, 1);
  *k = kt_thread_key(e);
  return k;
}

typedef struct {
  sim_time_ps ts;
  uint32_t file_index, idx;
} ts_key;

static int cmp_ts_key(const void *a, const void *b)
{
  const ts_key *x = a, *y = b;
  if (x->ts != y->ts)
    return x->ts < y->ts ? -1 : 1;
  return x->file_index < y->file_index ? -1 : x->file_index > y->file_index;
}

/* Sorts an array of event indices by (ts, file order); O(n log n). */
void kt_x_sort_by_ts(const kt_trace *t, GArray *a)
{
  ts_key *k = g_new(ts_key, a->len ? a->len : 1);
  for (guint i = 0; i < a->len; i++) {
    const kt_event *e = kt_x_ev(t, g_array_index(a, uint32_t, i));
    k[i] = (ts_key){ e->ts, e->file_index, g_array_index(a, uint32_t, i) };
  }
  qsort(k, a->len, sizeof(ts_key), cmp_ts_key);
  for (guint i = 0; i < a->len; i++)
    g_array_index(a, uint32_t, i) = k[i].idx;
  g_free(k);
}

void kt_x_rank_warn(kt_rank *r, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *m = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_ptr_array_add(r->warnings, g_strdup_printf("rank %d: %s", r->rank, m));
  g_free(m);
}
