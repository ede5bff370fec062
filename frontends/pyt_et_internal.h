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

#endif
