/* gt_et.c: the PyTorch execution traces of the ground-truth model
 * (gt_job_write_et, gt_model.h).
 *
 * torch.profiler.ExecutionTraceObserver records the host operators of the
 * steps it observes; Chakra collects one step.  The model writes, per rank,
 * what the observer would record for ProfilerStep#step, schema
 * 1.1.1-chakra.0.0.4 (the layout frontends/pyt_et.c reads, doc/pytorch_et.md):
 *
 *   - node 1 the process root, nodes 2..5 one root per CPU thread (their
 *     "tid" is the Kineto thread id, 1 + thread), node 6 "ProfilerStep#N"
 *     under thread 0's root;
 *   - one node per GPU op the step launches, in the order the launch calls
 *     began (ties: thread, then program order), under the step node (thread
 *     0) or its thread's root: a compute kernel as "aten::<kernel name>", a
 *     copy as "aten::copy_", a CUDA graph replay as "CUDAGraph::replay" (its
 *     captured ops are the graph's, not operators of their own: they get no
 *     node, as in PyTorch), and an NCCL launch as a c10d operator
 *     ("c10d::allreduce_", ...) with a record_param_comms child carrying the
 *     collective (inputs [[buffer], seq, group handle, name, [], [], 0, 1,
 *     group size]).  The record_param_comms rf_id is the launch action's
 *     index + 1, the "Record function id" of the CPU op gt_job_write puts
 *     around that launch in the Kineto trace; every other node's rf_id is
 *     beyond the actions' range, so it names no Kineto op.
 *
 * Tensors state the model's true GPU orderings and nothing else: GPU op o
 * writes tensor 1000 + o; it reads the tensor of the op before it on its
 * stream and of the op each event it waits for was recorded after (the
 * two things that order it in the model).  A collective's c10d operator
 * reads those and writes the collective's buffer, which its
 * record_param_comms reads and writes in place (numel = the collective's
 * bf16 elements in, out per its kind); compute tensors have a nominal
 * 1 Mi bf16 elements (their size matters to no reader).  Host
 * synchronisations, event records and waits are CUDA runtime calls, not
 * operators, and get no node.  Cost: O(actions + ops + waits) per rank.
 */
#include "config.h"

#include "regress/gt_model_internal.h"
#include "common/wisp_util.h"

#include <string.h>

#define ET_TENSOR_BASE 1000
#define ET_NOMINAL_NUMEL 1048576
#define ET_FIRST_OP_ID 7

static const action *act_of(const rank_state *rs, int32_t i) { return &g_array_index(rs->actions, action, i); }
static const op *op_of(const rank_state *rs, int32_t i) { return &g_array_index(rs->ops, op, i); }

/* One tensor value [id, storage, offset, numel, element size, device]. */
static void put_tensor(GString *s, uint64_t id, uint64_t numel)
{
  g_string_append_printf(s, "[%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT ", 0, %" G_GUINT64_FORMAT ", 2, \"cuda:0\"]",
                         id, id, numel);
}

/* The node's common head and its attrs (rf_id, tid). */
static void put_head(GString *s, uint64_t id, const char *name, uint64_t parent)
{
  g_string_append_printf(s, "{\"id\": %" G_GUINT64_FORMAT ", \"name\": \"%s\", \"ctrl_deps\": %" G_GUINT64_FORMAT,
                         id, name, parent);
}

static void put_attrs(GString *s, uint64_t rf_id, int tid)
{
  g_string_append_printf(s, ", \"attrs\": [{\"name\": \"rf_id\", \"type\": \"uint64\", \"value\": %" G_GUINT64_FORMAT
                            "}, {\"name\": \"fw_parent\", \"type\": \"uint64\", \"value\": 0}, {\"name\": \"seq_id\", "
                            "\"type\": \"int64\", \"value\": -1}, {\"name\": \"scope\", \"type\": \"uint64\", \"value\": "
                            "0}, {\"name\": \"tid\", \"type\": \"uint64\", \"value\": %d}, {\"name\": \"fw_tid\", "
                            "\"type\": \"uint64\", \"value\": 0}, {\"name\": \"op_schema\", \"type\": \"string\", "
                            "\"value\": \"\"}]}", rf_id, tid);
}

static void put_empty_io(GString *s, const char *key)
{
  g_string_append_printf(s, ", \"%s\": {\"values\": [], \"shapes\": [], \"types\": []}", key);
}

/* The tensors op o reads: its stream predecessor's and those of the ops
 * its awaited events follow.  Appended to ids (uint64_t). */
static void op_inputs(const rank_state *rs, const op *o, GArray *ids)
{
  if (o->prev >= 0) {
    uint64_t t = ET_TENSOR_BASE + (uint64_t)o->prev;
    g_array_append_val(ids, t);
  }
  for (uint32_t k = 0; k < o->wait_n; k++) {
    int32_t ri = g_array_index(rs->refs, int32_t, o->wait_first + k);
    int32_t after = g_array_index(rs->records, record, ri).after_op;
    uint64_t t = ET_TENSOR_BASE + (uint64_t)after;
    gboolean dup = FALSE;
    for (guint i = 0; i < ids->len && !dup; i++)
      dup = g_array_index(ids, uint64_t, i) == t;
    if (after >= 0 && !dup)
      g_array_append_val(ids, t);
  }
}

/* "inputs" of a non-communication operator: the tensors ids, each of the
 * nominal size, then "outputs": tensor out of out_numel. */
static void put_io(GString *s, const GArray *ids, uint64_t out, uint64_t out_numel)
{
  g_string_append(s, ", \"inputs\": {\"values\": [");
  for (guint i = 0; i < ids->len; i++) {
    g_string_append(s, i ? ", " : "");
    put_tensor(s, g_array_index(ids, uint64_t, i), ET_NOMINAL_NUMEL);
  }
  g_string_append(s, "], \"shapes\": [");
  for (guint i = 0; i < ids->len; i++)
    g_string_append_printf(s, "%s[%d]", i ? ", " : "", ET_NOMINAL_NUMEL);
  g_string_append(s, "], \"types\": [");
  for (guint i = 0; i < ids->len; i++)
    g_string_append(s, i ? ", \"Tensor(c10::BFloat16)\"" : "\"Tensor(c10::BFloat16)\"");
  g_string_append(s, "]}, \"outputs\": {\"values\": [");
  put_tensor(s, out, out_numel);
  g_string_append_printf(s, "], \"shapes\": [[%" G_GUINT64_FORMAT "]], \"types\": [\"Tensor(c10::BFloat16)\"]}",
                         out_numel);
}

/* A collective's two nodes: the c10d operator (ids[0]) and its
 * record_param_comms child (ids[0] + 1). */
static void put_coll(GString *s, const gt_job *j, const rank_state *rs, int32_t oi, uint64_t id, uint64_t parent,
                     uint64_t rf_rpc, uint64_t rf_op, int tid, GArray *ids)
{
  static const char *const c10d[] = { NULL, "c10d::allreduce_", "c10d::_allgather_base_", "c10d::_reduce_scatter_base_",
                                      "c10d::send", "c10d::recv_", NULL, "c10d::alltoall_base_" };
  static const char *const cname[] = { NULL, "allreduce", "_allgather_base", "_reduce_scatter_base", "send", "recv",
                                       NULL, "all_to_all_single" };
  static const char *const coalesced_name[] = { NULL, "allreduce_coalesced", "allgather_into_tensor_coalesced",
                                                "reduce_scatter_tensor_coalesced", "send", "recv", NULL,
                                                "all_to_all_single" };
  const op *o = op_of(rs, oi);
  const group *g = g_ptr_array_index(j->groups, o->group);
  uint64_t buf = ET_TENSOR_BASE + (uint64_t)oi, in = o->bytes / GT_BF16_BYTES, out = in;
  if (o->kind == GT_ALL_GATHER)
    out = in * (uint64_t)g->n;
  else if (o->kind == GT_REDUCE_SCATTER)
    out = in / (uint64_t)g->n;
  put_head(s, id, c10d[o->kind], parent);
  g_array_set_size(ids, 0);
  op_inputs(rs, o, ids);
  put_io(s, ids, buf, in);
  put_attrs(s, rf_op, tid);
  g_string_append(s, ",\n");
  put_head(s, id + 1, "record_param_comms", id);
  g_string_append(s, ", \"inputs\": {\"values\": [[");
  put_tensor(s, buf, in);
  g_string_append_printf(s, "], %d, %d, \"%s\", [], [], 0, 1, %d], \"shapes\": [[[%" G_GUINT64_FORMAT "]], [], [], "
                            "[], [], [], [], [], []], \"types\": [\"GenericList[Tensor(c10::BFloat16)]\", \"Int\", "
                            "\"Int\", \"String\", \"GenericList[]\", \"GenericList[]\", \"Int\", \"Int\", \"Int\"]}",
                         o->seq, o->group + 1, o->coalesced ? coalesced_name[o->kind] : cname[o->kind], g->n, in);
  g_string_append(s, ", \"outputs\": {\"values\": [[");
  put_tensor(s, buf, out);
  g_string_append_printf(s, "]], \"shapes\": [[[%" G_GUINT64_FORMAT "]]], \"types\": "
                            "[\"GenericList[Tensor(c10::BFloat16)]\"]}", out);
  put_attrs(s, rf_rpc, tid);
}

typedef struct {
  int64_t start;
  int thread;
  int32_t action;
} launch_ref;

static int cmp_launch(const void *pa, const void *pb)
{
  const launch_ref *a = pa, *b = pb;
  if (a->start != b->start)
    return a->start < b->start ? -1 : 1;
  if (a->thread != b->thread)
    return a->thread < b->thread ? -1 : 1;
  return a->action < b->action ? -1 : a->action > b->action;
}

/* The launches of rank r that began inside ProfilerStep#step, sorted;
 * FALSE when the rank has no such step. */
static gboolean step_launches(const gt_job *j, int r, int step, GArray *out)
{
  int64_t b = 0, e = 0;
  if (!gt_job_step(j, r, step, &b, &e))
    return FALSE;
  const rank_state *rs = &j->r[r];
  for (guint i = 0; i < rs->actions->len; i++) {
    const action *a = act_of(rs, (int32_t)i);
    if (a->kind == A_LAUNCH && a->start_ns >= b && a->start_ns < e) {
      launch_ref l = { a->start_ns, a->thread, (int32_t)i };
      g_array_append_val(out, l);
    }
  }
  g_array_sort(out, cmp_launch);
  return TRUE;
}

static char *rank_et(const gt_job *j, int r, int step)
{
  const rank_state *rs = &j->r[r];
  GArray *launches = g_array_new(FALSE, FALSE, sizeof(launch_ref)), *ids = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  if (!step_launches(j, r, step, launches))
    g_array_set_size(launches, 0);
  GString *s = g_string_sized_new(4096 + 1500 * launches->len);
  uint64_t rf_other = rs->actions->len + 1; /* rf_ids no Kineto CPU op carries */
  g_string_append_printf(s, "{\"schema\": \"1.1.1-chakra.0.0.4\", \"pid\": %d, \"time\": \"2026-12-07 00:00:00\", "
                            "\"start_ts\": 0, \"finish_ts\": 0, \"nodes\": [\n", 1000 + r);
  put_head(s, 1, "[pytorch|profiler|execution_trace|process]", 0);
  put_empty_io(s, "inputs");
  put_empty_io(s, "outputs");
  put_attrs(s, rf_other++, 0);
  for (int t = 0; t < GT_MAX_THREADS; t++) {
    g_string_append(s, ",\n");
    put_head(s, 2 + (uint64_t)t, "[pytorch|profiler|execution_trace|thread]", 1);
    put_empty_io(s, "inputs");
    put_empty_io(s, "outputs");
    put_attrs(s, rf_other++, 1 + t);
  }
  char *step_name = g_strdup_printf("ProfilerStep#%d", step);
  g_string_append(s, ",\n");
  put_head(s, 6, step_name, 2);
  put_empty_io(s, "inputs");
  put_empty_io(s, "outputs");
  put_attrs(s, rf_other++, 1);
  g_free(step_name);
  uint64_t id = ET_FIRST_OP_ID;
  for (guint k = 0; k < launches->len; k++) {
    const launch_ref *l = &g_array_index(launches, launch_ref, k);
    const action *a = act_of(rs, l->action);
    uint64_t parent = l->thread == 0 ? 6 : 2 + (uint64_t)l->thread;
    g_string_append(s, ",\n");
    if (a->arg < 0) { /* cudaGraphLaunch: one operator, its captured ops are the graph's */
      put_head(s, id, "CUDAGraph::replay", parent);
      put_empty_io(s, "inputs");
      put_empty_io(s, "outputs");
      put_attrs(s, rf_other++, 1 + l->thread);
      id++;
      continue;
    }
    const op *o = op_of(rs, a->arg);
    if (o->kind == GT_COMPUTE || o->kind == GT_MEMCPY) {
      char *name = o->kind == GT_MEMCPY ? g_strdup("aten::copy_") : g_strdup_printf("aten::%s", o->name);
      put_head(s, id, name, parent);
      g_free(name);
      g_array_set_size(ids, 0);
      op_inputs(rs, o, ids);
      put_io(s, ids, ET_TENSOR_BASE + (uint64_t)a->arg, ET_NOMINAL_NUMEL);
      put_attrs(s, rf_other++, 1 + l->thread);
      id++;
    } else {
      put_coll(s, j, rs, a->arg, id, parent, (uint64_t)l->action + 1, rf_other++, 1 + l->thread, ids);
      id += 2;
    }
  }
  g_string_append(s, "\n]}\n");
  g_array_free(launches, TRUE);
  g_array_free(ids, TRUE);
  return g_string_free(s, FALSE);
}

gboolean gt_job_write_et(const gt_job *j, int step, const char *outdir, GError **error)
{
  g_return_val_if_fail(j && j->ran && outdir, FALSE);
  for (int r = 0; r < j->n; r++) {
    char *text = rank_et(j, r, step);
    char *name = g_strdup_printf("rank%d.et.json", r);
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
