/* The deterministic fills (kernels/core/cal_mem.c): a fill below
 * CAL_FILL_TEAM_MIN is the stream's values in order; a larger one, run on
 * the team in blocks, gives the same values on one thread as on several,
 * each in [lo, hi] (hi by rounding only), and leaves the stream where
 * the next fill starts the same way, and a part of it (cal_fill_f32_part)
 * has the same values there; cal_memset_team sets every byte, the last
 * ones too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "cal_mem.h"

/* Small blocks on 64 bytes; from 4 MiB on 2 MiB boundaries, where huge
 * pages can back them; every byte usable. */
static void alloc_alignment(void **state) {
  (void)state;
  unsigned char *s = cal_alloc(100), *b = cal_alloc((size_t)5 << 20);
  assert_non_null(s);
  assert_non_null(b);
  assert_int_equal((uintptr_t)s % 64, 0);
  assert_int_equal((uintptr_t)b % ((size_t)2 << 20), 0);
  memset(b, 1, (size_t)5 << 20);
  assert_int_equal(b[((size_t)5 << 20) - 1], 1);
  assert_null(cal_alloc(0));
  assert_null(cal_alloc(SIZE_MAX));
  cal_free(s);
  cal_free(b);
}

static void small_fill_is_the_stream(void **state) {
  (void)state;
  const size_t n = 1000;
  float *x = cal_alloc(4 * n);
  assert_non_null(x);
  cal_rng_t r, s;
  cal_rng_seed(&r, 42);
  cal_rng_seed(&s, 42);
  cal_fill_f32(x, n, -2.0f, 2.0f, &r);
  for (size_t i = 0; i < n; i++)
    assert_true(x[i] == -2.0f + 4.0f * (float)cal_rng_uniform(&s));
  assert_memory_equal(&r, &s, sizeof r);
  cal_free(x);
}

/* a team fill of n (not a whole number of blocks) on `threads` threads,
 * and the stream's next draw after it */
static float *team_fill(size_t n, int threads, uint64_t *next) {
  float *x = cal_alloc(4 * n);
  assert_non_null(x);
  int was = omp_get_max_threads();
  omp_set_num_threads(threads);
  cal_rng_t r;
  cal_rng_seed(&r, 7);
  cal_fill_f32(x, n, 0.5f, 1.5f, &r);
  omp_set_num_threads(was);
  *next = cal_rng_next(&r);
  return x;
}

static void team_fill_same_on_any_team(void **state) {
  (void)state;
  const size_t n = CAL_FILL_TEAM_MIN / 4 + 3 * CAL_FILL_BLOCK + 17;
  uint64_t n1, n2;
  float *a = team_fill(n, 1, &n1), *b = team_fill(n, 2, &n2);
  assert_memory_equal(a, b, 4 * n);
  assert_true(n1 == n2);
  size_t same = 0;
  for (size_t i = 0; i < n; i++) {
    assert_true(a[i] >= 0.5f && a[i] <= 1.5f);
    same += i && a[i] == a[i - 1];
  }
  /* the blocks' streams differ: neighbours almost never repeat, and a
   * block's values are not its neighbour's */
  assert_true(same < n / 1000);
  assert_memory_not_equal(a, a + CAL_FILL_BLOCK, 4 * 64);
  cal_free(a);
  cal_free(b);
}

/* a large fill a part at a time: each part, at any offset and length,
 * block-aligned or not, on one thread or the team, is the whole fill's
 * values there */
static void part_is_the_whole_fill(void **state) {
  (void)state;
  const size_t n = CAL_FILL_TEAM_MIN / 4 + 3 * CAL_FILL_BLOCK + 17;
  uint64_t next;
  float *a = team_fill(n, 2, &next);
  cal_rng_t r;
  cal_rng_seed(&r, 7); /* team_fill's stream: its one draw is the base */
  const uint64_t base = cal_rng_next(&r);
  float *x = cal_alloc(4 * n);
  assert_non_null(x);
  const size_t parts[][2] = {{0, 1},
                             {0, CAL_FILL_BLOCK},
                             {5, 3},
                             {CAL_FILL_BLOCK - 2, 5},
                             {3 * CAL_FILL_BLOCK + 11, 2 * CAL_FILL_BLOCK},
                             {n - 9, 9},
                             {1, n - 1}}; /* the team's, past its size */
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
    memset(x, 0, 4 * n);
    cal_fill_f32_part(x, parts[i][0], parts[i][1], 0.5f, 1.5f, base);
    if (memcmp(x, a + parts[i][0], 4 * parts[i][1]) != 0)
      fail_msg("part %zu (+%zu) differs from the whole fill", parts[i][0],
               parts[i][1]);
    assert_true(x[parts[i][1]] == 0.0f); /* nothing past it */
  }
  cal_free(x);
  cal_free(a);
}

static void memset_team_every_byte(void **state) {
  (void)state;
  const size_t n = CAL_FILL_TEAM_MIN + 4099; /* not whole lines */
  unsigned char *p = cal_alloc(n);
  assert_non_null(p);
  memset(p, 0, n);
  cal_memset_team(p, 0xab, n);
  for (size_t i = 0; i < n; i++)
    if (p[i] != 0xab)
      fail_msg("byte %zu of %zu not set", i, n);
  cal_memset_team(p, 0x11, 100); /* below the team's size: plain */
  assert_int_equal(p[99], 0x11);
  assert_int_equal(p[100], 0xab);
  cal_free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(alloc_alignment),
      cmocka_unit_test(small_fill_is_the_stream),
      cmocka_unit_test(team_fill_same_on_any_team),
      cmocka_unit_test(part_is_the_whole_fill),
      cmocka_unit_test(memset_team_every_byte),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
