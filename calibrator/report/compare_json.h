/* A comparison (analysis/compare.h) as JSON: the tree `calibrate compare
 * --format json` writes.
 *
 * The tree, schema "calibrate-compare/1":
 *   schema, base, new (labels of the sides), base_runs, new_runs (the
 *   profiles of each side), threshold, alpha, ci_level, run_allowance,
 *   multiple_testing ("benjamini-hochberg"), filter (null: none),
 *   machine_differences [{key, base, new, profile (null with one
 *   profile a side)}] (the machine: CPU, caches, usable cores, memory),
 *   environment_differences [the same] (tool version and build, BLAS,
 *   oneDNN: listed, the points judged), tool_git {base, new} (each
 *   side's commit, "several" when its runs differ, null when none is
 *   recorded: listed, never judged),
 *   allow_different_machines,
 *   points [{id, section, metric, higher_is_better, n_base, n_new (values
 *            the test used: samples with one run a side, else runs),
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
 *            geomean_points, regression (bool), machine_speed_ratio (one
 *            run a side: new / base of the fp32 FMA loop at one thread;
 *            null when absent)},
 *   only_changed (bool)
 * Numbers that cannot be computed are null. */
#ifndef CAL_COMPARE_JSON_H
#define CAL_COMPARE_JSON_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "compare.h"

/* The tree of c; new, caller json_decref()s it; NULL on out of memory. */
json_t *cal_compare_json(const cal_comparison_t *c);

/* A cal_render_fn (report/reporter.h): in is a cal_comparison_t; the tree
 * indented by 2, reals to 10 digits, and a newline. */
int cal_compare_render_json(const void *in, int variant, FILE *f, char *err,
                            size_t errlen);

#endif
