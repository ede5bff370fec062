/* kineto_extract_internal.h: what the extraction's files share (not
 * installed): the per-file state and the helpers over it.
 * kineto_extract.c drives (kt_rank_extract), kineto_steps.c picks the
 * step window, kineto_comm.c classifies, sizes and groups the
 * communication, kineto_sync.c finds the cross-stream edges,
 * kineto_annot.c the ops' module paths, kineto_xutil.c holds the helpers
 * the others call; calls go from
 * kineto_extract.c down, never back. */
#ifndef WISP_KINETO_EXTRACT_INTERNAL_H
#define WISP_KINETO_EXTRACT_INTERNAL_H

#include "frontends/kineto_rank.h"
#include "frontends/kineto_mem.h"
#include "frontends/kineto_commreg.h"
#include "frontends/kineto_threads.h"

G_BEGIN_DECLS

/* The state of one extraction (kt_rank_extract). */
typedef struct {
  kt_trace *t;
  kt_rank *r;
  const fe_kineto_options *opt;
  int world;
  GHashTable *reg_cache;        /* kernel name string id -> registry entry (or &no_entry) */
  GHashTable *launch_by_corr;   /* correlation -> event index + 1 */
  GHashTable *record_by_corr;   /* correlation -> event index + 1 */
  GHashTable *cpu_by_ext;       /* External id -> CPU comm event index + 1 */
  GHashTable *cpu_by_thread;    /* (pid,tid) key -> GArray of CPU comm event indices sorted by ts */
  uint32_t *op_of_event;        /* event index -> op index or KT_NONE */
} kt_xctx;

/* Event i of the trace and its collective metadata (NULL when none). */
static inline const kt_event *kt_x_ev(const kt_trace *t, uint32_t i) { return &g_array_index(t->events, kt_event, i); }
static inline const kt_meta *kt_x_meta(const kt_trace *t, const kt_event *e)
{ return e->meta == KT_NONE ? NULL : &g_array_index(t->metas, kt_meta, e->meta); }

/* kineto_xutil.c: a new key of e's thread (g_free), event indices sorted
 * by (ts, file order), a warning of the rank ("rank R: ..."). */
gint64 *kt_x_thread_key(const kt_event *e);
void kt_x_sort_by_ts(const kt_trace *t, GArray *a);
void kt_x_rank_warn(kt_rank *r, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* What describe_comm found: a communication record, a kernel kept as
 * compute (counted and warned), or an error in *error.  Three values, so
 * that a fatal error cannot pass for a skip when the caller gives no
 * GError (error == NULL). */
typedef enum { KT_DESC_OK, KT_DESC_SKIP, KT_DESC_ERROR } kt_desc;

/* Chooses the window [*ws, *we) on the CPU timeline (*have FALSE: no
 * steps, or the whole trace asked for) and records the steps used. */
gboolean kt_x_choose_window(kt_xctx *c, sim_time_ps *ws, sim_time_ps *we, gboolean *have, GError **error);
/* Fills kind, size, dtype, group, seq, peers and splits of comm from the
 * kernel's args and its linked CPU ops, one helper per field above. */
kt_desc kt_x_describe_comm(kt_xctx *c, kt_comm *cm, const kt_event *k, const kt_event *launch, GError **error);
/* Cross-stream dependencies from record/wait pairs, cuda_sync events and
 * host synchronisation (see kineto.md §8); without cuda_sync events, the
 * waits the pairs cannot place are inferred from the timeline
 * (infer_wait_edges). */
void kt_x_sync_edges(kt_xctx *c);
/* kineto_annot.c: every op's module path (kt_rank.op_module, .modules):
 * the names of the annotation ranges (KT_EV_ANNOT) on its launch's CPU
 * thread that contain the launch's start, outermost first, joined by "/"
 * ("nn.Module: " dropped).  Ops without a launch, or launched outside
 * every range, have none.  O(A log A + n log n + n d) for A ranges, n ops
 * and nesting depth d. */
void kt_x_modules(kt_xctx *c);

G_END_DECLS
#endif
