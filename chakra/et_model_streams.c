/* et_model_streams.c: which pipeline transfers a traced rank 0 runs on
 * one stream with its TP collectives (et_model.h, "Streams";
 * et_model.tp_queue), read from the graph's edges and measured times.
 * Called by et_model.c once the layer's forward and backward are read;
 * uses only the node predicates of et_model_nodes.c.
 */
#include "config.h"
#include "chakra/et_model_internal.h"

/* Parent k of node i on its stream: the parent itself, or the parent of
 * an idle node standing between them (kineto_graph.c puts the measured
 * idle after a stream predecessor in one). */
static uint32_t through_idle(const et_graph *g, uint32_t k)
{
  uint32_t p = ET_EDGE_INDEX(g->parent_edges[k]);
  if ((g->nodes[p].flags & ET_FLAG_DELAY) && !(g->nodes[p].flags & ET_FLAG_CPU_OP) && et_node_n_parents(g, p) > 0)
    p = ET_EDGE_INDEX(g->parent_edges[g->nodes[p].parents]);
  return p;
}

#define tp_coll et_model_tp_coll

/* Whether kernel name nm is the layer's forward's only (1), its
 * backward's only (2) or neither (0). */
static int layer_side(const et_model *m, const char *nm)
{
  int in[2] = {0, 0};
  for (int s = 0; s < 2; s++) {
    const et_mseq *q = s ? &m->layer_bwd : &m->layer_fwd;
    for (int i = 0; i < q->n && !in[s]; i++)
      in[s] = et_model_name_eq(q->ops[i].name, nm);
  }
  return in[0] == in[1] ? 0 : in[0] ? 1 : 2;
}

/* The side of the kernels transfer i waits for (a send: its parents) or
 * that wait for it (a receive: its children), through an idle node: 1
 * forward, 2 backward, 0 unknown. */
static int transfer_side(const et_model *m, const et_graph *g, uint32_t i, gboolean send)
{
  uint32_t lo = send ? g->nodes[i].parents : g->nodes[i].children;
  uint32_t hi = send ? g->nodes[i + 1].parents : g->nodes[i + 1].children;
  for (uint32_t k = lo; k < hi; k++) {
    uint32_t p = send ? through_idle(g, k) : g->child_index[k];
    if (!send && (g->nodes[p].flags & ET_FLAG_DELAY) && et_node_n_children(g, p) > 0)
      p = g->child_index[g->nodes[p].children];
    int side = g->nodes[p].type == ET_NODE_COMP ? layer_side(m, et_node_name(g, p)) : 0;
    if (side)
      return side;
  }
  return 0;
}

/* Rank 0's pipeline transfer i: 1 an activation's send (to the next
 * stage), 2 an activation's receive (from the last), 3 a gradient's send,
 * 4 a gradient's receive (from the next), 0 not one.  Interleaved over 2
 * stages the next stage is also the last, so the layer side of the
 * kernels around the transfer decides (a send after forward kernels
 * carries activations). */
static int p2p_dir(const et_model *m, const et_graph *g, const et_layout *l, const et_model_card *c, uint32_t i,
                   int next)
{
  et_node_type t = (et_node_type)g->nodes[i].type;
  if ((t != ET_NODE_COMM_SEND && t != ET_NODE_COMM_RECV) || et_model_cp_p2p(g, l, i))
    return 0;
  const et_comm *cm = et_node_comm(g, i);
  gboolean send = t == ET_NODE_COMM_SEND, to_next = send ? cm->dst == next : cm->src == next;
  int side = c->sched == ET_SCHED_INTERLEAVED && c->pp == 2 ? transfer_side(m, g, i, send) : 0;
  gboolean act = side ? side == 1 : send == to_next;
  return (act ? 1 : 3) + !send;
}

/* Whether rank 0's TP collectives share a stream with its activation or
 * gradient transfers (et_model.tp_queue): a TP collective right after
 * such a transfer in the graph, or such a transfer right after a TP
 * collective, and no transfer of that direction overlapping a TP
 * collective in measured time.  next: the second stage's first rank.
 * O(nodes x parents + transfers x nodes). */
int et_model_read_tp_queue(et_model *m, const et_graph *g, const et_layout *l, const et_model_card *c, int next)
{
  int shown = 0;
  for (uint32_t i = 0; i < g->n_nodes; i++)
    if (g->nodes[i].flags & ET_FLAG_HAS_START)
      shown |= (1 << p2p_dir(m, g, l, c, i, next)) & 30;
  for (uint32_t i = 0; i < g->n_nodes; i++)
    for (uint32_t k = g->nodes[i].parents; k < g->nodes[i + 1].parents; k++) {
      uint32_t p = through_idle(g, k);
      if (tp_coll(g, l, i))
        m->tp_queue |= 1 << p2p_dir(m, g, l, c, p, next);
      else if (tp_coll(g, l, p))
        m->tp_queue |= 1 << p2p_dir(m, g, l, c, i, next);
    }
  m->tp_queue &= 30;
  /* A cross-stream edge (an event) links them too: transfers on another
   * stream overlap some TP collective in time, one stream's never do.
   * Without measured times (a Chakra ET: its edges are dependencies, not
   * streams) nothing shows a stream, and nothing is shared. */
  for (uint32_t i = 0; m->tp_queue && i < g->n_nodes; i++) {
    int dir = p2p_dir(m, g, l, c, i, next);
    if (!dir || !(m->tp_queue & (1 << dir)))
      continue;
    if (!(g->nodes[i].flags & ET_FLAG_HAS_START)) {
      m->tp_queue &= ~(1 << dir);
      continue;
    }
    sim_time_ps b = g->nodes[i].start_ps, e = b + g->nodes[i].duration_ps;
    for (uint32_t k = 0; k < g->n_nodes; k++)
      if (tp_coll(g, l, k) && (!(g->nodes[k].flags & ET_FLAG_HAS_START) ||
                               (g->nodes[k].start_ps < e && b < g->nodes[k].start_ps + g->nodes[k].duration_ps))) {
        m->tp_queue &= ~(1 << dir);
        break;
      }
  }
  static const char *const what[] = {"", "activation sends", "activation receives", "gradient sends",
                                     "gradient receives"};
  if (!m->tp_queue)
    return shown;
  g_string_append(m->how, "model: rank 0's TP all-reduces share a stream with its");
  for (int k = 1; k <= 4; k++)
    if (m->tp_queue & (1 << k))
      g_string_append_printf(m->how, " %s", what[k]);
  g_string_append(m->how, " (one queue, in issue order): the new job queues them with that direction's "
                             "transfers\n");
  return shown;
}

/* The card's pp_transfers_on_tp_stream (c->tp_stream: 0 absent, 1 none,
 * 2 activations, 3 gradients, 4 both) where the trace cannot show the
 * streams (shown 0: one stage, or transfers without measured times):
 * sets m->tp_queue to the sends and receives of that direction.  Where
 * the trace shows transfers (shown: the et_model.tp_queue bits of the
 * directions rank 0 has with measured times), the trace's reading stays
 * and a card that says otherwise of those directions is named.  O(1). */
void et_model_card_tp_queue(et_model *m, const et_model_card *c, int shown)
{
  static const int bits[] = {0, 0, 2 | 4, 8 | 16, 2 | 4 | 8 | 16};
  static const char *const name[] = {"", "none", "activations", "gradients", "both"};
  if (shown) {
    if (c->tp_stream && (bits[c->tp_stream] & shown) != (m->tp_queue & shown))
      g_string_append_printf(m->how, "model: warning: the card's pp_transfers_on_tp_stream (%s) is not what rank 0's "
                             "trace shows; the trace's streams are used\n", name[c->tp_stream]);
    return;
  }
  if (!c->tp_stream) {
    g_string_append(m->how, "model: the trace shows no pipeline transfer with measured times, so not whether the "
                            "TP collectives share their stream with them: the new job gives each its own queue "
                            "(the card's pp_transfers_on_tp_stream: activations, gradients or both says otherwise)\n");
    return;
  }
  m->tp_queue = bits[c->tp_stream];
  g_string_append_printf(m->how, "model: the trace shows no pipeline transfer with measured times; the card's "
                         "pp_transfers_on_tp_stream %s: the new job queues the TP collectives with %s\n",
                         name[c->tp_stream], c->tp_stream == 1 ? "no transfer (queues of their own)"
                         : c->tp_stream == 2 ? "the activation transfers" : c->tp_stream == 3
                         ? "the gradient transfers" : "the activation and gradient transfers");
}
