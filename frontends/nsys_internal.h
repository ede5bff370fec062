/* nsys_internal.h: what the Nsight Systems reader's files share (prefix
 * ns_; not installed).
 */
#ifndef WISP_NSYS_INTERNAL_H
#define WISP_NSYS_INTERNAL_H

#include "frontends/nsys.h"

#include <sqlite3.h>

G_BEGIN_DECLS

/* NCCL's payload entry names (NCCL src/include/nvtx_payload_schemas.h). */
#define NS_NCCL_SIZE_KEY "Message size [bytes]"
#define NS_NCCL_COMM_KEY "NCCL communicator ID"

/* One NCCL call's payload. */
typedef struct {
  uint64_t bytes;             /* Message size [bytes]: the count times the element size, as NCCL passes it */
  uint64_t comm;              /* NCCL communicator ID (has_comm) */
  gboolean has_comm;
} ns_payload;

/* The payload in a decoded NVTX payload's JSON text (an object keyed by
 * the schema's entry names); FALSE without "Message size [bytes]".
 * O(length). */
gboolean ns_payload_parse(const char *json, ns_payload *out);

/* The key of a launch: its correlationId within its process (pid, -1 when
 * the export cannot say): CUPTI numbers correlations per process, so a node
 * export of several processes repeats them.  O(1). */
static inline int64_t ns_launch_key(int64_t pid, int64_t corr)
{
  return pid < 0 ? corr : (int64_t)(((uint64_t)pid << 40) ^ (uint64_t)corr);
}

/* ns_launch_key (int64_t*) -> ns_payload* of every runtime call launched
 * inside an NVTX range that carries NCCL's size entry, on the same thread
 * (nsys_nvtx.c); by_pid: keyed with the call's process (the kernel table
 * has globalPid), else by correlationId alone.  json_id: NVTX_EVENTS has
 * jsonTextId (else jsonText only).  The caller checked that NVTX_EVENTS
 * has globalTid and jsonText and the runtime table globalTid and
 * correlationId.  *n_ranges: the ranges with a size.  NULL with the error
 * on a failed query. */
GHashTable *ns_nvtx_nccl_sizes(sqlite3 *db, const char *path, gboolean json_id, gboolean by_pid, uint64_t *n_ranges,
                               GError **error);

/* One step marker (nsys_steps.c): the process that ran it (-1 unknown),
 * its range in ns on the session clock, its step number. */
typedef struct {
  int64_t pid, start, end;
  int64_t n;
} ns_marker;

/* One GPU op as the step windows see it: its process (-1 unknown), its
 * anchor (the launching runtime call's start, else its own start) and its
 * end, ns. */
typedef struct {
  int64_t pid, anchor, end;
} ns_span;

/* A device's step window: have FALSE when the markers are absent or
 * ignored (the whole export is the window).  GPU ops anchored in
 * [ws, wa) belong to it; the window is [ws, we), we >= wa the latest end
 * of those ops.  first/last: the markers' numbers (-1 none); used_*: the
 * steps of the window. */
typedef struct {
  gboolean have;
  int64_t ws, wa, we;
  int n_steps;
  int64_t first, last, used_first, used_last;
} ns_window;

/* The export's step markers sorted by number (model executions numbered
 * by start time per process; *inference set then; executions: every step
 * marker is one); an empty array when there is no NVTX table.  NULL with the error on a failed query. */
GArray *ns_step_markers(sqlite3 *db, const char *path, gboolean executions, gboolean *inference, GError **error);
/* SQL for a GPU op row's anchor and process in table (aliased alias);
 * g_free.  The anchor falls back to the op's start when the export cannot
 * join the runtime call; *join (g_free) is the join clause the anchor
 * expression needs (alias l), to put after the table. */
char *ns_anchor_sql(sqlite3 *db, const char *table, const char *alias, char **join);
char *ns_pid_sql(sqlite3 *db, const char *table, const char *alias);
/* The step window of one device from the file's markers and the device's
 * GPU ops (nsys_steps.c); FALSE with the error when the steps asked for
 * are absent. */
gboolean ns_step_window(const GArray *markers, const ns_span *sp, guint n_sp, const fe_nsys_options *opt,
                        const char *path, ns_window *w, GError **error);

/* Whether table t exists with every column of cols (NULL-ended); no error
 * either way (nsys_schema.c; the exports' schema differs between nsys
 * releases).  O(columns). */
gboolean ns_has_columns(sqlite3 *db, const char *t, const char *const *cols);

/* The largest time a row of an export may give, in ns: the engine's 2^61
 * ps, so that every difference of two times fits once turned into ps. */
#define NS_MAX_NS (SIM_TIME_LIMIT / 1000)

/* NULL when column i of the row is an integer in [lo, hi], else why,
 * naming the column `name` and the value's meaning `what` (g_free): "NAME
 * is 'V', not WHAT from LO to HI".  SQLite keeps text, NULL or a real in
 * an INTEGER column, which sqlite3_column_int64 reads as 0 or clamps
 * (nsys_schema.c).  O(1). */
char *ns_int_why(sqlite3_stmt *st, int i, const char *name, int64_t lo, int64_t hi, const char *what);
/* ns_int_why for a time wisp can use, [0, NS_MAX_NS] ns: "NAME is 'V',
 * not a time in ns from 0 to N (2^61 ps, the engine's range)".  Every time
 * the reader turns into ps passes here: a time near 2^63 ns wraps when
 * multiplied.  O(1). */
char *ns_time_why(sqlite3_stmt *st, int i, const char *name);

G_END_DECLS

#endif
