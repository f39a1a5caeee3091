/* What the terminal on the other end of an output understands: control
 * sequences (a progress line rewritten with "\r\033[K") only on a
 * terminal whose TERM is set and is not "dumb", colour only there and
 * when NO_COLOR is unset or empty (no-color.org).  A pipe, a file or a
 * CI log gets neither. */
#ifndef CAL_TERM_H
#define CAL_TERM_H

/* Whether fd is a terminal that understands cursor control: isatty and a
 * TERM other than "" or "dumb". */
int cal_term_controls(int fd);

/* Whether colour may be written to fd: cal_term_controls and no
 * NO_COLOR (a non-empty value turns colour off). */
int cal_term_colour(int fd);

/* The rules above for given facts (for tests): tty whether fd is a
 * terminal, term and no_color the environment's values (NULL: unset). */
int cal_term_controls_for(int tty, const char *term);
int cal_term_colour_for(int tty, const char *term, const char *no_color);

#endif
