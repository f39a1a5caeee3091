#include "verdict.h"

#include <math.h>
#include <stdlib.h>

#include "cal_err.h"

const char *cal_verdict_name(cal_verdict_t v) {
  switch (v) {
  case CAL_VERDICT_REGRESSED: return "regressed";
  case CAL_VERDICT_IMPROVED: return "improved";
  case CAL_VERDICT_INCONCLUSIVE: return "inconclusive";
  case CAL_VERDICT_UNCHANGED: return "unchanged";
  case CAL_VERDICT_INFO: return "info";
  }
  return "unknown";
}

double cal_ratio_oriented(double ratio, int higher_is_better) {
  return higher_is_better ? ratio : 1.0 / ratio;
}

cal_verdict_t cal_verdict_decide(const cal_verdict_in_t *in,
                                 const char **reason) {
  const char *why;
  cal_verdict_t v;
  double t = in->threshold, r = in->ratio;
  /* 0 is a ratio too: a figure that fell to nothing (55 -> 0 examples/s)
   * is the largest regression there is; +inf (base 0) an increase */
  int known = !isnan(r) && r >= 0;
  /* above / below the band [1 - t, 1 + t], then oriented */
  int up = known && r > 1.0 + t, down = known && r < 1.0 - t;
  int worse = in->higher_is_better ? down : up;
  int better = in->higher_is_better ? up : down;

  if (in->p < in->alpha && known) {
    if (worse) {
      v = CAL_VERDICT_REGRESSED;
      why = "significant change worse than the threshold";
    } else if (better) {
      v = CAL_VERDICT_IMPROVED;
      why = "significant change better than the threshold";
    } else {
      v = CAL_VERDICT_UNCHANGED;
      why = "significant but within the threshold";
    }
  } else if (!known) {
    v = CAL_VERDICT_INCONCLUSIVE;
    why = "no ratio: the base is zero";
  } else if (in->p_min > in->alpha) {
    v = CAL_VERDICT_INCONCLUSIVE;
    why = "too few samples: p can never fall below alpha";
  } else if (!isfinite(in->ci_low) || !isfinite(in->ci_high)) {
    v = CAL_VERDICT_INCONCLUSIVE;
    why = "not significant and no confidence interval";
  } else {
    int ci_up = in->ci_high > 1.0 + t, ci_down = in->ci_low < 1.0 - t;
    int ci_worse = in->higher_is_better ? ci_down : ci_up;
    int ci_better = in->higher_is_better ? ci_up : ci_down;
    v = CAL_VERDICT_INCONCLUSIVE;
    if (ci_worse && ci_better)
      why = "not significant; interval wider than the threshold both ways";
    else if (ci_worse)
      why = "not significant; a regression past the threshold not ruled out";
    else if (ci_better)
      why = "not significant; an improvement past the threshold not ruled out";
    else {
      v = CAL_VERDICT_UNCHANGED;
      why = "interval within the threshold";
    }
  }
  if (reason)
    *reason = why;
  return v;
}

int cal_machine_moved(double speed, double threshold) {
  return isfinite(speed) && speed > 0 && fabs(log(speed)) > log1p(threshold);
}

void cal_verdict_point(const cal_point_judge_in_t *in,
                       cal_point_judge_t *out) {
  int single = in->single;
  double allow = single && in->run_allowance > in->threshold
                     ? in->run_allowance
                     : in->threshold;
  double q = isnan(in->p) ? 1.0 : in->p;
  cal_verdict_in_t vin = {in->higher_is_better, in->ratio, in->ci_low,
                          in->ci_high, q, in->p_min, allow, in->alpha};
  const char *reason = NULL;
  cal_verdict_t v = cal_verdict_decide(&vin, &reason);
  int undecidable = in->p_min > in->alpha && !(q < in->alpha);
  *out = (cal_point_judge_t){0};
  if (single && !undecidable && in->machine_moved) {
    v = CAL_VERDICT_INCONCLUSIVE;
    reason = "one run per side, and the machine's own speed changed between "
             "them (fp32 FMA loop)";
  } else if (single && !undecidable && in->unstable) {
    /* a run saw this point disturbed: its samples say nothing about the
     * other run's conditions */
    v = CAL_VERDICT_INCONCLUSIVE;
    reason = in->unstable == CAL_UNSTABLE_THREADS
                 ? "one run per side, and a run's threads did not run side "
                   "by side for it (threads_not_parallel)"
                 : "one run per side, unstable in a run (the machine was "
                   "busy)";
  } else if (single && !undecidable &&
             (v == CAL_VERDICT_UNCHANGED || v == CAL_VERDICT_INCONCLUSIVE)) {
    v = CAL_VERDICT_INCONCLUSIVE;
    reason = "one run per side: within the run-to-run allowance";
    out->within_allowance = 1;
    out->runs_needed = cal_runs_needed(in->ratio, in->run_allowance,
                                       in->threshold, in->alpha, in->ci_level);
  } else if (single &&
             (v == CAL_VERDICT_REGRESSED || v == CAL_VERDICT_IMPROVED)) {
    reason = v == CAL_VERDICT_REGRESSED
                 ? "significant and worse than the run-to-run allowance"
                 : "significant and better than the run-to-run allowance";
  }
  out->verdict = v;
  out->reason = reason;
  out->p = q;
  out->undecidable = undecidable;
}

double cal_geomean(const double *r, size_t n, size_t *used) {
  double s = 0.0;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (isfinite(r[i]) && r[i] > 0) {
      s += log(r[i]);
      k++;
    }
  if (used)
    *used = k;
  return k ? exp(s / (double)k) : NAN;
}

/* --------------------------------------------------- Student's t and BH */

/* Continued fraction of the regularised incomplete beta function
 * (modified Lentz). */
static double beta_cf(double a, double b, double x) {
  const double tiny = 1e-300;
  double qab = a + b, qap = a + 1.0, qam = a - 1.0;
  double c = 1.0, d = 1.0 - qab * x / qap;
  if (fabs(d) < tiny)
    d = tiny;
  d = 1.0 / d;
  double h = d;
  for (int m = 1; m <= 500; m++) {
    double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1.0 + aa * d;
    c = 1.0 + aa / c;
    d = 1.0 / (fabs(d) < tiny ? tiny : d);
    c = fabs(c) < tiny ? tiny : c;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1.0 + aa * d;
    c = 1.0 + aa / c;
    d = 1.0 / (fabs(d) < tiny ? tiny : d);
    c = fabs(c) < tiny ? tiny : c;
    double del = d * c;
    h *= del;
    if (fabs(del - 1.0) < 1e-15)
      break;
  }
  return h;
}

/* I_x(a, b) */
static double ibeta(double a, double b, double x) {
  if (x <= 0.0)
    return 0.0;
  if (x >= 1.0)
    return 1.0;
  double lbt = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
  if (x < (a + 1.0) / (a + b + 2.0))
    return exp(lbt) * beta_cf(a, b, x) / a;
  return 1.0 - exp(lbt) * beta_cf(b, a, 1.0 - x) / b;
}

double cal_t_p_two_sided(double t, double df) {
  if (isnan(t) || !(df > 0))
    return NAN;
  if (isinf(t))
    return 0.0;
  return ibeta(0.5 * df, 0.5, df / (df + t * t));
}

double cal_t_quantile(double prob, double df) {
  if (!(prob > 0.0 && prob < 1.0) || !(df > 0))
    return NAN;
  double upper = prob > 0.5 ? 1.0 - prob : prob; /* one tail */
  double lo = 0.0, hi = 1.0;
  while (cal_t_p_two_sided(hi, df) / 2.0 > upper && hi < 1e12)
    hi *= 2.0;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
    double mid = 0.5 * (lo + hi);
    if (cal_t_p_two_sided(mid, df) / 2.0 > upper)
      lo = mid;
    else
      hi = mid;
  }
  double q = 0.5 * (lo + hi);
  return prob > 0.5 ? q : -q;
}

static void mean_var(const double *x, size_t n, int logs, double *m, double *v) {
  double s = 0.0, ss = 0.0;
  for (size_t i = 0; i < n; i++)
    s += logs ? log(x[i]) : x[i];
  *m = s / (double)n;
  for (size_t i = 0; i < n; i++) {
    double d = (logs ? log(x[i]) : x[i]) - *m;
    ss += d * d;
  }
  *v = n > 1 ? ss / (double)(n - 1) : NAN;
}

int cal_runs_test(const double *base, size_t nb, const double *newv,
                  size_t nn, double level, cal_runs_test_t *out) {
  if (nb == 0 || nn == 0 || (nb < 2 && nn < 2) ||
      !(level > 0.0 && level < 1.0))
    return CAL_EINVAL;
  int logs = 1;
  for (size_t i = 0; i < nb + nn; i++) {
    double v = i < nb ? base[i] : newv[i - nb];
    if (!isfinite(v))
      return CAL_EINVAL;
    if (!(v > 0))
      logs = 0;
  }
  cal_runs_test_t r = {NAN, NAN, NAN, NAN, NAN, NAN, NAN, logs};
  double mb, vb, mn, vn;
  mean_var(base, nb, logs, &mb, &vb);
  mean_var(newv, nn, logs, &mn, &vn);
  if (logs) {
    r.sd_base = nb > 1 ? sqrt(vb) : NAN;
    r.sd_new = nn > 1 ? sqrt(vn) : NAN;
  } else {
    r.sd_base = nb > 1 && mb != 0 ? sqrt(vb) / fabs(mb) : NAN;
    r.sd_new = nn > 1 && mn != 0 ? sqrt(vn) / fabs(mn) : NAN;
  }
  double se2;
  if (nb > 1 && nn > 1) {
    double ab = vb / (double)nb, an = vn / (double)nn;
    se2 = ab + an;
    double den = ab * ab / (double)(nb - 1) + an * an / (double)(nn - 1);
    r.df = den > 0 ? se2 * se2 / den : (double)(nb + nn - 2);
  } else { /* one side has one run: the other side's spread for both */
    double v = nb > 1 ? vb : vn;
    se2 = v * (1.0 / (double)nb + 1.0 / (double)nn);
    r.df = (double)((nb > 1 ? nb : nn) - 1);
  }
  double d = mn - mb, se = sqrt(se2);
  if (se > 0) {
    r.p = cal_t_p_two_sided(d / se, r.df);
  } else {
    r.p = d == 0 ? 1.0 : 0.0; /* no spread at all: any change is certain */
  }
  if (logs) {
    double q = se > 0 ? cal_t_quantile(0.5 + 0.5 * level, r.df) * se : 0.0;
    r.ratio = exp(d);
    r.lo = exp(d - q);
    r.hi = exp(d + q);
  } else {
    r.ratio = mb != 0 ? mn / mb : mn > 0 ? INFINITY : NAN;
  }
  *out = r;
  return 0;
}

typedef struct p_at {
  double p;
  size_t i;
} p_at_t;

static int by_p(const void *a, const void *b) {
  double x = ((const p_at_t *)a)->p, y = ((const p_at_t *)b)->p;
  return (x > y) - (x < y);
}

int cal_bh_adjust(const double *p, size_t n, double *q) {
  p_at_t *v = malloc((n ? n : 1) * sizeof *v);
  if (!v)
    return CAL_ENOMEM;
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (!isnan(p[i]))
      v[m++] = (p_at_t){p[i], i};
  for (size_t i = 0; i < n; i++)
    if (isnan(p[i]))
      q[i] = NAN;
  qsort(v, m, sizeof *v, by_p);
  double run = 1.0;
  for (size_t k = m; k-- > 0;) {
    double adj = v[k].p * (double)m / (double)(k + 1);
    if (adj < run)
      run = adj;
    q[v[k].i] = run;
  }
  free(v);
  return 0;
}

size_t cal_runs_needed(double ratio, double allowance, double threshold,
                       double alpha, double ci_level) {
  if (!(ratio > 0) || !isfinite(ratio) || !(allowance > 0))
    return 0;
  double sigma = log1p(allowance) / (2.5758293035489 * sqrt(2.0));
  double d = fabs(log(ratio)), band = log1p(threshold);
  /* past the threshold: show the change (significance at alpha); inside:
   * show it is inside (the interval at ci_level within the band); both
   * with 80% power, Student's t at 2n - 2 df */
  int past = d > band;
  double delta = past ? d : band - d;
  if (!(delta > 0))
    return 0;
  for (size_t n = 2; n <= 50; n++) {
    double se = sigma * sqrt(2.0 / (double)n), df = 2.0 * (double)n - 2.0;
    double q = past ? 1.0 - alpha / 2.0 : 0.5 + 0.5 * ci_level;
    if (delta / se >= cal_t_quantile(q, df) + 0.8416212335729)
      return n;
  }
  return 0;
}
