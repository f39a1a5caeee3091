/* report/reporter.c: picking a reporter by its --format value and the
 * list of valid formats for messages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "reporter.h"
#include "test_util.h"

static int render_count(const void *in, int variant, FILE *out, char *err,
                        size_t errlen) {
  (void)out;
  (void)err;
  (void)errlen;
  return *(const int *)in + variant;
}

static const cal_reporter_t tab[] = {
    {"table", "a terminal table", render_count, 0},
    {"md", "GitHub markdown", render_count, 1},
    {"json", "the document", render_count, 2},
};

static void test_find(void **state) {
  (void)state;
  size_t n = CAL_NREPORTERS(tab);
  assert_int_equal(n, 3);
  const cal_reporter_t *r = cal_reporter_find(tab, n, "md");
  assert_non_null(r);
  assert_ptr_equal(r, &tab[1]);
  int in = 10;
  char err[8];
  assert_int_equal(r->render(&in, r->variant, NULL, err, sizeof err), 11);
  assert_null(cal_reporter_find(tab, n, "html"));
  assert_null(cal_reporter_find(tab, n, "MD"));
  assert_null(cal_reporter_find(tab, n, ""));
  assert_null(cal_reporter_find(tab, n, NULL));
  assert_null(cal_reporter_find(tab, 0, "table"));
}

static void test_list(void **state) {
  (void)state;
  char buf[64];
  assert_string_equal(cal_reporter_list(tab, 3, buf, sizeof buf),
                      "table, md or json");
  assert_string_equal(cal_reporter_list(tab, 2, buf, sizeof buf),
                      "table or md");
  assert_string_equal(cal_reporter_list(tab, 1, buf, sizeof buf), "table");
  assert_string_equal(cal_reporter_list(tab, 0, buf, sizeof buf), "");
  char small[8];
  cal_reporter_list(tab, 3, small, sizeof small);
  assert_string_equal(small, "table, ");
  assert_ptr_equal(cal_reporter_list(tab, 3, buf, 0), buf);
}

CAL_TEST_MAIN(
    cmocka_unit_test(test_find), cmocka_unit_test(test_list))
