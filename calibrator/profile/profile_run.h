/* The profile of a run: the skeleton (top-level figures planners read,
 * tool, created, machine, blas, settings), each section's object from
 * its writer, and quality. */
#ifndef CAL_PROFILE_RUN_H
#define CAL_PROFILE_RUN_H

#include <jansson.h>

#include "run.h"

/* New reference; NULL when out of memory. */
json_t *cal_profile_of_run(const cal_run_t *r);

#endif
