/* Summary statistics of a sample, and rank tests on two samples.
 * All functions leave their inputs unchanged. */
#ifndef CAL_STATS_H
#define CAL_STATS_H

#include <stddef.h>

typedef struct cal_summary {
  size_t n;
  double median, mean, min, max;
  double stddev; /* sample standard deviation (n-1); 0 when n < 2 */
  double mad;    /* median absolute deviation (unscaled) */
  double cv;     /* stddev / mean; 0 when mean is 0 */
  /* distribution-free confidence interval for the median from order
   * statistics; ci_level is its exact binomial coverage (>= the level
   * asked for when n allows it, else the widest interval [min, max]) */
  double ci_low, ci_high, ci_level;
} cal_summary_t;

/* Summarise x[0..n-1] with a median CI of at least `level` (e.g. 0.95).
 * CAL_EINVAL when n == 0 or a value is not finite; CAL_ENOMEM. */
int cal_summarize(const double *x, size_t n, double level, cal_summary_t *out);

/* Median of x[0..n-1] (average of the two middle values for even n). */
double cal_median(const double *x, size_t n);

/* Order-statistic ranks (1-based, lo <= hi) of the median CI at `level`
 * for n samples and the exact coverage; widest ranks when n is too small. */
void cal_median_ci_ranks(size_t n, double level, size_t *lo, size_t *hi,
                         double *coverage);

#endif
