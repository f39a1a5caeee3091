/* Picking a reporter from a command's table by its --format value. */
#include "reporter.h"

#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "cal_esc.h"

const cal_reporter_t *cal_reporter_find(const cal_reporter_t *tab, size_t n,
                                        const char *format) {
  if (!format)
    return NULL;
  for (size_t i = 0; i < n; i++)
    if (tab[i].format && strcmp(tab[i].format, format) == 0)
      return &tab[i];
  return NULL;
}

const char *cal_reporter_list(const cal_reporter_t *tab, size_t n, char *buf,
                              size_t len) {
  size_t at = 0;
  if (!len)
    return buf;
  buf[0] = '\0';
  for (size_t i = 0; i < n && at < len; i++) {
    const char *sep = i == 0 ? "" : i + 1 == n ? " or " : ", ";
    int w = snprintf(buf + at, len - at, "%s%s", sep, tab[i].format);
    if (w < 0)
      break;
    at += (size_t)w;
  }
  return buf;
}

int cal_reporter_render_mem(const cal_reporter_t *r, const void *in,
                            char **buf, size_t *len, char *err,
                            size_t errlen) {
  *buf = NULL;
  *len = 0;
  FILE *f = open_memstream(buf, len);
  if (!f) {
    snprintf(err, errlen, "out of memory");
    return CAL_ENOMEM;
  }
  int rc = r->render(in, r->variant, f, err, errlen);
  if (fclose(f) != 0 && rc == 0) {
    snprintf(err, errlen, "out of memory");
    rc = CAL_ENOMEM;
  }
  if (rc == 0 && cal_esc_needed(*buf, *len, CAL_ESC_KEEP_LINES)) {
    /* a profile's strings reach tables, markdown, pages: none of them
     * may act on the terminal that shows the output */
    size_t n = 0;
    char *safe = cal_esc_text(*buf, *len, CAL_ESC_KEEP_LINES, &n);
    if (!safe) {
      snprintf(err, errlen, "out of memory");
      rc = CAL_ENOMEM;
    } else {
      free(*buf);
      *buf = safe;
      *len = n;
    }
  }
  if (rc < 0) {
    free(*buf);
    *buf = NULL;
    *len = 0;
  }
  return rc;
}
