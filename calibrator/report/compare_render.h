/* A comparison (analysis/compare.h) rendered for people: a terminal table
 * or GitHub markdown.  Renderers only lay the typed result out; JSON is
 * report/compare_json.h, the page report/html.h. */
#ifndef CAL_COMPARE_RENDER_H
#define CAL_COMPARE_RENDER_H

#include <stddef.h>
#include <stdio.h>

#include "compare.h"

typedef enum cal_report_format {
  CAL_REPORT_TABLE = 0,
  CAL_REPORT_MD,
  CAL_REPORT_JSON,
} cal_report_format_t;

/* A cal_render_fn (report/reporter.h): in is a cal_comparison_t, variant
 * CAL_REPORT_TABLE or CAL_REPORT_MD.  CAL_ENOMEM when writing fails (f
 * is a memory stream). */
int cal_compare_render_text(const void *in, int variant, FILE *f, char *err,
                            size_t errlen);

/* Call fn once per machine difference of c (environment = 0) or per
 * environment difference (environment = 1) with its key and its base and
 * new values as JSON text ("?" when they cannot be written). */
typedef void (*cal_diff_fn)(FILE *f, const char *key, const char *base,
                            const char *newv);
void cal_compare_each_diff(FILE *f, const cal_comparison_t *c,
                           int environment, cal_diff_fn fn);

#endif
