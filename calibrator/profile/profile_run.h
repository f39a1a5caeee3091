/* The profile of a run: the skeleton (top-level figures planners read,
 * tool, created, machine, blas, settings), each section's object from
 * its writer, and quality. */
#ifndef CAL_PROFILE_RUN_H
#define CAL_PROFILE_RUN_H

#include <jansson.h>

#include "run_result.h"

/* New reference; NULL when out of memory. */
json_t *cal_profile_of_run(const cal_run_result_t *r);

/* The reason the profile withholds headline figures because the machine
 * was busy (headline_status "withheld"), or NULL.  Borrowed from root. */
const char *cal_profile_withheld(const json_t *root);

#endif
