/* wisp_output.c: the one writer behind every output option (see the rules in
 * wisp_util.h): standard output for "-", direct writes to devices, FIFOs
 * and sockets, temp file + rename for regular files (through symlinks),
 * and a refusal to write over the run's own inputs.
 *
 * The registries (noted inputs, declared outputs, who holds standard
 * output) are process-wide and guarded by one lock; a run notes at most a
 * few thousand inputs (one per rank file), so linear scans are enough. */
#include "config.h"
#include "common/wisp_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- registries ---- */

typedef struct {
  dev_t dev;
  ino_t ino;
  char *path;
} noted_input;

typedef struct {
  char *path, *option;
} declared_output;

G_LOCK_DEFINE_STATIC(registry);
static GArray *inputs;            /* noted_input */
static GArray *outputs;           /* declared_output */
static gboolean outputs_checked;  /* the first open checked the declared outputs */
static int saved_stdout = -1;     /* the real standard output once an output claimed it */
static char *stdout_owner;        /* the option that claimed it */
static gboolean guard_on;         /* wisp_input_note records inputs */

void wisp_output_guard_enable(void)
{
  G_LOCK(registry);
  guard_on = TRUE;
  G_UNLOCK(registry);
}

void wisp_input_note(const char *path)
{
  struct stat st;
  G_LOCK(registry);
  gboolean on = guard_on;
  G_UNLOCK(registry);
  if (!on || path == NULL || stat(path, &st) != 0)
    return;
  G_LOCK(registry);
  if (inputs == NULL)
    inputs = g_array_new(FALSE, FALSE, sizeof(noted_input));
  gboolean seen = FALSE;
  for (guint i = 0; i < inputs->len && !seen; i++) {
    const noted_input *n = &g_array_index(inputs, noted_input, i);
    seen = n->dev == st.st_dev && n->ino == st.st_ino;
  }
  if (!seen) {
    noted_input n = {st.st_dev, st.st_ino, g_strdup(path)};
    g_array_append_val(inputs, n);
  }
  G_UNLOCK(registry);
}

/* The descriptor that is the process's real standard output. */
static int real_stdout_locked(void)
{
  return saved_stdout >= 0 ? saved_stdout : STDOUT_FILENO;
}

/* Follows path through symlinks (at most 40) and returns the final name,
 * which need not exist; relative link texts are taken from the link's own
 * directory.  NULL with errno ELOOP when the chain is longer.  When
 * names_stdout is given, it is set when some name on the chain is one of the
 * kernel's names for standard output, which after wisp_output_declare()
 * point at standard error. */
static char *resolve_links(const char *path, gboolean *names_stdout)
{
  char *p = g_strdup(path);
  for (int hops = 0;; hops++) {
    if (names_stdout && (strcmp(p, "/dev/stdout") == 0 || strcmp(p, "/dev/fd/1") == 0 ||
                         strcmp(p, "/proc/self/fd/1") == 0))
      *names_stdout = TRUE;
    struct stat st;
    if (lstat(p, &st) != 0 || !S_ISLNK(st.st_mode))
      return p;
    if (hops == 40) {
      g_free(p);
      errno = ELOOP;
      return NULL;
    }
    char *link = g_file_read_link(p, NULL);
    if (link == NULL)
      return p;
    if (!g_path_is_absolute(link)) {
      char *dir = g_path_get_dirname(p);
      char *joined = g_build_filename(dir, link, NULL);
      g_free(dir);
      g_free(link);
      link = joined;
    }
    g_free(p);
    p = link;
  }
}

static gboolean is_stdout_locked(const char *path)
{
  if (strcmp(path, "-") == 0)
    return TRUE;
  /* By name only: a path that merely shares standard output's file (say
   * /dev/null while stdout is /dev/null too) stays an ordinary output. */
  gboolean names = FALSE;
  char *t = resolve_links(path, &names);
  g_free(t);
  return names;
}

gboolean wisp_output_is_stdout(const char *path)
{
  G_LOCK(registry);
  gboolean r = path && is_stdout_locked(path);
  G_UNLOCK(registry);
  return r;
}

/* FALSE (and the error) when path names one of the noted inputs. */
static gboolean check_not_input_locked(const char *path, const char *option, GError **error)
{
  struct stat st;
  if (inputs == NULL || strcmp(path, "-") == 0 || stat(path, &st) != 0)
    return TRUE;
  for (guint i = 0; i < inputs->len; i++) {
    const noted_input *n = &g_array_index(inputs, noted_input, i);
    if (n->dev == st.st_dev && n->ino == st.st_ino) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s%s%s: refusing to write over %s, one of this run's inputs; choose another output file",
                  option ? option : "", option ? " " : "", path, n->path);
      return FALSE;
    }
  }
  return TRUE;
}

/* The file a regular output lands in, as one comparable name: symlinks
 * followed, the directory's real path plus the base name (the file need not
 * exist yet).  NULL for devices, FIFOs and sockets, which several outputs
 * may share (two reports to /dev/null).  The caller frees it. */
static char *output_identity(const char *path)
{
  char *target = resolve_links(path, NULL);
  if (target == NULL)
    return NULL;
  struct stat st;
  if (stat(target, &st) == 0 && !S_ISREG(st.st_mode)) {
    g_free(target);
    return NULL;
  }
  char *dir = g_path_get_dirname(target), *base = g_path_get_basename(target);
  char *real = realpath(dir, NULL);
  char *id = g_build_filename(real ? real : dir, base, NULL);
  free(real);
  g_free(dir);
  g_free(base);
  g_free(target);
  return id;
}

/* FALSE (and the error) when path is the same file as an output declared
 * before it: one would silently overwrite the other.  Called with the
 * registry locked.  O(declared outputs). */
static gboolean check_not_declared_locked(const char *path, const char *option, GError **error)
{
  char *id = output_identity(path);
  for (guint i = 0; id && outputs && i < outputs->len; i++) {
    const declared_output *d = &g_array_index(outputs, declared_output, i);
    char *other = output_identity(d->path);
    gboolean same = other && strcmp(other, id) == 0;
    g_free(other);
    if (same) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s %s and %s %s name the same file, so one would overwrite the other; give each output its own "
                  "file", d->option ? d->option : "an output", d->path, option ? option : "an output", path);
      g_free(id);
      return FALSE;
    }
  }
  g_free(id);
  return TRUE;
}

gboolean wisp_output_declare(const char *path, const char *option, GError **error)
{
  if (path == NULL)
    return TRUE;
  gboolean ok = TRUE;
  G_LOCK(registry);
  if (!is_stdout_locked(path) && !check_not_declared_locked(path, option, error)) {
    ok = FALSE;
  } else if (is_stdout_locked(path)) {
    if (stdout_owner) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s and %s both write to standard output; give one of them a file", stdout_owner, option);
      ok = FALSE;
    } else {
      /* From here on the command's terminal text goes to standard error,
       * and only this output reaches the real standard output. */
      fflush(stdout);
      saved_stdout = dup(STDOUT_FILENO);
      if (saved_stdout >= 0 && dup2(STDERR_FILENO, STDOUT_FILENO) >= 0) {
        stdout_owner = g_strdup(option);
      } else {
        int e = errno;
        g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s -: cannot set up standard output: %s", option,
                    g_strerror(e));
        ok = FALSE;
      }
    }
  }
  if (ok) {
    if (outputs == NULL)
      outputs = g_array_new(FALSE, FALSE, sizeof(declared_output));
    declared_output d = {g_strdup(path), g_strdup(option)};
    g_array_append_val(outputs, d);
  }
  G_UNLOCK(registry);
  return ok;
}

void wisp_output_reset(void)
{
  G_LOCK(registry);
  if (inputs) {
    for (guint i = 0; i < inputs->len; i++)
      g_free(g_array_index(inputs, noted_input, i).path);
    g_array_free(inputs, TRUE);
    inputs = NULL;
  }
  if (outputs) {
    for (guint i = 0; i < outputs->len; i++) {
      g_free(g_array_index(outputs, declared_output, i).path);
      g_free(g_array_index(outputs, declared_output, i).option);
    }
    g_array_free(outputs, TRUE);
    outputs = NULL;
  }
  outputs_checked = FALSE;
  guard_on = FALSE;
  if (saved_stdout >= 0) {
    fflush(stdout);
    dup2(saved_stdout, STDOUT_FILENO);
    close(saved_stdout);
    saved_stdout = -1;
  }
  g_clear_pointer(&stdout_owner, g_free);
  G_UNLOCK(registry);
}

/* Checks the declared outputs once per run; called with the registry
 * locked. */
static gboolean check_declared_locked(GError **error)
{
  if (outputs_checked || outputs == NULL)
    return TRUE;
  outputs_checked = TRUE;
  for (guint i = 0; i < outputs->len; i++) {
    const declared_output *d = &g_array_index(outputs, declared_output, i);
    if (!check_not_input_locked(d->path, d->option, error)) {
      outputs_checked = FALSE; /* a later open reports it again */
      return FALSE;
    }
  }
  return TRUE;
}

gboolean wisp_output_check(GError **error)
{
  G_LOCK(registry);
  gboolean ok = check_declared_locked(error);
  G_UNLOCK(registry);
  return ok;
}

/* ---- temporary files removed on SIGINT, SIGTERM, SIGHUP ----
 *
 * A fixed table of the run's open temporary files (each its own copy of
 * the name), filled and emptied with atomic compare-and-swap so that the
 * signal handler, which may run at any instruction, only ever sees whole
 * pointers.  The handler calls nothing but unlink(), signal() and raise(),
 * all async-signal-safe.  A run with more than TEMP_SLOTS outputs open at
 * once leaves the extra ones unregistered (never more than a handful are:
 * each command writes its outputs one after another).  A name is freed
 * only after it left the table; the handler runs on the thread that got the
 * signal, so a free racing with it on another thread is the only hazard,
 * and the registrations happen before the work that takes the time. */
#define TEMP_SLOTS 64
static gpointer temp_slots[TEMP_SLOTS];

static char *temp_register(const char *path)
{
  char *copy = g_strdup(path);
  for (int i = 0; i < TEMP_SLOTS; i++)
    if (g_atomic_pointer_compare_and_exchange(&temp_slots[i], NULL, copy))
      return copy;
  g_free(copy);
  return NULL;
}

static void temp_unregister(char *copy)
{
  if (copy == NULL)
    return;
  for (int i = 0; i < TEMP_SLOTS; i++)
    if (g_atomic_pointer_compare_and_exchange(&temp_slots[i], copy, NULL))
      break;
  g_free(copy);
}

static void remove_own_temps(void);

void wisp_output_remove_temps(void)
{
  for (int i = 0; i < TEMP_SLOTS; i++) {
    const char *p = g_atomic_pointer_get(&temp_slots[i]);
    if (p)
      unlink(p);
  }
  remove_own_temps();
}

/* ---- the run's own temporaries: a file and a directory it made itself ----
 *
 * --html's JSON file (cli/cmd_report.c) and wisp search's points directory
 * are not written through wisp_afile, so the table above does not hold
 * them.  One file and one directory at a time, each with the process that
 * registered it: only that process removes them, so a forked sweep or
 * search worker that dies leaves its parent's alone.  The directory is
 * emptied through a descriptor opened when it was registered, with
 * getdents64 and unlinkat, then removed with rmdir: system calls only, so
 * async-signal-safe; it holds only files (the points), no subdirectory.
 * Each is made and registered with the cleanup signals blocked, on the
 * main thread before the work that takes the time; the owner is set after
 * the name and cleared before it, so a handler never acts on half a
 * registration.  O(entries) at removal. */
static char *own_file, *own_dir;
static int own_dir_fd = -1;
static volatile pid_t own_file_pid, own_dir_pid;

/* Blocks the cleanup signals (SIGINT, SIGTERM, SIGHUP) on this thread, the
 * old mask in *old: a file created and registered in between is never
 * left behind by a signal that arrived between the two. */
static void block_cleanup_signals(sigset_t *old)
{
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &block, old);
}

static void temp_add(const char *path, gboolean is_dir)
{
  if (!is_dir) {
    own_file_pid = 0;
    g_free(own_file);
    own_file = g_strdup(path);
    own_file_pid = getpid();
    return;
  }
  own_dir_pid = 0;
  if (own_dir_fd >= 0)
    close(own_dir_fd);
  g_free(own_dir);
  own_dir = g_strdup(path);
  own_dir_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  own_dir_pid = getpid();
}

char *wisp_output_temp_new(const char *tmpl, gboolean is_dir, GError **error)
{
  char *path = NULL;
  sigset_t old;
  block_cleanup_signals(&old);
  if (is_dir) {
    path = g_dir_make_tmp(tmpl, error);
  } else {
    int fd = g_file_open_tmp(tmpl, &path, error);
    if (fd >= 0)
      close(fd);
  }
  if (path)
    temp_add(path, is_dir);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return path;
}

int wisp_output_temp_unlinked(const char *tmpl, GError **error)
{
  char *path = NULL;
  sigset_t old;
  block_cleanup_signals(&old);
  int fd = g_file_open_tmp(tmpl, &path, error);
  if (fd >= 0)
    unlink(path);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  g_free(path);
  return fd;
}

void wisp_output_temp_forget(const char *path)
{
  if (path && own_file && strcmp(path, own_file) == 0) {
    own_file_pid = 0;
    g_clear_pointer(&own_file, g_free);
  }
  if (path && own_dir && strcmp(path, own_dir) == 0) {
    own_dir_pid = 0;
    if (own_dir_fd >= 0)
      close(own_dir_fd);
    own_dir_fd = -1;
    g_clear_pointer(&own_dir, g_free);
  }
}

/* Unlinks every entry of the registered directory, then the directory.
 * A worker that has not died yet may rename a point file in after a pass,
 * so the passes repeat until rmdir succeeds (at most 64); once the
 * directory is gone no file can be made in it. */
static void remove_own_dir(void)
{
  static union {
    struct dirent64 d;
    char bytes[8192];
  } buf;
  for (int pass = 0; pass < 64; pass++) {
    if (lseek(own_dir_fd, 0, SEEK_SET) < 0)
      return;
    ssize_t n;
    while ((n = getdents64(own_dir_fd, buf.bytes, sizeof buf.bytes)) > 0) {
      for (ssize_t off = 0; off < n;) {
        const struct dirent64 *d = (const struct dirent64 *)(void *)(buf.bytes + off);
        const char *name = d->d_name;
        gboolean dots = name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
        if (!dots)
          unlinkat(own_dir_fd, name, 0);
        off += d->d_reclen;
      }
    }
    if (rmdir(own_dir) == 0 || errno != ENOTEMPTY)
      return;
  }
}

static void remove_own_temps(void)
{
  pid_t me = getpid();
  if (own_file_pid == me)
    unlink(own_file);
  if (own_dir_pid == me && own_dir_fd >= 0)
    remove_own_dir();
}

static void on_fatal_signal(int sig)
{
  wisp_output_remove_temps();
  signal(sig, SIG_DFL);
  raise(sig); /* the default action: the shell sees the signal (exit 130 for SIGINT) */
}

void wisp_output_cleanup_on_signals(void)
{
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
  for (size_t i = 0; i < G_N_ELEMENTS(sigs); i++) {
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    /* A signal the caller ignores (nohup) stays ignored. */
    if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
      sigaction(sigs[i], &sa, NULL);
  }
}

/* ---- the writer ---- */

typedef enum {
  AFILE_RENAME,   /* temp file in the target's directory, renamed at commit */
  AFILE_DIRECT,   /* a device, FIFO or socket, or standard output */
} afile_mode;

struct wisp_afile {
  char *path;     /* as the user gave it, for messages */
  char *target;   /* AFILE_RENAME: the final name after symlinks */
  char *tmp;
  mode_t mode;    /* AFILE_RENAME: permission bits of the result */
  gboolean keep_owner; /* AFILE_RENAME over an existing file, run as root: give it back its owner */
  uid_t uid;
  gid_t gid;
  afile_mode kind;
  FILE *stream;
  char *registered; /* the temp name in the signal table (temp_register) */
};

static void afile_free(wisp_afile *f)
{
  temp_unregister(f->registered);
  g_free(f->path);
  g_free(f->target);
  g_free(f->tmp);
  g_free(f);
}

/* Opens path according to the rules in wisp_util.h; called with the
 * registry locked. */
static wisp_afile *afile_open_locked(const char *path, GError **error)
{
  if (!check_declared_locked(error) || !check_not_input_locked(path, NULL, error))
    return NULL;
  wisp_afile *f = g_new0(wisp_afile, 1);
  f->path = g_strdup(path);
  if (is_stdout_locked(path)) {
    fflush(stdout);
    int fd = dup(real_stdout_locked());
    if (fd < 0 || (f->stream = fdopen(fd, "w")) == NULL) {
      int e = errno;
      if (fd >= 0)
        close(fd);
      g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot write to standard output: %s", path, g_strerror(e));
      afile_free(f);
      return NULL;
    }
    f->kind = AFILE_DIRECT;
    return f;
  }
  f->target = resolve_links(path, NULL);
  if (f->target == NULL) {
    int e = errno;
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot follow its symlinks: %s", path, g_strerror(e));
    afile_free(f);
    return NULL;
  }
  struct stat st;
  gboolean exists = stat(f->target, &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: is a directory; give a file name", path);
      afile_free(f);
      return NULL;
    }
    /* A device, FIFO or socket is written in place, never replaced.  Opening
     * a FIFO waits for its reader, as a shell redirection does. */
    int fd = open(f->target, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0 || (f->stream = fdopen(fd, "w")) == NULL) {
      int e = errno;
      if (fd >= 0)
        close(fd);
      g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot open for writing: %s%s", path, g_strerror(e),
                  S_ISSOCK(st.st_mode) ? " (it is a socket, which wisp cannot write by name)" : "");
      afile_free(f);
      return NULL;
    }
    f->kind = AFILE_DIRECT;
    return f;
  }
  f->kind = AFILE_RENAME;
  f->mode = exists ? (st.st_mode & 07777) : 0644;
  if (exists && geteuid() == 0) {
    f->keep_owner = TRUE;
    f->uid = st.st_uid;
    f->gid = st.st_gid;
  }
  f->tmp = g_strdup_printf("%s.tmp.XXXXXX", f->target);
  /* The cleanup signals wait while the file is created and registered: a
   * signal in between would leave it behind. */
  sigset_t old;
  block_cleanup_signals(&old);
  int fd = g_mkstemp(f->tmp);
  if (fd >= 0)
    f->registered = temp_register(f->tmp);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (fd < 0) {
    int e = errno;
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot create a temporary file next to it: %s", path,
                g_strerror(e));
    afile_free(f);
    return NULL;
  }
  f->stream = fdopen(fd, "w");
  g_assert(f->stream != NULL);
  return f;
}

wisp_afile *wisp_afile_open(const char *path, GError **error)
{
  G_LOCK(registry);
  wisp_afile *f = afile_open_locked(path, error);
  G_UNLOCK(registry);
  return f;
}

FILE *wisp_afile_stream(wisp_afile *f)
{
  return f->stream;
}

void wisp_afile_abort(wisp_afile *f)
{
  if (f == NULL)
    return;
  if (f->stream)
    fclose(f->stream);
  if (f->tmp)
    unlink(f->tmp);
  afile_free(f);
}

gboolean wisp_afile_commit(wisp_afile *f, GError **error)
{
  gboolean ok = TRUE;
  int e = 0;
  if (fflush(f->stream) != 0 || ferror(f->stream))
    ok = FALSE, e = errno ? errno : EIO;
  if (f->kind == AFILE_RENAME) {
    if (ok && fsync(fileno(f->stream)) != 0 && errno != EINVAL)
      ok = FALSE, e = errno;
    /* mkstemp created the file 0600: give it the replaced file's bits, or
     * the usual 0644. */
    if (ok && f->keep_owner)
      (void)fchown(fileno(f->stream), f->uid, f->gid); /* before fchmod, which it may clear set-id bits of */
    if (ok)
      (void)fchmod(fileno(f->stream), f->mode);
  }
  if (fclose(f->stream) != 0 && ok)
    ok = FALSE, e = errno;
  f->stream = NULL;
  if (f->kind == AFILE_RENAME && ok && rename(f->tmp, f->target) != 0)
    ok = FALSE, e = errno;
  if (!ok) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot write: %s", f->path, g_strerror(e));
    if (f->tmp)
      unlink(f->tmp);
  }
  afile_free(f);
  return ok;
}

gboolean wisp_write_file_atomic(const char *path, const char *data, size_t len, GError **error)
{
  wisp_afile *f = wisp_afile_open(path, error);
  if (f == NULL)
    return FALSE;
  if (len > 0 && fwrite(data, 1, len, f->stream) != len) {
    int e = errno;
    wisp_afile_abort(f);
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot write: %s", path, g_strerror(e));
    return FALSE;
  }
  return wisp_afile_commit(f, error);
}
