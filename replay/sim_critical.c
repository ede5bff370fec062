/* sim_critical.c: recording the binding predecessors during a replay and
 * walking the critical path afterwards (see sim_critical.h). */
#include "config.h"
#include "chakra/et_view.h"
#include "replay/sim_critical.h"

#include <stdlib.h>
#include <string.h>

/* ---- categories ---- */

const char *sim_crit_category_name(sim_crit_category c)
{
  static const char *const names[SIM_CRIT_N_CATEGORIES] = {
    "compute", "host", "idle", "communication", "communication_replayed", "other", "start_offset",
  };
  return (unsigned)c < SIM_CRIT_N_CATEGORIES ? names[c] : "?";
}

static gboolean is_comm_type(uint8_t t)
{
  return t == ET_NODE_COMM_COLL || t == ET_NODE_COMM_SEND || t == ET_NODE_COMM_RECV;
}

sim_crit_category sim_crit_classify(const et_node *n)
{
  if (is_comm_type(n->type))
    return (n->flags & ET_FLAG_REPLAY) ? SIM_CRIT_COMM_REPLAYED : SIM_CRIT_COMM;
  if (n->type == ET_NODE_COMP) {
    if (n->flags & ET_FLAG_CPU_OP)
      return SIM_CRIT_HOST;
    return (n->flags & ET_FLAG_DELAY) ? SIM_CRIT_IDLE : SIM_CRIT_COMPUTE;
  }
  return SIM_CRIT_OTHER;
}

/* A node the network simulates (its time is not a recorded duration). */
static gboolean is_simulated_comm(const et_node *n)
{
  return is_comm_type(n->type) && !(n->flags & ET_FLAG_REPLAY);
}

/* Time a timed node runs, exactly as sim_replay.c's start_node replays it:
 * REPLAY nodes and COMP nodes for their duration, everything else (METADATA,
 * INVALID) for 0. */
static sim_time_ps timed_duration(const et_node *n)
{
  return (n->flags & ET_FLAG_REPLAY) || n->type == ET_NODE_COMP ? n->duration_ps : 0;
}

/* ---- recording ---- */

/* A communication's start, recorded once per communication (a
 * collective's members or a send/receive pair share it): its data start,
 * the member that issued last (the data binding of every member that
 * issued earlier) and the collective's sequence number (ET_NONE for a
 * send/receive). */
typedef struct {
  sim_time_ps start;
  int32_t last_rank;
  uint32_t last_node;
  uint32_t seq;
} crit_comm;

/* A rank's entry for one of its et_comm records: the number of the
 * crit_comm in sim_crit_rec.comms, with CRIT_SELF set when this rank's
 * own issue is the start (its data binding is itself); CRIT_NONE until
 * the communication starts.  4 bytes per rank and record instead of a
 * 24-byte copy of the shared start per member. */
#define CRIT_SELF 0x80000000u
#define CRIT_NONE UINT32_MAX

/* A rank's recording: one block per rank holding end, parent and comm. */
typedef struct {
  const et_graph *g;
  sim_time_ps *end;        /* finish per node, -1 until finished (the rank's block) */
  uint32_t *parent;        /* binding predecessor per node, ET_NONE for roots */
  uint32_t *comm;          /* per et_comm record: its crit_comm (see CRIT_SELF) */
  uint32_t last;           /* node finished last (processing order), ET_NONE before any */
  sim_time_ps *stretch;    /* per node: time added by interference; NULL until a node is stretched */
  sim_time_ps *dur;        /* per node: duration a lever set, -1 = recorded; NULL until a lever changes one */
} crit_rank;

struct sim_crit_rec {
  const et_workload *w;
  int n_ranks;
  crit_rank *ranks;
  GArray *comms;           /* crit_comm, one per communication started */
};

sim_crit_rec *sim_crit_rec_new(const et_workload *w)
{
  sim_crit_rec *rec = g_new0(sim_crit_rec, 1);
  rec->w = w;
  rec->n_ranks = w->n_ranks;
  rec->ranks = g_new0(crit_rank, w->n_ranks > 0 ? w->n_ranks : 1);
  rec->comms = g_array_new(FALSE, FALSE, sizeof(crit_comm));
  for (int r = 0; r < w->n_ranks; r++) {
    crit_rank *cr = &rec->ranks[r];
    const et_graph *g = w->ranks[r];
    size_t nn = g->n_nodes ? g->n_nodes : 1, nc = g->n_comms ? g->n_comms : 1;
    cr->g = g;
    cr->end = g_malloc(nn * sizeof(sim_time_ps) + (nn + nc) * sizeof(uint32_t));
    cr->parent = (uint32_t *)(cr->end + nn);
    cr->comm = cr->parent + nn;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
      cr->parent[i] = ET_NONE;
      cr->end[i] = -1;
    }
    for (uint32_t c = 0; c < g->n_comms; c++)
      cr->comm[c] = CRIT_NONE;
    cr->last = ET_NONE;
  }
  return rec;
}

void sim_crit_rec_free(sim_crit_rec *rec)
{
  if (rec == NULL)
    return;
  for (int r = 0; r < rec->n_ranks; r++) {
    g_free(rec->ranks[r].end);
    g_free(rec->ranks[r].stretch);
    g_free(rec->ranks[r].dur);
  }
  g_array_free(rec->comms, TRUE);
  g_free(rec->ranks);
  g_free(rec);
}

void sim_crit_rec_finish(sim_crit_rec *rec, int rank, uint32_t node, sim_time_ps end)
{
  crit_rank *cr = &rec->ranks[rank];
  cr->end[node] = end;
  cr->last = node;
}

void sim_crit_rec_stretch(sim_crit_rec *rec, int rank, uint32_t node, sim_time_ps added)
{
  crit_rank *cr = &rec->ranks[rank];
  if (cr->stretch == NULL)
    cr->stretch = g_new0(sim_time_ps, cr->g->n_nodes ? cr->g->n_nodes : 1);
  cr->stretch[node] = added;
}

void sim_crit_rec_duration(sim_crit_rec *rec, int rank, uint32_t node, sim_time_ps d)
{
  crit_rank *cr = &rec->ranks[rank];
  if (cr->dur == NULL) {
    cr->dur = g_new(sim_time_ps, cr->g->n_nodes ? cr->g->n_nodes : 1);
    for (uint32_t k = 0; k < cr->g->n_nodes; k++)
      cr->dur[k] = -1;
  }
  cr->dur[node] = d;
}

void sim_crit_rec_bind(sim_crit_rec *rec, int rank, uint32_t node, uint32_t pred)
{
  rec->ranks[rank].parent[node] = pred;
}

void sim_crit_rec_bind_like(sim_crit_rec *rec, int rank, uint32_t node, uint32_t like)
{
  rec->ranks[rank].parent[node] = rec->ranks[rank].parent[like];
}

/* When a node started (a communication node: when it was issued): its
 * binding predecessor's finish, 0 for a root. */
static sim_time_ps issue_time(const crit_rank *cr, uint32_t node)
{
  uint32_t p = cr->parent[node];
  if (p == ET_NONE)
    return 0;
  g_assert(cr->end[p] >= 0);
  return cr->end[p];
}

void sim_crit_rec_comm_start(sim_crit_rec *rec, int n, const int *ranks, const uint32_t *nodes,
                             sim_time_ps start, uint32_t seq)
{
  /* The last issuer: lowest rank among the members whose issue is the
   * start (the one that issued last always is). */
  int last = -1;
  for (int k = 0; k < n; k++) {
    sim_time_ps t = issue_time(&rec->ranks[ranks[k]], nodes[k]);
    g_assert(t <= start);
    if (t == start && (last < 0 || ranks[k] < ranks[last]))
      last = k;
  }
  g_assert(last >= 0);
  uint32_t no = rec->comms->len;
  g_assert(no < CRIT_SELF); /* the entries' widths */
  crit_comm x = {start, ranks[last], nodes[last], seq};
  g_array_append_val(rec->comms, x);
  for (int k = 0; k < n; k++) {
    crit_rank *cr = &rec->ranks[ranks[k]];
    gboolean self = issue_time(cr, nodes[k]) == start;
    cr->comm[cr->g->nodes[nodes[k]].comm] = no | (self ? CRIT_SELF : 0);
  }
}

/* ---- the path ---- */

void sim_crit_path_free(sim_critical_path *p)
{
  if (p == NULL)
    return;
  g_array_unref(p->segments);
  g_array_unref(p->comm);
  g_array_unref(p->waits);
  g_array_unref(p->stragglers);
  g_array_unref(p->dependencies);
  g_free(p->rank_time);
  g_free(p);
}

static uint64_t comm_key(uint32_t group, uint8_t node_type, uint8_t op)
{
  return ((uint64_t)group << 16) | ((uint64_t)node_type << 8) | op;
}

static int cmp_comm(const void *a, const void *b)
{
  const sim_crit_comm *x = a, *y = b;
  if (x->time != y->time)
    return x->time > y->time ? -1 : 1;
  uint64_t kx = comm_key(x->group, x->node_type, x->op), ky = comm_key(y->group, y->node_type, y->op);
  return kx < ky ? -1 : kx > ky;
}

static int cmp_straggler(const void *a, const void *b)
{
  const sim_crit_straggler *x = a, *y = b;
  if (x->waited != y->waited)
    return x->waited > y->waited ? -1 : 1;
  return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Sums the waits per rank waited for into `into`: those at collectives
 * (coll) or those at send/recv; sorted by time descending.  O(waits + ranks). */
static void wait_totals(const sim_critical_path *p, gboolean coll, GArray *into)
{
  sim_crit_straggler *per = g_new0(sim_crit_straggler, p->n_ranks > 0 ? p->n_ranks : 1);
  for (guint k = 0; k < p->waits->len; k++) {
    const sim_crit_wait *x = &g_array_index(p->waits, sim_crit_wait, k);
    if ((x->seq != ET_NONE) != coll)
      continue;
    per[x->for_rank].waited += x->waited;
    per[x->for_rank].count++;
  }
  for (int r = 0; r < p->n_ranks; r++)
    if (per[r].count > 0) {
      per[r].rank = r;
      g_array_append_val(into, per[r]);
    }
  g_free(per);
  if (into->len > 1)
    qsort(into->data, into->len, sizeof(sim_crit_straggler), cmp_straggler);
}

/* Adds the totals (categories, ranks, (group, op) pairs, stragglers) of a
 * finished segment list.  O(segments + waits + ranks). */
static void path_totals(sim_critical_path *p, const sim_crit_rec *rec)
{
  GHashTable *idx = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  for (guint k = 0; k < p->segments->len; k++) {
    const sim_crit_segment *s = &g_array_index(p->segments, sim_crit_segment, k);
    sim_time_ps d = s->end - s->start;
    p->by_category[s->category] += d;
    p->rank_time[s->rank] += d;
    if (s->category != SIM_CRIT_COMM)
      continue;
    const et_graph *g = rec->ranks[s->rank].g;
    const et_node *n = &g->nodes[s->node];
    et_comm tc;
    const et_comm *c = n->comm == ET_NONE ? NULL : et_workload_traced_comm(rec->w, s->rank, n->comm, &tc);
    sim_crit_comm e = {
      .group = n->type == ET_NODE_COMM_COLL ? c->group : ET_GROUP_WORLD,
      .node_type = n->type,
      .op = n->type == ET_NODE_COMM_COLL ? c->coll : ET_COLL_NONE,
    };
    gint64 key = (gint64)comm_key(e.group, e.node_type, e.op);
    gpointer v = g_hash_table_lookup(idx, &key);
    if (v == NULL) {
      g_array_append_val(p->comm, e);
      g_hash_table_insert(idx, g_memdup2(&key, sizeof key), GUINT_TO_POINTER(p->comm->len));
      v = GUINT_TO_POINTER(p->comm->len);
    }
    g_array_index(p->comm, sim_crit_comm, GPOINTER_TO_UINT(v) - 1).time += d;
  }
  g_hash_table_destroy(idx);
  if (p->comm->len > 1) /* an empty GArray may hold no buffer at all */
    qsort(p->comm->data, p->comm->len, sizeof(sim_crit_comm), cmp_comm);

  wait_totals(p, TRUE, p->stragglers);
  wait_totals(p, FALSE, p->dependencies);
}

sim_critical_path *sim_crit_rec_build(const sim_crit_rec *rec)
{
  sim_critical_path *p = g_new0(sim_critical_path, 1);
  p->n_ranks = rec->n_ranks;
  p->end_rank = -1;
  p->segments = g_array_new(FALSE, FALSE, sizeof(sim_crit_segment));
  p->comm = g_array_new(FALSE, FALSE, sizeof(sim_crit_comm));
  p->waits = g_array_new(FALSE, FALSE, sizeof(sim_crit_wait));
  p->stragglers = g_array_new(FALSE, FALSE, sizeof(sim_crit_straggler));
  p->dependencies = g_array_new(FALSE, FALSE, sizeof(sim_crit_straggler));
  p->rank_time = g_new0(sim_time_ps, rec->n_ranks > 0 ? rec->n_ranks : 1);
  uint64_t total_nodes = 0;
  for (int r = 0; r < rec->n_ranks; r++) {
    const crit_rank *cr = &rec->ranks[r];
    total_nodes += cr->g->n_nodes;
    if (cr->last == ET_NONE)
      continue;
    if (p->end_rank < 0 || cr->end[cr->last] > p->step_time) {
      p->end_rank = r;
      p->step_time = cr->end[cr->last];
    }
  }
  if (p->end_rank < 0)
    return p;

  /* Walk back from the last node of the last rank.  Invariant: t is the
   * finish of (r, i); every step moves to a node whose finish was
   * processed earlier, so at most total_nodes steps. */
  int r = p->end_rank;
  uint32_t i = rec->ranks[r].last;
  sim_time_ps t = p->step_time;
  for (;;) {
    const crit_rank *cr = &rec->ranks[r];
    const et_node *n = &cr->g->nodes[i];
    g_assert(p->segments->len <= total_nodes);
    g_assert(cr->end[i] == t);
    sim_crit_segment seg = {.rank = r, .node = i, .category = sim_crit_classify(n), .end = t};
    int next_r = r;
    uint32_t from = i;      /* the node whose binding predecessor comes next */
    if (is_simulated_comm(n)) {
      uint32_t e = cr->comm[n->comm];
      g_assert(e != CRIT_NONE);
      const crit_comm *c = &g_array_index(rec->comms, crit_comm, e & ~CRIT_SELF);
      int32_t peer_rank = (e & CRIT_SELF) ? r : c->last_rank;
      uint32_t peer_node = (e & CRIT_SELF) ? i : c->last_node;
      g_assert(c->start >= 0 && c->start <= t && peer_rank >= 0);
      seg.start = c->start;
      sim_time_ps issued = issue_time(cr, i);
      if (peer_rank != r || peer_node != i) {
        next_r = peer_rank;
        from = peer_node;
        g_assert(issue_time(&rec->ranks[next_r], from) == c->start);
        if (next_r != r) {
          sim_crit_wait x = {.rank = r, .for_rank = next_r, .node = i, .seq = c->seq, .at = c->start,
                             .waited = c->start - issued};
          g_assert(x.waited > 0);
          g_array_append_val(p->waits, x);
        }
      } else {
        g_assert(issued == c->start);
      }
    } else {
      sim_time_ps added = cr->stretch ? cr->stretch[i] : 0;
      sim_time_ps d = cr->dur && cr->dur[i] >= 0 ? cr->dur[i] : timed_duration(n);
      seg.start = t - d - added;
      p->interference += added;
      g_assert(seg.start >= 0);
    }
    g_array_append_val(p->segments, seg);
    t = seg.start;
    uint32_t pred = rec->ranks[next_r].parent[from];
    if (pred == ET_NONE) {
      /* A root starts at time 0, or at its rank's measured start
       * (sim_replay_options.measured_starts): that offset is a segment of
       * its own. */
      g_assert(t >= 0);
      if (t > 0) {
        sim_crit_segment off = {.rank = next_r, .node = from, .category = SIM_CRIT_START_OFFSET, .start = 0, .end = t};
        g_array_append_val(p->segments, off);
      }
      break;
    }
    r = next_r;
    i = pred;
  }

  /* Time order, then check the tiling: [0, step] without gaps or overlaps. */
  sim_crit_segment *s = (sim_crit_segment *)(void *)p->segments->data;
  for (guint a = 0, b = p->segments->len ? p->segments->len - 1 : 0; a < b; a++, b--) {
    sim_crit_segment x = s[a];
    s[a] = s[b];
    s[b] = x;
  }
  for (guint k = 0; k + 1 < p->segments->len; k++)
    g_assert(s[k].end == s[k + 1].start && s[k].start <= s[k].end);
  g_assert(p->segments->len > 0 && s[0].start == 0 && s[p->segments->len - 1].end == p->step_time);
  {
    /* Waits were found walking backwards. */
    sim_crit_wait *wv = (sim_crit_wait *)(void *)p->waits->data;
    for (guint a = 0, b = p->waits->len ? p->waits->len - 1 : 0; a < b; a++, b--) {
      sim_crit_wait x = wv[a];
      wv[a] = wv[b];
      wv[b] = x;
    }
  }
  path_totals(p, rec);
  sim_time_ps sum = 0;
  for (int c = 0; c < SIM_CRIT_N_CATEGORIES; c++)
    sum += p->by_category[c];
  g_assert(sum == p->step_time);
  return p;
}

GArray *sim_crit_runs(const sim_critical_path *p)
{
  GArray *runs = g_array_new(FALSE, FALSE, sizeof(sim_crit_run));
  for (guint k = 0; k < p->segments->len; k++) {
    const sim_crit_segment *s = &g_array_index(p->segments, sim_crit_segment, k);
    sim_crit_run *last = runs->len ? &g_array_index(runs, sim_crit_run, runs->len - 1) : NULL;
    if (last && last->rank == s->rank && last->category == s->category) {
      last->end = s->end;
      last->nodes++;
      last->last = s->node;
      continue;
    }
    sim_crit_run x = {.rank = s->rank, .category = s->category, .start = s->start, .end = s->end, .nodes = 1,
                      .first = s->node, .last = s->node};
    g_array_append_val(runs, x);
  }
  return runs;
}

/* ---- words ---- */

static const char *group_name(const et_workload *w, uint32_t g)
{
  return et_workload_group_name(w, g);
}

/* "5 (dp)": the group's name and, when the workload has one, its
 * description (g_free). */
static char *group_label(const et_workload *w, uint32_t g)
{
  const et_group *grp = g == ET_GROUP_WORLD ? NULL : et_workload_group(w, g);
  if (grp && grp->desc && *grp->desc && strcmp(grp->desc, grp->name) != 0)
    return g_strdup_printf("%s (%s)", grp->name, grp->desc);
  return g_strdup(group_name(w, g));
}

static const char *comm_op_name(const sim_crit_comm *c)
{
  if (c->node_type == ET_NODE_COMM_SEND)
    return "send";
  if (c->node_type == ET_NODE_COMM_RECV)
    return "recv";
  return et_coll_short_name(c->op);
}

static double pct(sim_time_ps part, sim_time_ps whole)
{
  return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
}

/* "all_reduce #3 of group dp" or "recv from rank 0 (tag 5)". */
static char *wait_where(const sim_crit_wait *x, const et_workload *w)
{
  const et_graph *g = w->ranks[x->rank];
  const et_node *n = &g->nodes[x->node];
  et_comm tc;
  const et_comm *c = n->comm == ET_NONE ? NULL : et_workload_traced_comm(w, x->rank, n->comm, &tc);
  if (n->type == ET_NODE_COMM_SEND)
    return g_strdup_printf("send to rank %d (tag %d)", c->dst, c->tag);
  if (n->type == ET_NODE_COMM_RECV)
    return g_strdup_printf("recv from rank %d (tag %d)", c->src, c->tag);
  char *gl = group_label(w, c->group);
  char *s = g_strdup_printf("%s #%u of group %s", et_coll_short_name(c->coll), x->seq, gl);
  g_free(gl);
  return s;
}

const char *sim_crit_headline_name(sim_crit_category c)
{
  switch (c) {
  case SIM_CRIT_COMPUTE: return "GPU compute";
  case SIM_CRIT_HOST: return "host/CPU work";
  case SIM_CRIT_IDLE: return "unexplained GPU idle (gaps replayed at their measured length)";
  case SIM_CRIT_COMM: return "communication";
  case SIM_CRIT_COMM_REPLAYED: return "replayed communication (measured durations that do not respond to the network)";
  default: return "other nodes";
  }
}

/* Where category c lies on the path: " (rank R)" when on one rank, else
 * " (of it, X % of the path on rank R, the rest on N other ranks)": X is
 * that category's time on R, not all of R's path time (the --verbose
 * "path time by rank" line).  O(segments + ranks). */
static void append_where(GString *s, const sim_critical_path *p, int c)
{
  sim_time_ps *per = g_new0(sim_time_ps, p->n_ranks > 0 ? p->n_ranks : 1);
  for (guint k = 0; k < p->segments->len; k++) {
    const sim_crit_segment *x = &g_array_index(p->segments, sim_crit_segment, k);
    if (x->category == c)
      per[x->rank] += x->end - x->start;
  }
  int best = -1, ranks = 0;
  for (int r = 0; r < p->n_ranks; r++) {
    if (per[r] > 0)
      ranks++;
    if (per[r] > 0 && (best < 0 || per[r] > per[best]))
      best = r;
  }
  if (ranks == 1)
    g_string_append_printf(s, " (rank %d)", best);
  else if (ranks > 1)
    g_string_append_printf(s, " (of it, %.1f %% of the path on rank %d, the rest on %d other rank%s)",
                           pct(per[best], p->step_time), best, ranks - 1, ranks - 1 == 1 ? "" : "s");
  g_free(per);
}

char *sim_crit_bound_sentence(const sim_critical_path *p, const et_workload *w)
{
  if (p == NULL || p->step_time <= 0)
    return g_strdup("the step takes no time, so nothing bounds it");
  const sim_time_ps T = p->step_time;
  int best = 0;
  for (int c = 1; c < SIM_CRIT_N_CATEGORIES; c++)
    if (p->by_category[c] > p->by_category[best])
      best = c;
  const sim_crit_straggler *top = p->stragglers->len ? &g_array_index(p->stragglers, sim_crit_straggler, 0) : NULL;
  GString *s = g_string_new("the step is bound by ");
  /* Waits in ms with the straggler and dependency lines' six decimals, so
   * the sentence repeats their figures (it said 803.199 us beside
   * "0.803199 ms"). */
  char *tw = top ? g_strdup_printf("%.6f ms", (double)top->waited / 1e9) : NULL;
  if (top && top->waited > p->by_category[best]) {
    g_string_append_printf(s, "a straggler: rank %d's work makes the ranks on the path wait %s (%.1f %% of the step) "
                           "at %u collective%s; on the path, %s is %.1f %%",
                           top->rank, tw, pct(top->waited, T), top->count, top->count == 1 ? "" : "s",
                           sim_crit_category_name(best), pct(p->by_category[best], T));
  } else {
    g_string_append_printf(s, "%s: %.1f %% of the critical path", sim_crit_headline_name((sim_crit_category)best), pct(p->by_category[best], T));
    if (best == SIM_CRIT_COMM) {
      g_string_append(s, " (");
      for (guint k = 0; k < p->comm->len && k < 3; k++) {
        const sim_crit_comm *c = &g_array_index(p->comm, sim_crit_comm, k);
        char *gl = group_label(w, c->group);
        g_string_append_printf(s, "%s%s on group %s: %.1f %%", k ? ", " : "", comm_op_name(c), gl,
                               pct(c->time, T));
        g_free(gl);
      }
      if (p->comm->len > 3)
        g_string_append_printf(s, ", %u more", p->comm->len - 3);
      g_string_append_c(s, ')');
    } else {
      append_where(s, p, best);
    }
    if (top)
      g_string_append_printf(s, "; rank %d's work makes the ranks on the path wait %s (%.1f %% of the step) at %u "
                             "collective%s", top->rank, tw, pct(top->waited, T), top->count,
                             top->count == 1 ? "" : "s");
    const sim_crit_straggler *dep =
        p->dependencies->len ? &g_array_index(p->dependencies, sim_crit_straggler, 0) : NULL;
    if (dep) {
      char *dw = g_strdup_printf("%.6f ms", (double)dep->waited / 1e9);
      g_string_append_printf(s, "; the path waits %s (%.1f %% of the step) for data from rank %d at %u send/recv "
                             "(a dependency, e.g. a pipeline stage's input)", dw, pct(dep->waited, T), dep->rank,
                             dep->count);
      g_free(dw);
    }
  }
  sim_time_ps comm = p->by_category[SIM_CRIT_COMM];
  if (best == SIM_CRIT_COMM && !(top && top->waited > comm))
    g_string_append(s, "; a faster network can shorten the step by at most that much while the schedule stays "
                       "the same");
  else if (comm > 0)
    g_string_append_printf(s, "; communication transfer (data moving) is %.1f %% of the path, so a faster network can shorten the "
                           "step by at most that much while the schedule stays the same", pct(comm, T));
  else
    g_string_append(s, "; no simulated communication is on it, so a faster network cannot shorten the step while "
                       "the schedule stays the same");
  sim_time_ps rep = p->by_category[SIM_CRIT_COMM_REPLAYED];
  if (rep > 0 && best != SIM_CRIT_COMM_REPLAYED)
    g_string_append_printf(s, " (another %.1f %% is replayed communication, fixed at its measured duration)",
                           pct(rep, T));
  g_free(tw);
  return g_string_free(s, FALSE);
}

/* ---- output ---- */

void sim_crit_print_summary(const sim_critical_path *p, const et_workload *w, FILE *out)
{
  const sim_time_ps T = p->step_time;
  int on_ranks = 0;
  for (int r = 0; r < p->n_ranks; r++)
    on_ranks += p->rank_time[r] > 0;
  fprintf(out, "critical path: %.6f ms (the step time), %u nodes, ends on rank %d\n", (double)T / 1e9,
          p->segments->len, p->end_rank);
  fprintf(out, "  %-26s %14s %9s\n", "category", "time_ms", "share_%");
  for (int c = 0; c < SIM_CRIT_N_CATEGORIES; c++) {
    fprintf(out, "  %-26s %14.6f %9.2f\n", sim_crit_category_name(c), (double)p->by_category[c] / 1e9,
            pct(p->by_category[c], T));
    if (c == SIM_CRIT_COMPUTE && p->interference > 0)
      fprintf(out, "    %-24s %14.6f %9.2f\n", "of which interference", (double)p->interference / 1e9,
              pct(p->interference, T));
    if (c != SIM_CRIT_COMM)
      continue;
    const guint top = 3;
    for (guint k = 0; k < p->comm->len && k < top; k++) {
      const sim_crit_comm *x = &g_array_index(p->comm, sim_crit_comm, k);
      char *gl = group_label(w, x->group);
      char *label = g_strdup_printf("%s on %s", comm_op_name(x), gl);
      fprintf(out, "    %-24s %14.6f %9.2f\n", label, (double)x->time / 1e9, pct(x->time, T));
      g_free(label);
      g_free(gl);
    }
    if (p->comm->len > top)
      fprintf(out, "    ... %u more (op, group) pair%s (see --json)\n", p->comm->len - top,
              p->comm->len - top == 1 ? "" : "s");
  }
  fprintf(out, "  path time by rank (%d rank%s):", on_ranks, on_ranks == 1 ? "" : "s");
  /* The four ranks holding most of the path, by time then rank. */
  gboolean *shown = g_new0(gboolean, p->n_ranks > 0 ? p->n_ranks : 1);
  for (int k = 0; k < 4 && k < on_ranks; k++) {
    int b = -1;
    for (int r = 0; r < p->n_ranks; r++)
      if (!shown[r] && p->rank_time[r] > 0 && (b < 0 || p->rank_time[r] > p->rank_time[b]))
        b = r;
    shown[b] = TRUE;
    fprintf(out, "%s rank %d %.2f %%", k ? "," : "", b, pct(p->rank_time[b], T));
  }
  g_free(shown);
  if (on_ranks > 4)
    fprintf(out, ", ...");
  fputc('\n', out);
  if (p->stragglers->len == 0)
    fprintf(out, "  straggler waits: none (the path never waits at a collective for a late member)\n");
  for (guint k = 0; k < p->stragglers->len && k < 3; k++) {
    const sim_crit_straggler *x = &g_array_index(p->stragglers, sim_crit_straggler, k);
    fprintf(out, "  straggler waits: rank %d made the path wait %.6f ms (%.2f %% of the step) at %u "
            "collective%s\n", x->rank, (double)x->waited / 1e9, pct(x->waited, T), x->count,
            x->count == 1 ? "" : "s");
  }
  if (p->stragglers->len > 3)
    fprintf(out, "  ... %u more ranks caused waits (see --json)\n", p->stragglers->len - 3);
  for (guint k = 0; k < p->dependencies->len && k < 3; k++) {
    const sim_crit_straggler *x = &g_array_index(p->dependencies, sim_crit_straggler, k);
    fprintf(out, "  dependency waits: the path waited %.6f ms (%.2f %% of the step) for data from rank %d at %u "
            "send/recv (its input, e.g. a pipeline stage's; not a straggler)\n", (double)x->waited / 1e9,
            pct(x->waited, T), x->rank, x->count);
  }
  if (p->dependencies->len > 3)
    fprintf(out, "  ... %u more ranks the path waited for data from (see --json)\n", p->dependencies->len - 3);
  if (p->waits->len > 0) {
    /* The largest single wait, with where it happened. */
    const sim_crit_wait *big = NULL;
    for (guint k = 0; k < p->waits->len; k++) {
      const sim_crit_wait *x = &g_array_index(p->waits, sim_crit_wait, k);
      if (big == NULL || x->waited > big->waited)
        big = x;
    }
    char *where = wait_where(big, w);
    fprintf(out, "  largest wait: rank %d waited %.6f ms for rank %d at %s\n", big->rank, (double)big->waited / 1e9,
            big->for_rank, where);
    g_free(where);
  }
  char *b = sim_crit_bound_sentence(p, w);
  fprintf(out, "  bound: %s\n", b);
  g_free(b);
}

void sim_crit_print_chain(const sim_critical_path *p, const et_workload *w, FILE *out, int max_rows)
{
  GArray *runs = sim_crit_runs(p);
  char a[32], b[32], c[32];
  fprintf(out, "critical path chain (%u runs of consecutive nodes on one rank and category, in time order):\n",
          runs->len);
  fprintf(out, "%6s %-22s %16s %16s %16s %7s  %s\n", "rank", "category", "start_ns", "end_ns", "duration_ns",
          "nodes", "first .. last");
  for (guint k = 0; k < runs->len; k++) {
    if (max_rows >= 0 && k >= (guint)max_rows) {
      fprintf(out, "   ... %u more runs left out (--max-rows %d; see --json)\n", runs->len - k, max_rows);
      break;
    }
    const sim_crit_run *x = &g_array_index(runs, sim_crit_run, k);
    const et_graph *g = w->ranks[x->rank];
    fprintf(out, "%6d %-22s %16s %16s %16s %7u  %s", x->rank, sim_crit_category_name(x->category),
            wisp_ns_string(x->start, a), wisp_ns_string(x->end, b), wisp_ns_string(x->end - x->start, c), x->nodes,
            et_node_name(g, x->first));
    if (x->nodes > 1)
      fprintf(out, " .. %s", et_node_name(g, x->last));
    fputc('\n', out);
  }
  g_array_unref(runs);
}

void sim_crit_write_json(wisp_json *j, const char *key, const sim_critical_path *p, const et_workload *w,
                         gboolean with_segments)
{
  /* One line per list entry, wherever the object sits in the document:
   * containers two levels below this object's are written flat. */
  int saved_flat = wisp_json_set_flat_depth(j, MAX(j->flat_depth, j->depth + 3));
  wisp_json_begin_object(j, key);
  wisp_json_int(j, "end_rank", p->end_rank);
  wisp_json_ns(j, "step_time_ns", p->step_time);
  wisp_json_uint(j, "nodes", p->segments->len);
  wisp_json_begin_object(j, "by_category");
  for (int c = 0; c < SIM_CRIT_N_CATEGORIES; c++) {
    char k[48];
    g_snprintf(k, sizeof k, "%s_ns", sim_crit_category_name(c));
    wisp_json_ns(j, k, p->by_category[c]);
  }
  wisp_json_end_object(j);
  if (p->interference_model)
    wisp_json_ns(j, "interference_ns", p->interference);
  wisp_json_begin_array(j, "communication");
  for (guint k = 0; k < p->comm->len; k++) {
    const sim_crit_comm *x = &g_array_index(p->comm, sim_crit_comm, k);
    wisp_json_begin_object(j, NULL);
    wisp_json_string(j, "group", group_name(w, x->group));
    wisp_json_string(j, "op", comm_op_name(x));
    wisp_json_ns(j, "time_ns", x->time);
    wisp_json_end_object(j);
  }
  wisp_json_end_array(j);
  wisp_json_begin_array(j, "ranks");
  for (int r = 0; r < p->n_ranks; r++) {
    if (p->rank_time[r] <= 0)
      continue;
    wisp_json_begin_object(j, NULL);
    wisp_json_int(j, "rank", r);
    wisp_json_ns(j, "time_ns", p->rank_time[r]);
    wisp_json_end_object(j);
  }
  wisp_json_end_array(j);
  wisp_json_begin_array(j, "stragglers");
  for (guint k = 0; k < p->stragglers->len; k++) {
    const sim_crit_straggler *x = &g_array_index(p->stragglers, sim_crit_straggler, k);
    wisp_json_begin_object(j, NULL);
    wisp_json_int(j, "rank", x->rank);
    wisp_json_ns(j, "waited_ns", x->waited);
    wisp_json_uint(j, "at", x->count);
    wisp_json_end_object(j);
  }
  wisp_json_end_array(j);
  wisp_json_begin_array(j, "dependency_waits");
  for (guint k = 0; k < p->dependencies->len; k++) {
    const sim_crit_straggler *x = &g_array_index(p->dependencies, sim_crit_straggler, k);
    wisp_json_begin_object(j, NULL);
    wisp_json_int(j, "rank", x->rank);
    wisp_json_ns(j, "waited_ns", x->waited);
    wisp_json_uint(j, "at", x->count);
    wisp_json_end_object(j);
  }
  wisp_json_end_array(j);
  char *b = sim_crit_bound_sentence(p, w);
  wisp_json_string(j, "bound", b);
  g_free(b);
  if (with_segments) {
    GArray *runs = sim_crit_runs(p);
    wisp_json_begin_array(j, "segments");
    for (guint k = 0; k < runs->len; k++) {
      const sim_crit_run *x = &g_array_index(runs, sim_crit_run, k);
      const et_graph *g = w->ranks[x->rank];
      wisp_json_begin_object(j, NULL);
      wisp_json_int(j, "rank", x->rank);
      wisp_json_string(j, "category", sim_crit_category_name(x->category));
      wisp_json_ns(j, "start_ns", x->start);
      wisp_json_ns(j, "end_ns", x->end);
      wisp_json_uint(j, "nodes", x->nodes);
      wisp_json_string(j, "first", et_node_name(g, x->first));
      wisp_json_string(j, "last", et_node_name(g, x->last));
      wisp_json_end_object(j);
    }
    wisp_json_end_array(j);
    g_array_unref(runs);
  }
  wisp_json_end_object(j);
  wisp_json_set_flat_depth(j, saved_flat);
}
