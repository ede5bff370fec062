/* et_share.h: ranks of a workload that share one graph (issue 18 part 2).
 *
 * Many ranks of a traced job replay the same graph up to their rank: a
 * ring's rank r sends to r+1 and receives from r-1, data-parallel ranks
 * issue the same collectives on the world or on their own (equally shaped)
 * groups.  Such ranks keep one graph.  Rank r that shares the graph of
 * rank c (its canonical rank, the lowest rank loaded with that graph)
 * issues c's communication records translated:
 *   - point-to-point peers are relative to the rank: peer = p + (r - c)
 *     mod ranks (-1 stays -1);
 *   - groups are mapped one to one: each group c names maps to a group of
 *     r with the same size (the world stays the world), and a root moves
 *     to the member at the same position in the mapped group;
 *   - everything else (sizes, tags, splits, buffer lifecycle) is c's.
 * A rank joins a shared graph only when this translation of every record
 * gives exactly its own record and everything else (nodes, edges, names,
 * attributes, counters, version) is equal, so whatever reads records
 * through et_workload_comm() sees exactly the unshared workload.
 *
 * The table keeps its own copy of the member lists of the groups that
 * are mapped to other groups (for roots), so it stays valid when the
 * workload's groups change (et_workload_scale moves it into the scaled job).
 *
 * Detection (et_share_offer) hashes the rank's graph with peers as deltas
 * and groups by size, then compares it field by field only with the
 * canonical graphs of equal hash: O(graph size) per rank, not O(ranks x
 * size).  Memory: per rank an int and a word; per canonical rank its
 * sorted list of groups; per sharing rank one group index per group its
 * graph names.
 */
#ifndef WISP_ET_SHARE_H
#define WISP_ET_SHARE_H

#include "chakra/et_graph.h"

G_BEGIN_DECLS

typedef struct et_share et_share;

/* An empty sharing table for a workload of n_ranks ranks (every rank its
 * own canonical rank until offered). */
et_share *et_share_new(int n_ranks);
/* Frees the table and the graphs it owns in ranks[] (those of canonical
 * ranks; ranks[] itself is the caller's).  ranks may be NULL (the graphs
 * are then the caller's). */
void et_share_free(et_share *s, et_graph **ranks);
/* Gives workload w a new sharing table (w->share) and makes it the owner
 * of w's graphs (w->free_graphs, w->graph_rank); et_share_detach takes the
 * table away again (the caller keeps it and the graphs). */
void et_share_attach(et_workload *w);
void et_share_detach(et_workload *w);

/* Offers rank r's freshly loaded graph w->ranks[r] (its groups resolved,
 * its point-to-point defaults filled in) for sharing.  When it equals an
 * earlier canonical graph up to the translation above, the rank's graph
 * is freed, w->ranks[r] points at the shared one and TRUE is returned;
 * otherwise r becomes a canonical rank.  w->share must be set and ranks
 * must be offered in increasing order.  O(graph size) expected. */
gboolean et_share_offer(et_workload *w, int r);
/* Rank r's file is byte for byte the file of rank c (c < r, offered):
 * gives r, without reading its file, the graph et_share_offer would give
 * it, when that is certain: c's records name no peer (so r's records are
 * c's), r is a member of every group they name (as
 * et_workload_resolve_rank requires) and c's canonical rank is the only
 * canonical graph of its hash (the only one et_share_offer would compare
 * r with).  FALSE (nothing changed): read and offer r as usual.  O(graph
 * records + sizes of the groups named). */
gboolean et_share_offer_same(et_workload *w, int r, int c);
/* Frees the detection tables once every rank has been offered. */
void et_share_seal(et_share *s);

/* Shares the graphs of an already built workload (every rank offered in
 * order); a workload already shared or scaled is left alone.  Returns the
 * number of distinct graphs. */
int et_workload_share(et_workload *w);

/* Rank whose graph rank r replays (r itself when it owns its graph). */
int et_share_canonical(const et_share *s, int r);
/* Distinct graphs (canonical ranks) among the ranks offered. */
int et_share_distinct(const et_share *s);
/* "N ranks share M distinct graphs" ("N traced ranks ..." when traced),
 * NULL when s is NULL or every rank has its own graph.  g_free the
 * result. */
char *et_share_summary(const et_share *s, gboolean traced);

/* Rank `rank`'s record c (a record of its canonical rank's graph)
 * translated into *tmp.  O(1) for sizes and peers; O(log groups of the
 * graph) for the group, plus O(group size) for a root. */
void et_share_translate(const et_share *s, int rank, const et_comm *c, et_comm *tmp);

G_END_DECLS
#endif
