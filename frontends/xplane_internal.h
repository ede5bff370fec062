/* xplane_internal.h: the opened XSpace file, shared by xplane_file.c
 * (opening, inflating) and xplane.c (walking it); not installed. */
#ifndef WISP_XPLANE_INTERNAL_H
#define WISP_XPLANE_INTERNAL_H

#include "frontends/xplane.h"

G_BEGIN_DECLS

struct fe_xplane_file {
  char *source;
  const guint8 *data;
  size_t len;
  GMappedFile *map;   /* uncompressed files */
  guint8 *owned;      /* inflated gzip image */
};

G_END_DECLS
#endif
