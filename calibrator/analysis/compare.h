/* `calibrate compare BASE NEW` and `calibrate export`: reading two profiles
 * back and judging the difference, and writing one profile in the formats
 * of continuous-benchmarking services.
 *
 * The report is a jansson tree, schema "calibrate-compare/1":
 *   schema, base, new (paths), threshold, alpha, ci_level,
 *   machine_differences [{key, base, new}], allow_different_machines,
 *   points [{id, section, metric, higher_is_better, n_base, n_new,
 *            base_median, new_median, ratio, ci_low, ci_high, ci_level,
 *            hl_ratio, oriented_ratio, u (U of base: pairs where base >
 *            new), z, p, p_min, method, verdict, reason}]      regressions first, then improved, inconclusive,
 *                          unchanged; document order within each
 *   top_level [{key, base, new, ratio, higher_is_better, verdict:"info"}],
 *   only_in_base [id], only_in_new [id],
 *   not_compared [{id, reason}],
 *   summary {compared, regressed, improved, inconclusive, unchanged,
 *            geomean (oriented, > 1 = better; null when none),
 *            geomean_points, regression (bool)}
 * Numbers that cannot be computed are null. */
#ifndef CAL_COMPARE_H
#define CAL_COMPARE_H

#include <jansson.h>

#define CAL_COMPARE_SCHEMA "calibrate-compare/1"

typedef struct cal_compare_opts {
  double threshold;     /* relative change that matters, e.g. 0.05 */
  double alpha;         /* significance level, e.g. 0.01 */
  double ci_level;      /* level of the ratio's interval, e.g. 0.95 */
  const char *base_name; /* recorded in the report; may be NULL */
  const char *new_name;
} cal_compare_opts_t;

/* Machine identity keys that differ between two profiles (compared only
 * where both have them): a new JSON array of {key, base, new}, caller
 * json_decref()s it; NULL on out of memory. */
json_t *cal_compare_machine_diff(const json_t *base, const json_t *newp);

/* Compare two validated profile trees.  *report is new, caller
 * json_decref()s it.  CAL_EINVAL with err filled when a profile repeats a
 * point id; CAL_ENOMEM. */
int cal_compare_profiles(const json_t *base, const json_t *newp,
                         const cal_compare_opts_t *opts, json_t **report,
                         char *err, size_t errlen);

/* Direction of a point: its own "higher_is_better", else a guess from the
 * metric's name (times, "ms" and "*_ms", are lower-is-better). */
int cal_point_higher_is_better(const json_t *pt, const char *metric);

/* Export a profile.  Bencher Metric Format: {id: {metric: {value,
 * lower_value, upper_value}}} for every ok point (value = the median,
 * bounds = stats.ci_low/ci_high) plus {"profile": {gflops, ...}} for the
 * top-level figures.  github-action-benchmark: an array of {name, unit,
 * value, range, extra} holding only the points whose direction matches
 * (bigger = 1: "customBiggerIsBetter", higher_is_better points; bigger = 0:
 * "customSmallerIsBetter", the others).  New trees, caller json_decref()s;
 * NULL on out of memory. */
json_t *cal_export_bmf(const json_t *profile);
json_t *cal_export_gab(const json_t *profile, int bigger);

#endif
