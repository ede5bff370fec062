/* cfg_card.c: the workload card document (cfg_card.h).  The YAML tree is
 * flattened once into a hash of dotted paths; the tree is then dropped.
 * The three readers that each parsed the file themselves (frontends, the
 * --scale layout, MFU) now read this document. */
#include "config.h"
#include "config/cfg_card.h"
#include "config/cfg_yaml.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char *value;       /* scalar text; NULL for a list or mapping */
  const char *kind;  /* cfg_node_type_name of the node */
  int line;
} card_node;

struct cfg_card {
  char *path;
  GHashTable *nodes; /* dotted path -> card_node */
};

static void node_free(gpointer p)
{
  card_node *n = p;
  g_free(n->value);
  g_free(n);
}

/* Records n at path and, for a mapping, its members; depth bounds a
 * pathological file.  A key given twice in one mapping is an error. */
static gboolean flatten(cfg_card *c, const cfg_reader *r, const yaml_node_t *n, const char *path, int depth)
{
  if (n == NULL || depth > 32)
    return TRUE;
  if (*path) {
    card_node *cn = g_new0(card_node, 1);
    cn->kind = cfg_node_type_name(n);
    cn->line = cfg_line(n);
    if (n->type == YAML_SCALAR_NODE)
      cn->value = g_strndup((const char *)n->data.scalar.value, n->data.scalar.length);
    g_hash_table_replace(c->nodes, g_strdup(path), cn);
  }
  if (n->type != YAML_MAPPING_NODE)
    return TRUE; /* lists are kept as one node and not read */
  for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
    yaml_node_t *k = cfg_node(r, p->key);
    const char *ks = cfg_scalar(k);
    if (ks == NULL)
      continue;
    char *sub = *path ? g_strdup_printf("%s.%s", path, ks) : g_strdup(ks);
    card_node *prev = g_hash_table_lookup(c->nodes, sub);
    gboolean ok = prev == NULL ||
                  cfg_fail(r, k, WISP_ERROR_PARSE, "%s: given twice (first on line %d)", sub, prev->line);
    ok = ok && flatten(c, r, cfg_node(r, p->value), sub, depth + 1);
    g_free(sub);
    if (!ok)
      return FALSE;
  }
  return TRUE;
}

cfg_card *cfg_card_load_string(const char *text, const char *name, GError **error)
{
  yaml_parser_t p;
  yaml_document_t d;
  yaml_parser_initialize(&p);
  yaml_parser_set_input_string(&p, (const unsigned char *)text, strlen(text));
  if (!yaml_parser_load(&p, &d)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s:%zu: malformed YAML: %s (a workload card is YAML)", name,
                p.problem_mark.line + 1, p.problem ? p.problem : "unknown error");
    yaml_parser_delete(&p);
    return NULL;
  }
  cfg_card *c = g_new0(cfg_card, 1);
  c->path = g_strdup(name);
  c->nodes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, node_free);
  cfg_reader r = {name, &d, error};
  yaml_node_t *root = yaml_document_get_root_node(&d);
  gboolean ok = root && root->type == YAML_MAPPING_NODE;
  if (!ok)
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s: a workload card is a YAML mapping (CCL-Bench's card "
                "layout: workload.model, workload.data, Model-executor)", name);
  ok = ok && flatten(c, &r, root, "", 0);
  yaml_document_delete(&d);
  yaml_parser_delete(&p);
  if (!ok) {
    cfg_card_free(c);
    return NULL;
  }
  return c;
}

cfg_card *cfg_card_load(const char *path, GError **error)
{
  char *text = NULL;
  gsize len = 0;
  GError *e = NULL;
  if (!g_file_get_contents(path, &text, &len, &e)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot open the workload card: %s", path, e->message);
    g_error_free(e);
    return NULL;
  }
  if (memchr(text, '\0', len) != NULL) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s: a workload card is YAML text, and this file holds NUL "
                "bytes", path);
    g_free(text);
    return NULL;
  }
  wisp_input_note(path);
  cfg_card *c = cfg_card_load_string(text, path, error);
  g_free(text);
  return c;
}

void cfg_card_free(cfg_card *c)
{
  if (c == NULL)
    return;
  g_free(c->path);
  g_hash_table_destroy(c->nodes);
  g_free(c);
}

const char *cfg_card_path(const cfg_card *c)
{
  return c->path;
}

/* "", "~" and "null" are YAML's empty value. */
static gboolean is_empty(const char *v)
{
  return *v == '\0' || strcmp(v, "~") == 0 || g_ascii_strcasecmp(v, "null") == 0;
}

const char *cfg_card_get(const cfg_card *c, const char *key, int *line)
{
  const card_node *n = g_hash_table_lookup(c->nodes, key);
  if (line)
    *line = n ? n->line : 0;
  return n && n->value && !is_empty(n->value) ? n->value : NULL;
}

gboolean cfg_card_has(const cfg_card *c, const char *key)
{
  return g_hash_table_contains(c->nodes, key);
}

gboolean cfg_card_fail(const cfg_card *c, const char *key, int code, GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  const card_node *n = g_hash_table_lookup(c->nodes, key);
  if (n)
    g_set_error(error, WISP_ERROR, code, "%s:%d: %s: %s", c->path, n->line, key, msg);
  else
    g_set_error(error, WISP_ERROR, code, "%s: %s: %s", c->path, key, msg);
  g_free(msg);
  return FALSE;
}

/* The scalar text at key: TRUE with *v NULL when absent or empty, FALSE
 * (error) when the node is a list or mapping.  Clears *found (may be
 * NULL): each accessor sets it once its value parsed. */
static gboolean scalar_at(const cfg_card *c, const char *key, const char **v, gboolean *found, GError **error)
{
  const card_node *n = g_hash_table_lookup(c->nodes, key);
  *v = NULL;
  if (found)
    *found = FALSE;
  if (n && n->value == NULL)
    return cfg_card_fail(c, key, WISP_ERROR_INVALID, error, "expected a single value, got %s", n->kind);
  if (n && !is_empty(n->value))
    *v = n->value;
  return TRUE;
}

/* The accessors' success: sets *found (may be NULL). */
static gboolean parsed(gboolean *found)
{
  if (found)
    *found = TRUE;
  return TRUE;
}

gboolean cfg_card_count(const cfg_card *c, const char *key, int64_t max, int64_t *out, gboolean *found,
                        GError **error)
{
  const char *v;
  if (!scalar_at(c, key, &v, found, error))
    return FALSE;
  if (v == NULL)
    return TRUE;
  char *end = NULL;
  errno = 0;
  gint64 x = g_ascii_strtoll(v, &end, 10);
  if (end == v || *end || errno || x < 1 || x > max)
    return cfg_card_fail(c, key, WISP_ERROR_INVALID, error, "expected a whole number from 1 to %" G_GINT64_FORMAT
                         ", got '%s'", (gint64)max, v);
  *out = x;
  return parsed(found);
}

gboolean cfg_card_number(const cfg_card *c, const char *key, double *out, gboolean *found, GError **error)
{
  const char *v;
  if (!scalar_at(c, key, &v, found, error))
    return FALSE;
  if (v == NULL)
    return TRUE;
  char *end = NULL;
  errno = 0;
  double x = g_ascii_strtod(v, &end);
  if (end == v || *end || errno == ERANGE || !isfinite(x) || x < 0)
    return cfg_card_fail(c, key, WISP_ERROR_INVALID, error, "expected a non-negative number, got '%s'", v);
  *out = x;
  return parsed(found);
}

int cfg_precision_bytes(const char *p)
{
  static const struct { const char *n; int b; } tab[] = {
    { "bf16", 2 }, { "bfloat16", 2 }, { "fp16", 2 }, { "float16", 2 }, { "half", 2 }, { "fp32", 4 },
    { "float32", 4 }, { "float", 4 }, { "tf32", 4 }, { "fp8", 1 }, { "float8", 1 }, { "e4m3", 1 },
    { "fp8_e4m3", 1 }, { "fp8_e5m2", 1 }, { "int8", 1 }, { "fp64", 8 }, { "float64", 8 },
  };
  for (size_t i = 0; p && i < G_N_ELEMENTS(tab); i++)
    if (!g_ascii_strcasecmp(p, tab[i].n))
      return tab[i].b;
  return 0;
}

gboolean cfg_card_precision(const cfg_card *c, const char *key, const char **name, int *bytes, gboolean *found,
                            GError **error)
{
  const char *v;
  if (!scalar_at(c, key, &v, found, error))
    return FALSE;
  if (v == NULL)
    return TRUE;
  int b = cfg_precision_bytes(v);
  if (b == 0)
    return cfg_card_fail(c, key, WISP_ERROR_INVALID, error, "unknown precision '%s' (use bf16, fp16, fp32 or fp8)",
                         v);
  *name = v;
  *bytes = b;
  return parsed(found);
}

gboolean cfg_card_choice(const cfg_card *c, const char *key, const char *const *allowed, const char **out,
                         gboolean *found, GError **error)
{
  const char *v;
  if (!scalar_at(c, key, &v, found, error))
    return FALSE;
  if (v == NULL)
    return TRUE;
  for (const char *const *a = allowed; *a; a++)
    if (strcmp(*a, v) == 0) {
      *out = *a;
      return parsed(found);
    }
  GString *names = g_string_new(NULL);
  for (const char *const *a = allowed; *a; a++)
    g_string_append_printf(names, "%s%s", a == allowed ? "" : a[1] ? ", " : " or ", *a);
  cfg_card_fail(c, key, WISP_ERROR_INVALID, error, "expected %s, got '%s'", names->str, v);
  g_string_free(names, TRUE);
  return FALSE;
}
