/* xla_internal.h: what the XLA frontend's files share (not installed):
 * the job's ops, chips and reading context, and the steps between them.
 * xla_read.c reads XPlane planes, lines and events into chips of ops;
 * xla_json.c reads XProf trace-viewer JSON into the same; xla_build.c
 * selects steps and builds each rank's graph; xla.c drives them and
 * reports.  Calls go from xla.c to the others and from xla_json.c and
 * xla_build.c to xla_read.c, never back. */
#ifndef WISP_XLA_INTERNAL_H
#define WISP_XLA_INTERNAL_H

#include "frontends/xla.h"
#include "frontends/fe_json.h"
#include "frontends/kineto_commreg.h"
#include "frontends/kineto_rank.h"

G_BEGIN_DECLS

/* One distinct op (HLO instruction text) of the job, shared by all chips. */
typedef struct {
  char *text;
  char *short_name;
  uint32_t index;
  fe_hlo_instr hlo;          /* valid when parsed */
  gboolean parsed;
  fe_hlo_kind kind;
  fe_hlo_phase phase;
  gboolean sized;
  char *unsized_reason;
  /* Global groups, shared with every collective of the same pattern
   * (xla_groups, owned by xla_ctx.groups_by_key); NULL until needed. */
  struct xla_groups *groups;
  gboolean warned_partial;
} xla_info;

/* The global groups of one replica-group pattern (group mode, channel id
 * presence and the listed ids): the groups as GArrays of int64 device ids
 * and, per device, its group.  Real programs use a handful of patterns
 * (data-, tensor-, pipeline-parallel, ...) over thousands of collectives,
 * so sharing them keeps memory at O(patterns x devices) instead of
 * O(collectives x devices): 40 all-device collectives over 2^22 device ids
 * took 2 GB before. */
typedef struct xla_groups {
  GPtrArray *groups;
  int32_t *group_of_device;  /* n_devices entries, -1 when in no group */
  uint32_t *wgroup;          /* workload group index per group, ET_NONE until added */
  int32_t *n_present;        /* members with a rank in the profile, per group (set with wgroup) */
} xla_groups;

typedef struct {
  sim_time_ps start, dur;
  sim_time_ps dev_start, dev_dur;  /* device_clock: the device_*_ps stats, -1 when absent */
  uint32_t info;
  uint32_t seq;
  uint16_t stream;
} xla_op;

typedef struct {
  int file;
  int64_t local_id;
  int64_t global_id;
  GArray *ops;      /* xla_op */
  GArray *steps;    /* sim_time_ps pairs (start, end) */
  GArray *sc_ids;   /* int64 SparseCore index M (TPU) or CUDA stream id (GPU) per stream 1.. */
  gboolean gpu;     /* a /device:GPU:N plane: ops are the kernels of its "Stream #K" lines */
  int64_t replica_of;   /* replicate_missing: device whose ops this chip replays, else -1 */
  sim_time_ps measured; /* measured step (window or first op -> last op), -1 unknown */
} xla_chip;

typedef struct {
  const fe_xla_options *opt;
  fe_xla_report *rep;
  GPtrArray *infos;
  GHashTable *info_by_text;
  GHashTable *groups_by_key; /* groups_key() -> xla_groups* */
  GPtrArray *chips;
  GHashTable *chip_by_key;  /* "file:N" -> xla_chip* */
  int file;
  const char *source;
  const char *const *paths;
  xla_chip *chip;           /* current plane's chip, NULL when skipped */
  gboolean gpu_plane;       /* the current plane is /device:GPU:N */
  uint16_t stream;
  int line_kind;            /* 0 skip, 1 ops, 2 steps */
  GHashTable *meta_cache;   /* current plane: metadata id -> xla_info* */
  gboolean have_flops_id;
  int64_t flops_id;         /* current plane's stat id of model_flops */
  gboolean have_dev_ids;
  int64_t dev_off_id, dev_dur_id; /* current plane's device_offset_ps / device_duration_ps ids */
  gboolean have_base;
  int64_t base_ns;
  uint32_t seq;
  GHashTable *warned;
  int64_t n_devices;
  int32_t *dev_rank;
} xla_ctx;

enum { LINE_SKIP = 0, LINE_OPS = 1, LINE_STEPS = 2 };

/* Bounds on async matching work: starts kept open per chain, and ops a
 * done looks back for its sync-named start (trace JSON form). */
#define XLA_MAX_OPEN 1024u
#define XLA_MAX_LOOKBACK 4096u

/* Records warning msg once (takes it; a repeat is dropped). */
void xla_warn(xla_ctx *c, char *msg);
/* GDestroyNotify of an op record and of a chip. */
void xla_info_free(gpointer p);
void xla_chip_free(gpointer p);
/* Parses "/device:TPU:N" (sc = -1), "/device:TPU:N SparseCore M" or
 * "/device:GPU:N" (*gpu TRUE, sc = -1). */
gboolean xla_parse_plane_name(const char *name, int64_t *chip, int64_t *sc, gboolean *gpu);
/* The chip record of chip n in the current file and the stream of
 * SparseCore sc (-1: the TensorCore stream 0). */
xla_chip *xla_chip_for(xla_ctx *c, int64_t n, int64_t sc, uint16_t *stream);
/* The XPlane visitor (fe_xplane_scan): a plane, a line of it, an event
 * of the line. */
gboolean xla_on_plane(void *user, const fe_xplane_plane *p);
gboolean xla_on_line(void *user, const fe_xplane_plane *p, const char *name, int64_t id);
/* Finds or creates the op record of an HLO text (or bare name) with its
 * display name and hlo_category (both may be "" / NULL). */
xla_info *xla_intern_text(xla_ctx *c, const char *text, const char *display, const char *cat);
gboolean xla_on_event(void *user, const fe_xevent_view *v, GError **error);
/* qsort orders: chips by global device id; ops by (stream, start,
 * sequence). */
int xla_cmp_chip(const void *a, const void *b);
int xla_cmp_op(const void *a, const void *b);
/* The bytes that decide a collective's global groups (for a given device
 * and partition count, fixed per load): what fe_hlo_global_groups reads. */
GBytes *xla_groups_key(const fe_hlo_instr *h);
/* One rank's graph: pair the async ops, then emit every op in (stream,
 * time) order as a chain per stream.  O(ops x XLA_MAX_OPEN) worst case. */
et_graph *xla_build_rank(xla_ctx *c, et_workload *w, xla_chip *chip, int rank, GError **error);
/* Keeps the ops inside the selected step window of each chip. */
gboolean xla_select_steps(xla_ctx *c, sim_time_ps *window_len, GError **error);
/* Global device ids of the chips read (files that reuse chip numbers
 * are offset, with a warning); chips sorted by id. */
gboolean xla_assign_ids(xla_ctx *c);
/* Reads one XProf trace-viewer JSON file: `process_name` metadata events
 * map pids to `/device:TPU:N[ SparseCore M]` (or `/device:GPU:N`);
 * complete events on those pids are ops (device_offset_ps /
 * device_duration_ps when present, else ts / dur); events whose name
 * starts with the step marker (any pid) delimit steps.  Streaming: memory
 * is ~40 bytes per kept event. */
gboolean xla_json_load(xla_ctx *c, const char *path, GError **error);

G_END_DECLS
#endif
