/* test_xla.c: XPlane reader and XLA/TPU frontend (frontends/xplane.c, xla.c).
 *
 * Synthetic XSpace files are built here with protobuf-c from the same
 * schema (frontends/xplane.proto) and written to a temporary directory; the
 * expected graphs are derived in the comments from the event times and HLO
 * shapes given to the generator.  The real profile
 * $WISP_SHARED_DATA/xprof/test_xplanes/tpu_inference_2.xplane.pb is checked
 * against the facts of doc/xla.md §1.1 (read from the file by hand with an
 * independent decoder when the reference was written) and against shape
 * arithmetic done here from its HLO text. */
#include "config.h"

#include "frontends/xla.h"
#include "frontends/xplane.pb-c.h"
#include "regress/test_util.h"
#include "regress/xplane_build.h"

#include <stdlib.h>
#include <string.h>
#include <glib/gstdio.h>
#include <zlib.h>

/* ---- XSpace generator ---- */

static char *tmp_dir;

static char *tp_write(tp_space *s, const char *name, gboolean gz)
{
  size_t len;
  guint8 *buf = tp_pack(s, &len);
  char *path = g_build_filename(tmp_dir, name, NULL);
  if (gz) {
    size_t zl;
    guint8 *z = test_gzip(buf, len, 6, &zl);
    g_assert_nonnull(z);
    g_assert_true(g_file_set_contents(path, (char *) z, (gssize) zl, NULL));
    g_free(z);
  } else {
    g_assert_true(g_file_set_contents(path, (char *) buf, (gssize) len, NULL));
  }
  g_free(buf);
  protobuf_c_message_free_unpacked(&s->base, NULL);
  return path;
}

/* ---- graph helpers ---- */

static gboolean has_parent(const et_graph *g, uint32_t child, uint32_t parent)
{
  for (uint32_t e = g->nodes[child].parents; e < g->nodes[child + 1].parents; e++)
    if (ET_EDGE_INDEX(g->parent_edges[e]) == parent)
      return TRUE;
  return FALSE;
}

static uint32_t find_node(const et_graph *g, const char *name, et_node_type type, int nth)
{
  for (uint32_t i = 0; i < g->n_nodes; i++)
    if (strcmp(et_node_name(g, i), name) == 0 && g->nodes[i].type == type && nth-- == 0)
      return i;
  return ET_NONE;
}

static et_workload *load(const char *const *paths, int n, const fe_xla_options *opt, fe_xla_report *rep)
{
  GError *err = NULL;
  et_workload *w = fe_xla_load(paths, n, opt, rep, &err);
  g_assert_no_error(err);
  g_assert_nonnull(w);
  return w;
}

static gboolean warned(const fe_xla_report *rep, const char *needle)
{
  for (guint i = 0; i < rep->warnings->len; i++)
    if (strstr(rep->warnings->pdata[i], needle))
      return TRUE;
  return FALSE;
}

#define US INT64_C(1000000) /* ps per µs */

/* ---- vector A6 (doc/xla.md §7) as an XSpace, corrected mode ---- */

static char *make_a6(gboolean gz)
{
  tp_space *s = tp_space_new();
  for (int chip = 0; chip < 2; chip++) {
    char name[64];
    g_snprintf(name, sizeof name, "/device:TPU:%d", chip);
    tp_plane *tc = tp_plane_add(s, 10 + chip, name);
    g_snprintf(name, sizeof name, "/device:TPU:%d SparseCore 0", chip);
    tp_plane *sc = tp_plane_add(s, 20 + chip, name);
    int64_t m_step = tp_meta(tc, "jit_train_step(123)", NULL, NULL);
    int64_t m_fus = tp_meta(tc, "%fusion.1 = f32[8]{0} fusion(f32[8]{0} %a), kind=kOutput, calls=%c", "fusion.1",
                            "convolution fusion");
    int64_t m_ag = tp_meta(tc, "%all-gather-start.3 = (bf16[1,4096]{1,0}, bf16[8,4096]{1,0}) all-gather-start("
                           "bf16[1,4096]{1,0} %p), replica_groups={{0,1,2,3,4,5,6,7}}, dimensions={0}",
                           "all-gather-start.3", "all-gather");
    int64_t m_agd = tp_meta(tc, "%all-gather-done.3 = bf16[8,4096]{1,0} all-gather-done((bf16[1,4096]{1,0}, "
                            "bf16[8,4096]{1,0}) %all-gather-start.3)", "all-gather-done.3", "all-gather-done");
    int64_t m_rs = tp_meta(tc, "%reduce-scatter.4 = f32[1,1024]{1,0} reduce-scatter(f32[8,1024]{1,0} %q), "
                           "dimensions={0}, to_apply=%add", "reduce-scatter.4", "reduce-scatter");
    /* The SparseCore permute has no HLO text (like A6's missing long_name). */
    int64_t m_cp = tp_meta(sc, "collective-permute.5", "collective-permute.5", "collective-permute");
    tp_line *mods = tp_line_add(tc, 2, "XLA Modules", 0);
    tp_line *ops = tp_line_add(tc, 3, "XLA Ops", 0);
    tp_line *scops = tp_line_add(sc, 3, "XLA Ops", 0);
    for (int64_t t0 = 0; t0 <= 600000; t0 += 300000) {
      tp_event_add(mods, m_step, t0 * US, 200000 * US);
      tp_event_add(ops, m_fus, (t0 + 10) * US, 100 * US);
      tp_event_add(ops, m_ag, (t0 + 150) * US, 20 * US);
      tp_event_add(ops, m_agd, (t0 + 175) * US, 1 * US);
      tp_event_add(ops, m_rs, (t0 + 200) * US, 30 * US);
      tp_event_add(scops, m_cp, (t0 + 240) * US, 5 * US);
    }
  }
  return tp_write(s, gz ? "a6.xplane.pb.gz" : "a6.xplane.pb", gz);
}

static void check_a6(gboolean gz)
{
  char *path = make_a6(gz);
  const char *paths[] = {path};
  fe_xla_options opt;
  fe_xla_options_init(&opt);
  opt.step_marker = "jit_train_step";
  opt.step_index = 1;    /* the second step: [300000, 500000) µs */
  fe_xla_report rep;
  fe_xla_report_init(&rep);
  et_workload *w = load(paths, 1, &opt, &rep);
  g_assert_cmpint(w->n_ranks, ==, 2);          /* two chips; SparseCore planes are not ranks */
  g_assert_cmpint(rep.n_sparsecore_planes, ==, 2);
  g_assert_cmpuint(rep.steps, ==, 3);
  /* Three steps of 5 ops per chip, one selected: 2 x 2 x 5 ops outside. */
  g_assert_cmpuint(rep.outside_steps, ==, 20);
  g_assert_cmpuint(rep.ops, ==, 10);
  /* One all-gather pair and one reduce-scatter per chip; one unsized permute per chip. */
  g_assert_cmpuint(rep.collectives[FE_HLO_ALL_GATHER], ==, 2);
  g_assert_cmpuint(rep.collectives[FE_HLO_REDUCE_SCATTER], ==, 2);
  g_assert_cmpuint(rep.collectives[FE_HLO_COLLECTIVE_PERMUTE], ==, 2);
  g_assert_cmpuint(rep.async_pairs, ==, 2);
  g_assert_cmpuint(rep.unsized, ==, 2);
  /* The all-gather's group names 8 devices, the profile holds 2 chips. */
  g_assert_true(warned(&rep, "8 devices, 2 present"));
  g_assert_true(warned(&rep, "collective-permute.5 has no usable size"));
  /* Measured step = the selected step marker's duration, 200,000 µs. */
  g_assert_cmpint(w->measured_step_ps[0], ==, 200000 * US);
  const et_graph *g = w->ranks[0];
  /* Rank 0 (times relative to chip 0's fusion at 300,010 µs):
   *  0 fusion.1 COMP 100 µs          [0, 100)
   *  1 idle_gap 40 µs                [100, 140)  (fusion end -> all-gather start)
   *  2 all-gather ALL_GATHER 8,192 B (bf16[1,4096] input), async: 150 -> 176 µs = 26 µs
   *  3 idle_gap 5 µs                 [170, 175)  (start event end -> done start)
   *  4 idle_gap 24 µs                [176, 200)  after node 2 (the done joins it; it ended last)
   *  5 reduce-scatter 32,768 B (f32[8,1024] input), 30 µs
   *  6 collective-permute.5 5 µs (unsized; SparseCore chain)
   * The all-gather and the reduce-scatter name 8 devices of which 2 are in
   * the profile, and the permute has no size: none can be simulated, so all
   * three replay their measured time (ET_FLAG_REPLAY, never free): 3 per
   * chip, 6 in all. */
  g_assert_cmpuint(rep.replayed_collectives, ==, 6);
  g_assert_cmpuint(g->n_nodes, ==, 7);
  g_assert_cmpstr(et_node_name(g, 0), ==, "fusion.1");
  g_assert_cmpint(g->nodes[0].type, ==, ET_NODE_COMP);
  g_assert_cmpint(g->nodes[0].duration_ps, ==, 100 * US);
  g_assert_cmpint(g->nodes[0].start_ps, ==, 0);
  g_assert_cmpint(g->nodes[1].duration_ps, ==, 40 * US);
  g_assert_true(g->nodes[1].flags & ET_FLAG_DELAY);
  g_assert_cmpint(g->nodes[2].type, ==, ET_NODE_COMM_COLL);
  g_assert_true(g->nodes[2].flags & ET_FLAG_REPLAY);
  g_assert_true(g->nodes[5].flags & ET_FLAG_REPLAY);
  const et_comm *ag = et_node_comm(g, 2);
  g_assert_cmpint(ag->coll, ==, ET_COLL_ALL_GATHER);
  g_assert_cmpuint(ag->bytes, ==, 1 * 4096 * 2);
  g_assert_cmpint(g->nodes[2].duration_ps, ==, 26 * US);
  g_assert_true(has_parent(g, 2, 1));
  g_assert_cmpint(g->nodes[3].duration_ps, ==, 5 * US);
  g_assert_true(has_parent(g, 3, 1));   /* work after the start does not wait for it */
  g_assert_false(has_parent(g, 3, 2));
  g_assert_cmpint(g->nodes[4].duration_ps, ==, 24 * US);
  g_assert_true(has_parent(g, 4, 2));   /* ... but work after the done does: the idle */
  g_assert_false(has_parent(g, 4, 3));  /* follows the collective alone (it ended last, at 176) */
  g_assert_true(has_parent(g, 5, 4));   /* and the reduce-scatter follows the idle and, */
  g_assert_true(has_parent(g, 5, 3));   /* directly, the chain's other end (node 3, at 175) */
  const et_comm *rs = et_node_comm(g, 5);
  g_assert_cmpint(rs->coll, ==, ET_COLL_REDUCE_SCATTER);
  g_assert_cmpuint(rs->bytes, ==, 8 * 1024 * 4);
  g_assert_cmpstr(et_node_name(g, 6), ==, "collective-permute.5");
  g_assert_cmpint(g->nodes[6].type, ==, ET_NODE_COMM_COLL);
  g_assert_true(g->nodes[6].flags & ET_FLAG_REPLAY);
  g_assert_cmpint(g->nodes[6].duration_ps, ==, 5 * US);
  g_assert_cmpint(et_node_n_parents(g, 6), ==, 0);  /* its own (SparseCore) chain */
  /* The reduce-scatter has no replica_groups: all 8 named devices, 2 present. */
  const et_group *grp = et_workload_group(w, rs->group);
  g_assert_cmpint(grp->n_ranks, ==, 2);
  et_workload_free(w);
  fe_xla_report_clear(&rep);
  /* strict: the unsized permute (and partial groups) are errors. */
  opt.strict = TRUE;
  GError *err = NULL;
  g_assert_null(fe_xla_load(paths, 1, &opt, NULL, &err));
  g_assert_error(err, WISP_ERROR, WISP_ERROR_INVALID);
  g_clear_error(&err);
  /* A marker that matches nothing is an error naming it. */
  opt.strict = FALSE;
  opt.step_marker = "jit_nothing";
  g_assert_null(fe_xla_load(paths, 1, &opt, NULL, &err));
  g_assert_nonnull(strstr(err->message, "jit_nothing"));
  g_clear_error(&err);
  g_unlink(path);
  g_free(path);
}

static void test_a6(void) { check_a6(FALSE); }
static void test_a6_gzip(void) { check_a6(TRUE); }

/* ---- vector A6 as XProf trace-viewer JSON (doc/xla.md §7, written as the
 * reference's Python generator writes it; synthetic: no real file exists) ---- */

static char *make_a6_json(void)
{
  GString *j = g_string_new("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [");
  gboolean first = TRUE;
#define EV(...) do { g_string_append_printf(j, "%s", first ? "" : ", "); first = FALSE; \
                     g_string_append_printf(j, __VA_ARGS__); } while (0)
  const int pids[] = {101, 102};
  for (int i = 0; i < 2; i++) {
    EV("{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"args\": {\"name\": \"/device:TPU:%d\"}}",
       pids[i], i);
    EV("{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"args\": {\"name\": \"/device:TPU:%d SparseCore 0\"}}",
       pids[i] + 100, i);
  }
  for (int t0 = 0; t0 <= 600000; t0 += 300000) {
    EV("{\"ph\": \"X\", \"name\": \"jit_train_step(123)\", \"pid\": 1, \"tid\": 5, \"ts\": %d, \"dur\": 200000}", t0);
    for (int i = 0; i < 2; i++) {
      int pid = pids[i];
      EV("{\"ph\": \"X\", \"name\": \"fusion.1\", \"pid\": %d, \"tid\": 3, \"ts\": %d, \"dur\": 100, \"args\": "
         "{\"device_duration_ps\": 100000000, \"hlo_category\": \"convolution fusion\"}}", pid, t0 + 10);
      EV("{\"ph\": \"X\", \"name\": \"all-gather.3\", \"pid\": %d, \"tid\": 3, \"ts\": %d, \"dur\": 20, \"args\": "
         "{\"device_duration_ps\": 20000000, \"hlo_category\": \"all-gather\", \"long_name\": \"%%all-gather.3 = "
         "bf16[8,4096]{1,0} all-gather(bf16[1,4096]{1,0} %%p), replica_groups={{0,1,2,3,4,5,6,7}}, dimensions={0}\"}}",
         pid, t0 + 150);
      EV("{\"ph\": \"X\", \"name\": \"all-gather-done.3\", \"pid\": %d, \"tid\": 3, \"ts\": %d, \"dur\": 1, \"args\": "
         "{\"device_duration_ps\": 1000000, \"hlo_category\": \"all-gather-done\"}}", pid, t0 + 175);
      EV("{\"ph\": \"X\", \"name\": \"reduce-scatter.4\", \"pid\": %d, \"tid\": 3, \"ts\": %d, \"dur\": 30, \"args\": "
         "{\"device_duration_ps\": 30000000, \"hlo_category\": \"reduce-scatter\", \"long_name\": \"%%reduce-scatter.4 = "
         "f32[1,1024]{1,0} reduce-scatter(f32[8,1024]{1,0} %%q)\"}}", pid, t0 + 200);
      EV("{\"ph\": \"X\", \"name\": \"collective-permute.5\", \"pid\": %d, \"tid\": 3, \"ts\": %d, \"dur\": 5, \"args\": "
         "{\"device_duration_ps\": 5000000, \"hlo_category\": \"collective-permute\"}}", pid + 100, t0 + 240);
    }
  }
#undef EV
  g_string_append(j, "]}");
  char *path = g_build_filename(tmp_dir, "x.trace.json", NULL);
  g_assert_true(g_file_set_contents(path, j->str, (gssize) j->len, NULL));
  g_string_free(j, TRUE);
  return path;
}

static void test_a6_json(void)
{
  char *path = make_a6_json();
  const char *paths[] = {path};
  g_assert_true(fe_xla_is_trace_json_path(path));
  fe_xla_options opt;
  fe_xla_options_init(&opt);
  opt.step_marker = "jit_train_step";
  opt.step_index = 1;   /* the second cluster, [300000, 500000) µs, as in the CCL-Bench run */
  fe_xla_report rep;
  fe_xla_report_init(&rep);
  et_workload *w = load(paths, 1, &opt, &rep);
  g_assert_cmpint(w->n_ranks, ==, 2);
  g_assert_cmpint(rep.n_sparsecore_planes, ==, 2);
  g_assert_cmpuint(rep.ops, ==, 10);
  g_assert_cmpuint(rep.async_pairs, ==, 2);          /* all-gather-done closes all-gather.3 */
  g_assert_cmpuint(rep.unmatched_dones, ==, 0);
  g_assert_cmpuint(rep.unsized, ==, 2);              /* one permute per chip, no long_name */
  g_assert_cmpuint(rep.collectives[FE_HLO_COLLECTIVE_PERMUTE], ==, 2);
  g_assert_true(warned(&rep, "8 devices, 2 present"));
  const et_graph *g = w->ranks[0];
  /* Same corrected graph as the XSpace form (test_a6):
   * fusion 100 µs, gap 40, ALL_GATHER 8,192 B over 150 -> 176 µs (26 µs), gap 5,
   * gap 24 waiting for the all-gather, REDUCE_SCATTER 32,768 B, and the permute
   * once, replayed at its measured 5 µs on the SparseCore chain.  Compat mode had
   * 10 nodes with the permute twice as 268,435,456-byte ALL_TO_ALLs. */
  g_assert_cmpuint(g->n_nodes, ==, 7);
  g_assert_cmpint(g->nodes[0].duration_ps, ==, 100 * US);
  g_assert_cmpint(g->nodes[1].duration_ps, ==, 40 * US);
  g_assert_cmpuint(et_node_comm(g, 2)->bytes, ==, 8192);
  g_assert_cmpint(et_node_comm(g, 2)->coll, ==, ET_COLL_ALL_GATHER);
  g_assert_cmpint(g->nodes[2].duration_ps, ==, 26 * US);
  g_assert_cmpint(g->nodes[3].duration_ps, ==, 5 * US);
  g_assert_false(has_parent(g, 3, 2));
  g_assert_cmpint(g->nodes[4].duration_ps, ==, 24 * US);
  g_assert_true(has_parent(g, 4, 2));
  g_assert_cmpuint(et_node_comm(g, 5)->bytes, ==, 32768);
  g_assert_cmpint(g->nodes[6].type, ==, ET_NODE_COMM_COLL);
  g_assert_true(g->nodes[6].flags & ET_FLAG_REPLAY);
  g_assert_cmpstr(et_node_name(g, 6), ==, "collective-permute.5");
  et_workload_free(w);
  fe_xla_report_clear(&rep);
  /* Malformed JSON: truncated, and a non-number ts. */
  gchar *data;
  gsize len;
  g_assert_true(g_file_get_contents(path, &data, &len, NULL));
  g_assert_true(g_file_set_contents(path, data, (gssize) (len - 10), NULL));
  GError *err = NULL;
  g_assert_null(fe_xla_load(paths, 1, &opt, NULL, &err));
  g_assert_error(err, WISP_ERROR, WISP_ERROR_PARSE);
  g_clear_error(&err);
  const char *bad = "{\"traceEvents\": [{\"ph\": \"X\", \"pid\": 1, \"ts\": \"soon\"}]}";
  g_assert_true(g_file_set_contents(path, bad, -1, NULL));
  g_assert_null(fe_xla_load(paths, 1, &opt, NULL, &err));
  g_assert_error(err, WISP_ERROR, WISP_ERROR_PARSE);
  g_assert_nonnull(strstr(err->message, "\"ts\" is not a number"));
  g_clear_error(&err);
  g_assert_true(g_file_set_contents(path, "{\"other\": 1}", -1, NULL));
  g_assert_null(fe_xla_load(paths, 1, &opt, NULL, &err));
  g_assert_error(err, WISP_ERROR, WISP_ERROR_INVALID);
  g_assert_nonnull(strstr(err->message, "traceEvents"));
  g_clear_error(&err);
  g_free(data);
  g_unlink(path);
  g_free(path);
}

/* Two hosts' trace JSON files (gzip and plain) merge into one job; ops are
 * timed by args.device_offset_ps / device_duration_ps. */
static void test_json_two_hosts(void)
{
  char *paths[2];
  for (int h = 0; h < 2; h++) {
    char *j = g_strdup_printf(
        "{\"traceEvents\": ["
        "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 7, \"args\": {\"name\": \"/device:TPU:0\"}},"
        "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 9, \"args\": {\"name\": \"/host:CPU\"}},"
        "{\"ph\": \"X\", \"name\": \"python\", \"pid\": 9, \"ts\": 1.5, \"dur\": 3},"
        "{\"ph\": \"X\", \"name\": \"all-reduce.1\", \"pid\": 7, \"tid\": 3, \"ts\": 2.25, \"dur\": 1, "
        "\"args\": {\"device_offset_ps\": %d, \"device_duration_ps\": \"2500000\", \"hlo_category\": \"all-reduce\", "
        "\"model_flops\": 100, \"long_name\": \"%%all-reduce.1 = s8[100]{0} all-reduce(s8[100]{0} %%x), channel_id=1, "
        "replica_groups=[1,2]<=[2], use_global_device_ids=true, to_apply=%%add\"}}]}", 5000000 + h * 1000);
    char *name = g_strdup_printf("host%d.trace.json%s", h, h ? ".gz" : "");
    paths[h] = g_build_filename(tmp_dir, name, NULL);
    if (h) {
      size_t zl;
      guint8 *z = test_gzip((guint8 *) j, strlen(j), 6, &zl);
      g_assert_nonnull(z);
      g_assert_true(g_file_set_contents(paths[h], (char *) z, (gssize) zl, NULL));
      g_free(z);
    } else {
      g_assert_true(g_file_set_contents(paths[h], j, -1, NULL));
    }
    g_free(name);
    g_free(j);
  }
  fe_xla_report rep;
  fe_xla_report_init(&rep);
  et_workload *w = load((const char *const *) paths, 2, NULL, &rep);
  /* chip 0 of file 1 is device 1 (chip numbers repeat across files) */
  g_assert_cmpint(w->n_ranks, ==, 2);
  g_assert_cmpuint(rep.host_events, ==, 2);      /* the two python events */
  g_assert_cmpuint(rep.model_flops, ==, 200);
  for (int r = 0; r < 2; r++) {
    const et_graph *g = w->ranks[r];
    g_assert_cmpuint(g->n_nodes, ==, 1);
    const et_comm *cm = et_node_comm(g, 0);
    g_assert_cmpuint(cm->bytes, ==, 100);        /* s8[100] */
    g_assert_cmpint(et_workload_group(w, cm->group)->n_ranks, ==, 2);
    g_assert_cmpint(g->nodes[0].duration_ps, ==, 2500000);   /* device_duration_ps, given as a string */
  }
  /* device offsets 5,000,000 and 5,001,000 ps: host 1 starts 1,000 ps later */
  g_assert_cmpint(w->ranks[1]->nodes[0].start_ps - w->ranks[0]->nodes[0].start_ps, ==, 1000);
  et_workload_free(w);
  fe_xla_report_clear(&rep);
  for (int h = 0; h < 2; h++) {
    g_unlink(paths[h]);
    g_free(paths[h]);
  }
}

/* ---- every collective kind, async pairs, groups, two hosts ---- */

typedef struct {
  const char *text;
  int64_t start_us, dur_us;
} op_spec;

/* One host file with chips 0 and 1 (local ids; global ids 2h + N). */
static char *make_host(int host)
{
  static const op_spec ops[] = {
    /* 1: f32[256] = 1,024 B; flattened ids {0,1},{2,3} */
    {"%all-reduce.1 = f32[256]{0} all-reduce(f32[256]{0} %a), channel_id=1, replica_groups={{0,1},{2,3}}, "
     "use_global_device_ids=true, to_apply=%add", 0, 10},
    /* 2: input bf16[4,8] = 64 B; [1,4]<=[4] = {0,1,2,3} */
    {"%all-gather.2 = bf16[16,8]{1,0} all-gather(bf16[4,8]{1,0} %b), channel_id=2, replica_groups=[1,4]<=[4], "
     "use_global_device_ids=true, dimensions={0}", 20, 10},
    /* 3: input f32[16] = 64 B */
    {"%reduce-scatter.3 = f32[4]{0} reduce-scatter(f32[16]{0} %c), replica_groups={{0,1,2,3}}, dimensions={0}, "
     "to_apply=%add", 40, 10},
    /* 4: s8[4,8] = 32 B; replica ids (no channel_id) {0,2},{1,3} */
    {"%all-to-all.4 = s8[4,8]{1,0} all-to-all(s8[4,8]{1,0} %d), replica_groups={{0,2},{1,3}}, dimensions={0}",
     60, 10},
    /* 5: async all-reduce f16[1024] = 2,048 B over all devices, fusion.6 overlaps it */
    {"%all-reduce-start.5 = f16[1024]{0} all-reduce-start(f16[1024]{0} %e), replica_groups={}, to_apply=%add",
     80, 2},
    {"%fusion.6 = f32[2]{0} fusion(f32[2]{0} %f), kind=kLoop, calls=%g", 85, 20},
    {"%all-reduce-done.5 = f16[1024]{0} all-reduce-done(f16[1024]{0} %all-reduce-start.5)", 110, 5},
    /* 7: async permute u32[64] = 256 B around a ring of the 4 devices */
    {"%collective-permute-start.7 = (u32[64]{0}, u32[64]{0}, u32[], u32[]) collective-permute-start("
     "u32[64]{0} %h), channel_id=7, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}", 120, 2},
    {"%collective-permute-done.7 = u32[64]{0} collective-permute-done((u32[64]{0}, u32[64]{0}, u32[], u32[]) "
     "%collective-permute-start.7)", 130, 2},
    /* 8: collective-broadcast u8[10] = 10 B, root = first of the group */
    {"%collective-broadcast.8 = u8[10]{0} collective-broadcast(u8[10]{0} %i), replica_groups={{0,1,2,3}}", 140, 5},
    /* 9/10: device 0 sends f32[2] = 8 B to device 3 */
    {"%send.9 = (f32[2]{0}, u32[], token[]) send(f32[2]{0} %j, token[] %t), channel_id=9, "
     "frontend_attributes={_xla_send_recv_source_target_pairs=\"{{0,3}}\"}", 150, 1},
    {"%recv.10 = (f32[2]{0}, u32[], token[]) recv(token[] %t), channel_id=9, "
     "frontend_attributes={_xla_send_recv_source_target_pairs=\"{{0,3}}\"}", 152, 1},
  };
  tp_space *s = tp_space_new();
  for (int chip = 0; chip < 2; chip++) {
    char name[64];
    g_snprintf(name, sizeof name, "/device:TPU:%d", chip);
    tp_plane *p = tp_plane_add(s, chip, name);
    /* Host clocks differ: host 1's line starts 1 µs later (timestamp_ns 1000). */
    tp_line *l = tp_line_add(p, 3, "XLA Ops", host ? 1000 : 0);
    for (size_t i = 0; i < G_N_ELEMENTS(ops); i++) {
      int64_t m = tp_meta(p, ops[i].text, NULL, NULL);
      tp_event_add(l, m, ops[i].start_us * US, ops[i].dur_us * US);
    }
  }
  tp_plane_add(s, 99, "/host:CPU");
  char *n = g_strdup_printf("host%d.xplane.pb", host);
  char *path = tp_write(s, n, FALSE);
  g_free(n);
  return path;
}

static void test_all_kinds_two_hosts(void)
{
  char *h0 = make_host(0), *h1 = make_host(1);
  const char *paths[] = {h0, h1};
  fe_xla_report rep;
  fe_xla_report_init(&rep);
  et_workload *w = load(paths, 2, NULL, &rep);
  /* 2 files x 2 chips; chip numbers repeat, so file 1's chips are devices 2 and 3. */
  g_assert_cmpint(w->n_ranks, ==, 4);
  g_assert_true(warned(&rep, "reuse chip numbers"));
  g_assert_cmpint(rep.n_devices, ==, 4);
  g_assert_cmpuint(rep.partial_groups, ==, 0);
  g_assert_cmpuint(rep.unsized, ==, 0);
  /* Per rank: AR x2 (sync + async), AG, RS, A2A, permute, broadcast, one send, one recv. */
  g_assert_cmpuint(rep.collectives[FE_HLO_ALL_REDUCE], ==, 8);
  g_assert_cmpuint(rep.collectives[FE_HLO_COLLECTIVE_PERMUTE], ==, 4);
  g_assert_cmpuint(rep.async_pairs, ==, 8);
  /* Only device 0 has a send to device 3 and device 3 the recv from 0; the others'
   * send/recv name peers but not themselves, so nothing is emitted for them. */
  for (int r = 0; r < 4; r++) {
    const et_graph *g = w->ranks[r];
    uint32_t ar = find_node(g, "all-reduce.1", ET_NODE_COMM_COLL, 0);
    g_assert_cmpuint(ar, !=, ET_NONE);
    g_assert_cmpuint(et_node_comm(g, ar)->bytes, ==, 256 * 4);
    const et_group *grp = et_workload_group(w, et_node_comm(g, ar)->group);
    /* {0,1},{2,3}: rank r's partner is r ^ 1 */
    g_assert_cmpint(grp->n_ranks, ==, 2);
    g_assert_cmpint(grp->ranks[0], ==, r & ~1);
    g_assert_cmpint(grp->ranks[1], ==, r | 1);
    uint32_t agn = find_node(g, "all-gather.2", ET_NODE_COMM_COLL, 0);
    g_assert_cmpuint(et_node_comm(g, agn)->bytes, ==, 4 * 8 * 2);
    g_assert_cmpint(et_workload_group(w, et_node_comm(g, agn)->group)->n_ranks, ==, 4);
    uint32_t rsn = find_node(g, "reduce-scatter.3", ET_NODE_COMM_COLL, 0);
    g_assert_cmpuint(et_node_comm(g, rsn)->bytes, ==, 16 * 4);
    g_assert_cmpint(et_node_comm(g, rsn)->coll, ==, ET_COLL_REDUCE_SCATTER);
    uint32_t a2a = find_node(g, "all-to-all.4", ET_NODE_COMM_COLL, 0);
    g_assert_cmpuint(et_node_comm(g, a2a)->bytes, ==, 4 * 8);
    const et_group *ag2 = et_workload_group(w, et_node_comm(g, a2a)->group);
    /* {0,2},{1,3}: partner r ^ 2 */
    g_assert_cmpint(ag2->ranks[0], ==, r & 1);
    g_assert_cmpint(ag2->ranks[1], ==, (r & 1) + 2);
    /* async all-reduce: 2,048 B, interval 80 -> 115 µs = 35 µs; fusion.6 overlaps it,
     * the node after the done (the gap before the permute) waits for it. */
    uint32_t ars = find_node(g, "all-reduce-start.5", ET_NODE_COMM_COLL, 0);
    g_assert_cmpuint(et_node_comm(g, ars)->bytes, ==, 1024 * 2);
    g_assert_cmpint(g->nodes[ars].duration_ps, ==, 35 * US);
    uint32_t fus = find_node(g, "fusion.6", ET_NODE_COMP, 0);
    g_assert_false(has_parent(g, fus, ars));
    g_assert_cmpint(et_workload_group(w, et_node_comm(g, ars)->group)->n_ranks, ==, 4);
    uint32_t after = ET_NONE;
    for (uint32_t i = fus + 1; i < g->n_nodes && after == ET_NONE; i++)
      if (has_parent(g, i, ars))
        after = i;
    g_assert_cmpuint(after, !=, ET_NONE);
    /* the done's end is 115 µs; the next node starts there (a gap to the permute at 120) */
    g_assert_cmpint(g->nodes[after].start_ps - g->nodes[ars].start_ps, ==, 35 * US);
    /* permute: SEND to r+1 and RECV from r-1 (ring), 256 B, same tag on both sides */
    uint32_t snd = find_node(g, "collective-permute-start.7", ET_NODE_COMM_SEND, 0);
    uint32_t rcv = find_node(g, "collective-permute-start.7", ET_NODE_COMM_RECV, 0);
    g_assert_cmpuint(snd, !=, ET_NONE);
    g_assert_cmpuint(rcv, !=, ET_NONE);
    g_assert_cmpint(et_node_comm(g, snd)->dst, ==, (r + 1) % 4);
    g_assert_cmpint(et_node_comm(g, rcv)->src, ==, (r + 3) % 4);
    g_assert_cmpuint(et_node_comm(g, snd)->bytes, ==, 64 * 4);
    g_assert_cmpint(et_node_comm(g, snd)->tag, ==, et_node_comm(w->ranks[(r + 1) % 4],
                    find_node(w->ranks[(r + 1) % 4], "collective-permute-start.7", ET_NODE_COMM_RECV, 0))->tag);
    uint32_t cb = find_node(g, "collective-broadcast.8", ET_NODE_COMM_COLL, 0);
    g_assert_cmpint(et_node_comm(g, cb)->coll, ==, ET_COLL_BROADCAST);
    g_assert_cmpint(et_node_comm(g, cb)->root, ==, 0);
    g_assert_cmpuint(et_node_comm(g, cb)->bytes, ==, 10);
    uint32_t s9 = find_node(g, "send.9", ET_NODE_COMM_SEND, 0);
    uint32_t r10 = find_node(g, "recv.10", ET_NODE_COMM_RECV, 0);
    if (r == 0) {
      g_assert_cmpuint(s9, !=, ET_NONE);
      g_assert_cmpint(et_node_comm(g, s9)->dst, ==, 3);
      g_assert_cmpuint(et_node_comm(g, s9)->bytes, ==, 8);
    } else {
      g_assert_cmpuint(s9, ==, ET_NONE);
    }
    if (r == 3) {
      g_assert_cmpuint(r10, !=, ET_NONE);
      g_assert_cmpint(et_node_comm(g, r10)->src, ==, 0);
      g_assert_cmpuint(et_node_comm(g, r10)->bytes, ==, 8);
    } else {
      g_assert_cmpuint(r10, ==, ET_NONE);
    }
  }
  /* Host 1's line timestamp is 1,000 ns later: its first op starts 1 µs after host 0's. */
  g_assert_cmpint(w->ranks[2]->nodes[0].start_ps - w->ranks[0]->nodes[0].start_ps, ==, 1 * US);
  /* fusion.6 (85 -> 105 µs) overlaps nothing of its chain: the async all-reduce
   * start ended at 82 µs; no op in this profile overlaps its predecessor. */
  g_assert_cmpuint(rep.overlapped_ops, ==, 0);
  et_workload_free(w);
  fe_xla_report_clear(&rep);
  g_unlink(h0);
  g_unlink(h1);
  g_free(h0);
  g_free(h1);
}

/* Disjoint chip numbers across files are global ids as they are. */
static void test_disjoint_hosts(void)
{
  char *paths[2];
  for (int h = 0; h < 2; h++) {
    tp_space *s = tp_space_new();
    char name[64];
    g_snprintf(name, sizeof name, "/device:TPU:%d", h);
    tp_plane *p = tp_plane_add(s, 1, name);
    tp_line *l = tp_line_add(p, 3, "XLA Ops", 0);
    int64_t m = tp_meta(p, "%ar = bf16[3]{0} all-reduce(bf16[3]{0} %x), replica_groups={{1,0}}, to_apply=%a",
                        NULL, NULL);
    tp_event_add(l, m, 5 * US, 1 * US);
    char *f = g_strdup_printf("disjoint%d.xplane.pb", h);
    paths[h] = tp_write(s, f, FALSE);
    g_free(f);
  }
  fe_xla_report rep;
  fe_xla_report_init(&rep);
  /* Given in reverse order: ranks still follow device ids. */
  const char *rev[] = {paths[1], paths[0]};
  et_workload *w = load(rev, 2, NULL, &rep);
  g_assert_cmpint(w->n_ranks, ==, 2);
  g_assert_false(warned(&rep, "reuse"));
  /* rank 0 is device 0, read from the second file given */
  g_assert_nonnull(strstr(w->ranks[0]->source, "disjoint0.xplane.pb:/device:TPU:0"));
  const et_comm *cm = et_node_comm(w->ranks[1], 0);
  g_assert_cmpuint(cm->bytes, ==, 6);  /* bf16[3] */
  const et_group *grp = et_workload_group(w, cm->group);
  /* group order follows replica_groups: {1,0} */
  g_assert_cmpint(grp->ranks[0], ==, 1);
  g_assert_cmpint(grp->ranks[1], ==, 0);
  et_workload_free(w);
  fe_xla_report_clear(&rep);
  for (int h = 0; h < 2; h++) {
    g_unlink(paths[h]);
    g_free(paths[h]);
  }
}

/* The XProf `Steps` line delimits steps when no marker is given. */
static void test_steps_line(void)
{
  tp_space *s = tp_space_new();
  tp_plane *p = tp_plane_add(s, 1, "/device:TPU:0");
  tp_line *st = tp_line_add(p, 1, "Steps", 0);
  tp_line *l = tp_line_add(p, 3, "XLA Ops", 0);
  int64_t ms = tp_meta(p, "1", NULL, NULL);
  int64_t mf = tp_meta(p, "%fusion.1 = f32[8]{0} fusion(f32[8]{0} %a), kind=kLoop, calls=%c", NULL, NULL);
  /* steps [100, 200) and [200, 300) µs; ops at 50 (before), 110, 210, 350 (after) */
  tp_event_add(st, ms, 100 * US, 100 * US);
  tp_event_add(st, ms, 200 * US, 100 * US);
  const int64_t at[] = {50, 110, 210, 350};
  for (int i = 0; i < 4; i++)
    tp_event_add(l, mf, at[i] * US, 10 * US);
  char *path = tp_write(s, "steps.xplane.pb", FALSE);
  const char *paths[] = {path};
  fe_xla_report rep;
  fe_xla_report_init(&rep);
  et_workload *w = load(paths, 1, NULL, &rep);
  /* all steps: window [100, 300) keeps the ops at 110 and 210: fusion, gap 90 µs, fusion */
  g_assert_cmpuint(rep.steps, ==, 2);
  g_assert_cmpuint(rep.outside_steps, ==, 2);
  g_assert_cmpuint(w->ranks[0]->n_nodes, ==, 3);
  g_assert_cmpint(w->ranks[0]->nodes[1].duration_ps, ==, 90 * US);
  g_assert_cmpint(w->measured_step_ps[0], ==, 200 * US);
  et_workload_free(w);
  fe_xla_report_clear(&rep);
  /* step 1 only: [200, 300) keeps the op at 210 */
  fe_xla_options opt;
  fe_xla_options_init(&opt);
  opt.step_index = 1;
  fe_xla_report_init(&rep);
  w = load(paths, 1, &opt, &rep);
  g_assert_cmpuint(rep.outside_steps, ==, 3);
  g_assert_cmpuint(w->ranks[0]->n_nodes, ==, 1);
  g_assert_cmpint(w->measured_step_ps[0], ==, 100 * US);
  et_workload_free(w);
  fe_xla_report_clear(&rep);
  /* step 2 does not exist */
  opt.step_index = 2;
  GError *err = NULL;
  g_assert_null(fe_xla_load(paths, 1, &opt, NULL, &err));
  g_assert_error(err, WISP_ERROR, WISP_ERROR_INVALID);
  g_assert_nonnull(strstr(err->message, "has 2 steps"));
  g_clear_error(&err);
  g_unlink(path);
  g_free(path);
}

/* Overlapping ops of one chain are serialised; the report says by how much. */
static void test_overlap(void)
{
  tp_space *s = tp_space_new();
  tp_plane *p = tp_plane_add(s, 1, "/device:TPU:0");
  tp_line *l = tp_line_add(p, 3, "XLA Ops", 0);
  int64_t m = tp_meta(p, "%fusion.1 = f32[8]{0} fusion(f32[8]{0} %a), kind=kLoop, calls=%c", NULL, NULL);
  tp_event_add(l, m, 0, 10 * US);
  tp_event_add(l, m, 5 * US, 10 * US);   /* [5, 15) starts 5 µs before [0, 10) ends */
  tp_event_add(l, m, 12 * US, 1 * US);   /* [12, 13) lies inside [5, 15): 1 µs added */
  char *path = tp_write(s, "overlap.xplane.pb", FALSE);
  const char *paths[] = {path};
  fe_xla_report rep;
  fe_xla_report_init(&rep);
  et_workload *w = load(paths, 1, NULL, &rep);
  g_assert_cmpuint(rep.overlapped_ops, ==, 2);
  g_assert_cmpint(rep.overlap_added_ps, ==, 5 * US + 1 * US);
  g_assert_cmpuint(w->ranks[0]->n_nodes, ==, 3);   /* no gap nodes */
  et_workload_free(w);
  fe_xla_report_clear(&rep);
  g_unlink(path);
  g_free(path);
}

/* ---- the real profile ---- */

static char *real_path(void)
{
  const char *d = g_getenv("WISP_SHARED_DATA");
  if (!d)
    return NULL;
  char *p = g_build_filename(d, "xprof", "test_xplanes", "tpu_inference_2.xplane.pb", NULL);
  if (!g_file_test(p, G_FILE_TEST_EXISTS)) {
    g_free(p);
    return NULL;
  }
  return p;
}

typedef struct {
  int tpu_planes, tpu_lines;
  int ar[8];
  int64_t first_ar_dur;
  int64_t first_ar_uid;
} real_counts;

static gboolean rc_plane(void *u, const fe_xplane_plane *p)
{
  real_counts *c = u;
  if (g_str_has_prefix(fe_xplane_plane_name(p), "/device:TPU:")) {
    c->tpu_planes++;
    return TRUE;
  }
  return FALSE;
}

static gboolean rc_line(void *u, const fe_xplane_plane *p, const char *name, int64_t id)
{
  ((real_counts *) u)->tpu_lines++;
  return strcmp(name, "XLA Ops") == 0;
}

static gboolean rc_event(void *u, const fe_xevent_view *v, GError **e)
{
  real_counts *c = u;
  if (strcmp(v->display_name, "all-reduce") != 0)
    return TRUE;
  int chip = fe_xplane_plane_name(v->plane)[12] - '0';
  if (chip == 0 && c->ar[0] == 0) {
    fe_xstat_value s;
    c->first_ar_dur = v->duration_ps;
    g_assert_true(fe_xevent_stat(v, "all_reduce_unique_id", &s));
    g_assert_true(fe_xstat_as_int64(&s, &c->first_ar_uid));
  }
  c->ar[chip]++;
  return TRUE;
}

static void test_real_reader(void)
{
  char *path = real_path();
  if (!path) {
    test_skip_absent("xprof/test_xplanes/tpu_inference_2.xplane.pb");
    return;
  }
  GError *err = NULL;
  fe_xplane_file *f = fe_xplane_file_open(path, NULL, &err);
  g_assert_no_error(err);
  real_counts c = {0};
  fe_xplane_visitor vis = {rc_plane, rc_line, rc_event, NULL};
  fe_xplane_counts k;
  g_assert_true(fe_xplane_scan(f, &vis, &c, &k, &err));
  g_assert_no_error(err);
  /* doc/xla.md §1.1/§8: 7 planes, 4 TPU planes x 5 lines, 3 all-reduce per chip,
   * first all-reduce on TPU:0 lasts 121,687,640,000 ps with unique id 131073. */
  g_assert_cmpuint(k.planes, ==, 7);
  g_assert_cmpint(c.tpu_planes, ==, 4);
  g_assert_cmpint(c.tpu_lines, ==, 20);
  for (int i = 0; i < 4; i++)
    g_assert_cmpint(c.ar[i], ==, 3);
  g_assert_cmpint(c.first_ar_dur, ==, INT64_C(121687640000));
  g_assert_cmpint(c.first_ar_uid, ==, 131073);
  fe_xplane_file_free(f);
  g_free(path);
}

static void test_real_workload(void)
{
  char *path = real_path();
  if (!path) {
    test_skip_absent("xprof/test_xplanes/tpu_inference_2.xplane.pb");
    return;
  }
  const char *paths[] = {path};
  fe_xla_report rep;
  fe_xla_report_init(&rep);
  et_workload *w = load(paths, 1, NULL, &rep);
  g_assert_cmpint(w->n_ranks, ==, 4);
  /* groups [4,2]<=[2,4]T(1,0) = {0,4},{1,5},{2,6},{3,7}: 8 device ids named */
  g_assert_cmpint(rep.n_devices, ==, 8);
  g_assert_cmpuint(rep.collectives[FE_HLO_ALL_REDUCE], ==, 12);
  /* every execution's group lacks its partner (devices 4..7 are on another host) */
  g_assert_cmpuint(rep.partial_groups, ==, 12);
  g_assert_true(warned(&rep, "2 devices, 1 present"));
  g_assert_cmpuint(rep.unsized, ==, 0);
  /* XLA Ops events: 1,504 on TPU:0 and 1,503 on each other chip (doc/xla.md §1.1) */
  g_assert_cmpuint(rep.ops, ==, 1504 + 3 * 1503);
  /* Size from the HLO text: f32[5,1024,1024,256] = 5*1024*1024*256 elements x 4 B. */
  const uint64_t want = UINT64_C(5) * 1024 * 1024 * 256 * 4;
  for (int r = 0; r < 4; r++) {
    const et_graph *g = w->ranks[r];
    int n = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
      const et_comm *cm = et_node_comm(g, i);
      if (!cm)
        continue;
      n++;
      g_assert_cmpint(cm->coll, ==, ET_COLL_ALL_REDUCE);
      g_assert_cmpuint(cm->bytes, ==, want);
      /* the present member of {r, r+4} is rank r alone */
      const et_group *grp = et_workload_group(w, cm->group);
      g_assert_cmpint(grp->n_ranks, ==, 1);
      g_assert_cmpint(grp->ranks[0], ==, r);
      if (r == 0 && n == 1)
        g_assert_cmpint(g->nodes[i].duration_ps, ==, INT64_C(121687640000));
    }
    g_assert_cmpint(n, ==, 3);
  }
  g_assert_cmpuint(rep.comm_bytes, ==, 12 * want);
  /* Some zero-duration ops lie inside long copy-done events: counted as
   * overlapping, and serialising them adds no time. */
  g_assert_cmpuint(rep.overlapped_ops, >, 0);
  g_assert_cmpint(rep.overlap_added_ps, ==, 0);
  et_workload_free(w);
  fe_xla_report_clear(&rep);
  /* strict: the missing group members are an error that says what to do */
  fe_xla_options opt;
  fe_xla_options_init(&opt);
  opt.strict = TRUE;
  GError *err = NULL;
  g_assert_null(fe_xla_load(paths, 1, &opt, NULL, &err));
  g_assert_error(err, WISP_ERROR, WISP_ERROR_INVALID);
  g_assert_nonnull(strstr(err->message, "every host's file"));
  g_clear_error(&err);
  /* replicate_missing: devices 4..7 replay chips 0..3, so every group {r, r+4} is
   * complete (2 ranks) and strict mode passes. */
  opt.replicate_missing = TRUE;
  fe_xla_report_init(&rep);
  w = load(paths, 1, &opt, &rep);
  g_assert_cmpint(w->n_ranks, ==, 8);
  g_assert_cmpuint(rep.replicated_ranks, ==, 4);
  g_assert_cmpuint(rep.partial_groups, ==, 0);
  for (int r = 0; r < 8; r++) {
    const et_graph *g = w->ranks[r];
    const et_graph *src = w->ranks[r % 4];
    g_assert_cmpuint(g->n_nodes, ==, src->n_nodes);
    g_assert_cmpint(w->measured_step_ps[r], ==, w->measured_step_ps[r % 4]);
    for (uint32_t i = 0; i < g->n_nodes; i++) {
      const et_comm *cm = et_node_comm(g, i);
      if (!cm)
        continue;
      g_assert_cmpuint(cm->bytes, ==, want);
      const et_group *grp = et_workload_group(w, cm->group);
      g_assert_cmpint(grp->n_ranks, ==, 2);
      g_assert_cmpint(grp->ranks[0], ==, r % 4);
      g_assert_cmpint(grp->ranks[1], ==, r % 4 + 4);
    }
  }
  g_assert_nonnull(strstr(w->ranks[5]->source, "replays"));
  et_workload_free(w);
  fe_xla_report_clear(&rep);
  /* device_clock: ops take their device_duration_ps stats; every XLA Ops
   * event of this file carries both device stats.  The second all-reduce on
   * TPU:0 lasts 121,687,590,000 ps on the device clock while its event
   * duration is 121,687,589,844 ps; the first is 121,687,640,000 ps on both
   * clocks, the third 121,685,863,750 ps (device stats read from the file with
   * the reader test's visitor when this test was written). */
  fe_xla_options dopt;
  fe_xla_options_init(&dopt);
  dopt.device_clock = TRUE;
  fe_xla_report_init(&rep);
  w = load(paths, 1, &dopt, &rep);
  g_assert_cmpuint(rep.device_clock_ops, ==, 1504 + 3 * 1503);
  int nar = 0;
  for (uint32_t i = 0; i < w->ranks[0]->n_nodes; i++)
    if (et_node_comm(w->ranks[0], i)) {
      nar++;
      const int64_t dev_dur[] = {INT64_C(121687640000), INT64_C(121687590000), INT64_C(121685863750)};
      g_assert_cmpint(w->ranks[0]->nodes[i].duration_ps, ==, dev_dur[nar - 1]);
    }
  g_assert_cmpint(nar, ==, 3);
  et_workload_free(w);
  fe_xla_report_clear(&rep);
  g_free(path);
}

/* ---- malformed input ---- */

static gboolean count_event(void *u, const fe_xevent_view *v, GError **e)
{
  (*(int *) u)++;
  return TRUE;
}

static gboolean scan_bytes(const guint8 *d, size_t n, GError **err)
{
  fe_xplane_file *f = fe_xplane_file_new_from_data(d, n, "mem.xplane.pb");
  int events = 0;
  fe_xplane_visitor vis = {NULL, NULL, count_event, NULL};
  gboolean ok = fe_xplane_scan(f, &vis, &events, NULL, err);
  fe_xplane_file_free(f);
  return ok;
}

static void expect_parse_error(const guint8 *d, size_t n, const char *needle)
{
  GError *err = NULL;
  g_assert_false(scan_bytes(d, n, &err));
  g_assert_error(err, WISP_ERROR, WISP_ERROR_PARSE);
  if (!strstr(err->message, needle))
    g_error("expected \"%s\" in \"%s\"", needle, err->message);
  g_assert_nonnull(strstr(err->message, "mem.xplane.pb: byte "));
  g_clear_error(&err);
}

static void test_malformed(void)
{
  /* XSpace.planes (field 1) with wire type 0 */
  static const guint8 wt[] = {0x08, 0x01};
  expect_parse_error(wt, sizeof wt, "XSpace.planes field 1 has wire type 0");
  /* a plane declaring 2^35 bytes with none left */
  static const guint8 huge[] = {0x0a, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
  expect_parse_error(huge, sizeof huge, "declares 34359738368 bytes but only 0 remain");
  /* group wire type 3 */
  static const guint8 grp[] = {0x0b};
  expect_parse_error(grp, sizeof grp, "unsupported wire type 3");
  /* an 11-byte varint */
  static const guint8 vlong[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  expect_parse_error(vlong, sizeof vlong, "varint longer than 10 bytes");
  /* plane {line {event with a truncated inner stat length}} */
  static const guint8 ev[] = {0x0a, 0x06, 0x1a, 0x04, 0x22, 0x02, 0x22, 0x05};
  expect_parse_error(ev, sizeof ev, "malformed XEvent");
  /* plane {line {event {stat with a group tag (wire type 3), then a second
   * group tag}}}: the bad stat must end the event (found by
   * fuzz/fuzz_xplane.c: decoding went on and set the error twice, which
   * GLib reports as a bug and which leaked the first error). */
  static const guint8 ev2[] = {0x0a, 0x08, 0x1a, 0x06, 0x22, 0x04, 0x22, 0x01, 0x0b, 0x0b};
  expect_parse_error(ev2, sizeof ev2, "malformed XEvent: mem.xplane.pb: byte 8: unsupported wire type 3");
  /* field number 0 */
  static const guint8 f0[] = {0x00, 0x01};
  expect_parse_error(f0, sizeof f0, "invalid field number 0");
  /* XLine.timestamp_ns as a length-delimited field */
  static const guint8 lts[] = {0x0a, 0x04, 0x1a, 0x02, 0x1a, 0x00};
  expect_parse_error(lts, sizeof lts, "XLine field 3 has wire type 2");
  /* empty input is an empty XSpace (no planes): reading succeeds, loading fails */
  g_assert_true(scan_bytes((const guint8 *) "", 0, NULL));
  /* The same with no buffer at all, as GLib maps an empty file (found by
   * fuzz/fuzz_xplane.c: the scan computed NULL + 0, undefined behaviour that
   * UBSan reports).  The frontend then finds no TPU plane. */
  g_assert_true(scan_bytes(NULL, 0, NULL));
  {
    char *ep = g_build_filename(tmp_dir, "empty.xplane.pb", NULL);
    g_assert_true(g_file_set_contents(ep, "", 0, NULL));
    const char *epaths[] = {ep};
    GError *eerr = NULL;
    g_assert_null(fe_xla_load(epaths, 1, NULL, NULL, &eerr));
    g_assert_error(eerr, WISP_ERROR, WISP_ERROR_INVALID);
    g_assert_nonnull(strstr(eerr->message, "/device:TPU:N"));
    g_clear_error(&eerr);
    g_unlink(ep);
    g_free(ep);
  }

  /* Every truncation and many single-byte corruptions of a valid profile must
   * either decode or fail with a WISP_ERROR; never crash or hang. */
  char *path = make_host(0);
  gchar *data;
  gsize len;
  g_assert_true(g_file_get_contents(path, &data, &len, NULL));
  int failures = 0;
  for (gsize cut = 0; cut < len; cut++) {
    GError *err = NULL;
    if (!scan_bytes((guint8 *) data, cut, &err)) {
      g_assert_true(err && err->domain == WISP_ERROR);
      g_clear_error(&err);
      failures++;
    }
  }
  /* Truncation inside the single top-level plane always breaks its length. */
  g_assert_cmpint(failures, >, 0);
  GRand *rnd = g_rand_new_with_seed(42);
  guint8 *copy = g_malloc(len);
  for (int i = 0; i < 3000; i++) {
    memcpy(copy, data, len);
    for (int k = 0; k < 3; k++)
      copy[g_rand_int_range(rnd, 0, (gint32) len)] = (guint8) g_rand_int_range(rnd, 0, 256);
    GError *err = NULL;
    if (!scan_bytes(copy, len, &err)) {
      g_assert_true(err && err->domain == WISP_ERROR);
      g_clear_error(&err);
    }
  }
  /* The whole pipeline (reader, HLO parser, graph builder) on corrupted files. */
  char *fp = g_build_filename(tmp_dir, "fuzz.xplane.pb", NULL);
  const char *fpaths[] = {fp};
  for (int i = 0; i < 300; i++) {
    memcpy(copy, data, len);
    for (int k = 0; k < 2; k++)
      copy[g_rand_int_range(rnd, 0, (gint32) len)] = (guint8) g_rand_int_range(rnd, 0, 256);
    g_assert_true(g_file_set_contents(fp, (char *) copy, (gssize) len, NULL));
    GError *err = NULL;
    et_workload *w = fe_xla_load(fpaths, 1, NULL, NULL, &err);
    if (w)
      et_workload_free(w);
    else {
      g_assert_true(err && err->domain == WISP_ERROR);
      g_clear_error(&err);
    }
  }
  g_unlink(fp);
  g_free(fp);
  g_free(copy);
  g_rand_free(rnd);
  /* The whole frontend on a truncated file: an error naming the file. */
  char *tp = g_build_filename(tmp_dir, "trunc.xplane.pb", NULL);
  g_assert_true(g_file_set_contents(tp, data, (gssize) (len / 2), NULL));
  const char *paths[] = {tp};
  GError *err = NULL;
  g_assert_null(fe_xla_load(paths, 1, NULL, NULL, &err));
  g_assert_error(err, WISP_ERROR, WISP_ERROR_PARSE);
  g_assert_nonnull(strstr(err->message, "trunc.xplane.pb: byte"));
  g_clear_error(&err);
  /* Corrupt gzip */
  static const char badgz[] = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage-not-deflate";
  g_assert_true(g_file_set_contents(tp, badgz, sizeof badgz - 1, NULL));
  g_assert_null(fe_xla_load(paths, 1, NULL, NULL, &err));
  g_assert_error(err, WISP_ERROR, WISP_ERROR_PARSE);
  g_assert_nonnull(strstr(err->message, "gzip"));
  g_clear_error(&err);
  /* Size limit */
  g_assert_true(g_file_set_contents(tp, data, (gssize) len, NULL));
  fe_xla_options opt;
  fe_xla_options_init(&opt);
  opt.limits.max_bytes = 100;
  g_assert_null(fe_xla_load(paths, 1, &opt, NULL, &err));
  g_assert_error(err, WISP_ERROR, WISP_ERROR_LIMIT);
  g_clear_error(&err);
  /* No TPU plane */
  tp_space *s = tp_space_new();
  tp_plane_add(s, 1, "/host:CPU");
  char *np = tp_write(s, "cpu.xplane.pb", FALSE);
  const char *npaths[] = {np};
  g_assert_null(fe_xla_load(npaths, 1, NULL, NULL, &err));
  g_assert_error(err, WISP_ERROR, WISP_ERROR_INVALID);
  g_assert_nonnull(strstr(err->message, "/device:TPU:N"));
  g_clear_error(&err);
  /* Missing file */
  const char *missing[] = {"/nonexistent/x.xplane.pb"};
  g_assert_null(fe_xla_load(missing, 1, NULL, NULL, &err));
  g_assert_error(err, WISP_ERROR, WISP_ERROR_IO);
  g_clear_error(&err);
  g_unlink(np);
  g_free(np);
  g_unlink(tp);
  g_free(tp);
  g_free(data);
  g_unlink(path);
  g_free(path);
}

/* A collective with an unknown element type is unsized, never guessed: it
 * replays its measured 7 us (an all-reduce of 0 bytes, flagged
 * ET_FLAG_REPLAY, so neither free nor simulated). */
static void test_unknown_dtype(void)
{
  tp_space *s = tp_space_new();
  tp_plane *p = tp_plane_add(s, 1, "/device:TPU:0");
  tp_line *l = tp_line_add(p, 3, "XLA Ops", 0);
  int64_t m = tp_meta(p, "%ar = f99[8]{0} all-reduce(f99[8]{0} %x), replica_groups={}, to_apply=%a",
                      "all-reduce", "all-reduce");
  tp_event_add(l, m, 0, 7 * US);
  char *path = tp_write(s, "dtype.xplane.pb", FALSE);
  const char *paths[] = {path};
  fe_xla_report rep;
  fe_xla_report_init(&rep);
  et_workload *w = load(paths, 1, NULL, &rep);
  g_assert_cmpuint(rep.unsized, ==, 1);
  g_assert_true(warned(&rep, "unknown element type \"f99\""));
  g_assert_cmpint(w->ranks[0]->nodes[0].type, ==, ET_NODE_COMM_COLL);
  g_assert_true(w->ranks[0]->nodes[0].flags & ET_FLAG_REPLAY);
  g_assert_cmpint(w->ranks[0]->nodes[0].duration_ps, ==, 7 * US);
  g_assert_cmpuint(w->ranks[0]->n_comms, ==, 1);
  g_assert_cmpint(et_node_comm(w->ranks[0], 0)->coll, ==, ET_COLL_ALL_REDUCE);
  g_assert_cmpuint(rep.replayed_collectives, ==, 1);
  et_workload_free(w);
  fe_xla_report_clear(&rep);
  g_unlink(path);
  g_free(path);
  /* A device in two replica groups is invalid HLO: an error naming the op. */
  s = tp_space_new();
  p = tp_plane_add(s, 1, "/device:TPU:0");
  l = tp_line_add(p, 3, "XLA Ops", 0);
  m = tp_meta(p, "%ar.2 = f32[8]{0} all-reduce(f32[8]{0} %x), replica_groups={{0,1},{1,0}}, to_apply=%a", NULL, NULL);
  tp_event_add(l, m, 0, 7 * US);
  path = tp_write(s, "dup.xplane.pb", FALSE);
  paths[0] = path;
  GError *err = NULL;
  g_assert_null(fe_xla_load(paths, 1, NULL, NULL, &err));
  g_assert_error(err, WISP_ERROR, WISP_ERROR_INVALID);
  g_assert_nonnull(strstr(err->message, "ar.2: device 1 appears twice"));
  g_clear_error(&err);
  g_unlink(path);
  g_free(path);
}

/* GPU planes (issue 20): /device:GPU:N planes are ranks like TPU chips;
 * their "Stream #K" lines hold the kernels, the registry's communication
 * kernels (here NCCL's) are collectives of unknown size, replayed at their
 * measured duration; a GPU plane without kernels is an idle rank. */
static void test_gpu_planes(void)
{
  tp_space *s = tp_space_new();
  tp_plane *p = tp_plane_add(s, 1, "/device:GPU:0");
  tp_line *st = tp_line_add(p, 1, "Steps", 0);
  tp_line *l = tp_line_add(p, 7, "Stream #7(Compute)", 0);
  tp_line *l2 = tp_line_add(p, 9, "Stream #9(MemcpyH2D)", 0);
  tp_line *tfops = tp_line_add(p, 2, "TensorFlow Ops", 0); /* repeats the kernels: skipped */
  int64_t ms = tp_meta(p, "1", NULL, NULL);
  int64_t mg = tp_meta(p, "volta_h884gemm_64x128_ldg8_nn", NULL, NULL);
  int64_t mn = tp_meta(p, "ncclDevKernel_AllReduce_Sum_f16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", NULL,
                       NULL);
  int64_t mc = tp_meta(p, "MemcpyH2D", NULL, NULL);
  int64_t mt = tp_meta(p, "MatMul", NULL, NULL);
  tp_event_add(st, ms, 0, 100 * US);
  tp_event_add(l, mg, 0, 30 * US);
  tp_event_add(l, mn, 40 * US, 50 * US);
  tp_event_add(l2, mc, 10 * US, 5 * US);
  tp_event_add(tfops, mt, 0, 30 * US);
  tp_plane_add(s, 2, "/device:GPU:1");
  tp_plane_add(s, 3, "/host:CPU");
  char *path = tp_write(s, "gpu.xplane.pb", FALSE);
  const char *paths[] = {path};
  fe_xla_report rep;
  fe_xla_report_init(&rep);
  et_workload *w = load(paths, 1, NULL, &rep);
  g_assert_cmpint(w->n_ranks, ==, 2);
  g_assert_cmpint(rep.n_gpu_planes, ==, 2);
  g_assert_cmpint(rep.idle_gpus, ==, 1);
  /* 3 kernels/copies (the TF op line is not read): gemm, NCCL, memcpy. */
  g_assert_cmpuint(rep.ops, ==, 3);
  g_assert_cmpuint(rep.collectives[FE_HLO_ALL_REDUCE], ==, 1);
  g_assert_cmpuint(rep.unsized, ==, 1);
  g_assert_cmpuint(rep.replayed_collectives, ==, 1);
  g_assert_true(warned(&rep, "NCCL communication kernel"));
  const et_graph *g = w->ranks[0];
  gboolean found = FALSE;
  for (uint32_t i = 0; i < g->n_nodes; i++)
    if (g->nodes[i].type == ET_NODE_COMM_COLL) {
      found = TRUE;
      g_assert_true(g->nodes[i].flags & ET_FLAG_REPLAY);
      g_assert_cmpint(g->nodes[i].duration_ps, ==, 50 * US);  /* its measured 50 us */
      g_assert_cmpint(et_node_comm(g, i)->coll, ==, ET_COLL_ALL_REDUCE);
    }
  g_assert_true(found);
  /* GPU:1 idles through the 100 us step: one delay node. */
  g_assert_cmpuint(w->ranks[1]->n_nodes, ==, 1);
  g_assert_cmpint(w->ranks[1]->nodes[0].duration_ps, ==, 100 * US);
  et_workload_free(w);
  fe_xla_report_clear(&rep);
  g_unlink(path);
  g_free(path);
}

/* The TensorFlow multi-worker GPU profile (data/README.md): planes
 * /device:GPU:0..7.  Counts from `protoc --decode=tensorflow.profiler.XSpace
 * frontends/xplane.proto < host0.xplane.pb`: Stream-line events 759 on
 * GPU:4 (665 compute + 80 + 12 + 2 copies), 778 on GPU:6 (665 + 99 + 12 +
 * 2), 19 on GPU:1, none on the others; one Steps event each on GPU:4 and
 * GPU:6: 1,558 events.  Its all-reduces (TF CollectiveReduce) are on the
 * /host:CPU plane, not GPU kernels: no collective is read. */
static void test_real_gpu(void)
{
  const char *d = g_getenv("WISP_SHARED_DATA");
  char *path = d ? g_build_filename(d, "xprof", "tf-gpu-multiworker", "host0.xplane.pb", NULL) : NULL;
  if (!path || !g_file_test(path, G_FILE_TEST_EXISTS)) {
    test_skip_absent("xprof/tf-gpu-multiworker/host0.xplane.pb");
    g_free(path);
    return;
  }
  const char *paths[] = {path};
  fe_xla_report rep;
  fe_xla_report_init(&rep);
  et_workload *w = load(paths, 1, NULL, &rep);
  g_assert_cmpint(w->n_ranks, ==, 8);
  g_assert_cmpint(rep.n_gpu_planes, ==, 8);
  g_assert_cmpuint(rep.events, ==, 759 + 778 + 19 + 2);
  g_assert_cmpint(rep.idle_gpus, ==, 6);
  g_assert_cmpuint(rep.unsized + rep.collectives[FE_HLO_ALL_REDUCE], ==, 0);
  et_workload_free(w);
  fe_xla_report_clear(&rep);
  g_free(path);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp("wisp-test-xla-XXXXXX", NULL);
  g_assert_nonnull(tmp_dir);
  g_test_add_func("/xla/a6", test_a6);
  g_test_add_func("/xla/a6-gzip", test_a6_gzip);
  g_test_add_func("/xla/a6-json", test_a6_json);
  g_test_add_func("/xla/json-two-hosts", test_json_two_hosts);
  g_test_add_func("/xla/all-kinds-two-hosts", test_all_kinds_two_hosts);
  g_test_add_func("/xla/disjoint-hosts", test_disjoint_hosts);
  g_test_add_func("/xla/steps-line", test_steps_line);
  g_test_add_func("/xla/overlap", test_overlap);
  g_test_add_func("/xla/real-reader", test_real_reader);
  g_test_add_func("/xla/real-workload", test_real_workload);
  g_test_add_func("/xla/malformed", test_malformed);
  g_test_add_func("/xla/unknown-dtype", test_unknown_dtype);
  g_test_add_func("/xla/gpu-planes", test_gpu_planes);
  g_test_add_func("/xla/real-gpu", test_real_gpu);
  int rc = g_test_run();
  g_rmdir(tmp_dir);
  g_free(tmp_dir);
  return rc;
}
