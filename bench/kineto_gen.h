/* kineto_gen.h: a deterministic generator of multi-rank Kineto traces for
 * the memory and throughput benchmark of the Kineto frontend
 * (bench/bench_kineto_ranks.c; issue 18 part 3).
 *
 * The shape follows the shared traces (the HTA nccl_data trace and the
 * DLRM set under ../shared/data): a header with deviceProperties and
 * distributedInfo (backend, rank, world_size, pg_count, pg_config of every
 * process group), then per ProfilerStep and per layer the CPU ops of a
 * linear layer (aten::linear > aten::t, aten::addmm > cudaLaunchKernel),
 * an activation (aten::gelu), bookkeeping CPU ops without GPU work
 * (aten::empty, aten::view), every launch with its ac2g flow pair and its
 * kernel (grid/block args, correlation and External id), every fourth
 * layer a tensor-parallel all-reduce (record_param_comms with the
 * collective metadata, cudaEventRecord and cudaStreamWaitEvent, the NCCL
 * kernel on the communication stream with "Collective name", msg nelems,
 * dtype and the process group's name, description and ranks), and at the
 * end of every step the data-parallel gradient all-reduce in four buckets,
 * the optimizer kernels, one host-to-device copy and a
 * cudaDeviceSynchronize.  Ranks form TP groups of 8 consecutive ranks
 * (TP 1 when the world is not a multiple of 8) and DP groups of stride 8.
 *
 * Timing: every rank runs the same program; compute kernels get a small
 * rank-dependent jitter (0..4 us) and each rank's clock is offset by 3 us
 * per rank, as on a real job.  Kernels start after their launch and after
 * the previous kernel of their stream; communication kernels wait for the
 * compute stream and the compute stream for them.  Everything is integer
 * arithmetic on the arguments: the same arguments give the same bytes.
 *
 * Size: the number of layers per step is chosen so that the file is about
 * mb_per_rank megabytes (within one layer's bytes, about 4 KB), measured by
 * writing one layer to memory first.  O(file size) time, O(1) memory.
 */
#ifndef WISP_BENCH_KINETO_GEN_H
#define WISP_BENCH_KINETO_GEN_H

#include <inttypes.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  FILE *f;
  int rank, world, tp, dp, steps;
  int64_t cpu, g7, g20;   /* ns: CPU thread cursor, compute and communication stream ends */
  int64_t origin;         /* ns: this rank's clock at the job's time zero */
  uint64_t corr, ext, ev_idx, seq_tp, seq_dp;
} kgen;

/* ts in ns printed as Kineto's microseconds with three decimals. */
#define KG_US(x) (long long)((x) / 1000), (long long)((x) % 1000)

static void kg_flow(kgen *g, int64_t launch_ts, int64_t kernel_ts, int stream)
{
  fprintf(g->f, ",\n  {\"ph\": \"s\", \"id\": %" PRIu64 ", \"pid\": 2910249, \"tid\": 2910249, \"ts\": %lld.%03lld, "
          "\"cat\": \"ac2g\", \"name\": \"ac2g\"}", g->corr, KG_US(g->origin + launch_ts));
  fprintf(g->f, ",\n  {\"ph\": \"f\", \"id\": %" PRIu64 ", \"pid\": 0, \"tid\": %d, \"ts\": %lld.%03lld, "
          "\"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}", g->corr, stream, KG_US(g->origin + kernel_ts));
}

static void kg_cpu_op(kgen *g, const char *name, int64_t ts, int64_t dur, const char *dims, const char *types)
{
  fprintf(g->f, ",\n  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": 2910249, \"tid\": 2910249, "
          "\"ts\": %lld.%03lld, \"dur\": %lld.%03lld, \"args\": {\"External id\": %" PRIu64 ", \"Record function id\": 0, "
          "\"Ev Idx\": %" PRIu64 ", \"Input Dims\": %s, \"Input type\": %s}}", name, KG_US(g->origin + ts), KG_US(dur),
          ++g->ext, g->ev_idx++, dims, types);
}

static void kg_runtime(kgen *g, const char *name, int64_t ts, int64_t dur, int cbid)
{
  fprintf(g->f, ",\n  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"%s\", \"pid\": 2910249, \"tid\": 2910249, "
          "\"ts\": %lld.%03lld, \"dur\": %lld.%03lld, \"args\": {\"External id\": %" PRIu64 ", \"cbid\": %d, "
          "\"correlation\": %" PRIu64 "}}", name, KG_US(g->origin + ts), KG_US(dur), g->ext, cbid, ++g->corr);
}

/* A launch at ts (5 us long) of a kernel on stream 7 that takes dur and
 * starts after the launch and after the stream's previous kernel (and
 * after `after`, a cross-stream wait).  Returns the kernel's end. */
static int64_t kg_kernel(kgen *g, int64_t ts, const char *name, int64_t dur, int64_t after, const char *extra)
{
  kg_runtime(g, "cudaLaunchKernel", ts, 5000, 211);
  int64_t start = ts + 6000;
  if (start < g->g7)
    start = g->g7;
  if (start < after)
    start = after;
  fprintf(g->f, ",\n  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": 7, "
          "\"ts\": %lld.%03lld, \"dur\": %lld.%03lld, \"args\": {\"External id\": %" PRIu64 ", \"queued\": 0, "
          "\"device\": 0, \"context\": 1, \"stream\": 7, \"correlation\": %" PRIu64 ", \"registers per thread\": 232, "
          "\"shared memory\": 73728, \"blocks per SM\": 0.592593, \"warps per SM\": 2.370370, %s"
          "\"est. achieved occupancy %%\": 6}}", name, KG_US(g->origin + start), KG_US(dur), g->ext, g->corr, extra);
  kg_flow(g, ts, start, 7);
  g->g7 = start + dur;
  return g->g7;
}

/* "[a, a+s, ..., a+(n-1)s]" into buf. */
static void kg_ranks(char *buf, size_t cap, int first, int stride, int n)
{
  size_t k = 0;
  k += (size_t)snprintf(buf + k, cap - k, "[");
  for (int i = 0; i < n && k < cap; i++)
    k += (size_t)snprintf(buf + k, cap - k, "%s%d", i ? ", " : "", first + i * stride);
  if (k < cap)
    snprintf(buf + k, cap - k, "]");
}

/* One all-reduce over the group (first, stride, n) named pg (description
 * desc) of nelems BFloat16 elements at CPU time ts: record_param_comms with
 * the metadata, the event record / stream wait pair and the NCCL kernel on
 * stream 20, which waits for the compute stream; the compute stream then
 * waits for it.  Returns the CPU time after the call. */
static int64_t kg_allreduce(kgen *g, int64_t ts, const char *pg, const char *desc, int first, int stride, int n,
                            uint64_t nelems, int64_t dur, uint64_t seq)
{
  char ranks[1024];
  kg_ranks(ranks, sizeof ranks, first, stride, n);
  fprintf(g->f, ",\n  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"pid\": 2910249, "
          "\"tid\": 2910249, \"ts\": %lld.%03lld, \"dur\": 24.000, \"args\": {\"External id\": %" PRIu64
          ", \"Record function id\": 0, \"Ev Idx\": %" PRIu64 ", \"Collective name\": \"allreduce\", "
          "\"In msg nelems\": %" PRIu64 ", \"Out msg nelems\": %" PRIu64 ", \"Group size\": %d, \"dtype\": \"BFloat16\", "
          "\"In split size\": \"[]\", \"Out split size\": \"[]\", \"Global rank start\": %d, \"Global rank stride\": %d, "
          "\"Process Group Name\": \"%s\", \"Process Group Description\": \"%s\", \"Process Group Ranks\": \"%s\", "
          "\"Seq\": %" PRIu64 "}}", KG_US(g->origin + ts), ++g->ext, g->ev_idx++, nelems, nelems, n, first, stride, pg,
          desc, ranks, seq);
  kg_runtime(g, "cudaEventRecord", ts + 3000, 2000, 135);
  kg_runtime(g, "cudaStreamWaitEvent", ts + 6000, 2000, 147);
  kg_runtime(g, "cudaLaunchKernel", ts + 10000, 6000, 211);
  int64_t start = ts + 16000;
  if (start < g->g20)
    start = g->g20;
  if (start < g->g7)
    start = g->g7;
  fprintf(g->f, ",\n  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce_Sum_bf16_RING_LL("
          "ncclDevComm*, unsigned long, ncclWork*)\", \"pid\": 0, \"tid\": 20, \"ts\": %lld.%03lld, "
          "\"dur\": %lld.%03lld, \"args\": {\"External id\": %" PRIu64 ", \"queued\": 0, \"device\": 0, "
          "\"context\": 1, \"stream\": 20, \"correlation\": %" PRIu64 ", \"registers per thread\": 96, "
          "\"shared memory\": 87568, \"blocks per SM\": 0.074074, \"warps per SM\": 1.259259, \"grid\": [8, 1, 1], "
          "\"block\": [544, 1, 1], \"est. achieved occupancy %%\": 0, \"Collective name\": \"allreduce\", "
          "\"In msg nelems\": %" PRIu64 ", \"Out msg nelems\": %" PRIu64 ", \"Group size\": %d, \"dtype\": \"BFloat16\", "
          "\"In split size\": \"[]\", \"Out split size\": \"[]\", \"Process Group Name\": \"%s\", "
          "\"Process Group Description\": \"%s\", \"Process Group Ranks\": \"%s\"}}", KG_US(g->origin + start),
          KG_US(dur), g->ext, g->corr, nelems, nelems, n, pg, desc, ranks);
  kg_flow(g, ts + 10000, start, 20);
  g->g20 = start + dur;
  g->g7 = g->g20; /* the next compute kernel uses the result */
  return ts + 28000;
}

/* One layer at CPU time ts; returns the CPU time after it. */
static int64_t kg_layer(kgen *g, int64_t ts, int layer)
{
  static const char gemm[] = "void cutlass::Kernel<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x128_32x3_nn_align8>"
                             "(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x128_32x3_nn_align8::Params)";
  static const char gelu[] = "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl("
                             "at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::"
                             "{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, "
                             "at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
                             "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::"
                             "{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2>)";
  int64_t jitter = (int64_t)(((unsigned)layer * 7u + (unsigned)g->rank * 3u) % 5u) * 1000;
  kg_cpu_op(g, "aten::linear", ts, 20000, "[[4096, 1024], [4096, 1024], [4096]]",
            "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\"]");
  kg_cpu_op(g, "aten::t", ts + 1000, 2000, "[[4096, 1024]]", "[\"c10::BFloat16\"]");
  kg_cpu_op(g, "aten::addmm", ts + 4000, 14000, "[[4096], [4096, 1024], [1024, 4096], [], []]",
            "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]");
  kg_kernel(g, ts + 8000, gemm, 38000 + jitter, 0, "\"grid\": [32, 16, 1], \"block\": [128, 1, 1], ");
  kg_cpu_op(g, "aten::empty", ts + 20500, 1000, "[[], [], [], [], [], []]",
            "[\"\", \"Scalar\", \"\", \"\", \"\", \"\"]");
  kg_cpu_op(g, "aten::gelu", ts + 22000, 10000, "[[4096, 4096], []]", "[\"c10::BFloat16\", \"\"]");
  kg_kernel(g, ts + 25000, gelu, 9000, 0, "\"grid\": [16384, 1, 1], \"block\": [128, 1, 1], ");
  kg_cpu_op(g, "aten::view", ts + 32500, 1000, "[[4096, 4096], [2]]", "[\"c10::BFloat16\", \"\"]");
  ts += 34000;
  if (g->tp > 1 && layer % 4 == 3) {
    int first = g->rank / g->tp * g->tp;
    char pg[16];
    snprintf(pg, sizeof pg, "%d", 1 + g->rank / g->tp);
    ts = kg_allreduce(g, ts, pg, "tp", first, 1, g->tp, 4194304, 55000, g->seq_tp++);
  }
  return ts;
}

/* The header: deviceProperties and distributedInfo with every group. */
static void kg_header(kgen *g)
{
  fprintf(g->f, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\", "
          "\"totalGlobalMem\": 85045215232, \"computeMajor\": 9, \"computeMinor\": 0, \"maxThreadsPerBlock\": 1024, "
          "\"maxThreadsPerMultiprocessor\": 2048, \"regsPerBlock\": 65536, \"regsPerMultiprocessor\": 65536, "
          "\"warpSize\": 32, \"sharedMemPerBlock\": 49152, \"sharedMemPerMultiprocessor\": 233472, "
          "\"numSms\": 132, \"sharedMemPerBlockOptin\": 232448}],\n");
  fprintf(g->f, "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d, \"world_size\": %d, \"pg_count\": %d, "
          "\"pg_config\": [", g->rank, g->world, 1 + (g->tp > 1 ? g->dp : 0) + (g->dp > 1 ? g->tp : 0));
  char ranks[8192];
  kg_ranks(ranks, sizeof ranks, 0, 1, g->world);
  fprintf(g->f, "{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"backend_config\": \"cuda:nccl\", \"pg_size\": %d, "
          "\"ranks\": %s}", g->world, ranks);
  if (g->tp > 1)
    for (int k = 0; k < g->dp; k++) {
      kg_ranks(ranks, sizeof ranks, k * g->tp, 1, g->tp);
      fprintf(g->f, ", {\"pg_name\": \"%d\", \"pg_desc\": \"tp\", \"backend_config\": \"cuda:nccl\", \"pg_size\": %d, "
              "\"ranks\": %s}", 1 + k, g->tp, ranks);
    }
  if (g->dp > 1)
    for (int j = 0; j < g->tp; j++) {
      kg_ranks(ranks, sizeof ranks, j, g->tp, g->dp);
      fprintf(g->f, ", {\"pg_name\": \"%d\", \"pg_desc\": \"dp\", \"backend_config\": \"cuda:nccl\", \"pg_size\": %d, "
              "\"ranks\": %s}", 1 + g->dp + j, g->dp, ranks);
    }
  fprintf(g->f, "], \"nccl_version\": \"2.21.5\"},\n  \"record_shapes\": 1,\n  \"traceEvents\": [\n");
  fprintf(g->f, "  {\"name\": \"process_name\", \"ph\": \"M\", \"ts\": %lld.%03lld, \"pid\": 2910249, \"tid\": 0, "
          "\"args\": {\"name\": \"python3\"}}", KG_US(g->origin));
}

/* One step of `layers` layers, then its ProfilerStep#n annotation. */
static void kg_step(kgen *g, int n, int layers)
{
  static const char adam[] = "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
                             "namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor"
                             "<c10::BFloat16, 4, (at::native::ADAM_MODE)1, false>, double*, double, double, double, "
                             "double, double, double, double*, double*>";
  int64_t start = g->cpu, ts = g->cpu + 20000;
  for (int l = 0; l < layers; l++)
    ts = kg_layer(g, ts, l);
  if (g->dp > 1) {
    char pg[16];
    snprintf(pg, sizeof pg, "%d", 1 + g->dp + g->rank % g->tp);
    for (int b = 0; b < 4; b++)
      ts = kg_allreduce(g, ts, pg, "dp", g->rank % g->tp, g->tp, g->dp, 25000000, 900000, g->seq_dp++);
  }
  for (int k = 0; k < 8; k++) {
    kg_cpu_op(g, "aten::_fused_adam_", ts, 9000, "[[], [], [], [], [], []]",
              "[\"TensorList\", \"TensorList\", \"TensorList\", \"TensorList\", \"TensorList\", \"TensorList\"]");
    kg_kernel(g, ts + 2000, adam, 120000, g->g20, "\"grid\": [320, 1, 1], \"block\": [512, 1, 1], ");
    ts += 10000;
  }
  /* A host-to-device copy of the next batch, then the step's device sync. */
  kg_runtime(g, "cudaMemcpyAsync", ts, 8000, 41);
  int64_t cs = ts + 9000 > g->g7 ? ts + 9000 : g->g7;
  fprintf(g->f, ",\n  {\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD (Pinned -> Device)\", \"pid\": 0, "
          "\"tid\": 7, \"ts\": %lld.%03lld, \"dur\": 41.000, \"args\": {\"External id\": %" PRIu64 ", \"device\": 0, "
          "\"context\": 1, \"stream\": 7, \"correlation\": %" PRIu64 ", \"bytes\": 16777216, "
          "\"memory bandwidth (GB/s)\": 409.2}}", KG_US(g->origin + cs), g->ext, g->corr);
  kg_flow(g, ts, cs, 7);
  g->g7 = cs + 41000;
  ts += 10000;
  int64_t done = g->g7 > g->g20 ? g->g7 : g->g20;
  int64_t sync_dur = (done > ts ? done - ts : 0) + 5000;
  kg_runtime(g, "cudaDeviceSynchronize", ts, sync_dur, 165);
  g->cpu = ts + sync_dur + 30000;
  fprintf(g->f, ",\n  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%d\", \"pid\": 2910249, "
          "\"tid\": 2910249, \"ts\": %lld.%03lld, \"dur\": %lld.%03lld, \"args\": {\"External id\": %" PRIu64
          ", \"Record function id\": 0, \"Ev Idx\": %" PRIu64 "}}", n, KG_US(g->origin + start),
          KG_US(g->cpu - 10000 - start), ++g->ext, g->ev_idx++);
}

static void kg_init(kgen *g, FILE *f, int rank, int world, int steps)
{
  memset(g, 0, sizeof *g);
  g->f = f;
  g->rank = rank;
  g->world = world;
  g->tp = world >= 8 && world % 8 == 0 ? 8 : 1;
  g->dp = world / g->tp;
  g->steps = steps;
  g->origin = INT64_C(1700000000000000000) + (int64_t)rank * 3000;
  g->cpu = 1000000;
}

/* Bytes one layer takes (written to a scratch stream), for sizing. */
static uint64_t kg_layer_bytes(int world)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  kgen g;
  kg_init(&g, m, 0, world, 1);
  int64_t ts = 0;
  for (int l = 0; l < 8; l++)
    ts = kg_layer(&g, ts, l);
  fclose(m);
  free(buf);
  return len / 8;
}

/* Writes rank `rank` of a `world`-rank job to path: `steps` steps sized so
 * that the file is about mb_per_rank MB.  Returns the bytes written, 0 on
 * an I/O error (errno set). */
static uint64_t kg_write_rank(const char *path, int rank, int world, int steps, double mb_per_rank)
{
  FILE *f = fopen(path, "w");
  if (!f)
    return 0;
  setvbuf(f, NULL, _IOFBF, 1 << 20);
  uint64_t per_layer = kg_layer_bytes(world);
  double want = mb_per_rank * 1e6 / (double)steps / (double)per_layer;
  int layers = want < 4 ? 4 : (int)want;
  kgen g;
  kg_init(&g, f, rank, world, steps);
  kg_header(&g);
  for (int s = 1; s <= steps; s++)
    kg_step(&g, s, layers);
  /* The profiler stops inside the next iteration (its data loading), so
   * the last step is complete: something ends after its marker. */
  kg_cpu_op(&g, "aten::zeros", g.cpu - 5000, 4000, "[[], [], [], [], []]", "[\"\", \"Scalar\", \"\", \"\", \"\"]");
  fprintf(f, "\n  ],\n  \"traceName\": \"wisp-bench-kineto-ranks\"\n}\n");
  long size = ftell(f);
  if (fclose(f) != 0 || size < 0)
    return 0;
  return (uint64_t)size;
}

#endif
