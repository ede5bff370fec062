/* hlo_groups.c: HLO replica groups: the explicit {{0,1},{2,3}} form and
 * the iota form [G,S]<=[dims]T(perm), and their expansion to global
 * device groups by the collective's group mode (see hlo.h).  O(ids).
 */
#include "config.h"

#include "frontends/hlo_internal.h"

#include <string.h>

const char *fe_hlo_mode_name(fe_hlo_group_mode m)
{
  switch (m) {
  case FE_HLO_MODE_CROSS_REPLICA: return "cross-replica";
  case FE_HLO_MODE_CROSS_PARTITION: return "cross-partition";
  case FE_HLO_MODE_CROSS_REPLICA_AND_PARTITION: return "cross-replica-and-partition";
  case FE_HLO_MODE_FLATTENED_ID: return "flattened-id";
  }
  return "?";
}

/* Parses "{a,b,...}" of integers into ids (appending). */
static gboolean parse_int_list(hlo_ctx *c, const char **pp, GArray *ids, GError **error)
{
  const char *p = hlo_skip_ws(*pp);
  if (*p != '{')
    return hlo_fail(error, c->start, p, "expected '{'");
  p = hlo_skip_ws(p + 1);
  if (*p == '}') {
    *pp = p + 1;
    return TRUE;
  }
  for (;;) {
    int64_t v;
    p = hlo_skip_ws(p);
    if (!hlo_parse_i64(&p, &v))
      return hlo_fail(error, c->start, p, "expected an integer");
    if (ids->len >= HLO_MAX_IDS)
      return hlo_fail(error, c->start, p, "more than 2^22 ids");
    g_array_append_val(ids, v);
    p = hlo_skip_ws(p);
    if (*p == ',') {
      p++;
      continue;
    }
    if (*p == '}')
      break;
    return hlo_fail(error, c->start, p, "expected ',' or '}'");
  }
  *pp = p + 1;
  return TRUE;
}

/* Parses "[a,b,...]" or "(a,b,...)" of non-negative integers. */
static gboolean parse_dims(hlo_ctx *c, const char **pp, char open, char close, uint64_t *dims,
                           int *n, GError **error)
{
  const char *p = *pp;
  if (*p != open)
    return hlo_fail(error, c->start, p, "expected a dimension list");
  p++;
  *n = 0;
  for (;;) {
    p = hlo_skip_ws(p);
    uint64_t v;
    if (!hlo_parse_u64(&p, &v))
      return hlo_fail(error, c->start, p, "expected a non-negative integer");
    if (*n >= HLO_MAX_RANK)
      return hlo_fail(error, c->start, p, "more than 64 dimensions");
    dims[(*n)++] = v;
    p = hlo_skip_ws(p);
    if (*p == ',') {
      p++;
      continue;
    }
    if (*p == close)
      break;
    return hlo_fail(error, c->start, p, "unterminated dimension list");
  }
  *pp = p + 1;
  return TRUE;
}

/* Iota replica groups, [G,S]<=[d0,...]T(p0,...) at *pp: G groups of S
 * ids, the ids 0..G*S-1 reshaped to d and transposed by the permutation
 * (identity without T), read row by row.  Appends the ids and the group
 * offsets; *pp moves past the form.  O(G x S x rank). */
static gboolean parse_iota_groups(hlo_ctx *c, const char **pp, GArray *ids, GArray *off, GError **error)
{
  uint64_t gs[HLO_MAX_RANK], d[HLO_MAX_RANK], perm[HLO_MAX_RANK];
  int ng, nd, np = 0;
  if (!parse_dims(c, pp, '[', ']', gs, &ng, error))
    return FALSE;
  if (ng != 2) {
    hlo_fail(error, c->start, *pp, "iota replica groups need [groups,size]");
    return FALSE;
  }
  if ((*pp)[0] != '<' || (*pp)[1] != '=') {
    hlo_fail(error, c->start, *pp, "expected '<=' in iota replica groups");
    return FALSE;
  }
  *pp += 2;
  if (!parse_dims(c, pp, '[', ']', d, &nd, error))
    return FALSE;
  if (**pp == 'T') {
    (*pp)++;
    if (!parse_dims(c, pp, '(', ')', perm, &np, error))
      return FALSE;
    if (np != nd) {
      hlo_fail(error, c->start, *pp, "transpose permutation length differs from the reshape rank");
      return FALSE;
    }
    uint64_t seen = 0;
    for (int i = 0; i < np; i++) {
      if (perm[i] >= (uint64_t) nd || (seen & (UINT64_C(1) << perm[i]))) {
        hlo_fail(error, c->start, *pp, "transpose is not a permutation");
        return FALSE;
      }
      seen |= UINT64_C(1) << perm[i];
    }
  } else {
    for (int i = 0; i < nd; i++)
      perm[i] = (uint64_t) i;
    np = nd;
  }
  /* Without this, [G,0]<=[0] passes the size check below and G (any
   * 64-bit number) empty groups would be appended one by one. */
  if (gs[0] == 0 || gs[1] == 0) {
    hlo_fail(error, c->start, *pp, "iota replica groups need at least one group of at least one id");
    return FALSE;
  }
  unsigned __int128 total = 1;
  for (int i = 0; i < nd; i++) {
    total *= d[i];
    if (total > HLO_MAX_IDS) {
      hlo_fail(error, c->start, *pp, "iota replica groups hold more than 2^22 ids");
      return FALSE;
    }
  }
  if ((unsigned __int128) gs[0] * gs[1] != total) {
    hlo_fail(error, c->start, *pp, "iota groups x size differs from the number of ids");
    return FALSE;
  }
  /* Element k of the transposed array (shape d[perm[i]]) is the original
   * flat index of the multi-index m with m[perm[i]] = k's i-th coordinate. */
  uint64_t tdims[HLO_MAX_RANK], stride[HLO_MAX_RANK];
  for (int i = 0; i < nd; i++)
    tdims[i] = d[perm[i]];
  uint64_t s = 1;
  for (int i = nd - 1; i >= 0; i--) {
    stride[i] = s;
    s *= d[i];
  }
  g_array_set_size(ids, (guint) total);
  for (uint64_t k = 0; k < (uint64_t) total; k++) {
    uint64_t rem = k, v = 0;
    for (int i = nd - 1; i >= 0; i--) {
      uint64_t coord = rem % tdims[i];
      rem /= tdims[i];
      v += coord * stride[perm[i]];
    }
    g_array_index(ids, int64_t, (guint) k) = (int64_t) v;
  }
  for (uint64_t g = 1; g <= gs[0]; g++) {
    uint32_t o = (uint32_t) (g * gs[1]);
    g_array_append_val(off, o);
  }
  return TRUE;
}

gboolean hlo_parse_groups(hlo_ctx *c, const char *p, const char **end, uint32_t *n_groups,
                          uint32_t **group_off, int64_t **group_ids, GError **error)
{
  GArray *ids = g_array_new(FALSE, FALSE, sizeof(int64_t));
  GArray *off = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  uint32_t zero = 0;
  g_array_append_val(off, zero);
  p = hlo_skip_ws(p);
  if (*p == '{') {
    /* Explicit: {{0,1},{2,3}} or {} */
    p = hlo_skip_ws(p + 1);
    if (*p != '}') {
      for (;;) {
        if (!parse_int_list(c, &p, ids, error))
          goto fail;
        uint32_t o = ids->len;
        g_array_append_val(off, o);
        p = hlo_skip_ws(p);
        if (*p == ',') {
          p = hlo_skip_ws(p + 1);
          continue;
        }
        if (*p == '}')
          break;
        hlo_fail(error, c->start, p, "expected ',' or '}' between replica groups");
        goto fail;
      }
    }
    p++;
  } else if (*p == '[') {
    /* Iota: [G,S]<=[d0,...]T(p0,...) */
    if (!parse_iota_groups(c, &p, ids, off, error))
      goto fail;
  } else {
    hlo_fail(error, c->start, p, "unrecognised replica_groups form (expected {...} or [G,S]<=[...])");
    goto fail;
  }
  *end = p;
  *n_groups = off->len - 1;
  *group_off = (uint32_t *) g_array_free(off, FALSE);
  *group_ids = (int64_t *) g_array_free(ids, FALSE);
  return TRUE;
fail:
  g_array_free(ids, TRUE);
  g_array_free(off, TRUE);
  return FALSE;
}

gboolean fe_hlo_parse_replica_groups(const char *text, const char **end, uint32_t *n_groups,
                                     uint32_t **group_off, int64_t **group_ids, GError **error)
{
  hlo_ctx c = {text, FALSE};
  return hlo_parse_groups(&c, text, end, n_groups, group_off, group_ids, error);
}
static GArray *new_group(void)
{
  return g_array_new(FALSE, FALSE, sizeof(int64_t));
}

gboolean fe_hlo_global_groups(const fe_hlo_instr *in, int64_t n_devices, int64_t num_partitions,
                              GPtrArray *groups, GError **error)
{
  g_return_val_if_fail(n_devices > 0, FALSE);
  int64_t np = num_partitions;
  if (np <= 0)
    np = in->has_channel_id ? n_devices : 1;
  if (n_devices % np != 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: %" G_GINT64_FORMAT " devices are not a multiple of %" G_GINT64_FORMAT
                " partitions; pass the right partition count", in->name, n_devices, np);
    return FALSE;
  }
  int64_t nr = n_devices / np;
  /* Id space the groups index: replicas, partitions, or global devices. */
  int64_t space = in->mode == FE_HLO_MODE_FLATTENED_ID ? n_devices
                  : in->mode == FE_HLO_MODE_CROSS_PARTITION ? np : nr;
  uint32_t ng = in->has_replica_groups ? in->n_groups : 0;
  /* Logical groups (in id space); the empty form is one group of all ids. */
  GPtrArray *logical = g_ptr_array_new_with_free_func((GDestroyNotify) g_array_unref);
  if (ng == 0) {
    GArray *a = new_group();
    for (int64_t i = 0; i < space; i++)
      g_array_append_val(a, i);
    g_ptr_array_add(logical, a);
  } else {
    for (uint32_t g = 0; g < ng; g++) {
      GArray *a = new_group();
      for (uint32_t i = in->group_off[g]; i < in->group_off[g + 1]; i++) {
        int64_t id = in->group_ids[i];
        if (id < 0 || id >= space) {
          g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                      "%s: replica group id %" G_GINT64_FORMAT " is outside [0, %" G_GINT64_FORMAT
                      ") in %s mode (%" G_GINT64_FORMAT " devices, %" G_GINT64_FORMAT
                      " partitions)", in->name, id, space, fe_hlo_mode_name(in->mode), n_devices, np);
          g_array_unref(a);
          g_ptr_array_unref(logical);
          return FALSE;
        }
        g_array_append_val(a, id);
      }
      g_ptr_array_add(logical, a);
    }
  }
  for (guint g = 0; g < logical->len; g++) {
    GArray *a = logical->pdata[g];
    switch (in->mode) {
    case FE_HLO_MODE_FLATTENED_ID:
      g_ptr_array_add(groups, g_array_ref(a));
      break;
    case FE_HLO_MODE_CROSS_REPLICA:
      /* One group per partition: device = replica * np + partition. */
      for (int64_t part = 0; part < np; part++) {
        GArray *o = new_group();
        for (guint i = 0; i < a->len; i++) {
          int64_t d = g_array_index(a, int64_t, i) * np + part;
          g_array_append_val(o, d);
        }
        g_ptr_array_add(groups, o);
      }
      break;
    case FE_HLO_MODE_CROSS_PARTITION:
      for (int64_t r = 0; r < nr; r++) {
        GArray *o = new_group();
        for (guint i = 0; i < a->len; i++) {
          int64_t d = r * np + g_array_index(a, int64_t, i);
          g_array_append_val(o, d);
        }
        g_ptr_array_add(groups, o);
      }
      break;
    case FE_HLO_MODE_CROSS_REPLICA_AND_PARTITION: {
      /* The replicas of the group, each with all its partitions. */
      GArray *o = new_group();
      for (guint i = 0; i < a->len; i++)
        for (int64_t part = 0; part < np; part++) {
          int64_t d = g_array_index(a, int64_t, i) * np + part;
          g_array_append_val(o, d);
        }
      g_ptr_array_add(groups, o);
      break;
    }
    }
  }
  g_ptr_array_unref(logical);
  return TRUE;
}
