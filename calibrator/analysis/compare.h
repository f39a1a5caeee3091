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
 * The result is typed (cal_comparison_t below), computed once with one
 * set of defaults (cal_compare_defaults) and one place for the verdict
 * rules (verdict.c); every renderer (report/compare_render.c,
 * compare_json.c, html_compare.c) only lays it out.  Its JSON form,
 * schema "calibrate-compare/1", is documented in report/compare_json.h. */
#ifndef CAL_COMPARE_H
#define CAL_COMPARE_H

#include <jansson.h>
#include <stddef.h>

#include "profile.h"
#include "verdict.h"

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

/* The one set of defaults: threshold 5%, alpha 0.01, 95% intervals, the
 * run allowance above, every point, no names. */
cal_compare_opts_t cal_compare_defaults(void);

struct cal_profile_view;

/* One side: n >= 1 validated profile trees (borrowed), their names and
 * their typed views (profile/view.h; NULL: built for the comparison). */
typedef struct cal_compare_side {
  const json_t *const *runs;
  const char *const *names; /* may be NULL */
  size_t n;
  const char *label;        /* the side in the report, e.g. "base/ (5)" */
  const struct cal_profile_view *const *views; /* may be NULL */
} cal_compare_side_t;

/* One point judged.  Strings are borrowed from the profiles (or static);
 * a number the report cannot state (unknown, or not finite) is NAN. */
typedef struct cal_compare_point {
  const char *id, *section, *metric;
  int higher_is_better;
  int by_runs;              /* 1: per-run values (Welch's t), several runs
                               on a side; 0: one run a side, the samples'
                               rank test */
  size_t n_base, n_new;     /* values the test used */
  size_t runs_base, runs_new;
  double base_median, new_median; /* of the samples, or per-run medians */
  int has_geomean;          /* by_runs on the log scale: */
  double base_geomean, new_geomean; /* geometric means of the runs */
  double ratio;             /* new / base */
  double ratio_judged;      /* the ratio the verdict, the geometric mean and
                               the machine's speed use: +inf as 1e308 */
  double ci_low, ci_high, ci_level, hl_ratio, oriented_ratio;
  double u, z;              /* rank test; NAN by runs */
  double df;                /* by runs */
  double p, p_adjusted, p_min;
  const char *method;       /* "exact", "normal", "welch-log-runs",
                               "welch-runs" */
  double base_run_spread, new_run_spread; /* sd of the log per-run values */
  int unstable;             /* one run a side: a run marked it unstable
                               (1) or its threads not side by side
                               (CAL_UNSTABLE_THREADS) */
  cal_verdict_t verdict;
  const char *reason;       /* static */
  int undecidable;          /* p_min above alpha: never decidable */
  size_t runs_needed;       /* one run a side, inconclusive: runs per side
                               that would decide it; 0 when more than 50 */
} cal_compare_point_t;

/* An identity key that differs, of the machine or of the environment
 * (profile/identity.h; values borrowed from the profiles); profile: the
 * profile that differs from the first base one, NULL when there is one
 * profile a side. */
typedef struct cal_compare_diff {
  const char *key;
  const json_t *base, *newv;
  const char *profile;
} cal_compare_diff_t;

/* A top-level figure both sides hold: medians over a side's runs. */
typedef struct cal_compare_top {
  const char *key;
  double base, newv, ratio; /* ratio NAN when base is 0 */
  int higher_is_better;
} cal_compare_top_t;

/* A point both sides hold that was not compared, and why. */
typedef struct cal_compare_skip {
  const char *id;
  char reason[160];
} cal_compare_skip_t;

typedef struct cal_compare_summary {
  size_t compared, counts[CAL_VERDICT_INFO + 1]; /* counts by verdict */
  size_t undecidable, within_run_allowance;
  size_t runs_needed_median, runs_needed_most; /* 0: none */
  size_t runs_base, runs_new;
  double base_run_spread, new_run_spread; /* medians over the points */
  double geomean;           /* oriented, > 1 = better */
  size_t geomean_points;
  double machine_speed_ratio; /* one run a side: new / base of the fp32 FMA
                                 loop at one thread */
  int regression;
} cal_compare_summary_t;

/* What a comparison found; cal_compare_free() releases it. */
typedef struct cal_comparison {
  const char *base_label, *new_label;
  const char **base_runs, **new_runs; /* names, "?" when unnamed */
  /* the software compared: each side's tool.git, "several" when its runs
   * differ, NULL when none records one (listed, never judged: base and
   * new differ there by design) */
  const char *base_git, *new_git;
  cal_compare_opts_t opts;
  cal_compare_diff_t *diffs; /* the machine's: the command refuses them */
  size_t ndiffs;
  cal_compare_diff_t *env_diffs; /* the environment's: listed, judged */
  size_t nenv_diffs;
  int allow_different_machines, only_changed; /* the command's choices */
  cal_compare_point_t *points; /* regressions first, then improved,
                                  inconclusive, unchanged; document order
                                  within each */
  size_t npoints;
  cal_compare_top_t *tops;
  size_t ntops;
  const char **only_base, **only_new;
  size_t nonly_base, nonly_new;
  cal_compare_skip_t *skipped;
  size_t nskipped;
  cal_compare_summary_t summary;
} cal_comparison_t;

/* Compare two sides into *out (released with cal_compare_free even on
 * failure).  CAL_EINVAL with err filled when a profile repeats a point id
 * or a side is empty; CAL_ENOMEM.  Machine and environment differences
 * between any profile and the first base profile are listed, not refused
 * here (the command refuses different machines).  The
 * profiles must outlive *out. */
int cal_compare_sides(const cal_compare_side_t *base,
                      const cal_compare_side_t *newp,
                      const cal_compare_opts_t *opts, cal_comparison_t *out,
                      char *err, size_t errlen);
/* The same with one profile per side. */
int cal_compare_profiles(const json_t *base, const json_t *newp,
                         const cal_compare_opts_t *opts,
                         cal_comparison_t *out, char *err, size_t errlen);
/* The same with two loaded profiles and the views built at load. */
int cal_compare_loaded(const cal_profile_t *base, const cal_profile_t *newp,
                       const cal_compare_opts_t *opts, cal_comparison_t *out,
                       char *err, size_t errlen);
void cal_compare_free(cal_comparison_t *c);

/* Keep only the regressed and improved points (--only-changed; the
 * summary keeps every count). */
void cal_compare_keep_changed(cal_comparison_t *c);

/* Machine identity keys that differ between two profiles (compared only
 * where both have them) into *diffs (malloc'd, *n of them).  CAL_ENOMEM. */
int cal_compare_machine_diff(const json_t *base, const json_t *newp,
                             cal_compare_diff_t **diffs, size_t *n);
/* The same for the environment's keys (tool, BLAS, oneDNN). */
int cal_compare_environment_diff(const json_t *base, const json_t *newp,
                                 cal_compare_diff_t **diffs, size_t *n);

/* Export a profile.  Bencher Metric Format: {id: {metric: {value,
 * lower_value, upper_value}}} for every ok point (value = the median,
 * bounds = stats.ci_low/ci_high) plus {"profile": {gflops, ...}} for the
 * top-level figures, measures named for their unit (throughput as
 * examples_per_s, never Bencher's built-in throughput).  github-action-benchmark: an array of {name, unit,
 * value, range, extra} holding only the points whose direction matches
 * (bigger = 1: "customBiggerIsBetter", higher_is_better points; bigger = 0:
 * "customSmallerIsBetter", the others).  New trees, caller json_decref()s;
 * NULL on out of memory. */
json_t *cal_export_bmf(const json_t *profile);
json_t *cal_export_gab(const json_t *profile, int bigger);

#endif
