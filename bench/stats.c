#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double sorted_median(const double *s, size_t n) {
  return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/* A sorted copy of x[0..n) (n > 0), NULL when out of memory. */
static double *sorted_copy(const double *x, size_t n) {
  double *s = malloc(n * sizeof *s);
  if (s) {
    memcpy(s, x, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
  }
  return s;
}

double cal_median(const double *x, size_t n) {
  double *s = n ? sorted_copy(x, n) : NULL;
  if (!s)
    return NAN;
  double m = sorted_median(s, n);
  free(s);
  return m;
}

/* P(B = k) for B ~ Binomial(n, 1/2), via log-gamma for any n. */
static double binom_half_pmf(size_t n, size_t k) {
  return exp(lgamma((double)n + 1) - lgamma((double)k + 1) -
             lgamma((double)(n - k) + 1) - (double)n * log(2.0));
}

void cal_median_ci_ranks(size_t n, double level, size_t *lo, size_t *hi,
                         double *coverage) {
  /* The interval [x_(j), x_(n-j+1)] covers the median with probability
   * P(j <= B <= n-j), B ~ Bin(n, 1/2), which by symmetry is
   * 1 - 2 P(B <= j-1): one running tail, one term a step, so the search
   * is linear in n.  Take the largest j that keeps the coverage at or
   * above the level. */
  size_t best = 1;
  double tail = n ? binom_half_pmf(n, 0) : 0.0; /* P(B <= j-1) */
  double cov = n < 2 ? 0.0 : 1.0 - 2.0 * tail;
  for (size_t j = 2; j <= (n + 1) / 2; j++) {
    tail += binom_half_pmf(n, j - 1);
    double c = 1.0 - 2.0 * tail;
    if (c < level)
      break;
    best = j;
    cov = c;
  }
  *lo = best;
  *hi = n - best + 1;
  *coverage = cov;
}

int cal_summarize(const double *x, size_t n, double level, cal_summary_t *out) {
  if (n == 0)
    return CAL_EINVAL;
  for (size_t i = 0; i < n; i++)
    if (!isfinite(x[i]))
      return CAL_EINVAL;
  double *s = sorted_copy(x, n);
  if (!s)
    return CAL_ENOMEM;

  cal_summary_t r;
  memset(&r, 0, sizeof r);
  r.n = n;
  r.min = s[0];
  r.max = s[n - 1];
  r.median = sorted_median(s, n);
  double sum = 0.0;
  for (size_t i = 0; i < n; i++)
    sum += s[i];
  r.mean = sum / (double)n;
  if (n > 1) {
    double ss = 0.0;
    for (size_t i = 0; i < n; i++)
      ss += (s[i] - r.mean) * (s[i] - r.mean);
    r.stddev = sqrt(ss / (double)(n - 1));
  }
  r.cv = r.mean != 0.0 ? r.stddev / fabs(r.mean) : 0.0;
  for (size_t i = 0; i < n; i++)
    s[i] = fabs(x[i] - r.median);
  qsort(s, n, sizeof *s, cmp_double);
  r.mad = sorted_median(s, n);

  memcpy(s, x, n * sizeof *s);
  qsort(s, n, sizeof *s, cmp_double);
  size_t lo, hi;
  cal_median_ci_ranks(n, level, &lo, &hi, &r.ci_level);
  r.ci_low = s[lo - 1];
  r.ci_high = s[hi - 1];
  free(s);
  *out = r;
  return 0;
}
