/* kineto_load_internal.h: what the Kineto load's files share (not
 * installed): the per-file slots and jobs of the parallel phases and the
 * helpers kineto.c's phases call in kineto_work.c (inputs, replicas,
 * the per-file work).  kineto.c calls kineto_work.c, never the other way;
 * kineto_report.c prints the report. */
#ifndef WISP_KINETO_LOAD_INTERNAL_H
#define WISP_KINETO_LOAD_INTERNAL_H

#include "frontends/kineto_graph.h"

#include <string.h>

G_BEGIN_DECLS

/* qsort / g_ptr_array_sort order of C strings. */
static inline int kt_cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* One input file's slot: filled by whichever worker takes it. */
typedef struct {
  const char *path;
  int rank;                /* extract_ranks' input: the file's global rank */
  kt_trace *trace;         /* parse_files' result (owned here until moved out) */
  kt_rank *extracted;      /* the extraction's result (owned here until moved out) */
  /* parse_files extracts a file at once when the file itself names its
   * rank and world size (early_rank, early_world; else -1): the slot then
   * holds its kt_rank, or the extraction's failure in extract_error, which
   * extract_ranks reports in file order as if it had extracted the file. */
  int early_rank, early_world;
  GError *extract_error;
  /* build_graphs (one job per rank): the rank's graph, its et_graph and the
   * number of all_to_allv written as uniform (moved out in rank order). */
  kt_graph *graph;         /* its figures only: nodes, edges and names are freed at once */
  uint32_t n_nodes, n_edges;
  et_graph *et;
  uint64_t uniform;
  GError *error;           /* the file's own failure */
} file_job;

typedef enum { WORK_PARSE = 1, WORK_EXTRACT = 2, WORK_GRAPH = 3 } work_phase;

/* One phase's jobs for wisp_run_jobs.  jobs[i] is written only by the
 * worker running index i; everything else is read-only during the run. */
typedef struct {
  file_job *jobs;
  int n;
  work_phase phase;
  int world;
  const fe_kineto_options *opt;
  fe_kineto_report *rep;   /* parse_files: job i fills rep->ranks[i]'s counts */
  kt_rank **ranks;         /* build_graphs: the ranks (read-only) */
  const kt_match *match;   /* build_graphs: matching's result (read-only) */
  GHashTable *users;       /* build_graphs: kt_trace* -> gint* count of ranks whose graph is still to be built */
} file_work;

GPtrArray *kt_expand_paths(const char *const *paths, int n, GError **error);
/* Rank from a file name: "rank-3", "rank_3", "rank3", "worker3" (case-insensitive). */
int kt_rank_from_name(const char *path);
void kt_add_warning(GPtrArray *w, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* Parses "0" or "0,2" into a list of source ranks. */
GArray *kt_parse_rank_list(const char *s);
/* A copy of src's extraction relabelled as rank `to`: groups not containing
 * `to` are shifted by (to - from) modulo the world size (symmetric-job
 * assumption, reported by the caller), except the groups a workload card
 * made (group key "card:..."): those are the aligned blocks of consecutive
 * ranks [k n, (k+1) n) of kt_commreg_card_size, so `to` gets the block
 * holding it (a shift would give rank 20 of EP16 the members 20..35, which
 * no other rank has and which straddle nodes).  The copy shares only the trace;
 * everything kt_rank_free frees is its own. */
kt_rank *kt_replicate_rank(const kt_rank *src, int to, int world);
/* Resolves the number of workers: opt->threads, else WISP_THREADS, else the
 * number of processors.  A malformed WISP_THREADS is the user's to fix. */
gboolean kt_resolve_threads(const fe_kineto_options *opt, int *threads, GError **error);
/* build_graphs for one rank: the dependency graph, its et_graph (checked by the
 * builder) and the buffer links of its communication.  Reads only the
 * rank's own tables and the shared, read-only result of matching. */
gboolean kt_graph_one(file_work *wk, file_job *jb);
/* Fills the report's clock check from the traced ranks' clock_dev samples
 * (kt_match_ranks) and warns above 1 ms: kernels of one collective end
 * within microseconds of each other on every member, so a rank whose median
 * deviation stands out runs on an offset clock.  O(samples log samples). */
void kt_clock_check(const kt_match *m, const int *rank_of, int nf, fe_kineto_report *rep);
/* Job i of the current phase (wisp_run_jobs); FALSE when the file or rank
 * failed (its error kept in jobs[i]).  Files after a failed one are not
 * started; results of jobs already running are freed by the caller. */
gboolean kt_work_one(void *ctx, int i, const gint *first_failed);

G_END_DECLS
#endif
