/* wisp_util.c: error domain, unit conversion and parsing (atomic output is
 * in wisp_output.c). */
#include "config.h"
#include "common/wisp_util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

G_DEFINE_QUARK(wisp-error-quark, wisp_error)

/* Rounds half away from zero into an int64; FALSE when out of range. */
static gboolean round_to_i64(double v, int64_t *out)
{
  if (!isfinite(v))
    return FALSE;
  double r = round(v);
  if (r >= 9.2233720368547748e18 || r < -9.2233720368547758e18)
    return FALSE;
  *out = (int64_t)r;
  return TRUE;
}

gboolean wisp_ps_from_us(double us, sim_time_ps *out)
{
  return round_to_i64(us * 1e6, out);
}

gboolean wisp_ps_from_ns(double ns, sim_time_ps *out)
{
  return round_to_i64(ns * 1e3, out);
}

sim_time_ps wisp_ps_from_us_int(int64_t us)
{
  g_return_val_if_fail(us <= INT64_MAX / SIM_PS_PER_US && us >= INT64_MIN / SIM_PS_PER_US, 0);
  return us * SIM_PS_PER_US;
}

sim_time_ps wisp_transfer_ps(uint64_t bytes, wisp_bw_Bps bw)
{
  g_assert(bw > 0);
  unsigned __int128 num = (unsigned __int128)bytes * (unsigned __int128)SIM_PS_PER_S;
  unsigned __int128 q = num / bw;
  unsigned __int128 r = num % bw;
  if (r * 2 >= bw) /* half rounds away from zero */
    q++;
  return q < (unsigned __int128)SIM_TIME_LIMIT ? (sim_time_ps)q : SIM_TIME_LIMIT;
}

/* ---- parsing ---- */

typedef struct {
  const char *suffix;
  double scale;
} unit_entry;

/* Splits "12.5 Gbps" into the number and the unit suffix (spaces allowed
 * between them).  Returns FALSE when no number is present. */
static gboolean split_number(const char *text, double *value, const char **unit)
{
  if (text == NULL)
    return FALSE;
  while (g_ascii_isspace(*text))
    text++;
  char *end = NULL;
  errno = 0;
  double v = g_ascii_strtod(text, &end);
  if (end == text || errno == ERANGE || !isfinite(v))
    return FALSE;
  while (g_ascii_isspace(*end))
    end++;
  *value = v;
  *unit = end;
  return TRUE;
}

/* When the number in `text` is a plain decimal integer (digits only, after
 * optional white space), computes round(integer * scale) exactly in 128-bit
 * arithmetic, where scale * den must be a whole number (den = 8 for units in
 * bits, 1 otherwise), and returns TRUE with *fits telling whether the result
 * fits in an int64.  Returns FALSE for any other number form, which the
 * caller handles in double precision.  This keeps integers above 2^53 exact
 * ("9007199254740993" bytes is not a double). */
static gboolean exact_integer(const char *text, double scale, uint64_t den, int64_t *out, gboolean *fits)
{
  while (g_ascii_isspace(*text))
    text++;
  const char *p = text;
  while (g_ascii_isdigit(*p))
    p++;
  if (p == text || *p == '.' || *p == 'e' || *p == 'E' || *p == 'x' || *p == 'X')
    return FALSE;
  errno = 0;
  guint64 v = g_ascii_strtoull(text, NULL, 10);
  double sd = scale * (double)den;
  if (errno == ERANGE || sd != floor(sd) || sd >= 9007199254740992.0)
    return FALSE;
  unsigned __int128 q = (unsigned __int128)v * (uint64_t)sd;
  unsigned __int128 r = q % den;
  q /= den;
  if (r * 2 >= den && r != 0) /* half rounds away from zero */
    q++;
  *fits = q <= (unsigned __int128)INT64_MAX;
  if (*fits)
    *out = (int64_t)q;
  return TRUE;
}

static gboolean unit_lookup(const unit_entry *table, const char *unit, double *scale)
{
  /* Trailing white space is tolerated. */
  size_t len = strlen(unit);
  while (len > 0 && g_ascii_isspace(unit[len - 1]))
    len--;
  for (const unit_entry *e = table; e->suffix != NULL; e++) {
    if (strlen(e->suffix) == len && strncmp(e->suffix, unit, len) == 0) {
      *scale = e->scale;
      return TRUE;
    }
  }
  return FALSE;
}

gboolean wisp_parse_bandwidth(const char *text, wisp_bw_Bps *out, const char **error_text)
{
  static const unit_entry table[] = {
    {"bps", 1.0 / 8}, {"b/s", 1.0 / 8},
    {"Kbps", 1e3 / 8}, {"Kb/s", 1e3 / 8}, {"kbps", 1e3 / 8}, {"kb/s", 1e3 / 8},
    {"Mbps", 1e6 / 8}, {"Mb/s", 1e6 / 8},
    {"Gbps", 1e9 / 8}, {"Gb/s", 1e9 / 8},
    {"Tbps", 1e12 / 8}, {"Tb/s", 1e12 / 8},
    {"Bps", 1}, {"B/s", 1},
    {"KBps", 1e3}, {"KB/s", 1e3}, {"kB/s", 1e3}, {"kBps", 1e3},
    {"MBps", 1e6}, {"MB/s", 1e6},
    {"GBps", 1e9}, {"GB/s", 1e9},
    {"TBps", 1e12}, {"TB/s", 1e12},
    {"KiBps", 1024.0}, {"KiB/s", 1024.0},
    {"MiBps", 1048576.0}, {"MiB/s", 1048576.0},
    {"GiBps", 1073741824.0}, {"GiB/s", 1073741824.0},
    {"TiBps", 1099511627776.0}, {"TiB/s", 1099511627776.0},
    {NULL, 0},
  };
  double v, scale;
  const char *unit;
  if (!split_number(text, &v, &unit)) {
    *error_text = "expected a number with a bandwidth unit, e.g. \"400Gbps\" or \"50GB/s\"";
    return FALSE;
  }
  if (*unit == '\0') {
    *error_text = "a bandwidth needs a unit (Gbps, Gb/s, GB/s, GiB/s, ...)";
    return FALSE;
  }
  if (!unit_lookup(table, unit, &scale)) {
    *error_text = "unknown bandwidth unit (use bps, Kbps, Mbps, Gbps, Tbps, B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s)";
    return FALSE;
  }
  int64_t r = 0;
  gboolean fits = FALSE;
  if (exact_integer(text, scale, 8, &r, &fits) ? !fits || r <= 0
                                               : v <= 0 || !round_to_i64(v * scale, &r) || r <= 0) {
    *error_text = "a bandwidth must be positive, at least 1 byte/s and below 2^63 bytes/s";
    return FALSE;
  }
  *out = (wisp_bw_Bps)r;
  return TRUE;
}

gboolean wisp_parse_time(const char *text, sim_time_ps *out, const char **error_text)
{
  static const unit_entry table[] = {
    {"ps", 1}, {"ns", 1e3}, {"us", 1e6}, {"\xc2\xb5s", 1e6}, {"\xce\xbcs", 1e6}, {"ms", 1e9}, {"s", 1e12},
    {NULL, 0},
  };
  double v, scale;
  const char *unit;
  if (!split_number(text, &v, &unit)) {
    *error_text = "expected a number with a time unit, e.g. \"500ns\" or \"2.1us\"";
    return FALSE;
  }
  if (*unit == '\0') {
    *error_text = "a time needs a unit (ps, ns, us, ms, s)";
    return FALSE;
  }
  if (!unit_lookup(table, unit, &scale)) {
    *error_text = "unknown time unit (use ps, ns, us, ms or s)";
    return FALSE;
  }
  int64_t r = 0;
  gboolean fits = FALSE;
  if (exact_integer(text, scale, 1, &r, &fits) ? !fits : v < 0 || !round_to_i64(v * scale, &r)) {
    *error_text = "a time must be non-negative and below 106 days";
    return FALSE;
  }
  *out = r;
  return TRUE;
}

gboolean wisp_parse_size(const char *text, uint64_t *out, const char **error_text)
{
  static const unit_entry table[] = {
    {"", 1}, {"B", 1},
    {"K", 1024.0}, {"M", 1048576.0}, {"G", 1073741824.0}, {"T", 1099511627776.0},
    {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
    {"KB", 1e3}, {"kB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
    {NULL, 0},
  };
  double v, scale;
  const char *unit;
  if (!split_number(text, &v, &unit)) {
    *error_text = "expected a size, e.g. \"4096\", \"64KiB\", \"1MiB\" or \"1GB\"";
    return FALSE;
  }
  if (!unit_lookup(table, unit, &scale)) {
    *error_text = "unknown size unit (use B, KiB, MiB, GiB, TiB, KB, MB, GB, TB, or K/M/G/T for binary)";
    return FALSE;
  }
  int64_t r = 0;
  gboolean fits = FALSE;
  if (exact_integer(text, scale, 1, &r, &fits)) {
    if (!fits) {
      *error_text = "a size must be a non-negative number of bytes below 2^63";
      return FALSE;
    }
    *out = (uint64_t)r;
    return TRUE;
  }
  double bytes = v * scale;
  if (v < 0 || !round_to_i64(bytes, &r)) {
    *error_text = "a size must be a non-negative number of bytes below 2^63";
    return FALSE;
  }
  /* A decimal fraction times the unit is off a whole number only by the
   * rounding of the double (a few ulps); anything more is a fractional
   * byte, e.g. "1.0000000001GB" = 1000000000.1 bytes. */
  if (fabs(bytes - (double)r) > fmax(1e-6, bytes * 1e-14)) {
    *error_text = "a size must be a whole number of bytes";
    return FALSE;
  }
  *out = (uint64_t)r;
  return TRUE;
}

/* ---- formatting ---- */

/* %g-style with up to 6 significant digits, no trailing zeros. */
static char *fmt_value(double v, const char *unit)
{
  char buf[64];
  g_snprintf(buf, sizeof buf, "%.6g %s", v, unit);
  return g_strdup(buf);
}

char *wisp_format_bandwidth(wisp_bw_Bps bw)
{
  double GBps = (double)bw / 1e9;
  char a[64], b[64];
  g_snprintf(a, sizeof a, "%.6g GB/s", GBps);
  g_snprintf(b, sizeof b, "%.6g Gb/s", GBps * 8);
  return g_strdup_printf("%s (%s)", a, b);
}

char *wisp_format_time(sim_time_ps t)
{
  uint64_t a = t < 0 ? (uint64_t)(-(t + 1)) + 1 : (uint64_t)t; /* no overflow at INT64_MIN */
  if (a >= (uint64_t)SIM_PS_PER_S)
    return fmt_value((double)t / 1e12, "s");
  if (a >= UINT64_C(1000000000))
    return fmt_value((double)t / 1e9, "ms");
  if (a >= (uint64_t)SIM_PS_PER_US)
    return fmt_value((double)t / 1e6, "us");
  if (a >= (uint64_t)SIM_PS_PER_NS)
    return fmt_value((double)t / 1e3, "ns");
  return fmt_value((double)t, "ps");
}

char *wisp_format_size(uint64_t bytes)
{
  /* The largest binary unit that divides the size exactly, printed as an
   * exact integer count (never in %g form, which would round 1048577 KiB
   * to "1.04858e+06 KiB"); sizes that are no whole KiB print in bytes. */
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (u < 5 && (bytes >> (10 * u)) >= 1024 && bytes % ((uint64_t)1 << (10 * (u + 1))) == 0)
    u++;
  return g_strdup_printf("%" G_GUINT64_FORMAT " %s", bytes >> (10 * u), units[u]);
}

const char *wisp_ns_string(sim_time_ps t, char buf[32])
{
  const char *sign = t < 0 ? "-" : "";
  uint64_t a = t < 0 ? (uint64_t)(-(t + 1)) + 1 : (uint64_t)t;
  g_snprintf(buf, 32, "%s%" G_GUINT64_FORMAT ".%03u", sign, a / 1000, (unsigned)(a % 1000));
  return buf;
}

double wisp_wall_seconds(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
