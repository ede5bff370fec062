/* kineto_graph_internal.h: what the per-rank graph construction
 * (kineto_graph.c) and its host launch model (kineto_host.c) share; not
 * installed.  The graph calls the host model, never the other way. */
#ifndef WISP_KINETO_GRAPH_INTERNAL_H
#define WISP_KINETO_GRAPH_INTERNAL_H

#include "frontends/kineto_graph.h"
#include "frontends/kineto_threads.h"

G_BEGIN_DECLS

/* Appends a node (returns its index) or an edge (none when either end
 * is KT_NONE) to a rank's kt_graph. */
static inline uint32_t kt_graph_add_node(kt_graph *g, et_node_type type, uint8_t flags, sim_time_ps dur, sim_time_ps start,
                                                uint32_t op, const char *name)
{
  kt_node n = { (uint8_t)type, flags, dur, start, op, name };
  g_array_append_val(g->nodes, n);
  return g->nodes->len - 1;
}

static inline void kt_graph_add_edge(kt_graph *g, uint32_t parent, uint32_t child)
{
  if (parent == KT_NONE || child == KT_NONE)
    return;
  kt_edge e = { parent, child };
  g_array_append_val(g->edges, e);
}

typedef struct {
  uint32_t node;
  sim_time_ps end;
} chain_end;

/* Builds the CPU chains.  anchor[i] / anchor_t[i]: the CPU node a GPU op
 * waits for and the measured time it ends (its launch start); waits: pairs
 * (op, sync node) for the edges op -> sync, added once the op nodes exist;
 * ends: each thread's last node and its measured end.  The thread of the
 * step marker gets a last CPU node up to the marker's end: the host work
 * after its last runtime call (an optimizer's Python, logging) is part of
 * the step and keeps its measured length.  Then the joins between threads
 * are inferred (infer_joins). */
void kt_host_chains(kt_graph *g, const kt_rank *r, sim_time_ps min_gap_ps, uint32_t *anchor,
                        sim_time_ps *anchor_t, GArray *waits, GArray *ends);

G_END_DECLS
#endif
