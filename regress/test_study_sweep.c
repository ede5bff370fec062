/* test_study_sweep.c: sweep specs, determinism, -j, resume after a kill,
 * shard + merge equality, and the sweep's values against closed forms.
 *
 * Workload: ranks 0 and 1 compute for 10 ms, then send S = 1e9 bytes to
 * ranks 2 and 3 across the scale-out switch of a [2, 2] two-tier cluster
 * (see test_study.c), so T = 10 ms + 2 x lat_out + S / B_out.
 */
#include "config.h"
#include "regress/test_util.h"
#include "studies/study_sweep.h"

#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *cluster_yaml =
  "schema_version: 1\nlibrary: {name: ideal}\n"
  "name: two-tier\n"
  "dims:\n"
  "  - {name: scale_up, kind: switch, size: 2, bandwidth: 300GB/s, latency: 500ns}\n"
  "  - {name: scale_out, kind: switch, size: 2, bandwidth: 25GB/s, latency: 1us}\n";

/* 10 x 2 = 20 points, last axis fastest. */
static const char *spec_yaml =
  "sweep_version: 1\n"
  "name: t\n"
  "cluster: cluster.yaml\n"
  "combine: grid\n"
  "base: {scale_out_bw: 25GB/s}\n"
  "axes:\n"
  "  - {key: scale_out_bw, range: {from: 10GB/s, to: 100GB/s, step: 10GB/s}}\n"
  "  - {key: dims.scale_out.latency, values: [1us, 2us]}\n";

static et_workload *p2p_workload_bytes(uint64_t bytes);
static et_workload *p2p_workload(void)
{
  return p2p_workload_bytes(1000000000);
}

static et_workload *p2p_workload_bytes(uint64_t bytes)
{
  et_workload *w = et_workload_new(4, "synthetic-p2p");
  for (int r = 0; r < 4; r++) {
    et_builder *b = et_builder_new("synthetic");
    gboolean sender = r < 2;
    if (sender)
      et_builder_add_node(b, 1, ET_NODE_COMP, "gemm", 10 * SIM_PS_PER_US * 1000, 0);
    uint32_t n = et_builder_add_node(b, 2, sender ? ET_NODE_COMM_SEND : ET_NODE_COMM_RECV, "p2p", 0, 0);
    et_comm c = {.bytes = bytes, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = sender ? r : r - 2,
                 .dst = sender ? r + 2 : r, .tag = 7, .root = -1, .coll = ET_COLL_NONE};
    et_builder_set_comm(b, n, &c, NULL, NULL, 0);
    if (sender)
      et_builder_add_dep(b, n, 1, TRUE, FALSE);
    GError *error = NULL;
    w->ranks[r] = et_builder_finish(b, 0, &error);
    g_assert_no_error(error);
  }
  GError *error = NULL;
  g_assert_true(et_workload_resolve_groups(w, &error));
  return w;
}

typedef struct {
  char *dir;
  char *spec_path;
  study_spec *spec;
  et_workload *w;
} fixture;

static void fx_setup(fixture *f, const char *spec)
{
  GError *error = NULL;
  f->dir = g_dir_make_tmp("wisp-sweep-XXXXXX", &error);
  g_assert_no_error(error);
  char *cp = g_build_filename(f->dir, "cluster.yaml", NULL);
  g_assert_true(g_file_set_contents(cp, cluster_yaml, -1, NULL));
  g_free(cp);
  f->spec_path = g_build_filename(f->dir, "spec.yaml", NULL);
  g_assert_true(g_file_set_contents(f->spec_path, spec, -1, NULL));
  f->spec = study_spec_load(f->spec_path, &error);
  g_assert_no_error(error);
  f->w = p2p_workload();
}

static void fx_teardown(fixture *f)
{
  study_spec_free(f->spec);
  et_workload_free(f->w);
  test_rm_rf(f->dir);
  g_free(f->dir);
  g_free(f->spec_path);
}

static char *slurp(const char *path)
{
  char *t = NULL;
  GError *error = NULL;
  g_assert_true(g_file_get_contents(path, &t, NULL, &error));
  g_assert_no_error(error);
  return t;
}

static void run_into(fixture *f, const char *sub, int jobs, int k, int n, gboolean resume, study_sweep_stats *st)
{
  char *out = g_build_filename(f->dir, sub, NULL);
  study_sweep_options o = {.out_dir = out, .jobs = jobs, .shard_k = k, .shard_n = n, .resume = resume};
  GError *error = NULL;
  g_assert_true(study_sweep_run(f->spec, f->w, &o, st, &error));
  g_assert_no_error(error);
  g_free(out);
}

/* Grid order and values: point p = 2 i + j has B_out = 10 (i + 1) GB/s and
 * lat_out = (j + 1) us, T = 10 ms + 2 lat_out + 1e9 B / B_out.  Point 0:
 * 10 ms + 2 us + 100 ms = 110.002 ms; utility against the base (25 GB/s,
 * 1 us: T_b = 10 ms + 2 us + 40 ms = 50.002 ms) is (50.002 - 110.002) /
 * 50.002 = -119.9952 %. */
static void test_values_and_order(void)
{
  fixture f;
  fx_setup(&f, spec_yaml);
  g_assert_cmpint(f.spec->n_points, ==, 20);
  g_assert_cmpstr(study_spec_value(f.spec, 0, 0), ==, "10GB/s");
  g_assert_cmpstr(study_spec_value(f.spec, 1, 1), ==, "2us");
  g_assert_cmpstr(study_spec_value(f.spec, 19, 0), ==, "100GB/s");
  study_sweep_stats st;
  run_into(&f, "a", 1, 1, 1, FALSE, &st);
  g_assert_cmpint(st.total, ==, 20);
  g_assert_cmpint(st.run, ==, 20);
  g_assert_cmpint(st.failed, ==, 0);
  char *csv = slurp(st.csv_path);
  char **lines = g_strsplit(csv, "\n", -1);
  g_assert_cmpstr(lines[0], ==, "point,label,scale_out_bw,dims.scale_out.latency,step_time_ns,compute_ns,"
                                "exposed_comm_ns,overlapped_comm_ns,idle_ns,utility_pct,status");
  g_assert_true(g_str_has_prefix(lines[1], "0,,10GB/s,1us,110002000.000,"));
  g_assert_true(g_str_has_suffix(lines[1], ",-119.995200,ok"));
  /* Point 3: 20 GB/s, 2 us: 10 ms + 4 us + 50 ms = 60.004 ms. */
  g_assert_true(g_str_has_prefix(lines[4], "3,,20GB/s,2us,60004000.000,"));
  g_assert_cmpuint(g_strv_length(lines), ==, 22); /* header + 20 rows + "" after the last newline */
  g_strfreev(lines);
  g_free(csv);
  /* The chart is well-formed XML (checked with GMarkup in test_study_out). */
  g_assert_true(g_file_test(st.svg_path, G_FILE_TEST_EXISTS));
  study_sweep_stats_clear(&st);
  fx_teardown(&f);
}

/* Same output twice, and with -j 3 (workers) as with -j 1. */
static void test_determinism(void)
{
  fixture f;
  fx_setup(&f, spec_yaml);
  study_sweep_stats a, b, c;
  run_into(&f, "a", 1, 1, 1, FALSE, &a);
  run_into(&f, "b", 1, 1, 1, FALSE, &b);
  run_into(&f, "c", 3, 1, 1, FALSE, &c);
  char *ca = slurp(a.csv_path), *cb = slurp(b.csv_path), *cc = slurp(c.csv_path);
  char *ja = slurp(a.jsonl_path), *jb = slurp(b.jsonl_path), *jc = slurp(c.jsonl_path);
  g_assert_cmpstr(ca, ==, cb);
  g_assert_cmpstr(ca, ==, cc);
  g_assert_cmpstr(ja, ==, jb);
  g_assert_cmpstr(ja, ==, jc);
  g_free(ca), g_free(cb), g_free(cc), g_free(ja), g_free(jb), g_free(jc);
  study_sweep_stats_clear(&a);
  study_sweep_stats_clear(&b);
  study_sweep_stats_clear(&c);
  fx_teardown(&f);
}

/* Shards 1..3 of 3 (points p % 3 == K - 1: 7, 7 and 6 points) merged equal
 * the unsharded files byte for byte; a missing shard is an error naming
 * the missing points. */
static void test_shard_merge(void)
{
  fixture f;
  fx_setup(&f, spec_yaml);
  study_sweep_stats full, s1, s2, s3;
  run_into(&f, "full", 1, 1, 1, FALSE, &full);
  run_into(&f, "s1", 1, 1, 3, FALSE, &s1);
  run_into(&f, "s2", 2, 2, 3, FALSE, &s2);
  run_into(&f, "s3", 1, 3, 3, FALSE, &s3);
  g_assert_cmpint(s1.total, ==, 7);
  g_assert_cmpint(s2.total, ==, 7);
  g_assert_cmpint(s3.total, ==, 6);
  char *out = g_build_filename(f.dir, "merged", NULL);
  char *inputs[] = {s3.csv_path, s1.jsonl_path, s2.csv_path}; /* any order, either file of a shard */
  GError *error = NULL;
  g_assert_true(study_sweep_merge(out, inputs, 3, &error));
  g_assert_no_error(error);
  char *mc = g_strconcat(out, ".csv", NULL), *mj = g_strconcat(out, ".jsonl", NULL);
  char *a = slurp(full.csv_path), *b = slurp(mc), *c = slurp(full.jsonl_path), *d = slurp(mj);
  g_assert_cmpstr(a, ==, b);
  g_assert_cmpstr(c, ==, d);
  g_free(a), g_free(b), g_free(c), g_free(d);
  /* Missing shard 2: points 1, 4, 7, ... are reported. */
  char *two[] = {s1.csv_path, s3.csv_path};
  g_assert_false(study_sweep_merge(out, two, 2, &error));
  g_assert_error(error, WISP_ERROR, WISP_ERROR_INVALID);
  g_assert_nonnull(strstr(error->message, "missing: 1, 4, 7"));
  g_clear_error(&error);
  /* Overlapping inputs are refused. */
  char *dup[] = {s1.csv_path, s1.csv_path};
  g_assert_false(study_sweep_merge(out, dup, 2, &error));
  g_assert_nonnull(strstr(error->message, "two inputs"));
  g_clear_error(&error);
  g_free(mc), g_free(mj), g_free(out);
  study_sweep_stats_clear(&full);
  study_sweep_stats_clear(&s1);
  study_sweep_stats_clear(&s2);
  study_sweep_stats_clear(&s3);
  fx_teardown(&f);
}

/* The run to kill: on_point runs in the worker process that finished the
 * point, so the sweep's own process is killed by its id, then the
 * worker. */
typedef struct {
  int count;
  pid_t run;
} kill_ctx;

static void kill_after_five(void *ctx, int point)
{
  kill_ctx *k = ctx;
  (void)point;
  if (++k->count == 5) {
    kill(k->run, SIGKILL);
    raise(SIGKILL);
  }
}

/* A run killed (SIGKILL) after its 5th point keeps those 5 rows; a stray
 * temporary file and a truncated row (as a crash of another tool might
 * leave) are ignored or redone; --resume simulates the other 15 and the
 * result equals an uninterrupted run. */
static void test_resume_after_kill(void)
{
  fixture f;
  fx_setup(&f, spec_yaml);
  study_sweep_stats full;
  run_into(&f, "full", 1, 1, 1, FALSE, &full);
  char *out = g_build_filename(f.dir, "killed", NULL);
  fflush(NULL);
  pid_t pid = fork();
  g_assert_cmpint(pid, >=, 0);
  if (pid == 0) {
    kill_ctx k = {0, getpid()};
    study_sweep_options o = {.out_dir = out, .jobs = 1, .on_point = kill_after_five, .on_point_ctx = &k};
    study_sweep_stats st;
    study_sweep_run(f.spec, f.w, &o, &st, NULL);
    _exit(0); /* not reached: killed after point 5 */
  }
  int status = 0;
  g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
  g_assert_true(WIFSIGNALED(status));
  g_assert_cmpint(WTERMSIG(status), ==, SIGKILL);
  char *final_csv = g_build_filename(out, "t.csv", NULL);
  g_assert_false(g_file_test(final_csv, G_FILE_TEST_EXISTS)); /* never assembled */
  char *pdir = g_build_filename(out, "t.points", NULL);
  int rows = 0;
  GDir *d = g_dir_open(pdir, 0, NULL);
  g_assert_nonnull(d);
  const char *e;
  while ((e = g_dir_read_name(d)))
    rows += g_str_has_suffix(e, ".row");
  g_dir_close(d);
  g_assert_cmpint(rows, ==, 5);
  char *junk = g_build_filename(pdir, "P0000006.row.tmp.ABCDEF", NULL);
  g_assert_true(g_file_set_contents(junk, "6,,half a ro", -1, NULL));
  char *trunc = g_build_filename(pdir, "P0000004.row", NULL);
  char *t4 = slurp(trunc);
  t4[strlen(t4) / 2] = '\0';
  g_assert_true(g_file_set_contents(trunc, t4, -1, NULL));
  g_free(t4);

  study_sweep_stats st;
  study_sweep_options o = {.out_dir = out, .jobs = 2, .resume = TRUE};
  GError *error = NULL;
  g_assert_true(study_sweep_run(f.spec, f.w, &o, &st, &error));
  g_assert_no_error(error);
  g_assert_cmpint(st.skipped, ==, 4); /* points 0..3; point 4 was truncated */
  g_assert_cmpint(st.run, ==, 16);
  char *a = slurp(full.csv_path), *b = slurp(st.csv_path), *c = slurp(full.jsonl_path), *dd = slurp(st.jsonl_path);
  g_assert_cmpstr(a, ==, b);
  g_assert_cmpstr(c, ==, dd);
  g_free(a), g_free(b), g_free(c), g_free(dd);
  g_free(junk), g_free(trunc), g_free(pdir), g_free(final_csv), g_free(out);
  study_sweep_stats_clear(&st);
  study_sweep_stats_clear(&full);
  fx_teardown(&f);
}

/* --resume keeps rows only for the same inputs: after the workload changes
 * (2e9 instead of 1e9 bytes per send) every point is simulated again; with
 * the same workload all 20 are kept. */
static void test_resume_checks_inputs(void)
{
  fixture f;
  fx_setup(&f, spec_yaml);
  study_sweep_stats a, b, c;
  run_into(&f, "r", 1, 1, 1, FALSE, &a);
  run_into(&f, "r", 1, 1, 1, TRUE, &b);
  g_assert_cmpint(b.skipped, ==, 20);
  g_assert_cmpint(b.run, ==, 0);
  et_workload_free(f.w);
  f.w = p2p_workload_bytes(2000000000);
  run_into(&f, "r", 1, 1, 1, TRUE, &c);
  g_assert_cmpint(c.skipped, ==, 0);
  g_assert_cmpint(c.run, ==, 20);
  /* Point 0 now: 10 ms + 2 us + 2e9 B / 10 GB/s = 210.002 ms. */
  char *csv = slurp(c.csv_path);
  g_assert_nonnull(strstr(csv, "\n0,,10GB/s,1us,210002000.000,"));
  g_free(csv);
  /* The measured compute concurrency sets the default compute slots, so a
   * workload that differs only in it is other content: nothing is reused. */
  char *before = study_workload_digest(f.w);
  for (int r = 0; r < f.w->n_ranks; r++)
    f.w->ranks[r]->compute_slots = 2;
  char *after = study_workload_digest(f.w);
  g_assert_cmpstr(before, !=, after);
  g_free(before);
  g_free(after);
  study_sweep_stats d;
  run_into(&f, "r", 1, 1, 1, TRUE, &d);
  g_assert_cmpint(d.skipped, ==, 0);
  g_assert_cmpint(d.run, ==, 20);
  study_sweep_stats_clear(&a);
  study_sweep_stats_clear(&b);
  study_sweep_stats_clear(&c);
  study_sweep_stats_clear(&d);
  fx_teardown(&f);
}

/* Zip, labels, run keys and a failing point (an unknown algorithm) that
 * becomes an error row instead of aborting the sweep. */
static void test_zip_and_errors(void)
{
  fixture f;
  fx_setup(&f, "sweep_version: 1\n"
               "name: t\n"
               "cluster: cluster.yaml\n"
               "combine: zip\n"
               "labels: [slow, fast]\n"
               "base: first\n"
               "axes:\n"
               "  - {key: scale_out_bw, values: [25GB/s, 50GB/s]}\n"
               "  - {key: scale_up_domain, values: [2, 4]}\n");
  study_sweep_stats st;
  run_into(&f, "z", 1, 1, 1, FALSE, &st);
  char *csv = slurp(st.csv_path);
  /* Point 1: 50 GB/s, domain 4 = all ranks in one scale-up switch:
   * T = 10 ms + 1 us + 1e9 / 300e9 s = 13.334333333 ms. */
  g_assert_nonnull(strstr(csv, "\n0,slow,25GB/s,2,50002000.000,"));
  g_assert_nonnull(strstr(csv, "\n1,fast,50GB/s,4,13334333.333,"));
  g_free(csv);
  study_sweep_stats_clear(&st);
  fx_teardown(&f);

  fx_setup(&f, "sweep_version: 1\n"
               "cluster: cluster.yaml\n"
               "axes:\n"
               "  - {key: algo, values: [ring, no-such-algo]}\n");
  run_into(&f, "e", 1, 1, 1, FALSE, &st);
  g_assert_cmpint(st.failed, ==, 1);
  csv = slurp(st.csv_path);
  g_assert_nonnull(strstr(csv, "\n1,,no-such-algo,,,,,,,error: "));
  g_free(csv);
  study_sweep_stats_clear(&st);
  fx_teardown(&f);
}

/* Malformed specs: each error names the file and line and the problem. */
static void test_bad_specs(void)
{
  static const struct {
    const char *yaml, *needle;
  } cases[] = {
    {"sweep_version: 2\ncluster: x\naxes: [{key: a, values: [1]}]\n", "sweep_version 2 is not supported"},
    {"cluster: x\naxes: [{key: a, values: [1]}]\n", "needs 'sweep_version: 1'"},
    {"sweep_version: 1\naxes: [{key: a, values: [1]}]\n", "needs 'cluster"},
    {"sweep_version: 1\ncluster: x\n", "'axes' must be a non-empty list"},
    {"sweep_version: 1\ncluster: x\naxes: [{key: a}]\n", "exactly one of 'values'"},
    {"sweep_version: 1\ncluster: x\naxes: [{key: a, values: []}]\n", "non-empty list"},
    {"sweep_version: 1\ncluster: x\naxes: [{key: a, range: {from: 1GB/s, to: 2Gbps, step: 1GB/s}}]\n", "one unit"},
    {"sweep_version: 1\ncluster: x\naxes: [{key: a, range: {from: 4, to: 1, step: 1}}]\n", "below 'from'"},
    {"sweep_version: 1\ncluster: x\ncombine: zip\naxes: [{key: a, values: [1, 2]}, {key: b, values: [1]}]\n",
     "equally long"},
    {"sweep_version: 1\ncluster: x\nfoo: 1\naxes: [{key: a, values: [1]}]\n", "unknown key 'foo'"},
    {"sweep_version: 1\ncluster: x\naxes: [{key: a, values: [1]}, {key: a, values: [2]}]\n", "two axes"},
    {"sweep_version: 1\ncluster: x\naxes: [{key: a, range: {from: 1, to: 1e9, step: 1}}]\n", "more than"},
    {"sweep_version: 1\ncluster: [x\n", "YAML error"},
    {"sweep_version: 1\nname: ../evil\ncluster: x\naxes: [{key: a, values: [1]}]\n", "file names"},
  };
  char *dir = g_dir_make_tmp("wisp-spec-XXXXXX", NULL);
  char *p = g_build_filename(dir, "bad.yaml", NULL);
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_assert_true(g_file_set_contents(p, cases[i].yaml, -1, NULL));
    GError *error = NULL;
    study_spec *s = study_spec_load(p, &error);
    g_assert_null(s);
    g_assert_nonnull(error);
    if (!strstr(error->message, cases[i].needle) || !strstr(error->message, "bad.yaml"))
      g_error("case %zu: message '%s' lacks '%s'", i, error->message, cases[i].needle);
    g_clear_error(&error);
  }
  g_unlink(p);
  g_rmdir(dir);
  g_free(p);
  g_free(dir);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/study-sweep/values-and-order", test_values_and_order);
  g_test_add_func("/study-sweep/determinism", test_determinism);
  g_test_add_func("/study-sweep/shard-merge", test_shard_merge);
  g_test_add_func("/study-sweep/resume-after-kill", test_resume_after_kill);
  g_test_add_func("/study-sweep/resume-checks-inputs", test_resume_checks_inputs);
  g_test_add_func("/study-sweep/zip-and-errors", test_zip_and_errors);
  g_test_add_func("/study-sweep/bad-specs", test_bad_specs);
  return g_test_run();
}
