/* test_units.c: tests of common/wisp_util.c: unit parsing and formatting,
 * time conversions, exact transfer times, nanosecond strings and atomic
 * output files.  Every expected value is worked out in the comment or the
 * expression next to the check. */
#include "config.h"
#include "regress/test_util.h"
#include "common/wisp_util.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- bandwidth ---- */

static wisp_bw_Bps bw_ok(const char *text)
{
  wisp_bw_Bps v = 0;
  const char *why = NULL;
  if (!wisp_parse_bandwidth(text, &v, &why))
    g_error("\"%s\" was rejected: %s", text, why);
  return v;
}

static void bw_bad(const char *text)
{
  wisp_bw_Bps v = 12345;
  const char *why = NULL;
  g_assert_false(wisp_parse_bandwidth(text, &v, &why));
  g_assert_nonnull(why);
  g_assert_cmpuint(v, ==, 12345); /* the output is untouched on failure */
}

static void test_parse_bandwidth(void)
{
  /* Bits are divided by 8: 400 Gb/s = 400e9 / 8 = 50e9 bytes/s. */
  g_assert_cmpuint(bw_ok("400Gbps"), ==, UINT64_C(50000000000));
  g_assert_cmpuint(bw_ok("400Gb/s"), ==, UINT64_C(50000000000));
  g_assert_cmpuint(bw_ok("50GB/s"), ==, UINT64_C(50000000000));
  g_assert_cmpuint(bw_ok("50GBps"), ==, UINT64_C(50000000000));
  /* Binary: 50 * 2^30 = 53687091200. */
  g_assert_cmpuint(bw_ok("50GiB/s"), ==, UINT64_C(53687091200));
  g_assert_cmpuint(bw_ok("1.8TB/s"), ==, UINT64_C(1800000000000));
  /* 100e6 / 8 = 12.5e6. */
  g_assert_cmpuint(bw_ok("100Mbps"), ==, UINT64_C(12500000));
  /* White space around the number and unit is allowed: 12.5e9 / 8. */
  g_assert_cmpuint(bw_ok("  12.5 Gbps "), ==, UINT64_C(1562500000));
  /* 12 bits/s = 1.5 bytes/s, a tie, rounds away from zero to 2. */
  g_assert_cmpuint(bw_ok("12bps"), ==, 2);
  /* 8e18 bits/s = 1e18 bytes/s (both exact in a double). */
  g_assert_cmpuint(bw_ok("8000000000000000000bps"), ==, UINT64_C(1000000000000000000));

  bw_bad(NULL);
  bw_bad("");
  bw_bad("Gbps");     /* no number */
  bw_bad("400");      /* no unit */
  bw_bad("400Xbps");  /* unknown unit */
  bw_bad("400 Gbpsx");
  bw_bad("-5Gbps");   /* negative */
  bw_bad("0Gbps");    /* zero */
  bw_bad("1bps");     /* 0.125 bytes/s rounds to 0 */
  bw_bad("nanGbps");
  bw_bad("infGB/s");
  bw_bad("1e30TB/s"); /* 1e42 bytes/s does not fit */
}

/* ---- time ---- */

static sim_time_ps time_ok(const char *text)
{
  sim_time_ps v = -1;
  const char *why = NULL;
  if (!wisp_parse_time(text, &v, &why))
    g_error("\"%s\" was rejected: %s", text, why);
  return v;
}

static void time_bad(const char *text)
{
  sim_time_ps v = 777;
  const char *why = NULL;
  g_assert_false(wisp_parse_time(text, &v, &why));
  g_assert_nonnull(why);
  g_assert_cmpint(v, ==, 777);
}

static void test_parse_time(void)
{
  g_assert_cmpint(time_ok("500ns"), ==, 500 * SIM_PS_PER_NS);
  g_assert_cmpint(time_ok("2.1us"), ==, 2100000);          /* 2.1 * 10^6 */
  g_assert_cmpint(time_ok("1.5\xc2\xb5s"), ==, 1500000);   /* U+00B5 micro sign */
  g_assert_cmpint(time_ok("1.5\xce\xbcs"), ==, 1500000);   /* U+03BC Greek mu */
  g_assert_cmpint(time_ok("3ms"), ==, INT64_C(3000000000)); /* 3 * 10^9 */
  g_assert_cmpint(time_ok("1s"), ==, SIM_PS_PER_S);
  g_assert_cmpint(time_ok("250ps"), ==, 250);
  g_assert_cmpint(time_ok("0 ns"), ==, 0);
  /* Half a picosecond is a tie and rounds away from zero; 0.4 rounds down. */
  g_assert_cmpint(time_ok("2.5ps"), ==, 3);
  g_assert_cmpint(time_ok("0.5ps"), ==, 1);
  g_assert_cmpint(time_ok("0.4ps"), ==, 0);
  /* Integers are exact even beyond 2^53 (where a double has gaps of 2). */
  g_assert_cmpint(time_ok("9007199254740993ps"), ==, INT64_C(9007199254740993));
  g_assert_cmpint(time_ok("9223372036854775807ps"), ==, INT64_MAX);

  time_bad(NULL);
  time_bad("500");    /* no unit */
  time_bad("ns");     /* no number */
  time_bad("5 parsecs");
  time_bad("5nss");
  time_bad("-1ns");
  time_bad("9223372036854775808ps"); /* INT64_MAX + 1 */
  time_bad("107000000s");            /* ~3.4 years > INT64_MAX ps (~106.7 days) */
  time_bad("nanus");
}

/* ---- size ---- */

static uint64_t size_ok(const char *text)
{
  uint64_t v = 0;
  const char *why = NULL;
  if (!wisp_parse_size(text, &v, &why))
    g_error("\"%s\" was rejected: %s", text, why);
  return v;
}

static void size_bad(const char *text)
{
  uint64_t v = 99;
  const char *why = NULL;
  g_assert_false(wisp_parse_size(text, &v, &why));
  g_assert_nonnull(why);
  g_assert_cmpuint(v, ==, 99);
}

static void test_parse_size(void)
{
  g_assert_cmpuint(size_ok("64KiB"), ==, 64 * 1024);
  g_assert_cmpuint(size_ok("1MiB"), ==, 1024 * 1024);
  g_assert_cmpuint(size_ok("1GB"), ==, UINT64_C(1000000000));
  g_assert_cmpuint(size_ok("4096"), ==, 4096);
  g_assert_cmpuint(size_ok("4096B"), ==, 4096);
  g_assert_cmpuint(size_ok("64K"), ==, 64 * 1024); /* bare K is binary */
  g_assert_cmpuint(size_ok("1.5K"), ==, 1536);     /* 1.5 * 1024 is whole */
  g_assert_cmpuint(size_ok("1.1GB"), ==, UINT64_C(1100000000));
  /* 2^53 + 1 is not a double; integers must still be exact. */
  g_assert_cmpuint(size_ok("9007199254740993"), ==, UINT64_C(9007199254740993));
  /* 2^62 bytes = 4 EiB = 4096 PiB = 4194304 TiB. */
  g_assert_cmpuint(size_ok("4194304TiB"), ==, UINT64_C(1) << 62);

  size_bad(NULL);
  size_bad("");
  size_bad("abc");
  size_bad("-1");
  size_bad("0.5B");             /* half a byte */
  size_bad("1.0000000001GB");   /* 1000000000.1 bytes: not whole */
  size_bad("8EiB");             /* unknown unit */
  size_bad("10000000000000000000"); /* 1e19 >= 2^63 */
  size_bad("8388608TiB");       /* 2^63 bytes */
  size_bad("12 XB");
}

/* ---- formatting ---- */

static void check_fmt(char *got, const char *want)
{
  g_assert_cmpstr(got, ==, want);
  g_free(got);
}

static void test_format(void)
{
  /* 50e9 B/s = 50 GB/s = 400 Gb/s. */
  check_fmt(wisp_format_bandwidth(UINT64_C(50000000000)), "50 GB/s (400 Gb/s)");
  /* 12.5e6 B/s = 0.0125 GB/s = 0.1 Gb/s. */
  check_fmt(wisp_format_bandwidth(UINT64_C(12500000)), "0.0125 GB/s (0.1 Gb/s)");

  check_fmt(wisp_format_time(250), "250 ps");
  check_fmt(wisp_format_time(500000), "500 ns");
  check_fmt(wisp_format_time(2100000), "2.1 us");
  check_fmt(wisp_format_time(INT64_C(3000000000)), "3 ms");
  check_fmt(wisp_format_time(SIM_PS_PER_S), "1 s");
  check_fmt(wisp_format_time(-1500), "-1.5 ns");
  /* The most negative time must not overflow when its magnitude is taken:
   * -2^63 ps = -9223372.036854775808 s, %.6g gives -9.22337e+06. */
  check_fmt(wisp_format_time(INT64_MIN), "-9.22337e+06 s");

  check_fmt(wisp_format_size(0), "0 B");
  check_fmt(wisp_format_size(1023), "1023 B");
  check_fmt(wisp_format_size(1536), "1536 B"); /* not a whole KiB */
  check_fmt(wisp_format_size(65536), "64 KiB");
  check_fmt(wisp_format_size(1024 * 1024), "1 MiB");
  /* 1 GiB + 1 KiB = 1048577 KiB exactly; it must not be shown rounded. */
  check_fmt(wisp_format_size((UINT64_C(1) << 30) + 1024), "1048577 KiB");
  check_fmt(wisp_format_size(UINT64_C(3) << 50), "3 PiB");
}

static void test_ns_string(void)
{
  char buf[32];
  g_assert_cmpstr(wisp_ns_string(1234567, buf), ==, "1234.567");
  g_assert_cmpstr(wisp_ns_string(0, buf), ==, "0.000");
  g_assert_cmpstr(wisp_ns_string(5, buf), ==, "0.005");
  g_assert_cmpstr(wisp_ns_string(1000, buf), ==, "1.000");
  g_assert_cmpstr(wisp_ns_string(-1500, buf), ==, "-1.500");
  g_assert_cmpstr(wisp_ns_string(-5, buf), ==, "-0.005");
  /* INT64_MAX = 9223372036854775807 ps; INT64_MIN is one more in magnitude. */
  g_assert_cmpstr(wisp_ns_string(INT64_MAX, buf), ==, "9223372036854775.807");
  g_assert_cmpstr(wisp_ns_string(INT64_MIN, buf), ==, "-9223372036854775.808");
}

/* ---- conversions ---- */

static void test_transfer_ps(void)
{
  g_assert_cmpint(wisp_transfer_ps(0, 1), ==, 0);
  /* 1 byte at 10^12 B/s is exactly 1 ps. */
  g_assert_cmpint(wisp_transfer_ps(1, UINT64_C(1000000000000)), ==, 1);
  /* 1 byte at 2e12 B/s is 0.5 ps: a tie, rounded away from zero to 1. */
  g_assert_cmpint(wisp_transfer_ps(1, UINT64_C(2000000000000)), ==, 1);
  /* 1/3 ps rounds to 0, 2/3 ps rounds to 1. */
  g_assert_cmpint(wisp_transfer_ps(1, UINT64_C(3000000000000)), ==, 0);
  g_assert_cmpint(wisp_transfer_ps(2, UINT64_C(3000000000000)), ==, 1);
  /* 1 MiB at 50 GB/s: 1048576 * 10^12 / (50 * 10^9) = 20971520 ps. */
  g_assert_cmpint(wisp_transfer_ps(1048576, UINT64_C(50000000000)), ==, 20971520);
  /* 1000 B at 3 B/s: 10^15 / 3 = 333333333333333.33 -> ...333. */
  g_assert_cmpint(wisp_transfer_ps(1000, 3), ==, INT64_C(333333333333333));
  /* 2^40 B at 1 B/s = 2^40 * 10^12 ps, needs 80 bits before dividing:
   * here at 2^20 B/s: 2^20 * 10^12 = 1048576000000000000. */
  g_assert_cmpint(wisp_transfer_ps(UINT64_C(1) << 40, UINT64_C(1) << 20), ==, INT64_C(1048576000000000000));
  /* Largest inputs whose result fits: UINT64_MAX bytes at UINT64_MAX B/s is
   * exactly 1 s. */
  g_assert_cmpint(wisp_transfer_ps(UINT64_MAX, UINT64_MAX), ==, SIM_PS_PER_S);
}

static void test_ps_from(void)
{
  sim_time_ps v = 0;
  g_assert_true(wisp_ps_from_us(2.1, &v));
  g_assert_cmpint(v, ==, 2100000);
  g_assert_true(wisp_ps_from_ns(1234.567, &v));
  g_assert_cmpint(v, ==, 1234567);
  /* 0.0025 ns * 1000 is exactly 2.5 in binary floating point (checked
   * first), a tie that rounds away from zero: 3, and -3 for the negative. */
  volatile double q = 0.0025;
  g_assert_cmpfloat(q * 1e3, ==, 2.5);
  g_assert_true(wisp_ps_from_ns(0.0025, &v));
  g_assert_cmpint(v, ==, 3);
  g_assert_true(wisp_ps_from_ns(-0.0025, &v));
  g_assert_cmpint(v, ==, -3);
  v = 42;
  g_assert_false(wisp_ps_from_ns(NAN, &v));
  g_assert_false(wisp_ps_from_us(INFINITY, &v));
  g_assert_false(wisp_ps_from_us(1e20, &v)); /* 1e26 ps > INT64_MAX */
  g_assert_cmpint(v, ==, 42);
  g_assert_cmpint(wisp_ps_from_us_int(5), ==, 5 * SIM_PS_PER_US);
  g_assert_cmpint(wisp_ps_from_us_int(-7), ==, -7 * SIM_PS_PER_US);
}

/* ---- atomic output ---- */

static char *read_all(const char *path)
{
  char *text = NULL;
  GError *error = NULL;
  if (!g_file_get_contents(path, &text, NULL, &error)) {
    g_error_free(error);
    return NULL;
  }
  return text;
}


static void test_atomic_files(void)
{
  GError *error = NULL;
  char *dir = g_dir_make_tmp("wisp-units-XXXXXX", &error);
  g_assert_no_error(error);
  char *path = g_build_filename(dir, "out.txt", NULL);

  /* A fresh write lands in place, with no temporary file left beside it. */
  g_assert_true(wisp_write_file_atomic(path, "hello\n", 6, &error));
  g_assert_no_error(error);
  char *text = read_all(path);
  g_assert_cmpstr(text, ==, "hello\n");
  g_free(text);
  g_assert_cmpuint(test_dir_entries(dir), ==, 1);
  struct stat st;
  g_assert_cmpint(stat(path, &st), ==, 0);
  g_assert_cmpint(st.st_mode & 0777, ==, 0644);

  /* An aborted write leaves the previous content untouched and no temp. */
  wisp_afile *f = wisp_afile_open(path, &error);
  g_assert_no_error(error);
  fputs("half-written", wisp_afile_stream(f));
  g_assert_cmpuint(test_dir_entries(dir), ==, 2); /* the temporary exists meanwhile */
  text = read_all(path);
  g_assert_cmpstr(text, ==, "hello\n"); /* not visible before commit */
  g_free(text);
  wisp_afile_abort(f);
  text = read_all(path);
  g_assert_cmpstr(text, ==, "hello\n");
  g_free(text);
  g_assert_cmpuint(test_dir_entries(dir), ==, 1);

  /* A committed stream replaces the file. */
  f = wisp_afile_open(path, &error);
  g_assert_no_error(error);
  fputs("second\n", wisp_afile_stream(f));
  g_assert_true(wisp_afile_commit(f, &error));
  g_assert_no_error(error);
  text = read_all(path);
  g_assert_cmpstr(text, ==, "second\n");
  g_free(text);
  g_assert_cmpuint(test_dir_entries(dir), ==, 1);

  /* Zero bytes is a valid (empty) file. */
  g_assert_true(wisp_write_file_atomic(path, "", 0, &error));
  text = read_all(path);
  g_assert_cmpstr(text, ==, "");
  g_free(text);

  /* A missing directory is a user error naming the path, not a crash. */
  char *bad = g_build_filename(dir, "no-such-dir", "x.txt", NULL);
  g_assert_false(wisp_write_file_atomic(bad, "x", 1, &error));
  g_assert_error(error, WISP_ERROR, WISP_ERROR_IO);
  g_assert_nonnull(strstr(error->message, bad));
  g_clear_error(&error);
  g_assert_null(wisp_afile_open(bad, &error));
  g_assert_error(error, WISP_ERROR, WISP_ERROR_IO);
  g_clear_error(&error);
  wisp_afile_abort(NULL); /* accepted and does nothing */

  /* A file the run read: rewritable by a program that links the library
   * (no guard), refused once the guard is on (the wisp command), through a
   * symlink too, and rewritable again after wisp_output_reset(). */
  char *link = g_build_filename(dir, "link.txt", NULL);
  g_assert_cmpint(symlink("out.txt", link), ==, 0);
  wisp_input_note(path);
  g_assert_true(wisp_write_file_atomic(path, "a\n", 2, &error));
  g_assert_no_error(error);
  wisp_output_guard_enable();
  wisp_input_note(path);
  g_assert_false(wisp_write_file_atomic(link, "b\n", 2, &error));
  g_assert_error(error, WISP_ERROR, WISP_ERROR_INVALID);
  char *want = g_strdup_printf("%s: refusing to write over %s, one of this run's inputs; choose another output file",
                               link, path);
  g_assert_cmpstr(error->message, ==, want);
  g_free(want);
  g_clear_error(&error);
  text = read_all(path);
  g_assert_cmpstr(text, ==, "a\n");
  g_free(text);
  wisp_output_reset();
  g_assert_true(wisp_write_file_atomic(link, "c\n", 2, &error));
  g_assert_no_error(error);
  g_assert_true(g_file_test(link, G_FILE_TEST_IS_SYMLINK));
  text = read_all(path);
  g_assert_cmpstr(text, ==, "c\n");
  g_free(text);
  g_assert_cmpint(g_unlink(link), ==, 0);
  g_free(link);

  g_assert_cmpint(g_unlink(path), ==, 0);
  g_assert_cmpint(g_rmdir(dir), ==, 0);
  g_free(bad);
  g_free(path);
  g_free(dir);
}

static int cmp_d(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* wisp_median by selection against the definition: sort, then the middle
 * value or the mean of the two middle values.  Closed forms first, then
 * arrays of every size 1..300 in five shapes (random, few distinct
 * values, all equal, ascending, descending), compared to the bit. */
static void test_median(void)
{
  g_assert_true(isnan(wisp_median(NULL, 0)));
  double a[] = {3, 1, 2};
  g_assert_cmpfloat(wisp_median(a, 3), ==, 2);
  double b[] = {4, 1, 3, 2};
  g_assert_cmpfloat(wisp_median(b, 4), ==, 2.5); /* (2 + 3) / 2 */
  double c[] = {7, 7, 1, 7, 9, 7};
  g_assert_cmpfloat(wisp_median(c, 6), ==, 7);
  GRand *r = g_rand_new_with_seed(27);
  double *v = g_new(double, 300), *w = g_new(double, 300);
  for (size_t n = 1; n <= 300; n++)
    for (int shape = 0; shape < 5; shape++) {
      for (size_t i = 0; i < n; i++)
        v[i] = shape == 0 ? g_rand_double(r) * 1e3 : shape == 1 ? (double)g_rand_int_range(r, 0, 4) / 3.0
               : shape == 2 ? 0.1 : shape == 3 ? (double)i / 7.0 : (double)(n - i) / 7.0;
      memcpy(w, v, n * sizeof *v);
      qsort(w, n, sizeof *w, cmp_d);
      double want = n % 2 ? w[n / 2] : (w[n / 2 - 1] + w[n / 2]) / 2;
      double got = wisp_median(v, n);
      if (memcmp(&got, &want, sizeof got) != 0)
        g_error("median of %zu values, shape %d: %.17g, sorted gives %.17g", n, shape, got, want);
    }
  g_free(v);
  g_free(w);
  g_rand_free(r);
}

/* wisp_output_temp_unlinked: the spill files' descriptor is usable and no
 * name is left in g_get_tmp_dir(), so no signal can leave one behind once
 * it returns.  (The window it closes, a signal between the file's creation
 * and its unlink, is a race no test can hit on demand;
 * test_hostile_output_cli's signal test met it once under load.) */
static void test_temp_unlinked(void)
{
  char *prefix = g_strdup_printf("wisp-spill-%d-", (int)getpid());
  char *tmpl = g_strconcat(prefix, "XXXXXX", NULL);
  GError *error = NULL;
  int fd = wisp_output_temp_unlinked(tmpl, &error);
  g_assert_no_error(error);
  g_assert_cmpint(fd, >=, 0);
  g_assert_cmpint(write(fd, "12345678", 8), ==, 8); /* 8 bytes written, read back below */
  char back[8];
  g_assert_cmpint(pread(fd, back, 8, 0), ==, 8);
  g_assert_cmpint(memcmp(back, "12345678", 8), ==, 0);
  GDir *d = g_dir_open(g_get_tmp_dir(), 0, NULL);
  g_assert_nonnull(d);
  for (const char *e; (e = g_dir_read_name(d)) != NULL;)
    g_assert_false(g_str_has_prefix(e, prefix)); /* no name left: the file is unlinked */
  g_dir_close(d);
  close(fd);
  g_free(tmpl);
  g_free(prefix);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/units/median", test_median);
  g_test_add_func("/units/parse/bandwidth", test_parse_bandwidth);
  g_test_add_func("/units/parse/time", test_parse_time);
  g_test_add_func("/units/parse/size", test_parse_size);
  g_test_add_func("/units/format", test_format);
  g_test_add_func("/units/ns-string", test_ns_string);
  g_test_add_func("/units/transfer-ps", test_transfer_ps);
  g_test_add_func("/units/ps-from", test_ps_from);
  g_test_add_func("/units/atomic-files", test_atomic_files);
  g_test_add_func("/units/temp-unlinked", test_temp_unlinked);
  return g_test_run();
}
