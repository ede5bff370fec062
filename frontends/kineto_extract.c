/* kineto_extract.c: from one parsed trace to the GPU ops of the step window,
 * with communication kernels classified, sized and assigned to groups, and
 * candidate cross-stream dependencies from synchronisation calls.
 *
 * Costs: O(E log E) for sorting the kept events (E = kept events); kernel to
 * CPU-op linking is O(1) by correlation / External id hash lookups, or
 * O(log C) by binary search over the issuing thread's collective CPU ops
 * (C) for old traces linked by time containment.
 */
#include "config.h"

#include "frontends/kineto_extract_internal.h"

#include <stdlib.h>
#include <string.h>

void kt_rank_free(kt_rank *r)
{
  if (!r)
    return;
  if (r->modules)
    g_ptr_array_free(r->modules, TRUE);
  g_free(r->op_module);
  if (r->comms) {
    for (guint i = 0; i < r->comms->len; i++) {
      kt_comm *c = &g_array_index(r->comms, kt_comm, i);
      g_free(c->ranks);
      g_free(c->group_key);
      g_free(c->splits);
    }
    g_array_free(r->comms, TRUE);
  }
  g_free(r->buf_links);
  if (r->ops)
    g_array_free(r->ops, TRUE);
  g_free(r->stream_keys);
  g_free(r->stream_first);
  if (r->warnings)
    g_ptr_array_free(r->warnings, TRUE);
  if (r->steps_dropped)
    g_string_free(r->steps_dropped, TRUE);
  if (r->skipped)
    g_hash_table_destroy(r->skipped);
  if (r->sync_edges)
    g_array_free(r->sync_edges, TRUE);
  if (r->sync_targets)
    g_array_free(r->sync_targets, TRUE);
  g_free(r);
}

static int cmp_op(const void *a, const void *b)
{
  const kt_op *x = a, *y = b;
  if (x->stream != y->stream)
    return x->stream < y->stream ? -1 : 1;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return x->ev < y->ev ? -1 : x->ev > y->ev;
}

/* The lookup tables of one extraction: launches and event records by
 * correlation, CPU-side collective ops by External id and by thread (in
 * time order).  O(E log E) for E events. */
static void index_events(kt_xctx *c)
{
  const kt_trace *t = c->t;
  c->launch_by_corr = g_hash_table_new(g_int64_hash, g_int64_equal);
  c->record_by_corr = g_hash_table_new(g_int64_hash, g_int64_equal);
  c->cpu_by_ext = g_hash_table_new(g_int64_hash, g_int64_equal);
  c->cpu_by_thread = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, (GDestroyNotify)g_array_unref);
  c->op_of_event = g_new(uint32_t, t->events->len ? t->events->len : 1);
  for (guint i = 0; i < t->events->len; i++) {
    kt_event *e = &g_array_index(t->events, kt_event, i);
    c->op_of_event[i] = KT_NONE;
    if (e->kind == KT_EV_LAUNCH && e->correlation != KT_ABSENT)
      g_hash_table_insert(c->launch_by_corr, &e->correlation, GUINT_TO_POINTER(i + 1));
    else if (e->kind == KT_EV_RECORD && e->correlation != KT_ABSENT)
      g_hash_table_insert(c->record_by_corr, &e->correlation, GUINT_TO_POINTER(i + 1));
    else if (e->kind == KT_EV_CPU_COMM) {
      if (e->ext_id != KT_ABSENT && !g_hash_table_contains(c->cpu_by_ext, &e->ext_id))
        g_hash_table_insert(c->cpu_by_ext, &e->ext_id, GUINT_TO_POINTER(i + 1));
      gint64 *k = kt_x_thread_key(e);
      GArray *a = g_hash_table_lookup(c->cpu_by_thread, k);
      if (!a) {
        a = g_array_new(FALSE, FALSE, sizeof(uint32_t));
        g_hash_table_insert(c->cpu_by_thread, k, a);
      } else {
        g_free(k);
      }
      uint32_t idx = i;
      g_array_append_val(a, idx);
    }
  }
  GHashTableIter it;
  gpointer hk, hv;
  g_hash_table_iter_init(&it, c->cpu_by_thread);
  while (g_hash_table_iter_next(&it, &hk, &hv))
    kt_x_sort_by_ts(t, hv);
}

/* The GPU ops launched in the window [ws, we) (every one without a window)
 * into r->ops, with their (device, stream) keys in keys, and the window:
 * it covers the step and every selected op. */
static void select_ops(kt_xctx *c, sim_time_ps ws, sim_time_ps we, gboolean have_window, GArray *keys)
{
  const kt_trace *t = c->t;
  kt_rank *r = c->r;
  sim_time_ps gmin = SIM_TIME_MAX, gmax = 0;
  uint64_t outside = 0;
  for (guint i = 0; i < t->events->len; i++) {
    const kt_event *e = kt_x_ev(t, i);
    if (e->kind != KT_EV_KERNEL && e->kind != KT_EV_MEMCPY && e->kind != KT_EV_MEMSET)
      continue;
    uint32_t launch = KT_NONE;
    if (e->correlation != KT_ABSENT) {
      gpointer v = g_hash_table_lookup(c->launch_by_corr, &e->correlation);
      if (v)
        launch = GPOINTER_TO_UINT(v) - 1;
    }
    if (have_window) {
      sim_time_ps anchor = launch != KT_NONE ? kt_x_ev(t, launch)->ts : e->ts;
      if (anchor < ws || anchor >= we) {
        outside++;
        continue;
      }
    }
    kt_op op = { .ev = i, .start = e->ts, .end = e->ts + e->dur, .comm = KT_NONE, .launch = launch };
    if (e->kind != KT_EV_KERNEL && e->aux != KT_ABSENT && e->aux > 0) { /* a copy's bytes (average_memory_bandwidth) */
      op.bytes_lo = (uint32_t)((uint64_t)e->aux & 0xffffffffu);
      op.bytes_hi = (uint32_t)((uint64_t)e->aux >> 32);
    }
    op.stream = 0;
    g_array_append_val(r->ops, op);
    int64_t key = (int64_t)(((uint64_t)(uint32_t)e->device << 32) | (uint32_t)e->stream);
    g_array_append_val(keys, key);
    gmin = MIN(gmin, op.start);
    gmax = MAX(gmax, op.end);
  }
  if (outside)
    kt_count_skip(r->skipped, "GPU op launched outside the step window", outside);
  if (!have_window) {
    ws = r->ops->len ? gmin : 0;
    we = r->ops->len ? gmax : 0;
  }
  r->window_abs = MIN(ws, r->ops->len ? gmin : ws);
  sim_time_ps wend = MAX(we, r->ops->len ? gmax : we);
  r->window_ps = wend - r->window_abs;
  r->step_cpu_end_ps = have_window ? we - r->window_abs : r->window_ps;
}

/* Dense stream indices in key order (keys[i]: op i's stream key), op times
 * relative to the window, ops sorted by (stream, start) and the per-stream
 * ranges.  O(n log n). */
static void assign_streams(kt_rank *r, GArray *keys)
{
  GArray *sorted = g_array_copy(keys);
  g_array_sort(sorted, kt_cmp_i64);
  guint ns = 0;
  for (guint i = 0; i < sorted->len; i++)
    if (i == 0 || g_array_index(sorted, int64_t, i) != g_array_index(sorted, int64_t, ns - 1))
      g_array_index(sorted, int64_t, ns++) = g_array_index(sorted, int64_t, i);
  r->n_streams = ns;
  r->stream_keys = g_new(int64_t, ns ? ns : 1);
  if (ns)
    memcpy(r->stream_keys, sorted->data, sizeof(int64_t) * ns);
  for (guint i = 0; i < r->ops->len; i++) {
    kt_op *op = &g_array_index(r->ops, kt_op, i);
    int64_t key = g_array_index(keys, int64_t, i);
    int64_t *found = bsearch(&key, r->stream_keys, ns, sizeof(int64_t), kt_cmp_i64);
    op->stream = (uint32_t)(found - r->stream_keys);
    op->start -= r->window_abs;
    op->end -= r->window_abs;
  }
  g_array_free(sorted, TRUE);
  g_array_sort(r->ops, cmp_op);
  r->stream_first = g_new0(uint32_t, ns + 1);
  for (guint i = 0; i < r->ops->len; i++)
    r->stream_first[g_array_index(r->ops, kt_op, i).stream + 1]++;
  for (uint32_t s = 0; s < ns; s++)
    r->stream_first[s + 1] += r->stream_first[s];
}

/* The registry entry of the kernel name with string id name, or NULL:
 * looked up once per distinct name (kt_commreg_lookup walks the table).
 * O(1) amortised. */
static const kt_commreg_entry *registry_entry(kt_xctx *c, uint32_t name)
{
  static const char none = 0;
  gpointer v;
  if (g_hash_table_lookup_extended(c->reg_cache, GUINT_TO_POINTER(name), NULL, &v))
    return v == &none ? NULL : v;
  const kt_commreg_entry *e = kt_commreg_lookup(kt_str(c->t, name));
  g_hash_table_insert(c->reg_cache, GUINT_TO_POINTER(name), e ? (gpointer)e : (gpointer)&none);
  return e;
}

/* The op of every selected event and launch, and a kt_comm for every
 * communication kernel (describe_comm).  FALSE (error set) on a fatal
 * error in a kernel's description. */
static gboolean extract_comms(kt_xctx *c, GError **error)
{
  const kt_trace *t = c->t;
  kt_rank *r = c->r;
  for (guint i = 0; i < r->ops->len; i++) {
    kt_op *op = &g_array_index(r->ops, kt_op, i);
    c->op_of_event[op->ev] = i;
    if (op->launch != KT_NONE)
      c->op_of_event[op->launch] = i;
    const kt_event *e = kt_x_ev(t, op->ev);
    if (e->kind != KT_EV_KERNEL)
      continue;
    const kt_meta *m = kt_x_meta(t, e);
    const kt_commreg_entry *re = registry_entry(c, e->name);
    gboolean coll_arg = m && m->coll_name != KT_NONE;
    if (!coll_arg && (!re || re->size == KT_CR_SIZE_LOCAL)) {
      if (re) {
        if (!r->reg_local++)
          r->reg_local_first = re;
      } else if (kt_commreg_looks_like_comm(kt_str(t, e->name))) {
        if (!r->unregistered++)
          r->unregistered_first = kt_str(t, e->name);
      }
      continue;
    }
    kt_comm cm = { 0 };
    cm.op = i;
    cm.reg = re;
    kt_desc d = kt_x_describe_comm(c, &cm, e, op->launch != KT_NONE ? kt_x_ev(t, op->launch) : NULL, error);
    if (d != KT_DESC_OK) {
      g_free(cm.ranks);
      g_free(cm.group_key);
      g_free(cm.splits);
      if (d == KT_DESC_ERROR)
        return FALSE;
      continue;
    }
    op->comm = r->comms->len;
    g_array_append_val(r->comms, cm);
  }
  return TRUE;
}

/* Communication without any size source cannot be simulated: it is
 * replayed at its measured duration (kt_match_ranks marks every member of
 * such a collective); say so once per rank, naming the first such kernel
 * (unknown dtype names already warned per kernel).  O(comms). */
static void warn_unsized(kt_rank *r)
{
  const kt_trace *t = r->trace;
  uint64_t no_size = 0;
  const char *first_no_size = NULL;
  for (guint i = 0; i < r->comms->len; i++) {
    const kt_comm *cm = &g_array_index(r->comms, kt_comm, i);
    if (cm->bytes == 0 && cm->size_source && !strcmp(cm->size_source, "unknown")) {
      if (!no_size++)
        first_no_size = kt_str(t, kt_x_ev(t, g_array_index(r->ops, kt_op, cm->op).ev)->name);
    }
  }
  if (no_size)
    kt_x_rank_warn(r, "%" G_GUINT64_FORMAT " communication kernel(s) have no size (first: '%s'): no In/Out msg nelems with a "
              "dtype on the kernel or a linked CPU op (or one that is not a count), no Input Dims on a linked nccl:*/record_param_comms/c10d:: "
              "op%s%s; they are replayed at their measured duration (which includes waiting for peers) and do not "
              "respond to the network; --strict makes this an error", no_size, first_no_size,
              r->card_missing_why ? ", and the card cannot size them: " : "",
              r->card_missing_why ? r->card_missing_why : "");
}

/* Buffer links of the communication kernels (kineto_mem.c), computed once
 * here: the report says how many were linked, and the graph stage copies
 * them into the COMM nodes. */
static void link_buffers(kt_rank *r)
{
  if (!r->comms->len)
    return;
  r->buf_links = g_new(kt_buf_link, r->comms->len);
  kt_mem_stats ms;
  kt_mem_link(r, r->buf_links, &ms);
  char *line = kt_mem_summary(r->rank, &ms);
  if (line)
    g_ptr_array_add(r->warnings, line);
}

kt_rank *kt_rank_extract(kt_trace *t, int rank, int world_size, const fe_kineto_options *opt, GError **error)
{
  kt_rank *r = g_new0(kt_rank, 1);
  r->trace = t;
  r->rank = rank;
  r->ops = g_array_new(FALSE, FALSE, sizeof(kt_op));
  r->comms = g_array_new(FALSE, TRUE, sizeof(kt_comm));
  r->warnings = g_ptr_array_new_with_free_func(g_free);
  r->skipped = g_hash_table_new(g_str_hash, g_str_equal);
  r->sync_edges = g_array_new(FALSE, FALSE, sizeof(kt_edge));
  r->sync_targets = g_array_new(FALSE, FALSE, sizeof(kt_sync_target));
  kt_xctx c = { .t = t, .r = r, .opt = opt, .world = world_size };
  c.reg_cache = g_hash_table_new(g_direct_hash, g_direct_equal);
  index_events(&c);
  sim_time_ps ws = 0, we = 0;
  gboolean have_window;
  gboolean ok = kt_x_choose_window(&c, &ws, &we, &have_window, error);
  if (ok) {
    GArray *keys = g_array_new(FALSE, FALSE, sizeof(int64_t));
    select_ops(&c, ws, we, have_window, keys);
    assign_streams(r, keys);
    g_array_free(keys, TRUE);
    ok = extract_comms(&c, error);
  }
  if (ok)
    kt_x_modules(&c);
  if (ok) {
    warn_unsized(r);
    kt_x_sync_edges(&c);
    kt_sync_targets_extract(r);
    link_buffers(r);
  }
  g_hash_table_destroy(c.reg_cache);
  g_hash_table_destroy(c.launch_by_corr);
  g_hash_table_destroy(c.record_by_corr);
  g_hash_table_destroy(c.cpu_by_ext);
  g_hash_table_destroy(c.cpu_by_thread);
  g_free(c.op_of_event);
  if (!ok) {
    kt_rank_free(r);
    return NULL;
  }
  return r;
}
