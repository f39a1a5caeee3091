/* The harness on a fake kernel (samples, rates, failed verification, points
 * too big for memory) and the GEMM kernels' own verification. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "harness.h"
#include "kernel.h"
#include "test_util.h"

/* A fake kernel whose answer can be made wrong. */
typedef struct {
  int runs;
  int wrong;
} fake_t;
static int fake_wrong_next;
static double fake_flops(const cal_params_t *p) { return 1e6; }
static int fake_setup(const cal_params_t *p, void **st) {
  fake_t *f = calloc(1, sizeof *f);
  if (!f)
    return CAL_ENOMEM;
  f->wrong = fake_wrong_next;
  *st = f;
  return 0;
}
static int fake_run(void *st) {
  fake_t *f = st;
  volatile double x = 0;
  for (int i = 0; i < 2000; i++)
    x += i;
  f->runs++;
  return 0;
}
static int fake_verify(void *st) {
  int w = ((fake_t *)st)->wrong;
  return w == 2 ? CAL_ENOMEM : w ? CAL_EVERIFY : 0;
}
static void fake_teardown(void *st) { free(st); }
static double fake_mem(const cal_params_t *p) { return 1e12; }
static const cal_kernel_t fake_kernel = {
    .name = "fake", .family = CAL_FAMILY_FMA, .dtype = CAL_DTYPE_FP64, .flops = fake_flops,
    .setup = fake_setup, .run = fake_run, .verify = fake_verify,
    .teardown = fake_teardown,
};

static void harness_samples_and_verification(void **state) {
  (void)state;
  cal_harness_cfg_t cfg;
  cal_test_harness_cfg(&cfg, 9, 0.002, 0.001);
  cal_point_t pt;
  cal_params_t p = {.threads = 1};
  fake_wrong_next = 0;
  assert_int_equal(cal_bench_kernel(&cfg, NULL, &fake_kernel, &p, &pt), 0);
  assert_int_equal(pt.status, CAL_POINT_OK);
  assert_int_equal(pt.m.n, 9);
  assert_true(pt.m.iters >= 1);
  for (size_t i = 0; i < pt.m.n; i++)
    assert_true(pt.m.samples_s[i] > 0);
  /* rates are flops / time of each sample, and summarised */
  assert_double_equal(pt.gflops[3], 1e6 / pt.m.samples_s[3] * 1e-9, 1e-9);
  assert_true(pt.gflops_sum.min <= pt.gflops_sum.median);
  assert_null(pt.gbps); /* no bytes declared */
  cal_point_free(&pt);

  fake_wrong_next = 1;
  assert_int_equal(cal_bench_kernel(&cfg, NULL, &fake_kernel, &p, &pt),
                   CAL_EVERIFY);
  assert_int_equal(pt.status, CAL_POINT_FAILED);
  cal_point_free(&pt);

  /* issue 49: a verification out of memory is no wrong answer: the point
   * is skipped with the reason, and the run goes on */
  fake_wrong_next = 2;
  assert_int_equal(cal_bench_kernel(&cfg, NULL, &fake_kernel, &p, &pt), 0);
  assert_int_equal(pt.status, CAL_POINT_SKIPPED);
  assert_int_equal(pt.err, CAL_ENOMEM);
  assert_non_null(strstr(pt.reason, "out of memory"));
  assert_int_equal(pt.m.n, 0);
  cal_point_free(&pt);

  /* a point that needs more memory than available is skipped, not run */
  cal_kernel_t big = fake_kernel;
  big.mem_bytes = fake_mem;
  cfg.mem_avail_bytes = 1e9;
  fake_wrong_next = 0;
  assert_int_equal(cal_bench_kernel(&cfg, NULL, &big, &p, &pt), 0);
  assert_int_equal(pt.status, CAL_POINT_SKIPPED);
  assert_int_equal(pt.err, CAL_ETOOBIG);
  assert_non_null(strstr(pt.reason, "MiB"));
  cal_point_free(&pt);
}

static void gemm_verification_catches_wrong_results(void **state) {
  (void)state;
  static const char *const names[] = {"sgemm", "dgemm"};
  for (int i = 0; i < 2; i++) {
    const cal_kernel_t *k = cal_kernel_find(names[i]);
    assert_non_null(k);
    cal_params_t p = {.m = 67, .n = 45, .k = 129, .threads = 1, .seed = 3};
    void *st = NULL;
    /* before any run, C is poisoned: verification must fail */
    assert_int_equal(k->setup(&p, &st), 0);
    assert_int_equal(k->verify(st), CAL_EVERIFY);
    assert_int_equal(k->run(st), 0);
    assert_int_equal(k->verify(st), 0);
    assert_double_equal(k->flops(&p), 2.0 * 67 * 45 * 129, 0);
    k->teardown(st);
  }
  assert_null(cal_kernel_find("nonexistent"));
  cal_params_t bad = {.m = 0, .n = 4, .k = 4};
  void *st = NULL;
  assert_int_equal(cal_kernel_find("sgemm")->setup(&bad, &st), CAL_EINVAL);
}

CAL_TEST_MAIN(
    cmocka_unit_test(harness_samples_and_verification),
    cmocka_unit_test(gemm_verification_catches_wrong_results))
