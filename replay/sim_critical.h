/* sim_critical.h: the critical path of a replayed run (prefix sim_crit_):
 * the chain of events that set the step time, split into what the time
 * was spent on.
 *
 * Recording (sim_replay.c, only when sim_replay_options.critical_path is
 * set) keeps for every node its binding predecessor, the event that let it
 * start:
 *  - a node that became ready when its last unfinished parent finished, and
 *    got its slot at once (or needs none): that parent;
 *  - a ready node that waited in the FIFO for a compute or CPU slot: the
 *    node whose finish freed the slot it got;
 *  - a root node that started at time 0: none.
 * A simulated communication node (COMM_COLL / COMM_SEND / COMM_RECV without
 * ET_FLAG_REPLAY) also has a data binding: the member (or side of the
 * rendezvous) that issued last, whose issue started the data moving.  When
 * this member's own issue time equals the data start it binds to itself (no
 * jump: symmetric ranks never show false stragglers); otherwise it binds to
 * the last issuer, the lowest rank among equal latest issue times.
 *
 * The path walks back from the last node to finish on the rank that
 * finished last (ties: lowest rank; within the rank the node whose finish
 * was processed last) through the bindings to time 0.  Each node on the
 * path is one segment [start on the path, end]: for timed nodes [end -
 * duration - time added by interference, end], for simulated
 * communication [data start, end], after which the path continues on the
 * last issuer's rank.  The segments tile
 * [0, step time] exactly (asserted while building).
 *
 * Categories: compute (COMP, neither ET_FLAG_DELAY nor ET_FLAG_CPU_OP),
 * host (COMP with ET_FLAG_CPU_OP: launch calls, host gaps, syncs), idle
 * (COMP with ET_FLAG_DELAY, not CPU_OP: unexplained GPU idle replayed as a
 * fixed delay), communication (simulated COMM nodes, also totalled per
 * (group, op)), communication_replayed (COMM nodes with ET_FLAG_REPLAY:
 * measured durations that do not respond to the network), other (METADATA
 * and INVALID nodes, zero length unless flagged REPLAY).
 *
 * Straggler waits: wherever the path jumps at a collective from rank r to
 * another rank k, the time r waited (data start - r's issue time) is
 * attributed to k.  At a send/recv the same wait is a dependency (the
 * receiver needs the sender's data, e.g. a pipeline stage's input), kept
 * apart in `dependencies` and never called a straggler.  These waits are not path time (the path is on rank k
 * then); they say how long others stood still because of k.
 *
 * Cost when recording: O(1) per node event plus O(members) per collective
 * start; memory 12 bytes per node (binding, finish time) and 24 bytes per
 * communication attribute record, allocated only when asked.  Building the path is
 * O(path length + ranks) time and memory.
 */
#ifndef WISP_SIM_CRITICAL_H
#define WISP_SIM_CRITICAL_H

#include "chakra/et_graph.h"
#include "common/wisp_json.h"

#include <stdio.h>

G_BEGIN_DECLS

typedef enum {
  SIM_CRIT_COMPUTE = 0,
  SIM_CRIT_HOST,
  SIM_CRIT_IDLE,
  SIM_CRIT_COMM,
  SIM_CRIT_COMM_REPLAYED,
  SIM_CRIT_OTHER,
  SIM_CRIT_START_OFFSET,   /* before a rank's first node, when the replay starts ranks at their measured starts */
  SIM_CRIT_N_CATEGORIES
} sim_crit_category;

/* "compute", "host", "idle", "communication", "communication_replayed", "other". */
const char *sim_crit_category_name(sim_crit_category c);
/* The category as a sentence names it: "GPU compute", "host/CPU work", ... */
const char *sim_crit_headline_name(sim_crit_category c);
/* The category of a node (see above). */
sim_crit_category sim_crit_classify(const et_node *n);

/* One node on the path: [start, end] in ps, start on the path (see above). */
typedef struct {
  int rank;
  uint32_t node;           /* node index in the rank's graph */
  uint8_t category;        /* sim_crit_category */
  sim_time_ps start, end;
} sim_crit_segment;

/* Path time of one (group, op) pair of simulated communication. */
typedef struct {
  uint32_t group;          /* group index or ET_GROUP_WORLD (send/recv are world) */
  uint8_t node_type;       /* et_node_type: COMM_COLL, COMM_SEND or COMM_RECV */
  uint8_t op;              /* et_coll_type; ET_COLL_NONE for send/recv */
  sim_time_ps time;
} sim_crit_comm;

/* One jump of the path at a communication: `rank` waited `waited` ps for
 * `for_rank`, at its node `node` (data start `at`). */
typedef struct {
  int rank, for_rank;
  uint32_t node;
  uint32_t seq;            /* collective's per-group sequence number; ET_NONE for send/recv */
  sim_time_ps at, waited;
} sim_crit_wait;

/* Waits attributed to one rank, summed. */
typedef struct {
  int rank;
  uint32_t count;          /* communications at which the path jumped to this rank */
  sim_time_ps waited;
} sim_crit_straggler;

/* Consecutive segments on one rank with one category. */
typedef struct {
  int rank;
  uint8_t category;
  sim_time_ps start, end;
  uint32_t nodes;
  uint32_t first, last;    /* node indices of the first and last node of the run */
} sim_crit_run;

typedef struct sim_critical_path sim_critical_path;
struct sim_critical_path {
  int n_ranks;
  int end_rank;            /* the rank that finished last (lowest among ties) */
  sim_time_ps step_time;
  sim_time_ps by_category[SIM_CRIT_N_CATEGORIES]; /* sums to step_time */
  GArray *segments;        /* sim_crit_segment in time order; tiles [0, step_time] */
  GArray *comm;            /* sim_crit_comm, by time descending, ties by (group, node_type, op) */
  sim_time_ps *rank_time;  /* n_ranks entries: path time spent on each rank */
  GArray *waits;           /* sim_crit_wait in time order */
  GArray *stragglers;      /* sim_crit_straggler, by waited descending, ties by rank: waits at
                              collectives only (a member issued late) */
  GArray *dependencies;    /* the same for waits at send/recv: a receive waiting for its sender's
                              data (a pipeline stage's input), a dependency, not a straggler */
  /* Compute time on the path added by communication interfering with
   * compute on the same cores (part of by_category[compute]; see
   * sim_crit_rec_stretch), and whether the run modelled it (set by the
   * replay; the JSON has interference_ns only then). */
  sim_time_ps interference;
  gboolean interference_model;
};

void sim_crit_path_free(sim_critical_path *p);

/* Merges consecutive segments with the same rank and category into runs
 * (g_array_unref the result).  O(segments). */
GArray *sim_crit_runs(const sim_critical_path *p);

/* One sentence (g_free) naming what bounds the step, from the path's
 * numbers: the largest category (or a straggler, when the waits one rank
 * causes exceed every category), where it lies, and how much of the path
 * is exposed communication, the most a faster network can remove while the
 * schedule stays the same.  Needs the workload for group names. */
char *sim_crit_bound_sentence(const sim_critical_path *p, const et_workload *w);

/* Prints the split: one line per category (ms and % of the step), the top
 * (group, op) pairs of communication, per-rank path time, the largest
 * straggler waits, and the sentence.  About 12 lines. */
void sim_crit_print_summary(const sim_critical_path *p, const et_workload *w, FILE *out);
/* Prints the chain as merged runs (rank, category, start_ns, end_ns,
 * duration_ns, nodes, first and last node names), at most max_rows runs
 * (-1: all), saying how many were left out. */
void sim_crit_print_chain(const sim_critical_path *p, const et_workload *w, FILE *out, int max_rows);
/* Writes the object `key`: end_rank, step_time_ns, nodes, by_category
 * {<category>_ns}, communication [{group, op, time_ns}], ranks [{rank,
 * time_ns}] (ranks with path time), stragglers [{rank, waited_ns, at}]
 * (at: communications at which the path jumped to that rank), bound (the
 * sentence) and, with_segments, segments [{rank, category, start_ns,
 * end_ns, nodes, first, last}] (every merged run). */
void sim_crit_write_json(wisp_json *j, const char *key, const sim_critical_path *p, const et_workload *w,
                         gboolean with_segments);

/* ---- recording (used by sim_replay.c) ---- */

typedef struct sim_crit_rec sim_crit_rec;

/* Allocates the per-node and per-communication arrays of w. */
sim_crit_rec *sim_crit_rec_new(const et_workload *w);
void sim_crit_rec_free(sim_crit_rec *rec);
/* `node` of `rank` finished at `end` (call before its children start). */
void sim_crit_rec_finish(sim_crit_rec *rec, int rank, uint32_t node, sim_time_ps end);
/* `node` of `rank` ran `added` ps longer than its recorded duration
 * (slowed by communication in flight beside it); call before
 * sim_crit_rec_finish.  The path's segment of a timed node is then [end -
 * duration - added, end]. */
void sim_crit_rec_stretch(sim_crit_rec *rec, int rank, uint32_t node, sim_time_ps added);
/* Node ran for d instead of its recorded duration (a lever changed it,
 * replay/sim_levers.h); the per-rank table is allocated on first use. */
void sim_crit_rec_duration(sim_crit_rec *rec, int rank, uint32_t node, sim_time_ps d);
/* `pred` (same rank) let `node` start: its last parent, or the node whose
 * finish freed the slot `node` got; the last call for a node wins. */
void sim_crit_rec_bind(sim_crit_rec *rec, int rank, uint32_t node, uint32_t pred);
/* `node` (a collective held behind `like`, an earlier call of its group on
 * the same rank) issued when `like` did: it takes `like`'s binding
 * predecessor, so its issue time is `like`'s.  O(1). */
void sim_crit_rec_bind_like(sim_crit_rec *rec, int rank, uint32_t node, uint32_t like);
/* A communication starts moving data at `start`: n members (ranks[k],
 * nodes[k]), all issued.  Each member's issue time is its binding
 * predecessor's finish (0 for roots); binds every member by the tie rule
 * above.  seq: the collective's per-group sequence, ET_NONE for send/recv.
 * O(n). */
void sim_crit_rec_comm_start(sim_crit_rec *rec, int n, const int *ranks, const uint32_t *nodes,
                             sim_time_ps start, uint32_t seq);
/* Walks the path (see above).  Asserts that the segments tile [0, step]. */
sim_critical_path *sim_crit_rec_build(const sim_crit_rec *rec);

G_END_DECLS
#endif
