/* A plan (schema "calibrate-plan/1", see plan.h) rendered for people. */
#ifndef CAL_PLAN_RENDER_H
#define CAL_PLAN_RENDER_H

#include <jansson.h>
#include <stdio.h>

/* Write the plan as a terminal table (md = 0) or markdown (md = 1): the
 * work split, the batch plan when a target was given, and memory and
 * placement when a model was given.  Check ferror(f) afterwards. */
void cal_plan_render(FILE *f, const json_t *plan, int md);

#endif
