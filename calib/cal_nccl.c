/* cal_nccl.c: the free hardware parameters of a network config fitted to
 * nccl-tests logs (see cal_nccl.h).
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "calib/cal_nccl.h"
#include "collectives/coll.h"
#include "common/wisp_util.h"

#define KIB 1024ull
#define MIB (1024ull * 1024ull)

/* The median of v's values (reordered), -1 for none. */
static double median(GArray *v)
{
  return v->len ? wisp_median((double *)(void *)v->data, v->len) : -1;
}

/* One region's objective term from its squared log errors (reordered):
 * the median, which is what the targets measure and which a few rows off
 * the model's shape (a ramp, an outlier) cannot move, plus a tenth of the
 * mean, so every row still pulls and the descent sees no flat steps.
 * O(n) expected. */
static double region_term(GArray *l2)
{
  double mean = 0;
  for (guint i = 0; i < l2->len; i++)
    mean += g_array_index(l2, double, i);
  mean /= l2->len;
  return median(l2) + 0.1 * mean;
}

/* TRUE when wisp runs table t: a known collective (or sendrecv) with a
 * known rank count. */
static gboolean runnable(const coll_ncclt_table *t)
{
  et_coll_type ty;
  return t->ranks > 1 && (coll_ncclt_op(t->test, &ty) || coll_ncclt_is_sendrecv(t->test));
}

static int max_ranks(GPtrArray *logs)
{
  int m = 0;
  for (guint i = 0; i < logs->len; i++) {
    const coll_ncclt_log *log = g_ptr_array_index(logs, i);
    for (guint k = 0; k < log->tables->len; k++) {
      const coll_ncclt_table *t = &g_array_index(log->tables, coll_ncclt_table, k);
      if (runnable(t))
        m = MAX(m, t->ranks);
    }
  }
  return m;
}

/* Simulates one row alone (as collbench --compare-csv): ranks 0..n-1,
 * root at the log's position, sendrecv as the ring shift. */
static gboolean sim_row(const topo *t, net_tier tier, const coll_policy *pol, const int *rk, int n, const char *test,
                        const coll_ncclt_row *rr, sim_time_ps *tm, GError **error)
{
  et_coll_type type = ET_COLL_ALL_TO_ALLV;
  uint64_t *splits = NULL;
  uint64_t bytes = 0;
  if (coll_ncclt_is_sendrecv(test)) {
    splits = g_new0(uint64_t, (size_t)n * (size_t)n);
    for (int i = 0; i < n; i++)
      splits[(size_t)i * (size_t)n + (size_t)((i + 1) % n)] = rr->size;
  } else {
    coll_ncclt_op(test, &type);
    bytes = coll_ncclt_comm_size(type, rr->size, n);
  }
  int root = et_coll_rooted(type) ? (rr->root >= 0 && rr->root < n ? rk[rr->root] : rk[0]) : -1;
  coll_desc d = { .type = type, .bytes = bytes, .ranks = rk, .n_ranks = n, .root = root, .splits = splits };
  coll_info info;
  gboolean ok = coll_measure(t, tier, pol, &d, tm, &info, error);
  g_free(splits);
  return ok;
}

/* One table on topology t: appends its quality to q, and to *ss its
 * objective terms (one per size region it has, each the mean of the
 * region's squared log errors; count in *nterms).  The regions are the
 * two the fit identifies hardware from (cal_nccl.h): sizes >= 64 MiB
 * (bandwidth) and <= 64 KiB (latency, launch); a table with neither
 * contributes the mean over all its rows. */
static gboolean measure_table(const topo *t, net_tier tier, const coll_ncclt_log *lg, const coll_ncclt_table *tb,
                              GArray *q, double *ss, int *nterms, GError **error)
{
  GArray *reg[3];                   /* squared log errors: large, small, in between */
  for (int r = 0; r < 3; r++)
    reg[r] = g_array_new(FALSE, FALSE, sizeof(double));
  coll_policy *pol = coll_policy_new_from_topo(t, error);
  if (pol == NULL)
    return FALSE;
  coll_library_params lib = *coll_policy_library(pol);
  lib.gpus_per_thread = tb->gpus_per_thread > 0 ? tb->gpus_per_thread : 1;
  coll_policy_set_library(pol, &lib);
  int *rk = g_new(int, tb->ranks);
  for (int i = 0; i < tb->ranks; i++)
    rk[i] = i;
  GArray *bl = g_array_new(FALSE, FALSE, sizeof(double)), *ts = g_array_new(FALSE, FALSE, sizeof(double));
  GArray *ba = g_array_new(FALSE, FALSE, sizeof(double));
  cal_nccl_quality qq;
  memset(&qq, 0, sizeof qq);
  gboolean ok = TRUE;
  for (guint i = 0; i < lg->rows->len && ok; i++) {
    const coll_ncclt_row *rr = &g_array_index(lg->rows, coll_ncclt_row, i);
    et_coll_type ty;
    if (rr->table != tb->table ||
        (coll_ncclt_op(tb->test, &ty) && coll_ncclt_comm_size(ty, rr->size, tb->ranks) == 0))
      continue;
    sim_time_ps tm = 0;
    ok = sim_row(t, tier, pol, rk, tb->ranks, tb->test, rr, &tm, error);
    if (!ok || tm <= 0)
      break;
    double sim_us = (double)tm / 1e6, lr = log(sim_us / rr->time_us);
    double l2 = lr * lr;
    g_array_append_val(reg[rr->size >= 64 * MIB ? 0 : rr->size <= 64 * KIB ? 1 : 2], l2);
    qq.rows++;
    /* Same size, same factor: busbw error = |t_real / t_sim - 1|. */
    double be = fabs(rr->time_us / sim_us - 1), te = fabs(sim_us / rr->time_us - 1);
    g_array_append_val(ba, be);
    if (rr->size >= 64 * MIB)
      g_array_append_val(bl, be);
    if (rr->size <= 64 * KIB)
      g_array_append_val(ts, te);
  }
  for (int r = 0; ok && r < 3; r++)
    if (reg[r]->len > 0 && (r < 2 || reg[0]->len + reg[1]->len == 0)) {
      *ss += region_term(reg[r]);
      (*nterms)++;
    }
  for (int r = 0; r < 3; r++)
    g_array_free(reg[r], TRUE);
  if (ok && q != NULL) {
    g_strlcpy(qq.file, lg->path, sizeof qq.file);
    qq.table = tb->table;
    g_strlcpy(qq.test, tb->test, sizeof qq.test);
    qq.ranks = tb->ranks;
    qq.bus_large = median(bl);
    qq.time_small = median(ts);
    qq.bus_all = median(ba);
    g_array_append_val(q, qq);
  }
  g_array_free(bl, TRUE);
  g_array_free(ts, TRUE);
  g_array_free(ba, TRUE);
  g_free(rk);
  coll_policy_free(pol);
  return ok;
}

gboolean cal_nccl_measure(const topo_variant *v, GPtrArray *logs, net_tier tier, GArray *q, double *rms,
                          GError **error)
{
  topo *t = topo_variant_build(v, error);
  if (t == NULL)
    return FALSE;
  double ss = 0;
  int n = 0;
  gboolean ok = TRUE;
  for (guint i = 0; i < logs->len && ok; i++) {
    const coll_ncclt_log *log = g_ptr_array_index(logs, i);
    for (guint k = 0; k < log->tables->len && ok; k++) {
      const coll_ncclt_table *tb = &g_array_index(log->tables, coll_ncclt_table, k);
      if (runnable(tb) && tb->ranks <= topo_n_ranks(t))
        ok = measure_table(t, tier, log, tb, q, &ss, &n, error);
    }
  }
  topo_free(t);
  if (ok && n == 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "no table of the nccl-tests logs can run: each needs a "
                "collective wisp runs and a rank count the log states (see `wisp collbench --compare-csv`)");
    return FALSE;
  }
  *rms = ok ? sqrt(ss / n) : 0;
  return ok;
}

/* The variant with parameter multipliers m applied to base. */
static topo_variant *apply(const cal_nccl_fit *f, const topo_variant *base, const double *m, GError **error)
{
  topo_variant *v = topo_variant_copy(base);
  gboolean ok = TRUE;
  for (int p = 0; p < f->n_params && ok; p++) {
    double x = f->base[p] * m[p];
    char *val = NULL;
    if (g_str_has_suffix(f->key[p], ".bandwidth"))
      val = g_strdup_printf("%.6gGB/s", x / 1e9);
    else if (g_str_has_suffix(f->key[p], "_scale") || g_str_has_suffix(f->key[p], "_efficiency"))
      val = g_strdup_printf("%.6g", x);
    else
      val = g_strdup_printf("%.6gns", x / 1e3);
    ok = topo_variant_set(v, f->key[p], val, error);
    g_free(val);
  }
  if (!ok) {
    topo_variant_free(v);
    return NULL;
  }
  return v;
}

/* TRUE when the runnable tables show the latency-type parameters (the
 * tiers' latencies, launch, per-step overhead): some table has a row at
 * <= 64 KiB, or some table has no row at >= 64 MiB (then the objective
 * takes all its rows, cal_nccl.h).  Tables of large sizes only (32 MiB -
 * 16 GiB, as xxrjun's) show bandwidth alone; there the latency-type
 * parameters only bent the bandwidth plateau's shape (the 10 x 1 GPU H100
 * all-reduce fit took NCCL's per-step figures x0.49, making the 80-rank
 * all-gather 25.7 -> 31.4 % off).  O(rows). */
static gboolean shows_latency(GPtrArray *logs)
{
  for (guint i = 0; i < logs->len; i++) {
    const coll_ncclt_log *log = g_ptr_array_index(logs, i);
    for (guint k = 0; k < log->tables->len; k++) {
      const coll_ncclt_table *t = &g_array_index(log->tables, coll_ncclt_table, k);
      gboolean large = FALSE;
      for (guint r = 0; r < log->rows->len && runnable(t); r++) {
        const coll_ncclt_row *rr = &g_array_index(log->rows, coll_ncclt_row, r);
        if (rr->table != t->table)
          continue;
        if (rr->size <= 64 * KIB)
          return TRUE;
        large = large || rr->size >= 64 * MIB;
      }
      if (runnable(t) && !large)
        return TRUE;
    }
  }
  return FALSE;
}

/* The free parameters of base: tier 0's bandwidth and latency (unless a
 * node holds one GPU: no scale-up link carries anything), tier 1's when
 * the tables span more ranks than tier 0 holds, the launch cost.  With
 * library nccl, tier 1's effective bandwidth is its line rate times
 * library.net_efficiency, the parameter fitted: NCCL's topology search,
 * channels and choice keep seeing the line rate (the NIC's nominal
 * speed, what NCCL sees on that machine), and the measured share scales
 * the simulated rate continuously, where a fitted line rate moved the
 * ring only by a step of the search's speed array (48 GB/s for any NIC
 * from 48 to 96 GB/s). */
static void choose_params(cal_nccl_fit *f, const topo_variant *base, int ranks, const coll_library_params *lib,
                          gboolean small)
{
  int nd = topo_variant_n_dims(base);
  for (int d = 0; d < MIN(nd, 2); d++) {
    if (d == 1 && ranks <= topo_variant_dim_size(base, 0))
      break;
    if (d == 0 && nd > 1 && topo_variant_dim_size(base, 0) <= 1)
      continue;
    if (d == 1 && cal_rate_is_share(base, d, lib)) {
      g_strlcpy(f->key[f->n_params], CAL_SHARE_KEY, sizeof f->key[0]);
      f->line_Bps = (double)topo_variant_dim_bw(base, 1);
      f->base[f->n_params++] = lib->net_efficiency > 0 ? lib->net_efficiency : 1.0;
    } else {
      g_snprintf(f->key[f->n_params], sizeof f->key[0], "dims.%d.bandwidth", d);
      f->base[f->n_params++] = (double)topo_variant_dim_bw(base, d);
    }
    if (!small)
      continue;
    g_snprintf(f->key[f->n_params], sizeof f->key[0], "dims.%d.latency", d);
    f->base[f->n_params++] = MAX((double)topo_variant_dim_latency(base, d), 1000.0);
  }
  if (!small)
    return;
  g_strlcpy(f->key[f->n_params], "library.launch", sizeof f->key[0]);
  f->base[f->n_params++] = MAX((double)lib->launch, 1000.0);
  /* The per-step overhead: a factor on NCCL's per-hop latencies (library
   * nccl only; the other libraries have no such figures). */
  if (lib->kind == COLL_LIBRARY_NCCL) {
    g_strlcpy(f->key[f->n_params], "library.step_latency_scale", sizeof f->key[0]);
    f->base[f->n_params++] = lib->step_latency_scale > 0 ? lib->step_latency_scale : 1.0;
  }
}

/* TRUE for a parameter that sets a link's effective rate: a tier's
 * bandwidth or the scale-out tier's measured share of its line rate. */
static gboolean is_rate(const char *key)
{
  return g_str_has_suffix(key, ".bandwidth") || strcmp(key, CAL_SHARE_KEY) == 0;
}

static double eval(cal_nccl_fit *f, const topo_variant *base, GPtrArray *logs, net_tier tier, const double *m,
                   GError **error)
{
  topo_variant *v = apply(f, base, m, error);
  double rms = 0;
  f->evals++;
  gboolean ok = v != NULL && cal_nccl_measure(v, logs, tier, NULL, &rms, error);
  topo_variant_free(v);
  /* The config's bandwidths are the prior: each pays CAL_NCCL_PRIOR x
   * (ln factor)^2, so a bandwidth the tables hardly see (a 2-node table
   * says little about the network at 4 nodes) stays at the spec sheet's
   * line rate instead of drifting along a flat direction; x2 costs as much
   * as a 2.2 % rms error.  Latencies, launch and per-step overhead have no
   * such prior: a spec-only config's values for them are assumptions
   * (presets tag them [ASSUMPTION]), not data. */
  double prior = 0;
  for (int p = 0; p < f->n_params; p++)
    if (is_rate(f->key[p]))
      prior += log(m[p]) * log(m[p]);
  return ok ? sqrt(rms * rms + CAL_NCCL_PRIOR * prior) : -1;
}

/* Coordinate descent in log space (see cal_nccl.h). */
static gboolean descend(cal_nccl_fit *f, const topo_variant *base, GPtrArray *logs, net_tier tier, double *m,
                        double *best, GError **error)
{
  static const double steps[] = { 2.0, 1.25, 1.07, 1.02 };
  for (size_t s = 0; s < G_N_ELEMENTS(steps); s++) {
    gboolean improved = TRUE;
    while (improved && f->evals < CAL_NCCL_MAX_EVALS) {
      improved = FALSE;
      for (int p = 0; p < f->n_params && f->evals < CAL_NCCL_MAX_EVALS; p++) {
        for (int dir = 0; dir < 2; dir++) {
          double keep = m[p], x = dir ? keep / steps[s] : keep * steps[s];
          /* A link's effective bandwidth stays at or below the config's
           * (the spec sheet's line rate): a fit that wants more is
           * compensating a mechanism, and then mis-predicts the tables
           * that mechanism does not touch. */
          double hi = g_str_has_suffix(f->key[p], ".bandwidth") ? 1.0 : is_rate(f->key[p]) ? 1.0 / f->base[p] : 20;
          if (x < 0.05 || x > hi + 1e-9)
            continue;
          m[p] = x;
          double r = eval(f, base, logs, tier, m, error);
          if (r < 0)
            return FALSE;
          if (r < *best - 1e-12) {
            *best = r;
            improved = TRUE;
            break;
          }
          m[p] = keep;
        }
      }
    }
  }
  return TRUE;
}

cal_nccl_fit *cal_nccl_fit_logs(const topo_variant *base0, GPtrArray *logs, net_tier tier, GError **error)
{
  int ranks = max_ranks(logs);
  if (ranks == 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "no table of the nccl-tests logs can run: each needs a "
                "collective wisp runs and a rank count the log states (see `wisp collbench --compare-csv`)");
    return NULL;
  }
  topo_variant *base = topo_variant_copy(base0);
  if (topo_variant_n_ranks(base) < ranks && !topo_variant_fit_ranks(base, ranks, error)) {
    topo_variant_free(base);
    return NULL;
  }
  topo *bt = topo_variant_build(base, error);
  coll_policy *pol = bt ? coll_policy_new_from_topo(bt, error) : NULL;
  if (pol == NULL) {
    if (bt)
      topo_free(bt);
    topo_variant_free(base);
    return NULL;
  }
  cal_nccl_fit *f = g_new0(cal_nccl_fit, 1);
  choose_params(f, base, ranks, coll_policy_library(pol), shows_latency(logs));
  coll_policy_free(pol);
  topo_free(bt);
  f->before = g_array_new(FALSE, FALSE, sizeof(cal_nccl_quality));
  f->after = g_array_new(FALSE, FALSE, sizeof(cal_nccl_quality));
  double m[CAL_NCCL_MAX_PARAMS];
  for (int p = 0; p < f->n_params; p++)
    m[p] = 1.0;
  gboolean ok = cal_nccl_measure(base, logs, tier, f->before, &f->loss_before, error);
  /* The start: every factor 1 (no prior term), which differs from the
   * base when library.net_efficiency is a parameter (measured at 1: the
   * ring graph's quantisation leaves the wire, coll_nccl_efficiency). */
  double best = -1;
  if (ok) {
    best = eval(f, base, logs, tier, m, error);
    ok = best >= 0;
  }
  ok = ok && descend(f, base, logs, tier, m, &best, error);
  if (ok)
    f->result = apply(f, base, m, error);
  ok = ok && f->result != NULL && cal_nccl_measure(f->result, logs, tier, f->after, &f->loss_after, error);
  for (int p = 0; p < f->n_params; p++)
    f->fitted[p] = f->base[p] * m[p];
  topo_variant_free(base);
  if (!ok) {
    cal_nccl_fit_free(f);
    return NULL;
  }
  return f;
}

void cal_nccl_fit_free(cal_nccl_fit *f)
{
  if (f == NULL)
    return;
  if (f->before)
    g_array_free(f->before, TRUE);
  if (f->after)
    g_array_free(f->after, TRUE);
  topo_variant_free(f->result);
  g_free(f);
}

static void value_str(const char *key, double x, char *buf, size_t len)
{
  if (g_str_has_suffix(key, ".bandwidth"))
    g_snprintf(buf, len, "%.4g GB/s", x / 1e9);
  else if (g_str_has_suffix(key, "_scale") || g_str_has_suffix(key, "_efficiency"))
    g_snprintf(buf, len, "%.4g", x);
  else
    g_snprintf(buf, len, "%.4g us", x / 1e6);
}

static void pct(FILE *out, double x)
{
  if (x < 0)
    fprintf(out, "%8s", "n/a");
  else
    fprintf(out, "%7.1f%%", 100 * x);
}

void cal_nccl_print(const cal_nccl_fit *f, FILE *out)
{
  fprintf(out, "nccl-tests fit: %d parameters, %d evaluations; rms |ln(sim/real)| at sizes >= 64 MiB and <= 64 KiB "
          "(each region of each table weighs the same) %.3f -> %.3f\n",
          f->n_params, f->evals, f->loss_before, f->loss_after);
  for (int p = 0; p < f->n_params; p++) {
    char a[32], b[32];
    value_str(f->key[p], f->base[p], a, sizeof a);
    value_str(f->key[p], f->fitted[p], b, sizeof b);
    fprintf(out, "  %-26s %12s -> %12s (x%.3f)\n", f->key[p], a, b, f->fitted[p] / f->base[p]);
    if (strcmp(f->key[p], CAL_SHARE_KEY) == 0)
      fprintf(out, "  %-26s %12.4g GB/s (line rate %.4g GB/s x %.4g; NCCL's search and choice see the line rate)\n",
              "effective scale-out bw", f->line_Bps * f->fitted[p] / 1e9, f->line_Bps / 1e9, f->fitted[p]);
  }
  fprintf(out, "per table, median |error| (before -> after): busbw >= 64 MiB | time <= 64 KiB | busbw all sizes\n");
  for (guint i = 0; i < f->after->len && i < f->before->len; i++) {
    const cal_nccl_quality *b = &g_array_index(f->before, cal_nccl_quality, i);
    const cal_nccl_quality *a = &g_array_index(f->after, cal_nccl_quality, i);
    char *base = g_path_get_basename(a->file);
    fprintf(out, "  %s table %d %s (%d ranks, %d rows):", base, a->table, a->test, a->ranks, a->rows);
    pct(out, b->bus_large);
    fprintf(out, " ->");
    pct(out, a->bus_large);
    fprintf(out, " |");
    pct(out, b->time_small);
    fprintf(out, " ->");
    pct(out, a->time_small);
    fprintf(out, " |");
    pct(out, b->bus_all);
    fprintf(out, " ->");
    pct(out, a->bus_all);
    fprintf(out, "\n");
    g_free(base);
  }
}

gboolean cal_nccl_write(const cal_nccl_fit *f, GPtrArray *logs, const topo_variant *shape, const char *path,
                        GError **error)
{
  topo_variant *onto = NULL;
  if (shape) {
    double m[CAL_NCCL_MAX_PARAMS];
    for (int p = 0; p < f->n_params; p++)
      m[p] = f->fitted[p] / f->base[p];
    if ((onto = apply(f, shape, m, error)) == NULL)
      return FALSE;
  }
  char *yaml = cal_config_yaml(onto ? onto : f->result, onto != NULL);
  topo_variant_free(onto);
  wisp_afile *af = wisp_afile_open(path, error);
  if (af == NULL) {
    g_free(yaml);
    return FALSE;
  }
  FILE *o = wisp_afile_stream(af);
  fprintf(o, "# Fitted by wisp calibrate --nccl-tests to:\n");
  for (guint i = 0; i < logs->len; i++)
    fprintf(o, "#   %s\n", ((const coll_ncclt_log *)g_ptr_array_index(logs, i))->path);
  fprintf(o, "# Free parameters only (per-tier latency and effective bandwidth, launch cost, per-step overhead; with "
          "library nccl the scale-out tier keeps its line rate, which NCCL's search sees, and library.net_efficiency "
          "is the share of it the wire achieves); rms "
          "|ln(sim/real)| at sizes >= 64 MiB and <= 64 KiB %.3f -> %.3f:\n", f->loss_before, f->loss_after);
  for (int p = 0; p < f->n_params; p++) {
    char a[32], b[32];
    value_str(f->key[p], f->base[p], a, sizeof a);
    value_str(f->key[p], f->fitted[p], b, sizeof b);
    fprintf(o, "#   %s: %s -> %s\n", f->key[p], a, b);
  }
  fputs(yaml, o);
  g_free(yaml);
  return wisp_afile_commit(af, error);
}
