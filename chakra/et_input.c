/* et_input.c: buffered reading of a Chakra .et file, plain or gzip
 * (zlib reads both), in READ_CHUNK blocks, and the framing of its
 * length-prefixed protobuf messages; see et_io_internal.h.  O(file size)
 * reads, one buffer of the largest frame.
 */
#include "config.h"
#include "chakra/et_io_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define READ_CHUNK (256u << 10)

gboolean et_input_open(et_input *in, const char *path, GError **error)
{
  memset(in, 0, sizeof(*in));
  in->path = path;
  wisp_input_note(path); /* no output may replace it */
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot open: %s", path, g_strerror(e));
    return FALSE;
  }
  struct stat st;
  uint8_t magic[2] = {0, 0};
  ssize_t got = pread(fd, magic, 2, 0);
  if (fstat(fd, &st) != 0 || got < 0) {
    int e = errno;
    close(fd);
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot read: %s", path, g_strerror(e));
    return FALSE;
  }
  in->is_gzip = got == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  in->file_size = in->is_gzip ? 0 : (uint64_t)st.st_size;
  in->gz = gzdopen(fd, "rb");
  if (in->gz == NULL) {
    close(fd);
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot open: out of memory", path);
    return FALSE;
  }
  gzbuffer(in->gz, READ_CHUNK);
  in->cap = READ_CHUNK;
  in->buf = g_malloc(in->cap);
  return TRUE;
}

void et_input_close(et_input *in)
{
  if (in->gz)
    gzclose(in->gz);
  g_free(in->buf);
  in->gz = NULL;
  in->buf = NULL;
}

/* Reads more bytes after in->end; returns the count, 0 at the end, -1 on
 * error (set).  Moves unread bytes to the front first. */
static gssize et_input_fill(et_input *in, GError **error)
{
  if (in->eof)
    return 0;
  if (in->pos > 0) {
    memmove(in->buf, in->buf + in->pos, in->end - in->pos);
    in->buf_off += in->pos;
    in->end -= in->pos;
    in->pos = 0;
  }
  if (in->end == in->cap)
    return 0;
  size_t want = MIN(in->cap - in->end, (size_t)INT_MAX);
  int n = gzread(in->gz, in->buf + in->end, (unsigned)want);
  if (n < 0) {
    int errnum = 0;
    const char *msg = gzerror(in->gz, &errnum), *colon = strstr(msg, ": ");
    if (msg[0] == '<' && colon != NULL) /* zlib's "<fd:N>: " prefix */
      msg = colon + 2;
    z_off_t at = gztell(in->gz); /* bytes zlib delivered, this failed call's included */
    g_set_error(error, WISP_ERROR, errnum == Z_ERRNO ? WISP_ERROR_IO : WISP_ERROR_PARSE,
                "%s: near uncompressed byte %" G_GUINT64_FORMAT ": %s", in->path,
                MAX(in->buf_off + in->end, at > 0 ? (uint64_t)at : 0), errnum == Z_ERRNO ? g_strerror(errno) : msg);
    return -1;
  }
  if (n == 0) {
    in->eof = TRUE;
    int errnum = 0;
    const char *msg = gzerror(in->gz, &errnum);
    if (errnum != Z_OK) {
      /* zlib prefixes its message with "<fd:N>: ". */
      const char *colon = strstr(msg, ": ");
      if (msg[0] == '<' && colon != NULL)
        msg = colon + 2;
      g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE,
                  "%s: the gzip stream is damaged or truncated after uncompressed byte %" G_GUINT64_FORMAT
                  " (%s)", in->path, in->buf_off + in->end, msg);
      return -1;
    }
    return 0;
  }
  in->end += (size_t)n;
  return n;
}

/* Reads a frame length.  Returns 1 with *len set, 0 at a clean end of
 * input, -1 on error. */
int et_input_frame_len(et_input *in, uint32_t *len, GError **error)
{
  uint64_t v = 0;
  uint64_t start = in->buf_off + in->pos;
  for (int k = 0;; k++) {
    if (in->pos == in->end) {
      gssize n = et_input_fill(in, error);
      if (n < 0)
        return -1;
      if (n == 0) {
        if (k == 0)
          return 0;
        g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE,
                    "%s: byte %" G_GUINT64_FORMAT ": the file ends inside a frame length prefix (truncated file)",
                    in->path, start);
        return -1;
      }
    }
    uint8_t byte = in->buf[in->pos++];
    v |= (uint64_t)(byte & 0x7f) << (7 * k);
    if (!(byte & 0x80))
      break;
    if (k == 4) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE,
                  "%s: byte %" G_GUINT64_FORMAT ": bad frame length prefix (a varint32 has at most 5 bytes); "
                  "this is not a Chakra .et file or it is damaged",
                  in->path, start);
      return -1;
    }
  }
  if (v > UINT32_MAX) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE,
                "%s: byte %" G_GUINT64_FORMAT ": frame length %" G_GUINT64_FORMAT " does not fit in 32 bits",
                in->path, start, v);
    return -1;
  }
  *len = (uint32_t)v;
  return 1;
}

/* Makes len bytes available at in->buf + in->pos, growing the buffer only as
 * data arrives (so a lying length prefix costs at most the real input). */
gboolean et_input_need(et_input *in, uint32_t len, uint64_t frame_off, GError **error)
{
  if (len > ET_IO_MAX_FRAME) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_LIMIT,
                "%s: byte %" G_GUINT64_FORMAT ": frame length %u exceeds wisp's limit of %u bytes; "
                "the file is damaged or not a Chakra .et file",
                in->path, frame_off, len, ET_IO_MAX_FRAME);
    return FALSE;
  }
  if (in->file_size > 0 && in->buf_off + in->pos + len > in->file_size) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE,
                "%s: byte %" G_GUINT64_FORMAT ": a frame of %u bytes extends %" G_GUINT64_FORMAT
                " bytes beyond the end of the file (%" G_GUINT64_FORMAT " bytes): truncated or damaged file",
                in->path, frame_off, len, in->buf_off + in->pos + len - in->file_size, in->file_size);
    return FALSE;
  }
  while (in->end - in->pos < len) {
    if (in->pos == 0 && in->end == in->cap) {
      in->cap = MIN(in->cap * 2, (size_t)len + 16);
      in->buf = g_realloc(in->buf, in->cap);
    }
    gssize n = et_input_fill(in, error);
    if (n < 0)
      return FALSE;
    if (n == 0 && in->end < in->cap) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE,
                  "%s: byte %" G_GUINT64_FORMAT ": the file ends %" G_GUINT64_FORMAT
                  " bytes into a frame of %u bytes (truncated file)",
                  in->path, frame_off, (uint64_t)(in->end - in->pos), len);
      return FALSE;
    }
  }
  return TRUE;
}
