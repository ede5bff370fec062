/* wisp_memory.h: how much memory this process may use, and the message
 * when a piece of work the user sized (ranks, a trace) does not fit.
 * Prefix wisp_memory_.
 *
 * Two layers.  Before user-sized work starts, wisp_memory_check compares a
 * lower-bound estimate with the limit (the smaller of the address-space
 * and data-segment limits, `ulimit -v` / `ulimit -d`, and the machine's RAM
 * plus swap), so a run that cannot fit fails at once with the figure
 * instead of thrashing or dying later.  While it runs, the `wisp` command
 * turns a failed allocation (GLib's g_malloc aborts the process) into the
 * same kind of message naming the work set with wisp_memory_set_context
 * (cli/wisp.c, wisp_memory_failure_message).  Estimates are lower bounds:
 * a run that passes the check may still run out, never the reverse.
 */
#ifndef WISP_MEMORY_H
#define WISP_MEMORY_H

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

/* A lower bound of what the replay keeps per simulated rank (engine, network
 * and replay state), measured with examples/make_dp: maximum RSS grew by
 * 7.4 MB from 2048 to 8192 ranks, 1.2 KiB a rank; rounded down. */
#define WISP_MEMORY_PER_RANK_BYTES 1024u

/* The bytes this process may allocate, and in *what (static text) what
 * sets it: "the address-space limit (ulimit -v)", "the data-segment limit
 * (ulimit -d)" or "the machine's memory and swap".  UINT64_MAX when no
 * bound is known.  O(1): two getrlimit calls and one sysinfo. */
uint64_t wisp_memory_limit(const char **what);

/* TRUE when `need` bytes fit under wisp_memory_limit; otherwise FALSE with
 * "not enough memory for WORK (needs at least NEED; LIMIT is L): ..." in
 * *error (WISP_ERROR_LIMIT).  `work` names what the user asked for, e.g.
 * "8388608 ranks".  O(1). */
gboolean wisp_memory_check(uint64_t need, const char *work, GError **error);

/* Names the user-sized work now running ("8192 ranks") for the message of
 * a failed allocation; copied (at most 191 bytes) into a static buffer that
 * the failure path reads without allocating.  NULL clears it.  Not thread
 * safe: called by the thread that starts the work. */
void wisp_memory_set_context(const char *work);

/* Writes into buf (size n) the one-line message for a failed allocation of
 * `failed` bytes: the work of wisp_memory_set_context, the memory in use
 * (from /proc/self/statm), the limit and what to do.  Allocates nothing
 * (safe when malloc has just failed).  Returns buf. */
char *wisp_memory_failure_message(uint64_t failed, char *buf, size_t n);

/* A hook for the message of a failed allocation: the process that runs
 * one point of a sweep sets it, so that the point becomes an error row
 * instead of ending the sweep (studies/study_points.c).  The hook is called
 * by the `wisp` command's allocation-failure handler, just before the
 * process ends, with the message of wisp_memory_failure_message; it must
 * not allocate (memory has just run out, and it may run in a signal
 * handler: write(2) only) and returns TRUE when it delivered the message.
 * NULL clears it.  One hook per process, set by the thread that runs the
 * work. */
typedef gboolean (*wisp_memory_failure_hook)(const char *message, void *ctx);
void wisp_memory_set_failure_hook(wisp_memory_failure_hook fn, void *ctx);

/* Passes message to the hook; FALSE when none is set or it failed (the
 * caller then prints the message itself).  Allocates nothing. */
gboolean wisp_memory_report_failure(const char *message);

/* "1.5 GiB", "576 MiB", "12 KiB", "100 B" into buf (32 bytes). */
char *wisp_memory_size_string(uint64_t bytes, char buf[32]);

G_END_DECLS
#endif
