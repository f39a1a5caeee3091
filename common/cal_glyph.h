/* Non-ASCII glyphs in readable output, only where the locale's character
 * set is UTF-8: under LC_ALL=C (a CI log, a pipe into an ASCII tool) the
 * ASCII fallback is printed instead.  Strings are static; do not free. */
#ifndef CAL_GLYPH_H
#define CAL_GLYPH_H

/* Whether the user's locale (LC_ALL, LC_CTYPE, LANG) uses UTF-8. */
int cal_utf8(void);
/* utf8 when the locale is UTF-8, else ascii. */
const char *cal_glyph(const char *utf8, const char *ascii);

#endif
