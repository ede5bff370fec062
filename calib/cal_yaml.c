/* cal_yaml.c: the text of a calibrated config: link values in human
 * units that read back to the same integers ("35.41GB/s", "571.8ns"),
 * the "-calibrated" name and, for a preset-shaped output, the preset form
 * (see cal_config_yaml in cal.h).
 */
#include "config.h"

#include <string.h>

#include "calib/cal.h"

/* v / unit as an exact decimal: integer part, then the remainder's digits
 * without trailing zeros ("35.41", "9.281492159", "50"). */
static void exact_decimal(GString *s, uint64_t v, uint64_t unit)
{
  g_string_append_printf(s, "%" G_GUINT64_FORMAT, v / unit);
  uint64_t r = v % unit;
  if (r == 0)
    return;
  int digits = 0;
  for (uint64_t u = unit; u > 1; u /= 10)
    digits++;
  char buf[32];
  g_snprintf(buf, sizeof buf, "%0*" G_GUINT64_FORMAT, digits, r);
  for (int k = digits - 1; k > 0 && buf[k] == '0'; k--)
    buf[k] = '\0';
  g_string_append_printf(s, ".%s", buf);
}

/* "bandwidth: 35410000000B/s" -> "bandwidth: 35.41GB/s", "latency: 571800ps"
 * -> "latency: 571.8ns": the largest unit not above the value, digits kept
 * exactly, so the config reads back to the same integers. */
static gboolean human_unit(const GMatchInfo *m, GString *res, gpointer data)
{
  (void)data;
  char *key = g_match_info_fetch(m, 1), *num = g_match_info_fetch(m, 2), *unit = g_match_info_fetch(m, 3);
  uint64_t v = g_ascii_strtoull(num, NULL, 10);
  g_string_append_printf(res, "%s: ", key);
  if (strcmp(unit, "B/s") == 0) {
    static const struct { uint64_t f; const char *u; } bw[] = {
      {UINT64_C(1000000000000), "TB/s"}, {1000000000, "GB/s"}, {1000000, "MB/s"}, {1000, "kB/s"}, {1, "B/s"}};
    size_t i = 0;
    while (i + 1 < G_N_ELEMENTS(bw) && v < bw[i].f)
      i++;
    exact_decimal(res, v, bw[i].f);
    g_string_append(res, bw[i].u);
  } else {
    static const struct { uint64_t f; const char *u; } tm[] = {
      {UINT64_C(1000000000000), "s"}, {1000000000, "ms"}, {1000000, "us"}, {1000, "ns"}, {1, "ps"}};
    size_t i = 0;
    while (i + 1 < G_N_ELEMENTS(tm) && v < tm[i].f)
      i++;
    exact_decimal(res, v, tm[i].f);
    g_string_append(res, tm[i].u);
  }
  g_free(key);
  g_free(num);
  g_free(unit);
  return FALSE;
}

/* The YAML of v with human units, the name "<name>-calibrated" (or
 * "calibrated") and, as_preset, "preset_version: 1" first and no ranks
 * line (so it is fitted to each workload).  g_free. */
char *cal_config_yaml(const topo_variant *v, gboolean as_preset)
{
  char *raw = topo_variant_to_yaml(v);
  GRegex *re = g_regex_new("(bandwidth|latency): ([0-9]+)(B/s|ps)\\b", 0, 0, NULL);
  char *human = g_regex_replace_eval(re, raw, -1, 0, 0, human_unit, NULL, NULL);
  g_regex_unref(re);
  g_free(raw);
  GRegex *rn = g_regex_new("^name: \"(.*)\"$", G_REGEX_MULTILINE, 0, NULL);
  char *yaml = g_regex_replace(rn, human, -1, 0, "name: \"\\1-calibrated\"", 0, NULL);
  g_regex_unref(rn);
  g_free(human);
  if (yaml == NULL || strstr(yaml, "\nname: ") == NULL) {
    /* An unnamed cluster gets the plain name. */
    char *named = g_strdup(yaml ? yaml : "");
    char *at = strstr(named, "\nschema_version: 1\n");
    g_free(yaml);
    if (at) {
      at += strlen("\nschema_version: 1\n");
      yaml = g_strdup_printf("%.*sname: \"calibrated\"\n%s", (int)(at - named), named, at);
      g_free(named);
    } else {
      yaml = named;
    }
  }
  if (as_preset) {
    GRegex *rr = g_regex_new("^ranks: [0-9]+\n", G_REGEX_MULTILINE, 0, NULL);
    char *noranks = g_regex_replace_literal(rr, yaml, -1, 0, "", 0, NULL);
    g_regex_unref(rr);
    g_free(yaml);
    yaml = g_strdup_printf("preset_version: 1\n%s", noranks);
    g_free(noranks);
  }
  return yaml;
}
