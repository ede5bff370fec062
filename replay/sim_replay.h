/* sim_replay.h: replays a workload (one execution graph per rank) on the
 * discrete-event engine, simulating only the communication.
 *
 * Semantics (see doc/ARCHITECTURE.md, "Replay"):
 *  - A node becomes ready when all its parents (union of data_deps and
 *    ctrl_deps, as the graph was built) have finished.
 *  - COMP nodes run for their recorded duration (times the factor of the
 *    options' levers, replay/sim_levers.h, when some are set).  Each rank has
 *    `compute_slots` GPU compute slots (default: the concurrency the
 *    profile measured on that rank, else 1) and one CPU slot for
 *    is_cpu_op nodes; a ready node whose slot is busy waits in FIFO order of
 *    readiness (ties by node index).  Idle-gap nodes (ET_FLAG_DELAY) and
 *    replayed communication nodes (ET_FLAG_REPLAY) take time but no slot.
 *  - Communication never takes a compute slot, so it overlaps compute
 *    whenever the graph allows it.  With a communication library that
 *    interferes (coll_rt_set_slowdown_hook, doc/libraries.md §9), GPU
 *    compute nodes on a rank progress at rate 1 / (1 + delta) while the
 *    library's collectives are in flight there; a node that overlaps them
 *    only partly is stretched only for that part.
 *  - COMM_COLL: every member of the node's group must issue the matching
 *    collective (same group, same per-group sequence number, same type and
 *    size); it starts when the last member issues it and each member
 *    finishes when the collective model says it has.
 *  - COMM_SEND / COMM_RECV match by (source, destination, tag) in FIFO order
 *    and move data once both sides have issued (rendezvous).
 *  - METADATA and INVALID nodes finish immediately; MEM_LOAD/MEM_STORE are
 *    rejected before the run starts.
 *  - If the queue empties while nodes remain unfinished, the run fails with
 *    a WISP_ERROR_DEADLOCK error naming what each blocked rank waits for.
 *
 * Layout (rp_internal.h): scheduling in rp_sched.c, matching in
 * rp_match.c, the driver in sim_replay.c.  The replay sits above
 * collectives/ and net/ and drives the engine of simcore/, which knows
 * nothing of it.
 *
 * Cost: per node, amortized O(1) engine work (one posted event; the queue
 * is a radix heap, simcore/sim.h) plus O(children) to release its
 * children; per communication issue O(1) expected hash operations, per
 * collective start O(members) (buffer lifecycle, critical-path record);
 * plus the collective and network models' own work.  Memory: the graphs
 * are only read (ranks may share one); per rank, nothing per node but an
 * 8-byte counter slot per partly ready node (load <= 1/2, grown by
 * doubling), per group membership a 4-byte sequence
 * counter, one sim_comm_record (96 bytes) per finished communication
 * unless options.no_comm_records or options.comm_records puts them in a
 * temporary file (then one end time's records), what is waiting or in flight in the
 * matching tables (freed as it completes), and 12 bytes per node for the
 * critical path when asked.  bench/bench_replay_mem measures it.
 */
#ifndef WISP_SIM_REPLAY_H
#define WISP_SIM_REPLAY_H

#include "chakra/et_graph.h"
#include "collectives/coll.h"
#include "replay/sim_levers.h"

G_BEGIN_DECLS

/* Optional callbacks that see the run as it happens (e.g. to stream a
 * timeline).  node_done is called for every node when it finishes, with the
 * time it started running (for communication: when this rank issued it);
 * comm_done for every communication record.  Either may be NULL. */
typedef struct sim_comm_record sim_comm_record;
typedef struct sim_critical_path sim_critical_path; /* replay/sim_critical.h */
typedef struct sim_comms sim_comms;                 /* replay/sim_comms.h */
typedef struct {
  void (*node_done)(void *ctx, int rank, const et_graph *g, uint32_t node, sim_time_ps start, sim_time_ps end);
  void (*comm_done)(void *ctx, const sim_comm_record *rec);
  void *ctx;
} sim_replay_observer;

typedef struct {
  const sim_replay_observer *observer;
  unsigned compute_slots;  /* GPU compute slots per rank; 0: each graph's measured
                              concurrency (et_graph.compute_slots), else 1 */
  gboolean checked;        /* verify engine invariants on every step */
  gboolean has_tier;       /* override the config's tier with `tier` */
  net_tier tier;
  gboolean has_algo;       /* force one collective algorithm */
  coll_algo algo;
  gboolean quiet;          /* do not print the speed line */
  gboolean measured_starts; /* start each rank at its measured window start (et_workload.measured_start_ps)
                              instead of all at 0; an error when the workload carries none */
  gboolean critical_path;  /* record binding predecessors and build sim_result.critical
                              (replay/sim_critical.h; O(nodes) memory, off: no cost) */
  sim_levers levers;       /* compute, host and straggler levers (replay/sim_levers.h): a node's
                              duration times sim_levers_node_factor as it starts; all zero: none */
  gboolean no_comm_records; /* do not keep the run's communication records: sim_result.comms
                              is left empty (the observer's comm_done still sees each one), so
                              memory does not grow with the communication finished; the
                              aggregates (sim_result.comm_fold) are still folded */
  int comm_records;        /* where the records are kept (replay/sim_comms.h, sim_comms_keep):
                              0 = SIM_COMMS_MEMORY, sim_result.comms; SIM_COMMS_FILE or
                              SIM_COMMS_MEASURED: an unlinked temporary file that
                              sim_comms_foreach reads, so memory does not grow with them */
} sim_replay_options;

typedef struct {
  int rank;
  sim_time_ps finish;      /* end of the rank's last node */
  sim_time_ps compute;     /* time with at least one compute node running */
  sim_time_ps exposed_comm;    /* communication running, no compute */
  sim_time_ps overlapped_comm; /* communication running under compute */
  sim_time_ps idle;        /* neither, up to finish: finish = compute + exposed_comm + idle */
  /* The one accounting of communication every output uses (per-rank
   * table, SVG, metrics, critical path, utility): exposed_comm split into
   * what the rank did while nothing else ran.  comm_transfer: some
   * communication moved data (or replayed a measured duration);
   * straggler_wait: only waiting, at least one collective waiting for a
   * member that issued late; dependency_wait: only waiting, every wait a
   * send/receive waiting for its partner (a pipeline stage's input).
   * exposed_comm = comm_transfer + straggler_wait + dependency_wait
   * exactly.  Waits hidden under compute are part of overlapped_comm. */
  sim_time_ps comm_transfer, straggler_wait, dependency_wait;
  uint64_t nodes;
  unsigned compute_slots;  /* GPU compute slots the rank replayed with */
  /* Interference (sim_result.interference): compute time added because
   * library communication in flight slowed compute on this rank, and the
   * undisturbed compute work that ran under that slowdown; their ratio is
   * the mean slowdown of compute beside communication. */
  sim_time_ps interference;
  sim_time_ps interfered_compute;
  /* Straggler cost (HTA's and CCL-Bench's `straggler`): over the rank's
   * collectives, the time from its issue to the last member's issue (when
   * the collective could start), summed; how many collectives it took part
   * in, and in how many it issued last (ties count for every rank that
   * issued at the start time). */
  sim_time_ps coll_wait;
  uint64_t colls, coll_last;
  double compute_factor;   /* the levers' per-rank factor on GPU kernels (1 = unchanged) */
} sim_rank_stats;

struct sim_comm_record {
  int rank;
  uint64_t node_id;
  uint8_t op;              /* et_coll_type; ET_COLL_NONE for send/recv */
  uint8_t node_type;       /* et_node_type */
  uint8_t algo;            /* coll_algo */
  int8_t nccl_algo;        /* library nccl: NCCL's algorithm (coll_nccl_algo), else -1 */
  int8_t proto;            /* library nccl: NCCL's protocol (coll_proto), else -1 */
  uint32_t group;          /* group index or ET_GROUP_WORLD */
  int n_ranks;
  int peer;                /* send/recv peer, else -1 */
  uint64_t bytes;          /* Chakra comm_size */
  uint64_t algbw_bytes;    /* nccl-tests S */
  double busbw_factor;
  sim_time_ps issue;       /* this rank issued the operation */
  sim_time_ps start;       /* data started moving (all members issued) */
  sim_time_ps end;         /* this rank finished */
  sim_time_ps measured;    /* measured duration from the trace (0 if unknown) */
};

typedef struct {
  int n_ranks;
  sim_rank_stats *ranks;
  GArray *comms;           /* sim_comm_record, ordered by (end, rank, node); empty with
                              options.no_comm_records or a file (options.comm_records) */
  sim_comms *comm_fold;    /* the records' aggregates and their file (replay/sim_comms.h);
                              NULL in a result built by hand */
  sim_time_ps step_time;   /* max finish over ranks */
  uint64_t events;
  net_agg_stats flow_agg;  /* the flow tier's aggregation of symmetric flows (net.h; zero on tier A) */
  uint64_t assumed_roots;  /* rooted collectives without a recorded root: first member used */
  /* Collective calls whose dependencies were met before an earlier call of
   * their group on the same rank had issued; each waited for it, so every
   * rank's calls meet in its program order (replay/rp_order.c). */
  uint64_t collectives_held;
  /* Buffer lifecycle (et_comm.buffer / alloc_ps from memory events):
   * collectives started with a known allocation time (every member had
   * one) and ones where only some members had one (synthetic used). */
  uint64_t lifecycle_known, lifecycle_partial;
  double wall_seconds;
  net_tier tier;
  uint32_t n_links;
  uint64_t *link_bytes;    /* per topology link */
  coll_library_kind library;     /* communication library modeled (config `library:`) */
  /* Its registration / staging / core figures (collectives/coll_library.h),
   * a copy owned by the result: NULL when the library has no engine of its
   * own (nccl), so the result does not embed the library model's state. */
  coll_library_stats *library_stats;
  sim_critical_path *critical;   /* the critical path when options.critical_path, else NULL */
  gboolean measured_starts;      /* ranks started at their measured starts (options.measured_starts) */
  gboolean interference;         /* the library slows compute beside its communication (doc/libraries.md §9) */
} sim_result;

sim_result *sim_replay_run(const et_workload *w, const topo *t, const sim_replay_options *opt,
                           GError **error);
void sim_result_free(sim_result *r);

G_END_DECLS
#endif
