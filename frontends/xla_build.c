/* xla_build.c: building the workload from the chips read (see xla.h):
 * the global groups of each collective pattern, the step window, ranks
 * in device order, and per rank a chain of compute, collective and
 * point-to-point nodes with async starts paired to their dones.
 * O(ops) per rank plus O(patterns x devices) for the groups. */
#include "config.h"

#include "frontends/xla_internal.h"

#include <stdlib.h>
#include <string.h>

int xla_cmp_chip(const void *a, const void *b)
{
  const xla_chip *x = *(xla_chip *const *) a, *y = *(xla_chip *const *) b;
  return x->global_id < y->global_id ? -1 : x->global_id > y->global_id;
}

int xla_cmp_op(const void *a, const void *b)
{
  const xla_op *x = a, *y = b;
  if (x->stream != y->stream)
    return x->stream < y->stream ? -1 : 1;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The bytes that decide a collective's global groups (for a given device
 * and partition count, fixed per load): what fe_hlo_global_groups reads. */
GBytes *xla_groups_key(const fe_hlo_instr *h)
{
  GByteArray *k = g_byte_array_new();
  int64_t head[4] = { h->mode, h->has_channel_id, h->has_replica_groups, h->has_replica_groups ? h->n_groups : 0 };
  g_byte_array_append(k, (const guint8 *)head, sizeof head);
  if (h->has_replica_groups && h->n_groups > 0) {
    g_byte_array_append(k, (const guint8 *)h->group_off, (guint)(sizeof(uint32_t) * (h->n_groups + 1)));
    g_byte_array_append(k, (const guint8 *)h->group_ids, (guint)(sizeof(int64_t) * h->group_off[h->n_groups]));
  }
  return g_byte_array_free_to_bytes(k);
}

/* Computes (or finds) the global groups of a collective's pattern; FALSE
 * on invalid ids.  O(ids of the pattern + n_devices) the first time a
 * pattern is seen, O(its key) after. */
static gboolean info_groups(xla_ctx *c, xla_info *in, GError **error)
{
  if (in->groups)
    return TRUE;
  GBytes *key = xla_groups_key(&in->hlo);
  xla_groups *xg = g_hash_table_lookup(c->groups_by_key, key);
  if (xg) {
    g_bytes_unref(key);
    in->groups = xg;
    return TRUE;
  }
  xg = g_new0(xla_groups, 1);
  xg->groups = g_ptr_array_new_with_free_func((GDestroyNotify) g_array_unref);
  g_hash_table_insert(c->groups_by_key, key, xg); /* owned by the table; removed again on failure */
  if (!fe_hlo_global_groups(&in->hlo, c->n_devices, c->opt->num_partitions, xg->groups, error)) {
    g_hash_table_remove(c->groups_by_key, key);
    return FALSE;
  }
  xg->group_of_device = g_new(int32_t, c->n_devices);
  for (int64_t d = 0; d < c->n_devices; d++)
    xg->group_of_device[d] = -1;
  for (guint g = 0; g < xg->groups->len; g++) {
    GArray *a = xg->groups->pdata[g];
    for (guint i = 0; i < a->len; i++) {
      int64_t d = g_array_index(a, int64_t, i);
      if (xg->group_of_device[d] >= 0) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                    "%s: collective %s: device %" G_GINT64_FORMAT " appears twice in its replica groups "
                    "(%s mode); the HLO is invalid", c->source, in->short_name, d, fe_hlo_mode_name(in->hlo.mode));
        g_hash_table_remove(c->groups_by_key, key);
        return FALSE;
      }
      xg->group_of_device[d] = (int32_t) g;
    }
  }
  xg->wgroup = g_new(uint32_t, xg->groups->len);
  xg->n_present = g_new(int32_t, xg->groups->len);
  for (guint g = 0; g < xg->groups->len; g++)
    xg->wgroup[g] = ET_NONE;
  in->groups = xg;
  return TRUE;
}

/* Workload group of device dev for collective in; counts partial groups
 * and says, in *partial, whether members are missing from the profile. */
static gboolean comm_group(xla_ctx *c, et_workload *w, xla_info *in, int64_t dev, uint32_t *out,
                           const char **pg_name, gboolean *partial, GError **error)
{
  if (!info_groups(c, in, error))
    return FALSE;
  xla_groups *xg = in->groups;
  int32_t g = xg->group_of_device[dev];
  if (g < 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: collective %s: device %" G_GINT64_FORMAT " is in none of its replica groups",
                c->source, in->short_name, dev);
    return FALSE;
  }
  GArray *a = xg->groups->pdata[g];
  /* The workload group and the present members are computed once per
   * group of the pattern (O(group size)); later calls are O(1). */
  if (xg->wgroup[g] == ET_NONE) {
    int n_present = 0;
    int *ranks = g_new(int, a->len);
    for (guint i = 0; i < a->len; i++) {
      int r = c->dev_rank[g_array_index(a, int64_t, i)];
      if (r >= 0)
        ranks[n_present++] = r;
    }
    GString *s = g_string_new("xla:");
    for (int i = 0; i < n_present; i++)
      g_string_append_printf(s, "%s%d", i ? "," : "", ranks[i]);
    gpointer idx = g_hash_table_lookup(w->group_index, s->str);
    if (idx) {
      xg->wgroup[g] = GPOINTER_TO_UINT(idx) - 1;
    } else {
      xg->wgroup[g] = et_workload_add_group(w, s->str, fe_hlo_mode_name(in->hlo.mode), ranks, n_present);
    }
    xg->n_present[g] = n_present;
    g_string_free(s, TRUE);
    g_free(ranks);
  }
  int n_present = xg->n_present[g];
  *partial = (guint) n_present < a->len;
  if (*partial) {
    c->rep->partial_groups++;
    if (c->opt->strict) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s: collective %s: its replica group names %u devices but the profile holds only %d "
                  "of them; give every host's file, or --replicate-missing to replay the missing chips, or drop "
                  "--strict to replay it at its measured duration", c->source, in->short_name, a->len, n_present);
      return FALSE;
    }
    if (!in->warned_partial) {
      in->warned_partial = TRUE;
      /* The cause only: the loader's one warning (cli/wisp_load.c) counts
       * every operation replayed as measured, their time and the options
       * (issue 29 item 9: the same advice was printed twice). */
      xla_warn(c, g_strdup_printf("collective %s: replica group of %u devices, %d present in the profile "
                              "(%d chips in total), so it is not simulated", in->short_name, a->len, n_present,
                              c->rep->n_chips));
    }
  }
  *out = xg->wgroup[g];
  *pg_name = et_workload_group(w, *out)->name;
  return TRUE;
}

static et_coll_type coll_of(fe_hlo_kind k)
{
  switch (k) {
  case FE_HLO_ALL_REDUCE: return ET_COLL_ALL_REDUCE;
  case FE_HLO_ALL_GATHER: return ET_COLL_ALL_GATHER;
  case FE_HLO_REDUCE_SCATTER: return ET_COLL_REDUCE_SCATTER;
  case FE_HLO_ALL_TO_ALL:
  case FE_HLO_RAGGED_ALL_TO_ALL: return ET_COLL_ALL_TO_ALL;
  case FE_HLO_COLLECTIVE_BROADCAST: return ET_COLL_BROADCAST;
  default: return ET_COLL_NONE;
  }
}

/* Per-rank graph construction state. */
typedef struct {
  et_builder *b;
  uint64_t next_id;
  GArray *frontier;  /* xla_dep: the nodes the next node depends on */
} xla_chain;

/* A node of the frontier and its measured end. */
typedef struct {
  uint64_t id;
  sim_time_ps end;
} xla_dep;

static void frontier_push(xla_chain *ch, uint64_t id, sim_time_ps end)
{
  xla_dep d = {id, end};
  g_array_append_val(ch->frontier, d);
}

static uint32_t chain_add(xla_chain *ch, et_node_type type, const char *name, sim_time_ps start,
                          sim_time_ps dur, uint8_t flags, gboolean advance)
{
  uint64_t id = ch->next_id++;
  uint32_t n = et_builder_add_node(ch->b, id, type, name, dur, flags | ET_FLAG_HAS_START);
  et_builder_set_start(ch->b, n, start);
  for (guint i = 0; i < ch->frontier->len; i++)
    et_builder_add_dep(ch->b, n, g_array_index(ch->frontier, xla_dep, i).id, TRUE, TRUE); /* execution order: data_deps and ctrl_deps, for V1 and V3 feeders */
  if (advance) {
    g_array_set_size(ch->frontier, 0);
    frontier_push(ch, id, start + dur);
  }
  return n;
}

/* The idle time [start, start + dur) before the chain's next op.  It
 * follows only the frontier node that ended last on the measured timeline
 * (the first of them on ties); the next op also depends on the others
 * directly, so when that binding node ends earlier in a what-if the op
 * moves with it and the others still hold it: idle is never measured
 * waiting replayed after everything (the rule of kineto_graph.c). */
static void chain_idle(xla_chain *ch, sim_time_ps start, sim_time_ps dur)
{
  guint bind = 0;
  for (guint i = 1; i < ch->frontier->len; i++)
    if (g_array_index(ch->frontier, xla_dep, i).end > g_array_index(ch->frontier, xla_dep, bind).end)
      bind = i;
  uint64_t id = ch->next_id++;
  uint32_t n = et_builder_add_node(ch->b, id, ET_NODE_COMP, "idle_gap", dur, ET_FLAG_DELAY | ET_FLAG_HAS_START);
  et_builder_set_start(ch->b, n, start);
  if (ch->frontier->len) {
    et_builder_add_dep(ch->b, n, g_array_index(ch->frontier, xla_dep, bind).id, TRUE, TRUE);
    g_array_remove_index(ch->frontier, bind);
  }
  frontier_push(ch, id, start + dur);
}

static void comm_init(et_comm *cm)
{
  memset(cm, 0, sizeof *cm);
  cm->group = ET_GROUP_WORLD;
  cm->pg_name = ET_NONE;
  cm->split = ET_NONE;
  cm->src = cm->dst = cm->tag = cm->root = -1;
  cm->coll = ET_COLL_NONE;
}

/* Emits the SEND/RECV nodes of a permute/send/recv for device dev, with
 * consecutive node ids (not advancing the chain); *count receives how many. */
static gboolean p2p_nodes(xla_ctx *c, xla_chain *ch, xla_info *in, const xla_op *op, sim_time_ps dur,
                          int64_t dev, int rank, uint32_t *counter, uint32_t *count, GError **error)
{
  uint32_t k = counter[in->index]++;
  uint64_t tag64 = (uint64_t) k * c->infos->len + in->index;
  *count = 0;
  if (tag64 > INT32_MAX) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_LIMIT, "%s: too many point-to-point operations for 31-bit tags",
                c->source);
    return FALSE;
  }
  for (uint32_t i = 0; i < in->hlo.n_pairs; i++) {
    int64_t s = in->hlo.pairs[2 * i], t = in->hlo.pairs[2 * i + 1];
    if (s == t)
      continue;  /* a device "sending" to itself moves nothing over the network */
    for (int pass = 0; pass < 2; pass++) {
      gboolean is_send = pass == 0;
      if (is_send ? (s != dev || in->kind == FE_HLO_RECV) : (t != dev || in->kind == FE_HLO_SEND))
        continue;
      int64_t peer = is_send ? t : s;
      int pr = peer >= 0 && peer < c->n_devices ? c->dev_rank[peer] : -1;
      if (pr < 0) {
        c->rep->missing_peers++;
        continue;
      }
      uint32_t n = chain_add(ch, is_send ? ET_NODE_COMM_SEND : ET_NODE_COMM_RECV, in->short_name, op->start,
                             dur, 0, FALSE);
      et_comm cm;
      comm_init(&cm);
      cm.bytes = in->hlo.bytes;
      cm.src = is_send ? rank : pr;
      cm.dst = is_send ? pr : rank;
      cm.tag = (int32_t) tag64;
      et_builder_set_comm(ch->b, n, &cm, NULL, NULL, 0);
      c->rep->comm_bytes += cm.bytes;
      (*count)++;
    }
  }
  return TRUE;
}

/* The state of one rank's graph construction (xla_build_rank and its
 * phases): the chip's ops in (stream, time) order, the async pairing of
 * pair_async, and the nodes emitted for each async start so that the op
 * after its done can wait for them. */
typedef struct {
  xla_ctx *c;
  et_workload *w;
  xla_chip *chip;
  int rank;
  xla_chain ch;
  const xla_op *ops;
  guint n;
  uint32_t *counter;     /* per info: point-to-point executions so far (tags) */
  int64_t *partner;      /* async start: index of its done; done: index of its start; else -1 */
  gboolean *as_start;    /* a sync-looking collective that a later done closes (trace JSON naming) */
  uint64_t *start_node;  /* first node id emitted for an async start */
  uint32_t *start_count; /* nodes emitted for it */
} xla_build;

/* Pairs a done with its start: the open start its operand names, else the
 * oldest open start of its kind, else (trace JSON) the unpaired sync op
 * "<kind>.N" of "<kind>-done.N" within XLA_MAX_LOOKBACK ops.  O(ops x
 * XLA_MAX_OPEN) worst case. */
static void pair_done(xla_build *b, GArray *open, guint i)
{
  xla_ctx *c = b->c;
  const xla_op *ops = b->ops;
  xla_info *in = c->infos->pdata[ops[i].info];
  const char *want = in->parsed ? in->hlo.operand0_name : NULL;
  guint hit = G_MAXUINT;
  for (guint j = 0; j < open->len && hit == G_MAXUINT; j++) {
    xla_info *s = c->infos->pdata[ops[g_array_index(open, guint, j)].info];
    if (want && strcmp(s->short_name, want) == 0)
      hit = j;
  }
  for (guint j = 0; j < open->len && hit == G_MAXUINT; j++) {
    xla_info *s = c->infos->pdata[ops[g_array_index(open, guint, j)].info];
    if (s->kind == in->kind)
      hit = j;
  }
  if (hit != G_MAXUINT) {
    guint si = g_array_index(open, guint, hit);
    b->partner[si] = i;
    b->partner[i] = si;
    g_array_remove_index(open, hit);
    return;
  }
  const char *dn = in->short_name;
  const char *d = strstr(dn, "-done");
  char *want_sync = d ? g_strdup_printf("%.*s%s", (int) (d - dn), dn, d + 5) : NULL;
  for (guint k = i; want_sync && k-- > 0 && i - k <= XLA_MAX_LOOKBACK && ops[k].stream == ops[i].stream;) {
    xla_info *s = c->infos->pdata[ops[k].info];
    if (s->kind == in->kind && s->phase == FE_HLO_SYNC && b->partner[k] < 0 && strcmp(s->short_name, want_sync) == 0) {
      b->partner[k] = i;
      b->partner[i] = k;
      b->as_start[k] = TRUE;
      break;
    }
  }
  g_free(want_sync);
}

/* Phase 1: the async start/done pairs of every stream. */
static void pair_async(xla_build *b)
{
  GArray *open = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < b->n; i++) {
    b->partner[i] = -1;
    b->start_node[i] = UINT64_MAX;
    if (i > 0 && b->ops[i].stream != b->ops[i - 1].stream)
      g_array_set_size(open, 0);
    xla_info *in = b->c->infos->pdata[b->ops[i].info];
    if (in->kind == FE_HLO_OTHER || in->kind == FE_HLO_SEND || in->kind == FE_HLO_RECV)
      continue;
    if (in->phase == FE_HLO_START) {
      /* Bound the open list (and so the work per done): XLA keeps a handful
       * of collectives in flight; the oldest beyond the bound stays unmatched. */
      if (open->len == XLA_MAX_OPEN)
        g_array_remove_index(open, 0);
      g_array_append_val(open, i);
    } else if (in->phase == FE_HLO_DONE) {
      pair_done(b, open, i);
    }
  }
  g_array_free(open, TRUE);
}

/* A collective without a usable size: an error under --strict, else a
 * COMM node replayed at its measured duration (never free), warned. */
static gboolean emit_unsized(xla_build *b, xla_info *in, const xla_op *op, GError **error)
{
  xla_ctx *c = b->c;
  c->rep->unsized++;
  if (c->opt->strict) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: chip %" G_GINT64_FORMAT ": collective %s has no usable size (%s); "
                "drop --strict to replay it as compute", c->source, b->chip->global_id, in->short_name,
                in->unsized_reason ? in->unsized_reason : "unknown");
    return FALSE;
  }
  xla_warn(c, g_strdup_printf("collective %s has no usable size (%s): replayed at its measured duration, it "
                          "does not respond to the network", in->short_name,
                          in->unsized_reason ? in->unsized_reason : "?"));
  uint32_t un = chain_add(&b->ch, ET_NODE_COMM_COLL, in->short_name, op->start, op->dur, ET_FLAG_REPLAY, TRUE);
  et_comm ucm;
  comm_init(&ucm);
  ucm.coll = (uint8_t) coll_of(in->kind);
  et_builder_set_comm(b->ch.b, un, &ucm, NULL, NULL, 0);
  c->rep->replayed_collectives++;
  return TRUE;
}

/* A sized collective (or permute/send/recv) starting at op i, lasting dur
 * (to its done's end when async): its COMM node(s), recorded for the done
 * when async. */
static gboolean emit_collective(xla_build *b, xla_info *in, guint i, gboolean async, sim_time_ps dur,
                                GError **error)
{
  xla_ctx *c = b->c;
  const xla_op *op = &b->ops[i];
  if (in->kind == FE_HLO_COLLECTIVE_PERMUTE || in->kind == FE_HLO_SEND || in->kind == FE_HLO_RECV) {
    uint64_t first = b->ch.next_id;
    uint32_t cnt = 0;
    if (!p2p_nodes(c, &b->ch, in, op, dur, b->chip->global_id, b->rank, b->counter, &cnt, error))
      return FALSE;
    if (!async && cnt) {
      g_array_set_size(b->ch.frontier, 0);
      for (uint32_t j = 0; j < cnt; j++)
        frontier_push(&b->ch, first + j, op->start + dur);
    }
    if (async) {
      b->start_node[i] = first;
      b->start_count[i] = cnt;
    }
    return TRUE;
  }
  uint32_t gidx;
  const char *pg;
  gboolean partial;
  if (!comm_group(c, b->w, in, b->chip->global_id, &gidx, &pg, &partial, error))
    return FALSE;
  uint64_t id = b->ch.next_id;
  /* A group whose members are not all in the profile cannot be
   * simulated: its measured time is replayed (never free). */
  uint32_t node = chain_add(&b->ch, ET_NODE_COMM_COLL, in->short_name, op->start, dur,
                            partial ? ET_FLAG_REPLAY : 0, !async);
  if (partial)
    c->rep->replayed_collectives++;
  et_comm cm;
  comm_init(&cm);
  cm.bytes = in->hlo.bytes;
  cm.coll = (uint8_t) coll_of(in->kind);
  cm.group = gidx;
  if (in->kind == FE_HLO_COLLECTIVE_BROADCAST)
    cm.root = et_workload_group(b->w, gidx)->ranks[0];
  et_builder_set_comm(b->ch.b, node, &cm, pg, NULL, 0);
  c->rep->comm_bytes += cm.bytes;
  if (async) {
    b->start_node[i] = id;
    b->start_count[i] = 1;
  }
  return TRUE;
}

/* Phase 2, one op: the idle before it, then a compute node, the end of an
 * async pair (the next op waits for the collective's nodes), an unsized
 * or a sized collective.  *prev_end is the chain's measured end so far. */
static gboolean emit_op(xla_build *b, guint i, sim_time_ps *prev_end, GError **error)
{
  xla_ctx *c = b->c;
  const xla_op *op = &b->ops[i];
  xla_info *in = c->infos->pdata[op->info];
  if (i == 0 || op->stream != b->ops[i - 1].stream) {
    g_array_set_size(b->ch.frontier, 0);
    *prev_end = op->start;
  }
  sim_time_ps end = op->start + op->dur;
  if (op->start > *prev_end && !c->opt->no_gaps)
    chain_idle(&b->ch, *prev_end, op->start - *prev_end);
  if (op->start < *prev_end) {
    /* Ops of one chain that overlap in the profile are serialised by the
     * chain: count them and the time the replay adds. */
    c->rep->overlapped_ops++;
    c->rep->overlap_added_ps += MIN(op->dur, *prev_end - op->start);
  }
  if (end > *prev_end)
    *prev_end = end;
  c->rep->ops++;
  if (in->kind == FE_HLO_OTHER) {
    c->rep->compute_ops++;
    chain_add(&b->ch, ET_NODE_COMP, in->short_name, op->start, op->dur, 0, TRUE);
    return TRUE;
  }
  if (in->phase == FE_HLO_DONE) {
    int64_t si = b->partner[i];
    if (si < 0) {
      if (in->kind != FE_HLO_SEND && in->kind != FE_HLO_RECV)
        c->rep->unmatched_dones++;
    } else {
      for (uint32_t j = 0; j < b->start_count[si]; j++)
        frontier_push(&b->ch, b->start_node[si] + j, end); /* the collective's nodes end with the done */
      c->rep->async_pairs++;
    }
    return TRUE;
  }
  c->rep->collectives[in->kind]++;
  if (!in->sized)
    return emit_unsized(b, in, op, error);
  gboolean async = in->phase == FE_HLO_START || b->as_start[i];
  sim_time_ps dur = op->dur;
  if (async) {
    if (b->partner[i] >= 0)
      dur = b->ops[b->partner[i]].start + b->ops[b->partner[i]].dur - op->start;
    else
      c->rep->unmatched_starts++;
  }
  return emit_collective(b, in, i, async, dur, error);
}

/* One rank's graph: pair the async ops, then emit every op in (stream,
 * time) order as a chain per stream.  O(ops x XLA_MAX_OPEN) worst case. */
et_graph *xla_build_rank(xla_ctx *c, et_workload *w, xla_chip *chip, int rank, GError **error)
{
  const char *dev = chip->gpu ? "GPU" : "TPU";
  char *src = chip->replica_of < 0
                  ? g_strdup_printf("%s:/device:%s:%" G_GINT64_FORMAT, c->paths[chip->file], dev, chip->local_id)
                  : g_strdup_printf("device %" G_GINT64_FORMAT " (replays %s:/device:%s:%" G_GINT64_FORMAT ")",
                                    chip->global_id, c->paths[chip->file], dev, chip->local_id);
  guint n = chip->ops->len;
  xla_build b = {
    .c = c, .w = w, .chip = chip, .rank = rank,
    .ch = {et_builder_new(src), 0, g_array_new(FALSE, FALSE, sizeof(xla_dep))},
    .ops = (const xla_op *) chip->ops->data, .n = n,
    .counter = g_new0(uint32_t, c->infos->len),
    .partner = g_new(int64_t, n),
    .as_start = g_new0(gboolean, n),
    .start_node = g_new(uint64_t, n),
    .start_count = g_new0(uint32_t, n),
  };
  g_free(src);
  pair_async(&b);
  if (n == 0 && chip->gpu) {
    /* A GPU plane without kernels in the window (TensorFlow writes planes
     * for every visible GPU): a rank that idles through the step. */
    chain_idle(&b.ch, 0, MAX(chip->measured, 0));
    c->rep->idle_gpus++;
  }
  gboolean ok = TRUE;
  sim_time_ps prev_end = 0;
  for (guint i = 0; i < n && ok; i++)
    ok = emit_op(&b, i, &prev_end, error);
  g_free(b.start_node);
  g_free(b.start_count);
  g_free(b.as_start);
  g_array_free(b.ch.frontier, TRUE);
  g_free(b.partner);
  g_free(b.counter);
  if (!ok) {
    et_builder_free(b.ch.b);
    return NULL;
  }
  return et_builder_finish(b.ch.b, ET_BUILD_STRICT, error);
}

/* Keeps the ops inside the selected step window of each chip. */
gboolean xla_select_steps(xla_ctx *c, sim_time_ps *window_len, GError **error)
{
  xla_chip *ref = NULL;
  for (guint i = 0; i < c->chips->len && !ref; i++)
    if (((xla_chip *) c->chips->pdata[i])->steps->len)
      ref = c->chips->pdata[i];
  if (!ref) {
    if (c->opt->step_marker) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s: no XLA Modules or Steps event starts with the step marker \"%s\"; "
                  "list the module names with `wisp inspect` and pick one", c->source, c->opt->step_marker);
      return FALSE;
    }
    return TRUE;
  }
  c->rep->steps = ref->steps->len / 2;
  for (guint i = 0; i < c->chips->len; i++) {
    xla_chip *ch = c->chips->pdata[i];
    GArray *st = ch->steps->len ? ch->steps : ref->steps;
    guint ns = st->len / 2;
    sim_time_ps *s = (sim_time_ps *) st->data;
    sim_time_ps lo, hi;
    if (c->opt->step_index >= 0) {
      if ((guint) c->opt->step_index >= ns) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                    "%s: step %d requested but chip %" G_GINT64_FORMAT " has %u steps",
                    c->source, c->opt->step_index, ch->global_id, ns);
        return FALSE;
      }
      lo = s[2 * c->opt->step_index];
      hi = s[2 * c->opt->step_index + 1];
    } else {
      lo = s[0];
      hi = s[1];
      for (guint k = 0; k < ns; k++) {
        lo = MIN(lo, s[2 * k]);
        hi = MAX(hi, s[2 * k + 1]);
      }
    }
    window_len[i] = hi - lo;
    guint keep = 0;
    for (guint k = 0; k < ch->ops->len; k++) {
      xla_op *op = &g_array_index(ch->ops, xla_op, k);
      if (op->start >= lo && op->start < hi)
        g_array_index(ch->ops, xla_op, keep++) = *op;
      else
        c->rep->outside_steps++;
    }
    g_array_set_size(ch->ops, keep);
  }
  return TRUE;
}

gboolean xla_assign_ids(xla_ctx *c)
{
  GHashTable *seen = g_hash_table_new(g_int64_hash, g_int64_equal);
  gboolean disjoint = TRUE;
  int64_t max_per_file = 0;
  for (guint i = 0; i < c->chips->len; i++) {
    xla_chip *ch = c->chips->pdata[i];
    if (g_hash_table_contains(seen, &ch->local_id))
      disjoint = FALSE;
    g_hash_table_add(seen, &ch->local_id);
    max_per_file = MAX(max_per_file, ch->local_id + 1);
  }
  g_hash_table_unref(seen);
  for (guint i = 0; i < c->chips->len; i++) {
    xla_chip *ch = c->chips->pdata[i];
    ch->global_id = disjoint ? ch->local_id : ch->file * max_per_file + ch->local_id;
  }
  if (!disjoint && c->rep->n_files > 1)
    xla_warn(c, g_strdup_printf("files reuse chip numbers: chip N of file h is device h*%" G_GINT64_FORMAT
                            "+N (files in argument order)", max_per_file));
  qsort(c->chips->pdata, c->chips->len, sizeof(gpointer), xla_cmp_chip);
  return TRUE;
}
