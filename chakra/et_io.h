/* et_io.h: reading and writing Chakra execution-trace (.et) files and
 * whole workloads (one file per rank plus comm_group.json).
 *
 * File format (MLCommons Chakra, see chakra/et_def.proto): a varint32
 * length-prefixed GlobalMetadata frame followed by length-prefixed Node
 * frames up to the end of the file.  Plain and gzip input are accepted
 * (detected by the magic bytes 1f 8b, not by name); output is always plain.
 *
 * Reading streams the file through a bounded buffer (256 KiB, growing only
 * for a frame that is larger, up to ET_IO_MAX_FRAME); it never reads the
 * whole file into memory and never allocates what a length prefix claims
 * before the bytes have arrived.  Time O(file size + nodes + edges).
 *
 * Attributes understood on nodes (any integer oneof type is accepted for
 * integer attributes; bool_val or an integer for booleans):
 *   is_cpu_op, comm_type, comm_size, pg_name (string_val, or an integer
 *   written as decimal), comm_src, comm_dst, comm_tag, num_ops, tensor_size,
 *   and the wisp extensions
 *   wisp_split_sizes (int64_list/uint64_list: per-peer bytes of an
 *                     all-to-all-v; the node's comm_type is ALL_TO_ALL),
 *   wisp_duration_ps / wisp_start_ps (int64: picosecond duration / start,
 *                     overriding duration_micros / start_time_micros),
 *   wisp_root (int32: root rank of a rooted collective),
 *   wisp_delay (bool, COMP: an idle gap that takes time but no compute
 *               slot; ET_FLAG_DELAY),
 *   wisp_replay (bool, COMM: replayed for its duration, not simulated;
 *                ET_FLAG_REPLAY).
 * A COMM_COLL node with wisp_delay (written with wisp_replay as a
 * BROADCAST by `convert --for astra-sim`, which ASTRA-sim replays for its
 * duration on the rank's communication slot) is read as a COMP idle gap
 * (ET_FLAG_DELAY): it takes time, no slot and no network.
 * GlobalMetadata attributes (wisp extensions): wisp_compute_slots,
 * wisp_measured_step_ps and wisp_measured_start_ps (int64; the profile's
 * measured step and window start of the rank, written from the workload
 * by et_workload_write and restored by et_workload_load).  Together with
 * is_cpu_op and the node attributes above they carry the graph semantics
 * of `wisp simulate` on the traces, so the default `wisp convert` output
 * replays exactly like its traces (doc/kineto.md).
 * comm_priority and involved_dim are read and ignored (counted in
 * dropped_attrs, like every unknown attribute, GlobalMetadata attribute and
 * Node.inputs/outputs).
 *
 * Reader rules: a COMM_COLL node with is_cpu_op = true or without comm_type
 * becomes a replay node (ET_FLAG_REPLAY, counted in replay_comm_nodes).
 * Other COMM nodes need comm_size (BARRIER excepted).  SEND/RECV nodes need
 * comm_tag, SEND needs comm_dst and RECV needs comm_src; the missing side
 * defaults to the file's own rank, which et_read_file does not know: it
 * leaves -1 there and et_workload_load fills in the rank.
 */
#ifndef WISP_ET_IO_H
#define WISP_ET_IO_H

#include "chakra/et_graph.h"

G_BEGIN_DECLS

/* Largest accepted frame (Chakra's biggest real frames are ~20 KB). */
#define ET_IO_MAX_FRAME (64u << 20)

/* Reads one .et file (plain or gzip) into a graph built with build_flags
 * (ET_BUILD_*).  Errors name the file, the byte offset (of the uncompressed
 * stream) and, where known, the node id. */
et_graph *et_read_file(const char *path, unsigned build_flags, GError **error);

/* Writes g as an uncompressed .et file, atomically.  The encoding is the
 * canonical one of the reference serializer: fields in field-number order,
 * proto3 defaults omitted, and per node the attributes in this order:
 *   is_cpu_op (bool, always),
 *   COMP: num_ops (int64, always; 0 unless known), tensor_size (uint64, when known);
 *   COMM: comm_type (int64; ALL_TO_ALLV is written as ALL_TO_ALL),
 *         comm_size (int64), pg_name (string, when present), comm_src,
 *         comm_dst, comm_tag (int32, when >= 0), wisp_root (when >= 0),
 *         wisp_split_sizes (ALL_TO_ALLV);
 *   wisp_duration_ps / wisp_start_ps when the time is not a whole
 *   microsecond (duration_micros / start_time_micros carry the value rounded
 *   to the nearest microsecond).
 * data_deps holds the parent entries with ET_EDGE_DATA, ctrl_deps those with
 * ET_EDGE_CTRL, each in parent_edges order.  Nodes are written in index
 * order when that puts every parent before its children (so files read by
 * wisp round-trip unchanged), otherwise in topological order taking the
 * smallest ready index first, which Chakra readers that load nodes in
 * windows need.
 * An empty GlobalMetadata.version is written as "0.0.4" so that no frame is
 * ever empty.  A graph without nodes is refused.  The bytes are exactly
 * those protobuf-c produces for et_def.proto (the encoder is hand-written
 * for speed; the tests compare every frame with protobuf-c's).  Time
 * O(nodes + edges + bytes); memory a 256 KiB output batch (plus the largest
 * frame) and, for graphs not in topological index order, 12 B per node. */
gboolean et_write_file(const et_graph *g, const char *path, GError **error);

/* Loads a workload.  path is either a prefix (PREFIX.0.et, PREFIX.1.et, ...
 * are read while they exist; PREFIX.0.et must exist and no higher-numbered
 * file may follow a gap), one of the rank files itself, or a directory
 * holding exactly one such set of files.  comm_group.json next to the files (if
 * present) defines the groups, named by their ids; comm_group_names.json
 * (written by et_workload_write) restores the original names and
 * descriptions.  SEND/RECV defaults are filled with the file's rank, and
 * pg_name is resolved (et_workload_resolve_groups). */
et_workload *et_workload_load(const char *path, unsigned build_flags, GError **error);
/* A build_flags bit of et_workload_load(_groups): keep one graph per rank.
 * Without it, a rank whose graph equals an earlier rank's up to a rank
 * shift (peers relative to the rank, groups mapped one to one, see
 * chakra/et_share.h) shares that graph: its own is freed as soon as it
 * is read, so memory grows with the distinct graphs.  Every reader of
 * communication records goes through et_workload_comm(), so results are
 * the same either way. */
#define ET_LOAD_NO_SHARE (1u << 16)
/* The same, with the groups read from comm_group (when not NULL) instead of
 * the comm_group.json beside the files (ASTRA-sim's
 * --comm-group-configuration); a comm_group_names.json beside that file
 * restores names.  A missing comm_group file is an error. */
et_workload *et_workload_load_groups(const char *path, unsigned build_flags, const char *comm_group,
                                     GError **error);

/* Writes DIR/PREFIX.<r>.et for every rank and, when groups exist,
 * DIR/comm_group.json ({"<id>": [ranks...]}, ids are decimal numbers >= 1).
 * If every group name already is such an id it is kept; otherwise the groups
 * are numbered 1..k in group order, each node's pg_name is written as its
 * group's number, and DIR/comm_group_names.json maps the numbers back:
 * {"<id>": {"name": "<original>", "desc": "<desc>"}} (desc only when set;
 * the file is also written when any group has a desc).  A comm_group.json
 * or comm_group_names.json in DIR that this workload does not need is
 * removed (it would describe another workload).  All files are written
 * atomically; DIR must exist.
 *
 * The rank files are independent and are written in parallel, as
 * et_workload_write_threads(w, dir, prefix, 0, error) does. */
gboolean et_workload_write(const et_workload *w, const char *dir, const char *prefix, GError **error);

/* et_workload_write with `threads` workers, each writing whole rank files
 * (ranks taken in increasing order; at most one worker per rank).
 * threads = 0 takes the environment variable WISP_THREADS when set (a
 * whole number from 1 to 4096; anything else is an error before any file
 * is written), else g_get_num_processors().  The files are byte-identical
 * whatever the number of workers.
 * A rank without a graph is reported before anything is written.  When
 * writing fails, the error is that of the lowest failing rank (the same as
 * with one worker), the comm_group files are left alone, and no rank file
 * of this run is left half-written: the failing rank's file and those still
 * being written are never created (their temporary files are removed; an
 * older file of the same name stays), but rank files already committed
 * stay -- with several workers these can include ranks above the failing
 * one.  Memory per worker: one rank file's output batch (see et_write_file). */
gboolean et_workload_write_threads(const et_workload *w, const char *dir, const char *prefix, int threads,
                                   GError **error);

G_END_DECLS
#endif
