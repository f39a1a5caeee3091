/* A plan (schema "calibrate-plan/1", see plan.h) rendered for people. */
#ifndef CAL_PLAN_RENDER_H
#define CAL_PLAN_RENDER_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/* Write the plan as a terminal table (md = 0) or markdown (md = 1): the
 * work split, the batch plan when a target was given, and memory and
 * placement when a model was given.  Check ferror(f) afterwards. */
void cal_plan_render(FILE *f, const json_t *plan, int md);

/* A name as a table cell: control characters as spaces and, for
 * markdown (md = 1), the characters markdown reads (| \ * _ ` [ ] < > #
 * ~ &) behind a backslash, so a device name can neither break the table
 * nor a terminal.  Always NUL-terminated, cut short when dst is full;
 * returns the length written. */
size_t cal_text_cell(char *dst, size_t len, const char *s, int md);

#endif
