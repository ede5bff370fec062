/* pyt_et_rfid.c: joins an execution trace's collectives to the GPU kernels
 * of the rank's Kineto trace as Chakra's trace linker does
 * (pet_rf_link_kineto, pyt_et_internal.h).
 *
 * The chain: an execution-trace node's rf_id is the "Record function id"
 * arg of one Kineto CPU op; that op's "External id" is the External id of
 * the CUDA runtime launches it made; a launch's "correlation" is the
 * correlation of the GPU activity it caused.  Where a trace has no runtime
 * event for the External id, a GPU event carrying the External id itself
 * is taken (newer Kineto writes it on kernels too).  Of the GPU events
 * found, the first whose name contains "ccl" (NCCL, RCCL kernels) is the
 * collective's kernel, else the first.  Each execution-trace collective
 * ends in one of: linked (a kernel and its start), no rf_id in the
 * execution trace, no Kineto CPU op with that rf_id, or an op that
 * launched no GPU activity.
 *
 * A Kineto trace without any "Record function id" (PyTorch before 2.1,
 * such as the DLRM set) is not parsed at all: has_rf is FALSE and the
 * caller links by position.  Otherwise the whole document is parsed with
 * cJSON (memory about ten times the file) and reduced to hash tables of
 * O(events).  Kernel starts are kept in picoseconds after the trace's
 * earliest event, from the microsecond doubles of the file: exact for
 * traces on a small clock, within a quarter of a microsecond for
 * epoch-based ones (a double's precision there).
 */
#include "frontends/pyt_et_internal.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

void pet_rf_links_clear(pet_rf_links *l)
{
  if (l->status)
    g_array_free(l->status, TRUE);
  if (l->kernel_ps)
    g_array_free(l->kernel_ps, TRUE);
  g_free(l->why);
  memset(l, 0, sizeof *l);
}

static gboolean num_arg(const cJSON *args, const char *key, int64_t *out)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, key);
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || fabs(v->valuedouble) > 9.0e15)
    return FALSE;
  *out = (int64_t)v->valuedouble;
  return TRUE;
}

/* The event tables one join needs. */
typedef struct {
  GHashTable *rf_ext;      /* rf_id -> External id of its CPU op (int64 keys and values, boxed) */
  GHashTable *ext_corr;    /* External id -> GSList of launch correlations */
  GHashTable *corr_gpu;    /* correlation -> GSList of GPU events (cJSON *) */
  GHashTable *ext_gpu;     /* External id -> GSList of GPU events */
  double ts0;              /* the earliest ts (us) */
  GArray *boxes;           /* int64_t storage for the keys (never reallocated: sized up front) */
} kt_tables;

static int64_t *box(kt_tables *k, int64_t v)
{
  g_array_append_val(k->boxes, v);
  return &g_array_index(k->boxes, int64_t, k->boxes->len - 1);
}

static void push(GHashTable *h, kt_tables *k, int64_t key, gpointer v)
{
  GSList *l = g_hash_table_lookup(h, &key);
  if (l == NULL) {
    g_hash_table_insert(h, box(k, key), g_slist_prepend(NULL, v));
    return;
  }
  l = g_slist_append(l, v); /* keeps the head: file order */
  (void)l;
}

static gboolean is_gpu_cat(const char *cat)
{
  return strcmp(cat, "kernel") == 0 || strcmp(cat, "gpu_memcpy") == 0 || strcmp(cat, "gpu_memset") == 0 ||
         strcmp(cat, "Kernel") == 0 || strcmp(cat, "Memcpy") == 0 || strcmp(cat, "Memset") == 0;
}

static void index_event(kt_tables *k, const cJSON *e)
{
  const cJSON *cat = cJSON_GetObjectItemCaseSensitive(e, "cat"), *args = cJSON_GetObjectItemCaseSensitive(e, "args");
  const cJSON *ts = cJSON_GetObjectItemCaseSensitive(e, "ts");
  if (!cJSON_IsString(cat) || !cJSON_IsObject(args) || !cJSON_IsNumber(ts) || !isfinite(ts->valuedouble))
    return;
  if (ts->valuedouble < k->ts0)
    k->ts0 = ts->valuedouble;
  int64_t rf = 0, ext = 0, corr = 0;
  gboolean has_ext = num_arg(args, "External id", &ext), has_corr = num_arg(args, "correlation", &corr);
  if (num_arg(args, "Record function id", &rf) && has_ext && (strcmp(cat->valuestring, "cpu_op") == 0 ||
      strcmp(cat->valuestring, "user_annotation") == 0)) {
    if (!g_hash_table_contains(k->rf_ext, &rf))
      g_hash_table_insert(k->rf_ext, box(k, rf), box(k, ext));
  } else if ((strcmp(cat->valuestring, "cuda_runtime") == 0 || strcmp(cat->valuestring, "cuda_driver") == 0) &&
             has_ext && has_corr) {
    push(k->ext_corr, k, ext, box(k, corr));
  } else if (is_gpu_cat(cat->valuestring)) {
    if (has_corr)
      push(k->corr_gpu, k, corr, (gpointer)e);
    if (has_ext)
      push(k->ext_gpu, k, ext, (gpointer)e);
  }
}

static void free_lists(gpointer v) { g_slist_free(v); }

/* The GPU events of CPU op ext: through its launches, else by External id. */
static GSList *gpu_of(const kt_tables *k, int64_t ext)
{
  GSList *out = NULL;
  for (GSList *c = g_hash_table_lookup(k->ext_corr, &ext); c; c = c->next)
    for (GSList *g = g_hash_table_lookup(k->corr_gpu, c->data); g; g = g->next)
      out = g_slist_append(out, g->data);
  if (out == NULL)
    out = g_slist_copy(g_hash_table_lookup(k->ext_gpu, &ext));
  return out;
}

static const cJSON *pick_kernel(GSList *gpu)
{
  for (GSList *g = gpu; g; g = g->next) {
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(g->data, "name");
    if (cJSON_IsString(n) && strcasestr(n->valuestring, "ccl"))
      return g->data;
  }
  return gpu ? gpu->data : NULL;
}

/* Follows every collective of t through the tables. */
static void join(const pet_trace *t, const kt_tables *k, pet_rf_links *out)
{
  for (guint i = 0; i < t->comms->len; i++) {
    const pet_comm *pc = &g_array_index(t->comms, pet_comm, i);
    int st = PET_RF_LINKED;
    int64_t ps = -1, rf = (int64_t)pc->rf_id;
    const int64_t *ext = pc->rf_id ? g_hash_table_lookup(k->rf_ext, &rf) : NULL;
    if (pc->rf_id == 0) {
      st = PET_RF_NO_RFID;
    } else if (ext == NULL) {
      st = PET_RF_NO_OP;
    } else {
      GSList *gpu = gpu_of(k, *ext);
      const cJSON *kern = pick_kernel(gpu);
      g_slist_free(gpu);
      if (kern == NULL)
        st = PET_RF_NO_KERNEL;
      else {
        /* At most 1e18 ps (11.6 days) after the earliest event, so that
         * offsets and tolerances stay far inside int64_t. */
        double d = (cJSON_GetObjectItemCaseSensitive(kern, "ts")->valuedouble - k->ts0) * 1e6;
        ps = d < 1e18 ? llround(d) : INT64_C(1000000000000000000);
      }
    }
    g_array_append_val(out->status, st);
    g_array_append_val(out->kernel_ps, ps);
  }
}

/* The rank a Kineto trace states (distributedInfo.rank), else the one its
 * file name ends in; -1 when neither. */
static int kineto_rank(const cJSON *doc, const char *path)
{
  const cJSON *di = cJSON_GetObjectItemCaseSensitive(doc, "distributedInfo");
  const cJSON *r = cJSON_GetObjectItemCaseSensitive(di, "rank");
  if (cJSON_IsNumber(r) && r->valuedouble >= 0 && r->valuedouble < 1e7)
    return (int)r->valuedouble;
  return pet_rank_from_name(path);
}

gboolean pet_rf_link_kineto(pet_trace *const *by_rank, int n, const char *kineto_path, pet_rf_links *out,
                            GError **error)
{
  memset(out, 0, sizeof *out);
  out->rank = -1;
  out->status = g_array_new(FALSE, FALSE, sizeof(int));
  out->kernel_ps = g_array_new(FALSE, FALSE, sizeof(int64_t));
  size_t len = 0;
  char *text = pet_slurp(kineto_path, &len, error);
  if (text == NULL)
    return FALSE;
  if (g_strstr_len(text, (gssize)len, "\"Record function id\"") == NULL) {
    out->why = g_strdup_printf("%s carries no \"Record function id\" (PyTorch before 2.1 writes none)", kineto_path);
    g_free(text);
    return TRUE;
  }
  const char *end = NULL;
  cJSON *doc = cJSON_ParseWithLengthOpts(text, len, &end, FALSE);
  g_free(text);
  const cJSON *events = doc ? cJSON_GetObjectItemCaseSensitive(doc, "traceEvents") : NULL, *e;
  if (!cJSON_IsArray(events)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: not a Kineto trace with a \"traceEvents\" list (it "
                "was read once already; changed since?)", kineto_path);
    cJSON_Delete(doc);
    return FALSE;
  }
  kt_tables k = { g_hash_table_new(g_int64_hash, g_int64_equal),
                  g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, free_lists),
                  g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, free_lists),
                  g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, free_lists), INFINITY,
                  g_array_sized_new(FALSE, FALSE, sizeof(int64_t), 4 * (guint)cJSON_GetArraySize(events) + 4) };
  cJSON_ArrayForEach(e, events) index_event(&k, e);
  out->rank = kineto_rank(doc, kineto_path);
  out->has_rf = g_hash_table_size(k.rf_ext) > 0 && out->rank >= 0 && out->rank < n;
  if (out->has_rf)
    join(by_rank[out->rank], &k, out);
  else if (g_hash_table_size(k.rf_ext) > 0)
    out->why = g_strdup_printf("%s states no rank wisp can match (distributedInfo.rank or a trailing number in its "
                               "name, below %d)", kineto_path, n);
  else
    out->why = g_strdup_printf("%s has no CPU op with both a \"Record function id\" and an \"External id\"",
                               kineto_path);
  g_hash_table_destroy(k.rf_ext);
  g_hash_table_destroy(k.ext_corr);
  g_hash_table_destroy(k.corr_gpu);
  g_hash_table_destroy(k.ext_gpu);
  g_array_free(k.boxes, TRUE);
  cJSON_Delete(doc);
  return TRUE;
}
