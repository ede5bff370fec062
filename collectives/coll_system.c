/* coll_system.c: ASTRA-sim's system.json read as collectives settings
 * (coll_system.h).  The file is tokenized by the frontends' JSON reader
 * (frontends/fe_json.h), which gives byte offsets for every message; the
 * meaning of each key is this file's.  O(size of the file).
 */
#include "config.h"

#include <string.h>

#include "collectives/coll_internal.h"
#include "collectives/coll_system.h"
#include "frontends/fe_json.h"

/* The per-dimension implementation lists and the collective each sets. */
static const struct {
  const char *key;
  coll_prim prim;
} impl_keys[] = {
  {"all-reduce-implementation", COLL_PRIM_ALL_REDUCE},
  {"all-gather-implementation", COLL_PRIM_ALL_GATHER},
  {"reduce-scatter-implementation", COLL_PRIM_REDUCE_SCATTER},
  {"all-to-all-implementation", COLL_PRIM_ALL_TO_ALL},
};

/* Keys wisp reads no value from, with the reason said to the user. */
static const struct {
  const char *key, *why;
} ignored_keys[] = {
  {"scheduling-policy", "wisp starts each collective as soon as its members are ready; no queue orders them"},
  {"endpoint-delay", "no per-message endpoint delay; a library's latency parameters model fixed costs"},
  {"active-chunks-per-dimension", "every chunk of a collective moves as soon as its previous step ends"},
  {"local-mem-bw", "roofline compute; wisp replays the trace's measured compute times"},
  {"peak-perf", "roofline compute; wisp replays the trace's measured compute times"},
  {"roofline-enabled", "roofline compute; wisp replays the trace's measured compute times"},
  {"boost-mode", "ASTRA-sim does not read it either"},
  {"local-reduction-delay", "reductions cost collectives.reduce_bw in wisp"},
  {"replay-only", "wisp always replays every node"},
  {"trace-enabled", "ASTRA-sim's own logging"},
  {"track-local-mem", "ASTRA-sim's own logging"},
  {"local-mem-trace-filename", "ASTRA-sim's own logging"},
  {"model-shared-bus", "no shared-bus model"},
};

static void setting_free(gpointer p)
{
  coll_system_setting *s = p;
  g_free(s->key);
  g_free(s->value);
  g_free(s->from);
  g_free(s);
}

void coll_system_free(coll_system *s)
{
  if (s == NULL)
    return;
  g_free(s->source);
  g_ptr_array_unref(s->settings);
  g_ptr_array_unref(s->ignored);
  g_ptr_array_unref(s->notes);
  g_free(s);
}

static void add_setting(coll_system *s, const char *key, const char *value, const char *from, int n_dims,
                        uint64_t offset)
{
  coll_system_setting *x = g_new0(coll_system_setting, 1);
  x->key = g_strdup(key);
  x->value = g_strdup(value);
  x->from = g_strdup(from);
  x->n_dims = n_dims;
  x->offset = offset;
  g_ptr_array_add(s->settings, x);
}

/* One ASTRA-sim implementation name as a wisp algorithm name.  ASTRA-sim
 * writes a direct algorithm's window after its name ("direct8"); wisp has
 * no window, so the digits are dropped with a note. */
static gboolean impl_name(coll_system *s, const char *key, const char *text, coll_prim prim, const char **out,
                          fe_json *j, GError **error)
{
  char *name = g_strdup(text);
  size_t n = strlen(name);
  gboolean window = FALSE;
  if (g_ascii_strncasecmp(name, "direct", 6) == 0 || g_ascii_strncasecmp(name, "oneDirect", 9) == 0) {
    while (n > 0 && g_ascii_isdigit(name[n - 1])) {
      name[--n] = '\0';
      window = TRUE;
    }
  }
  coll_algo a;
  gboolean ok = coll_algo_from_name(name, &a) && a != COLL_ALGO_AUTO && a != COLL_ALGO_HIERARCHICAL;
  if (!ok)
    fe_json_error(j, error, "%s: unknown implementation '%s'; use ring, oneRing, direct, oneDirect, "
                  "halvingDoubling, oneHalvingDoubling, doubleBinaryTree (or a wisp name: ring_bidir, "
                  "pairwise, nvls)", key, text);
  else if (!coll_algo_supports(a, prim)) {
    fe_json_error(j, error, "%s: '%s' is not defined for %s in wisp; see doc/collectives.md for the "
                  "algorithms of each collective", key, text, coll_prim_name(prim));
    ok = FALSE;
  }
  if (ok && window)
    g_ptr_array_add(s->notes, g_strdup_printf("%s: '%s': wisp's direct algorithm has no window; the "
                                              "window is dropped", key, text));
  if (ok && g_ascii_strncasecmp(name, "one", 3) == 0)
    g_ptr_array_add(s->notes, g_strdup_printf("%s: '%s' is one flat algorithm over every NPU in ASTRA-sim; "
                                              "wisp runs %s on its dimension", key, text, coll_algo_name(a)));
  g_free(name);
  *out = ok ? coll_algo_name(a) : NULL;
  return ok;
}

/* A list of implementation names (one per dimension). */
static gboolean read_impl(coll_system *s, fe_json *j, const char *key, coll_prim prim, GError **error)
{
  fe_json_tok tok;
  if (!fe_json_next(j, &tok, error))
    return FALSE;
  if (tok != FE_JSON_ARR_BEGIN) {
    fe_json_error(j, error, "%s must be a list of implementation names, one per network dimension, e.g. "
                  "[\"ring\", \"doubleBinaryTree\"]", key);
    return FALSE;
  }
  uint64_t at = fe_json_offset(j);
  GString *v = g_string_new(NULL);
  int n = 0;
  for (;;) {
    if (!fe_json_next(j, &tok, error))
      break;
    if (tok == FE_JSON_ARR_END) {
      if (n == 0)
        fe_json_error(j, error, "%s is empty; give one implementation per network dimension", key);
      else if (n > COLL_MAX_DIMS)
        fe_json_error(j, error, "%s lists %d implementations; wisp takes at most %d (one per dimension)", key, n,
                      COLL_MAX_DIMS);
      else {
        char *cname = g_strdup_printf("collectives.%s", coll_prim_name(prim));
        add_setting(s, cname, v->str, key, n, at);
        g_free(cname);
        g_string_free(v, TRUE);
        return TRUE;
      }
      break;
    }
    const char *name = NULL;
    if (tok != FE_JSON_STRING) {
      fe_json_error(j, error, "%s: entry %d is not a string; give implementation names such as \"ring\"", key,
                    n + 1);
      break;
    }
    if (!impl_name(s, key, fe_json_text(j, NULL), prim, &name, j, error))
      break;
    g_string_append_printf(v, "%s%s", n ? "," : "", name);
    n++;
  }
  g_string_free(v, TRUE);
  return FALSE;
}

/* preferred-dataset-splits: a whole number from 1 to 1024. */
static gboolean read_splits(coll_system *s, fe_json *j, const char *key, GError **error)
{
  fe_json_tok tok;
  if (!fe_json_next(j, &tok, error))
    return FALSE;
  int64_t n = 0;
  if (tok != FE_JSON_NUMBER || !fe_json_int(fe_json_text(j, NULL), &n) || n < 1 || n > 1024) {
    fe_json_error(j, error, "%s must be a whole number from 1 to 1024 (the chunks each collective is cut into)",
                  key);
    return FALSE;
  }
  char *v = g_strdup_printf("%" G_GINT64_FORMAT, n);
  add_setting(s, "collectives.chunks", v, key, 0, fe_json_offset(j));
  g_free(v);
  g_ptr_array_add(s->notes, g_strdup_printf("%s: ASTRA-sim enlarges chunks smaller than the NPU count; wisp "
                                            "cuts each collective into %" G_GINT64_FORMAT " chunk%s as they are",
                                            key, n, n == 1 ? "" : "s"));
  return TRUE;
}

/* A string value out of a fixed set; *which gets its index. */
static gboolean read_choice(fe_json *j, const char *key, const char *const *names, int *which, GError **error)
{
  fe_json_tok tok;
  if (!fe_json_next(j, &tok, error))
    return FALSE;
  for (int i = 0; tok == FE_JSON_STRING && names[i]; i++) {
    if (g_ascii_strcasecmp(fe_json_text(j, NULL), names[i]) == 0) {
      *which = i;
      return TRUE;
    }
  }
  char *all = g_strjoinv(", ", (char **)names);
  fe_json_error(j, error, "%s must be one of %s", key, all);
  g_free(all);
  return FALSE;
}

/* One member of the top-level object: read, checked, or named ignored. */
static gboolean read_member(coll_system *s, fe_json *j, const char *key, GError **error)
{
  for (size_t i = 0; i < G_N_ELEMENTS(impl_keys); i++)
    if (strcmp(key, impl_keys[i].key) == 0)
      return read_impl(s, j, key, impl_keys[i].prim, error);
  if (strcmp(key, "preferred-dataset-splits") == 0)
    return read_splits(s, j, key, error);
  if (strcmp(key, "collective-optimization") == 0) {
    static const char *const opt[] = {"localBWAware", "baseline", NULL};
    int which = 0;
    if (!read_choice(j, key, opt, &which, error))
      return FALSE;
    if (which == 1)
      g_ptr_array_add(s->ignored, g_strdup_printf("%s \"baseline\" (wisp composes a multi-dimension all-reduce "
                                                  "as reduce-scatter, all-reduce, all-gather: localBWAware)", key));
    return TRUE;
  }
  if (strcmp(key, "scheduling-policy") == 0) {
    static const char *const pol[] = {"LIFO", "FIFO", "EXPLICIT", NULL};
    int which = 0;
    if (!read_choice(j, key, pol, &which, error))
      return FALSE;
    g_ptr_array_add(s->ignored, g_strdup_printf("%s (%s)", key, ignored_keys[0].why));
    return TRUE;
  }
  const char *why = g_str_has_suffix(key, "-implementation-custom")
                        ? "custom Chakra collective implementations are not read"
                        : "not modelled by wisp";
  for (size_t i = 0; i < G_N_ELEMENTS(ignored_keys); i++)
    if (strcmp(key, ignored_keys[i].key) == 0)
      why = ignored_keys[i].why;
  g_ptr_array_add(s->ignored, g_strdup_printf("%s (%s)", key, why));
  return fe_json_skip_value(j, error);
}

coll_system *coll_system_load(const char *path, GError **error)
{
  fe_json *j = fe_json_open(path, error);
  if (j == NULL)
    return NULL;
  coll_system *s = g_new0(coll_system, 1);
  s->source = g_strdup(path);
  s->settings = g_ptr_array_new_with_free_func(setting_free);
  s->ignored = g_ptr_array_new_with_free_func(g_free);
  s->notes = g_ptr_array_new_with_free_func(g_free);
  GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  fe_json_tok tok;
  gboolean ok = fe_json_next(j, &tok, error);
  if (ok && tok != FE_JSON_OBJ_BEGIN) {
    fe_json_error(j, error, "a system file is one JSON object of settings, e.g. {\"all-reduce-implementation\": "
                  "[\"ring\"]}");
    ok = FALSE;
  }
  while (ok && (ok = fe_json_next(j, &tok, error)) && tok == FE_JSON_KEY) {
    const char *key = fe_json_text(j, NULL);
    if (!g_hash_table_add(seen, g_strdup(key))) {
      fe_json_error(j, error, "key '%s' is given twice; keep one", key);
      ok = FALSE;
      break;
    }
    char *k = g_strdup(key);
    ok = read_member(s, j, k, error);
    g_free(k);
  }
  if (ok && (!fe_json_next(j, &tok, error) || tok != FE_JSON_EOF))
    ok = FALSE; /* the tokenizer names trailing text */
  g_hash_table_unref(seen);
  fe_json_free(j);
  if (!ok) {
    coll_system_free(s);
    return NULL;
  }
  return s;
}

char *coll_system_applied(const coll_system *s)
{
  GString *out = g_string_new(NULL);
  for (guint i = 0; i < s->settings->len; i++) {
    const coll_system_setting *x = s->settings->pdata[i];
    g_string_append_printf(out, "%s%s = %s (%s)", i ? ", " : "", x->key, x->value, x->from);
  }
  if (out->len == 0)
    g_string_append(out, "nothing");
  return g_string_free(out, FALSE);
}

char *coll_system_ignored(const coll_system *s)
{
  if (s->ignored->len == 0)
    return NULL;
  GString *out = g_string_new(NULL);
  for (guint i = 0; i < s->ignored->len; i++)
    g_string_append_printf(out, "%s%s", i ? ", " : "", (const char *)s->ignored->pdata[i]);
  return g_string_free(out, FALSE);
}
