/* test_nccl_tests.c: the NCCL model (library nccl) against real nccl-tests
 * runs.  Reads every table of every .csv file in $WISP_SHARED_DATA/nccl-tests (skipped
 * visibly when absent), runs each size on the preset or config that the
 * table's header describes (hardware numbers only, nothing fitted to the
 * tables), prints real beside simulated for every size, and checks issue
 * 15's targets per table:
 *   - median absolute error <= 15 % in busbw over the sizes >= 64 MiB;
 *   - median absolute error <= 30 % in time over the sizes <= 64 KiB.
 * A table that misses a target is reported as `not ok # TODO` with the
 * measured medians and the reason (the project's convention for unmet
 * targets); the targets are never loosened here.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "collectives/coll.h"
#include "collectives/libraries/nccl/coll_nccl.h"
#include "collectives/coll_nccltests.h"
#include "test_util.h"

#define MIB (1024.0 * 1024.0)

/* How each shipped file is run: the config (a preset under presets/ or a
 * YAML text built from the header's hardware description), the ranks,
 * nccl-tests' -g (GPUs per host thread: their launches are serial), NVLS
 * and NCCL_ALGO as the header's environment says, and the reason to give
 * when a target is missed (why the model cannot reach it). */
typedef struct {
  const char *file;
  int table;                 /* 0: every table of the file */
  const char *preset;        /* presets/NAME.yaml, or NULL */
  const char *yaml;          /* config text when preset is NULL */
  int ranks;
  int gpus_per_thread;
  gboolean nvls;
  const char *algo;          /* NCCL_ALGO, or NULL */
  const char *why;           /* known reason for a miss */
  gboolean known_miss;       /* misses a target today: an expected failure; every other table must meet both,
                                so that a change that breaks a met table fails instead of joining the
                                expected failures */
} table_cfg;

/* HGX B200 node from the header: 8 x B200, NVLink 5 1.8 TB/s
 * bidirectional per GPU (900 GB/s per direction) through NVSwitch, sm 100;
 * NVLS on by default.  Link latency as the presets' [ASSUMPTION]. */
static const char b200_yaml[] =
  "schema_version: 1\nname: hgx-b200\nmodel: analytical\n"
  "dims:\n  - {name: nvlink, kind: switch, size: 8, bandwidth: 900GB/s, latency: 500ns}\n"
  "collectives: {in_switch_reduction: true}\nlibrary: {name: nccl, sm: 100}\n";
/* AWS p5.48xlarge from the header: 8 x H100 on NVLink 4 (450 GB/s per
 * direction), EFA 3200 Gb/s per node = 400 Gb/s per GPU, 2 nodes, NVLS on;
 * NCCL_BUFFSIZE=8388608 (header ENV).  net_latency: the network latency
 * the aws-ofi-nccl plugin reports to NCCL's tuner on p5.48xlarge, 75 us
 * (aws/aws-ofi-nccl src/platform-aws.c platform_data_map, "p5.48xlarge"
 * .latency = 75.0; NCCL adds it to every network hop, twice for Simple). */
static const char p5_yaml[] =
  "schema_version: 1\nname: aws-p5\nmodel: analytical\n"
  "dims:\n  - {name: nvlink, kind: switch, size: 8, bandwidth: 450GB/s, latency: 500ns}\n"
  "  - {name: efa, kind: switch, size: 2, bandwidth: 400Gbps, latency: 1us}\n"
  "collectives: {in_switch_reduction: true}\n"
  "library: {name: nccl, sm: 90, net_latency: 75us, buffsize: 8MiB}\n";

static const char why_g8[] =
  "one host thread drives 8 GPUs (-g 8): the small-size time is the host's 8 serial kernel launches (nccl-tests' "
  "loop overlaps them with the GPUs' work; coll_measure takes the slower stage), whose cost (library launch, 4 us) is "
  "an assumption, not a measured figure";
static const char why_efa[] =
  "EFA (SRD through libfabric) adds host and NIC latency per network message that no public source gives as a "
  "hardware figure; the config has the switch's 1 us and NCCL's per-hop figures.  The 75 us aws-ofi-nccl reports to "
  "NCCL's tuner on p5 (platform-aws.c) is a tuning value that steers the choice only (NCCL's own model with it "
  "predicts about 175 us for tree/LL, the real run takes 63-118 us)";

static const table_cfg cfgs[] = {
  { "together-h100-1node-nvls-allreduce.csv", 0, "dgx-h100", NULL, 8, 8, TRUE, NULL, why_g8 },
  { "together-h100-1node-ring-allreduce.csv", 0, "dgx-h100", NULL, 8, 8, FALSE, "ring", why_g8 },
  { "together-h100-1node-nvls-allgather.csv", 0, "dgx-h100", NULL, 8, 8, TRUE, NULL, why_g8 },
  { "together-h100-1node-nvls-reducescatter.csv", 0, "dgx-h100", NULL, 8, 8, TRUE, NULL, why_g8 },
  { "mit-b200-1node-allcollectives.csv", 0, NULL, b200_yaml, 8, 8, TRUE, NULL,
    "all-to-all (table 7): the real busbw ramps slowly, 418 GB/s at 64 MiB to 661 GB/s at 16 GiB; wisp's p2p plan "
    "gives each peer NCCL's send/recv channels (nccl_tuner.c coll_nccl_p2p_efficiency), which met it when written "
    "(2.0 %); a miss here means that model moved" },
  { "aws-p5-h100-2node-efa-allreduce-nccl2.22.3.csv", 0, NULL, p5_yaml, 16, 1, TRUE, NULL, why_efa, TRUE },
  { "issue309-hgx-h100-xe9680-2node-4node-ib-allreduce.csv", 1, "dgx-h100", NULL, 16, 1, TRUE, NULL,
    "small sizes: wisp charges NCCL's tree/LL model once, 25.2 us at 8-64 B (baseLat 6.8 + 2 x (7 x 0.6 NVLink + "
    "1 x 5.0 NET); the routes pay only their latency above the reference wire those figures hold, "
    "coll_nccl_wire_of; test /coll/nccl/latency-terms), real 25 us (13.0 % when wave l27h wrote this; 49.8 % "
    "before, with the routes' 18 us on top); the busbw at >= 64 MiB is the NVLS-tree case of nccl-tests#309" },
  { "issue309-hgx-h100-xe9680-2node-4node-ib-allreduce.csv", 2, "dgx-h100", NULL, 32, 1, TRUE, NULL,
    "small sizes: NCCL's model once, 35.2 us at 16-128 B (6.8 + 2 x (7 x 0.6 + 2 x 5.0)), real 35 us on these 4 "
    "VMware VMs with GPU/NIC passthrough (header), whose virtualisation could only make the real run slower "
    "(12.1 % when wave l27h wrote this; 45.0 % before, with 22 us of routes on top)" },
};

typedef struct {
  const table_cfg *cfg;
  char *path;
  int table;
} case_data;

static double median(GArray *v)
{
  return v->len ? wisp_median((double *)(void *)v->data, v->len) : -1;
}

static topo *load_cfg(const table_cfg *c, GError **error)
{
  if (c->preset != NULL) {
    char *file = g_strdup_printf("%s.yaml", c->preset);
    char *p = g_build_filename(g_getenv("G_TEST_SRCDIR"), "presets", file, NULL);
    topo *t = topo_load(p, error);
    g_free(p);
    g_free(file);
    return t;
  }
  return topo_load_string(c->yaml, "nccl-tests config", error);
}

static void run_table(gconstpointer data)
{
  const case_data *cd = data;
  const table_cfg *c = cd->cfg;
  if (g_getenv("G_TEST_SRCDIR") == NULL) {
    g_test_skip("G_TEST_SRCDIR not set (run through make check)");
    return;
  }
  GError *error = NULL;
  topo *t = load_cfg(c, &error);
  g_assert_no_error(error);
  coll_policy *pol = coll_policy_new_from_topo(t, &error);
  g_assert_no_error(error);
  coll_library_params lib = *coll_policy_library(pol);
  g_assert_cmpint(lib.kind, ==, COLL_LIBRARY_NCCL); /* the default for wisp configs */
  lib.gpus_per_thread = c->gpus_per_thread;
  if (c->algo != NULL)
    g_assert_true(coll_nccl_algo_from_name(c->algo, &lib.nccl_algo));
  coll_policy_set_library(pol, &lib);
  coll_policy_set_in_switch_reduction(pol, c->nvls);
  g_assert_cmpint(topo_n_ranks(t), >=, c->ranks);
  int *ranks = g_new(int, c->ranks);
  for (int i = 0; i < c->ranks; i++)
    ranks[i] = i;
  GError *rerr = NULL;
  GArray *rows = coll_ncclt_read(cd->path, &rerr);
  g_assert_no_error(rerr);
  GArray *bus_err = g_array_new(FALSE, FALSE, sizeof(double));
  GArray *time_err = g_array_new(FALSE, FALSE, sizeof(double));
  int seen = 0;
  g_test_message("%-20s %12s %11s %11s %10s %10s  %s", "test", "size (B)", "real (us)", "wisp (us)", "real busbw",
                 "wisp busbw", "wisp algorithm/protocol: plan");
  for (guint i = 0; i < rows->len; i++) {
    const coll_ncclt_row *rr = &g_array_index(rows, coll_ncclt_row, i);
    et_coll_type type = ET_COLL_ALL_TO_ALLV;
    if (rr->table != cd->table)
      continue;
    /* sendrecv_perf: rank i sends S to i + 1, an all-to-allv holding that
     * shift (as collbench --compare-csv runs it); busbw = algbw
     * (nccl-tests src/sendrecv.cu). */
    gboolean sr = coll_ncclt_is_sendrecv(rr->test);
    if (!sr && !coll_ncclt_op(rr->test, &type)) {
      if (i == 0 || strcmp(rr->test, g_array_index(rows, coll_ncclt_row, i - 1).test) != 0)
        g_test_message("%s: not a collective wisp's collbench runs (skipped)", rr->test);
      continue;
    }
    uint64_t comm = sr ? 0 : coll_ncclt_comm_size(type, rr->size, c->ranks);
    if (!sr && comm == 0)
      continue;
    uint64_t *splits = NULL;
    if (sr) {
      splits = g_new0(uint64_t, (size_t)c->ranks * (size_t)c->ranks);
      for (int k = 0; k < c->ranks; k++)
        splits[(size_t)k * (size_t)c->ranks + (size_t)((k + 1) % c->ranks)] = rr->size;
    }
    gboolean rooted = type == ET_COLL_BROADCAST || type == ET_COLL_REDUCE || type == ET_COLL_GATHER ||
                      type == ET_COLL_SCATTER;
    coll_desc d = { .type = type, .bytes = comm, .ranks = ranks, .n_ranks = c->ranks, .root = rooted ? 0 : -1,
                    .splits = splits };
    sim_time_ps ps = 0;
    coll_info info;
    g_assert_true(coll_measure(t, net_default_tier(t), pol, &d, &ps, &info, &error));
    g_assert_no_error(error);
    g_assert_cmpuint(ps, >, 0);
    g_free(splits);
    double us = (double)ps / 1e6;
    double algbw = (double)info.algbw_bytes / ((double)ps / 1e12) / 1e9;
    double busbw = sr ? algbw : algbw * info.busbw_factor;
    g_test_message("%-20s %12" G_GUINT64_FORMAT " %11.2f %11.2f %10.2f %10.2f  %s", rr->test, rr->size, rr->time_us, us,
                   rr->busbw_GBps, busbw, info.detail);
    if ((double)rr->size >= 64 * MIB && rr->busbw_GBps > 0) {
      double e = fabs(busbw - rr->busbw_GBps) / rr->busbw_GBps;
      g_array_append_val(bus_err, e);
    }
    if (rr->size <= 65536 && rr->time_us > 0) {
      double e = fabs(us - rr->time_us) / rr->time_us;
      g_array_append_val(time_err, e);
    }
    seen++;
  }
  if (seen == 0) {
    g_test_skip("no row of this table is a collective wisp runs (hypercube_perf: no wisp counterpart)");
    g_array_free(bus_err, TRUE);
    g_array_free(time_err, TRUE);
    g_array_free(rows, TRUE);
    g_free(ranks);
    coll_policy_free(pol);
    topo_free(t);
    return;
  }
  double mb = median(bus_err), mt = median(time_err);
  char mbs[32], mts[32];
  if (mb < 0)
    g_strlcpy(mbs, "n/a", sizeof mbs);
  else
    g_snprintf(mbs, sizeof mbs, "%.1f %%", 100 * mb);
  if (mt < 0)
    g_strlcpy(mts, "n/a", sizeof mts);
  else
    g_snprintf(mts, sizeof mts, "%.1f %%", 100 * mt);
  char *fig = g_strdup_printf("median |error| busbw >= 64 MiB: %s (target <= 15 %%, %u sizes); time <= 64 KiB: %s "
                              "(target <= 30 %%, %u sizes)",
                              mbs, bus_err->len, mts, time_err->len);
  g_test_message("%s", fig);
  gboolean ok = (mb < 0 || mb <= 0.15) && (mt < 0 || mt <= 0.30);
  if (!ok && c->known_miss) {
    char *msg = g_strdup_printf("%s table %d: %s; why: %s", c->file, cd->table, fig, c->why);
    g_test_message("NOT MET %s", msg);
    g_test_incomplete(msg);
    g_free(msg);
  } else if (!ok) {
    g_test_message("REGRESSION %s table %d met both targets and no longer does: %s (a reason it might: %s)",
                   c->file, cd->table, fig, c->why);
    g_test_fail();
  } else if (c->known_miss) {
    g_test_message("%s table %d now meets both targets: clear its known_miss", c->file, cd->table);
  }
  g_free(fig);
  g_array_free(bus_err, TRUE);
  g_array_free(time_err, TRUE);
  g_array_free(rows, TRUE);
  g_free(ranks);
  coll_policy_free(pol);
  topo_free(t);
}

static void skip_absent(void)
{
  g_test_skip("WISP_SHARED_DATA/nccl-tests not found (set WISP_SHARED_DATA; make check does)");
}

/* g_ptr_array_sort passes pointers to the elements. */
static gint cmp_name(gconstpointer a, gconstpointer b)
{
  return g_ascii_strcasecmp(*(const char *const *)a, *(const char *const *)b);
}

static void read_fail(gconstpointer data)
{
  g_test_message("%s", (const char *)data);
  g_test_fail();
}

static void no_config(gconstpointer data)
{
  g_test_incomplete((const char *)data);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  const char *root = g_getenv("WISP_SHARED_DATA");
  char *dir = root ? g_build_filename(root, "nccl-tests", NULL) : NULL;
  GDir *d = dir ? g_dir_open(dir, 0, NULL) : NULL;
  if (d == NULL) {
    g_test_add_func("/nccl-tests/absent", skip_absent);
    g_free(dir);
    return g_test_run();
  }
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  GPtrArray *cases = g_ptr_array_new_with_free_func(g_free); /* case_data, freed after the run */
  GPtrArray *owned = g_ptr_array_new_with_free_func(g_free); /* test data strings */
  const char *nm;
  while ((nm = g_dir_read_name(d)) != NULL)
    if (g_str_has_suffix(nm, ".csv"))
      g_ptr_array_add(names, g_strdup(nm));
  g_dir_close(d);
  g_ptr_array_sort(names, cmp_name); /* deterministic case order */
  for (guint i = 0; i < names->len; i++) {
    const char *file = names->pdata[i];
    char *path = g_build_filename(dir, file, NULL);
    GError *rerr = NULL;
    GArray *rows = coll_ncclt_read(path, &rerr);
    if (rows == NULL) {
      /* An unreadable or empty file is its own failing case. */
      char *name = g_strdup_printf("/nccl-tests/%s", file);
      char *msg = g_strdup(rerr->message);
      g_ptr_array_add(owned, msg);
      g_test_add_data_func(name, msg, read_fail);
      g_free(name);
      g_clear_error(&rerr);
      rows = g_array_new(FALSE, TRUE, sizeof(coll_ncclt_row));
    }
    gboolean any = FALSE;
    for (size_t k = 0; k < G_N_ELEMENTS(cfgs); k++) {
      if (strcmp(cfgs[k].file, file) != 0)
        continue;
      any = TRUE;
      int last = -1;
      for (guint r = 0; r < rows->len; r++) {
        int tb = g_array_index(rows, coll_ncclt_row, r).table;
        if (tb == last || (cfgs[k].table != 0 && tb != cfgs[k].table))
          continue;
        last = tb;
        case_data *cd = g_new0(case_data, 1);
        g_ptr_array_add(cases, cd);
        cd->cfg = &cfgs[k];
        cd->path = g_strdup(path);
        cd->table = tb;
        char *name = g_strdup_printf("/nccl-tests/%s/table%d", file, tb);
        g_test_add_data_func(name, cd, run_table);
        g_free(name);
      }
    }
    if (!any) {
      char *name = g_strdup_printf("/nccl-tests/%s", file);
      char *msg = g_strdup_printf("%s: no configuration for this table's hardware yet", file);
      g_ptr_array_add(owned, msg);
      g_test_add_data_func(name, msg, no_config);
      g_free(name);
    }
    g_array_free(rows, TRUE);
    g_free(path);
  }
  g_free(dir);
  int rc = g_test_run();
  for (guint i = 0; i < cases->len; i++)
    g_free(((case_data *)cases->pdata[i])->path);
  g_ptr_array_free(cases, TRUE);
  g_ptr_array_free(owned, TRUE);
  g_ptr_array_free(names, TRUE);
  return rc;
}
