/* fe.h: trace frontends' public API (Kineto part) and the CLI commands
 * `wisp inspect` and `wisp convert`.
 *
 * fe_kineto_load reads per-rank PyTorch profiler (Kineto) Chrome-trace JSON
 * files, plain or gzip, with a streaming parser (memory grows with the
 * events kept, not with the file size), extracts GPU work, communication
 * kernels with their sizes and process groups, matches collectives across
 * ranks and builds one execution graph per rank.  Everything skipped,
 * repaired or guessed is counted in the report; --strict turns matching
 * problems into errors.
 */
#ifndef WISP_FE_H
#define WISP_FE_H

#include "common/wisp_util.h"
#include "chakra/et_graph.h"
#include "config/cfg_card.h"

G_BEGIN_DECLS

typedef enum {
  FE_KINETO_KERNELS = 0,   /* every GPU op a node at its measured duration (default) */
  FE_KINETO_GAP = 1,       /* time between communications collapsed into delays */
} fe_kineto_mode;

/* A workload card (`--card FILE`, fe_card_from_doc): the facts about the job
 * that a trace does not record, for sizing communication kernels that
 * carry no size (doc/kineto.md, "Sizes from a workload card").  Read from
 * CCL-Bench's card layout (../shared/reference/studies.md) plus wisp's
 * additions; -1 / NULL = not given.  Every value the card did not state
 * but wisp derived is one line in assumptions, printed by the commands. */
typedef struct {
  char *path;
  int64_t hidden_size;      /* workload.model.hidden_size (else model_arch.num_heads x head_dim, an assumption) */
  int64_t tokens_per_rank;  /* workload.data.tokens_per_rank (else batch_size x seq_len, an assumption) */
  int64_t top_k;            /* workload.model.moe_top_k */
  int64_t ep_degree, tp_degree; /* Model-executor.model_plan_parallelization.ep / .tp */
  int64_t gpus_per_node;    /* workload.hardware.xpu_spec.count_per_node */
  char *dtype;              /* workload.model.precision: bf16, fp16, fp32, fp8 */
  int dtype_bytes;
  char *dispatch_dtype;     /* workload.model.moe_dispatch_precision (else precision) */
  int dispatch_dtype_bytes;
  char *routing;            /* workload.model.moe_routing: only "balanced" (the default) */
  gboolean inference;       /* workload.model.phase is inference: a trace's steps are its model executions */
  GPtrArray *assumptions;   /* char*: one sentence per derived value */
} fe_workload_card;

/* The frontends' keys of a card parsed by cfg_card_load (config/cfg_card.h
 * lists them); other keys are ignored (CCL-Bench cards hold many fields
 * wisp does not use), malformed values are errors naming the file, line
 * and key.  O(1) lookups. */
fe_workload_card *fe_card_from_doc(const cfg_card *doc, GError **error);
void fe_card_free(fe_workload_card *c);

typedef struct {
  fe_kineto_mode mode;
  int step;                /* ProfilerStep number, -1 = default (last complete step) */
  int step_lo, step_hi;    /* --steps A..B: the window spans the complete steps numbered A..B (-1 = not given) */
  gboolean all_steps;      /* window = first..last complete step (steps dropped only when shown incomplete) */
  gboolean whole_trace;    /* ignore ProfilerStep ranges: the window is the whole trace */
  gboolean strict;         /* matching mismatches, guessed ranks and (host launch model) unresolved host syncs are errors */
  const char *replicate_from; /* "R" or "R1,R2": synthesize absent ranks from these (NULL = error) */
  sim_time_ps min_gap_ps;  /* idle gaps shorter than this are not emitted (default 1 ns) */
  gboolean host_launch;    /* kernels mode (default TRUE): launching CPU threads as graph nodes; a GPU op waits
                            * for its launch and host synchronisation calls wait for the GPU (doc/kineto.md) */
  gboolean allow_partial;  /* without replicate_from, absent ranks are synthesized from the traced ones
                            * (as replicate_from "all") with a warning naming them, instead of an error;
                            * for summaries (wisp inspect), not for replays */
  int threads;             /* workers parsing and extracting rank files in parallel: 0 (default) = the
                            * environment variable WISP_THREADS when set, else g_get_num_processors();
                            * 1 = one file after another in the calling thread.  Never changes the output. */
  const fe_workload_card *card; /* sizes and groups of registry kernels without a size (NULL = none) */
} fe_kineto_options;

void fe_kineto_options_init(fe_kineto_options *opt);

/* Per-rank summary (what `wisp inspect` prints). */
typedef struct {
  char *path;
  int rank;                /* -1 when unknown */
  const char *rank_source; /* "distributedInfo", "file name (fallback)", "replicated from N" */
  int world_size;          /* from distributedInfo, -1 when absent */
  uint64_t bytes_read;     /* uncompressed JSON bytes */
  uint64_t events_read;
  uint64_t kernels, memcpys, memsets, launches, sync_calls, cuda_sync_events, cpu_comm_ops;
  uint64_t memory_allocs, memory_frees;
  uint64_t comm_kernels;
  uint64_t comm_by_type[ET_COLL_ALL_TO_ALLV + 3]; /* indexed by et_coll_type (< 10), 10 = all_to_allv, 11 = send, 12 = recv */
  uint64_t comm_bytes;
  uint64_t comm_size_from_args, comm_size_from_cpu_op, comm_size_unknown;
  int n_steps;
  int step_first, step_last, step_used; /* -1 when no ProfilerStep */
  int n_steps_used;        /* steps in the window (0 when no ProfilerStep) */
  gboolean inference_markers; /* the steps are vLLM execute_context / SGLang run_batch markers (model executions) */
  int step_used_first;     /* first step of the window (== step_used for one step), -1 when no ProfilerStep */
  char *steps_dropped;     /* "#6 (cut by the trace's end)", ...: steps left out as incomplete, NULL if none */
  sim_time_ps window_start_ps, window_ps; /* window (relative to the file's first timestamp) */
  sim_time_ps measured_step_ps;
  sim_time_ps gpu_busy_ps;     /* union of GPU op time inside the window */
  sim_time_ps node_busy_ps;    /* union of GPU time represented by graph nodes */
  uint64_t nodes, edges, gap_nodes, cross_stream_edges, inconsistent_sync_edges, cycle_edges_dropped;
  uint64_t inferred_sync_edges;    /* wait producers inferred from the timeline (no cudaEventRecord calls) */
  uint64_t host_nodes, host_threads, launched_before_window, launch_inversions, sync_waits; /* host_launch */
  uint64_t host_overlaps;  /* host_launch: launch calls nested in an earlier call of their thread */
  uint64_t host_forks;     /* host_launch: other threads chained after the step thread (their first call) */
  /* host_launch: host synchronisation calls by how the streams they wait
   * for were found (device-wide by the API; stated by a cuda_sync event;
   * inferred from the timeline; the call did not wait, so its own
   * thread's launches are assumed; it waited for nothing the trace shows,
   * own launches assumed), and CPU gaps inferred to be joins on another
   * thread (Kineto states none). */
  uint64_t host_syncs_device, host_syncs_stated, host_syncs_inferred, host_syncs_assumed, host_syncs_unresolved;
  uint64_t host_joins;
  uint32_t compute_slots;  /* kernels mode: most compute nodes measured at once (0 in gap mode) */
  uint64_t comm_matched, comm_dropped;
  uint64_t comm_replayed;      /* matched but replayed at the measured duration (no size on some member) */
  sim_time_ps unexplained_idle_ps; /* kernels mode: GPU idle no modelled dependency explains (fixed delays) */
  sim_time_ps launch_lag_ps;   /* kernels mode: GPU idle after a launch call began (call + submission; fixed) */
  gboolean host_step_tail;     /* the step thread's CPU chain runs to the step marker's end */
  GHashTable *skipped;     /* reason (char*) -> GUINT_TO_POINTER(count) */
  char *device_name;
  char *comm_libraries;    /* "NCCL 3 (all_reduce 3); DeepEP 16 (...)": communication kernels by library, or NULL */
  char *comm_unregistered; /* "N kernel(s) ... (first: 'name')": names that look like communication, not in the
                            * registry, replayed as compute; NULL when none */
  uint64_t comm_size_from_card;  /* registry kernels sized by the workload card */
  uint64_t comm_size_sync;       /* registry synchronisation kernels: barriers without payload */
} fe_kineto_rank_report;

typedef struct {
  int n_ranks;             /* world size of the loaded workload */
  fe_kineto_rank_report *ranks;  /* n_files entries, in input order (directory entries sorted by name) */
  int n_files;
  uint64_t groups;
  GPtrArray *group_lines;  /* char*: "name: ranks (desc), N ops, B bytes" */
  uint64_t matched, dropped, mismatches, imbalanced_a2av;
  /* Clock check over the traced ranks (not synthesized ones): per rank, the
   * median of how much later its collective kernels ended than the median
   * member's; the spread is the latest rank's minus the earliest's. */
  int clock_ranks;              /* ranks with at least one matched collective */
  uint64_t clock_samples_min;   /* fewest collectives behind one rank's median */
  sim_time_ps clock_spread_ps;
  int clock_rank_early, clock_rank_late;
  GPtrArray *warnings;     /* char*, in order of discovery */
  char *step_note;         /* how the window was chosen */
  gboolean complete;       /* the load succeeded; else only what parsing found is filled in */
  GArray *colls;           /* fe_coll_row: the per-collective table (traced ranks' matched calls) */
  int n_missing;           /* ranks without a trace (synthesized under allow_partial or replicate_from) */
  char *missing;           /* "1, 3" (at most 16 listed), NULL when none */
  fe_kineto_mode mode;     /* the graph mode the load used */
} fe_kineto_report;

/* One row of the per-collective table: the matched calls of one kind
 * (op, group, size, dtype, size source), with the measured kernel time of
 * every traced member's every call. */
typedef struct {
  char *op;                /* "all_reduce", "all_to_allv", "send", "recv", ... */
  char *group;             /* workload group name ("1"), "-" when none */
  int group_ranks;         /* members of the group */
  uint64_t bytes;          /* per-call size as the workload carries it (Chakra comm_size) */
  char *dtype;             /* "Float", ...; "-" when unknown */
  char *size_source;       /* where the size came from: "kernel args", "CPU op", "Chakra comm_size", ... */
  uint64_t calls;          /* calls per traced member (records / members seen, rounded) */
  uint64_t records;        /* member kernels measured (traced ranks only) */
  sim_time_ps min_ps, median_ps, max_ps; /* over those records (the lower median for an even count) */
} fe_coll_row;

/* Sorts rows (op, group, bytes, dtype) and fills, per row k, the records
 * and min/median/max from times[k] (a GArray of sim_time_ps per row,
 * consumed) and the calls per member from seen[k] (a set of the members
 * that recorded it, not consumed): records / members, rounded.
 * O(R log R + records). */
void fe_coll_rows_finish(GArray *rows, GPtrArray *times, GPtrArray *seen);
/* The table: one line per row, times in us.  O(rows). */
void fe_coll_rows_print(const GArray *rows, FILE *out);
void fe_coll_rows_free(GArray *rows);

void fe_kineto_report_clear(fe_kineto_report *r);
/* The report in full: per rank every count the frontend kept.  O(ranks). */
void fe_kineto_report_print(const fe_kineto_report *r, FILE *out);
/* verbose FALSE: the concise form (one line per rank, groups, the
 * per-collective table, warnings merged across ranks); TRUE: the full one. */
void fe_kineto_report_print_ex(const fe_kineto_report *r, gboolean verbose, FILE *out);

/* paths: a directory (every *.json / *.json.gz in it), files, or one file.
 * Returns a workload with one graph per rank (w->measured_step_ps filled)
 * or NULL with error set.  The files are parsed and extracted by up to
 * opt->threads workers (one file each at a time); matching and graph
 * building follow in rank order, so the workload, report, warnings and the
 * error (that of the first failing file in input order) do not depend on
 * the number of workers.  report may be NULL; when given it is filled even
 * on failure as far as loading got (clear it with fe_kineto_report_clear). */
et_workload *fe_kineto_load(const char *const *paths, int n_paths, const fe_kineto_options *opt,
                            fe_kineto_report *report, GError **error);

/* Whether path looks like profiler input for fe_kineto_load rather than a
 * Chakra workload: a *.json / *.json.gz file (other than comm_group*.json),
 * or a directory holding such files and no *.et file.  Lets a generic
 * loader (wisp simulate) dispatch without guessing from content. */
gboolean fe_kineto_looks_like_trace(const char *path);


G_END_DECLS
#endif
