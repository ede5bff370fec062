/* fuzz_seeds.c: writes the binary seed inputs of the fuzz harnesses.
 *
 *   fuzz_seeds xplane DIR   small XSpace profiles (plain and gzip)
 *   fuzz_seeds et DIR       small Chakra ET files (plain and gzip)
 *
 * The XSpaces are built with protobuf-c from frontends/xplane.proto (the
 * schema the reader follows): two TPU chips with an `XLA Ops` line holding
 * a fusion, a synchronous all-reduce, an async all-gather pair and a
 * collective-permute (HLO text as metadata names, hlo_category and device
 * time stats), a `Steps` line, a SparseCore plane and a host plane with a
 * hostname.  The ET files are built with wisp's own builder and writer
 * (et_builder_*, et_write_file): compute, every collective kind with a
 * pg_name, an all-to-all-v, SEND/RECV and both dependency kinds.  Run by
 * fuzz/run.sh; the seeds only give the fuzzer a valid starting point.
 */
#include "config.h"

#include "chakra/et_io.h"
#include "frontends/xplane.pb-c.h"

#include <stdio.h>
#include <string.h>
#include <zlib.h>

typedef Tensorflow__Profiler__XSpace tp_space;
typedef Tensorflow__Profiler__XPlane tp_plane;
typedef Tensorflow__Profiler__XLine tp_line;
typedef Tensorflow__Profiler__XEvent tp_event;
typedef Tensorflow__Profiler__XStat tp_stat;

#define GROW(arr, n) ((arr) = g_realloc((arr), sizeof *(arr) * ((n) + 1)), &(arr)[(n)++])

static int64_t stat_id(tp_plane *p, const char *name)
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

static tp_stat *str_stat(tp_plane *p, const char *name, const char *value)
{
  tp_stat *st = g_malloc(sizeof *st);
  tensorflow__profiler__xstat__init(st);
  st->metadata_id = stat_id(p, name);
  st->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE;
  st->str_value = g_strdup(value);
  return st;
}

static tp_stat *int_stat(tp_plane *p, const char *name, int64_t value)
{
  tp_stat *st = g_malloc(sizeof *st);
  tensorflow__profiler__xstat__init(st);
  st->metadata_id = stat_id(p, name);
  st->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE;
  st->int64_value = value;
  return st;
}

static int64_t meta(tp_plane *p, const char *name, const char *category)
{
  Tensorflow__Profiler__XPlane__EventMetadataEntry *e = g_malloc(sizeof *e);
  tensorflow__profiler__xplane__event_metadata_entry__init(e);
  e->key = (int64_t) p->n_event_metadata + 1;
  e->value = g_malloc(sizeof *e->value);
  tensorflow__profiler__xevent_metadata__init(e->value);
  e->value->id = e->key;
  e->value->name = g_strdup(name);
  e->value->display_name = g_strdup("");
  if (category)
    *GROW(e->value->stats, e->value->n_stats) = str_stat(p, "hlo_category", category);
  *GROW(p->event_metadata, p->n_event_metadata) = e;
  return e->key;
}

static tp_plane *plane_add(tp_space *s, int64_t id, const char *name)
{
  tp_plane *p = g_malloc(sizeof *p);
  tensorflow__profiler__xplane__init(p);
  p->id = id;
  p->name = g_strdup(name);
  *GROW(s->planes, s->n_planes) = p;
  return p;
}

static tp_line *line_add(tp_plane *p, int64_t id, const char *name, int64_t ts_ns)
{
  tp_line *l = g_malloc(sizeof *l);
  tensorflow__profiler__xline__init(l);
  l->id = id;
  l->name = g_strdup(name);
  l->timestamp_ns = ts_ns;
  *GROW(p->lines, p->n_lines) = l;
  return l;
}

static tp_event *event_add(tp_plane *p, tp_line *l, int64_t m, int64_t off_ps, int64_t dur_ps, gboolean dev)
{
  tp_event *e = g_malloc(sizeof *e);
  tensorflow__profiler__xevent__init(e);
  e->metadata_id = m;
  e->data_case = TENSORFLOW__PROFILER__XEVENT__DATA_OFFSET_PS;
  e->offset_ps = off_ps;
  e->duration_ps = dur_ps;
  if (dev) {
    *GROW(e->stats, e->n_stats) = int_stat(p, "device_offset_ps", off_ps + 7);
    *GROW(e->stats, e->n_stats) = int_stat(p, "device_duration_ps", dur_ps);
  }
  *GROW(l->events, l->n_events) = e;
  return e;
}

static void chip_plane(tp_space *s, int chip, gboolean groups_of_two)
{
  char *name = g_strdup_printf("/device:TPU:%d", chip);
  tp_plane *p = plane_add(s, chip + 1, name);
  g_free(name);
  const char *rg = groups_of_two ? "replica_groups={{0,1}}" : "replica_groups={}";
  char *ar = g_strdup_printf("%%all-reduce.1 = f32[1024]{0} all-reduce(f32[1024]{0} %%p), %s, to_apply=%%add", rg);
  int64_t fusion = meta(p, "%fusion.1 = f32[1024]{0} fusion(f32[1024]{0} %a), kind=kLoop", "non-communication");
  int64_t m_ar = meta(p, ar, "all-reduce");
  int64_t m_ags = meta(p, "%all-gather-start.2 = (bf16[2,128]{1,0}, bf16[4,128]{1,0}) all-gather-start("
                          "bf16[2,128]{1,0} %q), channel_id=3, replica_groups=[1,2]<=[2], dimensions={0}, "
                          "use_global_device_ids=true", "all-gather");
  int64_t m_agd = meta(p, "%all-gather-done.2 = bf16[4,128]{1,0} all-gather-done((bf16[2,128]{1,0}, "
                          "bf16[4,128]{1,0}) %all-gather-start.2)", "all-gather");
  int64_t m_cp = meta(p, "%collective-permute.4 = s8[64]{0} collective-permute(s8[64]{0} %r), channel_id=5, "
                         "source_target_pairs={{0,1},{1,0}}", "collective-permute");
  int64_t m_step = meta(p, "0", NULL);
  g_free(ar);
  tp_line *ops = line_add(p, 1, "XLA Ops", 1000);
  event_add(p, ops, fusion, 0, 5000, TRUE);
  event_add(p, ops, m_ar, 6000, 3000, TRUE);
  event_add(p, ops, m_ags, 10000, 100, TRUE);
  event_add(p, ops, fusion, 10200, 900, TRUE);
  event_add(p, ops, m_agd, 11200, 400, TRUE);
  event_add(p, ops, m_cp, 12000, 700, FALSE);
  tp_line *steps = line_add(p, 2, "Steps", 1000);
  event_add(p, steps, m_step, 0, 6000, FALSE);
  event_add(p, steps, m_step, 6000, 7000, FALSE);
  tp_line *mods = line_add(p, 3, "XLA Modules", 1000);
  event_add(p, mods, meta(p, "train_step(1)", NULL), 0, 13000, FALSE);
}

static gboolean write_bytes(const char *dir, const char *name, const void *data, size_t len)
{
  char *path = g_build_filename(dir, name, NULL);
  GError *err = NULL;
  gboolean ok = g_file_set_contents(path, data, (gssize) len, &err);
  if (!ok) {
    fprintf(stderr, "fuzz_seeds: %s\n", err->message);
    g_error_free(err);
  }
  g_free(path);
  return ok;
}

static gboolean write_gzip(const char *dir, const char *name, const guint8 *data, size_t len)
{
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  if (deflateInit2(&zs, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return FALSE;
  size_t cap = deflateBound(&zs, (uLong) len) + 64;
  guint8 *out = g_malloc(cap);
  zs.next_in = (Bytef *) data;
  zs.avail_in = (uInt) len;
  zs.next_out = out;
  zs.avail_out = (uInt) cap;
  gboolean ok = deflate(&zs, Z_FINISH) == Z_STREAM_END;
  size_t out_len = cap - zs.avail_out;
  deflateEnd(&zs);
  ok = ok && write_bytes(dir, name, out, out_len);
  g_free(out);
  return ok;
}

static gboolean write_space(tp_space *s, const char *dir, const char *name, gboolean also_gzip)
{
  size_t len = tensorflow__profiler__xspace__get_packed_size(s);
  guint8 *buf = g_malloc(len + 1);
  tensorflow__profiler__xspace__pack(s, buf);
  gboolean ok = write_bytes(dir, name, buf, len);
  if (ok && also_gzip) {
    char *gzname = g_strconcat(name, ".gz", NULL);
    ok = write_gzip(dir, gzname, buf, len);
    g_free(gzname);
  }
  g_free(buf);
  protobuf_c_message_free_unpacked(&s->base, NULL);
  return ok;
}

static gboolean seeds_xplane(const char *dir)
{
  /* Two chips, groups of two, a SparseCore and a host plane. */
  tp_space *s = g_malloc(sizeof *s);
  tensorflow__profiler__xspace__init(s);
  chip_plane(s, 0, TRUE);
  chip_plane(s, 1, TRUE);
  tp_plane *sc = plane_add(s, 10, "/device:TPU:0 SparseCore 0");
  tp_line *l = line_add(sc, 1, "XLA Ops", 1000);
  event_add(sc, l, meta(sc, "%fusion.9 = f32[8]{0} fusion(f32[8]{0} %x), kind=kLoop", NULL), 100, 2000, FALSE);
  tp_plane *host = plane_add(s, 20, "/host:CPU");
  *GROW(host->stats, host->n_stats) = str_stat(host, "device_type_string", "CPU");
  *GROW(s->hostnames, s->n_hostnames) = g_strdup("host0");
  if (!write_space(s, dir, "two_chips.xplane.pb", TRUE))
    return FALSE;
  /* One chip, groups that name a device outside the profile. */
  s = g_malloc(sizeof *s);
  tensorflow__profiler__xspace__init(s);
  chip_plane(s, 0, FALSE);
  return write_space(s, dir, "one_chip.xplane.pb", FALSE);
}

static gboolean seeds_et(const char *dir)
{
  static const et_coll_type colls[] = { ET_COLL_ALL_REDUCE, ET_COLL_ALL_GATHER, ET_COLL_REDUCE_SCATTER,
                                        ET_COLL_ALL_TO_ALL, ET_COLL_BROADCAST, ET_COLL_BARRIER };
  et_builder *b = et_builder_new("seed");
  et_builder_set_version(b, "0.0.4");
  uint64_t id = 1;
  uint32_t n = et_builder_add_node(b, id, ET_NODE_COMP, "gemm", 1500000, 0);
  et_builder_set_comp_attrs(b, n, 1 << 20, TRUE, 4096);
  et_builder_set_start(b, n, 0);
  for (size_t i = 0; i < G_N_ELEMENTS(colls); i++) {
    n = et_builder_add_node(b, ++id, ET_NODE_COMM_COLL, et_coll_type_name(colls[i]), 0, 0);
    et_comm cm = { .bytes = 4096u << i, .group = ET_GROUP_WORLD, .pg_name = ET_NONE, .split = ET_NONE,
                   .src = -1, .dst = -1, .tag = -1, .root = colls[i] == ET_COLL_BROADCAST ? 0 : -1,
                   .coll = (uint8_t) colls[i] };
    et_builder_set_comm(b, n, &cm, i % 2 ? "1" : NULL, NULL, 0);
    et_builder_add_dep(b, n, id - 1, TRUE, i % 3 == 0);
  }
  uint64_t splits[2] = { 100, 300 };
  n = et_builder_add_node(b, ++id, ET_NODE_COMM_COLL, "a2av", 0, 0);
  et_comm a2 = { .bytes = 400, .group = ET_GROUP_WORLD, .pg_name = ET_NONE, .split = ET_NONE,
                 .src = -1, .dst = -1, .tag = -1, .root = -1, .coll = ET_COLL_ALL_TO_ALLV };
  et_builder_set_comm(b, n, &a2, "1", splits, 2);
  et_builder_add_dep(b, n, id - 1, FALSE, TRUE);
  n = et_builder_add_node(b, ++id, ET_NODE_COMM_SEND, "send", 0, 0);
  et_comm s = { .bytes = 64, .group = ET_GROUP_WORLD, .pg_name = ET_NONE, .split = ET_NONE,
                .src = 0, .dst = 1, .tag = 7, .root = -1, .coll = ET_COLL_NONE };
  et_builder_set_comm(b, n, &s, NULL, NULL, 0);
  et_builder_add_dep(b, n, 1, TRUE, FALSE);
  n = et_builder_add_node(b, ++id, ET_NODE_COMM_RECV, "recv", 0, 0);
  s.src = 1;
  s.dst = 0;
  et_builder_set_comm(b, n, &s, NULL, NULL, 0);
  et_builder_add_dep(b, n, id - 1, TRUE, FALSE);
  n = et_builder_add_node(b, ++id, ET_NODE_COMP, "gap", 2500, ET_FLAG_DELAY);
  et_builder_add_dep(b, n, id - 1, FALSE, TRUE);
  et_builder_add_dep(b, n, 2, TRUE, FALSE);
  GError *err = NULL;
  et_graph *g = et_builder_finish(b, ET_BUILD_STRICT, &err);
  char *path = g_build_filename(dir, "mixed.et", NULL);
  gboolean ok = g && et_write_file(g, path, &err);
  et_graph_free(g);
  if (!ok) {
    fprintf(stderr, "fuzz_seeds: %s\n", err ? err->message : "cannot build the ET seed");
    g_clear_error(&err);
    g_free(path);
    return FALSE;
  }
  gchar *bytes = NULL;
  gsize len = 0;
  ok = g_file_get_contents(path, &bytes, &len, NULL) && write_gzip(dir, "mixed.et.gz", (guint8 *) bytes, len);
  g_free(bytes);
  g_free(path);
  return ok;
}

int main(int argc, char **argv)
{
  if (argc != 3) {
    fprintf(stderr, "usage: fuzz_seeds xplane|et DIR\n");
    return 2;
  }
  gboolean ok;
  if (strcmp(argv[1], "xplane") == 0)
    ok = seeds_xplane(argv[2]);
  else if (strcmp(argv[1], "et") == 0)
    ok = seeds_et(argv[2]);
  else {
    fprintf(stderr, "fuzz_seeds: unknown kind %s\n", argv[1]);
    return 2;
  }
  return ok ? 0 : 1;
}
