/* nsys.h: Nsight Systems SQLite exports (`nsys export --type sqlite`) to
 * an et_workload (doc/nsys.md).
 *
 * One file per rank, or one per node holding several GPUs: every CUDA
 * device a file's kernels and copies ran on is one rank, files in the order
 * given (a directory's sorted by name), devices in id order.  Per rank the
 * graph holds each GPU op (kernel, memcpy, memset) at its measured start
 * and duration, in stream order, with the idle time before it on its stream
 * as a delay node, so that the measured timeline replays as measured.
 * Communication kernels are named through the Kineto frontend's registry
 * (frontends/kineto_commreg.h).  Their size comes from NCCL's NVTX payload
 * ("Message size [bytes]", NCCL 2.19 and later) of the call whose range
 * encloses the kernel's launch (nsys_nvtx.c); a sized kernel whose
 * communicator appears on every rank of the load is a world collective
 * and simulated.  The others take the existing unknown-size path: replayed
 * at their measured duration, counted.
 * CUDA runtime calls (launches, synchronisations) and NVTX ranges are
 * counted, not modelled.
 *
 * The schema is checked when a file is opened: the kernel table and
 * StringIds must exist with the columns read, and the optional tables
 * (memcpy, memset, runtime, NVTX, TARGET_INFO_GPU) must have theirs when
 * present; a difference is an error naming the file, table and column.
 */
#ifndef WISP_NSYS_H
#define WISP_NSYS_H

#include "common/wisp_util.h"
#include "chakra/et_graph.h"
#include "frontends/fe.h"

G_BEGIN_DECLS

typedef struct {
  char *path;
  int first_rank, n_devices;
  char *export_version;       /* META_DATA_EXPORT's EXPORT_SCHEMA_VERSION, or "unknown (older export)" */
  char *device_name;          /* TARGET_INFO_GPU name of the first device, NULL when absent */
  uint64_t kernels, memcpys, memsets, memcpy_bytes, memset_bytes;
  uint64_t runtime_calls, launches, syncs;
  uint64_t nvtx_ranges, nvtx_nccl_ranges;
  uint64_t comm_kernels, comm_replayed, p2p_as_compute;
  uint64_t nvtx_sized_ranges;  /* NVTX ranges carrying NCCL's "Message size [bytes]" payload */
  uint64_t comm_sized;         /* communication kernels sized from them and simulated (world communicator) */
  uint64_t comm_sized_not_world; /* sized, but their communicator is not seen on every rank: replayed */
  const char *sizes_why;       /* why no size could be read (static), NULL when the export has the columns */
  uint64_t step_markers;       /* NVTX step ranges (ProfilerStep#N, execute_context_*, run_batch; doc/nsys.md) */
  gboolean inference_markers;  /* they are vLLM / SGLang model executions, numbered by start time */
  int64_t step_first, step_last; /* the markers' numbers, -1 none */
  int64_t step_used_first, step_used_last; /* the steps of the window (first device), -1 = the whole export */
  sim_time_ps window_ps;      /* the longest device window of the file */
} fe_nsys_file_report;

typedef struct {
  int n_ranks;
  int steps_in_window;        /* the most steps a device's window spans, 1 without step markers */
  gboolean inference_markers; /* a file's steps are model executions (vLLM / SGLang) */
  GArray *files;              /* fe_nsys_file_report */
  GPtrArray *warnings;        /* char* */
} fe_nsys_report;

void fe_nsys_report_init(fe_nsys_report *r);
void fe_nsys_report_clear(fe_nsys_report *r);
/* One line per file, then the warnings.  O(files). */
void fe_nsys_report_print(const fe_nsys_report *r, FILE *out);

/* Whether path is an SQLite database by its first 16 bytes ("SQLite
 * format 3\0") and its name ends in .sqlite or .db.  O(1). */
gboolean fe_nsys_is_export(const char *path);

/* Step selection over the NVTX step ranges (nsys_steps.c, doc/nsys.md
 * "Steps"), as for Kineto traces: step >= 0 one step; step_lo..step_hi a
 * range; all_steps every step with GPU work; whole_trace ignores the
 * markers; otherwise the last step with GPU work.  An export without
 * markers is one window from its first GPU op to its last. */
typedef struct fe_nsys_options {
  int step, step_lo, step_hi;  /* -1 = not given */
  gboolean all_steps, whole_trace;
  gboolean executions;         /* ProfilerStep ranges are model executions, numbered 0.. by start time (a card
                                  whose workload.model.phase is inference) */
} fe_nsys_options;

void fe_nsys_options_init(fe_nsys_options *o);
/* The same selection as the Kineto options k give (commands that parse
 * fe_kineto_options: inspect, convert); a card whose phase is inference
 * makes the steps model executions.  O(1). */
void fe_nsys_options_from_kineto(fe_nsys_options *o, const fe_kineto_options *k);

/* Reads the exports (read-only) and builds one graph per device, of its
 * step window (opt NULL: the defaults).  Time O(rows log rows) per file,
 * plus O(GPU ops log GPU ops) with step markers; memory O(GPU ops). */
et_workload *fe_nsys_load(const char *const *paths, int n_paths, fe_nsys_report *report, GError **error);
et_workload *fe_nsys_load_opts(const char *const *paths, int n_paths, const fe_nsys_options *opt,
                               fe_nsys_report *report, GError **error);

/* ---- facts the graph does not keep (nsys_facts.c) ---- */

/* One kernel's launch grid, on the rank's graph clock (ps from the
 * device's window start: its step window's, else its first GPU op, as
 * fe_nsys_load's node starts). */
typedef struct {
  sim_time_ps start, end;
  double blocks;              /* gridX x gridY x gridZ */
} fe_nsys_grid;

/* One GPU metrics sample, on the same clock. */
typedef struct {
  sim_time_ps t;
  double value;
} fe_nsys_sample;

/* Per rank (the ranks of fe_nsys_load over the same paths): the SM count
 * (0 unknown), every kernel's grid (when the kernel table has gridX/Y/Z)
 * and the samples of NVLink TX Responses User Data [Throughput %] (when
 * the export has GPU_METRICS: `nsys profile --gpu-metrics-devices`). */
typedef struct fe_nsys_facts {
  int n_ranks;
  int *sm_count;
  GArray **grids;             /* fe_nsys_grid */
  GArray **p2p;               /* fe_nsys_sample, value in % */
  gboolean have_grids, have_gpu_metrics;
} fe_nsys_facts;

/* Reads the facts of the exports (read-only).  FALSE with an error naming
 * the file on an unreadable database or a failed query; absent optional
 * tables are not errors.  Time O(rows); memory O(kernels + samples). */
gboolean fe_nsys_facts_load(const char *const *paths, int n_paths, fe_nsys_facts *f, GError **error);
/* The same on the clocks of fe_nsys_load_opts with the same options. */
gboolean fe_nsys_facts_load_opts(const char *const *paths, int n_paths, const fe_nsys_options *opt, fe_nsys_facts *f,
                                 GError **error);
void fe_nsys_facts_clear(fe_nsys_facts *f);

G_END_DECLS
#endif
