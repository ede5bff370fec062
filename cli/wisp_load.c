/* wisp_load.c: input detection shared by every command (see wisp_load.h).
 *
 * Rules, in order:
 *  1. an XLA profile (an *.xplane.pb[.gz] or XProf *.trace.json[.gz] file,
 *     or a directory holding XPlane files) goes to the XLA frontend;
 *  2. a *.json / *.json.gz file, or a directory holding such files and no
 *     *.et files, goes to the Kineto frontend;
 *  3. anything else is a Chakra ET prefix, directory or rank file.
 * Directory listings are O(entries); nothing is read twice.
 */
#include "config.h"
#include "cli/wisp_load.h"
#include "chakra/et_io.h"
#include "frontends/fe.h"
#include "frontends/xla.h"

#include <string.h>

static gboolean has_suffix(const char *s, const char *suffix)
{
  return g_str_has_suffix(s, suffix);
}

static gboolean is_kineto_name(const char *name)
{
  return has_suffix(name, ".json") || has_suffix(name, ".json.gz");
}

/* What a directory holds: counts of .et files and of JSON files. */
static void scan_dir(const char *path, int *n_et, int *n_json)
{
  *n_et = *n_json = 0;
  GDir *d = g_dir_open(path, 0, NULL);
  if (d == NULL)
    return;
  const char *name;
  while ((name = g_dir_read_name(d)) != NULL) {
    if (has_suffix(name, ".et"))
      (*n_et)++;
    else if (is_kineto_name(name) && strcmp(name, "comm_group.json") != 0 &&
             strcmp(name, "comm_group_names.json") != 0)
      (*n_json)++;
  }
  g_dir_close(d);
}

const char *wisp_input_kind(const char *path)
{
  char *argv[] = {(char *)"wisp", (char *)path, NULL};
  if (fe_xla_wants(2, argv))
    return "xla";
  if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
    int n_et, n_json;
    scan_dir(path, &n_et, &n_json);
    return n_et == 0 && n_json > 0 ? "kineto" : "chakra";
  }
  if (g_file_test(path, G_FILE_TEST_IS_REGULAR) && is_kineto_name(path))
    return "kineto";
  return "chakra";
}

et_workload *wisp_load_workload(const char *path, unsigned build_flags, GError **error)
{
  wisp_load_options opt = WISP_LOAD_OPTIONS_INIT;
  opt.build_flags = build_flags;
  return wisp_load_workload_full(path, &opt, error);
}

et_workload *wisp_load_workload_full(const char *path, const wisp_load_options *lo, GError **error)
{
  unsigned build_flags = lo->build_flags;
  const char *kind = wisp_input_kind(path);
  const char *paths[] = {path};
  if (strcmp(kind, "xla") == 0) {
    fe_xla_options opt;
    fe_xla_options_init(&opt);
    opt.strict = (build_flags & ET_BUILD_STRICT) != 0;
    if (lo->step >= 0)
      opt.step_index = lo->step;
    return fe_xla_load_inputs(paths, 1, &opt, NULL, error);
  }
  if (strcmp(kind, "kineto") == 0) {
    fe_kineto_options opt;
    fe_kineto_options_init(&opt);
    opt.strict = (build_flags & ET_BUILD_STRICT) != 0;
    opt.replicate_from = lo->replicate_from;
    if (lo->step >= 0)
      opt.step = lo->step;
    fe_kineto_report rep = {0};
    et_workload *w = fe_kineto_load(paths, 1, &opt, &rep, error);
    /* Loud, as promised: warnings and skipped-event counts go to stderr. */
    if (w != NULL && rep.warnings != NULL)
      for (guint k = 0; k < rep.warnings->len; k++)
        fprintf(stderr, "wisp: warning: %s\n", (const char *)rep.warnings->pdata[k]);
    fe_kineto_report_clear(&rep);
    return w;
  }
  return et_workload_load(path, build_flags, error);
}
