/* cfg.c: the config document (cfg.h): format detection, the top level,
 * the net section's values and the flattened collectives/library
 * settings; editing and writing back for what-if studies.
 *
 * The texts of the messages are the ones the topology loader printed
 * before the document existed (tests match them).  The only change of
 * behaviour is the order in which two different errors in one file are
 * found: the collectives/library mappings are now checked before the
 * topology section, so a file with an error in both reports the former.
 */
#include "config.h"
#include "config/cfg_yaml.h"

#include <string.h>

/* Bound on settings kept from `collectives:` / `library:`, so an alias bomb
 * cannot expand without limit. */
#define CFG_MAX_SETTINGS 10000

typedef struct {
  char *value;
  int line;
} cfg_value;

struct cfg_doc {
  gint ref;
  char *source;
  char *name;
  cfg_format format;
  gboolean has_tree;
  yaml_document_t tree;
  GTree *values;          /* char *key -> cfg_value *, sorted by strcmp */
  int n_settings;         /* flattening counter (CFG_MAX_SETTINGS) */
};

/* The net section's keys, their defaults and accepted values: the net
 * layer (net/net.h) maps them to its tiers. */
static const char *const model_names[] = {"analytical", "flow", NULL};

static int cmp_key(gconstpointer a, gconstpointer b, gpointer unused)
{
  (void)unused;
  return strcmp(a, b);
}

static void value_free(gpointer p)
{
  cfg_value *v = p;
  g_free(v->value);
  g_free(v);
}

static cfg_doc *doc_new(const char *source, cfg_format format)
{
  cfg_doc *d = g_new0(cfg_doc, 1);
  d->ref = 1;
  d->source = g_strdup(source ? source : "<string>");
  d->format = format;
  d->values = g_tree_new_full(cmp_key, NULL, g_free, value_free);
  return d;
}

static void put(cfg_doc *d, const char *key, const char *value, int line)
{
  cfg_value *v = g_new0(cfg_value, 1);
  v->value = g_strdup(value);
  v->line = line;
  g_tree_replace(d->values, g_strdup(key), v);
}

cfg_doc *cfg_ref(cfg_doc *d)
{
  g_atomic_int_inc(&d->ref);
  return d;
}

void cfg_unref(cfg_doc *d)
{
  if (d == NULL || !g_atomic_int_dec_and_test(&d->ref))
    return;
  if (d->has_tree)
    yaml_document_delete(&d->tree);
  g_tree_destroy(d->values);
  g_free(d->source);
  g_free(d->name);
  g_free(d);
}

const char *cfg_source(const cfg_doc *d)
{
  return d->source;
}

cfg_format cfg_doc_format(const cfg_doc *d)
{
  return d->format;
}

const char *cfg_name(const cfg_doc *d)
{
  return d->name;
}

const char *cfg_get(const cfg_doc *d, const char *key, int *line)
{
  const cfg_value *v = g_tree_lookup(d->values, key);
  if (v == NULL)
    return NULL;
  if (line)
    *line = v->line;
  return v->value;
}

const char *cfg_get_or_default(const cfg_doc *d, const char *key)
{
  const char *v = cfg_get(d, key, NULL);
  if (v == NULL && strcmp(key, "model") == 0)
    v = model_names[0];
  return v;
}

gboolean cfg_get_time(const cfg_doc *d, const char *key, sim_time_ps *out)
{
  const char *v = cfg_get(d, key, NULL);
  const char *why = NULL;
  return v != NULL && wisp_parse_time(v, out, &why);
}

typedef struct {
  const char *prefix;
  size_t len;
  GPtrArray *out;
} keys_ctx;

static gboolean collect_key(gpointer k, gpointer v, gpointer data)
{
  (void)v;
  keys_ctx *c = data;
  if (strncmp(k, c->prefix, c->len) == 0)
    g_ptr_array_add(c->out, g_strdup(k));
  return FALSE;
}

GPtrArray *cfg_keys(const cfg_doc *d, const char *prefix)
{
  keys_ctx c = {prefix, strlen(prefix), g_ptr_array_new_with_free_func(g_free)};
  g_tree_foreach(d->values, collect_key, &c);
  return c.out;
}

gboolean cfg_reader_init(cfg_reader *r, const cfg_doc *d, GError **error, yaml_node_t **root)
{
  if (!d->has_tree)
    return FALSE;
  r->src = d->source;
  r->doc = (yaml_document_t *)&d->tree;
  r->error = error;
  *root = yaml_document_get_root_node(r->doc);
  return *root != NULL;
}

/* ---- parsing ---- */

static gboolean flatten(cfg_doc *d, const cfg_reader *r, const char *prefix, const yaml_node_t *n)
{
  if (++d->n_settings > CFG_MAX_SETTINGS)
    return cfg_fail(r, n, WISP_ERROR_LIMIT, "more than %d settings under '%s'; the config is too large",
                    CFG_MAX_SETTINGS, prefix);
  switch (n->type) {
  case YAML_SCALAR_NODE:
    put(d, prefix, cfg_scalar(n), cfg_line(n));
    return TRUE;
  case YAML_SEQUENCE_NODE: {
    gboolean all_scalar = TRUE;
    for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++)
      if (cfg_node(r, *i)->type != YAML_SCALAR_NODE)
        all_scalar = FALSE;
    if (all_scalar) {
      /* A list of scalars is kept comma-joined ("ring,direct"), the same
       * value as the string form. */
      GString *s = g_string_new(NULL);
      for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++)
        g_string_append_printf(s, "%s%s", s->len ? "," : "", cfg_scalar(cfg_node(r, *i)));
      put(d, prefix, s->str, cfg_line(n));
      g_string_free(s, TRUE);
      return TRUE;
    }
    int k = 0;
    for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++, k++) {
      char *key = g_strdup_printf("%s.%d", prefix, k);
      gboolean ok = flatten(d, r, key, cfg_node(r, *i));
      g_free(key);
      if (!ok)
        return FALSE;
    }
    return TRUE;
  }
  case YAML_MAPPING_NODE:
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
      const yaml_node_t *k = cfg_node(r, p->key);
      const char *ks = cfg_scalar(k);
      if (ks == NULL || *ks == '\0')
        return cfg_fail(r, k, WISP_ERROR_PARSE, "keys under '%s' must be plain names", prefix);
      for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < p; q++)
        if (g_strcmp0(cfg_scalar(cfg_node(r, q->key)), ks) == 0)
          return cfg_fail(r, k, WISP_ERROR_PARSE, "duplicate key '%s' under '%s'", ks, prefix);
      char *key = g_strdup_printf("%s.%s", prefix, ks);
      gboolean ok = flatten(d, r, key, cfg_node(r, p->value));
      g_free(key);
      if (!ok)
        return FALSE;
    }
    return TRUE;
  default:
    put(d, prefix, "", cfg_line(n));
    return TRUE;
  }
}

static gboolean model_known(const char *s)
{
  for (const char *const *m = model_names; *m; m++)
    if (strcmp(*m, s) == 0)
      return TRUE;
  return FALSE;
}

/* The document part of a wisp config: every top-level key is checked
 * here, the topology's keys are left in the tree for topo_from_config. */
static gboolean load_wisp(cfg_doc *d, const cfg_reader *r, const yaml_node_t *root)
{
  static const char *const keys[] = {"schema_version", "name", "description", "model", "flow_quantum", "ranks",
                                     "node_dims", "dims", "graph", "placement", "collectives", "library",
                                     "preset_version", NULL};
  yaml_node_t *v;
  int version;
  if (!cfg_check_keys(r, root, "topology", keys))
    return FALSE;
  /* Cluster presets (the presets directory) carry `preset_version: 1`; accepted
   * here so that a preset file is also a network config. */
  if ((v = cfg_lookup(r, root, "preset_version"))) {
    int pv;
    if (!cfg_read_int(r, v, "preset_version", "topology", 0, 1000000, &pv))
      return FALSE;
    if (pv != 1)
      return cfg_fail(r, v, WISP_ERROR_UNSUPPORTED,
                      "preset_version %d is not supported; this wisp reads preset_version 1", pv);
  }
  v = cfg_lookup(r, root, "schema_version");
  if (!cfg_read_int(r, v, "schema_version", "topology", 0, 1000000, &version))
    return FALSE;
  if (version != 1)
    return cfg_fail(r, v, WISP_ERROR_UNSUPPORTED,
                    "schema_version %d is not supported; this wisp reads schema_version 1", version);
  if ((v = cfg_lookup(r, root, "name"))) {
    const char *s;
    if (!cfg_need_scalar(r, v, "name", "topology", &s))
      return FALSE;
    d->name = g_strdup(s);
  }
  if ((v = cfg_lookup(r, root, "description")) && v->type != YAML_SCALAR_NODE)
    return cfg_fail(r, v, WISP_ERROR_PARSE, "'description' must be text");
  if ((v = cfg_lookup(r, root, "model"))) {
    const char *s;
    if (!cfg_need_scalar(r, v, "model", "topology", &s))
      return FALSE;
    if (!model_known(s))
      return cfg_fail(r, v, WISP_ERROR_PARSE, "unknown model '%s' (expected analytical or flow)", s);
    put(d, "model", s, cfg_line(v));
  }
  if ((v = cfg_lookup(r, root, "flow_quantum"))) {
    sim_time_ps q;
    if (!cfg_read_time(r, v, "flow_quantum", "topology", &q))
      return FALSE;
    put(d, "flow_quantum", cfg_scalar(v), cfg_line(v));
  }
  if ((v = cfg_lookup(r, root, "collectives"))) {
    if (v->type != YAML_MAPPING_NODE)
      return cfg_fail(r, v, WISP_ERROR_PARSE, "'collectives' must be a mapping, e.g. {all_reduce: ring, chunks: 4}");
    if (!flatten(d, r, "collectives", v))
      return FALSE;
  }
  if ((v = cfg_lookup(r, root, "library"))) {
    if (v->type != YAML_MAPPING_NODE)
      return cfg_fail(r, v, WISP_ERROR_PARSE, "'library' must be a mapping");
    if (!flatten(d, r, "library", v))
      return FALSE;
  }
  return TRUE;
}

cfg_doc *cfg_load_string(const char *text, const char *source_name, GError **error)
{
  g_return_val_if_fail(text != NULL, NULL);
  const char *src = source_name ? source_name : "<string>";
  yaml_parser_t parser;
  cfg_doc *d = NULL;
  if (!yaml_parser_initialize(&parser)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_LIMIT, "%s: cannot initialise the YAML parser (out of memory)", src);
    return NULL;
  }
  d = doc_new(src, CFG_FORMAT_WISP);
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
  if (!yaml_parser_load(&parser, &d->tree)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s:%zu:%zu: YAML syntax error: %s%s%s", src,
                parser.problem_mark.line + 1, parser.problem_mark.column + 1,
                parser.problem ? parser.problem : "unknown problem", parser.context ? " " : "",
                parser.context ? parser.context : "");
    yaml_parser_delete(&parser);
    cfg_unref(d);
    return NULL;
  }
  d->has_tree = TRUE;
  cfg_reader r = {.src = d->source, .doc = &d->tree, .error = error};
  yaml_node_t *root = yaml_document_get_root_node(&d->tree);
  gboolean ok = FALSE;
  if (root == NULL) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE,
                "%s: the file is empty; a topology needs 'schema_version: 1' and 'dims' or 'graph' (or ASTRA-sim's "
                "topology/npus_count/bandwidth/latency)",
                src);
    goto done;
  }
  {
    /* A second document would be silently ignored; refuse it. */
    yaml_document_t extra;
    if (!yaml_parser_load(&parser, &extra)) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s:%zu: YAML syntax error: %s", src,
                  parser.problem_mark.line + 1, parser.problem ? parser.problem : "unknown problem");
      goto done;
    }
    gboolean more = yaml_document_get_root_node(&extra) != NULL;
    int line = more ? cfg_line(yaml_document_get_root_node(&extra)) : 0;
    yaml_document_delete(&extra);
    if (more) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE,
                  "%s:%d: a second YAML document ('---') follows the topology; keep one topology per file", src, line);
      goto done;
    }
  }
  if (root->type != YAML_MAPPING_NODE) {
    cfg_fail(&r, root, WISP_ERROR_PARSE, "the top level must be a mapping (key: value), not %s",
             cfg_node_type_name(root));
    goto done;
  }
  if (cfg_lookup(&r, root, "schema_version")) {
    ok = load_wisp(d, &r, root);
  } else if (cfg_lookup(&r, root, "topology") || cfg_lookup(&r, root, "npus_count")) {
    static const char *const keys[] = {"topology", "npus_count", "bandwidth", "latency", NULL};
    d->format = CFG_FORMAT_ASTRA;
    ok = cfg_check_keys(&r, root, "network.yml", keys);
  } else if (cfg_lookup(&r, root, "dims") || cfg_lookup(&r, root, "graph")) {
    cfg_fail(&r, root, WISP_ERROR_PARSE, "missing 'schema_version: 1' (wisp topology files are versioned)");
  } else {
    cfg_fail(&r, root, WISP_ERROR_PARSE,
             "cannot tell the format: a wisp topology starts with 'schema_version: 1'; an ASTRA-sim network.yml "
             "has topology, npus_count, bandwidth and latency");
  }
done:
  yaml_parser_delete(&parser);
  if (!ok) {
    cfg_unref(d);
    return NULL;
  }
  return d;
}

cfg_doc *cfg_load(const char *path, GError **error)
{
  char *text = NULL;
  gsize len = 0;
  GError *e = NULL;
  wisp_input_note(path); /* no output may replace it */
  if (!g_file_get_contents(path, &text, &len, &e)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot read the topology: %s", path, e->message);
    g_error_free(e);
    return NULL;
  }
  if (memchr(text, '\0', len) != NULL) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s: contains a NUL byte; a topology is a YAML text file", path);
    g_free(text);
    return NULL;
  }
  cfg_doc *d = cfg_load_string(text, path, error);
  g_free(text);
  return d;
}

/* ---- editing ---- */

static gboolean copy_value(gpointer k, gpointer v, gpointer data)
{
  const cfg_value *x = v;
  put(data, k, x->value, x->line);
  return FALSE;
}

cfg_doc *cfg_copy_settings(const cfg_doc *d)
{
  cfg_doc *c = doc_new(d->source, CFG_FORMAT_EDIT);
  c->name = g_strdup(d->name);
  g_tree_foreach(d->values, copy_value, c);
  return c;
}

cfg_doc *cfg_new_edit(const char *source)
{
  return doc_new(source, CFG_FORMAT_EDIT);
}

gboolean cfg_is_setting(const char *key)
{
  return strcmp(key, "model") == 0 || strcmp(key, "flow_quantum") == 0 || g_str_has_prefix(key, "collectives.") ||
         g_str_has_prefix(key, "library.");
}

gboolean cfg_set(cfg_doc *d, const char *key, const char *value, const char **why)
{
  g_return_val_if_fail(cfg_is_setting(key), FALSE);
  *why = NULL;
  if (strcmp(key, "model") == 0) {
    if (!model_known(value)) {
      *why = "expected analytical or flow";
      return FALSE;
    }
  } else if (strcmp(key, "flow_quantum") == 0) {
    sim_time_ps q;
    if (!wisp_parse_time(value, &q, why))
      return FALSE;
  } else if (key[strlen(key) - 1] == '.' || strstr(key, "..")) {
    *why = "the key has an empty component";
    return FALSE;
  } else {
    /* Drop keys that would conflict in the nested YAML (a prefix of key,
     * or keys below it). */
    GPtrArray *drop = g_ptr_array_new_with_free_func(g_free);
    size_t n = strlen(key);
    for (GTreeNode *it = g_tree_node_first(d->values); it; it = g_tree_node_next(it)) {
      const char *k = g_tree_node_key(it);
      size_t m = strlen(k);
      if ((m < n && strncmp(k, key, m) == 0 && key[m] == '.') || (m > n && strncmp(k, key, n) == 0 && k[n] == '.'))
        g_ptr_array_add(drop, g_strdup(k));
    }
    for (guint i = 0; i < drop->len; i++)
      g_tree_remove(d->values, drop->pdata[i]);
    g_ptr_array_free(drop, TRUE);
  }
  put(d, key, value, 0);
  return TRUE;
}

void cfg_put(cfg_doc *d, const char *key, const char *value, int line)
{
  g_return_if_fail(d->format == CFG_FORMAT_EDIT && key != NULL && value != NULL);
  put(d, key, value, line);
}

void cfg_set_name(cfg_doc *d, const char *name)
{
  g_return_if_fail(d->format == CFG_FORMAT_EDIT);
  char *n = g_strdup(name);
  g_free(d->name);
  d->name = n;
}

/* ---- writing ---- */

void cfg_yaml_quoted(GString *s, const char *text)
{
  g_string_append_c(s, '"');
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
    if (*p == '"' || *p == '\\')
      g_string_append_printf(s, "\\%c", *p);
    else if (*p < 0x20)
      g_string_append_printf(s, "\\x%02x", *p);
    else
      g_string_append_c(s, (char)*p);
  }
  g_string_append_c(s, '"');
}

/* Emits keys[lo..hi) which share their first `depth` components as a flow
 * mapping; keys are sorted, so children of one component are adjacent. */
static void emit_nested(GString *s, char **keys, char **values, guint lo, guint hi, int depth)
{
  g_string_append_c(s, '{');
  guint i = lo;
  gboolean first = TRUE;
  while (i < hi) {
    char **parts = g_strsplit(keys[i], ".", -1);
    const char *comp = parts[depth];
    guint j = i + 1;
    while (j < hi) {
      char **pj = g_strsplit(keys[j], ".", -1);
      gboolean same = g_strv_length(pj) > (guint)depth && strcmp(pj[depth], comp) == 0;
      g_strfreev(pj);
      if (!same)
        break;
      j++;
    }
    if (!first)
      g_string_append(s, ", ");
    first = FALSE;
    cfg_yaml_quoted(s, comp);
    g_string_append(s, ": ");
    if (j == i + 1 && parts[depth + 1] == NULL) {
      if (values[i][0] == '\0' && depth == 0)
        g_string_append(s, "{}");
      else
        cfg_yaml_quoted(s, values[i]);
    } else {
      emit_nested(s, keys, values, i, j, depth + 1);
    }
    g_strfreev(parts);
    i = j;
  }
  g_string_append_c(s, '}');
}

void cfg_write_sections(const cfg_doc *d, GString *s)
{
  GPtrArray *ka = g_ptr_array_new();
  GPtrArray *va = g_ptr_array_new();
  for (GTreeNode *it = g_tree_node_first(d->values); it; it = g_tree_node_next(it)) {
    const char *k = g_tree_node_key(it);
    if (g_str_has_prefix(k, "collectives.") || g_str_has_prefix(k, "library.")) {
      g_ptr_array_add(ka, (gpointer)k);
      g_ptr_array_add(va, ((cfg_value *)g_tree_node_value(it))->value);
    }
  }
  char **keys = (char **)ka->pdata, **values = (char **)va->pdata;
  guint n = ka->len, i = 0;
  /* Top-level sections: "collectives" and "library". */
  while (i < n) {
    const char *dot = strchr(keys[i], '.');
    size_t plen = dot ? (size_t)(dot - keys[i]) : strlen(keys[i]);
    guint j = i + 1;
    while (j < n && strncmp(keys[j], keys[i], plen) == 0 && (keys[j][plen] == '.' || !keys[j][plen]))
      j++;
    g_string_append_len(s, keys[i], (gssize)plen);
    g_string_append(s, ": ");
    if (dot == NULL)
      g_string_append(s, "{}");
    else
      emit_nested(s, keys, values, i, j, 1);
    g_string_append_c(s, '\n');
    i = j;
  }
  g_ptr_array_free(ka, TRUE);
  g_ptr_array_free(va, TRUE);
}
