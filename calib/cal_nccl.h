/* cal_nccl.h: fitting a network config's free hardware parameters to a
 * user's nccl-tests logs (`wisp calibrate --nccl-tests`, issue 27 item 4).
 * Prefix cal_nccl_.
 *
 * Free parameters, and nothing else: per tier (the scale-up dimension 0
 * unless a node holds one GPU and, when a table spans nodes, the
 * scale-out dimension 1) the link latency and the effective bandwidth,
 * the library's launch cost (library.launch, paid gpus_per_thread times
 * per iteration) and, with library nccl, the per-step overhead
 * (library.step_latency_scale, a factor on NCCL's per-hop latencies).
 * With library nccl the scale-out tier's effective bandwidth is its line
 * rate (kept: NCCL's search, channels and choice see it) times
 * library.net_efficiency, the fitted share.  The latency-type parameters
 * are fitted only when some table shows them (a row at <= 64 KiB, or a
 * table without rows at >= 64 MiB).  Everything else (the library
 * itself, algorithms, protocols, NCCL's tuning constants and choices, the
 * topology's shape) stays as the base config has it, so the same
 * mechanisms that run on spec-only configs run on the fitted one.
 *
 * Objective: the hardware is identified where each parameter shows:
 * bandwidth at sizes >= 64 MiB, latency, launch and per-step overhead at
 * sizes <= 64 KiB.  Each table contributes, per region it has, the mean
 * of (ln(sim / real))^2 over the region's rows (a table with rows only in
 * between contributes the mean over those); the loss is the rms over
 * these terms.  The rows in between are left out because there NCCL's
 * protocol switches and pipeline ramp (the model's mechanisms, not
 * hardware) dominate: fitting hardware to them made the fitted bandwidth
 * absorb the ramp's error (NVLink x0.84 on an H100 NVLS all-reduce) and
 * mis-predict the system's other collectives.  Each row is simulated alone
 * on the candidate config as `collbench --compare-csv` does (rank count
 * and -g from the log).  Search: coordinate descent in log space with
 * steps x2, x1.25, x1.07, x1.02 on each parameter, within x1/20..x20 of
 * the base value (bandwidth at most x1: a link's effective rate stays at
 * or below the config's line rate), the config's bandwidths acting as a
 * prior (CAL_NCCL_PRIOR x (ln factor)^2 per bandwidth added to the squared
 * loss; the latencies, launch and per-step overhead of a spec-only config
 * are assumptions, so they have none).  Cost: up to CAL_NCCL_MAX_EVALS evaluations, each one
 * simulation per row.  Deterministic.
 */
#ifndef WISP_CAL_NCCL_H
#define WISP_CAL_NCCL_H

#include <glib.h>
#include <stdio.h>

#include "collectives/coll_nccltests.h"
#include "net/net.h"
#include "topologies/topo_variant.h"
#include "calib/cal.h"

G_BEGIN_DECLS

#define CAL_NCCL_MAX_PARAMS 6
#define CAL_NCCL_MAX_EVALS 160
/* Weight of the prior on the config's values (cal_nccl.c eval). */
#define CAL_NCCL_PRIOR 0.001

/* One table's fit quality: median |error| of busbw at sizes >= 64 MiB and
 * of time at sizes <= 64 KiB (-1 when the table has no such size), and
 * the median over every size of busbw |error|. */
typedef struct {
  char file[256];
  int table;
  char test[32];
  int ranks, rows;
  double bus_large, time_small, bus_all;
} cal_nccl_quality;

typedef struct {
  int n_params;
  char key[CAL_NCCL_MAX_PARAMS][48];   /* e.g. "dims.0.bandwidth", "library.launch" */
  double base[CAL_NCCL_MAX_PARAMS];    /* base config's value (B/s or ps) */
  double fitted[CAL_NCCL_MAX_PARAMS];
  double line_Bps;                     /* scale-out line rate when library.net_efficiency is fitted, else 0 */
  int evals;
  double loss_before, loss_after;      /* the objective (rms of the regions' mean ln(sim/real)^2) */
  GArray *before, *after;              /* cal_nccl_quality per table */
  topo_variant *result;                /* the fitted config */
} cal_nccl_fit;

/* Measures how config v (fit_ranks'd to the logs) reproduces every
 * runnable table of the logs: fills q (cal_nccl_quality, appended) and
 * returns the objective (see above) in *rms.  O(rows x one collective). */
gboolean cal_nccl_measure(const topo_variant *v, GPtrArray *logs, net_tier tier, GArray *q, double *rms,
                          GError **error);

/* Fits the free parameters of base to the runnable tables of logs (an
 * array of coll_ncclt_log *).  Fails when no table can run (unknown
 * collective or rank count, more ranks than the base can hold after
 * resizing its outermost tier). */
cal_nccl_fit *cal_nccl_fit_logs(const topo_variant *base, GPtrArray *logs, net_tier tier, GError **error);
void cal_nccl_fit_free(cal_nccl_fit *f);
/* Prints the parameters (base -> fitted) and the quality per table,
 * before and after. */
void cal_nccl_print(const cal_nccl_fit *f, FILE *out);
/* Writes the fitted config to path atomically, with comment lines naming
 * the logs and the fitted values (cal_config_yaml: human units, renamed
 * "<name>-calibrated").  shape: the cluster as given when it is a preset
 * (or a file with preset_version: 1), else NULL; the fitted values are
 * then written onto it, preset-shaped (preset_version: 1, its tier sizes,
 * no ranks line), so every command fits it to its workload (--scale
 * included) instead of pinning the logs' rank count. */
gboolean cal_nccl_write(const cal_nccl_fit *f, GPtrArray *logs, const topo_variant *shape, const char *path,
                        GError **error);

G_END_DECLS
#endif
