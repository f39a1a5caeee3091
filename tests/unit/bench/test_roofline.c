/* The roofline's arithmetic (bench/roofline.c): ridge points, attainable
 * rates, bounds, the ceilings a result is built from, and the theoretical
 * peak model. */
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
#include "roofline.h"
#include "test_util.h"

static void peak_model_arithmetic(void **state) {
  (void)state;
  assert_double_equal(cal_ops_per_instr(CAL_DT_FP64, 512), 16, 0);
  assert_double_equal(cal_ops_per_instr(CAL_DT_FP32, 512), 32, 0);
  assert_double_equal(cal_ops_per_instr(CAL_DT_BF16, 512), 64, 0);
  assert_double_equal(cal_ops_per_instr(CAL_DT_INT8, 512), 128, 0);
  assert_double_equal(cal_ops_per_instr(CAL_DT_FP32, 256), 16, 0);
  assert_double_equal(cal_ops_per_instr(CAL_DT_FP32, 0), 2, 0);
  assert_double_equal(cal_ops_per_instr(CAL_DT_INT8, 0), 0, 0);
  assert_double_equal(cal_ops_per_instr(7, 512), 0, 0);

  cal_theory_t m;
  uint32_t all = CAL_ISA_AVX512BF16 | CAL_ISA_AVX512VNNI;
  assert_int_equal(cal_theory_init(&m, CAL_VARIANT_AVX512, all, 2.5, 2), 0);
  /* 8 lanes × 2 flops × 2 FMAs × 2.5 GHz = 80 per core, 160 for 2 */
  assert_double_equal(cal_theory_gflops_core(&m, CAL_DT_FP64), 80.0, 1e-9);
  assert_double_equal(cal_theory_gflops(&m, CAL_DT_FP64), 160.0, 1e-9);
  assert_double_equal(cal_theory_gflops_core(&m, CAL_DT_FP32), 160.0, 1e-9);
  /* vdpbf16ps: 64 flops per instruction, one per 2 cycles */
  assert_double_equal(cal_theory_gflops_core(&m, CAL_DT_BF16), 80.0, 1e-9);
  /* vpdpbusd: 128 ops, 2 per cycle */
  assert_double_equal(cal_theory_gflops_core(&m, CAL_DT_INT8), 640.0, 1e-9);
  assert_non_null(strstr(m.assumption, "2 FMA units"));
  /* a measurement near 1 FMA per cycle revises the assumption */
  assert_double_equal(cal_theory_refine(&m, CAL_DT_FP64, 41.0), 1.0, 0);
  assert_double_equal(cal_theory_gflops_core(&m, CAL_DT_FP64), 40.0, 1e-9);
  assert_non_null(strstr(m.assumption, "fp64 measured"));
  /* one near the assumption keeps it */
  assert_double_equal(cal_theory_refine(&m, CAL_DT_FP32, 150.0), 2.0, 0);

  assert_int_equal(cal_theory_init(&m, CAL_VARIANT_AVX2, 0, 3.0, 1), 0);
  assert_double_equal(cal_theory_gflops_core(&m, CAL_DT_FP64), 48.0, 1e-9);
  assert_double_equal(cal_theory_gflops(&m, CAL_DT_BF16), 0.0, 0);
  assert_double_equal(cal_theory_gflops(&m, CAL_DT_INT8), 0.0, 0);
  assert_int_equal(cal_theory_init(&m, CAL_VARIANT_SCALAR, 0, 2.0, 4), 0);
  assert_double_equal(cal_theory_gflops(&m, CAL_DT_FP32), 2.0 * 2 * 2.0 * 4, 1e-9);
  assert_int_equal(cal_theory_init(&m, CAL_VARIANT_AVX2, 0, 0.0, 1),
                   CAL_EINVAL);
  assert_int_equal(cal_theory_init(&m, CAL_VARIANT_AVX2, 0, 1.0, 0),
                   CAL_EINVAL);
  assert_int_equal(cal_theory_init(&m, 9, 0, 1.0, 1), CAL_EINVAL);
}

static void roofline_arithmetic(void **state) {
  (void)state;
  /* 100 GFLOPS over 20 GB/s: ridge at 5 FLOP/byte */
  assert_double_equal(cal_ridge_point(100, 20), 5.0, 1e-12);
  assert_double_equal(cal_ridge_point(0, 20), 0.0, 0);
  assert_double_equal(cal_attainable_gflops(100, 20, 2), 40.0, 1e-12);
  assert_double_equal(cal_attainable_gflops(100, 20, 5), 100.0, 1e-12);
  assert_double_equal(cal_attainable_gflops(100, 20, 50), 100.0, 1e-12);
  cal_bound_t b;
  double eff;
  assert_int_equal(cal_roofline_classify(100, 20, 2, 30, &b, &eff), 0);
  assert_int_equal(b, CAL_BOUND_MEMORY);
  assert_double_equal(eff, 0.75, 1e-12);
  assert_int_equal(cal_roofline_classify(100, 20, 10, 90, &b, &eff), 0);
  assert_int_equal(b, CAL_BOUND_COMPUTE);
  assert_double_equal(eff, 0.9, 1e-12);
  assert_string_equal(cal_bound_name(b), "compute");
  assert_int_equal(cal_roofline_classify(100, 0, 10, 90, &b, &eff), CAL_EINVAL);
  assert_int_equal(cal_roofline_classify(100, 20, 10, -1, &b, &eff), CAL_EINVAL);

  cal_roofline_t r;
  memset(&r, 0, sizeof r);
  assert_int_equal(cal_roofline_add_bandwidth(&r, "L1", 200, "stream_read"), 0);
  assert_int_equal(cal_roofline_add_bandwidth(&r, "memory", 10, "stream_triad"), 0);
  assert_int_equal(cal_roofline_add_bandwidth(&r, "memory", 12, "stream_read"), 0);
  assert_int_equal(cal_roofline_add_bandwidth(&r, "memory", 11, "stream_copy"), 0);
  assert_int_equal(r.nlevels, 2);
  assert_double_equal(cal_roofline_gbps(&r, "memory"), 12.0, 0);
  assert_string_equal(r.bandwidth_kernel[1], "stream_read");
  assert_double_equal(cal_roofline_gbps(&r, "L2"), 0.0, 0);
  assert_int_equal(cal_roofline_add_compute(&r, CAL_DT_FP64, 80, "fma_f64"), 0);
  assert_int_equal(cal_roofline_add_compute(&r, 9, 80, "x"), CAL_EINVAL);
  assert_int_equal(cal_roofline_add_compute(&r, CAL_DT_FP64, NAN, "x"), CAL_EINVAL);
  int dt;
  assert_int_equal(cal_ceiling_dtype_parse("bf16", &dt), 0);
  assert_int_equal(dt, CAL_DT_BF16);
  assert_int_equal(cal_ceiling_dtype_parse("fp8", &dt), CAL_EINVAL);
}

CAL_TEST_MAIN(
    cmocka_unit_test(peak_model_arithmetic),
    cmocka_unit_test(roofline_arithmetic))
