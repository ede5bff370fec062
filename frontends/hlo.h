/* hlo.h: parser for single XLA HLO instruction lines (prefix fe_hlo_).
 *
 * XLA profiles (XPlane, XProf trace JSON) name every device op by its full
 * HLO instruction text, e.g.
 *   %all-gather.3 = bf16[8,4096]{1,0} all-gather(bf16[1,4096]{1,0} %p),
 *       replica_groups=[2,4]<=[8], dimensions={0}
 * This module parses one such line: the result shape, the opcode, the
 * operand shapes and the attributes that matter for communication
 * (replica_groups, source_target_pairs, channel_id, use_global_device_ids),
 * and sizes collectives with wisp's ASTRA-compatible comm_size convention
 * (doc/xla.md): all-reduce = buffer, all-gather = per-rank input shard,
 * reduce-scatter = full input, all-to-all = per-rank send buffer,
 * collective-permute / send / recv = the buffer moved.
 *
 * Parsing is a single left-to-right pass, linear in the text length; group
 * expansion is linear in the number of ids.  Nothing here allocates per
 * character; results are small arrays owned by fe_hlo_instr.  Unknown
 * element types, unparsed group syntax and overflowing sizes are errors,
 * never silent fallbacks.
 */
#ifndef WISP_FE_HLO_H
#define WISP_FE_HLO_H

#include "common/wisp_util.h"

G_BEGIN_DECLS

/* What an instruction does on the network. */
typedef enum {
  FE_HLO_OTHER = 0,            /* local computation (including XLA `broadcast`) */
  FE_HLO_ALL_REDUCE,
  FE_HLO_ALL_GATHER,
  FE_HLO_REDUCE_SCATTER,
  FE_HLO_ALL_TO_ALL,
  FE_HLO_RAGGED_ALL_TO_ALL,
  FE_HLO_COLLECTIVE_PERMUTE,
  FE_HLO_COLLECTIVE_BROADCAST,
  FE_HLO_SEND,
  FE_HLO_RECV,
} fe_hlo_kind;

/* Synchronous op, the start of an async pair, or its done. */
typedef enum {
  FE_HLO_SYNC = 0,
  FE_HLO_START,
  FE_HLO_DONE,
} fe_hlo_phase;

/* XLA's collective group modes (which ids replica_groups holds). */
typedef enum {
  FE_HLO_MODE_CROSS_REPLICA = 0,            /* no channel_id: replica ids */
  FE_HLO_MODE_CROSS_PARTITION,              /* channel_id, no use_global_device_ids: partition ids */
  FE_HLO_MODE_CROSS_REPLICA_AND_PARTITION,  /* channel_id, use_global_device_ids=false */
  FE_HLO_MODE_FLATTENED_ID,                 /* channel_id, use_global_device_ids=true: global ids */
} fe_hlo_group_mode;

const char *fe_hlo_kind_name(fe_hlo_kind k);       /* "all-gather", ..., "other" */
const char *fe_hlo_mode_name(fe_hlo_group_mode m); /* "flattened-id", ... */

/* Size of one element in bits (pred = 8, s4 = 4, s2 = 2, token = 0).  name
 * need not be NUL-terminated.  Returns FALSE for unknown element types. */
gboolean fe_hlo_dtype_bits(const char *name, size_t len, unsigned *bits);

/* Parses one shape starting at text (array `f32[2,3]{1,0}`, scalar `f32[]`,
 * bounded dynamic dims `<=8` (the bound is used), or a tuple `(s1, s2)`),
 * stores its size in bytes (sub-byte element types rounded up per array)
 * and the end position.  When first_elem_bytes is not NULL it receives the
 * size of the first tuple element (or of the whole shape for arrays). */
gboolean fe_hlo_parse_shape(const char *text, const char **end, uint64_t *bytes,
                            uint64_t *first_elem_bytes, GError **error);

typedef struct {
  char *name;                  /* instruction name without '%' */
  char *opcode;                /* e.g. "all-gather-start" */
  fe_hlo_kind kind;
  fe_hlo_phase phase;
  uint64_t result_bytes;       /* whole result (tuples summed) */
  uint64_t result_first_bytes; /* first tuple element of the result */
  uint32_t n_operands;
  uint32_t n_operand_shapes;   /* operands that carried a shape */
  uint64_t operand_bytes;      /* sum over operands with a shape */
  uint64_t operand0_bytes;     /* first operand */
  char *operand0_name;         /* first operand's name without '%' (async done -> start), or NULL */
  gboolean has_channel_id;
  int64_t channel_id;
  int use_global_device_ids;   /* -1 absent, 0 false, 1 true */
  fe_hlo_group_mode mode;
  /* replica_groups: n_groups groups; group g is ids[group_off[g] .. group_off[g+1]).
   * has_replica_groups with n_groups == 0 is the empty form `{}` (all). */
  gboolean has_replica_groups;
  uint32_t n_groups;
  uint32_t *group_off;
  int64_t *group_ids;
  /* source_target_pairs (or _xla_send_recv_source_target_pairs): pairs[2i] -> pairs[2i+1]. */
  gboolean has_pairs;
  uint32_t n_pairs;
  int64_t *pairs;
  /* Communication size per the convention above; valid when sized. */
  gboolean sized;
  uint64_t bytes;
  gboolean bytes_upper_bound;  /* ragged-all-to-all, bounded dynamic dims */
  gboolean bytes_derived;      /* operand shape absent: derived from result and group size */
} fe_hlo_instr;

/* Classifies an opcode ("all-gather-start" -> ALL_GATHER, START).  For the
 * generic async wrappers (async-start/-done) pass the instruction name, whose
 * XLA-generated prefix names the wrapped collective; may be NULL. */
fe_hlo_kind fe_hlo_classify(const char *opcode, const char *instr_name, fe_hlo_phase *phase);

/* Parses one instruction line.  On failure returns FALSE with a WISP_ERROR_PARSE
 * error that quotes the position; *out is then cleared.  A collective whose
 * size cannot be determined is parsed successfully with sized = FALSE and
 * *unsized_reason (if not NULL) set to a static explanation. */
gboolean fe_hlo_parse_instr(const char *text, fe_hlo_instr *out, const char **unsized_reason,
                            GError **error);
void fe_hlo_instr_clear(fe_hlo_instr *in);

/* Parses replica_groups text (`{{0,1},{2,3}}`, `{}`, or the iota form
 * `[G,S]<=[d0,d1,...]T(p0,p1,...)`) into groups.  Exposed for tests. */
gboolean fe_hlo_parse_replica_groups(const char *text, const char **end, uint32_t *n_groups,
                                     uint32_t **group_off, int64_t **group_ids, GError **error);

/* Maps the instruction's groups to global device ids, given the number of
 * devices in the job and the number of partitions (0 = the default: all
 * devices are partitions of one replica when channel_id is present, else
 * all devices are replicas of one partition).  Each output group is
 * appended to groups as a GArray of int64_t; the empty form yields one
 * group of all devices.  Fails on ids outside [0, n_devices). */
gboolean fe_hlo_global_groups(const fe_hlo_instr *in, int64_t n_devices, int64_t num_partitions,
                              GPtrArray *groups, GError **error);

G_END_DECLS
#endif
