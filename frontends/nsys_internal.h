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

/* correlationId (int64_t*) -> ns_payload* of every runtime call launched
 * inside an NVTX range that carries NCCL's size entry, on the same thread
 * (nsys_nvtx.c).  json_id: NVTX_EVENTS has jsonTextId (else jsonText
 * only).  The caller checked that NVTX_EVENTS has globalTid and jsonText and
 * the runtime table globalTid and correlationId.  *n_ranges: the ranges
 * with a size.  NULL with the error on a failed query. */
GHashTable *ns_nvtx_nccl_sizes(sqlite3 *db, const char *path, gboolean json_id, uint64_t *n_ranges, GError **error);

G_END_DECLS
/* Whether table t exists with every column of cols (NULL-ended); no error
 * either way (nsys_facts.c; the exports' schema differs between nsys
 * releases).  O(columns). */
gboolean ns_has_columns(sqlite3 *db, const char *t, const char *const *cols);

#endif
