/* lmm.c: progressive-filling max-min solver with component-wise incremental
 * re-solve.  The math and the costs are derived in lmm.h.
 *
 * Storage: grow-only pools indexed by 32-bit ids.  Each constraint keeps a
 * contiguous array of its elements and each variable a small array of its
 * own (inline up to LMM_VAR_INLINE links); every element records its index
 * in the other side's array, so removing a variable is O(its elements)
 * (swap-remove on each constraint).  Per-variable data is split by access
 * frequency (marks, hot record, cold record; see lmm_var) because a solve
 * is bound by cache misses, not arithmetic.  Freed variables go to a free
 * list and keep their spilled element arrays for the next variable that
 * reuses the id.  The solver's scratch arrays (component lists, heap, bound
 * list, changed list) are grow-only too, so a steady-state solve performs
 * no allocation.  Visited marks use an epoch stamp, so they never need
 * clearing.
 */
#include "config.h"

#include "net/lmm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Element as seen from a constraint: the variable, the element's slot in
 * the variable's array, the consumption a and the product a * w. */
typedef struct {
  uint32_t var, vslot;
  double a, aw;
} lmm_celem;

/* Element as seen from a variable (the consumption lives on the
 * constraint side, in lmm_celem). */
typedef struct {
  uint32_t cnst, cslot;
} lmm_velem;

typedef struct {
  double capacity;
  double rem;         /* solve scratch: capacity minus fixed usage */
  double aw;          /* solve scratch: sum of a*w over unfixed variables */
  lmm_celem *el;
  uint32_t n_el, cap_el;
  uint32_t n_active;  /* solve scratch: unfixed elements */
  uint32_t stamp;     /* component walk mark */
  uint8_t stale;      /* solve scratch: heap key older than rem / aw */
  uint8_t in_heap;    /* solve scratch: has an item in the level heap */
  uint8_t modified;
} lmm_cnst;

/* A variable is split three ways: its walk mark and fixed flag live in
 * compact parallel arrays (checked for every element the walk and the
 * filling visit, so they should stay in cache); the record the solver
 * reads once per variable fits one cache line; rarely used fields are in a
 * cold record.  Routes of up to LMM_VAR_INLINE links keep their elements
 * inside the hot record; longer ones spill to a heap array kept for reuse. */
#define LMM_VAR_INLINE 4
#define LMM_VAR_MAX_ELEMS 255

typedef struct {
  uint8_t n_el, cap_el;  /* cap_el > LMM_VAR_INLINE: elements in u.el */
  uint8_t alive, is_new;
  uint8_t unit;          /* every consumption is 1 (a flow crossing links) */
  double weight;
  double new_rate;       /* solve scratch */
  double rate;
  union {
    lmm_velem inl[LMM_VAR_INLINE];
    lmm_velem *el;
  } u;
} lmm_var;

typedef struct {
  double bound;          /* <= 0: none */
  uint64_t user;
  uint32_t next_free;
} lmm_var_cold;

static inline lmm_velem *var_el(lmm_var *x) {
  return x->cap_el > LMM_VAR_INLINE ? x->u.el : x->u.inl;
}

typedef struct {
  double key;
  uint32_t id;
} lmm_heap_item;

typedef struct {
  double key;
  uint32_t var;
} lmm_bound_item;

/* Grow-only array helper: makes room for `need` items of size `sz`. */
#define LMM_RESERVE(ptr, cap, need)                                         \
  do {                                                                      \
    if ((need) > (cap)) {                                                   \
      size_t lmm_nc_ = (cap) ? (size_t)(cap) * 2 : 16;                      \
      while (lmm_nc_ < (size_t)(need)) lmm_nc_ *= 2;                        \
      (ptr) = g_realloc_n((ptr), lmm_nc_, sizeof *(ptr));                   \
      (cap) = lmm_nc_;                                                      \
    }                                                                       \
  } while (0)

struct lmm_system {
  lmm_cnst *cnsts;
  size_t n_cnsts, cap_cnsts;
  lmm_var *vars;
  lmm_var_cold *vcold;
  uint32_t *vstamp;      /* walk mark per variable */
  uint8_t *vfixed;       /* solve scratch: fixed flag per variable */
  size_t n_vars, cap_vars;
  uint32_t var_free;
  uint32_t n_alive;
  uint32_t n_bounded;  /* live variables with a bound */

  gboolean full;
  uint32_t epoch;

  /* Pending modifications. */
  uint32_t *mod_cnsts;
  size_t n_mod_cnsts, cap_mod_cnsts;
  uint32_t *new_vars;
  size_t n_new_vars, cap_new_vars;

  /* Solve scratch. */
  uint32_t *comp_c;
  size_t n_comp_c, cap_comp_c;
  uint32_t *comp_v;
  size_t n_comp_v, cap_comp_v;
  lmm_heap_item *heap;
  size_t n_heap, cap_heap;
  size_t n_dead;         /* heap items whose constraint has no unfixed variable */
  lmm_bound_item *bounds;
  size_t n_bounds, cap_bounds;
  uint32_t *changed;
  size_t n_changed, cap_changed;

  lmm_stats stats;
};

lmm_system *lmm_system_new(void) {
  lmm_system *s = g_new0(lmm_system, 1);
  s->var_free = LMM_NONE;
  s->epoch = 1;
  return s;
}

void lmm_system_free(lmm_system *s) {
  if (!s) return;
  for (size_t i = 0; i < s->n_cnsts; i++) g_free(s->cnsts[i].el);
  for (size_t i = 0; i < s->n_vars; i++)
    if (s->vars[i].cap_el > LMM_VAR_INLINE) g_free(s->vars[i].u.el);
  g_free(s->cnsts);
  g_free(s->vars);
  g_free(s->vcold);
  g_free(s->vstamp);
  g_free(s->vfixed);
  g_free(s->mod_cnsts);
  g_free(s->new_vars);
  g_free(s->comp_c);
  g_free(s->comp_v);
  g_free(s->heap);
  g_free(s->bounds);
  g_free(s->changed);
  g_free(s);
}

void lmm_set_full_solve(lmm_system *s, gboolean full) { s->full = full; }

static void mark_modified(lmm_system *s, uint32_t c) {
  if (s->cnsts[c].modified) return;
  s->cnsts[c].modified = TRUE;
  LMM_RESERVE(s->mod_cnsts, s->cap_mod_cnsts, s->n_mod_cnsts + 1);
  s->mod_cnsts[s->n_mod_cnsts++] = c;
}

uint32_t lmm_constraint_new(lmm_system *s, double capacity) {
  g_assert(capacity > 0 && isfinite(capacity));
  g_assert(s->n_cnsts < LMM_NONE - 1);
  LMM_RESERVE(s->cnsts, s->cap_cnsts, s->n_cnsts + 1);
  uint32_t c = (uint32_t)s->n_cnsts++;
  lmm_cnst *k = &s->cnsts[c];
  memset(k, 0, sizeof *k);
  k->capacity = capacity;
  return c;
}

void lmm_constraint_set_capacity(lmm_system *s, uint32_t c, double capacity) {
  g_assert(c < s->n_cnsts && capacity > 0 && isfinite(capacity));
  s->cnsts[c].capacity = capacity;
  mark_modified(s, c);
}

double lmm_constraint_capacity(const lmm_system *s, uint32_t c) {
  g_assert(c < s->n_cnsts);
  return s->cnsts[c].capacity;
}

double lmm_constraint_usage(const lmm_system *s, uint32_t c) {
  g_assert(c < s->n_cnsts);
  const lmm_cnst *k = &s->cnsts[c];
  double u = 0;
  for (uint32_t i = 0; i < k->n_el; i++) u += k->el[i].a * s->vars[k->el[i].var].rate;
  return u;
}

uint32_t lmm_constraint_n_variables(const lmm_system *s, uint32_t c) {
  g_assert(c < s->n_cnsts);
  return s->cnsts[c].n_el;
}

uint32_t lmm_variable_new(lmm_system *s, double weight, double bound, uint64_t user) {
  g_assert(weight > 0 && isfinite(weight));
  uint32_t v;
  if (s->var_free != LMM_NONE) {
    v = s->var_free;
    s->var_free = s->vcold[v].next_free;
  } else {
    g_assert(s->n_vars < LMM_NONE - 1);
    if (s->n_vars == s->cap_vars) {
      s->cap_vars = s->cap_vars ? s->cap_vars * 2 : 16;
      s->vars = g_realloc_n(s->vars, s->cap_vars, sizeof *s->vars);
      s->vcold = g_realloc_n(s->vcold, s->cap_vars, sizeof *s->vcold);
      s->vstamp = g_realloc_n(s->vstamp, s->cap_vars, sizeof *s->vstamp);
      s->vfixed = g_realloc_n(s->vfixed, s->cap_vars, sizeof *s->vfixed);
    }
    v = (uint32_t)s->n_vars++;
    s->vstamp[v] = 0;
    s->vars[v].cap_el = LMM_VAR_INLINE;
    G_STATIC_ASSERT(sizeof(lmm_var) <= 64);
  }
  lmm_var *x = &s->vars[v];
  lmm_var_cold *xc = &s->vcold[v];
  x->weight = weight;
  x->new_rate = 0;
  x->n_el = 0;
  x->alive = TRUE;
  x->rate = 0;
  x->is_new = TRUE;
  x->unit = TRUE;
  s->vfixed[v] = FALSE;
  xc->bound = bound > 0 ? bound : 0;
  s->n_bounded += bound > 0;
  xc->user = user;
  s->n_alive++;
  LMM_RESERVE(s->new_vars, s->cap_new_vars, s->n_new_vars + 1);
  s->new_vars[s->n_new_vars++] = v;
  return v;
}

void lmm_expand(lmm_system *s, uint32_t c, uint32_t v, double consumption) {
  g_assert(c < s->n_cnsts && v < s->n_vars && s->vars[v].alive);
  g_assert(consumption > 0 && isfinite(consumption));
  lmm_cnst *k = &s->cnsts[c];
  lmm_var *x = &s->vars[v];
  g_assert(k->n_el < LMM_NONE - 1 && x->n_el < LMM_VAR_MAX_ELEMS);
  LMM_RESERVE(k->el, k->cap_el, k->n_el + 1);
  if (x->n_el == x->cap_el) { /* spill (first time) or grow the heap array */
    size_t cap = x->cap_el * 2u > LMM_VAR_MAX_ELEMS ? LMM_VAR_MAX_ELEMS : x->cap_el * 2u;
    if (x->cap_el == LMM_VAR_INLINE) {
      lmm_velem *h = g_new(lmm_velem, cap);
      memcpy(h, x->u.inl, sizeof x->u.inl);
      x->u.el = h;
    } else {
      x->u.el = g_realloc_n(x->u.el, cap, sizeof *x->u.el);
    }
    x->cap_el = (uint8_t)cap;
  }
  k->el[k->n_el] = (lmm_celem){v, x->n_el, consumption, consumption * x->weight};
  if (consumption != 1.0) x->unit = FALSE;
  var_el(x)[x->n_el] = (lmm_velem){c, k->n_el};
  k->n_el++;
  x->n_el++;
  mark_modified(s, c);
}

void lmm_variable_free(lmm_system *s, uint32_t v) {
  g_assert(v < s->n_vars && s->vars[v].alive);
  lmm_var *x = &s->vars[v];
  const lmm_velem *xe = var_el(x);
  for (uint32_t i = 0; i < x->n_el; i++) {
    lmm_cnst *k = &s->cnsts[xe[i].cnst];
    uint32_t slot = xe[i].cslot;
    mark_modified(s, xe[i].cnst);
    uint32_t last = --k->n_el;
    if (slot != last) { /* move the last element into the hole */
      k->el[slot] = k->el[last];
      var_el(&s->vars[k->el[slot].var])[k->el[slot].vslot].cslot = slot;
    }
  }
  x->n_el = 0;
  s->vcold[v].next_free = s->var_free;
  s->n_bounded -= s->vcold[v].bound > 0;
  x->alive = FALSE;
  s->var_free = v;
  s->n_alive--;
}

double lmm_variable_rate(const lmm_system *s, uint32_t v) {
  g_assert(v < s->n_vars && s->vars[v].alive);
  return s->vars[v].rate;
}

uint64_t lmm_variable_user(const lmm_system *s, uint32_t v) {
  g_assert(v < s->n_vars && s->vars[v].alive);
  return s->vcold[v].user;
}

gboolean lmm_variable_alive(const lmm_system *s, uint32_t v) {
  return v < s->n_vars && s->vars[v].alive;
}

uint32_t lmm_n_variables(const lmm_system *s) { return s->n_alive; }

void lmm_get_stats(const lmm_system *s, lmm_stats *out) { *out = s->stats; }

const uint32_t *lmm_changed(const lmm_system *s, size_t *n) {
  *n = s->n_changed;
  return s->changed;
}

/* ---- component walk ---------------------------------------------------- */

/* comp_c and comp_v have room for every constraint and variable (reserved
 * once per walk), so adding one is a store. */
static inline void add_cnst(lmm_system *s, uint32_t c) {
  if (s->cnsts[c].stamp == s->epoch) return;
  s->cnsts[c].stamp = s->epoch;
  s->comp_c[s->n_comp_c++] = c;
}

static inline void add_var(lmm_system *s, uint32_t v) {
  if (s->vstamp[v] == s->epoch) return;
  s->vstamp[v] = s->epoch;
  s->vfixed[v] = FALSE;
  lmm_var *x = &s->vars[v];
  s->comp_v[s->n_comp_v++] = v;
  const lmm_velem *xe = var_el(x);
  for (uint32_t i = 0; i < x->n_el; i++) add_cnst(s, xe[i].cnst);
}

/* Breadth-first walk: comp_c doubles as the queue.  O(component elements).
 * The walk also initializes the filling state of every constraint it
 * dequeues (remaining capacity, active weight and count), saving a pass. */
static void collect_component(lmm_system *s) {
  if (++s->epoch == 0) { /* wrapped: reset every mark once per 2^32 solves */
    for (size_t i = 0; i < s->n_cnsts; i++) s->cnsts[i].stamp = 0;
    for (size_t i = 0; i < s->n_vars; i++) s->vstamp[i] = 0;
    s->epoch = 1;
  }
  s->n_comp_c = s->n_comp_v = 0;
  LMM_RESERVE(s->comp_c, s->cap_comp_c, s->n_cnsts);
  LMM_RESERVE(s->comp_v, s->cap_comp_v, s->n_vars);
  if (s->full) {
    for (uint32_t c = 0; c < s->n_cnsts; c++)
      if (s->cnsts[c].n_el) add_cnst(s, c);
    for (uint32_t v = 0; v < s->n_vars; v++)
      if (s->vars[v].alive) add_var(s, v);
  } else {
    for (size_t i = 0; i < s->n_mod_cnsts; i++) add_cnst(s, s->mod_cnsts[i]);
    for (size_t i = 0; i < s->n_new_vars; i++)
      if (s->vars[s->new_vars[i]].alive) add_var(s, s->new_vars[i]);
  }
  for (size_t i = 0; i < s->n_comp_c; i++) {
    lmm_cnst *k = &s->cnsts[s->comp_c[i]];
    double aw = 0;
    for (uint32_t j = 0; j < k->n_el; j++) {
      uint32_t v = k->el[j].var;
      aw += k->el[j].aw;
      if (s->vstamp[v] != s->epoch) add_var(s, v);
    }
    k->rem = k->capacity;
    k->aw = aw;
    k->n_active = k->n_el;
  }
  for (size_t i = 0; i < s->n_mod_cnsts; i++) s->cnsts[s->mod_cnsts[i]].modified = FALSE;
  s->n_mod_cnsts = 0;
  s->n_new_vars = 0;
}

/* ---- heap of constraint levels, ordered by (level, id) ----------------- */

static inline gboolean heap_less(const lmm_heap_item *a, const lmm_heap_item *b) {
  return a->key < b->key || (a->key == b->key && a->id < b->id);
}

static void heap_down(lmm_system *s, size_t i) {
  lmm_heap_item it = s->heap[i];
  size_t n = s->n_heap;
  for (;;) {
    size_t l = 2 * i + 1;
    if (l >= n) break;
    size_t m = l;
    if (l + 1 < n && heap_less(&s->heap[l + 1], &s->heap[l])) m = l + 1;
    if (!heap_less(&s->heap[m], &it)) break;
    s->heap[i] = s->heap[m];
    i = m;
  }
  s->heap[i] = it;
}

/* Removes the top.  The filling only ever removes the minimum, so items
 * need no back-pointers and a sift moves 16-byte items within the heap
 * array only. */
static void heap_pop(lmm_system *s) {
  s->cnsts[s->heap[0].id].in_heap = FALSE;
  size_t last = --s->n_heap;
  if (last == 0) return;
  s->heap[0] = s->heap[last];
  heap_down(s, 0);
}

static inline double cnst_level(const lmm_cnst *k) {
  return k->rem > 0 ? k->rem / k->aw : 0.0;
}

static void fix_var(lmm_system *s, uint32_t v, double rate) {
  lmm_var *x = &s->vars[v];
  s->vfixed[v] = TRUE;
  x->new_rate = rate;
  const lmm_velem *xe = var_el(x);
  /* With unit consumptions a * rate is rate and a * w is w exactly, so the
   * constraint's element (one more cache miss per element) is not read. */
  double w = x->weight;
  for (uint32_t i = 0; i < x->n_el; i++) {
    lmm_cnst *k = &s->cnsts[xe[i].cnst];
    if (x->unit) {
      k->rem -= rate;
      k->aw -= w;
    } else {
      const lmm_celem *ce = &k->el[xe[i].cslot];
      k->rem -= ce->a * rate;
      k->aw -= ce->aw;
    }
    k->stale = TRUE; /* re-keyed lazily, when it reaches the top */
    if (--k->n_active == 0 && k->in_heap) s->n_dead++;
  }
}

static int bound_cmp(const void *pa, const void *pb) {
  const lmm_bound_item *a = pa, *b = pb;
  if (a->key != b->key) return a->key < b->key ? -1 : 1;
  return a->var < b->var ? -1 : a->var > b->var;
}

/* Drops the items of dead constraints (no unfixed variable left) and
 * re-heapifies, O(heap).  Run when they make up half the heap, so the
 * cost is O(1) amortized per dead item, against O(log C) for popping each
 * one when it reaches the top.  The live items and their keys are
 * unchanged, so the filling pops exactly what it would have popped. */
static void heap_compact(lmm_system *s) {
  size_t j = 0;
  for (size_t i = 0; i < s->n_heap; i++) {
    lmm_cnst *k = &s->cnsts[s->heap[i].id];
    if (k->n_active) s->heap[j++] = s->heap[i];
    else k->in_heap = FALSE;
  }
  s->n_heap = j;
  s->n_dead = 0;
  for (size_t i = s->n_heap / 2; i-- > 0;) heap_down(s, i);
}

/* Progressive filling over the collected component(s); see lmm.h. */
static void fill(lmm_system *s) {
  s->n_heap = 0;
  s->n_dead = 0;
  s->n_bounds = 0;
  LMM_RESERVE(s->heap, s->cap_heap, s->n_comp_c);
  LMM_RESERVE(s->bounds, s->cap_bounds, s->n_comp_v);
  /* Flows of the network tiers have no bounds: skip the pass then. */
  for (size_t i = 0; s->n_bounded && i < s->n_comp_v; i++) {
    double bound = s->vcold[s->comp_v[i]].bound;
    if (bound > 0)
      s->bounds[s->n_bounds++] = (lmm_bound_item){bound / s->vars[s->comp_v[i]].weight, s->comp_v[i]};
  }
  for (size_t i = 0; i < s->n_comp_c; i++) {
    uint32_t c = s->comp_c[i];
    lmm_cnst *k = &s->cnsts[c];
    k->stale = FALSE;
    k->in_heap = k->n_active > 0;
    if (k->n_active) s->heap[s->n_heap++] = (lmm_heap_item){cnst_level(k), c};
  }
  for (size_t i = s->n_heap / 2; i-- > 0;) heap_down(s, i);
  if (s->n_bounds > 1) qsort(s->bounds, s->n_bounds, sizeof *s->bounds, bound_cmp);

  size_t bi = 0;
  double t_prev = 0;
  for (;;) {
    /* Bring the top of the heap up to date.  A stale key never exceeds the
     * constraint's true level (levels only grow), so once the top is fresh
     * it is the true minimum.  This costs one sift per re-keyed constraint
     * instead of one per fixed element. */
    if (2 * s->n_dead > s->n_heap) heap_compact(s);
    while (s->n_heap) {
      lmm_cnst *k = &s->cnsts[s->heap[0].id];
      if (k->n_active == 0) {
        heap_pop(s);
        s->n_dead--;
        continue;
      }
      if (!k->stale) break;
      k->stale = FALSE;
      s->heap[0].key = cnst_level(k);
      heap_down(s, 0);
    }
    while (bi < s->n_bounds && s->vfixed[s->bounds[bi].var]) bi++;
    double tb = bi < s->n_bounds ? s->bounds[bi].key : INFINITY;
    double tc = s->n_heap ? s->heap[0].key : INFINITY;
    if (isinf(tb) && isinf(tc)) break;
    if (tb <= tc) {
      uint32_t v = s->bounds[bi++].var;
      fix_var(s, v, s->vcold[v].bound);
      continue;
    }
    uint32_t c = s->heap[0].id;
    heap_pop(s);
    double t = tc > t_prev ? tc : t_prev; /* levels never decrease */
    t_prev = t;
    const lmm_cnst *k = &s->cnsts[c];
    for (uint32_t j = 0; j < k->n_el; j++) {
      uint32_t v = k->el[j].var;
      if (!s->vfixed[v]) fix_var(s, v, s->vars[v].weight * t);
    }
  }
}

static inline gboolean rate_differs(double a, double b) {
  if (a == b) return FALSE;
  double fa = fabs(a), fb = fabs(b);
  return fabs(a - b) > LMM_EPSILON * (fa > fb ? fa : fb);
}

size_t lmm_solve(lmm_system *s) {
  s->n_changed = 0;
  collect_component(s);
  if (s->n_comp_v == 0) return 0;
  fill(s);
  LMM_RESERVE(s->changed, s->cap_changed, s->n_comp_v);
  for (size_t i = 0; i < s->n_comp_v; i++) {
    uint32_t v = s->comp_v[i];
    lmm_var *x = &s->vars[v];
    /* Neither an element nor a bound: nothing limits the variable. */
    double r = s->vfixed[v] ? x->new_rate : INFINITY;
    if (x->is_new || rate_differs(r, x->rate)) {
      x->rate = r;
      x->is_new = FALSE;
      s->changed[s->n_changed++] = v;
    }
  }
  s->stats.solves++;
  s->stats.component_vars += s->n_comp_v;
  s->stats.component_cnsts += s->n_comp_c;
  s->stats.changed += s->n_changed;
  return s->n_changed;
}
