/* `calibrate peak`: peak, knee and shape of measured throughput-versus-
 * batch curves read from CSV (see peak_csv.h), as a table or as JSON of
 * schema "calibrate-peak/1". */
#ifndef CAL_CURVE_CMD_H
#define CAL_CURVE_CMD_H

#include <jansson.h>

#include "curve.h"

#define CAL_CURVE_SCHEMA "calibrate-peak/1"

/* The subcommand (argv[0] is "peak"); returns the process exit code. */
int cal_cmd_peak(int argc, char **argv);

/* One analysed curve as a JSON object (the elements of "curves"):
 *   machine (string or null), points[{batch_size, status, and for ok
 *   points examples_per_s (median), samples_examples_per_s[], stats{n,
 *   median, mean, min, max, stddev, mad, cv, ci_low, ci_high, ci_level},
 *   pct_of_peak, tied_with_peak}], peak_batch_size, peak_examples_per_s,
 *   knee_batch_size, optimal_batch_size, optimize, tolerance_pct, shape,
 *   rise_pct, degradation_pct, worst_drop_pct, worst_batch_size,
 *   tied_batch_sizes[], recommendation{target_effective_batch, batch_size,
 *   accumulation_steps, effective_batch, exact, note} or null.
 * Figures that do not apply are null, never invented.  rec may be NULL.
 * Returns a new reference (the caller owns it) or NULL when out of memory.
 * The lead's batch sweep can store the same object in its profile section. */
json_t *cal_curve_json(const char *machine, const cal_curve_result_t *r,
                            const cal_curve_rec_t *rec);

#endif
