/* cfg_yaml.c: strict YAML tree reading for config sections (cfg_yaml.h).
 * The helpers and their message texts were the topology loader's
 * (topologies/topo_load.c) before the config module existed; they are
 * shared now by the document (cfg.c) and the topology section. */
#include "config.h"
#include "config/cfg_yaml.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int cfg_line(const yaml_node_t *n)
{
  return (int)n->start_mark.line + 1;
}

yaml_node_t *cfg_node(const cfg_reader *r, int id)
{
  return yaml_document_get_node(r->doc, id);
}

gboolean cfg_fail(const cfg_reader *r, const yaml_node_t *n, int code, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  if (n)
    g_set_error(r->error, WISP_ERROR, code, "%s:%d: %s", r->src, cfg_line(n), msg);
  else
    g_set_error(r->error, WISP_ERROR, code, "%s: %s", r->src, msg);
  g_free(msg);
  return FALSE;
}

const char *cfg_scalar(const yaml_node_t *n)
{
  return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

const char *cfg_node_type_name(const yaml_node_t *n)
{
  switch (n->type) {
  case YAML_SCALAR_NODE:
    return "a scalar";
  case YAML_SEQUENCE_NODE:
    return "a list";
  case YAML_MAPPING_NODE:
    return "a mapping";
  default:
    return "empty";
  }
}

gboolean cfg_check_keys(const cfg_reader *r, const yaml_node_t *map, const char *where, const char *const *allowed)
{
  if (map->type != YAML_MAPPING_NODE)
    return cfg_fail(r, map, WISP_ERROR_PARSE, "'%s' must be a mapping (key: value), not %s", where,
                    cfg_node_type_name(map));
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
    yaml_node_t *k = cfg_node(r, p->key);
    const char *ks = cfg_scalar(k);
    if (ks == NULL)
      return cfg_fail(r, k, WISP_ERROR_PARSE, "keys in '%s' must be plain names", where);
    gboolean ok = FALSE;
    for (const char *const *a = allowed; *a; a++)
      if (strcmp(*a, ks) == 0)
        ok = TRUE;
    if (!ok) {
      GString *exp = g_string_new(NULL);
      for (const char *const *a = allowed; *a; a++)
        g_string_append_printf(exp, "%s%s", a == allowed ? "" : ", ", *a);
      cfg_fail(r, k, WISP_ERROR_PARSE, "unknown key '%s' in '%s' (expected one of %s)", ks, where, exp->str);
      g_string_free(exp, TRUE);
      return FALSE;
    }
    for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++)
      if (g_strcmp0(cfg_scalar(cfg_node(r, q->key)), ks) == 0)
        return cfg_fail(r, k, WISP_ERROR_PARSE, "duplicate key '%s' in '%s' (first given on line %d)", ks, where,
                        cfg_line(cfg_node(r, q->key)));
  }
  return TRUE;
}

yaml_node_t *cfg_lookup(const cfg_reader *r, const yaml_node_t *map, const char *key)
{
  if (map->type != YAML_MAPPING_NODE)
    return NULL;
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++)
    if (g_strcmp0(cfg_scalar(cfg_node(r, p->key)), key) == 0)
      return cfg_node(r, p->value);
  return NULL;
}

gboolean cfg_need_scalar(const cfg_reader *r, const yaml_node_t *v, const char *key, const char *where,
                         const char **out)
{
  const char *s = cfg_scalar(v);
  if (s == NULL || *s == '\0')
    return cfg_fail(r, v, WISP_ERROR_PARSE, "'%s' in '%s' must be a single value, not %s", key, where,
                    s ? "empty" : cfg_node_type_name(v));
  *out = s;
  return TRUE;
}

gboolean cfg_read_int(const cfg_reader *r, const yaml_node_t *v, const char *key, const char *where, long min,
                      long max, int *out)
{
  const char *s = NULL;
  if (!cfg_need_scalar(r, v, key, where, &s))
    return FALSE;
  char *end = NULL;
  errno = 0;
  long x = strtol(s, &end, 10);
  if (end == s || *end != '\0' || errno == ERANGE)
    return cfg_fail(r, v, WISP_ERROR_PARSE, "'%s' in '%s' must be a whole number, got '%s'", key, where, s);
  if (x < min || x > max)
    return cfg_fail(r, v, WISP_ERROR_INVALID, "'%s' in '%s' must be between %ld and %ld, got %ld", key, where, min,
                    max, x);
  *out = (int)x;
  return TRUE;
}

gboolean cfg_read_double(const cfg_reader *r, const yaml_node_t *v, const char *key, const char *where, double *out)
{
  const char *s = NULL;
  if (!cfg_need_scalar(r, v, key, where, &s))
    return FALSE;
  char *end = NULL;
  errno = 0;
  double x = g_ascii_strtod(s, &end);
  if (end == s || *end != '\0' || errno == ERANGE || !isfinite(x))
    return cfg_fail(r, v, WISP_ERROR_PARSE, "'%s' in '%s' must be a number, got '%s'", key, where, s);
  *out = x;
  return TRUE;
}

gboolean cfg_read_bw(const cfg_reader *r, const yaml_node_t *v, const char *key, const char *where, wisp_bw_Bps *out)
{
  const char *s = NULL, *why = NULL;
  if (!cfg_need_scalar(r, v, key, where, &s))
    return FALSE;
  if (!wisp_parse_bandwidth(s, out, &why))
    return cfg_fail(r, v, WISP_ERROR_PARSE, "bad bandwidth '%s' for '%s' in '%s': %s", s, key, where, why);
  return TRUE;
}

gboolean cfg_read_time(const cfg_reader *r, const yaml_node_t *v, const char *key, const char *where,
                       sim_time_ps *out)
{
  const char *s = NULL, *why = NULL;
  if (!cfg_need_scalar(r, v, key, where, &s))
    return FALSE;
  if (!wisp_parse_time(s, out, &why))
    return cfg_fail(r, v, WISP_ERROR_PARSE, "bad time '%s' for '%s' in '%s': %s", s, key, where, why);
  return TRUE;
}

gboolean cfg_need(const cfg_reader *r, const yaml_node_t *map, const char *key, const char *where, yaml_node_t **out)
{
  *out = cfg_lookup(r, map, key);
  if (*out == NULL)
    return cfg_fail(r, map, WISP_ERROR_PARSE, "'%s' is missing the required key '%s'", where, key);
  return TRUE;
}
