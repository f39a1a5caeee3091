/* What the parts of analysis/compare*.c share; not for other modules. */
#ifndef CAL_COMPARE_INTERNAL_H
#define CAL_COMPARE_INTERNAL_H

#include <stddef.h>

#include "compare.h"

/* Every profile of both sides against the first base profile into
 * c->diffs.  CAL_ENOMEM. */
int cal_compare_sides_diff(const cal_compare_side_t *b,
                           const cal_compare_side_t *n, cal_comparison_t *c);

/* The top-level figures both sides hold into c->tops.  CAL_ENOMEM. */
int cal_compare_top_level(const struct cal_profile_view *const *b, size_t nb,
                          const struct cal_profile_view *const *n, size_t nn,
                          cal_comparison_t *c);

/* Median of v[0..k-1] (sorted in place); NAN when k is 0. */
double cal_compare_median(double *v, size_t k);

#endif
