/* cfg_card.h: a CCL-Bench workload card (`--card FILE`), parsed once, read
 * by each layer.
 *
 * A card is CCL-Bench's YAML job description (workload.model,
 * workload.data, workload.hardware, Model-executor.
 * model_plan_parallelization; ../shared/reference/studies.md §3) plus
 * wisp's MoE keys.  cfg_card_load parses it once into a document of its
 * scalar leaves, each under its dotted path with its line
 * ("workload.model.hidden_size" -> "7168", line 16); the commands load it
 * once per run and hand the document to the readers of its sections:
 *
 *   keys                                        read by
 *   Model-executor.model_plan_parallelization.  wisp_card_layout() (cli/wisp_load.h:
 *     {dp_replicate, dp_shard, tp, pp, cp, ep}  the layout of --scale; et_card)
 *   workload.model.{hidden_size, moe_top_k,     fe_card_from_doc() (frontends/fe.h:
 *     precision, moe_dispatch_precision,        sizes of communication kernels
 *     moe_routing}, workload.data.              without a size; fe_workload_card)
 *     {tokens_per_rank, batch_size, seq_len},
 *     workload.model.model_arch.{num_heads,
 *     head_dim}, ....ep / .tp, workload.
 *     hardware.xpu_spec.count_per_node
 *   workload.model.{phase, model_arch.*},       study_card_from_doc() (studies/
 *     workload.data.{batch_size, seq_len},      study_metrics.h: MFU; study_card)
 *     workload.hardware.xpu_spec.{model,
 *     total_count}
 *
 * Every other key is kept and ignored (CCL-Bench cards hold many more).
 * A key read by two readers (batch_size, seq_len, tp, ep, num_heads,
 * head_dim) is read by both with the same accessor, so it has one meaning
 * and one error.  Lists (bandwidth_gbps, metric sources) are recorded as
 * non-scalar nodes: a scalar accessor on one is an error.  An empty value
 * (`key:`, `~`, `null`) counts as absent.
 *
 * Errors are GErrors in WISP_ERROR: "FILE:LINE: KEY: what was wrong"
 * ("FILE: KEY: ..." for a key that is absent).  Cost: parsing O(nodes of
 * the file); lookups O(1) average (a hash of paths); the document holds
 * every leaf's path and value (tens of bytes per key).
 */
#ifndef WISP_CFG_CARD_H
#define WISP_CFG_CARD_H

#include "common/wisp_util.h"

G_BEGIN_DECLS

typedef struct cfg_card cfg_card;

/* Reads and parses a card.  Errors: unreadable file (WISP_ERROR_IO,
 * "FILE: cannot open the workload card: ..."), YAML syntax ("FILE:LINE:
 * malformed YAML: ..."), a root that is not a mapping, a key given twice
 * in one mapping.  The file is noted as an input (wisp_input_note). */
cfg_card *cfg_card_load(const char *path, GError **error);
/* The same from text; name prefixes messages. */
cfg_card *cfg_card_load_string(const char *text, const char *name, GError **error);
void cfg_card_free(cfg_card *c);

/* The file name given to the loader. */
const char *cfg_card_path(const cfg_card *c);
/* The value of a scalar leaf, NULL when absent, empty or not a scalar;
 * *line (if non-NULL) gets the line of the node (0 when absent). */
const char *cfg_card_get(const cfg_card *c, const char *key, int *line);
/* TRUE when key names a node (scalar, list or mapping) of the card, e.g.
 * "workload.model.model_arch". */
gboolean cfg_card_has(const cfg_card *c, const char *key);
/* Sets "FILE:LINE: KEY: message" (or "FILE: KEY: message" when key is not
 * in the card) with code; returns FALSE. */
gboolean cfg_card_fail(const cfg_card *c, const char *key, int code, GError **error, const char *fmt, ...)
  G_GNUC_PRINTF(5, 6);

/* The largest parallel degree a card may give (model_plan_parallelization.*),
 * for every reader of those keys. */
#define CFG_CARD_MAX_DEGREE (1 << 24)

/* Typed accessors.  Each returns FALSE (error set) when the key is present
 * with a bad value; when absent it returns TRUE with *found FALSE and *out
 * untouched; found may be NULL. */
/* A whole number in [1, max]. */
gboolean cfg_card_count(const cfg_card *c, const char *key, int64_t max, int64_t *out, gboolean *found,
                        GError **error);
/* A finite number >= 0 (model sizes are written as 8.03e9 as often as
 * 8030261248). */
gboolean cfg_card_number(const cfg_card *c, const char *key, double *out, gboolean *found, GError **error);
/* An element type: *name the card's spelling (owned by the card), *bytes
 * its size (cfg_precision_bytes). */
gboolean cfg_card_precision(const cfg_card *c, const char *key, const char **name, int *bytes, gboolean *found,
                            GError **error);
/* One of allowed (NULL-terminated); *out points into allowed. */
gboolean cfg_card_choice(const cfg_card *c, const char *key, const char *const *allowed, const char **out,
                         gboolean *found, GError **error);

/* Bytes per element of a card precision, case-insensitive: CCL-Bench's
 * bf16 / fp16 / fp32 / fp8, and the long spellings (bfloat16, float16,
 * half, float32, float, tf32, float8, e4m3, fp8_e4m3, fp8_e5m2, int8,
 * fp64, float64); 0 when unknown.  O(table). */
int cfg_precision_bytes(const char *name);

G_END_DECLS
#endif
