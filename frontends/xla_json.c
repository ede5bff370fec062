/* xla_json.c: reading an XProf trace-viewer JSON profile (see xla.h):
 * its complete events held until the pid -> device map is known, then
 * attached to chips as XPlane ops are.  One pass over the file,
 * streaming. */
#include "config.h"

#include "frontends/xla_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- XProf trace-viewer JSON ---- */

/* One complete ("X") event held until the pid -> device map is known. */
typedef struct {
  int64_t pid;
  sim_time_ps start, dur;
  uint32_t info;
  uint32_t seq;
} xla_jop;

typedef struct {
  char *ph, *name, *arg_name, *long_name, *category;
  int64_t pid;
  gboolean has_pid, has_ts, has_dur, has_dev_off, has_dev_dur;
  int64_t ts_us, ts_frac_ps;
  sim_time_ps dur, dev_off, dev_dur;
  int64_t model_flops;
} xla_jev;

static void jev_clear(xla_jev *e)
{
  g_free(e->ph);
  g_free(e->name);
  g_free(e->arg_name);
  g_free(e->long_name);
  g_free(e->category);
  memset(e, 0, sizeof *e);
}

/* Reads a number (or a string holding one) as an integer. */
static gboolean json_int_value(fe_json *j, fe_json_tok t, int64_t *out, GError **error)
{
  if (t == FE_JSON_NUMBER || t == FE_JSON_STRING) {
    if (fe_json_int(fe_json_text(j, NULL), out))
      return TRUE;
  } else if (!fe_json_skip(j, t, error)) {
    return FALSE;
  }
  fe_json_error(j, error, "expected an integer");
  return FALSE;
}

static gboolean json_string_value(fe_json *j, fe_json_tok t, char **out, GError **error)
{
  if (t != FE_JSON_STRING) {
    if (!fe_json_skip(j, t, error))
      return FALSE;
    return TRUE;  /* non-string names are ignored */
  }
  g_free(*out);
  size_t len;
  const char *txt = fe_json_text(j, &len);
  *out = g_strndup(txt, len);
  return TRUE;
}

static gboolean json_args(fe_json *j, xla_jev *e, GError **error)
{
  fe_json_tok t;
  for (;;) {
    if (!fe_json_next(j, &t, error))
      return FALSE;
    if (t == FE_JSON_OBJ_END)
      return TRUE;
    char *key = g_strdup(fe_json_text(j, NULL));
    if (!fe_json_next(j, &t, error)) {
      g_free(key);
      return FALSE;
    }
    gboolean ok = TRUE;
    if (strcmp(key, "name") == 0)
      ok = json_string_value(j, t, &e->arg_name, error);
    else if (strcmp(key, "long_name") == 0)
      ok = json_string_value(j, t, &e->long_name, error);
    else if (strcmp(key, "hlo_category") == 0)
      ok = json_string_value(j, t, &e->category, error);
    else if (strcmp(key, "device_offset_ps") == 0)
      ok = e->has_dev_off = json_int_value(j, t, &e->dev_off, error);
    else if (strcmp(key, "device_duration_ps") == 0)
      ok = e->has_dev_dur = json_int_value(j, t, &e->dev_dur, error);
    else if (strcmp(key, "model_flops") == 0)
      ok = json_int_value(j, t, &e->model_flops, error);
    else
      ok = fe_json_skip(j, t, error);
    g_free(key);
    if (!ok)
      return FALSE;
  }
}

static gboolean json_event(fe_json *j, xla_jev *e, GError **error)
{
  fe_json_tok t;
  for (;;) {
    if (!fe_json_next(j, &t, error))
      return FALSE;
    if (t == FE_JSON_OBJ_END)
      return TRUE;
    char *key = g_strdup(fe_json_text(j, NULL));
    if (!fe_json_next(j, &t, error)) {
      g_free(key);
      return FALSE;
    }
    gboolean ok = TRUE;
    if (strcmp(key, "ph") == 0) {
      ok = json_string_value(j, t, &e->ph, error);
    } else if (strcmp(key, "name") == 0) {
      ok = json_string_value(j, t, &e->name, error);
    } else if (strcmp(key, "pid") == 0) {
      ok = e->has_pid = json_int_value(j, t, &e->pid, error);
    } else if (strcmp(key, "ts") == 0 || strcmp(key, "dur") == 0) {
      if (t != FE_JSON_NUMBER) {
        fe_json_error(j, error, "\"%s\" is not a number", key);
        ok = FALSE;
      } else if (key[0] == 't') {
        ok = e->has_ts = fe_json_us_split(fe_json_text(j, NULL), &e->ts_us, &e->ts_frac_ps);
      } else {
        ok = e->has_dur = fe_json_us_to_ps(fe_json_text(j, NULL), &e->dur);
      }
      if (!ok && !*error)
        fe_json_error(j, error, "\"%s\" is out of range", key);
    } else if (strcmp(key, "args") == 0 && t == FE_JSON_OBJ_BEGIN) {
      ok = json_args(j, e, error);
    } else {
      ok = fe_json_skip(j, t, error);
    }
    g_free(key);
    if (!ok)
      return FALSE;
  }
}

/* The state of reading one XProf trace-viewer JSON file (xla_json_load and
 * its phases). */
typedef struct {
  xla_ctx *c;
  fe_json *j;
  const char *path;
  GHashTable *pid_name;  /* pid -> process_name */
  GArray *jops;          /* xla_jop: complete events, in file order */
  GArray *steps;         /* sim_time_ps pairs of the step-marker events */
  gboolean have_base;
  int64_t base_us;
  xla_jev e;
} xla_jload;

/* One decoded event: a pid's process_name, a step marker, or an op
 * (device_offset_ps / device_duration_ps when present, else ts / dur);
 * others are skipped.  off is its byte offset for messages. */
static gboolean json_keep_event(xla_jload *L, uint64_t off, GError **error)
{
  xla_ctx *c = L->c;
  xla_jev *e = &L->e;
  if (!e->ph || !e->has_pid)
    return TRUE;
  if (strcmp(e->ph, "M") == 0) {
    if (e->name && strcmp(e->name, "process_name") == 0 && e->arg_name) {
      int64_t *k = g_new(int64_t, 1);
      *k = e->pid;
      g_hash_table_replace(L->pid_name, k, g_strdup(e->arg_name));
    }
    return TRUE;
  }
  if (strcmp(e->ph, "X") != 0 || !e->has_ts)
    return TRUE;
  if (!L->have_base) {
    L->have_base = TRUE;
    L->base_us = e->ts_us;
  }
  __int128 st = ((__int128) e->ts_us - L->base_us) * SIM_PS_PER_US + e->ts_frac_ps;
  if (st > INT64_MAX / 4 || st < -(INT64_MAX / 4)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: byte %" G_GUINT64_FORMAT
                ": event time is out of range", L->path, off);
    return FALSE;
  }
  sim_time_ps start = (sim_time_ps) st, dur = e->has_dur ? e->dur : 0;
  if (c->opt->step_marker && e->name && g_str_has_prefix(e->name, c->opt->step_marker)) {
    sim_time_ps end = start + dur;
    g_array_append_val(L->steps, start);
    g_array_append_val(L->steps, end);
    return TRUE;
  }
  if (e->has_dev_off)
    start = e->dev_off;
  if (e->has_dev_dur)
    dur = e->dev_dur;
  if (dur < 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: byte %" G_GUINT64_FORMAT
                ": negative duration", L->path, off);
    return FALSE;
  }
  const char *text = e->long_name && e->long_name[0] ? e->long_name : e->name ? e->name : "";
  xla_info *in = xla_intern_text(c, text, e->name, e->category);
  xla_jop jo = {e->pid, start, dur, in->index, c->seq++};
  g_array_append_val(L->jops, jo);
  if (e->model_flops > 0)
    c->rep->model_flops += (uint64_t) e->model_flops;
  return TRUE;
}

/* The entries of the traceEvents array (its '[' already read). */
static gboolean json_events(xla_jload *L, GError **error)
{
  fe_json_tok t;
  for (;;) {
    if (!fe_json_next(L->j, &t, error))
      return FALSE;
    if (t == FE_JSON_ARR_END)
      return TRUE;
    if (t != FE_JSON_OBJ_BEGIN) {
      fe_json_error(L->j, error, "traceEvents entries must be objects");
      return FALSE;
    }
    uint64_t off = fe_json_offset(L->j);
    jev_clear(&L->e);
    if (!json_event(L->j, &L->e, error))
      return FALSE;
    L->c->rep->events++;
    if (!json_keep_event(L, off, error))
      return FALSE;
  }
}

/* The top-level object: traceEvents is read, every other key skipped;
 * then the end of the file (trailing garbage is an error). */
static gboolean json_top(xla_jload *L, GError **error)
{
  fe_json_tok t;
  gboolean seen_events = FALSE;
  if (!fe_json_next(L->j, &t, error))
    return FALSE;
  if (t != FE_JSON_OBJ_BEGIN) {
    fe_json_error(L->j, error, "expected a JSON object with \"traceEvents\"");
    return FALSE;
  }
  for (;;) {
    if (!fe_json_next(L->j, &t, error))
      return FALSE;
    if (t == FE_JSON_OBJ_END)
      break;
    gboolean is_events = strcmp(fe_json_text(L->j, NULL), "traceEvents") == 0;
    if (!fe_json_next(L->j, &t, error))
      return FALSE;
    if (!is_events || t != FE_JSON_ARR_BEGIN) {
      if (!fe_json_skip(L->j, t, error))
        return FALSE;
      continue;
    }
    seen_events = TRUE;
    if (!json_events(L, error))
      return FALSE;
  }
  if (!fe_json_next(L->j, &t, error))
    return FALSE;
  if (!seen_events) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: no \"traceEvents\" array; is this an XProf "
                "trace-viewer JSON file?", L->path);
    return FALSE;
  }
  return TRUE;
}

/* Attaches the ops of device pids to their chips, in file order; ops of
 * other pids are host events.  O(ops). */
static void json_attach(xla_jload *L)
{
  xla_ctx *c = L->c;
  GHashTable *seen_chip = g_hash_table_new(g_int64_hash, g_int64_equal);  /* SparseCore pids */
  for (guint i = 0; i < L->jops->len; i++) {
    xla_jop *jo = &g_array_index(L->jops, xla_jop, i);
    const char *pn = g_hash_table_lookup(L->pid_name, &jo->pid);
    int64_t n, sc;
    gboolean gpu;
    if (!pn || !xla_parse_plane_name(pn, &n, &sc, &gpu)) {
      c->rep->host_events++;
      continue;
    }
    uint16_t stream;
    xla_chip *ch = xla_chip_for(c, n, sc, &stream);
    ch->gpu = gpu;
    if (sc >= 0 && !g_hash_table_contains(seen_chip, &jo->pid)) {
      g_hash_table_add(seen_chip, &jo->pid);
      c->rep->n_sparsecore_planes++;
    }
    xla_op op = {jo->start, jo->dur, -1, -1, jo->info, jo->seq, stream};
    g_array_append_val(ch->ops, op);
    if (L->steps->len && ch->steps->len == 0)
      g_array_append_vals(ch->steps, L->steps->data, L->steps->len);
  }
  g_hash_table_unref(seen_chip);
}

/* Reads one XProf trace-viewer JSON file: `process_name` metadata events
 * map pids to `/device:TPU:N[ SparseCore M]` (or `/device:GPU:N`);
 * complete events on those pids are ops (device_offset_ps /
 * device_duration_ps when present, else ts / dur); events whose name
 * starts with the step marker (any pid) delimit steps.  Streaming: memory
 * is ~40 bytes per kept event. */
gboolean xla_json_load(xla_ctx *c, const char *path, GError **error)
{
  fe_json *j = fe_json_open(path, error);
  if (!j)
    return FALSE;
  xla_jload L = {
    .c = c, .j = j, .path = path,
    .pid_name = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free),
    .jops = g_array_new(FALSE, FALSE, sizeof(xla_jop)),
    .steps = g_array_new(FALSE, FALSE, sizeof(sim_time_ps)),
  };
  gboolean ok = json_top(&L, error);
  jev_clear(&L.e);
  if (ok) {
    c->rep->bytes_read += fe_json_bytes_read(j);
    json_attach(&L);
  }
  g_array_free(L.steps, TRUE);
  g_array_free(L.jops, TRUE);
  g_hash_table_unref(L.pid_name);
  fe_json_free(j);
  return ok;
}
