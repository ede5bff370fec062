/* test_et_model_gemm.c: the model reader's GEMM rules (chakra/et_model_gemm.c,
 * et_model.h): a GEMM's roofline time with whole waves of the tile its
 * name gives, the Megatron roles of a layer's twelve GEMMs, and the
 * kernel floor fitted from their measured times (used when the line fits,
 * the card's value otherwise, with the reason).
 *
 * Expected values are closed forms written next to each check: H100
 * numbers (989 TFLOP/s, 3.35 TB/s, 132 SMs), 128 x 128 tiles.
 */
#include "config.h"

#include "chakra/et_model_internal.h"

#include <math.h>
#include <string.h>

#define TILED "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_cublas"

static et_model_card h100(void)
{
  et_model_card c;
  memset(&c, 0, sizeof c);
  c.peak_flops = 989e12;
  c.hbm_Bps = 3.35e12;
  c.sms = 132;
  c.hidden = 4096;
  c.ffn = 16384;
  c.vocab = 32000;
  c.kernel_floor_ps = 2000000; /* the 2 us default */
  return c;
}

static void check_waves(void)
{
  et_model_card c = h100();
  et_mop o;
  memset(&o, 0, sizeof o);
  /* The tile as et_model_gemm_roles reads it from the name (check_roles). */
  o.name = (char *)TILED;
  o.tile_m = o.tile_n = 128;
  /* 1024 x 3072 over 4096: 8 x 24 = 192 tiles, 2 waves of 132:
   * 2 x 132 x 2 x 128 x 128 x 4096 FLOPs. */
  double s = 2.0 * 132 * 2.0 * 128 * 128 * 4096 / 989e12;
  g_assert_cmpfloat(fabs(et_model_gemm_s(&c, &o, 1024, 3072, 4096) - s), <, 1e-15);
  /* Without a tile: 2 M N K / peak, 2 x 1024 x 3072 x 4096 / 989e12. */
  o.tile_m = o.tile_n = 0;
  g_assert_cmpfloat(fabs(et_model_gemm_s(&c, &o, 1024, 3072, 4096) - 2.0 * 1024 * 3072 * 4096 / 989e12), <, 1e-15);
  /* Memory-bound: 4096 x 4096 over 8: bytes 2 (4096 x 8 x 2 + 4096^2)
   * over 3.35e12 (33.6 MB, 10.0 us) beat the FLOPs' 0.27 us. */
  double mem = 2.0 * (4096.0 * 8 + 8.0 * 4096 + 4096.0 * 4096) / 3.35e12;
  g_assert_cmpfloat(fabs(et_model_gemm_s(&c, &o, 4096, 4096, 8) - mem), <, 1e-15);
}

/* A layer of four forward and eight backward GEMMs named `name`, each
 * lasting floor + its roofline time / eff at tp 4 and 4096 tokens. */
static void layer(et_model *m, const et_model_card *c, const char *name, double floor_ps, double eff)
{
  memset(m, 0, sizeof *m);
  m->tp = 4;
  m->tokens_per_mb = 4096;
  m->how = g_string_new(NULL);
  m->layer_fwd.n = 4;
  m->layer_bwd.n = 8;
  m->layer_fwd.ops = g_new0(et_mop, 4);
  m->layer_bwd.ops = g_new0(et_mop, 8);
  for (int i = 0; i < 12; i++) {
    et_mop *o = i < 4 ? &m->layer_fwd.ops[i] : &m->layer_bwd.ops[i - 4];
    o->cls = ET_KC_GEMM;
    o->name = g_strdup(name);
  }
  g_assert_true(et_model_gemm_roles(m, c));
  for (int i = 0; i < 12; i++) {
    et_mop *o = i < 4 ? &m->layer_fwd.ops[i] : &m->layer_bwd.ops[i - 4];
    o->dur_ps = (sim_time_ps)llround(floor_ps + 1e12 * et_model_gemm_s(c, o, o->gemm_m, o->gemm_n, o->gemm_k) / eff);
  }
}

static void check_roles(void)
{
  et_model_card c = h100();
  et_model m;
  layer(&m, &c, TILED, 3e6, 0.8);
  /* QKV forward: T x 3h/t over h, N sharded; the last backward GEMM, the
   * QKV weight gradient: 3h/t x h over T, M sharded. */
  g_assert_cmpfloat(m.layer_fwd.ops[0].gemm_m, ==, 4096);
  g_assert_cmpfloat(m.layer_fwd.ops[0].gemm_n, ==, 3 * 4096 / 4);
  g_assert_cmpint(m.layer_fwd.ops[0].gemm_shard_dim, ==, 1);
  g_assert_cmpfloat(m.layer_bwd.ops[7].gemm_m, ==, 3 * 4096 / 4);
  g_assert_cmpint(m.layer_bwd.ops[7].gemm_shard_dim, ==, 3);
  g_assert_cmpint(m.layer_fwd.ops[0].tile_m, ==, 128);
  g_assert_cmpint(m.layer_fwd.ops[0].tile_n, ==, 128);
  et_model_clear(&m);
  /* CUTLASS's _MxN_, after digits that are not a tile ("80_", "16816gemm"). */
  layer(&m, &c, "cutlass_80_tensorop_bf16_s16816gemm_bf16_256x64_32x3_nn_align8", 3e6, 0.8);
  g_assert_cmpint(m.layer_fwd.ops[0].tile_m, ==, 256);
  g_assert_cmpint(m.layer_fwd.ops[0].tile_n, ==, 64);
  et_model_clear(&m);
}

static void check_floor(void)
{
  et_model_card c = h100();
  et_model m;
  /* Times on an exact line: the floor (3 us) and the efficiency (80 %)
   * come back, to the picosecond of rounding. */
  layer(&m, &c, TILED, 3e6, 0.8);
  et_model_fit_floor(&m, &c, TRUE);
  g_assert_cmpint(llabs(m.kernel_floor_ps - 3000000), <=, 2);
  g_assert_nonnull(strstr(m.how->str, "kernel floor 3.000 us fitted from the layer's 12 GEMMs"));
  g_assert_nonnull(strstr(m.how->str, "80.0 % efficiency"));
  et_model_clear(&m);
  /* The card's kernel_floor_us wins. */
  c.kernel_floor_given = TRUE;
  c.kernel_floor_ps = 5000000;
  layer(&m, &c, TILED, 3e6, 0.8);
  et_model_fit_floor(&m, &c, TRUE);
  g_assert_cmpint(m.kernel_floor_ps, ==, 5000000);
  g_assert_nonnull(strstr(m.how->str, "(the card's kernel_floor_us)"));
  et_model_clear(&m);
  /* One GEMM 20 % slower: off the line (relative rms residual over 2 %),
   * the default kept and the reason given. */
  c = h100();
  layer(&m, &c, TILED, 3e6, 0.8);
  m.layer_fwd.ops[2].dur_ps = m.layer_fwd.ops[2].dur_ps * 6 / 5;
  et_model_fit_floor(&m, &c, TRUE);
  g_assert_cmpint(m.kernel_floor_ps, ==, 2000000);
  g_assert_nonnull(strstr(m.how->str, "not fitted from the trace: the GEMMs do not fit one line"));
  et_model_clear(&m);
  /* No roles: the default, saying why. */
  layer(&m, &c, TILED, 3e6, 0.8);
  et_model_fit_floor(&m, &c, FALSE);
  g_assert_cmpint(m.kernel_floor_ps, ==, 2000000);
  g_assert_nonnull(strstr(m.how->str, "no GEMM roles"));
  et_model_clear(&m);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/et_model_gemm/waves", check_waves);
  g_test_add_func("/et_model_gemm/roles", check_roles);
  g_test_add_func("/et_model_gemm/floor", check_floor);
  return g_test_run();
}
