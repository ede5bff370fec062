/* topo.h: resolved physical topologies.
 *
 * A topology is a directed graph of nodes (endpoints that hold ranks, and
 * switches) joined by links.  Every link is one direction of a cable: a
 * full-duplex cable is two links.  Each link has a bandwidth in bytes/s, a
 * latency in picoseconds and the tier (dimension) it belongs to.  Ranks are
 * placed on endpoints (node-contiguous by default, or an explicit map).
 *
 * Topologies come from wisp's versioned YAML (hierarchical dimensions with
 * named tiers, or an explicit graph) or from ASTRA-sim's network.yml: the
 * config layer parses the file once into a document (config/cfg.h) and
 * topo_from_config() reads its topology section (format: doc/topology.md).
 * The settings of the layers above (net model, collectives, library) stay
 * in the document; the topology keeps a reference to it (topo_config()).  Routing is
 * deterministic: hierarchical topologies use dimension-order routing
 * (innermost dimension first, each along its kind's shortest path; a pair
 * that differs in several dimensions pays every tier it crosses); explicit
 * graphs use shortest paths by hop count, ties broken by a stable ECMP hash
 * of (src, dst).
 */
#ifndef WISP_TOPO_H
#define WISP_TOPO_H

#include "common/wisp_util.h"
#include "config/cfg.h"

G_BEGIN_DECLS

typedef struct topo topo;

typedef enum {
  TOPO_KIND_RING_UNI,
  TOPO_KIND_RING,          /* bidirectional ring */
  TOPO_KIND_FULLY_CONNECTED,
  TOPO_KIND_SWITCH,
  TOPO_KIND_TORUS2D,
  TOPO_KIND_TORUS3D,
  TOPO_KIND_FAT_TREE,      /* two-level leaf/spine */
  TOPO_KIND_GRAPH,         /* explicit graph */
} topo_kind;

const char *topo_kind_name(topo_kind k);

typedef struct {
  uint32_t src, dst;       /* topology node indices */
  wisp_bw_Bps bw;          /* bytes per second */
  sim_time_ps latency;     /* per traversal */
  uint16_t tier;           /* dimension index */
} topo_link;

/* Builds the topology of a config document (its dims/graph, node_dims,
 * ranks and placement, or ASTRA-sim's lists).  Errors name the file, line
 * and key.  The topology holds a reference to doc (topo_config). */
topo *topo_from_config(const cfg_doc *doc, GError **error);
/* topo_from_config with a tighter bound on the directed links (see
 * topo_load_string_bounded). */
topo *topo_from_config_bounded(const cfg_doc *doc, uint64_t max_links, GError **error);
/* The document the topology was built from, for the layers above that
 * read their own sections (net_settings_from_config, coll_policy_from_config);
 * NULL for a topology built otherwise. */
const cfg_doc *topo_config(const topo *t);

/* cfg_load + topo_from_config: loads a wisp YAML or ASTRA-sim network.yml
 * file (detected by its keys).  Errors name the file, line and key. */
topo *topo_load(const char *path, GError **error);
topo *topo_load_string(const char *text, const char *source_name, GError **error);
/* topo_load_string with a tighter bound on the directed links (1 to the
 * default 2^24, checked from the closed forms before anything is built;
 * WISP_ERROR_LIMIT past it), for callers with a smaller memory or time
 * budget such as the fuzzing harness.  Bounding the links also bounds the
 * endpoints of any dimension larger than 1. */
topo *topo_load_string_bounded(const char *text, const char *source_name, uint64_t max_links, GError **error);
void topo_free(topo *t);

int topo_n_ranks(const topo *t);
uint32_t topo_n_nodes(const topo *t);
uint32_t topo_n_links(const topo *t);
const topo_link *topo_get_link(const topo *t, uint32_t link);
/* The most one transfer gets through link l alone: its capacity, or its
 * dimension's `stream_bandwidth:` when that is lower.  A stream bandwidth
 * below the capacity models a port that one stream cannot fill while
 * several together can (doc/topology.md).  O(1). */
wisp_bw_Bps topo_link_rate(const topo *t, const topo_link *l);

/* How many tiers, innermost first, lie inside one node (`node_dims:`, 1 to
 * the number of dims); without the key, every tier but the outermost when
 * there are two or more, else the one tier; 0 for explicit graphs.  Ranks
 * that differ only in those tiers share a node (calibration's intra-node
 * class). */
int topo_node_dims(const topo *t);

/* Hierarchical view used by collectives: number of dimensions (tiers),
 * their names, kinds and sizes, and each rank's coordinate.  An explicit
 * graph has one dimension. */
int topo_n_dims(const topo *t);
const char *topo_dim_name(const topo *t, int dim);
topo_kind topo_dim_kind(const topo *t, int dim);
int topo_dim_size(const topo *t, int dim);
int topo_rank_coord(const topo *t, int rank, int dim);
/* The link bandwidth of a hierarchical dimension in bytes/s (an explicit
 * graph's links each have their own: topo_get_link). */
wisp_bw_Bps topo_dim_bw(const topo *t, int dim);
/* TRUE for an explicit graph (`graph:`), FALSE for dimensions. */
gboolean topo_is_graph(const topo *t);

/* Route from src_rank to dst_rank: the links traversed, in order.  The
 * array is owned by the topology and valid until topo_free.  src == dst
 * gives an empty route.  Cost: O(1) (a hash lookup) after the first call
 * for an endpoint pair; the first call is O(route length) for hierarchical
 * topologies and O(V + E) for the first route to each destination of an
 * explicit graph.  Not thread-safe: the cache lives in the topology.
 * Memory: about 50 + 4 * hops bytes per distinct endpoint pair routed. */
const uint32_t *topo_route(const topo *t, int src_rank, int dst_rank, uint32_t *n_links);

/* Sum of link latencies and the minimum bandwidth along the route, links'
 * capacities and stream bandwidths alike: what one transfer alone gets (0
 * and 0 for an empty route). */
void topo_route_cost(const topo *t, int src_rank, int dst_rank, sim_time_ps *latency, wisp_bw_Bps *bottleneck);

/* The config file name, for error messages. */
const char *topo_source(const topo *t);

/* Prints the resolved topology (`wisp topo`): header, dimensions, links per
 * tier, injection and bisection bandwidth, rank pair classes.  Time
 * O(links x link classes + dims x 4096 routes).  topo_print_dot writes the
 * same topology as Graphviz. */
void topo_print(const topo *t, FILE *out);
void topo_print_dot(const topo *t, FILE *out);

/* Endpoint view and summary figures.  Endpoints are nodes
 * 0 .. topo_n_endpoints()-1; switches follow. */
uint32_t topo_n_endpoints(const topo *t);
uint32_t topo_rank_endpoint(const topo *t, int rank);
gboolean topo_node_is_endpoint(const topo *t, uint32_t node);
/* Axis sizes of a dimension, axis 0 fastest: a torus2d/torus3d dimension
 * has 2/3 axes whose product is topo_dim_size(); any other kind has one
 * axis of topo_dim_size().  Returns the number of axes. */
int topo_dim_shape(const topo *t, int dim, int shape[3]);
/* The config's `name:` (NULL when absent). */
const char *topo_name(const topo *t);
/* Bisection bandwidth in bytes/s, one direction: the cut between the two
 * halves (coordinate < floor(n/2) vs the rest) of the outermost dimension
 * of size > 1; see doc/topology.md for the per-kind formulas.  0 when not
 * defined (explicit graphs, a single endpoint). */
wisp_bw_Bps topo_bisection_bw(const topo *t);

/* Prints the route between two ranks, one line per link (`wisp topo
 * --route A:B`). */
void topo_print_route(const topo *t, int src_rank, int dst_rank, FILE *out);


G_END_DECLS
#endif
