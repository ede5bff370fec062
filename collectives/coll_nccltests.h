/* coll_nccltests.h: real nccl-tests results as wisp reads them, for the
 * validation test (regress/test_nccl_tests.c) and `wisp collbench
 * --compare-csv` (doc/collectives.md section 12).
 *
 * The file format is the one of the .csv files in ../shared/data/nccl-tests: '#'
 * comment lines, a header line starting "test,", then one line per size:
 * test,table,size_bytes,count,type,redop,root,oop_time_us,oop_algbw_GBps,
 * oop_busbw_GBps,... (out-of-place figures are used).  mpirun's
 * "[1,0]<stdout>:" tags are removed wherever they occur.  Lines with fewer
 * than 10 fields or a zero size are skipped (nccl-tests prints 0-byte rows
 * for tiny all-gathers).  Prefix coll_ncclt_.
 */
#ifndef WISP_COLL_NCCLTESTS_H
#define WISP_COLL_NCCLTESTS_H

#include <glib.h>
#include <stdint.h>

#include "chakra/et_graph.h"

G_BEGIN_DECLS

typedef struct {
  char test[32];        /* nccl-tests binary, e.g. all_reduce_perf */
  int table;            /* table number within the file */
  uint64_t size;        /* nccl-tests size column S (bytes) */
  double time_us;       /* out-of-place time */
  double busbw_GBps;    /* out-of-place bus bandwidth */
} coll_ncclt_row;

/* Reads every data row of the file into a new array of coll_ncclt_row.
 * NULL with *error naming the file when it cannot be read or holds no
 * data row.  O(file size). */
GArray *coll_ncclt_read(const char *path, GError **error);

/* The collective of an nccl-tests binary name (all_reduce_perf,
 * all_gather_perf, reduce_scatter_perf, reduce_perf, broadcast_perf,
 * alltoall_perf, gather_perf, scatter_perf); FALSE for the others
 * (sendrecv_perf, hypercube_perf).  O(1). */
gboolean coll_ncclt_op(const char *test, et_coll_type *type);

/* Chakra comm_size of nccl-tests' S for n ranks: S / n for all-gather,
 * gather and scatter (nccl-tests prints the total), else S.  O(1). */
uint64_t coll_ncclt_comm_size(et_coll_type type, uint64_t size, int n);

G_END_DECLS
#endif
