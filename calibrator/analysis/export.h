/* One profile in the formats continuous-benchmarking services read, from
 * its typed view (the formats are described at cal_export_bmf in
 * compare.h, which takes the tree instead).  New trees, caller
 * json_decref()s; NULL on out of memory. */
#ifndef CAL_EXPORT_H
#define CAL_EXPORT_H

#include <jansson.h>

#include "view.h"

/* Bencher Metric Format. */
json_t *cal_export_view_bmf(const cal_profile_view_t *v);
/* github-action-benchmark: bigger 1 "customBiggerIsBetter", 0
 * "customSmallerIsBetter". */
json_t *cal_export_view_gab(const cal_profile_view_t *v, int bigger);

#endif
