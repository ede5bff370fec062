/* et_model_internal.h: what the files behind chakra/et_model.h share
 * (not installed).  et_model.c reads the layers, stages and streams;
 * et_model_gemm.c gives the layer's GEMMs their roles and fits the kernel
 * floor from them (et_model.h says the rules); et_model_gemm.c calls
 * nothing in et_model.c. */
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

G_END_DECLS
#endif
