/* Verdict rules of `calibrate compare` and the run-level statistics they
 * use: pure functions of a point's numbers, no I/O.
 *
 * For one point, with r the ratio new / base, its confidence interval
 * [lo, hi], a two-sided p (adjusted for the many points of a profile, see
 * cal_bh_adjust), the smallest p the sizes allow (p_min), a threshold t
 * (0.05) and a level alpha (0.01):
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

/* ------------------------------------------------ run-level statistics */

/* One point over several runs per side: each run contributes one value
 * (its median), so the run-to-run variance is in the test.  On the log
 * scale (a change of speed is a ratio): ratio = exp(mean log new - mean
 * log base), the ratio of geometric means; Welch's t on the logs gives p
 * and the interval exp(d -+ t_q * se).  When one side has a single run its
 * variance is taken from the other side (a new value judged against the
 * spread of earlier runs), df = n_other - 1.  When a value is <= 0 the
 * logs are not defined: the same test on the raw values, ratio of means,
 * no interval.  Needs nb + nn >= 3 and at least one side with 2 runs. */
typedef struct cal_runs_test {
  double ratio;           /* new / base; NAN when the base is 0 */
  double lo, hi;          /* interval at `level`; NAN when unknown */
  double p;               /* two-sided, not adjusted */
  double df;              /* Welch-Satterthwaite degrees of freedom */
  double sd_base, sd_new; /* run-to-run spread: sd of the log values (about
                             the relative spread); NAN with one run */
  int log_scale;          /* 0: raw values (a value was <= 0) */
} cal_runs_test_t;

/* CAL_EINVAL when the sizes do not allow a test or a value is not
 * finite, or level is not in (0, 1). */
int cal_runs_test(const double *base, size_t nb, const double *newv,
                  size_t nn, double level, cal_runs_test_t *out);

/* Two-sided p of Student's t with df degrees of freedom (df > 0), and the
 * quantile q with P(T <= q) = prob. */
double cal_t_p_two_sided(double t, double df);
double cal_t_quantile(double prob, double df);

/* Benjamini-Hochberg adjusted p-values of p[0..n-1] into q (q may be p):
 * q_(i) = min over j >= i of n p_(j) / j, at most 1.  A point is called
 * significant when q < alpha; across the points of a comparison the
 * expected share of false calls is then at most alpha, and with no change
 * anywhere (an A/A comparison) the chance of any call is at most alpha.
 * NAN stays NAN and does not count in n.  CAL_ENOMEM. */
int cal_bh_adjust(const double *p, size_t n, double *q);

/* Single run per side: the between-run spread is unknown.  `allowance` is
 * the run-to-run change unchanged code shows between two single runs (at
 * about the 99th percentile); the implied run-to-run sd of the log is
 * log(1 + allowance) / (2.576 * sqrt 2).  Runs per side a run-level test
 * would need to decide a point whose ratio is `ratio` (with 80% power:
 * significance at alpha if it is past the threshold, equivalence if it is
 * inside, its interval at ci_level within the threshold): at least 2;
 * 0 when more than 50 would be needed. */
size_t cal_runs_needed(double ratio, double allowance, double threshold,
                       double alpha, double ci_level);

/* ------------------------------------------------- one point of a compare */

/* A point a run marked as measured with threads that did not run side by
 * side (threads_not_parallel): like an unstable one, no figure to judge
 * one run against another by. */
#define CAL_UNSTABLE_THREADS 2

/* Everything that decides one point of a comparison. */
typedef struct cal_point_judge_in {
  int higher_is_better;
  int single;             /* one run a side: the samples' rank test */
  int unstable;           /* single: a run marked the point unstable (1),
                             or its threads not side by side
                             (CAL_UNSTABLE_THREADS) */
  int machine_moved;      /* single: the machine's own speed moved
                             (cal_machine_moved) */
  double ratio;           /* as judged: NAN when unknown */
  double ci_low, ci_high; /* NAN when unknown */
  double p;               /* adjusted across points; NAN: taken as 1 */
  double p_min;
  double threshold, alpha, run_allowance, ci_level;
} cal_point_judge_in_t;

typedef struct cal_point_judge {
  cal_verdict_t verdict;
  const char *reason;     /* static */
  double p;               /* the p judged (NAN taken as 1) */
  int undecidable;        /* p_min above alpha and not significant */
  int within_allowance;   /* single: inside the run-to-run allowance */
  size_t runs_needed;     /* then: runs per side that would decide it,
                             0 when more than 50 */
} cal_point_judge_t;

/* The verdict of one point: cal_verdict_decide at the threshold, or with
 * one run a side at the run allowance (when larger), and then the rules
 * of a single run: the machine's speed moved, or a run marked the point
 * unstable, or the change is within the allowance -> INCONCLUSIVE. */
void cal_verdict_point(const cal_point_judge_in_t *in,
                       cal_point_judge_t *out);

/* Whether the machine's own speed ratio between two single runs (NAN when
 * unknown) moved past the threshold: then no point of the two runs can be
 * compared with the other. */
int cal_machine_moved(double speed, double threshold);

#endif
