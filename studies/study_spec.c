/* study_spec.c: the sweep spec (sweep_version 1), read with libyaml's
 * document API, and its expansion into points.
 *
 *   sweep_version: 1
 *   name: NAME                      # optional (default: the file's base name)
 *   workload: PATH                  # relative to the spec's directory
 *   cluster: PRESET|PATH            # presets are fitted to the workload
 *   set: {KEY: VALUE, ...}          # optional, applied to every point
 *   combine: grid|zip               # default grid (first axis slowest)
 *   labels: [a, b, c]               # optional point labels (zip only)
 *   base: first | {KEY: VALUE}      # utility reference (default: cluster + set)
 *   axes:
 *     - {key: KEY, values: [V, ...]}
 *     - {key: KEY, range: {from: 100GB/s, to: 400GB/s, step: 100GB/s}}
 *     - {key: KEY, range: {from: 4, to: 64, factor: 2}}
 *
 * KEY is any topo_variant_set() key or a run option: algo (forced
 * collective algorithm), compute_slots, the levers compute, compute:CLASS
 * and host (speedup, e.g. 2 or 2x: twice as fast), slow_rank (R=F, or
 * none) and slow_ranks (lognormal:sigma=S[,seed=N], uniform:max=M[,seed=N]
 * or none; replay/sim_levers.h).  Points: a grid has prod(|axis|)
 * points, a zip |axis| points (all axes equally long), at most
 * STUDY_MAX_POINTS. */
#include "config.h"
#include "studies/study_sweep.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

typedef struct {
  const char *src;
  yaml_document_t *doc;
  GError **error;
} sp;

static int line_of(const yaml_node_t *n)
{
  return (int)n->start_mark.line + 1;
}

static yaml_node_t *ynode(sp *c, int id)
{
  return yaml_document_get_node(c->doc, id);
}

static const char *scalar(const yaml_node_t *n)
{
  return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

G_GNUC_PRINTF(3, 4)
static gboolean fail(sp *c, const yaml_node_t *n, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(c->error, WISP_ERROR, WISP_ERROR_PARSE, "%s:%d: %s", c->src, n ? line_of(n) : 1, msg);
  g_free(msg);
  return FALSE;
}

static yaml_node_t *get(sp *c, const yaml_node_t *map, const char *key)
{
  if (map->type != YAML_MAPPING_NODE)
    return NULL;
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++)
    if (g_strcmp0(scalar(ynode(c, p->key)), key) == 0)
      return ynode(c, p->value);
  return NULL;
}

static gboolean check_keys(sp *c, const yaml_node_t *map, const char *where, const char *const *allowed)
{
  if (map->type != YAML_MAPPING_NODE)
    return fail(c, map, "'%s' must be a mapping", where);
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
    const char *k = scalar(ynode(c, p->key));
    gboolean ok = FALSE;
    for (const char *const *a = allowed; *a && !ok; a++)
      ok = g_strcmp0(k, *a) == 0;
    if (!ok) {
      GString *exp = g_string_new(NULL);
      for (const char *const *a = allowed; *a; a++)
        g_string_append_printf(exp, "%s%s", a == allowed ? "" : ", ", *a);
      fail(c, ynode(c, p->key), "unknown key '%s' in '%s' (expected one of: %s)", k ? k : "(not a scalar)", where,
           exp->str);
      g_string_free(exp, TRUE);
      return FALSE;
    }
    for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++)
      if (g_strcmp0(scalar(ynode(c, q->key)), k) == 0)
        return fail(c, ynode(c, p->key), "duplicate key '%s' in '%s'", k, where);
  }
  return TRUE;
}

static gboolean need_scalar(sp *c, const yaml_node_t *n, const char *what, const char **out)
{
  if ((*out = scalar(n)) == NULL)
    return fail(c, n, "'%s' must be a single value", what);
  return TRUE;
}

/* "100GB/s" -> 100, "GB/s"; "4" -> 4, "". */
static gboolean split_unit(const char *s, double *v, const char **unit)
{
  char *end;
  errno = 0;
  *v = g_ascii_strtod(s, &end);
  if (end == s || errno || !isfinite(*v))
    return FALSE;
  while (*end == ' ')
    end++;
  *unit = end;
  return TRUE;
}

static gboolean parse_range(sp *c, const yaml_node_t *r, GPtrArray *values)
{
  static const char *const keys[] = {"from", "to", "step", "factor", NULL};
  if (!check_keys(c, r, "range", keys))
    return FALSE;
  yaml_node_t *vf = get(c, r, "from"), *vt = get(c, r, "to"), *vs = get(c, r, "step"), *vx = get(c, r, "factor");
  const char *sf, *st, *ss = NULL, *uf, *ut, *us = "";
  double from, to, step = 0;
  if (!vf || !vt)
    return fail(c, r, "'range' needs 'from' and 'to', plus 'step' or 'factor'");
  if ((vs == NULL) == (vx == NULL))
    return fail(c, r, "'range' needs exactly one of 'step' (arithmetic) or 'factor' (geometric)");
  if (!need_scalar(c, vf, "from", &sf) || !need_scalar(c, vt, "to", &st) ||
      !need_scalar(c, vs ? vs : vx, vs ? "step" : "factor", &ss))
    return FALSE;
  if (!split_unit(sf, &from, &uf) || !split_unit(st, &to, &ut) || !split_unit(ss, &step, &us))
    return fail(c, r, "'range' values must be numbers with an optional unit, e.g. from: 100GB/s");
  if (strcmp(uf, ut) != 0 || (vs && *us && strcmp(us, uf) != 0))
    return fail(c, r, "'range' from/to/step must use one unit ('%s' vs '%s'); write them alike", uf, ut);
  if (vx && *us)
    return fail(c, vx, "'factor' is a plain number (e.g. 2)");
  if (vs ? !(step > 0) : !(step > 1))
    return fail(c, vs ? vs : vx, vs ? "'step' must be positive" : "'factor' must be greater than 1");
  if (to < from)
    return fail(c, vt, "'to' (%s) is below 'from' (%s)", st, sf);
  if (vx && !(from > 0))
    return fail(c, vf, "'from' must be positive in a range with a 'factor' (it is %s)", sf);
  /* The number of values, known before any is made: a range of 10^54
   * steps used to make a million strings before it was refused. */
  double n = vs ? floor((to - from) / step * (1 + 1e-12)) + 1 : floor(log(to / from) / log(step) * (1 + 1e-12)) + 1;
  if (!(n <= STUDY_MAX_POINTS))
    return fail(c, r, "the range gives %.4g values, more than %d", n, STUDY_MAX_POINTS);
  double v = from;
  for (int i = 0; v <= to * (1 + 1e-12) + 1e-300; i++) {
    if (values->len >= STUDY_MAX_POINTS)
      return fail(c, r, "the range gives more than %d values", STUDY_MAX_POINTS);
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_formatd(buf, sizeof buf, "%.12g", v);
    g_ptr_array_add(values, g_strconcat(buf, uf, NULL));
    v = vs ? from + step * (i + 1) : v * step;
  }
  return TRUE;
}

static gboolean is_lever_key(const char *k)
{
  return strcmp(k, "compute") == 0 || strcmp(k, "host") == 0 || g_str_has_prefix(k, "compute:") ||
         strcmp(k, "slow_rank") == 0 || strcmp(k, "slow_ranks") == 0;
}

static gboolean is_run_key(const char *k)
{
  return strcmp(k, "algo") == 0 || strcmp(k, "compute_slots") == 0 || is_lever_key(k);
}

/* A lever key's value into opt->levers (sim_levers.h). */
static gboolean apply_lever(const char *key, const char *value, sim_replay_options *opt, GError **error)
{
  if (strcmp(key, "slow_rank") == 0)
    return sim_levers_add_slow_rank(&opt->levers, value, error);
  if (strcmp(key, "slow_ranks") == 0)
    return sim_levers_set_slow_ranks(&opt->levers, value, error);
  char *end;
  double f = g_ascii_strtod(value, &end);
  if (end == value || (*end != '\0' && !(end[0] == 'x' && end[1] == '\0'))) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: give a speedup such as 2 or 2x (twice as fast), got '%s'",
                key, value);
    return FALSE;
  }
  return sim_levers_set_speedup(&opt->levers, key, f, error);
}

static gboolean parse_pairs(sp *c, const yaml_node_t *m, const char *where, GPtrArray *keys, GPtrArray *vals)
{
  if (m->type != YAML_MAPPING_NODE)
    return fail(c, m, "'%s' must be a mapping of config keys to values", where);
  for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
    const char *k = scalar(ynode(c, p->key)), *v;
    if (k == NULL)
      return fail(c, ynode(c, p->key), "keys in '%s' must be plain names", where);
    if (!need_scalar(c, ynode(c, p->value), k, &v))
      return FALSE;
    g_ptr_array_add(keys, g_strdup(k));
    g_ptr_array_add(vals, g_strdup(v));
  }
  return TRUE;
}

void study_spec_free(study_spec *s)
{
  if (s == NULL)
    return;
  g_free(s->path);
  g_free(s->name);
  g_free(s->workload);
  g_free(s->cluster);
  g_free(s->digest);
  g_ptr_array_unref(s->set_keys);
  g_ptr_array_unref(s->set_values);
  g_ptr_array_unref(s->base_keys);
  g_ptr_array_unref(s->base_values);
  g_ptr_array_unref(s->labels);
  for (int a = 0; a < s->n_axes; a++) {
    g_free(s->axes[a].key);
    g_ptr_array_unref(s->axes[a].values);
  }
  g_free(s->axes);
  g_free(s);
}

static char *resolve(const char *spec_path, const char *p)
{
  if (g_path_is_absolute(p))
    return g_strdup(p);
  char *dir = g_path_get_dirname(spec_path);
  char *r = g_build_filename(dir, p, NULL);
  g_free(dir);
  return r;
}

/* The spec's top-level scalars: sweep_version (1), name (used in file
 * names; default the file's base name), workload and cluster (relative to
 * the spec; a cluster that is no file is a preset name), set, combine
 * (grid or zip) and base. */
static gboolean parse_header(sp *cp, yaml_node_t *root, study_spec *s)
{
  sp c = *cp; /* the same file, document and error */
  yaml_node_t *v;
  const char *path = c.src;
  GError **error = c.error;
  const char *sv;
  if (!(v = get(&c, root, "sweep_version"))) {
    fail(&c, root, "the spec needs 'sweep_version: 1'");
    return FALSE;
  }
  if (!need_scalar(&c, v, "sweep_version", &sv))
    return FALSE;
  if (strcmp(sv, "1") != 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_UNSUPPORTED, "%s:%d: sweep_version %s is not supported; this wisp "
                "reads sweep_version 1", path, line_of(v), sv);
    return FALSE;
  }
  const char *x;
  if ((v = get(&c, root, "name"))) {
    if (!need_scalar(&c, v, "name", &x))
      return FALSE;
    if (*x == '\0' || strpbrk(x, "/\\") || x[0] == '.') {
      fail(&c, v, "'name' is used in file names: give letters, digits, '-' or '_'");
      return FALSE;
    }
    s->name = g_strdup(x);
  } else {
    char *b = g_path_get_basename(path);
    char *dot = strrchr(b, '.');
    if (dot && dot != b)
      *dot = '\0';
    s->name = b;
  }
  if ((v = get(&c, root, "workload"))) {
    if (!need_scalar(&c, v, "workload", &x))
      return FALSE;
    s->workload = resolve(path, x);
  }
  if (!(v = get(&c, root, "cluster"))) {
    fail(&c, root, "the spec needs 'cluster: PRESET|CONFIG'");
    return FALSE;
  }
  if (!need_scalar(&c, v, "cluster", &x))
    return FALSE;
  {
    /* A path relative to the spec wins when it exists; else a preset name. */
    char *r = resolve(path, x);
    s->cluster = g_file_test(r, G_FILE_TEST_IS_REGULAR) ? r : (g_free(r), g_strdup(x));
  }
  if ((v = get(&c, root, "set")) && !parse_pairs(&c, v, "set", s->set_keys, s->set_values))
    return FALSE;
  s->zip = FALSE;
  if ((v = get(&c, root, "combine"))) {
    if (!need_scalar(&c, v, "combine", &x))
      return FALSE;
    if (strcmp(x, "zip") == 0)
      s->zip = TRUE;
    else if (strcmp(x, "grid") != 0) {
      fail(&c, v, "'combine' must be grid or zip, got '%s'", x);
      return FALSE;
    }
  }
  if ((v = get(&c, root, "base"))) {
    if (scalar(v) && strcmp(scalar(v), "first") == 0)
      s->base_first = TRUE;
    else if (!parse_pairs(&c, v, "base", s->base_keys, s->base_values))
      return FALSE;
  }
  return TRUE;
}

/* Axis a of the spec, mapping m: its key (swept by no earlier axis) and
 * its values, a non-empty list (at most STUDY_MAX_POINTS) or a range. */
static gboolean parse_axis(sp *cp, yaml_node_t *m, int a, study_spec *s)
{
  static const char *const akeys[] = {"key", "values", "range", NULL};
  sp c = *cp;
  yaml_node_t *v;
  const char *x;
  char where[32];
  g_snprintf(where, sizeof where, "axes[%d]", a);
  if (!check_keys(&c, m, where, akeys))
    return FALSE;
  if (!(v = get(&c, m, "key"))) {
    fail(&c, m, "'%s' needs 'key'", where);
    return FALSE;
  }
  if (!need_scalar(&c, v, "key", &x))
    return FALSE;
  for (int b = 0; b < a; b++)
    if (strcmp(s->axes[b].key, x) == 0) {
      fail(&c, v, "key '%s' is swept by two axes; merge them", x);
      return FALSE;
    }
  s->axes[a].key = g_strdup(x);
  s->axes[a].line = line_of(m);
  yaml_node_t *vals = get(&c, m, "values"), *rng = get(&c, m, "range");
  if ((vals == NULL) == (rng == NULL)) {
    fail(&c, m, "'%s' needs exactly one of 'values' (a list) or 'range'", where);
    return FALSE;
  }
  if (vals) {
    if (vals->type != YAML_SEQUENCE_NODE || vals->data.sequence.items.top == vals->data.sequence.items.start) {
      fail(&c, vals, "'values' must be a non-empty list");
      return FALSE;
    }
    for (yaml_node_item_t *i = vals->data.sequence.items.start; i < vals->data.sequence.items.top; i++) {
      if (!need_scalar(&c, ynode(&c, *i), "values", &x))
        return FALSE;
      if (s->axes[a].values->len >= STUDY_MAX_POINTS) {
        fail(&c, vals, "more than %d values", STUDY_MAX_POINTS);
        return FALSE;
      }
      g_ptr_array_add(s->axes[a].values, g_strdup(x));
    }
  } else if (!parse_range(&c, rng, s->axes[a].values)) {
    return FALSE;
  }
  return TRUE;
}

/* The number of points (the product of the axes' lengths, or their
 * common length with combine: zip; at most STUDY_MAX_POINTS) and the
 * labels, one per point, allowed with zip only. */
static gboolean count_points(sp *cp, yaml_node_t *root, study_spec *s)
{
  sp c = *cp;
  const char *path = c.src, *x;
  GError **error = c.error;
  yaml_node_t *v;
  /* Point count. */
  int64_t n = s->zip ? (int64_t)s->axes[0].values->len : 1;
  for (int a = 0; a < s->n_axes; a++) {
    if (s->zip && s->axes[a].values->len != s->axes[0].values->len) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s:%d: combine: zip needs equally long axes, but '%s' has %u values and '%s' has %u", path,
                  s->axes[a].line, s->axes[a].key, s->axes[a].values->len, s->axes[0].key, s->axes[0].values->len);
      return FALSE;
    }
    if (!s->zip)
      n *= s->axes[a].values->len;
    if (n > STUDY_MAX_POINTS) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_LIMIT, "%s: the sweep has more than %d points; split it", path,
                  STUDY_MAX_POINTS);
      return FALSE;
    }
  }
  s->n_points = (int)n;
  if ((v = get(&c, root, "labels"))) {
    if (!s->zip || v->type != YAML_SEQUENCE_NODE ||
        (int)(v->data.sequence.items.top - v->data.sequence.items.start) != s->n_points) {
      fail(&c, v, "'labels' needs combine: zip and one label per point (%d)", s->n_points);
      return FALSE;
    }
    for (yaml_node_item_t *i = v->data.sequence.items.start; i < v->data.sequence.items.top; i++) {
      if (!need_scalar(&c, ynode(&c, *i), "labels", &x))
        return FALSE;
      g_ptr_array_add(s->labels, g_strdup(x));
    }
  }
  return TRUE;
}

study_spec *study_spec_load(const char *path, GError **error)
{
  char *text = NULL;
  gsize len = 0;
  wisp_input_note(path); /* no output may replace it */
  if (!g_file_get_contents(path, &text, &len, error))
    return NULL;
  study_spec *s = g_new0(study_spec, 1);
  s->path = g_strdup(path);
  s->set_keys = g_ptr_array_new_with_free_func(g_free);
  s->set_values = g_ptr_array_new_with_free_func(g_free);
  s->base_keys = g_ptr_array_new_with_free_func(g_free);
  s->base_values = g_ptr_array_new_with_free_func(g_free);
  s->labels = g_ptr_array_new_with_free_func(g_free);
  s->digest = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)text, len);

  yaml_parser_t parser;
  yaml_document_t doc;
  yaml_parser_initialize(&parser);
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
  gboolean ok = FALSE, have_doc = FALSE;
  sp c = {path, &doc, error};
  if (!yaml_parser_load(&parser, &doc)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s:%zu: YAML error: %s", path, parser.problem_mark.line + 1,
                parser.problem ? parser.problem : "unknown problem");
    goto out;
  }
  have_doc = TRUE;
  yaml_node_t *root = yaml_document_get_root_node(&doc);
  if (root == NULL) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_PARSE, "%s: the sweep spec is empty", path);
    goto out;
  }
  static const char *const keys[] = {"sweep_version", "name", "description", "workload", "cluster", "set",
                                     "combine", "labels", "base", "axes", NULL};
  if (!check_keys(&c, root, "sweep spec", keys))
    goto out;
  if (!parse_header(&c, root, s))
    goto out;
  yaml_node_t *axes = get(&c, root, "axes");
  if (axes == NULL || axes->type != YAML_SEQUENCE_NODE || axes->data.sequence.items.top == axes->data.sequence.items.start) {
    fail(&c, axes ? axes : root, "'axes' must be a non-empty list of {key, values} or {key, range}");
    goto out;
  }
  s->n_axes = (int)(axes->data.sequence.items.top - axes->data.sequence.items.start);
  if (s->n_axes > 32) {
    fail(&c, axes, "at most 32 axes are supported (got %d)", s->n_axes);
    goto out;
  }
  s->axes = g_new0(study_axis, s->n_axes);
  for (int a = 0; a < s->n_axes; a++)
    s->axes[a].values = g_ptr_array_new_with_free_func(g_free);
  for (int a = 0; a < s->n_axes; a++)
    if (!parse_axis(&c, ynode(&c, axes->data.sequence.items.start[a]), a, s))
      goto out;
  if (!count_points(&c, root, s))
    goto out;
  ok = TRUE;
out:
  if (have_doc)
    yaml_document_delete(&doc);
  yaml_parser_delete(&parser);
  g_free(text);
  if (!ok) {
    study_spec_free(s);
    return NULL;
  }
  return s;
}

const char *study_spec_value(const study_spec *s, int point, int axis)
{
  g_assert(point >= 0 && point < s->n_points && axis >= 0 && axis < s->n_axes);
  if (s->zip)
    return s->axes[axis].values->pdata[point];
  /* Row-major: the last axis varies fastest. */
  int idx = point;
  for (int a = s->n_axes - 1; a > axis; a--)
    idx /= (int)s->axes[a].values->len;
  return s->axes[axis].values->pdata[idx % (int)s->axes[axis].values->len];
}

gboolean study_spec_apply(const char *key, const char *value, topo_variant *v, sim_replay_options *opt,
                          GError **error)
{
  if (is_run_key(key)) {
    if (is_lever_key(key))
      return apply_lever(key, value, opt, error);
    if (strcmp(key, "algo") == 0) {
      if (!coll_algo_from_name(value, &opt->algo)) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "algo: unknown collective algorithm '%s'", value);
        return FALSE;
      }
      opt->has_algo = TRUE;
      return TRUE;
    }
    char *end;
    long n = strtol(value, &end, 10);
    if (*value == '\0' || *end || n < 1 || n > ET_MAX_COMPUTE_SLOTS) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "compute_slots must be an integer from 1 to %d, got '%s'",
                  ET_MAX_COMPUTE_SLOTS, value);
      return FALSE;
    }
    opt->compute_slots = (unsigned)n;
    return TRUE;
  }
  return topo_variant_set(v, key, value, error);
}

/* One key=value applied to a scratch copy of the cluster (and of the run
 * options); a failure becomes one line of `problems`. */
static void check_one(const study_spec *s, const topo_variant *base, const sim_replay_options *opt, const char *where,
                      const char *key, const char *value, GString *problems, int *n)
{
  topo_variant *v = topo_variant_copy(base);
  sim_replay_options o = *opt;
  GError *e = NULL;
  if (!study_spec_apply(key, value, v, &o, &e)) {
    g_string_append_printf(problems, "\n  %s:%s %s: %s: %s", s->path, where, key, value, e->message);
    (*n)++;
    g_clear_error(&e);
  }
  topo_variant_free(v);
}

gboolean study_spec_check(const study_spec *s, int n_ranks, GError **error)
{
  topo_variant *base = study_cluster_open(s->cluster, n_ranks, NULL, NULL, error);
  if (base == NULL) {
    g_prefix_error(error, "%s: cluster: ", s->path);
    return FALSE;
  }
  GString *problems = g_string_new(NULL);
  int n = 0;
  sim_replay_options opt = {0};
  /* set: applied in order, as the run does; a bad one is reported and
   * left out so the later ones are still checked. */
  for (guint i = 0; i < s->set_keys->len; i++) {
    check_one(s, base, &opt, " set:", s->set_keys->pdata[i], s->set_values->pdata[i], problems, &n);
    GError *e = NULL;
    if (!study_spec_apply(s->set_keys->pdata[i], s->set_values->pdata[i], base, &opt, &e))
      g_clear_error(&e);
  }
  for (guint i = 0; i < s->base_keys->len; i++)
    check_one(s, base, &opt, " base:", s->base_keys->pdata[i], s->base_values->pdata[i], problems, &n);
  /* Each value of each axis on its own (combinations are the points'). */
  for (int a = 0; a < s->n_axes; a++) {
    const study_axis *ax = &s->axes[a];
    char *where = g_strdup_printf("%d: axis", ax->line);
    for (guint k = 0; k < ax->values->len; k++)
      check_one(s, base, &opt, where, ax->key, ax->values->pdata[k], problems, &n);
    g_free(where);
  }
  topo_variant_free(base);
  if (n > 0)
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: %d problem%s in the spec, found before running any "
                "point (fix them all and run again):%s", s->path, n, n == 1 ? "" : "s", problems->str);
  g_string_free(problems, TRUE);
  return n == 0;
}
