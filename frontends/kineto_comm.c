/* kineto_comm.c: one communication kernel described: its kind from the
 * kernel, launch and CPU op, its size, its group (rank lists, process
 * group configs, the registry), its splits.  O(1) per kernel by hash
 * lookups, O(log C) for traces linked by time containment. */
#include "config.h"

#include "frontends/kineto_extract_internal.h"

#include <stdlib.h>
#include <string.h>

/* Innermost CPU comm ops on the launch's thread that contain time ts; returns
 * up to 4 event indices, innermost first. */
static int containing_cpu_ops(kt_xctx *c, const kt_event *launch, uint32_t out[4])
{
  gint64 key = kt_thread_key(launch);
  GArray *a = g_hash_table_lookup(c->cpu_by_thread, &key);
  if (!a)
    return 0;
  /* Binary search: last op with ts <= launch ts. */
  guint lo = 0, hi = a->len;
  while (lo < hi) {
    guint mid = (lo + hi) / 2;
    if (kt_x_ev(c->t, g_array_index(a, uint32_t, mid))->ts <= launch->ts)
      lo = mid + 1;
    else
      hi = mid;
  }
  int n = 0;
  for (guint k = lo; k-- > 0 && n < 4 && lo - k <= 16;) {
    const kt_event *e = kt_x_ev(c->t, g_array_index(a, uint32_t, k));
    if (e->ts <= launch->ts && launch->ts < e->ts + (e->dur > 0 ? e->dur : 1))
      out[n++] = g_array_index(a, uint32_t, k);
  }
  return n;
}

static const char *type_name_of(const kt_trace *t, uint32_t id) { return kt_str(t, id); }

/* The CPU-side ops linked to a communication kernel, most specific link
 * first (at most 8). */
typedef struct {
  uint32_t ev[8];
  int n;
} cpu_links;

/* Linked CPU ops: by the kernel's External id, by the launch's External id,
 * then by time containment of the launch on its thread. */
static void link_cpu_ops(kt_xctx *c, const kt_event *k, const kt_event *launch, cpu_links *cpu)
{
  cpu->n = 0;
  /* Old traces: a GPU op's or launch's External id equals its correlation and
   * links to nothing; such ids must not match unrelated CPU ops by accident. */
  int64_t ext[2] = { k->ext_id != k->correlation ? k->ext_id : KT_ABSENT,
                     launch && launch->ext_id != launch->correlation ? launch->ext_id : KT_ABSENT };
  for (int i = 0; i < 2; i++) {
    if (ext[i] == KT_ABSENT)
      continue;
    gpointer v = g_hash_table_lookup(c->cpu_by_ext, &ext[i]);
    if (v) {
      cpu->ev[cpu->n++] = GPOINTER_TO_UINT(v) - 1;
      break;
    }
  }
  if (launch) {
    uint32_t in[4];
    int n = containing_cpu_ops(c, launch, in);
    for (int i = 0; i < n; i++) {
      gboolean dup = FALSE;
      for (int q = 0; q < cpu->n; q++)
        dup |= cpu->ev[q] == in[i];
      if (!dup && cpu->n < 8)
        cpu->ev[cpu->n++] = in[i];
    }
  }
}

/* Kind: Collective name on the kernel, then on CPU ops, then CPU op names
 * (the most specific first: nccl:* over c10d::*), then the kernel name.
 * FALSE when none tells. */
static gboolean comm_kind(const kt_trace *t, const kt_event *k, const kt_meta *km, const cpu_links *cpu,
                          const kt_commreg_entry *re, et_coll_type *coll, int *p2p)
{
  gboolean known = km && kt_coll_from_arg(kt_str(t, km->coll_name), coll, p2p);
  for (int i = 0; i < cpu->n && !known; i++) {
    const kt_meta *m = kt_x_meta(t, kt_x_ev(t, cpu->ev[i]));
    known = m && kt_coll_from_arg(kt_str(t, m->coll_name), coll, p2p);
  }
  for (int pass = 0; pass < 2 && !known; pass++)
    for (int i = 0; i < cpu->n && !known; i++) {
      const char *n = kt_str(t, kt_x_ev(t, cpu->ev[i])->name);
      if ((pass == 0) == (g_str_has_prefix(n, "nccl:") || g_str_has_prefix(n, "rccl:")))
        known = kt_coll_from_cpu_op(n, coll, p2p);
    }
  if (!known && re && !re->kind_from_name && (re->coll != ET_COLL_NONE || re->p2p)) {
    *coll = re->coll;
    *p2p = re->p2p;
    known = TRUE;
  }
  if (!known)
    known = kt_coll_from_kernel(kt_str(t, k->name), coll, p2p);
  return known;
}

/* Input Dims x Input type of the CPU-side op (nccl:<op> first, then
 * record_param_comms, then c10d::<op>): the element count, its dtype in
 * *dtype and the size source in cm; KT_ABSENT when no op gives both. */
static int64_t size_from_input_dims(const kt_trace *t, const cpu_links *cpu, kt_comm *cm, const char **dtype)
{
  static const char *const pref[] = { "nccl:", "rccl:", "record_param_comms", "c10d::" };
  int64_t nelems = KT_ABSENT;
  for (size_t pi = 0; pi < G_N_ELEMENTS(pref) && nelems == KT_ABSENT; pi++)
    for (int i = 0; i < cpu->n && nelems == KT_ABSENT; i++) {
      const kt_event *e = kt_x_ev(t, cpu->ev[i]);
      const char *n = kt_str(t, e->name);
      const kt_meta *m = kt_x_meta(t, e);
      gboolean reg_op = pi == 2 && kt_commreg_cpu_op(n); /* _C_custom_ar::all_reduce, symm_mem::*, ... */
      if ((!g_str_has_prefix(n, pref[pi]) && !reg_op) || !m)
        continue;
      /* c10d::alltoall_base_ lists [output, input]: the send size is entry 1. */
      gboolean second = g_str_has_prefix(n, "c10d::alltoall_base");
      int64_t ne = second ? m->in_numel1 : m->in_numel0;
      uint32_t ty = second ? m->in_type1 : m->in_type0;
      if (ne != KT_ABSENT && ty != KT_NONE && kt_dtype_size(type_name_of(t, ty)) > 0) {
        nelems = ne;
        *dtype = kt_str(t, ty);
        cm->size_source = pi < 2 ? "CPU op nccl:* Input Dims x Input type"
                                 : reg_op ? "CPU op of the library (registry) Input Dims x Input type"
                                 : (pi == 2 ? "CPU op record_param_comms Input Dims x Input type"
                                            : "CPU op c10d::* Input Dims x Input type");
      }
    }
  return nelems;
}

/* Size: In/Out msg nelems x dtype of the kernel, else of a CPU op, else
 * the Input Dims of a CPU op; counted in the rank's size sources.  Returns
 * the element count (KT_ABSENT when unknown) and in *szm the metadata that
 * gave it (NULL for Input Dims or none). */
static int64_t comm_size(kt_xctx *c, kt_comm *cm, const kt_event *k, const kt_meta *km, const cpu_links *cpu,
                         const kt_meta **szm_out)
{
  const kt_trace *t = c->t;
  kt_rank *r = c->r;
  const kt_meta *szm = NULL;
  if (km && (km->in_nelems != KT_ABSENT || km->out_nelems != KT_ABSENT) && km->dtype != KT_NONE) {
    szm = km;
    cm->size_source = "kernel args (In/Out msg nelems x dtype)";
  }
  for (int i = 0; i < cpu->n && !szm; i++) {
    const kt_meta *m = kt_x_meta(t, kt_x_ev(t, cpu->ev[i]));
    if (m && (m->in_nelems != KT_ABSENT || m->out_nelems != KT_ABSENT) && m->dtype != KT_NONE) {
      szm = m;
      cm->size_source = "CPU op args (In/Out msg nelems x dtype)";
    }
  }
  int64_t nelems = KT_ABSENT;
  const char *dtype = NULL;
  if (szm) {
    nelems = cm->p2p == 2 ? szm->out_nelems : szm->in_nelems;
    if (nelems == KT_ABSENT)
      nelems = cm->p2p == 2 ? szm->in_nelems : szm->out_nelems;
    dtype = kt_str(t, szm->dtype);
  } else {
    nelems = size_from_input_dims(t, cpu, cm, &dtype);
  }
  cm->dsize = kt_dtype_size(dtype);
  cm->dtype = dtype;
  if (nelems == KT_ABSENT || nelems < 0 || !dtype) {
    r->size_unknown++;
    cm->size_source = "unknown";
    cm->bytes = 0;
    cm->unsized = TRUE;
  } else if (cm->dsize == 0) {
    r->size_unknown++;
    cm->unsized = TRUE;
    kt_x_rank_warn(r, "kernel '%s': unknown dtype '%s' (not in the c10 ScalarType table); size unknown",
              kt_str(t, k->name), dtype);
    cm->size_source = "unknown dtype";
    cm->bytes = 0;
  } else {
    cm->bytes = (uint64_t)nelems * (uint64_t)cm->dsize;
    if (g_str_has_prefix(cm->size_source, "kernel"))
      r->size_from_args++;
    else
      r->size_from_cpu++;
  }
  *szm_out = szm;
  return nelems;
}

/* Members from a truncated or malformed Process Group Ranks string rs:
 * Global rank start / stride with Group size when rs is truncated (checked
 * against the world), else an error for a malformed list.  Leaves
 * cm->ranks NULL when rs is truncated and start/stride are absent. */
static kt_desc ranks_from_list(kt_xctx *c, kt_comm *cm, const kt_event *k, const char *rs, int64_t grp_size,
                               int64_t rstart, int64_t rstride, GError **error)
{
  const kt_trace *t = c->t;
  gboolean trunc;
  const char *why = NULL;
  if (kt_parse_ranks(rs, grp_size, c->world, &cm->ranks, &cm->n_ranks, &trunc, &why))
    return KT_DESC_OK;
  if (trunc && rstart != KT_ABSENT && rstride > 0 && grp_size > 0) {
    if (rstart < 0 || rstart >= c->world || grp_size > c->world ||
        (grp_size > 1 && rstride > (c->world - 1 - rstart) / (grp_size - 1))) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s: kernel '%s' at ts %.3f us: Global rank start %" G_GINT64_FORMAT ", stride %" G_GINT64_FORMAT
                  " and Group size %" G_GINT64_FORMAT " name ranks beyond the job's world size %d",
                  t->path, kt_str(t, k->name), (double)k->ts / 1e6, rstart, rstride, grp_size, c->world);
      return KT_DESC_ERROR;
    }
    cm->n_ranks = (int)grp_size;
    cm->ranks = g_new(int, grp_size);
    for (int64_t i = 0; i < grp_size; i++)
      cm->ranks[i] = (int)(rstart + i * rstride);
  } else if (!trunc) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: kernel '%s' at ts %.3f us: Process Group Ranks \"%s\" %s (world size %d)", t->path,
                kt_str(t, k->name), (double)k->ts / 1e6, rs, why, c->world);
    return KT_DESC_ERROR;
  }
  return KT_DESC_OK;
}

/* Members from distributedInfo.pg_config by the group's name (checked
 * against the world); cm->ranks stays NULL when the name is not listed. */
static kt_desc ranks_from_pg_config(kt_xctx *c, kt_comm *cm, GError **error)
{
  const kt_trace *t = c->t;
  for (guint i = 0; i < t->pgs->len; i++) {
    kt_pg *pg = g_ptr_array_index(t->pgs, i);
    if (!pg->name || strcmp(pg->name, cm->pg_name) || pg->n_ranks <= 0)
      continue;
    for (int q = 0; q < pg->n_ranks; q++)
      if (pg->ranks[q] < 0 || pg->ranks[q] >= c->world) {
        g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                    "%s: distributedInfo.pg_config group '%s' names rank %d, beyond the job's world size %d",
                    t->path, pg->name, pg->ranks[q], c->world);
        return KT_DESC_ERROR;
      }
    cm->n_ranks = pg->n_ranks;
    cm->ranks = g_memdup2(pg->ranks, sizeof(int) * (size_t)pg->n_ranks);
    if (!cm->pg_desc)
      cm->pg_desc = pg->desc;
    break;
  }
  return KT_DESC_OK;
}

/* Group: name, description and members from the kernel's metadata, else a
 * CPU op's (the member list, else start/stride, else pg_config, else every
 * rank of the job), and the matching key "pg_name|r0,r1,...". */
static kt_desc comm_group(kt_xctx *c, kt_comm *cm, const kt_event *k, const kt_meta *km, const cpu_links *cpu,
                          GError **error)
{
  const kt_trace *t = c->t;
  kt_rank *r = c->r;
  const kt_meta *gm = NULL;
  if (km && (km->pg_ranks != KT_NONE || km->pg_name != KT_NONE))
    gm = km;
  for (int i = 0; i < cpu->n && !gm; i++) {
    const kt_meta *m = kt_x_meta(t, kt_x_ev(t, cpu->ev[i]));
    if (m && (m->pg_ranks != KT_NONE || m->pg_name != KT_NONE))
      gm = m;
  }
  /* Rank start/stride live on record_param_comms. */
  int64_t grp_size = gm ? gm->group_size : KT_ABSENT, rstart = KT_ABSENT, rstride = KT_ABSENT;
  for (int i = 0; i < cpu->n; i++) {
    const kt_meta *m = kt_x_meta(t, kt_x_ev(t, cpu->ev[i]));
    if (m && m->rank_start != KT_ABSENT && rstart == KT_ABSENT) {
      rstart = m->rank_start;
      rstride = m->rank_stride;
      if (grp_size == KT_ABSENT)
        grp_size = m->group_size;
    }
  }
  cm->pg_name = gm ? kt_str(t, gm->pg_name) : NULL;
  cm->pg_desc = gm ? kt_str(t, gm->pg_desc) : NULL;
  const char *rs = gm ? kt_str(t, gm->pg_ranks) : NULL;
  if (rs && ranks_from_list(c, cm, k, rs, grp_size, rstart, rstride, error) == KT_DESC_ERROR)
    return KT_DESC_ERROR;
  if (!cm->ranks && cm->pg_name && ranks_from_pg_config(c, cm, error) == KT_DESC_ERROR)
    return KT_DESC_ERROR;
  if (!cm->ranks && rs) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: kernel '%s': Process Group Ranks \"%s\" is truncated and neither Global rank start/stride nor "
                "distributedInfo.pg_config give the members; re-profile with a newer PyTorch or pass the groups "
                "explicitly", t->path, kt_str(t, k->name), rs);
    return KT_DESC_ERROR;
  }
  if (!cm->ranks) {
    cm->n_ranks = c->world;
    cm->ranks = g_new(int, c->world);
    for (int i = 0; i < c->world; i++)
      cm->ranks[i] = i;
    kt_count_skip(r->skipped, "collective without process group info (assumed the default group of all ranks)", 1);
  }
  if (grp_size != KT_ABSENT && grp_size != cm->n_ranks)
    kt_x_rank_warn(r, "kernel '%s': Group size %" G_GINT64_FORMAT " but %d ranks listed", kt_str(t, k->name), grp_size,
              cm->n_ranks);
  gboolean member = FALSE;
  for (int i = 0; i < cm->n_ranks; i++)
    member |= cm->ranks[i] == r->rank;
  if (!member)
    kt_x_rank_warn(r, "kernel '%s': rank %d is not a member of its group %s", kt_str(t, k->name), r->rank,
              rs ? rs : "(default)");
  GString *key = g_string_new(cm->pg_name ? cm->pg_name : "");
  g_string_append_c(key, '|');
  for (int i = 0; i < cm->n_ranks; i++)
    g_string_append_printf(key, "%s%d", i ? "," : "", cm->ranks[i]);
  cm->group_key = g_string_free(key, FALSE);
  return KT_DESC_OK;
}

/* Whether the In split size entries l are a usable split list: every entry
 * is >= 0 and their sum fits in int64 (stored in *sum).  Values a fuzzer or
 * a damaged trace puts there (2^63 - 1, 2^64 saturated) would otherwise
 * overflow the sum.  O(entries). */
static gboolean splits_sum(const GArray *l, gint64 *sum)
{
  *sum = 0;
  for (guint i = 0; i < l->len; i++) {
    gint64 v = g_array_index(l, gint64, i);
    if (v < 0 || v > G_MAXINT64 - *sum)
      return FALSE;
    *sum += v;
  }
  return TRUE;
}

/* All-to-all(v) per-peer split sizes from the In split size list of the
 * metadata szm that sized it (nelems elements): an all_to_allv when the
 * list has one entry per member and divides the count.  A list whose sum
 * or byte sizes cannot be represented is counted as skipped and the split
 * is taken as uniform. */
static void comm_splits(kt_xctx *c, kt_comm *cm, const kt_meta *szm, int64_t nelems)
{
  const char *sp = szm ? kt_str(c->t, szm->in_split) : NULL;
  GArray *l = g_array_new(FALSE, FALSE, sizeof(gint64));
  gint64 sum = 0;
  if (sp && kt_parse_int_list(sp, l) && l->len == (guint)cm->n_ranks) {
    gboolean ok = splits_sum(l, &sum);
    if (ok && sum > 0 && nelems >= 0 && nelems % sum == 0) {
      uint64_t per_row = 0, bytes = 0;
      ok = g_uint64_checked_mul(&per_row, (uint64_t)(nelems / sum), (uint64_t)cm->dsize);
      uint64_t *splits = g_new(uint64_t, cm->n_ranks);
      for (int i = 0; ok && i < cm->n_ranks; i++) {
        ok = g_uint64_checked_mul(&bytes, (uint64_t)g_array_index(l, gint64, i), per_row);
        splits[i] = bytes;
      }
      if (ok) {
        cm->splits = splits;
        cm->coll = ET_COLL_ALL_TO_ALLV;
      } else {
        g_free(splits);
      }
    }
    if (!ok)
      kt_count_skip(c->r->skipped, "all_to_allv split list out of range (uniform split assumed)", 1);
  } else if (sp && strstr(sp, "...")) {
    kt_count_skip(c->r->skipped, "all_to_allv split list cut at 30 entries (uniform split assumed)", 1);
  }
  g_array_free(l, TRUE);
}

/* A registry kernel that neither its args nor a linked CPU op sized:
 * a synchronisation kernel is a barrier without payload; otherwise the
 * workload card gives the size, the group and (MoE all-to-allv) the
 * per-member splits (kt_commreg_card_size).  Without a card, or with one
 * lacking a field, the kernel stays of unknown size: replayed at its
 * measured duration and reported (warn_unsized).  The group key is
 * "card:<rule>|members" so that card groups never merge with a traced
 * process group.  O(group size). */
static void registry_size(kt_xctx *c, kt_comm *cm)
{
  kt_rank *r = c->r;
  const kt_commreg_entry *re = cm->reg;
  int *ranks = NULL, n = 0;
  uint64_t bytes = 0, *splits = NULL;
  const char *why = NULL;
  gboolean ok = kt_commreg_card_size(re, c->opt->card, r->rank, c->world, &ranks, &n, &bytes, &splits, &why);
  if (!ok && re->size != KT_CR_SIZE_SYNC) {
    if (!r->card_missing_why)
      r->card_missing_why = why;
    return;
  }
  r->size_unknown--;
  cm->unsized = FALSE;
  cm->bytes = bytes;
  cm->size_source = re->size == KT_CR_SIZE_SYNC ? "registry: synchronisation, no payload" : why;
  if (re->size == KT_CR_SIZE_SYNC) {
    cm->coll = ET_COLL_BARRIER;
    cm->p2p = 0;
    r->size_from_sync++;
  } else {
    r->size_from_card++;
    cm->dtype = NULL;
    cm->dsize = 0;
  }
  if (ranks) {
    cm->ranks = ranks;
    cm->n_ranks = n;
    cm->pg_name = NULL;
    cm->pg_desc = re->size == KT_CR_SIZE_TOKENS_HIDDEN ? "TP group from the workload card"
                                                         : "EP group from the workload card";
    GString *key = g_string_new(re->size == KT_CR_SIZE_TOKENS_HIDDEN ? "card:tp|" : "card:ep|");
    for (int i = 0; i < n; i++)
      g_string_append_printf(key, "%s%d", i ? "," : "", ranks[i]);
    cm->group_key = g_string_free(key, FALSE);
  }
  if (splits) {
    cm->splits = splits;
    cm->coll = ET_COLL_ALL_TO_ALLV;
    const char *hop_why = NULL;
    if (kt_commreg_two_hop(re, c->opt->card, n, &cm->two_hop, &cm->two_hop_ppm, &hop_why))
      cm->size_source = hop_why;
  }
}

/* Fills kind, size, dtype, group, seq, peers and splits of comm from the
 * kernel's args and its linked CPU ops, one helper per field above. */
kt_desc kt_x_describe_comm(kt_xctx *c, kt_comm *cm, const kt_event *k, const kt_event *launch, GError **error)
{
  kt_trace *t = c->t;
  kt_rank *r = c->r;
  const kt_meta *km = kt_x_meta(t, k);
  cpu_links cpu;
  link_cpu_ops(c, k, launch, &cpu);
  et_coll_type coll = ET_COLL_NONE;
  int p2p = 0;
  if (!comm_kind(t, k, km, &cpu, cm->reg, &coll, &p2p)) {
    kt_count_skip(r->skipped, "communication kernel of unknown kind (kept as compute)", 1);
    kt_x_rank_warn(r, "communication kernel '%s' has no Collective name and no linked collective CPU op; replayed as "
              "compute", kt_str(t, k->name));
    return KT_DESC_SKIP;
  }
  cm->coll = coll;
  cm->p2p = p2p;
  cm->seq = km && km->seq != KT_ABSENT ? km->seq : KT_ABSENT;
  cm->root = cm->peer = -1;
  const kt_meta *szm = NULL;
  int64_t nelems = comm_size(c, cm, k, km, &cpu, &szm);
  uint64_t bytes_exact;
  if (!cm->unsized && (!wisp_mul_u64((uint64_t)nelems, cm->dsize, &bytes_exact) || bytes_exact > WISP_MAX_BYTES)) {
    /* Checked where the size enters: 2^62 float elements would wrap to 0 bytes. */
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "%s: kernel '%s' at ts %.3f us: %s give %" G_GINT64_FORMAT " elements of %s (%u bytes each), above "
                "the 2^50 bytes (1 PiB) wisp represents per message; fix the trace's size fields",
                t->path, kt_str(t, k->name), (double)k->ts / 1e6, cm->size_source, nelems, cm->dtype,
                (unsigned)cm->dsize);
    return KT_DESC_ERROR;
  }
  if (cm->unsized && cm->reg && cm->reg->size != KT_CR_SIZE_ARGS)
    registry_size(c, cm);
  if (!cm->ranks && comm_group(c, cm, k, km, &cpu, error) == KT_DESC_ERROR)
    return KT_DESC_ERROR;
  /* Peers and roots. */
  if (cm->p2p) {
    int64_t src = km ? km->src_rank : KT_ABSENT, dst = km ? km->dst_rank : KT_ABSENT;
    int64_t peer = cm->p2p == 1 ? dst : src;
    cm->peer = peer >= 0 && peer <= INT32_MAX ? (int)peer : -1;
  } else if (et_coll_rooted(coll)) {
    if (km && km->src_rank >= 0 && km->src_rank <= INT32_MAX)
      cm->root = (int)km->src_rank;
  }
  if ((coll == ET_COLL_ALL_TO_ALL || coll == ET_COLL_ALL_TO_ALLV) && cm->bytes > 0 && cm->n_ranks > 0 && !cm->splits)
    comm_splits(c, cm, szm, nelems);
  return KT_DESC_OK;
}
