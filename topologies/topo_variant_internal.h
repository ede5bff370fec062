/* topo_variant_internal.h: what topo_variant.c (keys, lifetime, read
 * access, YAML) and topo_variant_edit.c (edits) share; not installed.
 * The edits call the keys, never the other way. */
#ifndef WISP_TOPO_VARIANT_INTERNAL_H
#define WISP_TOPO_VARIANT_INTERNAL_H

#include "topologies/topo_variant.h"
#include "topologies/topo_internal.h"

G_BEGIN_DECLS

/* A view of one tier, read from the document's keys dims.D.* by
 * dim_read and written back by dim_write around an edit; the document
 * stays the only copy between edits. */
typedef struct {
  int index;
  const char *name;        /* the document's string: tier names are never edited */
  topo_kind kind;
  int size;
  wisp_bw_Bps bw;
  sim_time_ps latency;
  int n_axes;              /* 2 or 3 for tori (from the kind), else 0 */
  int shape[3];
  int leaves, spines;
  double oversub;
  wisp_bw_Bps stream_bw;   /* 0 = none */
  int line;                /* the tier's config line (0 = made by an edit) */
} tv_dim;

struct topo_variant {
  /* The whole config as flat keys: the settings (model, flow_quantum,
   * collectives.*, library.*) and the topology section (see put_section). */
  cfg_doc *doc;
  GString *notes;
  GString *label;
};

/* The document's value of key (NULL when absent); list.i.field's value
 * and line; list.i.field set to the printf-formatted value at line. */
const char *tv_key_get(const topo_variant *v, const char *key);
const char *tv_item_get(const topo_variant *v, const char *list, int i, const char *field, int *line);
void tv_item_put(topo_variant *v, const char *list, int i, const char *field, int line, const char *fmt, ...)
  G_GNUC_PRINTF(6, 7);
/* Integer, bandwidth and time values of keys this layer wrote (absent: 0). */
int tv_int_of(const char *s);
wisp_bw_Bps tv_bw_of(const char *s);
sim_time_ps tv_time_of(const char *s);
gboolean tv_is_torus(topo_kind k);
/* Tier d read from the keys into *x; *x written back to its keys. */
void tv_dim_read(const topo_variant *v, int d, tv_dim *x);
void tv_dim_write(topo_variant *v, const tv_dim *x);
/* Tiers in the document. */
int tv_n_tiers(const topo_variant *v);
/* Appends to the variant's label (", "-joined) and notes ("; "-joined). */
void tv_add_label(topo_variant *v, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
void tv_add_note(topo_variant *v, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* The config file the variant came from, for messages. */
const char *tv_src(const topo_variant *v);

G_END_DECLS
#endif
