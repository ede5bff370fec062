/* et_model_gemm.c: what the trace's GEMMs of known shape tell the model
 * reader (et_model.h): the Megatron layer's GEMM roles and shapes, and
 * the kernel floor fitted from their measured times.  Called by
 * et_model.c once the layer's forward and backward are read; calls
 * nothing above it.  O(operations of one layer).
 */
#include "config.h"
#include "chakra/et_model_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The Megatron layer's GEMM shapes (et_model.h), traced sizes; FALSE when
 * the layer does not have four forward and eight backward GEMMs. */
/* o's output tile from its name: cuBLAS's "tilesize<M>x<N>x<K>", else
 * CUTLASS's "_<M>x<N>_" (both numbers 16 .. 512); 0 x 0 when none.
 * O(name length). */
static void name_tile(et_mop *o)
{
  o->tile_m = o->tile_n = 0;
  const char *p = strstr(o->name, "tilesize");
  for (p = p ? p + 8 : o->name; p && *p; p++) {
    int a = 0, b = 0, len = 0;
    if (g_ascii_isdigit(*p) && (p == o->name || !g_ascii_isdigit(p[-1])) && sscanf(p, "%dx%d%n", &a, &b, &len) == 2 &&
        a >= 16 && a <= 512 && b >= 16 && b <= 512) {
      o->tile_m = a;
      o->tile_n = b;
      return;
    }
  }
}

double et_model_gemm_s(const et_model_card *c, const et_mop *o, double m, double n, double k)
{
  double flops = 2.0 * m * n * k;
  if (c->sms > 0 && o->tile_m > 0 && o->tile_n > 0) {
    double waves = ceil(ceil(m / o->tile_m) * ceil(n / o->tile_n) / c->sms);
    flops = waves * c->sms * 2.0 * o->tile_m * o->tile_n * k;
  }
  return fmax(flops / c->peak_flops, 2.0 * (m * k + k * n + m * n) / c->hbm_Bps);
}

/* The LM head's GEMMs when the head (forward and backward) has three:
 * Megatron's vocabulary-parallel output layer, logits T x V/t over h,
 * then its data gradient (T x h over V/t) and weight gradient (V/t x h
 * over T).  O(head). */
static void head_roles(et_model *m, const et_model_card *c)
{
  double T = m->tokens_per_mb, h = c->hidden, v = (double)c->vocab / m->tp;
  const double shapes[3][4] = {{T, v, h, 1}, {T, h, v, 2}, {v, h, T, 3}};
  et_mseq *seqs[2] = {&m->head, &m->head_bwd};
  int n = 0;
  for (int s = 0; s < 2; s++)
    for (int i = 0; i < seqs[s]->n; i++)
      n += seqs[s]->ops[i].cls == ET_KC_GEMM;
  if (n != 3 || c->vocab <= 0)
    return;
  for (int s = 0, k = 0; s < 2; s++)
    for (int i = 0; i < seqs[s]->n; i++) {
      et_mop *o = &seqs[s]->ops[i];
      if (o->cls != ET_KC_GEMM)
        continue;
      o->gemm_m = shapes[k][0];
      o->gemm_n = shapes[k][1];
      o->gemm_k = shapes[k][2];
      o->gemm_shard_dim = (int)shapes[k][3];
      name_tile(o);
      k++;
    }
}

gboolean et_model_gemm_roles(et_model *m, const et_model_card *c)
{
  double T = m->tokens_per_mb, h = c->hidden, f = c->ffn > 0 ? c->ffn : 4.0 * h, t = m->tp;
  /* {M, N, K, sharded dimension} */
  const double fwd[4][4] = {{T, 3 * h / t, h, 1}, {T, h, h / t, 2}, {T, f / t, h, 1}, {T, h, f / t, 2}};
  const double bwd[8][4] = {{T, f / t, h, 1}, {h, f / t, T, 1}, {T, h, f / t, 2}, {f / t, h, T, 3},
                            {T, h / t, h, 1}, {h / t, h, T, 3}, {T, h, 3 * h / t, 2}, {3 * h / t, h, T, 3}};
  et_mseq *seqs[2] = {&m->layer_fwd, &m->layer_bwd};
  const double(*shapes[2])[4] = {fwd, bwd};
  int want[2] = {4, 8};
  for (int s = 0; s < 2; s++) {
    int n = 0;
    for (int i = 0; i < seqs[s]->n; i++)
      n += seqs[s]->ops[i].cls == ET_KC_GEMM;
    if (n != want[s])
      return FALSE;
  }
  for (int s = 0; s < 2; s++)
    for (int i = 0, k = 0; i < seqs[s]->n; i++) {
      et_mop *o = &seqs[s]->ops[i];
      if (o->cls != ET_KC_GEMM)
        continue;
      o->gemm_m = shapes[s][k][0];
      o->gemm_n = shapes[s][k][1];
      o->gemm_k = shapes[s][k][2];
      o->gemm_shard_dim = (int)shapes[s][k][3];
      name_tile(o);
      k++;
    }
  head_roles(m, c);
  return TRUE;
}

/* The layer's GEMMs of known shape (at most 12): roofline time x (ps, the
 * card's peak FLOP/s and HBM bandwidth) and measured time y; their count. */
static int gemm_points(const et_model *m, const et_model_card *c, double x[16], double y[16])
{
  int n = 0;
  for (int s = 0; s < 2; s++) {
    const et_mseq *q = s ? &m->layer_bwd : &m->layer_fwd;
    for (int i = 0; i < q->n && n < 16; i++) {
      const et_mop *o = &q->ops[i];
      if (o->cls != ET_KC_GEMM || o->gemm_shard_dim == 0)
        continue;
      x[n] = 1e12 * et_model_gemm_s(c, o, o->gemm_m, o->gemm_n, o->gemm_k);
      y[n++] = (double)o->dur_ps;
    }
  }
  return n;
}

/* The kernel floor (et_model.h): the least-squares line through the
 * layer's GEMMs of known shape, measured time against roofline time; its
 * intercept when the line fits, else the card's value, with a "how" line
 * saying which.  O(GEMMs). */
void et_model_fit_floor(et_model *m, const et_model_card *c, gboolean roles)
{
  m->kernel_floor_ps = c->kernel_floor_ps;
  if (c->kernel_floor_given) {
    g_string_append_printf(m->how, "model: kernel floor %.3f us (the card's kernel_floor_us)\n",
                           (double)c->kernel_floor_ps / 1e6);
    return;
  }
  double x[16], y[16], sx = 0, sy = 0, sxx = 0, sxy = 0, ymin = INFINITY, rss = 0;
  int n = roles ? gemm_points(m, c, x, y) : 0;
  for (int i = 0; i < n; i++)
    sx += x[i], sy += y[i], sxx += x[i] * x[i], sxy += x[i] * y[i], ymin = fmin(ymin, y[i]);
  double var = n > 0 ? sxx - sx * sx / n : 0, b = var > 0 ? (sxy - sx * sy / n) / var : 0, a = (sy - b * sx) / MAX(n, 1);
  for (int i = 0; i < n; i++)
    rss += ((y[i] - a - b * x[i]) / y[i]) * ((y[i] - a - b * x[i]) / y[i]);
  double rms = n > 0 ? sqrt(rss / n) : 0;
  const char *why = !roles ? "no GEMM roles" : var <= 0 ? "one GEMM shape" : b <= 0 ? "time falls with the shape"
                    : rms > 0.02 ? "the GEMMs do not fit one line (relative rms residual over 2 %)"
                    : a < 0 || a > ymin ? "the intercept is outside 0 .. the shortest GEMM" : NULL;
  if (why) {
    g_string_append_printf(m->how, "model: kernel floor %.3f us (default; not fitted from the trace: %s)\n",
                           (double)c->kernel_floor_ps / 1e6, why);
    return;
  }
  m->kernel_floor_ps = (sim_time_ps)llround(a);
  g_string_append_printf(m->how, "model: kernel floor %.3f us fitted from the layer's %d GEMMs: time = floor + "
                         "roofline time / %.1f %% efficiency, relative rms residual %.2f %%\n", a / 1e6, n,
                         100.0 / b, 100.0 * rms);
}
