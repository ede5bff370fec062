/* test_coll_cli.c: `wisp collbench` argument handling and output, by
 * calling wisp_cmd_collbench() directly (the command's file is compiled
 * into this test; wisp_cli_fail comes from a stub below). */
#include "config.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "cli/wisp_cli.h"
#include "collectives/coll.h"

int wisp_cli_fail(GError *error)
{
  g_test_message("wisp: error: %s", error->message);
  g_error_free(error);
  return 1;
}

static char *tmpdir;

/* Runs collbench with stdout discarded; returns its exit status. */
static int run(const char *first, ...)
{
  GPtrArray *a = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(a, g_strdup("collbench"));
  va_list ap;
  va_start(ap, first);
  for (const char *s = first; s != NULL; s = va_arg(ap, const char *))
    g_ptr_array_add(a, g_strdup(s));
  va_end(ap);
  int argc = (int)a->len;
  char **argv = g_new0(char *, a->len + 1);
  for (guint i = 0; i < a->len; i++)
    argv[i] = g_ptr_array_index(a, i);
  fflush(stdout);
  int saved = dup(1);
  int devnull = open("/dev/null", O_WRONLY);
  g_assert_cmpint(saved, >=, 0);
  g_assert_cmpint(devnull, >=, 0);
  dup2(devnull, 1);
  int rc = wisp_cmd_collbench(argc, argv);
  fflush(stdout);
  dup2(saved, 1);
  close(saved);
  close(devnull);
  g_free(argv); /* GOption may have reordered argv; the strings belong to a */
  g_ptr_array_free(a, TRUE);
  return rc;
}

static char *write_net(const char *name, const char *text)
{
  char *path = g_build_filename(tmpdir, name, NULL);
  g_assert_true(g_file_set_contents(path, text, -1, NULL));
  return path;
}

/* The reference case: 8-rank ring, 50 GB/s, 500 ns, ring all-reduce of
 * 1 MiB = 14 * (500,000 + 2,621,440) ps = 43,700.160 ns; algbw = 2^20 B /
 * 43.70016 us = 23.994 GB/s; busbw = algbw * 2 * 7/8 = 41.990 GB/s. */
static void test_collbench_json(void)
{
  char *cfg = write_net("ring8.yaml", "schema_version: 1\nlibrary: {name: ideal}\n"
                                      "dims:\n"
                                      "  - {name: x, kind: ring, size: 8, bandwidth: 50GB/s, latency: 500ns}\n"
                                      "collectives: {all_reduce: ring}\n");
  char *json = g_build_filename(tmpdir, "out.json", NULL);
  g_assert_cmpint(run("--network", cfg, "--op", "all_reduce,barrier", "--sizes", "1M", "--json", json, NULL), ==, 0);
  char *text = NULL;
  g_assert_true(g_file_get_contents(json, &text, NULL, NULL));
  g_assert_nonnull(strstr(text, "\"time_ns\": 43700.160"));
  g_assert_nonnull(strstr(text, "\"algbw_GBps\": 23.994"));
  g_assert_nonnull(strstr(text, "\"busbw_GBps\": 41.990"));
  g_assert_nonnull(strstr(text, "\"algorithm\": \"ring\""));
  g_assert_nonnull(strstr(text, "\"op\": \"barrier\""));
  g_free(text);
  /* All-gather size is S: --sizes 1M runs 128 KiB per rank, S = 1 MiB. */
  g_assert_cmpint(run("--network", cfg, "--op", "allgather", "--sizes", "1M", "--group", "0-7:2,1",
                      "--json", json, NULL), ==, 0);
  g_assert_true(g_file_get_contents(json, &text, NULL, NULL));
  g_assert_nonnull(strstr(text, "\"n_ranks\": 5"));
  /* 1 MiB / 5 = 209,715 B per rank, S = 5 * 209,715 = 1,048,575. */
  g_assert_nonnull(strstr(text, "\"size\": 1048575"));
  g_free(text);
  g_free(json);
  g_free(cfg);
}

/* --compare-csv runs the sizes of one table of a real nccl-tests file and
 * --svg draws both curves: two series of as many points as table 1 has
 * rows (the sendrecv table 2 runs too: regress/test_ncclt_cli.c); usage
 * and input errors fail without a chart. */
static void test_collbench_compare(void)
{
  char *cfg = write_net("ring8c.yaml", "schema_version: 1\nlibrary: {name: ideal}\n"
                                       "dims:\n"
                                       "  - {name: x, kind: ring, size: 8, bandwidth: 50GB/s, latency: 500ns}\n"
                                       "collectives: {all_reduce: ring}\n");
  char *csv = write_net("real.csv", "# a comment\ntest,table,size_bytes,count,type,redop,root,oop_time_us,"
                                    "oop_algbw_GBps,oop_busbw_GBps,ip_time_us,ip_algbw_GBps,ip_busbw_GBps\n"
                                    "all_reduce_perf,1,1048576,262144,float,sum,-1,43.70,23.99,41.99,43.70,23.99,41.99\n"
                                    "all_reduce_perf,1,2097152,524288,float,sum,-1[1,0]<stdout>:,80.00,26.21,45.87,"
                                    "80.00,26.21,45.87\n"
                                    "sendrecv_perf,2,1048576,262144,float,sum,-1,10.0,100.0,100.0,10.0,100.0,100.0\n");
  char *svg = g_build_filename(tmpdir, "cmp.svg", NULL);
  g_assert_cmpint(run("--network", cfg, "--compare-csv", csv, "--svg", svg, NULL), ==, 0);
  char *text = NULL;
  g_assert_true(g_file_get_contents(svg, &text, NULL, NULL));
  g_assert_nonnull(strstr(text, "nccl-tests (real)"));
  g_assert_nonnull(strstr(text, ">wisp<"));
  const char *p = text;
  int lines = 0, dots = 0;
  while ((p = strstr(p, "<polyline")) != NULL) {
    lines++;
    p++;
  }
  /* Markers: the first series draws circles, the second hollow squares
   * (each line its own marker), each also once in the legend. */
  for (p = text; (p = strstr(p, "<circle")) != NULL; p++)
    dots++;
  for (p = text; (p = strstr(p, "<rect")) != NULL; p++)
    dots += strstr(p, "fill=\"none\"") != NULL && strstr(p, "fill=\"none\"") < strchr(p, '>');
  g_assert_cmpint(lines, ==, 2);
  g_assert_cmpint(dots, ==, 6); /* 2 sizes x 2 series + 2 legend markers */
  g_free(text);
  g_assert_cmpint(g_unlink(svg), ==, 0);
  g_assert_cmpint(run("--network", cfg, "--svg", svg, NULL), ==, 2);                      /* --svg alone */
  g_assert_cmpint(run("--network", cfg, "--compare-csv", csv, "--sizes", "1M", NULL), ==, 2); /* sizes from the file */
  g_assert_cmpint(run("--network", cfg, "--compare-csv", csv, "--compare-table", "3", "--svg", svg, NULL), ==, 2);
  char *missing = g_build_filename(tmpdir, "none.csv", NULL);
  g_assert_cmpint(run("--network", cfg, "--compare-csv", missing, NULL), ==, 1);
  g_assert_false(g_file_test(svg, G_FILE_TEST_EXISTS));
  g_free(missing);
  g_free(svg);
  g_free(csv);
  g_free(cfg);
}

/* Bad arguments: usage errors exit 2, bad values 1; nothing is written. */
static void test_collbench_errors(void)
{
  char *cfg = write_net("sw8.yaml", "schema_version: 1\nlibrary: {name: ideal}\n"
                                    "dims:\n"
                                    "  - {name: s, kind: switch, size: 8, bandwidth: 50GB/s, latency: 500ns}\n");
  char *json = g_build_filename(tmpdir, "bad.json", NULL);
  g_assert_cmpint(run("--op", "all_reduce", NULL), ==, 2);                           /* no --network */
  g_assert_cmpint(run("--network", cfg, "extra", NULL), ==, 2);                      /* stray argument */
  g_assert_cmpint(run("--network", cfg, "--ranks", "4", "--group", "0-3", NULL), ==, 2);
  g_assert_cmpint(run("--network", cfg, "--ranks", "9", NULL), ==, 2);               /* more than the network has */
  g_assert_cmpint(run("--network", cfg, "--op", "allreduc", "--json", json, NULL), ==, 1);
  g_assert_cmpint(run("--network", cfg, "--sizes", "1Q", "--json", json, NULL), ==, 1);
  g_assert_cmpint(run("--network", cfg, "--sizes", "", NULL), ==, 1);
  g_assert_cmpint(run("--network", cfg, "--group", "3-1", NULL), ==, 1);
  g_assert_cmpint(run("--network", cfg, "--group", "0-3:0", NULL), ==, 1);
  g_assert_cmpint(run("--network", cfg, "--group", "0,x", NULL), ==, 1);
  g_assert_cmpint(run("--network", cfg, "--group", "0-8", "--json", json, NULL), ==, 1); /* rank 8 */
  g_assert_cmpint(run("--network", cfg, "--group", "1,1", NULL), ==, 1);                 /* duplicate */
  g_assert_cmpint(run("--network", cfg, "--op", "broadcast", "--root", "5", "--group", "0-3", NULL), ==, 1);
  g_assert_cmpint(run("--network", cfg, "--algo", "warp", NULL), ==, 2);
  g_assert_cmpint(run("--network", cfg, "--chunks", "0", "--chunks", "2000", NULL), ==, 2);
  g_assert_cmpint(run("--network", cfg, "--tier", "quantum", NULL), ==, 2);
  g_assert_false(g_file_test(json, G_FILE_TEST_EXISTS));
  char *missing = g_build_filename(tmpdir, "nope.yaml", NULL);
  g_assert_cmpint(run("--network", missing, NULL), ==, 1);
  char *unwritable = g_build_filename(tmpdir, "no-such-dir", "x.json", NULL);
  g_assert_cmpint(run("--network", cfg, "--sizes", "1K", "--json", unwritable, NULL), ==, 1);
  g_free(unwritable);
  g_free(missing);
  g_free(json);
  g_free(cfg);
}

/* Library selection.  hccl from the config: ring all-gather of 1 MiB per
 * rank on 4 ranks (switch, 100 GB/s, 500 ns links: alpha 1 us) = 3 x
 * (sigma_sig 1,000,000 + 1,000,000 + 10,485,760) ps, plus copy-in 1 MiB
 * and copy-out 4 MiB at b_copy 500 GB/s (2,097,152 + 8,388,608 ps):
 * 47,943.040 ns; staging
 * bytes 4 ranks x 5 MiB.  --library overrides the config; --compare adds
 * the model report; bad library arguments fail before any output. */
static void test_collbench_library(void)
{
  char *cfg = write_net("lib4.yaml", "schema_version: 1\n"
                                     "dims:\n"
                                     "  - {name: x, kind: switch, size: 4, bandwidth: 100GB/s, latency: 500ns}\n"
                                     "library: {name: hccl}\n");
  char *json = g_build_filename(tmpdir, "lib.json", NULL);
  g_assert_cmpint(run("--network", cfg, "--op", "all_gather", "--sizes", "4M", "--json", json, NULL), ==, 0);
  char *text = NULL;
  g_assert_true(g_file_get_contents(json, &text, NULL, NULL));
  g_assert_nonnull(strstr(text, "\"library\": \"hccl\""));
  g_assert_nonnull(strstr(text, "\"time_ns\": 47943.040"));
  g_assert_nonnull(strstr(text, "\"staging_bytes\": 20971520"));
  g_free(text);
  g_assert_cmpint(run("--network", cfg, "--op", "all_gather", "--sizes", "4M", "--library", "stratacl", "--compare",
                      "--library-set", "sdma=true", "--json", json, NULL), ==, 0);
  g_assert_true(g_file_get_contents(json, &text, NULL, NULL));
  g_assert_nonnull(strstr(text, "\"library\": \"stratacl\""));
  g_assert_nonnull(strstr(text, "\"library_report\""));
  g_assert_nonnull(strstr(text, "\"partition_uniform\""));
  g_assert_nonnull(strstr(text, "\"barrier_hits\": 0"));
  g_free(text);
  g_assert_cmpint(run("--network", cfg, "--library-params", NULL), ==, 0);
  g_remove(json);
  g_assert_cmpint(run("--network", cfg, "--library", "mpi", "--json", json, NULL), ==, 2);
  g_assert_cmpint(run("--network", cfg, "--library-set", "t_exp", "--json", json, NULL), ==, 2);
  g_assert_cmpint(run("--network", cfg, "--library-set", "t_exp=soon", "--json", json, NULL), ==, 1);
  g_assert_cmpint(run("--network", cfg, "--library-set", "warp=9", "--json", json, NULL), ==, 1);
  g_assert_false(g_file_test(json, G_FILE_TEST_EXISTS));
  g_free(json);
  g_free(cfg);
}

/* MoE ops (doc/libraries.md §8): one all-to-allv row each, the routing in
 * the JSON, deterministic in --seed; the cann-ep libraries run them as a
 * full mesh; bad MoE options are usage errors (exit 2) before any output. */
static void test_collbench_moe(void)
{
  char *cfg = write_net("moe4.yaml", "schema_version: 1\nlibrary: {name: ideal}\n"
                                     "dims:\n"
                                     "  - {name: x, kind: switch, size: 4, bandwidth: 100GB/s, latency: 500ns}\n");
  char *json = g_build_filename(tmpdir, "moe.json", NULL);
  char *text[3] = { NULL, NULL, NULL };
  for (int k = 0; k < 3; k++) {
    g_assert_cmpint(run("--network", cfg, "--op", "moe_dispatch,moe_combine", "--library", "cann-ep-zerocopy", "--warm",
                        "--moe-tokens", "64", "--moe-experts", "16", "--moe-topk", "4", "--moe-zipf", "0.3", "--seed",
                        k == 2 ? "8" : "7", "--json", json, NULL), ==, 0);
    g_assert_true(g_file_get_contents(json, &text[k], NULL, NULL));
  }
  g_assert_nonnull(strstr(text[0], "\"op\": \"moe_dispatch\""));
  g_assert_nonnull(strstr(text[0], "\"op\": \"moe_combine\""));
  g_assert_nonnull(strstr(text[0], "\"plan\": \"direct@flat\""));
  g_assert_nonnull(strstr(text[0], "\"tokens\": 64"));
  g_assert_nonnull(strstr(text[0], "\"seed\": 7"));
  g_assert_nonnull(strstr(text[0], "\"library\": \"cann-ep-zerocopy\""));
  g_assert_nonnull(strstr(text[0], "\"core_makespan_ns\""));
  g_assert_cmpstr(text[0], ==, text[1]); /* same seed, same bytes */
  g_assert_cmpstr(text[0], !=, text[2]);
  for (int k = 0; k < 3; k++)
    g_free(text[k]);
  g_remove(json);
  g_assert_cmpint(run("--network", cfg, "--op", "moe_dispatch", "--moe-experts", "6", "--json", json, NULL), ==, 2);
  g_assert_cmpint(run("--network", cfg, "--op", "moe_dispatch", "--moe-experts", "2", "--json", json, NULL), ==, 2);
  g_assert_cmpint(run("--network", cfg, "--op", "moe_dispatch", "--moe-topk", "0", NULL), ==, 2);
  g_assert_cmpint(run("--network", cfg, "--op", "moe_dispatch", "--moe-topk", "20", "--moe-experts", "16", NULL), ==, 2);
  g_assert_cmpint(run("--network", cfg, "--op", "moe_dispatch", "--moe-zipf", "steep", NULL), ==, 2);
  g_assert_cmpint(run("--network", cfg, "--op", "moe_dispatch", "--moe-zipf", "-1", NULL), ==, 2);
  g_assert_cmpint(run("--network", cfg, "--op", "moe_dispatch", "--seed", "-3", NULL), ==, 2);
  g_assert_cmpint(run("--network", cfg, "--op", "moe_dispatch", "--moe-tokens", "0", NULL), ==, 2);
  g_assert_false(g_file_test(json, G_FILE_TEST_EXISTS));
  g_free(json);
  g_free(cfg);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  tmpdir = g_dir_make_tmp("wisp-collbench-XXXXXX", NULL);
  g_assert_nonnull(tmpdir);
  g_test_add_func("/coll/cli/json", test_collbench_json);
  g_test_add_func("/coll/cli/errors", test_collbench_errors);
  g_test_add_func("/coll/cli/library", test_collbench_library);
  g_test_add_func("/coll/cli/moe", test_collbench_moe);
  g_test_add_func("/coll/cli/compare", test_collbench_compare);
  int rc = g_test_run();
  const char *names[] = { "ring8.yaml", "sw8.yaml", "out.json", "lib4.yaml" };
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    char *p = g_build_filename(tmpdir, names[i], NULL);
    g_remove(p);
    g_free(p);
  }
  g_rmdir(tmpdir);
  g_free(tmpdir);
  return rc;
}
