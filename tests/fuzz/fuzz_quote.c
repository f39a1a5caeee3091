/* libFuzzer target: quoting of names for gnuplot scripts and markdown
 * tables.  The gnuplot string, decoded as gnuplot decodes double-quoted
 * strings, must give back the name (control characters as spaces), and
 * hold no byte gnuplot would read as syntax; a markdown cell must hold no
 * bare '|' and no control character. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gnuplot.h"
#include "plan_render.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_gnuplot(const char *name) {
  char *out = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&out, &len);
  if (!f)
    return;
  cal_gp_quote(f, name);
  fclose(f);
  if (len < 2 || out[0] != '"' || out[len - 1] != '"')
    abort();
  size_t k = 0, n = strlen(name);
  for (size_t i = 1; i + 1 < len; i++, k++) {
    unsigned char c = (unsigned char)out[i], want;
    if (c == '"' || c == '\'' || c == '`' || c == '@' || c == '$' ||
        c < 0x20 || c >= 0x7f)
      abort(); /* syntax or a raw byte inside the string */
    if (c == '\\') {
      if (i + 4 >= len)
        abort();
      c = (unsigned char)((out[i + 1] - '0') * 64 + (out[i + 2] - '0') * 8 +
                          (out[i + 3] - '0'));
      i += 3;
    }
    if (k >= n)
      abort();
    want = (unsigned char)name[k];
    if (want < 0x20 || want == 0x7f)
      want = ' ';
    if (c != want)
      abort();
  }
  if (k != n)
    abort();
  free(out);
}

static void check_markdown(const char *name) {
  char cell[256];
  size_t n = cal_text_cell(cell, sizeof cell, name, 1);
  if (n != strlen(cell) || n >= sizeof cell)
    abort();
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)cell[i];
    if (c < 0x20 || c == 0x7f)
      abort();
    if (c == '\\') { /* an escape: the next byte is taken as it is */
      if (++i >= n)
        abort();
      continue;
    }
    if (c == '|')
      abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *name = malloc(size + 1);
  if (!name)
    return 0;
  memcpy(name, data, size);
  name[size] = '\0'; /* a name ends at its first NUL, as in C */
  check_gnuplot(name);
  check_markdown(name);
  free(name);
  return 0;
}
