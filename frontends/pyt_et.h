/* pyt_et.h: PyTorch execution traces (the host-side operator graph that
 * torch.profiler.ExecutionTraceObserver writes, schemas 1.0.x and 1.1.x).
 *
 * Two uses (doc/pytorch_et.md):
 *  - alone (fe_pet_load): one execution trace per rank becomes one graph per
 *    rank: a COMM node per record_param_comms collective, sized from its
 *    tensors as the CPU op recorded them, and a COMP node per outermost
 *    operator that issues no communication, ordered as each CPU thread ran
 *    them plus the tensor data dependencies.  The execution trace records
 *    no durations, so every COMP node takes 0 s and the replay gives the
 *    communication and dependency time only: the report says so.
 *  - beside the rank's Kineto trace (fe_pet_link): the execution trace's
 *    collectives are linked to the Kineto graph's communication nodes, their
 *    kinds and sizes compared, and the dependencies the execution trace
 *    states between collectives (a collective reads a tensor computed from
 *    an earlier collective's output) added where the Kineto graph does not
 *    already order them; disagreements with what the timeline inferred are
 *    counted by kind.
 *
 * Ranks come from the trailing number of a file's name (dlrm_eg_3.json is
 * rank 3), the only place the format records them.  Every reader error
 * names the file and the node (its id and index) that failed.
 */
#ifndef WISP_PYT_ET_H
#define WISP_PYT_ET_H

#include "common/wisp_util.h"
#include "chakra/et_graph.h"

G_BEGIN_DECLS

/* One collective as record_param_comms recorded it. */
typedef struct {
  uint64_t node_id;        /* the record_param_comms node's id */
  uint64_t rf_id;          /* its record-function id (Kineto "Record function id"), 0 when absent */
  int64_t seq;             /* the collective's sequence number in its process group, -1 when absent */
  uint64_t pg;             /* the process group's handle as recorded (an opaque number), 0 when absent */
  char *op;                /* the recorded name: "allreduce", "all_to_allv", "all_gather", "send", ... */
  et_coll_type coll;       /* ET_COLL_NONE for send/recv */
  int p2p;                 /* 0 collective, 1 send, 2 recv */
  uint64_t in_bytes;       /* bytes of the input tensor(s): numel x element size */
  uint64_t out_bytes;      /* bytes of the output tensor(s) */
  int elem_bytes;          /* element size of the first input tensor, 0 when none */
  GArray *in_splits;       /* uint64_t per peer, in elements (all_to_allv), or NULL */
  GArray *out_splits;
  GArray *in_tensors;      /* uint64_t tensor ids read */
  GArray *out_tensors;     /* uint64_t tensor ids written */
} pet_comm;

/* One operator node. */
typedef struct {
  uint64_t id, parent, rf_id, tid;
  char *name;
  GArray *in_tensors, *out_tensors; /* uint64_t tensor ids (inputs and outputs, nested lists flattened) */
  int comm;                /* index into pet_trace.comms, -1 when none */
  gboolean wait;           /* record_param_comms "wait": waits for the collective numbered seq */
  int64_t wait_seq;
} pet_node;

typedef struct {
  char *path;
  char *schema;            /* "1.0.1", "1.1.1-chakra.0.0.4", ... */
  int schema_minor;        /* 0 for 1.0.x, 1 for 1.1.x */
  int64_t pid;
  int rank;                /* from the file name, -1 when it has no trailing number */
  GArray *nodes;           /* pet_node, in file order */
  GArray *comms;           /* pet_comm, in node id order */
  uint64_t waits;          /* record_param_comms "wait" nodes */
} pet_trace;

/* Reads one execution trace (plain or gzip JSON).  Fails with the file, the
 * node index and id, and what is wrong when the document is not a PyTorch
 * execution trace of schema 1.0.x or 1.1.x or a node is malformed.  Memory:
 * the parsed document (about ten times the file) while reading, then
 * O(nodes + tensors). */
pet_trace *pet_trace_read(const char *path, GError **error);
/* The same from text in memory (len bytes, need not end in NUL); path
 * names it in errors.  Used by the fuzz harness. */
pet_trace *pet_trace_parse(const char *text, size_t len, const char *path, GError **error);
void pet_trace_free(pet_trace *t);

/* What loading or linking found; lines and warnings are char*. */
typedef struct {
  int n_ranks;
  uint64_t nodes, comms, waits;           /* over every rank */
  char *schemas;                          /* distinct schema versions, "1.0.1" */
  gboolean durations_unknown;             /* alone: compute took 0 s */
  /* Linking (beside Kineto). */
  uint64_t linked, size_equal, size_differs, kind_differs, et_only, kineto_only;
  uint64_t splits_added;                  /* uniform all_to_all given the trace's all_to_allv splits */
  uint64_t deps_stated, deps_inferred_too, deps_added, deps_contradicted;
  /* The rf_id join (fe_pet_link_kineto, Kineto traces with Record function
   * ids): ranks joined that way, collectives joined, and each way one
   * failed: no rf_id in the execution trace, no Kineto CPU op with it, an
   * op that launched no GPU activity, a kernel that is no communication
   * node of the graph (outside its window); joins whose graph node is not
   * the one the position join would take. */
  uint64_t ranks_by_rf, rf_joined, rf_no_rfid, rf_no_op, rf_no_kernel, rf_outside, rf_position_differs;
  GPtrArray *lines;                       /* per-rank summaries and the first disagreements */
  GPtrArray *warnings;
} fe_pet_report;

void fe_pet_report_init(fe_pet_report *r);
void fe_pet_report_clear(fe_pet_report *r);
/* The report as `wisp inspect` prints it.  O(lines). */
void fe_pet_report_print(const fe_pet_report *r, FILE *out);

/* The execution traces alone: one graph per rank (see above).  paths are
 * files; their ranks must be 0..n-1, each once.  Collectives whose process
 * group the trace does not describe are taken as world collectives (one
 * warning).  O(nodes + tensors) per rank. */
et_workload *fe_pet_load(const char *const *paths, int n_paths, fe_pet_report *report, GError **error);

/* Links the execution traces with a workload the Kineto frontend built from
 * the same ranks (w: one graph per rank, not scaled nor shared), compares
 * every linked collective's kind and size, and adds the dependencies the
 * traces state and the graphs lack (w's graphs are rebuilt with them).
 * Fails when a rank has no execution trace or its collectives cannot be
 * linked at all.  O(ranks x (nodes + edges) + stated pairs x graph). */
gboolean fe_pet_link(et_workload *w, const char *const *paths, int n_paths, fe_pet_report *report,
                     GError **error);

/* The same, given the ranks' Kineto trace files as well (kineto_paths,
 * any order: each states its rank): where they carry "Record function id"s
 * the collectives are joined as Chakra's trace linker joins them (rf_id ->
 * CPU op -> launch correlation -> kernel) instead of by position, and the
 * report counts each kind of join failure.  Reads each Kineto file once
 * more (cJSON: about ten times its size in memory) when it has the ids. */
gboolean fe_pet_link_kineto(et_workload *w, const char *const *paths, int n_paths, const char *const *kineto_paths,
                            int n_kineto, fe_pet_report *report, GError **error);

/* The rank a file name states: the trailing number before the extension
 * ("dlrm_eg_3.json" -> 3, "rank12.et.json.gz" -> 12), -1 when none. */
int pet_rank_from_name(const char *path);

G_END_DECLS
#endif
