/* The clock estimate's arithmetic (bench/clock.c): GHz from a chain of
 * dependent adds, and a measured chain where the CPU has it. */
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
#include "clock.h"
#include "compute_peak.h"
#include "test_util.h"

static void clock_arithmetic(void **state) {
  (void)state;
  /* 3e9 one-cycle adds in 1 s: 3 GHz; 1e9 four-cycle ops in 2 s: 2 GHz */
  assert_double_equal(cal_clock_ghz_from_chain(3e9, 1, 1.0), 3.0, 1e-12);
  assert_double_equal(cal_clock_ghz_from_chain(1e9, 4, 2.0), 2.0, 1e-12);
  assert_double_equal(cal_clock_ghz_from_chain(1e9, 1, 0.0), 0.0, 0);
  assert_double_equal(cal_clock_ghz_from_chain(-1, 1, 1.0), 0.0, 0);
  /* a real measurement runs in every variant the CPU has; only sanity */
  for (int v = 0; v < CAL_VARIANT_COUNT; v++) {
    cal_clock_t c;
    int rc = cal_clock_measure(v, 1e-4, &c);
    if (!cal_variant_supported(v)) {
      assert_int_equal(rc, CAL_EUNSUPP);
      continue;
    }
    assert_int_equal(rc, 0);
    assert_true(c.ghz > 0 && isfinite(c.ghz));
    assert_int_equal(c.n, CAL_CLOCK_SAMPLES);
    assert_int_equal(c.variant, v);
    assert_non_null(c.method);
  }
  /* the chains compute what they say: 64 adds of 1 per iteration */
  assert_int_equal(cal_clock_chain_scalar(10, 5), 5 + 10 * CAL_CLOCK_CHAIN_LEN);
  if (cal_variant_supported(CAL_VARIANT_AVX512))
    assert_int_equal(cal_clock_chain_avx512(3, 0), 3 * CAL_CLOCK_CHAIN_LEN);
  if (cal_variant_supported(CAL_VARIANT_AVX2))
    assert_int_equal(cal_clock_chain_avx2(3, 0), 3 * CAL_CLOCK_CHAIN_LEN);
}

CAL_TEST_MAIN(
    cmocka_unit_test(clock_arithmetic))
