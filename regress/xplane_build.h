/* xplane_build.h: builds small XSpace profiles with protobuf-c, for the
 * XLA tests (regress/test_xla.c) and the fuzzers' seed writer
 * (fuzz/fuzz_seeds.c).  Header only, static helpers; every object is
 * g_malloc'd and freed with protobuf_c_message_free_unpacked on the space.
 * Metadata lookups are linear (profiles built here hold a few dozen). */
#ifndef WISP_XPLANE_BUILD_H
#define WISP_XPLANE_BUILD_H

#include <glib.h>
#include <string.h>
#include <zlib.h>

#include "frontends/xplane.pb-c.h"
#include "regress/test_util.h" /* after zlib.h: test_gzip */

typedef Tensorflow__Profiler__XSpace tp_space;
typedef Tensorflow__Profiler__XPlane tp_plane;
typedef Tensorflow__Profiler__XLine tp_line;
typedef Tensorflow__Profiler__XEvent tp_event;
typedef Tensorflow__Profiler__XStat tp_stat;

/* Appends a slot to a protobuf-c repeated field and returns its address. */
#define GROW(arr, n) ((arr) = g_realloc((arr), sizeof *(arr) * ((n) + 1)), &(arr)[(n)++])

G_GNUC_UNUSED static tp_space *tp_space_new(void)
{
  tp_space *s = g_malloc(sizeof *s);
  tensorflow__profiler__xspace__init(s);
  return s;
}

G_GNUC_UNUSED static tp_plane *tp_plane_add(tp_space *s, int64_t id, const char *name)
{
  tp_plane *p = g_malloc(sizeof *p);
  tensorflow__profiler__xplane__init(p);
  p->id = id;
  p->name = g_strdup(name);
  *GROW(s->planes, s->n_planes) = p;
  return p;
}

/* Id of the plane's stat metadata named `name`, added when missing. */
G_GNUC_UNUSED static int64_t tp_stat_id(tp_plane *p, const char *name)
{
  for (size_t i = 0; i < p->n_stat_metadata; i++)
    if (strcmp(p->stat_metadata[i]->value->name, name) == 0)
      return p->stat_metadata[i]->key;
  Tensorflow__Profiler__XPlane__StatMetadataEntry *e = g_malloc(sizeof *e);
  tensorflow__profiler__xplane__stat_metadata_entry__init(e);
  e->key = (int64_t) p->n_stat_metadata + 100;
  e->value = g_malloc(sizeof *e->value);
  tensorflow__profiler__xstat_metadata__init(e->value);
  e->value->id = e->key;
  e->value->name = g_strdup(name);
  *GROW(p->stat_metadata, p->n_stat_metadata) = e;
  return e->key;
}

G_GNUC_UNUSED static tp_stat *tp_str_stat(tp_plane *p, const char *name, const char *value)
{
  tp_stat *st = g_malloc(sizeof *st);
  tensorflow__profiler__xstat__init(st);
  st->metadata_id = tp_stat_id(p, name);
  st->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE;
  st->str_value = g_strdup(value);
  return st;
}

G_GNUC_UNUSED static tp_stat *tp_int_stat(tp_plane *p, const char *name, int64_t value)
{
  tp_stat *st = g_malloc(sizeof *st);
  tensorflow__profiler__xstat__init(st);
  st->metadata_id = tp_stat_id(p, name);
  st->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE;
  st->int64_value = value;
  return st;
}

/* Event metadata: name = HLO text (may be a bare name), optional display
 * name and hlo_category. */
G_GNUC_UNUSED static int64_t tp_meta(tp_plane *p, const char *name, const char *display, const char *category)
{
  Tensorflow__Profiler__XPlane__EventMetadataEntry *e = g_malloc(sizeof *e);
  tensorflow__profiler__xplane__event_metadata_entry__init(e);
  e->key = (int64_t) p->n_event_metadata + 1;
  e->value = g_malloc(sizeof *e->value);
  tensorflow__profiler__xevent_metadata__init(e->value);
  e->value->id = e->key;
  e->value->name = g_strdup(name);
  e->value->display_name = g_strdup(display ? display : "");
  if (category)
    *GROW(e->value->stats, e->value->n_stats) = tp_str_stat(p, "hlo_category", category);
  *GROW(p->event_metadata, p->n_event_metadata) = e;
  return e->key;
}

G_GNUC_UNUSED static tp_line *tp_line_add(tp_plane *p, int64_t id, const char *name, int64_t ts_ns)
{
  tp_line *l = g_malloc(sizeof *l);
  tensorflow__profiler__xline__init(l);
  l->id = id;
  l->name = g_strdup(name);
  l->timestamp_ns = ts_ns;
  *GROW(p->lines, p->n_lines) = l;
  return l;
}

G_GNUC_UNUSED static tp_event *tp_event_add(tp_line *l, int64_t meta, int64_t offset_ps, int64_t dur_ps)
{
  tp_event *e = g_malloc(sizeof *e);
  tensorflow__profiler__xevent__init(e);
  e->metadata_id = meta;
  e->data_case = TENSORFLOW__PROFILER__XEVENT__DATA_OFFSET_PS;
  e->offset_ps = offset_ps;
  e->duration_ps = dur_ps;
  *GROW(l->events, l->n_events) = e;
  return e;
}

/* The serialized space (g_free it). */
G_GNUC_UNUSED static guint8 *tp_pack(tp_space *s, size_t *len)
{
  *len = tensorflow__profiler__xspace__get_packed_size(s);
  guint8 *buf = g_malloc(*len + 1);
  tensorflow__profiler__xspace__pack(s, buf);
  return buf;
}

#endif
