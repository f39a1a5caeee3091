/* Helpers shared by the cmocka tests.  Include after <cmocka.h>. */
#ifndef CAL_TEST_UTIL_H
#define CAL_TEST_UTIL_H

#include <math.h>

/* cmocka 1.1 compares floats only in single precision; this is for doubles:
 * |a - b| <= eps (eps = 0 demands equality). */
#define assert_double_equal(a, b, eps)                                       \
  do {                                                                       \
    double a_ = (a), b_ = (b), e_ = (eps);                                   \
    if (!(fabs(a_ - b_) <= e_))                                              \
      fail_msg("%s = %.17g, expected %.17g (tolerance %g)", #a, a_, b_, e_); \
  } while (0)

#endif
