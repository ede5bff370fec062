/* test_spelling_cli.c: issue 29 item 5, one concept one spelling, audited
 * through the `wisp` binary ($WISP_BIN, set by `make check`).
 *
 * One table below names every concept the commands share (network, json,
 * jobs, step, steps, starts, comm-group, scale, card, strict, ...) with its
 * one long spelling, its one short letter (or none), its value placeholder
 * and its aliases.  The tests read every command's options from
 * `wisp CMD --help-all` (GOption prints "-x, --long=VALUE  help" per
 * visible option) and check them against the table:
 *   - a short letter means one long option on every command (-j was
 *     --json on five commands and --jobs on sweep);
 *   - an option spelled as a concept takes that concept's short letter and
 *     placeholder everywhere (metrics' --card=CARD.yaml, utility's
 *     -n CONFIG were odd ones out);
 *   - a visible alias (--cluster) comes with its concept's spelling;
 *   - each command offers the concepts of its kind (every command that
 *     replays a workload has --starts, --replicate-missing, --algo,
 *     --strict, ...: sweep lacked them);
 *   - every command that takes a network accepts --network and --cluster
 *     as one option (collbench refused --cluster, topo --network), and the
 *     usage errors ask for --network (utility asked for --cluster).
 */
#include "config.h"

#include "regress/test_util.h"

#include <string.h>

static const char *const commands[] = {"inspect", "convert", "simulate", "utility", "search", "sweep", "sweep-merge",
                                       "diff", "calibrate", "topo", "collbench", "metrics", NULL};

/* The concepts.  value NULL: the option takes no value, or (output) the
 * value's kind depends on the command (a directory, a file, a prefix). */
typedef struct {
  const char *name;       /* the one long spelling */
  char short_name;        /* its one short letter, 0 for none */
  const char *value;      /* its placeholder in --help, "" for a flag, NULL: any */
  const char *aliases[3]; /* other spellings kept for compatibility (each documented as "same as") */
} concept;

static const concept concepts[] = {
  {"network", 'n', "PRESET|CONFIG", {"cluster", NULL}},
  {"network-model", 0, "MODEL", {"tier", NULL}},
  {"json", 'j', "FILE", {NULL}},
  {"jobs", 0, "N", {NULL}},
  {"output", 'o', NULL, {NULL}},
  {"step", 0, "N", {NULL}},
  {"steps", 0, "A..B|all|whole", {NULL}},
  {"starts", 0, "together|measured", {NULL}},
  {"comm-group", 0, "FILE", {"comm-group-configuration", NULL}},
  {"scale", 0, "dp=N|tp=N,pp=N,mb=N", {NULL}},
  {"placement", 0, "outer|inner", {NULL}},
  {"card", 0, "FILE", {NULL}},
  {"strict", 0, "", {NULL}},
  {"replicate-from", 0, "R[,R...]|all", {NULL}},
  {"replicate-missing", 0, "", {NULL}},
  {"algo", 0, "ALGO", {NULL}},
  {"slow-rank", 0, "R=F", {NULL}},
  {"slow-ranks", 0, "DIST", {NULL}},
  {"check-baseline", 0, "MAX_PCT", {NULL}},
  {"svg", 0, "FILE", {NULL}},
  {"max-rows", 0, "N", {NULL}},
  {"verbose", 'v', "", {NULL}},
  {"workload", 'w', "PATH", {NULL}},
  {"system", 0, "FILE", {"system-configuration", NULL}},
};

/* The concepts each kind of command offers. */
static const char *const replaying[] = {"simulate", "utility", "sweep", "calibrate", NULL};
static const char *const replay_concepts[] = {"network-model", "step", "steps", "starts", "comm-group", "scale",
                                              "placement", "card", "strict", "replicate-from", "replicate-missing",
                                              "algo", "slow-rank", "slow-ranks", NULL};
static const char *const networked[] = {"simulate", "utility", "search", "calibrate", "collbench", "topo", NULL};
static const char *const trace_reading[] = {"inspect", "convert", "metrics", NULL};
static const char *const trace_concepts[] = {"step", "steps", "strict", "replicate-from", "card", NULL};

typedef struct {
  char short_name;
  char *name, *value; /* value "" for a flag */
} option;

static void option_free(gpointer p)
{
  option *o = p;
  g_free(o->name);
  g_free(o->value);
  g_free(o);
}

/* The visible options of `wisp cmd` from its --help-all output (the help
 * option itself left out).  O(lines of the help). */
static GPtrArray *options_of(const char *cmd)
{
  char *out = NULL;
  g_assert_cmpint(test_wisp_run((const char *[]){cmd, "--help-all", NULL}, &out), ==, 0);
  GPtrArray *opts = g_ptr_array_new_with_free_func(option_free);
  char **lines = g_strsplit(out, "\n", -1);
  for (char **l = lines; *l; l++) {
    const char *p = *l;
    while (*p == ' ')
      p++;
    if (p == *l || *p != '-')
      continue;
    option *o = g_new0(option, 1);
    if (p[1] != '-') { /* "-x, --long" */
      o->short_name = p[1];
      p += 4;
    }
    p += 2;
    size_t n = strcspn(p, "= ");
    o->name = g_strndup(p, n);
    if (p[n] == '=') {
      const char *v = p + n + 1;
      o->value = g_strndup(v, strcspn(v, " "));
    } else {
      o->value = g_strdup("");
    }
    if (strcmp(o->name, "help") == 0 || strncmp(o->name, "help-", 5) == 0)
      option_free(o);
    else
      g_ptr_array_add(opts, o);
  }
  g_strfreev(lines);
  g_free(out);
  return opts;
}

static const option *find_option(GPtrArray *opts, const char *name)
{
  for (guint i = 0; i < opts->len; i++) {
    const option *o = opts->pdata[i];
    if (strcmp(o->name, name) == 0)
      return o;
  }
  return NULL;
}

/* Every problem found is collected, so one run lists them all. */
static void problem(GString *p, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void problem(GString *p, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_string_append_vprintf(p, fmt, ap);
  va_end(ap);
  g_string_append_c(p, '\n');
}

static void finish(GString *p)
{
  if (p->len) {
    g_test_message("spelling problems:\n%s", p->str);
    g_test_fail(); /* the other tests still run and list theirs */
  }
  g_string_free(p, TRUE);
}

/* A short letter stands for one long option on every command. */
static void test_short_letters(void)
{
  if (!test_have_bin())
    return;
  GString *p = g_string_new(NULL);
  const char *owner[128] = {NULL}, *first_cmd[128] = {NULL};
  for (const char *const *c = commands; *c; c++) {
    GPtrArray *opts = options_of(*c);
    for (guint i = 0; i < opts->len; i++) {
      const option *o = opts->pdata[i];
      unsigned char s = (unsigned char)o->short_name;
      if (s == 0 || s >= 128)
        continue;
      if (owner[s] == NULL) {
        owner[s] = g_intern_string(o->name);
        first_cmd[s] = *c;
      } else if (strcmp(owner[s], o->name) != 0) {
        problem(p, "-%c is --%s on %s but --%s on %s", s, owner[s], first_cmd[s], o->name, *c);
      }
    }
    g_ptr_array_free(opts, TRUE);
  }
  finish(p);
}

/* An option spelled as a concept has the concept's short letter and
 * placeholder; a visible alias comes with the concept's own spelling. */
static void test_concept_spellings(void)
{
  if (!test_have_bin())
    return;
  GString *p = g_string_new(NULL);
  for (const char *const *c = commands; *c; c++) {
    GPtrArray *opts = options_of(*c);
    for (guint k = 0; k < G_N_ELEMENTS(concepts); k++) {
      const concept *t = &concepts[k];
      const option *o = find_option(opts, t->name);
      if (o && o->short_name && o->short_name != t->short_name)
        problem(p, "%s: --%s has -%c (the concept's letter is %s%c)", *c, t->name, o->short_name,
                t->short_name ? "-" : "none", t->short_name ? t->short_name : ' ');
      if (o && t->value && strcmp(o->value, t->value) != 0)
        problem(p, "%s: --%s takes '%s' (everywhere else '%s')", *c, t->name, o->value, t->value);
      for (int a = 0; t->aliases[a]; a++) {
        const option *al = find_option(opts, t->aliases[a]);
        if (al && o == NULL)
          problem(p, "%s: has --%s but not --%s, its concept's spelling", *c, t->aliases[a], t->name);
        if (al && t->value && strcmp(al->value, t->value) != 0)
          problem(p, "%s: --%s (alias of --%s) takes '%s' (expected '%s')", *c, al->name, t->name, al->value,
                  t->value);
      }
    }
    g_ptr_array_free(opts, TRUE);
  }
  finish(p);
}

static void require(GString *p, const char *const *cmds, const char *const *names)
{
  for (const char *const *c = cmds; *c; c++) {
    GPtrArray *opts = options_of(*c);
    for (const char *const *n = names; *n; n++)
      if (find_option(opts, *n) == NULL)
        problem(p, "%s: lacks --%s", *c, *n);
    g_ptr_array_free(opts, TRUE);
  }
}

/* Commands of one kind offer the same concepts. */
static void test_concepts_per_kind(void)
{
  if (!test_have_bin())
    return;
  GString *p = g_string_new(NULL);
  require(p, replaying, replay_concepts);
  require(p, trace_reading, trace_concepts);
  require(p, networked, (const char *const[]){"network", NULL});
  finish(p);
}

/* --network and --cluster are one option on every command that takes a
 * network: both reach the same preset (exit 0), and giving none is a usage
 * error that asks for --network. */
static void test_network_everywhere(void)
{
  if (!test_have_bin())
    return;
  GString *p = g_string_new(NULL);
  const char *spell[] = {"--network", "--cluster", "-n", "-c"};
  for (guint s = 0; s < G_N_ELEMENTS(spell); s++) {
    char *out = NULL, *err = NULL;
    int rc = test_wisp_run_in(NULL, (const char *[]){"topo", spell[s], "dgx-a100", NULL}, &out, &err);
    if (rc != 0 || strstr(out, "dgx-a100") == NULL)
      problem(p, "topo %s dgx-a100: exit %d: %s", spell[s], rc, err);
    g_free(out);
    g_free(err);
    rc = test_wisp_run_in(NULL, (const char *[]){"collbench", spell[s], "dgx-a100", "--ranks", "8", "--sizes", "1M",
                                                 NULL}, &out, &err);
    if (rc != 0 || strstr(out, "all_reduce") == NULL)
      problem(p, "collbench %s dgx-a100: exit %d: %s", spell[s], rc, err);
    g_free(out);
    g_free(err);
  }
  /* The usage errors (no workload, no network) name --network. */
  for (const char *const *c = (const char *const[]){"simulate", "utility", "collbench", "topo", NULL}; *c; c++) {
    char *err = NULL;
    int rc = test_wisp_run_in(NULL, (const char *[]){*c, NULL}, NULL, &err);
    if (rc != 2 || strstr(err, "--network PRESET|CONFIG") == NULL)
      problem(p, "%s without arguments: exit %d, and its usage error should ask for --network PRESET|CONFIG: %s",
              *c, rc, err);
    g_free(err);
  }
  finish(p);
}

/* sweep's worker count is --jobs; -j (which means --json elsewhere) is
 * refused with a message naming --jobs. */
static void test_sweep_jobs(void)
{
  if (!test_have_bin())
    return;
  char *err = NULL;
  int rc = test_wisp_run_in(NULL, (const char *[]){"sweep", "-j", "2", "x.yaml", NULL}, NULL, &err);
  g_assert_cmpint(rc, ==, 2);
  g_assert_nonnull(strstr(err, "--jobs N"));
  g_free(err);
}

/* Whether a man page line starts an option: ".B \-\-long..." or
 * ".B \-x, ..." (not ".B \-", a lone dash for standard output). */
static gboolean option_line(const char *l)
{
  if (g_str_has_prefix(l, ".B \\-\\-"))
    return TRUE;
  return g_str_has_prefix(l, ".B \\-") && g_ascii_isalnum(l[5]) && l[6] == ',';
}

/* Every visible option of every command is documented in its man page
 * (doc/wisp-CMD.1 spells it \-\-NAME), so the pages cannot drift from
 * --help. */
static void test_man_pages(void)
{
  if (!test_have_bin())
    return;
  GString *p = g_string_new(NULL);
  for (const char *const *c = commands; *c; c++) {
    char *page = g_strdup_printf("%s/doc/wisp-%s.1", g_getenv("G_TEST_SRCDIR"), *c), *text = NULL;
    g_assert_true(g_file_get_contents(page, &text, NULL, NULL));
    /* Each option's line (".B \-..." in OPTIONS) starts a paragraph:
     * without ".TP" before it, it runs into the previous option's text
     * (wisp-simulate.1's --scale ran into --job). */
    char **lines = g_strsplit(text, "\n", -1);
    gboolean in_options = FALSE;
    for (int i = 1; lines[i]; i++) {
      if (g_str_has_prefix(lines[i], ".SH"))
        in_options = strcmp(lines[i], ".SH OPTIONS") == 0;
      else if (in_options && option_line(lines[i]) && strcmp(lines[i - 1], ".TP") != 0)
        problem(p, "doc/wisp-%s.1:%d: '%s' has no .TP before it", *c, i + 1, lines[i]);
    }
    g_strfreev(lines);
    GPtrArray *opts = options_of(*c);
    for (guint i = 0; i < opts->len; i++) {
      const option *o = opts->pdata[i];
      GString *man = g_string_new("\\-\\-");
      for (const char *q = o->name; *q; q++)
        g_string_append(man, *q == '-' ? "\\-" : (char[]){*q, 0});
      /* Followed by a delimiter, so --step is not found inside --steps. */
      gboolean found = FALSE;
      for (const char *at = strstr(text, man->str); at && !found; at = strstr(at + 1, man->str)) {
        char next = at[man->len];
        found = !(g_ascii_isalnum(next) || next == '\\');
      }
      if (!found)
        problem(p, "doc/wisp-%s.1 does not document --%s", *c, o->name);
      g_string_free(man, TRUE);
    }
    g_ptr_array_free(opts, TRUE);
    g_free(text);
    g_free(page);
  }
  finish(p);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/spelling/short-letters", test_short_letters);
  g_test_add_func("/spelling/concepts", test_concept_spellings);
  g_test_add_func("/spelling/per-kind", test_concepts_per_kind);
  g_test_add_func("/spelling/network", test_network_everywhere);
  g_test_add_func("/spelling/sweep-jobs", test_sweep_jobs);
  g_test_add_func("/spelling/man-pages", test_man_pages);
  return g_test_run();
}
