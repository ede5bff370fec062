/* coll_system.h: an ASTRA-sim system file (system.json, the file given to
 * ASTRA-sim as --system-configuration) read as wisp collectives settings.
 *
 * What maps onto wisp (doc/topology.md, "ASTRA-sim system.json"):
 *   all-reduce-implementation, all-gather-implementation,
 *   reduce-scatter-implementation, all-to-all-implementation
 *       -> collectives.all_reduce, .all_gather, .reduce_scatter,
 *          .all_to_all: one algorithm per network dimension, in order
 *          ("ring", "doubleBinaryTree", "halvingDoubling", "direct",
 *          and the one* forms, which wisp runs on that dimension);
 *   preferred-dataset-splits -> collectives.chunks (1 to 1024);
 *   collective-optimization "localBWAware" -> wisp's own composition of
 *       a multi-dimension all-reduce (reduce-scatter, all-reduce,
 *       all-gather), so nothing to set; "baseline" is named as ignored.
 * Every other key is kept by name with the reason wisp ignores it
 * (scheduling-policy, endpoint-delay, active-chunks-per-dimension,
 * local-mem-bw, boost-mode, roofline keys, custom implementations, and
 * any key this reader does not know), so a caller can say them in one
 * line.  Values are checked: an unknown algorithm, an algorithm not
 * defined for its collective, a split count out of range, a key given
 * twice or malformed JSON are errors (WISP_ERROR) naming the file, the
 * byte offset and what to write instead.
 *
 * Cost: one pass over the file, O(its size); the file is small (tens of
 * keys).  The result owns its strings.
 */
#ifndef WISP_COLL_SYSTEM_H
#define WISP_COLL_SYSTEM_H

#include "common/wisp_util.h"

G_BEGIN_DECLS

typedef struct {
  char *key;        /* the wisp setting: "collectives.all_reduce", "collectives.chunks" */
  char *value;      /* its value: "ring,double_binary_tree", "4" */
  char *from;       /* the system.json key it came from */
  int n_dims;       /* entries of a per-dimension list, 0 for a scalar */
  uint64_t offset;  /* byte offset of the value in the file */
} coll_system_setting;

typedef struct {
  char *source;          /* the file, for messages */
  GPtrArray *settings;   /* coll_system_setting *, in file order */
  GPtrArray *ignored;    /* char *: "KEY (reason)", in file order */
  GPtrArray *notes;      /* char *: differences of meaning worth saying */
} coll_system;

/* Reads path; NULL with error set on any problem (see the top comment). */
coll_system *coll_system_load(const char *path, GError **error);
void coll_system_free(coll_system *s);

/* "collectives.all_reduce = double_binary_tree (all-reduce-implementation),
 * ..." (g_free); "nothing" when no key maps. */
char *coll_system_applied(const coll_system *s);
/* The ignored keys as "a (why), b (why)" (g_free); NULL when none. */
char *coll_system_ignored(const coll_system *s);

G_END_DECLS
#endif
