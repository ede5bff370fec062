/* pyt_et_internal.h: what the execution-trace reader's files share (not
 * installed).  pyt_et.c reads one trace, pyt_et_graph.c builds graphs from
 * traces alone, pyt_et_link.c links them with a Kineto workload. */
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
 * counts the send/recv ops kept as compute.  NULL with the builder's error
 * (duplicate node ids).  O(nodes + tensors). */
et_graph *pet_rank_graph(const pet_trace *t, int n_ranks, uint64_t *p2p_skipped, GError **error);

#endif
