/* The network's share of a data-parallel step (plan_net.h) on given
 * numbers: compute-bound, network-bound, the crossover, and the all-reduce
 * curve's interpolation. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cal_err.h"
#include "plan_net.h"

#define NEAR(a, b) assert_true(fabs((a) - (b)) <= 1e-9 * fmax(1, fabs(b)))

/* 100 and 50 examples/s, 300 examples a step: 2 s of compute, 3 s for
 * the faster machine alone. */
static const double thr2[] = {100, 50};

static void compute_bound(void **state) {
  (void)state;
  cal_net_step_t s;
  assert_int_equal(cal_net_step(thr2, 2, 300, 0.05, 0.10, &s), 0);
  NEAR(s.compute_s, 2.0);
  NEAR(s.step_s, 2.05);
  NEAR(s.step_overlap_s, 2.0);
  NEAR(s.alone_s, 3.0);
  assert_false(s.slower_than_fastest);
  assert_false(s.slower_overlap);
  NEAR(s.fleet_throughput, 300 / 2.05);
  NEAR(s.allreduce_fraction, 0.05 / 2.05);
  assert_int_equal(s.crossover_accum, 1);
  assert_int_equal(s.amortise_accum, 1); /* 0.05 x 0.9 / (0.1 x 2) < 1 */
  assert_int_equal(s.accum, 1);
}

static void network_bound(void **state) {
  (void)state;
  cal_net_step_t s;
  assert_int_equal(cal_net_step(thr2, 2, 300, 4.0, 0.10, &s), 0);
  NEAR(s.step_s, 6.0);
  NEAR(s.step_overlap_s, 4.0); /* even fully hidden, 4 s > 3 s */
  assert_true(s.slower_than_fastest);
  assert_true(s.slower_overlap);
  /* k x 2 + 4 < k x 3 from k = 5 (k = 4 ties) */
  assert_int_equal(s.crossover_accum, 5);
  /* 4 / (k x 2 + 4) <= 0.1 from k = 18 */
  assert_int_equal(s.amortise_accum, 18);
  assert_int_equal(s.accum, 18);
  NEAR(s.accum_step_s, 40.0);
  NEAR(s.accum_throughput, 18 * 300 / 40.0);
}

static void crossover(void **state) {
  (void)state;
  cal_net_step_t s;
  /* all-reduce 1 s: the step ties the fastest alone (3 s): not slower */
  assert_int_equal(cal_net_step(thr2, 2, 300, 1.0, 0.10, &s), 0);
  NEAR(s.step_s, 3.0);
  assert_false(s.slower_than_fastest);
  assert_int_equal(s.crossover_accum, 2); /* 2 x 2 + 1 = 5 < 6 */
  /* a little more: slower without accumulation, overlap hides it */
  assert_int_equal(cal_net_step(thr2, 2, 300, 1.01, 0.10, &s), 0);
  assert_true(s.slower_than_fastest);
  assert_false(s.slower_overlap);
  assert_int_equal(s.crossover_accum, 2);
  /* one machine: the fleet never beats it */
  const double one[] = {100, NAN};
  assert_int_equal(cal_net_step(one, 2, 300, 0.5, 0.10, &s), 0);
  assert_true(s.slower_than_fastest);
  assert_int_equal(s.crossover_accum, 0);
  assert_int_equal(s.amortise_accum, 2); /* 0.5 x 0.9 / (0.1 x 3) = 1.5 */
}

static void bad_steps(void **state) {
  (void)state;
  cal_net_step_t s;
  const double none[] = {0, -1};
  assert_int_equal(cal_net_step(none, 2, 300, 1, 0.1, &s), CAL_EINVAL);
  assert_int_equal(cal_net_step(thr2, 2, 0, 1, 0.1, &s), CAL_EINVAL);
  assert_int_equal(cal_net_step(thr2, 2, 300, -1, 0.1, &s), CAL_EINVAL);
  assert_int_equal(cal_net_step(thr2, 2, 300, 1, 1.0, &s), CAL_EINVAL);
}

static void curve(void **state) {
  (void)state;
  const double b[] = {1024, 4096}, t[] = {1e-5, 4e-5};
  cal_net_curve_t c = {b, t, 2};
  double v;
  int ex;
  assert_int_equal(cal_net_allreduce_s(&c, 2048, &v, &ex), 0);
  NEAR(v, 2e-5); /* log-log: halfway */
  assert_false(ex);
  assert_int_equal(cal_net_allreduce_s(&c, 512, &v, &ex), 0);
  NEAR(v, 1e-5); /* latency floor */
  assert_false(ex);
  assert_int_equal(cal_net_allreduce_s(&c, 4096, &v, &ex), 0);
  NEAR(v, 4e-5);
  assert_false(ex);
  assert_int_equal(cal_net_allreduce_s(&c, 8192, &v, &ex), 0);
  NEAR(v, 8e-5); /* the largest size's bandwidth */
  assert_true(ex);
  const double bb[] = {4096, 1024};
  cal_net_curve_t bad = {bb, t, 2};
  assert_int_equal(cal_net_allreduce_s(&bad, 2048, &v, &ex), CAL_EINVAL);
  cal_net_curve_t empty = {b, t, 0};
  assert_int_equal(cal_net_allreduce_s(&empty, 2048, &v, &ex), CAL_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(compute_bound), cmocka_unit_test(network_bound),
      cmocka_unit_test(crossover),     cmocka_unit_test(bad_steps),
      cmocka_unit_test(curve),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
