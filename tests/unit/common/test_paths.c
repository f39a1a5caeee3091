/* Where the data are (common/cal_paths.c) and which glyphs print
 * (common/cal_glyph.c), for this test binary of an uninstalled build: the
 * build's marker beside it names the source tree.  The lookups are made
 * once per process, so the environment is set before the first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cal_glyph.h"
#include "cal_paths.h"

static int same_dir(const char *a, const char *b) {
  char ra[PATH_MAX], rb[PATH_MAX];
  return realpath(a, ra) && realpath(b, rb) && strcmp(ra, rb) == 0;
}

static void uninstalled_build_reads_the_source_tree(void **state) {
  (void)state;
  const char *src = cal_source_dir();
  assert_non_null(src);
  assert_true(same_dir(src, CAL_TEST_SOURCE_DIR));
  assert_true(same_dir(cal_data_dir(), CAL_TEST_SOURCE_DIR));
  char dir[PATH_MAX], want[PATH_MAX], err[256];
  assert_int_equal(cal_data_path(CAL_DATA_PLOTS, dir, sizeof dir, err,
                                 sizeof err), 0);
  snprintf(want, sizeof want, "%s/plots", CAL_TEST_SOURCE_DIR);
  assert_true(same_dir(dir, want));
  assert_int_equal(cal_data_path(CAL_DATA_SCHEMA, dir, sizeof dir, err,
                                 sizeof err), 0);
  snprintf(want, sizeof want, "%s/results/schema", CAL_TEST_SOURCE_DIR);
  assert_true(same_dir(dir, want));
  snprintf(want, sizeof want, "%s/results", CAL_TEST_SOURCE_DIR);
  assert_true(same_dir(cal_results_default_dir(), want));
}

static void ascii_under_the_c_locale(void **state) {
  (void)state;
  assert_int_equal(cal_utf8(), 0);
  assert_string_equal(cal_glyph("\u00d7", "x"), "x");
  /* asking does not leave the program in the user's locale */
  char buf[16];
  snprintf(buf, sizeof buf, "%.1f", 1.5);
  assert_string_equal(buf, "1.5");
}

int main(void) {
  unsetenv("CALIBRATE_DATA_DIR");
  unsetenv("CALIBRATE_RESULTS_DIR");
  setenv("LC_ALL", "C", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(uninstalled_build_reads_the_source_tree),
      cmocka_unit_test(ascii_under_the_c_locale),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
