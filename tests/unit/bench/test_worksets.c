/* The working sets of the bandwidth section (bench/worksets.c): one per
 * cache level from the cache sizes, and the staircase of sizes. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cal_err.h"
#include "test_util.h"
#include "worksets.h"

static void worksets_from_caches(void **state) {
  (void)state;
  /* 48 KiB L1d and 2 MiB L2 per core, 260 MiB L3 shared by 2 cores */
  cal_cache_sizes_t c = {48 << 10, 2 << 20, INT64_C(260) << 20, 1, 1, 2};
  cal_workset_t ws[CAL_WS_MAX_LEVELS];
  size_t n;
  assert_int_equal(cal_bandwidth_worksets(&c, 1, 4.0, 0, ws, &n), 0);
  assert_int_equal(n, 4);
  assert_string_equal(ws[0].level, "L1");
  assert_int_equal(ws[0].bytes, 24 << 10);
  assert_string_equal(ws[1].level, "L2");
  assert_int_equal(ws[1].bytes, 1 << 20);
  assert_string_equal(ws[2].level, "L3");
  assert_int_equal(ws[2].bytes, INT64_C(8) << 20); /* 4 × the 2 MiB L2 */
  assert_string_equal(ws[3].level, "memory");
  assert_int_equal(ws[3].bytes, INT64_C(1040) << 20);
  assert_false(ws[3].capped);
  /* a time budget caps memory, but never below twice the capacity the L3
   * point stands for (2 × its 8 MiB working set) */
  assert_int_equal(cal_bandwidth_worksets(&c, 1, 4.0, INT64_C(600) << 20, ws, &n), 0);
  assert_int_equal(ws[3].bytes, INT64_C(600) << 20);
  assert_true(ws[3].capped);
  assert_int_equal(cal_bandwidth_worksets(&c, 1, 4.0, INT64_C(100) << 20, ws, &n), 0);
  assert_int_equal(ws[3].bytes, INT64_C(100) << 20);
  assert_true(ws[3].capped);
  assert_int_equal(cal_bandwidth_worksets(&c, 1, 4.0, INT64_C(20) << 20, ws, &n), 0);
  assert_int_equal(ws[3].bytes, INT64_C(32) << 20);
  assert_true(ws[3].capped);
  assert_false(ws[2].capped);
  /* two threads: private levels double; memory follows the whole L3 */
  assert_int_equal(cal_bandwidth_worksets(&c, 2, 4.0, 0, ws, &n), 0);
  assert_int_equal(ws[0].bytes, 48 << 10);
  assert_int_equal(ws[1].bytes, 2 << 20);
  assert_int_equal(ws[2].bytes, INT64_C(16) << 20);
  assert_int_equal(ws[3].bytes, INT64_C(1040) << 20);
  /* three threads span two L3 instances: memory follows both */
  assert_int_equal(cal_bandwidth_worksets(&c, 3, 4.0, 0, ws, &n), 0);
  assert_int_equal(ws[2].bytes, INT64_C(24) << 20);
  assert_int_equal(ws[3].bytes, INT64_C(2080) << 20);
  /* a small shared L3 (8 MiB over 4 cores of 512 KiB L2): half of it */
  cal_cache_sizes_t desk = {32 << 10, 512 << 10, 8 << 20, 1, 1, 4};
  assert_int_equal(cal_bandwidth_worksets(&desk, 4, 4.0, 0, ws, &n), 0);
  assert_int_equal(ws[2].bytes, 4 << 20);
  /* no L3: memory from L2, at least 64 MiB */
  cal_cache_sizes_t small = {32 << 10, 1 << 20, 0, 0, 0, 0};
  assert_int_equal(cal_bandwidth_worksets(&small, 1, 4.0, 0, ws, &n), 0);
  assert_int_equal(n, 3);
  assert_string_equal(ws[2].level, "memory");
  assert_int_equal(ws[2].bytes, INT64_C(64) << 20);
  cal_cache_sizes_t none = {0, 0, 0, 0, 0, 0};
  assert_int_equal(cal_bandwidth_worksets(&none, 1, 4.0, 0, ws, &n), CAL_EINVAL);
  assert_int_equal(cal_bandwidth_worksets(&c, 0, 4.0, 0, ws, &n), CAL_EINVAL);
  assert_int_equal(cal_bandwidth_worksets(&c, 1, 0.5, 0, ws, &n), CAL_EINVAL);
}

static void staircase_sizes(void **state) {
  (void)state;
  int64_t s[64];
  /* 4 KiB .. 1 MiB, 2 per octave: 8 octaves, 17 sizes */
  int n = cal_staircase(4096, 1 << 20, 2, s, 64);
  assert_int_equal(n, 17);
  assert_int_equal(s[0], 4096);
  assert_int_equal(s[1], 6144); /* 4096·√2 = 5793 -> 6 KiB */
  assert_int_equal(s[2], 8192);
  assert_int_equal(s[n - 1], 1 << 20);
  for (int i = 1; i < n; i++) {
    assert_true(s[i] > s[i - 1]);
    assert_int_equal(s[i] % CAL_WS_GRAIN, 0);
  }
  /* counting only, and a top that is not on the grid */
  assert_int_equal(cal_staircase(4096, 1 << 20, 2, NULL, 0), 17);
  n = cal_staircase(4096, 10000, 1, s, 64);
  assert_int_equal(n, 3);
  assert_int_equal(s[2], 10240);
  /* cap smaller than the count: the count is still returned */
  assert_int_equal(cal_staircase(4096, 1 << 20, 2, s, 4), 17);
  assert_int_equal(cal_staircase(0, 10, 1, s, 64), CAL_EINVAL);
  assert_int_equal(cal_staircase(100, 10, 1, s, 64), CAL_EINVAL);
  assert_int_equal(cal_staircase(10, 100, 0, s, 64), CAL_EINVAL);
}

CAL_TEST_MAIN(
    cmocka_unit_test(worksets_from_caches), cmocka_unit_test(staircase_sizes))
