/* cmd_collbench_compare.c: `wisp collbench --compare-csv`: loads a real
 * nccl-tests log (coll_nccltests.h), picks its table, binary, rank count
 * and -g, runs its sizes on the network and prints real beside simulated
 * with the median errors (and an SVG on request).  O(rows x one simulated
 * collective).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>

#include "cli/wisp_cli.h"
#include "cli/wisp_load.h"
#include "cli/cmd_collbench.h"
#include "common/wisp_json.h"
#include "collectives/coll.h"
#include "collectives/coll_library_report.h"
#include "collectives/libraries/nccl/coll_nccl.h"
#include "collectives/coll_nccltests.h"
#include "common/wisp_json.h"
#include "studies/study.h"

/* The median of v's values (reordered), -1 for none. */
static double median_of(GArray *v)
{
  return v->len ? wisp_median((double *)(void *)v->data, v->len) : -1;
}

/* --compare-csv: runs the sizes of one table of a real nccl-tests file
 * (coll_nccltests.h; `test` its binary) on this network and prints real
 * beside simulated with the medians of issue 15's two measures (busbw >=
 * 64 MiB, time <= 64 KiB); --svg also draws real and simulated busbw
 * against the size.  O(rows x one simulated collective). */
/* --compare-csv --json: the head of the object (kind collbench_compare),
 * one row per size, and the medians with the commit. */
static wisp_afile *compare_json_open(wisp_json *j, const char *json, const char *csv, int table, const char *test,
                                     const char *network, net_tier tier, int n, const coll_policy *pol,
                                     GError **error)
{
  wisp_afile *jf = wisp_afile_open(json, error);
  if (jf == NULL)
    return NULL;
  wisp_json_init(j, wisp_afile_stream(jf), 2);
  wisp_json_begin_object(j, NULL);
  wisp_json_int(j, "schema_version", 1);
  wisp_json_string(j, "kind", "collbench_compare");
  wisp_json_string(j, "csv", csv);
  wisp_json_int(j, "table", table);
  wisp_json_string(j, "test", test);
  wisp_json_string(j, "network", network);
  wisp_json_string(j, "tier", net_tier_name(tier));
  wisp_json_int(j, "n_ranks", n);
  wisp_json_string(j, "library", coll_library_name(coll_policy_library(pol)->kind));
  wisp_json_begin_array(j, "rows");
  return jf;
}

static void compare_json_row(wisp_json *j, const coll_ncclt_row *rr, const collbench_row *row)
{
  wisp_json_begin_object(j, NULL);
  wisp_json_uint(j, "size_bytes", rr->size);
  wisp_json_double(j, "real_time_us", rr->time_us, 3);
  wisp_json_double(j, "wisp_time_us", (double)row->time_ps / 1e6, 3);
  wisp_json_double(j, "real_busbw_GBps", rr->busbw_GBps, 3);
  wisp_json_double(j, "wisp_busbw_GBps", row->busbw, 3);
  wisp_json_string(j, "algorithm", row->info.detail);
  wisp_json_end_object(j);
}

static gboolean compare_json_close(wisp_json *j, wisp_afile *jf, double mb, double mt, GError **error)
{
  wisp_json_end_array(j);
  if (mb >= 0)
    wisp_json_double(j, "median_busbw_error_pct", 100 * mb, 3);
  if (mt >= 0)
    wisp_json_double(j, "median_time_error_pct", 100 * mt, 3);
  wisp_json_end_object(j);
  wisp_json_finish(j);
  return wisp_afile_commit(jf, error);
}

gboolean collbench_compare_run(const coll_ncclt_log *log, int table, const char *test, const char *svg, const char *json,
                            const char *network, const topo *t, net_tier tier, const coll_policy *pol, const int *rk,
                            int n, int root, GError **error)
{
  const char *csv = log->path;
  const GArray *rows = log->rows;
  et_coll_type type = ET_COLL_ALL_TO_ALLV;
  collbench_moe variant = coll_ncclt_is_sendrecv(test) ? OP_SENDRECV : MOE_NONE;
  if (variant == MOE_NONE)
    coll_ncclt_op(test, &type); /* compare_load checked that it runs */
  GArray *xs = g_array_new(FALSE, FALSE, sizeof(double)), *yr = g_array_new(FALSE, FALSE, sizeof(double));
  GArray *ys = g_array_new(FALSE, FALSE, sizeof(double));
  GPtrArray *ticks = g_ptr_array_new_with_free_func(g_free);
  GArray *bus_err = g_array_new(FALSE, FALSE, sizeof(double)), *time_err = g_array_new(FALSE, FALSE, sizeof(double));
  gboolean ok = TRUE;
  printf("# wisp collbench --compare-csv %s (table %d, %s): network %s, tier %s, %d ranks, library %s\n", csv, table,
         test, network, net_tier_name(tier), n, coll_library_name(coll_policy_library(pol)->kind));
  /* --json: the same rows for wisp report (kind collbench_compare). */
  wisp_json j;
  wisp_afile *jf = json ? compare_json_open(&j, json, csv, table, test, network, tier, n, pol, error) : NULL;
  if (json && jf == NULL)
    ok = FALSE;
  printf("# %-18s %12s %11s %11s %10s %10s  %s\n", "test", "size (B)", "real (us)", "wisp (us)", "real busbw",
         "wisp busbw", "algorithm");
  for (guint i = 0; i < rows->len && ok; i++) {
    const coll_ncclt_row *rr = &g_array_index(rows, coll_ncclt_row, i);
    if (rr->table != table)
      continue;
    if (variant == MOE_NONE && coll_ncclt_comm_size(type, rr->size, n) == 0)
      continue;
    collbench_row row;
    memset(&row, 0, sizeof row);
    /* The log's root (nccl-tests -r) is a position in the group. */
    int rr_root = rr->root >= 0 && rr->root < n ? rk[rr->root] : root;
    if (!collbench_run_row(t, tier, pol, rk, n, rr_root, type, variant, NULL, rr->size, &row, error)) {
      ok = FALSE;
      break;
    }
    printf("  %-18s %12" G_GUINT64_FORMAT " %11.2f %11.2f %10.2f %10.2f  %s\n", test, rr->size, rr->time_us,
           (double)row.time_ps / 1e6, rr->busbw_GBps, row.busbw, row.info.detail);
    if (jf)
      compare_json_row(&j, rr, &row);
    if (rr->size >= (64u << 20) && rr->busbw_GBps > 0) {
      double e = fabs(row.busbw - rr->busbw_GBps) / rr->busbw_GBps;
      g_array_append_val(bus_err, e);
    }
    if (rr->size <= (64u << 10) && rr->time_us > 0) {
      double e = fabs((double)row.time_ps / 1e6 - rr->time_us) / rr->time_us;
      g_array_append_val(time_err, e);
    }
    double x = log2((double)rr->size);
    g_array_append_val(xs, x);
    g_array_append_val(yr, rr->busbw_GBps);
    g_array_append_val(ys, row.busbw);
    /* Size labels on every fourth point (8 B, 128 B, 2 KiB, ...). */
    char *lab = NULL;
    if (xs->len % 4 == 1)
      lab = rr->size >= (1u << 30) ? g_strdup_printf("%" G_GUINT64_FORMAT "G", rr->size >> 30)
            : rr->size >= (1u << 20) ? g_strdup_printf("%" G_GUINT64_FORMAT "M", rr->size >> 20)
            : rr->size >= (1u << 10) ? g_strdup_printf("%" G_GUINT64_FORMAT "K", rr->size >> 10)
                                     : g_strdup_printf("%" G_GUINT64_FORMAT, rr->size);
    g_ptr_array_add(ticks, lab);
  }
  if (ok && xs->len == 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: table %d has no row of a non-zero size for %d ranks",
                csv, table, n);
    ok = FALSE;
  }
  if (ok) {
    double mb = median_of(bus_err), mt = median_of(time_err);
    printf("# median |error|: busbw at sizes >= 64 MiB ");
    if (mb >= 0)
      printf("%.1f %% (%u sizes)", 100 * mb, bus_err->len);
    else
      printf("n/a");
    printf("; time at sizes <= 64 KiB ");
    if (mt >= 0)
      printf("%.1f %% (%u sizes)\n", 100 * mt, time_err->len);
    else
      printf("n/a\n");
    if (jf) {
      ok = compare_json_close(&j, jf, mb, mt, error);
      jf = NULL;
    }
  }
  if (jf)
    wisp_afile_abort(jf);
  if (ok && svg != NULL) {
    study_svg_series ser[2] = {
      { "nccl-tests (real)", (const double *)(void *)xs->data, (const double *)(void *)yr->data, (int)xs->len },
      { "wisp", (const double *)(void *)xs->data, (const double *)(void *)ys->data, (int)xs->len },
    };
    char *base = g_path_get_basename(csv);
    char *title = g_strdup_printf("%s (table %d, %d ranks): real vs wisp", base, table, n);
    g_free(base);
    ok = study_svg_line_chart(svg, title, "size S (bytes, log scale)", "bus bandwidth (GB/s)", ser, 2,
                              (const char *const *)ticks->pdata, error);
    g_free(title);
  }
  g_array_free(xs, TRUE);
  g_array_free(yr, TRUE);
  g_array_free(ys, TRUE);
  g_array_free(bus_err, TRUE);
  g_array_free(time_err, TRUE);
  g_ptr_array_free(ticks, TRUE);
  return ok;
}

/* TRUE when a --library-set item sets KEY. */
static gboolean lib_set_has(char **lib_set, const char *key)
{
  size_t kl = strlen(key);
  for (int i = 0; lib_set && lib_set[i]; i++)
    if (strncmp(lib_set[i], key, kl) == 0 && lib_set[i][kl] == '=')
      return TRUE;
  return FALSE;
}

/* --compare-csv, before the network's group and library are built: loads
 * the log, picks the table (--compare-table, default the first), names
 * its binary (the log's, or --op when the log does not say; they must
 * agree), takes the rank count (unless --ranks or --group give the same
 * count) and -g (unless --library-set gpus_per_thread=N) from the log.
 * Returns 0, 1 or 2. */
int collbench_compare_load(collbench_cli *c)
{
  GError *error = NULL;
  c->log = coll_ncclt_load(c->compare_csv, &error);
  if (c->log == NULL || !wisp_output_check(&error)) /* no output may replace the log */
    return wisp_cli_fail(error);
  char *list = coll_ncclt_list(c->log);
  int status = 0;
  c->ctab = c->compare_table == 0 ? &g_array_index(c->log->tables, coll_ncclt_table, 0)
                                  : coll_ncclt_find(c->log, c->compare_table);
  const char *want = c->op ? coll_ncclt_binary_of(c->op) : NULL;
  if (c->ctab == NULL) {
    fprintf(stderr, "wisp collbench: %s has no table %d; its tables: %s (give --compare-table N)\n", c->compare_csv,
            c->compare_table, list);
    status = 2;
  } else if (c->op != NULL && want == NULL) {
    fprintf(stderr, "wisp collbench: --op '%s' with --compare-csv names the table's collective: one of all_reduce, "
                    "all_gather, reduce_scatter, all_to_all, broadcast, reduce, gather, scatter, sendrecv\n", c->op);
    status = 2;
  } else if (c->ctab->test[0] && want && strcmp(want, c->ctab->test) != 0) {
    fprintf(stderr, "wisp collbench: --op %s, but table %d of %s is %s (from %s); drop --op\n", c->op,
            c->ctab->table, c->compare_csv, c->ctab->test, c->ctab->test_from);
    status = 2;
  } else if (c->ctab->test[0] == '\0' && want == NULL) {
    fprintf(stderr, "wisp collbench: %s does not say which nccl-tests binary printed table %d (its rows fit %s); "
                    "give --op, e.g. --op all_gather; the file's tables: %s\n", c->compare_csv, c->ctab->table,
            c->ctab->candidates[0] ? c->ctab->candidates : "several", list);
    status = 2;
  }
  int lr = c->ctab ? c->ctab->ranks : 0;
  int given = c->n_ranks != INT_MIN ? c->n_ranks : 0; /* INT_MIN: --ranks not given */
  if (status == 0 && lr > 0 && c->group_s == NULL && given != 0 && given != lr) {
    fprintf(stderr, "wisp collbench: --ranks %d, but table %d of %s ran %d ranks (%s); drop --ranks\n", given,
            c->ctab->table, c->compare_csv, lr, c->ctab->ranks_from);
    status = 2;
  }
  et_coll_type type;
  if (status == 0) {
    c->ctest = c->ctab->test[0] ? c->ctab->test : want;
    if (!coll_ncclt_is_sendrecv(c->ctest) && !coll_ncclt_op(c->ctest, &type)) {
      fprintf(stderr, "wisp collbench: table %d of %s is %s, which wisp does not run (%s); the file's tables: %s\n",
              c->ctab->table, c->compare_csv, c->ctest,
              strcmp(c->ctest, "hypercube_perf") == 0 ? "its exchanges along hypercube dimensions are no collective "
              "wisp models" : strcmp(c->ctest, "alltoallv_perf") == 0 ? "its per-peer sizes are not in the log"
              : "not an nccl-tests binary wisp knows", list);
      status = 2;
    }
  }
  if (status == 0) {
    if (lr > 0 && c->group_s == NULL)
      c->n_ranks = lr;
    if (c->ctab->gpus_per_thread > 0 && !lib_set_has(c->lib_set, "gpus_per_thread"))
      c->log_gpus = c->ctab->gpus_per_thread;
    printf("# nccl-tests table %d of %s: %s (from %s)", c->ctab->table, c->compare_csv, c->ctest,
           c->ctab->test[0] ? c->ctab->test_from : "--op");
    if (lr > 0)
      printf(", %d ranks (from %s)", lr, c->ctab->ranks_from);
    else
      printf(", rank count not in the log (--ranks, else every rank of the network)");
    if (c->log_gpus > 0)
      printf(", -g %d (from %s)", c->log_gpus, c->ctab->gpus_from);
    else
      printf(", -g not in the log");
    printf("\n");
  }
  g_free(list);
  return status;
}
