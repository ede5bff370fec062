/* kineto_annot.c: the module path of every GPU op, from the annotation
 * ranges around its launch (kineto_extract_internal.h, kt_x_modules).
 *
 * PyTorch's profiler writes a module's forward as a CPU range on the
 * thread that runs it: with_modules (with_stack) as python_function
 * "nn.Module: TransformerLayer_3" (class name, then the instance number
 * among that class's modules), record_function as user_annotation.  The
 * kernels the module launches are launched inside it, so the ranges that
 * contain a kernel's launch call name its modules, outermost first.
 * Backward kernels run on autograd's thread outside any module range, so
 * they carry none (doc/kineto.md).  Ranges are assumed nested on their
 * thread; a range that overlaps without nesting is still counted around
 * the launches it contains.
 *
 * Cost: O(A log A) to sort the A ranges per thread, O(n log n) for the n
 * launches, O(n d) for the sweep and the paths (d: nesting depth).
 */
#include "config.h"

#include "frontends/kineto_extract_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  int64_t thread;              /* kt_thread_key of the event */
  sim_time_ps ts, end;
  uint32_t idx;                /* annotation: event index; launch: op index */
} span_rec;

/* By thread, then start, then the longer (enclosing) first, then index. */
static int cmp_span(const void *pa, const void *pb)
{
  const span_rec *a = pa, *b = pb;
  if (a->thread != b->thread)
    return a->thread < b->thread ? -1 : 1;
  if (a->ts != b->ts)
    return a->ts < b->ts ? -1 : 1;
  if (a->end != b->end)
    return a->end > b->end ? -1 : 1;
  return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* The path of the open ranges stack[0 .. n) that contain time at, as an
 * index into r->modules (added when new; seen: path -> index + 1). */
static uint32_t path_index(const kt_trace *t, kt_rank *r, GHashTable *seen, const span_rec *stack, int n,
                           sim_time_ps at, GString *buf)
{
  g_string_truncate(buf, 0);
  for (int k = 0; k < n; k++) {
    if (stack[k].end < at)
      continue; /* ended before the launch (not nested with a later range) */
    const char *name = kt_str(t, kt_x_ev(t, stack[k].idx)->name);
    if (g_str_has_prefix(name, "nn.Module: "))
      name += strlen("nn.Module: ");
    if (buf->len)
      g_string_append_c(buf, '/');
    g_string_append(buf, name);
  }
  if (buf->len == 0)
    return KT_NONE;
  gpointer v = g_hash_table_lookup(seen, buf->str);
  if (v)
    return GPOINTER_TO_UINT(v) - 1;
  char *path = g_strdup(buf->str);
  g_ptr_array_add(r->modules, path);
  g_hash_table_insert(seen, path, GUINT_TO_POINTER(r->modules->len));
  return r->modules->len - 1;
}

void kt_x_modules(kt_xctx *c)
{
  const kt_trace *t = c->t;
  kt_rank *r = c->r;
  GArray *ann = g_array_new(FALSE, FALSE, sizeof(span_rec)), *lau = g_array_new(FALSE, FALSE, sizeof(span_rec));
  for (guint i = 0; i < t->events->len; i++) {
    const kt_event *e = kt_x_ev(t, i);
    if (e->kind == KT_EV_ANNOT) {
      span_rec s = { kt_thread_key(e), e->ts, e->ts + e->dur, i };
      g_array_append_val(ann, s);
    }
  }
  for (guint i = 0; ann->len && i < r->ops->len; i++) {
    const kt_op *op = &g_array_index(r->ops, kt_op, i);
    if (op->launch == KT_NONE)
      continue;
    const kt_event *l = kt_x_ev(t, op->launch);
    span_rec s = { kt_thread_key(l), l->ts, l->ts + l->dur, i };
    g_array_append_val(lau, s);
  }
  if (lau->len > 0) {
    g_array_sort(ann, cmp_span);
    g_array_sort(lau, cmp_span);
    r->modules = g_ptr_array_new_with_free_func(g_free);
    r->op_module = g_new(uint32_t, r->ops->len);
    for (guint i = 0; i < r->ops->len; i++)
      r->op_module[i] = KT_NONE;
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    GArray *stack = g_array_new(FALSE, FALSE, sizeof(span_rec));
    GString *buf = g_string_new(NULL);
    guint a = 0;
    int64_t thread = 0;
    for (guint i = 0; i < lau->len; i++) {
      const span_rec *l = &g_array_index(lau, span_rec, i);
      if (i == 0 || l->thread != thread) {
        g_array_set_size(stack, 0);
        thread = l->thread;
        while (a < ann->len && g_array_index(ann, span_rec, a).thread < thread)
          a++;
      }
      /* Open every range of this thread that starts at or before the launch. */
      for (; a < ann->len && g_array_index(ann, span_rec, a).thread == thread &&
             g_array_index(ann, span_rec, a).ts <= l->ts; a++) {
        const span_rec *s = &g_array_index(ann, span_rec, a);
        while (stack->len && g_array_index(stack, span_rec, stack->len - 1).end <= s->ts)
          g_array_set_size(stack, stack->len - 1);
        g_array_append_val(stack, *s);
      }
      while (stack->len && g_array_index(stack, span_rec, stack->len - 1).end < l->ts)
        g_array_set_size(stack, stack->len - 1);
      r->op_module[l->idx] = path_index(t, r, seen, (const span_rec *)stack->data, (int)stack->len, l->ts, buf);
    }
    g_string_free(buf, TRUE);
    g_array_free(stack, TRUE);
    g_hash_table_destroy(seen);
  }
  g_array_free(ann, TRUE);
  g_array_free(lau, TRUE);
}
