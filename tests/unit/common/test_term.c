/* What a terminal understands (common/cal_term.c): no control sequences
 * without a terminal or under TERM=dumb, no colour under NO_COLOR. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cal_term.h"

static void controls_need_a_terminal_that_knows_them(void **state) {
  (void)state;
  assert_true(cal_term_controls_for(1, "xterm-256color"));
  assert_true(cal_term_controls_for(1, "linux"));
  assert_false(cal_term_controls_for(0, "xterm"));
  assert_false(cal_term_controls_for(1, "dumb"));
  assert_false(cal_term_controls_for(1, ""));
  assert_false(cal_term_controls_for(1, NULL));
}

static void no_color_turns_colour_off_only(void **state) {
  (void)state;
  assert_true(cal_term_colour_for(1, "xterm", NULL));
  assert_true(cal_term_colour_for(1, "xterm", "")); /* empty: unset */
  assert_false(cal_term_colour_for(1, "xterm", "1"));
  assert_false(cal_term_colour_for(1, "dumb", NULL));
  assert_false(cal_term_colour_for(0, "xterm", NULL));
  /* NO_COLOR is about colour: the progress line stays */
  assert_true(cal_term_controls_for(1, "xterm"));
}

/* A pipe is no terminal, whatever TERM says. */
static void a_pipe_gets_nothing(void **state) {
  (void)state;
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  setenv("TERM", "xterm", 1);
  unsetenv("NO_COLOR");
  assert_false(cal_term_controls(fds[1]));
  assert_false(cal_term_colour(fds[1]));
  close(fds[0]);
  close(fds[1]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(controls_need_a_terminal_that_knows_them),
      cmocka_unit_test(no_color_turns_colour_off_only),
      cmocka_unit_test(a_pipe_gets_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
