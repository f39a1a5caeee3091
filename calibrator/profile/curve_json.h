/* Analysed batch curves as JSON: the "calibrate-peak/1" document of
 * `calibrate peak --format json`, and one curve as the batch sweep stores
 * it in a profile. */
#ifndef CAL_CURVE_JSON_H
#define CAL_CURVE_JSON_H

#include <jansson.h>
#include <stddef.h>

#include "curve.h"

#define CAL_CURVE_SCHEMA "calibrate-peak/1"

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

/* Where a document's text goes, a piece at a time: 0, or a negative
 * CAL_E* code that stops the writing. */
typedef int (*cal_text_sink_fn)(void *ctx, const char *text, size_t len);

/* The whole document: {schema, source, tolerance_pct, optimize, curves[]}
 * with one cal_curve_json() per curve i (machines[i] may be NULL; recs
 * NULL when no recommendation was asked), as json_dumps(JSON_INDENT(2))
 * writes it, then a newline, handed to sink in blocks.  Built one point
 * at a time, so a curve of a million points never holds its whole tree.
 * 0, CAL_ENOMEM, or the sink's code. */
int cal_curve_doc_write(const char *source, const cal_curve_opts_t *opts,
                        const char *const *machines,
                        cal_curve_result_t *const *res,
                        const cal_curve_rec_t *recs, size_t n,
                        cal_text_sink_fn sink, void *ctx);

/* One curve of a "calibrate-peak/1" document as its reader gives it:
 * the median at its optimal batch with that point's confidence
 * interval. */
typedef struct cal_peak_curve {
  const char *machine;   /* NULL when null; points into the document */
  double throughput;     /* NaN when there is no optimal batch */
  double ci_low, ci_high, ci_level; /* NaN when unknown */
  int64_t optimal_batch; /* 0 when null */
} cal_peak_curve_t;

/* Whether doc is a "calibrate-peak/1" document (by its schema). */
int cal_peak_doc_is(const json_t *doc);

/* The curves of a peak document read from path: *out (free() it) holds
 * *n >= 1 curves, in order.  CAL_ESCHEMA with one line naming path in err
 * when it has no curves, a curve is malformed or has no ok point with a
 * finite examples_per_s at its optimal batch; CAL_ENOMEM. */
int cal_peak_doc_read(const json_t *doc, const char *path,
                      cal_peak_curve_t **out, size_t *n, char *err,
                      size_t errlen);

#endif
