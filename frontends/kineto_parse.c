/* kineto_parse.c: stream one Kineto trace file into a kt_trace.
 *
 * One pass over the tokens: top-level keys in any order (traceEvents may
 * come before or after distributedInfo); each event object is decoded into
 * a fixed scratch record (strings in reusable buffers) in place when
 * possible (kineto_decode_ip.c) or else token by token (kineto_decode.c),
 * classified when its closing brace arrives (kineto_classify.c), and
 * either appended to the compact event table or counted under a skip
 * reason.  This file reads the top level: the event array,
 * distributedInfo, baseTimeNanoseconds, deviceProperties.  Cost is O(file
 * bytes); memory is O(events kept + distinct strings kept).  A top-level
 * array (Chrome "JSON array format") is accepted as the event list.
 */
#include "config.h"

#include "frontends/kineto_parse_internal.h"
#include "frontends/fe_json_ip.h"
/* Reads the elements of an event array after its '[' up to its ']': objects
 * are events (in place when possible), anything else is counted and
 * skipped.  *idx numbers the events. */
static gboolean read_event_items(kt_parser *p, uint32_t *idx, GError **error)
{
  fe_json_tok t;
  for (;;) {
    if (p->inplace) {
      const uint8_t *q, *e;
      int r = fe_json_ip_begin(p->j, KT_P_IP_WINDOW, &q, &e, error);
      if (r < 0)
        return FALSE;
      if (r > 0) {
        if (kt_p_ip_event(p, *idx, &q, e)) {
          fe_json_ip_end(p->j, q);
          (*idx)++;
          p->t->inplace_events++;
          continue;
        }
        p->t->inplace_bails++;
      }
    }
    if (!fe_json_next(p->j, &t, error))
      return FALSE;
    if (t == FE_JSON_ARR_END)
      return TRUE;
    if (t != FE_JSON_OBJ_BEGIN) {
      /* Typed reading: counted here, reported (or refused under --strict)
       * by the loader, which knows the options (kineto.c). */
      if (!p->t->non_objects++) {
        p->t->non_object_byte = fe_json_offset(p->j);
        p->t->non_object_kind = fe_json_tok_kind(t);
      }
      kt_p_count_skip(p, "traceEvents entry that is not an object");
      if (!fe_json_skip(p->j, t, error))
        return FALSE;
      continue;
    }
    if (!kt_p_read_event(p, (*idx)++, error))
      return FALSE;
  }
}

static gboolean read_events(kt_parser *p, GError **error)
{
  fe_json_tok t;
  if (!fe_json_next(p->j, &t, error))
    return FALSE;
  if (t != FE_JSON_ARR_BEGIN) {
    fe_json_error(p->j, error, "traceEvents is not an array");
    return FALSE;
  }
  uint32_t idx = (uint32_t)p->t->events_read;
  return read_event_items(p, &idx, error);
}

/* Reads a JSON array of integers into a new kt_pg ranks array. */
static gboolean read_int_array(kt_parser *p, int **out, int *n, GError **error)
{
  fe_json_tok t;
  if (!fe_json_next(p->j, &t, error))
    return FALSE;
  if (t != FE_JSON_ARR_BEGIN)
    return fe_json_skip(p->j, t, error);
  GArray *a = g_array_new(FALSE, FALSE, sizeof(int));
  for (;;) {
    if (!fe_json_next(p->j, &t, error)) {
      g_array_free(a, TRUE);
      return FALSE;
    }
    if (t == FE_JSON_ARR_END)
      break;
    int64_t v;
    if (t == FE_JSON_NUMBER && fe_json_int(fe_json_text(p->j, NULL), &v) && v >= 0 && v <= INT32_MAX) {
      int iv = (int)v;
      g_array_append_val(a, iv);
    } else if (!fe_json_skip(p->j, t, error)) {
      g_array_free(a, TRUE);
      return FALSE;
    }
  }
  *n = (int)a->len;
  *out = (int *)g_array_free(a, FALSE);
  return TRUE;
}

static gboolean read_string_value(kt_parser *p, char **out, GError **error)
{
  fe_json_tok t;
  if (!fe_json_next(p->j, &t, error))
    return FALSE;
  if (t == FE_JSON_STRING || t == FE_JSON_NUMBER) {
    g_free(*out);
    *out = g_strdup(fe_json_text(p->j, NULL));
    return TRUE;
  }
  return fe_json_skip(p->j, t, error);
}

static gboolean read_pg_config(kt_parser *p, GError **error)
{
  fe_json_tok t;
  if (!fe_json_next(p->j, &t, error))
    return FALSE;
  if (t != FE_JSON_ARR_BEGIN)
    return fe_json_skip(p->j, t, error);
  for (;;) {
    if (!fe_json_next(p->j, &t, error))
      return FALSE;
    if (t == FE_JSON_ARR_END)
      return TRUE;
    if (t != FE_JSON_OBJ_BEGIN) {
      if (!fe_json_skip(p->j, t, error))
        return FALSE;
      continue;
    }
    kt_pg *pg = g_new0(kt_pg, 1);
    g_ptr_array_add(p->t->pgs, pg);
    for (;;) {
      if (!fe_json_next(p->j, &t, error))
        return FALSE;
      if (t == FE_JSON_OBJ_END)
        break;
      const char *k = fe_json_text(p->j, NULL);
      gboolean ok;
      if (!strcmp(k, "pg_name"))
        ok = read_string_value(p, &pg->name, error);
      else if (!strcmp(k, "pg_desc"))
        ok = read_string_value(p, &pg->desc, error);
      else if (!strcmp(k, "ranks")) {
        g_free(pg->ranks);
        pg->ranks = NULL;
        ok = read_int_array(p, &pg->ranks, &pg->n_ranks, error);
      } else
        ok = fe_json_skip_value(p->j, error);
      if (!ok)
        return FALSE;
    }
  }
}

/* distributedInfo.rank or .world_size (name): a JSON integer, or a string
 * holding one; null counts as absent.  Anything else is an error at its
 * byte (typed reading): a world_size of "abc" or 1e300 was dropped and the
 * warning said the trace had none, a rank of 0.5 said it had no rank, and
 * --strict let the inferred world size through. */
static gboolean read_dist_int(kt_parser *p, const char *name, int64_t *out, GError **error)
{
  fe_json_tok t;
  if (!fe_json_next(p->j, &t, error))
    return FALSE;
  if (t == FE_JSON_NULL)
    return TRUE;
  int64_t v;
  if ((t == FE_JSON_NUMBER || t == FE_JSON_STRING) && fe_json_int(fe_json_text(p->j, NULL), &v)) {
    *out = v;
    return TRUE;
  }
  if (t == FE_JSON_NUMBER || t == FE_JSON_STRING)
    fe_json_error(p->j, error, "distributedInfo.%s is %s '%.40s', not an integer; fix the trace", name,
                  fe_json_tok_kind(t), fe_json_text(p->j, NULL));
  else
    fe_json_error(p->j, error, "distributedInfo.%s must be an integer, found %s; fix the trace", name,
                  fe_json_tok_kind(t));
  return FALSE;
}

static gboolean read_dist_info(kt_parser *p, GError **error)
{
  fe_json_tok t;
  if (!fe_json_next(p->j, &t, error))
    return FALSE;
  if (t != FE_JSON_OBJ_BEGIN)
    return fe_json_skip(p->j, t, error);
  p->t->have_dist_info = TRUE;
  for (;;) {
    if (!fe_json_next(p->j, &t, error))
      return FALSE;
    if (t == FE_JSON_OBJ_END)
      return TRUE;
    const char *k = fe_json_text(p->j, NULL);
    gboolean ok;
    if (!strcmp(k, "rank"))
      ok = read_dist_int(p, "rank", &p->t->rank, error);
    else if (!strcmp(k, "world_size"))
      ok = read_dist_int(p, "world_size", &p->t->world_size, error);
    else if (!strcmp(k, "backend"))
      ok = read_string_value(p, &p->t->backend, error);
    else if (!strcmp(k, "pg_config"))
      ok = read_pg_config(p, error);
    else
      ok = fe_json_skip_value(p->j, error);
    if (!ok)
      return FALSE;
  }
}

static gboolean read_device_props(kt_parser *p, GError **error)
{
  fe_json_tok t;
  if (!fe_json_next(p->j, &t, error))
    return FALSE;
  if (t != FE_JSON_ARR_BEGIN)
    return fe_json_skip(p->j, t, error);
  for (;;) {
    if (!fe_json_next(p->j, &t, error))
      return FALSE;
    if (t == FE_JSON_ARR_END)
      return TRUE;
    if (t != FE_JSON_OBJ_BEGIN || p->t->device_name) {
      if (!fe_json_skip(p->j, t, error))
        return FALSE;
      continue;
    }
    for (;;) {
      if (!fe_json_next(p->j, &t, error))
        return FALSE;
      if (t == FE_JSON_OBJ_END)
        break;
      gboolean ok = !strcmp(fe_json_text(p->j, NULL), "name") ? read_string_value(p, &p->t->device_name, error)
                                                               : fe_json_skip_value(p->j, error);
      if (!ok)
        return FALSE;
    }
  }
}

kt_trace *kt_trace_parse(fe_json *j, const char *path, GError **error)
{
  return kt_trace_parse_flags(j, path, 0, error);
}

kt_trace *kt_trace_parse_flags(fe_json *j, const char *path, unsigned flags, GError **error)
{
  kt_trace *t = kt_p_trace_new(path);
  kt_parser p = { .j = j, .t = t, .inplace = !(flags & KT_PARSE_TOKENS_ONLY) };
  p.sc.name = g_string_sized_new(256);
  for (int k = 0; k < S_N; k++)
    p.sc.s[k] = g_string_sized_new(32);
  kt_p_arg_index_init(&p.args);
  gboolean ok = TRUE, saw_events = FALSE;
  fe_json_tok tok;
  if (!fe_json_next(j, &tok, error)) {
    ok = FALSE;
  } else if (tok == FE_JSON_ARR_BEGIN) {
    /* JSON array format: the whole file is the event list. */
    saw_events = TRUE;
    uint32_t idx = 0;
    ok = read_event_items(&p, &idx, error);
  } else if (tok == FE_JSON_OBJ_BEGIN) {
    for (;;) {
      if (!fe_json_next(j, &tok, error)) {
        ok = FALSE;
        break;
      }
      if (tok == FE_JSON_OBJ_END)
        break;
      const char *k = fe_json_text(j, NULL);
      if (!strcmp(k, "traceEvents")) {
        saw_events = TRUE;
        ok = read_events(&p, error);
      } else if (!strcmp(k, "distributedInfo")) {
        ok = read_dist_info(&p, error);
      } else if (!strcmp(k, "baseTimeNanoseconds")) {
        ok = kt_p_read_int_value(&p, &t->base_time_ns, error);
      } else if (!strcmp(k, "deviceProperties")) {
        ok = read_device_props(&p, error);
      } else {
        ok = fe_json_skip_value(j, error);
      }
      if (!ok)
        break;
    }
  } else {
    fe_json_error(j, error, "the top-level value is not an object or array; not a Kineto trace");
    ok = FALSE;
  }
  if (ok) {
    /* Trailing garbage after the top-level value is an error too. */
    ok = fe_json_next(j, &tok, error);
    if (ok && tok != FE_JSON_EOF) {
      fe_json_error(j, error, "unexpected data after the top-level value");
      ok = FALSE;
    }
  }
  if (ok && !saw_events) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: no traceEvents array; this is not a Kineto/Chrome trace (or it holds only metadata)", path);
    ok = FALSE;
  }
  kt_p_flush_skips(&p);
  t->bytes_read = fe_json_bytes_read(j);
  g_string_free(p.sc.name, TRUE);
  for (int k = 0; k < S_N; k++)
    g_string_free(p.sc.s[k], TRUE);
  fe_json_free(j);
  if (!ok) {
    kt_trace_free(t);
    return NULL;
  }
  return t;
}

kt_trace *kt_trace_read(const char *path, GError **error)
{
  fe_json *j = fe_json_open(path, error);
  if (!j)
    return NULL;
  return kt_trace_parse(j, path, error);
}
