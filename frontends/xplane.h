/* xplane.h: streaming reader for XSpace profiles (`*.xplane.pb`, prefix fe_xplane_).
 *
 * An XSpace (frontends/xplane.proto) holds planes, a plane holds lines, a
 * line holds events.  Decoding a whole XSpace with protobuf-c would allocate
 * one object per event and stat (several times the file size), so this
 * reader walks the XSpace, XPlane, XLine and XEvent levels of the wire
 * format itself (events without any allocation; their stats are decoded on
 * demand) and unpacks only the metadata map entries and plane stats with
 * protobuf-c.  Peak memory is the
 * file image plus one plane's metadata; the work is linear in the file size.
 *
 * Limits (stated, not silent): the whole file image is held in memory
 * (mapped when uncompressed, inflated when gzip-compressed) and must not
 * exceed fe_xplane_limits.max_bytes (default 8 GiB).  Every length prefix is
 * checked against the enclosing message; malformed input (truncated data,
 * wrong wire types, lengths beyond the end, unknown groups) fails with a
 * WISP_ERROR_PARSE error naming the file and byte offset.
 */
#ifndef WISP_FE_XPLANE_H
#define WISP_FE_XPLANE_H

#include "common/wisp_util.h"

G_BEGIN_DECLS

typedef struct {
  uint64_t max_bytes;          /* largest (inflated) file image; 0 = 8 GiB */
} fe_xplane_limits;

/* A file image: mapped or inflated bytes plus the name used in messages. */
typedef struct fe_xplane_file fe_xplane_file;

/* Opens path; gzip input (magic 1f 8b) is inflated in memory. */
fe_xplane_file *fe_xplane_file_open(const char *path, const fe_xplane_limits *lim, GError **error);
/* Wraps a caller-owned buffer (not copied; must outlive the file object). */
fe_xplane_file *fe_xplane_file_new_from_data(const guint8 *data, size_t len, const char *source);
void fe_xplane_file_free(fe_xplane_file *f);
size_t fe_xplane_file_size(const fe_xplane_file *f);
const char *fe_xplane_file_source(const fe_xplane_file *f);

typedef enum {
  FE_XSTAT_NONE = 0,
  FE_XSTAT_DOUBLE,
  FE_XSTAT_UINT,
  FE_XSTAT_INT,
  FE_XSTAT_STR,       /* str_value, or ref_value resolved to the referenced name */
  FE_XSTAT_BYTES,
} fe_xstat_type;

typedef struct {
  fe_xstat_type type;
  double d;
  uint64_t u;
  int64_t i;
  const char *s;       /* STR and BYTES: always use len; event-level strings point
                        * into the file image and are not NUL-terminated */
  size_t len;
} fe_xstat_value;

/* Integer view of a numeric stat (double values must be integral). */
gboolean fe_xstat_as_int64(const fe_xstat_value *v, int64_t *out);

typedef struct fe_xplane_plane fe_xplane_plane;
const char *fe_xplane_plane_name(const fe_xplane_plane *p);
int64_t fe_xplane_plane_id(const fe_xplane_plane *p);
/* Plane-level stat by name; FALSE when absent. */
gboolean fe_xplane_plane_stat(const fe_xplane_plane *p, const char *name, fe_xstat_value *out);

/* One event as the visitor sees it; valid only during the callback. */
typedef struct {
  const fe_xplane_plane *plane;
  const char *line_name;        /* display_name is not used */
  int64_t line_id;
  int64_t line_timestamp_ns;    /* start of the line; offsets are relative to it */
  int64_t metadata_id;
  const char *name;             /* metadata name (full HLO text for XLA ops), "" when unknown */
  const char *display_name;     /* metadata display_name, "" when absent */
  gboolean has_offset;          /* FALSE for aggregated events (num_occurrences) */
  int64_t offset_ps;
  int64_t duration_ps;
  int64_t num_occurrences;
  size_t byte_offset;           /* of the event in the file image, for messages */
  const void *priv_event;
  const void *priv_meta;
} fe_xevent_view;

/* Event stat by name: the event's own stats win over its metadata's.  Event
 * stats are decoded on demand (linear in the event's stat count). */
gboolean fe_xevent_stat(const fe_xevent_view *ev, const char *name, fe_xstat_value *out);
/* The same with the stat id resolved once per plane (the fast path). */
gboolean fe_xplane_stat_id(const fe_xplane_plane *p, const char *name, int64_t *id);
gboolean fe_xevent_stat_by_id(const fe_xevent_view *ev, int64_t id, fe_xstat_value *out);

typedef struct {
  /* Called once per plane after its metadata is decoded; return FALSE to skip its lines. */
  gboolean (*plane)(void *user, const fe_xplane_plane *p);
  /* Called once per line of a visited plane before its events; FALSE skips the line. */
  gboolean (*line)(void *user, const fe_xplane_plane *p, const char *name, int64_t id);
  /* Called per event; return FALSE with *error set to stop the scan. */
  gboolean (*event)(void *user, const fe_xevent_view *ev, GError **error);
  /* Hostnames recorded in the XSpace (may be called several times). */
  void (*hostname)(void *user, const char *name);
} fe_xplane_visitor;

/* Totals of one scan, for reports. */
typedef struct {
  uint64_t planes, lines, events, metadata;
} fe_xplane_counts;

/* Walks the whole XSpace.  Linear in the file size. */
gboolean fe_xplane_scan(const fe_xplane_file *f, const fe_xplane_visitor *vis, void *user,
                        fe_xplane_counts *counts, GError **error);

G_END_DECLS
#endif
