/* What a terminal understands (cal_term.h). */
#include "cal_term.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cal_term_controls_for(int tty, const char *term) {
  return tty && term && *term && strcmp(term, "dumb") != 0;
}

int cal_term_colour_for(int tty, const char *term, const char *no_color) {
  return cal_term_controls_for(tty, term) && !(no_color && *no_color);
}

int cal_term_controls(int fd) {
  return cal_term_controls_for(isatty(fd), getenv("TERM"));
}

int cal_term_colour(int fd) {
  return cal_term_colour_for(isatty(fd), getenv("TERM"), getenv("NO_COLOR"));
}
