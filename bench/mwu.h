/* Two-sample rank statistics: the two-sided Mann-Whitney U test and a
 * distribution-free confidence interval for the ratio of two samples.
 * All functions leave their inputs unchanged; no function keeps memory
 * after it returns. */
#ifndef CAL_MWU_H
#define CAL_MWU_H

#include <stddef.h>
#include <stdint.h>

typedef enum cal_mwu_method {
  CAL_MWU_EXACT = 0,  /* exact null distribution of U (no ties, small n) */
  CAL_MWU_NORMAL = 1, /* normal approximation, tie + continuity corrected */
} cal_mwu_method_t;

/* The exact distribution is used when the pooled sample has no ties and
 * n1 + n2 <= CAL_MWU_EXACT_MAX_N (its counts then fit in 64 bits). */
#define CAL_MWU_EXACT_MAX_N 60

typedef struct cal_mwu {
  size_t n1, n2;
  double u;     /* U of x: #(x_i > y_j) + #(x_i == y_j) / 2, in [0, n1*n2] */
  double z;     /* (U - n1*n2/2) standardised, tie and continuity corrected;
                   0 when every value is tied */
  double p;     /* two-sided p-value by `method` */
  double p_min; /* smallest two-sided p any outcome can give at these sizes:
                   min(1, 2 / C(n1+n2, n1)); above alpha the test cannot
                   ever be significant */
  int ties;     /* 1 when the pooled sample holds equal values */
  cal_mwu_method_t method;
} cal_mwu_t;

/* Test x[0..n1-1] against y[0..n2-1].  CAL_EINVAL when a sample is empty
 * or holds a value that is not finite; CAL_ENOMEM. */
int cal_mwu_test(const double *x, size_t n1, const double *y, size_t n2,
                 cal_mwu_t *out);

/* "exact" or "normal"; static storage. */
const char *cal_mwu_method_name(cal_mwu_method_t m);

/* Null distribution of U without ties: counts[u] for u = 0..n1*n2 is the
 * number of the C(n1+n2, n1) orderings giving U = u.  Needs
 * n1 + n2 <= CAL_MWU_EXACT_MAX_N (else CAL_EINVAL); CAL_ENOMEM.  *counts
 * is malloc'ed, the caller frees it. */
int cal_mwu_exact_counts(size_t n1, size_t n2, uint64_t **counts);

/* Ratio of y to x (new / base) with a confidence interval.
 *
 * ratio is median(y) / median(x).  The interval is the Hodges-Lehmann /
 * Moses interval of the pairwise ratios y_j / x_i (equivalently of the
 * pairwise differences of logs): [R_(k), R_(n1*n2+1-k)] with k the largest
 * rank such that P(U <= k-1) <= (1 - level) / 2 under the exact U
 * distribution (normal approximation past CAL_MWU_EXACT_MAX_N).  It is
 * distribution-free for a scale shift (y ~ c * x), the model of a change
 * in speed, and then covers c = ratio of medians.  When n is too small to
 * reach `level` the widest interval [min, max] is returned and `level`
 * says its real coverage. hl is the Hodges-Lehmann estimate, the median of
 * the pairwise ratios. */
typedef struct cal_ratio_ci {
  double ratio;  /* median(y) / median(x); NAN when median(x) is 0 */
  double hl;     /* median of y_j / x_i */
  double lo, hi; /* the interval; NAN when a value is <= 0 */
  double level;  /* its coverage (exact, or approximate for large n) */
} cal_ratio_ci_t;

/* CAL_EINVAL when a sample is empty, a value is not finite or level is
 * not in (0, 1); CAL_ENOMEM.  O((n1 + n2) log) time and O(n1 + n2)
 * memory: the order statistics of the pairwise ratios are found by
 * counting, never by listing all n1*n2 of them. */
int cal_ratio_ci(const double *x, size_t n1, const double *y, size_t n2,
                 double level, cal_ratio_ci_t *out);

#endif
