/* et_io_internal.h: what the files behind chakra/et_io.h share (not
 * installed): the buffered input the reader pulls frames from
 * (et_input.c), and the group-id rule the loader and the writer agree on.
 * et_read.c reads a rank file, et_write.c writes rank files and
 * workloads, et_load.c loads workloads; none calls back into another. */
#ifndef WISP_ET_IO_INTERNAL_H
#define WISP_ET_IO_INTERNAL_H

#include "chakra/et_io.h"

#include <zlib.h>

G_BEGIN_DECLS


typedef struct {
  const char *path;
  gzFile gz;
  uint8_t *buf;
  size_t cap, pos, end;
  uint64_t buf_off;    /* offset of buf[0] in the (uncompressed) stream */
  uint64_t file_size;  /* size of a plain file; 0 for gzip (unknown) */
  gboolean is_gzip;
  gboolean eof;
} et_input;

/* Opens path (plain or gzip) and closes it; frame_len reads
 * a frame's length prefix (1 read, 0 at the end of the file, -1 on
 * error); need makes the frame's len bytes available at pos (FALSE on a
 * truncated file).  Errors name the file and byte offset. */
gboolean et_input_open(et_input *in, const char *path, GError **error);
void et_input_close(et_input *in);
int et_input_frame_len(et_input *in, uint32_t *len, GError **error);
gboolean et_input_need(et_input *in, uint32_t len, uint64_t frame_off, GError **error);

/* TRUE when s is a canonical decimal id >= 1 that fits an int. */
static inline gboolean et_io_is_group_id(const char *s)
{
  if (s[0] < '1' || s[0] > '9')
    return FALSE;
  size_t k = 0;
  for (; s[k]; k++)
    if (s[k] < '0' || s[k] > '9' || k >= 9)
      return FALSE;
  return TRUE;
}

G_END_DECLS
#endif
