/* sim_comms.h: a run's communication records, folded as the replay
 * produces them (issue 30 item 3: `simulate` in bounded memory).
 *
 * The replay hands every record to sim_comms_add when it finishes.
 * Records arrive in non-decreasing end time (a record's end is the
 * engine's clock when it is made); the fold holds the records of the
 * current end time, and when the clock moves on sorts them by (rank,
 * node_id) and passes them on, so everything downstream sees the records
 * in the report's order, (end, rank, node_id), as the old sort of the
 * whole array gave them.  Passed on, a record is
 *  - folded into the aggregates the reports print: records and traffic
 *    per group, per op type and per send/recv, the NCCL algorithm and
 *    protocol choices, the count of records with a measured duration
 *    (O(1) memory per group, op type and distinct NCCL choice);
 *  - kept, where the options ask: in memory (sim_result.comms, the
 *    default and the library API's), or appended to an unlinked temporary
 *    file (every record, for a report's per-collective list; or only the
 *    ones with a measured duration, which baseline fidelity compares), or
 *    nowhere.
 * With the temporary file the run's memory no longer grows with its
 * communication: what stays is one end time's records (at most one per
 * rank and communication finishing at that instant) plus the aggregates;
 * the file grows by sizeof(sim_comm_record) (96 bytes) per kept record.
 *
 * The readers (sim_comms_foreach) walk the kept records in the same
 * order from memory or from the file; the aggregates come from the fold
 * (sim_comms_of: a run's, or one folded on the spot from an array for a
 * result built by hand).
 */
#ifndef WISP_SIM_COMMS_H
#define WISP_SIM_COMMS_H

#include "replay/sim_replay.h"

#include <stdio.h>

G_BEGIN_DECLS

/* Where the records go (sim_replay_options.comm_records). */
typedef enum {
  SIM_COMMS_MEMORY = 0,   /* sim_result.comms: every record in memory */
  SIM_COMMS_FILE,         /* every record in a temporary file */
  SIM_COMMS_MEASURED,     /* only the records with a measured duration, in a temporary file */
  SIM_COMMS_NONE,         /* none kept (the aggregates only) */
} sim_comms_keep;

/* One NCCL algorithm/protocol choice per collective type: how many
 * collectives (a record counts 1 / n_ranks of its collective) and the
 * range of their nccl-tests sizes. */
typedef struct {
  uint8_t op;
  int8_t algo, proto;
  double count;
  uint64_t lo, hi;
} sim_comms_choice;

typedef struct sim_comms sim_comms;

/* The fold for a workload with n_groups groups (group index n_groups
 * stands for the world).  With SIM_COMMS_FILE or SIM_COMMS_MEASURED the
 * temporary file is created now (in $TMPDIR, else /tmp, and unlinked at
 * once); FALSE with a GError naming the directory when it cannot be. */
sim_comms *sim_comms_new(guint n_groups, sim_comms_keep keep, GError **error);
void sim_comms_free(sim_comms *f);
/* A record that finished now (its end is not before the previous one's).
 * O(1) amortized, plus the sort of each end time's records once. */
void sim_comms_add(sim_comms *f, const sim_comm_record *rec);
/* Passes on the last end time's records; after it the fold is complete.
 * FALSE with a GError when the temporary file could not be written
 * (a full disk). */
gboolean sim_comms_finish(sim_comms *f, GError **error);
/* SIM_COMMS_MEMORY: takes the kept records (ordered by (end, rank,
 * node_id)); an empty array otherwise. */
GArray *sim_comms_steal_records(sim_comms *f);

/* The aggregates (valid after sim_comms_finish). */
uint64_t sim_comms_records(const sim_comms *f);
uint64_t sim_comms_measured(const sim_comms *f);
/* Group gi (n_groups: the world): records and Chakra bytes summed over them. */
uint64_t sim_comms_group_ops(const sim_comms *f, guint gi);
uint64_t sim_comms_group_bytes(const sim_comms *f, guint gi);
/* Collectives of et_coll_type op; send (s = 0) and recv (s = 1). */
uint64_t sim_comms_op_count(const sim_comms *f, int op);
uint64_t sim_comms_op_bytes(const sim_comms *f, int op);
uint64_t sim_comms_p2p_count(const sim_comms *f, int s);
uint64_t sim_comms_p2p_bytes(const sim_comms *f, int s);
/* The NCCL choices in first-seen order (n entries). */
const sim_comms_choice *sim_comms_choices(const sim_comms *f, guint *n);

/* The aggregates of a result: its run's fold, or (a result without one,
 * built by hand) a new fold of r->comms that *owned receives (free it with
 * sim_comms_free).  O(1), or O(records) for the fold. */
const sim_comms *sim_comms_of(const sim_result *r, guint n_groups, sim_comms **owned);
/* Whether a result's every record can be walked (in memory or in its
 * temporary file), not only the measured ones. */
gboolean sim_comms_has_all(const sim_result *r);
/* Calls fn on the result's kept records in order (every record in
 * memory or in the file; with measured_only, only those with a measured
 * duration).  A walk of every record over a result that kept only the
 * measured ones is a programming error.  FALSE with a GError when the
 * file cannot be read back.  O(records kept). */
typedef void (*sim_comms_fn)(void *ctx, const sim_comm_record *rec);
gboolean sim_comms_foreach(const sim_result *r, gboolean measured_only, sim_comms_fn fn, void *ctx,
                           GError **error);

G_END_DECLS
#endif
