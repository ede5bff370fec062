/* gt_gen.c: `gt_gen SCENARIO OUTDIR [options]` runs a ground-truth
 * scenario (regress/gt_model.h, doc/ground-truth.md), writes the Kineto
 * trace of every rank as OUTDIR/rank<r>.json (OUTDIR "-": no files) and
 * prints one JSON object on stdout: the scenario, every parameter and the
 * true step time (ProfilerStep#2) in ns.  With --utility it also runs the
 * scenario at twice the bandwidth (no files) and prints that step time and
 * the utility of doubling, (T - T_2x) / T.
 *
 * Exit status 0 on success, 1 when the run fails (deadlock, invalid
 * program, unwritable directory), 2 on bad usage.
 */
#include "config.h"

#include "regress/gt_model.h"
#include "common/wisp_json.h"
#include "common/wisp_util.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Integer options not given keep this value; double options stay NaN. */
#define UNSET INT_MIN

/* Options given as text, applied over the scenario's defaults. */
typedef struct {
  char *alpha, *beta, *l_call, *l_submit, *l_small, *g_stream, *g_event, *r_sync, *host, *head, *tail, *final_size;
  char *gemm, *elementwise, *loss, *size_a, *size_b, *fwd, *bwd, *optimizer, *act_size;
  int ranks, layers, straggler_rank, fwd_kernels, bwd_kernels, bucket_kernels, microbatches, gpus_per_node;
  double bw_scale, bw_scale_out, straggler_scale;
  gboolean cuda_sync_events, utility, backward_thread, et_trace;
} gen_opts;

static gboolean time_ns(const char *opt, const char *text, int64_t *out)
{
  if (!text)
    return TRUE;
  sim_time_ps ps;
  const char *why = NULL;
  if (!wisp_parse_time(text, &ps, &why) || ps < 0) {
    fprintf(stderr, "gt_gen: --%s %s: %s\n", opt, text, why ? why : "must not be negative");
    return FALSE;
  }
  *out = (ps + 500) / 1000; /* to the nearest ns, halves up */
  return TRUE;
}

static gboolean size_bytes(const char *opt, const char *text, uint64_t *out)
{
  if (!text)
    return TRUE;
  const char *why = NULL;
  if (!wisp_parse_size(text, out, &why)) {
    fprintf(stderr, "gt_gen: --%s %s: %s\n", opt, text, why);
    return FALSE;
  }
  return TRUE;
}

/* p holds the scenario's defaults; applies what o gives. */
static gboolean apply(const gen_opts *o, gt_params *p)
{
  if (o->beta) {
    const char *why = NULL;
    if (!wisp_parse_bandwidth(o->beta, &p->beta_Bps, &why)) {
      fprintf(stderr, "gt_gen: --beta %s: %s\n", o->beta, why);
      return FALSE;
    }
  }
  const struct { int given; int *to; } ints[] = {
    { o->ranks, &p->ranks }, { o->layers, &p->layers }, { o->straggler_rank, &p->straggler_rank },
    { o->fwd_kernels, &p->fwd_kernels }, { o->bwd_kernels, &p->bwd_kernels },
    { o->bucket_kernels, &p->bucket_kernels }, { o->microbatches, &p->microbatches },
    { o->gpus_per_node, &p->gpus_per_node },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(ints); i++)
    if (ints[i].given != UNSET)
      *ints[i].to = ints[i].given;
  if (!isnan(o->bw_scale))
    p->bw_scale = o->bw_scale;
  if (!isnan(o->bw_scale_out))
    p->bw_scale_out = o->bw_scale_out;
  if (!isnan(o->straggler_scale))
    p->straggler_scale = o->straggler_scale;
  p->cuda_sync_events = o->cuda_sync_events;
  p->et_trace = o->et_trace;
  p->backward_thread = p->backward_thread || o->backward_thread;
  return time_ns("alpha", o->alpha, &p->alpha_ns) && time_ns("l-call", o->l_call, &p->l_call_ns) &&
         time_ns("l-submit", o->l_submit, &p->l_submit_ns) && time_ns("l-small", o->l_small, &p->l_small_ns) &&
         time_ns("g-stream", o->g_stream, &p->g_stream_ns) && time_ns("g-event", o->g_event, &p->g_event_ns) &&
         time_ns("r-sync", o->r_sync, &p->r_sync_ns) && time_ns("host", o->host, &p->host_ns) &&
         time_ns("head", o->head, &p->head_ns) && time_ns("tail", o->tail, &p->tail_ns) &&
         time_ns("gemm", o->gemm, &p->gemm_ns) && time_ns("elementwise", o->elementwise, &p->elementwise_ns) &&
         time_ns("loss", o->loss, &p->loss_ns) && time_ns("fwd", o->fwd, &p->fwd_ns) &&
         time_ns("bwd", o->bwd, &p->bwd_ns) && time_ns("optimizer", o->optimizer, &p->optimizer_ns) &&
         size_bytes("final-size", o->final_size, &p->final_bytes) &&
         size_bytes("size-a", o->size_a, &p->comm_bytes[0]) && size_bytes("size-b", o->size_b, &p->comm_bytes[1]) &&
         size_bytes("act-size", o->act_size, &p->act_bytes);
}

static void print_params(wisp_json *j, const gt_params *p)
{
  wisp_json_begin_object(j, "params");
  wisp_json_int(j, "ranks", p->ranks);
  wisp_json_int(j, "alpha_ns", p->alpha_ns);
  wisp_json_uint(j, "beta_Bps", p->beta_Bps);
  wisp_json_double(j, "bw_scale", p->bw_scale, 6);
  wisp_json_int(j, "l_call_ns", p->l_call_ns);
  wisp_json_int(j, "l_submit_ns", p->l_submit_ns);
  wisp_json_int(j, "l_small_ns", p->l_small_ns);
  wisp_json_int(j, "g_stream_ns", p->g_stream_ns);
  wisp_json_int(j, "g_event_ns", p->g_event_ns);
  wisp_json_int(j, "r_sync_ns", p->r_sync_ns);
  wisp_json_int(j, "host_ns", p->host_ns);
  wisp_json_int(j, "head_ns", p->head_ns);
  wisp_json_int(j, "tail_ns", p->tail_ns);
  wisp_json_uint(j, "final_bytes", p->final_bytes);
  if (p->scenario == GT_DP || p->scenario == GT_PP) {
    if (p->scenario == GT_DP) {
      wisp_json_int(j, "fwd_kernels", p->fwd_kernels);
      wisp_json_int(j, "bwd_kernels", p->bwd_kernels);
      wisp_json_int(j, "bucket_kernels", p->bucket_kernels);
    } else {
      wisp_json_int(j, "microbatches", p->microbatches);
      wisp_json_uint(j, "act_bytes", p->act_bytes);
    }
    wisp_json_int(j, "fwd_ns", p->fwd_ns);
    wisp_json_int(j, "bwd_ns", p->bwd_ns);
    wisp_json_int(j, "optimizer_ns", p->optimizer_ns);
  } else {
    wisp_json_int(j, "layers", p->layers);
    wisp_json_int(j, "gemm_ns", p->gemm_ns);
    wisp_json_int(j, "elementwise_ns", p->elementwise_ns);
    wisp_json_int(j, "loss_ns", p->loss_ns);
  }
  wisp_json_uint(j, "size_a_bytes", p->comm_bytes[0]);
  wisp_json_uint(j, "size_b_bytes", p->comm_bytes[1]);
  wisp_json_int(j, "straggler_rank", p->straggler_rank);
  wisp_json_double(j, "straggler_scale", p->straggler_scale, 6);
  wisp_json_bool(j, "cuda_sync_events", p->cuda_sync_events);
  wisp_json_bool(j, "et_trace", p->et_trace);
  wisp_json_int(j, "gpus_per_node", p->gpus_per_node);
  if (p->gpus_per_node > 0) {
    wisp_json_int(j, "alpha_out_ns", p->alpha_out_ns);
    wisp_json_uint(j, "beta_out_Bps", p->beta_out_Bps);
    wisp_json_double(j, "bw_scale_out", p->bw_scale_out, 6);
  }
  if (p->scenario == GT_TPDP) {
    wisp_json_int(j, "tp", p->tp);
    wisp_json_int(j, "bucket_layers", p->bucket_layers);
    wisp_json_int(j, "bwd_ns", p->bwd_ns);
    wisp_json_bool(j, "backward_thread", p->backward_thread);
  }
  wisp_json_end_object(j);
}

int main(int argc, char **argv)
{
  gen_opts o = { .ranks = UNSET, .layers = UNSET, .straggler_rank = UNSET, .fwd_kernels = UNSET,
                 .bwd_kernels = UNSET, .bucket_kernels = UNSET, .microbatches = UNSET, .gpus_per_node = UNSET, .bw_scale = NAN, .bw_scale_out = NAN,
                 .straggler_scale = NAN };
  GOptionEntry entries[] = {
    {"bw-scale", 0, 0, G_OPTION_ARG_DOUBLE, &o.bw_scale, "the network's bandwidth is beta x K (default 1; 2 = 2B)", "K"},
    {"bw-scale-out", 0, 0, G_OPTION_ARG_DOUBLE, &o.bw_scale_out, "the scale-out tier's bandwidth factor (1)", "K"},
    {"gpus-per-node", 0, 0, G_OPTION_ARG_INT, &o.gpus_per_node,
     "ranks per node: groups inside a node use alpha/beta, others the scale-out tier (0: one node; tpdp: 4)", "N"},
    {"backward-thread", 0, 0, G_OPTION_ARG_NONE, &o.backward_thread,
     "tpdp: launch backward and the DP buckets from a second CPU thread; the main thread joins it", NULL},
    {"et-trace", 0, 0, G_OPTION_ARG_NONE, &o.et_trace,
     "also write each rank's PyTorch execution trace of step 2 (rank<r>.et.json) and the record_param_comms CPU ops "
     "with Record function ids that join it to the Kineto trace", NULL},
    {"cuda-sync-events", 0, 0, G_OPTION_ARG_NONE, &o.cuda_sync_events,
     "also write cat \"cuda_sync\" Stream Wait Event activities (enable_cuda_sync_events)", NULL},
    {"utility", 0, 0, G_OPTION_ARG_NONE, &o.utility,
     "also run at twice the bandwidth scale (no files) and print that step time and the utility", NULL},
    {"alpha", 0, 0, G_OPTION_ARG_STRING, &o.alpha, "time of one ring step; also the send/recv latency (2us)", "TIME"},
    {"beta", 0, 0, G_OPTION_ARG_STRING, &o.beta, "bus bandwidth B (100GB/s)", "BW"},
    {"ranks", 0, 0, G_OPTION_ARG_INT, &o.ranks, "world size, 2..16, not pp (8)", "N"},
    {"l-call", 0, 0, G_OPTION_ARG_STRING, &o.l_call, "cudaLaunchKernel call (5us)", "TIME"},
    {"l-submit", 0, 0, G_OPTION_ARG_STRING, &o.l_submit, "launch call start to kernel eligible (3us)", "TIME"},
    {"l-small", 0, 0, G_OPTION_ARG_STRING, &o.l_small, "cudaEventRecord / cudaStreamWaitEvent call (2us)", "TIME"},
    {"g-stream", 0, 0, G_OPTION_ARG_STRING, &o.g_stream, "gap between back-to-back kernels of a stream (1us)", "TIME"},
    {"g-event", 0, 0, G_OPTION_ARG_STRING, &o.g_event, "event reached to the waiting stream's kernel (2us)", "TIME"},
    {"r-sync", 0, 0, G_OPTION_ARG_STRING, &o.r_sync, "GPU idle to cudaDeviceSynchronize return (5us)", "TIME"},
    {"host", 0, 0, G_OPTION_ARG_STRING, &o.host, "host work before every launch (10us; launch: 200us)", "TIME"},
    {"head", 0, 0, G_OPTION_ARG_STRING, &o.head, "host work at the start of a step (50us)", "TIME"},
    {"tail", 0, 0, G_OPTION_ARG_STRING, &o.tail, "host work after the step's sync (100us)", "TIME"},
    {"final-size", 0, 0, G_OPTION_ARG_STRING, &o.final_size, "world all-reduce closing every step (4KiB)", "SIZE"},
    {"layers", 0, 0, G_OPTION_ARG_INT, &o.layers, "tp, launch, straggler: layers (12)", "N"},
    {"gemm", 0, 0, G_OPTION_ARG_STRING, &o.gemm, "tp-like: GEMM kernel of a layer (600us; launch: 120us)", "TIME"},
    {"elementwise", 0, 0, G_OPTION_ARG_STRING, &o.elementwise,
     "tp-like: elementwise kernel of a layer (200us; launch: 80us)", "TIME"},
    {"loss", 0, 0, G_OPTION_ARG_STRING, &o.loss, "tp-like: kernel after the last layer (100us; launch: 50us)", "TIME"},
    {"size-a", 0, 0, G_OPTION_ARG_STRING, &o.size_a,
     "all-reduce size A: tp/straggler layers 0,2,.. (8MiB), launch (1MiB), dp even buckets (24MiB), pp first DP "
     "all-reduce (32MiB)", "SIZE"},
    {"size-b", 0, 0, G_OPTION_ARG_STRING, &o.size_b,
     "all-reduce size B: tp/straggler odd layers (32MiB), launch (4MiB), dp odd buckets (40MiB), pp second (96MiB)",
     "SIZE"},
    {"straggler-rank", 0, 0, G_OPTION_ARG_INT, &o.straggler_rank,
     "rank whose compute kernels are slower, -1 none (straggler: 3, else -1)", "R"},
    {"straggler-scale", 0, 0, G_OPTION_ARG_DOUBLE, &o.straggler_scale, "its slowdown (1.3)", "X"},
    {"fwd-kernels", 0, 0, G_OPTION_ARG_INT, &o.fwd_kernels, "dp: forward kernels (8)", "N"},
    {"bwd-kernels", 0, 0, G_OPTION_ARG_INT, &o.bwd_kernels, "dp: backward kernels (24)", "N"},
    {"bucket-kernels", 0, 0, G_OPTION_ARG_INT, &o.bucket_kernels, "dp: backward kernels per gradient bucket (4)", "N"},
    {"fwd", 0, 0, G_OPTION_ARG_STRING, &o.fwd, "dp: forward kernel (300us); pp: stage forward (500us)", "TIME"},
    {"bwd", 0, 0, G_OPTION_ARG_STRING, &o.bwd, "dp: backward kernel (250us); pp: stage backward (1000us)", "TIME"},
    {"optimizer", 0, 0, G_OPTION_ARG_STRING, &o.optimizer, "dp, pp: optimizer kernel (400us)", "TIME"},
    {"microbatches", 0, 0, G_OPTION_ARG_INT, &o.microbatches, "pp: micro-batches (4)", "M"},
    {"act-size", 0, 0, G_OPTION_ARG_STRING, &o.act_size, "pp: activations sent between stages (16MiB)", "SIZE"},
    {NULL},
  };
  GOptionContext *ctx = g_option_context_new("SCENARIO OUTDIR - write the ground-truth Kineto traces of a scenario");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(ctx,
                                   "SCENARIO is tp, dp, launch, straggler, pp or tpdp (doc/ground-truth.md).\n"
                                   "OUTDIR receives rank<r>.json for every rank (created if absent; \"-\": no files).\n"
                                   "TIME as 2us, 500ns, 1.5ms; BW as 100GB/s, 800Gbps; SIZE as 8MiB, 4096.\n"
                                   "Defaults in parentheses are the scenario's.");
  GError *error = NULL;
  gboolean parsed = g_option_context_parse(ctx, &argc, &argv, &error);
  g_option_context_free(ctx);
  int status = 2;
  gt_scenario sc = GT_TP;
  if (!parsed) {
    fprintf(stderr, "gt_gen: %s\n", error->message);
    g_clear_error(&error);
    goto out;
  }
  if (argc != 3 || !gt_scenario_from_name(argv[1], &sc)) {
    fprintf(stderr, "gt_gen: give SCENARIO (tp, dp, launch, straggler, pp, tpdp) and OUTDIR (see gt_gen --help)\n");
    goto out;
  }
  gt_params p;
  gt_params_init(&p, sc);
  if (!apply(&o, &p))
    goto out;
  const char *why = gt_params_check(&p);
  if (why) {
    fprintf(stderr, "gt_gen: %s\n", why);
    goto out;
  }
  status = 1;
  const char *outdir = strcmp(argv[2], "-") ? argv[2] : NULL;
  gt_result res, res2;
  if (!gt_run(&p, outdir, &res, &error)) {
    fprintf(stderr, "gt_gen: %s: %s\n", gt_scenario_name(sc), error->message);
    g_clear_error(&error);
    goto out;
  }
  if (o.utility) {
    gt_params p2 = p;
    p2.bw_scale = 2 * p.bw_scale;
    if (!gt_run(&p2, NULL, &res2, &error)) {
      fprintf(stderr, "gt_gen: %s at twice the bandwidth: %s\n", gt_scenario_name(sc), error->message);
      g_clear_error(&error);
      goto out;
    }
  }
  wisp_json j;
  wisp_json_init(&j, stdout, 1);
  wisp_json_begin_object(&j, NULL);
  wisp_json_string(&j, "scenario", gt_scenario_name(sc));
  wisp_json_string(&j, "outdir", outdir);
  print_params(&j, &p);
  wisp_json_uint(&j, "beta_effective_Bps", res.beta_Bps);
  wisp_json_int(&j, "step", res.step);
  wisp_json_int(&j, "step_ns", res.step_ns);
  wisp_json_begin_array(&j, "rank_step_ns");
  for (int r = 0; r < res.n_ranks; r++)
    wisp_json_int(&j, NULL, res.rank_step_ns[r]);
  wisp_json_end_array(&j);
  wisp_json_uint(&j, "gpu_ops", res.gpu_ops);
  wisp_json_uint(&j, "comm_ops", res.comm_ops);
  wisp_json_uint(&j, "runtime_calls", res.runtime_calls);
  if (o.utility) {
    wisp_json_int(&j, "step_2x_ns", res2.step_ns);
    wisp_json_double(&j, "utility", (double)(res.step_ns - res2.step_ns) / (double)res.step_ns, 9);
  }
  wisp_json_end_object(&j);
  wisp_json_finish(&j);
  status = 0;
out:
  g_free(o.alpha);
  g_free(o.beta);
  g_free(o.l_call);
  g_free(o.l_submit);
  g_free(o.l_small);
  g_free(o.g_stream);
  g_free(o.g_event);
  g_free(o.r_sync);
  g_free(o.host);
  g_free(o.head);
  g_free(o.tail);
  g_free(o.final_size);
  g_free(o.gemm);
  g_free(o.elementwise);
  g_free(o.loss);
  g_free(o.size_a);
  g_free(o.size_b);
  g_free(o.fwd);
  g_free(o.bwd);
  g_free(o.optimizer);
  g_free(o.act_size);
  return status;
}
