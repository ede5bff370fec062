/* test_accounting_cli.c: issue 29 item 1 through the `wisp` binary: one
 * accounting of communication (sim_rank_stats: exposed = transfer +
 * straggler wait + dependency wait, beside overlap) used by the per-rank
 * table, the JSON, the SVG, the metrics, the critical path and the
 * utility lines, so the numbers add up across outputs.
 *
 * Closed form 1 (stragglers): 4 ranks of data parallelism, L = 2 layers of
 * Cg = 300 us + Ce = 100 us of compute then a world ring all-reduce of
 * S = 8 MiB, nothing overlapped; one switch of 4 at B = 100 GB/s, 1 us per
 * link, the ideal library.  A = 2 (N - 1) (2 us + (S / N) / B) =
 * 137.82912 us.  With rank 2's kernels 1.2x slower, every other rank waits
 * 0.2 x 400 us = 80 us before each all-reduce with nothing else running:
 * straggler wait 160 us, transfer 2 A = 275.65824 us, finish
 * 2 (400 + A) + 160 = 1235.65824 us; rank 2: compute 960 us, no wait.
 *
 * Closed form 2 (dependencies): 2 ranks, a pipeline: rank 0 computes
 * C0 = 500 us then sends S2 = 100 MB to rank 1, which receives (issued at
 * time 0) then computes C1 = 200 us.  Rank 1 waits C0 for its input: a
 * dependency wait of exactly 500 us, no straggler wait; both ranks account
 * the same transfer (at least S2 / B = 1 ms), and rank 1 finishes at
 * C0 + transfer + C1.
 *
 * DLRM (../shared/data/param/dlrm_kineto.tar.gz, dgx-a100; skipped without
 * it): the sums hold on every rank, the SVG's numbers are the JSON's, the
 * metrics' exposed communication is the table's mean, and the utility's
 * communication line, critical path and why-lines agree.
 */
#include "config.h"
#include "chakra/et_io.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "regress/test_util.h"

#define US SIM_PS_PER_US

static const char *switch_yaml =
  "schema_version: 1\nlibrary: {name: ideal}\nname: sw\n"
  "dims:\n  - {name: net, kind: switch, size: %d, bandwidth: 100GB/s, latency: 1us}\n";

static double num(const cJSON *o, const char *k)
{
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
  g_assert_nonnull(x);
  return x->valuedouble;
}

static const cJSON *obj(const cJSON *o, const char *k)
{
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
  g_assert_nonnull(x);
  return x;
}

static void write_net(const char *path, int n)
{
  char *y = g_strdup_printf(switch_yaml, n);
  g_assert_true(g_file_set_contents(path, y, -1, NULL));
  g_free(y);
}

static void finish_workload(et_workload *w, const char *dir, const char *prefix)
{
  GError *e = NULL;
  g_assert_true(et_workload_resolve_groups(w, &e));
  g_assert_true(et_workload_write(w, dir, prefix, &e));
  g_assert_no_error(e);
  et_workload_free(w);
}

/* Closed form 1's workload: dir/dp.<r>.et. */
static void write_dp(const char *dir)
{
  et_workload *w = et_workload_new(4, "dp");
  for (int r = 0; r < 4; r++) {
    et_builder *b = et_builder_new("synthetic");
    uint64_t id = 0;
    for (int l = 0; l < 2; l++) {
      uint32_t x = et_builder_add_node(b, ++id, ET_NODE_COMP, "sm90_xmma_gemm", 300 * US, 0);
      if (id > 1)
        et_builder_add_dep(b, x, id - 1, TRUE, FALSE);
      x = et_builder_add_node(b, ++id, ET_NODE_COMP, "vectorized_elementwise_kernel", 100 * US, 0);
      et_builder_add_dep(b, x, id - 1, TRUE, FALSE);
      x = et_builder_add_node(b, ++id, ET_NODE_COMM_COLL, "all_reduce", 0, 0);
      et_comm c = {.bytes = 8ull << 20, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = -1, .dst = -1,
                   .tag = -1, .root = -1, .coll = ET_COLL_ALL_REDUCE};
      et_builder_set_comm(b, x, &c, NULL, NULL, 0);
      et_builder_add_dep(b, x, id - 1, TRUE, FALSE);
    }
    GError *e = NULL;
    w->ranks[r] = et_builder_finish(b, 0, &e);
    g_assert_no_error(e);
  }
  finish_workload(w, dir, "dp");
}

/* Closed form 2's workload: dir/pp.<r>.et. */
static void write_pp(const char *dir)
{
  et_workload *w = et_workload_new(2, "pp");
  for (int r = 0; r < 2; r++) {
    et_builder *b = et_builder_new("synthetic");
    gboolean send = r == 0;
    uint32_t comp = 0;
    if (send)
      comp = et_builder_add_node(b, 1, ET_NODE_COMP, "sm90_xmma_gemm", 500 * US, 0);
    uint32_t x = et_builder_add_node(b, 2, send ? ET_NODE_COMM_SEND : ET_NODE_COMM_RECV, send ? "send" : "recv", 0, 0);
    et_comm c = {.bytes = 100000000, .group = ET_GROUP_WORLD, .split = ET_NONE, .src = send ? -1 : 0,
                 .dst = send ? 1 : -1, .tag = 7, .root = -1, .coll = ET_COLL_NONE};
    et_builder_set_comm(b, x, &c, NULL, NULL, 0);
    if (send)
      et_builder_add_dep(b, x, 1, TRUE, FALSE);
    else {
      comp = et_builder_add_node(b, 3, ET_NODE_COMP, "sm90_xmma_gemm", 200 * US, 0);
      et_builder_add_dep(b, comp, 2, TRUE, FALSE);
    }
    GError *e = NULL;
    w->ranks[r] = et_builder_finish(b, 0, &e);
    g_assert_no_error(e);
  }
  finish_workload(w, dir, "pp");
}

/* finish = compute + exposed + idle and exposed = transfer + straggler +
 * dependency on every rank of a simulate JSON (ns with ps precision). */
static void check_sums(const cJSON *ranks)
{
  const cJSON *x;
  cJSON_ArrayForEach(x, ranks)
  {
    double ex = num(x, "exposed_comm_ns");
    g_assert_cmpfloat(fabs(num(x, "finish_ns") - (num(x, "compute_ns") + ex + num(x, "idle_ns"))), <, 0.0015);
    g_assert_cmpfloat(fabs(ex - (num(x, "comm_transfer_ns") + num(x, "straggler_wait_ns") +
                                 num(x, "dependency_wait_ns"))), <, 0.0015);
  }
}

/* The SVG bar of each rank carries the JSON's numbers (ms, 6 decimals). */
static void check_svg(const char *svg_path, const cJSON *ranks)
{
  char *svg = NULL;
  g_assert_true(g_file_get_contents(svg_path, &svg, NULL, NULL));
  const cJSON *x;
  cJSON_ArrayForEach(x, ranks)
  {
    char *t = g_strdup_printf("<title>rank %d (ms): compute only %.6f; overlapped comm %.6f; comm transfer %.6f; "
                              "straggler wait %.6f; dependency wait %.6f; idle %.6f</title>",
                              (int)num(x, "rank"), (num(x, "compute_ns") - num(x, "overlapped_comm_ns")) / 1e6,
                              num(x, "overlapped_comm_ns") / 1e6, num(x, "comm_transfer_ns") / 1e6,
                              num(x, "straggler_wait_ns") / 1e6, num(x, "dependency_wait_ns") / 1e6,
                              num(x, "idle_ns") / 1e6);
    test_expect_has(svg, t);
    g_free(t);
  }
  g_free(svg);
}

static void test_straggler_closed_form(void)
{
  if (!test_have_bin())
    return;
  char *dir = g_dir_make_tmp("wisp-acct-XXXXXX", NULL);
  write_dp(dir);
  char *wl = g_build_filename(dir, "dp", NULL), *net = g_build_filename(dir, "sw.yaml", NULL);
  char *json = g_build_filename(dir, "s.json", NULL), *svg = g_build_filename(dir, "s.svg", NULL);
  write_net(net, 4);
  char *out = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){"simulate", wl, "--network", net, "--algo", "ring", "--slow-rank",
                                                  "2=1.2", "--json", json, "--svg", svg, NULL}, &out), ==, 0);
  cJSON *r = load_json(json);
  const cJSON *ranks = obj(r, "ranks");
  const double A = 137.82912e3; /* ns */
  for (int k = 0; k < 4; k++) {
    const cJSON *x = cJSON_GetArrayItem(ranks, k);
    double wait = k == 2 ? 0 : 160e3;
    g_assert_cmpfloat(fabs(num(x, "comm_transfer_ns") - 2 * A), <, 1e-3);
    g_assert_cmpfloat(fabs(num(x, "straggler_wait_ns") - wait), <, 1e-3);
    g_assert_cmpfloat(num(x, "dependency_wait_ns"), ==, 0);
    g_assert_cmpfloat(num(x, "overlapped_comm_ns"), ==, 0);
    g_assert_cmpfloat(fabs(num(x, "compute_ns") - (k == 2 ? 960e3 : 800e3)), <, 1e-3);
    g_assert_cmpfloat(fabs(num(x, "finish_ns") - (k == 2 ? 800e3 + 2 * A + 160e3 : 1235.65824e3)), <, 1e-3);
  }
  check_sums(ranks);
  check_svg(svg, ranks);
  /* The table (4 decimals for a 1.2 ms step): rank 0's row, column by
   * column, from the closed form. */
  test_expect_has(out, "\n     0       1.2357       0.8000          0.4357       0.2757            0.1600             "
                       "0.0000          0.0000       0.0000");
  /* The critical path: transfer 2 A on the path.  It jumps once, at the
   * last all-reduce, from the rank that finished to rank 2 (80 us waited,
   * a straggler at a collective); before that it stays on rank 2, which
   * issued the first all-reduce last itself. */
  const cJSON *cp = obj(r, "critical_path");
  g_assert_cmpfloat(fabs(num(obj(cp, "by_category"), "communication_ns") - 2 * A), <, 1e-3);
  const cJSON *st = cJSON_GetArrayItem(obj(cp, "stragglers"), 0);
  g_assert_cmpfloat(num(st, "rank"), ==, 2);
  g_assert_cmpfloat(fabs(num(st, "waited_ns") - 80e3), <, 1e-3);
  g_assert_cmpfloat(num(st, "at"), ==, 1);
  g_assert_cmpint(cJSON_GetArraySize(obj(cp, "dependency_waits")), ==, 0);
  /* Metrics: total_communication_time is the mean exposed communication:
   * (3 x 435.65824 + 275.65824) / 4 = 395.65824 us. */
  const cJSON *ms = obj(obj(r, "metrics"), "simulated");
  g_assert_cmpfloat(fabs(num(ms, "total_communication_time_ns") - 395.65824e3), <, 1e-3);
  /* and its split, the same means: transfer 2 A, straggler wait 120 us. */
  g_assert_cmpfloat(fabs(num(ms, "comm_transfer_ns") - 2 * A), <, 1e-3);
  g_assert_cmpfloat(fabs(num(ms, "straggler_wait_ns") - 120e3), <, 1e-3);
  g_assert_cmpfloat(num(ms, "dependency_wait_ns"), ==, 0);
  test_expect_has(out, "  straggler_wait (ms)                      0.120\n");
  cJSON_Delete(r);
  g_free(out);
  /* Utility: the same accounting, means over ranks: straggler wait
   * 3 x 160 / 4 = 120 us; transfer on the critical path 2 A. */
  g_assert_cmpint(test_wisp_run((const char *[]){"utility", wl, "--network", net, "--algo", "ring", "--slow-rank",
                                                  "2=1.2", NULL}, &out), ==, 0);
  test_expect_has(out, "communication (mean over ranks, the simulate table's columns): exposed 0.395658 ms = transfer "
                       "0.275658 ms + straggler wait 0.120000 ms + dependency wait 0.000000 ms; overlapped with "
                       "compute 0.000000 ms\n");
  /* ... and whom it waits for: the slow rank 2 issues last at both
   * all-reduces. */
  test_expect_has(out, "  most exposed: rank 0, 0.435658 ms, of which 0.160000 ms (36.7 %) waiting for peers (for rank "
                       "2, which issued last in 2 of its 2 collectives); a faster network shortens transfer only: "
                       "0.275658 ms on the critical path");
  g_free(out);
  test_rm_rf(dir);
  g_free(dir), g_free(wl), g_free(net), g_free(json), g_free(svg);
}

static void test_dependency_closed_form(void)
{
  if (!test_have_bin())
    return;
  char *dir = g_dir_make_tmp("wisp-acct-XXXXXX", NULL);
  write_pp(dir);
  char *wl = g_build_filename(dir, "pp", NULL), *net = g_build_filename(dir, "sw.yaml", NULL);
  char *json = g_build_filename(dir, "p.json", NULL);
  write_net(net, 2);
  char *out = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){"simulate", wl, "--network", net, "--json", json, NULL}, &out), ==, 0);
  cJSON *r = load_json(json);
  const cJSON *ranks = obj(r, "ranks");
  check_sums(ranks);
  const cJSON *r0 = cJSON_GetArrayItem(ranks, 0), *r1 = cJSON_GetArrayItem(ranks, 1);
  double xfer = num(r1, "comm_transfer_ns");
  g_test_message("transfer %.3f ns", xfer);
  g_assert_cmpfloat(xfer, >=, 1e6);        /* S2 / B = 1 ms at least */
  g_assert_cmpfloat(xfer, <, 1e6 + 10e3);  /* plus a few link latencies */
  g_assert_cmpfloat(fabs(num(r0, "comm_transfer_ns") - xfer), <, 1e-3);
  g_assert_cmpfloat(fabs(num(r1, "dependency_wait_ns") - 500e3), <, 1e-3);
  g_assert_cmpfloat(num(r1, "straggler_wait_ns"), ==, 0);
  g_assert_cmpfloat(num(r0, "dependency_wait_ns"), ==, 0);
  g_assert_cmpfloat(fabs(num(r1, "finish_ns") - (500e3 + xfer + 200e3)), <, 1e-3);
  /* The critical path names rank 0 as the dependency, never a straggler,
   * and its communication is the same transfer. */
  const cJSON *cp = obj(r, "critical_path");
  g_assert_cmpfloat(fabs(num(obj(cp, "by_category"), "communication_ns") - xfer), <, 1e-3);
  g_assert_cmpint(cJSON_GetArraySize(obj(cp, "stragglers")), ==, 0);
  const cJSON *d = cJSON_GetArrayItem(obj(cp, "dependency_waits"), 0);
  g_assert_nonnull(d);
  g_assert_cmpfloat(num(d, "rank"), ==, 0);
  g_assert_cmpfloat(fabs(num(d, "waited_ns") - 500e3), <, 1e-3);
  cJSON_Delete(r);
  g_free(out);
  test_rm_rf(dir);
  g_free(dir), g_free(wl), g_free(net), g_free(json);
}

/* The line of `text` starting with `prefix` (g_free), or NULL. */
static char *line_with(const char *text, const char *prefix)
{
  const char *p = strstr(text, prefix);
  if (p == NULL)
    return NULL;
  const char *e = strchr(p, '\n');
  return e ? g_strndup(p, (gsize)(e - p)) : g_strdup(p);
}

static void test_dlrm(void)
{
  char *dir = NULL, *wl = test_dlrm_kineto("wisp-acct-XXXXXX", &dir);
  if (wl == NULL)
    return;
  char *json = g_build_filename(dir, "d.json", NULL);
  char *svg = g_build_filename(dir, "d.svg", NULL);
  char *out = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){"simulate", wl, "--network", "dgx-a100", "--json", json, "--svg", svg,
                                                  NULL}, &out), ==, 0);
  cJSON *r = load_json(json);
  const cJSON *ranks = obj(r, "ranks");
  check_sums(ranks);
  check_svg(svg, ranks);
  /* Means and the rank with the most exposed communication, summed here. */
  double ex = 0, xf = 0, sw = 0, dw = 0, ov = 0, most = -1, last = 0, last_colls = 0;
  int n = cJSON_GetArraySize(ranks), most_rank = -1, last_rank = -1;
  const cJSON *x;
  cJSON_ArrayForEach(x, ranks)
  {
    if (num(x, "last_arrivals") > last) { /* the rank the others wait for */
      last = num(x, "last_arrivals");
      last_colls = num(x, "collectives");
      last_rank = (int)num(x, "rank");
    }
    ex += num(x, "exposed_comm_ns") / n, xf += num(x, "comm_transfer_ns") / n;
    sw += num(x, "straggler_wait_ns") / n, dw += num(x, "dependency_wait_ns") / n;
    ov += num(x, "overlapped_comm_ns") / n;
    if (num(x, "exposed_comm_ns") > most) {
      most = num(x, "exposed_comm_ns");
      most_rank = (int)num(x, "rank");
    }
  }
  /* The metrics' exposed communication is the table's mean. */
  const cJSON *ms = obj(obj(r, "metrics"), "simulated");
  g_assert_cmpfloat(fabs(num(ms, "total_communication_time_ns") - ex), <, 0.01);
  g_assert_cmpfloat(fabs(num(ms, "comm_transfer_ns") - xf), <, 0.01);
  g_assert_cmpfloat(fabs(num(ms, "straggler_wait_ns") - sw), <, 0.01);
  g_assert_cmpfloat(fabs(num(ms, "dependency_wait_ns") - dw), <, 0.01);
  /* A trace cannot split its kernels' waiting: null, said so. */
  g_assert_true(cJSON_IsNull(obj(obj(obj(r, "metrics"), "measured"), "straggler_wait_ns")));
  test_expect_has(out, "n/a measured: a trace's communication kernels include their waiting");
  /* DLRM's exposed communication is mostly straggler waits (rank 3 issues
   * last), not transfer: the per-rank table's 5 ms on rank 0 and the
   * critical path's 0.4 % are the same story. */
  g_assert_cmpfloat(sw, >, 10 * xf);
  double path_comm = num(obj(obj(r, "critical_path"), "by_category"), "communication_ns");
  g_assert_cmpfloat(path_comm, <=, xf * n);
  /* The metrics' communication_fraction (waits included) says how much of
   * that communication is waiting: (sw + dw) / ex of the table's means,
   * 94.5 % on DLRM, so it reads with the critical path's 0.4 %. */
  char *frac = g_strdup_printf("communication_fraction: communication kernels' time over active time, waiting for "
                               "peers included; of the simulated exposed communication %.1f %% is waiting",
                               100.0 * (sw + dw) / ex);
  test_expect_has(out, frac);
  g_free(frac);
  /* avg_step_time's simulated column is the step time, and the note says
   * why (the ranks' finishes differ: their mean is not it). */
  double step_ms = num(r, "step_time_ns") / 1e6;
  const char *avg = "avg_step_time (ms) ";
  const char *arow = strstr(out, avg);
  g_assert_nonnull(arow);
  double meas_avg = 0, sim_avg = 0;
  g_assert_cmpint(sscanf(arow + strlen(avg), "%lf %lf", &meas_avg, &sim_avg), ==, 2);
  g_assert_cmpfloat(fabs(sim_avg - step_ms), <=, 0.0005);
  test_expect_has(out, "a simulated window ends with the step (the latest rank's finish)");
  cJSON_Delete(r);
  g_free(out);
  g_assert_cmpint(test_wisp_run((const char *[]){"utility", wl, "--network", "dgx-a100", NULL}, &out), ==, 0);
  char *want = g_strdup_printf("communication (mean over ranks, the simulate table's columns): exposed %.6f ms = "
                               "transfer %.6f ms + straggler wait %.6f ms + dependency wait %.6f ms; overlapped with "
                               "compute %.6f ms\n", ex / 1e6, xf / 1e6, sw / 1e6, dw / 1e6, ov / 1e6);
  test_expect_has(out, want);
  g_free(want);
  want = g_strdup_printf("  most exposed: rank %d, %.6f ms, of which ", most_rank, most / 1e6);
  test_expect_has(out, want);
  g_free(want);
  /* Which rank the waiting is for, as the JSON's last_arrivals count it
   * (rank 3, 7 of its 8: doc/kineto.md), so a reader of the utility
   * output alone can name the rank that bounds the step. */
  g_assert_cmpint(last_rank, ==, 3);
  want = g_strdup_printf("waiting for peers (for rank %d, which issued last in %.0f of its %.0f collectives)", last_rank,
                         last, last_colls);
  test_expect_has(out, want);
  g_free(want);
  /* The bound sentence repeats the path's straggler wait in the same unit
   * and figure as the "straggler waits" line (it said 803.199 us beside
   * 0.803199 ms). */
  const char *sl = strstr(out, "  straggler waits: rank 3 made the path wait ");
  g_assert_nonnull(sl);
  double wait_ms = g_ascii_strtod(sl + strlen("  straggler waits: rank 3 made the path wait "), NULL);
  want = g_strdup_printf("rank 3's work makes the ranks on the path wait %.6f ms", wait_ms);
  test_expect_has(out, want);
  g_free(want);
  /* No time in us in the sentences (the table's change column names link
   * latencies such as "ib 1 us -> 500 ns", a setting, not a result). */
  const char *cp = strstr(out, "critical path: "), *tab = strstr(out, "\nresource "),
             *wy = strstr(out, "why, per row"), *sens = strstr(out, "\nsensitivity: ");
  g_assert_true(cp && tab && wy && sens && cp < tab && wy < sens);
  char *sentences = g_strndup(cp, (gsize)(tab - cp)), *whys = g_strndup(wy, (gsize)(sens - wy));
  g_assert_null(strstr(sentences, " us "));
  g_assert_null(strstr(whys, " us "));
  g_free(sentences), g_free(whys);
  want = g_strdup_printf("a faster network shortens transfer only: %.6f ms on the critical path", path_comm / 1e6);
  test_expect_has(out, want);
  g_free(want);
  /* The sentences agree: the step is not bound by communication, the
   * bandwidth row says why (waiting, which no bandwidth shortens), and no
   * row calls a host-bound step latency-bound. */
  test_expect_has(out, "bound: the step is bound by host/CPU work");
  char *bw = line_with(out, "  scale_up_bw ");
  g_assert_nonnull(bw);
  test_expect_has(bw, "of the ranks' exposed communication is waiting for peers (straggler waits: members issuing "
                      "late), which no bandwidth shortens");
  g_free(bw);
  g_assert_null(strstr(out, "latency-bound"));
  g_free(out);
  test_rm_rf(dir);
  g_free(dir), g_free(wl), g_free(json), g_free(svg);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/accounting/straggler-closed-form", test_straggler_closed_form);
  g_test_add_func("/accounting/dependency-closed-form", test_dependency_closed_form);
  g_test_add_func("/accounting/dlrm", test_dlrm);
  return g_test_run();
}
