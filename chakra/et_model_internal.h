/* et_model_internal.h: what the files behind chakra/et_model.h share
 * (not installed).  et_model.c reads the layers and stages;
 * et_model_gemm.c gives the layer's GEMMs their roles and fits the kernel
 * floor from them; et_model_streams.c reads which transfers share the TP
 * collectives' stream (et_model.h says the rules); et_model_nodes.c holds
 * the node predicates they share.  et_model.c calls the other three;
 * none of them calls et_model.c. */
#ifndef WISP_ET_MODEL_INTERNAL_H
#define WISP_ET_MODEL_INTERNAL_H

#include "chakra/et_model.h"

G_BEGIN_DECLS

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
 * m's layer forward and backward read.  O(nodes x parents + transfers x
 * nodes). */
void et_model_read_tp_queue(et_model *m, const et_graph *g, const et_layout *l, const et_model_card *c, int next);

/* The node predicates (et_model_nodes.c): a collective of a
 * data-parallel group (a gradient reduction), a send or receive of a CP
 * group alone (the ring attention's), and names equal but for their
 * digits. */
gboolean et_model_dp_coll(const et_graph *g, const et_layout *l, uint32_t i);
gboolean et_model_cp_p2p(const et_graph *g, const et_layout *l, uint32_t i);
gboolean et_model_name_eq(const char *a, const char *b);

G_END_DECLS
#endif
