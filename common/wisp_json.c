/* wisp_json.c: streaming JSON writer (see wisp_json.h). */
#include "config.h"
#include "common/wisp_json.h"

#include <math.h>

int wisp_json_set_flat_depth(wisp_json *j, int flat_depth)
{
  int old = j->flat_depth;
  j->flat_depth = flat_depth;
  return old;
}

void wisp_json_init(wisp_json *j, FILE *out, int flat_depth)
{
  j->out = out;
  j->depth = 0;
  j->flat_depth = flat_depth;
  j->first[0] = TRUE;
  j->flat[0] = FALSE;
}

void wisp_json_write_escaped(FILE *out, const char *s)
{
  fputc('"', out);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
    case '"': fputs("\\\"", out); break;
    case '\\': fputs("\\\\", out); break;
    case '\n': fputs("\\n", out); break;
    case '\r': fputs("\\r", out); break;
    case '\t': fputs("\\t", out); break;
    default:
      if (*p < 0x20)
        fprintf(out, "\\u%04x", *p);
      else
        fputc(*p, out);
    }
  }
  fputc('"', out);
}

/* Separator, newline/indent and key before a value at the current depth. */
static void prefix(wisp_json *j, const char *key)
{
  if (j->depth > 0) {
    if (!j->first[j->depth])
      fputc(',', j->out);
    if (j->flat[j->depth]) {
      if (!j->first[j->depth])
        fputc(' ', j->out);
    } else {
      fputc('\n', j->out);
      for (int i = 0; i < j->depth; i++)
        fputs("  ", j->out);
    }
  }
  j->first[j->depth] = FALSE;
  if (key) {
    wisp_json_write_escaped(j->out, key);
    fputs(": ", j->out);
  }
}

static void open_container(wisp_json *j, const char *key, char c)
{
  prefix(j, key);
  fputc(c, j->out);
  g_assert(j->depth + 1 < WISP_JSON_MAX_DEPTH);
  gboolean parent_flat = j->depth > 0 && j->flat[j->depth];
  j->depth++;
  j->first[j->depth] = TRUE;
  j->flat[j->depth] = parent_flat || j->depth >= j->flat_depth;
}

static void close_container(wisp_json *j, char c)
{
  g_assert(j->depth > 0);
  gboolean was_flat = j->flat[j->depth];
  gboolean empty = j->first[j->depth];
  j->depth--;
  if (!was_flat && !empty) {
    fputc('\n', j->out);
    for (int i = 0; i < j->depth; i++)
      fputs("  ", j->out);
  }
  fputc(c, j->out);
}

void wisp_json_begin_object(wisp_json *j, const char *key) { open_container(j, key, '{'); }
void wisp_json_end_object(wisp_json *j) { close_container(j, '}'); }
void wisp_json_begin_array(wisp_json *j, const char *key) { open_container(j, key, '['); }
void wisp_json_end_array(wisp_json *j) { close_container(j, ']'); }

void wisp_json_string(wisp_json *j, const char *key, const char *value)
{
  prefix(j, key);
  if (value)
    wisp_json_write_escaped(j->out, value);
  else
    fputs("null", j->out);
}

void wisp_json_int(wisp_json *j, const char *key, int64_t value)
{
  prefix(j, key);
  fprintf(j->out, "%" G_GINT64_FORMAT, value);
}

void wisp_json_uint(wisp_json *j, const char *key, uint64_t value)
{
  prefix(j, key);
  fprintf(j->out, "%" G_GUINT64_FORMAT, value);
}

void wisp_json_double(wisp_json *j, const char *key, double value, int decimals)
{
  prefix(j, key);
  if (!isfinite(value))
    fputs("null", j->out);
  else
    fprintf(j->out, "%.*f", decimals, value);
}

void wisp_json_bool(wisp_json *j, const char *key, gboolean value)
{
  prefix(j, key);
  fputs(value ? "true" : "false", j->out);
}

void wisp_json_ns(wisp_json *j, const char *key, sim_time_ps value)
{
  char buf[32];
  prefix(j, key);
  fputs(wisp_ns_string(value, buf), j->out);
}

void wisp_json_finish(wisp_json *j)
{
  g_assert(j->depth == 0);
  fputc('\n', j->out);
}

gboolean wisp_json_too_deep(const char *text, size_t len, const char *end, int limit)
{
  if (text == NULL || end == NULL || end < text || end > text + len)
    return FALSE;
  int depth = 0;
  gboolean in_string = FALSE;
  for (const char *p = text; p < end; p++) {
    if (in_string) {
      if (*p == '\\' && p + 1 < end)
        p++;
      else if (*p == '"')
        in_string = FALSE;
    } else if (*p == '"')
      in_string = TRUE;
    else if (*p == '[' || *p == '{')
      depth++;
    else if ((*p == ']' || *p == '}') && depth > 0)
      depth--;
  }
  return depth >= limit;
}

gboolean wisp_json_scan_feed(wisp_json_scan *s, const char *buf, size_t n, const char *path, GError **error)
{
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)buf[i];
    uint64_t at = s->offset + i;
    switch (s->state) {
    case 1: s->state = c == '\\' ? 2 : c == '"' ? 0 : 1; break;
    case 2: s->state = 1; break;
    case 3:
      if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E')
        break;
      s->state = 0; /* and this byte may open a string: */
      G_GNUC_FALLTHROUGH;
    default:
      if (c == '"' || c == '-' || (c >= '0' && c <= '9')) {
        s->state = c == '"' ? 1 : 3;
        s->tok_start = at;
      }
    }
    if (s->state != 0 && at - s->tok_start >= WISP_JSON_MAX_TOKEN_BYTES) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_LIMIT, "%s: byte %" G_GUINT64_FORMAT ": %s starting here is longer "
                  "than %u MiB, more than any trace field holds; the file is corrupt or not a trace", path,
                  s->tok_start, s->state == 3 ? "number" : "string", WISP_JSON_MAX_TOKEN_BYTES >> 20);
      return FALSE;
    }
  }
  s->offset += n;
  return TRUE;
}
