/* study_diff.c: `wisp diff A.json B.json`: deltas between two simulate
 * reports (schema_version 1, replay/sim_report.h), per rank, per
 * communicator group and per collective type.
 *
 * Reports are read with cJSON (strict: one JSON value, nothing after it).
 * Rows are matched by key (rank number, group name, op name); a key present
 * in only one report is listed with the other side empty, never dropped.
 * Group and op times are the sums of the collectives' time_us (data
 * movement, start to end) over all member records.  Cost: O(records) with
 * hash lookups. */
#include "config.h"
#include "studies/study.h"
#include "common/wisp_json.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

typedef struct {
  double v[5];                 /* rank: finish, compute, exposed, overlapped, idle (ns) */
  gboolean have;
} side_rank;

typedef struct {
  double count, bytes, time_us;
  gboolean have;
} side_agg;

typedef struct {
  cJSON *doc;
  char *path;
  double step_ns;
  int n_ranks;
} report;

static gboolean load_report(const char *path, report *r, GError **error)
{
  char *text = NULL;
  gsize len = 0;
  memset(r, 0, sizeof *r);
  wisp_input_note(path); /* no output may replace it */
  if (!g_file_get_contents(path, &text, &len, error))
    return FALSE;
  const char *end = NULL;
  r->doc = cJSON_ParseWithLengthOpts(text, len + 1, &end, TRUE);
  if (r->doc == NULL) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s: %s (error near byte %td); give a report written by wisp "
                "simulate --json", path, wisp_json_too_deep(text, len, end, CJSON_NESTING_LIMIT) ? "arrays and "
                "objects nested deeper than the JSON reader's limit of " G_STRINGIFY(CJSON_NESTING_LIMIT) " levels"
                : "not valid JSON", end ? end - text : (ptrdiff_t)0);
    g_free(text);
    return FALSE;
  }
  g_free(text);
  r->path = g_strdup(path);
  const cJSON *sv = cJSON_GetObjectItemCaseSensitive(r->doc, "schema_version");
  const cJSON *st = cJSON_GetObjectItemCaseSensitive(r->doc, "step_time_ns");
  const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(r->doc, "ranks");
  if (!cJSON_IsNumber(sv) || sv->valueint != 1) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED, "%s: not a wisp simulate report of schema_version 1 "
                "(key 'schema_version')", path);
    return FALSE;
  }
  if (!cJSON_IsNumber(st) || !cJSON_IsArray(ranks)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s: the report lacks 'step_time_ns' or 'ranks'", path);
    return FALSE;
  }
  r->step_ns = st->valuedouble;
  r->n_ranks = cJSON_GetArraySize(ranks);
  return TRUE;
}

static double num(const cJSON *o, const char *k, const char *path, gboolean *ok)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  if (!cJSON_IsNumber(v)) {
    *ok = FALSE;
    return 0;
  }
  (void)path;
  return v->valuedouble;
}

static const char *str(const cJSON *o, const char *k)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The workload a report came from: its source, rank count and content
 * digest (workload_digest_sha256, written by wisp simulate since the digest
 * was added; NULL in older reports). */
static void workload_of(const report *r, const char **source, int *n_ranks, const char **digest)
{
  const cJSON *wl = cJSON_GetObjectItemCaseSensitive(r->doc, "workload");
  *source = wl ? str(wl, "source") : NULL;
  const cJSON *n = wl ? cJSON_GetObjectItemCaseSensitive(wl, "n_ranks") : NULL;
  *n_ranks = cJSON_IsNumber(n) ? n->valueint : -1;
  *digest = str(r->doc, "workload_digest_sha256");
}

/* NULL when A and B come from the same workload, else a sentence saying how
 * they differ (g_free it).  With both digests the digests decide (the same
 * traces under two paths are one workload); without them the source and
 * rank count do. */
static char *workload_difference(const report *a, const report *b)
{
  const char *sa, *sb, *da, *db;
  int na, nb;
  workload_of(a, &sa, &na, &da);
  workload_of(b, &sb, &nb, &db);
  gboolean differ = da && db ? strcmp(da, db) != 0
                             : (na != nb || g_strcmp0(sa, sb) != 0);
  if (!differ)
    return NULL;
  return g_strdup_printf("the two reports come from different workloads (A: %s, %d ranks; B: %s, %d ranks%s); "
                         "the deltas mix the workload change with the network change",
                         sa ? sa : "unknown source", na, sb ? sb : "unknown source", nb,
                         da && db ? "; their content digests differ" : "");
}

static const char *const rank_keys[5] = {"finish_ns", "compute_ns", "exposed_comm_ns", "overlapped_comm_ns", "idle_ns"};

/* Aggregates collectives[] by `field` ("group" or "op") into tbl
 * (name -> side_agg[2]); side is 0 or 1. */
static gboolean aggregate(const report *r, int side, const char *field, GHashTable *tbl, GPtrArray *order,
                          GError **error)
{
  const cJSON *cs = cJSON_GetObjectItemCaseSensitive(r->doc, "collectives"), *c;
  if (!cJSON_IsArray(cs)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s: the report lacks 'collectives'", r->path);
    return FALSE;
  }
  int i = 0;
  cJSON_ArrayForEach(c, cs) {
    const char *name = str(c, field);
    gboolean ok = TRUE;
    double bytes = num(c, "bytes", r->path, &ok), t = num(c, "time_us", r->path, &ok);
    if (name == NULL || !ok) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s: collectives[%d] lacks '%s', 'bytes' or 'time_us'",
                  r->path, i, field);
      return FALSE;
    }
    side_agg *a = g_hash_table_lookup(tbl, name);
    if (a == NULL) {
      a = g_new0(side_agg, 2);
      g_hash_table_insert(tbl, g_strdup(name), a);
      g_ptr_array_add(order, g_strdup(name));
    }
    a[side].have = TRUE;
    a[side].count += 1;
    a[side].bytes += bytes;
    a[side].time_us += t;
    i++;
  }
  return TRUE;
}

/* Natural order: names that are decimal numbers by value, before others. */
static gint cmp_names(gconstpointer a, gconstpointer b)
{
  const char *x = *(char *const *)a, *y = *(char *const *)b;
  gboolean nx = *x && strspn(x, "0123456789") == strlen(x), ny = *y && strspn(y, "0123456789") == strlen(y);
  if (nx && ny && strlen(x) != strlen(y))
    return strlen(x) < strlen(y) ? -1 : 1;
  if (nx != ny)
    return nx ? -1 : 1;
  return strcmp(x, y);
}

static void print_delta(FILE *out, double a, double b, gboolean ha, gboolean hb, double scale)
{
  if (!ha || !hb) {
    char x[32] = "-", y[32] = "-";
    if (ha)
      g_snprintf(x, sizeof x, "%.3f", a / scale);
    if (hb)
      g_snprintf(y, sizeof y, "%.3f", b / scale);
    fprintf(out, " %14s %14s %14s %9s", x, y, "-", "-");
    return;
  }
  fprintf(out, " %14.3f %14.3f %+14.3f", a / scale, b / scale, (b - a) / scale);
  if (a != 0)
    fprintf(out, " %+8.2f%%", 100.0 * (b - a) / a);
  else
    fprintf(out, " %9s", "-");
}

static void json_pair(wisp_json *j, const char *key, double a, double b, gboolean ha, gboolean hb)
{
  wisp_json_begin_object(j, key);
  if (ha)
    wisp_json_double(j, "a", a, 3);
  else
    wisp_json_string(j, "a", NULL);
  if (hb)
    wisp_json_double(j, "b", b, 3);
  else
    wisp_json_string(j, "b", NULL);
  if (ha && hb)
    wisp_json_double(j, "delta", b - a, 3);
  else
    wisp_json_string(j, "delta", NULL);
  wisp_json_end_object(j);
}

/* Both reports and what the diff gathers from them: per-rank parts (two
 * sides per rank), and per group and per collective type the records,
 * bytes and time of each side, with their names in order. */
typedef struct {
  report r[2];
  GHashTable *groups, *ops;
  GPtrArray *gorder, *oorder;
  side_rank *ranks;
  int n;
  char *differ;
} diff_state;

/* The ranks array of side s: each rank's five parts into d->ranks. */
static gboolean diff_read_ranks(diff_state *d, int s, GError **error)
{
  const cJSON *e;
  int i = 0;
  cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(d->r[s].doc, "ranks")) {
    gboolean good = TRUE;
    int rk = (int)num(e, "rank", d->r[s].path, &good);
    side_rank x = {.have = TRUE};
    for (int k = 0; k < 5; k++)
      x.v[k] = num(e, rank_keys[k], d->r[s].path, &good);
    if (!good || rk < 0 || rk >= d->n) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s: d->ranks[%d] lacks a field of rank, %s, %s, %s, %s, %s "
                  "or has a rank out of range", d->r[s].path, i, rank_keys[0], rank_keys[1], rank_keys[2],
                  rank_keys[3], rank_keys[4]);
      return FALSE;
    }
    d->ranks[2 * rk + s] = x;
    i++;
  }
  return TRUE;
}

/* The text diff: step time, per rank (at most max_rows ranks; < 0: all),
 * per communicator group and per collective type. */
static void diff_print(const diff_state *d, FILE *out, int max_rows, const char *a_path, const char *b_path)
{
  fprintf(out, "A: %s\nB: %s\n", a_path, b_path);
  if (d->r[0].n_ranks != d->r[1].n_ranks)
    fprintf(out, "note: A has %d ranks, B has %d; ranks present in one report only show '-'\n", d->r[0].n_ranks,
            d->r[1].n_ranks);
  fprintf(out, "%-24s %14s %14s %14s %9s\n", "step time (ms)", "A", "B", "B - A", "change");
  fprintf(out, "%-24s", "step");
  print_delta(out, d->r[0].step_ns, d->r[1].step_ns, TRUE, TRUE, 1e6);
  fprintf(out, "\n\nper rank (ms):\n%-24s %14s %14s %14s %9s\n", "rank / part", "A", "B", "B - A", "change");
  for (int k = 0; k < d->n; k++) {
    if (max_rows >= 0 && k >= max_rows) {
      fprintf(out, "... %d more ranks (see --json)\n", d->n - k);
      break;
    }
    static const char *const parts[5] = {"finish", "compute", "exposed comm", "overlapped comm", "idle"};
    for (int p = 0; p < 5; p++) {
      char label[48];
      g_snprintf(label, sizeof label, "%d %s", k, parts[p]);
      fprintf(out, "%-24s", label);
      print_delta(out, d->ranks[2 * k].v[p], d->ranks[2 * k + 1].v[p], d->ranks[2 * k].have, d->ranks[2 * k + 1].have, 1e6);
      fputc('\n', out);
    }
  }
  for (int t = 0; t < 2; t++) {
    GHashTable *tbl = t ? d->ops : d->groups;
    GPtrArray *order = t ? d->oorder : d->gorder;
    fprintf(out, "\nper %s (records, bytes in MiB, summed collective time in ms):\n",
            t ? "collective type" : "communicator group");
    for (guint i = 0; i < order->len; i++) {
      const char *name = order->pdata[i];
      side_agg *a = g_hash_table_lookup(tbl, name);
      char label[64];
      g_snprintf(label, sizeof label, "%.40s records", name);
      fprintf(out, "%-24s", label);
      print_delta(out, a[0].count, a[1].count, a[0].have, a[1].have, 1);
      g_snprintf(label, sizeof label, "%.40s bytes", name);
      fprintf(out, "\n%-24s", label);
      print_delta(out, a[0].bytes, a[1].bytes, a[0].have, a[1].have, 1048576.0);
      g_snprintf(label, sizeof label, "%.40s time", name);
      fprintf(out, "\n%-24s", label);
      print_delta(out, a[0].time_us, a[1].time_us, a[0].have, a[1].have, 1e3);
      fputc('\n', out);
    }
  }

}

/* --json: the same comparison as the text, written atomically. */
static gboolean diff_write_json(const diff_state *d, const char *json_path, const char *a_path, const char *b_path,
                                GError **error)
{
  wisp_afile *f = wisp_afile_open(json_path, error);
  if (f == NULL)
    return FALSE;
  wisp_json j;
  wisp_json_init(&j, wisp_afile_stream(f), 3);
  wisp_json_begin_object(&j, NULL);
  wisp_json_int(&j, "schema_version", STUDY_SCHEMA_VERSION);
  wisp_json_string(&j, "kind", "diff");
  wisp_json_string(&j, "wisp_version", PACKAGE_VERSION);
  wisp_json_string(&j, "a", a_path);
  wisp_json_string(&j, "b", b_path);
  wisp_json_bool(&j, "same_workload", d->differ == NULL);
  json_pair(&j, "step_time_ns", d->r[0].step_ns, d->r[1].step_ns, TRUE, TRUE);
  wisp_json_begin_array(&j, "ranks");
  for (int k = 0; k < d->n; k++) {
    wisp_json_begin_object(&j, NULL);
    wisp_json_int(&j, "rank", k);
    for (int p = 0; p < 5; p++)
      json_pair(&j, rank_keys[p], d->ranks[2 * k].v[p], d->ranks[2 * k + 1].v[p], d->ranks[2 * k].have,
                d->ranks[2 * k + 1].have);
    wisp_json_end_object(&j);
  }
  wisp_json_end_array(&j);
  for (int t = 0; t < 2; t++) {
    GHashTable *tbl = t ? d->ops : d->groups;
    GPtrArray *order = t ? d->oorder : d->gorder;
    wisp_json_begin_array(&j, t ? "op_types" : "groups");
    for (guint i = 0; i < order->len; i++) {
      side_agg *a = g_hash_table_lookup(tbl, order->pdata[i]);
      wisp_json_begin_object(&j, NULL);
      wisp_json_string(&j, t ? "op" : "group", order->pdata[i]);
      json_pair(&j, "records", a[0].count, a[1].count, a[0].have, a[1].have);
      json_pair(&j, "bytes", a[0].bytes, a[1].bytes, a[0].have, a[1].have);
      json_pair(&j, "time_us", a[0].time_us, a[1].time_us, a[0].have, a[1].have);
      wisp_json_end_object(&j);
    }
    wisp_json_end_array(&j);
  }
  wisp_json_end_object(&j);
  wisp_json_finish(&j);
  if (!wisp_afile_commit(f, error))
    return FALSE;
  return TRUE;
}

gboolean study_diff_reports(const char *a_path, const char *b_path, FILE *out, int max_rows, const char *json_path,
                            GError **error)
{
  diff_state d;
  gboolean ok = FALSE;
  memset(&d, 0, sizeof d);
  d.groups = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  d.ops = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  d.gorder = g_ptr_array_new_with_free_func(g_free);
  d.oorder = g_ptr_array_new_with_free_func(g_free);
  if (!load_report(a_path, &d.r[0], error) || !load_report(b_path, &d.r[1], error) || !wisp_output_check(error))
    goto out;
  d.n = MAX(d.r[0].n_ranks, d.r[1].n_ranks);
  d.ranks = g_new0(side_rank, 2 * (d.n ? d.n : 1));
  for (int s = 0; s < 2; s++)
    if (!diff_read_ranks(&d, s, error) || !aggregate(&d.r[s], s, "group", d.groups, d.gorder, error) ||
        !aggregate(&d.r[s], s, "op", d.ops, d.oorder, error))
      goto out;
  g_ptr_array_sort(d.gorder, cmp_names);
  g_ptr_array_sort(d.oorder, cmp_names);
  d.differ = workload_difference(&d.r[0], &d.r[1]);
  if (d.differ)
    fprintf(stderr, "wisp: WARNING: %s\n", d.differ);
  diff_print(&d, out, max_rows, a_path, b_path);
  if (json_path && !diff_write_json(&d, json_path, a_path, b_path, error))
    goto out;
  ok = TRUE;
out:
  g_free(d.differ);
  for (int s = 0; s < 2; s++) {
    cJSON_Delete(d.r[s].doc);
    g_free(d.r[s].path);
  }
  g_free(d.ranks);
  g_hash_table_destroy(d.groups);
  g_hash_table_destroy(d.ops);
  g_ptr_array_unref(d.gorder);
  g_ptr_array_unref(d.oorder);
  return ok;
}
