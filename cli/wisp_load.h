/* wisp_load.h: opens a workload from whatever the user points at: a Chakra
 * ET prefix or directory (later also profiler traces), so every command
 * accepts the same inputs. */
#ifndef WISP_LOAD_H
#define WISP_LOAD_H

#include "chakra/et_graph.h"

G_BEGIN_DECLS

et_workload *wisp_load_workload(const char *path, unsigned build_flags, GError **error);

G_END_DECLS
#endif
