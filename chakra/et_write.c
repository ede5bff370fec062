/* et_write.c: the Chakra .et writer (et_write_file) and the writing of
 * a workload (rank files with up to N threads, comm_group.json), a
 * hand-written protobuf encoder; see et_read.c for why by hand.
 */
#include "config.h"
#include "chakra/et_io_internal.h"
#include "chakra/et_view.h"
#include "common/wisp_par.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

/* ---- writer: a hand-written protobuf encoder ----
 *
 * Each frame is encoded straight from the graph into one growable byte
 * buffer per file and written out in batches of about WRITE_BATCH bytes: no
 * message structs, no per-node allocation and no separate sizing pass.  The
 * bytes are those protobuf-c produces for et_def.proto (proto3): fields in
 * field-number order; id, name, type, start_time_micros and
 * duration_micros omitted when zero or empty; ctrl_deps / data_deps packed
 * and omitted when empty; an attribute's oneof value always present, even
 * when 0 or false; int32 and int64 values sign-extended to 64 bits (a
 * negative one takes 10 bytes); every length a minimal varint.  The tests
 * check each frame against protobuf-c (unpack, re-pack, compare bytes). */

#define WRITE_BATCH (256u << 10)

/* Wire types and the tags written (field number << 3 | wire type). */
enum { WT_VARINT = 0, WT_LEN = 2 };
#define TAG(field, wt) (((uint32_t)(field) << 3) | (wt))
enum {
  NODE_ID = 1, NODE_NAME = 2, NODE_TYPE = 3, NODE_CTRL_DEPS = 4, NODE_DATA_DEPS = 5, NODE_START = 6,
  NODE_DURATION = 7, NODE_ATTR = 10,
  ATTR_NAME = 1, ATTR_INT32 = 7, ATTR_INT64 = 9, ATTR_INT64_LIST = 10, ATTR_UINT64 = 13, ATTR_BOOL = 27,
  ATTR_STRING = 29,
  META_VERSION = 1, META_ATTR = 2, LIST_VALUES = 1,
};

static inline size_t varint_size(uint64_t v)
{
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

/* Writes v as a varint at p (at most 10 bytes) and returns the end. */
static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
  while (v >= 0x80) {
    *p++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *p++ = (uint8_t)v;
  return p;
}

/* The length and the len bytes at s (a length-delimited value's body). */
static inline uint8_t *put_len_bytes(uint8_t *p, const void *s, size_t len)
{
  p = put_varint(p, len);
  memcpy(p, s, len);
  return p + len;
}

static inline uint8_t *put_bytes(uint8_t *p, uint32_t tag, const void *s, size_t len)
{
  return put_len_bytes(put_varint(p, tag), s, len);
}

/* A length-delimited body whose size is not known in advance starts one
 * byte after its length slot (len_open); len_close writes the minimal varint
 * length there, moving the body up by the extra bytes when it is 128 bytes
 * or longer (the caller reserved room for that).  Returns the new end. */
static inline uint8_t *len_open(uint8_t *p)
{
  return p + 1;
}

static inline uint8_t *len_close(uint8_t *body, uint8_t *end)
{
  size_t n = (size_t)(end - body);
  if (n < 0x80) {
    body[-1] = (uint8_t)n;
    return end;
  }
  size_t extra = varint_size(n) - 1;
  memmove(body + extra, body, n);
  put_varint(body - 1, n);
  return end + extra;
}

/* One attribute entry of a message whose attr field is `container`
 * (Node.attr or GlobalMetadata.attr): tag, length, name, then the value's
 * tag (the value itself follows).  value_len counts the value's tag and
 * bytes. */
static inline uint8_t *put_attr_head_in(uint8_t *p, uint32_t container, const char *name, size_t name_len,
                                        uint32_t value_tag, size_t value_len)
{
  p = put_varint(p, TAG(container, WT_LEN));
  p = put_varint(p, 1 + varint_size(name_len) + name_len + value_len);
  p = put_bytes(p, TAG(ATTR_NAME, WT_LEN), name, name_len);
  return put_varint(p, value_tag);
}
#define put_attr_head(p, name, name_len, value_tag, value_len) \
  put_attr_head_in(p, NODE_ATTR, name, name_len, value_tag, value_len)

/* Bytes put_attr_varint_in writes for an attribute named name_len bytes. */
static inline size_t attr_varint_size(size_t name_len, uint32_t field, uint64_t v)
{
  size_t body = 1 + varint_size(name_len) + name_len + varint_size(TAG(field, WT_VARINT)) + varint_size(v);
  return 1 + varint_size(body) + body;
}

/* Integer attributes: int64_val / uint64_val / int32_val / bool_val.  The
 * names are literals, so sizeof gives their length at compile time. */
static inline uint8_t *put_attr_varint_in(uint8_t *p, uint32_t container, const char *name, size_t name_len,
                                          uint32_t field, uint64_t v)
{
  uint32_t tag = TAG(field, WT_VARINT);
  p = put_attr_head_in(p, container, name, name_len, tag, varint_size(tag) + varint_size(v));
  return put_varint(p, v);
}
#define put_attr_varint(p, name, name_len, field, v) put_attr_varint_in(p, NODE_ATTR, name, name_len, field, v)
#define ATTR_I64(p, name, v) put_attr_varint(p, name, sizeof(name) - 1, ATTR_INT64, (uint64_t)(int64_t)(v))
#define ATTR_U64(p, name, v) put_attr_varint(p, name, sizeof(name) - 1, ATTR_UINT64, (uint64_t)(v))
#define ATTR_I32(p, name, v) put_attr_varint(p, name, sizeof(name) - 1, ATTR_INT32, (uint64_t)(int64_t)(int32_t)(v))
#define ATTR_BOOL(p, name, v) put_attr_varint(p, name, sizeof(name) - 1, ATTR_BOOL, (v) ? 1u : 0u)

static inline uint8_t *put_attr_string(uint8_t *p, const char *name, size_t name_len, const char *s, size_t len)
{
  uint32_t tag = TAG(ATTR_STRING, WT_LEN);
  p = put_attr_head(p, name, name_len, tag, varint_size(tag) + varint_size(len) + len);
  return put_len_bytes(p, s, len);
}

/* int64_list attribute holding the values as packed int64 (values above
 * INT64_MAX keep their bits, as the int64 cast does in protobuf-c). */
static inline uint8_t *put_attr_i64_list(uint8_t *p, const char *name, size_t name_len, const uint64_t *v,
                                         uint32_t n)
{
  size_t payload = 0;
  for (uint32_t j = 0; j < n; j++)
    payload += varint_size(v[j]);
  size_t list = n ? 1 + varint_size(payload) + payload : 0; /* Int64List body */
  uint32_t tag = TAG(ATTR_INT64_LIST, WT_LEN);
  p = put_attr_head(p, name, name_len, tag, varint_size(tag) + varint_size(list) + list);
  p = put_varint(p, list);
  if (n) {
    p = put_varint(p, TAG(LIST_VALUES, WT_LEN));
    p = put_varint(p, payload);
    for (uint32_t j = 0; j < n; j++)
      p = put_varint(p, v[j]);
  }
  return p;
}

/* Packed ctrl_deps (want = ET_EDGE_CTRL) or data_deps (ET_EDGE_DATA): the
 * ids of the parent entries carrying that bit, in parent_edges order;
 * nothing when there is none. */
static inline uint8_t *put_deps(uint8_t *p, const et_graph *g, const et_node *nd, uint32_t field, uint32_t want)
{
  uint8_t *tag_at = p;
  p = put_varint(p, TAG(field, WT_LEN));
  uint8_t *body = len_open(p), *q = body;
  for (uint32_t e = nd->parents; e < nd[1].parents; e++) {
    uint32_t pe = g->parent_edges[e];
    if (pe & want)
      q = put_varint(q, g->nodes[ET_EDGE_INDEX(pe)].id);
  }
  return q == body ? tag_at : len_close(body, q);
}

/* Nearest whole microsecond, ties away from zero, for t >= 0. */
static uint64_t us_round(sim_time_ps t)
{
  return (uint64_t)((t + SIM_PS_PER_US / 2) / SIM_PS_PER_US);
}

/* Output of one file: the frames not yet written sit in buf[0..len). */
typedef struct {
  FILE *out;
  uint8_t *buf;
  size_t len, cap;
  int err;  /* errno of a failed write, 0 when none failed */
} frame_writer;

/* Makes room for `more` bytes after the pending ones and returns where they
 * start. */
static uint8_t *fw_reserve(frame_writer *fw, size_t more)
{
  if (fw->len + more > fw->cap) {
    fw->cap = MAX(fw->len + more, fw->cap * 2);
    fw->buf = g_realloc(fw->buf, fw->cap);
  }
  return fw->buf + fw->len;
}

/* Writes the pending bytes; FALSE (errno kept in fw->err) on failure. */
static gboolean fw_flush(frame_writer *fw)
{
  size_t n = fw->len;
  fw->len = 0;
  if (n == 0 || fwrite(fw->buf, 1, n, fw->out) == n)
    return TRUE;
  fw->err = errno ? errno : EIO;
  return FALSE;
}

/* A worker of a parallel workload write gives up on its rank (abort, no
 * error) once a lower rank has failed: that rank's error is the one
 * reported, and this file would only outlive a failed run. */
static gboolean write_cancelled(const gint *first_failed, int rank)
{
  return first_failed != NULL && g_atomic_int_get(first_failed) < rank;
}

/* Writes one graph; group_ids (may be NULL) maps group indices, looked up
 * through w->group_index by pg_name, to the pg_name written.  With
 * first_failed non-NULL this is rank `rank` of a parallel workload write:
 * when write_cancelled() turns true (checked after every batch and before
 * the commit) the temporary file is removed and FALSE is returned without
 * an error.  Time O(nodes + edges + bytes written); memory one batch
 * (WRITE_BATCH plus the largest frame) and, for graphs not in topological
 * index order, 12 bytes per node. */
/* The GlobalMetadata frame of rank `rank`: version, attrs
 * wisp_compute_slots, wisp_measured_step_ps and wisp_measured_start_ps
 * when known; the version is never empty, so the frame never is.  The
 * measured times come from the workload (the rank's entry), else from the
 * graph as read. */
static void put_metadata(frame_writer *fw, const et_graph *g, const et_workload *w, int rank)
{
  static const char slots_name[] = "wisp_compute_slots";
  static const char step_name[] = "wisp_measured_step_ps";
  static const char start_name[] = "wisp_measured_start_ps";
  sim_time_ps mstep = g->measured_step_ps, mstart = g->measured_start_ps;
  if (w != NULL) {
    mstep = w->measured_step_ps != NULL ? w->measured_step_ps[rank] : -1;
    mstart = w->measured_start_ps != NULL ? w->measured_start_ps[rank] : -1;
  }
  const char *version = g->version && g->version[0] ? g->version : "0.0.4";
  size_t vlen = strlen(version);
  size_t slots_len = g->compute_slots ? attr_varint_size(sizeof slots_name - 1, ATTR_INT64, g->compute_slots) : 0;
  size_t step_len = mstep >= 0 ? attr_varint_size(sizeof step_name - 1, ATTR_INT64, (uint64_t)mstep) : 0;
  size_t start_len = mstart >= 0 ? attr_varint_size(sizeof start_name - 1, ATTR_INT64, (uint64_t)mstart) : 0;
  uint8_t *p = fw_reserve(fw, 16 + vlen + slots_len + step_len + start_len);
  p = put_varint(p, 1 + varint_size(vlen) + vlen + slots_len + step_len + start_len);
  p = put_bytes(p, TAG(META_VERSION, WT_LEN), version, vlen);
  if (g->compute_slots)
    p = put_attr_varint_in(p, META_ATTR, slots_name, sizeof slots_name - 1, ATTR_INT64, g->compute_slots);
  if (mstep >= 0)
    p = put_attr_varint_in(p, META_ATTR, step_name, sizeof step_name - 1, ATTR_INT64, (uint64_t)mstep);
  if (mstart >= 0)
    p = put_attr_varint_in(p, META_ATTR, start_name, sizeof start_name - 1, ATTR_INT64, (uint64_t)mstart);
  fw->len = (size_t)(p - fw->buf);

}

/* Node i's attributes after its fields: is_cpu_op, the computation's
 * num_ops and tensor_size, the communication's type, size, pg_name (pg,
 * pg_len; NULL = none), peers, tag, root, all-to-allv splits (sw of them),
 * buffer and allocation time, and wisp's own flags and exact times, so
 * idle gaps and replayed communication survive a round trip.  Returns the
 * end of what was written. */
static uint8_t *put_node_attrs(uint8_t *p, const et_graph *g, uint32_t i, const et_comm *c, const char *pg,
                               size_t pg_len, uint32_t sw, gboolean fine_start)
{
  const et_node *nd = &g->nodes[i];
  p = ATTR_BOOL(p, "is_cpu_op", (nd->flags & ET_FLAG_CPU_OP) != 0);
  const et_comp_attr *ca = g->n_comp_attrs ? et_graph_comp_attr(g, i) : NULL;
  if (nd->type == ET_NODE_COMP || ca != NULL) {
    if (nd->type == ET_NODE_COMP || ca->num_ops != 0)
      p = ATTR_I64(p, "num_ops", ca ? ca->num_ops : 0);
    if (ca && ca->has_tensor_size)
      p = ATTR_U64(p, "tensor_size", ca->tensor_size);
    if (ca && ca->module)
      p = put_attr_string(p, "wisp_module", sizeof("wisp_module") - 1, g->strings + ca->module,
                          strlen(g->strings + ca->module));
  }
  if (c != NULL) {
    if (c->coll != ET_COLL_NONE)
      p = ATTR_I64(p, "comm_type", c->coll == ET_COLL_ALL_TO_ALLV ? ET_COLL_ALL_TO_ALL : c->coll);
    if (!(nd->flags & ET_FLAG_REPLAY) || c->bytes != 0)
      p = ATTR_I64(p, "comm_size", (int64_t)c->bytes);
    if (pg != NULL)
      p = put_attr_string(p, "pg_name", sizeof("pg_name") - 1, pg, pg_len);
    if (c->src >= 0)
      p = ATTR_I32(p, "comm_src", c->src);
    if (c->dst >= 0)
      p = ATTR_I32(p, "comm_dst", c->dst);
    if (c->tag >= 0)
      p = ATTR_I32(p, "comm_tag", c->tag);
    if (c->root >= 0)
      p = ATTR_I32(p, "wisp_root", c->root);
    if (c->coll == ET_COLL_ALL_TO_ALLV && c->split != ET_NONE)
      p = put_attr_i64_list(p, "wisp_split_sizes", sizeof("wisp_split_sizes") - 1, g->splits + c->split, sw);
    if (c->coll == ET_COLL_ALL_TO_ALLV && c->split != ET_NONE && c->two_hop != 0) {
      p = ATTR_I64(p, "wisp_two_hop", c->two_hop);
      p = ATTR_I64(p, "wisp_two_hop_ppm", c->two_hop_ppm);
    }
    if (c->buffer != 0)
      p = ATTR_U64(p, "wisp_buffer", c->buffer);
    if (c->has_alloc)
      p = ATTR_I64(p, "wisp_alloc_ps", c->alloc_ps);
  }
  /* Other readers ignore unknown attributes. */
  if ((nd->type == ET_NODE_COMP || nd->type == ET_NODE_COMM_COLL) && (nd->flags & ET_FLAG_DELAY))
    p = ATTR_BOOL(p, "wisp_delay", TRUE);
  if (nd->type != ET_NODE_COMP && (nd->flags & ET_FLAG_REPLAY) && !(nd->flags & ET_FLAG_CPU_OP) &&
      !(nd->type == ET_NODE_COMM_COLL && (c == NULL || c->coll == ET_COLL_NONE)))
    p = ATTR_BOOL(p, "wisp_replay", TRUE);
  if (nd->duration_ps % SIM_PS_PER_US != 0)
    p = ATTR_I64(p, "wisp_duration_ps", nd->duration_ps);
  if (fine_start)
    p = ATTR_I64(p, "wisp_start_ps", nd->start_ps);

  return p;
}

static gboolean write_graph(const et_graph *g, const char *path, const et_workload *w, char **group_ids,
                            const gint *first_failed, int rank, GError **error)
{
  g_return_val_if_fail(g != NULL && path != NULL, FALSE);
  if (g->n_nodes == 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: refusing to write a rank file without nodes", path);
    return FALSE;
  }
  wisp_afile *af = wisp_afile_open(path, error);
  if (af == NULL)
    return FALSE;
  frame_writer fw = {.out = wisp_afile_stream(af), .cap = WRITE_BATCH + 4096};
  fw.buf = g_malloc(fw.cap);
  gboolean ok = TRUE;

  put_metadata(&fw, g, w, rank);
  /* A rank sharing another rank's graph writes its own records: peers,
   * group and root translated (chakra/et_share.h). */
  const et_share *sh = w == NULL ? NULL : w->scale ? et_scale_share(w->scale) : w->share;
  int traced = w != NULL && w->scale ? et_scale_counterpart(w->scale, rank) : rank;
  gboolean shared = sh != NULL && et_share_canonical(sh, traced) != traced;
  uint32_t *order = et_graph_topo_order(g); /* parents first, for windowed readers */
  char idbuf[24];
  for (uint32_t k = 0; k < g->n_nodes; k++) {
    uint32_t i = order ? order[k] : k;
    const et_node *nd = &g->nodes[i];
    const char *name = g->strings + nd->name;
    size_t name_len = strlen(name);
    uint32_t np = nd[1].parents - nd->parents;
    et_comm tc;
    const et_comm *c = shared && nd->comm != ET_NONE ? et_workload_traced_comm(w, rank, nd->comm, &tc) : et_node_comm(g, i);
    const char *pg = NULL;
    size_t pg_len = 0;
    if (c != NULL && c->pg_name != ET_NONE) {
      pg = shared && c->group != ET_GROUP_WORLD ? et_workload_group(w, c->group)->name : g->strings + c->pg_name;
      if (group_ids != NULL && pg[0] != '\0') {
        gpointer gi = g_hash_table_lookup(w->group_index, pg);
        if (gi == NULL) {
          g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                      "%s: node id %" G_GUINT64_FORMAT ": pg_name \"%s\" names no group of the workload",
                      g->source ? g->source : path, nd->id, pg);
          ok = FALSE;
          break;
        }
        g_strlcpy(idbuf, group_ids[GPOINTER_TO_UINT(gi) - 1], sizeof(idbuf));
        pg = idbuf;
      }
      pg_len = strlen(pg);
    }
    uint32_t sw = c != NULL && c->coll == ET_COLL_ALL_TO_ALLV && c->split != ET_NONE ? g->split_width : 0;
    /* Upper bound of the frame: 5 bytes per length and 11 per tagged varint
     * (fields, deps, lengths, fixed-size attributes: 19 attributes of at
     * most 36 bytes) plus the variable parts. */
    size_t bound = 1024 + name_len + pg_len + 20 * (size_t)np + 10 * (size_t)sw;
    uint8_t *frame = fw_reserve(&fw, bound);
    uint8_t *body = len_open(frame);
    uint8_t *p = body;

    if (nd->id != 0) {
      p = put_varint(p, TAG(NODE_ID, WT_VARINT));
      p = put_varint(p, nd->id);
    }
    if (name_len > 0)
      p = put_bytes(p, TAG(NODE_NAME, WT_LEN), name, name_len);
    if (nd->type != 0) {
      p = put_varint(p, TAG(NODE_TYPE, WT_VARINT));
      p = put_varint(p, nd->type);
    }
    p = put_deps(p, g, nd, NODE_CTRL_DEPS, ET_EDGE_CTRL);
    p = put_deps(p, g, nd, NODE_DATA_DEPS, ET_EDGE_DATA);
    uint64_t start_us = 0, duration_us = us_round(nd->duration_ps);
    gboolean fine_start = FALSE;
    if (nd->flags & ET_FLAG_HAS_START) {
      if (nd->start_ps >= 0)
        start_us = us_round(nd->start_ps);
      fine_start = nd->start_ps < 0 || start_us == 0 || nd->start_ps % SIM_PS_PER_US != 0;
    }
    if (start_us != 0) {
      p = put_varint(p, TAG(NODE_START, WT_VARINT));
      p = put_varint(p, start_us);
    }
    if (duration_us != 0) {
      p = put_varint(p, TAG(NODE_DURATION, WT_VARINT));
      p = put_varint(p, duration_us);
    }

    p = put_node_attrs(p, g, i, c, pg, pg_len, sw, fine_start);

    g_assert((size_t)(p - body) <= UINT32_MAX); /* the frame length prefix is a varint32 */
    p = len_close(body, p);
    g_assert((size_t)(p - frame) <= bound);
    fw.len = (size_t)(p - fw.buf);
    if (fw.len >= WRITE_BATCH) {
      if (!fw_flush(&fw) || write_cancelled(first_failed, rank)) {
        ok = FALSE;
        break;
      }
    }
  }
  ok = ok && fw_flush(&fw) && !write_cancelled(first_failed, rank);
  if (fw.err != 0)
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot write: %s", path, g_strerror(fw.err));
  g_free(order);
  g_free(fw.buf);
  if (!ok) {
    wisp_afile_abort(af);
    return FALSE;
  }
  return wisp_afile_commit(af, error);
}

gboolean et_write_file(const et_graph *g, const char *path, GError **error)
{
  return write_graph(g, path, NULL, NULL, NULL, 0, error);
}

/* The jobs of one et_workload_write_threads call (wisp_run_jobs).
 * errors[r] is written only by the worker writing rank r; the rest is
 * read-only while the workers run (GHashTable lookups do not modify the
 * table). */
typedef struct {
  const et_workload *w;
  const char *dir, *prefix;
  char **group_ids;        /* NULL when the group names are written as they are */
  GError **errors;         /* per rank; NULL = written (or given up, see write_cancelled) */
} rank_work;

/* Writes rank r; FALSE only when it failed (a write given up because a
 * lower rank failed is not a failure of its own). */
static gboolean write_rank(void *ctx, int r, const gint *first_failed)
{
  rank_work *rw = ctx;
  char *base = g_strdup_printf("%s.%d.et", rw->prefix, r);
  char *path = g_build_filename(rw->dir, base, NULL);
  gboolean ok = write_graph(rw->w->ranks[r], path, rw->w, rw->group_ids, first_failed, r, &rw->errors[r]) ||
                rw->errors[r] == NULL;
  g_free(base);
  g_free(path);
  return ok;
}

/* Writes every rank file with up to `threads` workers (the calling thread
 * is one of them).  Returns FALSE with the error of the lowest failing
 * rank. */
static gboolean write_ranks(const et_workload *w, const char *dir, const char *prefix, char **group_ids,
                            int threads, GError **error)
{
  rank_work rw = {.w = w, .dir = dir, .prefix = prefix, .group_ids = group_ids,
                  .errors = g_new0(GError *, MAX(w->n_ranks, 1))};
  int first_failed = wisp_run_jobs(w->n_ranks, threads, write_rank, &rw);
  gboolean ok = first_failed == w->n_ranks;
  if (!ok)
    g_propagate_error(error, g_steal_pointer(&rw.errors[first_failed]));
  for (int r = 0; r < w->n_ranks; r++)
    if (rw.errors[r] != NULL)
      g_error_free(rw.errors[r]);
  g_free(rw.errors);
  return ok;
}

gboolean et_workload_write(const et_workload *w, const char *dir, const char *prefix, GError **error)
{
  return et_workload_write_threads(w, dir, prefix, 0, error);
}

gboolean et_workload_write_threads(const et_workload *w, const char *dir, const char *prefix, int threads,
                                   GError **error)
{
  g_return_val_if_fail(w != NULL && dir != NULL && prefix != NULL && threads >= 0, FALSE);
  /* The files are named PREFIX.<rank>.et inside dir: a prefix with a path
   * separator or a dot-dot would put them elsewhere (convert -p '../x'). */
  if (*prefix == '\0' || strchr(prefix, '/') != NULL || strcmp(prefix, ".") == 0 || strcmp(prefix, "..") == 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "prefix '%s': give a plain file name prefix (no '/', not "
                "'.' or '..'); the files go into %s", prefix, dir);
    return FALSE;
  }
  if (threads == 0 && !wisp_threads_default(&threads, error))
    return FALSE;
  for (int r = 0; r < w->n_ranks; r++)
    if (w->ranks[r] == NULL) {
      char *base = g_strdup_printf("%s.%d.et", prefix, r);
      char *path = g_build_filename(dir, base, NULL);
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: rank %d has no graph; nothing was written", path, r);
      g_free(base);
      g_free(path);
      return FALSE;
    }
  guint ng = w->groups->len;
  gboolean all_ids = TRUE, any_desc = FALSE;
  for (guint k = 0; k < ng; k++) {
    const et_group *grp = g_ptr_array_index(w->groups, k);
    all_ids = all_ids && et_io_is_group_id(grp->name);
    any_desc = any_desc || grp->desc != NULL;
  }
  char **ids = g_new0(char *, ng + 1);
  for (guint k = 0; k < ng; k++) {
    const et_group *grp = g_ptr_array_index(w->groups, k);
    ids[k] = all_ids ? g_strdup(grp->name) : g_strdup_printf("%u", k + 1);
  }
  gboolean ok = write_ranks(w, dir, prefix, all_ids ? NULL : ids, threads, error);
  if (ok && ng > 0) {
    /* The layout of Python's json.dumps(indent=2), as CCL-Bench writes it. */
    GString *s = g_string_new("{");
    for (guint k = 0; k < ng; k++) {
      const et_group *grp = g_ptr_array_index(w->groups, k);
      g_string_append_printf(s, "%s\n  \"%s\": [", k ? "," : "", ids[k]);
      for (int j = 0; j < grp->n_ranks; j++)
        g_string_append_printf(s, "%s\n    %d", j ? "," : "", grp->ranks[j]);
      g_string_append(s, "\n  ]");
    }
    g_string_append(s, "\n}\n");
    char *path = g_build_filename(dir, "comm_group.json", NULL);
    ok = wisp_write_file_atomic(path, s->str, s->len, error);
    g_free(path);
    g_string_free(s, TRUE);
  }
  if (ok && ng > 0 && (!all_ids || any_desc)) {
    cJSON *root = cJSON_CreateObject();
    for (guint k = 0; k < ng; k++) {
      const et_group *grp = g_ptr_array_index(w->groups, k);
      cJSON *o = cJSON_AddObjectToObject(root, ids[k]);
      cJSON_AddStringToObject(o, "name", grp->name);
      if (grp->desc)
        cJSON_AddStringToObject(o, "desc", grp->desc);
    }
    char *text = cJSON_Print(root);
    char *path = g_build_filename(dir, "comm_group_names.json", NULL);
    GString *s = g_string_new(text);
    g_string_append_c(s, '\n');
    ok = wisp_write_file_atomic(path, s->str, s->len, error);
    g_string_free(s, TRUE);
    g_free(path);
    cJSON_free(text);
    cJSON_Delete(root);
  }
  /* A group file left from an earlier run would describe other groups. */
  if (ok && ng == 0) {
    char *path = g_build_filename(dir, "comm_group.json", NULL);
    g_unlink(path);
    g_free(path);
  }
  if (ok && (ng == 0 || (all_ids && !any_desc))) {
    char *path = g_build_filename(dir, "comm_group_names.json", NULL);
    g_unlink(path);
    g_free(path);
  }
  g_strfreev(ids);
  return ok;
}
