/* study_report.h: `wisp report`: one self-contained HTML page from the JSON
 * that wisp simulate --json, wisp utility --json and wisp sweep (its JSON
 * lines) write (studies/study_report.c, doc/wisp-report.1). */
#ifndef STUDY_REPORT_H
#define STUDY_REPORT_H

#include "common/wisp_util.h"
#include "common/wisp_json.h"
#include "replay/sim_replay.h"

G_BEGIN_DECLS

/* Reads every input (each noted as an input, so the output may not replace
 * one), recognises its kind (simulate report, utility study, sweep JSON
 * lines) and writes one HTML page with a section per input to out_path
 * through wisp_afile (atomic for regular files).  FALSE with an error naming
 * the file, the byte or line and what to give instead when an input is not
 * valid JSON or not a wisp report of a known kind; nothing is written then.
 * Cost: O(total input size). */
gboolean study_report_html(char **inputs, int n_inputs, const char *out_path, GError **error);

/* Writes the page for one JSON file that a command has just written (its
 * --html option): the same code path as `wisp report JSON -o HTML`; label,
 * when not NULL, names the input on the page instead of its path (a
 * temporary file the command removes). */
gboolean study_report_html_one(const char *json_path, const char *label, const char *out_path, GError **error);

/* The per-rank timeline the page draws (studies/study_report_lanes.c): a
 * replay observer that records the compute and communication intervals of
 * at most STUDY_REPORT_LANE_RANKS ranks (those rank_on marks, NULL: all;
 * evenly spread when there are more), passing every callback on to `next`
 * (may be NULL), and writes them as "rank_timeline" (per rank and per bin
 * of STUDY_REPORT_LANE_BINS over the window [from, to) clipped to the step,
 * to < 0: the step's end; the covered share in percent) into a JSON object
 * being written. */
enum { STUDY_REPORT_LANE_RANKS = 32, STUDY_REPORT_LANE_BINS = 120 };
typedef struct study_report_lanes study_report_lanes;
study_report_lanes *study_report_lanes_new(int n_ranks, const gboolean *rank_on, sim_time_ps from, sim_time_ps to,
                                          const sim_replay_observer *next);
const sim_replay_observer *study_report_lanes_observer(study_report_lanes *l);
void study_report_lanes_json(study_report_lanes *l, sim_time_ps step, int n_ranks, wisp_json *j);
void study_report_lanes_free(study_report_lanes *l);

G_END_DECLS
#endif
