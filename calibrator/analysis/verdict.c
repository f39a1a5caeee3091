#include "verdict.h"

#include <math.h>

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
  int known = isfinite(r) && r > 0;
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
    why = "no ratio: a median is zero";
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
