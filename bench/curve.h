/* Analysis of a throughput-versus-batch-size curve (peak, knee, shape,
 * gradient-accumulation advice) and parsing of batch-size lists.
 * Pure: no I/O, no timing.  Inputs are never modified.
 *
 * Definitions (tolerance t, default 3%):
 *   per point   median and distribution-free CI of the median (cal_summarize,
 *               95% asked; with few samples the CI is [min, max] and its
 *               real coverage, ci_level, is lower).
 *   peak        the measured point with the highest median (the smaller batch
 *               wins an exact tie).
 *   tied        points whose CI overlaps the peak's CI, the peak included:
 *               the data cannot tell them apart from the peak.
 *   knee        the smallest batch whose median >= (1 - t) * peak median.
 *   optimal     the peak (policy throughput) or the knee (policy knee).
 *   shape       "single"  one measured point: nothing more is claimed;
 *               "rising"  the peak is the largest measured batch and its
 *                         median is more than t above the previous measured
 *                         point's, whose CI does not overlap the peak's:
 *                         a sweep should go on;
 *               "peaked"  some point past the peak has a median more than t
 *                         below the peak and a CI that does not overlap it;
 *               "plateau" anything else with >= 2 points: every point past
 *                         the peak stays within t (or within noise), or the
 *                         peak is at the end but rose by t or less;
 *               "empty"   no point was measured (all skipped).
 *   degradation_pct  (peak - median at the largest measured batch) / peak
 *               * 100: what running at the largest batch costs; NAN when no
 *               point was measured past the peak.
 *   worst_drop_pct   the same for the lowest median past the peak.
 * Skipped points are kept in the result but take no part in any of these. */
#ifndef CAL_CURVE_H
#define CAL_CURVE_H

#include <stddef.h>
#include <stdint.h>

#include "harness.h"
#include "stats.h"

#define CAL_BATCH_MAX ((int64_t)1 << 30) /* largest batch size accepted */
#define CAL_BATCH_MAX_COUNT 4096         /* most batch sizes in one list */

/* point status: cal_point_status_t from harness.h (anything but
 * CAL_POINT_OK counts as not measured) */

/* One measured batch size.  samples are throughputs (examples/s, >= 0,
 * finite), borrowed from the caller; ignored when status is SKIPPED. */
typedef struct cal_curve_point {
  int64_t batch_size; /* 1 .. CAL_BATCH_MAX, unique within a curve */
  cal_point_status_t status;
  const double *samples;
  size_t n; /* >= 1 when status is OK */
} cal_curve_point_t;

typedef enum cal_curve_policy {
  CAL_OPTIMIZE_THROUGHPUT = 0, /* optimal = peak */
  CAL_OPTIMIZE_KNEE = 1,       /* optimal = knee */
} cal_curve_policy_t;

typedef enum cal_curve_shape {
  CAL_SHAPE_EMPTY = 0,
  CAL_SHAPE_SINGLE,
  CAL_SHAPE_RISING,
  CAL_SHAPE_PLATEAU,
  CAL_SHAPE_PEAKED,
} cal_curve_shape_t;

typedef struct cal_curve_opts {
  double tolerance; /* fraction, 0 <= t < 1; default 0.03 */
  double ci_level;  /* level asked of each median CI; default 0.95 */
  cal_curve_policy_t policy; /* default CAL_OPTIMIZE_THROUGHPUT */
} cal_curve_opts_t;

typedef struct cal_curve_row {
  int64_t batch_size;
  cal_point_status_t status;
  double *samples; /* copy of the input samples, owned by the result */
  size_t n;
  cal_summary_t stats; /* zeroed when skipped */
  double pct_of_peak;  /* median / peak median * 100; NAN when skipped */
  int tied;            /* CI overlaps the peak's (1 for the peak itself) */
  int is_peak, is_knee, is_optimal;
} cal_curve_row_t;

typedef struct cal_curve_result {
  cal_curve_row_t *points; /* ascending batch size, skipped ones included */
  size_t n;
  size_t n_ok; /* points measured */
  double tolerance;
  cal_curve_policy_t policy;
  cal_curve_shape_t shape;
  /* 0 when shape is EMPTY */
  int64_t peak_batch_size, knee_batch_size, optimal_batch_size;
  double peak_median; /* examples/s */
  int64_t *tied_batch_sizes; /* ascending, the peak included; owned */
  size_t n_tied;
  double rise_pct; /* largest measured batch over the previous measured one,
                      % of the previous; NAN with fewer than 2 points */
  double degradation_pct, worst_drop_pct; /* see above; NAN if none */
  int64_t worst_batch_size; /* where worst_drop_pct is; 0 if none */
} cal_curve_result_t;

/* Defaults: tolerance 0.03, ci_level 0.95, policy throughput. */
void cal_curve_opts_default(cal_curve_opts_t *opts);

/* Analyse pts[0..n-1] (any order).  opts NULL means the defaults.
 * CAL_EINVAL: n == 0, a batch size out of range or repeated, an OK point
 * without samples or with a negative or non-finite one, bad opts.
 * CAL_ENOMEM.  Free *out with cal_curve_result_free(). */
int cal_curve_analyze(const cal_curve_point_t *pts, size_t n,
                     const cal_curve_opts_t *opts, cal_curve_result_t **out);
/* Accepts NULL. */
void cal_curve_result_free(cal_curve_result_t *r);

/* Whether a batch sweep whose points so far are pts[0..n-1] should try a
 * larger batch: 1 when the curve is still rising at its largest measured
 * batch (shape "rising"), when only one point has been measured, or when
 * the largest batch is the peak and its median rose by more than the
 * tolerance over the previous point even though noise makes their CIs
 * overlap (one more point is cheap; the shape stays noise-aware); 0 otherwise
 * (including when nothing was measured: skipped points are no evidence of
 * a rise; whether to go past a skipped point is the sweep's decision).
 * Negative CAL_E* on invalid input, as cal_curve_analyze. */
int cal_sweep_should_extend(const cal_curve_point_t *pts, size_t n,
                            const cal_curve_opts_t *opts);

/* Whether a batch point can stand on the curve (its peak, knee, optimum
 * and batch-1 latency): measured and verified (ok), not swapped, and its
 * threads, any part's, ran side by side.  The one rule of the sweep's own
 * curve and of libcalibrate's cal_machine_curve. */
int cal_curve_point_usable(int ok, int swapped, int threads_not_parallel);

/* Advice for reaching a target effective batch T with gradient
 * accumulation: batch b <= T from the measured points and T / b steps.
 * b is the optimal batch when it divides T, else the measured divisor of T
 * with the highest median.  When no measured batch divides T, b is the
 * measured batch <= T with the highest median and the steps are rounded up
 * (effective batch > T, exact = 0).  When no measured batch is <= T,
 * batch_size and accumulation_steps are 0.  note says which case applied. */
typedef struct cal_curve_rec {
  int64_t target_effective_batch;
  int64_t batch_size;
  int64_t accumulation_steps;
  int64_t effective_batch; /* batch_size * accumulation_steps */
  int exact;               /* effective_batch == target */
  char note[200];          /* one line, no trailing newline */
} cal_curve_rec_t;

/* CAL_EINVAL when target is out of 1 .. CAL_BATCH_MAX. */
int cal_curve_recommend(const cal_curve_result_t *r, int64_t target,
                       cal_curve_rec_t *out);

/* "empty", "single", "rising", "plateau", "peaked"; static storage. */
const char *cal_curve_shape_name(cal_curve_shape_t shape);
/* "throughput", "knee"; static storage. */
const char *cal_curve_policy_name(cal_curve_policy_t policy);
/* Parse "throughput" or "knee" (case-insensitive); CAL_EINVAL otherwise. */
int cal_curve_policy_parse(const char *s, cal_curve_policy_t *out);

/* Parse a batch-size list: comma-separated items, each
 *   N        one batch size
 *   A-B*F    geometric: A, A*F, A*F^2, ... while <= B (F >= 2)
 *   A-B+S    arithmetic: A, A+S, A+2S, ... while <= B (S >= 1)
 *   A-B      every integer from A to B
 * e.g. "1,3,8-64*2".  Spaces around items and operators are allowed.
 * The result is sorted ascending and deduplicated; *out is malloc'ed, free
 * it with free().  CAL_EPARSE with one line in err for: an empty list or
 * item, a non-number, zero or negative, a value above CAL_BATCH_MAX, a
 * descending range, a bad step, more than CAL_BATCH_MAX_COUNT sizes.
 * CAL_ENOMEM. */
int cal_batches_parse(const char *spec, int64_t **out, size_t *n, char *err,
                      size_t errlen);

/* The default list: powers of two 1, 2, 4, ... <= max_batch (the caller
 * picks the limit, e.g. from memory).  CAL_EINVAL when max_batch is out of
 * 1 .. CAL_BATCH_MAX; CAL_ENOMEM.  Free *out with free(). */
int cal_batches_default(int64_t max_batch, int64_t **out, size_t *n);

#endif
