/* fuzz_xplane.c: libFuzzer harness for the XPlane reader and the XLA/TPU
 * frontend (frontends/xplane.c, frontends/xla.c and, through the HLO text
 * of op metadata, frontends/hlo.c).
 *
 * Each input is used twice:
 *   1. in memory (fe_xplane_file_new_from_data + fe_xplane_scan) with a
 *      visitor that visits every plane and line and looks up event and
 *      plane stats by name and by id, touching every byte of each string
 *      value, so the wire-format walker and the on-demand stat decoder
 *      see arbitrary bytes;
 *   2. through fe_xla_load on a temporary file, which builds the workload.
 *      Inputs whose first non-blank byte is '{' or '[' are written as
 *      `fuzz.trace.json` (the XProf trace-viewer reader), all others as
 *      `fuzz.xplane.pb` (gzip is detected by magic).  The options vary
 *      with the input size modulo 4: defaults; strict + no_gaps;
 *      device_clock + step 0 of "train"; step 1 of the Steps line with
 *      the file given twice (two hosts with the same chip numbers).
 *      replicate_missing is never set: one replica-group id of 2^24 - 1
 *      would legitimately build 16 M ranks.  The inflated image is
 *      limited to 64 MiB (a gzip bomb is a WISP_ERROR_LIMIT error).
 * Errors are expected and must be WISP_ERROR; crashes, leaks, hangs and
 * sanitizer reports are bugs.  Build and run with fuzz/run.sh.
 */
#include "config.h"

#include "frontends/xla.h"
#include "fuzz/fuzz_util.h"

#include <stdint.h>
#include <stddef.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
  unsigned sum;        /* keeps the string reads from being optimised out */
  int64_t off_id;      /* id of device_offset_ps in the current plane, or -1 */
} scan_ctx;

static void touch(scan_ctx *c, const fe_xstat_value *v)
{
  int64_t i;
  if (fe_xstat_as_int64(v, &i))
    c->sum += (unsigned) i;
  if (v->type == FE_XSTAT_STR || v->type == FE_XSTAT_BYTES)
    for (size_t k = 0; k < v->len; k++)
      c->sum += (unsigned char) v->s[k];
}

static gboolean on_plane(void *user, const fe_xplane_plane *p)
{
  scan_ctx *c = user;
  fe_xstat_value v;
  (void) fe_xplane_plane_name(p);
  (void) fe_xplane_plane_id(p);
  if (fe_xplane_plane_stat(p, "device_type_string", &v))
    touch(c, &v);
  if (!fe_xplane_stat_id(p, "device_offset_ps", &c->off_id))
    c->off_id = -1;
  return TRUE;
}

static gboolean on_line(void *user, const fe_xplane_plane *p, const char *name, int64_t id)
{
  scan_ctx *c = user;
  c->sum += (unsigned) strlen(name) + (unsigned) id;
  return TRUE;
}

static gboolean on_event(void *user, const fe_xevent_view *ev, GError **error)
{
  static const char *const names[] = { "hlo_category", "long_name", "model_flops", "device_duration_ps",
                                       "group_id", "step_num" };
  scan_ctx *c = user;
  fe_xstat_value v;
  c->sum += (unsigned) strlen(ev->name) + (unsigned) strlen(ev->display_name) + (unsigned) strlen(ev->line_name);
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
    if (fe_xevent_stat(ev, names[i], &v))
      touch(c, &v);
  if (c->off_id >= 0 && fe_xevent_stat_by_id(ev, c->off_id, &v))
    touch(c, &v);
  return TRUE;
}

static void on_host(void *user, const char *name)
{
  scan_ctx *c = user;
  c->sum += (unsigned) strlen(name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static char *pb, *json;
  if (!pb) {
    pb = fuzz_path("fuzz.xplane.pb");
    json = fuzz_path("fuzz.trace.json");
  }
  GError *error = NULL;

  /* 1: in-memory scan. */
  fe_xplane_file *f = fe_xplane_file_new_from_data(data, size, "fuzz");
  fe_xplane_visitor vis = { on_plane, on_line, on_event, on_host };
  scan_ctx sc = { 0, -1 };
  fe_xplane_counts counts = { 0, 0, 0, 0 };
  if (!fe_xplane_scan(f, &vis, &sc, &counts, &error)) {
    g_assert(error != NULL && error->domain == WISP_ERROR);
    g_clear_error(&error);
  }
  fe_xplane_file_free(f);

  /* 2: the frontend on a file. */
  size_t k = 0;
  while (k < size && g_ascii_isspace(data[k]))
    k++;
  const char *path = k < size && (data[k] == '{' || data[k] == '[') ? json : pb;
  fuzz_write(path, data, size);
  fe_xla_options opt;
  fe_xla_options_init(&opt);
  int n_paths = 1;
  opt.limits.max_bytes = 64u << 20;
  switch (size % 4) {
  case 1:
    opt.strict = TRUE;
    opt.no_gaps = TRUE;
    break;
  case 2:
    opt.device_clock = TRUE;
    opt.step_marker = "train";
    opt.step_index = 0;
    break;
  case 3:
    opt.step_index = 1;
    n_paths = 2; /* the same file as two hosts: the multi-host chip numbering */
    break;
  default:
    break;
  }
  fe_xla_report rep;
  fe_xla_report_init(&rep);
  const char *paths[2] = { path, path };
  et_workload *w = fe_xla_load(paths, n_paths, &opt, &rep, &error);
  if (w) {
    g_assert(error == NULL && w->n_ranks >= 1);
    for (int r = 0; r < w->n_ranks; r++)
      g_assert(w->ranks[r] != NULL && w->ranks[r]->n_nodes >= 1);
    et_workload_free(w);
  } else {
    g_assert(error != NULL && error->domain == WISP_ERROR);
    g_clear_error(&error);
  }
  fe_xla_report_clear(&rep);
  g_unlink(path);
  return 0;
}
