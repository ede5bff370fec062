/* xla.h: XLA/TPU profiles (XPlane) to wisp workloads (prefix fe_xla_).
 *
 * One rank per TPU chip or GPU: chips come from the `/device:TPU:N` (or
 * `/device:GPU:N`, doc/xla.md "GPUs") planes of every file; a
 * `/device:TPU:N SparseCore M` plane belongs to chip N and becomes a
 * second, parallel dependency chain of that chip's graph (its collectives
 * are never mirrored to other ranks).  Several files (one per
 * host) merge into one job: when the files use disjoint chip numbers N is
 * the global device id, otherwise chip N of the h-th file (in argument
 * order) gets id h * C + N with C the largest chip count of any file.
 *
 * Each chip's `XLA Ops` line becomes a chain of nodes in device time order:
 * ops are COMP nodes with their measured duration, idle time between ops is
 * an ET_FLAG_DELAY node, collectives are COMM nodes sized from their HLO
 * text (frontends/hlo.h), async `*-start`/`*-done` pairs are one COMM node
 * that starts at the start and that the op after the done waits for (work
 * in between overlaps it), collective-permute and send/recv become SEND /
 * RECV pairs per source_target_pairs.  Replica groups become communicator
 * groups named "xla:<ranks>".  Event times are line timestamp_ns * 1000 +
 * offset_ps, exact in picoseconds; the job is shifted so that its first
 * selected op starts at 0.
 *
 * XProf trace-viewer JSON (`*.trace.json[.gz]`, read with the streaming
 * tokenizer of fe_json.h) is the second input form: `process_name`
 * metadata events map pids to the same plane names; an op's time is
 * args.device_offset_ps / device_duration_ps when present, else ts / dur
 * (µs, converted exactly); its HLO text is args.long_name (else the event
 * name) and args.hlo_category classifies ops without text.  Step markers
 * (step_marker, any pid) are timed by ts / dur: when ops carry device
 * offsets, the two clocks differ (doc/xla.md).
 *
 * Nothing is dropped silently: collectives without a usable size (no HLO
 * text, unknown dtype, missing operand shapes) are counted in the report
 * and replayed as COMP nodes of their measured duration; with `strict` they
 * are an error.  The same holds for groups naming devices that no file
 * holds (the group keeps the present members; a warning says how many are
 * missing).  Memory: the file image of one file at a time plus 48 bytes
 * per selected op, then the graphs; time: linear in the input plus
 * O(n log n) sorting when a chip's ops are out of order.
 */
#ifndef WISP_FE_XLA_H
#define WISP_FE_XLA_H

#include "chakra/et_graph.h"
#include "frontends/hlo.h"
#include "frontends/xplane.h"

G_BEGIN_DECLS

typedef struct {
  gboolean strict;             /* unsized collectives and partial groups are errors */
  gboolean no_gaps;            /* do not emit idle-gap (ET_FLAG_DELAY) nodes */
  /* Steps: events on the `Steps` line, or on `XLA Modules` whose name starts
   * with step_marker.  step_index < 0 keeps everything from the first step's
   * start to the last step's end; k >= 0 keeps only step k.  Without a
   * marker and without a Steps line every op is kept. */
  const char *step_marker;
  int step_index;
  int64_t num_partitions;      /* 0: default group-mode assumption of hlo.h */
  /* Devices named by replica groups but absent from the profile (e.g. the
   * other hosts of a job profiled on one host) become ranks that replay the
   * ops of chip (device mod #chips): a symmetry assumption, reported. */
  gboolean replicate_missing;
  /* XPlane: time ops by their device_offset_ps / device_duration_ps stats
   * (the device's own clock; TPU profiles carry them on XLA Ops events)
   * instead of the event offsets.  Steps are still selected on the event
   * clock (module events carry no device times). */
  gboolean device_clock;
  fe_xplane_limits limits;
} fe_xla_options;

/* Initialises options to the defaults (step_index = -1). */
void fe_xla_options_init(fe_xla_options *opt);

typedef struct {
  int n_files;
  int n_chips;                 /* chips in the profile */
  uint64_t replicated_ranks;   /* ranks added by replicate_missing */
  uint64_t device_clock_ops;   /* ops timed by their device stats (device_clock) */
  int n_sparsecore_planes;
  int n_gpu_planes;            /* /device:GPU:N planes (one rank each, like TPU chips) */
  int idle_gpus;               /* GPU planes without any kernel in the window: ranks that only idle */
  int64_t n_devices;           /* global device ids named (chips and group members) */
  uint64_t bytes_read;         /* file image bytes scanned (inflated) */
  uint64_t events;             /* events read: XPlane device lines visited, all JSON events */
  uint64_t ops;                /* selected XLA ops (all chips) */
  uint64_t compute_ops;
  uint64_t collectives[FE_HLO_RECV + 1]; /* by fe_hlo_kind (sync + start) */
  uint64_t async_pairs;        /* start/done pairs joined */
  uint64_t unmatched_starts;   /* starts without a done in the window */
  uint64_t unmatched_dones;    /* dones without a start in the window */
  uint64_t unsized;            /* collectives replayed as compute: no size */
  uint64_t partial_groups;     /* collective executions whose group lacks members */
  uint64_t replayed_collectives; /* of those, replayed at their measured duration (not simulated) */
  uint64_t missing_peers;      /* SEND/RECV peers not in the profile (not emitted) */
  uint64_t aggregated_events;  /* events without a start time (num_occurrences), skipped */
  uint64_t host_events;        /* JSON complete events on non-device pids, skipped */
  uint64_t outside_steps;      /* ops outside the selected steps, skipped */
  uint64_t overlapped_ops;     /* ops starting before the previous op of their chain ended */
  sim_time_ps overlap_added_ps; /* time the chain adds by serialising them */
  uint64_t steps;              /* step markers found (chip 0) */
  uint64_t model_flops;        /* sum of model_flops over selected ops */
  uint64_t comm_bytes;         /* sum of COMM node bytes */
  GPtrArray *warnings;         /* char*, one line each, deduplicated */
} fe_xla_report;

void fe_xla_report_init(fe_xla_report *rep);
void fe_xla_report_clear(fe_xla_report *rep);
/* Writes the report as text lines (for `wisp inspect`). */
void fe_xla_report_print(const fe_xla_report *rep, FILE *out);

/* TRUE when path names an XPlane file (`*.xplane.pb`, `*.xplane.pb.gz`). */
gboolean fe_xla_is_xplane_path(const char *path);

/* TRUE when path names an XProf trace-viewer JSON file (`*.trace.json[.gz]`,
 * but not PyTorch's `*.pt.trace.json[.gz]`, which are Kineto traces). */
gboolean fe_xla_is_trace_json_path(const char *path);

/* Reads n XPlane or trace-viewer JSON files (one per host; the form is
 * chosen per file by fe_xla_is_trace_json_path) into one workload.  rep may
 * be NULL. */
et_workload *fe_xla_load(const char *const *paths, int n, const fe_xla_options *opt,
                         fe_xla_report *rep, GError **error);

/* Expands command-line inputs: files are kept as given, directories are
 * replaced by their *.xplane.pb[.gz] and *.trace.json[.gz] files in name
 * order.  Returns a NULL-terminated GPtrArray of paths (g_ptr_array_unref
 * frees it) or NULL with an error when an input is missing or a directory
 * holds no profile. */
GPtrArray *fe_xla_expand_inputs(const char *const *args, int n, GError **error);
/* TRUE when some argument (not starting with '-') is an XLA profile: an
 * XPlane or trace JSON path, or a directory holding *.xplane.pb[.gz]. */
gboolean fe_xla_wants(int argc, char **argv);

/* fe_xla_expand_inputs + fe_xla_load in one call, for `wisp simulate`. */
et_workload *fe_xla_load_inputs(const char *const *args, int n, const fe_xla_options *opt,
                                fe_xla_report *rep, GError **error);

/* `wisp inspect` / `wisp convert` for XLA profiles (cli/cmd_xla.c); argv[0]
 * is the subcommand name.  Exit status 0 ok, 1 bad input, 2 bad usage. */
int wisp_xla_inspect(int argc, char **argv);
int wisp_xla_convert(int argc, char **argv);

G_END_DECLS
#endif
