/* kineto_steps.c: the step window of one rank's trace: its ProfilerStep
 * markers, the steps with GPU work, the selection (--step, --steps) and
 * the window's bounds.  O(steps log steps + events in the checks). */
#include "config.h"

#include "frontends/kineto_extract_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  int64_t n;
  uint32_t ev;
} step_ref;

static int cmp_step(const void *a, const void *b)
{
  const step_ref *x = a, *y = b;
  return x->n < y->n ? -1 : x->n > y->n;
}

/* Time a GPU op is attributed to: its launch when known, else its own start. */
static sim_time_ps gpu_anchor(kt_xctx *c, const kt_event *e)
{
  if (e->correlation != KT_ABSENT) {
    gpointer v = g_hash_table_lookup(c->launch_by_corr, &e->correlation);
    if (v)
      return kt_x_ev(c->t, GPOINTER_TO_UINT(v) - 1)->ts;
  }
  return e->ts;
}

/* Whether any GPU op is anchored in [ws, we); O(events). */
static gboolean step_has_gpu(kt_xctx *c, sim_time_ps ws, sim_time_ps we)
{
  for (guint i = 0; i < c->t->events->len; i++) {
    const kt_event *e = kt_x_ev(c->t, i);
    if (e->kind != KT_EV_KERNEL && e->kind != KT_EV_MEMCPY && e->kind != KT_EV_MEMSET)
      continue;
    sim_time_ps a = gpu_anchor(c, e);
    if (a >= ws && a < we)
      return TRUE;
  }
  return FALSE;
}

/* Why the step with marker se is incomplete, or NULL when it is not:
 * it launched no GPU work, or nothing in the trace ends after its marker
 * (the trace was cut inside the step).  O(events). */
static const char *step_incomplete(kt_xctx *c, const kt_event *se)
{
  if (!step_has_gpu(c, se->ts, se->ts + se->dur))
    return "launched no GPU work";
  sim_time_ps end = se->ts + se->dur, last = 0;
  for (guint i = 0; i < c->t->events->len; i++) {
    const kt_event *e = kt_x_ev(c->t, i);
    if (e != se && e->ts + e->dur > last)
      last = e->ts + e->dur;
  }
  /* Skipped events (CPU ops, runtime calls) count too; their end is only
   * known to the microsecond, so it must be past the marker's end by one. */
  if (c->t->have_end && c->t->end_max_us - c->t->origin_us > (end + SIM_PS_PER_US - 1) / SIM_PS_PER_US)
    last = end + 1;
  if (last <= end)
    return "cut by the trace's end: nothing in the trace ends after its marker";
  return NULL;
}

/* Records a step left out of the window and why (the report prints it). */
static void note_dropped(kt_rank *r, int n, const char *why)
{
  if (r->steps_dropped == NULL)
    r->steps_dropped = g_string_new(NULL);
  else
    g_string_append(r->steps_dropped, ", ");
  g_string_append_printf(r->steps_dropped, "#%d (%s)", n, why);
  kt_x_rank_warn(r, "ProfilerStep#%d dropped as incomplete: %s", n, why);
}

/* The step markers of the trace, numbered (vLLM / SGLang markers by start
 * time) and sorted by number, duplicates counted and dropped; sets
 * r->n_steps. */
static GArray *collect_steps(kt_xctx *c)
{
  kt_trace *t = c->t;
  kt_rank *r = c->r;
  GArray *steps = g_array_new(FALSE, FALSE, sizeof(step_ref));
  for (guint i = 0; i < t->events->len; i++) {
    const kt_event *e = kt_x_ev(t, i);
    if (e->kind != KT_EV_STEP)
      continue;
    gboolean dup = FALSE;
    for (guint k = 0; k < steps->len && e->aux != KT_ABSENT; k++)
      if (g_array_index(steps, step_ref, k).n == e->aux)
        dup = TRUE;
    if (dup) {
      kt_count_skip(r->skipped, "duplicate ProfilerStep range (first kept)", 1);
      continue;
    }
    step_ref s = { e->aux, i };
    g_array_append_val(steps, s);
  }
  /* vLLM / SGLang markers carry no number: number every step by start time
   * (sort_by_ts orders event indices; ProfilerStep numbers are kept). */
  gboolean unnumbered = FALSE, by_card = c->opt->card && c->opt->card->inference && steps->len > 0;
  for (guint k = 0; k < steps->len; k++)
    unnumbered |= g_array_index(steps, step_ref, k).n == KT_ABSENT;
  /* A card whose phase is inference makes ProfilerStep steps the model
   * executions (a generate loop that steps the profiler per token), numbered
   * by start time like the vLLM / SGLang markers (doc/metrics.md). */
  gboolean markers = unnumbered;
  if (by_card && !markers)
    kt_x_rank_warn(r, "the card's workload.model.phase is inference: ProfilerStep#%d..#%d are taken as model "
                   "executions 0..%u in start order", (int)g_array_index(steps, step_ref, 0).n,
                   (int)g_array_index(steps, step_ref, steps->len - 1).n, steps->len - 1);
  unnumbered |= by_card;
  r->inference_markers = unnumbered;
  if (unnumbered) {
    GArray *idx = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    for (guint k = 0; k < steps->len; k++)
      g_array_append_val(idx, g_array_index(steps, step_ref, k).ev);
    kt_x_sort_by_ts(t, idx);
    for (guint k = 0; k < steps->len; k++)
      g_array_index(steps, step_ref, k) = (step_ref){ (int64_t)k, g_array_index(idx, uint32_t, k) };
    g_array_free(idx, TRUE);
    if (markers)
      kt_x_rank_warn(r, "steps are vLLM/SGLang markers numbered 0..%u by start time", steps->len ? steps->len - 1 : 0);
  }
  g_array_sort(steps, cmp_step);
  r->n_steps = (int)steps->len;
  return steps;
}

/* The steps of the window among the n sorted steps s, as the indices
 * [*lo, *hi]: --step N, --steps A..B or every step, dropping steps shown
 * incomplete from the ends (each noted), else the last complete step.
 * FALSE (error set) when the steps asked for are not in the trace. */
static gboolean pick_steps(kt_xctx *c, const step_ref *s, guint n, guint *lo_out, guint *hi_out, GError **error)
{
  const kt_trace *t = c->t;
  kt_rank *r = c->r;
  guint lo = 0, hi = n - 1;
  if (c->opt->step >= 0) {
    gboolean found = FALSE;
    for (guint k = 0; k < n; k++)
      if (s[k].n == c->opt->step) {
        lo = hi = k;
        found = TRUE;
      }
    if (!found) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: no ProfilerStep#%d (the trace has steps %d..%d)",
                  t->path, c->opt->step, r->step_first, r->step_last);
      return FALSE;
    }
    /* An explicit step is used even when incomplete, with a warning. */
    const char *why = step_incomplete(c, kt_x_ev(t, s[lo].ev));
    if (why)
      kt_x_rank_warn(r, "ProfilerStep#%d (--step) %s", (int)s[lo].n, why);
  } else {
    if (c->opt->step_lo >= 0) {
      /* --steps A..B: the steps numbered A..B. */
      guint k = 0;
      while (k < n && s[k].n < c->opt->step_lo)
        k++;
      guint m = k;
      while (m < n && s[m].n <= c->opt->step_hi)
        m++;
      if (m == k) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                    "%s: --steps %d..%d: no ProfilerStep in that range (the trace has steps %d..%d)", t->path,
                    c->opt->step_lo, c->opt->step_hi, r->step_first, r->step_last);
        return FALSE;
      }
      lo = k;
      hi = m - 1;
    }
    /* A step is dropped only when it is shown to be incomplete (no GPU
     * work, or cut by the trace's end), and only from the ends of the
     * window, which must stay contiguous; each drop is recorded with its
     * reason.  The default (one step) is the last complete one. */
    const char *why_lo = NULL, *why_hi = NULL;
    guint lo0 = lo, hi0 = hi;
    while (hi > lo && (why_hi = step_incomplete(c, kt_x_ev(t, s[hi].ev))) != NULL) {
      note_dropped(r, (int)s[hi].n, why_hi);
      hi--;
    }
    if (c->opt->all_steps || c->opt->step_lo >= 0) {
      while (lo < hi && (why_lo = step_incomplete(c, kt_x_ev(t, s[lo].ev))) != NULL) {
        note_dropped(r, (int)s[lo].n, why_lo);
        lo++;
      }
    } else {
      lo = hi;
    }
    if (lo == hi && step_incomplete(c, kt_x_ev(t, s[hi].ev)) != NULL) {
      /* Nothing complete: keep the range asked for rather than guess. */
      kt_x_rank_warn(r, "no complete ProfilerStep among #%d..#%d (%s); using them anyway", (int)s[lo0].n,
                (int)s[hi0].n, step_incomplete(c, kt_x_ev(t, s[hi].ev)));
      if (r->steps_dropped) {
        g_string_free(r->steps_dropped, TRUE);
        r->steps_dropped = NULL;
      }
      hi = hi0;
      lo = c->opt->all_steps || c->opt->step_lo >= 0 ? lo0 : hi0;
    }
  }
  *lo_out = lo;
  *hi_out = hi;
  return TRUE;
}

/* Chooses the window [*ws, *we) on the CPU timeline (*have FALSE: no
 * steps, or the whole trace asked for) and records the steps used. */
gboolean kt_x_choose_window(kt_xctx *c, sim_time_ps *ws, sim_time_ps *we, gboolean *have, GError **error)
{
  kt_trace *t = c->t;
  kt_rank *r = c->r;
  GArray *steps = collect_steps(c);
  *have = FALSE;
  r->step_first = r->step_last = r->step_used = r->step_used_first = -1;
  if (steps->len == 0 || c->opt->whole_trace) {
    if (steps->len) {
      r->step_first = (int)g_array_index(steps, step_ref, 0).n;
      r->step_last = (int)g_array_index(steps, step_ref, steps->len - 1).n;
    }
    g_array_free(steps, TRUE);
    if (c->opt->step >= 0) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: --step %d asked for, but the trace has no ProfilerStep",
                  t->path, c->opt->step);
      return FALSE;
    }
    return TRUE;
  }
  step_ref *s = (step_ref *)steps->data;
  r->step_first = (int)s[0].n;
  r->step_last = (int)s[steps->len - 1].n;
  guint lo, hi;
  if (!pick_steps(c, s, steps->len, &lo, &hi, error)) {
    g_array_free(steps, TRUE);
    return FALSE;
  }
  r->step_used_first = (int)s[lo].n;
  r->n_steps_used = (int)(hi - lo + 1);
  *ws = kt_x_ev(t, s[lo].ev)->ts;
  *we = kt_x_ev(t, s[hi].ev)->ts + kt_x_ev(t, s[hi].ev)->dur;
  r->step_used = (int)s[hi].n;
  r->all_steps_used = lo != hi;
  /* The thread that ran the (last) step marker: its CPU work up to the
   * marker's end is part of the step (kineto_graph.c, host_chains). */
  r->step_thread = kt_thread_key(kt_x_ev(t, s[hi].ev));
  r->have_step_thread = TRUE;
  *have = TRUE;
  g_array_free(steps, TRUE);
  return TRUE;
}
