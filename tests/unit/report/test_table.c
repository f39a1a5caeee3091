/* report/table.c: the run's table is printed escaped, lines kept: a CPU
 * brand or a warning with control characters in it cannot act on the
 * terminal or add a row. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "machine.h"
#include "results.h"
#include "table.h"

static void hostile_strings_escaped(void **state) {
  (void)state;
  cal_opts_t opt;
  cal_hwinfo_t hw;
  memset(&opt, 0, sizeof opt);
  memset(&hw, 0, sizeof hw);
  opt.hcfg.cv_threshold = 0.05;
  snprintf(hw.brand, sizeof hw.brand, "cpu\x1b]0;title\x07 \xe2\x80\xae");
  char *warn = strdup("warned\x1b[2J");
  char *warnings[1] = {warn};
  cal_run_result_t r = {.opt = &opt, .hw = &hw};
  r.res.quality.warnings = warnings;
  r.res.quality.nwarnings = 1;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_non_null(f);
  cal_table_print(&r, f);
  assert_int_equal(fclose(f), 0);
  assert_null(memchr(buf, 0x1b, len));
  assert_null(memchr(buf, 0x07, len));
  assert_null(strstr(buf, "\xe2\x80\xae"));
  assert_non_null(strstr(buf, "cpu\\x1b]0;title\\x07 \\u202e"));
  assert_non_null(strstr(buf, "warning: warned\\x1b[2J\n"));
  free(buf);
  free(warn);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(hostile_strings_escaped),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
