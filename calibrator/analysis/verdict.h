/* Verdict rules of `calibrate compare`: pure functions of a point's
 * numbers, no I/O.
 *
 * For one point, with r = median(new) / median(base), its confidence
 * interval [lo, hi], the Mann-Whitney two-sided p, the smallest p the
 * sample sizes allow (p_min), a threshold t (0.05) and a level alpha (0.01):
 *
 *   "worse" means r < 1 - t when higher is better, r > 1 + t when lower is
 *   better; "better" is the mirror image.
 *   p <  alpha and worse            -> REGRESSED
 *   p <  alpha and better           -> IMPROVED
 *   p <  alpha, within +-t          -> UNCHANGED (real but below threshold)
 *   p >= alpha and p_min > alpha    -> INCONCLUSIVE (too few samples: the
 *                                      test could never reach alpha)
 *   p >= alpha, CI inside [1-t, 1+t]-> UNCHANGED (equivalence shown)
 *   p >= alpha, CI past both bounds -> INCONCLUSIVE (too noisy)
 *   p >= alpha, CI past one bound   -> INCONCLUSIVE (a change beyond t on
 *                                      that side is not ruled out)
 *   r or the CI unknown (a median or a sample is 0) -> INCONCLUSIVE,
 *   unless p < alpha decides with r known.
 * Only REGRESSED fails a comparison. */
#ifndef CAL_VERDICT_H
#define CAL_VERDICT_H

#include <stddef.h>

typedef enum cal_verdict {
  CAL_VERDICT_REGRESSED = 0, /* ordered by how early a report lists them */
  CAL_VERDICT_IMPROVED,
  CAL_VERDICT_INCONCLUSIVE,
  CAL_VERDICT_UNCHANGED,
  CAL_VERDICT_INFO, /* a figure without samples: ratio only */
} cal_verdict_t;

typedef struct cal_verdict_in {
  int higher_is_better;
  double ratio;            /* new / base; NAN when unknown */
  double ci_low, ci_high;  /* interval of the ratio; NAN when unknown */
  double p, p_min;         /* two-sided p and the smallest attainable p */
  double threshold, alpha; /* e.g. 0.05 and 0.01 */
} cal_verdict_in_t;

/* Decide; *reason (may be NULL) gets a short static sentence saying why. */
cal_verdict_t cal_verdict_decide(const cal_verdict_in_t *in,
                                 const char **reason);

/* "regressed", "improved", "inconclusive", "unchanged", "info"; static. */
const char *cal_verdict_name(cal_verdict_t v);

/* The ratio oriented so that > 1 means better: r, or 1/r when lower is
 * better.  NAN stays NAN. */
double cal_ratio_oriented(double ratio, int higher_is_better);

/* Geometric mean of r[0..n-1], skipping values that are not finite and
 * positive; *used (may be NULL) gets how many counted.  NAN when none. */
double cal_geomean(const double *r, size_t n, size_t *used);

#endif
