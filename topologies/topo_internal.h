/* topo_internal.h: the topology's private representation, shared by the
 * loader (topo_load.c), construction and routing (topo.c) and the printers
 * (topo_print.c).  Not installed; other modules use topo.h only.
 *
 * Node numbering: endpoints (the devices that hold ranks) are nodes
 * 0 .. n_endpoints-1; switches follow.  In a hierarchical topology endpoint
 * e has coordinate (e / stride[d]) % size[d] in dimension d (dimension 0
 * fastest, as ASTRA-sim numbers NPUs).
 */
#ifndef WISP_TOPO_INTERNAL_H
#define WISP_TOPO_INTERNAL_H

#include "topologies/topo.h"

/* Hard bounds that keep a typo ("size: 1000000") from exhausting memory;
 * exceeding them is a WISP_ERROR_LIMIT error, never a silent cut.  A link
 * costs TOPO_LINK_BYTES (its 32-byte record plus two adjacency entries),
 * so the link bound caps a topology at 640 MiB: a 100,000-GPU cluster
 * with NVL72 full-mesh scale-up needs 7.1 M links, and the fuzzer's 2 GiB
 * budget (fuzz/run.sh) holds the largest topology with room to spare. */
#define TOPO_MAX_ENDPOINTS (UINT32_C(1) << 22)
#define TOPO_MAX_LINKS (UINT64_C(1) << 24)
#define TOPO_LINK_BYTES (sizeof(topo_link) + 2 * sizeof(uint32_t))

typedef enum {
  TOPO_FORMAT_DIMS,   /* wisp YAML with `dims:` */
  TOPO_FORMAT_GRAPH,  /* wisp YAML with `graph:` */
  TOPO_FORMAT_ASTRA,  /* ASTRA-sim network.yml */
} topo_format;

typedef struct {
  char *name;
  topo_kind kind;
  int size;                /* endpoints per group along this dimension */
  uint32_t stride;         /* product of the sizes of the inner dimensions */
  uint32_t n_groups;       /* n_endpoints / size */
  wisp_bw_Bps bw;          /* endpoint link bandwidth, bytes/s */
  wisp_bw_Bps stream_bw;   /* `stream_bandwidth:` most one transfer gets per link; 0 = bw */
  sim_time_ps latency;     /* per link traversal */
  int n_axes;              /* torus: 2 or 3 */
  int shape[3];            /* torus axis sizes, axis 0 fastest */
  int leaves, spines;      /* fat tree */
  double oversub;          /* fat tree: host bandwidth / uplink bandwidth per leaf */
  wisp_bw_Bps up_bw;       /* fat tree: bandwidth of one leaf-spine link */
  uint32_t switch_base;    /* node index of this dimension's first switch */
  uint32_t switches_per_group;
  /* `fabric: NAME` (kind switch only): this dimension is a level of one
   * non-blocking multi-stage switch fabric that spans it and every inner
   * dimension, reached through each endpoint's own port (doc/topology.md,
   * "Shared fabrics").  fabric_level is 0 for the fabric's innermost
   * dimension (whose link is the endpoint's port), 1, 2, ... outwards, and
   * -1 for a dimension outside any fabric.  Level k has one switch per
   * fabric_span endpoints (stride * size: all inner coordinates) from
   * switch_base, and 2 links per endpoint from link index lane_base: the
   * port (level 0) or the endpoint's lane from the level below (level > 0),
   * up at lane_base + 2e and down at lane_base + 2e + 1. */
  char *fabric;
  int fabric_level;
  uint32_t fabric_span;
  uint32_t lane_base;
  int line;                /* config line, for messages */
  double astra_value;      /* ASTRA-sim: bandwidth as written ("GB/s" = GiB/s) */
} topo_dim;

/* Open-addressing map from (src endpoint, dst endpoint) to a cached route. */
typedef struct {
  uint64_t key;            /* (src << 32 | dst) + 1; 0 = empty slot */
  const uint32_t *links;
  uint32_t n;
} topo_route_slot;

struct topo {
  char *source;
  char *name;
  topo_format format;
  cfg_doc *config;           /* the document built from (a reference), or NULL */
  int node_dims;             /* `node_dims:` dims 0..N-1 lie inside one node; 0 = not given */

  int n_dims;
  topo_dim *dims;
  int fabric_first, fabric_last; /* dimensions of the shared fabric, or -1 (topo_dim.fabric) */

  uint32_t n_endpoints;
  uint32_t n_nodes;
  char **node_names;       /* explicit graphs only (else NULL) */

  GArray *links;           /* topo_link */
  uint64_t max_links;      /* bound on directed links: TOPO_MAX_LINKS unless loaded with a tighter one */
  uint32_t *out_off;       /* CSR of out-links, sorted by destination */
  uint32_t *out_link;
  uint32_t *in_off;        /* CSR of in-links (graphs, for reverse BFS) */
  uint32_t *in_link;

  int n_ranks;
  uint32_t *rank_ep;       /* rank -> endpoint */
  gboolean contiguous;     /* placement: rank r on endpoint r */

  /* Route cache (mutable behind const topo *: routing is single-threaded). */
  topo_route_slot *cache;
  uint32_t cache_cap, cache_used;
  GPtrArray *arena;        /* blocks of uint32 link lists, never moved */
  uint32_t *arena_cur;
  uint32_t arena_left;
  GHashTable *graph_dist;  /* graphs: dst node -> uint32 dist-to-dst per node */
  GArray *scratch;         /* uint32 route under construction */
};

/* Construction (topo.c).  topo_alloc returns an empty topology owning a
 * copy of source; the loader fills dims or the graph, then calls
 * topo_build_dims / topo_build_graph, then topo_set_placement. */
topo *topo_alloc(const char *source);
gboolean topo_build_dims(topo *t, GError **error);
/* Graph: nodes 0..n_endpoints-1 are endpoints, the rest switches; names
 * are taken over.  links are appended by the caller with topo_add_link
 * before calling topo_build_graph. */
void topo_add_link(topo *t, uint32_t src, uint32_t dst, wisp_bw_Bps bw, sim_time_ps lat, uint16_t tier);
gboolean topo_build_graph(topo *t, GError **error);
/* placement NULL = contiguous over the first n_ranks endpoints. */
gboolean topo_set_placement(topo *t, int n_ranks, const uint32_t *placement, int line, GError **error);

/* Endpoint-level routing used by topo_route and the printers: appends the
 * links from endpoint src to endpoint dst to out (uint32). */
void topo_route_endpoints(const topo *t, uint32_t src, uint32_t dst, GArray *out);
/* Link from node u to node v (the first one when there are several), or
 * UINT32_MAX. O(log degree). */
uint32_t topo_find_link(const topo *t, uint32_t u, uint32_t v);
/* Closed-form link count of a hierarchical dimension (all its groups). */
uint64_t topo_dim_link_count(const topo_dim *d);
/* Name of node n ("ep12", "nvlink.sw3", or the graph's name). */
char *topo_node_label(const topo *t, uint32_t n);

/* Endpoint geometry of a hierarchical dimension, shared by construction
 * (topo.c), routing (topo_route.c) and the accessors (topo_query.c). */
/* Global endpoint of local index i in group g of dimension d. */
static inline uint32_t topo_group_ep(const topo_dim *d, uint32_t g, uint32_t i)
{
  uint32_t low = g % d->stride, high = g / d->stride;
  return low + high * d->stride * (uint32_t)d->size + i * d->stride;
}

static inline uint32_t topo_ep_group(const topo_dim *d, uint32_t ep)
{
  return ep % d->stride + (ep / (d->stride * (uint32_t)d->size)) * d->stride;
}

static inline uint32_t topo_ep_coord(const topo_dim *d, uint32_t ep)
{
  return (ep / d->stride) % (uint32_t)d->size;
}

/* Local index inside a torus group from axis coordinates, axis 0 fastest. */
static inline uint32_t topo_torus_index(const topo_dim *d, const int *c)
{
  uint32_t i = 0;
  for (int a = d->n_axes - 1; a >= 0; a--)
    i = i * (uint32_t)d->shape[a] + (uint32_t)c[a];
  return i;
}

static inline void topo_torus_coords(const topo_dim *d, uint32_t i, int *c)
{
  for (int a = 0; a < d->n_axes; a++) {
    c[a] = (int)(i % (uint32_t)d->shape[a]);
    i /= (uint32_t)d->shape[a];
  }
}

#endif
