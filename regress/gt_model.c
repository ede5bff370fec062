/* gt_model.c: the ground-truth model of gt_model.h (doc/ground-truth.md).
 *
 * A job is built as one CPU program per rank.  Everything structural is
 * settled while the programs are built, because a CPU thread executes its
 * program strictly in order: which GPU op precedes which on a stream,
 * which cudaEventRecord each cudaStreamWaitEvent refers to, which ops wait
 * for it, which launches form the k-th instance of a collective, and which
 * send pairs with which recv.  Running the job only computes times.
 *
 * The run is a fixed-point iteration in passes.  In one pass, every rank's
 * CPU executes actions until it reaches a cudaDeviceSynchronize whose GPU
 * work has not all ended; then every stream of every rank resolves ops in
 * FIFO order for as long as an op's start can be computed (its launch was
 * executed, its predecessor on the stream has ended, and every event it
 * waits for has a known reach time) and its end is known (a compute kernel
 * ends after its duration; an NCCL kernel once every member or the peer
 * has started).  A pass that changes nothing while work remains is a
 * deadlock, reported with what each blocked rank waits for.  Each pass
 * costs O(ranks x streams) plus the work it resolves, and every pass but
 * the last resolves something, so a run costs O(passes x ranks + ops).
 */
#include "config.h"

#include "regress/gt_model_internal.h"
#include "common/wisp_util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const int stream_id[GT_N_STREAMS] = { GT_STREAM_COMPUTE, GT_STREAM_COMM, GT_STREAM_P2P, GT_STREAM_DP,
                                             GT_STREAM_P2P_RECV, GT_STREAM_COMM_RECV };

static const char *const scenario_names[GT_N_SCENARIOS] = { "tp", "dp", "launch", "straggler", "pp", "tpdp", "decode", "serve" };

const char *gt_scenario_name(gt_scenario s)
{
  return s >= 0 && s < GT_N_SCENARIOS ? scenario_names[s] : "?";
}

gboolean gt_scenario_from_name(const char *name, gt_scenario *out)
{
  for (int s = 0; s < GT_N_SCENARIOS; s++)
    if (name && !strcmp(name, scenario_names[s])) {
      *out = (gt_scenario)s;
      return TRUE;
    }
  return FALSE;
}

/* ---- parameters and closed forms ---- */

#define US INT64_C(1000)
#define MiB (UINT64_C(1) << 20)

void gt_params_init(gt_params *p, gt_scenario s)
{
  memset(p, 0, sizeof *p);
  p->scenario = s;
  p->ranks = 8;
  p->alpha_ns = 2 * US;
  p->beta_Bps = UINT64_C(100000000000);
  p->bw_scale = 1.0;
  p->l_call_ns = 5 * US;
  p->l_submit_ns = 3 * US;
  p->l_small_ns = 2 * US;
  p->g_stream_ns = 1 * US;
  p->g_event_ns = 2 * US;
  p->r_sync_ns = 5 * US;
  p->r_join_ns = 5 * US;
  p->alpha_out_ns = 5 * US;
  p->beta_out_Bps = UINT64_C(25000000000);
  p->bw_scale_out = 1.0;
  p->tp = 4;
  p->bucket_layers = 2;
  p->bucket_bytes[0] = 16 * MiB;
  p->bucket_bytes[1] = 24 * MiB;
  p->copy_ns = 20 * US;
  p->host_ns = 10 * US;
  p->head_ns = 50 * US;
  p->tail_ns = 100 * US;
  p->final_bytes = 4096;
  p->layers = 12;
  p->gemm_ns = 600 * US;
  p->elementwise_ns = 200 * US;
  p->loss_ns = 100 * US;
  p->comm_bytes[0] = 8 * MiB;
  p->comm_bytes[1] = 32 * MiB;
  p->straggler_rank = -1;
  p->straggler_scale = 1.3;
  p->fwd_kernels = 8;
  p->bwd_kernels = 24;
  p->bucket_kernels = 4;
  p->fwd_ns = 300 * US;
  p->bwd_ns = 250 * US;
  p->optimizer_ns = 400 * US;
  p->microbatches = 4;
  p->act_bytes = 16 * MiB;
  p->cuda_sync_events = FALSE;
  p->et_trace = FALSE;
  p->sglang_markers = FALSE;
  p->serve_steps = 6;
  p->prefill_scale = 16;
  switch (s) {
  case GT_LAUNCH:
    /* A slow host: 200 us of Python before every launch, longer than any
     * kernel and any all-reduce, so the GPU waits for launches. */
    p->host_ns = 200 * US;
    p->gemm_ns = 120 * US;
    p->elementwise_ns = 80 * US;
    p->loss_ns = 50 * US;
    p->comm_bytes[0] = 1 * MiB;
    p->comm_bytes[1] = 4 * MiB;
    break;
  case GT_STRAGGLER:
    p->straggler_rank = 3;
    break;
  case GT_DP:
    p->comm_bytes[0] = 24 * MiB;
    p->comm_bytes[1] = 40 * MiB;
    break;
  case GT_TPDP:
    /* TP4 x DP2 on 2 nodes of 4: TP inside a node, DP across. */
    p->gpus_per_node = 4;
    p->layers = 8;
    p->gemm_ns = 400 * US;
    p->elementwise_ns = 150 * US;
    p->comm_bytes[0] = 8 * MiB;
    p->comm_bytes[1] = 16 * MiB;
    p->bwd_ns = 700 * US;
    break;
  case GT_DECODE:
    /* Small kernels and all-reduces, as in a decode step. */
    p->gemm_ns = 60 * US;
    p->elementwise_ns = 20 * US;
    p->loss_ns = 30 * US;
    p->comm_bytes[0] = 256 * 1024;
    p->comm_bytes[1] = 512 * 1024;
    break;
  case GT_SERVE:
    /* Decode-sized kernels and all-reduces; the prefill 16 times larger. */
    p->gemm_ns = 60 * US;
    p->elementwise_ns = 20 * US;
    p->loss_ns = 30 * US;
    p->comm_bytes[0] = 256 * 1024;
    p->comm_bytes[1] = 512 * 1024;
    break;
  case GT_PP:
    p->ranks = 4;
    p->fwd_ns = 500 * US;
    p->bwd_ns = 1000 * US;
    p->comm_bytes[0] = 32 * MiB;
    p->comm_bytes[1] = 96 * MiB;
    break;
  default:
    break;
  }
}

uint64_t gt_params_beta(const gt_params *p)
{
  double b = round((double)p->beta_Bps * p->bw_scale);
  return b < 1.0 ? 1 : (uint64_t)b;
}

uint64_t gt_params_beta_out(const gt_params *p)
{
  double b = round((double)p->beta_out_Bps * p->bw_scale_out);
  return b < 1.0 ? 1 : (uint64_t)b;
}

const char *gt_params_check(const gt_params *p)
{
  if (p->scenario < 0 || p->scenario >= GT_N_SCENARIOS)
    return "unknown scenario";
  if (p->scenario == GT_PP ? p->ranks != 4 : (p->ranks < 2 || p->ranks > GT_MAX_RANKS))
    return "ranks must be 2..16 (pp: 4)";
  if (p->beta_Bps == 0 || !isfinite(p->bw_scale) || p->bw_scale <= 0 || p->bw_scale > 1e6)
    return "the bandwidth and its scale must be positive";
  if (p->beta_out_Bps == 0 || !isfinite(p->bw_scale_out) || p->bw_scale_out <= 0 || p->bw_scale_out > 1e6)
    return "the scale-out bandwidth and its scale must be positive";
  if (p->gpus_per_node < 0 || p->gpus_per_node > GT_MAX_RANKS)
    return "gpus per node must be 0 (one node) .. 16";
  if (p->scenario == GT_TPDP && (p->tp < 1 || p->ranks % p->tp || p->ranks / p->tp < 2 || p->bucket_layers < 1))
    return "tpdp: tp must divide the ranks into at least 2 replicas, and bucket layers be at least 1";
  int64_t times[] = { p->alpha_ns, p->l_call_ns, p->l_submit_ns, p->l_small_ns, p->g_stream_ns, p->g_event_ns,
                      p->r_sync_ns, p->host_ns, p->head_ns, p->tail_ns, p->gemm_ns, p->elementwise_ns, p->loss_ns,
                      p->fwd_ns, p->bwd_ns, p->optimizer_ns, p->r_join_ns, p->alpha_out_ns, p->copy_ns, p->post_backward_ns };
  for (size_t i = 0; i < G_N_ELEMENTS(times); i++)
    if (times[i] < 0 || times[i] > INT64_C(1000000000000))
      return "times must be between 0 and 1000 s";
  if (p->layers < 1 || p->layers > 1000 || p->fwd_kernels < 0 || p->fwd_kernels > 2000 || p->bwd_kernels < 1 ||
      p->bwd_kernels > 2000 || p->bucket_kernels < 1 || p->microbatches < 1 || p->microbatches > 1000)
    return "counts out of range (layers 1..1000, fwd kernels 0..2000, bwd kernels 1..2000, bucket kernels >= 1, "
           "micro-batches 1..1000)";
  uint64_t sizes[] = { p->final_bytes, p->comm_bytes[0], p->comm_bytes[1], p->act_bytes, p->bucket_bytes[0],
                       p->bucket_bytes[1] };
  for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++)
    if (sizes[i] == 0 || sizes[i] % GT_BF16_BYTES || sizes[i] > (UINT64_C(1) << 40))
      return "sizes must be positive, even (bf16 elements) and at most 1 TiB";
  if (p->serve_steps < 3 || p->serve_steps > GT_MAX_SERVE_STEPS || p->prefill_scale < 1 || p->prefill_scale > 1000)
    return "serve: 3 to 16 model executions and a prefill scale of 1 to 1000";
  if (p->straggler_rank >= p->ranks || !isfinite(p->straggler_scale) || p->straggler_scale <= 0 ||
      p->straggler_scale > 1000)
    return "the straggler rank must be below the world size and its scale positive";
  return NULL;
}

/* round(num / den), halves up, for positive operands. */
static int64_t div_round(unsigned __int128 num, unsigned __int128 den)
{
  unsigned __int128 q = num / den, r = num % den;
  if (2 * r >= den)
    q++;
  return (int64_t)q;
}

int64_t gt_coll_ns(gt_kernel_kind kind, uint64_t bytes, int n, int64_t alpha_ns, uint64_t beta_Bps)
{
  if (n <= 1)
    return 0;
  /* bus_bytes = fnum / fden * S. */
  int64_t steps;
  uint64_t fnum, fden;
  switch (kind) {
  case GT_ALL_REDUCE: steps = 2 * (n - 1); fnum = 2 * (uint64_t)(n - 1); fden = (uint64_t)n; break;
  case GT_REDUCE_SCATTER: steps = n - 1; fnum = (uint64_t)(n - 1); fden = (uint64_t)n; break;
  case GT_ALL_GATHER: steps = n - 1; fnum = (uint64_t)(n - 1); fden = 1; break;
  case GT_ALL_TO_ALL: steps = n - 1; fnum = (uint64_t)(n - 1); fden = (uint64_t)n; break;
  default: return 0;
  }
  unsigned __int128 num = (unsigned __int128)fnum * bytes * 1000000000u;
  return steps * alpha_ns + div_round(num, (unsigned __int128)fden * beta_Bps);
}

int64_t gt_p2p_ns(uint64_t bytes, int64_t alpha_ns, uint64_t beta_Bps)
{
  return alpha_ns + div_round((unsigned __int128)bytes * 1000000000u, beta_Bps);
}

/* ---- building ---- */

static int stream_index(int stream)
{
  for (int s = 0; s < GT_N_STREAMS; s++)
    if (stream_id[s] == stream)
      return s;
  return -1;
}

static void build_fail(gt_job *j, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void build_fail(gt_job *j, const char *fmt, ...)
{
  if (j->build_error)
    return;
  va_list ap;
  va_start(ap, fmt);
  j->build_error = g_strdup_vprintf(fmt, ap);
  va_end(ap);
}

gt_job *gt_job_new(const gt_params *p, int n_ranks)
{
  g_return_val_if_fail(n_ranks >= 1 && n_ranks <= GT_MAX_RANKS, NULL);
  gt_job *j = g_new0(gt_job, 1);
  j->p = *p;
  j->beta = gt_params_beta(p);
  j->beta_out = gt_params_beta_out(p);
  j->n = n_ranks;
  j->groups = g_ptr_array_new();
  j->names = g_string_chunk_new(256);
  for (int r = 0; r < n_ranks; r++) {
    rank_state *rs = &j->r[r];
    rs->actions = g_array_new(FALSE, FALSE, sizeof(action));
    rs->ops = g_array_new(FALSE, FALSE, sizeof(op));
    rs->records = g_array_new(FALSE, FALSE, sizeof(record));
    rs->refs = g_array_new(FALSE, FALSE, sizeof(int32_t));
    rs->event_record = g_array_new(FALSE, FALSE, sizeof(int32_t));
    for (int s = 0; s < GT_N_STREAMS; s++) {
      rs->stream_ops[s] = g_array_new(FALSE, FALSE, sizeof(int32_t));
      rs->pending[s] = g_array_new(FALSE, FALSE, sizeof(int32_t));
      rs->last_op[s] = -1;
    }
    for (int t = 0; t < GT_MAX_THREADS; t++)
      rs->thread_acts[t] = g_array_new(FALSE, FALSE, sizeof(int32_t));
    rs->sync_ops = g_array_new(FALSE, FALSE, sizeof(int32_t));
    rs->next_corr = 1;
    rs->graph_action = -1;
  }
  int all[GT_MAX_RANKS];
  for (int r = 0; r < n_ranks; r++)
    all[r] = r;
  gt_job_add_group(j, "default_pg", all, n_ranks);
  return j;
}

void gt_job_free(gt_job *j)
{
  if (!j)
    return;
  for (int r = 0; r < j->n; r++) {
    rank_state *rs = &j->r[r];
    g_array_free(rs->actions, TRUE);
    g_array_free(rs->ops, TRUE);
    g_array_free(rs->records, TRUE);
    g_array_free(rs->refs, TRUE);
    g_array_free(rs->event_record, TRUE);
    for (int s = 0; s < GT_N_STREAMS; s++) {
      g_array_free(rs->stream_ops[s], TRUE);
      g_array_free(rs->pending[s], TRUE);
    }
    for (int t = 0; t < GT_MAX_THREADS; t++)
      g_array_free(rs->thread_acts[t], TRUE);
    for (int f = 0; f < GT_MAX_FLAGS; f++)
      if (rs->signals[f])
        g_array_free(rs->signals[f], TRUE);
    g_array_free(rs->sync_ops, TRUE);
  }
  for (guint i = 0; i < j->groups->len; i++) {
    group *g = g_ptr_array_index(j->groups, i);
    g_free(g->name);
    g_free(g->desc);
    g_array_free(g->insts, TRUE);
    g_array_free(g->inst_ops, TRUE);
    g_free(g);
  }
  g_ptr_array_free(j->groups, TRUE);
  if (j->ready) {
    g_array_free(j->ready, TRUE);
    g_array_free(j->active, TRUE);
  }
  for (int a = 0; a < GT_MAX_RANKS; a++)
    for (int b = 0; b < GT_MAX_RANKS; b++) {
      if (j->sends[a][b])
        g_array_free(j->sends[a][b], TRUE);
      if (j->recvs[a][b])
        g_array_free(j->recvs[a][b], TRUE);
    }
  g_string_chunk_free(j->names);
  g_free(j->build_error);
  g_free(j);
}

int gt_job_add_group(gt_job *j, const char *desc, const int *ranks, int n)
{
  g_return_val_if_fail(j && !j->ran && n >= 1 && n <= j->n, -1);
  for (int i = 0; i < n; i++)
    g_return_val_if_fail(ranks[i] >= 0 && ranks[i] < j->n && (i == 0 || ranks[i] > ranks[i - 1]), -1);
  group *g = g_new0(group, 1);
  g->name = g_strdup_printf("%u", j->groups->len);
  g->desc = g_strdup(desc ? desc : "undefined");
  g->n = n;
  for (int r = 0; r < GT_MAX_RANKS; r++)
    g->index_of[r] = -1;
  for (int i = 0; i < n; i++) {
    g->ranks[i] = ranks[i];
    g->index_of[ranks[i]] = i;
  }
  g->insts = g_array_new(FALSE, FALSE, sizeof(instance));
  g->inst_ops = g_array_new(FALSE, FALSE, sizeof(int32_t));
  g_ptr_array_add(j->groups, g);
  return (int)j->groups->len - 1;
}

static rank_state *rank_of(gt_job *j, int rank)
{
  return j && !j->ran && rank >= 0 && rank < j->n ? &j->r[rank] : NULL;
}

static int add_action(rank_state *rs, action_kind kind, int s, int32_t arg, int64_t dur)
{
  action a = { .kind = (uint8_t)kind, .stream = (uint8_t)(s < 0 ? 0 : s), .thread = (uint8_t)rs->cur_thread,
               .arg = arg, .event = -1, .dur_ns = dur, .start_ns = -1, .end_ns = -1 };
  if (kind == A_LAUNCH || kind == A_RECORD || kind == A_WAIT || kind == A_SYNC)
    a.corr = rs->next_corr++;
  if (kind == A_LAUNCH)
    a.module = rs->cur_module;
  g_array_append_val(rs->actions, a);
  int32_t idx = (int32_t)rs->actions->len - 1;
  g_array_append_val(rs->thread_acts[rs->cur_thread], idx);
  return idx;
}

int gt_cpu(gt_job *j, int rank, int64_t ns)
{
  rank_state *rs = rank_of(j, rank);
  g_return_val_if_fail(rs && ns >= 0, -1);
  return add_action(rs, A_CPU, -1, -1, ns);
}

/* Appends an op launched on stream index s: it waits for the records
 * waited on the stream since the previous op. */
static int add_op(rank_state *rs, int s, op *o)
{
  o->stream = (uint8_t)s;
  o->prev = rs->last_op[s];
  o->wait_first = rs->refs->len;
  o->wait_n = rs->pending[s]->len;
  g_array_append_vals(rs->refs, rs->pending[s]->data, rs->pending[s]->len);
  g_array_set_size(rs->pending[s], 0);
  o->start_ns = o->end_ns = -1;
  int32_t idx = (int32_t)rs->ops->len;
  /* Inside a CUDA graph the op is launched by the graph's one call. */
  o->action = rs->graph_action >= 0 ? rs->graph_action : add_action(rs, A_LAUNCH, s, idx, 0);
  g_array_append_val(rs->ops, *o);
  g_array_append_val(rs->stream_ops[s], idx);
  rs->last_op[s] = idx;
  return idx;
}

int gt_launch_compute(gt_job *j, int rank, int stream, const char *name, int64_t ns)
{
  rank_state *rs = rank_of(j, rank);
  int s = stream_index(stream);
  g_return_val_if_fail(rs && s >= 0 && name && ns >= 0, -1);
  op o = { .kind = GT_COMPUTE, .group = -1, .peer = -1, .inst = -1, .name = g_string_chunk_insert_const(j->names, name),
           .dur_ns = ns };
  return add_op(rs, s, &o);
}

static const char *kind_label(gt_kernel_kind k)
{
  static const char *const l[] = { "compute", "all_reduce", "all_gather", "reduce_scatter", "send", "recv", "memcpy",
                                    "all_to_all" };
  return k >= 0 && k <= GT_ALL_TO_ALL ? l[k] : "?";
}

int gt_launch_coll(gt_job *j, int rank, int stream, gt_kernel_kind kind, uint64_t bytes, int group_no)
{
  rank_state *rs = rank_of(j, rank);
  int s = stream_index(stream);
  g_return_val_if_fail(rs && s >= 0 && group_no >= 0 && (guint)group_no < j->groups->len, -1);
  g_return_val_if_fail(kind == GT_ALL_REDUCE || kind == GT_ALL_GATHER || kind == GT_REDUCE_SCATTER ||
                       kind == GT_ALL_TO_ALL, -1);
  group *g = g_ptr_array_index(j->groups, group_no);
  int mi = g->index_of[rank];
  if (mi < 0) {
    build_fail(j, "rank %d launches a %s in group %d (%s), which it is not a member of", rank, kind_label(kind),
               group_no, g->desc);
    return gt_launch_compute(j, rank, stream, "invalid", 0);
  }
  uint64_t unit = (uint64_t)GT_BF16_BYTES * (kind == GT_REDUCE_SCATTER || kind == GT_ALL_TO_ALL ? (uint64_t)g->n : 1);
  if (bytes == 0 || bytes % unit)
    build_fail(j, "rank %d: %s of %" G_GUINT64_FORMAT " B in group %d: the size must be a positive multiple of %"
               G_GUINT64_FORMAT " B (bf16 elements%s)", rank, kind_label(kind), bytes, group_no, unit,
               kind == GT_REDUCE_SCATTER || kind == GT_ALL_TO_ALL ? ", times the group size" : "");
  int k = g->coll_count[mi]++;
  if ((guint)k == g->insts->len) {
    instance in = { .kind = (uint8_t)kind, .bytes = bytes, .started = 0, .max_start = -1 };
    g_array_append_val(g->insts, in);
    int32_t none = -1;
    for (int i = 0; i < g->n; i++)
      g_array_append_val(g->inst_ops, none);
  } else {
    const instance *in = &g_array_index(g->insts, instance, k);
    if (in->kind != kind || in->bytes != bytes)
      build_fail(j, "collective #%d of group %d (%s): rank %d launches %s of %" G_GUINT64_FORMAT " B but another "
                 "member %s of %" G_GUINT64_FORMAT " B", k + 1, group_no, g->desc, rank, kind_label(kind), bytes,
                 kind_label((gt_kernel_kind)in->kind), in->bytes);
  }
  op o = { .kind = (uint8_t)kind, .group = group_no, .peer = -1, .inst = k, .seq = k + 1, .bytes = bytes };
  int idx = add_op(rs, s, &o);
  g_array_index(g->inst_ops, int32_t, (guint)k * (guint)g->n + (guint)mi) = idx;
  return idx;
}

int gt_launch_coll_coalesced(gt_job *j, int rank, int stream, gt_kernel_kind kind, const uint64_t *bytes, int n,
                             int group_no)
{
  g_return_val_if_fail(bytes && n >= 1, -1);
  uint64_t sum = 0;
  for (int i = 0; i < n; i++)
    sum += bytes[i];
  int oi = gt_launch_coll(j, rank, stream, kind, sum, group_no);
  rank_state *rs = rank_of(j, rank);
  if (oi >= 0 && rs)
    g_array_index(rs->ops, op, oi).coalesced = n;
  return oi;
}

int gt_launch_p2p(gt_job *j, int rank, int stream, gt_kernel_kind kind, int peer, uint64_t bytes, int group_no)
{
  rank_state *rs = rank_of(j, rank);
  int s = stream_index(stream);
  g_return_val_if_fail(rs && s >= 0 && (kind == GT_SEND || kind == GT_RECV), -1);
  g_return_val_if_fail(peer >= 0 && peer < j->n && peer != rank, -1);
  g_return_val_if_fail(group_no >= 0 && (guint)group_no < j->groups->len, -1);
  group *g = g_ptr_array_index(j->groups, group_no);
  if (g->index_of[rank] < 0 || g->index_of[peer] < 0)
    build_fail(j, "rank %d: %s with rank %d in group %d (%s), which does not hold both", rank, kind_label(kind), peer,
               group_no, g->desc);
  if (bytes == 0 || bytes % GT_BF16_BYTES)
    build_fail(j, "rank %d: %s of %" G_GUINT64_FORMAT " B: the size must be a positive even number (bf16)", rank,
               kind_label(kind), bytes);
  int a = kind == GT_SEND ? rank : peer, b = kind == GT_SEND ? peer : rank;
  GArray **list = kind == GT_SEND ? &j->sends[a][b] : &j->recvs[a][b];
  if (!*list)
    *list = g_array_new(FALSE, FALSE, sizeof(int32_t));
  int mi = g->index_of[rank] >= 0 ? g->index_of[rank] : 0;
  op o = { .kind = (uint8_t)kind, .group = group_no, .peer = peer, .inst = (int32_t)(*list)->len,
           .seq = ++g->p2p_count[mi], .bytes = bytes };
  int idx = add_op(rs, s, &o);
  int32_t v = idx;
  g_array_append_val(*list, v);
  return idx;
}

static int32_t *event_slot(rank_state *rs, int event)
{
  while (rs->event_record->len <= (guint)event) {
    int32_t none = -1;
    g_array_append_val(rs->event_record, none);
  }
  return &g_array_index(rs->event_record, int32_t, event);
}

int gt_record(gt_job *j, int rank, int stream, int event)
{
  rank_state *rs = rank_of(j, rank);
  int s = stream_index(stream);
  g_return_val_if_fail(rs && s >= 0 && event >= 0 && event <= GT_MAX_EVENT, -1);
  record rec = { .stream = s, .after_op = rs->last_op[s], .wait_first = rs->refs->len,
                 .wait_n = rs->pending[s]->len, .reach_ns = -1 };
  g_array_append_vals(rs->refs, rs->pending[s]->data, rs->pending[s]->len);
  int32_t ri = (int32_t)rs->records->len;
  rec.action = add_action(rs, A_RECORD, s, ri, 0);
  g_array_index(rs->actions, action, rec.action).event = event;
  g_array_append_val(rs->records, rec);
  *event_slot(rs, event) = ri;
  return rec.action;
}

int gt_wait(gt_job *j, int rank, int stream, int event)
{
  rank_state *rs = rank_of(j, rank);
  int s = stream_index(stream);
  g_return_val_if_fail(rs && s >= 0 && event >= 0 && event <= GT_MAX_EVENT, -1);
  int32_t ri = *event_slot(rs, event);
  if (ri >= 0)
    g_array_append_val(rs->pending[s], ri);
  int a = add_action(rs, A_WAIT, s, ri, 0);
  g_array_index(rs->actions, action, a).event = event;
  return a;
}

/* A host synchronisation waiting for the last op appended so far on
 * stream index s, or on every stream when s < 0. */
static int add_sync(rank_state *rs, int s)
{
  uint32_t first = rs->sync_ops->len;
  for (int q = 0; q < GT_N_STREAMS; q++)
    if ((s < 0 || q == s) && rs->last_op[q] >= 0)
      g_array_append_val(rs->sync_ops, rs->last_op[q]);
  int a = add_action(rs, A_SYNC, s, s < 0 ? -1 : s, 0);
  g_array_index(rs->actions, action, a).sync_first = first;
  g_array_index(rs->actions, action, a).sync_n = rs->sync_ops->len - first;
  return a;
}

int gt_device_sync(gt_job *j, int rank)
{
  rank_state *rs = rank_of(j, rank);
  g_return_val_if_fail(rs, -1);
  return add_sync(rs, -1);
}

int gt_stream_sync(gt_job *j, int rank, int stream)
{
  rank_state *rs = rank_of(j, rank);
  int s = stream_index(stream);
  g_return_val_if_fail(rs && s >= 0, -1);
  return add_sync(rs, s);
}

int gt_launch_copy(gt_job *j, int rank, int stream, int64_t ns)
{
  rank_state *rs = rank_of(j, rank);
  int s = stream_index(stream);
  g_return_val_if_fail(rs && s >= 0 && ns >= 0, -1);
  op o = { .kind = GT_MEMCPY, .group = -1, .peer = -1, .inst = -1, .name = "Memcpy DtoH (Device -> Pinned)",
           .dur_ns = ns };
  return add_op(rs, s, &o);
}

int gt_graph_begin(gt_job *j, int rank)
{
  rank_state *rs = rank_of(j, rank);
  g_return_val_if_fail(rs && rs->graph_action < 0, -1);
  rs->graph_action = add_action(rs, A_LAUNCH, -1, -1, 0);
  return rs->graph_action;
}

void gt_graph_end(gt_job *j, int rank)
{
  rank_state *rs = rank_of(j, rank);
  g_return_if_fail(rs && rs->graph_action >= 0);
  rs->graph_action = -1;
}

void gt_job_set_thread(gt_job *j, int rank, int thread)
{
  rank_state *rs = rank_of(j, rank);
  g_return_if_fail(rs && thread >= 0 && thread < GT_MAX_THREADS);
  rs->cur_thread = thread;
}

void gt_job_set_module(gt_job *j, int rank, const char *path)
{
  rank_state *rs = rank_of(j, rank);
  g_return_if_fail(rs);
  rs->cur_module = path && path[0] ? g_string_chunk_insert_const(j->names, path) : NULL;
}

int gt_signal(gt_job *j, int rank, int flag)
{
  rank_state *rs = rank_of(j, rank);
  g_return_val_if_fail(rs && flag >= 0 && flag < GT_MAX_FLAGS, -1);
  int a = add_action(rs, A_SIGNAL, -1, -1, 0);
  g_array_index(rs->actions, action, a).event = flag;
  if (!rs->signals[flag])
    rs->signals[flag] = g_array_new(FALSE, FALSE, sizeof(int32_t));
  int32_t v = a;
  g_array_append_val(rs->signals[flag], v);
  return a;
}

int gt_join(gt_job *j, int rank, int flag)
{
  rank_state *rs = rank_of(j, rank);
  g_return_val_if_fail(rs && flag >= 0 && flag < GT_MAX_FLAGS, -1);
  /* arg: the join's ordinal on the flag; the signal is looked up when run. */
  int a = add_action(rs, A_JOIN, -1, rs->joins[flag]++, 0);
  g_array_index(rs->actions, action, a).event = flag;
  return a;
}

int gt_step_begin(gt_job *j, int rank, int step)
{
  rank_state *rs = rank_of(j, rank);
  g_return_val_if_fail(rs && step >= 0, -1);
  return add_action(rs, A_STEP_BEGIN, -1, step, 0);
}

int gt_step_end(gt_job *j, int rank, int step)
{
  rank_state *rs = rank_of(j, rank);
  g_return_val_if_fail(rs && step >= 0, -1);
  return add_action(rs, A_STEP_END, -1, step, 0);
}

/* ---- running ---- */

static action *act_at(rank_state *rs, int32_t i) { return &g_array_index(rs->actions, action, i); }
static op *op_at(rank_state *rs, int32_t i) { return &g_array_index(rs->ops, op, i); }
static group *group_at(const gt_job *j, int32_t i) { return g_ptr_array_index(j->groups, i); }

/* When record ri is reached, or -1 while that is unknown.  A record's
 * waits refer to records executed before it, so the recursion ends. */
static int64_t record_reach(gt_job *j, rank_state *rs, int32_t ri)
{
  record *rec = &g_array_index(rs->records, record, ri);
  if (rec->reach_ns >= 0)
    return rec->reach_ns;
  int64_t t = act_at(rs, rec->action)->start_ns;
  if (t < 0)
    return -1;
  if (rec->after_op >= 0) {
    int64_t e = op_at(rs, rec->after_op)->end_ns;
    if (e < 0)
      return -1;
    t = MAX(t, e);
  }
  for (uint32_t w = 0; w < rec->wait_n; w++) {
    int64_t e = record_reach(j, rs, g_array_index(rs->refs, int32_t, rec->wait_first + w));
    if (e < 0)
      return -1;
    t = MAX(t, e + j->p.g_event_ns);
  }
  rec->reach_ns = t;
  return t;
}

/* One tier (gpus_per_node 0): every pair shares the node.  O(1). */
gboolean gt_same_node(const gt_job *j, int a, int b)
{
  return j->p.gpus_per_node <= 0 || a / j->p.gpus_per_node == b / j->p.gpus_per_node;
}

/* The scale-up tier's alpha and beta when every member shares the first
 * member's node, else the scale-out tier's.  O(members). */
void gt_group_tier(const gt_job *j, const group *g, int64_t *alpha, uint64_t *beta)
{
  gboolean inside = TRUE;
  for (int i = 1; i < g->n; i++)
    inside = inside && gt_same_node(j, g->ranks[0], g->ranks[i]);
  *alpha = inside ? j->p.alpha_ns : j->p.alpha_out_ns;
  *beta = inside ? j->beta : j->beta_out;
}

/* The op ended on every member of collective instance k of group gi once
 * the last member started: max over members of the start, plus T on the
 * group's tier. */
static void coll_started(gt_job *j, int32_t gi, int32_t k, int64_t start)
{
  group *g = group_at(j, gi);
  instance *in = &g_array_index(g->insts, instance, k);
  in->started++;
  in->max_start = MAX(in->max_start, start);
  if (in->started < g->n)
    return;
  if (j->p.port_contention) {
    gt_ports_ready(j, -1, gi, k, in->max_start);
    return;
  }
  int64_t alpha;
  uint64_t beta;
  gt_group_tier(j, g, &alpha, &beta);
  int64_t end = in->max_start + gt_coll_ns((gt_kernel_kind)in->kind, in->bytes, g->n, alpha, beta);
  for (int i = 0; i < g->n; i++) {
    int32_t oi = g_array_index(g->inst_ops, int32_t, (guint)k * (guint)g->n + (guint)i);
    op_at(&j->r[g->ranks[i]], oi)->end_ns = end;
  }
}

/* The partner of a send or recv, or NULL when it has none (yet). */
static op *p2p_partner(gt_job *j, int rank, const op *o, int *partner_rank)
{
  int a = o->kind == GT_SEND ? rank : o->peer, b = o->kind == GT_SEND ? o->peer : rank;
  GArray *other = o->kind == GT_SEND ? j->recvs[a][b] : j->sends[a][b];
  *partner_rank = o->peer;
  if (!other || (guint)o->inst >= other->len)
    return NULL;
  return op_at(&j->r[o->peer], g_array_index(other, int32_t, o->inst));
}

/* Computes op oi's start when its inputs are known (the stream rules of
 * doc/ground-truth.md §1); TRUE when it did. */
static gboolean try_start(gt_job *j, int rank, int32_t oi)
{
  rank_state *rs = &j->r[rank];
  op *o = op_at(rs, oi);
  const action *la = act_at(rs, o->action);
  if (la->start_ns < 0)
    return FALSE; /* not launched yet */
  int64_t eligible = la->start_ns + j->p.l_submit_ns;
  int64_t t = eligible;
  if (o->prev >= 0) {
    int64_t pe = op_at(rs, o->prev)->end_ns;
    t = MAX(t, pe >= eligible ? pe + j->p.g_stream_ns : pe);
  }
  for (uint32_t w = 0; w < o->wait_n; w++) {
    int64_t reach = record_reach(j, rs, g_array_index(rs->refs, int32_t, o->wait_first + w));
    if (reach < 0)
      return FALSE;
    t = MAX(t, reach + j->p.g_event_ns);
  }
  o->start_ns = t;
  switch ((gt_kernel_kind)o->kind) {
  case GT_COMPUTE:
  case GT_MEMCPY:
    o->end_ns = t + o->dur_ns;
    break;
  case GT_ALL_REDUCE:
  case GT_ALL_GATHER:
  case GT_REDUCE_SCATTER:
  case GT_ALL_TO_ALL:
    coll_started(j, o->group, o->inst, t);
    break;
  case GT_SEND:
  case GT_RECV: {
    int pr;
    op *q = p2p_partner(j, rank, o, &pr);
    if (q && q->start_ns >= 0 && j->p.port_contention) { /* the sender's op, then the receiver's */
      int32_t qi = (int32_t)(q - op_at(&j->r[pr], 0));
      gboolean send = o->kind == GT_SEND;
      gt_ports_ready(j, send ? rank : pr, send ? oi : qi, send ? qi : oi, MAX(t, q->start_ns));
    } else if (q && q->start_ns >= 0) {
      gboolean inside = gt_same_node(j, rank, pr);
      int64_t end = MAX(t, q->start_ns) + gt_p2p_ns(o->bytes, inside ? j->p.alpha_ns : j->p.alpha_out_ns,
                                                    inside ? j->beta : j->beta_out);
      o->end_ns = q->end_ns = end;
    }
    break;
  }
  }
  return TRUE;
}

/* Resolves stream s of rank as far as possible; TRUE on any change. */
static gboolean advance_stream(gt_job *j, int rank, int s)
{
  rank_state *rs = &j->r[rank];
  GArray *so = rs->stream_ops[s];
  gboolean progress = FALSE;
  while (rs->cursor[s] < so->len) {
    int32_t oi = g_array_index(so, int32_t, rs->cursor[s]);
    op *o = op_at(rs, oi);
    if (o->start_ns < 0) {
      if (!try_start(j, rank, oi))
        break;
      progress = TRUE;
    }
    if (o->end_ns < 0)
      break;
    rs->cursor[s]++;
    progress = TRUE;
  }
  return progress;
}

/* When action a of rank may end, or -1 while that is unknown: a sync
 * when the ops it waits for have ended (ops of a stream end in order, so
 * the last one appended before it ends last), a join when its signal has
 * run.  now: the thread's time when it starts. */
static int64_t action_end(gt_job *j, rank_state *rs, const action *a, int64_t now)
{
  const gt_params *p = &j->p;
  switch ((action_kind)a->kind) {
  case A_CPU: return now + a->dur_ns;
  case A_LAUNCH: return now + p->l_call_ns;
  case A_RECORD:
  case A_WAIT: return now + p->l_small_ns;
  case A_SYNC: {
    int64_t gpu = now;
    for (uint32_t k = 0; k < a->sync_n; k++) {
      int64_t e = op_at(rs, g_array_index(rs->sync_ops, int32_t, a->sync_first + k))->end_ns;
      if (e < 0)
        return -1;
      gpu = MAX(gpu, e);
    }
    return gpu + p->r_sync_ns;
  }
  case A_JOIN: {
    GArray *sig = rs->signals[a->event];
    if (!sig || (guint)a->arg >= sig->len)
      return -1; /* never signalled: reported as a deadlock */
    int64_t e = act_at(rs, g_array_index(sig, int32_t, a->arg))->end_ns;
    return e < 0 ? -1 : MAX(now, e + p->r_join_ns);
  }
  case A_SIGNAL:
  case A_STEP_BEGIN:
  case A_STEP_END: return now;
  }
  return now;
}

/* Executes each of rank's CPU threads until it blocks; TRUE on any change. */
static gboolean advance_cpu(gt_job *j, int rank)
{
  rank_state *rs = &j->r[rank];
  gboolean progress = FALSE;
  for (int t = 0; t < GT_MAX_THREADS; t++) {
    GArray *acts = rs->thread_acts[t];
    while (rs->pc[t] < acts->len) {
      action *a = act_at(rs, g_array_index(acts, int32_t, rs->pc[t]));
      int64_t end = action_end(j, rs, a, rs->now[t]);
      if (end < 0)
        break;
      a->start_ns = rs->now[t];
      a->end_ns = end;
      rs->now[t] = end;
      rs->pc[t]++;
      progress = TRUE;
    }
  }
  return progress;
}

static void describe_op(const gt_job *j, int rank, const op *o, GString *out)
{
  if (o->kind == GT_COMPUTE) {
    g_string_append_printf(out, "kernel '%s'", o->name);
  } else if (o->kind == GT_SEND || o->kind == GT_RECV) {
    g_string_append_printf(out, "%s #%d %s rank %d", kind_label((gt_kernel_kind)o->kind), o->inst + 1,
                           o->kind == GT_SEND ? "to" : "from", o->peer);
  } else {
    const group *g = group_at(j, o->group);
    g_string_append_printf(out, "%s #%d of group %s (%s)", kind_label((gt_kernel_kind)o->kind), o->inst + 1, g->name,
                           g->desc);
  }
}

/* Why the first unresolved op of a stream cannot proceed (one line). */
static void describe_blocked_op(gt_job *j, int rank, int s, GString *msg)
{
  rank_state *rs = &j->r[rank];
  int32_t oi = g_array_index(rs->stream_ops[s], int32_t, rs->cursor[s]);
  op *o = op_at(rs, oi);
  if (act_at(rs, o->action)->start_ns < 0)
    return; /* not launched: the CPU line says why */
  g_string_append_printf(msg, "\n  rank %d stream %d: ", rank, stream_id[s]);
  describe_op(j, rank, o, msg);
  if (o->start_ns < 0) {
    for (uint32_t w = 0; w < o->wait_n; w++) {
      int32_t ri = g_array_index(rs->refs, int32_t, o->wait_first + w);
      const record *rec = &g_array_index(rs->records, record, ri);
      if (record_reach(j, rs, ri) >= 0)
        continue;
      g_string_append_printf(msg, " waits for event %d recorded on stream %d",
                             act_at(rs, rec->action)->event, stream_id[rec->stream]);
      if (rec->after_op >= 0) {
        g_string_append(msg, " behind ");
        describe_op(j, rank, op_at(rs, rec->after_op), msg);
      }
      return;
    }
    g_string_append(msg, " cannot start");
    return;
  }
  if (o->kind == GT_SEND || o->kind == GT_RECV) {
    int pr;
    op *q = p2p_partner(j, rank, o, &pr);
    if (!q)
      g_string_append_printf(msg, " has no matching %s on rank %d", o->kind == GT_SEND ? "recv" : "send", pr);
    else
      g_string_append_printf(msg, " waits for its %s on rank %d to start", o->kind == GT_SEND ? "recv" : "send", pr);
    return;
  }
  const group *g = group_at(j, o->group);
  g_string_append(msg, " waits for rank(s)");
  for (int i = 0; i < g->n; i++) {
    int32_t qi = g_array_index(g->inst_ops, int32_t, (guint)o->inst * (guint)g->n + (guint)i);
    if (qi < 0)
      g_string_append_printf(msg, " %d (never launches it)", g->ranks[i]);
    else if (op_at(&j->r[g->ranks[i]], qi)->start_ns < 0)
      g_string_append_printf(msg, " %d", g->ranks[i]);
  }
}

/* The programs were built in the order their calls run: on every stream
 * the ops launch in the order they were appended (the FIFO order the model
 * fixed while building), every record, wait and sync starts after the
 * launch of the last op of its stream it was built after and before the
 * next one, and every wait runs after the record it refers to.  With one
 * thread per rank this always holds; several threads must be written in
 * time order.  O(actions + ops). */
static gboolean check_order(gt_job *j, GError **error)
{
  for (int r = 0; r < j->n; r++) {
    rank_state *rs = &j->r[r];
    for (int s = 0; s < GT_N_STREAMS; s++) {
      GArray *so = rs->stream_ops[s];
      for (guint k = 1; k < so->len; k++) {
        int64_t a = act_at(rs, op_at(rs, g_array_index(so, int32_t, k - 1))->action)->start_ns;
        int64_t b = act_at(rs, op_at(rs, g_array_index(so, int32_t, k))->action)->start_ns;
        if (b < a) {
          g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "invalid program: rank %d stream %d: op %u launches at "
                      "%" G_GINT64_FORMAT " ns, before op %u appended before it (%" G_GINT64_FORMAT " ns); append "
                      "ops in the order their launches run", r, stream_id[s], k, b, k - 1, a);
          return FALSE;
        }
      }
    }
    for (guint i = 0; i < rs->actions->len; i++) {
      const action *a = act_at(rs, (int32_t)i);
      int32_t before = -1;
      if (a->kind == A_RECORD)
        before = g_array_index(rs->records, record, a->arg).after_op;
      else if (a->kind == A_SYNC && a->arg >= 0 && a->sync_n)
        before = g_array_index(rs->sync_ops, int32_t, a->sync_first);
      if (a->kind == A_WAIT && a->arg >= 0 &&
          act_at(rs, g_array_index(rs->records, record, a->arg).action)->start_ns > a->start_ns) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "invalid program: rank %d: a wait on event %d runs before "
                    "the record it was appended after", r, a->event);
        return FALSE;
      }
      if (before >= 0 && act_at(rs, op_at(rs, before)->action)->start_ns > a->start_ns) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "invalid program: rank %d: a %s runs before the launch of "
                    "the op it was appended after", r, a->kind == A_RECORD ? "record" : "stream sync");
        return FALSE;
      }
    }
  }
  return TRUE;
}

gboolean gt_job_run(gt_job *j, GError **error)
{
  g_return_val_if_fail(j && !j->ran, FALSE);
  j->ran = TRUE;
  if (j->build_error) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "invalid program: %s", j->build_error);
    return FALSE;
  }
  for (;;) {
    gboolean progress = FALSE;
    for (int r = 0; r < j->n; r++)
      progress |= advance_cpu(j, r);
    for (int r = 0; r < j->n; r++)
      for (int s = 0; s < GT_N_STREAMS; s++)
        progress |= advance_stream(j, r, s);
    if (!progress && !gt_ports_advance(j))
      break;
  }
  GString *msg = g_string_new("");
  for (int r = 0; r < j->n; r++) {
    rank_state *rs = &j->r[r];
    for (int t = 0; t < GT_MAX_THREADS; t++) {
      GArray *acts = rs->thread_acts[t];
      if (rs->pc[t] >= acts->len)
        continue;
      const action *a = act_at(rs, g_array_index(acts, int32_t, rs->pc[t]));
      char who[32];
      g_snprintf(who, sizeof who, t ? "CPU thread %d" : "CPU", t);
      if (a->kind == A_JOIN)
        g_string_append_printf(msg, "\n  rank %d %s: blocked in join #%d on flag %d (action %u of its %u), "
                               "which no signal %s", r, who, a->arg + 1, a->event, rs->pc[t], acts->len,
                               rs->signals[a->event] && (guint)a->arg < rs->signals[a->event]->len
                                 ? "that can run releases" : "of that number exists to release");
      else
        g_string_append_printf(msg, "\n  rank %d %s: blocked in %s (action %u of %u) until its GPU "
                               "work ends", r, who, a->arg < 0 ? "cudaDeviceSynchronize" : "cudaStreamSynchronize",
                               rs->pc[t], acts->len);
    }
    for (int s = 0; s < GT_N_STREAMS; s++)
      if (rs->cursor[s] < rs->stream_ops[s]->len)
        describe_blocked_op(j, r, s, msg);
  }
  if (msg->len) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_DEADLOCK, "deadlock: the programs cannot finish:%s", msg->str);
    g_string_free(msg, TRUE);
    return FALSE;
  }
  g_string_free(msg, TRUE);
  return check_order(j, error);
}

gt_op_times gt_job_op(const gt_job *j, int rank, int oi)
{
  gt_op_times t = { 0 };
  g_return_val_if_fail(j && rank >= 0 && rank < j->n && oi >= 0 && (guint)oi < j->r[rank].ops->len, t);
  rank_state *rs = (rank_state *)&j->r[rank];
  const op *o = op_at(rs, oi);
  t.stream = stream_id[o->stream];
  t.kind = (gt_kernel_kind)o->kind;
  t.launch_ns = act_at(rs, o->action)->start_ns;
  t.eligible_ns = t.launch_ns + j->p.l_submit_ns;
  t.start_ns = o->start_ns;
  t.end_ns = o->end_ns;
  return t;
}

void gt_job_action(const gt_job *j, int rank, int ai, int64_t *start_ns, int64_t *end_ns)
{
  g_return_if_fail(j && rank >= 0 && rank < j->n && ai >= 0 && (guint)ai < j->r[rank].actions->len);
  const action *a = &g_array_index(j->r[rank].actions, action, ai);
  *start_ns = a->start_ns;
  *end_ns = a->end_ns;
}

gboolean gt_job_step(const gt_job *j, int rank, int step, int64_t *start_ns, int64_t *end_ns)
{
  g_return_val_if_fail(j && rank >= 0 && rank < j->n, FALSE);
  const GArray *acts = j->r[rank].actions;
  int64_t b = -1;
  for (guint i = 0; i < acts->len; i++) {
    const action *a = &g_array_index(acts, action, i);
    if (a->kind == A_STEP_BEGIN && a->arg == step)
      b = a->start_ns;
    else if (a->kind == A_STEP_END && a->arg == step && b >= 0) {
      *start_ns = b;
      *end_ns = a->end_ns;
      return TRUE;
    }
  }
  return FALSE;
}

int gt_job_ranks(const gt_job *j) { return j->n; }

uint64_t gt_job_gpu_ops(const gt_job *j)
{
  uint64_t n = 0;
  for (int r = 0; r < j->n; r++)
    n += j->r[r].ops->len;
  return n;
}

/* ---- traces ---- */

/* ns on the model's clock as Kineto microseconds with three decimals. */
static void put_ts(GString *s, int64_t ns)
{
  int64_t t = GT_TS_ORIGIN_NS + ns;
  g_string_append_printf(s, "%" G_GINT64_FORMAT ".%03d", t / 1000, (int)(t % 1000));
}

static void put_dur(GString *s, int64_t ns)
{
  g_string_append_printf(s, "%" G_GINT64_FORMAT ".%03d", ns / 1000, (int)(ns % 1000));
}

static void put_ranks(GString *s, const group *g)
{
  g_string_append_c(s, '[');
  for (int i = 0; i < g->n; i++)
    g_string_append_printf(s, "%s%d", i ? ", " : "", g->ranks[i]);
  g_string_append_c(s, ']');
}

/* Lanes order events with equal timestamps: a step annotation before the
 * calls it encloses, calls before the GPU activity they cause. */
enum { LANE_STEP, LANE_MODULE, LANE_OP, LANE_CALL, LANE_SYNC, LANE_KERNEL };

typedef struct {
  int64_t ts, dur;
  int lane;
  int32_t idx;             /* step: the begin action; call / sync: the action; kernel: the op */
  int32_t aux;             /* step: the end action */
} trace_event;

static int cmp_trace_event(const void *pa, const void *pb)
{
  const trace_event *a = pa, *b = pb;
  if (a->ts != b->ts)
    return a->ts < b->ts ? -1 : 1;
  if (a->lane != b->lane)
    return a->lane < b->lane ? -1 : 1;
  if (a->dur != b->dur)
    return a->dur > b->dur ? -1 : 1; /* enclosing spans first */
  return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static const char *runtime_name(const gt_job *j, int rank, const action *a)
{
  switch ((action_kind)a->kind) {
  case A_LAUNCH:
    if (a->arg < 0)
      return "cudaGraphLaunch";
    return g_array_index(j->r[rank].ops, op, a->arg).kind == GT_MEMCPY ? "cudaMemcpyAsync" : "cudaLaunchKernel";
  case A_RECORD: return "cudaEventRecord";
  case A_WAIT: return "cudaStreamWaitEvent";
  default: return a->arg < 0 ? "cudaDeviceSynchronize" : "cudaStreamSynchronize";
  }
}

/* The communication args of an NCCL kernel, which PyTorch also writes on
 * the record_param_comms CPU op around its launch. */
static void put_comm_args(const gt_job *j, int rank, const op *o, GString *s)
{
  static const char *const cname[] = { NULL, "allreduce", "_allgather_base", "_reduce_scatter_base", "send", "recv",
                                       NULL, "all_to_all_single" };
  static const char *const coalesced_name[] = { NULL, "allreduce_coalesced", "allgather_into_tensor_coalesced",
                                                "reduce_scatter_tensor_coalesced", "send", "recv", NULL,
                                                "all_to_all_single" };
  const group *g = group_at(j, o->group);
  uint64_t in = o->bytes / GT_BF16_BYTES, out = in;
  if (o->kind == GT_ALL_GATHER)
    out = in * (uint64_t)g->n;
  else if (o->kind == GT_REDUCE_SCATTER)
    out = in / (uint64_t)g->n;
  g_string_append_printf(s, ", \"Collective name\": \"%s\", \"In msg nelems\": %" G_GUINT64_FORMAT
                         ", \"Out msg nelems\": %" G_GUINT64_FORMAT ", \"Group size\": %d, \"dtype\": \"BFloat16\", "
                         "\"In split size\": \"[]\", \"Out split size\": \"[]\", \"Process Group Name\": \"%s\", "
                         "\"Process Group Description\": \"%s\", \"Process Group Ranks\": \"",
                         o->coalesced ? coalesced_name[o->kind] : cname[o->kind], in, out,
                         g->n, g->name, g->desc);
  put_ranks(s, g);
  g_string_append_printf(s, "\", \"Rank\": %d", rank);
  if (o->kind == GT_SEND || o->kind == GT_RECV)
    g_string_append_printf(s, ", \"Src Rank\": %d, \"Dst Rank\": %d", o->kind == GT_SEND ? rank : o->peer,
                           o->kind == GT_SEND ? o->peer : rank);
  g_string_append_printf(s, ", \"Seq\": %d", o->seq);
}

static void put_kernel(const gt_job *j, int rank, const op *o, const action *la, GString *s)
{
  static const char *const kname[] = {
    NULL, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
    "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
    "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
    "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)",
    "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)", NULL,
    "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)",
  };
  int sid = stream_id[o->stream];
  g_string_append_printf(s, "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": ", o->kind == GT_MEMCPY ? "gpu_memcpy" : "kernel");
  if (o->kind == GT_COMPUTE || o->kind == GT_MEMCPY) {
    g_string_append_c(s, '"');
    g_string_append(s, o->name); /* scenario and test names need no escaping */
    g_string_append_c(s, '"');
  } else {
    g_string_append_printf(s, "\"%s\"", kname[o->kind]);
  }
  g_string_append_printf(s, ", \"pid\": 0, \"tid\": %d, \"ts\": ", sid);
  put_ts(s, o->start_ns);
  g_string_append(s, ", \"dur\": ");
  put_dur(s, o->end_ns - o->start_ns);
  g_string_append_printf(s, ", \"args\": {\"device\": 0, \"stream\": %d, \"correlation\": %" G_GINT64_FORMAT
                         ", \"External id\": %" G_GINT64_FORMAT, sid, la->corr, la->corr);
  if (o->kind != GT_COMPUTE && o->kind != GT_MEMCPY)
    put_comm_args(j, rank, o, s);
  g_string_append(s, "}}");
}

/* Kineto's CudaSyncActivity for a host synchronisation: "Stream Sync" on
 * the synchronised stream's row, "Context Sync" (stream -1) for a device
 * synchronisation, at the call's CPU interval. */
static void put_sync_event(GString *s, const action *a, const trace_event *e)
{
  gboolean dev = a->arg < 0;
  int sid = dev ? -1 : stream_id[a->arg];
  const char *kind = dev ? "Context Sync" : "Stream Sync";
  g_string_append_printf(s, "{\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"%s\", \"pid\": 0, \"tid\": %d, "
                            "\"ts\": ", kind, dev ? 0 : sid);
  put_ts(s, e->ts);
  g_string_append(s, ", \"dur\": ");
  put_dur(s, e->dur);
  g_string_append_printf(s, ", \"args\": {\"cuda_sync_kind\": \"%s\", \"stream\": %d, \"correlation\": %"
                            G_GINT64_FORMAT ", \"device\": 0}}", kind, sid, a->corr);
}

static char *rank_json(const gt_job *j, int rank)
{
  rank_state *rs = (rank_state *)&j->r[rank];
  GString *s = g_string_sized_new(256 + 400 * (rs->actions->len + rs->ops->len));
  g_string_append_printf(s, "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": \"GT-GPU\"}], "
                            "\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d, \"world_size\": %d, ",
                         rank, j->n);
  int n_pg = 0;
  for (guint i = 0; i < j->groups->len; i++)
    n_pg += group_at(j, (int32_t)i)->index_of[rank] >= 0;
  g_string_append_printf(s, "\"pg_count\": %d, \"pg_config\": [", n_pg);
  gboolean first = TRUE;
  for (guint i = 0; i < j->groups->len; i++) {
    const group *g = group_at(j, (int32_t)i);
    if (g->index_of[rank] < 0)
      continue;
    g_string_append_printf(s, "%s{\"pg_name\": \"%s\", \"pg_desc\": \"%s\", \"backend_config\": \"cuda:nccl\", "
                              "\"pg_size\": %d, \"ranks\": ", first ? "" : ", ", g->name, g->desc, g->n);
    put_ranks(s, g);
    g_string_append_c(s, '}');
    first = FALSE;
  }
  g_string_append(s, "]}, \"baseTimeNanoseconds\": " GT_BASE_TIME_NS ", \"traceEvents\": [\n");

  GArray *ev = g_array_new(FALSE, FALSE, sizeof(trace_event));
  GHashTable *open = g_hash_table_new(g_direct_hash, g_direct_equal); /* step -> begin action + 1 */
  for (guint i = 0; i < rs->actions->len; i++) {
    const action *a = act_at(rs, (int32_t)i);
    trace_event e = { .ts = a->start_ns, .dur = a->end_ns - a->start_ns, .idx = (int32_t)i };
    switch ((action_kind)a->kind) {
    case A_STEP_BEGIN:
      g_hash_table_insert(open, GINT_TO_POINTER(a->arg), GUINT_TO_POINTER(i + 1));
      break;
    case A_STEP_END: {
      guint b = GPOINTER_TO_UINT(g_hash_table_lookup(open, GINT_TO_POINTER(a->arg)));
      if (b) {
        const action *ba = act_at(rs, (int32_t)b - 1);
        trace_event se = { .ts = ba->start_ns, .dur = a->end_ns - ba->start_ns, .lane = LANE_STEP,
                           .idx = (int32_t)b - 1, .aux = (int32_t)i };
        g_array_append_val(ev, se);
        g_hash_table_remove(open, GINT_TO_POINTER(a->arg));
      }
      break;
    }
    case A_CPU:
    case A_SIGNAL:
    case A_JOIN:
      break;
    case A_SYNC:
    case A_WAIT:
      if (j->p.cuda_sync_events && (a->arg >= 0 || a->kind == A_SYNC)) {
        trace_event ce = e;
        ce.lane = LANE_SYNC;
        g_array_append_val(ev, ce);
      }
      /* fall through */
    case A_LAUNCH:
      if (j->p.et_trace && a->arg >= 0 && op_at(rs, a->arg)->kind != GT_COMPUTE &&
          op_at(rs, a->arg)->kind != GT_MEMCPY) {
        trace_event oe = e; /* the record_param_comms CPU op around an NCCL launch (not a graph's) */
        oe.lane = LANE_OP;
        g_array_append_val(ev, oe);
      }
      /* fall through */
    case A_RECORD:
      e.lane = LANE_CALL;
      g_array_append_val(ev, e);
      break;
    }
  }
  g_hash_table_destroy(open);
  for (guint i = 0; i < rs->ops->len; i++) {
    const op *o = op_at(rs, (int32_t)i);
    trace_event e = { .ts = o->start_ns, .dur = o->end_ns - o->start_ns, .lane = LANE_KERNEL, .idx = (int32_t)i };
    g_array_append_val(ev, e);
  }
  GArray *mods = gt_module_spans(j, rank);
  for (guint i = 0; i < mods->len; i++) {
    const gt_module_span *m = &g_array_index(mods, gt_module_span, i);
    trace_event e = { .ts = m->ts, .dur = m->dur, .lane = LANE_MODULE, .idx = (int32_t)i };
    g_array_append_val(ev, e);
  }
  g_array_sort(ev, cmp_trace_event);
  const int pid = 1000 + rank;
  for (guint i = 0; i < ev->len; i++) {
    const trace_event *e = &g_array_index(ev, trace_event, i);
    switch (e->lane) {
    case LANE_STEP:
      if (j->p.scenario == GT_SERVE && j->p.sglang_markers) /* SGLang's: the scheduler's Python frame */
        g_string_append_printf(s, "{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": "
                                  "\"sglang/srt/managers/scheduler.py(%d): run_batch\", \"pid\": %d, \"tid\": 1, "
                                  "\"ts\": ", 1045, pid);
      else if (j->p.scenario == GT_SERVE) /* vLLM's marker of one model execution (the tokens it schedules) */
        g_string_append_printf(s, "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": "
                                  "\"execute_context_%d(%d)\", \"pid\": %d, \"tid\": 1, \"ts\": ",
                               act_at(rs, e->idx)->arg, act_at(rs, e->idx)->arg ? 1 : 512, pid);
      else
        g_string_append_printf(s, "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%d\", "
                                  "\"pid\": %d, \"tid\": 1, \"ts\": ", act_at(rs, e->idx)->arg, pid);
      put_ts(s, e->ts);
      g_string_append(s, ", \"dur\": ");
      put_dur(s, e->dur);
      g_string_append(s, "}");
      break;
    case LANE_MODULE: { /* with_modules (with_stack): the module's forward on its thread */
      const gt_module_span *m = &g_array_index(mods, gt_module_span, e->idx);
      g_string_append_printf(s, "{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"nn.Module: %s\", "
                                "\"pid\": %d, \"tid\": %d, \"ts\": ", m->name, pid, 1 + m->thread);
      put_ts(s, e->ts);
      g_string_append(s, ", \"dur\": ");
      put_dur(s, e->dur);
      g_string_append(s, "}");
      break;
    }
    case LANE_OP: {
      /* PyTorch's record_param_comms CPU op: its Record function id is the
       * execution trace node's rf_id (gt_job_write_et: the launch action's
       * index + 1), its External id the launch's. */
      const action *a = act_at(rs, e->idx);
      g_string_append_printf(s, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", "
                                "\"pid\": %d, \"tid\": %d, \"ts\": ", pid, 1 + a->thread);
      put_ts(s, e->ts);
      g_string_append(s, ", \"dur\": ");
      put_dur(s, e->dur);
      g_string_append_printf(s, ", \"args\": {\"External id\": %" G_GINT64_FORMAT ", \"Record function id\": %d",
                             a->corr, e->idx + 1);
      put_comm_args(j, rank, op_at(rs, a->arg), s);
      g_string_append(s, "}}");
      break;
    }
    case LANE_CALL: {
      const action *a = act_at(rs, e->idx);
      g_string_append_printf(s, "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"%s\", \"pid\": %d, "
                                "\"tid\": %d, \"ts\": ", runtime_name(j, rank, a), pid, 1 + a->thread);
      put_ts(s, e->ts);
      g_string_append(s, ", \"dur\": ");
      put_dur(s, e->dur);
      g_string_append_printf(s, ", \"args\": {\"correlation\": %" G_GINT64_FORMAT ", \"External id\": %"
                             G_GINT64_FORMAT "}}", a->corr, a->corr);
      break;
    }
    case LANE_SYNC: {
      /* Kineto's CudaSyncActivity for a cudaStreamWaitEvent (kineto.md
       * §8): on the device row of the waiting stream, at the call's CPU
       * interval (CUPTI times the API call), naming the recording call. */
      const action *a = act_at(rs, e->idx);
      if (a->kind == A_SYNC) {
        put_sync_event(s, a, e);
        break;
      }
      const record *rec = &g_array_index(rs->records, record, a->arg);
      const action *ra = act_at(rs, rec->action);
      int sid = stream_id[a->stream];
      g_string_append_printf(s, "{\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"Stream Wait Event\", "
                                "\"pid\": 0, \"tid\": %d, \"ts\": ", sid);
      put_ts(s, e->ts);
      g_string_append(s, ", \"dur\": ");
      put_dur(s, e->dur);
      g_string_append_printf(s, ", \"args\": {\"cuda_sync_kind\": \"Stream Wait Event\", \"stream\": %d, "
                                "\"correlation\": %" G_GINT64_FORMAT ", \"device\": 0, \"wait_on_stream\": %d, "
                                "\"wait_on_cuda_event_record_corr_id\": %" G_GINT64_FORMAT
                                ", \"wait_on_cuda_event_id\": %d}}", sid, a->corr, stream_id[rec->stream], ra->corr,
                             a->event);
      break;
    }
    default: {
      const op *o = op_at(rs, e->idx);
      put_kernel(j, rank, o, act_at(rs, o->action), s);
      break;
    }
    }
    g_string_append(s, i + 1 < ev->len ? ",\n" : "\n");
  }
  g_array_free(ev, TRUE);
  g_array_free(mods, TRUE);
  g_string_append(s, "]}\n");
  return g_string_free(s, FALSE);
}

gboolean gt_job_write(const gt_job *j, const char *outdir, GError **error)
{
  g_return_val_if_fail(j && j->ran && outdir, FALSE);
  for (int r = 0; r < j->n; r++) {
    char *text = rank_json(j, r);
    char *name = g_strdup_printf("rank%d.json", r);
    char *path = g_build_filename(outdir, name, NULL);
    gboolean ok = wisp_write_file_atomic(path, text, strlen(text), error);
    g_free(path);
    g_free(name);
    g_free(text);
    if (!ok)
      return FALSE;
  }
  return TRUE;
}

gboolean gt_run(const gt_params *p, const char *outdir, gt_result *res, GError **error)
{
  memset(res, 0, sizeof *res);
  gt_job *j = gt_scenario_build(p, error);
  if (!j)
    return FALSE;
  gboolean ok = gt_job_run(j, error);
  if (ok && outdir) {
    if (g_mkdir_with_parents(outdir, 0755) != 0) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "cannot create %s: %s", outdir, g_strerror(errno));
      ok = FALSE;
    } else {
      ok = gt_job_write(j, outdir, error) && (!p->et_trace || gt_job_write_et(j, 2, outdir, error));
    }
  }
  if (ok) {
    res->scenario = p->scenario;
    res->n_ranks = j->n;
    res->step = 2;
    res->serve_steps = p->scenario == GT_SERVE ? p->serve_steps : 0;
    res->beta_Bps = j->beta;
    for (int r = 0; r < j->n; r++) {
      int64_t b = 0, e = 0;
      if (!gt_job_step(j, r, res->step, &b, &e))
        g_assert_not_reached();
      res->rank_step_ns[r] = e - b;
      for (int k = 0; p->scenario == GT_SERVE && k < p->serve_steps; k++) {
        if (!gt_job_step(j, r, k, &b, &e))
          g_assert_not_reached();
        res->serve_step_ns[k][r] = e - b;
      }
      res->step_ns = MAX(res->step_ns, e - b);
      const rank_state *rs = &j->r[r];
      res->gpu_ops += rs->ops->len;
      for (guint i = 0; i < rs->ops->len; i++)
        res->comm_ops += g_array_index(rs->ops, op, i).kind != GT_COMPUTE;
      for (guint i = 0; i < rs->actions->len; i++)
        res->runtime_calls += g_array_index(rs->actions, action, i).corr != 0;
    }
  }
  gt_job_free(j);
  return ok;
}
