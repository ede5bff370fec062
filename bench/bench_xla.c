/* bench_xla.c: speed and memory of the XPlane reader and the XLA frontend.
 *
 * Generates one XSpace file in a temporary directory, about MB megabytes
 * (default 300; first argument overrides): 8 `/device:TPU:N` planes, each
 * with an `XLA Ops` line of events that carry two stats (device_offset_ps,
 * device_duration_ps) like real TPU profiles; every 50th op is an all-reduce
 * with HLO text (bf16, flattened-id replica groups), the rest come from 200
 * distinct fusion ops.  The events are encoded by hand (protobuf wire
 * format) so that generation needs little memory.  Then it reports:
 *   1. fe_xplane_scan alone (visitor reads one stat per event): MB/s and the
 *      resident memory added (the file is mapped, so it counts as it is read);
 *   2. fe_xla_load into a workload (no idle-gap nodes): MB/s, resident memory
 *      added, and nodes.
 * Usage: bench_xla [MB [KEEP_PATH]]; deterministic: fixed op pattern and
 * durations.
 */
#include "config.h"
#include "bench/bench_util.h"

#include "frontends/xla.h"

#include <glib/gstdio.h>
#include <malloc.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>

static void put_varint(GByteArray *b, uint64_t v)
{
  guint8 buf[10];
  int n = 0;
  do {
    buf[n] = (guint8) (v & 0x7f);
    v >>= 7;
    if (v)
      buf[n] |= 0x80;
    n++;
  } while (v);
  g_byte_array_append(b, buf, (guint) n);
}

static void put_tag(GByteArray *b, uint32_t field, uint32_t wire) { put_varint(b, (uint64_t) field << 3 | wire); }

static void put_bytes(GByteArray *b, uint32_t field, const void *d, size_t n)
{
  put_tag(b, field, 2);
  put_varint(b, n);
  g_byte_array_append(b, d, (guint) n);
}

static void put_str(GByteArray *b, uint32_t field, const char *s) { put_bytes(b, field, s, strlen(s)); }

static void put_u(GByteArray *b, uint32_t field, uint64_t v)
{
  put_tag(b, field, 0);
  put_varint(b, v);
}

/* Appends one plane of about target bytes to f. */
static uint64_t write_plane(FILE *f, int chip, size_t target, uint64_t *events)
{
  GByteArray *meta = g_byte_array_new(), *line = g_byte_array_new(), *tmp = g_byte_array_new();
  /* stat metadata 1 = device_offset_ps, 2 = device_duration_ps */
  const char *stat_names[] = {"device_offset_ps", "device_duration_ps"};
  for (int i = 0; i < 2; i++) {
    GByteArray *sm = g_byte_array_new(), *entry = g_byte_array_new();
    put_u(sm, 1, (uint64_t) i + 1);
    put_str(sm, 2, stat_names[i]);
    put_u(entry, 1, (uint64_t) i + 1);
    put_bytes(entry, 2, sm->data, sm->len);
    put_bytes(meta, 5, entry->data, entry->len);
    g_byte_array_unref(sm);
    g_byte_array_unref(entry);
  }
  /* event metadata 1..200 fusions, 201 the all-reduce */
  for (int m = 1; m <= 201; m++) {
    GByteArray *em = g_byte_array_new(), *entry = g_byte_array_new();
    char text[256];
    if (m <= 200)
      g_snprintf(text, sizeof text, "%%fusion.%d = bf16[128,1024]{1,0} fusion(bf16[128,1024]{1,0} %%p.%d), "
                 "kind=kLoop, calls=%%fused_%d", m, m, m);
    else
      g_snprintf(text, sizeof text, "%%all-reduce.9 = bf16[4096,1024]{1,0} all-reduce(bf16[4096,1024]{1,0} "
                 "%%x), channel_id=9, replica_groups=[1,8]<=[8], use_global_device_ids=true, to_apply=%%add");
    put_u(em, 1, (uint64_t) m);
    put_str(em, 2, text);
    put_u(entry, 1, (uint64_t) m);
    put_bytes(entry, 2, em->data, em->len);
    put_bytes(meta, 4, entry->data, entry->len);
    g_byte_array_unref(em);
    g_byte_array_unref(entry);
  }
  put_u(line, 1, 3);
  put_str(line, 2, "XLA Ops");
  uint64_t t = 1000000, k = 0;
  while (line->len < target) {
    gboolean ar = k % 50 == 49;
    uint64_t dur = ar ? 2000000 + (k % 7) * 1000 : 150000 + (k % 13) * 1250;
    g_byte_array_set_size(tmp, 0);
    put_u(tmp, 1, ar ? 201 : 1 + k % 200);
    put_u(tmp, 2, t);
    put_u(tmp, 3, dur);
    for (int s = 0; s < 2; s++) {
      guint8 st[16];
      GByteArray sb = {st, 0};
      GByteArray *sp = g_byte_array_new();
      put_u(sp, 1, (uint64_t) s + 1);
      put_u(sp, 3, s ? dur : t - 40000);
      put_bytes(tmp, 4, sp->data, sp->len);
      g_byte_array_unref(sp);
      (void) sb;
    }
    put_bytes(line, 4, tmp->data, tmp->len);
    t += dur + 3000;
    k++;
  }
  *events += k;
  GByteArray *plane = g_byte_array_new();
  put_u(plane, 1, (uint64_t) chip + 1);
  char name[32];
  g_snprintf(name, sizeof name, "/device:TPU:%d", chip);
  put_str(plane, 2, name);
  put_bytes(plane, 3, line->data, line->len);
  g_byte_array_append(plane, meta->data, meta->len);
  GByteArray *head = g_byte_array_new();
  put_tag(head, 1, 2);
  put_varint(head, plane->len);
  fwrite(head->data, 1, head->len, f);
  fwrite(plane->data, 1, plane->len, f);
  uint64_t written = head->len + plane->len;
  g_byte_array_unref(head);
  g_byte_array_unref(plane);
  g_byte_array_unref(meta);
  g_byte_array_unref(line);
  g_byte_array_unref(tmp);
  return written;
}

/* The visitor resolves the stat id once per plane (as fe_xla does) and reads
 * one stat per event. */
typedef struct {
  uint64_t sum;
  gboolean have;
  int64_t id;
} bench_acc;

static gboolean bench_plane(void *user, const fe_xplane_plane *p)
{
  bench_acc *a = user;
  a->have = fe_xplane_stat_id(p, "device_duration_ps", &a->id);
  return TRUE;
}

static gboolean bench_event(void *user, const fe_xevent_view *v, GError **error)
{
  bench_acc *a = user;
  fe_xstat_value s;
  if (a->have && fe_xevent_stat_by_id(v, a->id, &s))
    a->sum += s.u;
  return TRUE;
}

int main(int argc, char **argv)
{
  long mb = argc > 1 ? strtol(argv[1], NULL, 10) : 300;
  if (mb < 1) {
    fprintf(stderr, "usage: bench_xla [MEGABYTES >= 1 [KEEP_PATH]]\n");
    return 2;
  }
  GError *err = NULL;
  char *dir = g_dir_make_tmp("bench_xla_XXXXXX", &err);
  if (!dir) {
    fprintf(stderr, "%s\n", err->message);
    return 1;
  }
  /* A second argument keeps the generated profile at that path. */
  char *path = argc > 2 ? g_strdup(argv[2]) : g_build_filename(dir, "big.xplane.pb", NULL);
  FILE *f = fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "cannot write %s\n", path);
    return 1;
  }
  double t0 = wisp_wall_seconds();
  uint64_t bytes = 0, events = 0;
  for (int chip = 0; chip < 8; chip++)
    bytes += write_plane(f, chip, (size_t) mb * 1000000 / 8, &events);
  fclose(f);
  double tgen = wisp_wall_seconds() - t0;
  printf("bench_xla: generated %.1f MB, %" G_GUINT64_FORMAT " events on 8 chips in %.2f s\n",
         bytes / 1e6, events, tgen);

  malloc_trim(0);
  long rss0 = bench_status_kib("VmRSS");
  t0 = wisp_wall_seconds();
  double c0 = bench_cpu_seconds();
  fe_xplane_file *xf = fe_xplane_file_open(path, NULL, &err);
  bench_acc acc = {0};
  fe_xplane_visitor vis = {bench_plane, NULL, bench_event, NULL};
  fe_xplane_counts counts;
  if (!xf || !fe_xplane_scan(xf, &vis, &acc, &counts, &err)) {
    fprintf(stderr, "%s\n", err->message);
    return 1;
  }
  double tscan = wisp_wall_seconds() - t0, cscan = bench_cpu_seconds() - c0;
  long rss1 = bench_status_kib("VmRSS");
  fe_xplane_file_free(xf);
  printf("bench_xla: scan   %.2f s wall, %.2f s CPU, %.0f MB/s (%.0f MB per CPU s), %.2f M events/s, "
         "RSS +%.1f MB (file mapped: %.1f MB)\n", tscan, cscan, bytes / 1e6 / tscan, bytes / 1e6 / cscan,
         counts.events / 1e6 / tscan, (rss1 - rss0) / 1024.0, bytes / 1e6);

  malloc_trim(0);
  rss0 = bench_status_kib("VmRSS");
  long peak0 = bench_status_kib("VmHWM");
  t0 = wisp_wall_seconds();
  c0 = bench_cpu_seconds();
  fe_xla_options opt;
  fe_xla_options_init(&opt);
  opt.no_gaps = TRUE;
  fe_xla_report rep;
  fe_xla_report_init(&rep);
  const char *paths[] = {path};
  et_workload *w = fe_xla_load(paths, 1, &opt, &rep, &err);
  if (!w) {
    fprintf(stderr, "%s\n", err->message);
    return 1;
  }
  double tload = wisp_wall_seconds() - t0, cload = bench_cpu_seconds() - c0;
  long rss2 = bench_status_kib("VmRSS");
  uint64_t nodes = 0, gmem = 0;
  for (int r = 0; r < w->n_ranks; r++) {
    nodes += w->ranks[r]->n_nodes;
    gmem += et_graph_memory_bytes(w->ranks[r]);
  }
  printf("bench_xla: load   %.2f s wall, %.2f s CPU (%.0f MB per CPU s), %.0f MB/s, %" G_GUINT64_FORMAT " nodes (%" G_GUINT64_FORMAT
         " all-reduce), RSS +%.1f MB after, peak RSS %.1f MB (before %.1f MB), graphs %.1f B/node\n",
         tload, cload, bytes / 1e6 / cload, bytes / 1e6 / tload, nodes, rep.collectives[FE_HLO_ALL_REDUCE], (rss2 - rss0) / 1024.0,
         bench_status_kib("VmHWM") / 1024.0, peak0 / 1024.0, (double) gmem / (double) nodes);
  et_workload_free(w);
  fe_xla_report_clear(&rep);
  if (argc <= 2)
    g_unlink(path);
  g_rmdir(dir);
  g_free(path);
  g_free(dir);
  return 0;
}
