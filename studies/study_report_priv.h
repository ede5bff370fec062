/* study_report_priv.h: what the files of `wisp report` share (not
 * installed): the inputs, the JSON accessors and the drawing helpers of
 * studies/study_report_draw.c, and one section writer per input kind
 * (studies/study_report_sim.c, study_report_study.c, study_report_more.c).
 *
 * Every number shown that comes from an input goes through report_num(),
 * which writes <span class="n" data-src=I data-json=PATH data-v=VALUE
 * data-scale=S data-dec=D>: regress/test_report.c compares each with the
 * JSON it came from.  A number the page derives (a mean over ranks, a
 * share, a difference) names its derivation instead of a path, so the test
 * recomputes it from the JSON on its own:
 *   sum(L)        the sum of the list L: paths joined by '+', where a path
 *                 segment '*' stands for every element or key at that level
 *   mean(P)       the mean of P's matches
 *   diff(A,B)     sum(A) - sum(B)
 *   share(A,B)    100 sum(A) / (sum(A) + sum(B))
 *   pct_of(A,B)   100 sum(A) / sum(B)
 *   pct_rest(A,B) 100 (1 - sum(A) / sum(B))
 *   pct_diff(A,B) 100 (sum(A) - sum(B)) / sum(B)  Every drawing is an <svg class="chart"> whose
 * rendered size the page's script records for the browser test. */
#ifndef STUDY_REPORT_PRIV_H
#define STUDY_REPORT_PRIV_H

#include "studies/study_report.h"
#include <cjson/cJSON.h>

typedef enum {
  REPORT_SIMULATE,
  REPORT_UTILITY,
  REPORT_SWEEP,
  REPORT_JOBS,
  REPORT_SEARCH,
  REPORT_CALIBRATE,
  REPORT_METRICS,
  REPORT_COLLBENCH,
  REPORT_COLLBENCH_ROWS,
} report_kind;

typedef struct {
  char *path;
  const char *label; /* what the page calls it: the path, or the command's label for a temporary file */
  report_kind kind;
  cJSON *doc; /* the object, or for a sweep an array of the lines' objects */
  const char *out_dir; /* the page's directory (absolute), for relative links */
  int joined_to;       /* a sweep shard joined into input joined_to - 1 (doc NULL then); 0: not joined */
} report_input;

/* JSON accessors: NULL / 0 / FALSE when the key is absent or of another type. */
const cJSON *report_get(const cJSON *o, const char *k);
const char *report_str(const cJSON *o, const char *k);
gboolean report_isnum(const cJSON *o, const char *k);
double report_dbl(const cJSON *o, const char *k);

/* HTML text with <>&" escaped. */
void report_esc(GString *h, const char *s);
/* A number from input src at JSON path `path`, shown as v / scale with dec
 * decimals (see the file comment). */
void report_num(GString *h, int src, const char *path, double v, double scale, int dec);
/* report_num with the path built from a printf format. */
void report_numf(GString *h, int src, double v, double scale, int dec, const char *fmt, ...) G_GNUC_PRINTF(6, 7);
/* Opens an input's section: <section><h2>TITLE: its label</h2> and the
 * <table> of what it holds (the caller adds rows and closes the table). */
void report_section_head(GString *h, const char *title, const report_input *in);
/* Table cells of one JSON row: for each column, <td> with the number at
 * key of row (JSON path base/key), shown / scale with dec decimals. */
typedef struct {
  const char *key;
  double scale;
  int dec;
} report_col;
void report_cells(GString *h, int src, const cJSON *row, const char *base, const report_col *cols, int n_cols);
/* report_num with scale 1 and a '+' before a value >= 0 (a change). */
void report_signed(GString *h, int src, double v, int dec, const char *fmt, ...) G_GNUC_PRINTF(5, 6);
/* One <tr><th>name</th><td>value</td></tr>, "(not recorded)" for NULL. */
void report_row_text(GString *h, const char *name, const char *value);

/* The step time line (and the measured step and the baseline error when
 * measured_key holds a positive number). */
void report_step_line(GString *h, int src, const cJSON *doc, const char *step_key, const char *measured_key);
/* The critical path (an object of sim_crit_write_json at JSON path base):
 * stacked bar by category with its legend, the bar by rank, and the
 * "what bounds the step" sentence. */
void report_crit_path(GString *h, int src, const cJSON *crit, const char *base);
/* Assumptions and warnings a reader must see (unsimulated communication,
 * assumed roots, no measurement, calibration error, cluster fitting and
 * any "warnings" array of strings). */
void report_warnings(GString *h, const cJSON *doc, const char *measured_key);
/* The resolved topology as a small diagram: tiers innermost first, each a
 * box of `size` members of the tier below, with kind and bandwidth.
 * `tiers` is an array of objects with name, kind, size and bandwidth_Bps
 * (utility's cluster.tiers, simulate's topology.dims); src/base locate it
 * in the JSON for the numbers. */
void report_topology(GString *h, int src, const cJSON *tiers, const char *base);

/* A line chart: n_lines series over n_x points, y[line * n_x + x] (NAN: no
 * point), x labels, line names; `mark` >= 0 circles that x of line 0 with
 * the label "base", base_y > 0 draws a dashed horizontal line. */
typedef struct {
  int n_lines, n_x;
  const double *y;
  char **x_labels, **line_names;
  const char *y_unit;
  double y_scale;
  int mark_line, mark_x;
  double base_y;
  gboolean log_x_labels_only;
} report_lines;
void report_line_chart(GString *h, const report_lines *c);

/* Section writers, one per input kind. */
void report_section_simulate(GString *h, int src, const report_input *in);
void report_section_utility(GString *h, int src, const report_input *in);
void report_section_sweep(GString *h, int src, const report_input *in);
void report_section_search(GString *h, int src, const report_input *in);
void report_section_jobs(GString *h, int src, const report_input *in);
void report_section_calibrate(GString *h, int src, const report_input *in);
void report_section_metrics(GString *h, int src, const report_input *in);
void report_section_collbench(GString *h, int src, const report_input *in);
void report_section_collbench_rows(GString *h, int src, const report_input *in);
/* Side-by-side tables when the page has two or more simulated runs or
 * utility studies (nothing otherwise). */
void report_compare_runs(GString *h, const report_input *in, int n);
void report_compare_utilities(GString *h, const report_input *in, int n);
/* The metric catalog table of a "metrics" object (wisp metrics --json, or
 * simulate's "metrics" object at JSON path base). */
void report_metrics_table(GString *h, int src, const cJSON *m, const char *base);

#endif
