/* Helpers shared by the cmocka tests.  Include after <cmocka.h>. */
#ifndef CAL_TEST_UTIL_H
#define CAL_TEST_UTIL_H

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "engine.h"
#include "harness.h"
#include "kernel.h"

/* cmocka 1.1 compares floats only in single precision; this is for doubles:
 * |a - b| <= eps (eps = 0 demands equality). */
#define assert_double_equal(a, b, eps)                                       \
  do {                                                                       \
    double a_ = (a), b_ = (b), e_ = (eps);                                   \
    if (!(fabs(a_ - b_) <= e_))                                              \
      fail_msg("%s = %.17g, expected %.17g (tolerance %g)", #a, a_, b_, e_); \
  } while (0)

/* The harness's quick settings for a test, with `samples` samples of at
 * least `min_s` seconds after `warmup_s` seconds of warm-up. */
static inline void cal_test_harness_cfg(cal_harness_cfg_t *cfg, int samples,
                                        double min_s, double warmup_s) {
  cal_harness_defaults(cfg, 1);
  cfg->samples = samples;
  cfg->min_sample_s = min_s;
  cfg->warmup_s = warmup_s;
}

/* Every one of the strings after `text` is found in it. */
#define cal_assert_contains(text, ...)                                       \
  do {                                                                       \
    const char *t_ = (text), *w_[] = {__VA_ARGS__};                          \
    for (size_t i_ = 0; i_ < sizeof w_ / sizeof *w_; i_++)                   \
      if (!t_ || !strstr(t_, w_[i_]))                                        \
        fail_msg("expected \"%s\" in:\n%s", w_[i_], t_ ? t_ : "(null)");     \
  } while (0)

/* What a test prints, in memory: cal_test_text_open gives the stream,
 * cal_test_text_close ends it and returns the text (free it). */
typedef struct cal_test_text {
  char *buf;
  size_t len;
} cal_test_text_t;

static inline FILE *cal_test_text_open(cal_test_text_t *t) {
  FILE *f = open_memstream(&t->buf, &t->len);
  assert_non_null(f);
  return f;
}

static inline char *cal_test_text_close(FILE *f, cal_test_text_t *t) {
  fclose(f);
  return t->buf;
}

/* Whether this machine has native bf16 for the bf16 layer and training
 * step: the project's one bf16 check, for the default engine. */
static inline int cal_test_native_bf16(void) {
  const char *why = NULL;
  return cal_bf16_supported(CAL_ENGINE_BUILTIN, &why) == 0;
}

/* A test run again in bf16: named f_bf16, with *state non-NULL. */
#define cal_unit_test_bf16(f) {#f "_bf16", f, NULL, NULL, &(int){1}}

/* main() of a test program: its tests (cmocka_unit_test(f), ...), run as
 * one group. */
#define CAL_TEST_MAIN(...)                                                   \
  int main(void) {                                                           \
    const struct CMUnitTest tests[] = {__VA_ARGS__};                         \
    return cmocka_run_group_tests(tests, NULL, NULL);                        \
  }

/* A check this machine cannot run: the reason on the test's output, and
 * the test reported SKIPPED rather than passed (skip() does not return). */
#define cal_test_skip(...)                                                   \
  do {                                                                       \
    print_message("skipped: ");                                              \
    print_message(__VA_ARGS__);                                              \
    print_message("\n");                                                     \
    skip();                                                                  \
  } while (0)

/* The life of a verified kernel: setup, verify fails on the poisoned
 * output before any run, run twice, `check` (may be NULL) looks at the
 * result, verify passes, `corrupt` damages it, verify fails, teardown. */
static inline void cal_test_kernel_life(const cal_kernel_t *k,
                                        const cal_params_t *p,
                                        void (*check)(void *),
                                        void (*corrupt)(void *)) {
  void *st = NULL;
  assert_int_equal(k->setup(p, &st), 0);
  assert_non_null(st);
  assert_int_equal(k->verify(st), CAL_EVERIFY);
  assert_int_equal(k->run(st), 0);
  assert_int_equal(k->run(st), 0);
  if (check)
    check(st);
  assert_int_equal(k->verify(st), 0);
  corrupt(st);
  assert_int_equal(k->verify(st), CAL_EVERIFY);
  k->teardown(st);
}

#endif
