/* study_report.h: `wisp report`: one self-contained HTML page from the JSON
 * that wisp simulate --json, wisp utility --json and wisp sweep (its JSON
 * lines) write (studies/study_report.c, doc/wisp-report.1). */
#ifndef STUDY_REPORT_H
#define STUDY_REPORT_H

#include "common/wisp_util.h"

G_BEGIN_DECLS

/* Reads every input (each noted as an input, so the output may not replace
 * one), recognises its kind (simulate report, utility study, sweep JSON
 * lines) and writes one HTML page with a section per input to out_path
 * through wisp_afile (atomic for regular files).  FALSE with an error naming
 * the file, the byte or line and what to give instead when an input is not
 * valid JSON or not a wisp report of a known kind; nothing is written then.
 * Cost: O(total input size). */
gboolean study_report_html(char **inputs, int n_inputs, const char *out_path, GError **error);

G_END_DECLS
#endif
