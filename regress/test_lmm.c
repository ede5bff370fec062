/* test_lmm.c: the max-min solver (net/lmm.c).
 *
 * Every expected share is derived in a comment next to its check from the
 * progressive-filling rule: raise all unfixed rates together; the first
 * constraint to fill fixes its flows at capacity / (number of flows), and
 * the freed capacity goes to the rest.  The randomized tests compare the
 * incremental solver with the full solver and with an independent checker
 * of the max-min optimality conditions (feasible, and every variable has a
 * bottleneck: its bound, or a saturated constraint on which no variable has
 * a larger normalized rate).
 */
#include "config.h"

#include "net/lmm.h"

#include <math.h>

#define GBPS 1e9

static void assert_rel(double got, double want) {
  double tol = 1e-12 * fmax(fabs(want), 1.0);
  if (fabs(got - want) > tol)
    g_error("rate %.17g, expected %.17g", got, want);
}

static gboolean in_changed(const lmm_system *s, uint32_t v) {
  size_t n;
  const uint32_t *ch = lmm_changed(s, &n);
  for (size_t i = 0; i < n; i++)
    if (ch[i] == v) return TRUE;
  return FALSE;
}

/* Three flows on one 100 GB/s link: the link fills first at level
 * 100/3 GB/s, so each flow gets 33.33 GB/s. */
static void test_three_flows_one_link(void) {
  lmm_system *s = lmm_system_new();
  uint32_t l = lmm_constraint_new(s, 100 * GBPS);
  uint32_t v[3];
  for (int i = 0; i < 3; i++) {
    v[i] = lmm_variable_new(s, 1, 0, (uint64_t)i);
    lmm_expand(s, l, v[i], 1);
  }
  g_assert_cmpuint(lmm_solve(s), ==, 3); /* all three are new */
  for (int i = 0; i < 3; i++) {
    assert_rel(lmm_variable_rate(s, v[i]), 100 * GBPS / 3);
    g_assert_cmpuint(lmm_variable_user(s, v[i]), ==, (uint64_t)i);
  }
  assert_rel(lmm_constraint_usage(s, l), 100 * GBPS);
  /* Nothing modified: a second solve has nothing to report. */
  g_assert_cmpuint(lmm_solve(s), ==, 0);
  /* Removing one flow: the remaining two share 100 GB/s, 50 each. */
  lmm_variable_free(s, v[2]);
  g_assert_cmpuint(lmm_solve(s), ==, 2);
  assert_rel(lmm_variable_rate(s, v[0]), 50 * GBPS);
  assert_rel(lmm_variable_rate(s, v[1]), 50 * GBPS);
  /* Capacity halved to 50 GB/s: 25 each. */
  lmm_constraint_set_capacity(s, l, 50 * GBPS);
  g_assert_cmpuint(lmm_solve(s), ==, 2);
  assert_rel(lmm_variable_rate(s, v[0]), 25 * GBPS);
  lmm_system_free(s);
}

/* Classic two-link example.  L1 = 100 GB/s carries A, B, C; L2 = 20 GB/s
 * carries A only.  Levels: L1 would fill at 100/3 = 33.3, L2 at 20, so L2
 * fills first and fixes A = 20.  L1 then has 80 left for B and C: 40 each.
 * A's unused share of L1 (33.3 - 20) went to B and C.
 * Adding D on L2 only: L2 fills at 20/2 = 10 (A = D = 10), and L1 gives
 * B = C = (100 - 10) / 2 = 45. */
static void test_two_links(void) {
  lmm_system *s = lmm_system_new();
  uint32_t l1 = lmm_constraint_new(s, 100 * GBPS);
  uint32_t l2 = lmm_constraint_new(s, 20 * GBPS);
  uint32_t a = lmm_variable_new(s, 1, 0, 0);
  uint32_t b = lmm_variable_new(s, 1, 0, 1);
  uint32_t c = lmm_variable_new(s, 1, 0, 2);
  lmm_expand(s, l1, a, 1);
  lmm_expand(s, l2, a, 1);
  lmm_expand(s, l1, b, 1);
  lmm_expand(s, l1, c, 1);
  lmm_solve(s);
  assert_rel(lmm_variable_rate(s, a), 20 * GBPS);
  assert_rel(lmm_variable_rate(s, b), 40 * GBPS);
  assert_rel(lmm_variable_rate(s, c), 40 * GBPS);
  uint32_t d = lmm_variable_new(s, 1, 0, 3);
  lmm_expand(s, l2, d, 1);
  g_assert_cmpuint(lmm_solve(s), ==, 4);
  assert_rel(lmm_variable_rate(s, a), 10 * GBPS);
  assert_rel(lmm_variable_rate(s, d), 10 * GBPS);
  assert_rel(lmm_variable_rate(s, b), 45 * GBPS);
  assert_rel(lmm_variable_rate(s, c), 45 * GBPS);
  lmm_system_free(s);
}

/* Bounds: two flows on 100 GB/s, one bounded at 10 GB/s.  The bound is
 * reached at level 10 < 50, so that flow is fixed at 10 and the other takes
 * the remaining 90.  A bound above the fair share (80 > 50) is inactive:
 * 50 and 50.  A lone bounded variable without any constraint runs at its
 * bound. */
static void test_bounds(void) {
  lmm_system *s = lmm_system_new();
  uint32_t l = lmm_constraint_new(s, 100 * GBPS);
  uint32_t a = lmm_variable_new(s, 1, 10 * GBPS, 0);
  uint32_t b = lmm_variable_new(s, 1, 0, 1);
  lmm_expand(s, l, a, 1);
  lmm_expand(s, l, b, 1);
  lmm_solve(s);
  assert_rel(lmm_variable_rate(s, a), 10 * GBPS);
  assert_rel(lmm_variable_rate(s, b), 90 * GBPS);
  uint32_t c = lmm_variable_new(s, 1, 80 * GBPS, 2);
  uint32_t d = lmm_variable_new(s, 1, 80 * GBPS, 3);
  lmm_expand(s, l, c, 1);
  lmm_solve(s);
  /* a = 10 (bound), b and c share 90: 45 each (c's bound 80 inactive). */
  assert_rel(lmm_variable_rate(s, a), 10 * GBPS);
  assert_rel(lmm_variable_rate(s, b), 45 * GBPS);
  assert_rel(lmm_variable_rate(s, c), 45 * GBPS);
  assert_rel(lmm_variable_rate(s, d), 80 * GBPS);
  lmm_system_free(s);
}

/* Weights: rates are proportional to weights on a shared bottleneck.
 * Weights 1 and 3 on 100 GB/s: level t with t + 3t = 100, t = 25, so 25 and
 * 75.  Consumption 2 (a route crossing the link twice): a lone flow with
 * a = 2 on 100 GB/s fills it at rate 50. */
static void test_weights(void) {
  lmm_system *s = lmm_system_new();
  uint32_t l = lmm_constraint_new(s, 100 * GBPS);
  uint32_t a = lmm_variable_new(s, 1, 0, 0);
  uint32_t b = lmm_variable_new(s, 3, 0, 1);
  lmm_expand(s, l, a, 1);
  lmm_expand(s, l, b, 1);
  lmm_solve(s);
  assert_rel(lmm_variable_rate(s, a), 25 * GBPS);
  assert_rel(lmm_variable_rate(s, b), 75 * GBPS);
  uint32_t l2 = lmm_constraint_new(s, 100 * GBPS);
  uint32_t c = lmm_variable_new(s, 1, 0, 2);
  lmm_expand(s, l2, c, 2);
  lmm_solve(s);
  assert_rel(lmm_variable_rate(s, c), 50 * GBPS);
  lmm_system_free(s);
}

/* Component isolation: links X and Y carry disjoint flow sets {1,2} and
 * {3,4}.  Adding flow 5 on X re-solves X's component only: flows 1, 2, 5
 * (now 100/3 each) are reported, 3 and 4 (50 each) are neither reported
 * nor re-solved: the component has 3 variables and 1 constraint. */
static void test_component_isolation(void) {
  lmm_system *s = lmm_system_new();
  uint32_t x = lmm_constraint_new(s, 100 * GBPS);
  uint32_t y = lmm_constraint_new(s, 100 * GBPS);
  uint32_t v[5];
  for (int i = 0; i < 4; i++) {
    v[i] = lmm_variable_new(s, 1, 0, (uint64_t)i);
    lmm_expand(s, i < 2 ? x : y, v[i], 1);
  }
  lmm_solve(s);
  lmm_stats st0, st1;
  lmm_get_stats(s, &st0);
  v[4] = lmm_variable_new(s, 1, 0, 4);
  lmm_expand(s, x, v[4], 1);
  g_assert_cmpuint(lmm_solve(s), ==, 3);
  lmm_get_stats(s, &st1);
  g_assert_cmpuint(st1.component_vars - st0.component_vars, ==, 3);
  g_assert_cmpuint(st1.component_cnsts - st0.component_cnsts, ==, 1);
  g_assert_true(in_changed(s, v[0]) && in_changed(s, v[1]) && in_changed(s, v[4]));
  g_assert_false(in_changed(s, v[2]) || in_changed(s, v[3]));
  assert_rel(lmm_variable_rate(s, v[0]), 100 * GBPS / 3);
  assert_rel(lmm_variable_rate(s, v[2]), 50 * GBPS);
  /* The full-solve switch walks both components: 5 variables, 2
   * constraints, but reports nothing because nothing changed. */
  lmm_set_full_solve(s, TRUE);
  g_assert_cmpuint(lmm_solve(s), ==, 0);
  lmm_get_stats(s, &st0);
  g_assert_cmpuint(st0.component_vars - st1.component_vars, ==, 5);
  g_assert_cmpuint(st0.component_cnsts - st1.component_cnsts, ==, 2);
  lmm_system_free(s);
}

/* Feasibility: no constraint carries more than its capacity. */
static void check_feasible(const lmm_system *s, uint32_t n_cnsts) {
  for (uint32_t c = 0; c < n_cnsts; c++) {
    double cap = lmm_constraint_capacity(s, c);
    g_assert_cmpfloat(lmm_constraint_usage(s, c), <=, cap * (1 + 1e-9));
  }
}

typedef struct {
  double weight, bound;
  int n;
  uint32_t c[6];
} rnd_var;

/* Max-min optimality, checked independently of the solver with the
 * variable descriptions kept by the test: each variable is either at its
 * bound or crosses a saturated constraint on which no variable has a larger
 * normalized rate r/w. */
static void check_bottlenecks(const lmm_system *s, const rnd_var *desc, uint32_t n_desc) {
  for (uint32_t v = 0; v < n_desc; v++) {
    if (!lmm_variable_alive(s, v)) continue;
    double r = lmm_variable_rate(s, v);
    g_assert_cmpfloat(r, >, 0);
    if (desc[v].bound > 0) {
      g_assert_cmpfloat(r, <=, desc[v].bound * (1 + 1e-9));
      if (r >= desc[v].bound * (1 - 1e-9)) continue;
    }
    gboolean ok = FALSE;
    for (int i = 0; i < desc[v].n && !ok; i++) {
      uint32_t c = desc[v].c[i];
      double cap = lmm_constraint_capacity(s, c);
      if (lmm_constraint_usage(s, c) < cap * (1 - 1e-9)) continue;
      gboolean is_max = TRUE;
      for (uint32_t u = 0; u < n_desc && is_max; u++) {
        if (!lmm_variable_alive(s, u)) continue;
        for (int j = 0; j < desc[u].n; j++)
          if (desc[u].c[j] == c &&
              lmm_variable_rate(s, u) / desc[u].weight > r / desc[v].weight * (1 + 1e-9))
            is_max = FALSE;
      }
      ok = is_max;
    }
    if (!ok) g_error("variable %u (rate %g) has no bottleneck", v, r);
  }
}

/* Random seeded instances: hundreds of add/remove steps applied to two
 * systems, one incremental and one with the full-solve switch.  After each
 * step: identical rates (up to LMM_EPSILON), every unreported variable of
 * the incremental system kept its rate bit for bit, every reported one is
 * new or moved, and the optimality conditions hold. */
static void test_random_incremental_vs_full(void) {
  enum { N_CNSTS = 40, STEPS = 600, MAX_VARS = 4096 };
  for (guint32 seed = 1; seed <= 4; seed++) {
    GRand *rng = g_rand_new_with_seed(seed);
    lmm_system *inc = lmm_system_new();
    lmm_system *full = lmm_system_new();
    lmm_set_full_solve(full, TRUE);
    for (int c = 0; c < N_CNSTS; c++) {
      double cap = (double)g_rand_int_range(rng, 1, 101) * GBPS;
      lmm_constraint_new(inc, cap);
      lmm_constraint_new(full, cap);
    }
    rnd_var *desc = g_new0(rnd_var, MAX_VARS);
    double *before = g_new0(double, MAX_VARS);
    gboolean *was_alive = g_new0(gboolean, MAX_VARS);
    uint32_t n_desc = 0;
    uint64_t reported = 0;
    for (int step = 0; step < STEPS; step++) {
      uint32_t live = lmm_n_variables(inc);
      for (uint32_t v = 0; v < n_desc; v++) {
        was_alive[v] = lmm_variable_alive(inc, v);
        before[v] = was_alive[v] ? lmm_variable_rate(inc, v) : 0;
      }
      /* Several operations per step so that solves see batches. */
      int ops = g_rand_int_range(rng, 1, 4);
      for (int op = 0; op < ops; op++) {
        gboolean add = live < 5 || g_rand_int_range(rng, 0, 100) < 55;
        if (add) {
          rnd_var d = {.weight = (double)g_rand_int_range(rng, 1, 4),
                       .bound = g_rand_int_range(rng, 0, 4) == 0
                                    ? (double)g_rand_int_range(rng, 1, 50) * GBPS
                                    : 0,
                       .n = g_rand_int_range(rng, 1, 7)};
          /* Routes of 1 to 6 links (more than LMM_VAR_INLINE, so both
           * element layouts are used) stay local (constraints within a
           * window of 6) so that the system splits into components. */
          uint32_t base = (uint32_t)g_rand_int_range(rng, 0, N_CNSTS - 6);
          for (int i = 0; i < d.n; i++) {
            uint32_t c;
            gboolean dup;
            do {
              c = base + (uint32_t)g_rand_int_range(rng, 0, 6);
              dup = FALSE;
              for (int j = 0; j < i; j++) dup |= d.c[j] == c;
            } while (dup);
            d.c[i] = c;
          }
          uint32_t vi = lmm_variable_new(inc, d.weight, d.bound, 0);
          uint32_t vf = lmm_variable_new(full, d.weight, d.bound, 0);
          g_assert_cmpuint(vi, ==, vf); /* same operations, same ids */
          g_assert_cmpuint(vi, <, MAX_VARS);
          for (int i = 0; i < d.n; i++) {
            lmm_expand(inc, d.c[i], vi, 1);
            lmm_expand(full, d.c[i], vf, 1);
          }
          desc[vi] = d;
          if (vi >= n_desc) {
            for (uint32_t v = n_desc; v < vi; v++) was_alive[v] = FALSE;
            n_desc = vi + 1;
          }
          was_alive[vi] = FALSE;
          live++;
        } else {
          uint32_t v;
          do v = (uint32_t)g_rand_int_range(rng, 0, (gint32)n_desc);
          while (!lmm_variable_alive(inc, v));
          lmm_variable_free(inc, v);
          lmm_variable_free(full, v);
          live--;
        }
      }
      lmm_solve(inc);
      lmm_solve(full);
      size_t n_ch;
      const uint32_t *ch = lmm_changed(inc, &n_ch);
      reported += n_ch;
      gboolean *rep = g_new0(gboolean, n_desc);
      for (size_t i = 0; i < n_ch; i++) rep[ch[i]] = TRUE;
      for (uint32_t v = 0; v < n_desc; v++) {
        if (!lmm_variable_alive(inc, v)) {
          g_assert_false(rep[v]);
          continue;
        }
        double ri = lmm_variable_rate(inc, v), rf = lmm_variable_rate(full, v);
        if (fabs(ri - rf) > 1e-9 * fmax(ri, rf))
          g_error("seed %u step %d var %u: incremental %.17g, full %.17g", seed, step, v, ri, rf);
        if (!rep[v]) g_assert_true(was_alive[v] && ri == before[v]);
        else g_assert_true(!was_alive[v] || ri != before[v]);
      }
      g_free(rep);
      check_bottlenecks(inc, desc, n_desc);
      check_feasible(inc, N_CNSTS);
    }
    /* The incremental solver must have re-solved strictly less than the
     * full one (the instance has several components). */
    lmm_stats si, sf;
    lmm_get_stats(inc, &si);
    lmm_get_stats(full, &sf);
    g_assert_cmpuint(si.component_vars, <, sf.component_vars);
    g_assert_cmpuint(reported, >, 0);
    g_free(desc);
    g_free(before);
    g_free(was_alive);
    lmm_system_free(inc);
    lmm_system_free(full);
    g_rand_free(rng);
  }
}

/* ---- the filling order, bit for bit ------------------------------------ */

/* A reference implementation of the filling as lmm.h specifies it, with a
 * linear scan instead of a heap: every constraint with an unfixed variable
 * holds a key, initially its level R/W; the least (key, id) is taken; a
 * constraint whose variables are all fixed is dropped; one whose key is
 * older than its last change ("stale") gets its current level as key and
 * the choice is made again; otherwise it fills at t = max(key, previous t)
 * unless a bound level B/w is at most its key (ties: the bound first),
 * and fixes its unfixed variables in element order.  Fixing a variable at
 * rate r subtracts a * r and a * w from each of its constraints, in its own
 * element order.  Rates that moved by at most LMM_EPSILON (relative) keep
 * their old value.  The arithmetic is the solver's, operation for
 * operation, so any solver implementing the specification (whatever its
 * priority queue) must agree to the last bit; this pins the exact mode's
 * results across changes of the solver's data structures.  O(C) per step:
 * for small instances only. */
typedef struct {
  uint32_t var;
  double a, aw;
} ref_el;

typedef struct {
  double cap;
  GArray *el; /* ref_el, in the solver's element order (swap-remove) */
  double rem, aw, key;
  int n_active;
  gboolean queued, stale;
} ref_cnst;

typedef struct {
  double weight, bound, rate, new_rate;
  int n;
  uint32_t c[6];
  double a[6];
  gboolean alive, is_new, fixed;
} ref_var;

static double ref_level(const ref_cnst *k) { return k->rem > 0 ? k->rem / k->aw : 0.0; }

static void ref_fix(ref_cnst *cs, ref_var *vs, uint32_t v, double rate) {
  ref_var *x = &vs[v];
  x->fixed = TRUE;
  x->new_rate = rate;
  for (int i = 0; i < x->n; i++) {
    ref_cnst *k = &cs[x->c[i]];
    k->rem -= x->a[i] * rate;
    k->aw -= x->a[i] * x->weight;
    k->stale = TRUE;
    k->n_active--;
  }
}

static void ref_solve(ref_cnst *cs, uint32_t n_c, ref_var *vs, uint32_t n_v) {
  for (uint32_t c = 0; c < n_c; c++) {
    ref_cnst *k = &cs[c];
    k->rem = k->cap;
    k->aw = 0;
    for (guint j = 0; j < k->el->len; j++) k->aw += g_array_index(k->el, ref_el, j).aw;
    k->n_active = (int)k->el->len;
    k->queued = k->n_active > 0;
    k->stale = FALSE;
    k->key = ref_level(k);
  }
  for (uint32_t v = 0; v < n_v; v++) vs[v].fixed = FALSE;
  double t_prev = 0;
  for (;;) {
    uint32_t top = UINT32_MAX;
    for (;;) { /* the least (key, id), brought up to date */
      top = UINT32_MAX;
      for (uint32_t c = 0; c < n_c; c++)
        if (cs[c].queued && (top == UINT32_MAX || cs[c].key < cs[top].key)) top = c;
      if (top == UINT32_MAX) break;
      if (cs[top].n_active == 0) cs[top].queued = FALSE;
      else if (cs[top].stale) {
        cs[top].stale = FALSE;
        cs[top].key = ref_level(&cs[top]);
      } else break;
    }
    uint32_t bv = UINT32_MAX; /* the least unfixed (B/w, id) */
    for (uint32_t v = 0; v < n_v; v++)
      if (vs[v].alive && !vs[v].fixed && vs[v].bound > 0 &&
          (bv == UINT32_MAX || vs[v].bound / vs[v].weight < vs[bv].bound / vs[bv].weight))
        bv = v;
    double tb = bv != UINT32_MAX ? vs[bv].bound / vs[bv].weight : INFINITY;
    double tc = top != UINT32_MAX ? cs[top].key : INFINITY;
    if (isinf(tb) && isinf(tc)) break;
    if (tb <= tc) {
      ref_fix(cs, vs, bv, vs[bv].bound);
      continue;
    }
    cs[top].queued = FALSE;
    double t = tc > t_prev ? tc : t_prev;
    t_prev = t;
    for (guint j = 0; j < cs[top].el->len; j++) {
      uint32_t v = g_array_index(cs[top].el, ref_el, j).var;
      if (!vs[v].fixed) ref_fix(cs, vs, v, vs[v].weight * t);
    }
  }
  for (uint32_t v = 0; v < n_v; v++) {
    ref_var *x = &vs[v];
    if (!x->alive) continue;
    double r = x->fixed ? x->new_rate : INFINITY;
    double fa = fabs(r), fb = fabs(x->rate);
    if (x->is_new || (r != x->rate && fabs(r - x->rate) > LMM_EPSILON * (fa > fb ? fa : fb))) x->rate = r;
    x->is_new = FALSE;
  }
}

/* Random seeded instances, 300 steps of adds and removes each, with
 * non-integer weights, consumptions other than 1 on some variables, bounds
 * and routes of up to 6 constraints (more than the inline 4): after every
 * step the incremental solver, the full solver and the reference give
 * identical rates (==, not within a tolerance). */
static void test_filling_reference(void) {
  enum { N_CNSTS = 24, STEPS = 300, MAX_VARS = 1024 };
  static const double weights[] = {1, 1, 1, 0.1, 1.5, 3};
  static const double consumptions[] = {1, 1, 1, 0.5, 1.3, 2};
  for (guint32 seed = 1; seed <= 4; seed++) {
    GRand *rng = g_rand_new_with_seed(100 + seed);
    lmm_system *inc = lmm_system_new(), *full = lmm_system_new();
    lmm_set_full_solve(full, TRUE);
    ref_cnst cs[N_CNSTS];
    for (uint32_t c = 0; c < N_CNSTS; c++) {
      /* Capacities with common divisors make equal levels (ties by id)
       * frequent, as with identical links in a fabric. */
      double cap = (double)g_rand_int_range(rng, 1, 7) * 10 * GBPS;
      lmm_constraint_new(inc, cap);
      lmm_constraint_new(full, cap);
      cs[c] = (ref_cnst){.cap = cap, .el = g_array_new(FALSE, FALSE, sizeof(ref_el))};
    }
    ref_var *vs = g_new0(ref_var, MAX_VARS);
    uint32_t n_v = 0, live = 0;
    for (int step = 0; step < STEPS; step++) {
      int ops = g_rand_int_range(rng, 1, 5);
      for (int op = 0; op < ops; op++) {
        if (live < 8 || g_rand_int_range(rng, 0, 100) < 55) {
          ref_var d = {.weight = weights[g_rand_int_range(rng, 0, G_N_ELEMENTS(weights))],
                       .bound = g_rand_int_range(rng, 0, 5) == 0 ? (double)g_rand_int_range(rng, 1, 40) * GBPS : 0,
                       .n = g_rand_int_range(rng, 1, 7),
                       .alive = TRUE,
                       .is_new = TRUE};
          gboolean unit = g_rand_int_range(rng, 0, 4) != 0;
          for (int i = 0; i < d.n; i++) {
            gboolean dup;
            do {
              d.c[i] = (uint32_t)g_rand_int_range(rng, 0, N_CNSTS);
              dup = FALSE;
              for (int j = 0; j < i; j++) dup |= d.c[j] == d.c[i];
            } while (dup);
            d.a[i] = unit ? 1 : consumptions[g_rand_int_range(rng, 0, G_N_ELEMENTS(consumptions))];
          }
          uint32_t v = lmm_variable_new(inc, d.weight, d.bound, 0);
          g_assert_cmpuint(lmm_variable_new(full, d.weight, d.bound, 0), ==, v);
          g_assert_cmpuint(v, <, MAX_VARS);
          for (int i = 0; i < d.n; i++) {
            lmm_expand(inc, d.c[i], v, d.a[i]);
            lmm_expand(full, d.c[i], v, d.a[i]);
            ref_el e = {v, d.a[i], d.a[i] * d.weight};
            g_array_append_val(cs[d.c[i]].el, e);
          }
          vs[v] = d;
          if (v >= n_v) n_v = v + 1;
          live++;
        } else {
          uint32_t v;
          do v = (uint32_t)g_rand_int_range(rng, 0, (gint32)n_v);
          while (!vs[v].alive);
          lmm_variable_free(inc, v);
          lmm_variable_free(full, v);
          for (int i = 0; i < vs[v].n; i++) { /* the solver's swap-remove */
            GArray *el = cs[vs[v].c[i]].el;
            guint j = 0;
            while (g_array_index(el, ref_el, j).var != v) j++;
            g_array_index(el, ref_el, j) = g_array_index(el, ref_el, el->len - 1);
            g_array_set_size(el, el->len - 1);
          }
          vs[v].alive = FALSE;
          live--;
        }
      }
      lmm_solve(inc);
      lmm_solve(full);
      ref_solve(cs, N_CNSTS, vs, n_v);
      for (uint32_t v = 0; v < n_v; v++) {
        if (!vs[v].alive) continue;
        double ri = lmm_variable_rate(inc, v), rf = lmm_variable_rate(full, v);
        if (ri != vs[v].rate || rf != vs[v].rate)
          g_error("seed %u step %d var %u: incremental %.17g, full %.17g, reference %.17g", seed, step, v, ri, rf,
                  vs[v].rate);
      }
    }
    for (uint32_t c = 0; c < N_CNSTS; c++) g_array_free(cs[c].el, TRUE);
    g_free(vs);
    lmm_system_free(inc);
    lmm_system_free(full);
    g_rand_free(rng);
  }
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/lmm/three_flows_one_link", test_three_flows_one_link);
  g_test_add_func("/lmm/two_links", test_two_links);
  g_test_add_func("/lmm/bounds", test_bounds);
  g_test_add_func("/lmm/weights", test_weights);
  g_test_add_func("/lmm/component_isolation", test_component_isolation);
  g_test_add_func("/lmm/random_incremental_vs_full", test_random_incremental_vs_full);
  g_test_add_func("/lmm/filling_reference", test_filling_reference);
  return g_test_run();
}
