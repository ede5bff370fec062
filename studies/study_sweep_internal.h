/* study_sweep_internal.h: what the files of the sweep share (not
 * installed).  study_sweep.c runs a sweep, study_sweep_points.c runs its
 * points, study_sweep_rows.c formats rows, study_sweep_chart.c draws the
 * chart, study_sweep_merge.c merges shards; calls go from the first to
 * the others, and from merge to rows and chart, never back. */
#ifndef STUDY_SWEEP_INTERNAL_H
#define STUDY_SWEEP_INTERNAL_H

#include "studies/study_sweep.h"
#include "replay/sim_report.h"

G_BEGIN_DECLS

/* One sweep run: the spec, the workload, the base cluster and options,
 * the points directory and the digest its rows carry. */
typedef struct {
  const study_spec *s;
  const et_workload *w;
  const topo_variant *base;    /* cluster + set */
  sim_replay_options opt;      /* options after set */
  sim_time_ps base_step;
  char *dir;                   /* DIR/NAME.points */
  char *digest;                /* SHA-256 of spec, resolved cluster, options and workload */
} sweep_ctx;

/* Rows (study_sweep_rows.c).  A CSV field appended with quoting when it
 * needs it; a CSV line split into fields (g_ptr_array_unref); field col
 * of a line (g_free; NULL when shorter); the header line of spec s
 * (g_free); point p's CSV row and JSON line as one string of two lines
 * (g_free), err the point's error or NULL. */
void study_sweep_csv_field(GString *s, const char *f);
GPtrArray *study_sweep_csv_split(const char *line);
char *study_sweep_csv_column(const char *line, int col);
char *study_sweep_csv_header(const study_spec *s);
char *study_sweep_format_point(const sweep_ctx *c, int p, const study_summary *r, const char *err);

/* Points (study_sweep_points.c).  Point p's row file (g_free); TRUE when
 * it is complete and belongs to this run; the temporary files a killed
 * writer left in dir removed (returns how many); the pending points run
 * with o->jobs worker processes (total and already: for the progress). */
char *study_sweep_point_file(const sweep_ctx *c, int p);
gboolean study_sweep_point_done(const sweep_ctx *c, int p);
int study_sweep_remove_orphans(const char *dir);
gboolean study_sweep_run_points(const sweep_ctx *c, const study_sweep_options *o, const int *pending, int n_pending,
                                int total, int already, GError **error);

/* The chart (study_sweep_chart.c): the SVG of sweep CSV text csv written
 * to path; *written says whether there was anything to draw. */
gboolean study_sweep_chart_from_csv(const char *csv, const char *title, const char *path, gboolean *written,
                                    GError **error);

G_END_DECLS
#endif
