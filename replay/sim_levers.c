/* sim_levers.c: compute, host and straggler levers (sim_levers.h) and the
 * kernel classes.  Everything here is O(1) per node except the classifier,
 * which is O(rules x name length) per call; the replay classifies each
 * graph's kernels once per run. */
#include "config.h"
#include "replay/sim_levers.h"
#include "common/wisp_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const class_names[SIM_KERNEL_CLASS_COUNT] = {"gemm", "elementwise", "comm_adjacent"};

const char *sim_kernel_class_name(sim_kernel_class c)
{
  return c < SIM_KERNEL_CLASS_COUNT ? class_names[c] : "unknown";
}

gboolean sim_kernel_class_from_name(const char *s, sim_kernel_class *out)
{
  for (int c = 0; c < SIM_KERNEL_CLASS_COUNT; c++)
    if (g_strcmp0(s, class_names[c]) == 0) {
      *out = (sim_kernel_class)c;
      return TRUE;
    }
  return FALSE;
}

/* The rules (doc/studies.md "Kernel classes" lists them; keep both in
 * step).  A name matches a class when it contains one of the class's
 * substrings, compared case-insensitively.  Communication-adjacent rules
 * come first so that e.g. "all_gather_copy_in" is not taken for a copy,
 * then GEMM/attention; every other kernel is memory-bound/elementwise.
 * cuDNN's convolution kernels carry "scudnn" (e.g.
 * cudnn_infer_ampere_scudnn_128x64_relu_...) or "convolve" with "gemm";
 * its batch-norm and layout kernels (cudnn::bn_*, nchwToNhwc) are
 * elementwise, so "cudnn" alone is not a rule. */
static const char *const comm_adjacent_rules[] = {
  "nccl", "rccl", "msccl", "all_gather", "allgather", "reduce_scatter", "reducescatter", "all_reduce",
  "allreduce", "all_to_all", "alltoall", "sendrecv", "cross_device", "copy_in", "copy_out", "chunk_cat",
  "split_with_sizes_copy", "moe_permute", "moe_unpermute", NULL};
static const char *const gemm_rules[] = {
  "gemm", "matmul", "cublas", "cutlass", "xmma", "hmma", "wgmma", "imma", "bmm", "addmm", "convolution",
  "conv1d", "conv2d", "conv3d", "scudnn", "flash", "fmha", "attention", "attn", "sdpa", "dot", NULL};

/* Names that show a kernel is memory-bound elementwise work.  They do not
 * change the class (every kernel that is not comm_adjacent or gemm is
 * elementwise for the levers) but tell a named kernel from one whose name
 * says nothing, e.g. the bundled example's layer-level nodes
 * "fwd_mb0_layer3" (sim_kernel_named; the metrics report such kernels as
 * unclassified instead of calling them memory-bound).  Checked against
 * the Kineto traces in ../shared/data (hta, tracelens, param): 99.8 % of
 * their kernel time matches a rule of some class.  XLA's "fusion" ops are
 * here because XProf names its loop fusions so. */
static const char *const elementwise_rules[] = {
  "elementwise", "vectorized", "pointwise", "unrolled", "reduce", "softmax", "norm", "moments", "gammabeta",
  "relu", "gelu", "silu", "swiglu", "sigmoid", "tanh", "dropout", "copy", "memcpy", "memset", "fill", "cat",
  "index", "scatter", "gather", "embedding", "adam", "sgd", "optimizer", "foreach", "multi_tensor", "transpose",
  "permute", "triton_", "bn_", "nchwtonhwc", "nhwctonchw", "cast", "convert", "sort", "scan", "topk", "pool",
  "loss", "bias", "rope", "rotary", "upsample", "pad", "im2col", "col2im", "cumsum", "argmax", "fusion", NULL};

static gboolean matches(const char *lower, const char *const *rules)
{
  for (const char *const *r = rules; *r; r++)
    if (strstr(lower, *r))
      return TRUE;
  return FALSE;
}

sim_kernel_class sim_kernel_classify(const char *name)
{
  if (name == NULL || *name == '\0')
    return SIM_KERNEL_ELEMENTWISE;
  char *lower = g_ascii_strdown(name, -1);
  sim_kernel_class c = matches(lower, comm_adjacent_rules) ? SIM_KERNEL_COMM_ADJACENT
                       : matches(lower, gemm_rules)        ? SIM_KERNEL_GEMM
                                                           : SIM_KERNEL_ELEMENTWISE;
  g_free(lower);
  return c;
}

gboolean sim_kernel_named(const char *name)
{
  if (name == NULL || *name == '\0')
    return FALSE;
  char *lower = g_ascii_strdown(name, -1);
  gboolean named = matches(lower, comm_adjacent_rules) || matches(lower, gemm_rules) ||
                   matches(lower, elementwise_rules);
  g_free(lower);
  return named;
}

gboolean sim_levers_active(const sim_levers *l)
{
  if (l == NULL)
    return FALSE;
  gboolean on = (l->compute > 0 && l->compute != 1.0) || (l->host > 0 && l->host != 1.0) || l->n_slow > 0 ||
                l->dist != SIM_SLOW_DIST_NONE;
  for (int c = 0; c < SIM_KERNEL_CLASS_COUNT; c++)
    on = on || (l->kernel[c] > 0 && l->kernel[c] != 1.0);
  return on;
}

gboolean sim_levers_set_speedup(sim_levers *l, const char *key, double speedup, GError **error)
{
  if (!(speedup > 0) || !isfinite(speedup)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s: the speedup must be a number > 0 (2 = twice as fast), "
                "got %g", key, speedup);
    return FALSE;
  }
  if (strcmp(key, "compute") == 0) {
    l->compute = speedup;
  } else if (strcmp(key, "host") == 0) {
    l->host = speedup;
  } else if (g_str_has_prefix(key, "compute:")) {
    sim_kernel_class c;
    if (!sim_kernel_class_from_name(key + 8, &c)) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "unknown kernel class '%s' in '%s' (use gemm, elementwise "
                  "or comm_adjacent)", key + 8, key);
      return FALSE;
    }
    l->kernel[c] = speedup;
  } else {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "unknown lever '%s' (use compute, compute:CLASS or host)", key);
    return FALSE;
  }
  return TRUE;
}

/* A number > 0 filling all of s. */
static gboolean parse_positive(const char *s, double *out)
{
  char *end;
  if (s == NULL || *s == '\0')
    return FALSE;
  double v = g_ascii_strtod(s, &end);
  if (*end != '\0' || !(v > 0) || !isfinite(v))
    return FALSE;
  *out = v;
  return TRUE;
}

gboolean sim_levers_add_slow_rank(sim_levers *l, const char *spec, GError **error)
{
  if (g_strcmp0(spec, "none") == 0) {
    l->n_slow = 0;
    return TRUE;
  }
  const char *eq = spec ? strchr(spec, '=') : NULL;
  char *end;
  long r = -1;
  double f = 0;
  if (eq != NULL) {
    char *rs = g_strndup(spec, (gsize)(eq - spec));
    r = strtol(rs, &end, 10);
    gboolean bad = *rs == '\0' || *end != '\0' || r < 0 || r > G_MAXINT;
    g_free(rs);
    if (bad)
      r = -1;
  }
  if (r < 0 || !parse_positive(eq + 1, &f)) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "slow rank '%s': give RANK=FACTOR, e.g. 3=1.2 (rank 3's "
                "compute takes 1.2 times as long), or none", spec ? spec : "");
    return FALSE;
  }
  for (int k = 0; k < l->n_slow; k++)
    if (l->slow_rank[k] == (int)r) {
      l->slow_factor[k] = f;
      return TRUE;
    }
  if (l->n_slow >= SIM_LEVERS_MAX_SLOW) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "slow rank '%s': at most %d ranks can be slowed one by one; "
                "use a distribution (--slow-ranks) for more", spec, SIM_LEVERS_MAX_SLOW);
    return FALSE;
  }
  l->slow_rank[l->n_slow] = (int)r;
  l->slow_factor[l->n_slow] = f;
  l->n_slow++;
  return TRUE;
}

gboolean sim_levers_set_slow_ranks(sim_levers *l, const char *spec, GError **error)
{
  if (g_strcmp0(spec, "none") == 0) {
    l->dist = SIM_SLOW_DIST_NONE;
    return TRUE;
  }
  const char *colon = spec ? strchr(spec, ':') : NULL;
  sim_slow_dist d = SIM_SLOW_DIST_NONE;
  const char *pname = NULL;
  if (colon && strncmp(spec, "lognormal", (size_t)(colon - spec)) == 0 && colon - spec == 9) {
    d = SIM_SLOW_DIST_LOGNORMAL;
    pname = "sigma";
  } else if (colon && strncmp(spec, "uniform", (size_t)(colon - spec)) == 0 && colon - spec == 7) {
    d = SIM_SLOW_DIST_UNIFORM;
    pname = "max";
  }
  double param = -1;
  uint64_t seed = 0;
  gboolean ok = d != SIM_SLOW_DIST_NONE;
  if (ok) {
    char **kv = g_strsplit(colon + 1, ",", -1);
    for (char **p = kv; *p && ok; p++) {
      char *eq = strchr(*p, '=');
      if (eq == NULL) {
        ok = FALSE;
        break;
      }
      *eq = '\0';
      if (strcmp(*p, pname) == 0) {
        char *end;
        param = g_ascii_strtod(eq + 1, &end);
        ok = eq[1] != '\0' && *end == '\0' && param >= 0 && isfinite(param);
      } else if (strcmp(*p, "seed") == 0) {
        char *end;
        seed = g_ascii_strtoull(eq + 1, &end, 10);
        ok = eq[1] != '\0' && *end == '\0';
      } else {
        ok = FALSE;
      }
    }
    g_strfreev(kv);
    ok = ok && param >= 0;
  }
  if (!ok) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "slow ranks '%s': give lognormal:sigma=S[,seed=N] (factor "
                "exp(S z), z standard normal), uniform:max=M[,seed=N] (factor 1 + M u, u in [0, 1)) or none",
                spec ? spec : "");
    return FALSE;
  }
  l->dist = d;
  l->dist_param = param;
  l->seed = seed;
  return TRUE;
}

/* splitmix64 (Steele, Lea, Flood 2014): a fixed, platform-independent
 * generator, so a seed gives the same factors everywhere. */
static uint64_t splitmix64(uint64_t *s)
{
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Uniform in (0, 1): the top 53 bits, never 0. */
static double unit_open(uint64_t *s)
{
  return ((double)(splitmix64(s) >> 11) + 0.5) / 9007199254740992.0;
}

double *sim_levers_rank_factors(const sim_levers *l, int n_ranks, GError **error)
{
  if (l == NULL || (l->n_slow == 0 && l->dist == SIM_SLOW_DIST_NONE) || n_ranks <= 0)
    return NULL;
  for (int k = 0; k < l->n_slow; k++)
    if (l->slow_rank[k] >= n_ranks) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "slow rank %d=%g: the workload has ranks 0 to %d only",
                  l->slow_rank[k], l->slow_factor[k], n_ranks - 1);
      return NULL;
    }
  double *f = g_new(double, n_ranks);
  for (int r = 0; r < n_ranks; r++) {
    f[r] = 1.0;
    if (l->dist == SIM_SLOW_DIST_NONE)
      continue;
    /* Rank r's own stream: (seed, r) only. */
    uint64_t s = l->seed * 0x100000001B3ull + (uint64_t)r;
    splitmix64(&s);
    if (l->dist == SIM_SLOW_DIST_LOGNORMAL) {
      /* Box-Muller: z = sqrt(-2 ln u1) cos(2 pi u2) is standard normal. */
      double u1 = unit_open(&s), u2 = unit_open(&s);
      double z = sqrt(-2.0 * log(u1)) * cos(2.0 * G_PI * u2);
      f[r] = exp(l->dist_param * z);
    } else {
      f[r] = 1.0 + l->dist_param * unit_open(&s);
    }
  }
  for (int k = 0; k < l->n_slow; k++)
    f[l->slow_rank[k]] *= l->slow_factor[k];
  return f;
}

double sim_levers_node_factor(const sim_levers *l, const et_node *n, sim_kernel_class klass, double rank_factor)
{
  if (n->type != ET_NODE_COMP || (n->flags & ET_FLAG_REPLAY))
    return 1.0;
  if (n->flags & ET_FLAG_CPU_OP)
    return l->host > 0 ? 1.0 / l->host : 1.0;
  if (n->flags & ET_FLAG_DELAY)
    return 1.0;
  double f = rank_factor;
  if (l->compute > 0)
    f /= l->compute;
  if (klass < SIM_KERNEL_CLASS_COUNT && l->kernel[klass] > 0)
    f /= l->kernel[klass];
  return f;
}

char *sim_levers_describe(const sim_levers *l)
{
  GString *s = g_string_new(NULL);
  if (l == NULL)
    return g_string_free(s, FALSE);
  if (l->compute > 0 && l->compute != 1.0)
    g_string_append_printf(s, "%scompute x%g faster", s->len ? "; " : "", l->compute);
  for (int c = 0; c < SIM_KERNEL_CLASS_COUNT; c++)
    if (l->kernel[c] > 0 && l->kernel[c] != 1.0)
      g_string_append_printf(s, "%scompute:%s x%g faster", s->len ? "; " : "", class_names[c], l->kernel[c]);
  if (l->host > 0 && l->host != 1.0)
    g_string_append_printf(s, "%shost x%g faster", s->len ? "; " : "", l->host);
  for (int k = 0; k < l->n_slow; k++)
    g_string_append_printf(s, "%sslow rank %d=%g", s->len ? "; " : "", l->slow_rank[k], l->slow_factor[k]);
  if (l->dist == SIM_SLOW_DIST_LOGNORMAL)
    g_string_append_printf(s, "%sslow ranks lognormal:sigma=%g,seed=%" G_GUINT64_FORMAT, s->len ? "; " : "",
                           l->dist_param, l->seed);
  else if (l->dist == SIM_SLOW_DIST_UNIFORM)
    g_string_append_printf(s, "%sslow ranks uniform:max=%g,seed=%" G_GUINT64_FORMAT, s->len ? "; " : "",
                           l->dist_param, l->seed);
  return g_string_free(s, FALSE);
}
