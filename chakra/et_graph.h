/* et_graph.h: wisp's in-memory execution graph (one per rank) and workload.
 *
 * A Chakra ET file is decoded into a compact, read-only graph: an array of
 * fixed-size et_node records (no protobuf objects are kept), a CSR array of
 * parent edges that preserves which Chakra list (data_deps / ctrl_deps) each
 * edge came from, a deduplicated CSR array of children used by the replay, a
 * side array of et_comm records for communication nodes only, and one string
 * pool for names.  Node indices (uint32_t) are dense, 0..n_nodes-1, in file
 * order; the original Chakra id is kept in et_node.id.
 *
 * Frontends (Kineto, XLA) and the Chakra reader all build graphs with the
 * et_builder API below, so validation (dangling edges, duplicate ids,
 * cycles) lives in one place.
 */
#ifndef WISP_ET_GRAPH_H
#define WISP_ET_GRAPH_H

#include "common/wisp_util.h"

G_BEGIN_DECLS

/* Values equal MLCommons Chakra's NodeType (et_def.proto). */
typedef enum {
  ET_NODE_INVALID = 0,
  ET_NODE_METADATA = 1,
  ET_NODE_MEM_LOAD = 2,
  ET_NODE_MEM_STORE = 3,
  ET_NODE_COMP = 4,
  ET_NODE_COMM_SEND = 5,
  ET_NODE_COMM_RECV = 6,
  ET_NODE_COMM_COLL = 7,
} et_node_type;

/* Values 0..9 equal Chakra's CollectiveCommType.  ET_COLL_ALL_TO_ALLV is a
 * wisp extension: it is written to Chakra files as ALL_TO_ALL with an extra
 * attribute carrying the per-peer sizes, so other tools still read it. */
typedef enum {
  ET_COLL_ALL_REDUCE = 0,
  ET_COLL_REDUCE = 1,
  ET_COLL_ALL_GATHER = 2,
  ET_COLL_GATHER = 3,
  ET_COLL_SCATTER = 4,
  ET_COLL_BROADCAST = 5,
  ET_COLL_ALL_TO_ALL = 6,
  ET_COLL_REDUCE_SCATTER = 7,
  ET_COLL_REDUCE_SCATTER_BLOCK = 8,
  ET_COLL_BARRIER = 9,
  ET_COLL_ALL_TO_ALLV = 64,
  ET_COLL_NONE = 255,
} et_coll_type;

const char *et_node_type_name(et_node_type t);   /* "COMP_NODE", ... */

/* ---- collective facts: the one table (et_graph.c) ----
 * Every layer asks these instead of listing types: names, whether the
 * collective has a root, whether it reduces, how Chakra's comm_size relates
 * to nccl-tests' S (the per-rank size rule) and nccl-tests' busbw factor.
 * The nccl-tests arithmetic on these columns is in collectives/coll_facts.h.
 * Lookups are O(number of types) = O(1). */

/* Chakra comm_size of one member versus the collective's whole size S (the
 * bytes nccl-tests' algbw divides by time): */
typedef enum {
  ET_COLL_SIZE_WHOLE = 0, /* comm_size = S (AR, RS: full input; A2A: send buffer; BCAST, REDUCE) */
  ET_COLL_SIZE_PIECE,     /* comm_size = each rank's piece, S = n x comm_size (AG, GATHER, SCATTER) */
  ET_COLL_SIZE_NONE,      /* no data (barrier): S = 0 */
} et_coll_size_rule;

/* nccl-tests' busbw = algbw x factor(n) (nccl-tests doc/PERFORMANCE.md): */
typedef enum {
  ET_COLL_BUS_TWICE_NM1 = 0, /* 2 (n - 1) / n: all-reduce */
  ET_COLL_BUS_NM1,           /* (n - 1) / n: RS, AG, A2A(V), GATHER, SCATTER */
  ET_COLL_BUS_ONE,           /* 1: broadcast, reduce */
  ET_COLL_BUS_ZERO,          /* 0: barrier moves no data */
} et_coll_bus_rule;

typedef struct {
  et_coll_type type;
  const char *name;          /* "ALL_REDUCE": Chakra's spelling */
  const char *short_name;    /* "all_reduce": command line and reports */
  gboolean rooted;           /* has a root rank (broadcast, reduce, gather, scatter) */
  gboolean reduces;          /* combines values (all-reduce, reduce, reduce-scatter) */
  et_coll_size_rule size_rule;
  et_coll_bus_rule bus_rule;
} et_coll_info;

/* The row of type c; NULL for values outside the enum. */
const et_coll_info *et_coll_info_of(et_coll_type c);
const char *et_coll_type_name(et_coll_type c);   /* "ALL_REDUCE", ...; "UNKNOWN" */
/* Lower-case names used on the command line and in reports ("all_reduce"). */
const char *et_coll_short_name(et_coll_type c);
gboolean et_coll_from_short_name(const char *s, et_coll_type *out);
gboolean et_coll_rooted(et_coll_type c);        /* FALSE for unknown values */
gboolean et_coll_reduces(et_coll_type c);       /* FALSE for unknown values */

#define ET_NONE UINT32_MAX       /* "no index" for uint32_t fields */
#define ET_GROUP_WORLD UINT32_MAX /* et_comm.group of a world communicator */

enum {
  ET_FLAG_CPU_OP = 1u << 0,      /* is_cpu_op = true */
  ET_FLAG_HAS_START = 1u << 1,   /* start_ps is a measured start time */
  ET_FLAG_REPLAY = 1u << 2,      /* COMM node replayed for its duration (e.g. a CPU-side c10d op) */
  ET_FLAG_DELAY = 1u << 3,       /* COMP node that is an idle gap: it takes time but no compute slot */
};

/* Bits in a parent-edge entry; the low 30 bits are the parent node index. */
#define ET_EDGE_DATA (1u << 31)
#define ET_EDGE_CTRL (1u << 30)
#define ET_EDGE_INDEX(e) ((e) & 0x3fffffffu)

typedef struct {
  uint64_t id;             /* Chakra node id (unique per file) */
  sim_time_ps duration_ps; /* COMP: replay duration; COMM: measured duration or 0 */
  sim_time_ps start_ps;    /* measured start when ET_FLAG_HAS_START */
  uint32_t name;           /* offset into the string pool */
  uint32_t parents;        /* first entry in parent_edges; count = next node's - this */
  uint32_t children;       /* first entry in child_index; count likewise */
  uint32_t comm;           /* index into comms[] or ET_NONE */
  uint8_t type;            /* et_node_type */
  uint8_t flags;           /* ET_FLAG_* */
} et_node;

typedef struct {
  uint64_t bytes;          /* Chakra comm_size (AG: per-rank shard; RS: full input) */
  uint32_t group;          /* index into et_workload.groups or ET_GROUP_WORLD */
  uint32_t pg_name;        /* string-pool offset of pg_name or ET_NONE */
  uint32_t split;          /* ALL_TO_ALLV: first of n_ranks per-peer byte counts in splits[] */
  int32_t src, dst, tag;   /* SEND/RECV: global ranks and tag; -1 when absent */
  int32_t root;            /* rooted collectives: global root rank, -1 when absent */
  uint8_t coll;            /* et_coll_type (ET_COLL_NONE for SEND/RECV) */
  /* Buffer lifecycle (from memory events; Chakra attributes wisp_buffer and
   * wisp_alloc_ps).  buffer: opaque id of the buffer this rank's operation
   * uses, 0 = unknown.  has_alloc: alloc_ps holds when that buffer was
   * (last) allocated, on the node's measured timeline (the same origin as
   * start_ps; negative = before it).  Set with et_builder_set_buffer. */
  uint8_t has_alloc;
  uint64_t buffer;
  sim_time_ps alloc_ps;
  /* ALL_TO_ALLV run as DeepEP's two-hop pattern (Chakra attributes
   * wisp_two_hop and wisp_two_hop_ppm; wisp-only, other readers ignore
   * them): two_hop = ET_TWO_HOP_* (coll_two_hop's values), two_hop_ppm the
   * scale-out bytes of one (source, destination node) in millionths of the
   * splits' sum to that node (per-node deduplication; doc/kineto.md). */
  uint8_t two_hop;
  uint32_t two_hop_ppm;
} et_comm;

enum { ET_TWO_HOP_NONE = 0, ET_TWO_HOP_DISPATCH = 1, ET_TWO_HOP_COMBINE = 2 };

typedef struct {
  uint32_t n_nodes;
  et_node *nodes;          /* n_nodes + 1 entries: the last one is a sentinel holding CSR ends */
  /* Parent entries with ET_EDGE_* bits, in the order the deps were added
   * (the reader adds data_deps then ctrl_deps).  Each distinct parent
   * appears once per node (a parent named twice, e.g. in both lists, is one
   * entry with both bits), and every entry orders execution, so
   * et_node_n_parents() is the in-degree the replay waits for. */
  uint32_t *parent_edges;
  uint32_t *child_index;   /* deduplicated children (node indices, ascending): the transpose of parent_edges */
  uint32_t n_comms;
  et_comm *comms;
  uint64_t *splits;        /* per-peer sizes of ALL_TO_ALLV nodes */
  char *strings;           /* string pool, NUL-terminated entries */
  size_t strings_len;
  char *version;           /* GlobalMetadata.version ("" when absent) */
  /* Counts of things the reader dropped or repaired, reported by `wisp inspect`. */
  uint64_t dropped_dangling_ctrl;
  uint64_t dropped_attrs;
  uint64_t dropped_cycle_edges;  /* edges removed by ET_BUILD_BREAK_CYCLES */
  uint64_t ignored_ctrl_edges;   /* ctrl-only edges left out by ET_BUILD_DATA_DEPS_ONLY */
  uint64_t merged_dup_edges;     /* repeated (node, parent) pairs merged into one entry */
  uint64_t replay_comm_nodes;    /* COMM nodes turned into ET_FLAG_REPLAY by the reader */
  /* The input's name. */
  char *source;                  /* input name given to et_builder_new (for messages) */
  uint32_t n_splits;             /* entries in splits[] */
  uint32_t split_width;          /* sizes per ALL_TO_ALLV node (all equal; 0 when none) */
  /* Optional COMP attributes (num_ops != 0, tensor_size or a module present), sorted by node. */
  uint32_t n_comp_attrs;
  struct et_comp_attr *comp_attrs;
  /* GPU compute nodes the profile measured running at once on this rank
   * (GlobalMetadata attribute wisp_compute_slots); 0 when unknown.  The
   * replay uses it as the rank's compute-slot count unless told otherwise. */
  uint32_t compute_slots;
  /* The profile's measured step of this rank and where its window began
   * relative to the earliest rank's (GlobalMetadata attributes
   * wisp_measured_step_ps / wisp_measured_start_ps, written from the
   * workload by et_workload_write); -1 when unknown.  et_workload_load
   * turns them back into et_workload.measured_step_ps / measured_start_ps,
   * so a converted workload reports the same baseline as its traces. */
  sim_time_ps measured_step_ps;
  sim_time_ps measured_start_ps;
} et_graph;
#define ET_MAX_COMPUTE_SLOTS 1024

/* Chakra num_ops / tensor_size of a COMP node (kept for round trips and
 * roofline-style studies); stored only for nodes that carry them. */
typedef struct et_comp_attr {
  uint32_t node;
  uint8_t has_tensor_size;
  int64_t num_ops;
  uint64_t tensor_size;
  /* The enclosing module path the profile annotated the operation with
   * (string-pool offset, 0 = none): "/"-separated names, outermost first,
   * e.g. "GPTModel_0/TransformerLayer_3/SelfAttention_3" (Chakra attribute
   * wisp_module, a string; other readers ignore it). */
  uint32_t module;
} et_comp_attr;
/* Finds node's COMP attributes by binary search (O(log n)); NULL when none. */
const et_comp_attr *et_graph_comp_attr(const et_graph *g, uint32_t node);
/* Node i's module path (et_comp_attr.module), NULL when it has none.  O(log n). */
const char *et_graph_module(const et_graph *g, uint32_t node);

static inline uint32_t et_node_n_parents(const et_graph *g, uint32_t i)
{ return g->nodes[i + 1].parents - g->nodes[i].parents; }
static inline uint32_t et_node_n_children(const et_graph *g, uint32_t i)
{ return g->nodes[i + 1].children - g->nodes[i].children; }
static inline const char *et_node_name(const et_graph *g, uint32_t i)
{ return g->strings + g->nodes[i].name; }
static inline const et_comm *et_node_comm(const et_graph *g, uint32_t i)
{ return g->nodes[i].comm == ET_NONE ? NULL : &g->comms[g->nodes[i].comm]; }

void et_graph_free(et_graph *g);
/* A deep copy (every array duplicated; free with et_graph_free).
 * O(nodes + edges + communication records + string pool). */
et_graph *et_graph_copy(const et_graph *g);
/* NULL when the node order already puts every parent before its children
 * (checked in O(edges)); else the topological order that takes the lowest
 * ready index first (Kahn with a min-heap, O((n + e) log n)), which keeps
 * the node order wherever it respects the edges: n_nodes indices, freed
 * by the caller.  Used for the write order (windowed Chakra readers) and
 * the replay's program order of collectives (replay/rp_order.c). */
uint32_t *et_graph_topo_order(const et_graph *g);
/* Bytes of heap memory held by the graph, excluding the string pool. */
size_t et_graph_memory_bytes(const et_graph *g);

/* ---- Building a graph (used by the Chakra reader and by frontends) ---- */

typedef struct et_builder et_builder;

/* source names the input in error messages, e.g. "trace/rank3.et". */
et_builder *et_builder_new(const char *source);
void et_builder_free(et_builder *b);
void et_builder_set_version(et_builder *b, const char *version);
/* Records the measured compute concurrency (et_graph.compute_slots; 0 = unknown). */
void et_builder_set_compute_slots(et_builder *b, uint32_t slots);
/* Adds a node and returns its index.  Duplicate ids are reported by finish. */
uint32_t et_builder_add_node(et_builder *b, uint64_t id, et_node_type type, const char *name,
                             sim_time_ps duration_ps, uint8_t flags);
void et_builder_set_start(et_builder *b, uint32_t node, sim_time_ps start_ps);
/* Attaches communication attributes; for ALL_TO_ALLV pass n_splits per-peer sizes. */
void et_builder_set_comm(et_builder *b, uint32_t node, const et_comm *comm, const char *pg_name,
                         const uint64_t *splits, uint32_t n_splits);
/* Attaches the buffer lifecycle of a communication node (after
 * et_builder_set_comm): buffer id (0 = unknown) and, when has_alloc, the
 * buffer's allocation time on the measured timeline. */
void et_builder_set_buffer(et_builder *b, uint32_t node, uint64_t buffer, gboolean has_alloc, sim_time_ps alloc_ps);
/* Records that `node` depends on the node with Chakra id parent_id. */
void et_builder_add_dep(et_builder *b, uint32_t node, uint64_t parent_id, gboolean data, gboolean ctrl);
/* Records num_ops (and tensor_size when has_tensor_size) of a COMP node. */
void et_builder_set_comp_attrs(et_builder *b, uint32_t node, int64_t num_ops,
                               gboolean has_tensor_size, uint64_t tensor_size);
/* Records the module path of any node (et_comp_attr.module; NULL or ""
 * records nothing).  Call it after et_builder_set_comp_attrs of the same
 * node, or for a node without them. */
void et_builder_set_module(et_builder *b, uint32_t node, const char *module);

enum {
  ET_BUILD_STRICT = 1u << 0,     /* dangling ctrl_deps are errors instead of counted warnings */
  ET_BUILD_DATA_DEPS_ONLY = 1u << 1, /* V1 feeder semantics: ctrl-only edges are left out of the
                                        graph (counted in ignored_ctrl_edges) */
  ET_BUILD_BREAK_CYCLES = 1u << 2,   /* drop (and count) edges that close a cycle instead of failing */
};
/* Resolves ids, validates (duplicate ids, dangling edges, cycles: the error
 * names the node ids) and returns the compact graph.  Consumes b, also on
 * failure.  A graph needs at least one node.  With ET_BUILD_BREAK_CYCLES,
 * each cycle loses the edge that runs against insertion order (parent index
 * >= child index) with the smallest child index.  Time O(nodes + edges),
 * plus with ET_BUILD_BREAK_CYCLES one backward walk (at most the nodes
 * left) per cycle broken; memory five words per node and two per edge. */
et_graph *et_builder_finish(et_builder *b, unsigned flags, GError **error);

/* ---- Workloads: one graph per rank plus communicator groups ---- */

typedef struct {
  char *name;              /* pg_name key (comm_group.json id, or a frontend name) */
  char *desc;              /* optional description, e.g. "mesh_tp"; may be NULL */
  int n_ranks;
  int *ranks;              /* global ranks in communicator order */
} et_group;

typedef struct et_workload {
  int n_ranks;
  et_graph **ranks;        /* ranks[r] is rank r's graph */
  GPtrArray *groups;       /* et_group* */
  GHashTable *group_index; /* name -> GUINT_TO_POINTER(index + 1) */
  char *source;            /* path the workload was read from */
  /* Measured step time per rank from the profile (-1 when unknown). */
  sim_time_ps *measured_step_ps;
  /* Per rank, where its measured window began on the traces' common clock,
   * relative to the earliest rank's (>= 0); NULL when the profile does not
   * give comparable clocks.  The replay starts every rank at 0 unless asked
   * to start them here (sim_replay_options.measured_starts). */
  sim_time_ps *measured_start_ps;
  /* A workload scaled from a traced one (chakra/et_scale.h), else NULL.
   * Then ranks[r] points at the graph of r's traced counterpart (graphs
   * are shared, not copied) and the groups, peers, roots and sizes a graph
   * names are translated per rank by et_workload_comm(). */
  struct et_scale *scale;
  /* Ranks sharing graphs (chakra/et_share.h), else NULL.  Then ranks[r]
   * may point at another rank's graph, whose records et_workload_comm()
   * translates for r; the graphs belong to the share.  A scaled workload
   * keeps its traced workload's share in its scale instead. */
  struct et_share *share;
  /* The owner of the rank graphs when ranks share them, set together with
   * the fields above by the module that sets those (et_share.c,
   * et_scale.c; this module calls neither), else NULL: then each rank owns
   * its graph.  free_graphs frees the graphs (ranks[] itself stays the
   * workload's), called once by et_workload_free.  graph_rank, when set,
   * says which rank's graph rank r replays (r for its own graph):
   * et_workload_resolve_groups resolves only ranks replaying their own. */
  void (*free_graphs)(struct et_workload *w);
  int (*graph_rank)(const struct et_workload *w, int r);
} et_workload;

et_workload *et_workload_new(int n_ranks, const char *source);
void et_workload_free(et_workload *w);
/* Adds a group and returns its index (the existing index when the name
 * exists with the same ranks); returns ET_NONE when the name exists with
 * other ranks or a rank is out of range or repeated. */
uint32_t et_workload_add_group(et_workload *w, const char *name, const char *desc,
                               const int *ranks, int n_ranks);
const et_group *et_workload_group(const et_workload *w, uint32_t index);
/* The label reports print for group index g: "world" for ET_GROUP_WORLD,
 * else the group's name.  O(1). */
const char *et_workload_group_name(const et_workload *w, uint32_t g);
/* Resolves every COMM node's pg_name to a group index (an unknown name is an
 * error naming the file, node and name). */
gboolean et_workload_resolve_groups(et_workload *w, GError **error);
/* The same for rank r alone (the loader resolves each rank before it is
 * offered for sharing).  O(rank's nodes). */
gboolean et_workload_resolve_rank(et_workload *w, int r, GError **error);

/* Communication the replay cannot simulate.  Replayed: COMM nodes with
 * ET_FLAG_REPLAY (no usable size, group members missing from the trace, a
 * CPU-side op), which take their measured duration whatever the network.
 * Zero-byte: simulated collectives other than barriers whose size is 0,
 * which cost only latency.  first_*: the lowest rank's first such node
 * (rank -1 when none), for messages.  O(nodes). */
typedef struct {
  uint64_t replayed_nodes;
  sim_time_ps replayed_ps;       /* sum of their measured durations over all ranks */
  int replayed_ranks;            /* ranks with at least one */
  int first_replayed_rank;
  uint32_t first_replayed_node;
  uint64_t zero_byte_collectives;
  int first_zero_rank;
  uint32_t first_zero_node;
} et_unsimulated;

void et_workload_unsimulated(const et_workload *w, et_unsimulated *out);

/* GPU idle the replay keeps as fixed delays in rank graph g: ET_FLAG_DELAY
 * COMP nodes that are not CPU nodes.  Those whose only parent is a CPU node (the
 * time from a launch call's start to its kernel's start, in graphs with
 * the host launch model) are launch lag; the others are unexplained idle:
 * no modelled dependency accounts for them.  O(nodes + edges). */
void et_graph_fixed_idle(const et_graph *g, sim_time_ps *launch_lag_ps, sim_time_ps *unexplained_ps);

G_END_DECLS
#endif
