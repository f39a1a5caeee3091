/* The stream kernels (kernels/peak/stream.c): read, copy and triad checked
 * against their closed forms in every variant this CPU has, corrupted
 * results caught, and the traffic each counts.  No timed asserts. */
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
#include "kernel.h"
#include "stream.h"
#include "test_util.h"

static const char *const stream_kernels[] = {"stream_read", "stream_copy",
                                             "stream_triad"};

static void stream_every_variant(void **state) {
  (void)state;
  unsetenv("CALIBRATE_ISA");
  /* odd sizes: blocks of unequal length, tails past the unrolled loops */
  const int64_t sizes[] = {3 * 8 * 64, 100000, 3 * 8 * 1000 + 777};
  for (size_t i = 0; i < 3; i++) {
    const cal_kernel_t *k = cal_kernel_find(stream_kernels[i]);
    assert_non_null(k);
    for (int v = 0; v < CAL_VARIANT_COUNT; v++) {
      cal_params_t p;
      memset(&p, 0, sizeof p);
      p.variant = v;
      p.bytes = sizes[0];
      p.n = 3; /* passes per run (the default makes 64 MiB of traffic) */
      if (!cal_variant_supported(v)) {
        const char *why = NULL;
        void *st = NULL;
        assert_int_equal(k->supported(&p, &why), CAL_EUNSUPP);
        assert_int_equal(k->setup(&p, &st), CAL_EUNSUPP);
        continue;
      }
      for (size_t s = 0; s < 3; s++)
        for (int t = 1; t <= 3; t++) {
          p.bytes = sizes[s];
          p.threads = t;
          cal_test_kernel_life(k, &p, NULL, cal_stream_test_corrupt);
        }
    }
  }
}

static void stream_traffic_counts(void **state) {
  (void)state;
  cal_params_t p;
  memset(&p, 0, sizeof p);
  p.bytes = 24000 + 100; /* triad: 1004 doubles per array -> 1000 */
  double counted, actual;
  /* by default a run passes over small arrays until 64 MiB are counted */
  assert_int_equal(cal_stream_passes("stream_triad", &p), 2797);
  assert_int_equal(cal_stream_traffic("stream_triad", &p, &counted, &actual), 0);
  assert_double_equal(counted, 24000.0 * 2797, 0);
  p.bytes = INT64_C(3) << 30; /* large working sets: one pass */
  assert_int_equal(cal_stream_passes("stream_triad", &p), 1);
  assert_int_equal(cal_stream_passes("sgemm", &p), 0);
  p.bytes = 24000 + 100;
  p.n = 1; /* one pass, as asked */
  assert_int_equal(cal_stream_elems("stream_triad", &p), 1000);
  assert_int_equal(cal_stream_traffic("stream_triad", &p, &counted, &actual), 0);
  assert_double_equal(counted, 24000.0, 0);
  assert_double_equal(actual, 32000.0, 0);
  assert_double_equal(cal_kernel_find("stream_triad")->bytes(&p), 24000.0, 0);
  assert_double_equal(cal_kernel_find("stream_triad")->flops(&p), 2000.0, 0);
  /* copy: 1506 doubles per array -> 1504 */
  assert_int_equal(cal_stream_traffic("stream_copy", &p, &counted, &actual), 0);
  assert_double_equal(counted, 16.0 * 1504, 0);
  assert_double_equal(actual, 24.0 * 1504, 0);
  assert_int_equal(cal_stream_traffic("stream_read", &p, &counted, &actual), 0);
  assert_double_equal(counted, 8.0 * 3008, 0);
  assert_double_equal(actual, counted, 0);
  assert_int_equal(cal_stream_traffic("sgemm", &p, &counted, &actual), CAL_EINVAL);
  /* too small for one line per array */
  p.bytes = 100;
  void *st = NULL;
  assert_int_equal(cal_kernel_find("stream_triad")->setup(&p, &st), CAL_EINVAL);
  assert_null(st);
}

CAL_TEST_MAIN(
    cmocka_unit_test(stream_every_variant),
    cmocka_unit_test(stream_traffic_counts))
