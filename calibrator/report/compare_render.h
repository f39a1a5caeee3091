/* A compare report (schema "calibrate-compare/1", see compare.h) rendered
 * for people: a terminal table or GitHub markdown; JSON is the tree. */
#ifndef CAL_COMPARE_RENDER_H
#define CAL_COMPARE_RENDER_H

#include <jansson.h>
#include <stdio.h>

typedef enum cal_report_format {
  CAL_REPORT_TABLE = 0,
  CAL_REPORT_MD,
  CAL_REPORT_JSON,
} cal_report_format_t;

/* Write a report as a terminal table or markdown (JSON: dump the tree).
 * CAL_EIO when writing fails. */
int cal_compare_render(const json_t *report, cal_report_format_t fmt,
                       FILE *f);

/* Call fn once per element of a "machine_differences" array with its key
 * and its base and new values as JSON text ("?" when they cannot be
 * written). */
typedef void (*cal_diff_fn)(FILE *f, const char *key, const char *base,
                            const char *newv);
void cal_compare_each_diff(FILE *f, const json_t *diffs, cal_diff_fn fn);

#endif
