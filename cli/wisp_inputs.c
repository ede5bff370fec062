/* wisp_inputs.c: several paths, globs and mixed directories resolved into
 * one kind of workload input (wisp_inputs_resolve, see wisp_load.h): each
 * file classified by its name and, for JSON, by sniffing at most its first
 * MiB; files that fit no kind are listed as ignored with the reason.
 * O(entries of the directories given) plus O(1 MiB) per JSON file.
 */
#include "config.h"
#include "cli/wisp_load.h"
#include "frontends/xla.h"
#include "frontends/pyt_et.h"
#include "frontends/nsys.h"

#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* What a JSON file holds, from at most its first MiB (plain or gzip):
 * "kineto" (a "traceEvents" key), "nodes" (a PyTorch execution trace or
 * Chakra JSON) or NULL.  O(1 MiB). */
static const char *sniff_json(const char *path)
{
  gzFile f = gzopen(path, "rb");
  if (f == NULL)
    return NULL;
  enum { CHUNK = 65536, LIMIT = 1 << 20 };
  char *buf = g_malloc(CHUNK + 16);
  char carry[16] = "";
  size_t total = 0;
  const char *kind = NULL;
  gboolean nodes = FALSE;
  int n = 0;
  while (kind == NULL && total < LIMIT && (n = gzread(f, buf + 15, CHUNK)) > 0) {
    /* The last 15 bytes of the previous chunk go first, so a key split
     * across chunks is still found. */
    memcpy(buf, carry, 15);
    buf[15 + n] = '\0';
    for (int k = 0; k < 15; k++)
      if (buf[k] == '\0')
        buf[k] = ' ';
    if (memmem(buf, (size_t)n + 15, "\"traceEvents\"", 13))
      kind = "kineto";
    else if (memmem(buf, (size_t)n + 15, "\"nodes\"", 7))
      nodes = TRUE;
    memcpy(carry, buf + n, 15);
    total += (size_t)n;
  }
  /* A damaged .json.gz goes to the Kineto reader, which names the damage
   * and its offset, rather than being called "not a trace". */
  if (kind == NULL && total < LIMIT && n < 0)
    kind = "kineto";
  gzclose(f);
  g_free(buf);
  return kind ? kind : nodes ? "nodes" : NULL;
}

/* Adds "reason" -> name to the ignored list (names grouped by reason). */
static void ignore(wisp_inputs *in, const char *name, const char *reason)
{
  GPtrArray *names = g_hash_table_lookup(in->ignored, reason);
  if (names == NULL) {
    names = g_ptr_array_new_with_free_func(g_free);
    g_hash_table_insert(in->ignored, g_strdup(reason), names);
    g_ptr_array_add(in->reasons, g_strdup(reason));
  }
  g_ptr_array_add(names, g_strdup(name));
}

/* Classifies one file: "chakra" (a .et rank file), "xla", "kineto", or
 * NULL with *why saying why it is not an input. */
static const char *classify_file(const char *path, const char **why)
{
  char *base = g_path_get_basename(path);
  const char *kind = NULL;
  *why = NULL;
  if (g_str_has_suffix(base, ".et"))
    kind = "chakra";
  else if (fe_nsys_is_export(path))
    kind = "nsys";
  else if (fe_xla_is_xplane_path(base) || fe_xla_is_trace_json_path(base))
    kind = "xla";
  else if (g_str_has_prefix(base, "comm_group") && g_str_has_suffix(base, ".json"))
    *why = "communicator groups (read with the Chakra .et files they describe)";
  else if (g_str_has_suffix(base, ".json") || g_str_has_suffix(base, ".json.gz")) {
    const char *s = sniff_json(path);
    if (s && strcmp(s, "kineto") == 0)
      kind = "kineto";
    else if (s)
      kind = "pytorch_et"; /* a Chakra JSON fails in the reader, naming what to give instead */
    else
      *why = "JSON without \"traceEvents\" (not a Kineto trace)";
  } else
    *why = "not a workload file (Chakra .et, Kineto *.json[.gz], XPlane *.xplane.pb, XProf *.trace.json[.gz], Nsight "
           "Systems *.sqlite)";
  g_free(base);
  return kind;
}

static int cmp_strp(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

void wisp_inputs_clear(wisp_inputs *in)
{
  if (in->files)
    g_ptr_array_free(in->files, TRUE);
  if (in->pet_files)
    g_ptr_array_free(in->pet_files, TRUE);
  if (in->ignored)
    g_hash_table_destroy(in->ignored);
  if (in->reasons)
    g_ptr_array_free(in->reasons, TRUE);
  memset(in, 0, sizeof *in);
}

/* Sets the kind, or fails when the inputs mix kinds. */
static gboolean set_kind(wisp_inputs *in, const char *kind, const char *path, GError **error)
{
  if (in->kind && strcmp(in->kind, kind) != 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s is %s input but an earlier path is %s input; give the inputs of one workload, of one kind",
                path, kind, in->kind);
    return FALSE;
  }
  in->kind = kind;
  return TRUE;
}

/* The error for a path that holds nothing usable: every kind tried. */
static void nothing_usable(const char *path, const wisp_inputs *in, GError **error)
{
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "%s: %sno workload found; tried a Chakra ET prefix or directory (%s.0.et, or DIR/PREFIX.N.et),"
                         " Kineto traces (*.json, *.json.gz with \"traceEvents\"), XPlane profiles (*.xplane.pb[.gz])"
                         " and XProf JSON (*.trace.json[.gz])", path,
                         g_file_test(path, G_FILE_TEST_EXISTS) ? "" : "no such file or directory, and ", path);
  if (in && in->reasons->len == 0)
    g_string_append(s, "; the directory holds no files");
  for (guint r = 0; in && r < in->reasons->len; r++) {
    GPtrArray *names = g_hash_table_lookup(in->ignored, in->reasons->pdata[r]);
    g_string_append_printf(s, "%s %u file(s) ignored: %s (%s%s)", r ? ";" : ";", names->len,
                           (char *)in->reasons->pdata[r], (char *)names->pdata[0], names->len > 1 ? ", ..." : "");
  }
  g_set_error_literal(error, WISP_ERROR, WISP_ERROR_IO, s->str);
  g_string_free(s, TRUE);
}

/* One directory: XLA and Chakra directories go to their readers as they are
 * (the XLA reader walks them, the Chakra reader finds the one .et set);
 * otherwise every file is classified and the Kineto traces are taken. */
static gboolean add_dir(wisp_inputs *in, const char *dir, GError **error)
{
  char *argv[] = {(char *)"wisp", (char *)dir, NULL};
  GDir *d = g_dir_open(dir, 0, error);
  if (d == NULL)
    return FALSE;
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  const char *e;
  while ((e = g_dir_read_name(d)) != NULL)
    g_ptr_array_add(names, g_strdup(e));
  g_dir_close(d);
  g_ptr_array_sort(names, cmp_strp);
  int n_et = 0;
  for (guint i = 0; i < names->len; i++)
    n_et += g_str_has_suffix(names->pdata[i], ".et");
  const char *dir_kind = n_et > 0 ? "chakra" : fe_xla_wants(2, argv) ? "xla" : NULL;
  int taken = 0;
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < names->len; i++) {
    char *p = g_build_filename(dir, (char *)names->pdata[i], NULL);
    if (g_file_test(p, G_FILE_TEST_IS_DIR)) {
      if (dir_kind == NULL || strcmp(dir_kind, "xla") != 0)
        ignore(in, p, "a subdirectory (directories are not searched recursively)");
      g_free(p);
      continue;
    }
    const char *why = NULL, *kind = classify_file(p, &why);
    if (dir_kind && strcmp(dir_kind, "chakra") == 0) {
      if (kind && strcmp(kind, "chakra") != 0)
        ignore(in, p, "a trace beside a Chakra .et set (the .et files are the workload)");
      else if (kind == NULL && !g_str_has_prefix((char *)names->pdata[i], "comm_group"))
        ignore(in, p, why);
    } else if (dir_kind) {
      if (kind == NULL || strcmp(kind, "xla") != 0)
        ignore(in, p, kind ? "a trace beside XLA profiles (the profiles are the workload)" : why);
    } else if (kind && strcmp(kind, "kineto") == 0) {
      ok = set_kind(in, "kineto", dir, error);
      g_ptr_array_add(in->files, g_strdup(p));
      taken++;
    } else if (kind && strcmp(kind, "pytorch_et") == 0) {
      g_ptr_array_add(in->pet_files, g_strdup(p));
      taken++;
    } else if (kind && strcmp(kind, "nsys") == 0) {
      ok = set_kind(in, "nsys", dir, error);
      g_ptr_array_add(in->files, g_strdup(p));
      taken++;
    } else {
      ignore(in, p, why ? why : "unexpected input kind in a Kineto directory");
    }
    g_free(p);
  }
  g_ptr_array_free(names, TRUE);
  if (!ok)
    return FALSE;
  if (dir_kind) {
    if (!set_kind(in, dir_kind, dir, error))
      return FALSE;
    g_ptr_array_add(in->files, g_strdup(dir));
    return TRUE;
  }
  if (taken == 0) {
    nothing_usable(dir, in, error);
    return FALSE;
  }
  return TRUE;
}

static gboolean add_path(wisp_inputs *in, const char *path, GError **error)
{
  if (g_file_test(path, G_FILE_TEST_IS_DIR))
    return add_dir(in, path, error);
  if (g_file_test(path, G_FILE_TEST_EXISTS)) {
    const char *why = NULL, *kind = classify_file(path, &why);
    if (kind == NULL) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s: %s; tried a Chakra ET rank file (*.N.et), a Kineto trace (*.json, *.json.gz with "
                  "\"traceEvents\"), an XPlane profile (*.xplane.pb[.gz]) and XProf JSON (*.trace.json[.gz])", path,
                  why);
      return FALSE;
    }
    if (strcmp(kind, "pytorch_et") == 0) { /* the workload itself, or beside Kineto traces */
      g_ptr_array_add(in->pet_files, g_strdup(path));
      return TRUE;
    }
    if (!set_kind(in, kind, path, error))
      return FALSE;
    g_ptr_array_add(in->files, g_strdup(path));
    return TRUE;
  }
  /* A Chakra prefix: PREFIX.0.et exists. */
  char *first = g_strdup_printf("%s.0.et", path);
  gboolean prefix = g_file_test(first, G_FILE_TEST_IS_REGULAR);
  g_free(first);
  if (prefix) {
    if (!set_kind(in, "chakra", path, error))
      return FALSE;
    g_ptr_array_add(in->files, g_strdup(path));
    return TRUE;
  }
  /* A glob pattern the shell did not expand (quoted, or no shell). */
  if (strpbrk(path, "*?[") != NULL) {
    glob_t g;
    int rc = glob(path, 0, NULL, &g);
    if (rc == GLOB_NOMATCH) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: the pattern matches no file", path);
      return FALSE;
    }
    gboolean ok = rc == 0;
    if (!ok)
      g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot expand the pattern", path);
    for (size_t i = 0; ok && i < g.gl_pathc; i++)
      ok = add_path(in, g.gl_pathv[i], error);
    globfree(&g);
    return ok;
  }
  nothing_usable(path, NULL, error);
  return FALSE;
}

gboolean wisp_inputs_resolve(const char *const *paths, int n, wisp_inputs *in, GError **error)
{
  memset(in, 0, sizeof *in);
  in->files = g_ptr_array_new_with_free_func(g_free);
  in->pet_files = g_ptr_array_new_with_free_func(g_free);
  in->ignored = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_ptr_array_unref);
  in->reasons = g_ptr_array_new_with_free_func(g_free);
  if (n < 1) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "no workload given");
    return FALSE;
  }
  for (int i = 0; i < n; i++)
    if (!add_path(in, paths[i], error)) {
      wisp_inputs_clear(in);
      return FALSE;
    }
  /* PyTorch execution traces: beside Kineto traces they are linked with
   * them; alone they are the workload; beside anything else, an error. */
  if (in->pet_files->len > 0 && in->kind == NULL) {
    in->kind = "pytorch_et";
    GPtrArray *t = in->files;
    in->files = in->pet_files;
    in->pet_files = t;
  } else if (in->pet_files->len > 0 && strcmp(in->kind, "kineto") != 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s is a PyTorch execution trace but the workload is %s input; execution traces go alone or beside "
                "the ranks' Kineto traces", (char *)in->pet_files->pdata[0], in->kind);
    wisp_inputs_clear(in);
    return FALSE;
  }
  /* Chakra: one set of rank files, named by one prefix, directory or file. */
  if (strcmp(in->kind, "chakra") == 0 && in->files->len > 1) {
    wisp_inputs_clear(in);
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "several Chakra inputs given; a Chakra workload is one set of rank files: pass its prefix "
                "(PREFIX for PREFIX.0.et ...) or its directory once");
    return FALSE;
  }
  return TRUE;
}

void wisp_inputs_print_ignored(const wisp_inputs *in, FILE *out)
{
  for (guint r = 0; r < in->reasons->len; r++) {
    GPtrArray *names = g_hash_table_lookup(in->ignored, in->reasons->pdata[r]);
    fprintf(out, "wisp: ignored %u file(s): %s:", names->len, (char *)in->reasons->pdata[r]);
    for (guint k = 0; k < names->len && k < 4; k++)
      fprintf(out, " %s", (char *)names->pdata[k]);
    if (names->len > 4)
      fprintf(out, " ... (%u more)", names->len - 4);
    fputc('\n', out);
  }
}
