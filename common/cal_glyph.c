#include "cal_glyph.h"

#include <langinfo.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* -1: not asked yet. */
static int utf8 = -1;

int cal_utf8(void) {
  if (utf8 >= 0)
    return utf8;
  /* Ask the C library what the user's LC_CTYPE is, then put the program's
   * back: only the character set is read, number formatting (LC_NUMERIC)
   * is never touched. */
  const char *cur = setlocale(LC_CTYPE, NULL);
  char *saved = cur ? strdup(cur) : NULL;
  utf8 = 0;
  if (setlocale(LC_CTYPE, "")) {
    const char *cs = nl_langinfo(CODESET);
    utf8 = cs && (strcasecmp(cs, "UTF-8") == 0 || strcasecmp(cs, "utf8") == 0);
  }
  setlocale(LC_CTYPE, saved ? saved : "C");
  free(saved);
  return utf8;
}

const char *cal_glyph(const char *u, const char *ascii) {
  return cal_utf8() ? u : ascii;
}
