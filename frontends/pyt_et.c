/* pyt_et.c: reads a PyTorch execution trace (schemas 1.0.x and 1.1.x) into a
 * pet_trace (pyt_et.h).
 *
 * Schema 1.0.x (PyTorch 2.0/2.1) stores a node's fields flat: "parent",
 * "rf_id", "tid", "inputs" as a list of values with "input_types" beside
 * it.  Schema 1.0.2+ and 1.1.x store "ctrl_deps" (the parent), "inputs" and
 * "outputs" as objects {"values", "shapes", "types"} and the rest as
 * "attrs" [{"name", "type", "value"}].  A tensor value is the list
 * [tensor id, storage id, offset, numel, element size, device]; lists of
 * tensors nest.  record_param_comms carries the collective: its first
 * String input names it ("allreduce", "all_to_allv", "wait", ...), the
 * first tensor (list) input is what it sends, the two lists after the name
 * are the per-peer input and output splits in elements, and the first two
 * Int inputs are the sequence number and the process group's handle.
 * A "wait" record_param_comms carries the awaited sequence number first.
 *
 * The whole document is parsed with cJSON (memory about ten times the file),
 * then reduced to O(nodes + tensors).
 */
#include "frontends/pyt_et_internal.h"
#include "frontends/kineto_rank.h"
#include "common/wisp_json.h"
#include "common/wisp_memory.h"

#include <cjson/cJSON.h>
#include <zlib.h>
#include <string.h>

/* The file's bytes, plain or gzip (zlib reads both).  O(size). */
char *pet_slurp(const char *path, size_t *len, GError **error)
{
  wisp_input_note(path); /* no output may replace it */
  gzFile f = gzopen(path, "rb");
  if (f == NULL) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot open: %s", path, g_strerror(errno));
    return NULL;
  }
  GString *s = g_string_sized_new(1 << 16);
  char buf[65536];
  int n;
  wisp_json_scan scan = WISP_JSON_SCAN_INIT; /* stops a 4 GiB string in a 4 MB .json.gz at 64 MiB */
  while ((n = gzread(f, buf, sizeof buf)) > 0 && wisp_json_scan_feed(&scan, buf, (size_t)n, path, error))
    g_string_append_len(s, buf, n);
  int errnum = 0;
  const char *msg = n < 0 ? gzerror(f, &errnum) : NULL;
  if (n != 0) { /* a read error, or the scan stopped the read */
    if (n < 0)
      g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot read (after %zu bytes): %s", path, s->len, msg);
    gzclose(f);
    g_string_free(s, TRUE);
    return NULL;
  }
  gzclose(f);
  *len = s->len;
  return g_string_free(s, FALSE);
}

int pet_rank_from_name(const char *path)
{
  char *base = g_path_get_basename(path);
  char *dot = strchr(base, '.');
  if (dot)
    *dot = '\0';
  size_t n = strlen(base), k = n;
  while (k > 0 && g_ascii_isdigit(base[k - 1]))
    k--;
  int rank = -1;
  if (k < n && n - k <= 7)
    rank = atoi(base + k);
  g_free(base);
  return rank;
}

/* A JSON number as int64_t, clamped to +-9e15 (beyond a double's exact
 * integers; a cast of a larger value would be undefined). */
static int64_t num_i64(double x)
{
  return x > 9.0e15 ? (int64_t)9.0e15 : x < -9.0e15 ? -(int64_t)9.0e15 : (int64_t)x;
}

/* Whether v is a tensor value [id, storage, offset, numel, element size, device]. */
static gboolean is_tensor(const cJSON *v)
{
  if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 6)
    return FALSE;
  for (int i = 0; i < 5; i++)
    if (!cJSON_IsNumber(cJSON_GetArrayItem(v, i)))
      return FALSE;
  return cJSON_IsString(cJSON_GetArrayItem(v, 5));
}

/* Appends the ids of every tensor in v (nested lists walked, depth at most
 * 8) and returns their bytes (numel x element size). */
static uint64_t collect_tensors(const cJSON *v, GArray *ids, int *elem_bytes, int depth)
{
  if (is_tensor(v)) {
    double id = cJSON_GetArrayItem(v, 0)->valuedouble, numel = cJSON_GetArrayItem(v, 3)->valuedouble;
    double es = cJSON_GetArrayItem(v, 4)->valuedouble;
    uint64_t tid = id >= 0 && id < 9.0e15 ? (uint64_t)id : 0;
    if (ids)
      g_array_append_val(ids, tid);
    if (elem_bytes && *elem_bytes == 0 && es > 0 && es <= 64)
      *elem_bytes = (int)es;
    if (numel < 0 || es < 0 || numel > 9.0e15 || es > 64)
      return 0;
    return (uint64_t)numel * (uint64_t)es;
  }
  uint64_t sum = 0;
  if (cJSON_IsArray(v) && depth < 8) {
    const cJSON *e;
    cJSON_ArrayForEach(e, v) sum += collect_tensors(e, ids, elem_bytes, depth + 1);
  }
  return sum;
}

/* A node's field across the two layouts: the flat key (1.0.x) or the attr
 * of that name (1.0.2+, 1.1.x). */
static const cJSON *field(const cJSON *node, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(node, key);
  if (v)
    return v;
  const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(node, "attrs"), *a;
  cJSON_ArrayForEach(a, attrs)
  {
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(a, "name");
    if (cJSON_IsString(n) && strcmp(n->valuestring, key) == 0)
      return cJSON_GetObjectItemCaseSensitive(a, "value");
  }
  return NULL;
}

static uint64_t field_u64(const cJSON *node, const char *key)
{
  const cJSON *v = field(node, key);
  return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 9.0e15 ? (uint64_t)v->valuedouble : 0;
}

/* The values list of "inputs" / "outputs" in either layout. */
static const cJSON *values_of(const cJSON *node, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(node, key);
  if (cJSON_IsObject(v))
    v = cJSON_GetObjectItemCaseSensitive(v, "values");
  return cJSON_IsArray(v) ? v : NULL;
}

static GArray *u64_array(void)
{
  return g_array_new(FALSE, FALSE, sizeof(uint64_t));
}

/* Splits: a list of numbers (elements per peer); NULL when empty. */
static GArray *splits_of(const cJSON *v)
{
  if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0)
    return NULL;
  GArray *a = u64_array();
  const cJSON *e;
  cJSON_ArrayForEach(e, v)
  {
    uint64_t x = cJSON_IsNumber(e) && e->valuedouble >= 0 && e->valuedouble < 9.0e15 ? (uint64_t)e->valuedouble : 0;
    g_array_append_val(a, x);
  }
  return a;
}

/* Fills the collective of a record_param_comms node from its inputs.
 * Returns FALSE (with *why) when no collective name is found. */
static gboolean parse_comm(const cJSON *node, pet_node *pn, pet_comm *c, const char **why)
{
  const cJSON *in = values_of(node, "inputs"), *out = values_of(node, "outputs"), *e;
  int k = 0, name_at = -1, ints = 0;
  int64_t first_int[2] = {-1, 0};
  gboolean tensor_seen = FALSE;
  memset(c, 0, sizeof *c);
  c->seq = -1;
  c->in_tensors = u64_array();
  c->out_tensors = u64_array();
  cJSON_ArrayForEach(e, in)
  {
    if (cJSON_IsString(e) && name_at < 0) {
      name_at = k;
      c->op = g_strdup(e->valuestring);
    } else if (name_at < 0 && cJSON_IsNumber(e) && ints < 2) {
      first_int[ints++] = num_i64(e->valuedouble);
    } else if (name_at < 0 && !tensor_seen && cJSON_IsArray(e)) {
      c->in_bytes = collect_tensors(e, c->in_tensors, &c->elem_bytes, 0);
      tensor_seen = TRUE;
    } else if (name_at >= 0 && k == name_at + 1) {
      c->in_splits = splits_of(e);
    } else if (name_at >= 0 && k == name_at + 2) {
      c->out_splits = splits_of(e);
    }
    k++;
  }
  if (c->op == NULL) {
    *why = "record_param_comms without a collective name (no String input)";
    return FALSE;
  }
  c->seq = first_int[0];
  c->pg = first_int[1] > 0 ? (uint64_t)first_int[1] : 0;
  if (out)
    c->out_bytes = collect_tensors(out, c->out_tensors, NULL, 0);
  if (strcmp(c->op, "wait") == 0) {
    pn->wait = TRUE;
    pn->wait_seq = c->seq;
    return TRUE;
  }
  if (!kt_coll_from_arg(c->op, &c->coll, &c->p2p)) {
    *why = "record_param_comms names a collective wisp does not know";
    return FALSE;
  }
  c->node_id = pn->id;
  c->rf_id = pn->rf_id;
  return TRUE;
}

static void comm_clear(pet_comm *c)
{
  g_free(c->op);
  if (c->in_splits)
    g_array_free(c->in_splits, TRUE);
  if (c->out_splits)
    g_array_free(c->out_splits, TRUE);
  if (c->in_tensors)
    g_array_free(c->in_tensors, TRUE);
  if (c->out_tensors)
    g_array_free(c->out_tensors, TRUE);
}

void pet_trace_free(pet_trace *t)
{
  if (t == NULL)
    return;
  for (guint i = 0; t->nodes && i < t->nodes->len; i++) {
    pet_node *n = &g_array_index(t->nodes, pet_node, i);
    g_free(n->name);
    g_array_free(n->in_tensors, TRUE);
    g_array_free(n->out_tensors, TRUE);
  }
  for (guint i = 0; t->comms && i < t->comms->len; i++)
    comm_clear(&g_array_index(t->comms, pet_comm, i));
  if (t->nodes)
    g_array_free(t->nodes, TRUE);
  if (t->comms)
    g_array_free(t->comms, TRUE);
  g_free(t->path);
  g_free(t->schema);
  g_free(t);
}

/* The header: "schema" 1.0.x or 1.1.x, "pid", and a "nodes" list. */
static gboolean read_header(pet_trace *t, const cJSON *doc, const cJSON **nodes, GError **error)
{
  const cJSON *schema = cJSON_GetObjectItemCaseSensitive(doc, "schema");
  *nodes = cJSON_GetObjectItemCaseSensitive(doc, "nodes");
  if (!cJSON_IsArray(*nodes)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: not a PyTorch execution trace: no \"nodes\" list at the top level", t->path);
    return FALSE;
  }
  if (!cJSON_IsString(schema)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: not a PyTorch execution trace: no \"schema\" string (a Chakra JSON from chakra_jsonizer? "
                "give the Chakra .et files instead)", t->path);
    return FALSE;
  }
  t->schema = g_strdup(schema->valuestring);
  if (g_str_has_prefix(t->schema, "1.0."))
    t->schema_minor = 0;
  else if (g_str_has_prefix(t->schema, "1.1."))
    t->schema_minor = 1;
  else {
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED,
                "%s: execution trace schema \"%s\" is not one wisp reads (1.0.x, 1.1.x)", t->path, t->schema);
    return FALSE;
  }
  const cJSON *pid = cJSON_GetObjectItemCaseSensitive(doc, "pid");
  t->pid = cJSON_IsNumber(pid) ? num_i64(pid->valuedouble) : -1;
  return TRUE;
}

/* One node; FALSE with the error naming the node. */
static gboolean read_node(pet_trace *t, const cJSON *node, guint index, GError **error)
{
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(node, "id"), *name = cJSON_GetObjectItemCaseSensitive(node, "name");
  if (!cJSON_IsObject(node) || !cJSON_IsNumber(id) || id->valuedouble < 0 || id->valuedouble > 9.0e15 ||
      !cJSON_IsString(name)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: node %u (0-based in \"nodes\"): needs an \"id\" from 0 to 9e15 and a \"name\"", t->path,
                index);
    return FALSE;
  }
  pet_node pn = {0};
  pn.id = (uint64_t)id->valuedouble;
  pn.name = g_strdup(name->valuestring);
  pn.parent = field_u64(node, t->schema_minor == 0 && cJSON_GetObjectItemCaseSensitive(node, "parent") ? "parent"
                                                                                                      : "ctrl_deps");
  pn.rf_id = field_u64(node, "rf_id");
  pn.tid = field_u64(node, "tid");
  pn.comm = -1;
  pn.in_tensors = u64_array();
  pn.out_tensors = u64_array();
  collect_tensors(values_of(node, "inputs"), pn.in_tensors, NULL, 0);
  collect_tensors(values_of(node, "outputs"), pn.out_tensors, NULL, 0);
  if (strcmp(pn.name, "record_param_comms") == 0) {
    pet_comm c;
    const char *why = NULL;
    if (!parse_comm(node, &pn, &c, &why)) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: node %u (id %" G_GUINT64_FORMAT "): %s%s%s%s", t->path,
                  index, pn.id, why, c.op ? " ('" : "", c.op ? c.op : "", c.op ? "')" : "");
      comm_clear(&c);
      g_free(pn.name);
      g_array_free(pn.in_tensors, TRUE);
      g_array_free(pn.out_tensors, TRUE);
      return FALSE;
    }
    if (pn.wait) {
      t->waits++;
      comm_clear(&c);
    } else {
      pn.comm = (int)t->comms->len;
      g_array_append_val(t->comms, c);
    }
  }
  g_array_append_val(t->nodes, pn);
  return TRUE;
}

static int cmp_comm_id(gconstpointer a, gconstpointer b)
{
  uint64_t x = ((const pet_comm *)a)->node_id, y = ((const pet_comm *)b)->node_id;
  return x < y ? -1 : x > y;
}

pet_trace *pet_trace_read(const char *path, GError **error)
{
  size_t len = 0;
  char *text = pet_slurp(path, &len, error);
  if (text == NULL)
    return NULL;
  char work[160], size[32];
  g_snprintf(work, sizeof work, "the execution trace %.100s (%s of JSON)", path, wisp_memory_size_string(len, size));
  if (!wisp_memory_check((uint64_t)len * 2, work, error)) { /* cJSON's tree is at least the text again */
    g_free(text);
    return NULL;
  }
  pet_trace *t = pet_trace_parse(text, len, path, error);
  g_free(text);
  return t;
}

pet_trace *pet_trace_parse(const char *text, size_t len, const char *path, GError **error)
{
  const char *end = NULL;
  cJSON *doc = cJSON_ParseWithLengthOpts(text, len, &end, FALSE);
  if (doc == NULL) {
    size_t off = end && end >= text && end <= text + len ? (size_t)(end - text) : 0;
    if (wisp_json_too_deep(text, len, end, CJSON_NESTING_LIMIT))
      g_set_error(error, WISP_ERROR, WISP_ERROR_LIMIT, "%s: offset %zu: arrays and objects nested deeper than %d "
                  "levels, the JSON reader's limit (no execution trace nests that deep: a damaged file?)", path, off,
                  CJSON_NESTING_LIMIT);
    else
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: offset %zu: not valid JSON (a truncated or damaged "
                "execution trace?)", path, off);
    return NULL;
  }
  pet_trace *t = g_new0(pet_trace, 1);
  t->path = g_strdup(path);
  t->rank = pet_rank_from_name(path);
  t->nodes = g_array_new(FALSE, FALSE, sizeof(pet_node));
  t->comms = g_array_new(FALSE, FALSE, sizeof(pet_comm));
  const cJSON *nodes = NULL, *node;
  gboolean ok = cJSON_IsObject(doc) && read_header(t, doc, &nodes, error);
  if (!cJSON_IsObject(doc))
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: not a PyTorch execution trace: the document is not a "
                "JSON object", path);
  guint index = 0;
  if (!ok)
    nodes = NULL;
  cJSON_ArrayForEach(node, nodes)
  {
    if (!(ok = read_node(t, node, index++, error)))
      break;
  }
  cJSON_Delete(doc);
  if (!ok) {
    pet_trace_free(t);
    return NULL;
  }
  /* Collectives in node id order (the order the CPU issued them); the nodes
   * keep their comm index valid by mapping through node ids afterwards. */
  g_array_sort(t->comms, cmp_comm_id);
  GHashTable *at = g_hash_table_new(g_int64_hash, g_int64_equal);
  for (guint i = 0; i < t->comms->len; i++)
    g_hash_table_insert(at, &g_array_index(t->comms, pet_comm, i).node_id, GUINT_TO_POINTER(i + 1));
  for (guint i = 0; i < t->nodes->len; i++) {
    pet_node *n = &g_array_index(t->nodes, pet_node, i);
    if (n->comm >= 0)
      n->comm = (int)GPOINTER_TO_UINT(g_hash_table_lookup(at, &n->id)) - 1;
  }
  g_hash_table_destroy(at);
  return t;
}
