/* The matrix-engine (AMX) and fp16 peak loops: the reasons a loop cannot
 * run, from any feature mask; the tile configuration; the loops against
 * their closed form where this CPU has the feature (and, for AMX, the
 * kernel grants the tile state), skipped with the reason printed where it
 * does not; the theory's new rows.  The profile keys are in
 * test_matrix_profile.c.  No timed asserts. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "amx.h"
#include "cal_err.h"
#include "cal_isa.h"
#include "compute_peak.h"
#include "kernel.h"
#include "roofline.h"
#include "test_util.h"

#define ALL_AMX (CAL_ISA_AMX_TILE | CAL_ISA_AMX_BF16 | CAL_ISA_AMX_INT8)

/* ---- reasons, configuration, build ------------------------------------ */

static void amx_reasons_from_masks(void **state) {
  (void)state;
  char buf[256];
  const char *r = cal_amx_why_not(0, CAL_AMX_NEED_BF16, 0, buf, sizeof buf);
  assert_ptr_equal(r, buf);
  assert_string_equal(r, "CPU has no AMX (amx_tile, amx_bf16 absent)");
  r = cal_amx_why_not(CAL_ISA_AVX512F | CAL_ISA_AVX512BF16, CAL_AMX_NEED_INT8,
                      0, buf, sizeof buf);
  assert_string_equal(r, "CPU has no AMX (amx_tile, amx_int8 absent)");
  /* the permission answer is not looked at while bits are missing */
  r = cal_amx_why_not(CAL_ISA_AMX_BF16, CAL_AMX_NEED_BF16, EPERM, buf,
                      sizeof buf);
  assert_string_equal(r, "CPU has no AMX (amx_tile absent)");
  r = cal_amx_why_not(CAL_ISA_AMX_TILE | CAL_ISA_AMX_BF16, CAL_AMX_NEED_INT8,
                      0, buf, sizeof buf);
  assert_string_equal(r, "CPU has AMX but not this dtype (amx_int8 absent)");
  if (!cal_amx_compiled()) {
    r = cal_amx_why_not(ALL_AMX, CAL_AMX_NEED_BF16, 0, buf, sizeof buf);
    assert_non_null(strstr(r, "this build has no AMX code"));
    return;
  }
  r = cal_amx_why_not(ALL_AMX, CAL_AMX_NEED_BF16, EPERM, buf, sizeof buf);
  assert_string_equal(r, "the kernel refused the AMX tile state (arch_prctl: "
                         "Operation not permitted)");
  r = cal_amx_why_not(ALL_AMX, CAL_AMX_NEED_INT8, EINVAL, buf, sizeof buf);
  assert_non_null(strstr(r, "the kernel refused the AMX tile state "
                            "(arch_prctl: Invalid argument"));
  assert_non_null(strstr(r, "5.16"));
  /* granted: no reason */
  assert_null(cal_amx_why_not(ALL_AMX, CAL_AMX_NEED_BF16, 0, buf, sizeof buf));
  assert_null(cal_amx_why_not(ALL_AMX, CAL_AMX_NEED_INT8, 0, buf, sizeof buf));
  /* a short buffer is cut, never overrun */
  char tiny[12];
  memset(tiny, 'x', sizeof tiny);
  r = cal_amx_why_not(0, CAL_AMX_NEED_BF16, 0, tiny, 8);
  assert_int_equal(strlen(r), 7);
  assert_int_equal(tiny[8], 'x');
}

static void amx_tile_config(void **state) {
  (void)state;
  /* LDTILECFG reads 64 bytes: palette 1, every field where the SDM puts it */
  assert_int_equal(sizeof(cal_amx_cfg_t), 64);
  assert_int_equal(offsetof(cal_amx_cfg_t, colsb), 16);
  assert_int_equal(offsetof(cal_amx_cfg_t, rows), 48);
  cal_amx_cfg_t c;
  memset(&c, 0xab, sizeof c);
  cal_amx_config(&c);
  assert_int_equal(c.palette_id, 1);
  assert_int_equal(c.start_row, 0);
  for (int i = 0; i < 14; i++)
    assert_int_equal(c.reserved[i], 0);
  for (int t = 0; t < 16; t++) {
    /* palette 1: 8 tiles of at most 16 rows x 64 bytes; the rest zero */
    assert_int_equal(c.colsb[t], t < 8 ? 64 : 0);
    assert_int_equal(c.rows[t], t < 8 ? 16 : 0);
  }
  /* the shape rules of TDPBF16PS / TDPBSSD for C = tmm0..3, A = tmm4..5,
   * B = tmm6..7 (else #UD): C.rows == A.rows, C.colsb == B.colsb,
   * A.colsb == 4 * B.rows */
  for (int ct = 0; ct < 4; ct++)
    for (int at = 4; at < 6; at++)
      for (int bt = 6; bt < 8; bt++) {
        assert_int_equal(c.rows[ct], c.rows[at]);
        assert_int_equal(c.colsb[ct], c.colsb[bt]);
        assert_int_equal(c.colsb[at], 4 * c.rows[bt]);
      }
  assert_int_equal(CAL_AMX_TILE_BYTES, CAL_AMX_ROWS * CAL_AMX_ROW_BYTES);
}

static void amx_build_has_loops(void **state) {
  (void)state;
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) &&       \
    __GNUC__ >= 11
  /* GCC 11+ knows -mamx-*: the tile loops must be in this build */
  assert_true(cal_amx_compiled());
#endif
  if (cal_amx_compiled()) {
    void (*f)(const cal_amx_tiles_t *, int64_t, void *) = cal_tile_dp_bf16_amx;
    assert_non_null(f);
    f = cal_tile_dp_int8_amx;
    assert_non_null(f);
  }
  print_message("AMX tile loops compiled: %s\n",
                cal_amx_compiled() ? "yes" : "no");
}

/* ---- the kernels on this machine -------------------------------------- */

/* Whether a loop needing `need` may run here, decided apart from the
 * kernel's own answer; buf gets the reason when not. */
static int expect_amx(uint32_t need, char *buf, size_t len) {
  uint32_t f = cal_isa_features();
  int err = 0;
  if ((need & ~f) == 0 && cal_amx_compiled())
    err = cal_amx_request_permission();
  return cal_amx_why_not(f, need, err, buf, len) == NULL;
}

static const struct {
  const char *name, *dtype;
  uint32_t need;
  double flops_per_step; /* four tile multiply-adds */
} amx_kernels[2] = {{"amx_bf16", "bf16", CAL_AMX_NEED_BF16, 4 * 16384.0},
                    {"amx_int8", "int8", CAL_AMX_NEED_INT8, 4 * 32768.0}};

/* Where the loop cannot run: refused with exactly the expected reason,
 * no state, no work; nothing ever reaches a tile instruction (which would
 * end this process with SIGILL). */
static void amx_refused_with_reason(void **state) {
  (void)state;
  for (int i = 0; i < 2; i++) {
    const cal_kernel_t *k = cal_kernel_find(amx_kernels[i].name);
    assert_non_null(k);
    assert_string_equal(cal_family_name(k->family), "matrix");
    assert_string_equal(cal_kdtype_name(k->dtype), amx_kernels[i].dtype);
    char want[256];
    cal_params_t p = {.variant = CAL_VARIANT_AUTO, .threads = 1, .n = 16};
    const char *why = NULL;
    if (expect_amx(amx_kernels[i].need, want, sizeof want)) {
      assert_int_equal(k->supported(&p, &why), 0);
      continue;
    }
    assert_int_equal(k->supported(&p, &why), CAL_EUNSUPP);
    assert_string_equal(why, want);
    if (!(cal_isa_features() & CAL_ISA_AMX_TILE))
      assert_non_null(strstr(why, "CPU has no AMX (amx_tile"));
    print_message("%s: %s\n", k->name, why);
    void *st = NULL;
    assert_int_equal(k->setup(&p, &st), CAL_EUNSUPP);
    assert_null(st);
    assert_true(k->flops(&p) == 0.0);
  }
  /* the loops have one variant: asking for another is refused */
  cal_params_t p = {.variant = CAL_VARIANT_SCALAR, .n = 16};
  const char *why = NULL;
  assert_int_equal(cal_kernel_find("amx_bf16")->supported(&p, &why),
                   CAL_EUNSUPP);
  assert_non_null(strstr(why, "auto"));
}

static void amx_closed_form(void **state) {
  (void)state;
  char why[256];
  if (!expect_amx(CAL_AMX_NEED_BF16, why, sizeof why) &&
      !expect_amx(CAL_AMX_NEED_INT8, why, sizeof why)) {
    cal_test_skip("%s", why);
  }
  for (int i = 0; i < 2; i++) {
    const cal_kernel_t *k = cal_kernel_find(amx_kernels[i].name);
    if (!expect_amx(amx_kernels[i].need, why, sizeof why)) {
      print_message("%s skipped: %s\n", k->name, why);
      continue;
    }
    const int64_t steps[] = {1, 7, 1000, 0 /* the default */};
    for (size_t s = 0; s < 4; s++)
      for (int t = 1; t <= 3; t++) {
        cal_params_t p = {.variant = CAL_VARIANT_AUTO, .threads = t,
                          .n = steps[s]};
        cal_test_kernel_life(k, &p, NULL, cal_amx_test_corrupt);
      }
    cal_params_t p = {.variant = CAL_VARIANT_AUTO, .threads = 2, .n = 1000};
    assert_double_equal(k->flops(&p), 2 * 1000 * amx_kernels[i].flops_per_step,
                        0);
    void *st = NULL;
    assert_int_equal(k->setup(&p, &st), 0);
    assert_string_equal(k->variant_name(st), "amx");
    k->teardown(st);
    /* more steps than stay exact (bf16: 2^24 in fp32) are refused */
    p.n = i == 0 ? 100000 : INT64_C(1) << 32;
    st = NULL;
    assert_int_equal(k->setup(&p, &st), CAL_EINVAL);
    assert_null(st);
  }
}

static void fp16_closed_form(void **state) {
  (void)state;
  const cal_kernel_t *k = cal_kernel_find("fma_fp16");
  assert_non_null(k);
  assert_string_equal(cal_kdtype_name(k->dtype), "fp16");
  cal_params_t p = {.variant = CAL_VARIANT_AUTO, .threads = 1, .n = 64};
  const char *why = NULL;
  int best = CAL_VARIANT_SCALAR;
  int have = (cal_isa_features() & CAL_ISA_AVX512FP16) &&
             cal_variant_best(&best) == 0 && best == CAL_VARIANT_AVX512;
  if (!have) {
    assert_int_equal(k->supported(&p, &why), CAL_EUNSUPP);
    if (!(cal_isa_features() & CAL_ISA_AVX512FP16))
      assert_string_equal(why, "CPU has no AVX512_FP16 (vfmadd231ph)");
    cal_test_skip("%s", why);
  }
  /* one partial round, exactly one round, several with a partial last */
  const int64_t steps[] = {1003, CAL_FP16_ROUND, 5 * CAL_FP16_ROUND + 77};
  for (size_t s = 0; s < 3; s++)
    for (int t = 1; t <= 3; t++) {
      p.threads = t;
      p.n = steps[s];
      cal_test_kernel_life(k, &p, NULL, cal_fma_test_corrupt);
    }
  p.threads = 2;
  p.n = 1000; /* 16 chains x 32 lanes x 2 flops */
  assert_double_equal(k->flops(&p), 2.0 * 1000 * 16 * 32 * 2, 0);
}

/* ---- theory ------------------------------------------------------------ */

static void theory_matrix_rows(void **state) {
  (void)state;
  cal_theory_t m;
  uint32_t f = CAL_ISA_AVX512BF16 | CAL_ISA_AVX512VNNI | CAL_ISA_AVX512FP16 |
               ALL_AMX;
  assert_int_equal(cal_theory_init(&m, CAL_VARIANT_AVX512, f, 2.0, 2), 0);
  assert_string_equal(m.matrix_engine, "amx");
  /* 1024 bf16 flops and 2048 int8 ops per cycle per core */
  assert_double_equal(cal_theory_matrix_gflops_core(&m, CAL_DT_BF16), 2048.0,
                      1e-9);
  assert_double_equal(cal_theory_matrix_gflops(&m, CAL_DT_BF16), 4096.0, 1e-9);
  assert_double_equal(cal_theory_matrix_gflops_core(&m, CAL_DT_INT8), 4096.0,
                      1e-9);
  assert_double_equal(cal_theory_matrix_gflops_core(&m, CAL_DT_FP32), 0.0, 0);
  assert_double_equal(cal_theory_matrix_gflops_core(&m, 99), 0.0, 0);
  /* vfmadd231ph: 32 lanes x 2 flops x 2 per cycle */
  assert_double_equal(cal_ops_per_instr(CAL_DT_FP16, 512), 64.0, 0);
  assert_double_equal(cal_theory_gflops_core(&m, CAL_DT_FP16), 256.0, 1e-9);
  /* the vector rows keep their meaning: vdpbf16ps 64 flops, 1 per 2 cycles */
  assert_double_equal(cal_theory_gflops_core(&m, CAL_DT_BF16), 64.0, 1e-9);
  cal_assert_contains(m.assumption, "vfmadd231ph 2 per cycle",
                      "1024 bf16 flops per cycle", "2048 int8 ops per cycle",
                      "Sapphire Rapids");
  /* amx_tile alone, or no tile bit: no matrix engine */
  assert_int_equal(cal_theory_init(&m, CAL_VARIANT_AVX512, CAL_ISA_AMX_TILE,
                                   2.0, 1), 0);
  assert_null(m.matrix_engine);
  assert_int_equal(cal_theory_init(&m, CAL_VARIANT_AVX512,
                                   CAL_ISA_AMX_BF16 | CAL_ISA_AMX_INT8, 2.0, 1),
                   0);
  assert_null(m.matrix_engine);
  assert_double_equal(cal_theory_matrix_gflops(&m, CAL_DT_BF16), 0.0, 0);
  assert_null(strstr(m.assumption, "AMX"));
  /* fp16 needs the avx512 variant */
  assert_int_equal(cal_theory_init(&m, CAL_VARIANT_AVX2, CAL_ISA_AVX512FP16,
                                   2.0, 1), 0);
  assert_double_equal(cal_theory_gflops_core(&m, CAL_DT_FP16), 0.0, 0);
  int dt;
  assert_int_equal(cal_ceiling_dtype_parse("fp16", &dt), 0);
  assert_int_equal(dt, CAL_DT_FP16);
  assert_string_equal(cal_ceiling_dtype_name(CAL_DT_FP16), "fp16");
}

CAL_TEST_MAIN(
    cmocka_unit_test(amx_reasons_from_masks),
    cmocka_unit_test(amx_tile_config), cmocka_unit_test(amx_build_has_loops),
    cmocka_unit_test(amx_refused_with_reason),
    cmocka_unit_test(amx_closed_form), cmocka_unit_test(fp16_closed_form),
    cmocka_unit_test(theory_matrix_rows))
