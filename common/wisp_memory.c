/* wisp_memory.c: memory limits and the messages for work that does not fit
 * (see wisp_memory.h).  The failure path allocates nothing and uses only
 * open, read and snprintf. */
#include "config.h"
#include "common/wisp_memory.h"
#include "common/wisp_util.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <unistd.h>

static char memory_context[192];
static wisp_memory_failure_hook failure_hook;
static void *failure_hook_ctx;

uint64_t wisp_memory_limit(const char **what)
{
  uint64_t limit = UINT64_MAX;
  const char *by = "no known limit";
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (uint64_t)rl.rlim_cur < limit) {
    limit = (uint64_t)rl.rlim_cur;
    by = "the address-space limit (ulimit -v)";
  }
  if (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (uint64_t)rl.rlim_cur < limit) {
    limit = (uint64_t)rl.rlim_cur;
    by = "the data-segment limit (ulimit -d)";
  }
  struct sysinfo si;
  if (sysinfo(&si) == 0 && si.mem_unit > 0) {
    uint64_t ram = ((uint64_t)si.totalram + (uint64_t)si.totalswap) * si.mem_unit;
    if (ram > 0 && ram < limit) {
      limit = ram;
      by = "the machine's memory and swap";
    }
  }
  if (what)
    *what = by;
  return limit;
}

char *wisp_memory_size_string(uint64_t bytes, char buf[32])
{
  static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  double v = (double)bytes;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    u++;
  }
  snprintf(buf, 32, u == 0 ? "%.0f %s" : v < 10 ? "%.1f %s" : "%.0f %s", v, unit[u]);
  return buf;
}

gboolean wisp_memory_check(uint64_t need, const char *work, GError **error)
{
  const char *by;
  uint64_t limit = wisp_memory_limit(&by);
  if (need <= limit)
    return TRUE;
  char a[32], b[32];
  g_set_error(error, WISP_ERROR, WISP_ERROR_LIMIT, "not enough memory for %s: needs at least %s, and %s is %s; run it on "
              "a machine with more memory, raise the limit, or make the run smaller (a smaller --scale, fewer ranks)",
              work, wisp_memory_size_string(need, a), by, wisp_memory_size_string(limit, b));
  return FALSE;
}

void wisp_memory_set_context(const char *work)
{
  if (work == NULL)
    memory_context[0] = '\0';
  else
    g_strlcpy(memory_context, work, sizeof memory_context);
}

/* The process's virtual size from /proc/self/statm (first field, pages);
 * 0 when unknown.  No allocation. */
static uint64_t in_use_bytes(void)
{
  char text[128];
  int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0)
    return 0;
  text[n] = '\0';
  long page = sysconf(_SC_PAGESIZE);
  return strtoull(text, NULL, 10) * (uint64_t)(page > 0 ? page : 4096);
}

char *wisp_memory_failure_message(uint64_t failed, char *buf, size_t n)
{
  const char *by;
  uint64_t limit = wisp_memory_limit(&by), used = in_use_bytes();
  char f[32], u[32], l[32], need[32], how[96];
  if (failed > 0)
    snprintf(how, sizeof how, "an allocation of %s failed with %s in use", wisp_memory_size_string(failed, f),
             wisp_memory_size_string(used, u));
  else
    snprintf(how, sizeof how, "the address space ran out with %s in use", wisp_memory_size_string(used, u));
  snprintf(buf, n, "not enough memory for %s: needs more than %s (%s), and %s is %s; run it on a machine with more "
           "memory, raise the limit, or make the run smaller (a smaller --scale, fewer ranks or steps)",
           memory_context[0] ? memory_context : "this run", wisp_memory_size_string(used + failed, need), how, by,
           limit == UINT64_MAX ? "unknown" : wisp_memory_size_string(limit, l));
  return buf;
}

void wisp_memory_set_failure_hook(wisp_memory_failure_hook fn, void *ctx)
{
  failure_hook = fn;
  failure_hook_ctx = ctx;
}

gboolean wisp_memory_report_failure(const char *message)
{
  return failure_hook != NULL && failure_hook(message, failure_hook_ctx);
}
