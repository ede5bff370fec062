/* test_ncclt_targets.c: issue 27's "done when" measured over the public
 * nccl-tests tables committed under data/nccl-tests/ (each folder keeps its
 * source's LICENSE; each CSV names its source and commit in its header).
 * Every table runs on a config written from spec sheets only (nothing
 * fitted to any table; the config of each system is below with its
 * sources), and per table the medians of issue 27's three measures are
 * taken:
 *   A  busbw |error| at sizes >= 64 MiB <= 15 % and time |error| at sizes
 *      <= 64 KiB <= 30 % (a measure without sizes in the table passes);
 *   B  busbw |error| at sizes 1-32 MiB <= 25 % (tables with such sizes).
 * The targets: A on >= 80 % of the tables, B on >= 70 % of the tables that
 * have 1-32 MiB sizes.  Both are met (A since n27e, B since g27h: 38 of
 * 54) and checked: the test fails when A is lost or either count falls
 * below its floor (B under 70 % with the floor kept would be reported as
 * an expected failure, `not ok # TODO`); the targets are never loosened here.  Every table's figures are
 * printed (g_test_message) so the run is its own report.
 *
 * File names carry the shape of the run: SYSTEM-...-<N>node-<G>gpu.csv is
 * N nodes with G GPUs used per node; log rank r is GPU r % G of node
 * r / G; a log's nGpus (-g) is the GPUs one host thread launches for.
 * Cost: one simulated collective per row (about 500 rows).  With
 * WISP_NCCLT_ROWS set in the environment every row's real and simulated
 * time and busbw are printed too.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/coll.h"
#include "collectives/coll_nccltests.h"

#define MIB (1024.0 * 1024.0)

/* A system: the file-name prefix and the config's YAML, with "%d" for the
 * node count of the network tier. */
typedef struct {
  const char *prefix;
  const char *yaml;
} system_cfg;

/* H100 SXM node (NVIDIA DGX H100 datasheet): 8 GPUs on NVLink 4 through
 * NVSwitch, 900 GB/s bidirectional = 450 GB/s per direction per GPU; 8 x
 * ConnectX-7 NDR, 400 Gb/s per GPU (the xxrjun headers: not stated by the
 * repository, see there).  Latencies as the dgx-h100 preset
 * [ASSUMPTION there]. */
static const char h100_yaml[] =
  "schema_version: 1\nname: h100-spec\nmodel: analytical\n"
  "dims:\n  - {name: nvlink, kind: switch, size: 8, bandwidth: 450GB/s, latency: 500ns}\n"
  "  - {name: ib, kind: switch, size: %d, bandwidth: 400Gbps, latency: 1us}\n"
  "collectives: {in_switch_reduction: true}\nlibrary: {name: nccl, sm: 90}\n";

/* AWS p4d.24xlarge (AWS instance page): 8 x A100-SXM4-40GB on NVLink 3
 * through NVSwitch, 600 GB/s bidirectional = 300 GB/s per direction per
 * GPU, no NVLS (sm 80); 4 x 100 Gb/s EFA per node = 50 Gb/s per GPU;
 * net_latency 75 us: what aws-ofi-nccl reports to NCCL's tuner on
 * p4d.24xlarge (aws/aws-ofi-nccl @2daf7d3 src/platform-aws.cpp, .latency =
 * 75.0), as presets and test_nccl_tests.c do for p5.  NCCL 2.9.9: the
 * log's version line (nccl_version 20909). */
static const char p4d_yaml[] =
  "schema_version: 1\nname: aws-p4d-spec\nmodel: analytical\n"
  "dims:\n  - {name: nvlink, kind: switch, size: 8, bandwidth: 300GB/s, latency: 500ns}\n"
  "  - {name: efa, kind: switch, size: %d, bandwidth: 50Gbps, latency: 1us}\n"
  "collectives: {in_switch_reduction: false}\nlibrary: {name: nccl, sm: 80, net_latency: 75us, nccl_version: 20909}\n";

/* One 8 x A100-SXM4-40GB node (NVIDIA A100 datasheet): NVLink 3 through
 * NVSwitch, 600 GB/s bidirectional = 300 GB/s per direction per GPU, no
 * NVLS (sm 80).  The network tier is unused by the one-node SuperBench
 * tables; 200 Gb/s per GPU as NVIDIA's DGX A100 (8 x ConnectX-6 HDR).
 * NCCL version: the logs do not print it, but they print NCCL's "Launch
 * mode Parallel" line, which NCCL prints up to 2.12 (NVIDIA/nccl
 * src/enqueue.cc ncclLaunchKernel; gone at tag v2.13.4-1): 2.12, the
 * latest version the line allows (nccl_version 21200). */
static const char a100_yaml[] =
  "schema_version: 1\nname: a100-spec\nmodel: analytical\n"
  "dims:\n  - {name: nvlink, kind: switch, size: 8, bandwidth: 300GB/s, latency: 500ns}\n"
  "  - {name: ib, kind: switch, size: %d, bandwidth: 200Gbps, latency: 1us}\n"
  "collectives: {in_switch_reduction: false}\nlibrary: {name: nccl, sm: 80, nccl_version: 21200}\n";

/* Google Cloud A4 (a4-highgpu-8g, Google's machine-type page): 8 x B200 on
 * NVLink 5 through NVSwitch, 1,800 GB/s bidirectional = 900 GB/s per
 * direction per GPU, NVLS (sm 100); 8 x 400 Gb/s RDMA NICs, one per GPU.
 * Latencies as the dgx-h100 preset [ASSUMPTION there]. */
static const char b200_a4_yaml[] =
  "schema_version: 1\nname: b200-a4-spec\nmodel: analytical\n"
  "dims:\n  - {name: nvlink, kind: switch, size: 8, bandwidth: 900GB/s, latency: 500ns}\n"
  "  - {name: roce, kind: switch, size: %d, bandwidth: 400Gbps, latency: 1us}\n"
  "collectives: {in_switch_reduction: true}\nlibrary: {name: nccl, sm: 100}\n";

static const system_cfg systems[] = {
  { "xxrjun-h100-", h100_yaml },
  { "aws-p4d-a100-efa-", p4d_yaml },
  { "superbench-a100-", a100_yaml },
  { "dranet-b200-a4-", b200_a4_yaml },
  /* Google Cloud A3 Ultra (H200): NVLink 4 at 450 GB/s per direction and
   * one 400 Gb/s RDMA NIC per GPU, as the H100 spec above. */
  { "dranet-h200-a3u-", h100_yaml },
};

typedef struct {
  char *file;
  int table;
  char test[32];
  int nodes, gpn;
  double bus, time, mid; /* medians, -1 when the table has no such sizes */
  guint n_bus, n_time, n_mid;
} table_result;

/* The median of v's values (reordered), -1 for none. */
static double median(GArray *v)
{
  return v->len ? wisp_median((double *)(void *)v->data, v->len) : -1;
}

/* Runs one nccl-tests row (sendrecv as rank i -> i+1, an all-to-allv
 * holding that shift, busbw = algbw as nccl-tests' sendrecv.cu) and
 * returns its time (us) and busbw (GB/s). */
static void run_row(const topo *t, const coll_policy *pol, const int *rk, int n, const coll_ncclt_row *rr,
                    double *us, double *busbw)
{
  et_coll_type type = ET_COLL_ALL_TO_ALLV;
  gboolean sr = coll_ncclt_is_sendrecv(rr->test);
  g_assert_true(sr || coll_ncclt_op(rr->test, &type));
  uint64_t *splits = NULL;
  uint64_t comm = 0;
  if (sr) {
    splits = g_new0(uint64_t, (size_t)n * (size_t)n);
    for (int i = 0; i < n; i++)
      splits[(size_t)i * (size_t)n + (size_t)((i + 1) % n)] = rr->size;
  } else {
    comm = coll_ncclt_comm_size(type, rr->size, n);
  }
  coll_desc d = { .type = type, .bytes = comm, .ranks = rk, .n_ranks = n,
                  .root = et_coll_rooted(type) ? rk[0] : -1, .splits = splits };
  sim_time_ps ps = 0;
  coll_info info;
  GError *error = NULL;
  g_assert_true(coll_measure(t, net_default_tier(t), pol, &d, &ps, &info, &error));
  g_assert_no_error(error);
  g_assert_cmpuint(ps, >, 0);
  g_free(splits);
  *us = (double)ps / 1e6;
  double algbw = (double)info.algbw_bytes / ((double)ps / 1e12) / 1e9;
  *busbw = sr ? algbw : algbw * info.busbw_factor;
}

/* Measures every table of one file into `out` (table_result). */
static void measure_file(const char *dir, const char *file, const system_cfg *sys, int nodes, int gpn,
                         GArray *out)
{
  char *path = g_build_filename(dir, file, NULL);
  GError *error = NULL;
  coll_ncclt_log *log = coll_ncclt_load(path, &error);
  g_assert_no_error(error);
  char *yaml = g_strdup_printf(sys->yaml, MAX(nodes, 2));
  topo *t = topo_load_string(yaml, file, &error);
  g_assert_no_error(error);
  coll_policy *pol = coll_policy_new_from_topo(t, &error);
  g_assert_no_error(error);
  int n = nodes * gpn;
  gboolean rows = g_getenv("WISP_NCCLT_ROWS") != NULL; /* every row, for a per-size reading */
  int *rk = g_new(int, n);
  for (int r = 0; r < n; r++)
    rk[r] = (r / gpn) * 8 + r % gpn;
  for (guint k = 0; k < log->tables->len; k++) {
    const coll_ncclt_table *tb = &g_array_index(log->tables, coll_ncclt_table, k);
    table_result res = { .file = g_strdup(file), .table = tb->table, .nodes = nodes, .gpn = gpn };
    /* One host thread driving several GPUs (nccl-tests -g, from the log)
     * launches their kernels one after the other, as collbench
     * --compare-csv runs it (SuperBench's A100 tables: -g 8). */
    coll_library_params lib = *coll_policy_library(pol);
    lib.gpus_per_thread = MAX(tb->gpus_per_thread, 1);
    coll_policy_set_library(pol, &lib);
    g_strlcpy(res.test, tb->test, sizeof res.test);
    GArray *eb = g_array_new(FALSE, FALSE, sizeof(double)), *et = g_array_new(FALSE, FALSE, sizeof(double));
    GArray *em = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint i = 0; i < log->rows->len; i++) {
      const coll_ncclt_row *rr = &g_array_index(log->rows, coll_ncclt_row, i);
      if (rr->table != tb->table || rr->time_us <= 0)
        continue; /* busbw 0.00 (small sizes) still has a time */
      double us, bw;
      run_row(t, pol, rk, n, rr, &us, &bw);
      double eb_v = rr->busbw_GBps > 0 ? fabs(bw - rr->busbw_GBps) / rr->busbw_GBps : 0.0, et_v = fabs(us - rr->time_us) / rr->time_us;
      if (rows)
        g_test_message("row %s %d %s %" G_GUINT64_FORMAT " real %.2f us %.2f GB/s wisp %.2f us %.2f GB/s", file,
                       tb->table, tb->test, rr->size, rr->time_us, rr->busbw_GBps, us, bw);
      if ((double)rr->size >= 64 * MIB && rr->busbw_GBps > 0)
        g_array_append_val(eb, eb_v);
      if (rr->size <= 65536)
        g_array_append_val(et, et_v);
      if ((double)rr->size >= MIB && (double)rr->size <= 32 * MIB && rr->busbw_GBps > 0)
        g_array_append_val(em, eb_v);
    }
    res.n_bus = eb->len;
    res.n_time = et->len;
    res.n_mid = em->len;
    res.bus = median(eb);
    res.time = median(et);
    res.mid = median(em);
    g_array_free(eb, TRUE);
    g_array_free(et, TRUE);
    g_array_free(em, TRUE);
    g_array_append_val(out, res);
  }
  g_free(rk);
  coll_policy_free(pol);
  topo_free(t);
  g_free(yaml);
  coll_ncclt_log_free(log);
  g_free(path);
}

/* g_ptr_array_sort passes pointers to the elements. */
static gint cmp_name(gconstpointer a, gconstpointer b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "12.3 %" or "n/a" into buf. */
static const char *pct(double v, char *buf, size_t len)
{
  if (v < 0)
    g_strlcpy(buf, "n/a", len);
  else
    g_snprintf(buf, len, "%.1f %%", 100 * v);
  return buf;
}

/* Walks every CSV of every folder of data/nccl-tests/, measures each table, prints them
 * and checks the two fractions against issue 27's targets. */
static void test_targets(void)
{
  const char *src = g_getenv("G_TEST_SRCDIR");
  if (src == NULL) {
    g_test_skip("G_TEST_SRCDIR not set (run through make check)");
    return;
  }
  char *root = g_build_filename(src, "data", "nccl-tests", NULL);
  GDir *top = g_dir_open(root, 0, NULL);
  g_assert_nonnull(top); /* committed with the sources */
  GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
  const char *sub;
  while ((sub = g_dir_read_name(top)) != NULL) {
    char *dir = g_build_filename(root, sub, NULL);
    GDir *d = g_dir_open(dir, 0, NULL);
    const char *nm;
    while (d && (nm = g_dir_read_name(d)) != NULL)
      if (g_str_has_suffix(nm, ".csv"))
        g_ptr_array_add(files, g_build_filename(sub, nm, NULL));
    if (d)
      g_dir_close(d);
    g_free(dir);
  }
  g_dir_close(top);
  g_ptr_array_sort(files, cmp_name); /* deterministic order */
  GArray *res = g_array_new(FALSE, FALSE, sizeof(table_result));
  for (guint i = 0; i < files->len; i++) {
    const char *rel = files->pdata[i];
    char *base = g_path_get_basename(rel), *dir = g_path_get_dirname(rel);
    char *full_dir = g_build_filename(root, dir, NULL);
    const system_cfg *sys = NULL;
    for (size_t k = 0; k < G_N_ELEMENTS(systems); k++)
      if (g_str_has_prefix(base, systems[k].prefix))
        sys = &systems[k];
    const char *shape = strstr(base, "node-");
    const char *p = shape;
    while (p && p > base && g_ascii_isdigit(p[-1]))
      p--;
    int nodes = p ? atoi(p) : 0, gpn = shape ? atoi(shape + 5) : 0;
    if (sys == NULL || nodes < 1 || gpn < 1 || gpn > 8)
      g_error("%s: no system config for its prefix or no <N>node-<G>gpu in its name; add one to test_ncclt_targets.c",
              rel);
    measure_file(full_dir, base, sys, nodes, gpn, res);
    g_free(full_dir);
    g_free(dir);
    g_free(base);
  }
  guint a_ok = 0, b_ok = 0, b_n = 0;
  GString *miss = g_string_new(NULL);
  g_test_message("%-36s %5s %-20s %5s %14s %14s %14s  %s", "file", "table", "test", "ranks", "busbw>=64MiB",
                 "time<=64KiB", "busbw 1-32MiB", "A B");
  for (guint i = 0; i < res->len; i++) {
    table_result *r = &g_array_index(res, table_result, i);
    gboolean a = (r->bus < 0 || r->bus <= 0.15) && (r->time < 0 || r->time <= 0.30);
    gboolean b = r->mid >= 0 && r->mid <= 0.25;
    a_ok += a;
    if (r->mid >= 0) {
      b_n++;
      b_ok += b;
    }
    char s1[16], s2[16], s3[16];
    g_test_message("%-36s %5d %-20s %5d %14s %14s %14s  %s %s", r->file, r->table, r->test, r->nodes * r->gpn,
                   pct(r->bus, s1, sizeof s1), pct(r->time, s2, sizeof s2), pct(r->mid, s3, sizeof s3),
                   a ? "ok" : "--", r->mid < 0 ? "n/a" : b ? "ok" : "--");
    if (!a)
      g_string_append_printf(miss, " %s/%d(%s %s)", r->file, r->table, r->test, pct(r->bus, s1, sizeof s1));
  }
  g_assert_cmpuint(res->len, >, 0);
  double fa = (double)a_ok / res->len, fb = b_n ? (double)b_ok / b_n : 1.0;
  char *fig = g_strdup_printf("target A (busbw <= 15 %% at >= 64 MiB and time <= 30 %% at <= 64 KiB) on %u of %u "
                              "tables = %.0f %% (target >= 80 %%); target B (busbw <= 25 %% at 1-32 MiB) on %u of %u "
                              "tables with such sizes = %.0f %% (target >= 70 %%)",
                              a_ok, res->len, 100 * fa, b_ok, b_n, 100 * fb);
  g_test_message("%s", fig);
  /* Target A is met (51 of 62 tables since n27e's send/recv proxy bound):
   * a real check from here on, so a change that loses it fails. */
  g_test_message("tables missing A:%s", miss->str);
  /* The counts reached so far (wave 7, 2026-12-07: A 51, B 35 after h27g's
   * ring-graph bus; wave 8: A 53 with w27h's ring thread-block bound, the
   * 80-rank all-gather and reduce-scatter; B 38 with g27h's host work per
   * launched channel and per-channel broadcast chunks) are a floor: a change that loses a table fails here
   * even while the percentages still read met, instead of hiding among
   * the expected failures.  Raise them when a change gains a table. */
  if (fa < 0.80) {
    g_test_fail_printf("target A no longer met: %s", fig);
  } else if (a_ok < 53 || b_ok < 38) {
    g_test_fail_printf("fewer tables than reached before (A 53, B 38; see tables missing A above): %s", fig);
  } else if (fb < 0.70) {
    char *msg = g_strdup_printf("NOT MET: target B; %s", fig);
    g_test_incomplete(msg);
    g_free(msg);
  }
  g_free(fig);
  g_string_free(miss, TRUE);
  for (guint i = 0; i < res->len; i++)
    g_free(g_array_index(res, table_result, i).file);
  g_array_free(res, TRUE);
  g_ptr_array_free(files, TRUE);
  g_free(root);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/ncclt-targets/committed-tables", test_targets);
  return g_test_run();
}
