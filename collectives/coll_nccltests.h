/* coll_nccltests.h: real nccl-tests results as wisp reads them, for the
 * validation test (regress/test_nccl_tests.c), `wisp collbench
 * --compare-csv` and `wisp calibrate --nccl-tests` (doc/collectives.md
 * section 12).  Prefix coll_ncclt_.
 *
 * Two spellings of one result are read:
 *
 *  - the CSV of ../shared/data/nccl-tests: '#' comment lines, a header line
 *    naming the columns (test, table, size_bytes, oop_time_us and
 *    oop_busbw_GBps are required; count, type, redop, root and
 *    oop_algbw_GBps are used when present; columns are found by name, so
 *    their order does not matter and unknown ones are ignored), then one
 *    line per size;
 *  - the raw standard output of an nccl-tests binary (all_reduce_perf ...),
 *    any version: a table starts at its "# nThread T nGpus G ..." line (or
 *    "# Collective test starting: NAME", nccl-tests >= 2.14), its ranks are
 *    the "#  Rank N Group ..." lines that follow, its columns are named by
 *    the "#  size count type redop root time algbw busbw ..." line (older
 *    versions without `root` are read too), and a data row is a line whose
 *    first field is a decimal integer.  Other lines (NCCL INFO, warnings,
 *    the command) are skipped.
 *
 * In both, mpirun's "[1,0]<stdout>:" tags are removed wherever they occur.
 * Out-of-place figures are used.  Rows with a size of 0 are skipped
 * (nccl-tests prints them for tiny all-gathers).  Every value is checked
 * where it enters: a size or count that is not a decimal integer, a size
 * above 2^50 B, a time that is not a finite positive number, a bandwidth
 * that is negative or not finite, or an algbw that disagrees with size /
 * time by more than rounding, is an error naming the file, the line and
 * the field.
 *
 * Per table the reader also records what the log says about the run:
 * the binary (from the "Collective test starting" line, the CSV's test
 * column, or a binary name that the file's comments mention once;
 * otherwise inferred from the columns when only one collective prints
 * such rows), the rank count (the rank lines; else exact from size /
 * count for the per-rank collectives, or from busbw / algbw of
 * all-reduce), and nccl-tests' -g (nGpus of the header line, or "-g N"
 * on a command line quoted in the comments).
 */
#ifndef WISP_COLL_NCCLTESTS_H
#define WISP_COLL_NCCLTESTS_H

#include <glib.h>
#include <stdint.h>

#include "chakra/et_graph.h"
#include "collectives/coll_facts.h"

G_BEGIN_DECLS

#define COLL_NCCLT_MAX_SIZE (UINT64_C(1) << 50) /* 1 PiB: beyond any nccl-tests buffer */

typedef struct {
  char test[32];        /* nccl-tests binary, e.g. all_reduce_perf; "" when unknown */
  int table;            /* table number within the file (1, 2, ...) */
  int line;             /* line of the file (1-based) */
  uint64_t size;        /* nccl-tests size column S (bytes) */
  uint64_t count;       /* elements (0 when the file has no count column) */
  char type[16];        /* data type ("float"; "" when absent) */
  char redop[12];       /* "sum", "none", ... ("" when absent) */
  int root;             /* -1 when none */
  double time_us;       /* out-of-place time */
  double algbw_GBps;    /* out-of-place algorithm bandwidth (-1 when absent) */
  double busbw_GBps;    /* out-of-place bus bandwidth */
} coll_ncclt_row;

/* What the log says about one table (see the file comment). */
typedef struct {
  int table;
  char test[32];        /* binary name; "" when it could not be told */
  char test_from[48];   /* where the name came from, e.g. "the log's header" */
  char candidates[64];  /* when test is "": the binaries the rows fit */
  int ranks;            /* 0: unknown */
  char ranks_from[48];  /* e.g. "16 rank lines" */
  int gpus_per_thread;  /* nccl-tests -g; 0: unknown */
  char gpus_from[48];
  int first_line;       /* first data row */
  guint n_rows;
} coll_ncclt_table;

typedef struct {
  char *path;
  gboolean raw;         /* raw nccl-tests output (FALSE: the CSV) */
  GArray *rows;         /* coll_ncclt_row, in file order */
  GArray *tables;       /* coll_ncclt_table, by table number */
} coll_ncclt_log;

/* Reads a CSV or raw nccl-tests file (see above).  NULL with *error naming
 * the file (and line and field for a bad value) when it cannot be read,
 * holds a bad value, or holds no data row.  O(file size). */
coll_ncclt_log *coll_ncclt_load(const char *path, GError **error);
void coll_ncclt_log_free(coll_ncclt_log *log);
/* The table numbered `table`, or NULL. */
const coll_ncclt_table *coll_ncclt_find(const coll_ncclt_log *log, int table);
/* "1 sendrecv_perf (8 ranks, -g 8), 2 all_reduce_perf (8 ranks, -g 8), ..."
 * (g_free it).  O(tables). */
char *coll_ncclt_list(const coll_ncclt_log *log);

/* Reads every data row of the file into a new array of coll_ncclt_row
 * (coll_ncclt_load's rows).  O(file size). */
GArray *coll_ncclt_read(const char *path, GError **error);

/* The collective of an nccl-tests binary name (all_reduce_perf,
 * all_gather_perf, reduce_scatter_perf, reduce_perf, broadcast_perf,
 * alltoall_perf, gather_perf, scatter_perf); FALSE for the others
 * (sendrecv_perf, hypercube_perf).  O(1). */
gboolean coll_ncclt_op(const char *test, et_coll_type *type);

/* TRUE for sendrecv_perf: every rank sends S bytes to rank + 1 and
 * receives S from rank - 1 (busbw = algbw), which wisp runs as an
 * all-to-allv whose matrix holds that ring shift.  O(1). */
gboolean coll_ncclt_is_sendrecv(const char *test);

/* The nccl-tests binary of a collective name as collbench's --op spells
 * it (all_reduce -> all_reduce_perf, all_to_all -> alltoall_perf,
 * sendrecv -> sendrecv_perf), or NULL.  O(1). */
const char *coll_ncclt_binary_of(const char *op_name);

/* coll_ncclt_comm_size (Chakra comm_size of nccl-tests' S) is in the
 * conventions leaf, coll_facts.h. */

G_END_DECLS
#endif
