/* What the parts of analysis/compare*.c share; not for other modules. */
#ifndef CAL_COMPARE_INTERNAL_H
#define CAL_COMPARE_INTERNAL_H

#include <stddef.h>

#include "compare.h"

struct cal_vpoint;

/* The points of one side: every id of its runs that the filter selects,
 * in the order first seen, with its point in each run. */
typedef struct cal_side_points {
  const struct cal_profile_view **views; /* the runs' views */
  struct cal_profile_view **built;       /* those built here (owned) */
  size_t nruns;
  const char **ids; /* nids, strings of the views */
  size_t nids;
  const struct cal_vpoint **at; /* at[k * nruns + r]: id k in run r, NULL
                                   where the run lacks it */
  size_t *slots, nslots;        /* id -> k + 1 (open addressing) */
} cal_side_points_t;

/* Load a side (its views given, or built from its trees).  CAL_EINVAL with
 * err when a run repeats a point id; CAL_ENOMEM.  Clear it either way. */
int cal_side_points_load(const cal_compare_side_t *side, const char *filter,
                         cal_side_points_t *s, char *err, size_t errlen);
void cal_side_points_clear(cal_side_points_t *s);
/* The index k of id, -1 when the side does not hold it. */
long cal_side_points_find(const cal_side_points_t *s, const char *id);

/* Every profile of both sides against the first base profile into
 * c->diffs (the machine) and c->env_diffs (the environment).  CAL_ENOMEM. */
int cal_compare_sides_diff(const cal_compare_side_t *b,
                           const cal_compare_side_t *n, cal_comparison_t *c);

/* The top-level figures both sides hold into c->tops.  CAL_ENOMEM. */
int cal_compare_top_level(const struct cal_profile_view *const *b, size_t nb,
                          const struct cal_profile_view *const *n, size_t nn,
                          cal_comparison_t *c);

/* Median of v[0..k-1] (sorted in place); NAN when k is 0. */
double cal_compare_median(double *v, size_t k);

#endif
