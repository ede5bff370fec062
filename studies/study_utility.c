/* study_utility.c: utility of doubling a resource (CCL-Bench's definition,
 * studies.md section 1), computed in-process from one loaded workload.
 *
 * Cost: one replay for the baseline, one per resource and two for the
 * +-10 % bandwidth sensitivity; every replay reuses the same workload
 * graphs (nothing is re-parsed) and builds its own topology. */
#include "config.h"
#include "studies/study.h"
#include "chakra/et_scale.h"
#include "replay/sim_report.h"
#include "replay/sim_critical.h"
#include "common/wisp_json.h"

#include <math.h>
#include <string.h>

static void row_clear(gpointer p)
{
  study_utility_row *r = p;
  g_free(r->resource);
  g_free(r->change);
  g_free(r->note);
}

void study_utility_result_free(study_utility_result *u)
{
  if (u == NULL)
    return;
  if (u->rows)
    g_array_free(u->rows, TRUE);
  sim_crit_path_free(u->baseline_critical);
  g_free(u);
}

static char *bw_change(const topo_variant *a, const topo_variant *b, int lo, int hi)
{
  GString *s = g_string_new(NULL);
  for (int d = lo; d <= hi; d++) {
    char *x = wisp_format_bandwidth(topo_variant_dim_bw(a, d)), *y = wisp_format_bandwidth(topo_variant_dim_bw(b, d));
    g_string_append_printf(s, "%s%s %s -> %s", s->len ? "; " : "", topo_variant_dim_name(a, d), x, y);
    g_free(x);
    g_free(y);
  }
  return g_string_free(s, FALSE);
}

static char *lat_change(const topo_variant *a, const topo_variant *b, int lo, int hi)
{
  GString *s = g_string_new(NULL);
  for (int d = lo; d <= hi; d++) {
    char *x = wisp_format_time(topo_variant_dim_latency(a, d)), *y = wisp_format_time(topo_variant_dim_latency(b, d));
    g_string_append_printf(s, "%s%s %s -> %s", s->len ? "; " : "", topo_variant_dim_name(a, d), x, y);
    g_free(x);
    g_free(y);
  }
  return g_string_free(s, FALSE);
}

static char *size_change(const topo_variant *a, const topo_variant *b)
{
  GString *s = g_string_new("dims [");
  for (int d = 0; d < topo_variant_n_dims(a); d++)
    g_string_append_printf(s, "%s%d", d ? ", " : "", topo_variant_dim_size(a, d));
  g_string_append(s, "] -> [");
  for (int d = 0; d < topo_variant_n_dims(b); d++)
    g_string_append_printf(s, "%s%d", d ? ", " : "", topo_variant_dim_size(b, d));
  g_string_append_c(s, ']');
  return g_string_free(s, FALSE);
}

/* Whether a and b have the same tier sizes (a size edit the rank count
 * undid). */
static gboolean same_dims(const topo_variant *a, const topo_variant *b)
{
  if (topo_variant_n_dims(a) != topo_variant_n_dims(b))
    return FALSE;
  for (int d = 0; d < topo_variant_n_dims(a); d++)
    if (topo_variant_dim_size(a, d) != topo_variant_dim_size(b, d))
      return FALSE;
  return TRUE;
}

/* Builds the variant for one resource.  Returns NULL with *why set when the
 * resource does not exist in this topology, NULL with *error on errors. */
static topo_variant *make_variant(const topo_variant *base, const char *res, char **change, char **why,
                                  GError **error)
{
  topo_variant *v = topo_variant_copy(base);
  int nd = topo_variant_n_dims(base), so = topo_variant_scale_out_dim(base);
  gboolean ok = TRUE;
  *change = NULL;
  *why = NULL;
  if (strcmp(res, "scale_out_bw") == 0) {
    if (so < 0)
      *why = g_strdup("the cluster has one tier only (no scale-out tier): nothing to double");
    else if (topo_variant_dim_size(base, so) == 1)
      *why = g_strdup_printf("the scale-out tier '%s' has a single group (size 1): no rank pair crosses it",
                             topo_variant_dim_name(base, so));
    else if ((ok = topo_variant_scale_bw(v, so, 2.0, error)))
      *change = bw_change(base, v, so, so);
  } else if (strcmp(res, "scale_up_bw") == 0) {
    int hi = so < 0 ? nd - 1 : so - 1;
    for (int d = 0; d <= hi && ok; d++)
      ok = topo_variant_scale_bw(v, topo_variant_is_graph(v) ? -1 : d, 2.0, error);
    if (ok)
      *change = bw_change(base, v, 0, hi);
  } else if (strcmp(res, "scale_up_domain") == 0) {
    int dd = topo_variant_domain_dim(base);
    if (so < 0)
      *why = g_strdup("the cluster has one tier only: its scale-up domain already holds every rank");
    else if ((ok = topo_variant_set_dim_size(v, dd, 2 * topo_variant_dim_size(base, dd), error)))
      *change = size_change(base, v);
    if (ok && *change && same_dims(base, v))
      *why = g_strdup_printf("doubling the scale-up domain leaves the dims %.*s unchanged: the workload's %d ranks "
                             "already fit in one domain of %d", (int)(strstr(*change, " -> ") - (*change + 5)), *change + 5,
                             topo_variant_n_ranks(base), topo_variant_dim_size(base, dd));
  } else if (strcmp(res, "ici_bw") == 0) {
    int hit = 0;
    for (int d = 0; d < nd && ok; d++) {
      topo_kind k = topo_variant_dim_kind(base, d);
      if (k == TOPO_KIND_TORUS2D || k == TOPO_KIND_TORUS3D) {
        ok = topo_variant_scale_bw(v, d, 2.0, error);
        if (ok) {
          char *c = bw_change(base, v, d, d);
          *change = *change ? g_strconcat(*change, "; ", c, NULL) : g_strdup(c);
          g_free(c);
        }
        hit++;
      }
    }
    if (ok && hit == 0)
      *why = g_strdup("the cluster has no torus (ICI) tier");
  } else if (strcmp(res, "latency") == 0) {
    if ((ok = topo_variant_scale_latency(v, -1, 0.5, error)))
      *change = lat_change(base, v, 0, nd - 1);
  } else if (g_str_has_prefix(res, "bw:") || g_str_has_prefix(res, "lat:") || g_str_has_prefix(res, "size:")) {
    const char *tier = strchr(res, ':') + 1;
    int d = topo_variant_find_dim(base, tier);
    if (d < 0) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "resource '%s': the cluster has no tier '%s'", res, tier);
      ok = FALSE;
    } else if (res[0] == 'b') {
      if ((ok = topo_variant_scale_bw(v, topo_variant_is_graph(v) ? -1 : d, 2.0, error)))
        *change = bw_change(base, v, d, d);
    } else if (res[0] == 'l') {
      if ((ok = topo_variant_scale_latency(v, topo_variant_is_graph(v) ? -1 : d, 0.5, error)))
        *change = lat_change(base, v, d, d);
    } else if ((ok = topo_variant_set_dim_size(v, d, 2 * topo_variant_dim_size(base, d), error))) {
      *change = size_change(base, v);
      if (same_dims(base, v))
        *why = g_strdup_printf("doubling tier '%s' leaves the dims %.*s unchanged (the workload's %d ranks fix "
                               "the sizes)", tier, (int)(strstr(*change, " -> ") - (*change + 5)), *change + 5,
                               topo_variant_n_ranks(base));
    }
  } else {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                "unknown resource '%s'; use scale_out_bw, scale_up_bw, scale_up_domain, ici_bw, latency, all, "
                "bw:TIER, lat:TIER, size:TIER, compute, compute:CLASS (gemm, elementwise, comm_adjacent) or host",
                res);
    ok = FALSE;
  }
  if (!ok || *why) {
    topo_variant_free(v);
    return NULL;
  }
  return v;
}

/* A row whose edit is an earlier row's (TPU: scale_up_bw and ici_bw are
 * one tier) is that row again, not a second resource: frees v, sets *why
 * and returns NULL.  Otherwise returns v.  Appends the row's YAML (NULL
 * for none) to yamls, one entry per row.  O(rows x YAML size). */
static topo_variant *drop_repeat(topo_variant *v, const GArray *rows, GPtrArray *yamls, char **why)
{
  char *yaml = v ? topo_variant_to_yaml(v) : NULL;
  for (guint k = 0; yaml && k < yamls->len; k++)
    if (yamls->pdata[k] && strcmp(yamls->pdata[k], yaml) == 0) {
      *why = g_strdup_printf("the same change as %s (one tier)", g_array_index(rows, study_utility_row, k).resource);
      topo_variant_free(v);
      v = NULL;
      break;
    }
  g_ptr_array_add(yamls, v ? yaml : NULL);
  if (!v)
    g_free(yaml);
  return v;
}

/* Whether res is a lever (compute, compute:CLASS, host): its variant is
 * the same cluster with the replay's levers changed (replay/sim_levers.h). */
static gboolean is_lever(const char *res)
{
  return strcmp(res, "compute") == 0 || strcmp(res, "host") == 0 || g_str_has_prefix(res, "compute:");
}

/* The share of the workload's time a lever scales: GPU kernels (of a
 * class) or CPU nodes, over all ranks; *scaled is that time (0: the lever
 * changes nothing).  O(nodes x name length). */
static char *lever_share(const et_workload *w, const char *res, double *scaled)
{
  sim_kernel_class want = SIM_KERNEL_CLASS_COUNT;
  gboolean host = strcmp(res, "host") == 0;
  if (g_str_has_prefix(res, "compute:"))
    sim_kernel_class_from_name(res + 8, &want);
  double part = 0, all = 0, unnamed = 0;
  for (int r = 0; r < w->n_ranks; r++) {
    const et_graph *g = w->ranks[r];
    for (uint32_t i = 0; i < g->n_nodes; i++) {
      const et_node *n = &g->nodes[i];
      if (n->type != ET_NODE_COMP || (n->flags & ET_FLAG_REPLAY))
        continue;
      gboolean cpu = (n->flags & ET_FLAG_CPU_OP) != 0, kernel = !cpu && !(n->flags & ET_FLAG_DELAY);
      if (host ? cpu : kernel) {
        all += (double)n->duration_ps;
        if (host || want == SIM_KERNEL_CLASS_COUNT || sim_kernel_classify(et_node_name(g, i)) == want) {
          part += (double)n->duration_ps;
          if (!host && want == SIM_KERNEL_ELEMENTWISE && !sim_kernel_named(et_node_name(g, i)))
            unnamed += (double)n->duration_ps;
        }
      }
    }
  }
  *scaled = part;
  if (host)
    return g_strdup_printf("CPU nodes: %.6f ms over all ranks", part / 1e9);
  if (want == SIM_KERNEL_CLASS_COUNT)
    return g_strdup_printf("GPU kernels: %.6f ms over all ranks", part / 1e9);
  /* Elementwise is every kernel no other rule claims: say how much of it
   * is there only because its name matches no rule (doc/studies.md). */
  if (unnamed > 0)
    return g_strdup_printf("%s kernels: %.2f %% of GPU kernel time, of which %.2f %% by default: names that "
                           "match no class rule", sim_kernel_class_name(want), all > 0 ? 100.0 * part / all : 0.0,
                           all > 0 ? 100.0 * unnamed / all : 0.0);
  return g_strdup_printf("%s kernels: %.2f %% of GPU kernel time", sim_kernel_class_name(want),
                         all > 0 ? 100.0 * part / all : 0.0);
}

/* Why a lever that scales no node is not applicable (g_free). */
static char *lever_nothing(const char *res)
{
  if (strcmp(res, "host") == 0)
    return g_strdup("the workload has no host/CPU nodes to halve (its input kept no CPU operators or launches)");
  if (strcmp(res, "compute") == 0)
    return g_strdup("the workload has no GPU kernels to halve");
  return g_strdup_printf("no GPU kernel of the workload is of class %s (the class comes from the kernel's name; "
                         "doc/studies.md \"Kernel classes\"), so halving it changes nothing", res + 8);
}

/* One lever row: the same cluster, the replay runs the changed workload
 * (the lever's nodes for half their duration), or not applicable when the
 * lever scales nothing (not a 0 % utility, issue 29 item 2).  FALSE (with
 * *ok FALSE) when the lever cannot be set; *ok FALSE also when its replay
 * failed (the row is kept, as for network rows). */
static gboolean lever_row(const et_workload *w, const topo_variant *base, const sim_replay_options *opt, double T,
                          study_utility_row *row, gboolean *ok, GError **error)
{
  sim_replay_options lo = opt ? *opt : (sim_replay_options){0};
  double cur = strcmp(row->resource, "compute") == 0 ? lo.levers.compute
               : strcmp(row->resource, "host") == 0  ? lo.levers.host
                                                     : -1;
  sim_kernel_class k;
  if (cur < 0 && sim_kernel_class_from_name(row->resource + 8, &k))
    cur = lo.levers.kernel[k];
  cur = cur > 0 ? cur : 1.0;
  if (!sim_levers_set_speedup(&lo.levers, row->resource, 2.0 * cur, error)) {
    *ok = FALSE;
    return FALSE;
  }
  lo.critical_path = FALSE;
  double scaled = 0;
  row->change = g_strdup_printf("%s x2 faster", row->resource);
  row->note = lever_share(w, row->resource, &scaled);
  row->applicable = scaled > 0;
  if (row->applicable) {
    *ok = study_run_point(w, base, &lo, &row->variant, error);
    row->utility_pct = T > 0 ? 100.0 * (T - (double)row->variant.step_time) / T : 0.0;
  } else {
    g_free(row->note);
    row->note = lever_nothing(row->resource);
    row->utility_pct = NAN;
  }
  return TRUE;
}

study_utility_result *study_utility_run(const et_workload *w, const topo_variant *base, const char *resources,
                                        const sim_replay_options *opt, GError **error)
{
  study_utility_result *u = g_new0(study_utility_result, 1);
  u->rows = g_array_new(FALSE, TRUE, sizeof(study_utility_row));
  g_array_set_clear_func(u->rows, row_clear);
  u->measured_starts = opt ? opt->measured_starts : FALSE;
  u->measured_step = sim_report_measured_end(w, u->measured_starts, NULL);
  u->calibration_error_pct = NAN;
  /* Only the baseline records its critical path: it explains the
   * utilities (the variants need their step times only). */
  if (!study_run_point_critical(w, base, opt, &u->baseline, &u->baseline_critical, error))
    goto fail;
  if (u->measured_step > 0)
    u->calibration_error_pct =
        100.0 * (double)(u->baseline.step_time - u->measured_step) / (double)u->measured_step;
  const double T = (double)u->baseline.step_time;

  char **list = g_strsplit(resources && *resources ? resources : "all", ",", -1);
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  for (char **p = list; *p; p++) {
    char *r = g_strstrip(g_strdup(*p));
    if (*r == '\0') {
      g_free(r);
      continue;
    }
    if (strcmp(r, "all") == 0) {
      static const char *const all[] = {"scale_out_bw", "scale_up_bw", "scale_up_domain", "ici_bw", "latency"};
      for (size_t i = 0; i < G_N_ELEMENTS(all); i++)
        g_ptr_array_add(names, g_strdup(all[i]));
      g_free(r);
    } else {
      g_ptr_array_add(names, r);
    }
  }
  g_strfreev(list);
  /* Drop repeats, keeping the first occurrence (the order the user gave). */
  for (guint i = 0; i < names->len; i++)
    for (guint j = i + 1; j < names->len;)
      if (strcmp(names->pdata[i], names->pdata[j]) == 0)
        g_ptr_array_remove_index(names, j);
      else
        j++;

  gboolean ok = TRUE;
  GPtrArray *yamls = g_ptr_array_new_with_free_func(g_free); /* per row: its variant's YAML, NULL for none */
  for (guint i = 0; i < names->len && ok; i++) {
    study_utility_row row = {.resource = g_strdup(names->pdata[i])};
    if (is_lever(row.resource)) {
      if (!lever_row(w, base, opt, T, &row, &ok, error)) {
        g_free(row.resource);
        break;
      }
      g_array_append_val(u->rows, row);
      g_ptr_array_add(yamls, NULL);
      continue;
    }
    char *change = NULL, *why = NULL;
    topo_variant *v = make_variant(base, row.resource, &change, &why, error);
    if (v == NULL && why == NULL) {
      g_free(row.resource);
      ok = FALSE;
      break;
    }
    row.change = change;
    v = drop_repeat(v, u->rows, yamls, &why);
    if (v == NULL) {
      row.note = why;
      row.applicable = FALSE;
      row.utility_pct = NAN;
    } else {
      row.applicable = TRUE;
      /* Only the notes this edit added (the base's fitting notes are
       * printed once, with the cluster). */
      const char *nv = topo_variant_notes(v), *nb = topo_variant_notes(base);
      if (g_str_has_prefix(nv, nb))
        nv += strlen(nb);
      while (*nv == ';' || *nv == ' ')
        nv++;
      if (*nv)
        row.note = g_strdup(nv);
      ok = study_run_point(w, v, opt, &row.variant, error);
      row.utility_pct = T > 0 ? 100.0 * (T - (double)row.variant.step_time) / T : 0.0;
      topo_variant_free(v);
    }
    g_array_append_val(u->rows, row);
  }
  g_ptr_array_free(names, TRUE);
  g_ptr_array_free(yamls, TRUE);
  if (!ok)
    goto fail;

  sim_time_ps steps[2];
  if (!study_bw_sensitivity(w, base, opt, steps, error))
    goto fail;
  u->bw_minus10 = steps[0];
  u->bw_plus10 = steps[1];
  return u;
fail:
  study_utility_result_free(u);
  return NULL;
}

gboolean study_bw_sensitivity(const et_workload *w, const topo_variant *v, const sim_replay_options *opt,
                              sim_time_ps step[2], GError **error)
{
  static const double factors[2] = { 0.9, 1.1 };
  for (int s = 0; s < 2; s++) {
    topo_variant *c = topo_variant_copy(v);
    study_summary sum;
    gboolean good = topo_variant_scale_bw(c, -1, factors[s], error) && study_run_point(w, c, opt, &sum, error);
    topo_variant_free(c);
    if (!good)
      return FALSE;
    step[s] = sum.step_time;
  }
  return TRUE;
}

static void fmt_ms(char *buf, size_t n, sim_time_ps t)
{
  g_snprintf(buf, n, "%.6f ms", (double)t / 1e9);
}

/* The critical path in four lines (issue 29 item 9, one screen for one
 * resource): what `simulate` prints first, the rank that made the path
 * wait longest at a collective and for data, and the bound sentence.
 * O(waiting ranks). */
static void print_path_brief(const sim_critical_path *p, const et_workload *w, FILE *out)
{
  const double T = (double)p->step_time;
  fprintf(out, "critical path: %.6f ms (the step time), %u nodes, ends on rank %d (--verbose: its categories, "
          "communications and ranks)\n", T / 1e9, p->segments->len, p->end_rank);
  if (p->stragglers->len == 0)
    fprintf(out, "  straggler waits: none (the path never waits at a collective for a late member)\n");
  else {
    const sim_crit_straggler *x = &g_array_index(p->stragglers, sim_crit_straggler, 0);
    fprintf(out, "  straggler waits: rank %d made the path wait %.6f ms (%.2f %% of the step) at %u collective%s%s\n",
            x->rank, (double)x->waited / 1e9, T > 0 ? 100.0 * (double)x->waited / T : 0.0, x->count,
            x->count == 1 ? "" : "s", p->stragglers->len > 1 ? " (the largest; more with --verbose)" : "");
  }
  if (p->dependencies->len > 0) {
    const sim_crit_straggler *x = &g_array_index(p->dependencies, sim_crit_straggler, 0);
    fprintf(out, "  dependency waits: the path waited %.6f ms (%.2f %% of the step) for data from rank %d at %u "
            "send/recv (its input, e.g. a pipeline stage's; not a straggler)\n", (double)x->waited / 1e9,
            T > 0 ? 100.0 * (double)x->waited / T : 0.0, x->rank, x->count);
  }
  char *b = sim_crit_bound_sentence(p, w);
  fprintf(out, "  bound: %s\n", b);
  g_free(b);
}

void study_utility_print(const study_utility_result *u, const et_workload *w, const topo_variant *base,
                         const char *cluster_path, gboolean verbose, FILE *out)
{
  char a[64], b[64];
  fprintf(out, "workload %s: %d ranks\n", w->source, w->n_ranks);
  if (w->scale) /* a scaled job: its layout and every assumption (chakra/et_scale.h) */
    fprintf(out, "%s\n", et_scale_summary(w->scale));
  fprintf(out, "cluster %s:", cluster_path);
  for (int d = 0; d < topo_variant_n_dims(base); d++) {
    char *bw = wisp_format_bandwidth(topo_variant_dim_bw(base, d));
    fprintf(out, "%s %s %s x %d, %s", d ? ";" : "", topo_variant_dim_name(base, d),
            topo_kind_name(topo_variant_dim_kind(base, d)), topo_variant_dim_size(base, d), bw);
    g_free(bw);
  }
  fputc('\n', out);
  if (topo_variant_notes(base)[0])
    fprintf(out, "cluster fitted to the workload: %s\n", topo_variant_notes(base));
  fmt_ms(a, sizeof a, u->baseline.step_time);
  fprintf(out, "simulated baseline step time T: %s\n", a);
  if (u->measured_step > 0) {
    fmt_ms(b, sizeof b, u->measured_step);
    fprintf(out, "measured step time:             %s (baseline error %+.2f %%%s)\n", b, u->calibration_error_pct,
            fabs(u->calibration_error_pct) > 10.0 ? "; above 10 %: treat utilities with caution" : "");
  } else if (w->scale) {
    fprintf(out, "measured step time:             none at this scale (the trace measured %d ranks; a scaled job has "
            "no measured step to compare with, so no baseline error)\n", et_scale_traced_ranks(w->scale));
  } else {
    fprintf(out, "measured step time:             unknown (the workload carries no measured step)\n");
  }
  sim_start_skew sk;
  if (sim_report_start_skew(w, &sk) && sk.start_skew > 0) {
    fprintf(out, "measured windows start up to %.6f ms apart (rank %d first, rank %d last) and end up to %.6f ms "
            "apart", (double)sk.start_skew / 1e9, sk.first_rank, sk.last_rank, (double)sk.end_skew / 1e9);
    if (u->measured_starts)
      fprintf(out, "; every run starts each rank at its measured start\n");
    else
      fprintf(out, "; every run starts the ranks together (--starts measured replays the measured starts); "
              "measured from the last start to the last end: %.6f ms\n", (double)sk.last_start_to_last_end / 1e9);
  }
  sim_report_print_unsimulated(w, out);
  char *comm = study_utility_comm_lines(u);
  if (comm)
    fputs(comm, out);
  g_free(comm);
  if (u->baseline_critical) {
    fputc('\n', out);
    if (verbose)
      sim_crit_print_summary(u->baseline_critical, w, out);
    else
      print_path_brief(u->baseline_critical, w, out);
  }
  /* The resource column fits the longest name (at least 16). */
  int wr = 16;
  for (guint i = 0; i < u->rows->len; i++)
    wr = MAX(wr, (int)strlen(g_array_index(u->rows, study_utility_row, i).resource));
  fprintf(out, "\n%-*s %14s %14s %10s  %s\n", wr, "resource", "T_ms", "T_2x_ms", "utility_%", "change");
  for (guint i = 0; i < u->rows->len; i++) {
    const study_utility_row *r = &g_array_index(u->rows, study_utility_row, i);
    if (!r->applicable) {
      fprintf(out, "%-*s %14.6f %14s %10s  not applicable: %s\n", wr, r->resource, (double)u->baseline.step_time / 1e9,
              "-", "-", r->note);
      continue;
    }
    fprintf(out, "%-*s %14.6f %14.6f %10.4f  %s%s%s%s\n", wr, r->resource, (double)u->baseline.step_time / 1e9,
            (double)r->variant.step_time / 1e9, r->utility_pct, r->change ? r->change : "",
            r->note ? "  [" : "", r->note ? r->note : "", r->note ? "]" : "");
  }
  /* Each applicable row's bound, once (the path's overall bound is the
   * critical path's "bound:" line above). */
  GPtrArray *why = study_utility_why(u, w, base);
  gboolean head = FALSE;
  for (guint i = 0; i < u->rows->len; i++) {
    if (why->pdata[i] == NULL)
      continue;
    if (!head)
      fprintf(out, "\nwhy, per row (from the baseline's critical path):\n");
    head = TRUE;
    fprintf(out, "  %-*s %s\n", wr, g_array_index(u->rows, study_utility_row, i).resource,
            (const char *)why->pdata[i]);
  }
  g_ptr_array_unref(why);
  double T = (double)u->baseline.step_time;
  fprintf(out, "\nsensitivity: all bandwidths -10 %%: T = %.6f ms (%+.3f %%); +10 %%: T = %.6f ms (%+.3f %%)\n",
          (double)u->bw_minus10 / 1e9, T > 0 ? 100.0 * ((double)u->bw_minus10 - T) / T : 0.0,
          (double)u->bw_plus10 / 1e9, T > 0 ? 100.0 * ((double)u->bw_plus10 - T) / T : 0.0);
  fprintf(out, "utility = (T - T_2x) / T x 100 %%; 'latency' halves every link latency; compute, compute:CLASS and "
          "host replay the workload with those nodes at half their duration.\n");
}

gboolean study_utility_write_json(const study_utility_result *u, const et_workload *w, const topo_variant *base,
                                  const char *cluster_path, const char *path, GError **error)
{
  wisp_afile *f = wisp_afile_open(path, error);
  if (f == NULL)
    return FALSE;
  wisp_json j;
  wisp_json_init(&j, wisp_afile_stream(f), 2);
  wisp_json_begin_object(&j, NULL);
  wisp_json_int(&j, "schema_version", STUDY_SCHEMA_VERSION);
  wisp_json_string(&j, "kind", "utility");
  wisp_json_string(&j, "wisp_version", PACKAGE_VERSION);
  wisp_json_begin_object(&j, "workload");
  wisp_json_string(&j, "source", w->source);
  wisp_json_int(&j, "n_ranks", w->n_ranks);
  char *wd = study_workload_digest(w);
  wisp_json_string(&j, "sha256", wd);
  g_free(wd);
  wisp_json_end_object(&j);
  wisp_json_begin_object(&j, "cluster");
  wisp_json_string(&j, "source", cluster_path);
  wisp_json_string(&j, "fitting", topo_variant_notes(base));
  wisp_json_begin_array(&j, "tiers");
  for (int d = 0; d < topo_variant_n_dims(base); d++) {
    wisp_json_begin_object(&j, NULL);
    wisp_json_string(&j, "name", topo_variant_dim_name(base, d));
    wisp_json_string(&j, "kind", topo_kind_name(topo_variant_dim_kind(base, d)));
    wisp_json_int(&j, "size", topo_variant_dim_size(base, d));
    wisp_json_uint(&j, "bandwidth_Bps", topo_variant_dim_bw(base, d));
    wisp_json_ns(&j, "latency_ns", topo_variant_dim_latency(base, d));
    wisp_json_end_object(&j);
  }
  wisp_json_end_array(&j);
  wisp_json_end_object(&j);
  wisp_json_ns(&j, "baseline_step_ns", u->baseline.step_time);
  if (u->measured_step > 0) {
    wisp_json_ns(&j, "measured_step_ns", u->measured_step);
    wisp_json_double(&j, "calibration_error_pct", u->calibration_error_pct, 4);
    /* studies.md W38: utilities of a baseline more than 10 % off the
     * measured step deserve caution. */
    wisp_json_bool(&j, "calibration_error_above_10pct", fabs(u->calibration_error_pct) > 10.0);
  } else {
    wisp_json_string(&j, "measured_step_ns", NULL);
    wisp_json_string(&j, "calibration_error_pct", NULL);
  }
  sim_report_json_unsimulated(&j, w);
  wisp_json_begin_object(&j, "baseline");
  wisp_json_ns(&j, "compute_ns", u->baseline.compute);
  wisp_json_ns(&j, "exposed_comm_ns", u->baseline.exposed_comm);
  wisp_json_ns(&j, "overlapped_comm_ns", u->baseline.overlapped_comm);
  wisp_json_ns(&j, "comm_transfer_ns", u->baseline.comm_transfer);
  wisp_json_ns(&j, "straggler_wait_ns", u->baseline.straggler_wait);
  wisp_json_ns(&j, "dependency_wait_ns", u->baseline.dependency_wait);
  wisp_json_ns(&j, "idle_ns", u->baseline.idle);
  wisp_json_end_object(&j);
  if (u->baseline_critical)
    sim_crit_write_json(&j, "baseline_critical_path", u->baseline_critical, w, FALSE);
  GPtrArray *why = study_utility_why(u, w, base);
  wisp_json_begin_array(&j, "resources");
  for (guint i = 0; i < u->rows->len; i++) {
    const study_utility_row *r = &g_array_index(u->rows, study_utility_row, i);
    wisp_json_begin_object(&j, NULL);
    wisp_json_string(&j, "resource", r->resource);
    wisp_json_bool(&j, "applicable", r->applicable);
    wisp_json_string(&j, "change", r->change);
    wisp_json_string(&j, "note", r->note);
    wisp_json_string(&j, "why", why->pdata[i]);
    if (r->applicable) {
      wisp_json_ns(&j, "step_time_2x_ns", r->variant.step_time);
      wisp_json_double(&j, "utility_pct", r->utility_pct, 6);
      wisp_json_ns(&j, "exposed_comm_2x_ns", r->variant.exposed_comm);
    } else {
      wisp_json_string(&j, "step_time_2x_ns", NULL);
      wisp_json_string(&j, "utility_pct", NULL);
    }
    wisp_json_end_object(&j);
  }
  wisp_json_end_array(&j);
  g_ptr_array_unref(why);
  wisp_json_begin_object(&j, "sensitivity");
  wisp_json_ns(&j, "bw_x0.9_step_ns", u->bw_minus10);
  wisp_json_ns(&j, "bw_x1.1_step_ns", u->bw_plus10);
  wisp_json_end_object(&j);
  wisp_json_end_object(&j);
  wisp_json_finish(&j);
  return wisp_afile_commit(f, error);
}
