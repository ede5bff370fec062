/* wisp_repart.h: the workload card's model and hardware for
 * re-partitioning (chakra/et_model.h, chakra/et_repart.h; issue 32). */
#ifndef WISP_CLI_REPART_H
#define WISP_CLI_REPART_H

#include "chakra/et_repart.h"
#include "config/cfg_card.h"

G_BEGIN_DECLS

/* Fills out from the card and the traced layout l (tp, pp, dp degrees).
 * Keys the model reader needs but the card lacks are listed in
 * out->missing (not an error here: et_model_read names them).  FALSE on a
 * bad value.  Free with et_model_card_clear. */
gboolean wisp_card_model(const cfg_card *card, const et_layout *l, et_model_card *out, GError **error);

/* --scale with tp=, pp=, mb= or sched=: reads the model of w (layout l,
 * card) and builds the re-partitioned job; prints what was identified
 * and assumed on stderr unless quiet.  Consumes w. */
et_workload *wisp_repartition(et_workload *w, const et_layout *l, const cfg_card *card, const et_scale_request *rq,
                              gboolean quiet, GError **error);

G_END_DECLS
#endif
