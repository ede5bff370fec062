/* kineto_trace.c: the kt_trace of one Kineto file as a store: a new
 * empty trace, its interned strings (an open-addressing table, O(n)
 * expected per string of n bytes), skip counts, free, compaction to the
 * slim events the graphs read, and the canonical text dump tests and the
 * fuzzer compare.  It knows nothing of JSON: kineto_parse.c and
 * kineto_classify.c fill it.
 */
#include "config.h"

#include "frontends/kineto_parse_internal.h"

void kt_count_skip(GHashTable *h, const char *reason, uint64_t n)
{
  gpointer v = g_hash_table_lookup(h, reason);
  g_hash_table_insert(h, (gpointer)reason, GSIZE_TO_POINTER(GPOINTER_TO_SIZE(v) + n));
}


/* String hash for the intern table: eight bytes per multiply (FNV-style
 * xor-multiply on 64-bit words, then a final fold), about 4x fewer steps
 * than a per-byte loop on kernel names of 60-200 bytes.  O(n). */
static uint64_t str_hash_n(const char *key, size_t n)
{
  const unsigned char *s = (const unsigned char *)key;
  uint64_t h = UINT64_C(0xcbf29ce484222325) ^ n;
  while (n >= 8) {
    uint64_t w;
    memcpy(&w, s, 8);
    h = (h ^ w) * UINT64_C(0x9e3779b97f4a7c15);
    h ^= h >> 29;
    s += 8;
    n -= 8;
  }
  uint64_t w = 0;
  memcpy(&w, s, n);
  h = (h ^ w) * UINT64_C(0x9e3779b97f4a7c15);
  h ^= h >> 32;
  return h;
}

/* The intern table: open addressing with linear probing over slots that
 * keep each string's hash and length, so a lookup costs one hash of the
 * text and, on a hit, one memcmp (no strlen, no callbacks).  Kept at most
 * half full; doubling rehashes from the stored hashes.  Strings are
 * NUL-free (decoded texts are cut at an escaped NUL before interning). */
typedef struct {
  uint64_t hash;
  uint32_t id1;  /* string id + 1; 0 marks an empty slot */
  uint32_t len;
} intern_slot;

struct kt_intern {
  intern_slot *slots;
  size_t mask, used;
};

static kt_intern *intern_new(void)
{
  kt_intern *in = g_new0(kt_intern, 1);
  in->mask = 1023;
  in->slots = g_new0(intern_slot, in->mask + 1);
  return in;
}

static void intern_free(kt_intern *in)
{
  if (in) {
    g_free(in->slots);
    g_free(in);
  }
}

static void intern_grow(kt_intern *in)
{
  size_t cap = (in->mask + 1) * 2;
  intern_slot *old = in->slots;
  size_t old_cap = in->mask + 1;
  in->slots = g_new0(intern_slot, cap);
  in->mask = cap - 1;
  for (size_t i = 0; i < old_cap; i++) {
    if (!old[i].id1)
      continue;
    size_t k = old[i].hash & in->mask;
    while (in->slots[k].id1)
      k = (k + 1) & in->mask;
    in->slots[k] = old[i];
  }
  g_free(old);
}

/* Id of the n bytes at s, adding them on first sight.  O(n) expected. */
uint32_t kt_p_intern_n(kt_trace *t, const char *s, size_t n)
{
  kt_intern *in = t->intern;
  uint64_t h = str_hash_n(s, n);
  size_t k = h & in->mask;
  for (; in->slots[k].id1; k = (k + 1) & in->mask) {
    const intern_slot *sl = &in->slots[k];
    if (sl->hash == h && sl->len == n && !memcmp(g_ptr_array_index(t->strings, sl->id1 - 1), s, n))
      return sl->id1 - 1;
  }
  g_assert(n <= UINT32_MAX && t->strings->len < UINT32_MAX - 1);
  char *c = g_string_chunk_insert_len(t->chunk, s, (gssize)n);
  uint32_t id = t->strings->len;
  g_ptr_array_add(t->strings, c);
  in->slots[k] = (intern_slot){ .hash = h, .id1 = id + 1, .len = (uint32_t)n };
  if (++in->used * 2 > in->mask + 1)
    intern_grow(in);
  return id;
}

void kt_trace_free(kt_trace *t)
{
  if (!t)
    return;
  g_free(t->path);
  if (t->chunk)
    g_string_chunk_free(t->chunk);
  intern_free(t->intern);
  if (t->strings)
    g_ptr_array_free(t->strings, TRUE);
  if (t->events)
    g_array_free(t->events, TRUE);
  if (t->slim)
    g_array_free(t->slim, TRUE);
  if (t->metas)
    g_array_free(t->metas, TRUE);
  g_free(t->backend);
  if (t->pgs)
    g_ptr_array_free(t->pgs, TRUE);
  g_free(t->device_name);
  if (t->skipped)
    g_hash_table_destroy(t->skipped);
  g_free(t);
}

uint32_t *kt_trace_compact(kt_trace *t, const uint8_t *keep)
{
  guint n = t->events->len, kept = 0;
  uint32_t *remap = g_new(uint32_t, n ? n : 1);
  for (guint i = 0; i < n; i++) {
    remap[i] = keep[i] ? kept : KT_NONE;
    if (keep[i])
      kept++;
  }
  GArray *slim = g_array_sized_new(FALSE, FALSE, sizeof(kt_event_slim), kept);
  for (guint i = 0; i < n; i++)
    if (keep[i]) {
      kt_event_slim e = kt_trace_event(t, i);
      g_array_append_val(slim, e);
    }
  g_array_free(t->events, TRUE);
  t->events = NULL;
  t->slim = slim;
  g_array_free(t->metas, TRUE);
  t->metas = g_array_new(FALSE, FALSE, sizeof(kt_meta));
  intern_free(t->intern);
  t->intern = NULL;
  return remap;
}

static void pg_free(gpointer p)
{
  kt_pg *pg = p;
  g_free(pg->name);
  g_free(pg->desc);
  g_free(pg->ranks);
  g_free(pg);
}

kt_trace *kt_p_trace_new(const char *path)
{
  kt_trace *t = g_new0(kt_trace, 1);
  t->path = g_strdup(path);
  t->chunk = g_string_chunk_new(64 * 1024);
  t->intern = intern_new();
  t->strings = g_ptr_array_new();
  t->events = g_array_new(FALSE, FALSE, sizeof(kt_event));
  t->metas = g_array_new(FALSE, FALSE, sizeof(kt_meta));
  t->rank = t->world_size = KT_ABSENT;
  t->base_time_ns = KT_ABSENT;
  t->pgs = g_ptr_array_new_with_free_func(pg_free);
  t->skipped = g_hash_table_new(g_str_hash, g_str_equal);
  return t;
}

/* ---- canonical dump ---- */

static int cmp_reason(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

char *kt_trace_dump(const kt_trace *t)
{
  GString *s = g_string_new("");
  g_string_append_printf(s, "rank %" G_GINT64_FORMAT " world %" G_GINT64_FORMAT " dist %d backend %s\n", t->rank,
                         t->world_size, t->have_dist_info, t->backend ? t->backend : "-");
  g_string_append_printf(s, "origin %" G_GINT64_FORMAT " %d base_ns %" G_GINT64_FORMAT " device %s\n", t->origin_us,
                         t->have_origin, t->base_time_ns, t->device_name ? t->device_name : "-");
  g_string_append_printf(s, "bytes %" G_GUINT64_FORMAT " events %" G_GUINT64_FORMAT " mem %" G_GUINT64_FORMAT
                         "/%" G_GUINT64_FORMAT " missing_dur %" G_GUINT64_FORMAT "\n",
                         t->bytes_read, t->events_read, t->memory_allocs, t->memory_frees, t->missing_dur);
  for (guint i = 0; i < t->pgs->len; i++) {
    const kt_pg *pg = g_ptr_array_index(t->pgs, i);
    g_string_append_printf(s, "pg %s %s", pg->name ? pg->name : "-", pg->desc ? pg->desc : "-");
    for (int k = 0; k < pg->n_ranks; k++)
      g_string_append_printf(s, " %d", pg->ranks[k]);
    g_string_append_c(s, '\n');
  }
  for (guint i = 0; i < t->strings->len; i++)
    g_string_append_printf(s, "str %u %s\n", i, (const char *)g_ptr_array_index(t->strings, i));
  for (guint i = 0; i < t->events->len; i++) {
    const kt_event *e = &g_array_index(t->events, kt_event, i);
    g_string_append_printf(s, "ev %d ts %" G_GINT64_FORMAT " dur %" G_GINT64_FORMAT " corr %" G_GINT64_FORMAT
                           " ext %" G_GINT64_FORMAT " pid %" G_GINT64_FORMAT " tid %" G_GINT64_FORMAT
                           " aux %" G_GINT64_FORMAT " dev %d stream %d wait %d name %u meta %u idx %u\n",
                           e->kind, e->ts, e->dur, e->correlation, e->ext_id, e->pid, e->tid, e->aux, e->device,
                           e->stream, e->wait_stream, e->name, e->meta, e->file_index);
  }
  for (guint i = 0; i < t->metas->len; i++) {
    const kt_meta *m = &g_array_index(t->metas, kt_meta, i);
    g_string_append_printf(s, "meta %u %u %u %u %u %u %u %u %u %u", m->coll_name, m->dtype, m->pg_name, m->pg_desc,
                           m->pg_ranks, m->in_split, m->out_split, m->kind, m->in_type0, m->in_type1);
    const int64_t v[] = { m->in_nelems, m->out_nelems, m->group_size, m->rank_start, m->rank_stride, m->seq,
                          m->src_rank, m->dst_rank, m->rank, m->in_numel0, m->in_numel1 };
    for (size_t k = 0; k < G_N_ELEMENTS(v); k++)
      g_string_append_printf(s, " %" G_GINT64_FORMAT, v[k]);
    g_string_append_c(s, '\n');
  }
  GPtrArray *reasons = g_ptr_array_new();
  GHashTableIter it;
  gpointer k;
  g_hash_table_iter_init(&it, t->skipped);
  while (g_hash_table_iter_next(&it, &k, NULL))
    g_ptr_array_add(reasons, k);
  g_ptr_array_sort(reasons, cmp_reason);
  for (guint i = 0; i < reasons->len; i++)
    g_string_append_printf(s, "skip %s: %" G_GSIZE_FORMAT "\n", (const char *)g_ptr_array_index(reasons, i),
                           GPOINTER_TO_SIZE(g_hash_table_lookup(t->skipped, g_ptr_array_index(reasons, i))));
  g_ptr_array_free(reasons, TRUE);
  return g_string_free(s, FALSE);
}
