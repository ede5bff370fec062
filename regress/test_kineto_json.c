/* test_kineto_json.c: the streaming JSON tokenizer (frontends/fe_json.c).
 *
 * Expected token streams are written out by hand from the JSON grammar;
 * error offsets are the byte positions of the offending character counted
 * in the literal input strings.
 */
#include "config.h"

#include "frontends/fe_json_ip.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include <zlib.h>

/* Renders the token stream as a compact string: { } [ ] k:KEY s:STR n:NUM t f z. */
static char *tokens(const char *in, size_t len, GError **error)
{
  fe_json *j = fe_json_new_mem(in, len, "mem");
  GString *out = g_string_new("");
  fe_json_tok t;
  for (;;) {
    if (!fe_json_next(j, &t, error)) {
      fe_json_free(j);
      g_string_free(out, TRUE);
      return NULL;
    }
    const char *x = fe_json_text(j, NULL);
    switch (t) {
    case FE_JSON_EOF: fe_json_free(j); return g_string_free(out, FALSE);
    case FE_JSON_OBJ_BEGIN: g_string_append(out, "{"); break;
    case FE_JSON_OBJ_END: g_string_append(out, "}"); break;
    case FE_JSON_ARR_BEGIN: g_string_append(out, "["); break;
    case FE_JSON_ARR_END: g_string_append(out, "]"); break;
    case FE_JSON_KEY: g_string_append_printf(out, "k:%s ", x); break;
    case FE_JSON_STRING: g_string_append_printf(out, "s:%s ", x); break;
    case FE_JSON_NUMBER: g_string_append_printf(out, "n:%s ", x); break;
    case FE_JSON_TRUE: g_string_append(out, "t "); break;
    case FE_JSON_FALSE: g_string_append(out, "f "); break;
    case FE_JSON_NULL: g_string_append(out, "z "); break;
    }
  }
}

static void test_tokens(void)
{
  const char *in = " {\"a\": [1, -2.5e3, true, false, null], \"b\\n\": {\"c\": \"x\\\"y\"}, \"d\": []}\n";
  GError *e = NULL;
  char *s = tokens(in, strlen(in), &e);
  g_assert_no_error(e);
  g_assert_cmpstr(s, ==, "{k:a [n:1 n:-2.5e3 t f z ]k:b\n {k:c s:x\"y }k:d []}");
  g_free(s);
}

static void test_escapes(void)
{
  /* \u00e9 = é (C3 A9), \u20ac = € (E2 82 AC), \ud83d\ude00 = U+1F600 (F0 9F 98 80). */
  const char *in = "\"\\u00e9\\u20ac\\ud83d\\ude00\\/\\b\\f\\t\\r\"";
  fe_json *j = fe_json_new_mem(in, strlen(in), "mem");
  fe_json_tok t;
  GError *e = NULL;
  g_assert_true(fe_json_next(j, &t, &e));
  g_assert_cmpint(t, ==, FE_JSON_STRING);
  size_t len;
  const char *x = fe_json_text(j, &len);
  g_assert_cmpmem(x, len, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80/\b\f\t\r", 14);
  g_assert_true(fe_json_next(j, &t, &e));
  g_assert_cmpint(t, ==, FE_JSON_EOF);
  fe_json_free(j);
}

/* Each malformed input fails with WISP_ERROR_PARSE at the given byte. */
static void test_errors(void)
{
  static const struct { const char *in; const char *off; } cases[] = {
    { "{\"a\" 1}", "byte 5:" },          /* missing colon: the '1' at offset 5 */
    { "[1,]", "byte 3:" },              /* value expected at ']' */
    { "[1 2]", "byte 3:" },             /* ',' expected at '2' */
    { "\"a\\x\"", "byte 2:" },          /* bad escape starts at the backslash, offset 2 */
    { "\"\\ud800x\"", "byte 1:" },      /* lone high surrogate */
    { "\"\\udc00\"", "byte 1:" },       /* lone low surrogate */
    { "\"a\nb\"", "byte 2:" },          /* raw newline in a string */
    { "01", "byte 0:" },                /* leading zero */
    { "-", "byte 0:" },
    { "1.", "byte 0:" },
    { "tru", "byte 0:" },
    { "nul!", "byte 0:" },
    { "{} x", "byte 3:" },              /* trailing garbage */
    { "", "byte 0:" },
    { "[", "byte 1:" },
    { "{\"a\":1", "byte 6:" },
    { "\"abc", "byte 0:" },             /* unterminated string reported at its start */
    { "{1:2}", "byte 1:" },
    { "[}", "byte 1:" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    GError *e = NULL;
    char *s = tokens(cases[i].in, strlen(cases[i].in), &e);
    g_assert_null(s);
    g_assert_error(e, WISP_ERROR, WISP_ERROR_PARSE);
    if (!strstr(e->message, cases[i].off))
      g_error("input %s: message '%s' lacks '%s'", cases[i].in, e->message, cases[i].off);
    g_error_free(e);
  }
}

/* Every strict prefix of a valid document is an error (never a crash, never
 * accepted): the document is only complete at its last byte. */
static void test_truncation(void)
{
  const char *doc = "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\\u00e9\", \"ts\": 1.5, \"args\": {\"x\": [1, [2]], "
                    "\"y\": null}}], \"z\": true}";
  size_t n = strlen(doc);
  for (size_t cut = 0; cut < n; cut++) {
    GError *e = NULL;
    char *s = tokens(doc, cut, &e);
    g_assert_null(s);
    g_assert_error(e, WISP_ERROR, WISP_ERROR_PARSE);
    g_error_free(e);
  }
  GError *e = NULL;
  char *s = tokens(doc, n, &e);
  g_assert_no_error(e);
  g_free(s);
}

/* 200,000 nested arrays: no recursion, no limit; skip() returns to depth 0. */
static void test_deep_nesting(void)
{
  size_t d = 200000;
  char *in = g_malloc(2 * d + 1);
  memset(in, '[', d);
  memset(in + d, ']', d);
  in[2 * d] = 0;
  fe_json *j = fe_json_new_mem(in, 2 * d, "deep");
  fe_json_tok t;
  GError *e = NULL;
  g_assert_true(fe_json_next(j, &t, &e));
  g_assert_true(fe_json_skip(j, t, &e));
  g_assert_no_error(e);
  g_assert_cmpuint(fe_json_depth(j), ==, 0);
  g_assert_true(fe_json_next(j, &t, &e));
  g_assert_cmpint(t, ==, FE_JSON_EOF);
  fe_json_free(j);
  /* Unbalanced: one closer missing -> error at the end (offset 2d-1). */
  j = fe_json_new_mem(in, 2 * d - 1, "deep");
  g_assert_true(fe_json_next(j, &t, &e));
  g_assert_false(fe_json_skip(j, t, &e));
  g_assert_error(e, WISP_ERROR, WISP_ERROR_PARSE);
  char want[64];
  g_snprintf(want, sizeof want, "byte %zu:", 2 * d - 1);
  g_assert_nonnull(strstr(e->message, want));
  g_error_free(e);
  fe_json_free(j);
  g_free(in);
}

static char *write_tmp(const char *name, const void *data, size_t len, gboolean gz)
{
  char *dir = g_dir_make_tmp("wisp-json-XXXXXX", NULL);
  char *path = g_build_filename(dir, name, NULL);
  g_free(dir);
  if (gz) {
    gzFile f = gzopen(path, "wb");
    g_assert_nonnull(f);
    g_assert_cmpint(gzwrite(f, data, (unsigned)len), ==, (int)len);
    gzclose(f);
  } else {
    g_assert_true(g_file_set_contents(path, data, (gssize)len, NULL));
  }
  return path;
}

static void rm_tmp(char *path)
{
  char *dir = g_path_get_dirname(path);
  g_unlink(path);
  g_rmdir(dir);
  g_free(dir);
  g_free(path);
}

/* A string of 4 buffers' length (4 refills of the FE_JSON_BUFFER_BYTES
 * buffer) in a gzip file and in a plain file: the decoded length and
 * content survive the buffer seams. */
static void test_file_long_string(gconstpointer gzp)
{
  gboolean gz = GPOINTER_TO_INT(gzp);
  size_t n = 4u * FE_JSON_BUFFER_BYTES;
  GString *doc = g_string_new("[\"");
  for (size_t i = 0; i < n; i++)
    g_string_append_c(doc, (char)('a' + i % 26));
  g_string_append(doc, "\", 42]");
  char *path = write_tmp(gz ? "t.json.gz" : "t.json", doc->str, doc->len, gz);
  GError *e = NULL;
  fe_json *j = fe_json_open(path, &e);
  g_assert_no_error(e);
  fe_json_tok t;
  g_assert_true(fe_json_next(j, &t, &e));
  g_assert_true(fe_json_next(j, &t, &e));
  g_assert_cmpint(t, ==, FE_JSON_STRING);
  size_t len;
  const char *s = fe_json_text(j, &len);
  g_assert_cmpuint(len, ==, n);
  g_assert_cmpint(s[n - 1], ==, 'a' + (int)((n - 1) % 26));
  g_assert_true(fe_json_next(j, &t, &e));
  g_assert_cmpint(t, ==, FE_JSON_NUMBER);
  /* offset of "42" = 2 + n + 3 (quote, comma, space). */
  g_assert_cmpuint(fe_json_offset(j), ==, 2 + n + 3);
  g_assert_true(fe_json_next(j, &t, &e));
  g_assert_true(fe_json_next(j, &t, &e));
  g_assert_cmpint(t, ==, FE_JSON_EOF);
  g_assert_cmpuint(fe_json_bytes_read(j), ==, doc->len);
  fe_json_free(j);
  rm_tmp(path);
  g_string_free(doc, TRUE);
}

/* A gzip file cut in the middle of its compressed stream is an error naming
 * truncation, not a silently shorter document. */
static void test_truncated_gzip(void)
{
  GString *doc = g_string_new("[");
  for (int i = 0; i < 100000; i++)
    g_string_append_printf(doc, "%s%d", i ? "," : "", i * 7919 % 100003);
  g_string_append(doc, "]");
  char *path = write_tmp("t.json.gz", doc->str, doc->len, TRUE);
  gchar *data;
  gsize len;
  g_assert_true(g_file_get_contents(path, &data, &len, NULL));
  g_assert_true(g_file_set_contents(path, data, (gssize)(len / 2), NULL));
  g_free(data);
  GError *e = NULL;
  fe_json *j = fe_json_open(path, &e);
  g_assert_no_error(e);
  fe_json_tok t;
  g_assert_true(fe_json_next(j, &t, &e));
  g_assert_true(fe_json_skip(j, t, &e) == FALSE);
  g_assert_error(e, WISP_ERROR, WISP_ERROR_PARSE);
  g_assert_nonnull(strstr(e->message, "truncated"));
  g_error_free(e);
  fe_json_free(j);
  rm_tmp(path);
  g_string_free(doc, TRUE);
}

static void test_missing_file(void)
{
  GError *e = NULL;
  g_assert_null(fe_json_open("/nonexistent/wisp/x.json", &e));
  g_assert_error(e, WISP_ERROR, WISP_ERROR_IO);
  g_error_free(e);
}

/* Microsecond decimals to picoseconds, exactly (1 µs = 10^6 ps). */
static void test_us_to_ps(void)
{
  sim_time_ps ps;
  g_assert_true(fe_json_us_to_ps("2636.669", &ps));
  g_assert_cmpint(ps, ==, 2636669000);          /* 2636.669 µs */
  g_assert_true(fe_json_us_to_ps("0.0000005", &ps));
  g_assert_cmpint(ps, ==, 1);                   /* 0.5 ps rounds away from zero */
  g_assert_true(fe_json_us_to_ps("0.0000004", &ps));
  g_assert_cmpint(ps, ==, 0);
  g_assert_true(fe_json_us_to_ps("-1.25", &ps));
  g_assert_cmpint(ps, ==, -1250000);
  g_assert_true(fe_json_us_to_ps("1e3", &ps));
  g_assert_cmpint(ps, ==, 1000000000);          /* exponent form via wisp_ps_from_us */
  g_assert_false(fe_json_us_to_ps("99999999999999999999", &ps));
  int64_t w, f;
  /* 4458677009853.422 µs: whole part and 422,000 ps, exact (a double has ~0.5 ns error here). */
  g_assert_true(fe_json_us_split("4458677009853.422", &w, &f));
  g_assert_cmpint(w, ==, INT64_C(4458677009853));
  g_assert_cmpint(f, ==, 422000);
  g_assert_true(fe_json_us_split("-0.25", &w, &f));
  g_assert_cmpint(w, ==, -1);                   /* -0.25 = -1 + 0.75 */
  g_assert_cmpint(f, ==, 750000);
  int64_t v;
  g_assert_true(fe_json_int("12.0", &v));
  g_assert_cmpint(v, ==, 12);
  g_assert_false(fe_json_int("12.5", &v));
  g_assert_true(fe_json_int("-9223372036854775808", &v));
  g_assert_cmpint(v, ==, INT64_MIN);
  g_assert_false(fe_json_int("9223372036854775808", &v));
}

/* Integers and microsecond decimals of every length from 1 to 24 digits
 * (the converters take 8 digits at a time when they can), 20,000 random
 * ones, against independent references: for integers g_ascii_strtoll
 * (which reports overflow through errno); for "W.F" microseconds the
 * exact value built digit by digit in 128-bit arithmetic here, rounding
 * the seventh fractional digit half away from zero. */
static void test_digit_runs(void)
{
  GRand *r = g_rand_new_with_seed(424242);
  char buf[64];
  for (int k = 0; k < 20000; k++) {
    int nd = 1 + k % 24;
    int neg = g_rand_int_range(r, 0, 4) == 0;
    size_t n = 0;
    if (neg)
      buf[n++] = '-';
    for (int i = 0; i < nd; i++)
      buf[n++] = (char)('0' + (i == 0 && nd > 1 ? g_rand_int_range(r, 1, 10) : g_rand_int_range(r, 0, 10)));
    if (k % 7 == 0) /* all nines: the largest value of that length */
      for (size_t i = neg; i < n; i++)
        buf[i] = '9';
    buf[n] = 0;
    /* Integers. */
    errno = 0;
    gint64 want = g_ascii_strtoll(buf, NULL, 10);
    gboolean want_ok = errno == 0;
    int64_t got = 0;
    gboolean ok = fe_json_int_n(buf, n, &got);
    if (ok != want_ok || (ok && got != want))
      g_error("fe_json_int_n(\"%s\"): got %s %" G_GINT64_FORMAT ", expected %s %" G_GINT64_FORMAT, buf,
              ok ? "ok" : "fail", got, want_ok ? "ok" : "fail", want);
    /* Microseconds: the same digits with a fraction of 0-9 digits. */
    int nf = g_rand_int_range(r, 0, 10);
    size_t m = n;
    if (nf) {
      buf[m++] = '.';
      for (int i = 0; i < nf; i++)
        buf[m++] = (char)('0' + g_rand_int_range(r, 0, 10));
    }
    buf[m] = 0;
    unsigned __int128 mag = 0; /* |value| in ps, exact */
    const char *q = buf + neg;
    while (*q && *q != '.')
      mag = mag * 10 + (unsigned)(*q++ - '0');
    mag *= 1000000;
    uint64_t frac = 0;
    int fd = 0;
    if (*q == '.') {
      for (q++; *q; q++, fd++) {
        if (fd < 6)
          frac = frac * 10 + (uint64_t)(*q - '0');
        else if (fd == 6 && *q >= '5')
          frac++;
      }
    }
    for (; fd < 6; fd++)
      frac *= 10;
    mag += frac;
    gboolean exp_ok = mag <= (unsigned __int128)INT64_MAX - 999999;
    sim_time_ps ps = 0;
    gboolean ok2 = fe_json_us_to_ps_n(buf, m, &ps);
    /* Values too large for the decimal path fall back to strtod, which may
     * still accept them approximately; only in-range values are compared. */
    if (exp_ok) {
      int64_t expect = neg ? -(int64_t)mag : (int64_t)mag;
      if (!ok2 || ps != expect)
        g_error("fe_json_us_to_ps_n(\"%s\"): got %s %" G_GINT64_FORMAT " ps, expected %" G_GINT64_FORMAT " ps", buf,
                ok2 ? "ok" : "fail", ps, expect);
    }
  }
  g_rand_free(r);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/fe_json/tokens", test_tokens);
  g_test_add_func("/fe_json/escapes", test_escapes);
  g_test_add_func("/fe_json/errors", test_errors);
  g_test_add_func("/fe_json/truncation", test_truncation);
  g_test_add_func("/fe_json/deep_nesting", test_deep_nesting);
  g_test_add_data_func("/fe_json/file_plain", GINT_TO_POINTER(0), test_file_long_string);
  g_test_add_data_func("/fe_json/file_gzip", GINT_TO_POINTER(1), test_file_long_string);
  g_test_add_func("/fe_json/truncated_gzip", test_truncated_gzip);
  g_test_add_func("/fe_json/missing_file", test_missing_file);
  g_test_add_func("/fe_json/us_to_ps", test_us_to_ps);
  g_test_add_func("/fe_json/digit_runs", test_digit_runs);
  return g_test_run();
}
