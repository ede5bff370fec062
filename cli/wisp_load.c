/* wisp_load.c: input detection for every command (see wisp_load.h). */
#include "config.h"
#include "cli/wisp_load.h"
#include "chakra/et_io.h"

et_workload *wisp_load_workload(const char *path, unsigned build_flags, GError **error)
{
  return et_workload_load(path, build_flags, error);
}
