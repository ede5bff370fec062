/* study_act_spill.c: the activity timeline's spill file (study_spill_*,
 * study_metrics_internal.h).  A long replay's intervals (40 bytes each,
 * millions on a 1,024-rank x 1,000-step run) leave memory in per-rank
 * blocks appended to one unlinked temporary file; the metrics read a
 * rank's blocks back in the order they were written, so they see exactly
 * the sequence the in-memory timeline would hold and every sum keeps its
 * order (byte-identical metrics).  Memory is 16 bytes per block; writing
 * and reading are O(intervals) I/O.
 */
#include "config.h"
#include "studies/study_metrics_internal.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

typedef struct {
  int64_t off;             /* byte offset in the file */
  uint32_t n;              /* act_rec records */
} spill_block;

struct act_spill {
  int fd;
  char *dir;               /* the file's directory, for messages */
  int64_t end;             /* bytes written */
  GArray **blocks;         /* per rank: spill_block, in writing order */
  int n_ranks;
  char *read_error;        /* the first failed read back, NULL when none */
  GArray *scratch;         /* act_rec: the rank last read */
};

act_spill *study_spill_new(int n_ranks)
{
  int fd = wisp_output_temp_unlinked("wisp-activity-XXXXXX", NULL);
  if (fd < 0)
    return NULL;
  act_spill *s = g_new0(act_spill, 1);
  s->fd = fd;
  s->dir = g_strdup(g_get_tmp_dir());
  s->n_ranks = n_ranks;
  s->blocks = g_new0(GArray *, n_ranks);
  s->scratch = g_array_new(FALSE, FALSE, sizeof(act_rec));
  return s;
}

void study_spill_free(act_spill *s)
{
  if (s == NULL)
    return;
  close(s->fd);
  for (int r = 0; r < s->n_ranks; r++)
    if (s->blocks[r])
      g_array_free(s->blocks[r], TRUE);
  g_free(s->blocks);
  g_free(s->dir);
  g_free(s->read_error);
  g_array_free(s->scratch, TRUE);
  g_free(s);
}

/* Writes all of len bytes at off; FALSE on a short write or error. */
static gboolean write_all(int fd, const char *p, size_t len, int64_t off)
{
  while (len > 0) {
    ssize_t k = pwrite(fd, p, len, (off_t)off);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return FALSE;
    p += k;
    len -= (size_t)k;
    off += k;
  }
  return TRUE;
}

gboolean study_spill_write(act_spill *s, int rank, const act_rec *v, guint n)
{
  if (n == 0)
    return TRUE;
  size_t len = (size_t)n * sizeof *v;
  if (!write_all(s->fd, (const char *)v, len, s->end))
    return FALSE; /* the caller keeps the records in memory */
  if (s->blocks[rank] == NULL)
    s->blocks[rank] = g_array_new(FALSE, FALSE, sizeof(spill_block));
  spill_block b = {s->end, n};
  g_array_append_val(s->blocks[rank], b);
  s->end += (int64_t)len;
  return TRUE;
}

gboolean study_spill_has(const act_spill *s, int rank)
{
  return s && s->blocks[rank] && s->blocks[rank]->len > 0;
}

/* Reads all of len bytes at off; FALSE on a short read or error. */
static gboolean read_all(int fd, char *p, size_t len, int64_t off)
{
  while (len > 0) {
    ssize_t k = pread(fd, p, len, (off_t)off);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return FALSE;
    p += k;
    len -= (size_t)k;
    off += k;
  }
  return TRUE;
}

GArray *study_spill_read(act_spill *s, int rank)
{
  GArray *out = s->scratch;
  g_array_set_size(out, 0);
  for (guint i = 0; s->blocks[rank] && i < s->blocks[rank]->len; i++) {
    const spill_block *b = &g_array_index(s->blocks[rank], spill_block, i);
    guint at = out->len;
    g_array_set_size(out, at + b->n);
    errno = 0;
    if (!read_all(s->fd, (char *)&g_array_index(out, act_rec, at), (size_t)b->n * sizeof(act_rec), b->off)) {
      if (s->read_error == NULL)
        s->read_error = g_strdup_printf("cannot read back the activity timeline from its temporary file in %s: "
                                        "%s (the metrics are left out; free space or set TMPDIR to a healthy "
                                        "directory)", s->dir, errno ? g_strerror(errno) : "the file is short");
      return NULL;
    }
  }
  return out;
}

const char *study_spill_error(const act_spill *s)
{
  return s ? s->read_error : NULL;
}
