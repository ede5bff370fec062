/* et_model_internal.h: what the files behind chakra/et_model.h share
 * (not installed).  et_model.c reads the layers and stages;
 * et_model_gemm.c gives the layer's GEMMs their roles and fits the kernel
 * floor from them; et_model_streams.c reads which transfers share the TP
 * collectives' stream (et_model.h says the rules); et_model_nodes.c holds
 * the node predicates they share; et_model_annot.c reads the layers out
 * of the module annotations.  et_model.c calls the other four; none of
 * them calls et_model.c. */
#ifndef WISP_ET_MODEL_INTERNAL_H
#define WISP_ET_MODEL_INTERNAL_H

#include "chakra/et_model.h"

G_BEGIN_DECLS

/* One GPU operation of a rank: its node and when it ran (a receive at its
 * end); et_model.c's lists of them are in time order. */
typedef struct {
  uint32_t node;
  sim_time_ps start;
} et_model_gop;

/* What the module annotations (et_graph_module) of ops[lo, hi) say of the
 * layers: the runs of consecutive operations in one layer instance
 * (et_model_annot.c names the layer classes), up to the first instance
 * seen again (the next micro-batch's). */
typedef struct {
  int n;                       /* layer instances (0: no operation names a layer) */
  int first;                   /* the first instance's first operation (index into ops), -1 none */
  int per;                     /* operations in the first instance */
  int annotated;               /* operations in the range with any module path */
  char *cls;                   /* the layer's class ("TransformerLayer"), g_free; NULL when n is 0 */
  const char *why;             /* static: why the instances cannot be the layers (lengths differ, other
                                  operations between them), NULL when they can */
} et_annot_layers;
void et_model_annot_layers(const et_graph *g, const GArray *ops, int lo, int hi, et_annot_layers *out);
/* Appends "<role> <count>" for every role (embedding, attention, mlp,
 * moe, output layer, loss, optimizer) the module paths of ops[lo, hi)
 * name, comma-separated ("no role named" when none). */
void et_model_annot_roles(const et_graph *g, const GArray *ops, int lo, int hi, GString *how);

/* The Megatron layer's GEMM shapes (et_model.h) on the layer's forward
 * and backward, at the traced sizes; FALSE (nothing set) when the layer
 * does not have four forward and eight backward GEMMs. */
gboolean et_model_gemm_roles(et_model *m, const et_model_card *c);

/* m->kernel_floor_ps: the card's kernel_floor_us when given, else the
 * intercept of the line through the GEMMs of known shape (roles: whether
 * et_model_gemm_roles found them) when it fits, else the card's default;
 * appends the "model: kernel floor" line to m->how. */
void et_model_fit_floor(et_model *m, const et_model_card *c, gboolean roles);

/* m->tp_queue from rank 0's graph g (et_model.h, "Streams"; next: the
 * second stage's first rank); appends a "model:" line when set.  Needs
 * m's layer forward and backward read.  Returns the tp_queue bits of
 * the directions g has pipeline transfers of with measured times (0:
 * nothing can be read).
 * O(nodes x parents + transfers x nodes). */
int et_model_read_tp_queue(et_model *m, const et_graph *g, const et_layout *l, const et_model_card *c, int next);

/* The card's pp_transfers_on_tp_stream where the trace shows no stream
 * (shown 0), else a warning when it disagrees on the directions shown
 * (et_model_streams.c). */
void et_model_card_tp_queue(et_model *m, const et_model_card *c, int shown);

/* The node predicates (et_model_nodes.c): a collective of a
 * data-parallel group (a gradient reduction), a collective of a group
 * spanning TP, a send or receive of a CP
 * group alone (the ring attention's), and names equal but for their
 * digits. */
gboolean et_model_dp_coll(const et_graph *g, const et_layout *l, uint32_t i);
gboolean et_model_tp_coll(const et_graph *g, const et_layout *l, uint32_t i);
gboolean et_model_cp_p2p(const et_graph *g, const et_layout *l, uint32_t i);
gboolean et_model_name_eq(const char *a, const char *b);

G_END_DECLS
#endif
