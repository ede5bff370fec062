/* coll_nccl_plan.h: NCCL's plan (nccl_plan.c) with the tuner as a
 * parameter, for the libraries that run NCCL's plan machinery with their
 * own tuning tables (rccl/: RCCL, the ROCm fork of NCCL, keeps NCCL's
 * algorithms, protocols, channels and pipeline and replaces the tuner's
 * constants).  A tuner is the functions the plan asks (build the tables,
 * choose, efficiency, latency, send/recv efficiencies, FIFO fill and
 * drain); NCCL's own is coll_nccl_tuner_default (coll_nccl.h's
 * functions).  Not installed:
 * it names the runtime's internal types.  Prefix coll_nccl_.
 */
#ifndef WISP_COLL_NCCL_PLAN_H
#define WISP_COLL_NCCL_PLAN_H

#include "collectives/coll_run.h"
#include "collectives/libraries/nccl/coll_nccl.h"

G_BEGIN_DECLS

/* The tuner the plan asks; every function as its coll_nccl.h namesake. */
typedef struct {
  const char *name;
  void (*build)(const coll_nccl_comm *c, coll_nccl_model *m);
  gboolean (*select)(const coll_nccl_model *m, coll_nccl_func f, uint64_t s, int force_algo, int force_proto,
                     coll_nccl_algo *a, coll_proto *p);
  double (*efficiency)(const coll_nccl_model *m, coll_nccl_func f, coll_nccl_algo a, coll_proto p, gboolean inter,
                       uint64_t s);
  void (*latency)(const coll_nccl_model *m, coll_nccl_func f, coll_nccl_algo a, coll_proto p, uint64_t s,
                  double *base_us, double *hop_us);
  double (*p2p_efficiency)(const coll_nccl_model *m, uint64_t peer_bytes, int peers);
  double (*p2p_net_efficiency)(const coll_nccl_model *m, uint64_t peer_bytes, int net_peers);
  /* NULL: no send/recv pipeline fill (coll_nccl_p2p_fill_us). */
  double (*p2p_fill_us)(const coll_nccl_model *m, uint64_t peer_bytes);
  /* NULL: the per-hop figures hold no wire, the routes charge all of it
   * (coll_nccl_wire_of). */
  void (*wire)(const coll_nccl_model *m, coll_nccl_func f, coll_nccl_algo a, coll_nccl_wire *out);
  /* NULL: no ring drain (coll_nccl_ring_drain_us). */
  double (*ring_drain_us)(const coll_nccl_model *m, coll_nccl_func f, uint64_t s, uint64_t buffsize);
} coll_nccl_tuner;

/* NCCL's tuner: coll_nccl_model_build, coll_nccl_select, ... */
extern const coll_nccl_tuner coll_nccl_tuner_default;

/* The plan of run r (collective d) with tuner tn: the communicator, the
 * tuner's choice, efficiencies and latencies, the pipeline and the wisp
 * algorithms that carry the choice out (nccl_plan.c).  O(n x dims). */
void coll_nccl_plan_with(coll_rt *c, coll_run *r, const coll_desc *d, const coll_nccl_tuner *tn);
/* The plan_chunks and describe hooks of NCCL's family (coll_lib_ops). */
void coll_nccl_plan_chunks(coll_rt *c, coll_run *r, const coll_desc *d);
void coll_nccl_plan_describe(const coll_run *r, GString *s);

G_END_DECLS
#endif
