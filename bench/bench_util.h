/* bench_util.h: measurements shared by the benchmarks (header only, so
 * each bench stays one file): resident memory from /proc/self/status and
 * process CPU time, reported beside wall time because the machine may be
 * shared. */
#ifndef WISP_BENCH_UTIL_H
#define WISP_BENCH_UTIL_H

#include <glib.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* A "Vm...:" field of /proc/self/status in KiB ("VmRSS", "VmHWM"), or -1
 * when /proc is unavailable. */
static inline long bench_status_kib(const char *field)
{
  char *text = NULL;
  long kib = -1;
  if (g_file_get_contents("/proc/self/status", &text, NULL, NULL)) {
    char *key = g_strconcat(field, ":", NULL);
    const char *p = strstr(text, key);
    if (p)
      kib = strtol(p + strlen(key), NULL, 10);
    g_free(key);
  }
  g_free(text);
  return kib;
}

/* User + system CPU time of this process, in seconds. */
static inline double bench_cpu_seconds(void)
{
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
         (double)ru.ru_stime.tv_usec / 1e6;
}

#endif
