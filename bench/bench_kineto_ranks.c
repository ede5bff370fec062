/* bench_kineto_ranks.c: peak memory and wall time of `wisp convert` and
 * `wisp simulate` on generated multi-rank Kineto trace sets (issue 18
 * part 3: "memory grows with the nodes kept, not with the bytes read";
 * target 64 ranks x 160 MB in <= 1.5 GB).
 *
 * For each rank count in WISP_BENCH_KT_RANKS (default "8 16 32") it writes
 * that many traces of WISP_BENCH_KT_MB MB each (default 20; the issue's
 * target set is WISP_BENCH_KT_RANKS=64 WISP_BENCH_KT_MB=160) with
 * WISP_BENCH_KT_STEPS ProfilerSteps (default 3) into a temporary directory
 * (bench/kineto_gen.h; one process per core), runs
 *   wisp convert DIR -o OUT
 *   wisp simulate DIR --network dgx-h100 --json OUT/sim.json
 * (the wisp binary is ./wisp or $WISP), and prints for each the wall time,
 * the throughput in MB/s of trace read, the peak RSS of the child
 * (wait4's ru_maxrss, the kernel's VmHWM) and the time CCL-Bench's Python
 * converter would take at its 3.2 MB/s measured on the same kind of input
 * (issue 18).  The traces are deleted after each size (set
 * WISP_BENCH_KT_KEEP=1 to keep them).  Free disk space is checked first.
 *
 * Linear scaling shows as a constant s/GB from row to row.
 *
 * `bench_kineto_ranks --generate DIR RANKS MB [STEPS]` only writes the
 * traces (DIR/rank<r>.json).
 */
#include "config.h"

#include "bench/kineto_gen.h"

#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

/* CCL-Bench's converter on the same kind of input (issue 18, part 3). */
#define CCL_BENCH_MB_PER_S 3.2

/* Writes ranks traces of mb MB into dir, `jobs` processes at a time.
 * Returns the total bytes, 0 on failure. */
static uint64_t generate(const char *dir, int ranks, double mb, int steps, int jobs)
{
  if (g_mkdir_with_parents(dir, 0755) != 0) {
    fprintf(stderr, "bench_kineto_ranks: %s: %s\n", dir, g_strerror(errno));
    return 0;
  }
  int next = 0, running = 0;
  gboolean ok = TRUE;
  fflush(stdout); /* a child must not write the parent's buffered output again */
  while (next < ranks || running > 0) {
    if (next < ranks && running < jobs && ok) {
      pid_t p = fork();
      if (p == 0) {
        char *path = g_strdup_printf("%s/rank%d.json", dir, next);
        _exit(kg_write_rank(path, next, ranks, steps, mb) ? 0 : 1);
      }
      if (p < 0) {
        ok = FALSE;
        continue;
      }
      next++;
      running++;
      continue;
    }
    if (next < ranks && !ok)
      next = ranks;
    if (running == 0)
      break;
    int st;
    if (wait(&st) > 0) {
      running--;
      ok = ok && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
  }
  if (!ok) {
    fprintf(stderr, "bench_kineto_ranks: writing the traces in %s failed\n", dir);
    return 0;
  }
  uint64_t total = 0;
  for (int r = 0; r < ranks; r++) {
    char *path = g_strdup_printf("%s/rank%d.json", dir, r);
    GStatBuf sb;
    if (g_stat(path, &sb) == 0)
      total += (uint64_t)sb.st_size;
    g_free(path);
  }
  return total;
}

typedef struct {
  double wall_s, cpu_s;
  long maxrss_kib;
  int status;
} run_result;

/* Runs argv (stdout and stderr to log) and measures it. */
static run_result run(char **argv, const char *log)
{
  run_result r = { 0, 0, 0, -1 };
  fflush(stdout);
  gint64 t0 = g_get_monotonic_time();
  pid_t p = fork();
  if (p == 0) {
    FILE *f = freopen(log, "w", stdout);
    if (!f || dup2(fileno(stdout), 2) < 0)
      _exit(127);
    execv(argv[0], argv);
    _exit(127);
  }
  if (p < 0)
    return r;
  int st;
  struct rusage ru;
  if (wait4(p, &st, 0, &ru) != p)
    return r;
  r.wall_s = (double)(g_get_monotonic_time() - t0) / 1e6;
  r.cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
            (double)ru.ru_stime.tv_usec / 1e6;
  r.maxrss_kib = ru.ru_maxrss;
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

static void rm_rf(const char *path)
{
  char *argv[] = { "/bin/rm", "-rf", (char *)path, NULL };
  pid_t p = fork();
  if (p == 0) {
    execv(argv[0], argv);
    _exit(127);
  }
  int st;
  if (p > 0)
    waitpid(p, &st, 0);
}

static double env_double(const char *name, double def)
{
  const char *s = g_getenv(name);
  return s && *s ? g_ascii_strtod(s, NULL) : def;
}

int main(int argc, char **argv)
{
  if (argc >= 5 && !strcmp(argv[1], "--generate")) {
    int steps = argc >= 6 ? atoi(argv[5]) : 3;
    uint64_t b = generate(argv[2], atoi(argv[3]), g_ascii_strtod(argv[4], NULL), steps > 0 ? steps : 3,
                          (int)g_get_num_processors());
    printf("wrote %s ranks, %.1f MB in %s\n", argv[3], (double)b / 1e6, argv[2]);
    return b ? 0 : 1;
  }
  const char *wisp = g_getenv("WISP") ? g_getenv("WISP") : "./wisp";
  if (!g_file_test(wisp, G_FILE_TEST_IS_EXECUTABLE)) {
    fprintf(stderr, "bench_kineto_ranks: no wisp binary at %s (run from the build directory or set WISP)\n", wisp);
    return 1;
  }
  const char *list = g_getenv("WISP_BENCH_KT_RANKS") ? g_getenv("WISP_BENCH_KT_RANKS") : "8 16 32";
  double mb = env_double("WISP_BENCH_KT_MB", 20);
  int steps = (int)env_double("WISP_BENCH_KT_STEPS", 3);
  gboolean keep = g_getenv("WISP_BENCH_KT_KEEP") != NULL;
  char *base = g_dir_make_tmp("wisp-bench-kt-XXXXXX", NULL);
  if (!base) {
    fprintf(stderr, "bench_kineto_ranks: cannot create a temporary directory\n");
    return 1;
  }
  printf("bench_kineto_ranks: %g MB per rank, %d ProfilerSteps, traces in %s; CCL-Bench's converter: %.1f MB/s\n", mb,
         steps, base, CCL_BENCH_MB_PER_S);
  printf("convert and simulate: wall s, CPU s (user + system), MB/s of trace per wall second and per CPU second, peak "
         "RSS (VmHWM); ccl_bench_s: the input at %.1f MB/s\n", CCL_BENCH_MB_PER_S);
  printf("%5s %8s %6s | %7s %7s %7s %7s %8s | %7s %7s %7s %7s %8s | %11s\n", "ranks", "input_MB", "gen_s", "conv_s",
         "cpu_s", "MB/s", "MB/cpu", "RSS_MB", "sim_s", "cpu_s", "MB/s", "MB/cpu", "RSS_MB", "ccl_bench_s");
  char **counts = g_strsplit_set(list, " ,", -1);
  int rc = 0;
  for (char **c = counts; *c && rc == 0; c++) {
    int ranks = atoi(*c);
    if (ranks <= 0)
      continue;
    struct statvfs vs;
    double need = ranks * mb * 1e6 * 1.1 + 1e9;
    if (statvfs(base, &vs) == 0 && (double)vs.f_bavail * (double)vs.f_frsize < need) {
      fprintf(stderr, "bench_kineto_ranks: %d x %g MB needs %.1f GB free in %s; %.1f GB free\n", ranks, mb, need / 1e9,
              base, (double)vs.f_bavail * (double)vs.f_frsize / 1e9);
      rc = 1;
      break;
    }
    char *dir = g_strdup_printf("%s/r%d", base, ranks), *out = g_strdup_printf("%s/out%d", base, ranks);
    char *json = g_strdup_printf("%s/sim.json", out), *clog = g_strdup_printf("%s/convert%d.log", base, ranks);
    char *slog = g_strdup_printf("%s/simulate%d.log", base, ranks);
    gint64 g0 = g_get_monotonic_time();
    uint64_t bytes = generate(dir, ranks, mb, steps, (int)g_get_num_processors());
    double gen_s = (double)(g_get_monotonic_time() - g0) / 1e6;
    sync(); /* the runs read from the page cache, not behind the writeback */
    if (!bytes) {
      rc = 1;
      break;
    }
    char *cargv[] = { (char *)wisp, "convert", dir, "-o", out, NULL };
    run_result cr = run(cargv, clog);
    char *sargv[] = { (char *)wisp, "simulate", dir, "--network", "dgx-h100", "--json", json, NULL };
    run_result sr = cr.status == 0 ? run(sargv, slog) : (run_result){ 0, 0, 0, -1 };
    double in_mb = (double)bytes / 1e6;
    printf("%5d %8.1f %6.1f | %7.2f %7.2f %7.1f %7.1f %8.1f | %7.2f %7.2f %7.1f %7.1f %8.1f | %11.0f\n", ranks, in_mb,
           gen_s, cr.wall_s, cr.cpu_s, in_mb / cr.wall_s, in_mb / cr.cpu_s, (double)cr.maxrss_kib / 1024.0, sr.wall_s,
           sr.cpu_s, in_mb / sr.wall_s, in_mb / sr.cpu_s, (double)sr.maxrss_kib / 1024.0, in_mb / CCL_BENCH_MB_PER_S);
    fflush(stdout);
    if (cr.status != 0 || sr.status != 0) {
      fprintf(stderr, "bench_kineto_ranks: %s failed (status %d): see %s\n", cr.status ? "convert" : "simulate",
              cr.status ? cr.status : sr.status, cr.status ? clog : slog);
      rc = 1;
      keep = TRUE;
    }
    if (!keep) {
      rm_rf(dir);
      rm_rf(out);
    }
    g_free(dir);
    g_free(out);
    g_free(json);
    g_free(clog);
    g_free(slog);
  }
  g_strfreev(counts);
  if (!keep)
    rm_rf(base);
  g_free(base);
  return rc;
}
