/* test_hlo.c: HLO instruction parsing and collective sizing (frontends/hlo.c).
 *
 * Every expected byte count is computed in the comment next to it from the
 * element size table of doc/xla.md §3 and the comm_size convention of §4
 * (AR = buffer, AG = per-rank input shard, RS = full input). */
#include "config.h"

#include "frontends/hlo.h"

#include <string.h>

static fe_hlo_instr parse_ok(const char *text)
{
  fe_hlo_instr in;
  GError *err = NULL;
  const char *reason = NULL;
  gboolean ok = fe_hlo_parse_instr(text, &in, &reason, &err);
  g_assert_no_error(err);
  g_assert_true(ok);
  return in;
}

static uint64_t shape_bytes(const char *s)
{
  uint64_t b;
  const char *end;
  GError *err = NULL;
  g_assert_true(fe_hlo_parse_shape(s, &end, &b, NULL, &err));
  g_assert_no_error(err);
  g_assert_cmpint(*end, ==, '\0');
  return b;
}

static void shape_fails(const char *s, const char *what)
{
  uint64_t b;
  const char *end;
  GError *err = NULL;
  g_assert_false(fe_hlo_parse_shape(s, &end, &b, NULL, &err));
  g_assert_error(err, WISP_ERROR, WISP_ERROR_PARSE);
  g_assert_nonnull(strstr(err->message, what));
  g_error_free(err);
}

static void test_dtypes(void)
{
  /* 2*3 elements of 4 bytes = 24 */
  g_assert_cmpuint(shape_bytes("f32[2,3]{1,0}"), ==, 24);
  /* scalars hold one element */
  g_assert_cmpuint(shape_bytes("f32[]"), ==, 4);
  g_assert_cmpuint(shape_bytes("pred[7]"), ==, 7);
  g_assert_cmpuint(shape_bytes("s8[7]"), ==, 7);
  g_assert_cmpuint(shape_bytes("u8[7]"), ==, 7);
  g_assert_cmpuint(shape_bytes("s16[3]"), ==, 6);
  g_assert_cmpuint(shape_bytes("u16[3]"), ==, 6);
  g_assert_cmpuint(shape_bytes("f16[3]"), ==, 6);
  g_assert_cmpuint(shape_bytes("bf16[3]"), ==, 6);
  g_assert_cmpuint(shape_bytes("s32[3]"), ==, 12);
  g_assert_cmpuint(shape_bytes("u32[3]"), ==, 12);
  g_assert_cmpuint(shape_bytes("s64[3]"), ==, 24);
  g_assert_cmpuint(shape_bytes("u64[3]"), ==, 24);
  g_assert_cmpuint(shape_bytes("f64[3]"), ==, 24);
  g_assert_cmpuint(shape_bytes("c64[3]"), ==, 24);
  /* c128: 16 bytes each */
  g_assert_cmpuint(shape_bytes("c128[3]"), ==, 48);
  /* every fp8 variant is one byte */
  const char *fp8[] = {"f8e4m3fn", "f8e5m2", "f8e4m3fnuz", "f8e5m2fnuz", "f8e4m3b11fnuz",
                       "f8e4m3", "f8e3m4", "f8e8m0fnu"};
  for (size_t i = 0; i < G_N_ELEMENTS(fp8); i++) {
    char *s = g_strdup_printf("%s[5,2]", fp8[i]);
    g_assert_cmpuint(shape_bytes(s), ==, 10);
    g_free(s);
  }
  /* 4-bit: 3 elements = 12 bits = 1.5 bytes, rounded up to 2 */
  g_assert_cmpuint(shape_bytes("s4[3]"), ==, 2);
  g_assert_cmpuint(shape_bytes("u4[4]"), ==, 2);
  g_assert_cmpuint(shape_bytes("f4e2m1fn[5]"), ==, 3);
  /* 2-bit: 5 elements = 10 bits, rounded up to 2 bytes */
  g_assert_cmpuint(shape_bytes("s2[5]"), ==, 2);
  g_assert_cmpuint(shape_bytes("u2[4]"), ==, 1);
  g_assert_cmpuint(shape_bytes("token[]"), ==, 0);
  /* tuple: 4*4 + 2*2 + 0 = 20; rounding is per array: s4[1] (1) + s4[1] (1) = 2 */
  g_assert_cmpuint(shape_bytes("(f32[4]{0}, bf16[2], token[])"), ==, 20);
  g_assert_cmpuint(shape_bytes("(s4[1], s4[1])"), ==, 2);
  /* nested tuple and empty tuple */
  g_assert_cmpuint(shape_bytes("((f32[1], f32[2]), u32[])"), ==, 16);
  g_assert_cmpuint(shape_bytes("()"), ==, 0);
  /* TPU layout with tiling and memory space, stripped: 5*1024*1024*256*4 = 5,368,709,120 */
  g_assert_cmpuint(shape_bytes("f32[5,1024,1024,256]{3,2,1,0:T(8,128)S(1)}"), ==, 5368709120u);
  /* bounded dynamic dimension: bound used, 8*4*4 = 128 */
  g_assert_cmpuint(shape_bytes("f32[<=8,4]"), ==, 128);
  /* first tuple element */
  uint64_t b, first;
  const char *end;
  g_assert_true(fe_hlo_parse_shape("(bf16[1,4096], bf16[8,4096])", &end, &b, &first, NULL));
  g_assert_cmpuint(first, ==, 8192);    /* 4096 * 2 */
  g_assert_cmpuint(b, ==, 8192 + 65536); /* + 8*4096*2 */
}

static void test_shape_errors(void)
{
  shape_fails("q32[2]", "unknown element type \"q32\"");
  shape_fails("f32[2", "expected ',' or ']'");
  shape_fails("f32[?,2]", "unbounded dynamic");
  shape_fails("f32[2]{1,0", "unterminated layout");
  shape_fails("(f32[2], ", "expected a shape");
  shape_fails("f32", "expected '['");
  /* 2^40 * 2^40 elements overflow 64 bits */
  shape_fails("f32[1099511627776,1099511627776]", "overflows");
  shape_fails("f32[18446744073709551615,2]", "overflows");
  shape_fails("f32[99999999999999999999]", "expected a dimension size");
  shape_fails("((((((((((((((((((f32[1]))))))))))))))))))", "nesting");
}

static void test_real_all_reduce(void)
{
  /* The all-reduce of tpu_inference_2.xplane.pb (doc/xla.md §1.1). */
  fe_hlo_instr in = parse_ok(
      "%all-reduce = f32[5,1024,1024,256]{3,2,1,0:T(8,128)} all-reduce(f32[5,1024,1024,256]"
      "{3,2,1,0:T(8,128)} %bitcast), channel_id=1, replica_groups=[4,2]<=[2,4]T(1,0), "
      "use_global_device_ids=true, to_apply=%region_0.3.clone");
  g_assert_cmpstr(in.name, ==, "all-reduce");
  g_assert_cmpstr(in.opcode, ==, "all-reduce");
  g_assert_cmpint(in.kind, ==, FE_HLO_ALL_REDUCE);
  g_assert_cmpint(in.phase, ==, FE_HLO_SYNC);
  g_assert_true(in.sized);
  /* 5*1024*1024*256 = 1,342,177,280 f32 = 5,368,709,120 B */
  g_assert_cmpuint(in.bytes, ==, UINT64_C(5368709120));
  g_assert_true(in.has_channel_id);
  g_assert_cmpint(in.channel_id, ==, 1);
  g_assert_cmpint(in.mode, ==, FE_HLO_MODE_FLATTENED_ID);
  /* iota(8) as [2,4] = {0,1,2,3},{4,5,6,7}; transposed to [4,2] = {0,4},{1,5},{2,6},{3,7} */
  g_assert_cmpuint(in.n_groups, ==, 4);
  const int64_t want[] = {0, 4, 1, 5, 2, 6, 3, 7};
  for (int i = 0; i < 8; i++)
    g_assert_cmpint(in.group_ids[i], ==, want[i]);
  for (int g = 0; g <= 4; g++)
    g_assert_cmpuint(in.group_off[g], ==, 2 * g);
  fe_hlo_instr_clear(&in);
}

static void test_sizing(void)
{
  /* all-gather: operand bf16[1,4096] = 8,192 B (the result, 65,536 B, is n times larger) */
  fe_hlo_instr in = parse_ok("%all-gather.3 = bf16[8,4096]{1,0} all-gather(bf16[1,4096]{1,0} %p), "
                             "replica_groups={{0,1,2,3,4,5,6,7}}, dimensions={0}");
  g_assert_cmpint(in.kind, ==, FE_HLO_ALL_GATHER);
  g_assert_cmpuint(in.bytes, ==, 8192);
  g_assert_cmpuint(in.result_bytes, ==, 65536);
  g_assert_cmpint(in.mode, ==, FE_HLO_MODE_CROSS_REPLICA);
  g_assert_cmpuint(in.n_groups, ==, 1);
  g_assert_cmpuint(in.group_off[1], ==, 8);
  fe_hlo_instr_clear(&in);
  /* reduce-scatter: operand f32[8,1024] = 32,768 B (the result is 4,096 B) */
  in = parse_ok("%reduce-scatter.4 = f32[1,1024]{1,0} reduce-scatter(f32[8,1024]{1,0} %q), "
                "channel_id=3, replica_groups={{0,1,2,3,4,5,6,7}}, dimensions={0}, to_apply=%add");
  g_assert_cmpint(in.kind, ==, FE_HLO_REDUCE_SCATTER);
  g_assert_cmpuint(in.bytes, ==, 32768);
  g_assert_cmpint(in.mode, ==, FE_HLO_MODE_CROSS_PARTITION);
  fe_hlo_instr_clear(&in);
  /* all-gather without operand shapes: result 65,536 / group size 8 = 8,192, flagged derived */
  in = parse_ok("%ag = bf16[8,4096] all-gather(%p), replica_groups=[1,8]<=[8], dimensions={0}");
  g_assert_true(in.sized);
  g_assert_true(in.bytes_derived);
  g_assert_cmpuint(in.bytes, ==, 8192);
  fe_hlo_instr_clear(&in);
  /* reduce-scatter without operand shapes: 4,096 * 8 = 32,768 */
  in = parse_ok("%rs = f32[1,1024] reduce-scatter(%q), replica_groups=[1,8]<=[8], dimensions={0}");
  g_assert_cmpuint(in.bytes, ==, 32768);
  fe_hlo_instr_clear(&in);
  /* all-gather without operand shapes nor groups: unsized with a reason */
  const char *reason = NULL;
  g_assert_true(fe_hlo_parse_instr("%ag = bf16[8,4096] all-gather(%p), dimensions={0}", &in, &reason, NULL));
  g_assert_false(in.sized);
  g_assert_nonnull(reason);
  fe_hlo_instr_clear(&in);
  /* variadic all-reduce: f32[4] (16) + bf16[8] (16) = 32 */
  in = parse_ok("%ar = (f32[4]{0}, bf16[8]{0}) all-reduce(f32[4]{0} %a, bf16[8]{0} %b), "
                "replica_groups={}, to_apply=%sum");
  g_assert_cmpuint(in.bytes, ==, 32);
  g_assert_cmpuint(in.n_operands, ==, 2);
  g_assert_true(in.has_replica_groups);
  g_assert_cmpuint(in.n_groups, ==, 0);
  fe_hlo_instr_clear(&in);
  /* all-to-all with 4 arrays of s8[16] = 64 */
  in = parse_ok("%a2a = (s8[16], s8[16], s8[16], s8[16]) all-to-all(s8[16] %a, s8[16] %b, s8[16] %c, "
                "s8[16] %d), replica_groups={{0,1,2,3}}");
  g_assert_cmpint(in.kind, ==, FE_HLO_ALL_TO_ALL);
  g_assert_cmpuint(in.bytes, ==, 64);
  fe_hlo_instr_clear(&in);
  /* all-gather-start: operand f8e4m3fn[2,128] = 256 B; the tuple result is never used */
  in = parse_ok("%all-gather-start.1 = (f8e4m3fn[2,128]{1,0}, f8e4m3fn[8,128]{1,0}) "
                "all-gather-start(f8e4m3fn[2,128]{1,0} %x), channel_id=7, replica_groups=[2,4]<=[8], "
                "use_global_device_ids=true, dimensions={0}");
  g_assert_cmpint(in.kind, ==, FE_HLO_ALL_GATHER);
  g_assert_cmpint(in.phase, ==, FE_HLO_START);
  g_assert_cmpuint(in.bytes, ==, 256);
  /* [2,4]<=[8]: {0,1,2,3},{4,5,6,7} */
  g_assert_cmpuint(in.n_groups, ==, 2);
  g_assert_cmpint(in.group_ids[4], ==, 4);
  fe_hlo_instr_clear(&in);
  /* all-gather-done closes the pair: not sized */
  in = parse_ok("%all-gather-done.1 = f8e4m3fn[8,128]{1,0} all-gather-done((f8e4m3fn[2,128]{1,0}, "
                "f8e4m3fn[8,128]{1,0}) %all-gather-start.1)");
  g_assert_cmpint(in.kind, ==, FE_HLO_ALL_GATHER);
  g_assert_cmpint(in.phase, ==, FE_HLO_DONE);
  g_assert_false(in.sized);
  g_assert_cmpstr(in.operand0_name, ==, "all-gather-start.1");
  fe_hlo_instr_clear(&in);
  /* all-reduce-start of s4[1000]: 4000 bits = 500 B */
  in = parse_ok("%all-reduce-start = s4[1000]{0} all-reduce-start(s4[1000]{0} %x), replica_groups={{0,1}}, "
                "to_apply=%add");
  g_assert_cmpint(in.phase, ==, FE_HLO_START);
  g_assert_cmpuint(in.bytes, ==, 500);
  fe_hlo_instr_clear(&in);
  /* collective-permute-start: first operand f32[256] = 1,024 B; pairs kept */
  in = parse_ok("%collective-permute-start.2 = (f32[256]{0}, f32[256]{0}, u32[], u32[]) "
                "collective-permute-start(f32[256]{0} %y), channel_id=2, "
                "source_target_pairs={{0,1},{1,2},{2,3},{3,0}}");
  g_assert_cmpint(in.kind, ==, FE_HLO_COLLECTIVE_PERMUTE);
  g_assert_cmpuint(in.bytes, ==, 1024);
  g_assert_cmpuint(in.n_pairs, ==, 4);
  g_assert_cmpint(in.pairs[6], ==, 3);
  g_assert_cmpint(in.pairs[7], ==, 0);
  fe_hlo_instr_clear(&in);
  /* send: operand 0 is pred[3] (3 B), the token adds 0 */
  in = parse_ok("%send.1 = (pred[3], u32[], token[]) send(pred[3] %v, token[] %t), channel_id=4, "
                "frontend_attributes={_xla_send_recv_source_target_pairs=\"{{0,1}}\"}");
  g_assert_cmpint(in.kind, ==, FE_HLO_SEND);
  g_assert_cmpuint(in.bytes, ==, 3);
  g_assert_cmpuint(in.n_pairs, ==, 1);
  fe_hlo_instr_clear(&in);
  /* recv: first result element c128[2] = 32 B */
  in = parse_ok("%recv.1 = (c128[2], u32[], token[]) recv(token[] %t), channel_id=4");
  g_assert_cmpint(in.kind, ==, FE_HLO_RECV);
  g_assert_cmpuint(in.bytes, ==, 32);
  fe_hlo_instr_clear(&in);
  /* ragged-all-to-all: input u8[100] is an upper bound */
  in = parse_ok("%ragged = u8[100] ragged-all-to-all(u8[100] %in, u8[100] %out, s64[4] %a, s64[4] %b, "
                "s64[4] %c, s64[4] %d), replica_groups={{0,1,2,3}}");
  g_assert_cmpuint(in.bytes, ==, 100);
  g_assert_true(in.bytes_upper_bound);
  fe_hlo_instr_clear(&in);
  /* collective-broadcast is communication; XLA's local broadcast is not */
  in = parse_ok("%cb = u64[2] collective-broadcast(u64[2] %x), replica_groups={{0,1}}");
  g_assert_cmpint(in.kind, ==, FE_HLO_COLLECTIVE_BROADCAST);
  g_assert_cmpuint(in.bytes, ==, 16);
  fe_hlo_instr_clear(&in);
  in = parse_ok("%broadcast.5 = f32[4,4]{1,0} broadcast(f32[] %c), dimensions={}");
  g_assert_cmpint(in.kind, ==, FE_HLO_OTHER);
  g_assert_false(in.sized);
  fe_hlo_instr_clear(&in);
  /* generic async wrapper: the name says reduce-scatter; operand f32[8,1024] = 32,768 */
  in = parse_ok("%reduce-scatter-start.9 = ((f32[8,1024]), f32[1,1024]) async-start(f32[8,1024] %q), "
                "calls=%wrapped_reduce_scatter");
  g_assert_cmpint(in.kind, ==, FE_HLO_REDUCE_SCATTER);
  g_assert_cmpint(in.phase, ==, FE_HLO_START);
  g_assert_cmpuint(in.bytes, ==, 32768);
  fe_hlo_instr_clear(&in);
  /* ROOT prefix and fusion with a quoted metadata string containing commas */
  in = parse_ok("ROOT %fusion.7 = bf16[4]{0} fusion(bf16[4]{0} %a), kind=kLoop, calls=%f, "
                "metadata={op_name=\"jit(f)/a,b\" source_file=\"x.py\"}");
  g_assert_cmpint(in.kind, ==, FE_HLO_OTHER);
  g_assert_cmpstr(in.name, ==, "fusion.7");
  fe_hlo_instr_clear(&in);
}

static void test_groups(void)
{
  uint32_t ng, *off;
  int64_t *ids;
  const char *end;
  /* [2,4]<=[2,2,2]T(2,1,0): iota(8) as [2,2,2] (index = 4a+2b+c), transposed to [c,b,a]:
   * element (c,b,a) = 4a+2b+c: order 0,4,2,6,1,5,3,7 -> {0,4,2,6},{1,5,3,7} */
  g_assert_true(fe_hlo_parse_replica_groups("[2,4]<=[2,2,2]T(2,1,0)", &end, &ng, &off, &ids, NULL));
  const int64_t want[] = {0, 4, 2, 6, 1, 5, 3, 7};
  g_assert_cmpuint(ng, ==, 2);
  for (int i = 0; i < 8; i++)
    g_assert_cmpint(ids[i], ==, want[i]);
  g_free(off);
  g_free(ids);
  /* explicit uneven groups */
  g_assert_true(fe_hlo_parse_replica_groups("{{0},{1,2,3}}", &end, &ng, &off, &ids, NULL));
  g_assert_cmpuint(ng, ==, 2);
  g_assert_cmpuint(off[1], ==, 1);
  g_assert_cmpuint(off[2], ==, 4);
  g_free(off);
  g_free(ids);
  /* malformed forms fail loudly */
  const char *bad[] = {"[3,3]<=[8]", "[2,4]<=[2,4]T(0,0)", "[2,4]<=[2,4]T(1)", "<mesh x=2>",
                       "{{0,1},{2,", "[2,4]<[8]", "{{a}}", "[2]<=[2]",
                       /* Zero-sized iota groups: 0 x 0 = 0 ids passed the size check, and
                        * the first form then appended 99999999999 empty groups, hanging
                        * (found by fuzz/fuzz_hlo.c); the second read as zero groups,
                        * i.e. the empty form {} (all devices). */
                       "[99999999999,0]<=[0]", "[0,4]<=[0]",
                       /* 4096 x 1025 = 4,198,400 ids > 2^22 = 4,194,304: refused
                        * before expansion (no topology could place them). */
                       "[4096,1025]<=[4198400]"};
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    GError *err = NULL;
    g_assert_false(fe_hlo_parse_replica_groups(bad[i], &end, &ng, &off, &ids, &err));
    g_assert_error(err, WISP_ERROR, WISP_ERROR_PARSE);
    g_error_free(err);
  }
}

static void expect_groups(const char *text, int64_t n_dev, int64_t np, const char *want)
{
  fe_hlo_instr in = parse_ok(text);
  GPtrArray *gs = g_ptr_array_new_with_free_func((GDestroyNotify) g_array_unref);
  GError *err = NULL;
  g_assert_true(fe_hlo_global_groups(&in, n_dev, np, gs, &err));
  g_assert_no_error(err);
  GString *s = g_string_new("");
  for (guint g = 0; g < gs->len; g++) {
    GArray *a = gs->pdata[g];
    g_string_append_c(s, '{');
    for (guint i = 0; i < a->len; i++)
      g_string_append_printf(s, "%s%" G_GINT64_FORMAT, i ? "," : "", g_array_index(a, int64_t, i));
    g_string_append_c(s, '}');
  }
  g_assert_cmpstr(s->str, ==, want);
  g_string_free(s, TRUE);
  g_ptr_array_unref(gs);
  fe_hlo_instr_clear(&in);
}

static void test_group_modes(void)
{
  /* flattened ids are global device ids */
  expect_groups("%a = f32[1] all-reduce(f32[1] %x), channel_id=1, use_global_device_ids=true, "
                "replica_groups={{0,2},{1,3}}", 4, 0, "{0,2}{1,3}");
  /* cross-replica, 4 devices = 2 replicas x 2 partitions: replicas {0,1} in each partition p
   * -> devices {0*2+p, 1*2+p} = {0,2} and {1,3} */
  expect_groups("%a = f32[1] all-reduce(f32[1] %x), replica_groups={{0,1}}", 4, 2, "{0,2}{1,3}");
  /* cross-partition, 2 replicas x 2 partitions: partitions {0,1} in replica r -> {2r, 2r+1} */
  expect_groups("%a = f32[1] all-reduce(f32[1] %x), channel_id=1, replica_groups={{0,1}}", 4, 2,
                "{0,1}{2,3}");
  /* cross-replica-and-partition: replica group {0,1} spanning both partitions -> {0,1,2,3} */
  expect_groups("%a = f32[1] all-reduce(f32[1] %x), channel_id=1, use_global_device_ids=false, "
                "replica_groups={{0,1}}", 4, 2, "{0,1,2,3}");
  /* empty groups: all devices (default: one partition per device with channel_id) */
  expect_groups("%a = f32[1] all-reduce(f32[1] %x), channel_id=1, replica_groups={}", 3, 0, "{0,1,2}");
  /* default without channel_id: every device is a replica */
  expect_groups("%a = f32[1] all-reduce(f32[1] %x), replica_groups={{1,0}}", 2, 0, "{1,0}");
  /* id outside the device range */
  fe_hlo_instr in = parse_ok("%a = f32[1] all-reduce(f32[1] %x), replica_groups={{0,9}}");
  GPtrArray *gs = g_ptr_array_new_with_free_func((GDestroyNotify) g_array_unref);
  GError *err = NULL;
  g_assert_false(fe_hlo_global_groups(&in, 4, 0, gs, &err));
  g_assert_error(err, WISP_ERROR, WISP_ERROR_INVALID);
  g_error_free(err);
  g_ptr_array_unref(gs);
  fe_hlo_instr_clear(&in);
}

static void test_instr_errors(void)
{
  const char *bad[] = {
    "",
    "%x f32[1] add(f32[1] %a)",
    "%x = f32[1]",
    "%x = f32[1] add(f32[1] %a",
    "%x = f32[1] add(f32[1] %a) junk",
    "%x = f32[1] add(f32[1] %a), =3",
    "%x = zz[1] all-reduce(zz[1] %a)",
    "%x = f32[1] all-reduce(f32[1] %a), replica_groups={{0,1}",
    "%x = f32[1] all-reduce(f32[1] %a), replica_groups={{0,1}} trailing",
    "%x = f32[1] all-reduce(f32[1] %a), channel_id=abc",
    "%x = f32[1] all-reduce(f32[1] %a), channel_id=1, use_global_device_ids=maybe",
    "%x = f32[1] all-reduce(f32[1] %a), use_global_device_ids=true",
    "%x = f32[1] collective-permute(f32[1] %a), source_target_pairs={{0,1,2}}",
  };
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    fe_hlo_instr in;
    GError *err = NULL;
    g_assert_false(fe_hlo_parse_instr(bad[i], &in, NULL, &err));
    g_assert_nonnull(err);
    g_assert_true(err->domain == WISP_ERROR);
    g_error_free(err);
    g_assert_null(in.name);
  }
}

/* Fuzzing: random byte mutations and truncations of valid instructions must
 * parse or fail with a WISP_ERROR, never crash, hang or read out of bounds
 * (run under ASan in CI).  Deterministic seed. */
static void test_fuzz(void)
{
  static const char *seeds[] = {
    "%all-reduce = f32[5,1024,1024,256]{3,2,1,0:T(8,128)} all-reduce(f32[5,1024,1024,256]{3,2,1,0:T(8,128)} "
    "%bitcast), channel_id=1, replica_groups=[4,2]<=[2,4]T(1,0), use_global_device_ids=true, to_apply=%r",
    "%collective-permute-start.2 = (f32[256]{0}, f32[256]{0}, u32[], u32[]) collective-permute-start("
    "f32[256]{0} %y), channel_id=2, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}",
    "%send.1 = (pred[3], u32[], token[]) send(pred[3] %v, token[] %t), channel_id=4, "
    "frontend_attributes={_xla_send_recv_source_target_pairs=\"{{0,1}}\"}",
  };
  static const char alphabet[] = "{}[]()<=,%\"T:0123456789abfsu -.x";
  GRand *rnd = g_rand_new_with_seed(7);
  int ok = 0, failed = 0;
  for (int it = 0; it < 20000; it++) {
    const char *seed = seeds[it % G_N_ELEMENTS(seeds)];
    char *t = g_strdup(seed);
    size_t n = strlen(t);
    int muts = g_rand_int_range(rnd, 1, 4);
    for (int m = 0; m < muts; m++)
      t[g_rand_int_range(rnd, 0, (gint32) n)] = alphabet[g_rand_int_range(rnd, 0, (gint32) sizeof alphabet - 1)];
    if (g_rand_boolean(rnd))
      t[g_rand_int_range(rnd, 0, (gint32) n)] = '\0';
    fe_hlo_instr in;
    GError *err = NULL;
    if (fe_hlo_parse_instr(t, &in, NULL, &err)) {
      ok++;
      if (in.kind != FE_HLO_OTHER && in.has_replica_groups) {
        GPtrArray *gs = g_ptr_array_new_with_free_func((GDestroyNotify) g_array_unref);
        GError *e2 = NULL;
        if (!fe_hlo_global_groups(&in, 8, 0, gs, &e2))
          g_clear_error(&e2);
        g_ptr_array_unref(gs);
      }
      fe_hlo_instr_clear(&in);
    } else {
      g_assert_true(err != NULL && err->domain == WISP_ERROR);
      g_error_free(err);
      failed++;
    }
    g_free(t);
  }
  /* Both outcomes occur, so the mutations reach the parser's branches. */
  g_assert_cmpint(ok, >, 0);
  g_assert_cmpint(failed, >, 0);
  g_rand_free(rnd);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/hlo/dtypes", test_dtypes);
  g_test_add_func("/hlo/shape-errors", test_shape_errors);
  g_test_add_func("/hlo/real-all-reduce", test_real_all_reduce);
  g_test_add_func("/hlo/sizing", test_sizing);
  g_test_add_func("/hlo/groups", test_groups);
  g_test_add_func("/hlo/group-modes", test_group_modes);
  g_test_add_func("/hlo/instr-errors", test_instr_errors);
  g_test_add_func("/hlo/fuzz", test_fuzz);
  return g_test_run();
}
