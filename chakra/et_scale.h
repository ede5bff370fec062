/* et_scale.h: a traced job's parallel layout, and the larger job built
 * from it by growing its data-parallel dimension (issue 18 part 1).
 *
 * Layout.  Every communicator group of a workload is classified by the
 * parallel dimensions it spans (tensor, context, expert, pipeline, data):
 * first from its description or name (torchtitan's mesh_tp, mesh_dp,
 * dp_shard_cp, Megatron's tp/dp/pp/ep, ...: words split on
 * non-alphanumerics), else from a CCL-Bench workload card (dp_replicate,
 * dp_shard, tp, pp, cp, ep) by the coordinates its members differ in
 * under torchtitan's mesh order (pp outermost, then dp_replicate,
 * dp_shard, cp, tp innermost); a group of all ranks without a name is
 * the world.  Degrees come from the card, else from the classified
 * groups' sizes, the data-parallel (or else pipeline) degree being the
 * factor of the world the other degrees leave.
 *
 * Scaling.  `--scale dp=N` makes the data-parallel degree N, a multiple K
 * of the traced degree D: the new job is K replicas of the traced world.
 * Rank r of the new job replays the graph of its counterpart c(r) in the
 * trace; the graph is shared, never copied, so memory grows with the
 * ranks' replay state only.  Groups that do not span the data-parallel
 * dimension (TP, PP, CP, EP inside a replica) are replicated once per
 * replica; groups that span it (DP, FSDP shards, the world) grow K-fold.
 * Collective sizes in grown groups follow the parallelism: all-reduce,
 * reduce-scatter (comm_size = whole input), all-to-all (each rank's send
 * buffer: its tokens, now spread over more expert holders) and
 * broadcast/reduce keep their Chakra comm_size; all-gather, gather and
 * scatter (comm_size = each rank's piece) keep the whole size S, so each
 * member's piece becomes comm_size / K, rounded up.  All-to-all-v on a
 * grown group is refused (its per-peer table names the traced members).
 * Placement: "outer" (default) numbers replica k's ranks k*n .. k*n+n-1,
 * keeping the trace's own placement inside a replica (TP in the scale-up
 * domain first, then PP, when the trace was so numbered), DP across
 * replicas; "inner" puts a traced rank's K replicas on consecutive ranks
 * (DP first).  tp, pp and micro-batch changes re-partition the model: the
 * job is rebuilt from the model read out of the trace and card
 * (chakra/et_model.h, chakra/et_repart.h); cp and ep are refused with
 * what is missing.
 */
#ifndef WISP_ET_SCALE_H
#define WISP_ET_SCALE_H

#include "chakra/et_graph.h"
#include "chakra/et_share.h"

G_BEGIN_DECLS

typedef enum { ET_DIM_TP = 0, ET_DIM_CP, ET_DIM_EP, ET_DIM_PP, ET_DIM_DP, ET_N_DIMS } et_dim;
#define ET_DIM_BIT(d) (1u << (d))
#define ET_DIM_WORLD_BIT (1u << 7)   /* a group of all ranks that names no dimension */
const char *et_dim_name(et_dim d);   /* "tp", "cp", "ep", "pp", "dp" */

/* A CCL-Bench workload card's parallel sizes (0 = absent). */
typedef struct {
  int dp_replicate, dp_shard, tp, pp, cp, ep;
  char *source;                      /* the card's path (g_free) */
  gboolean none;                     /* the card gives no parallel size at all */
} et_card;

typedef struct {
  int degree[ET_N_DIMS];             /* 0 = unknown */
  char *from[ET_N_DIMS];             /* how each degree was found (g_free) */
  int n_groups;
  uint8_t *group_dims;               /* per group: ET_DIM_BIT(d) bits, ET_DIM_WORLD_BIT, 0 = unknown */
  gboolean tp_contiguous;            /* every TP group is a run of consecutive ranks */
} et_layout;

/* Infers w's layout (card may be NULL).  An error when the card's degrees
 * do not multiply to the workload's ranks.  O(groups x members). */
gboolean et_layout_infer(const et_workload *w, const et_card *card, et_layout *out, GError **error);
void et_layout_clear(et_layout *l);
/* Appends "layout: ..." lines: degrees, where each came from, the groups
 * per kind (count, size, stride), and the unknown ones. */
void et_layout_describe(const et_layout *l, const et_workload *w, GString *out);

typedef enum { ET_PLACE_OUTER = 0, ET_PLACE_INNER } et_placement;

typedef struct {
  int dp;                            /* new data-parallel degree; 0 = no scaling */
  et_placement placement;
  /* Re-partitioning (chakra/et_repart.h, issue 32): new tensor and
   * pipeline degrees, micro-batch count (0 = as traced) and schedule
   * (-1 = as the card says; et_sched values). */
  int tp, pp, mb, sched;
  int ep;                            /* expert-parallel degree (0 = as traced) */
  int mbs;                           /* sequences per micro-batch (0 = from the count) */
  int vpp;                           /* interleaved 1F1B's layer chunks per rank (0 = the card's or 2) */
  int cp;                            /* context-parallel degree (0 = as traced) */
} et_scale_request;

/* Parses "KEY=V[,KEY=V...]": dp=N, tp=N, pp=N, mb=N (N >= 1) and
 * sched=gpipe|1f1b|interleaved_1f1b, ep=N, cp=N, mbs=N, vpp=N.
 * NULL or "" leaves everything 0 (sched -1).  Only dp alone is the
 * data-parallel scaling above; any other key asks for a re-partitioned
 * job (et_repart.h), which needs a workload card. */
gboolean et_scale_parse(const char *spec, et_scale_request *rq, GError **error);
/* "outer" or "inner" (NULL = outer). */
gboolean et_placement_parse(const char *s, et_placement *out, GError **error);

/* Builds the scaled job from w and its layout.  On success w's graphs
 * move into the result (w is freed) and the result is returned; on
 * failure w is untouched and NULL is returned with an error naming the
 * problem and what to do.  O(traced nodes + new ranks + new group members). */
et_workload *et_workload_scale(et_workload *w, const et_layout *l, const et_scale_request *rq, GError **error);

/* The translation a scaled workload carries (opaque outside et_scale.c). */
typedef struct et_scale et_scale;
void et_scale_free(et_scale *s);
int et_scale_traced_ranks(const et_scale *s);
/* Traced counterpart and replica index of new rank r: O(1). */
int et_scale_counterpart(const et_scale *s, int r);
int et_scale_replica(const et_scale *s, int r);
/* The lines of the scaled run's report: what was scaled, the placement,
 * the size rules and the counts of grown and replicated groups. */
const char *et_scale_summary(const et_scale *s);
/* The traced workload's graph sharing (chakra/et_share.h), or NULL. */
const struct et_share *et_scale_share(const et_scale *s);

/* Record c of new rank `rank`'s traced counterpart (after the
 * counterpart's sharing translation) translated into *tmp for the rank's
 * replica: group index, peers, root and size.  O(1). */
void et_scale_translate(const et_scale *s, int rank, const et_comm *c, et_comm *tmp);

G_END_DECLS
#endif
