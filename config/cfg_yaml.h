/* cfg_yaml.h: strict reading of a config document's YAML tree, for the
 * layer whose section is a tree (the topology: dims, graph, placement).
 *
 * A cfg_reader walks the tree of one cfg_doc (libyaml's document API) and
 * reports the first problem as a GError "FILE:LINE: message" (or "FILE:
 * message" without a node).  Every helper returns FALSE after setting the
 * error, so a parser is a chain of `if (!cfg_...) return FALSE;`.  The
 * message texts are part of wisp's interface (tests and users match them):
 * change them only on purpose.  Costs: cfg_check_keys is O(keys *
 * allowed), lookups O(keys of the mapping), the rest O(1).
 */
#ifndef WISP_CFG_YAML_H
#define WISP_CFG_YAML_H

#include "config/cfg.h"

#include <yaml.h>

G_BEGIN_DECLS

typedef struct {
  const char *src;        /* file name for messages */
  yaml_document_t *doc;
  GError **error;
} cfg_reader;

/* A reader over d's tree and its root mapping; FALSE (no error) when d has
 * no tree (an edited settings-only document). */
gboolean cfg_reader_init(cfg_reader *r, const cfg_doc *d, GError **error, yaml_node_t **root);

int cfg_line(const yaml_node_t *n);
yaml_node_t *cfg_node(const cfg_reader *r, int id);
/* The text of a scalar node, NULL for anything else (or NULL). */
const char *cfg_scalar(const yaml_node_t *n);
/* "a scalar", "a list", "a mapping" or "empty", for messages. */
const char *cfg_node_type_name(const yaml_node_t *n);
/* Sets "SRC:LINE: message" (n non-NULL) or "SRC: message"; returns FALSE. */
gboolean cfg_fail(const cfg_reader *r, const yaml_node_t *n, int code, const char *fmt, ...) G_GNUC_PRINTF(4, 5);

/* map must be a mapping whose keys are plain names from allowed
 * (NULL-terminated), each at most once; where names it in messages. */
gboolean cfg_check_keys(const cfg_reader *r, const yaml_node_t *map, const char *where,
                        const char *const *allowed);
/* The value of key in map, or NULL. */
yaml_node_t *cfg_lookup(const cfg_reader *r, const yaml_node_t *map, const char *key);
/* As cfg_lookup, but a missing key is an error. */
gboolean cfg_need(const cfg_reader *r, const yaml_node_t *map, const char *key, const char *where,
                  yaml_node_t **out);
/* Typed values of key in where: a non-empty scalar, a whole number in
 * [min, max], a finite number, a bandwidth or a time with units. */
gboolean cfg_need_scalar(const cfg_reader *r, const yaml_node_t *v, const char *key, const char *where,
                         const char **out);
gboolean cfg_read_int(const cfg_reader *r, const yaml_node_t *v, const char *key, const char *where, long min,
                      long max, int *out);
gboolean cfg_read_double(const cfg_reader *r, const yaml_node_t *v, const char *key, const char *where,
                         double *out);
gboolean cfg_read_bw(const cfg_reader *r, const yaml_node_t *v, const char *key, const char *where,
                     wisp_bw_Bps *out);
gboolean cfg_read_time(const cfg_reader *r, const yaml_node_t *v, const char *key, const char *where,
                       sim_time_ps *out);

G_END_DECLS
#endif
