/* test_kineto_ip.c: the in-place event path of the Kineto parser
 * (frontends/fe_json_ip.h, frontends/kineto_decode_ip.c).
 *
 * The in-place path is an optimisation only: every test parses the same
 * input twice, once with it (flags 0) and once through the pull tokenizer
 * alone (KT_PARSE_TOKENS_ONLY), and requires the same outcome: the same
 * complete dump of the parsed trace (events, metadata, strings, groups,
 * skip counts) or the same error message.  The tests also check that the
 * fast path is really taken where expected, by counting events the test
 * itself built as plain (no escapes, no Input Dims, inside the window).
 */
#include "config.h"
#include "regress/test_util.h"

#include "frontends/kineto_trace.h"

#include <glib/gstdio.h>
#include <string.h>
#include <zlib.h>

/* ---------- helpers ---------- */

/* Parses with the given flags from memory (path NULL) or from a file;
 * returns the dump or "error <code>: <message>", and the trace's in-place
 * counters. */
static char *parse_dump(const char *data, size_t len, const char *path, unsigned flags, uint64_t *ip_events,
                        uint64_t *ip_bails)
{
  GError *e = NULL;
  fe_json *j = path ? fe_json_open(path, &e) : fe_json_new_mem(data, len, "mem");
  g_assert_no_error(e);
  kt_trace *t = kt_trace_parse_flags(j, path ? path : "mem", flags, &e);
  if (!t) {
    g_assert_nonnull(e);
    char *r = g_strdup_printf("error %d: %s", e->code, e->message);
    g_error_free(e);
    *ip_events = *ip_bails = 0;
    return r;
  }
  g_assert_no_error(e);
  *ip_events = t->inplace_events;
  *ip_bails = t->inplace_bails;
  char *r = kt_trace_dump(t);
  kt_trace_free(t);
  return r;
}

/* Both paths agree on the input; returns the in-place event count. */
static uint64_t assert_same(const char *data, size_t len, const char *path)
{
  uint64_t ev_fast, bail_fast, ev_tok, bail_tok;
  char *fast = parse_dump(data, len, path, 0, &ev_fast, &bail_fast);
  char *tok = parse_dump(data, len, path, KT_PARSE_TOKENS_ONLY, &ev_tok, &bail_tok);
  g_assert_cmpuint(ev_tok, ==, 0); /* the tokens-only parse never takes the in-place path */
  if (strcmp(fast, tok) != 0) {
    /* Print the first differing line of each. */
    size_t i = 0;
    while (fast[i] && fast[i] == tok[i])
      i++;
    while (i > 0 && fast[i - 1] != '\n')
      i--;
    g_error("in-place and tokenizer parses differ at:\n  in place:  %.200s\n  tokenizer: %.200s", fast + i, tok + i);
  }
  g_free(fast);
  g_free(tok);
  return ev_fast;
}

static const char *shared_data(void)
{
  const char *d = g_getenv("WISP_SHARED_DATA");
  if (!d || !g_file_test(d, G_FILE_TEST_IS_DIR))
    return NULL;
  return d;
}

/* ---------- a synthetic trace with known plain and bailing events ---------- */

/* Appends one plain kernel event (in-place eligible). */
static void plain_kernel(GString *s, int i)
{
  g_string_append_printf(s,
                         "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm_%d\", \"pid\": 0, \"tid\": 7, "
                         "\"ts\": %d.125, \"dur\": 3.5, \"args\": {\"External id\": %d, \"correlation\": %d, "
                         "\"stream\": 7, \"device\": 0, \"grid\": [4, 16, 1], \"ok\": true, \"none\": null, "
                         "\"neg\": -1.5e-3, \"nested\": {\"a\": [[], {}, [1, {\"b\": false}]]}}}",
                         i % 5, 10 * i, i + 1, i + 1);
}

/* The synthetic trace: n_plain plain events (kernels, launches, cpu_ops,
 * flows, an NCCL kernel with string args) with one of extra_events[]
 * inserted after every 50th; *n_inplace and *n_bail receive how many
 * object entries the in-place path must finish and hand back.  Pretty or
 * compact layout. */
static const struct { gboolean bails; const char *json; } extra_events[] = {
  /* a string escape in the name */
  { TRUE, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\\\"quoted\\\"\", \"pid\": 0, \"tid\": 7, \"ts\": 5, \"dur\": 1}" },
  /* an escape inside skipped args */
  { TRUE, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1, \"ts\": 6, \"dur\": 1, "
  "\"args\": {\"Call stack\": \"a\\nb\\u00e9\"}}" },
  /* a CPU-side collective with Input Dims / Input type (decoded by the tokenizer path) */
  { TRUE, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"pid\": 1, \"tid\": 1, \"ts\": 7, "
  "\"dur\": 2, \"args\": {\"External id\": 99, \"Collective name\": \"allreduce\", \"Input Dims\": [[1024], [2, 3]], "
  "\"Input type\": [\"float\", \"c10::BFloat16\"], \"Process Group Name\": \"0\"}}" },
  /* no bail: string pid and tid (numeric and not), ts as a string (skipped) */
  { FALSE, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"s\", \"pid\": \"3\", \"tid\": \"x\", \"ts\": 12, \"dur\": 1}" },
  /* nesting deeper than 64 levels inside args */
  { TRUE, NULL }, /* built by build_trace */
  /* no bail: an empty ph, a numeric cat, a name that is not a string, an empty object */
  { FALSE, "{\"ph\": \"\", \"cat\": 5, \"name\": [\"k\"], \"ts\": 3}" },
  { FALSE, "{}" },
  /* no bail: collective metadata given only by string args */
  { FALSE, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_Generic\", \"ts\": 4, \"dur\": 1, "
           "\"args\": {\"Collective name\": \"broadcast\"}}" },
};

static char *build_trace(int n_plain, gboolean pretty, int *n_inplace, int *n_bail)
{
  const char *sep = pretty ? ",\n    " : ",";
  GString *s = g_string_new(pretty ? "{\n  \"schemaVersion\": 1,\n  \"distributedInfo\": {\"backend\": \"nccl\", "
                                     "\"rank\": 1, \"world_size\": 4, \"pg_config\": [{\"pg_name\": \"0\", "
                                     "\"pg_desc\": \"default_pg\", \"ranks\": [0, 1, 2, 3]}]},\n  \"traceEvents\": [\n    "
                                   : "{\"distributedInfo\":{\"rank\":1,\"world_size\":4},\"traceEvents\":[");
  GString *deep = g_string_new("{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"deep\", \"ts\": 9, \"dur\": 1, "
                               "\"args\": {\"x\": ");
  for (int i = 0; i < 70; i++)
    g_string_append_c(deep, '[');
  for (int i = 0; i < 70; i++)
    g_string_append_c(deep, ']');
  g_string_append(deep, "}}");
  int bails = 0, inplace = n_plain;
  for (int i = 0; i < n_plain; i++) {
    if (i)
      g_string_append(s, sep);
    switch (i % 6) {
    case 0:
    case 1:
      plain_kernel(s, i);
      break;
    case 2:
      g_string_append_printf(s, "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
                                "\"pid\": 1, \"tid\": 1, \"ts\": %d.5, \"dur\": 2.25, \"args\": {\"correlation\": %d, "
                                "\"External id\": %d, \"cbid\": 211}}", 10 * i, i, i);
      break;
    case 3:
      g_string_append_printf(s, "{\"ph\": \"s\", \"id\": %d, \"pid\": 1, \"tid\": 1, \"ts\": %d, \"cat\": \"ac2g\", "
                                "\"name\": \"ac2g\"}", i, 10 * i);
      break;
    case 4:
      g_string_append_printf(s, "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllReduce_Sum_f32_RING_LL"
                                "(ncclDevComm*, unsigned long, ncclWork*)\",\"pid\":0,\"tid\":20,\"ts\":%d,\"dur\":9,"
                                "\"args\":{\"Collective name\":\"allreduce\",\"In msg nelems\":%d,\"Out msg nelems\":%d,"
                                "\"Group size\":4,\"dtype\":\"Float\",\"Process Group Name\":\"0\",\"Process Group "
                                "Description\":\"default_pg\",\"Process Group Ranks\":\"[0, 1, 2, 3]\",\"Seq\":\"%d\","
                                "\"stream\":20,\"correlation\":%d}}", 10 * i, 1024 * i, 1024 * i, i, i);
      break;
    default:
      g_string_append_printf(s, "{ \"ph\" : \"X\" , \"cat\" : \"cpu_op\" , \"name\" : \"aten::addmm\" , \"pid\" : 1 ,"
                                " \"tid\" : 1 , \"ts\" : %d , \"dur\" : 1e1 , \"args\" : { \"Input Dims\" : [[512, "
                                "1024]] , \"Sequence number\" : %d } }", 10 * i, i);
      break;
    }
    if (i % 50 == 25) {
      size_t x = (size_t)(i / 50) % G_N_ELEMENTS(extra_events);
      g_string_append(s, sep);
      g_string_append(s, extra_events[x].json ? extra_events[x].json : deep->str);
      if (extra_events[x].bails)
        bails++;
      else
        inplace++;
    }
    if (i % 97 == 40) {
      /* Entries that are not objects: counted by the tokenizer path, not bails. */
      g_string_append(s, sep);
      g_string_append(s, i % 2 ? "[1, 2]" : "\"text\"");
    }
  }
  g_string_append(s, pretty ? "\n  ],\n  \"traceName\": \"ip\"\n}\n" : "]}");
  g_string_free(deep, TRUE);
  *n_bail = bails;
  *n_inplace = inplace;
  return g_string_free(s, FALSE);
}

/* ---------- tests ---------- */

/* Plain events are decoded in place; each listed bailing event falls back
 * once and gives the same result through the tokenizer. */
static void test_synthetic(void)
{
  for (int pretty = 0; pretty < 2; pretty++) {
    int n_inplace, n_bail;
    char *text = build_trace(600, pretty, &n_inplace, &n_bail);
    uint64_t ev, bails;
    char *d = parse_dump(text, strlen(text), NULL, 0, &ev, &bails);
    g_assert_true(g_str_has_prefix(d, "rank 1 world 4"));
    g_free(d);
    /* 600 plain events and 12 inserted ones (after i = 25, 75, ..., 575),
     * cycling through the 8 extra_events (i / 50 = 0..11 gives entries
     * 0-7 then 0-3): entries 0-2 and 4 bail (7 insertions), entries 3 and
     * 5-7 do not (5 insertions): 605 in place, 7 bails. */
    g_test_message("layout %s: %" G_GUINT64_FORMAT " in place (expected %d), %" G_GUINT64_FORMAT
                   " bails (expected %d)", pretty ? "pretty" : "compact", ev, n_inplace, bails, n_bail);
    g_assert_cmpint(n_inplace, ==, 605);
    g_assert_cmpint(n_bail, ==, 7);
    g_assert_cmpuint(ev, ==, (uint64_t)n_inplace);
    g_assert_cmpuint(bails, ==, (uint64_t)n_bail);
    g_assert_cmpuint(assert_same(text, strlen(text), NULL), ==, (uint64_t)n_inplace);
    g_free(text);
  }
}

/* Every truncation of a small trace and 3,000 random single-byte
 * corruptions: the two paths accept the same inputs and fail with the
 * same message at the same byte offset. */
static void test_damage(void)
{
  int n_inplace, n_bail;
  char *text = build_trace(60, TRUE, &n_inplace, &n_bail);
  size_t n = strlen(text);
  for (size_t cut = 0; cut < n; cut++)
    assert_same(text, cut, NULL);
  GRand *r = g_rand_new_with_seed(20261129);
  static const char bytes[] = "{}[]\",:\\ -+.eE0123456789tfnx\x01\x80";
  char *m = g_malloc(n);
  for (int k = 0; k < 3000; k++) {
    memcpy(m, text, n);
    size_t at = (size_t)g_rand_int_range(r, 0, (gint32)n);
    m[at] = bytes[g_rand_int_range(r, 0, (gint32)sizeof(bytes) - 1)];
    assert_same(m, n, NULL);
  }
  g_free(m);
  g_rand_free(r);
  g_free(text);
}

/* A trace of several megabytes read from a file, plain and gzip: events
 * straddle the tokenizer's buffer refills (FE_JSON_BUFFER_BYTES), one event
 * is longer than the whole buffer (a name of 1.2 buffers, so it can never
 * fit the in-place window), and the JSON array format (no top-level object)
 * is read the same way. */
static void test_file_buffers(void)
{
  int n_inplace, n_bail;
  char *text = build_trace(20000, TRUE, &n_inplace, &n_bail);
  g_assert_cmpuint(strlen(text), >, 2 * FE_JSON_BUFFER_BYTES); /* several refills */
  /* Insert the over-long event after the first 1 MB worth of events. */
  GString *s = g_string_new(text);
  const char *at = strstr(text + 1000000, ",\n    {");
  g_assert_nonnull(at);
  GString *big = g_string_new(",\n    {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"");
  for (size_t i = 0; i < FE_JSON_BUFFER_BYTES + FE_JSON_BUFFER_BYTES / 5; i++)
    g_string_append_c(big, (char)('a' + i % 26));
  g_string_append(big, "\", \"pid\": 0, \"tid\": 7, \"ts\": 1, \"dur\": 1}");
  g_string_insert_len(s, at - text, big->str, (gssize)big->len);
  char *dir = g_dir_make_tmp("wisp-kineto-ip-XXXXXX", NULL);
  char *plain = g_build_filename(dir, "t.json", NULL), *gz = g_build_filename(dir, "t.json.gz", NULL);
  g_assert_true(g_file_set_contents(plain, s->str, (gssize)s->len, NULL));
  gzFile f = gzopen(gz, "wb");
  g_assert_nonnull(f);
  g_assert_cmpint(gzwrite(f, s->str, (unsigned)s->len), ==, (int)s->len);
  g_assert_cmpint(gzclose(f), ==, Z_OK);
  /* 400 inserted events cycling through the 8 extra_events, 50 of each:
   * in place 20,000 + 4 x 50 (entries 3, 5, 6, 7) = 20,200; bails 4 x 50
   * (entries 0, 1, 2, 4) = 200, plus the long event (its name reaches the
   * window's end). */
  g_assert_cmpint(n_inplace, ==, 20200);
  g_assert_cmpint(n_bail, ==, 200);
  for (int k = 0; k < 2; k++) {
    const char *p = k ? gz : plain;
    uint64_t ev, bails;
    char *d = parse_dump(NULL, 0, p, 0, &ev, &bails);
    g_test_message("%s (%" G_GSIZE_FORMAT " bytes): %" G_GUINT64_FORMAT " in place, %" G_GUINT64_FORMAT " bails",
                   p, s->len, ev, bails);
    g_assert_cmpuint(ev, ==, 20200);
    g_assert_cmpuint(bails, ==, 201);
    char *want = g_strdup_printf("bytes %" G_GSIZE_FORMAT " ", s->len);
    g_assert_nonnull(strstr(d, want));
    g_free(want);
    g_free(d);
    assert_same(NULL, 0, p);
  }
  /* A gzip file cut short, at several points: both paths report the same
   * truncation error at the same uncompressed offset (the in-place path
   * meets it while filling its window). */
  {
    gchar *gzdata;
    gsize gzlen;
    g_assert_true(g_file_get_contents(gz, &gzdata, &gzlen, NULL));
    char *cut = g_build_filename(dir, "cut.json.gz", NULL);
    for (int k = 1; k <= 4; k++) {
      g_assert_true(g_file_set_contents(cut, gzdata, (gssize)(gzlen * (gsize)k / 5), NULL));
      uint64_t ev, bails;
      char *d = parse_dump(NULL, 0, cut, 0, &ev, &bails);
      g_assert_true(g_str_has_prefix(d, "error"));
      g_assert_nonnull(strstr(d, "truncated"));
      g_free(d);
      assert_same(NULL, 0, cut);
    }
    g_free(cut);
    g_free(gzdata);
  }
  /* A syntax error followed closely by the end of a truncated gzip stream,
   * both past the first buffer: the in-place path reads ahead when it
   * compacts its window and meets the truncation first, but must still
   * report the syntax error, as the tokenizer does.  The error replaces the
   * ',' before the first event after 1.5 buffers of the trace without the
   * over-long event; the compressed stream covers 1.6 buffers and loses
   * its last 64 bytes. */
  {
    const char *sep = strstr(text + FE_JSON_BUFFER_BYTES * 3 / 2, ",\n    {");
    size_t keep = FE_JSON_BUFFER_BYTES * 8 / 5;
    g_assert_nonnull(sep);
    size_t err_at = (size_t)(sep - text);
    g_assert_cmpuint(err_at + 4096, <, keep);
    g_assert_cmpuint(keep, <, strlen(text));
    char *bad = g_strndup(text, keep);
    bad[err_at] = ';';
    char *cut = g_build_filename(dir, "syntax_then_cut.json.gz", NULL);
    gzFile z = gzopen(cut, "wb");
    g_assert_nonnull(z);
    g_assert_cmpint(gzwrite(z, bad, (unsigned)keep), ==, (int)keep);
    g_assert_cmpint(gzclose(z), ==, Z_OK);
    gchar *zdata;
    gsize zlen;
    g_assert_true(g_file_get_contents(cut, &zdata, &zlen, NULL));
    g_assert_true(g_file_set_contents(cut, zdata, (gssize)(zlen - 64), NULL));
    uint64_t ev, bails;
    char *d = parse_dump(NULL, 0, cut, 0, &ev, &bails);
    char *want = g_strdup_printf("byte %" G_GSIZE_FORMAT ": expected ','", err_at);
    if (!strstr(d, want))
      g_error("expected the syntax error '%s', got: %s", want, d);
    g_free(want);
    g_free(d);
    assert_same(NULL, 0, cut);
    g_free(zdata);
    g_free(cut);
    g_free(bad);
  }
  /* JSON array format: the event list is the whole file. */
  const char *arr = strchr(strstr(s->str, "\"traceEvents\""), '[');
  const char *end = strrchr(s->str, ']');
  char *array_text = g_strndup(arr, (gsize)(end - arr + 1));
  g_assert_true(g_file_set_contents(plain, array_text, -1, NULL));
  assert_same(NULL, 0, plain);
  assert_same(array_text, strlen(array_text), NULL);
  g_free(array_text);
  g_free(plain);
  g_free(gz);
  test_rm_rf(dir);
  g_free(dir);
  g_string_free(big, TRUE);
  g_string_free(s, TRUE);
  g_free(text);
}

/* Every Kineto trace of ../shared/data parses to the same tables both
 * ways, and most of its events are decoded in place. */
static void test_fixtures(void)
{
  const char *d = shared_data();
  if (!d) {
    g_test_skip("WISP_SHARED_DATA not set or absent: real-trace comparison skipped");
    return;
  }
  static const char *const files[] = {
    "hta/nccl_parser_config/nccl_data.json.gz",
    "hta/trace_filter/sampled_rank-0.json.gz",
    "hta/trace_filter/sampled_rank-1.json.gz",
    "hta/execution_trace/benchmark_simple_add_trace.json.gz",
    "tracelens/b200/eager_trace.json.gz",
    "tracelens/mi300/resnet_act_checkpoint.json.gz",
    "tracelens/h100/gaunernst_bert-small-uncased__1016001.json.gz",
  };
  for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
    char *p = g_build_filename(d, files[i], NULL);
    uint64_t ev, bails;
    char *dump = parse_dump(NULL, 0, p, 0, &ev, &bails);
    g_assert_false(g_str_has_prefix(dump, "error"));
    g_test_message("%s: %" G_GUINT64_FORMAT " events in place, %" G_GUINT64_FORMAT " handed to the tokenizer",
                   files[i], ev, bails);
    g_assert_cmpuint(ev, >, 0);
    g_free(dump);
    assert_same(NULL, 0, p);
    g_free(p);
  }
  /* The edge-case folders and the 8-rank DLRM set hold several files each. */
  static const char *const dirs[] = { "hta/cpu_only", "hta/distributed_info_unavailable", "hta/rank_unavailable",
                                      "hta/amd_trace" };
  for (size_t i = 0; i < G_N_ELEMENTS(dirs); i++) {
    char *dp = g_build_filename(d, dirs[i], NULL);
    GDir *gd = g_dir_open(dp, 0, NULL);
    g_assert_nonnull(gd);
    const char *name;
    int n = 0;
    while ((name = g_dir_read_name(gd))) {
      if (!g_str_has_suffix(name, ".json") && !g_str_has_suffix(name, ".json.gz"))
        continue;
      char *p = g_build_filename(dp, name, NULL);
      assert_same(NULL, 0, p);
      g_free(p);
      n++;
    }
    g_dir_close(gd);
    g_assert_cmpint(n, >, 0);
    g_free(dp);
  }
  char *tar = g_build_filename(d, "param/dlrm_kineto.tar.gz", NULL);
  char *tmp = g_dir_make_tmp("wisp-kineto-ip-XXXXXX", NULL);
  test_untar(tar, tmp);
  char *tdir = g_build_filename(tmp, "dlrm_kineto", NULL);
  GDir *gd = g_dir_open(tdir, 0, NULL);
  g_assert_nonnull(gd);
  const char *name;
  int n = 0;
  while ((name = g_dir_read_name(gd))) {
    char *p = g_build_filename(tdir, name, NULL);
    assert_same(NULL, 0, p);
    g_free(p);
    n++;
  }
  g_dir_close(gd);
  g_assert_cmpint(n, ==, 8); /* one file per rank of the 8-rank job */
  test_rm_rf(tmp);
  g_free(tdir);
  g_free(tmp);
  g_free(tar);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/kineto_ip/synthetic", test_synthetic);
  g_test_add_func("/kineto_ip/damage", test_damage);
  g_test_add_func("/kineto_ip/file_buffers", test_file_buffers);
  g_test_add_func("/kineto_ip/fixtures", test_fixtures);
  return g_test_run();
}
