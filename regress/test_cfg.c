/* test_cfg.c: the config document (config/cfg.h): format detection, the
 * top level, the net section's values, flattening of the collectives and
 * library sections, editing and writing back.  Expected values are the
 * input texts themselves (a setting is kept verbatim with its line) and
 * the messages the topology loader printed before the document existed
 * (doc/topology.md); each check states where its expectation comes from. */
#include "config.h"
#include "config/cfg.h"

#include <string.h>

static cfg_doc *load_ok(const char *yaml)
{
  GError *e = NULL;
  cfg_doc *d = cfg_load_string(yaml, "t.yaml", &e);
  g_assert_no_error(e);
  g_assert_nonnull(d);
  return d;
}

/* Loading fails with exactly `message` (the full text, file and line
 * included). */
static void load_fails(const char *yaml, int code, const char *message)
{
  GError *e = NULL;
  cfg_doc *d = cfg_load_string(yaml, "bad.yaml", &e);
  g_assert_null(d);
  g_assert_error(e, WISP_ERROR, code);
  g_test_message("expected: %s\nactual:   %s", message, e->message);
  g_assert_cmpstr(e->message, ==, message);
  g_error_free(e);
}

static const char *const dims = "dims: [{kind: ring, size: 4, bandwidth: 1GB/s, latency: 1us}]\n";

/* Settings are kept verbatim with their lines: a list of scalars is
 * comma-joined, a list of mappings gets index components, nested
 * mappings become dotted keys. */
static void test_flatten(void)
{
  char *y = g_strdup_printf("schema_version: 1\n"                                  /* line 1 */
                            "name: demo\n"                                         /* 2 */
                            "model: flow\n"                                        /* 3 */
                            "flow_quantum: 3us\n"                                  /* 4 */
                            "%s"                                                   /* 5 */
                            "collectives:\n"                                       /* 6 */
                            "  all_gather: [ring, direct]\n"                       /* 7 */
                            "  chunks: 4\n"                                        /* 8 */
                            "library:\n"                                           /* 9 */
                            "  name: nccl\n"                                       /* 10 */
                            "  registration: {mode: roa, gap: 2.6s}\n"             /* 11 */
                            "  tiers: [{a: 1}, {a: 2}]\n",                         /* 12 */
                            dims);
  cfg_doc *d = load_ok(y);
  g_free(y);
  int line = 0;
  g_assert_cmpint(cfg_doc_format(d), ==, CFG_FORMAT_WISP);
  g_assert_cmpstr(cfg_source(d), ==, "t.yaml");
  g_assert_cmpstr(cfg_name(d), ==, "demo");
  g_assert_cmpstr(cfg_get(d, "model", &line), ==, "flow");
  g_assert_cmpint(line, ==, 3);
  sim_time_ps q = -1;
  g_assert_true(cfg_get_time(d, "flow_quantum", &q));
  g_assert_cmpint(q, ==, 3 * SIM_PS_PER_US);
  g_assert_cmpstr(cfg_get(d, "collectives.all_gather", &line), ==, "ring,direct");
  g_assert_cmpint(line, ==, 7);
  g_assert_cmpstr(cfg_get(d, "collectives.chunks", &line), ==, "4");
  g_assert_cmpint(line, ==, 8);
  g_assert_cmpstr(cfg_get(d, "library.registration.gap", &line), ==, "2.6s");
  g_assert_cmpint(line, ==, 11);
  g_assert_cmpstr(cfg_get(d, "library.tiers.1.a", NULL), ==, "2");
  g_assert_null(cfg_get(d, "collectives.broadcast", NULL));
  /* Topology keys are the topology's: not settings. */
  g_assert_null(cfg_get(d, "dims", NULL));
  /* The library keys in strcmp order. */
  GPtrArray *k = cfg_keys(d, "library.");
  static const char *const want[] = {"library.name", "library.registration.gap", "library.registration.mode",
                                     "library.tiers.0.a", "library.tiers.1.a"};
  g_assert_cmpuint(k->len, ==, G_N_ELEMENTS(want));
  for (guint i = 0; i < k->len; i++)
    g_assert_cmpstr(k->pdata[i], ==, want[i]);
  g_ptr_array_unref(k);
  cfg_unref(d);
}

/* Defaults of the net section, and ASTRA-sim files (no settings). */
static void test_defaults_and_astra(void)
{
  char *y = g_strdup_printf("schema_version: 1\n%s", dims);
  cfg_doc *d = load_ok(y);
  g_free(y);
  g_assert_null(cfg_get(d, "model", NULL));
  g_assert_cmpstr(cfg_get_or_default(d, "model"), ==, "analytical");
  sim_time_ps q = -1;
  g_assert_false(cfg_get_time(d, "flow_quantum", &q));
  g_assert_null(cfg_name(d));
  cfg_unref(d);
  d = load_ok("topology: [Ring]\nnpus_count: [4]\nbandwidth: [50]\nlatency: [500]\n");
  g_assert_cmpint(cfg_doc_format(d), ==, CFG_FORMAT_ASTRA);
  GPtrArray *k = cfg_keys(d, "");
  g_assert_cmpuint(k->len, ==, 0);
  g_ptr_array_unref(k);
  /* A topology holding the document keeps it alive past the loader's
   * reference: two references, two unrefs. */
  cfg_ref(d);
  cfg_unref(d);
  g_assert_cmpint(cfg_doc_format(d), ==, CFG_FORMAT_ASTRA);
  cfg_unref(d);
}

/* The document's errors: the texts of the topology loader before the
 * config module (regress/test_topo.c checks them through topo_load). */
static void test_errors(void)
{
  char *y = g_strdup_printf("schema_version: 1\nmodel: packet\n%s", dims);
  load_fails(y, WISP_ERROR_PARSE, "bad.yaml:2: unknown model 'packet' (expected analytical or flow)");
  g_free(y);
  y = g_strdup_printf("schema_version: 1\nflow_quantum: soon\n%s", dims);
  load_fails(y, WISP_ERROR_PARSE,
             "bad.yaml:2: bad time 'soon' for 'flow_quantum' in 'topology': expected a number with a time unit, "
             "e.g. \"500ns\" or \"2.1us\"");
  g_free(y);
  y = g_strdup_printf("schema_version: 1\n%sfoo: 1\n", dims);
  load_fails(y, WISP_ERROR_PARSE,
             "bad.yaml:3: unknown key 'foo' in 'topology' (expected one of schema_version, name, description, "
             "model, flow_quantum, ranks, node_dims, dims, graph, placement, collectives, library, "
             "preset_version)");
  g_free(y);
  y = g_strdup_printf("schema_version: 1\n%scollectives: ring\n", dims);
  load_fails(y, WISP_ERROR_PARSE,
             "bad.yaml:3: 'collectives' must be a mapping, e.g. {all_reduce: ring, chunks: 4}");
  g_free(y);
  y = g_strdup_printf("schema_version: 1\n%slibrary: {name: nccl, name: hccl}\n", dims);
  load_fails(y, WISP_ERROR_PARSE, "bad.yaml:3: duplicate key 'name' under 'library'");
  g_free(y);
  load_fails("preset_version: 2\nschema_version: 1\n", WISP_ERROR_UNSUPPORTED,
             "bad.yaml:1: preset_version 2 is not supported; this wisp reads preset_version 1");
  load_fails("hello: world\n", WISP_ERROR_PARSE,
             "bad.yaml:1: cannot tell the format: a wisp topology starts with 'schema_version: 1'; an ASTRA-sim "
             "network.yml has topology, npus_count, bandwidth and latency");
  load_fails("topology: [Ring]\nnpus: [4]\n", WISP_ERROR_PARSE,
             "bad.yaml:2: unknown key 'npus' in 'network.yml' (expected one of topology, npus_count, bandwidth, "
             "latency)");
  GError *e = NULL;
  g_assert_null(cfg_load("/nonexistent/wisp.yaml", &e));
  g_assert_error(e, WISP_ERROR, WISP_ERROR_IO);
  g_assert_true(g_str_has_prefix(e->message, "/nonexistent/wisp.yaml: cannot read the topology: "));
  g_error_free(e);
}

/* Editing: a copy is independent of its original, values are checked,
 * and a key replaces the keys it would collide with in nested YAML. */
static void test_edit_and_write(void)
{
  char *y = g_strdup_printf("schema_version: 1\n%s"
                            "collectives: {all_reduce: ring}\n"
                            "library: {name: nccl, registration: {mode: roa, gap: 2.6s}}\n",
                            dims);
  cfg_doc *d = load_ok(y);
  g_free(y);
  cfg_doc *c = cfg_copy_settings(d);
  g_assert_cmpint(cfg_doc_format(c), ==, CFG_FORMAT_EDIT);
  const char *why = NULL;
  g_assert_true(cfg_is_setting("library.name"));
  g_assert_true(cfg_is_setting("model"));
  g_assert_false(cfg_is_setting("dims.x.size"));
  g_assert_false(cfg_set(c, "model", "packet", &why));
  g_assert_cmpstr(why, ==, "expected analytical or flow");
  g_assert_false(cfg_set(c, "flow_quantum", "soon", &why));
  g_assert_nonnull(why);
  g_assert_false(cfg_set(c, "library..x", "1", &why));
  g_assert_cmpstr(why, ==, "the key has an empty component");
  g_assert_true(cfg_set(c, "model", "flow", &why));
  g_assert_true(cfg_set(c, "library.registration", "off", &why));
  g_assert_true(cfg_set(c, "collectives.all_reduce", "ring,direct", &why));
  /* registration.mode and .gap are gone (under the new key); the
   * original keeps them. */
  g_assert_null(cfg_get(c, "library.registration.mode", NULL));
  g_assert_cmpstr(cfg_get(c, "library.registration", NULL), ==, "off");
  g_assert_cmpstr(cfg_get(d, "library.registration.mode", NULL), ==, "roa");
  g_assert_null(cfg_get(d, "model", NULL));
  /* Written back: one line per section, keys in order, values quoted. */
  GString *s = g_string_new(NULL);
  cfg_write_sections(c, s);
  const char *want = "collectives: {\"all_reduce\": \"ring,direct\"}\n"
                     "library: {\"name\": \"nccl\", \"registration\": \"off\"}\n";
  g_test_message("expected:\n%sactual:\n%s", want, s->str);
  g_assert_cmpstr(s->str, ==, want);
  /* And read again: the same settings. */
  char *again = g_strdup_printf("schema_version: 1\nmodel: flow\n%s%s", dims, s->str);
  cfg_doc *r = load_ok(again);
  g_assert_cmpstr(cfg_get(r, "collectives.all_reduce", NULL), ==, "ring,direct");
  g_assert_cmpstr(cfg_get(r, "library.registration", NULL), ==, "off");
  g_assert_cmpstr(cfg_get(r, "library.name", NULL), ==, "nccl");
  g_free(again);
  g_string_free(s, TRUE);
  cfg_unref(r);
  cfg_unref(c);
  /* An empty editable document writes nothing. */
  cfg_doc *n = cfg_new_edit("none");
  s = g_string_new(NULL);
  cfg_write_sections(n, s);
  g_assert_cmpstr(s->str, ==, "");
  g_string_free(s, TRUE);
  cfg_unref(n);
  cfg_unref(d);
}

/* The topology layer's keys in an editable document (cfg_put): kept
 * with their lines, copied, left out of the settings sections, and the
 * name settable; topo_variant keeps its topology section this way. */
static void test_put(void)
{
  cfg_doc *e = cfg_new_edit("edit");
  cfg_put(e, "dims.0.bandwidth", "50000000000B/s", 7);
  cfg_put(e, "ranks", "16", 0);
  cfg_put(e, "dims.0.bandwidth", "100000000000B/s", 7); /* replaces */
  cfg_set_name(e, "renamed");
  const char *why = NULL;
  g_assert_true(cfg_set(e, "library.name", "hccl", &why));
  cfg_doc *c = cfg_copy_settings(e);
  int line = -1;
  g_assert_cmpstr(cfg_get(c, "dims.0.bandwidth", &line), ==, "100000000000B/s");
  g_assert_cmpint(line, ==, 7);
  g_assert_cmpstr(cfg_get(c, "ranks", NULL), ==, "16");
  g_assert_cmpstr(cfg_name(c), ==, "renamed");
  /* The copy is independent of the original. */
  cfg_put(e, "ranks", "8", 0);
  g_assert_cmpstr(cfg_get(c, "ranks", NULL), ==, "16");
  GString *s = g_string_new(NULL);
  cfg_write_sections(c, s);
  g_assert_cmpstr(s->str, ==, "library: {\"name\": \"hccl\"}\n");
  g_string_free(s, TRUE);
  GPtrArray *k = cfg_keys(c, "dims.");
  g_assert_cmpuint(k->len, ==, 1);
  g_ptr_array_unref(k);
  cfg_set_name(c, NULL);
  g_assert_null(cfg_name(c));
  cfg_unref(c);
  cfg_unref(e);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/cfg/flatten", test_flatten);
  g_test_add_func("/cfg/defaults_and_astra", test_defaults_and_astra);
  g_test_add_func("/cfg/errors", test_errors);
  g_test_add_func("/cfg/edit_and_write", test_edit_and_write);
  g_test_add_func("/cfg/put", test_put);
  return g_test_run();
}
