/* An analysed batch curve as a readable table with bars (the table output
 * of `calibrate peak`). */
#ifndef CAL_CURVE_RENDER_H
#define CAL_CURVE_RENDER_H

#include <stdio.h>

#include "curve.h"

/* One curve under `label`: a row per batch size (median, n, CI, % of the
 * peak, a bar and marks), then peak, ties, knee, optimum, shape and the
 * recommendation (rec may be NULL), then a blank line. */
void cal_curve_render(FILE *f, const char *label, const cal_curve_result_t *r,
                      const cal_curve_rec_t *rec);

#endif
