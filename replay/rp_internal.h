/* rp_internal.h: the replay's private state, shared by its three parts
 * (prefix rp_; not installed):
 *  - rp_sched.c: scheduling.  Per-rank in-degree counters, the compute
 *    and CPU slots with their FIFO wait queues, busy-time accounting,
 *    node start and finish, and the interference model that re-times
 *    compute slowed by library communication.
 *  - rp_match.c: matching.  Collectives gathered per (group, sequence)
 *    until every member has issued, point-to-point sends and receives
 *    paired per (source, destination, tag) in FIFO order, both handed to
 *    collectives/ or net/; the lists of what is still waiting for the
 *    deadlock report.
 *  - rp_order.c: each rank's program order of its collectives per group,
 *    which the matching follows whatever the timing.
 *  - sim_replay.c: the driver.  Input checks, setup, the run, the result
 *    and the deadlock error, teardown.
 * Every node finishes through an engine event, never re-entrantly, so the
 * replay needs no recursion.
 */
#ifndef WISP_RP_INTERNAL_H
#define WISP_RP_INTERNAL_H

#include "replay/sim_replay.h"
#include "replay/sim_comms.h"
#include "replay/sim_critical.h"

G_BEGIN_DECLS

/* A rank's ready queue for one slot kind: a growable ring of node indices. */
typedef struct {
  uint32_t *items;
  uint32_t head, len, cap;
} rp_fifo;

typedef struct rp_replay rp_replay;

/* A graph's collectives (the ones the replay matches) and each one's
 * ordinal among its group's collectives in the rank's program order
 * (rp_order.c).  Shared by the ranks replaying the same graph. */
typedef struct {
  uint32_t n;               /* collectives */
  uint32_t *node;           /* their node indices, ascending */
  uint32_t *ord;            /* ord[k]: node[k]'s place among its group's calls (n >= 2 only) */
  gboolean reordered;       /* the node order broke an edge: the topological order was used */
} rp_order;

/* The in-degree counters of a rank's nodes that are partly ready: at least
 * one parent finished, at least one not.  An open-addressing table (linear
 * probing, backward-shift deletion) of node index + 1 -> unfinished
 * parents; nodes with one parent never enter it, and an entry leaves when
 * its count reaches 0, so it holds only nodes in flight, not the graph.
 * Expected O(1) per operation at load <= 1/2; 8 bytes per slot. */
typedef struct {
  uint32_t *keys;           /* node + 1, 0 = empty slot */
  uint32_t *left;           /* unfinished parents of keys[k] */
  uint32_t mask;            /* capacity - 1 (capacity a power of two), or 0 before the first insert */
  uint32_t len;
} rp_pending;

/* A compute node in progress under the interference model: its remaining
 * work in picoseconds of undisturbed compute, when that was last brought
 * up to date, when it started and its (cancellable) finish event. */
typedef struct {
  uint32_t node;
  sim_time_ps left, t_last, start;
  sim_event_id ev;
} rp_ovl_node;

typedef struct {
  rp_replay *rp;
  int rank;
  const et_graph *g;
  const rp_order *order;    /* the graph's program order of collectives (rp_order.c) */
  rp_pending pending;       /* unfinished parents of partly ready nodes */
  uint32_t finished;        /* nodes finished */
  rp_fifo compute_wait, cpu_wait;
  unsigned compute_slots;   /* this rank's GPU compute slots */
  unsigned compute_busy, cpu_busy;
  /* Busy-time accounting: counts of running compute and comm nodes and the
   * time of the last change. */
  int n_compute, n_comm;
  sim_time_ps last_change;
  sim_time_ps t_compute_only, t_both, t_comm_only, t_idle;
  /* The communication accounting's split of t_comm_only (one accounting
   * for every output: sim_rank_stats.comm_transfer, straggler_wait,
   * dependency_wait): of the n_comm nodes in progress, n_wait_coll are
   * collectives issued here whose last member has not issued yet and
   * n_wait_p2p sends/receives whose partner has not, and collectives held
   * behind an earlier call of their group on this rank (rp_match.c),
   * which wait for this rank's own dependencies; time with no compute
   * is transfer while any communication moves data, else a straggler wait
   * while a collective waits, else a dependency wait. */
  int n_wait_coll, n_wait_p2p;
  sim_time_ps t_xfer_only, t_wait_coll, t_wait_dep;
  sim_time_ps finish;
  /* Interference (rp_replay.ovl only): compute progresses at rate 1 / slow
   * (slow = 1 + delta of the library communication in flight here);
   * running holds the GPU compute nodes in progress (at most
   * compute_slots).  t_added: compute time added by the slowdown;
   * t_under: undisturbed work done while slow > 1. */
  double slow;
  rp_ovl_node *running;
  unsigned n_running;
  sim_time_ps t_added, t_under;
  /* Straggler cost (sim_rank_stats.coll_wait): each collective's wait from
   * this rank's issue to the start (the last member's issue), the
   * collectives finished and those this rank issued last. */
  sim_time_ps coll_wait;
  uint64_t colls, coll_last;
  /* Levers (rp_replay.levers_on only): the rank's factor on GPU kernels
   * and its graph's kernel classes (one byte per node, shared by ranks
   * with the same graph; NULL when no class lever is set). */
  double factor;
  const uint8_t *klass;
} rp_rank;

/* A point-to-point operation in flight (both sides issued).  Slots are
 * reused through a free list, so the pool holds at most the operations in
 * flight at once. */
typedef struct {
  int src, dst;
  uint32_t send_node, recv_node;
  uint64_t bytes;
  sim_time_ps send_issue, recv_issue; /* when each side was issued */
  sim_time_ps start;
  int sides_done;           /* library point-to-point: sides finished */
  uint32_t next_free;       /* free list link while the slot is unused */
} rp_p2p_op;

struct rp_replay {
  const et_workload *w;
  sim_engine *sim;
  net *net;
  coll_rt *coll;
  gboolean p2p_lib;         /* a library runs point-to-point (coll_p2p_start), not nccl */
  coll_policy *policy;
  const sim_replay_observer *obs;
  rp_rank *ranks;
  int *world_ranks;
  GHashTable *insts;        /* (group, seq) key -> rp_coll_inst* (rp_match.c) */
  GHashTable *orders;       /* et_graph* -> rp_order* (rp_order.c), one per distinct graph */
  /* Collectives whose dependencies were met before an earlier call of
   * their group on the same rank had been issued: (membership slot << 32 |
   * ordinal) -> node index + 1, until that call issues (rp_match.c). */
  GHashTable *held;
  uint64_t held_total;      /* collectives that were held so (sim_result.collectives_held) */
  GHashTable *p2p_wait;     /* rp_p2p_key* -> rp_p2p_wait* holding the unmatched side's nodes (rp_match.c) */
  GArray *p2p_ops;          /* rp_p2p_op pool; cookie = index */
  uint32_t p2p_free;        /* head of the pool's free list, or ET_NONE */
  GHashTable **member_index;/* per group: rank -> member index + 1 */
  /* Next collective sequence number per (group, member): seq[seq_base[0] +
   * rank] for world, seq[seq_base[k + 1] + member] for group k; one
   * counter per membership (sum of group sizes + ranks), not per rank and
   * group. */
  uint32_t *seq, *seq_base;
  sim_comms *comms;        /* the records' fold (sim_comms.h) */
  uint64_t assumed_roots;
  uint64_t lifecycle_known, lifecycle_partial;
  sim_crit_rec *crit;       /* binding predecessors (critical path), NULL when not asked */
  gboolean ovl;             /* the library slows compute (coll_rt_set_slowdown_hook) */
  gboolean levers_on;       /* some lever changes durations (sim_levers_active) */
  sim_levers levers;
  double *rank_factor;      /* per rank, NULL when all 1 */
  GHashTable *klass;        /* et_graph* -> uint8_t[n_nodes] kernel classes, NULL when not needed */
  GError *error;
  /* The scheduler's rp_finish_node, set by the driver (sim_replay.c): the
   * matcher hands each finished communication node back through it, so
   * it never calls the scheduler by name (rp_sched.c calls the matcher,
   * not the other way round). */
  void (*finish_node)(rp_rank *rs, uint32_t i, sim_time_ps started);
  /* The scheduler's rp_comm_wait, set by the driver the same way. */
  void (*comm_wait)(rp_rank *rs, int dcoll, int dp2p);
};

/* ---- rp_sched.c ---- */

/* Records the run's first error (later ones are dropped) and stops the
 * engine.  Inline: the scheduler and the matcher both report errors, and
 * neither may call the other's file for it.  O(1). */
static inline void rp_fail(rp_replay *rp, GError *e)
{
  if (rp->error == NULL)
    rp->error = e;
  else
    g_error_free(e);
  sim_stop(rp->sim);
}
gboolean rp_is_comm_node(const et_node *n);
/* Node i of the rank became ready: it takes its slot or waits for one,
 * then runs (timed nodes), or is handed to matching (communication). */
void rp_start_node(rp_rank *rs, uint32_t i);
/* Node i finished now: accounting, observer, children, slot hand-over.
 * started: when it began running (a stretched compute node) or when this
 * rank issued it (a simulated communication node), or -1 otherwise (the
 * observer then derives it from the duration). */
void rp_finish_node(rp_rank *rs, uint32_t i, sim_time_ps started);
/* A communication node of the rank starts (+1) or stops (-1) waiting for
 * its peers now: dcoll for a collective (members issuing late), dp2p for a
 * send/receive (its partner not issued).  Closes the accounting up to now
 * first.  O(1). */
void rp_comm_wait(rp_rank *rs, int dcoll, int dp2p);
/* The time node i runs on this rank: its recorded duration, times the
 * levers' factor when some lever is set (rounded to the picosecond).  O(1). */
sim_time_ps rp_node_duration(const rp_rank *rs, uint32_t i);
/* Starts every node of the rank without parents. */
void rp_start_roots(rp_rank *rs);
/* The lowest-index partly ready node and its unfinished parents, FALSE
 * when there is none (deadlock report; O(table capacity)). */
gboolean rp_pending_first(const rp_pending *p, uint32_t *node, uint32_t *left);
void rp_pending_free(rp_pending *p);
/* Engine handler: a rank that begins later than time 0 (measured starts). */
void rp_on_rank_begin(sim_engine *sim, void *ctx, uint64_t arg);
/* coll_slowdown_fn: rank's delta changed now (ctx: the rp_replay). */
void rp_on_slowdown(sim_engine *sim, void *ctx, int rank, double delta);

/* ---- rp_order.c ---- */

/* The program order of g's collectives per group.  O(nodes + edges), or
 * O((nodes + edges) log nodes) when the node order breaks an edge. */
rp_order *rp_order_new(const et_graph *g);
/* Index in o->node of collective `node` (which must be one).  O(log n). */
uint32_t rp_order_find(const rp_order *o, uint32_t node);
/* The ordinal of collective `node` among its group's calls.  O(log n). */
uint32_t rp_order_of(const rp_order *o, uint32_t node);
void rp_order_free(gpointer o);

/* ---- rp_match.c ---- */

/* Creates and frees the matching tables (insts, p2p_wait, p2p_ops). */
void rp_match_init(rp_replay *rp);
void rp_match_free(rp_replay *rp);
/* Issues rank rs's communication node i: a collective member, or a send
 * or receive. */
void rp_issue_collective(rp_rank *rs, uint32_t i);
void rp_issue_p2p(rp_rank *rs, uint32_t i);
/* Member index of `rank` in group `group`, or -1. */
int rp_member_of(const rp_replay *rp, uint32_t group, int rank);
/* Appends to s, one "\n  ..." line each and at most max_lines - *lines
 * of them, what rank r issued that waits for another rank: collectives
 * whose other members did not issue (one missing member per collective),
 * sends without a receive and receives without a send (ordered by
 * (source, destination, tag)).  Returns TRUE when it wrote a line. */
gboolean rp_match_describe_waits(const rp_replay *rp, int r, GString *s, int *lines, int max_lines);

G_END_DECLS
#endif
