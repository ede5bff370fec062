/* test_output_cli.c: every output option goes through one writer
 * (common/wisp_output.c), driven through the `wisp` binary ($WISP_BIN) on
 * the bundled example workload (examples/make_example, 16 ranks) and
 * examples/cluster-2node.yaml.  One test per rule of issue 17 item 15:
 *   "-" is standard output (reports can be piped), devices and FIFOs are
 *   written in place and a write error fails the run, a symlink is followed
 *   and kept, and an output that is one of the run's inputs is refused
 *   before anything is written.
 * The checks hold for root (as CI runs) and for other users: nothing here
 * depends on permission bits being enforced.
 */
#include "config.h"
#include <cjson/cJSON.h>

#include "regress/test_util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

typedef test_example_env env;

static int wisp_in(const char *cwd, const char *const *args, char **out, char **err)
{
  return test_wisp_run_in(cwd, args, out, err);
}

static gboolean setup(env *v)
{
  return test_example_setup(v, "wisp-out-XXXXXX");
}

static void teardown(env *v)
{
  test_example_teardown(v);
}

/* TRUE when text is one simulate report (schema_version 1, 16 ranks). */
static gboolean is_report(const char *text)
{
  cJSON *j = text ? cJSON_Parse(text) : NULL;
  const cJSON *sv = cJSON_GetObjectItemCaseSensitive(j, "schema_version");
  const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(j, "ranks");
  gboolean ok = cJSON_IsNumber(sv) && sv->valueint == 1 && cJSON_GetArraySize(ranks) == 16;
  cJSON_Delete(j);
  return ok;
}

/* `--json -`: the report alone reaches standard output (it parses as one
 * JSON document, as `| jq` needs), the terminal table moves to standard
 * error, and no file named "-" appears.  Two outputs on standard output are
 * a usage error. */
static void test_dash_is_stdout(void)
{
  env v;
  if (!setup(&v))
    return;
  char *out = NULL, *err = NULL;
  g_assert_cmpint(wisp_in(v.dir, (const char *[]){"simulate", v.example, "--network", v.cluster, "--json", "-", NULL},
                          &out, &err), ==, 0);
  g_assert_true(is_report(out));
  g_assert_nonnull(strstr(err, "step time: "));
  char *dash = g_build_filename(v.dir, "-", NULL);
  g_assert_false(g_file_test(dash, G_FILE_TEST_EXISTS));
  g_free(out), g_free(err);

  /* The same for other commands' outputs: topo --dot -. */
  g_assert_cmpint(wisp_in(v.dir, (const char *[]){"topo", v.cluster, "--dot", "-", NULL}, &out, &err), ==, 0);
  g_assert_true(g_str_has_prefix(out, "digraph") || g_str_has_prefix(out, "graph"));
  g_assert_false(g_file_test(dash, G_FILE_TEST_EXISTS));
  g_free(out), g_free(err);

  g_assert_cmpint(wisp_in(v.dir, (const char *[]){"simulate", v.example, "--network", v.cluster, "--json", "-",
                                                  "--svg", "-", NULL}, &out, &err), ==, 2);
  g_assert_cmpstr(err, ==, "wisp simulate: --json and --svg both write to standard output; give one of them a file\n");
  g_free(out), g_free(err), g_free(dash);
  teardown(&v);
}

/* A device is written in place: /dev/full fails the run with ENOSPC and
 * stays a character device (the old writer renamed a JSON file over it when
 * run as root). */
static void test_device(void)
{
  struct stat st;
  if (stat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode)) {
    g_test_skip("/dev/full is not a character device here");
    return;
  }
  env v;
  if (!setup(&v))
    return;
  char *out = NULL, *err = NULL;
  g_assert_cmpint(wisp_in(v.dir, (const char *[]){"simulate", v.example, "--network", v.cluster, "--json",
                                                  "/dev/full", NULL}, &out, &err), ==, 1);
  g_assert_nonnull(strstr(err, "wisp: error: /dev/full: cannot write: No space left on device\n"));
  struct stat after;
  g_assert_cmpint(stat("/dev/full", &after), ==, 0);
  g_assert_true(S_ISCHR(after.st_mode));
  g_assert_cmpuint(after.st_rdev, ==, st.st_rdev);
  g_free(out), g_free(err);

  /* A small output (the SVG chart) fails the same way at its commit. */
  g_assert_cmpint(wisp_in(v.dir, (const char *[]){"simulate", v.example, "--network", v.cluster, "--svg",
                                                  "/dev/full", NULL}, &out, &err), ==, 1);
  g_assert_nonnull(strstr(err, "wisp: error: /dev/full: cannot write: No space left on device\n"));
  g_assert_cmpint(stat("/dev/full", &after), ==, 0);
  g_assert_true(S_ISCHR(after.st_mode));
  g_free(out), g_free(err);

  /* /dev/null takes the timeline in place and stays a device, while the
   * report goes to standard output. */
  struct stat null_before;
  g_assert_cmpint(stat("/dev/null", &null_before), ==, 0);
  g_assert_cmpint(wisp_in(v.dir, (const char *[]){"simulate", v.example, "--network", v.cluster, "--timeline",
                                                  "/dev/null", "--json", "-", NULL}, &out, &err), ==, 0);
  g_assert_true(is_report(out));
  g_assert_nonnull(strstr(err, "timeline: /dev/null ("));
  g_assert_cmpint(stat("/dev/null", &after), ==, 0);
  g_assert_true(S_ISCHR(after.st_mode));
  g_assert_cmpuint(after.st_rdev, ==, null_before.st_rdev);
  g_free(out), g_free(err);
  teardown(&v);
}

/* A FIFO is written in place: the reader gets the whole report and the FIFO
 * is still a FIFO afterwards.  The reader polls a non-blocking descriptor
 * until wisp has exited, so a wisp that never opens the FIFO fails the test
 * instead of hanging it. */
static void test_fifo(void)
{
  env v;
  if (!setup(&v))
    return;
  char *fifo = g_build_filename(v.dir, "report.fifo", NULL);
  g_assert_cmpint(mkfifo(fifo, 0644), ==, 0);
  int rd = open(fifo, O_RDONLY | O_NONBLOCK);
  g_assert_cmpint(rd, >=, 0);
  const char *argv[] = {g_getenv("WISP_BIN"), "simulate", v.example, "--network", v.cluster, "--json", fifo, NULL};
  GPid pid;
  GError *error = NULL;
  g_assert_true(g_spawn_async(NULL, (char **)argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                              NULL, NULL, &pid, &error));
  g_assert_no_error(error);
  GString *got = g_string_new(NULL);
  int status = -1;
  gboolean exited = FALSE;
  for (int spins = 0; spins < 60000; spins++) { /* at most about 60 s */
    char buf[65536];
    ssize_t n = read(rd, buf, sizeof buf);
    if (n > 0) {
      g_string_append_len(got, buf, n);
      continue;
    }
    if (exited)
      break; /* drained after the writer is gone */
    exited = waitpid(pid, &status, WNOHANG) == pid;
    if (!exited)
      g_usleep(1000);
  }
  if (!exited) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  close(rd);
  g_spawn_close_pid(pid);
  g_assert_true(exited);
  g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  g_assert_true(is_report(got->str));
  struct stat st;
  g_assert_cmpint(lstat(fifo, &st), ==, 0);
  g_assert_true(S_ISFIFO(st.st_mode));
  g_string_free(got, TRUE);
  g_free(fifo);
  teardown(&v);
}

/* A socket cannot be written by name: the run fails, says so, and the
 * socket node is left alone. */
static void test_socket(void)
{
  env v;
  if (!setup(&v))
    return;
  char *sock = g_build_filename(v.dir, "report.sock", NULL);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  if (strlen(sock) >= sizeof a.sun_path) {
    g_test_skip("temporary path too long for a Unix socket");
    g_free(sock);
    teardown(&v);
    return;
  }
  strcpy(a.sun_path, sock);
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  g_assert_cmpint(fd, >=, 0);
  g_assert_cmpint(bind(fd, (struct sockaddr *)&a, sizeof a), ==, 0);
  char *out = NULL, *err = NULL;
  g_assert_cmpint(wisp_in(v.dir, (const char *[]){"simulate", v.example, "--network", v.cluster, "--json", sock, NULL},
                          &out, &err), ==, 1);
  char *want = g_strdup_printf("wisp: error: %s: cannot open for writing: No such device or address (it is a socket, "
                               "which wisp cannot write by name)\n", sock);
  g_assert_nonnull(strstr(err, want));
  struct stat st;
  g_assert_cmpint(lstat(sock, &st), ==, 0);
  g_assert_true(S_ISSOCK(st.st_mode));
  close(fd);
  g_free(want), g_free(out), g_free(err), g_free(sock);
  teardown(&v);
}

/* A symlink to standard output writes the report to standard output and
 * stays a symlink. */
static void test_symlink_to_stdout(void)
{
  env v;
  if (!setup(&v))
    return;
  char *link = g_build_filename(v.dir, "out.json", NULL);
  g_assert_cmpint(symlink("/dev/stdout", link), ==, 0);
  char *out = NULL, *err = NULL;
  g_assert_cmpint(wisp_in(v.dir, (const char *[]){"simulate", v.example, "--network", v.cluster, "--json", link, NULL},
                          &out, &err), ==, 0);
  g_assert_true(is_report(out));
  g_assert_true(g_file_test(link, G_FILE_TEST_IS_SYMLINK));
  char *target = g_file_read_link(link, NULL);
  g_assert_cmpstr(target, ==, "/dev/stdout");
  g_free(target), g_free(out), g_free(err), g_free(link);
  teardown(&v);
}

/* A symlink to a regular file: the target gets the report (atomically, no
 * temporary left), keeps its permission bits, and the link is kept. */
static void test_symlink_to_file(void)
{
  env v;
  if (!setup(&v))
    return;
  char *sub = g_build_filename(v.dir, "reports", NULL);
  g_assert_cmpint(g_mkdir(sub, 0755), ==, 0);
  char *target = g_build_filename(sub, "target.json", NULL), *link = g_build_filename(v.dir, "link.json", NULL);
  g_assert_true(g_file_set_contents(target, "{}\n", -1, NULL));
  g_assert_cmpint(chmod(target, 0640), ==, 0);
  /* As root, the replaced file also keeps its owner (here nobody, 65534). */
  gboolean root = geteuid() == 0;
  if (root)
    g_assert_cmpint(chown(target, 65534, 65534), ==, 0);
  g_assert_cmpint(symlink("reports/target.json", link), ==, 0); /* relative, as ln -s makes them */
  g_assert_cmpint(wisp_in(v.dir, (const char *[]){"simulate", v.example, "--network", v.cluster, "--json", link, NULL},
                          NULL, NULL), ==, 0);
  g_assert_true(g_file_test(link, G_FILE_TEST_IS_SYMLINK));
  char *text = NULL;
  g_assert_true(g_file_get_contents(target, &text, NULL, NULL));
  g_assert_true(is_report(text));
  struct stat st;
  g_assert_cmpint(stat(target, &st), ==, 0);
  g_assert_cmpint(st.st_mode & 0777, ==, 0640);
  if (root) {
    g_assert_cmpuint(st.st_uid, ==, 65534);
    g_assert_cmpuint(st.st_gid, ==, 65534);
  }
  g_assert_cmpuint(test_dir_entries(sub), ==, 1); /* no temporary left beside the target */
  g_free(text), g_free(target), g_free(link), g_free(sub);
  teardown(&v);
}

/* An output that is one of the run's inputs is refused before anything is
 * written: a rank's .et file (named directly or through a symlink), the
 * network config, comm_group.json.  The input keeps its bytes, the other
 * outputs of the run are not created, and no summary is printed. */
static void test_input_refused(void)
{
  env v;
  if (!setup(&v))
    return;
  char *et = g_build_filename(v.dir, "llm.3.et", NULL), *link = g_build_filename(v.dir, "alias.json", NULL);
  char *cfg = g_build_filename(v.dir, "net.yaml", NULL), *tl = g_build_filename(v.dir, "tl.json", NULL);
  char *cg = g_build_filename(v.dir, "comm_group.json", NULL);
  char *cfg_text = NULL, *et_before = NULL, *et_after = NULL;
  gsize et_len = 0, et_len2 = 0;
  g_assert_true(g_file_get_contents(v.cluster, &cfg_text, NULL, NULL));
  g_assert_true(g_file_set_contents(cfg, cfg_text, -1, NULL));
  g_assert_true(g_file_get_contents(et, &et_before, &et_len, NULL));
  g_assert_cmpint(symlink("llm.3.et", link), ==, 0);
  /* The last case has no other output: the refusal still comes before the
   * replay's summary. */
  const char *targets[] = {et, link, cfg, cg, et};
  for (guint i = 0; i < G_N_ELEMENTS(targets); i++) {
    char *out = NULL, *err = NULL;
    gboolean with_tl = i + 1 < G_N_ELEMENTS(targets);
    g_assert_cmpint(wisp_in(v.dir, (const char *[]){"simulate", v.example, "--network", cfg, "--json", targets[i],
                                                    with_tl ? "--timeline" : NULL, tl, NULL}, &out, &err), ==, 1);
    /* The input is named as the reader opened it: the symlink's target. */
    const char *input = i == 1 ? et : targets[i];
    char *want = g_strdup_printf("wisp: error: --json %s: refusing to write over %s, one of this run's inputs; choose "
                                 "another output file\n", targets[i], input);
    g_assert_nonnull(strstr(err, want));
    g_assert_null(strstr(out, "step time"));
    g_assert_false(g_file_test(tl, G_FILE_TEST_EXISTS));
    g_free(want), g_free(out), g_free(err);
  }
  g_assert_true(g_file_get_contents(et, &et_after, &et_len2, NULL));
  g_assert_cmpuint(et_len2, ==, et_len);
  g_assert_cmpmem(et_after, et_len2, et_before, et_len);
  g_assert_true(g_file_test(link, G_FILE_TEST_IS_SYMLINK));
  char *cfg_after = NULL;
  g_assert_true(g_file_get_contents(cfg, &cfg_after, NULL, NULL));
  g_assert_cmpstr(cfg_after, ==, cfg_text);

  /* The same rule in another command: utility --json onto its cluster config. */
  char *out = NULL, *err = NULL;
  g_assert_cmpint(wisp_in(v.dir, (const char *[]){"utility", v.example, "--cluster", cfg, "--json", cfg, NULL}, &out,
                          &err), ==, 1);
  char *want = g_strdup_printf("wisp: error: --json %s: refusing to write over %s, one of this run's inputs; choose "
                               "another output file\n", cfg, cfg);
  g_assert_nonnull(strstr(err, want));
  g_assert_cmpstr(out, ==, ""); /* refused before the study ran and printed */
  g_free(cfg_after);
  g_assert_true(g_file_get_contents(cfg, &cfg_after, NULL, NULL));
  g_assert_cmpstr(cfg_after, ==, cfg_text);
  g_free(want), g_free(out), g_free(err), g_free(cfg_after);
  g_free(et_before), g_free(et_after), g_free(cfg_text);
  g_free(et), g_free(link), g_free(cfg), g_free(tl), g_free(cg);
  teardown(&v);
}

/* A plain new file and an existing one: written in place of the old
 * content, new files 0644, no temporary left. */
static void test_regular_file(void)
{
  env v;
  if (!setup(&v))
    return;
  char *sub = g_build_filename(v.dir, "r", NULL);
  g_assert_cmpint(g_mkdir(sub, 0755), ==, 0);
  char *p = g_build_filename(sub, "a.json", NULL);
  for (int pass = 0; pass < 2; pass++) {
    g_assert_cmpint(wisp_in(v.dir, (const char *[]){"simulate", v.example, "--network", v.cluster, "--json", p, NULL},
                            NULL, NULL), ==, 0);
    char *text = NULL;
    g_assert_true(g_file_get_contents(p, &text, NULL, NULL));
    g_assert_true(is_report(text));
    g_free(text);
    struct stat st;
    g_assert_cmpint(stat(p, &st), ==, 0);
    g_assert_cmpint(st.st_mode & 0777, ==, 0644);
    g_assert_cmpuint(test_dir_entries(sub), ==, 1);
  }
  g_free(p), g_free(sub);
  teardown(&v);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_message("running as uid %u", (unsigned)getuid());
  g_test_add_func("/output/dash_is_stdout", test_dash_is_stdout);
  g_test_add_func("/output/device", test_device);
  g_test_add_func("/output/fifo", test_fifo);
  g_test_add_func("/output/socket", test_socket);
  g_test_add_func("/output/symlink_to_stdout", test_symlink_to_stdout);
  g_test_add_func("/output/symlink_to_file", test_symlink_to_file);
  g_test_add_func("/output/input_refused", test_input_refused);
  g_test_add_func("/output/regular_file", test_regular_file);
  return g_test_run();
}
