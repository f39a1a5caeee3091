/* Escaping text from outside before it reaches a terminal
 * (common/cal_esc.c): controls, C1 codes, bidi overrides and bytes that
 * are not UTF-8 shown as escapes; everything else kept. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>

#include <cmocka.h>

#include "cal_esc.h"
#include "test_util.h"

static void expect_esc(const char *in, const char *want) {
  char out[256];
  assert_int_equal(cal_esc(out, sizeof out, in), strlen(want));
  assert_string_equal(out, want);
}

static void controls_escaped(void **state) {
  (void)state;
  expect_esc("plain ascii: a-z 0-9 \\ / \"", "plain ascii: a-z 0-9 \\ / \"");
  expect_esc("\x1b[31mred", "\\x1b[31mred");
  expect_esc("a\rb\nc\td\x7f", "a\\x0db\\x0ac\\x09d\\x7f");
  /* U+202E RIGHT-TO-LEFT OVERRIDE, U+2066 LRI, U+200F RLM, U+0085 NEL */
  expect_esc("x\xe2\x80\xaey", "x\\u202ey");
  expect_esc("\xe2\x81\xa6\xe2\x80\x8f", "\\u2066\\u200f");
  expect_esc("\xc2\x85|\xc2\x9b", "\\u0085|\\u009b");
}

static void utf8_kept_and_bad_bytes_escaped(void **state) {
  (void)state;
  /* other UTF-8 stays: e acute, multiplication sign, CJK, an emoji */
  expect_esc("\xc3\xa9 \xc3\x97 \xe4\xb8\xad \xf0\x9f\x98\x80",
             "\xc3\xa9 \xc3\x97 \xe4\xb8\xad \xf0\x9f\x98\x80");
  /* a lone continuation byte, an overlong '/', a cut sequence, a
   * surrogate: each byte on its own */
  expect_esc("\x80", "\\x80");
  expect_esc("\xc0\xaf", "\\xc0\\xaf");
  expect_esc("\xe2\x80", "\\xe2\\x80");
  expect_esc("\xed\xa0\x80", "\\xed\\xa0\\x80");
}

static void cut_short_whole_escapes(void **state) {
  (void)state;
  char out[8];
  /* "ab" fits, the 4-byte escape of ESC after it does not: never half */
  assert_int_equal(cal_esc(out, 6, "ab\x1b" "cd"), 8);
  assert_string_equal(out, "ab");
  assert_int_equal(cal_esc(out, sizeof out, NULL), 0);
  assert_string_equal(out, "");
}

static void text_keeps_lines(void **state) {
  (void)state;
  const char in[] = "row 1\tx\nrow\x1b[2J 2\r\n";
  size_t n = 0;
  assert_true(cal_esc_needed(in, sizeof in - 1, CAL_ESC_KEEP_LINES));
  assert_false(cal_esc_needed("a\tb\n", 4, CAL_ESC_KEEP_LINES));
  assert_true(cal_esc_needed("a\tb\n", 4, 0));
  char *out = cal_esc_text(in, sizeof in - 1, CAL_ESC_KEEP_LINES, &n);
  assert_non_null(out);
  assert_string_equal(out, "row 1\tx\nrow\\x1b[2J 2\\x0d\n");
  assert_int_equal(n, strlen(out));
  free(out);
  /* a NUL inside the text is a byte like any other */
  out = cal_esc_text("a\0b", 3, 0, &n);
  assert_non_null(out);
  assert_string_equal(out, "a\\x00b");
  free(out);
}

static void line_is_one_line(void **state) {
  (void)state;
  cal_test_text_t t;
  FILE *f = cal_test_text_open(&t);
  cal_esc_line(f, "calibrate: %s: %d", "two\nlines\xe2\x80\xae", 7);
  char *buf = cal_test_text_close(f, &t);
  assert_string_equal(buf, "calibrate: two\\x0alines\\u202e: 7\n");
  free(buf);
}

static void hostile_cell(const void *arg, FILE *f) {
  fprintf(f, "host\t%s\nnext\n", (const char *)arg);
}

/* A laid-out text keeps its lines and tabs; what its cells bring is
 * escaped. */
static void layout_escaped(void **state) {
  (void)state;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_non_null(f);
  assert_int_equal(cal_esc_layout(f, hostile_cell, "n\x1b[2J\xe2\x80\xae"), 0);
  assert_int_equal(fclose(f), 0);
  assert_string_equal(buf, "host\tn\\x1b[2J\\u202e\nnext\n");
  free(buf);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(controls_escaped),
      cmocka_unit_test(utf8_kept_and_bad_bytes_escaped),
      cmocka_unit_test(cut_short_whole_escapes),
      cmocka_unit_test(text_keeps_lines),
      cmocka_unit_test(line_is_one_line),
      cmocka_unit_test(layout_escaped),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
