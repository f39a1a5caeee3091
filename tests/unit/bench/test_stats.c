/* The statistics of a set of samples (bench/stats.c): summaries, medians
 * and their distribution-free confidence intervals. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cal_err.h"
#include "test_util.h"
#include "stats.h"

static void summary_hand_computed(void **state) {
  (void)state;
  /* x = 1..7 with one outlier: 1 2 3 4 5 6 100 */
  const double x[] = {4, 1, 100, 3, 6, 2, 5};
  cal_summary_t s;
  assert_int_equal(cal_summarize(x, 7, 0.95, &s), 0);
  assert_int_equal(s.n, 7);
  assert_double_equal(s.median, 4.0, 1e-12);
  assert_double_equal(s.mean, 121.0 / 7.0, 1e-12);
  assert_double_equal(s.min, 1.0, 0);
  assert_double_equal(s.max, 100.0, 0);
  /* deviations from 4: 0 3 96 1 2 2 1 -> sorted 0 1 1 2 2 3 96 -> MAD 2 */
  assert_double_equal(s.mad, 2.0, 1e-12);
  /* sum of squares about the mean is 7999.43; / 6, square root */
  double m = 121.0 / 7.0, ss = 0;
  for (int i = 0; i < 7; i++)
    ss += (x[i] - m) * (x[i] - m);
  assert_double_equal(s.stddev, sqrt(ss / 6.0), 1e-9);
  assert_double_equal(s.stddev, 36.5135, 1e-3);
  assert_double_equal(s.cv, s.stddev / m, 1e-12);
  /* n = 7: [x(1), x(7)] covers with 1 - 2/128 = 0.984375; [x(2), x(6)]
   * only 0.875, below 0.95 */
  assert_double_equal(s.ci_low, 1.0, 0);
  assert_double_equal(s.ci_high, 100.0, 0);
  assert_double_equal(s.ci_level, 126.0 / 128.0, 1e-12);
}

static void median_ci_ranks_known(void **state) {
  (void)state;
  size_t lo, hi;
  double cov;
  /* n = 20 at 95%: ranks 6 and 15, coverage 0.9586 (standard tables) */
  cal_median_ci_ranks(20, 0.95, &lo, &hi, &cov);
  assert_int_equal(lo, 6);
  assert_int_equal(hi, 15);
  assert_double_equal(cov, 0.9586, 1e-4);
  /* n = 10: ranks 2 and 9, coverage 0.9785 */
  cal_median_ci_ranks(10, 0.95, &lo, &hi, &cov);
  assert_int_equal(lo, 2);
  assert_int_equal(hi, 9);
  assert_double_equal(cov, 0.9785, 1e-4);
  /* Issue 27: the search summed a binomial for every rank (171 s at
   * 100k samples); a million is now linear.  The normal approximation
   * n/2 -+ 1.96 sqrt(n)/2 gives ranks 499020 and 500981. */
  cal_median_ci_ranks(1000000, 0.95, &lo, &hi, &cov);
  assert_int_equal(lo, 499020);
  assert_int_equal(hi, 500981);
  assert_true(cov >= 0.95 && cov < 0.951);
}

static void even_median_and_bad_input(void **state) {
  (void)state;
  const double x[] = {3, 1, 4, 2};
  assert_double_equal(cal_median(x, 4), 2.5, 1e-12);
  cal_summary_t s;
  assert_int_equal(cal_summarize(x, 0, 0.95, &s), CAL_EINVAL);
  const double bad[] = {1, NAN, 2};
  assert_int_equal(cal_summarize(bad, 3, 0.95, &s), CAL_EINVAL);
  const double one[] = {5};
  assert_int_equal(cal_summarize(one, 1, 0.95, &s), 0);
  assert_double_equal(s.stddev, 0, 0);
  assert_double_equal(s.median, 5, 0);
}

CAL_TEST_MAIN(
    cmocka_unit_test(summary_hand_computed),
    cmocka_unit_test(median_ci_ranks_known),
    cmocka_unit_test(even_median_and_bad_input))
