#include "mwu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "stats.h"

const char *cal_mwu_method_name(cal_mwu_method_t m) {
  return m == CAL_MWU_EXACT ? "exact" : "normal";
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int all_finite(const double *x, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(x[i]))
      return 0;
  return 1;
}

/* Standard normal distribution function and its inverse (bisection: only
 * called once per interval, precision to ~1e-12 is plenty). */
static double norm_cdf(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }

static double norm_quantile(double p) {
  double lo = -40.0, hi = 40.0;
  for (int i = 0; i < 200 && hi - lo > 1e-13; i++) {
    double mid = 0.5 * (lo + hi);
    if (norm_cdf(mid) < p)
      lo = mid;
    else
      hi = mid;
  }
  return 0.5 * (lo + hi);
}

int cal_mwu_exact_counts(size_t n1, size_t n2, uint64_t **counts) {
  if (n1 + n2 > CAL_MWU_EXACT_MAX_N || n1 == 0 || n2 == 0)
    return CAL_EINVAL;
  /* The counts are the coefficients of the Gaussian binomial
   * [m+n choose m]_q, built row by row with the q-Pascal rule
   * [N, k] = [N-1, k-1] + q^k [N-1, k].  Every coefficient of every row is
   * at most C(N, k) <= C(m+n, m) < 2^64 for m+n <= 60, so the sums are
   * exact. */
  size_t m = n1 < n2 ? n1 : n2, n = n1 < n2 ? n2 : n1;
  size_t len = m * n + 1;
  uint64_t *rows = calloc((m + 1) * len, sizeof *rows);
  uint64_t *res = malloc(len * sizeof *res);
  if (!rows || !res) {
    free(rows);
    free(res);
    return CAL_ENOMEM;
  }
  rows[0] = 1; /* [0, 0] = 1 */
  for (size_t N = 1; N <= m + n; N++) {
    size_t top = N < m ? N : m;
    for (size_t k = top; k >= 1; k--) {
      uint64_t *cur = rows + k * len, *prev = rows + (k - 1) * len;
      for (size_t u = len; u-- > 0;)
        cur[u] = prev[u] + (u >= k ? cur[u - k] : 0);
    }
  }
  memcpy(res, rows + m * len, len * sizeof *res);
  free(rows);
  *counts = res;
  return 0;
}

/* log C(n, k) */
static double log_choose(size_t n, size_t k) {
  return lgamma((double)n + 1) - lgamma((double)k + 1) -
         lgamma((double)(n - k) + 1);
}

int cal_mwu_test(const double *x, size_t n1, const double *y, size_t n2,
                 cal_mwu_t *out) {
  if (n1 == 0 || n2 == 0 || !all_finite(x, n1) || !all_finite(y, n2))
    return CAL_EINVAL;
  size_t N = n1 + n2;
  /* Pool the samples, tagging each value's group in a parallel array by
   * sorting indices. */
  struct tagged {
    double v;
    int from_x;
  } *pool = malloc(N * sizeof *pool);
  if (!pool)
    return CAL_ENOMEM;
  for (size_t i = 0; i < n1; i++)
    pool[i] = (struct tagged){x[i], 1};
  for (size_t j = 0; j < n2; j++)
    pool[n1 + j] = (struct tagged){y[j], 0};
  /* the first member is a double, so cmp_double orders the structs */
  qsort(pool, N, sizeof *pool, cmp_double);

  double rank_sum_x = 0.0, tie_term = 0.0;
  for (size_t i = 0; i < N;) {
    size_t j = i;
    while (j + 1 < N && pool[j + 1].v == pool[i].v)
      j++;
    double t = (double)(j - i + 1);
    double midrank = 0.5 * ((double)(i + 1) + (double)(j + 1));
    for (size_t k = i; k <= j; k++)
      if (pool[k].from_x)
        rank_sum_x += midrank;
    tie_term += t * t * t - t;
    i = j + 1;
  }
  free(pool);

  cal_mwu_t r;
  memset(&r, 0, sizeof r);
  r.n1 = n1;
  r.n2 = n2;
  r.u = rank_sum_x - (double)n1 * ((double)n1 + 1) / 2.0;
  r.ties = tie_term > 0;
  double mn = (double)n1 * (double)n2;
  r.p_min = fmin(1.0, 2.0 * exp(-log_choose(N, n1)));

  double var = N > 1 ? mn / 12.0 *
                           (((double)N + 1) - tie_term / ((double)N * ((double)N - 1)))
                     : 0.0;
  double d = r.u - mn / 2.0;
  if (var > 0) {
    double cc = d > 0 ? 0.5 : d < 0 ? -0.5 : 0.0;
    r.z = (d - cc) / sqrt(var);
  }

  if (!r.ties && N <= CAL_MWU_EXACT_MAX_N) {
    uint64_t *counts = NULL;
    int rc = cal_mwu_exact_counts(n1, n2, &counts);
    if (rc < 0)
      return rc;
    size_t lim = (size_t)fmin(r.u, mn - r.u); /* integral without ties */
    double below = 0.0, total = 0.0;
    for (size_t u = 0; u <= (size_t)mn; u++) {
      total += (double)counts[u];
      if (u <= lim)
        below += (double)counts[u];
    }
    free(counts);
    r.method = CAL_MWU_EXACT;
    r.p = fmin(1.0, 2.0 * below / total);
  } else {
    r.method = CAL_MWU_NORMAL;
    r.p = var > 0 ? fmin(1.0, erfc(fabs(r.z) / sqrt(2.0))) : 1.0;
  }
  *out = r;
  return 0;
}

/* Rank k (1-based) of the Moses interval and its coverage. */
static int moses_rank(size_t n1, size_t n2, double level, size_t *k_out,
                      double *coverage) {
  double mn = (double)n1 * (double)n2, half = (1.0 - level) / 2.0;
  size_t N = n1 + n2;
  if (N <= CAL_MWU_EXACT_MAX_N) {
    uint64_t *counts = NULL;
    int rc = cal_mwu_exact_counts(n1, n2, &counts);
    if (rc < 0)
      return rc;
    double total = 0.0;
    for (size_t u = 0; u <= (size_t)mn; u++)
      total += (double)counts[u];
    /* cdf = #(U <= k-1); take the largest k keeping it <= half */
    size_t k = 1;
    double cdf = (double)counts[0];
    while ((double)(k + 1) <= mn / 2.0 + 0.5) {
      double next = cdf + (double)counts[k]; /* U <= k */
      if (next / total > half)
        break;
      cdf = next;
      k++;
    }
    free(counts);
    *k_out = k;
    *coverage = 1.0 - 2.0 * cdf / total;
    return 0;
  }
  double sigma = sqrt(mn * ((double)N + 1) / 12.0);
  double kk = floor(mn / 2.0 + 0.5 - norm_quantile(1.0 - half) * sigma);
  if (kk < 1)
    kk = 1;
  *k_out = (size_t)kk;
  *coverage = 1.0 - 2.0 * norm_cdf((kk - 0.5 - mn / 2.0) / sigma);
  return 0;
}

/* How many of the pairwise ratios y_j / x_i are <= v; x and y sorted
 * ascending and positive.  For growing x_i the ratios of a fixed y_j
 * shrink (correctly rounded division is monotone), so the count of j
 * only grows with i: one pass, O(n1 + n2). */
static size_t count_le(const double *x, size_t n1, const double *y, size_t n2,
                       double v) {
  size_t c = 0, j = 0;
  for (size_t i = 0; i < n1; i++) {
    while (j < n2 && y[j] / x[i] <= v)
      j++;
    c += j;
  }
  return c;
}

/* The k-th smallest (1-based) of the n1 * n2 pairwise ratios without
 * forming them: the smallest double v with count_le(v) >= k, found by
 * bisection on the bit patterns of positive doubles (ordered like the
 * values), at most 64 passes.  count_le only steps at pairwise ratios, so
 * v is exactly one of them: O((n1 + n2) log) time, O(1) memory, where the
 * sorted list of all ratios took n1 * n2 doubles. */
static double kth_ratio(const double *x, size_t n1, const double *y, size_t n2,
                        size_t k) {
  double vlo = y[0] / x[n1 - 1], vhi = y[n2 - 1] / x[0];
  uint64_t lo, hi;
  memcpy(&lo, &vlo, sizeof lo);
  memcpy(&hi, &vhi, sizeof hi);
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    double v;
    memcpy(&v, &mid, sizeof v);
    if (count_le(x, n1, y, n2, v) >= k)
      hi = mid;
    else
      lo = mid + 1;
  }
  double v;
  memcpy(&v, &lo, sizeof v);
  return v;
}

int cal_ratio_ci(const double *x, size_t n1, const double *y, size_t n2,
                 double level, cal_ratio_ci_t *out) {
  if (n1 == 0 || n2 == 0 || !all_finite(x, n1) || !all_finite(y, n2) ||
      !(level > 0.0 && level < 1.0))
    return CAL_EINVAL;
  cal_ratio_ci_t r = {NAN, NAN, NAN, NAN, NAN};
  double mx = cal_median(x, n1), my = cal_median(y, n2);
  if (isnan(mx) || isnan(my))
    return CAL_ENOMEM;
  if (mx != 0.0)
    r.ratio = my / mx;
  for (size_t i = 0; i < n1; i++)
    if (!(x[i] > 0)) {
      *out = r;
      return 0;
    }
  for (size_t j = 0; j < n2; j++)
    if (!(y[j] > 0)) {
      *out = r;
      return 0;
    }
  size_t np = n1 * n2, k = 1;
  double cov = 0.0;
  int rc = moses_rank(n1, n2, level, &k, &cov);
  if (rc < 0)
    return rc;
  if (k > (np + 1) / 2)
    k = (np + 1) / 2;
  double *xs = malloc(n1 * sizeof *xs), *ys = malloc(n2 * sizeof *ys);
  if (!xs || !ys) {
    free(xs);
    free(ys);
    return CAL_ENOMEM;
  }
  memcpy(xs, x, n1 * sizeof *xs);
  memcpy(ys, y, n2 * sizeof *ys);
  qsort(xs, n1, sizeof *xs, cmp_double);
  qsort(ys, n2, sizeof *ys, cmp_double);
  r.lo = kth_ratio(xs, n1, ys, n2, k);
  r.hi = kth_ratio(xs, n1, ys, n2, np + 1 - k);
  r.hl = np % 2 ? kth_ratio(xs, n1, ys, n2, np / 2 + 1)
                : 0.5 * (kth_ratio(xs, n1, ys, n2, np / 2) +
                         kth_ratio(xs, n1, ys, n2, np / 2 + 1));
  r.level = cov;
  free(xs);
  free(ys);
  *out = r;
  return 0;
}
