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
#include <sys/wait.h>

typedef struct {
  test_example_env ex;
  char *in[3];   /* simulate JSON, utility JSON, sweep JSON lines */
  cJSON *doc[3]; /* the same, the sweep as an array of its lines */
  char *html;    /* the page's path */
  char *direct;  /* simulate --html's page of in[0] */
} fixture;

static cJSON *read_json(const char *path)
{
  char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  cJSON *d = cJSON_ParseWithOpts(text, NULL, TRUE); /* nothing after the value */
  if (d && cJSON_GetObjectItemCaseSensitive(d, "point") && cJSON_GetObjectItemCaseSensitive(d, "sweep")) {
    cJSON *a = cJSON_CreateArray(); /* a sweep of one line */
    cJSON_AddItemToArray(a, d);
    d = a;
  }
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
  char *tl = g_build_filename(f->ex.dir, "timeline.json", NULL);
  f->direct = g_build_filename(f->ex.dir, "simulate.html", NULL);
  g_assert_cmpint(test_wisp_run((const char *[]){"simulate", f->ex.example, "--network", f->ex.cluster, "--json",
                                                 f->in[0], "--timeline", tl, "--html", f->direct, NULL}, NULL), ==, 0);
  g_free(tl);
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
  g_free(f->direct);
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

static gint cmp_point(gconstpointer a, gconstpointer b)
{
  double x = cJSON_GetObjectItemCaseSensitive(*(cJSON *const *)a, "point")->valuedouble;
  double y = cJSON_GetObjectItemCaseSensitive(*(cJSON *const *)b, "point")->valuedouble;
  return (x > y) - (x < y);
}

/* The page's inputs, read from its own list (data-src, data-joined,
 * data-path) with cJSON: a sweep shard's lines are appended to the input
 * it was joined with, then sorted by point, as the page did.  Returns the
 * documents indexed by data-src (NULL-terminated, *n set). */
static cJSON **page_inputs(const char *page, int *n)
{
  GRegex *re = g_regex_new("<li data-src=\"(\\d+)\" data-joined=\"(-?\\d+)\" data-path=\"([^\"]+)\">", 0, 0, NULL);
  GMatchInfo *m = NULL;
  GPtrArray *docs = g_ptr_array_new();
  gboolean joined = FALSE;
  g_regex_match(re, page, 0, &m);
  for (; g_match_info_matches(m); g_match_info_next(m, NULL)) {
    char *src = g_match_info_fetch(m, 1), *to = g_match_info_fetch(m, 2), *path = g_match_info_fetch(m, 3);
    g_assert_cmpint(atoi(src), ==, (int)docs->len); /* in order */
    cJSON *d = read_json(path);
    if (atoi(to) >= 0) {
      cJSON *o;
      while ((o = cJSON_DetachItemFromArray(d, 0)))
        cJSON_AddItemToArray(docs->pdata[atoi(to)], o);
      joined = TRUE;
    }
    g_ptr_array_add(docs, d);
    g_free(src), g_free(to), g_free(path);
  }
  g_match_info_free(m);
  g_regex_unref(re);
  for (guint i = 0; joined && i < docs->len; i++)
    if (cJSON_IsArray(docs->pdata[i]) && cJSON_GetArraySize(docs->pdata[i]) > 0) {
      GPtrArray *v = g_ptr_array_new();
      cJSON *o;
      while ((o = cJSON_DetachItemFromArray(docs->pdata[i], 0)))
        g_ptr_array_add(v, o);
      g_ptr_array_sort(v, cmp_point);
      for (guint k = 0; k < v->len; k++)
        cJSON_AddItemToArray(docs->pdata[i], v->pdata[k]);
      g_ptr_array_free(v, TRUE);
    }
  *n = (int)docs->len;
  g_assert_cmpint(*n, >, 0);
  g_ptr_array_add(docs, NULL);
  return (cJSON **)g_ptr_array_free(docs, FALSE);
}

static void free_inputs(cJSON **docs)
{
  for (cJSON **d = docs; *d; d++)
    cJSON_Delete(*d);
  g_free(docs);
}

/* The sum of every number a path matches, a segment '*' standing for every
 * element or key at that level (adds the count of matches to *n). */
static double sum_matches(const cJSON *d, char **seg, int *n)
{
  if (d == NULL)
    return 0;
  if (*seg == NULL) {
    if (!cJSON_IsNumber(d))
      g_error("derived number: a path ends at a value that is not a number");
    (*n)++;
    return d->valuedouble;
  }
  if (strcmp(*seg, "*") == 0) {
    double s = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, d)
      s += sum_matches(c, seg + 1, n);
    return s;
  }
  return sum_matches(cJSON_IsArray(d) ? cJSON_GetArrayItem(d, atoi(*seg)) : cJSON_GetObjectItemCaseSensitive(d, *seg),
                     seg + 1, n);
}

/* The sum over a list of paths joined by '+'; fails the test when a path
 * matches nothing. */
static double sum_list(const cJSON *d, const char *list, int *count)
{
  char **paths = g_strsplit(list, "+", -1);
  double s = 0;
  *count = 0;
  for (char **p = paths; *p; p++) {
    char **seg = g_strsplit(*p, "/", -1);
    int n = 0;
    s += sum_matches(d, seg, &n);
    if (n == 0)
      g_error("derived number: '%s' matches no number", *p);
    *count += n;
    g_strfreev(seg);
  }
  g_strfreev(paths);
  return s;
}

/* Recomputes a number the page derived, from its expression (the grammar is
 * in studies/study_report_priv.h): independent arithmetic on the JSON. */
static double derived(const cJSON *d, const char *expr)
{
  const char *open = strchr(expr, '(');
  g_assert_nonnull(open);
  g_assert_true(g_str_has_suffix(expr, ")"));
  char *fn = g_strndup(expr, (gsize)(open - expr)), *args = g_strndup(open + 1, strlen(open + 1) - 1);
  char *comma = strchr(args, ',');
  int na = 0, nb = 0;
  double a, b = 0, v;
  if (comma)
    *comma = '\0';
  a = sum_list(d, args, &na);
  if (comma)
    b = sum_list(d, comma + 1, &nb);
  if (strcmp(fn, "sum") == 0 && !comma)
    v = a;
  else if (strcmp(fn, "mean") == 0 && !comma)
    v = a / na;
  else if (strcmp(fn, "diff") == 0 && comma)
    v = a - b;
  else if (strcmp(fn, "share") == 0 && comma)
    v = 100 * a / (a + b);
  else if (strcmp(fn, "pct_of") == 0 && comma)
    v = 100 * a / b;
  else if (strcmp(fn, "pct_rest") == 0 && comma)
    v = 100 * (1 - a / b);
  else if (strcmp(fn, "pct_diff") == 0 && comma)
    v = 100 * (a - b) / b;
  else
    g_error("derived number: unknown derivation '%s'", expr);
  g_free(fn);
  g_free(args);
  return v;
}

/* Checks every number span of page against the JSON its data-src names
 * (docs from the file's own input list); returns how many there were and
 * adds the "src:path" keys seen to paths. */
static int check_numbers(cJSON **docs, int n_docs, const char *page, GHashTable *paths)
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
    g_assert_cmpint(i, <, n_docs);
    double shown = g_ascii_strtod(v, NULL);
    if (strchr(path, '(')) { /* derived on the page: recomputed here; sums may differ in the last bits */
      double want_v = derived(docs[i], path);
      g_assert_cmpfloat(fabs(shown - want_v), <=, 1e-9 * fmax(1, fabs(want_v)));
    } else {
      const cJSON *j = at(docs[i], path);
      if (!cJSON_IsNumber(j))
        g_error("page number %s:%s has no number at that path", src, path);
      g_assert_cmpfloat(shown, ==, j->valuedouble); /* %.17g round-trips a double */
    }
    char *want = g_strdup_printf("%.*f", atoi(dec), shown / g_ascii_strtod(scale, NULL));
    g_assert_cmpstr(text, ==, want);
    g_hash_table_add(paths, g_strdup_printf("%s:%s", src, path));
    g_free(want);
    g_free(src), g_free(path), g_free(v), g_free(scale), g_free(dec), g_free(text);
  }
  g_match_info_free(m);
  g_regex_unref(re);
  return n;
}

/* check_numbers on a page file, with its own inputs; returns the count. */
static int check_page_file(const char *html, GHashTable *paths)
{
  char *page = NULL;
  g_assert_true(g_file_get_contents(html, &page, NULL, NULL));
  int n_docs = 0;
  cJSON **docs = page_inputs(page, &n_docs);
  int n = check_numbers(docs, n_docs, page, paths);
  g_assert_null(strstr(page, "://")); /* self-contained: nothing is fetched when it is opened */
  free_inputs(docs);
  g_free(page);
  return n;
}

/* What a reader must find, independently of the page's own choice of
 * numbers: the simulated step, every applicable resource's utility and the
 * best one in the headline, the sensitivity and each sweep point. */
static void check_coverage(const fixture *f, const char *page, GHashTable *paths)
{
  g_assert_true(g_hash_table_contains(paths, "0:step_time_ns"));
  g_assert_true(g_hash_table_contains(paths, "0:topology/dims/0/bandwidth_Bps")); /* the network diagram */
  g_assert_true(g_hash_table_contains(paths, "0:critical_path/ranks/0/time_ns")); /* the path by rank */
  g_assert_true(g_hash_table_contains(paths, "0:rank_timeline/bin_ns"));          /* the per-rank timeline */
  g_assert_true(g_hash_table_contains(paths, "0:metrics/simulated/avg_step_time_ns")); /* the catalog */
  g_assert_nonnull(strstr(page, "timeline.json\">the Perfetto trace</a>"));
  g_assert_true(g_hash_table_contains(paths, "0:critical_path/by_category/compute_ns"));
  /* Numbers the page derives, recomputed by check_numbers from the JSON. */
  g_assert_true(g_hash_table_contains(paths, "0:mean(ranks/*/compute_ns)"));
  g_assert_true(g_hash_table_contains(paths, "0:pct_of(critical_path/by_category/compute_ns,critical_path/by_category/"
                                             "compute_ns+critical_path/by_category/communication_ns+critical_path/"
                                             "by_category/communication_replayed_ns+critical_path/by_category/"
                                             "host_ns+critical_path/by_category/idle_ns+critical_path/by_category/"
                                             "other_ns+critical_path/by_category/start_offset_ns)"));
  g_assert_true(g_hash_table_contains(paths, "1:pct_diff(sensitivity/bw_x0.9_step_ns,baseline_step_ns)"));
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
  /* ... and why nothing helps more, and why each other resource helps less. */
  g_assert_nonnull(strstr(page, "Why no resource helps more"));
  g_assert_nonnull(strstr(page, "Why the others help less"));
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
  int n = check_page_file(f.html, paths);
  g_test_message("%d numbers on the page match their JSON", n);
  g_assert_cmpint(n, >, 20);
  check_coverage(&f, page, paths);
  /* simulate --html is wisp report's page of the same JSON, byte for byte. */
  char *direct = NULL, *again = NULL, *again_path = g_build_filename(f.ex.dir, "again.html", NULL);
  g_assert_cmpint(test_wisp_run((const char *[]){"report", f.in[0], "-o", again_path, NULL}, NULL), ==, 0);
  g_assert_true(g_file_get_contents(f.direct, &direct, NULL, NULL));
  g_assert_true(g_file_get_contents(again_path, &again, NULL, NULL));
  g_assert_cmpstr(direct, ==, again);
  g_free(direct), g_free(again), g_free(again_path);
  g_hash_table_unref(paths);
  g_free(page);
  teardown(&f);
}

/* The other inputs a page takes, each on its own page checked like the
 * demo's: several jobs on one fabric, a sweep in two shards (joined into
 * one section, points in order), a search with its Pareto front, and
 * when ../shared/data is there a
 * collbench --compare-csv of a real nccl-tests table.  Returns the pages
 * written (g_ptr_array_unref) in dir. */
static GPtrArray *input_pages(const test_example_env *ex)
{
  GPtrArray *pages = g_ptr_array_new_with_free_func(g_free);
  const char *build = g_getenv("G_TEST_BUILDDIR"), *srcdir = g_getenv("G_TEST_SRCDIR");
  char *dp = g_build_filename(ex->dir, "dp", NULL), *gen = g_build_filename(build, "examples", "make_dp", NULL);
  char *net = g_build_filename(srcdir, "examples", "networks", "nodes4-fat-tree-200g.yaml", NULL);
  g_assert_true(g_mkdir_with_parents(dp, 0755) == 0);
  int st = 0;
  g_assert_true(g_spawn_sync(NULL, (char *[]){gen, dp, (char *)"dp", (char *)"32", NULL}, NULL, G_SPAWN_STDOUT_TO_DEV_NULL,
                             NULL, NULL, NULL, NULL, &st, NULL) && g_spawn_check_wait_status(st, NULL));
  char *ja = g_strdup_printf("A=%s/dp@0-31", dp), *jb = g_strdup_printf("B=%s/dp@32-63", dp);
  char *jobs = g_build_filename(ex->dir, "jobs.json", NULL), *jobs_html = g_build_filename(ex->dir, "jobs.html", NULL);
  g_assert_cmpint(test_wisp_run((const char *[]){"simulate", "--job", ja, "--job", jb, "--network", net, "--json", jobs,
                                                 "--html", jobs_html, NULL}, NULL), ==, 0);
  g_ptr_array_add(pages, jobs_html);
  char *spec = g_build_filename(srcdir, "examples", "ccl-bench-sweep.yaml", NULL);
  char *sh = g_build_filename(ex->dir, "shards", NULL);
  for (int k = 1; k <= 2; k++) {
    char *shard = g_strdup_printf("%d/2", k);
    g_assert_cmpint(test_wisp_run((const char *[]){"sweep", spec, "--workload", ex->example, "-o", sh, "--shard", shard,
                                                   NULL}, NULL), ==, 0);
    g_free(shard);
  }
  char *s1 = g_build_filename(sh, "ccl-bench-cluster.shard-1-of-2.jsonl", NULL);
  char *s2 = g_build_filename(sh, "ccl-bench-cluster.shard-2-of-2.jsonl", NULL);
  char *sh_html = g_build_filename(ex->dir, "shards.html", NULL);
  g_assert_cmpint(test_wisp_run((const char *[]){"report", s2, s1, "-o", sh_html, NULL}, NULL), ==, 0);
  g_ptr_array_add(pages, sh_html);
  char *card = g_build_filename(srcdir, "examples", "cards", "example-llm.yaml", NULL);
  char *sj = g_build_filename(ex->dir, "search.json", NULL), *s_html = g_build_filename(ex->dir, "search.html", NULL);
  g_assert_cmpint(test_wisp_run((const char *[]){"search", ex->example, "--card", card, "--network", "dgx-h100",
                                                 "--max-gpus", "32", "--json", sj, NULL}, NULL), ==, 0);
  g_assert_cmpint(test_wisp_run((const char *[]){"report", sj, "-o", s_html, NULL}, NULL), ==, 0);
  g_ptr_array_add(pages, s_html);
  g_free(card), g_free(sj);
  char *csv = g_build_filename(srcdir, "..", "shared", "data", "nccl-tests", "together-h100-1node-ring-allreduce.csv",
                               NULL);
  if (g_file_test(csv, G_FILE_TEST_EXISTS)) {
    char *cb = g_build_filename(ex->dir, "collbench.json", NULL), *cb_html = g_build_filename(ex->dir, "cb.html", NULL);
    g_assert_cmpint(test_wisp_run((const char *[]){"collbench", "--compare-csv", csv, "--network", "dgx-h100", "--json",
                                                   cb, NULL}, NULL), ==, 0);
    g_assert_cmpint(test_wisp_run((const char *[]){"report", cb, "-o", cb_html, NULL}, NULL), ==, 0);
    g_ptr_array_add(pages, cb_html);
    g_free(cb);
  } else {
    g_test_message("SKIP the collbench page: no ../shared/data/nccl-tests here");
  }
  /* --html on the other commands writes the page itself: collbench's rows (no measurement needed) ... */
  /* (with --json: the page lists its input, which the checks read back) */
  char *cbr = g_build_filename(ex->dir, "cbrows.html", NULL), *cbrj = g_build_filename(ex->dir, "cbrows.json", NULL);
  g_assert_cmpint(test_wisp_run((const char *[]){"collbench", "--network", "dgx-h100", "--ranks", "8", "--op",
                                                 "all_reduce,all_gather", "--sizes", "64K,1M,64M", "--json", cbrj, "--html", cbr,
                                                 NULL},
                                NULL), ==, 0);
  g_ptr_array_add(pages, cbr);
  g_free(cbrj);
  /* ... a 64-rank job, whose per-rank timeline keeps 32 ranks spread over the 64 ... */
  char *dp64 = g_build_filename(ex->dir, "dp64", NULL);
  g_assert_true(g_mkdir_with_parents(dp64, 0755) == 0);
  g_assert_true(g_spawn_sync(NULL, (char *[]){gen, dp64, (char *)"dp", (char *)"64", NULL}, NULL,
                             G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, NULL, &st, NULL) &&
                g_spawn_check_wait_status(st, NULL));
  char *w64 = g_build_filename(dp64, "dp", NULL), *h64 = g_build_filename(ex->dir, "dp64.html", NULL);
  char *j64 = g_build_filename(ex->dir, "dp64.json", NULL);
  g_assert_cmpint(test_wisp_run((const char *[]){"simulate", w64, "--network", net, "--json", j64, "--html", h64, NULL},
                                NULL), ==, 0);
  g_free(j64);
  g_ptr_array_add(pages, h64);
  g_free(w64), g_free(dp64);
  /* ... and metrics and calibrate on the DLRM traces when ../shared/data is here. */
  const char *sd = g_getenv("WISP_SHARED_DATA");
  char *tgz = sd ? g_build_filename(sd, "param", "dlrm_kineto.tar.gz", NULL) : NULL;
  if (tgz && g_file_test(tgz, G_FILE_TEST_EXISTS)) {
    char *ddir = g_build_filename(ex->dir, "dlrm", NULL);
    g_assert_true(g_mkdir_with_parents(ddir, 0755) == 0);
    test_untar(tgz, ddir);
    char *traces = g_build_filename(ddir, "dlrm_kineto", NULL), *mh = g_build_filename(ex->dir, "metrics.html", NULL);
    char *ch = g_build_filename(ex->dir, "calibrate.html", NULL), *cy = g_build_filename(ex->dir, "cal.yaml", NULL);
    char *mj = g_build_filename(ex->dir, "metrics.json", NULL), *cj = g_build_filename(ex->dir, "calibrate.json", NULL);
    g_assert_cmpint(test_wisp_run((const char *[]){"metrics", traces, "--json", mj, "--html", mh, NULL}, NULL), ==, 0);
    char *v100 = g_build_filename(g_getenv("G_TEST_SRCDIR"), "examples", "networks", "dgx1-v100.yaml", NULL);
    g_assert_cmpint(test_wisp_run((const char *[]){"calibrate", traces, "--network", v100, "-o", cy, "--json", cj,
                                                   "--html", ch, NULL}, NULL), ==, 0);
    g_free(v100), g_free(mj), g_free(cj);
    g_ptr_array_add(pages, mh);
    g_ptr_array_add(pages, ch);
    g_free(traces), g_free(ddir), g_free(cy);
  } else {
    g_test_message("SKIP the metrics and calibrate pages: no ../shared/data/param/dlrm_kineto.tar.gz here");
  }
  g_free(tgz);
  g_free(csv), g_free(s1), g_free(s2), g_free(sh), g_free(spec), g_free(ja), g_free(jb), g_free(jobs);
  g_free(dp), g_free(gen), g_free(net);
  return pages;
}

static void test_inputs(void)
{
  test_example_env ex;
  if (!test_example_setup(&ex, "wisp-report-in-XXXXXX"))
    return;
  GPtrArray *pages = input_pages(&ex);
  for (guint i = 0; i < pages->len; i++) {
    GHashTable *paths = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    int n = check_page_file(pages->pdata[i], paths);
    g_test_message("%s: %d numbers match their JSON", (char *)pages->pdata[i], n);
    g_assert_cmpint(n, >, 3);
    if (strstr(pages->pdata[i], "jobs.html"))
      g_assert_true(g_hash_table_contains(paths, "0:jobs/1/slowdown_pct"));
    if (strstr(pages->pdata[i], "shards.html")) /* three points, from two files, in order */
      for (int p = 0; p < 3; p++) {
        char *k = g_strdup_printf("0:%d/step_time_ns", p);
        g_assert_true(g_hash_table_contains(paths, k));
        g_free(k);
      }
    if (strstr(pages->pdata[i], "search.html")) /* the best point, and the front drawn */
      g_assert_true(g_hash_table_contains(paths, "0:points/0/step_time_ns"));
    if (strstr(pages->pdata[i], "cb.html"))
      g_assert_true(g_hash_table_contains(paths, "0:median_busbw_error_pct"));
    if (strstr(pages->pdata[i], "cbrows.html")) /* 2 operations x 3 sizes, every row shown */
      g_assert_true(g_hash_table_contains(paths, "0:results/5/busbw_GBps"));
    if (strstr(pages->pdata[i], "metrics.html"))
      g_assert_true(g_hash_table_contains(paths, "0:measured/avg_step_time_ns"));
    if (strstr(pages->pdata[i], "calibrate.html"))
      g_assert_true(g_hash_table_contains(paths, "0:fit/classes/0/beta_GBps"));
    if (strstr(pages->pdata[i], "dp64.html")) { /* 32 of 64 ranks, spread: rank 2i in row i (floor(i * 64 / 32)) */
      g_assert_true(g_hash_table_contains(paths, "0:rank_timeline/ranks_selected"));
      char *page = NULL;
      g_assert_true(g_file_get_contents(pages->pdata[i], &page, NULL, NULL));
      test_expect_has(page, "evenly spread over all ranks");
      g_free(page);
    }
    g_hash_table_unref(paths);
  }
  g_ptr_array_unref(pages);
  test_example_teardown(&ex);
}

/* The per-rank timeline beyond 32 ranks: a 64-rank job keeps ranks 0, 2,
 * ..., 62 (row i is rank floor(i * 64 / 32) = 2i); --timeline-ranks and
 * --timeline-window (without --timeline) choose the ranks and the span. */
static void test_timeline_ranks(void)
{
  test_example_env ex;
  if (!test_example_setup(&ex, "wisp-report-tl-XXXXXX"))
    return;
  const char *build = g_getenv("G_TEST_BUILDDIR"), *srcdir = g_getenv("G_TEST_SRCDIR");
  char *dp = g_build_filename(ex.dir, "dp64", NULL), *gen = g_build_filename(build, "examples", "make_dp", NULL);
  char *net = g_build_filename(srcdir, "examples", "networks", "nodes4-fat-tree-200g.yaml", NULL);
  g_assert_true(g_mkdir_with_parents(dp, 0755) == 0);
  int st = 0;
  g_assert_true(g_spawn_sync(NULL, (char *[]){gen, dp, (char *)"dp", (char *)"64", NULL}, NULL,
                             G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, NULL, &st, NULL) &&
                g_spawn_check_wait_status(st, NULL));
  char *w = g_build_filename(dp, "dp", NULL), *j1 = g_build_filename(ex.dir, "all.json", NULL);
  char *j2 = g_build_filename(ex.dir, "some.json", NULL);
  g_assert_cmpint(test_wisp_run((const char *[]){"simulate", w, "--network", net, "--json", j1, NULL}, NULL), ==, 0);
  cJSON *d = read_json(j1);
  const cJSON *tl = at(d, "rank_timeline");
  g_assert_cmpfloat(at(tl, "ranks_total")->valuedouble, ==, 64);
  g_assert_cmpfloat(at(tl, "ranks_recorded")->valuedouble, ==, 32);
  g_assert_cmpstr(at(tl, "selection")->valuestring, ==, "evenly spread over all ranks");
  for (int i = 0; i < 32; i++) {
    char *k = g_strdup_printf("ranks/%d/rank", i);
    g_assert_cmpfloat(at(tl, k)->valuedouble, ==, 2 * i);
    g_free(k);
  }
  /* The second half of the step, ranks 3 and 40-45. */
  double step_ns = at(d, "step_time_ns")->valuedouble, from = floor(step_ns / 2);
  char *win = g_strdup_printf("%.0fns:", from);
  g_assert_cmpint(test_wisp_run((const char *[]){"simulate", w, "--network", net, "--json", j2, "--timeline-ranks",
                                                 "3,40-45", "--timeline-window", win, NULL}, NULL), ==, 0);
  cJSON *e = read_json(j2);
  tl = at(e, "rank_timeline");
  g_assert_cmpfloat(at(tl, "ranks_recorded")->valuedouble, ==, 7);
  g_assert_cmpstr(at(tl, "selection")->valuestring, ==, "--timeline-ranks");
  g_assert_cmpfloat(at(tl, "ranks/0/rank")->valuedouble, ==, 3);
  g_assert_cmpfloat(at(tl, "ranks/6/rank")->valuedouble, ==, 45);
  g_assert_cmpfloat(at(tl, "from_ns")->valuedouble, ==, from);
  /* 120 bins cover [from, step) and no more than one bin beyond it. */
  double bins = at(tl, "bins")->valuedouble, bin = at(tl, "bin_ns")->valuedouble;
  g_assert_cmpfloat(bins * bin, >=, step_ns - from - 1e-3);
  g_assert_cmpfloat(bins * bin, <, step_ns - from + bin);
  /* The selection must name ranks of the job. */
  char *out = NULL;
  g_assert_cmpint(test_wisp_run_in(NULL, (const char *[]){"simulate", w, "--network", net, "--json", j2,
                                                          "--timeline-ranks", "70", NULL}, NULL, &out), ==, 1);
  test_expect_has(out, "--timeline-ranks: '70' is not a rank or range of ranks 0..63");
  g_free(out);
  cJSON_Delete(d), cJSON_Delete(e);
  g_free(win), g_free(w), g_free(j1), g_free(j2), g_free(dp), g_free(gen), g_free(net);
  test_example_teardown(&ex);
}

/* --html without --json: the command's JSON goes to a temporary file that
 * the page names as not kept and does not record (its random name would
 * make two runs' pages differ: same inputs, byte-identical outputs). */
static void test_html_no_json(void)
{
  if (!test_have_bin())
    return;
  char *dir = g_dir_make_tmp("wisp-report-nj-XXXXXX", NULL);
  char *a = g_build_filename(dir, "a.html", NULL), *b = g_build_filename(dir, "b.html", NULL);
  char *pa = NULL, *pb = NULL, *out = NULL;
  for (int k = 0; k < 2; k++)
    g_assert_cmpint(test_wisp_run((const char *[]){"collbench", "--network", "dgx-h100", "--ranks", "8", "--sizes",
                                                   "1M,64M", "--html", k ? b : a, NULL}, k ? NULL : &out), ==, 0);
  test_expect_has(out, "report: ");
  g_assert_null(strstr(out, "wisp-html-")); /* the temporary file is not printed as an output */
  g_assert_true(g_file_get_contents(a, &pa, NULL, NULL));
  g_assert_true(g_file_get_contents(b, &pb, NULL, NULL));
  g_assert_cmpstr(pa, ==, pb);
  test_expect_has(pa, "not kept: give --json FILE to keep it");
  test_expect_has(pa, "data-path=\"\"");
  g_free(pa), g_free(pb), g_free(out), g_free(a), g_free(b);
  test_rm_rf(dir);
  g_free(dir);
}

/* Runs examples/ccl-bench/NAME.sh into dir/NAME; returns the page's path,
 * or NULL when the script exits 77 (skipped: it says why). */
static char *run_example(const char *dir, const char *name)
{
  const char *srcdir = g_getenv("G_TEST_SRCDIR");
  char *script = g_strdup_printf("%s/examples/ccl-bench/%s.sh", srcdir, name);
  char *out = g_build_filename(dir, name, NULL), *env = g_strdup_printf("WISP_CCL_DIR=%s", out);
  char *shared = g_strdup_printf("WISP_SHARED_DATA=%s/../shared/data", srcdir);
  char *text = NULL, *err = NULL;
  int st = 0;
  char **envp = g_environ_setenv(g_get_environ(), "WISP_CCL_DIR", out, TRUE);
  envp = g_environ_setenv(envp, "WISP_SHARED_DATA", shared + strlen("WISP_SHARED_DATA="), TRUE);
  g_assert_true(g_spawn_sync(NULL, (char *[]){(char *)"sh", script, (char *)g_getenv("WISP_BIN"), NULL}, envp,
                             G_SPAWN_SEARCH_PATH, NULL, NULL, &text, &err, &st, NULL));
  g_test_message("%s: %s%s", name, text, err);
  char *page = NULL;
  if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
    g_test_message("SKIP %s: %s", name, text);
  else {
    g_assert_true(g_spawn_check_wait_status(st, NULL));
    page = g_build_filename(out, "report.html", NULL);
  }
  g_strfreev(envp);
  g_free(script), g_free(out), g_free(env), g_free(shared), g_free(text), g_free(err);
  return page;
}

static const char *const EXAMPLES[] = {"arch-sweep", "gpu-tpu-utility", "ep-moe", NULL};

/* ep-moe alone, so that its skip shows: it needs regress/gt_par_gen with
 * --moe (p32b's MoE twin; WISP_GT_PAR_GEN names another binary). */
static void test_example_ep(void)
{
  test_example_env ex;
  if (!test_example_setup(&ex, "wisp-report-ep-XXXXXX"))
    return;
  char *html = run_example(ex.dir, "ep-moe");
  if (html == NULL) {
    g_test_skip("examples/ccl-bench/ep-moe.sh: regress/gt_par_gen cannot write MoE traces (no --moe in this "
                "build; set WISP_GT_PAR_GEN)");
  } else {
    GHashTable *paths = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_test_message("ep-moe: %d numbers match their JSON", check_page_file(html, paths));
    g_assert_true(g_hash_table_contains(paths, "0:step_time_ns"));
    g_assert_true(g_hash_table_contains(paths, "1:step_time_ns"));
    g_assert_true(g_hash_table_contains(paths, "0:op_types/1/bytes")); /* traffic per collective type */
    g_hash_table_unref(paths);
  }
  g_free(html);
  test_example_teardown(&ex);
}

/* Every CCL-Bench example writes its page; each number on it is its
 * JSON's.  The GPU/TPU page must show the side-by-side table, the arch
 * sweep the hidden-communication column, EP4 vs EP8 both runs. */
static void test_examples(void)
{
  test_example_env ex;
  if (!test_example_setup(&ex, "wisp-report-ex-XXXXXX"))
    return;
  int ran = 0;
  for (const char *const *e = EXAMPLES; *e && strcmp(*e, "ep-moe") != 0; e++) {
    char *html = run_example(ex.dir, *e), *page = NULL;
    if (html == NULL)
      continue;
    ran++;
    GHashTable *paths = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    int n = check_page_file(html, paths);
    g_test_message("%s: %d numbers match their JSON", *e, n);
    g_assert_true(g_file_get_contents(html, &page, NULL, NULL));
    if (strcmp(*e, "gpu-tpu-utility") == 0) {
      g_assert_nonnull(strstr(page, "Utility side by side"));
      g_assert_true(g_hash_table_contains(paths, "1:resources/1/utility_pct")); /* the TPU's ICI (its one tier) */
    } else if (strcmp(*e, "arch-sweep") == 0) {
      g_assert_nonnull(strstr(page, "hidden comm %"));
    } else {
      g_assert_nonnull(strstr(page, "Runs side by side"));
      g_assert_true(g_hash_table_contains(paths, "1:step_time_ns"));
    }
    g_hash_table_unref(paths);
    g_free(page);
    g_free(html);
  }
  g_assert_cmpint(ran, >=, 2);
  test_example_teardown(&ex);
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

/* One page in the browser: no script error, every chart rendered with a
 * non-zero size, and the DOM's numbers the JSON's (as many as the file's). */
static void browser_check(const char *chromium, const char *html, const char *profile)
{
  char *dom = browser_dom(chromium, html, profile), *page = NULL;
  g_assert_true(g_file_get_contents(html, &page, NULL, NULL));
  /* The page's last script ran (no error stopped it) and saw every chart. */
  g_assert_null(strstr(dom, "data-error="));
  int charts = 0;
  for (const char *p = page; (p = strstr(p, "<svg class=\"chart\"")); p++)
    charts++;
  g_assert_cmpint(charts, >=, 1);
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
  int n_docs = 0;
  cJSON **docs = page_inputs(page, &n_docs);
  int in_dom = check_numbers(docs, n_docs, dom, paths);
  g_assert_cmpint(in_dom, ==, check_page_file(html, paths));
  g_test_message("%s: %d charts, %d numbers in the browser", html, charts, in_dom);
  free_inputs(docs);
  g_hash_table_unref(paths);
  g_free(dom);
  g_free(page);
}

/* Every page in headless chromium: the demo's (and simulate --html's),
 * the other inputs' and every CCL-Bench example's. */
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
  browser_check(chromium, f.html, profile);
  browser_check(chromium, f.direct, profile);
  GPtrArray *pages = input_pages(&f.ex);
  for (const char *const *e = EXAMPLES; *e; e++) {
    char *html = run_example(f.ex.dir, *e);
    if (html)
      g_ptr_array_add(pages, html);
  }
  for (guint i = 0; i < pages->len; i++)
    browser_check(chromium, pages->pdata[i], profile);
  g_ptr_array_unref(pages);
  g_free(profile);
  g_free(chromium);
  teardown(&f);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/report/numbers", test_numbers);
  g_test_add_func("/report/inputs", test_inputs);
  g_test_add_func("/report/timeline-ranks", test_timeline_ranks);
  g_test_add_func("/report/html-no-json", test_html_no_json);
  g_test_add_func("/report/examples", test_examples);
  g_test_add_func("/report/example-ep-moe", test_example_ep);
  g_test_add_func("/report/errors", test_errors);
  g_test_add_func("/report/browser", test_browser);
  return g_test_run();
}
