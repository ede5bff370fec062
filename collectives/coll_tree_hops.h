/* coll_tree_hops.h: the tree replay's table of rank pairs (issue 30),
 * internal to collectives/ (coll_tree_hops.c; used by coll_fast_tree.c,
 * freed by coll_rt.c).
 *
 * The rank pairs the tree replay has sent over, on the runtime
 * (coll_rt.tree_hops), kept from run to run: a chunked run sends every
 * chunk over the same pairs, and a job repeats its groups.  Per pair its
 * route (topo_route's, valid while the topology is), whether it leaves
 * the scale-up domain (streamed runs inflate by tier), its class and the
 * replay that last checked its links (coll_fast_link_use) - 32 bytes.  A
 * class is one prepared hop (net_hop_init) standing for every pair whose
 * hop is alike (net_hop_alike: same links count, latency, rate, capacity
 * and bandwidth at each position, so net_hop_at over the pair's route
 * charges exactly what the pair's own hop would, and the division it
 * caches depends only on the size and the capacity): a job's pairs fall
 * in a few classes.  An exact table: pairs in order of first use and an
 * index by pair (open addressing, linear probing, at most half full)
 * holding pair number + 1; emptied when it would pass TREE_HOPS_MAX pairs
 * (about 5 MB).  (A direct-mapped cache of 4,096 96-byte hops thrashed
 * once a run's pairs outnumbered it: NCCL's tree over 1,024 ranks of
 * dgx-h100 cycles through 5,072 pairs, and 43,848 of its 130,944
 * transfers prepared their hop again.) */
#ifndef WISP_COLL_TREE_HOPS_H
#define WISP_COLL_TREE_HOPS_H

#include "collectives/coll_run.h"

G_BEGIN_DECLS

typedef struct {
  int src, dst;
  const uint32_t *route;
  uint32_t n_links, cls;
  uint32_t stamp;     /* the replay (tree_hops.run) that checked its links, 0 = none */
  gboolean inter;
} tree_pair;

struct tree_hops {
  tree_pair *v;
  uint32_t len, cap;
  uint32_t *index;
  uint32_t mask;      /* index size - 1 */
  net_hop *cls;       /* the classes: n_cls of cap_cls */
  uint32_t n_cls, cap_cls;
  uint32_t run;       /* the current full replay's number (coll_tree_hops_new_run) */
};

/* A new number for a full replay (tree_hops.run), so that a pair's links
 * are checked once per replay (every pair unchecked when the number
 * wraps); makes the table on first use.  O(1), O(pairs) on a wrap. */
void coll_tree_hops_new_run(coll_rt *c);
/* The pair from rank a to rank b, filed when new.  O(1) expected on a
 * pair seen, O(route length) amortized on a new one.  The pointer is
 * valid until the next call. */
tree_pair *coll_tree_pair_of(coll_rt *c, int a, int b);
/* Pair p's prepared hop: its class's, over p's route (valid until the
 * next call).  O(1). */
net_hop *coll_tree_pair_hop(coll_rt *c, const tree_pair *p);

G_END_DECLS

#endif
