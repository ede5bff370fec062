/* wisp_util.h: error domain, units and atomic output shared by every module.
 *
 * Simulated time is an integer count of picoseconds (sim_time_ps). Every
 * conversion from a trace or config unit into picoseconds goes through the
 * functions below, which round half away from zero; nothing else in wisp
 * converts floating-point times.  Bandwidth is an integer count of bytes per
 * second (wisp_bw_Bps); a transfer of S bytes at B bytes/s takes
 * round(S * 10^12 / B) picoseconds, computed exactly in 128-bit integers.
 */
#ifndef WISP_UTIL_H
#define WISP_UTIL_H

#include <glib.h>
#include <stdint.h>
#include <stdio.h>

G_BEGIN_DECLS

typedef int64_t sim_time_ps;
typedef uint64_t wisp_bw_Bps;

#define SIM_TIME_MAX INT64_MAX
/* The latest time the engine schedules: 2^61 ps, about 26.7 days of
 * simulated time.  The quarter of the int64 range leaves room for the
 * model layers to add a few in-range durations (a latency, a reduction
 * wait) without overflow; an event asked for at or after it stops the run
 * with sim_time_overflowed() (simcore/sim.h). */
#define SIM_TIME_LIMIT (INT64_C(1) << 61)
/* a + b saturated at SIM_TIME_LIMIT, for durations that may come from
 * input (a link latency up to 2^63 ps): a in [0, SIM_TIME_LIMIT], b >= 0.
 * A result at the limit is refused by the engine as an overflow.  O(1). */
static inline sim_time_ps sim_time_add_sat(sim_time_ps a, sim_time_ps b)
{
  return b >= SIM_TIME_LIMIT - a ? SIM_TIME_LIMIT : a + b;
}
/* The largest message, split or tensor size a reader accepts: 2^50 bytes
 * (1 PiB), far above any device's memory.  Sizes are checked against it
 * where they enter (Chakra comm_size and split sizes, Kineto shapes,
 * options), so that per-rank products of a size and a rank count up to
 * 2^13 stay within uint64. */
#define WISP_MAX_BYTES (UINT64_C(1) << 50)

/* Overflow-checked products and sums for sizes and counts that come from
 * input: FALSE (and *out untouched) when the exact result does not fit.
 * Every reader that multiplies input values (shape dimensions, element
 * sizes, counts) uses these.  O(1). */
static inline gboolean wisp_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return FALSE;
  *out = r;
  return TRUE;
}
static inline gboolean wisp_add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return FALSE;
  *out = r;
  return TRUE;
}
#define SIM_PS_PER_NS INT64_C(1000)
#define SIM_PS_PER_US INT64_C(1000000)
#define SIM_PS_PER_S INT64_C(1000000000000)

/* The single error domain for user-caused problems (bad input files,
 * inconsistent configs).  Messages always name the file and, where known,
 * the line, byte offset or node id, and say what to do. */
#define WISP_ERROR (wisp_error_quark())
GQuark wisp_error_quark(void);

typedef enum {
  WISP_ERROR_IO,        /* cannot open, read or write a file */
  WISP_ERROR_PARSE,     /* malformed or truncated input */
  WISP_ERROR_INVALID,   /* well-formed but semantically wrong input */
  WISP_ERROR_UNSUPPORTED, /* valid input that wisp does not model */
  WISP_ERROR_DEADLOCK,  /* the replay stopped with unfinished nodes */
  WISP_ERROR_LIMIT,     /* a bound (size, count) was exceeded */
} WispError;

/* Time conversions, rounding half away from zero.  Values that do not fit
 * in sim_time_ps or are not finite return FALSE. */
gboolean wisp_ps_from_us(double us, sim_time_ps *out);
gboolean wisp_ps_from_ns(double ns, sim_time_ps *out);
sim_time_ps wisp_ps_from_us_int(int64_t us);

/* Exact transfer time: round(bytes * 10^12 / bw) picoseconds, ties away from
 * zero.  bw must be > 0.  A time at or past SIM_TIME_LIMIT saturates there,
 * which the engine refuses to schedule (the run reports the overflow), so
 * callers may add a few such times without overflowing int64. */
sim_time_ps wisp_transfer_ps(uint64_t bytes, wisp_bw_Bps bw);

/* Unit-suffixed value parsers for configs.  Accepted forms:
 *   bandwidth: "400Gbps" "400Gb/s" "50GB/s" "50GBps" "50GiB/s" "1.8TB/s" "100Mbps"
 *              (b = bits, B = bytes; K/M/G/T decimal, Ki/Mi/Gi/Ti binary)
 *   time:      "500ns" "2.1us" "1.5µs" "3ms" "1s" "250ps"
 *   size:      "64KiB" "1MiB" "1GB" "4096" "4096B" "64K" (bare K/M/G/T after a
 *              number in a size list are binary, as nccl-tests uses them)
 * Results are rounded to the nearest integer unit (byte/s, ps, byte).  On
 * failure they return FALSE and set *error_text to a static explanation. */
gboolean wisp_parse_bandwidth(const char *text, wisp_bw_Bps *out, const char **error_text);
gboolean wisp_parse_time(const char *text, sim_time_ps *out, const char **error_text);
gboolean wisp_parse_size(const char *text, uint64_t *out, const char **error_text);

/* Human, normalized echo of values, e.g. "50 GB/s (400 Gb/s)", "500 ns",
 * "1 MiB".  The returned string must be g_free()d. */
char *wisp_format_bandwidth(wisp_bw_Bps bw);
char *wisp_format_time(sim_time_ps t);
char *wisp_format_size(uint64_t bytes);

/* Picoseconds as decimal nanoseconds with picosecond precision ("1234.567"),
 * written into buf (at least 32 bytes).  Used for every *_ns output field. */
const char *wisp_ns_string(sim_time_ps t, char buf[32]);

/* Output files (common/wisp_output.c).  Every output option of every
 * command (--json, --timeline, --svg, --dot, -o, sweep and convert files)
 * writes through wisp_afile, which follows these rules:
 *   - "-" is standard output, and so are /dev/stdout, /dev/fd/1,
 *     /proc/self/fd/1 and any symlink chain that passes through one of them;
 *   - a regular file (or a path that does not exist yet) is written to
 *     TARGET.tmp.XXXXXX in the target's directory and renamed over it only
 *     by wisp_afile_commit(), so a failed or interrupted run never leaves a
 *     half-written file that looks complete; an existing file keeps its
 *     permission bits (and, when run as root, its owner), a new one gets
 *     0644;
 *   - a symlink is followed (up to 40 links): its final target is replaced
 *     and the link itself is kept;
 *   - anything else that exists (a device, a FIFO, a socket) is opened and
 *     written directly, never replaced, and any write error (ENOSPC on
 *     /dev/full, a FIFO without reader) makes the commit fail;
 *   - a path that names one of the run's inputs (wisp_input_note, compared
 *     by device and inode) is refused before anything is opened.
 * Complexity: O(inputs + declared outputs) per open. */
typedef struct wisp_afile wisp_afile;
wisp_afile *wisp_afile_open(const char *path, GError **error);
FILE *wisp_afile_stream(wisp_afile *f);
gboolean wisp_afile_commit(wisp_afile *f, GError **error); /* frees f */
void wisp_afile_abort(wisp_afile *f);                     /* frees f, removes temp */
gboolean wisp_write_file_atomic(const char *path, const char *data, size_t len, GError **error);

/* Records that this run reads the file at path (followed through
 * symlinks), so that no output may replace it.  Readers call it when they
 * open a file; missing paths are ignored.  Thread-safe.  It records
 * nothing until wisp_output_guard_enable() was called: the `wisp` command
 * enables the guard for its one run, while a program that links the
 * library and rewrites a file it read (tests, tools) is not refused. */
void wisp_input_note(const char *path);
void wisp_output_guard_enable(void);

/* Declares, right after option parsing, an output the command will write
 * (NULL path: nothing to declare); option names it in messages ("--json").
 * When path is standard output ("-", /dev/stdout, ...), the command's own
 * terminal text is moved to standard error from here on, so that the report
 * alone reaches a pipe (`--json - | jq`); two outputs on standard output
 * are an error.  The first wisp_afile_open() of the run checks every
 * declared output against the inputs noted by then, so a clash is refused
 * before any output is written.  Thread-safe. */
gboolean wisp_output_declare(const char *path, const char *option, GError **error);

/* Checks every declared output against the inputs noted so far (what the
 * first wisp_afile_open() does); commands call it once their inputs are
 * loaded, so that a clash is refused before the run prints or computes
 * anything.  FALSE with the error naming the option, the output and the
 * input. */
gboolean wisp_output_check(GError **error);

/* TRUE when path means standard output ("-", /dev/stdout, /dev/fd/1,
 * /proc/self/fd/1, or a symlink chain through one of them). */
gboolean wisp_output_is_stdout(const char *path);

/* Forgets the noted inputs and declared outputs, turns the guard off and
 * gives standard output back to the terminal text (each command calls it at
 * its end, so in-process tests can run several commands). */
void wisp_output_reset(void);

/* Installs handlers for SIGINT, SIGTERM and SIGHUP that remove the
 * temporary files of the outputs being written (TARGET.tmp.XXXXXX) and
 * then die of the same signal, so an interrupted run leaves no temp file
 * behind (the targets themselves are untouched).  Signals the caller
 * ignores stay ignored.  The `wisp` command calls it once at start. */
void wisp_output_cleanup_on_signals(void);

/* Unlinks the temporary files of the outputs being written (the table the
 * signal handler uses) and the run's own temporaries below, for a process
 * about to end abnormally (cli/wisp.c on a failed allocation).
 * Async-signal-safe; allocates nothing. */
void wisp_output_remove_temps(void);

/* Makes a temporary file (empty, closed) or directory in g_get_tmp_dir()
 * from tmpl ("wisp-html-XXXXXX.json", as g_file_open_tmp and
 * g_dir_make_tmp take it) for the run's own use outside wisp_afile (--html's
 * JSON, wisp search's points without -o), and registers it so that the
 * signal handlers and wisp_output_remove_temps remove it too (a directory
 * with the files in it), in this process only, never in a forked worker.
 * The cleanup signals wait while it is made and registered.  One file and
 * one directory at a time; a second replaces the first in the register.
 * Returns the path (g_free), NULL with the error.  Call
 * wisp_output_temp_forget(path) once the run removed it itself. */
char *wisp_output_temp_new(const char *tmpl, gboolean is_dir, GError **error);
void wisp_output_temp_forget(const char *path);

/* Opens a temporary file in g_get_tmp_dir() from tmpl (as g_file_open_tmp
 * takes it) and unlinks it at once, so it goes away with the process
 * whatever happens: for spill files a run reads back (the activity
 * timeline, the communication records).  The cleanup signals wait between
 * the creation and the unlink, so a SIGINT or SIGTERM can never leave the
 * named file behind.  Returns the descriptor, or -1 with the error. */
int wisp_output_temp_unlinked(const char *tmpl, GError **error);

/* Monotonic wall clock in seconds, for the speed lines printed after runs. */
double wisp_wall_seconds(void);

/* The median of v[0..n): the middle value, or the mean of the two middle
 * values for an even n (Python's statistics.median); NAN for n = 0.
 * Reorders v.  O(n) expected (wisp_median.c); equal, to the bit, to the
 * median of the sorted values. */
double wisp_median(double *v, size_t n);

/* splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
 * generators", OOPSLA 2014): one step of the generator, i.e. the golden-
 * gamma increment then the bijective finalizer.  Used wherever wisp needs
 * a deterministic hash or draw that does not depend on event order.  O(1). */
static inline uint64_t wisp_mix64(uint64_t x)
{
  x += UINT64_C(0x9e3779b97f4a7c15);
  x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
  return x ^ (x >> 31);
}

/* Whether n is a positive power of two.  O(1). */
static inline gboolean wisp_is_pow2(int n)
{
  return n > 0 && (n & (n - 1)) == 0;
}

G_END_DECLS
#endif
