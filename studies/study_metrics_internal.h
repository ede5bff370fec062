/* study_metrics_internal.h: what the files of the metric catalog share
 * (study_activity.c fills the timeline, study_metrics.c reads it,
 * study_mfu.c gives MFU); not part of the library's surface.
 *
 * The timeline keeps one 40-byte record per GPU interval (act_iv), per
 * rank, with each rank's window on the common clock.
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
  uint8_t kclass;          /* study_kernel_class (compute only) */
  uint8_t op;              /* et_coll_type, ET_COLL_NONE for send/recv */
  uint8_t node_type;       /* et_node_type */
} act_iv;

struct study_activity {
  const et_workload *w;
  int n_ranks, steps;
  GArray **ivs;            /* per rank: act_iv */
  sim_time_ps *origin;     /* window start on the common clock */
  sim_time_ps *window;     /* window length */
  sim_replay_observer obs;
  sim_replay_observer next;
};

/* Sets m->mfu_pct and m->mfu_source from in (a card, or model FLOPs with a
 * peak) and m's average step time; NAN with the reason when unknown
 * (doc/metrics.md "MFU").  O(1). */
void study_metrics_mfu(study_metrics *m, const study_mfu_input *in);

G_END_DECLS
#endif
