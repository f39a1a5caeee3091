/* The compute peak kernels (kernels/peak/compute_peak.c): FMA and
 * dot-product chains checked against their closed forms in every variant
 * this CPU has (and refused in the ones it lacks), corrupted results
 * caught, CALIBRATE_ISA.  No timed asserts. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cal_err.h"
#include "cal_isa.h"
#include "compute_peak.h"
#include "kernel.h"
#include "test_util.h"

static const char *const fma_kernels[] = {"fma_f64", "fma_f32", "dp_bf16",
                                          "dp_int8"};

/* Whether `name` runs natively in `variant` on this CPU (independently of
 * the kernel's own answer). */
static int expect_native(const char *name, int variant) {
  uint32_t f = cal_isa_features();
  if (!cal_variant_supported(variant))
    return 0;
  if (strcmp(name, "dp_bf16") == 0)
    return variant == CAL_VARIANT_AVX512 && (f & CAL_ISA_AVX512BF16);
  if (strcmp(name, "dp_int8") == 0)
    return (variant == CAL_VARIANT_AVX512 && (f & CAL_ISA_AVX512VNNI)) ||
           (variant == CAL_VARIANT_AVX2 && (f & CAL_ISA_AVXVNNI));
  return 1;
}

static void fma_every_variant(void **state) {
  (void)state;
  unsetenv("CALIBRATE_ISA");
  for (size_t i = 0; i < 4; i++) {
    const cal_kernel_t *k = cal_kernel_find(fma_kernels[i]);
    assert_non_null(k);
    assert_string_equal(cal_family_name(k->family), "fma");
    for (int v = 0; v < CAL_VARIANT_COUNT; v++) {
      cal_params_t p;
      memset(&p, 0, sizeof p);
      p.variant = v;
      p.n = 1003; /* not a multiple of the unroll: the tail loop runs too */
      const char *why = NULL;
      if (!expect_native(k->name, v)) {
        assert_int_equal(k->supported(&p, &why), CAL_EUNSUPP);
        assert_non_null(why);
        void *st = NULL;
        assert_int_equal(k->setup(&p, &st), CAL_EUNSUPP);
        assert_null(st);
        assert_true(k->flops(&p) == 0.0);
        continue;
      }
      assert_int_equal(k->supported(&p, &why), 0);
      for (int t = 1; t <= 3; t++) {
        p.threads = t;
        cal_test_kernel_life(k, &p, NULL, cal_fma_test_corrupt);
      }
      void *st = NULL;
      assert_int_equal(k->setup(&p, &st), 0);
      const char *vn = k->variant_name(st);
      if (strcmp(k->name, "dp_int8") == 0 && v == CAL_VARIANT_AVX2)
        assert_string_equal(vn, "avx-vnni");
      else
        assert_string_equal(vn, cal_variant_name(v));
      k->teardown(st);
    }
  }
}

static void fma_flops_analytic(void **state) {
  (void)state;
  cal_params_t p;
  memset(&p, 0, sizeof p);
  p.n = 1000;
  p.threads = 2;
  p.variant = CAL_VARIANT_SCALAR;
  /* 12 chains × 1 lane × 2 flops × 1000 steps × 2 threads */
  assert_double_equal(cal_kernel_find("fma_f64")->flops(&p), 48000.0, 0);
  if (cal_variant_supported(CAL_VARIANT_AVX512)) {
    p.variant = CAL_VARIANT_AVX512;
    /* 16 chains × 8 lanes × 2 × 1000 × 2 */
    assert_double_equal(cal_kernel_find("fma_f64")->flops(&p), 512000.0, 0);
    assert_double_equal(cal_kernel_find("fma_f32")->flops(&p), 1024000.0, 0);
    if (cal_isa_features() & CAL_ISA_AVX512BF16) /* 2 pairs, 2 flops each */
      assert_double_equal(cal_kernel_find("dp_bf16")->flops(&p), 2048000.0, 0);
    if (cal_isa_features() & CAL_ISA_AVX512VNNI) /* 4 pairs, 2 ops each */
      assert_double_equal(cal_kernel_find("dp_int8")->flops(&p), 4096000.0, 0);
  }
  /* the default step count is sized for ~1 ms and is positive */
  p.n = 0;
  p.variant = CAL_VARIANT_AUTO;
  assert_true(cal_kernel_find("fma_f32")->flops(&p) > 1e6);
  assert_null(cal_kernel_find("fma_f32")->bytes);
}

static void fma_rejects_inexact_counts(void **state) {
  (void)state;
  cal_params_t p;
  memset(&p, 0, sizeof p);
  p.variant = CAL_VARIANT_SCALAR;
  p.n = INT64_C(1) << 30; /* fp32 cannot count that far exactly */
  void *st = NULL;
  assert_int_equal(cal_kernel_find("fma_f32")->setup(&p, &st), CAL_EINVAL);
  p.n = 100;
  p.threads = -1;
  assert_int_equal(cal_kernel_find("fma_f64")->setup(&p, &st), CAL_EINVAL);
  assert_null(st);
}

static void forced_isa_caps_auto(void **state) {
  (void)state;
  const cal_kernel_t *f64 = cal_kernel_find("fma_f64");
  const cal_kernel_t *bf16 = cal_kernel_find("dp_bf16");
  cal_params_t p;
  memset(&p, 0, sizeof p);
  p.variant = CAL_VARIANT_AUTO;
  p.n = 64;
  setenv("CALIBRATE_ISA", "scalar", 1);
  void *st = NULL;
  assert_int_equal(f64->setup(&p, &st), 0);
  assert_string_equal(f64->variant_name(st), "scalar");
  f64->teardown(st);
  st = NULL;
  const char *why = NULL;
  assert_int_equal(bf16->supported(&p, &why), CAL_EUNSUPP);
  assert_int_equal(bf16->setup(&p, &st), CAL_EUNSUPP);
  setenv("CALIBRATE_ISA", "nonsense", 1);
  assert_int_equal(f64->setup(&p, &st), CAL_EINVAL);
  unsetenv("CALIBRATE_ISA");
  assert_int_equal(f64->setup(&p, &st), 0);
  int best;
  assert_int_equal(cal_variant_best(&best), 0);
  assert_string_equal(f64->variant_name(st), cal_variant_name(best));
  f64->teardown(st);
  f64->teardown(NULL);
}

CAL_TEST_MAIN(
    cmocka_unit_test(fma_every_variant), cmocka_unit_test(fma_flops_analytic),
    cmocka_unit_test(fma_rejects_inexact_counts),
    cmocka_unit_test(forced_isa_caps_auto))
