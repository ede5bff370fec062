/* cfg.h: one network config, parsed once, read by each layer.
 *
 * A config file (wisp YAML schema 1, a cluster preset, or ASTRA-sim's
 * network.yml; format in doc/topology.md) is parsed once into a cfg_doc.
 * The document owns the file's top level: it detects the format, checks
 * the top-level keys, `schema_version` / `preset_version`, `name` and
 * `description`, and keeps the settings of the layers above the topology
 * as flat keys with their lines:
 *
 *   section      keys                                read by
 *   topology     ranks, node_dims, dims, graph,      topo_from_config()
 *                placement (the YAML tree; ASTRA-sim: (topologies/topo.h)
 *                topology, npus_count, bandwidth,
 *                latency)
 *   net          model, flow_quantum                 net_settings_from_config()
 *                                                    (net/net.h)
 *   collectives  collectives.<op>, collectives.chunks, coll_policy_from_config()
 *                ... (flattened, see below)          (collectives/coll.h)
 *   library      library.* (flattened)               coll_library_params_from_config()
 *                                                    (collectives/coll_library.h)
 *
 * The document checks only what it can without knowing a layer's model:
 * the top level, the net section's values (`model` is analytical or flow,
 * `flow_quantum` a time) and the shape of the collectives/library
 * mappings.  Each layer parses and validates the meaning of its own
 * section, with errors that name the file, line and key.
 *
 * Flattening: a nested mapping becomes dotted keys ("library.registration.
 * mode"); a list of scalars is kept comma-joined ("ring,direct", the same
 * value as the string form); a list of mappings gets index components
 * ("x.0.y"); an empty value is "".
 *
 * What-if studies edit a document (cfg_copy_settings, cfg_set, cfg_put)
 * instead of a topology: topologies/topo_variant.h puts the topology
 * section into an editable copy as flat keys ("dims.0.bandwidth",
 * "graph.links.3.latency", "ranks", "placement"; the topology layer
 * chooses and checks them), edits those and the settings, and writes the
 * whole document back as wisp YAML (the other sections with
 * cfg_write_sections()).
 *
 * Cost: parsing is O(size of the file); lookups O(log keys).  A document
 * loaded from text keeps its YAML tree (a few hundred bytes per node) as
 * long as it lives; a topology holds a reference (topo_config()).
 * Documents are reference-counted and not thread-safe.
 */
#ifndef WISP_CFG_H
#define WISP_CFG_H

#include "common/wisp_util.h"

G_BEGIN_DECLS

typedef struct cfg_doc cfg_doc;

typedef enum {
  CFG_FORMAT_WISP,   /* wisp YAML (`schema_version: 1`), presets included */
  CFG_FORMAT_ASTRA,  /* ASTRA-sim network.yml */
  CFG_FORMAT_EDIT,   /* settings only, made by cfg_copy_settings (no tree) */
} cfg_format;

/* Reads and parses a config file.  Errors (GError in WISP_ERROR) name the
 * file and line: unreadable file, NUL bytes, YAML syntax, an unknown
 * format, unknown or duplicate top-level keys, unsupported versions, a bad
 * `model` or `flow_quantum`, malformed collectives/library mappings. */
cfg_doc *cfg_load(const char *path, GError **error);
/* The same from text; source_name (NULL = "<string>") prefixes messages. */
cfg_doc *cfg_load_string(const char *text, const char *source_name, GError **error);

cfg_doc *cfg_ref(cfg_doc *d);
void cfg_unref(cfg_doc *d);

/* The file name (or source_name), for error messages. */
const char *cfg_source(const cfg_doc *d);
cfg_format cfg_doc_format(const cfg_doc *d);
/* The config's `name:` (NULL when absent). */
const char *cfg_name(const cfg_doc *d);

/* A setting of the net, collectives or library section ("model",
 * "flow_quantum", "collectives.chunks", "library.name", ...), or NULL
 * when absent; *line (if non-NULL) gets its line.  O(log keys). */
const char *cfg_get(const cfg_doc *d, const char *key, int *line);
/* cfg_get, or the documented default of a key the document knows
 * ("model" -> "analytical"); NULL when neither. */
const char *cfg_get_or_default(const cfg_doc *d, const char *key);
/* A time setting ("flow_quantum"), validated when the document was made:
 * FALSE when absent. */
gboolean cfg_get_time(const cfg_doc *d, const char *key, sim_time_ps *out);
/* The keys that start with prefix ("library."), sorted by strcmp, in O(keys); the
 * array and its strings are the caller's (g_ptr_array_unref). */
GPtrArray *cfg_keys(const cfg_doc *d, const char *prefix);

/* ---- editing (what-if studies) ---- */

/* An editable copy of d's flat keys (the settings of net, collectives and
 * library, and in an editable document also the topology keys put with
 * cfg_put), without the tree: format CFG_FORMAT_EDIT, same source and
 * name.  O(keys). */
cfg_doc *cfg_copy_settings(const cfg_doc *d);
/* An empty editable document (no settings) named source. */
cfg_doc *cfg_new_edit(const char *source);
/* TRUE when key belongs to a section the document keeps (model,
 * flow_quantum, collectives.*, library.*). */
gboolean cfg_is_setting(const char *key);
/* Sets a setting of an editable document.  A key that is a prefix of
 * others, or lies under another, replaces them (the nested YAML could not
 * hold both).  FALSE with *why set (a static string) when the value or
 * key is bad: model not analytical/flow, flow_quantum not a time, a key
 * with an empty component. */
gboolean cfg_set(cfg_doc *d, const char *key, const char *value, const char **why);
/* Puts any key of an editable document (CFG_FORMAT_EDIT) with its line
 * (the config line it came from, 0 for an edit), replacing an earlier
 * value.  The document does not check it: this is how the topology layer
 * keeps its own section (topologies/topo_variant.c) in the document,
 * checked when the written YAML is read back.  O(log keys). */
void cfg_put(cfg_doc *d, const char *key, const char *value, int line);
/* Sets the `name:` of an editable document (NULL = none). */
void cfg_set_name(cfg_doc *d, const char *name);
/* Appends the collectives: and library: sections as flow mappings of
 * quoted strings, one line each, in key order; nothing when empty. */
void cfg_write_sections(const cfg_doc *d, GString *out);

/* Appends text to s as a double-quoted YAML scalar: '"' and '\\' escaped,
 * control characters as \xNN.  O(length). */
void cfg_yaml_quoted(GString *s, const char *text);

G_END_DECLS
#endif
