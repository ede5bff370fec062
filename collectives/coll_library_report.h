/* coll_library_report.h: text and JSON output of the library model
 * (`wisp collbench --library ... --compare`, --library-params).  Not
 * installed; used by cli/cmd_collbench.c and the tests.
 */
#ifndef WISP_COLL_LIBRARY_REPORT_H
#define WISP_COLL_LIBRARY_REPORT_H

#include "collectives/coll.h"
#include "collectives/libraries/coll_library.h"
#include "common/wisp_json.h"

G_BEGIN_DECLS

/* The library comparisons for the group (full mesh vs ring vs staging per
 * size, AllReduce, JIT table, ROA gap sweep, partitioning, MoE dispatch
 * and combine, SDMA), using every number of `base` and switching only
 * library kind / registration (a CANN-EP variant also takes CANN-EP's
 * staging overlap and t_copy0).  AllGather, AllReduce, partitioning and
 * SDMA are simulated on `tier` (the event model of `wisp simulate`) and
 * printed beside mode A and the reference's target; MoE is simulated
 * only; registration is mode A.  Cost: about 160 simulated collectives
 * (the MoE and partitioning sections need 256 experts to divide over the
 * group).  out and j may each be NULL; j must be inside an object; a JSON
 * object left open on error is the caller's to abandon. */
gboolean coll_library_report(FILE *out, wisp_json *j, const topo *t, net_tier tier, const coll_library_params *base,
                             const int *ranks, int n, GError **error);
/* One library collective alone on a fresh simulation of topology t on
 * `tier` (the event model `wisp simulate` runs: coll_start with the
 * library's operator, engine, registration, staging and SDMA): the
 * completion time of the last member.  m is Chakra's comm_size (all-gather:
 * the per-rank shard); splits for all-to-allv (n x n, row = sender), else
 * NULL.  info and stats may be NULL.  Cost: one collective's simulation. */
gboolean coll_library_simulate(const topo *t, net_tier tier, const coll_library_params *lp, et_coll_type type,
                               uint64_t m, const int *ranks, int n, const uint64_t *splits, sim_time_ps *time_ps,
                               coll_info *info, coll_library_stats *stats, GError **error);

/* Markdown table of every parameter: key, value, unit, provenance, meaning. */
void coll_library_print_params(FILE *out, const coll_library_params *p);
/* Footer lines "# library: ..." and the JSON object of the statistics. */
void coll_library_print_stats(FILE *out, const coll_library_stats *s);
void coll_library_json_stats(wisp_json *j, const char *key, const coll_library_stats *s);

G_END_DECLS
#endif
