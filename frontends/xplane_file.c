/* xplane_file.c: an XSpace file opened for the streaming reader (see
 * xplane.h): mapped when plain, inflated within a size limit when gzip,
 * or wrapped around bytes in memory.  O(file size).
 */
#include "config.h"

#include "frontends/xplane_internal.h"

#include <stddef.h>
#include <string.h>
#include <zlib.h>

#define XP_DEFAULT_MAX (UINT64_C(8) << 30)

fe_xplane_file *fe_xplane_file_new_from_data(const guint8 *data, size_t len, const char *source)
{
  fe_xplane_file *f = g_new0(fe_xplane_file, 1);
  f->source = g_strdup(source ? source : "(memory)");
  f->data = data;
  f->len = len;
  return f;
}

void fe_xplane_file_free(fe_xplane_file *f)
{
  if (!f)
    return;
  if (f->map)
    g_mapped_file_unref(f->map);
  g_free(f->owned);
  g_free(f->source);
  g_free(f);
}

size_t fe_xplane_file_size(const fe_xplane_file *f) { return f->len; }
const char *fe_xplane_file_source(const fe_xplane_file *f) { return f->source; }

/* Inflates a gzip image (possibly several members) into one buffer, growing
 * geometrically; fails beyond max bytes.  Linear in the output size. */
static guint8 *xp_gunzip(const guint8 *in, size_t in_len, uint64_t max, size_t *out_len,
                         const char *path, GError **error)
{
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  if (inflateInit2(&zs, 15 + 32) != Z_OK) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot initialise zlib", path);
    return NULL;
  }
  size_t cap = in_len * 4 + 4096, used = 0;
  if (cap > max)
    cap = (size_t) max + 1;
  guint8 *out = g_malloc(cap);
  size_t in_pos = 0;
  for (;;) {
    /* zlib's avail fields are 32-bit: feed at most 1 GiB at a time. */
    size_t in_chunk = MIN(in_len - in_pos, (size_t) 1 << 30);
    size_t out_chunk = MIN(cap - used, (size_t) 1 << 30);
    zs.next_in = (Bytef *) (in + in_pos);
    zs.avail_in = (uInt) in_chunk;
    zs.next_out = out + used;
    zs.avail_out = (uInt) out_chunk;
    int rc = inflate(&zs, Z_NO_FLUSH);
    in_pos += in_chunk - zs.avail_in;
    used += out_chunk - zs.avail_out;
    if (rc == Z_STREAM_END) {
      if (in_pos < in_len && in[in_pos] == 0x1f) {
        inflateReset(&zs);  /* concatenated gzip member */
        continue;
      }
      break;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE,
                  "%s: corrupt gzip data near compressed byte %zu (%s); re-copy the file",
                  path, in_pos, zs.msg ? zs.msg : "zlib error");
      goto fail;
    }
    if (rc == Z_BUF_ERROR && in_pos >= in_len && zs.avail_out > 0) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE,
                  "%s: gzip data is truncated after %zu compressed bytes", path, in_len);
      goto fail;
    }
    if (used == cap) {
      if ((uint64_t) used > max) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_LIMIT,
                    "%s: inflated profile exceeds the limit of %" G_GUINT64_FORMAT
                    " bytes; raise the limit or split the profile", path, max);
        goto fail;
      }
      cap = cap * 2 > max + 1 ? (size_t) max + 1 : cap * 2;
      out = g_realloc(out, cap);
    }
  }
  inflateEnd(&zs);
  if ((uint64_t) used > max) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_LIMIT,
                "%s: inflated profile exceeds the limit of %" G_GUINT64_FORMAT " bytes", path, max);
    g_free(out);
    return NULL;
  }
  *out_len = used;
  return out;
fail:
  inflateEnd(&zs);
  g_free(out);
  return NULL;
}

fe_xplane_file *fe_xplane_file_open(const char *path, const fe_xplane_limits *lim, GError **error)
{
  uint64_t max = lim && lim->max_bytes ? lim->max_bytes : XP_DEFAULT_MAX;
  GError *e = NULL;
  wisp_input_note(path); /* no output may replace it */
  GMappedFile *map = g_mapped_file_new(path, FALSE, &e);
  if (!map) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: cannot read the profile: %s", path, e->message);
    g_error_free(e);
    return NULL;
  }
  const guint8 *d = (const guint8 *) g_mapped_file_get_contents(map);
  size_t n = g_mapped_file_get_length(map);
  fe_xplane_file *f = g_new0(fe_xplane_file, 1);
  f->source = g_strdup(path);
  if (n >= 2 && d[0] == 0x1f && d[1] == 0x8b) {
    f->owned = xp_gunzip(d, n, max, &f->len, path, error);
    g_mapped_file_unref(map);
    if (!f->owned) {
      fe_xplane_file_free(f);
      return NULL;
    }
    f->data = f->owned;
  } else {
    if ((uint64_t) n > max) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_LIMIT,
                  "%s: profile of %zu bytes exceeds the limit of %" G_GUINT64_FORMAT " bytes", path, n, max);
      g_mapped_file_unref(map);
      fe_xplane_file_free(f);
      return NULL;
    }
    f->map = map;
    f->data = d;
    f->len = n;
  }
  return f;
}
