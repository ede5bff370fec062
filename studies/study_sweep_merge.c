/* study_sweep_merge.c: sweep-merge: the shards' CSV and JSONL outputs
 * joined into one sweep's, each point once, checked to come from the
 * same spec, workload and cluster (same digest and point count) and to
 * agree between CSV row and JSON line.  O(total rows).
 */
#include "config.h"
#include "studies/study_sweep_internal.h"

#include <stdlib.h>
#include <string.h>

static int row_point(const char *line)
{
  char *end;
  long p = strtol(line, &end, 10);
  return end != line && *end == ',' && p >= 0 && p < STUDY_MAX_POINTS ? (int)p : -1;
}

/* Extracts a string value "key": "..." (no escapes needed: digests, names
 * without quotes) or an integer "key": N from a JSON line. */
static char *json_field(const char *line, const char *key)
{
  char *pat = g_strdup_printf("\"%s\": ", key);
  const char *p = strstr(line, pat);
  g_free(pat);
  if (p == NULL)
    return NULL;
  p += strlen(key) + 4;
  if (*p == '"') {
    const char *e = strchr(p + 1, '"');
    return e ? g_strndup(p + 1, (gsize)(e - p - 1)) : NULL;
  }
  const char *e = p;
  while (*e && *e != ',' && *e != '}')
    e++;
  return g_strndup(p, (gsize)(e - p));
}

gboolean study_sweep_merge(const char *out_prefix, char **inputs, int n_inputs, GError **error)
{
  return study_sweep_merge_full(out_prefix, inputs, n_inputs, NULL, error);
}

/* What sweep-merge gathers from its inputs: the CSV header, the inputs'
 * digest and point count (every row must agree), and the rows by point. */
typedef struct {
  char *header, *digest;
  int n_points;
  GHashTable *csv_rows, *json_rows;
} merge_state;

/* The CSV lines cl of input cp: the header (the same in every input, the
 * first input is `first`) and each row by its point, once. */
static gboolean merge_csv_rows(merge_state *m, char **cl, const char *cp, const char *first, GError **error)
{
  gboolean ok = TRUE;
  if (cl[0] == NULL || !*cl[0]) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s: empty file; not a sweep CSV", cp);
    ok = FALSE;
  } else if (m->header && strcmp(m->header, cl[0]) != 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: its header differs from %s's; the shards come "
                "from different sweeps", cp, first);
    ok = FALSE;
  } else if (!m->header) {
    m->header = g_strdup(cl[0]);
  }
  for (char **l = cl + 1; ok && *l && **l; l++) {
    int p = row_point(*l);
    if (p < 0) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s:%d: not a sweep row (it must start with the point "
                  "number)", cp, (int)(l - cl) + 1);
      ok = FALSE;
    } else if (g_hash_table_contains(m->csv_rows, GINT_TO_POINTER(p))) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: point %d appears in two inputs; shards must not "
                  "overlap", cp, p);
      ok = FALSE;
    } else {
      g_hash_table_insert(m->csv_rows, GINT_TO_POINTER(p), g_strconcat(*l, "\n", NULL));
    }
  }
  return ok;
}

/* The CSV row and the JSON line of one point carry the same figures (a
 * shard whose two files disagree was edited or mixed up by hand): the
 * *_ns and utility_pct columns of the header are compared as text, both
 * being printed by the same formatter.  FALSE with an error naming both
 * files.  O(columns x line length). */
static gboolean rows_agree(const merge_state *m, int p, const char *jrow, const char *cp, const char *jp, int jline,
                           GError **error)
{
  const char *crow = g_hash_table_lookup(m->csv_rows, GINT_TO_POINTER(p));
  if (crow == NULL || m->header == NULL)
    return TRUE;
  gboolean ok = TRUE;
  char *name = NULL;
  for (int col = 0; ok && (name = study_sweep_csv_column(m->header, col)) != NULL; col++) {
    if (g_str_has_suffix(name, "_ns") || strcmp(name, "utility_pct") == 0) {
      char *cv = study_sweep_csv_column(crow, col), *jv = json_field(jrow, name);
      if (cv && jv && strcmp(cv, jv) != 0) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s:%d: point %d has %s %s but %s says %s; the shard's "
                    "CSV and JSON lines disagree (edited or mixed up): rerun that shard", jp, jline, p, name, jv, cp,
                    cv);
        ok = FALSE;
      }
      g_free(cv);
      g_free(jv);
    }
    g_free(name);
  }
  return ok;
}

/* The JSON lines jl of input jp: each row by its point, once, all from the
 * same inputs (input_sha256 and n_points agree). */
static gboolean merge_json_rows(merge_state *m, char **jl, const char *jp, const char *cp, GError **error)
{
  gboolean ok = TRUE;
  for (char **l = jl; ok && *l && **l; l++) {
    char *ps = json_field(*l, "point"), *ns = json_field(*l, "n_points"), *dg = json_field(*l, "input_sha256");
    int p = ps ? atoi(ps) : -1, n = ns ? atoi(ns) : -1;
    if (!ps || !ns || !dg || p < 0 || n <= 0 || p >= n) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s:%d: not a sweep JSON line (point, n_points and "
                  "input_sha256 are required)", jp, (int)(l - jl) + 1);
      ok = FALSE;
    } else if ((m->digest && strcmp(m->digest, dg) != 0) || (m->n_points >= 0 && n != m->n_points)) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s:%d: this row comes from other inputs (another spec, "
                  "cluster or workload: input_sha256 or n_points differ)", jp, (int)(l - jl) + 1);
      ok = FALSE;
    } else if (g_hash_table_contains(m->json_rows, GINT_TO_POINTER(p))) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: point %d appears twice", jp, p);
      ok = FALSE;
    } else if (!rows_agree(m, p, *l, cp, jp, (int)(l - jl) + 1, error)) {
      ok = FALSE;
    } else {
      if (!m->digest)
        m->digest = g_strdup(dg);
      m->n_points = n;
      g_hash_table_insert(m->json_rows, GINT_TO_POINTER(p), g_strconcat(*l, "\n", NULL));
    }
    g_free(ps);
    g_free(ns);
    g_free(dg);
  }
  return ok;
}

gboolean study_sweep_merge_full(const char *out_prefix, char **inputs, int n_inputs, gboolean *svg_written,
                                GError **error)
{
  gboolean drawn = FALSE;
  if (svg_written)
    *svg_written = FALSE;
  merge_state m = {
    .n_points = -1,
    .csv_rows = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free),
    .json_rows = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free),
  };
  gboolean ok = TRUE;
  for (int i = 0; i < n_inputs && ok; i++) {
    char *prefix = g_strdup(inputs[i]);
    if (g_str_has_suffix(prefix, ".csv"))
      prefix[strlen(prefix) - 4] = '\0';
    else if (g_str_has_suffix(prefix, ".jsonl"))
      prefix[strlen(prefix) - 6] = '\0';
    char *cp = g_strconcat(prefix, ".csv", NULL), *jp = g_strconcat(prefix, ".jsonl", NULL);
    char *ct = NULL, *jt = NULL;
    if (!g_file_get_contents(cp, &ct, NULL, error) || !g_file_get_contents(jp, &jt, NULL, error)) {
      ok = FALSE;
    } else {
      char **cl = g_strsplit(ct, "\n", -1), **jl = g_strsplit(jt, "\n", -1);
      /* Noted as inputs: -o naming a shard is refused, as every command
       * refuses to write over what it reads. */
      wisp_input_note(cp);
      wisp_input_note(jp);
      ok = merge_csv_rows(&m, cl, cp, inputs[0], error) && merge_json_rows(&m, jl, jp, cp, error);
      g_strfreev(cl);
      g_strfreev(jl);
    }
    g_free(ct);
    g_free(jt);
    g_free(cp);
    g_free(jp);
    g_free(prefix);
  }
  if (ok && m.n_points < 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "the inputs hold no sweep rows");
    ok = FALSE;
  }
  GString *missing = g_string_new(NULL);
  int n_missing = 0;
  for (int p = 0; ok && p < m.n_points; p++)
    if (!g_hash_table_contains(m.csv_rows, GINT_TO_POINTER(p)) || !g_hash_table_contains(m.json_rows, GINT_TO_POINTER(p))) {
      if (n_missing++ < 20)
        g_string_append_printf(missing, "%s%d", missing->len ? ", " : "", p);
    }
  if (ok && (n_missing || (int)g_hash_table_size(m.csv_rows) != m.n_points)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "the shards cover %u of %d points; missing: %s%s (run the missing shards, then merge again)",
                g_hash_table_size(m.csv_rows), m.n_points, missing->str, n_missing > 20 ? ", ..." : "");
    ok = FALSE;
  }
  g_string_free(missing, TRUE);
  if (ok) {
    GString *csv = g_string_new(m.header), *jsonl = g_string_new(NULL);
    g_string_append_c(csv, '\n');
    for (int p = 0; p < m.n_points; p++) {
      g_string_append(csv, g_hash_table_lookup(m.csv_rows, GINT_TO_POINTER(p)));
      g_string_append(jsonl, g_hash_table_lookup(m.json_rows, GINT_TO_POINTER(p)));
    }
    char *cp = g_strconcat(out_prefix, ".csv", NULL), *jp = g_strconcat(out_prefix, ".jsonl", NULL),
         *sp = g_strconcat(out_prefix, ".svg", NULL);
    char *base = g_path_get_basename(out_prefix);
    char *title = g_strdup_printf("%s: simulated step time", base);
    ok = wisp_write_file_atomic(cp, csv->str, csv->len, error) &&
         wisp_write_file_atomic(jp, jsonl->str, jsonl->len, error) && study_sweep_chart_from_csv(csv->str, title, sp, &drawn, error);
    if (svg_written)
      *svg_written = drawn;
    g_free(title);
    g_free(base);
    g_free(cp);
    g_free(jp);
    g_free(sp);
    g_string_free(csv, TRUE);
    g_string_free(jsonl, TRUE);
  }
  g_free(m.header);
  g_free(m.digest);
  g_hash_table_destroy(m.csv_rows);
  g_hash_table_destroy(m.json_rows);
  return ok;
}
