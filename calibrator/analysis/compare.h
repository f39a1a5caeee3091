/* `calibrate compare`: reading two sides of one or more profiles each
 * back and judging the difference, and writing one profile in the formats
 * of continuous-benchmarking services.
 *
 * The run is the unit of replication: samples within one process agree
 * far better than whole processes do, so a point's test is built on one
 * value per run (its median) whenever a side has several runs (Welch's t
 * on the logs, see verdict.h), and the p-values of all points are
 * adjusted together (Benjamini-Hochberg).  With one run per side the
 * samples' rank test is all there is, and a point is called regressed or
 * improved only past the run-to-run allowance, when neither run marked
 * it unstable and when the machine's own speed (the fp32 FMA loop at one
 * thread, peak/fma_f32/<isa>/t1) did not move past the threshold between
 * the two runs; otherwise inconclusive.
 *
 * The report is a jansson tree, schema "calibrate-compare/1":
 *   schema, base, new (labels of the sides), base_runs, new_runs (the
 *   profiles of each side), threshold, alpha, ci_level, run_allowance,
 *   multiple_testing ("benjamini-hochberg"), filter (or absent),
 *   machine_differences [{key, base, new, profile?}],
 *   allow_different_machines,
 *   points [{id, section, metric, higher_is_better, n_base, n_new (values
 *            the test used: samples with one run a side, else runs),
 *            machine_speed_ratio (one run a side: new / base of the
 *            fp32 FMA loop at one thread; null when absent),
 *            runs_base, runs_new, base_median, new_median (of the samples,
 *            or of the per-run medians), base_geomean, new_geomean (runs,
 *            log scale: the geometric means of the per-run medians),
 *            ratio (new / base: of medians with one run a side, else of
 *            the geometric means), ci_low,
 *            ci_high, ci_level, hl_ratio, oriented_ratio, u, z (rank test;
 *            null for runs), df (runs), p, p_adjusted, p_min, method
 *            ("exact", "normal": Mann-Whitney on samples; "welch-log-runs",
 *            "welch-runs": Welch's t on per-run values), base_run_spread,
 *            new_run_spread (sd of the log per-run values, ~ relative;
 *            null with one run), verdict, reason, undecidable (p_min above
 *            alpha: never decidable at these sizes), runs_needed (one run a
 *            side, inconclusive: runs per side that would decide it, null
 *            when more than 50)}]
 *                          regressions first, then improved, inconclusive,
 *                          unchanged; document order within each
 *   top_level [{key, base, new, ratio, higher_is_better, verdict:"info"}],
 *   only_in_base [id], only_in_new [id],
 *   not_compared [{id, reason}],
 *   summary {compared, regressed, improved, inconclusive, unchanged,
 *            undecidable, within_run_allowance, runs_needed_median,
 *            runs_needed_most (runs per side that would decide half and
 *            95% of the points inside the allowance; absent when none),
 *            runs_base, runs_new,
 *            base_run_spread, new_run_spread (medians over the points),
 *            geomean (oriented, > 1 = better; null when none),
 *            geomean_points, regression (bool)}
 * Numbers that cannot be computed are null. */
#ifndef CAL_COMPARE_H
#define CAL_COMPARE_H

#include <jansson.h>

#define CAL_COMPARE_SCHEMA "calibrate-compare/1"

/* Run-to-run allowance with one run per side (docs/ci.md): on the 2-core
 * shared VMs unchanged code lands 4-12% apart between processes when the
 * host is quiet, and 25% (median) to 5x apart when it is oversubscribed;
 * over 34 consecutive pairs of such runs, with the machine-speed check,
 * 15% let 2 false alarms through, 25% 1, 50% none. */
#define CAL_COMPARE_RUN_ALLOWANCE 0.50

typedef struct cal_compare_opts {
  double threshold;     /* relative change that matters, e.g. 0.05 */
  double alpha;         /* false-discovery level across points, e.g. 0.01 */
  double ci_level;      /* level of the ratio's interval, e.g. 0.95 */
  double run_allowance; /* one run per side: change unchanged code shows */
  const char *base_name; /* recorded in the report; may be NULL */
  const char *new_name;
  const char *filter;   /* comma-separated id globs; NULL: every point */
} cal_compare_opts_t;

/* One side: n >= 1 validated profile trees (borrowed) and their names. */
typedef struct cal_compare_side {
  const json_t *const *runs;
  const char *const *names; /* may be NULL */
  size_t n;
  const char *label;        /* the side in the report, e.g. "base/ (5)" */
} cal_compare_side_t;

/* Machine identity keys that differ between two profiles (compared only
 * where both have them): a new JSON array of {key, base, new}, caller
 * json_decref()s it; NULL on out of memory. */
json_t *cal_compare_machine_diff(const json_t *base, const json_t *newp);

/* Compare two sides.  *report is new, caller json_decref()s it.
 * CAL_EINVAL with err filled when a profile repeats a point id or a side
 * is empty; CAL_ENOMEM.  Machine differences between any profile and the
 * first base profile are listed in the report, not refused here. */
int cal_compare_sides(const cal_compare_side_t *base,
                      const cal_compare_side_t *newp,
                      const cal_compare_opts_t *opts, json_t **report,
                      char *err, size_t errlen);
/* The same with one profile per side. */
int cal_compare_profiles(const json_t *base, const json_t *newp,
                         const cal_compare_opts_t *opts, json_t **report,
                         char *err, size_t errlen);
/* Keep only the regressed and improved points in a report's "points"
 * (--only-changed; the summary keeps every count).  CAL_ENOMEM. */
int cal_compare_keep_changed(json_t *report);

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
