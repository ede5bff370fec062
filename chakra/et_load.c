/* et_load.c: workloads from disk: a Chakra prefix, directory or rank
 * file resolved to its rank files, comm_group.json and its names read,
 * every rank read (et_read.c) and offered for sharing (et_share.c).
 * A rank file byte for byte equal to an earlier rank's is not parsed when
 * et_share_offer_same can give the rank its shared graph directly (a
 * job's data-parallel ranks often write identical files: 255 of the 256
 * parses of the issue 30 chain).  O(total file size); one rank's graph
 * in flight at a time; the content check reads files in 64 KiB blocks
 * and keeps up to 1 MiB of distinct small files to compare with.
 */
#include "config.h"
#include "chakra/et_io_internal.h"
#include "chakra/et_share.h"
#include "common/wisp_json.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

static char *read_small_file(const char *path, GError **error)
{
  char *text = NULL;
  gsize len = 0;
  wisp_input_note(path);
  if (!g_file_get_contents(path, &text, &len, error))
    return NULL;
  if (len > (64u << 20)) {
    g_free(text);
    g_set_error(error, WISP_ERROR, WISP_ERROR_LIMIT, "%s: too large for a group file", path);
    return NULL;
  }
  return text;
}

/* After cJSON refused `text`: TRUE, with the error set, when it stopped
 * because arrays and objects nest deeper than its limit (not a syntax
 * error), which the messages below would call "not a JSON object".  O(size). */
static gboolean group_file_too_deep(const char *path, const char *text, GError **error)
{
  const char *at = cJSON_GetErrorPtr();
  if (!wisp_json_too_deep(text, strlen(text), at, CJSON_NESTING_LIMIT))
    return FALSE;
  g_set_error(error, WISP_ERROR, WISP_ERROR_LIMIT, "%s: byte %td: arrays and objects nested deeper than %d levels, the "
              "JSON reader's limit; a group file is one object of flat lists, so this one is damaged or not a group "
              "file: regenerate it (wisp convert writes it)", path, at - text, CJSON_NESTING_LIMIT);
  return TRUE;
}

static gboolean load_groups(et_workload *w, const char *path, GError **error)
{
  char *text = read_small_file(path, error);
  if (text == NULL)
    return FALSE;
  cJSON *root = cJSON_Parse(text);
  gboolean ok = FALSE;
  if (root == NULL && group_file_too_deep(path, text, error))
    goto out;
  if (root == NULL || !cJSON_IsObject(root)) {
    const char *at = cJSON_GetErrorPtr();
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE,
                "%s: not a JSON object of communicator ids to rank lists%s%.20s%s", path,
                root == NULL && at ? " (error near \"" : "", root == NULL && at ? at : "",
                root == NULL && at ? "\")" : "");
    goto out;
  }
  for (cJSON *it = root->child; it != NULL; it = it->next) {
    if (!et_io_is_group_id(it->string)) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s: key \"%s\" is not a communicator id (a decimal number >= 1)", path, it->string);
      goto out;
    }
    int n = cJSON_GetArraySize(it);
    if (!cJSON_IsArray(it) || n == 0) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: group \"%s\" must be a non-empty list of ranks",
                  path, it->string);
      goto out;
    }
    int *ranks = g_new(int, n);
    int k = 0;
    for (cJSON *r = it->child; r != NULL; r = r->next, k++) {
      double v = cJSON_IsNumber(r) ? r->valuedouble : -1;
      if (!(v >= 0 && v < w->n_ranks) || v != (double)(int)v) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                    "%s: group \"%s\" entry %d is not a rank in 0..%d", path, it->string, k, w->n_ranks - 1);
        g_free(ranks);
        goto out;
      }
      ranks[k] = (int)v;
    }
    uint32_t idx = et_workload_add_group(w, it->string, NULL, ranks, n);
    g_free(ranks);
    if (idx == ET_NONE) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s: group \"%s\" repeats a rank or repeats an earlier group id with other ranks",
                  path, it->string);
      goto out;
    }
  }
  ok = TRUE;
out:
  cJSON_Delete(root);
  g_free(text);
  return ok;
}

/* Applies comm_group_names.json: renames groups (keeping the id as an alias
 * in group_index, since the rank files name groups by id). */
static gboolean load_group_names(et_workload *w, const char *path, GError **error)
{
  char *text = read_small_file(path, error);
  if (text == NULL)
    return FALSE;
  cJSON *root = cJSON_Parse(text);
  gboolean ok = FALSE;
  if (root == NULL && group_file_too_deep(path, text, error))
    goto out;
  if (root == NULL || !cJSON_IsObject(root)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s: not a JSON object", path);
    goto out;
  }
  for (cJSON *it = root->child; it != NULL; it = it->next) {
    gpointer gi = g_hash_table_lookup(w->group_index, it->string);
    cJSON *name = cJSON_GetObjectItemCaseSensitive(it, "name");
    cJSON *desc = cJSON_GetObjectItemCaseSensitive(it, "desc");
    if (gi == NULL || !cJSON_IsObject(it) || (name && !cJSON_IsString(name)) || (desc && !cJSON_IsString(desc))) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s: entry \"%s\" must name a group of comm_group.json and map to {\"name\": ..., \"desc\": ...}",
                  path, it->string);
      goto out;
    }
    et_group *grp = g_ptr_array_index(w->groups, GPOINTER_TO_UINT(gi) - 1);
    if (name != NULL && strcmp(name->valuestring, grp->name) != 0) {
      if (g_hash_table_contains(w->group_index, name->valuestring)) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: name \"%s\" is used twice", path,
                    name->valuestring);
        goto out;
      }
      g_free(grp->name);
      grp->name = g_strdup(name->valuestring);
      g_hash_table_insert(w->group_index, g_strdup(grp->name), gi);
    }
    if (desc != NULL) {
      g_free(grp->desc);
      grp->desc = g_strdup(desc->valuestring);
    }
  }
  ok = TRUE;
out:
  cJSON_Delete(root);
  g_free(text);
  return ok;
}

static int cmp_str_ptr(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Finds the rank-file prefix inside dir: the single P with P.<r>.et files. */
static char *dir_prefix(const char *dir, GError **error)
{
  GDir *d = g_dir_open(dir, 0, error);
  if (d == NULL)
    return NULL;
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  const char *e;
  while ((e = g_dir_read_name(d)) != NULL) {
    size_t len = strlen(e);
    if (len < 6 || strcmp(e + len - 3, ".et") != 0)
      continue;
    size_t k = len - 3;
    while (k > 0 && g_ascii_isdigit(e[k - 1]))
      k--;
    if (k == len - 3 || k < 2 || e[k - 1] != '.')
      continue;
    char *p = g_strndup(e, k - 1);
    gboolean seen = FALSE;
    for (guint j = 0; j < names->len; j++)
      seen = seen || strcmp(g_ptr_array_index(names, j), p) == 0;
    if (seen)
      g_free(p);
    else
      g_ptr_array_add(names, p);
  }
  g_dir_close(d);
  char *out = NULL;
  if (names->len == 1) {
    out = g_build_filename(dir, g_ptr_array_index(names, 0), NULL);
  } else if (names->len == 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: no rank files named PREFIX.<rank>.et in this directory", dir);
  } else {
    g_ptr_array_sort(names, cmp_str_ptr);
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: rank files with %u different prefixes (e.g. \"%s\" and \"%s\"); pass PREFIX instead of the "
                "directory", dir, names->len, (char *)g_ptr_array_index(names, 0),
                (char *)g_ptr_array_index(names, 1));
  }
  g_ptr_array_free(names, TRUE);
  return out;
}

/* The loader's memo of rank files by content (sharing on): a digest of
 * a file's bytes and size -> the first rank read with it (load_seen),
 * with that file's bytes when they fit one block and the memo's budget
 * (ET_LOAD_KEEP over every file kept), so that a later rank's file is
 * compared with them in memory: one read per rank file instead of three
 * (its digest, then it and its twin again), which at 1,024 ranks of the
 * issue 30 chain was most of the loader's system time. */
#define ET_LOAD_BLOCK 65536
#define ET_LOAD_KEEP (1u << 20)

typedef struct {
  int rank;
  gsize len;
  guchar *bytes; /* the file's bytes, or NULL when not kept */
} load_seen;

typedef struct {
  GHashTable *by_digest; /* guint64 digest -> load_seen */
  gsize kept;            /* bytes kept over every load_seen */
  guchar *buf;           /* one block: a file's bytes while it is read */
} load_memo;

static void load_seen_free(gpointer p)
{
  load_seen *s = p;
  g_free(s->bytes);
  g_free(s);
}

static load_memo *load_memo_new(void)
{
  load_memo *m = g_new0(load_memo, 1);
  m->by_digest = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, load_seen_free);
  m->buf = g_malloc(ET_LOAD_BLOCK);
  return m;
}

static void load_memo_free(load_memo *m)
{
  if (m == NULL)
    return;
  g_hash_table_destroy(m->by_digest);
  g_free(m->buf);
  g_free(m);
}

/* Fills buf with up to ET_LOAD_BLOCK bytes of fd (fewer only at its end);
 * the count, or -1 on a read error.  O(bytes). */
static gssize read_block(int fd, guchar *buf)
{
  gsize got = 0;
  while (got < ET_LOAD_BLOCK) {
    gssize k = read(fd, buf + got, ET_LOAD_BLOCK - got);
    if (k < 0 && errno == EINTR)
      continue;
    if (k < 0)
      return -1;
    if (k == 0)
      break;
    got += (gsize)k;
  }
  return (gssize)got;
}

/* Digest of the file's bytes and length, the length in *len and, when it
 * is at most one block, the whole file in buf (FALSE when it cannot be
 * read: the parse reports that).  O(file size), no allocation. */
static gboolean file_digest(const char *path, guchar *buf, guint64 *out, gsize *len)
{
  int fd = g_open(path, O_RDONLY, 0);
  if (fd < 0)
    return FALSE;
  guint64 h = UINT64_C(0x243f6a8885a308d3), total = 0;
  gssize got;
  while ((got = read_block(fd, buf)) > 0) {
    gsize i = 0;
    for (; i + 8 <= (gsize)got; i += 8) {
      guint64 v;
      memcpy(&v, buf + i, 8);
      h = (h ^ v) * UINT64_C(0x9e3779b97f4a7c15);
      h ^= h >> 29;
    }
    for (; i < (gsize)got; i++)
      h = (h ^ buf[i]) * UINT64_C(0x100000001b3);
    total += (guint64)got;
    if (got < ET_LOAD_BLOCK)
      break; /* the end: a whole small file stays in buf */
  }
  close(fd);
  *out = (h ^ total) * UINT64_C(0xff51afd7ed558ccd);
  *len = (gsize)total;
  return got >= 0;
}

/* Whether two files hold the same bytes.  O(file size), 128 KiB. */
static gboolean files_equal(const char *a, const char *b)
{
  FILE *fa = g_fopen(a, "rb"), *fb = g_fopen(b, "rb");
  gboolean eq = fa != NULL && fb != NULL;
  guchar *x = g_malloc(ET_LOAD_BLOCK), *y = g_malloc(ET_LOAD_BLOCK);
  while (eq) {
    size_t na = fread(x, 1, ET_LOAD_BLOCK, fa), nb = fread(y, 1, ET_LOAD_BLOCK, fb);
    eq = na == nb && memcmp(x, y, na) == 0 && !ferror(fa) && !ferror(fb);
    if (na == 0)
      break;
  }
  if (fa != NULL)
    fclose(fa);
  if (fb != NULL)
    fclose(fb);
  g_free(x);
  g_free(y);
  return eq;
}

/* Whether rank r's file f (digest h, len bytes, in m->buf when at most a
 * block) holds the same bytes as the earlier rank's of s: compared in
 * memory when s's bytes are kept, else both files read again.
 * O(file size). */
static gboolean same_as_seen(const load_memo *m, const load_seen *s, const char *prefix, const char *f, gsize len)
{
  if (s->len != len)
    return FALSE;
  if (s->bytes != NULL)
    return memcmp(s->bytes, m->buf, len) == 0;
  char *fc = g_strdup_printf("%s.%d.et", prefix, s->rank);
  gboolean eq = files_equal(f, fc);
  g_free(fc);
  return eq;
}

/* Rank r's file equals an earlier rank's (the memo) and r takes that
 * rank's shared graph without a parse (et_share_offer_same), with its
 * measured baseline.  Else FALSE, and r's content enters the memo when it
 * is new (its bytes too while they fit).  O(file size). */
static gboolean load_rank_same(et_workload *w, load_memo *m, const char *prefix, const char *f, int r,
                               gboolean all_starts)
{
  guint64 h;
  gsize len;
  if (!file_digest(f, m->buf, &h, &len))
    return FALSE;
  load_seen *s = g_hash_table_lookup(m->by_digest, &h);
  if (s == NULL) {
    gint64 *key = g_new(gint64, 1);
    *key = (gint64)h;
    s = g_new0(load_seen, 1);
    s->rank = r;
    s->len = len;
    if (len <= ET_LOAD_BLOCK && m->kept + len <= ET_LOAD_KEEP) {
      s->bytes = g_memdup2(m->buf, len);
      m->kept += len;
    }
    g_hash_table_insert(m->by_digest, key, s);
    return FALSE;
  }
  int c = s->rank;
  if (!same_as_seen(m, s, prefix, f, len) || !et_share_offer_same(w, r, c))
    return FALSE;
  /* c's file is r's: its measured step, and its window start when every
   * rank so far has one (then c's is stored, load_rank). */
  w->measured_step_ps[r] = w->measured_step_ps[c];
  if (all_starts)
    w->measured_start_ps[r] = w->measured_start_ps[c];
  return TRUE;
}

/* Reads rank r of workload w (PREFIX.<r>.et), fills its point-to-point
 * defaults, takes its measured baseline, resolves its groups and offers
 * it for sharing (w->share).  *all_starts is cleared when the rank has no
 * measured window start.  O(file + graph size). */
static gboolean load_rank(et_workload *w, load_memo *memo, const char *prefix, int r, unsigned build_flags,
                          gboolean *all_starts, GError **error)
{
  char *f = g_strdup_printf("%s.%d.et", prefix, r);
  if (memo != NULL && load_rank_same(w, memo, prefix, f, r, *all_starts)) {
    g_free(f);
    return TRUE;
  }
  et_graph *g = et_read_file(f, build_flags & ~(unsigned)ET_LOAD_NO_SHARE, error);
  g_free(f);
  if (g == NULL)
    return FALSE;
  w->ranks[r] = g;
  for (uint32_t c = 0; c < g->n_comms; c++) {
    et_comm *cm = &g->comms[c];
    if (cm->coll != ET_COLL_NONE)
      continue;
    /* SEND: comm_src defaults to the own rank; RECV: comm_dst likewise. */
    if (cm->src < 0)
      cm->src = r;
    if (cm->dst < 0)
      cm->dst = r;
  }
  /* The measured baseline the files carry (wisp's own convert output):
   * steps per rank; window starts only when every rank has one, as the
   * frontends give them. */
  w->measured_step_ps[r] = g->measured_step_ps;
  if (g->measured_start_ps >= 0 && *all_starts) {
    if (w->measured_start_ps == NULL)
      w->measured_start_ps = g_new(sim_time_ps, w->n_ranks);
    w->measured_start_ps[r] = g->measured_start_ps;
  }
  *all_starts = *all_starts && g->measured_start_ps >= 0;
  if (!et_workload_resolve_rank(w, r, error))
    return FALSE;
  if (w->share)
    et_share_offer(w, r);
  return TRUE;
}

et_workload *et_workload_load(const char *path, unsigned build_flags, GError **error)
{
  return et_workload_load_groups(path, build_flags, NULL, error);
}

et_workload *et_workload_load_groups(const char *path, unsigned build_flags, const char *comm_group,
                                     GError **error)
{
  g_return_val_if_fail(path != NULL, NULL);
  if (comm_group && !g_file_test(comm_group, G_FILE_TEST_IS_REGULAR)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: no such file (--comm-group names the comm_group.json to use)",
                comm_group);
    return NULL;
  }
  char *prefix = g_file_test(path, G_FILE_TEST_IS_DIR) ? dir_prefix(path, error) : g_strdup(path);
  if (prefix == NULL)
    return NULL;
  /* A rank file itself (PREFIX.<r>.et) stands for its prefix. */
  size_t pl = strlen(prefix);
  if (pl > 5 && g_str_has_suffix(prefix, ".et") && g_file_test(prefix, G_FILE_TEST_IS_REGULAR)) {
    size_t k = pl - 3;
    while (k > 0 && g_ascii_isdigit(prefix[k - 1]))
      k--;
    if (k < pl - 3 && k >= 2 && prefix[k - 1] == '.')
      prefix[k - 1] = '\0';
  }
  int n = 0;
  for (;; n++) {
    char *f = g_strdup_printf("%s.%d.et", prefix, n);
    gboolean exists = g_file_test(f, G_FILE_TEST_EXISTS);
    g_free(f);
    if (!exists || n == INT_MAX - 1)
      break;
  }
  if (n == 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s.0.et: no such file (expected rank files PREFIX.<rank>.et)",
                prefix);
    g_free(prefix);
    return NULL;
  }
  /* A file after a gap (PREFIX.5.et without PREFIX.4.et) would be ignored
   * silently; refuse instead. */
  char *dir = g_path_get_dirname(prefix), *base = g_path_get_basename(prefix);
  GDir *d = g_dir_open(dir, 0, NULL);
  if (d != NULL) {
    const char *e;
    size_t bl = strlen(base);
    while ((e = g_dir_read_name(d)) != NULL) {
      size_t len = strlen(e);
      if (len > bl + 4 && strncmp(e, base, bl) == 0 && e[bl] == '.' && strcmp(e + len - 3, ".et") == 0) {
        const char *num = e + bl + 1;
        char *endp;
        errno = 0;
        long r = strtol(num, &endp, 10);
        if (endp == e + len - 3 && endp > num && g_ascii_isdigit(num[0]) && errno == 0 && r >= n) {
          g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                      "%s/%s exists but %s.%d.et does not: rank files must be numbered 0..N-1 without gaps",
                      dir, e, prefix, n);
          g_dir_close(d);
          g_free(dir), g_free(base), g_free(prefix);
          return NULL;
        }
      }
    }
    g_dir_close(d);
  }
  et_workload *w = et_workload_new(n, prefix);
  /* The groups first: each rank is resolved as it is read, so that it can
   * share an earlier rank's graph (chakra/et_share.h) before the next
   * rank is read. */
  char *gdir = comm_group ? g_path_get_dirname(comm_group) : NULL;
  char *groups = comm_group ? g_strdup(comm_group) : g_build_filename(dir, "comm_group.json", NULL);
  char *names = g_build_filename(gdir ? gdir : dir, "comm_group_names.json", NULL);
  g_free(gdir);
  gboolean ok = TRUE;
  if (g_file_test(groups, G_FILE_TEST_EXISTS))
    ok = load_groups(w, groups, error) && (!g_file_test(names, G_FILE_TEST_EXISTS) ||
                                           load_group_names(w, names, error));
  if (ok && !(build_flags & ET_LOAD_NO_SHARE))
    et_share_attach(w);
  gboolean all_starts = n > 0;
  load_memo *memo = w->share ? load_memo_new() : NULL;
  for (int r = 0; ok && r < n; r++)
    ok = load_rank(w, memo, prefix, r, build_flags, &all_starts, error);
  load_memo_free(memo);
  if (!all_starts) {
    g_free(w->measured_start_ps);
    w->measured_start_ps = NULL;
  }
  if (w->share)
    et_share_seal(w->share);
  g_free(groups);
  g_free(names);
  g_free(dir);
  g_free(base);
  g_free(prefix);
  if (!ok) {
    et_workload_free(w);
    return NULL;
  }
  return w;
}
