/* study_sweep.c: runs sweeps (study_sweep.h), resumably and in parallel,
 * and merges sharded outputs.
 *
 * Each finished point is committed as its own small file (CSV row + JSON
 * line) with wisp_write_file_atomic(), so a killed sweep keeps every point
 * it finished and never leaves a half-written row; the final CSV/JSONL are
 * assembled from those files in point order and written atomically too.
 * Output bytes depend only on the spec, the workload and the cluster, never
 * on -j, sharding or resumption.
 *
 * Parallelism uses worker processes (fork): each worker builds its own
 * topologies (route caches are not thread-safe) and shares the parent's
 * loaded workload copy-on-write.  Worker w takes the pending points
 * j, j + jobs, ... (j = w), so the split is deterministic; each reports a
 * finished point with one byte on a pipe, which drives the progress bar.
 */
#include "config.h"
#include "studies/study_sweep_internal.h"
#include "common/wisp_json.h"
#include "common/wisp_memory.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void study_sweep_stats_clear(study_sweep_stats *st)
{
  g_free(st->csv_path);
  g_free(st->jsonl_path);
  g_free(st->svg_path);
  if (st->errors)
    g_ptr_array_unref(st->errors);
  memset(st, 0, sizeof *st);
}

/* The utility reference point: the base with the spec's base values (or
 * every axis's first value with base: first) applied, simulated.  *bs
 * gets its summary. */
static gboolean sweep_base_point(const sweep_ctx *c, study_summary *bs, GError **error)
{
  const study_spec *s = c->s;
  topo_variant *ref = topo_variant_copy(c->base);
  sim_replay_options ref_opt = c->opt;
  gboolean ok = TRUE;
  char work[192];
  g_snprintf(work, sizeof work, "the base point of the sweep %.40s (a replay of %d ranks of %.80s)", s->name,
             c->w->n_ranks, c->w->source ? c->w->source : "the workload");
  wisp_memory_set_context(work); /* for an allocation that fails in it (common/wisp_memory.h) */
  if (s->base_first) {
    for (int a = 0; a < s->n_axes && ok; a++)
      ok = study_spec_apply(s->axes[a].key, study_spec_value(s, 0, a), ref, &ref_opt, error);
  } else {
    for (guint i = 0; i < s->base_keys->len && ok; i++)
      ok = study_spec_apply(s->base_keys->pdata[i], s->base_values->pdata[i], ref, &ref_opt, error);
  }
  ok = ok && study_run_point(c->w, ref, &ref_opt, bs, error);
  topo_variant_free(ref);
  return ok;
}

/* Rows are reused (--resume) and merged only when they come from the same
 * inputs: the spec's bytes, the resolved cluster with `set` applied (the
 * YAML minus its first line, which names the local path), the run options
 * and the workload's content.  Returns their SHA-256. */
static char *sweep_digest(const sweep_ctx *c)
{
  const study_spec *s = c->s;
  GChecksum *ck = g_checksum_new(G_CHECKSUM_SHA256);
  char *yaml = topo_variant_to_yaml(c->base), *wd = study_workload_digest(c->w);
  const char *body = strchr(yaml, '\n');
  char *opts = g_strdup_printf("slots=%u algo=%d:%d tier=%d:%d", c->opt.compute_slots, c->opt.has_algo,
                               (int)c->opt.algo, c->opt.has_tier, (int)c->opt.tier);
  g_checksum_update(ck, (const guchar *)s->digest, -1);
  g_checksum_update(ck, (const guchar *)(body ? body : yaml), -1);
  g_checksum_update(ck, (const guchar *)opts, -1);
  if (c->opt.measured_starts) /* only when set, so sweeps starting together keep their digests */
    g_checksum_update(ck, (const guchar *)"starts=measured", -1);
  if (sim_levers_active(&c->opt.levers)) {
    /* Only when set, so sweeps without levers keep their digests. */
    char *lv = sim_levers_describe(&c->opt.levers);
    g_checksum_update(ck, (const guchar *)lv, -1);
    g_free(lv);
  }
  g_checksum_update(ck, (const guchar *)wd, -1);
  char *digest = g_strdup(g_checksum_get_string(ck));
  g_checksum_free(ck);
  g_free(yaml);
  g_free(wd);
  g_free(opts);
  return digest;
}

/* The reason of a point in error, for the terminal: "point P (key=value
 * ...): error: ..." from its CSV row (the text up to nl), appended to
 * st->errors. */
static void note_point_error(const study_spec *s, int p, const char *text, const char *nl, study_sweep_stats *st)
{
  char *row = g_strndup(text, (gsize)(nl - text));
  GPtrArray *f = study_sweep_csv_split(row);
  GString *why = g_string_new(NULL);
  g_string_append_printf(why, "point %d (", p);
  for (int a = 0; a < s->n_axes && 2 + a < (int)f->len; a++)
    g_string_append_printf(why, "%s%s=%s", a ? " " : "", s->axes[a].key, (char *)f->pdata[2 + a]);
  g_string_append_printf(why, "): %s", f->len ? (char *)f->pdata[f->len - 1] : "error");
  if (st->errors == NULL)
    st->errors = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(st->errors, g_string_free(why, FALSE));
  g_ptr_array_unref(f);
  g_free(row);
}

/* Assembles this shard's outputs from the row files, in point order (the
 * points in `mine`): NAME[.shard-K-of-N].csv and .jsonl, and the chart
 * when not sharded; counts the points in error. */
static gboolean sweep_assemble(const sweep_ctx *c, const study_sweep_options *o, const GArray *mine, int shard_k,
                               int shard_n, study_sweep_stats *st, GError **error)
{
  const study_spec *s = c->s;
  gboolean ok = TRUE;
  GString *csv = g_string_new(NULL), *jsonl = g_string_new(NULL);
  char *h = study_sweep_csv_header(s);
  g_string_append(csv, h);
  g_free(h);
  for (guint i = 0; i < mine->len && ok; i++) {
    int p = g_array_index(mine, int, i);
    char *path = study_sweep_point_file(c, p), *text = NULL;
    if (!study_sweep_point_done(c, p) || !g_file_get_contents(path, &text, NULL, NULL)) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "%s: the row of point %d is missing or incomplete; rerun "
                  "with --resume", path, p);
      ok = FALSE;
    } else {
      char *nl = strchr(text, '\n');
      g_string_append_len(csv, text, nl - text + 1);
      g_string_append(jsonl, nl + 1);
      if (strstr(nl + 1, "\"status\": \"error\"")) {
        st->failed++;
        note_point_error(s, p, text, nl, st);
      }
    }
    g_free(text);
    g_free(path);
  }
  char *stem = shard_n > 1 ? g_strdup_printf("%s.shard-%d-of-%d", s->name, shard_k, shard_n) : g_strdup(s->name);
  char *prefix = g_build_filename(o->out_dir, stem, NULL);
  g_free(stem);
  st->csv_path = g_strconcat(prefix, ".csv", NULL);
  st->jsonl_path = g_strconcat(prefix, ".jsonl", NULL);
  ok = ok && wisp_write_file_atomic(st->csv_path, csv->str, csv->len, error) &&
       wisp_write_file_atomic(st->jsonl_path, jsonl->str, jsonl->len, error);
  if (ok && shard_n == 1) {
    st->svg_path = g_strconcat(prefix, ".svg", NULL);
    char *title = g_strdup_printf("%s: simulated step time", s->name);
    gboolean written = FALSE;
    ok = study_sweep_chart_from_csv(csv->str, title, st->svg_path, &written, error);
    if (!written) /* no point finished: there is nothing to draw, and no chart to list */
      g_clear_pointer(&st->svg_path, g_free);
    g_free(title);
  }
  g_free(prefix);
  g_string_free(csv, TRUE);
  g_string_free(jsonl, TRUE);
  return ok;
}

gboolean study_sweep_run(const study_spec *s, const et_workload *w, const study_sweep_options *o,
                         study_sweep_stats *st, GError **error)
{
  memset(st, 0, sizeof *st);
  double t0 = wisp_wall_seconds();
  int shard_n = o->shard_n > 1 ? o->shard_n : 1, shard_k = shard_n > 1 ? o->shard_k : 1;
  if (shard_k < 1 || shard_k > shard_n) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "--shard %d/%d: K must be between 1 and N", shard_k, shard_n);
    return FALSE;
  }
  sweep_ctx c = {.s = s, .w = w};
  c.opt = (sim_replay_options){.compute_slots = 0}; /* each rank's measured concurrency unless swept */
  c.opt.has_tier = o->has_tier;
  c.opt.tier = o->tier;
  c.opt.levers = o->levers;
  c.opt.has_algo = o->has_algo;
  c.opt.algo = o->algo;
  c.opt.compute_slots = o->compute_slots;
  c.opt.measured_starts = o->measured_starts;
  char *cluster_path = NULL;
  topo_variant *base = study_cluster_open(s->cluster, w->n_ranks, &cluster_path, NULL, error);
  g_free(cluster_path);
  if (base == NULL)
    return FALSE;
  for (guint i = 0; i < s->set_keys->len; i++)
    if (!study_spec_apply(s->set_keys->pdata[i], s->set_values->pdata[i], base, &c.opt, error)) {
      g_prefix_error(error, "%s: set: ", s->path);
      topo_variant_free(base);
      return FALSE;
    }
  c.base = base;

  /* The utility reference point. */
  study_summary bs;
  gboolean ok = sweep_base_point(&c, &bs, error);
  if (!ok) {
    g_prefix_error(error, "%s: the base point: ", s->path);
    topo_variant_free(base);
    return FALSE;
  }
  c.base_step = bs.step_time;
  st->base_step = bs.step_time;
  c.digest = sweep_digest(&c);

  char *pdir_name = g_strdup_printf("%s.points", s->name);
  c.dir = g_build_filename(o->out_dir, pdir_name, NULL);
  g_free(pdir_name);
  if (g_mkdir_with_parents(c.dir, 0777) != 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "cannot create %s: %s", c.dir, g_strerror(errno));
    ok = FALSE;
    goto out;
  }
  if (o->resume)
    st->orphans_removed = study_sweep_remove_orphans(c.dir);
  GArray *mine = g_array_new(FALSE, FALSE, sizeof(int)), *pending = g_array_new(FALSE, FALSE, sizeof(int));
  for (int p = shard_k - 1; p < s->n_points; p += shard_n) {
    g_array_append_val(mine, p);
    if (o->resume && study_sweep_point_done(&c, p))
      st->skipped++;
    else
      g_array_append_val(pending, p);
  }
  st->total = (int)mine->len;
  ok = study_sweep_run_points(&c, o, (int *)(void *)pending->data, (int)pending->len, st->total, st->skipped, error);
  st->run = ok ? (int)pending->len : 0;

  if (ok)
    ok = sweep_assemble(&c, o, mine, shard_k, shard_n, st, error);
  g_array_free(mine, TRUE);
  g_array_free(pending, TRUE);
out:
  g_free(c.dir);
  g_free(c.digest);
  topo_variant_free(base);
  st->wall_seconds = wisp_wall_seconds() - t0;
  return ok;
}
