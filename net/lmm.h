/* lmm.h: a max-min fair sharing solver (linear max-min, "lmm").
 *
 * The model.  A set of constraints c (resources such as one direction of a
 * link) each have a capacity C_c > 0 in units per second (bytes/s for
 * links).  A set of variables v (flows) each have a weight w_v > 0 and an
 * optional upper bound B_v on their rate.  An element (c, v, a_cv) states
 * that variable v uses constraint c with consumption a_cv > 0 (1 for a flow
 * crossing a link once).  A rate vector r is feasible when
 *
 *     for every c:  sum_v a_cv * r_v <= C_c      and   r_v <= B_v.
 *
 * Weighted max-min fairness asks for the feasible r that maximizes the
 * smallest normalized rate r_v / w_v, then, with that one fixed, the next
 * smallest, and so on (lexicographic max-min of r_v / w_v).  That vector is
 * unique and is found by progressive filling:
 *
 *   Let every unfixed variable run at r_v = w_v * t and raise the common
 *   level t from 0.  Constraint c saturates at
 *       t_c = R_c / W_c,   R_c = C_c - sum_{fixed v} a_cv r_v,
 *                          W_c = sum_{unfixed v} a_cv w_v,
 *   and a bounded variable reaches its bound at t_v = B_v / w_v.  Take the
 *   smallest of these levels t*.  If it is a constraint, every unfixed
 *   variable on it is fixed at r_v = w_v t*; if it is a bound, that variable
 *   is fixed at B_v.  Subtract the fixed rates from R of every constraint
 *   the fixed variables use, drop their weights from W, and repeat until
 *   every variable is fixed.
 *
 *   Fixing variables at level t* never lowers another constraint's level:
 *   R_c / W_c >= t* before the step, and we remove a part whose ratio is
 *   exactly t*, so the remaining ratio can only grow.  The solver therefore
 *   keeps the constraint levels in a binary min-heap with lazily updated
 *   keys: fixing a variable only marks its constraints stale (O(1) per
 *   element), and a stale constraint is re-keyed (one O(log C) sift) when
 *   it reaches the top; an old key can only underestimate, so a fresh top
 *   is the true minimum.  A constraint whose variables were all fixed
 *   elsewhere ("dead"; two thirds of them in fabric-wide traffic) is not
 *   popped one by one: when dead items make up half the heap, they are
 *   dropped and the heap rebuilt, O(1) amortized per dead item.  One solve
 *   of a component with V variables, C constraints and E elements costs
 *   O(E + C log C) for the walk and the pops plus at most one re-key per
 *   element, O(E log C) in the worst case, plus O(B log B) for B bounded
 *   variables.
 *
 * Incremental re-solve.  Adding or removing a variable, or changing a
 * capacity, marks the constraints concerned as modified.  lmm_solve() walks
 * the bipartite constraint <-> variable graph from the modified constraints
 * and re-solves only the connected components reached (variables in other
 * components cannot change: the max-min solution of a disconnected system
 * is the union of the components' solutions).  It then lists the variables
 * whose rate changed by more than LMM_EPSILON (relative), so a caller can
 * reschedule only those.  A rate that moved by less than LMM_EPSILON keeps
 * its previous value, so "not reported" always means "bit-for-bit
 * unchanged".  lmm_set_full_solve() re-solves everything on every call, for
 * checking the incremental path.
 *
 * Limits.  A component that spans most of the system (e.g. every flow
 * crossing shared spine links) costs as much as a full solve: the
 * incremental walk helps only when traffic splits into independent groups.
 * Rates are doubles; sums over tens of thousands of variables per
 * constraint lose about log2(n) bits.  Memory comes from grow-only pools
 * (constraints, variables, elements, scratch), so a steady-state solve does
 * not allocate.  Ids of freed variables are reused.  Not thread-safe; one
 * system per simulation.
 */
#ifndef WISP_LMM_H
#define WISP_LMM_H

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

/* Relative tolerance: rates closer than this (relative to the larger) are
 * considered equal, and a constraint whose remaining capacity is below
 * this fraction of its capacity counts as saturated. */
#define LMM_EPSILON 1e-9

#define LMM_NONE UINT32_MAX

typedef struct lmm_system lmm_system;

lmm_system *lmm_system_new(void);
void lmm_system_free(lmm_system *s);

/* TRUE: every lmm_solve() re-solves the whole system (debug switch). */
void lmm_set_full_solve(lmm_system *s, gboolean full);

/* A constraint with capacity > 0 (units/s).  Constraints live until the
 * system is freed.  O(1) amortized. */
uint32_t lmm_constraint_new(lmm_system *s, double capacity);
void lmm_constraint_set_capacity(lmm_system *s, uint32_t c, double capacity);
double lmm_constraint_capacity(const lmm_system *s, uint32_t c);
/* sum_v a_cv * r_v over the current rates; O(variables on c). */
double lmm_constraint_usage(const lmm_system *s, uint32_t c);
uint32_t lmm_constraint_n_variables(const lmm_system *s, uint32_t c);

/* A variable with weight > 0 and bound (> 0, or <= 0 for none).  `user` is
 * an opaque tag returned by lmm_variable_user().  A variable must get at
 * least one element or a bound before the next solve.  O(1) amortized. */
uint32_t lmm_variable_new(lmm_system *s, double weight, double bound, uint64_t user);
/* Variable v uses constraint c with consumption a > 0.  O(1). */
void lmm_expand(lmm_system *s, uint32_t c, uint32_t v, double consumption);
/* Removes v and its elements; its constraints are marked modified.
 * O(elements of v). */
void lmm_variable_free(lmm_system *s, uint32_t v);
/* Rate from the last solve (0 before the variable's first solve). */
double lmm_variable_rate(const lmm_system *s, uint32_t v);
uint64_t lmm_variable_user(const lmm_system *s, uint32_t v);
gboolean lmm_variable_alive(const lmm_system *s, uint32_t v);

/* Re-solves the components touched since the last solve and returns how
 * many variables' rates changed; lmm_changed() lists them (valid until the
 * next call that modifies the system).  Newly created variables are always
 * listed. */
size_t lmm_solve(lmm_system *s);
const uint32_t *lmm_changed(const lmm_system *s, size_t *n);

typedef struct {
  uint64_t solves;          /* lmm_solve calls that had work to do */
  uint64_t component_vars;  /* sum over solves of variables re-solved */
  uint64_t component_cnsts; /* sum over solves of constraints re-solved */
  uint64_t changed;         /* sum over solves of variables reported */
} lmm_stats;

void lmm_get_stats(const lmm_system *s, lmm_stats *out);
uint32_t lmm_n_variables(const lmm_system *s); /* live variables */

G_END_DECLS
#endif
