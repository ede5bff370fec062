/* test_report.c: `wisp report` (studies/study_report.c) on the demo's
 * inputs: the bundled example workload simulated and studied on
 * examples/cluster-2node.yaml, plus the CCL-Bench sweep spec.
 *
 * Every number the page shows from an input carries data-src (input
 * index), data-json (its path in that JSON) and data-v; the checks read the
 * JSON files themselves with cJSON and require, for every such number, the
 * value at the path to equal data-v exactly and the text to be data-v /
 * data-scale printed with data-dec decimals.  The same check runs on the
 * file (/report/numbers) and on the DOM a headless chromium built from it
 * (/report/browser), which must also report no script error and a non-zero
 * rendered size for every chart.  The browser case skips visibly when no
 * chromium is installed (set WISP_CHROMIUM to use another binary). */
#include "config.h"
#include <cjson/cJSON.h>
#include "regress/test_util.h"
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

typedef struct {
  test_example_env ex;
  char *in[3];   /* simulate JSON, utility JSON, sweep JSON lines */
  cJSON *doc[3]; /* the same, the sweep as an array of its lines */
  char *html;    /* the page's path */
} fixture;

static cJSON *read_json(const char *path)
{
  char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  cJSON *d = cJSON_ParseWithOpts(text, NULL, TRUE); /* nothing after the value */
  if (d == NULL) { /* JSON lines */
    d = cJSON_CreateArray();
    char **lines = g_strsplit(text, "\n", -1);
    for (char **l = lines; *l; l++)
      if (**l)
        cJSON_AddItemToArray(d, cJSON_Parse(*l));
    g_strfreev(lines);
  }
  g_free(text);
  return d;
}

static char *find_jsonl(const char *dir)
{
  GDir *d = g_dir_open(dir, 0, NULL);
  g_assert_nonnull(d);
  const char *n;
  char *found = NULL;
  while ((n = g_dir_read_name(d)))
    if (g_str_has_suffix(n, ".jsonl") && found == NULL)
      found = g_build_filename(dir, n, NULL);
  g_dir_close(d);
  g_assert_nonnull(found);
  return found;
}

static gboolean setup(fixture *f)
{
  memset(f, 0, sizeof *f);
  if (!test_example_setup(&f->ex, "wisp-report-XXXXXX"))
    return FALSE;
  f->in[0] = g_build_filename(f->ex.dir, "baseline.json", NULL);
  f->in[1] = g_build_filename(f->ex.dir, "utility.json", NULL);
  char *sweep_dir = g_build_filename(f->ex.dir, "sweep", NULL);
  char *spec = g_build_filename(g_getenv("G_TEST_SRCDIR"), "examples", "ccl-bench-sweep.yaml", NULL);
  g_assert_cmpint(test_wisp_run((const char *[]){"simulate", f->ex.example, "--network", f->ex.cluster, "--json",
                                                 f->in[0], NULL}, NULL), ==, 0);
  g_assert_cmpint(test_wisp_run((const char *[]){"utility", f->ex.example, "--cluster", f->ex.cluster, "--json",
                                                 f->in[1], NULL}, NULL), ==, 0);
  g_assert_cmpint(test_wisp_run((const char *[]){"sweep", spec, "--workload", f->ex.example, "-o", sweep_dir, NULL},
                                NULL), ==, 0);
  f->in[2] = find_jsonl(sweep_dir);
  g_free(sweep_dir);
  g_free(spec);
  for (int i = 0; i < 3; i++)
    f->doc[i] = read_json(f->in[i]);
  f->html = g_build_filename(f->ex.dir, "report.html", NULL);
  g_assert_cmpint(test_wisp_run((const char *[]){"report", f->in[0], f->in[1], f->in[2], "-o", f->html, NULL}, NULL),
                  ==, 0);
  return TRUE;
}

static void teardown(fixture *f)
{
  for (int i = 0; i < 3; i++) {
    g_free(f->in[i]);
    cJSON_Delete(f->doc[i]);
  }
  g_free(f->html);
  test_example_teardown(&f->ex);
}

/* The value at a '/'-separated path (numbers index arrays). */
static const cJSON *at(const cJSON *d, const char *path)
{
  char **seg = g_strsplit(path, "/", -1);
  for (char **s = seg; *s && d; s++)
    d = cJSON_IsArray(d) ? cJSON_GetArrayItem(d, atoi(*s)) : cJSON_GetObjectItemCaseSensitive(d, *s);
  g_strfreev(seg);
  return d;
}

/* Checks every number span of page against the inputs; returns how many
 * there were and sets *paths to the "src:path" keys seen. */
static int check_numbers(const fixture *f, const char *page, GHashTable *paths)
{
  GRegex *re = g_regex_new("<span class=\"n\" data-src=\"(\\d+)\" data-json=\"([^\"]+)\" data-v=\"([^\"]+)\" "
                           "data-scale=\"([^\"]+)\" data-dec=\"(\\d+)\">([^<]*)</span>", 0, 0, NULL);
  GMatchInfo *m = NULL;
  int n = 0;
  g_regex_match(re, page, 0, &m);
  for (; g_match_info_matches(m); g_match_info_next(m, NULL), n++) {
    char *src = g_match_info_fetch(m, 1), *path = g_match_info_fetch(m, 2), *v = g_match_info_fetch(m, 3),
         *scale = g_match_info_fetch(m, 4), *dec = g_match_info_fetch(m, 5), *text = g_match_info_fetch(m, 6);
    int i = atoi(src);
    g_assert_cmpint(i, >=, 0);
    g_assert_cmpint(i, <, 3);
    const cJSON *j = at(f->doc[i], path);
    if (!cJSON_IsNumber(j))
      g_error("page number %s:%s has no number at that path in %s", src, path, f->in[i]);
    double shown = g_ascii_strtod(v, NULL);
    g_assert_cmpfloat(shown, ==, j->valuedouble); /* %.17g round-trips a double */
    char *want = g_strdup_printf("%.*f", atoi(dec), j->valuedouble / g_ascii_strtod(scale, NULL));
    g_assert_cmpstr(text, ==, want);
    g_hash_table_add(paths, g_strdup_printf("%s:%s", src, path));
    g_free(want);
    g_free(src), g_free(path), g_free(v), g_free(scale), g_free(dec), g_free(text);
  }
  g_match_info_free(m);
  g_regex_unref(re);
  return n;
}

/* What a reader must find, independently of the page's own choice of
 * numbers: the simulated step, every applicable resource's utility and the
 * best one in the headline, the sensitivity and each sweep point. */
static void check_coverage(const fixture *f, const char *page, GHashTable *paths)
{
  g_assert_true(g_hash_table_contains(paths, "0:step_time_ns"));
  g_assert_true(g_hash_table_contains(paths, "0:critical_path/by_category/compute_ns"));
  g_assert_true(g_hash_table_contains(paths, "1:baseline_step_ns"));
  g_assert_true(g_hash_table_contains(paths, "1:sensitivity/bw_x0.9_step_ns"));
  g_assert_true(g_hash_table_contains(paths, "1:sensitivity/bw_x1.1_step_ns"));
  const cJSON *res = cJSON_GetObjectItemCaseSensitive(f->doc[1], "resources"), *r;
  const char *best = NULL;
  double best_u = -INFINITY;
  int i = 0;
  cJSON_ArrayForEach(r, res) {
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(r, "utility_pct");
    if (cJSON_IsNumber(u)) {
      char *k = g_strdup_printf("1:resources/%d/utility_pct", i);
      g_assert_true(g_hash_table_contains(paths, k));
      g_free(k);
      if (u->valuedouble > best_u) {
        best_u = u->valuedouble;
        best = cJSON_GetObjectItemCaseSensitive(r, "resource")->valuestring;
      }
    }
    i++;
  }
  g_assert_nonnull(best);
  char *headline = g_strdup_printf("double <b>%s</b> first", best);
  g_assert_nonnull(strstr(page, headline));
  g_free(headline);
  for (i = 0; i < cJSON_GetArraySize(f->doc[2]); i++) {
    char *k = g_strdup_printf("2:%d/step_time_ns", i);
    g_assert_true(g_hash_table_contains(paths, k));
    g_free(k);
  }
  /* Self-contained: nothing is fetched when the page is opened. */
  g_assert_null(strstr(page, "://"));
}

static void test_numbers(void)
{
  fixture f;
  if (!setup(&f))
    return;
  char *page = NULL;
  g_assert_true(g_file_get_contents(f.html, &page, NULL, NULL));
  GHashTable *paths = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  int n = check_numbers(&f, page, paths);
  g_test_message("%d numbers on the page match their JSON", n);
  g_assert_cmpint(n, >, 20);
  check_coverage(&f, page, paths);
  g_hash_table_unref(paths);
  g_free(page);
  teardown(&f);
}

/* Bad inputs: clear messages, exit 1, nothing written; the page may not
 * replace an input. */
static void test_errors(void)
{
  test_example_env ex;
  if (!test_example_setup(&ex, "wisp-report-err-XXXXXX"))
    return;
  char *bad = g_build_filename(ex.dir, "bad.json", NULL), *out = g_build_filename(ex.dir, "r.html", NULL);
  g_assert_true(g_file_set_contents(bad, "{\"step_time_ns\": 1,,}", -1, NULL));
  char *err = NULL;
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"report", bad, "-o", out, NULL}, NULL, &err), ==, 1);
  g_assert_nonnull(strstr(err, bad));
  g_assert_nonnull(strstr(err, "not valid JSON (error near byte"));
  g_assert_false(g_file_test(out, G_FILE_TEST_EXISTS));
  g_free(err);
  g_assert_true(g_file_set_contents(bad, "{\"kind\": \"something\"}", -1, NULL));
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"report", bad, "-o", out, NULL}, NULL, &err), ==, 1);
  g_assert_nonnull(strstr(err, "'kind': something"));
  g_free(err);
  g_assert_true(g_file_set_contents(bad, "{\"point\": 0, \"sweep\": \"s\"}\nnot json\n", -1, NULL));
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"report", bad, "-o", out, NULL}, NULL, &err), ==, 1);
  g_assert_nonnull(strstr(err, "bad.json:2: not a wisp report"));
  g_free(err);
  /* -o naming a valid input: refused before anything is written, the
   * input unchanged. */
  const char *line = "{\"point\": 0, \"sweep\": \"s\", \"step_time_ns\": 5}\n";
  g_assert_true(g_file_set_contents(bad, line, -1, NULL));
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"report", bad, "-o", bad, NULL}, NULL, &err), ==, 1);
  g_assert_nonnull(strstr(err, "--output"));
  char *still = NULL;
  g_assert_true(g_file_get_contents(bad, &still, NULL, NULL));
  g_assert_cmpstr(still, ==, line);
  g_free(still);
  g_free(err);
  g_assert_cmpint(test_wisp_run((const char *[]){"report", bad, NULL}, NULL), ==, 2);
  g_free(bad);
  g_free(out);
  test_example_teardown(&ex);
}

static char *find_chromium(void)
{
  const char *env = g_getenv("WISP_CHROMIUM");
  if (env && *env)
    return g_strdup(env);
  char *p = g_find_program_in_path("chromium");
  return p ? p : g_find_program_in_path("chromium-browser");
}

/* The page in headless chromium: its DOM after the scripts ran. */
static char *browser_dom(const char *chromium, const char *html, const char *profile)
{
  char *url = g_filename_to_uri(html, NULL, NULL);
  char *prof = g_strdup_printf("--user-data-dir=%s", profile);
  char *argv[] = {(char *)"timeout", (char *)"120", (char *)chromium, (char *)"--headless", (char *)"--no-sandbox",
                  (char *)"--disable-gpu", (char *)"--no-first-run", prof, (char *)"--window-size=412,900",
                  (char *)"--dump-dom", url, NULL};
  char *out = NULL, *err = NULL;
  int status = 0;
  g_assert_true(g_spawn_sync(NULL, argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err, &status, NULL));
  g_test_message("chromium exit status %d; stderr: %.1500s", status, err);
  g_assert_true(g_spawn_check_wait_status(status, NULL));
  g_free(url);
  g_free(prof);
  g_free(err);
  return out;
}

static void test_browser(void)
{
  char *chromium = find_chromium();
  if (chromium == NULL) {
    g_test_skip("no chromium installed (Debian: apt-get install chromium; or set WISP_CHROMIUM): the report is "
                "not checked in a browser");
    return;
  }
  fixture f;
  if (!setup(&f)) {
    g_free(chromium);
    return;
  }
  char *profile = g_build_filename(f.ex.dir, "chromium-profile", NULL);
  char *dom = browser_dom(chromium, f.html, profile), *page = NULL;
  g_assert_true(g_file_get_contents(f.html, &page, NULL, NULL));
  /* The page's last script ran (no error stopped it) and saw every chart. */
  g_assert_null(strstr(dom, "data-error="));
  int charts = 0;
  for (const char *p = page; (p = strstr(p, "<svg class=\"chart\"")); p++)
    charts++;
  g_assert_cmpint(charts, >=, 7); /* critical path x2, five utility bars at most, the sweep line */
  char *ready = g_strdup_printf("data-ready=\"%d\"", charts);
  g_assert_nonnull(strstr(dom, ready));
  g_free(ready);
  GRegex *re = g_regex_new("data-w=\"(\\d+)\" data-h=\"(\\d+)\"", 0, 0, NULL);
  GMatchInfo *m = NULL;
  int sized = 0;
  g_regex_match(re, dom, 0, &m);
  for (; g_match_info_matches(m); g_match_info_next(m, NULL), sized++) {
    char *w = g_match_info_fetch(m, 1), *h = g_match_info_fetch(m, 2);
    g_assert_cmpint(atoi(w), >, 0);
    g_assert_cmpint(atoi(h), >, 0);
    g_free(w);
    g_free(h);
  }
  g_match_info_free(m);
  g_regex_unref(re);
  g_assert_cmpint(sized, ==, charts);
  /* The numbers the browser shows are the JSON's, as in the file. */
  GHashTable *paths = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  GHashTable *file_paths = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_assert_cmpint(check_numbers(&f, dom, paths), ==, check_numbers(&f, page, file_paths));
  check_coverage(&f, dom, paths);
  g_hash_table_unref(paths);
  g_hash_table_unref(file_paths);
  g_free(dom);
  g_free(page);
  g_free(profile);
  g_free(chromium);
  teardown(&f);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/report/numbers", test_numbers);
  g_test_add_func("/report/errors", test_errors);
  g_test_add_func("/report/browser", test_browser);
  return g_test_run();
}
