/* A point's memory (memuse.h): /proc/self/status parsing, the peak a
 * point raises when it touches N MiB, the swapped rule, and the batch
 * sweep's curve, whose optimum and batch-1 latency never come from a
 * point that swapped. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "batch_sweep.h"
#include "cal_err.h"
#include "memuse.h"
#include "options.h"
#include "test_util.h"

static void parse_status(void **state) {
  (void)state;
  cal_memstat_t s;
  const char *text = "Name:\tcalibrate\nVmPeak:\t  900 kB\nVmHWM:\t   4096 kB\n"
                     "VmRSS:\t    2048 kB\nVmSwap:\t      16 kB\n";
  assert_int_equal(cal_memstat_parse(text, &s), 0);
  assert_double_equal(s.hwm, 4096.0 * 1024, 0);
  assert_double_equal(s.rss, 2048.0 * 1024, 0);
  assert_double_equal(s.swap, 16.0 * 1024, 0);
  /* a kernel without swap accounting: swap unknown */
  assert_int_equal(cal_memstat_parse("VmHWM:\t1 kB\nVmRSS:\t1 kB\n", &s), 0);
  assert_true(isnan(s.swap));
  /* VmRSSx is not VmRSS; nothing known is an error */
  assert_int_equal(cal_memstat_parse("VmRSSx:\t1 kB\nName:\tx\n", &s),
                   CAL_EPARSE);
}

/* Touching 64 MiB inside a point raises its peak by about 64 MiB. */
static void peak_rises(void **state) {
  (void)state;
  const size_t mib = 64, bytes = mib << 20;
  cal_memuse_t u;
  cal_memuse_begin(&u);
  if (!u.known)
    skip(); /* no /proc/self/status here */
  unsigned char *p = malloc(bytes);
  assert_non_null(p);
  for (size_t i = 0; i < bytes; i += 4096)
    p[i] = (unsigned char)(i >> 12 | 1);
  cal_memuse_end(&u);
  volatile unsigned char sink = p[bytes - 4096];
  (void)sink;
  free(p);
  assert_true(u.known);
  assert_false(isnan(u.peak_rss)); /* the point raised the peak */
  double rise = (u.peak_rss - u.rss_before) / (double)bytes;
  if (rise < 0.9 || rise > 1.3)
    fail_msg("the peak rose by %.2f x the %zu MiB touched", rise, mib);
  assert_true(u.major_faults >= 0);
}

static cal_memuse_t figures(double swap0, double swap1, long faults) {
  cal_memuse_t u;
  memset(&u, 0, sizeof u);
  u.known = 1;
  u.swap_before = swap0;
  u.swap_after = swap1;
  u.major_faults = faults;
  return u;
}

static void swapped_rule(void **state) {
  (void)state;
  cal_memuse_t u = figures(0, 0, 0);
  assert_false(cal_memuse_swapped(&u));
  u = figures(0, 4096, 0); /* swap grew */
  assert_true(cal_memuse_swapped(&u));
  u = figures(0, 0, 12); /* file pages read back, nothing in swap */
  assert_false(cal_memuse_swapped(&u));
  u = figures(8192, 4096, 3); /* swap-ins */
  assert_true(cal_memuse_swapped(&u));
  u = figures(NAN, NAN, 1); /* no swap figures: any major fault counts */
  assert_true(cal_memuse_swapped(&u));
  u = figures(NAN, NAN, 0);
  assert_false(cal_memuse_swapped(&u));
}

/* A prefill curve 1, 2, 4 rising to batch 4, which swapped: the optimum
 * is batch 2, and batch 1's latency stays unless batch 1 swapped. */
static void swapped_point_is_no_headline(void **state) {
  (void)state;
  cal_opts_t opt;
  memset(&opt, 0, sizeof opt);
  opt.sweep.tolerance = 0.05;
  opt.hcfg.ci_level = 0.95;
  cal_run_t r = {&opt, NULL, NULL};
  double s1[3] = {10, 10.1, 9.9}, s2[3] = {20, 20.1, 19.9},
         s4[3] = {40, 40.1, 39.9};
  double *samples[3] = {s1, s2, s4};
  cal_batch_point_t pts[3];
  memset(pts, 0, sizeof pts);
  for (int i = 0; i < 3; i++) {
    pts[i].batch = (int64_t)1 << i;
    pts[i].status = CAL_POINT_OK;
    pts[i].examples_per_s = samples[i];
    pts[i].n = 3;
    pts[i].pt.m.time.median = (double)pts[i].batch / samples[i][0];
  }
  pts[2].mem.swapped = 1;
  cal_batch_mode_t m;
  memset(&m, 0, sizeof m);
  m.points = pts;
  m.npoints = 3;
  sweep_t s;
  memset(&s, 0, sizeof s);
  s.r = &r;
  s.m = &m;
  assert_int_equal(cal_sweep_analyze(&s), 0);
  assert_int_equal(m.curve->optimal_batch_size, 2);
  assert_int_equal(m.curve->peak_batch_size, 2);
  assert_double_equal(m.latency_ms_batch_1, 100.0, 1e-9);
  cal_curve_result_free(m.curve);
  /* without the swap, batch 4 is the optimum */
  pts[2].mem.swapped = 0;
  pts[0].mem.swapped = 1;
  m.curve = NULL;
  m.latency_ms_batch_1 = NAN;
  assert_int_equal(cal_sweep_analyze(&s), 0);
  assert_int_equal(m.curve->optimal_batch_size, 4);
  assert_true(isnan(m.latency_ms_batch_1));
  cal_curve_result_free(m.curve);
}

CAL_TEST_MAIN(cmocka_unit_test(parse_status),
              cmocka_unit_test(peak_rises),
              cmocka_unit_test(swapped_rule),
              cmocka_unit_test(swapped_point_is_no_headline))
