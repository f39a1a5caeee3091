/* A plan (analysis/plan.h) rendered for people: a terminal table or
 * markdown. */
#ifndef CAL_PLAN_RENDER_H
#define CAL_PLAN_RENDER_H

#include <stddef.h>
#include <stdio.h>

#include "plan.h"

/* Write the plan as a terminal table (md = 0) or markdown (md = 1): the
 * work split, the batch plan when a target was given, and memory and
 * placement when a model was given.  Check ferror(f) afterwards. */
void cal_plan_render(FILE *f, const cal_plan_t *plan, int md);

/* cal_plan_render as a reporter (reporter.h): `in` is a cal_plan_t,
 * variant is md.  Returns 0. */
int cal_plan_render_text(const void *in, int md, FILE *out, char *err,
                         size_t errlen);

/* A name as a table cell: control characters as spaces and, for
 * markdown (md = 1), the characters markdown reads (| \ * _ ` [ ] < > #
 * ~ &) behind a backslash, so a device name can neither break the table
 * nor a terminal.  Always NUL-terminated, cut short when dst is full;
 * returns the length written. */
size_t cal_text_cell(char *dst, size_t len, const char *s, int md);

#endif
