/* pyt_et_internal.h: what the execution-trace reader's files share (not
 * installed).  pyt_et.c reads one trace, pyt_et_graph.c builds graphs from
 * traces alone, pyt_et_link.c links them with a Kineto workload, and
 * pyt_et_rfid.c joins collectives to Kineto kernels by rf_id. */
#ifndef WISP_PYT_ET_INTERNAL_H
#define WISP_PYT_ET_INTERNAL_H

#include "frontends/pyt_et.h"

/* Reads the traces and orders them by the rank their names state (0..n-1,
 * each once); NULL with the error naming the file.  Free each with
 * pet_trace_free and the array with g_free. */
pet_trace **pet_read_ranks(const char *const *paths, int n_paths, GError **error);
/* Adds the traces' node, collective and wait counts and their distinct
 * schema versions to the report.  O(ranks). */
void pet_report_traces(fe_pet_report *rep, pet_trace *const *by_rank, int n);

/* One rank's graph from its trace alone (pyt_et_graph.c); p2p_skipped
 * counts the send/recv ops kept as compute, seq_reordered the collectives
 * that come after a later call of their process group (by sequence
 * number) in the graph's node order.  NULL with the builder's error
 * (duplicate node ids).  O(nodes + tensors). */
et_graph *pet_rank_graph(const pet_trace *t, int n_ranks, uint64_t *p2p_skipped, uint64_t *seq_reordered,
                         GError **error);

/* The file's bytes, plain or gzip; NULL with the error naming the file.
 * O(size). */
char *pet_slurp(const char *path, size_t *len, GError **error);

/* How one execution-trace collective was joined to its Kineto kernel
 * (pyt_et_rfid.c, Chakra's chain rf_id -> CPU op -> External id ->
 * launch -> correlation -> GPU activity). */
enum { PET_RF_LINKED = 0, PET_RF_NO_RFID, PET_RF_NO_OP, PET_RF_NO_KERNEL };

typedef struct {
  gboolean has_rf;         /* the Kineto trace has CPU ops with Record function ids: status is filled */
  int rank;                /* the rank the Kineto trace states, -1 when not read */
  GArray *status;          /* int PET_RF_* per collective of the trace (its comms order) */
  GArray *kernel_ps;       /* int64_t per collective: the kernel's start after the trace's earliest event, -1 */
  char *why;               /* !has_rf: why no join by rf_id is possible */
} pet_rf_links;

/* Joins the collectives of the execution trace of kineto_path's rank
 * (by_rank[rank], n ranks) to kineto_path's GPU activity.  TRUE with has_rf
 * FALSE (and why) when the Kineto trace carries no Record function ids or
 * states no rank below n;
 * FALSE only when the file cannot be read or is not a Kineto trace.  Time
 * and memory O(file) (the JSON is parsed once more). */
gboolean pet_rf_link_kineto(pet_trace *const *by_rank, int n, const char *kineto_path, pet_rf_links *out,
                            GError **error);
void pet_rf_links_clear(pet_rf_links *l);

#endif
