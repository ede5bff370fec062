/* study_metrics_internal.h: what the files of the metric catalog share
 * (study_activity.c fills the timeline, study_metrics.c reads it,
 * study_mfu.c gives MFU); not part of the library's surface.
 *
 * The timeline keeps one 24-byte record per GPU interval (act_rec: its
 * times and node), per rank, with each rank's window on the common clock;
 * the metrics read them as 40-byte act_iv, derived from the node when a
 * rank is read.
 */
#ifndef WISP_STUDY_METRICS_INTERNAL_H
#define WISP_STUDY_METRICS_INTERNAL_H

#include "studies/study_metrics.h"

G_BEGIN_DECLS

typedef struct {
  sim_time_ps start, end;
  uint64_t bytes;          /* Chakra comm_size (communication); copy bytes (memory copy, when sized) */
  const char *name;        /* kernel name (compute and memory copy): the graph's string pool */
  int32_t n_ranks;         /* members of the communicator (communication); 1 = a sized copy */
  uint8_t kind;            /* study_act_kind */
  uint8_t kclass;          /* study_kernel_class (compute only) in bit 0; ACT_MOE, ACT_MEMSET */
  uint8_t op;              /* et_coll_type, ET_COLL_NONE for send/recv */
  uint8_t node_type;       /* et_node_type */
} act_iv;
/* A held interval: its times, the node and the timeline's number of the
 * node's graph (study_activity.graphs); the rest of act_iv is derived from
 * the node when the rank is read (study_activity_rank_ivs). */
typedef struct {
  sim_time_ps start, end;
  uint32_t node, graph;
} act_rec;
#define ACT_MOE 2u          /* an MoE kernel: expert compute, routing, dispatch/combine (study_is_moe_kernel) */
#define ACT_UNNAMED 8u      /* a compute kernel whose name matches no class rule (STUDY_KERNEL_UNCLASSIFIED) */
#define ACT_MEMSET 4u       /* a memset (left out of moe_fraction's kernel time, as the seed does) */

/* A kernel's launch grid as a share of the device's SMs, min(blocks /
 * SMs, 1), over [start, end) on the rank's graph clock. */
typedef struct {
  sim_time_ps start, end;
  double coverage;
} act_grid;

/* A device counter sample (NVLink throughput, %) at t on the graph clock. */
typedef struct {
  sim_time_ps t;
  double value;
} act_sample;

/* The spill file of a long timeline (study_act_spill.c): per-rank blocks
 * of act_rec in one unlinked temporary file, read back in writing order. */
typedef struct act_spill act_spill;
/* NULL when no temporary file can be created (the caller keeps memory). */
act_spill *study_spill_new(int n_ranks);
void study_spill_free(act_spill *s);
/* Appends n records of rank as one block; FALSE (nothing recorded) when
 * the write fails.  O(n) I/O. */
gboolean study_spill_write(act_spill *s, int rank, const act_rec *v, guint n);
/* Whether rank has records in the file (s may be NULL). */
gboolean study_spill_has(const act_spill *s, int rank);
/* Rank's records in writing order, gathered in the spill's own scratch
 * array (valid until the next call); NULL when the file cannot be read
 * back (study_spill_error then says why).  O(records) I/O. */
GArray *study_spill_read(act_spill *s, int rank);
const char *study_spill_error(const act_spill *s);

/* Rank r's intervals (act_iv) in the order they were added: ivs[r]
 * alone, or the spilled blocks then ivs[r], derived from their nodes into
 * a scratch array of a's, valid until the next call.  When the spill file
 * cannot be read back, ivs[r] alone, and study_activity_check fails the
 * metrics.  O(rank's intervals). */
GArray *study_activity_rank_ivs(const study_activity *a, int r);

struct study_activity {
  const et_workload *w;
  int n_ranks, steps;
  GArray **ivs;            /* per rank: act_rec (the part not in the spill file) */
  GPtrArray *graphs;       /* the graphs the records name (act_rec.graph) */
  GHashTable *graph_no;    /* graph -> its number + 1 */
  const et_graph *last_g;  /* the graph last added, and its number */
  uint32_t last_gno;
  GArray *scratch;         /* act_iv: the rank last read (study_activity_rank_ivs) */
  /* Bounded memory: once more than spill_at intervals are held, every
   * rank's intervals go to the spill file in blocks of spill_block. */
  act_spill *spill;        /* NULL until then, or when no file can be made */
  uint64_t held, spill_at;
  guint spill_block;
  gboolean spill_off;      /* the file failed: keep everything in memory */
  sim_time_ps *origin;     /* window start on the common clock */
  sim_time_ps *window;     /* window length */
  /* A replay's split of each rank's exposed communication (sim_rank_stats:
   * transfer, straggler wait, dependency wait; 3 per rank), set with the
   * replay windows; NULL for a measured trace, whose kernels include their
   * waiting and cannot be split. */
  sim_time_ps *comm_split;
  sim_replay_observer obs;
  sim_replay_observer next;
  GArray **grids;          /* per rank: act_grid; NULL until study_activity_add_grid */
  GArray **p2p;            /* per rank: act_sample; NULL until study_activity_add_p2p_sample */
  const char *grid_why;    /* why there are no grids (static text) */
  const char *p2p_why;     /* why there are no peer-to-peer samples (static text) */
  GHashTable *moe_names;   /* name pointer -> flag + 1: study_is_moe_kernel cached per pool string */
  GHashTable *comp_names;  /* name pointer -> kind | kclass << 8, + 1: a compute node's name classified once */
};

/* Sets m->mfu_pct and m->mfu_source from in (a card, or model FLOPs with a
 * peak) and m's average step time; NAN with the reason when unknown
 * (doc/metrics.md "MFU").  O(1). */
void study_metrics_mfu(study_metrics *m, const study_mfu_input *in);

G_END_DECLS
#endif
