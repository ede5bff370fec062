/* topo_variant.h: derive a modified topology from a base one (what-if
 * studies: "double the scale-out bandwidth", "scale-up domain 8 -> 16",
 * "set collectives.all_reduce to direct").
 *
 * A variant is an editable copy of a config document (config/cfg.h):
 * the settings of the other layers (model, flow_quantum, the verbatim
 * collectives.* / library.*, edited with cfg_set() without interpreting
 * them) and the topology section of the resolved base topology as flat
 * keys (dims.D.bandwidth, dims.D.size, graph.links.I.latency, ranks,
 * placement, ...; list in topo_variant.c) in the formats the written YAML
 * uses, with the tiers' config lines.  The accessors and edits below read
 * and write those keys; topo_variant_to_yaml() writes the document as wisp
 * YAML (schema_version 1) and topo_variant_build() reads that text back
 * (cfg_load_string, topo_from_config), so every variant passes exactly the
 * validation a hand-written config passes.  Building costs one YAML parse
 * and one topology construction: O(links), microseconds for cluster-sized
 * configs; an accessor costs O(log keys) (a graph's bandwidth O(links)).
 *
 * Tier roles used by the studies: when a hierarchical topology has two or
 * more dimensions, the outermost one is the scale-out tier and all inner
 * ones are scale-up tiers; with one dimension everything is scale-up and
 * there is no scale-out tier.  The scale-up domain is the outermost
 * scale-up dimension.
 *
 * Changing a dimension's size re-places the ranks: with contiguous
 * placement, dims [4, R/4] become [8, R/8] when the inner size goes 4 -> 8:
 * the next outer dimension shrinks to ceil(R / product of the inner sizes)
 * and every link is rebuilt for the new grouping.  A size larger than the
 * ranks can fill is capped (recorded in topo_variant_notes()), as CCL-Bench
 * caps the scale-up domain at the rank count.
 *
 * Keys accepted by topo_variant_set() (values as in the YAML config):
 *   model                                  analytical | flow
 *   flow_quantum                           "250ns" (the flow tier's quantum)
 *   name                                   text
 *   ranks                                  integer (the outermost tier is refitted)
 *   dims.TIER.bandwidth | .latency         "50GB/s", "2us" (TIER = name or index)
 *   dims.TIER.size                         integer (re-places ranks, see above)
 *   dims.TIER.kind                         ring, ring_uni, fully_connected, switch, ...
 *   dims.TIER.shape                        "4x4" or "[4,4]" (torus tiers)
 *   dims.TIER.leaves | .spines | .oversubscription   (fat_tree tiers)
 *   scale_up_bw | scale_out_bw | ici_bw    bandwidth of every scale-up tier,
 *                                          of the scale-out tier, of every torus tier
 *   scale_up_latency | scale_out_latency   likewise for latencies
 *   scale_up_domain                        size of the scale-up domain tier
 *   collectives.* | library.*              verbatim settings
 * Errors (unknown key, bad value, impossible resize) are WISP_ERROR
 * messages naming the key and what to write instead.
 */
#ifndef WISP_TOPO_VARIANT_H
#define WISP_TOPO_VARIANT_H

#include "topologies/topo.h"

G_BEGIN_DECLS

typedef struct topo_variant topo_variant;

/* The document of base (its settings and its resolved topology section);
 * base is not modified and may be freed afterwards.  O(keys). */
topo_variant *topo_variant_new(const topo *base);
topo_variant *topo_variant_copy(const topo_variant *v);
void topo_variant_free(topo_variant *v);

/* Sets one key (see the list above). */
gboolean topo_variant_set(topo_variant *v, const char *key, const char *value, GError **error);

/* Multiplies the bandwidth (latency) of dimension dim, or of every link when
 * dim is -1, by factor > 0, rounding to the nearest byte/s (picosecond);
 * bandwidths stay >= 1 B/s. */
gboolean topo_variant_scale_bw(topo_variant *v, int dim, double factor, GError **error);
gboolean topo_variant_scale_latency(topo_variant *v, int dim, double factor, GError **error);
/* Sets dimension dim's size and re-places ranks (see above). */
gboolean topo_variant_set_dim_size(topo_variant *v, int dim, int size, GError **error);
/* Resizes the outermost dimension (and caps inner non-torus ones) so the
 * topology holds exactly enough endpoint groups for n_ranks contiguous
 * ranks; used to fit a cluster preset to a workload. */
gboolean topo_variant_fit_ranks(topo_variant *v, int n_ranks, GError **error);

/* Read access.  Graph topologies report one dimension named "graph". */
int topo_variant_n_dims(const topo_variant *v);
gboolean topo_variant_is_graph(const topo_variant *v);
const char *topo_variant_dim_name(const topo_variant *v, int dim);
topo_kind topo_variant_dim_kind(const topo_variant *v, int dim);
int topo_variant_dim_size(const topo_variant *v, int dim);
wisp_bw_Bps topo_variant_dim_bw(const topo_variant *v, int dim);
sim_time_ps topo_variant_dim_latency(const topo_variant *v, int dim);
int topo_variant_n_ranks(const topo_variant *v);
/* Dimension index by name or decimal index, or -1. */
int topo_variant_find_dim(const topo_variant *v, const char *name);
/* The scale-out dimension (outermost of >= 2), or -1 when there is none;
 * the scale-up domain dimension (the one inside it, or 0), or -1 for graphs. */
int topo_variant_scale_out_dim(const topo_variant *v);
int topo_variant_domain_dim(const topo_variant *v);

/* Human notes about adjustments made by edits (capped sizes), "" when none. */
const char *topo_variant_notes(const topo_variant *v);
/* Short description of the edits, e.g. "scale_out.bandwidth x2"; "" when none. */
const char *topo_variant_label(const topo_variant *v);

/* The variant as wisp YAML text (g_free) and as a built topology. */
char *topo_variant_to_yaml(const topo_variant *v);
topo *topo_variant_build(const topo_variant *v, GError **error);

G_END_DECLS
#endif
