/* variant_dump.c: prints what topo_variant makes of each config given on
 * the command line under a fixed list of edits: the accessors, label,
 * notes, errors, the written YAML (hashed into a sweep's input_sha256) and
 * the built topology (topo_print).  bench/compare_variant.sh compiles it
 * against two builds and compares the dumps byte for byte; it is not part
 * of `make`.  Cost: a few hundred variant builds per config, seconds.
 * Usage: variant_dump CONFIG...  */
#include "config.h"
#include "topologies/topo_variant.h"

#include <stdio.h>
#include <string.h>

static void dump(const char *what, topo_variant *v, gboolean ok, GError *e)
{
  printf("=== %s: %s\n", what, ok ? "ok" : e ? e->message : "failed");
  int n = topo_variant_n_dims(v);
  printf("graph=%d n_dims=%d ranks=%d scale_out=%d domain=%d label=[%s] notes=[%s]\n", topo_variant_is_graph(v), n,
         topo_variant_n_ranks(v), topo_variant_scale_out_dim(v), topo_variant_domain_dim(v), topo_variant_label(v),
         topo_variant_notes(v));
  for (int d = 0; d < n; d++)
    printf("  dim %d %s %s size=%d bw=%" G_GUINT64_FORMAT " lat=%" G_GINT64_FORMAT " find=%d\n", d,
           topo_variant_dim_name(v, d), topo_kind_name(topo_variant_dim_kind(v, d)), topo_variant_dim_size(v, d),
           topo_variant_dim_bw(v, d), topo_variant_dim_latency(v, d),
           topo_variant_find_dim(v, topo_variant_dim_name(v, d)));
  char *y = topo_variant_to_yaml(v);
  fputs(y, stdout);
  g_free(y);
  topo_variant *c = topo_variant_copy(v);
  char *yc = topo_variant_to_yaml(c);
  printf("copy yaml %zu bytes, label=[%s]\n", strlen(yc), topo_variant_label(c));
  g_free(yc);
  GError *be = NULL;
  topo *t = topo_variant_build(c, &be);
  if (t) {
    printf("built: %s ranks=%d nodes=%u links=%u\n", topo_source(t), topo_n_ranks(t), topo_n_nodes(t),
           topo_n_links(t));
    if (topo_n_links(t) < 5000)
      topo_print(t, stdout);
    topo_free(t);
  } else {
    printf("build error: %s\n", be->message);
    g_error_free(be);
  }
  topo_variant_free(c);
}

int main(int argc, char **argv)
{
  static const char *const sets[][2] = {
    {"scale_up_bw", "1800GB/s"}, {"scale_out_bw", "400Gbps"}, {"ici_bw", "100GB/s"},
    {"scale_up_latency", "50ns"}, {"scale_out_latency", "25us"}, {"scale_up_domain", "32"},
    {"scale_up_domain", "2"}, {"scale_up_domain", "1"}, {"ranks", "16"}, {"ranks", "3"}, {"ranks", "64"},
    {"ranks", "1000"}, {"dims.0.kind", "fully_connected"}, {"dims.0.kind", "torus2d"},
    {"dims.0.kind", "torus3d"}, {"dims.0.kind", "fat_tree"}, {"dims.0.kind", "ring_uni"},
    {"dims.0.kind", "bogus"}, {"dims.0.shape", "4x8"}, {"dims.0.shape", "[2,2,2]"},
    {"dims.0.leaves", "2"}, {"dims.0.spines", "3"}, {"dims.0.oversubscription", "2.5"},
    {"dims.0.bandwidth", "50GB/s"}, {"dims.0.bandwidth", "1e3Gbps"}, {"dims.0.latency", "2.5us"},
    {"dims.1.latency", "2us"}, {"dims.1.bandwidth", "1Tbps"}, {"dims.1.size", "3"},
    {"dims.1.size", "64"}, {"dims.0.size", "4"}, {"dims.0.size", "5"}, {"dims.2.size", "2"},
    {"dims.1.kind", "fat_tree"}, {"dims.1.leaves", "3"}, {"dims.nope.bandwidth", "1GB/s"},
    {"dims.0.bandwidth", "fast"}, {"name", "renamed \"x\""}, {"model", "flow"},
    {"flow_quantum", "250ns"}, {"collectives.all_reduce", "ring"}, {"library.name", "hccl"},
    {"bogus_key", "1"},
  };
  static const double factors[] = {2.0, 0.5, 1.5, 0.0, 3.7e9};
  for (int a = 1; a < argc; a++) {
    GError *e = NULL;
    topo *base = topo_load(argv[a], &e);
    printf("##### %s\n", argv[a]);
    if (base == NULL) {
      printf("load error: %s\n", e->message);
      g_clear_error(&e);
      continue;
    }
    topo_variant *v0 = topo_variant_new(base);
    topo_free(base);
    dump("as loaded", v0, TRUE, NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(sets); i++) {
      topo_variant *v = topo_variant_copy(v0);
      gboolean ok = topo_variant_set(v, sets[i][0], sets[i][1], &e);
      char *what = g_strdup_printf("set %s=%s", sets[i][0], sets[i][1]);
      dump(what, v, ok, e);
      g_free(what);
      g_clear_error(&e);
      topo_variant_free(v);
    }
    for (int d = -1; d < topo_variant_n_dims(v0) && d < 3; d++)
      for (size_t f = 0; f < G_N_ELEMENTS(factors); f++) {
        topo_variant *v = topo_variant_copy(v0);
        char *what = g_strdup_printf("scale dim %d x%g", d, factors[f]);
        gboolean ok = topo_variant_scale_bw(v, d, factors[f], &e);
        g_clear_error(&e);
        ok = ok && topo_variant_scale_latency(v, d, factors[f], &e);
        dump(what, v, ok, e);
        g_free(what);
        g_clear_error(&e);
        topo_variant_free(v);
      }
    static const int sizes[] = {1, 2, 8, 16, 72, 1024};
    for (int d = 0; d < topo_variant_n_dims(v0) && d < 3; d++)
      for (size_t s = 0; s < G_N_ELEMENTS(sizes); s++) {
        topo_variant *v = topo_variant_copy(v0);
        char *what = g_strdup_printf("size dim %d = %d", d, sizes[s]);
        gboolean ok = topo_variant_set_dim_size(v, d, sizes[s], &e);
        dump(what, v, ok, e);
        g_free(what);
        g_clear_error(&e);
        topo_variant_free(v);
      }
    static const int fits[] = {1, 3, 8, 16, 96, 256, 1024};
    for (size_t s = 0; s < G_N_ELEMENTS(fits); s++) {
      topo_variant *v = topo_variant_copy(v0);
      char *what = g_strdup_printf("fit %d ranks", fits[s]);
      gboolean ok = topo_variant_fit_ranks(v, fits[s], &e);
      dump(what, v, ok, e);
      g_free(what);
      g_clear_error(&e);
      topo_variant_free(v);
    }
    /* A chain as a sweep point applies it: the CCL-Bench spec's. */
    {
      topo_variant *v = topo_variant_copy(v0);
      gboolean ok = topo_variant_fit_ranks(v, 16, &e) && topo_variant_set(v, "dims.0.kind", "fully_connected", &e) &&
                    topo_variant_set(v, "scale_up_domain", "32", &e) &&
                    topo_variant_set(v, "scale_up_bw", "1800GB/s", &e) &&
                    topo_variant_set(v, "scale_out_bw", "400Gbps", &e) &&
                    topo_variant_scale_bw(v, -1, 2.0, &e) && topo_variant_set(v, "dims.0.shape", "2x2", &e);
      dump("chain", v, ok, e);
      g_clear_error(&e);
      topo_variant_free(v);
    }
    topo_variant_free(v0);
  }
  return 0;
}
