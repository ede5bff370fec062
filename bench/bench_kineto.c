/* bench_kineto.c: Kineto parse throughput and peak memory.
 *
 * Generates a synthetic Kineto trace shaped like a real training step
 * (per iteration: CPU ops with Input Dims, a cudaLaunchKernel with its ac2g
 * flow pair, the kernel with grid/block args, and every 50th iteration an
 * NCCL all-reduce with collective metadata) of WISP_BENCH_KINETO_MB
 * megabytes (default 400) in a temporary file, then reports:
 *   - parse only (kt_trace_read): MB/s of uncompressed JSON on one core,
 *     with the in-place event path and, for comparison, through the pull
 *     tokenizer alone (KT_PARSE_TOKENS_ONLY),
 *   - the full load (fe_kineto_load: parse, extract, graph, et_graph),
 *   - peak RSS growth against the size of the kept event table.
 * Targets from the issue: >= 150 MB/s per core, peak memory < 2x the events kept.
 */
#include "config.h"

#include "frontends/kineto_trace.h"

#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static long max_rss_kb(void)
{
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

/* User + system CPU seconds of this process: throughput per core that does
 * not depend on other load on the machine. */
static double cpu_seconds(void)
{
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec / 1e6 + (double)u.ru_stime.tv_sec +
         (double)u.ru_stime.tv_usec / 1e6;
}

static uint64_t generate(const char *path, uint64_t target)
{
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    exit(1);
  }
  setvbuf(f, NULL, _IOFBF, 1 << 20);
  fprintf(f, "{\n  \"schemaVersion\": 1,\n  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, \"world_size\": 1, "
             "\"pg_config\": [{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"pg_size\": 1, \"ranks\": [0]}]},\n"
             "  \"traceEvents\": [\n");
  uint64_t ts = 1694128201000000ull, corr = 1, i = 0;
  long pos = ftell(f);
  fprintf(f, "  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 100, \"tid\": 100, "
             "\"ts\": %" G_GUINT64_FORMAT ", \"dur\": 1, \"args\": {\"External id\": 1}}", ts);
  for (; (uint64_t)pos < target; i++) {
    uint64_t t = ts + i * 20;
    fprintf(f, ",\n  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::addmm\", \"pid\": 100, \"tid\": 100,\n"
               "    \"ts\": %" G_GUINT64_FORMAT ".%03u, \"dur\": 12.345,\n    \"args\": {\n      \"External id\": %"
               G_GUINT64_FORMAT ",\"Ev Idx\": %" G_GUINT64_FORMAT ", \"Input Dims\": [[512, 1024], [1024, 1024], [512]], "
               "\"Input type\": [\"float\", \"float\", \"float\"], \"Sequence number\": %" G_GUINT64_FORMAT
               ", \"Fwd thread id\": 0\n    }\n  }", t, (unsigned)(i % 1000), i, i, i);
    fprintf(f, ",\n  {\n    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 100, "
               "\"tid\": 100,\n    \"ts\": %" G_GUINT64_FORMAT ".500, \"dur\": 4.250,\n    \"args\": {\n      "
               "\"External id\": %" G_GUINT64_FORMAT ", \"cbid\": 211, \"correlation\": %" G_GUINT64_FORMAT "\n    }\n  }",
            t + 1, i, corr);
    fprintf(f, ",\n  {\"ph\": \"s\", \"id\": %" G_GUINT64_FORMAT ", \"pid\": 100, \"tid\": 100, \"ts\": %"
               G_GUINT64_FORMAT ".500, \"cat\": \"ac2g\", \"name\": \"ac2g\"}", corr, t + 1);
    if (i % 50 == 49)
      fprintf(f, ",\n  {\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce_Sum_f32_RING_LL("
                 "ncclDevComm*, unsigned long, ncclWork*)\", \"pid\": 0, \"tid\": 20,\n    \"ts\": %" G_GUINT64_FORMAT
                 ".125, \"dur\": 9.875,\n    \"args\": {\n      \"External id\": %" G_GUINT64_FORMAT ", \"queued\": 0, "
                 "\"device\": 0, \"context\": 1, \"stream\": 20, \"correlation\": %" G_GUINT64_FORMAT ", "
                 "\"registers per thread\": 96, \"shared memory\": 87568, \"blocks per SM\": 0.074074, \"warps per SM\": "
                 "1.259259, \"grid\": [8, 1, 1], \"block\": [544, 1, 1], \"est. achieved occupancy %%\": 0, "
                 "\"Collective name\": \"allreduce\", \"In msg nelems\": 1048576, \"Out msg nelems\": 1048576, "
                 "\"Group size\": 1, \"dtype\": \"Float\", \"In split size\": \"[]\", \"Out split size\": \"[]\", "
                 "\"Process Group Name\": \"0\", \"Process Group Description\": \"default_pg\", "
                 "\"Process Group Ranks\": \"[0]\"\n    }\n  }", t + 6, i, corr);
    else
      fprintf(f, ",\n  {\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_"
                 "128x128_32x3_nn_align4>(Params)\", \"pid\": 0, \"tid\": 7,\n    \"ts\": %" G_GUINT64_FORMAT
                 ".125, \"dur\": 9.875,\n    \"args\": {\n      \"External id\": %" G_GUINT64_FORMAT ", \"queued\": 0, "
                 "\"device\": 0, \"context\": 1, \"stream\": 7, \"correlation\": %" G_GUINT64_FORMAT ", "
                 "\"registers per thread\": 232, \"shared memory\": 73728, \"blocks per SM\": 0.592593, "
                 "\"warps per SM\": 2.370370, \"grid\": [4, 16, 1], \"block\": [128, 1, 1], "
                 "\"est. achieved occupancy %%\": 6\n    }\n  }", t + 6, i, corr);
    fprintf(f, ",\n  {\"ph\": \"f\", \"id\": %" G_GUINT64_FORMAT ", \"pid\": 0, \"tid\": 7, \"ts\": %" G_GUINT64_FORMAT
               ".125, \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}", corr, t + 6);
    corr++;
    if ((i & 255) == 0)
      pos = ftell(f);
  }
  uint64_t end = ts + i * 20 + 100;
  fprintf(f, ",\n  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#2\", \"pid\": 100, "
             "\"tid\": 100, \"ts\": %" G_GUINT64_FORMAT ", \"dur\": %" G_GUINT64_FORMAT ", \"args\": {}}\n  ],\n"
             "  \"traceName\": \"bench\"\n}\n", ts + 2, end - ts);
  uint64_t size = (uint64_t)ftell(f);
  fclose(f);
  return size;
}

int main(void)
{
  const char *mb_env = g_getenv("WISP_BENCH_KINETO_MB");
  uint64_t mb = mb_env ? g_ascii_strtoull(mb_env, NULL, 10) : 400;
  if (mb == 0)
    mb = 400;
  char *dir = g_dir_make_tmp("wisp-bench-kineto-XXXXXX", NULL);
  char *path = g_build_filename(dir, "rank0.json", NULL);
  double t0 = wisp_wall_seconds();
  uint64_t size = generate(path, mb * 1000000);
  double tg = wisp_wall_seconds() - t0;
  printf("bench_kineto: generated %.1f MB of Kineto JSON in %.2f s\n", (double)size / 1e6, tg);

  long rss0 = max_rss_kb();
  GError *e = NULL;
  t0 = wisp_wall_seconds();
  double c0 = cpu_seconds();
  kt_trace *t = kt_trace_read(path, &e);
  double tp = wisp_wall_seconds() - t0, cp = cpu_seconds() - c0;
  if (!t) {
    fprintf(stderr, "bench_kineto: %s\n", e->message);
    return 1;
  }
  size_t kept = t->events->len * sizeof(kt_event) + t->metas->len * sizeof(kt_meta);
  long rss1 = max_rss_kb();
  printf("parse only: %.1f MB/s wall (%.2f s), %.1f MB/s per CPU-second (%.2f s CPU); %" G_GUINT64_FORMAT
         " events read (%" G_GUINT64_FORMAT " in place, %" G_GUINT64_FORMAT " handed to the tokenizer), %u kept\n",
         (double)size / 1e6 / tp, tp, (double)size / 1e6 / cp, cp, t->events_read, t->inplace_events,
         t->inplace_bails, t->events->len);
  printf("memory: kept event table %.1f MB; peak RSS growth during the parse %.1f MB (%.2fx the kept table)\n",
         (double)kept / 1e6, (double)(rss1 - rss0) / 1e3, (double)(rss1 - rss0) * 1e3 / (double)(kept ? kept : 1));
  kt_trace_free(t);

  fe_json *j = fe_json_open(path, &e);
  t0 = wisp_wall_seconds();
  c0 = cpu_seconds();
  t = j ? kt_trace_parse_flags(j, path, KT_PARSE_TOKENS_ONLY, &e) : NULL;
  tp = wisp_wall_seconds() - t0;
  cp = cpu_seconds() - c0;
  if (!t) {
    fprintf(stderr, "bench_kineto: %s\n", e->message);
    return 1;
  }
  printf("parse through the tokenizer only (for comparison): %.1f MB/s wall, %.1f MB/s per CPU-second\n",
         (double)size / 1e6 / tp, (double)size / 1e6 / cp);
  kt_trace_free(t);

  fe_kineto_options opt;
  fe_kineto_options_init(&opt);
  opt.whole_trace = TRUE;
  const char *paths[] = { path };
  t0 = wisp_wall_seconds();
  c0 = cpu_seconds();
  et_workload *w = fe_kineto_load(paths, 1, &opt, NULL, &e);
  double tl = wisp_wall_seconds() - t0, cl = cpu_seconds() - c0;
  if (!w) {
    fprintf(stderr, "bench_kineto: %s\n", e->message);
    return 1;
  }
  printf("full load (parse + extract + graph): %.1f MB/s wall (%.2f s), %.1f MB/s per CPU-second; %u graph nodes; "
         "peak RSS %.1f MB\n", (double)size / 1e6 / tl, tl, (double)size / 1e6 / cl, w->ranks[0]->n_nodes,
         (double)max_rss_kb() / 1e3);
  et_workload_free(w);
  g_unlink(path);
  g_rmdir(dir);
  g_free(path);
  g_free(dir);
  return 0;
}
