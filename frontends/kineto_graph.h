/* kineto_graph.h: stage 3 of the Kineto frontend, matching and graphs
 * (private to frontends/kineto*.c and exposed for tests and the fuzzer).
 *
 * kineto_graph.c matches every rank's communication (kineto_rank.h) across
 * ranks into groups and builds each rank's dependency graph (kt_graph),
 * checked acyclic; kineto.c converts the graphs to et_graph through the
 * et_builder API and adds the buffer links of kineto_mem.h.
 */
#ifndef WISP_KINETO_GRAPH_H
#define WISP_KINETO_GRAPH_H

#include "frontends/kineto_rank.h"
#include "frontends/kineto_threads.h"

G_BEGIN_DECLS

typedef struct {
  uint8_t type;            /* et_node_type */
  uint8_t flags;           /* ET_FLAG_* */
  sim_time_ps dur, start;
  uint32_t op;             /* kt_op index or KT_NONE (gap / delay nodes) */
  const char *name;        /* the trace's interned name or kt_graph.names */
} kt_node;

typedef struct {
  GArray *nodes;           /* kt_node */
  GArray *edges;           /* kt_edge over node indices */
  GStringChunk *names;     /* names made up for delay nodes (deduplicated) */
  uint64_t gap_nodes, cross_edges, cycle_edges_dropped;
  sim_time_ps node_busy_ps, gpu_busy_ps;
  /* Host launch model (host_launch): CPU nodes (launch calls, host
   * synchronisation calls, the time between them), launching threads, GPU
   * ops whose launch began before the window (no CPU dependency), GPU ops
   * measured to start before their launch began (dependency dropped), and
   * GPU ops a host synchronisation waits for. */
  uint64_t host_nodes, host_threads, launched_before_window, launch_inversions, sync_waits;
  uint64_t host_overlaps;  /* launch calls inside the time of an earlier call on their thread */
  uint64_t host_forks;     /* other threads whose chain starts after a node of the step thread's */
  uint64_t sync_by_how[KT_SYNC_N]; /* host synchronisation calls by how their target was found (kineto_threads.h) */
  sim_time_ps first_unresolved_ps; /* the first KT_SYNC_UNRESOLVED call's start */
  uint64_t joins;          /* CPU gaps inferred to be a join on another thread's call (kineto_threads.h) */
  /* Kernels mode: the most GPU compute nodes (kernels, copies, memsets and
   * unmatched communication kernels) measured running at once; the
   * replay's compute-slot count.  0 in gap mode (one compute chain). */
  uint32_t compute_slots;
  /* Kernels mode: the GPU idle the replay keeps as fixed delays
   * (ET_FLAG_DELAY nodes that are not CPU nodes), split into launch lag
   * (after the CPU node that ends where the op's launch call begins: the
   * call and the submission) and unexplained idle (after a stream
   * predecessor, a cross-stream parent, or nothing; the step tail
   * included); and whether the step thread's chain was extended to the
   * step marker's end. */
  sim_time_ps launch_lag_ps, unexplained_idle_ps;
  gboolean host_step_tail;
} kt_graph;

/* ---- matching (kineto_graph.c) ---- */

/* A communicator: process group name and member set, numbered from 0 in
 * first-seen order over ranks and their ops (workload group i + 1). */
typedef struct {
  char *key, *pg_name, *desc;
  char *name_or_key;       /* "N (pg \"name\", ranks a,b,...)" for messages */
  int *ranks;
  int n_ranks;
  uint64_t n_ops, bytes;
} kt_group;

typedef struct {
  uint64_t matched, dropped, mismatches, imbalanced_a2av;
  uint64_t replayed;       /* matched, but replayed at the measured duration (a member had no size) */
} kt_match_stats;

/* Matching's verdict on one communication op of a rank. */
typedef enum { KT_COMM_PENDING = 0, KT_COMM_MATCHED = 1, KT_COMM_DROPPED = 2 } kt_comm_status;

typedef struct {
  uint8_t status;          /* kt_comm_status; PENDING: no group reached it (its rank is
                              not in its own member list), reported as not matched */
  gboolean replay;         /* matched, but some member is unsized: every member
                              replays it at its measured duration (ET_FLAG_REPLAY) */
  uint32_t group;          /* matched: index into kt_match.groups */
  int32_t tag;             /* matched send/recv: the pair's tag, the send's index in its rank's comms
                              (kineto_match.c pairs them in issue order; the replay pairs by tag) */
  const char *drop_reason; /* dropped: why (a string literal) */
  char *drop_detail;       /* dropped: which instance, of which group (owned) */
} kt_comm_match;

/* Matching's output for one rank: a verdict per kt_rank.comms entry (same
 * index), and the clock check's samples. */
typedef struct {
  kt_comm_match *comms;    /* n_comms entries; NULL for an absent rank */
  guint n_comms;
  /* For every matched collective, how much later (ps, may be negative)
   * this rank's kernel ended than the median member's, each rank's times
   * taken on its own clock.  NULL when there is no sample. */
  GArray *clock_dev;       /* int64_t */
} kt_rank_match;

/* The result of matching: the groups, each rank's verdicts and the counts.
 * The ranks are not written; graph building reads both. */
typedef struct {
  int n_ranks;
  kt_rank_match *ranks;    /* n_ranks entries, indexed by global rank */
  GPtrArray *groups;       /* kt_group*, owned */
  kt_match_stats stats;
} kt_match;

/* Cross-rank matching of every rank's comms (ranks[i] may be NULL for
 * absent ranks; the ranks are only read) by the rule in kineto_graph.c;
 * appends warnings.  Returns NULL (error set) under strict on any
 * mismatch, or when a group lists a rank outside the world.  O(C log C)
 * for C communication ops, plus O(C_g^2) per group g for send/recv. */
kt_match *kt_match_ranks(const kt_rank *const *ranks, int n_ranks, gboolean strict, GPtrArray *warnings,
                         GError **error);
void kt_match_free(kt_match *m);
void kt_group_free(gpointer g);

/* ---- graphs (kineto_graph.c) ---- */

/* The dependency graph of rank r under the verdicts rm of matching (only
 * matched communication becomes COMM nodes).  host_launch (kernels mode
 * only): model the CPU threads that launch GPU work (see kineto_graph.c). */
kt_graph *kt_graph_build(const kt_rank *r, const kt_rank_match *rm, fe_kineto_mode mode, sim_time_ps min_gap_ps,
                         gboolean host_launch);
void kt_graph_free(kt_graph *g);
/* Frees the events of r's trace that no later stage reads: kt_graph_build
 * reads only the events of r's ops, their launch calls and the host
 * synchronisation calls, and matching reads none (only the kt_rank's
 * communication records and the trace's header: path, origin, strings).
 * The trace is compacted (kt_trace_compact) to those events as 40-byte
 * records, in their order, so every comparison of event indices is
 * unchanged, and the ops' event indices are renumbered: kt_graph_build
 * gives the same graph before and after.  The load calls it once per
 * extracted file; the trace can then not be extracted again, and a trace
 * shared by several kt_rank (replicas) must be shrunk before it is
 * shared.  O(events); afterwards the trace holds about two events per op
 * in the window instead of every kept event of the file. */
void kt_rank_shrink(kt_rank *r);
/* Drops edges that close a cycle (Kahn's algorithm, O(V + E) per dropped
 * edge, in a deterministic order); returns the number dropped. */
uint64_t kt_graph_break_cycles(kt_graph *g);

G_END_DECLS
#endif
