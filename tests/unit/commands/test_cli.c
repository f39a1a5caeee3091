/* Option parsing of the command line: numbers, fractions and output paths,
 * each a table of inputs and what they give. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "cal_err.h"
#include "cli.h"
#include "test_util.h"

static void parse_long_table(void **state) {
  (void)state;
  static const struct {
    const char *text;
    int rc;
    long value;
  } cases[] = {
      {"4", 0, 4},           {"1", 0, 1},           {"10", 0, 10},
      {"0", CAL_EINVAL, 0},  {"11", CAL_EINVAL, 0}, {"abc", CAL_EINVAL, 0},
      {"3x", CAL_EINVAL, 0}, {"", CAL_EINVAL, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    long v = -1;
    int rc = cal_parse_long(cases[i].text, 1, 10, &v);
    if (rc != cases[i].rc || (rc == 0 && v != cases[i].value))
      fail_msg("cal_parse_long(\"%s\", 1, 10) = %d, %ld; expected %d, %ld",
               cases[i].text, rc, v, cases[i].rc, cases[i].value);
  }
}

/* "5%" or "0.05"; a fraction in (0, 1), percent sign optional */
static void parse_fraction_table(void **state) {
  (void)state;
  static const struct {
    const char *text;
    int rc;
    double value;
  } cases[] = {
      {"5%", 0, 0.05},         {"0.05", 0, 0.05},        {"2.5%", 0, 0.025},
      {"150%", CAL_EINVAL, 0}, {"2", CAL_EINVAL, 0},     {"5", CAL_EINVAL, 0},
      {"0", CAL_EINVAL, 0},    {"-1%", CAL_EINVAL, 0},   {"%", CAL_EINVAL, 0},
      {"5%x", CAL_EINVAL, 0},  {"abc", CAL_EINVAL, 0},   {"", CAL_EINVAL, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    double v = -1;
    int rc = cal_parse_fraction(cases[i].text, &v);
    if (rc != cases[i].rc || (rc == 0 && !(fabs(v - cases[i].value) <= 1e-15)))
      fail_msg("cal_parse_fraction(\"%s\") = %d, %g; expected %d, %g",
               cases[i].text, rc, v, cases[i].rc, cases[i].value);
  }
}

static void parse_double_and_u64(void **state) {
  (void)state;
  double d;
  uint64_t u;
  assert_int_equal(cal_parse_double("nan", 0, 1, &d), CAL_EINVAL);
  assert_int_equal(cal_parse_u64("18446744073709551615", &u), 0);
  assert_true(u == UINT64_MAX);
  assert_int_equal(cal_parse_u64("-1", &u), CAL_EINVAL);
}

static void writable_output_paths(void **state) {
  (void)state;
  char why[256];
  assert_int_equal(cal_check_writable("/nonexistent-dir/x.json", why, sizeof why),
                   CAL_EINVAL);
  assert_non_null(strstr(why, "does not exist"));
  assert_int_equal(cal_check_writable("/tmp", why, sizeof why), CAL_EINVAL);
  assert_int_equal(cal_check_writable("/tmp/x.json", why, sizeof why), 0);
  assert_int_equal(cal_check_writable("-", why, sizeof why), 0);
}

CAL_TEST_MAIN(
    cmocka_unit_test(parse_long_table), cmocka_unit_test(parse_fraction_table),
    cmocka_unit_test(parse_double_and_u64),
    cmocka_unit_test(writable_output_paths))
