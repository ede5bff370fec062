/* study_timeline.c: Chrome trace event JSON (the JSON Object form that
 * Perfetto and chrome://tracing load) streamed from the replay observer.
 *
 * Layout (conventions.md section 3): pid = rank ("rank N"); tracks (tid)
 * for compute, CPU ops, idle gaps, replayed communication, point-to-point
 * and one per communicator group.  Every slice is a complete event
 * ("ph": "X") with ts and dur in microseconds written exactly from integer
 * picoseconds (6 decimals).  Slices on one track must nest, and concurrent
 * operations of one rank on one track (two collectives of a group in
 * flight, several compute slots) would overlap partially, so each track has
 * lanes: an event goes to the first lane whose last event ended at or
 * before its start; a track's lane k is tid track * 1000 + k.  Events arrive
 * in order of their end time, so a lane's events never overlap.
 *
 * Memory: O(ranks x tracks x lanes) for the lanes; events are written as
 * they arrive (nothing is buffered but the output stream), then metadata
 * events naming processes and threads, in sorted order.  The file is
 * written to a temporary name and renamed when complete. */
#include "config.h"
#include "studies/study.h"
#include "replay/sim_report.h"
#include "common/wisp_json.h"

#include <stdlib.h>
#include <string.h>

enum {
  TRACK_COMPUTE = 0,
  TRACK_CPU = 1,
  TRACK_DELAY = 2,
  TRACK_REPLAY = 3,
  TRACK_P2P = 4,
  TRACK_WORLD = 5,
  TRACK_GROUP0 = 6,
  LANES_PER_TRACK = 1000,
};

struct study_timeline {
  wisp_afile *f;
  FILE *out;
  const et_workload *w;
  gboolean *rank_on;
  sim_time_ps from, to;
  sim_replay_observer obs;
  uint64_t events, lane_overflow;
  gboolean first;
  GHashTable *lanes;  /* (rank << 32 | track) -> GArray of sim_time_ps (last end per lane) */
  GHashTable *used;   /* (rank << 32 | tid) -> 1 */
};

static void write_us(FILE *out, sim_time_ps t)
{
  /* t >= 0 in the replay; exact decimal microseconds. */
  fprintf(out, "%" G_GINT64_FORMAT ".%06" G_GINT64_FORMAT, t / SIM_PS_PER_US, t % SIM_PS_PER_US);
}

static int place(study_timeline *tl, int rank, int track, sim_time_ps start, sim_time_ps end)
{
  uint64_t key = (uint64_t)rank << 32 | (uint32_t)track;
  GArray *l = g_hash_table_lookup(tl->lanes, &key);
  if (l == NULL) {
    uint64_t *k = g_new(uint64_t, 1);
    *k = key;
    l = g_array_new(FALSE, FALSE, sizeof(sim_time_ps));
    g_hash_table_insert(tl->lanes, k, l);
  }
  guint i = 0;
  while (i < l->len && g_array_index(l, sim_time_ps, i) > start)
    i++;
  if (i == l->len) {
    if (l->len >= LANES_PER_TRACK) {
      tl->lane_overflow++;
      i = LANES_PER_TRACK - 1;
    } else {
      g_array_append_val(l, end);
    }
  }
  g_array_index(l, sim_time_ps, i) = end;
  int tid = track * LANES_PER_TRACK + (int)i;
  uint64_t u = (uint64_t)rank << 32 | (uint32_t)tid;
  if (!g_hash_table_contains(tl->used, &u))
    g_hash_table_add(tl->used, g_memdup2(&u, sizeof u));
  return tid;
}

static gboolean keep(const study_timeline *tl, int rank, sim_time_ps start, sim_time_ps end)
{
  if (rank < 0 || rank >= tl->w->n_ranks || (tl->rank_on && !tl->rank_on[rank]))
    return FALSE;
  if (end < tl->from || (tl->to >= 0 && start >= tl->to))
    return FALSE;
  return TRUE;
}

static void begin_event(study_timeline *tl, const char *name, const char *cat, int rank, int tid, sim_time_ps start,
                        sim_time_ps end)
{
  FILE *o = tl->out;
  fputs(tl->first ? "\n" : ",\n", o);
  tl->first = FALSE;
  fputs("{\"name\":", o);
  wisp_json_write_escaped(o, name);
  fprintf(o, ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":", cat, rank, tid);
  write_us(o, start);
  fputs(",\"dur\":", o);
  write_us(o, end - start);
  tl->events++;
}

static void on_node(void *ctx, int rank, const et_graph *g, uint32_t node, sim_time_ps start, sim_time_ps end)
{
  study_timeline *tl = ctx;
  const et_node *n = &g->nodes[node];
  int track;
  const char *cat;
  if (n->type == ET_NODE_COMP) {
    if (n->flags & ET_FLAG_DELAY) {
      track = TRACK_DELAY;
      cat = "idle_gap";
    } else if (n->flags & ET_FLAG_CPU_OP) {
      track = TRACK_CPU;
      cat = "cpu";
    } else {
      track = TRACK_COMPUTE;
      cat = "compute";
    }
  } else if (n->comm != ET_NONE && (n->flags & ET_FLAG_REPLAY)) {
    track = TRACK_REPLAY;
    cat = "replayed_comm";
  } else {
    return; /* communication comes through on_comm; metadata nodes take no time */
  }
  if (!keep(tl, rank, start, end))
    return;
  int tid = place(tl, rank, track, start, end);
  begin_event(tl, et_node_name(g, node), cat, rank, tid, start, end);
  fprintf(tl->out, ",\"args\":{\"node_id\":%" G_GUINT64_FORMAT "}}", n->id);
}

static const char *group_name(const et_workload *w, uint32_t g)
{
  return et_workload_group_name(w, g);
}

static void on_comm(void *ctx, const sim_comm_record *c)
{
  study_timeline *tl = ctx;
  if (!keep(tl, c->rank, c->issue, c->end))
    return;
  int track = c->node_type != ET_NODE_COMM_COLL ? TRACK_P2P
              : c->group == ET_GROUP_WORLD     ? TRACK_WORLD
                                               : TRACK_GROUP0 + (int)c->group;
  int tid = place(tl, c->rank, track, c->issue, c->end);
  begin_event(tl, sim_report_op_name(c), c->node_type == ET_NODE_COMM_COLL ? "collective" : "p2p", c->rank, tid,
              c->issue, c->end);
  FILE *o = tl->out;
  sim_time_ps d = c->end - c->start;
  double algbw = d > 0 ? (double)c->algbw_bytes * 1000.0 / (double)d : 0.0;
  fprintf(o, ",\"args\":{\"bytes\":%" G_GUINT64_FORMAT ",\"group\":", c->bytes);
  wisp_json_write_escaped(o, group_name(tl->w, c->group));
  fprintf(o, ",\"n_ranks\":%d,\"algorithm\":\"%s\",\"algbw_GBps\":%.6f,\"busbw_GBps\":%.6f,\"wait_us\":", c->n_ranks,
          coll_algo_name(c->algo), algbw, algbw * c->busbw_factor);
  write_us(o, c->start - c->issue);
  fprintf(o, ",\"node_id\":%" G_GUINT64_FORMAT, c->node_id);
  if (c->peer >= 0)
    fprintf(o, ",\"peer\":%d", c->peer);
  fputs("}}", o);
}

gboolean study_timeline_parse_ranks(const char *spec, int n, gboolean *on, GError **error)
{
  char **parts = g_strsplit(spec, ",", -1);
  gboolean ok = TRUE;
  for (char **p = parts; *p && ok; p++) {
    char *s = g_strstrip(*p), *end;
    if (*s == '\0')
      continue;
    long a = strtol(s, &end, 10), b = a;
    if (end != s && *end == '-') {
      char *q = end + 1;
      b = strtol(q, &end, 10);
      if (end == q)
        ok = FALSE;
    }
    if (!ok || end == s || *end || a < 0 || b < a || b >= n) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "--timeline-ranks: '%s' is not a rank or range of ranks 0..%d (write e.g. 0-3,8)", s, n - 1);
      ok = FALSE;
      break;
    }
    for (long r = a; r <= b; r++)
      on[r] = TRUE;
  }
  g_strfreev(parts);
  return ok;
}

static void free_lanes(gpointer p)
{
  g_array_free(p, TRUE);
}

study_timeline *study_timeline_open(const char *path, const et_workload *w, const char *ranks, sim_time_ps from,
                                    sim_time_ps to, GError **error)
{
  study_timeline *tl = g_new0(study_timeline, 1);
  tl->w = w;
  tl->from = from;
  tl->to = to;
  if (ranks) {
    tl->rank_on = g_new0(gboolean, w->n_ranks > 0 ? w->n_ranks : 1);
    if (!study_timeline_parse_ranks(ranks, w->n_ranks, tl->rank_on, error)) {
      g_free(tl->rank_on);
      g_free(tl);
      return NULL;
    }
  }
  if ((tl->f = wisp_afile_open(path, error)) == NULL) {
    g_free(tl->rank_on);
    g_free(tl);
    return NULL;
  }
  tl->out = wisp_afile_stream(tl->f);
  tl->lanes = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, free_lanes);
  tl->used = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  tl->first = TRUE;
  tl->obs.node_done = on_node;
  tl->obs.comm_done = on_comm;
  tl->obs.ctx = tl;
  fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", tl->out);
  return tl;
}

const sim_replay_observer *study_timeline_observer(study_timeline *tl)
{
  return &tl->obs;
}

uint64_t study_timeline_events(const study_timeline *tl)
{
  return tl->events;
}

static void destroy(study_timeline *tl)
{
  g_hash_table_destroy(tl->lanes);
  g_hash_table_destroy(tl->used);
  g_free(tl->rank_on);
  g_free(tl);
}

void study_timeline_abort(study_timeline *tl)
{
  if (tl == NULL)
    return;
  wisp_afile_abort(tl->f);
  destroy(tl);
}

static gint cmp_u64(gconstpointer a, gconstpointer b)
{
  uint64_t x = **(const uint64_t *const *)a, y = **(const uint64_t *const *)b;
  return x < y ? -1 : x > y;
}

static char *track_name(const study_timeline *tl, int tid)
{
  int track = tid / LANES_PER_TRACK, lane = tid % LANES_PER_TRACK;
  char *base;
  switch (track) {
  case TRACK_COMPUTE: base = g_strdup("compute"); break;
  case TRACK_CPU: base = g_strdup("cpu ops"); break;
  case TRACK_DELAY: base = g_strdup("idle gaps"); break;
  case TRACK_REPLAY: base = g_strdup("replayed comm"); break;
  case TRACK_P2P: base = g_strdup("p2p"); break;
  case TRACK_WORLD: base = g_strdup("group world"); break;
  default: {
    const et_group *g = et_workload_group(tl->w, (uint32_t)(track - TRACK_GROUP0));
    base = g->desc ? g_strdup_printf("group %s (%s, %d ranks)", g->name, g->desc, g->n_ranks)
                   : g_strdup_printf("group %s (%d ranks)", g->name, g->n_ranks);
  }
  }
  if (lane == 0)
    return base;
  char *s = g_strdup_printf("%s #%d", base, lane + 1);
  g_free(base);
  return s;
}

gboolean study_timeline_finish(study_timeline *tl, const sim_result *r, GError **error)
{
  FILE *o = tl->out;
  /* Metadata: process names for every rank shown, thread names for every
   * track used, sorted by (rank, tid). */
  for (int k = 0; k < tl->w->n_ranks; k++) {
    if (tl->rank_on && !tl->rank_on[k])
      continue;
    fputs(tl->first ? "\n" : ",\n", o);
    tl->first = FALSE;
    fprintf(o, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"rank %d\"}},\n", k, k);
    fprintf(o, "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"sort_index\":%d}}", k, k);
  }
  GPtrArray *keys = g_ptr_array_new();
  GHashTableIter it;
  gpointer kp;
  g_hash_table_iter_init(&it, tl->used);
  while (g_hash_table_iter_next(&it, &kp, NULL))
    g_ptr_array_add(keys, kp);
  g_ptr_array_sort(keys, cmp_u64);
  for (guint i = 0; i < keys->len; i++) {
    uint64_t key = *(uint64_t *)keys->pdata[i];
    int rank = (int)(key >> 32), tid = (int)(uint32_t)key;
    char *name = track_name(tl, tid);
    fprintf(o, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":", rank, tid);
    wisp_json_write_escaped(o, name);
    fprintf(o, "}},\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"sort_index\":%d}}",
            rank, tid, tid);
    g_free(name);
  }
  g_ptr_array_unref(keys);
  char nb[32];
  fprintf(o, "\n],\n\"otherData\":{\"wisp_version\":\"%s\",\"workload\":", PACKAGE_VERSION);
  wisp_json_write_escaped(o, tl->w->source);
  fprintf(o, ",\"step_time_ns\":%s,\"slices\":%" G_GUINT64_FORMAT ",\"lane_overflow\":%" G_GUINT64_FORMAT "}}\n",
          wisp_ns_string(r ? r->step_time : 0, nb), tl->events, tl->lane_overflow);
  gboolean ok = wisp_afile_commit(tl->f, error);
  destroy(tl);
  return ok;
}
