/* Text from outside (profile strings, flag values, file names) made safe
 * to print on a terminal: every control character and every character
 * that reorders text is shown as an escape instead of acting.
 *
 *   bytes 0x00-0x1f and 0x7f          \xNN   (\x1b, \x0d, \x0a)
 *   C1 controls U+0080-U+009F          \uNNNN (\u009b)
 *   bidi and line controls: U+061C, U+200E, U+200F, U+2028-U+202E,
 *     U+2066-U+2069                    \uNNNN (\u202e)
 *   bytes that are not UTF-8           \xNN
 *
 * Everything else, other UTF-8 included, is kept as it is.  Backslashes
 * are kept too: the escapes are for people to read, not to be undone. */
#ifndef CAL_ESC_H
#define CAL_ESC_H

#include <stddef.h>
#include <stdio.h>

/* Keep newlines and tabs (text laid out in lines: tables, pages). */
#define CAL_ESC_KEEP_LINES 1

/* Escape s into dst (len bytes; always NUL-terminated when len > 0, cut
 * short before an escape that does not fit).  Returns the length the
 * whole escaped text needs, as snprintf does. */
size_t cal_esc(char *dst, size_t len, const char *s);

/* Escape the n bytes at buf (flags: 0 or CAL_ESC_KEEP_LINES) into a new
 * NUL-terminated buffer of *outlen bytes; NULL when out of memory.  Free
 * with free(). */
char *cal_esc_text(const char *buf, size_t n, int flags, size_t *outlen);

/* Whether escaping the n bytes at buf would change them. */
int cal_esc_needed(const char *buf, size_t n, int flags);

/* Lay text out with write(arg, f) and print it to out escaped, its lines
 * kept (a table whose cells come from outside).  0; out of memory, one
 * line saying so instead of the text and -1. */
int cal_esc_layout(FILE *out, void (*write)(const void *arg, FILE *f),
                   const void *arg);

/* Print a formatted line to f with everything escaped (newlines too, so
 * it stays one line), then "\n". */
void cal_esc_line(FILE *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
