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
#include "regress/xplane_build.h"

#include <stdio.h>
#include <string.h>
#include <zlib.h>

/* Event metadata without a display name. */
static int64_t meta(tp_plane *p, const char *hlo, const char *category)
{
  return tp_meta(p, hlo, NULL, category);
}

/* An XLA op event; dev adds the device_offset_ps / device_duration_ps stats. */
static tp_event *event_add(tp_plane *p, tp_line *l, int64_t m, int64_t off_ps, int64_t dur_ps, gboolean dev)
{
  tp_event *e = tp_event_add(l, m, off_ps, dur_ps);
  if (dev) {
    *GROW(e->stats, e->n_stats) = tp_int_stat(p, "device_offset_ps", off_ps + 7);
    *GROW(e->stats, e->n_stats) = tp_int_stat(p, "device_duration_ps", dur_ps);
  }
  return e;
}

static void chip_plane(tp_space *s, int chip, gboolean groups_of_two)
{
  char *name = g_strdup_printf("/device:TPU:%d", chip);
  tp_plane *p = tp_plane_add(s, chip + 1, name);
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
  tp_line *ops = tp_line_add(p, 1, "XLA Ops", 1000);
  event_add(p, ops, fusion, 0, 5000, TRUE);
  event_add(p, ops, m_ar, 6000, 3000, TRUE);
  event_add(p, ops, m_ags, 10000, 100, TRUE);
  event_add(p, ops, fusion, 10200, 900, TRUE);
  event_add(p, ops, m_agd, 11200, 400, TRUE);
  event_add(p, ops, m_cp, 12000, 700, FALSE);
  tp_line *steps = tp_line_add(p, 2, "Steps", 1000);
  event_add(p, steps, m_step, 0, 6000, FALSE);
  event_add(p, steps, m_step, 6000, 7000, FALSE);
  tp_line *mods = tp_line_add(p, 3, "XLA Modules", 1000);
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
  size_t out_len;
  guint8 *out = test_gzip(data, len, 6, &out_len);
  gboolean ok = out != NULL && write_bytes(dir, name, out, out_len);
  g_free(out);
  return ok;
}

static gboolean write_space(tp_space *s, const char *dir, const char *name, gboolean also_gzip)
{
  size_t len;
  guint8 *buf = tp_pack(s, &len);
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
  tp_space *s = tp_space_new();
  chip_plane(s, 0, TRUE);
  chip_plane(s, 1, TRUE);
  tp_plane *sc = tp_plane_add(s, 10, "/device:TPU:0 SparseCore 0");
  tp_line *l = tp_line_add(sc, 1, "XLA Ops", 1000);
  event_add(sc, l, meta(sc, "%fusion.9 = f32[8]{0} fusion(f32[8]{0} %x), kind=kLoop", NULL), 100, 2000, FALSE);
  tp_plane *host = tp_plane_add(s, 20, "/host:CPU");
  *GROW(host->stats, host->n_stats) = tp_str_stat(host, "device_type_string", "CPU");
  *GROW(s->hostnames, s->n_hostnames) = g_strdup("host0");
  if (!write_space(s, dir, "two_chips.xplane.pb", TRUE))
    return FALSE;
  /* One chip, groups that name a device outside the profile. */
  s = tp_space_new();
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
