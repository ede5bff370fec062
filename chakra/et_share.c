/* et_share.c: ranks sharing one graph up to a rank shift (see et_share.h
 * for the translation and its limits). */
#include "config.h"
#include "chakra/et_share.h"

#include <string.h>

struct et_share {
  int n_ranks;
  int n_distinct;
  int *canon;              /* per rank: the rank whose graph it replays */
  uint32_t *map_off;       /* per rank: its group map's first entry in maps; ET_NONE = groups unchanged */
  GArray *maps;            /* uint32_t group indices, n_used[canon] per sharing rank with a map */
  uint32_t **used;         /* per canonical rank: the groups its graph names, ascending (NULL when none) */
  uint32_t *n_used;
  /* Member lists of the groups mapped to other groups (for roots), copied
   * from the workload on first use; n_groups entries, NULL = not copied. */
  uint32_t n_groups;
  int **members;
  int *sizes;
  /* Detection (freed by et_share_seal): hash -> a canonical rank + 1, and
   * per rank the next canonical rank of equal hash (-1 = none). */
  GHashTable *by_hash;
  int *next;
  guint64 *hash;           /* per canonical rank: its graph's hash */
};

et_share *et_share_new(int n_ranks)
{
  g_return_val_if_fail(n_ranks > 0, NULL);
  et_share *s = g_new0(et_share, 1);
  s->n_ranks = n_ranks;
  s->canon = g_new(int, (gsize)n_ranks);
  s->map_off = g_new(uint32_t, (gsize)n_ranks);
  s->used = g_new0(uint32_t *, (gsize)n_ranks);
  s->n_used = g_new0(uint32_t, (gsize)n_ranks);
  s->next = g_new(int, (gsize)n_ranks);
  s->hash = g_new0(guint64, (gsize)n_ranks);
  for (int r = 0; r < n_ranks; r++) {
    s->canon[r] = r;
    s->map_off[r] = ET_NONE;
    s->next[r] = -1;
  }
  s->maps = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  s->by_hash = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  return s;
}

void et_share_seal(et_share *s)
{
  if (s == NULL)
    return;
  if (s->by_hash)
    g_hash_table_destroy(s->by_hash);
  s->by_hash = NULL;
  g_free(s->next);
  s->next = NULL;
  g_free(s->hash);
  s->hash = NULL;
}

/* The workload's owner hooks (et_graph.h) while it keeps its share. */
static void share_free_graphs(et_workload *w)
{
  et_share_free(w->share, w->ranks);
}

static int share_graph_rank(const et_workload *w, int r)
{
  return et_share_canonical(w->share, r);
}

void et_share_attach(et_workload *w)
{
  w->share = et_share_new(w->n_ranks);
  w->free_graphs = share_free_graphs;
  w->graph_rank = share_graph_rank;
}

void et_share_detach(et_workload *w)
{
  w->share = NULL;
  w->free_graphs = NULL;
  w->graph_rank = NULL;
}

void et_share_free(et_share *s, et_graph **ranks)
{
  if (s == NULL)
    return;
  et_share_seal(s);
  for (int r = 0; r < s->n_ranks; r++) {
    if (ranks && s->canon[r] == r)
      et_graph_free(ranks[r]);
    g_free(s->used[r]);
  }
  for (uint32_t g = 0; g < s->n_groups; g++)
    g_free(s->members[g]);
  g_free(s->members);
  g_free(s->sizes);
  g_free(s->canon);
  g_free(s->map_off);
  g_free(s->used);
  g_free(s->n_used);
  g_array_free(s->maps, TRUE);
  g_free(s);
}

int et_share_canonical(const et_share *s, int r)
{
  return s->canon[r];
}

int et_share_distinct(const et_share *s)
{
  return s->n_distinct;
}

/* p moved by d ranks, modulo n (p in 0..n-1, |d| < n). */
static inline int shift(int p, int d, int n)
{
  return (int)(((gint64)p + d + n) % n);
}

/* Index of group g in the ascending list used[0..k-1], or ET_NONE. */
static uint32_t find_group(const uint32_t *used, uint32_t k, uint32_t g)
{
  uint32_t lo = 0, hi = k;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (used[mid] < g)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < k && used[lo] == g ? lo : ET_NONE;
}

/* The member of mr at root's position in mc; root unchanged when it is
 * not a member of mc.  O(group size). */
static int root_at(const int *mc, int n, const int *mr, int root)
{
  for (int i = 0; i < n; i++)
    if (mc[i] == root)
      return mr[i];
  return root;
}

/* Member list (and *n its size) of group g. */
typedef const int *(*members_fn)(const void *ctx, uint32_t g, int *n);

/* c translated for a rank d ranks after its canonical rank, with the
 * group map (used, k, map; NULL = groups unchanged) and member lists from
 * members(ctx, ...). */
static void translate(const et_comm *c, int d, int n, const uint32_t *used, uint32_t k, const uint32_t *map,
                      members_fn members, const void *ctx, et_comm *tmp)
{
  *tmp = *c;
  if (c->src >= 0 && c->src < n)
    tmp->src = shift(c->src, d, n);
  if (c->dst >= 0 && c->dst < n)
    tmp->dst = shift(c->dst, d, n);
  if (map == NULL || c->group == ET_GROUP_WORLD)
    return;
  uint32_t idx = find_group(used, k, c->group);
  if (idx == ET_NONE || map[idx] == c->group)
    return;
  tmp->group = map[idx];
  if (c->root >= 0) {
    int nc = 0, nr = 0;
    const int *mc = members(ctx, c->group, &nc), *mr = members(ctx, map[idx], &nr);
    tmp->root = root_at(mc, MIN(nc, nr), mr, c->root);
  }
}

static const int *workload_members(const void *ctx, uint32_t g, int *n)
{
  const et_group *grp = et_workload_group(ctx, g);
  *n = grp->n_ranks;
  return grp->ranks;
}

static const int *share_members(const void *ctx, uint32_t g, int *n)
{
  const et_share *s = ctx;
  *n = s->sizes[g];
  return s->members[g];
}

void et_share_translate(const et_share *s, int rank, const et_comm *c, et_comm *tmp)
{
  int cr = s->canon[rank];
  if (cr == rank) {
    *tmp = *c;
    return;
  }
  const uint32_t *map = s->map_off[rank] == ET_NONE ? NULL : &g_array_index(s->maps, uint32_t, s->map_off[rank]);
  translate(c, rank - cr, s->n_ranks, s->used[cr], s->n_used[cr], map, share_members, s, tmp);
}

/* ---- detection ---- */

static inline guint64 mix(guint64 h, guint64 v)
{
  h ^= v + UINT64_C(0x9e3779b97f4a7c15) + (h << 6) + (h >> 2);
  return h * UINT64_C(0xff51afd7ed558ccd);
}

static inline guint64 rel(int p, int r, int n)
{
  return p < 0 || p >= n ? (guint64)(gint64)p : (guint64)shift(p, -r, n);
}

/* Hash of rank r's graph up to the translation: peers as deltas, groups
 * by size.  O(graph size). */
static guint64 hash_graph(const et_workload *w, const et_graph *g, int r)
{
  int n = w->n_ranks;
  guint64 h = mix(0, g->n_nodes);
  h = mix(h, g->n_comms);
  h = mix(h, (guint64)g->n_splits << 32 | g->split_width);
  h = mix(h, (guint64)g->n_comp_attrs << 32 | g->compute_slots);
  h = mix(h, g_str_hash(g->version ? g->version : ""));
  for (uint32_t i = 0; i <= g->n_nodes; i++) {
    const et_node *nd = &g->nodes[i];
    h = mix(h, (guint64)nd->parents << 32 | nd->children);
    if (i == g->n_nodes)
      break;
    h = mix(h, nd->id);
    h = mix(h, (guint64)nd->duration_ps);
    h = mix(h, (guint64)nd->start_ps);
    h = mix(h, (guint64)nd->comm << 16 | (guint64)nd->type << 8 | nd->flags);
    h = mix(h, g_str_hash(g->strings + nd->name));
  }
  for (uint32_t e = 0; e < g->nodes[g->n_nodes].parents; e++)
    h = mix(h, g->parent_edges[e]);
  for (uint32_t k = 0; k < g->n_comms; k++) {
    const et_comm *c = &g->comms[k];
    h = mix(h, c->bytes);
    h = mix(h, (guint64)c->split << 32 | (guint32)c->tag);
    h = mix(h, (guint64)c->coll << 8 | c->has_alloc);
    h = mix(h, c->buffer);
    h = mix(h, (guint64)c->alloc_ps);
    h = mix(h, rel(c->src, r, n));
    h = mix(h, rel(c->dst, r, n));
    h = mix(h, c->group == ET_GROUP_WORLD ? 0 : 1 + (guint64)et_workload_group(w, c->group)->n_ranks);
    h = mix(h, (guint64)(c->pg_name != ET_NONE) << 1 | (c->root >= 0));
  }
  for (uint32_t k = 0; k < g->n_splits; k++)
    h = mix(h, g->splits[k]);
  return h;
}

static int cmp_u32(gconstpointer a, gconstpointer b)
{
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

/* Groups named by g's records, ascending and unique; *k their count. */
static uint32_t *groups_of(const et_graph *g, uint32_t *k)
{
  GArray *a = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  for (uint32_t i = 0; i < g->n_comms; i++)
    if (g->comms[i].group != ET_GROUP_WORLD)
      g_array_append_val(a, g->comms[i].group);
  g_array_sort(a, cmp_u32);
  uint32_t m = 0;
  for (uint32_t i = 0; i < a->len; i++)
    if (m == 0 || g_array_index(a, uint32_t, m - 1) != g_array_index(a, uint32_t, i))
      g_array_index(a, uint32_t, m++) = g_array_index(a, uint32_t, i);
  *k = m;
  return (uint32_t *)(void *)g_array_free(a, m == 0);
}

/* Whether everything but the communication records is equal.  O(size). */
static gboolean same_body(const et_graph *a, const et_graph *b)
{
  if (a->n_nodes != b->n_nodes || a->n_comms != b->n_comms || a->n_splits != b->n_splits ||
      a->split_width != b->split_width || a->n_comp_attrs != b->n_comp_attrs || a->compute_slots != b->compute_slots ||
      g_strcmp0(a->version, b->version) != 0 || a->dropped_dangling_ctrl != b->dropped_dangling_ctrl ||
      a->dropped_attrs != b->dropped_attrs || a->dropped_cycle_edges != b->dropped_cycle_edges ||
      a->ignored_ctrl_edges != b->ignored_ctrl_edges || a->merged_dup_edges != b->merged_dup_edges ||
      a->replay_comm_nodes != b->replay_comm_nodes)
    return FALSE;
  for (uint32_t i = 0; i <= a->n_nodes; i++) {
    const et_node *x = &a->nodes[i], *y = &b->nodes[i];
    if (x->parents != y->parents || x->children != y->children)
      return FALSE;
    if (i < a->n_nodes && (x->id != y->id || x->duration_ps != y->duration_ps || x->start_ps != y->start_ps ||
                           x->comm != y->comm || x->type != y->type || x->flags != y->flags ||
                           strcmp(a->strings + x->name, b->strings + y->name) != 0))
      return FALSE;
  }
  size_t ne = a->nodes[a->n_nodes].parents, nc = a->nodes[a->n_nodes].children;
  if ((ne && memcmp(a->parent_edges, b->parent_edges, ne * sizeof(uint32_t)) != 0) ||
      (nc && memcmp(a->child_index, b->child_index, nc * sizeof(uint32_t)) != 0) ||
      (a->n_splits && memcmp(a->splits, b->splits, a->n_splits * sizeof(uint64_t)) != 0))
    return FALSE;
  for (uint32_t k = 0; k < a->n_comp_attrs; k++) {
    const et_comp_attr *x = &a->comp_attrs[k], *y = &b->comp_attrs[k];
    if (x->node != y->node || x->has_tensor_size != y->has_tensor_size || x->num_ops != y->num_ops ||
        x->tensor_size != y->tensor_size || !x->module != !y->module ||
        (x->module && strcmp(a->strings + x->module, b->strings + y->module) != 0))
      return FALSE;
  }
  return TRUE;
}

/* Whether rank r's graph b equals canonical rank c's graph a up to the
 * translation; on success map[] (s->n_used[c] entries) holds the group
 * map.  O(size), plus O(group size) per rooted record of a mapped group. */
static gboolean same_graph(const et_workload *w, const et_share *s, int c, const et_graph *a, int r,
                           const et_graph *b, uint32_t *map)
{
  if (!same_body(a, b))
    return FALSE;
  const uint32_t *used = s->used[c];
  uint32_t k = s->n_used[c];
  for (uint32_t i = 0; i < k; i++)
    map[i] = ET_NONE;
  for (uint32_t i = 0; i < a->n_comms; i++) {
    uint32_t ga = a->comms[i].group, gb = b->comms[i].group;
    if ((ga == ET_GROUP_WORLD) != (gb == ET_GROUP_WORLD))
      return FALSE;
    if (ga == ET_GROUP_WORLD)
      continue;
    uint32_t idx = find_group(used, k, ga);
    g_assert(idx != ET_NONE);
    if (map[idx] == ET_NONE) {
      if (et_workload_group(w, ga)->n_ranks != et_workload_group(w, gb)->n_ranks)
        return FALSE;
      map[idx] = gb;
    } else if (map[idx] != gb) {
      return FALSE;
    }
  }
  for (uint32_t i = 0; i < a->n_comms; i++) {
    const et_comm *x = &b->comms[i];
    et_comm t;
    translate(&a->comms[i], r - c, w->n_ranks, used, k, map, workload_members, w, &t);
    if (t.bytes != x->bytes || t.group != x->group || t.split != x->split || t.src != x->src || t.dst != x->dst ||
        t.tag != x->tag || t.root != x->root || t.coll != x->coll || t.has_alloc != x->has_alloc ||
        t.buffer != x->buffer || t.alloc_ps != x->alloc_ps || (t.pg_name == ET_NONE) != (x->pg_name == ET_NONE))
      return FALSE;
    /* A named group is its pg_name; the world may be named "" or not. */
    if (t.pg_name != ET_NONE && t.group == ET_GROUP_WORLD &&
        strcmp(a->strings + t.pg_name, b->strings + x->pg_name) != 0)
      return FALSE;
  }
  return TRUE;
}

/* Copies the member lists of groups g (for translating roots). */
static void keep_members(et_share *s, const et_workload *w, uint32_t g)
{
  if (s->members == NULL) {
    s->n_groups = w->groups->len;
    s->members = g_new0(int *, s->n_groups ? s->n_groups : 1);
    s->sizes = g_new0(int, s->n_groups ? s->n_groups : 1);
  }
  g_assert(g < s->n_groups);
  if (s->members[g] != NULL)
    return;
  const et_group *grp = et_workload_group(w, g);
  s->members[g] = g_memdup2(grp->ranks, sizeof(int) * (size_t)grp->n_ranks);
  s->sizes[g] = grp->n_ranks;
}

gboolean et_share_offer(et_workload *w, int r)
{
  et_share *s = w->share;
  g_return_val_if_fail(s != NULL && s->by_hash != NULL && r >= 0 && r < s->n_ranks, FALSE);
  et_graph *g = w->ranks[r];
  gint64 h = (gint64)hash_graph(w, g, r);
  gpointer first = g_hash_table_lookup(s->by_hash, &h);
  int head = first ? GPOINTER_TO_INT(first) - 1 : -1;
  for (int c = head; c >= 0; c = s->next[c]) {
    uint32_t k = s->n_used[c];
    uint32_t *map = g_new(uint32_t, k ? k : 1);
    if (same_graph(w, s, c, w->ranks[c], r, g, map)) {
      gboolean identity = TRUE;
      for (uint32_t i = 0; i < k; i++)
        identity = identity && map[i] == s->used[c][i];
      if (!identity) {
        s->map_off[r] = s->maps->len;
        g_array_append_vals(s->maps, map, k);
        for (uint32_t i = 0; i < k; i++)
          if (map[i] != s->used[c][i]) {
            keep_members(s, w, s->used[c][i]);
            keep_members(s, w, map[i]);
          }
      }
      g_free(map);
      et_graph_free(g);
      w->ranks[r] = w->ranks[c];
      s->canon[r] = c;
      return TRUE;
    }
    g_free(map);
  }
  s->used[r] = groups_of(g, &s->n_used[r]);
  s->next[r] = head;
  s->hash[r] = (guint64)h;
  gint64 *key = g_new(gint64, 1);
  *key = h;
  g_hash_table_replace(s->by_hash, key, GINT_TO_POINTER(r + 1));
  s->n_distinct++;
  return FALSE;
}

gboolean et_share_offer_same(et_workload *w, int r, int c)
{
  et_share *s = w->share;
  g_return_val_if_fail(s != NULL && s->by_hash != NULL && c >= 0 && c < r && r < s->n_ranks, FALSE);
  int cc = s->canon[c];
  const et_graph *g = w->ranks[cc];
  /* No peer in any record (no point-to-point: its defaults name the
   * rank): r's records are then c's, whatever the shift. */
  for (uint32_t i = 0; i < g->n_comms; i++)
    if (g->comms[i].src >= 0 || g->comms[i].dst >= 0)
      return FALSE;
  /* r's graph hashes as c's, i.e. as cc's; et_share_offer compares it
   * with the canonical graphs of that hash, newest first. */
  gint64 h = (gint64)s->hash[cc];
  gpointer first = g_hash_table_lookup(s->by_hash, &h);
  if (first == NULL || GPOINTER_TO_INT(first) - 1 != cc || s->next[cc] != -1)
    return FALSE;
  /* The groups r's records name are c's: cc's through c's map.  r must
   * be in each (et_workload_resolve_rank), else reading r reports it. */
  uint32_t k = s->n_used[cc];
  const uint32_t *map = s->map_off[c] == ET_NONE ? NULL : &g_array_index(s->maps, uint32_t, s->map_off[c]);
  for (uint32_t i = 0; i < k; i++) {
    const et_group *grp = et_workload_group(w, map != NULL ? map[i] : s->used[cc][i]);
    gboolean in = FALSE;
    for (int j = 0; j < grp->n_ranks && !in; j++)
      in = grp->ranks[j] == r;
    if (!in)
      return FALSE;
  }
  /* same_graph(cc, r) holds with c's map: r's records are c's, which are
   * cc's translated by that map (peers: none to shift). */
  if (map != NULL) {
    uint32_t *copy = g_memdup2(map, sizeof(uint32_t) * k);
    s->map_off[r] = s->maps->len;
    g_array_append_vals(s->maps, copy, k);
    g_free(copy);
  }
  w->ranks[r] = w->ranks[cc];
  s->canon[r] = cc;
  return TRUE;
}

int et_workload_share(et_workload *w)
{
  g_return_val_if_fail(w != NULL, 0);
  if (w->share != NULL)
    return et_share_distinct(w->share);
  if (w->scale != NULL || w->n_ranks < 1)
    return w->n_ranks;
  et_share_attach(w);
  for (int r = 0; r < w->n_ranks; r++)
    et_share_offer(w, r);
  et_share_seal(w->share);
  return et_share_distinct(w->share);
}

char *et_share_summary(const et_share *s, gboolean traced)
{
  if (s == NULL || s->n_distinct >= s->n_ranks)
    return NULL;
  return g_strdup_printf("%d %sranks share %d distinct graph%s", s->n_ranks, traced ? "traced " : "",
                         s->n_distinct, s->n_distinct == 1 ? "" : "s");
}
