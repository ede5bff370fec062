/* wisp_load.h: opens a workload from whatever the user points at: a Chakra
 * ET prefix or directory, a folder of Kineto traces, or XLA profiles, so
 * every command accepts the same inputs. */
#ifndef WISP_LOAD_H
#define WISP_LOAD_H

#include "chakra/et_graph.h"

G_BEGIN_DECLS

typedef struct {
  unsigned build_flags;        /* ET_BUILD_* for Chakra input; ET_BUILD_STRICT also makes frontends strict */
  const char *replicate_from;  /* Kineto: synthesize absent ranks from these ranks ("0" or "0,1") */
  int step;                    /* profiler step to replay, -1 = the frontend's default */
} wisp_load_options;

#define WISP_LOAD_OPTIONS_INIT {0, NULL, -1}

et_workload *wisp_load_workload(const char *path, unsigned build_flags, GError **error);
et_workload *wisp_load_workload_full(const char *path, const wisp_load_options *opt, GError **error);

/* "chakra", "kineto" or "xla": which reader wisp_load_workload uses. */
const char *wisp_input_kind(const char *path);

G_END_DECLS
#endif
